/*
 * symbol: stuck reports and traces name a call's function also where
 * dladdr() cannot, from the executable's own symbol table: a static
 * function; and, built as symbol-static (-static, tests.mk), where there
 * are no dynamic symbols at all, a global one too.
 */
#include "reports.h"

/*
 * Each function runs until its caller has reported it stuck: the report is
 * the event the test waits for, whenever it comes (20 ms after the caller's
 * watch starts, much later on a loaded machine or in an emulated guest),
 * bounded only to turn a missing report into a failure.
 */
static void until_reported(const char *what)
{
	t_await_reported(what, 1);
}

/* static: in no dynamic symbol table */
static void symbol_test_local_fn(void *arg)
{
	until_reported(" for symbol_test_local_fn(0x50) on CPU ");
}

/* not static: dladdr() names it, but not in a static executable */
void symbol_test_global_fn(void *arg)
{
	until_reported(" for symbol_test_global_fn(0x50) on CPU ");
}

static void check_has(const char *hay, const char *needle)
{
	if (!strstr(hay, needle)) {
		fprintf(stderr, "missing: %s\nin:\n%.2000s\n", needle, hay);
		exit(T_FAIL);
	}
}

int main(void)
{
	char path[] = "/tmp/xcall-symbol-XXXXXX";
	struct xc_opts o = { .report = t_capture, .stuck_ms = 20, .trace_file = path };
	int cpus[CPU_SETSIZE], fd = mkstemp(path);
	char *json;

	CHECK(fd >= 0);
	close(fd);
	CHECK_RET(xc_init(&o), 0);
	t_cpus(cpus);
	/* this thread is no worker, so even CPU 0 makes it wait: 20 ms, then a report; the arg names the call */
	CHECK_RET(xc_call_single(cpus[0], symbol_test_local_fn, (void *)80L, XC_WAIT), 0);
	CHECK_RET(xc_call_single(cpus[0], symbol_test_global_fn, (void *)80L, XC_WAIT), 0);
	CHECK_RET(xc_exit(), 0);	/* writes the trace */

	check_has(t_reports, " for symbol_test_local_fn(0x50) on CPU ");
	check_has(t_reports, " for symbol_test_global_fn(0x50) on CPU ");
	json = t_slurp(path);
	unlink(path);
	check_has(json, "{\"name\":\"queue symbol_test_local_fn\"");
	check_has(json, "{\"name\":\"symbol_test_local_fn\",\"cat\":\"call\",\"ph\":\"B\"");
	check_has(json, "{\"name\":\"queue symbol_test_global_fn\"");
	check_has(json, "{\"name\":\"symbol_test_global_fn\",\"cat\":\"call\",\"ph\":\"B\"");
	free(json);
	return T_PASS;
}
