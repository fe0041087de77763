/*
 * topology: xc_call_any picks the nearest online CPU of its mask: the
 * caller's own CPU, then one sharing its last-level cache, then one on its
 * NUMA node, then any. The LLC and node of each CPU are read here from sysfs,
 * apart from the library, and the choice is checked by class (own, LLC, node,
 * farther), from every worker and from a plain thread pinned to each CPU, for
 * the masks all, all but the caller, all but its LLC, all but its node. The
 * chosen CPU is in the mask, is where fn ran, and fn ran once. An empty mask
 * gives -EINVAL, a mask with no CPU of the runtime -ENXIO.
 */
#include "test.h"
#include <pthread.h>
#include <stdatomic.h>

enum { OWN, LLC, NODE, FAR };
static const char *const class_name[] = { "own", "llc", "node", "far" };

static cpu_set_t all;			/* the runtime's CPUs */
static cpu_set_t llc[CPU_SETSIZE];	/* each one's LLC siblings in the runtime */
static cpu_set_t node[CPU_SETSIZE];	/* each one's node in the runtime */
static _Atomic int checks;

/* A sysfs cpulist ("0-3,8"); 0, or -1 if unreadable or malformed. */
static int read_cpulist(const char *path, cpu_set_t *out)
{
	char buf[8192], *p = buf, *end;
	FILE *f = fopen(path, "re");
	bool ok;

	CPU_ZERO(out);
	if (!f)
		return -1;
	ok = fgets(buf, sizeof(buf), f) != NULL;
	fclose(f);
	if (!ok)
		return -1;
	while (*p && *p != '\n') {
		long lo = strtol(p, &end, 10), hi = lo;

		if (end == p)
			return -1;
		p = end;
		if (*p == '-') {
			hi = strtol(p + 1, &end, 10);
			if (end == p + 1)
				return -1;
			p = end;
		}
		if (lo < 0 || hi < lo || hi >= CPU_SETSIZE)
			return -1;
		for (long c = lo; c <= hi; c++)
			CPU_SET((int)c, out);
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -1;
	}
	return 0;
}

/* @cpu's highest-level cache's shared_cpu_list; the CPU alone if there is none. */
static void read_llc(int cpu, cpu_set_t *out)
{
	char path[128], line[32];
	int best_level = -1, best_idx = -1;
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cache", cpu);
	d = opendir(path);
	while (d && (e = readdir(d))) {
		int idx, level;
		FILE *f;

		if (sscanf(e->d_name, "index%d", &idx) != 1)
			continue;
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cache/index%d/level",
			 cpu, idx);
		f = fopen(path, "re");
		if (!f)
			continue;
		level = fgets(line, sizeof(line), f) ? atoi(line) : -1;
		fclose(f);
		/* ties (L1d, L1i) go to the lowest index: readdir's order is arbitrary */
		if (level > best_level || (level == best_level && idx < best_idx)) {
			best_level = level;
			best_idx = idx;
		}
	}
	if (d)
		closedir(d);
	CPU_ZERO(out);
	if (best_idx >= 0) {
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%d/cache/index%d/shared_cpu_list", cpu, best_idx);
		read_cpulist(path, out);
	}
	CPU_SET(cpu, out);
}

/* The node whose cpulist holds @cpu; every CPU when there are no nodes, the CPU alone when none holds it. */
static void read_node(int cpu, cpu_set_t *out)
{
	char path[128];
	struct dirent *e;
	DIR *d = opendir("/sys/devices/system/node");
	bool any = false;

	if (d) {
		while ((e = readdir(d))) {
			int n;

			if (sscanf(e->d_name, "node%d", &n) != 1)
				continue;
			any = true;
			snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", n);
			if (!read_cpulist(path, out) && CPU_ISSET(cpu, out))
				break;
			CPU_ZERO(out);
		}
		closedir(d);
	}
	if (!any)
		*out = all;
	CPU_SET(cpu, out);
}

static int class_of(int ref, int cpu)
{
	if (cpu == ref)
		return OWN;
	if (CPU_ISSET(cpu, &llc[ref]))
		return LLC;
	if (CPU_ISSET(cpu, &node[ref]))
		return NODE;
	return FAR;
}

/* Distinct sets among the runtime's CPUs: those whose lowest member is the CPU itself. */
static int count_sets(cpu_set_t *sets)
{
	int n = 0;

	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &all))
			continue;
		for (int low = 0; low <= c; low++)
			if (CPU_ISSET(low, &sets[c])) {
				n += low == c;
				break;
			}
	}
	return n;
}

struct probe {
	_Atomic int runs, cpu, os_cpu;
};

static void probe(void *arg)
{
	struct probe *p = arg;

	atomic_fetch_add(&p->runs, 1);
	atomic_store(&p->cpu, xc_this_cpu());
	atomic_store(&p->os_cpu, sched_getcpu());
}

static const char *fmt(const cpu_set_t *s, char *buf, size_t n)
{
	if (xc_cpulist_format(s, buf, n) < 0)
		snprintf(buf, n, "(%d CPUs)", CPU_COUNT(s));
	return buf;
}

/* xc_call_any(@mask) from @ref picks a CPU of the nearest class the mask holds. */
static void check_any(int ref, const cpu_set_t *mask, const char *what)
{
	struct probe p = { 0 };
	int want = FAR, got;
	char b1[1024], b2[1024], b3[1024];

	if (CPU_COUNT(mask) == 0)
		return;		/* nothing of the runtime left: no such case here */
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, mask) && class_of(ref, c) < want)
			want = class_of(ref, c);
	got = xc_call_any(mask, probe, &p, XC_WAIT);
	if (got < 0 || got >= CPU_SETSIZE || !CPU_ISSET(got, mask) || class_of(ref, got) != want ||
	    atomic_load(&p.runs) != 1 || atomic_load(&p.cpu) != got ||
	    atomic_load(&p.os_cpu) != got) {
		fprintf(stderr, "topology: from CPU %d (%s), mask %s (%s): got %d (%s), want a %s CPU; "
			"fn ran %d times, on worker %d, OS CPU %d; llc %s, node %s\n",
			ref, xc_this_cpu() < 0 ? "plain thread" : "worker", what,
			fmt(mask, b1, sizeof(b1)), got,
			got < 0 ? strerror(-got) : class_name[class_of(ref, got)], class_name[want],
			atomic_load(&p.runs), atomic_load(&p.cpu), atomic_load(&p.os_cpu),
			fmt(&llc[ref], b2, sizeof(b2)), fmt(&node[ref], b3, sizeof(b3)));
		exit(T_FAIL);
	}
	atomic_fetch_add(&checks, 1);
}

static void check_from(int ref)
{
	cpu_set_t m;

	check_any(ref, &all, "all");
	m = all;
	CPU_CLR(ref, &m);
	check_any(ref, &m, "all but own");
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &llc[ref]))
			CPU_CLR(c, &m);
	check_any(ref, &m, "all but llc");
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &node[ref]))
			CPU_CLR(c, &m);
	check_any(ref, &m, "all but node");
}

static void from_worker(void *arg)
{
	int cpu = (int)(long)arg;

	CHECK(xc_this_cpu() == cpu && sched_getcpu() == cpu);
	check_from(cpu);
}

/* A plain thread: its reference is the CPU it is pinned to. */
static void *from_thread(void *arg)
{
	int pinned = 0;

	CHECK(xc_this_cpu() == -1);
	for (int c = 0; c < CPU_SETSIZE; c++) {
		cpu_set_t one;

		if (!CPU_ISSET(c, &all))
			continue;
		CPU_ZERO(&one);
		CPU_SET(c, &one);
		if (sched_setaffinity(0, sizeof(one), &one))
			continue;
		CHECK(sched_getcpu() == c);
		check_from(c);
		pinned++;
	}
	CHECK(pinned > 0);
	return NULL;
}

int main(void)
{
	struct probe p = { 0 };
	pthread_t t;
	cpu_set_t m;
	int ncpu, outside = -1;

	CHECK_RET(xc_init(NULL), 0);
	ncpu = xc_online_mask(&all);
	CHECK(ncpu > 0);
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &all))
			continue;
		read_llc(c, &llc[c]);
		read_node(c, &node[c]);
		/* CPUs outside the runtime are never chosen: leave them out of the classes */
		CPU_AND(&llc[c], &llc[c], &all);
		CPU_AND(&node[c], &node[c], &all);
	}

	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &all))
			CHECK_RET(xc_call_single(c, from_worker, (void *)(long)c, XC_WAIT), 0);
	CHECK(pthread_create(&t, NULL, from_thread, NULL) == 0);
	CHECK(pthread_join(t, NULL) == 0);

	CPU_ZERO(&m);
	CHECK_RET(xc_call_any(&m, probe, &p, XC_WAIT), -EINVAL);
	for (int c = 0; c < CPU_SETSIZE && outside < 0; c++)
		if (!CPU_ISSET(c, &all))
			outside = c;
	if (outside >= 0) {
		CPU_SET(outside, &m);
		CHECK_RET(xc_call_any(&m, probe, &p, XC_WAIT), -ENXIO);
	}
	CHECK(atomic_load(&p.runs) == 0);
	CHECK_RET(xc_exit(), 0);

	printf("topology: %d CPUs, %d LLCs, %d nodes, %d checks passed\n",
	       ncpu, count_sets(llc), count_sets(node), atomic_load(&checks) + 1 + (outside >= 0));
	return T_PASS;
}
