/*
 * floor-mutant-norefuse.pml - a mutant of floor.pml that must FAIL:
 * spin has to find both workers waiting for each other for ever
 * (model/check.sh requires that).
 *
 * Mutation: below its serve floor the worker leaves its rings' entries as
 * they are, refusing none (the code before commit 7160e0c, which ran only
 * urgent calls and the slot's call there). A's deepest wait waits for B's
 * call, which waits for its waiting call queued in A's ring.
 *
 * Built from the real model by a macro, so the two cannot drift.
 */
#define MUTANT_NOREFUSE
#include "floor.pml"
