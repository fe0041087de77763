/*
 * wakeup-mutant-fdnorecheck.pml - a mutant of wakeup.pml that must FAIL: spin
 * has to find the lost wakeup of an attached thread in it (model/check.sh
 * requires that).
 *
 * Mutation: the attached thread's W2 re-check is removed (src/proto/wake.c,
 * xc_fd_sleep_begin): after W1 (idle = SLEEPING_FD) it returns 0 and the
 * loop enters its own wait at once. Run with -DATTACHED=1.
 *
 * Built from the real model by a macro, so the two cannot drift.
 */
#define MUTANT_FDNORECHECK
#include "wakeup.pml"
