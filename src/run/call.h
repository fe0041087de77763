/* SPDX-License-Identifier: MIT */
/*
 * call.h - running calls on a worker (call.c) and the mailbox slot (slot.c)
 */
#ifndef XC_CALL_H
#define XC_CALL_H

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
		xc_stat_inc_shared(&c->urgent_calls);
	else
		xc_stat_inc_own(&c->calls);
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


/* slot.c: the fast slot for waiting single calls */
int xc_slot_call(struct xc_cpu *c, xc_func_t fn, void *arg, const struct xc_waitinfo *wi);
int xc_slot_finish(struct xc_cpu *c, const struct xc_waitinfo *wi);
int xc_slot_finish_straight(struct xc_cpu *c);
int xc_slot_run_idle(struct xc_cpu *c);
void xc_slot_run_published(struct xc_cpu *c);
int xc_slot_close(struct xc_cpu *c);
void xc_slot_open(struct xc_cpu *c);

/*
 * The sender's side of the slot (slot.c), up to the publication: claim,
 * fill, publish. True if published: the caller then calls xc_slot_finish()
 * (xc_slot_finish_straight() on the straight path).
 * False if the slot is held or closed: the caller queues the call instead.
 * @wi names the call for stuck reports, and traces it; NULL on the straight
 * path, where the gate ruled tracing out and the wait names the call only
 * if it gets long.
 */
static inline __attribute__((always_inline)) bool xc_slot_publish(struct xc_cpu *c, xc_func_t fn,
								  void *arg, struct xc_cpu *self,
								  const struct xc_waitinfo *wi)
{
	struct xc_slot *s = &c->slot;
	uint32_t w = 0;

	/* acquire: the previous use of the fields happens before our writes */
	if (!atomic_compare_exchange_strong_explicit(&c->slot_claim, &w, 1, memory_order_acquire,
						     memory_order_relaxed))
		return false;
	if (wi) {
		c->slot_flow = xc_trace_flow();
		xc_trace(XC_EV_QUEUE, c->cpu, c->slot_flow, (const void *)fn);
	}
	/* relaxed: published by the CAS below */
	atomic_store_explicit(&s->fn, fn, memory_order_relaxed);
	s->arg = arg;
	s->done.waiter = self;
	w = 0;
	/*
	 * S1, seq_cst: release publishes the fields to the worker's acquire, and
	 * the total order puts the publication before the kick's S2 (wake.c).
	 * Fails only if the worker closed the slot meanwhile.
	 */
	if (xc_likely(atomic_compare_exchange_strong_explicit(&s->done.word, &w, XC_SLOT_PUBLISHED,
							      memory_order_seq_cst, memory_order_relaxed)))
		return true;
	/* release: our use of the fields happens before the next claimer's */
	atomic_store_explicit(&c->slot_claim, 0, memory_order_release);
	return false;
}

/*
 * Owner only: run the slot's call if one is published; how many ran (0 or
 * 1). The look is inline: a serve that finds the slot empty (run.c) calls
 * nothing in slot.c.
 */
static inline int xc_slot_run(struct xc_cpu *c)
{
	/* its seq_cst load pairs with the publication, so fn, arg and waiter are visible */
	if (!xc_slot_pending(c))
		return 0;
	xc_slot_run_published(c);
	return 1;
}

/*
 * Owner, polling: run the slot's call right here if one is published and
 * nothing must go first (urgent calls; a worker on another CPU looks first,
 * follow.c). True if it ran one: the fast path of a waiting call to a
 * polling worker (wake.c, XC_READY_RAN).
 */
static inline bool xc_slot_run_fast(struct xc_cpu *c)
{
	/* relaxed: urgent calls only jump the order; the queue's acquire comes in xc_run_urgent */
	if (!xc_slot_pending(c) || xc_llist_nonempty(&c->urgentq, memory_order_relaxed) ||
	    xc_os_elsewhere(c))
		return false;
	xc_slot_run_published(c);
	return true;
}

/*
 * A call's function has returned on @c's worker. The urgent handler never
 * interrupts a call's function (urgent.c): urgent calls that arrived while
 * it ran run now, right after it, before anything else. Every path that
 * runs a call (the queue, the slot, an inline call) comes through here.
 */
static inline void xc_call_returned(struct xc_cpu *c)
{
	/* acquire: a cheap look; xc_run_urgent's own loads order the take */
	if (!xc_in_urgent && xc_llist_nonempty(&c->urgentq, memory_order_acquire))
		xc_run_urgent(c);
}

#endif /* XC_CALL_H */
