/*
 * lockwait-mutant-notoken.pml - a mutant of lockwait.pml that must FAIL:
 * spin has to find a wait for the lock refused while it does not lie above
 * the waited call (model/check.sh requires that).
 *
 * Mutation: refuse_lock (src/run/wait.c) without the tokens: a CAS of any
 * SPIN to REFUSED, whichever spin lock_wait names. Once C's own wait for
 * the lock is refused, it puts back the SPIN of the wait below C (Y's work
 * item's), and a proven look refuses that one, while C is still up or just
 * after C completed (the look found C not done, then C completed before its
 * CAS): its hotplug call gets -EDEADLK, though it could take the lock once C
 * returns. This is the code before the tokens.
 *
 * Built from the real model by a macro, so the two cannot drift.
 */
#define MUTANT_NOTOKEN
#include "lockwait.pml"
