// SPDX-License-Identifier: MIT
/*
 * progress.c - the scenario fuzzer's hang verdict: time counts towards a
 * bound only while every thread of the process that waits for a CPU gets
 * one. On a machine shared with other work a runnable thread may wait
 * seconds for the OS, and its state letter cannot tell that wait from a
 * hung spin ('R' is both running and runnable): its CPU time can, as the
 * library's stuck report's "has not run" does (src/run/stuck.c). So each look
 * reads every thread's CPU time (/proc/PID/task/TID/schedstat, or
 * utime + stime of its stat where schedstat is missing) and state, and a
 * stretch in which some thread got no CPU time while it was runnable is
 * starved: not counted (progress.h).
 *
 * Only its watcher reads and writes a struct progress: no thread safety.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "progress.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The whole of a small /proc file; its length, or -1. */
static int read_small(const char *path, char *buf, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t len;

	if (fd < 0)
		return -1;
	len = read(fd, buf, n - 1);
	close(fd);
	if (len <= 0)
		return -1;
	buf[len] = 0;
	return (int)len;
}

/*
 * @tid's state letter, CPU time and run-queue wait in ns (wait 0 where
 * schedstat is missing); false if the thread is gone.
 */
static bool task_read(pid_t pid, pid_t tid, char *state, uint64_t *run_ns, uint64_t *wait_ns)
{
	char path[96], buf[512];
	unsigned long long run, wait;
	const char *p;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	if (read_small(path, buf, sizeof(buf)) < 0)
		return false;
	p = strrchr(buf, ')');	/* the name in parentheses may hold anything */
	if (!p || p[1] != ' ')
		return false;
	*state = p[2];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", pid, tid);
	if (read_small(path, buf, sizeof(buf)) > 0 && sscanf(buf, "%llu %llu", &run, &wait) == 2) {
		*run_ns = run;
		*wait_ns = wait;
		return true;
	}
	{
		/* fields 14 and 15 of stat, after the state (field 3): utime and stime in clock ticks */
		unsigned long long ut = 0, st = 0;
		long hz = sysconf(_SC_CLK_TCK);

		if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
			return false;
		*run_ns = (ut + st) * (1000000000ull / (unsigned long long)(hz > 0 ? hz : 100));
		*wait_ns = 0;
	}
	return true;
}

void progress_init(struct progress *p, pid_t pid, pid_t skip)
{
	memset(p, 0, sizeof(*p));
	p->pid = pid ? pid : getpid();
	p->skip = skip;
}

bool progress_look(struct progress *p)
{
	char path[64];
	struct dirent *e;
	DIR *d;
	uint64_t now = mono_ns(), dt = p->last_ns ? now - p->last_ns : 0;
	bool starved = false;
	int n = 0;
	__typeof__(p->t[0]) seen[PROGRESS_MAXTASKS];

	snprintf(path, sizeof(path), "/proc/%d/task", p->pid);
	d = opendir(path);
	if (!d)
		return false;
	while ((e = readdir(d)) && n < PROGRESS_MAXTASKS) {
		pid_t tid = (pid_t)atoi(e->d_name);
		uint64_t run, wait;
		char state;

		if (tid <= 0 || tid == p->skip || !task_read(p->pid, tid, &state, &run, &wait))
			continue;
		seen[n].tid = tid;
		seen[n].run_ns = run;
		seen[n].wait_ns = wait;
		n++;
		if (!dt)
			continue;
		for (int i = 0; i < p->n; i++) {
			if (p->t[i].tid != tid)
				continue;
			/* no CPU time in the stretch, and waiting for a CPU at its end or for half of it */
			if (run - p->t[i].run_ns < PROGRESS_RAN_NS &&
			    (state == 'R' || (wait && wait - p->t[i].wait_ns >= dt / 2))) {
				starved = true;
				p->starved_tid = tid;
				p->starved_state = state;
			}
			break;
		}
	}
	closedir(d);
	memcpy(p->t, seen, sizeof(seen[0]) * (size_t)n);
	p->n = n;
	if (starved)
		p->starved_ns += dt;
	p->last_ns = now;
	return starved;
}
