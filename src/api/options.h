/* SPDX-License-Identifier: MIT */
/*
 * options.h - the options table (options.c)
 */
#ifndef XC_OPTIONS_H
#define XC_OPTIONS_H

#include "base/internal.h"

int xc_config_resolve(const struct xc_opts *opts, struct xc_config *cfg);
int xc_opts_in(struct xc_opts *full, const struct xc_opts *o, size_t size);
void xc_config_print(const struct xc_config *cfg);

/*
 * Ablations (base/ablate.h), for benchmarks and tests linked with the static
 * library. xc_ablate_set: the bits of every later xc_init(), over
 * XCALL_ABLATE (0: XCALL_ABLATE's, if set); -EINVAL for unknown bits. Not
 * thread-safe: call it where xc_init() would be. xc_ablate_parse: names as
 * XCALL_ABLATE takes them ("slot,ring", "all", "none"); 0 or -EINVAL.
 * xc_ablate_format: the names, as much as fits, NUL-terminated.
 */
int xc_ablate_set(unsigned bits);
int xc_ablate_parse(const char *names, unsigned *bits);
void xc_ablate_format(unsigned bits, char *buf, size_t size);

#endif /* XC_OPTIONS_H */
