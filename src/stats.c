// SPDX-License-Identifier: MIT
/* stats.c - reading the per-CPU counters (each is written where it happens). */
#include "internal.h"
#include "trace.h"

#include <errno.h>
#include <string.h>

static void stats_add(struct xc_stats *out, struct xc_cpu *c)
{
	/* relaxed: counters are statistics, not synchronisation */
#define RD(f) atomic_load_explicit(&c->f, memory_order_relaxed)
	out->calls += RD(calls) + RD(urgent_calls);
	out->kicks_sent += RD(kicks_sent);
	out->kicks_elided += RD(kicks_elided);
	out->kicks_coalesced += RD(kicks_coalesced);
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
#undef RD
}

int xc_stats_get(int cpu, struct xc_stats *out)
{
	if (!out)
		return -EINVAL;
	if (atomic_load_explicit(&xc_rt.state, memory_order_acquire) != XC_RT_UP)
		return -ENXIO;
	memset(out, 0, sizeof(*out));
	if (cpu == -1) {
		for (int i = 0; i < xc_rt.nr_cpus; i++)
			stats_add(out, &xc_cpus[xc_rt.cpu_list[i]]);
		return 0;
	}
	if (cpu < 0 || cpu >= XC_MAX_CPUS || !xc_cpus[cpu].present)
		return -ENXIO;
	stats_add(out, &xc_cpus[cpu]);
	return 0;
}
