/*
 * slot: waiting single calls, which travel in the target's mailbox slot when
 * it is free and through the queue when it is not, each run exactly once on
 * their CPU: from several threads racing for one slot; from a call that runs
 * xc_poll() or waits on another CPU while it holds the slot; across offline
 * (a call running in the slot when the CPU is taken offline completes once,
 * later ones get -ENXIO, and the slot works again once the CPU is back
 * online); and with the slot ablated, where every call takes the queue.
 */
#include "test.h"
#include "ablate.h"
#include <pthread.h>
#include <stdatomic.h>

#define THREADS 4

static int target, other_cpu;
static long per_thread;
static _Atomic long runs, wrong_cpu;
static _Atomic unsigned char *seen;	/* one per call id: how often it ran */

static void count_call(void *arg)
{
	long id = (long)arg;

	if (xc_this_cpu() != target)
		atomic_fetch_add(&wrong_cpu, 1);
	atomic_fetch_add(&seen[id], 1);
	atomic_fetch_add(&runs, 1);
}

static void *racer(void *arg)
{
	long base = (long)arg * per_thread;

	for (long i = 0; i < per_thread; i++)
		CHECK_RET(xc_call_single(target, count_call, (void *)(base + i), XC_WAIT), 0);
	return NULL;
}

/* Several threads race for one slot: every call runs once, on the target. */
static void race(void)
{
	pthread_t t[THREADS];
	long n = THREADS * per_thread;

	seen = calloc((size_t)n, 1);
	CHECK(seen);
	atomic_store(&runs, 0);
	for (long i = 0; i < THREADS; i++)
		CHECK(pthread_create(&t[i], NULL, racer, (void *)i) == 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	CHECK(atomic_load(&runs) == n);
	CHECK(atomic_load(&wrong_cpu) == 0);
	for (long i = 0; i < n; i++)
		CHECK(atomic_load(&seen[i]) == 1);
	free((void *)seen);
}

static _Atomic long leaf_runs, nested_runs;

static void leaf(void *arg)
{
	atomic_fetch_add(&leaf_runs, 1);
}

/* Runs in the slot: polls its own CPU and waits on another one meanwhile. */
static void nested(void *arg)
{
	atomic_fetch_add(&nested_runs, 1);
	CHECK(xc_poll() >= 0);
	CHECK_RET(xc_call_single(other_cpu, leaf, NULL, XC_WAIT), 0);
	CHECK(xc_poll() >= 0);
}

/* The other CPU calls back into the CPU whose slot is held, while it is held. */
static void call_back(void *arg)
{
	CHECK_RET(xc_call_single(target, leaf, NULL, XC_WAIT), 0);
}

static void nested_back(void *arg)
{
	atomic_fetch_add(&nested_runs, 1);
	CHECK_RET(xc_call_single(other_cpu, call_back, NULL, XC_WAIT), 0);
}

static _Atomic int slow_started;

static void slow(void *arg)
{
	atomic_store(&slow_started, 1);
	t_sleep_ms(50);
	atomic_fetch_add(&runs, 1);
}

static void *slow_caller(void *arg)
{
	CHECK_RET(xc_call_single(target, slow, NULL, XC_WAIT), 0);
	return NULL;
}

int main(void)
{
	int cpus[CPU_SETSIZE];
	pthread_t t;

	per_thread = t_env_long("XCALL_SLOT_CALLS", 20000);
	CHECK_RET(xc_init(NULL), 0);
	if (t_cpus(cpus) < 2) {
		xc_exit();
		t_skip("needs 2 CPUs");
	}
	target = cpus[0];
	other_cpu = cpus[1];

	race();

	for (int i = 0; i < 1000; i++) {
		CHECK_RET(xc_call_single(target, nested, NULL, XC_WAIT), 0);
		CHECK_RET(xc_call_single(target, nested_back, NULL, XC_WAIT), 0);
	}
	CHECK(atomic_load(&nested_runs) == 2000);
	CHECK(atomic_load(&leaf_runs) == 2000);

	/* offline while a call runs in the slot: it completes, once */
	atomic_store(&runs, 0);
	CHECK(pthread_create(&t, NULL, slow_caller, NULL) == 0);
	WAIT_UNTIL(atomic_load(&slow_started));
	CHECK_RET(xc_cpu_offline(target), 0);
	pthread_join(t, NULL);
	CHECK(atomic_load(&runs) == 1);
	CHECK_RET(xc_call_single(target, leaf, NULL, XC_WAIT), -ENXIO);
	CHECK_RET(xc_cpu_online(target), 0);
	atomic_store(&leaf_runs, 0);
	for (int i = 0; i < 100; i++)
		CHECK_RET(xc_call_single(target, leaf, NULL, XC_WAIT), 0);
	CHECK(atomic_load(&leaf_runs) == 100);
	CHECK_RET(xc_exit(), 0);

	/* the same race with the slot ablated: every call takes the queue */
	CHECK_RET(t_init_ablated(NULL, XC_ABLATE_SLOT), 0);
	per_thread /= 4;
	race();
	CHECK_RET(xc_exit(), 0);
	return T_PASS;
}
