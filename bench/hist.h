/* SPDX-License-Identifier: MIT */
/*
 * hist.h - log-bucket latency histogram.
 *
 * Values are unsigned integers (ns or cycles). Below 128 every value has its
 * own bucket; above, each power of two is split into 128 buckets, so a bucket
 * is at most 1/128 of its lower bound wide and the reported midpoint is within
 * 1/256 (0.4%) of any value in it. Mean, stddev, min and max are exact.
 */
#ifndef BENCH_HIST_H
#define BENCH_HIST_H

#include <stdint.h>

#define HIST_SUB_BITS 7
#define HIST_SUB      (1u << HIST_SUB_BITS)
#define HIST_BUCKETS  (HIST_SUB + (64 - HIST_SUB_BITS) * HIST_SUB)

struct hist {
	uint64_t n, min, max;
	double sum, sumsq;
	uint32_t *b;    /* HIST_BUCKETS counters, allocated by hist_init() */
};

/* Summary of a histogram, in the histogram's unit. */
struct hist_stats {
	uint64_t n;
	double mean, stddev, min, p50, p90, p99, max;
};

int hist_init(struct hist *h);
void hist_free(struct hist *h);
void hist_reset(struct hist *h);
void hist_add(struct hist *h, uint64_t v);
void hist_merge(struct hist *dst, const struct hist *src);
/* Value at quantile q in [0, 1], clamped to [min, max]. 0 when empty. */
double hist_quantile(const struct hist *h, double q);
/* The q-quantile of n exact values by nearest rank, sorting them in place; 0 when n <= 0. */
double values_quantile(double *v, int n, double q);
void hist_stats(const struct hist *h, struct hist_stats *out);
/* Bucket index of v and the bounds [lo, hi) of a bucket (exported for tests). */
unsigned hist_index(uint64_t v);
void hist_bounds(unsigned idx, uint64_t *lo, uint64_t *hi);

#endif
