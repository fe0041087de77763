/*
 * nowait-stream: a worker runs the calls of the rings it holds in its poll
 * (worker.c, ready_idle_straight), pass after pass, without going back
 * round its idle loop. A stream of nowait calls that never lets B's ring
 * run dry (each call busy for a while, so that the sender always waits for
 * room, on a CPU of its own) must still let B take its task work:
 *   1. a work item queued to B runs while the stream goes on, before B
 *      has run a few rings' worth of calls more;
 *   2. B goes offline while it goes on (the sender's calls get -ENXIO
 *      from then), and comes back online (they run again);
 *   3. every call that returned 0 ran once, on B, in the order made.
 */
#include "test.h"
#include <pthread.h>
#include <stdatomic.h>

#define BUSY_NS 2000L		/* each call's time on B: longer than a call takes to send */
/*
 * Calls B may run between a work item's queueing and its start: a few runs
 * of a ring's worth (256 entries) each, the poll's and the task loop's. A
 * count, not a time; before runs were bounded, 57,904 to 9,235,411.
 */
#define WORK_WITHIN_CALLS 4096L

static int a_cpu, b_cpu;
static _Atomic int stop, wrong_cpu, work_ran;
static _Atomic long sent_ok, refused, ran, ran_at_work;
static long last_seq = -1, out_of_order;	/* B's worker alone writes them */

static void busy(void *arg)
{
	struct timespec t0, t;
	long seq = (long)arg;

	if (xc_this_cpu() != b_cpu)
		atomic_fetch_add(&wrong_cpu, 1);
	if (seq <= last_seq)
		out_of_order++;
	last_seq = seq;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000000L + t.tv_nsec - t0.tv_nsec < BUSY_NS);
	atomic_fetch_add(&ran, 1);
}

static void work_fn(void *arg)
{
	if (xc_this_cpu() != b_cpu)
		atomic_fetch_add(&wrong_cpu, 1);
	atomic_store(&ran_at_work, atomic_load(&ran));
	atomic_store(&work_ran, 1);
}

/* The stream: nowait calls to B, as fast as the ring takes them, until told to stop. */
static void *sender(void *arg)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(a_cpu, &one);
	CHECK(pthread_setaffinity_np(pthread_self(), sizeof(one), &one) == 0);
	for (long seq = 0; !atomic_load(&stop); seq++) {
		int err = xc_call_single(b_cpu, busy, (void *)seq, 0);

		if (err == 0)
			atomic_fetch_add(&sent_ok, 1);
		else if (err == -ENXIO)
			atomic_fetch_add(&refused, 1);
		else
			CHECK_RET(err, 0);
	}
	return NULL;
}

int main(void)
{
	struct xc_opts o = { .poll_ns = XC_POLL_FOREVER };
	struct xc_work w = { .fn = work_fn };
	cpu_set_t all;
	char b_list[16];
	pthread_t th;
	long before;

	/* the runtime on B alone: the sender has A to itself, and waits for room without yielding to a worker */
	CHECK(sched_getaffinity(0, sizeof(all), &all) == 0);
	if (CPU_COUNT(&all) < 2)
		t_skip("needs 2 CPUs");
	for (a_cpu = 0; !CPU_ISSET(a_cpu, &all); a_cpu++)
		;
	for (b_cpu = a_cpu + 1; !CPU_ISSET(b_cpu, &all); b_cpu++)
		;
	snprintf(b_list, sizeof(b_list), "%d", b_cpu);
	o.cpus = b_list;
	CHECK_RET(xc_init(&o), 0);
	CHECK(pthread_create(&th, NULL, sender, NULL) == 0);
	WAIT_UNTIL(atomic_load(&ran) >= 1000);

	/* 1. task work amid the stream, within a few runs of calls (read after the queueing: never more) */
	long ran_at_queue;

	CHECK_RET(xc_queue_work(b_cpu, &w), 0);
	ran_at_queue = atomic_load(&ran);
	WAIT_UNTIL(atomic_load(&work_ran));
	printf("nowait-stream: the work item ran %ld calls after its queueing\n",
	       atomic_load(&ran_at_work) - ran_at_queue);
	CHECK(atomic_load(&ran_at_work) - ran_at_queue <= WORK_WITHIN_CALLS);
	before = atomic_load(&ran);
	WAIT_UNTIL(atomic_load(&ran) >= before + 1000);	/* the stream went on */

	/* 2. offline and back amid it */
	CHECK_RET(xc_cpu_offline(b_cpu), 0);
	WAIT_UNTIL(atomic_load(&refused) >= 1);
	CHECK_RET(xc_cpu_online(b_cpu), 0);
	before = atomic_load(&ran);
	WAIT_UNTIL(atomic_load(&ran) >= before + 1000);

	/* 3. every accepted call ran once, on B, in order */
	atomic_store(&stop, 1);
	CHECK(pthread_join(th, NULL) == 0);
	WAIT_UNTIL(atomic_load(&ran) >= atomic_load(&sent_ok));
	CHECK_RET(xc_exit(), 0);
	CHECK(atomic_load(&ran) == atomic_load(&sent_ok));
	CHECK(atomic_load(&wrong_cpu) == 0);
	CHECK(out_of_order == 0);
	printf("nowait-stream: %ld calls ran, %ld refused while B was offline\n",
	       atomic_load(&ran), atomic_load(&refused));
	return T_PASS;
}
