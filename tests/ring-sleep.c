/*
 * ring-sleep: the last call of a burst is never left unseen by a worker
 * that unlinks its rings and sleeps. Calls in a burst skip their sender's
 * fence (src/proto/ring.c, "Owners without a fence"); the worker's
 * membarrier before it sleeps stands in for it, once a burst is longer
 * than XC_RING_FENCED_RUN (src/proto/ring.h); below that every call
 * fences. A sender makes bursts of 1-8 nowait calls, every other one after
 * a run of XC_RING_FENCED_RUN, to a worker that sleeps as soon as it is
 * idle (XC_POLL_NONE), spins until all of them ran, and starts the next
 * burst at once, while the worker is unlinking its ring: a call left
 * unseen leaves the sender spinning with the worker asleep, and the bound
 * turns that into a dump (dump.h) and a failure. The worker must have paid
 * membarriers (xc_stats.barriers), or the path was never taken. Bursts of
 * at most XC_RING_FENCED_RUN calls, each after the worker fell asleep,
 * cost it none: every one of their calls fenced. With XC_ABLATE_MEMBARRIER
 * every call fences and no membarrier is paid; the calls all run just the
 * same. So too where membarriers are slow (the library's report says so:
 * src/proto/barrier.c), and the test skips.
 */
#include "test.h"
#include "ablate.h"
#include "dump.h"
#include "base/internal.h"
#include "proto/ring.h"
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#define BURSTS 20000
#define STRANDED_S 10		/* no call ran for this long: one was left unseen */

static _Atomic unsigned long ran;
static _Atomic int slow;	/* the library found membarriers slow: every call fences */

static void report(void *ctx, const char *line)
{
	if (strstr(line, "membarrier(2) took"))
		atomic_store(&slow, 1);
	fprintf(stderr, "ring-sleep: report: %s\n", line);
}

static void count(void *arg)
{
	atomic_fetch_add_explicit(&ran, 1, memory_order_relaxed);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Spin until @want calls ran; fail if none ran for STRANDED_S seconds. */
static void wait_ran(unsigned long want, unsigned long burst)
{
	unsigned long seen = atomic_load(&ran);
	double since = now_s();

	for (unsigned spins = 0; seen < want; spins++) {
		unsigned long r = atomic_load_explicit(&ran, memory_order_relaxed);

		if (r != seen) {
			seen = r;
			since = now_s();
		} else if (!(spins & 0xffff) && now_s() - since > STRANDED_S) {
			fprintf(stderr, "burst %lu: %lu of %lu calls ran, none for %d s: one was left unseen\n",
				burst, seen, want, STRANDED_S);
			t_dump(NULL);
			exit(T_FAIL);
		}
	}
}

enum burst_kind {
	BURSTS_RACING,	/* 1-8 calls, every other burst after a fenced run; at once */
	BURSTS_SHORT,	/* 1-XC_RING_FENCED_RUN calls, each burst after the worker sleeps */
};

/* Bursts to @target from a thread on @home; returns the target's membarriers. */
static uint64_t bursts(int home, int target, unsigned ablate, enum burst_kind kind)
{
	struct xc_opts o = { .poll_ns = XC_POLL_NONE, .report = report };
	struct xc_stats st;
	unsigned long sent = 0;
	unsigned seed = 12345;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(home, &set);
	CHECK(pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0);
	atomic_store(&ran, 0);
	CHECK_RET(t_init_ablated(&o, ablate), 0);
	for (unsigned long b = 0; b < BURSTS; b++) {
		unsigned n = kind == BURSTS_SHORT ? 1 + rand_r(&seed) % XC_RING_FENCED_RUN :
			     (b & 1 ? XC_RING_FENCED_RUN : 0) + 1 + rand_r(&seed) % 8;

		for (unsigned i = 0; i < n; i++)
			CHECK_RET(xc_call_single(target, count, NULL, 0), 0);
		sent += n;
		wait_ran(sent, b);
		if (kind == BURSTS_SHORT)	/* asleep: its rings let go, the next call rings */
			WAIT_UNTIL(atomic_load(&xc_cpus[target].mbox.idle) == XC_IDLE_SLEEPING);
	}
	/*
	 * A call is counted after its function returns, so the last may not be
	 * yet: a waiting call is counted before its completion, and runs after it.
	 */
	CHECK_RET(xc_call_single(target, count, NULL, XC_WAIT), 0);
	CHECK_RET(xc_stats_get(target, &st), 0);
	CHECK(st.calls == sent + 1);
	CHECK_RET(xc_exit(), 0);
	return st.barriers;
}

/* Whether this kernel lets a process register for expedited private membarriers. */
static bool membarrier_expedited(void)
{
	long cmds = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);

	return cmds >= 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED);
}

int main(void)
{
	int cpus[CPU_SETSIZE], n = 0;
	cpu_set_t mine;

	t_dump_prepare();
	CHECK(sched_getaffinity(0, sizeof(mine), &mine) == 0);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &mine))
			cpus[n++] = c;
	if (n < 2)
		t_skip("needs 2 CPUs");
	uint64_t paid = bursts(cpus[0], cpus[1], 0, BURSTS_RACING);

	printf("ring-sleep: %d bursts, %llu membarriers\n", BURSTS, (unsigned long long)paid);
	CHECK(bursts(cpus[0], cpus[1], XC_ABLATE_MEMBARRIER, BURSTS_RACING) == 0);
	CHECK(bursts(cpus[0], cpus[1], 0, BURSTS_SHORT) == 0);
	if (!membarrier_expedited()) {
		CHECK(paid == 0);	/* refused: every call fenced */
		t_skip("membarrier has no private expedited command here: every call fenced");
	}
	if (atomic_load(&slow))
		t_skip("membarriers are slow here: calls fenced once the library found it");
	CHECK(paid > 0);
	return T_PASS;
}
