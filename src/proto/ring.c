// SPDX-License-Identifier: MIT
/*
 * ring.c - per-sender call rings: a thread's calls to one CPU go through a
 * single-producer ring owned by that (thread, CPU) pair, so a call in a
 * burst costs the stores of its entry and a release store of the ring's
 * head, and they run in the order made.
 *
 * == Who writes what ==
 *
 *   head, the entries   the owner (the sending thread)
 *   tail                the target's worker, after reading an entry
 *   state IDLE->LINKED  the owner's doorbell CAS, or the worker's re-link CAS
 *   state LINKED->IDLE  the worker (unlink), or the owner after a refusal
 *   an entry's fn       the owner, before publishing it; then by exchange:
 *                       the worker below its serve floor (REFUSED, a
 *                       waiting call's), or once callq is closed, the close
 *                       (TAKEN) or the owner of a refused doorbell (RETRACTED)
 *
 * A linked ring is its worker's to run: it sits on the worker's callq (the
 * doorbell), or on the worker's held list once taken from there, or, between
 * an unlink whose re-link its owner won and that owner's push, on the
 * worker's dropped list (see Closing). An idle ring is on none of them, and
 * holds no untaken entry except those of an owner still ringing the
 * doorbell. Only the winner of an IDLE->LINKED CAS pushes
 * the ring on callq, and the worker sets IDLE only on rings it holds, so a
 * ring is on callq at most once.
 *
 * The doorbell and the release before a sleep are steps of the wakeup
 * protocol (R1-R3 the owner's, U1-U3 and U2' the worker's, F1 and C for
 * owners that skip their fence), argued with the rest of it in wake.c
 * ("A ring's doorbell", "Owners without a fence").
 *
 * == Closing: offline and exit ==
 *
 * The worker closes callq (xc_llist_close), takes every ring that was on it,
 * unlinks all it holds (U1, U2) and runs what it then sees, and runs too the
 * rings it dropped at a U3 whose CAS the owner won (their push, still to
 * come, may be refused, and earlier calls in them returned 0: the model's
 * finding, model/wakeup.pml). An owner whose doorbell push found callq
 * closed cannot tell from the indices whether the close will run its entry
 * (both may see each other, above), and it must not wait to find out: the
 * close may be running a call that waits for this owner, or this owner may
 * be the urgent handler, which serves nothing. So the entry decides, by an
 * exchange of its fn on each side:
 *
 *   close, per entry:  fn = exchange(TAKEN); a tombstone: skip it, else run it
 *   refused owner:     tail past idx: ran, 0 (an ordinary run took it before
 *                        the unlink whose IDLE the doorbell's CAS read);
 *                      else exchange(RETRACTED): read TAKEN: the close runs
 *                        it, 0; read REFUSED: its waiter is completed with
 *                        -ELOOP (below), 0; else taken back, -ENXIO
 *
 * Exactly one exchange reads the call's fn. A retracted entry stays in the
 * ring as a tombstone that every run skips: the owner cannot rewind head
 * under a close that may be reading it. Ordinary runs never meet TAKEN (it
 * is only ever written behind tail). While callq is closed, a full ring gets
 * no room (xc_ring_room refuses the call), so tombstones cannot fill a
 * ring for ever; once the CPU reopens, the owner's next doorbell links the
 * ring, and the worker steps over them.
 *
 * == Two rules ==
 *
 * Every failure found where these paths meet others had one of two shapes,
 * and two rules end them:
 *   - A nowait call waits only for resources it has itself put in flight:
 *     room in its own ring (xc_ring_room) or a descriptor of its own pool
 *     (xc_pool_try); run/wait.c waits for them. It never waits for a target's close: a refused
 *     doorbell is settled above, at once.
 *   - A wait that serves calls holds no half-done operation that a served
 *     call can reach (wait.c, "Serving while waiting"). Here: the wait for
 *     room re-reads head at every pass, and ring_put reads it again
 *     after the room is made.
 *
 * == Lifetime ==
 *
 * Rings live as long as the process, on a push-only registry per CPU id,
 * each with an owned flag claimed by CAS: mmap and no lock, so a thread's
 * first call may come from a signal handler. A thread's rings are released
 * at its exit (thread.c) with whatever they still hold, which its worker
 * runs; the next thread to call that CPU adopts one. Memory per thread:
 * one table (8 KiB) and one ring (xc_opts.ring_entries * 32 bytes + 3
 * lines) per CPU it has called.
 */
#include "base/internal.h"
#include "proto/ring.h"
#include "proto/completion.h"
#include "proto/wake.h"
#include "proto/barrier.h"
#include "base/thread.h"

#include <errno.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

__xc_tls struct xc_ring_table *xc_my_rings[2];

/* Every ring ever made, per target CPU id, newest first. */
static _Atomic(struct xc_ring *) registry[XC_MAX_CPUS];

_Static_assert(sizeof(struct xc_ring_entry) == 16, "four entries a line");

static size_t ring_bytes(uint32_t entries)
{
	return sizeof(struct xc_ring) + entries * (sizeof(struct xc_ring_entry) + sizeof(struct xc_ring_meta));
}

static struct xc_ring *ring_new(struct xc_cpu *c, uint32_t entries)
{
	struct xc_ring *r = xc_map(ring_bytes(entries));
	_Atomic(struct xc_ring *) *list = &registry[c->life.cpu];

	if (!r)
		return NULL;
	/* mmap's pages are zero: indices, state IDLE, held lists empty */
	r->target = c;
	r->size = entries;	/* a power of two: indices wrap at 2^32 with the ring */
	r->mask = entries - 1;
	r->meta = (struct xc_ring_meta *)&r->e[entries];
	atomic_init(&r->owned, true);
	r->next = atomic_load_explicit(list, memory_order_relaxed);
	/* release: target and next are written before another thread finds the ring */
	while (!atomic_compare_exchange_weak_explicit(list, &r->next, r, memory_order_release,
						      memory_order_relaxed))
		;
	return r;
}

/* A ring to @c of @entries that no live thread owns, claimed; NULL if none. */
static struct xc_ring *ring_adopt(struct xc_cpu *c, uint32_t entries)
{
	/* acquire: pairs with ring_new's release push */
	for (struct xc_ring *r = atomic_load_explicit(&registry[c->life.cpu], memory_order_acquire); r;
	     r = r->next) {
		bool free_ = false;

		/* acquire: the previous owner's head and tail_seen, released at its exit */
		if (r->size == entries && !atomic_load_explicit(&r->owned, memory_order_relaxed) &&
		    atomic_compare_exchange_strong_explicit(&r->owned, &free_, true,
							    memory_order_acquire, memory_order_relaxed))
			return r;
	}
	return NULL;
}

static void table_release(struct xc_ring_table *t)
{
	for (int cpu = 0; cpu < XC_MAX_CPUS; cpu++) {
		if (!t->ring[cpu])
			continue;
		/* release: this owner's head and tail_seen before the next owner's acquire */
		atomic_store_explicit(&t->ring[cpu]->owned, false, memory_order_release);
		t->ring[cpu] = NULL;
	}
}

struct xc_ring *xc_ring_get_slow(struct xc_cpu *c)
{
	struct xc_ring_table *t = xc_my_rings[xc_in_urgent];
	struct xc_ring *r;

	if (!t) {
		t = xc_map(sizeof(*t));
		if (!t)
			return NULL;
		xc_my_rings[xc_in_urgent] = t;
		xc_thread_exit_register();
	}
	if (t->generation != xc_rt.generation) {
		table_release(t);	/* a runtime ago: drained at its exit, free to anyone */
		t->generation = xc_rt.generation;
	}
	r = ring_adopt(c, xc_rt.cfg.ring_entries);
	if (!r)
		r = ring_new(c, xc_rt.cfg.ring_entries);
	if (r) {
		r->tail_seen = atomic_load_explicit(&r->tail, memory_order_acquire);
		/* release: as C; a ring that changes owner starts fenced (see above) */
		atomic_store_explicit(&r->unfenced, 0, memory_order_release);
		r->fenced_rides = 0;
		t->ring[c->life.cpu] = r;
	}
	return r;
}

/*
 * R3: link an idle ring into @c's callq and kick. XC_PUSH_CLOSED: callq
 * is closed, and the ring is the owner's to settle (it stays LINKED, on no
 * list); 1: linked by us; 0: it was linked already.
 */
static int ring_link(struct xc_cpu *c, struct xc_ring *r)
{
	uint32_t s = XC_RING_IDLE;
	int pushed;

	/*
	 * acquire: pairs with the worker's release of IDLE, so that its last
	 * reads of the ring's link come before the push below rewrites it;
	 * release: our head stores before it, for a worker whose later fence
	 * or acquire reads LINKED (a close running this ring while dropped)
	 */
	if (!atomic_compare_exchange_strong_explicit(&r->state, &s, XC_RING_LINKED,
						     memory_order_acq_rel, memory_order_relaxed))
		return 0;
	/* C, release: this CAS follows every head store before it (wake.c, "Owners without a fence") */
	atomic_store_explicit(&r->unfenced, 0, memory_order_release);
	r->fenced_rides = 0;	/* a new link: its calls fence until a run of them rides it */
	pushed = xc_llist_push(&c->mbox.callq, &r->link);
	if (pushed == XC_PUSH_CLOSED)
		return XC_PUSH_CLOSED;
	xc_call_kick(c, pushed, false);
	return 1;
}

/* Owner, after a refused push: the ring is on no list, and ours to link again. */
static void ring_unlink_refused(struct xc_ring *r)
{
	/* relaxed: no worker reads the state of a ring on none of its lists; a close running it leaves it be */
	atomic_store_explicit(&r->state, XC_RING_IDLE, memory_order_relaxed);
}

/*
 * Owner: one look for room in @r, which a put found full (its waiting is
 * run/wait.c's, xc_ring_wait_room, which serves between the looks: a call
 * served there may put entries in this very ring, so head is read afresh
 * each time). Never waits for a close (ring.c, "Two rules"): 0 if there is
 * room; -EAGAIN if not yet; -ENXIO while the CPU's callq is closed; -ENOMEM
 * in the urgent handler, which never waits; -EDEADLK inside an attached
 * thread's announced sleep, where serving would take its CPU's doorbells
 * behind the loop about to block (wake.c); -ELOOP while the target's worker
 * serves below its floor (run/ring_run.c, "Below the floor"): it runs none
 * of the ring's entries until its nest unwinds, and its nest may be waiting
 * for this very owner, so waiting for room could hang both. A full ring
 * that no worker will look at (idle: tombstones, or entries of an outer
 * many-call not yet rung) is linked first.
 */
int xc_ring_room(struct xc_ring *r)
{
	struct xc_cpu *c = r->target;
	/* relaxed: only the owner writes head */
	uint32_t h = atomic_load_explicit(&r->head, memory_order_relaxed);

	/* acquire: the worker has read the entries it took before we overwrite them */
	r->tail_seen = atomic_load_explicit(&r->tail, memory_order_acquire);
	if (h - r->tail_seen < r->size)
		return 0;
	/* relaxed: a look; a close that comes later runs the ring, or refuses its doorbell */
	if (atomic_load_explicit(&c->mbox.callq, memory_order_relaxed) == XC_LLIST_CLOSED)
		return -ENXIO;
	if (xc_urgent_rules())
		return -ENOMEM;	/* an urgent function waits for nothing, wherever it runs */
	/* relaxed: only the owner links an idle ring; a wrong look costs one pass */
	if (atomic_load_explicit(&r->state, memory_order_relaxed) == XC_RING_IDLE &&
	    ring_link(c, r) == XC_PUSH_CLOSED) {
		ring_unlink_refused(r);
		return -ENXIO;
	}
	if (xc_in_fd_sleep())
		return -EDEADLK;
	/* relaxed: a look, taken again at every pass; the worker stores it before it serves deep */
	if (atomic_load_explicit(&c->worker.deep, memory_order_relaxed))
		return -ELOOP;
	return -EAGAIN;
}

/*
 * The doorbell found callq closed: the CPU is going offline or the runtime
 * down. Settle entry @idx at once (see "Closing"): 0 if it ran or the
 * close has taken it to run, -ENXIO if taken back. Nothing here waits or
 * serves a call.
 */
static int ring_refused(struct xc_ring *r, uint32_t idx)
{
	/* acquire: an ordinary run's take came before the unlink whose IDLE our CAS read */
	uint32_t t = atomic_load_explicit(&r->tail, memory_order_acquire);
	int ret = 0;

	if ((int32_t)(t - idx) <= 0) {
		/* relaxed: the exchanges' single order on fn decides; the close's own run orders the rest */
		xc_func_t fn = atomic_exchange_explicit(&r->e[idx & r->mask].fn, XC_RING_RETRACTED,
							memory_order_relaxed);

		/* TAKEN: the close runs it; REFUSED: its waiter is completed ("Below the floor") */
		if (fn != XC_RING_TAKEN && fn != XC_RING_REFUSED)
			ret = -ENXIO;
	}
	r->tail_seen = t;
	ring_unlink_refused(r);
	return ret;
}

int xc_ring_doorbell_slow(struct xc_cpu *c, struct xc_ring *r, uint32_t idx)
{
	int linked = ring_link(c, r);

	if (linked == XC_PUSH_CLOSED)
		return ring_refused(r, idx);
	if (!linked) {
		/* linked: the worker holds it (re-linked), or XC_ABLATE_COALESCE kicks anyway */
		if (xc_ablated(XC_ABLATE_COALESCE)) {
			/* S1 before S2, as a push gives, even after a call that skipped R1' */
			atomic_thread_fence(memory_order_seq_cst);
			xc_kick(c);
		} else {
			xc_stat_inc_own(&r->rode);
		}
	}
	return 0;
}

/* ---- the target's worker ---- */

/* Off the dropped list: taken from callq, the owner's push has landed. */
static void undrop(struct xc_cpu *c, struct xc_ring *r)
{
	struct xc_ring **p = &c->worker.rings_dropped;

	if (!r->dropped)
		return;
	while (*p != r)
		p = &(*p)->dropped_next;
	*p = r->dropped_next;
	r->dropped = false;
	r->dropped_next = NULL;
}

static void hold(struct xc_cpu *c, struct xc_ring *r)
{
	undrop(c, r);
	if (r->held)
		return;
	r->held = true;
	/* last: the held rings in the order their doorbells were taken, the poll's turn (xc_rings_run_streak) */
	r->held_next = NULL;
	*c->worker.rings_held_end = r;
	c->worker.rings_held_end = &r->held_next;
	if (!c->worker.rings_look)
		c->worker.rings_look = r;
}

/* Hold each ring of doorbells @l, taken off callq (xc_ring_take_doorbells, ring.h); how many. */
int xc_rings_hold(struct xc_cpu *c, struct xc__link *l)
{
	int n = 0;

	for (; l; l = l->next, n++)
		hold(c, xc_container_of(l, struct xc_ring, link));
	return n;
}

/* U2': whether an owner of a ring on @list may have skipped R1' (wake.c, "Owners without a fence"). */
static bool rings_unfenced(struct xc_ring *list)
{
	bool any = false;

	for (struct xc_ring *r = list; r; r = r->held_next)
		/* acquire: pairs with C's release, which follows head stores that skipped R1' */
		any |= atomic_load_explicit(&r->unfenced, memory_order_acquire) != 0;
	return any;
}

/*
 * Before a sleep: unlink every held ring (U1-U3 above); a ring still held
 * has calls, and W2 finds them (xc_rings_pending). True if the worker must
 * not sleep yet: an owner skipped R1' and another worker's membarrier is
 * under way, so every ring stays held, re-linked, while this one polls on.
 */
bool xc_rings_release_held(struct xc_cpu *c)
{
	struct xc_ring **p = &c->worker.rings_held, *r;
	bool keep_all = false;

	xc_barrier_probe(c);
	for (r = c->worker.rings_held; r; r = r->held_next)
		/* U1; release: our reads of the link before an owner's push rewrites it */
		atomic_store_explicit(&r->state, XC_RING_IDLE, memory_order_release);
	atomic_thread_fence(memory_order_seq_cst);	/* U2 */
	if (rings_unfenced(c->worker.rings_held) && !xc_owners_barrier(c, true))
		keep_all = true;
	while ((r = *p)) {
		uint32_t s = XC_RING_IDLE;

		/* U3; relaxed CAS: whoever wins links it, nothing is published by it */
		if ((keep_all || xc_ring_has_calls(r)) &&
		    atomic_compare_exchange_strong_explicit(&r->state, &s, XC_RING_LINKED,
							    memory_order_relaxed, memory_order_relaxed)) {
			p = &r->held_next;
			continue;
		}
		*p = r->held_next;	/* idle, or on callq again by its owner's doorbell */
		c->worker.rings_look = NULL;	/* it may have been the poll's first look */
		r->held = false;
		r->held_next = NULL;
		if (s == XC_RING_LINKED && !r->dropped) {
			/* the owner won: its push is to come, and a close before it must run these calls */
			r->dropped = true;
			r->dropped_next = c->worker.rings_dropped;
			c->worker.rings_dropped = r;
		}
	}
	c->worker.rings_held_end = p;
	if (!c->worker.rings_look)
		c->worker.rings_look = c->worker.rings_held;
	return keep_all;
}

/*
 * Offline or exit, the protocol's part of the close (see "Closing" above):
 * close callq, hold every ring that was on it, and unlink every held ring
 * (U1, U2, U2'). Returns the list of the rings it unlinked, by held_next,
 * no longer the worker's held list: the run side (run/ring_run.c) takes
 * their entries by exchange, then each ring on the dropped list's
 * (xc_rings_dropped_pop).
 */
struct xc_ring *xc_rings_close_unlink(struct xc_cpu *c)
{
	struct xc_ring *list;

	for (struct xc__link *l = xc_llist_close(&c->mbox.callq); l; l = l->next)
		hold(c, xc_container_of(l, struct xc_ring, link));
	/* ours alone now: a call run by the close that waits finds nothing held to unlink */
	list = c->worker.rings_held;
	c->worker.rings_held = c->worker.rings_look = NULL;
	c->worker.rings_held_end = &c->worker.rings_held;
	for (struct xc_ring *r = list; r; r = r->held_next)
		atomic_store_explicit(&r->state, XC_RING_IDLE, memory_order_release);	/* U1, as above */
	atomic_thread_fence(memory_order_seq_cst);	/* U2 */
	if (rings_unfenced(list))
		xc_owners_barrier(c, false);	/* U2', waiting its turn: the CPU is closing */
	return list;
}

/*
 * A ring unlinked with calls in it whose owner won the re-link: its push
 * may find callq closed, and it takes back only its own call, so the
 * close runs the rest. Off the dropped list; its state stays the owner's
 * (it stores IDLE when refused, or its push lands on the reopened callq).
 * NULL once none is left.
 */
struct xc_ring *xc_rings_dropped_pop(struct xc_cpu *c)
{
	struct xc_ring *r = c->worker.rings_dropped;

	if (r) {
		c->worker.rings_dropped = r->dropped_next;
		r->dropped = false;
		r->dropped_next = NULL;
	}
	return r;
}

/* Calls that found their ring linked: kicks coalesced without a push (stats.c). */
uint64_t xc_rings_rode(struct xc_cpu *c)
{
	uint64_t n = 0;

	/* acquire: pairs with ring_new's release push */
	for (struct xc_ring *r = atomic_load_explicit(&registry[c->life.cpu], memory_order_acquire); r;
	     r = r->next)
		n += atomic_load_explicit(&r->rode, memory_order_relaxed);
	return n;
}

/* From any thread, a snapshot for reports: whether a ring to @c holds calls not yet taken. */
bool xc_rings_queued(struct xc_cpu *c)
{
	/* acquire: pairs with ring_new's release push */
	for (struct xc_ring *r = atomic_load_explicit(&registry[c->life.cpu], memory_order_acquire); r;
	     r = r->next)
		if (xc_ring_has_calls(r))
			return true;
	return false;
}

/* Every ring ever made to @cpu, newest first (next): a fresh runtime resets them (bringup.c). */
struct xc_ring *xc_rings_of(int cpu)
{
	/* acquire: pairs with ring_new's release push */
	return atomic_load_explicit(&registry[cpu], memory_order_acquire);
}

/* ---- lifecycle ---- */

void xc_ring_thread_exit(void)
{
	for (int i = 0; i < 2; i++) {
		struct xc_ring_table *t = xc_my_rings[i];

		if (!t)
			continue;
		xc_my_rings[i] = NULL;
		table_release(t);
		munmap(t, sizeof(*t));
	}
}

__attribute__((constructor)) static void ring_exit_hook(void)
{
	xc_thread_exit_hook(XC_EXIT_RINGS, xc_ring_thread_exit);
}

/*
 * A forked child has only the forking thread, and no runtime. Its rings'
 * contents are the parent's, and every ring a fresh runtime uses is reset
 * by xc_cpu_fresh (bringup.c; fork.c runs it for the parent's CPUs too).
 * What is left here is whose they are: the threads that owned them are
 * gone, and the forking thread forgets its tables, so every ring is free.
 */
void xc_ring_fork_child(void)
{
	xc_my_rings[0] = xc_my_rings[1] = NULL;	/* their memory stays mapped, unused */
	for (int cpu = 0; cpu < XC_MAX_CPUS; cpu++)
		for (struct xc_ring *r = atomic_load_explicit(&registry[cpu], memory_order_relaxed);
		     r; r = r->next)
			atomic_store_explicit(&r->owned, false, memory_order_relaxed);
}
