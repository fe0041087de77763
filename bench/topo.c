/* SPDX-License-Identifier: MIT */
/*
 * topo.c - each CPU's core, last-level cache and NUMA node from sysfs, for
 * sampling CPUs by topology and classing pairs of them.
 */
#include "topo.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xcall.h"

#define SYSFS "/sys/devices/system"

static int read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	buf[0] = 0;
	if (!f)
		return -1;
	if (fgets(buf, (int)size, f))
		buf[strcspn(buf, "\n")] = 0;
	fclose(f);
	return buf[0] ? 0 : -1;
}

/* A cpulist file as a set; -1 when missing or unreadable. */
static int read_list(const char *path, cpu_set_t *set)
{
	/* a cpulist of 4096 CPUs written one by one still fits */
	static char buf[1 << 15];
	if (read_line(path, buf, sizeof(buf)))
		return -1;
	return xc_cpulist_parse(buf, set) ? -1 : 0;
}

static int lowest_in(const char *path, int dflt)
{
	cpu_set_t set;
	if (read_list(path, &set))
		return dflt;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			return c;
	return dflt;
}

/* The cache index with the highest level; an instruction cache never wins a tie. */
static int llc_of(const char *sysfs, int cpu)
{
	char p[256], v[32];
	int best = -1, best_level = 0, best_insn = 1;
	for (int i = 0; i < 16; i++) {
		snprintf(p, sizeof(p), "%s/cpu/cpu%d/cache/index%d/level", sysfs, cpu, i);
		if (read_line(p, v, sizeof(v)))
			continue;
		int level = atoi(v);
		snprintf(p, sizeof(p), "%s/cpu/cpu%d/cache/index%d/type", sysfs, cpu, i);
		read_line(p, v, sizeof(v));
		int insn = !strcmp(v, "Instruction");
		if (level > best_level || (level == best_level && best_insn && !insn)) {
			best = i;
			best_level = level;
			best_insn = insn;
		}
	}
	if (best < 0)
		return cpu;
	snprintf(p, sizeof(p), "%s/cpu/cpu%d/cache/index%d/shared_cpu_list", sysfs, cpu, best);
	return lowest_in(p, cpu);
}

void topo_read(const cpu_set_t *cpus, struct topo_cpu *t, const char *sysfs)
{
	char p[256];
	if (!sysfs)
		sysfs = SYSFS;
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, cpus))
			continue;
		/* thread_siblings_list is the older name, still there on new kernels */
		snprintf(p, sizeof(p), "%s/cpu/cpu%d/topology/thread_siblings_list", sysfs, c);
		t[c].core = lowest_in(p, -1);
		if (t[c].core < 0) {
			snprintf(p, sizeof(p), "%s/cpu/cpu%d/topology/core_cpus_list", sysfs, c);
			t[c].core = lowest_in(p, c);
		}
		t[c].llc = llc_of(sysfs, c);
		t[c].node = 0;
	}

	snprintf(p, sizeof(p), "%s/node", sysfs);
	DIR *d = opendir(p);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		char *end;
		if (strncmp(e->d_name, "node", 4))
			continue;
		long n = strtol(e->d_name + 4, &end, 10);
		if (end == e->d_name + 4 || *end || n < 0)
			continue;
		cpu_set_t set;
		snprintf(p, sizeof(p), "%s/node/node%ld/cpulist", sysfs, n);
		if (read_list(p, &set))
			continue;
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, cpus) && CPU_ISSET(c, &set))
				t[c].node = (int)n;
	}
	if (d)
		closedir(d);
}

int topo_id(const struct topo_cpu *c, enum topo_level l)
{
	return l == TOPO_CORE ? c->core : l == TOPO_LLC ? c->llc : c->node;
}

int topo_one_per(const struct topo_cpu *t, const int *cpus, int n, enum topo_level l, int *out)
{
	int m = 0;
	for (int i = 0; i < n; i++) {
		int id = topo_id(&t[cpus[i]], l), seen = 0;
		for (int j = 0; j < m && !seen; j++)
			seen = topo_id(&t[out[j]], l) == id;
		if (!seen)
			out[m++] = cpus[i];
	}
	return m;
}

enum topo_class topo_class(const struct topo_cpu *t, int a, int b)
{
	if (t[a].core == t[b].core)
		return TOPO_SMT;
	if (t[a].llc == t[b].llc)
		return TOPO_SAME_LLC;
	if (t[a].node == t[b].node)
		return TOPO_SAME_NODE;
	return TOPO_CROSS_NODE;
}

const char *topo_class_name(enum topo_class c)
{
	static const char *const names[] = {"smt", "same-llc", "same-node", "cross-node"};
	return c < TOPO_NCLASSES ? names[c] : "?";
}
