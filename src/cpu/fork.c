// SPDX-License-Identifier: MIT
/*
 * fork.c - what a child forked after xc_init() finds: no runtime.
 *
 * fork() copies only the calling thread, so the child has none of the
 * workers its copy of the runtime names. Its contract (xcall.h): every call
 * gets -ENXIO, xc_exit() too, and xc_init() starts a runtime of its own.
 *
 * The handlers (pthread_atfork, registered when the library loads: a
 * thread's first call lists it (inflight.c), before any xc_init):
 *   prepare  holds the locks whose data the child goes on using: the trace
 *            dump's and the thread-ring registry's. Each is a
 *            leaf, held only for a short update, so prepare never waits long
 *            and never on a worker. The hotplug lock is not taken: its holder
 *            may be waiting for the very worker that forks (a call's function
 *            may fork), and what it guards is the runtime the child drops; the
 *            child initialises it afresh instead.
 *   parent   releases them.
 *   child    marks the runtime down; resets each of the parent's CPUs and
 *            its rings as a fresh runtime starts (xc_cpu_fresh, the one
 *            definition xc_init uses too: no worker, nothing held, dropped
 *            or in flight); frees every ring (their owners are gone), keeps
 *            only the forking thread listed (inflight.c) and resets the
 *            forking thread's own state (its rings, pools, trace
 *            ring, worker and sleep marks); gives the urgent signal back its
 *            disposition from before xc_init (so that a new xc_init saves
 *            that one, not ours), drops the descriptors that were in flight
 *            in the parent from its pools' counts (they never come back),
 *            stops tracing; then releases the locks.
 *
 * A child forked from inside a call or work item goes on running the
 * worker's code it was forked in; as after any fork of a threaded process it
 * should only exec or _exit, and calls it makes get -ENXIO.
 */
#include "base/internal.h"
#include "proto/ring.h"
#include "proto/barrier.h"
#include "base/thread.h"
#include "proto/urgent.h"
#include "run/urgent_signal.h"
#include "proto/pool.h"
#include "cpu/fork.h"
#include "base/trace.h"
#include "base/inflight.h"
#include "cpu/hotplug.h"
#include "cpu/worker.h"

#include <pthread.h>

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

/* fork() is the application's, so this thread was outside libxcall: inside while the locks are held */
static __xc_tls int fork_was_inside;

static void fork_prepare(void)
{
	fork_was_inside = xc_inside_swap(XC_INSIDE_CODE);	/* a handler that interrupts the fork must not wait on a lock held here (thread.h) */
	xc_trace_fork_prepare();
}

static void fork_parent(void)
{
	xc_trace_fork_parent();
	xc_inside_restore(fork_was_inside);
}

static void fork_child(void)
{
	pthread_mutex_init(&xc_rt.hotplug_lock, NULL);
	xc_hotplug_hold(false);		/* a fork from a call that an offline of this thread served */
	/* the parent's CPUs as a fresh runtime starts from, in no set: no worker, nothing in flight */
	for (int i = 0; i < xc_rt.nr_cpus; i++)
		xc_cpu_fresh(&xc_cpus[xc_rt.cpu_list[i]], xc_rt.cpu_list[i]);
	xc_rt.nr_cpus = 0;
	/* relaxed, here and below: the child has one thread */
	atomic_store_explicit(&xc_rt.slot_fast_cpus, 0, memory_order_relaxed);
	atomic_store_explicit(&xc_rt.ring_fast_cpus, 0, memory_order_relaxed);
	xc_tls.in_fd_sleep = 0;		/* the sleep was the parent's attached loop's */
	atomic_store_explicit(&xc_rt.urgent_senders, 0, memory_order_relaxed);
	xc_self = NULL;
	xc_urgent_fork_child();
	xc_pool_fork_child();
	xc_ring_fork_child();
	xc_barrier_fork_child();
	xc_trace_fork_child();
	xc_inflight_fork_child();
	/* a later xc_init's CAS starts from here */
	atomic_store_explicit(&xc_rt.state, XC_RT_DOWN, memory_order_relaxed);
	xc_inside_restore(fork_was_inside);
}

static void fork_register(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

void xc_fork_handlers_register(void)
{
	pthread_once(&fork_once, fork_register);
}

__attribute__((constructor)) static void fork_handlers_at_load(void)
{
	xc_fork_handlers_register();
}
