/*
 * hotplug: taking a CPU offline runs every call and work item already queued
 * to it (nothing lost, nothing twice), refuses new ones with -ENXIO, keeps
 * its counters; bringing it back online accepts calls again; a worker may
 * take another CPU offline from a call.
 */
#include "test.h"
#include <pthread.h>
#include <stdatomic.h>

#define NQ 250		/* queued behind a held call: fewer than a ring holds (256) */

static _Atomic int hits[NQ], gate, blocked, work_hits;
static int cpu1, cpu0;

static void hold(void *arg)
{
	atomic_store(&blocked, 1);
	while (!atomic_load(&gate))
		;
}

static void mark(void *arg)
{
	CHECK(xc_this_cpu() == cpu1);
	atomic_fetch_add(&hits[(long)arg], 1);
}

static void work_fn(void *arg)
{
	atomic_fetch_add(&work_hits, 1);
}

static void *release_later(void *arg)
{
	t_sleep_ms(50);
	atomic_store(&gate, 1);
	return NULL;
}

static void offline_other(void *arg)
{
	*(int *)arg = xc_cpu_offline(cpu1);
}

int main(void)
{
	static struct xc_work works[16];
	struct xc_stats st;
	int cpus[CPU_SETSIZE], ret = -1;
	pthread_t t;

	CHECK_RET(xc_init(NULL), 0);
	if (t_cpus(cpus) < 2) {
		xc_exit();
		t_skip("needs 2 CPUs");
	}
	cpu0 = cpus[0];
	cpu1 = cpus[1];

	/* hold the worker so that calls and work pile up in its queues */
	CHECK_RET(xc_call_single(cpu1, hold, NULL, 0), 0);
	WAIT_UNTIL(atomic_load(&blocked));
	for (long i = 0; i < NQ; i++)
		CHECK_RET(xc_call_single(cpu1, mark, (void *)i, 0), 0);
	for (int i = 0; i < 16; i++) {
		works[i].fn = work_fn;
		CHECK_RET(xc_queue_work(cpu1, &works[i]), 0);
	}
	pthread_create(&t, NULL, release_later, NULL);
	CHECK_RET(xc_cpu_offline(cpu1), 0);	/* returns after the drain */
	pthread_join(t, NULL);
	for (int i = 0; i < NQ; i++)
		CHECK(hits[i] == 1);
	CHECK(work_hits == 16);
	CHECK_RET(xc_call_single(cpu1, mark, (void *)0L, 0), -ENXIO);
	cpu_set_t on;
	CHECK_RET(xc_online_mask(&on), t_cpus(cpus) == 0 ? 0 : CPU_COUNT(&on));
	CHECK(!CPU_ISSET(cpu1, &on));
	CHECK_RET(xc_stats_get(cpu1, &st), 0);
	CHECK(st.calls == NQ + 1 && st.work_run == 16);

	CHECK_RET(xc_cpu_online(cpu1), 0);
	CHECK_RET(xc_call_single(cpu1, mark, (void *)1L, XC_WAIT), 0);
	CHECK(hits[1] == 2);

	/* from a worker, offline another CPU, then bring it back */
	CHECK_RET(xc_call_single(cpu0, offline_other, &ret, XC_WAIT), 0);
	CHECK(ret == 0);
	CHECK_RET(xc_call_single(cpu1, mark, (void *)2L, XC_WAIT), -ENXIO);
	CHECK_RET(xc_cpu_online(cpu1), 0);

	/* churn: nothing lost across many offline/online cycles with calls in flight */
	for (int round = 0; round < 50; round++) {
		for (long i = 0; i < 20; i++)
			CHECK_RET(xc_call_single(cpu1, mark, (void *)(100 + i), 0), 0);
		CHECK_RET(xc_cpu_offline(cpu1), 0);
		CHECK_RET(xc_cpu_online(cpu1), 0);
	}
	for (int i = 100; i < 120; i++)
		CHECK(hits[i] == 51);
	CHECK_RET(xc_exit(), 0);
	return T_PASS;
}
