/*
 * lockwait-mutant-lateword.pml - a mutant of lockwait.pml that must FAIL:
 * spin has to find a wait for the lock refused while it does not lie above
 * the waited call (model/check.sh requires that).
 *
 * Mutation: a proven deadlock_look (src/run/wait.c) reads lock_wait after
 * it found the call not done, not before. C completes between the two, Y
 * begins a new wait for the lock, and the look refuses it: a spin begun
 * after C, whose token is later than the proof's.
 *
 * Built from the real model by a macro, so the two cannot drift.
 */
#define MUTANT_LATEWORD
#include "lockwait.pml"
