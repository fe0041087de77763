/*
 * wakeup-mutant-markkept.pml - a mutant of wakeup.pml that must FAIL: spin
 * has to find a ring's mark paying a third membarrier after the slow
 * verdict (model/check.sh requires that).
 *
 * Mutation: the code before C' (src/proto/ring.h, xc_ring_rides_when): a
 * marked ring's calls skip R1' without looking at xc_ring_asym, so only a
 * doorbell's C clears the mark, and a ring that the worker's U3 keeps
 * rings none. Call 2 marks the ring; the verdict comes at the worker's
 * first membarrier, which keeps the ring for call 2; call 3 skips R1' as
 * before and is kept at the next release, which pays again, and the
 * release that lets the ring go pays a third time. Run with -DRING=1,
 * -DVERDICT=1 and three calls of one sender.
 *
 * Built from the real model by a macro, so the two cannot drift.
 */
#define MUTANT_MARKKEPT
#include "wakeup.pml"
