/*
 * follow-start-offline: xc_init() with a CPU of its set offline in the OS.
 * The CPU starts offline in libxcall, with a report naming the OS: calls to
 * it get -ENXIO, xc_cpu_online() refuses it, the other CPUs work. Once the
 * OS brings it online, it comes online by itself, its worker pinned there,
 * and a call to it runs on it; xc_exit() then works as ever. A CPU that is
 * not present in the machine still gets -EINVAL, and so does the offline
 * CPU with follow_os off (nothing would follow it back).
 *
 * It changes machine state, so it runs only where XCALL_GUEST=1 says the
 * machine is a throwaway guest (make check-guest) and as root; elsewhere it
 * skips. The CPU it takes offline is put back online on every exit path
 * (atexit, and the usual signals), and it says so.
 */
#include "follow.h"
#include <signal.h>
#include <stdatomic.h>

static bool taken_down;		/* the CPU this test took offline and has not put back */
static _Atomic int ran_on = -1;

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
		printf("follow-start-offline: CPU %d put back online\n", f_target);
}

static void on_signal(int sig)
{
	put_back();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void where(void *arg)
{
	atomic_store(&ran_on, sched_getcpu());
}

int main(void)
{
	struct xc_opts o = { .report = f_capture };
	int cpus[CPU_SETSIZE], n, absent = -1;
	char list[64], want[160], path[96];
	cpu_set_t present;

	if (t_env_long("XCALL_GUEST", 0) != 1)
		t_skip("takes a CPU offline: runs only in a guest (make check-guest sets XCALL_GUEST=1)");
	if (geteuid() != 0)
		t_skip("needs root to take a CPU offline");
	CHECK_RET(xc_init(NULL), 0);
	n = t_cpus(cpus);
	CHECK_RET(xc_exit(), 0);
	f_target = cpus[n - 1];
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", f_target);
	if (n < 2 || access(path, W_OK))
		t_skip("needs 2 CPUs, the last one hot-pluggable");
	atexit(put_back);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);

	/* a CPU the machine does not have: refused, as ever */
	char text[4096] = "";
	FILE *f = fopen("/sys/devices/system/cpu/present", "r");

	CHECK(f && fgets(text, sizeof(text), f));
	fclose(f);
	text[strcspn(text, "\n")] = 0;
	CHECK_RET(xc_cpulist_parse(text, &present), 0);
	for (int cpu = 0; cpu < CPU_SETSIZE && absent < 0; cpu++)
		if (!CPU_ISSET(cpu, &present))
			absent = cpu;
	if (absent >= 0) {
		snprintf(list, sizeof(list), "%d,%d", cpus[0], absent);
		o.cpus = list;
		CHECK_RET(xc_init(&o), -EINVAL);
	}

	CHECK(os_online(f_target, 0) == 0);
	snprintf(list, sizeof(list), "%d-%d", cpus[0], f_target);
	o.cpus = list;
	/* follow_os off: nothing would bring it back */
	o.follow_os = XC_FOLLOW_OS_OFF;
	CHECK_RET(xc_init(&o), -EINVAL);
	o.follow_os = 0;

	t_clear_reports();
	CHECK_RET(xc_init(&o), 0);
	snprintf(want, sizeof(want), "CPU %d: offline in the OS at start", f_target);
	CHECK(t_reported(want));
	CHECK(!f_cpu_online(f_target));
	CHECK_RET(xc_call_single(f_target, where, NULL, XC_WAIT), -ENXIO);
	CHECK_RET(xc_cpu_online(f_target), -ENXIO);
	CHECK_RET(xc_call_single(cpus[0], where, NULL, XC_WAIT), 0);
	CHECK_RET(atomic_load(&ran_on), cpus[0]);

	/* the OS brings it online: so does libxcall, by itself */
	CHECK(os_online(f_target, 1) == 0);
	WAIT_UNTIL(f_cpu_online(f_target));
	snprintf(want, sizeof(want), "CPU %d: back", f_target);
	CHECK(t_reported(want));
	CHECK(f_all_pinned(cpus, n));
	CHECK_RET(xc_call_single(f_target, where, NULL, XC_WAIT), 0);
	CHECK_RET(atomic_load(&ran_on), f_target);
	CHECK_RET(xc_exit(), 0);
	printf("follow-start-offline: CPU %d offline at xc_init, online once the OS gave it back\n",
	       f_target);
	return T_PASS;
}
