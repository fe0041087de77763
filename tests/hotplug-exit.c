/*
 * hotplug-exit: hotplug from a work item while xc_exit() runs gets only the
 * errnos xcall.h lists for it: the runtime going down is -ENXIO, never
 * -EDEADLK. A work item on CPU A takes CPU B offline and brings it back in a
 * loop, until a call gets -ENXIO; the main thread calls xc_exit() once the
 * loop has begun. 30 init/exit cycles; each call's return is one of 0,
 * -EINVAL (B already offline or online: another cycle's leftover) or -ENXIO.
 */
#include "test.h"
#include <stdatomic.h>

#define CYCLES 30

static int cpu_a, cpu_b;
static _Atomic int looping, bad_ret, calls;

static void hotplug_loop(void *arg)
{
	atomic_store(&looping, 1);
	for (;;) {
		int r = (atomic_fetch_add(&calls, 1) & 1) ? xc_cpu_online(cpu_b) : xc_cpu_offline(cpu_b);

		if (r == -ENXIO)
			return;
		if (r != 0 && r != -EINVAL) {
			atomic_store(&bad_ret, r);
			return;
		}
	}
}

int main(void)
{
	int cpus[CPU_SETSIZE];

	CHECK_RET(xc_init(NULL), 0);
	if (t_cpus(cpus) < 2)
		t_skip("needs 2 CPUs");
	cpu_a = cpus[0];
	cpu_b = cpus[1];
	CHECK_RET(xc_exit(), 0);
	for (int i = 0; i < CYCLES; i++) {
		struct xc_work w = { .fn = hotplug_loop };

		atomic_store(&looping, 0);
		CHECK_RET(xc_init(NULL), 0);
		CHECK_RET(xc_queue_work(cpu_a, &w), 0);
		WAIT_UNTIL(atomic_load(&looping));
		CHECK_RET(xc_exit(), 0);
		if (atomic_load(&bad_ret)) {
			fprintf(stderr, "cycle %d: a hotplug call during xc_exit returned %d (%s)\n", i,
				atomic_load(&bad_ret), strerror(-atomic_load(&bad_ret)));
			return T_FAIL;
		}
	}
	printf("hotplug-exit: %d cycles, %d hotplug calls across xc_exit, each 0, -EINVAL or -ENXIO\n",
	       CYCLES, atomic_load(&calls));
	return T_PASS;
}
