/*
 * urgentmark-mutant-clearexit.pml - a mutant of urgentmark.pml that must FAIL:
 * spin has to find an urgent function running unmarked
 * (model/check.sh requires that).
 *
 * Mutation: the count first and the mark inside it, but the mark cleared
 * on the way out, not put back: an urgent function that runs an urgent
 * call inline (to its own CPU) goes on unmarked after it.
 *
 * Built from the real model by a macro, so the two cannot drift.
 */
#define MUTANT_CLEAREXIT
#include "urgentmark.pml"
