// SPDX-License-Identifier: MIT
/*
 * wake.c - the wakeup protocol: how a sender makes sure a worker sees what it
 * queued, paying a futex wake only when the worker is really asleep.
 *
 * The protocol is argued here, once, for both sides. The sender's side is
 * here and in wake.h (xc_kick, inline up to its common end); the worker's is
 * xc_idle_wait (wait.c) for a futex sleep and xc_fd_sleep_begin / _end here
 * for an attached thread's own. The model in model/wakeup.pml checks it;
 * its comments name the lines.
 *
 * == The worker's idle word (struct xc_cpu.idle) ==
 *
 *   RUNNING   running calls or work            owner stores it
 *   POLLING   idle, spinning on its queues     owner stores it
 *   SLEEPING  idle, in futex_wait on the word  owner stores it
 *   WAKING    a sender took it out of SLEEPING sender CAS SLEEPING -> WAKING
 *             and is about to futex-wake it
 *   WOKENUP   that futex wake was issued       sender CAS WAKING -> WOKENUP
 *
 * A sender enters WAKING only from SLEEPING (or SLEEPING_FD, below), and moves WAKING on only to
 * WOKENUP. The owner leaves WAKING or WOKENUP by its exchange to POLLING after
 * futex_wait returns (W4), or, when its re-check W2 found work after a sender
 * had already claimed the wakeup, by setting RUNNING or POLLING; either way a
 * seq_cst W1 and re-check W2 come before it can sleep again. So a sender that
 * reads WAKING or WOKENUP knows that a wakeup is under way and that the
 * worker will re-check its queues after it: it rides free (seed 001). A
 * sender that reads RUNNING or POLLING knows the worker will re-check its
 * queues before it next sleeps: it makes no syscall (TIF_POLLING_NRFLAG).
 *
 * == Why no wakeup is lost ==
 *
 * Sender (xc_kick), after queueing:     Worker (xc_idle_wait), before sleeping:
 *   S1 push node       (seq_cst CAS)      W1 idle = SLEEPING   (seq_cst store)
 *   S2 s = load(idle)  (seq_cst)          W2 re-check queues   (seq_cst loads)
 *   S3 if s == SLEEPING:                  W3 futex_wait(idle, SLEEPING)
 *        CAS idle SLEEPING -> WAKING      W4 exchange idle -> POLLING (seq_cst)
 *        futex_wake(idle)
 *        CAS idle WAKING -> WOKENUP (relaxed; fails if the worker moved on)
 *
 * All four accesses are seq_cst, so they are totally ordered. If S2 precedes
 * W1, then S1 precedes W2 and the re-check sees the node: the worker does not
 * sleep. If W1 precedes S2, the sender reads SLEEPING (or a later state):
 * either its CAS succeeds and it wakes the worker (futex_wait returns at once
 * if the word already changed, so the wake cannot fall between W2 and W3), or
 * the CAS fails because the word moved on, and the sender re-reads it. A
 * sender that reads WAKING/WOKENUP: its S2 read a value that the worker's
 * later exchange (W4, after futex_wait) overwrites, so S1 precedes W4 and the
 * worker's next re-check sees the node. Removing W2 is the lost wakeup the
 * model's mutant finds.
 *
 * Calls through per-sender rings (ring.c) enter this protocol at their
 * doorbell: the push of the ring on callq is S1. A ring the worker already
 * holds needs no doorbell, because the worker unlinks every held ring
 * (ring.c's U1-U3) before its W1, and keeps one that has
 * calls, which W2 then finds; where it cannot unlink yet (another worker's
 * membarrier is under way, ring.c) it polls on instead of sleeping.
 *
 * The worker's POLLING stores are relaxed: they only weaken a sender's duty
 * (no syscall), and the worker's W1 + W2 still follow before any sleep. Its
 * RUNNING store is seq_cst for urgent calls only (xc_idle_state_set, urgent.c).
 *
 * Waiting is wait.c's: a worker idle or blocked in a call's wait sleeps
 * through xc_idle_wait there, by W1-W4 above, and a completion wakes a
 * waiting worker with xc_kick.
 *
 * == The other sleeper: an attached thread in its own loop (attach.c) ==
 *
 * An application thread attached as a CPU's worker sleeps in its own wait
 * (epoll_wait, io_uring_enter), which no futex wake ends; an eventfd in that
 * wait does. The protocol is the same, with SLEEPING_FD for SLEEPING and a
 * write to the eventfd for the futex wake:
 *
 *   W1 idle = SLEEPING_FD (seq_cst)       xc_fd_sleep_begin
 *   W2 re-check (seq_cst loads); found something: exchange idle -> RUNNING,
 *      "do not sleep"
 *   W3 the application's own wait, with the eventfd in it
 *   W4 exchange idle -> RUNNING (seq_cst) xc_fd_sleep_end
 *
 * and a sender's S3 CAS from SLEEPING_FD to WAKING is followed by the write.
 * The argument above holds word for word: W3 cannot miss the write, because
 * an eventfd stays readable until it is read, as futex_wait compares first.
 *
 * The eventfd is read only when a kick was claimed, and its descriptor is
 * closed only when no write is in flight. The owner counts the claims it
 * sees (fd_kicks_seen: each exchange of W2-found or W4 that reads WAKING or
 * WOKENUP saw exactly one successful S3), the senders count the writes done
 * (fd_kicks_done, after the write). A read after a load of fd_kicks_done
 * equal to fd_kicks_seen leaves no write behind it, so the fd cannot stay
 * readable with nobody's kick to read (a loop that spins in epoll); and
 * detach waits for fd_kicks_done to reach fd_kicks_seen before the close,
 * so no write can reach a closed or reused descriptor. The loop may read
 * the fd itself (an io_uring read): the counts do not depend on who reads.
 */
#include "base/internal.h"
#include "proto/wake.h"
#include "base/futex.h"
#include "base/trace.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>


static void kick_futex(struct xc_cpu *c)
{
	xc_futex_wake(&c->idle, 1);
	xc_stat_inc_shared(&c->kicks_sent);
	xc_trace(XC_EV_KICK_SENT, c->cpu, 0, NULL);
}

/* An attached thread sleeps in its own loop: its eventfd ends that sleep. */
static void kick_fd(struct xc_cpu *c)
{
	uint64_t one = 1;

	/* the fd is open: its owner closes it only after fd_kicks_done counts this write */
	while (write(c->kick_fd, &one, sizeof(one)) < 0 && errno == EINTR)
		;
	/* release: the write happens before the owner that sees the count closes or reads */
	atomic_fetch_add_explicit(&c->fd_kicks_done, 1, memory_order_release);
	xc_stat_inc_shared(&c->kicks_sent);
	xc_trace(XC_EV_KICK_SENT, c->cpu, 0, NULL);
}

/*
 * xc_kick_slow() - xc_kick() (wake.h) once its S2 load read @s, which is not
 * the common case it ends inline: a sleeping worker to wake, a wakeup under
 * way to ride, or an ablation to honour.
 */
void xc_kick_slow(struct xc_cpu *c, uint32_t s)
{
	for (;;) {
		switch (s) {
		case XC_IDLE_SLEEPING:
		case XC_IDLE_SLEEPING_FD:
			/* S3, seq_cst: on failure s holds the new state and we decide again */
			if (!atomic_compare_exchange_strong_explicit(&c->idle, &s, XC_IDLE_WAKING,
								     memory_order_seq_cst,
								     memory_order_seq_cst))
				continue;
			if (s == XC_IDLE_SLEEPING_FD)
				kick_fd(c);
			else
				kick_futex(c);
			/* relaxed: publishes nothing; fails harmlessly if the worker moved on */
			s = XC_IDLE_WAKING;
			atomic_compare_exchange_strong_explicit(&c->idle, &s, XC_IDLE_WOKENUP,
								memory_order_relaxed,
								memory_order_relaxed);
			return;
		case XC_IDLE_WAKING:
		case XC_IDLE_WOKENUP:
			if (xc_unlikely(xc_ablated(XC_ABLATE_FREERIDE))) {
				kick_futex(c);
				return;
			}
			xc_stat_inc_shared(&c->free_rides);
			xc_trace(XC_EV_FREE_RIDE, c->cpu, 0, NULL);
			return;
		default: /* RUNNING or POLLING (a CAS above failed to it, or ablated): it re-checks */
			if (xc_unlikely(xc_ablated(XC_ABLATE_ELIDE))) {
				kick_futex(c);
				return;
			}
			xc_kick_elided(c);
			return;
		}
	}
}

/*
 * The attached thread's exchange (W2's "do not sleep", or W4) read @old:
 * WAKING or WOKENUP is one claimed kick, whose write is done or on its
 * way. Read the eventfd while kicks are owed, until a read comes after
 * the last one's write.
 */
static void fd_settle(struct xc_cpu *c, uint32_t old)
{
	uint64_t val;

	if (old == XC_IDLE_WAKING || old == XC_IDLE_WOKENUP)
		c->fd_kicks_seen++;
	if (c->fd_kicks_drained == c->fd_kicks_seen)
		return;
	/* acquire: the writes it counts happened before the read below */
	uint64_t done = atomic_load_explicit(&c->fd_kicks_done, memory_order_acquire);

	(void)!read(c->kick_fd, &val, sizeof(val));	/* EAGAIN: the loop read it, or it is on its way */
	if (done == c->fd_kicks_seen)
		c->fd_kicks_drained = done;
}

/*
 * xc_fd_sleep_begin() - W1 and W2 for an attached thread about to sleep in
 * its own loop: true if it may sleep (senders now kick its eventfd), false
 * if ready() found something (it is RUNNING again). ready() as for
 * xc_idle_wait, never asked to run anything. Owner only, RUNNING.
 */
bool xc_fd_sleep_begin(struct xc_cpu *c, xc_ready_fn ready, void *ctx)
{
	if (xc_rings_release(c))	/* U1-U3 (ring.c), as in xc_idle_wait */
		return false;		/* not yet: the loop polls on and comes back */
	/* W1, seq_cst: ordered before the re-check W2 */
	atomic_store_explicit(&c->idle, XC_IDLE_SLEEPING_FD, memory_order_seq_cst);
	if (ready(c, ctx, false)) {	/* W2 */
		/* seq_cst: as W4; a sender may have claimed a kick meanwhile */
		fd_settle(c, atomic_exchange_explicit(&c->idle, XC_IDLE_RUNNING, memory_order_seq_cst));
		return false;
	}
	xc_stat_inc_own(&c->sleeps);
	xc_trace(XC_EV_SLEEP, -1, 0, NULL);
	xc_tls.in_fd_sleep = 1;
	return true;
}

/* xc_fd_sleep_end() - W4 after the attached thread's own wait; a no-op when RUNNING. Owner only. */
void xc_fd_sleep_end(struct xc_cpu *c)
{
	/* relaxed: only this thread stores RUNNING, and senders never move it on */
	uint32_t old = atomic_load_explicit(&c->idle, memory_order_relaxed);

	xc_tls.in_fd_sleep = 0;
	if (old != XC_IDLE_RUNNING) {
		/* W4, seq_cst: leave SLEEPING_FD/WAKING/WOKENUP; senders from now on skip the syscall */
		old = atomic_exchange_explicit(&c->idle, XC_IDLE_RUNNING, memory_order_seq_cst);
		xc_stat_inc_own(&c->wakeups);
		xc_trace(XC_EV_WAKE, -1, 0, NULL);
	}
	fd_settle(c, old);
}

/*
 * xc_fd_quiesce() - no eventfd write is in flight, nor can one start: the
 * descriptor may be closed. Owner only, RUNNING (after xc_fd_sleep_end), so
 * no sender can claim a kick; those claimed before are counted in
 * fd_kicks_seen and finish their write in a few instructions.
 */
void xc_fd_quiesce(struct xc_cpu *c)
{
	/* acquire: the writes are done before the close */
	while (atomic_load_explicit(&c->fd_kicks_done, memory_order_acquire) != c->fd_kicks_seen)
		sched_yield();
}
