/* SPDX-License-Identifier: MIT */
/*
 * urgent.h - XC_URGENT calls: the signal that interrupts a busy worker (urgent.c)
 */
#ifndef XC_URGENT_H
#define XC_URGENT_H

#include "base/internal.h"

int xc_urgent_install(void);
void xc_urgent_restore(void);
void xc_urgent_quiesce(void);
void xc_kick_urgent(struct xc_cpu *c);
bool xc_urgent_enter(void);
void xc_urgent_leave(void);

void xc_urgent_fork_child(void);

#endif /* XC_URGENT_H */
