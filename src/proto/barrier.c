// SPDX-License-Identifier: MIT
/*
 * barrier.c - the owners' barrier: one membarrier(2) by a worker about to
 * sleep, in place of the store-load fences (R1') that the owners of its
 * rings skipped in their bursts (wake.c, "Owners without a fence", argues
 * why that is enough); and whether it is cheap enough here to take their
 * place.
 *
 * Where the CPUs do not run when asked (an emulated or overcommitted
 * machine) a membarrier is slow (wake.c, "Owners without a fence"), and
 * never waiting for one of this process's own is not enough there: the
 * kernel's mutex is machine-wide, and another process's membarrier (a fork
 * child's parent, any other program using them) holds it. With a busy
 * parent beside a fork child (tests/fork-random.c) in a 16-vCPU TCG guest,
 * barriers took 0.2 s to 22 s each, 0.66-0.8 s on average, on a loaded
 * host; all that while a worker runs no call, though it reads "idle,
 * polling" (its idle word) and its thread runs (the kernel spins for the
 * IPIs): waiting calls stuck for up to 32 s, and children 48-96 s long
 * instead of 3 s.
 * Deciding after the fact does not help a young runtime: by its first
 * membarrier's end, a burst to every CPU has marked every ring unfenced,
 * and each of those costs its worker one membarrier more.
 *
 * So owners skip R1' only where a membarrier was measured cheap. A runtime
 * starts with every call fenced (xc_ring_asym false) and xc_barrier_probe_due
 * set; the first worker to run dry with ring calls behind it (xc_idle_wait,
 * or an attached thread about to sleep: xc_rings_release_held) times up to BARRIER_SLOW_RUN membarriers, while
 * the other workers poll or sleep as they please: the fastest under
 * BARRIER_SLOW_NS (10 ms, some thousand times what they cost where the CPUs
 * run: microseconds) lets owners skip from then on; none, and the machine's
 * CPUs do not run when asked (emulated, or an overcommitted host): every
 * call fences, as where membarrier is refused. Later, BARRIER_SLOW_RUN
 * membarriers in a row over the bound (barrier_timed) say the same, for a
 * machine that grew busy. A slow verdict is the machine's: later runtimes
 * of the process and its fork children keep it (a child forked beside a
 * busy parent pays none); a cheap one too, until membarriers turn slow. The
 * report hook says once that calls fence. A ring already marked unfenced
 * when owners stop skipping costs its worker two membarriers more at most:
 * its owner's first call to read the flag false clears the mark (C',
 * ring.h) and fences, and until then the worker pays at a release that
 * keeps the ring for calls left in it and at the one that lets it go
 * (wake.c, "Owners without a fence"). Either value of xc_ring_asym is
 * safe to an owner at any moment: U2' reads each ring's own mark, not the
 * flag.
 */
#include "base/internal.h"
#include "proto/barrier.h"

#include <linux/membarrier.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

_Atomic bool xc_ring_asym;

/* membarrier's expedited command for this process: 0 not asked yet, 1 registered, -1 refused */
static int barrier_registered;
/* a worker of this process is in membarrier (wake.c, "Owners without a fence"): one at a time */
static _Atomic bool barrier_busy;
/* a worker is to time membarriers before owners may skip R1' (barrier.h) */
_Atomic bool xc_barrier_probe_due;
/* what a membarrier costs here: the process's, kept across runtimes and forks */
enum { BARRIER_UNMEASURED = 0, BARRIER_CHEAP, BARRIER_SLOW };
static _Atomic int barrier_cost;
/* membarriers in a row slower than BARRIER_SLOW_NS, this runtime */
static _Atomic unsigned barrier_slow;

#define BARRIER_SLOW_NS	 (10 * 1000 * 1000)
#define BARRIER_SLOW_RUN 3	/* slow ones in a row, and the probe's tries */

static long membarrier(int cmd)
{
	return syscall(__NR_membarrier, cmd, 0, 0);
}

/*
 * One expedited membarrier by @c's worker, or by the thread closing @c;
 * stuck reports say that it is in one (run/stuck.c): it runs no call until
 * the kernel returns, though its idle word says it polls. Its time, in ns.
 */
static long expedited(struct xc_cpu *c, uint64_t *ns)
{
	uint64_t t0 = xc_now_ns();
	long ret;

	/* relaxed: a snapshot for diagnostics, as the worker's activity (run/stuck.h) */
	atomic_store_explicit(&c->worker.barrier_since_ns, t0, memory_order_relaxed);
	ret = membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
	atomic_store_explicit(&c->worker.barrier_since_ns, 0, memory_order_relaxed);
	*ns = xc_now_ns() - t0;
	return ret;
}

/* At each xc_init: whether owners may skip R1', or a worker measures first. */
void xc_barrier_init(void)
{
	bool usable;
	int cost;

	if (!barrier_registered)
		barrier_registered = membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0 ? 1 : -1;
	usable = barrier_registered > 0 && !xc_ablated(XC_ABLATE_MEMBARRIER);
	/* relaxed, here and below: a verdict for a heuristic; either value of the flags is safe */
	cost = atomic_load_explicit(&barrier_cost, memory_order_relaxed);
	/* a call still in flight from before this xc_init reads either value */
	atomic_store_explicit(&xc_ring_asym, usable && cost == BARRIER_CHEAP, memory_order_relaxed);
	atomic_store_explicit(&xc_barrier_probe_due, usable && cost == BARRIER_UNMEASURED, memory_order_relaxed);
	atomic_store_explicit(&barrier_slow, 0, memory_order_relaxed);
}

/* Membarriers are slow here: every call fences from now on; said once. Relaxed: as above. */
static void barrier_slow_verdict(struct xc_cpu *c, uint64_t ns, bool probe)
{
	atomic_store_explicit(&xc_ring_asym, false, memory_order_relaxed);
	if (atomic_exchange_explicit(&barrier_cost, BARRIER_SLOW, memory_order_relaxed) != BARRIER_SLOW)
		xc_report("CPU %d: membarrier(2) took %llu ms (%s of %d %s over %d ms; a worker runs no "
			  "call meanwhile): this machine's CPUs do not run when asked (emulated or "
			  "overcommitted), so each call fences instead, in this process and its fork children",
			  c->life.cpu, (unsigned long long)(ns / 1000000), probe ? "the fastest" : "the last",
			  BARRIER_SLOW_RUN, probe ? "timed after the first calls, all" : "in a row",
			  BARRIER_SLOW_NS / 1000000);
}

/*
 * While xc_barrier_probe_due is set (barrier.h), at @c's worker's first
 * idle moment with rings held: time up to BARRIER_SLOW_RUN membarriers,
 * and let owners skip R1' if one was cheap (above). Not at bringup, before
 * any call, when few of the process's threads run and a membarrier times
 * falsely cheap: ring calls have just come, so their senders and the
 * workers that run them may be running, and it costs what it will cost.
 * Nor only before a sleep: a worker that a stream of calls keeps busy
 * never sleeps, and its senders would fence for good. One worker at a time
 * (barrier_busy); another finds it under way and goes on, its rings
 * fenced. The exchange of the flag claims the probe: one per runtime.
 */
void xc_barrier_probe_slow(struct xc_cpu *c)
{
	uint64_t best = UINT64_MAX;

	/* relaxed: a claim among workers; the syscalls order what matters */
	if (atomic_exchange_explicit(&barrier_busy, true, memory_order_relaxed))
		return;
	if (atomic_exchange_explicit(&xc_barrier_probe_due, false, memory_order_relaxed)) {
		for (int i = 0; i < BARRIER_SLOW_RUN && best > BARRIER_SLOW_NS; i++) {
			uint64_t ns;

			if (expedited(c, &ns))
				break;	/* refused after all: calls stay fenced */
			best = ns < best ? ns : best;
		}
		if (best <= BARRIER_SLOW_NS) {
			atomic_store_explicit(&barrier_cost, BARRIER_CHEAP, memory_order_relaxed);
			atomic_store_explicit(&xc_ring_asym, true, memory_order_relaxed);
		} else if (best != UINT64_MAX) {
			barrier_slow_verdict(c, best, true);
		}
	}
	atomic_store_explicit(&barrier_busy, false, memory_order_relaxed);
}

/*
 * A membarrier of @c's for owners that took @ns: the last of
 * BARRIER_SLOW_RUN slow ones in a row gives the slow verdict (above). Relaxed: a count for a heuristic.
 */
static void barrier_timed(struct xc_cpu *c, uint64_t ns)
{
	if (ns <= BARRIER_SLOW_NS) {
		atomic_store_explicit(&barrier_slow, 0, memory_order_relaxed);
		return;
	}
	if (atomic_fetch_add_explicit(&barrier_slow, 1, memory_order_relaxed) + 1 >= BARRIER_SLOW_RUN)
		barrier_slow_verdict(c, ns, false);
}

/*
 * A full barrier on every running thread of the process (membarrier), for
 * the owners' skipped R1'. False if another worker's is under way and
 * @may_skip: the caller must not sleep yet, and polls on instead.
 */
bool xc_owners_barrier(struct xc_cpu *c, bool may_skip)
{
	/* relaxed: a rate limit, not an order; the syscall orders */
	bool busy = atomic_exchange_explicit(&barrier_busy, true, memory_order_relaxed), done;

	if (busy && may_skip)
		return false;
	uint64_t ns;

	/* registered at xc_init, so it does not fail; if it did, polling on would still be safe */
	while (!(done = expedited(c, &ns) == 0) && !may_skip)
		sched_yield();
	if (!busy)
		atomic_store_explicit(&barrier_busy, false, memory_order_relaxed);
	if (done) {
		xc_stat_inc_shared(&c->worker.barriers);	/* shared: a close may run on another thread */
		barrier_timed(c, ns);
	}
	return done;
}

/* A forked child: a new process, whose first xc_init asks membarrier again. */
void xc_barrier_fork_child(void)
{
	barrier_registered = 0;
	/* barrier_cost stays: what membarriers cost is the machine's (above) */
	/* relaxed: the child has one thread */
	atomic_store_explicit(&barrier_busy, false, memory_order_relaxed);
}
