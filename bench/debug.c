/* SPDX-License-Identifier: MIT */
/*
 * debug.c - `xcall-bench debug [stuck] [trace] [urgent] [follow]`: what libxcall's
 * debugging aids cost, and what XC_URGENT buys.
 *
 *   stuck   the waiting-call round trip of `pingpong` libxcall-polling with
 *           stuck-call reports on (stuck_ms 5000) and off (XC_STUCK_OFF).
 *   trace   the same round trip, and a storm of nowait calls, with tracing
 *           off and on (trace_file = a temporary file, deleted after; its
 *           size and the rings' drops are reported).
 *   follow  the same round trip with the workers' watch for the OS taking
 *           their CPU (xc_opts.follow_os) on and off.
 *   urgent  delivery latency (call made until its function starts, both
 *           stamped with the same clock) to a worker busy in a work item
 *           that spins until the call ran or --busy-us passed: with
 *           XC_URGENT (a signal), without (the call waits for the item to
 *           end: the rest of --busy-us), and without but with the item
 *           calling xc_poll() every --poll-every iterations.
 *
 * Each pair runs in one invocation, one case after the other, each with its
 * own xc_init/xc_exit; the order flips every repeat so that a drifting
 * machine does not always favour the same side.
 */
#include "bench.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { O_BUSY = 1, O_POLL_EVERY };

struct dbg_cfg {
	long busy_us, poll_every;
};

static const struct cmd_opt dbg_opts[] = {
	{"busy-us", required_argument, O_BUSY, "US   urgent: the busy work item's bound (default 1000)"},
	{"poll-every", required_argument, O_POLL_EVERY, "N urgent: the polling row calls xc_poll() every N loop iterations (default 1000)"},
	{0},
};

static int on_opt(int id, const char *arg, void *ctx)
{
	struct dbg_cfg *c = ctx;
	switch (id) {
	case O_BUSY: return parse_long(arg, 1, 10000000, &c->busy_us);
	case O_POLL_EVERY: return parse_long(arg, 1, 1L << 40, &c->poll_every);
	}
	return -1;
}

static const struct cmd_desc desc = {
	.name = "debug",
	.summary = "cost of stuck-call reports and tracing, and XC_URGENT delivery to a busy worker\n"
		   "parts: stuck trace urgent follow (default: all four)\n"
		   "  stuck   waiting-call round trip (libxcall-polling), stuck reports on (5000 ms) vs off\n"
		   "  trace   the round trip and a nowait storm, tracing off vs on (a temp file, deleted)\n"
		   "  follow  the round trip, the workers' watch for the OS taking their CPU on vs off\n"
		   "  urgent  call-to-start latency to a worker in a busy work item that never polls:\n"
		   "          XC_URGENT (signal), plain (waits for the item's end, --busy-us), and plain\n"
		   "          with the item calling xc_poll() every --poll-every iterations\n"
		   "default iterations: round trip and storm 100000, urgent 2000 (--iterations sets all);\n"
		   "--trace FILE applies to the stuck and urgent rows, never to the trace rows",
	.args = "[part...]",
	.opts = dbg_opts,
	.on_opt = on_opt,
};

#define RT_ITERS 100000
#define STORM_ITERS 100000
#define URGENT_ITERS 2000

struct dctx {
	struct bopts o;
	struct dbg_cfg c;
	int a, b;               /* caller CPU, target CPU */
	char pair[32];
	long poll;              /* --poll if given, else forever */
	struct hist h;
};

/* Up on the pair with these debugging options; trace_file NULL = --trace. */
static int up(struct dctx *k, int stuck_ms, const char *trace_file, bool follow_os)
{
	struct xc_opts xo = {.cpus = k->pair, .poll_ns = k->poll, .stuck_ms = stuck_ms,
			     .trace_file = trace_file, .follow_os = follow_os ? 0 : XC_FOLLOW_OS_OFF};
	int err = xh_up_opts(&xo);
	if (err)
		fprintf(stderr, "xcall-bench debug: xc_init(cpus=%s): %s\n", k->pair, strerror(-err));
	return err;
}

static void common_params(struct dctx *k, struct rec *r, long n, long iters)
{
	int cl[2] = {k->a, k->b};
	char pb[32];
	rec_cpu_list(r, cl, 2);
	rec_param_i(r, "iterations", n);
	rec_param_i(r, "warmup", warmup_iters(iters));
	rec_param_s(r, "poll", poll_name(k->poll, pb, sizeof(pb)));
}

/* A temporary trace file name; the file is written by xc_exit. */
static void trace_tmp(char *buf, size_t n)
{
	const char *dir = getenv("TMPDIR");
	snprintf(buf, n, "%s/xcall-bench-trace-XXXXXX", dir && *dir ? dir : "/tmp");
	int fd = mkstemp(buf);
	if (fd >= 0)
		close(fd);
	else
		snprintf(buf, n, "/tmp/xcall-bench-trace-%d.json", (int)getpid());
}

/* Size of the trace xc_exit wrote, then delete it. */
static long long trace_take(const char *path)
{
	struct stat st;
	long long size = stat(path, &st) ? -1 : (long long)st.st_size;
	unlink(path);
	return size;
}

static struct rec *ratio_rec(const char *kase, int rep, double on, double off, struct rec *ref)
{
	struct rec *r = rec_new("debug", kase, "ratio", "lower", rep);
	rec_value(r, off > 0 ? on / off : 0);
	if (ref && ref->has_cpus)
		rec_cpus(r, &ref->cpus);
	return r;
}

/* ---- the waiting-call round trip (stuck, trace, follow) ---- */

/* What a round-trip case turns on: trace 0 off, 1 on (a temporary file), -1 as --trace says. */
struct rt_cfg {
	const char *kase;
	int stuck_ms, trace;
	bool follow_os;
};

static struct rec *roundtrip(struct dctx *k, const struct rt_cfg *c, int rep)
{
	char tf[256];
	if (c->trace > 0)
		trace_tmp(tf, sizeof(tf));
	if (up(k, c->stuck_ms, c->trace > 0 ? tf : c->trace == 0 ? xh_no_trace : NULL, c->follow_os))
		return NULL;
	struct budget bud;
	budget_init(&bud, &k->o, RT_ITERS);
	bud.batch = PAIR_SPAN;  /* back-to-back round trips, batch-timed */
	hist_reset(&k->h);
	struct xh_timed_out d = {0};
	long n = xh_time_calls_x(k->a, k->b, XC_WAIT, &bud, &k->h, NULL, &d);
	struct xc_stats end;
	xh_stats(-1, &end);     /* trace drops: the rings' state at the end */
	xh_down();
	long long bytes = c->trace > 0 ? trace_take(tf) : 0;
	if (n < 0)
		return NULL;
	struct rec *r = rec_new("debug", c->kase, "ns", "lower", rep);
	rec_hist(r, &k->h);
	common_params(k, r, n, bud.iters);
	rec_param_i(r, "batch", PAIR_SPAN);
	rec_param_i(r, "stuck_ms", c->stuck_ms);
	rec_param_i(r, "trace", c->trace > 0 || (c->trace < 0 && g_out.trace));
	rec_param_i(r, "follow_os", c->follow_os);
	rec_xc_counters(r, &d.delta);
	rec_counter(r, "stuck_reports", (long long)d.delta.stuck_reports);
	if (c->trace > 0) {
		rec_counter(r, "trace_drops", (long long)end.trace_drops);
		rec_param_i(r, "trace_bytes", bytes);
	}
	return r;
}

/*
 * The round trip with an aid on and off, one runtime each, the order
 * flipped every repeat; a ratio row of the p50s (and p99s).
 */
static int roundtrip_pair(struct dctx *k, const char *part, int rep, const struct rt_cfg *on_cfg,
			  const struct rt_cfg *off_cfg, const char *ratio_kase)
{
	struct rec *on = NULL, *off = NULL;
	for (int i = 0; i < 2; i++) {
		bool do_on = (i == 0) == (rep % 2 == 0);
		progress("debug %s: round trip, %s, cpus %s, repeat %d", part, do_on ? "on" : "off",
			 k->pair, rep);
		const struct rt_cfg *cfg = do_on ? on_cfg : off_cfg;
		struct rec *r;
		if (plan_late())
			r = rec_skipped("debug", cfg->kase, PLAN_LATE_WHY, rep);
		else if (!(r = roundtrip(k, cfg, rep)))
			return 1;
		*(do_on ? &on : &off) = r;
	}
	if (!on->s.n || !off->s.n) {
		rec_skipped("debug", ratio_kase, PLAN_LATE_WHY, rep);
		return 0;
	}
	struct rec *x = ratio_rec(ratio_kase, rep, on->s.p50, off->s.p50, on);
	rec_ratio_of(x, on, off);
	char of[96];
	snprintf(of, sizeof(of), "p50 %s / p50 %s", on_cfg->kase, off_cfg->kase);
	rec_param_s(x, "of", of);
	if (off->s.p99 > 0)
		rec_param_d(x, "p99_ratio", on->s.p99 / off->s.p99);
	return 0;
}

static int part_stuck(struct dctx *k)
{
	static const struct rt_cfg on = {"stuck/on", 5000, -1, true};
	static const struct rt_cfg off = {"stuck/off", XC_STUCK_OFF, -1, true};
	for (int rep = 0; rep < k->o.repeat; rep++)
		if (roundtrip_pair(k, "stuck", rep, &on, &off, "stuck/ratio"))
			return 1;
	return 0;
}

/* The worker's watch for the OS taking its CPU away (follow.c): on by default. */
static int part_follow(struct dctx *k)
{
	static const struct rt_cfg on = {"follow/on", XC_STUCK_OFF, -1, true};
	static const struct rt_cfg off = {"follow/off", XC_STUCK_OFF, -1, false};
	for (int rep = 0; rep < k->o.repeat; rep++)
		if (roundtrip_pair(k, "follow", rep, &on, &off, "follow/ratio"))
			return 1;
	return 0;
}

/* ---- a storm of nowait calls (trace) ---- */

struct storm_loop {
	int target;
	struct budget b;
	struct hist *h;
	struct xc_stats delta;
	uint64_t runtime_ns;
	long done;
	int err;
};

/*
 * Wait until every nowait call made so far to target has run: a nowait
 * marker behind them (nowait calls run in FIFO order; a waiting call would
 * not do, as a worker runs the waiting calls of a batch first). Two calls.
 */
static void mark_done(void *arg)
{
	atomic_store_explicit((_Atomic int *)arg, 1, memory_order_release);
}

static int drain(int target)
{
	_Atomic int done = 0;
	int err;
	while ((err = xc_call_single(target, mark_done, (void *)&done, 0)) == -ENOMEM)
		xc_poll();
	while (!err && !atomic_load_explicit(&done, memory_order_acquire))
		cpu_relax();
	/* then a waiting call: when it returns, the marker's own count is in the stats too */
	return err ? err : xc_call_single(target, xh_noop, NULL, XC_WAIT);
}

static int send_nowait(int target)
{
	int err;
	while ((err = xc_call_single(target, xh_noop, NULL, 0)) == -ENOMEM)
		xc_poll();
	return err;
}

static void storm_loop_fn(void *arg)
{
	struct storm_loop *s = arg;
	long warm = warmup_iters(s->b.iters);
	budget_warm(&s->b);
	for (long i = 0; warm_more(&s->b, i, warm) && !s->err; i++)
		s->err = send_nowait(s->target);
	if (!s->err)
		s->err = drain(s->target);
	struct xc_stats p0, p1;
	xh_stats(s->target, &p0);
	budget_start(&s->b);
	uint64_t t0 = now_ns();
	long i;
	for (i = 0; budget_more(&s->b, i) && !s->err; i++) {
		uint64_t c0 = ticks();
		s->err = send_nowait(s->target);
		hist_add(s->h, ticks_span_ns(c0, ticks()));
	}
	if (!s->err)
		s->err = drain(s->target);
	s->runtime_ns = now_ns() - t0;
	xh_stats(s->target, &p1);
	xc_stats_delta(&s->delta, &p0, &p1);
	if (s->delta.calls >= 2)
		s->delta.calls -= 2;    /* not the drain's own two */
	s->done = i;
}

static struct rec *storm(struct dctx *k, const char *kase, bool trace, int rep)
{
	char tf[256];
	if (trace)
		trace_tmp(tf, sizeof(tf));
	if (up(k, 0, trace ? tf : xh_no_trace, true))
		return NULL;
	struct storm_loop s = {.target = k->b, .h = &k->h};
	budget_init(&s.b, &k->o, STORM_ITERS);
	hist_reset(&k->h);
	void *args[1] = {&s};
	int err = xh_run_on(&k->a, 1, storm_loop_fn, args);
	struct xc_stats end;
	xh_stats(-1, &end);
	xh_down();
	long long bytes = trace ? trace_take(tf) : 0;
	if (err || s.err) {
		fprintf(stderr, "xcall-bench debug: storm %d -> %d: %s\n", k->a, k->b,
			strerror(-(err ? err : s.err)));
		return NULL;
	}
	struct rec *r = rec_new("debug", kase, "ns", "lower", rep);
	rec_hist(r, &k->h);
	common_params(k, r, s.done, s.b.iters);
	rec_param_i(r, "trace", trace);
	rec_param_i(r, "runtime_ns", (long long)s.runtime_ns);
	rec_param_d(r, "ns_per_call", s.done ? (double)s.runtime_ns / (double)s.done : 0);
	rec_param_s(r, "timed", "sender cost of each nowait call; runtime_ns until all ran");
	rec_xc_target_counters(r, &s.delta);
	if (trace) {
		rec_counter(r, "trace_drops", (long long)end.trace_drops);
		rec_param_i(r, "trace_bytes", bytes);
	}
	return r;
}

static int part_trace(struct dctx *k)
{
	static const struct rt_cfg rt_on = {"trace/roundtrip-on", XC_STUCK_OFF, 1, true};
	static const struct rt_cfg rt_off = {"trace/roundtrip-off", XC_STUCK_OFF, 0, true};
	for (int rep = 0; rep < k->o.repeat; rep++) {
		struct rec *on = NULL, *off = NULL;
		if (roundtrip_pair(k, "trace", rep, &rt_on, &rt_off, "trace/roundtrip-ratio"))
			return 1;
		for (int i = 0; i < 2; i++) {
			bool do_on = (i == 0) == (rep % 2 == 0);
			progress("debug trace: nowait storm, tracing %s, repeat %d", do_on ? "on" : "off", rep);
			const char *kase = do_on ? "trace/storm-on" : "trace/storm-off";
			struct rec *r;
			if (plan_late())
				r = rec_skipped("debug", kase, PLAN_LATE_WHY, rep);
			else if (!(r = storm(k, kase, do_on, rep)))
				return 1;
			*(do_on ? &on : &off) = r;
		}
		if (!on->s.n || !off->s.n) {
			rec_skipped("debug", "trace/storm-ratio", PLAN_LATE_WHY, rep);
			continue;
		}
		struct rec *x = ratio_rec("trace/storm-ratio", rep, rec_param_get(on, "ns_per_call", -1),
			      rec_param_get(off, "ns_per_call", -1), on);
		rec_ratio_of(x, on, off);
		rec_param_s(x, "of", "ns_per_call trace/storm-on / trace/storm-off");
		if (off->s.p50 > 0)
			rec_param_d(x, "p50_ratio", on->s.p50 / off->s.p50);
	}
	return 0;
}

/* ---- urgent delivery to a busy worker ---- */

struct urg {
	int target;
	unsigned flags;         /* XC_URGENT or 0 */
	long poll_every;        /* 0: the item never polls */
	uint64_t busy_ticks;
	uint64_t stop_ns;       /* the loop's end (now_ns()), where an item ends at the latest; 0 none */
	struct budget b;
	struct hist *h;
	struct xc_work w;
	uint64_t seq;           /* the item's number, written before it is queued */
	_Alignas(CACHELINE) _Atomic uint64_t started;   /* seq of the item now spinning */
	_Alignas(CACHELINE) _Atomic uint64_t ran_at;    /* ticks when the call's function began, 0 not yet */
	_Alignas(CACHELINE) _Atomic uint64_t ended;     /* seq of the last item that returned */
	uint64_t item_iters, item_ticks, sink;          /* written by the item, read after `ended` */
	struct xc_stats delta;
	long done, bound_hits;
	int err;
};

static void urg_mark(void *arg)
{
	struct urg *u = arg;
	/* async-signal-safe: a TSC read (or clock_gettime) and an atomic store */
	uint64_t t = ticks();
	atomic_store_explicit(&u->ran_at, t ? t : 1, memory_order_release);
}

/*
 * The busy work item: a loop of small fixed work units that never calls
 * xc_poll() (unless poll_every), ending when the call has run or the bound
 * passed. Only a signal (XC_URGENT) or its own xc_poll() can run the call
 * before it returns.
 */
static void urg_busy(void *arg)
{
	struct urg *u = arg;
	uint64_t seq = u->seq, t0 = ticks(), end = t0 + u->busy_ticks, x = seq | 1;
	if (u->stop_ns) {
		/* no item runs past the loop's end: a long --busy-us would outrun the case */
		uint64_t now = now_ns(), left = u->stop_ns > now ? u->stop_ns - now : 0;
		uint64_t lt = g_tsc_ok ? (uint64_t)((double)left / g_tsc_ns_per_tick) : left;
		if (lt < u->busy_ticks)
			end = t0 + lt;
	}
	long every = u->poll_every, left = every;
	uint64_t i;
	atomic_store_explicit(&u->started, seq, memory_order_release);
	for (i = 1;; i++) {
		for (int k = 0; k < 16; k++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
		if (atomic_load_explicit(&u->ran_at, memory_order_acquire))
			break;
		if (every && --left == 0) {
			left = every;
			xc_poll();
		}
		if (!(i & 15) && ticks() >= end)
			break;
	}
	if (!atomic_load_explicit(&u->ran_at, memory_order_relaxed))
		u->bound_hits++;        /* the bound came first: the call runs after the item */
	u->item_iters += i;
	u->item_ticks += ticks() - t0;
	u->sink += x;
	atomic_store_explicit(&u->ended, seq, memory_order_release);
}

/* One busy item, one call into it; the latency in ns, or -1. */
static long long urg_one(struct urg *u)
{
	u->seq++;
	atomic_store_explicit(&u->ran_at, 0, memory_order_relaxed);
	u->w.fn = urg_busy;
	u->w.arg = u;
	int err = xc_queue_work(u->target, &u->w);
	if (err) {
		u->err = err;
		return -1;
	}
	while (atomic_load_explicit(&u->started, memory_order_acquire) != u->seq)
		cpu_relax();
	uint64_t t0 = ticks();
	err = xc_call_single(u->target, urg_mark, u, u->flags);
	if (err) {
		u->err = err;
		return -1;
	}
	uint64_t t1;
	while (!(t1 = atomic_load_explicit(&u->ran_at, memory_order_acquire)))
		cpu_relax();
	while (atomic_load_explicit(&u->ended, memory_order_acquire) != u->seq)
		cpu_relax();
	return t1 > t0 ? (long long)ticks_to_ns(t1 - t0) : 0;
}

static void urg_loop(void *arg)
{
	struct urg *u = arg;
	long warm = warmup_iters(u->b.iters);
	if (warm > 100)
		warm = 100;     /* each costs up to --busy-us */
	budget_warm(&u->b);
	u->stop_ns = u->b.warm_until;
	for (long i = 0; warm_more(&u->b, i, warm) && !u->err; i++)
		urg_one(u);
	u->item_iters = u->item_ticks = 0;
	u->bound_hits = 0;
	struct xc_stats p0, p1;
	xh_stats(u->target, &p0);
	budget_start(&u->b);
	u->stop_ns = u->b.deadline;
	long i;
	for (i = 0; budget_more(&u->b, i) && !u->err; i++) {
		long long ns = urg_one(u);
		if (ns >= 0)
			hist_add(u->h, (uint64_t)ns);
	}
	xh_stats(u->target, &p1);
	xc_stats_delta(&u->delta, &p0, &p1);
	u->done = i;
}

static struct rec *urgent_case(struct dctx *k, const char *kase, unsigned flags, long poll_every,
			       int rep)
{
	if (plan_late())
		return rec_skipped("debug", kase, PLAN_LATE_WHY, rep);
	if (up(k, 0, NULL, true))
		return NULL;
	struct urg *u = aligned_alloc(CACHELINE, sizeof(*u));
	memset(u, 0, sizeof(*u));
	u->target = k->b;
	u->flags = flags;
	u->poll_every = poll_every;
	u->h = &k->h;
	u->busy_ticks = (uint64_t)k->c.busy_us * 1000;
	if (g_tsc_ok)
		u->busy_ticks = (uint64_t)((double)u->busy_ticks / g_tsc_ns_per_tick);
	budget_init(&u->b, &k->o, URGENT_ITERS);
	hist_reset(&k->h);
	void *args[1] = {u};
	int err = xh_run_on(&k->a, 1, urg_loop, args);
	xh_down();
	if (err || u->err) {
		fprintf(stderr, "xcall-bench debug: urgent %d -> %d: %s\n", k->a, k->b,
			strerror(-(err ? err : u->err)));
		free(u);
		return NULL;
	}
	struct rec *r = rec_new("debug", kase, "ns", "lower", rep);
	rec_hist(r, &k->h);
	common_params(k, r, u->done, u->b.iters);
	rec_param_i(r, "urgent", !!(flags & XC_URGENT));
	rec_param_i(r, "busy_us", k->c.busy_us);
	rec_param_i(r, "poll_every", poll_every);
	rec_param_d(r, "iter_ns", u->item_iters ? (double)ticks_to_ns(u->item_ticks) / (double)u->item_iters : 0);
	rec_param_s(r, "timed", "call made until its function starts, the target busy in a work item");
	rec_counter(r, "calls", (long long)u->delta.calls);
	rec_counter(r, "urgent_calls", (long long)u->delta.urgent_calls);
	rec_counter(r, "signals_sent", (long long)u->delta.signals_sent);
	rec_counter(r, "kicks_sent", (long long)u->delta.kicks_sent);
	rec_counter(r, "kicks_elided", (long long)u->delta.kicks_elided);
	rec_counter(r, "work_run", (long long)u->delta.work_run);
	rec_counter(r, "items_ended_by_bound", u->bound_hits);
	free(u);
	return r;
}

static int part_urgent(struct dctx *k)
{
	char pe[48];
	snprintf(pe, sizeof(pe), "urgent/poll-every-%ld", k->c.poll_every);
	for (int rep = 0; rep < k->o.repeat; rep++) {
		progress("debug urgent: XC_URGENT, repeat %d", rep);
		if (!urgent_case(k, "urgent/signal", XC_URGENT, 0, rep))
			return 1;
		progress("debug urgent: plain call, item never polls, repeat %d", rep);
		if (!urgent_case(k, "urgent/none", 0, 0, rep))
			return 1;
		progress("debug urgent: plain call, item polls every %ld, repeat %d", k->c.poll_every, rep);
		if (!urgent_case(k, pe, 0, k->c.poll_every, rep))
			return 1;
	}
	return 0;
}

/* ---- the subcommand ---- */

static void print_table(struct dctx *k, struct rec *from)
{
	printf("\ndebug: caller CPU %d, target CPU %d, poll %s; ratio rows: on / off\n", k->a, k->b,
	       poll_name(k->poll, (char[32]){0}, 32));
	printf("%-26s %4s %8s %10s %10s %10s %10s  %s\n", "case", "rep", "n", "p50", "p90", "p99", "max",
	       "notes");
	for (struct rec *r = from; r; r = r->next) {
		if (strcmp(r->bench, "debug"))
			continue;
		if (!r->s.n && rec_param_str(r, "skipped")) {
			printf("%-26s %4d  skipped: %s\n", r->kase, r->repeat, rec_param_str(r, "skipped"));
			continue;
		}
		char b[4][32], notes[160] = "";
		if (!strcmp(r->unit, "ratio")) {
			double p = rec_param_get(r, "p99_ratio", -1), q = rec_param_get(r, "p50_ratio", -1);
			if (p >= 0)
				snprintf(notes, sizeof(notes), "p99 ratio %.2fx", p);
			if (q >= 0)
				snprintf(notes, sizeof(notes), "ns/call ratio; p50 sender ratio %.2fx", q);
			printf("%-26s %4d %8s %9.3fx %10s %10s %10s  %s%s\n", r->kase, r->repeat, "", r->s.p50,
			       "", "", "", notes, ratio_mark(r, NULL));
			continue;
		}
		if (!strncmp(r->kase, "stuck/", 6) || !strncmp(r->kase, "trace/roundtrip", 15) ||
		    !strncmp(r->kase, "follow/", 7))
			snprintf(notes, sizeof(notes), "stuck_reports %lld",
				 rec_counter_get(r, "stuck_reports", 0));
		if (!strncmp(r->kase, "trace/storm", 11))
			snprintf(notes, sizeof(notes), "%.0f ns/call until all ran",
				 rec_param_get(r, "ns_per_call", -1));
		if (rec_param_get(r, "trace", -1) == 1 && rec_param_get(r, "trace_bytes", -1) >= 0) {
			size_t l = strlen(notes);
			snprintf(notes + l, sizeof(notes) - l, "%strace_drops %lld, %.0f KiB written",
				 l ? "; " : "", rec_counter_get(r, "trace_drops", 0),
				 rec_param_get(r, "trace_bytes", -1) / 1024);
		}
		if (!strncmp(r->kase, "urgent/", 7))
			snprintf(notes, sizeof(notes), "calls %lld urgent %lld signals %lld bound %lld; %.1f ns/iter",
				 rec_counter_get(r, "calls", 0), rec_counter_get(r, "urgent_calls", 0),
				 rec_counter_get(r, "signals_sent", 0),
				 rec_counter_get(r, "items_ended_by_bound", 0), rec_param_get(r, "iter_ns", -1));
		printf("%-26s %4d %8llu %10s %10s %10s %10s  %s\n", r->kase, r->repeat,
		       (unsigned long long)r->s.n, fmt_ns(r->s.p50, b[0], 32), fmt_ns(r->s.p90, b[1], 32),
		       fmt_ns(r->s.p99, b[2], 32), fmt_ns(r->s.max, b[3], 32), notes);
	}
	printf("stuck, trace/roundtrip, follow: waiting-call round trip; trace/storm: sender cost of a nowait call\n"
	       "urgent: call made (as the busy item starts) until its function starts; the item ends when\n"
	       "the call ran or after %ld us (bound = items that reached it first), so urgent/none measures\n"
	       "the whole item, what a plain call waits for, and poll-every-N one poll interval\n",
	       k->c.busy_us);
}

int cmd_debug(int argc, char **argv)
{
	static const char *const parts[] = {"stuck", "trace", "urgent", "follow"};
	struct dctx *k = calloc(1, sizeof(*k));
	k->c = (struct dbg_cfg){.busy_us = 1000, .poll_every = 1000};
	int first = cli_parse(&desc, argc, argv, &k->o, &k->c);
	bool want[4] = {0}, any = false;
	for (int i = first; i < argc; i++) {
		int p;
		for (p = 0; p < 4; p++)
			if (!strcmp(argv[i], parts[p]))
				break;
		if (p == 4)
			cli_fail(desc.name, "unknown part '%s' (stuck, trace, urgent, follow)", argv[i]);
		want[p] = any = true;
	}
	if (!any)
		want[0] = want[1] = want[2] = want[3] = true;
	if (k->o.ncpus < 2)
		cli_fail(desc.name, "%s", cli_too_few_cpus(&k->o, 2));
	k->a = k->o.cpu[0];
	k->b = k->o.cpu[1];
	snprintf(k->pair, sizeof(k->pair), "%d,%d", k->a, k->b);
	k->poll = k->o.poll_set ? k->o.poll_ns : XC_POLL_FOREVER;
	/* the environment must not turn the "off" rows on */
	if (getenv("XCALL_TRACE")) {
		progress("debug: XCALL_TRACE unset for this run (the off rows must not trace)");
		unsetenv("XCALL_TRACE");
	}
	if (hist_init(&k->h))
		return 1;
	static const int cases[4] = {2, 4, 3, 2};       /* per repeat: each part's progress steps */
	for (int p = 0; p < 4; p++)
		if (want[p])
			plan_cases((long)cases[p] * k->o.repeat, plan_case_s(&k->o) + plan_start_cost(2));
	plan_start(NULL);
	struct rec *mark = rec_last();
	int rc = 0;
	if (want[0] && !rc)
		rc = part_stuck(k);
	if (want[1] && !rc)
		rc = part_trace(k);
	if (want[2] && !rc)
		rc = part_urgent(k);
	if (want[3] && !rc)
		rc = part_follow(k);
	hist_free(&k->h);
	struct rec *from = mark ? mark->next : rec_first();
	if (!g_out.quiet && !g_out.csv)
		print_table(k, from);
	else if (g_out.csv && !g_out.quiet)
		out_csv(stdout, from);
	free(k);
	return rc;
}
