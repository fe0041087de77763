/* SPDX-License-Identifier: MIT */
/*
 * heatmap.c - CPU by CPU round trips, in the style of core-to-core-latency:
 * a waiting libxcall call from the worker of row CPU to a polling worker on
 * column CPU, and the cache-line ping-pong between the same two CPUs (the
 * limit: store/load and CAS, the lower kept). Both are timed in spans of
 * PAIR_SPAN back-to-back round trips, one sample a span. --pairs picks the CPUs that take part (every ordered pair of them is
 * measured), so that a big machine can be sampled; after the matrices, a
 * summary by topology class (SMT siblings, same LLC, same node, across nodes).
 * --csv prints the two matrices (p50, ns) and the summary instead of tables.
 */
#include "baselines.h"
#include "topo.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { O_PAIRS = 1 };
enum pairs_kind { PAIRS_ALL, PAIRS_EVERY, PAIRS_CORE, PAIRS_LLC, PAIRS_NODE };

struct hm_cfg {
	const char *pairs;      /* --pairs as given, for the records */
	enum pairs_kind kind;
	long every;
};

static const char cmd_name[] = "heatmap";
static const char *const kinds[] = {"cacheline", "libxcall"};  /* by k in the loop */

static const struct cmd_opt heatmap_opts[] = {
	{"pairs", required_argument, O_PAIRS, "SPEC    the CPUs of --cpus that take part, every ordered pair of them measured:\n"
	 "                  all (default), every:K (every K-th CPU), or one CPU per core, llc or node"},
	{0},
};

static int on_opt(int id, const char *arg, void *ctx)
{
	static const char *const names[] = {
		[PAIRS_ALL] = "all", [PAIRS_CORE] = "core", [PAIRS_LLC] = "llc", [PAIRS_NODE] = "node",
	};
	struct hm_cfg *c = ctx;

	if (id != O_PAIRS)
		return -1;
	c->pairs = arg;
	c->every = 1;
	if (!strncmp(arg, "every:", 6)) {
		c->kind = PAIRS_EVERY;
		if (!parse_long(arg + 6, 1, CPU_SETSIZE, &c->every))
			return 0;
	}
	for (int i = 0; i < (int)(sizeof(names) / sizeof(names[0])); i++)
		if (names[i] && !strcmp(arg, names[i])) {
			c->kind = (enum pairs_kind)i;
			return 0;
		}
	/* the syntax in the message: a bare "bad value" would send the user to --help */
	cli_fail(cmd_name, "bad --pairs '%s': expected all, every:K (K >= 1), core, llc or node", arg);
}

static const struct cmd_desc desc = {
	.name = cmd_name,
	.summary = "CPU x CPU round-trip matrix: libxcall waiting calls and the cache-line limit",
	.opts = heatmap_opts,
	.on_opt = on_opt,
	.default_iters = 20000,
};

/* The CPUs of --cpus that --pairs keeps, in order; returns how many. */
static int choose_cpus(const struct hm_cfg *c, const struct bopts *o, const struct topo_cpu *t,
		       int *out)
{
	int n = 0;
	switch (c->kind) {
	case PAIRS_CORE:
		return topo_one_per(t, o->cpu, o->ncpus, TOPO_CORE, out);
	case PAIRS_LLC:
		return topo_one_per(t, o->cpu, o->ncpus, TOPO_LLC, out);
	case PAIRS_NODE:
		return topo_one_per(t, o->cpu, o->ncpus, TOPO_NODE, out);
	default:
		for (int i = 0; i < o->ncpus; i += (int)c->every)
			out[n++] = o->cpu[i];
		return n;
	}
}

/* The record of one cell: repeat, kind (cacheline, libxcall), row, column. */
static struct rec **cell(struct rec **cells, int n, int rep, int k, int i, int j)
{
	return &cells[(((size_t)rep * 2 + (size_t)k) * (size_t)n + (size_t)i) * (size_t)n + (size_t)j];
}

static void print_matrix(struct rec **cells, const int *cpu, int n, int k, int rep, bool csv)
{
	/* past 16 CPUs, narrow columns: 4 digits, in us when ns would need more */
	bool compact = !csv && n > 16;
	int w = compact ? 5 : 8, lw = compact ? 5 : 6, prec = 0;
	double div = 1, top = 0;
	const char *unit = "ns";

	for (int i = 0; compact && i < n; i++)
		for (int j = 0; j < n; j++) {
			struct rec *r = *cell(cells, n, rep, k, i, j);
			if (r && r->s.p50 > top)
				top = r->s.p50;
		}
	if (top >= 9999.5) {
		div = 1e3;
		unit = "us";
		prec = top < 99950 ? 1 : 0;
	}
	if (csv)
		printf("%s p50 ns,", kinds[k]);
	else
		printf("\n%s round trip p50 (%s), row = from, column = to\n%*s", kinds[k], unit, lw, "");
	for (int j = 0; j < n; j++) {
		if (csv)
			printf("%d%s", cpu[j], j + 1 < n ? "," : "");
		else
			printf("%*d", w, cpu[j]);
	}
	printf("\n");
	for (int i = 0; i < n; i++) {
		if (csv)
			printf("%d,", cpu[i]);
		else
			printf("%*d", lw, cpu[i]);
		for (int j = 0; j < n; j++) {
			struct rec *r = *cell(cells, n, rep, k, i, j);
			const char *sep = csv && j + 1 < n ? "," : "";
			if (r && csv)
				printf("%.0f%s", r->s.p50, sep);
			else if (r)
				printf("%*.*f", w, prec, r->s.p50 / div);
			else if (csv)
				printf("%s", sep);
			else
				printf("%*s", w, "-");
		}
		printf("\n");
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/*
 * The statistics of v[0..n) themselves, by the nearest rank as hist_quantile()
 * takes them: a histogram would round the pairs' p50 that the matrices show.
 */
static void rec_spread(struct rec *r, double *v, int n)
{
	double sum = 0, sq = 0;
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	for (int i = 0; i < n; i++)
		sum += v[i];
	double mean = sum / n;
	for (int i = 0; i < n; i++)
		sq += (v[i] - mean) * (v[i] - mean);
	int q50 = (n + 1) / 2, q90 = (int)ceil(0.9 * n), q99 = (int)ceil(0.99 * n);
	r->s = (struct hist_stats){
		.n = (uint64_t)n, .mean = mean, .stddev = sqrt(sq / n), .min = v[0],
		.p50 = v[q50 - 1], .p90 = v[q90 - 1], .p99 = v[q99 - 1], .max = v[n - 1],
	};
	r->has_min_stddev = true;
}

/*
 * Per topology class, the spread of the pairs' p50: one record for each kind,
 * n = the pairs of that class, min / p50 / max over their p50.
 */
static void summarise(struct rec **cells, const int *cpu, int n, int rep, const struct topo_cpu *t,
		      const char *pairs, double *v)
{
	for (int k = 0; k < 2; k++)
		for (int cls = 0; cls < TOPO_NCLASSES; cls++) {
			cpu_set_t set;
			int m = 0;
			CPU_ZERO(&set);
			for (int i = 0; i < n; i++)
				for (int j = 0; j < n; j++) {
					struct rec *r = *cell(cells, n, rep, k, i, j);
					if (!r || (int)topo_class(t, cpu[i], cpu[j]) != cls)
						continue;
					v[m++] = r->s.p50;
					CPU_SET(cpu[i], &set);
					CPU_SET(cpu[j], &set);
				}
			if (!m)
				continue;
			char name[64];
			snprintf(name, sizeof(name), "summary/%s/%s", kinds[k], topo_class_name(cls));
			struct rec *r = rec_new("heatmap", name, "ns", "lower", rep);
			rec_spread(r, v, m);
			rec_cpus(r, &set);
			rec_param_s(r, "pairs", pairs);
			rec_param_s(r, "class", topo_class_name(cls));
			rec_param_s(r, "of", "p50 of each pair");
		}
}

static void print_summary(int rep, bool csv)
{
	if (csv)
		printf("class,pairs,libxcall min ns,libxcall p50 ns,libxcall max ns,"
		       "cacheline min ns,cacheline p50 ns,cacheline max ns\n");
	else
		printf("\nby topology class: min / p50 / max of the pairs' p50 (ns)\n"
		       "%-10s %6s  %12s %7s %7s  %13s %7s %7s\n", "class", "pairs",
		       "libxcall min", "p50", "max", "cacheline min", "p50", "max");
	for (int cls = 0; cls < TOPO_NCLASSES; cls++) {
		struct rec *r[2];
		for (int k = 0; k < 2; k++) {
			char name[64];
			snprintf(name, sizeof(name), "summary/%s/%s", kinds[k], topo_class_name(cls));
			r[k] = rec_find("heatmap", name, rep);
		}
		if (!r[0] || !r[1])
			continue;
		printf(csv ? "%s,%llu,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f\n"
			   : "%-10s %6llu  %12.0f %7.0f %7.0f  %13.0f %7.0f %7.0f\n",
		       topo_class_name(cls), (unsigned long long)r[1]->s.n,
		       r[1]->s.min, r[1]->s.p50, r[1]->s.max, r[0]->s.min, r[0]->s.p50, r[0]->s.max);
	}
}

int cmd_heatmap(int argc, char **argv)
{
	static struct topo_cpu topo[CPU_SETSIZE];
	static int cpu[CPU_SETSIZE];
	struct hm_cfg cfg = {.pairs = "all", .kind = PAIRS_ALL, .every = 1};
	struct bopts o;
	cli_parse(&desc, argc, argv, &o, &cfg);
	if (o.ncpus < 2)
		cli_fail(desc.name, "%s", cli_too_few_cpus(&o, 2));
	topo_read(&o.cpus, topo, NULL);
	int ncpu = choose_cpus(&cfg, &o, topo, cpu);
	if (ncpu < 2)
		cli_fail(desc.name, "--pairs %s keeps %d of the %d CPUs in --cpus (%s): needs 2",
			 cfg.pairs, ncpu, o.ncpus, o.cpulist);
	struct rec **cells = calloc((size_t)o.repeat * 2 * (size_t)ncpu * (size_t)ncpu, sizeof(*cells));
	double *spread = malloc((size_t)ncpu * (size_t)ncpu * sizeof(*spread));
	if (!cells || !spread) {
		fprintf(stderr, "xcall-bench heatmap: out of memory for %d x %d CPUs\n", ncpu, ncpu);
		return 1;
	}
	long poll = o.poll_set ? o.poll_ns : XC_POLL_FOREVER;
	struct hist h, h2;
	if (hist_init(&h) || hist_init(&h2))
		return 1;
	/* a pair is two cases, the limit and a libxcall runtime of its two CPUs */
	plan_cases((long)o.repeat * ncpu * (ncpu - 1), 2 * plan_case_s(&o));      /* store/load and CAS */
	plan_cases((long)o.repeat * ncpu * (ncpu - 1), plan_case_s(&o) + plan_start_cost(2));
	plan_start(ncpu < o.ncpus ? "(--pairs sampled)" : NULL);
	for (int rep = 0; rep < o.repeat; rep++) {
		for (int i = 0; i < ncpu; i++)
			for (int j = 0; j < ncpu; j++) {
				if (i == j)
					continue;
				int a = cpu[i], b = cpu[j];
				const char *cls = topo_class_name(topo_class(topo, a, b));
				for (int k = 0; k < 2; k++) {
					struct budget bud;
					budget_init(&bud, &o, desc.default_iters);
					bud.batch = PAIR_SPAN;  /* both sides batch-timed alike */
					hist_reset(&h);
					hist_reset(&h2);
					progress("heatmap: %s %d -> %d, repeat %d", k ? "libxcall" : "cacheline", a, b, rep);
					char name[64];
					snprintf(name, sizeof(name), "%s/%d->%d", kinds[k], a, b);
					if (plan_late()) {
						rec_skipped("heatmap", name, PLAN_LATE_WHY, rep);
						continue;       /* its cell stays empty: "-" in the matrix */
					}
					struct xc_stats d = {0};
					long n, n2 = 0;
					bool cas = false;
					if (k) {
						char pair[32];
						snprintf(pair, sizeof(pair), "%d,%d", a, b);
						/* only the two CPUs measured: other pollers would not change the pair */
						if (xh_up(&o, pair, poll, 0))
							return 1;
						n = xh_time_calls(a, b, XC_WAIT, &bud, &h, &d);
						xh_down();
					} else {
						/* the limit two ways, store/load and CAS; the lower is kept */
						n = pp_run(PP_CACHELINE, a, b, &bud, &h);
						if (n >= 0)
							n2 = pp_run(PP_CAS, a, b, &bud, &h2);
						if (n >= 0 && n2 >= 0 &&
						    hist_quantile(&h2, 0.5) < hist_quantile(&h, 0.5)) {
							struct hist t = h;
							h = h2;
							h2 = t;
							cas = true;
						}
					}
					if (n < 0 || n2 < 0)
						return 1;
					struct rec *r = rec_new("heatmap", name, "ns", "lower", rep);
					rec_hist(r, &h);
					int cl[2] = {a, b};
					rec_cpu_list(r, cl, 2);
					rec_param_i(r, "iterations", n);
					rec_param_i(r, "batch", PAIR_SPAN);
					rec_param_i(r, "from", a);
					rec_param_i(r, "to", b);
					rec_param_s(r, "pairs", cfg.pairs);
					rec_param_s(r, "class", cls);
					if (k)
						rec_xc_counters(r, &d);
					else
						rec_param_s(r, "method", cas ? "cas" : "store-load");
					*cell(cells, ncpu, rep, k, i, j) = r;
				}
			}
		summarise(cells, cpu, ncpu, rep, topo, cfg.pairs, spread);
	}
	hist_free(&h);
	hist_free(&h2);
	if (!g_out.quiet)
		for (int rep = 0; rep < o.repeat; rep++) {
			if (!g_out.csv && o.repeat > 1)
				printf("\nrepeat %d", rep);
			print_matrix(cells, cpu, ncpu, 1, rep, g_out.csv);
			print_matrix(cells, cpu, ncpu, 0, rep, g_out.csv);
			print_summary(rep, g_out.csv);
		}
	free(spread);
	free(cells);
	return 0;
}
