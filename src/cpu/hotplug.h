/* SPDX-License-Identifier: MIT */
/*
 * hotplug.h - taking a CPU offline and back (hotplug.c)
 */
#ifndef XC_HOTPLUG_H
#define XC_HOTPLUG_H

#include "base/internal.h"

/* xc_cpu.lock_wait: a worker waiting for the lock, and the word that makes it give up (wait.c) */
enum { XC_LOCK_NONE, XC_LOCK_SPIN, XC_LOCK_REFUSED };

int xc_hotplug_lock(void);
void xc_hotplug_unlock(void);
/* Whether this thread holds the lock, for those that take it by themselves (attach.c, fork.c). */
void xc_hotplug_hold(bool on);
/*
 * This thread holds the lock: a hotplug operation of its own is under way
 * further up its stack, serving calls while it waits (an offline's wait, a
 * detach's drain). A hotplug call from one of those calls would wait for
 * its own thread: it gets -EDEADLK instead. Inline: a wait looks at it in
 * place (wait.c).
 */
extern __xc_tls bool xc_hotplug_held;

static inline bool xc_hotplug_holding(void)
{
	return xc_hotplug_held;
}
void xc_cpu_open(struct xc_cpu *c);
void xc_park_release(struct xc_cpu *c, uint32_t how);
void xc_cpu_request(struct xc_cpu *c, uint32_t ctl);

#endif /* XC_HOTPLUG_H */
