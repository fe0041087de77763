/*
 * floor-mutant-runfront.pml - a mutant of floor.pml that must FAIL:
 * spin has to find a worker nesting past its floor by more than one level
 * (model/check.sh requires that).
 *
 * Mutation: below its serve floor the worker runs its rings' entries as it
 * does above it. Each round of the application's recursion between A and
 * B nests one more level on A's stack, past the floor: the stack's end.
 *
 * Built from the real model by a macro, so the two cannot drift.
 */
#define MUTANT_RUNFRONT
#include "floor.pml"
