// SPDX-License-Identifier: MIT
/*
 * init.c - xc_init() and xc_exit(): the runtime's state (DOWN, STARTING,
 * UP, STOPPING), the options resolved, the workers started and stopped
 * (cpu/bringup.c), the urgent signal, tracing, and the calls in flight that
 * the exit waits for (base/inflight.c).
 */
#include "base/internal.h"
#include "base/thread.h"
#include "base/inflight.h"
#include "base/trace.h"
#include "proto/ring.h"
#include "proto/barrier.h"
#include "run/urgent_signal.h"
#include "cpu/bringup.h"
#include "cpu/fork.h"
#include "api/options.h"

#include <errno.h>
#include <pthread.h>

static int runtime_init(const struct xc_opts *opts)
{
	int expected = XC_RT_DOWN, ret;

	if (xc_self)
		return -EBUSY;
	xc_fork_handlers_register();
	/* acq_rel: one initialiser; it sees the previous xc_exit's writes */
	if (!atomic_compare_exchange_strong_explicit(&xc_rt.state, &expected, XC_RT_STARTING,
						     memory_order_acq_rel, memory_order_relaxed))
		return -EBUSY;
	ret = xc_config_resolve(opts, &xc_rt.cfg);
	if (ret) {
		atomic_store_explicit(&xc_rt.state, XC_RT_DOWN, memory_order_release);
		return ret;
	}
	if (xc_rt.cfg.verbose)
		xc_config_print(&xc_rt.cfg);
	xc_rt.generation++;
	xc_spin_calibrate();
	xc_barrier_init();
	xc_cpus_reset();

	ret = xc_urgent_install();
	if (!ret && xc_rt.cfg.trace_file)
		ret = xc_trace_start();
	if (!ret)
		ret = xc_bringup();
	if (ret) {
		/* a hook left running: the caller must keep cpu_init_arg alive for ever (xcall.h) */
		if (xc_bringup_undo())
			ret = -ETIMEDOUT;
		xc_trace_stop();
		xc_urgent_restore();
		xc_runtime_clear();
		atomic_store_explicit(&xc_rt.state, XC_RT_DOWN, memory_order_release);
		return ret;
	}
	/* release: the configuration and every CPU's setup before any call sees UP */
	atomic_store_explicit(&xc_rt.state, XC_RT_UP, memory_order_release);
	xc_fast_paths_open();
	return 0;
}

static int runtime_init_sized(const struct xc_opts *opts, size_t size)
{
	struct xc_opts full;

	if (xc_opts_in(&full, opts, size)) {
		xc_report("xc_init: an option past the end of the struct xc_opts this libxcall knows "
			  "(%zu bytes, given %zu): a program built against a newer xcall.h", sizeof(full), size);
		return -EINVAL;
	}
	return runtime_init(opts ? &full : NULL);
}

int xc_init_sz(const struct xc_opts *opts, size_t opts_size)
{
	return XC_GUARDED(runtime_init_sized(opts, opts_size));
}

static int runtime_exit(void)
{
	int expected = XC_RT_UP, ret = 0;

	/* a worker, or a cond hook of this thread's call, which would wait for itself (inflight.c) */
	if (xc_self || (xc_tls.inside & XC_INSIDE_FLIGHT))
		return -EDEADLK;
	/* the lock first: attaching takes it too, so none attaches between the look and STOPPING */
	pthread_mutex_lock(&xc_rt.hotplug_lock);
	for (int i = 0; i < xc_rt.nr_cpus; i++) {
		const struct xc_cpu *c = &xc_cpus[xc_rt.cpu_list[i]];

		if (c->life.attached || c->life.attaching) {
			pthread_mutex_unlock(&xc_rt.hotplug_lock);
			return -EBUSY;	/* its thread drains it when it detaches */
		}
	}
	/* seq_cst: one exiter; new calls see STOPPING and get -ENXIO (urgent.c pairs with it) */
	if (!atomic_compare_exchange_strong_explicit(&xc_rt.state, &expected, XC_RT_STOPPING,
						     memory_order_seq_cst, memory_order_relaxed)) {
		pthread_mutex_unlock(&xc_rt.hotplug_lock);
		return -ENXIO;
	}
	xc_fast_paths_close();
	xc_workers_stop();
	/* hotplug waiting for the lock sees STOPPING and leaves, before the wait for it */
	pthread_mutex_unlock(&xc_rt.hotplug_lock);
	/* calls of other threads that looked while up are out; nothing is cleared before */
	xc_inflight_wait();
	xc_urgent_restore();
	if (xc_rt.cfg.trace_file)
		ret = xc_trace_write(xc_rt.cfg.trace_file);
	xc_trace_stop();
	xc_runtime_clear();
	atomic_store_explicit(&xc_rt.state, XC_RT_DOWN, memory_order_release);
	return ret;
}

int xc_exit(void)
{
	return XC_GUARDED(runtime_exit());
}
