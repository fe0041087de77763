/*
 * exit-attached: a thread that exits while attached, with an application
 * key destructor created after xc_init() (so that it runs among libxcall's
 * own per-thread destructors), is detached before that destructor runs:
 * an XC_URGENT call to its CPU made while the destructor runs, whose
 * function makes a nowait call, is refused with -ENXIO (the CPU is
 * offline); it never reaches the exiting thread with its pool released.
 * Each round uses a fresh thread; the process must not crash.
 */
#include "test.h"
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#define ROUNDS 20

static int attach_cpu, target;
static pthread_key_t app_key;
static _Atomic int in_destructor, release_destructor, urgent_ran, nested_ran;

static void nested(void *arg)
{
	atomic_fetch_add(&nested_ran, 1);
}

static void urgent_fn(void *arg)
{
	atomic_fetch_add(&urgent_ran, 1);
	CHECK_RET(xc_call_single(target, nested, NULL, 0), 0);
}

static void app_destructor(void *v)
{
	atomic_store(&in_destructor, 1);
	WAIT_UNTIL(atomic_load(&release_destructor));
}

static void noop(void *arg)
{
}

static void *exits_attached(void *arg)
{
	t_attach_pinned(attach_cpu);
	CHECK_RET(xc_call_single(target, noop, NULL, XC_WAIT), 0);	/* a pool and a ring of its own */
	CHECK(pthread_setspecific(app_key, &app_key) == 0);
	return NULL;	/* exits attached */
}

int main(void)
{
	char attach[16];
	struct xc_opts o = { .attach = attach };
	int cpus[CPU_SETSIZE], n;

	attach_cpu = t_attach_first_cpu(attach, sizeof(attach));
	CHECK_RET(xc_init(&o), 0);
	n = t_cpus(cpus);
	target = cpus[n - 1];
	CHECK(pthread_key_create(&app_key, app_destructor) == 0);

	for (int round = 0; round < ROUNDS; round++) {
		pthread_t t;
		int r;

		atomic_store(&in_destructor, 0);
		atomic_store(&release_destructor, 0);
		CHECK(pthread_create(&t, NULL, exits_attached, NULL) == 0);
		WAIT_UNTIL(atomic_load(&in_destructor));
		r = xc_call_single(attach_cpu, urgent_fn, NULL, XC_URGENT);
		CHECK_RET(r, -ENXIO);
		atomic_store(&release_destructor, 1);
		CHECK(pthread_join(t, NULL) == 0);
	}
	CHECK(atomic_load(&urgent_ran) == 0);
	CHECK_RET(xc_exit(), 0);
	return T_PASS;
}
