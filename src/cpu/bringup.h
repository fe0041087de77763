/* SPDX-License-Identifier: MIT */
/*
 * bringup.h - starting and stopping the workers (bringup.c), the steps of
 * xc_init() and xc_exit() (api/init.c)
 */
#ifndef XC_BRINGUP_H
#define XC_BRINGUP_H

#include "base/internal.h"

void xc_cpus_reset(void);
int xc_bringup(void);
/* Undo a failed bringup; true if a thread was abandoned in its init hook (xc_init: -ETIMEDOUT). */
bool xc_bringup_undo(void);
void xc_fast_paths_open(void);
void xc_fast_paths_close(void);
void xc_workers_stop(void);
void xc_runtime_clear(void);

#endif /* XC_BRINGUP_H */
