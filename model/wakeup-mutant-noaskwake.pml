/*
 * wakeup-mutant-noaskwake.pml - a mutant of wakeup.pml that must FAIL: spin has
 * to find a waiting worker asleep with its call done (model/check.sh requires
 * that). Run with -DPAIR=1.
 *
 * Mutation: a worker waiting for its call (sync_wait_after_spin, src/proto/wake.c)
 * never sets XC_SYNC_SLEEPING with sync_ask_wake, so the completer never
 * kicks it: a completion that comes after the waiter's W2 re-check is lost.
 *
 * Built from the real model by a macro, so the two cannot drift.
 */
#define MUTANT_NOASKWAKE
#include "wakeup.pml"
