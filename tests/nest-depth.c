/*
 * nest-depth: a burst of nowait calls whose functions each make a waiting
 * call nests on a worker's stack, one level per call of the burst that a
 * wait serves. Every call runs exactly once and no worker's stack overflows:
 *   1. with the default stack, 2,000 such calls to each CPU (each level a
 *      many call's frame, sized by the CPU set);
 *   2. with workers of 1 MiB stacks (pthread_setattr_default_np): CPU B is
 *      held in a call that serves nothing, and 4,000 such calls go to CPU A,
 *      whose waits, all for B, can only nest: past three quarters of its
 *      stack a wait runs no more of them, and says so once through the
 *      report hook. Only then is B let go, and everything runs.
 *   3. the same nest, and the call that A's deepest wait waits for, on B,
 *      sends A a nowait call and then a waiting one: the waiting call is
 *      queued behind the nowait one in B's ring to A, and A, below its
 *      floor, refuses it with -ELOOP (running the nowait call first would
 *      nest once more, and leaving it queued would hang A and B for good);
 *      it never runs, and the nowait call runs once A's nest unwinds;
 *   4. the same nest, and then a waiting call to A from the thread that sent
 *      the burst, behind the rest of the burst: refused with -ELOOP too, and
 *      A's nest goes no deeper.
 * An application's recursion of waiting calls alone: nest-limit.
 */
#include "test.h"
#include "reports.h"
#include <stdatomic.h>

#define BURST 2000
#define HELD_BURST 4000

static int cpus[CPU_SETSIZE], ncpu;
static _Atomic long ran, refused, depth, deepest;
static _Atomic int held, released;
static _Atomic int answers, sent_back, back_nowait, back_waited;

static void nothing(void *arg)
{
}

/* A level of a nest begins: its depth, the deepest kept. */
static long level_enter(void)
{
	long d = atomic_fetch_add(&depth, 1) + 1;
	long was = atomic_load(&deepest);

	while (d > was && !atomic_compare_exchange_weak(&deepest, &was, d))
		;
	return d;
}

static void nest(void *arg)
{
	level_enter();
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

static void back_first(void *arg)
{
	atomic_fetch_add(&back_nowait, 1);
}

static void back_second(void *arg)
{
	atomic_fetch_add(&back_waited, 1);
}

/*
 * On B: the call a wait of A's nest (level @arg) waits for. The deepest
 * level's, once A has reached its floor, calls A back: back_first without
 * waiting, then back_second, waiting.
 */
static void answer(void *arg)
{
	atomic_fetch_add(&answers, 1);
	if ((long)(intptr_t)arg != atomic_load(&deepest) || !t_reported("three quarters used"))
		return;
	CHECK_RET(xc_call_single(cpus[0], back_first, NULL, 0), 0);
	/* below its floor, A refuses it rather than run the nowait call first */
	CHECK_RET(xc_call_single(cpus[0], back_second, NULL, XC_WAIT), -ELOOP);
	atomic_fetch_add(&sent_back, 1);
}

/* On A: one level of the nest, waiting for @answer_fn on B. */
static void nest_waiting_for(xc_func_t answer_fn)
{
	long d = level_enter();

	CHECK_RET(xc_call_single(cpus[1], answer_fn, (void *)(intptr_t)d, XC_WAIT), 0);
	atomic_fetch_sub(&depth, 1);
	atomic_fetch_add(&ran, 1);
}

static void nest_on_b(void *arg)
{
	nest_waiting_for(answer);
}

static _Atomic long started, after_burst_ran;

/* On A: one level of the nest, waiting for B, which answers nothing back. */
static void nest_on_b_plain(void *arg)
{
	atomic_fetch_add(&started, 1);
	level_enter();
	CHECK_RET(xc_call_single(cpus[1], nothing, NULL, XC_WAIT), 0);
	atomic_fetch_sub(&depth, 1);
	atomic_fetch_add(&ran, 1);
}

/* On A: the waiting call behind the burst, refused: it never runs. */
static void after_burst(void *arg)
{
	atomic_fetch_add(&after_burst_ran, 1);
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

/* B held, a burst of @level calls to A, until A's nest reaches its floor. */
static void nest_to_floor(xc_func_t level)
{
	atomic_store(&ran, 0);
	atomic_store(&held, 0);
	atomic_store(&released, 0);
	t_clear_reports();
	CHECK_RET(xc_call_single(cpus[1], hold, NULL, 0), 0);
	/* B inside hold before A's calls reach it: calls from different senders have no order */
	WAIT_UNTIL(atomic_load(&held));
	for (int i = 0; i < HELD_BURST; i++)
		CHECK_RET(xc_call_single(cpus[0], level, NULL, 0), 0);
	/* the event: CPU A's nest reached its floor; nothing else can end its waits */
	CHECK_REPORTS(t_await_reported("three quarters used", 1));
}

static void held_burst(void)
{
	nest_to_floor(nest);
	CHECK(atomic_load(&ran) == 0);
	atomic_store(&released, 1);
	settle(HELD_BURST);
}

static void held_burst_called_back(xc_func_t level)
{
	atomic_store(&answers, 0);
	atomic_store(&sent_back, 0);
	atomic_store(&back_nowait, 0);
	atomic_store(&back_waited, 0);
	nest_to_floor(level);
	atomic_store(&released, 1);
	/* the event: the deepest level's answer returned, its waiting call run */
	WAIT_UNTIL(atomic_load(&sent_back) >= 1);
	/* and every level's, before the exit closes B under the calls still queued on A */
	WAIT_UNTIL(atomic_load(&ran) == HELD_BURST);
	settle(HELD_BURST);
	CHECK_RET(atomic_load(&answers), HELD_BURST);
	/* each deepest level's nowait call ran, once; no waiting call did */
	CHECK(atomic_load(&sent_back) >= 1);
	CHECK_RET(atomic_load(&back_nowait), atomic_load(&sent_back));
	CHECK_RET(atomic_load(&back_waited), 0);
}

static void held_burst_then_wait(void)
{
	long floor_depth;

	atomic_store(&after_burst_ran, 0);
	nest_to_floor(nest_on_b_plain);
	floor_depth = atomic_load(&deepest);
	/* behind the rest of the burst, which A, below its floor, runs no more of */
	CHECK_RET(xc_call_single(cpus[0], after_burst, NULL, XC_WAIT), -ELOOP);
	atomic_store(&released, 1);
	WAIT_UNTIL(atomic_load(&ran) == HELD_BURST);
	settle(HELD_BURST);
	CHECK_RET(atomic_load(&started), HELD_BURST);
	CHECK_RET(atomic_load(&after_burst_ran), 0);
	/* nothing ran ahead below the floor */
	CHECK_RET(atomic_load(&deepest), floor_depth);
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

	atomic_store(&deepest, 0);
	CHECK_RET(xc_init(&o), 0);
	held_burst_called_back(nest_on_b);
	printf("nest-depth: 1 MiB stacks, called back below the floor at depth %ld, %d times: each waiting call refused, each nowait one ran\n",
	       atomic_load(&deepest), atomic_load(&sent_back));

	atomic_store(&deepest, 0);
	CHECK_RET(xc_init(&o), 0);
	held_burst_then_wait();
	printf("nest-depth: 1 MiB stacks, a waiting call behind a burst at the floor (depth %ld): refused\n",
	       atomic_load(&deepest));
	return T_PASS;
}
