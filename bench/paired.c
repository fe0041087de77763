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
 * The bare handoff (baselines.h) runs in the same alternation on lines of
 * its own: the call's line pattern without the library's code, so that the
 * call's distance from the limit splits into the pattern's and the code's.
 *
 * The limit runs on the workers themselves: worker a pings from a work
 * item while worker b responds from another, so both cases use the same
 * pinned threads on the same CPUs.
 */
#include "baselines.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct responder {
	struct xc_work w;
	_Atomic uint64_t *line;
	int side;                       /* LIMIT_* */
	_Atomic int done;
};

static void respond_fn(void *arg)
{
	struct responder *r = arg;

	if (r->side == LIMIT_CAS)
		pp_line_cas_respond(r->line);
	else if (r->side == LIMIT_HANDOFF)
		pp_handoff_respond((struct pp_handoff *)r->line);
	else if (r->side == LIMIT_SPLIT)
		pp_split_respond((struct pp_split *)r->line);
	else if (r->side == LIMIT_CASSPUN)
		pp_casspun_respond((struct pp_handoff *)r->line);
	else
		pp_line_respond(r->line);
	/* release: the responder no longer touches the line */
	atomic_store_explicit(&r->done, 1, memory_order_release);
}

struct paired {
	const struct paired_in *in;
	struct paired_out *out;
	_Atomic uint64_t *line[NLIMITS][PAIR_LINES];    /* each limit on lines of its own */
	double *span;                   /* the current block's per-round-trip times, ns */
	double *blk_p50[NLIMITS + 1];   /* per block: each limit's median, the call's */
	int nblk, nmax;
	double *line_blk_p50[PAIR_LINES]; /* per store/load line, its blocks' medians */
	int line_nblk[PAIR_LINES];
	struct budget bud;              /* the warm-ups' clock: the first warm-up's, then the loop's end */
	struct budget *tb;              /* the timed loop's budget, once it runs (budget_cut) */
	bool late;                      /* a span stopped at the loop's end: the alternation ends */
	long side_n[NLIMITS + 1];       /* round trips in spans, per side */
	int err;
};

/*
 * The timed part of a block, the same for every side: n round trips of OP in
 * spans of PAIR_SPAN between two timestamps (each span's time per round trip
 * into HS and p->span), then PAIR_TAIL more timed one by one into HO (NULL:
 * none). Sets *med to the spans' median and adds the round trips to SIDE's
 * count. A span the loop's end cut (budget_cut) is a sample of what it ran,
 * and sets p->late: nothing more runs, but in the first block, where each
 * side still runs a span and a round trip alone, so that every record has a
 * sample. A macro, so that OP is inlined on both sides alike.
 */
#define TIMED_BLOCK(p, n, SIDE, HS, HO, OP, med)                                            \
	do {                                                                                \
		int ns_ = 0;                                                                \
		for (int done_ = 0; done_ < (n) && !(p)->err &&                            \
				    (!(p)->late || (!(p)->nblk && !done_)); done_ += PAIR_SPAN) { \
			uint64_t t0_ = ticks();                                             \
			int i_;                                                             \
			for (i_ = 0; i_ < PAIR_SPAN && !((p)->tb && budget_cut((p)->tb, i_)); i_++) \
				OP;                                                         \
			double per_ = (double)ticks_span_ns(t0_, ticks()) / i_;             \
			hist_add((HS), (uint64_t)(per_ + 0.5));                             \
			(p)->span[ns_++] = per_;                                            \
			(p)->side_n[SIDE] += i_;                                            \
			if (i_ < PAIR_SPAN)                                                 \
				(p)->late = true;                                           \
			if ((p)->tb)                                                        \
				(p)->tb->careful = per_ > BUDGET_SLOW_OP_NS || (p)->late;   \
		}                                                                           \
		for (int i_ = 0; (HO) && i_ < PAIR_TAIL && !(p)->err &&                     \
				 (!(p)->late || (!(p)->nblk && !i_)); i_++) {               \
			uint64_t t0_ = ticks();                                             \
			OP;                                                                 \
			hist_add((HO), ticks_span_ns(t0_, ticks()));                        \
		}                                                                           \
		*(med) = values_quantile((p)->span, ns_, 0.5);                              \
	} while (0)

/*
 * A side's block: its warm-up, then n timed round trips of OP (HO: the
 * store/load limit also times some alone). A macro, as TIMED_BLOCK, so
 * that OP is inlined alike on every side.
 */
#define SIDE_BLOCK(p, m, n, warm, HO, OP, med)                                              \
	do {                                                                                \
		for (int w_ = 0; warm_more(&(p)->bud, w_, (warm)); w_++)                    \
			OP;                                                                 \
		if (n)                                                                      \
			TIMED_BLOCK(p, n, m, (p)->in->h_limit[m], HO, OP, med);             \
	} while (0)

/* One block of round trips on line side @m's line @k; returns its median, or -1 after an error. */
static double limit_block(struct paired *p, int m, int k, int n, int warm)
{
	struct responder r = {.w = {.fn = respond_fn}, .line = p->line[m][k], .side = m};
	struct pp_handoff *ho = (struct pp_handoff *)r.line;
	struct pp_split *sp = (struct pp_split *)r.line;
	struct hist *none = NULL;
	uint64_t seq = 0;
	double med = 0;

	r.w.arg = &r;
	if (m == LIMIT_HANDOFF || m == LIMIT_CASSPUN) {
		atomic_store_explicit(&ho->word, 0, memory_order_relaxed);
	} else if (m == LIMIT_SPLIT) {
		atomic_store_explicit(&sp->req, 0, memory_order_relaxed);
		atomic_store_explicit(&sp->done, 0, memory_order_relaxed);
	} else {
		atomic_store_explicit(r.line, 0, memory_order_relaxed);
	}
	p->err = xc_queue_work(p->in->b, &r.w);
	if (p->err)
		return -1;
	/* each side's stop is a release store after its last round trip came back */
	if (m == LIMIT_HANDOFF) {
		SIDE_BLOCK(p, m, n, warm, none, pp_handoff_round_trip(ho, xh_noop, NULL), &med);
		atomic_store_explicit(&ho->word, PP_HANDOFF_STOP, memory_order_release);
	} else if (m == LIMIT_CASSPUN) {
		SIDE_BLOCK(p, m, n, warm, none, pp_casspun_round_trip(ho, xh_noop, NULL), &med);
		atomic_store_explicit(&ho->word, PP_HANDOFF_STOP, memory_order_release);
	} else if (m == LIMIT_SPLIT) {
		SIDE_BLOCK(p, m, n, warm, none, pp_split_round_trip(sp, xh_noop, NULL), &med);
		atomic_store_explicit(&sp->req, PP_SPLIT_STOP, memory_order_release);
	} else if (m == LIMIT_CAS) {
		SIDE_BLOCK(p, m, n, warm, none, pp_line_cas_round_trip(r.line, &seq), &med);
		atomic_store_explicit(r.line, PP_LINE_STOP, memory_order_release);
	} else {
		SIDE_BLOCK(p, m, n, warm, p->in->h_limit_op, pp_line_round_trip(r.line, &seq), &med);
		atomic_store_explicit(r.line, PP_LINE_STOP, memory_order_release);
	}
	/* acquire: r is on this stack; it goes once the responder is done with it */
	while (!atomic_load_explicit(&r.done, memory_order_acquire))
		cpu_relax();
	return med;
}

/* One block of waiting calls from a to b; returns its median, or -1 after an error. */
static double call_block(struct paired *p, int n, int warm)
{
	struct xc_stats s0, s1, t0s, t1s, d;
	int b = p->in->b;
	double med = 0;

	for (int i = 0; warm_more(&p->bud, i, warm) && !p->err; i++)
		p->err = xc_call_single(b, xh_noop, NULL, XC_WAIT);
	xh_stats(-1, &s0);
	xh_stats(b, &t0s);
	if (n)
		TIMED_BLOCK(p, n, NLIMITS, p->in->h_call, p->in->h_call_op,
			    p->err |= xc_call_single(b, xh_noop, NULL, XC_WAIT), &med);
	xh_stats(-1, &s1);
	xh_stats(b, &t1s);
	xc_stats_delta(&d, &s0, &s1);
	xc_stats_add(&p->out->call_delta, &d);
	xc_stats_delta(&d, &t0s, &t1s);
	xc_stats_add(&p->out->call_target, &d);
	return p->err ? -1 : med;
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
	budget_warm(&p->bud);   /* the first warm-up of every side */
	/* the same first warm-up as every other case, for each side */
	for (int m = 0; m < NLIMITS && in->want_limit; m++)
		if (limit_block(p, m, 0, 0, (int)warm) < 0)
			return;
	if (in->want_call && call_block(p, 0, (int)warm) < 0)
		return;
	budget_start(&bud);
	p->bud.warm_until = bud.deadline;       /* a block's own warm-up stops at the loop's end */
	p->tb = &bud;
	memset(p->side_n, 0, sizeof(p->side_n));
	for (int k = 0; p->nblk < p->nmax && !p->late; k++) {
		/* whole spans: the count rounds up to PAIR_SPAN */
		int n = PAIR_BLOCK;

		if (!bud.seconds && done >= bud.iters)
			break;
		if (done && !budget_check(&bud, done))
			break;
		if (!bud.seconds && bud.iters - done < n)
			n = (int)((bud.iters - done + PAIR_SPAN - 1) / PAIR_SPAN * PAIR_SPAN);
		for (int m = 0; m < NLIMITS; m++) {
			double lim = 0;

			if (in->want_limit && (!p->late || !p->nblk)) {
				lim = limit_block(p, m, k % PAIR_LINES, n, PAIR_WARM);
				if (lim < 0)
					return;
				if (m == LIMIT_STORE)
					p->line_blk_p50[k % PAIR_LINES][p->line_nblk[k % PAIR_LINES]++] = lim;
			}
			p->blk_p50[m][p->nblk] = lim;
		}
		double call = 0;
		if (in->want_call && (!p->late || !p->nblk) && (call = call_block(p, n, PAIR_WARM)) < 0)
			return;
		p->blk_p50[NLIMITS][p->nblk] = call;
		/* a block the loop's end cut counts when it is the first: every side ran in it */
		if (!p->late || !p->nblk)
			p->nblk++;
		done += n;
	}
	if (p->late) {
		budget_stopped(&bud);
		/* what every side ran: the count of each side's record */
		done = LONG_MAX;
		for (int m = 0; m <= NLIMITS; m++)
			if ((m < NLIMITS ? in->want_limit : in->want_call) && p->side_n[m] < done)
				done = p->side_n[m];
	}
	p->out->n = done;
}

/* Block @i's limit: the lower of its two ways' medians (0: not measured). */
static double block_limit(const struct paired *p, int i)
{
	double lim = p->blk_p50[LIMIT_STORE][i], cas = p->blk_p50[LIMIT_CAS][i];

	return cas > 0 && cas < lim ? cas : lim;
}

/*
 * Per block, side @num's median over side @den's (@den < 0: the block's
 * limit; side NLIMITS is the call) into r[]; returns how many.
 */
static int block_ratios(const struct paired *p, int num, int den, double *r)
{
	int nr = 0;

	for (int i = 0; i < p->nblk; i++) {
		double d = den < 0 ? block_limit(p, i) : p->blk_p50[den][i];

		if (d > 0)
			r[nr++] = p->blk_p50[num][i] / d;
	}
	return nr;
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
	char *pages[NLIMITS][PAIR_LINES] = {{0}};

	memset(&out->call_delta, 0, sizeof(out->call_delta));
	memset(&out->call_target, 0, sizeof(out->call_target));
	out->n = 0;
	p.span = malloc((PAIR_BLOCK / PAIR_SPAN + 1) * sizeof(*p.span));
	for (int m = 0; m <= NLIMITS; m++)
		p.blk_p50[m] = calloc((size_t)nmax, sizeof(double));
	if (!p.span)
		goto out;
	for (int m = 0; m <= NLIMITS; m++)
		if (!p.blk_p50[m])
			goto out;
	for (int i = 0; i < PAIR_LINES; i++) {
		p.line_blk_p50[i] = calloc((size_t)nmax / PAIR_LINES + 1, sizeof(double));
		if (!p.line_blk_p50[i])
			goto out;
		for (int m = 0; m < NLIMITS; m++) {
			/* a page each, mapped separately; the line's offset in it varies too */
			pages[m][i] = mmap(NULL, (size_t)pagesz, PROT_READ | PROT_WRITE,
					   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (pages[m][i] == MAP_FAILED) {
				pages[m][i] = NULL;
				goto out;
			}
			p.line[m][i] = (_Atomic uint64_t *)(pages[m][i] + (i * 5 * CACHELINE) % pagesz);
		}
	}
	void *args[1] = {&p};
	err = xh_run_on(&in->a, 1, paired_loop, args);
	if (!err)
		err = p.err;
	if (err)
		goto out;

	/* the span buffer, grown to hold a ratio per block */
	double *r = realloc(p.span, (size_t)(p.nblk + 1) * sizeof(*r));
	if (!r)
		goto out;
	p.span = r;
	out->blocks = p.nblk;
	for (int m = 0; m < NLIMITS; m++) {
		out->limit_p50[m] = in->want_limit ? values_quantile(p.blk_p50[m], p.nblk, 0.5) : 0;
		out->side_ratio_p50[m] = in->want_limit ?
			values_quantile(r, block_ratios(&p, m, -1, r), 0.50) : 0;
	}
	/* paired ratios: each call block over the lower limit block right before it */
	if (in->want_limit && in->want_call) {
		int nr = block_ratios(&p, NLIMITS, -1, r);

		out->ratio_p10 = values_quantile(r, nr, 0.10);
		out->ratio_p50 = values_quantile(r, nr, 0.50);
		out->ratio_p90 = values_quantile(r, nr, 0.90);
		/* the split: the bare handoff over the limit, the call over the bare handoff */
		out->handoff_ratio_p50 = out->side_ratio_p50[LIMIT_HANDOFF];
		nr = block_ratios(&p, NLIMITS, LIMIT_HANDOFF, r);
		out->code_ratio_p50 = values_quantile(r, nr, 0.50);
	}
	out->line_p50_min = out->line_p50_max = 0;
	for (int i = 0; i < PAIR_LINES && in->want_limit; i++) {
		if (!p.line_nblk[i])
			continue;
		double m = values_quantile(p.line_blk_p50[i], p.line_nblk[i], 0.5);
		if (!out->line_p50_min || m < out->line_p50_min)
			out->line_p50_min = m;
		if (m > out->line_p50_max)
			out->line_p50_max = m;
	}
out:
	for (int i = 0; i < PAIR_LINES; i++) {
		for (int m = 0; m < NLIMITS; m++)
			if (pages[m][i])
				munmap(pages[m][i], (size_t)pagesz);
		free(p.line_blk_p50[i]);
	}
	free(p.span);
	for (int m = 0; m <= NLIMITS; m++)
		free(p.blk_p50[m]);
	if (err)
		fprintf(stderr, "xcall-bench: paired %d <-> %d: %s\n", in->a, in->b, strerror(-err));
	return err ? err : out->n;
}
