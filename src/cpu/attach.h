/* SPDX-License-Identifier: MIT */
/*
 * attach.h - an application thread as a CPU's worker (attach.c)
 */
#ifndef XC_ATTACH_H
#define XC_ATTACH_H

#include "base/internal.h"

int xc_attached_poll(struct xc_cpu *c);
void xc_attach_thread_exit(void);

#endif /* XC_ATTACH_H */
