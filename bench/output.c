/* SPDX-License-Identifier: MIT */
/*
 * output.c - the run's records and their three forms: the results file
 * (docs/results-format.md, schema_version 1), CSV, and a human table.
 */
#include "bench.h"
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TOOL_VERSION "0.1"

static struct rec *head, *tail;
/* --case-limit stops counted so far when the current progress step began */
static long step_capped;
/* the last record before the current subcommand's run */
static struct rec *run_mark;

static long capped_now(void)
{
	return atomic_load_explicit(&g_plan.capped, memory_order_relaxed);
}

void rec_step(void)
{
	step_capped = capped_now();
}

struct rec *rec_new(const char *bench, const char *kase, const char *unit,
		    const char *better, int repeat)
{
	struct rec *r = calloc(1, sizeof(*r));
	if (!r) {
		perror("xcall-bench: out of memory");
		exit(1);
	}
	snprintf(r->bench, sizeof(r->bench), "%s", bench);
	snprintf(r->kase, sizeof(r->kase), "%s", kase);
	snprintf(r->unit, sizeof(r->unit), "%s", unit);
	snprintf(r->better, sizeof(r->better), "%s", better);
	r->repeat = repeat;
	if (tail)
		tail->next = r;
	else
		head = r;
	tail = r;
	/* a loop of this step stopped before its count: what follows of it is short */
	if (capped_now() > step_capped)
		rec_param_b(r, "capped", true);
	return r;
}

void rec_hist(struct rec *r, const struct hist *h)
{
	hist_stats(h, &r->s);
	r->has_min_stddev = true;
}

void rec_value(struct rec *r, double v)
{
	r->s = (struct hist_stats){.n = 1, .mean = v, .min = v, .p50 = v, .p90 = v, .p99 = v, .max = v};
	r->has_min_stddev = false;
}

void rec_cpus(struct rec *r, const cpu_set_t *set)
{
	r->cpus = *set;
	r->has_cpus = true;
}

void rec_cpu_list(struct rec *r, const int *cpus, int n)
{
	CPU_ZERO(&r->cpus);
	for (int i = 0; i < n; i++)
		CPU_SET(cpus[i], &r->cpus);
	r->has_cpus = true;
}

static struct kv *kv_slot(struct kv *tab, int *n, const char *key)
{
	for (int i = 0; i < *n; i++)
		if (!strcmp(tab[i].key, key))
			return &tab[i];
	if (*n == REC_MAX_KV) {
		/* a bench that writes more than a record holds: a defect, not data to drop quietly */
		fprintf(stderr, "xcall-bench: a record holds %d params and %d counters; %s is one more\n",
			REC_MAX_KV, REC_MAX_KV, key);
		abort();
	}
	struct kv *k = &tab[(*n)++];
	memset(k, 0, sizeof(*k));
	snprintf(k->key, sizeof(k->key), "%s", key);
	return k;
}

void rec_param_i(struct rec *r, const char *key, long long v)
{
	struct kv *k = kv_slot(r->params, &r->nparams, key);
	if (k)
		k->type = 'i', k->i = v;
}

void rec_param_d(struct rec *r, const char *key, double v)
{
	struct kv *k = kv_slot(r->params, &r->nparams, key);
	if (k)
		k->type = 'd', k->d = v;
}

void rec_param_s(struct rec *r, const char *key, const char *v)
{
	struct kv *k = kv_slot(r->params, &r->nparams, key);
	if (k) {
		k->type = 's';
		snprintf(k->s, sizeof(k->s), "%s", v);
	}
}

void rec_param_b(struct rec *r, const char *key, bool v)
{
	struct kv *k = kv_slot(r->params, &r->nparams, key);
	if (k)
		k->type = 'b', k->i = v;
}

static void rec_param_del(struct rec *r, const char *key)
{
	for (int i = 0; i < r->nparams; i++)
		if (!strcmp(r->params[i].key, key)) {
			memmove(&r->params[i], &r->params[i + 1],
				(size_t)(r->nparams - i - 1) * sizeof(r->params[0]));
			r->nparams--;
			return;
		}
}

void rec_counter(struct rec *r, const char *key, long long v)
{
	struct kv *k = kv_slot(r->counters, &r->ncounters, key);
	if (k)
		k->type = 'i', k->i = v;
}

long long rec_counter_get(const struct rec *r, const char *key, long long dflt)
{
	for (int i = 0; i < r->ncounters; i++)
		if (!strcmp(r->counters[i].key, key))
			return r->counters[i].i;
	return dflt;
}

double rec_param_get(const struct rec *r, const char *key, double dflt)
{
	for (int i = 0; i < r->nparams; i++)
		if (!strcmp(r->params[i].key, key))
			return r->params[i].type == 'd' ? r->params[i].d : (double)r->params[i].i;
	return dflt;
}

const char *rec_param_str(const struct rec *r, const char *key)
{
	for (int i = 0; i < r->nparams; i++)
		if (!strcmp(r->params[i].key, key))
			return r->params[i].type == 's' ? r->params[i].s : NULL;
	return NULL;
}

struct rec *rec_skipped(const char *bench, const char *kase, const char *why, int repeat)
{
	struct rec *r = rec_new(bench, kase, "ns", "lower", repeat);

	if (!g_out.quiet)
		fprintf(stderr, "xcall-bench %s: %s skipped: %s\n", bench, kase, why);
	rec_value(r, 0);
	r->s.n = 0;
	rec_param_del(r, "capped");     /* nothing ran, so nothing was cut */
	rec_param_s(r, "skipped", why);
	return r;
}

bool rec_capped(const struct rec *r)
{
	return r && rec_param_get(r, "capped", 0) != 0;
}

static bool rec_disturbed(const struct rec *r)
{
	return r && rec_param_str(r, "disturbed");
}

void rec_ratio_of(struct rec *x, const struct rec *a, const struct rec *b)
{
	if (rec_capped(a) || rec_capped(b))
		rec_param_b(x, "capped", true);
	else
		rec_param_del(x, "capped");     /* not the step's: its sources say */
	const struct rec *d = rec_disturbed(a) ? a : rec_disturbed(b) ? b : NULL;
	if (d)
		rec_param_s(x, "disturbed", rec_param_str(d, "disturbed"));
}

const char *ratio_mark(const struct rec *a, const struct rec *b)
{
	bool capped = rec_capped(a) || rec_capped(b);
	bool disturbed = rec_disturbed(a) || rec_disturbed(b) || oversub_now();

	return capped && disturbed ? " (capped, disturbed)" : capped ? " (capped)" :
	       disturbed ? " (disturbed)" : "";
}

const char *fmt_ratio(char *buf, size_t size, const char *fmt, double v, const struct rec *a,
		      const struct rec *b)
{
	int n = snprintf(buf, size, fmt, v);
	if (n >= 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, "%s", ratio_mark(a, b));
	return buf;
}

void rec_run_start(void)
{
	run_mark = tail;
}

void rec_run_disturbed(const char *cause)
{
	for (struct rec *r = run_mark ? run_mark->next : head; r; r = r->next)
		if (!rec_param_str(r, "skipped"))
			rec_param_s(r, "disturbed", cause);
}

struct rec *rec_first(void) { return head; }
struct rec *rec_last(void) { return tail; }

struct rec *rec_find(const char *bench, const char *kase, int repeat)
{
	for (struct rec *r = head; r; r = r->next)
		if (!strcmp(r->bench, bench) && !strcmp(r->kase, kase) && r->repeat == repeat)
			return r;
	return NULL;
}

/* ---- JSON ---- */

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/*
 * @v in the fewest significant digits that read back as @v (15 to 17), so
 * that a file holds what was measured: six digits turned a p99 of
 * 10387463.5 ns into 10387500, above its exact max of 10387464.
 */
static const char *num_exact(double v, char *buf, size_t size)
{
	for (int digits = 15; digits < 17; digits++) {
		snprintf(buf, size, "%.*g", digits, v);
		if (strtod(buf, NULL) == v)
			return buf;
	}
	snprintf(buf, size, "%.17g", v);
	return buf;
}

/* JSON has no NaN or infinity; a statistic that is not finite becomes null. */
static void json_num(FILE *f, double v)
{
	char buf[32];

	if (v != v || v > 1e300 || v < -1e300)
		fputs("null", f);
	else if (v == (double)(long long)v && v < 9e15 && v > -9e15)
		fprintf(f, "%lld", (long long)v);
	else
		fputs(num_exact(v, buf, sizeof(buf)), f);
}

static void json_kvs(FILE *f, const struct kv *t, int n)
{
	fputc('{', f);
	for (int i = 0; i < n; i++) {
		if (i)
			fputs(", ", f);
		json_str(f, t[i].key);
		fputs(": ", f);
		switch (t[i].type) {
		case 'i': fprintf(f, "%lld", t[i].i); break;
		case 'd': json_num(f, t[i].d); break;
		case 'b': fputs(t[i].i ? "true" : "false", f); break;
		default: json_str(f, t[i].s); break;
		}
	}
	fputc('}', f);
}

/* A percentage to one decimal: ticks do not say more. */
static double round1(double v)
{
	return v < 0 ? v : (double)(long long)(v * 10 + 0.5) / 10;
}

/* Each subcommand's time against the bound it printed before it ran (plan.c). */
static void json_plans(FILE *f)
{
	const struct plan_done *d;
	int n = plan_done_list(&d);
	fputs("  \"plans\": [", f);
	for (int i = 0; i < n; i++) {
		fputs(i ? ",\n    {\"bench\": " : "\n    {\"bench\": ", f);
		json_str(f, d[i].cmd);
		fprintf(f, ", \"cases\": %ld, \"bound_s\": ", d[i].cases);
		json_num(f, d[i].bound_s);
		fputs(", \"wall_s\": ", f);
		json_num(f, d[i].wall_s);
		fprintf(f, ", \"capped_loops\": %ld", d[i].capped);
		/* what else ran on its CPUs (oversub.c), when it was measured */
		const struct disturb *db = oversub_run(i, d[i].cmd);
		if (db && db->others_pct >= 0) {
			fputs(", \"others_pct\": ", f);
			json_num(f, round1(db->others_pct));
			fputs(", \"steal_pct\": ", f);
			json_num(f, round1(db->steal_pct));
		}
		if (db && db->cause[0]) {
			fputs(", \"disturbed\": ", f);
			json_str(f, db->cause);
		}
		fputc('}', f);
	}
	fputs(n ? "\n  ],\n" : "],\n", f);
}

static void json_host(FILE *f)
{
	const struct machine *m = machine_get();
	fputs("  \"host\": {\"hostname\": ", f);
	json_str(f, m->hostname);
	fputs(", \"cpu_model\": ", f);
	json_str(f, m->cpu_model);
	fprintf(f, ", \"cpus_online\": %d, \"cores\": %d, ", m->cpus_online, m->cores);
	if (g_oversub.checked) {
		/*
		 * what oversub.c saw: the most steal and the largest share other
		 * tasks took of any run, the cgroup's quota, the worst cause
		 */
		fputs("\"steal_pct\": ", f);
		json_num(f, round1(g_oversub.steal_pct));
		fputs(", \"others_pct\": ", f);
		json_num(f, round1(g_oversub.others_pct));
		fputs(", \"cpu_quota\": ", f);
		json_num(f, g_oversub.quota_cpus);
		fputs(", ", f);
		if (g_oversub.disturbed[0]) {
			fputs("\"disturbed\": ", f);
			json_str(f, g_oversub.disturbed);
			fputs(", ", f);
		}
	}
	fprintf(f, "\"emulated\": %s, ", m->emulated ? "true" : "false");
	fputs("\"kernel\": ", f);
	json_str(f, m->kernel);
	fprintf(f, ", \"virtualised\": %s, \"hypervisor\": ", m->virtualised ? "true" : "false");
	if (m->virtualised)
		json_str(f, m->hypervisor);
	else
		fputs("null", f);
	fputs(", \"idle_driver\": ", f);
	json_str(f, m->idle_driver);
	fputs(", \"idle_governor\": ", f);
	json_str(f, m->idle_governor);
	fputs(", \"clocksource\": ", f);
	json_str(f, m->clocksource);
	fprintf(f, ", \"tsc_invariant\": %s, \"timer\": \"%s\", \"timer_floor_ns\": %.1f},\n",
		m->tsc_invariant ? "true" : "false", g_tsc_ok ? "tsc" : "monotonic", timer_floor_ns());
}

static void json_rec(FILE *f, const struct rec *r)
{
	fputs("    {\"bench\": ", f);
	json_str(f, r->bench);
	fputs(", \"case\": ", f);
	json_str(f, r->kase);
	fputs(", \"unit\": ", f);
	json_str(f, r->unit);
	fprintf(f, ", \"n\": %llu", (unsigned long long)r->s.n);
	const char *names[] = {"mean", "p50", "p90", "p99", "max"};
	const double vals[] = {r->s.mean, r->s.p50, r->s.p90, r->s.p99, r->s.max};
	for (int i = 0; i < 5; i++) {
		fprintf(f, ", \"%s\": ", names[i]);
		json_num(f, vals[i]);
	}
	if (r->has_min_stddev) {
		fputs(", \"min\": ", f);
		json_num(f, r->s.min);
		fputs(", \"stddev\": ", f);
		json_num(f, r->s.stddev);
	}
	fprintf(f, ", \"repeat\": %d", r->repeat);
	if (r->has_cpus) {
		fputs(", \"cpus\": [", f);
		int first = 1;
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &r->cpus)) {
				fprintf(f, first ? "%d" : ", %d", c);
				first = 0;
			}
		fputc(']', f);
	}
	fputs(", \"params\": ", f);
	json_kvs(f, r->params, r->nparams);
	fputs(", \"counters\": ", f);
	json_kvs(f, r->counters, r->ncounters);
	fputs(", \"better\": ", f);
	json_str(f, r->better);
	fputc('}', f);
}

/* The directory out_write_json() creates path in, and whether it must create it. */
static void json_dir(const char *path, char *dir, size_t size)
{
	snprintf(dir, size, "%s", path);
	char *slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, size, ".");
	else if (slash == dir)
		dir[1] = 0;
	else
		*slash = 0;
}

int out_json_writable(const char *path, char *why, size_t size)
{
	struct stat st;
	char dir[4096];

	if (!*path) {
		snprintf(why, size, "empty file name");
		return -EINVAL;
	}
	if (!stat(path, &st)) {
		if (S_ISDIR(st.st_mode)) {
			snprintf(why, size, "it is a directory");
			return -EISDIR;
		}
		/* a device or a pipe is written in place; a file is replaced */
		if (!S_ISREG(st.st_mode)) {
			if (access(path, W_OK)) {
				snprintf(why, size, "%s", strerror(errno));
				return -errno;
			}
			return 0;
		}
	}
	json_dir(path, dir, sizeof(dir));
	if (stat(dir, &st)) {
		/* one missing level is made (results/ on a fresh checkout), no more */
		int err = errno;
		char parent[4096];
		json_dir(dir, parent, sizeof(parent));
		if (err != ENOENT || stat(parent, &st) || !S_ISDIR(st.st_mode) ||
		    access(parent, W_OK | X_OK)) {
			snprintf(why, size, "directory %s: %s", dir, strerror(err));
			return -err;
		}
		return 0;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(why, size, "%s is not a directory", dir);
		return -ENOTDIR;
	}
	/* a temporary file is written beside it and renamed over it */
	if (access(dir, W_OK | X_OK)) {
		snprintf(why, size, "directory %s: %s", dir, strerror(errno));
		return -errno;
	}
	/*
	 * access() answers yes to root everywhere, and knows nothing of file
	 * systems that refuse new files (/proc, a read-only mount): make the
	 * temporary file once and take it away.
	 */
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (fd < 0 && errno != EEXIST) {
		snprintf(why, size, "cannot create %s: %s", tmp, strerror(errno));
		return -errno;
	}
	if (fd >= 0) {
		close(fd);
		unlink(tmp);
	}
	return 0;
}

int out_write_json(const char *path, int argc, char **argv)
{
	char tmp[4096];
	struct stat st;
	/* a device or a pipe (/dev/stdout) is written in place, never replaced */
	bool in_place = !stat(path, &st) && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
	snprintf(tmp, sizeof(tmp), "%s%s", path, in_place ? "" : ".tmp");
	/* results/ may not exist yet on a fresh checkout. */
	char dir[4096];
	json_dir(path, dir, sizeof(dir));
	if (!in_place)
		mkdir(dir, 0777);
	FILE *f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "xcall-bench: cannot write %s: %s\n", tmp, strerror(errno));
		return -errno;
	}
	char created[32];
	time_t now = time(NULL);
	strftime(created, sizeof(created), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	fprintf(f, "{\n  \"schema_version\": 1,\n  \"tool\": \"xcall-bench\",\n"
		   "  \"tool_version\": \"%s\",\n  \"created\": \"%s\",\n  \"command\": [",
		TOOL_VERSION, created);
	for (int i = 0; i < argc; i++) {
		if (i)
			fputs(", ", f);
		/* argv[0] is a path; the format wants the tool's name. */
		json_str(f, i ? argv[i] : "xcall-bench");
	}
	fputs("],\n", f);
	json_host(f);
	json_plans(f);
	fputs("  \"results\": [\n", f);
	for (struct rec *r = head; r; r = r->next) {
		json_rec(f, r);
		fputs(r->next ? ",\n" : "\n", f);
	}
	fputs("  ]\n}\n", f);
	if (fclose(f) || (!in_place && rename(tmp, path))) {
		fprintf(stderr, "xcall-bench: cannot write %s: %s\n", path, strerror(errno));
		if (!in_place)
			unlink(tmp);
		return -EIO;
	}
	return 0;
}

/* ---- CSV and tables ---- */

void out_csv(FILE *f, struct rec *from)
{
	fputs("bench,case,unit,n,mean,stddev,p50,p90,p99,max,min,repeat\n", f);
	for (struct rec *r = from ? from : head; r; r = r->next) {
		const double v[] = {r->s.mean, r->s.stddev, r->s.p50, r->s.p90, r->s.p99, r->s.max, r->s.min};
		char buf[32];

		fprintf(f, "%s,%s,%s,%llu", r->bench, r->kase, r->unit, (unsigned long long)r->s.n);
		for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
			fprintf(f, ",%s", num_exact(v[i], buf, sizeof(buf)));
		fprintf(f, ",%d\n", r->repeat);
	}
}

const char *fmt_ns(double ns, char *buf, size_t size)
{
	if (ns < 1e4)
		snprintf(buf, size, "%.0f ns", ns);
	else if (ns < 1e7)
		snprintf(buf, size, "%.2f us", ns / 1e3);
	else if (ns < 1e10)
		snprintf(buf, size, "%.2f ms", ns / 1e6);
	else
		snprintf(buf, size, "%.2f s", ns / 1e9);
	return buf;
}

static const char *fmt_val(const struct rec *r, double v, char *buf, size_t size)
{
	if (!strcmp(r->unit, "ns"))
		return fmt_ns(v, buf, size);
	if (!strcmp(r->unit, "s"))
		return fmt_ns(v * 1e9, buf, size);
	snprintf(buf, size, "%.4g %s", v, r->unit);
	return buf;
}

void out_table(FILE *f, struct rec *from, const char *title)
{
	if (title)
		fprintf(f, "\n%s\n", title);
	fprintf(f, "%-34s %4s %9s %11s %11s %11s %11s %11s\n", "case", "rep", "n", "mean", "p50",
		"p90", "p99", "max");
	for (struct rec *r = from ? from : head; r; r = r->next) {
		char b[5][32];
		fprintf(f, "%-34s %4d %9llu %11s %11s %11s %11s %11s\n", r->kase, r->repeat,
			(unsigned long long)r->s.n, fmt_val(r, r->s.mean, b[0], 32),
			fmt_val(r, r->s.p50, b[1], 32), fmt_val(r, r->s.p90, b[2], 32),
			fmt_val(r, r->s.p99, b[3], 32), fmt_val(r, r->s.max, b[4], 32));
	}
}

void out_header(void)
{
	if (g_out.header_done || g_out.quiet || g_out.csv)
		return;
	g_out.header_done = true;
	out_machine(stdout);
}

void out_machine(FILE *f)
{
	const struct machine *m = machine_get();
	fprintf(f, "machine: %s, %d CPUs online (%d cores), kernel %s\n", m->cpu_model,
		m->cpus_online, m->cores, m->kernel);
	fprintf(f, "         %s%s%s%s, idle driver %s (%s), clocksource %s, TSC %s\n",
		m->virtualised ? "virtualised (" : "bare metal",
		m->virtualised ? m->hypervisor : "", m->virtualised ? ")" : "",
		m->emulated ? ", emulated CPUs: times mean nothing" : "", m->idle_driver,
		m->idle_governor[0] ? m->idle_governor : "-", m->clocksource,
		m->tsc_invariant ? "invariant" : "not invariant");
	fprintf(f, "         timer %s, floor %.0f ns subtracted from each timed operation\n",
		g_tsc_ok ? "TSC (lfence; rdtsc)" : "CLOCK_MONOTONIC", timer_floor_ns());
}
