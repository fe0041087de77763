/* SPDX-License-Identifier: MIT */
/*
 * run.h - running calls on a worker: the bracket and bookkeeping of one call,
 * inline, and the runs of run.c
 */
#ifndef XC_RUN_H
#define XC_RUN_H

#include "base/internal.h"
#include "run/os_check.h"
#include "proto/wake.h"
#include "run/wait.h"
#include "run/stuck.h"
#include "base/trace.h"
#include "base/thread.h"

/*
 * Run one call's function on @c's worker, @from the CPU of its sender (-1:
 * not a worker): the part a waiter waits for, counted before its completion
 * so that a waiter that returns sees its call counted. The caller then
 * signals the completion, if any, and calls xc_call_ended() with the same
 * @outer: what is left is bookkeeping no waiter needs, kept off the round
 * trip (its activity's end, whether the OS moved the worker meanwhile).
 */
static inline void xc_call_run_fn(struct xc_cpu *c, xc_func_t fn, void *arg, int from,
				  uint32_t flow, bool urgent, struct xc_activity *outer)
{
	xc_activity_begin(c, urgent ? XC_ACT_URGENT : XC_ACT_CALL, (const void *)fn, 0, outer);
	xc_trace(urgent ? XC_EV_URGENT_ENTRY : XC_EV_CALL_ENTRY, from, flow, (const void *)fn);
	if (urgent)
		xc_user_run(XC_USER_URGENT, fn, arg);
	else
		xc_user_run(XC_USER_CALL, fn, arg);
	xc_trace(urgent ? XC_EV_URGENT_EXIT : XC_EV_CALL_EXIT, from, flow, (const void *)fn);
	/* an urgent call may interrupt the worker in the middle of its own count */
	if (urgent)
		xc_stat_inc_shared(&c->worker.urgent_calls);
	else
		xc_stat_inc_own(&c->worker.calls);
}

_Static_assert(sizeof(struct xc_call) == XC_CACHELINE,
	       "struct xc_call is one line: on_done shares _done's room, which async calls leave unused");

/*
 * The application's code that a call runs besides its function (an async
 * call's completion callback): marked as a call's function is, outside
 * libxcall and in call context, and neither counted nor traced.
 */
static inline void xc_call_user(xc_func_t fn, void *arg)
{
	xc_user_run(XC_USER_CALL, fn, arg);
}

/*
 * An async descriptor is done: its callback read out, then the last write
 * to it, then the callback, which may free or reuse it.
 */
static inline void xc_call_async_done(struct xc_call *async)
{
	xc_func_t done_fn = async->on_done.fn;
	void *done_arg = async->on_done.arg;

	/* release: fn's effects are visible to whoever sees xc_call_done() */
	atomic_store_explicit(&async->_flags, 0, memory_order_release);
	/* the descriptor may be gone from here: only the locals remain */
	if (done_fn)
		xc_call_user(done_fn, done_arg);
}

/*
 * After fn: signal whoever waits, a waiter's completion (@done) or an async
 * descriptor's in-flight bit (@async), then its callback; at most one is set.
 */
static inline void xc_call_complete(struct xc__completion *done, struct xc_call *async)
{
	if (done)
		xc_complete(done);	/* last touch of the waiter's memory */
	else if (async)
		xc_call_async_done(async);
}

static inline void xc_call_ended(struct xc_cpu *c, const struct xc_activity *outer)
{
	xc_activity_end(c, outer);
	xc_os_after_run(c);
}

/* run.c: the worker's side */
void xc_call_invoke(struct xc_cpu *c, xc_func_t fn, void *arg, int from, uint32_t flow,
		    bool urgent);
int xc_run_calls(struct xc_cpu *c);
int xc_run_calls_deep(struct xc_cpu *c);
int xc_run_urgent(struct xc_cpu *c);
int xc_drain_calls(struct xc_cpu *c);


/*
 * A call's function has returned on @c's worker. The urgent handler never
 * interrupts a call's function (urgent.c): urgent calls that arrived while
 * it ran run now, right after it, before anything else. Every path that
 * runs a call (the queue, the slot, an inline call) comes through here.
 */
static inline void xc_call_returned(struct xc_cpu *c)
{
	/* acquire: a cheap look; xc_run_urgent's own loads order the take */
	if (!xc_in_urgent && xc_llist_nonempty(&c->mbox.urgentq, memory_order_acquire))
		xc_run_urgent(c);
}

#endif /* XC_RUN_H */
