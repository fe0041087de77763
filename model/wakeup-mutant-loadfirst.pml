/*
 * wakeup-mutant-loadfirst.pml - a mutant of wakeup.pml that must FAIL: spin has to
 * find the lost wakeup in it (model/check.sh requires that).
 *
 * Mutation: the sender's S2 load of the idle word (src/proto/wake.c, xc_kick)
 * is moved before its S1 push (src/base/llist.h, xc_llist_push): it decides
 * whether to wake the worker on a state read before its call was queued.
 *
 * Built from the real model by a macro, so the two cannot drift.
 */
#define MUTANT_LOADFIRST
#include "wakeup.pml"
