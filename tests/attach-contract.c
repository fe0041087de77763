/*
 * attach-contract: what an attached thread's own calls get.
 *   - Its CPU offline (by xc_cpu_offline, served at its xc_poll()): a call
 *     to its own CPU gets -ENXIO, as every other thread's does, nowait,
 *     waiting and async alike, and nothing runs; online again, they run inline.
 *   - Between xc_worker_sleep_begin() returning 0 and xc_worker_sleep_end():
 *     a waiting call, and xc_cpu_offline / xc_cpu_online, get -EDEADLK (a
 *     wait would overwrite the announced sleep); a nowait call goes through.
 */
#include "test.h"
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

static int attach_cpu, target;
static _Atomic int ran, phase, step;

static void count(void *arg)
{
	atomic_fetch_add(&ran, 1);
}

static void *attached(void *arg)
{
	struct xc_call async = { .fn = count };
	cpu_set_t one;
	int r;

	CPU_ZERO(&one);
	CPU_SET(attach_cpu, &one);
	CHECK(pthread_setaffinity_np(pthread_self(), sizeof(one), &one) == 0);
	CHECK_RET(xc_worker_attach(attach_cpu), 0);
	atomic_store(&step, 1);
	/* the main thread takes the CPU offline; the request is served here */
	while (atomic_load(&phase) < 1)
		CHECK(xc_poll() >= 0);
	CHECK_RET(xc_call_single(attach_cpu, count, NULL, 0), -ENXIO);
	CHECK_RET(xc_call_single(attach_cpu, count, NULL, XC_WAIT), -ENXIO);
	CHECK_RET(xc_call_async(attach_cpu, &async), -ENXIO);
	CHECK(xc_call_done(&async));
	CHECK(atomic_load(&ran) == 0);
	atomic_store(&step, 2);
	while (atomic_load(&phase) < 2)
		CHECK(xc_poll() >= 0);
	CHECK_RET(xc_call_single(attach_cpu, count, NULL, XC_WAIT), 0);
	CHECK_RET(xc_call_async(attach_cpu, &async), 0);
	CHECK(atomic_load(&ran) == 2);

	/* the sleep window */
	while ((r = xc_worker_sleep_begin()) == 1)
		CHECK(xc_poll() >= 0);
	CHECK_RET(r, 0);
	CHECK_RET(xc_call_single(target, count, NULL, XC_WAIT), -EDEADLK);
	CHECK_RET(xc_cpu_offline(target), -EDEADLK);
	CHECK_RET(xc_cpu_online(target), -EDEADLK);
	CHECK_RET(xc_call_single(target, count, NULL, 0), 0);
	CHECK_RET(xc_worker_sleep_end(), 0);
	CHECK_RET(xc_call_single(target, count, NULL, XC_WAIT), 0);
	WAIT_UNTIL(atomic_load(&ran) == 4);
	CHECK_RET(xc_worker_detach(), 0);
	return NULL;
}

int main(void)
{
	char attach[16];
	struct xc_opts o = { .attach = attach };
	int cpus[CPU_SETSIZE], n;
	pthread_t t;

	attach_cpu = t_attach_first_cpu(attach, sizeof(attach));
	CHECK_RET(xc_init(&o), 0);
	n = t_cpus(cpus);
	target = cpus[n - 1];
	CHECK(pthread_create(&t, NULL, attached, NULL) == 0);
	WAIT_UNTIL(atomic_load(&step) == 1);
	CHECK_RET(xc_cpu_offline(attach_cpu), 0);
	atomic_store(&phase, 1);
	WAIT_UNTIL(atomic_load(&step) == 2);
	CHECK_RET(xc_cpu_online(attach_cpu), 0);
	atomic_store(&phase, 2);
	CHECK(pthread_join(t, NULL) == 0);
	CHECK_RET(xc_exit(), 0);
	return T_PASS;
}
