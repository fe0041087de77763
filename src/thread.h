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
 * function, a cond or cpu_init hook) the word is cleared and put back
 * (xc_user_begin / xc_user_end): there the thread may call libxcall again,
 * nested, as it always could, and so may a handler that interrupts it,
 * since libxcall's state is then what a nested call would find. One path
 * enters late: the waiting call's straight path (slot.c) marks itself only
 * at its kick, as up to its publication it updates nothing a nested call
 * reads (the claim it holds only turns such a call to the queue).
 *
 * The word is xc_tls.inside (internal.h), beside the thread's other state.
 *
 * The word is the thread's alone (a handler runs on the thread it
 * interrupts): no atomics, only signal fences, so that the compiler keeps
 * the mark before the first access it guards and the clear after the last.
 */
#ifndef XC_THREAD_H
#define XC_THREAD_H

#include "internal.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>


static inline int xc_enter(void)
{
	if (xc_unlikely(xc_inside))
		return -EAGAIN;
	xc_inside = 1;
	/* a handler on this thread sees the mark before anything it guards is touched */
	atomic_signal_fence(memory_order_seq_cst);
	return 0;
}

static inline void xc_leave(void)
{
	/* everything guarded is done before a handler can read the clear */
	atomic_signal_fence(memory_order_seq_cst);
	xc_inside = 0;
}

/* Run @call (an expression giving an int) inside libxcall, or -EAGAIN on re-entry. */
#define XC_GUARDED(call) __extension__({		\
	int xc_r_ = xc_enter();				\
	if (!xc_r_) {					\
		xc_r_ = (call);				\
		xc_leave();				\
	}						\
	xc_r_; })

/*
 * Mark this thread inside (1) or outside (0) libxcall for a stretch, and
 * put back what was there after it: the fences keep the stretch's accesses
 * between the two stores.
 */
static inline int xc_inside_swap(int now)
{
	int was = xc_inside;

	atomic_signal_fence(memory_order_seq_cst);
	xc_inside = now;
	atomic_signal_fence(memory_order_seq_cst);
	return was;
}

static inline void xc_inside_restore(int was)
{
	atomic_signal_fence(memory_order_seq_cst);
	xc_inside = was;
	atomic_signal_fence(memory_order_seq_cst);
}

/* Around the application's own code run from inside libxcall; returns what to put back. */
static inline int xc_user_begin(void)
{
	return xc_inside_swap(0);
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

/* This thread holds something of libxcall's (a pool, a trace ring, an attached CPU): release it at exit. */
void xc_thread_exit_register(void);

/* pthread_create with the asynchronous signals blocked in the new thread from its first instruction. */
int xc_thread_create(pthread_t *thread, void *(*fn)(void *), void *arg);

#endif /* XC_THREAD_H */
