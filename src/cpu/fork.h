/* SPDX-License-Identifier: MIT */
/*
 * fork.h - a child forked after xc_init (fork.c)
 */
#ifndef XC_FORK_H
#define XC_FORK_H

#include "base/internal.h"

void xc_fork_handlers_register(void);

#endif /* XC_FORK_H */
