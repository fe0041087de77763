// SPDX-License-Identifier: MIT
/*
 * roundtrip_driver.c - the workload bench/tools/count_roundtrip.py counts
 * under callgrind: N waiting calls of a no-op from the worker of CPU 0 to a
 * worker on CPU 1 that polls forever, nothing else.
 *
 *   roundtrip_driver N
 */
#include <xcall.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static long calls;
static _Atomic int done;

static void nothing(void *arg)
{
}

static void caller(void *arg)
{
	for (long i = 0; i < calls; i++)
		if (xc_call_single(1, nothing, NULL, XC_WAIT)) {
			fprintf(stderr, "roundtrip_driver: call %ld failed\n", i);
			exit(1);
		}
	/* release: main's acquire sees every call done */
	atomic_store_explicit(&done, 1, memory_order_release);
}

int main(int argc, char **argv)
{
	struct xc_opts o = { .cpus = "0-1", .poll_ns = XC_POLL_FOREVER };
	struct xc_work w = { .fn = caller };

	calls = argc > 1 ? atol(argv[1]) : 3000;
	if (calls <= 0 || xc_init(&o) || xc_queue_work(0, &w)) {
		fprintf(stderr, "usage: roundtrip_driver N (needs CPUs 0 and 1)\n");
		return 2;
	}
	while (!atomic_load_explicit(&done, memory_order_acquire))
		;
	return xc_exit() ? 1 : 0;
}
