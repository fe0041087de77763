/*
 * wakeup-mutant-noctlcheck.pml - a mutant of wakeup.pml that must FAIL: spin has to
 * find the lost wakeup in it (model/check.sh requires that).
 *
 * Mutation: the W2 re-check reads the call queue but not ctl (ctl_pending,
 * part of ready_idle in src/cpu/worker.c): a hotplug request's kick is lost.
 *
 * Built from the real model by a macro, so the two cannot drift.
 */
#define MUTANT_NOCTLCHECK
#include "wakeup.pml"
