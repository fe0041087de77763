// SPDX-License-Identifier: MIT
/*
 * topology.c - cpulists ("0-3,8,10-15:2", the kernel's syntax) and where each
 * CPU sits: which last-level cache it shares and which NUMA node it is on,
 * read from sysfs. Missing sysfs files leave a CPU in a cache and node of
 * its own.
 */
#include "base/internal.h"
#include "base/topology.h"
#include "base/thread.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_num(const char **p, long *out)
{
	char *end;

	if (!isdigit((unsigned char)**p))
		return -EINVAL;
	errno = 0;
	*out = strtol(*p, &end, 10);
	if (errno || *out >= XC_MAX_CPUS)
		return -EINVAL;
	*p = end;
	return 0;
}

int xc_cpulist_parse(const char *list, cpu_set_t *out)
{
	const char *p = list;

	if (!list || !out)
		return -EINVAL;
	CPU_ZERO(out);
	while (*p == ' ' || *p == '\t')
		p++;
	if (!*p || *p == '\n')
		return -EINVAL;
	for (;;) {
		long lo, hi, stride = 1;

		if (parse_num(&p, &lo))
			return -EINVAL;
		hi = lo;
		if (*p == '-') {
			p++;
			if (parse_num(&p, &hi) || hi < lo)
				return -EINVAL;
			if (*p == ':') {
				p++;
				if (parse_num(&p, &stride) || stride == 0)
					return -EINVAL;
			}
		}
		for (long c = lo; c <= hi; c += stride)
			CPU_SET((int)c, out);
		if (*p == ',') {
			p++;
			continue;
		}
		break;
	}
	if (*p == '\n')
		p++;
	return *p ? -EINVAL : 0;
}

int xc_cpulist_format(const cpu_set_t *set, char *buf, size_t size)
{
	size_t used = 0;

	if (!set || !buf || size == 0)
		return -EINVAL;
	buf[0] = 0;
	for (int c = 0; c < XC_MAX_CPUS; c++) {
		int end = c;
		int n;

		if (!CPU_ISSET(c, set))
			continue;
		while (end + 1 < XC_MAX_CPUS && CPU_ISSET(end + 1, set))
			end++;
		if (end == c)
			n = snprintf(buf + used, size - used, "%s%d", used ? "," : "", c);
		else
			n = snprintf(buf + used, size - used, "%s%d-%d", used ? "," : "", c, end);
		if (n < 0 || (size_t)n >= size - used) {
			buf[0] = 0;
			return -ENOSPC;
		}
		used += (size_t)n;
		c = end;
	}
	return (int)used;
}

static int cpu_max(void)
{
	/* acquire: the set and its list, written before the runtime went up */
	if (atomic_load_explicit(&xc_rt.state, memory_order_acquire) != XC_RT_UP)
		return -ENXIO;
	/* cpu_list is in CPU order: its last is the highest */
	return xc_rt.cpu_list[xc_rt.nr_cpus - 1] + 1;
}

int xc_cpu_max(void)
{
	return XC_READING(cpu_max());
}

static int read_line(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "re");
	int ret = -ENOENT;

	if (!f)
		return ret;
	if (fgets(buf, (int)n, f))
		ret = 0;
	fclose(f);
	return ret;
}

/* A sysfs or cgroup file that holds one cpulist; 0 or -errno. */
int xc_sysfs_cpulist(const char *path, cpu_set_t *out)
{
	char buf[4096];
	int ret = read_line(path, buf, sizeof(buf));

	if (ret)
		return ret;
	buf[strcspn(buf, "\n")] = 0;
	if (!buf[0]) {
		CPU_ZERO(out);
		return 0;
	}
	return xc_cpulist_parse(buf, out);
}

/* The first CPU sharing @cpu's highest-level cache, or @cpu itself. */
static int llc_id(int cpu)
{
	char path[128], line[512];
	int best_level = -1, id = cpu;

	for (int idx = 0; idx < 16; idx++) {
		cpu_set_t shared;
		int level;

		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cache/index%d/level", cpu, idx);
		if (read_line(path, line, sizeof(line)))
			break;
		level = atoi(line);
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%d/cache/index%d/shared_cpu_list", cpu, idx);
		if (level <= best_level || read_line(path, line, sizeof(line)) ||
		    xc_cpulist_parse(line, &shared))
			continue;
		best_level = level;
		for (int c = 0; c < XC_MAX_CPUS; c++)
			if (CPU_ISSET(c, &shared)) {
				id = c;
				break;
			}
	}
	return id;
}

static int node_id(int cpu)
{
	char path[96];
	DIR *d;
	struct dirent *e;
	int id = -1 - cpu;	/* a node of its own */

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d", cpu);
	d = opendir(path);
	if (!d)
		return id;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "node", 4) && isdigit((unsigned char)e->d_name[4])) {
			id = atoi(e->d_name + 4);
			break;
		}
	closedir(d);
	return id;
}

void xc_topology_read(struct xc_cpu *c)
{
	c->life.llc_id = llc_id(c->life.cpu);
	c->life.node_id = node_id(c->life.cpu);
}
