/*
 * floor-mutant-roomwaits.pml - a mutant of floor.pml that must FAIL:
 * spin has to find both workers waiting for each other for ever
 * (model/check.sh requires that, with RSIZE 1).
 *
 * Mutation: a put into a full ring waits for room whatever the target's
 * worker.deep says (the code before the sender looked at it). B's X,
 * whose nowait call filled its ring to A, waits for room that only A's
 * unwinding nest makes, and A's deepest wait waits for X.
 *
 * Built from the real model by a macro, so the two cannot drift.
 */
#define MUTANT_ROOMWAITS
#include "floor.pml"
