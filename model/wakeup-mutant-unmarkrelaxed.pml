/*
 * wakeup-mutant-unmarkrelaxed.pml - a mutant of wakeup.pml that must FAIL:
 * spin has to find a ring call stranded (model/check.sh requires that).
 *
 * Mutation: an owner whose ring is marked unfenced and which reads
 * xc_ring_asym false clears its mark (C', src/proto/ring.h,
 * xc_ring_rides_when) with a relaxed store instead of a release one, and
 * then fences (R1'). The mark may then be seen cleared before the head
 * stores of the calls that skipped R1' before it. Call 3 skips R1' and
 * rides; call 4 stores C'; the offline close's U2' reads the mark cleared
 * and runs no membarrier, and runs the ring without call 3, whose head
 * store is still in the owner's store buffer; call 4's R1' and R2 find
 * the ring IDLE, its doorbell is refused by the closed callq, and
 * ring_refused settles call 4 alone: call 3 is stranded. The fence does
 * not save it: a refused doorbell speaks only for its own call. Run with
 * -DRING=1, four calls of one sender and offline/online.
 *
 * Built from the real model by a macro, so the two cannot drift.
 */
#define MUTANT_UNMARKRELAXED
#include "wakeup.pml"
