/*
 * lockwait-mutant-oneempty.pml - a mutant of lockwait.pml that must FAIL:
 * spin has to find a refusal while the waited call is still queued
 * (model/check.sh requires that).
 *
 * Mutation: deadlock_look (src/run/wait.c) takes one empty serve since its
 * look began as the proof, not two. That serve's take may have come
 * before the waiter's call was pushed: the lock's waiter (or the offline
 * request) is refused while the call sits in its queue, to run next.
 *
 * Built from the real model by a macro, so the two cannot drift.
 */
#define MUTANT_ONEEMPTY
#include "lockwait.pml"
