/*
 * wakeup-mutant-noreopenlock.pml - a mutant of wakeup.pml that must FAIL: spin
 * has to find the call it loses (model/check.sh requires that).
 *
 * Mutation: a worker whose CPU the OS gave back reopens it without the
 * hotplug lock (src/cpu/worker.c, taken_cpu_reopen without the trylock). Its
 * checks of user_offline and park then race xc_cpu_offline and
 * xc_cpu_online: both open the queues, and xc_llist_open's store of NULL
 * wipes a call pushed onto the queue the worker had opened first.
 *
 * Built from the real model by a macro, so the two cannot drift.
 */
#define MUTANT_NOREOPENLOCK
#include "wakeup.pml"
