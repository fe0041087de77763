/*
 * wakeup-mutant-busysleep.pml - a mutant of wakeup.pml that must FAIL:
 * spin has to find a ring call stranded (model/check.sh requires that).
 *
 * Mutation: xc_rings_release (src/proto/ring.c) when xc_owners_barrier finds another
 * worker's membarrier under way (barrier_busy) goes on to U3 and to sleep
 * without the membarrier, instead of re-linking every held ring and polling
 * on (keep_all). A call that skipped R1' is still in its owner's store
 * buffer, as with no membarrier at all. Run with -DRING=1 and three calls
 * of one sender.
 *
 * Built from the real model by a macro, so the two cannot drift.
 */
#define MUTANT_BUSYSLEEP
#include "wakeup.pml"
