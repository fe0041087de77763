/* SPDX-License-Identifier: MIT */
/*
 * llist.h - the per-CPU call queue: a lock-free multi-producer, single-consumer
 * list, after the kernel's include/linux/llist.h.
 *
 * Contract:
 *   - any number of threads may xc_llist_push() at once;
 *   - only the list's owner (the CPU's worker, or the hotplug path while the
 *     worker is parked) may take, close or reopen it;
 *   - push reports whether the list went from empty to non-empty: only that
 *     push needs to kick the consumer, every later one rides on it (coalescing);
 *   - a closed list refuses pushes atomically, so a CPU going offline takes
 *     everything queued before the close and nothing can slip in after it.
 *
 * The list is LIFO as pushed; xc_llist_reverse() restores FIFO order.
 */
#ifndef XC_LLIST_H
#define XC_LLIST_H

#include "xcall.h"
#include <stdatomic.h>
#include <stddef.h>

/* Sentinel head of a closed list: never a valid node address. */
#define XC_LLIST_CLOSED ((struct xc__link *)1)

enum { XC_PUSH_CLOSED = -1, XC_PUSH_NONEMPTY = 0, XC_PUSH_WAS_EMPTY = 1 };

/* Push the chain first..last (linked through ->next) with one CAS. */
static inline int xc_llist_push_chain(_Atomic(struct xc__link *) *head, struct xc__link *first,
				      struct xc__link *last)
{
	/* relaxed: only a first guess for the CAS below */
	struct xc__link *old = atomic_load_explicit(head, memory_order_relaxed);

	do {
		if (old == XC_LLIST_CLOSED)
			return XC_PUSH_CLOSED;
		last->next = old;
		/*
		 * seq_cst on success: release publishes the node to the consumer's
		 * acquire take, and the total order puts this push before the kick's
		 * load of the worker's idle state (see wake.c).
		 */
	} while (!atomic_compare_exchange_weak_explicit(head, &old, first, memory_order_seq_cst,
							memory_order_relaxed));
	return old == NULL ? XC_PUSH_WAS_EMPTY : XC_PUSH_NONEMPTY;
}

static inline int xc_llist_push(_Atomic(struct xc__link *) *head, struct xc__link *node)
{
	return xc_llist_push_chain(head, node, node);
}

/* True if the list holds nodes (a closed list holds none). */
static inline bool xc_llist_nonempty(_Atomic(struct xc__link *) *head, memory_order mo)
{
	struct xc__link *h = atomic_load_explicit(head, mo);

	return h != NULL && h != XC_LLIST_CLOSED;
}

/* Owner only: take every node, leaving the list empty (or closed, if it was). */
static inline struct xc__link *xc_llist_take(_Atomic(struct xc__link *) *head)
{
	/*
	 * relaxed: producers never turn a list into CLOSED, only the owner does;
	 * and an empty list is left unwritten, so the owner's polling line stays shared.
	 */
	struct xc__link *h = atomic_load_explicit(head, memory_order_relaxed);

	if (h == NULL || h == XC_LLIST_CLOSED)
		return NULL;
	/* acquire: pairs with the pushes' release, so node contents are visible */
	return atomic_exchange_explicit(head, NULL, memory_order_acquire);
}

/* Owner only: take every node and close the list. */
static inline struct xc__link *xc_llist_close(_Atomic(struct xc__link *) *head)
{
	/* acq_rel: acquire the nodes; release orders earlier owner writes before refusals */
	struct xc__link *l = atomic_exchange_explicit(head, XC_LLIST_CLOSED, memory_order_acq_rel);

	return l == XC_LLIST_CLOSED ? NULL : l;
}

/* Owner only, list closed: accept pushes again. */
static inline void xc_llist_open(_Atomic(struct xc__link *) *head)
{
	/* release: the owner's state is set up before the first push can land */
	atomic_store_explicit(head, NULL, memory_order_release);
}

static inline struct xc__link *xc_llist_reverse(struct xc__link *l)
{
	struct xc__link *out = NULL;

	while (l) {
		struct xc__link *next = l->next;

		l->next = out;
		out = l;
		l = next;
	}
	return out;
}

#define xc_container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))

#endif /* XC_LLIST_H */
