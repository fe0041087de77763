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

static int other;
static cpu_set_t startup;

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
	f_target = cpus[n - 1];
	other = cpus[0];
	CPU_ZERO(&only_other);
	CPU_SET(other, &only_other);

	/* 1. taken while a thread calls it */
	CHECK(pthread_create(&t, NULL, f_caller, NULL) == 0);
	f_calls_go_on();
	set_all_threads(getpid(), &only_other);
	wrong_at_detection = f_check_taken("the worker's affinity was changed from outside");

	/* 2. given back: online by itself, pinned, calls run there */
	set_all_threads(getpid(), &startup);
	WAIT_UNTIL(f_cpu_online(f_target));
	snprintf(want, sizeof(want), "CPU %d: back", f_target);
	CHECK(t_reported(want));
	check_pinned(cpus, n);
	f_calls_go_on();
	atomic_store(&f_stop, 1);
	pthread_join(t, NULL);
	CHECK(atomic_load(&f_wrong) == wrong_at_detection);
	CHECK((uint64_t)atomic_load(&f_wrong) <= f_displaced());

	/* 3. a user offline survives the OS taking the CPU and giving it back */
	CHECK_RET(xc_cpu_offline(f_target), 0);
	set_all_threads(getpid(), &only_other);
	snprintf(want, sizeof(want), "CPU %d: taken away while offline", f_target);
	WAIT_UNTIL(t_reported(want));
	CHECK_RET(xc_cpu_online(f_target), -ENXIO);
	/* cleared before the CPU is given back: the worker may report at once */
	t_clear_reports();
	set_all_threads(getpid(), &startup);
	f_check_user_offline_kept();

	/* 4. offlined by the user while the OS has it: stays offline when given back */
	set_all_threads(getpid(), &only_other);
	WAIT_UNTIL(!f_cpu_online(f_target));
	CHECK_RET(xc_cpu_offline(f_target), 0);
	CHECK_RET(xc_cpu_offline(f_target), -EINVAL);
	t_clear_reports();
	set_all_threads(getpid(), &startup);
	snprintf(want, sizeof(want), "CPU %d: back", f_target);
	WAIT_UNTIL(t_reported(want));
	check_pinned(cpus, n);
	CHECK(!f_cpu_online(f_target));
	CHECK_RET(xc_cpu_online(f_target), 0);
	CHECK_RET(xc_call_single(f_target, f_where, NULL, XC_WAIT), 0);
	CHECK(atomic_load(&f_wrong) == wrong_at_detection);
	CHECK_RET(xc_exit(), 0);
	return T_PASS;
}
