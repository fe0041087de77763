/*
 * call-single: xc_call_single runs fn exactly once, on the CPU asked for,
 * with its argument, waiting and not waiting, from a plain thread and from a
 * worker; a worker's call to its own CPU runs inline, before the call returns.
 */
#include "test.h"
#include <stdatomic.h>

#define N 2000

static _Atomic int ran_on[CPU_SETSIZE];
static _Atomic int hits[N];

static void mark(void *arg)
{
	int id = (int)(long)arg;

	atomic_fetch_add(&hits[id], 1);
	atomic_fetch_add(&ran_on[xc_this_cpu()], 1);
}

static void check_cpu(void *arg)
{
	/* runs on the CPU it was sent to */
	CHECK(xc_this_cpu() == (int)(long)arg);
}

struct inline_probe {
	int ran;
};

static void set_ran(void *arg)
{
	((struct inline_probe *)arg)->ran = xc_this_cpu() + 1;
}

static void self_call(void *arg)
{
	struct inline_probe p = { 0 };

	/* no XC_WAIT, yet it has run when the call returns: inline */
	CHECK_RET(xc_call_single(xc_this_cpu(), set_ran, &p, 0), 0);
	CHECK(p.ran == xc_this_cpu() + 1);
	*(int *)arg = 1;
}

static void worker_sends(void *arg)
{
	int *cpus = arg;

	for (int i = N / 2; i < N; i++)
		CHECK_RET(xc_call_single(cpus[i % 2], mark, (void *)(long)i, i % 3 ? XC_WAIT : 0), 0);
}

int main(void)
{
	int cpus[CPU_SETSIZE], n, done = 0;

	CHECK_RET(xc_init(NULL), 0);
	n = t_cpus(cpus);
	if (n < 2) {
		xc_exit();
		t_skip("needs 2 CPUs");
	}
	CHECK(xc_this_cpu() == -1);
	for (int i = 0; i < n; i++)
		CHECK_RET(xc_call_single(cpus[i], check_cpu, (void *)(long)cpus[i], XC_WAIT), 0);

	/* from this (non-worker) thread, half waiting, half not */
	for (int i = 0; i < N / 2; i++)
		CHECK_RET(xc_call_single(cpus[i % 2], mark, (void *)(long)i, i % 2 ? XC_WAIT : 0), 0);
	/* from a worker, to itself (inline) and to the other CPU */
	int pair[2] = { cpus[0], cpus[1] };
	CHECK_RET(xc_call_single(cpus[0], worker_sends, pair, XC_WAIT), 0);
	CHECK_RET(xc_call_single(cpus[1], self_call, &done, XC_WAIT), 0);
	CHECK(done == 1);

	CHECK_RET(xc_exit(), 0);	/* drains the nowait calls */
	for (int i = 0; i < N; i++)
		CHECK(hits[i] == 1);
	CHECK(ran_on[cpus[0]] == N / 2 && ran_on[cpus[1]] == N / 2);
	return T_PASS;
}
