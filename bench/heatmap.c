/* SPDX-License-Identifier: MIT */
/*
 * heatmap.c - CPU by CPU round trips, in the style of core-to-core-latency:
 * a waiting libxcall call from the worker of row CPU to a polling worker on
 * column CPU, and the cache-line ping-pong between the same two CPUs (the
 * limit). --csv prints the two matrices (p50, ns) instead of tables.
 */
#include "baselines.h"

#include <stdlib.h>
#include <string.h>

static const struct cmd_desc desc = {
	.name = "heatmap",
	.summary = "CPU x CPU round-trip matrix: libxcall waiting calls and the cache-line limit",
	.default_iters = 20000,
};

static void print_matrix(const struct bopts *o, const char *kind, int rep, bool csv)
{
	if (csv)
		printf("%s p50 ns,", kind);
	else
		printf("\n%s round trip p50 (ns), row = from, column = to\n%6s", kind, "");
	for (int j = 0; j < o->ncpus; j++)
		printf(csv ? "%d%s" : "%8d%s", o->cpu[j], csv && j + 1 < o->ncpus ? "," : "");
	printf("\n");
	for (int i = 0; i < o->ncpus; i++) {
		printf(csv ? "%d," : "%6d", o->cpu[i]);
		for (int j = 0; j < o->ncpus; j++) {
			char name[64];
			snprintf(name, sizeof(name), "%s/%d->%d", kind, o->cpu[i], o->cpu[j]);
			struct rec *r = rec_find("heatmap", name, rep);
			const char *sep = csv && j + 1 < o->ncpus ? "," : "";
			if (r)
				printf(csv ? "%.0f%s" : "%8.0f%s", r->s.p50, sep);
			else
				printf(csv ? "%s" : "%8s%s", csv ? sep : "-", csv ? "" : sep);
		}
		printf("\n");
	}
}

int cmd_heatmap(int argc, char **argv)
{
	struct bopts o;
	cli_parse(&desc, argc, argv, &o, NULL);
	if (o.ncpus < 2)
		cli_fail(desc.name, "needs 2 CPUs in --cpus, got %d", o.ncpus);
	long poll = o.poll_set ? o.poll_ns : XC_POLL_FOREVER;
	struct hist h;
	hist_init(&h);
	for (int rep = 0; rep < o.repeat; rep++) {
		for (int i = 0; i < o.ncpus; i++)
			for (int j = 0; j < o.ncpus; j++) {
				if (i == j)
					continue;
				int a = o.cpu[i], b = o.cpu[j];
				for (int k = 0; k < 2; k++) {
					struct budget bud;
					budget_init(&bud, &o, desc.default_iters);
					hist_reset(&h);
					progress("heatmap: %s %d -> %d, repeat %d", k ? "libxcall" : "cacheline", a, b, rep);
					struct xc_stats d = {0};
					long n;
					if (k) {
						char pair[32];
						snprintf(pair, sizeof(pair), "%d,%d", a, b);
						/* only the two CPUs measured: other pollers would not change the pair */
						if (xh_up(&o, pair, poll, 0))
							return 1;
						n = xh_time_calls(a, b, XC_WAIT, &bud, &h, &d);
						xh_down();
					} else {
						n = pp_run(PP_CACHELINE, a, b, &bud, &h);
					}
					if (n < 0)
						return 1;
					char name[64];
					snprintf(name, sizeof(name), "%s/%d->%d", k ? "libxcall" : "cacheline", a, b);
					struct rec *r = rec_new("heatmap", name, "ns", "lower", rep);
					rec_hist(r, &h);
					int cl[2] = {a, b};
					rec_cpu_list(r, cl, 2);
					rec_param_i(r, "iterations", n);
					rec_param_i(r, "from", a);
					rec_param_i(r, "to", b);
					if (k)
						rec_xc_counters(r, &d);
				}
			}
	}
	hist_free(&h);
	if (g_out.quiet)
		return 0;
	for (int rep = 0; rep < o.repeat; rep++) {
		if (!g_out.csv && o.repeat > 1)
			printf("\nrepeat %d", rep);
		print_matrix(&o, "libxcall", rep, g_out.csv);
		print_matrix(&o, "cacheline", rep, g_out.csv);
	}
	return 0;
}
