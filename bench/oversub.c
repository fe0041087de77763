/* SPDX-License-Identifier: MIT */
/*
 * oversub.c - does anything else run on the benchmarked CPUs? A worker that
 * polls forever owns its CPU; when the hypervisor runs the vCPU elsewhere
 * (steal time), a CPU quota caps the process below its CPU count, the CPUs
 * are emulated, or other tasks share them (a build, a browser, a CPU hog),
 * pollers take turns with the threads that would answer them, and every time
 * measured is a scheduler's time slice, not a call.
 *
 * The quota and the hypervisor are read once, before the first case. Steal
 * and other tasks' time are measured over each subcommand's own run, from
 * the per-CPU lines of /proc/stat: the CPUs' busy share less this process's
 * own (getrusage over the wall time) is what others took. /proc/[pid]/stat before and
 * after names the busiest of them. A run that crossed a threshold, or any
 * run on emulated or quota-capped CPUs, is disturbed: one line on stderr
 * says why, and its records carry the cause (params.disturbed).
 */
#include "bench.h"

#include <ctype.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/*
 * Thresholds, in % of the benchmarked CPUs' time over a run. Beside a CPU
 * hog on every CPU others take 40-90% (half of each CPU a polling worker
 * shares with it, all of it while the worker sleeps); on a quiet machine
 * 0-2% (docs/bench.md). Steal from 2% means the host deschedules the vCPUs
 * for milliseconds at a time, often enough to reach the tails.
 */
#define OTHERS_PCT_MAX 10.0
#define STEAL_PCT_MAX 2.0
/* Below this many ticks of the CPUs' time (0.5 CPU-seconds) a share is noise: 1 tick is 10 ms. */
#define MIN_TICKS 50

struct oversub g_oversub = {.steal_pct = -1, .others_pct = -1};

/* ---- /proc/stat: per CPU, the time tasks ran, the time stolen, all time ---- */

struct cpu_times {
	unsigned long long busy[CPU_SETSIZE], steal[CPU_SETSIZE], total[CPU_SETSIZE];
	cpu_set_t have;         /* CPUs with a line (an offline CPU has none) */
	double own_s;           /* this process's CPU time, seconds */
	uint64_t at;            /* when, now_ns() */
};

static int read_times(struct cpu_times *t)
{
	FILE *f = fopen("/proc/stat", "r");
	char line[512];
	if (!f)
		return -1;
	CPU_ZERO(&t->have);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v[8] = {0};
		int cpu;
		if (strncmp(line, "cpu", 3) || !isdigit((unsigned char)line[3]))
			continue;
		/* user nice system idle iowait irq softirq steal (guest is inside user) */
		if (sscanf(line + 3, "%d %llu %llu %llu %llu %llu %llu %llu %llu", &cpu, &v[0], &v[1],
			   &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) < 9 || cpu < 0 || cpu >= CPU_SETSIZE)
			continue;
		/* tasks' time only: interrupts are not another task, and ours raise some */
		t->busy[cpu] = v[0] + v[1] + v[2];
		t->steal[cpu] = v[7];
		t->total[cpu] = 0;
		for (int i = 0; i < 8; i++)
			t->total[cpu] += v[i];
		CPU_SET(cpu, &t->have);
	}
	fclose(f);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	t->own_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
		   ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) / 1e6;
	t->at = now_ns();
	return CPU_COUNT(&t->have) ? 0 : -1;
}

/* ---- /proc/[pid]/stat: the busiest other process ---- */

struct proc_ticks {
	int pid;
	unsigned long long ticks;       /* utime + stime, every thread's */
};

static struct proc_ticks *procs0;
static size_t nprocs0;

static int by_pid(const void *a, const void *b)
{
	const struct proc_ticks *x = a, *y = b;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* One process's name, CPU ticks and the CPU it last ran on; -1 if gone. */
static int read_proc(int pid, char *comm, size_t size, unsigned long long *ticks, int *cpu)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	/* the name sits in parentheses and may hold spaces and parentheses itself */
	char *l = strchr(buf, '('), *r = strrchr(buf, ')');
	if (!l || !r || r < l)
		return -1;
	if (comm)
		snprintf(comm, size, "%.*s", (int)(r - l - 1), l + 1);
	/* after ")": state(3) ... utime(14) stime(15) ... processor(39) */
	char *p = r + 2, *save;
	unsigned long long ut = 0, st = 0;
	int field = 3;
	*cpu = -1;
	for (char *tok = strtok_r(p, " ", &save); tok; tok = strtok_r(NULL, " ", &save), field++) {
		if (field == 14)
			ut = strtoull(tok, NULL, 10);
		else if (field == 15)
			st = strtoull(tok, NULL, 10);
		else if (field == 39) {
			*cpu = atoi(tok);
			break;
		}
	}
	*ticks = ut + st;
	return 0;
}

/* Every process but this one, with its ticks now, in pid order. */
static struct proc_ticks *scan_procs(size_t *count)
{
	DIR *d = opendir("/proc");
	struct proc_ticks *v = NULL;
	size_t n = 0, cap = 0;
	int self = (int)getpid();
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		int pid = atoi(e->d_name), cpu;
		unsigned long long t;
		if (pid == self || read_proc(pid, NULL, 0, &t, &cpu))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			struct proc_ticks *nv = realloc(v, cap * sizeof(*v));
			if (!nv)
				break;
			v = nv;
		}
		v[n++] = (struct proc_ticks){pid, t};
	}
	if (d)
		closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), by_pid);
	*count = n;
	return v;
}

#define NTOP 3

/* Who took the most CPU time since the run began, among those last seen on the run's CPUs. */
struct top {
	int n;
	struct { char name[32]; int pid; unsigned long long ticks; } p[NTOP];
};

static void top_procs(const cpu_set_t *cpus, struct top *top)
{
	size_t n;
	struct proc_ticks *now = scan_procs(&n);
	top->n = 0;
	for (size_t i = 0; i < n; i++) {
		struct proc_ticks *was = procs0 ? bsearch(&now[i], procs0, nprocs0, sizeof(*procs0), by_pid)
						 : NULL;
		unsigned long long d = was && was->ticks <= now[i].ticks ? now[i].ticks - was->ticks
			: was ? 0 : now[i].ticks;
		int at = top->n;
		while (at > 0 && d > top->p[at - 1].ticks)
			at--;
		if (!d || at == NTOP)
			continue;
		char comm[32];
		unsigned long long t;
		int cpu;
		if (read_proc(now[i].pid, comm, sizeof(comm), &t, &cpu) || cpu < 0 || cpu >= CPU_SETSIZE ||
		    !CPU_ISSET(cpu, cpus))
			continue;
		if (top->n < NTOP)
			top->n++;
		memmove(&top->p[at + 1], &top->p[at], (size_t)(top->n - 1 - at) * sizeof(top->p[0]));
		snprintf(top->p[at].name, sizeof(top->p[at].name), "%s", comm);
		top->p[at].pid = now[i].pid;
		top->p[at].ticks = d;
	}
	free(now);
}

/* ---- the quota ---- */

/* The cgroup's CPU quota in CPUs (cpu.max, or v1's cfs quota), 0 when there is none. */
static double read_quota(void)
{
	char line[128];
	FILE *f = fopen("/sys/fs/cgroup/cpu.max", "r");
	if (f) {
		double q = 0, p = 0;
		char word[32];
		if (fgets(line, sizeof(line), f) && sscanf(line, "%31s %lf", word, &p) == 2 &&
		    strcmp(word, "max") && p > 0)
			q = atof(word) / p;
		fclose(f);
		return q;
	}
	long q = -1, p = 0;
	f = fopen("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "r");
	if (f) {
		if (fscanf(f, "%ld", &q) != 1)
			q = -1;
		fclose(f);
	}
	f = fopen("/sys/fs/cgroup/cpu/cpu.cfs_period_us", "r");
	if (f) {
		if (fscanf(f, "%ld", &p) != 1)
			p = 0;
		fclose(f);
	}
	return q > 0 && p > 0 ? (double)q / (double)p : 0;
}

/* ---- one run ---- */

static cpu_set_t run_cpus;              /* the subcommand's --cpus */
static struct cpu_times t0, t1;         /* at the run's start; the last look */
static bool measuring;
static uint64_t last_look;              /* when oversub_now() last read /proc/stat */
static struct disturb cur;              /* this run's: the largest shares seen so far */
static double worst;                    /* the worst cause's weight so far, for host.disturbed */
static struct disturb runs[64];
static int nruns;

void oversub_prepare(const cpu_set_t *cpus)
{
	run_cpus = *cpus;
	rec_run_start();
}

/* XCALL_BENCH_TEST_LOAD=OTHERS,STEAL: the shares a run reports, for the tests of what follows. */
static bool test_load(double *others, double *steal)
{
	const char *e = getenv("XCALL_BENCH_TEST_LOAD");
	return e && sscanf(e, "%lf,%lf", others, steal) == 2;
}

/* run_cpus's ticks from t0 to t1, summed over the CPUs with a line in both (n of them). */
struct window {
	double busy, steal, total;
	int n;
};

static struct window window_ticks(void)
{
	struct window w = {0};
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &run_cpus) || !CPU_ISSET(c, &t0.have) || !CPU_ISSET(c, &t1.have) ||
		    t1.total[c] < t0.total[c])
			continue;
		w.n++;
		w.busy += (double)(t1.busy[c] - t0.busy[c]);
		w.steal += (double)(t1.steal[c] - t0.steal[c]);
		w.total += (double)(t1.total[c] - t0.total[c]);
	}
	return w;
}

/* Others' and steal's share of run_cpus's time from t0 to t1; false when too little time passed. */
static bool shares(double *others, double *steal)
{
	struct window w = window_ticks();
	if (test_load(others, steal))
		return true;
	double wall = (double)(t1.at - t0.at) / 1e9;
	if (w.total < MIN_TICKS || wall <= 0)
		return false;
	/*
	 * Shares, not ticks: the CPUs' busy share from their ticks, ours from
	 * our CPU seconds over the wall time. Ticks can be lost (an emulator
	 * delivers fewer timer interrupts than it should: 14 s of ticks for a
	 * 24 s loop under TCG), and then ticks and seconds do not compare.
	 */
	double o = w.busy / w.total - (t1.own_s - t0.own_s) / (wall * w.n);
	*others = o > 0 ? 100 * o : 0;
	*steal = 100 * w.steal / w.total;
	return true;
}

/*
 * The cause for d's shares (hog: who took most, or ""), and its weight:
 * emulation and a quota below the workers first, then the larger share past
 * its threshold; 0 when clean.
 */
static double classify(struct disturb *d, const char *hog)
{
	const struct machine *m = machine_get();
	bool others = d->others_pct >= OTHERS_PCT_MAX, steal = d->steal_pct >= STEAL_PCT_MAX;
	d->cause[0] = 0;
	if (m->emulated) {
		snprintf(d->cause, sizeof(d->cause), "emulated CPUs (%s)", m->hypervisor);
		return 1000;
	}
	if (g_oversub.quota_cpus > 0 && g_oversub.quota_cpus < g_oversub.workers) {
		snprintf(d->cause, sizeof(d->cause), "cgroup CPU quota %.2f for %d workers",
			 g_oversub.quota_cpus, g_oversub.workers);
		return 500;
	}
	if (others && (!steal || d->others_pct >= d->steal_pct)) {
		/* under 63 characters, as every string of a record */
		if (!hog[0] || snprintf(d->cause, sizeof(d->cause), "other tasks took %.0f%% of the CPUs (%s)",
					d->others_pct, hog) >= (int)sizeof(d->cause) - 1)
			snprintf(d->cause, sizeof(d->cause), "other tasks took %.0f%% of the CPUs",
				 d->others_pct);
		return d->others_pct;
	}
	if (steal) {
		snprintf(d->cause, sizeof(d->cause), "the hypervisor stole %.0f%% of the CPUs' time",
			 d->steal_pct);
		return d->steal_pct;
	}
	return 0;
}

/*
 * Read /proc/stat into t1. A run shorter than MIN_TICKS of its CPUs' time
 * (debug's cases take 0.2 s) has no share to show: wait until the window
 * since t0 holds MIN_TICKS, so that what else wants the CPUs around the run
 * is still seen. At most 0.25 s on 2 CPUs, once per run; bounded at 1 s
 * where ticks are lost (emulators). -1 when /proc/stat cannot be read.
 */
static int read_window(void)
{
	for (int waited_ms = 0;; waited_ms += 10) {
		if (read_times(&t1))
			return -1;
		if (window_ticks().total >= MIN_TICKS || waited_ms >= 1000)
			return 0;
		nanosleep(&(struct timespec){0, 10000000}, NULL);
	}
}

/* Read /proc/stat and keep the largest shares the run has shown. */
static void look(void)
{
	double o, s;
	if (read_window())
		return;
	last_look = now_ns();
	if (!shares(&o, &s))
		return;
	if (o > cur.others_pct)
		cur.others_pct = o;
	if (s > cur.steal_pct)
		cur.steal_pct = s;
}

void oversub_begin(int workers)
{
	memset(&cur, 0, sizeof(cur));
	cur.others_pct = cur.steal_pct = -1;
	measuring = !read_times(&t0);
	last_look = 0;
	free(procs0);
	procs0 = measuring ? scan_procs(&nprocs0) : NULL;
	if (g_oversub.checked)
		return;
	g_oversub.checked = true;
	g_oversub.workers = workers;
	g_oversub.quota_cpus = read_quota();
	if (g_out.quiet)
		return;
	const struct machine *m = machine_get();
	if (m->emulated)
		fprintf(stderr, "xcall-bench: disturbed: the CPUs are emulated (%s): counts hold, times do not; "
			"every record is marked\n", m->hypervisor);
	else if (g_oversub.quota_cpus > 0 && g_oversub.quota_cpus < workers)
		fprintf(stderr, "xcall-bench: disturbed: the cgroup's CPU quota is %.2f CPUs for %d workers: "
			"polling workers are throttled in turn (times are the quota's periods)\n",
			g_oversub.quota_cpus, workers);
}

const char *oversub_now(void)
{
	if (!measuring)
		return NULL;
	/* a table prints many ratios: one look serves them */
	if (now_ns() - last_look > 100000000)
		look();
	if (!cur.cause[0])
		classify(&cur, "");
	return cur.cause[0] ? cur.cause : NULL;
}

void oversub_end(const char *cmd)
{
	if (!measuring)
		return;
	measuring = false;
	look();
	char hog[48] = "", cpus[64];
	struct top top = {0};
	if (cur.others_pct >= OTHERS_PCT_MAX)
		top_procs(&run_cpus, &top);
	if (top.n)
		snprintf(hog, sizeof(hog), "'%s' pid %d", top.p[0].name, top.p[0].pid);
	free(procs0);
	procs0 = NULL;
	double weight = classify(&cur, hog);
	snprintf(cur.cmd, sizeof(cur.cmd), "%s", cmd);
	if (nruns < (int)(sizeof(runs) / sizeof(runs[0])))
		runs[nruns++] = cur;
	/* the results file keeps the worst run's */
	if (cur.steal_pct > g_oversub.steal_pct)
		g_oversub.steal_pct = cur.steal_pct;
	if (cur.others_pct > g_oversub.others_pct)
		g_oversub.others_pct = cur.others_pct;
	if (cur.cause[0] && weight > worst) {
		worst = weight;
		snprintf(g_oversub.disturbed, sizeof(g_oversub.disturbed), "%s", cur.cause);
	}
	if (cur.cause[0])
		rec_run_disturbed(cur.cause);
	if (g_out.quiet)
		return;
	xc_cpulist_format(&run_cpus, cpus, sizeof(cpus));
	if (cur.others_pct >= OTHERS_PCT_MAX && cur.others_pct >= cur.steal_pct) {
		double total = window_ticks().total;
		fprintf(stderr, "xcall-bench: disturbed: other tasks took %.0f%% of CPUs %s during %s", cur.others_pct,
			cpus, cmd);
		/* the busiest by name: where several share the CPUs, the one you started may be second */
		double named = 0;
		for (int i = 0; i < top.n; i++) {
			double pct = total > 0 ? 100.0 * (double)top.p[i].ticks / total : 0;
			named += pct;
			fprintf(stderr, "%s'%s' pid %d %.0f%%", i ? ", " : " (top: ", top.p[i].name, top.p[i].pid, pct);
		}
		/* a process that ended within the run (a compiler under make) is in no scan */
		bool unnamed = cur.others_pct - named >= OTHERS_PCT_MAX;
		if (unnamed)
			fputs(top.n ? "; the rest by processes that came and went" : " (all by processes that came and went",
			      stderr);
		fputs(top.n || unnamed ? "); its records are marked\n" : "; its records are marked\n",
		      stderr);
	} else if (cur.steal_pct >= STEAL_PCT_MAX) {
		fprintf(stderr, "xcall-bench: disturbed: the hypervisor stole %.0f%% of CPUs %s during %s: the "
			"vCPUs share real CPUs (--poll adaptive yields, forever does not); its records are marked\n",
			cur.steal_pct, cpus, cmd);
	}
}

const struct disturb *oversub_run(int i, const char *cmd)
{
	return i >= 0 && i < nruns && !strcmp(runs[i].cmd, cmd) ? &runs[i] : NULL;
}
