/*
 * lockwait-mutant-nocarry.pml - a mutant of lockwait.pml that must FAIL:
 * spin has to find a wait for the lock refused while it does not lie above
 * the waited call (model/check.sh requires that).
 *
 * Mutation: deadlock_look (src/run/wait.c) takes the proof's token from the
 * lock_wait word it read, not from served_empty, which names the wait whose
 * serve found nothing. The word names the wait below C once C's refused
 * spin has put it back, and that wait is refused.
 *
 * Built from the real model by a macro, so the two cannot drift.
 */
#define MUTANT_NOCARRY
#include "lockwait.pml"
