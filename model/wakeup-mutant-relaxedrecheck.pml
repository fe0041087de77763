/*
 * wakeup-mutant-relaxedrecheck.pml - a mutant of wakeup.pml that must FAIL:
 * spin has to find an urgent call left waiting behind a work item
 * (model/check.sh requires that).
 *
 * Mutation: the worker's re-check of the urgent queue after its seq_cst
 * store of RUNNING (cpu_idle's xc_idle_state_set, then xc_run_urgent at the
 * top of worker_loop) is relaxed, as xc_llist_take's load was before the
 * fix. C11 then lets the load be satisfied before the store is visible
 * (store buffering against the sender's seq_cst push and seq_cst load of
 * the idle word); the model lets the store sit in a store buffer until
 * right after that load. Spin is otherwise sequentially consistent.
 *
 * Built from the real model by a macro, so the two cannot drift.
 */
#define MUTANT_RELAXEDRECHECK
#include "wakeup.pml"
