/* SPDX-License-Identifier: MIT */
/*
 * options.h - the options table (options.c)
 */
#ifndef XC_OPTIONS_H
#define XC_OPTIONS_H

#include "base/internal.h"

int xc_config_resolve(const struct xc_opts *opts, struct xc_config *cfg);
void xc_config_print(const struct xc_config *cfg);

#endif /* XC_OPTIONS_H */
