/*
 * options: XCALL_* variables configure the runtime, a field set in xc_opts
 * wins over its variable, bad values fail xc_init with -EINVAL and a report
 * naming the variable, XCALL_VERBOSE=1 prints the options table through the
 * report hook; cpulists parse and format the kernel's way; xc_opts_set()
 * sets each field from the environment's spelling and xc_opts_get() spells
 * it back (the default for a zero field), bad values and unknown names get
 * -EINVAL and change nothing; xc_opts_get() refuses every field value that
 * xc_init() refuses, and into a short buffer writes the value's prefix, as
 * snprintf does, returning its length; a trace file name longer than 255
 * bytes is refused by xc_init() with a report, as XCALL_TRACE refuses it,
 * and one of 255 bytes is the file the trace goes to, whole; every option's
 * default, spelled by xc_opts_get(), goes back through xc_opts_set() to the
 * same value; the urgent signal is spelled SIGRTMIN+N / SIGRTMAX-N or by number,
 * and a standard signal is refused with the reason; stuck "off" is
 * XC_STUCK_OFF in the field and the variable alike, "0" is refused in the
 * variable, where 0 in the field is the default; a refusal of xc_opts_set()
 * says why through @o->report, in xc_init()'s words; the XCALL_VERBOSE table
 * names every ablation and gives each default once; the report hook gets
 * @report_ctx with every line, from xc_opts_set() and from xc_init() (a
 * refusal, the XCALL_VERBOSE table).
 */
#include "reports.h"
#include <signal.h>
#include <stdatomic.h>

static void cpulists(void)
{
	cpu_set_t s;
	char buf[64];

	CHECK_RET(xc_cpulist_parse("0-3,8,10-14:2", &s), 0);
	CHECK(CPU_COUNT(&s) == 8 && CPU_ISSET(3, &s) && CPU_ISSET(8, &s) && CPU_ISSET(14, &s) &&
	      !CPU_ISSET(11, &s));
	CHECK_RET(xc_cpulist_format(&s, buf, sizeof(buf)), (long)strlen("0-3,8,10,12,14"));
	CHECK(!strcmp(buf, "0-3,8,10,12,14"));
	CHECK_RET(xc_cpulist_parse("5\n", &s), 0);
	CHECK(CPU_COUNT(&s) == 1 && CPU_ISSET(5, &s));
	CHECK_RET(xc_cpulist_format(&s, buf, 1), -ENOSPC);
	const char *bad[] = { "", " ", "a", "1-", "-1", "3-1", "1,", ",1", "0-2:0", "1024",
			      "99999999999999999999", "0 1", "1-3:", NULL };
	for (int i = 0; bad[i]; i++)
		CHECK_RET(xc_cpulist_parse(bad[i], &s), -EINVAL);
	CHECK_RET(xc_cpulist_parse(NULL, &s), -EINVAL);
}

/* Set @var from @value, read it back as @want. */
static void set_get(const char *var, const char *value, const char *want)
{
	struct xc_opts o = { 0 };
	char buf[128];

	CHECK_RET(xc_opts_set(&o, var, value), 0);
	CHECK(xc_opts_get(&o, var, buf, sizeof(buf)) == (int)strlen(want));
	if (strcmp(buf, want)) {
		fprintf(stderr, "%s=%s reads back as %s, want %s\n", var, value, buf, want);
		exit(T_FAIL);
	}
}

static void opts_set_get(void)
{
	struct xc_opts o = { 0 }, zero = { 0 };
	char buf[128], list[32];

	set_get("XCALL_POLL_NS", "forever", "forever");
	set_get("XCALL_POLL_NS", "20000", "20000");
	set_get("XCALL_STUCK_MS", "off", "off");
	set_get("XCALL_STUCK_MS", "250", "250");
	set_get("XCALL_BRINGUP_TIMEOUT_MS", "1500", "1500");
	set_get("XCALL_TRACE_EVENTS", "1024", "1024");
	set_get("XCALL_RING_ENTRIES", "64", "64");
	set_get("XCALL_RING_ENTRIES", "65536", "65536");
	set_get("XCALL_STACK_KB", "256", "256");
	set_get("XCALL_STACK_KB", "0", "0");
	set_get("XCALL_SERIAL_BRINGUP", "1", "1");
	set_get("XCALL_FOLLOW_OS", "0", "0");
	set_get("XCALL_TRACE", "/tmp/t.json", "/tmp/t.json");
	set_get("XCALL_TRACE", "off", "off");
	set_get("XCALL_TRACE", "./off", "./off");
	set_get("XCALL_URGENT_SIGNAL", "SIGRTMIN+2", "SIGRTMIN+2");
	set_get("XCALL_URGENT_SIGNAL", "SIGRTMIN+0", "SIGRTMIN");
	set_get("XCALL_URGENT_SIGNAL", "SIGRTMIN", "SIGRTMIN");
	set_get("XCALL_URGENT_SIGNAL", "SIGRTMAX", "SIGRTMAX");
	set_get("XCALL_URGENT_SIGNAL", "SIGRTMAX-3", "SIGRTMAX-3");
	/* from the nearer end: SIGRTMIN+N up to the middle, SIGRTMAX-N past it */
	snprintf(buf, sizeof(buf), "SIGRTMAX-%d", SIGRTMAX - SIGRTMIN - (SIGRTMAX - SIGRTMIN) / 2 - 1);
	snprintf(list, sizeof(list), "SIGRTMIN+%d", (SIGRTMAX - SIGRTMIN) / 2 + 1);
	set_get("XCALL_URGENT_SIGNAL", list, buf);
	snprintf(buf, sizeof(buf), "%d", SIGRTMIN + 3);
	set_get("XCALL_URGENT_SIGNAL", buf, "SIGRTMIN+3");
	snprintf(buf, sizeof(buf), "%d", SIGRTMAX - 1);
	set_get("XCALL_URGENT_SIGNAL", buf, "SIGRTMAX-1");
	CHECK_RET(xc_opts_set(&o, "XCALL_URGENT_SIGNAL", "SIGRTMAX-1"), 0);
	CHECK(o.urgent_signal == SIGRTMAX - 1);
	CHECK_RET(xc_opts_set(&o, "XCALL_POLL_NS", "forever"), 0);
	CHECK(o.poll_ns == XC_POLL_FOREVER);
	CHECK_RET(xc_opts_set(&o, "XCALL_STUCK_MS", "off"), 0);
	CHECK(o.stuck_ms == XC_STUCK_OFF);
	CHECK_RET(xc_opts_set(&o, "XCALL_TRACE", "/tmp/t.json"), 0);
	CHECK_RET(xc_opts_set(&o, "XCALL_TRACE", "off"), 0);
	CHECK(o.trace_file == NULL);
	CHECK_RET(xc_opts_set(&o, "XCALL_FOLLOW_OS", "0"), 0);
	CHECK(o.follow_os == XC_FOLLOW_OS_OFF);
	/* defaults, from a zero struct: the same values the table prints */
	CHECK(xc_opts_get(&zero, "XCALL_POLL_NS", buf, sizeof(buf)) > 0 && !strcmp(buf, "adaptive"));
	CHECK(xc_opts_get(&zero, "XCALL_STUCK_MS", buf, sizeof(buf)) > 0 && !strcmp(buf, "5000"));
	CHECK(xc_opts_get(&zero, "XCALL_BRINGUP_TIMEOUT_MS", buf, sizeof(buf)) > 0 && !strcmp(buf, "10000"));
	CHECK(xc_opts_get(&zero, "XCALL_TRACE_EVENTS", buf, sizeof(buf)) > 0 && !strcmp(buf, "65536"));
	CHECK(xc_opts_get(&zero, "XCALL_FOLLOW_OS", buf, sizeof(buf)) > 0 && !strcmp(buf, "1"));
	CHECK(xc_opts_get(&zero, "XCALL_URGENT_SIGNAL", buf, sizeof(buf)) > 0 && !strcmp(buf, "SIGRTMIN+2"));
	CHECK(xc_opts_get(&zero, "XCALL_TRACE", buf, sizeof(buf)) > 0 && !strcmp(buf, "off"));
	o = zero, o.trace_file = "off";		/* the field is a path: a file named off */
	CHECK(xc_opts_get(&o, "XCALL_TRACE", buf, sizeof(buf)) > 0 && !strcmp(buf, "./off"));
	o = zero, o.stuck_ms = XC_STUCK_OFF;
	CHECK(xc_opts_get(&o, "XCALL_STUCK_MS", buf, sizeof(buf)) > 0 && !strcmp(buf, "off"));
	/* refusals change nothing */
	o = zero;
	const char *bad_signals[] = { "SIGUSR1", "10", "SIGRTMIN-1", "SIGRTMAX+1", "SIGRTMIN+",
				      "SIGRTMIN++2", "SIGRTMIN+-2", "SIGRTMIN+ 2", "SIGRTMINX",
				      "SIGRTMAX-999999999999", "0", "", "RTMIN+2", "sigrtmin", NULL };
	for (int i = 0; bad_signals[i]; i++)
		if (xc_opts_set(&o, "XCALL_URGENT_SIGNAL", bad_signals[i]) != -EINVAL) {
			fprintf(stderr, "XCALL_URGENT_SIGNAL=\"%s\" accepted\n", bad_signals[i]);
			exit(T_FAIL);
		}
	CHECK_RET(xc_opts_set(&o, "XCALL_STUCK_MS", "0"), -EINVAL);
	CHECK_RET(xc_opts_set(&o, "XCALL_TRACE", ""), -EINVAL);
	CHECK_RET(xc_opts_set(&o, "XCALL_POLL_NS", "soon"), -EINVAL);
	/* benchmarks' ablations are no field of struct xc_opts: the variable alone */
	CHECK_RET(xc_opts_set(&o, "XCALL_ABLATE", "slot"), -EINVAL);
	CHECK_RET(xc_opts_set(&o, "XCALL_NOSUCH", "1"), -EINVAL);
	CHECK_RET(xc_opts_set(&o, "XCALL_VERBOSE", "1"), -EINVAL);
	CHECK_RET(xc_opts_set(&o, NULL, "1"), -EINVAL);
	CHECK_RET(xc_opts_set(NULL, "XCALL_POLL_NS", "none"), -EINVAL);
	CHECK_RET(xc_opts_set(&o, "XCALL_POLL_NS", NULL), -EINVAL);
	CHECK(!memcmp(&o, &zero, sizeof(o)));
	CHECK_RET(xc_opts_get(&o, "XCALL_NOSUCH", buf, sizeof(buf)), -EINVAL);
	CHECK_RET(xc_opts_get(&o, "XCALL_POLL_NS", NULL, 8), -EINVAL);
	o.follow_os = 7;
	CHECK_RET(xc_opts_get(&o, "XCALL_FOLLOW_OS", buf, sizeof(buf)), -EINVAL);
}

/*
 * xc_opts_set says why it refused, through @o->report when set, in xc_init()'s
 * words for the same variable; an accepted value reports nothing.
 */
static void opts_set_reports(void)
{
	struct xc_opts o = { .report = t_capture };

	t_clear_reports();
	CHECK_RET(xc_opts_set(&o, "XCALL_POLL_NS", "fast"), -EINVAL);
	CHECK(t_reported("XCALL_POLL_NS=\"fast\": invalid (idle poll window: adaptive, none, forever"));
	CHECK_RET(xc_opts_set(&o, "XCALL_URGENT_SIGNAL", "SIGUSR1"), -EINVAL);
	CHECK(t_reported("XCALL_URGENT_SIGNAL=\"SIGUSR1\": invalid") && t_reported("because"));
	CHECK_RET(xc_opts_set(&o, "XCALL_STUCK_MS", "0"), -EINVAL);
	CHECK(t_reported("XCALL_STUCK_MS=\"0\": invalid: not a time: off turns the reports off"));
	CHECK_RET(xc_opts_set(&o, "XCALL_NOSUCH", "1"), -EINVAL);
	CHECK(t_reported("XCALL_NOSUCH: no such option"));
	CHECK_RET(xc_opts_set(&o, "XCALL_VERBOSE", "1"), -EINVAL);
	CHECK(t_reported("XCALL_VERBOSE: not an option of struct xc_opts"));
	t_clear_reports();
	CHECK_RET(xc_opts_set(&o, "XCALL_POLL_NS", "none"), 0);
	CHECK(t_reports[0] == 0);
	CHECK(o.poll_ns == XC_POLL_NONE);
}

/* The report hook's context: each line counted on the context it came with. */
struct ctx_count {
	_Atomic int lines, others;
};
static struct ctx_count ctx_a, ctx_b;

static void ctx_hook(void *ctx, const char *line)
{
	struct ctx_count *cc = ctx;

	if (cc == &ctx_a || cc == &ctx_b)
		atomic_fetch_add(&cc->lines, 1);
	else
		atomic_fetch_add(&ctx_a.others, 1);	/* a context nobody gave */
}

static void report_context(void)
{
	struct xc_opts o = { .report = ctx_hook, .report_ctx = &ctx_a };

	CHECK_RET(xc_opts_set(&o, "XCALL_POLL_NS", "fast"), -EINVAL);
	CHECK_RET(xc_opts_set(&o, "XCALL_NOSUCH", "1"), -EINVAL);
	CHECK(ctx_a.lines == 2 && ctx_b.lines == 0);
	o.report_ctx = &ctx_b;
	o.poll_ns = -7;
	CHECK_RET(xc_init(&o), -EINVAL);
	CHECK(ctx_a.lines == 2 && ctx_b.lines == 1);
	o.poll_ns = 0;
	setenv("XCALL_VERBOSE", "1", 1);
	CHECK_RET(xc_init(&o), 0);
	unsetenv("XCALL_VERBOSE");
	CHECK(ctx_b.lines > 1);
	CHECK_RET(xc_exit(), 0);
	CHECK(ctx_a.others == 0 && ctx_a.lines == 2);
}

/* @o's field named by @var is one xc_init refuses: xc_opts_get refuses it too. */
static void refused(const struct xc_opts *bad, const char *var, const char *field)
{
	struct xc_opts o = *bad;
	char buf[128];

	o.report = t_capture;
	t_clear_reports();
	CHECK_RET(xc_init(&o), -EINVAL);
	CHECK(t_reported(field));
	CHECK_RET(xc_opts_get(&o, var, buf, sizeof(buf)), -EINVAL);
}

/* xc_opts_get of @var into @size bytes is @want's prefix, NUL-terminated, and returns its length. */
static void get_short(const struct xc_opts *o, const char *var, const char *want, size_t size)
{
	char buf[512];
	size_t len = strlen(want) < size - 1 ? strlen(want) : size - 1;

	memset(buf, 'x', sizeof(buf));
	CHECK_RET(xc_opts_get(o, var, buf, size), (long)len);
	if (strncmp(buf, want, len) || buf[len] || buf[size] != 'x') {
		fprintf(stderr, "%s into %zu bytes: \"%.*s\", want \"%.*s\"\n", var, size,
			(int)size, buf, (int)len, want);
		exit(T_FAIL);
	}
}

static void opts_get_contract(void)
{
	struct xc_opts o, zero = { 0 };
	char list[4096];
	cpu_set_t mine;

	o = zero, o.stuck_ms = -5;
	refused(&o, "XCALL_STUCK_MS", "xc_opts.stuck_ms");
	o = zero, o.poll_ns = -7;
	refused(&o, "XCALL_POLL_NS", "xc_opts.poll_ns");
	o = zero, o.trace_events = 3;
	refused(&o, "XCALL_TRACE_EVENTS", "xc_opts.trace_events");
	o = zero, o.trace_events = (1u << 24) + 1;
	refused(&o, "XCALL_TRACE_EVENTS", "xc_opts.trace_events");
	o = zero, o.ring_entries = 100;		/* not a power of two */
	refused(&o, "XCALL_RING_ENTRIES", "xc_opts.ring_entries");
	o = zero, o.ring_entries = 8;
	refused(&o, "XCALL_RING_ENTRIES", "xc_opts.ring_entries");
	o = zero, o.ring_entries = 1u << 17;
	refused(&o, "XCALL_RING_ENTRIES", "xc_opts.ring_entries");
	o = zero, o.stack_kb = 63;
	refused(&o, "XCALL_STACK_KB", "xc_opts.stack_kb");
	o = zero, o.urgent_signal = 5;
	refused(&o, "XCALL_URGENT_SIGNAL", "xc_opts.urgent_signal");
	o = zero, o.urgent_signal = SIGRTMAX + 1;
	refused(&o, "XCALL_URGENT_SIGNAL", "xc_opts.urgent_signal");

	/* short buffers: the prefix, as snprintf writes it */
	o = zero, o.attach = "0-1";
	get_short(&o, "XCALL_ATTACH", "0-1", 3);
	get_short(&o, "XCALL_ATTACH", "0-1", 1);
	get_short(&o, "XCALL_ATTACH", "0-1", 4);
	o = zero, o.poll_ns = XC_POLL_FOREVER;
	get_short(&o, "XCALL_POLL_NS", "forever", 4);
	o = zero, o.stuck_ms = 123456;
	get_short(&o, "XCALL_STUCK_MS", "123456", 3);
	o = zero, o.trace_file = "/tmp/a-trace.json";
	get_short(&o, "XCALL_TRACE", "/tmp/a-trace.json", 6);
	/* the CPUs this process may use, e.g. "0-1", one byte short */
	CHECK(sched_getaffinity(0, sizeof(mine), &mine) == 0);
	CHECK(xc_cpulist_format(&mine, list, sizeof(list)) > 0);
	o = zero, o.cpus = list;
	get_short(&o, "XCALL_CPUS", list, strlen(list));
	get_short(&o, "XCALL_CPUS", list, strlen(list) + 1);
}

/* Every option's default from a zero struct, spelled by xc_opts_get, set back, reads the same. */
static void defaults_round_trip(void)
{
	static const char *const vars[] = {
		"XCALL_CPUS", "XCALL_ATTACH", "XCALL_SERIAL_BRINGUP", "XCALL_POLL_NS",
		"XCALL_BRINGUP_TIMEOUT_MS", "XCALL_STUCK_MS", "XCALL_TRACE",
		"XCALL_TRACE_EVENTS", "XCALL_URGENT_SIGNAL", "XCALL_FOLLOW_OS", "XCALL_RING_ENTRIES", "XCALL_STACK_KB",
	};
	struct xc_opts zero = { 0 };
	char first[4096];

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		CHECK(xc_opts_get(&zero, vars[i], first, sizeof(first)) > 0);
		set_get(vars[i], first, first);
	}
}

/* XCALL_VERBOSE's row for @var shows @value from @source. */
static bool table_row(const char *var, const char *value, const char *source)
{
	char row[128];

	snprintf(row, sizeof(row), "%-26s %-20s %-9s ", var, value, source);
	return t_reported(row);
}

/*
 * The urgent signal by name in the variable is the signal in force; a
 * standard one is refused with the reason; stuck "0" is refused, "off" is
 * what XC_STUCK_OFF is.
 */
static void signal_and_stuck_env(void)
{
	struct xc_opts o = { .report = t_capture };
	struct sigaction sa;

	setenv("XCALL_URGENT_SIGNAL", "SIGRTMIN+3", 1);
	CHECK_RET(xc_init(&o), 0);
	CHECK(sigaction(SIGRTMIN + 3, NULL, &sa) == 0 && sa.sa_handler != SIG_DFL);
	CHECK_RET(xc_exit(), 0);
	CHECK(sigaction(SIGRTMIN + 3, NULL, &sa) == 0 && sa.sa_handler == SIG_DFL);

	const char *standard[] = { "SIGUSR1", "10", "SIGRTMIN-1" };
	for (size_t i = 0; i < sizeof(standard) / sizeof(standard[0]); i++) {
		setenv("XCALL_URGENT_SIGNAL", standard[i], 1);
		t_clear_reports();
		CHECK_RET(xc_init(&o), -EINVAL);
		CHECK(t_reported("XCALL_URGENT_SIGNAL"));
		CHECK(t_reported("not a real-time signal"));
		CHECK(t_reported("must be one"));
		CHECK(t_reported("because"));
	}
	setenv("XCALL_URGENT_SIGNAL", "soon", 1);
	t_clear_reports();
	CHECK_RET(xc_init(&o), -EINVAL);
	CHECK(t_reported("SIGRTMIN+N, SIGRTMAX-N or a number"));
	unsetenv("XCALL_URGENT_SIGNAL");
	o.urgent_signal = SIGUSR1;
	t_clear_reports();
	CHECK_RET(xc_init(&o), -EINVAL);
	CHECK(t_reported("xc_opts.urgent_signal") && t_reported("because"));
	o.urgent_signal = 0;

	setenv("XCALL_STUCK_MS", "0", 1);
	t_clear_reports();
	CHECK_RET(xc_init(&o), -EINVAL);
	CHECK(t_reported("XCALL_STUCK_MS") && t_reported("off"));
	/* "off" in the variable and XC_STUCK_OFF in the field: the same table row */
	setenv("XCALL_VERBOSE", "1", 1);
	setenv("XCALL_STUCK_MS", "off", 1);
	t_clear_reports();
	CHECK_RET(xc_init(&o), 0);
	CHECK_RET(xc_exit(), 0);
	CHECK(table_row("XCALL_STUCK_MS", "off", "env"));
	unsetenv("XCALL_STUCK_MS");
	o.stuck_ms = XC_STUCK_OFF;
	t_clear_reports();
	CHECK_RET(xc_init(&o), 0);
	CHECK_RET(xc_exit(), 0);
	CHECK(table_row("XCALL_STUCK_MS", "off", "xc_opts"));
	o.stuck_ms = 0;		/* the default, wherever it is written */
	t_clear_reports();
	CHECK_RET(xc_init(&o), 0);
	CHECK_RET(xc_exit(), 0);
	CHECK(table_row("XCALL_STUCK_MS", "5000", "default"));
	unsetenv("XCALL_VERBOSE");
}

/* The trace file name: 255 bytes at most, from the field as from the variable. */
static void trace_file_length(void)
{
	struct xc_opts o = { .report = t_capture };
	char path[300], buf[300];
	size_t dir;

	snprintf(path, sizeof(path), "/tmp/xcall-options-%d-", (int)getpid());
	dir = strlen(path);
	memset(path + dir, 'a', 256 - dir);
	path[256] = 0;				/* 256 bytes: refused */
	o.trace_file = path;
	t_clear_reports();
	CHECK_RET(xc_init(&o), -EINVAL);
	CHECK(t_reported("xc_opts.trace_file"));
	CHECK_RET(xc_opts_get(&o, "XCALL_TRACE", buf, sizeof(buf)), -EINVAL);
	o.trace_file = "";
	CHECK_RET(xc_init(&o), -EINVAL);
	o.trace_file = NULL;
	setenv("XCALL_TRACE", path, 1);
	t_clear_reports();
	CHECK_RET(xc_init(&o), -EINVAL);
	CHECK(t_reported("XCALL_TRACE"));
	unsetenv("XCALL_TRACE");

	path[255] = 0;				/* 255 bytes: the trace goes there */
	o.trace_file = path;
	CHECK_RET(xc_opts_get(&o, "XCALL_TRACE", buf, sizeof(buf)), 255);
	CHECK(!strcmp(buf, path));
	unlink(path);
	CHECK_RET(xc_init(&o), 0);
	CHECK_RET(xc_exit(), 0);
	CHECK(access(path, F_OK) == 0);
	unlink(path);
}

int main(void)
{
	struct xc_opts o = { .report = t_capture };
	cpu_set_t on;

	cpulists();
	opts_set_get();
	opts_set_reports();
	report_context();
	opts_get_contract();
	defaults_round_trip();
	signal_and_stuck_env();
	trace_file_length();

	setenv("XCALL_POLL_NS", "soon", 1);
	CHECK_RET(xc_init(&o), -EINVAL);
	CHECK(strstr(t_reports, "XCALL_POLL_NS=\"soon\": invalid") != NULL);
	setenv("XCALL_POLL_NS", "forever", 1);

	const char *bad[][2] = { { "XCALL_CPUS", "0-" }, { "XCALL_SERIAL_BRINGUP", "yes" },
				 { "XCALL_BRINGUP_TIMEOUT_MS", "0" }, { "XCALL_ABLATE", "speed" },
				 { "XCALL_VERBOSE", "2" }, { "XCALL_BRINGUP_TIMEOUT_MS", "-5" },
				 { "XCALL_STUCK_MS", "0" }, { "XCALL_URGENT_SIGNAL", "SIGUSR1" } };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setenv(bad[i][0], bad[i][1], 1);
		t_clear_reports();
		CHECK_RET(xc_init(&o), -EINVAL);
		CHECK(strstr(t_reports, bad[i][0]) != NULL);
		unsetenv(bad[i][0]);
	}

	setenv("XCALL_CPUS", "0", 1);
	setenv("XCALL_VERBOSE", "1", 1);
	setenv("XCALL_ABLATE", "elide,notify", 1);
	t_clear_reports();
	CHECK_RET(xc_init(&o), 0);
	CHECK_RET(xc_online_mask(&on), 1);
	CHECK(CPU_ISSET(0, &on));
	CHECK(strstr(t_reports, "XCALL_POLL_NS") && strstr(t_reports, "forever"));
	CHECK(strstr(t_reports, "elide,notify") != NULL);
	/* the table names every ablation, and each default once */
	CHECK(table_row("XCALL_ABLATE", "elide,notify", "env") && t_reported("ring,membarrier"));
	CHECK(t_count_reported("(default") == t_count_reported("\nXCALL_") + (t_reports[0] == 'X'));
	CHECK_RET(xc_exit(), 0);

	/* the xc_opts field wins over the variable */
	setenv("XCALL_CPUS", "not-a-list", 1);
	unsetenv("XCALL_VERBOSE");
	o.cpus = "0";
	CHECK_RET(xc_init(&o), 0);
	CHECK_RET(xc_online_mask(&on), 1);
	CHECK_RET(xc_exit(), 0);
	return T_PASS;
}
