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
 * slot is claimed on another line, c->slot_claim, beside the counters that
 * senders write anyway and the worker never reads: a thread that calls the
 * same CPU again finds that line still in its own cache.
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
 *                         the wakeup protocol (kick.c); the worker runs it
 *   ...|SLEEPING          the owner may sleep: the completer wakes it (kick.c)
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
 *     and wakes the owner (kick.c, completions).
 * fn, arg, done.waiter and slot_flow are plain fields: only the holder of
 * the claim writes them, before its publication; only the worker reads
 * them, after it saw the publication and before its exchange. That exchange
 * releases to the owner's acquire load that sees it done, the owner's
 * release of the claim to the next claimer's acquire CAS: so one use of the
 * fields happens before the next.
 *
 * The worker's xc_slot_pending() (internal.h) is part of its W2 re-check (kick.c).
 */
#include "internal.h"
#include "kick.h"
#include "wait.h"
#include "call.h"
#include "trace.h"

#include <errno.h>

/*
 * xc_slot_call() - run fn(arg) on @c's worker through its slot and wait for
 * it. Returns 0 once it ran, or -EAGAIN if the slot is taken or closed: the
 * caller then queues the call instead.
 */
int xc_slot_call(struct xc_cpu *c, xc_func_t fn, void *arg, const struct xc_waitinfo *wi)
{
	struct xc_slot *s = &c->slot;
	uint32_t w = 0;

	/*
	 * relaxed, both: looks before the CAS, so that senders that would lose
	 * do not take the lines. The word is non-zero while a call is in the
	 * slot or the CPU is offline.
	 */
	if (atomic_load_explicit(&s->done.word, memory_order_relaxed) != 0 ||
	    atomic_load_explicit(&c->slot_claim, memory_order_relaxed) != 0)
		return -EAGAIN;
	/* acquire: the previous use of the fields happens before our writes (above) */
	if (!atomic_compare_exchange_strong_explicit(&c->slot_claim, &w, 1,
						     memory_order_acquire, memory_order_relaxed))
		return -EAGAIN;
	c->slot_flow = xc_trace_flow();
	xc_trace(XC_EV_QUEUE, c->cpu, c->slot_flow, (const void *)fn);
	s->fn = fn;
	s->arg = arg;
	s->done.waiter = xc_self;
	w = 0;
	/*
	 * S1, seq_cst: release publishes the fields to the worker's acquire, and
	 * the total order puts the publication before the kick's S2 (kick.c).
	 * Fails only if the worker closed the slot meanwhile.
	 */
	bool published = atomic_compare_exchange_strong_explicit(&s->done.word, &w, XC_SLOT_PUBLISHED,
								 memory_order_seq_cst, memory_order_relaxed);
	if (published) {
		xc_kick(c);
		xc_completion_wait(&s->done, XC_SLOT_PUBLISHED, wi);
	}
	/* release: our use of the fields happens before the next claimer's */
	atomic_store_explicit(&c->slot_claim, 0, memory_order_release);
	return published ? 0 : -EAGAIN;
}

/* Run the slot's published call, then free the slot (@after: 0, or CLOSED while draining). */
static void slot_run_published(struct xc_cpu *c, uint32_t after)
{
	struct xc_slot *s = &c->slot;
	struct xc_cpu *waiter = s->done.waiter;
	struct xc_activity outer;
	uint32_t old;

	/* a call run from inside this one (xc_poll, a wait) must not run it again */
	c->slot_running = true;
	xc_call_run_fn(c, s->fn, s->arg, waiter ? waiter->cpu : -1, c->slot_flow, false, &outer);
	c->slot_running = false;
	/*
	 * seq_cst: releases fn's effects and the slot to the owner and the next
	 * claimer, is ordered against the owner's SLEEPING CAS, and comes before
	 * the wake's kick (S2). Only the owner's CAS may change the word while
	 * the call runs, and only to add SLEEPING.
	 */
	old = atomic_exchange_explicit(&s->done.word, after, memory_order_seq_cst);
	if (old & XC_DONE_SLEEPING)
		xc_completion_wake(&s->done, waiter);
	xc_call_ended(c, &outer);
	xc_call_returned(c);
}

/* Owner only: run the slot's call if one is published; returns how many ran (0 or 1). */
int xc_slot_run(struct xc_cpu *c)
{
	/* its seq_cst load pairs with the publication, so fn, arg and waiter are visible */
	if (!xc_slot_pending(c))
		return 0;
	slot_run_published(c, 0);
	return 1;
}

/* Owner only, offline or exit: close the slot and run the call published before. */
int xc_slot_close(struct xc_cpu *c)
{
	/* acq_rel: acquire a published call's fields; one RMW against the publication's CAS */
	uint32_t w = atomic_fetch_or_explicit(&c->slot.done.word, XC_SLOT_CLOSED,
					      memory_order_acq_rel);

	if (!(w & XC_SLOT_PUBLISHED))
		return 0;
	slot_run_published(c, XC_SLOT_CLOSED);
	return 1;
}

/* Worker parked or not started: accept slot calls again. */
void xc_slot_open(struct xc_cpu *c)
{
	/* release: like the queues' reopening, the owner's state comes before any claim */
	atomic_fetch_and_explicit(&c->slot.done.word, ~XC_SLOT_CLOSED, memory_order_release);
}
