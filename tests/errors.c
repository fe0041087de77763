/*
 * errors: every documented error path returns its errno, one check each,
 * and never crashes or loses a call.
 */
#include "test.h"
#include "ablate.h"
#include <stdatomic.h>

static void nothing(void *arg)
{
}

static bool yes(int cpu, void *arg)
{
	return true;
}

static _Atomic int in_cb_ret = 1;

static void offline_self(void *arg)
{
	atomic_store(&in_cb_ret, xc_cpu_offline(xc_this_cpu()));
}

static void exit_in_cb(void *arg)
{
	atomic_store(&in_cb_ret, xc_exit());
}

static void init_in_cb(void *arg)
{
	atomic_store(&in_cb_ret, xc_init(NULL));
}

int main(void)
{
	struct xc_call call = { 0 };
	struct xc_work work = { 0 };
	struct xc_stats st;
	cpu_set_t mask, empty, outside;
	int cpus[CPU_SETSIZE], n;

	CPU_ZERO(&empty);
	CPU_ZERO(&mask);
	CPU_SET(0, &mask);

	/* before xc_init: -ENXIO */
	CHECK_RET(xc_call_single(0, nothing, NULL, XC_WAIT), -ENXIO);
	CHECK_RET(xc_call_many(&mask, nothing, NULL, 0), -ENXIO);
	CHECK_RET(xc_call_all(nothing, NULL, 0), -ENXIO);
	CHECK_RET(xc_call_any(&mask, nothing, NULL, 0), -ENXIO);
	call.fn = nothing;
	CHECK_RET(xc_call_async(0, &call), -ENXIO);
	CHECK(xc_call_done(&call));
	work.fn = nothing;
	CHECK_RET(xc_queue_work(0, &work), -ENXIO);
	CHECK(!xc_work_pending(&work));
	CHECK_RET(xc_cpu_offline(0), -ENXIO);
	CHECK_RET(xc_cpu_online(0), -ENXIO);
	CHECK_RET(xc_online_mask(&mask), -ENXIO);
	CHECK_RET(xc_stats_get(-1, &st), -ENXIO);
	CHECK_RET(xc_exit(), -ENXIO);
	CHECK_RET(xc_poll(), -ENXIO);
	CHECK_RET(xc_cpu_max(), -ENXIO);

	/* bad options */
	struct xc_opts bad = { .poll_ns = -5 };
	CHECK_RET(xc_init(&bad), -EINVAL);
	struct xc_opts badcpus = { .cpus = "0-" };
	CHECK_RET(xc_init(&badcpus), -EINVAL);
	struct xc_opts nocpu = { .cpus = "1023" };
	CHECK_RET(xc_init(&nocpu), -EINVAL);
	CHECK_RET(xc_ablate_set(1u << 20), -EINVAL);	/* an ablation that does not exist */

	/*
	 * The first runtime of the process on its highest CPU alone: the CPUs
	 * below it were never started, and a waiting call to one gets -ENXIO
	 * (the straight path finds its slot closed), not a wait for nobody.
	 */
	cpu_set_t allowed;

	CHECK(sched_getaffinity(0, sizeof(allowed), &allowed) == 0);
	n = 0;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &allowed))
			cpus[n++] = c;
	if (n >= 2) {
		char last[16];

		snprintf(last, sizeof(last), "%d", cpus[n - 1]);
		struct xc_opts top_only = { .cpus = last };
		CHECK_RET(xc_init(&top_only), 0);
		CHECK_RET(xc_call_single(cpus[0], nothing, NULL, XC_WAIT), -ENXIO);
		CHECK_RET(xc_call_single(cpus[n - 1], nothing, NULL, XC_WAIT), 0);
		/* one past the highest of the set, whatever lies below it */
		CHECK_RET(xc_cpu_max(), cpus[n - 1] + 1);
		CHECK_RET(xc_exit(), 0);

		/* the lowest alone: the highest is that one, offline or not */
		snprintf(last, sizeof(last), "%d", cpus[0]);
		CHECK_RET(xc_init(&top_only), 0);
		CHECK_RET(xc_cpu_max(), cpus[0] + 1);
		CHECK_RET(xc_cpu_offline(cpus[0]), 0);
		CHECK_RET(xc_cpu_max(), cpus[0] + 1);
		CHECK_RET(xc_cpu_online(cpus[0]), 0);
		CHECK_RET(xc_exit(), 0);
		CHECK_RET(xc_cpu_max(), -ENXIO);
	}

	CHECK_RET(xc_init(NULL), 0);
	CHECK_RET(xc_init(NULL), -EBUSY);
	n = t_cpus(cpus);
	CPU_ZERO(&outside);
	CPU_SET(1023, &outside);

	/* bad arguments: -EINVAL */
	CHECK_RET(xc_call_single(cpus[0], NULL, NULL, 0), -EINVAL);
	CHECK_RET(xc_call_single(cpus[0], nothing, NULL, 1u << 7), -EINVAL);
	CHECK_RET(xc_call_many(NULL, nothing, NULL, 0), -EINVAL);
	CHECK_RET(xc_call_many(&empty, nothing, NULL, 0), -EINVAL);
	CHECK_RET(xc_call_many(&mask, NULL, NULL, 0), -EINVAL);
	CHECK_RET(xc_call_many(&mask, nothing, NULL, 1u << 9), -EINVAL);
	CHECK_RET(xc_call_cond(&mask, NULL, nothing, NULL, 0), -EINVAL);
	CHECK_RET(xc_call_cond(&empty, yes, nothing, NULL, 0), -EINVAL);
	CHECK_RET(xc_call_all(NULL, NULL, 0), -EINVAL);
	CHECK_RET(xc_call_all(nothing, NULL, 1u << 5), -EINVAL);
	CHECK_RET(xc_call_any(NULL, nothing, NULL, 0), -EINVAL);
	CHECK_RET(xc_call_any(&empty, nothing, NULL, 0), -EINVAL);
	CHECK_RET(xc_call_async(cpus[0], NULL), -EINVAL);
	struct xc_call nofn = { 0 };
	CHECK_RET(xc_call_async(cpus[0], &nofn), -EINVAL);
	CHECK_RET(xc_queue_work(cpus[0], NULL), -EINVAL);
	struct xc_work nowork = { 0 };
	CHECK_RET(xc_queue_work(cpus[0], &nowork), -EINVAL);
	CHECK_RET(xc_online_mask(NULL), -EINVAL);
	CHECK_RET(xc_stats_get(-1, NULL), -EINVAL);

	/* absent CPUs: -ENXIO */
	CHECK_RET(xc_call_single(-1, nothing, NULL, 0), -ENXIO);
	CHECK_RET(xc_call_single(1023, nothing, NULL, 0), -ENXIO);
	CHECK_RET(xc_call_single(CPU_SETSIZE + 5, nothing, NULL, 0), -ENXIO);
	CHECK_RET(xc_call_single(-1, nothing, NULL, XC_WAIT), -ENXIO);
	CHECK_RET(xc_call_single(1023, nothing, NULL, XC_WAIT), -ENXIO);
	CHECK_RET(xc_call_single(CPU_SETSIZE + 5, nothing, NULL, XC_WAIT), -ENXIO);
	CHECK_RET(xc_call_many(&outside, nothing, NULL, 0), -ENXIO);
	CHECK_RET(xc_queue_work(1023, &work), -ENXIO);
	CHECK_RET(xc_stats_get(1023, &st), -ENXIO);
	CHECK_RET(xc_cpu_offline(1023), -ENXIO);
	CHECK_RET(xc_poll(), -ENXIO);	/* not a worker */

	if (n >= 2) {
		/* offline CPU: -ENXIO for calls and work; double offline/online: -EINVAL */
		CHECK_RET(xc_cpu_offline(cpus[1]), 0);
		CHECK_RET(xc_cpu_offline(cpus[1]), -EINVAL);
		CHECK_RET(xc_call_single(cpus[1], nothing, NULL, XC_WAIT), -ENXIO);
		CHECK_RET(xc_call_single(cpus[1], nothing, NULL, 0), -ENXIO);
		CHECK_RET(xc_call_async(cpus[1], &call), -ENXIO);
		CHECK(xc_call_done(&call));	/* a refused descriptor is not in flight */
		CHECK_RET(xc_queue_work(cpus[1], &work), -ENXIO);
		CHECK(!xc_work_pending(&work));
		CHECK_RET(xc_cpu_online(cpus[1]), 0);
		CHECK_RET(xc_cpu_online(cpus[1]), -EINVAL);
		CHECK_RET(xc_call_single(cpus[1], nothing, NULL, XC_WAIT), 0);
	}

	/* calls that could never finish: -EDEADLK, not a hang */
	CHECK_RET(xc_call_single(cpus[0], offline_self, NULL, XC_WAIT), 0);
	CHECK(in_cb_ret == -EDEADLK);
	CHECK_RET(xc_call_single(cpus[0], exit_in_cb, NULL, XC_WAIT), 0);
	CHECK(in_cb_ret == -EDEADLK);
	CHECK_RET(xc_call_single(cpus[0], init_in_cb, NULL, XC_WAIT), 0);
	CHECK(in_cb_ret == -EBUSY);

	CHECK_RET(xc_exit(), 0);
	CHECK_RET(xc_exit(), -ENXIO);
	CHECK_RET(xc_call_single(cpus[0], nothing, NULL, XC_WAIT), -ENXIO);
	return T_PASS;
}
