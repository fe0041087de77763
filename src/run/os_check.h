/* SPDX-License-Identifier: MIT */
/*
 * os_check.h - the cheap check after each run of a call or work item:
 * whether the OS moved the worker off its CPU meanwhile (the rseq area's
 * cpu_id, one load). A run that ended elsewhere is counted displaced, and
 * the task loop then runs the full check, which follows the OS
 * (cpu/follow.c).
 */
#ifndef XC_OS_CHECK_H
#define XC_OS_CHECK_H

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

/* The cheap check, whether @c's worker runs on another CPU now. */
static inline bool xc_os_elsewhere(const struct xc_cpu *c)
{
	return xc_rt.cfg.follow_os && xc_unlikely(xc_running_cpu() != c->life.cpu);
}

/* A run ended on another CPU, or the worker runs on one now: time for the full check. */
static inline bool xc_os_suspect(struct xc_cpu *c)
{
	/* relaxed: set by this thread (xc_os_after_run) */
	return atomic_load_explicit(&c->worker.os_recheck, memory_order_relaxed) || xc_os_elsewhere(c);
}

/* A run ended on another CPU: count it, and have the task loop look (xc_os_check, cpu/follow.c). */
static inline void xc_os_displaced(struct xc_cpu *c)
{
	xc_stat_inc_shared(&c->worker.displaced);
	/* relaxed: read by this same thread's task loop */
	atomic_store_explicit(&c->worker.os_recheck, true, memory_order_relaxed);
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
		return (const volatile int *)&c->life.cpu;
	word = xc_running_cpu_word();
	return word ? word : &unknown;
}

static inline void xc_os_after_run_at(struct xc_cpu *c, const volatile int *word)
{
	if (xc_unlikely(*word != c->life.cpu))
		xc_os_after_run(c);
}

#endif /* XC_OS_CHECK_H */
