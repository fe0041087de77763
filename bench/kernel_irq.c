/* SPDX-License-Identifier: MIT */
/*
 * kernel_irq.c - read the per-CPU IPI rows of /proc/interrupts: CAL
 * (function call IPIs, smp_call_function*), RES (rescheduling IPIs, remote
 * wakeups) and TLB (shootdowns). The header line names the online CPUs, so
 * column i is mapped to its CPU number rather than assumed.
 */
#include "kernel.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char *const irq_row_name[IRQ_NROWS] = {"CAL", "RES", "TLB"};

int irq_read(struct irq_snap *s)
{
	memset(s, 0, sizeof(*s));
	FILE *f = fopen("/proc/interrupts", "r");
	if (!f)
		return -errno;
	static char line[1 << 16];
	int col2cpu[CPU_SETSIZE], ncol = 0;
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return -EIO;
	}
	for (char *p = line; (p = strstr(p, "CPU")) && ncol < CPU_SETSIZE; p += 3)
		col2cpu[ncol++] = atoi(p + 3);
	while (fgets(line, sizeof(line), f)) {
		char *p = line;
		while (*p == ' ')
			p++;
		int row = -1;
		for (int r = 0; r < IRQ_NROWS; r++)
			if (!strncmp(p, irq_row_name[r], 3) && p[3] == ':')
				row = r;
		if (row < 0)
			continue;
		s->has[row] = true;
		p += 4;
		for (int c = 0; c < ncol; c++) {
			char *end;
			unsigned long long v = strtoull(p, &end, 10);
			if (end == p)
				break;
			if (col2cpu[c] >= 0 && col2cpu[c] < CPU_SETSIZE)
				s->v[row][col2cpu[c]] = v;
			p = end;
		}
	}
	fclose(f);
	return 0;
}

uint64_t irq_delta(const struct irq_snap *a, const struct irq_snap *b, enum irq_row row, int cpu)
{
	return b->v[row][cpu] - a->v[row][cpu];
}

void irq_record(struct rec *r, const struct irq_snap *a, const struct irq_snap *b,
		const char *who, int cpu, long ops)
{
	for (int row = 0; row < IRQ_NROWS; row++) {
		char key[32];
		if (!a->has[row] || !b->has[row]) {
			snprintf(key, sizeof(key), "%s_row", irq_row_name[row]);
			rec_param_s(r, key, "absent");
			continue;
		}
		uint64_t d = irq_delta(a, b, (enum irq_row)row, cpu);
		snprintf(key, sizeof(key), "%s_%s", irq_row_name[row], who);
		rec_counter(r, key, (long long)d);
		snprintf(key, sizeof(key), "%s_per_op_%s", irq_row_name[row], who);
		rec_param_d(r, key, ops > 0 ? (double)d / (double)ops : 0);
	}
}
