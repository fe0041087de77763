/*
 * wakeup-mutant-norecheck.pml - a mutant of wakeup.pml that must FAIL: spin has to
 * find the lost wakeup in it (model/check.sh requires that).
 *
 * Mutation: the worker's W2 re-check before sleeping is removed
 * (src/proto/wake.c, xc_idle_wait): after W1 it goes straight to futex_wait (W3).
 *
 * Built from the real model by a macro, so the two cannot drift.
 */
#define MUTANT_NORECHECK
#include "wakeup.pml"
