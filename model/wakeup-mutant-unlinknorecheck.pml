/*
 * wakeup-mutant-unlinknorecheck.pml - a mutant of wakeup.pml that must FAIL:
 * spin has to find a ring call stranded (model/check.sh requires that).
 *
 * Mutation: xc_rings_release (src/proto/ring.c) without U3: the worker stores
 * IDLE in every held ring (U1) and lets them all go, without looking again
 * for calls published before its U1, whose owners read LINKED at R2 and
 * rang no doorbell. Run with -DRING=1.
 *
 * Built from the real model by a macro, so the two cannot drift.
 */
#define MUTANT_UNLINKNORECHECK
#include "wakeup.pml"
