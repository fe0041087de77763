// SPDX-License-Identifier: MIT
/* report.c - the one place diagnostics leave the library: the report hook, or stderr. */
#include "internal.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>

void xc_report(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	void (*hook)(const char *) = xc_rt.cfg.report;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (hook)
		hook(line);
	else
		fprintf(stderr, "xcall: %s\n", line);
}

/* A function's name for reports and traces: its symbol (+offset), else its address. */
const char *xc_symbol(const void *fn, char *buf, size_t n)
{
	Dl_info info;

	if (!fn)
		snprintf(buf, n, "-");
	else if (dladdr(fn, &info) && info.dli_sname && info.dli_saddr == fn)
		snprintf(buf, n, "%s", info.dli_sname);
	else if (dladdr(fn, &info) && info.dli_sname)
		snprintf(buf, n, "%s+0x%lx", info.dli_sname,
			 (unsigned long)((const char *)fn - (const char *)info.dli_saddr));
	else
		snprintf(buf, n, "%p", fn);
	return buf;
}
