/*
 * call-async-done: an async call's completion callback (xc_call.on_done).
 *   - it runs once per call, on the target CPU, after the call's function,
 *     and after libxcall's last write to the descriptor: inside it
 *     xc_call_done() is already true and the descriptor can be queued again
 *     at once (a chain of calls through one descriptor, each queued by the
 *     previous one's callback, never gets -EBUSY);
 *   - a descriptor freed inside its callback is never touched again (the
 *     heap descriptors below; ASan reports any later access), through the
 *     rings, through the shared lists (XC_ABLATE_RING), through an offline
 *     drain and an exit drain, from several threads at once;
 *   - for the calling worker's own CPU it runs inline: it has run when
 *     xc_call_async() returns;
 *   - it never runs for a refused call: -EBUSY, -ENXIO (offline, absent,
 *     runtime down), -EINVAL.
 */
#include "test.h"
#include "ablate.h"
#include <stdatomic.h>
#include <stdint.h>

static _Atomic long fn_runs, done_runs, wrong;

struct tracked {
	struct xc_call call;	/* first: freed with it */
	int cpu;		/* the target */
	_Atomic int ran;	/* the function ran */
};

static void fn_tracked(void *arg)
{
	struct tracked *t = arg;

	if (xc_this_cpu() != t->cpu)
		atomic_fetch_add(&wrong, 1);
	atomic_store(&t->ran, 1);
	atomic_fetch_add(&fn_runs, 1);
}

/* The callback: after the function, on the target, after the last write; then frees it. */
static void done_free(void *arg)
{
	struct tracked *t = arg;

	if (!atomic_load(&t->ran) || xc_this_cpu() != t->cpu || !xc_call_done(&t->call))
		atomic_fetch_add(&wrong, 1);
	atomic_fetch_add(&done_runs, 1);
	free(t);
}

static struct tracked *tracked_new(int cpu)
{
	struct tracked *t = calloc(1, sizeof(*t));

	CHECK(t != NULL);
	t->cpu = cpu;
	t->call.fn = fn_tracked;
	t->call.arg = t;
	t->call.on_done.fn = done_free;
	t->call.on_done.arg = t;
	return t;
}

/* Send @n heap descriptors to @cpus in turn; each frees itself in its callback. */
static void send_freeing(const int *cpus, int ncpus, int n)
{
	for (int i = 0; i < n; i++) {
		struct tracked *t = tracked_new(cpus[i % ncpus]);

		CHECK_RET(xc_call_async(t->cpu, &t->call), 0);
	}
}

static void settle(long want)
{
	WAIT_UNTIL(atomic_load(&done_runs) == want);
	CHECK(atomic_load(&fn_runs) == want);
	CHECK(atomic_load(&wrong) == 0);
}

/* A chain: each callback queues the same descriptor again, to the next CPU, until @left is 0. */
struct chain {
	struct xc_call call;
	const int *cpus;
	int ncpus, step, left;
	_Atomic int busy, finished;
};

static void chain_fn(void *arg)
{
	struct chain *ch = arg;

	if (xc_this_cpu() != ch->cpus[ch->step % ch->ncpus])
		atomic_fetch_add(&wrong, 1);
}

static void chain_done(void *arg)
{
	struct chain *ch = arg;

	if (--ch->left == 0) {
		atomic_store(&ch->finished, 1);
		return;
	}
	ch->step++;
	int r = xc_call_async(ch->cpus[ch->step % ch->ncpus], &ch->call);

	if (r == -EBUSY)
		atomic_fetch_add(&ch->busy, 1);	/* the descriptor was still libxcall's */
	if (r)
		atomic_store(&ch->finished, 1);
}

/* The own CPU: the callback runs inline, before xc_call_async() returns. */
static _Atomic int inline_seen;
static struct xc_call own_call;

static void own_done(void *arg)
{
	atomic_fetch_add(&inline_seen, 1);
}

static void nop(void *arg)
{
}

static void own_cpu(void *arg)
{
	int cpu = xc_this_cpu();

	own_call = (struct xc_call){ .fn = nop, .on_done = { own_done, NULL } };
	if (xc_call_async(cpu, &own_call) != 0 || atomic_load(&inline_seen) != 1 ||
	    !xc_call_done(&own_call))
		atomic_fetch_add(&wrong, 1);
}

/* Several threads at once, each sending self-freeing descriptors. */
static int *g_cpus, g_n;

static void *sender(void *arg)
{
	send_freeing(g_cpus, g_n, 2000);
	return NULL;
}

static _Atomic int gate;

static void hold(void *arg)
{
	while (!atomic_load(&gate))
		;
}

static void one_runtime(unsigned ablate)
{
	static int cpus[CPU_SETSIZE];
	long want = atomic_load(&done_runs);
	int n;

	CHECK_RET(t_init_ablated(NULL, ablate), 0);
	n = t_cpus(cpus);
	if (n < 2) {
		xc_exit();
		t_skip("needs 2 CPUs");
	}

	/* once each, freed inside */
	send_freeing(cpus, n, 1000);
	want += 1000;
	settle(want);

	/* a chain through one descriptor: queued again from its own callback */
	struct chain ch = { .call = { .fn = chain_fn }, .cpus = cpus, .ncpus = n, .left = 200 };

	ch.call.arg = &ch;
	ch.call.on_done.fn = chain_done;
	ch.call.on_done.arg = &ch;
	CHECK_RET(xc_call_async(cpus[0], &ch.call), 0);
	WAIT_UNTIL(atomic_load(&ch.finished));
	CHECK(ch.busy == 0 && ch.left == 0);
	WAIT_UNTIL(xc_call_done(&ch.call));

	/* inline on the calling worker's own CPU */
	atomic_store(&inline_seen, 0);
	CHECK_RET(xc_call_single(cpus[1], own_cpu, NULL, XC_WAIT), 0);
	CHECK(atomic_load(&inline_seen) == 1 && atomic_load(&wrong) == 0);

	/* refused: never called */
	struct tracked *busy = tracked_new(cpus[1]);

	atomic_store(&gate, 0);
	CHECK_RET(xc_call_single(cpus[1], hold, NULL, 0), 0);	/* holds the CPU: busy stays in flight */
	CHECK_RET(xc_call_async(cpus[1], &busy->call), 0);
	want++;
	CHECK_RET(xc_call_async(cpus[1], &busy->call), -EBUSY);
	CHECK_RET(xc_call_async(cpus[0], &busy->call), -EBUSY);
	atomic_store(&gate, 1);
	settle(want);	/* ran and was freed once, the refusals left no second callback */

	struct xc_call refused = { .fn = nop, .on_done = { own_done, NULL } };
	int before = atomic_load(&inline_seen);

	CHECK_RET(xc_call_async(CPU_SETSIZE, &refused), -ENXIO);
	CHECK_RET(xc_call_async(-1, &refused), -ENXIO);
	CHECK_RET(xc_cpu_offline(cpus[1]), 0);
	CHECK_RET(xc_call_async(cpus[1], &refused), -ENXIO);
	CHECK_RET(xc_cpu_online(cpus[1]), 0);
	refused.fn = NULL;
	CHECK_RET(xc_call_async(cpus[1], &refused), -EINVAL);
	CHECK(atomic_load(&inline_seen) == before && xc_call_done(&refused));

	/* an offline drain runs what is queued, callbacks included */
	atomic_store(&gate, 0);
	CHECK_RET(xc_call_single(cpus[1], hold, NULL, 0), 0);
	send_freeing(&cpus[1], 1, 100);	/* under a ring's 256 */
	want += 100;
	atomic_store(&gate, 1);
	CHECK_RET(xc_cpu_offline(cpus[1]), 0);
	CHECK(atomic_load(&done_runs) == want);
	CHECK_RET(xc_cpu_online(cpus[1]), 0);

	/* several threads at once */
	pthread_t th[3];

	g_cpus = cpus;
	g_n = n;
	for (int i = 0; i < 3; i++)
		CHECK(pthread_create(&th[i], NULL, sender, NULL) == 0);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	want += 3 * 2000;
	settle(want);

	/* an exit drain: queued behind a held call, run by xc_exit */
	atomic_store(&gate, 0);
	CHECK_RET(xc_call_single(cpus[1], hold, NULL, 0), 0);
	send_freeing(&cpus[1], 1, 100);	/* under a ring's 256 */
	want += 100;
	atomic_store(&gate, 1);
	CHECK_RET(xc_exit(), 0);
	CHECK(atomic_load(&done_runs) == want && atomic_load(&fn_runs) == want);
	CHECK(atomic_load(&wrong) == 0);

	/* the runtime down: refused, never called */
	CHECK_RET(xc_call_async(cpus[0], &refused), -EINVAL);
	refused.fn = nop;
	CHECK_RET(xc_call_async(cpus[0], &refused), -ENXIO);
	CHECK(atomic_load(&inline_seen) == before);
}

int main(void)
{
	CHECK(sizeof(struct xc_call) == 64);
	one_runtime(0);
	one_runtime(XC_ABLATE_RING);	/* descriptors on the CPUs' shared lists (call_run) */
	return T_PASS;
}
