// SPDX-License-Identifier: MIT
/*
 * attach.c - an application thread as a CPU's worker: thread-per-core
 * programs keep their own thread and event loop on each CPU, and libxcall
 * runs that CPU's calls inside it.
 *
 * A CPU named in xc_opts.attach gets no libxcall thread at bringup (bringup.c)
 * and stays offline, its queues closed, until a thread pinned to it attaches.
 * From then on the thread is the worker in every respect but its loop:
 *   - xc_self names the CPU, so the thread's own calls to it run inline, its
 *     waits serve its calls (wait.c), and the urgent signal's handler runs its
 *     urgent queue when it is RUNNING (urgent.c, by c->tid);
 *   - xc_poll() from its loop is the task loop (xc_attached_poll): an
 *     offline request, the OS check, the calls, then work items; never
 *     between a sleep_begin that said sleep and its end (-EDEADLK, call.c),
 *     where a signal handler's xc_poll() could otherwise end the sleep
 *     behind the loop about to block in its own wait;
 *   - it sleeps in its own wait. xc_worker_sleep_begin() / _end() are W1+W2
 *     and W4 of the wakeup protocol with the eventfd for the futex (wake.c):
 *     a sender writes the eventfd only when the thread announced a sleep, and
 *     elides, coalesces and rides free as for any worker.
 * Detaching (or the thread's exit, by a key destructor) drains the CPU as an
 * offline does and closes the eventfd once no sender can write it (wake.c).
 *
 * Locking: attach and detach run under xc_rt.hotplug_lock, which orders them
 * against hotplug and xc_exit (which refuses while a thread is attached) and
 * guards c->attaching and c->attached. A thread runs its cpu_init hook
 * without the lock, the CPU claimed (attaching, not yet attached): an
 * xc_cpu_online meanwhile leaves the opening to its attach_finish, so the
 * CPU is opened once, by its thread (a second open would empty a callq
 * that holds linked rings, and their calls would never run). An attached
 * thread waits for that lock the way a worker does (xc_hotplug_lock):
 * serving its CPU, since the holder may be waiting for it to go offline.
 * Everything else here is the attached thread's own.
 *
 * The OS taking the CPU away (follow.c): checked in xc_poll(), never while the
 * loop sleeps. A taken CPU goes offline with a report, as a worker's does, but
 * the thread is never pinned again by libxcall: the CPU comes back once the
 * application runs the thread pinned there, seen at most once per park watch
 * period, in xc_poll().
 */
#include "base/internal.h"
#include "cpu/attach.h"
#include "proto/wake.h"
#include "run/wait.h"
#include "run/run.h"
#include "run/work.h"
#include "proto/pool.h"
#include "cpu/follow.h"
#include "cpu/hotplug.h"
#include "cpu/worker.h"
#include "run/stuck.h"
#include "base/trace.h"
#include "proto/urgent.h"
#include "base/thread.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Work items one xc_poll() runs at most, so that the loop gets back to its own events. */
#define XC_ATTACHED_WORK_BATCH 64

static bool pinned_to(int cpu)
{
	cpu_set_t m;

	return !sched_getaffinity(0, sizeof(m), &m) && CPU_COUNT(&m) == 1 && CPU_ISSET(cpu, &m);
}

static bool rt_up(void)
{
	/* acquire: the configuration and the set are visible once UP */
	return atomic_load_explicit(&xc_rt.state, memory_order_acquire) == XC_RT_UP;
}

/* The attached thread takes urgent calls; whether it had the signal blocked is put back at detach. */
static void urgent_signal_mask(struct xc_cpu *c, bool attach)
{
	sigset_t set, old;

	sigemptyset(&set);
	sigaddset(&set, xc_rt.cfg.urgent_signal);
	if (attach) {
		pthread_sigmask(SIG_UNBLOCK, &set, &old);
		c->life.urgent_was_blocked = sigismember(&old, xc_rt.cfg.urgent_signal) == 1;
	} else if (c->life.urgent_was_blocked) {
		pthread_sigmask(SIG_BLOCK, &set, NULL);
	}
}

/* Under the hotplug lock, the CPU claimed (attaching): the thread becomes its worker. */
static void attach_finish(struct xc_cpu *c, int fd)
{
	c->sent.kick_fd = fd;
	c->worker.fd_kicks_seen = c->worker.fd_kicks_drained = 0;
	/* relaxed: no sender writes it before the first SLEEPING_FD, which is seq_cst */
	atomic_store_explicit(&c->sent.fd_kicks_done, 0, memory_order_relaxed);
	c->life.tid = (int)syscall(SYS_gettid);
	c->life.thread = pthread_self();
	c->worker.in_task_loop = false;
	c->life.offline_by_os = false;
	/* relaxed: this thread's own words from now on */
	atomic_store_explicit(&c->life.taken, XC_TAKEN_NONE, memory_order_relaxed);
	atomic_store_explicit(&c->worker.os_recheck, false, memory_order_relaxed);
	atomic_store_explicit(&c->life.park, XC_PARK_WAIT, memory_order_relaxed);
	xc_idle_state_set(c, XC_IDLE_RUNNING);
	urgent_signal_mask(c, true);
	xc_thread_exit_register();	/* an exit while attached detaches (thread.c) */
	c->life.attached = true;
	/* its only open: xc_cpu_online leaves it to us while we are attaching (hotplug.c) */
	if (!c->life.user_offline) {
		xc_cpu_open(c);		/* release: tid and the rest before any push */
		xc_trace(XC_EV_ONLINE, c->life.cpu, 0, NULL);
	}
}

static int worker_attach(int cpu)
{
	struct xc_cpu *c;
	int fd, ret = 0;

	if (xc_self)
		return -EBUSY;
	if (!rt_up() || cpu < 0 || cpu >= XC_MAX_CPUS || !xc_cpus[cpu].life.present)
		return -ENXIO;
	c = &xc_cpus[cpu];
	if (!c->life.attach_cpu || !pinned_to(cpu))
		return -EINVAL;
	ret = xc_pool_prepare();	/* the urgent handler's pool, before any urgent call */
	if (ret)
		return ret;
	fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (fd < 0)
		return -errno;

	pthread_mutex_lock(&xc_rt.hotplug_lock);
	if (!rt_up())
		ret = -ENXIO;
	else if (c->life.attached || c->life.attaching)
		ret = -EBUSY;
	else
		c->life.attaching = true;	/* claimed: a second attach and xc_exit refuse from here */
	pthread_mutex_unlock(&xc_rt.hotplug_lock);
	if (ret) {
		close(fd);
		return ret;
	}
	/* the init hook as a worker runs it: pinned, xc_this_cpu() its CPU, before online */
	if (xc_rt.cfg.cpu_init) {
		struct xc_user_mark m = xc_user_in(XC_USER_HOOK, false);

		xc_self = c;
		ret = xc_rt.cfg.cpu_init(cpu, xc_rt.cfg.cpu_init_arg);
		xc_self = NULL;
		xc_user_out(XC_USER_HOOK, false, m);
		if (ret) {
			ret = ret < 0 ? ret : -EIO;
			xc_report("CPU %d: cpu_init failed on the attaching thread: %s", cpu, strerror(-ret));
		}
	}
	pthread_mutex_lock(&xc_rt.hotplug_lock);
	c->life.attaching = false;
	if (ret) {
		close(fd);
	} else {
		attach_finish(c, fd);
		xc_serve_floor_set(c);
		xc_self = c;
	}
	pthread_mutex_unlock(&xc_rt.hotplug_lock);
	return ret;
}

int xc_worker_attach(int cpu)
{
	return XC_GUARDED(worker_attach(cpu));
}

/* Serve an offline request if one is pending; true if it was. */
static bool attached_ctl(struct xc_cpu *c)
{
	bool was = c->worker.in_task_loop;

	/* acquire: the request's setup (offline_done) is visible */
	if (atomic_load_explicit(&c->life.ctl, memory_order_acquire) != XC_CTL_OFFLINE)
		return false;
	/*
	 * In the task loop while the drain runs: a work item's xc_poll() then
	 * runs calls only (call.c), and does not serve this request again,
	 * nested, completing it twice (the detach's wait serves it from outside
	 * the task loop).
	 */
	c->worker.in_task_loop = true;
	xc_cpu_offline_served(c);	/* the thread stays attached, its CPU offline */
	c->worker.in_task_loop = was;
	return true;
}

/* Whether a look at the taken CPU is due (once per park watch period). */
static bool os_watch_due(struct xc_cpu *c)
{
	uint64_t now = xc_coarse_ns();

	if (now < c->worker.os_watch_ns)
		return false;
	c->worker.os_watch_ns = now + XC_OS_PARK_WATCH_NS;
	return true;
}

/* follow.c for an attached thread: see the top of this file. */
static void attached_follow(struct xc_cpu *c)
{
	/* relaxed: this thread's own word */
	int taken = atomic_load_explicit(&c->life.taken, memory_order_relaxed);

	if (!xc_rt.cfg.follow_os)
		return;
	if (taken != XC_TAKEN_NONE || c->life.offline_by_os) {
		if (!os_watch_due(c))
			return;
		if (taken != XC_TAKEN_NONE && !xc_os_come_back(c))
			return;
		if (c->life.offline_by_os)
			xc_taken_cpu_reopen(c);	/* a held lock: the next watch tries again */
		return;
	}
	if (!xc_os_suspect(c))
		return;
	/* relaxed: this thread's own flag */
	atomic_store_explicit(&c->worker.os_recheck, false, memory_order_relaxed);
	if (!xc_os_check(c))
		return;
	c->worker.os_watch_ns = xc_coarse_ns() + XC_OS_PARK_WATCH_NS;
	/* acquire: pairs with xc_cpu_open's release */
	if (atomic_load_explicit(&c->life.online, memory_order_acquire))
		xc_cpu_taken_drain(c);
	else
		xc_report("CPU %d: taken away while offline: %s", c->life.cpu, xc_taken_name(
			  atomic_load_explicit(&c->life.taken, memory_order_relaxed)));
}

/* xc_poll() from the attached thread's own loop: its task loop, once around. */
int xc_attached_poll(struct xc_cpu *c)
{
	int n = 0;

	/* xc_poll() refuses inside an announced sleep (call.c): ending it here is behind the loop's back */
	xc_fd_sleep_end(c);	/* RUNNING already: it reads the eventfd only while a kick is owed */
	c->worker.in_task_loop = true;
	attached_ctl(c);
	attached_follow(c);
	n += xc_run_calls(c);
	for (int i = 0; i < XC_ATTACHED_WORK_BATCH && xc_run_one_work(c); i++)
		n += 1 + xc_run_calls(c);
	c->worker.in_task_loop = false;
	return n;
}

/* The attached thread's W2: what its xc_poll() would act on. */
static int ready_attached(struct xc_cpu *c, void *ctx, bool may_run)
{
	/* relaxed: this thread's own words; a taken CPU is looked at by the watch, not at every sleep */
	bool taken = c->life.offline_by_os ||
		     atomic_load_explicit(&c->life.taken, memory_order_relaxed) != XC_TAKEN_NONE;

	return xc_w2_pending(c, true) || (!taken && xc_os_suspect(c));
}

/* The calling thread's CPU if it is attached and at the top of its loop. */
static int attached_self(struct xc_cpu **out)
{
	struct xc_cpu *c = xc_self;

	if (!c || !c->life.attached)
		return -EINVAL;
	if (xc_in_call || xc_urgent_rules() || c->worker.in_task_loop)
		return -EDEADLK;
	*out = c;
	return 0;
}

static int worker_sleep_begin(void)
{
	struct xc_cpu *c;
	int ret = attached_self(&c);

	if (ret)
		return ret;
	return xc_fd_sleep_begin(c, ready_attached, NULL) ? 0 : 1;
}

int xc_worker_sleep_begin(void)
{
	return XC_GUARDED(worker_sleep_begin());
}

static int worker_sleep_end(void)
{
	struct xc_cpu *c = xc_self;

	if (!c || !c->life.attached)
		return -EINVAL;
	xc_fd_sleep_end(c);
	return 0;
}

int xc_worker_sleep_end(void)
{
	return XC_GUARDED(worker_sleep_end());
}

int xc_worker_fd(void)
{
	struct xc_cpu *c = xc_self;

	return c && c->life.attached ? c->sent.kick_fd : -EINVAL;
}

/*
 * Detach: under the lock, drain an online CPU as an offline does, then
 * close the eventfd once no sender can write it (wake.c). The lock is
 * waited for as a worker waits (xc_hotplug_lock), serving this CPU and an
 * offline request for it meanwhile.
 */
static void attached_leave(struct xc_cpu *c)
{
	xc_fd_sleep_end(c);	/* RUNNING: no sender claims a kick from here */
	while (pthread_mutex_trylock(&xc_rt.hotplug_lock)) {
		attached_ctl(c);
		xc_wait_step();	/* serves c: xc_self is c until the end of the leave */
	}
	xc_hotplug_hold(true);	/* the drain's calls: a hotplug call of theirs gets -EDEADLK */
	/* acquire: pairs with xc_cpu_open's release */
	if (atomic_load_explicit(&c->life.online, memory_order_acquire)) {
		xc_cpu_drain(c);
		xc_trace(XC_EV_OFFLINE, c->life.cpu, 0, NULL);
	}
	c->life.offline_by_os = false;
	/* relaxed: read by xc_cpu_online under the lock we hold */
	atomic_store_explicit(&c->life.taken, XC_TAKEN_NONE, memory_order_relaxed);
	xc_fd_quiesce(c);
	close(c->sent.kick_fd);
	c->sent.kick_fd = -1;
	/*
	 * Urgent senders that pushed before the drain closed the queue may still
	 * be on their way to signal this thread: wait them out, so that a
	 * signal they send is delivered while our handler is installed.
	 */
	xc_urgent_quiesce();
	c->life.attached = false;
	xc_hotplug_hold(false);
	pthread_mutex_unlock(&xc_rt.hotplug_lock);
	urgent_signal_mask(c, false);
	xc_self = NULL;
}

static int worker_detach(void)
{
	struct xc_cpu *c;
	int ret = attached_self(&c);

	if (ret)
		return ret;
	attached_leave(c);
	return 0;
}

int xc_worker_detach(void)
{
	return XC_GUARDED(worker_detach());
}

/* A thread that exits attached detaches on its way out (thread.c), before its pool goes. */
void xc_attach_thread_exit(void)
{
	struct xc_cpu *c = xc_self;

	if (c && c->life.attached)
		attached_leave(c);
}

__attribute__((constructor)) static void attach_exit_hook(void)
{
	xc_thread_exit_hook(XC_EXIT_ATTACH, xc_attach_thread_exit);
}
