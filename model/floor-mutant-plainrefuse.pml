/*
 * floor-mutant-plainrefuse.pml - a mutant of floor.pml that must FAIL:
 * spin has to find an entry both refused and retracted (run with -DRETRACT=1)
 * (model/check.sh requires that).
 *
 * Mutation: the worker below its floor refuses a waiting entry by a store
 * of XC_RING_REFUSED after its load of the fn, not by the exchange: an
 * owner that retracted the entry between the two returns -ENXIO, and the
 * worker completes its record too.
 *
 * Built from the real model by a macro, so the two cannot drift.
 */
#define MUTANT_PLAINREFUSE
#include "floor.pml"
