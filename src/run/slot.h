/* SPDX-License-Identifier: MIT */
/*
 * slot.h - the mailbox slot (slot.c): a waiting single call carried in the
 * target's mailbox line; the sender's wait and the worker's run
 */
#ifndef XC_SLOT_H
#define XC_SLOT_H

#include "base/internal.h"
#include "proto/mailbox.h"
#include "proto/wake.h"
#include "run/os_check.h"

struct xc_waitinfo;

int xc_slot_call(struct xc_cpu *c, xc_func_t fn, void *arg, const struct xc_waitinfo *wi);
int xc_slot_finish(struct xc_cpu *c, const struct xc_waitinfo *wi);
int xc_slot_finish_straight(struct xc_cpu *c);
int xc_slot_run_idle(struct xc_cpu *c);
void xc_slot_run_published(struct xc_cpu *c);
int xc_slot_close(struct xc_cpu *c);
void xc_slot_open(struct xc_cpu *c);

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
	if (!xc_slot_pending(c) || xc_llist_nonempty(&c->mbox.urgentq, memory_order_relaxed) ||
	    xc_os_elsewhere(c))
		return false;
	xc_slot_run_published(c);
	return true;
}

#endif /* XC_SLOT_H */
