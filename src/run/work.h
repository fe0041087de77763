/* SPDX-License-Identifier: MIT */
/*
 * work.h - per-CPU work items, the worker's task context (work.c)
 */
#ifndef XC_WORK_H
#define XC_WORK_H

#include "base/internal.h"

bool xc_run_one_work(struct xc_cpu *c);
int xc_drain_work(struct xc_cpu *c);

#endif /* XC_WORK_H */
