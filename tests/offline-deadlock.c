/*
 * offline-deadlock: xc_cpu_offline(B) from a call on CPU A while B's worker
 * waits for that very call can never finish (B serves the request only once
 * its wait ends): it is refused with -EDEADLK, everything completes, and B
 * stays online. Two shapes: a work item on B, and a call on B, each waiting
 * on a call to A that takes B offline. When B's wait can finish (a work
 * item on A takes B offline while B waits on a call still queued to A),
 * the offline succeeds.
 */
#include "test.h"
#include <pthread.h>
#include <stdatomic.h>

static int a_cpu, b_cpu;
static _Atomic int offline_ret = 1, done, b_calling;

static void offline_b(void *arg)
{
	atomic_store(&offline_ret, xc_cpu_offline(b_cpu));
}

/* On B: wait for a call to A that takes B offline. */
static void b_waits_on_a(void *arg)
{
	CHECK_RET(xc_call_single(a_cpu, offline_b, NULL, XC_WAIT), 0);
	atomic_store(&done, 1);
}

static void noop(void *arg)
{
}

static void b_waits_on_queued(void *arg)
{
	atomic_store(&b_calling, 1);
	CHECK_RET(xc_call_single(a_cpu, noop, NULL, XC_WAIT), 0);
}

static void a_takes_b(void *arg)
{
	WAIT_UNTIL(atomic_load(&b_calling));
	offline_b(NULL);
	atomic_store(&done, 1);
}

int main(void)
{
	struct xc_work w = { .fn = b_waits_on_a }, wb = { .fn = b_waits_on_queued }, wa = { .fn = a_takes_b };
	int cpus[CPU_SETSIZE], n;

	CHECK_RET(xc_init(NULL), 0);
	n = t_cpus(cpus);
	if (n < 2) {
		xc_exit();
		t_skip("needs 2 CPUs");
	}
	a_cpu = cpus[0];
	b_cpu = cpus[n - 1];

	/* 1. a work item on B */
	CHECK_RET(xc_queue_work(b_cpu, &w), 0);
	WAIT_UNTIL(atomic_load(&done));
	CHECK_RET(atomic_load(&offline_ret), -EDEADLK);
	CHECK(t_online(b_cpu));

	/* 2. a call on B */
	atomic_store(&done, 0);
	atomic_store(&offline_ret, 1);
	CHECK_RET(xc_call_single(b_cpu, b_waits_on_a, NULL, 0), 0);
	WAIT_UNTIL(atomic_load(&done));
	CHECK_RET(atomic_load(&offline_ret), -EDEADLK);
	CHECK(t_online(b_cpu));
	CHECK_RET(xc_call_single(b_cpu, noop, NULL, XC_WAIT), 0);

	/* 3. B's wait can finish: the offline goes through */
	atomic_store(&done, 0);
	atomic_store(&offline_ret, 1);
	CHECK_RET(xc_queue_work(b_cpu, &wb), 0);
	CHECK_RET(xc_queue_work(a_cpu, &wa), 0);
	WAIT_UNTIL(atomic_load(&done));
	CHECK_RET(atomic_load(&offline_ret), 0);
	CHECK(!t_online(b_cpu));
	CHECK_RET(xc_cpu_online(b_cpu), 0);
	CHECK_RET(xc_call_single(b_cpu, noop, NULL, XC_WAIT), 0);
	CHECK_RET(xc_exit(), 0);
	return T_PASS;
}
