/* SPDX-License-Identifier: MIT */
/*
 * pool.h - per-thread descriptor pools for nowait and many calls (pool.c)
 */
#ifndef XC_POOL_H
#define XC_POOL_H

#include "base/internal.h"

int xc_pool_prepare(void);
struct xc_call *xc_pool_try(void);
bool xc_pool_exhausted(void);
void xc_pool_put_local(struct xc_call *call);
struct xc_pool_batch {
	void *owner;
	struct xc__link *first, *last;
};
void xc_pool_batch_add(struct xc_pool_batch *b, struct xc_call *call);
void xc_pool_batch_flush(struct xc_pool_batch *b);

void xc_pool_thread_exit(void);
void xc_pool_fork_child(void);

#endif /* XC_POOL_H */
