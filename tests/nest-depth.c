/*
 * nest-depth: a burst of nowait calls whose functions each make a waiting
 * call to every CPU nests on each worker's stack, one level per call of the
 * burst that a wait serves. Every call runs exactly once and no worker's
 * stack overflows:
 *   1. with the default stack, 2,000 such calls to each CPU (each level a
 *      many call's frame, sized by the CPU set);
 *   2. with workers of 256 KiB stacks (pthread_setattr_default_np), 2,000
 *      again: past three quarters of the stack a wait serves only the calls
 *      others wait for, and says so once through the report hook.
 */
#include "test.h"
#include "reports.h"
#include <stdatomic.h>

#define BURST 2000

static int cpus[CPU_SETSIZE], ncpu;
static _Atomic long ran, refused, depth, deepest;

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

static void burst(void)
{
	long want = 0;

	atomic_store(&ran, 0);
	atomic_store(&deepest, 0);
	for (int i = 0; i < BURST; i++)
		for (int k = 0; k < ncpu; k++) {
			CHECK_RET(xc_call_single(cpus[k], nest, NULL, 0), 0);
			want++;
		}
	/* the runtime drains every queued call before xc_exit returns */
	CHECK_RET(xc_exit(), 0);
	CHECK_RET(atomic_load(&ran), want);
	CHECK_RET(atomic_load(&refused), 0);
}

int main(void)
{
	struct xc_opts o = { .ring_entries = 4096, .report = t_capture };
	pthread_attr_t small;

	CHECK_RET(xc_init(&o), 0);
	ncpu = t_cpus(cpus);
	if (ncpu < 2)
		t_skip("needs 2 CPUs");
	burst();
	printf("nest-depth: default stack, %d calls per CPU, nested %ld deep\n", BURST, atomic_load(&deepest));

	CHECK(pthread_attr_init(&small) == 0);
	CHECK(pthread_attr_setstacksize(&small, 256 * 1024) == 0);
	CHECK(pthread_setattr_default_np(&small) == 0);
	CHECK_RET(xc_init(&o), 0);
	burst();
	CHECK(t_reported("serve only the calls others wait for"));
	printf("nest-depth: 256 KiB stacks, %d calls per CPU, nested %ld deep\n", BURST, atomic_load(&deepest));
	return T_PASS;
}
