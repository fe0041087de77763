/* SPDX-License-Identifier: MIT */
/*
 * follow.h - what the tests of a CPU taken by the OS share (follow-affinity,
 * follow-cpuset, follow-hotplug): the report lines the library wrote, kept
 * under a lock (workers write them) and echoed to stdout (shown when a test
 * fails); whether a CPU is online in libxcall; whether every worker is pinned
 * to exactly its CPU.
 */
#ifndef XC_TEST_FOLLOW_H
#define XC_TEST_FOLLOW_H

#include "test.h"
#include "internal.h"
#include <pthread.h>

static char f_reports[16384];
static pthread_mutex_t f_rep_lock = PTHREAD_MUTEX_INITIALIZER;

/* The report hook (xc_opts.report). */
static inline void f_capture(const char *line)
{
	printf("report: %s\n", line);
	fflush(stdout);
	pthread_mutex_lock(&f_rep_lock);
	if (strlen(f_reports) + strlen(line) + 2 < sizeof(f_reports)) {
		strcat(f_reports, line);
		strcat(f_reports, "\n");
	}
	pthread_mutex_unlock(&f_rep_lock);
}

static inline bool f_reported(const char *what)
{
	bool found;

	pthread_mutex_lock(&f_rep_lock);
	found = strstr(f_reports, what) != NULL;
	pthread_mutex_unlock(&f_rep_lock);
	return found;
}

static inline void f_clear_reports(void)
{
	pthread_mutex_lock(&f_rep_lock);
	f_reports[0] = 0;
	pthread_mutex_unlock(&f_rep_lock);
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

		CHECK(sched_getaffinity(xc_cpus[cpus[i]].tid, sizeof(m), &m) == 0);
		if (CPU_COUNT(&m) != 1 || !CPU_ISSET(cpus[i], &m))
			return false;
	}
	return true;
}

#endif
