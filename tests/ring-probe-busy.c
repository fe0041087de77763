/*
 * ring-probe-busy: a worker that a stream of calls keeps from sleeping
 * still measures what a membarrier costs, so that its senders may skip
 * their fences (src/proto/barrier.c). A runtime starts with every ring call
 * fenced and lets owners skip the fence once a worker timed membarrier
 * cheap; the timing ran only before a worker's sleep, so a worker polling
 * forever (or one a steady stream keeps busy) never took it, and every
 * nowait call of the run paid a store-load fence: 3-4x the cost of a
 * skipped one in xcall-bench throughput 1-1. Here the worker polls
 * forever; bursts of nowait calls go to it until the probe is done; then
 * owners skip their fences, unless the probe found membarrier slow (an
 * emulated machine: the report says so, and the test skips).
 */
#include "reports.h"
#include "base/internal.h"
#include "proto/barrier.h"
#include <stdatomic.h>

#define ROUNDS 100000
#define BURST  4

static _Atomic long ran, wrong;
static int target;

static void count(void *arg)
{
	if (sched_getcpu() != target)
		atomic_fetch_add(&wrong, 1);
	atomic_fetch_add(&ran, 1);
}

int main(void)
{
	struct xc_opts o = { .poll_ns = XC_POLL_FOREVER, .report = t_capture };
	long sent = 0;
	int r;

	CHECK_RET(xc_init(&o), 0);
	if (xc_rt.nr_cpus < 2)
		t_skip("needs 2 CPUs");
	target = xc_rt.cpu_list[1];
	if (!atomic_load(&xc_barrier_probe_due) && !atomic_load(&xc_ring_asym))
		t_skip("membarrier is refused or ablated here: every call fences");
	for (r = 0; r < ROUNDS && atomic_load(&xc_barrier_probe_due); r++) {
		for (int i = 0; i < BURST; i++)
			CHECK_RET(xc_call_single(target, count, NULL, 0), 0);
		sent += BURST;
		WAIT_UNTIL(atomic_load(&ran) == sent);
	}
	CHECK(!atomic_load(&xc_barrier_probe_due));	/* timed, though the worker never slept */
	if (t_reported("membarrier(2) took"))
		t_skip("membarriers are slow here: calls fence (the probe's verdict)");
	CHECK(atomic_load(&xc_ring_asym));		/* owners skip their fences from now on */
	CHECK_RET(xc_exit(), 0);
	CHECK(atomic_load(&wrong) == 0);
	printf("ring-probe-busy: probe done after %d bursts, owners skip their fences\n", r);
	return T_PASS;
}
