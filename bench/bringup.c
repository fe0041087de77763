/* SPDX-License-Identifier: MIT */
/*
 * bringup.c - seed 004: time for xc_init() to bring every worker online,
 * serially (start one, wait for it, then the next) against in parallel
 * (start all, each runs its init, then release all), with a per-CPU init
 * cost: a busy wait of T ms and/or a first touch of M MiB. Serial and
 * parallel bringups alternate so that drift hits both alike.
 */
#include "bench.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { O_BUSY = 1, O_TOUCH };

static const struct cmd_opt bringup_opts[] = {
	{"init-busy-ms", required_argument, O_BUSY, "T  per-CPU init: busy wait T ms (default 50)"},
	{"init-touch-mib", required_argument, O_TOUCH, "M per-CPU init: first-touch M MiB (default 0)"},
	{0},
};

struct bringup_cfg {
	double busy_ms;
	long touch_mib;
	void *mem[CPU_SETSIZE];
};

static int on_opt(int id, const char *arg, void *ctx)
{
	struct bringup_cfg *c = ctx;
	switch (id) {
	case O_BUSY: return parse_double(arg, 0, 60000, &c->busy_ms);
	case O_TOUCH: return parse_long(arg, 0, 65536, &c->touch_mib);
	}
	return -1;
}

static const struct cmd_desc desc = {
	.name = "bringup",
	.summary = "seed 004: serial vs parallel bringup of the CPU set, with a per-CPU init cost",
	.opts = bringup_opts,
	.on_opt = on_opt,
	.default_iters = 5,
};

static int cpu_init(int cpu, void *arg)
{
	struct bringup_cfg *c = arg;
	if (c->touch_mib) {
		size_t len = (size_t)c->touch_mib << 20;
		char *p = malloc(len);
		if (!p)
			return -ENOMEM;
		/* one write per page: the fault is the cost, as a CPU's per-CPU areas are */
		for (size_t off = 0; off < len; off += 4096)
			p[off] = 1;
		c->mem[cpu] = p;
	}
	if (c->busy_ms > 0)
		spin_ns((uint64_t)(c->busy_ms * 1e6));
	return 0;
}

static int bring_up_once(const struct bopts *o, struct bringup_cfg *c, bool serial, uint64_t *ns)
{
	struct xc_opts xo = {.cpus = o->cpulist, .serial_bringup = serial, .poll_ns = o->poll_ns,
			     .cpu_init = cpu_init, .cpu_init_arg = c};
	uint64_t t0 = now_ns();
	int err = xh_up_opts(&xo);
	*ns = now_ns() - t0;
	if (err) {
		fprintf(stderr, "xcall-bench bringup: xc_init: %s\n", strerror(-err));
		return err;
	}
	xh_down();
	for (int i = 0; i < o->ncpus; i++) {
		free(c->mem[o->cpu[i]]);
		c->mem[o->cpu[i]] = NULL;
	}
	return 0;
}

int cmd_bringup(int argc, char **argv)
{
	struct bringup_cfg *c = calloc(1, sizeof(*c));
	c->busy_ms = 50;
	struct bopts o;
	cli_parse(&desc, argc, argv, &o, c);
	if (o.seconds > 0)
		cli_fail(desc.name, "counts bringups: use --iterations, not --seconds");
	long iters = o.iterations ? o.iterations : desc.default_iters;
	struct hist hs, hp;
	hist_init(&hs);
	hist_init(&hp);
	struct rec *mark = rec_last();
	/*
	 * A step is a serial and a parallel bringup: N inits one after another,
	 * then at once; first touch counted at 5 ms a MiB, emulated CPUs included.
	 */
	double init_s = c->busy_ms / 1e3 + (double)c->touch_mib * 0.005;
	double step_s = (o.ncpus + 1) * init_s + 2 * plan_start_cost(o.ncpus);
	plan_cases(iters * o.repeat, step_s);
	plan_fixed(o.repeat * (init_s + plan_start_cost(o.ncpus)));     /* each repeat's warm-up */
	plan_start(NULL);
	for (int rep = 0; rep < o.repeat; rep++) {
		hist_reset(&hs);
		hist_reset(&hp);
		uint64_t ns;
		/* one untimed bringup first: the same warm-up as every other case */
		if (!plan_overdue() && bring_up_once(&o, c, false, &ns))
			return 1;
		/*
		 * A bringup cannot be cut short, so a step starts only where one as
		 * long as the longest so far still ends within the plan's end for it
		 * (the first of a repeat, where the plan has any time left); the
		 * steps left are given up.
		 */
		uint64_t longest = 0;
		long done = 0;
		for (long i = 0; i < iters; i++) {
			progress("bringup: %ld/%ld, repeat %d", i + 1, iters, rep);
			uint64_t t = now_ns(), end = plan_case_end();
			if (done ? end && t + longest > end : plan_late()) {
				if (done)
					plan_capped();
				for (long j = i + 1; j < iters; j++)
					plan_skip();
				break;
			}
			if (bring_up_once(&o, c, true, &ns))
				return 1;
			hist_add(&hs, ns);
			if (bring_up_once(&o, c, false, &ns))
				return 1;
			hist_add(&hp, ns);
			done++;
			if (now_ns() - t > longest)
				longest = now_ns() - t;
		}
		if (!done) {
			rec_skipped("bringup", "serial", PLAN_LATE_WHY, rep);
			rec_skipped("bringup", "parallel", PLAN_LATE_WHY, rep);
			rec_skipped("bringup", "speedup", PLAN_LATE_WHY, rep);
			continue;
		}
		struct rec *s = NULL, *p = NULL;
		for (int k = 0; k < 2; k++) {
			struct rec *x = rec_new("bringup", k ? "parallel" : "serial", "ns", "lower", rep);
			rec_hist(x, k ? &hp : &hs);
			rec_cpus(x, &o.cpus);
			rec_param_i(x, "iterations", done);
			rec_param_d(x, "init_busy_ms", c->busy_ms);
			rec_param_i(x, "init_touch_mib", c->touch_mib);
			*(k ? &p : &s) = x;
		}
		struct rec *x = rec_new("bringup", "speedup", "ratio", "higher", rep);
		rec_value(x, p->s.p50 > 0 ? s->s.p50 / p->s.p50 : 0);
		rec_ratio_of(x, s, p);
		rec_param_s(x, "of", "serial p50 / parallel p50");
		rec_param_d(x, "limit", o.ncpus);
	}
	hist_free(&hs);
	hist_free(&hp);
	free(c);
	struct rec *from = mark ? mark->next : rec_first();
	if (g_out.quiet)
		return 0;
	if (g_out.csv) {
		out_csv(stdout, from);
		return 0;
	}
	printf("\nbringup (seed 004): xc_init() of %d CPUs (%s), %ld bringups each way\n", o.ncpus,
	       o.cpulist, iters);
	printf("%4s %12s %12s %12s %12s %9s\n", "rep", "serial p50", "serial max", "parallel p50",
	       "parallel max", "speedup");
	for (int rep = 0; rep < o.repeat; rep++) {
		struct rec *s = rec_find("bringup", "serial", rep), *p = rec_find("bringup", "parallel", rep);
		struct rec *x = rec_find("bringup", "speedup", rep);
		char b[4][32];
		if (!s->s.n) {
			printf("%4d  skipped: %s\n", rep, rec_param_str(s, "skipped"));
			continue;
		}
		printf("%4d %12s %12s %12s %12s %8.2fx%s\n", rep, fmt_ns(s->s.p50, b[0], 32),
		       fmt_ns(s->s.max, b[1], 32), fmt_ns(p->s.p50, b[2], 32), fmt_ns(p->s.max, b[3], 32),
		       x->s.mean, ratio_mark(s, p));
	}
	printf("(the limit is %d.00x: every CPU's init at once)\n", o.ncpus);
	return 0;
}
