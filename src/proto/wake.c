// SPDX-License-Identifier: MIT
/*
 * wake.c - the wakeup protocol: how a sender makes sure a worker sees what it
 * queued, paying a futex wake only when the worker is really asleep.
 *
 * The protocol is argued here, once, for both sides. The sender's side is
 * here and in wake.h (xc_kick, inline up to its common end); the worker's is
 * here too: xc_idle_wait for a futex sleep (poll, then W1-W4) and
 * xc_fd_sleep_begin / _end for an attached thread's own. The model in model/wakeup.pml checks it;
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
 * (U1-U3, below) before its W1, and keeps one that has calls, which W2
 * then finds; where it cannot unlink yet (another worker's membarrier is
 * under way) it polls on instead of sleeping.
 *
 * == A ring's doorbell (ring.c): why no ring call is stranded ==
 *
 * Owner (ring_put, xc_ring_doorbell):    Worker (xc_rings_release), before
 *                                          it may sleep, on every held ring:
 *   R1 store entry, head (release)         U1 state = IDLE
 *   R1' seq_cst fence                      U2 seq_cst fence
 *   R2 s = load(state)
 *   R3 s == IDLE: CAS state -> LINKED,     U3 load(head): calls left?
 *      push on callq (S1), kick (S2)          CAS state IDLE -> LINKED: won, keep
 *                                             it; lost, the owner pushed it
 *
 * R1 -> R2 is a store followed by a load of another word, as U1 -> U3:
 * store buffering, which only a full fence on each side orders. With them,
 * either R2 reads IDLE (it comes after U1) or U3 sees R1; both may happen,
 * neither missing cannot. So either the owner rings the doorbell, which
 * goes through the protocol above (the push is S1), or the worker sees the
 * call at U3 and does not sleep.
 *
 * == Owners without a fence ==
 *
 * R1' is a store-buffer drain per call, and it waits for the head's line,
 * which the polling worker keeps reading: on its own it costs 3-5 times a
 * plain ring's push. So in a burst the owner skips it, and the worker pays
 * instead, once per sleep, with membarrier(2) PRIVATE_EXPEDITED: every
 * running thread of the process runs a full barrier before the call
 * returns (and one not running passed one when it was switched out).
 *
 *   Owner, a fenced call:                  Worker (xc_rings_release):
 *     F1 unfenced = 1 (relaxed)              U1 state = IDLE, on each
 *     R1' seq_cst fence; R2 as above:        U2 seq_cst fence
 *       LINKED, and calls skip R1' until     U2' any unfenced == 1 (acquire):
 *   Owner, a doorbell whose CAS won:             membarrier
 *     C unfenced = 0 (release)               U3 as above
 *   Owner, a call that would skip R1' but
 *   reads xc_ring_asym false:
 *     C' unfenced = 0 (release); R1', R2 as a fenced call
 *
 * Take a call P that skipped R1', and its last F1 and R1' before it, whose
 * R2 read LINKED (else that call would have linked the ring and stored C);
 * no C or C' lies between them. Say P's R2 read a state from before this
 * release's U1 (else it read IDLE and rings the doorbell, or a re-link:
 * U3's own, and the worker keeps the ring, or its owner's, with a push).
 * If U2' read unfenced from before that F1, U2 precedes that R1', and
 * every later load of the owner, P's R2 among them, reads U1 or later:
 * not so. So U2' reads 1, and membarrier runs: either P's head store comes
 * before the owner's barrier point and U3 sees it, or P's R2 comes after
 * and reads IDLE. Or U2' reads a C after P: C follows the doorbell's CAS,
 * after P's head store, and U2' acquires it, so U3 sees the head. That CAS
 * also releases the heads before it (acq_rel), for the close, which runs a
 * ring dropped at a lost U3 CAS without reading its unfenced flag: its U2
 * fence follows its own read of that CAS's LINKED (model/wakeup.pml found
 * a call stranded there with an acquire CAS, which C11 and weaker CPUs than
 * x86 and ARMv8 allow). Or U2' reads a C' after P: C' follows P's head
 * store in the owner's order, and U2' acquires it, so U3 sees the head;
 * the call that stored C' fences after it, and is argued as any fenced
 * call. C' needs its release all the same: where U2' is the offline
 * close's, a call's R2 that reads IDLE does not cover the calls before
 * it, since its doorbell, refused by the closed callq, settles only its
 * own entry; a relaxed C' seen before P's head store let the close run
 * the ring without P, for good (model/wakeup.pml, mutant unmarkrelaxed).
 *
 * The calls after C are fenced again, and the one that ends a run of
 * XC_RING_FENCED_RUN fenced rides stores F1 (ring.h): so a worker pays a
 * membarrier only for rings that took more calls than that between a
 * doorbell and its sleep, where their fences would have cost more than
 * it. A short burst (a batch and its answer, a few calls a link) pays its
 * fences; a stream pays a membarrier a sleep. Which calls store F1 is no
 * part of the argument above, which takes any fenced call to.
 *
 * Expedited membarriers are serialised machine-wide by the kernel (a
 * global mutex), and a worker queued behind another's runs no calls: a
 * worker that finds one of this process under way polls on and tries
 * again (xc_idle_wait), as Seastar's reactors do before they sleep. Where membarrier is refused (an old kernel, seccomp) or
 * XC_ABLATE_MEMBARRIER is set, no owner ever stores F1, and every call
 * fences. A ring that changes owner starts fenced (xc_ring_get_slow).
 *
 * Whether a fenced call stores F1 is xc_ring_asym's (barrier.c: whether
 * membarriers are cheap here), which may turn false at any moment; so a
 * marked ring's calls read it too, the first to find it false stores C'
 * and fences, and the calls after it fence. Without C', a ring that its
 * worker keeps at every release (U3 finds calls left: a stream that
 * outruns it) rings no doorbell and stays marked, its worker paying a
 * slow membarrier at every release while its owner skips R1'. With it, a
 * mark costs two membarriers at most once the flag is false: one at a
 * release that keeps the ring for calls made before, one at the release
 * that lets it go (model/wakeup.pml, VERDICT).
 *
 * In a 16-vCPU TCG guest a membarrier takes 0.4 s on average (every vCPU
 * must take the IPI). Asked at every sleep and waited for, it made the
 * stress test there 8-20x slower than the fences (161-405 s against 14-22
 * s); asked only after a burst and never waited for, the same test took
 * 38 s, and 53 s with the OS taking CPUs away (tests/scale).
 *
 * The worker never unlinks while it may run calls soon: it holds its rings
 * while polling, so a stream of calls costs no doorbell at all, and a
 * worker that sleeps without a ring held is covered by S1-S3 and W1-W4 alone.
 *
 * The worker's POLLING stores are relaxed: they only weaken a sender's duty
 * (no syscall), and the worker's W1 + W2 still follow before any sleep. Its
 * RUNNING store is seq_cst for urgent calls only (xc_idle_state_set, urgent.c).
 *
 * A worker idle or blocked in a call's wait (run/wait.c) sleeps through
 * xc_idle_wait below, by W1-W4, and a completion wakes a waiting worker
 * with xc_kick (completion.c).
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
#include "proto/urgent.h"
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
	xc_futex_wake(&c->mbox.idle, 1);
	xc_stat_inc_shared(&c->sent.kicks_sent);
	xc_trace(XC_EV_KICK_SENT, c->life.cpu, 0, NULL);
}

/* An attached thread sleeps in its own loop: its eventfd ends that sleep. */
static void kick_fd(struct xc_cpu *c)
{
	uint64_t one = 1;

	/* the fd is open: its owner closes it only after fd_kicks_done counts this write */
	while (write(c->sent.kick_fd, &one, sizeof(one)) < 0 && errno == EINTR)
		;
	/* release: the write happens before the owner that sees the count closes or reads */
	atomic_fetch_add_explicit(&c->sent.fd_kicks_done, 1, memory_order_release);
	xc_stat_inc_shared(&c->sent.kicks_sent);
	xc_trace(XC_EV_KICK_SENT, c->life.cpu, 0, NULL);
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
			if (!atomic_compare_exchange_strong_explicit(&c->mbox.idle, &s, XC_IDLE_WAKING,
								     memory_order_seq_cst,
								     memory_order_seq_cst))
				continue;
			if (s == XC_IDLE_SLEEPING_FD)
				kick_fd(c);
			else
				kick_futex(c);
			/* relaxed: publishes nothing; fails harmlessly if the worker moved on */
			s = XC_IDLE_WAKING;
			atomic_compare_exchange_strong_explicit(&c->mbox.idle, &s, XC_IDLE_WOKENUP,
								memory_order_relaxed,
								memory_order_relaxed);
			return;
		case XC_IDLE_WAKING:
		case XC_IDLE_WOKENUP:
			if (xc_unlikely(xc_ablated(XC_ABLATE_FREERIDE))) {
				kick_futex(c);
				return;
			}
			xc_stat_inc_shared(&c->sent.free_rides);
			xc_trace(XC_EV_FREE_RIDE, c->life.cpu, 0, NULL);
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
		c->worker.fd_kicks_seen++;
	if (c->worker.fd_kicks_drained == c->worker.fd_kicks_seen)
		return;
	/* acquire: the writes it counts happened before the read below */
	uint64_t done = atomic_load_explicit(&c->sent.fd_kicks_done, memory_order_acquire);

	(void)!read(c->sent.kick_fd, &val, sizeof(val));	/* EAGAIN: the loop read it, or it is on its way */
	if (done == c->worker.fd_kicks_seen)
		c->worker.fd_kicks_drained = done;
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
	atomic_store_explicit(&c->mbox.idle, XC_IDLE_SLEEPING_FD, memory_order_seq_cst);
	if (ready(c, ctx, false)) {	/* W2 */
		/* seq_cst: as W4; a sender may have claimed a kick meanwhile */
		fd_settle(c, atomic_exchange_explicit(&c->mbox.idle, XC_IDLE_RUNNING, memory_order_seq_cst));
		return false;
	}
	xc_stat_inc_own(&c->worker.sleeps);
	xc_trace(XC_EV_SLEEP, -1, 0, NULL);
	xc_tls.in_fd_sleep = 1;
	return true;
}

/* xc_fd_sleep_end() - W4 after the attached thread's own wait; a no-op when RUNNING. Owner only. */
void xc_fd_sleep_end(struct xc_cpu *c)
{
	/* relaxed: only this thread stores RUNNING, and senders never move it on */
	uint32_t old = atomic_load_explicit(&c->mbox.idle, memory_order_relaxed);

	xc_tls.in_fd_sleep = 0;
	if (old != XC_IDLE_RUNNING) {
		/* W4, seq_cst: leave SLEEPING_FD/WAKING/WOKENUP; senders from now on skip the syscall */
		old = atomic_exchange_explicit(&c->mbox.idle, XC_IDLE_RUNNING, memory_order_seq_cst);
		xc_stat_inc_own(&c->worker.wakeups);
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
	while (atomic_load_explicit(&c->sent.fd_kicks_done, memory_order_acquire) != c->worker.fd_kicks_seen)
		sched_yield();
}

/* After a push: kick if the queue went from empty to non-empty. */
void xc_call_kick(struct xc_cpu *c, int pushed, bool urgent)
{
	if (pushed == XC_PUSH_WAS_EMPTY || (pushed == XC_PUSH_NONEMPTY && xc_ablated(XC_ABLATE_COALESCE))) {
		if (urgent)
			xc_kick_urgent(c);
		else
			xc_kick(c);
	} else if (pushed == XC_PUSH_NONEMPTY) {
		xc_stat_inc_shared(&c->sent.kicks_coalesced);
		xc_trace(XC_EV_KICK_COALESCED, c->life.cpu, 0, NULL);
	}
}

/* ---- the worker's side: the idle wait (W1-W4) ---- */

/* Adaptive poll window bounds, after the kernel's cpuidle-haltpoll governor. */
#define XC_POLL_MAX_NS        200000L
#define XC_POLL_GROW_START_NS  50000L
/* A worker about to sleep polls this long when another's membarrier is under way (barrier.c). */
#define XC_RELEASE_RETRY_NS    20000L

/* haltpoll's rule: grow after an idle period the window could have covered, shrink after a long one. */
static void poll_window_adapt(struct xc_cpu *c, uint64_t idle_ns)
{
	long w = atomic_load_explicit(&c->worker.poll_ns, memory_order_relaxed);

	if (xc_rt.cfg.poll_ns != XC_POLL_ADAPTIVE)
		return;
	if ((long)idle_ns > w && (long)idle_ns <= XC_POLL_MAX_NS) {
		w = w * 2 < XC_POLL_GROW_START_NS ? XC_POLL_GROW_START_NS : w * 2;
		if (w > XC_POLL_MAX_NS)
			w = XC_POLL_MAX_NS;
	} else if ((long)idle_ns > XC_POLL_MAX_NS) {
		w /= 2;
	}
	atomic_store_explicit(&c->worker.poll_ns, w, memory_order_relaxed);
}

/*
 * A spin's yield that returns this late gave the CPU to another thread:
 * the CPU is shared with one that wants it. A yield with nothing else
 * runnable returns in about a microsecond.
 */
#define XC_YIELD_LATE_NS        50000L
/* The window stays shut this long after the first such yield, doubling to the most. */
#define XC_POLL_QUIET_MIN_NS  1000000L
#define XC_POLL_QUIET_MAX_NS 256000000L

/*
 * A poll's yield came back late (above): end the poll, so that the worker
 * sleeps where a sender's kick wakes it. A POLLING worker gets no kick, and
 * beside a thread that keeps its CPU busy each yield waits out that
 * thread's whole slice (milliseconds): a call sent meanwhile waited as long
 * (`xcall-bench idle --period-us 50` beside a busy loop on the target's
 * CPU, adaptive: 3.9 ms a call at the median). The window then stays shut
 * for a while (xc_poll_window), longer each time in a row, so that a CPU
 * shared for good costs a late yield rarely; a prompt yield ends the run.
 * The poll's yield (internal.h, spins that yield), timed when @timed (a
 * window's poll): true if it came back late, and the poll must end.
 */
static bool poll_cut(struct xc_cpu *c, bool timed)
{
	uint64_t before = timed ? xc_now_ns() : 0, now, quiet;
	uint32_t k;

	sched_yield();
	if (!timed)
		return false;
	now = xc_now_ns();
	if (now - before <= XC_YIELD_LATE_NS) {
		c->worker.poll_cuts = 0;	/* the CPU was free a moment ago */
		return false;
	}
	k = c->worker.poll_cuts < 8 ? c->worker.poll_cuts++ : 8;
	quiet = (uint64_t)XC_POLL_QUIET_MIN_NS << k;
	c->worker.poll_quiet_until = now + (quiet > XC_POLL_QUIET_MAX_NS ? XC_POLL_QUIET_MAX_NS : quiet);
	return true;
}

bool xc_poll_quiet(struct xc_cpu *c)
{
	if (xc_now_ns() < c->worker.poll_quiet_until)
		return true;
	c->worker.poll_quiet_until = 0;
	return false;
}

/*
 * Spin until ready(), the window ends (window < 0: never) or the deadline
 * passes (0: none). The clock is read only every 32 spins, so a call that
 * arrives quickly costs no clock read at all; *start is the first reading.
 *
 * ready() may run a call itself, without leaving the loop (XC_READY_RAN:
 * the slot's call, slot.c): its caller spins on the round trip, and the way
 * out to the call loop and back would be part of it. An idle worker runs
 * calls while polling anyway (seed 000), and a waiting one runs its own
 * incoming calls; the window then counts again from the call's end.
 */
static bool poll_until(struct xc_cpu *c, xc_ready_fn ready, void *ctx, long window_ns,
		       uint64_t deadline_ns, uint64_t *start)
{
	unsigned spins = 0, yield_left = xc_spin_yield_start();

	for (;;) {
		uint64_t now;
		int r = ready(c, ctx, true);

		if (r == XC_READY_RAN) {
			xc_give_way(c);
			spins = 0;
			yield_left = xc_spin_yield_start();
			*start = 0;
			continue;
		}
		if (r)
			break;
		xc_cpu_relax();
		if (xc_unlikely(--yield_left == 0)) {
			yield_left = xc_spin_yield_start();
			if (poll_cut(c, window_ns >= 0))
				return ready(c, ctx, false);	/* a late yield ends a window's poll */
		}
		if ((++spins & 31) || (window_ns < 0 && !deadline_ns))
			continue;
		now = xc_now_ns();
		if (!*start)
			*start = now;
		if ((window_ns >= 0 && now - *start >= (uint64_t)window_ns) ||
		    (deadline_ns && now >= deadline_ns))
			return ready(c, ctx, false);
	}
	return true;
}

/*
 * xc_idle_wait() - the worker @c waits, polling then sleeping, until ready()
 * or the deadline (0: none); returns whether ready. @sleep_limit_ns (0:
 * none) bounds one sleep without a deadline: a sleep that runs out returns
 * false, so that the worker can look at its CPU (follow.c), and the window
 * is not adapted to it. Called only by @c's own worker, RUNNING (a wait inside
 * a call or work item) or POLLING (its idle loop); it leaves the state as it
 * found it. ready() must read with seq_cst (W2) what senders publish before
 * they kick; it may run a call only when its last argument allows it. The
 * steps W1-W4 are the wakeup protocol's, argued with the senders' in wake.c.
 */
bool xc_idle_wait(struct xc_cpu *c, xc_ready_fn ready, void *ctx, long window_ns,
		  uint64_t deadline_ns, long sleep_limit_ns)
{
	/* relaxed: only this thread writes RUNNING or POLLING */
	uint32_t prev = atomic_load_explicit(&c->mbox.idle, memory_order_relaxed);
	uint64_t start = 0;
	bool ok = true;

	/*
	 * relaxed: POLLING and RUNNING impose the same duty on kicks. Stored
	 * only if it changes: the word shares the mailbox line the worker polls,
	 * and a store would take that line from the senders (slot.c).
	 */
	if (prev != XC_IDLE_POLLING)
		atomic_store_explicit(&c->mbox.idle, XC_IDLE_POLLING, memory_order_relaxed);
	if (c->worker.rings_held)
		xc_barrier_probe(c);	/* once per runtime: may owners skip R1'? (barrier.c) */
	if (window_ns && poll_until(c, ready, ctx, window_ns, deadline_ns, &start))
		goto out;
	if (!start)
		start = xc_now_ns();
	/* U1-U3 (ring.c): a ring still held has calls, and W2 finds them */
	while (xc_rings_release(c)) {
		uint64_t again = 0;

		/* another worker's membarrier is under way (barrier.c): poll on a while, then try again */
		if (poll_until(c, ready, ctx, XC_RELEASE_RETRY_NS, deadline_ns, &again))
			goto out;
		if (deadline_ns && xc_now_ns() >= deadline_ns) {
			ok = false;
			goto out;
		}
	}

	for (;;) {
		struct timespec rel, *timeout = NULL;

		/* W1, seq_cst: ordered before the re-check W2 */
		atomic_store_explicit(&c->mbox.idle, XC_IDLE_SLEEPING, memory_order_seq_cst);
		if (ready(c, ctx, false))	/* W2 */
			break;
		if (deadline_ns) {
			uint64_t now = xc_now_ns();

			if (now >= deadline_ns) {
				ok = false;
				break;
			}
			rel.tv_sec = (time_t)((deadline_ns - now) / 1000000000u);
			rel.tv_nsec = (long)((deadline_ns - now) % 1000000000u);
			timeout = &rel;
		} else if (sleep_limit_ns) {
			rel.tv_sec = sleep_limit_ns / 1000000000L;
			rel.tv_nsec = sleep_limit_ns % 1000000000L;
			timeout = &rel;
		}
		xc_stat_inc_own(&c->worker.sleeps);
		xc_trace(XC_EV_SLEEP, -1, 0, NULL);
		bool timed_out = xc_futex_wait(&c->mbox.idle, XC_IDLE_SLEEPING, timeout) == -ETIMEDOUT; /* W3 */
		/* W4, seq_cst: leave SLEEPING/WAKING/WOKENUP; senders from now on skip the syscall */
		atomic_exchange_explicit(&c->mbox.idle, XC_IDLE_POLLING, memory_order_seq_cst);
		xc_stat_inc_own(&c->worker.wakeups);
		xc_trace(XC_EV_WAKE, -1, 0, NULL);
		if (ready(c, ctx, false))
			break;
		if (timed_out && !deadline_ns) {
			ok = false;	/* the sleep limit: the caller looks around and comes back */
			goto out;
		}
	}
	poll_window_adapt(c, xc_now_ns() - start);
out:
	/* relaxed: only this thread writes RUNNING or POLLING, and senders only move SLEEPING on */
	if (atomic_load_explicit(&c->mbox.idle, memory_order_relaxed) != prev)
		xc_idle_state_set(c, prev);
	return ok;
}
