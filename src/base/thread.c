// SPDX-License-Identifier: MIT
/*
 * thread.c - a thread's own libxcall state: the inside-libxcall word that
 * guards against re-entry from signal handlers (thread.h), the one exit
 * hook that releases what a thread holds, the signal mask libxcall's
 * own threads start with, and another thread as the OS sees it (for the
 * reports of one that does not answer: stuck.c, bringup.c).
 *
 * Exit: one pthread key, created when the library loads, so that its
 * destructor runs the releases in a fixed order of ours (enum
 * xc_exit_slot, thread.h), each named at load by the file that holds the
 * resource (xc_thread_exit_hook): this file, at the bottom, calls none of
 * them by name. A key of the application's, created before or after, runs
 * before or after all of them, never between. A destructor that runs after
 * ours and calls libxcall adopts a pool afresh, and the key, set again,
 * releases it in the next round of destructors.
 *
 * Setting the key is the last step of a thread's first call, which a
 * signal handler may make (thread.h). glibc stores a key below 32
 * (PTHREAD_KEY_2NDLEVEL_SIZE) in the thread's descriptor with two plain
 * stores and no allocation; a constructor's key is among a process's first.
 */
#include "base/internal.h"
#include "base/thread.h"
#include "base/inflight.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* NEW: a thread's first entry lists it (inflight.c) */
__xc_tls struct xc_tls_state xc_tls = { .inside = XC_INSIDE_NEW };

static pthread_key_t exit_key;
static bool exit_key_ok;
static __xc_tls bool exit_registered;
/* written by constructors at load, before any thread can exit; then read-only */
static void (*exit_hooks[XC_EXIT_SLOTS])(void);

void xc_thread_exit_hook(enum xc_exit_slot slot, void (*fn)(void))
{
	exit_hooks[slot] = fn;
}

static void thread_exit(void *unused)
{
	exit_registered = false;
	xc_inside_swap(XC_INSIDE_CODE);	/* a handler during the release is refused, as inside any call */
	for (int i = 0; i < XC_EXIT_SLOTS; i++)
		if (exit_hooks[i])
			exit_hooks[i]();
	xc_inside_restore(XC_INSIDE_NEW);	/* unlisted: a destructor's later call lists it again */
}

int xc_enter_slow(int was)
{
	if (was & XC_INSIDE_CODE)
		return -EAGAIN;
	/*
	 * BOOT: a worker's bringup hook. No runtime is up until every hook has
	 * returned, so no call could run; and a hook that a timed-out bringup
	 * left running must not take part in a later runtime, which may have
	 * given its CPU a thread of its own. Read-only entries pass
	 * (xc_enter_reading).
	 */
	if (was & XC_INSIDE_BOOT)
		return -ENXIO;
	if (was & XC_INSIDE_NEW) {
		/* a handler is refused from here, so it cannot list this thread twice */
		xc_inside_store(XC_INSIDE_CODE);
		atomic_signal_fence(memory_order_seq_cst);
		if (!xc_inflight_register()) {
			xc_inside_restore(XC_INSIDE_NEW);
			return -ENOMEM;
		}
		return 0;
	}
	/* FLIGHT: a call from a hook that a call of this thread runs */
	xc_inside_store(was | XC_INSIDE_CODE);
	atomic_signal_fence(memory_order_seq_cst);
	return was;
}

__attribute__((constructor)) static void exit_key_create(void)
{
	exit_key_ok = pthread_key_create(&exit_key, thread_exit) == 0;
}

bool xc_thread_exit_register(void)
{
	if (exit_registered)
		return true;
	if (!exit_key_ok)
		return false;
	exit_registered = true;
	pthread_setspecific(exit_key, &exit_registered);
	return true;
}

/*
 * The signals a libxcall thread blocks, and its urgent handler while it
 * runs: every asynchronous one, so that a process-directed signal always
 * runs the application's handler on one of its own threads, and never in
 * the middle of the urgent handler. Left as the application set them:
 *   - the faults a thread raises by what it executes (SIGSEGV, SIGBUS,
 *     SIGFPE, SIGILL, SIGTRAP, SIGSYS): blocking them would not stop them;
 *   - SIGPIPE and SIGXFSZ: the kernel sends them to the thread whose write
 *     raised them, so they are the call's own, like a fault. A call that
 *     writes to a closed pipe then gets on a worker what it would get on the
 *     application's threads: EPIPE if ignored, the handler if one is set,
 *     the default's exit otherwise; blocked, the signal would stay pending
 *     on the worker for good and the handler would never see it.
 * The urgent signal is blocked too until the worker is ready for it
 * (worker.c unblocks it). glibc keeps its own cancellation and setxid
 * signals out of any mask, so bringup's cancellation of a cpu_init hook
 * still works.
 */
void xc_signals_async(sigset_t *set)
{
	static const int own[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGPIPE, SIGXFSZ };

	sigfillset(set);
	for (unsigned i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		sigdelset(set, own[i]);
}

void *xc_map(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

int xc_thread_create(pthread_t *thread, void *(*fn)(void *), void *arg, size_t stack)
{
	pthread_attr_t attr;
	sigset_t set;
	int err;

	xc_signals_async(&set);
	err = pthread_attr_init(&attr);
	if (err)
		return err;
	if (stack)
		err = pthread_attr_setstacksize(&attr, stack);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
	/* the new thread's mask alone: the creator's stays as it is throughout */
	if (!err)
		err = pthread_attr_setsigmask_np(&attr, &set);
	if (!err)
		err = pthread_create(thread, &attr, fn, arg);
#else
	/* the thread inherits the creator's mask: block around the create, then put it back */
	sigset_t old;

	if (!err) {
		pthread_sigmask(SIG_BLOCK, &set, &old);
		err = pthread_create(thread, &attr, fn, arg);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
#endif
	pthread_attr_destroy(&attr);
	return err;
}

/* @tid's CPU time in ns, brought up to date by the kernel also while it runs; false: unknown. */
bool xc_thread_run_ns(int tid, uint64_t *ns)
{
	/* its thread CPU-time clock, as pthread_getcpuclockid() makes it: ~tid << 3, per thread, sched */
	clockid_t id = (clockid_t)((~(unsigned)tid << 3) | 6u);
	struct timespec ts;

	if (tid <= 0 || clock_gettime(id, &ts))
		return false;
	*ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec + 1;	/* never 0 */
	return true;
}

/* @tid's scheduler state, the letter of /proc/self/task/TID/stat (R, S, D, t, ...); 0: unknown. */
char xc_thread_state(int tid)
{
	char path[64], buf[512];
	const char *p;
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return 0;
	buf[len] = 0;
	p = strrchr(buf, ')');	/* the name in parentheses may hold anything */
	return p && p[1] == ' ' ? p[2] : 0;
}

/* Why a thread that has not run is not running, from its state letter; NULL: it sleeps. */
const char *xc_thread_not_running_why(char state, char *buf, size_t n)
{
	switch (state) {
	case 'R':
		return "runnable, the OS has not scheduled it";
	case 't':
	case 'T':
		return "stopped (a signal or a debugger)";
	case 'D':
		return "in uninterruptible sleep";
	case 'S':
		return NULL;
	case 0:
		return "not running (state unknown)";
	default:
		snprintf(buf, n, "in state %c", state);
		return buf;
	}
}
