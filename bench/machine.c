/* SPDX-License-Identifier: MIT */
/*
 * machine.c - describe the host, because on a shared or virtual machine the
 * numbers mean nothing without it: CPU model, cores, kernel, hypervisor,
 * cpuidle driver, whether the TSC is invariant and whether the CPUs are
 * emulated.
 */
#include "output.h"

#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

static void read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	buf[0] = 0;
	if (!f)
		return;
	if (fgets(buf, (int)size, f))
		buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

/* Physical cores: distinct (package, core) pairs among online CPUs. */
static int count_cores(int ncpus)
{
	long seen[1024];
	int n = 0;
	for (int c = 0; c < 4096 && n < 1024; c++) {
		char p[128], pkg[32], core[32];
		snprintf(p, sizeof(p), "/sys/devices/system/cpu/cpu%d/topology/core_id", c);
		read_line(p, core, sizeof(core));
		if (!core[0])
			continue;
		snprintf(p, sizeof(p), "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", c);
		read_line(p, pkg, sizeof(pkg));
		long key = atol(pkg) * 1000000 + atol(core);
		int dup = 0;
		for (int i = 0; i < n; i++)
			dup |= seen[i] == key;
		if (!dup)
			seen[n++] = key;
	}
	return n ? n : ncpus;
}

static void detect_hypervisor(struct machine *m)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned a, b, c, d;
	if (__get_cpuid(1, &a, &b, &c, &d))
		m->virtualised = (c >> 31) & 1;     /* the "hypervisor present" bit */
	if (m->virtualised) {
		char sig[13] = {0};
		__cpuid(0x40000000, a, b, c, d);
		memcpy(sig, &b, 4);
		memcpy(sig + 4, &c, 4);
		memcpy(sig + 8, &d, 4);
		static const struct { const char *sig, *name; } known[] = {
			{"KVMKVMKVM", "KVM"}, {"Microsoft Hv", "Hyper-V"},
			{"VMwareVMware", "VMware"}, {"XenVMMXenVMM", "Xen"},
			{"TCGTCGTCGTCG", "QEMU-TCG"}, {"bhyve bhyve ", "bhyve"},
			{"ACRNACRNACRN", "ACRN"}, {" lrpepyh  vr", "Parallels"},
			{"VBoxVBoxVBox", "VirtualBox"},
		};
		snprintf(m->hypervisor, sizeof(m->hypervisor), "unknown");
		for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			if (!strncmp(sig, known[i].sig, strlen(known[i].sig)))
				snprintf(m->hypervisor, sizeof(m->hypervisor), "%s", known[i].name);
	}
	unsigned maxext = __get_cpuid_max(0x80000000, NULL);
	if (maxext >= 0x80000007) {
		__cpuid(0x80000007, a, b, c, d);
		m->tsc_invariant = (d >> 8) & 1;
	}
#endif
	if (!m->virtualised) {
		char t[32];
		read_line("/sys/hypervisor/type", t, sizeof(t));
		if (t[0]) {
			m->virtualised = true;
			snprintf(m->hypervisor, sizeof(m->hypervisor), "%s", t);
		}
	}
	/* Guests often hide CPUID leaf 0x80000007; the kernel's flags still tell. */
	if (!m->tsc_invariant) {
		FILE *f = fopen("/proc/cpuinfo", "r");
		char line[4096];
		while (f && fgets(line, sizeof(line), f)) {
			if (!strncmp(line, "flags", 5)) {
				m->tsc_invariant = strstr(line, " constant_tsc") && strstr(line, " nonstop_tsc");
				break;
			}
		}
		if (f)
			fclose(f);
	}
}

const struct machine *machine_get(void)
{
	static struct machine m;
	static bool done;
	if (done)
		return &m;
	done = true;
	gethostname(m.hostname, sizeof(m.hostname) - 1);
	struct utsname u;
	if (!uname(&u))
		snprintf(m.kernel, sizeof(m.kernel), "%s", u.release);
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];
	while (f && fgets(line, sizeof(line), f)) {
		/* x86 "model name", arm64 has none: fall back to "CPU part" below. */
		if (!strncmp(line, "model name", 10) || !strncmp(line, "Model", 5)) {
			char *v = strchr(line, ':');
			if (v) {
				v += 1 + (v[1] == ' ');
				v[strcspn(v, "\n")] = 0;
				snprintf(m.cpu_model, sizeof(m.cpu_model), "%s", v);
				break;
			}
		}
	}
	if (f)
		fclose(f);
	if (!m.cpu_model[0])
		snprintf(m.cpu_model, sizeof(m.cpu_model), "unknown");
	m.cpus_online = (int)sysconf(_SC_NPROCESSORS_ONLN);
	m.cores = count_cores(m.cpus_online);
	detect_hypervisor(&m);
	/*
	 * Emulated CPUs: QEMU's TCG signs CPUID leaf 0x40000000, and its own
	 * CPU models say so ("QEMU TCG CPU"); KVM and the others run real CPUs.
	 */
	m.emulated = !strcmp(m.hypervisor, "QEMU-TCG") || strstr(m.cpu_model, "TCG");
	read_line("/sys/devices/system/cpu/cpuidle/current_driver", m.idle_driver, sizeof(m.idle_driver));
	read_line("/sys/devices/system/cpu/cpuidle/current_governor_ro", m.idle_governor,
		  sizeof(m.idle_governor));
	if (!m.idle_governor[0])
		read_line("/sys/devices/system/cpu/cpuidle/current_governor", m.idle_governor,
			  sizeof(m.idle_governor));
	read_line("/sys/devices/system/clocksource/clocksource0/current_clocksource", m.clocksource,
		  sizeof(m.clocksource));
	if (!m.idle_driver[0])
		snprintf(m.idle_driver, sizeof(m.idle_driver), "none");
	return &m;
}
