/*
 * urgentmark-mutant-markfirst.pml - a mutant of urgentmark.pml that must FAIL:
 * spin has to find the urgent handler landing inside an urgent function
 * (model/check.sh requires that).
 *
 * Mutation: the mark set before the count, put back on the way out
 * (call_inline before the bracket). The handler finds in_call 0 with the
 * mark set: it interrupts an urgent function between its mark and count.
 *
 * Built from the real model by a macro, so the two cannot drift.
 */
#define MUTANT_MARKFIRST
#include "urgentmark.pml"
