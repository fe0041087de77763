/* SPDX-License-Identifier: MIT */
/*
 * oversub.c - are there fewer real CPUs than workers? A worker that polls
 * forever owns its CPU; when the hypervisor runs the vCPU elsewhere (steal
 * time) or a CPU quota caps the process below its CPU count, pollers take
 * turns with the threads that would answer them, and every time measured is
 * a scheduler's time slice, not a call. Checked once, before the first case.
 */
#include "bench.h"

#include <stdlib.h>
#include <string.h>

struct oversub g_oversub;

/* Steal and total jiffies of the "cpu" line of /proc/stat; -1 when unreadable. */
static int read_steal(unsigned long long *steal, unsigned long long *total)
{
	unsigned long long v[8] = {0};
	FILE *f = fopen("/proc/stat", "r");
	if (!f)
		return -1;
	int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		       &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n < 8)
		return -1;
	*steal = v[7];
	*total = 0;
	for (int i = 0; i < 8; i++)
		*total += v[i];
	return 0;
}

/* The cgroup's CPU quota in CPUs (cpu.max, or v1's cfs quota), 0 when there is none. */
static double read_quota(void)
{
	char line[128];
	FILE *f = fopen("/sys/fs/cgroup/cpu.max", "r");
	if (f) {
		double q = 0, p = 0;
		char word[32];
		if (fgets(line, sizeof(line), f) && sscanf(line, "%31s %lf", word, &p) == 2 &&
		    strcmp(word, "max") && p > 0)
			q = atof(word) / p;
		fclose(f);
		return q;
	}
	long q = -1, p = 0;
	f = fopen("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "r");
	if (f) {
		if (fscanf(f, "%ld", &q) != 1)
			q = -1;
		fclose(f);
	}
	f = fopen("/sys/fs/cgroup/cpu/cpu.cfs_period_us", "r");
	if (f) {
		if (fscanf(f, "%ld", &p) != 1)
			p = 0;
		fclose(f);
	}
	return q > 0 && p > 0 ? (double)q / (double)p : 0;
}

void oversub_check(int workers)
{
	if (g_oversub.checked)
		return;
	g_oversub.checked = true;
	g_oversub.workers = workers;
	unsigned long long s0, t0, s1, t1;
	g_oversub.steal_pct = -1;
	if (!read_steal(&s0, &t0)) {
		/* a tenth of a second: long enough for a few ticks on every CPU */
		struct timespec d = {0, 100000000};
		nanosleep(&d, NULL);
		if (!read_steal(&s1, &t1) && t1 > t0)
			g_oversub.steal_pct = 100.0 * (double)(s1 - s0) / (double)(t1 - t0);
	}
	g_oversub.quota_cpus = read_quota();
	if (g_out.quiet)
		return;
	if (g_oversub.steal_pct >= 2)
		fprintf(stderr, "xcall-bench: warning: %.0f%% of CPU time was stolen by the hypervisor over "
			"0.1 s: the vCPUs share real CPUs, so a polling worker waits for its vCPU to run "
			"(times are time slices; --poll adaptive yields, forever does not)\n",
			g_oversub.steal_pct);
	if (!strcmp(machine_get()->hypervisor, "QEMU-TCG"))
		fprintf(stderr, "xcall-bench: warning: the CPUs are emulated (QEMU TCG): counts hold, "
			"times do not\n");
	if (g_oversub.quota_cpus > 0 && g_oversub.quota_cpus < workers)
		fprintf(stderr, "xcall-bench: warning: the cgroup's CPU quota is %.2f CPUs for %d workers: "
			"polling workers will be throttled in turn (times are the quota's periods)\n",
			g_oversub.quota_cpus, workers);
}
