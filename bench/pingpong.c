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

enum { O_GAP = 1, O_CASES };

static const struct cmd_opt pp_opts[] = {
	{"gap-us", required_argument, O_GAP, "US    libxcall-sleeping: idle gap after the target went to sleep (default 20)"},
	{"cases", required_argument, O_CASES, "LIST   only these cases, comma-separated (default: all): cacheline,\n"
	 "                  libxcall-polling, libxcall-polling-queue, futex, eventfd, pipe,\n"
	 "                  condvar, libxcall-pollnone, libxcall-sleeping"},
	{0},
};

static int on_opt(int id, const char *arg, void *ctx);

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
 * The first two rows are measured paired (paired.c): in alternating blocks
 * within one runtime, the limit rotating over several lines, because their
 * ratio is the one that matters and a VM's host changes what a line costs
 * from one moment, and one line, to the next. The queue row runs right after.
 */
#define PAIRED_ROWS 2
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

struct pp_args {
	long gap_us;
	bool want[NCASES];      /* --cases; all false: every case */
};

static const char *case_name(int c)
{
	return cases[c].name;
}

static int on_opt(int id, const char *arg, void *ctx)
{
	struct pp_args *pa = ctx;

	if (id == O_GAP)
		return parse_long(arg, 0, 1000000, &pa->gap_us);
	if (id != O_CASES)
		return -1;
	parse_names(desc.name, "cases", arg, (int)NCASES, case_name, pa->want);
	return 0;
}

/* A row's record: what every case carries, and for libxcall cases their poll, gap and counters. */
static struct rec *row_new(size_t c, int rep, const struct hist *h, const int *cl, long n, long iters,
			   const struct xc_stats *delta, const struct xc_stats *target)
{
	struct rec *r = rec_new("pingpong", cases[c].name, "ns", "lower", rep);
	rec_hist(r, h);
	rec_cpu_list(r, cl, 2);
	rec_param_i(r, "iterations", n);
	rec_param_i(r, "warmup", warmup_iters(iters));
	if (cases[c].kind < 0) {
		char pb[32];
		rec_param_s(r, "poll", poll_name(cases[c].poll_ns, pb, sizeof(pb)));
		rec_param_i(r, "idle_gap", cases[c].gap);
		rec_xc_counters(r, delta);
		rec_xc_target_counters(r, target);
	}
	return r;
}

/*
 * Where the two CPUs' line lies, from the limit's round trip: the ratios
 * of the calls to it differ by phase (README), and a VM's vCPUs can move
 * between them within minutes (this project's AMD EPYC guest shows ~20,
 * ~55 and ~240 ns). Bounds: SMT siblings and a shared L2 measure under 35
 * ns; one last-level cache under 120; across dies or sockets beyond.
 */
struct line_phase {
	const char *name, *what;
};

static struct line_phase line_phase(double limit_ns)
{
	if (limit_ns < 35)
		return (struct line_phase){"near", "under 35 ns: one core's threads or a shared L2"};
	if (limit_ns < 120)
		return (struct line_phase){"mid", "35-120 ns: one last-level cache"};
	return (struct line_phase){"far", "120 ns or more: across dies or sockets"};
}

/* A batch-timed row: n round trips in spans of PAIR_SPAN, each span one sample. */
static void batch_params(struct rec *r, long n, int blocks)
{
	rec_param_i(r, "round_trips", n);
	rec_param_i(r, "batch", PAIR_SPAN);
	rec_param_i(r, "blocks", blocks);
	rec_param_s(r, "timing", "per round trip, from spans of batch round trips between two timestamps");
}

int cmd_pingpong(int argc, char **argv)
{
	struct bopts o;
	struct pp_args pa = {.gap_us = 20};
	bool all = true;
	cli_parse(&desc, argc, argv, &o, &pa);
	for (size_t c = 0; c < NCASES; c++)
		all &= !pa.want[c];
	long gap_us = pa.gap_us;
	if (o.ncpus < 2)
		cli_fail(desc.name, "%s", cli_too_few_cpus(&o, 2));
	int a = o.cpu[0], b = o.cpu[1];
	char pair[32];
	snprintf(pair, sizeof(pair), "%d,%d", a, b);
	struct rec *first = NULL;
	struct hist h, h2, hcas, hho, hsp, hcs, hop, hop2;
	if (hist_init(&h) || hist_init(&h2) || hist_init(&hcas) || hist_init(&hho) || hist_init(&hsp) ||
	    hist_init(&hcs) || hist_init(&hop) || hist_init(&hop2))
		return 1;
	bool want[NCASES];
	for (size_t c = 0; c < NCASES; c++)
		want[c] = all || pa.want[c];
	int cl[2] = {a, b};
	long steps = want[0] || want[1];
	for (size_t c = PAIRED_ROWS; c < NCASES; c++)
		steps += want[c];
	plan_cases(steps * o.repeat, plan_case_s(&o) + plan_start_cost(2));
	plan_start(NULL);

	for (int rep = 0; rep < o.repeat; rep++) {
		struct rec *row[NCASES] = {0};
		struct budget bud;
		budget_init(&bud, &o, desc.default_iters);

		if (want[0] || want[1]) {
			struct paired_in in = {.a = a, .b = b, .want_limit = want[0], .want_call = want[1],
					       .bud = bud, .h_limit = {&h, &hcas, &hho, &hsp, &hcs},
					       .h_call = &h2,
					       .h_limit_op = &hop, .h_call_op = &hop2};
			struct paired_out po;
			hist_reset(&h);
			hist_reset(&h2);
			hist_reset(&hcas);
			hist_reset(&hho);
			hist_reset(&hsp);
			hist_reset(&hcs);
			hist_reset(&hop);
			hist_reset(&hop2);
			progress("pingpong: %s%s%s paired, cpus %s, repeat %d", want[0] ? cases[0].name : "",
				 want[0] && want[1] ? " and " : "", want[1] ? cases[1].name : "", pair, rep);
			if (plan_late()) {
				for (int c = 0; c < PAIRED_ROWS; c++)
					if (want[c])
						rec_skipped("pingpong", cases[c].name, PLAN_LATE_WHY, rep);
				goto unpaired;
			}
			if (xh_up(&o, pair, cases[1].poll_ns, cases[1].ablate))
				return 1;
			long n = xh_paired(&in, &po);
			xh_down();
			if (n < 0)
				return 1;
			/* the limit is the lower of its two ways, store/load and CAS */
			int lower = po.limit_p50[LIMIT_CAS] > 0 && po.limit_p50[LIMIT_CAS] < po.limit_p50[LIMIT_STORE];
			for (int c = 0; c < PAIRED_ROWS; c++) {
				if (!want[c])
					continue;
				struct hist *hs = c == 0 ? (lower ? &hcas : &h) : &h2;
				struct rec *r = row[c] = row_new(c, rep, hs, cl, n, bud.iters,
								 &po.call_delta, &po.call_target);
				batch_params(r, n, po.blocks);
				if (c == 0) {
					rec_param_s(r, "method", lower ? "cas" : "store-load");
					rec_param_s(r, "line_phase", line_phase(r->s.p50).name);
					rec_param_i(r, "lines", PAIR_LINES);
					rec_param_d(r, "line_p50_min", po.line_p50_min);
					rec_param_d(r, "line_p50_max", po.line_p50_max);
				} else if (want[0]) {
					rec_param_d(r, "paired_ratio_p10", po.ratio_p10);
					rec_param_d(r, "paired_ratio_p50", po.ratio_p50);
					rec_param_d(r, "paired_ratio_p90", po.ratio_p90);
					rec_param_d(r, "paired_handoff_ratio_p50", po.handoff_ratio_p50);
					rec_param_d(r, "paired_code_ratio_p50", po.code_ratio_p50);
				}
				/* the tails: round trips timed one by one, each carrying the timer */
				struct rec *t = rec_new("pingpong", c ? "libxcall-polling/per-op" : "cacheline/per-op",
							"ns", "lower", rep);
				rec_hist(t, c ? &hop2 : &hop);
				rec_cpu_list(t, cl, 2);
				rec_param_i(t, "iterations", (long long)po.blocks * PAIR_TAIL);
				rec_param_d(t, "timer_floor_ns", timer_floor_ns());
				rec_param_s(t, "timing", "each round trip alone: for tails; the timer's own cost stays in");
			}
			static const char *const side_name[NLIMITS] = {
				[LIMIT_STORE] = "cacheline-store", [LIMIT_CAS] = "cacheline-cas",
				[LIMIT_HANDOFF] = "handoff-bare", [LIMIT_SPLIT] = "handoff-split",
				[LIMIT_CASSPUN] = "handoff-casspun"};
			for (int m = 0; m < NLIMITS && want[0]; m++) {
				struct rec *r = rec_new("pingpong", side_name[m], "ns", "lower", rep);
				rec_hist(r, in.h_limit[m]);
				rec_cpu_list(r, cl, 2);
				batch_params(r, n, po.blocks);
				rec_param_i(r, "lines", PAIR_LINES);
				if (m >= LIMIT_HANDOFF)
					rec_param_d(r, "paired_limit_ratio_p50", po.side_ratio_p50[m]);
			}
		}
unpaired:
		for (size_t c = PAIRED_ROWS; c < NCASES; c++) {
			if (!want[c])
				continue;
			budget_init(&bud, &o, desc.default_iters);
			if (!cases[c].gap)
				bud.batch = PAIR_SPAN;  /* back to back: batch-timed like the paired rows */
			hist_reset(&h);
			progress("pingpong: %s, cpus %s, repeat %d", cases[c].name, pair, rep);
			if (plan_late()) {
				rec_skipped("pingpong", cases[c].name, PLAN_LATE_WHY, rep);
				continue;
			}
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
			struct rec *r = row[c] = row_new(c, rep, &h, cl, n, bud.iters, &d.delta, &d.target);
			if (bud.batch > 1)
				rec_param_i(r, "batch", bud.batch);
			if (cases[c].gap) {
				rec_param_i(r, "gap_us", gap_us);
				rec_counter(r, "gap_timeouts", d.gap_timeouts);
			}
		}
		/* ratios only against the limit itself, when it ran */
		struct rec *limit = row[0];
		for (size_t c = 0; c < NCASES; c++) {
			struct rec *r = row[c];
			if (!r)
				continue;
			if (limit && limit->s.p50 > 0)
				rec_param_d(r, "ratio_to_limit", r->s.p50 / limit->s.p50);
			if (!first)
				first = r;
		}
	}
	hist_free(&h);
	hist_free(&h2);
	hist_free(&hcas);
	hist_free(&hho);
	hist_free(&hsp);
	hist_free(&hcs);
	hist_free(&hop);
	hist_free(&hop2);

	if (g_out.quiet)
		return 0;
	if (g_out.csv) {
		out_csv(stdout, first);
		return 0;
	}
	printf("\npingpong: round trip between CPU %d and CPU %d (ratio = p50 / cache-line p50;\n"
	       "kicks/call = futex wakes the target got per call; sleeping = an idle gap of %ld us after\n"
	       "the target went to sleep before each call, untimed)\n", a, b, gap_us);
	printf("%-24s %4s %9s %10s %10s %10s %10s %10s %8s %10s\n", "case", "rep", "n", "mean", "p50",
	       "p90", "p99", "max", "ratio", "kicks/call");
	for (struct rec *r = first; r; r = r->next) {
		char x[6][32];
		if (!r->s.n && rec_param_str(r, "skipped")) {
			printf("%-24s %4d  skipped: %s\n", r->kase, r->repeat, rec_param_str(r, "skipped"));
			continue;
		}
		double ratio = rec_param_get(r, "ratio_to_limit", 0);
		char rb[16] = "-";
		if (ratio > 0)
			snprintf(rb, sizeof(rb), "%.2fx", ratio);
		long long tc = rec_counter_get(r, "targets_calls", 0);
		if (tc > 0)
			snprintf(x[5], 32, "%.2f", (double)rec_counter_get(r, "targets_kicks_sent", 0) / (double)tc);
		else
			snprintf(x[5], 32, "-");
		/* a ratio from a capped or disturbed row says so at the row's end */
		printf("%-24s %4d %9llu %10s %10s %10s %10s %10s %8s %10s%s\n", r->kase, r->repeat,
		       (unsigned long long)r->s.n, fmt_ns(r->s.mean, x[0], 32), fmt_ns(r->s.p50, x[1], 32),
		       fmt_ns(r->s.p90, x[2], 32), fmt_ns(r->s.p99, x[3], 32), fmt_ns(r->s.max, x[4], 32),
		       rb, x[5], ratio > 0 ? ratio_mark(r, rec_find("pingpong", cases[0].name, r->repeat)) : "");
	}
	bool said = false;
	for (struct rec *r = first; r; r = r->next) {
		if (strcmp(r->kase, cases[0].name))
			continue;
		const struct rec *st = rec_find("pingpong", "cacheline-store", r->repeat);
		const struct rec *cas = rec_find("pingpong", "cacheline-cas", r->repeat);
		const struct rec *op = rec_find("pingpong", "cacheline/per-op", r->repeat);
		/* the line a reader checks against core-to-core-latency */
		struct line_phase ph = line_phase(r->s.p50);
		printf("\nlimit, rep %d: %.1f ns a round trip, the lower of store/load %.1f ns and CAS %.1f ns\n"
		       "  (each the median of spans of %d round trips between two timestamps; the store/load\n"
		       "  round trip timed alone, timer included: %.0f ns p50)\n"
		       "  line phase: %s (%s); compare ratios only within a phase\n",
		       r->repeat, r->s.p50, st ? st->s.p50 : 0, cas ? cas->s.p50 : 0, PAIR_SPAN,
		       op ? op->s.p50 : 0, ph.name, ph.what);
		const struct rec *call = rec_find("pingpong", cases[1].name, r->repeat);
		if (!call || !rec_param_get(call, "paired_ratio_p50", 0))
			continue;
		if (!said)
			printf("\npaired (%s and %s in alternating blocks of %d; each limit over %d lines,\n"
			       "a page each): call block median / lower limit block median, and the lines' medians\n",
			       cases[0].name, cases[1].name, PAIR_BLOCK, PAIR_LINES);
		said = true;
		printf("rep %d: ratio p10 %.2fx  p50 %.2fx  p90 %.2fx%s over %d blocks;  lines %.0f-%.0f ns\n",
		       r->repeat, rec_param_get(call, "paired_ratio_p10", 0),
		       rec_param_get(call, "paired_ratio_p50", 0), rec_param_get(call, "paired_ratio_p90", 0),
		       ratio_mark(call, r), (int)rec_param_get(call, "blocks", 0),
		       rec_param_get(r, "line_p50_min", 0), rec_param_get(r, "line_p50_max", 0));
		const struct rec *ho = rec_find("pingpong", "handoff-bare", r->repeat);
		printf("  split: the slot's handoff bare %.1f ns, %.2fx the limit%s (the line pattern);\n"
		       "  the call %.2fx the bare handoff%s (the library's code)\n",
		       ho ? ho->s.p50 : 0, rec_param_get(call, "paired_handoff_ratio_p50", 0), ratio_mark(ho, r),
		       rec_param_get(call, "paired_code_ratio_p50", 0), ratio_mark(call, ho));
		const struct rec *sp = rec_find("pingpong", "handoff-split", r->repeat);
		const struct rec *cs = rec_find("pingpong", "handoff-casspun", r->repeat);
		if (sp && cs)
			printf("  candidates, bare: request and completion on lines of their own sides %.1f ns,\n"
			       "  %.2fx the limit%s; the slot's line CAS-spun %.1f ns, %.2fx%s\n",
			       sp->s.p50, rec_param_get(sp, "paired_limit_ratio_p50", 0), ratio_mark(sp, r),
			       cs->s.p50, rec_param_get(cs, "paired_limit_ratio_p50", 0), ratio_mark(cs, r));
	}
	return 0;
}
