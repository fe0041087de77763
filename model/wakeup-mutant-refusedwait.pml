/*
 * wakeup-mutant-refusedwait.pml - a mutant of wakeup.pml that must FAIL:
 * spin has to find a worker that waits for ever (an invalid end state)
 * (model/check.sh requires that).
 *
 * Mutation: ring_refused (src/proto/ring.c) waits for the target's close to
 * finish (ring_close_seq / ring_closed_seq, serving its own CPU), as the
 * code before the fix did, before it reads tail. Under xc_exit both CPUs
 * drain at once: CPU 0's drain runs a call that calls CPU 1 and CPU 1's a
 * call that calls CPU 0; each push finds callq closed, and each owner
 * waits for the other's close, which waits for it (issue 36, bug 1). Run
 * with -DRING=1 -DPAIR=1 -DHOTPLUG=2 (NEST).
 *
 * Built from the real model by a macro, so the two cannot drift.
 */
#define MUTANT_REFUSEDWAIT
#include "wakeup.pml"
