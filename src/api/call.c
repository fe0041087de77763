// SPDX-License-Identifier: MIT
/*
 * call.c - the call family: queue a function on other CPUs' call queues, kick
 * them, optionally wait. The worker's side, which runs what was queued, is
 * run.c's.
 *
 * A thread's calls to a CPU go through its ring to that CPU (ring.c), in the
 * order made: an entry is fn and arg, or a marker naming what to complete
 * after (a waiter's completion on its stack, an async descriptor's
 * in-flight bit: struct xc_ring_entry). A waiting
 * single call takes the target's mailbox slot instead (slot.c) when the
 * slot is free and the ring holds nothing of ours not yet taken, so it
 * cannot overtake our earlier calls.
 *
 * Calls made inside the urgent signal handler use a second set of rings
 * (the handler may have interrupted this thread's update of its own).
 *
 * XC_URGENT calls are descriptors pushed on the CPU's shared urgent queue,
 * and so is every call with XC_ABLATE_RING, on callq, which is the seeds'
 * design: a nowait or many call's descriptor comes from the caller's pool
 * (pool.c) and goes back to it before its function runs, a waiting call's
 * lives on its stack.
 */
#include "base/internal.h"
#include "base/thread.h"
#include "proto/wake.h"
#include "run/wait.h"
#include "run/run.h"
#include "run/slot.h"
#include "run/stuck.h"
#include "cpu/follow.h"
#include "proto/urgent.h"
#include "proto/pool.h"
#include "base/trace.h"
#include "cpu/attach.h"
#include "proto/ring.h"
#include "cpu/worker.h"

#include <errno.h>
#include <string.h>

/* Queue one call on @c; returns the push result (XC_PUSH_*). */
static int call_enqueue(struct xc_cpu *c, struct xc_call *call, bool urgent)
{
	call->_src_cpu = (int16_t)(xc_self ? xc_self->life.cpu : -1);
	call->_trace_id = xc_trace_flow();
	xc_trace(XC_EV_QUEUE, c->life.cpu, call->_trace_id, (const void *)call->fn);
	return xc_llist_push(urgent ? &c->mbox.urgentq : &c->mbox.callq, &call->_link);
}

static int call_push(struct xc_cpu *c, struct xc_call *call, unsigned flags)
{
	bool urgent = flags & XC_URGENT;
	int r;

	if (urgent && !xc_urgent_enter())
		return -ENXIO;
	r = call_enqueue(c, call, urgent);
	xc_call_kick(c, r, urgent);
	if (urgent)
		xc_urgent_leave();
	return r == XC_PUSH_CLOSED ? -ENXIO : 0;
}

/*
 * A thread's call to its own CPU runs inline, but not while that CPU is
 * offline (an attached thread's, taken by the user or the OS): then it gets
 * -ENXIO as every other thread's call does. A worker draining its queue is
 * still online until the drain is over (xc_cpu_drain).
 */
static bool self_online(struct xc_cpu *self)
{
	/* relaxed: this thread's own word, or hotplug's under the lock before the CPU reopens */
	return atomic_load_explicit(&self->life.online, memory_order_relaxed);
}

/*
 * Inline async calls' completions still to come, in the order their
 * functions ran: a callback that queues its descriptor again to its own
 * CPU would otherwise nest a callback in each link of the chain, and
 * overflow the stack. The first inline completion of a thread runs them
 * in a loop once its callback returns (a trampoline); a completion met
 * inside that callback joins the list. Each descriptor stays in flight
 * until its completion, so its link is free to use (XC_CALL_INFLIGHT is
 * set). One list per ring set (xc_in_urgent): the urgent handler may
 * interrupt a callback, never the loop, which runs in libxcall's code.
 */
struct done_trampoline {
	struct xc_call *head, *tail;
	bool running;
};
static __xc_tls struct done_trampoline trampolines[2];

/* An inline call's completion: now, or after the callback running on this thread. */
static void inline_done(struct xc_call *async)
{
	struct done_trampoline *t = &trampolines[xc_in_urgent];

	async->_link.next = NULL;
	if (t->running) {
		if (t->tail)
			t->tail->_link.next = &async->_link;
		else
			t->head = async;
		t->tail = async;
		return;
	}
	t->running = true;
	for (;;) {
		xc_call_async_done(async);	/* the descriptor may be gone from here */
		async = t->head;
		if (!async)
			break;
		t->head = async->_link.next ? xc_container_of(async->_link.next, struct xc_call, _link) : NULL;
		if (!t->head)
			t->tail = NULL;
	}
	t->running = false;
}

/*
 * An inline call; @async: its descriptor, completed (and its callback run)
 * right after fn, or after the callback this call was made from
 * (inline_done); @urgent: an XC_URGENT call, whose rules hold inline too.
 */
static void call_inline(struct xc_cpu *self, xc_func_t fn, void *arg, struct xc_call *async, bool urgent)
{
	if (urgent)
		xc_user_run(XC_USER_URGENT, fn, arg);
	else
		xc_user_run(XC_USER_CALL, fn, arg);
	if (async)
		inline_done(async);
	xc_os_after_run(self);
	if (xc_in_urgent) {
		xc_stat_inc_shared(&self->worker.urgent_calls);
		return;
	}
	xc_stat_inc_own(&self->worker.calls);
	/* inside another call's function, that call's return runs them: it is never interrupted */
	if (!xc_in_call)
		xc_call_returned(self);
}

/* Flags that make no sense or could never finish. */
static int check_flags(unsigned flags)
{
	if (flags & ~XC_FLAGS_ALL)
		return -EINVAL;
	if ((flags & XC_WAIT) && (xc_urgent_rules() || xc_in_fd_sleep()))
		return -EDEADLK;	/* nothing runs on this CPU until the handler returns; a sleep announced */
	return 0;
}

/* The checks every mask call starts with: arguments, then whether calls are accepted. */
static int check_mask_call(const cpu_set_t *mask, xc_func_t fn, unsigned flags)
{
	int ret;

	if (!mask || !fn || CPU_COUNT(mask) == 0)
		return -EINVAL;
	ret = check_flags(flags);
	if (ret)
		return ret;
	return xc_rt_accepting() ? 0 : -ENXIO;
}

/*
 * Owner: write one entry and publish it; its index in *idx. The caller
 * then rings the doorbell (xc_ring_doorbell) before it returns to the
 * application, after publishing every entry of a many call. The ring full:
 * it waits for room (xc_ring_wait_room), or gets its error: -ENOMEM in the
 * urgent handler, which must not wait; -ENXIO if the CPU is closed.
 */
static inline int ring_put(struct xc_ring *r, xc_func_t fn, void *arg, uint32_t flow, uint32_t *idx)
{
	/* relaxed: only the owner writes head */
	uint32_t h = atomic_load_explicit(&r->head, memory_order_relaxed);

	if (xc_unlikely(h - r->tail_seen == r->size)) {
		int err = xc_ring_wait_room(r);

		if (err)
			return err;
		/* calls served while it waited may have put entries of their own: read it again */
		h = atomic_load_explicit(&r->head, memory_order_relaxed);
	}
	*idx = xc_ring_push(r, h, fn, arg, flow);
	return 0;
}

/* Whether a call goes through the sender's ring; else as a descriptor on a shared list. */
static inline bool via_ring(unsigned flags)
{
	return !(flags & XC_URGENT) && !xc_ablated(XC_ABLATE_RING);
}

/* One call through the calling thread's ring to @c: fn(arg), or a marker (struct xc_ring_entry). */
static inline __attribute__((always_inline)) int ring_call(struct xc_cpu *c, xc_func_t fn,
							   void *arg, const void *traced_fn)
{
	struct xc_ring *r = xc_ring_get(c);
	uint32_t flow = xc_trace_flow(), idx;

	if (xc_unlikely(!r))
		return -ENOMEM;
	xc_trace(XC_EV_QUEUE, c->life.cpu, flow, traced_fn);
	int err = ring_put(r, fn, arg, flow, &idx);

	if (xc_unlikely(err))
		return err;
	return xc_ring_doorbell(c, r, idx);
}

/*
 * Whether a waiting call may take @cpu's slot and stay in order: the slot
 * runs before the rings, so only when our ring to @c holds nothing untaken.
 */
static inline bool slot_in_order(int cpu, int set)
{
	/* ablated, no rings are made: none to peek at */
	struct xc_ring *r = xc_ring_peek_in(cpu, set);

	return !r || xc_ring_empty(r);
}

/*
 * A single call as a descriptor on the CPU's shared list: XC_URGENT calls,
 * and every call with XC_ABLATE_RING.
 * Out of line: the common path has no 64-byte-aligned descriptor in its frame.
 */
static __attribute__((noinline)) int single_list(struct xc_cpu *c, xc_func_t fn, void *arg,
						 unsigned flags, const struct xc_waitinfo *wi)
{
	struct xc_call *call;
	int ret;

	if (flags & XC_WAIT) {
		struct xc_call on_stack = { .fn = fn, .arg = arg };

		/* relaxed: published by the push's release */
		atomic_store_explicit(&on_stack._flags, XC_CALL_WAITED, memory_order_relaxed);
		xc_completion_init(&on_stack._done, 1);
		on_stack._completion = &on_stack._done;
		ret = call_push(c, &on_stack, flags);
		if (!ret)
			xc_completion_wait(&on_stack._done, 0, wi);
		return ret;
	}
	call = xc_pool_get();
	if (!call)
		return -ENOMEM;
	call->fn = fn;
	call->arg = arg;
	call->_completion = NULL;
	atomic_store_explicit(&call->_flags, XC_CALL_POOL, memory_order_relaxed);
	ret = call_push(c, call, flags);
	if (ret)
		xc_pool_put_local(call);
	return ret;
}

static inline __attribute__((always_inline)) int call_single(int cpu, xc_func_t fn, void *arg,
							   unsigned flags)
{
	struct xc_cpu *c;
	int ret;

	if (!fn)
		return -EINVAL;
	ret = check_flags(flags);
	if (ret)
		return ret;
	c = xc_cpu_get(cpu);
	if (!c)
		return -ENXIO;
	if (c == xc_self) {
		if (!self_online(c))
			return -ENXIO;
		call_inline(c, fn, arg, NULL, flags & XC_URGENT);
		return 0;
	}
	if (xc_likely(!(flags & XC_WAIT))) {
		if (xc_likely(via_ring(flags)))
			return ring_call(c, fn, arg, (const void *)fn);
		return single_list(c, fn, arg, flags, NULL);
	}
	struct xc_waitinfo wi = { fn, arg, &cpu, 1 };

	if (!(flags & XC_URGENT) && !xc_ablated(XC_ABLATE_SLOT) && slot_in_order(cpu, xc_in_urgent) &&
	    xc_slot_call(c, fn, arg, &wi) == 0)
		return 0;
	if (!via_ring(flags))
		return single_list(c, fn, arg, flags, &wi);
	/*
	 * What the worker reads (fn, arg) and the completion it writes, in one
	 * line: apart, as the frame happens to place them, each call moves
	 * both lines (count-lines saw 5 + 5 lines a call against 4 + 4).
	 */
	struct {
		struct xc_ring_waited w;
		struct xc__completion done;
	} __xc_aligned rec;

	rec.w = (struct xc_ring_waited){ fn, arg, &rec.done, 0 };
	xc_completion_init(&rec.done, 1);
	ret = ring_call(c, XC_RING_WAITED, &rec.w, (const void *)fn);
	if (ret)
		return ret;
	xc_completion_wait(&rec.done, 0, &wi);
	/* relaxed: the completion's acquire ordered it; -ELOOP: refused unrun (ring.c) */
	return atomic_load_explicit(&rec.w.err, memory_order_relaxed);
}

/* The general way, out of line: the straight path below then needs no frame of its own. */
static __attribute__((noinline)) int call_single_guarded(int cpu, xc_func_t fn, void *arg,
							   unsigned flags)
{
	return XC_GUARDED(call_single(cpu, fn, arg, flags));
}

/*
 * The straight path fell back: out again, then the general way. Out of line,
 * so that the straight path keeps no register for it.
 */
static __attribute__((noinline)) int call_single_unmarked(int cpu, xc_func_t fn, void *arg,
							    unsigned flags)
{
	xc_leave(0);
	return call_single_guarded(cpu, fn, arg, flags);
}

/*
 * A straight path's way in (below), for a thread that xc_tls_clear() found
 * in nobody's way: inside libxcall, in flight before the look at @gate, as
 * xc_enter() (inflight.c); whether @gate is open to @cpu. The path leaves
 * with xc_leave(0), or through call_single_unmarked().
 */
static inline __attribute__((always_inline)) bool straight_enter(_Atomic int *gate, int cpu)
{
	xc_inside_store(XC_INSIDE_CODE);
	atomic_signal_fence(memory_order_seq_cst);
	/* acquire: pairs with the gate's release at xc_init (bringup.c) */
	return (unsigned)cpu < (unsigned)atomic_load_explicit(gate, memory_order_acquire);
}

/* The nowait straight path's idle ring: its doorbell, and the way out. */
static __attribute__((noinline)) int nowait_doorbell(struct xc_cpu *c, struct xc_ring *r, uint32_t idx)
{
	int ret = xc_ring_doorbell_slow(c, r, idx);

	xc_leave(0);
	return ret;
}

/*
 * The nowait straight path (below), out of line: the waiting one keeps its
 * registers and its first instructions. A call into a linked ring calls
 * nothing, and saves no register.
 */
static __attribute__((noinline)) int call_single_nowait(int cpu, xc_func_t fn, void *arg)
{
	if (straight_enter(&xc_rt.ring_fast_cpus, cpu)) {
		/* not in the urgent handler: our ring set is the first */
		struct xc_ring *r = xc_ring_peek_in(cpu, 0);
		/* relaxed: only the owner writes head */
		uint32_t h = r ? atomic_load_explicit(&r->head, memory_order_relaxed) : 0;

		/* our ring to @cpu is to &xc_cpus[cpu]: its target, on its read-only line */
		if (r && r->target != xc_self && xc_ring_has_room(r, h)) {
			/* untraced: no flow */
			uint32_t idx = xc_ring_push(r, h, fn, arg, 0);

			/* coalescing not ablated: the gate is shut then */
			if (xc_unlikely(!xc_ring_rides_when(r, true)))
				return nowait_doorbell(r->target, r, idx);
			xc_leave(0);
			return 0;
		}
	}
	return call_single_unmarked(cpu, fn, arg, 0);
}

/*
 * A nowait call takes the straight path into the calling thread's ring to
 * @cpu when this thread is in nobody's way (xc_tls_clear()), the gate is open
 * to @cpu (xc_rt.ring_fast_cpus: up, not tracing, rings and coalescing not ablated), the
 * thread has a ring to it made by this runtime, @cpu is not the thread's own
 * (whose calls run inline), and the ring has room: the put and the doorbell, as ring_call
 * does them, between the in-flight mark and its clear. Anything else (no
 * ring yet, a full one) goes the general way.
 *
 * A waiting call takes the straight path into the slot (slot.c) when this
 * thread is in nobody's way (xc_tls_clear(): outside libxcall and listed,
 * not in the urgent handler or an attached sleep), the gate is open to @cpu, @cpu
 * is not this thread's own, and our ring to it holds nothing untaken, which
 * the slot would overtake. Anything else, and a slot found held or closed,
 * goes the general way, which says why a call cannot be made.
 */
int xc_call_single(int cpu, xc_func_t fn, void *arg, unsigned flags)
{
	if (xc_likely(flags == XC_WAIT) && fn && xc_tls_clear()) {
		if (straight_enter(&xc_rt.slot_fast_cpus, cpu)) {
			struct xc_cpu *c = &xc_cpus[cpu], *self = xc_self;

			/* not in the urgent handler: our ring set is the first */
			if (c != self && slot_in_order(cpu, 0) && xc_slot_publish(c, fn, arg, self, false))
				return xc_slot_finish_straight(c);
		}
		return call_single_unmarked(cpu, fn, arg, flags);
	}
	if (flags == 0 && fn && xc_tls_clear())
		return call_single_nowait(cpu, fn, arg);
	return call_single_guarded(cpu, fn, arg, flags);
}

static int call_async(int cpu, struct xc_call *call)
{
	struct xc_cpu *c;
	uint16_t idle = 0;
	int ret;

	if (!call || !call->fn)
		return -EINVAL;
	c = xc_cpu_get(cpu);
	if (!c)
		return -ENXIO;
	/* acquire: the previous run's effects happen before this reuse */
	if (!atomic_compare_exchange_strong_explicit(&call->_flags, &idle,
						     XC_CALL_ASYNC | XC_CALL_INFLIGHT,
						     memory_order_acquire, memory_order_relaxed))
		return -EBUSY;
	call->_completion = NULL;
	if (c == xc_self) {
		if (!self_online(c)) {
			atomic_store_explicit(&call->_flags, 0, memory_order_relaxed);
			return -ENXIO;
		}
		call_inline(c, call->fn, call->arg, call, false);	/* its callback too, inline */
		return 0;
	}
	if (via_ring(0))
		ret = ring_call(c, XC_RING_ASYNC, call, (const void *)call->fn);
	else
		ret = call_push(c, call, 0);
	if (ret)
		atomic_store_explicit(&call->_flags, 0, memory_order_release);
	return ret;
}

int xc_call_async(int cpu, struct xc_call *call)
{
	return XC_GUARDED(call_async(cpu, call));
}

bool xc_call_done(const struct xc_call *call)
{
	/* acquire: pairs with call_run's release, so fn's effects are visible */
	return !call || !(atomic_load_explicit((_Atomic uint16_t *)&call->_flags,
					       memory_order_acquire) & XC_CALL_INFLIGHT);
}

/*
 * The many-call's sending through the rings: one entry in our ring to each
 * target, then the doorbells. Returns how many targets it reached; each
 * target refused (closed meanwhile) completes @sync for itself. A waiting
 * call's entries point at @w, which the caller keeps until @sync is done.
 */
static int many_ring(const int *targets, int nt, xc_func_t fn, void *arg, unsigned flags,
		     struct xc__completion *sync, struct xc_ring_waited *w)
{
	struct xc_ring *rings[nt ? nt : 1];
	uint32_t idx[nt ? nt : 1];
	xc_func_t put_fn = (flags & XC_WAIT) ? XC_RING_WAITED : fn;
	void *put_arg = (flags & XC_WAIT) ? (void *)w : arg;
	int sent = 0, i;

	/*
	 * every ring, and room in each where none is waited for (the urgent
	 * handler, an attached thread's announced sleep), before any entry: all or nothing
	 */
	for (i = 0; i < nt; i++) {
		rings[i] = xc_ring_get(&xc_cpus[targets[i]]);
		if (!rings[i])
			return -ENOMEM;
		if (xc_urgent_rules() || xc_in_fd_sleep()) {
			int err = xc_ring_wait_room(rings[i]);

			if (err == -ENOMEM || err == -EDEADLK)
				return err;
		}
	}
	xc_completion_init(sync, (uint32_t)nt);
	for (i = 0; i < nt; i++) {
		uint32_t flow = xc_trace_flow();

		xc_trace(XC_EV_QUEUE, targets[i], flow, (const void *)fn);
		/*
		 * room was made above in the handler; elsewhere put waits for it,
		 * or the CPU is closed (skipped), or its worker serves below its
		 * floor (refused, as a waiting call it refuses: ring.c)
		 */
		int err = ring_put(rings[i], put_fn, put_arg, flow, &idx[i]);

		if (err) {
			rings[i] = NULL;
			if (err == -ELOOP)
				/* relaxed: this thread reads it once the targets' completions are in */
				atomic_store_explicit(&w->err, -ELOOP, memory_order_relaxed);
			xc_complete(sync);
		}
	}
	for (i = 0; i < nt; i++) {
		if (!rings[i])
			continue;
		if (xc_ring_doorbell(&xc_cpus[targets[i]], rings[i], idx[i]) == 0)
			sent++;
		else
			xc_complete(sync);	/* went offline meanwhile: skipped */
	}
	return sent;
}

/* The same as descriptors on the targets' shared lists: urgent calls, and XC_ABLATE_RING. */
static int many_list(const int *targets, int nt, xc_func_t fn, void *arg, unsigned flags,
		     struct xc__completion *sync)
{
	struct xc_call *d[nt ? nt : 1];
	signed char pushed[nt ? nt : 1];
	bool urgent = flags & XC_URGENT;
	int sent = 0, i;

	/* every descriptor before queueing any, so -ENOMEM leaves nothing half sent */
	for (i = 0; i < nt; i++) {
		d[i] = xc_pool_get();
		if (!d[i]) {
			while (i--)
				xc_pool_put_local(d[i]);
			return -ENOMEM;
		}
	}
	if (urgent && !xc_urgent_enter()) {
		for (i = 0; i < nt; i++)
			xc_pool_put_local(d[i]);
		return -ENXIO;
	}
	xc_completion_init(sync, (uint32_t)nt);
	for (i = 0; i < nt; i++) {
		struct xc_call *call = d[i];

		call->fn = fn;
		call->arg = arg;
		call->_completion = (flags & XC_WAIT) ? sync : NULL;
		atomic_store_explicit(&call->_flags,
				      XC_CALL_POOL | ((flags & XC_WAIT) ? XC_CALL_WAITED : 0),
				      memory_order_relaxed);
		pushed[i] = (signed char)call_enqueue(&xc_cpus[targets[i]], call, urgent);
		if (pushed[i] == XC_PUSH_CLOSED) {
			xc_pool_put_local(call);
			xc_complete(sync);	/* went offline meanwhile: skipped */
		} else {
			sent++;
		}
	}
	for (i = 0; i < nt; i++)
		xc_call_kick(&xc_cpus[targets[i]], pushed[i], urgent);
	if (urgent)
		xc_urgent_leave();
	return sent;
}

/*
 * The many-call path behind many / cond / all: pick the targets, send to
 * all, then run locally, then wait.
 */
static int call_many(const cpu_set_t *mask, xc_cond_t cond, xc_func_t fn, void *arg,
		     unsigned flags)
{
	struct xc__completion sync;
	struct xc_cpu *self = xc_self;
	bool run_local = false;
	int nt = 0, sent, i;
	cpu_set_t inside;
	int ret = check_mask_call(mask, fn, flags);

	if (ret)
		return ret;
	CPU_AND(&inside, mask, &xc_rt.cfg.cpus);
	if (!CPU_EQUAL(&inside, mask))
		return -ENXIO;

	/*
	 * On the stack, sized by the set (at least 1 while calls are accepted),
	 * as the sending's arrays: a many call nests, in every wait that serves
	 * (wait.c), so its frame is paid once per level.
	 */
	int targets[xc_rt.nr_cpus];

	for (i = 0; i < xc_rt.nr_cpus; i++) {
		int cpu = xc_rt.cpu_list[i];

		if (!CPU_ISSET(cpu, mask))
			continue;
		/* relaxed: a hint; the queue's closed state is the authority */
		if (!atomic_load_explicit(&xc_cpus[cpu].life.online, memory_order_relaxed))
			continue;
		if (cond) {
			struct xc_user_mark m = xc_user_in(XC_USER_HOOK, false);
			bool wanted = cond(cpu, arg);

			xc_user_out(XC_USER_HOOK, false, m);
			if (!wanted)
				continue;
		}
		if (self && cpu == self->life.cpu)
			run_local = flags & XC_RUN_LOCAL;
		else
			targets[nt++] = cpu;
	}

	/* on this stack until the wait below ends: a waiting call's entries point at it */
	struct xc_ring_waited w = { fn, arg, &sync, 0 };

	if (via_ring(flags))
		sent = many_ring(targets, nt, fn, arg, flags, &sync, &w);
	else
		sent = many_list(targets, nt, fn, arg, flags, &sync);
	if (sent < 0)
		return sent;
	if (run_local) {
		call_inline(self, fn, arg, NULL, flags & XC_URGENT);
		sent++;
	}
	if (flags & XC_WAIT) {
		struct xc_waitinfo wi = { fn, arg, targets, nt };

		xc_completion_wait(&sync, 0, &wi);
	}
	/* relaxed: the completion's acquire ordered the targets'; a target refused it unrun (ring.c) */
	if (atomic_load_explicit(&w.err, memory_order_relaxed))
		return -ELOOP;
	return sent;
}

int xc_call_many(const cpu_set_t *mask, xc_func_t fn, void *arg, unsigned flags)
{
	return XC_GUARDED(call_many(mask, NULL, fn, arg, flags));
}

static int call_cond(const cpu_set_t *mask, xc_cond_t cond, xc_func_t fn, void *arg, unsigned flags)
{
	if (!cond)
		return -EINVAL;
	return call_many(mask, cond, fn, arg, flags);
}

int xc_call_cond(const cpu_set_t *mask, xc_cond_t cond, xc_func_t fn, void *arg, unsigned flags)
{
	return XC_GUARDED(call_cond(mask, cond, fn, arg, flags));
}

static int call_all(xc_func_t fn, void *arg, unsigned flags)
{
	if (!xc_rt_accepting())
		return fn && !(flags & ~XC_FLAGS_ALL) ? -ENXIO : -EINVAL;
	return call_many(&xc_rt.cfg.cpus, NULL, fn, arg, flags);
}

int xc_call_all(xc_func_t fn, void *arg, unsigned flags)
{
	return XC_GUARDED(call_all(fn, arg, flags));
}

/* Topological distance from @ref to @cpu: 0 same CPU, 1 same LLC, 2 same node, 3 farther. */
static int cpu_distance(int ref, int cpu)
{
	if (ref == cpu)
		return 0;
	if (ref < 0 || ref >= XC_MAX_CPUS || !xc_cpus[ref].life.present)
		return 3;
	if (xc_cpus[ref].life.llc_id == xc_cpus[cpu].life.llc_id)
		return 1;
	if (xc_cpus[ref].life.node_id == xc_cpus[cpu].life.node_id)
		return 2;
	return 3;
}

static int call_any(const cpu_set_t *mask, xc_func_t fn, void *arg, unsigned flags)
{
	cpu_set_t left;
	int ref, ret = check_mask_call(mask, fn, flags);

	if (ret)
		return ret;
	ref = xc_self ? xc_self->life.cpu : sched_getcpu();
	CPU_AND(&left, mask, &xc_rt.cfg.cpus);
	/* retry with the next nearest if the chosen CPU goes offline under us */
	for (;;) {
		int best = -1, best_d = 4;

		for (int i = 0; i < xc_rt.nr_cpus; i++) {
			int cpu = xc_rt.cpu_list[i], d;

			if (!CPU_ISSET(cpu, &left) ||
			    !atomic_load_explicit(&xc_cpus[cpu].life.online, memory_order_relaxed))
				continue;
			d = cpu_distance(ref, cpu);
			if (d < best_d) {
				best = cpu;
				best_d = d;
			}
		}
		if (best < 0)
			return -ENXIO;
		ret = call_single(best, fn, arg, flags);
		if (ret != -ENXIO)
			return ret < 0 ? ret : best;
		CPU_CLR(best, &left);
	}
}

int xc_call_any(const cpu_set_t *mask, xc_func_t fn, void *arg, unsigned flags)
{
	return XC_GUARDED(call_any(mask, fn, arg, flags));
}

int xc_this_cpu(void)
{
	if (xc_likely(xc_self))
		return xc_self->life.cpu;
	/* a worker's bringup hook (worker.c) */
	return xc_unlikely(xc_tls.boot) ? xc_boot_cpu(xc_tls.boot) : -1;
}

static int poll_self(void)
{
	struct xc_cpu *self = xc_self;

	if (!self)
		return -ENXIO;
	if (xc_urgent_rules())
		return 0;	/* the handler may have interrupted this worker inside its own run */
	/*
	 * Inside an attached thread's announced sleep (a handler that landed
	 * before the loop's own wait, or a call that handler ran inline): the
	 * task loop would end the sleep behind the loop's back, and senders
	 * would then skip the kick of a loop about to block. Refused from a
	 * call too: only the loop's own xc_worker_sleep_end() ends the
	 * announcement, and a sender's kick brings its next xc_poll().
	 */
	if (xc_unlikely(xc_in_fd_sleep()))
		return -EDEADLK;
	if (xc_unlikely(self->life.attached) && !self->worker.in_task_loop && !xc_in_call)
		return xc_attached_poll(self);	/* an attached thread's own loop: its task loop */
	return xc_wait_serve();	/* a serve as a wait's: below the serve floor it nests no deeper */
}

int xc_poll(void)
{
	return XC_GUARDED(poll_self());
}
