/*
 * wakeup-mutant-asymflag.pml - a mutant of wakeup.pml that must FAIL: spin
 * has to find a ring call stranded (model/check.sh requires that).
 *
 * Mutation: U2' (rings_unfenced, src/proto/ring.c) decides by the process-wide
 * xc_ring_asym (src/proto/barrier.c) instead of each held ring's own
 * unfenced mark. A fenced call that read the flag true stored F1 and rode
 * on LINKED, so the owner's next call skips R1', its head store still in
 * its store buffer; then a slow verdict stores false. The worker's U2'
 * reads false and skips the membarrier, U3 reads the ring empty and lets
 * it go, and the worker sleeps; the store drains after. Run with -DRING=1
 * and three calls of one sender (the flag changes twice).
 *
 * Built from the real model by a macro, so the two cannot drift.
 */
#define MUTANT_ASYMFLAG
#include "wakeup.pml"
