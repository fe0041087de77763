/* SPDX-License-Identifier: MIT */
/*
 * ablate.h - the tests that compare libxcall with one of its optimisations
 * turned off (src/base/ablate.h): a runtime brought up with ablations, which
 * the static library's xc_ablate_set() sets for the next xc_init() alone.
 */
#ifndef XC_TEST_ABLATE_H
#define XC_TEST_ABLATE_H

#include "test.h"
#include "api/options.h"

/* xc_init(@o) with the ablations @bits (XC_ABLATE_*); what xc_init returned. */
static inline int t_init_ablated(const struct xc_opts *o, unsigned bits)
{
	int ret;

	CHECK_RET(xc_ablate_set(bits), 0);
	ret = xc_init(o);
	CHECK_RET(xc_ablate_set(0), 0);
	return ret;
}

#endif /* XC_TEST_ABLATE_H */
