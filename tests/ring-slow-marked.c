/*
 * ring-slow-marked: a ring whose owner skipped its fences before
 * membarrier(2) turned slow costs its worker two slow membarriers more at
 * most (src/proto/barrier.c), and here, where the stream's next call reads
 * the verdict before the worker's next release, one, though a stream of
 * calls keeps the ring held. An owner skips the
 * fence R1' only while its ring is marked unfenced, and the worker pays
 * for the mark with a membarrier each time it releases its rings before a
 * sleep (src/proto/wake.c, "Owners without a fence"). Once membarriers
 * are found slow, xc_ring_asym turns false and marks are no longer made;
 * but a marked ring's calls did not read the flag, and only a doorbell
 * cleared the mark. A ring that the worker keeps at its releases (calls
 * left in it) rings no doorbell: a stream that outruns its worker kept
 * it marked, the owner skipping its fences and the worker paying a slow
 * membarrier (0.2-22 s in an emulated guest) at every release. Now the
 * first call to find the flag false clears the mark itself and fences.
 *
 * Here the worker sleeps as soon as it is idle; a first call lets it time
 * membarrier (cheap: owners may skip). Then the test interposes the C
 * library's syscall(2) (membarrier-hook.h) so that each membarrier takes
 * SLOW_MS, and sends a stream through one ring, each call made when the
 * one before it asks for it from its function: every pass of the worker
 * runs a ring's worth (ENTRIES) and leaves the next call in the ring, so
 * each release keeps the ring. The call that ends a run of
 * XC_RING_FENCED_RUN fenced calls (src/proto/ring.h) marks the ring;
 * the first SLOW_RUN releases pay slow membarriers and give the slow
 * verdict; after it, at most one more. (Before the fix, every release
 * paid one: PASSES in all.) The test waits for calls and for the worker's
 * sleep, never for a time.
 *
 * Needs a dynamic build (dlsym finds the C library's syscall), a kernel
 * with expedited private membarriers, and membarriers measured cheap at
 * first; skips otherwise.
 */
#include "membarrier-hook.h"
#include "base/internal.h"
#include "proto/barrier.h"
#include "proto/ring.h"
#include <stdatomic.h>

#define SLOW_MS	  12	/* each membarrier once slowed: over barrier.c's bound of 10 ms */
#define SLOW_RUN  3	/* barrier.c's BARRIER_SLOW_RUN: slow ones in a row give the verdict */
#define ENTRIES	  16	/* the ring (the least xc_opts.ring_entries): a pass runs this many at most */
#define PASSES	  12	/* passes over the stream, each ended by a release */
#define CALLS	  (ENTRIES * PASSES)

static _Atomic int slowed;		/* membarriers take SLOW_MS */
static _Atomic long asked, made;	/* the stream's calls asked for by the one before, and made */
static _Atomic long ran, wrong;
static _Atomic int reports;
static int target;

static void t_membarrier_hook(void)
{
	if (atomic_load(&slowed))
		t_sleep_ms(SLOW_MS);
}

static void report(void *ctx, const char *line)
{
	if (strstr(line, "membarrier"))
		atomic_fetch_add(&reports, 1);
	fprintf(stderr, "ring-slow-marked: report: %s\n", line);
}

static void ran_here(void)
{
	if (sched_getcpu() != target)
		atomic_fetch_add(&wrong, 1);
	atomic_fetch_add(&ran, 1);
}

static void count(void *arg)
{
	ran_here();
}

/* Call k of the stream: asks for call k + 1, and returns once it is in the ring. */
static void stream(void *arg)
{
	long k = (long)(intptr_t)arg;

	ran_here();
	if (k == CALLS)
		return;
	atomic_store(&asked, k + 1);
	WAIT_UNTIL(atomic_load(&made) > k);
}

static uint64_t barriers(void)
{
	struct xc_stats st;

	CHECK_RET(xc_stats_get(target, &st), 0);
	return st.barriers;
}

static void asleep_after(long calls)
{
	WAIT_UNTIL(atomic_load(&ran) == calls &&
		   atomic_load(&xc_cpus[target].mbox.idle) == XC_IDLE_SLEEPING);
}

int main(void)
{
	struct xc_opts o = { .poll_ns = XC_POLL_NONE, .ring_entries = ENTRIES, .report = report };
	struct xc_ring *r;
	uint64_t paid;
	int home;

	t_membarrier_hook_setup();
	t_home_and_target(&home, &target);

	CHECK_RET(xc_init(&o), 0);
	/* the worker's first idle moment with a ring call behind it times membarrier */
	CHECK_RET(xc_call_single(target, count, NULL, 0), 0);
	asleep_after(1);
	if (atomic_load(&reports) || !atomic_load(&xc_ring_asym))
		t_skip("membarrier is slow, refused or ablated here: every call fences");
	r = xc_ring_peek_in(target, 0);
	CHECK(r && !atomic_load(&r->unfenced));
	CHECK(barriers() == 0);

	atomic_store(&slowed, 1);
	CHECK_RET(xc_call_single(target, stream, (void *)(intptr_t)1, 0), 0);
	atomic_store(&made, 1);
	for (long k = 2; k <= CALLS; k++) {
		WAIT_UNTIL(atomic_load(&asked) == k);
		CHECK_RET(xc_call_single(target, stream, (void *)(intptr_t)k, 0), 0);
		atomic_store(&made, k);
	}
	asleep_after(1 + CALLS);
	paid = barriers();
	atomic_store(&slowed, 0);
	printf("ring-slow-marked: %d calls in %d passes, %llu slow membarriers (%d gave the verdict)\n",
	       CALLS, PASSES, (unsigned long long)paid, SLOW_RUN);
	CHECK(atomic_load(&reports) == 1);		/* the slow verdict, said once */
	CHECK(!atomic_load(&xc_ring_asym));
	CHECK(paid >= SLOW_RUN && paid <= SLOW_RUN + 1);
	CHECK(!atomic_load(&r->unfenced));		/* the mark is gone */
	CHECK_RET(xc_exit(), 0);
	CHECK(atomic_load(&ran) == 1 + CALLS);
	CHECK(atomic_load(&wrong) == 0);
	return T_PASS;
}
