/*
 * deep-full-ring: a call whose ring to a worker is full, while that worker
 * serves below its serve floor and waits for the caller, gets -ELOOP; it
 * never waits for room that only the worker's unwinding nest would make.
 *
 * CPU B's function burns its stack past B's serve floor (three quarters of
 * the stack used), then makes a waiting call to CPU A: B's wait serves
 * below the floor, where it runs none of its rings' nowait calls. A's
 * function then sends B calls through A's ring to B (16 entries) until one
 * is refused: before the fix, the call after the ring filled waited for
 * room for good, A waiting for B and B for A. Three ways of sending: nowait
 * xc_call_single, nowait xc_call_many, waiting xc_call_single (that one is
 * refused below the floor even with room; the ring is filled with nowait
 * calls first). Checked: exactly one call was refused, with -ELOOP; every
 * nowait call that returned 0 ran exactly once, on B, and none ran before
 * B's nest unwound; the refused call never ran; B's waiting call returned 0.
 * A hang (the bug) ends at the alarm, with libxcall's state dumped.
 */
#include "test.h"
#include "dump.h"
#include "reports.h"
#include <stdatomic.h>

#define ENTRIES	16		/* the least xc_opts.ring_entries */
#define SENDS	(ENTRIES + 8)	/* more than fit */

enum way { NOWAIT_SINGLE, NOWAIT_MANY, WAITING_SINGLE };

static int cpu_a, cpu_b;
static enum way way;
static _Atomic long accepted, refused, other_error, ran, ran_early, wrong_cpu;
static _Atomic bool unwound;		/* B's function has returned from its deep wait */
static _Atomic long b_ret = 1;

static void mark(void *arg)
{
	if (xc_this_cpu() != cpu_b)
		atomic_fetch_add(&wrong_cpu, 1);
	if (!atomic_load(&unwound))
		atomic_fetch_add(&ran_early, 1);
	atomic_fetch_add(&ran, 1);
}

static int send_one(bool last)
{
	cpu_set_t one;
	int r;

	switch (way) {
	case NOWAIT_MANY:
		CPU_ZERO(&one);
		CPU_SET(cpu_b, &one);
		r = xc_call_many(&one, mark, NULL, 0);
		return r == 1 ? 0 : r;
	case WAITING_SINGLE:
		if (last)
			return xc_call_single(cpu_b, mark, NULL, XC_WAIT);
		/* the ring filled with nowait calls first */
		__attribute__((fallthrough));
	case NOWAIT_SINGLE:
	default:
		return xc_call_single(cpu_b, mark, NULL, 0);
	}
}

/* On A, for B's deep wait: send B calls until one is refused. */
static void fill(void *arg)
{
	for (int k = 0; k < SENDS; k++) {
		int r = send_one(way == WAITING_SINGLE && k == ENTRIES);

		if (r == 0) {
			atomic_fetch_add(&accepted, 1);
		} else if (r == -ELOOP) {
			atomic_fetch_add(&refused, 1);
			return;
		} else {
			atomic_store(&other_error, r);
			return;
		}
	}
}

/* On B: burn the stack below its floor, then wait for A. */
static __attribute__((noinline)) void burn(uintptr_t below)
{
	volatile char pad[2048];

	pad[0] = 1;
	if ((uintptr_t)pad > below) {
		burn(below);
	} else {
		atomic_store(&b_ret, xc_call_single(cpu_a, fill, NULL, XC_WAIT));
		atomic_store(&unwound, true);
	}
	pad[1] = pad[0];
}

static void deep(void *arg)
{
	pthread_attr_t a;
	void *addr;
	size_t size;
	char here;

	CHECK(pthread_getattr_np(pthread_self(), &a) == 0);
	CHECK(pthread_attr_getstack(&a, &addr, &size) == 0);
	pthread_attr_destroy(&a);
	/* the floor lies a quarter of the way from the stack's end to the thread's start, above here */
	burn((uintptr_t)addr + ((uintptr_t)&here - (uintptr_t)addr) / 4 - 4096);
}

static void run(const char *what, enum way w)
{
	struct xc_opts o = { .report = t_capture, .stack_kb = 1024, .ring_entries = ENTRIES };
	char two[32];

	way = w;
	atomic_store(&accepted, 0);
	atomic_store(&refused, 0);
	atomic_store(&other_error, 0);
	atomic_store(&ran, 0);
	atomic_store(&ran_early, 0);
	atomic_store(&wrong_cpu, 0);
	atomic_store(&unwound, false);
	atomic_store(&b_ret, 1);
	t_clear_reports();
	snprintf(two, sizeof(two), "%d,%d", cpu_a, cpu_b);
	o.cpus = two;
	CHECK_RET(xc_init(&o), 0);
	CHECK_RET(xc_call_single(cpu_b, deep, NULL, XC_WAIT), 0);
	CHECK_RET(atomic_load(&b_ret), 0);
	/* the nowait calls B queued run once its nest unwound; wait for them */
	WAIT_UNTIL(atomic_load(&ran) == atomic_load(&accepted));
	CHECK_RET(xc_exit(), 0);
	CHECK_RET(atomic_load(&other_error), 0);
	CHECK_RET(atomic_load(&refused), 1);
	CHECK(atomic_load(&accepted) >= 1 && atomic_load(&accepted) < SENDS);
	CHECK_RET(atomic_load(&ran), atomic_load(&accepted));
	CHECK_RET(atomic_load(&ran_early), 0);
	CHECK_RET(atomic_load(&wrong_cpu), 0);
	/* B's waits went below its floor: it said so */
	CHECK(t_reported("-ELOOP"));
	printf("deep-full-ring: %s: %ld calls queued, the next refused with -ELOOP\n", what,
	       atomic_load(&accepted));
}

int main(void)
{
	int cpus[CPU_SETSIZE], n;

	CHECK_RET(xc_init(NULL), 0);
	n = t_cpus(cpus);
	CHECK_RET(xc_exit(), 0);
	if (n < 2)
		t_skip("needs 2 CPUs");
	cpu_a = cpus[0];
	cpu_b = cpus[1];
	t_dump_on_alarm(NULL);
	alarm(120);	/* the whole test takes well under a second */
	run("nowait xc_call_single", NOWAIT_SINGLE);
	run("nowait xc_call_many", NOWAIT_MANY);
	run("waiting xc_call_single", WAITING_SINGLE);
	return T_PASS;
}
