/* SPDX-License-Identifier: MIT */
/*
 * kernel_journal.c - leave the machine as it was. Every sysfs write is
 * journalled (path and old value, fsync'ed) in /run/xcall/ before it is
 * made; the old values are written back at exit, on SIGINT/SIGTERM/SIGHUP,
 * and by `kernel --restore` (run also at the start of every root probe) when
 * a killed run left a journal behind. /run is a tmpfs: a reboot, which
 * restores sysfs anyway, also drops the journal.
 */
#include "kernel.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_ENTRIES 256

/* This run's changes, kept in memory so that a signal handler can undo them. */
static struct entry {
	char path[256];
	char old[32];
} entries[MAX_ENTRIES];
static volatile sig_atomic_t nentries;

int sysfs_read(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, size - 1);
	int err = n < 0 ? -errno : 0;
	close(fd);
	if (err)
		return err;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/* Async-signal-safe: open, write, close only. */
static int write_value(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t len = (ssize_t)strlen(value);
	int err = write(fd, value, (size_t)len) == len ? 0 : -errno;
	close(fd);
	return err;
}

static void say(const char *a, const char *b, const char *c)
{
	/* write(2), not stdio: this also runs inside signal handlers */
	const char *parts[] = {"xcall-bench kernel: ", a, b, c, "\n"};
	for (int i = 0; i < 5; i++)
		if (write(2, parts[i], strlen(parts[i])) < 0)
			return;
}

static void undo_in_memory(void)
{
	for (int i = nentries - 1; i >= 0; i--) {
		int err = write_value(entries[i].path, entries[i].old);
		say(err ? "FAILED to restore " : "restored ", entries[i].path, err ? "" : "");
	}
	if (nentries)
		unlink(JOURNAL_FILE);
	nentries = 0;
}

static void on_signal(int sig)
{
	undo_in_memory();
	signal(sig, SIG_DFL);
	raise(sig);
}

void journal_arm(void)
{
	static bool armed;
	if (armed)
		return;
	armed = true;
	atexit(undo_in_memory);
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGINT);
	sigaddset(&sa.sa_mask, SIGTERM);
	sigaddset(&sa.sa_mask, SIGHUP);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

int sysfs_set(const char *path, const char *value)
{
	char old[32];
	int err = sysfs_read(path, old, sizeof(old));
	if (err)
		return err;
	if (!strcmp(old, value))
		return 0;
	/* journalled already: the oldest value is the one to restore */
	for (int i = 0; i < nentries; i++)
		if (!strcmp(entries[i].path, path))
			return write_value(path, value);
	if (nentries == MAX_ENTRIES || strlen(path) >= sizeof(entries[0].path))
		return -ENOSPC;
	mkdir(JOURNAL_DIR, 0700);
	int fd = open(JOURNAL_FILE, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0) {
		/* no journal, no change: the old value could not be put back after a crash */
		err = -errno;
		fprintf(stderr, "xcall-bench kernel: cannot journal a change of %s in %s (%s): left as it is\n",
			path, JOURNAL_FILE, strerror(-err));
		return err;
	}
	char line[512];
	int len = snprintf(line, sizeof(line), "%s\t%s\n", path, old);
	/* on disk before the change: a SIGKILL right after still leaves the old value */
	err = write(fd, line, (size_t)len) == len && !fsync(fd) ? 0 : -errno;
	close(fd);
	if (err)
		return err;
	struct entry *e = &entries[nentries];
	snprintf(e->path, sizeof(e->path), "%s", path);
	snprintf(e->old, sizeof(e->old), "%s", old);
	nentries++;
	err = write_value(path, value);
	if (!g_out.quiet)
		fprintf(stderr, "xcall-bench kernel: set %s: %s -> %s%s\n", path, old, value,
			err ? " FAILED" : "");
	return err;
}

int journal_restore(bool verbose)
{
	FILE *f = fopen(JOURNAL_FILE, "r");
	if (!f) {
		if (verbose)
			printf("kernel --restore: no journal at %s, nothing to restore\n", JOURNAL_FILE);
		return 0;
	}
	struct entry *list = calloc(MAX_ENTRIES, sizeof(*list));
	int n = 0, failed = 0;
	char line[512];
	while (n < MAX_ENTRIES && fgets(line, sizeof(line), f)) {
		char *tab = strchr(line, '\t');
		if (!tab)
			continue;
		*tab = 0;
		tab[1 + strcspn(tab + 1, "\n")] = 0;
		if (strlen(line) >= sizeof(list[n].path) || strlen(tab + 1) >= sizeof(list[n].old))
			continue;
		memcpy(list[n].path, line, strlen(line) + 1);
		memcpy(list[n].old, tab + 1, strlen(tab + 1) + 1);
		n++;
	}
	fclose(f);
	/* newest first, so a path journalled twice ends at its oldest value */
	for (int i = n - 1; i >= 0; i--) {
		char cur[32] = "?";
		sysfs_read(list[i].path, cur, sizeof(cur));
		int err = strcmp(cur, list[i].old) ? write_value(list[i].path, list[i].old) : 0;
		failed += err != 0;
		printf("kernel --restore: %s: %s -> %s%s\n", list[i].path, cur, list[i].old,
		       err ? " FAILED" : "");
	}
	free(list);
	if (!failed) {
		unlink(JOURNAL_FILE);
		nentries = 0;   /* this run's changes are undone: nothing left for exit */
	}
	return failed ? -EIO : 0;
}
