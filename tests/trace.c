/*
 * trace: with tracing on, a known sequence (a waiting call from this thread
 * to CPU 1, a work item on CPU 0, a nowait call to CPU 1) is written out as
 * Chrome trace JSON that parses, with one track per CPU and per calling
 * thread, the events on the expected tracks in order, and a flow from each
 * queued call to its entry; the rings drop the oldest events rather than
 * block, and count the drops; a dump that races xc_exit() gets 0 or
 * -ENXIO and never reads a freed ring (AddressSanitizer checks that); a
 * dump that races threads adopting the rings of threads gone reads their
 * names as they were (ThreadSanitizer: found by the scenario fuzzer).
 */
#include "test.h"
#include <pthread.h>
#include <stdatomic.h>

static _Atomic int work_done;

void trace_test_call(void *arg)
{
}

void trace_test_work(void *arg)
{
	atomic_store(&work_done, 1);
}

static _Atomic int dumping_stop;
static char race_path[] = "/tmp/xcall-trace-race-XXXXXX";

/* Dumps the trace in a loop until told to stop; every answer is 0 or -ENXIO. */
static void *dump_loop(void *arg)
{
	while (!atomic_load(&dumping_stop)) {
		int r = xc_trace_dump(race_path);

		CHECK(r == 0 || r == -ENXIO);
	}
	return NULL;
}

static void dump_races_exit(void)
{
	struct xc_opts o = { .trace_file = race_path, .trace_events = 64 };
	int cpus[CPU_SETSIZE];
	pthread_t t;
	int fd = mkstemp(race_path);

	CHECK(fd >= 0);
	close(fd);
	for (int round = 0; round < 20; round++) {
		CHECK_RET(xc_init(&o), 0);
		t_cpus(cpus);
		atomic_store(&dumping_stop, 0);
		CHECK(pthread_create(&t, NULL, dump_loop, NULL) == 0);
		for (int i = 0; i < 50; i++)
			CHECK_RET(xc_call_single(cpus[0], trace_test_call, NULL, 0), 0);
		CHECK_RET(xc_exit(), 0);
		atomic_store(&dumping_stop, 1);
		pthread_join(t, NULL);
	}
	unlink(race_path);
}

static void *call_once(void *arg)
{
	CHECK_RET(xc_call_single(*(int *)arg, trace_test_call, NULL, 0), 0);
	return NULL;
}

static void dump_races_adoption(void)
{
	struct xc_opts o = { .trace_file = race_path, .trace_events = 64 };
	int cpus[CPU_SETSIZE];
	pthread_t t, c;
	int fd;

	strcpy(race_path + strlen(race_path) - 6, "XXXXXX");	/* a name of its own */
	fd = mkstemp(race_path);

	CHECK(fd >= 0);
	close(fd);
	CHECK_RET(xc_init(&o), 0);
	t_cpus(cpus);
	atomic_store(&dumping_stop, 0);
	CHECK(pthread_create(&t, NULL, dump_loop, NULL) == 0);
	/* each thread's first call adopts the ring its predecessor left */
	for (int i = 0; i < 200; i++) {
		CHECK(pthread_create(&c, NULL, call_once, &cpus[0]) == 0);
		CHECK(pthread_join(c, NULL) == 0);
	}
	atomic_store(&dumping_stop, 1);
	pthread_join(t, NULL);
	CHECK_RET(xc_exit(), 0);
	unlink(race_path);
}

/* The JSON parses (python3's json module; skipped if python3 is absent). */
static void check_json(const char *path)
{
	char cmd[512];

	if (system("command -v python3 >/dev/null 2>&1"))
		return;
	snprintf(cmd, sizeof(cmd),
		 "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d[\"traceEvents\"] else 1)' %s",
		 path);
	CHECK(system(cmd) == 0);
}

/* @needle occurs in @hay after offset @from; returns its offset. */
static long find_after(const char *hay, long from, const char *needle)
{
	const char *p = strstr(hay + from, needle);

	if (!p) {
		fprintf(stderr, "missing after offset %ld: %s\n", from, needle);
		exit(T_FAIL);
	}
	return p - hay;
}

int main(void)
{
	char path[] = "/tmp/xcall-trace-XXXXXX", dump2[64], needle[160];
	struct xc_work w = { .fn = trace_test_work };
	struct xc_opts o = { .trace_file = path, .poll_ns = XC_POLL_NONE };
	struct xc_stats st;
	int cpus[CPU_SETSIZE], fd = mkstemp(path);
	long at;
	char *json;

	CHECK(fd >= 0);
	close(fd);
	CHECK_RET(xc_trace_dump(path), -ENXIO);	/* tracing is off */
	CHECK_RET(xc_init(&o), 0);
	if (t_cpus(cpus) < 2) {
		xc_exit();
		unlink(path);
		t_skip("needs 2 CPUs");
	}
	CHECK_RET(xc_trace_dump(NULL), -EINVAL);
	CHECK_RET(xc_call_single(cpus[1], trace_test_call, NULL, XC_WAIT), 0);
	CHECK_RET(xc_queue_work(cpus[0], &w), 0);
	WAIT_UNTIL(atomic_load(&work_done));
	CHECK_RET(xc_call_single(cpus[1], trace_test_call, NULL, 0), 0);
	snprintf(dump2, sizeof(dump2), "%s.now", path);
	CHECK_RET(xc_trace_dump(dump2), 0);	/* a dump while running */
	check_json(dump2);
	unlink(dump2);
	CHECK_RET(xc_exit(), 0);		/* writes the trace file */

	check_json(path);
	json = t_slurp(path);
	/* tracks */
	snprintf(needle, sizeof(needle), "\"args\":{\"name\":\"CPU %d\"}", cpus[1]);
	CHECK(strstr(json, needle) != NULL);
	CHECK(strstr(json, "\"args\":{\"name\":\"thread ") != NULL);
	/* the waiting call: queued on the thread track, a flow start, entry on CPU 1 with the flow end */
	at = find_after(json, 0, "{\"name\":\"queue trace_test_call\"");
	at = find_after(json, at, "\"ph\":\"s\",\"id\":");
	snprintf(needle, sizeof(needle), "{\"name\":\"trace_test_call\",\"cat\":\"call\",\"ph\":\"B\"");
	at = find_after(json, 0, needle);
	snprintf(needle, sizeof(needle), "\"tid\":%d,\"args\":{\"from\":-1}}", cpus[1]);
	at = find_after(json, at, needle);
	at = find_after(json, at, "\"ph\":\"f\",\"bp\":\"e\"");
	at = find_after(json, at, "{\"ph\":\"E\"");
	/* the second call: a second entry on CPU 1 */
	find_after(json, at, "{\"name\":\"trace_test_call\",\"cat\":\"call\",\"ph\":\"B\"");
	/* the work item, on CPU 0's track */
	at = find_after(json, 0, "{\"name\":\"trace_test_work\",\"cat\":\"work\",\"ph\":\"B\"");
	snprintf(needle, sizeof(needle), "\"tid\":%d,", cpus[0]);
	find_after(json, at, needle);
	/* with POLL_NONE the workers slept and were kicked awake */
	CHECK(strstr(json, "{\"name\":\"sleep\"") != NULL);
	CHECK(strstr(json, "{\"name\":\"kick sent\"") != NULL);
	free(json);
	unlink(path);

	/* a tiny ring overwrites its oldest events and counts them */
	o.trace_events = 16;
	CHECK_RET(xc_init(&o), 0);
	for (int i = 0; i < 200; i++)
		CHECK_RET(xc_call_single(cpus[1], trace_test_call, NULL, XC_WAIT), 0);
	CHECK_RET(xc_stats_get(cpus[1], &st), 0);
	CHECK(st.trace_drops > 0);
	CHECK_RET(xc_exit(), 0);
	json = t_slurp(path);
	CHECK(strstr(json, "\"dropped_events\":0,") == NULL);
	free(json);
	check_json(path);
	unlink(path);
	dump_races_exit();
	dump_races_adoption();
	return T_PASS;
}
