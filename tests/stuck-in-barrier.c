/*
 * stuck-in-barrier: a waiting call stuck behind a worker inside membarrier(2)
 * is reported as such. Before a worker sleeps, or at its first idle moment
 * after ring calls, it may run a membarrier for its rings' owners
 * (src/proto/barrier.c), and it runs no call until the kernel returns; its
 * idle word still says it polls, so the report read "idle, polling", a
 * worker that seemed to ignore its calls. Here the test interposes the C
 * library's syscall(2) (membarrier-hook.h) and holds the first worker that
 * asks for an expedited membarrier until a stuck report has come; that
 * report must say the worker is in membarrier. The call then runs once, on
 * its CPU.
 *
 * Needs a dynamic build (dlsym finds the C library's syscall) and a kernel
 * with expedited private membarriers; skips otherwise.
 */
#include "reports.h"
#include "membarrier-hook.h"
#include "base/internal.h"
#include <stdatomic.h>

static _Atomic int hold;		/* the next expedited membarrier waits for the report */
static _Atomic int held_cpu = -1;	/* the CPU of the worker held in one */
static _Atomic long ran, wrong;

/* The first membarrier asked for while hold is set waits for the report. */
static void t_membarrier_hook(void)
{
	if (!atomic_exchange(&hold, 0))
		return;
	atomic_store(&held_cpu, sched_getcpu());	/* a worker's: pinned */
	/* until a call to it is reported stuck, whatever the report says (bounded: 60 s) */
	for (int i = 0; i < 60000 && !t_reported("stuck call:"); i++)
		t_sleep_ms(1);
}

static void count(void *arg)
{
	if (sched_getcpu() != (int)(intptr_t)arg)
		atomic_fetch_add(&wrong, 1);
	atomic_fetch_add(&ran, 1);
}

int main(void)
{
	struct xc_opts o = { .poll_ns = XC_POLL_NONE, .report = t_capture, .stuck_ms = 50 };
	int cpu;

	t_membarrier_hook_setup();
	CHECK_RET(xc_init(&o), 0);
	atomic_store(&hold, 1);
	/* calls to every CPU: the first worker to sleep after them times membarrier (barrier.c) */
	for (int round = 0; atomic_load(&held_cpu) < 0; round++) {
		CHECK(round < 100000);
		for (int i = 0; i < xc_rt.nr_cpus; i++) {
			int c = xc_rt.cpu_list[i];

			CHECK_RET(xc_call_single(c, count, (void *)(intptr_t)c, 0), 0);
		}
		WAIT_UNTIL(atomic_load(&ran) == (long)(round + 1) * xc_rt.nr_cpus ||
			   atomic_load(&held_cpu) >= 0);
	}
	cpu = atomic_load(&held_cpu);
	long before = atomic_load(&ran);
	/* waits until the membarrier returns, which is after the report */
	CHECK_RET(xc_call_single(cpu, count, (void *)(intptr_t)cpu, XC_WAIT), 0);
	char want[64];
	snprintf(want, sizeof(want), "CPU %d is idle, in membarrier(2)", cpu);
	CHECK_REPORTS(t_reported(want));
	CHECK(atomic_load(&ran) > before);
	CHECK_RET(xc_exit(), 0);
	CHECK(atomic_load(&wrong) == 0);
	printf("stuck-in-barrier: CPU %d held in membarrier until reported\n", cpu);
	return T_PASS;
}
