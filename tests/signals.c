/*
 * signals: libxcall from signal handlers, and the signal masks of its threads.
 *   - Every libxcall worker thread has the asynchronous signals blocked
 *     (SIGALRM, SIGUSR1, SIGTERM, SIGINT, SIGCHLD, a real-time signal), and
 *     not the faults, SIGPIPE, SIGXFSZ or the urgent signal.
 *   - A process-directed SIGALRM at 1 kHz, which only one application thread
 *     accepts, never runs its handler on a libxcall worker.
 *   - A plain thread and an attached thread each take their own timer signal
 *     at 10 kHz, whose handler calls libxcall (nowait, waiting and many calls;
 *     on the attached thread also a call to its own CPU and xc_poll()),
 *     interrupting the thread's own calls, waits and xc_poll(). The plain
 *     thread's first libxcall call is made from its handler. Twice: with
 *     tracing on, then off, where waiting calls take the slot's straight
 *     path, which does not mark the thread inside libxcall (slot.c).
 *     Nothing hangs, and each call is refused with -EAGAIN or runs exactly
 *     once (every call carries an id; runs are counted per id).
 *   - An attached thread keeps its own mask: a signal it blocked before
 *     attaching stays blocked, the urgent signal is unblocked only while it is
 *     attached.
 *   - SIGPIPE raised by a call's own write on a worker runs the application's
 *     handler there, on the worker's thread, and the write gets EPIPE.
 */
#include "test.h"
#include "base/internal.h"
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <sys/time.h>

#define MAX_IDS   (1 << 21)
#define LOOPS     t_env_long("XCALL_SIGNALS_LOOPS", 40000)

static _Atomic unsigned char runs[MAX_IDS];
static _Atomic unsigned char accepted[MAX_IDS];
static _Atomic long next_id = 1, refused, bad, bad_ret;
static _Atomic long alarm_runs, alarm_on_worker;
static _Atomic int stop_alarm, stop_loop;
static _Atomic int pipe_tid;
static int target, attach_cpu;
static _Atomic int attached_tid;

static void mark(void *arg)
{
	long id = (long)arg;

	if (atomic_fetch_add(&runs[id], 1) != 0)
		atomic_fetch_add(&bad, 1);	/* ran twice */
}

static long new_id(void)
{
	long id = atomic_fetch_add(&next_id, 1);

	CHECK(id < MAX_IDS);
	return id;
}

/* Count a call's outcome: accepted (ran or will run once), or refused. */
static void outcome(long id, int r, int accepted_value)
{
	if (r == accepted_value) {
		atomic_store(&accepted[id], 1);
	} else if (r == -EAGAIN) {
		atomic_fetch_add(&refused, 1);
	} else {
		atomic_store(&bad_ret, r);
		atomic_fetch_add(&bad, 1);
	}
}

/* One libxcall call of kind @k to @cpu, counted. */
static void one_call(int k, int cpu)
{
	long id = new_id();
	cpu_set_t one;

	switch (k % 3) {
	case 0:
		outcome(id, xc_call_single(cpu, mark, (void *)id, 0), 0);
		break;
	case 1:
		outcome(id, xc_call_single(cpu, mark, (void *)id, XC_WAIT), 0);
		break;
	default:
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		outcome(id, xc_call_many(&one, mark, (void *)id, XC_RUN_LOCAL), 1);
		break;
	}
}

static __thread int handler_calls;
static __thread bool on_attached;
static _Atomic int plain_first_done;

static void timer_handler(int sig)
{
	int saved = errno;
	int k = handler_calls++;

	if (on_attached && k % 4 == 3) {
		int r = xc_poll();

		if (r < 0 && r != -EAGAIN) {
			atomic_store(&bad_ret, r);
			atomic_fetch_add(&bad, 1);
		}
	} else {
		one_call(k, on_attached && k % 5 == 0 ? attach_cpu : (k & 8 ? target : attach_cpu));
	}
	if (!on_attached)
		atomic_store(&plain_first_done, 1);
	errno = saved;
}

static void alarm_handler(int sig)
{
	int cpu = xc_this_cpu();

	atomic_fetch_add(&alarm_runs, 1);
	if (cpu >= 0 && (int)syscall(SYS_gettid) != attached_tid)
		atomic_fetch_add(&alarm_on_worker, 1);
}

/* A timer delivering SIGUSR1 to this thread alone every @ns. */
static timer_t thread_timer(long ns)
{
	struct sigevent ev = { 0 };
	struct itimerspec its = { { 0, ns }, { 0, ns } };
	timer_t t;

	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = SIGUSR1;
	ev._sigev_un._tid = (int)syscall(SYS_gettid);
	CHECK(timer_create(CLOCK_MONOTONIC, &ev, &t) == 0);
	CHECK(timer_settime(t, 0, &its, NULL) == 0);
	return t;
}

static void block(int sig, int how)
{
	sigset_t s;

	sigemptyset(&s);
	sigaddset(&s, sig);
	CHECK(pthread_sigmask(how, &s, NULL) == 0);
}

static bool blocked_here(int sig)
{
	sigset_t cur;

	CHECK(pthread_sigmask(SIG_BLOCK, NULL, &cur) == 0);
	return sigismember(&cur, sig) == 1;
}

static void *plain_thread(void *arg)
{
	timer_t t;

	block(SIGALRM, SIG_BLOCK);
	t = thread_timer(100000);
	/* the thread's first libxcall call is its handler's */
	while (!atomic_load(&plain_first_done))
		;
	for (long i = 0; i < LOOPS; i++)
		one_call((int)i, i & 1 ? target : attach_cpu);
	timer_delete(t);
	return NULL;
}

static void *attached_thread(void *arg)
{
	cpu_set_t one;
	timer_t t;

	CPU_ZERO(&one);
	CPU_SET(attach_cpu, &one);
	CHECK(pthread_setaffinity_np(pthread_self(), sizeof(one), &one) == 0);
	block(SIGALRM, SIG_BLOCK);
	block(SIGUSR2, SIG_BLOCK);	/* the application's own choice: attach leaves it */
	block(xc_rt.cfg.urgent_signal, SIG_BLOCK);
	CHECK_RET(xc_worker_attach(attach_cpu), 0);
	CHECK(blocked_here(SIGUSR2));
	CHECK(!blocked_here(xc_rt.cfg.urgent_signal));
	CHECK(!blocked_here(SIGUSR1));
	attached_tid = (int)syscall(SYS_gettid);
	on_attached = true;
	t = thread_timer(100000);
	for (long i = 0; !atomic_load(&stop_loop) || i < LOOPS; i++) {
		int r = xc_poll();

		CHECK(r >= 0);
		if (i < LOOPS)	/* then only polls, for the plain thread's calls, until it is done */
			one_call((int)i, i % 7 == 0 ? attach_cpu : target);
	}
	timer_delete(t);
	block(SIGUSR1, SIG_BLOCK);	/* a signal already queued runs no handler after detach */
	CHECK_RET(xc_worker_detach(), 0);
	CHECK(blocked_here(SIGUSR2));
	CHECK(blocked_here(xc_rt.cfg.urgent_signal));	/* put back as it was */
	return NULL;
}

/* The one application thread that takes the process-directed SIGALRM. */
static void *alarm_thread(void *arg)
{
	sigset_t none;

	sigemptyset(&none);
	while (!atomic_load(&stop_alarm))
		sigsuspend(&none);
	return NULL;
}

/* Whether @sig is in /proc's SigBlk of thread @tid. */
static bool thread_blocks(int tid, int sig)
{
	char path[64], line[256];
	unsigned long long mask = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", tid);
	f = fopen(path, "r");
	CHECK(f != NULL);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "SigBlk: %llx", &mask) == 1)
			break;
	fclose(f);
	return mask >> (sig - 1) & 1;
}

static void pipe_handler(int sig)
{
	atomic_store(&pipe_tid, (int)syscall(SYS_gettid));
}

static _Atomic int pipe_errno;

static void write_closed_pipe(void *arg)
{
	int *fds = arg;

	atomic_store(&pipe_errno, write(fds[1], "x", 1) < 0 ? errno : 0);
}

/* 2 and 3: handlers that call libxcall, under a runtime traced or not; returns the calls made */
static long handler_round(bool traced)
{
	char trace[] = "/tmp/xcall-signals-XXXXXX", attach[16];
	struct xc_opts o = { .trace_file = traced ? trace : NULL, .attach = attach };
	struct sigaction sa = { 0 };
	struct itimerval every_ms = { { 0, 1000 }, { 0, 1000 } }, off = { 0 };
	int cpus[CPU_SETSIZE], n, fd;
	long first = atomic_load(&next_id);
	pthread_t p, a, al;

	attach_cpu = t_attach_first_cpu(attach, sizeof(attach));
	fd = mkstemp(trace);
	CHECK(fd >= 0);
	close(fd);
	atomic_store(&stop_loop, 0);
	atomic_store(&stop_alarm, 0);
	atomic_store(&attached_tid, 0);
	atomic_store(&plain_first_done, 0);
	/* SIGALRM unblocked here: workers that inherited this mask could take it */
	block(SIGALRM, SIG_UNBLOCK);
	CHECK_RET(xc_init(&o), 0);
	n = t_cpus(cpus);
	target = cpus[n - 1];
	CHECK(target != attach_cpu);

	/* 1. the masks of libxcall's own threads */
	for (int i = 0; i < n; i++) {
		int tid = xc_cpus[cpus[i]].life.tid;
		static const int blocked[] = { SIGALRM, SIGUSR1, SIGUSR2, SIGTERM, SIGINT, SIGCHLD, SIGHUP };
		static const int open_[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGPIPE, SIGXFSZ };

		for (unsigned j = 0; j < sizeof(blocked) / sizeof(blocked[0]); j++)
			CHECK(thread_blocks(tid, blocked[j]));
		CHECK(thread_blocks(tid, SIGRTMIN + 5));
		for (unsigned j = 0; j < sizeof(open_) / sizeof(open_[0]); j++)
			CHECK(!thread_blocks(tid, open_[j]));
		CHECK(!thread_blocks(tid, xc_rt.cfg.urgent_signal));
	}

	/* 2 and 3: handlers */
	sa.sa_handler = timer_handler;
	sa.sa_flags = SA_RESTART;
	CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
	sa.sa_handler = alarm_handler;
	CHECK(sigaction(SIGALRM, &sa, NULL) == 0);
	block(SIGALRM, SIG_BLOCK);
	CHECK(pthread_create(&al, NULL, alarm_thread, NULL) == 0);
	CHECK(pthread_create(&a, NULL, attached_thread, NULL) == 0);
	WAIT_UNTIL(attached_tid != 0);
	CHECK(setitimer(ITIMER_REAL, &every_ms, NULL) == 0);
	CHECK(pthread_create(&p, NULL, plain_thread, NULL) == 0);
	pthread_join(p, NULL);
	atomic_store(&stop_loop, 1);
	pthread_join(a, NULL);
	CHECK(setitimer(ITIMER_REAL, &off, NULL) == 0);
	atomic_store(&stop_alarm, 1);
	pthread_kill(al, SIGALRM);
	pthread_join(al, NULL);

	/* every accepted call runs once: wait for the nowait ones */
	long ids = atomic_load(&next_id), ran = 0;

	for (long id = first; id < ids; id++)
		if (atomic_load(&accepted[id])) {
			WAIT_UNTIL(atomic_load(&runs[id]) == 1);
			ran++;
		} else {
			CHECK(atomic_load(&runs[id]) == 0);
		}
	if (atomic_load(&bad))
		fprintf(stderr, "bad outcomes: %ld (last %ld)\n", atomic_load(&bad), atomic_load(&bad_ret));
	CHECK(atomic_load(&bad) == 0);
	CHECK(atomic_load(&alarm_on_worker) == 0);
	printf("signals, tracing %s: %ld calls, %ld ran once, %ld process alarms so far, none on a worker\n",
	       traced ? "on" : "off", ids - first, ran, atomic_load(&alarm_runs));
	CHECK_RET(xc_exit(), 0);
	unlink(trace);
	return ids - first;
}

int main(void)
{
	struct sigaction sa = { 0 };
	int cpus[CPU_SETSIZE], fds[2], n;
	long calls = 0, acc = 0;

	calls += handler_round(true);
	calls += handler_round(false);
	for (long id = 1; id < atomic_load(&next_id); id++)
		acc += atomic_load(&accepted[id]);
	CHECK(acc + atomic_load(&refused) == calls);
	printf("signals: %ld calls, %ld accepted and ran once, %ld refused (-EAGAIN)\n",
	       calls, acc, atomic_load(&refused));

	/* 4. SIGPIPE on a worker: the application's handler, on that thread */
	CHECK_RET(xc_init(NULL), 0);
	n = t_cpus(cpus);
	target = cpus[n - 1];
	sa.sa_handler = pipe_handler;
	CHECK(sigaction(SIGPIPE, &sa, NULL) == 0);
	CHECK(pipe(fds) == 0);
	close(fds[0]);
	CHECK_RET(xc_call_single(target, write_closed_pipe, fds, XC_WAIT), 0);
	CHECK(atomic_load(&pipe_errno) == EPIPE);
	CHECK(atomic_load(&pipe_tid) == xc_cpus[target].life.tid);
	close(fds[1]);
	CHECK_RET(xc_exit(), 0);
	return T_PASS;
}
