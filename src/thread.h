/* SPDX-License-Identifier: MIT */
/*
 * thread.h - a thread's own libxcall state (thread.c): whether it runs
 * libxcall's code right now, the guard every public function passes, and
 * what the thread leaves behind when it exits.
 *
 * Signal handlers: a handler that interrupts a thread inside libxcall and
 * calls it again would find the thread's pool, trace ring or slot claim in
 * the middle of an update. So every public function that touches shared
 * state enters through xc_enter(), which refuses with -EAGAIN while the
 * same thread is already inside, and leaves through xc_leave(). Around
 * the application's own code run from inside (a call's or work item's
 * function, a cond or cpu_init hook) the word's CODE bit is cleared and put
 * back (xc_user_begin / xc_user_end): there the thread may call libxcall
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

#include "internal.h"

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

/* Around the application's own code run from inside libxcall; returns what to put back. */
static inline int xc_user_begin(void)
{
	return xc_inside_swap(0);
}

/*
 * The same around a hook a call runs on the calling thread (a cond
 * callback, an attaching thread's cpu_init): the call stays in flight.
 */
static inline int xc_user_begin_hook(void)
{
	return xc_inside_swap(XC_INSIDE_FLIGHT);
}

/* The same around a worker's bringup cpu_init hook (worker.c): it may read, never call. */
static inline int xc_user_begin_boot(void)
{
	return xc_inside_swap(XC_INSIDE_BOOT);
}

static inline void xc_user_end(int was)
{
	xc_inside_restore(was);
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

/* pthread_create with the asynchronous signals blocked in the new thread from its first instruction. */
int xc_thread_create(pthread_t *thread, void *(*fn)(void *), void *arg);

#endif /* XC_THREAD_H */
