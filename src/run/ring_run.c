// SPDX-License-Identifier: MIT
/*
 * ring_run.c - the worker's side of the per-sender rings (proto/ring.c):
 * running what they hold, in the order each owner put it.
 *
 * A held ring's entries run back to back (calls_run): per call, the tail,
 * the in-call marks, its count, its completion if any, the activity's
 * function, the check that the OS left the worker on its CPU and a look for
 * urgent calls; once per run, the activity's save and restore. A traced
 * call and a tombstone go through entry_run(), which does the same for one
 * entry, as does the close (entries taken by exchange, ring.c "Closing").
 *
 * == Below the floor ==
 * *
 * A worker whose waits nested past its serve floor (wait.c, "Serving while
 * waiting") runs none of its rings' entries: each could nest once more.
 * It refuses every waiting call queued in its held rings instead, wherever
 * the entry stands, behind nowait calls too (xc_rings_refuse_waited): the
 * exchange of its fn for REFUSED, then -ELOOP in the waiter's record, then
 * the waiter's completion, the last touch of its memory. Its sender may be
 * what this worker's nest waits for, so leaving the entry queued could
 * hang both for good. The refused call never runs, so the order of the
 * ring holds: the nowait calls before it run once the nest unwinds, and
 * later runs step over the tombstone. The exchange decides against a
 * refused doorbell's owner (above): either it reads REFUSED, and waits for
 * the completion this worker makes, or it retracted the entry first, and
 * the worker leaves it. Nowait and async calls have no waiter to tell:
 * they stay queued. While it serves below the floor it says so
 * (worker.deep, stored at each serve, run.c): a sender whose ring to it is
 * full would wait for room that only the unwinding makes, so it gets
 * -ELOOP instead (proto/ring.c, xc_ring_room), its call unsent.
 */
#include "base/internal.h"
#include "base/trace.h"
#include "proto/ring.h"
#include "proto/completion.h"
#include "run/ring_run.h"
#include "run/run.h"
#include "run/os_check.h"
#include "run/stuck.h"

#include <errno.h>

/*
 * Take entry @t's fn: a close by exchange (see "Closing"), an ordinary run
 * by a load. Relaxed: the entry was acquired with head, and the exchange's
 * single order on fn is what decides against a refused owner.
 */
static inline xc_func_t entry_take(struct xc_ring *r, uint32_t t, bool closing)
{
	struct xc_ring_entry *e = &r->e[t & r->mask];

	return closing ? atomic_exchange_explicit(&e->fn, XC_RING_TAKEN, memory_order_relaxed)
		       : atomic_load_explicit(&e->fn, memory_order_relaxed);
}

/*
 * A marker's call (ring.h): XC_RING_WAITED and XC_RING_ASYNC name the
 * function, its argument and what to complete after it.
 */
static inline void entry_unpack(xc_func_t *fn, void **arg, struct xc__completion **done,
				struct xc_call **async)
{
	if (*fn == XC_RING_WAITED) {
		/* on the waiter's stack until the completion */
		const struct xc_ring_waited *w = *arg;

		*fn = w->fn;
		*arg = w->arg;
		*done = w->done;
	} else if (*fn == XC_RING_ASYNC) {
		*async = *arg;	/* the caller's until its in-flight bit is clear */
		*fn = (*async)->fn;
		*arg = (*async)->arg;
	}
}

/*
 * Run entry @t, read out as @fn(@arg) with @done or @async to complete
 * after it: the one body of every way a ring's entry runs, @alone a
 * constant in each. Not @alone: one call of calls_run()'s batch, untraced,
 * whose activity the batch records (*@begun; *@outer keeps what it
 * replaced) and whose OS check reads @where; @done and @async constants
 * NULL for a plain nowait call, so that its copy tests neither. @alone: an
 * entry on its own (entry_run), traced if tracing is on, with its own
 * activity and OS check.
 */
static inline __attribute__((always_inline)) void entry_go(struct xc_cpu *c, struct xc_ring *r, uint32_t t,
							   xc_func_t fn, void *arg,
							   struct xc__completion *done,
							   struct xc_call *async, bool alone,
							   const volatile int *where, bool *begun,
							   struct xc_activity *outer)
{
	struct xc_activity own;
	uint32_t flow = 0;
	int from = -1;

	if (alone && xc_unlikely(xc_tracing_on())) {
		flow = r->meta[t & r->mask].flow;
		from = r->meta[t & r->mask].from;
	}
	/* release: the entry is read out before its owner may write it again */
	atomic_store_explicit(&r->tail, t + 1, memory_order_release);
	if (alone) {
		xc_activity_begin(c, XC_ACT_CALL, (const void *)fn, 0, &own);
		xc_trace(XC_EV_CALL_ENTRY, from, flow, (const void *)fn);
	} else if (xc_likely(*begun)) {
		xc_activity_next(c, (const void *)fn);
	} else {
		*begun = xc_activity_begin(c, XC_ACT_CALL, (const void *)fn, 0, outer);
	}
	xc_user_run(XC_USER_CALL, fn, arg);
	if (alone)
		xc_trace(XC_EV_CALL_EXIT, from, flow, (const void *)fn);
	xc_stat_inc_own(&c->worker.calls);	/* before the completion: its waiter sees it counted */
	xc_call_complete(done, async);
	if (alone) {
		xc_activity_end(c, &own);
		xc_os_after_run(c);
	} else {
		xc_os_after_run_at(c, where);
	}
	xc_call_returned(c);
}

/*
 * Run entry @t, its @fn taken, on its own: a traced call, a tombstone
 * (only stepped over), or any entry of a close.
 */
static __attribute__((noinline)) void entry_run(struct xc_cpu *c, struct xc_ring *r, uint32_t t,
						xc_func_t fn)
{
	void *arg = r->e[t & r->mask].arg;
	struct xc__completion *done = NULL;
	struct xc_call *async = NULL;

	if (xc_ring_tombstone(fn)) {
		/* release: as entry_go's; taken back by its owner, or refused below the floor */
		atomic_store_explicit(&r->tail, t + 1, memory_order_release);
		return;
	}
	entry_unpack(&fn, &arg, &done, &async);
	entry_go(c, r, t, fn, arg, done, async, true, NULL, NULL, NULL);
}

/*
 * The ordinary run of @r from entry @t, which head_seen covers: a burst's
 * calls back to back. What each call needs is done per call: the tail, the
 * in-call marks, its count, its completion if any, the activity's function,
 * the check that the OS left the worker on its CPU, and a look for urgent
 * calls, which jump the order between two calls. Once per run: the
 * activity's save and restore, the stuck reports' and the OS check's
 * settings. A traced call and a tombstone go through entry_run().
 *
 * A call's function may wait and serve, running later entries of this
 * ring inside it: tail and head_seen are read again after every call. A
 * run ends after a ring's worth of calls, though its owner may have put
 * more: an owner that keeps the ring full keeps nothing else out (the
 * other rings, urgent calls' turn, task work), each looked at between
 * runs.
 */
static __attribute__((noinline)) int calls_run(struct xc_cpu *c, struct xc_ring *r, uint32_t t)
{
	const volatile int *where = xc_os_run_word(c);
	/* tracing is on or off for a runtime's life while its workers run (trace.c) */
	const bool traced = xc_tracing_on();
	struct xc_activity outer;
	bool begun = false;
	uint32_t n = 0;

	do {
		struct xc_ring_entry *e = &r->e[t & r->mask];
		/* relaxed: acquired with head */
		xc_func_t fn = atomic_load_explicit(&e->fn, memory_order_relaxed);
		void *arg = e->arg;

		if (xc_likely(!xc_ring_marker(fn) && !traced)) {
			entry_go(c, r, t, fn, arg, NULL, NULL, false, where, &begun, &outer);
		} else if (xc_ring_tombstone(fn) || traced) {
			entry_run(c, r, t, fn);
		} else {
			struct xc__completion *done = NULL;
			struct xc_call *async = NULL;

			entry_unpack(&fn, &arg, &done, &async);
			entry_go(c, r, t, fn, arg, done, async, false, where, &begun, &outer);
		}
		/* relaxed: only this worker writes tail */
		t = atomic_load_explicit(&r->tail, memory_order_relaxed);
		if (t == r->head_seen)
			/* acquire: pairs with the owner's release of head: the entries are written */
			r->head_seen = atomic_load_explicit(&r->head, memory_order_acquire);
		n++;
	} while (t != r->head_seen && n <= r->mask);	/* mask, not size: the worker's own line */
	if (begun)
		xc_activity_end(c, &outer);
	return (int)n;
}

/*
 * Run what @r holds now. The tail is re-read at every step: a call that
 * polls or waits runs later entries of the same ring inside it. Inline, so
 * that @closing is a constant in each caller: the ordinary run does not
 * test it, and costs a held ring with nothing new two loads.
 */
static inline __attribute__((always_inline)) int ring_run(struct xc_cpu *c, struct xc_ring *r,
							  bool closing)
{
	int n = 0;

	for (;;) {
		/* relaxed: only this worker writes tail */
		uint32_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);

		if (t == r->head_seen) {
			/* acquire: pairs with the owner's release of head: the entries are written */
			uint32_t h = atomic_load_explicit(&r->head, memory_order_acquire);

			if (t == h)
				return n;	/* nothing new: head_seen stays, unwritten */
			r->head_seen = h;
		}
		if (!closing)
			return calls_run(c, r, t);
		entry_run(c, r, t, entry_take(r, t, true));
		n++;
	}
}

/* Refuse the waiting calls queued in @r ("Below the floor"); how many. */
static int ring_refuse_waited(struct xc_ring *r)
{
	/* relaxed: only this worker writes tail */
	uint32_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
	/* acquire: pairs with the owner's release of head: the entries are written */
	uint32_t h = atomic_load_explicit(&r->head, memory_order_acquire);
	int n = 0;

	/* the whole queue each time: it holds at most a ring's worth, and a look comes only with news */
	for (; t != h; t++) {
		struct xc_ring_entry *e = &r->e[t & r->mask];
		struct xc_ring_waited *w;

		/* relaxed: acquired with head; the exchange below is what decides */
		if (atomic_load_explicit(&e->fn, memory_order_relaxed) != XC_RING_WAITED)
			continue;
		w = e->arg;	/* read before the exchange: a retracting owner may return once it is done */
		/* relaxed: the exchanges' single order on fn decides (see "Closing") */
		if (atomic_exchange_explicit(&e->fn, XC_RING_REFUSED, memory_order_relaxed) != XC_RING_WAITED)
			continue;	/* its owner took it back first */
		/* relaxed: published by the completion's seq_cst update */
		atomic_store_explicit(&w->err, -ELOOP, memory_order_relaxed);
		xc_complete(w->done);	/* the last touch of the waiter's memory */
		n++;
	}
	r->looked = h;
	return n;
}

/*
 * Run the held rings; a ring unheld meanwhile (a wait inside a call) ends
 * this pass.
 */
int xc_rings_run(struct xc_cpu *c)
{
	int n = 0;

	for (struct xc_ring *r = c->worker.rings_held; r; r = r->held_next)
		n += ring_run(c, r, false);
	return n;
}

/*
 * The idle poll's run (worker.c): @from, which its look found with calls
 * (xc_rings_next_pending), then each held ring after it while the next one
 * has calls too. The poll's next look begins at the first ring this one
 * did not run, so that it takes the rings in turn, whichever order their
 * owners' calls come in, and finds the next owner's calls at its first
 * look when they come round. A ring this run passes by stays held, so its
 * owner rides free, and the poll's next pass finds it: it looks at every
 * held ring before it lets the spin go on (ready_rings). A ring unheld
 * meanwhile (a wait inside a call) ends the run, and the next look begins
 * at the first held ring.
 */
int xc_rings_run_streak(struct xc_cpu *c, struct xc_ring *from)
{
	struct xc_ring *r = from;
	int n = 0;

	do {
		n += ring_run(c, r, false);
		r = r->held_next;
	} while (r && xc_ring_has_calls(r));
	/* held: read after the run, and nothing runs between it and the store */
	c->worker.rings_look = r ? r : c->worker.rings_held;
	return n;
}

/*
 * Below the serve floor (wait.c): refuse the waiting calls queued in the
 * held rings, run nothing ("Below the floor"); how many were refused.
 */
int xc_rings_refuse_waited(struct xc_cpu *c)
{
	int n = 0;

	for (struct xc_ring *r = c->worker.rings_held; r; r = r->held_next)
		n += ring_refuse_waited(r);
	return n;
}

/*
 * Offline or exit: the rings unlinked by the close's protocol part
 * (xc_rings_close_unlink), then the dropped ones, each entry taken by
 * exchange (ring.c, "Closing"). Returns how many entries it took.
 */
int xc_rings_close(struct xc_cpu *c)
{
	struct xc_ring *list = xc_rings_close_unlink(c), *r;
	int n = 0;

	while ((r = list)) {
		n += ring_run(c, r, true);	/* U3, and what it finds */
		list = r->held_next;
		r->held = false;
		r->held_next = NULL;
	}
	while ((r = xc_rings_dropped_pop(c)))
		n += ring_run(c, r, true);
	return n;
}
