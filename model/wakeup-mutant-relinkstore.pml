/*
 * wakeup-mutant-relinkstore.pml - a mutant of wakeup.pml that must FAIL:
 * spin has to find a ring pushed on callq while it is on it already
 * (model/check.sh requires that).
 *
 * Mutation: U3 in xc_rings_release (src/proto/ring.c) re-links a ring with calls
 * by a plain store of LINKED instead of the CAS IDLE -> LINKED: an owner
 * whose doorbell CAS won after U1 pushes the ring, and the worker keeps it
 * as well; the ring ends IDLE on callq, and the owner's next doorbell
 * pushes it again, rewriting its link. Run with -DRING=1.
 *
 * Built from the real model by a macro, so the two cannot drift.
 */
#define MUTANT_RELINKSTORE
#include "wakeup.pml"
