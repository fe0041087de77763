/*
 * wakeup-mutant-nocatchup.pml - a mutant of wakeup.pml that must FAIL: spin has
 * to find a deferred urgent call left waiting behind the next plain call or
 * work item (model/check.sh requires that).
 *
 * Mutation: the code before the fix. slot_run_published (src/run/slot.c) does
 * not call xc_call_returned after the slot's call, and xc_run_urgent
 * (src/api/call.c) takes the urgent queue once instead of looping until it
 * stays empty. The handler still defers while a call's fn runs, as the code
 * does, so an urgent call whose signal came during a slot call, or during
 * an urgent call run in task context, stays queued while the worker starts
 * its next plain call or work item.
 *
 * Built from the real model by a macro, so the two cannot drift.
 */
#define MUTANT_NOCATCHUP
#include "wakeup.pml"
