/*
 * urgent: an XC_URGENT call reaches a worker spinning in a work item that
 * never polls (the work item waits for the urgent call's effect, so without
 * the interruption this test would hang), runs there exactly once, on that
 * CPU, by a signal; an urgent call to an idle polling worker needs no
 * signal; a waiting call or a hotplug request from inside an urgent
 * function gets -EDEADLK, while nowait calls from there work, whether it
 * runs in the signal handler, the idle loop, right after a call or inline
 * (and a nowait call from it to a full ring gets -ENOMEM, never waits);
 * an urgent
 * call never interrupts another call's function, and runs right after it,
 * before plain calls queued behind it.
 */
#include "test.h"
#include "base/internal.h"
#include <stdatomic.h>

static _Atomic int released, urgent_runs, in_work, ran_on = -1, inner_ret = 1, nowait_ret = 1;
static _Atomic int nested_runs, hotplug_ret = 1, poll_ret = 1;

static void nested(void *arg)
{
	atomic_fetch_add(&nested_runs, 1);
}

static void busy_work(void *arg)
{
	atomic_store(&in_work, 1);
	while (!atomic_load(&released))
		;	/* no xc_poll(): only an interruption gets through */
}

static void nothing(void *arg)
{
}

static void urgent_count(void *arg)
{
	atomic_fetch_add(&urgent_runs, 1);
}

static void urgent_fn(void *arg)
{
	atomic_store(&ran_on, xc_this_cpu());
	atomic_fetch_add(&urgent_runs, 1);
	/* nothing else runs on this CPU until we return: a wait could never end */
	atomic_store(&inner_ret, xc_call_single(*(int *)arg, nothing, NULL, XC_WAIT));
	atomic_store(&nowait_ret, xc_call_single(*(int *)arg, nested, NULL, 0));
	atomic_store(&hotplug_ret, xc_cpu_offline(*(int *)arg));
	atomic_store(&poll_ret, xc_poll());
	atomic_store(&released, 1);
}

static _Atomic int gate_open, gated, plain_runs;

static void gate(void *arg)
{
	atomic_store(&gated, 1);
	WAIT_UNTIL(atomic_load(&gate_open));
}

static void plain_count(void *arg)
{
	atomic_fetch_add(&plain_runs, 1);
}

/* A plain call on cpus[1] that calls urgent_fn on its own CPU: it runs inline. */
static void urgent_inline(void *arg)
{
	const int *cpus = arg;

	CHECK_RET(xc_call_single(cpus[1], urgent_fn, (void *)&cpus[0], XC_URGENT), 0);
}

/* An urgent function waits for nothing: a nowait call to a full ring gets -ENOMEM. */
static _Atomic int hold0, held0, full_ret = 1, full_sent, full_ran;

static void hold_cpu(void *arg)
{
	atomic_store(&held0, 1);
	WAIT_UNTIL(!atomic_load(&hold0));
}

static void count_full(void *arg)
{
	atomic_fetch_add(&full_ran, 1);
}

static void urgent_fills(void *arg)
{
	int n, r = 0;

	for (n = 0; n < 1 << 20 && !r; n++)
		r = xc_call_single(*(int *)arg, count_full, NULL, 0);
	atomic_store(&full_sent, n - 1);
	atomic_store(&full_ret, r);
}

static void urgent_full_ring(const int *cpus)
{
	struct xc_work w = { .fn = hold_cpu };

	atomic_store(&hold0, 1);
	CHECK_RET(xc_queue_work(cpus[0], &w), 0);
	WAIT_UNTIL(atomic_load(&held0));
	/* in cpus[1]'s idle loop, not the handler: it must not wait, serving, for room */
	CHECK_RET(xc_call_single(cpus[1], urgent_fills, (void *)&cpus[0], XC_URGENT), 0);
	WAIT_UNTIL(atomic_load(&full_ret) != 1);
	CHECK_RET(atomic_load(&full_ret), -ENOMEM);
	CHECK(atomic_load(&full_sent) > 0);
	atomic_store(&hold0, 0);
	WAIT_UNTIL(atomic_load(&full_ran) == atomic_load(&full_sent));
}

enum where { IDLE_LOOP, AFTER_CALL, INLINE };

/*
 * urgent_fn on cpus[1] outside the signal handler: in the idle loop, right
 * after a plain call (with another plain call queued behind, which its
 * xc_poll() must not run), or inline in a call to its own CPU. Its rules are
 * the handler's.
 */
static void urgent_rules(const int *cpus, enum where where)
{
	bool after_call = where == AFTER_CALL;

	atomic_store(&released, 0);
	atomic_store(&inner_ret, 1);
	atomic_store(&nowait_ret, 1);
	atomic_store(&hotplug_ret, 1);
	atomic_store(&poll_ret, 1);
	atomic_store(&nested_runs, 0);
	atomic_store(&gate_open, 0);
	atomic_store(&gated, 0);
	atomic_store(&plain_runs, 0);
	if (after_call) {
		CHECK_RET(xc_call_single(cpus[1], gate, NULL, 0), 0);
		WAIT_UNTIL(atomic_load(&gated));
	}
	if (where == INLINE)
		CHECK_RET(xc_call_single(cpus[1], urgent_inline, (void *)cpus, 0), 0);
	else
		CHECK_RET(xc_call_single(cpus[1], urgent_fn, (void *)&cpus[0], XC_URGENT), 0);
	if (after_call) {
		CHECK_RET(xc_call_single(cpus[1], plain_count, NULL, 0), 0);
		atomic_store(&gate_open, 1);
	}
	WAIT_UNTIL(atomic_load(&released));
	CHECK(atomic_load(&ran_on) == cpus[1]);
	CHECK_RET(atomic_load(&inner_ret), -EDEADLK);
	CHECK_RET(atomic_load(&nowait_ret), 0);
	CHECK_RET(atomic_load(&hotplug_ret), -EDEADLK);
	CHECK_RET(atomic_load(&poll_ret), 0);
	WAIT_UNTIL(atomic_load(&nested_runs) == 1);
	if (after_call)
		WAIT_UNTIL(atomic_load(&plain_runs) == 1);
}

static _Atomic int in_plain, nested_in_plain, order_at = 0, urgent_order, late_order;

static void long_plain(void *arg)
{
	atomic_store(&in_plain, 1);
	t_sleep_ms(100);		/* signals may arrive: this function is not interrupted */
	atomic_store(&in_plain, 0);
	atomic_fetch_add(&order_at, 1);
}

static void urgent_in_order(void *arg)
{
	if (atomic_load(&in_plain))
		atomic_store(&nested_in_plain, 1);
	atomic_store(&urgent_order, atomic_fetch_add(&order_at, 1));
}

static void late_plain(void *arg)
{
	atomic_store(&late_order, atomic_fetch_add(&order_at, 1));
}

/* A long plain call, then an urgent one, then a plain one, to the same CPU. */
static void not_interrupting_calls(int cpu)
{
	CHECK_RET(xc_init(NULL), 0);
	CHECK_RET(xc_call_single(cpu, long_plain, NULL, 0), 0);
	WAIT_UNTIL(atomic_load(&in_plain));
	CHECK_RET(xc_call_single(cpu, urgent_in_order, NULL, XC_URGENT), 0);
	CHECK_RET(xc_call_single(cpu, late_plain, NULL, XC_WAIT), 0);
	CHECK_RET(xc_exit(), 0);
	CHECK(atomic_load(&nested_in_plain) == 0);
	CHECK(atomic_load(&urgent_order) == 1 && atomic_load(&late_order) == 2);
}

int main(void)
{
	struct xc_work w = { .fn = busy_work };
	struct xc_stats a, b;
	int cpus[CPU_SETSIZE];

	for (int wait = 0; wait < 2; wait++) {
		CHECK_RET(xc_init(NULL), 0);
		if (t_cpus(cpus) < 2) {
			xc_exit();
			t_skip("needs 2 CPUs");
		}
		atomic_store(&released, 0);
		atomic_store(&in_work, 0);
		atomic_store(&urgent_runs, 0);
		CHECK_RET(xc_queue_work(cpus[1], &w), 0);
		WAIT_UNTIL(atomic_load(&in_work));
		xc_stats_get(cpus[1], &a);
		CHECK_RET(xc_call_single(cpus[1], urgent_fn, &cpus[0], XC_URGENT | (wait ? XC_WAIT : 0)), 0);
		WAIT_UNTIL(atomic_load(&released));
		CHECK(atomic_load(&ran_on) == cpus[1]);
		CHECK(atomic_load(&inner_ret) == -EDEADLK);
		CHECK(atomic_load(&nowait_ret) == 0);
		CHECK(atomic_load(&hotplug_ret) == -EDEADLK);
		CHECK_RET(atomic_load(&poll_ret), 0);
		WAIT_UNTIL(atomic_load(&nested_runs) == wait + 1);
		/* the handler counts the call after its function returns: a nowait caller may look first */
		WAIT_UNTIL(xc_stats_get(cpus[1], &b) == 0 && b.urgent_calls != a.urgent_calls);
		CHECK(b.signals_sent - a.signals_sent >= 1);
		CHECK(b.urgent_calls - a.urgent_calls == 1);
		CHECK_RET(xc_exit(), 0);
		CHECK(atomic_load(&urgent_runs) == 1);
	}

	/* an idle, polling worker runs urgent calls in its idle loop: no signal */
	struct xc_opts o = { .poll_ns = XC_POLL_FOREVER };
	CHECK_RET(xc_init(&o), 0);
	atomic_store(&urgent_runs, 0);
	WAIT_UNTIL(atomic_load(&xc_cpus[cpus[1]].mbox.idle) == XC_IDLE_POLLING);
	xc_stats_get(cpus[1], &a);
	for (int i = 0; i < 100; i++) {
		CHECK_RET(xc_call_single(cpus[1], urgent_count, NULL, XC_URGENT), 0);
		WAIT_UNTIL(atomic_load(&urgent_runs) == i + 1);
	}
	/* the last call is counted after its function returns */
	WAIT_UNTIL(xc_stats_get(cpus[1], &b) == 0 && b.urgent_calls - a.urgent_calls >= 100);
	CHECK(b.signals_sent == a.signals_sent);
	CHECK(b.urgent_calls - a.urgent_calls == 100);
	CHECK(atomic_load(&urgent_runs) == 100);
	/* the rules of an urgent function hold there too: no waiting call, no hotplug */
	urgent_rules(cpus, IDLE_LOOP);
	/* and where it runs right after a plain call, whose return runs it: xc_poll() runs nothing */
	urgent_rules(cpus, AFTER_CALL);
	/* and inline, called from its own CPU */
	urgent_rules(cpus, INLINE);
	urgent_full_ring(cpus);
	CHECK_RET(xc_exit(), 0);

	not_interrupting_calls(cpus[1]);
	return T_PASS;
}
