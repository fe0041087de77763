/* SPDX-License-Identifier: MIT */
/*
 * ring.h - per-sender call rings (ring.c): a thread's calls to one CPU go
 * through a single-producer ring of its own, in the order made.
 */
#ifndef XC_RING_H
#define XC_RING_H

#include "base/internal.h"
#include "proto/barrier.h"

#include <errno.h>

/* Entries per ring by default (xc_opts.ring_entries): a sender with this many untaken calls to one CPU waits. */
#define XC_RING_ENTRIES 256u

/*
 * Fenced calls riding one link before its owner marks the ring (F1) and
 * the calls after skip R1': a membarrier costs its worker a system call and
 * each running thread of the process an IPI, microseconds (tens in a VM);
 * R1' tens of nanoseconds. Below a run of this many a link's fences cost
 * less than the membarrier they would spare (wake.c, "Owners without a fence").
 */
#define XC_RING_FENCED_RUN 32u

/* struct xc_ring.state */
enum { XC_RING_IDLE = 0, XC_RING_LINKED = 1 };

/*
 * An entry is a nowait call's fn and arg, four to a line, as in a plain
 * ring. A call with something to complete after its function names it
 * through a marker in fn: XC_RING_WAITED, arg a struct xc_ring_waited on the
 * waiter's stack (it stays there until the completion); XC_RING_ASYNC, arg
 * the caller's async descriptor (fn and arg in it, its in-flight bit to clear).
 * Two more markers settle a refused doorbell's entry (ring.c, "Closing"):
 * XC_RING_TAKEN, written by a close that took the entry to run it, and
 * XC_RING_RETRACTED, written by the owner that took it back unrun. A
 * worker below its serve floor writes XC_RING_REFUSED over a waiting
 * call's entry that it refuses with -ELOOP (ring.c, "Below the floor").
 * Runs step over RETRACTED and REFUSED alike: the tombstones.
 */
struct xc_ring_entry {
	_Atomic(xc_func_t) fn;	/* atomic: a close and a refused owner exchange it */
	void *arg;
};

struct xc_ring_waited {
	xc_func_t fn;
	void *arg;
	struct xc__completion *done;
	/*
	 * -ELOOP if a target refused the call, else 0. Atomic: a many call's
	 * targets share one record. Stored before the refusing target's
	 * completion, which publishes it (ring.c, "Below the floor").
	 */
	_Atomic int err;
};

/*
 * The markers are small numbers, at which no function lives: a run tells
 * every one of them from a function to call by one compare (ring.c).
 */
#define XC_RING_WAITED    ((xc_func_t)(uintptr_t)1)
#define XC_RING_ASYNC     ((xc_func_t)(uintptr_t)2)
#define XC_RING_TAKEN     ((xc_func_t)(uintptr_t)3)
#define XC_RING_RETRACTED ((xc_func_t)(uintptr_t)4)
#define XC_RING_REFUSED   ((xc_func_t)(uintptr_t)5)
#define XC_RING_MARKERS   6u	/* and 0, which no call puts */

static inline bool xc_ring_marker(xc_func_t fn)
{
	return (uintptr_t)fn < XC_RING_MARKERS;
}

/* An entry that runs step over: taken back by its owner, or refused below the floor. */
static inline bool xc_ring_tombstone(xc_func_t fn)
{
	return fn == XC_RING_RETRACTED || fn == XC_RING_REFUSED;
}

/* Trace data of an entry, written only while tracing, beside the entries. */
struct xc_ring_meta {
	uint32_t flow;		/* trace flow id */
	int32_t from;		/* the sender's CPU, -1: not a worker */
};

/*
 * One (sending thread, target CPU) pair. Three lines, each in a 128-byte
 * pair of its own (XC_PAIR), as are the entries: the owner's, which the
 * target's worker only reads (head) except when it unlinks (state); the
 * worker's, which the owner reads only to find room or an empty ring; and
 * the ring's place in the registry. In one pair, head and tail would move
 * together on CPUs that move pairs: a line more per call.
 */
struct xc_ring {
	/* the owner's line */
	_Atomic uint32_t head __xc_pair_aligned;	/* entries published (release) */
	_Atomic uint32_t state;			/* XC_RING_*: see ring.c */
	_Atomic uint32_t unfenced;		/* owner: calls skip R1' (wake.c, "Owners without a fence") */
	uint32_t fenced_rides;			/* owner: fenced calls that rode since the last link (F1 waits for a run) */
	uint32_t tail_seen;			/* owner: a tail read earlier, never ahead of tail */
	uint32_t size;				/* entries, a power of two; fixed when made */
	_Atomic uint64_t rode;			/* owner: calls that found the ring linked (kicks_coalesced) */

	/* the target's worker's line */
	_Atomic uint32_t tail __xc_pair_aligned;	/* entries taken (release: their slots are free) */
	uint32_t head_seen;			/* worker: a head read earlier */
	uint32_t mask;				/* size - 1, on the worker's line */
	bool held;				/* worker: on its held list */
	bool dropped;				/* worker: on its dropped list */
	uint32_t looked;			/* worker: head at its last look below the serve floor (ring.c) */
	struct xc_ring *held_next;		/* worker: the held list */
	struct xc_ring *dropped_next;		/* worker: the dropped list */
	struct xc__link link;			/* on the target's callq while linked and not held */

	/* registry: written once before the ring is published, then read-only but owned */
	struct xc_cpu *target __xc_pair_aligned;
	struct xc_ring *next;			/* the target CPU's rings, newest first */
	_Atomic bool owned;			/* a live thread sends through it */

	struct xc_ring_meta *meta;		/* size of them, after the entries */
	struct xc_ring_entry e[] __xc_pair_aligned;
};

struct xc_ring_table {
	unsigned generation;			/* the xc_init it belongs to */
	struct xc_ring *ring[XC_MAX_CPUS];
};

/*
 * A thread's rings, and a worker's second set for calls made inside its
 * urgent signal handler, which may interrupt the thread in the middle of
 * an update of its own rings (the handler never nests: urgent.c).
 */
extern __xc_tls struct xc_ring_table *xc_my_rings[2];


/* The calling thread's ring to @c, or NULL with -ENOMEM in *err (ring.c). */
struct xc_ring *xc_ring_get_slow(struct xc_cpu *c);

static inline struct xc_ring *xc_ring_get(struct xc_cpu *c)
{
	struct xc_ring_table *t = xc_my_rings[xc_in_urgent];
	struct xc_ring *r;

	if (xc_likely(t && t->generation == xc_rt.generation && (r = t->ring[c->life.cpu])))
		return r;
	return xc_ring_get_slow(c);
}

/*
 * The calling thread's ring to @cpu from its set @set (xc_in_urgent) if it
 * has one, without making one. By the CPU's number, not its struct: the
 * number is the caller's already, and cpu sits on the target's cold lines.
 */
static inline struct xc_ring *xc_ring_peek_in(int cpu, int set)
{
	struct xc_ring_table *t = xc_my_rings[set];

	return t && t->generation == xc_rt.generation ? t->ring[cpu] : NULL;
}

/* Owner: whether every call it put in @r has been taken by the worker. */
static inline bool xc_ring_empty(struct xc_ring *r)
{
	/* relaxed: only the owner writes head */
	uint32_t h = atomic_load_explicit(&r->head, memory_order_relaxed);

	if (r->tail_seen == h)
		return true;
	/* acquire: the worker's reads of the taken entries come before our reuse */
	r->tail_seen = atomic_load_explicit(&r->tail, memory_order_acquire);
	return r->tail_seen == h;
}

int xc_ring_room(struct xc_ring *r);

/* Owner: whether @r, its head @h, has room for one more entry, without waiting for it. */
static inline bool xc_ring_has_room(struct xc_ring *r, uint32_t h)
{
	if (xc_likely(h - r->tail_seen != r->size))
		return true;
	/* acquire: the worker's reads of the taken entries come before our reuse */
	r->tail_seen = atomic_load_explicit(&r->tail, memory_order_acquire);
	return h - r->tail_seen != r->size;
}

/* Owner, with room for entry @h (head): write it and publish it; returns @h. */
static inline uint32_t xc_ring_push(struct xc_ring *r, uint32_t h, xc_func_t fn, void *arg, uint32_t flow)
{
	struct xc_ring_entry *e = &r->e[h & (r->size - 1)];

	/* relaxed: published by the head's release below */
	atomic_store_explicit(&e->fn, fn, memory_order_relaxed);
	e->arg = arg;
	if (xc_unlikely(flow)) {
		r->meta[h & (r->size - 1)].flow = flow;
		/* the sender's CPU, looked up only while tracing */
		r->meta[h & (r->size - 1)].from = xc_self ? xc_self->life.cpu : -1;
	}
	/* release: the entry's contents before the worker's acquire of head */
	atomic_store_explicit(&r->head, h + 1, memory_order_release);
	return h;
}


int xc_ring_doorbell_slow(struct xc_cpu *c, struct xc_ring *r, uint32_t idx);

/*
 * Owner, after ring_put(): make sure the worker will look at @r. A
 * linked ring is already its worker's to run (loads of the owner's own
 * line and of xc_ring_asym): xc_ring_rides() says so, true. An idle one is
 * linked into the worker's callq (xc_ring_doorbell_slow: one CAS and one
 * push, a kick if the queue was empty). xc_ring_doorbell() does both: 0,
 * or -ENXIO when the CPU is closed and entry @idx was taken back unrun.
 * A marked ring's calls skip R1' while xc_ring_asym allows it; the first
 * to find the flag false clears the mark (C') and fences (wake.c, "Owners
 * without a fence").
 */
static inline bool xc_ring_rides_when(struct xc_ring *r, bool coalesce)
{
	/* relaxed: only the owner writes unfenced */
	uint32_t unfenced = atomic_load_explicit(&r->unfenced, memory_order_relaxed);
	/* relaxed: a read-mostly flag, either value safe at any moment (barrier.c) */
	bool asym = atomic_load_explicit(&xc_ring_asym, memory_order_relaxed);

	if (xc_likely(unfenced & asym)) {	/* &: both 0 or 1, one test */
		/* a worker that unlinks this ring runs a membarrier for R1' (barrier.c) */
		atomic_signal_fence(memory_order_seq_cst);
	} else {
		if (unfenced)
			/* C', release as C: the head stores of the calls that skipped R1' before it (wake.c) */
			atomic_store_explicit(&r->unfenced, 0, memory_order_release);
		else if (asym && ++r->fenced_rides >= XC_RING_FENCED_RUN)
			/* F1, relaxed: the fence below orders it before this call's R2 */
			atomic_store_explicit(&r->unfenced, 1, memory_order_relaxed);
		/* R1': the store-load order the wakeup protocol argues (wake.c) */
		atomic_thread_fence(memory_order_seq_cst);
	}
	/* relaxed: R1' or the worker's membarrier orders it after the head store */
	if (xc_likely(atomic_load_explicit(&r->state, memory_order_relaxed) == XC_RING_LINKED &&
		      coalesce)) {
		xc_stat_inc_own(&r->rode);
		return true;
	}
	return false;
}

/* @coalesce false: XC_ABLATE_COALESCE, a linked ring is kicked all the same. */
static inline bool xc_ring_rides(struct xc_ring *r)
{
	return xc_ring_rides_when(r, !xc_ablated(XC_ABLATE_COALESCE));
}

static inline int xc_ring_doorbell(struct xc_cpu *c, struct xc_ring *r, uint32_t idx)
{
	return xc_ring_rides(r) ? 0 : xc_ring_doorbell_slow(c, r, idx);
}

/*
 * Worker side (ring.c; running the entries is run/ring_run.c's). The looks
 * that find nothing to do are inline here, so that a serve or an idle wait
 * with nothing in the rings calls nothing in ring.c.
 */
int xc_rings_hold(struct xc_cpu *c, struct xc__link *l);
bool xc_rings_release_held(struct xc_cpu *c);

/* Take the doorbells: hold the rings linked since the last look; how many. */
static inline int xc_ring_take_doorbells(struct xc_cpu *c)
{
	struct xc__link *l = xc_llist_take(&c->mbox.callq);

	return l ? xc_rings_hold(c, l) : 0;
}

/* U1-U3 before a sleep (ring.c); true: do not sleep yet. None held, none to release. */
static inline bool xc_rings_release(struct xc_cpu *c)
{
	return c->worker.rings_held && xc_rings_release_held(c);
}
struct xc_ring *xc_rings_close_unlink(struct xc_cpu *c);
struct xc_ring *xc_rings_dropped_pop(struct xc_cpu *c);
uint64_t xc_rings_rode(struct xc_cpu *c);
bool xc_rings_queued(struct xc_cpu *c);
struct xc_ring *xc_rings_of(int cpu);

static inline bool xc_ring_has_calls(struct xc_ring *r)
{
	/* relaxed: a look; ring_run's acquire orders the entries */
	return atomic_load_explicit(&r->tail, memory_order_relaxed) !=
	       atomic_load_explicit(&r->head, memory_order_relaxed);
}

/*
 * The idle poll's look (ready_rings, worker.c): the first held ring with
 * calls, beginning at rings_look and going round once; NULL: none. Called
 * with rings held, where rings_look is one of them (ring.c keeps it so).
 */
static inline struct xc_ring *xc_rings_next_pending(struct xc_cpu *c)
{
	struct xc_ring *from = c->worker.rings_look, *r = from;

#ifdef XC_SANITIZED
	if (!from || !from->held)
		__builtin_trap();	/* the tests' builds check what ring.c keeps */
#endif
	do {
		if (xc_ring_has_calls(r))
			goto found;
	} while ((r = r->held_next));
	for (r = c->worker.rings_held; r != from; r = r->held_next)
		if (xc_ring_has_calls(r))
			goto found;
	return NULL;
found:
	if (!r)
		__builtin_unreachable();	/* a ring: the caller's test of it goes */
	return r;
}

/*
 * Below the serve floor: whether a held ring took entries since the last
 * xc_rings_refuse_waited() looked at it (a waiting call it must refuse).
 */
static inline bool xc_rings_unlooked(struct xc_cpu *c)
{
	for (struct xc_ring *r = c->worker.rings_held; r; r = r->held_next)
		/* relaxed: a look; the refusal's own acquire of head orders the entries */
		if (atomic_load_explicit(&r->head, memory_order_relaxed) != r->looked)
			return true;
	return false;
}

/* Whether a held ring has calls to run. Inline: waiters' spins call nothing (slot.c). */
static inline bool xc_rings_pending(struct xc_cpu *c)
{
	for (struct xc_ring *r = c->worker.rings_held; r; r = r->held_next)
		if (xc_ring_has_calls(r))
			return true;
	return false;
}

/* Thread and process lifecycle (ring.c). */
void xc_ring_thread_exit(void);
void xc_ring_fork_child(void);

#endif /* XC_RING_H */
