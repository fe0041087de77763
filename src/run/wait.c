// SPDX-License-Identifier: MIT
/*
 * wait.c - waiting for a call to complete: the waiter's spin, then sleep,
 * serving its own CPU's calls meanwhile if it is a worker (the completion
 * it waits on is proto/completion.c's; a worker sleeps through the idle
 * wait of proto/wake.c), with the deadlock look and the stuck reports.
 *
 * A waiting call's path crosses its files in one direction: call.c sends,
 * slot.c (or ring.c) hands off and spins, this file waits, run.c serves.
 * Nothing here calls back into a sender's file, and the serve enters the
 * slot's and the rings' run sides only when they hold calls (run.c).
 *
 * A worker never blocks for long on anything without running its own CPU's
 * calls meanwhile (xc_wait_serve): two workers that wait on each other, or a
 * worker that waits for a descriptor or a lock held by one that waits on it,
 * would deadlock otherwise.
 *
 * == Serving while waiting ==
 *
 * A call served inside a wait is any call: it may call the CPU the waiter
 * is calling, through the same ring, pool or lock. So a wait that serves
 * holds no half-done operation that a served call can reach: it finishes
 * or undoes its operation before it serves, or reads its state again
 * after. Every such wait serves through xc_wait_serve / xc_wait_step and
 * nowhere else, and scripts/check-serving.py lists each with what it reads
 * again (the ring's head for room, the pool's lists, a trylock, a
 * completion word); a new one fails that check until it is listed. The
 * nowait call's rule (ring.c, "Two rules") keeps the list short: a nowait
 * call waits only for room in its own ring or a descriptor of its own pool,
 * never for a target's close.
 *
 * No wait serves inside an attached thread's announced sleep (between a
 * xc_worker_sleep_begin() that said sleep and its end, xc_in_fd_sleep(): a
 * signal handler that lands before the loop's own wait, or a call it runs
 * inline). A serve there runs the CPU's calls and takes its doorbells
 * (its rings held and linked) behind the loop, which has announced that it
 * is about to block and runs its calls only at its next xc_poll(). So
 * every wait refuses there instead: a waiting call, hotplug and xc_poll() with
 * -EDEADLK, a nowait call -EDEADLK for room in a full ring and -ENOMEM for
 * a descriptor; and xc_wait_serve() serves nothing there, as a backstop.
 *
 * Serving nests: a served call that waits serves in turn, one frame of
 * each on the worker's stack per level, and the next call in its queue may
 * be one more such call (a burst of nowait calls whose functions each make
 * a waiting call nests as deep as the burst is long; so does an
 * application's recursion of waiting calls between two CPUs). Below its
 * thread's serve floor (three quarters of its stack used, xc_serve_floor_set)
 * a wait runs only what cannot nest far: urgent calls, which never wait,
 * and the slot's call, one level at most, since its claim is held while it
 * runs (slot.c). Every waiting call queued in its rings is refused with
 * -ELOOP instead, even one behind nowait calls (ring.c, "Below the floor"):
 * its sender may be what the nest waits for, so it must not wait for the
 * nest to unwind, and running it would nest once more. The refusal is
 * eager: the call need not be part of a cycle. Nowait and async calls stay
 * queued and run once the nest unwinds, in their order; a sender that finds
 * its ring to this CPU full gets -ELOOP too, since only the unwinding makes
 * room (worker.deep, proto/ring.c xc_ring_room). So no wait hangs,
 * and no stack overflows, for its depth: the application sees -ELOOP where
 * its recursion went too deep. Such a wait never sleeps: senders ride on
 * the rings it holds (entries it will not run keep them held) without a
 * kick, so it polls, and serves again only when something new came
 * (ready_done). Serving on stacks of its own instead (a fiber per nest
 * level) would only move the bound, needs a context switch per
 * architecture and annotations for the sanitizers, and still needs this
 * errno.
 */
#include "base/internal.h"
#include "proto/wake.h"
#include "proto/pool.h"
#include "run/wait.h"
#include "run/run.h"
#include "run/slot.h"
#include "run/stuck.h"
#include "base/futex.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>

__xc_tls bool xc_hotplug_held;

/* A waiting non-worker spins this long before it sleeps. */
#define XC_WAITER_SPIN_NS      20000L

/* Whether the calling worker's stack is past its serve floor (see "Serving while waiting"). */
static inline __attribute__((always_inline)) bool below_floor(const struct xc_cpu *self)
{
	char here;

	return xc_unlikely((uintptr_t)&here < self->worker.serve_floor);
}

/* Below the serve floor: once per runtime and CPU, say why calls are refused. */
static __attribute__((noinline, cold)) int serve_deep(struct xc_cpu *self)
{
	if (!self->worker.serve_floor_told) {
		self->worker.serve_floor_told = true;
		xc_report("CPU %d: waits nested so deep that its stack is three quarters used; "
			  "waiting calls to it get -ELOOP, and nowait calls wait (or get -ELOOP where "
			  "their ring to it is full), until the nest unwinds",
			  self->life.cpu);
	}
	return xc_run_calls_deep(self);
}

/* The one place a wait serves its own CPU's calls (see "Serving while waiting"). */
int xc_wait_serve(void)
{
	struct xc_cpu *self = xc_self;

	/*
	 * Not in an urgent function: the handler may have interrupted this
	 * worker inside its own run, and elsewhere its rules are the handler's;
	 * not inside an attached thread's announced sleep (its waits refuse
	 * there: this is their backstop).
	 */
	if (!self || xc_urgent_rules() || xc_in_fd_sleep())
		return 0;
	if (below_floor(self))
		return serve_deep(self);
	return xc_run_calls(self);
}

/*
 * The floor lies a quarter of the way from the stack's end to here: what
 * the thread has left, not its whole size. The thread library keeps the
 * thread's static TLS at the top of the stack it maps, and a TSan build's
 * takes most of a 1 MiB stack; an attached thread calls this from wherever
 * its loop stands.
 */
void xc_serve_floor_set(struct xc_cpu *c)
{
	pthread_attr_t a;
	void *addr;
	size_t size;
	char here;

	c->worker.serve_floor = 0;
	if (pthread_getattr_np(pthread_self(), &a))
		return;
	if (!pthread_attr_getstack(&a, &addr, &size) && (uintptr_t)&here > (uintptr_t)addr &&
	    (uintptr_t)&here <= (uintptr_t)addr + size)
		c->worker.serve_floor = (uintptr_t)addr + ((uintptr_t)&here - (uintptr_t)addr) / 4;
	pthread_attr_destroy(&a);
}

void xc_wait_step(void)
{
	xc_wait_serve();
	sched_yield();
}

/*
 * A nowait call waits only for resources it put in flight itself (ring.c,
 * "Two rules"): room in its own ring, a descriptor of its own pool. Each
 * look is proto's; between looks, the thread serves its own CPU.
 */
int xc_ring_wait_room(struct xc_ring *r)
{
	int err;

	while ((err = xc_ring_room(r)) == -EAGAIN)
		xc_wait_step();
	return err;
}

struct xc_call *xc_pool_wait(void)
{
	struct xc_call *call = NULL;

	while (!call && xc_pool_exhausted()) {
		xc_wait_step();
		call = xc_pool_try();
	}
	return call;
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

/* A worker's wait, as its idle wait sees it. */
struct wait_ready {
	const struct wait_ref *r;
	bool looking;		/* a deadlock look is under way, or none is to be made */
	bool deep;		/* below the serve floor: ring entries left queued are no news */
};

static int ready_done(struct xc_cpu *c, void *ctx, bool may_run)
{
	const struct wait_ready *w = ctx;

	if (may_run && xc_slot_run_fast(c))
		return XC_READY_RAN;
	/* seq_cst: a W2 re-check; an offline request is stored, then kicked: its look begins now */
	return ref_done(w->r) ||
	       (w->deep ? xc_calls_pending_unheld(c) || xc_rings_unlooked(c) : xc_w2_pending(c, false)) ||
	       (!w->looking && atomic_load_explicit(&c->life.ctl, memory_order_seq_cst) == XC_CTL_OFFLINE);
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
 * spins only. @yield_each: give way at every pass, not every ~20 us (a
 * target's worker shares this thread's CPU).
 */
static bool done_spin(const struct wait_ref *r, long budget_ns, uint64_t deadline_ns, bool yield_each)
{
	uint64_t start = 0;
	unsigned yield_left = xc_spin_yield_start();

	for (unsigned spins = 1; !ref_done(r); spins++) {
		uint64_t now;

		xc_cpu_relax();
		if (yield_each)
			sched_yield();
		else
			xc_spin_pass(&yield_left);	/* internal.h: spins that yield */
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
 * An offline request for this worker, which is blocked in a wait: it is
 * served only once the wait ends (worker.c), and its requester holds the
 * hotplug lock until then; or this thread holds the lock itself while it
 * waits (a detach's or an attached thread's exit's drain, attach.c). Two
 * workers this wait waits on may wait for that in turn, each in a serving
 * wait of hotplug.c:
 *   - the requester itself, in its offline's wait;
 *   - a worker waiting for the lock, to take some CPU offline or online.
 * Either may be waiting further up the stack of the very call this wait
 * waits for. Each says when a serve of its queue found nothing
 * (served_empty). Two such serves after this look began mean that a take
 * of its queue found nothing after this worker's calls were pushed (the
 * first may have taken before the push); if the wait is still not done,
 * its call was taken and cannot return before the request is served. Then
 * the requester's request is refused with -EDEADLK (it returns, and runs
 * the call), or the lock's waiter is told to give up with -EDEADLK
 * (lock_wait).
 *
 * Which wait for the lock it refuses: only a spin that lies above the call,
 * never one the call was taken by (it could take the lock once the call
 * returns). A wait whose serve found nothing from the second count on lies
 * above the call: the call was taken before that serve and is not done
 * after it. served_empty names that wait by its token (wait.h), and tokens
 * grow as the worker's waits begin, so every spin with that token or a
 * later one began after the call was taken. The look keeps the earliest
 * such token it has read (the proof's token): each look reads served_empty
 * again, since a spin above the call may lie below the wait that served (a
 * spin of the call's own, below a served call's spin), and it is named
 * there once it serves nothing in turn. The look reads the worker's
 * lock_wait with acquire before it finds the call not done, so the spin it
 * names began before the call completed (its word is written with release
 * after everything its thread did before, the completion too), hence while
 * the call was up: if its token is the proof's or later, it lies above the
 * call, and the look CASes that exact word to REFUSED. The CAS lands only
 * while that spin still spins at its own level: never on the spin below it
 * that a refused spin puts back, nor on a spin begun after the call. The
 * word may name a spin below the call (the wait that served was a spin
 * above it that has ended, as a refused one does): the look refuses
 * nothing then, and is proven all the same.
 *
 * Once proven, the proof holds while this wait is not done: the call is
 * still up that worker's stack, and each spin from the proof's token on
 * that it begins meanwhile is above it, so each is refused at once (a worker
 * serving a queue of calls that each want the lock would otherwise pay a
 * proof for each), each by the same reads and CAS. Tokens wrap: a
 * comparison is right while its two tokens lie fewer than 2^29 of the
 * worker's waits apart (a spin above the call ends only when a look refuses
 * it, so that is hours of them). A lock's waiter is looked at every
 * XC_DEADLOCK_LOOK_LOCK_NS. A cycle through a third CPU's wait is not seen.
 */
struct deadlock_look {
	int cpu;		/* the worker the look began with; -1 none */
	bool lock;		/* it waits for the lock, not for this worker */
	bool proven;		/* lock: this wait's call is up its stack */
	uint32_t empty0;	/* its count of empty serves then */
	uint32_t token;		/* proven: the spins from this token on lie above the call */
};

static bool waits_on(const struct xc_waitinfo *wi, int cpu)
{
	for (int i = 0; i < wi->ncpus; i++)
		if (wi->cpus[i] == cpu)
			return true;
	return false;
}

/* A worker's lock_wait, read before the look finds its call not done (see above). */
static uint32_t lock_word(int cpu)
{
	/* acquire: a spin begun after the call completed makes ref_done find it done */
	return atomic_load_explicit(&xc_cpus[cpu].life.lock_wait, memory_order_acquire);
}

/* The first worker this wait waits on that waits for the hotplug lock, its word in *word; -1 none. */
static int lock_waiter(const struct xc_waitinfo *wi, uint32_t *word)
{
	for (int i = 0; i < wi->ncpus; i++) {
		*word = lock_word(wi->cpus[i]);
		if ((*word & XC_LOCK_STATE) == XC_LOCK_SPIN)
			return wi->cpus[i];
	}
	return -1;
}

/*
 * Tell @cpu's worker to give up its wait for the hotplug lock with -EDEADLK,
 * if @word, its lock_wait as read before the look found the call not done,
 * is a spin from the proof's token on: it lies above the call.
 */
static void refuse_lock(int cpu, uint32_t word, const struct deadlock_look *dl)
{
	uint32_t token = word & ~XC_LOCK_STATE;

	if ((word & XC_LOCK_STATE) != XC_LOCK_SPIN || !xc_lock_token_since(token, dl->token))
		return;
	/* relaxed: the refusal carries no data; the exact word: that spin, while it spins */
	atomic_compare_exchange_strong_explicit(&xc_cpus[cpu].life.lock_wait, &word, token | XC_LOCK_REFUSED,
						memory_order_relaxed, memory_order_relaxed);
}

/*
 * When to look again at a pending offline request, in ns from now; 0: not at
 * all. Races with the worker it looks at, which begins and ends its spins and
 * counts its empty serves meanwhile: the look reads that worker's lock_wait,
 * then its served_empty, then whether the call is done, and refuses by a CAS
 * of the word read first (see above: these reads in this order are the proof).
 */
static long deadlock_look(struct xc_cpu *self, const struct wait_ref *r, const struct xc_waitinfo *wi,
			  struct deadlock_look *dl)
{
	int from, cpu;
	bool lock = false;
	uint32_t word = 0, count;
	uint64_t empty;

	/* acquire: the requester's ctl_from and offline_done are visible */
	if (atomic_load_explicit(&self->life.ctl, memory_order_acquire) == XC_CTL_OFFLINE) {
		/* relaxed: ordered by the acquire above */
		from = atomic_load_explicit(&self->life.ctl_from, memory_order_relaxed);
		cpu = from >= 0 && waits_on(wi, from) ? from : -1;
	} else if (xc_hotplug_holding()) {
		cpu = -1;	/* a detach's drain: only a lock's waiter can wait for it */
	} else {
		*dl = (struct deadlock_look){ .cpu = -1 };
		return 0;
	}
	if (cpu < 0) {
		lock = true;
		if (dl->proven) {
			cpu = dl->cpu;	/* the proof holds for it while the call is not done */
			word = lock_word(cpu);
		} else {
			/* a worker may begin to wait for the lock at any time: look again */
			cpu = lock_waiter(wi, &word);
			if (cpu < 0) {
				*dl = (struct deadlock_look){ .cpu = -1 };
				return XC_DEADLOCK_LOOK_NS;
			}
		}
	}
	/* acquire: pairs with the worker's release after a take that found nothing */
	empty = atomic_load_explicit(&xc_cpus[cpu].life.served_empty, memory_order_acquire);
	count = XC_EMPTY_COUNT(empty);
	if (dl->cpu != cpu || dl->lock != lock) {
		*dl = (struct deadlock_look){ cpu, lock, false, count, 0 };
		return lock ? XC_DEADLOCK_LOOK_LOCK_NS : XC_DEADLOCK_LOOK_NS;
	}
	if ((!dl->proven && count - dl->empty0 < 2) || ref_done(r))
		return lock ? XC_DEADLOCK_LOOK_LOCK_NS : XC_DEADLOCK_LOOK_NS;
	if (lock) {
		/* a wait whose serve found nothing lies above the call, as do the spins after it */
		if (!dl->proven || !xc_lock_token_since(XC_EMPTY_TOKEN(empty), dl->token))
			dl->token = XC_EMPTY_TOKEN(empty);
		dl->proven = true;
		refuse_lock(cpu, word, dl);
		return XC_DEADLOCK_LOOK_LOCK_NS;	/* the request stays; the call returns once it gives up */
	}
	*dl = (struct deadlock_look){ .cpu = -1 };
	self->life.offline_result = -EDEADLK;	/* published by the completion */
	/* relaxed: read by the requester only after offline_done, as in xc_cpu_offline_served */
	atomic_store_explicit(&self->life.ctl, XC_CTL_NONE, memory_order_relaxed);
	xc_complete(&self->life.offline_done);
	return 0;
}

/*
 * A thread that is no worker waits: spin, sleep, or spin for ever, by the
 * poll policy. @own_cpu: the spin yields at every pass (below).
 */
static int plain_wait_for(const struct wait_ref *r, uint64_t deadline_ns, struct xc_stuck *st,
			  long poll, bool own_cpu)
{
	if (poll != XC_POLL_NONE && poll != XC_POLL_FOREVER &&
	    done_spin(r, XC_WAITER_SPIN_NS, deadline_ns, own_cpu))
		return 0;
	for (;;) {
		uint64_t until = st ? xc_stuck_deadline(st) : deadline_ns;

		if (poll == XC_POLL_FOREVER ? done_spin(r, -1, until, own_cpu) : !done_sleep(r, until))
			return 0;
		if (!st)
			return -ETIMEDOUT;
		xc_stuck_check(st);
	}
}

/*
 * A wait for a call to the worker of this thread's own CPU: the call runs
 * only when we give way, so the spin yields at every pass (under every
 * policy that spins: a plain spin would hold the CPU for its whole budget).
 * And the worker must give the CPU back once it ran the call, which it does
 * at once while waiters_here counts us (xc_give_way, wake.h): else it would
 * poll on until its own spin yields, about 20 us (own-CPU calls then took
 * 30 us each against 7 with a worker that sleeps at once).
 */
static int plain_wait(const struct wait_ref *r, uint64_t deadline_ns, struct xc_stuck *st,
		      const struct xc_waitinfo *wi, long poll)
{
	int cpu = poll != XC_POLL_NONE && wi ? sched_getcpu() : -1;
	struct xc_cpu *here = cpu >= 0 && waits_on(wi, cpu) ? &xc_cpus[cpu] : NULL;
	int ret;

	if (!here)
		return plain_wait_for(r, deadline_ns, st, poll, false);
	/* relaxed, both: a hint the worker reads after its runs; late, it yields at its spin's period */
	atomic_fetch_add_explicit(&here->life.waiters_here, 1, memory_order_relaxed);
	ret = plain_wait_for(r, deadline_ns, st, poll, true);
	atomic_fetch_sub_explicit(&here->life.waiters_here, 1, memory_order_relaxed);
	return ret;
}

/*
 * The one waiting loop of the library, after its first phase, a short spin
 * without the clock (xc_completion_spin, wait.h). A worker keeps running
 * the calls queued to its own CPU meanwhile, so two workers that wait on
 * each other do not deadlock. @deadline_ns (0: none) bounds the wait; @st,
 * if not NULL, reports the wait when it gets stuck.
 */
static int wait_after_spin(const struct wait_ref *r, uint64_t deadline_ns, struct xc_stuck *st,
			   const struct xc_waitinfo *wi)
{
	struct xc_cpu *self = xc_self;
	long poll = xc_rt.cfg.poll_ns;

	if (self) {
		struct deadlock_look dl = { .cpu = -1 };
		/* polls, never sleeps: see "Serving while waiting" */
		bool deep = below_floor(self);
		int ret = 0;

		if (!ask_wake(r))
			return 0;
		while (!ref_done(r)) {
			uint64_t until = st ? xc_stuck_deadline(st) : deadline_ns;
			uint64_t look = 0;

			if (xc_wait_serve())
				continue;
			long again = wi ? deadlock_look(self, r, wi, &dl) : 0;
			struct wait_ready ready = { r, !wi || again, deep };

			if (again) {
				look = xc_now_ns() + again;
				if (until && until < look)
					look = 0;
			}
			if (!xc_idle_wait(self, ready_done, &ready, deep ? -1 : xc_poll_window(self),
					  look ? look : until, 0)) {
				if (look)
					continue;	/* the look's own deadline: look again */
				if (!st) {
					ret = -ETIMEDOUT;
					break;
				}
				xc_stuck_check(st);
			}
		}
		/*
		 * Pushed while we looked idle: see xc_idle_state_set. seq_cst:
		 * xc_run_urgent's own first look, made here so that an empty
		 * queue costs no call.
		 */
		if (xc_llist_nonempty(&self->mbox.urgentq, memory_order_seq_cst))
			xc_run_urgent(self);
		return ret;
	}
	return plain_wait(r, deadline_ns, st, wi, poll);
}

/* Wait for a completion with a deadline (bringup, hotplug); 0 or -ETIMEDOUT. */
int xc_completion_wait_until(struct xc__completion *s, uint64_t deadline_ns)
{
	struct wait_ref r = { s, 0 };

	return xc_completion_spin(s, 0) ? 0 : wait_after_spin(&r, deadline_ns, NULL, NULL);
}

/* xc_completion_wait() (internal.h) once its first spin is over. */
void xc_completion_wait_rest(struct xc__completion *s, uint32_t busy, const struct xc_waitinfo *wi)
{
	struct wait_ref r = { s, busy };
	struct xc_stuck st = { .wi = wi };

	wait_after_spin(&r, 0, xc_rt.cfg.stuck_ms > 0 ? &st : NULL, wi);
	xc_stuck_end(&st);
}
