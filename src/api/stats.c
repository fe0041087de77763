// SPDX-License-Identifier: MIT
/* stats.c - reading the per-CPU counters (each is written where it happens). */
#include "base/internal.h"
#include "proto/ring.h"
#include "base/thread.h"
#include "base/trace.h"

#include <errno.h>
#include <string.h>

/* Each counter of XC_STATS_COUNTERS that the CPU counts itself, by the list. */
#define ADD_COUNTED_SENDER(name) out->name += RD(sent.name);
#define ADD_COUNTED_WORKER(name) out->name += RD(worker.name);
#define ADD_COUNTED_READ(name)
#define ADD_COUNTED(name, by, kind, meaning) ADD_COUNTED_##by(name)

static void stats_add(struct xc_stats *out, struct xc_cpu *c)
{
	/* relaxed: counters are statistics, not synchronisation */
#define RD(f) atomic_load_explicit(&c->f, memory_order_relaxed)
	XC_STATS_COUNTERS(ADD_COUNTED)
	/* what is READ when asked, and what counts another's too */
	out->poll_ns_now += (uint64_t)RD(worker.poll_ns);
	out->trace_drops += xc_trace_drops(c->life.cpu);
	out->calls += RD(worker.urgent_calls);			/* urgent calls are calls */
	out->kicks_coalesced += xc_rings_rode(c);	/* a call that found its ring linked */
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
	} else if (cpu < 0 || cpu >= XC_MAX_CPUS || !xc_cpus[cpu].life.present) {
		ret = -ENXIO;
	} else {
		stats_add(out, &xc_cpus[cpu]);
	}
	return ret;
}

/*
 * The caller's struct as a program built against another xcall.h sees it
 * (xcall.h, the ABI note): @size bytes of it, of which this library fills
 * the counters it knows and zeroes the rest.
 */
static void stats_out(void *out, const struct xc_stats *full, size_t size)
{
	size_t known = size < sizeof(*full) ? size : sizeof(*full);

	memcpy(out, full, known);
	memset((char *)out + known, 0, size - known);
}

/* ... and one read in: the counters it holds, zeroes for those it lacks. */
static void stats_in(struct xc_stats *full, const void *in, size_t size)
{
	memset(full, 0, sizeof(*full));
	memcpy(full, in, size < sizeof(*full) ? size : sizeof(*full));
}

static int stats_get_sized(int cpu, struct xc_stats *out, size_t size)
{
	struct xc_stats full;
	int ret;

	if (!out)
		return -EINVAL;
	ret = stats_get(cpu, &full);
	if (!ret)
		stats_out(out, &full, size);
	return ret;
}

int xc_stats_get_sz(int cpu, struct xc_stats *out, size_t size)
{
	return XC_GUARDED(stats_get_sized(cpu, out, size));
}

/*
 * out = a + sign * b, counter by counter, by the list; a VALUE is the later
 * reading's: @a's in a delta (a - b: later - earlier), @b's in a sum.
 */
#define COMBINE_COUNT(name) x.name = sign > 0 ? x.name + y.name : x.name - y.name;
#define COMBINE_VALUE(name) x.name = sign > 0 ? y.name : x.name;
#define COMBINE(name, by, kind, meaning) COMBINE_##kind(name)

static void stats_combine(struct xc_stats *out, const struct xc_stats *a, const struct xc_stats *b,
			  int sign)
{
	struct xc_stats x = *a, y = *b;	/* copies: @out may be either */

	XC_STATS_COUNTERS(COMBINE)
	*out = x;
}

void xc_stats_delta_sz(struct xc_stats *out, const struct xc_stats *earlier, const struct xc_stats *later,
		       size_t size)
{
	struct xc_stats e, l;

	stats_in(&e, earlier, size);
	stats_in(&l, later, size);
	stats_combine(&l, &l, &e, -1);
	stats_out(out, &l, size);
}

void xc_stats_add_sz(struct xc_stats *sum, const struct xc_stats *add, size_t size)
{
	struct xc_stats s, a;

	stats_in(&s, sum, size);
	stats_in(&a, add, size);
	stats_combine(&s, &s, &a, 1);
	stats_out(sum, &s, size);
}
