/*
 * urgentmark-mutant-markclear.pml - a mutant of urgentmark.pml that must FAIL:
 * spin has to find an urgent function running unmarked (run with -DP3=0)
 * (model/check.sh requires that).
 *
 * Mutation: the code before the bracket (xc_call_run_fn): the mark set
 * before the count and cleared on the way out. The urgent handler lands
 * between the mark and the count, its urgent function clears the mark,
 * and the interrupted urgent function runs unmarked.
 *
 * Built from the real model by a macro, so the two cannot drift.
 */
#define MUTANT_MARKCLEAR
#include "urgentmark.pml"
