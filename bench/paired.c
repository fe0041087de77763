/* SPDX-License-Identifier: MIT */
/*
 * paired.c - the cache-line limit and a waiting call to a polling worker,
 * measured side by side: in one runtime, alternating blocks of round trips
 * on a cache line and of waiting calls between the same two workers.
 *
 * Why paired: a cache line's round trip depends on the moment (a VM's host
 * may move two vCPUs between caches within seconds) and on where the line
 * lives (its L3 slice, its memory), and measured one after the other, two
 * cases see different moments and different lines. Here both see the same
 * moments, block by block, and the limit rotates over PAIR_LINES lines,
 * each on a page of its own, so that it stands for a typical line rather
 * than a lucky or an unlucky one. libxcall's own call lives in its target's
 * mailbox line: one such line per process, so a run is one draw of its
 * placement, and runs in fresh processes sample it.
 *
 * The limit runs on the workers themselves: worker a pings from a work
 * item while worker b responds from another, so both cases use the same
 * pinned threads on the same CPUs.
 */
#include "baselines.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct responder {
	struct xc_work w;
	_Atomic uint64_t *line;
	_Atomic int done;
};

static void respond_fn(void *arg)
{
	struct responder *r = arg;

	pp_line_respond(r->line);
	/* release: the responder no longer touches the line */
	atomic_store_explicit(&r->done, 1, memory_order_release);
}

struct paired {
	const struct paired_in *in;
	struct paired_out *out;
	_Atomic uint64_t *line[PAIR_LINES];
	uint32_t *blk;                  /* the current block's samples, ns */
	double *blk_p50[2];             /* per block pair: limit, call */
	int nblk, nmax;
	double *line_blk_p50[PAIR_LINES]; /* per line, its blocks' medians */
	int line_nblk[PAIR_LINES];
	struct budget bud;              /* the first warm-up's clock */
	int err;
};

static int cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	return a < b ? -1 : a > b;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

/* Median of n samples, sorting them. */
static double block_p50(uint32_t *v, int n)
{
	if (n <= 0)
		return 0;
	qsort(v, (size_t)n, sizeof(*v), cmp_u32);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + (double)v[n / 2]) / 2;
}

/* The q-quantile of n values, sorting them (nearest rank). */
static double quantile(double *v, int n, double q)
{
	if (n <= 0)
		return 0;
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	int i = (int)(q * (n - 1) + 0.5);
	return v[i];
}

/* Sample @i of a block: into its side's histogram and the block's array. */
static void block_sample(struct paired *p, struct hist *h, int i, uint64_t ns)
{
	hist_add(h, ns);
	p->blk[i] = (uint32_t)(ns > UINT32_MAX ? UINT32_MAX : ns);
}

/* One block of round trips on line @k; returns its median, or -1 after an error. */
static double limit_block(struct paired *p, int k, int n, int warm)
{
	struct responder r = {.w = {.fn = respond_fn}, .line = p->line[k]};
	uint64_t seq = 0;

	r.w.arg = &r;
	atomic_store_explicit(r.line, 0, memory_order_relaxed);
	p->err = xc_queue_work(p->in->b, &r.w);
	if (p->err)
		return -1;
	for (int i = 0; warm_more(&p->bud, i, warm); i++)
		pp_line_round_trip(r.line, &seq);
	for (int i = 0; i < n; i++) {
		uint64_t t0 = ticks();
		pp_line_round_trip(r.line, &seq);
		block_sample(p, p->in->h_limit, i, ticks_span_ns(t0, ticks()));
	}
	atomic_store_explicit(r.line, PP_LINE_STOP, memory_order_release);
	/* acquire: r is on this stack; it goes once the responder is done with it */
	while (!atomic_load_explicit(&r.done, memory_order_acquire))
		cpu_relax();
	return block_p50(p->blk, n);
}

/* One block of waiting calls from a to b; returns its median, or -1 after an error. */
static double call_block(struct paired *p, int n, int warm)
{
	struct xc_stats s0, s1, t0s, t1s, d;
	int b = p->in->b;

	for (int i = 0; warm_more(&p->bud, i, warm) && !p->err; i++)
		p->err = xc_call_single(b, xh_noop, NULL, XC_WAIT);
	xh_stats(-1, &s0);
	xh_stats(b, &t0s);
	for (int i = 0; i < n && !p->err; i++) {
		uint64_t t0 = ticks();
		p->err = xc_call_single(b, xh_noop, NULL, XC_WAIT);
		block_sample(p, p->in->h_call, i, ticks_span_ns(t0, ticks()));
	}
	xh_stats(-1, &s1);
	xh_stats(b, &t1s);
	xc_stats_delta(&d, &s0, &s1);
	xc_stats_add(&p->out->call_delta, &d);
	xc_stats_delta(&d, &t0s, &t1s);
	xc_stats_add(&p->out->call_target, &d);
	return p->err ? -1 : block_p50(p->blk, n);
}

/* Runs on worker a as a work item: the whole alternation. */
static void paired_loop(void *arg)
{
	struct paired *p = arg;
	const struct paired_in *in = p->in;
	struct budget bud = in->bud;
	long warm = warmup_iters(bud.iters);
	long done = 0;

	p->bud = bud;
	budget_warm(&p->bud);   /* the first warm-up of both sides; a block's own is not cut */

	/* the same first warm-up as every other case, for each side */
	if (in->want_limit && limit_block(p, 0, 0, (int)warm) < 0)
		return;
	if (in->want_call && call_block(p, 0, (int)warm) < 0)
		return;
	p->bud.warm_until = 0;
	budget_start(&bud);
	for (int k = 0; p->nblk < p->nmax; k++) {
		int n = PAIR_BLOCK;
		double lim = 0, call = 0;

		/* by blocks: the budget's clock is read between them */
		if (!bud.seconds && done >= bud.iters)
			break;
		if (done && !budget_check(&bud, done))
			break;
		if (!bud.seconds && bud.iters - done < n)
			n = (int)(bud.iters - done);
		if (in->want_limit) {
			int line = k % PAIR_LINES;

			lim = limit_block(p, line, n, PAIR_WARM);
			if (lim < 0)
				return;
			p->line_blk_p50[line][p->line_nblk[line]++] = lim;
		}
		if (in->want_call && (call = call_block(p, n, PAIR_WARM)) < 0)
			return;
		p->blk_p50[0][p->nblk] = lim;
		p->blk_p50[1][p->nblk] = call;
		p->nblk++;
		done += n;
	}
	p->out->n = done;
}

/* Room for the per-block medians: as many blocks as the budget can hold. */
static int max_blocks(const struct paired_in *in)
{
	if (!in->bud.seconds)
		return (int)((in->bud.iters + PAIR_BLOCK - 1) / PAIR_BLOCK);
	/* a round trip takes well over 20 ns: 2 x 50M per second is out of reach */
	double n = in->bud.seconds * 5e7 / PAIR_BLOCK + 1;
	return n > 1e6 ? 1000000 : (int)n;
}

long xh_paired(const struct paired_in *in, struct paired_out *out)
{
	int nmax = max_blocks(in), err = -ENOMEM;
	struct paired p = {.in = in, .out = out, .nmax = nmax};
	long pagesz = sysconf(_SC_PAGESIZE);
	char *pages[PAIR_LINES] = {0};

	memset(&out->call_delta, 0, sizeof(out->call_delta));
	memset(&out->call_target, 0, sizeof(out->call_target));
	out->n = 0;
	p.blk = malloc(PAIR_BLOCK * sizeof(*p.blk));
	p.blk_p50[0] = calloc((size_t)nmax, sizeof(double));
	p.blk_p50[1] = calloc((size_t)nmax, sizeof(double));
	if (!p.blk || !p.blk_p50[0] || !p.blk_p50[1])
		goto out;
	for (int i = 0; i < PAIR_LINES; i++) {
		/* a page each, mapped separately; the line's offset in it varies too */
		pages[i] = mmap(NULL, (size_t)pagesz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		p.line_blk_p50[i] = calloc((size_t)nmax / PAIR_LINES + 1, sizeof(double));
		if (pages[i] == MAP_FAILED || !p.line_blk_p50[i]) {
			pages[i] = pages[i] == MAP_FAILED ? NULL : pages[i];
			goto out;
		}
		p.line[i] = (_Atomic uint64_t *)(pages[i] + (i * 5 * CACHELINE) % pagesz);
	}
	void *args[1] = {&p};
	err = xh_run_on(&in->a, 1, paired_loop, args);
	if (!err)
		err = p.err;
	if (err)
		goto out;

	/* paired ratios: each call block over the limit block right before it */
	out->blocks = p.nblk;
	if (in->want_limit && in->want_call) {
		double *r = p.blk_p50[1];
		int nr = 0;
		for (int i = 0; i < p.nblk; i++)
			if (p.blk_p50[0][i] > 0)
				r[nr++] = p.blk_p50[1][i] / p.blk_p50[0][i];
		out->ratio_p10 = quantile(r, nr, 0.10);
		out->ratio_p50 = quantile(r, nr, 0.50);
		out->ratio_p90 = quantile(r, nr, 0.90);
	}
	out->line_p50_min = out->line_p50_max = 0;
	for (int i = 0; i < PAIR_LINES && in->want_limit; i++) {
		if (!p.line_nblk[i])
			continue;
		double m = quantile(p.line_blk_p50[i], p.line_nblk[i], 0.5);
		if (!out->line_p50_min || m < out->line_p50_min)
			out->line_p50_min = m;
		if (m > out->line_p50_max)
			out->line_p50_max = m;
	}
out:
	for (int i = 0; i < PAIR_LINES; i++) {
		if (pages[i])
			munmap(pages[i], (size_t)pagesz);
		free(p.line_blk_p50[i]);
	}
	free(p.blk);
	free(p.blk_p50[0]);
	free(p.blk_p50[1]);
	if (err)
		fprintf(stderr, "xcall-bench: paired %d <-> %d: %s\n", in->a, in->b, strerror(-err));
	return err ? err : out->n;
}
