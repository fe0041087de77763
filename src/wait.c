// SPDX-License-Identifier: MIT
/*
 * wait.c - waiting for a call to complete: completions, and the waiter's
 * spin, then sleep, serving its own CPU's calls meanwhile if it is a worker.
 *
 * == Completions (struct xc__completion) ==
 *
 * A waiting caller counts the targets still to run its function in one 32-bit
 * word; bit 31 (XC_DONE_SLEEPING) says the waiter may sleep and must be woken.
 * The waiter sets it with a CAS before it can sleep; the last completer's
 * fetch_sub both finishes the count and reads the bit. Both are seq_cst, so
 * either the CAS sees the count change and the waiter re-checks instead of
 * sleeping, or the completer sees the bit and wakes it. A waiter still
 * spinning has not set the bit, and its completer touches nothing else.
 *
 * The slot (slot.c) uses the same word and the same bit differently: its
 * owner's call is done once the word no longer reads PUBLISHED, and the
 * worker completes it with an exchange that reads the bit the same way.
 *
 * A non-worker waiter sleeps on the word itself: the completer never touches
 * the waiter's memory after the fetch_sub except for the futex wake on the
 * word's address, which at a dead address at worst wakes some other futex
 * waiter spuriously, which every futex user tolerates. A worker that waits
 * sleeps on its own idle word instead (so that calls to it still wake it):
 * its completer kicks that CPU with the protocol of kick.c.
 *
 * A worker never blocks for long on anything without running its own CPU's
 * calls meanwhile (xc_wait_serve): two workers that wait on each other, or a
 * worker that waits for a descriptor or a lock held by one that waits on it,
 * would deadlock otherwise.
 */
#include "internal.h"
#include "kick.h"
#include "wait.h"
#include "call.h"
#include "stuck.h"
#include "futex.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <time.h>

/* A waiting non-worker spins this long before it sleeps. */
#define XC_WAITER_SPIN_NS      20000L

int xc_wait_serve(void)
{
	struct xc_cpu *self = xc_self;

	return self ? xc_run_calls(self) : 0;
}

void xc_wait_step(void)
{
	xc_wait_serve();
	sched_yield();
}

void xc_completion_init(struct xc__completion *s, uint32_t count)
{
	/* relaxed: published to completers by the push that queues the call */
	atomic_store_explicit(&s->word, count, memory_order_relaxed);
	s->waiter = xc_self;
}

/*
 * What a waiter waits on: a completion word and the bit that says it is not
 * done yet (0: a counting completion, done at count zero; XC_SLOT_PUBLISHED
 * for a slot call).
 */
struct wait_ref {
	struct xc__completion *s;
	uint32_t busy;
};

static bool ref_done(const struct wait_ref *r)
{
	/* seq_cst: this is a W2 re-check when the waiter is a worker; acquire for the callee's effects */
	return xc_completion_word_done(atomic_load_explicit(&r->s->word, memory_order_seq_cst), r->busy);
}

/* Wake the waiter of a completion that read XC_DONE_SLEEPING in its last update. */
void xc_completion_wake(struct xc__completion *s, struct xc_cpu *waiter)
{
	if (waiter)
		xc_kick(waiter);
	else
		xc_futex_wake(&s->word, INT_MAX);
}

void xc_complete(struct xc__completion *s)
{
	/* read before the count drops: the waiter may return right after it */
	struct xc_cpu *waiter = s->waiter;
	/* seq_cst: release the callee's effects to the waiter, and order before the kick's S2 */
	uint32_t old = atomic_fetch_sub_explicit(&s->word, 1, memory_order_seq_cst);

	if ((old & XC_DONE_COUNT) != 1 || !(old & XC_DONE_SLEEPING))
		return;		/* not the last, or the waiter is still spinning */
	xc_completion_wake(s, waiter);
}

/* The waiter may sleep from now on: ask the completer to wake it. False if already done. */
static bool ask_wake(const struct wait_ref *r)
{
	/* acquire (here and on CAS failure): once done, the callee's effects are visible */
	uint32_t w = atomic_load_explicit(&r->s->word, memory_order_acquire);

	for (;;) {
		if (xc_completion_word_done(w, r->busy))
			return false;
		if (w & XC_DONE_SLEEPING)
			return true;
		/* seq_cst: ordered against the completer's update (see above) */
		if (atomic_compare_exchange_weak_explicit(&r->s->word, &w, w | XC_DONE_SLEEPING,
							  memory_order_seq_cst, memory_order_acquire))
			return true;
	}
}

static int ready_done(struct xc_cpu *c, void *ctx, bool may_run)
{
	if (may_run && xc_slot_run_fast(c))
		return XC_READY_RAN;
	return ref_done(ctx) || xc_w2_pending(c, false);
}

/* Sleep on the completion word until done or the deadline (0: none); 0 or -ETIMEDOUT. */
static int done_sleep(const struct wait_ref *r, uint64_t deadline_ns)
{
	for (;;) {
		/* acquire: the callee's effects are visible once done */
		uint32_t w = atomic_load_explicit(&r->s->word, memory_order_acquire);
		struct timespec rel, *timeout = NULL;

		if (xc_completion_word_done(w, r->busy))
			return 0;
		if (!(w & XC_DONE_SLEEPING)) {
			if (!ask_wake(r))
				return 0;
			continue;	/* re-read the word to wait on */
		}
		if (deadline_ns) {
			uint64_t now = xc_now_ns();

			if (now >= deadline_ns)
				return -ETIMEDOUT;
			rel.tv_sec = (time_t)((deadline_ns - now) / 1000000000u);
			rel.tv_nsec = (long)((deadline_ns - now) % 1000000000u);
			timeout = &rel;
		}
		xc_futex_wait(&r->s->word, w, timeout);
	}
}

/*
 * Spin until done (true), or until the budget is spent or the deadline passes
 * (false); budget < 0: none, deadline 0: none. The clock is read every 64
 * spins only.
 */
static bool done_spin(const struct wait_ref *r, long budget_ns, uint64_t deadline_ns)
{
	uint64_t start = 0;

	for (unsigned spins = 1; !ref_done(r); spins++) {
		uint64_t now;

		xc_cpu_relax();
		if ((spins & 63) || (budget_ns < 0 && !deadline_ns))
			continue;
		now = xc_now_ns();
		if (!start)
			start = now;
		if ((budget_ns >= 0 && now - start > (uint64_t)budget_ns) ||
		    (deadline_ns && now >= deadline_ns))
			return false;
	}
	return true;
}

/*
 * The one waiting loop of the library, after its first phase, a short spin
 * without the clock (xc_completion_spin in internal.h). A worker keeps running
 * the calls queued to its own CPU meanwhile, so two workers that wait on
 * each other do not deadlock. @deadline_ns (0: none) bounds the wait; @st,
 * if not NULL, reports the wait when it gets stuck.
 */
static int wait_after_spin(const struct wait_ref *r, uint64_t deadline_ns, struct xc_stuck *st)
{
	struct xc_cpu *self = xc_self;
	long poll = xc_rt.cfg.poll_ns;

	if (self) {
		int ret = 0;

		if (!ask_wake(r))
			return 0;
		while (!ref_done(r)) {
			uint64_t until = st ? xc_stuck_deadline(st) : deadline_ns;

			if (xc_wait_serve())
				continue;
			if (!xc_idle_wait(self, ready_done, (void *)r, xc_poll_window(self), until, 0)) {
				if (!st) {
					ret = -ETIMEDOUT;
					break;
				}
				xc_stuck_check(st);
			}
		}
		xc_run_urgent(self);	/* pushed while we looked idle: see xc_idle_state_set */
		return ret;
	}
	if (poll != XC_POLL_NONE && poll != XC_POLL_FOREVER &&
	    done_spin(r, XC_WAITER_SPIN_NS, deadline_ns))
		return 0;
	for (;;) {
		uint64_t until = st ? xc_stuck_deadline(st) : deadline_ns;

		if (poll == XC_POLL_FOREVER ? done_spin(r, -1, until) : !done_sleep(r, until))
			return 0;
		if (!st)
			return -ETIMEDOUT;
		xc_stuck_check(st);
	}
}

/* Wait for a completion with a deadline (bringup, hotplug); 0 or -ETIMEDOUT. */
int xc_completion_wait_until(struct xc__completion *s, uint64_t deadline_ns)
{
	struct wait_ref r = { s, 0 };

	return xc_completion_spin(s, 0) ? 0 : wait_after_spin(&r, deadline_ns, NULL);
}

/* xc_completion_wait() (internal.h) once its first spin is over. */
void xc_completion_wait_rest(struct xc__completion *s, uint32_t busy, const struct xc_waitinfo *wi)
{
	struct wait_ref r = { s, busy };
	struct xc_stuck st = { .wi = wi };

	wait_after_spin(&r, 0, xc_rt.cfg.stuck_ms > 0 ? &st : NULL);
	xc_stuck_end(&st);
}
