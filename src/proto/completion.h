/* SPDX-License-Identifier: MIT */
/*
 * completion.h - completions (completion.c): the completer's side; the
 * waiter's is run/wait.h's
 */
#ifndef XC_COMPLETION_H
#define XC_COMPLETION_H

#include "base/internal.h"
#include "proto/wake.h"

void xc_completion_init(struct xc__completion *s, uint32_t count);
void xc_complete(struct xc__completion *s);
/* Wake the waiter of a completion whose last update read XC_DONE_SLEEPING. */
void xc_completion_wake(struct xc__completion *s, struct xc_cpu *waiter);

#endif /* XC_COMPLETION_H */
