/* SPDX-License-Identifier: MIT */
/*
 * kernel.h - the `kernel` subcommand: probes of the host kernel's real IPIs,
 * each proven by the per-CPU CAL / RES / TLB rows of /proc/interrupts.
 */
#ifndef BENCH_KERNEL_H
#define BENCH_KERNEL_H

#include "bench.h"

#include <linux/membarrier.h>

#ifndef MEMBARRIER_CMD_FLAG_CPU
#define MEMBARRIER_CMD_FLAG_CPU (1 << 0)
#endif
#ifndef MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ
#define MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ (1 << 7)
#define MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ (1 << 8)
#endif

/* ---- /proc/interrupts (kernel_irq.c) ---- */

enum irq_row { IRQ_CAL, IRQ_RES, IRQ_TLB, IRQ_NROWS };

struct irq_snap {
	bool has[IRQ_NROWS];            /* row present on this architecture */
	uint64_t v[IRQ_NROWS][CPU_SETSIZE];
};

extern const char *const irq_row_name[IRQ_NROWS];
/* 0, or -errno when /proc/interrupts cannot be read. */
int irq_read(struct irq_snap *s);
/* Add "<ROW>_<who>" counters (deltas) and "<ROW>_per_op_<who>" params to r. */
void irq_record(struct rec *r, const struct irq_snap *a, const struct irq_snap *b,
		const char *who, int cpu, long ops);
/* Sum of a row's delta over the CPUs of a set. */
uint64_t irq_delta(const struct irq_snap *a, const struct irq_snap *b, enum irq_row row, int cpu);

/* ---- sysfs journal (kernel_journal.c) ---- */

#define JOURNAL_DIR  "/run/xcall"
#define JOURNAL_FILE JOURNAL_DIR "/sysfs-journal"

/* Put back whatever a journal left by an earlier run says; prints what it did. */
int journal_restore(bool verbose);
/* Journal the current value of path, then write value. */
int sysfs_set(const char *path, const char *value);
/* Restore at exit and on SIGINT/SIGTERM/SIGHUP. */
void journal_arm(void);
int sysfs_read(const char *path, char *buf, size_t size);

/* ---- membarrier, the kernel's targeted IPI (kernel.c) ---- */

long membarrier(int cmd, unsigned flags, int cpu);
/* What registering this process gave: each command usable, and if RSEQ is not, why. */
struct membarrier_reg {
	bool expedited, rseq;
	const char *why;
};
/* Register for both expedited commands; call while single-threaded (late, it waits for RCU). */
void membarrier_register(struct membarrier_reg *m);

/* ---- probes ---- */

struct kctx {
	struct bopts o;
	int a, b;               /* sender and target CPUs */
	bool allow_sysfs, allow_hotplug, restore;
	long gap_short_us, gap_long_us;
	bool membarrier_ok, membarrier_rseq_ok;
	const char *membarrier_why;
};

int probe_ipi(struct kctx *k);
int probe_wakeup(struct kctx *k);
int probe_tlb(struct kctx *k);
int probe_compare(struct kctx *k);
int probe_idlestates(struct kctx *k);
int idle_states_writable(int cpu);      /* cpuidle states whose disable file we may write */
int probe_hotplug(struct kctx *k);

/* Shared by the probes: the wake-to-run loop over one futex sleeper. */
long wakeup_run(struct kctx *k, long gap_us, bool polling, struct hist *h,
		struct irq_snap *s0, struct irq_snap *s1);
/* Spinning threads of ours on CPUs, so the kernel has a reason to IPI them. */
struct spinners;
struct spinners *spinners_start(const int *cpus, int n);
void spinners_stop(struct spinners *s);

#endif
