/* SPDX-License-Identifier: MIT */
/*
 * idle_neighbour.c - idle's part 3: what a worker's poll costs the other
 * threads of its CPU. With no runtime, and then per poll policy (none,
 * adaptive, forever), while the main thread, on the first CPU, makes one
 * waiting call to every CPU each --period-us (with no runtime it only
 * sleeps the same periods), a thread pinned to the second CPU, a worker's:
 *   neighbour-compute/<policy>: runs a busy loop, reading the clock after
 *     every chunk of about 1 ms; its loop rate over the rate with no
 *     runtime, measured in the same repeat (a ratio);
 *   neighbour-sleep/<policy>: sleeps in 1 ms periods (clock_nanosleep to an
 *     absolute time); how late each wake is.
 * A spin that never gave way would take half the CPU from the compute
 * thread under the forever policy (the scheduler splits a CPU between two
 * runnable threads); the sleeping thread is the guard that giving way costs
 * a waking thread nothing.
 */
#include "bench.h"
#include "idle.h"

#include <stdlib.h>
#include <string.h>

struct neighbour {
	uint64_t end;
	bool sleeper;
	long loops;		/* compute: iterations done */
	double seconds;		/* compute: over this time */
	struct hist *late;	/* sleep: lateness per wake */
};

/* About 1 ms of the compute loop on a 2 GHz core; the clock is read once per chunk. */
#define CHUNK 400000L

static void *neighbour_main(void *arg)
{
	struct neighbour *n = arg;
	uint64_t t0 = now_ns(), now = t0;

	if (n->sleeper) {
		struct timespec next;

		clock_gettime(CLOCK_MONOTONIC, &next);
		while (now < n->end) {
			next.tv_nsec += 1000000;
			if (next.tv_nsec >= 1000000000) {
				next.tv_nsec -= 1000000000;
				next.tv_sec++;
			}
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
			now = now_ns();
			uint64_t due = (uint64_t)next.tv_sec * 1000000000u + (uint64_t)next.tv_nsec;
			hist_add(n->late, now > due ? now - due : 0);
		}
		return NULL;
	}
	volatile uint64_t sink = 1;
	while (now < n->end) {
		uint64_t x = sink;
		for (long i = 0; i < CHUNK; i++)
			x = x * 6364136223846793005u + 1442695040888963407u;
		sink = x;
		n->loops += CHUNK;
		now = now_ns();
	}
	n->seconds = (double)(now - t0) / 1e9;
	return NULL;
}

/* One period: the neighbour on the second CPU, the calls (runtime up) or sleeps from the first. */
static int neighbour_run(const struct bopts *o, const struct idle_cfg *c, bool runtime,
			 struct neighbour *n, struct hist *calls)
{
	pthread_t t;
	double seconds = c->idle_seconds / 2;
	uint64_t end = now_ns() + (uint64_t)(seconds * 1e9), case_end = plan_case_end();

	if (case_end && case_end < end) {
		end = case_end;
		plan_capped();
	}
	n->end = end;
	if (pin_self(o->cpu[0]))
		return -1;
	if (thread_start_pinned(&t, o->cpu[1], neighbour_main, n)) {
		unpin_self();
		return -1;
	}
	idle_periodic_calls(end, c->period_us, runtime, calls);
	pthread_join(t, NULL);
	unpin_self();
	return 0;
}

int idle_neighbours(const struct bopts *o, const struct idle_cfg *c, int rep)
{
	const struct { const char *name; long poll; bool runtime; } cfg[] = {
		{"no-runtime", 0, false}, {"none", XC_POLL_NONE, true},
		{"adaptive", XC_POLL_ADAPTIVE, true}, {"forever", XC_POLL_FOREVER, true},
	};
	struct hist late, calls;
	double base_rate = 0;
	char pair[32];

	snprintf(pair, sizeof(pair), "%d,%d", o->cpu[0], o->cpu[1]);
	hist_init(&late);
	hist_init(&calls);
	for (size_t p = 0; p < sizeof(cfg) / sizeof(cfg[0]); p++) {
		for (int sleeper = 0; sleeper < 2; sleeper++) {
			char name[64], wb[32];
			struct neighbour n = { .sleeper = sleeper, .late = &late };

			snprintf(name, sizeof(name), "neighbour-%s/%s", sleeper ? "sleep" : "compute",
				 cfg[p].name);
			progress("idle: a %s thread beside the worker of CPU %d, %s, repeat %d",
				 sleeper ? "sleeping" : "computing", o->cpu[1], cfg[p].name, rep);
			if (plan_late() || (!sleeper && p && base_rate <= 0)) {
				rec_skipped("idle", name, plan_late() ? PLAN_LATE_WHY : "no baseline rate", rep);
				continue;
			}
			if (cfg[p].runtime && xh_up(o, pair, cfg[p].poll, 0))
				return -1;
			hist_reset(&late);
			hist_reset(&calls);
			int err = neighbour_run(o, c, cfg[p].runtime, &n, &calls);
			if (cfg[p].runtime)
				xh_down();
			if (err)
				return -1;
			struct rec *x;
			if (sleeper) {
				x = rec_new("idle", name, "ns", "lower", rep);
				rec_hist(x, &late);
			} else {
				double rate = n.seconds > 0 ? (double)n.loops / n.seconds : 0;
				if (!p)
					base_rate = rate;
				/* a ratio, not a share of the CPU: a disturbed baseline can put it past 1 */
				x = rec_new("idle", name, "ratio", "higher", rep);
				rec_value(x, rate / base_rate);
				rec_param_d(x, "loops_per_s", rate);
				rec_param_d(x, "no_runtime_loops_per_s", base_rate);
			}
			int cl[2] = {o->cpu[0], o->cpu[1]};
			rec_cpu_list(x, cl, 2);
			rec_param_s(x, "poll", cfg[p].runtime ? poll_name(cfg[p].poll, wb, sizeof(wb)) : "no runtime");
			rec_param_i(x, "period_us", c->period_us);
			if (cfg[p].runtime)
				rec_param_d(x, "call_p50_ns", hist_quantile(&calls, 0.5));
		}
	}
	hist_free(&late);
	hist_free(&calls);
	return 0;
}
