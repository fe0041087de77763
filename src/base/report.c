// SPDX-License-Identifier: MIT
/* report.c - the one place diagnostics leave the library: the report hook, or stderr. */
#include "base/internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/*
 * Without a hook a line goes to file descriptor 2 in one write(2), never
 * through stdio: a report may come from a signal handler (a stuck waiting
 * call made there), where stderr's lock may be held by the code it
 * interrupted or by another thread for as long as it likes. One write also
 * keeps lines from several threads whole. vsnprintf into a stack buffer
 * takes no lock and, with the integer and string conversions used here,
 * allocates nothing.
 */
void xc_report(const char *fmt, ...)
{
	static const char prefix[] = "xcall: ";
	enum { LINE = 512 };	/* a line's room, its terminating NUL included */
	char out[sizeof(prefix) - 1 + LINE];	/* the NUL's place takes the newline */
	char *line = out + sizeof(prefix) - 1;
	void (*hook)(void *, const char *) = xc_rt.cfg.report;
	size_t len, done = 0;
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, LINE, fmt, ap);
	va_end(ap);
	if (hook) {
		hook(xc_rt.cfg.report_ctx, line);
		errno = saved;
		return;
	}
	memcpy(out, prefix, sizeof(prefix) - 1);
	len = sizeof(prefix) - 1 + strlen(line);
	out[len++] = '\n';
	while (done < len) {
		ssize_t n = write(STDERR_FILENO, out + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;	/* nowhere to report to: the line is dropped, as stderr would */
		done += (size_t)n;
	}
	errno = saved;
}
