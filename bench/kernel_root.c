/* SPDX-License-Identifier: MIT */
/*
 * kernel_root.c - the probes that change the machine, root only and opt-in:
 *
 *   idlestates  the wakeup probe with only one cpuidle state of the target
 *               enabled at a time (then all again): a polling state lets a
 *               wakeup skip the IPI (seeds 000, 001), a halting state pays it.
 *   hotplug     time to take a CPU offline and online again through sysfs
 *               (seed 004, one CPU on a running kernel). Never CPU 0.
 *
 * Every write goes through sysfs_set(), which journals first; the journal is
 * undone at exit, on signals, and by --restore.
 */
#include "kernel.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void need_root(const char *probe, const char *flag, bool allowed)
{
	if (geteuid() != 0)
		cli_fail("kernel", "%s needs root: it writes sysfs", probe);
	if (!allowed)
		cli_fail("kernel", "%s changes the machine: add %s to allow it", probe, flag);
	/* a killed earlier run may have left the machine changed: put it back first */
	if (journal_restore(false))
		cli_fail("kernel", "could not restore the journal in %s", JOURNAL_FILE);
	journal_arm();
}

int idle_states_writable(int cpu)
{
	char path[128];
	int n = 0;
	for (;; n++) {
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cpuidle/state%d/disable", cpu, n);
		if (access(path, W_OK))
			return n;
	}
}

int probe_idlestates(struct kctx *k)
{
	need_root("idlestates", "--allow-sysfs", k->allow_sysfs);
	if (k->o.ncpus < 2)
		cli_fail("kernel", "idlestates %s", cli_too_few_cpus(&k->o, 2));
	char dir[128], path[192], name[64];
	snprintf(dir, sizeof(dir), "/sys/devices/system/cpu/cpu%d/cpuidle", k->b);
	int nstates = idle_states_writable(k->b);
	if (!nstates)
		cli_fail("kernel", "idlestates: %s/state0/disable is absent or not writable", dir);
	for (int rep = 0; rep < k->o.repeat; rep++) {
		/* only state K enabled, for each K; then (-1) every state enabled */
		for (int j = 0; j <= nstates; j++) {
			int only = j < nstates ? j : -1;
			for (int s = 0; s < nstates; s++) {
				snprintf(path, sizeof(path), "%s/state%d/disable", dir, s);
				int err = sysfs_set(path, only < 0 || s == only ? "0" : "1");
				if (err) {
					fprintf(stderr, "xcall-bench kernel: %s: %s\n", path, strerror(-err));
					return 1;
				}
			}
			char kase[96] = "idlestates/all-enabled";
			if (only >= 0) {
				snprintf(path, sizeof(path), "%s/state%d/name", dir, only);
				if (sysfs_read(path, name, sizeof(name)))
					snprintf(name, sizeof(name), "state%d", only);
				for (char *c = name; *c; c++)
					if (*c == ' ')
						*c = '-';
				snprintf(kase, sizeof(kase), "idlestates/only-%s", name);
			}
			struct hist h;
			hist_init(&h);
			struct irq_snap *s0 = malloc(sizeof(*s0)), *s1 = malloc(sizeof(*s1));
			progress("kernel idlestates: %s, repeat %d", kase, rep);
			long n = plan_late() ? -2 : wakeup_run(k, k->gap_long_us, false, &h, s0, s1);
			if (n == -2)
				rec_skipped("kernel", kase, PLAN_LATE_WHY, rep);
			if (n == 0)
				rec_skipped("kernel", kase, "no wake ran before the case's end: the target CPU was busy",
					    rep);
			if (n > 0) {
				struct rec *r = rec_new("kernel", kase, "ns", "lower", rep);
				rec_hist(r, &h);
				rec_cpus(r, &k->o.cpus);
				rec_param_i(r, "iterations", n);
				rec_param_i(r, "gap_us", k->gap_long_us);
				rec_param_i(r, "target", k->b);
				irq_record(r, s0, s1, "sender", k->a, n);
				irq_record(r, s0, s1, "target", k->b, n);
			}
			free(s0);
			free(s1);
			hist_free(&h);
		}
	}
	/* back as found now, not only at exit: later probes see the machine as it was */
	return journal_restore(!g_out.quiet) ? 1 : 0;
}

int probe_hotplug(struct kctx *k)
{
	need_root("hotplug", "--allow-hotplug", k->allow_hotplug);
	int cpu = -1;
	for (int i = k->o.ncpus - 1; i >= 0 && cpu < 0; i--)
		if (k->o.cpu[i] != 0)
			cpu = k->o.cpu[i];
	if (cpu < 0)
		cli_fail("kernel", "hotplug never takes CPU 0 offline: give --cpus a CPU other than 0");
	char path[128], v[16];
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	if (access(path, W_OK))
		cli_fail("kernel", "hotplug: %s is absent or not writable", path);
	if (sysfs_read(path, v, sizeof(v)) || strcmp(v, "1"))
		cli_fail("kernel", "hotplug: CPU %d is not online", cpu);
	cpu_set_t allowed;
	sched_getaffinity(0, sizeof(allowed), &allowed);
	if (CPU_COUNT(&allowed) < 2)
		cli_fail("kernel", "hotplug: CPU %d is the last CPU we may run on", cpu);
	long iters = k->o.iterations ? k->o.iterations : 5;
	struct hist hoff, hon;
	hist_init(&hoff);
	hist_init(&hon);
	for (int rep = 0; rep < k->o.repeat; rep++) {
		hist_reset(&hoff);
		hist_reset(&hon);
		long done = 0;
		for (long i = 0; i < iters; i++) {
			progress("kernel hotplug: CPU %d, %ld/%ld, repeat %d", cpu, i + 1, iters, rep);
			/* an offline and an online cannot be cut: none starts once the plan has no time */
			if (plan_late())
				continue;
			uint64_t t0 = now_ns();
			int err = sysfs_set(path, "0");
			uint64_t t1 = now_ns();
			int err2 = sysfs_set(path, "1");
			uint64_t t2 = now_ns();
			if (err || err2) {
				fprintf(stderr, "xcall-bench kernel: hotplug CPU %d: %s\n", cpu,
					strerror(-(err ? err : err2)));
				journal_restore(true);
				return 1;
			}
			hist_add(&hoff, t1 - t0);
			hist_add(&hon, t2 - t1);
			done++;
		}
		for (int j = 0; j < 2; j++) {
			const char *kase = j ? "hotplug/online" : "hotplug/offline";
			if (!done) {
				rec_skipped("kernel", kase, PLAN_LATE_WHY, rep);
				continue;
			}
			struct rec *r = rec_new("kernel", kase, "ns", "lower", rep);
			rec_hist(r, j ? &hon : &hoff);
			rec_param_i(r, "iterations", done);
			rec_param_i(r, "cpu", cpu);
		}
	}
	hist_free(&hoff);
	hist_free(&hon);
	return journal_restore(!g_out.quiet) ? 1 : 0;
}
