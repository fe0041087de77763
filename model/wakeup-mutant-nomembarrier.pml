/*
 * wakeup-mutant-nomembarrier.pml - a mutant of wakeup.pml that must FAIL:
 * spin has to find a ring call stranded (model/check.sh requires that).
 *
 * Mutation: xc_rings_release and xc_rings_close (src/proto/ring.c) without the
 * membarrier at U2': the worker reads unfenced (1: its owner's calls skip
 * R1') and goes on to U3 anyway. A call that skipped R1' and rode on
 * LINKED has its head store still in the owner's store buffer: U3 reads
 * the ring empty, lets it go, and the worker sleeps; the store drains
 * after. Run with -DRING=1 and three calls of one sender (the first links
 * the ring, the second rides fenced and sets unfenced, the third skips R1').
 *
 * Built from the real model by a macro, so the two cannot drift.
 */
#define MUTANT_NOMEMBARRIER
#include "wakeup.pml"
