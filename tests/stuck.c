/*
 * stuck: a waiting call whose function takes longer than stuck_ms is
 * reported through the report hook, naming the waiter, the target CPU, the
 * function and what that CPU is running (a call: for at least how long, as
 * far as the waiter could tell; a work item: for how long, also after a call
 * nested in it through xc_poll() has returned; for a call to several CPUs,
 * each of the first ones; in a run of nowait calls, the one running); the
 * reports repeat while it stays stuck and an "unstuck" line follows when it
 * completes; the stats count them. A worker
 * polling forever, which runs the call on the slot's straight path, names it
 * too. With reports off, the same wait says nothing.
 */
#include "reports.h"
#include "base/internal.h"
#include <stdatomic.h>

/*
 * What the slow function and work item wait for before they return: the
 * reports they are there to cause, whenever those come (a loaded machine may
 * run the caller's watch late, or start the function late). Set before the
 * call is sent; empty: the function sleeps arg ms.
 */
static char await_what[2][160];
static int await_n;		/* reports of await_what[0]; one of await_what[1] */

static void await_reports(void)
{
	for (int i = 0; i < 2 && await_what[i][0]; i++)
		t_await_reported(await_what[i], i ? 1 : await_n);
}

/* not static: the report names it through the dynamic symbol table */
void stuck_test_slow_fn(void *arg)
{
	if (await_what[0][0])
		await_reports();
	else
		t_sleep_ms((long)arg);
}

static atomic_int go, nested_ran, polled;

static void nested_call(void *arg)
{
	atomic_store(&nested_ran, 1);
}

/* not static: named in the report. Runs a nested call at xc_poll(), then stays busy. */
void stuck_test_slow_work(void *arg)
{
	while (!atomic_load(&go))
		;
	while (!atomic_load(&nested_ran))
		xc_poll();
	/* out of xc_poll(): a call that comes now waits for the item, and is stuck */
	atomic_store(&polled, 1);
	await_reports();
}

static void quick(void *arg)
{
}

static atomic_int hold;

/* Keeps the worker in a run of nowait calls until the calls behind it are all in its ring. */
static void holding(void *arg)
{
	while (atomic_load(&hold))
		;
}

/* not static: named in the report. The last of a run of nowait calls. */
void stuck_test_late_fn(void *arg)
{
	await_reports();
}

void stuck_test_from_worker(void *arg)
{
	CHECK_RET(xc_call_single(*(int *)arg, stuck_test_slow_fn, (void *)350L, XC_WAIT), 0);
}

static int count(const char *what)
{
	return t_count_reported(what);
}

static void await_set(int n, const char *first, const char *second)
{
	await_n = n;
	snprintf(await_what[0], sizeof(await_what[0]), "%s", first ? first : "");
	snprintf(await_what[1], sizeof(await_what[1]), "%s", second ? second : "");
}

int main(void)
{
	struct xc_opts o = { .report = t_capture, .stuck_ms = 100 };
	struct xc_stats st;
	int cpus[CPU_SETSIZE];
	char want[160], want2[160];

	CHECK_RET(xc_init(&o), 0);
	if (t_cpus(cpus) < 2) {
		xc_exit();
		t_skip("needs 2 CPUs");
	}
	/* it runs until it was reported twice, and once as the call that CPU runs */
	snprintf(want, sizeof(want), "CPU %d is running call stuck_test_slow_fn for at least ", cpus[1]);
	await_set(2, "stuck call:", want);
	CHECK_RET(xc_call_single(cpus[1], stuck_test_slow_fn, (void *)800L, XC_WAIT), 0);
	snprintf(want, sizeof(want), "stuck call: thread %ld has waited", (long)gettid());
	CHECK_REPORTS(t_reported(want));
	snprintf(want, sizeof(want), "for stuck_test_slow_fn(0x320) on CPU %d; CPU %d is running call stuck_test_slow_fn for",
		 cpus[1], cpus[1]);
	CHECK_REPORTS(t_reported(want));
	/* 100 ms, then 200 ms later: the function waited for both */
	CHECK_REPORTS(count("stuck call:") >= 2);
	snprintf(want, sizeof(want), "unstuck call: thread %ld waited", (long)gettid());
	CHECK_REPORTS(t_reported(want));
	CHECK_REPORTS(count("unstuck call:") == 1);
	CHECK_RET(xc_stats_get(cpus[1], &st), 0);
	CHECK(st.stuck_reports >= 2);

	snprintf(want, sizeof(want), "CPU %d is running call stuck_test_slow_fn for at least ", cpus[1]);
	CHECK_REPORTS(t_reported(want));

	/* a work item is named with its age, also once a call nested in it has returned */
	struct xc_work w = { .fn = stuck_test_slow_work };

	t_clear_reports();
	snprintf(want, sizeof(want), "CPU %d is running work item stuck_test_slow_work for ", cpus[1]);
	await_set(1, want, NULL);	/* the item runs until a waiter reports it */
	CHECK_RET(xc_queue_work(cpus[1], &w), 0);
	CHECK_RET(xc_call_single(cpus[1], nested_call, NULL, 0), 0);
	atomic_store(&go, 1);
	while (!atomic_load(&polled))
		t_sleep_ms(1);
	CHECK_RET(xc_call_single(cpus[1], quick, NULL, XC_WAIT), 0);
	snprintf(want, sizeof(want), "CPU %d is running work item stuck_test_slow_work for ", cpus[1]);
	CHECK_REPORTS(t_reported(want));
	CHECK_REPORTS(!t_reported("for at least"));

	/* a worker that waits is reported as its CPU */
	t_clear_reports();
	snprintf(want, sizeof(want), "stuck call: CPU %d has waited", cpus[0]);
	await_set(1, want, NULL);
	CHECK_RET(xc_call_single(cpus[0], stuck_test_from_worker, &cpus[1], XC_WAIT), 0);
	snprintf(want, sizeof(want), "stuck call: CPU %d has waited", cpus[0]);
	CHECK_REPORTS(t_reported(want));
	snprintf(want, sizeof(want), "unstuck call: CPU %d waited", cpus[0]);
	CHECK_REPORTS(t_reported(want));

	/* a call to several CPUs names each target and bounds each one's call */
	cpu_set_t two;

	CPU_ZERO(&two);
	CPU_SET(cpus[0], &two);
	CPU_SET(cpus[1], &two);
	t_clear_reports();
	/* each runs until both were reported running: a later report does, if the first came too early */
	snprintf(want, sizeof(want), "on 2 CPUs; CPU %d is running call stuck_test_slow_fn for at least ",
		 cpus[0]);
	snprintf(want2, sizeof(want2), "; CPU %d is running call stuck_test_slow_fn for at least ", cpus[1]);
	await_set(1, want, want2);
	CHECK_RET(xc_call_many(&two, stuck_test_slow_fn, (void *)800L, XC_WAIT), 2);
	CHECK_REPORTS(t_reported(want));
	CHECK_REPORTS(t_reported(want2));

	/*
	 * A run of nowait calls from one thread: the report names the call of
	 * the run that is running, not the run's first. The waiting call goes
	 * behind them in the same ring.
	 */
	t_clear_reports();
	snprintf(want, sizeof(want), "CPU %d is running call stuck_test_late_fn for at least ", cpus[1]);
	await_set(1, want, NULL);
	atomic_store(&hold, 1);
	CHECK_RET(xc_call_single(cpus[1], holding, NULL, 0), 0);
	CHECK_RET(xc_call_single(cpus[1], quick, NULL, 0), 0);
	CHECK_RET(xc_call_single(cpus[1], stuck_test_late_fn, NULL, 0), 0);
	atomic_store(&hold, 0);
	CHECK_RET(xc_call_single(cpus[1], quick, NULL, XC_WAIT), 0);
	CHECK_REPORTS(t_reported(want));
	CHECK_RET(xc_exit(), 0);

	/*
	 * A worker that polls forever runs the slot's call on its straight
	 * path, which notes no activity: the report still names the call.
	 */
	o.poll_ns = XC_POLL_FOREVER;
	t_clear_reports();
	CHECK_RET(xc_init(&o), 0);
	/* in its idle poll, where it stays: not still on its way there from the task loop */
	WAIT_UNTIL(atomic_load(&xc_cpus[cpus[1]].mbox.idle) == XC_IDLE_POLLING);
	snprintf(want, sizeof(want), "CPU %d is running call stuck_test_slow_fn for at least ", cpus[1]);
	await_set(2, "stuck call:", want);
	CHECK_RET(xc_call_single(cpus[1], stuck_test_slow_fn, (void *)800L, XC_WAIT), 0);
	CHECK_REPORTS(t_reported(want));
	CHECK_RET(xc_exit(), 0);
	o.poll_ns = XC_POLL_ADAPTIVE;

	/* off: silence */
	o.stuck_ms = XC_STUCK_OFF;
	t_clear_reports();
	await_set(0, NULL, NULL);	/* 250 ms, and nothing to say */
	CHECK_RET(xc_init(&o), 0);
	CHECK_RET(xc_call_single(cpus[1], stuck_test_slow_fn, (void *)250L, XC_WAIT), 0);
	CHECK_REPORTS(count("stuck call:") == 0);
	CHECK_RET(xc_exit(), 0);
	return T_PASS;
}
