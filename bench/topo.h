/* SPDX-License-Identifier: MIT */
/*
 * topo.h - where each CPU sits, read from sysfs: its physical core, its
 * last-level cache and its NUMA node. Enough to tell a pair of CPUs SMT
 * siblings, sharing a cache, sharing a node, or across nodes.
 */
#ifndef BENCH_TOPO_H
#define BENCH_TOPO_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>

/*
 * A group is named by its lowest CPU, so ids of different kinds never need a
 * package number to be unique. A file that is missing leaves the CPU its own
 * core and its own LLC, on node 0.
 */
struct topo_cpu {
	int core;       /* lowest of thread_siblings_list (core_cpus_list) */
	int llc;        /* lowest of the highest-level cache's shared_cpu_list */
	int node;       /* N of the nodeN/cpulist that lists the CPU */
};

enum topo_level { TOPO_CORE, TOPO_LLC, TOPO_NODE };

/* Closest first: a pair's class is the first level the two CPUs share. */
enum topo_class { TOPO_SMT, TOPO_SAME_LLC, TOPO_SAME_NODE, TOPO_CROSS_NODE, TOPO_NCLASSES };

/*
 * Fill t[c] for every CPU c in cpus; t has CPU_SETSIZE entries. sysfs is the
 * directory holding cpu/ and node/, NULL for /sys/devices/system.
 */
void topo_read(const cpu_set_t *cpus, struct topo_cpu *t, const char *sysfs);
int topo_id(const struct topo_cpu *c, enum topo_level l);
/* The first CPU of cpus[0..n) in each group of level l, in order; returns how many. */
int topo_one_per(const struct topo_cpu *t, const int *cpus, int n, enum topo_level l, int *out);
enum topo_class topo_class(const struct topo_cpu *t, int a, int b);
/* "smt", "same-llc", "same-node", "cross-node" */
const char *topo_class_name(enum topo_class c);

#endif
