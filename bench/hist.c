/* SPDX-License-Identifier: MIT */
/* hist.c - log-bucket histogram: see hist.h for the error bound. */
#include "hist.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

unsigned hist_index(uint64_t v)
{
	if (v < HIST_SUB)
		return (unsigned)v;
	unsigned e = 63 - (unsigned)__builtin_clzll(v);      /* e >= HIST_SUB_BITS */
	unsigned sub = (unsigned)(v >> (e - HIST_SUB_BITS)); /* in [SUB, 2*SUB) */
	return HIST_SUB + (e - HIST_SUB_BITS) * HIST_SUB + (sub - HIST_SUB);
}

void hist_bounds(unsigned idx, uint64_t *lo, uint64_t *hi)
{
	if (idx < HIST_SUB) {
		*lo = idx;
		*hi = idx + 1;
		return;
	}
	unsigned shift = (idx - HIST_SUB) / HIST_SUB;
	uint64_t sub = HIST_SUB + (idx - HIST_SUB) % HIST_SUB;
	*lo = sub << shift;
	/* The top bucket's upper bound would overflow; saturate. */
	*hi = (shift == 63 - HIST_SUB_BITS && sub == 2 * HIST_SUB - 1) ? UINT64_MAX
								       : (sub + 1) << shift;
}

int hist_init(struct hist *h)
{
	memset(h, 0, sizeof(*h));
	h->b = calloc(HIST_BUCKETS, sizeof(*h->b));
	if (!h->b)
		return -ENOMEM;
	h->min = UINT64_MAX;
	return 0;
}

void hist_free(struct hist *h)
{
	free(h->b);
	h->b = NULL;
}

void hist_reset(struct hist *h)
{
	memset(h->b, 0, HIST_BUCKETS * sizeof(*h->b));
	h->n = h->max = 0;
	h->min = UINT64_MAX;
	h->sum = h->sumsq = 0;
}

void hist_add(struct hist *h, uint64_t v)
{
	h->b[hist_index(v)]++;
	h->n++;
	h->sum += (double)v;
	h->sumsq += (double)v * (double)v;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

void hist_merge(struct hist *dst, const struct hist *src)
{
	for (unsigned i = 0; i < HIST_BUCKETS; i++)
		dst->b[i] += src->b[i];
	dst->n += src->n;
	dst->sum += src->sum;
	dst->sumsq += src->sumsq;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

double hist_quantile(const struct hist *h, double q)
{
	if (!h->n)
		return 0;
	/* The rank-th smallest sample, 1-based: the nearest-rank definition. */
	uint64_t rank = (uint64_t)ceil(q * (double)h->n);
	if (rank < 1)
		rank = 1;
	uint64_t seen = 0;
	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		seen += h->b[i];
		if (seen >= rank) {
			uint64_t lo, hi;
			hist_bounds(i, &lo, &hi);
			double mid = hi - lo <= 1 ? (double)lo : ((double)lo + (double)(hi - 1)) / 2;
			if (mid < (double)h->min)
				mid = (double)h->min;
			if (mid > (double)h->max)
				mid = (double)h->max;
			return mid;
		}
	}
	return (double)h->max;
}

void hist_stats(const struct hist *h, struct hist_stats *o)
{
	memset(o, 0, sizeof(*o));
	o->n = h->n;
	if (!h->n)
		return;
	o->mean = h->sum / (double)h->n;
	double var = h->sumsq / (double)h->n - o->mean * o->mean;
	o->stddev = var > 0 ? sqrt(var) : 0;
	o->min = (double)h->min;
	o->max = (double)h->max;
	o->p50 = hist_quantile(h, 0.50);
	o->p90 = hist_quantile(h, 0.90);
	o->p99 = hist_quantile(h, 0.99);
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

double values_quantile(double *v, int n, double q)
{
	if (n <= 0)
		return 0;
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	int rank = (int)ceil(q * n);

	return v[rank < 1 ? 0 : rank - 1];
}
