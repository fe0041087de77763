/*
 * wakeup-mutant-nof1.pml - a mutant of wakeup.pml that must FAIL: spin has
 * to find a ring call stranded (model/check.sh requires that).
 *
 * Mutation: the owner enters the unfenced mode without F1 (src/proto/ring.h,
 * xc_ring_doorbell): after a fenced call that rides, its next calls skip
 * R1' as in the code, but r->unfenced, which the worker reads at U2', stays
 * 0, so the worker never learns that it must pay the membarrier. Run with
 * -DRING=1 and three calls of one sender.
 *
 * Built from the real model by a macro, so the two cannot drift.
 */
#define MUTANT_NOF1
#include "wakeup.pml"
