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
 *   3. the same nest, and the call that A's deepest wait waits for, on B,
 *      sends A a nowait call and then a waiting one: the waiting call is
 *      queued behind the nowait one in B's ring to A, and A's wait, below
 *      its floor, must run both, in their order, or neither A's nest nor B
 *      ever returns;
 *   4. the same nest, and then a waiting call to A from the thread that sent
 *      the burst: below its floor A runs the rest of the burst ahead of it,
 *      one call at a time, since a serve in their waits does not run the
 *      same ring ahead again: the nest grows by one level, not one a call;
 *   5. as 3, but the nowait call B sends A first makes a waiting call to B,
 *      which B serves in its own wait and which sends A a nowait and a
 *      waiting call in turn: the same ring of B's, behind the first waiting
 *      call. A, already running that ring ahead, runs it ahead again to
 *      the second, or the chain A -> B -> A never returns.
 */
#include "test.h"
#include "reports.h"
#include <stdatomic.h>

#define BURST 2000
#define HELD_BURST 4000

static int cpus[CPU_SETSIZE], ncpu;
static _Atomic long ran, refused, depth, deepest;
static _Atomic int held, released;
static _Atomic int answers, sent_back, back_nowait, back_waited, back_order;

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
	/* after the nowait call its sender made first */
	if (atomic_load(&back_nowait) != atomic_load(&back_waited) + 1)
		atomic_store(&back_order, 1);
	atomic_fetch_add(&back_waited, 1);
}

/*
 * On B: the call a wait of A's nest (level @arg) waits for. The deepest
 * level's, once A has reached its floor, calls A back: @first without
 * waiting, then back_second, waiting.
 */
static void answer_with(void *arg, xc_func_t first)
{
	atomic_fetch_add(&answers, 1);
	if ((long)(intptr_t)arg != atomic_load(&deepest) || !t_reported("serve only"))
		return;
	CHECK_RET(xc_call_single(cpus[0], first, NULL, 0), 0);
	CHECK_RET(xc_call_single(cpus[0], back_second, NULL, XC_WAIT), 0);
	atomic_fetch_add(&sent_back, 1);
}

static void answer(void *arg)
{
	answer_with(arg, back_first);
}

/* On B, served in its wait for back_second: A's call back, which calls A back in turn. */
static void back_again(void *arg)
{
	CHECK_RET(xc_call_single(cpus[0], back_first, NULL, 0), 0);
	CHECK_RET(xc_call_single(cpus[0], back_second, NULL, XC_WAIT), 0);
}

/* On A: the first call back of answer_twice, which waits for B. */
static void back_first_waits(void *arg)
{
	back_first(arg);
	CHECK_RET(xc_call_single(cpus[1], back_again, NULL, XC_WAIT), 0);
}

/* As answer, but the nowait call back waits for B, which calls back again. */
static void answer_twice(void *arg)
{
	answer_with(arg, back_first_waits);
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

static void nest_on_b_twice(void *arg)
{
	nest_waiting_for(answer_twice);
}

static _Atomic long started, started_before_wait;

/* On A: one level of the nest, waiting for B, which answers nothing back. */
static void nest_on_b_plain(void *arg)
{
	atomic_fetch_add(&started, 1);
	level_enter();
	CHECK_RET(xc_call_single(cpus[1], nothing, NULL, XC_WAIT), 0);
	atomic_fetch_sub(&depth, 1);
	atomic_fetch_add(&ran, 1);
}

static long floor_depth;

/* On A: the waiting call behind the burst; every call of the burst began before it. */
static void after_burst(void *arg)
{
	atomic_store(&started_before_wait, atomic_load(&started));
}

/* Lets B go once A's wait at its floor has begun to run the burst ahead. */
static void *release_when_ahead(void *arg)
{
	WAIT_UNTIL(atomic_load(&deepest) > floor_depth);
	atomic_store(&released, 1);
	return NULL;
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
	CHECK_REPORTS(t_await_reported("serve only the calls others wait for", 1));
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
	CHECK(atomic_load(&back_waited) >= 1);
	CHECK_RET(atomic_load(&back_nowait), atomic_load(&back_waited));
	CHECK_RET(atomic_load(&back_order), 0);
}

static void held_burst_then_wait(void)
{
	pthread_t releaser;

	nest_to_floor(nest_on_b_plain);
	/* A serves nothing more of this thread's until its waiting call is queued */
	floor_depth = atomic_load(&deepest);
	CHECK(pthread_create(&releaser, NULL, release_when_ahead, NULL) == 0);
	CHECK_RET(xc_call_single(cpus[0], after_burst, NULL, XC_WAIT), 0);
	CHECK(pthread_join(releaser, NULL) == 0);
	/* the burst began before it, as queued (its outer levels end as A's nest unwinds) */
	CHECK_RET(atomic_load(&started_before_wait), HELD_BURST);
	WAIT_UNTIL(atomic_load(&ran) == HELD_BURST);
	/* and ran one level below the floor's */
	CHECK_RET(atomic_load(&deepest), floor_depth + 1);
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

	atomic_store(&deepest, 0);
	CHECK_RET(xc_init(&o), 0);
	held_burst_called_back(nest_on_b);
	printf("nest-depth: 1 MiB stacks, called back below the floor at depth %ld: %d nowait + %d waiting calls, in order\n",
	       atomic_load(&deepest), atomic_load(&back_nowait), atomic_load(&back_waited));

	atomic_store(&deepest, 0);
	CHECK_RET(xc_init(&o), 0);
	held_burst_then_wait();
	printf("nest-depth: 1 MiB stacks, a waiting call behind a burst at the floor (depth %ld): the burst ran one level deeper\n",
	       floor_depth);

	atomic_store(&deepest, 0);
	CHECK_RET(xc_init(&o), 0);
	held_burst_called_back(nest_on_b_twice);
	printf("nest-depth: 1 MiB stacks, called back twice through one ring below the floor: %d nowait + %d waiting calls, in order\n",
	       atomic_load(&back_nowait), atomic_load(&back_waited));
	return T_PASS;
}
