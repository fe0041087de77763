/*
 * own-cpu-wait: a thread that is no worker, pinned to a worker's CPU, makes
 * waiting calls that run there. Its call runs only when it gives the CPU
 * away, and it gets the CPU back quickly only if the worker gives way once
 * the call ran: the worker does so while the thread is counted in its CPU's
 * waiters_here (wait.c plain_wait, wake.h xc_give_way). So, under each
 * policy that spins (adaptive, forever, a fixed window):
 *   - the function, on the caller's CPU, sees the caller counted (it waits
 *     for that, sleeping, so the caller gets to its wait first);
 *   - on another CPU of the call nothing is counted;
 *   - after the call returns, the count is 0 again.
 * Through the slot (a single call), the caller's ring (the slot ablated) and
 * a many call (xc_call_all). Under XC_POLL_NONE the caller sleeps, the
 * worker sleeps once it ran the call, and nothing is ever counted.
 */
#include "test.h"
#include "ablate.h"
#include "base/internal.h"
#include <pthread.h>
#include <stdatomic.h>

static int home;
static bool want_counted;
static _Atomic int ran;

static uint32_t counted(int cpu)
{
	return atomic_load(&xc_cpus[cpu].life.waiters_here);
}

static void on_target(void *arg)
{
	int cpu = xc_this_cpu();

	if (cpu == home && want_counted)
		WAIT_UNTIL(counted(home) == 1);
	else
		CHECK_RET(counted(cpu), 0);
	atomic_fetch_add(&ran, 1);
}

static void round_of(long poll, unsigned ablate, int other, int ncpus)
{
	struct xc_opts o = { .poll_ns = poll };

	CHECK_RET(t_init_ablated(&o, ablate), 0);
	want_counted = poll != XC_POLL_NONE;
	for (int i = 0; i < 20; i++) {
		atomic_store(&ran, 0);
		CHECK_RET(xc_call_single(home, on_target, NULL, XC_WAIT), 0);
		CHECK_RET(atomic_load(&ran), 1);
		CHECK_RET(counted(home), 0);

		CHECK_RET(xc_call_single(other, on_target, NULL, XC_WAIT), 0);
		CHECK_RET(atomic_load(&ran), 2);

		atomic_store(&ran, 0);
		CHECK_RET(xc_call_all(on_target, NULL, XC_WAIT), ncpus);
		CHECK_RET(atomic_load(&ran), ncpus);
		CHECK_RET(counted(home), 0);
		CHECK_RET(counted(other), 0);
	}
	CHECK_RET(xc_exit(), 0);
}

int main(void)
{
	static const long polls[] = { XC_POLL_ADAPTIVE, XC_POLL_FOREVER, 200000, XC_POLL_NONE };
	int cpus[CPU_SETSIZE], n;
	cpu_set_t one;

	CHECK_RET(xc_init(NULL), 0);
	n = t_cpus(cpus);
	CHECK_RET(xc_exit(), 0);
	if (n < 2)
		t_skip("needs 2 CPUs");
	home = cpus[0];
	CPU_ZERO(&one);
	CPU_SET(home, &one);
	CHECK(pthread_setaffinity_np(pthread_self(), sizeof(one), &one) == 0);
	for (size_t p = 0; p < sizeof(polls) / sizeof(polls[0]); p++) {
		round_of(polls[p], 0, cpus[n - 1], n);
		round_of(polls[p], XC_ABLATE_SLOT, cpus[n - 1], n);
	}
	return T_PASS;
}
