/*
 * report-stderr: without a report hook, a stuck call's report reaches file
 * descriptor 2 as one whole line ("xcall: stuck call: ...\n") while another
 * thread holds stderr's stdio lock, as it may for as long as it likes; a
 * report made in a signal handler can meet that lock held by the very code
 * it interrupted, so the default report must not take it. The unstuck line
 * follows once the call completes.
 */
#include "test.h"
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>

static atomic_int release;

/* not static: the report names it through the dynamic symbol table */
void report_stderr_held_fn(void *arg)
{
	while (!atomic_load(&release))
		sched_yield();
}

static void *caller(void *arg)
{
	int cpu = *(int *)arg;

	CHECK_RET(xc_call_single(cpu, report_stderr_held_fn, NULL, XC_WAIT), 0);
	return NULL;
}

/* Read from @fd until @buf holds @what or 60 s pass (a failure: the report never came). */
static bool read_until(int fd, char *buf, size_t size, size_t *len, const char *what)
{
	for (int i = 0; i < 600 && !strstr(buf, what); i++) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, 100) <= 0)
			continue;
		n = read(fd, buf + *len, size - 1 - *len);
		if (n <= 0)
			return false;
		*len += (size_t)n;
		buf[*len] = '\0';
	}
	return strstr(buf, what) != NULL;
}

int main(void)
{
	struct xc_opts o = { .stuck_ms = 50 };
	char buf[8192] = "";
	int cpus[CPU_SETSIZE], fds[2], keep, n;
	size_t len = 0;
	bool stuck_seen, unstuck_seen, whole;
	pthread_t t;

	CHECK(pipe2(fds, O_CLOEXEC) == 0);
	CHECK((keep = dup(STDERR_FILENO)) >= 0);
	CHECK_RET(xc_init(&o), 0);
	n = t_cpus(cpus);
	CHECK(n >= 1);

	/* stderr's lock held here, its descriptor a pipe this thread reads */
	fflush(stderr);
	CHECK(dup2(fds[1], STDERR_FILENO) == STDERR_FILENO);
	flockfile(stderr);
	CHECK(pthread_create(&t, NULL, caller, &cpus[n - 1]) == 0);
	stuck_seen = read_until(fds[0], buf, sizeof(buf), &len, "has waited");
	atomic_store(&release, 1);
	unstuck_seen = stuck_seen && read_until(fds[0], buf, sizeof(buf), &len, "unstuck call:");
	funlockfile(stderr);
	CHECK(pthread_join(t, NULL) == 0);
	CHECK(dup2(keep, STDERR_FILENO) == STDERR_FILENO);
	/* every line whole, each from its start: "xcall: " ... "\n" */
	whole = strncmp(buf, "xcall: stuck call: ", 19) == 0;
	for (char *p = buf; whole && *p; p = strchr(p, '\n') + 1)
		whole = strchr(p, '\n') && strncmp(p, "xcall: ", 7) == 0;
	if (!stuck_seen || !unstuck_seen || !whole || !strstr(buf, "report_stderr_held_fn"))
		fprintf(stderr, "read from fd 2: \"%s\"\n", buf);
	CHECK(stuck_seen);
	CHECK(unstuck_seen);
	CHECK(whole);
	CHECK(strstr(buf, "report_stderr_held_fn") != NULL);
	CHECK_RET(xc_exit(), 0);
	return T_PASS;
}
