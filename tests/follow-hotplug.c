/*
 * follow-hotplug: the OS takes a CPU offline (sysfs) while a thread keeps
 * calling it, then brings it back. The worker notices: the CPU goes offline
 * in libxcall with a report naming the OS, calls to it get -ENXIO, every run
 * that ended on a wrong CPU is counted in xc_stats.displaced and none runs
 * after detection; online again, the CPU comes back by itself with every
 * worker pinned to exactly its CPU. A CPU taken offline with xc_cpu_offline()
 * stays offline across an OS offline/online cycle.
 *
 * It changes machine state, so it runs only where XCALL_GUEST=1 says the
 * machine is a throwaway guest (make check-guest) and as root; elsewhere it
 * skips. Every CPU it takes offline is put back online on every exit path
 * (atexit, and the usual signals), and it says so.
 */
#include "test.h"
#include "internal.h"
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>

static int target;
static bool taken_down;		/* the CPU this test took offline and has not put back */
static _Atomic int stop, phase_calls;
static _Atomic long wrong, enxio;
static char reports[16384];
static pthread_mutex_t rep_lock = PTHREAD_MUTEX_INITIALIZER;

static void capture(const char *line)
{
	printf("report: %s\n", line);	/* shown when the test fails */
	fflush(stdout);
	pthread_mutex_lock(&rep_lock);
	if (strlen(reports) + strlen(line) + 2 < sizeof(reports)) {
		strcat(reports, line);
		strcat(reports, "\n");
	}
	pthread_mutex_unlock(&rep_lock);
}

static bool reported(const char *what)
{
	bool found;

	pthread_mutex_lock(&rep_lock);
	found = strstr(reports, what) != NULL;
	pthread_mutex_unlock(&rep_lock);
	return found;
}

static void clear_reports(void)
{
	pthread_mutex_lock(&rep_lock);
	reports[0] = 0;
	pthread_mutex_unlock(&rep_lock);
}

static int os_online(int cpu, int on)
{
	char path[96];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	f = fopen(path, "w");
	if (!f)
		return -1;
	ok = fprintf(f, "%d\n", on) > 0;
	if (fclose(f) || !ok)
		return -1;
	taken_down = !on;
	return 0;
}

static void put_back(void)
{
	if (taken_down && os_online(target, 1) == 0)
		printf("follow-hotplug: CPU %d put back online\n", target);
}

static void on_signal(int sig)
{
	put_back();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void where(void *arg)
{
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

static bool cpu_online(int cpu)
{
	cpu_set_t s;

	return xc_online_mask(&s) >= 0 && CPU_ISSET(cpu, &s);
}

static bool all_pinned(int *cpus, int n)
{
	for (int i = 0; i < n; i++) {
		cpu_set_t m;

		CHECK(sched_getaffinity(xc_cpus[cpus[i]].tid, sizeof(m), &m) == 0);
		if (CPU_COUNT(&m) != 1 || !CPU_ISSET(cpus[i], &m))
			return false;
	}
	return true;
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
	struct xc_opts o = { .report = capture };
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
	target = cpus[n - 1];
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", target);
	if (n < 2 || access(path, W_OK)) {
		xc_exit();
		t_skip("needs 2 CPUs, the last one hot-pluggable");
	}
	atexit(put_back);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);

	/* 1. the OS takes it while a thread calls it */
	CHECK(pthread_create(&t, NULL, caller, NULL) == 0);
	calls_go_on();
	CHECK(os_online(target, 0) == 0);
	WAIT_UNTIL(!cpu_online(target));
	snprintf(want, sizeof(want), "CPU %d: offline: the OS took it offline", target);
	WAIT_UNTIL(reported(want));
	wrong_at_detection = atomic_load(&wrong);
	CHECK((uint64_t)wrong_at_detection <= displaced());
	WAIT_UNTIL(atomic_load(&enxio) > 10);
	CHECK(atomic_load(&wrong) == wrong_at_detection);
	CHECK_RET(xc_cpu_online(target), -ENXIO);

	/* 2. back online: the CPU comes back by itself, pinned */
	CHECK(os_online(target, 1) == 0);
	WAIT_UNTIL(cpu_online(target));
	WAIT_UNTIL(all_pinned(cpus, n));
	calls_go_on();
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	CHECK(atomic_load(&wrong) == wrong_at_detection);
	printf("follow-hotplug: %ld runs ended on a wrong CPU, %llu counted displaced\n",
	       wrong_at_detection, (unsigned long long)displaced());

	/* 3. a user offline survives an OS offline/online cycle */
	CHECK_RET(xc_cpu_offline(target), 0);
	clear_reports();
	CHECK(os_online(target, 0) == 0);
	snprintf(want, sizeof(want), "CPU %d: taken away while offline", target);
	WAIT_UNTIL(reported(want));
	CHECK_RET(xc_cpu_online(target), -ENXIO);
	clear_reports();
	CHECK(os_online(target, 1) == 0);
	snprintf(want, sizeof(want), "CPU %d: back", target);
	WAIT_UNTIL(reported(want));
	CHECK(!cpu_online(target));
	CHECK_RET(xc_call_single(target, where, NULL, XC_WAIT), -ENXIO);
	CHECK_RET(xc_cpu_online(target), 0);
	CHECK_RET(xc_call_single(target, where, NULL, XC_WAIT), 0);
	WAIT_UNTIL(all_pinned(cpus, n));
	CHECK(atomic_load(&wrong) == wrong_at_detection);
	CHECK_RET(xc_exit(), 0);
	return T_PASS;
}
