/* SPDX-License-Identifier: MIT */
/*
 * call.h - running calls on a worker (call.c) and the mailbox slot (slot.c)
 */
#ifndef XC_CALL_H
#define XC_CALL_H

#include "internal.h"
#include "follow.h"
#include "kick.h"
#include "wait.h"

/* call.c */
void xc_call_invoke(struct xc_cpu *c, xc_func_t fn, void *arg, int from, uint32_t flow,
		    bool urgent);
int xc_run_calls(struct xc_cpu *c);
int xc_run_urgent(struct xc_cpu *c);
void xc_call_returned(struct xc_cpu *c);
int xc_drain_calls(struct xc_cpu *c);

/* slot.c: the fast slot for waiting single calls */
int xc_slot_call(struct xc_cpu *c, xc_func_t fn, void *arg, const struct xc_waitinfo *wi);
int xc_slot_run(struct xc_cpu *c);
int xc_slot_close(struct xc_cpu *c);
void xc_slot_open(struct xc_cpu *c);

/*
 * Owner, polling: run the slot's call right here if one is published and
 * nothing must go first (urgent calls; a worker on another CPU looks first,
 * follow.c). True if it ran one: the fast path of a waiting call to a
 * polling worker (kick.c, XC_READY_RAN).
 */
static inline bool xc_slot_run_fast(struct xc_cpu *c)
{
	/* relaxed: urgent calls only jump the order; the queue's acquire comes in xc_run_urgent */
	if (!xc_slot_pending(c) || xc_llist_nonempty(&c->urgentq, memory_order_relaxed) ||
	    xc_os_elsewhere(c))
		return false;
	return xc_slot_run(c) > 0;
}

#endif /* XC_CALL_H */
