/*
 * call-many: xc_call_many / xc_call_all / xc_call_cond / xc_call_any reach
 * exactly the CPUs they should, once each: the calling worker's own CPU only
 * with XC_RUN_LOCAL, offline CPUs skipped, cond consulted per CPU, any picks
 * the caller's own CPU first; the return value counts the CPUs reached.
 */
#include "test.h"
#include <stdatomic.h>

static _Atomic int ran_on[CPU_SETSIZE];
static int cpus[CPU_SETSIZE], ncpu;

static void count(void *arg)
{
	atomic_fetch_add(&ran_on[xc_this_cpu()], 1);
}

static void reset(void)
{
	for (int i = 0; i < CPU_SETSIZE; i++)
		atomic_store(&ran_on[i], 0);
}

static int total(void)
{
	int t = 0;

	for (int i = 0; i < CPU_SETSIZE; i++)
		t += atomic_load(&ran_on[i]);
	return t;
}

static bool only_first(int cpu, void *arg)
{
	return cpu == cpus[0];
}

struct from_worker {
	unsigned flags;
	int ret;
};

static void all_from_worker(void *arg)
{
	struct from_worker *f = arg;

	f->ret = xc_call_all(count, NULL, f->flags);
}

static void any_from_worker(void *arg)
{
	cpu_set_t all;

	xc_online_mask(&all);
	/* the worker's own CPU is nearest: runs inline */
	*(int *)arg = xc_call_any(&all, count, NULL, XC_WAIT);
}

int main(void)
{
	cpu_set_t mask;
	struct from_worker fw;
	int got;

	CHECK_RET(xc_init(NULL), 0);
	ncpu = t_cpus(cpus);
	if (ncpu < 2) {
		xc_exit();
		t_skip("needs 2 CPUs");
	}

	/* from a plain thread every CPU of the mask is a target */
	xc_online_mask(&mask);
	CHECK_RET(xc_call_many(&mask, count, NULL, XC_WAIT), ncpu);
	for (int i = 0; i < ncpu; i++)
		CHECK(ran_on[cpus[i]] == 1);
	reset();
	CHECK_RET(xc_call_all(count, NULL, XC_WAIT), ncpu);
	CHECK(total() == ncpu);

	/* from a worker: all others, then all with XC_RUN_LOCAL */
	reset();
	fw.flags = XC_WAIT;
	CHECK_RET(xc_call_single(cpus[0], all_from_worker, &fw, XC_WAIT), 0);
	CHECK(fw.ret == ncpu - 1 && ran_on[cpus[0]] == 0 && total() == ncpu - 1);
	reset();
	fw.flags = XC_WAIT | XC_RUN_LOCAL;
	CHECK_RET(xc_call_single(cpus[0], all_from_worker, &fw, XC_WAIT), 0);
	CHECK(fw.ret == ncpu && ran_on[cpus[0]] == 1 && total() == ncpu);

	/* nowait many: everything runs by xc_exit at the latest */
	reset();
	CHECK_RET(xc_call_many(&mask, count, NULL, 0), ncpu);
	WAIT_UNTIL(total() == ncpu);

	/* cond */
	reset();
	CHECK_RET(xc_call_cond(&mask, only_first, count, NULL, XC_WAIT), 1);
	CHECK(ran_on[cpus[0]] == 1 && total() == 1);

	/* offline CPUs are skipped */
	reset();
	CHECK_RET(xc_cpu_offline(cpus[1]), 0);
	CHECK_RET(xc_call_many(&mask, count, NULL, XC_WAIT), ncpu - 1);
	CHECK(ran_on[cpus[1]] == 0 && total() == ncpu - 1);
	CPU_ZERO(&mask);
	CPU_SET(cpus[1], &mask);
	CHECK_RET(xc_call_many(&mask, count, NULL, XC_WAIT), 0);
	CHECK_RET(xc_call_any(&mask, count, NULL, XC_WAIT), -ENXIO);
	CHECK_RET(xc_cpu_online(cpus[1]), 0);

	/* any: an online CPU of the mask; from a worker, its own */
	reset();
	got = xc_call_any(&mask, count, NULL, XC_WAIT);
	CHECK(got == cpus[1] && ran_on[cpus[1]] == 1);
	reset();
	CHECK_RET(xc_call_single(cpus[1], any_from_worker, &got, XC_WAIT), 0);
	CHECK(got == cpus[1] && ran_on[cpus[1]] == 1 && total() == 1);

	CHECK_RET(xc_exit(), 0);
	return T_PASS;
}
