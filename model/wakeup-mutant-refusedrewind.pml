/*
 * wakeup-mutant-refusedrewind.pml - a mutant of wakeup.pml that must FAIL:
 * spin has to find a call whose caller got 0 and that never runs (model/
 * check.sh requires that).
 *
 * Mutation: ring_refused (src/proto/ring.c) as the code before the fix: it keeps
 * the ring LINKED while it waits for the target's close to finish, serving
 * its own CPU, then stores IDLE and, if the close did not take its entry,
 * rewinds head to it. A call served meanwhile calls the same CPU through
 * the same ring, finds it LINKED, rides, returns 0, and is rewound away
 * (issue 36, bug 4). Run with -DRING=1 -DPAIR=1 -DHOTPLUG=1 (NEST: CPU 1
 * goes offline).
 *
 * Built from the real model by a macro, so the two cannot drift.
 */
#define MUTANT_REFUSEDREWIND
#include "wakeup.pml"
