/*
 * wakeup-mutant-noslotorder.pml - a mutant of wakeup.pml that must FAIL:
 * spin has to find a call run before an earlier call of its sender
 * (model/check.sh requires that).
 *
 * Mutation: call_single (src/api/call.c) without slot_in_order: a waiting call
 * takes the mailbox slot whenever the slot can be had, though its ring to
 * that CPU still holds calls of the same thread not yet taken; the worker
 * runs the slot before the rings. Run with -DRING=1.
 *
 * Built from the real model by a macro, so the two cannot drift.
 */
#define MUTANT_NOSLOTORDER
#include "wakeup.pml"
