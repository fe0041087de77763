// SPDX-License-Identifier: MIT
/*
 * hotplug.c - take a CPU's worker offline and bring it back.
 *
 * Offline: the requester sets the CPU's ctl word and kicks it; the worker
 * closes its queues (pushes after that get -ENXIO), runs everything that was
 * queued, marks itself offline, completes the request and parks. Nothing
 * queued is lost, nothing runs twice: the close is one atomic exchange.
 * Online: the requester reopens the queues and unparks the worker.
 * One hotplug operation runs at a time (xc_rt.hotplug_lock), which also
 * guards user_offline. A worker whose CPU the OS takes goes offline by
 * itself, and back online by itself under that lock (worker.c, follow.c).
 */
#include "base/internal.h"
#include "base/thread.h"
#include "proto/wake.h"
#include "run/wait.h"
#include "run/run.h"
#include "run/slot.h"
#include "cpu/hotplug.h"
#include "base/futex.h"

#include <errno.h>
#include <sched.h>

/*
 * A worker must not block on the lock: the holder may be waiting for this
 * very worker to drain. It keeps serving its calls, and gives up with
 * -ENXIO if the runtime is going down (xc_exit holds the lock while it
 * stops the workers, and asks this one to exit), or with -EDEADLK if the
 * holder is this thread, or is taking this CPU away, or waits for a call
 * further up this stack: the worker of the CPU it takes offline, or the
 * holder's own drain (a detach, an attached thread's exit), says so by
 * setting lock_wait to XC_LOCK_REFUSED (wait.c, deadlock_look). For that
 * look this wait counts its serves that found nothing, in served_empty, as
 * an offline's wait does (offline_wait).
 */
static int lock_spin(struct xc_cpu *self)
{
	/* relaxed: the word carries no data; a nested spin keeps the outer's state */
	uint32_t outer = atomic_exchange_explicit(&self->life.lock_wait, XC_LOCK_SPIN, memory_order_relaxed);
	int ret = 0;

	while (pthread_mutex_trylock(&xc_rt.hotplug_lock)) {
		/* acquire: a request for our own CPU is pending */
		uint32_t ctl = atomic_load_explicit(&self->life.ctl, memory_order_acquire);

		/* acquire: as every look at the runtime's state */
		if (ctl == XC_CTL_EXIT || atomic_load_explicit(&xc_rt.state, memory_order_acquire) != XC_RT_UP) {
			ret = -ENXIO;
			break;
		}
		/* relaxed: the refusal carries no data */
		if (ctl != XC_CTL_NONE ||
		    atomic_load_explicit(&self->life.lock_wait, memory_order_relaxed) == XC_LOCK_REFUSED) {
			ret = -EDEADLK;
			break;
		}
		if (!xc_wait_serve())
			/* release: after the take that found nothing (pairs with wait.c's acquire) */
			atomic_fetch_add_explicit(&self->life.served_empty, 1, memory_order_release);
		sched_yield();
	}
	atomic_store_explicit(&self->life.lock_wait, outer, memory_order_relaxed);
	return ret;
}

int xc_hotplug_lock(void)
{
	struct xc_cpu *self = xc_self;

	if (xc_hotplug_held)
		return -EDEADLK;
	if (!self) {
		pthread_mutex_lock(&xc_rt.hotplug_lock);
	} else {
		int ret = lock_spin(self);

		if (ret)
			return ret;
	}
	xc_hotplug_held = true;
	return 0;
}

void xc_hotplug_unlock(void)
{
	xc_hotplug_held = false;
	pthread_mutex_unlock(&xc_rt.hotplug_lock);
}

/* Worker parked (or not yet started): accept calls and work again. */
void xc_cpu_open(struct xc_cpu *c)
{
	atomic_store_explicit(&c->life.ctl, XC_CTL_NONE, memory_order_relaxed);
	xc_llist_open(&c->mbox.callq);
	xc_llist_open(&c->mbox.workq);
	xc_llist_open(&c->mbox.urgentq);
	xc_slot_open(c);
	/* release: queues are open before anyone reads the CPU as online */
	atomic_store_explicit(&c->life.online, true, memory_order_release);
}

/*
 * Ask @c's worker to go offline or exit (XC_CTL_*), wherever it is: running,
 * idle (the kick), or parked because the OS took its CPU (the park wake).
 */
void xc_cpu_request(struct xc_cpu *c, uint32_t ctl)
{
	/* seq_cst: S1 of the wakeup protocol; the worker's W2 re-check reads ctl */
	atomic_store_explicit(&c->life.ctl, ctl, memory_order_seq_cst);
	xc_kick(c);
	xc_futex_wake(&c->life.park, 1);
}

/* End a parked (or booting) worker's wait with XC_PARK_RUN or XC_PARK_EXIT. */
void xc_park_release(struct xc_cpu *c, uint32_t how)
{
	/* release: the reopened queues (or the exit) are visible to the worker */
	atomic_store_explicit(&c->life.park, how, memory_order_release);
	xc_futex_wake(&c->life.park, 1);
}

/*
 * Wait for @c's worker to serve the offline request. A worker waiting here
 * serves its own CPU meanwhile, and says each time a serve found nothing
 * (served_empty): @c's worker, itself blocked in a wait for a call to this
 * CPU, learns from two such serves that its call cannot run before this
 * one returns, and refuses the request with -EDEADLK (wait.c).
 */
static void offline_wait(struct xc_cpu *c)
{
	struct xc_cpu *self = xc_self;

	if (!self) {
		xc_completion_wait_until(&c->life.offline_done, 0);
		return;
	}
	while (xc_completion_wait_until(&c->life.offline_done, xc_now_ns() + XC_DEADLOCK_LOOK_NS))
		if (!xc_wait_serve())
			/* release: after the take that found nothing (pairs with wait.c's acquire) */
			atomic_fetch_add_explicit(&self->life.served_empty, 1, memory_order_release);
}

static int cpu_offline(int cpu)
{
	struct xc_cpu *c = xc_cpu_get(cpu);
	int ret;

	if (!c)
		return -ENXIO;
	if (c == xc_self || xc_urgent_rules() || xc_in_fd_sleep())
		return -EDEADLK;
	if (atomic_load_explicit(&xc_rt.state, memory_order_acquire) != XC_RT_UP)
		return -ENXIO;	/* exiting: every CPU goes down anyway */
	ret = xc_hotplug_lock();
	if (ret)
		return ret;
	if (atomic_load_explicit(&xc_rt.state, memory_order_acquire) != XC_RT_UP) {
		ret = -ENXIO;
	} else if (c->life.user_offline) {
		ret = -EINVAL;
	} else if (!atomic_load_explicit(&c->life.online, memory_order_acquire)) {
		c->life.user_offline = true;	/* the OS took it: it stays offline when it comes back */
	} else {
		c->life.offline_result = 0;
		/* relaxed: published by the request's seq_cst store of ctl */
		atomic_store_explicit(&c->life.ctl_from, xc_self ? xc_self->life.cpu : -1, memory_order_relaxed);
		xc_completion_init(&c->life.offline_done, 1);
		xc_cpu_request(c, XC_CTL_OFFLINE);
		offline_wait(c);
		ret = c->life.offline_result;	/* ordered by the completion's acquire */
		if (!ret)
			c->life.user_offline = true;
	}
	xc_hotplug_unlock();
	return ret;
}

int xc_cpu_offline(int cpu)
{
	return XC_GUARDED(cpu_offline(cpu));
}

static int cpu_online(int cpu)
{
	struct xc_cpu *c = xc_cpu_get(cpu);
	int ret = 0;

	if (!c || atomic_load_explicit(&xc_rt.state, memory_order_acquire) != XC_RT_UP)
		return -ENXIO;
	if (xc_urgent_rules() || xc_in_fd_sleep())
		return -EDEADLK;
	ret = xc_hotplug_lock();
	if (ret)
		return ret;
	if (atomic_load_explicit(&xc_rt.state, memory_order_acquire) != XC_RT_UP) {
		ret = -ENXIO;
	} else if (atomic_load_explicit(&c->life.taken, memory_order_relaxed) != XC_TAKEN_NONE) {
		ret = -ENXIO;	/* relaxed: a snapshot of what the worker last found (follow.c) */
	} else if (atomic_load_explicit(&c->life.online, memory_order_acquire) || !c->life.user_offline) {
		ret = -EINVAL;
	} else if (c->life.attach_cpu && !c->life.attached) {
		c->life.user_offline = false;	/* online once a thread attaches, or one attaching ends (attach.c) */
	} else {
		c->life.user_offline = false;
		xc_cpu_open(c);
		xc_park_release(c, XC_PARK_RUN);
	}
	xc_hotplug_unlock();
	return ret;
}

int xc_cpu_online(int cpu)
{
	return XC_GUARDED(cpu_online(cpu));
}

static int online_mask(cpu_set_t *out)
{
	int n = 0;

	if (atomic_load_explicit(&xc_rt.state, memory_order_acquire) != XC_RT_UP)
		return -ENXIO;
	CPU_ZERO(out);
	for (int i = 0; i < xc_rt.nr_cpus; i++) {
		int cpu = xc_rt.cpu_list[i];

		/* relaxed: a snapshot; hotplug may change it right after */
		if (atomic_load_explicit(&xc_cpus[cpu].life.online, memory_order_relaxed)) {
			CPU_SET(cpu, out);
			n++;
		}
	}
	return n;
}

int xc_online_mask(cpu_set_t *out)
{
	return out ? XC_READING(online_mask(out)) : -EINVAL;
}
