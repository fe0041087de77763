/*
 * wakeup-mutant-closenodropped.pml - a mutant of wakeup.pml that must FAIL:
 * spin has to find a ring call stranded across an offline (model/check.sh
 * requires that).
 *
 * Mutation: xc_rings_close (src/proto/ring.c) runs only the rings on callq and
 * those held, not the rings the worker dropped at a U3 whose CAS the owner
 * won: the code before its fix (docs/model.md, Findings). The owner's push
 * finds callq closed, ring_refused takes back its own entry only, and an
 * earlier call that rode on LINKED, accepted, stays in the ring. Run with
 * -DRING=1 and three calls of one sender.
 *
 * Built from the real model by a macro, so the two cannot drift.
 */
#define MUTANT_CLOSENODROPPED
#include "wakeup.pml"
