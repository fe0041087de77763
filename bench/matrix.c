/* SPDX-License-Identifier: MIT */
/*
 * matrix.c - seed 002's table: time for a fixed number of calls per calling
 * CPU, for call all / call single, wait / nowait, and 1..N calling CPUs, on
 * the pre-2008 design (model2008.c) and on libxcall, with the speedup.
 *
 * Callers start together from a barrier; the row's time runs from the first
 * start to the last finish. A caller takes calls to its own CPU between its
 * own (xc_poll() / m08_serve()), as a CPU with interrupts on would. A single
 * call targets the next CPU of the set.
 */
#include "baselines.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { O_STEP = 1 };

static const struct cmd_opt matrix_opts[] = {
	{"step", required_argument, O_STEP, "K      rows of 1, K, 2K, ... and N callers (default: 1 up to\n"
	 "                  16 CPUs, else the step that gives about 16 rows)"},
	{0},
};

static int on_opt(int id, const char *arg, void *ctx)
{
	return id == O_STEP ? parse_long(arg, 1, CPU_SETSIZE, ctx) : -1;
}

static const struct cmd_desc desc = {
	.name = "matrix",
	.summary = "seed 002: call all/single x wait/nowait x 1..N callers, pre-2008 design vs libxcall",
	.opts = matrix_opts,
	.on_opt = on_opt,
	.default_iters = 100000,
};

enum mmode { ALL_WAIT, ALL_NOWAIT, SINGLE_WAIT, SINGLE_NOWAIT, NMMODES };
static const char *const mmode_names[NMMODES] = {"all-wait", "all-nowait", "single-wait", "single-nowait"};
static const char *const mmode_titles[NMMODES] = {"Call all, wait", "Call all, nowait",
						   "Call single, wait", "Call single, nowait"};

struct mrun {
	enum mmode mode;
	bool model;
	struct budget bud;      /* each caller's: the calls, and --case-limit, where it stops short */
	struct spin_barrier bar;
	struct mcaller {
		struct mrun *r;
		int target;
		uint64_t t0, t1;
		long enomem, done;
		int err;
	} caller[CPU_SETSIZE];
	int ncallers;
};

static void serve_any(void)
{
	if (m08_this_cpu() >= 0)
		m08_serve();
	else
		xh_serve();
}

static void matrix_loop(void *arg)
{
	struct mcaller *me = arg;
	struct mrun *r = me->r;
	int target = me->target;
	int err = 0;
	spin_barrier_wait(&r->bar, serve_any);
	struct budget b = r->bud;
	budget_start(&b);
	uint64_t t0 = b.started;
	long i;
	for (i = 0; budget_more(&b, i) && err >= 0; i++) {
		if (r->model) {
			m08_serve();
			switch (r->mode) {
			case ALL_WAIT: err = m08_call_function(xh_noop, NULL, 1); break;
			case ALL_NOWAIT: err = m08_call_function(xh_noop, NULL, 0); break;
			case SINGLE_WAIT: err = m08_call_function_single(target, xh_noop, NULL, 1); break;
			default: err = m08_call_function_single(target, xh_noop, NULL, 0); break;
			}
			continue;
		}
		xc_poll();
		switch (r->mode) {
		case ALL_WAIT: err = xc_call_all(xh_noop, NULL, XC_WAIT); break;
		case SINGLE_WAIT: err = xc_call_single(target, xh_noop, NULL, XC_WAIT); break;
		default:
			/* nowait descriptors come from a pool: when it runs dry, serve and retry */
			while ((err = r->mode == ALL_NOWAIT ? xc_call_all(xh_noop, NULL, 0)
							    : xc_call_single(target, xh_noop, NULL, 0)) == -ENOMEM) {
				me->enomem++;
				xc_poll();
			}
		}
	}
	me->t0 = t0;
	me->t1 = now_ns();
	me->done = i;
	me->err = err < 0 ? err : 0;
	/* let the others finish before leaving: their calls to us must be served */
	spin_barrier_wait(&r->bar, serve_any);
}

static int run_row(struct mrun *r, const struct bopts *o, int k, double *secs, long *enomem,
		   long *done)
{
	r->ncallers = k;
	spin_barrier_init(&r->bar, (unsigned)k);
	void *args[CPU_SETSIZE];
	for (int i = 0; i < k; i++) {
		r->caller[i] = (struct mcaller){.r = r, .target = o->cpu[(i + 1) % o->ncpus]};
		args[i] = &r->caller[i];
	}
	int err = r->model ? m08_run_on(o->cpu, k, matrix_loop, args)
			   : xh_run_on(o->cpu, k, matrix_loop, args);
	uint64_t first = UINT64_MAX, last = 0;
	*enomem = 0;
	*done = 0;
	for (int i = 0; i < k; i++) {
		*done += r->caller[i].done;
		if (r->caller[i].err)
			err = r->caller[i].err;
		if (r->caller[i].t0 < first)
			first = r->caller[i].t0;
		if (r->caller[i].t1 > last)
			last = r->caller[i].t1;
		*enomem += r->caller[i].enomem;
	}
	*secs = (double)(last - first) / 1e9;
	return err;
}

/* Rows of 1, step, 2 step, ... and every CPU: the seed's 1..N, thinned for large N. */
static int matrix_rows(int ncpus, long step, int *rows)
{
	int n = 0;
	if (!step)
		step = ncpus <= 16 ? 1 : (ncpus + 15) / 16;
	rows[n++] = 1;
	for (long k = step; k < ncpus; k += step)
		if (k > 1)
			rows[n++] = (int)k;
	if (ncpus > 1)
		rows[n++] = ncpus;
	return n;
}

int cmd_matrix(int argc, char **argv)
{
	struct bopts o;
	long step = 0;
	cli_parse(&desc, argc, argv, &o, &step);
	if (o.ncpus < 2)
		cli_fail(desc.name, "%s", cli_too_few_cpus(&o, 2));
	if (o.seconds > 0)
		cli_fail(desc.name, "times a fixed number of calls: use --iterations, not --seconds");
	long calls = o.iterations ? o.iterations : desc.default_iters;
	int rows[CPU_SETSIZE + 1];
	int nrows = matrix_rows(o.ncpus, step, rows);
	/* a row is one timed loop per caller, each stopped at --case-limit, then the drain */
	plan_cases(2L * NMMODES * nrows * o.repeat, 2 * o.case_limit + 0.1);
	plan_fixed(2.0 * o.repeat * plan_start_cost(o.ncpus));
	plan_start(NULL);
	/* the seed's callers were busy CPUs: both designs poll unless told otherwise */
	long poll = o.poll_set ? o.poll_ns : XC_POLL_FOREVER;
	char pb[32];
	poll_name(poll, pb, sizeof(pb));
	struct mrun *r = calloc(1, sizeof(*r));
	struct rec *first = NULL;
	if (!r)
		return 1;
	budget_init(&r->bud, &o, desc.default_iters);

	for (int rep = 0; rep < o.repeat; rep++) {
		for (int impl = 0; impl < 2; impl++) {
			r->model = impl == 0;
			const char *iname = r->model ? "2008" : "libxcall";
			uint64_t t0 = now_ns();
			int err = r->model ? m08_start(o.cpu, o.ncpus, poll) : xh_up(&o, NULL, poll, 0);
			if (err)
				return 1;
			plan_uncut((double)(now_ns() - t0) / 1e9);
			for (int m = 0; m < NMMODES; m++) {
				for (int row = 0; row < nrows; row++) {
					int k = rows[row];
					r->mode = (enum mmode)m;
					progress("matrix: %s %s, %d caller(s), repeat %d", iname, mmode_names[m], k, rep);
					char name[64];
					snprintf(name, sizeof(name), "%s/%s/%d", mmode_names[m], iname, k);
					if (plan_late()) {
						rec_skipped("matrix", name, PLAN_LATE_WHY, rep);
						continue;
					}
					struct xc_stats s0, s1, d = {0};
					if (!r->model)
						xh_stats(-1, &s0);
					double secs;
					long enomem, done;
					err = run_row(r, &o, k, &secs, &enomem, &done);
					if (err) {
						fprintf(stderr, "xcall-bench matrix: %s %s: %s\n", iname, mmode_names[m],
							strerror(-err));
						return 1;
					}
					struct rec *x = rec_new("matrix", name, "s", "lower", rep);
					rec_value(x, secs);
					rec_cpu_list(x, o.cpu, k);
					rec_param_i(x, "callers", k);
					rec_param_i(x, "calls_per_caller", calls);
					/* calls made: all of them, unless --case-limit stopped the row */
					rec_param_i(x, "calls_made", done);
					rec_param_b(x, "capped", done < calls * k);
					rec_param_s(x, "impl", iname);
					rec_param_s(x, "mode", mmode_names[m]);
					rec_param_s(x, "poll", pb);
					if (!r->model) {
						/* every nowait call has run: counters final */
						xh_drain_all();
						xh_stats(-1, &s1);
						s1.calls -= 2 * (uint64_t)o.ncpus;  /* not the drain's own calls */
						xc_stats_delta(&d, &s0, &s1);
						rec_xc_counters(x, &d);
						rec_counter(x, "enomem_retries", enomem);
					}
					if (!first)
						first = x;
				}
			}
			t0 = now_ns();
			if (r->model)
				m08_stop();
			else
				xh_down();
			plan_uncut((double)(now_ns() - t0) / 1e9);
		}
		for (int m = 0; m < NMMODES; m++)
			for (int row = 0; row < nrows; row++) {
				int k = rows[row];
				char a[64], b[64], name[64];
				snprintf(a, sizeof(a), "%s/2008/%d", mmode_names[m], k);
				snprintf(b, sizeof(b), "%s/libxcall/%d", mmode_names[m], k);
				struct rec *ra = rec_find("matrix", a, rep), *rb = rec_find("matrix", b, rep);
				snprintf(name, sizeof(name), "%s/speedup/%d", mmode_names[m], k);
				if (!ra->s.n || !rb->s.n) {
					rec_skipped("matrix", name, PLAN_LATE_WHY, rep);
					continue;
				}
				struct rec *x = rec_new("matrix", name, "ratio", "higher", rep);
				/* per call made: the same as the time ratio unless a row was stopped early */
				double pa = ra->s.mean / rec_param_get(ra, "calls_made", 1);
				double pb_ = rb->s.mean / rec_param_get(rb, "calls_made", 1);
				rec_value(x, pb_ > 0 ? pa / pb_ : 0);
				rec_ratio_of(x, ra, rb);
				rec_param_i(x, "callers", k);
			}
	}
	free(r);

	if (g_out.quiet)
		return 0;
	if (g_out.csv) {
		out_csv(stdout, first);
		return 0;
	}
	printf("\nmatrix (seed 002): time to perform %ld x cpus calls (poll %s)\n", calls, pb);
	if (o.ncpus < 8)
		printf("note: the seed's table has 1..8 calling CPUs; --cpus %s gives rows 1..%d only\n",
		       o.cpulist, o.ncpus);
	bool capped = false;
	for (int rep = 0; rep < o.repeat; rep++)
		for (int m = 0; m < NMMODES; m++) {
			printf("\n%s", mmode_titles[m]);
			if (o.repeat > 1)
				printf(" (repeat %d)", rep);
			printf("\ncalling cpus   2008 design     libxcall     speedup\n");
			for (int row = 0; row < nrows; row++) {
				int k = rows[row];
				char a[64], b[64], s[64];
				snprintf(a, sizeof(a), "%s/2008/%d", mmode_names[m], k);
				snprintf(b, sizeof(b), "%s/libxcall/%d", mmode_names[m], k);
				snprintf(s, sizeof(s), "%s/speedup/%d", mmode_names[m], k);
				struct rec *ra = rec_find("matrix", a, rep), *rb = rec_find("matrix", b, rep);
				if (!ra->s.n || !rb->s.n) {
					/* a row the plan had no time left for */
					char ta[32] = "skipped", tb[32] = "skipped";
					if (ra->s.n)
						snprintf(ta, sizeof(ta), "%.4fs", ra->s.mean);
					if (rb->s.n)
						snprintf(tb, sizeof(tb), "%.4fs", rb->s.mean);
					printf("%12d %13s %13s %11s\n", k, ta, tb, "-");
					continue;
				}
				capped |= rec_capped(ra) || rec_capped(rb);
				printf("%12d %12.4fs %12.4fs %10.3fx%s\n", k, ra->s.mean, rb->s.mean,
				       rec_find("matrix", s, rep)->s.mean, ratio_mark(ra, rb));
			}
		}
	if (capped)
		printf("\n(capped): stopped at --case-limit %g s before every call was made: the time is\n"
		       "  for fewer calls (calls_made in the results file), the speedup is per call\n", o.case_limit);
	return 0;
}
