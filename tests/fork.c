/*
 * fork: a child forked after xc_init() has no runtime. Every call gets
 * -ENXIO (single wait / nowait / urgent, async, many, all, any, work,
 * hotplug, stats, online mask, trace dump) and so does xc_exit(); the urgent
 * signal has its disposition from before xc_init again. The child may
 * xc_init() afresh, and its runtime works: calls run on the right CPU,
 * more nowait calls than a ring holds go through although the parent had a
 * full ring's worth in flight at the fork, hotplug works although a parent
 * thread held the hotplug lock at the fork, and its xc_exit() leaves the
 * signal as it found it. The parent loses nothing: every call it queued
 * before the fork runs once. Then again with the parent untraced, where its
 * waiting calls take the slot's straight path: the child's waiting call
 * still gets -ENXIO, and does not wait for a worker it does not have.
 *
 * Then a fork in the middle of a close: the parent forks while its first
 * CPU's worker runs a call inside the close of its queue (an offline's
 * drain). The child sets that CPU aside for an attached thread and calls it
 * before any thread attaches: nowait and waiting calls get -ENXIO, under a
 * watchdog (alarm) that turns a hang into a failure. (The child's copy of
 * the close's counters once said a close was under way for ever, and its
 * nowait call waited for that close's end.)
 */
#include "test.h"
#include "dump.h"
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>

#define IN_FLIGHT ((int)XC_RING_ENTRIES)	/* a whole ring of the main thread's to the target */

static int target;
static _Atomic int released, blocker_running, offline_ret = 1;
static _Atomic int work_running, closing_call_running, closing_released;
static _Atomic long ran;
static _Atomic int ran_on = -1;

static void blocker(void *arg)
{
	atomic_store(&blocker_running, 1);
	while (!atomic_load(&released))
		;
}

static void count(void *arg)
{
	atomic_fetch_add(&ran, 1);
}

static void where(void *arg)
{
	atomic_store(&ran_on, sched_getcpu());
}

static void *offline_target(void *arg)
{
	atomic_store(&offline_ret, xc_cpu_offline(target));
	return NULL;
}

static void *signal_handler_now(void)
{
	struct sigaction sa;

	CHECK(sigaction(SIGRTMIN + 2, NULL, &sa) == 0);
	return (void *)sa.sa_handler;
}

static void child(void *dfl)
{
	struct xc_call async = { .fn = count };
	struct xc_work work = { .fn = count };
	struct xc_stats st;
	cpu_set_t one, online;

	t_dump_on_alarm(NULL);	/* the parent's watchdog (child_passed) sends SIGALRM */
	CPU_ZERO(&one);
	CPU_SET(target, &one);
	CHECK(signal_handler_now() == dfl);
	CHECK_RET(xc_call_single(target, count, NULL, XC_WAIT), -ENXIO);
	CHECK_RET(xc_call_single(target, count, NULL, 0), -ENXIO);
	CHECK_RET(xc_call_single(target, count, NULL, XC_URGENT), -ENXIO);
	CHECK_RET(xc_call_async(target, &async), -ENXIO);
	CHECK_RET(xc_call_many(&one, count, NULL, XC_WAIT), -ENXIO);
	CHECK_RET(xc_call_all(count, NULL, 0), -ENXIO);
	CHECK_RET(xc_call_any(&one, count, NULL, XC_WAIT), -ENXIO);
	CHECK_RET(xc_queue_work(target, &work), -ENXIO);
	CHECK_RET(xc_cpu_offline(target), -ENXIO);
	CHECK_RET(xc_cpu_online(target), -ENXIO);
	CHECK_RET(xc_stats_get(-1, &st), -ENXIO);
	CHECK_RET(xc_online_mask(&online), -ENXIO);
	CHECK_RET(xc_trace_dump("/dev/null"), -ENXIO);
	CHECK_RET(xc_exit(), -ENXIO);
	CHECK(atomic_load(&ran) == 0);

	/* a runtime of its own */
	CHECK_RET(xc_init(NULL), 0);
	CHECK(signal_handler_now() != dfl);
	CHECK_RET(xc_call_single(target, where, NULL, XC_WAIT), 0);
	CHECK(atomic_load(&ran_on) == target);
	for (int i = 0; i < 2 * IN_FLIGHT; i++)
		CHECK_RET(xc_call_single(target, count, NULL, 0), 0);
	CHECK_RET(xc_call_single(target, count, NULL, XC_WAIT), 0);
	WAIT_UNTIL(atomic_load(&ran) == 2 * IN_FLIGHT + 1);
	CHECK_RET(xc_cpu_offline(target), 0);
	CHECK_RET(xc_cpu_online(target), 0);
	CHECK_RET(xc_exit(), 0);
	CHECK(signal_handler_now() == dfl);
	/*
	 * _exit: the child's copies of the parent's other threads' pools and
	 * rings, and of what was in flight at the fork, belong to no thread here; leak
	 * checkers would list them at exit.
	 */
	_exit(T_PASS);
}

/* A work item on the CPU to close: it returns once the offline request is there. */
static void until_offline_asked(void *arg)
{
	atomic_store(&work_running, 1);
	while (atomic_load(&xc_cpus[target].life.ctl) != XC_CTL_OFFLINE)
		sched_yield();
}

/* A call linked while the work item ran: the offline's close runs it. */
static void closing_call(void *arg)
{
	atomic_store(&closing_call_running, 1);
	while (!atomic_load(&closing_released))
		sched_yield();
}

#define WATCHDOG_S 20	/* a child still running after this is hung */

static void child_of_close(const char *attach)
{
	struct xc_opts o = { .attach = attach };

	t_dump_on_alarm(NULL);
	alarm(WATCHDOG_S);
	CHECK_RET(xc_init(&o), 0);
	CHECK_RET(xc_call_single(target, count, NULL, 0), -ENXIO);
	CHECK_RET(xc_call_single(target, count, NULL, XC_WAIT), -ENXIO);
	CHECK_RET(xc_exit(), 0);
	CHECK(atomic_load(&ran) == 0);
	_exit(T_PASS);
}

/* A fork while the first CPU's worker is inside the close of its queue. */
static void fork_in_close(void)
{
	struct xc_work work = { .fn = until_offline_asked };
	char attach[16];
	pthread_t t;
	int status;
	pid_t pid;

	target = t_attach_first_cpu(attach, sizeof(attach));
	CHECK_RET(xc_init(NULL), 0);
	atomic_store(&offline_ret, 1);
	atomic_store(&ran, 0);
	CHECK_RET(xc_queue_work(target, &work), 0);
	WAIT_UNTIL(atomic_load(&work_running));
	/* linked while the worker is in the work item: taken only by the close */
	CHECK_RET(xc_call_single(target, closing_call, NULL, 0), 0);
	CHECK(pthread_create(&t, NULL, offline_target, NULL) == 0);
	WAIT_UNTIL(atomic_load(&closing_call_running));

	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		child_of_close(attach);

	atomic_store(&closing_released, 1);
	pthread_join(t, NULL);
	CHECK_RET(atomic_load(&offline_ret), 0);
	CHECK_RET(xc_cpu_online(target), 0);
	CHECK(waitpid(pid, &status, 0) == pid);
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
		fprintf(stderr, "the child forked in a close hung (its watchdog fired after %d s)\n",
			WATCHDOG_S);
		exit(T_FAIL);
	}
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == T_PASS);
	CHECK_RET(xc_exit(), 0);
}

/*
 * Whether child @pid exited passing, given 20 s; a hung one is named as
 * @who, and SIGALRM makes it dump (dump.h) before it dies, or SIGKILL
 * after two minutes more.
 */
static bool child_passed(pid_t pid, const char *who)
{
	int status = -1;

	for (int i = 0; i < 20000 && waitpid(pid, &status, WNOHANG) == 0; i++)
		t_sleep_ms(1);
	if (status == -1) {
		fprintf(stderr, "%s hung\n", who);
		kill(pid, SIGALRM);
		for (int i = 0; i < 120000 && waitpid(pid, &status, WNOHANG) == 0; i++)
			t_sleep_ms(1);
		if (status == -1) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
		}
		return false;
	}
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == T_PASS);
	return true;
}

int main(void)
{
	char trace[] = "/tmp/xcall-fork-XXXXXX";
	struct xc_opts o = { .trace_file = trace };
	int cpus[CPU_SETSIZE], n, fd;
	void *dfl = signal_handler_now();
	pthread_t t;
	pid_t pid;

	fd = mkstemp(trace);
	CHECK(fd >= 0);
	close(fd);
	CHECK_RET(xc_init(&o), 0);
	n = t_cpus(cpus);
	if (n < 2) {
		xc_exit();
		unlink(trace);
		t_skip("needs 2 CPUs");
	}
	target = cpus[n - 1];

	/* a whole ring in flight, and a thread holding the hotplug lock, at the fork */
	CHECK_RET(xc_call_single(target, blocker, NULL, 0), 0);
	WAIT_UNTIL(atomic_load(&blocker_running));
	for (int i = 0; i < IN_FLIGHT - 1; i++)
		CHECK_RET(xc_call_single(target, count, NULL, 0), 0);
	CHECK(pthread_create(&t, NULL, offline_target, NULL) == 0);
	WAIT_UNTIL(atomic_load(&xc_cpus[target].life.ctl) == XC_CTL_OFFLINE);

	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		child(dfl);

	atomic_store(&released, 1);
	pthread_join(t, NULL);
	CHECK_RET(atomic_load(&offline_ret), 0);
	CHECK(atomic_load(&ran) == IN_FLIGHT - 1);	/* the offline drain ran them all */
	CHECK_RET(xc_cpu_online(target), 0);
	if (!child_passed(pid, "the child"))
		return T_FAIL;
	CHECK_RET(xc_exit(), 0);
	unlink(trace);
	CHECK(signal_handler_now() == dfl);

	/* untraced: the straight path's gate is the parent's, not the child's */
	CHECK_RET(xc_init(NULL), 0);
	CHECK_RET(xc_call_single(target, count, NULL, XC_WAIT), 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		t_dump_on_alarm(NULL);
		CHECK_RET(xc_call_single(target, count, NULL, XC_WAIT), -ENXIO);
		_exit(T_PASS);
	}
	if (!child_passed(pid, "the untraced child"))
		return T_FAIL;
	CHECK_RET(xc_exit(), 0);

	fork_in_close();
	return T_PASS;
}
