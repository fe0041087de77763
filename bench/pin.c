/* SPDX-License-Identifier: MIT */
/*
 * pin.c - pinned threads and a spinning barrier, shared by
 * every baseline so that they are pinned and started the same way as
 * libxcall's workers.
 */
#include "bench.h"

#include <errno.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static cpu_set_t start_affinity;
static bool start_saved;

static void save_start_affinity(void)
{
	if (!start_saved) {
		sched_getaffinity(0, sizeof(start_affinity), &start_affinity);
		start_saved = true;
	}
}

int online_cpus_allowed(cpu_set_t *out)
{
	save_start_affinity();
	*out = start_affinity;
	return CPU_COUNT(out);
}

int pin_self(int cpu)
{
	save_start_affinity();
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	return pthread_setaffinity_np(pthread_self(), sizeof(s), &s) ? -EINVAL : 0;
}

void unpin_self(void)
{
	save_start_affinity();
	pthread_setaffinity_np(pthread_self(), sizeof(start_affinity), &start_affinity);
}

/* Pinned before it first runs, as libxcall pins its workers, so no run elsewhere. */
int thread_start_pinned(pthread_t *t, int cpu, void *(*fn)(void *), void *arg)
{
	pthread_attr_t a;
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	pthread_attr_init(&a);
	pthread_attr_setaffinity_np(&a, sizeof(s), &s);
	int err = pthread_create(t, &a, fn, arg);
	pthread_attr_destroy(&a);
	return -err;
}

bool thread_join_by(pthread_t t, uint64_t until)
{
	uint64_t now = now_ns();
	if (!until)
		return !pthread_join(t, NULL);
	/* pthread_timedjoin_np's clock is the wall clock's */
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t left = until > now ? until - now : 0;
	ts.tv_sec += (time_t)(left / 1000000000u);
	ts.tv_nsec += (long)(left % 1000000000u);
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	if (!pthread_timedjoin_np(t, NULL, &ts))
		return true;
	pthread_detach(t);
	return false;
}

void spin_barrier_init(struct spin_barrier *b, unsigned n)
{
	atomic_store(&b->count, 0);
	atomic_store(&b->gen, 0);
	b->n = n;
}

/* Sense-reversing barrier; serve() lets a waiting worker keep running its calls. */
void spin_barrier_wait(struct spin_barrier *b, void (*serve)(void))
{
	unsigned gen = atomic_load_explicit(&b->gen, memory_order_acquire);
	if (atomic_fetch_add_explicit(&b->count, 1, memory_order_acq_rel) + 1 == b->n) {
		atomic_store_explicit(&b->count, 0, memory_order_relaxed);
		/* release: everything before the barrier is visible to those leaving it */
		atomic_store_explicit(&b->gen, gen + 1, memory_order_release);
		return;
	}
	while (atomic_load_explicit(&b->gen, memory_order_acquire) == gen) {
		if (serve)
			serve();
		cpu_relax();
	}
}
