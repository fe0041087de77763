/*
 * fifo: calls from one thread to one CPU run in the order made, waiting or
 * not, for single, async, and each target of many and all. A waiting call
 * returns only after every earlier call of its thread to that CPU ran:
 * N nowait calls then one XC_WAIT call finds all N run, from one thread and
 * from several at once, across a full ring (more calls than it holds). In
 * the middle of a burst another thread takes the CPU offline and back: each
 * call is then refused with -ENXIO and never runs, or returns 0 and runs
 * exactly once, still in order. And again with rings of 16 entries.
 */
#include "test.h"
#include <pthread.h>
#include <stdatomic.h>

#define SENDERS 3
#define BURST   1000		/* nowait calls before each waiting one: past a ring's 256 */
#define ROUNDS  20

struct sender {
	int id;
	int target;
	unsigned long next;		/* the sequence number of its next call */
	_Atomic unsigned long ran;	/* calls run so far */
	_Atomic unsigned long last;	/* the sequence number the target ran last, + 1 */
	_Atomic int order_broken;
	struct xc_call async[8];
};

struct msg {
	struct sender *s;
	unsigned long seq;
};

static struct sender senders[SENDERS];
static int cpus[CPU_SETSIZE], ncpus;

/* Runs on the target: the sender's calls arrive in sequence. */
static void in_order(struct sender *s, unsigned long seq)
{
	/* relaxed: one target CPU runs a sender's calls to it, one after another */
	if (atomic_load_explicit(&s->last, memory_order_relaxed) != seq)
		atomic_store(&s->order_broken, 1);
	atomic_store_explicit(&s->last, seq + 1, memory_order_relaxed);
	atomic_fetch_add(&s->ran, 1);
}

/* A nowait call's argument packs the sequence number: no memory to free. */
static void nowait_fn(void *arg)
{
	uintptr_t v = (uintptr_t)arg;

	in_order(&senders[v & 7], v >> 3);
}

static void *pack(struct sender *s)
{
	return (void *)(((uintptr_t)s->next++ << 3) | (uintptr_t)s->id);
}

/* The waiting call: every earlier call of its sender has run. */
static void wait_fn(void *arg)
{
	struct msg *m = arg;

	in_order(m->s, m->seq);
}

static void send_burst(struct sender *s, int n)
{
	for (int i = 0; i < n; i++) {
		if (i % 97 == 50) {	/* an async call in the stream, also in order */
			struct xc_call *c = &s->async[i % 8];

			while (!xc_call_done(c))
				;
			c->fn = nowait_fn;
			c->arg = pack(s);
			CHECK_RET(xc_call_async(s->target, c), 0);
		} else {
			CHECK_RET(xc_call_single(s->target, nowait_fn, pack(s), 0), 0);
		}
	}
}

static void *sender_main(void *arg)
{
	struct sender *s = arg;

	for (int r = 0; r < ROUNDS; r++) {
		send_burst(s, BURST + r * 13);
		struct msg m = { s, s->next++ };

		CHECK_RET(xc_call_single(s->target, wait_fn, &m, XC_WAIT), 0);
		/* the waiting call ran last: all before it ran, in order */
		CHECK(atomic_load(&s->ran) == s->next);
		CHECK(!atomic_load(&s->order_broken));
	}
	return NULL;
}

static void senders_run(int nsenders, bool spread)
{
	pthread_t t[SENDERS];

	for (int i = 0; i < nsenders; i++) {
		struct sender *s = &senders[i];

		memset(s, 0, sizeof(*s));
		s->id = i;
		s->target = spread ? cpus[i % ncpus] : cpus[ncpus - 1];
		CHECK_RET(pthread_create(&t[i], NULL, sender_main, s), 0);
	}
	for (int i = 0; i < nsenders; i++)
		CHECK_RET(pthread_join(t[i], NULL), 0);
}

/* many / all: each target runs the sender's calls in order. */
static _Atomic unsigned long many_last[CPU_SETSIZE], many_ran[CPU_SETSIZE];
static _Atomic int many_broken;

static void many_fn(void *arg)
{
	int cpu = xc_this_cpu();
	unsigned long seq = (unsigned long)(uintptr_t)arg;

	if (atomic_load(&many_last[cpu]) != seq)
		atomic_store(&many_broken, 1);
	atomic_store(&many_last[cpu], seq + 1);
	atomic_fetch_add(&many_ran[cpu], 1);
}

static void many_in_order(void)
{
	cpu_set_t all;
	unsigned long seq = 0;

	CPU_ZERO(&all);
	for (int i = 0; i < ncpus; i++)
		CPU_SET(cpus[i], &all);
	for (int r = 0; r < 2000; r++) {
		int n = r % 3 == 0 ? xc_call_all(many_fn, (void *)(uintptr_t)seq, 0)
				   : r % 3 == 1 ? xc_call_many(&all, many_fn, (void *)(uintptr_t)seq, 0)
						: xc_call_single(cpus[r % ncpus], many_fn,
								 (void *)(uintptr_t)seq, 0);

		CHECK(n >= 0);
		if (r % 3 == 2) {	/* a single call: only that CPU's sequence moves */
			int cpu = cpus[r % ncpus];

			for (int i = 0; i < ncpus; i++)
				if (cpus[i] != cpu)
					CHECK_RET(xc_call_single(cpus[i], many_fn,
								 (void *)(uintptr_t)seq, 0), 0);
		}
		seq++;
	}
	/* a waiting all: every CPU ran the whole sequence before it */
	CHECK_RET(xc_call_all(many_fn, (void *)(uintptr_t)seq, XC_WAIT), ncpus);
	for (int i = 0; i < ncpus; i++)
		CHECK(atomic_load(&many_ran[cpus[i]]) == seq + 1);
	CHECK(!atomic_load(&many_broken));
}

/* Offline in the middle of a burst: refused or run once, in order. */
#define HOT_CALLS 200000
static _Atomic unsigned char hot_runs[HOT_CALLS];
static _Atomic long hot_last = -1;
static _Atomic int hot_broken, hot_stop;
static _Atomic long hot_sent;	/* calls made so far: the toggler lets some through each turn */

static void hot_fn(void *arg)
{
	long id = (long)(uintptr_t)arg;

	if (atomic_load_explicit(&hot_last, memory_order_relaxed) >= id)
		atomic_store(&hot_broken, 1);
	atomic_store_explicit(&hot_last, id, memory_order_relaxed);
	atomic_fetch_add(&hot_runs[id], 1);
}

static void *toggler(void *arg)
{
	int target = *(int *)arg;

	while (!atomic_load(&hot_stop)) {
		long from = atomic_load(&hot_sent);

		CHECK_RET(xc_cpu_offline(target), 0);
		CHECK_RET(xc_cpu_online(target), 0);
		while (atomic_load(&hot_sent) < from + 2000 && !atomic_load(&hot_stop))
			sched_yield();
	}
	return NULL;
}

static void offline_mid_burst(void)
{
	static signed char rc[HOT_CALLS];
	int target = cpus[ncpus - 1];
	long refused = 0;
	pthread_t t;

	CHECK_RET(pthread_create(&t, NULL, toggler, &target), 0);
	for (long i = 0; i < HOT_CALLS - 1; i++) {
		int r = xc_call_single(target, hot_fn, (void *)(uintptr_t)i, i % 1000 == 999 ? XC_WAIT : 0);

		CHECK(r == 0 || r == -ENXIO);
		rc[i] = (signed char)r;
		refused += r != 0;
		atomic_store_explicit(&hot_sent, i + 1, memory_order_relaxed);
	}
	atomic_store(&hot_stop, 1);
	CHECK_RET(pthread_join(t, NULL), 0);
	/* the toggler left it online: a last waiting call runs after every accepted one */
	CHECK_RET(xc_call_single(target, hot_fn, (void *)(uintptr_t)(HOT_CALLS - 1), XC_WAIT), 0);
	for (long i = 0; i < HOT_CALLS - 1; i++)
		CHECK(atomic_load(&hot_runs[i]) == (rc[i] == 0 ? 1 : 0));
	CHECK(!atomic_load(&hot_broken));
	printf("offline mid-burst: %ld of %d calls refused\n", refused, HOT_CALLS);
}

int main(void)
{
	CHECK_RET(xc_init(NULL), 0);
	ncpus = t_cpus(cpus);
	if (ncpus < 2) {
		xc_exit();
		t_skip("needs 2 CPUs");
	}
	senders_run(1, false);
	senders_run(SENDERS, false);
	senders_run(SENDERS, true);
	many_in_order();
	offline_mid_burst();
	CHECK_RET(xc_exit(), 0);

	/* small rings: the senders wait for room all the time */
	struct xc_opts small = { .ring_entries = 16 };

	CHECK_RET(xc_init(&small), 0);
	senders_run(SENDERS, false);
	CHECK_RET(xc_exit(), 0);
	printf("fifo: in order from 1 and %d senders\n", SENDERS);
	return T_PASS;
}
