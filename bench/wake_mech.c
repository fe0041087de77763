/* SPDX-License-Identifier: MIT */
/*
 * wake_mech.c - the `wake` subcommand's mechanisms (wake_mech.h): spin,
 * futex, eventfd, eventfd + epoll, pipe, io_uring (multishot poll of an
 * eventfd, MSG_RING with and without DEFER_TASKRUN, FUTEX_WAIT), signals
 * (sigwaitinfo, and a busy thread's handler), membarrier, libxcall (a
 * sleeping and a polling worker, and a thread of ours attached as the worker,
 * asleep in its own epoll or io_uring loop), and user IPIs where they exist.
 *
 * Each wake and each wait counts the syscalls it makes on its own side, at
 * the call: that is "syscalls per wake" in the records. io_uring waits look
 * for a completion first (io_uring_peek_cqe, no syscall) and enter the kernel
 * only when there is none.
 */
#include "wake_mech.h"
#include "kernel.h"             /* membarrier */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Signals of our own, away from libxcall's urgent signal (SIGRTMIN + 2 by default). */
#define SIG_WAITED  (SIGRTMIN + 5)
#define SIG_HANDLED (SIGRTMIN + 6)

static void count(struct wake_run *r, int side)
{
	atomic_fetch_add_explicit(&r->side[side].syscalls, 1, memory_order_relaxed);
}

/* A blocking syscall made; @interrupted: it returned EINTR and the code makes it again. */
static void count_try(struct wake_run *r, int side, bool interrupted)
{
	count(r, side);
	if (interrupted)
		atomic_fetch_add_explicit(&r->side[side].interrupted, 1, memory_order_relaxed);
}

static void fail(struct wake_run *r, int err)
{
	if (!r->err)
		r->err = err ? err : EIO;
}

/* ---- spin: the limit; no syscall ---- */

static int spin_setup(struct wake_run *r, int me)
{
	atomic_store_explicit(&r->side[me].word, 0, memory_order_relaxed);
	r->side[me].seen = 0;
	return 0;
}

static void spin_wake(struct wake_run *r, int to)
{
	/* release: what the waker wrote before is seen by the side that sees the count move */
	atomic_fetch_add_explicit(&r->side[to].word, 1, memory_order_release);
}

static void spin_wait(struct wake_run *r, int me)
{
	struct wake_side *s = &r->side[me];
	uint32_t v;

	/* acquire: pairs with spin_wake */
	while ((v = atomic_load_explicit(&s->word, memory_order_acquire)) == s->seen)
		cpu_relax();
	s->seen = v;
}

static void nothing(struct wake_run *r, int me)
{
	(void)r;
	(void)me;
}

/* ---- futex: a word and FUTEX_WAKE, always ---- */

static void futex_wake_side(struct wake_run *r, int to)
{
	/* release: pairs with the waiter's exchange */
	atomic_store_explicit(&r->side[to].word, 1, memory_order_release);
	xc_futex_wake(&r->side[to].word, 1);
	count(r, 1 - to);
}

static void futex_wait_side(struct wake_run *r, int me)
{
	_Atomic uint32_t *w = &r->side[me].word;

	/* acquire: the waker's writes before its store of 1 */
	while (!atomic_exchange_explicit(w, 0, memory_order_acquire)) {
		xc_futex_wait(w, 0, NULL);
		count(r, me);
	}
}

/* ---- eventfd, eventfd + epoll, pipe ---- */

static int fd_setup(struct wake_run *r, int me)
{
	struct wake_side *s = &r->side[me];

	s->efd = s->epfd = s->pipefd[0] = s->pipefd[1] = -1;
	return 0;
}

static void fd_teardown(struct wake_run *r, int me)
{
	struct wake_side *s = &r->side[me];
	int *fds[] = {&s->efd, &s->epfd, &s->pipefd[0], &s->pipefd[1]};

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (*fds[i] >= 0) {
			close(*fds[i]);
			*fds[i] = -1;
		}
}

static int eventfd_setup(struct wake_run *r, int me)
{
	fd_setup(r, me);
	r->side[me].efd = eventfd(0, EFD_CLOEXEC);
	return r->side[me].efd < 0 ? -errno : 0;
}

static void eventfd_wake(struct wake_run *r, int to)
{
	uint64_t one = 1;

	if (write(r->side[to].efd, &one, sizeof(one)) != sizeof(one))
		fail(r, errno);
	count(r, 1 - to);
}

static void eventfd_drain(struct wake_run *r, int me)
{
	uint64_t v;

	while (read(r->side[me].efd, &v, sizeof(v)) != sizeof(v)) {
		count_try(r, me, errno == EINTR);
		if (errno != EINTR && errno != EAGAIN) {
			fail(r, errno);
			return;
		}
	}
	count(r, me);
}

static int epoll_setup(struct wake_run *r, int me)
{
	struct wake_side *s = &r->side[me];
	struct epoll_event ev = {.events = EPOLLIN};
	int err = eventfd_setup(r, me);

	if (err)
		return err;
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0 || epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->efd, &ev))
		return -errno;
	return 0;
}

/* As Seastar and Glommio sleep: epoll_wait, then read the eventfd to rearm it. */
static void epoll_wait_side(struct wake_run *r, int me)
{
	struct epoll_event ev;
	int n;

	do {
		n = epoll_wait(r->side[me].epfd, &ev, 1, -1);
		count_try(r, me, n < 0 && errno == EINTR);
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		fail(r, errno);
		return;
	}
	eventfd_drain(r, me);
}

static int pipe_setup(struct wake_run *r, int me)
{
	fd_setup(r, me);
	return pipe2(r->side[me].pipefd, O_CLOEXEC) ? -errno : 0;
}

static void pipe_wake(struct wake_run *r, int to)
{
	if (write(r->side[to].pipefd[1], "w", 1) != 1)
		fail(r, errno);
	count(r, 1 - to);
}

static void pipe_wait(struct wake_run *r, int me)
{
	char c;
	ssize_t n;

	do {
		n = read(r->side[me].pipefd[0], &c, 1);
		count_try(r, me, n < 0 && errno == EINTR);
	} while (n < 0 && errno == EINTR);
	if (n != 1)
		fail(r, n < 0 ? errno : EIO);
}

/* ---- signals ---- */

static void sigset_of(sigset_t *set, int sig)
{
	sigemptyset(set);
	sigaddset(set, sig);
}

/* Blocked in this thread, so that it stays pending for sigwaitinfo. */
static int sigwait_setup(struct wake_run *r, int me)
{
	sigset_t set;

	(void)r;
	(void)me;
	sigset_of(&set, SIG_WAITED);
	return -pthread_sigmask(SIG_BLOCK, &set, NULL);
}

static void sigwait_teardown(struct wake_run *r, int me)
{
	sigset_t set;
	struct timespec zero = {0, 0};

	(void)r;
	(void)me;
	sigset_of(&set, SIG_WAITED);
	/* nothing should be pending; take whatever is before unblocking a fatal default */
	while (sigtimedwait(&set, NULL, &zero) > 0)
		;
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

static void tgkill_side(struct wake_run *r, int to, int sig)
{
	if (syscall(SYS_tgkill, getpid(), r->side[to].tid, sig))
		fail(r, errno);
	count(r, 1 - to);
}

static void sigwait_wake(struct wake_run *r, int to)
{
	tgkill_side(r, to, SIG_WAITED);
}

static void sigwait_wait(struct wake_run *r, int me)
{
	sigset_t set;
	int s;

	sigset_of(&set, SIG_WAITED);
	do {
		s = sigwaitinfo(&set, NULL);
		count_try(r, me, s < 0 && errno == EINTR);
	} while (s < 0 && errno == EINTR);
	if (s < 0)
		fail(r, errno);
}

/*
 * A busy thread's handler: the sleeper spins in user space and the signal
 * interrupts it; its handler sets the sleeper's word. The reply is a store
 * the waker spins on. One run at a time, so the handler finds it here.
 * Installed at the first run and kept: a signal the waker sent that is
 * still queued when a run ends (a stalled sleeper's case given up) finds
 * no run and does nothing, where the default action ended the process.
 */
static struct wake_run *_Atomic handler_run;
static bool handler_installed;

static void on_handled_signal(int sig)
{
	struct wake_run *r = atomic_load_explicit(&handler_run, memory_order_relaxed);

	(void)sig;
	if (r)
		/* release: pairs with the sleeper's acquire exchange */
		atomic_store_explicit(&r->side[1].word, 1, memory_order_release);
}

static int handler_setup(struct wake_run *r, int me)
{
	struct sigaction sa = {.sa_handler = on_handled_signal};

	spin_setup(r, me);
	if (me != 1)
		return 0;
	atomic_store(&handler_run, r);
	if (handler_installed)
		return 0;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIG_HANDLED, &sa, NULL))
		return -errno;
	handler_installed = true;
	return 0;
}

static void handler_teardown(struct wake_run *r, int me)
{
	(void)r;
	if (me == 1)
		atomic_store(&handler_run, NULL);
}

static void handler_wake(struct wake_run *r, int to)
{
	if (to == 1)
		tgkill_side(r, to, SIG_HANDLED);
	else
		spin_wake(r, to);
}

static void handler_wait(struct wake_run *r, int me)
{
	if (me == 0) {
		spin_wait(r, me);
		return;
	}
	/* acquire: pairs with the handler's store */
	while (!atomic_exchange_explicit(&r->side[1].word, 0, memory_order_acquire))
		cpu_relax();
}

/* ---- membarrier: the kernel's own IPI to a CPU that runs a thread of ours ---- */

static const char *membarrier_why = "membarrier() not tried";

bool wake_membarrier_setup(void)
{
	struct membarrier_reg m;

	membarrier_register(&m);
	membarrier_why = m.why;
	return m.rseq;
}

static const char *membarrier_absent(void)
{
	return membarrier_why;
}

static void membarrier_wake(struct wake_run *r, int to)
{
	if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ, MEMBARRIER_CMD_FLAG_CPU, r->side[to].cpu))
		fail(r, errno);
	count(r, 1 - to);
}

/* ---- libxcall: a waiting call to a worker that sleeps, or polls, or to an attached thread ---- */

/* The runtime of the cell that runs (one at a time), for counts(). */
struct xc_hook {
	struct xc_stats t0;
	long own0;              /* an attached sleeper's own syscalls at the start */
	bool attached;          /* the sleeper's thread is its CPU's worker (its own to read) */
};

static struct xc_hook xcall_hook;

static void stamp(void *arg)
{
	struct wake_run *r = arg;

	/* relaxed: the call's completion orders it before the caller reads it */
	atomic_store_explicit(&r->woke_at, ticks(), memory_order_relaxed);
}

static void tid_of_worker(void *arg)
{
	*(pid_t *)arg = (pid_t)syscall(SYS_gettid);
}

static int xcall_setup(struct wake_run *r, int me, long poll)
{
	char cpu[16];

	if (me != 0)
		return 0;
	snprintf(cpu, sizeof(cpu), "%d", r->side[1].cpu);
	if (xh_up(r->o, cpu, poll, 0))
		return -EIO;
	memset(&xcall_hook, 0, sizeof(xcall_hook));
	r->hook = &xcall_hook;
	return xc_call_single(r->side[1].cpu, tid_of_worker, &r->side[1].tid, XC_WAIT);
}

static int xcall_sleeping_setup(struct wake_run *r, int me)
{
	return xcall_setup(r, me, XC_POLL_NONE);
}

static int xcall_polling_setup(struct wake_run *r, int me)
{
	return xcall_setup(r, me, XC_POLL_FOREVER);
}

static void xcall_teardown(struct wake_run *r, int me)
{
	if (me == 0 && r->hook) {
		xh_down();
		r->hook = NULL;
	}
}

static void xcall_wake(struct wake_run *r, int to)
{
	int err = xc_call_single(r->side[to].cpu, stamp, r, XC_WAIT);

	/*
	 * The call after the stop only ends an attached loop, which may have seen the stop
	 * and detached already: its CPU is then offline, and nothing is left to end.
	 * relaxed: the driver, this same thread, stored the stop before this call
	 */
	if (err == -ENXIO && r->m->loop && atomic_load_explicit(&r->stop, memory_order_relaxed))
		return;
	if (err)
		fail(r, -err);
}

/*
 * Syscalls per wake, from the target CPU's counters over the timed part. A round trip
 * is one waiting call:
 *   waker:   its kicks (kicks_sent: a futex wake to a worker, an eventfd write to an
 *            attached thread), and its waits for the call's completion that slept: with
 *            no poll window, after a short spin, the caller sleeps on a futex (the driver
 *            counts them as its voluntary context switches in the wakes; a futex wait
 *            that finds the call done on entering the kernel switches nothing: not seen);
 *   sleeper: a worker's futex waits (sleeps); an attached thread's own waits
 *            (epoll_wait, io_uring_enter, counted in its loop at the call) and the
 *            eventfd read that xc_worker_sleep_end() makes for each kick it was sent
 *            (wake.c, fd_settle: one read per kick claimed, so kicks_sent; a read done
 *            again because the write was still on its way is not seen); and either way
 *            a futex wake for each of the waker's waits that slept.
 */
static void xcall_counts(struct wake_run *r, bool start)
{
	struct xc_hook *h = r->hook;
	struct xc_stats now, d;
	/* relaxed: the sleeper's own count, off by the wait it may be entering (see wake_side) */
	long own = atomic_load_explicit(&r->side[1].syscalls, memory_order_relaxed);

	xh_stats(r->side[1].cpu, &now);
	if (start) {
		h->t0 = now;
		h->own0 = own;
		return;
	}
	xc_stats_delta(&d, &h->t0, &now);
	r->target = d;
	r->has_target = true;
	r->counted[0] = (long)d.kicks_sent + r->waker_sleeps;
	r->counted[1] = (r->m->loop ? own - h->own0 + (long)d.kicks_sent : (long)d.sleeps) +
			r->waker_sleeps;
}

/* ---- io_uring ---- */

#ifdef XB_HAVE_LIBURING

#define URING_MSG_TAG 0x6d7367ULL       /* a MSG_RING message's data, as it arrives */
#define URING_POLL_TAG 0x706f6cULL
#define URING_FUTEX_TAG 0x667478ULL
#define URING_SETUP_DEFER (IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN)
/* FUTEX_WAIT (6.7), built by hand: the packaged liburing may predate io_uring_prep_futex_wait */
#define URING_OP_FUTEX_WAIT 51
#define URING_FUTEX2_SIZE_U32 0x02
#define URING_FUTEX2_PRIVATE 128

static char uring_why[4][128];

/* Whether a ring with @flags can be made here, and (@op >= 0) whether it supports @op. */
static const char *uring_check(int slot, unsigned flags, int op, const char *opname)
{
	struct io_uring ring;
	char v[16] = "";
	FILE *f = fopen("/proc/sys/kernel/io_uring_disabled", "r");

	if (f) {
		if (!fgets(v, sizeof(v), f))
			v[0] = 0;
		fclose(f);
	}
	if (atoi(v) == 2)
		return "io_uring is off (kernel.io_uring_disabled = 2)";
	int err = io_uring_queue_init(4, &ring, flags);
	if (err) {
		snprintf(uring_why[slot], sizeof(uring_why[slot]), "io_uring_setup%s: %s%s",
			 flags ? "(DEFER_TASKRUN)" : "", strerror(-err),
			 atoi(v) == 1 ? " (io_uring_disabled = 1)" : "");
		return uring_why[slot];
	}
	const char *why = NULL;
	if (op >= 0) {
		struct io_uring_probe *p = io_uring_get_probe_ring(&ring);

		if (!p || !io_uring_opcode_supported(p, op)) {
			snprintf(uring_why[slot], sizeof(uring_why[slot]),
				 "this kernel's io_uring lacks %s", opname);
			why = uring_why[slot];
		}
		if (p)
			io_uring_free_probe(p);
	}
	io_uring_queue_exit(&ring);
	return why;
}

static const char *uring_poll_absent(void)
{
	return uring_check(0, 0, IORING_OP_POLL_ADD, "POLL_ADD");
}

static const char *uring_msg_absent(void)
{
	return uring_check(1, 0, IORING_OP_MSG_RING, "MSG_RING (5.18+)");
}

static const char *uring_msg_defer_absent(void)
{
	return uring_check(2, URING_SETUP_DEFER, IORING_OP_MSG_RING, "MSG_RING (5.18+)");
}

static const char *uring_futex_absent(void)
{
	return uring_check(3, 0, URING_OP_FUTEX_WAIT, "FUTEX_WAIT (6.7+)");
}

static int ring_up(struct wake_run *r, int me, unsigned flags)
{
	struct wake_side *s = &r->side[me];
	int err;

	fd_setup(r, me);
	err = io_uring_queue_init(8, &s->ring, flags);
	if (err)
		return err;
	s->ring_up = true;
	return 0;
}

static void ring_down(struct wake_run *r, int me)
{
	struct wake_side *s = &r->side[me];

	if (s->ring_up)
		io_uring_queue_exit(&s->ring);
	s->ring_up = false;
	fd_teardown(r, me);
}

/* The next completion of side @me's ring: peek first, enter the kernel only if there is none. */
static bool ring_next(struct wake_run *r, int me, struct io_uring_cqe *out)
{
	struct io_uring *ring = &r->side[me].ring;
	struct io_uring_cqe *cqe;
	int err;

	if (io_uring_peek_cqe(ring, &cqe)) {
		do {
			err = io_uring_wait_cqe(ring, &cqe);
			count_try(r, me, err == -EINTR);
		} while (err == -EINTR);
		if (err) {
			fail(r, -err);
			return false;
		}
	}
	*out = *cqe;
	io_uring_cqe_seen(ring, cqe);
	return true;
}

static int submit(struct wake_run *r, int me)
{
	int n = io_uring_submit(&r->side[me].ring);

	count(r, me);
	return n < 0 ? n : 0;
}

/* A multishot poll on an eventfd in side @me's ring: armed at setup, again if the kernel ends it. */
static int poll_arm_fd(struct wake_run *r, int me, int fd)
{
	struct wake_side *s = &r->side[me];
	struct io_uring_sqe *sqe = io_uring_get_sqe(&s->ring);

	if (!sqe)
		return -EBUSY;
	io_uring_prep_poll_multishot(sqe, fd, POLLIN);
	io_uring_sqe_set_data64(sqe, URING_POLL_TAG);
	s->poll_armed = true;
	return submit(r, me);
}

static int poll_arm(struct wake_run *r, int me)
{
	return poll_arm_fd(r, me, r->side[me].efd);
}

static int uring_poll_setup(struct wake_run *r, int me)
{
	int err = ring_up(r, me, 0);

	if (err)
		return err;
	r->side[me].efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (r->side[me].efd < 0)
		return -errno;
	return poll_arm(r, me);
}

static void uring_poll_wait(struct wake_run *r, int me)
{
	struct io_uring_cqe c;

	if (!ring_next(r, me, &c))
		return;
	if (c.res < 0) {
		fail(r, -c.res);
		return;
	}
	if (!(c.flags & IORING_CQE_F_MORE) && poll_arm(r, me))
		fail(r, EIO);
	eventfd_drain(r, me);   /* the count back to 0: the next write is a new event */
}

static int uring_msg_setup(struct wake_run *r, int me)
{
	return ring_up(r, me, 0);
}

static int uring_msg_defer_setup(struct wake_run *r, int me)
{
	return ring_up(r, me, URING_SETUP_DEFER);
}

/* A message from the waking side's ring into the other's; the sender's own completion is skipped. */
static void uring_msg_wake(struct wake_run *r, int to)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&r->side[1 - to].ring);

	if (!sqe) {
		fail(r, EBUSY);
		return;
	}
	io_uring_prep_msg_ring(sqe, r->side[to].ring.ring_fd, 0, URING_MSG_TAG, 0);
	sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
	if (submit(r, 1 - to))
		fail(r, EIO);
}

static void uring_msg_wait(struct wake_run *r, int me)
{
	struct io_uring_cqe c;

	while (ring_next(r, me, &c)) {
		if (c.user_data == URING_MSG_TAG)
			return;
		if (c.res < 0) {        /* a failed send of our own */
			fail(r, -c.res);
			return;
		}
	}
}

static int uring_futex_setup(struct wake_run *r, int me)
{
	atomic_store_explicit(&r->side[me].word, 0, memory_order_relaxed);
	return ring_up(r, me, 0);
}

/* FUTEX_WAIT on this side's word through its ring, until the word reads 1. */
static void uring_futex_wait(struct wake_run *r, int me)
{
	struct wake_side *s = &r->side[me];
	struct io_uring_cqe c;

	/* acquire: the waker's writes before its store of 1 */
	while (!atomic_exchange_explicit(&s->word, 0, memory_order_acquire)) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&s->ring);

		if (!sqe) {
			fail(r, EBUSY);
			return;
		}
		memset(sqe, 0, sizeof(*sqe));
		sqe->opcode = URING_OP_FUTEX_WAIT;
		sqe->fd = URING_FUTEX2_SIZE_U32 | URING_FUTEX2_PRIVATE;
		sqe->addr = (uint64_t)(uintptr_t)&s->word;
		sqe->off = 0;                   /* the value it sleeps on (addr2) */
		sqe->addr3 = 0xffffffffu;       /* FUTEX_BITSET_MATCH_ANY */
		io_uring_sqe_set_data64(sqe, URING_FUTEX_TAG);
		int err = io_uring_submit_and_wait(&s->ring, 1);
		count_try(r, me, err == -EINTR);
		if (err < 0 && err != -EINTR) {
			fail(r, -err);
			return;
		}
		if (!ring_next(r, me, &c))
			return;
		/* 0: woken; -EAGAIN: the word had moved on already */
		if (c.res < 0 && c.res != -EAGAIN) {
			fail(r, -c.res);
			return;
		}
	}
}

#define URING_ROW(nm, wh, ab, su, wk, wt)                                                          \
	{.name = nm, .what = wh, .absent = ab, .setup = su, .teardown = ring_down, .wake = wk, \
	 .wait = wt, .no_rescue = URING_NO_RESCUE_##wk}
/* a MSG_RING comes from the sleeper's ring, which only the sleeper's thread may submit on */
#define URING_NO_RESCUE_uring_msg_wake true
#define URING_NO_RESCUE_eventfd_wake false
#define URING_NO_RESCUE_futex_wake_side false
#else
static const char *uring_none(void)
{
	return "built without liburing (make deps installs liburing-dev)";
}
#define URING_ROW(nm, wh, ab, su, wk, wt) {.name = nm, .what = wh, .absent = uring_none}
#endif

/* ---- libxcall: an attached thread of ours asleep in its own epoll or io_uring loop ---- */

/*
 * The sleeper's CPU is set aside (xc_opts.attach) for the sleeper's thread, which attaches
 * in setup(r, 1). No poll window, as libxcall-sleeping: the waiting caller sleeps after its
 * first short spin, as the fd rows' waker blocks at once, and the waker CPU's own worker,
 * idle all along, sleeps at once.
 */
static int attached_up(struct wake_run *r)
{
	char cpus[32], attach[16];
	struct xc_opts xo = {.cpus = cpus, .attach = attach, .poll_ns = XC_POLL_NONE};
	int err;

	snprintf(cpus, sizeof(cpus), "%d,%d", r->side[0].cpu, r->side[1].cpu);
	snprintf(attach, sizeof(attach), "%d", r->side[1].cpu);
	err = xh_up_opts(&xo);
	if (err) {
		fprintf(stderr, "xcall-bench: xc_init(cpus=%s, attach=%s): %s\n", cpus, attach,
			strerror(-err));
		return err;
	}
	memset(&xcall_hook, 0, sizeof(xcall_hook));
	r->hook = &xcall_hook;
	return 0;
}

/* In the sleeper's thread, pinned to its CPU alone: it becomes that CPU's worker. */
static int attach_self(struct wake_run *r)
{
	struct xc_hook *h = r->hook;
	int err = xc_worker_attach(r->side[1].cpu);

	if (!err)
		h->attached = true;
	return err;
}

static int attached_epoll_setup(struct wake_run *r, int me)
{
	struct wake_side *s = &r->side[me];
	struct epoll_event ev = {.events = EPOLLIN};
	int err;

	if (me == 0)
		return attached_up(r);
	fd_setup(r, me);
	err = attach_self(r);
	if (err)
		return err;
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0 || epoll_ctl(s->epfd, EPOLL_CTL_ADD, xc_worker_fd(), &ev))
		return -errno;
	return 0;
}

/* Detached before the driver's xc_exit, which refuses while a thread is attached. */
static void attached_teardown(struct wake_run *r, int me)
{
	struct xc_hook *h = r->hook;

	if (me == 0) {
		xcall_teardown(r, me);
		return;
	}
	/* out of the epoll set and the ring first: the detach closes the eventfd */
#ifdef XB_HAVE_LIBURING
	ring_down(r, me);
#else
	fd_teardown(r, me);
#endif
	if (h && h->attached) {
		int err = xc_worker_detach();

		if (err)
			fail(r, -err);
		h->attached = false;
	}
}

/* The loop of tests/attach.c: the calls, then a sleep in its own wait if nothing came. */
static void attached_loop(struct wake_run *r, void (*sleep)(struct wake_run *r))
{
	for (;;) {
		int ret = xc_poll();

		if (ret < 0) {
			fail(r, -ret);
			return;
		}
		/* acquire: the stop is stored before the driver's last call, which xc_poll() ran */
		if (atomic_load_explicit(&r->stop, memory_order_acquire) || r->err)
			return;
		ret = xc_worker_sleep_begin();
		if (ret < 0) {
			fail(r, -ret);
			return;
		}
		if (ret == 0)
			sleep(r);
		xc_worker_sleep_end();  /* reads the eventfd if it was kicked */
	}
}

/* epoll_wait with only the worker's eventfd in the set; xc_worker_sleep_end() reads it. */
static void attached_epoll_sleep(struct wake_run *r)
{
	struct epoll_event ev[4];
	int n;

	do {
		n = epoll_wait(r->side[1].epfd, ev, 4, -1);
		count_try(r, 1, n < 0 && errno == EINTR);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		fail(r, errno);
}

static void attached_epoll_loop(struct wake_run *r)
{
	attached_loop(r, attached_epoll_sleep);
}

#ifdef XB_HAVE_LIBURING
static int attached_uring_setup(struct wake_run *r, int me)
{
	int err;

	if (me == 0)
		return attached_up(r);
	err = ring_up(r, me, 0);
	if (err)
		return err;
	err = attach_self(r);
	if (err)
		return err;
	return poll_arm_fd(r, me, xc_worker_fd());
}

/*
 * Wait in the ring for the multishot poll of the worker's eventfd: peek first, enter the
 * kernel only when nothing is there, then take every completion there is (a kick whose
 * completion came after the loop had woken for other reasons is one of them).
 */
static void attached_uring_sleep(struct wake_run *r)
{
	struct io_uring *ring = &r->side[1].ring;
	struct io_uring_cqe *cqe;
	unsigned head, seen = 0;
	bool rearm = false;
	int err = 0;

	if (io_uring_peek_cqe(ring, &cqe)) {
		do {
			err = io_uring_wait_cqe(ring, &cqe);
			count_try(r, 1, err == -EINTR);
		} while (err == -EINTR);
		if (err) {
			fail(r, -err);
			return;
		}
	}
	io_uring_for_each_cqe(ring, head, cqe) {
		if (cqe->res < 0 && !err)
			err = cqe->res;
		if (!(cqe->flags & IORING_CQE_F_MORE))
			rearm = true;
		seen++;
	}
	io_uring_cq_advance(ring, seen);
	if (err)
		fail(r, -err);
	else if (rearm && poll_arm_fd(r, 1, xc_worker_fd()))
		fail(r, EIO);
}

static void attached_uring_loop(struct wake_run *r)
{
	attached_loop(r, attached_uring_sleep);
}

#define ATTACHED_URING_ROW(nm, wh)                                                               \
	{.name = nm, .what = wh, .absent = uring_poll_absent, .setup = attached_uring_setup,    \
	 .teardown = attached_teardown, .wake = xcall_wake, .wait = nothing, .synchronous = true, \
	 .loop = attached_uring_loop, .counts = xcall_counts}
#else
#define ATTACHED_URING_ROW(nm, wh) {.name = nm, .what = wh, .absent = uring_none}
#endif

/* ---- user IPIs ---- */

static const char *uintr_absent(void)
{
	static char why[160];
	char line[4096];
	bool flag = false;
	FILE *f = fopen("/proc/cpuinfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "flags", 5)) {
			flag = strstr(line, " uintr") != NULL;
			break;
		}
	if (f)
		fclose(f);
	snprintf(why, sizeof(why), "%s",
		 flag ? "the CPU has UINTR; mainline Linux has no syscalls for it"
		      : "this CPU has no UINTR (Intel Sapphire Rapids and later)");
	return why;
}

/* ---- the table ---- (every reason fits a record's 63-character string) */

static const char no_park_spin[] = "the target spins in user space: it never sleeps";
static const char no_park_membarrier[] = "membarrier IPIs only CPUs running our threads, not parked ones";

const struct wake_mech wake_mechs[] = {
	{.name = "spin", .what = "polls a line (the limit)", .setup = spin_setup, .teardown = nothing,
	 .wake = spin_wake, .wait = spin_wait, .no_state = {[WS_PARKED] = no_park_spin}},
	{.name = "futex", .what = "FUTEX_WAIT; the waker always FUTEX_WAKEs", .setup = spin_setup,
	 .teardown = nothing, .wake = futex_wake_side, .wait = futex_wait_side},
	{.name = "eventfd", .what = "blocking read of an eventfd", .setup = eventfd_setup,
	 .teardown = fd_teardown, .wake = eventfd_wake, .wait = eventfd_drain},
	{.name = "epoll", .what = "epoll_wait on an eventfd, then reads it (Seastar, Glommio)",
	 .setup = epoll_setup, .teardown = fd_teardown, .wake = eventfd_wake, .wait = epoll_wait_side},
	{.name = "pipe", .what = "blocking read of a pipe", .setup = pipe_setup, .teardown = fd_teardown,
	 .wake = pipe_wake, .wait = pipe_wait},
	URING_ROW("uring-poll", "io_uring multishot poll of an eventfd, then reads it", uring_poll_absent,
		  uring_poll_setup, eventfd_wake, uring_poll_wait),
	URING_ROW("uring-msg", "io_uring: a MSG_RING from the waker's ring", uring_msg_absent,
		  uring_msg_setup, uring_msg_wake, uring_msg_wait),
	URING_ROW("uring-msg-defer", "io_uring with SINGLE_ISSUER | DEFER_TASKRUN: a MSG_RING",
		  uring_msg_defer_absent, uring_msg_defer_setup, uring_msg_wake, uring_msg_wait),
	URING_ROW("uring-futex", "io_uring FUTEX_WAIT; the waker FUTEX_WAKEs", uring_futex_absent,
		  uring_futex_setup, futex_wake_side, uring_futex_wait),
	{.name = "signal", .what = "sigwaitinfo; the waker tgkills", .setup = sigwait_setup,
	 .teardown = sigwait_teardown, .wake = sigwait_wake, .wait = sigwait_wait},
	{.name = "signal-handler", .what = "spins; a tgkill runs its handler (reply: a line)",
	 .setup = handler_setup, .teardown = handler_teardown, .wake = handler_wake, .wait = handler_wait,
	 .no_state = {[WS_PARKED] = no_park_spin}},
	{.name = "membarrier", .what = "spins; membarrier(PRIVATE_EXPEDITED_RSEQ, CPU) IPIs it",
	 .absent = membarrier_absent, .setup = spin_setup, .teardown = nothing, .wake = membarrier_wake,
	 .wait = nothing, .synchronous = true, .no_wake_time = true, .presence = true,
	 .no_state = {[WS_PARKED] = no_park_membarrier}},
	{.name = "libxcall-sleeping", .what = "a libxcall worker with no poll window; a waiting call",
	 .setup = xcall_sleeping_setup, .teardown = xcall_teardown, .wake = xcall_wake, .wait = nothing,
	 .synchronous = true, .counts = xcall_counts},
	{.name = "libxcall-polling", .what = "a libxcall worker polling; a waiting call",
	 .setup = xcall_polling_setup, .teardown = xcall_teardown, .wake = xcall_wake, .wait = nothing,
	 .synchronous = true, .counts = xcall_counts},
	{.name = "libxcall-attached-epoll", .what = "an attached thread asleep in epoll_wait; a waiting call",
	 .setup = attached_epoll_setup, .teardown = attached_teardown, .wake = xcall_wake, .wait = nothing,
	 .synchronous = true, .loop = attached_epoll_loop, .counts = xcall_counts},
	ATTACHED_URING_ROW("libxcall-attached-uring",
			   "an attached thread asleep in io_uring (poll); a waiting call"),
	{.name = "uintr", .what = "user IPIs (SENDUIPI)", .absent = uintr_absent},
};
const int wake_nmechs = (int)(sizeof(wake_mechs) / sizeof(wake_mechs[0]));
