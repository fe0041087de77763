/*
 * nest-depth: a burst of nowait calls whose functions each make a waiting
 * call nests on a worker's stack, one level per call of the burst that a
 * wait serves. Every call runs exactly once and no worker's stack overflows:
 *   1. with the default stack, 2,000 such calls to each CPU (each level a
 *      many call's frame, sized by the CPU set);
 *   2. with workers of 1 MiB stacks (pthread_setattr_default_np): CPU B is
 *      held in a call that serves nothing, and 4,000 such calls go to CPU A,
 *      whose waits, all for B, can only nest: past three quarters of its
 *      stack a wait serves only the calls others wait for, and says so once
 *      through the report hook. Only then is B let go, and everything runs.
 */
#include "test.h"
#include "reports.h"
#include <stdatomic.h>

#define BURST 2000
#define HELD_BURST 4000

static int cpus[CPU_SETSIZE], ncpu;
static _Atomic long ran, refused, depth, deepest;
static _Atomic int held, released;

static void nothing(void *arg)
{
}

static void nest(void *arg)
{
	long d = atomic_fetch_add(&depth, 1) + 1;
	long was = atomic_load(&deepest);

	while (d > was && !atomic_compare_exchange_weak(&deepest, &was, d))
		;
	if (xc_call_all(nothing, NULL, XC_WAIT) < 0)
		atomic_fetch_add(&refused, 1);
	atomic_fetch_sub(&depth, 1);
	atomic_fetch_add(&ran, 1);
}

/* Holds its CPU's worker without serving anything until released. */
static void hold(void *arg)
{
	atomic_store(&held, 1);
	while (!atomic_load(&released))
		sched_yield();
}

static void settle(long want)
{
	/* the runtime drains every queued call before xc_exit returns */
	CHECK_RET(xc_exit(), 0);
	CHECK_RET(atomic_load(&ran), want);
	CHECK_RET(atomic_load(&refused), 0);
}

static void burst(void)
{
	long want = 0;

	for (int i = 0; i < BURST; i++)
		for (int k = 0; k < ncpu; k++) {
			CHECK_RET(xc_call_single(cpus[k], nest, NULL, 0), 0);
			want++;
		}
	settle(want);
}

static void held_burst(void)
{
	atomic_store(&ran, 0);
	CHECK_RET(xc_call_single(cpus[1], hold, NULL, 0), 0);
	/* B inside hold before A's calls reach it: calls from different senders have no order */
	WAIT_UNTIL(atomic_load(&held));
	for (int i = 0; i < HELD_BURST; i++)
		CHECK_RET(xc_call_single(cpus[0], nest, NULL, 0), 0);
	/* the event: CPU A's nest reached its floor; nothing else can end its waits */
	CHECK_REPORTS(t_await_reported("serve only the calls others wait for", 1));
	CHECK(atomic_load(&ran) == 0);
	atomic_store(&released, 1);
	settle(HELD_BURST);
}

int main(void)
{
	struct xc_opts o = { .cpus = NULL, .ring_entries = 8192, .report = t_capture };
	pthread_attr_t small;
	char two[32];

	CHECK_RET(xc_init(&o), 0);
	ncpu = t_cpus(cpus);
	if (ncpu < 2)
		t_skip("needs 2 CPUs");
	burst();
	printf("nest-depth: default stack, %d calls to each CPU, nested %ld deep\n", BURST,
	       atomic_load(&deepest));

	CHECK(pthread_attr_init(&small) == 0);
	CHECK(pthread_attr_setstacksize(&small, 1024 * 1024) == 0);
	CHECK(pthread_setattr_default_np(&small) == 0);
	snprintf(two, sizeof(two), "%d,%d", cpus[0], cpus[1]);
	o.cpus = two;
	atomic_store(&deepest, 0);
	CHECK_RET(xc_init(&o), 0);
	held_burst();
	printf("nest-depth: 1 MiB stacks, %d calls to one CPU, nested %ld deep\n", HELD_BURST,
	       atomic_load(&deepest));
	return T_PASS;
}
