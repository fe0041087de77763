// SPDX-License-Identifier: MIT
/*
 * follow.c - the worker follows the OS when it takes the worker's CPU away.
 *
 * A worker runs its CPU's calls on that CPU and nowhere else. The OS can take
 * the CPU from under it three ways, and tells the process of none:
 *   - hotplug (echo 0 > /sys/devices/system/cpu/cpuN/online): the kernel
 *     moves the thread to another CPU and widens its affinity;
 *   - an affinity change from outside (taskset -a -p, sched_setaffinity on
 *     the worker's thread id);
 *   - a cpuset that shrinks: the kernel rewrites the thread's affinity.
 *
 * Detection comes at two costs.
 *   The cheap check, xc_os_elsewhere() (internal.h): the CPU the thread runs
 *   on, one load from the rseq area that the kernel rewrites whenever it
 *   moves the thread. Before each batch of calls and each work item (task
 *   loop), in the idle poll (ready_idle, and before a slot call), after each
 *   wake, and after each call's function and work item, so that a run that
 *   happened elsewhere is counted (xc_stats.displaced).
 *   The full check, xc_os_check(): the thread's affinity mask, one syscall.
 *   When the cheap check fails, and once per watch period while the worker
 *   sleeps (XC_OS_WATCH_NS) or is parked (XC_OS_PARK_WATCH_NS): a sleeping
 *   worker is not woken when its CPU goes, and a lost pin (its affinity
 *   widened back to the process's mask by `taskset -a -p`) moves nothing.
 *   A periodic check in the worker itself costs a sleeping worker one timed
 *   wake and one syscall per period and nothing else, needs no thread of its
 *   own, and bounds both detection and return; no notification exists for
 *   affinity or cpuset changes, and uevents would cover hotplug only.
 *
 * The full check's verdict, on the thread's own mask (/proc: the syscall
 * hides CPUs that are going down):
 *   mask == {cpu}, cpu active        pinned: nothing to do (the one-syscall case);
 *   mask == {cpu}, cpu not active    taken: the CPU is on its way offline;
 *   mask holds cpu and other CPUs    a lost pin: pin again; if the OS refuses
 *                                    (cpu offline, or outside the cpuset), taken;
 *   mask without cpu                 taken: someone with the right to do so
 *                                    wants the thread elsewhere, and the worker
 *                                    never pins itself against such a mask.
 *
 * An attached thread (attach.c) is the application's: a lost pin is not
 * pinned again but taken (affinity), and it comes back once the application
 * pins the thread there again. Its checks run in xc_poll().
 *
 * Response (worker.c, cpu_taken): a taken CPU goes offline in libxcall as
 * hotplug does. Its worker closes its queues and runs, wherever it now is,
 * what was queued before (counted displaced), reports it in one line, and
 * parks. Coming back: the parked worker runs the full check each park
 * watch period; once its mask holds its CPU again and the OS lets it pin
 * there, the CPU is back, and online again unless the user took it offline
 * (xc_os_come_back).
 */
#include "base/internal.h"
#include "cpu/follow.h"
#include "base/topology.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int xc_pin_self(int cpu)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return -pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
}

/*
 * One line of /proc/self/cgroup, split in place (see follow.h). The v1
 * controller list names the hierarchy's mount directory too.
 */
int xc_cgroup_cpuset_line(char *line, const char **ctrls, const char **path)
{
	char *p = strchr(line, ':'), *q = p ? strchr(p + 1, ':') : NULL;
	int kind = XC_CGROUP_NONE;

	if (!q)
		return kind;
	*strchrnul(q, '\n') = 0;
	*q = 0;
	if (q == p + 1 && p - line == 1 && line[0] == '0')
		kind = XC_CGROUP_V2;	/* "0::": the unified hierarchy, no controller list */
	for (const char *c = p + 1; *c && !kind; ) {
		size_t n = strcspn(c, ",");

		if (n == 6 && !strncmp(c, "cpuset", 6))
			kind = XC_CGROUP_V1;
		c += n + (c[n] == ',');
	}
	if (kind) {
		*ctrls = p + 1;
		*path = strcmp(q + 1, "/") ? q + 1 : "";
	}
	return kind;
}

/*
 * The cgroup cpuset's effective CPUs, from /proc/self/cgroup (v1
 * "N:cpuset,...:/p" or v2 "0::/p"): the first such cgroup whose files read;
 * its path goes to @dir ("" for the root) and its version to @is_v1. A v1
 * cpuset is mounted at cpuset/, or (mounted with other controllers) at the
 * directory its controller list names, e.g. cpuset,cpu/. 0 or -errno.
 */
static int cpuset_cpus(cpu_set_t *out, char *dir, size_t size, bool *is_v1)
{
	static const char *const v1_files[] = { "cpuset.effective_cpus", "cpuset.cpus", NULL };
	static const char *const v2_files[] = { "cpuset.cpus.effective", NULL };
	char line[512], path[1024], mounts[2][256];
	FILE *f = fopen("/proc/self/cgroup", "re");
	int ret = -ENOENT;

	if (!f)
		return ret;
	while (ret && fgets(line, sizeof(line), f)) {
		const char *ctrls, *cg;
		int kind = xc_cgroup_cpuset_line(line, &ctrls, &cg), nr_mounts = 2;

		if (!kind)
			continue;
		*is_v1 = kind == XC_CGROUP_V1;
		snprintf(dir, size, "%s", cg);
		if (*is_v1) {
			snprintf(mounts[0], sizeof(mounts[0]), "/sys/fs/cgroup/cpuset");
			snprintf(mounts[1], sizeof(mounts[1]), "/sys/fs/cgroup/%s", ctrls);
			nr_mounts = strcmp(ctrls, "cpuset") ? 2 : 1;
		} else {
			snprintf(mounts[0], sizeof(mounts[0]), "/sys/fs/cgroup");
			snprintf(mounts[1], sizeof(mounts[1]), "/sys/fs/cgroup/unified");
		}
		for (int m = 0; m < nr_mounts && ret; m++)
			for (const char *const *file = *is_v1 ? v1_files : v2_files; *file && ret; file++) {
				snprintf(path, sizeof(path), "%s%s/%s", mounts[m], dir, *file);
				ret = xc_sysfs_cpulist(path, out);
			}
	}
	fclose(f);
	return ret;
}

/*
 * v2: whether @cpu is in every cpuset.cpus configured from the root cgroup
 * down to @dir (an empty one inherits). Then an effective set without it was
 * not shrunk by anyone: hotplug takes a CPU out of the effective sets before
 * it clears it from the online mask. False under v1, whose files cannot tell.
 */
static bool cpuset_configured_holds(int cpu, const char *dir, bool is_v1)
{
	char path[700];
	cpu_set_t set;

	if (is_v1)
		return false;
	for (const char *end = dir; *end; ) {
		end = strchrnul(end + 1, '/');
		snprintf(path, sizeof(path), "/sys/fs/cgroup%.*s/cpuset.cpus", (int)(end - dir), dir);
		if (!xc_sysfs_cpulist(path, &set) && CPU_COUNT(&set) && !CPU_ISSET(cpu, &set))
			return false;
	}
	return true;
}

/*
 * The calling thread's own affinity as the kernel keeps it. sched_getaffinity()
 * leaves out CPUs that are not active, so while a CPU goes offline it cannot
 * tell that from an affinity that lost the CPU; /proc shows the mask itself.
 */
static int raw_affinity(cpu_set_t *out)
{
	char line[4096];
	FILE *f = fopen("/proc/thread-self/status", "re");
	int ret = -ENOENT;

	if (!f)
		return ret;
	while (ret && fgets(line, sizeof(line), f))
		if (!strncmp(line, "Cpus_allowed_list:", 18)) {
			char *l = line + 18;

			l += strspn(l, " \t");
			l[strcspn(l, "\n")] = 0;
			ret = xc_cpulist_parse(l, out);
		}
	fclose(f);
	return ret;
}

/* Why @cpu is not the worker's any more; @refused: the OS refused to pin the worker there. */
static int taken_reason(int cpu, bool refused)
{
	cpu_set_t set;
	char dir[512];
	bool is_v1;

	if (!xc_sysfs_cpulist("/sys/devices/system/cpu/online", &set) && !CPU_ISSET(cpu, &set))
		return XC_TAKEN_OFFLINE;
	if (!cpuset_cpus(&set, dir, sizeof(dir), &is_v1) && !CPU_ISSET(cpu, &set))
		return cpuset_configured_holds(cpu, dir, is_v1) ? XC_TAKEN_OFFLINE : XC_TAKEN_CPUSET;
	/* refused though online and in the cpuset: on its way down (online is cleared last) */
	return refused ? XC_TAKEN_OFFLINE : XC_TAKEN_AFFINITY;
}

/* Whether the OS has @cpu offline now (sysfs). */
bool xc_os_cpu_offline(int cpu)
{
	cpu_set_t online;

	return !xc_sysfs_cpulist("/sys/devices/system/cpu/online", &online) && !CPU_ISSET(cpu, &online);
}

const char *xc_taken_name(int taken)
{
	switch (taken) {
	case XC_TAKEN_OFFLINE:	return "the OS took it offline";
	case XC_TAKEN_CPUSET:	return "its cpuset no longer holds it";
	case XC_TAKEN_AFFINITY:	return "the worker's affinity was changed from outside";
	default:		return "not taken";
	}
}

/*
 * Pinned (again): XC_TAKEN_NONE; else why the CPU is taken. @widened says
 * whether the mask held the CPU among others (a lost pin, pinned again).
 */
static int check_mask(struct xc_cpu *c, bool *widened)
{
	cpu_set_t mask;
	bool refused, active;

	*widened = false;
	if (sched_getaffinity(0, sizeof(mask), &mask))
		return XC_TAKEN_NONE;	/* cannot tell: keep going */
	if (CPU_ISSET(c->life.cpu, &mask) && CPU_COUNT(&mask) == 1)
		return XC_TAKEN_NONE;	/* the common answer: one syscall */
	active = CPU_ISSET(c->life.cpu, &mask);	/* the syscall's mask holds active CPUs only */
	raw_affinity(&mask);		/* else the mask above is the best there is */
	if (!CPU_ISSET(c->life.cpu, &mask))
		return taken_reason(c->life.cpu, false);
	if (CPU_COUNT(&mask) == 1) {
		refused = true;		/* pinned there, yet the CPU is not active: going down */
	} else if (c->life.attached) {
		/* an application's thread, never pinned by us: an inactive CPU is on its way down */
		return taken_reason(c->life.cpu, !active);
	} else {
		*widened = true;
		refused = xc_pin_self(c->life.cpu) != 0;
	}
	return refused ? taken_reason(c->life.cpu, true) : XC_TAKEN_NONE;
}

/*
 * xc_os_check() - the full check, by @c's worker in task context (it may
 * report). Pins the worker again after a lost pin. Returns whether the CPU
 * is taken; then c->taken holds why, until the worker is back on it.
 */
bool xc_os_check(struct xc_cpu *c)
{
	bool widened;
	int taken = check_mask(c, &widened);

	if (taken == XC_TAKEN_NONE) {
		/* relaxed: the worker alone writes it; a CPU given back while parked is not taken now */
		if (atomic_load_explicit(&c->life.taken, memory_order_relaxed) != XC_TAKEN_NONE)
			atomic_store_explicit(&c->life.taken, XC_TAKEN_NONE, memory_order_relaxed);
		if (widened)
			xc_report("CPU %d: its worker's affinity had been widened; pinned to CPU %d again",
				  c->life.cpu, c->life.cpu);
		return false;
	}
	/* relaxed: a hint for xc_cpu_online (-ENXIO); the worker alone writes it */
	atomic_store_explicit(&c->life.taken, taken, memory_order_relaxed);
	return true;
}

/*
 * xc_os_come_back() - a parked worker whose CPU was taken: true once it is
 * pinned there again (c->taken cleared). Reports it.
 */
bool xc_os_come_back(struct xc_cpu *c)
{
	bool widened;
	int was = atomic_load_explicit(&c->life.taken, memory_order_relaxed);

	if (check_mask(c, &widened) != XC_TAKEN_NONE)
		return false;
	atomic_store_explicit(&c->life.taken, XC_TAKEN_NONE, memory_order_relaxed);
	xc_report("CPU %d: back (%s before); its worker is pinned there again", c->life.cpu,
		  xc_taken_name(was));
	return true;
}
