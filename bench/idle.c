/* SPDX-License-Identifier: MIT */
/*
 * idle.c - seed 001: what a call to an idle CPU costs the sender, and what
 * keeping CPUs ready costs in CPU time.
 *
 * Part 1: sender-side time of a nowait call (ns, and TSC cycles where the TSC
 * is invariant, as the seed counts cycles) to a target that is polling, that
 * is asleep (poll none; we wait until its sleep counter moved before each
 * call), and polling with elision ablated (the sender futex-wakes anyway).
 * Part 2: over a mostly idle period with one waiting call to every CPU each
 * --period-us, the CPU time the workers burn (percent of the CPUs' time) and
 * the call latency, for each poll policy: none, fixed window, adaptive, forever.
 */
#include "bench.h"
#include "idle.h"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

enum { O_IDLE_SECONDS = 1, O_PERIOD, O_WINDOW };

static const struct cmd_opt idle_opts[] = {
	{"idle-seconds", required_argument, O_IDLE_SECONDS, "S  length of each mostly-idle period (default 2)"},
	{"period-us", required_argument, O_PERIOD, "US    one call to every CPU per period (default 1000)"},
	{"window", required_argument, O_WINDOW, "NS       the fixed poll window of part 2 (default 50000)"},
	{0},
};

static int on_opt(int id, const char *arg, void *ctx)
{
	struct idle_cfg *c = ctx;
	switch (id) {
	case O_IDLE_SECONDS: return parse_double(arg, 0.01, 3600, &c->idle_seconds);
	case O_PERIOD: return parse_long(arg, 10, 10000000, &c->period_us);
	case O_WINDOW: return parse_long(arg, 1, 1000000000, &c->window_ns);
	}
	return -1;
}

static const struct cmd_desc desc = {
	.name = "idle",
	.summary = "seed 001: sender cost of a nowait call to a polling / sleeping target; CPU burnt per poll policy",
	.opts = idle_opts,
	.on_opt = on_opt,
	.default_iters = 20000,
};

struct sender_run {
	int target;
	bool wait_asleep;
	struct budget b;
	struct hist *ns, *cyc;
	_Atomic uint32_t ran;
	struct xc_stats delta;
	long done, not_asleep;
	int err;
};

static void mark_ran(void *arg)
{
	atomic_store_explicit((_Atomic uint32_t *)arg, 1, memory_order_release);
}

static void sender_loop(void *arg)
{
	struct sender_run *r = arg;
	long warm = warmup_iters(r->b.iters);
	struct xc_stats s0, s1;
	long i = -warm;
	budget_warm(&r->b);
	for (;;) {
		if (i < 0 && !warm_more(&r->b, i + warm, warm))
			i = 0;
		if (i == 0) {
			xh_stats(-1, &s0);
			budget_start(&r->b);
		}
		if (i >= 0 && !budget_more(&r->b, i))
			break;
		struct xc_stats st;
		xh_stats(r->target, &st);
		atomic_store(&r->ran, 0);
		uint64_t c0 = rdtsc_raw(), t0 = now_ns();
		r->err = xc_call_single(r->target, mark_ran, &r->ran, 0);
		uint64_t t1 = now_ns(), c1 = rdtsc_raw();
		if (r->err)
			break;
		if (i >= 0) {
			hist_add(r->ns, t1 - t0);
			hist_add(r->cyc, c1 - c0);
		}
		/* the next call must find the target idle again: ran, and (asleep) back in its sleep */
		while (!atomic_load_explicit(&r->ran, memory_order_acquire))
			cpu_relax();
		if (r->wait_asleep) {
			uint64_t until = now_ns() + 2000000, end = r->b.deadline ? r->b.deadline : r->b.warm_until;
			if (end && end < until)
				until = end;
			struct xc_stats now;
			do
				xh_stats(r->target, &now);
			while (now.sleeps <= st.sleeps && now_ns() < until);
			r->not_asleep += now.sleeps <= st.sleeps;
		}
		i++;
	}
	xh_stats(-1, &s1);
	xc_stats_delta(&r->delta, &s0, &s1);
	r->done = i;
}

static struct rec *first;

static int part1(const struct bopts *o, int rep)
{
	static const struct { const char *name; long poll; unsigned ablate; } cases[] = {
		{"polling", XC_POLL_FOREVER, 0},
		{"asleep", XC_POLL_NONE, 0},
		{"polling-noelide", XC_POLL_FOREVER, XC_ABLATE_ELIDE},
	};
	struct hist hn, hc;
	hist_init(&hn);
	hist_init(&hc);
	char pair[32];
	snprintf(pair, sizeof(pair), "%d,%d", o->cpu[0], o->cpu[1]);
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		progress("idle: nowait call to a %s target, repeat %d", cases[c].name, rep);
		if (plan_late()) {
			for (int k = 0; k < 1 + g_tsc_ok; k++) {
				char name[64];
				snprintf(name, sizeof(name), "sender-%s%s", k ? "cycles-" : "", cases[c].name);
				rec_skipped("idle", name, PLAN_LATE_WHY, rep);
			}
			continue;
		}
		if (xh_up(o, pair, cases[c].poll, cases[c].ablate))
			return -1;
		struct sender_run *r = calloc(1, sizeof(*r));
		r->target = o->cpu[1];
		r->wait_asleep = cases[c].poll == XC_POLL_NONE;
		budget_init(&r->b, o, desc.default_iters);
		hist_reset(&hn);
		hist_reset(&hc);
		r->ns = &hn;
		r->cyc = &hc;
		void *args[1] = {r};
		int err = xh_run_on(&o->cpu[0], 1, sender_loop, args);
		xh_down();
		if (err || r->err) {
			free(r);
			return -1;
		}
		for (int k = 0; k < 1 + g_tsc_ok; k++) {
			char name[64];
			snprintf(name, sizeof(name), "sender-%s%s", k ? "cycles-" : "", cases[c].name);
			struct rec *x = rec_new("idle", name, k ? "cycles" : "ns", "lower", rep);
			rec_hist(x, k ? &hc : &hn);
			int cl[2] = {o->cpu[0], o->cpu[1]};
			rec_cpu_list(x, cl, 2);
			rec_param_i(x, "iterations", r->done);
			rec_param_s(x, "target", cases[c].name);
			rec_xc_counters(x, &r->delta);
			rec_counter(x, "not_asleep", r->not_asleep);
			if (!first)
				first = x;
		}
		free(r);
	}
	hist_free(&hn);
	hist_free(&hc);
	return 0;
}

static double cpu_seconds_process(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static double cpu_seconds_thread(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

long idle_periodic_calls(uint64_t end, long period_us, bool call, struct hist *h)
{
	struct timespec next;
	long calls = 0;

	clock_gettime(CLOCK_MONOTONIC, &next);
	while (now_ns() < end) {
		if (call) {
			uint64_t t0 = ticks();
			int n = xc_call_all(xh_noop, NULL, XC_WAIT);
			hist_add(h, ticks_span_ns(t0, ticks()));
			if (n < 0)
				break;
			calls++;
		}
		next.tv_nsec += period_us * 1000;
		while (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	return calls;
}

static int part2(const struct bopts *o, const struct idle_cfg *c, int rep)
{
	const struct { const char *name; long poll; } pol[] = {
		{"none", XC_POLL_NONE}, {"fixed", c->window_ns}, {"adaptive", XC_POLL_ADAPTIVE},
		{"forever", XC_POLL_FOREVER},
	};
	struct hist h;
	hist_init(&h);
	for (size_t p = 0; p < sizeof(pol) / sizeof(pol[0]); p++) {
		progress("idle: %.1f s mostly idle, poll %s, repeat %d", c->idle_seconds, pol[p].name, rep);
		if (plan_late()) {
			char name[64];
			snprintf(name, sizeof(name), "cpu/%s", pol[p].name);
			rec_skipped("idle", name, PLAN_LATE_WHY, rep);
			snprintf(name, sizeof(name), "latency/%s", pol[p].name);
			rec_skipped("idle", name, PLAN_LATE_WHY, rep);
			continue;
		}
		if (xh_up(o, NULL, pol[p].poll, 0))
			return -1;
		hist_reset(&h);
		struct xc_stats s0, s1, d;
		xh_stats(-1, &s0);
		double p0 = cpu_seconds_process(), m0 = cpu_seconds_thread();
		uint64_t w0 = now_ns(), end = w0 + (uint64_t)(c->idle_seconds * 1e9);
		/* a period cut short by the plan's end for the case is a capped one */
		uint64_t case_end = plan_case_end();
		bool cut = case_end && case_end < end;
		if (cut)
			end = case_end;
		long calls = idle_periodic_calls(end, c->period_us, true, &h);
		double wall = (double)(now_ns() - w0) / 1e9;
		if (cut)
			plan_capped();
		double workers = (cpu_seconds_process() - p0) - (cpu_seconds_thread() - m0);
		xh_stats(-1, &s1);
		xc_stats_delta(&d, &s0, &s1);
		xh_down();
		char name[64], wb[32];
		snprintf(name, sizeof(name), "cpu/%s", pol[p].name);
		struct rec *x = rec_new("idle", name, "pct", "lower", rep);
		rec_value(x, workers < 0 ? 0 : 100.0 * workers / (wall * o->ncpus));
		rec_cpus(x, &o->cpus);
		rec_param_s(x, "poll", poll_name(pol[p].poll, wb, sizeof(wb)));
		rec_param_d(x, "seconds", wall);
		rec_param_i(x, "period_us", c->period_us);
		rec_param_i(x, "calls", calls);
		rec_xc_counters(x, &d);
		snprintf(name, sizeof(name), "latency/%s", pol[p].name);
		x = rec_new("idle", name, "ns", "lower", rep);
		rec_hist(x, &h);
		rec_cpus(x, &o->cpus);
		rec_param_s(x, "poll", wb);
		rec_param_i(x, "iterations", calls);
		rec_xc_counters(x, &d);
		if (!first)
			first = x;
	}
	hist_free(&h);
	return 0;
}

int cmd_idle(int argc, char **argv)
{
	struct idle_cfg c = {.idle_seconds = 2, .period_us = 1000, .window_ns = 50000};
	struct bopts o;
	cli_parse(&desc, argc, argv, &o, &c);
	if (o.ncpus < 2)
		cli_fail(desc.name, "%s", cli_too_few_cpus(&o, 2));
	first = NULL;
	struct rec *mark = rec_last();
	/*
	 * part 1: three budgeted cases on two CPUs; part 2: four fixed idle periods on all;
	 * part 3: eight half periods on two
	 */
	plan_cases(3L * o.repeat, plan_case_s(&o) + plan_start_cost(2));
	plan_cases(4L * o.repeat, c.idle_seconds + 0.1 + plan_start_cost(o.ncpus));
	plan_cases(8L * o.repeat, c.idle_seconds / 2 + 0.1 + plan_start_cost(2));
	plan_start(NULL);
	for (int rep = 0; rep < o.repeat; rep++)
		if (part1(&o, rep) || part2(&o, &c, rep) || idle_neighbours(&o, &c, rep))
			return 1;
	struct rec *from = mark ? mark->next : rec_first();
	if (g_out.quiet)
		return 0;
	if (g_out.csv) {
		out_csv(stdout, from);
		return 0;
	}
	printf("\nidle (seed 001): sender-side cost of a nowait call from CPU %d to idle CPU %d\n",
	       o.cpu[0], o.cpu[1]);
	printf("%-32s %4s %10s %10s %10s %10s\n", "case", "rep", "p50", "p90", "p99", "mean");
	for (struct rec *x = from; x; x = x->next) {
		if (strncmp(x->kase, "sender", 6))
			continue;
		if (!x->s.n) {
			printf("%-32s %4d  skipped: %s\n", x->kase, x->repeat, rec_param_str(x, "skipped"));
			continue;
		}
		char b[4][32];
		bool cyc = !strcmp(x->unit, "cycles");
		if (cyc)
			for (int i = 0; i < 4; i++)
				snprintf(b[i], 32, "%.0f cyc", i == 0 ? x->s.p50 : i == 1 ? x->s.p90 : i == 2 ? x->s.p99 : x->s.mean);
		printf("%-32s %4d %10s %10s %10s %10s\n", x->kase, x->repeat,
		       cyc ? b[0] : fmt_ns(x->s.p50, b[0], 32), cyc ? b[1] : fmt_ns(x->s.p90, b[1], 32),
		       cyc ? b[2] : fmt_ns(x->s.p99, b[2], 32), cyc ? b[3] : fmt_ns(x->s.mean, b[3], 32));
	}
	printf("\nidle: %.1f s with one waiting call to all CPUs every %ld us, per poll policy\n",
	       c.idle_seconds, c.period_us);
	printf("%-10s %4s %12s %12s %12s %10s %10s\n", "poll", "rep", "worker CPU", "call p50", "call p99",
	       "sleeps", "kicks");
	for (struct rec *x = from; x; x = x->next) {
		if (strncmp(x->kase, "cpu/", 4))
			continue;
		if (!x->s.n) {
			printf("%-10s %4d  skipped: %s\n", x->kase + 4, x->repeat, rec_param_str(x, "skipped"));
			continue;
		}
		char ln[64], b[2][32];
		snprintf(ln, sizeof(ln), "latency/%s", x->kase + 4);
		struct rec *l = rec_find("idle", ln, x->repeat);
		printf("%-10s %4d %11.2f%% %12s %12s %10lld %10lld\n", x->kase + 4, x->repeat, x->s.mean,
		       fmt_ns(l ? l->s.p50 : 0, b[0], 32), fmt_ns(l ? l->s.p99 : 0, b[1], 32),
		       rec_counter_get(x, "sleeps", 0), rec_counter_get(x, "kicks_sent", 0));
	}
	printf("\nidle: a thread on CPU %d beside its worker, while CPU %d calls as above\n", o.cpu[1], o.cpu[0]);
	printf("%-12s %4s %16s %14s %14s\n", "poll", "rep", "compute share", "sleep late p50",
	       "sleep late p99");
	for (struct rec *x = from; x; x = x->next) {
		if (strncmp(x->kase, "neighbour-compute/", 18))
			continue;
		const char *pol = x->kase + 18;
		char ln[64], b[3][32];
		snprintf(ln, sizeof(ln), "neighbour-sleep/%s", pol);
		struct rec *l = rec_find("idle", ln, x->repeat);
		if (!x->s.n)
			snprintf(b[0], 32, "skipped");
		else
			snprintf(b[0], 32, "%.1f%%", 100 * x->s.mean);
		printf("%-12s %4d %16s %14s %14s\n", pol, x->repeat, b[0],
		       l && l->s.n ? fmt_ns(l->s.p50, b[1], 32) : "skipped",
		       l && l->s.n ? fmt_ns(l->s.p99, b[2], 32) : "skipped");
	}
	return 0;
}
