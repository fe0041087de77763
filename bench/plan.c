/* SPDX-License-Identifier: MIT */
/*
 * plan.c - bounded time. Before its first case a subcommand declares what it
 * will run: how many cases, and the most each may take (its --seconds, or
 * --case-limit when it counts iterations), plus fixed costs such as starting
 * a runtime. The sum is printed before anything runs; each case's budget
 * stops it at its limit (budget_more(), and the loops that count by hand),
 * so the sum is a bound, not a guess. Progress lines carry the place, the
 * time used and what is left; the end says how long it took against the
 * bound, and the results file keeps both, per subcommand.
 *
 * A case's own limit is not enough on a loaded machine: what cannot be cut
 * (a runtime's start, a join, one operation) may take longer than its share.
 * So each case also ends by what the plan leaves it: the bound, less the
 * cheapest share of every case still to come and the stopping half of the
 * fixed costs, less a tail for its own teardown (plan_case_end()). A case
 * that starts late gets what is left, and none if not even the least a case
 * costs here and now fits (plan_late(): it is skipped, saying why); a case on
 * time never meets that end before its own limit.
 */
#include "bench.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct plan g_plan;

static struct plan_done done_list[64];
static int ndone;

/* Starting and stopping a runtime or a baseline's threads: a generous bound. */
double plan_start_cost(int ncpus)
{
	return 0.5 + 0.05 * ncpus;      /* up and down again; 16 emulated CPUs take about 1 s */
}

double plan_case_s(const struct bopts *o)
{
	/* a warm-up of at most a tenth of the count (100 at least), then the timed loop */
	return 2 * budget_case_s(o) + 0.1;
}

void plan_reset(const char *cmd, double case_limit, int ncpus)
{
	memset(&g_plan, 0, sizeof(g_plan));
	g_plan.ncpus = ncpus;
	snprintf(g_plan.cmd, sizeof(g_plan.cmd), "%s", cmd);
	g_plan.case_limit = case_limit;
}

void plan_cases(long cases, double each_s)
{
	if (cases <= 0)
		return;
	g_plan.cases += cases;
	g_plan.bound_s += (double)cases * each_s;
	if (!g_plan.min_case_s || each_s < g_plan.min_case_s)
		g_plan.min_case_s = each_s;
}

void plan_fixed(double s)
{
	g_plan.bound_s += s;
	g_plan.fixed_s += s;
}

/*
 * What a case keeps after its loops stopped: the records, a runtime's xc_exit,
 * a join; at least as long as the longest such step took so far (plan_uncut).
 */
#define PLAN_TAIL_S 0.1

/*
 * The current case's end: the bound less what the cases after it keep, and
 * half the fixed costs: a fixed cost is a start and a stop (a runtime up and
 * down again), and the stop may still be to come.
 */
static void plan_case_reserve(void)
{
	long after = g_plan.cases - g_plan.stepped;
	double uncut = g_plan.uncut_s;
	double keep = (g_plan.fixed_s / 2 > uncut ? g_plan.fixed_s / 2 : uncut) +
		      (double)(after > 0 ? after : 0) * g_plan.min_case_s;
	double until = g_plan.bound_s - keep;
	double end = until - (PLAN_TAIL_S > uncut ? PLAN_TAIL_S : uncut);
	g_plan.case_until = g_plan.t0 + (uint64_t)((until > 0 ? until : 0) * 1e9);
	g_plan.case_end = g_plan.t0 + (uint64_t)((end > 0 ? end : 0) * 1e9);
}

uint64_t plan_case_end(void)
{
	return g_plan.started && g_plan.stepped ? g_plan.case_end : 0;
}

bool plan_overdue(void)
{
	uint64_t end = plan_case_end();
	return end && now_ns() >= end;
}

bool plan_late(void)
{
	if (!plan_case_end())
		return false;
	/*
	 * The least a case costs here and now: the quickest case so far (from its
	 * progress line to the next), or the slowest start or stop of a runtime or
	 * threads, which every case has. It starts only if that still ends in time.
	 */
	double least = g_plan.quickest_s > g_plan.uncut_s ? g_plan.quickest_s : g_plan.uncut_s;
	if (now_ns() + (uint64_t)(least * 1e9) <= g_plan.case_until)
		return false;
	g_plan.step_skipped = true;
	plan_capped();
	return true;
}

/* "45 s", "3m05s", "2h10m" */
const char *fmt_secs(double s, char *buf, size_t size)
{
	if (s < 100)
		snprintf(buf, size, "%.*f s", s < 10 ? 1 : 0, s);
	else if (s < 6000)
		snprintf(buf, size, "%dm%02ds", (int)s / 60, (int)s % 60);
	else
		snprintf(buf, size, "%dh%02dm", (int)(s / 3600), (int)s / 60 % 60);
	return buf;
}

void plan_start(const char *what)
{
	char b[32];
	out_header();   /* the machine first: the command line is good by now */
	oversub_begin(g_plan.ncpus);
	g_plan.t0 = now_ns();
	g_plan.started = true;
	if (g_out.quiet)
		return;
	fprintf(stderr, "xcall-bench %s: %ld case%s%s%s, at most %s", g_plan.cmd, g_plan.cases,
		g_plan.cases == 1 ? "" : "s", what ? " " : "", what ? what : "",
		fmt_secs(g_plan.bound_s, b, sizeof(b)));
	if (g_plan.case_limit > 0)
		fprintf(stderr, " (each stops at --case-limit %g s)", g_plan.case_limit);
	fputc('\n', stderr);
}

/* The step before ends now: what it took, unless it was a skip, is a candidate for the quickest. */
static void step_close(void)
{
	uint64_t now = now_ns();
	if (g_plan.stepped && !g_plan.step_skipped) {
		double took = (double)(now - g_plan.step_t) / 1e9;
		if (!g_plan.quickest_s || took < g_plan.quickest_s)
			g_plan.quickest_s = took;
	}
	g_plan.step_t = now;
}

/* The bracket in front of a progress line: "[3/40 1.2 s, ~10 s left, at most 1m05s]". */
void plan_step(char *buf, size_t size)
{
	buf[0] = 0;
	if (!g_plan.started)
		return;
	/* what the case before took, unless it was skipped: the quickest so far */
	step_close();
	g_plan.step_skipped = false;
	long i = ++g_plan.stepped;
	plan_case_reserve();
	double used = (double)(now_ns() - g_plan.t0) / 1e9;
	double bound_left = g_plan.bound_s > used ? g_plan.bound_s - used : 0;
	char a[32], b[32], c[32];
	if (i > 1 && i <= g_plan.cases) {
		/* from the cases so far; never more than the bound allows */
		double guess = used / (double)(i - 1) * (double)(g_plan.cases - i + 1);
		snprintf(buf, size, "[%ld/%ld %s, ~%s left, at most %s] ", i, g_plan.cases,
			 fmt_secs(used, a, 32), fmt_secs(guess < bound_left ? guess : bound_left, b, 32),
			 fmt_secs(bound_left, c, 32));
	} else {
		snprintf(buf, size, "[%ld/%ld %s] ", i, g_plan.cases, fmt_secs(used, a, 32));
	}
}

void plan_skip(void)
{
	if (g_plan.started)
		step_close();
	g_plan.step_skipped = true;
	g_plan.stepped++;
	if (g_plan.started)
		plan_case_reserve();
}

void plan_uncut(double s)
{
	if (s > g_plan.uncut_s)
		g_plan.uncut_s = s;
	if (g_plan.started && g_plan.stepped)
		plan_case_reserve();
}

void plan_capped(void)
{
	atomic_fetch_add_explicit(&g_plan.capped, 1, memory_order_relaxed);
}

void plan_end(void)
{
	if (!g_plan.started)
		return;
	g_plan.started = false;
	oversub_end(g_plan.cmd);
	double wall = (double)(now_ns() - g_plan.t0) / 1e9;
	long capped = atomic_load_explicit(&g_plan.capped, memory_order_relaxed);
	if (ndone < (int)(sizeof(done_list) / sizeof(done_list[0]))) {
		struct plan_done *d = &done_list[ndone++];
		*d = (struct plan_done){.wall_s = wall, .bound_s = g_plan.bound_s,
					.cases = g_plan.cases, .capped = capped};
		snprintf(d->cmd, sizeof(d->cmd), "%s", g_plan.cmd);
	}
	if (g_out.quiet)
		return;
	char a[32], b[32];
	fprintf(stderr, "xcall-bench %s: took %s (at most %s)\n", g_plan.cmd, fmt_secs(wall, a, 32),
		fmt_secs(g_plan.bound_s, b, 32));
	if (capped)
		fprintf(stderr, "xcall-bench %s: %ld timed loop%s stopped at --case-limit %g s before "
			"their iterations; their n is what ran\n", g_plan.cmd, capped,
			capped == 1 ? "" : "s", g_plan.case_limit);
}

int plan_done_list(const struct plan_done **out)
{
	*out = done_list;
	return ndone;
}
