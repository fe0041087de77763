/* SPDX-License-Identifier: MIT */
/*
 * cli.c - the options every subcommand shares, and the value parsers. A bad
 * option or value always ends the same way: one line naming it, exit 2.
 */
#include "bench.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct gopts g_out;

enum {
	OPT_CPUS = 1000, OPT_ITER, OPT_SECONDS, OPT_REPEAT, OPT_JSON, OPT_CSV, OPT_QUIET,
	OPT_HELP, OPT_POLL, OPT_TRACE, OPT_CASE_LIMIT,
};

static const struct cmd_opt common_opts[] = {
	{"cpus", required_argument, OPT_CPUS, "LIST     CPUs to use, cpulist syntax (0-3,8); default: all allowed"},
	{"iterations", required_argument, OPT_ITER, "N  operations per case"},
	{"seconds", required_argument, OPT_SECONDS, "S     run each case for S seconds instead"},
	{"case-limit", required_argument, OPT_CASE_LIMIT, "S  stop a case counting --iterations after S seconds (default 5);\n"
	 "                  its n is then what ran. The run's bound, printed first, is built on it"},
	{"repeat", required_argument, OPT_REPEAT, "R      repeat every case R times (one record each)"},
	{"poll", required_argument, OPT_POLL, "P        libxcall idle poll: adaptive|none|forever|NS (window in ns)"},
	{"json", required_argument, OPT_JSON, "FILE     write the results file"},
	{"trace", required_argument, OPT_TRACE, "FILE    libxcall cases record events (xc_opts.trace_file); each case's\n"
	 "                  xc_exit rewrites FILE, so it holds the last libxcall case's events\n"
	 "                  (Chrome trace JSON: Perfetto, chrome://tracing); baselines are not traced"},
	{"csv", no_argument, OPT_CSV, "            print CSV instead of tables"},
	{"quiet", no_argument, OPT_QUIET, "          no progress and no tables (with --json or --trace: what it keeps)"},
	{"help", no_argument, OPT_HELP, "           this text"},
	{0},
};

_Noreturn void cli_fail(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "xcall-bench%s%s: ", cmd ? " " : "", cmd ? cmd : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

int parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 0);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int parse_double(const char *s, double min, double max, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* --poll and --ablate take libxcall's own spellings, parsed and printed by libxcall. */
void parse_names(const char *cmd, const char *opt, const char *list, int n, const char *(*name)(int),
		 bool *want)
{
	char buf[512], names[512] = "";
	bool any = false, bad = snprintf(buf, sizeof(buf), "%s", list) >= (int)sizeof(buf);

	for (char *save, *tok = strtok_r(buf, ",", &save); tok && !bad;
	     tok = strtok_r(NULL, ",", &save)) {
		int i;

		for (i = 0; i < n && strcmp(tok, name(i)); i++)
			;
		bad = i == n;
		if (!bad)
			want[i] = any = true;
	}
	if (any && !bad)
		return;
	for (int i = 0; i < n; i++) {
		size_t len = strlen(names);
		snprintf(names + len, sizeof(names) - len, "%s%s", i ? "," : "", name(i));
	}
	cli_fail(cmd, "bad --%s '%s': expected names from %s", opt, list, names);
}

int parse_poll(const char *s, long *out)
{
	struct xc_opts o = {0};
	if (xc_opts_set(&o, "XCALL_POLL_NS", s) || o.poll_ns > 10000000000L)
		return -1;
	*out = o.poll_ns;
	return 0;
}

const char *poll_name(long p, char *buf, size_t size)
{
	struct xc_opts o = {.poll_ns = p};
	int n = xc_opts_get(&o, "XCALL_POLL_NS", buf, size);
	if (n > 0 && p > 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, "ns");	/* a fixed window */
	return buf;
}

/* "elide,notify", "all" or "none". */
int parse_ablate(const char *s, unsigned *out)
{
	return xc_ablate_parse(s, out) ? -1 : 0;
}

/* "elide+notify": a name that fits in a case name. */
const char *ablate_name(unsigned a, char *buf, size_t size)
{
	xc_ablate_format(a, buf, size);
	for (char *c = buf; *c; c++)
		if (*c == ',')
			*c = '+';
	return buf;
}

void cli_check_cpus(const char *cmd, const char *list, cpu_set_t *set)
{
	cpu_set_t allowed;
	if (xc_cpulist_parse(list, set))
		cli_fail(cmd, "bad --cpus '%s': expected a cpulist such as 0-3,8", list);
	online_cpus_allowed(&allowed);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, set) && !CPU_ISSET(c, &allowed)) {
			char b[256];
			xc_cpulist_format(&allowed, b, sizeof(b));
			cli_fail(cmd, "bad --cpus '%s': CPU %d is not online or not allowed (allowed: %s)",
				 list, c, b);
		}
}

static void set_cpus(struct bopts *o, const char *cmd, const char *list)
{
	cli_check_cpus(cmd, list, &o->cpus);
	o->cpus_given = true;
}

const char *cli_too_few_cpus(const struct bopts *o, int need)
{
	static char why[80];

	snprintf(why, sizeof(why), o->cpus_given ? "needs %d CPUs, --cpus gives %d"
		 : "needs %d CPUs, the process may run on %d (--cpus not given)", need, o->ncpus);
	return why;
}

void cli_check_json(const char *cmd)
{
	char why[256];
	/* before the run, not after it: a run can take minutes */
	if (g_out.json && out_json_writable(g_out.json, why, sizeof(why)))
		cli_fail(cmd, "cannot write --json '%s': %s", g_out.json, why);
}

static void usage(const struct cmd_desc *d)
{
	printf("usage: xcall-bench %s [options]%s%s\n%s\n\noptions:\n", d->name,
	       d->args ? " " : "", d->args ? d->args : "", d->summary);
	for (const struct cmd_opt *p = d->opts; p && p->name; p++)
		printf("  --%s %s\n", p->name, p->help);
	for (const struct cmd_opt *p = common_opts; p->name; p++)
		printf("  --%s %s\n", p->name, p->help);
	if (d->default_iters)
		printf("\ndefault iterations: %ld\n", d->default_iters);
}

int cli_parse(const struct cmd_desc *d, int argc, char **argv, struct bopts *o, void *ctx)
{
	struct option lo[64];
	int n = 0;
	for (const struct cmd_opt *p = d->opts; p && p->name && n < 48; p++)
		lo[n++] = (struct option){p->name, p->has_arg, NULL, p->id};
	for (const struct cmd_opt *p = common_opts; p->name; p++)
		lo[n++] = (struct option){p->name, p->has_arg, NULL, p->id};
	lo[n] = (struct option){0};

	memset(o, 0, sizeof(*o));
	o->repeat = 1;
	o->poll_ns = XC_POLL_ADAPTIVE;
	o->case_limit = CASE_LIMIT_DEFAULT;
	online_cpus_allowed(&o->cpus);

	opterr = 0;
	optind = 0;     /* 0, not 1: a full reset, since the suite parses several argvs */
	int c, idx = -1;
	/* leading ':': a missing value is reported as ':' rather than '?' */
	while ((c = getopt_long(argc, argv, ":h", lo, &idx)) != -1) {
		char name[64];
		const char *opt = name;

		/* the option's own name: argv[optind - 1] may be its value by now */
		if (idx >= 0)
			snprintf(name, sizeof(name), "--%s", lo[idx].name);
		else if (c == '?' || c == ':')
			opt = argv[optind - 1];
		else
			snprintf(name, sizeof(name), "-%c", c);
		idx = -1;
		switch (c) {
		case 'h':
		case OPT_HELP:
			usage(d);
			exit(0);
		case OPT_CPUS:
			set_cpus(o, d->name, optarg);
			break;
		case OPT_ITER:
			if (parse_long(optarg, 1, LONG_MAX / 4, &o->iterations))
				cli_fail(d->name, "bad --iterations '%s': expected a positive integer", optarg);
			break;
		case OPT_SECONDS:
			if (parse_double(optarg, 0.001, 86400, &o->seconds))
				cli_fail(d->name, "bad --seconds '%s': expected a number of seconds > 0", optarg);
			break;
		case OPT_CASE_LIMIT:
			if (parse_double(optarg, 0.001, 86400, &o->case_limit))
				cli_fail(d->name, "bad --case-limit '%s': expected a number of seconds > 0", optarg);
			break;
		case OPT_REPEAT: {
			long r;
			if (parse_long(optarg, 1, 1000, &r))
				cli_fail(d->name, "bad --repeat '%s': expected 1..1000", optarg);
			o->repeat = (int)r;
			break;
		}
		case OPT_POLL:
			if (parse_poll(optarg, &o->poll_ns))
				cli_fail(d->name, "bad --poll '%s': expected adaptive, none, forever or ns", optarg);
			o->poll_set = true;
			break;
		case OPT_JSON:
			g_out.json = optarg;
			break;
		case OPT_TRACE:
			if (!*optarg)
				cli_fail(d->name, "bad --trace '': expected a file name");
			g_out.trace = optarg;
			break;
		case OPT_CSV:
			g_out.csv = true;
			break;
		case OPT_QUIET:
			g_out.quiet = true;
			break;
		case '?':
			/* a known option given a value it does not take (--csv=1), or an unknown one */
			for (const struct option *l = lo; optopt && l->name; l++)
				if (l->val == optopt && l->has_arg == no_argument)
					cli_fail(d->name, "option '--%s' takes no value", l->name);
			cli_fail(d->name, "unknown option '%s' (try --help)", opt);
		case ':':
			cli_fail(d->name, "option '%s' needs a value", opt);
		default:
			if (!d->on_opt || d->on_opt(c, optarg, ctx))
				cli_fail(d->name, "bad value '%s' for %s", optarg ? optarg : "", opt);
		}
	}
	if (optind < argc && !d->args)
		cli_fail(d->name, "unexpected argument '%s' (try --help)", argv[optind]);
	/* the suite checked its own outputs, and keeps results/latest.json */
	if (!g_out.suite) {
		if (g_out.quiet && !g_out.json && !g_out.trace)
			cli_fail(d->name, "--quiet prints nothing, and without --json FILE nothing is kept");
		cli_check_json(d->name);
		cli_check_trace(d->name);
	}
	cli_check_env(d->name);

	o->ncpus = 0;
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &o->cpus))
			o->cpu[o->ncpus++] = i;
	xc_cpulist_format(&o->cpus, o->cpulist, sizeof(o->cpulist));
	plan_reset(d->name, o->seconds > 0 ? 0 : o->case_limit, o->ncpus);
	oversub_prepare(&o->cpus);
	return optind;
}

void progress(const char *fmt, ...)
{
	/* the first case is about to run: every check of the command line passed */
	out_header();
	char step[96];
	plan_step(step, sizeof(step));
	rec_step();
	if (g_out.quiet)
		return;
	va_list ap;
	fprintf(stderr, "  .. %s", step);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
