/*
 * follow-hotplug: the OS takes a CPU offline (sysfs) while a thread keeps
 * calling it, then brings it back. The worker notices: the CPU goes offline
 * in libxcall with a report naming the OS, calls to it get -ENXIO, every run
 * that ended on a wrong CPU is counted in xc_stats.displaced and none runs
 * after detection; online again, the CPU comes back by itself with every
 * worker pinned to exactly its CPU. A CPU taken offline with xc_cpu_offline()
 * stays offline across an OS offline/online cycle.
 *
 * It changes machine state, so it runs only f_where XCALL_GUEST=1 says the
 * machine is a throwaway guest (make check-guest) and as root; elsewhere it
 * skips. Every CPU it takes offline is put back online on every exit path
 * (atexit, and the usual signals), and it says so.
 */
#include "follow.h"
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>

static bool taken_down;		/* the CPU this test took offline and has not put back */

static int os_online(int cpu, int on)
{
	if (t_sysfs_cpu_online(cpu, on))
		return -1;
	taken_down = !on;
	return 0;
}

static void put_back(void)
{
	if (taken_down && os_online(f_target, 1) == 0)
		printf("follow-hotplug: CPU %d put back online\n", f_target);
}

static void on_signal(int sig)
{
	put_back();
	signal(sig, SIG_DFL);
	raise(sig);
}

int main(void)
{
	struct xc_opts o = { .report = f_capture };
	int cpus[CPU_SETSIZE], n;
	char want[160], path[96];
	long wrong_at_detection;
	pthread_t t;

	if (t_env_long("XCALL_GUEST", 0) != 1)
		t_skip("takes a CPU offline: runs only in a guest (make check-guest sets XCALL_GUEST=1)");
	if (geteuid() != 0)
		t_skip("needs root to take a CPU offline");
	CHECK_RET(xc_init(&o), 0);
	n = t_cpus(cpus);
	f_target = cpus[n - 1];
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", f_target);
	if (n < 2 || access(path, W_OK)) {
		xc_exit();
		t_skip("needs 2 CPUs, the last one hot-pluggable");
	}
	atexit(put_back);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);

	/* 1. the OS takes it while a thread calls it */
	CHECK(pthread_create(&t, NULL, f_caller, NULL) == 0);
	f_calls_go_on();
	CHECK(os_online(f_target, 0) == 0);
	wrong_at_detection = f_check_taken("the OS took it offline");

	/* 2. back online: the CPU comes back by itself, pinned */
	CHECK(os_online(f_target, 1) == 0);
	WAIT_UNTIL(f_cpu_online(f_target));
	WAIT_UNTIL(f_all_pinned(cpus, n));
	f_calls_go_on();
	atomic_store(&f_stop, 1);
	pthread_join(t, NULL);
	CHECK(atomic_load(&f_wrong) == wrong_at_detection);
	printf("follow-hotplug: %ld runs ended on a wrong CPU, %llu counted displaced\n",
	       wrong_at_detection, (unsigned long long)f_displaced());

	/* 3. a user offline survives an OS offline/online cycle */
	CHECK_RET(xc_cpu_offline(f_target), 0);
	t_clear_reports();
	CHECK(os_online(f_target, 0) == 0);
	snprintf(want, sizeof(want), "CPU %d: taken away while offline", f_target);
	WAIT_UNTIL(t_reported(want));
	CHECK_RET(xc_cpu_online(f_target), -ENXIO);
	t_clear_reports();
	CHECK(os_online(f_target, 1) == 0);
	f_check_user_offline_kept();
	WAIT_UNTIL(f_all_pinned(cpus, n));
	CHECK(atomic_load(&f_wrong) == wrong_at_detection);
	CHECK_RET(xc_exit(), 0);
	return T_PASS;
}
