/* SPDX-License-Identifier: MIT */
/*
 * pingpong.c - the comparison rows, all between the same two CPUs in one run:
 * the cache-line limit, the sleeping baselines, and libxcall waiting calls to
 * a polling worker, to a worker with no poll window called back to back (it
 * is often caught before it sleeps), and to a worker that is asleep (an idle
 * gap before each call, untimed). Each row is also given as a ratio of its
 * median to the limit's.
 */
#include "baselines.h"

#include <string.h>

enum { O_GAP = 1 };

static const struct cmd_opt pp_opts[] = {
	{"gap-us", required_argument, O_GAP, "US    libxcall-sleeping: idle gap after the target went to sleep (default 20)"},
	{0},
};

static int on_opt(int id, const char *arg, void *ctx)
{
	long *gap_us = ctx;
	return id == O_GAP ? parse_long(arg, 0, 1000000, gap_us) : -1;
}

static const struct cmd_desc desc = {
	.name = "pingpong",
	.summary = "round trips between two CPUs: cache-line limit, futex, eventfd, pipe, condvar, libxcall",
	.opts = pp_opts,
	.on_opt = on_opt,
	.default_iters = 100000,
};

struct pp_case {
	const char *name;
	int kind;               /* enum pp_kind, or -1 libxcall */
	long poll_ns;
	bool gap;               /* wait until the target sleeps before each call */
	unsigned ablate;        /* XC_ABLATE_SLOT: the same call through the queue */
};

/*
 * The polling call runs right after the limit: on a VM the host may move the
 * two vCPUs between caches within seconds, and the ratio of those two rows
 * is the one that matters, so nothing slow runs between them.
 */
static const struct pp_case cases[] = {
	{"cacheline", PP_CACHELINE, 0, false, 0},
	{"libxcall-polling", -1, XC_POLL_FOREVER, false, 0},
	{"libxcall-polling-queue", -1, XC_POLL_FOREVER, false, XC_ABLATE_SLOT},
	{"futex", PP_FUTEX, 0, false, 0},
	{"eventfd", PP_EVENTFD, 0, false, 0},
	{"pipe", PP_PIPE, 0, false, 0},
	{"condvar", PP_CONDVAR, 0, false, 0},
	{"libxcall-pollnone", -1, XC_POLL_NONE, false, 0},
	{"libxcall-sleeping", -1, XC_POLL_NONE, true, 0},
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

int cmd_pingpong(int argc, char **argv)
{
	struct bopts o;
	long gap_us = 20;
	cli_parse(&desc, argc, argv, &o, &gap_us);
	if (o.ncpus < 2)
		cli_fail(desc.name, "needs 2 CPUs in --cpus, got %d", o.ncpus);
	int a = o.cpu[0], b = o.cpu[1];
	char pair[32];
	snprintf(pair, sizeof(pair), "%d,%d", a, b);
	struct rec *first = NULL;
	struct hist h;
	if (hist_init(&h))
		return 1;

	for (int rep = 0; rep < o.repeat; rep++) {
		struct rec *limit = NULL;
		for (size_t c = 0; c < NCASES; c++) {
			struct budget bud;
			budget_init(&bud, &o, desc.default_iters);
			hist_reset(&h);
			progress("pingpong: %s, cpus %s, repeat %d", cases[c].name, pair, rep);
			struct xh_timed_out d = {0};
			struct xh_timed x = {.gap = cases[c].gap, .gap_ns = (uint64_t)gap_us * 1000};
			long n;
			if (cases[c].kind >= 0) {
				n = pp_run(cases[c].kind, a, b, &bud, &h);
			} else {
				if (xh_up(&o, pair, cases[c].poll_ns, cases[c].ablate))
					return 1;
				n = xh_time_calls_x(a, b, XC_WAIT, &bud, &h, &x, &d);
				xh_down();
			}
			if (n < 0)
				return 1;
			struct rec *r = rec_new("pingpong", cases[c].name, "ns", "lower", rep);
			rec_hist(r, &h);
			int cl[2] = {a, b};
			rec_cpu_list(r, cl, 2);
			rec_param_i(r, "iterations", n);
			rec_param_i(r, "warmup", warmup_iters(bud.iters));
			if (cases[c].kind < 0) {
				char pb[32];
				rec_param_s(r, "poll", poll_name(cases[c].poll_ns, pb, sizeof(pb)));
				rec_param_i(r, "idle_gap", cases[c].gap);
				if (cases[c].gap) {
					rec_param_i(r, "gap_us", gap_us);
					rec_counter(r, "gap_timeouts", d.gap_timeouts);
				}
				rec_xc_counters(r, &d.delta);
				rec_xc_target_counters(r, &d.target);
			}
			if (!limit)
				limit = r;
			if (limit->s.p50 > 0)
				rec_param_d(r, "ratio_to_limit", r->s.p50 / limit->s.p50);
			if (!first)
				first = r;
		}
	}
	hist_free(&h);

	if (g_out.quiet)
		return 0;
	if (g_out.csv) {
		out_csv(stdout, first);
		return 0;
	}
	printf("\npingpong: round trip between CPU %d and CPU %d (ratio = p50 / cache-line p50;\n"
	       "kicks/call = futex wakes the target got per call; sleeping = an idle gap of %ld us after\n"
	       "the target went to sleep before each call, untimed)\n", a, b, gap_us);
	printf("%-20s %4s %9s %10s %10s %10s %10s %10s %8s %10s\n", "case", "rep", "n", "mean", "p50",
	       "p90", "p99", "max", "ratio", "kicks/call");
	for (struct rec *r = first; r; r = r->next) {
		char x[6][32];
		double ratio = 0;
		for (int i = 0; i < r->nparams; i++)
			if (!strcmp(r->params[i].key, "ratio_to_limit"))
				ratio = r->params[i].d;
		long long tc = rec_counter_get(r, "targets_calls", 0);
		if (tc > 0)
			snprintf(x[5], 32, "%.2f", (double)rec_counter_get(r, "targets_kicks_sent", 0) / (double)tc);
		else
			snprintf(x[5], 32, "-");
		printf("%-20s %4d %9llu %10s %10s %10s %10s %10s %7.1fx %10s\n", r->kase, r->repeat,
		       (unsigned long long)r->s.n, fmt_ns(r->s.mean, x[0], 32), fmt_ns(r->s.p50, x[1], 32),
		       fmt_ns(r->s.p90, x[2], 32), fmt_ns(r->s.p99, x[3], 32), fmt_ns(r->s.max, x[4], 32),
		       ratio, x[5]);
	}
	return 0;
}
