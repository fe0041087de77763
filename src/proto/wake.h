/* SPDX-License-Identifier: MIT */
/*
 * wake.h - the wakeup protocol (wake.c): the idle word, kicks, the idle wait's
 * interface, and the W2 re-check of what senders publish before they kick
 */
#ifndef XC_WAKE_H
#define XC_WAKE_H

#include "base/internal.h"
#include "proto/ring.h"
#include "proto/mailbox.h"
#include "base/trace.h"

void xc_kick_slow(struct xc_cpu *c, uint32_t s);
/* After a push of a call or a ring (@pushed: XC_PUSH_*): kick if the queue went from empty to non-empty. */
void xc_call_kick(struct xc_cpu *c, int pushed, bool urgent);

/* A kick that found the worker RUNNING or POLLING: it re-checks before it sleeps. */
static inline void xc_kick_elided(struct xc_cpu *c)
{
	xc_stat_inc_shared(&c->sent.kicks_elided);
	xc_trace(XC_EV_KICK_ELIDED, c->life.cpu, 0, NULL);
}

/*
 * xc_kick() - make @c's worker look at its queues. Call it after publishing
 * what it must see (S1), from any thread. Inline up to its common end, a
 * worker that runs or polls and needs no syscall; the rest is wake.c's.
 */
static inline void xc_kick(struct xc_cpu *c)
{
	/* S2, seq_cst: ordered after the push S1 (see the argument in wake.c) */
	uint32_t s = atomic_load_explicit(&c->mbox.idle, memory_order_seq_cst);

	if (xc_likely(s == XC_IDLE_RUNNING || s == XC_IDLE_POLLING) && !xc_ablated(XC_ABLATE_ELIDE)) {
		xc_kick_elided(c);
		return;
	}
	xc_kick_slow(c, s);
}

/*
 * What the idle wait (wake.c) asks its caller each time it looks (xc_idle_wait): 0
 * to go on waiting, XC_READY_YES to return; with @may_run (while polling,
 * never in the re-check before a sleep) XC_READY_RAN after running a call
 * itself without leaving the wait (the slot's, slot.c).
 */
enum { XC_READY_NO = 0, XC_READY_YES = 1, XC_READY_RAN = 2 };
typedef int (*xc_ready_fn)(struct xc_cpu *c, void *ctx, bool may_run);
bool xc_idle_wait(struct xc_cpu *c, xc_ready_fn ready, void *ctx, long window_ns,
		  uint64_t deadline_ns, long sleep_limit_ns);

/* Whether @c's idle poll is shut a while yet: its CPU was shared (wake.c, poll_cut). */
bool xc_poll_quiet(struct xc_cpu *c);

/* The idle poll window of @c's worker now, in ns (< 0: forever); adapted in wake.c. */
static inline long xc_poll_window(struct xc_cpu *c)
{
	long p = xc_rt.cfg.poll_ns;

	if (p == XC_POLL_NONE)
		return 0;
	if (p == XC_POLL_FOREVER)
		return -1;
	if (xc_unlikely(c->worker.poll_quiet_until) && xc_poll_quiet(c))
		return 0;	/* its CPU was shared a moment ago: sleep at once (wake.c, poll_cut) */
	if (p > 0)
		return p;
	/* relaxed: only this worker writes it; xc_stats_get reads a snapshot */
	return atomic_load_explicit(&c->worker.poll_ns, memory_order_relaxed);
}
bool xc_fd_sleep_begin(struct xc_cpu *c, xc_ready_fn ready, void *ctx);
void xc_fd_sleep_end(struct xc_cpu *c);
void xc_fd_quiesce(struct xc_cpu *c);
/*
 * Only the owner sets RUNNING or POLLING. Back to RUNNING is seq_cst: an
 * urgent sender that read POLLING relies on this worker to run its call
 * before anything long, so the caller re-checks the urgent queue after it
 * (xc_run_urgent), and a sender that reads RUNNING signals instead (urgent.c).
 */
static inline void xc_idle_state_set(struct xc_cpu *c, uint32_t state)
{
	atomic_store_explicit(&c->mbox.idle, state,
			      state == XC_IDLE_RUNNING ? memory_order_seq_cst : memory_order_relaxed);
}

/* Owner only: whether calls wait to run on @c, in its slot or queues: all but the rings it holds. */
static inline bool xc_calls_pending_unheld(struct xc_cpu *c)
{
	/* seq_cst: this is the W2 re-check of the wakeup protocol (wake.c) */
	return xc_slot_pending(c) ||
	       xc_llist_nonempty(&c->mbox.callq, memory_order_seq_cst) ||
	       xc_llist_nonempty(&c->mbox.urgentq, memory_order_seq_cst);
}

/* Owner only: whether calls wait to run on @c. */
static inline bool xc_calls_pending(struct xc_cpu *c)
{
	return xc_calls_pending_unheld(c) || (c->worker.rings_held && xc_rings_pending(c));
}

/* Owner only: whether task work waits on @c: work items, or a hotplug or exit request. */
static inline bool xc_task_pending(struct xc_cpu *c)
{
	/* seq_cst: W2 re-check loads; hotplug stores ctl, then kicks */
	return c->worker.work_head || xc_llist_nonempty(&c->mbox.workq, memory_order_seq_cst) ||
	       atomic_load_explicit(&c->life.ctl, memory_order_seq_cst) != XC_CTL_NONE;
}

/*
 * W2, the worker's one re-check after W1 (wake.c): what senders publish
 * before they kick. Calls always; with @task, task work too (an idle worker;
 * a worker waiting inside a call leaves its task work for later).
 */
static inline bool xc_w2_pending(struct xc_cpu *c, bool task)
{
	return xc_calls_pending(c) || (task && xc_task_pending(c));
}

/*
 * After the worker ran calls: give the CPU to a thread of this CPU that
 * waits for one of them (plain_wait in wait.c counts it in waiters_here),
 * which runs again only when the worker gives way. Off the critical path:
 * the completion is already stored.
 */
static inline void xc_give_way(struct xc_cpu *c)
{
	/* relaxed: a hint; missed, the waiter runs at the spin's next yield, as without it */
	if (xc_unlikely(atomic_load_explicit(&c->life.waiters_here, memory_order_relaxed)))
		sched_yield();
}

#endif /* XC_WAKE_H */
