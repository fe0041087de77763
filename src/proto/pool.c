// SPDX-License-Identifier: MIT
/*
 * pool.c - per-thread pools of call descriptors for nowait and many calls.
 *
 * A thread takes descriptors from its own free list without atomics. The
 * worker that runs a call gives the descriptor back by pushing it on the
 * owner's return list (an MPSC list, llist.h); the owner takes that whole
 * list when its free list runs dry. So nowait calls from one thread never
 * serialise on one descriptor, and the cost is one push per call.
 *
 * A pool holds at most XC_POOL_MAX descriptors. A thread with that many in
 * flight waits for some to come back (running its own CPU's calls meanwhile
 * if it is a worker), the way the kernel's csd_lock_wait() throttles a sender;
 * inside an attached thread's announced sleep, which serves nothing, it gets
 * none instead (the call -ENOMEM).
 *
 * Pools live as long as the process: a thread's pool is released when the
 * thread exits (thread.c) and the next new thread adopts it, so descriptors
 * still in flight always have a live owner to return to.
 *
 * A thread's first call may come from a signal handler that interrupted
 * the application anywhere, in malloc or holding a lock of its own (a
 * handler that interrupts libxcall itself is refused: thread.h). So
 * adopting or making a pool takes no lock and no malloc: pools are mapped
 * with mmap and kept on a push-only registry, each with an owned flag
 * claimed by CAS; descriptor slabs are mapped too.
 *
 * A worker's urgent signal handler may interrupt its own pool in the middle
 * of an update, so nowait calls made from urgent functions use a second
 * pool of the worker's, filled before the worker goes online; it never grows
 * (no allocation in a signal handler) and never waits: empty, it gives -ENOMEM.
 */
#include "base/internal.h"
#include "proto/pool.h"
#include "base/thread.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#define XC_POOL_SLAB  64
#define XC_POOL_MAX   4096

struct xc_pool {
	struct xc__link *free;			/* owner only */
	unsigned total;				/* owner only: descriptors this pool owns */
	struct xc_pool *urgent;			/* a worker's pool for its signal handler */
	struct xc_pool *next;			/* the registry; written once, before the push */
	_Atomic bool owned;			/* a live thread holds it */
	_Atomic(struct xc__link *) returned __xc_aligned;	/* pushed by runners */
};

/* Every pool ever made, newest first; pools are never freed, so a reader needs no lock. */
static _Atomic(struct xc_pool *) all_pools;
static __xc_tls struct xc_pool *my_pool;

static struct xc_pool *pool_new(void)
{
	struct xc_pool *pool = xc_map(sizeof(*pool));

	if (!pool)
		return NULL;
	/* mmap's pages are zero: free, total, urgent, next and returned are empty */
	atomic_init(&pool->owned, true);
	return pool;
}

/* The thread exits (thread.c): its pool is free for the next thread to adopt. */
void xc_pool_thread_exit(void)
{
	struct xc_pool *pool = my_pool;

	if (!pool)
		return;
	my_pool = NULL;
	/* release: the owner's free list and count before the next owner's acquire CAS */
	atomic_store_explicit(&pool->owned, false, memory_order_release);
}

__attribute__((constructor)) static void pool_exit_hook(void)
{
	xc_thread_exit_hook(XC_EXIT_POOL, xc_pool_thread_exit);
}

/* A free pool of the registry, claimed; NULL if none. */
static struct xc_pool *pool_adopt(void)
{
	/* acquire: pairs with the release push, so a pool's fields are initialised */
	for (struct xc_pool *p = atomic_load_explicit(&all_pools, memory_order_acquire); p;
	     p = p->next) {
		bool free = false;

		/* acquire: pairs with the last owner's release at exit */
		if (!atomic_load_explicit(&p->owned, memory_order_relaxed) &&
		    atomic_compare_exchange_strong_explicit(&p->owned, &free, true,
							    memory_order_acquire,
							    memory_order_relaxed))
			return p;
	}
	return NULL;
}

static struct xc_pool *pool_self(void)
{
	struct xc_pool *pool = my_pool;

	if (xc_likely(pool))
		return pool;
	pool = pool_adopt();
	if (!pool) {
		pool = pool_new();
		if (!pool)
			return NULL;
		pool->next = atomic_load_explicit(&all_pools, memory_order_relaxed);
		/* release: the pool's fields before a reader that finds it */
		while (!atomic_compare_exchange_weak_explicit(&all_pools, &pool->next, pool,
							      memory_order_release,
							      memory_order_relaxed))
			;
	}
	my_pool = pool;
	xc_thread_exit_register();
	return pool;
}

static bool pool_grow(struct xc_pool *pool)
{
	struct xc_call *slab = xc_map(XC_POOL_SLAB * sizeof(*slab));

	if (!slab)
		return false;
	for (int i = 0; i < XC_POOL_SLAB; i++) {
		slab[i]._owner = pool;
		atomic_init(&slab[i]._flags, 0);
		slab[i]._link.next = pool->free;
		pool->free = &slab[i]._link;
	}
	pool->total += XC_POOL_SLAB;
	return true;
}

/* Worker start: both pools exist and the urgent one holds a slab. */
int xc_pool_prepare(void)
{
	struct xc_pool *pool = pool_self();

	if (!pool)
		return -ENOMEM;
	if (pool->urgent)
		return 0;
	pool->urgent = pool_new();
	if (!pool->urgent)
		return -ENOMEM;
	return pool_grow(pool->urgent) ? 0 : -ENOMEM;
}

static struct xc_call *pool_pop(struct xc_pool *pool)
{
	struct xc__link *l = pool->free;

	pool->free = l->next;
	return xc_container_of(l, struct xc_call, _link);
}

/*
 * A descriptor of the calling thread's pool, or NULL: none free now, and
 * xc_pool_exhausted() says whether the thread may wait for one (run/wait.c,
 * xc_pool_get) or none can be had.
 */
struct xc_call *xc_pool_try(void)
{
	struct xc_pool *pool;

	if (xc_unlikely(xc_in_urgent)) {
		/* prepared before the worker went online; released only after it detached */
		pool = my_pool ? my_pool->urgent : NULL;
		if (!pool)
			return NULL;
		if (!pool->free)
			/* acquire: as below */
			pool->free = atomic_exchange_explicit(&pool->returned, NULL,
							      memory_order_acquire);
		return pool->free ? pool_pop(pool) : NULL;
	}
	pool = pool_self();
	if (!pool)
		return NULL;
	if (!pool->free)
		/* acquire: pairs with the runners' release push; the descriptor is ours again */
		pool->free = atomic_exchange_explicit(&pool->returned, NULL, memory_order_acquire);
	if (!pool->free && pool->total < XC_POOL_MAX && !pool_grow(pool))
		return NULL;
	return pool->free ? pool_pop(pool) : NULL;
}

/*
 * After xc_pool_try() found none: whether every descriptor of the thread's
 * pool is in flight and it may wait for one to come back (true); false if
 * none can be had: no memory, the urgent handler's pool (which waits for
 * nothing), an announced sleep or an urgent function, which serve nothing.
 */
bool xc_pool_exhausted(void)
{
	return !xc_in_urgent && my_pool && my_pool->total >= XC_POOL_MAX && !xc_in_fd_sleep() &&
	       !xc_urgent_rules();
}

/* Give back descriptors, batched by owner: one push per run of the same owner. */
void xc_pool_batch_add(struct xc_pool_batch *b, struct xc_call *call)
{
	if (b->owner != call->_owner)
		xc_pool_batch_flush(b);
	call->_link.next = NULL;
	if (b->last)
		b->last->next = &call->_link;
	else
		b->first = &call->_link;
	b->last = &call->_link;
	b->owner = call->_owner;
}

void xc_pool_batch_flush(struct xc_pool_batch *b)
{
	struct xc_pool *pool = b->owner;

	if (!b->first)
		return;
	/* the return list is never closed, so the push always succeeds */
	xc_llist_push_chain(&pool->returned, b->first, b->last);
	b->first = b->last = NULL;
	b->owner = NULL;
}

void xc_pool_put_local(struct xc_call *call)
{
	struct xc_pool *pool = call->_owner;

	call->_link.next = pool->free;
	pool->free = &call->_link;
}

/* In the child: what is not free or returned was in flight in the parent and never comes back. */
static void pool_recount(struct xc_pool *pool)
{
	/* relaxed: the child has one thread */
	struct xc__link *l = atomic_exchange_explicit(&pool->returned, NULL, memory_order_relaxed);

	while (l) {
		struct xc__link *next = l->next;

		l->next = pool->free;
		pool->free = l;
		l = next;
	}
	pool->total = 0;
	for (l = pool->free; l; l = l->next)
		pool->total++;
	if (pool->urgent)
		pool_recount(pool->urgent);
}

/*
 * fork.c, in the child: the free pools and this thread's are recounted. A
 * pool the parent's other threads held stays held: its owner may have been
 * in the middle of an update when the fork copied it.
 */
void xc_pool_fork_child(void)
{
	/* relaxed, all: the child has one thread */
	for (struct xc_pool *p = atomic_load_explicit(&all_pools, memory_order_relaxed); p; p = p->next)
		if (p == my_pool || !atomic_load_explicit(&p->owned, memory_order_relaxed))
			pool_recount(p);
}
