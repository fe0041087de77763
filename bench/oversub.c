/* SPDX-License-Identifier: MIT */
/*
 * oversub.c - are there fewer real CPUs than workers? A worker that polls
 * forever owns its CPU; when the hypervisor runs the vCPU elsewhere (steal
 * time) or a CPU quota caps the process below its CPU count, pollers take
 * turns with the threads that would answer them, and every time measured is
 * a scheduler's time slice, not a call. The quota and the hypervisor are
 * read once, before the first case; steal is measured over each
 * subcommand's own run, so that starting costs nothing.
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

static unsigned long long run_steal0, run_total0;     /* /proc/stat at the run's start */
static bool run_measuring;

void oversub_begin(int workers)
{
	run_measuring = !read_steal(&run_steal0, &run_total0);
	if (g_oversub.checked)
		return;
	g_oversub.checked = true;
	g_oversub.workers = workers;
	g_oversub.steal_pct = -1;
	g_oversub.quota_cpus = read_quota();
	if (g_out.quiet)
		return;
	if (!strcmp(machine_get()->hypervisor, "QEMU-TCG"))
		fprintf(stderr, "xcall-bench: warning: the CPUs are emulated (QEMU TCG): counts hold, "
			"times do not\n");
	if (g_oversub.quota_cpus > 0 && g_oversub.quota_cpus < workers)
		fprintf(stderr, "xcall-bench: warning: the cgroup's CPU quota is %.2f CPUs for %d workers: "
			"polling workers will be throttled in turn (times are the quota's periods)\n",
			g_oversub.quota_cpus, workers);
}

void oversub_end(const char *cmd)
{
	unsigned long long s, t;
	if (!run_measuring || read_steal(&s, &t) || t <= run_total0)
		return;
	run_measuring = false;
	double pct = 100.0 * (double)(s - run_steal0) / (double)(t - run_total0);
	/* the results file keeps the worst run's */
	if (pct > g_oversub.steal_pct)
		g_oversub.steal_pct = pct;
	if (pct >= 2 && !g_out.quiet)
		fprintf(stderr, "xcall-bench %s: warning: %.0f%% of CPU time was stolen by the hypervisor "
			"during the run: the vCPUs share real CPUs, so a polling worker waited for its vCPU "
			"to run (times are time slices; --poll adaptive yields, forever does not)\n",
			cmd, pct);
}
