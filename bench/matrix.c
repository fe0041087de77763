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

static const struct cmd_desc desc = {
	.name = "matrix",
	.summary = "seed 002: call all/single x wait/nowait x 1..N callers, pre-2008 design vs libxcall",
	.default_iters = 100000,
};

enum mmode { ALL_WAIT, ALL_NOWAIT, SINGLE_WAIT, SINGLE_NOWAIT, NMMODES };
static const char *const mmode_names[NMMODES] = {"all-wait", "all-nowait", "single-wait", "single-nowait"};
static const char *const mmode_titles[NMMODES] = {"Call all, wait", "Call all, nowait",
						   "Call single, wait", "Call single, nowait"};

struct mrun {
	enum mmode mode;
	bool model;
	long calls;
	struct spin_barrier bar;
	struct mcaller {
		struct mrun *r;
		int target;
		uint64_t t0, t1;
		long enomem;
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
	uint64_t t0 = now_ns();
	for (long i = 0; i < r->calls && err >= 0; i++) {
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
	me->err = err < 0 ? err : 0;
	/* let the others finish before leaving: their calls to us must be served */
	spin_barrier_wait(&r->bar, serve_any);
}

static int run_row(struct mrun *r, const struct bopts *o, int k, double *secs, long *enomem)
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
	for (int i = 0; i < k; i++) {
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

int cmd_matrix(int argc, char **argv)
{
	struct bopts o;
	cli_parse(&desc, argc, argv, &o, NULL);
	if (o.ncpus < 2)
		cli_fail(desc.name, "needs 2 CPUs in --cpus, got %d", o.ncpus);
	if (o.seconds > 0)
		cli_fail(desc.name, "times a fixed number of calls: use --iterations, not --seconds");
	long calls = o.iterations ? o.iterations : desc.default_iters;
	/* the seed's callers were busy CPUs: both designs poll unless told otherwise */
	long poll = o.poll_set ? o.poll_ns : XC_POLL_FOREVER;
	char pb[32];
	poll_name(poll, pb, sizeof(pb));
	struct mrun *r = calloc(1, sizeof(*r));
	struct rec *first = NULL;
	if (!r)
		return 1;
	r->calls = calls;

	for (int rep = 0; rep < o.repeat; rep++) {
		for (int impl = 0; impl < 2; impl++) {
			r->model = impl == 0;
			const char *iname = r->model ? "2008" : "libxcall";
			int err = r->model ? m08_start(o.cpu, o.ncpus, poll) : xh_up(&o, NULL, poll, 0);
			if (err)
				return 1;
			for (int m = 0; m < NMMODES; m++) {
				for (int k = 1; k <= o.ncpus; k++) {
					r->mode = (enum mmode)m;
					progress("matrix: %s %s, %d caller(s), repeat %d", iname, mmode_names[m], k, rep);
					struct xc_stats s0, s1, d = {0};
					if (!r->model)
						xh_stats(-1, &s0);
					double secs;
					long enomem;
					err = run_row(r, &o, k, &secs, &enomem);
					if (err) {
						fprintf(stderr, "xcall-bench matrix: %s %s: %s\n", iname, mmode_names[m],
							strerror(-err));
						return 1;
					}
					char name[64];
					snprintf(name, sizeof(name), "%s/%s/%d", mmode_names[m], iname, k);
					struct rec *x = rec_new("matrix", name, "s", "lower", rep);
					rec_value(x, secs);
					rec_cpu_list(x, o.cpu, k);
					rec_param_i(x, "callers", k);
					rec_param_i(x, "calls_per_caller", calls);
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
			if (r->model)
				m08_stop();
			else
				xh_down();
		}
		for (int m = 0; m < NMMODES; m++)
			for (int k = 1; k <= o.ncpus; k++) {
				char a[64], b[64], name[64];
				snprintf(a, sizeof(a), "%s/2008/%d", mmode_names[m], k);
				snprintf(b, sizeof(b), "%s/libxcall/%d", mmode_names[m], k);
				struct rec *ra = rec_find("matrix", a, rep), *rb = rec_find("matrix", b, rep);
				snprintf(name, sizeof(name), "%s/speedup/%d", mmode_names[m], k);
				struct rec *x = rec_new("matrix", name, "ratio", "higher", rep);
				rec_value(x, rb->s.mean > 0 ? ra->s.mean / rb->s.mean : 0);
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
	for (int rep = 0; rep < o.repeat; rep++)
		for (int m = 0; m < NMMODES; m++) {
			printf("\n%s", mmode_titles[m]);
			if (o.repeat > 1)
				printf(" (repeat %d)", rep);
			printf("\ncalling cpus   2008 design     libxcall     speedup\n");
			for (int k = 1; k <= o.ncpus; k++) {
				char a[64], b[64], s[64];
				snprintf(a, sizeof(a), "%s/2008/%d", mmode_names[m], k);
				snprintf(b, sizeof(b), "%s/libxcall/%d", mmode_names[m], k);
				snprintf(s, sizeof(s), "%s/speedup/%d", mmode_names[m], k);
				printf("%12d %12.4fs %12.4fs %10.3fx\n", k, rec_find("matrix", a, rep)->s.mean,
				       rec_find("matrix", b, rep)->s.mean, rec_find("matrix", s, rep)->s.mean);
			}
		}
	return 0;
}
