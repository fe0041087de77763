/*
 * stats-race: xc_stats_get() polled from one thread while another cycles
 * xc_init() and xc_exit() with tracing on and large trace rings answers 0 or
 * -ENXIO, each time, for the sum and for each CPU, and never reads what
 * xc_exit() frees (the rings, whose drop counts it adds) nor the runtime's
 * CPU set while xc_exit() clears it or xc_init() fills it: a freed ring is a
 * crash or an AddressSanitizer report, the rest ThreadSanitizer's. A second
 * thread dumps the trace meanwhile (xc_trace_dump): 0 or -ENXIO, and never a
 * read of the CPU rings that the next xc_init() is making (ThreadSanitizer).
 */
#include "test.h"
#include <pthread.h>
#include <stdatomic.h>

static _Atomic int polling_stop;
static _Atomic long answers_up;		/* readings taken while the runtime was up */
static char trace_path[] = "/tmp/xcall-stats-race-XXXXXX";
static char dump_path[] = "/tmp/xcall-stats-race-dump-XXXXXX";
static _Atomic long dumps_up;

static void nothing(void *arg)
{
}

/* Reads the sum and CPUs 0..3 in a loop until told to stop; every answer is 0 or -ENXIO. */
static void *poll_loop(void *arg)
{
	struct xc_stats s;

	while (!atomic_load(&polling_stop)) {
		for (int cpu = -1; cpu < 4; cpu++) {
			int r = xc_stats_get(cpu, &s);

			CHECK(r == 0 || r == -ENXIO);
			if (!r)
				atomic_fetch_add(&answers_up, 1);
		}
	}
	return NULL;
}

/* Dumps the trace in a loop until told to stop; every answer is 0 or -ENXIO. */
static void *dump_loop(void *arg)
{
	while (!atomic_load(&polling_stop)) {
		int r = xc_trace_dump(dump_path);

		CHECK(r == 0 || r == -ENXIO);
		if (!r)
			atomic_fetch_add(&dumps_up, 1);
	}
	return NULL;
}

int main(void)
{
	/* 2^20 events: rings of 24 MiB, which malloc maps and free unmaps */
	struct xc_opts o = { .trace_file = trace_path, .trace_events = 1u << 20 };
	int rounds = (int)t_env_long("XCALL_STATS_RACE_ROUNDS", 40);
	int cpus[CPU_SETSIZE];
	struct xc_stats s;
	pthread_t t, d;
	int fd = mkstemp(trace_path);

	CHECK(fd >= 0);
	close(fd);
	fd = mkstemp(dump_path);
	CHECK(fd >= 0);
	close(fd);
	CHECK(pthread_create(&t, NULL, poll_loop, NULL) == 0);
	CHECK(pthread_create(&d, NULL, dump_loop, NULL) == 0);
	for (int round = 0; round < rounds; round++) {
		CHECK_RET(xc_init(&o), 0);
		CHECK(t_cpus(cpus) > 0);
		CHECK_RET(xc_call_single(cpus[0], nothing, NULL, XC_WAIT), 0);
		CHECK_RET(xc_stats_get(cpus[0], &s), 0);
		CHECK(s.calls >= 1);
		CHECK_RET(xc_exit(), 0);
		CHECK_RET(xc_stats_get(-1, &s), -ENXIO);
	}
	atomic_store(&polling_stop, 1);
	pthread_join(t, NULL);
	pthread_join(d, NULL);
	unlink(trace_path);
	unlink(dump_path);
	printf("stats-race: %d rounds, %ld readings and %ld dumps while up\n", rounds,
	       atomic_load(&answers_up), atomic_load(&dumps_up));
	return T_PASS;
}
