/* SPDX-License-Identifier: MIT */
/*
 * ipi.c - seed 003's ipi_benchmark on libxcall. Each mode is timed two ways,
 * as the seed does: delivery (call made until the handler starts on the
 * target) and total (until the caller knows it ran, i.e. the waiting call
 * returned). The caller is the worker of the first CPU; "normal" targets the
 * second; broadcast targets every other CPU, and its delivery is the latest
 * handler start. The two are separate passes: delivery needs a timestamp in
 * the handler, which would cost the total, and the total is timed in spans of
 * back-to-back calls, which delivery cannot be.
 */
#include "bench.h"

#include <stdlib.h>
#include <string.h>

static const struct cmd_desc desc = {
	.name = "ipi",
	.summary = "seed 003: delivery and total time of dry-run, self, normal, broadcast, broadcast-lock calls",
	.default_iters = 100000,
};

enum mode { DRY_RUN, SELF, NORMAL, BROADCAST, BROADCAST_LOCK, NMODES };
static const char *const mode_names[NMODES] = {"dry-run", "self", "normal", "broadcast", "broadcast-lock"};

struct ipi_run {
	enum mode mode;
	int self, other;
	const int *cpus;
	int ncpus;
	struct budget b;
	struct hist *deliv, *total;
	struct xc_stats delta;
	long done;
	int err;
	uint64_t sent;                                  /* ticks at the call */
	bool stamp;                                     /* pass 1: the handler takes its timestamp */
	_Alignas(CACHELINE) _Atomic uint64_t started[CPU_SETSIZE];
	_Alignas(CACHELINE) _Atomic int lock;           /* broadcast-lock's shared spinlock */
};

static void handle_ipi(void *arg)
{
	struct ipi_run *r = arg;
	/* only in the delivery pass: a timestamp on the worker's path would cost the total */
	if (r->stamp)
		atomic_store_explicit(&r->started[xc_this_cpu()], ticks(), memory_order_relaxed);
}

static void handle_ipi_spinlock(void *arg)
{
	struct ipi_run *r = arg;
	handle_ipi(arg);
	while (atomic_exchange_explicit(&r->lock, 1, memory_order_acquire))
		cpu_relax();
	atomic_store_explicit(&r->lock, 0, memory_order_release);
}

/* One operation; returns the delivery time in ticks (0 for none). */
static int send_one(struct ipi_run *r, uint64_t *deliv)
{
	int err = 0;
	uint64_t latest = 0;
	if (r->stamp)
		r->sent = ticks();
	switch (r->mode) {
	case DRY_RUN:
		/* everything but the call: the two timestamps and the bookkeeping */
		break;
	case SELF:
		err = xc_call_single(r->self, handle_ipi, r, XC_WAIT);
		latest = r->started[r->self];
		break;
	case NORMAL:
		err = xc_call_single(r->other, handle_ipi, r, XC_WAIT);
		latest = r->started[r->other];
		break;
	case BROADCAST:
	case BROADCAST_LOCK:
		err = xc_call_all(r->mode == BROADCAST ? handle_ipi : handle_ipi_spinlock, r, XC_WAIT);
		err = err < 0 ? err : 0;
		for (int i = 0; i < r->ncpus; i++)
			if (r->cpus[i] != r->self && r->started[r->cpus[i]] > latest)
				latest = r->started[r->cpus[i]];
		break;
	default:
		break;
	}
	*deliv = r->stamp && latest > r->sent ? latest - r->sent : 0;
	return err;
}

static void ipi_loop(void *arg)
{
	struct ipi_run *r = arg;
	uint64_t d;
	long warm = warmup_iters(r->b.iters);
	budget_warm(&r->b);
	for (long i = 0; warm_more(&r->b, i, warm) && !r->err; i++)
		r->err = send_one(r, &d);
	struct xc_stats s0, s1;
	xh_stats(-1, &s0);
	budget_start(&r->b);
	long i;
	if (r->stamp) {
		/* delivery: each call alone, from the call to the handler's timestamp */
		for (i = 0; budget_more(&r->b, i) && !r->err; i++) {
			r->err = send_one(r, &d);
			hist_add(r->deliv, ticks_to_ns(d));
		}
	} else {
		/* total: spans of back-to-back calls between two timestamps, one sample a span */
		for (i = 0; budget_more(&r->b, i) && !r->err; i += PAIR_SPAN) {
			uint64_t t0 = ticks();
			int k;
			for (k = 0; k < PAIR_SPAN && !budget_cut(&r->b, k); k++)
				r->err |= send_one(r, &d);
			budget_span_add(&r->b, r->total, t0, k);
			if (k < PAIR_SPAN) {
				i += k;
				budget_stopped(&r->b);
				break;
			}
		}
	}
	xh_stats(-1, &s1);
	xc_stats_delta(&r->delta, &s0, &s1);
	r->done = i;
}

int cmd_ipi(int argc, char **argv)
{
	struct bopts o;
	cli_parse(&desc, argc, argv, &o, NULL);
	struct rec *first = NULL;
	struct hist hd, ht;
	if (hist_init(&hd) || hist_init(&ht))
		return 1;
	struct ipi_run *r = aligned_alloc(CACHELINE, sizeof(*r));
	char pb[32];
	poll_name(o.poll_ns, pb, sizeof(pb));
	plan_cases((long)o.repeat * NMODES, 2 * plan_case_s(&o));   /* two passes a mode */
	plan_fixed(plan_start_cost(o.ncpus));
	plan_start(NULL);
	if (xh_up(&o, NULL, o.poll_ns, 0))
		return 1;
	for (int rep = 0; rep < o.repeat; rep++) {
		for (int m = 0; m < NMODES; m++) {
			if ((m == NORMAL || m >= BROADCAST) && o.ncpus < 2) {
				progress("ipi: %s skipped: %s", mode_names[m], cli_too_few_cpus(&o, 2));
				continue;
			}
			memset(r, 0, sizeof(*r));
			r->mode = (enum mode)m;
			r->self = o.cpu[0];
			r->other = o.ncpus > 1 ? o.cpu[1] : o.cpu[0];
			r->cpus = o.cpu;
			r->ncpus = o.ncpus;
			budget_init(&r->b, &o, desc.default_iters);
			hist_reset(&hd);
			hist_reset(&ht);
			r->deliv = &hd;
			r->total = &ht;
			progress("ipi: %s, repeat %d", mode_names[m], rep);
			char name[64];
			if (plan_late()) {
				for (int k = 0; k < 2; k++) {
					snprintf(name, sizeof(name), "%s/%s", mode_names[m], k ? "total" : "delivery");
					rec_skipped("ipi", name, PLAN_LATE_WHY, rep);
				}
				continue;
			}
			/* two passes: delivery with the handler's timestamp, then total without it */
			for (int k = 0; k < 2; k++) {
				void *args[1] = {r};
				r->stamp = k == 0;
				r->err = 0;
				budget_init(&r->b, &o, desc.default_iters);
				if (xh_run_on(&o.cpu[0], 1, ipi_loop, args) || r->err) {
					xh_down();
					return 1;
				}
				snprintf(name, sizeof(name), "%s/%s", mode_names[m], k ? "total" : "delivery");
				struct rec *x = rec_new("ipi", name, "ns", "lower", rep);
				rec_hist(x, k ? &ht : &hd);
				rec_cpus(x, &o.cpus);
				rec_param_i(x, "iterations", r->done);
				if (k)
					rec_param_i(x, "batch", PAIR_SPAN);
				rec_param_s(x, "timing", k ? "spans of batch back-to-back calls, no timestamp in the handler"
							   : "each call alone, to the handler's timestamp");
				rec_param_s(x, "poll", pb);
				rec_param_i(x, "caller", o.cpu[0]);
				rec_xc_counters(x, &r->delta);
				if (!first)
					first = x;
			}
		}
	}
	xh_down();
	free(r);
	hist_free(&hd);
	hist_free(&ht);

	if (g_out.quiet)
		return 0;
	if (g_out.csv) {
		out_csv(stdout, first);
		return 0;
	}
	printf("\nipi (seed 003): caller CPU %d, poll %s; delivery: each call alone, to the handler's\n"
	       "timestamp (dry-run: the timestamps alone); total: per call, from spans of %d back-to-back\n"
	       "calls with no timestamp in the handler (dry-run: the loop alone)\n", o.cpu[0], pb, PAIR_SPAN);
	printf("%-16s %4s %12s %12s %12s %12s\n", "mode", "rep", "deliv p50", "deliv p99",
	       "total p50", "total p90");
	for (int rep = 0; rep < o.repeat; rep++) {
		for (int m = 0; m < NMODES; m++) {
			char n1[64], n2[64], x[4][32];
			snprintf(n1, sizeof(n1), "%s/delivery", mode_names[m]);
			snprintf(n2, sizeof(n2), "%s/total", mode_names[m]);
			struct rec *d = rec_find("ipi", n1, rep), *t = rec_find("ipi", n2, rep);
			if (!d || !t)
				continue;
			if (!d->s.n || !t->s.n) {
				printf("%-16s %4d  skipped\n", mode_names[m], rep);
				continue;
			}
			printf("%-16s %4d %12s %12s %12s %12s\n", mode_names[m], rep,
			       fmt_ns(d->s.p50, x[0], 32), fmt_ns(d->s.p99, x[1], 32),
			       fmt_ns(t->s.p50, x[2], 32), fmt_ns(t->s.p90, x[3], 32));
		}
	}
	return 0;
}
