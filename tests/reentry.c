/*
 * reentry: a call into libxcall made while the same thread is inside
 * libxcall gets -EAGAIN and does nothing. Here the report hook is the
 * re-entry (it runs inside xc_trace_dump, which holds the dump's lock while
 * it reports a path it cannot write): the hook's own xc_trace_dump and
 * nowait call are refused, the outer dump returns its error, and nothing
 * deadlocks or runs.
 */
#include "test.h"
#include <stdatomic.h>

static _Atomic int hook_dump = 1, hook_call = 1, reports, ran;
static int cpu0;

static void count(void *arg)
{
	atomic_fetch_add(&ran, 1);
}

static void hook(void *ctx, const char *line)
{
	if (!strstr(line, "trace: cannot write"))
		return;
	atomic_fetch_add(&reports, 1);
	atomic_store(&hook_dump, xc_trace_dump("/dev/null"));
	atomic_store(&hook_call, xc_call_single(cpu0, count, NULL, 0));
}

int main(void)
{
	char trace[] = "/tmp/xcall-reentry-XXXXXX";
	struct xc_opts o = { .trace_file = trace, .report = hook };
	int fd = mkstemp(trace);

	CHECK(fd >= 0);
	close(fd);
	int cpus[CPU_SETSIZE];

	CHECK_RET(xc_init(&o), 0);
	CHECK(t_cpus(cpus) >= 1);
	cpu0 = cpus[0];
	CHECK_RET(xc_trace_dump("/nonexistent-dir/trace.json"), -ENOENT);
	CHECK(atomic_load(&reports) == 1);
	CHECK_RET(atomic_load(&hook_dump), -EAGAIN);
	CHECK_RET(atomic_load(&hook_call), -EAGAIN);
	CHECK_RET(xc_call_single(cpu0, count, NULL, XC_WAIT), 0);	/* outside again: accepted */
	CHECK(atomic_load(&ran) == 1);
	CHECK_RET(xc_exit(), 0);
	unlink(trace);
	return T_PASS;
}
