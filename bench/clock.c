/* SPDX-License-Identifier: MIT */
/*
 * clock.c - timestamps. The TSC is cheaper to read than clock_gettime()
 * (which matters when the thing timed is a ~100 ns cache-line round trip),
 * but only trustworthy when invariant; it is calibrated against
 * CLOCK_MONOTONIC here, else the monotonic clock is used throughout.
 */
#include "bench.h"

#include <limits.h>

#include <stdlib.h>
#include <string.h>

bool g_tsc_ok;
double g_tsc_ns_per_tick = 1.0;
uint64_t g_timer_floor_ticks;

/* The smallest of many back-to-back intervals: what ticks_span_ns() subtracts. */
static void timer_floor_measure(void)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 20000; i++) {
		uint64_t t0 = ticks();
		uint64_t t1 = ticks();

		if (t1 > t0 && t1 - t0 < best)
			best = t1 - t0;
	}
	g_timer_floor_ticks = best == UINT64_MAX ? 0 : best;
}

double timer_floor_ns(void)
{
	return (double)ticks_to_ns(g_timer_floor_ticks);
}

static void tsc_setup(void)
{
#if defined(__x86_64__) || defined(__i386__)
	const struct machine *m = machine_get();
	/* XCALL_BENCH_NO_TSC=1 forces the monotonic clock, to cross-check. */
	const char *no = getenv("XCALL_BENCH_NO_TSC");
	if (!m->tsc_invariant || (no && strcmp(no, "0")))
		return;
	/* Three 10 ms windows; keep the median ratio so one preemption cannot skew it. */
	double r[3];
	for (int i = 0; i < 3; i++) {
		uint64_t t0 = now_ns(), c0 = rdtsc_raw();
		while (now_ns() - t0 < 10000000)
			;
		uint64_t t1 = now_ns(), c1 = rdtsc_raw();
		r[i] = (double)(t1 - t0) / (double)(c1 - c0);
	}
	double a = r[0], b = r[1], c = r[2];
	double med = a > b ? (b > c ? b : (a > c ? c : a)) : (a > c ? a : (b > c ? c : b));
	if (med > 0 && med < 100) {
		g_tsc_ns_per_tick = med;
		g_tsc_ok = true;
	}
#endif
}

static void watchdog_start(void);

void clock_setup(void)
{
	tsc_setup();
	timer_floor_measure();
	watchdog_start();
}

void spin_ns(uint64_t ns)
{
	uint64_t end = now_ns() + ns;
	while (now_ns() < end)
		cpu_relax();
}

void budget_init(struct budget *b, const struct bopts *o, long default_iters)
{
	b->iters = o->iterations ? o->iterations : default_iters;
	b->seconds = o->seconds;
	b->limit = o->case_limit;
	b->deadline = b->warm_until = 0;
	b->batch = 0;
	b->by_plan = false;
	b->careful = false;
	b->watch = 0;
}

/*
 * now + the case's seconds, or the plan's end for the case when that comes
 * first (*by_plan then says so): the one place a loop's end is decided.
 */
static uint64_t budget_until(const struct budget *b, uint64_t now, bool *by_plan)
{
	double s = b->seconds > 0 ? b->seconds : b->limit;
	uint64_t until = s > 0 ? now + (uint64_t)(s * 1e9) : 0;
	uint64_t end = plan_case_end();
	*by_plan = end && (!until || end < until);
	return *by_plan ? end : until;
}

void budget_warm(struct budget *b)
{
	bool by_plan;
	b->warm_until = budget_until(b, now_ns(), &by_plan);
}

void budget_start(struct budget *b)
{
	b->started = now_ns();
	b->deadline = budget_until(b, b->started, &b->by_plan);
	b->next_check = 0;
	b->last_t = b->started;
	b->last_done = 0;
	/* until a span has shown how long operations take here and now */
	b->careful = true;
	budget_watch(b);
}

bool budget_check(struct budget *b, long done)
{
	uint64_t t = now_ns();
	if (!b->deadline) {
		b->next_check = LONG_MAX;
		return true;
	}
	/* past the end: stop, after one operation at least, so that a record has a sample */
	if (t >= b->deadline && done > 0) {
		budget_stopped(b);
		return false;
	}
	/*
	 * The next look after about 2 ms of operations at the rate since the last
	 * look, and within 64 operations: cheap beside fast ones, prompt with slow
	 * ones (a wakeup where CPUs are shared can take milliseconds), and quick
	 * to notice when operations slow down, as a loaded machine makes them.
	 */
	double per_op = done > b->last_done ? (double)(t - b->last_t) / (double)(done - b->last_done) : 2e6;
	long step = per_op > 0 ? (long)(2e6 / per_op) : 64;
	b->last_t = t;
	b->last_done = done;
	b->next_check = done + (step < 1 ? 1 : step > 64 ? 64 : step);
	return true;
}

void budget_stopped(const struct budget *b)
{
	/* --seconds ends a loop by design, unless the plan ended it sooner */
	if (b->seconds <= 0 || b->by_plan)
		plan_capped();
}

bool budget_gap_fits(const struct budget *b, uint64_t gap_ns)
{
	uint64_t end = b->deadline ? b->deadline : b->warm_until;
	return !end || now_ns() + gap_ns <= end;
}

bool budget_late(const struct budget *b)
{
	uint64_t end = b->deadline ? b->deadline : b->warm_until;
	return end && now_ns() >= end;
}

_Atomic uint64_t g_watch_end;
/*
 * Moves on each arming, each rescue armed or taken away, and each end of a
 * waited-for loop; two sleep on it (budget_wait's caller and the watchdog),
 * so every change wakes both.
 */
static _Atomic uint32_t watch_seq;

static void watch_moved(void)
{
	atomic_fetch_add(&watch_seq, 1);
	xc_futex_wake(&watch_seq, INT_MAX);
}

void budget_watch(struct budget *b)
{
	if (!b->deadline)
		return;
	b->watch = b->deadline & ~1ull;
	atomic_store(&g_watch_end, b->watch);
	/* the waiter takes the new end; it wakes here, before the first timed span */
	watch_moved();
}

void budget_done(void)
{
	watch_moved();
}

/*
 * The watchdog: a thread of its own, started before any is pinned, asleep but
 * at the two moments it acts. At a watched loop's end it marks the end (as
 * budget_wait() does for a loop it waits for), so that every budgeted loop,
 * whichever thread runs it, stops after at most the operation in flight, by
 * one load in budget_more(). At a rescue's time, an operation still in
 * flight BUDGET_GRACE_NS past its loop's end, it calls the rescue, which ends
 * that operation's wait from outside (as the answer would), and says so
 * (budget_rescued()).
 */
static pthread_mutex_t rescue_lock = PTHREAD_MUTEX_INITIALIZER;
static void (*rescue_fn)(void *);       /* under rescue_lock: armed when set */
static void *rescue_arg;
static _Atomic uint64_t rescue_at;      /* 0: none armed, or taken */
static _Atomic bool rescued;

static void *watchdog_main(void *arg)
{
	(void)arg;
	for (;;) {
		uint32_t seq = atomic_load(&watch_seq);
		uint64_t end = atomic_load(&g_watch_end), at = atomic_load(&rescue_at);
		uint64_t now = now_ns(), next = 0;
		if (end && !(end & 1)) {
			if (now >= end) {
				/* only the end still armed: a loop armed since keeps its own */
				atomic_compare_exchange_strong(&g_watch_end, &end, end | 1);
				continue;
			}
			next = end;
		}
		if (at) {
			if (now >= at) {
				pthread_mutex_lock(&rescue_lock);
				/* still armed for this time: not taken away or moved meanwhile */
				if (rescue_fn && atomic_load(&rescue_at) == at) {
					/* release: the flag is seen with what the rescue did */
					atomic_store_explicit(&rescued, true, memory_order_release);
					atomic_store(&rescue_at, 0);
					rescue_fn(rescue_arg);
				}
				pthread_mutex_unlock(&rescue_lock);
				continue;
			}
			if (!next || at < next)
				next = at;
		}
		struct timespec ts, *tp = NULL;
		if (next) {
			ts = (struct timespec){(time_t)((next - now) / 1000000000u),
					       (long)((next - now) % 1000000000u)};
			tp = &ts;
		}
		xc_futex_wait(&watch_seq, seq, tp);
	}
	return NULL;
}

static void watchdog_start(void)
{
	pthread_t t;
	/* without it, loops stop by their own clock reads and nothing is rescued */
	if (!pthread_create(&t, NULL, watchdog_main, NULL))
		pthread_detach(t);
}

void budget_rescue_arm(const struct budget *b, void (*fn)(void *), void *arg)
{
	uint64_t end = b->deadline ? b->deadline : b->warm_until;
	if (!end)
		return;
	pthread_mutex_lock(&rescue_lock);
	rescue_fn = fn;
	rescue_arg = arg;
	atomic_store_explicit(&rescued, false, memory_order_relaxed);
	atomic_store(&rescue_at, end + BUDGET_GRACE_NS);
	pthread_mutex_unlock(&rescue_lock);
	watch_moved();
}

bool budget_rescue_disarm(void)
{
	pthread_mutex_lock(&rescue_lock);
	rescue_fn = NULL;
	atomic_store(&rescue_at, 0);
	pthread_mutex_unlock(&rescue_lock);
	/* the lock: a rescue that ran is over, and its flag visible */
	return atomic_load_explicit(&rescued, memory_order_relaxed);
}

bool budget_rescued(void)
{
	/* acquire: pairs with the watchdog's store, made before the rescue's wake */
	return atomic_load_explicit(&rescued, memory_order_acquire);
}

void budget_wait(_Atomic uint32_t *left)
{
	for (;;) {
		uint32_t seq = atomic_load(&watch_seq);
		/* acquire: what the waited-for threads did is visible once *left is 0 */
		if (!atomic_load_explicit(left, memory_order_acquire))
			break;
		uint64_t end = atomic_load(&g_watch_end);
		struct timespec ts, *tp = NULL;
		if (end && !(end & 1)) {
			uint64_t now = now_ns();
			if (now >= end) {
				/* only the end still armed: a loop armed since keeps its own */
				atomic_compare_exchange_strong(&g_watch_end, &end, end | 1);
				continue;
			}
			ts = (struct timespec){(time_t)((end - now) / 1000000000u), (long)((end - now) % 1000000000u)};
			tp = &ts;
		}
		xc_futex_wait(&watch_seq, seq, tp);
	}
	atomic_store(&g_watch_end, 0);
}

double budget_case_s(const struct bopts *o)
{
	return o->seconds > 0 ? o->seconds : o->case_limit;
}
