// SPDX-License-Identifier: MIT
/*
 * roundtrip.c - call every CPU from every other one and print round-trip
 * percentiles of a waiting xc_call_single(), beside the physical limit: a
 * plain cache-line ping-pong between the same two CPUs, measured in the
 * same run.
 *
 *   build/examples/roundtrip [iterations]
 */
#include <xcall.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void print_row(const char *what, int from, int to, uint64_t *s, int n, double limit_p50)
{
	qsort(s, (size_t)n, sizeof(*s), cmp_u64);
	printf("%-22s %3d -> %-3d %8lu %8lu %8lu %8lu", what, from, to,
	       (unsigned long)s[n / 2], (unsigned long)s[n * 9 / 10], (unsigned long)s[n * 99 / 100],
	       (unsigned long)s[n - 1]);
	if (limit_p50 > 0)
		printf("   %5.2fx", (double)s[n / 2] / limit_p50);
	printf("\n");
}

static void nothing(void *arg)
{
}

/* --- libxcall: a worker on `from` times waiting calls to `to` --- */
struct xc_probe {
	int to, n;
	uint64_t *samples;
};

static void time_calls(void *arg)
{
	struct xc_probe *p = arg;

	for (int i = -p->n / 10; i < p->n; i++) {	/* the first tenth warms up */
		uint64_t t0 = now_ns();

		xc_call_single(p->to, nothing, NULL, XC_WAIT);
		if (i >= 0)
			p->samples[i] = now_ns() - t0;
	}
}

/* --- the physical limit: two pinned threads bounce one cache line --- */
static _Atomic uint64_t ball __attribute__((aligned(64)));

struct pp_arg {
	int cpu, n;
	uint64_t *samples;
};

static void pin(int cpu)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
}

static void *pp_echo(void *arg)
{
	struct pp_arg *a = arg;
	int total = a->n + a->n / 10;

	pin(a->cpu);
	for (uint64_t v = 1; v <= 2 * (uint64_t)total; v += 2) {
		while (atomic_load_explicit(&ball, memory_order_acquire) != v)
			;
		atomic_store_explicit(&ball, v + 1, memory_order_release);
	}
	return NULL;
}

static void pingpong(int from, int to, int n, uint64_t *samples)
{
	struct pp_arg echo = { to, n, NULL };
	pthread_t t;
	int total = n + n / 10;

	atomic_store(&ball, 0);
	pin(from);
	pthread_create(&t, NULL, pp_echo, &echo);
	for (int i = 0; i < total; i++) {
		uint64_t v = 2 * (uint64_t)i + 1, t0 = now_ns();

		atomic_store_explicit(&ball, v, memory_order_release);
		while (atomic_load_explicit(&ball, memory_order_acquire) != v + 1)
			;
		if (i >= n / 10)
			samples[i - n / 10] = now_ns() - t0;
	}
	pthread_join(t, NULL);
}

int main(int argc, char **argv)
{
	struct xc_opts opts = { .poll_ns = XC_POLL_FOREVER };
	int n = argc > 1 ? atoi(argv[1]) : 20000;
	cpu_set_t online;
	int cpus[CPU_SETSIZE], nr = 0, ret;
	uint64_t *samples;

	if (n < 10) {
		fprintf(stderr, "usage: %s [iterations >= 10]\n", argv[0]);
		return 2;
	}
	samples = calloc((size_t)n, sizeof(*samples));
	ret = xc_init(&opts);
	if (ret) {
		fprintf(stderr, "xc_init: %s\n", strerror(-ret));
		return 1;
	}
	xc_online_mask(&online);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &online))
			cpus[nr++] = c;
	if (nr < 2) {
		fprintf(stderr, "need at least 2 CPUs, have %d\n", nr);
		xc_exit();
		return 77;
	}
	printf("round trip of a waiting call to an idle polling worker, %d calls per pair (ns)\n", n);
	printf("%-22s %-10s %8s %8s %8s %8s   %s\n", "what", "cpus", "p50", "p90", "p99", "max",
	       "vs limit");
	for (int i = 0; i < nr; i++)
		for (int j = 0; j < nr; j++) {
			struct xc_probe p = { cpus[j], n, samples };
			double limit;

			if (i == j)
				continue;
			/* the workers poll forever: measure the limit with the runtime down */
			xc_exit();
			pingpong(cpus[i], cpus[j], n, samples);
			qsort(samples, (size_t)n, sizeof(*samples), cmp_u64);
			limit = (double)samples[n / 2];
			print_row("cache-line ping-pong", cpus[i], cpus[j], samples, n, 0);
			xc_init(&opts);
			xc_call_single(cpus[i], time_calls, &p, XC_WAIT);
			print_row("libxcall waiting call", cpus[i], cpus[j], samples, n, limit);
		}
	xc_exit();
	free(samples);
	return 0;
}
