/*
 * stuck-not-running: a stuck-call report names a target worker that is not
 * running as not running, not by the idle state it noted when it last ran.
 * A child process stops the target worker's thread with ptrace (the rest of
 * the process runs on) while the worker polls (poll forever: the sender
 * elides its kick, as for a worker the OS does not schedule) or sleeps (no
 * poll: the kick's wake cannot run it). A waiting call to it then gets stuck,
 * and the report must say that the worker has not run, that its thread is
 * stopped and that calls wait in its queue, and must not call the CPU idle.
 * Once the child lets the thread go the call completes, with an "unstuck"
 * line. Skips where ptrace is not allowed (a tracer already there, a policy).
 */
#include "reports.h"
#include <pthread.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static void get_tid(void *arg)
{
	*(int *)arg = (int)syscall(SYS_gettid);
}

static void quick(void *arg)
{
	(void)arg;
}

/* @tid's state letter in /proc (t: stopped by its tracer); 0 if unreadable. */
static char task_state(int tid)
{
	char path[64], stat[512];
	const char *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(stat, 1, sizeof(stat) - 1, f);
	fclose(f);
	stat[n] = 0;
	p = strrchr(stat, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

static int go_fd;
static char while_stopped[sizeof(t_reports)];	/* the reports made while it was stopped */

/* Lets the stopped thread go once a report is there: the call cannot end before. */
static void *release_after_report(void *arg)
{
	while (!t_reported("stuck call:"))
		t_sleep_ms(2);
	pthread_mutex_lock(&t_reports_lock);
	memcpy(while_stopped, t_reports, sizeof(while_stopped));
	pthread_mutex_unlock(&t_reports_lock);
	CHECK(write(go_fd, "g", 1) == 1);
	return NULL;
}

/* The child: stop thread @tid (a ptrace trap stop), say so, let it go when told. */
_Noreturn static void child(int tid, int status_fd, int go)
{
	int st;
	char c;

	if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) || ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) ||
	    waitpid(tid, &st, __WALL) != tid || !WIFSTOPPED(st)) {
		(void)!write(status_fd, "n", 1);
		_exit(0);
	}
	(void)!write(status_fd, "y", 1);
	(void)!read(go, &c, 1);		/* the parent's word, or its end */
	ptrace(PTRACE_DETACH, tid, NULL, NULL);
	_exit(0);
}

/* One round with idle poll policy @poll; false if ptrace is not allowed. */
static bool round_with(long poll)
{
	struct xc_opts o = { .report = t_capture, .stuck_ms = 100, .poll_ns = poll };
	int cpus[CPU_SETSIZE], status[2], go[2], target, tid = 0, wst;
	char c, want[128];
	pthread_t helper;
	pid_t pid;

	t_clear_reports();
	CHECK_RET(xc_init(&o), 0);
	target = cpus[t_cpus(cpus) - 1];
	CHECK_RET(xc_call_single(target, get_tid, &tid, XC_WAIT), 0);
	CHECK(tid > 0);
	t_clear_reports();	/* a loaded machine may have reported that call */
	/* where Yama restricts ptrace to descendants, let the child in */
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	CHECK(pipe(status) == 0 && pipe(go) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		close(status[0]);
		close(go[1]);
		child(tid, status[1], go[0]);
	}
	close(status[1]);
	close(go[0]);
	go_fd = go[1];
	CHECK(read(status[0], &c, 1) == 1);
	if (c != 'y') {
		close(go[1]);
		waitpid(pid, &wst, 0);
		CHECK_RET(xc_exit(), 0);
		return false;
	}
	CHECK(task_state(tid) == 't');

	CHECK(pthread_create(&helper, NULL, release_after_report, NULL) == 0);
	CHECK_RET(xc_call_single(target, quick, NULL, XC_WAIT), 0);
	CHECK(pthread_join(helper, NULL) == 0);
	close(go[1]);
	CHECK(waitpid(pid, &wst, 0) == pid);
	close(status[0]);

	/*
	 * Later reports, once it runs again, may see it scheduled late, or
	 * running. The stop may also have caught it on its way out of
	 * get_tid, before it noted the call's end: then the report names that
	 * call, and says that its thread has not run since.
	 */
	snprintf(want, sizeof(want), "on CPU %d; CPU %d", target, target);
	CHECK(strstr(while_stopped, want));
	CHECK(strstr(while_stopped, " has not run in the last "));
	CHECK(strstr(while_stopped, " ms: stopped (a signal or a debugger)"));
	if (!strstr(while_stopped, "running call get_tid")) {
		snprintf(want, sizeof(want), "CPU %d's worker has not run in the last ", target);
		CHECK(strstr(while_stopped, want));
		CHECK(strstr(while_stopped, ", calls queued)"));
	}
	snprintf(want, sizeof(want), "CPU %d is idle", target);
	CHECK(!strstr(while_stopped, want));
	CHECK(t_reported("unstuck call: thread "));
	CHECK_RET(xc_exit(), 0);
	return true;
}

int main(void)
{
	if (!round_with(XC_POLL_FOREVER))
		t_skip("ptrace cannot stop a thread of this process here");
	CHECK(round_with(XC_POLL_NONE));
	return T_PASS;
}
