/*
 * thread-exit: a thread's descriptor pool and trace ring are handed back when
 * it exits, and a pthread key destructor that runs after that and makes
 * nowait calls still has a pool (and ring) of its own: across rounds of
 * threads that exit at once, every call runs exactly once and none is lost
 * (two owners of one pool hand a descriptor out twice, which loses calls or
 * loops the worker's queue), with tracing off and on.
 */
#include "test.h"
#include <pthread.h>
#include <stdatomic.h>

#define ROUNDS       20
#define THREADS      2
#define BODY_CALLS   10
#define EXIT_CALLS   t_env_long("XCALL_EXIT_CALLS", 20000)

static int target;
static pthread_key_t key;
static _Atomic long ran;

static void count(void *arg)
{
	atomic_fetch_add_explicit(&ran, 1, memory_order_relaxed);
}

static void nowait_calls(int n)
{
	for (int i = 0; i < n; i++) {
		int r;

		while ((r = xc_call_single(target, count, NULL, 0)) == -ENOMEM)
			;
		CHECK_RET(r, 0);
	}
}

/* Runs after libxcall's own destructors (its keys were created first). */
static void on_exit_calls(void *v)
{
	nowait_calls(EXIT_CALLS);
}

static void *thread_body(void *arg)
{
	nowait_calls(BODY_CALLS);	/* the thread takes a pool (and a trace ring) */
	pthread_setspecific(key, (void *)1);
	return NULL;
}

static void run_rounds(void)
{
	long want = (long)ROUNDS * THREADS * (BODY_CALLS + EXIT_CALLS);

	atomic_store(&ran, 0);
	for (int r = 0; r < ROUNDS; r++) {
		pthread_t t[THREADS];

		for (int i = 0; i < THREADS; i++)
			CHECK(pthread_create(&t[i], NULL, thread_body, NULL) == 0);
		for (int i = 0; i < THREADS; i++)
			pthread_join(t[i], NULL);
	}
	WAIT_UNTIL(atomic_load(&ran) >= want);
	CHECK_RET(xc_call_single(target, count, NULL, XC_WAIT), 0);	/* behind every queued call */
	if (atomic_load(&ran) != want + 1)
		fprintf(stderr, "ran %ld calls, want %ld\n", atomic_load(&ran), want + 1);
	CHECK(atomic_load(&ran) == want + 1);
}

int main(void)
{
	int cpus[CPU_SETSIZE], n;
	char trace[] = "/tmp/xcall-thread-exit-XXXXXX";
	struct xc_opts traced = { 0 };
	int fd;

	fd = mkstemp(trace);
	CHECK(fd >= 0);
	close(fd);
	traced.trace_file = trace;
	traced.trace_events = 1024;
	CHECK_RET(xc_init(&traced), 0);
	n = t_cpus(cpus);
	target = cpus[n - 1];
	/* libxcall's keys (pool, trace ring) exist before ours, so their destructors run first */
	CHECK_RET(xc_call_single(target, count, NULL, XC_WAIT), 0);
	CHECK(pthread_key_create(&key, on_exit_calls) == 0);
	run_rounds();
	CHECK_RET(xc_exit(), 0);
	unlink(trace);

	CHECK_RET(xc_init(NULL), 0);
	run_rounds();
	CHECK_RET(xc_exit(), 0);
	pthread_key_delete(key);
	return T_PASS;
}
