// SPDX-License-Identifier: MIT
/*
 * bringup.c - start the workers, all at once or one at a time, and stop them,
 * for xc_init() and xc_exit() (api/init.c).
 *
 * Parallel bringup follows seed 004 (kick all, then release each): every
 * worker is started at once; each pins itself, runs the cpu_init hook and
 * reports alive; when all have, the starter releases them online in CPU
 * order. Serial bringup starts, waits for and releases one worker before the
 * next. A worker that fails its init, or does not report alive before the
 * timeout, fails xc_init() with its CPU named, and nothing is left behind: a
 * hook stuck at a cancellation point is cancelled, every thread is joined.
 */
#include "base/internal.h"
#include "proto/ring.h"
#include "base/thread.h"
#include "proto/wake.h"
#include "run/wait.h"
#include "cpu/worker.h"
#include "cpu/bringup.h"
#include "cpu/hotplug.h"
#include "base/topology.h"
#include "base/trace.h"
#include "base/futex.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* How long a cancelled init hook gets to unwind before it is given up on. */
#define XC_CANCEL_GRACE_MS 1000


/*
 * What a fresh runtime keeps from the last one, each for its reason
 * (scripts/check-fresh.py reads this list: every other member of struct
 * xc_cpu and struct xc_ring must be set in xc_cpu_fresh, or it fails):
 *   xc_cpu.life.llc_id, life.node_id: the CPU's topology, not a runtime's: each
 *	xc_init reads it from sysfs after this (cpu_reset), a fork child never
 *   xc_ring.head: the ring's index: tail, tail_seen and head_seen are set
 *	equal to it (only their differences count)
 *   xc_ring.target, next, size, mask, meta: the registry's, fixed when the
 *	ring was made (ring.c, ring_new)
 *   xc_ring.owned: whether a live thread sends through it: its ring table
 *	names the ring until its next call finds the table a runtime old and
 *	releases it; a fork child, whose other threads are gone, frees every
 *	ring (xc_ring_fork_child)
 *   xc_ring.e: the entries: the owner writes each before it publishes it
 */

/*
 * @c, and every ring to it, as a runtime starts from: in no runtime's set
 * yet, no thread, queues and slot closed, nothing held, dropped or in
 * flight, every counter zero. xc_init runs it for each CPU of its set
 * (cpu_reset), a fork child for each of the parent's (fork.c): whatever
 * the last runtime left, or the fork caught half done, ends here. Relaxed
 * stores: xc_init publishes them with its release of UP; a fork child has
 * one thread.
 */
void xc_cpu_fresh(struct xc_cpu *c, int cpu)
{
	/* the mailbox */
	atomic_store_explicit(&c->mbox.callq, XC_LLIST_CLOSED, memory_order_relaxed);
	atomic_store_explicit(&c->mbox.workq, XC_LLIST_CLOSED, memory_order_relaxed);
	atomic_store_explicit(&c->mbox.urgentq, XC_LLIST_CLOSED, memory_order_relaxed);
	atomic_store_explicit(&c->mbox.idle, XC_IDLE_RUNNING, memory_order_relaxed);
	c->mbox.slot_flow = 0;
	atomic_store_explicit(&c->mbox.slot.done.word, XC_SLOT_CLOSED, memory_order_relaxed);
	c->mbox.slot.done.waiter = NULL;
	atomic_store_explicit(&c->mbox.slot.fn, NULL, memory_order_relaxed);
	c->mbox.slot.arg = NULL;

	/* senders' counters and claims: every counter of the list (xcall.h) is zero */
	memset(&c->sent, 0, sizeof(c->sent));
	c->sent.kick_fd = -1;
	atomic_store_explicit(&c->slot_claim, 0, memory_order_relaxed);

	/*
	 * the worker's: nothing held, queued, counted or running (XC_ACT_NONE
	 * is 0); the serve floor is set by its thread (xc_serve_floor_set)
	 */
	memset(&c->worker, 0, sizeof(c->worker));
	c->worker.rings_held_end = &c->worker.rings_held;

	/* lifecycle */
	atomic_store_explicit(&c->life.ctl, XC_CTL_NONE, memory_order_relaxed);
	c->life.cpu = cpu;
	c->life.present = false;	/* cpu_reset adds it to the set */
	c->life.attach_cpu = CPU_ISSET(cpu, &xc_rt.cfg.attach);
	c->life.attached = false;
	c->life.attaching = false;
	c->life.urgent_was_blocked = false;
	atomic_store_explicit(&c->life.online, false, memory_order_relaxed);
	atomic_store_explicit(&c->life.taken, XC_TAKEN_NONE, memory_order_relaxed);
	c->life.user_offline = false;
	c->life.offline_by_os = false;
	atomic_store_explicit(&c->life.park, XC_PARK_WAIT, memory_order_relaxed);
	c->life.boot = NULL;		/* a fork child's copy: the parent's to free */
	memset(&c->life.thread, 0, sizeof(c->life.thread));
	c->life.tid = 0;
	c->life.thread_live = false;
	atomic_store_explicit(&c->life.offline_done.word, 0, memory_order_relaxed);
	c->life.offline_done.waiter = NULL;
	atomic_store_explicit(&c->life.ctl_from, 0, memory_order_relaxed);
	c->life.offline_result = 0;
	atomic_store_explicit(&c->life.served_empty, 0, memory_order_relaxed);
	atomic_store_explicit(&c->life.lock_wait, XC_LOCK_NONE, memory_order_relaxed);
	atomic_store_explicit(&c->life.waiters_here, 0, memory_order_relaxed);

	/* its rings: empty (what was in flight is dropped), idle, on no list */
	for (struct xc_ring *r = xc_rings_of(cpu); r; r = r->next) {
		uint32_t h = atomic_load_explicit(&r->head, memory_order_relaxed);

		atomic_store_explicit(&r->state, XC_RING_IDLE, memory_order_relaxed);
		atomic_store_explicit(&r->unfenced, 0, memory_order_relaxed);
		r->fenced_rides = 0;
		r->tail_seen = h;
		atomic_store_explicit(&r->rode, 0, memory_order_relaxed);
		atomic_store_explicit(&r->tail, h, memory_order_relaxed);
		r->head_seen = h;
		r->held = false;
		r->dropped = false;
		r->looked = h;
		r->held_next = NULL;
		r->dropped_next = NULL;
		r->link.next = NULL;
	}
}

/* A CPU of the set a runtime starts with. */
static void cpu_reset(struct xc_cpu *c, int cpu)
{
	xc_cpu_fresh(c, cpu);
	xc_topology_read(c);
	c->life.present = true;
}

void xc_boot_put(struct xc_boot *b)
{
	/* acq_rel: the last put sees every use of the handshake by the other side */
	if (atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) == 1)
		free(b);
}

/* The starter is done with a CPU's handshake. */
static void boot_forget(struct xc_cpu *c)
{
	if (c->life.boot)
		xc_boot_put(c->life.boot);
	c->life.boot = NULL;
}

static int boot_state(const struct xc_cpu *c)
{
	/* acquire: pairs with the thread's release report, so err and tid are visible */
	return c->life.boot ? atomic_load_explicit(&c->life.boot->state, memory_order_acquire) : XC_BOOT_NONE;
}

static int cpu_start(struct xc_cpu *c)
{
	struct xc_boot *b = malloc(sizeof(*b));
	int err;

	if (!b) {
		xc_report("CPU %d: cannot start its worker: %s", c->life.cpu, strerror(ENOMEM));
		return -ENOMEM;
	}
	b->c = c;
	b->cpu = c->life.cpu;
	b->follow_os = xc_rt.cfg.follow_os;
	b->cpu_init = xc_rt.cfg.cpu_init;
	b->cpu_init_arg = xc_rt.cfg.cpu_init_arg;
	b->err = 0;
	/* relaxed: published to the thread by pthread_create */
	atomic_init(&b->tid, 0);
	atomic_init(&b->in_hook, false);
	atomic_init(&b->state, XC_BOOT_STARTING);
	atomic_init(&b->refs, 2);
	err = xc_thread_create(&c->life.thread, xc_worker_main, b, (size_t)xc_rt.cfg.stack_kb * 1024);
	if (err) {
		free(b);
		xc_report("CPU %d: cannot start its worker: %s", c->life.cpu, strerror(err));
		return -err;
	}
	c->life.boot = b;
	c->life.thread_live = true;
	return 0;
}

/*
 * Why the thread of handshake @b has not reported within @ms: how far it
 * got, its CPU time and its state. A thread that the OS did not run, its
 * CPU taken by other work, reads otherwise the same as one stuck in its
 * hook. Relaxed loads: it may move on meanwhile.
 */
static void boot_late(struct xc_boot *b, unsigned ms, char *buf, size_t n)
{
	int tid = atomic_load_explicit(&b->tid, memory_order_relaxed);
	const char *where = atomic_load_explicit(&b->in_hook, memory_order_relaxed) ?
			    "in its cpu_init hook" : "starting (pinning itself)";
	char state, other[24];
	const char *what;
	uint64_t ran;

	if (!tid) {
		snprintf(buf, n, "its thread has not run yet; other work may hold the CPU");
		return;
	}
	if (!xc_thread_run_ns(tid, &ran)) {
		snprintf(buf, n, "its thread is %s", where);
		return;
	}
	state = xc_thread_state(tid);
	if (state == 'R' && ran / 1000000u < ms / 100)
		what = "waiting for the CPU, which other work holds";	/* ran under 1% of the time */
	else if (state == 'R')
		what = "running";
	else if (state == 'S')
		what = "sleeping";
	else
		what = xc_thread_not_running_why(state, other, sizeof(other));
	snprintf(buf, n, "its thread is %s, ran %llu ms, %s", where, (unsigned long long)(ran / 1000000u), what);
}

/*
 * Check the reports of @n CPUs from @first; report each failure; return the
 * first error, but -ETIMEDOUT if any CPU did not report: its thread is still
 * in the cpu_init hook, and may be left running it after xc_init() returns,
 * which its caller must know whatever failed first.
 */
static int boot_verdict(int first, int n)
{
	int ret = 0;

	for (int i = first; i < first + n; i++) {
		struct xc_cpu *c = &xc_cpus[xc_rt.cpu_list[i]];
		int b = boot_state(c);
		int err = 0;

		if (c->life.attach_cpu) {
			continue;	/* no thread of ours */
		} else if (b == XC_BOOT_ALIVE) {
			/* relaxed: the state's acquire (boot_state) published it */
			c->life.tid = atomic_load_explicit(&c->life.boot->tid, memory_order_relaxed);
		} else if (b == XC_BOOT_FAILED) {
			err = c->life.boot->err;
			xc_report("CPU %d: bringup failed: %s", c->life.cpu, strerror(-err));
		} else if (b == XC_BOOT_STARTING) {
			char why[128];

			err = -ETIMEDOUT;
			boot_late(c->life.boot, xc_rt.cfg.bringup_timeout_ms, why, sizeof(why));
			xc_report("CPU %d: did not report alive within %u ms: %s", c->life.cpu,
				  xc_rt.cfg.bringup_timeout_ms, why);
		} else {
			err = -EAGAIN;
		}
		if (err && (!ret || err == -ETIMEDOUT))
			ret = err;
	}
	return ret;
}

/* Tell a started worker to exit: online, through its queues (it drains them); parked, at once. */
static void cpu_stop(struct xc_cpu *c)
{
	if (atomic_load_explicit(&c->life.online, memory_order_acquire))
		xc_cpu_request(c, XC_CTL_EXIT);
	else
		xc_park_release(c, XC_PARK_EXIT);
}

/*
 * A CPU set aside for an application thread (attach.c) comes online when one
 * attaches; one offline in the OS (its worker said so before its report,
 * worker.c) when the OS brings it back.
 */
static void cpu_release_online(struct xc_cpu *c)
{
	if (c->life.attach_cpu)
		return;
	if (c->life.offline_by_os) {
		xc_report("CPU %d: offline in the OS at start; online once the OS brings it back", c->life.cpu);
		return;
	}
	xc_cpu_open(c);
	xc_park_release(c, XC_PARK_RUN);
}

static int start_workers(int first, int n)
{
	int ret = 0, threads = 0;

	for (int i = first; i < first + n; i++)
		threads += !xc_cpus[xc_rt.cpu_list[i]].life.attach_cpu;
	xc_completion_init(&xc_rt.boot_done, (uint32_t)threads);
	for (int i = first; i < first + n; i++)
		if (!xc_cpus[xc_rt.cpu_list[i]].life.attach_cpu && cpu_start(&xc_cpus[xc_rt.cpu_list[i]]))
			xc_complete(&xc_rt.boot_done);	/* nothing will report */
	xc_completion_wait_until(&xc_rt.boot_done,
			   xc_now_ns() + (uint64_t)xc_rt.cfg.bringup_timeout_ms * 1000000u);
	ret = boot_verdict(first, n);
	/*
	 * every thread reported alive, some maybe after the deadline: each
	 * completes boot_done right after its report, with what it wrote of its
	 * CPU (offline_by_os, read by cpu_release_online): wait for that too
	 */
	if (!ret)
		xc_completion_wait_until(&xc_rt.boot_done, 0);
	if (!ret)
		for (int i = first; i < first + n; i++)
			boot_forget(&xc_cpus[xc_rt.cpu_list[i]]);
	return ret;
}

static int bringup_parallel(void)
{
	int ret = start_workers(0, xc_rt.nr_cpus);

	if (ret)
		return ret;
	for (int i = 0; i < xc_rt.nr_cpus; i++)
		cpu_release_online(&xc_cpus[xc_rt.cpu_list[i]]);
	return 0;
}

static int bringup_serial(void)
{
	for (int i = 0; i < xc_rt.nr_cpus; i++) {
		int ret = start_workers(i, 1);

		if (ret)
			return ret;
		cpu_release_online(&xc_cpus[xc_rt.cpu_list[i]]);
	}
	return 0;
}

static int join_within(pthread_t t, int ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return pthread_timedjoin_np(t, NULL, &ts);
}

/* Give up on a thread still in its hook; false if it reported meanwhile. */
static bool boot_abandon(struct xc_cpu *c)
{
	int expect = XC_BOOT_STARTING;

	/* relaxed: one CAS against the thread's report decides who owns its exit; nothing else is published */
	return atomic_compare_exchange_strong_explicit(&c->life.boot->state, &expect, XC_BOOT_ABANDONED,
						       memory_order_relaxed, memory_order_relaxed);
}

/*
 * Undo a failed bringup: stop every started worker, whatever state it
 * reached, and join it. A thread still in its init hook is cancelled; if it
 * has not ended within the grace period (a hook that is not at a
 * cancellation point), it is abandoned: it finds that out when its hook
 * returns and leaves without touching anything of the runtime. Every other
 * thread is in libxcall's own code, parked or about to be, and is joined.
 * True if a thread was abandoned: its hook runs on after xc_init() returns.
 */
bool xc_bringup_undo(void)
{
	bool abandoned = false;

	for (int i = 0; i < xc_rt.nr_cpus; i++) {
		struct xc_cpu *c = &xc_cpus[xc_rt.cpu_list[i]];
		bool in_hook, gone = false;

		if (!c->life.thread_live)
			continue;
		in_hook = boot_state(c) == XC_BOOT_STARTING;
		if (in_hook)
			pthread_cancel(c->life.thread);
		cpu_stop(c);
		if (in_hook && join_within(c->life.thread, XC_CANCEL_GRACE_MS) == 0)
			gone = true;
		else if (in_hook && boot_abandon(c)) {
			xc_report("CPU %d: init hook still running %d ms after cancellation; "
				  "its thread is left to exit when the hook returns",
				  c->life.cpu, XC_CANCEL_GRACE_MS);
			pthread_detach(c->life.thread);
			gone = abandoned = true;
		}
		if (!gone)
			pthread_join(c->life.thread, NULL);	/* in libxcall's code: parked or leaving */
		boot_forget(c);
		c->life.thread_live = false;
	}
	return abandoned;
}

/* The runtime is down: no CPU is in its set any more. */
void xc_runtime_clear(void)
{
	for (int i = 0; i < xc_rt.nr_cpus; i++)
		xc_cpus[xc_rt.cpu_list[i]].life.present = false;
	xc_rt.nr_cpus = 0;
}

/*
 * Open the waiting call's straight path (call.c, slot.c) to every CPU below the
 * set's highest: close the slots of those outside the set first, which it
 * then finds closed. Tracing and the slot's ablation keep it shut.
 */
static void slot_fast_open(void)
{
	int top = xc_rt.cpu_list[xc_rt.nr_cpus - 1] + 1;

	if (xc_tracing_on() || xc_ablated(XC_ABLATE_SLOT))
		return;
	for (int cpu = 0; cpu < top; cpu++)
		if (!xc_cpus[cpu].life.present)
			/* relaxed: published by the release below */
			atomic_store_explicit(&xc_cpus[cpu].mbox.slot.done.word, XC_SLOT_CLOSED,
					      memory_order_relaxed);
	/* release: the configuration, every CPU's setup and the closed slots before a straight call */
	atomic_store_explicit(&xc_rt.slot_fast_cpus, top, memory_order_release);
}

/* Open the nowait call's straight path (call.c) to every CPU below the set's highest. */
static void ring_fast_open(void)
{
	if (xc_tracing_on() || xc_ablated(XC_ABLATE_RING | XC_ABLATE_COALESCE))
		return;
	/* release: the configuration and every CPU's setup before a straight call */
	atomic_store_explicit(&xc_rt.ring_fast_cpus, xc_rt.cpu_list[xc_rt.nr_cpus - 1] + 1,
			      memory_order_release);
}

/*
 * Up, every CPU set up: open the straight paths (call.c). Their closing
 * (xc_fast_paths_close) comes first at the exit.
 */
void xc_fast_paths_open(void)
{
	slot_fast_open();
	ring_fast_open();
}

void xc_fast_paths_close(void)
{
	/*
	 * relaxed: a straight call that still read the old bound meets the
	 * closing slots as any call does, and falls back to -ENXIO (slot.c)
	 */
	atomic_store_explicit(&xc_rt.slot_fast_cpus, 0, memory_order_relaxed);
	/* relaxed: a straight nowait call that still read the old bound is one racing with the exit, as above */
	atomic_store_explicit(&xc_rt.ring_fast_cpus, 0, memory_order_relaxed);
}

/* The CPUs of the resolved configuration's set, each as a new runtime starts from. */
void xc_cpus_reset(void)
{
	int n = 0;

	for (int cpu = 0; cpu < XC_MAX_CPUS; cpu++)
		if (CPU_ISSET(cpu, &xc_rt.cfg.cpus))
			xc_rt.cpu_list[n++] = cpu;
	xc_rt.nr_cpus = n;
	for (int i = 0; i < n; i++)
		cpu_reset(&xc_cpus[xc_rt.cpu_list[i]], xc_rt.cpu_list[i]);
}

/* Start the workers, all at once or one at a time (xc_opts.serial_bringup); 0 or the first error. */
int xc_bringup(void)
{
	return xc_rt.cfg.serial_bringup ? bringup_serial() : bringup_parallel();
}

/* Tell every worker to exit (online: through its queues, which it drains), and join each. */
void xc_workers_stop(void)
{
	for (int i = 0; i < xc_rt.nr_cpus; i++) {
		struct xc_cpu *c = &xc_cpus[xc_rt.cpu_list[i]];

		if (c->life.thread_live)
			cpu_stop(c);
	}
	for (int i = 0; i < xc_rt.nr_cpus; i++) {
		struct xc_cpu *c = &xc_cpus[xc_rt.cpu_list[i]];

		if (c->life.thread_live)
			pthread_join(c->life.thread, NULL);
		c->life.thread_live = false;
	}
}
