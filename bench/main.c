/* SPDX-License-Identifier: MIT */
/*
 * main.c - xcall-bench: dispatch to a subcommand, or with none run the quick
 * suite of every family and write results/latest.json.
 */
#include "bench.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

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
	       "With no subcommand: the quick suite of every family (about a minute),\n"
	       "written to results/latest.json. Suite options: --cpus LIST, --json FILE,\n"
	       "--csv, --quiet, --trace FILE (the last libxcall case's events), --help.\n\n"
	       "subcommands (each takes --help):\n");
	for (size_t i = 0; i < NCMDS; i++)
		printf("  %-10s %s\n", cmds[i].name, cmds[i].summary);
}

/* Run one family inside the suite with its own small sizes. */
static int suite_run(const char *cpus, const char *const *args)
{
	char *argv[32];
	int argc = 0;
	for (; args[argc]; argc++)
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
	g_out.json = "results/latest.json";
	opterr = 0;
	int c;
	/* '+': stop at the subcommand; ':': a missing value is reported as ':' */
	while ((c = getopt_long(argc, argv, "+:h", lo, NULL)) != -1) {
		switch (c) {
		case 'c': cpus = optarg; break;
		case 'j': g_out.json = optarg; break;
		case 'v': g_out.csv = true; break;
		case 'q': g_out.quiet = true; break;
		case 't': g_out.trace = optarg; break;
		case 'h': usage(); return 0;
		case ':':
			cli_fail(NULL, "option '%s' needs a value", argv[optind - 1]);
		default:
			cli_fail(NULL, "unknown option or subcommand '%s' (try --help)", argv[optind - 1]);
		}
	}
	if (optind < argc)
		cli_fail(NULL, "unknown subcommand '%s' (try --help)", argv[optind]);
	out_header();
	g_out.suite = true;

	static const char *const pingpong[] = {"pingpong", "--iterations", "20000", NULL};
	static const char *const ipi[] = {"ipi", "--iterations", "20000", NULL};
	static const char *const matrix[] = {"matrix", "--iterations", "20000", NULL};
	static const char *const storm[] = {"storm", "--compare", "--numipi", "20000", NULL};
	static const char *const idle[] = {"idle", "--iterations", "2000", "--idle-seconds", "0.5", NULL};
	static const char *const bringup[] = {"bringup", "--iterations", "5", "--init-busy-ms", "50", NULL};
	static const char *const heatmap[] = {"heatmap", "--iterations", "5000", NULL};
	static const char *const kernel[] = {"kernel", "ipi", "compare", "--iterations", "5000", NULL};
	static const char *const debug[] = {"debug", "stuck", "trace", "--iterations", "20000", NULL};
	static const char *const urgent[] = {"debug", "urgent", "--iterations", "200", NULL};
	static const char *const wake[] = {"wake", "--iterations", "2000", NULL};
	const char *const *const plan[] = {pingpong, ipi, matrix, storm, idle, bringup, heatmap, kernel,
					   debug, urgent, wake};
	int rc = 0;
	uint64_t t0 = now_ns();
	for (size_t i = 0; i < sizeof(plan) / sizeof(plan[0]); i++) {
		if (!g_out.quiet)
			fprintf(stderr, "xcall-bench: %s\n", plan[i][0]);
		rc |= suite_run(cpus, plan[i]);
		plan_end();
	}
	if (!g_out.quiet)
		fprintf(stderr, "xcall-bench: suite took %.1f s\n", (double)(now_ns() - t0) / 1e9);
	if (out_write_json(g_out.json, argc, argv))
		return 1;
	if (!g_out.quiet)
		printf("\nresults written to %s\n", g_out.json);
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
