/* SPDX-License-Identifier: MIT */
/*
 * hotplug.h - taking a CPU offline and back (hotplug.c)
 */
#ifndef XC_HOTPLUG_H
#define XC_HOTPLUG_H

#include "internal.h"

/* xc_cpu.lock_wait: a worker waiting for the lock, and the word that makes it give up (wait.c) */
enum { XC_LOCK_NONE, XC_LOCK_SPIN, XC_LOCK_REFUSED };

int xc_hotplug_lock(void);
void xc_hotplug_unlock(void);
/* Whether this thread holds the lock, for those that take it by themselves (attach.c, fork.c). */
void xc_hotplug_hold(bool on);
bool xc_hotplug_holding(void);
void xc_cpu_open(struct xc_cpu *c);
void xc_park_release(struct xc_cpu *c, uint32_t how);
void xc_cpu_request(struct xc_cpu *c, uint32_t ctl);

#endif /* XC_HOTPLUG_H */
