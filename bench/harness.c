/* SPDX-License-Identifier: MIT */
/*
 * harness.c - bring libxcall up and down for one case, and run benchmark
 * loops on its workers. A loop runs as a work item, so the calling "CPU" is a
 * worker in task context, as ipistorm's kthreads are CPUs in the kernel.
 */
#include "bench.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void report_line(void *ctx, const char *line)
{
	fprintf(stderr, "libxcall: %s\n", line);
}

const char xh_no_trace[] = "";

int xh_up_opts(struct xc_opts *xo)
{
	if (!xo->report)
		xo->report = report_line;
	/* --trace: every runtime writes it at xc_exit, so it ends up with the last one's events */
	if (!xo->trace_file)
		xo->trace_file = g_out.trace;
	else if (xo->trace_file == xh_no_trace)
		xo->trace_file = NULL;
	uint64_t t0 = now_ns();
	int err = xc_init(xo);
	plan_uncut((double)(now_ns() - t0) / 1e9);
	return err;
}

int xh_up(const struct bopts *o, const char *cpus, long poll_ns, unsigned ablate)
{
	struct xc_opts xo = {
		.cpus = cpus ? cpus : o->cpulist,
		.poll_ns = poll_ns,
	};
	int err = xc_ablate_set(ablate);

	/* for this runtime alone: the next xh_up_opts() of another bench starts without */
	if (!err)
		err = xh_up_opts(&xo);
	xc_ablate_set(0);
	if (err)
		fprintf(stderr, "xcall-bench: xc_init(cpus=%s): %s\n", xo.cpus, strerror(-err));
	return err;
}

void xh_down(void)
{
	uint64_t t0 = now_ns();
	int err = xc_exit();
	plan_uncut((double)(now_ns() - t0) / 1e9);
	if (err)
		fprintf(stderr, "xcall-bench: xc_exit: %s\n", strerror(-err));
}

struct run_item {
	struct xc_work w;
	xc_func_t fn;
	void *arg;
	_Atomic uint32_t *left;
};

static void run_trampoline(void *p)
{
	struct run_item *it = p;
	it->fn(it->arg);
	/* release: the loop's results are visible to the waiter that sees 0 */
	if (atomic_fetch_sub_explicit(it->left, 1, memory_order_release) == 1)
		budget_done();
}

int xh_run_on(const int *cpus, int n, xc_func_t fn, void **args)
{
	struct run_item *items = calloc((size_t)n, sizeof(*items));
	_Atomic uint32_t left = (uint32_t)n;
	if (!items)
		return -ENOMEM;
	int queued = 0, err = 0;
	for (int i = 0; i < n; i++) {
		items[i].fn = fn;
		items[i].arg = args ? args[i] : NULL;
		items[i].left = &left;
		items[i].w.fn = run_trampoline;
		items[i].w.arg = &items[i];
		err = xc_queue_work(cpus[i], &items[i].w);
		if (err) {
			fprintf(stderr, "xcall-bench: xc_queue_work(cpu %d): %s\n", cpus[i], strerror(-err));
			/* those never queued will never count down */
			atomic_fetch_sub(&left, (uint32_t)(n - i));
			break;
		}
		queued++;
	}
	/* the loop's watch: its end marked when it passes (budget_watch) */
	budget_wait(&left);
	free(items);
	return err;
}

void xh_serve(void)
{
	if (xc_this_cpu() >= 0)
		xc_poll();
}

void xh_noop(void *arg)
{
	(void)arg;
}

static void drain_mark(void *arg)
{
	atomic_fetch_add_explicit((_Atomic int *)arg, 1, memory_order_release);
}

/*
 * A nowait marker on every CPU, behind whatever nowait calls are queued
 * there (nowait calls run in FIFO order; a waiting call alone would not do,
 * since a worker runs the waiting calls of a batch first), then a waiting
 * call, whose return makes the markers' own counts visible.
 */
int xh_drain_all(void)
{
	_Atomic int marks = 0;
	int n;
	while ((n = xc_call_all(drain_mark, (void *)&marks, 0)) == -ENOMEM)
		xh_serve();
	while (n > 0 && atomic_load_explicit(&marks, memory_order_acquire) < n)
		cpu_relax();
	int err = xc_call_all(xh_noop, NULL, XC_WAIT);
	return n < 0 ? n : err < 0 ? err : 0;
}

int xh_wait_calls(const struct xc_stats *s0, uint64_t want, double timeout_s)
{
	uint64_t end = now_ns() + (uint64_t)(timeout_s * 1e9);
	struct xc_stats s;
	for (;;) {
		xh_stats(-1, &s);
		if (s.calls - s0->calls >= want)
			return 0;
		if (now_ns() > end) {
			fprintf(stderr, "xcall-bench: %llu of %llu calls ran in %.1f s\n",
				(unsigned long long)(s.calls - s0->calls), (unsigned long long)want, timeout_s);
			return -ETIMEDOUT;
		}
		/* not a spin: the workers that run the calls may share this CPU */
		struct timespec d = {0, 100000};
		nanosleep(&d, NULL);
	}
}

void xh_stats(int cpu, struct xc_stats *out)
{
	if (xc_stats_get(cpu, out))
		memset(out, 0, sizeof(*out));
}

/*
 * Every counter of @d that its CPU counts (libxcall's list, XC_STATS_COUNTERS:
 * not those read when asked, which the benches that use them write), each
 * named with @prefix in front.
 */
#define REC_COUNTER_SENDER(name) rec_counter_named(r, prefix, #name, d->name);
#define REC_COUNTER_WORKER(name) rec_counter_named(r, prefix, #name, d->name);
#define REC_COUNTER_READ(name)
#define REC_COUNTER(name, by, kind, meaning) REC_COUNTER_##by(name)

static void rec_counter_named(struct rec *r, const char *prefix, const char *name, uint64_t v)
{
	char full[64];

	snprintf(full, sizeof(full), "%s%s", prefix, name);
	rec_counter(r, full, (long long)v);
}

static void rec_xc_counters_as(struct rec *r, const char *prefix, const struct xc_stats *d)
{
	XC_STATS_COUNTERS(REC_COUNTER)
}

void rec_xc_counters(struct rec *r, const struct xc_stats *d)
{
	rec_xc_counters_as(r, "", d);
}

struct timed_calls {
	int target;
	unsigned flags;
	struct budget b;
	struct hist *h;
	const struct xh_timed *x;
	struct xc_stats delta, tdelta;
	long done, gap_timeouts;
	int err;
};

static uint64_t target_sleeps(int cpu)
{
	struct xc_stats s;
	xh_stats(cpu, &s);
	return s.sleeps;
}

/*
 * --gap: before a call, wait until the target has gone to sleep since the
 * previous one (its sleeps counter moved past `last`), then gap_ns more, so
 * that it is inside its futex wait when the call comes. Untimed. With
 * may_stop, false when the loop's end came first: the loop stops there.
 */
static bool idle_gap(struct timed_calls *t, uint64_t last, bool may_stop)
{
	uint64_t give_up = now_ns() + 100000000u;   /* a poll policy that never sleeps */
	for (long spins = 0; target_sleeps(t->target) <= last; spins++) {
		cpu_relax();
		if (may_stop && !(spins & 63) && budget_late(&t->b))
			return false;
		if (now_ns() > give_up) {
			t->gap_timeouts++;
			break;
		}
	}
	if (may_stop && !budget_gap_fits(&t->b, t->x->gap_ns))
		return false;
	if (t->x->gap_ns)
		spin_ns(t->x->gap_ns);
	return true;
}

static void timed_calls_loop(void *arg)
{
	struct timed_calls *t = arg;
	const struct xh_timed *x = t->x;
	long warm = warmup_iters(t->b.iters);
	uint64_t last = 0;
	budget_warm(&t->b);
	for (long i = 0; warm_more(&t->b, i, warm) && !t->err; i++) {
		if (x->gap) {
			if (!idle_gap(t, last, true))
				break;
			last = target_sleeps(t->target);
		}
		t->err = xc_call_single(t->target, xh_noop, NULL, t->flags);
	}
	t->gap_timeouts = 0;
	struct xc_stats s0, s1, p0, p1;
	xh_stats(-1, &s0);
	xh_stats(t->target, &p0);
	budget_start(&t->b);
	long i;
	if (t->b.batch > 1 && !x->gap) {
		/* spans of back-to-back calls between two timestamps: one sample, per call, a span */
		for (i = 0; budget_more(&t->b, i) && !t->err; i += t->b.batch) {
			uint64_t t0 = ticks();
			int k;
			for (k = 0; k < t->b.batch && !budget_cut(&t->b, k); k++)
				t->err |= xc_call_single(t->target, xh_noop, NULL, t->flags);
			budget_span_add(&t->b, t->h, t0, k);
			if (k < t->b.batch) {
				i += k;
				budget_stopped(&t->b);
				break;
			}
		}
	} else {
		for (i = 0; budget_more(&t->b, i) && !t->err; i++) {
			if (x->gap) {
				/* the end came while the target was still on its way to sleep */
				if (!idle_gap(t, last, i > 0)) {
					budget_stopped(&t->b);
					break;
				}
				last = target_sleeps(t->target);
			}
			uint64_t t0 = ticks();
			t->err = xc_call_single(t->target, xh_noop, NULL, t->flags);
			hist_add(t->h, ticks_span_ns(t0, ticks()));
		}
	}
	xh_stats(-1, &s1);
	xh_stats(t->target, &p1);
	xc_stats_delta(&t->delta, &s0, &s1);
	xc_stats_delta(&t->tdelta, &p0, &p1);
	t->done = i;
}

long xh_time_calls_x(int caller, int target, unsigned flags, const struct budget *b,
		     struct hist *h, const struct xh_timed *x, struct xh_timed_out *out)
{
	static const struct xh_timed none;
	struct timed_calls t = {.target = target, .flags = flags, .b = *b, .h = h, .x = x ? x : &none};
	void *args[1] = {&t};
	int err = xh_run_on(&caller, 1, timed_calls_loop, args);
	if (!err)
		err = t.err;
	if (err) {
		fprintf(stderr, "xcall-bench: call %d -> %d: %s\n", caller, target, strerror(-err));
		return err;
	}
	if (out) {
		out->delta = t.delta;
		out->target = t.tdelta;
		out->gap_timeouts = t.gap_timeouts;
	}
	return t.done;
}

long xh_time_calls(int caller, int target, unsigned flags, const struct budget *b,
		   struct hist *h, struct xc_stats *delta)
{
	struct xh_timed_out out;
	long n = xh_time_calls_x(caller, target, flags, b, h, NULL, &out);
	if (n >= 0 && delta)
		*delta = out.delta;
	return n;
}

void rec_xc_target_counters(struct rec *r, const struct xc_stats *d)
{
	rec_xc_counters_as(r, "targets_", d);
}
