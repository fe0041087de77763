/* SPDX-License-Identifier: MIT */
/*
 * urgent.h - XC_URGENT calls: the senders' side of the signal that interrupts a
 * busy worker (urgent.c); its handler is run/urgent_signal.c's
 */
#ifndef XC_URGENT_H
#define XC_URGENT_H

#include "base/internal.h"

void xc_urgent_quiesce(void);
void xc_kick_urgent(struct xc_cpu *c);
bool xc_urgent_enter(void);
void xc_urgent_leave(void);

#endif /* XC_URGENT_H */
