// SPDX-License-Identifier: MIT
/*
 * completion.c - completions (struct xc__completion): how a call's target
 * tells its waiter that it ran, and wakes it only if it may sleep.
 *
 * A waiting caller counts the targets still to run its function in one 32-bit
 * word; bit 31 (XC_DONE_SLEEPING) says the waiter may sleep and must be woken.
 * The waiter sets it with a CAS before it can sleep; the last completer's
 * fetch_sub both finishes the count and reads the bit. Both are seq_cst, so
 * either the CAS sees the count change and the waiter re-checks instead of
 * sleeping, or the completer sees the bit and wakes it. A waiter still
 * spinning has not set the bit, and its completer touches nothing else.
 *
 * The slot (slot.c) uses the same word and the same bit differently: its
 * owner's call is done once the word no longer reads PUBLISHED, and the
 * worker completes it with an exchange that reads the bit the same way.
 *
 * A non-worker waiter sleeps on the word itself: the completer never touches
 * the waiter's memory after the fetch_sub except for the futex wake on the
 * word's address, which at a dead address at worst wakes some other futex
 * waiter spuriously, which every futex user tolerates. A worker that waits
 * sleeps on its own idle word instead (so that calls to it still wake it):
 * its completer kicks that CPU with the protocol of wake.c.
 *
 * The waiter's side, its spin, its request to be woken and its sleep, is
 * run/wait.c's.
 */
#include "base/internal.h"
#include "base/futex.h"
#include "proto/completion.h"
#include "proto/wake.h"

#include <limits.h>

void xc_completion_init(struct xc__completion *s, uint32_t count)
{
	/* relaxed: published to completers by the push that queues the call */
	atomic_store_explicit(&s->word, count, memory_order_relaxed);
	s->waiter = xc_self;
}

/* Wake the waiter of a completion that read XC_DONE_SLEEPING in its last update. */
void xc_completion_wake(struct xc__completion *s, struct xc_cpu *waiter)
{
	if (waiter)
		xc_kick(waiter);
	else
		xc_futex_wake(&s->word, INT_MAX);
}

void xc_complete(struct xc__completion *s)
{
	/* read before the count drops: the waiter may return right after it */
	struct xc_cpu *waiter = s->waiter;
	/* seq_cst: release the callee's effects to the waiter, and order before the kick's S2 */
	uint32_t old = atomic_fetch_sub_explicit(&s->word, 1, memory_order_seq_cst);

	if ((old & XC_DONE_COUNT) != 1 || !(old & XC_DONE_SLEEPING))
		return;		/* not the last, or the waiter is still spinning */
	xc_completion_wake(s, waiter);
}
