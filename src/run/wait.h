/* SPDX-License-Identifier: MIT */
/*
 * wait.h - waiting for a call to complete (wait.c): the first spin inline,
 * the rest, and the worker's share of any wait
 */
#ifndef XC_WAIT_H
#define XC_WAIT_H

#include "base/internal.h"
#include "proto/wake.h"
#include "proto/completion.h"
#include "proto/pool.h"

/*
 * xc_cpu.lock_wait: a worker waiting for the hotplug lock (cpu/hotplug.c,
 * lock_spin), and the word by which a deadlock look (wait.c) makes it give up.
 * The word is a spin's token beside its state (XC_LOCK_*): every serving wait
 * of hotplug.c takes a token of its own, its thread's next (a multiple of
 * XC_LOCK_TOKEN, counted by that thread only), so a look that read one spin's
 * word refuses that spin, and only while it is the one spinning. Tokens grow
 * as the waits begin: a wait with a later token began after one with an
 * earlier token (modulo 2^32, compared as xc_lock_token_since does).
 */
enum { XC_LOCK_NONE, XC_LOCK_SPIN, XC_LOCK_REFUSED };
#define XC_LOCK_STATE 3u	/* the state's bits of lock_wait */
#define XC_LOCK_TOKEN 4u	/* one token's step: the bits above the state */

/* Whether token @t was taken at or after token @since, by the same thread (tokens wrap). */
static inline bool xc_lock_token_since(uint32_t t, uint32_t since)
{
	return t - since < 0x80000000u;
}

/*
 * xc_cpu.served_empty: how many serves of its hotplug waits found nothing
 * (high half), and the token of the wait whose serve was the last of them
 * (low half): that wait lies above every call the look proves up the stack.
 */
#define XC_EMPTY_COUNT(word) ((uint32_t)((word) >> 32))
#define XC_EMPTY_TOKEN(word) ((uint32_t)(word))

/*
 * This thread holds the hotplug lock: a hotplug operation of its own is
 * under way further up its stack, serving calls while it waits (an
 * offline's wait, a detach's drain). A hotplug call from one of those calls
 * would wait for its own thread: it gets -EDEADLK instead. Set by hotplug.c,
 * and by attach.c and fork.c, which take the lock by themselves; read in
 * place by a wait's deadlock look.
 */
extern __xc_tls bool xc_hotplug_held;

static inline void xc_hotplug_hold(bool on)
{
	xc_hotplug_held = on;
}

static inline bool xc_hotplug_holding(void)
{
	return xc_hotplug_held;
}

/* What a waiting caller waits for: named in stuck reports. */
struct xc_waitinfo {
	xc_func_t fn;
	void *arg;
	const int *cpus;
	int ncpus;
};


/* How often a worker blocked in a wait looks whether an offline request for it deadlocks (wait.c). */
#define XC_DEADLOCK_LOOK_NS 1000000L
#define XC_DEADLOCK_LOOK_LOCK_NS 50000L	/* while a worker it waits on waits for the hotplug lock */

/* Whether completion word @w is done: no count left (@busy 0), or the @busy bit clear. */
static inline bool xc_completion_word_done(uint32_t w, uint32_t busy)
{
	return !(w & (busy ? busy : XC_DONE_COUNT));
}

/* Every waiter first spins this often without reading the clock. */
#define XC_WAITER_FAST_SPINS 256

/*
 * The first phase of every wait: a short spin without the clock, inline
 * because most calls complete in it, and on the path from seeing a
 * completion back to the caller every call and every setup lengthens the
 * round trip. A worker that finds its own calls pending stops, to run them.
 * True if done.
 */
static inline bool xc_completion_spin(struct xc__completion *s, uint32_t busy)
{
	struct xc_cpu *self = xc_self;

	for (int i = 0; i < XC_WAITER_FAST_SPINS; i++) {
		/* seq_cst: acquires the callee's effects; a W2 load when the waiter is a worker */
		if (xc_completion_word_done(atomic_load_explicit(&s->word, memory_order_seq_cst), busy))
			return true;
		if (self && xc_calls_pending(self))
			break;
		xc_cpu_relax();
	}
	return false;
}

void xc_completion_wait_rest(struct xc__completion *s, uint32_t busy, const struct xc_waitinfo *wi);
int xc_completion_wait_until(struct xc__completion *s, uint64_t deadline_ns);
/* A worker's share of any wait: run its own CPU's calls (0 if not a worker); how many ran. */
int xc_wait_serve(void);
/* The calling thread, @c's worker or attached thread: where its stack's last quarter begins. */
void xc_serve_floor_set(struct xc_cpu *c);
/* One step of a wait that nothing announces (a descriptor back, a lock): serve, then yield. */
void xc_wait_step(void);
/* The owner of full ring @r waits for room: 0, or xc_ring_room()'s error. */
int xc_ring_wait_room(struct xc_ring *r);
struct xc_call *xc_pool_wait(void);

/* A descriptor of the thread's pool, waited for while all are in flight; NULL: none (-ENOMEM). */
static inline struct xc_call *xc_pool_get(void)
{
	struct xc_call *call = xc_pool_try();

	return xc_likely(call) ? call : xc_pool_wait();
}

/*
 * Wait for a call to complete, reporting it if it gets stuck: until the
 * count is zero (@busy 0), or until the word no longer has the @busy bit
 * (slot.c). After the spin, the rest of the wait is wait.c's.
 */
static inline void xc_completion_wait(struct xc__completion *s, uint32_t busy, const struct xc_waitinfo *wi)
{
	if (!xc_completion_spin(s, busy))
		xc_completion_wait_rest(s, busy, wi);
}

#endif /* XC_WAIT_H */
