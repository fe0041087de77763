/* SPDX-License-Identifier: MIT */
/*
 * model2008.c - a faithful user-space model of smp_call_function before
 * Nick Piggin's redesign (seed 002, arch/x86/kernel/smp_64.c of 2008):
 *
 *   - one global call_lock serialises every caller, for single calls too
 *     (smp_call_function_single() went through smp_call_function_mask());
 *   - one shared call_data, on the caller's stack, with started/finished
 *     counters; the caller holds the lock until every target has started
 *     (so it may reuse the stack), and with wait until every target finished;
 *   - targets copy func/info out of call_data, bump started, run func, and
 *     bump finished when the caller waits.
 *
 * What is not the 2008 kernel: "CPUs" are pinned threads, an IPI is a flag
 * plus a futex wake when (and only when) the target sleeps, and idle model
 * CPUs poll and sleep as libxcall's workers do. That keeps the comparison
 * about the call design, not about the wakeup mechanism.
 */
#include "baselines.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define P_IPI  1u
#define P_TASK 2u
#define P_STOP 4u

enum { S_RUNNING, S_SLEEPING };

struct m08_cpu {
	_Alignas(CACHELINE) _Atomic uint32_t pending;   /* P_* bits: the "interrupt lines" */
	_Atomic uint32_t state;                         /* S_*, also the futex word */
	int cpu, idx;
	void (*task)(void *);
	void *task_arg;
	_Atomic uint32_t *task_left;
	pthread_t th;
};

struct call_data {
	void (*func)(void *);
	void *info;
	_Atomic int started, finished;
	int wait;
};

static struct m08_cpu *cpus_;
static int ncpus_;
static long poll_ns_;
static _Atomic int call_lock;                    /* the global spinlock */
static struct call_data *_Atomic call_data;
static _Thread_local struct m08_cpu *self_;

int m08_this_cpu(void)
{
	return self_ ? self_->cpu : -1;
}

/* send_IPI_mask() for one target: raise the line, wake only a sleeper. */
static void m08_kick(struct m08_cpu *t, uint32_t bit)
{
	/* seq_cst pairs with the sleeper's store of S_SLEEPING then load of pending */
	atomic_fetch_or(&t->pending, bit);
	if (atomic_load(&t->state) == S_SLEEPING &&
	    atomic_exchange(&t->state, S_RUNNING) == S_SLEEPING)
		xc_futex_wake(&t->state, 1);
}

/* smp_call_function_interrupt() */
static void m08_interrupt(void)
{
	struct call_data *d = atomic_load_explicit(&call_data, memory_order_acquire);
	void (*func)(void *) = d->func;
	void *info = d->info;
	int wait = d->wait;
	/* release: we are done reading d; after this the caller may reuse it unless wait */
	atomic_fetch_add_explicit(&d->started, 1, memory_order_release);
	func(info);
	if (wait)
		atomic_fetch_add_explicit(&d->finished, 1, memory_order_release);
}

void m08_serve(void)
{
	struct m08_cpu *me = self_;
	if (me && (atomic_load_explicit(&me->pending, memory_order_relaxed) & P_IPI) &&
	    (atomic_fetch_and_explicit(&me->pending, ~P_IPI, memory_order_acquire) & P_IPI))
		m08_interrupt();
}

static void lock_call_lock(void)
{
	/* spin_lock() with interrupts on: a waiting caller still takes IPIs */
	for (;;) {
		if (!atomic_load_explicit(&call_lock, memory_order_relaxed) &&
		    !atomic_exchange_explicit(&call_lock, 1, memory_order_acquire))
			return;
		m08_serve();
		cpu_relax();
	}
}

/* __smp_call_function_mask() under call_lock */
static int call_mask(const bool *mask, void (*func)(void *), void *info, int wait)
{
	struct m08_cpu *me = self_;
	if (!me)
		return -EINVAL;
	struct call_data data = {.func = func, .info = info, .wait = wait};
	int n = 0;
	for (int i = 0; i < ncpus_; i++)
		n += mask[i] && i != me->idx;
	if (!n)
		return 0;
	lock_call_lock();
	atomic_store_explicit(&call_data, &data, memory_order_release);
	for (int i = 0; i < ncpus_; i++)
		if (mask[i] && i != me->idx)
			m08_kick(&cpus_[i], P_IPI);
	while (atomic_load_explicit(&data.started, memory_order_acquire) != n)
		cpu_relax();
	if (wait)
		while (atomic_load_explicit(&data.finished, memory_order_acquire) != n)
			cpu_relax();
	atomic_store_explicit(&call_lock, 0, memory_order_release);
	return 0;
}

int m08_call_function(void (*func)(void *), void *info, int wait)
{
	bool mask[CPU_SETSIZE];
	for (int i = 0; i < ncpus_; i++)
		mask[i] = true;
	return call_mask(mask, func, info, wait);
}

int m08_call_function_single(int cpu, void (*func)(void *), void *info, int wait)
{
	struct m08_cpu *me = self_;
	if (me && me->cpu == cpu) {
		func(info);             /* the old code ran a self call locally too */
		return 0;
	}
	bool mask[CPU_SETSIZE] = {0};
	for (int i = 0; i < ncpus_; i++)
		if (cpus_[i].cpu == cpu)
			mask[i] = true;
	return call_mask(mask, func, info, wait);
}

static void *m08_idle_loop(void *arg)
{
	struct m08_cpu *me = arg;
	self_ = me;
	for (;;) {
		uint32_t p = atomic_load_explicit(&me->pending, memory_order_acquire);
		if (p & P_IPI) {
			m08_serve();
			continue;
		}
		if (p & P_TASK) {
			atomic_fetch_and(&me->pending, ~P_TASK);
			me->task(me->task_arg);
			if (atomic_fetch_sub_explicit(me->task_left, 1, memory_order_release) == 1)
				budget_done();
			continue;
		}
		if (p & P_STOP)
			return NULL;
		/* poll, then sleep: the same policy as a libxcall worker's idle loop */
		uint64_t end = poll_ns_ > 0 ? now_ns() + (uint64_t)poll_ns_ : 0;
		bool got = false;
		while (poll_ns_ == XC_POLL_FOREVER || (poll_ns_ > 0 && now_ns() < end)) {
			if (atomic_load_explicit(&me->pending, memory_order_acquire)) {
				got = true;
				break;
			}
			cpu_relax();
		}
		if (got)
			continue;
		atomic_store(&me->state, S_SLEEPING);
		/* re-check after publishing S_SLEEPING: a kick before it would be lost */
		if (!atomic_load(&me->pending))
			while (atomic_load(&me->state) == S_SLEEPING)
				xc_futex_wait(&me->state, S_SLEEPING, NULL);
		atomic_store(&me->state, S_RUNNING);
	}
}

int m08_start(const int *cpus, int n, long poll_ns)
{
	cpus_ = aligned_alloc(CACHELINE, sizeof(*cpus_) * (size_t)n);
	if (!cpus_)
		return -ENOMEM;
	memset(cpus_, 0, sizeof(*cpus_) * (size_t)n);
	ncpus_ = n;
	/* no adaptive policy in the model: a fixed 50 us window stands in for it */
	poll_ns_ = poll_ns == XC_POLL_ADAPTIVE ? 50000 : poll_ns;
	atomic_store(&call_lock, 0);
	for (int i = 0; i < n; i++) {
		cpus_[i].cpu = cpus[i];
		cpus_[i].idx = i;
		int err = thread_start_pinned(&cpus_[i].th, cpus[i], m08_idle_loop, &cpus_[i]);
		if (err) {
			ncpus_ = i;
			m08_stop();
			return err;
		}
	}
	return 0;
}

void m08_stop(void)
{
	for (int i = 0; i < ncpus_; i++)
		m08_kick(&cpus_[i], P_STOP);
	for (int i = 0; i < ncpus_; i++)
		pthread_join(cpus_[i].th, NULL);
	free(cpus_);
	cpus_ = NULL;
	ncpus_ = 0;
}

int m08_run_on(const int *cpus, int n, void (*fn)(void *), void **args)
{
	_Atomic uint32_t left = (uint32_t)n;
	for (int i = 0; i < n; i++) {
		struct m08_cpu *t = NULL;
		for (int j = 0; j < ncpus_; j++)
			if (cpus_[j].cpu == cpus[i])
				t = &cpus_[j];
		if (!t)
			return -ENXIO;
		t->task = fn;
		t->task_arg = args ? args[i] : NULL;
		t->task_left = &left;
		m08_kick(t, P_TASK);
	}
	/* the loops' watch: their end marked when it passes (budget_watch) */
	budget_wait(&left);
	return 0;
}
