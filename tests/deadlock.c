/*
 * deadlock: two workers that call each other with XC_WAIT at the same time,
 * nested two deep, all complete: a waiting worker runs its own incoming
 * calls while it waits.
 */
#include "test.h"
#include <pthread.h>
#include <stdatomic.h>

#define ROUNDS 2000

static int cpu_a, cpu_b;
static _Atomic long leaf_runs;

static int other(void)
{
	return xc_this_cpu() == cpu_a ? cpu_b : cpu_a;
}

static void leaf(void *arg)
{
	atomic_fetch_add(&leaf_runs, 1);
}

static void middle(void *arg)
{
	CHECK_RET(xc_call_single(other(), leaf, NULL, XC_WAIT), 0);
}

static void ping(void *arg)
{
	for (int i = 0; i < ROUNDS; i++)
		CHECK_RET(xc_call_single(other(), middle, NULL, XC_WAIT), 0);
}

static void *start_ping(void *arg)
{
	CHECK_RET(xc_call_single(*(int *)arg, ping, NULL, XC_WAIT), 0);
	return NULL;
}

int main(void)
{
	int cpus[CPU_SETSIZE];

	for (int mode = 0; mode < 2; mode++) {
		struct xc_opts o = { .poll_ns = mode ? XC_POLL_NONE : XC_POLL_ADAPTIVE };

		atomic_store(&leaf_runs, 0);
		CHECK_RET(xc_init(&o), 0);
		if (t_cpus(cpus) < 2) {
			xc_exit();
			t_skip("needs 2 CPUs");
		}
		cpu_a = cpus[0];
		cpu_b = cpus[1];
		/* both workers start pinging each other at once */
		pthread_t ta, tb;
		pthread_create(&ta, NULL, start_ping, &cpu_a);
		pthread_create(&tb, NULL, start_ping, &cpu_b);
		pthread_join(ta, NULL);
		pthread_join(tb, NULL);
		CHECK(atomic_load(&leaf_runs) == 2 * ROUNDS);
		CHECK_RET(xc_exit(), 0);
	}
	return T_PASS;
}
