/*
 * attach-offline-nested: an attached thread serves an offline request of its
 * CPU once, even when the drain that serves it runs a work item that calls
 * xc_poll(). The thread detaches while xc_cpu_offline() of its CPU holds the
 * hotplug lock: its wait for the lock serves the request, the drain runs the
 * work item queued before it, and the item's xc_poll() must not serve the
 * same request again, nested (it did: the request's completion, a count of
 * one, was completed twice and wrapped, and a later wait on it could hang;
 * found by the scenario fuzzer). Checked: the offline returns 0, the item ran
 * once and its xc_poll() returned, the completion word reads 0 (not wrapped),
 * and the CPU comes back online and runs calls.
 */
#include "test.h"
#include "base/internal.h"
#include <pthread.h>
#include <stdatomic.h>

static int attach_cpu;
static _Atomic int attached, detach_go, detached, item_ran, item_polled, ran;

static void count(void *arg)
{
	atomic_fetch_add(&ran, 1);
}

static void item_polls(void *arg)
{
	atomic_fetch_add(&item_ran, 1);
	xc_poll();
	atomic_fetch_add(&item_polled, 1);
}

static void *loop(void *arg)
{
	t_attach_pinned(attach_cpu);
	atomic_store(&attached, 1);
	WAIT_UNTIL(atomic_load(&detach_go));
	CHECK_RET(xc_worker_detach(), 0);	/* serves the pending offline while it waits for the lock */
	atomic_store(&detached, 1);
	return NULL;
}

static void *offline(void *arg)
{
	return (void *)(intptr_t)xc_cpu_offline(attach_cpu);
}

int main(void)
{
	char set[16];
	struct xc_opts o = { .attach = set };
	struct xc_work w = { .fn = item_polls };
	pthread_t t, off;
	void *res;

	attach_cpu = t_attach_first_cpu(set, sizeof(set));
	CHECK_RET(xc_init(&o), 0);
	CHECK(pthread_create(&t, NULL, loop, NULL) == 0);
	WAIT_UNTIL(atomic_load(&attached));
	/* the thread is not polling: the item and the request wait for it */
	CHECK_RET(xc_queue_work(attach_cpu, &w), 0);
	CHECK(pthread_create(&off, NULL, offline, NULL) == 0);
	WAIT_UNTIL(atomic_load_explicit(&xc_cpus[attach_cpu].life.ctl, memory_order_acquire) == XC_CTL_OFFLINE);
	atomic_store(&detach_go, 1);
	CHECK(pthread_join(off, &res) == 0);
	CHECK_RET((intptr_t)res, 0);
	CHECK(pthread_join(t, NULL) == 0);
	CHECK(atomic_load(&detached));
	CHECK(atomic_load(&item_ran) == 1);
	CHECK(atomic_load(&item_polled) == 1);
	/* completed once: a second completion wraps the count below zero */
	CHECK_RET(atomic_load(&xc_cpus[attach_cpu].life.offline_done.word) & XC_DONE_COUNT, 0);

	/* the CPU back, attached again: calls run there */
	CHECK_RET(xc_cpu_online(attach_cpu), 0);
	atomic_store(&attached, 0);
	atomic_store(&detach_go, 0);
	CHECK(pthread_create(&t, NULL, loop, NULL) == 0);
	WAIT_UNTIL(atomic_load(&attached));
	CHECK_RET(xc_call_single(attach_cpu, count, NULL, 0), 0);
	atomic_store(&detach_go, 1);
	CHECK(pthread_join(t, NULL) == 0);
	CHECK(atomic_load(&ran) == 1);		/* run by the detach's drain */
	CHECK_RET(xc_exit(), 0);
	return T_PASS;
}
