/* SPDX-License-Identifier: MIT */
/*
 * idle.h - what idle.c's parts share: the command's options, the mostly
 * idle period's calls, and part 3 (idle_neighbour.c).
 */
#ifndef XB_IDLE_H
#define XB_IDLE_H

#include "bench.h"

struct idle_cfg {
	double idle_seconds;
	long period_us, window_ns;
};

/*
 * Until now_ns() reaches @end, one waiting call to every CPU each
 * @period_us (only the sleep between them when !@call), each call's time
 * into @h. Returns how many calls were made; stops at a call's error.
 */
long idle_periodic_calls(uint64_t end, long period_us, bool call, struct hist *h);

/* Part 3: a computing and a sleeping thread beside a worker, per poll policy. */
int idle_neighbours(const struct bopts *o, const struct idle_cfg *c, int rep);

#endif
