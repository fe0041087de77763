/* SPDX-License-Identifier: MIT */
/*
 * trace.h - event tracing, the user-space counterpart of the kernel's ipi: and
 * csd: tracepoints. Each worker records into its CPU's ring and each calling
 * thread into its own: one writer per ring, so recording takes no lock and
 * no atomic read-modify-write. Rings are fixed-size and overwrite their
 * oldest events, counting what they dropped; nothing ever blocks.
 *
 * Off, every trace point costs one predictable branch on xc_tracing.
 */
#ifndef XC_TRACE_H
#define XC_TRACE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

enum xc_ev_type {
	XC_EV_QUEUE = 1,	/* a call queued: flow start; other = target CPU */
	XC_EV_KICK_SENT,	/* futex wake sent; other = target */
	XC_EV_KICK_ELIDED,	/* target polling or running; other = target */
	XC_EV_KICK_COALESCED,	/* queue was not empty; other = target */
	XC_EV_FREE_RIDE,	/* a wakeup was under way; other = target */
	XC_EV_KICK_SIGNAL,	/* urgent: signal to a busy worker; other = target */
	XC_EV_CALL_ENTRY,	/* flow end; other = caller CPU (-1 a thread) */
	XC_EV_CALL_EXIT,
	XC_EV_URGENT_ENTRY,	/* an urgent call, in the signal handler or idle loop */
	XC_EV_URGENT_EXIT,
	XC_EV_WORK_QUEUE,	/* other = target */
	XC_EV_WORK_ENTRY,	/* other = queueing CPU */
	XC_EV_WORK_EXIT,
	XC_EV_SLEEP,		/* the worker blocks on its futex */
	XC_EV_WAKE,		/* ... and is back */
	XC_EV_OFFLINE,		/* the worker drained and parks */
	XC_EV_ONLINE,		/* the worker leaves park */
	XC_EV_NR
};

extern _Atomic bool xc_tracing;

/* relaxed: a flag; a call racing xc_exit may still read true and records into its own thread's ring */
static inline bool xc_tracing_on(void)
{
	return atomic_load_explicit(&xc_tracing, memory_order_relaxed);
}

void xc_trace_record(unsigned type, int other, uint32_t flow, const void *fn);
uint32_t xc_trace_flow_new(void);
int xc_trace_start(void);
void xc_trace_stop(void);
uint64_t xc_trace_drops(int cpu);
/* xc_trace_dump() from inside libxcall (xc_exit writes xc_opts.trace_file) */
int xc_trace_write(const char *path);
void xc_trace_thread_exit(void);
void xc_trace_fork_prepare(void);
void xc_trace_fork_parent(void);
void xc_trace_fork_child(void);

static inline void xc_trace(unsigned type, int other, uint32_t flow, const void *fn)
{
	if (__builtin_expect(xc_tracing_on(), 0))
		xc_trace_record(type, other, flow, fn);
}

static inline uint32_t xc_trace_flow(void)
{
	return __builtin_expect(xc_tracing_on(), 0) ? xc_trace_flow_new() : 0;
}

#endif /* XC_TRACE_H */
