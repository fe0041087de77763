/*
 * call-async: an async call uses the caller's descriptor: it runs once,
 * xc_call_done() turns true only after fn returned (its effects visible),
 * and the descriptor is refused with -EBUSY while in flight.
 */
#include "test.h"
#include <stdatomic.h>

static _Atomic int gate, runs;
static int effect;

static void blocker(void *arg)
{
	while (!atomic_load(&gate))
		;
	effect = 42;
	atomic_fetch_add(&runs, 1);
}

static void bump(void *arg)
{
	atomic_fetch_add(&runs, 1);
}

int main(void)
{
	struct xc_call call = { 0 }, calls[64] = { 0 };
	int cpus[CPU_SETSIZE], n;

	CHECK_RET(xc_init(NULL), 0);
	n = t_cpus(cpus);
	if (n < 2) {
		xc_exit();
		t_skip("needs 2 CPUs");
	}
	CHECK(xc_call_done(&call));
	call.fn = blocker;
	CHECK_RET(xc_call_async(cpus[1], &call), 0);
	CHECK(!xc_call_done(&call));
	CHECK_RET(xc_call_async(cpus[1], &call), -EBUSY);
	CHECK_RET(xc_call_async(cpus[0], &call), -EBUSY);
	atomic_store(&gate, 1);
	WAIT_UNTIL(xc_call_done(&call));
	CHECK(effect == 42 && runs == 1);

	/* reusable once done; many in flight at once */
	call.fn = bump;
	CHECK_RET(xc_call_async(cpus[1], &call), 0);
	for (int i = 0; i < 64; i++) {
		calls[i].fn = bump;
		CHECK_RET(xc_call_async(cpus[i % n], &calls[i]), 0);
	}
	for (int i = 0; i < 64; i++)
		WAIT_UNTIL(xc_call_done(&calls[i]));
	WAIT_UNTIL(xc_call_done(&call));
	CHECK(runs == 1 + 1 + 64);
	CHECK_RET(xc_exit(), 0);
	return T_PASS;
}
