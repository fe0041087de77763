/*
 * compose: calls made where two mechanisms meet, each checked for the
 * contract alone: a call whose caller got 0 runs exactly once, a call
 * refused with -ENXIO never runs, and nothing hangs.
 *   1. exit: both CPUs' drains run a call that makes a nowait call to the
 *      other, each after the other's queue is closed;
 *   2. offline: B's drain runs a call that waits for a busy A, and an
 *      XC_URGENT function on A makes a nowait call to the closed B;
 *   3. full ring: a worker whose ring to B is full waits for room, and a
 *      call it serves meanwhile calls B through the same ring;
 *   4. refused doorbell: a worker's call to B is refused while B closes,
 *      and a call it serves next calls B through the same ring.
 * Each scenario holds workers with work items until the state it needs is
 * reached (a close posted, a queue closed), read from libxcall's own words.
 * A watchdog turns a hang into a failure that names the scenario.
 */
#include "test.h"
#include "dump.h"
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>

#define NIDS 64

static int a_cpu, b_cpu;
static const char *scenario = "setup";
static _Atomic int ran[NIDS];		/* runs of the call with that id */
static _Atomic int ran_on_wrong_cpu;
static int want_cpu[NIDS];
static _Atomic int ret_of[NIDS];	/* its caller's return; 1: not made */
/* work items that hold a worker: calls run before work, so calls are queued once it holds */
static _Atomic int holding;

static void on_alarm(int sig)
{
	static const char msg[] = "compose: hung in scenario ";

	(void)sig;
	(void)!write(2, msg, sizeof(msg) - 1);
	(void)!write(2, scenario, strlen(scenario));
	(void)!write(2, "\n", 1);
	t_dump(NULL);
	_exit(T_FAIL);
}

static void reset(void)
{
	atomic_store(&holding, 0);
	for (int i = 0; i < NIDS; i++) {
		atomic_store(&ran[i], 0);
		atomic_store(&ret_of[i], 1);
	}
}

static void counted(void *arg)
{
	int id = (int)(intptr_t)arg;

	if (xc_this_cpu() != want_cpu[id])
		atomic_fetch_add(&ran_on_wrong_cpu, 1);
	atomic_fetch_add(&ran[id], 1);
}

/* A nowait call of counted(@id) to @cpu; its return recorded. */
static int call_counted(int cpu, int id, unsigned flags)
{
	int r;

	want_cpu[id] = cpu;
	r = xc_call_single(cpu, counted, (void *)(intptr_t)id, flags);
	atomic_store(&ret_of[id], r);
	return r;
}

static bool closed(int cpu)
{
	/* acquire: a snapshot of the worker's close */
	return atomic_load_explicit(&xc_cpus[cpu].mbox.callq, memory_order_acquire) == XC_LLIST_CLOSED;
}

static bool ctl_posted(int cpu, uint32_t ctl)
{
	return atomic_load_explicit(&xc_cpus[cpu].life.ctl, memory_order_acquire) == ctl;
}

static void spin_until_flag(_Atomic int *flag)
{
	while (!atomic_load(flag))
		sched_yield();
}

/* Every call made: 0 ran exactly once, -ENXIO never; nothing else returned. */
static void check_calls(int first, int last)
{
	for (int id = first; id <= last; id++) {
		int r = atomic_load(&ret_of[id]);

		/* a call that returned 0 may still be on its way: wait for it, bounded */
		for (int i = 0; r == 0 && !atomic_load(&ran[id]) && i < 20000; i++)
			t_sleep_ms(1);
		if (!((r == 0 && atomic_load(&ran[id]) == 1) || (r == -ENXIO && atomic_load(&ran[id]) == 0))) {
			fprintf(stderr, "compose: scenario %s: call %d returned %d and ran %d times\n",
				scenario, id, r, atomic_load(&ran[id]));
			exit(T_FAIL);
		}
	}
	CHECK(atomic_load(&ran_on_wrong_cpu) == 0);
}

/* ---- 1. two exit drains call each other ---- */

static void hold_until_exit(void *arg)
{
	atomic_fetch_add(&holding, 1);
	WAIT_UNTIL(ctl_posted(xc_this_cpu(), XC_CTL_EXIT));
}

/* Run in a drain: call the other CPU once its queue is closed too. */
static void drain_calls_other(void *arg)
{
	int other = xc_this_cpu() == a_cpu ? b_cpu : a_cpu;
	int id = (int)(intptr_t)arg;

	WAIT_UNTIL(closed(other));
	call_counted(other, id, 0);
}

static void exit_drains(void)
{
	struct xc_work wa = { .fn = hold_until_exit }, wb = { .fn = hold_until_exit };

	scenario = "1 (exit drains call each other)";
	reset();
	CHECK_RET(xc_init(NULL), 0);
	CHECK_RET(xc_queue_work(a_cpu, &wa), 0);
	CHECK_RET(xc_queue_work(b_cpu, &wb), 0);
	WAIT_UNTIL(atomic_load(&holding) == 2);
	CHECK_RET(xc_call_single(a_cpu, drain_calls_other, (void *)(intptr_t)0, 0), 0);
	CHECK_RET(xc_call_single(b_cpu, drain_calls_other, (void *)(intptr_t)1, 0), 0);
	xc_exit();
	check_calls(0, 1);
}

/* ---- 2. an urgent function calls a closed CPU whose drain waits for it ---- */

static _Atomic int urgent_done, a_release;

static void hold_a(void *arg)
{
	atomic_fetch_add(&holding, 1);
	spin_until_flag(&a_release);
}

static void hold_until_offline(void *arg)
{
	atomic_fetch_add(&holding, 1);
	WAIT_UNTIL(ctl_posted(xc_this_cpu(), XC_CTL_OFFLINE));
}

static void noop(void *arg)
{
}

/* In B's drain: a waiting call to A, which is busy until the urgent call is over. */
static void drain_waits_for_a(void *arg)
{
	CHECK_RET(xc_call_single(a_cpu, noop, NULL, XC_WAIT), 0);
}

/* XC_URGENT on A, interrupting hold_a: a nowait call to the closed B. */
static void urgent_calls_b(void *arg)
{
	while (!closed(b_cpu))
		;
	call_counted(b_cpu, 2, 0);
	atomic_store(&urgent_done, 1);
	atomic_store(&a_release, 1);
}

static void *offline_b(void *arg)
{
	return (void *)(intptr_t)xc_cpu_offline(b_cpu);
}

static void urgent_into_closed(void)
{
	struct xc_work wa = { .fn = hold_a }, wb = { .fn = hold_until_offline };
	pthread_t t;
	void *res;

	scenario = "2 (urgent call to a closed CPU whose drain waits for it)";
	reset();
	atomic_store(&urgent_done, 0);
	atomic_store(&a_release, 0);
	CHECK_RET(xc_init(NULL), 0);
	CHECK_RET(xc_queue_work(a_cpu, &wa), 0);
	CHECK_RET(xc_queue_work(b_cpu, &wb), 0);
	WAIT_UNTIL(atomic_load(&holding) == 2);
	CHECK_RET(xc_call_single(b_cpu, drain_waits_for_a, NULL, 0), 0);
	CHECK(pthread_create(&t, NULL, offline_b, NULL) == 0);
	WAIT_UNTIL(closed(b_cpu));
	CHECK_RET(xc_call_single(a_cpu, urgent_calls_b, NULL, XC_URGENT), 0);
	CHECK(pthread_join(t, &res) == 0);
	CHECK_RET((intptr_t)res, 0);
	CHECK(atomic_load(&urgent_done));
	CHECK_RET(xc_cpu_online(b_cpu), 0);
	CHECK_RET(xc_call_single(b_cpu, noop, NULL, XC_WAIT), 0);
	check_calls(2, 2);
	xc_exit();
}

/* ---- 3. a call served while the ring is full calls through it ---- */

#define RING 16
static _Atomic int b_release, nested_entered, filler_done;

static void hold_b(void *arg)
{
	atomic_fetch_add(&holding, 1);
	spin_until_flag(&b_release);
}

/* On A: one more call to B than its ring holds, B busy: the last waits for room. */
static void fill_ring_to_b(void *arg)
{
	for (int id = 0; id <= RING; id++)
		CHECK_RET(call_counted(b_cpu, id, 0), 0);
	atomic_store(&filler_done, 1);
}

/* On A, served inside the filler's wait for room: a call to B through the same ring. */
static void nested_call_to_b(void *arg)
{
	atomic_store(&nested_entered, 1);
	CHECK_RET(call_counted(b_cpu, RING + 1, 0), 0);
}

static void full_ring(void)
{
	struct xc_opts o = { .ring_entries = RING };
	struct xc_work wb = { .fn = hold_b };

	scenario = "3 (a call served in a wait for room calls through the same ring)";
	reset();
	atomic_store(&b_release, 0);
	atomic_store(&nested_entered, 0);
	atomic_store(&filler_done, 0);
	CHECK_RET(xc_init(&o), 0);
	CHECK_RET(xc_queue_work(b_cpu, &wb), 0);
	WAIT_UNTIL(atomic_load(&holding) == 1);
	CHECK_RET(xc_call_single(a_cpu, fill_ring_to_b, NULL, 0), 0);
	/* served only from inside the filler's wait for room: A runs nothing else meanwhile */
	CHECK_RET(xc_call_single(a_cpu, nested_call_to_b, NULL, 0), 0);
	WAIT_UNTIL(atomic_load(&nested_entered));
	atomic_store(&b_release, 1);
	WAIT_UNTIL(atomic_load(&filler_done));
	check_calls(0, RING + 1);
	xc_exit();
}

/* ---- 4. a call served after a refused doorbell calls through the same ring ---- */

static _Atomic int second_done, first_calling;

/* In B's drain: hold the close open until the second call has been made. */
static void drain_holds(void *arg)
{
	spin_until_flag(&second_done);
}

/* On A: a nowait call to B once B's queue is closed: its doorbell is refused. */
static void refused_call_to_b(void *arg)
{
	WAIT_UNTIL(closed(b_cpu));
	atomic_store(&first_calling, 1);
	call_counted(b_cpu, 3, 0);
}

/* On A, queued while the first call is being refused: a call to B through the same ring. */
static void second_call_to_b(void *arg)
{
	call_counted(b_cpu, 4, 0);
	atomic_store(&second_done, 1);
}

/* On A, once B is back: one more call through the same ring, and a wait for it. */
static void after_online(void *arg)
{
	CHECK_RET(call_counted(b_cpu, 5, 0), 0);
	CHECK_RET(call_counted(b_cpu, 6, XC_WAIT), 0);
}

static void refused_doorbell(void)
{
	struct xc_work wb = { .fn = hold_until_offline };
	pthread_t t;
	void *res;

	scenario = "4 (a call served after a refused doorbell calls through the same ring)";
	reset();
	atomic_store(&second_done, 0);
	atomic_store(&first_calling, 0);
	CHECK_RET(xc_init(NULL), 0);
	CHECK_RET(xc_queue_work(b_cpu, &wb), 0);
	WAIT_UNTIL(atomic_load(&holding) == 1);
	CHECK_RET(xc_call_single(b_cpu, drain_holds, NULL, 0), 0);
	CHECK_RET(xc_call_single(a_cpu, refused_call_to_b, NULL, 0), 0);
	CHECK(pthread_create(&t, NULL, offline_b, NULL) == 0);
	WAIT_UNTIL(atomic_load(&first_calling));
	CHECK_RET(xc_call_single(a_cpu, second_call_to_b, NULL, 0), 0);
	CHECK(pthread_join(t, &res) == 0);
	CHECK_RET((intptr_t)res, 0);
	CHECK_RET(xc_cpu_online(b_cpu), 0);
	CHECK_RET(xc_call_single(a_cpu, after_online, NULL, XC_WAIT), 0);
	check_calls(3, 6);
	xc_exit();
}

int main(void)
{
	static void (*const scenarios[4])(void) = { exit_drains, urgent_into_closed, full_ring,
						     refused_doorbell };
	/* XCALL_COMPOSE_ONLY=N runs scenario N alone */
	int cpus[CPU_SETSIZE], n, rounds = (int)t_env_long("XCALL_COMPOSE_ROUNDS", 5),
	    only = (int)t_env_long("XCALL_COMPOSE_ONLY", 0);

	t_dump_prepare();
	signal(SIGALRM, on_alarm);
	CHECK_RET(xc_init(NULL), 0);
	n = t_cpus(cpus);
	xc_exit();
	if (n < 2)
		t_skip("needs 2 CPUs");
	a_cpu = cpus[0];
	b_cpu = cpus[n - 1];
	for (int i = 0; i < rounds; i++)
		for (int k = 0; k < 4; k++) {
			if (only && only != k + 1)
				continue;
			alarm(60);
			scenarios[k]();
		}
	alarm(0);
	printf("compose: %d rounds passed\n", rounds);
	return T_PASS;
}
