/* SPDX-License-Identifier: MIT */
/*
 * thread.h - a thread's own libxcall state (thread.c): whether it runs
 * libxcall's code right now, the guard every public function passes, and
 * what the thread leaves behind when it exits; and another thread as the
 * OS sees it.
 *
 * Signal handlers: a handler that interrupts a thread inside libxcall and
 * calls it again would find the thread's pool, trace ring or slot claim in
 * the middle of an update. So every public function that touches shared
 * state enters through xc_enter(), which refuses with -EAGAIN while the
 * same thread is already inside, and leaves through xc_leave(). Around
 * the application's own code run from inside (a call's or work item's
 * function, a cond or cpu_init hook) the word's CODE bit is cleared and put
 * back (the bracket, xc_user_in / xc_user_out): there the thread may call libxcall
 * again, nested, as it always could, and so may a handler that interrupts
 * it, since libxcall's state is then what a nested call would find.
 *
 * The word also says whether a call of this thread is in flight, for
 * xc_exit(), which waits until no other thread's is (inflight.c): CODE, or
 * FLIGHT in a hook that a call runs. A thread's word starts NEW, so that
 * its first entry takes the slow path, which lists it. The entering store
 * is relaxed and the leaving one a release; inflight.c argues both.
 *
 * The word is xc_tls.inside (internal.h), beside the thread's other state.
 * Only its thread writes it (a handler runs on the thread it interrupts),
 * with atomic stores and signal fences, so that the compiler keeps the mark
 * before the first access it guards and the clear after the last; xc_exit()
 * reads it from another thread.
 */
#ifndef XC_THREAD_H
#define XC_THREAD_H

#include "base/internal.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>

/* The inside word's bits (xc_tls.inside). */
#define XC_INSIDE_CODE   1	/* in libxcall's code: a handler's call is refused */
#define XC_INSIDE_FLIGHT 2	/* in a hook run from a call: the call is in flight (inflight.c) */
#define XC_INSIDE_NEW    4	/* not listed yet (inflight.c): the thread's first entry lists it */
#define XC_INSIDE_BOOT   8	/* in a worker's bringup cpu_init hook: calls are refused (thread.c) */

/* relaxed: only this thread writes the word; what needs an order says so */
static inline void xc_inside_store(int v)
{
	__atomic_store_n(&xc_tls.inside, v, __ATOMIC_RELAXED);
}

/* The entry past a non-zero word: -EAGAIN, or listing a new thread, or a hook's nested call. */
int xc_enter_slow(int was);

/* Enter libxcall: what xc_leave() puts back (>= 0), or -EAGAIN on re-entry, -ENOMEM. */
static inline int xc_enter(void)
{
	int was = xc_tls.inside;

	if (xc_unlikely(was))
		return xc_enter_slow(was);
	xc_inside_store(XC_INSIDE_CODE);
	/* a handler on this thread sees the mark before anything it guards is touched */
	atomic_signal_fence(memory_order_seq_cst);
	return 0;
}

/*
 * A read-only entry (xc_online_mask, xc_cpu_max): nested in a call of the
 * same thread, a handler's included, it only reads what that call keeps.
 */
static inline int xc_enter_reading(void)
{
	int was = xc_tls.inside;

	if (xc_likely(!was) || (was & XC_INSIDE_NEW))
		return xc_enter();
	return was;
}

static inline void xc_leave(int was)
{
	/* everything guarded is done before a handler can read the clear */
	atomic_signal_fence(memory_order_seq_cst);
	/* release: the call's reads of the runtime before xc_exit() sees us out (inflight.c) */
	__atomic_store_n(&xc_tls.inside, was, __ATOMIC_RELEASE);
}

/* Run @call (an expression giving an int) inside libxcall, or -EAGAIN on re-entry. */
#define XC_GUARDED(call) XC__ENTERED(xc_enter(), call)
/* The same for a read-only @call, which a nested read may make too. */
#define XC_READING(call) XC__ENTERED(xc_enter_reading(), call)
#define XC__ENTERED(entry, call) __extension__({	\
	int xc_w_ = (entry), xc_r_ = xc_w_;		\
	if (xc_likely(xc_w_ >= 0)) {			\
		xc_r_ = (call);				\
		xc_leave(xc_w_);			\
	}						\
	xc_r_; })

/*
 * Mark this thread inside (1) or outside (0) libxcall for a stretch, and
 * put back what was there after it: the fences keep the stretch's accesses
 * between the two stores.
 */
static inline int xc_inside_swap(int now)
{
	int was = xc_tls.inside;

	atomic_signal_fence(memory_order_seq_cst);
	xc_inside_store(now);
	atomic_signal_fence(memory_order_seq_cst);
	return was;
}

static inline void xc_inside_restore(int was)
{
	atomic_signal_fence(memory_order_seq_cst);
	xc_inside_store(was);
	atomic_signal_fence(memory_order_seq_cst);
}

/*
 * The one bracket around the application's code that libxcall runs: a
 * call's function, an async call's callback, a work item, a hook. Every
 * path that runs such code enters with xc_user_in() and leaves with
 * xc_user_out(), inline, @kind a constant:
 *   XC_USER_CALL    a call's function or callback: counted in in_call, so
 *                   the urgent handler defers until it returns (urgent.c);
 *   XC_USER_URGENT  an urgent call's function: counted, and marked
 *                   (in_urgent_fn: its rules, xc_urgent_rules());
 *   XC_USER_WORK    a work item's function: neither (urgent calls may
 *                   interrupt it, as an interrupt does a kernel task);
 *   XC_USER_HOOK    a hook a call runs on the calling thread (a cond
 *                   callback, an attaching thread's cpu_init): the call
 *                   stays in flight (XC_INSIDE_FLIGHT);
 *   XC_USER_BOOT    a worker's bringup cpu_init hook: it may read, never
 *                   call (XC_INSIDE_BOOT).
 * The count comes first and the mark inside it, and the way out puts back
 * the mark it found. The urgent handler runs only where in_call is 0, so it
 * never lands between a mark and its count, and what it runs leaves the
 * mark as it was: an urgent function stays marked to its end, wherever it
 * runs and whatever interrupts it. The count and the mark are volatile, so
 * the compiler keeps their order; the fences of xc_inside_swap keep the
 * application's code between the inside word's stores.
 * @flat (a constant): the caller knows the thread is in libxcall's code
 * with nothing counted (the idle poll's slot run, slot.c): the words are
 * stored, not read and put back.
 */
enum xc_user_kind { XC_USER_CALL, XC_USER_URGENT, XC_USER_WORK, XC_USER_HOOK, XC_USER_BOOT };

/* What xc_user_out() puts back. */
struct xc_user_mark {
	int inside;
	uint8_t urgent_fn;
};

static inline __attribute__((always_inline)) struct xc_user_mark xc_user_in(enum xc_user_kind kind,
									      bool flat)
{
	struct xc_user_mark m = { XC_INSIDE_CODE, 0 };
	int now = kind == XC_USER_HOOK ? XC_INSIDE_FLIGHT : kind == XC_USER_BOOT ? XC_INSIDE_BOOT : 0;

	if (kind == XC_USER_CALL || kind == XC_USER_URGENT) {
		if (flat)
			xc_tls.in_call = 1;
		else
			xc_tls.in_call++;
	}
	if (kind == XC_USER_URGENT) {
		m.urgent_fn = xc_tls.in_urgent_fn;	/* inside the count: no handler runs from here */
		xc_tls.in_urgent_fn = 1;
	}
	if (flat) {
		atomic_signal_fence(memory_order_seq_cst);
		xc_inside_store(now);
		atomic_signal_fence(memory_order_seq_cst);
	} else {
		m.inside = xc_inside_swap(now);
	}
	return m;
}

static inline __attribute__((always_inline)) void xc_user_out(enum xc_user_kind kind, bool flat,
							     struct xc_user_mark m)
{
	xc_inside_restore(m.inside);
	if (kind == XC_USER_URGENT)
		xc_tls.in_urgent_fn = m.urgent_fn;	/* put back, still inside the count */
	if (kind == XC_USER_CALL || kind == XC_USER_URGENT) {
		if (flat)
			xc_tls.in_call = 0;
		else
			xc_tls.in_call--;
	}
}

/* The bracket around one function of the application's, with nothing between. */
static inline __attribute__((always_inline)) void xc_user_run(enum xc_user_kind kind, xc_func_t fn,
							     void *arg)
{
	struct xc_user_mark m = xc_user_in(kind, false);

	fn(arg);
	xc_user_out(kind, false, m);
}

/* Anonymous zeroed memory from mmap: async-signal-safe, unlike malloc; NULL on failure. */
void *xc_map(size_t size);

/*
 * The signals libxcall blocks in its own threads and while its urgent
 * handler runs: every asynchronous one (thread.c says which are left).
 */
void xc_signals_async(sigset_t *set);

/*
 * This thread holds something of libxcall's (a pool, a trace ring, an
 * attached CPU, its listing): release it at exit. False if the exit hook
 * could not be made when the library loaded.
 */
bool xc_thread_exit_register(void);

/*
 * What a thread's exit releases, in this order: an attached thread is
 * detached first (it drains its CPU, which may run calls that need its
 * rings, trace ring and pool), then its rings are handed back, then its
 * trace ring and its pool; it leaves the in-flight list last.
 */
enum xc_exit_slot { XC_EXIT_ATTACH, XC_EXIT_RINGS, XC_EXIT_TRACE, XC_EXIT_POOL, XC_EXIT_INFLIGHT,
		    XC_EXIT_SLOTS };

/* The file that holds the resource names its release, once, from a constructor. */
void xc_thread_exit_hook(enum xc_exit_slot slot, void (*fn)(void));

/*
 * pthread_create with the asynchronous signals blocked in the new thread from
 * its first instruction; @stack bytes of stack, 0: the process's default.
 */
int xc_thread_create(pthread_t *thread, void *(*fn)(void *), void *arg, size_t stack);

/* Another thread of the process as the OS sees it, by its id: for reports (thread.c). */
bool xc_thread_run_ns(int tid, uint64_t *ns);
char xc_thread_state(int tid);
const char *xc_thread_not_running_why(char state, char *buf, size_t n);

#endif /* XC_THREAD_H */
