// SPDX-License-Identifier: MIT
/*
 * bringup.c - xc_init() and xc_exit(): start the workers, all at once or one
 * at a time, and stop them.
 *
 * Parallel bringup follows seed 004 (kick all, then release each): every
 * worker is started at once; each pins itself, runs the cpu_init hook and
 * reports alive; when all have, the starter releases them online in CPU
 * order. Serial bringup starts, waits for and releases one worker before the
 * next. A worker that fails its init, or does not report alive before the
 * timeout, fails xc_init() with its CPU named, and nothing is left behind: a
 * hook stuck at a cancellation point is cancelled, every thread is joined.
 */
#include "internal.h"
#include "futex.h"
#include "trace.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#define XC_BRINGUP_TIMEOUT_MS_DEFAULT 10000u
/* How long a cancelled init hook gets to unwind before it is given up on. */
#define XC_CANCEL_GRACE_MS 1000

struct xc_runtime xc_rt = { .hotplug_lock = PTHREAD_MUTEX_INITIALIZER };
struct xc_cpu xc_cpus[XC_MAX_CPUS];

static void cpu_reset(struct xc_cpu *c, int cpu)
{
	c->cpu = cpu;
	c->present = true;
	c->generation = xc_rt.generation;
	atomic_store_explicit(&c->callq, XC_LLIST_CLOSED, memory_order_relaxed);
	atomic_store_explicit(&c->workq, XC_LLIST_CLOSED, memory_order_relaxed);
	atomic_store_explicit(&c->urgentq, XC_LLIST_CLOSED, memory_order_relaxed);
	atomic_store_explicit(&c->slot.done.word, XC_SLOT_CLOSED, memory_order_relaxed);
	atomic_store_explicit(&c->slot_claim, 0, memory_order_relaxed);
	c->slot_running = false;
	atomic_store_explicit(&c->urgent_calls, 0, memory_order_relaxed);
	atomic_store_explicit(&c->signals_sent, 0, memory_order_relaxed);
	atomic_store_explicit(&c->stuck_reports, 0, memory_order_relaxed);
	atomic_store_explicit(&c->cur_kind, XC_ACT_NONE, memory_order_relaxed);
	atomic_store_explicit(&c->idle, XC_IDLE_RUNNING, memory_order_relaxed);
	atomic_store_explicit(&c->ctl, XC_CTL_NONE, memory_order_relaxed);
	atomic_store_explicit(&c->park, XC_PARK_WAIT, memory_order_relaxed);
	atomic_store_explicit(&c->boot, XC_BOOT_NONE, memory_order_relaxed);
	atomic_store_explicit(&c->online, false, memory_order_relaxed);
	atomic_store_explicit(&c->poll_ns, 0, memory_order_relaxed);
	atomic_store_explicit(&c->kicks_sent, 0, memory_order_relaxed);
	atomic_store_explicit(&c->kicks_elided, 0, memory_order_relaxed);
	atomic_store_explicit(&c->kicks_coalesced, 0, memory_order_relaxed);
	atomic_store_explicit(&c->free_rides, 0, memory_order_relaxed);
	atomic_store_explicit(&c->calls, 0, memory_order_relaxed);
	atomic_store_explicit(&c->sleeps, 0, memory_order_relaxed);
	atomic_store_explicit(&c->wakeups, 0, memory_order_relaxed);
	atomic_store_explicit(&c->work_run, 0, memory_order_relaxed);
	c->work_head = c->work_tail = NULL;
	c->boot_err = 0;
	c->thread_live = false;
	xc_topology_read(c);
}

static int cpu_start(struct xc_cpu *c)
{
	int err;

	atomic_store_explicit(&c->boot, XC_BOOT_STARTING, memory_order_relaxed);
	err = pthread_create(&c->thread, NULL, xc_worker_main, c);
	if (err) {
		atomic_store_explicit(&c->boot, XC_BOOT_NONE, memory_order_relaxed);
		xc_report("CPU %d: cannot start its worker: %s", c->cpu, strerror(err));
		return -err;
	}
	c->thread_live = true;
	return 0;
}

/* Check the reports of @n CPUs from @first; report each failure; return the first error. */
static int boot_verdict(int first, int n)
{
	int ret = 0;

	for (int i = first; i < first + n; i++) {
		struct xc_cpu *c = &xc_cpus[xc_rt.cpu_list[i]];
		/* acquire: pairs with the worker's release of its report */
		int b = atomic_load_explicit(&c->boot, memory_order_acquire);
		int err = 0;

		if (b == XC_BOOT_FAILED) {
			err = c->boot_err;
			xc_report("CPU %d: bringup failed: %s", c->cpu, strerror(-err));
		} else if (b == XC_BOOT_STARTING) {
			err = -ETIMEDOUT;
			xc_report("CPU %d: did not report alive within %u ms", c->cpu,
				  xc_rt.cfg.bringup_timeout_ms);
		} else if (b == XC_BOOT_NONE) {
			err = -EAGAIN;
		}
		if (err && !ret)
			ret = err;
	}
	return ret;
}

static void cpu_release_online(struct xc_cpu *c)
{
	xc_cpu_open(c);
	xc_park_release(c, XC_PARK_RUN);
}

static int start_workers(int first, int n)
{
	int ret = 0;

	xc_sync_init(&xc_rt.boot_done, (uint32_t)n);
	for (int i = first; i < first + n; i++)
		if (cpu_start(&xc_cpus[xc_rt.cpu_list[i]]))
			xc_sync_complete(&xc_rt.boot_done);	/* nothing will report */
	xc_sync_wait_until(&xc_rt.boot_done,
			   xc_now_ns() + (uint64_t)xc_rt.cfg.bringup_timeout_ms * 1000000u);
	ret = boot_verdict(first, n);
	return ret;
}

static int bringup_parallel(void)
{
	int ret = start_workers(0, xc_rt.nr_cpus);

	if (ret)
		return ret;
	for (int i = 0; i < xc_rt.nr_cpus; i++)
		cpu_release_online(&xc_cpus[xc_rt.cpu_list[i]]);
	return 0;
}

static int bringup_serial(void)
{
	for (int i = 0; i < xc_rt.nr_cpus; i++) {
		int ret = start_workers(i, 1);

		if (ret)
			return ret;
		cpu_release_online(&xc_cpus[xc_rt.cpu_list[i]]);
	}
	return 0;
}

static int join_within(pthread_t t, int ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return pthread_timedjoin_np(t, NULL, &ts);
}

/* Undo a failed bringup: stop every started worker, whatever state it reached. */
static void bringup_undo(void)
{
	for (int i = 0; i < xc_rt.nr_cpus; i++) {
		struct xc_cpu *c = &xc_cpus[xc_rt.cpu_list[i]];

		if (!c->thread_live)
			continue;
		if (atomic_load_explicit(&c->boot, memory_order_acquire) == XC_BOOT_STARTING)
			pthread_cancel(c->thread);	/* stuck in its init hook */
		if (atomic_load_explicit(&c->online, memory_order_acquire)) {
			/* seq_cst: S1 of the protocol, then the kick */
			atomic_store_explicit(&c->ctl, XC_CTL_EXIT, memory_order_seq_cst);
			xc_kick(c);
		} else {
			xc_park_release(c, XC_PARK_EXIT);
		}
		if (join_within(c->thread, XC_CANCEL_GRACE_MS)) {
			xc_report("CPU %d: init hook did not return after cancellation; its thread is left running",
				  c->cpu);
			pthread_detach(c->thread);
		}
		c->thread_live = false;
	}
}

static void runtime_clear(void)
{
	for (int i = 0; i < xc_rt.nr_cpus; i++)
		xc_cpus[xc_rt.cpu_list[i]].present = false;
	xc_rt.nr_cpus = 0;
}

int xc_init(const struct xc_opts *opts)
{
	int expected = XC_RT_DOWN, ret, n = 0;

	if (xc_self)
		return -EBUSY;
	/* acq_rel: one initialiser; it sees the previous xc_exit's writes */
	if (!atomic_compare_exchange_strong_explicit(&xc_rt.state, &expected, XC_RT_STARTING,
						     memory_order_acq_rel, memory_order_relaxed))
		return -EBUSY;
	ret = xc_config_resolve(opts, &xc_rt.cfg);
	if (ret) {
		atomic_store_explicit(&xc_rt.state, XC_RT_DOWN, memory_order_release);
		return ret;
	}
	if (xc_rt.cfg.bringup_timeout_ms == 0)
		xc_rt.cfg.bringup_timeout_ms = XC_BRINGUP_TIMEOUT_MS_DEFAULT;
	if (xc_rt.cfg.verbose)
		xc_config_print(&xc_rt.cfg);
	xc_rt.generation++;
	for (int cpu = 0; cpu < XC_MAX_CPUS; cpu++)
		if (CPU_ISSET(cpu, &xc_rt.cfg.cpus))
			xc_rt.cpu_list[n++] = cpu;
	xc_rt.nr_cpus = n;
	for (int i = 0; i < n; i++)
		cpu_reset(&xc_cpus[xc_rt.cpu_list[i]], xc_rt.cpu_list[i]);

	ret = xc_urgent_install();
	if (!ret && xc_rt.cfg.trace_file)
		ret = xc_trace_start();
	if (!ret)
		ret = xc_rt.cfg.serial_bringup ? bringup_serial() : bringup_parallel();
	if (ret) {
		bringup_undo();
		xc_trace_stop();
		xc_urgent_restore();
		runtime_clear();
		atomic_store_explicit(&xc_rt.state, XC_RT_DOWN, memory_order_release);
		return ret;
	}
	/* release: the configuration and every CPU's setup before any call sees UP */
	atomic_store_explicit(&xc_rt.state, XC_RT_UP, memory_order_release);
	return 0;
}

int xc_exit(void)
{
	int expected = XC_RT_UP, ret = 0;

	if (xc_self)
		return -EDEADLK;
	/* seq_cst: one exiter; new calls see STOPPING and get -ENXIO (urgent.c pairs with it) */
	if (!atomic_compare_exchange_strong_explicit(&xc_rt.state, &expected, XC_RT_STOPPING,
						     memory_order_seq_cst, memory_order_relaxed))
		return -ENXIO;
	pthread_mutex_lock(&xc_rt.hotplug_lock);
	for (int i = 0; i < xc_rt.nr_cpus; i++) {
		struct xc_cpu *c = &xc_cpus[xc_rt.cpu_list[i]];

		if (atomic_load_explicit(&c->online, memory_order_acquire)) {
			/* seq_cst: S1 of the protocol, then the kick */
			atomic_store_explicit(&c->ctl, XC_CTL_EXIT, memory_order_seq_cst);
			xc_kick(c);
		} else {
			xc_park_release(c, XC_PARK_EXIT);
		}
	}
	for (int i = 0; i < xc_rt.nr_cpus; i++) {
		struct xc_cpu *c = &xc_cpus[xc_rt.cpu_list[i]];

		pthread_join(c->thread, NULL);
		c->thread_live = false;
	}
	xc_urgent_restore();
	if (xc_rt.cfg.trace_file)
		ret = xc_trace_dump(xc_rt.cfg.trace_file);
	xc_trace_stop();
	runtime_clear();
	pthread_mutex_unlock(&xc_rt.hotplug_lock);
	atomic_store_explicit(&xc_rt.state, XC_RT_DOWN, memory_order_release);
	return ret;
}
