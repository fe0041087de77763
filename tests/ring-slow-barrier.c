/*
 * ring-slow-barrier: where membarrier(2) is slow, no worker pays one for
 * its senders, and every call still runs once, on its CPU. A burst of
 * nowait calls may skip its sender's fences only if the worker makes up
 * for them with a membarrier before it sleeps (src/proto/ring.c, "Owners
 * without a fence"), and it runs no call meanwhile. In an emulated or
 * overcommitted machine one takes 0.2-22 s (a 16-vCPU TCG guest beside
 * other work, with a second process making its own): calls waited behind
 * them for half a minute, and a fork child beside a busy parent took 48-96
 * s instead of 3. Here the test interposes the C library's syscall(2)
 * (membarrier-hook.h) and makes each of libxcall's membarriers take SLOW_MS.
 * A sender makes bursts of nowait calls to a worker that sleeps as soon as
 * it is idle, each burst after the worker fell asleep: the runtime's first
 * sleep times membarrier and finds it slow (src/proto/barrier.c),
 * the report hook says so once, and no burst costs a membarrier: its calls
 * fence. A child forked afterwards keeps the verdict: its own runtime's
 * bursts cost none either, and it times none. (Before, every burst cost
 * one: BURSTS in the parent, BURSTS in the child.)
 *
 * Needs a dynamic build (dlsym finds the C library's syscall) and a kernel
 * with expedited private membarriers; skips otherwise.
 */
#include "membarrier-hook.h"
#include "base/internal.h"
#include "proto/ring.h"
#include <stdatomic.h>
#include <sys/wait.h>

#define SLOW_MS	  50	/* each membarrier: far over the library's bound for a slow one */
#define SLOW_RUN  3	/* ring.c's BARRIER_SLOW_RUN: the first sleep times up to this many */
#define BURSTS	  12
#define BURST	  ((int)XC_RING_FENCED_RUN + 4)	/* calls a burst: the last 4 may skip their fences */

static _Atomic int slowed;		/* membarriers delayed */
static _Atomic long delayed;
static long timed;			/* delayed before xc_exit, whose own membarrier is not the workers' */
static _Atomic long ran, wrong;
static _Atomic int reports;
static int target;

/* Each of libxcall's membarriers, while slowed, takes SLOW_MS. */
static void t_membarrier_hook(void)
{
	if (atomic_load(&slowed)) {
		atomic_fetch_add(&delayed, 1);
		t_sleep_ms(SLOW_MS);
	}
}

static void count(void *arg)
{
	if (sched_getcpu() != target)
		atomic_fetch_add(&wrong, 1);
	atomic_fetch_add(&ran, 1);
}

static void report(void *ctx, const char *line)
{
	if (strstr(line, "membarrier"))
		atomic_fetch_add(&reports, 1);
	fprintf(stderr, "ring-slow-barrier: report: %s\n", line);
}

/* BURSTS bursts to the target, each after its worker fell asleep; the target's membarriers. */
static uint64_t bursts(void)
{
	struct xc_opts o = { .poll_ns = XC_POLL_NONE, .report = report };
	struct xc_stats st;

	atomic_store(&ran, 0);
	CHECK_RET(xc_init(&o), 0);
	for (long b = 0, sent = 0; b < BURSTS; b++) {
		for (int i = 0; i < BURST; i++)
			CHECK_RET(xc_call_single(target, count, NULL, 0), 0);
		sent += BURST;
		WAIT_UNTIL(atomic_load(&ran) == sent);
		/* asleep: its rings unlinked, and the membarrier before, if any, done */
		WAIT_UNTIL(atomic_load(&xc_cpus[target].mbox.idle) == XC_IDLE_SLEEPING);
	}
	CHECK_RET(xc_stats_get(target, &st), 0);
	timed = atomic_load(&delayed);
	CHECK_RET(xc_exit(), 0);
	CHECK(atomic_load(&ran) == BURSTS * BURST);
	CHECK(atomic_load(&wrong) == 0);
	return st.barriers;
}

int main(void)
{
	int home, status;
	uint64_t paid;
	pid_t pid;

	t_membarrier_hook_setup();
	t_home_and_target(&home, &target);

	atomic_store(&slowed, 1);
	paid = bursts();
	printf("ring-slow-barrier: %d bursts, %llu membarriers for them, %ld of %d ms in all\n", BURSTS,
	       (unsigned long long)paid, timed, SLOW_MS);
	CHECK(paid == 0);		/* no burst cost its worker one */
	CHECK(timed <= SLOW_RUN);	/* the first sleep's timing, at most */
	CHECK(atomic_load(&reports) == 1);

	/* a fork child keeps the verdict: its runtime times nothing and pays nothing */
	atomic_store(&delayed, 0);
	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		paid = bursts();
		printf("ring-slow-barrier: the child: %llu membarriers for its bursts, %ld in all\n",
		       (unsigned long long)paid, timed);
		CHECK(paid == 0);
		CHECK(timed == 0);
		CHECK(atomic_load(&reports) == 1);	/* the parent's: nothing new to say */
		fflush(stdout);
		_exit(T_PASS);
	}
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == T_PASS);
	atomic_store(&slowed, 0);
	return T_PASS;
}
