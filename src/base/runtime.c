// SPDX-License-Identifier: MIT
/*
 * runtime.c - the runtime's state (internal.h): the one struct xc_runtime and
 * the per-CPU structs, defined here at the bottom of the house so that every
 * layer may read them; and the clocks and spin yields the layers share.
 * Which layer writes which field is said in internal.h; xc_init and xc_exit
 * (api/init.c) bring the runtime up and down.
 */
#include "base/internal.h"

#include <stdint.h>
#include <time.h>

struct xc_runtime xc_rt = { .hotplug_lock = PTHREAD_MUTEX_INITIALIZER };
struct xc_cpu xc_cpus[XC_MAX_CPUS] __xc_pair_aligned;

/*
 * The passes of a spin in about 20 us, from the fastest of three timings of
 * 256 xc_cpu_relax() (a pause costs from ~10 to ~150 cycles across x86
 * generations, so no constant fits). A timing that a preemption stretched
 * only lowers the count: the spin then yields sooner, never later.
 */
#define XC_SPIN_YIELD_NS 20000u
void xc_spin_calibrate(void)
{
	uint64_t best = UINT64_MAX;
	uint64_t passes;

	for (int round = 0; round < 3; round++) {
		uint64_t t0 = xc_now_ns(), d;

		for (int i = 0; i < 256; i++)
			xc_cpu_relax();
		d = xc_now_ns() - t0;
		if (d < best)
			best = d;
	}
	passes = (uint64_t)XC_SPIN_YIELD_NS * 256 / (best ? best : 1);
	xc_rt.spin_yield = (unsigned)(passes < 64 ? 64 : passes > (1u << 20) ? (1u << 20) : passes);
}

uint64_t xc_coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
