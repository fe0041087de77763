/* SPDX-License-Identifier: MIT */
/*
 * main.c - xcall-bench: dispatch to a subcommand, or with none run the quick
 * suite of every family and write its results file (results/suite-TIME.json,
 * or --json's: `make run` names results/latest.json).
 */
#include "bench.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
} cmds[] = {
#define BENCH_CMD(name, summary) {#name, cmd_##name, summary},
#include "commands.h"
#undef BENCH_CMD
};
#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

static void usage(void)
{
	printf("usage: xcall-bench [SUBCOMMAND] [options]\n\n"
	       "With no subcommand: the quick suite of every family (about 17 s on 2 quiet\n"
	       "vCPUs, longer on a loaded machine: docs/bench.md), written to --json FILE,\n"
	       "else to a new results/suite-TIME.json (its path is printed last; `make run`\n"
	       "names results/latest.json). Suite options: --cpus LIST, --json FILE,\n"
	       "--csv, --quiet, --trace FILE (the last libxcall case's events), --help.\n\n"
	       "subcommands (each takes --help):\n");
	for (size_t i = 0; i < NCMDS; i++)
		printf("  %-10s %s\n", cmds[i].name, cmds[i].summary);
}

/* Run one family inside the suite with its own small sizes. */
static int suite_run(const char *cpus, const char *const args[8])
{
	char *argv[32];
	int argc = 0;
	for (; argc < 8 && args[argc]; argc++)
		argv[argc] = (char *)args[argc];
	if (cpus) {
		argv[argc++] = "--cpus";
		argv[argc++] = (char *)cpus;
	}
	argv[argc] = NULL;
	for (size_t i = 0; i < NCMDS; i++)
		if (!strcmp(cmds[i].name, argv[0]))
			return cmds[i].fn(argc, argv);
	return 1;
}

static int suite(int argc, char **argv)
{
	static const struct option lo[] = {
		{"cpus", required_argument, NULL, 'c'}, {"json", required_argument, NULL, 'j'},
		{"csv", no_argument, NULL, 'v'},        {"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},       {"trace", required_argument, NULL, 't'},
		{0},
	};
	const char *cpus = NULL;
	static char json[64];
	opterr = 0;
	int c;
	/* '+': stop at the subcommand; ':': a missing value is reported as ':' */
	while ((c = getopt_long(argc, argv, "+:h", lo, NULL)) != -1) {
		switch (c) {
		case 'c': cpus = optarg; break;
		case 'j': g_out.json = optarg; break;
		case 'v': g_out.csv = true; break;
		case 'q': g_out.quiet = true; break;
		case 't':
			if (!*optarg)
				cli_fail(NULL, "bad --trace '': expected a file name");
			g_out.trace = optarg;
			break;
		case 'h': usage(); return 0;
		case ':':
			cli_fail(NULL, "option '%s' needs a value", argv[optind - 1]);
		default:
			cli_fail(NULL, "unknown option or subcommand '%s' (try --help)", argv[optind - 1]);
		}
	}
	if (optind < argc)
		cli_fail(NULL, "unknown subcommand '%s' (try --help)", argv[optind]);
	/*
	 * Every check of the command line before anything runs or prints, as a
	 * subcommand's: a family would refuse the same --cpus only once the
	 * machine was described and other families had run or been skipped.
	 */
	cpu_set_t set;
	char why[64];
	int have;
	if (cpus) {
		cli_check_cpus(NULL, cpus, &set);
		have = CPU_COUNT(&set);
		snprintf(why, sizeof(why), "needs 2 CPUs, --cpus gives %d", have);
	} else {
		online_cpus_allowed(&set);
		have = CPU_COUNT(&set);
		snprintf(why, sizeof(why), "needs 2 CPUs, the process may run on %d", have);
	}
	/* a file of its own unless --json names one: results/latest.json is `make run`'s */
	if (!g_out.json) {
		char stamp[32];
		time_t now = time(NULL);
		strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", localtime(&now));
		snprintf(json, sizeof(json), "results/suite-%s.json", stamp);
		g_out.json = json;
	}
	cli_check_json(NULL);
	cli_check_trace(NULL);
	cli_check_env(NULL);
	out_header();
	g_out.suite = true;

	/* each family with its own small sizes, and the CPUs it cannot do without */
	static const struct {
		int min_cpus;
		const char *args[8];
	} plan[] = {
		{2, {"pingpong", "--iterations", "20000"}},
		{2, {"throughput", "--iterations", "200000"}},
		{1, {"ipi", "--iterations", "20000"}},
		{2, {"matrix", "--iterations", "20000"}},
		{2, {"storm", "--compare", "--numipi", "20000"}},
		{2, {"idle", "--iterations", "2000", "--idle-seconds", "0.5"}},
		{1, {"bringup", "--iterations", "5", "--init-busy-ms", "50"}},
		{2, {"heatmap", "--iterations", "5000"}},
		{1, {"kernel", "ipi", "compare", "--iterations", "5000"}},
		{2, {"debug", "stuck", "trace", "--iterations", "20000"}},
		{2, {"debug", "urgent", "--iterations", "200"}},
		{2, {"wake", "--iterations", "2000"}},
	};
	/* one allowed CPU (taskset, a cpuset, --cpus): what needs two is skipped, the rest runs */
	int rc = 0;
	uint64_t t0 = now_ns();
	for (size_t i = 0; i < sizeof(plan) / sizeof(plan[0]); i++) {
		const char *name = plan[i].args[0];
		if (have < plan[i].min_cpus) {
			/* debug's two runs skip under their parts' names */
			rec_skipped(name, strcmp(name, "debug") ? "all" : plan[i].args[1], why, 0);
			continue;
		}
		if (!g_out.quiet)
			fprintf(stderr, "xcall-bench: %s\n", name);
		rc |= suite_run(cpus, plan[i].args);
		plan_end();
	}
	if (!g_out.quiet)
		fprintf(stderr, "xcall-bench: suite took %.1f s\n", (double)(now_ns() - t0) / 1e9);
	if (out_write_json(g_out.json, argc, argv))
		return 1;
	/* a file named for its time: the path is the one thing even --quiet must say */
	if (!g_out.quiet)
		printf("\nresults written to %s\n", g_out.json);
	else if (g_out.json == json)
		printf("%s\n", g_out.json);
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	clock_setup();
	const char *sub = argc > 1 ? argv[1] : NULL;

	/* the machine is described once the command line parsed (out_header) */
	if (!sub || sub[0] == '-')
		return suite(argc, argv);
	for (size_t i = 0; i < NCMDS; i++) {
		if (strcmp(cmds[i].name, sub))
			continue;
		int rc = cmds[i].fn(argc - 1, argv + 1);
		plan_end();
		if (g_out.json && out_write_json(g_out.json, argc, argv))
			rc = 1;
		return rc;
	}
	cli_fail(NULL, "unknown subcommand '%s' (try --help)", sub);
}
