// SPDX-License-Identifier: MIT
/* report.c - the one place diagnostics leave the library: the report hook, or stderr. */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>

void xc_report(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	void (*hook)(void *, const char *) = xc_rt.cfg.report;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (hook)
		hook(xc_rt.cfg.report_ctx, line);
	else
		fprintf(stderr, "xcall: %s\n", line);
}
