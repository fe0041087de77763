/*
 * wakeup-mutant-makeroomhead.pml - a mutant of wakeup.pml that must FAIL:
 * spin has to find a call written over before it ran, or a head behind
 * tail (model/check.sh requires that).
 *
 * Mutation: xc_ring_wait_room and ring_put (src/run/wait.c, src/api/call.c) keep
 * the head read on entry while make_room serves its own CPU, as the code
 * before the fix did. A call it serves calls the same CPU through the same
 * ring: it writes entry h and publishes h + 1. The outer put then writes
 * entry h again (the nested call returned 0 and never runs), or, if the
 * worker took the nested call already, h - tail wraps and make_room would
 * spin for ever (issue 36, bug 3). Run with -DRING=1 -DPAIR=1 -DNCALLS=2
 * (NEST, rings of 2 entries).
 *
 * Built from the real model by a macro, so the two cannot drift.
 */
#define MUTANT_MAKEROOMHEAD
#include "wakeup.pml"
