/* SPDX-License-Identifier: MIT */
/* futex.h - the two futex(2) operations libxcall uses, on private 32-bit words. */
#ifndef XC_FUTEX_H
#define XC_FUTEX_H

#include <errno.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/*
 * Sleep while *word == expected; returns at once if it differs. Spurious
 * returns happen. 0, or -ETIMEDOUT when @rel_timeout passed (other errors:
 * -EAGAIN, -EINTR, which callers treat as a wakeup).
 */
static inline int xc_futex_wait(_Atomic uint32_t *word, uint32_t expected,
				const struct timespec *rel_timeout)
{
	if (syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, expected, rel_timeout, NULL, 0))
		return -errno;
	return 0;
}

static inline void xc_futex_wake(_Atomic uint32_t *word, int nr)
{
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, nr, NULL, NULL, 0);
}

#endif /* XC_FUTEX_H */
