/* SPDX-License-Identifier: MIT */
/*
 * mailbox.h - the mailbox slot's data operations, which the wakeup protocol
 * and the senders' straight path use inline: the sender's publication, and
 * the worker's look at it (part of W2). The slot's whole life, its protocol
 * argued, the sender's wait and the worker's run, is run/slot.c's.
 */
#ifndef XC_MAILBOX_H
#define XC_MAILBOX_H

#include "base/internal.h"
#include "base/trace.h"

/*
 * The sender's side of the slot (slot.c), up to the publication: claim,
 * fill, publish. True if published: the caller then calls xc_slot_finish()
 * (xc_slot_finish_straight() on the straight path).
 * False if the slot is held or closed: the caller queues the call instead.
 * @traced: the call is traced (the general path); false (a constant) on the
 * straight path, where the gate ruled tracing out.
 */
static inline __attribute__((always_inline)) bool xc_slot_publish(struct xc_cpu *c, xc_func_t fn,
								  void *arg, struct xc_cpu *self,
								  bool traced)
{
	struct xc_slot *s = &c->mbox.slot;
	uint32_t w = 0;

	/* acquire: the previous use of the fields happens before our writes */
	if (!atomic_compare_exchange_strong_explicit(&c->slot_claim, &w, 1, memory_order_acquire,
						     memory_order_relaxed))
		return false;
	if (traced) {
		c->mbox.slot_flow = xc_trace_flow();
		xc_trace(XC_EV_QUEUE, c->life.cpu, c->mbox.slot_flow, (const void *)fn);
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

/* Owner only: whether @c's slot holds a call to run (slot.c). Part of the W2 re-check. */
static inline bool xc_slot_pending(struct xc_cpu *c)
{
	/* seq_cst: a W2 re-check load of the wakeup protocol (wake.c) */
	/* relaxed: this thread's own flag */
	return !atomic_load_explicit(&c->worker.slot_running, memory_order_relaxed) &&
	       (atomic_load_explicit(&c->mbox.slot.done.word, memory_order_seq_cst) & XC_SLOT_PUBLISHED);
}

#endif /* XC_MAILBOX_H */
