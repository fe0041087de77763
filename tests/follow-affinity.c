/*
 * follow-affinity: another process moves every thread of this one off a CPU
 * (as `taskset -a -p` does) while a thread keeps calling that CPU, then
 * gives it back. The worker notices: its CPU goes offline in libxcall with
 * one report line naming it and why, later calls get -ENXIO, and every run
 * that ended on a wrong CPU is counted in xc_stats.displaced. Given back,
 * the CPU comes online by itself with every worker pinned to exactly its
 * CPU, and calls run there again. A CPU taken offline with xc_cpu_offline()
 * stays offline across such a take-and-give-back (xc_cpu_online meanwhile
 * gets -ENXIO), and so does one offlined by the user while taken.
 */
#include "follow.h"
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/wait.h>

static int target, other;
static cpu_set_t startup;
static _Atomic int stop, phase_calls;
static _Atomic long ran, wrong, enxio;

static void where(void *arg)
{
	atomic_fetch_add(&ran, 1);
	if (sched_getcpu() != target)
		atomic_fetch_add(&wrong, 1);
}

static void *caller(void *arg)
{
	while (!atomic_load(&stop)) {
		int r = xc_call_single(target, where, NULL, XC_WAIT);

		if (r == -ENXIO)
			atomic_fetch_add(&enxio, 1);
		else
			CHECK_RET(r, 0);
		atomic_fetch_add(&phase_calls, 1);
	}
	return NULL;
}

/* From another process, as taskset -a -p does: every thread of @pid gets @mask. */
static void set_all_threads(pid_t pid, const cpu_set_t *mask)
{
	pid_t child = fork();
	int status;

	CHECK(child >= 0);
	if (child == 0) {
		char dir[64];
		DIR *d;
		struct dirent *e;

		snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
		d = opendir(dir);
		if (!d)
			_exit(1);
		while ((e = readdir(d)))
			if (e->d_name[0] != '.')
				sched_setaffinity(atoi(e->d_name), sizeof(*mask), mask);
		closedir(d);
		_exit(0);
	}
	CHECK(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* A worker whose pin was widened, not taken, pins itself again at its next look (follow.c). */
static void check_pinned(int *cpus, int n)
{
	WAIT_UNTIL(f_all_pinned(cpus, n));
}

static uint64_t displaced(void)
{
	struct xc_stats st;

	CHECK_RET(xc_stats_get(target, &st), 0);
	return st.displaced;
}

static void calls_go_on(void)
{
	int n = atomic_load(&phase_calls);

	WAIT_UNTIL(atomic_load(&phase_calls) > n + 100);
}

int main(void)
{
	struct xc_opts o = { .report = f_capture };
	int cpus[CPU_SETSIZE], n;
	cpu_set_t only_other;
	pthread_t t;
	char want[160];
	long wrong_at_detection;

	CHECK(sched_getaffinity(0, sizeof(startup), &startup) == 0);
	CHECK_RET(xc_init(&o), 0);
	n = t_cpus(cpus);
	if (n < 2) {
		xc_exit();
		t_skip("needs 2 CPUs");
	}
	target = cpus[n - 1];
	other = cpus[0];
	CPU_ZERO(&only_other);
	CPU_SET(other, &only_other);

	/* 1. taken while a thread calls it */
	CHECK(pthread_create(&t, NULL, caller, NULL) == 0);
	calls_go_on();
	set_all_threads(getpid(), &only_other);
	WAIT_UNTIL(!f_cpu_online(target));
	snprintf(want, sizeof(want), "CPU %d: offline: the worker's affinity was changed from outside", target);
	WAIT_UNTIL(f_reported(want));
	wrong_at_detection = atomic_load(&wrong);
	CHECK((uint64_t)wrong_at_detection <= displaced());
	WAIT_UNTIL(atomic_load(&enxio) > 10);
	CHECK(atomic_load(&wrong) == wrong_at_detection);	/* nothing runs after detection */
	CHECK_RET(xc_cpu_online(target), -ENXIO);

	/* 2. given back: online by itself, pinned, calls run there */
	set_all_threads(getpid(), &startup);
	WAIT_UNTIL(f_cpu_online(target));
	snprintf(want, sizeof(want), "CPU %d: back", target);
	CHECK(f_reported(want));
	check_pinned(cpus, n);
	calls_go_on();
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	CHECK(atomic_load(&wrong) == wrong_at_detection);
	CHECK((uint64_t)atomic_load(&wrong) <= displaced());

	/* 3. a user offline survives the OS taking the CPU and giving it back */
	CHECK_RET(xc_cpu_offline(target), 0);
	set_all_threads(getpid(), &only_other);
	snprintf(want, sizeof(want), "CPU %d: taken away while offline", target);
	WAIT_UNTIL(f_reported(want));
	CHECK_RET(xc_cpu_online(target), -ENXIO);
	set_all_threads(getpid(), &startup);
	snprintf(want, sizeof(want), "CPU %d: back", target);
	f_clear_reports();
	WAIT_UNTIL(f_reported(want));
	CHECK(!f_cpu_online(target));
	CHECK_RET(xc_call_single(target, where, NULL, XC_WAIT), -ENXIO);
	CHECK_RET(xc_cpu_online(target), 0);
	CHECK_RET(xc_call_single(target, where, NULL, XC_WAIT), 0);

	/* 4. offlined by the user while the OS has it: stays offline when given back */
	set_all_threads(getpid(), &only_other);
	WAIT_UNTIL(!f_cpu_online(target));
	CHECK_RET(xc_cpu_offline(target), 0);
	CHECK_RET(xc_cpu_offline(target), -EINVAL);
	f_clear_reports();
	set_all_threads(getpid(), &startup);
	snprintf(want, sizeof(want), "CPU %d: back", target);
	WAIT_UNTIL(f_reported(want));
	check_pinned(cpus, n);
	CHECK(!f_cpu_online(target));
	CHECK_RET(xc_cpu_online(target), 0);
	CHECK_RET(xc_call_single(target, where, NULL, XC_WAIT), 0);
	CHECK(atomic_load(&wrong) == wrong_at_detection);
	CHECK_RET(xc_exit(), 0);
	return T_PASS;
}
