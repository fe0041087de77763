/*
 * wakeup-mutant-nonemptyskip.pml - a mutant of wakeup.pml that must FAIL:
 * spin has to find a ring call stranded (model/check.sh requires that).
 *
 * Mutation: the owner rings no doorbell (R2, R3 skipped) when its ring
 * still held untaken entries as it put the call ("the worker is on it"),
 * instead of looking at the ring's state: the kick's empty-to-non-empty
 * rule copied onto a ring whose emptiness the owner reads apart from its
 * store of head. Run with -DRING=1.
 *
 * Built from the real model by a macro, so the two cannot drift.
 */
#define MUTANT_NONEMPTYSKIP
#include "wakeup.pml"
