/* SPDX-License-Identifier: MIT */
/*
 * throughput.c - calls per second: a stream of calls from one thread to
 * one CPU, from two threads to one CPU, and from one thread to every other
 * CPU in turn, through
 *
 *   spsc-ring        a bounded single-producer ring per sender and target,
 *                    consumer spinning (baselines.h): the reference;
 *   libxcall-nowait  xc_call_single(cpu, fn, arg, 0);
 *   libxcall-wait    the same with XC_WAIT: a round trip per call;
 *   libxcall-mpsc    nowait calls as descriptors on the target's shared list
 *                    (XC_ABLATE_RING): the design before per-sender rings;
 *   mutex-condvar    a bounded queue under a mutex with two condition
 *                    variables, as a plain pthreads program writes it.
 *
 * The senders are plain threads pinned to CPUs of their own, as a program's
 * threads are; libxcall runs on the targets alone, polling forever, and the
 * baselines' consumers run as work items on the same workers, so every row
 * is served by the same pinned threads. Every call is the same function,
 * which counts on a line of its target's own.
 *
 * Timing is by spans, as pingpong's: a span is many calls between two
 * timestamps, from the first call until the targets' counts say every call
 * ran, and gives one sample, its time per call. The rows alternate in one
 * process: round after round, each row runs a block of spans (the two
 * runtimes, with rings and with the shared list, take turns), so that every
 * row sees the same moments of a shared machine. Each row is also given as
 * a ratio to the ring's, of their medians and per round.
 */
#include "baselines.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TP_SPAN  10000  /* calls per span by default, all senders together */
#define TP_BLOCK 5      /* spans per block: a row's turn in a round */
#define TP_CHUNK 64     /* calls in a chunk of the sender's loop */
#define TP_SETTLE_NS 1000000000u /* the most to wait for libxcall's counters to count a call */

enum { O_SHAPES = 1, O_CASES, O_SPAN };

/* The two runtimes: per-sender rings, and the shared list (the ablation). */
enum { RT_RINGS, RT_LIST, NRTS };
static const unsigned rt_ablate[NRTS] = {0, XC_ABLATE_RING};

enum { V_RING, V_NOWAIT, V_WAIT, V_MPSC, V_CONDVAR, NVARS };
static const struct {
	const char *name;
	int rt;                 /* the runtime it runs in */
	bool lib;               /* libxcall's calls, counted by its counters */
} vars[NVARS] = {
	[V_RING] = {"spsc-ring", RT_RINGS, false},
	[V_NOWAIT] = {"libxcall-nowait", RT_RINGS, true},
	[V_WAIT] = {"libxcall-wait", RT_RINGS, true},
	[V_MPSC] = {"libxcall-mpsc", RT_LIST, true},
	[V_CONDVAR] = {"mutex-condvar", RT_RINGS, false},
};

enum { SH_1_1, SH_2_1, SH_1_ALL, NSHAPES };
static const struct {
	const char *name;
	int senders;
	bool all;               /* to every CPU that is not a sender, in turn */
} shapes[NSHAPES] = {
	[SH_1_1] = {"1-1", 1, false},
	[SH_2_1] = {"2-1", 2, false},
	[SH_1_ALL] = {"1-all", 1, true},
};

static const struct cmd_opt tp_opts[] = {
	{"shapes", required_argument, O_SHAPES, "LIST   only these shapes (default: all): 1-1 (one thread to one CPU),\n"
	 "                  2-1 (two threads to one CPU; needs 3 CPUs), 1-all (one thread to\n"
	 "                  every other CPU in turn)"},
	{"cases", required_argument, O_CASES, "LIST    only these rows (default: all): spsc-ring, libxcall-nowait,\n"
	 "                  libxcall-wait, libxcall-mpsc, mutex-condvar"},
	{"span", required_argument, O_SPAN, "N        calls per span, between two timestamps (default 10000)"},
	{0},
};

struct tp_args {
	bool shape[NSHAPES], want[NVARS];
	bool shapes_given;
	long span;
};

static const char *shape_name(int i)
{
	return shapes[i].name;
}

static const char *var_name(int i)
{
	return vars[i].name;
}

static int on_opt(int id, const char *arg, void *ctx);

static const struct cmd_desc desc = {
	.name = "throughput",
	.summary = "calls per second: libxcall nowait/wait, SPSC ring, shared list, mutex+condvar",
	.opts = tp_opts,
	.on_opt = on_opt,
	.default_iters = 1000000,
};

static int on_opt(int id, const char *arg, void *ctx)
{
	struct tp_args *a = ctx;

	switch (id) {
	case O_SHAPES:
		parse_names(desc.name, "shapes", arg, NSHAPES, shape_name, a->shape);
		a->shapes_given = true;
		return 0;
	case O_CASES:
		parse_names(desc.name, "cases", arg, NVARS, var_name, a->want);
		return 0;
	case O_SPAN:
		return parse_long(arg, 100, 1000000, &a->span);
	}
	return -1;
}

/* A target CPU: what senders read on every call, then the line its thread alone writes. */
struct tp_target {
	int cpu;
	struct pp_cvq *cvq;
	struct pp_ring **rings;         /* from each sender, for its consumer */
	_Alignas(CACHELINE) _Atomic uint64_t count;     /* calls run here */
	char pad[CACHELINE - sizeof(uint64_t)];
};

/* A baseline's consumer: a work item on the target's worker. */
struct tp_consumer {
	struct xc_work w;
	struct tp *tp;
	int t;
	_Atomic int done;
};

struct tp_sender {
	struct tp *tp;
	int cpu;
	int next;                       /* the next target, in turn */
	struct pp_ring **rings;         /* its ring to each target */
	long made;                      /* calls made in the span */
	int err;
	pthread_t thread;
} __attribute__((aligned(CACHELINE)));

/* One row's samples over a run of a shape. */
struct tp_side {
	double *span;                   /* per span: ns per call */
	int nspan, cap;
	double *blk;                    /* per round: its block's median, 0 where it had none */
	long calls;                     /* in timed spans */
	long warm;                      /* in its first warm-up */
	bool skipped;                   /* the plan's end for the case came before its first span */
	struct xc_stats delta;          /* libxcall's counters over its timed spans */
};

struct tp {
	const struct bopts *o;
	long poll_ns;
	int ns, nt;
	struct tp_sender snd[2];
	struct tp_target *tgt;
	struct tp_consumer *cons;
	char *tlist;                    /* the targets, for the runtime's cpus */
	uint64_t sent;                  /* calls sent: the targets' counts add up to it once all ran */
	int rt;                         /* the runtime up, or -1 */
	struct xc_stats rt_base;        /* its counters when it came up */
	uint64_t rt_calls;              /* libxcall calls made since */
	int ups;                        /* runtimes started: the rounds take turns */
	/* the span in progress, for the second sender */
	struct spin_barrier bar;
	int cmd;                        /* the row, or -1: the second sender leaves */
	long each;
	const struct budget *tb;
	int consume;                    /* the row the consumers serve */
	_Alignas(CACHELINE) _Atomic int stop;   /* ring consumers: leave once the rings are empty */
	char pad[CACHELINE - sizeof(int)];      /* which an idle consumer reads: nothing else there */
	bool late;                      /* the loop's end came: no more spans */
	int err;
	int rounds;
	double *scratch;                /* a block's span times */
	struct tp_side side[NVARS];
};

/* Every row's call: count it on the target, whose thread alone writes the line. */
static void tp_count(void *arg)
{
	_Atomic uint64_t *c = arg;

	/* release: a sender that sees the count sees the call's effects */
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1, memory_order_release);
}

/*
 * n calls of OP from sender s, each to the next target in turn (x_). The
 * clock is read only while calls are slow (careful: budget_cut), before
 * each, so that a fast stream runs with nothing else in it; otherwise the
 * calls go in chunks with no more than a counter between them. A macro, so
 * that every row's loop is the same code around its OP.
 */
#define TP_ISSUE(OP)                                                                    \
	do {                                                                            \
		while (k < n && !err) {                                                 \
			long end_ = b && b->careful ? k + 1 :                           \
				    n - k > TP_CHUNK ? k + TP_CHUNK : n;                \
			if (b && budget_cut(b, (int)(k > 0)))                           \
				break;                                                  \
			for (; k < end_; k++) {                                         \
				struct tp_target *x_ = &tgt[t];                         \
				OP;                                                     \
				if (++t == nt)                                          \
					t = 0;                                          \
			}                                                               \
		}                                                                       \
	} while (0)

static long issue(struct tp *tp, struct tp_sender *s, int v, long n, const struct budget *b)
{
	struct tp_target *tgt = tp->tgt;
	struct pp_ring **rings = s->rings;
	int nt = tp->nt, t = s->next, err = 0;
	long k = 0;

	switch (v) {
	case V_RING:
		TP_ISSUE(pp_ring_push(rings[t], tp_count, (void *)&x_->count));
		break;
	case V_NOWAIT:
	case V_MPSC:
		TP_ISSUE(if ((err = xc_call_single(x_->cpu, tp_count, (void *)&x_->count, 0))) break);
		break;
	case V_WAIT:
		TP_ISSUE(if ((err = xc_call_single(x_->cpu, tp_count, (void *)&x_->count, XC_WAIT))) break);
		break;
	case V_CONDVAR:
		TP_ISSUE(pp_cvq_push(x_->cvq, tp_count, (void *)&x_->count));
		break;
	}
	s->next = t;
	if (err)
		s->err = err;
	return k;
}

/* The second sender: its share of every span, until told to leave. */
static void *sender_loop(void *arg)
{
	struct tp_sender *s = arg;
	struct tp *tp = s->tp;

	for (;;) {
		spin_barrier_wait(&tp->bar, NULL);
		if (tp->cmd < 0)
			return NULL;
		s->made = issue(tp, s, tp->cmd, tp->each, tp->tb);
		spin_barrier_wait(&tp->bar, NULL);
	}
}

/* Until the targets have run every call sent. */
static void wait_ran(struct tp *tp)
{
	for (;;) {
		uint64_t ran = 0;

		for (int t = 0; t < tp->nt; t++)
			/* acquire: pairs with tp_count's release */
			ran += atomic_load_explicit(&tp->tgt[t].count, memory_order_acquire);
		if (ran >= tp->sent)
			return;
		cpu_relax();
	}
}

/*
 * One span of row v: each sender makes `each` calls (fewer where b's end
 * cut them), and the span ends once the targets ran every one. Its time per
 * call in ns, -1 if no call was made; *made what was.
 */
static double span(struct tp *tp, int v, long each, const struct budget *b, long *made)
{
	uint64_t t0, t1;
	long n;

	tp->cmd = v;
	tp->each = each;
	tp->tb = b;
	if (tp->ns > 1)
		spin_barrier_wait(&tp->bar, NULL);      /* the second sender starts with us */
	t0 = ticks();
	n = issue(tp, &tp->snd[0], v, each, b);
	if (tp->ns > 1) {
		spin_barrier_wait(&tp->bar, NULL);      /* ... and has made its calls */
		n += tp->snd[1].made;
	}
	tp->sent += (uint64_t)n;
	wait_ran(tp);
	t1 = ticks();
	if (vars[v].lib)
		tp->rt_calls += (uint64_t)n;
	for (int i = 0; i < tp->ns; i++)
		if (tp->snd[i].err && !tp->err)
			tp->err = tp->snd[i].err;
	*made = n;
	return n ? (double)ticks_span_ns(t0, t1) / (double)n : -1;
}

/* ---- runtimes and consumers ---- */

static void rt_down(struct tp *tp)
{
	if (tp->rt >= 0)
		xh_down();
	tp->rt = -1;
}

static int rt_use(struct tp *tp, int rt)
{
	if (tp->rt == rt)
		return 0;
	rt_down(tp);
	int err = xh_up(tp->o, tp->tlist, tp->poll_ns, rt_ablate[rt]);
	if (err) {
		tp->err = err;  /* the run's error is xc_init's, not the -ENOMEM of a failed malloc */
		return -1;
	}
	tp->rt = rt;
	tp->rt_calls = 0;
	tp->ups++;
	xh_stats(-1, &tp->rt_base);
	return 0;
}

/*
 * libxcall's counters, once they count every call made: a worker counts a
 * call after its function, so the last one's count may still be on its way.
 * Given up after a second, or sooner once the plan has no time left.
 */
static void settle(struct tp *tp, struct xc_stats *out)
{
	uint64_t t0 = now_ns();

	for (;;) {
		xh_stats(-1, out);
		if (out->calls - tp->rt_base.calls >= tp->rt_calls)
			return;
		uint64_t t = now_ns();
		if (t - t0 > TP_SETTLE_NS || (t - t0 > TP_SETTLE_NS / 100 && plan_overdue()))
			return;
		cpu_relax();
	}
}

static void consume(void *arg)
{
	struct tp_consumer *c = arg;
	struct tp *tp = c->tp;
	struct tp_target *x = &tp->tgt[c->t];

	if (tp->consume == V_RING)
		pp_ring_serve(x->rings, tp->ns, &tp->stop);
	else
		pp_cvq_serve(x->cvq);
	/* release: the consumer is done with the queue */
	atomic_store_explicit(&c->done, 1, memory_order_release);
}

/* The first n consumers leave, their queues empty, and are done with tp. */
static void consumers_stop(struct tp *tp, int v, int n)
{
	/* release: the last entries, which the targets already ran, come before the stop */
	atomic_store_explicit(&tp->stop, 1, memory_order_release);
	for (int t = 0; t < n; t++)
		if (v == V_CONDVAR)
			pp_cvq_stop(tp->tgt[t].cvq);
	for (int t = 0; t < n; t++)
		/* acquire: the work item no longer touches tp */
		while (!atomic_load_explicit(&tp->cons[t].done, memory_order_acquire))
			cpu_relax();
}

/* A baseline row's consumers, on the targets' workers, for one block. */
static int consumers_start(struct tp *tp, int v)
{
	tp->consume = v;
	atomic_store_explicit(&tp->stop, 0, memory_order_relaxed);
	for (int t = 0; t < tp->nt; t++) {
		struct tp_consumer *c = &tp->cons[t];

		if (v == V_CONDVAR)
			pp_cvq_restart(tp->tgt[t].cvq);
		atomic_store_explicit(&c->done, 0, memory_order_relaxed);
		c->w.fn = consume;
		c->w.arg = c;
		int err = xc_queue_work(tp->tgt[t].cpu, &c->w);
		if (err) {
			fprintf(stderr, "xcall-bench throughput: xc_queue_work(cpu %d): %s\n", tp->tgt[t].cpu,
				strerror(-err));
			tp->err = err;
			consumers_stop(tp, v, t);       /* those started: nothing was sent to them */
			return -1;
		}
	}
	return 0;
}

/* ---- the alternation ---- */

static int push_span(struct tp_side *sd, double v)
{
	if (sd->nspan == sd->cap) {
		int cap = sd->cap ? 2 * sd->cap : 64;
		double *p = realloc(sd->span, (size_t)cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		sd->span = p;
		sd->cap = cap;
	}
	sd->span[sd->nspan++] = v;
	return 0;
}

/*
 * Past the loop's end a row with no sample yet still runs a span, unless the
 * plan's end for the case has come too: what a block cannot cut (its
 * consumer's start, one call) can take a time slice each on a loaded machine,
 * and the cases after it keep their time. It is then recorded skipped.
 */
static bool row_skips(struct tp *tp, int v)
{
	struct tp_side *sd = &tp->side[v];

	if (!sd->skipped && tp->late && !sd->nspan && plan_overdue()) {
		sd->skipped = true;
		plan_capped();
	}
	return sd->skipped || (tp->late && sd->nspan);
}

/*
 * Row v's turn in round k: `warm` calls untimed, then up to `spans` spans
 * of span_calls. Once b's end has come, only a row with no sample yet runs
 * a span, and no more than its first call where calls are slow.
 */
static int block(struct tp *tp, int v, int k, int spans, long span_calls, long warm, struct budget *b)
{
	struct tp_side *sd = &tp->side[v];
	long each = span_calls / tp->ns, made;
	struct xc_stats s0, s1, d;
	int n = 0;

	if (row_skips(tp, v))
		return 0;
	if (!vars[v].lib && consumers_start(tp, v))
		return -1;
	/* untimed, at a pace that says whether the spans must look at the clock as they go */
	b->careful = true;
	for (long w = 0; w < warm && !tp->err && !budget_late(b); w += made) {
		long m = warm - w < span_calls ? warm - w : span_calls;
		double per = span(tp, v, m / tp->ns ? m / tp->ns : 1, b, &made);

		b->careful = per < 0 || per > BUDGET_SLOW_OP_NS;
		if (!k)
			sd->warm += made;
	}
	if (vars[v].lib)
		settle(tp, &s0);
	for (int i = 0; i < spans && !tp->err; i++) {
		if ((tp->late || budget_late(b)) && sd->nspan) {
			tp->late = true;
			break;
		}
		double per = span(tp, v, each, b, &made);
		if (per < 0)
			break;
		b->careful = per > BUDGET_SLOW_OP_NS;
		if (push_span(sd, per)) {
			tp->err = -ENOMEM;
			break;
		}
		sd->calls += made;
		tp->scratch[n++] = per;
		if (made < each * tp->ns) {
			tp->late = true;        /* the loop's end cut the span: a sample of what it ran */
			break;
		}
	}
	if (vars[v].lib) {
		settle(tp, &s1);
		xc_stats_delta(&d, &s0, &s1);
		xc_stats_add(&sd->delta, &d);
	} else {
		consumers_stop(tp, v, tp->nt);
	}
	sd->blk[k] = values_quantile(tp->scratch, n, 0.5);
	return tp->err ? -1 : 0;
}

/*
 * Rounds until every row has timed its calls or the loop's end came. A
 * row's first block starts with its warm-up, a tenth of its calls (at most
 * 10,000), in the loop's own time: each runtime comes up once in a round,
 * and the first round needs both anyway. Later blocks start with a tenth
 * of a span, which brings the lines and the consumer back to the row after
 * the others' turns.
 */
static int alternate(struct tp *tp, const bool *want, struct budget *bud, long span_calls)
{
	long done = 0, warm = warmup_iters(bud->iters), again = span_calls / 10 ? span_calls / 10 : 1;
	int order[NVARS];

	tp->scratch = malloc(TP_BLOCK * sizeof(*tp->scratch));
	if (!tp->scratch)
		return -1;
	budget_start(bud);
	for (int k = 0; !tp->late; k++) {
		int spans = TP_BLOCK;

		if (!bud->seconds && done >= bud->iters)
			break;
		if (done && !budget_check(bud, done))
			break;
		if (!bud->seconds && bud->iters - done < spans * span_calls)
			spans = (int)((bud->iters - done + span_calls - 1) / span_calls);
		for (int v = 0; v < NVARS; v++) {
			double *p = realloc(tp->side[v].blk, (size_t)(k + 1) * sizeof(*p));

			if (!p)
				return -1;
			tp->side[v].blk = p;
			p[k] = 0;
		}
		/* the runtime that is up takes its turn first: a round starts none it need not */
		int first = tp->rt >= 0 ? tp->rt : RT_RINGS;
		for (int j = 0; j < NRTS; j++) {
			int rt = j ? 1 - first : first, nv = 0;

			/* odd rounds run the rows in the other order, so that none always follows another */
			for (int i = 0; i < NVARS; i++) {
				int v = k % 2 ? NVARS - 1 - i : i;

				if (want[v] && vars[v].rt == rt && !row_skips(tp, v))
					order[nv++] = v;
			}
			if (nv && rt_use(tp, rt))
				return -1;
			for (int i = 0; i < nv; i++)
				if (block(tp, order[i], k, spans, span_calls, k ? again : warm, bud))
					return -1;
		}
		tp->rounds = k + 1;
		done += (long)spans * span_calls;
	}
	if (tp->late)
		budget_stopped(bud);
	return 0;
}

/* ---- a shape ---- */

static void tp_free(struct tp *tp)
{
	for (int t = 0; tp->tgt && t < tp->nt; t++) {
		pp_cvq_free(tp->tgt[t].cvq);
		free(tp->tgt[t].rings);
	}
	for (int s = 0; s < tp->ns; s++) {
		for (int t = 0; tp->snd[s].rings && t < tp->nt; t++)
			pp_ring_free(tp->snd[s].rings[t]);
		free(tp->snd[s].rings);
	}
	for (int v = 0; v < NVARS; v++) {
		free(tp->side[v].span);
		free(tp->side[v].blk);
	}
	free(tp->tgt);
	free(tp->cons);
	free(tp->tlist);
	free(tp->scratch);
}

/* Senders, targets and their queues: the first senders CPUs send, the others are the targets. */
static int tp_setup(struct tp *tp, const struct bopts *o, int sh)
{
	int ns = shapes[sh].senders, nt = shapes[sh].all ? o->ncpus - ns : 1;
	size_t len = (size_t)nt * 12 + 1;

	tp->o = o;
	tp->poll_ns = o->poll_set ? o->poll_ns : XC_POLL_FOREVER;
	tp->ns = ns;
	tp->nt = nt;
	tp->rt = -1;
	tp->tgt = aligned_alloc(CACHELINE, (size_t)nt * sizeof(*tp->tgt));
	tp->cons = calloc((size_t)nt, sizeof(*tp->cons));
	tp->tlist = malloc(len);
	if (!tp->tgt || !tp->cons || !tp->tlist)
		return -ENOMEM;
	memset(tp->tgt, 0, (size_t)nt * sizeof(*tp->tgt));
	tp->tlist[0] = 0;
	for (int t = 0; t < nt; t++) {
		struct tp_target *x = &tp->tgt[t];
		size_t at = strlen(tp->tlist);

		x->cpu = o->cpu[ns + t];
		snprintf(tp->tlist + at, len - at, "%s%d", t ? "," : "", x->cpu);
		x->cvq = pp_cvq_new();
		x->rings = calloc((size_t)ns, sizeof(*x->rings));
		if (!x->cvq || !x->rings)
			return -ENOMEM;
		tp->cons[t].tp = tp;
		tp->cons[t].t = t;
	}
	for (int s = 0; s < ns; s++) {
		struct tp_sender *sd = &tp->snd[s];

		sd->tp = tp;
		sd->cpu = o->cpu[s];
		sd->rings = calloc((size_t)nt, sizeof(*sd->rings));
		if (!sd->rings)
			return -ENOMEM;
		for (int t = 0; t < nt; t++)
			if (!(sd->rings[t] = tp->tgt[t].rings[s] = pp_ring_new()))
				return -ENOMEM;
	}
	spin_barrier_init(&tp->bar, (unsigned)ns);
	return 0;
}

/* One run of a shape: every wanted row, alternating. 0, or -1 after an error (said). */
static int shape_run(struct tp *tp, const bool *want, struct budget *bud, long span_calls)
{
	int err = pin_self(tp->snd[0].cpu), started = 1;

	for (int s = 1; s < tp->ns && !err; s++)
		if (!(err = thread_start_pinned(&tp->snd[s].thread, tp->snd[s].cpu, sender_loop, &tp->snd[s])))
			started++;
	if (!err && alternate(tp, want, bud, span_calls))
		err = tp->err ? tp->err : -ENOMEM;
	rt_down(tp);
	if (started > 1) {
		tp->cmd = -1;
		spin_barrier_wait(&tp->bar, NULL);
		for (int s = 1; s < started; s++)
			pthread_join(tp->snd[s].thread, NULL);
	}
	unpin_self();
	if (err)
		fprintf(stderr, "xcall-bench throughput: %s\n", strerror(-err));
	return err ? -1 : 0;
}

/* ---- records ---- */

/* The statistics of a row's spans, exact: a span's time per call is a fraction of a ns. */
static void span_stats(const struct tp_side *sd, double *tmp, struct hist_stats *s)
{
	int n = sd->nspan;
	double sum = 0, sq = 0;

	memset(s, 0, sizeof(*s));
	if (!n)
		return;
	memcpy(tmp, sd->span, (size_t)n * sizeof(*tmp));
	for (int i = 0; i < n; i++) {
		sum += tmp[i];
		sq += tmp[i] * tmp[i];
	}
	s->n = (uint64_t)n;
	s->mean = sum / n;
	s->stddev = sq / n > s->mean * s->mean ? sqrt(sq / n - s->mean * s->mean) : 0;
	s->p50 = values_quantile(tmp, n, 0.50);        /* sorts tmp */
	s->p90 = tmp[(int)ceil(0.90 * n) - 1];
	s->p99 = tmp[(int)ceil(0.99 * n) - 1];
	s->min = tmp[0];
	s->max = tmp[n - 1];
}

static void name_of(char *buf, size_t size, int sh, const char *row)
{
	snprintf(buf, size, "%s/%s", shapes[sh].name, row);
}

static int records(struct tp *tp, int sh, const bool *want, long span_calls, int rep)
{
	int cl[CPU_SETSIZE], ncl = 0, most = 0;
	struct rec *row[NVARS] = {0};
	char name[64], pb[32];

	for (int s = 0; s < tp->ns; s++)
		cl[ncl++] = tp->snd[s].cpu;
	for (int t = 0; t < tp->nt; t++)
		cl[ncl++] = tp->tgt[t].cpu;
	for (int v = 0; v < NVARS; v++)
		most = tp->side[v].nspan > most ? tp->side[v].nspan : most;
	most = most > tp->rounds ? most : tp->rounds;
	double *tmp = malloc((size_t)(most + 1) * sizeof(*tmp));
	if (!tmp)
		return -1;
	for (int v = 0; v < NVARS; v++) {
		struct tp_side *sd = &tp->side[v];

		if (!want[v])
			continue;
		name_of(name, sizeof(name), sh, vars[v].name);
		if (!sd->nspan) {
			rec_skipped("throughput", name, PLAN_LATE_WHY, rep);
			continue;
		}
		struct rec *r = row[v] = rec_new("throughput", name, "ns", "lower", rep);
		span_stats(sd, tmp, &r->s);
		r->has_min_stddev = true;
		rec_cpu_list(r, cl, ncl);
		rec_param_s(r, "shape", shapes[sh].name);
		rec_param_i(r, "senders", tp->ns);
		rec_param_i(r, "targets", tp->nt);
		rec_param_i(r, "calls", sd->calls);
		rec_param_i(r, "span", span_calls);
		rec_param_i(r, "rounds", tp->rounds);
		rec_param_i(r, "runtimes", tp->ups);
		rec_param_i(r, "warmup", sd->warm);
		rec_param_s(r, "timing", "per call: spans of span calls, until the targets ran them all");
		if (r->s.p50 > 0)
			rec_param_d(r, "calls_per_s", 1e9 / r->s.p50);
		if (vars[v].lib) {
			rec_param_s(r, "poll", poll_name(tp->poll_ns, pb, sizeof(pb)));
			rec_param_s(r, "ablate", ablate_name(rt_ablate[vars[v].rt], pb, sizeof(pb)));
			rec_xc_counters(r, &sd->delta);
		} else {
			rec_param_i(r, "entries", PP_RING_ENTRIES);
		}
		if (shapes[sh].all && tp->nt == 1)
			rec_param_s(r, "note", "all other CPUs are one CPU here: the same as 1-1");
	}
	/* ratios to the ring: of the medians, and per round of the blocks' medians */
	struct rec *ring = row[V_RING];
	for (int v = 0; v < NVARS && ring && ring->s.p50 > 0; v++) {
		struct rec *r = row[v];
		int n = 0;

		if (!r || v == V_RING || !r->s.n)
			continue;
		rec_param_d(r, "ratio_to_ring", r->s.p50 / ring->s.p50);
		for (int k = 0; k < tp->rounds; k++)
			if (tp->side[v].blk[k] > 0 && tp->side[V_RING].blk[k] > 0)
				tmp[n++] = tp->side[v].blk[k] / tp->side[V_RING].blk[k];
		if (!n)
			continue;
		rec_param_d(r, "paired_ratio_p50", values_quantile(tmp, n, 0.50));   /* sorts tmp */
		rec_param_d(r, "paired_ratio_p10", tmp[(int)ceil(0.10 * n) - 1]);
		rec_param_d(r, "paired_ratio_p90", tmp[(int)ceil(0.90 * n) - 1]);
	}
	free(tmp);
	return 0;
}

static void print_table(struct rec *first)
{
	char shape[64] = "";

	printf("\nthroughput: ns per call = a span's time over its calls, from the first call until the\n"
	       "targets ran them all; ratio = p50 / the spsc-ring's p50; paired = per round, the row's\n"
	       "block median / the ring's, p50 [p10-p90]\n");

	for (struct rec *r = first; r; r = r->next) {
		const char *skipped = rec_param_str(r, "skipped"), *row = strchr(r->kase, '/');
		char x[4][32], cps[32] = "-", rb[48] = "-", pr[64] = "-", name[80], sh[64];

		snprintf(sh, sizeof(sh), "%.*s", row ? (int)(row - r->kase) : (int)strlen(r->kase), r->kase);
		if (strcmp(sh, shape)) {
			int ns = (int)rec_param_get(r, "senders", 1), nt = (int)rec_param_get(r, "targets", 1);

			snprintf(shape, sizeof(shape), "%s", sh);
			if (!row) {
				/* a shape skipped whole */
				printf("\n%-24s %3d  skipped: %s\n", r->kase, r->repeat, skipped);
				continue;
			}
			if (skipped)
				printf("\n%s:\n", sh);
			else
				printf("\n%s: %d thread%s to %d CPU%s, spans of %d calls%s\n", sh, ns, ns > 1 ? "s" : "",
				       nt, nt > 1 ? "s" : "", (int)rec_param_get(r, "span", 0),
				       rec_param_str(r, "note") ? " (all others is one CPU here: as 1-1)" : "");
			printf("%-24s %3s %6s %9s %9s %9s %9s %8s  %s\n", "case", "rep", "spans", "p50", "p90",
			       "p99", "calls/s", "ratio", "paired");
		}
		if (skipped) {
			printf("%-24s %3d  skipped: %s\n", r->kase, r->repeat, skipped);
			continue;
		}
		snprintf(x[0], 32, "%.1f ns", r->s.p50);
		snprintf(x[1], 32, "%.1f ns", r->s.p90);
		snprintf(x[2], 32, "%.1f ns", r->s.p99);
		double c = rec_param_get(r, "calls_per_s", 0);
		if (c > 0)
			snprintf(cps, sizeof(cps), "%.2f M", c / 1e6);
		snprintf(name, sizeof(name), "%s/%s", sh, vars[V_RING].name);
		const struct rec *ring = rec_find("throughput", name, r->repeat);
		double ratio = rec_param_get(r, "ratio_to_ring", 0);
		if (ratio > 0)
			fmt_ratio(rb, sizeof(rb), "%.2fx", ratio, r, ring);
		double p50 = rec_param_get(r, "paired_ratio_p50", 0);
		if (p50 > 0)
			snprintf(pr, sizeof(pr), "%.2fx [%.2f-%.2f]%s", p50, rec_param_get(r, "paired_ratio_p10", 0),
				 rec_param_get(r, "paired_ratio_p90", 0), ratio_mark(r, ring));
		snprintf(x[3], 32, "%llu", (unsigned long long)r->s.n);
		printf("%-24s %3d %6s %9s %9s %9s %9s %8s  %s\n", r->kase, r->repeat, x[3], x[0], x[1], x[2],
		       cps, rb, pr);
	}
}

int cmd_throughput(int argc, char **argv)
{
	struct tp_args a = {.span = TP_SPAN};
	struct bopts o;
	bool want[NVARS], all = true;
	int run[NSHAPES] = {0};
	long runs = 0, most_t = 1;
	char why[64];

	cli_parse(&desc, argc, argv, &o, &a);
	if (o.ncpus < 2)
		cli_fail(desc.name, "%s", cli_too_few_cpus(&o, 2));
	for (int v = 0; v < NVARS; v++)
		all &= !a.want[v];
	for (int v = 0; v < NVARS; v++)
		want[v] = all || a.want[v];
	for (int sh = 0; sh < NSHAPES; sh++) {
		bool asked = !a.shapes_given || a.shape[sh];

		if (!asked)
			continue;
		if (o.ncpus < shapes[sh].senders + 1) {
			/* asked by name, it cannot run: say so; among all, it is skipped with the reason */
			if (a.shapes_given)
				cli_fail(desc.name, "shape %s %s", shapes[sh].name,
					 cli_too_few_cpus(&o, shapes[sh].senders + 1));
			run[sh] = -1;
			continue;
		}
		run[sh] = 1;
		runs++;
		long nt = shapes[sh].all ? o.ncpus - shapes[sh].senders : 1;
		most_t = nt > most_t ? nt : most_t;
	}
	/*
	 * A shape is one case: every row alternating; the loop's end can come
	 * with a runtime's turn to come, which starts all the same for its rows'
	 * first span, so each case has two runtimes to start and stop.
	 */
	plan_cases(runs * o.repeat, plan_case_s(&o) + 2 * plan_start_cost((int)most_t));
	plan_start(NULL);

	struct rec *first = NULL;
	for (int rep = 0; rep < o.repeat; rep++) {
		for (int sh = 0; sh < NSHAPES; sh++) {
			char name[64];

			if (run[sh] < 0) {
				snprintf(why, sizeof(why), "needs %d CPUs, --cpus gives %d", shapes[sh].senders + 1,
					 o.ncpus);
				struct rec *r = rec_skipped("throughput", shapes[sh].name, why, rep);
				first = first ? first : r;
				continue;
			}
			if (!run[sh])
				continue;
			struct tp tp = {0};
			struct budget bud;
			long span_calls;

			if (tp_setup(&tp, &o, sh)) {
				tp_free(&tp);
				fprintf(stderr, "xcall-bench throughput: %s\n", strerror(ENOMEM));
				return 1;
			}
			if (tp.ns > 1)
				snprintf(why, sizeof(why), "%d,%d", tp.snd[0].cpu, tp.snd[1].cpu);
			else
				snprintf(why, sizeof(why), "%d", tp.snd[0].cpu);
			progress("throughput: %s, cpus %s -> %s, repeat %d", shapes[sh].name, why, tp.tlist, rep);
			if (plan_late()) {
				for (int v = 0; v < NVARS; v++) {
					if (!want[v])
						continue;
					name_of(name, sizeof(name), sh, vars[v].name);
					struct rec *r = rec_skipped("throughput", name, PLAN_LATE_WHY, rep);
					first = first ? first : r;
				}
				tp_free(&tp);
				continue;
			}
			budget_init(&bud, &o, desc.default_iters);
			/* whole spans, each sender's share the same */
			span_calls = !bud.seconds && bud.iters < a.span ? bud.iters : a.span;
			span_calls = span_calls / tp.ns * tp.ns;
			if (span_calls < tp.ns)
				span_calls = tp.ns;
			struct rec *mark = rec_last();
			if (shape_run(&tp, want, &bud, span_calls) || records(&tp, sh, want, span_calls, rep)) {
				tp_free(&tp);
				return 1;
			}
			if (!first)
				first = mark ? mark->next : rec_first();
			tp_free(&tp);
		}
	}
	if (g_out.quiet)
		return 0;
	if (g_out.csv) {
		out_csv(stdout, first);
		return 0;
	}
	print_table(first);
	return 0;
}
