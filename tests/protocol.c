/*
 * protocol: the kick protocol's counters. A polling target costs no futex
 * wake; a burst of calls to a sleeping target costs exactly one; a sender
 * that finds a wakeup under way (WAKING/WOKENUP) rides free and its call
 * still runs; each ablation turns its optimisation off (elide: one wake per
 * call even to a polling target).
 */
#include "test.h"
#include "ablate.h"
#include "base/internal.h"
#include "base/futex.h"
#include <stdatomic.h>

static _Atomic int runs, gate, held;

static void bump(void *arg)
{
	atomic_fetch_add(&runs, 1);
}

static void hold(void *arg)
{
	atomic_store(&held, 1);
	while (!atomic_load(&gate))
		;
	atomic_fetch_add(&runs, 1);
}

static int pick_target(void)
{
	int cpus[CPU_SETSIZE];

	if (t_cpus(cpus) < 2) {
		xc_exit();
		t_skip("needs 2 CPUs");
	}
	return cpus[1];
}

/* True once cpu's worker is blocked in futex_wait on its idle word (read from /proc). */
static bool worker_asleep(int cpu)
{
	char want[64], path[300], line[256];
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	bool found = false;

	snprintf(want, sizeof(want), "%d %p ", SYS_futex, (void *)&xc_cpus[cpu].mbox.idle);
	while (d && (e = readdir(d)) && !found) {
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/task/%s/syscall", e->d_name);
		f = fopen(path, "r");
		if (f && fgets(line, sizeof(line), f))
			found = !strncmp(line, want, strlen(want));
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return found;
}

/*
 * Bring the runtime up with @o, follow_os off, and return a target whose
 * worker is asleep: it stays asleep until a sender wakes it (a worker that
 * watches its CPU wakes every XC_OS_WATCH_NS, and would poll when the
 * test's kick came).
 */
static int start_with_target_asleep(const struct xc_opts *o, unsigned ablate)
{
	struct xc_opts asleep = *o;
	int t;

	asleep.follow_os = XC_FOLLOW_OS_OFF;
	CHECK_RET(t_init_ablated(&asleep, ablate), 0);
	t = pick_target();
	WAIT_UNTIL(worker_asleep(t));
	atomic_store(&runs, 0);
	return t;
}

static void sleeping_target_burst(void)
{
	struct xc_opts o = { .poll_ns = XC_POLL_NONE };
	struct xc_stats a, b;
	int t = start_with_target_asleep(&o, 0);

	xc_stats_get(t, &a);
	CHECK_RET(xc_call_single(t, hold, NULL, 0), 0);
	for (int i = 0; i < 99; i++)
		CHECK_RET(xc_call_single(t, bump, NULL, 0), 0);
	atomic_store(&gate, 1);
	WAIT_UNTIL(atomic_load(&runs) == 100);
	xc_stats_get(t, &b);
	CHECK(b.kicks_sent - a.kicks_sent == 1);
	CHECK(b.kicks_elided + b.kicks_coalesced - a.kicks_elided - a.kicks_coalesced == 99);
	CHECK(b.free_rides == a.free_rides);
	CHECK(b.wakeups - a.wakeups >= 1);
	CHECK_RET(xc_exit(), 0);
}

static void polling_target(unsigned ablate)
{
	struct xc_opts o = { .poll_ns = XC_POLL_FOREVER };
	struct xc_stats a, b;
	int t;

	CHECK_RET(t_init_ablated(&o, ablate), 0);
	t = pick_target();
	xc_stats_get(t, &a);
	for (int i = 0; i < 1000; i++)
		CHECK_RET(xc_call_single(t, bump, NULL, XC_WAIT), 0);
	xc_stats_get(t, &b);
	CHECK(b.sleeps == a.sleeps);
	if (ablate & XC_ABLATE_ELIDE) {
		CHECK(b.kicks_sent - a.kicks_sent == 1000);	/* one syscall per call */
		CHECK(b.kicks_elided == a.kicks_elided);
	} else {
		CHECK(b.kicks_sent == a.kicks_sent);		/* never a syscall */
		CHECK(b.kicks_elided - a.kicks_elided == 1000);
	}
	CHECK_RET(xc_exit(), 0);
}

static void free_ride(unsigned ablate)
{
	struct xc_opts o = { .poll_ns = XC_POLL_NONE };
	struct xc_stats a, b;
	uint32_t s = XC_IDLE_SLEEPING;
	int t = start_with_target_asleep(&o, ablate);

	xc_stats_get(t, &a);
	/* play a first sender that has claimed the wakeup but not yet woken the worker */
	CHECK(atomic_compare_exchange_strong(&xc_cpus[t].mbox.idle, &s, XC_IDLE_WOKENUP));
	CHECK_RET(xc_call_single(t, bump, NULL, 0), 0);	/* the second sender */
	xc_stats_get(t, &b);
	if (ablate & XC_ABLATE_FREERIDE) {
		CHECK(b.kicks_sent - a.kicks_sent == 1 && b.free_rides == a.free_rides);
	} else {
		CHECK(b.free_rides - a.free_rides == 1 && b.kicks_sent == a.kicks_sent);
	}
	xc_futex_wake(&xc_cpus[t].mbox.idle, 1);		/* the first sender's wake lands */
	WAIT_UNTIL(atomic_load(&runs) == 1);
	CHECK_RET(xc_exit(), 0);
	CHECK(atomic_load(&runs) == 1);
}

static void coalesce_ablated(void)
{
	struct xc_opts o = { .poll_ns = XC_POLL_FOREVER };
	struct xc_stats a, b;
	int t;

	CHECK_RET(t_init_ablated(&o, XC_ABLATE_COALESCE), 0);
	t = pick_target();
	atomic_store(&runs, 0);
	atomic_store(&gate, 0);
	atomic_store(&held, 0);
	xc_stats_get(t, &a);
	CHECK_RET(xc_call_single(t, hold, NULL, 0), 0);
	WAIT_UNTIL(atomic_load(&held));
	for (int i = 0; i < 50; i++)
		CHECK_RET(xc_call_single(t, bump, NULL, 0), 0);
	atomic_store(&gate, 1);
	WAIT_UNTIL(atomic_load(&runs) == 51);
	xc_stats_get(t, &b);
	CHECK(b.kicks_coalesced == a.kicks_coalesced);	/* every push kicked */
	CHECK(b.kicks_elided - a.kicks_elided == 51);
	CHECK_RET(xc_exit(), 0);
}

int main(void)
{
	polling_target(0);
	polling_target(XC_ABLATE_ELIDE);
	sleeping_target_burst();
	free_ride(0);
	free_ride(XC_ABLATE_FREERIDE);
	coalesce_ablated();
	return T_PASS;
}
