/* SPDX-License-Identifier: MIT */
/*
 * wake_mech.h - the `wake` subcommand's mechanisms: every way Linux lets one
 * thread wake another on another CPU, behind one interface (wake_mech.c),
 * driven by wake.c.
 *
 * Two sides, each a thread pinned to its CPU: the waker (side 0) and the
 * sleeper (side 1). Each side waits on its own channel and wakes the other's,
 * so a round trip is a wake each way through the same mechanism. A side's
 * channel lives in its struct wake_side; what a mechanism needs that the
 * waiting thread must own (an io_uring with SINGLE_ISSUER, a blocked signal)
 * is set up by that thread itself.
 */
#ifndef BENCH_WAKE_MECH_H
#define BENCH_WAKE_MECH_H

#include "bench.h"

#include <sys/types.h>

/* set by bench.mk where liburing's headers and library link (make deps installs them) */
#ifdef XB_HAVE_LIBURING
#include <liburing.h>
#endif

enum wake_state { WS_HOT, WS_PARKED, WS_BUSY, WS_NSTATES };

struct wake_side {
	int cpu;
	pid_t tid;
	_Alignas(CACHELINE) _Atomic uint32_t word;      /* spin, futex, io_uring futex; handler flag */
	uint32_t seen;                                  /* spin: the last count this side saw */
	int efd, epfd, pipefd[2];
#ifdef XB_HAVE_LIBURING
	struct io_uring ring;
#endif
	bool ring_up, poll_armed;
	/* made by this side's mechanism code, counted at each call; relaxed: read by the driver only
	 * when the side waits (a count off by one at most over a whole run) */
	_Atomic long syscalls;
	_Atomic long interrupted;	/* of them, returned EINTR and made again: a signal's, not the code's */
	_Alignas(CACHELINE) char pad;
};

struct wake_run;

struct wake_mech {
	const char *name;
	const char *what;               /* what the sleeper does, for the table and the records */
	/* NULL if this kernel and build can run it, else why not (static text or a buffer of its own) */
	const char *(*absent)(void);
	/* why a state is not measured (NULL: measured) */
	const char *no_state[WS_NSTATES];
	int (*setup)(struct wake_run *r, int me);       /* in side me's thread; 0 or -errno */
	void (*teardown)(struct wake_run *r, int me);
	void (*wake)(struct wake_run *r, int to);       /* from the other side */
	void (*wait)(struct wake_run *r, int me);       /* until woken; consumes the wake */
	/* no sleeper thread of ours: wake() itself returns once the other side ran (libxcall, membarrier) */
	bool synchronous;
	/*
	 * wake(r, 0) may not come from a third thread (it submits on the sleeper's own
	 * ring): a waker's wait past the case's end cannot be rescued (budget_rescue_arm)
	 */
	bool no_rescue;
	bool no_wake_time;              /* the other side runs no code of ours: round trip only */
	bool presence;                  /* synchronous, but a thread of ours must run on the target */
	/*
	 * synchronous, and the target is a thread of ours that runs this loop, set up by
	 * setup(r, 1), until stop: what wake() sends it runs there (an attached libxcall worker)
	 */
	void (*loop)(struct wake_run *r);
	/* the syscall counts come from elsewhere (libxcall's counters): at the timed part's start, end */
	void (*counts)(struct wake_run *r, bool start);
};

struct wake_run {
	const struct wake_mech *m;
	const struct bopts *o;
	struct wake_side side[2];
	int err;
	/* the sleeper's ticks() right after it woke; written by it, read by the waker after the reply */
	_Alignas(CACHELINE) _Atomic uint64_t woke_at;
	_Atomic bool stop;
	void *hook;                     /* mechanism-private */
	/*
	 * For counts(): the waker's waits that slept over the timed part (its voluntary
	 * context switches in the wakes, counted by the driver); and what counts() found:
	 * the syscalls of each side, and the target CPU's libxcall counters.
	 */
	long waker_sleeps;
	long counted[2];                /* syscalls per side over the timed part */
	/*
	 * A test's (XCALL_BENCH_WAKE_STALL=N): the sleeper stops answering after N
	 * timed wakes, as one whose CPU another task holds for seconds; 0: never.
	 * Counted from the timed part, which the waker marks in @timed before its
	 * first timed wake: the warm-up's length depends on the machine's speed,
	 * and the stall must come where any machine reaches it (the timed loop's
	 * first wakes always run).
	 */
	long stall_after;
	_Atomic bool timed;
	bool has_target;
	struct xc_stats target;
};

extern const struct wake_mech wake_mechs[];
extern const int wake_nmechs;

/* membarrier needs registering before the threads start; true if it can run */
bool wake_membarrier_setup(void);

#endif
