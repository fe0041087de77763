// SPDX-License-Identifier: MIT
/* stats.c - reading the per-CPU counters (each is written where it happens). */
#include "base/internal.h"
#include "proto/ring.h"
#include "base/thread.h"
#include "base/trace.h"

#include <errno.h>
#include <string.h>

static void stats_add(struct xc_stats *out, struct xc_cpu *c)
{
	/* relaxed: counters are statistics, not synchronisation */
#define RD(f) atomic_load_explicit(&c->f, memory_order_relaxed)
	out->calls += RD(calls) + RD(urgent_calls);
	out->kicks_sent += RD(kicks_sent);
	out->kicks_elided += RD(kicks_elided);
	out->kicks_coalesced += RD(kicks_coalesced) + xc_rings_rode(c);
	out->free_rides += RD(free_rides);
	out->sleeps += RD(sleeps);
	out->wakeups += RD(wakeups);
	out->work_run += RD(work_run);
	out->poll_ns_now += (uint64_t)RD(poll_ns);
	out->urgent_calls += RD(urgent_calls);
	out->signals_sent += RD(signals_sent);
	out->stuck_reports += RD(stuck_reports);
	out->trace_drops += xc_trace_drops(c->cpu);
	out->displaced += RD(displaced);
	out->barriers += RD(barriers);
#undef RD
}

static int stats_get(int cpu, struct xc_stats *out)
{
	int ret = 0;

	if (!out)
		return -EINVAL;
	/* acquire: the set, written before UP; xc_exit clears it only once we are out (inflight.c) */
	if (atomic_load_explicit(&xc_rt.state, memory_order_acquire) != XC_RT_UP)
		return -ENXIO;
	memset(out, 0, sizeof(*out));
	if (cpu == -1) {
		for (int i = 0; i < xc_rt.nr_cpus; i++)
			stats_add(out, &xc_cpus[xc_rt.cpu_list[i]]);
	} else if (cpu < 0 || cpu >= XC_MAX_CPUS || !xc_cpus[cpu].present) {
		ret = -ENXIO;
	} else {
		stats_add(out, &xc_cpus[cpu]);
	}
	return ret;
}

int xc_stats_get(int cpu, struct xc_stats *out)
{
	return XC_GUARDED(stats_get(cpu, out));
}

/*
 * struct xc_stats is a row of 64-bit counters and one value, poll_ns_now:
 * the two functions below walk it as such, so a new counter needs no line here.
 */
#define XC_STATS_WORDS (sizeof(struct xc_stats) / sizeof(uint64_t))
_Static_assert(sizeof(struct xc_stats) % sizeof(uint64_t) == 0, "xc_stats: 64-bit fields only");
#define XC_STATS_VALUE (offsetof(struct xc_stats, poll_ns_now) / sizeof(uint64_t))

/* out[i] = a[i] + sign * b[i]; the value is b's. */
static void stats_combine(struct xc_stats *out, const struct xc_stats *a, const struct xc_stats *b,
			  int sign)
{
	uint64_t x[XC_STATS_WORDS], y[XC_STATS_WORDS];

	memcpy(x, a, sizeof(x));
	memcpy(y, b, sizeof(y));
	for (size_t i = 0; i < XC_STATS_WORDS; i++)
		x[i] = i == XC_STATS_VALUE ? y[i] : sign > 0 ? x[i] + y[i] : x[i] - y[i];
	memcpy(out, x, sizeof(x));
}

void xc_stats_delta(struct xc_stats *out, const struct xc_stats *earlier, const struct xc_stats *later)
{
	struct xc_stats e = *earlier;

	stats_combine(out, later, &e, -1);
	out->poll_ns_now = later->poll_ns_now;
}

void xc_stats_add(struct xc_stats *sum, const struct xc_stats *add)
{
	stats_combine(sum, sum, add, 1);
}
