/* SPDX-License-Identifier: MIT */
/*
 * follow.h - what the tests of a CPU taken by the OS share (follow-affinity,
 * follow-cpuset, follow-hotplug): the report lines the library wrote, kept
 * under a lock (workers write them) and echoed to stdout (shown when a test
 * fails); whether a CPU is online in libxcall; whether every worker is pinned
 * to exactly its CPU; a thread that keeps calling the CPU taken away.
 */
#ifndef XC_TEST_FOLLOW_H
#define XC_TEST_FOLLOW_H

#include "reports.h"
#include "base/internal.h"
#include <stdatomic.h>

/* The report hook (xc_opts.report): each line printed as well, for the test's log. */
static inline void f_capture(void *ctx, const char *line)
{
	printf("report: %s\n", line);
	fflush(stdout);
	t_capture(ctx, line);
}

static inline bool f_cpu_online(int cpu)
{
	cpu_set_t s;

	return xc_online_mask(&s) >= 0 && CPU_ISSET(cpu, &s);
}

/* Every worker of @cpus has exactly its own CPU as affinity. */
static inline bool f_all_pinned(const int *cpus, int n)
{
	for (int i = 0; i < n; i++) {
		cpu_set_t m;

		CHECK(sched_getaffinity(xc_cpus[cpus[i]].life.tid, sizeof(m), &m) == 0);
		if (CPU_COUNT(&m) != 1 || !CPU_ISSET(cpus[i], &m))
			return false;
	}
	return true;
}

/*
 * The calling thread of the tests: waiting calls to f_target in a loop until
 * f_stop, counting -ENXIO answers, and runs that found themselves on another
 * CPU than f_target.
 */
static int f_target;
static _Atomic int f_stop, f_phase_calls;
static _Atomic long f_wrong, f_enxio;

static inline void f_where(void *arg)
{
	if (sched_getcpu() != f_target)
		atomic_fetch_add(&f_wrong, 1);
}

static inline void *f_caller(void *arg)
{
	while (!atomic_load(&f_stop)) {
		int r = xc_call_single(f_target, f_where, NULL, XC_WAIT);

		if (r == -ENXIO)
			atomic_fetch_add(&f_enxio, 1);
		else
			CHECK_RET(r, 0);
		atomic_fetch_add(&f_phase_calls, 1);
	}
	return NULL;
}

/* Wait until the calling thread made a hundred more calls (answered either way). */
static inline void f_calls_go_on(void)
{
	int n = atomic_load(&f_phase_calls);

	WAIT_UNTIL(atomic_load(&f_phase_calls) > n + 100);
}

static inline uint64_t f_displaced(void)
{
	struct xc_stats st;

	CHECK_RET(xc_stats_get(f_target, &st), 0);
	return st.displaced;
}

/*
 * After the OS was told to take f_target while f_caller runs: the CPU goes
 * offline in libxcall with the report "offline: @why", every run that ended
 * on a wrong CPU so far is counted displaced, later calls get -ENXIO and none
 * runs anywhere, and xc_cpu_online refuses it. Returns the wrong-CPU runs at
 * detection, which must not grow after it.
 */
static inline long f_check_taken(const char *why)
{
	char want[160];
	long wrong_at_detection;

	WAIT_UNTIL(!f_cpu_online(f_target));
	snprintf(want, sizeof(want), "CPU %d: offline: %s", f_target, why);
	WAIT_UNTIL(t_reported(want));
	wrong_at_detection = atomic_load(&f_wrong);
	CHECK((uint64_t)wrong_at_detection <= f_displaced());
	WAIT_UNTIL(atomic_load(&f_enxio) > 10);
	CHECK(atomic_load(&f_wrong) == wrong_at_detection);	/* nothing runs after detection */
	CHECK_RET(xc_cpu_online(f_target), -ENXIO);
	return wrong_at_detection;
}

/*
 * The OS gave f_target back while the user held it offline: once the worker
 * says it is back, the CPU stays offline, refuses calls, and opens on request.
 */
static inline void f_check_user_offline_kept(void)
{
	char want[64];

	snprintf(want, sizeof(want), "CPU %d: back", f_target);
	WAIT_UNTIL(t_reported(want));
	CHECK(!f_cpu_online(f_target));
	CHECK_RET(xc_call_single(f_target, f_where, NULL, XC_WAIT), -ENXIO);
	CHECK_RET(xc_cpu_online(f_target), 0);
	CHECK_RET(xc_call_single(f_target, f_where, NULL, XC_WAIT), 0);
}

#endif
