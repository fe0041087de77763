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
 * The tokens of this thread's serving waits (lock_wait, served_empty): a
 * count of those it began, stepped by XC_LOCK_TOKEN (wait.h). A thread's
 * own, not its CPU's: a CPU's thread changes only between calls (a detach
 * is refused inside one), and a look compares the tokens of the waits up
 * one call's stack.
 */
static __xc_tls uint32_t wait_tokens;

static uint32_t wait_token(void)
{
	return wait_tokens += XC_LOCK_TOKEN;
}

/*
 * A serve of this thread's hotplug wait @tok found nothing: count it in
 * served_empty, with the wait's token (wait.h). Only this thread writes the
 * word, yet by a read-modify-write, as the count always was: the proof
 * (wait.c, deadlock_look) wants the next serve's take after this count,
 * which x86 gives a locked instruction and not a plain store.
 */
static void count_empty(struct xc_cpu *self, uint32_t tok)
{
	/* relaxed: this thread's own last write */
	uint64_t was = atomic_load_explicit(&self->life.served_empty, memory_order_relaxed);
	uint64_t count = XC_EMPTY_COUNT(was) + 1u;

	/* release: after the take that found nothing (pairs with wait.c's acquire) */
	atomic_exchange_explicit(&self->life.served_empty, count << 32 | tok, memory_order_release);
}

/*
 * A worker must not block on the lock: the holder may be waiting for this
 * very worker to drain. It keeps serving its calls, and gives up with
 * -ENXIO if the runtime is going down (xc_exit holds the lock while it
 * stops the workers, and asks this one to exit), or with -EDEADLK if the
 * holder is this thread, or is taking this CPU away, or waits for a call
 * further up this stack: the worker of the CPU it takes offline, or the
 * holder's own drain (a detach, an attached thread's exit), says so by
 * turning this spin's lock_wait word from SPIN to REFUSED (wait.c,
 * deadlock_look). For that look this wait counts its serves that found
 * nothing, in served_empty, as an offline's wait does (offline_wait).
 *
 * The contract with the look: lock_wait holds this spin's own token beside
 * its state from the exchange to the store that puts back the word it found
 * (a nested spin's own exchange and store in between leave it as they found
 * it, a refusal included). The look refuses by a CAS of the exact word it
 * read, so a refusal lands on this spin only while it spins at this level,
 * never on the spin below it (whose word it puts back) nor on a later spin.
 * Both writes are release: a look that reads the word with acquire and then
 * finds its call not done knows this spin began before the call completed.
 */
static int lock_spin(struct xc_cpu *self)
{
	uint32_t tok = wait_token();
	/* release: see above; the outer spin's word (or none) is kept, to put back */
	uint32_t outer = atomic_exchange_explicit(&self->life.lock_wait, tok | XC_LOCK_SPIN, memory_order_release);
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
		    atomic_load_explicit(&self->life.lock_wait, memory_order_relaxed) == (tok | XC_LOCK_REFUSED)) {
			ret = -EDEADLK;
			break;
		}
		if (!xc_wait_serve())
			count_empty(self, tok);
		sched_yield();
	}
	/* release: as the exchange, for the outer spin's word, refusable again from here */
	atomic_store_explicit(&self->life.lock_wait, outer, memory_order_release);
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
 * one returns, and refuses the request with -EDEADLK (wait.c). The wait
 * takes a token as lock_spin does, so that every count names its wait.
 */
static void offline_wait(struct xc_cpu *c)
{
	struct xc_cpu *self = xc_self;
	uint32_t tok;

	if (!self) {
		xc_completion_wait_until(&c->life.offline_done, 0);
		return;
	}
	tok = wait_token();
	while (xc_completion_wait_until(&c->life.offline_done, xc_now_ns() + XC_DEADLOCK_LOOK_NS))
		if (!xc_wait_serve())
			count_empty(self, tok);
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
