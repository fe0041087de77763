/*
 * nowait-straight: a nowait call from a thread that already has a ring to
 * the CPU takes the straight path into it (call.c). Where that path must
 * not decide, the general way does, as it would without the ring:
 *   1. the caller is the CPU's attached thread (its ring to the CPU made
 *      before the attach, while the CPU refused calls): the call runs
 *      inline, before xc_call_single() returns;
 *   2. after the detach the CPU is closed: -ENXIO, and the function never
 *      runs (not at the next attach either);
 *   3. a worker's CPU taken offline: -ENXIO, never run; back online, calls
 *      run again, each once, on that CPU;
 *   4. a full ring (16 entries, the worker held in a call): the calls past
 *      it wait for room, none is refused, all run once, in order.
 */
#include "test.h"
#include <pthread.h>
#include <stdatomic.h>

#define FULL_CALLS 40

static int a_cpu, b_cpu;
static _Atomic int ran_on_a, ran_on_b, wrong_cpu, release, holding, sent;
static int order[FULL_CALLS], norder;

static void on_a(void *arg)
{
	if (xc_this_cpu() != a_cpu)
		atomic_fetch_add(&wrong_cpu, 1);
	atomic_fetch_add(&ran_on_a, 1);
}

static void on_b(void *arg)
{
	if (xc_this_cpu() != b_cpu)
		atomic_fetch_add(&wrong_cpu, 1);
	atomic_fetch_add(&ran_on_b, 1);
}

static void hold_b(void *arg)
{
	atomic_store(&holding, 1);
	WAIT_UNTIL(atomic_load(&release));
}

static void record(void *arg)
{
	order[norder++] = (int)(long)arg;	/* B's worker alone writes it */
}

static void nothing(void *arg)
{
}

/* Releases B's worker once the main thread is past the ring's room: 16 calls returned. */
static void *releaser(void *arg)
{
	WAIT_UNTIL(atomic_load(&sent) >= 16);
	atomic_store(&release, 1);
	return NULL;
}

int main(void)
{
	char set[16];
	struct xc_opts o = { .attach = set, .ring_entries = 16 };
	int cpus[CPU_SETSIZE], n;
	pthread_t t;

	a_cpu = t_attach_first_cpu(set, sizeof(set));
	CHECK_RET(xc_init(&o), 0);
	n = t_cpus(cpus);
	b_cpu = cpus[n - 1];
	CHECK(b_cpu != a_cpu);

	/* 1. the ring to A is made by a refused call; then A's own thread calls A */
	CHECK_RET(xc_call_single(a_cpu, on_a, NULL, 0), -ENXIO);
	CHECK_RET(atomic_load(&ran_on_a), 0);
	t_attach_pinned(a_cpu);
	CHECK_RET(xc_call_single(a_cpu, on_a, NULL, 0), 0);
	CHECK_RET(atomic_load(&ran_on_a), 1);	/* inline: before the return */

	/* 2. detached: A closed, the call refused and never run */
	CHECK_RET(xc_worker_detach(), 0);
	CHECK_RET(xc_call_single(a_cpu, on_a, NULL, 0), -ENXIO);
	t_attach_pinned(a_cpu);
	CHECK_RET(xc_poll(), 0);
	CHECK_RET(xc_worker_detach(), 0);
	CHECK_RET(atomic_load(&ran_on_a), 1);

	/* 3. B offline and back, its ring made before */
	CHECK_RET(xc_call_single(b_cpu, on_b, NULL, 0), 0);
	CHECK_RET(xc_call_single(b_cpu, nothing, NULL, XC_WAIT), 0);
	CHECK_RET(atomic_load(&ran_on_b), 1);
	CHECK_RET(xc_cpu_offline(b_cpu), 0);
	CHECK(!t_online(b_cpu));
	CHECK_RET(xc_call_single(b_cpu, on_b, NULL, 0), -ENXIO);
	CHECK_RET(xc_cpu_online(b_cpu), 0);
	CHECK_RET(xc_call_single(b_cpu, on_b, NULL, 0), 0);
	CHECK_RET(xc_call_single(b_cpu, nothing, NULL, XC_WAIT), 0);
	CHECK_RET(atomic_load(&ran_on_b), 2);

	/* 4. a full ring: B's worker held, 40 calls through a ring of 16 */
	CHECK_RET(xc_call_single(b_cpu, hold_b, NULL, 0), 0);
	WAIT_UNTIL(atomic_load(&holding));
	CHECK(pthread_create(&t, NULL, releaser, NULL) == 0);
	for (long i = 0; i < FULL_CALLS; i++) {
		CHECK_RET(xc_call_single(b_cpu, record, (void *)i, 0), 0);
		atomic_store(&sent, (int)i + 1);
	}
	CHECK_RET(xc_call_single(b_cpu, nothing, NULL, XC_WAIT), 0);
	CHECK(pthread_join(t, NULL) == 0);
	CHECK_RET(norder, FULL_CALLS);
	for (int i = 0; i < FULL_CALLS; i++)
		CHECK_RET(order[i], i);

	CHECK_RET(atomic_load(&wrong_cpu), 0);
	CHECK_RET(xc_exit(), 0);
	return T_PASS;
}
