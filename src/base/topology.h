/* SPDX-License-Identifier: MIT */
/*
 * topology.h - cpulists and sysfs: LLC and NUMA ids (topology.c)
 */
#ifndef XC_TOPOLOGY_H
#define XC_TOPOLOGY_H

#include "base/internal.h"

void xc_topology_read(struct xc_cpu *c);
int xc_sysfs_cpulist(const char *path, cpu_set_t *out);

#endif /* XC_TOPOLOGY_H */
