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
 * if it is a worker), the way the kernel's csd_lock_wait() throttles a sender.
 *
 * Pools live as long as the process: a thread's pool goes to a spare list
 * when the thread exits and the next new thread adopts it, so descriptors
 * still in flight always have a live owner to return to.
 *
 * A worker's urgent signal handler may interrupt its own pool in the middle
 * of an update, so nowait calls made from urgent functions use a second
 * pool of the worker's, filled before the worker goes online; it never grows
 * (no malloc in a signal handler) and never waits: empty, it gives -ENOMEM.
 */
#include "internal.h"
#include "wait.h"
#include "pool.h"

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
	struct xc_pool *next_spare;		/* under spare_lock */
	_Atomic(struct xc__link *) returned __xc_aligned;	/* pushed by runners */
};

static pthread_mutex_t spare_lock = PTHREAD_MUTEX_INITIALIZER;
static struct xc_pool *spare_pools;
static pthread_key_t pool_key;
static pthread_once_t pool_key_once = PTHREAD_ONCE_INIT;
static __xc_tls struct xc_pool *my_pool;

static struct xc_pool *pool_new(void)
{
	struct xc_pool *pool = aligned_alloc(XC_CACHELINE, sizeof(*pool));

	if (!pool)
		return NULL;
	pool->free = NULL;
	pool->total = 0;
	pool->urgent = NULL;
	pool->next_spare = NULL;
	atomic_init(&pool->returned, NULL);
	return pool;
}

/*
 * The thread exits (its key's destructor): the pool goes to the spare list,
 * and the thread forgets it, so that a key destructor that runs after this
 * one and makes calls does not use a pool another thread may adopt: it
 * adopts one of its own, and the key hands that back in the destructors'
 * next round.
 */
static void pool_release(void *p)
{
	struct xc_pool *pool = p;

	my_pool = NULL;
	pthread_mutex_lock(&spare_lock);
	pool->next_spare = spare_pools;
	spare_pools = pool;
	pthread_mutex_unlock(&spare_lock);
}

static void pool_key_create(void)
{
	pthread_key_create(&pool_key, pool_release);
}

static struct xc_pool *pool_self(void)
{
	struct xc_pool *pool = my_pool;

	if (xc_likely(pool))
		return pool;
	pthread_once(&pool_key_once, pool_key_create);
	pthread_mutex_lock(&spare_lock);
	pool = spare_pools;
	if (pool)
		spare_pools = pool->next_spare;
	pthread_mutex_unlock(&spare_lock);
	if (!pool) {
		pool = pool_new();
		if (!pool)
			return NULL;
	}
	pool->next_spare = NULL;
	pthread_setspecific(pool_key, pool);
	my_pool = pool;
	return pool;
}

static bool pool_grow(struct xc_pool *pool)
{
	struct xc_call *slab = aligned_alloc(XC_CACHELINE, XC_POOL_SLAB * sizeof(*slab));

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

struct xc_call *xc_pool_get(void)
{
	struct xc_pool *pool;

	if (xc_unlikely(xc_in_urgent)) {
		pool = my_pool->urgent;	/* prepared before the worker went online */
		if (!pool->free)
			/* acquire: as below */
			pool->free = atomic_exchange_explicit(&pool->returned, NULL,
							      memory_order_acquire);
		return pool->free ? pool_pop(pool) : NULL;
	}
	pool = pool_self();
	if (!pool)
		return NULL;
	while (!pool->free) {
		/* acquire: pairs with the runners' release push; the descriptor is ours again */
		pool->free = atomic_exchange_explicit(&pool->returned, NULL, memory_order_acquire);
		if (pool->free)
			break;
		if (pool->total < XC_POOL_MAX) {
			if (!pool_grow(pool))
				return NULL;
			break;
		}
		/* every descriptor is in flight: wait for one, without deadlocking a worker */
		xc_wait_step();
	}
	return pool_pop(pool);
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

/* fork.c: the spare list is consistent in the child. */
void xc_pool_fork_prepare(void)
{
	pthread_mutex_lock(&spare_lock);
}

void xc_pool_fork_parent(void)
{
	pthread_mutex_unlock(&spare_lock);
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

void xc_pool_fork_child(void)
{
	if (my_pool)
		pool_recount(my_pool);
	for (struct xc_pool *p = spare_pools; p; p = p->next_spare)
		pool_recount(p);
	pthread_mutex_unlock(&spare_lock);
}
