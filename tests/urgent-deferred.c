/*
 * urgent-deferred: an XC_URGENT call whose signal arrives while another
 * call's function runs is deferred by the handler, and then runs right
 * after that function returns, before the worker's next work item, on
 * every path that runs a call:
 *   slot   a waiting call run through the mailbox slot, from the task loop;
 *   urgent an urgent call itself run in task context (it was deferred too);
 *   poll   a slot call run by xc_poll() inside a work item.
 * Each case checks that the signal was sent (the deferral happened) and that
 * the urgent call ran before the work item queued behind started. Ordering
 * only: nothing here measures time, and the short spins merely keep each
 * signal's arrival inside the function it must not interrupt.
 */
#include "test.h"
#include "base/internal.h"
#include <pthread.h>
#include <stdatomic.h>

static int cpu;
static _Atomic int go, in_first, first_may_return, urgent_sent, urgent_ran, urgent_before_work;
static _Atomic int work_started, in_hold;

static void spin_ms(long ms)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000L + (b.tv_nsec - a.tv_nsec) / 1000000L < ms);
}

/* A work item that keeps the worker RUNNING (busy) until released. */
static void hold_worker(void *arg)
{
	atomic_store(&in_hold, 1);
	while (!atomic_load(&go))
		;
}

/* The function the urgent call must not interrupt: returns once the urgent signal has had time to land. */
static void first_call(void *arg)
{
	atomic_store(&in_first, 1);
	while (!atomic_load(&first_may_return))
		;
	spin_ms(30);
}

static void urgent_fn(void *arg)
{
	atomic_store(&urgent_ran, 1);
}

/* The work item queued behind: records whether the urgent call already ran. */
static void work_behind(void *arg)
{
	atomic_store(&urgent_before_work, atomic_load(&urgent_ran));
	atomic_store(&work_started, 1);
}

static void *slot_caller(void *arg)
{
	CHECK_RET(xc_call_single(cpu, first_call, NULL, XC_WAIT), 0);
	return NULL;
}

static void reset(void)
{
	atomic_store(&go, 0);
	atomic_store(&in_hold, 0);
	atomic_store(&in_first, 0);
	atomic_store(&first_may_return, 0);
	atomic_store(&urgent_sent, 0);
	atomic_store(&urgent_ran, 0);
	atomic_store(&urgent_before_work, 0);
	atomic_store(&work_started, 0);
}

static bool slot_published(void)
{
	return atomic_load(&xc_cpus[cpu].mbox.slot.done.word) & XC_SLOT_PUBLISHED;
}

/* Send the urgent call while first_call runs, then let first_call return. */
static void urgent_during_first(void)
{
	WAIT_UNTIL(atomic_load(&in_first));
	CHECK_RET(xc_call_single(cpu, urgent_fn, NULL, XC_URGENT), 0);
	atomic_store(&first_may_return, 1);
}

static uint64_t signals(void)
{
	struct xc_stats st;

	CHECK_RET(xc_stats_get(cpu, &st), 0);
	return st.signals_sent;
}

static void check_case(const char *name, uint64_t signals0)
{
	WAIT_UNTIL(atomic_load(&work_started));
	if (signals() == signals0) {
		fprintf(stderr, "%s: no urgent signal was sent: the case did not test the deferral\n", name);
		exit(T_FAIL);
	}
	if (!atomic_load(&urgent_before_work)) {
		fprintf(stderr, "%s: the work item started before the deferred urgent call ran\n", name);
		exit(T_FAIL);
	}
	WAIT_UNTIL(atomic_load(&urgent_ran));
}

/* slot: a waiting call in the slot, run by the task loop while the worker is RUNNING. */
static void case_slot(void)
{
	static struct xc_work hold = { .fn = hold_worker }, behind = { .fn = work_behind };
	pthread_t t;
	uint64_t s0 = signals();

	reset();
	CHECK_RET(xc_queue_work(cpu, &hold), 0);
	WAIT_UNTIL(atomic_load(&in_hold));	/* RUNNING from here: urgent senders signal */
	CHECK(pthread_create(&t, NULL, slot_caller, NULL) == 0);
	WAIT_UNTIL(slot_published());
	CHECK_RET(xc_queue_work(cpu, &behind), 0);
	atomic_store(&go, 1);
	urgent_during_first();
	check_case("slot", s0);
	pthread_join(t, NULL);
}

static _Atomic int in_urgent_first, urgent_first_may_return;

/* An urgent call run in task context (deferred behind first_call), during which a second urgent call arrives. */
static void urgent_first(void *arg)
{
	atomic_store(&in_urgent_first, 1);
	while (!atomic_load(&urgent_first_may_return))
		;
	spin_ms(30);
}

static void case_urgent(void)
{
	static struct xc_work hold = { .fn = hold_worker }, behind = { .fn = work_behind };
	uint64_t s0 = signals();

	reset();
	atomic_store(&in_urgent_first, 0);
	atomic_store(&urgent_first_may_return, 0);
	CHECK_RET(xc_queue_work(cpu, &hold), 0);
	WAIT_UNTIL(atomic_load(&in_hold));	/* RUNNING from here: urgent senders signal */
	CHECK_RET(xc_call_single(cpu, first_call, NULL, 0), 0);
	CHECK_RET(xc_queue_work(cpu, &behind), 0);
	atomic_store(&go, 1);
	WAIT_UNTIL(atomic_load(&in_first));
	CHECK_RET(xc_call_single(cpu, urgent_first, NULL, XC_URGENT), 0);
	atomic_store(&first_may_return, 1);
	WAIT_UNTIL(atomic_load(&in_urgent_first));
	CHECK_RET(xc_call_single(cpu, urgent_fn, NULL, XC_URGENT), 0);
	atomic_store(&urgent_first_may_return, 1);
	check_case("urgent", s0);
}

static _Atomic int poll_ret = -1;

/* A work item that serves a slot call through xc_poll(), then checks the urgent call ran. */
static void polling_work(void *arg)
{
	atomic_store(&in_hold, 1);
	while (!slot_published())
		;
	atomic_store(&poll_ret, xc_poll());
	work_behind(NULL);
}

static void case_poll(void)
{
	static struct xc_work w = { .fn = polling_work };
	pthread_t t;
	uint64_t s0 = signals();

	reset();
	CHECK_RET(xc_queue_work(cpu, &w), 0);
	WAIT_UNTIL(atomic_load(&in_hold));	/* the slot call can only run in its xc_poll() */
	CHECK(pthread_create(&t, NULL, slot_caller, NULL) == 0);
	urgent_during_first();
	check_case("poll", s0);
	CHECK(atomic_load(&poll_ret) >= 1);
	pthread_join(t, NULL);
}

int main(void)
{
	int cpus[CPU_SETSIZE];
	struct xc_opts o = { .poll_ns = XC_POLL_NONE };

	CHECK_RET(xc_init(&o), 0);
	if (t_cpus(cpus) < 2) {
		xc_exit();
		t_skip("needs 2 CPUs");
	}
	cpu = cpus[1];
	for (int round = 0; round < 3; round++) {
		case_slot();
		case_urgent();
		case_poll();
	}
	CHECK_RET(xc_exit(), 0);
	return T_PASS;
}
