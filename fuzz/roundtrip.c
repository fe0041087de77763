// SPDX-License-Identifier: MIT
/*
 * fuzz/roundtrip.c - libFuzzer harness (and property test, replayed in make
 * check) for xc_opts_get() -> xc_opts_set(): every option, given any value
 * xc_init() accepts in its xc_opts field, is spelled by xc_opts_get() so that
 * xc_opts_set() takes it back to the same value.
 *
 * Input: a byte stream that picks the values; when it runs out, a generator
 * seeded from the input goes on, so one input gives ROUNDS configurations.
 * Each round gives every field of struct xc_opts a value xc_init() accepts
 * (the default 0 among them; CPU sets within the CPUs this process may use,
 * attached CPUs within those; trace file names of any bytes but NUL, 1-255
 * of them, "off" and "./off" among them; the urgent signal any of
 * SIGRTMIN..SIGRTMAX).
 *
 * Properties, for every option:
 *   - xc_opts_get() of the field succeeds and writes the whole value;
 *   - xc_opts_set() of that string into a zero struct succeeds;
 *   - xc_opts_get() of the new struct writes the same string;
 *   - the option's value in force, as xc_init() resolves it (empty
 *     environment), is the same from both structs, and nothing is reported;
 * and this harness covers every option of the table XCALL_VERBOSE prints,
 * so that an option added later without a round trip here fails.
 */
#include "base/internal.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int xc_config_resolve(const struct xc_opts *opts, struct xc_config *cfg);
void xc_config_print(const struct xc_config *cfg);

#define ROUNDS 50

#define CHECK(cond, ...) do { if (!(cond)) { \
	fprintf(stderr, "fuzz roundtrip: property failed: %s: ", #cond); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); abort(); } } while (0)

enum opt {
	O_CPUS, O_ATTACH, O_SERIAL, O_POLL, O_TIMEOUT, O_STUCK, O_TRACE,
	O_TRACE_EVENTS, O_SIGNAL, O_FOLLOW, O_RING, O_STACK, NOPTS
};
static const char *const vars[NOPTS] = {
	"XCALL_CPUS", "XCALL_ATTACH", "XCALL_SERIAL_BRINGUP", "XCALL_POLL_NS",
	"XCALL_BRINGUP_TIMEOUT_MS", "XCALL_STUCK_MS", "XCALL_TRACE",
	"XCALL_TRACE_EVENTS", "XCALL_URGENT_SIGNAL", "XCALL_FOLLOW_OS", "XCALL_RING_ENTRIES",
	"XCALL_STACK_KB",
};

/* --- the value stream: the input's bytes, then splitmix64 seeded from them --- */
static const uint8_t *in, *in_end;
static uint64_t rng;

static uint8_t byte(void)
{
	if (in < in_end)
		return *in++;
	rng += 0x9e3779b97f4a7c15u;
	uint64_t z = rng;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return (uint8_t)(z ^ (z >> 31));
}
static uint64_t bits(int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i += 8)
		v = v << 8 | byte();
	return n < 64 ? v & ((1ull << n) - 1) : v;
}
/* lo..hi, both included */
static uint64_t range(uint64_t lo, uint64_t hi)
{
	uint64_t span = hi - lo + 1;

	return span ? lo + bits(64) % span : bits(64);
}

/* --- one configuration --- */
static int reports;

static void report_hook(void *ctx, const char *line)
{
	fprintf(stderr, "fuzz roundtrip: reported: %s\n", line);
	reports++;
}

/* A cpulist of a random subset of @from (non-empty if @nonempty), spelled one of two ways. */
static void random_cpulist(const cpu_set_t *from, bool nonempty, char *buf, size_t n, cpu_set_t *out)
{
	int cpus[XC_MAX_CPUS], nr = 0;

	for (int c = 0; c < XC_MAX_CPUS; c++)
		if (CPU_ISSET(c, from))
			cpus[nr++] = c;
	CPU_ZERO(out);
	for (int i = 0; i < nr; i++)
		if (byte() & 1)
			CPU_SET(cpus[i], out);
	if (nonempty && nr && !CPU_COUNT(out))
		CPU_SET(cpus[range(0, (uint64_t)nr - 1)], out);
	if (byte() & 1) {
		CHECK(xc_cpulist_format(out, buf, n) >= 0 || !CPU_COUNT(out), "cpulist too long");
		return;
	}
	size_t used = 0;	/* one CPU at a time: "0,1,2" */
	buf[0] = 0;
	for (int c = 0; c < XC_MAX_CPUS; c++)
		if (CPU_ISSET(c, out))
			used += (size_t)snprintf(buf + used, n - used, "%s%d", used ? "," : "", c);
}

static void random_trace_name(char *buf)
{
	switch (byte() % 8) {
	case 0:
		strcpy(buf, "off");
		return;
	case 1:
		strcpy(buf, "./off");
		return;
	}
	size_t len = (size_t)range(1, 255);
	for (size_t i = 0; i < len; i++) {
		uint8_t b = byte();

		buf[i] = (char)(b ? b : 'x');
	}
	buf[len] = 0;
}

struct sample {
	struct xc_opts o;
	char cpus[XC_MAX_CPUS * 5 + 1], attach[XC_MAX_CPUS * 5 + 1], trace[256];
};

static void random_opts(struct sample *s, const cpu_set_t *usable)
{
	struct xc_opts *o = &s->o;
	cpu_set_t cpus, attach;

	memset(s, 0, sizeof(*s));
	/* each field left zero (the default) one time in four */
	if (byte() & 3) {
		random_cpulist(usable, true, s->cpus, sizeof(s->cpus), &cpus);
		o->cpus = s->cpus;
	}
	if (byte() & 3) {
		random_cpulist(usable, false, s->attach, sizeof(s->attach), &attach);
		o->attach = CPU_COUNT(&attach) ? s->attach : "none";
	}
	o->serial_bringup = byte() & 1;
	switch (byte() % 5) {
	case 0: o->poll_ns = XC_POLL_ADAPTIVE; break;
	case 1: o->poll_ns = XC_POLL_NONE; break;
	case 2: o->poll_ns = XC_POLL_FOREVER; break;
	case 3: o->poll_ns = (long)range(1, 100000000); break;
	default: o->poll_ns = (long)range(1, LONG_MAX); break;
	}
	if (byte() & 3)
		o->bringup_timeout_ms = (unsigned)range(1, UINT32_MAX);
	switch (byte() % 4) {
	case 0: o->stuck_ms = 0; break;
	case 1: o->stuck_ms = XC_STUCK_OFF; break;
	case 2: o->stuck_ms = (int)range(1, 100000); break;
	default: o->stuck_ms = (int)range(1, INT32_MAX); break;
	}
	if (byte() & 1) {
		random_trace_name(s->trace);
		o->trace_file = s->trace;
	}
	if (byte() & 3)
		o->trace_events = (unsigned)range(16, 1u << 24);
	if (byte() & 3)
		o->urgent_signal = (int)range((uint64_t)SIGRTMIN, (uint64_t)SIGRTMAX);
	o->follow_os = byte() & 1 ? XC_FOLLOW_OS_OFF : 0;
	if (byte() & 3)
		o->ring_entries = 16u << (byte() % 13);
	if (!(byte() & 3))
		o->stack_kb = (unsigned)range(64, 1u << 20);
}

/* @o with only the field of @opt taken from @from (the rest zero: defaults). */
static void only(enum opt opt, const struct xc_opts *from, struct xc_opts *o)
{
	memset(o, 0, sizeof(*o));
	switch (opt) {
	case O_CPUS: o->cpus = from->cpus; break;
	case O_ATTACH: o->attach = from->attach; break;
	case O_SERIAL: o->serial_bringup = from->serial_bringup; break;
	case O_POLL: o->poll_ns = from->poll_ns; break;
	case O_TIMEOUT: o->bringup_timeout_ms = from->bringup_timeout_ms; break;
	case O_STUCK: o->stuck_ms = from->stuck_ms; break;
	case O_TRACE: o->trace_file = from->trace_file; break;
	case O_TRACE_EVENTS: o->trace_events = from->trace_events; break;
	case O_SIGNAL: o->urgent_signal = from->urgent_signal; break;
	case O_FOLLOW: o->follow_os = from->follow_os; break;
	case O_RING: o->ring_entries = from->ring_entries; break;
	case O_STACK: o->stack_kb = from->stack_kb; break;
	case NOPTS: break;
	}
}

/* The option's value in force from @o, as xc_init() resolves it with no XCALL_* set. */
static void resolve(const struct xc_opts *o, struct xc_config *cfg)
{
	static char *no_env[] = { NULL };
	char **saved = environ;
	int ret;

	environ = no_env;
	ret = xc_config_resolve(o, cfg);
	environ = saved;
	CHECK(ret == 0, "xc_config_resolve of a valid struct: %d", ret);
}

/* The same file: "off" is written "./off" (XCALL_TRACE's off is no trace). */
static bool same_file(const char *a, const char *b)
{
	a += strncmp(a, "./", 2) ? 0 : 2;
	b += strncmp(b, "./", 2) ? 0 : 2;
	return !strcmp(a, b);
}

static bool same_value(enum opt opt, const struct xc_config *a, const struct xc_config *b)
{
	switch (opt) {
	case O_CPUS: return CPU_EQUAL(&a->cpus, &b->cpus);
	case O_ATTACH: return CPU_EQUAL(&a->attach, &b->attach);
	case O_SERIAL: return a->serial_bringup == b->serial_bringup;
	case O_POLL: return a->poll_ns == b->poll_ns;
	case O_TIMEOUT: return a->bringup_timeout_ms == b->bringup_timeout_ms;
	case O_STUCK: return a->stuck_ms == b->stuck_ms;
	case O_TRACE: return !a->trace_file == !b->trace_file &&
			     (!a->trace_file || same_file(a->trace_file, b->trace_file));
	case O_TRACE_EVENTS: return a->trace_events == b->trace_events;
	case O_SIGNAL: return a->urgent_signal == b->urgent_signal;
	case O_FOLLOW: return a->follow_os == b->follow_os;
	case O_RING: return a->ring_entries == b->ring_entries;
	case O_STACK: return a->stack_kb == b->stack_kb;
	case NOPTS: break;
	}
	return false;
}

static void round_trip(const struct xc_opts *o)
{
	static char first[4096], again[4096];
	static struct xc_config c1, c2;

	for (int i = 0; i < NOPTS; i++) {
		struct xc_opts one, back = {0};
		int n = xc_opts_get(o, vars[i], first, sizeof(first));

		CHECK(n >= 0 && (size_t)n == strlen(first) && (size_t)n < sizeof(first) - 1,
		      "%s: xc_opts_get returned %d", vars[i], n);
		CHECK(xc_opts_set(&back, vars[i], first) == 0, "%s: xc_opts_set refused \"%s\", "
		      "which xc_opts_get wrote", vars[i], first);
		n = xc_opts_get(&back, vars[i], again, sizeof(again));
		CHECK(n >= 0 && !strcmp(first, again), "%s: \"%s\" reads back as \"%s\"",
		      vars[i], first, n >= 0 ? again : "(refused)");
		only((enum opt)i, o, &one);
		resolve(&one, &c1);
		resolve(&back, &c2);
		CHECK(same_value((enum opt)i, &c1, &c2), "%s: \"%s\" set back gives another value",
		      vars[i], first);
	}
	CHECK(reports == 0, "%d report line(s) for valid values", reports);
}

/*
 * Every option of XCALL_VERBOSE's table is one this harness round-trips, or
 * one of the two that are no field of struct xc_opts (XCALL_VERBOSE, and the
 * benchmarks' XCALL_ABLATE).
 */
static int table_lines, table_unknown;

static void table_hook(void *ctx, const char *line)
{
	char name[64];

	table_lines++;
	if (table_lines == 1 || sscanf(line, "%63s", name) != 1)
		return;
	if (!strcmp(name, "XCALL_VERBOSE") || !strcmp(name, "XCALL_ABLATE"))
		return;
	for (int i = 0; i < NOPTS; i++)
		if (!strcmp(name, vars[i]))
			return;
	fprintf(stderr, "fuzz roundtrip: option %s has no round trip in this harness: add it\n", name);
	table_unknown++;
}

static void every_option_covered(void)
{
	static struct xc_config cfg;
	struct xc_opts zero = {0};

	resolve(&zero, &cfg);
	xc_rt.cfg.report = table_hook;
	xc_config_print(&cfg);
	xc_rt.cfg.report = report_hook;
	CHECK(table_unknown == 0 && table_lines == 1 + NOPTS + 2, "options table of %d lines, "
	      "%d not covered", table_lines, table_unknown);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sample s;
	static bool covered;
	cpu_set_t usable, online;

	xc_rt.cfg.report = report_hook;	/* where anything reported would go */
	if (!covered) {
		every_option_covered();
		covered = true;
	}
	/* the CPUs xc_init may use: this process's, online */
	CPU_ZERO(&usable);
	sched_getaffinity(0, sizeof(usable), &usable);
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");
	if (f) {
		char line[4096];

		if (fgets(line, sizeof(line), f) && !xc_cpulist_parse(line, &online))
			CPU_AND(&usable, &usable, &online);
		fclose(f);
	}
	in = data;
	in_end = data + size;
	rng = 0x243f6a8885a308d3u;
	for (size_t i = 0; i < size; i++)
		rng = (rng ^ data[i]) * 0x100000001b3u;
	for (int r = 0; r < ROUNDS; r++) {
		random_opts(&s, &usable);
		round_trip(&s.o);
	}
	return 0;
}
