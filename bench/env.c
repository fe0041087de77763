/* SPDX-License-Identifier: MIT */
/*
 * env.c - libxcall's XCALL_* variables and --trace's file, checked once the
 * command line is parsed and before anything runs. libxcall reads its
 * variables at each xc_init(), which the bench makes case after case, minutes
 * into a run: a bad value found there fails one family, leaves the rest to
 * run and still writes a results file. Here it ends the run at once, with one
 * line naming the variable, its value and why, and exit 2.
 *
 * A variable whose field the bench sets in struct xc_opts is never read by
 * libxcall (a field set wins over the environment). Where a case's own value
 * is the field's zero (poll adaptive, nothing ablated, parallel bringup, the
 * OS watch on), libxcall would read the variable after all, and the case
 * would measure something else than its name says: the bench unsets those,
 * and says so in one line. The bench's own test hooks (XCALL_BENCH_*) are
 * read where they are used.
 */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

/*
 * The variables whose fields the bench's cases set: in every subcommand, or in
 * the one named (and so in the suite, which runs it); how a user sets them.
 */
static const struct {
	const char *var;
	const char *cmd;        /* NULL: every subcommand */
	bool unset;             /* a case's own value is the field's zero: unset it */
	const char *how;
} bench_sets[] = {
	{"XCALL_CPUS", NULL, false, "each runtime gets the CPUs its case measures (--cpus chooses them)"},
	{"XCALL_POLL_NS", NULL, true, "each case sets its poll policy (--poll sets one for every case)"},
	{"XCALL_ABLATE", NULL, true, "each case sets what it ablates (storm --ablate chooses)"},
	{"XCALL_SERIAL_BRINGUP", "bringup", true, "bringup measures serial and parallel bringup side by side"},
	{"XCALL_FOLLOW_OS", "debug", true, "debug measures the OS watch on and off side by side"},
};

/*
 * libxcall's reason for refusing a value, from xc_opts_set's report hook: the
 * variable's own line comes last, a detail ("CPU 7: not in the CPUs this
 * process may use") before it.
 */
struct reason {
	char detail[512], line[512];
};

static void reason_line(void *ctx, const char *line)
{
	struct reason *r = ctx;

	if (r->line[0])
		snprintf(r->detail, sizeof(r->detail), "%s", r->line);
	snprintf(r->line, sizeof(r->line), "%s", line);
}

/* "No such file or directory (ENOENT)": the message and the errno's own name. */
const char *errno_text(int err, char *buf, size_t size)
{
	const char *name = strerrorname_np(err);

	snprintf(buf, size, "%s (%s)", strerror(err), name ? name : "?");
	return buf;
}

/*
 * A file libxcall will create or overwrite at xc_exit (fopen "w"): its directory
 * exists and takes a new file, or the file exists and may be written. Made and
 * taken away if it was not there (access() says yes to root everywhere, and
 * knows nothing of read-only mounts); an existing file is opened, not truncated.
 */
int trace_writable(const char *path, char *why, size_t size)
{
	struct stat st;
	char e[96];
	int fd;

	if (!*path) {
		snprintf(why, size, "empty file name");
		return -EINVAL;
	}
	if (!stat(path, &st) && S_ISDIR(st.st_mode)) {
		snprintf(why, size, "%s", errno_text(EISDIR, e, sizeof(e)));
		return -EISDIR;
	}
	fd = open(path, O_WRONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (errno == ENOENT) {
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd >= 0) {
			close(fd);
			unlink(path);
			return 0;
		}
	}
	int err = errno;
	snprintf(why, size, "%s", errno_text(err, e, sizeof(e)));
	return -err;
}

void cli_check_trace(const char *cmd)
{
	char why[160];
	const char *env = getenv("XCALL_TRACE");

	if (!g_out.trace)
		return;
	if (trace_writable(g_out.trace, why, sizeof(why)))
		cli_fail(cmd, "cannot write --trace '%s': %s", g_out.trace, why);
	/* libxcall's precedence: the field (--trace) over the variable */
	if (env && strcmp(env, g_out.trace))
		fprintf(stderr, "xcall-bench: XCALL_TRACE=\"%s\" is not used: --trace '%s' wins\n", env,
			g_out.trace);
}

/* A cpulist variable (XCALL_CPUS, XCALL_ATTACH) of CPUs this process may run on. */
static void check_cpus(const char *cmd, const char *var, const char *val)
{
	cpu_set_t set, allowed;
	char b[256];

	if (xc_cpulist_parse(val, &set))
		return;         /* libxcall's own parse says why */
	online_cpus_allowed(&allowed);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set) && !CPU_ISSET(c, &allowed)) {
			xc_cpulist_format(&allowed, b, sizeof(b));
			cli_fail(cmd, "%s=\"%s\": CPU %d is not online or not allowed (allowed: %s) (EINVAL)",
				 var, val, c, b);
		}
}

/* One XCALL_* variable: refused with cli_fail(), noted, unset, or left to libxcall. */
static void check_one(const char *cmd, const char *var, const char *val)
{
	struct xc_opts zero = {0}, o = {0};
	struct reason r = {"", ""};
	char buf[16];

	/* libxcall's own variables are those xc_opts_get knows, and XCALL_VERBOSE (no field) */
	if (!strcmp(var, "XCALL_VERBOSE")) {
		if (strcmp(val, "0") && strcmp(val, "1"))
			cli_fail(cmd, "XCALL_VERBOSE=\"%s\": invalid (1: libxcall prints its options at "
				 "each xc_init; 0: it does not) (EINVAL)", val);
		return;
	}
	/* XCALL_ABLATE has no xc_opts field: the bench's static library parses it */
	if (!strcmp(var, "XCALL_ABLATE")) {
		unsigned bits;

		if (xc_ablate_parse(val, &bits))
			cli_fail(cmd, "XCALL_ABLATE=\"%s\": invalid (elide,coalesce,freeride,notify,slot,"
				 "ring,membarrier as a comma list, all or none) (EINVAL)", val);
	} else if (xc_opts_get(&zero, var, buf, sizeof(buf)) < 0) {
		fprintf(stderr, "xcall-bench: %s=\"%s\" is not a libxcall option: nothing reads it\n",
			var, val);
		return;
	}
	o.report = reason_line;
	o.report_ctx = &r;
	if (strcmp(var, "XCALL_ABLATE") && xc_opts_set(&o, var, val))
		cli_fail(cmd, "%s%s%s (EINVAL)", r.line[0] ? r.line : var, r.detail[0] ? ": " : "",
			 r.detail);
	if (!strcmp(var, "XCALL_CPUS"))
		check_cpus(cmd, var, val);
	if (!strcmp(var, "XCALL_ATTACH") && strcmp(val, "none")) {
		check_cpus(cmd, var, val);
		cli_fail(cmd, "XCALL_ATTACH=\"%s\": xcall-bench needs a worker on every CPU it measures "
			 "(wake's attached rows set their own); unset it (EINVAL)", val);
	}
	if (!strcmp(var, "XCALL_TRACE") && strcmp(val, "off")) {
		char why[160];

		if (trace_writable(val, why, sizeof(why)))
			cli_fail(cmd, "XCALL_TRACE=\"%s\": cannot write it: %s", val, why);
	}
	for (size_t i = 0; i < sizeof(bench_sets) / sizeof(bench_sets[0]); i++)
		if (!strcmp(var, bench_sets[i].var) &&
		    (!bench_sets[i].cmd || !cmd || !strcmp(cmd, bench_sets[i].cmd))) {
			fprintf(stderr, "xcall-bench: %s=\"%s\" is not used: %s\n", var, val,
				bench_sets[i].how);
			if (bench_sets[i].unset)
				unsetenv(var);
		}
}

void cli_check_env(const char *cmd)
{
	static bool done;
	/* the names first: unsetenv() below changes environ under a walk */
	char *vars[64];
	int n = 0;

	if (done)               /* the suite's families parse their own command lines after it */
		return;
	done = true;
	for (char **e = environ; e && *e && n < 64; e++)
		if (!strncmp(*e, "XCALL_", 6) && strncmp(*e, "XCALL_BENCH", 11) && strchr(*e, '='))
			vars[n++] = strdup(*e);
	for (int i = 0; i < n; i++) {
		char *eq = strchr(vars[i], '=');

		*eq = 0;
		check_one(cmd, vars[i], eq + 1);
		free(vars[i]);
	}
}
