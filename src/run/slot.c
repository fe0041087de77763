// SPDX-License-Identifier: MIT
/*
 * slot.c - the fast slot: one waiting single call carried in the target's
 * mailbox line.
 *
 * Through the queue, a waiting call moves three lines between the two CPUs:
 * the mailbox (push, then take), the caller's descriptor (read by the
 * worker) and the completion word in it (written by the worker, read back
 * by the caller). Through the slot, the call, its completion and the words
 * the idle worker polls share one line: the sender writes the call into it
 * and publishes it, the polling worker reads it, runs the call and frees
 * the slot in one exchange, and the sender reads that back. That is a
 * cache-line ping-pong: one transfer each way, one write burst on each side.
 *
 * The sender's writes to the mailbox line must come in one burst. The
 * worker reads that line in a tight loop, so if the sender claimed the slot
 * there with one RMW and published with another, the worker's next read
 * could take the line back in between, and the publication then paid a
 * second transfer (about a third more per round trip, measured). So the
 * slot is claimed on another line, c->slot_claim, which the worker never
 * reads: a thread that calls the same CPU again finds it still in its own
 * cache. That line sits in a 128-byte pair of its own: beside the mailbox,
 * the worker's polls fetched it with the mailbox (the adjacent-line
 * prefetch), and the claim's CAS, between seeing the last call done and
 * publishing the next, had to take it back first (where the two CPUs share
 * a core, a waiting call cost 1.48x the bare handoff with it there, 1.05x
 * apart: README, the performance table).
 *
 * == The claim (c->slot_claim) ==
 *
 *   0  free;  1  held by one sender, from its CAS 0 -> 1 until it has seen
 *   its call complete (or its publication refused) and stored 0 again.
 *
 * Only the holder writes fn, arg, done.waiter and slot_flow, and publishes.
 *
 * == The slot word (slot.done.word) ==
 *
 *   0                     free
 *   PUBLISHED             a call is published (CAS 0 -> PUBLISHED): S1 of
 *                         the wakeup protocol (wake.c); the worker runs it
 *   ...|SLEEPING          the owner may sleep: the completer wakes it (wake.c)
 *   ...|CLOSED            the CPU is offline: set by its worker as it drains,
 *                         cleared by xc_cpu_open. Nothing can be published
 *                         in a closed slot.
 *
 * The worker completes a call by exchanging the word to 0 (CLOSED while it
 * drains); the owner knows its call is done as soon as the word no longer
 * reads PUBLISHED. Nobody else can publish before the owner has seen that,
 * because it still holds the claim: there is no ABA.
 *
 * Who races, and how it ends:
 *   - senders on the claim: one CAS wins, the others use the queue;
 *   - the owner's publication against the worker's close: both are RMWs of
 *     the word, so one comes first. Published first: the drain sees it and
 *     runs the call. Closed first: the publication fails and the call goes
 *     to the queue, which the drain closed before the slot, so it gets
 *     -ENXIO as any call to an offline CPU;
 *   - the owner's SLEEPING CAS against the completing exchange: both seq_cst,
 *     so either the CAS fails (done: no sleep) or the exchange reads the bit
 *     and wakes the owner (wake.c, completions).
 * fn, arg, done.waiter and slot_flow are plain fields: only the holder of
 * the claim writes them, before its publication; only the worker reads
 * them, after it saw the publication and before its exchange. That exchange
 * releases to the owner's acquire load that sees it done, the owner's
 * release of the claim to the next claimer's acquire CAS: so one use of the
 * fields happens before the next.
 *
 * The worker's xc_slot_pending() (wake.h) is part of its W2 re-check (wake.c).
 *
 * == The straight paths ==
 *
 * A waiting call to a polling worker is the round trip the slot exists
 * for, and every instruction between seeing the other side's write and
 * making one's own lengthens it. So each side has a path that does only
 * the protocol above and what no waiter can do without:
 *   - the sender (xc_call_single, call.c): one load of the thread's state
 *     (xc_tls_clear(): not inside libxcall, not in the urgent handler, not in
 *     an attached sleep) and one of the gate (xc_rt.slot_fast_cpus: up,
 *     not tracing, the slot not ablated, every CPU below it in the set or
 *     its slot closed), our ring to the CPU empty, then claim, fill,
 *     publish (xc_slot_publish, proto/mailbox.h), and a jump to
 *     xc_slot_finish_straight. It marks itself inside libxcall before its
 *     look at the gate, as any call does before its look at the runtime
 *     (xc_exit waits for it, inflight.c), and leaves again if it falls
 *     back to the general path. Its wait (slot_wait_straight) calls nothing until the spin gives up,
 *     so that from seeing the completion it frees the claim, leaves
 *     libxcall and returns.
 *   - the idle worker (xc_slot_run_idle): from its poll, which read the
 *     word as PUBLISHED (with SLEEPING or not, never CLOSED) and looked at
 *     its CPU a spin before, outside any call. It runs the function and
 *     completes; the OS check and the urgent calls that came meanwhile
 *     follow the completion. It notes no activity, only slot_running, from
 *     which a stuck report names the slot's call (stuck.c).
 * Anything else takes the general paths (xc_slot_call, xc_slot_run_published),
 * which trace and note.
 */
#include "base/internal.h"
#include "proto/wake.h"
#include "run/wait.h"
#include "run/run.h"
#include "run/slot.h"
#include "base/trace.h"
#include "base/thread.h"

#include <errno.h>

/*
 * xc_slot_call() - run fn(arg) on @c's worker through its slot and wait for
 * it. Returns 0 once it ran, or -EAGAIN if the slot is taken or closed: the
 * caller then queues the call instead.
 */
int xc_slot_call(struct xc_cpu *c, xc_func_t fn, void *arg, const struct xc_waitinfo *wi)
{
	/*
	 * relaxed, both: looks before the claim's CAS, so that senders that
	 * would lose do not take the lines. The word is non-zero while a call
	 * is in the slot or the CPU is offline.
	 */
	if (atomic_load_explicit(&c->mbox.slot.done.word, memory_order_relaxed) != 0 ||
	    atomic_load_explicit(&c->slot_claim, memory_order_relaxed) != 0)
		return -EAGAIN;
	if (!xc_slot_publish(c, fn, arg, xc_self, true))
		return -EAGAIN;
	return xc_slot_finish(c, wi);
}

/*
 * The wait past the spin, named for stuck reports (the straight path's call,
 * @wi NULL, from the slot), then the claim's release; 0. The straight path
 * leaves libxcall here (xc_slot_finish_straight).
 */
static __attribute__((noinline, cold)) int slot_wait_rest(struct xc_cpu *c,
							   const struct xc_waitinfo *wi)
{
	struct xc_slot *s = &c->mbox.slot;
	/* relaxed: our own call's fields, which only we write */
	struct xc_waitinfo named = { atomic_load_explicit(&s->fn, memory_order_relaxed), s->arg,
				     &c->life.cpu, 1 };

	xc_completion_wait_rest(&s->done, XC_SLOT_PUBLISHED, wi ? wi : &named);
	/* release: our use of the fields happens before the next claimer's */
	atomic_store_explicit(&c->slot_claim, 0, memory_order_release);
	if (!wi)
		xc_leave(0);
	return 0;
}

/*
 * Wait for our published call, then free the claim; 0. In functions of
 * their own, which call nothing but in their last step: so nothing is saved
 * around the spin, and from seeing the completion back to the caller it
 * takes the claim's release (and the straight path's leaving) and a return.
 */
static inline __attribute__((always_inline)) int slot_wait_in(struct xc_cpu *c,
							      const struct xc_waitinfo *wi)
{
	if (xc_unlikely(!xc_completion_spin(&c->mbox.slot.done, XC_SLOT_PUBLISHED)))
		return slot_wait_rest(c, wi);
	/* release: as slot_wait_rest's */
	atomic_store_explicit(&c->slot_claim, 0, memory_order_release);
	if (!wi)
		xc_leave(0);
	return 0;
}

static __attribute__((noinline)) int slot_wait(struct xc_cpu *c, const struct xc_waitinfo *wi)
{
	return slot_wait_in(c, wi);
}

static __attribute__((noinline)) int slot_wait_straight(struct xc_cpu *c)
{
	return slot_wait_in(c, NULL);
}

/*
 * xc_slot_finish() - after xc_slot_publish(): kick, wait for the call, free
 * the claim; 0. Out of line: what runs after the publication overlaps the
 * worker's side.
 */
int xc_slot_finish(struct xc_cpu *c, const struct xc_waitinfo *wi)
{
	xc_kick(c);
	return slot_wait(c, wi);
}

/*
 * xc_slot_finish_straight() - the straight path's xc_slot_finish(), which it
 * jumps to with no frame of its own, inside libxcall since its look at the
 * gate (call.c); it leaves in the wait.
 */
int xc_slot_finish_straight(struct xc_cpu *c)
{
	xc_kick(c);
	return slot_wait_straight(c);
}

/*
 * Run the slot's published call, then free the slot (@after: 0, or CLOSED
 * while draining): the one body of both ways in, @idle a constant in each.
 * @idle: the idle poll's straight path (below), in libxcall's code with
 * nothing counted, so the bracket stores its words flat; it notes no
 * activity, only slot_running, from which a stuck report names the call,
 * and traces nothing (its gate ruled tracing out). Otherwise the run notes
 * its activity and traces, off the waiter's path where it can.
 */
static inline __attribute__((always_inline)) void slot_run(struct xc_cpu *c, uint32_t after, bool idle)
{
	struct xc_slot *s = &c->mbox.slot;
	struct xc_cpu *waiter = s->done.waiter;	/* the slot may be the next call's once completed */
	struct xc_activity outer;
	uint32_t old;

	/* relaxed, both: read by this thread, and by stuck reports as a snapshot */
	atomic_store_explicit(&c->worker.slot_running, true, memory_order_relaxed);
	if (!idle) {
		/* relaxed, here and below: the seq_cst load that saw PUBLISHED acquired the fields */
		const void *fn = (const void *)atomic_load_explicit(&s->fn, memory_order_relaxed);

		xc_activity_begin(c, XC_ACT_CALL, fn, 0, &outer);
		xc_trace(XC_EV_CALL_ENTRY, waiter ? waiter->life.cpu : -1, c->mbox.slot_flow, fn);
	}
	struct xc_user_mark m = xc_user_in(XC_USER_CALL, idle);

	atomic_load_explicit(&s->fn, memory_order_relaxed)(s->arg);
	if (!idle)
		xc_trace(XC_EV_CALL_EXIT, waiter ? waiter->life.cpu : -1, c->mbox.slot_flow,
			 (const void *)atomic_load_explicit(&s->fn, memory_order_relaxed));
	/* before the completion: a waiter that returns sees its call counted */
	xc_stat_inc_own(&c->worker.calls);
	/*
	 * seq_cst: releases fn's effects and the slot to the owner and the next
	 * claimer, is ordered against the owner's SLEEPING CAS, and comes before
	 * the wake's kick (S2). Only the owner's CAS may change the word while
	 * the call runs, and only to add SLEEPING. The marks are put back after
	 * it, off the waiter's path: until then the urgent handler still
	 * defers, and the slot reads as running for one more look.
	 */
	old = atomic_exchange_explicit(&s->done.word, after, memory_order_seq_cst);
	xc_user_out(XC_USER_CALL, idle, m);
	atomic_store_explicit(&c->worker.slot_running, false, memory_order_relaxed);
	if (old & XC_DONE_SLEEPING)
		xc_completion_wake(&s->done, waiter);
	if (!idle)
		xc_activity_end(c, &outer);
	xc_os_after_run(c);
	xc_call_returned(c);
}

/*
 * xc_slot_run_idle() - the idle worker's straight path (above), called by
 * its poll (worker.c) once it read the slot's word as PUBLISHED, the waiter
 * spinning or asleep. Only from the task loop's idle poll, so outside
 * libxcall's calls (xc_inside 1, xc_in_call 0, which it puts back without
 * reading), and never while tracing. XC_READY_RAN; XC_READY_YES instead if
 * urgent calls came, which go first, through the call loop.
 */
int xc_slot_run_idle(struct xc_cpu *c)
{
	/* relaxed: urgent calls only jump the order; xc_run_urgent's own loads order the take */
	if (xc_llist_nonempty(&c->mbox.urgentq, memory_order_relaxed))
		return XC_READY_YES;
	slot_run(c, 0, true);
	return XC_READY_RAN;
}

/* Owner only, after xc_slot_pending() (xc_slot_run, slot.h): run the published call. */
void xc_slot_run_published(struct xc_cpu *c)
{
	slot_run(c, 0, false);
}

/* Owner only, offline or exit: close the slot and run the call published before. */
int xc_slot_close(struct xc_cpu *c)
{
	/* acq_rel: acquire a published call's fields; one RMW against the publication's CAS */
	uint32_t w = atomic_fetch_or_explicit(&c->mbox.slot.done.word, XC_SLOT_CLOSED,
					      memory_order_acq_rel);

	if (!(w & XC_SLOT_PUBLISHED))
		return 0;
	slot_run(c, XC_SLOT_CLOSED, false);
	return 1;
}

/* Worker parked or not started: accept slot calls again. */
void xc_slot_open(struct xc_cpu *c)
{
	/* release: like the queues' reopening, the owner's state comes before any claim */
	atomic_fetch_and_explicit(&c->mbox.slot.done.word, ~XC_SLOT_CLOSED, memory_order_release);
}
