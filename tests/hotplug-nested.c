/*
 * hotplug-nested: a hotplug call made from a call that this thread's own
 * hotplug operation is running (served while it waits, or drained) would
 * wait for the lock its own thread holds: it gets -EDEADLK, at once, and
 * the outer operation completes.
 *   1. A call on CPU A takes CPU B offline while B is busy; the offline's
 *      wait serves a second call on A that takes B offline too: -EDEADLK,
 *      then the first offline completes once B is let go.
 *   2. An attached thread's xc_worker_detach() drains a queued call that
 *      takes CPU A offline: -EDEADLK, and the detach returns 0.
 *   3. The same drain runs a call that waits on a call to A, which takes
 *      B offline: A's worker waits for the lock that the detach holds while
 *      it waits on A, so A's call gets -EDEADLK, the drained call's wait
 *      returns 0, and the detach returns 0 (it hung; found by the scenario
 *      fuzzer, an attached thread's exit draining such a call).
 */
#include "test.h"
#include <stdatomic.h>

static int a, b;
static _Atomic int released, busy_started, outer_ret = 1, inner_ret = 1, attached, queued,
		   drained_ret = 1, detach_ret = 1;

static void busy(void *arg)
{
	atomic_store(&busy_started, 1);
	while (!atomic_load(&released))
		sched_yield();
}

static void outer(void *arg)
{
	atomic_store(&outer_ret, xc_cpu_offline(b));
}

static void inner(void *arg)
{
	atomic_store(&inner_ret, xc_cpu_offline(b));
}

static void served_in_offline(void)
{
	CHECK_RET(xc_init(NULL), 0);
	CHECK_RET(xc_call_single(b, busy, NULL, 0), 0);
	WAIT_UNTIL(atomic_load(&busy_started));
	CHECK_RET(xc_call_single(a, outer, NULL, 0), 0);
	/* after outer in A's queue: it runs only inside outer's wait, the lock held */
	CHECK_RET(xc_call_single(a, inner, NULL, 0), 0);
	WAIT_UNTIL(atomic_load(&inner_ret) != 1);
	CHECK_RET(atomic_load(&inner_ret), -EDEADLK);
	CHECK_RET(atomic_load(&outer_ret), 1);	/* still waiting for B */
	atomic_store(&released, 1);
	WAIT_UNTIL(atomic_load(&outer_ret) != 1);
	CHECK_RET(atomic_load(&outer_ret), 0);
	CHECK_RET(xc_cpu_online(b), 0);
	CHECK_RET(xc_exit(), 0);
}

static void offline_a(void *arg)
{
	atomic_store(&drained_ret, xc_cpu_offline(a));
}

/* 3: drained on B, a waiting call to A that takes B offline there */
static _Atomic int waited_ret = 1;

static void offline_b(void *arg)
{
	atomic_store(&drained_ret, xc_cpu_offline(b));
}

static void waits_on_a(void *arg)
{
	atomic_store(&waited_ret, xc_call_single(a, offline_b, NULL, XC_WAIT));
}

static void *attached_thread(void *arg)
{
	t_attach_pinned(b);
	atomic_store(&attached, 1);
	WAIT_UNTIL(atomic_load(&queued));
	atomic_store(&detach_ret, xc_worker_detach());	/* its drain runs offline_a */
	return NULL;
}

/* @drained: the call queued to B that the detach's drain runs */
static void drained_in_detach(xc_func_t drained)
{
	char list[16];
	struct xc_opts o = { .attach = list };
	pthread_t t;

	atomic_store(&attached, 0);
	atomic_store(&queued, 0);
	atomic_store(&drained_ret, 1);
	atomic_store(&detach_ret, 1);
	snprintf(list, sizeof(list), "%d", b);
	CHECK_RET(xc_init(&o), 0);
	CHECK(pthread_create(&t, NULL, attached_thread, NULL) == 0);
	WAIT_UNTIL(atomic_load(&attached));
	CHECK_RET(xc_call_single(b, drained, NULL, 0), 0);
	atomic_store(&queued, 1);
	CHECK(pthread_join(t, NULL) == 0);
	CHECK_RET(atomic_load(&detach_ret), 0);
	CHECK_RET(atomic_load(&drained_ret), -EDEADLK);
	CHECK_RET(xc_exit(), 0);
}

int main(void)
{
	int cpus[CPU_SETSIZE];

	CHECK_RET(xc_init(NULL), 0);
	if (t_cpus(cpus) < 2)
		t_skip("needs 2 CPUs");
	a = cpus[0];
	b = cpus[1];
	CHECK_RET(xc_exit(), 0);
	served_in_offline();
	drained_in_detach(offline_a);
	drained_in_detach(waits_on_a);
	CHECK_RET(atomic_load(&waited_ret), 0);
	puts("hotplug-nested: the nested hotplug calls got -EDEADLK, the outer ones completed");
	return T_PASS;
}
