/*
 * work: work items run once each, in the order queued, on their CPU; calls
 * to that CPU run before the next item; inside a long item xc_poll() runs
 * pending calls at once; an item is -EBUSY while pending and may be queued
 * again once it has started.
 */
#include "test.h"
#include <stdatomic.h>

#define NW 64

static int order[NW], norder;
static _Atomic int call_ran, in_long, release_long, ran_inside_long;
static int cpu1;

static void record(void *arg)
{
	CHECK(xc_this_cpu() == cpu1);
	order[norder++] = (int)(long)arg;	/* one worker: no race */
}

static void mark_call(void *arg)
{
	/* inside the long item, i.e. from its xc_poll(), not after it */
	if (atomic_load(&in_long) && !atomic_load(&release_long))
		atomic_store(&ran_inside_long, 1);
	atomic_store(&call_ran, 1);
}

static void long_item(void *arg)
{
	atomic_store(&in_long, 1);
	/* a call queued now must run here, at xc_poll, not after this item */
	while (!atomic_load(&call_ran))
		xc_poll();
	while (!atomic_load(&release_long))
		;
}

/* Holds the worker until released, so that what is queued behind it is surely pending. */
static _Atomic int gate_open, in_gate;

static void gate_item(void *arg)
{
	atomic_store(&in_gate, 1);
	while (!atomic_load(&gate_open))
		;
}

static void nothing(void *arg)
{
}

static struct xc_work requeue;
static _Atomic int requeue_runs;

static void requeue_fn(void *arg)
{
	if (atomic_fetch_add(&requeue_runs, 1) == 0)
		CHECK_RET(xc_queue_work(xc_this_cpu(), &requeue), 0);	/* started: not pending */
}

int main(void)
{
	static struct xc_work items[NW];
	struct xc_work lw = { .fn = long_item };
	struct xc_stats before, after;
	int cpus[CPU_SETSIZE];

	CHECK_RET(xc_init(NULL), 0);
	if (t_cpus(cpus) < 2) {
		xc_exit();
		t_skip("needs 2 CPUs");
	}
	cpu1 = cpus[1];
	xc_stats_get(cpu1, &before);

	/*
	 * Behind an item that holds the worker, another is pending and -EBUSY;
	 * once the worker takes it, it is not. (Right after queueing it on an
	 * idle worker either may hold: taken, not yet in its first line.)
	 */
	struct xc_work gate = { .fn = gate_item };
	CHECK_RET(xc_queue_work(cpu1, &gate), 0);
	WAIT_UNTIL(atomic_load(&in_gate));
	CHECK_RET(xc_queue_work(cpu1, &lw), 0);
	CHECK(xc_work_pending(&lw));
	CHECK_RET(xc_queue_work(cpu1, &lw), -EBUSY);
	atomic_store(&gate_open, 1);

	/* the long item holds the worker; queue items behind it and a call */
	WAIT_UNTIL(atomic_load(&in_long));
	CHECK(!xc_work_pending(&lw));
	for (int i = 0; i < NW; i++) {
		items[i].fn = record;
		items[i].arg = (void *)(long)i;
		CHECK_RET(xc_queue_work(cpu1, &items[i]), 0);
	}
	CHECK_RET(xc_queue_work(cpu1, &items[NW - 1]), -EBUSY);
	CHECK_RET(xc_call_single(cpu1, mark_call, NULL, XC_WAIT), 0);	/* runs via xc_poll */
	CHECK(ran_inside_long == 1);
	CHECK(norder == 0);
	atomic_store(&release_long, 1);
	WAIT_UNTIL(!xc_work_pending(&items[NW - 1]));
	CHECK_RET(xc_call_single(cpu1, mark_call, NULL, XC_WAIT), 0);
	WAIT_UNTIL(norder == NW);
	for (int i = 0; i < NW; i++)
		CHECK(order[i] == i);

	requeue.fn = requeue_fn;
	CHECK_RET(xc_queue_work(cpu1, &requeue), 0);
	WAIT_UNTIL(atomic_load(&requeue_runs) == 2);
	/* an item is counted after it returns: a waiting call runs after that, and publishes it */
	CHECK_RET(xc_call_single(cpu1, nothing, NULL, XC_WAIT), 0);

	xc_stats_get(cpu1, &after);
	CHECK(after.work_run - before.work_run == 2 + NW + 2);
	CHECK_RET(xc_exit(), 0);
	CHECK(requeue_runs == 2);
	return T_PASS;
}
