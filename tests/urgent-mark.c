/*
 * urgent-mark: the urgent handler leaves an urgent function's rules as it
 * found them. A work item on CPU A puts the thread in the state of an
 * urgent function that the handler interrupts before it could count itself
 * (marked, in_call 0: the window the bracket around user code no longer
 * has, set here by hand), and spins until an urgent call sent from another
 * thread has run, by the signal, inside it. After the handler the mark must
 * still be there: a waiting call from the work item gets -EDEADLK, as from
 * any urgent function, and a nowait call still works. Then the work item
 * clears the mark it set, and a waiting call works again.
 */
#include "test.h"
#include "base/internal.h"
#include <stdatomic.h>

static int cpu_a, cpu_b;
static _Atomic int in_work, urgent_ran, marked_ret = 1, nowait_ret = 1, plain_ret = 1, work_done;
static _Atomic int nothing_ran;

static void nothing(void *arg)
{
	atomic_fetch_add(&nothing_ran, 1);
}

static void urgent_fn(void *arg)
{
	atomic_store(&urgent_ran, 1);
}

static void marked_work(void *arg)
{
	xc_tls.in_urgent_fn = 1;	/* an urgent function not yet counted */
	atomic_store(&in_work, 1);
	while (!atomic_load(&urgent_ran))
		;	/* no xc_poll(): only the signal's handler runs the urgent call */
	atomic_store(&marked_ret, xc_call_single(cpu_b, nothing, NULL, XC_WAIT));
	atomic_store(&nowait_ret, xc_call_single(cpu_b, nothing, NULL, 0));
	xc_tls.in_urgent_fn = 0;
	atomic_store(&plain_ret, xc_call_single(cpu_b, nothing, NULL, XC_WAIT));
	atomic_store(&work_done, 1);
}

int main(void)
{
	int cpus[CPU_SETSIZE];
	struct xc_work w = { .fn = marked_work };

	CHECK_RET(xc_init(NULL), 0);
	if (t_cpus(cpus) < 2)
		t_skip("needs 2 CPUs");
	cpu_a = cpus[0];
	cpu_b = cpus[1];
	CHECK_RET(xc_queue_work(cpu_a, &w), 0);
	WAIT_UNTIL(atomic_load(&in_work));
	CHECK_RET(xc_call_single(cpu_a, urgent_fn, NULL, XC_URGENT), 0);
	WAIT_UNTIL(atomic_load(&work_done));
	CHECK_RET(atomic_load(&marked_ret), -EDEADLK);
	CHECK_RET(atomic_load(&nowait_ret), 0);
	CHECK_RET(atomic_load(&plain_ret), 0);
	CHECK_RET(xc_exit(), 0);
	/* the nowait call and the last waiting call ran; the refused one did not */
	CHECK_RET(atomic_load(&nothing_ran), 2);
	return T_PASS;
}
