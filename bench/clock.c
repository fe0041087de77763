/* SPDX-License-Identifier: MIT */
/*
 * clock.c - timestamps. The TSC is cheaper to read than clock_gettime()
 * (which matters when the thing timed is a ~100 ns cache-line round trip),
 * but only trustworthy when invariant; it is calibrated against
 * CLOCK_MONOTONIC here, else the monotonic clock is used throughout.
 */
#include "bench.h"

#include <limits.h>

#include <stdlib.h>
#include <string.h>

bool g_tsc_ok;
double g_tsc_ns_per_tick = 1.0;
uint64_t g_timer_floor_ticks;

/* The smallest of many back-to-back intervals: what ticks_span_ns() subtracts. */
static void timer_floor_measure(void)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 20000; i++) {
		uint64_t t0 = ticks();
		uint64_t t1 = ticks();

		if (t1 > t0 && t1 - t0 < best)
			best = t1 - t0;
	}
	g_timer_floor_ticks = best == UINT64_MAX ? 0 : best;
}

double timer_floor_ns(void)
{
	return (double)ticks_to_ns(g_timer_floor_ticks);
}

static void tsc_setup(void)
{
#if defined(__x86_64__) || defined(__i386__)
	const struct machine *m = machine_get();
	/* XCALL_BENCH_NO_TSC=1 forces the monotonic clock, to cross-check. */
	const char *no = getenv("XCALL_BENCH_NO_TSC");
	if (!m->tsc_invariant || (no && strcmp(no, "0")))
		return;
	/* Three 10 ms windows; keep the median ratio so one preemption cannot skew it. */
	double r[3];
	for (int i = 0; i < 3; i++) {
		uint64_t t0 = now_ns(), c0 = rdtsc_raw();
		while (now_ns() - t0 < 10000000)
			;
		uint64_t t1 = now_ns(), c1 = rdtsc_raw();
		r[i] = (double)(t1 - t0) / (double)(c1 - c0);
	}
	double a = r[0], b = r[1], c = r[2];
	double med = a > b ? (b > c ? b : (a > c ? c : a)) : (a > c ? a : (b > c ? c : b));
	if (med > 0 && med < 100) {
		g_tsc_ns_per_tick = med;
		g_tsc_ok = true;
	}
#endif
}

void clock_setup(void)
{
	tsc_setup();
	timer_floor_measure();
}

void spin_ns(uint64_t ns)
{
	uint64_t end = now_ns() + ns;
	while (now_ns() < end)
		cpu_relax();
}

void budget_init(struct budget *b, const struct bopts *o, long default_iters)
{
	b->iters = o->iterations ? o->iterations : default_iters;
	b->seconds = o->seconds;
	b->limit = o->case_limit;
	b->deadline = b->warm_until = 0;
	b->batch = 0;
}

void budget_warm(struct budget *b)
{
	double s = b->seconds > 0 ? b->seconds : b->limit;
	b->warm_until = s > 0 ? now_ns() + (uint64_t)(s * 1e9) : 0;
}

void budget_start(struct budget *b)
{
	double s = b->seconds > 0 ? b->seconds : b->limit;
	b->started = now_ns();
	b->deadline = s > 0 ? b->started + (uint64_t)(s * 1e9) : 0;
	b->next_check = 0;
}

bool budget_check(struct budget *b, long done)
{
	uint64_t t = now_ns();
	if (!b->deadline) {
		b->next_check = LONG_MAX;
		return true;
	}
	if (t >= b->deadline) {
		if (b->seconds <= 0)
			plan_capped();
		return false;
	}
	/*
	 * The next look after about 2 ms of operations at the rate so far, and
	 * within 64 operations: cheap beside fast ones, prompt with slow ones
	 * (a wakeup where CPUs are shared can take milliseconds).
	 */
	double per_op = done > 0 ? (double)(t - b->started) / (double)done : 2e6;
	long step = per_op > 0 ? (long)(2e6 / per_op) : 64;
	b->next_check = done + (step < 1 ? 1 : step > 64 ? 64 : step);
	return true;
}

double budget_case_s(const struct bopts *o)
{
	return o->seconds > 0 ? o->seconds : o->case_limit;
}
