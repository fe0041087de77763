/*
 * attach-online: xc_cpu_online of an attach CPU whose thread is still in
 * xc_worker_attach (its cpu_init hook running) leaves the opening to the
 * attach. The CPU, taken offline before any thread attached, stays offline
 * and refuses calls (-ENXIO) until the attach is done; then a call made
 * while the hook ran, if it returned 0, runs at the thread's first
 * xc_poll(), and later calls run there, each exactly once, on that CPU.
 * (The attach once opened the CPU a second time, emptying a call queue
 * that held a linked ring: its call and every later one through it never
 * ran, found by the scenario fuzzer.)
 */
#include "test.h"
#include <pthread.h>
#include <stdatomic.h>

static int attach_cpu;
static _Atomic int in_hook, hook_go, attached, polled, stop, ran, wrong_cpu;

static void count(void *arg)
{
	if (xc_this_cpu() != attach_cpu)
		atomic_fetch_add(&wrong_cpu, 1);
	atomic_fetch_add(&ran, 1);
}

static int hook(int cpu, void *arg)
{
	if (cpu != attach_cpu)
		return 0;
	atomic_store(&in_hook, 1);
	WAIT_UNTIL(atomic_load(&hook_go));
	return 0;
}

static void *loop(void *arg)
{
	t_attach_pinned(attach_cpu);
	atomic_store(&attached, 1);
	xc_poll();			/* the first: a call queued before it runs here */
	atomic_store(&polled, 1);
	while (!atomic_load(&stop))
		xc_poll();
	CHECK_RET(xc_worker_detach(), 0);
	return NULL;
}

int main(void)
{
	char set[16];
	struct xc_opts o = { .attach = set, .cpu_init = hook };
	pthread_t t;
	bool was_online;
	int r;

	attach_cpu = t_attach_first_cpu(set, sizeof(set));
	CHECK_RET(xc_init(&o), 0);
	CHECK_RET(xc_cpu_offline(attach_cpu), 0);	/* no thread yet: it stays offline at attach */
	CHECK(pthread_create(&t, NULL, loop, NULL) == 0);
	WAIT_UNTIL(atomic_load(&in_hook));

	/* the attach has claimed the CPU and runs its hook: online is for the attach to do */
	CHECK_RET(xc_cpu_online(attach_cpu), 0);
	was_online = t_online(attach_cpu);
	r = xc_call_single(attach_cpu, count, NULL, 0);
	atomic_store(&hook_go, 1);
	WAIT_UNTIL(atomic_load(&polled));
	if (r == 0 && atomic_load(&ran) != 1) {
		fprintf(stderr, "a call that returned 0 while the thread attached did not run at its first xc_poll\n");
		return T_FAIL;
	}
	CHECK(!was_online);
	CHECK_RET(r, -ENXIO);
	CHECK_RET(xc_call_single(attach_cpu, count, NULL, 0), 0);
	CHECK_RET(xc_call_single(attach_cpu, count, NULL, XC_WAIT), 0);
	CHECK(t_online(attach_cpu));
	CHECK(atomic_load(&ran) == 2);
	CHECK(atomic_load(&wrong_cpu) == 0);
	atomic_store(&stop, 1);
	CHECK(pthread_join(t, NULL) == 0);
	CHECK_RET(xc_exit(), 0);
	return T_PASS;
}
