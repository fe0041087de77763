/* SPDX-License-Identifier: MIT */
/*
 * membarrier-hook.h - the tests that make libxcall's membarriers slow or
 * hold one: the C library's syscall(2), through which libxcall asks for
 * them, is interposed here. Each expedited private membarrier first calls
 * the test's t_membarrier_hook(); every system call then goes on to the C
 * library's. t_membarrier_hook_setup() skips the test where that cannot
 * work: a static build (no dlsym to find the C library's syscall), or a
 * kernel without expedited private membarriers.
 */
#ifndef XC_TEST_MEMBARRIER_HOOK_H
#define XC_TEST_MEMBARRIER_HOOK_H

#include "test.h"
#include <dlfcn.h>
#include <linux/membarrier.h>
#include <stdarg.h>
#include <sys/syscall.h>

/* Called on the thread that asks, before the membarrier runs. */
static void t_membarrier_hook(void);

static long (*t_libc_syscall)(long, ...);

/*
 * Six arguments are passed on whatever the call took, as the C library's
 * own syscall() does: the unused ones are ignored by the kernel. Reading
 * past the ones a caller passed reads its stack above the return address,
 * which ASan calls an underflow: not instrumented, as the C library's
 * assembly is not.
 */
__attribute__((no_sanitize_address))
long syscall(long nr, ...)
{
	long a[6];
	va_list ap;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (nr == __NR_membarrier && a[0] == MEMBARRIER_CMD_PRIVATE_EXPEDITED)
		t_membarrier_hook();
	return t_libc_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

static inline void t_membarrier_hook_setup(void)
{
	long cmds;

	t_libc_syscall = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	if (!t_libc_syscall)
		t_skip("no C library syscall() to pass calls on to (a static build)");
	cmds = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
	if (cmds < 0 || !(cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED))
		t_skip("membarrier has no private expedited command here: every call fences");
}

#endif /* XC_TEST_MEMBARRIER_HOOK_H */
