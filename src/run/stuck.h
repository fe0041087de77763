/* SPDX-License-Identifier: MIT */
/*
 * stuck.h - stuck-call reports (stuck.c) and what a worker runs now, for them
 */
#ifndef XC_STUCK_H
#define XC_STUCK_H

#include "base/internal.h"
#include "run/wait.h"

/* A waiting caller's watch; costs nothing until the wait gets long. */
#define XC_STUCK_DESCRIBE 4	/* targets whose activity a report describes */
struct xc_stuck_seen {
	uint32_t seq;		/* a target's xc_cpu.cur_seq ... */
	uint64_t ns;		/* ... seen unchanged since then (xc_now_ns) */
	uint64_t run_ns;	/* its thread's CPU time (0: unknown) ... */
	uint64_t run_seen_ns;	/* ... seen unchanged since then (xc_now_ns) */
};
/*
 * The waiter looks at its targets and their threads once before it first
 * reports, a quarter of stuck_ms into the wait (sampled), so that the report
 * can say what has run since: a worker that the OS does not run looks idle
 * to the library's own words.
 */
struct xc_stuck {
	const struct xc_waitinfo *wi;
	uint64_t start_ns, next_ns, interval_ns;
	unsigned reports;
	bool sampled;
	struct xc_stuck_seen seen[XC_STUCK_DESCRIBE];	/* per described target */
};
/*
 * The watch, seen from the wait: one hook, xc_stuck_check(), which the wait
 * calls only once the time xc_stuck_deadline() gave has come; the rest is
 * inline here, so a wait that ends before it calls nothing of stuck.c.
 * The first hook looks at the targets; the reports follow.
 */
void xc_stuck_check(struct xc_stuck *st);
void xc_stuck_unstuck(struct xc_stuck *st);

/* When the hook is due next (0: reports are off); the first call starts the watch. */
static inline uint64_t xc_stuck_deadline(struct xc_stuck *st)
{
	if (!st->start_ns && xc_rt.cfg.stuck_ms > 0) {
		st->start_ns = xc_now_ns();
		st->interval_ns = (uint64_t)xc_rt.cfg.stuck_ms * 1000000u;
		st->next_ns = st->start_ns + st->interval_ns / 4;
	}
	return st->next_ns;
}

/* After the wait: a call that was reported stuck is reported ended. */
static inline void xc_stuck_end(struct xc_stuck *st)
{
	if (xc_unlikely(st->reports))
		xc_stuck_unstuck(st);
}

/*
 * What the worker runs, for stuck reports (stuck.c). A call's start reads no
 * clock: on this path every instruction delays the completion its caller
 * spins on, and a clock read there was measured to cost more than the rest
 * of the bookkeeping together. A waiter that reports a stuck call bounds its
 * age from the sequence number instead; a work item, which is not on a
 * waiting caller's path, is stamped with the coarse clock.
 */
struct xc_activity {
	int kind;
	const void *fn;
	uint64_t since_ns;
};

/*
 * Note that @c's worker starts running @fn (an XC_ACT_* @kind) since
 * @since_ns (0: not stamped); *@outer keeps what it ran before, which a call
 * nested in a work item or an urgent call interrupting one interrupts.
 * False if stuck reports are off, and nothing is recorded.
 */
static inline bool xc_activity_begin(struct xc_cpu *c, int kind, const void *fn, uint64_t since_ns,
				     struct xc_activity *outer)
{
	/* relaxed, all: a snapshot for diagnostics, never for synchronisation; only this thread writes */
	if (xc_rt.cfg.stuck_ms <= 0)
		return false;
	outer->kind = atomic_load_explicit(&c->worker.cur_kind, memory_order_relaxed);
	if (outer->kind != XC_ACT_NONE) {
		outer->fn = atomic_load_explicit(&c->worker.cur_fn, memory_order_relaxed);
		outer->since_ns = atomic_load_explicit(&c->worker.cur_since_ns, memory_order_relaxed);
	}
	atomic_store_explicit(&c->worker.cur_fn, fn, memory_order_relaxed);
	atomic_store_explicit(&c->worker.cur_since_ns, since_ns, memory_order_relaxed);
	atomic_store_explicit(&c->worker.cur_seq, atomic_load_explicit(&c->worker.cur_seq, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	atomic_store_explicit(&c->worker.cur_kind, kind, memory_order_relaxed);
	return true;
}

/*
 * The next call of a run whose first xc_activity_begin() as an XC_ACT_CALL
 * returned true (it records): a new activity of the same kind, whose
 * sequence number a waiter sees move.
 */
static inline void xc_activity_next(struct xc_cpu *c, const void *fn)
{
	/* relaxed, all: as above */
	atomic_store_explicit(&c->worker.cur_fn, fn, memory_order_relaxed);
	atomic_store_explicit(&c->worker.cur_seq, atomic_load_explicit(&c->worker.cur_seq, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

/*
 * The activity begun with @outer has ended: the worker runs *@outer again.
 * The sequence number stays bumped, so a waiter that saw the outer activity
 * before the nested one cannot take the two for one long activity.
 */
static inline void xc_activity_end(struct xc_cpu *c, const struct xc_activity *outer)
{
	if (xc_rt.cfg.stuck_ms <= 0)
		return;
	if (outer->kind != XC_ACT_NONE) {
		atomic_store_explicit(&c->worker.cur_fn, outer->fn, memory_order_relaxed);
		atomic_store_explicit(&c->worker.cur_since_ns, outer->since_ns, memory_order_relaxed);
	}
	atomic_store_explicit(&c->worker.cur_kind, outer->kind, memory_order_relaxed);
}

#endif /* XC_STUCK_H */
