// SPDX-License-Identifier: MIT
/*
 * options.c - the one table of options. Each is a field of struct xc_opts
 * and an XCALL_* environment variable; a field set (non-zero) in xc_opts
 * wins, else the variable, else the default. XCALL_VERBOSE=1 prints the
 * table with the values in force at xc_init().
 */
#include "base/internal.h"
#include "api/options.h"
#include "proto/ring.h"
#include "base/topology.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum xc_source { SRC_DEFAULT, SRC_ENV, SRC_OPTS };
/*
 * The longest value a show() writes, with its NUL: a cpulist of every CPU
 * apart ("0,2,4,...": under 5 bytes a CPU); a trace file name is 255.
 */
#define OPT_VALUE_MAX (XC_MAX_CPUS * 5 + 1)
/*
 * xc_opts_set / xc_opts_get: a refusal is their return value, not a report
 * line on the runtime's hook; xc_opts_set sends the reason to its own
 * @o->report instead (quiet_to), when that is set.
 */
static __xc_tls bool quiet;
static __xc_tls void (*quiet_to)(void *ctx, const char *line);
static __xc_tls void *quiet_ctx;
#define opt_report(...) opt_say(__VA_ARGS__)

static void __attribute__((format(printf, 1, 2))) opt_say(const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if (quiet && !quiet_to)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (!quiet)
		xc_report("%s", line);
	else
		quiet_to(quiet_ctx, line);
}
/*
 * Why a parse_env refused its value, where the option's help does not say it
 * (a static string: a buffer here would be initial-exec TLS that a dlopen()ed
 * libxcall has little room for).
 */
static __xc_tls const char *why;
static const char *const source_name[] = { "default", "env", "xc_opts" };

struct xc_option {
	const char *env;
	const char *field;
	const char *help;
	/* parse an environment value into cfg; 0 or -EINVAL */
	int (*parse_env)(const char *val, struct xc_config *cfg);
	/*
	 * take the xc_opts field if set: 1 if it was, 0 if not, -EINVAL (reported)
	 * if xc_init refuses its value; xc_opts_get refuses what this refuses
	 */
	int (*take_opt)(const struct xc_opts *o, struct xc_config *cfg);
	/* the value in force, for XCALL_VERBOSE; @n is OPT_VALUE_MAX */
	void (*show)(const struct xc_config *cfg, char *buf, size_t n);
	/* the xc_opts field from a parsed value (xc_opts_set); @val is the string parsed */
	void (*to_opt)(const struct xc_config *cfg, const char *val, struct xc_opts *o);
};

static int parse_ulong(const char *val, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (!val[0] || val[0] == '-')
		return -EINVAL;
	errno = 0;
	v = strtoul(val, &end, 10);
	if (errno || *end || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* --- cpus --- */

/*
 * The CPUs the process may run on, as it started: read before main() so that
 * a thread that pins itself later does not shrink the default set.
 */
static cpu_set_t startup_affinity;

__attribute__((constructor)) static void read_startup_affinity(void)
{
	if (sched_getaffinity(0, sizeof(startup_affinity), &startup_affinity))
		CPU_ZERO(&startup_affinity);
}

/* The CPUs a worker may be pinned to now: those the process started with that are still online. */
static void cpus_usable(cpu_set_t *out)
{
	cpu_set_t online;

	*out = startup_affinity;
	if (!xc_sysfs_cpulist("/sys/devices/system/cpu/online", &online))
		CPU_AND(out, out, &online);
}

/*
 * The CPUs the OS could bring online for us: present in the machine, and
 * either in the affinity the process started with or offline now (an
 * offline CPU is in no affinity sched_getaffinity() shows). A worker for
 * one that is offline starts offline and follows the OS (worker.c).
 */
static void cpus_possible(cpu_set_t *out)
{
	cpu_set_t present, online;

	*out = startup_affinity;
	if (xc_sysfs_cpulist("/sys/devices/system/cpu/present", &present) ||
	    xc_sysfs_cpulist("/sys/devices/system/cpu/online", &online))
		return;
	for (int cpu = 0; cpu < XC_MAX_CPUS; cpu++)
		if (CPU_ISSET(cpu, &present) && !CPU_ISSET(cpu, &online))
			CPU_SET(cpu, out);
}

static int cpus_from_list(const char *list, struct xc_config *cfg)
{
	cpu_set_t possible, inside;

	if (xc_cpulist_parse(list, &cfg->cpus))
		return -EINVAL;
	cpus_possible(&possible);
	CPU_AND(&inside, &cfg->cpus, &possible);
	if (CPU_EQUAL(&inside, &cfg->cpus))
		return 0;
	for (int cpu = 0; cpu < XC_MAX_CPUS; cpu++)
		if (CPU_ISSET(cpu, &cfg->cpus) && !CPU_ISSET(cpu, &possible)) {
			opt_report("CPU %d: not in the CPUs this process may use, nor offline in the OS", cpu);
			break;
		}
	return -EINVAL;
}
static int cpus_opt(const struct xc_opts *o, struct xc_config *cfg)
{
	if (!o->cpus)
		return 0;
	if (cpus_from_list(o->cpus, cfg)) {
		opt_report("xc_opts.cpus \"%s\": not a cpulist of CPUs this process may use", o->cpus);
		return -EINVAL;
	}
	return 1;
}
static void cpus_show(const struct xc_config *cfg, char *buf, size_t n)
{
	xc_cpulist_format(&cfg->cpus, buf, n);
}
static void cpus_to(const struct xc_config *cfg, const char *val, struct xc_opts *o)
{
	o->cpus = val;	/* the caller's string, as for the field itself */
}

/* --- attach --- */
static int attach_env(const char *val, struct xc_config *cfg)
{
	if (!strcmp(val, "none")) {
		CPU_ZERO(&cfg->attach);
		return 0;
	}
	return xc_cpulist_parse(val, &cfg->attach) ? -EINVAL : 0;
}
static int attach_opt(const struct xc_opts *o, struct xc_config *cfg)
{
	if (!o->attach)
		return 0;
	if (attach_env(o->attach, cfg)) {
		opt_report("xc_opts.attach \"%s\": not a cpulist", o->attach);
		return -EINVAL;
	}
	return 1;
}
static void attach_show(const struct xc_config *cfg, char *buf, size_t n)
{
	if (CPU_COUNT(&cfg->attach) == 0 || xc_cpulist_format(&cfg->attach, buf, n) < 0)
		snprintf(buf, n, "none");
}
static void attach_to(const struct xc_config *cfg, const char *val, struct xc_opts *o)
{
	o->attach = val;	/* the caller's string, as for the field itself */
}

/* --- serial_bringup --- */
static int serial_env(const char *val, struct xc_config *cfg)
{
	if (!strcmp(val, "0") || !strcmp(val, "1")) {
		cfg->serial_bringup = val[0] == '1';
		return 0;
	}
	return -EINVAL;
}
static int serial_opt(const struct xc_opts *o, struct xc_config *cfg)
{
	if (!o->serial_bringup)
		return 0;
	cfg->serial_bringup = true;
	return 1;
}
static void serial_show(const struct xc_config *cfg, char *buf, size_t n)
{
	snprintf(buf, n, "%d", cfg->serial_bringup);
}
static void serial_to(const struct xc_config *cfg, const char *val, struct xc_opts *o)
{
	o->serial_bringup = cfg->serial_bringup;
}

/* --- poll_ns --- */
static int poll_env(const char *val, struct xc_config *cfg)
{
	unsigned long v;

	if (!strcmp(val, "adaptive"))
		cfg->poll_ns = XC_POLL_ADAPTIVE;
	else if (!strcmp(val, "none"))
		cfg->poll_ns = XC_POLL_NONE;
	else if (!strcmp(val, "forever"))
		cfg->poll_ns = XC_POLL_FOREVER;
	else if (!parse_ulong(val, LONG_MAX, &v) && v > 0)
		cfg->poll_ns = (long)v;
	else
		return -EINVAL;
	return 0;
}
static int poll_opt(const struct xc_opts *o, struct xc_config *cfg)
{
	if (o->poll_ns == XC_POLL_ADAPTIVE)
		return 0;
	if (o->poll_ns < XC_POLL_FOREVER) {
		opt_report("xc_opts.poll_ns %ld: invalid (XC_POLL_* or a positive ns)", o->poll_ns);
		return -EINVAL;
	}
	cfg->poll_ns = o->poll_ns;
	return 1;
}
static void poll_show(const struct xc_config *cfg, char *buf, size_t n)
{
	if (cfg->poll_ns == XC_POLL_ADAPTIVE)
		snprintf(buf, n, "adaptive");
	else if (cfg->poll_ns == XC_POLL_NONE)
		snprintf(buf, n, "none");
	else if (cfg->poll_ns == XC_POLL_FOREVER)
		snprintf(buf, n, "forever");
	else
		snprintf(buf, n, "%ld", cfg->poll_ns);
}

/* --- bringup_timeout_ms --- */
static int timeout_env(const char *val, struct xc_config *cfg)
{
	unsigned long v;

	if (parse_ulong(val, UINT_MAX, &v) || v == 0)
		return -EINVAL;
	cfg->bringup_timeout_ms = (unsigned)v;
	return 0;
}
static int timeout_opt(const struct xc_opts *o, struct xc_config *cfg)
{
	if (!o->bringup_timeout_ms)
		return 0;
	cfg->bringup_timeout_ms = o->bringup_timeout_ms;
	return 1;
}
static void timeout_show(const struct xc_config *cfg, char *buf, size_t n)
{
	snprintf(buf, n, "%u", cfg->bringup_timeout_ms);
}

/* --- ablate --- */
static const struct { const char *name; unsigned bit; } ablations[] = {
	{ "elide", XC_ABLATE_ELIDE },
	{ "coalesce", XC_ABLATE_COALESCE },
	{ "freeride", XC_ABLATE_FREERIDE },
	{ "notify", XC_ABLATE_NOTIFY },
	{ "slot", XC_ABLATE_SLOT },
	{ "ring", XC_ABLATE_RING },
	{ "membarrier", XC_ABLATE_MEMBARRIER },
};
static int ablate_env(const char *val, struct xc_config *cfg)
{
	char buf[128], *save, *tok;

	if (strlen(val) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, val);
	cfg->ablate = 0;
	if (!strcmp(val, "none"))
		return 0;
	if (!strcmp(val, "all")) {
		cfg->ablate = XC_ABLATE_ALL;
		return 0;
	}
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		size_t i;

		for (i = 0; i < sizeof(ablations) / sizeof(ablations[0]); i++)
			if (!strcmp(tok, ablations[i].name))
				break;
		if (i == sizeof(ablations) / sizeof(ablations[0]))
			return -EINVAL;
		cfg->ablate |= ablations[i].bit;
	}
	return cfg->ablate ? 0 : -EINVAL;
}
/* xc_ablate_set()'s bits, over XCALL_ABLATE: set single-threaded, before xc_init */
static unsigned ablate_set;

int xc_ablate_set(unsigned bits)
{
	if (bits & ~XC_ABLATE_ALL)
		return -EINVAL;
	ablate_set = bits;
	return 0;
}
static int ablate_take(const struct xc_opts *o, struct xc_config *cfg)
{
	if (!ablate_set)
		return 0;
	cfg->ablate = ablate_set;
	return 1;
}
static void ablate_show(const struct xc_config *cfg, char *buf, size_t n)
{
	size_t used = 0;

	buf[0] = 0;
	for (size_t i = 0; i < sizeof(ablations) / sizeof(ablations[0]); i++)
		if (cfg->ablate & ablations[i].bit)
			used += (size_t)snprintf(buf + used, used < n ? n - used : 0, "%s%s",
						 used ? "," : "", ablations[i].name);
	if (!used)
		snprintf(buf, n, "none");
}

/* --- stuck_ms --- */
/*
 * One meaning in the field and in the variable: a time in ms, or off. 0 is
 * the field's "left unset" (the default, 5000), as for every field, and so is
 * no time for the variable either: refused there, where it used to mean off.
 */
static int stuck_env(const char *val, struct xc_config *cfg)
{
	unsigned long v;

	if (!strcmp(val, "off")) {
		cfg->stuck_ms = 0;	/* the config's 0 is off */
		return 0;
	}
	if (parse_ulong(val, INT_MAX, &v))
		return -EINVAL;
	if (v == 0) {
		why = "not a time: off turns the reports off (0 in xc_opts.stuck_ms means the default, 5000)";
		return -EINVAL;
	}
	cfg->stuck_ms = (int)v;
	return 0;
}
static int stuck_opt(const struct xc_opts *o, struct xc_config *cfg)
{
	if (!o->stuck_ms)
		return 0;
	if (o->stuck_ms < 0 && o->stuck_ms != XC_STUCK_OFF) {
		opt_report("xc_opts.stuck_ms %d: invalid (ms, or XC_STUCK_OFF)", o->stuck_ms);
		return -EINVAL;
	}
	cfg->stuck_ms = o->stuck_ms == XC_STUCK_OFF ? 0 : o->stuck_ms;
	return 1;
}
static void stuck_show(const struct xc_config *cfg, char *buf, size_t n)
{
	if (cfg->stuck_ms)
		snprintf(buf, n, "%d", cfg->stuck_ms);
	else
		snprintf(buf, n, "off");
}

/* --- trace --- */
/*
 * "off" is no tracing, as XCALL_VERBOSE and xc_opts_get spell it; a file of
 * that name is "./off". The field is a path as it stands (NULL: no tracing).
 */
static int trace_env(const char *val, struct xc_config *cfg)
{
	if (!strcmp(val, "off")) {
		cfg->trace_file = NULL;
		return 0;
	}
	if (!val[0] || strlen(val) >= sizeof(cfg->trace_file_buf))
		return -EINVAL;
	strcpy(cfg->trace_file_buf, val);
	cfg->trace_file = cfg->trace_file_buf;
	return 0;
}
static int trace_opt(const struct xc_opts *o, struct xc_config *cfg)
{
	if (!o->trace_file)
		return 0;
	/* as XCALL_TRACE: a name cut short would send the trace to another file */
	if (!o->trace_file[0] || strlen(o->trace_file) >= sizeof(cfg->trace_file_buf)) {
		opt_report("xc_opts.trace_file \"%.40s%s\": %s", o->trace_file,
			   strlen(o->trace_file) > 40 ? "..." : "", o->trace_file[0] ?
			   "longer than 255 bytes" : "empty (NULL: no tracing)");
		return -EINVAL;
	}
	/* a copy: the caller's string need not live until xc_exit */
	strcpy(cfg->trace_file_buf, o->trace_file);
	cfg->trace_file = cfg->trace_file_buf;
	return 1;
}
static void trace_show(const struct xc_config *cfg, char *buf, size_t n)
{
	const char *f = cfg->trace_file;

	snprintf(buf, n, "%s", !f ? "off" : strcmp(f, "off") ? f : "./off");
}

/* --- ring_entries --- */
static bool ring_entries_ok(unsigned long v)
{
	return v >= 16 && v <= 65536 && !(v & (v - 1));
}
static int ring_entries_env(const char *val, struct xc_config *cfg)
{
	unsigned long v;

	if (parse_ulong(val, 65536, &v) || !ring_entries_ok(v))
		return -EINVAL;
	cfg->ring_entries = (unsigned)v;
	return 0;
}
static int ring_entries_opt(const struct xc_opts *o, struct xc_config *cfg)
{
	if (!o->ring_entries)
		return 0;
	if (!ring_entries_ok(o->ring_entries)) {
		opt_report("xc_opts.ring_entries %u: not a power of two in 16..65536", o->ring_entries);
		return -EINVAL;
	}
	cfg->ring_entries = o->ring_entries;
	return 1;
}
static void ring_entries_show(const struct xc_config *cfg, char *buf, size_t n)
{
	snprintf(buf, n, "%u", cfg->ring_entries);
}

/* --- stack_kb --- */
#define STACK_KB_MIN 64u
#define STACK_KB_MAX (1u << 20)
static int stack_env(const char *val, struct xc_config *cfg)
{
	unsigned long v;

	if (parse_ulong(val, STACK_KB_MAX, &v) || (v && v < STACK_KB_MIN))
		return -EINVAL;
	cfg->stack_kb = (unsigned)v;
	return 0;
}
static int stack_opt(const struct xc_opts *o, struct xc_config *cfg)
{
	if (!o->stack_kb)
		return 0;
	if (o->stack_kb < STACK_KB_MIN || o->stack_kb > STACK_KB_MAX) {
		opt_report("xc_opts.stack_kb %u: out of range (%u..%u)", o->stack_kb, STACK_KB_MIN, STACK_KB_MAX);
		return -EINVAL;
	}
	cfg->stack_kb = o->stack_kb;
	return 1;
}
static void stack_show(const struct xc_config *cfg, char *buf, size_t n)
{
	snprintf(buf, n, "%u", cfg->stack_kb);
}

static int trace_events_env(const char *val, struct xc_config *cfg)
{
	unsigned long v;

	if (parse_ulong(val, 1ul << 24, &v) || v < 16)
		return -EINVAL;
	cfg->trace_events = (unsigned)v;
	return 0;
}
static int trace_events_opt(const struct xc_opts *o, struct xc_config *cfg)
{
	if (!o->trace_events)
		return 0;
	if (o->trace_events < 16 || o->trace_events > (1u << 24)) {
		opt_report("xc_opts.trace_events %u: out of range (16..16777216)", o->trace_events);
		return -EINVAL;
	}
	cfg->trace_events = o->trace_events;
	return 1;
}
static void trace_events_show(const struct xc_config *cfg, char *buf, size_t n)
{
	snprintf(buf, n, "%u", cfg->trace_events);
}

/* --- urgent_signal --- */
/*
 * A real-time signal only: libxcall takes the signal's handler over in the
 * whole process from xc_init to xc_exit, and a standard signal already means
 * something to someone (the kernel sends SIGCHLD, SIGPIPE, SIGSEGV ...; SIGUSR1
 * and SIGUSR2 are the application's, or a runtime's, or a kill's from the
 * shell). SIGRTMIN..SIGRTMAX mean nothing until a program gives them a use.
 * Spelled by number or by name relative to SIGRTMIN and SIGRTMAX, which differ
 * between C libraries (glibc keeps 32 and 33 for itself).
 */
#define SIGNAL_WHY "not a real-time signal; the urgent signal must be one (SIGRTMIN..SIGRTMAX: " \
	"SIGRTMIN+N, SIGRTMAX-N or its number) because libxcall takes its handler over in the " \
	"whole process from xc_init to xc_exit, and only those mean nothing to the kernel, a " \
	"runtime or the shell's kill"
#define SIGNAL_SPELLING "not a signal: SIGRTMIN+N, SIGRTMAX-N or a number"

static int signal_env(const char *val, struct xc_config *cfg)
{
	unsigned long v, n = 0;
	long sig;

	if (!strncmp(val, "SIGRTMIN", 8) || !strncmp(val, "SIGRTMAX", 8)) {
		const char *rest = val + 8;

		if (*rest && ((*rest != '+' && *rest != '-') || rest[1] < '0' || rest[1] > '9' ||
			      parse_ulong(rest + 1, INT_MAX, &n))) {
			why = SIGNAL_SPELLING;
			return -EINVAL;
		}
		sig = (val[6] == 'A' ? SIGRTMAX : SIGRTMIN) + (*rest == '-' ? -(long)n : (long)n);
	} else if (!parse_ulong(val, INT_MAX, &v)) {
		sig = (long)v;
	} else {
		why = strncmp(val, "SIG", 3) ? SIGNAL_SPELLING : SIGNAL_WHY;
		return -EINVAL;
	}
	if (sig < SIGRTMIN || sig > SIGRTMAX) {
		why = sig > SIGRTMAX ? "beyond SIGRTMAX, the last real-time signal" : SIGNAL_WHY;
		return -EINVAL;
	}
	cfg->urgent_signal = (int)sig;
	return 0;
}
static int signal_opt(const struct xc_opts *o, struct xc_config *cfg)
{
	if (!o->urgent_signal)
		return 0;
	if (o->urgent_signal < SIGRTMIN || o->urgent_signal > SIGRTMAX) {
		opt_report("xc_opts.urgent_signal %d (real-time: %d..%d): " SIGNAL_WHY,
			   o->urgent_signal, SIGRTMIN, SIGRTMAX);
		return -EINVAL;
	}
	cfg->urgent_signal = o->urgent_signal;
	return 1;
}
/* By name, from the nearer end of the range: what signal_env reads back, in any C library. */
static void signal_show(const struct xc_config *cfg, char *buf, size_t n)
{
	int sig = cfg->urgent_signal, up = sig - SIGRTMIN, down = SIGRTMAX - sig;

	if (up == 0)
		snprintf(buf, n, "SIGRTMIN");
	else if (down == 0)
		snprintf(buf, n, "SIGRTMAX");
	else if (up <= down)
		snprintf(buf, n, "SIGRTMIN+%d", up);
	else
		snprintf(buf, n, "SIGRTMAX-%d", down);
}

/* --- follow_os --- */
static int follow_env(const char *val, struct xc_config *cfg)
{
	if (strcmp(val, "0") && strcmp(val, "1"))
		return -EINVAL;
	cfg->follow_os = val[0] == '1';
	return 0;
}
static int follow_opt(const struct xc_opts *o, struct xc_config *cfg)
{
	if (!o->follow_os)
		return 0;
	if (o->follow_os != XC_FOLLOW_OS_OFF) {
		opt_report("xc_opts.follow_os %d: invalid (0 or XC_FOLLOW_OS_OFF)", o->follow_os);
		return -EINVAL;
	}
	cfg->follow_os = false;
	return 1;
}
static void follow_show(const struct xc_config *cfg, char *buf, size_t n)
{
	snprintf(buf, n, "%d", cfg->follow_os);
}

/* --- verbose --- */
static int verbose_env(const char *val, struct xc_config *cfg)
{
	if (strcmp(val, "0") && strcmp(val, "1"))
		return -EINVAL;
	cfg->verbose = val[0] == '1';
	return 0;
}
static int no_opt(const struct xc_opts *o, struct xc_config *cfg)
{
	return 0;
}
static void verbose_show(const struct xc_config *cfg, char *buf, size_t n)
{
	snprintf(buf, n, "%d", cfg->verbose);
}

/* --- each option's xc_opts field from a parsed value (xc_opts_set) --- */
static void poll_to(const struct xc_config *cfg, const char *val, struct xc_opts *o)
{
	o->poll_ns = cfg->poll_ns;
}
static void timeout_to(const struct xc_config *cfg, const char *val, struct xc_opts *o)
{
	o->bringup_timeout_ms = cfg->bringup_timeout_ms;
}
static void stuck_to(const struct xc_config *cfg, const char *val, struct xc_opts *o)
{
	o->stuck_ms = cfg->stuck_ms ? cfg->stuck_ms : XC_STUCK_OFF;
}
static void trace_to(const struct xc_config *cfg, const char *val, struct xc_opts *o)
{
	o->trace_file = cfg->trace_file ? val : NULL;	/* the caller's string, as for the field itself */
}
static void trace_events_to(const struct xc_config *cfg, const char *val, struct xc_opts *o)
{
	o->trace_events = cfg->trace_events;
}
static void ring_entries_to(const struct xc_config *cfg, const char *val, struct xc_opts *o)
{
	o->ring_entries = cfg->ring_entries;
}
static void signal_to(const struct xc_config *cfg, const char *val, struct xc_opts *o)
{
	o->urgent_signal = cfg->urgent_signal;
}
static void stack_to(const struct xc_config *cfg, const char *val, struct xc_opts *o)
{
	o->stack_kb = cfg->stack_kb;
}
static void follow_to(const struct xc_config *cfg, const char *val, struct xc_opts *o)
{
	o->follow_os = cfg->follow_os ? 0 : XC_FOLLOW_OS_OFF;
}

static const struct xc_option options[] = {
	{ "XCALL_CPUS", "cpus",
	  "cpulist of the CPUs to run workers on, e.g. 0-3,8; unset, the affinity the process started with",
	  cpus_from_list, cpus_opt, cpus_show, cpus_to },
	{ "XCALL_ATTACH", "attach",
	  "cpulist of CPUs (of XCALL_CPUS) that get no libxcall thread: application threads attach to them (xc_worker_attach)",
	  attach_env, attach_opt, attach_show, attach_to },
	{ "XCALL_SERIAL_BRINGUP", "serial_bringup",
	  "1: start workers one at a time instead of all at once",
	  serial_env, serial_opt, serial_show, serial_to },
	{ "XCALL_POLL_NS", "poll_ns",
	  "idle poll window: adaptive, none, forever, or a window in ns (1 or more)",
	  poll_env, poll_opt, poll_show, poll_to },
	{ "XCALL_BRINGUP_TIMEOUT_MS", "bringup_timeout_ms",
	  "how long a worker may take to report alive",
	  timeout_env, timeout_opt, timeout_show, timeout_to },
	{ "XCALL_ABLATE", "-",
	  "benchmarks only: elide,coalesce,freeride,notify,slot,ring,membarrier (or all) turn optimisations off",
	  ablate_env, ablate_take, ablate_show, NULL },
	{ "XCALL_STUCK_MS", "stuck_ms",
	  "report a waiting call not done after this many ms, or off",
	  stuck_env, stuck_opt, stuck_show, stuck_to },
	{ "XCALL_TRACE", "trace_file",
	  "record events and write them to this file as Chrome trace JSON at xc_exit; off: no tracing (./off for a file named off)",
	  trace_env, trace_opt, trace_show, trace_to },
	{ "XCALL_TRACE_EVENTS", "trace_events",
	  "trace ring size in events, per CPU and per calling thread",
	  trace_events_env, trace_events_opt, trace_events_show, trace_events_to },
	{ "XCALL_RING_ENTRIES", "ring_entries",
	  "calls a thread may have queued to one CPU before it waits for room: a power of two, 16..65536",
	  ring_entries_env, ring_entries_opt, ring_entries_show, ring_entries_to },
	{ "XCALL_URGENT_SIGNAL", "urgent_signal",
	  "the real-time signal that interrupts a busy worker for XC_URGENT calls: SIGRTMIN+N, SIGRTMAX-N or its number",
	  signal_env, signal_opt, signal_show, signal_to },
	{ "XCALL_FOLLOW_OS", "follow_os",
	  "1: a worker whose CPU the OS takes away (hotplug, affinity, cpuset) takes it offline until it comes back; 0: never look",
	  follow_env, follow_opt, follow_show, follow_to },
	{ "XCALL_STACK_KB", "stack_kb",
	  "each worker thread's stack in KiB, 64..1048576; 0: the process's default (RLIMIT_STACK)",
	  stack_env, stack_opt, stack_show, stack_to },
	{ "XCALL_VERBOSE", "-",
	  "1: print this table at xc_init",
	  verbose_env, no_opt, verbose_show, NULL },
};
#define NR_OPTIONS (sizeof(options) / sizeof(options[0]))

static enum xc_source sources[NR_OPTIONS];

/* Every option at its default: the one place the defaults are written. */
static int config_defaults(struct xc_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->poll_ns = XC_POLL_ADAPTIVE;
	cfg->bringup_timeout_ms = 10000;
	cfg->stuck_ms = 5000;
	cfg->trace_events = 65536;
	cfg->ring_entries = XC_RING_ENTRIES;
	cfg->urgent_signal = SIGRTMIN + 2;
	cfg->follow_os = true;
	cpus_usable(&cfg->cpus);
	if (CPU_COUNT(&cfg->cpus) == 0 && sched_getaffinity(0, sizeof(cfg->cpus), &cfg->cpus))
		return -errno;
	return 0;
}

int xc_config_resolve(const struct xc_opts *opts, struct xc_config *cfg)
{
	static const struct xc_opts zero;
	const struct xc_opts *o = opts ? opts : &zero;
	int err = config_defaults(cfg);

	cfg->report = o->report;	/* first, so that errors below reach the hook */
	cfg->report_ctx = o->report_ctx;
	if (err)
		return err;
	cfg->cpu_init = o->cpu_init;
	cfg->cpu_init_arg = o->cpu_init_arg;

	for (size_t i = 0; i < NR_OPTIONS; i++) {
		const struct xc_option *opt = &options[i];
		const char *env = getenv(opt->env);

		int taken = opt->take_opt(o, cfg);

		sources[i] = SRC_DEFAULT;
		if (taken < 0)
			return taken;
		if (taken) {
			sources[i] = SRC_OPTS;
			continue;
		}
		if (!env)
			continue;
		why = NULL;
		if (opt->parse_env(env, cfg)) {
			if (why)
				opt_report("%s=\"%s\": invalid: %s", opt->env, env, why);
			else
				opt_report("%s=\"%s\": invalid (%s)", opt->env, env, opt->help);
			return -EINVAL;
		}
		sources[i] = SRC_ENV;
	}
	/* each value was judged as it was taken (take_opt, parse_env); what is left is how two relate */
	{
		cpu_set_t inside;

		CPU_AND(&inside, &cfg->attach, &cfg->cpus);
		if (!CPU_EQUAL(&inside, &cfg->attach)) {
			char list[OPT_VALUE_MAX];

			attach_show(cfg, list, sizeof(list));
			opt_report("attach %s: not a subset of the CPUs (cpus)", list);
			return -EINVAL;
		}
	}
	return 0;
}

/* @opt's value in @cfg into @buf: as much as fits in @n bytes, NUL-terminated; returns that length. */
static size_t option_show(const struct xc_option *opt, const struct xc_config *cfg, char *buf, size_t n)
{
	char val[OPT_VALUE_MAX];
	size_t len;

	opt->show(cfg, val, sizeof(val));
	len = strnlen(val, n - 1);
	memcpy(buf, val, len);
	buf[len] = 0;
	return len;
}

void xc_config_print(const struct xc_config *cfg)
{
	struct xc_config def;
	char val[256], dval[256];

	config_defaults(&def);
	xc_report("%-26s %-20s %-9s %s", "variable", "value", "source", "meaning");
	for (size_t i = 0; i < NR_OPTIONS; i++) {
		option_show(&options[i], cfg, val, sizeof(val));
		option_show(&options[i], &def, dval, sizeof(dval));
		xc_report("%-26s %-20s %-9s %s (default %s)", options[i].env, val,
			  source_name[sources[i]], options[i].help, dval);
	}
}

static const struct xc_option *option_named(const char *var)
{
	for (size_t i = 0; var && i < NR_OPTIONS; i++)
		if (!strcmp(options[i].env, var))
			return &options[i];
	return NULL;
}

/*
 * The caller's struct xc_opts of @size bytes (xcall.h, the ABI note) as this
 * library's: its fields as far as it reaches, the rest zero (default). A
 * bigger one (a program built against a newer header) fits only if what
 * lies past this library's fields is zero: an option it does not know is
 * refused, not ignored. 0 or -EINVAL.
 */
int xc_opts_in(struct xc_opts *full, const struct xc_opts *o, size_t size)
{
	memset(full, 0, sizeof(*full));
	if (!o)
		return 0;
	memcpy(full, o, size < sizeof(*full) ? size : sizeof(*full));
	for (size_t i = sizeof(*full); i < size; i++)
		if (((const unsigned char *)o)[i])
			return -EINVAL;
	return 0;
}

static int opts_set(struct xc_opts *o, const char *var, const char *value)
{
	const struct xc_option *opt = option_named(var);
	struct xc_config cfg;
	int ret;

	if (!o || !value)
		return -EINVAL;
	if (!opt || !opt->to_opt) {
		if (o->report && var) {
			char line[160];

			snprintf(line, sizeof(line), "%.60s: %s", var,
				 opt ? "not an option of struct xc_opts" : "no such option");
			o->report(o->report_ctx, line);
		}
		return -EINVAL;
	}
	config_defaults(&cfg);
	/* the reason goes to @o->report, in xc_init()'s words for the same variable */
	quiet = true;
	quiet_to = o->report;
	quiet_ctx = o->report_ctx;
	why = NULL;
	ret = opt->parse_env(value, &cfg);
	if (ret) {
		if (why)
			opt_report("%s=\"%s\": invalid: %s", opt->env, value, why);
		else
			opt_report("%s=\"%s\": invalid (%s)", opt->env, value, opt->help);
	}
	quiet = false;
	quiet_to = NULL;
	quiet_ctx = NULL;
	if (ret)
		return -EINVAL;
	opt->to_opt(&cfg, value, o);
	return 0;
}

int xc_ablate_parse(const char *names, unsigned *bits)
{
	struct xc_config cfg;

	if (!names || !bits || ablate_env(names, &cfg))
		return -EINVAL;
	*bits = cfg.ablate;
	return 0;
}

void xc_ablate_format(unsigned bits, char *buf, size_t size)
{
	struct xc_config cfg = { .ablate = bits };

	if (size)
		option_show(option_named("XCALL_ABLATE"), &cfg, buf, size);
}

int xc_opts_set_sz(struct xc_opts *o, size_t opts_size, const char *var, const char *value)
{
	struct xc_opts full, before;
	int ret;

	if (!o || xc_opts_in(&full, o, opts_size))
		return -EINVAL;
	before = full;
	ret = opts_set(&full, var, value);
	/* a field past the caller's struct: an option its xcall.h does not have */
	if (!ret && opts_size < sizeof(full) &&
	    memcmp((char *)&full + opts_size, (char *)&before + opts_size, sizeof(full) - opts_size))
		return -EINVAL;
	if (!ret)
		memcpy(o, &full, opts_size < sizeof(full) ? opts_size : sizeof(full));
	return ret;
}

static int opts_get(const struct xc_opts *o, const char *var, char *buf, size_t size)
{
	const struct xc_option *opt = option_named(var);
	struct xc_config cfg;
	int ret;

	if (!o || !buf || !size || !opt || !opt->to_opt)
		return -EINVAL;
	config_defaults(&cfg);
	quiet = true;
	ret = opt->take_opt(o, &cfg);	/* refuses what xc_init refuses */
	quiet = false;
	if (ret < 0)
		return -EINVAL;
	return (int)option_show(opt, &cfg, buf, size);
}

int xc_opts_get_sz(const struct xc_opts *o, size_t opts_size, const char *var, char *buf, size_t size)
{
	struct xc_opts full;

	if (!o || xc_opts_in(&full, o, opts_size))
		return -EINVAL;
	return opts_get(&full, var, buf, size);
}
