/*
 * floor-mutant-frontonly.pml - a mutant of floor.pml that must FAIL:
 * spin has to find both workers waiting for each other for ever
 * (model/check.sh requires that).
 *
 * Mutation: below its serve floor the worker refuses a waiting call only
 * at its ring's front. B's nowait call stands in front of its waiting one,
 * which is never refused, and A's deepest wait waits for B.
 *
 * Built from the real model by a macro, so the two cannot drift.
 */
#define MUTANT_FRONTONLY
#include "floor.pml"
