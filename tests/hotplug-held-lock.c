/*
 * hotplug-held-lock: a plain thread's xc_cpu_offline(D) holds the hotplug
 * lock until D's worker serves the request, which it does only once its own
 * wait ends; D waits on a call to W. If that call asks for the lock (to take
 * D offline, or to bring D online) it can never have it: it gets -EDEADLK,
 * its call returns, D goes offline and the plain thread's offline returns 0.
 * When D's wait can end (its call is still queued to W, and W's wait for the
 * lock serves it) nothing is refused: both hotplug calls succeed. And when
 * W's wait for the lock serves a queue of calls that each want the lock in
 * turn, each is refused, and all complete. Found by the scenario fuzzer
 * (fuzz/corpus/scenarios/hotplug-behind-held-lock.prog).
 */
#include "test.h"
#include "base/internal.h"
#include <pthread.h>
#include <stdatomic.h>

static int d_cpu, w_cpu;
static _Atomic int d_calling, w_started, w_ret, call_ret, done, offline_ret;
static int (*w_op)(int cpu);

static bool request_pending(void)
{
	/* acquire: as the library reads it */
	return atomic_load_explicit(&xc_cpus[d_cpu].life.ctl, memory_order_acquire) == XC_CTL_OFFLINE;
}

/* On W: once the plain thread's request for D is pending, the hotplug call on D. */
static void w_hotplug(void *arg)
{
	atomic_store(&w_started, 1);
	WAIT_UNTIL(request_pending());
	atomic_store(&w_ret, w_op(d_cpu));
}

static void noop(void *arg)
{
}

/* On D: wait for a call to W (@arg: the function). */
static void d_waits_on_w(void *arg)
{
	atomic_store(&d_calling, 1);
	atomic_store(&call_ret, xc_call_single(w_cpu, (xc_func_t)arg, NULL, XC_WAIT));
	atomic_store(&done, 1);
}

static void *take_d(void *arg)
{
	WAIT_UNTIL(atomic_load(&d_calling));
	atomic_store(&offline_ret, xc_cpu_offline(d_cpu));
	return NULL;
}

static void reset(int (*op)(int))
{
	w_op = op;
	atomic_store(&d_calling, 0);
	atomic_store(&w_started, 0);
	atomic_store(&w_ret, 1);
	atomic_store(&call_ret, 1);
	atomic_store(&done, 0);
	atomic_store(&offline_ret, 1);
}

/* The plain thread's offline of D goes through, and D comes back. */
static void offline_went_through(pthread_t t)
{
	CHECK(pthread_join(t, NULL) == 0);
	CHECK_RET(atomic_load(&offline_ret), 0);
	WAIT_UNTIL(atomic_load(&done));
	CHECK_RET(atomic_load(&call_ret), 0);
	CHECK(!t_online(d_cpu));
	CHECK_RET(xc_cpu_online(d_cpu), 0);
	CHECK_RET(xc_call_single(d_cpu, noop, NULL, XC_WAIT), 0);
}

/* D's call to W runs the hotplug call on D: it waits on D's wait, refused. */
static void refused(int (*op)(int))
{
	struct xc_work wd = { .fn = d_waits_on_w, .arg = (void *)w_hotplug };
	pthread_t t;

	reset(op);
	CHECK(pthread_create(&t, NULL, take_d, NULL) == 0);
	CHECK_RET(xc_queue_work(d_cpu, &wd), 0);
	offline_went_through(t);
	CHECK_RET(atomic_load(&w_ret), -EDEADLK);
}

/* 4: calls queued to W behind the one D waits on, each taking D offline */
#define QUEUED 100	/* fewer than a ring holds (256 by default): the pushes never wait */
static _Atomic int queued_refused, queued_other, all_queued;

static void queued_offline(void *arg)
{
	atomic_fetch_add(xc_cpu_offline(d_cpu) == -EDEADLK ? &queued_refused : &queued_other, 1);
}

static void w_serves_queue(void *arg)
{
	atomic_store(&w_started, 1);
	WAIT_UNTIL(request_pending());
	/* the calls are queued before the lock's wait begins: it serves them, nested */
	WAIT_UNTIL(atomic_load(&all_queued));
	atomic_store(&w_ret, xc_cpu_offline(d_cpu));
}

static void queue_refused(void)
{
	struct xc_work wd = { .fn = d_waits_on_w, .arg = (void *)w_serves_queue };
	pthread_t t;

	reset(xc_cpu_offline);
	CHECK(pthread_create(&t, NULL, take_d, NULL) == 0);
	CHECK_RET(xc_queue_work(d_cpu, &wd), 0);
	WAIT_UNTIL(atomic_load(&w_started) && request_pending());
	for (int i = 0; i < QUEUED; i++)
		CHECK_RET(xc_call_single(w_cpu, queued_offline, NULL, 0), 0);
	atomic_store(&all_queued, 1);
	offline_went_through(t);
	CHECK_RET(atomic_load(&w_ret), -EDEADLK);
	CHECK_RET(atomic_load(&queued_refused), QUEUED);
	CHECK_RET(atomic_load(&queued_other), 0);
}

int main(void)
{
	struct xc_work ww = { .fn = w_hotplug }, wd = { .fn = d_waits_on_w, .arg = (void *)noop };
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

	/* 1. the call on W takes D offline; 2. it brings D online */
	refused(xc_cpu_offline);
	refused(xc_cpu_online);

	/*
	 * 3. D's call is queued behind a work item on W that brings D online:
	 * the item's wait for the lock runs D's call, D's wait ends, D goes
	 * offline, and then the item has the lock and brings D back.
	 */
	reset(xc_cpu_online);
	CHECK_RET(xc_queue_work(w_cpu, &ww), 0);
	WAIT_UNTIL(atomic_load(&w_started));
	CHECK(pthread_create(&t, NULL, take_d, NULL) == 0);
	CHECK_RET(xc_queue_work(d_cpu, &wd), 0);
	CHECK(pthread_join(t, NULL) == 0);
	CHECK_RET(atomic_load(&offline_ret), 0);
	WAIT_UNTIL(atomic_load(&w_ret) != 1);
	CHECK_RET(atomic_load(&w_ret), 0);
	WAIT_UNTIL(atomic_load(&done));
	CHECK_RET(atomic_load(&call_ret), 0);
	CHECK(t_online(d_cpu));
	CHECK_RET(xc_call_single(d_cpu, noop, NULL, XC_WAIT), 0);

	/* 4. a queue of calls on W that each want the lock */
	queue_refused();

	CHECK_RET(xc_exit(), 0);
	return T_PASS;
}
