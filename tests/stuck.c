/*
 * stuck: a waiting call whose function takes longer than stuck_ms is
 * reported through the report hook, naming the waiter, the target CPU, the
 * function and what that CPU is running (a call: for at least how long, as
 * far as the waiter could tell; a work item: for how long, also after a call
 * nested in it through xc_poll() has returned; for a call to several CPUs,
 * each of the first ones); the reports repeat while it stays stuck and an
 * "unstuck" line follows when it completes; the stats count them. With
 * reports off, the same wait says nothing.
 */
#include "reports.h"
#include <stdatomic.h>

/* not static: the report names it through the dynamic symbol table */
void stuck_test_slow_fn(void *arg)
{
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
	t_sleep_ms(600);
}

static void quick(void *arg)
{
}

void stuck_test_from_worker(void *arg)
{
	CHECK_RET(xc_call_single(*(int *)arg, stuck_test_slow_fn, (void *)350L, XC_WAIT), 0);
}

static int count(const char *what)
{
	int n = 0;

	for (const char *p = t_reports; (p = strstr(p, what)); p++)
		n++;
	return n;
}

int main(void)
{
	struct xc_opts o = { .report = t_capture, .stuck_ms = 100 };
	struct xc_stats st;
	int cpus[CPU_SETSIZE];
	char want[160];

	CHECK_RET(xc_init(&o), 0);
	if (t_cpus(cpus) < 2) {
		xc_exit();
		t_skip("needs 2 CPUs");
	}
	CHECK_RET(xc_call_single(cpus[1], stuck_test_slow_fn, (void *)800L, XC_WAIT), 0);
	snprintf(want, sizeof(want), "stuck call: thread %ld has waited", (long)gettid());
	CHECK(strstr(t_reports, want) != NULL);
	snprintf(want, sizeof(want), "for stuck_test_slow_fn(0x320) on CPU %d; CPU %d is running call stuck_test_slow_fn for",
		 cpus[1], cpus[1]);
	CHECK(strstr(t_reports, want) != NULL);
	/* 100 ms, then 200 ms later: two reports by 300 ms, with room to spare under load */
	CHECK(count("stuck call:") >= 2);
	snprintf(want, sizeof(want), "unstuck call: thread %ld waited", (long)gettid());
	CHECK(strstr(t_reports, want) != NULL);
	CHECK(count("unstuck call:") == 1);
	CHECK_RET(xc_stats_get(cpus[1], &st), 0);
	CHECK(st.stuck_reports >= 2);

	snprintf(want, sizeof(want), "CPU %d is running call stuck_test_slow_fn for at least ", cpus[1]);
	CHECK(strstr(t_reports, want) != NULL);

	/* a work item is named with its age, also once a call nested in it has returned */
	struct xc_work w = { .fn = stuck_test_slow_work };

	t_clear_reports();
	CHECK_RET(xc_queue_work(cpus[1], &w), 0);
	CHECK_RET(xc_call_single(cpus[1], nested_call, NULL, 0), 0);
	atomic_store(&go, 1);
	while (!atomic_load(&polled))
		t_sleep_ms(1);
	CHECK_RET(xc_call_single(cpus[1], quick, NULL, XC_WAIT), 0);
	snprintf(want, sizeof(want), "CPU %d is running work item stuck_test_slow_work for ", cpus[1]);
	CHECK(strstr(t_reports, want) != NULL);
	CHECK(strstr(t_reports, "for at least") == NULL);

	/* a worker that waits is reported as its CPU */
	t_clear_reports();
	CHECK_RET(xc_call_single(cpus[0], stuck_test_from_worker, &cpus[1], XC_WAIT), 0);
	snprintf(want, sizeof(want), "stuck call: CPU %d has waited", cpus[0]);
	CHECK(strstr(t_reports, want) != NULL);
	snprintf(want, sizeof(want), "unstuck call: CPU %d waited", cpus[0]);
	CHECK(strstr(t_reports, want) != NULL);

	/* a call to several CPUs names each target and bounds each one's call */
	cpu_set_t two;

	CPU_ZERO(&two);
	CPU_SET(cpus[0], &two);
	CPU_SET(cpus[1], &two);
	t_clear_reports();
	/* 800 ms: a second report comes even if the first came before both calls started */
	CHECK_RET(xc_call_many(&two, stuck_test_slow_fn, (void *)800L, XC_WAIT), 2);
	snprintf(want, sizeof(want), "on 2 CPUs; CPU %d is running call stuck_test_slow_fn for at least ",
		 cpus[0]);
	CHECK(strstr(t_reports, want) != NULL);
	snprintf(want, sizeof(want), "; CPU %d is running call stuck_test_slow_fn for at least ", cpus[1]);
	CHECK(strstr(t_reports, want) != NULL);
	CHECK_RET(xc_exit(), 0);

	/* off: silence */
	o.stuck_ms = XC_STUCK_OFF;
	t_clear_reports();
	CHECK_RET(xc_init(&o), 0);
	CHECK_RET(xc_call_single(cpus[1], stuck_test_slow_fn, (void *)250L, XC_WAIT), 0);
	CHECK(count("stuck call:") == 0);
	CHECK_RET(xc_exit(), 0);
	return T_PASS;
}
