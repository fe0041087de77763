/* SPDX-License-Identifier: MIT */
/*
 * test.h - what every test program shares: exit codes (0 pass, 1 fail, 77
 * skip, as liburing's tests), a check macro that names the failing line, and
 * small helpers. Each test states what it checks in its first comment.
 */
#ifndef XC_TEST_H
#define XC_TEST_H

#include <xcall.h>

#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define T_PASS 0
#define T_FAIL 1
#define T_SKIP 77

#define CHECK(cond) do {							\
	if (!(cond)) {								\
		fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
		exit(T_FAIL);							\
	}									\
} while (0)

/* A call that must return exactly @want. */
#define CHECK_RET(call, want) do {						\
	long __r = (long)(call);						\
	if (__r != (long)(want)) {						\
		fprintf(stderr, "%s:%d: %s returned %ld (%s), want %ld\n",	\
			__FILE__, __LINE__, #call, __r,				\
			__r < 0 ? strerror((int)-__r) : "ok", (long)(want));	\
		exit(T_FAIL);							\
	}									\
} while (0)

static inline void t_skip(const char *why)
{
	printf("skip: %s\n", why);
	exit(T_SKIP);
}

/* Environment-scaled size: the default, or $name if set. */
static inline long t_env_long(const char *name, long def)
{
	const char *v = getenv(name);

	return v && *v ? atol(v) : def;
}

static inline int t_thread_count(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static inline void t_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* The online CPUs of the runtime as a list; returns how many. */
static inline int t_cpus(int *out)
{
	cpu_set_t s;
	int n = 0;

	if (xc_online_mask(&s) < 0)
		return 0;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &s))
			out[n++] = c;
	return n;
}

/*
 * The first two CPUs the process may run on, in *home and *target (the test
 * skips with fewer), the calling thread pinned to *home: a sender apart
 * from the worker it calls.
 */
static inline void t_home_and_target(int *home, int *target)
{
	cpu_set_t mine, one;
	int n = 0;

	CHECK(sched_getaffinity(0, sizeof(mine), &mine) == 0);
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &mine))
			*(n++ ? target : home) = c;
	if (n < 2)
		t_skip("needs 2 CPUs");
	CPU_ZERO(&one);
	CPU_SET(*home, &one);
	CHECK(pthread_setaffinity_np(pthread_self(), sizeof(one), &one) == 0);
}

/* Whether the runtime has @cpu online now. */
static inline bool t_online(int cpu)
{
	cpu_set_t m;

	CHECK(xc_online_mask(&m) >= 0);
	return CPU_ISSET(cpu, &m);
}

/* Take @cpu offline (0) or online (1) through sysfs, as the OS does; 0 or -1. Guests only. */
/* A whole file, NUL-terminated, in memory the caller frees. */
static inline char *t_slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	CHECK(f != NULL);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	CHECK(buf != NULL);
	CHECK(fread(buf, 1, (size_t)n, f) == (size_t)n);
	fclose(f);
	return buf;
}

static inline int t_sysfs_cpu_online(int cpu, int on)
{
	char path[96];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	f = fopen(path, "w");
	if (!f)
		return -1;
	ok = fprintf(f, "%d\n", on) > 0;
	return fclose(f) == 0 && ok ? 0 : -1;
}

/*
 * An attached-thread test's setup: the first CPU this process may use, to be
 * set aside for an attached thread, spelled into @buf for xc_opts.attach;
 * skips unless a second CPU is left for libxcall's own worker.
 */
static inline int t_attach_first_cpu(char *buf, size_t n)
{
	cpu_set_t all;
	int cpu = 0;

	CHECK(sched_getaffinity(0, sizeof(all), &all) == 0);
	if (CPU_COUNT(&all) < 2)
		t_skip("needs 2 CPUs");
	while (!CPU_ISSET(cpu, &all))
		cpu++;
	snprintf(buf, n, "%d", cpu);
	return cpu;
}

/* Pin the calling thread to @cpu alone, then attach it as that CPU's worker. */
static inline void t_attach_pinned(int cpu)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	CHECK(pthread_setaffinity_np(pthread_self(), sizeof(one), &one) == 0);
	CHECK_RET(xc_worker_attach(cpu), 0);
}

/* What a test that gave up waiting says before it fails: dump.h's dump, where set. */
static void (*t_gave_up)(void) __attribute__((unused));

/* Wait (bounded) until cond holds; the bound only turns a hang into a failure. */
#define WAIT_UNTIL(cond) do {							\
	for (int __i = 0; !(cond); __i++) {					\
		if (__i > 20000) {						\
			fprintf(stderr, "%s:%d: gave up waiting for %s\n",	\
				__FILE__, __LINE__, #cond);			\
			if (t_gave_up)						\
				t_gave_up();					\
			exit(T_FAIL);						\
		}								\
		t_sleep_ms(1);							\
	}									\
} while (0)

/*
 * The process's thread count once threads that were joined have left: the
 * kernel wakes a joiner (CLONE_CHILD_CLEARTID) before it takes the exiting
 * thread off /proc/self/task, and a loaded machine may run that last step
 * late. Wait (bounded) for @want; the bound only turns a leak into a failure.
 */
#define T_THREADS_SETTLE(want) WAIT_UNTIL(t_thread_count() == (want))

#endif
