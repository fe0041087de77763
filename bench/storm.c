/* SPDX-License-Identifier: MIT */
/*
 * storm.c - seed 000's modified ipistorm: every sending CPU makes --numipi
 * calls (single to CPU + --offset, or to all others), waiting or not, with
 * --delay us between them; the result is the runtime for that fixed number.
 * --ablate turns one kick optimisation off; --compare runs the baseline and
 * each ablation and prints the seed's "normalised runtime [pct imp]" table
 * against the run with elision and notify both off (what seed 000 toggles).
 */
#include "bench.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { O_NUMIPI = 1, O_SINGLE, O_OFFSET, O_CPULIST, O_WAIT, O_DELAY, O_ABLATE, O_COMPARE, O_TARGET };

static const struct cmd_opt storm_opts[] = {
	{"numipi", required_argument, O_NUMIPI, "N    calls per sending CPU (default 100000)"},
	{"single", no_argument, O_SINGLE, "       call one CPU (sender + offset), not all others"},
	{"offset", required_argument, O_OFFSET, "K    single target: K CPUs after the sender in --cpus (default 1)"},
	{"target", required_argument, O_TARGET, "C    single target: every sender calls CPU C (implies --single)"},
	{"cpulist", required_argument, O_CPULIST, "L   sending CPUs (default: the first of --cpus)"},
	{"wait", required_argument, O_WAIT, "0|1    wait for each call (default 1)"},
	{"delay", required_argument, O_DELAY, "US    busy delay between calls, in us (default 0)"},
	{"ablate", required_argument, O_ABLATE, "X    turn off: elide,coalesce,freeride,notify,slot,ring,membarrier (comma list), all, none"},
	{"compare", no_argument, O_COMPARE, "      run the baseline and every ablation, print the seed's table"},
	{0},
};

struct storm_cfg {
	long numipi, offset, delay_us, target;
	bool single, wait, compare;
	unsigned ablate;
	const char *cpulist;
};

static int on_opt(int id, const char *arg, void *ctx)
{
	struct storm_cfg *c = ctx;
	switch (id) {
	case O_NUMIPI: return parse_long(arg, 1, 1L << 40, &c->numipi);
	case O_SINGLE: c->single = true; return 0;
	case O_OFFSET: return parse_long(arg, 0, CPU_SETSIZE, &c->offset);
	case O_CPULIST: c->cpulist = arg; return 0;
	case O_WAIT: {
		long w;
		if (parse_long(arg, 0, 1, &w))
			return -1;
		c->wait = w;
		return 0;
	}
	case O_DELAY: return parse_long(arg, 0, 1000000, &c->delay_us);
	case O_ABLATE: return parse_ablate(arg, &c->ablate);
	case O_COMPARE: c->compare = true; return 0;
	case O_TARGET: c->single = true; return parse_long(arg, 0, CPU_SETSIZE - 1, &c->target);
	}
	return -1;
}

static const struct cmd_desc desc = {
	.name = "storm",
	.summary = "seed 000: ipistorm runtime for a fixed number of calls, with ablations",
	.opts = storm_opts,
	.on_opt = on_opt,
};

struct storm_sender {
	struct storm_run *r;
	int target;
	uint64_t t0, t1;
	long done;              /* calls made: numipi, unless the case limit stopped them */
};

struct storm_run {
	const struct storm_cfg *c;
	struct budget bud;      /* each sender's: --numipi, and --case-limit, where it stops short */
	struct spin_barrier bar;
	struct storm_sender s[CPU_SETSIZE];
	_Atomic long enomem;
	_Atomic int err;
};

static void storm_loop(void *arg)
{
	struct storm_sender *me = arg;
	struct storm_run *r = me->r;
	const struct storm_cfg *c = r->c;
	int target = me->target;
	unsigned flags = c->wait ? XC_WAIT : 0;
	int err = 0;
	long enomem = 0;
	spin_barrier_wait(&r->bar, xh_serve);
	struct budget b = r->bud;
	budget_start(&b);
	me->t0 = b.started;
	long i;
	for (i = 0; budget_more(&b, i) && err >= 0; i++) {
		while ((err = c->single ? xc_call_single(target, xh_noop, NULL, flags)
					: xc_call_all(xh_noop, NULL, flags)) == -ENOMEM) {
			enomem++;
			xc_poll();
		}
		if (c->delay_us) {
			/* ipistorm sleeps; a worker that slept could not take calls, so spin and serve */
			uint64_t end = now_ns() + (uint64_t)c->delay_us * 1000;
			while (now_ns() < end)
				xc_poll();
		}
	}
	me->t1 = now_ns();
	me->done = i;
	if (err < 0)
		atomic_store(&r->err, err);
	atomic_fetch_add(&r->enomem, enomem);
	spin_barrier_wait(&r->bar, xh_serve);
}

/* One storm with the given ablations; a record named after them. */
static struct rec *storm_once(const struct bopts *o, const struct storm_cfg *c, const int *senders,
			      int ns, unsigned ablate, int rep)
{
	if (xh_up(o, NULL, o->poll_ns, ablate))
		return NULL;
	struct storm_run *r = calloc(1, sizeof(*r));
	r->c = c;
	budget_init(&r->bud, o, c->numipi);
	spin_barrier_init(&r->bar, (unsigned)ns);
	for (int i = 0; i < ns; i++) {
		int idx = 0;
		while (o->cpu[idx] != senders[i])
			idx++;
		int target = c->target >= 0 ? (int)c->target : o->cpu[(idx + c->offset) % o->ncpus];
		r->s[i] = (struct storm_sender){.r = r, .target = target};
	}
	void *args[CPU_SETSIZE];
	for (int i = 0; i < ns; i++)
		args[i] = &r->s[i];
	struct xc_stats s0, s1, d, *p0 = calloc((size_t)o->ncpus, sizeof(*p0));
	struct xc_stats *p1 = calloc((size_t)o->ncpus, sizeof(*p1));
	xh_stats(-1, &s0);
	for (int i = 0; i < o->ncpus; i++)
		xh_stats(o->cpu[i], &p0[i]);
	int err = xh_run_on(senders, ns, storm_loop, args);
	if (!c->wait && !err) {
		/*
		 * Every nowait call has run once the calls counters say so: waited
		 * for by watching them, since calls made to drain the queues would
		 * add their own kick decisions to the targets' counters.
		 */
		long made = 0;
		for (int i = 0; i < ns; i++)
			made += r->s[i].done;
		err = xh_wait_calls(&s0, (uint64_t)made * (uint64_t)(c->single ? 1 : o->ncpus - 1),
				    o->case_limit + 1);
	}
	xh_stats(-1, &s1);
	for (int i = 0; i < o->ncpus; i++)
		xh_stats(o->cpu[i], &p1[i]);
	xh_down();
	/*
	 * The targets' own counters: a waiting worker that went to sleep is also
	 * kicked when its call completes, so the sum over all CPUs counts those
	 * completion kicks too.
	 */
	struct xc_stats td = {0};
	for (int i = 0; i < o->ncpus; i++) {
		bool sender = false;
		for (int k = 0; k < ns; k++)
			sender |= senders[k] == o->cpu[i];
		if (sender)
			continue;
		struct xc_stats x;
		xc_stats_delta(&x, &p0[i], &p1[i]);
		td.calls += x.calls;
		td.kicks_sent += x.kicks_sent;
		td.kicks_elided += x.kicks_elided;
		td.kicks_coalesced += x.kicks_coalesced;
		td.free_rides += x.free_rides;
	}
	free(p0);
	free(p1);
	if (err || r->err) {
		fprintf(stderr, "xcall-bench storm: %s\n", strerror(-(err ? err : r->err)));
		free(r);
		return NULL;
	}
	xc_stats_delta(&d, &s0, &s1);
	uint64_t first = UINT64_MAX, last = 0;
	long done = 0;
	for (int i = 0; i < ns; i++) {
		first = r->s[i].t0 < first ? r->s[i].t0 : first;
		last = r->s[i].t1 > last ? r->s[i].t1 : last;
		done += r->s[i].done;
	}
	char an[64], name[80], pb[32];
	ablate_name(ablate, an, sizeof(an));
	snprintf(name, sizeof(name), "ablate-%s", an);
	struct rec *x = rec_new("storm", name, "s", "lower", rep);
	rec_value(x, (double)(last - first) / 1e9);
	rec_cpus(x, &o->cpus);
	int targets = c->single ? 1 : o->ncpus - 1;
	rec_param_i(x, "numipi", c->numipi);
	rec_param_i(x, "senders", ns);
	rec_param_i(x, "calls", done * targets);
	rec_param_b(x, "capped", done < c->numipi * ns);
	if (c->target >= 0)
		rec_param_i(x, "target", c->target);
	rec_param_i(x, "single", c->single);
	rec_param_i(x, "offset", c->offset);
	rec_param_i(x, "wait", c->wait);
	rec_param_i(x, "delay_us", c->delay_us);
	rec_param_s(x, "ablate", an);
	rec_param_s(x, "poll", poll_name(o->poll_ns, pb, sizeof(pb)));
	rec_xc_counters(x, &d);
	rec_counter(x, "work_run", (long long)d.work_run);
	rec_counter(x, "targets_calls", (long long)td.calls);
	rec_counter(x, "targets_kicks_sent", (long long)td.kicks_sent);
	rec_counter(x, "targets_kicks_elided", (long long)td.kicks_elided);
	rec_counter(x, "targets_kicks_coalesced", (long long)td.kicks_coalesced);
	rec_counter(x, "targets_free_rides", (long long)td.free_rides);
	rec_counter(x, "enomem_retries", atomic_load(&r->enomem));
	free(r);
	return x;
}

int cmd_storm(int argc, char **argv)
{
	struct storm_cfg c = {.numipi = 100000, .offset = 1, .wait = true, .target = -1};
	struct bopts o;
	cli_parse(&desc, argc, argv, &o, &c);
	if (o.iterations)
		c.numipi = o.iterations;
	if (o.seconds > 0)
		cli_fail(desc.name, "times a fixed number of calls: use --numipi, not --seconds");
	int senders[CPU_SETSIZE], ns = 0;
	if (c.cpulist) {
		cpu_set_t s;
		if (xc_cpulist_parse(c.cpulist, &s))
			cli_fail(desc.name, "bad --cpulist '%s': expected a cpulist", c.cpulist);
		for (int i = 0; i < CPU_SETSIZE; i++)
			if (CPU_ISSET(i, &s)) {
				if (!CPU_ISSET(i, &o.cpus))
					cli_fail(desc.name, "bad --cpulist: CPU %d is not in --cpus %s", i, o.cpulist);
				senders[ns++] = i;
			}
	} else {
		senders[ns++] = o.cpu[0];
	}
	if (!c.single && o.ncpus < 2)
		cli_fail(desc.name, "calls to all others: %s", cli_too_few_cpus(&o, 2));
	if (c.target >= 0 && !CPU_ISSET(c.target, &o.cpus))
		cli_fail(desc.name, "bad --target %ld: not in --cpus %s", c.target, o.cpulist);
	for (int i = 0; i < ns && c.target >= 0; i++)
		if (senders[i] == c.target)
			cli_fail(desc.name, "bad --target %ld: it is a sender (--cpulist)", c.target);

	static const unsigned plan[] = {
		XC_ABLATE_ELIDE | XC_ABLATE_NOTIFY, XC_ABLATE_ALL, XC_ABLATE_NOTIFY, XC_ABLATE_ELIDE,
		XC_ABLATE_COALESCE, XC_ABLATE_FREERIDE, XC_ABLATE_RING, XC_ABLATE_MEMBARRIER, 0,
	};
	struct rec *first = NULL;
	size_t ncases = c.compare ? sizeof(plan) / sizeof(plan[0]) : 1;
	/* a storm is one timed loop per sender, stopped at --case-limit, then (nowait) its calls run */
	plan_cases((long)ncases * o.repeat, 2 * o.case_limit + 1.1 + plan_start_cost(o.ncpus));
	plan_start(NULL);
	for (int rep = 0; rep < o.repeat; rep++) {
		size_t n = c.compare ? sizeof(plan) / sizeof(plan[0]) : 1;
		for (size_t i = 0; i < n; i++) {
			unsigned ab = c.compare ? plan[i] : c.ablate;
			char an[64];
			progress("storm: ablate %s, repeat %d", ablate_name(ab, an, sizeof(an)), rep);
			struct rec *x;
			if (plan_late()) {
				char name[80];
				snprintf(name, sizeof(name), "ablate-%s", an);
				x = rec_skipped("storm", name, PLAN_LATE_WHY, rep);
			} else if (!(x = storm_once(&o, &c, senders, ns, ab, rep))) {
				return 1;
			}
			if (!first)
				first = x;
		}
	}
	if (g_out.quiet)
		return 0;
	if (g_out.csv) {
		out_csv(stdout, first);
		return 0;
	}
	char pb[32];
	char tb[32] = "";
	if (c.target >= 0)
		snprintf(tb, sizeof(tb), " to CPU %ld", c.target);
	printf("\nstorm (seed 000): %ld %s %s calls from CPU(s) %s%s%s, poll %s\n", c.numipi,
	       c.single ? "single" : "all", c.wait ? "waiting" : "nowait", c.cpulist ? c.cpulist : "",
	       c.cpulist ? "" : "first of set", tb, poll_name(o.poll_ns, pb, sizeof(pb)));
	printf("%-36s %4s %11s %9s %12s %12s %12s %12s  %s\n", "case", "rep", "runtime",
	       "ns/call", "kicks_sent", "elided", "coalesced", "free_rides", c.compare ? "time [pct imp]" : "");
	for (struct rec *x = first; x; x = x->next) {
		struct rec *ref = rec_find("storm", "ablate-elide+notify", x->repeat);
		if (!x->s.n) {
			printf("%-36s %4d  skipped: %s\n", x->kase, x->repeat, rec_param_str(x, "skipped"));
			continue;
		}
		long long calls = (long long)rec_param_get(x, "calls", 0);
		char t[32], rel[48] = "";
		double ref_calls = ref ? rec_param_get(ref, "calls", 0) : 0;
		if (c.compare && ref && ref->s.mean > 0 && calls && ref_calls) {
			/* per call: a case stopped at its limit made fewer */
			double v = (x->s.mean / (double)calls) / (ref->s.mean / ref_calls);
			snprintf(rel, sizeof(rel), "%.2f [%.2f]%s", v, (1 - v) * 100, ratio_mark(x, ref));
		}
		printf("%-36s %4d %11s %9.0f %12lld %12lld %12lld %12lld  %s\n", x->kase, x->repeat,
		       fmt_ns(x->s.mean * 1e9, t, sizeof(t)), calls ? x->s.mean * 1e9 / (double)calls : 0,
		       rec_counter_get(x, "targets_kicks_sent", 0), rec_counter_get(x, "targets_kicks_elided", 0),
		       rec_counter_get(x, "targets_kicks_coalesced", 0),
		       rec_counter_get(x, "targets_free_rides", 0), rel);
	}
	printf("kick counters are the targets' (senders also count the kicks that complete their waits)\n");
	if (c.compare)
		printf("normalised runtime against ablate-elide+notify (lower is better), [pct imp]\n");
	return 0;
}
