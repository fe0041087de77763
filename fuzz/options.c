// SPDX-License-Identifier: MIT
/*
 * fuzz/options.c - libFuzzer harness for the options: xc_config_resolve()
 * (src/api/options.c), the step of xc_init() that reads struct xc_opts and the
 * XCALL_* environment. It is called exactly as xc_init() calls it, into
 * xc_rt.cfg, with fuzzed environment values and fuzzed xc_opts fields.
 *
 * Input: fields separated by NUL bytes.
 *   fields 0-9   values of XCALL_CPUS, XCALL_SERIAL_BRINGUP, XCALL_POLL_NS,
 *                XCALL_BRINGUP_TIMEOUT_MS, XCALL_ABLATE, XCALL_STUCK_MS,
 *                XCALL_TRACE, XCALL_TRACE_EVENTS, XCALL_URGENT_SIGNAL,
 *                XCALL_VERBOSE; a missing field or the single byte 0xff
 *                leaves the variable unset, an empty field sets it to "".
 *   field 10     xc_opts.cpus       (missing or 0xff: NULL)
 *   field 11     xc_opts.trace_file (missing or 0xff: NULL)
 *   the rest     raw bytes, little-endian, zero-padded: serial_bringup (1),
 *                poll_ns (8), bringup_timeout_ms (4), stuck_ms (4),
 *                trace_events (4), urgent_signal (4), follow_os (4).
 * XCALL_FOLLOW_OS is not fuzzed (it takes "0" or "1", as XCALL_VERBOSE does),
 * nor XCALL_ATTACH (a cpulist, the parser XCALL_CPUS exercises), nor
 * XCALL_RING_ENTRIES nor XCALL_STACK_KB (fuzz/roundtrip.c covers both); they stay out of the
 * fields so that earlier inputs keep their meaning.
 *
 * Properties: the return is 0 or -EINVAL; -EINVAL says why through the report
 * hook (at least one line), 0 says nothing; every line fits the library's
 * 512-byte line; an accepted configuration is in range (a non-empty CPU set
 * within the process's affinity, poll_ns >= XC_POLL_FOREVER, stuck_ms >= 0, a
 * real-time signal, trace_events 0 or 16..2^24, known ablate bits, a
 * NUL-terminated trace file name, no CPU attached outside the set), and
 * xc_config_print() (XCALL_VERBOSE's table) prints it in 15 lines.
 */
#include "base/internal.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int xc_config_resolve(const struct xc_opts *opts, struct xc_config *cfg);
void xc_config_print(const struct xc_config *cfg);

static const char *const vars[] = {
	"XCALL_CPUS", "XCALL_SERIAL_BRINGUP", "XCALL_POLL_NS", "XCALL_BRINGUP_TIMEOUT_MS",
	"XCALL_ABLATE", "XCALL_STUCK_MS", "XCALL_TRACE", "XCALL_TRACE_EVENTS",
	"XCALL_URGENT_SIGNAL", "XCALL_VERBOSE",
};
#define NVARS (sizeof(vars) / sizeof(vars[0]))
#define NFIELDS (NVARS + 2)

#define CHECK(cond, ...) do { if (!(cond)) { \
	fprintf(stderr, "fuzz options: property failed: %s: ", #cond); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); abort(); } } while (0)

static int lines;

static void report_hook(void *ctx, const char *line)
{
	size_t n = strnlen(line, 1024);

	CHECK(n < 512, "report line of %zu bytes", n);
	lines++;
}

static const char *field(const char *f)
{
	return f && !((unsigned char)f[0] == 0xff && f[1] == 0) ? f : NULL;
}

static uint64_t take(const uint8_t **p, const uint8_t *end, int bytes)
{
	uint64_t v = 0;

	for (int i = 0; i < bytes; i++)
		if (*p < end)
			v |= (uint64_t)*(*p)++ << (8 * i);
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *f[NFIELDS] = {0};
	size_t pos = 0;
	struct xc_opts o = {0};
	struct xc_config *cfg = &xc_rt.cfg;	/* where xc_init() resolves them */
	cpu_set_t inside, allowed;

	memcpy(buf, data, size);
	buf[size] = 0;
	for (size_t i = 0; i < NFIELDS && pos <= size; i++) {
		f[i] = buf + pos;
		pos += strlen(buf + pos) + 1;
	}
	/*
	 * The environment the library reads, built here rather than with setenv(),
	 * which keeps every value it was ever given (unbounded memory in a fuzzer).
	 */
	char *env[NVARS + 1];
	size_t nenv = 0;
	for (size_t i = 0; i < NVARS; i++) {
		if (!field(f[i]))
			continue;
		env[nenv] = malloc(strlen(vars[i]) + strlen(f[i]) + 2);
		sprintf(env[nenv++], "%s=%s", vars[i], f[i]);
	}
	env[nenv] = NULL;
	char **saved_environ = environ;
	o.cpus = field(f[NVARS]);
	o.trace_file = field(f[NVARS + 1]);
	const uint8_t *p = data + (pos < size ? pos : size), *end = data + size;
	o.serial_bringup = take(&p, end, 1) & 1;
	o.poll_ns = (long)take(&p, end, 8);
	o.bringup_timeout_ms = (unsigned)take(&p, end, 4);
	o.stuck_ms = (int)(uint32_t)take(&p, end, 4);
	o.trace_events = (unsigned)take(&p, end, 4);
	o.urgent_signal = (int)(uint32_t)take(&p, end, 4);
	o.follow_os = (int)(uint32_t)take(&p, end, 4);
	o.report = report_hook;

	lines = 0;
	environ = env;
	int ret = xc_config_resolve(&o, cfg);
	environ = saved_environ;
	CHECK(ret == 0 || ret == -EINVAL, "returned %d", ret);
	if (ret) {
		CHECK(lines >= 1, "-EINVAL without a report line");
		goto out;
	}
	CHECK(lines == 0, "accepted, yet %d report line(s)", lines);
	CHECK(cfg->report == report_hook, "report hook lost");
	CPU_ZERO(&allowed);
	sched_getaffinity(0, sizeof(allowed), &allowed);
	CPU_AND(&inside, &cfg->cpus, &allowed);
	CHECK(CPU_COUNT(&cfg->cpus) > 0, "empty CPU set");
	CHECK(CPU_EQUAL(&inside, &cfg->cpus), "CPU set outside the affinity");
	CHECK(cfg->poll_ns >= XC_POLL_FOREVER, "poll_ns %ld", cfg->poll_ns);
	CHECK(cfg->stuck_ms >= 0, "stuck_ms %d", cfg->stuck_ms);
	CHECK(cfg->urgent_signal >= SIGRTMIN && cfg->urgent_signal <= SIGRTMAX,
	      "urgent_signal %d", cfg->urgent_signal);
	CHECK(cfg->trace_events == 0 || (cfg->trace_events >= 16 && cfg->trace_events <= (1u << 24)),
	      "trace_events %u", cfg->trace_events);
	CHECK(!(cfg->ablate & ~XC_ABLATE_ALL), "ablate 0x%x", cfg->ablate);
	CPU_AND(&inside, &cfg->attach, &cfg->cpus);
	CHECK(CPU_EQUAL(&inside, &cfg->attach), "attached CPUs outside the set");
	if (cfg->trace_file)
		CHECK(cfg->trace_file == cfg->trace_file_buf &&
		      strnlen(cfg->trace_file_buf, sizeof(cfg->trace_file_buf)) < sizeof(cfg->trace_file_buf),
		      "trace file name not owned or not terminated");
	lines = 0;
	xc_config_print(cfg);
	/* + XCALL_FOLLOW_OS, XCALL_ATTACH, XCALL_RING_ENTRIES, XCALL_STACK_KB */
	CHECK(lines == 1 + (int)NVARS + 4, "config table of %d lines", lines);
out:
	memset(cfg, 0, sizeof(*cfg));
	for (size_t i = 0; i < nenv; i++)
		free(env[i]);
	free(buf);
	return 0;
}
