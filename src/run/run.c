// SPDX-License-Identifier: MIT
/*
 * run.c - the worker's side of the call family: run what senders queued on
 * this CPU, in the order the library promises. Urgent calls first, then the
 * slot's waiting call (slot.c), then the rings (ring.c) or, ablated, the
 * shared list; and at offline or exit, the drain that closes them all.
 *
 * Each function here runs calls on the CPU they were sent to: on its worker,
 * its attached thread, the urgent signal handler, or (xc_call_invoke) a
 * thread that runs a call to its own CPU inline. What races with them is
 * the senders' pushes and publications, each argued where it is made
 * (llist.h, slot.c, ring.c, wake.c).
 *
 * A wait that serves comes here through xc_wait_serve (wait.c). So this file
 * calls back into no sender's file unless there is something to run: the
 * slot's run side behind its inline look (xc_slot_run, slot.h), the rings'
 * behind the looks at the doorbells and the held rings below.
 */
#include "base/internal.h"
#include "proto/wake.h"
#include "run/run.h"
#include "run/slot.h"
#include "run/stuck.h"
#include "run/os_check.h"
#include "proto/pool.h"
#include "proto/ring.h"
#include "run/ring_run.h"
#include "base/trace.h"

/* A call that no waiter waits for: its function and its bookkeeping at once. */
void xc_call_invoke(struct xc_cpu *c, xc_func_t fn, void *arg, int from, uint32_t flow,
		    bool urgent)
{
	struct xc_activity outer;

	xc_call_run_fn(c, fn, arg, from, flow, urgent, &outer);
	xc_call_ended(c, &outer);
}

static void call_run(struct xc_cpu *c, struct xc_call *call, bool urgent,
		     struct xc_pool_batch *ret)
{
	xc_func_t fn = call->fn;
	void *arg = call->arg;
	/* relaxed: the take's acquire already ordered the descriptor's contents */
	unsigned kind = atomic_load_explicit(&call->_flags, memory_order_relaxed);
	struct xc__completion *sync = call->_completion;
	uint32_t flow = call->_trace_id;
	int from = call->_src_cpu;

	struct xc_activity outer;

	if (kind & XC_CALL_POOL)
		xc_pool_batch_add(ret, call);	/* read out: back to its pool with its batch */
	xc_call_run_fn(c, fn, arg, from, flow, urgent, &outer);
	xc_call_complete((kind & XC_CALL_WAITED) ? sync : NULL, (kind & XC_CALL_ASYNC) ? call : NULL);
	xc_call_ended(c, &outer);
}

/* Run a taken list: waiting calls first (someone is blocked on them), then the rest, each in FIFO order. */
static int run_list(struct xc_cpu *c, struct xc__link *lifo, bool urgent)
{
	struct xc__link *l = xc_llist_reverse(lifo);
	struct xc__link *sync_head = NULL, **sync_tail = &sync_head;
	struct xc__link *rest_head = NULL, **rest_tail = &rest_head;
	struct xc_pool_batch ret = { 0 };
	int n = 0;

	while (l) {
		struct xc__link *next = l->next;
		struct xc_call *call = xc_container_of(l, struct xc_call, _link);
		/* relaxed: ordered by the take's acquire */
		unsigned kind = atomic_load_explicit(&call->_flags, memory_order_relaxed);

		l->next = NULL;
		if (kind & XC_CALL_WAITED) {
			*sync_tail = l;
			sync_tail = &l->next;
		} else {
			*rest_tail = l;
			rest_tail = &l->next;
		}
		l = next;
	}
	*sync_tail = rest_head;
	for (l = sync_head; l; n++) {
		struct xc__link *next = l->next;	/* the call may be gone once it ran */

		call_run(c, xc_container_of(l, struct xc_call, _link), urgent, &ret);
		l = next;
		/* an urgent list runs on in order; xc_run_urgent takes what came meanwhile */
		if (!urgent)
			xc_call_returned(c);
	}
	xc_pool_batch_flush(&ret);
	return n;
}

/*
 * Run the urgent queue until it stays empty: from the signal handler, the
 * idle loop or the task loop. Urgent calls that arrive while one of these
 * runs find the handler deferring (xc_in_call), and their senders found the
 * queue non-empty and sent no signal: this loop is what runs them.
 */
int xc_run_urgent(struct xc_cpu *c)
{
	int n = 0;

	/*
	 * seq_cst: the re-check after the worker's seq_cst RUNNING store
	 * (xc_idle_state_set); with the sender's seq_cst push and idle load it
	 * is store-buffering, which only seq_cst on all four accesses forbids.
	 */
	while (xc_llist_nonempty(&c->mbox.urgentq, memory_order_seq_cst)) {
		struct xc__link *l = xc_llist_take(&c->mbox.urgentq);

		if (!l)
			break;
		n += run_list(c, l, true);
	}
	return n;
}

/*
 * Urgent calls first, then the slot's waiting call, then the queue; @deep
 * (below the serve floor, wait.c): the rings' waiting calls refused, their
 * entries not run (ring.c, "Below the floor"). Urgent calls never wait, and
 * the slot's call is one level at most (its claim is held while it runs),
 * so neither nests far. With the rings ablated (benchmarks only) the
 * shared list runs whole either way. How many ran or were refused.
 */
static inline __attribute__((always_inline)) int run_calls(struct xc_cpu *c, bool deep)
{
	int n;

	/* relaxed: senders look at it only for room in a full ring (ring.c), at every pass */
	if (xc_unlikely(atomic_load_explicit(&c->worker.deep, memory_order_relaxed) != deep))
		atomic_store_explicit(&c->worker.deep, deep, memory_order_relaxed);
	n = xc_run_urgent(c);

	n += xc_slot_run(c);
	if (xc_unlikely(xc_ablated(XC_ABLATE_RING))) {
		struct xc__link *l = xc_llist_take(&c->mbox.callq);

		return l ? n + run_list(c, l, false) : n;
	}
	/* the doorbells' look is inline (ring.h); none held, nothing to run */
	xc_ring_take_doorbells(c);
	if (!c->worker.rings_held)
		return n;
	return n + (deep ? xc_rings_refuse_waited(c) : xc_rings_run(c));
}

int xc_run_calls(struct xc_cpu *c)
{
	return run_calls(c, false);
}

int xc_run_calls_deep(struct xc_cpu *c)
{
	return run_calls(c, true);
}

/* Offline or exit: refuse new calls, run every queued one (the slot after the queue: slot.c). */
int xc_drain_calls(struct xc_cpu *c)
{
	int n = run_list(c, xc_llist_close(&c->mbox.urgentq), true);

	if (xc_ablated(XC_ABLATE_RING))
		n += run_list(c, xc_llist_close(&c->mbox.callq), false);
	else
		n += xc_rings_close(c);
	return n + xc_slot_close(c);
}
