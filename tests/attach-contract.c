/*
 * attach-contract: what an attached thread's own calls get.
 *   - Its CPU offline (by xc_cpu_offline, served at its xc_poll()): a call
 *     to its own CPU gets -ENXIO, as every other thread's does, nowait,
 *     waiting and async alike, and nothing runs; online again, they run inline.
 *   - Between xc_worker_sleep_begin() returning 0 and xc_worker_sleep_end():
 *     a waiting call, and xc_cpu_offline / xc_cpu_online, get -EDEADLK (a
 *     wait would overwrite the announced sleep); a nowait call goes through.
 *   - There, xc_poll() gets -EDEADLK too: from the loop, from a signal
 *     handler that lands between xc_worker_sleep_begin() and the loop's own
 *     epoll_wait (the thread is outside libxcall then), and from a call the
 *     handler runs inline. The sleep stays announced: a waiting call made to
 *     the CPU afterwards wakes the loop through its eventfd. (Its poll used
 *     to end the sleep behind the loop's back: senders skipped the kick and
 *     the loop slept on with the call queued.)
 *   - There, a nowait call that finds its ring full gets -EDEADLK, from a
 *     signal handler too, instead of waiting for room: that wait would serve
 *     this CPU's calls inside the announced sleep, taking its doorbells
 *     behind the loop's back. The call that the loop's eventfd announces
 *     runs at the loop's own xc_poll(), not inside the handler.
 */
#include "test.h"
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/epoll.h>

static int attach_cpu, target;
static _Atomic int ran, phase, step;

static void count(void *arg)
{
	atomic_fetch_add(&ran, 1);
}

static volatile sig_atomic_t handled, poll_in_handler, poll_in_call;
/* the full-ring part: the handler's mode, what its call got, where the release ran */
static volatile sig_atomic_t full_mode, in_handler, full_ret = 1;
static _Atomic int handler_entered, target_busy, target_hold, released, served_in_handler, ran_full;

static void count_full(void *arg)
{
	atomic_fetch_add(&ran_full, 1);
}

/* A work item that keeps the target busy, so that its ring from the attached thread fills. */
static void hold_target(void *arg)
{
	atomic_store(&target_busy, 1);
	while (atomic_load(&target_hold))
		sched_yield();
}

/* The main thread's call to the attached CPU: where it ran, and the target let go. */
static void release_target(void *arg)
{
	atomic_store(&served_in_handler, in_handler);
	atomic_store(&target_hold, 0);
	atomic_store(&released, 1);
}

/* Run inline by the handler's call to its own CPU. */
static void poll_from_call(void *arg)
{
	poll_in_call = xc_poll();
}

/* Delivered to the attached thread by itself, inside its announced sleep. */
static void on_signal(int sig)
{
	int saved = errno;

	if (full_mode) {
		in_handler = 1;
		atomic_store(&handler_entered, 1);
		full_ret = xc_call_single(target, count_full, NULL, 0);	/* the 17th: no room */
		in_handler = 0;
		handled = 1;
		errno = saved;
		return;
	}
	poll_in_handler = xc_poll();
	if (xc_call_single(attach_cpu, poll_from_call, NULL, 0) != 0)
		poll_in_call = 1;
	handled = 1;
	errno = saved;
}

static void *attached(void *arg)
{
	struct xc_call async = { .fn = count };
	struct epoll_event ev = { .events = EPOLLIN };
	int r, ep;

	t_attach_pinned(attach_cpu);
	atomic_store(&step, 1);
	/* the main thread takes the CPU offline; the request is served here */
	while (atomic_load(&phase) < 1)
		CHECK(xc_poll() >= 0);
	CHECK_RET(xc_call_single(attach_cpu, count, NULL, 0), -ENXIO);
	CHECK_RET(xc_call_single(attach_cpu, count, NULL, XC_WAIT), -ENXIO);
	CHECK_RET(xc_call_async(attach_cpu, &async), -ENXIO);
	CHECK(xc_call_done(&async));
	CHECK(atomic_load(&ran) == 0);
	atomic_store(&step, 2);
	while (atomic_load(&phase) < 2)
		CHECK(xc_poll() >= 0);
	CHECK_RET(xc_call_single(attach_cpu, count, NULL, XC_WAIT), 0);
	CHECK_RET(xc_call_async(attach_cpu, &async), 0);
	CHECK(atomic_load(&ran) == 2);

	/* the sleep window */
	while ((r = xc_worker_sleep_begin()) == 1)
		CHECK(xc_poll() >= 0);
	CHECK_RET(r, 0);
	CHECK_RET(xc_call_single(target, count, NULL, XC_WAIT), -EDEADLK);
	CHECK_RET(xc_cpu_offline(target), -EDEADLK);
	CHECK_RET(xc_cpu_online(target), -EDEADLK);
	CHECK_RET(xc_call_single(target, count, NULL, 0), 0);
	CHECK_RET(xc_worker_sleep_end(), 0);
	CHECK_RET(xc_call_single(target, count, NULL, XC_WAIT), 0);
	WAIT_UNTIL(atomic_load(&ran) == 4);

	/* a handler's xc_poll() between sleep_begin and the loop's own wait */
	ep = epoll_create1(EPOLL_CLOEXEC);
	CHECK(ep >= 0);
	CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, xc_worker_fd(), &ev) == 0);
	while ((r = xc_worker_sleep_begin()) == 1)
		CHECK(xc_poll() >= 0);
	CHECK_RET(r, 0);
	CHECK(pthread_kill(pthread_self(), SIGUSR1) == 0);	/* delivered before it returns */
	CHECK(handled);
	atomic_store(&step, 3);		/* the main thread makes a waiting call to this CPU */
	/* only that call's kick ends this wait; its 30 s run out only if the kick was lost */
	CHECK_RET(epoll_wait(ep, &ev, 1, 30000), 1);
	CHECK_RET(poll_in_handler, -EDEADLK);
	CHECK_RET(poll_in_call, -EDEADLK);
	CHECK_RET(xc_poll(), -EDEADLK);	/* the loop's own, before it ends the sleep */
	CHECK_RET(xc_worker_sleep_end(), 0);
	while (atomic_load(&ran) < 5)
		CHECK(xc_poll() >= 0);

	/* a handler's nowait call into a full ring, between sleep_begin and the loop's own wait */
	atomic_store(&step, 4);		/* the main thread holds the target busy */
	WAIT_UNTIL(atomic_load(&target_busy));
	for (int i = 0; i < 16; i++)	/* ring_entries 16: full, nothing taken */
		CHECK_RET(xc_call_single(target, count_full, NULL, 0), 0);
	while ((r = xc_worker_sleep_begin()) == 1)
		CHECK(xc_poll() >= 0);
	CHECK_RET(r, 0);
	handled = 0;
	full_mode = 1;
	CHECK(pthread_kill(pthread_self(), SIGUSR1) == 0);	/* delivered before it returns */
	CHECK(handled);
	/* the main thread's call to this CPU, made once the handler ran, ends this wait */
	CHECK_RET(epoll_wait(ep, &ev, 1, 30000), 1);
	CHECK_RET(full_ret, -EDEADLK);
	CHECK_RET(xc_worker_sleep_end(), 0);
	while (!atomic_load(&released))
		CHECK(xc_poll() >= 0);
	CHECK(!atomic_load(&served_in_handler));
	WAIT_UNTIL(atomic_load(&ran_full) == 16);
	CHECK(epoll_ctl(ep, EPOLL_CTL_DEL, xc_worker_fd(), NULL) == 0);
	close(ep);
	CHECK_RET(xc_worker_detach(), 0);
	return NULL;
}

int main(void)
{
	char attach[16];
	struct xc_opts o = { .attach = attach, .ring_entries = 16 };
	struct xc_work hold = { .fn = hold_target };
	struct sigaction sa = { .sa_handler = on_signal };
	int cpus[CPU_SETSIZE], n;
	pthread_t t;

	attach_cpu = t_attach_first_cpu(attach, sizeof(attach));
	CHECK_RET(xc_init(&o), 0);
	n = t_cpus(cpus);
	target = cpus[n - 1];
	CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
	CHECK(pthread_create(&t, NULL, attached, NULL) == 0);
	WAIT_UNTIL(atomic_load(&step) == 1);
	CHECK_RET(xc_cpu_offline(attach_cpu), 0);
	atomic_store(&phase, 1);
	WAIT_UNTIL(atomic_load(&step) == 2);
	CHECK_RET(xc_cpu_online(attach_cpu), 0);
	atomic_store(&phase, 2);
	WAIT_UNTIL(atomic_load(&step) == 3);
	CHECK_RET(xc_call_single(attach_cpu, count, NULL, XC_WAIT), 0);
	WAIT_UNTIL(atomic_load(&step) == 4);
	atomic_store(&target_hold, 1);
	CHECK_RET(xc_queue_work(target, &hold), 0);
	WAIT_UNTIL(atomic_load(&handler_entered));
	CHECK_RET(xc_call_single(attach_cpu, release_target, NULL, 0), 0);
	CHECK(pthread_join(t, NULL) == 0);
	CHECK_RET(xc_exit(), 0);
	return T_PASS;
}
