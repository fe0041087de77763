/*
 * nest-limit: an application's recursion of waiting calls between two CPUs
 * ends with -ELOOP when a worker's stack is three quarters used, never with
 * a stack overflow or a hang. Workers have 1 MiB stacks, so the limit comes
 * within a few thousand levels; the first run sets them with xc_opts.stack_kb
 * (the process's default is larger: it must not reach as deep), the others
 * with pthread_setattr_default_np:
 *   1. A -> B -> A -> ... waiting calls alone: exactly one call is refused,
 *      its function never runs, every other level runs once and returns;
 *   2. the same, each level first sending the next CPU a nowait call: each
 *      nowait call runs exactly once, and before the waiting call sent after
 *      it whenever that one ran (a refused call carries no such promise);
 *   3. the same through many calls (xc_call_many with XC_WAIT): the refused
 *      level's many call returns -ELOOP.
 */
#include "test.h"
#include "reports.h"
#include <stdatomic.h>

#define MAX_LEVELS 65536

static int cpu_a, cpu_b;
static bool with_nowait, with_many;
static _Atomic long levels_ran, refused, nowait_sent, nowait_ran, order_broken, other_error;
static _Atomic long deepest;
static _Atomic unsigned char nowait_done[MAX_LEVELS];

static void nowait_mark(void *arg)
{
	long d = (long)(intptr_t)arg;

	atomic_store(&nowait_done[d], 1);
	atomic_fetch_add(&nowait_ran, 1);
}

static void level(void *arg);

/* From level @d on this CPU: call level @d + 1 on the other CPU, waiting. */
static int call_next(long d)
{
	int next = xc_this_cpu() == cpu_a ? cpu_b : cpu_a;
	void *narg = (void *)(intptr_t)(d + 1);

	if (with_nowait) {
		CHECK_RET(xc_call_single(next, nowait_mark, (void *)(intptr_t)d, 0), 0);
		atomic_fetch_add(&nowait_sent, 1);
	}
	if (with_many) {
		cpu_set_t one;
		int r;

		CPU_ZERO(&one);
		CPU_SET(next, &one);
		r = xc_call_many(&one, level, narg, XC_WAIT);
		return r == 1 ? 0 : r;
	}
	return xc_call_single(next, level, narg, XC_WAIT);
}

static void level(void *arg)
{
	long d = (long)(intptr_t)arg;
	int r;

	CHECK(d < MAX_LEVELS - 1);
	/* the nowait call that the level before sent here first has run */
	if (with_nowait && d > 0 && !atomic_load(&nowait_done[d - 1]))
		atomic_store(&order_broken, d);
	atomic_fetch_add(&levels_ran, 1);
	r = call_next(d);
	if (r == -ELOOP) {
		atomic_fetch_add(&refused, 1);
		atomic_store(&deepest, d);
	} else if (r != 0) {
		atomic_store(&other_error, r);
	}
}

static void recurse(const char *what, bool nowait, bool many, unsigned stack_kb)
{
	struct xc_opts o = { .report = t_capture, .stack_kb = stack_kb };
	char two[32];

	with_nowait = nowait;
	with_many = many;
	atomic_store(&levels_ran, 0);
	atomic_store(&refused, 0);
	atomic_store(&nowait_sent, 0);
	atomic_store(&nowait_ran, 0);
	atomic_store(&order_broken, 0);
	atomic_store(&other_error, 0);
	memset(nowait_done, 0, sizeof(nowait_done));
	t_clear_reports();
	snprintf(two, sizeof(two), "%d,%d", cpu_a, cpu_b);
	o.cpus = two;
	CHECK_RET(xc_init(&o), 0);
	CHECK_RET(xc_call_single(cpu_a, level, (void *)(intptr_t)0, XC_WAIT), 0);
	/* every nowait call sent runs by the exit's drain at the latest */
	CHECK_RET(xc_exit(), 0);
	CHECK_RET(atomic_load(&other_error), 0);
	CHECK_RET(atomic_load(&refused), 1);
	/* levels 0..deepest ran; level deepest + 1 was refused and never ran */
	CHECK_RET(atomic_load(&levels_ran), atomic_load(&deepest) + 1);
	CHECK_RET(atomic_load(&nowait_ran), atomic_load(&nowait_sent));
	CHECK_RET(atomic_load(&order_broken), 0);
	/* a 1 MiB stack holds some hundreds of levels at the least */
	CHECK(atomic_load(&deepest) >= 100);
	CHECK(t_reported("-ELOOP"));
	printf("nest-limit: %s: refused with -ELOOP at level %ld\n", what, atomic_load(&deepest) + 1);
}

int main(void)
{
	pthread_attr_t small;
	int cpus[CPU_SETSIZE], n;

	CHECK_RET(xc_init(NULL), 0);
	n = t_cpus(cpus);
	CHECK_RET(xc_exit(), 0);
	if (n < 2)
		t_skip("needs 2 CPUs");
	cpu_a = cpus[0];
	cpu_b = cpus[1];

	recurse("xc_opts.stack_kb 1024, waiting calls alone", false, false, 1024);
	/* the process's default stack (8 MiB on most systems) reaches some 12,000 levels */
	CHECK(atomic_load(&deepest) < 4000);
	CHECK(pthread_attr_init(&small) == 0);
	CHECK(pthread_attr_setstacksize(&small, 1024 * 1024) == 0);
	CHECK(pthread_setattr_default_np(&small) == 0);
	recurse("waiting calls alone", false, false, 0);
	recurse("a nowait call before each waiting call", true, false, 0);
	recurse("waiting many calls", false, true, 0);
	return T_PASS;
}
