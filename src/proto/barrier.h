/* SPDX-License-Identifier: MIT */
/*
 * barrier.h - the owners' barrier (barrier.c): membarrier(2) in place of
 * the fences ring owners skip, where it was measured cheap
 */
#ifndef XC_BARRIER_H
#define XC_BARRIER_H

#include "base/internal.h"

/*
 * Whether ring owners may skip R1' and leave it to the worker's membarrier:
 * written by xc_init and workers, read by owners (ring.h); relaxed both
 * ways: either value is safe at any moment (barrier.c).
 */
extern _Atomic bool xc_ring_asym;

/* At each xc_init, and in a forked child. */
void xc_barrier_init(void);
void xc_barrier_fork_child(void);

/*
 * Once per runtime, by the first worker to run dry with rings held: what a
 * membarrier costs here (barrier.c). Relaxed: a hint read at every idle
 * moment; the probe claims it by exchange.
 */
extern _Atomic bool xc_barrier_probe_due;
void xc_barrier_probe_slow(struct xc_cpu *c);

static inline void xc_barrier_probe(struct xc_cpu *c)
{
	if (xc_unlikely(atomic_load_explicit(&xc_barrier_probe_due, memory_order_relaxed)))
		xc_barrier_probe_slow(c);
}

/*
 * U2': a full barrier on every running thread of the process. False if
 * another worker's is under way and @may_skip: the caller must not sleep
 * yet, and polls on instead.
 */
bool xc_owners_barrier(struct xc_cpu *c, bool may_skip);

#endif /* XC_BARRIER_H */
