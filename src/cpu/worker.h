/* SPDX-License-Identifier: MIT */
/*
 * worker.h - the worker thread (worker.c) and its bringup handshake (bringup.c)
 */
#ifndef XC_WORKER_H
#define XC_WORKER_H

#include "base/internal.h"

/*
 * The bringup handshake of one worker thread (bringup.c, worker.c). It lives
 * on the heap, apart from the CPU, so that a thread whose bringup gave up on
 * it (its init hook outlived the timeout and cancellation) can still report
 * there, find itself abandoned and leave, without touching the CPU that a
 * later xc_init() has reset for a new worker.
 *
 *   state   STARTING, set by the starter; then one CAS decides: the thread's
 *           to ALIVE or FAILED (its report), or the starter's to ABANDONED.
 *   err, tid  written by the thread before its report, read after it.
 *   refs    the starter's and the thread's; the last put frees it.
 */
struct xc_boot {
	struct xc_cpu *c;	/* touched only once the report is in: a later xc_init resets it */
	int cpu;		/* c's id, for the thread before its report */
	bool follow_os;		/* copied, as cpu_init */
	int (*cpu_init)(int cpu, void *arg);	/* copied: a later xc_init rewrites the config */
	void *cpu_init_arg;
	_Atomic int state;
	int err;
	/*
	 * The thread's id (0: it has not run yet) and whether it is in its
	 * cpu_init hook, stored as it goes, for the report of a thread that
	 * misses the deadline. Relaxed: read for a report, never to decide;
	 * the report's release publishes the id.
	 */
	_Atomic int tid;
	_Atomic bool in_hook;
	_Atomic int refs;
};
void xc_boot_put(struct xc_boot *b);
int xc_boot_cpu(struct xc_boot *b);
/* bringup.c: @c and its rings as a new runtime starts from (xc_init, a fork child) */
void xc_cpu_fresh(struct xc_cpu *c, int cpu);


void *xc_worker_main(void *arg);
void xc_cpu_drain(struct xc_cpu *c);
void xc_cpu_offline_served(struct xc_cpu *c);
void xc_cpu_taken_drain(struct xc_cpu *c);
bool xc_taken_cpu_reopen(struct xc_cpu *c);

#endif /* XC_WORKER_H */
