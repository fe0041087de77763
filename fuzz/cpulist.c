// SPDX-License-Identifier: MIT
/*
 * fuzz/cpulist.c - libFuzzer harness for the cpulist parser and formatter
 * (xc_cpulist_parse, xc_cpulist_format; src/base/topology.c).
 *
 * The input is used twice:
 *  1. as a string: xc_cpulist_parse() must return 0 or -EINVAL; a parsed set
 *     is never empty, formats, and re-parses to the same set; formatting into
 *     a buffer one byte short fails with -ENOSPC and leaves "" behind.
 *  2. as a CPU bitmask (the input's bytes, zero-padded to a cpu_set_t):
 *     formatting then parsing gives the set back; an empty set formats as "".
 * Any violated property aborts, which libFuzzer reports as a crash.
 */
#include "xcall.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longest cpulist: every other CPU, "0,2,4,...,1022": under 5 bytes each. */
#define FMT_MAX (CPU_SETSIZE * 5 + 1)

#define CHECK(cond, ...) do { if (!(cond)) { \
	fprintf(stderr, "fuzz cpulist: property failed: %s: ", #cond); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); abort(); } } while (0)

static void round_trip(const cpu_set_t *set, const char *what)
{
	static char buf[FMT_MAX];
	cpu_set_t again;
	int n = xc_cpulist_format(set, buf, sizeof(buf));

	CHECK(n >= 0, "%s: format returned %d", what, n);
	CHECK((size_t)n == strlen(buf), "%s: format returned %d for \"%s\"", what, n, buf);
	if (CPU_COUNT(set) == 0) {
		CHECK(n == 0, "%s: empty set formatted as \"%s\"", what, buf);
		CHECK(xc_cpulist_parse(buf, &again) == -EINVAL, "%s: \"\" parsed", what);
		return;
	}
	CHECK(xc_cpulist_parse(buf, &again) == 0, "%s: own output \"%s\" refused", what, buf);
	CHECK(CPU_EQUAL(set, &again), "%s: \"%s\" re-parsed to another set", what, buf);

	/* exactly enough room works; one byte less is -ENOSPC with "" left behind */
	char *exact = malloc((size_t)n + 1);
	CHECK(xc_cpulist_format(set, exact, (size_t)n + 1) == n, "%s: exact-size buffer", what);
	CHECK(!strcmp(exact, buf), "%s: exact-size output differs", what);
	CHECK(xc_cpulist_format(set, exact, (size_t)n) == -ENOSPC, "%s: short buffer accepted", what);
	CHECK(exact[0] == 0, "%s: short buffer left \"%.*s\"", what, n, exact);
	free(exact);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	cpu_set_t set;
	int ret;

	memcpy(s, data, size);
	s[size] = 0;
	ret = xc_cpulist_parse(s, &set);
	CHECK(ret == 0 || ret == -EINVAL, "parse(\"%s\") returned %d", s, ret);
	if (ret == 0) {
		CHECK(CPU_COUNT(&set) > 0, "parse(\"%s\") accepted an empty set", s);
		round_trip(&set, s);
	}
	free(s);

	/* the bytes as a bitmask */
	CPU_ZERO(&set);
	memcpy(&set, data, size < sizeof(set) ? size : sizeof(set));
	round_trip(&set, "bitmask");
	return 0;
}
