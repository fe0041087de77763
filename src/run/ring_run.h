/* SPDX-License-Identifier: MIT */
/*
 * ring_run.h - running the per-sender rings a worker holds (ring_run.c)
 */
#ifndef XC_RING_RUN_H
#define XC_RING_RUN_H

#include "base/internal.h"
#include "proto/ring.h"

/* Run the held rings; how many calls ran. */
int xc_rings_run(struct xc_cpu *c);
/* The idle poll's run: @from, then each held ring after it while the next has calls. */
int xc_rings_run_streak(struct xc_cpu *c, struct xc_ring *from);
/* Below the serve floor: refuse the held rings' waiting calls with -ELOOP; how many. */
int xc_rings_refuse_waited(struct xc_cpu *c);
/* Offline or exit: run what every ring holds, closing them; how many entries it took. */
int xc_rings_close(struct xc_cpu *c);

#endif /* XC_RING_RUN_H */
