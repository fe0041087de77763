/*
 * abi-reader: a program built against this xcall.h, run by tests/api/abi.sh
 * against libxcall.so.0 as built here and as built with one counter and one
 * option more (the same soname). It must load either, start a runtime from
 * its struct xc_opts, and read correct counts into its struct xc_stats
 * without a byte written past it: each struct is followed by a canary.
 * Prints "abi-reader: ok" and exits 0, or names what failed and exits 1.
 */
#define _GNU_SOURCE	/* CPU_ISSET */
#include <xcall.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CANARY 0x5a5a5a5a5a5a5a5aull
#define CALLS 1000

static void nothing(void *arg)
{
	(void)arg;
}

#define FAIL(...) do { fprintf(stderr, "abi-reader: " __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)

int main(void)
{
	struct { struct xc_opts o; unsigned long long canary; } opts = { .canary = CANARY };
	struct { struct xc_stats s; unsigned long long canary; } a = { .canary = CANARY },
		b = { .canary = CANARY }, d = { .canary = CANARY };
	char buf[64];
	cpu_set_t on;
	int n, cpu = -1;

	opts.o.stuck_ms = 2500;
	if (xc_opts_set(&opts.o, "XCALL_POLL_NS", "none") || opts.canary != CANARY)
		FAIL("xc_opts_set");
	if (xc_opts_get(&opts.o, "XCALL_STUCK_MS", buf, sizeof(buf)) < 0 || strcmp(buf, "2500"))
		FAIL("xc_opts_get: %s", buf);
	if (xc_init(&opts.o))
		FAIL("xc_init");
	n = xc_online_mask(&on);
	for (int c = 0; c < CPU_SETSIZE && cpu < 0; c++)
		if (CPU_ISSET(c, &on))
			cpu = c;
	if (n < 1 || cpu < 0)
		FAIL("no CPU online");
	if (xc_stats_get(cpu, &a.s))
		FAIL("xc_stats_get");
	for (int i = 0; i < CALLS; i++)
		if (xc_call_single(cpu, nothing, NULL, XC_WAIT))
			FAIL("xc_call_single");
	if (xc_stats_get(cpu, &b.s))
		FAIL("xc_stats_get");
	xc_stats_delta(&d.s, &a.s, &b.s);
	if (a.canary != CANARY || b.canary != CANARY || d.canary != CANARY)
		FAIL("a struct xc_stats was written past its end");
	/* each waiting call is counted before it completes: all of them, exactly */
	if (d.s.calls != CALLS || b.s.calls - a.s.calls != CALLS)
		FAIL("counted %llu calls of %d", (unsigned long long)d.s.calls, CALLS);
	xc_stats_add(&d.s, &a.s);
	if (d.s.calls != b.s.calls || d.canary != CANARY)
		FAIL("xc_stats_add");
	if (xc_exit())
		FAIL("xc_exit");
	printf("abi-reader: ok\n");
	return 0;
}
