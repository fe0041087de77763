// SPDX-License-Identifier: MIT
/*
 * worker.c - the life of one worker thread: boot, the task loop, the idle
 * loop, and going offline.
 *
 * Task loop ("schedule"): run pending calls, then the next work item; when
 * there is neither, enter the idle loop. Idle loop: wait (poll, then sleep)
 * until something arrives. A wakeup that brought only calls is handled
 * inside the idle loop, which goes on polling (seed 000's TIF_NOTIFY_IPI:
 * no pass through the scheduler); work items or a hotplug request make the
 * worker leave idle for the task loop. It does not yield there, as the
 * kernel's schedule_idle() passes through the scheduler: beside a thread
 * that keeps the CPU busy a yield waits out that thread's slice, before
 * every work item. Only XC_ABLATE_NOTIFY makes that pass, at every wakeup.
 */
#include "base/internal.h"
#include "base/thread.h"
#include "proto/wake.h"
#include "run/wait.h"
#include "run/run.h"
#include "run/slot.h"
#include "cpu/follow.h"
#include "proto/ring.h"
#include "run/ring_run.h"
#include "run/work.h"
#include "proto/pool.h"
#include "cpu/worker.h"
#include "cpu/hotplug.h"
#include "base/futex.h"
#include "base/trace.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * The idle poll's pass when it holds rings (ready_idle_straight). Nothing
 * new in them: the rest of W2, a pass no dearer than one without rings (a
 * spin yields after a count of passes, not a time: xc_spin_pass). Calls in
 * them: run here, without leaving the poll, while nothing must go first
 * (urgent calls, the OS check, task work), so that a stream of nowait calls
 * costs no pass through the idle loop each. The rings are taken in turn,
 * each look beginning where the last run stopped (xc_rings_next_pending,
 * xc_rings_run_streak), and a pass after a run looks at them all before the
 * spin goes on (poll_until). Not with XC_ABLATE_NOTIFY,
 * where calls make the worker leave idle. Out of line: the slot's straight
 * path before it keeps its frame empty.
 */
static __attribute__((noinline)) int ready_rings(struct xc_cpu *c)
{
	struct xc_ring *first = xc_rings_next_pending(c);

	if (!first)
		return xc_calls_pending_unheld(c) || xc_task_pending(c) || xc_os_suspect(c);
	/* relaxed: urgent calls only jump the order; the call loop's own loads order the take */
	if (xc_ablated(XC_ABLATE_NOTIFY) || xc_llist_nonempty(&c->mbox.urgentq, memory_order_relaxed) ||
	    xc_os_suspect(c) || xc_task_pending(c))
		return XC_READY_YES;
	if (xc_rings_run_streak(c, first))
		return XC_READY_RAN;
	return xc_calls_pending_unheld(c);
}

/*
 * What the idle poll asks at each look (xc_idle_wait): the one body of both
 * ways, @traced a constant in each. A slot call published alone runs right
 * here, without leaving the poll: untraced, on the slot's straight path
 * (slot.c), the OS check of the spin before standing for the one before it
 * runs (the one after it follows the completion); traced, on the general
 * one, unless urgent calls or the OS check must go first. Untraced, calls
 * in the rings it holds run here too (ready_rings); traced, they make the
 * poll return to the idle loop, which runs them.
 */
static inline __attribute__((always_inline)) int ready_idle_in(struct xc_cpu *c, bool may_run,
								bool traced)
{
	/* seq_cst: a W2 re-check load (wake.c) that also acquires the slot's fields */
	uint32_t w = atomic_load_explicit(&c->mbox.slot.done.word, memory_order_seq_cst);

	/* published, the waiter spinning or asleep; neither closed nor nested (slot.c) */
	if (may_run && (w & ~XC_DONE_SLEEPING) == XC_SLOT_PUBLISHED) {
		if (!traced)
			return xc_slot_run_idle(c);
		if (xc_slot_run_fast(c))
			return XC_READY_RAN;
	}
	if (!traced && may_run && c->worker.rings_held)
		return ready_rings(c);
	return xc_w2_pending(c, true) || xc_os_suspect(c);
}

static int ready_idle(struct xc_cpu *c, void *ctx, bool may_run)
{
	return ready_idle_in(c, may_run, true);
}

static int ready_idle_straight(struct xc_cpu *c, void *ctx, bool may_run)
{
	return ready_idle_in(c, may_run, false);
}

/*
 * The idle loop. Calls that arrive are run here, still POLLING (seed 000):
 * senders need no syscall meanwhile and the loop re-checks before it sleeps.
 * It runs what arrived first, then returns RUNNING if there is task work (or,
 * ablated, after any wakeup, before running anything); the task loop then
 * runs pending calls, urgent ones first, before any work. A worker that
 * finds itself on another CPU, or sleeps a whole watch period, leaves for
 * the task loop's full check before it runs anything (follow.c).
 */
static void cpu_idle(struct xc_cpu *c)
{
	long window = xc_poll_window(c);
	long watch = xc_rt.cfg.follow_os ? XC_OS_WATCH_NS : 0;
	xc_ready_fn ready = xc_tracing_on() ? ready_idle : ready_idle_straight;

	xc_idle_state_set(c, XC_IDLE_POLLING);
	for (;;) {
		if (!xc_idle_wait(c, ready, NULL, window, 0, watch)) {
			/* relaxed: this thread reads it */
			atomic_store_explicit(&c->worker.os_recheck, true, memory_order_relaxed);
			break;
		}
		window = xc_poll_window(c);
		if (xc_ablated(XC_ABLATE_NOTIFY) || xc_os_suspect(c))
			break;	/* ablated: every wakeup goes through the scheduler */
		if (xc_run_calls(c))	/* calls go before task work in any case */
			xc_give_way(c);
		if (xc_task_pending(c))
			break;
	}
	xc_idle_state_set(c, XC_IDLE_RUNNING);
}

/*
 * A CPU taken by the OS (c->offline_by_os) comes back: open it again, unless
 * the user took it offline meanwhile or the runtime is going down. Under the
 * hotplug lock, tried and never waited for: its holder may be waiting for a
 * worker that this one's calls hold up; the next park watch tries again.
 */
bool xc_taken_cpu_reopen(struct xc_cpu *c)
{
	bool run = false;

	if (pthread_mutex_trylock(&xc_rt.hotplug_lock))
		return false;
	if (c->life.user_offline) {
		c->life.offline_by_os = false;	/* the user's offline now: xc_cpu_online brings it back */
	} else if (atomic_load_explicit(&xc_rt.state, memory_order_acquire) == XC_RT_UP &&
		   atomic_load_explicit(&c->life.park, memory_order_acquire) == XC_PARK_WAIT) {
		xc_cpu_open(c);
		c->life.offline_by_os = false;
		run = true;
	}
	pthread_mutex_unlock(&xc_rt.hotplug_lock);
	return run;
}

/* Parked: follow the OS; true if the CPU came back and this worker opened it again. */
static bool park_watch(struct xc_cpu *c)
{
	/* relaxed: only this thread writes it */
	if (atomic_load_explicit(&c->life.taken, memory_order_relaxed) != XC_TAKEN_NONE) {
		if (!xc_os_come_back(c))
			return false;
	} else if (xc_os_check(c)) {
		xc_report("CPU %d: taken away while offline: %s",
			  c->life.cpu, xc_taken_name(atomic_load_explicit(&c->life.taken, memory_order_relaxed)));
		return false;
	}
	return c->life.offline_by_os && xc_taken_cpu_reopen(c);
}

/*
 * Wait while parked (offline, or not yet online); returns XC_PARK_RUN or
 * XC_PARK_EXIT. A request may reach a parked worker: an exit, or an offline
 * that raced the OS taking the CPU (already offline: it completes at once).
 * Following the OS, it looks at its CPU every park watch period.
 */
static uint32_t cpu_park(struct xc_cpu *c)
{
	struct timespec watch = { 0, XC_OS_PARK_WATCH_NS };

	for (;;) {
		/* acquire: pairs with xc_cpu_online's release, so the reopened queues are seen */
		uint32_t p = atomic_load_explicit(&c->life.park, memory_order_acquire);
		/* acquire: the request's setup (offline_done) is visible */
		uint32_t ctl = atomic_load_explicit(&c->life.ctl, memory_order_acquire);

		if (p != XC_PARK_WAIT)
			return p;
		if (ctl == XC_CTL_EXIT)
			return XC_PARK_EXIT;
		if (ctl == XC_CTL_OFFLINE) {
			/* relaxed: read again only after the next request's setup */
			atomic_store_explicit(&c->life.ctl, XC_CTL_NONE, memory_order_relaxed);
			xc_complete(&c->life.offline_done);
			continue;
		}
		if (xc_rt.cfg.follow_os && park_watch(c))
			return XC_PARK_RUN;
		xc_futex_wait(&c->life.park, XC_PARK_WAIT, xc_rt.cfg.follow_os ? &watch : NULL);
	}
}

/* Refuse new calls and work, run everything queued, mark the CPU offline. */
void xc_cpu_drain(struct xc_cpu *c)
{
	xc_drain_calls(c);
	xc_drain_work(c);
	/* release: the drain's effects happen before anyone sees the CPU offline */
	atomic_store_explicit(&c->life.online, false, memory_order_release);
}

/* Parked until online again; returns false when the worker must exit. */
static bool cpu_park_offline(struct xc_cpu *c)
{
	bool run = cpu_park(c) == XC_PARK_RUN;

	if (run) {
		c->life.offline_by_os = false;	/* online again, whoever opened it */
		xc_trace(XC_EV_ONLINE, c->life.cpu, 0, NULL);
	}
	return run;
}

/*
 * Serve an offline request: drain, offline, complete it. A worker then parks;
 * an attached thread (attach.c) loops on with its queues closed.
 */
void xc_cpu_offline_served(struct xc_cpu *c)
{
	xc_cpu_drain(c);
	xc_trace(XC_EV_OFFLINE, c->life.cpu, 0, NULL);
	/* relaxed: both are read only after offline_done's completion orders them */
	atomic_store_explicit(&c->life.park, XC_PARK_WAIT, memory_order_relaxed);
	atomic_store_explicit(&c->life.ctl, XC_CTL_NONE, memory_order_relaxed);
	xc_complete(&c->life.offline_done);
}

/* Returns false when the worker must exit. */
static bool cpu_offline(struct xc_cpu *c)
{
	xc_cpu_offline_served(c);
	return cpu_park_offline(c);
}

/*
 * The OS took @c's CPU (follow.c): offline in libxcall, as by hotplug. What
 * was queued runs here, wherever the thread now is, counted as displaced,
 * and one line says so. A worker then parks until the CPU comes back; an
 * attached thread (attach.c) loops on, and libxcall never moves it.
 */
void xc_cpu_taken_drain(struct xc_cpu *c)
{
	/* relaxed: counters and this thread's own word */
	uint64_t before = atomic_load_explicit(&c->worker.displaced, memory_order_relaxed);
	int taken = atomic_load_explicit(&c->life.taken, memory_order_relaxed);
	int where = xc_running_cpu();

	/*
	 * relaxed: before the drain's release of online == false, which an
	 * exiting xc_exit reads before it stores PARK_EXIT: that store wins.
	 */
	atomic_store_explicit(&c->life.park, XC_PARK_WAIT, memory_order_relaxed);
	c->life.offline_by_os = true;
	xc_cpu_drain(c);
	xc_trace(XC_EV_OFFLINE, c->life.cpu, 0, NULL);
	xc_report("CPU %d: offline: %s; %llu calls and work items ran displaced (the %s is on CPU %d); %s",
		  c->life.cpu, xc_taken_name(taken),
		  (unsigned long long)(atomic_load_explicit(&c->worker.displaced, memory_order_relaxed) - before),
		  c->life.attached ? "attached thread" : "worker", where,
		  c->life.attached ? "online again once the thread runs pinned there (libxcall never moves it)"
			      : "online again when the OS gives it back");
}

/* Returns false when the worker must exit. */
static bool cpu_taken(struct xc_cpu *c)
{
	xc_cpu_taken_drain(c);
	return cpu_park_offline(c);
}

static void worker_loop(struct xc_cpu *c)
{
	for (;;) {
		/* acquire: the request's setup (offline_done) is visible */
		uint32_t ctl = atomic_load_explicit(&c->life.ctl, memory_order_acquire);

		if (ctl == XC_CTL_EXIT) {
			xc_cpu_drain(c);
			return;
		}
		if (ctl == XC_CTL_OFFLINE) {
			if (!cpu_offline(c))
				return;
			continue;
		}
		if (xc_unlikely(xc_os_suspect(c))) {
			/* relaxed: this thread's own flag */
			atomic_store_explicit(&c->worker.os_recheck, false, memory_order_relaxed);
			if (xc_rt.cfg.follow_os && xc_os_check(c)) {
				if (!cpu_taken(c))
					return;
				continue;
			}
		}
		xc_run_calls(c);
		if (xc_run_one_work(c))
			continue;
		cpu_idle(c);
		if (xc_ablated(XC_ABLATE_NOTIFY))
			sched_yield();	/* the scheduler's pass, which seed 000 saves */
	}
}

/* The creator's signal mask is inherited: let urgent calls in. */
static void unblock_urgent_signal(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, xc_rt.cfg.urgent_signal);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

static void boot_put_cancelled(void *b)
{
	xc_boot_put(b);
}

/*
 * In the cpu_init hook of the thread whose handshake is @b: its CPU, or -1
 * once the bringup gave up on it (a later runtime may have given that CPU
 * another thread). Acquire: the starter's CAS to ABANDONED is read as made.
 */
int xc_boot_cpu(struct xc_boot *b)
{
	return atomic_load_explicit(&b->state, memory_order_acquire) == XC_BOOT_ABANDONED ? -1 : b->cpu;
}

/* Run the cpu_init hook, the one place a worker may be cancelled (a bringup that timed out). */
static int run_init_hook(struct xc_boot *b)
{
	int r;

	pthread_cleanup_push(boot_put_cancelled, b);
	pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
	struct xc_user_mark m = xc_user_in(XC_USER_BOOT, false);

	xc_tls.boot = b;	/* xc_this_cpu(): the thread is no CPU's worker until its report */
	/* relaxed: for a late report only, as the id */
	atomic_store_explicit(&b->in_hook, true, memory_order_relaxed);
	r = b->cpu_init(b->cpu, b->cpu_init_arg);
	xc_tls.boot = NULL;
	xc_user_out(XC_USER_BOOT, false, m);
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	pthread_cleanup_pop(0);
	return r ? (r < 0 ? r : -EIO) : 0;
}

/*
 * Report to the starter: one CAS from STARTING, against the starter's to
 * ABANDONED. False if the bringup gave up on this thread: it must leave
 * without touching its CPU, which a later xc_init may have reset already.
 */
static bool boot_report(struct xc_boot *b, int err)
{
	int expect = XC_BOOT_STARTING;
	bool mine;

	b->err = err;
	/* release: err and tid (stored at the thread's start) to the starter that reads the state with acquire */
	mine = atomic_compare_exchange_strong_explicit(&b->state, &expect,
						       err ? XC_BOOT_FAILED : XC_BOOT_ALIVE,
						       memory_order_release, memory_order_relaxed);
	xc_boot_put(b);
	return mine;
}

/*
 * "xcall/N": the name ps, top, /proc/PID/task/TID/comm, debuggers and a
 * Rust panic message show. The thread is the CPU's for the runtime's life
 * (xcall.h, "worker threads"), so the name is set once. 16 bytes with the
 * NUL at most: "xcall/" and any CPU id below CPU_SETSIZE fit.
 */
static void worker_name(int cpu)
{
	char name[16];

	snprintf(name, sizeof(name), "xcall/%d", cpu);
	pthread_setname_np(pthread_self(), name);	/* a name is a courtesy: no error to act on */
}

void *xc_worker_main(void *arg)
{
	struct xc_boot *b = arg;
	struct xc_cpu *c = b->c;	/* untouched until the report (boot_report) */
	const char *failed = NULL;
	bool os_offline = false;
	int err;

	/* relaxed: for a late report only (boot_late, bringup.c); the report publishes the id */
	atomic_store_explicit(&b->tid, (int)syscall(SYS_gettid), memory_order_relaxed);
	/* only the cpu_init hook may be cancelled */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	worker_name(b->cpu);	/* before the cpu_init hook, which may look */
	xc_inside_store(XC_INSIDE_CODE);	/* a worker runs libxcall's code, but for the application's functions; never listed (inflight.c) */
	err = xc_pin_self(b->cpu);
	if (err && b->follow_os && xc_os_cpu_offline(b->cpu)) {
		/* offline in the OS now: the worker starts parked, as if the OS took it (cpu_park) */
		err = 0;
		os_offline = true;
	} else if (err) {
		failed = "cannot pin the worker";
	}
	if (!err) {
		err = xc_pool_prepare();
		if (err)
			failed = "no memory for call descriptors";
	}
	if (!err && b->cpu_init)
		err = run_init_hook(b);
	if (!boot_report(b, err))
		return NULL;	/* abandoned: the bringup failed without us long ago */
	/*
	 * from here this thread is the CPU's: the starter joins it. Nothing of
	 * the CPU is written before: a thread abandoned in its hook would write
	 * beside the next xc_init's xc_cpu_fresh.
	 */
	xc_self = c;
	xc_serve_floor_set(c);
	if (os_offline) {
		/* relaxed: this thread's own word; the starter reads offline_by_os after boot_done */
		atomic_store_explicit(&c->life.taken, XC_TAKEN_OFFLINE, memory_order_relaxed);
		c->life.offline_by_os = true;
	}
	if (failed)
		xc_report("CPU %d: %s: %s", c->life.cpu, failed, strerror(-err));
	/* before the starter can see it alive: xc_init returns with every worker's mask final */
	if (!err)
		unblock_urgent_signal();
	xc_complete(&xc_rt.boot_done);
	if (err)
		return NULL;
	if (cpu_park(c) == XC_PARK_RUN)
		worker_loop(c);
	return NULL;
}
