/* SPDX-License-Identifier: MIT */
/*
 * count_hook.h - forced into every file of make count-lines' counting build
 * (-include, bench/bench.mk), and only there: every spin pass gives way.
 *
 * libxcall's spins (xc_cpu_relax(), src/base/internal.h) and the baselines'
 * (cpu_relax(), bench/bench.h) are each a pause instruction. Here a pause is
 * a sched_yield instead, so that under valgrind, which runs one thread at a
 * time, a spinning side hands over at its first pass instead of at the end
 * of its time slice: the trace then holds each round trip once, with the
 * fewest spin passes. The pause goes: valgrind takes it for a spin and cuts
 * the thread's time slice short, to a point that falls anywhere later,
 * in the middle of a side's writes too (extra transfers, 1 round trip in 50).
 *
 * The yield is an inline syscall instruction, not a call of sched_yield()
 * behind RUNNING_ON_VALGRIND: a call would clobber every caller-saved
 * register of the spinning function and change the code around it, and the
 * test a client request and its argument block on the stack at every pass.
 * This way a spin pass costs one instruction more than in the normal build,
 * the registers the asm names (rax, rcx, r11) are all it changes, and
 * count_lines.py finds each pass by its two instructions (mov $24, %eax;
 * syscall) outside libc's sched_yield. The counting build runs only under valgrind, where a
 * yield per pass is what it is for; outside it, it runs, slowly.
 */
#ifndef XC_COUNT_HOOK_H
#define XC_COUNT_HOOK_H

#if !defined(__x86_64__)
#error "the counting build (make count-lines) is for x86-64"
#endif

static inline __attribute__((always_inline)) void xc_count_pass(void)
{
	/* 24: SYS_sched_yield on x86-64 */
	__asm__ __volatile__("movl $24, %%eax\n\tsyscall" ::: "rax", "rcx", "r11");
}

/* internal.h's xc_cpu_relax() and bench.h's cpu_relax() are this builtin alone */
#define __builtin_ia32_pause() xc_count_pass()

/*
 * What the rseq area's cpu_id costs (follow.h, xc_running_cpu and its
 * word): valgrind registers no rseq area, so the library would ask
 * sched_getcpu() (tens of instructions and a syscall) where a real run
 * loads one word. Here the thread's first answer is kept and loaded again,
 * as cpu_id would be: the counted threads are pinned, so it stays true.
 */
int sched_getcpu(void);
static __thread int xc_count_cpu = -1;
static inline __attribute__((always_inline)) int xc_count_running_cpu(void)
{
	if (__builtin_expect(xc_count_cpu < 0, 0))
		xc_count_cpu = sched_getcpu();
	return xc_count_cpu;
}
static inline __attribute__((always_inline)) const volatile int *xc_count_running_cpu_word(void)
{
	xc_count_running_cpu();
	return &xc_count_cpu;
}
#define XC_RUNNING_CPU_NO_RSEQ() xc_count_running_cpu()
#define XC_RUNNING_CPU_WORD_NO_RSEQ() xc_count_running_cpu_word()

#endif /* XC_COUNT_HOOK_H */
