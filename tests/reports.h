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

static inline void t_capture(void *ctx, const char *line)
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

/* How many times @what was reported. */
static inline int t_count_reported(const char *what)
{
	int n = 0;

	pthread_mutex_lock(&t_reports_lock);
	for (const char *p = t_reports; (p = strstr(p, what)); p++)
		n++;
	pthread_mutex_unlock(&t_reports_lock);
	return n;
}

/*
 * Wait (bounded: 60 s) until @what was reported @n times; true if it was.
 * For a function that must run until its caller reports it stuck: the report
 * is the event to wait for, whenever it comes on a loaded machine.
 */
static inline bool t_await_reported(const char *what, int n)
{
	for (int i = 0; i < 60000; i++) {
		if (t_count_reported(what) >= n)
			return true;
		t_sleep_ms(1);
	}
	return false;
}

static inline void t_clear_reports(void)
{
	pthread_mutex_lock(&t_reports_lock);
	t_reports[0] = 0;
	pthread_mutex_unlock(&t_reports_lock);
}

/* CHECK, and on failure every line reported, for the reader of the failure. */
#define CHECK_REPORTS(cond) do {						\
	if (!(cond)) {								\
		pthread_mutex_lock(&t_reports_lock);				\
		fprintf(stderr, "%s:%d: check failed: %s; the reports:\n%s",	\
			__FILE__, __LINE__, #cond, t_reports);			\
		exit(T_FAIL);							\
	}									\
} while (0)

#endif /* XC_TEST_REPORTS_H */
