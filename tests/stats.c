/*
 * stats: xc_stats_delta() is the difference of two readings, counter by
 * counter (every field, the new displaced one too), with the later reading's
 * poll_ns_now; xc_stats_add() sums, in place; a waiting call and a work item
 * show up in the delta of calls and work_run exactly.
 */
#include "test.h"
#include <stdint.h>

#define WORDS (sizeof(struct xc_stats) / sizeof(uint64_t))

static void nothing(void *arg)
{
}

int main(void)
{
	struct xc_stats a, b, d, sum;
	uint64_t w[WORDS];
	int cpus[CPU_SETSIZE];
	struct xc_work work = { .fn = nothing };

	/* every field, by its position: b = 3 * (i + 1) more than a */
	for (size_t i = 0; i < WORDS; i++)
		w[i] = 100 + i;
	memcpy(&a, w, sizeof(a));
	for (size_t i = 0; i < WORDS; i++)
		w[i] = 100 + i + 3 * (i + 1);
	memcpy(&b, w, sizeof(b));
	xc_stats_delta(&d, &a, &b);
	memcpy(w, &d, sizeof(d));
	for (size_t i = 0; i < WORDS; i++)
		if (i != offsetof(struct xc_stats, poll_ns_now) / sizeof(uint64_t))
			CHECK(w[i] == 3 * (i + 1));
	CHECK(d.poll_ns_now == b.poll_ns_now);
	CHECK(d.displaced == b.displaced - a.displaced);
	sum = d;
	xc_stats_add(&sum, &d);
	CHECK(sum.calls == 2 * d.calls && sum.displaced == 2 * d.displaced);
	CHECK(sum.trace_drops == 2 * d.trace_drops);
	xc_stats_delta(&a, &a, &b);		/* in place */
	CHECK(a.calls == d.calls && a.poll_ns_now == b.poll_ns_now);

	CHECK_RET(xc_init(NULL), 0);
	t_cpus(cpus);
	CHECK_RET(xc_stats_get(cpus[0], &a), 0);
	for (int i = 0; i < 10; i++)
		CHECK_RET(xc_call_single(cpus[0], nothing, NULL, XC_WAIT), 0);
	CHECK_RET(xc_queue_work(cpus[0], &work), 0);
	while (xc_work_pending(&work))
		;
	CHECK_RET(xc_call_single(cpus[0], nothing, NULL, XC_WAIT), 0);	/* behind the item */
	CHECK_RET(xc_stats_get(cpus[0], &b), 0);
	xc_stats_delta(&d, &a, &b);
	CHECK(d.calls == 11);
	CHECK(d.work_run == 1);
	CHECK(d.displaced == 0);
	CHECK(d.barriers == 0);		/* waiting calls alone, each through the slot or fenced */
	CHECK_RET(xc_exit(), 0);
	return T_PASS;
}
