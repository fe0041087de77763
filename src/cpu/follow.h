/* SPDX-License-Identifier: MIT */
/*
 * follow.h - the worker follows the OS when it takes its CPU away (follow.c): the
 * cheap check inline, the full check and the way back
 */
#ifndef XC_FOLLOW_H
#define XC_FOLLOW_H

#include "base/internal.h"

/*
 * Where the thread has no rseq area, sched_getcpu(), and no word to read.
 * The counting build (bench/tools/count_hook.h) puts its own here: valgrind
 * registers no rseq area, and the syscall would stand in the count for the
 * one load it costs.
 */
#ifndef XC_RUNNING_CPU_NO_RSEQ
#define XC_RUNNING_CPU_NO_RSEQ() sched_getcpu()
#define XC_RUNNING_CPU_WORD_NO_RSEQ() ((const volatile int *)NULL)
#endif

#ifdef XC_HAVE_RSEQ
/* The rseq area's cpu_id: where the kernel keeps the thread's CPU (volatile: it rewrites it when it moves the thread). */
static inline const volatile int *xc_rseq_cpu_word(void)
{
	const struct rseq *rs = (const struct rseq *)((const char *)__builtin_thread_pointer() + __rseq_offset);

	return (const volatile int *)&rs->cpu_id;
}
#endif

/* The CPU the calling thread runs on now: the rseq area's cpu_id, else XC_RUNNING_CPU_NO_RSEQ(). */
static inline int xc_running_cpu(void)
{
#ifdef XC_HAVE_RSEQ
	if (xc_likely(__rseq_size > 0)) {
		int cpu = *xc_rseq_cpu_word();

		if (xc_likely(cpu >= 0))
			return cpu;
	}
#endif
	return XC_RUNNING_CPU_NO_RSEQ();
}

/* The word to read for it again and again (a run of calls), or NULL where there is none. */
static inline const volatile int *xc_running_cpu_word(void)
{
#ifdef XC_HAVE_RSEQ
	if (xc_likely(__rseq_size > 0))
		return xc_rseq_cpu_word();
#endif
	return XC_RUNNING_CPU_WORD_NO_RSEQ();
}

/* follow.c: the cheap check, whether @c's worker runs on another CPU now. */
static inline bool xc_os_elsewhere(const struct xc_cpu *c)
{
	return xc_rt.cfg.follow_os && xc_unlikely(xc_running_cpu() != c->cpu);
}

/* A run ended on another CPU, or the worker runs on one now: time for the full check. */
static inline bool xc_os_suspect(struct xc_cpu *c)
{
	/* relaxed: set by this thread (xc_os_after_run) */
	return atomic_load_explicit(&c->os_recheck, memory_order_relaxed) || xc_os_elsewhere(c);
}

/* A run ended on another CPU: count it, and have the task loop look (xc_os_check). */
static inline void xc_os_displaced(struct xc_cpu *c)
{
	xc_stat_inc_shared(&c->displaced);
	/* relaxed: read by this same thread's task loop */
	atomic_store_explicit(&c->os_recheck, true, memory_order_relaxed);
}

/* After a call's function or a work item returned on @c's worker: count a run that ended elsewhere. */
static inline void xc_os_after_run(struct xc_cpu *c)
{
	if (xc_os_elsewhere(c))
		xc_os_displaced(c);
}

/*
 * The same check for a run of calls, set up once (xc_os_run_word) and one
 * load a call: the word to compare with @c's CPU after each call. @c's own
 * number where the worker does not follow the OS (it never differs); where
 * the thread has no word to read, one that always differs, so that each
 * call asks xc_os_after_run(), which finds the CPU its own way.
 */
static inline const volatile int *xc_os_run_word(const struct xc_cpu *c)
{
	static const int unknown = -1;
	const volatile int *word;

	if (!xc_rt.cfg.follow_os)
		return (const volatile int *)&c->cpu;
	word = xc_running_cpu_word();
	return word ? word : &unknown;
}

static inline void xc_os_after_run_at(struct xc_cpu *c, const volatile int *word)
{
	if (xc_unlikely(*word != c->cpu))
		xc_os_after_run(c);
}

#define XC_OS_WATCH_NS      100000000L	/* a sleeping worker looks at its CPU this often */
#define XC_OS_PARK_WATCH_NS  50000000L	/* a parked one, for its CPU's return */
int xc_pin_self(int cpu);
bool xc_os_check(struct xc_cpu *c);
bool xc_os_come_back(struct xc_cpu *c);
bool xc_os_cpu_offline(int cpu);
const char *xc_taken_name(int taken);

/*
 * One line of /proc/self/cgroup, split in place: the cpuset's cgroup if it is
 * v1 "N:ctrl,...:/path" with cpuset one of the comma-separated controllers
 * (controllers mounted together share a line: "3:cpuset,cpu,cpuacct:/p"), or
 * v2's "0::/path". XC_CGROUP_V1 or XC_CGROUP_V2, with @ctrls the controller
 * list ("" under v2) and @path the cgroup ("" for the root); else
 * XC_CGROUP_NONE, @ctrls and @path untouched.
 */
enum { XC_CGROUP_NONE = 0, XC_CGROUP_V1, XC_CGROUP_V2 };
int xc_cgroup_cpuset_line(char *line, const char **ctrls, const char **path);

#endif /* XC_FOLLOW_H */
