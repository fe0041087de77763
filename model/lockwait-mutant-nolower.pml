/*
 * lockwait-mutant-nolower.pml - a mutant of lockwait.pml that must FAIL:
 * spin has to find the waits hung (model/check.sh requires that).
 *
 * Mutation: deadlock_look (src/run/wait.c) keeps the token of its first
 * proof and never lowers it to an earlier one that a later empty serve
 * names. C's own wait for the lock serves N, whose wait for the lock serves
 * nothing and is refused by the proof; its token is later than C's wait's,
 * which lies above C all the same and is never refused: C's wait, X's wait
 * and the holder of the lock wait for each other for ever.
 *
 * Built from the real model by a macro, so the two cannot drift.
 */
#define MUTANT_NOLOWER
#include "lockwait.pml"
