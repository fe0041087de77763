/* SPDX-License-Identifier: MIT */
/*
 * ablate.h - ablations, for benchmarks and tests only: each bit turns one
 * optimisation of the kick protocol off, so that a benchmark can show what
 * it is worth beside it. Not in the public header: no program sets them in
 * production. The benchmarks and tests, linked with the static library, set
 * them through xc_ablate_set() (api/options.h) before xc_init(); the
 * XCALL_ABLATE variable sets them for any program.
 */
#ifndef XC_ABLATE_H
#define XC_ABLATE_H

#define XC_ABLATE_ELIDE    (1u << 0) /* futex-wake even a polling or running target */
#define XC_ABLATE_COALESCE (1u << 1) /* kick on every enqueue, not only empty -> non-empty */
#define XC_ABLATE_FREERIDE (1u << 2) /* wake again although a wakeup is already under way */
#define XC_ABLATE_NOTIFY   (1u << 3) /* a worker woken for calls leaves idle and schedules */
#define XC_ABLATE_SLOT     (1u << 4) /* waiting single calls always queue, never use the mailbox slot */
#define XC_ABLATE_RING     (1u << 5) /* calls go as descriptors on one shared list per CPU, not per-sender rings */
#define XC_ABLATE_MEMBARRIER (1u << 6) /* a ring call fences on its sender, not a membarrier on the sleeping worker */
#define XC_ABLATE_ALL      (XC_ABLATE_ELIDE | XC_ABLATE_COALESCE | XC_ABLATE_FREERIDE | \
			    XC_ABLATE_NOTIFY | XC_ABLATE_SLOT | XC_ABLATE_RING | XC_ABLATE_MEMBARRIER)

#endif /* XC_ABLATE_H */
