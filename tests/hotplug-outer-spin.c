/*
 * hotplug-outer-spin: a plain thread's xc_cpu_offline(D) holds the hotplug
 * lock until D's worker serves the request, which it does only once its
 * wait for a call C to W ends. W's work item waits for the lock too
 * (xc_cpu_online(D)), and that wait's serve runs C, whose own
 * xc_cpu_online(D) can never have the lock: D's deadlock look refuses it
 * with -EDEADLK. That refused wait puts back the state of the work item's
 * wait, below C, which can have the lock once C returns: no look may refuse
 * it, not even one made while C is still up W's stack. So C, after its
 * refusal, makes D look once more: it sends D a nowait call, and waits
 * until D has run it and gone idle again, which D's wait does only after a
 * look. Then C returns, and D's work item waits until the work item's wait
 * on W has been through a pass after C (a serve that found nothing, or its
 * end) before it lets the offline go through. The work item's
 * xc_cpu_online(D) must then take the lock and bring D back: 0, not
 * -EDEADLK. Each step waits for the event itself.
 */
#include "test.h"
#include "base/internal.h"
#include "run/wait.h"
#include <pthread.h>
#include <stdatomic.h>

static int d_cpu, w_cpu;
static _Atomic int w_started, d_calling, probe_ran, inner_ret, outer_ret, call_ret, offline_ret;

static bool request_pending(void)
{
	/* acquire: as the library reads it */
	return atomic_load_explicit(&xc_cpus[d_cpu].life.ctl, memory_order_acquire) == XC_CTL_OFFLINE;
}

/* D's worker is inside its idle wait, which its wait for C enters only after a deadlock look. */
static bool d_idle(void)
{
	/* relaxed: read after probe_ran, which D set while RUNNING, so this is that or later */
	return atomic_load_explicit(&xc_cpus[d_cpu].mbox.idle, memory_order_relaxed) != XC_IDLE_RUNNING;
}

static uint32_t w_empty_count(void)
{
	/* acquire: as the library's look reads it */
	return XC_EMPTY_COUNT(atomic_load_explicit(&xc_cpus[w_cpu].life.served_empty, memory_order_acquire));
}

/* On D, inside its wait for C: just say it ran. */
static void probe(void *arg)
{
	atomic_store(&probe_ran, 1);
}

/* C, on W, run by the work item's wait for the lock. */
static void c_fn(void *arg)
{
	/* C's own wait for the lock lies above C: D refuses it */
	atomic_store(&inner_ret, xc_cpu_online(d_cpu));
	/* the work item's wait is W's wait for the lock again: D looks once more, C still up */
	CHECK_RET(xc_call_single(d_cpu, probe, NULL, 0), 0);
	WAIT_UNTIL(atomic_load(&probe_ran));
	WAIT_UNTIL(d_idle());
}

/* W's work item: once the plain thread holds the lock, wait for it. */
static void w_outer(void *arg)
{
	atomic_store(&w_started, 1);	/* C is pushed from here on: it waits for this wait's serve */
	WAIT_UNTIL(request_pending());
	atomic_store(&outer_ret, xc_cpu_online(d_cpu));
}

/* D's work item: its call C to W; the offline waits until W's wait made a pass after C. */
static void d_waits_on_w(void *arg)
{
	uint32_t empty;

	atomic_store(&d_calling, 1);
	atomic_store(&call_ret, xc_call_single(w_cpu, c_fn, NULL, XC_WAIT));
	empty = w_empty_count();
	WAIT_UNTIL(atomic_load(&outer_ret) != 1 || w_empty_count() != empty);
}

static void *take_d(void *arg)
{
	WAIT_UNTIL(atomic_load(&d_calling));
	atomic_store(&offline_ret, xc_cpu_offline(d_cpu));
	return NULL;
}

int main(void)
{
	struct xc_work ww = { .fn = w_outer }, wd = { .fn = d_waits_on_w };
	int cpus[CPU_SETSIZE], n;
	pthread_t t;

	CHECK_RET(xc_init(NULL), 0);
	n = t_cpus(cpus);
	if (n < 2) {
		xc_exit();
		t_skip("needs 2 CPUs");
	}
	d_cpu = cpus[0];
	w_cpu = cpus[n - 1];
	atomic_store(&inner_ret, 1);
	atomic_store(&outer_ret, 1);
	atomic_store(&call_ret, 1);
	atomic_store(&offline_ret, 1);

	CHECK_RET(xc_queue_work(w_cpu, &ww), 0);
	WAIT_UNTIL(atomic_load(&w_started));
	CHECK(pthread_create(&t, NULL, take_d, NULL) == 0);
	CHECK_RET(xc_queue_work(d_cpu, &wd), 0);
	CHECK(pthread_join(t, NULL) == 0);
	CHECK_RET(atomic_load(&offline_ret), 0);
	CHECK_RET(atomic_load(&call_ret), 0);
	CHECK_RET(atomic_load(&inner_ret), -EDEADLK);
	WAIT_UNTIL(atomic_load(&outer_ret) != 1);
	CHECK_RET(atomic_load(&outer_ret), 0);	/* the wait below C took the lock, and brought D back */
	CHECK(t_online(d_cpu));
	CHECK_RET(xc_exit(), 0);
	puts("hotplug-outer-spin: C's wait for the lock refused, the wait below it took the lock");
	return T_PASS;
}
