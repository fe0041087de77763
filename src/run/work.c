// SPDX-License-Identifier: MIT
/*
 * work.c - deferred per-CPU work items: the worker's task context.
 *
 * Producers push on the CPU's work queue (the same MPSC list as calls); the
 * worker moves what it takes to a private FIFO and runs one item at a time,
 * running its calls before each. An item is pending from xc_queue_work()
 * until it starts, so it may be queued again while it runs.
 */
#include "base/internal.h"
#include "base/thread.h"
#include "proto/wake.h"
#include "run/stuck.h"
#include "run/os_check.h"
#include "run/work.h"
#include "base/trace.h"

#include <errno.h>

static int queue_work(int cpu, struct xc_work *work)
{
	struct xc_cpu *c;
	unsigned idle = 0;
	int r;

	if (!work || !work->fn)
		return -EINVAL;
	c = xc_cpu_get(cpu);
	if (!c)
		return -ENXIO;
	/* acq_rel: claim the item; a previous run's start happened before this */
	if (!atomic_compare_exchange_strong_explicit(&work->_flags, &idle, XC_WORK_PENDING,
						     memory_order_acq_rel, memory_order_relaxed))
		return -EBUSY;
	work->_src_cpu = xc_self ? xc_self->life.cpu : -1;
	work->_trace_id = xc_trace_flow();
	xc_trace(XC_EV_WORK_QUEUE, cpu, work->_trace_id, (const void *)work->fn);
	r = xc_llist_push(&c->mbox.workq, &work->_link);
	if (r == XC_PUSH_CLOSED) {
		atomic_store_explicit(&work->_flags, 0, memory_order_release);
		return -ENXIO;
	}
	if (r == XC_PUSH_WAS_EMPTY || xc_ablated(XC_ABLATE_COALESCE)) {
		xc_kick(c);
	} else {
		xc_stat_inc_shared(&c->sent.kicks_coalesced);
		xc_trace(XC_EV_KICK_COALESCED, cpu, 0, NULL);
	}
	return 0;
}

int xc_queue_work(int cpu, struct xc_work *work)
{
	return XC_GUARDED(queue_work(cpu, work));
}

bool xc_work_pending(const struct xc_work *work)
{
	/* acquire: a false answer means the item's fn has been read by its worker */
	return work && (atomic_load_explicit((_Atomic unsigned *)&work->_flags,
					     memory_order_acquire) & XC_WORK_PENDING);
}

/* Append a taken (LIFO) list to the private FIFO. */
static void work_adopt(struct xc_cpu *c, struct xc__link *lifo)
{
	struct xc__link *l = xc_llist_reverse(lifo);

	if (!l)
		return;
	if (c->worker.work_tail)
		c->worker.work_tail->next = l;
	else
		c->worker.work_head = l;
	while (l->next)
		l = l->next;
	c->worker.work_tail = l;
}

/* Run the oldest work item, if any. */
bool xc_run_one_work(struct xc_cpu *c)
{
	struct xc__link *l;
	struct xc_work *work;
	struct xc_activity outer;
	xc_func_t fn;
	void *arg;
	uint32_t flow;
	int from;

	if (!c->worker.work_head)
		work_adopt(c, xc_llist_take(&c->mbox.workq));
	l = c->worker.work_head;
	if (!l)
		return false;
	c->worker.work_head = l->next;
	if (!c->worker.work_head)
		c->worker.work_tail = NULL;
	work = xc_container_of(l, struct xc_work, _link);
	fn = work->fn;
	arg = work->arg;
	flow = work->_trace_id;
	from = work->_src_cpu;
	/* release: fn and arg are read; the owner may requeue or free the item */
	atomic_store_explicit(&work->_flags, 0, memory_order_release);
	xc_activity_begin(c, XC_ACT_WORK, (const void *)fn,
			  xc_rt.cfg.stuck_ms > 0 ? xc_coarse_ns() : 0, &outer);
	xc_trace(XC_EV_WORK_ENTRY, from, flow, (const void *)fn);
	xc_user_run(XC_USER_WORK, fn, arg);
	xc_os_after_run(c);
	xc_trace(XC_EV_WORK_EXIT, from, flow, (const void *)fn);
	xc_activity_end(c, &outer);
	xc_stat_inc_own(&c->worker.work_run);
	return true;
}

/* Offline or exit: refuse new items, run every queued one (and calls they cause). */
int xc_drain_work(struct xc_cpu *c)
{
	int n = 0;

	work_adopt(c, xc_llist_close(&c->mbox.workq));
	while (xc_run_one_work(c))
		n++;
	return n;
}
