/*
 * stress: exactly once, under churn. Plain threads and workers (from work
 * items) issue a random mix of single / many / all / cond / any / async
 * calls, waiting and not, urgent and not, plus work items, while a churn thread takes CPUs
 * offline and online. Every call carries an id; each run sets its CPU's bit
 * in that id's record. At the end (after xc_exit drained everything) every
 * call that was accepted ran exactly once on each CPU it was sent to, on
 * exactly as many CPUs as the call reported, and nothing ran twice.
 *
 * Sizes: XCALL_STRESS_OPS calls per thread (default 1000000),
 * XCALL_STRESS_THREADS plain sender threads (default 3), XCALL_STRESS_CHURN
 * (default 1) offline/online churn.
 *
 * XCALL_STRESS_OS_HOTPLUG=1, in a guest only (XCALL_GUEST=1, root): a second
 * churn thread takes CPUs offline and online through sysfs, as the OS does.
 * Then a run may end on another CPU than its worker's (the OS moved it
 * before the worker noticed): every such run must be counted in
 * xc_stats.displaced, each CPU is online in libxcall again by itself after
 * the churn, and the rest holds as above. Every CPU taken offline is put back
 * on every exit path.
 *
 * Soak (XCALL_SOAK_SECONDS=S, `make soak`): rounds of the same for S seconds,
 * each an xc_init .. xc_exit cycle with a random poll policy and bringup
 * mode, with one call in 20000 taking 60 ms (past a 40 ms stuck_ms), and a
 * closing report: calls accepted and run, lost, duplicated, the longest wait
 * of a waiting single call (slow ones aside), stuck reports.
 */
#include "test.h"
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>

#define MAX_T_CPUS 64

struct rec {
	_Atomic uint64_t seen;		/* bit per CPU index that ran it */
	int expect_n;			/* CPUs the call said it reached; -1 refused */
	int expect_cpu;			/* single target, or -1 */
	uint64_t allowed;		/* CPUs it may run on */
};

static struct rec *recs;
static _Atomic long next_id, dups, work_runs, work_queued;
static long ops_per_thread, nr_ids;
static int cpus[CPU_SETSIZE], ncpu, cpu_idx[CPU_SETSIZE];
static _Atomic int stop_churn;

static bool os_hotplug;		/* XCALL_STRESS_OS_HOTPLUG: the OS takes CPUs too */
static _Atomic long ran_elsewhere;	/* runs that ended on another CPU than their worker's */
static _Atomic int os_down = -1;	/* the CPU the OS churn has offline, or -1 */

static long slow_every;	/* soak: one call in this many takes a while (0: none) */
static _Atomic uint64_t max_wait_ns;

static void hit(void *arg)
{
	long id = (long)arg;

	if (slow_every && id % slow_every == 0)
		t_sleep_ms(60);		/* longer than the soak's stuck_ms: a stuck report */
	uint64_t bit = 1ull << cpu_idx[xc_this_cpu()];

	if (atomic_fetch_or(&recs[id].seen, bit) & bit)
		atomic_fetch_add(&dups, 1);
	if (os_hotplug && sched_getcpu() != xc_this_cpu())
		atomic_fetch_add(&ran_elsewhere, 1);
}

static long new_id(void)
{
	long id = atomic_fetch_add(&next_id, 1);

	CHECK(id < nr_ids);
	recs[id].expect_n = -1;
	recs[id].expect_cpu = -1;
	return id;
}

static uint64_t mask_bits(const cpu_set_t *m)
{
	uint64_t b = 0;

	for (int i = 0; i < ncpu; i++)
		if (CPU_ISSET(cpus[i], m))
			b |= 1ull << i;
	return b;
}

static bool odd_cpu_idx(int cpu, void *arg)
{
	return cpu_idx[cpu] % 2 == (int)((long)arg % 2);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static unsigned rnd(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

/* One random operation; @self is the sender's CPU or -1. */
static void one_op(unsigned *seed, struct xc_call *async, int nasync, struct xc_work *works,
		   int nworks, int self);

static void work_fn(void *arg)
{
	unsigned seed = (unsigned)(long)arg * 2654435761u;
	struct xc_call async[4] = { 0 };

	for (int i = 0; i < 8; i++)
		one_op(&seed, async, 4, NULL, 0, xc_this_cpu());
	/* the async descriptors live on this stack: wait for them */
	for (int i = 0; i < 4; i++)
		while (!xc_call_done(&async[i]))
			xc_poll();
	atomic_fetch_add(&work_runs, 1);
}

static void one_op(unsigned *seed, struct xc_call *async, int nasync, struct xc_work *works,
		   int nworks, int self)
{
	unsigned r = rnd(seed);
	/* a quarter of the calls are urgent: they may interrupt a busy work item */
	unsigned flags = ((r & 1) ? XC_WAIT : 0) | (((r >> 22) & 3) == 0 ? XC_URGENT : 0);
	int target = cpus[(r >> 1) % (unsigned)ncpu];
	long id = new_id();
	struct rec *rc = &recs[id];
	cpu_set_t m;
	int ret;

	CPU_ZERO(&m);
	for (int i = 0; i < ncpu; i++)
		if ((r >> (4 + i)) & 1)
			CPU_SET(cpus[i], &m);
	if (CPU_COUNT(&m) == 0)
		CPU_SET(target, &m);

	switch ((r >> 12) % 8) {
	case 0:
	case 1: {
		uint64_t t0 = (flags & XC_WAIT) ? now_ns() : 0, dt;

		rc->allowed = 1ull << cpu_idx[target];
		rc->expect_cpu = target;
		ret = xc_call_single(target, hit, (void *)id, flags);
		rc->expect_n = ret == 0 ? 1 : -1;
		CHECK(ret == 0 || ret == -ENXIO);
		dt = t0 ? now_ns() - t0 : 0;
		for (uint64_t old = atomic_load(&max_wait_ns);
		     dt > old && !(slow_every && id % slow_every == 0);)
			if (atomic_compare_exchange_weak(&max_wait_ns, &old, dt))
				break;
		break;
	}
	case 2:
		if (r & 2)
			flags |= XC_RUN_LOCAL;
		rc->allowed = mask_bits(&m);
		ret = xc_call_many(&m, hit, (void *)id, flags);
		CHECK(ret >= 0);
		rc->expect_n = ret;
		break;
	case 3:
		rc->allowed = ~0ull;
		ret = xc_call_all(hit, (void *)id, flags | ((r & 2) ? XC_RUN_LOCAL : 0));
		CHECK(ret >= 0);
		rc->expect_n = ret;
		if (self >= 0 && !(r & 2))
			rc->allowed &= ~(1ull << cpu_idx[self]);
		break;
	case 4:
		rc->allowed = mask_bits(&m);
		ret = xc_call_cond(&m, odd_cpu_idx, hit, (void *)id, flags);
		CHECK(ret >= 0);
		rc->expect_n = ret;
		break;
	case 5:
		rc->allowed = mask_bits(&m);
		ret = xc_call_any(&m, hit, (void *)id, flags);
		CHECK(ret >= 0 || ret == -ENXIO);
		rc->expect_n = ret >= 0 ? 1 : -1;
		if (ret >= 0) {
			rc->expect_cpu = ret;
			CHECK(CPU_ISSET(ret, &m));
		}
		break;
	case 6: {
		struct xc_call *c = &async[(r >> 16) % (unsigned)nasync];

		if (!xc_call_done(c)) {
			rc->expect_n = 0;	/* nothing sent under this id */
			rc->allowed = 0;
			break;
		}
		c->fn = hit;
		c->arg = (void *)id;
		rc->allowed = 1ull << cpu_idx[target];
		rc->expect_cpu = target;
		ret = xc_call_async(target, c);
		CHECK(ret == 0 || ret == -ENXIO);
		rc->expect_n = ret == 0 ? 1 : -1;
		break;
	}
	default:
		rc->expect_n = 0;
		rc->allowed = 0;
		if (works) {
			struct xc_work *w = &works[(r >> 16) % (unsigned)nworks];

			if (xc_work_pending(w))
				break;
			w->fn = work_fn;
			w->arg = (void *)(long)rnd(seed);
			if (xc_queue_work(target, w) == 0)
				atomic_fetch_add(&work_queued, 1);
		}
		break;
	}
}

static void *sender(void *arg)
{
	unsigned seed = (unsigned)(long)arg * 7919u + 1;
	struct xc_call async[16] = { 0 };
	struct xc_work *works = calloc(32, sizeof(*works));

	for (long i = 0; i < ops_per_thread; i++)
		one_op(&seed, async, 16, works, 32, -1);
	for (int i = 0; i < 16; i++)
		while (!xc_call_done(&async[i]))
			;
	/* work items are freed only after xc_exit drained them */
	return works;
}

static void *churn(void *arg)
{
	unsigned seed = 42;

	while (!atomic_load(&stop_churn)) {
		int c = cpus[rnd(&seed) % (unsigned)ncpu];

		if (xc_cpu_offline(c) == 0) {
			int r;

			t_sleep_ms(rnd(&seed) % 3);
			/* -ENXIO while the OS has it: it stays offline for us until we bring it back */
			while ((r = xc_cpu_online(c)) == -ENXIO && os_hotplug)
				t_sleep_ms(1);
			CHECK_RET(r, 0);
		}
		t_sleep_ms(rnd(&seed) % 3);
	}
	return NULL;
}

/* Every exit path: the CPU the OS churn took is put back. */
static void os_put_back(void)
{
	int cpu = atomic_exchange(&os_down, -1);

	if (cpu >= 0 && t_sysfs_cpu_online(cpu, 1) == 0)
		printf("stress: CPU %d put back online\n", cpu);
}

static void os_put_back_signal(int sig)
{
	os_put_back();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* As the OS does: a CPU (never the first) offline for a few ms, then back. */
static void *os_churn(void *arg)
{
	unsigned seed = 4242;

	while (!atomic_load(&stop_churn)) {
		int c = cpus[1 + rnd(&seed) % (unsigned)(ncpu - 1)];

		atomic_store(&os_down, c);
		if (t_sysfs_cpu_online(c, 0) == 0) {
			t_sleep_ms(5 + rnd(&seed) % 40);
			CHECK(t_sysfs_cpu_online(c, 1) == 0);
		}
		atomic_store(&os_down, -1);
		t_sleep_ms(rnd(&seed) % 20);
	}
	return NULL;
}

/* Totals over rounds (a soak runs many). */
struct totals {
	long rounds, issued, runs, lost, dups, wrong, work;
	uint64_t max_wait_ns;
};

static _Atomic long stuck_lines;

static void count_stuck(void *ctx, const char *line)
{
	if (!strncmp(line, "stuck call:", 11))
		atomic_fetch_add(&stuck_lines, 1);
}

/* One xc_init .. xc_exit round: send, churn, drain, verify. */
static void round_run(const struct xc_opts *o, long nthreads, bool do_churn, struct totals *t)
{
	pthread_t th[64], ch, osch;
	void *works[64];
	long lost = 0, wrong = 0, issued = 0, runs = 0;

	atomic_store(&next_id, 0);
	atomic_store(&dups, 0);
	atomic_store(&work_runs, 0);
	atomic_store(&work_queued, 0);
	atomic_store(&stop_churn, 0);
	memset(recs, 0, (size_t)nr_ids * sizeof(*recs));
	CHECK_RET(xc_init(o), 0);
	ncpu = t_cpus(cpus);
	if (ncpu > MAX_T_CPUS)
		ncpu = MAX_T_CPUS;
	for (int i = 0; i < ncpu; i++)
		cpu_idx[cpus[i]] = i;

	if (do_churn)
		pthread_create(&ch, NULL, churn, NULL);
	if (os_hotplug && ncpu > 1)
		pthread_create(&osch, NULL, os_churn, NULL);
	for (long i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, sender, (void *)(i + 64 * t->rounds));
	for (long i = 0; i < nthreads; i++)
		pthread_join(th[i], &works[i]);
	atomic_store(&stop_churn, 1);
	if (do_churn)
		pthread_join(ch, NULL);
	if (os_hotplug && ncpu > 1) {
		cpu_set_t on;
		struct xc_stats st;

		pthread_join(osch, NULL);
		/* every CPU the OS gave back is online in libxcall again, by itself */
		WAIT_UNTIL(xc_online_mask(&on) == ncpu);
		CHECK_RET(xc_stats_get(-1, &st), 0);
		printf("stress: %ld runs ended on another CPU, %llu counted displaced\n",
		       atomic_load(&ran_elsewhere), (unsigned long long)st.displaced);
		CHECK((uint64_t)atomic_load(&ran_elsewhere) <= st.displaced);
	}
	CHECK_RET(xc_exit(), 0);	/* runs everything still queued */

	for (long id = 0; id < atomic_load(&next_id); id++) {
		struct rec *rc = &recs[id];
		uint64_t seen = atomic_load(&rc->seen);
		int n = __builtin_popcountll(seen);

		if (rc->expect_n > 0)
			issued += rc->expect_n;
		runs += n;
		if (rc->expect_n < 0) {
			wrong += n != 0;	/* refused, yet ran */
			continue;
		}
		if (n < rc->expect_n)
			lost += rc->expect_n - n;
		if (n > rc->expect_n || (seen & ~rc->allowed))
			wrong++;
		if (rc->expect_cpu >= 0 && rc->expect_n == 1 && seen != (1ull << cpu_idx[rc->expect_cpu]))
			wrong++;
	}
	for (long i = 0; i < nthreads; i++)
		free(works[i]);
	t->rounds++;
	t->issued += issued;
	t->runs += runs;
	t->lost += lost;
	t->dups += atomic_load(&dups);
	t->wrong += wrong;
	t->work += atomic_load(&work_runs);
	CHECK(atomic_load(&work_runs) == atomic_load(&work_queued));
}

static void verdict(const struct totals *t)
{
	printf("stress: %ld rounds, %ld calls accepted, %ld runs, %ld lost, %ld duplicated, "
	       "%ld wrong CPU/count, %ld work items, max wait %.1f us, %ld stuck reports\n",
	       t->rounds, t->issued, t->runs, t->lost, t->dups, t->wrong, t->work,
	       (double)atomic_load(&max_wait_ns) / 1000.0, atomic_load(&stuck_lines));
	CHECK(t->lost == 0);
	CHECK(t->dups == 0);
	CHECK(t->wrong == 0);
	CHECK(t->issued == t->runs);
}

int main(void)
{
	long nthreads = t_env_long("XCALL_STRESS_THREADS", 3);
	bool do_churn = t_env_long("XCALL_STRESS_CHURN", 1) != 0;
	long soak_s = t_env_long("XCALL_SOAK_SECONDS", 0);
	struct totals t = { 0 };

	ops_per_thread = t_env_long("XCALL_STRESS_OPS", soak_s ? 20000 : 1000000);
	if (t_env_long("XCALL_STRESS_OS_HOTPLUG", 0)) {
		if (t_env_long("XCALL_GUEST", 0) != 1 || geteuid() != 0)
			t_skip("XCALL_STRESS_OS_HOTPLUG takes CPUs offline: only as root in a guest (XCALL_GUEST=1)");
		os_hotplug = true;
		atexit(os_put_back);
		signal(SIGINT, os_put_back_signal);
		signal(SIGTERM, os_put_back_signal);
		signal(SIGHUP, os_put_back_signal);
	}
	CHECK(nthreads > 0 && nthreads <= 64 && ops_per_thread > 0);
	/* each work item issues 8 more; at most one item per 8 ops */
	nr_ids = nthreads * ops_per_thread * 3 + 1024;
	recs = calloc((size_t)nr_ids, sizeof(*recs));
	CHECK(recs != NULL);

	if (!soak_s) {
		round_run(NULL, nthreads, do_churn, &t);
	} else {
		/* soak: rounds with varied options, slow callbacks, stuck reports, init/exit cycles */
		static const long polls[] = { XC_POLL_ADAPTIVE, XC_POLL_NONE, 20000, XC_POLL_FOREVER };
		uint64_t end = (uint64_t)time(NULL) + (uint64_t)soak_s;
		unsigned seed = 7;

		slow_every = 20000;
		while ((uint64_t)time(NULL) < end) {
			struct xc_opts o = {
				.poll_ns = polls[rnd(&seed) % 4],
				.serial_bringup = rnd(&seed) & 1,
				.stuck_ms = 40,
				.report = count_stuck,
			};
			round_run(&o, nthreads, do_churn, &t);
		}
	}
	verdict(&t);
	free(recs);
	return T_PASS;
}
