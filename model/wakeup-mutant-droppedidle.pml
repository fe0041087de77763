/*
 * wakeup-mutant-droppedidle.pml - a mutant of wakeup.pml that must FAIL:
 * spin has to find a ring pushed on callq while it is on it already
 * (model/check.sh requires that).
 *
 * Mutation: xc_rings_close (src/proto/ring.c) stores IDLE (U1) in the rings the
 * worker dropped at a lost U3 CAS before it runs them, as in the rings it
 * holds. Their owner won that CAS and is still in its doorbell: its push
 * lands on callq once xc_cpu_online reopens it, leaving the ring IDLE on
 * callq, and the next doorbell's CAS wins and pushes it again. Run with
 * -DRING=1 and offline/online.
 *
 * Built from the real model by a macro, so the two cannot drift.
 */
#define MUTANT_DROPPEDIDLE
#include "wakeup.pml"
