/* SPDX-License-Identifier: MIT */
/*
 * reports.h - the report hook (xc_opts.report) of the tests that check what
 * libxcall reports: every line kept, in order, one per line, until the
 * buffer is full. Workers report from their own threads, so the buffer is
 * behind a lock; the tests read it once the reporting has happened.
 */
#ifndef XC_TEST_REPORTS_H
#define XC_TEST_REPORTS_H

#include "test.h"
#include <pthread.h>
#include <stdbool.h>

static char t_reports[16384];
static pthread_mutex_t t_reports_lock = PTHREAD_MUTEX_INITIALIZER;

static inline void t_capture(const char *line)
{
	pthread_mutex_lock(&t_reports_lock);
	strncat(t_reports, line, sizeof(t_reports) - strlen(t_reports) - 2);
	strcat(t_reports, "\n");
	pthread_mutex_unlock(&t_reports_lock);
}

static inline bool t_reported(const char *what)
{
	bool found;

	pthread_mutex_lock(&t_reports_lock);
	found = strstr(t_reports, what) != NULL;
	pthread_mutex_unlock(&t_reports_lock);
	return found;
}

static inline void t_clear_reports(void)
{
	pthread_mutex_lock(&t_reports_lock);
	t_reports[0] = 0;
	pthread_mutex_unlock(&t_reports_lock);
}

#endif /* XC_TEST_REPORTS_H */
