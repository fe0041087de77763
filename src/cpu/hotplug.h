/* SPDX-License-Identifier: MIT */
/*
 * hotplug.h - taking a CPU offline and back (hotplug.c)
 */
#ifndef XC_HOTPLUG_H
#define XC_HOTPLUG_H

#include "base/internal.h"
#include "run/wait.h"	/* XC_LOCK_*, xc_hotplug_held: the deadlock look reads them */

int xc_hotplug_lock(void);
void xc_hotplug_unlock(void);
void xc_cpu_open(struct xc_cpu *c);
void xc_park_release(struct xc_cpu *c, uint32_t how);
void xc_cpu_request(struct xc_cpu *c, uint32_t ctl);

#endif /* XC_HOTPLUG_H */
