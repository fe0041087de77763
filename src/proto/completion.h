/* SPDX-License-Identifier: MIT */
/*
 * completion.h - completions (completion.c): the completer's side, and the
 * first phase of every wait, a short spin inline
 */
#ifndef XC_COMPLETION_H
#define XC_COMPLETION_H

#include "base/internal.h"
#include "proto/wake.h"

void xc_completion_init(struct xc__completion *s, uint32_t count);
void xc_complete(struct xc__completion *s);
/* Wake the waiter of a completion whose last update read XC_DONE_SLEEPING. */
void xc_completion_wake(struct xc__completion *s, struct xc_cpu *waiter);

/* Whether completion word @w is done: no count left (@busy 0), or the @busy bit clear. */
static inline bool xc_completion_word_done(uint32_t w, uint32_t busy)
{
	return !(w & (busy ? busy : XC_DONE_COUNT));
}

/* Every waiter first spins this often without reading the clock. */
#define XC_WAITER_FAST_SPINS 256

/*
 * The first phase of every wait: a short spin without the clock, inline
 * because most calls complete in it, and on the path from seeing a
 * completion back to the caller every call and every setup lengthens the
 * round trip. A worker that finds its own calls pending stops, to run them.
 * True if done.
 */
static inline bool xc_completion_spin(struct xc__completion *s, uint32_t busy)
{
	struct xc_cpu *self = xc_self;

	for (int i = 0; i < XC_WAITER_FAST_SPINS; i++) {
		/* seq_cst: acquires the callee's effects; a W2 load when the waiter is a worker */
		if (xc_completion_word_done(atomic_load_explicit(&s->word, memory_order_seq_cst), busy))
			return true;
		if (self && xc_calls_pending(self))
			break;
		xc_cpu_relax();
	}
	return false;
}

#endif /* XC_COMPLETION_H */
