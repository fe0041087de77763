/*
 * attach: application threads as CPUs' workers (xc_opts.attach,
 * xc_worker_attach). Every other CPU of the set is attached, the rest are
 * libxcall's own. Checks:
 *   - a CPU set aside is offline until its thread attaches, online after;
 *   - calls of every kind (wait, nowait, async, many, all) and work items to
 *     an attached CPU run on the attaching thread (its tid), exactly once;
 *   - a loop that polls without sleeping gets its calls with every kick
 *     elided (kicks_elided > 0, kicks_sent == 0);
 *   - a loop that sleeps in epoll_wait with no timeout gets a waiting call
 *     (only the eventfd kick can wake it: kicks_sent > 0, wakeups > 0);
 *   - exactly once under stress: plain threads and workers send to every CPU
 *     while the attached loops sleep in epoll between polls;
 *   - an urgent call reaches an attached thread that is busy, by the signal;
 *   - xc_cpu_offline / xc_cpu_online of an attached CPU whose loop sleeps;
 *   - detach runs what was queued, then the CPU is offline and calls get
 *     -ENXIO; another thread may attach again; a thread that exits attached
 *     is detached; xc_exit refuses (-EBUSY) while a thread is attached;
 *   - the OS taking an attached CPU (its thread's affinity changed from outside):
 *     the CPU goes offline with a report, calls get -ENXIO, the thread's mask
 *     is left as it was (widened: never pinned again by libxcall), and the CPU
 *     comes back once the thread runs pinned there again; in a guest
 *     (XCALL_GUEST=1, root) the same with the CPU taken offline through sysfs,
 *     which is put back online on every exit path, with a line saying so;
 *   - the cpu_init hook runs on the attaching thread; its error fails the
 *     attach, which leaves the CPU free and offline;
 *   - bad uses get their errno: attach from a thread pinned elsewhere, twice,
 *     from a libxcall worker, to a CPU not set aside or outside the set, a
 *     second thread on a CPU taken; detach, fd, sleep calls from a thread not
 *     attached; detach inside a call; an attach set outside the CPUs.
 */
#include "test.h"
#include "dump.h"
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/syscall.h>

#define MAXC 256

enum loop_mode { LOOP_POLL, LOOP_EPOLL, LOOP_BUSY };

struct loop {
	int cpu;
	enum loop_mode mode;
	pthread_t thread;
	_Atomic int tid;
	_Atomic int attached;		/* 1 attached, -errno failed */
	_Atomic int stop;
	_Atomic int busy_go;		/* LOOP_BUSY: spin without polling while set */
	_Atomic int busy_in;		/* LOOP_BUSY: spinning now, past its last xc_poll() */
	_Atomic long sleeps;		/* epoll_wait calls that slept */
	_Atomic long polls, refusals;	/* xc_poll() calls; sleeps xc_worker_sleep_begin() refused */
	_Atomic int in_epoll;		/* inside epoll_wait now */
	bool exit_attached;		/* leave without xc_worker_detach */
};

static int cpus[MAXC], ncpu;
static int attach_cpus[MAXC], nattach, own_cpus[MAXC], nown;
static struct loop loops[MAXC];

static int gettid_(void)
{
	return (int)syscall(SYS_gettid);
}

static void pin(int cpu)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	CHECK(pthread_setaffinity_np(pthread_self(), sizeof(one), &one) == 0);
}

static void *loop_main(void *arg)
{
	struct loop *l = arg;
	struct epoll_event ev = { .events = EPOLLIN }, out[4];
	int ep = -1, r;

	pin(l->cpu);
	r = xc_worker_attach(l->cpu);
	atomic_store(&l->tid, gettid_());
	atomic_store(&l->attached, r ? r : 1);
	if (r)
		return NULL;
	if (l->mode == LOOP_EPOLL) {
		ep = epoll_create1(EPOLL_CLOEXEC);
		CHECK(ep >= 0);
		ev.data.fd = xc_worker_fd();
		CHECK(ev.data.fd >= 0);
		CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, ev.data.fd, &ev) == 0);
	}
	while (!atomic_load(&l->stop)) {
		CHECK(xc_poll() >= 0);
		atomic_fetch_add(&l->polls, 1);
		if (l->mode == LOOP_BUSY) {
			if (atomic_load(&l->busy_go)) {
				atomic_store(&l->busy_in, 1);
				while (atomic_load(&l->busy_go))
					;	/* busy, not polling: only the urgent signal gets in */
				atomic_store(&l->busy_in, 0);
			}
			continue;
		}
		if (l->mode != LOOP_EPOLL)
			continue;
		r = xc_worker_sleep_begin();
		CHECK(r == 0 || r == 1);
		/*
		 * stop_loop() sets stop, then sends a call to wake the loop. That call
		 * may have run in the xc_poll() above, before this sleep was announced:
		 * no kick will come for it, so look at stop once more before sleeping.
		 * Past sleep_begin, a call sent after stop was set either ran above
		 * (and stop is seen here) or kicks the eventfd.
		 */
		if (r == 0 && !atomic_load(&l->stop)) {
			atomic_fetch_add(&l->sleeps, 1);
			atomic_store(&l->in_epoll, 1);
			r = epoll_wait(ep, out, 4, -1);		/* no timeout: only a kick ends it */
			atomic_store(&l->in_epoll, 0);
			CHECK(r >= 0 || errno == EINTR);
		} else if (r == 1) {
			atomic_fetch_add(&l->refusals, 1);
		}
		CHECK_RET(xc_worker_sleep_end(), 0);
	}
	if (ep >= 0)
		close(ep);
	if (!l->exit_attached)
		CHECK_RET(xc_worker_detach(), 0);
	return NULL;
}

static void noop(void *arg)
{
}

static _Atomic long queued_ran;
static void count_ran(void *arg)
{
	atomic_fetch_add(&queued_ran, 1);
}

static void start_loop(struct loop *l, int cpu, enum loop_mode mode)
{
	memset(l, 0, sizeof(*l));
	l->cpu = cpu;
	l->mode = mode;
	CHECK(pthread_create(&l->thread, NULL, loop_main, l) == 0);
	WAIT_UNTIL(atomic_load(&l->attached) != 0);
	CHECK_RET(atomic_load(&l->attached), 1);
}

static void stop_loop(struct loop *l)
{
	atomic_store(&l->stop, 1);
	atomic_store(&l->busy_go, 0);
	/*
	 * A nowait call wakes a sleeping loop (which looks at stop after it
	 * announces a sleep: loop_main); -ENXIO if it is offline.
	 */
	for (int r; (r = xc_call_single(l->cpu, noop, NULL, 0)) == -ENOMEM; )
		;
	CHECK(pthread_join(l->thread, NULL) == 0);
}

/* --- where calls run --- */

struct where {
	_Atomic int tid;
	_Atomic int cpu;
	_Atomic int runs;
};

static void note_where(void *arg)
{
	struct where *w = arg;

	atomic_store(&w->tid, gettid_());
	atomic_store(&w->cpu, xc_this_cpu());
	atomic_fetch_add(&w->runs, 1);
}

static void check_where(struct where *w, struct loop *l, int runs)
{
	WAIT_UNTIL(atomic_load(&w->runs) >= runs);
	CHECK_RET(atomic_load(&w->runs), runs);
	CHECK_RET(atomic_load(&w->tid), atomic_load(&l->tid));
	CHECK_RET(atomic_load(&w->cpu), l->cpu);
}

static void test_calls_run_on_thread(enum loop_mode mode)
{
	struct loop *l = &loops[0];
	int cpu = attach_cpus[0];
	struct where w;
	struct xc_call async = { .fn = note_where, .arg = &w };
	struct xc_work work = { .fn = note_where, .arg = &w };
	cpu_set_t one;

	CHECK(!t_online(cpu));
	CHECK_RET(xc_call_single(cpu, noop, NULL, XC_WAIT), -ENXIO);
	start_loop(l, cpu, mode);
	CHECK(t_online(cpu));

	memset(&w, 0, sizeof(w));
	CHECK_RET(xc_call_single(cpu, note_where, &w, XC_WAIT), 0);
	check_where(&w, l, 1);
	memset(&w, 0, sizeof(w));
	CHECK_RET(xc_call_single(cpu, note_where, &w, 0), 0);
	check_where(&w, l, 1);
	memset(&w, 0, sizeof(w));
	CHECK_RET(xc_call_async(cpu, &async), 0);
	WAIT_UNTIL(xc_call_done(&async));
	check_where(&w, l, 1);
	memset(&w, 0, sizeof(w));
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	CHECK_RET(xc_call_many(&one, note_where, &w, XC_WAIT), 1);
	check_where(&w, l, 1);
	memset(&w, 0, sizeof(w));
	CHECK_RET(xc_queue_work(cpu, &work), 0);
	check_where(&w, l, 1);
	stop_loop(l);
	CHECK(!t_online(cpu));
}

/* xc_call_all reaches every CPU once, attached ones on their threads */
struct all_rec {
	_Atomic int runs[CPU_SETSIZE];
	_Atomic int tid[CPU_SETSIZE];
};

static void note_all(void *arg)
{
	struct all_rec *a = arg;
	int cpu = xc_this_cpu();

	atomic_fetch_add(&a->runs[cpu], 1);
	atomic_store(&a->tid[cpu], gettid_());
}

static void test_call_all(void)
{
	static struct all_rec a;

	for (int i = 0; i < nattach; i++)
		start_loop(&loops[i], attach_cpus[i], LOOP_EPOLL);
	memset(&a, 0, sizeof(a));
	CHECK_RET(xc_call_all(note_all, &a, XC_WAIT), ncpu);
	for (int i = 0; i < ncpu; i++)
		CHECK_RET(atomic_load(&a.runs[cpus[i]]), 1);
	for (int i = 0; i < nattach; i++)
		CHECK_RET(atomic_load(&a.tid[attach_cpus[i]]), atomic_load(&loops[i].tid));
	for (int i = 0; i < nattach; i++)
		stop_loop(&loops[i]);
}

/* --- kicks --- */

static void test_polling_elides(void)
{
	struct loop *l = &loops[0];
	int cpu = attach_cpus[0];
	struct xc_stats before, after;

	start_loop(l, cpu, LOOP_POLL);
	CHECK_RET(xc_stats_get(cpu, &before), 0);
	atomic_store(&queued_ran, 0);
	for (int i = 0; i < 2000; i++) {
		CHECK_RET(xc_call_single(cpu, noop, NULL, XC_WAIT), 0);
		for (int r; (r = xc_call_single(cpu, count_ran, NULL, 0)) == -ENOMEM; )
			;
	}
	/* calls from one thread to one CPU run in order: the last waiting call comes after all */
	CHECK_RET(xc_call_single(cpu, noop, NULL, XC_WAIT), 0);
	CHECK_RET(atomic_load(&queued_ran), 2000);
	CHECK_RET(xc_stats_get(cpu, &after), 0);
	xc_stats_delta(&after, &before, &after);
	CHECK(after.calls >= 4001);
	CHECK(after.kicks_elided > 0);
	CHECK_RET(after.kicks_sent, 0);		/* it never announced a sleep */
	CHECK_RET(after.sleeps, 0);
	stop_loop(l);
}

static void test_epoll_sleeper_woken(void)
{
	struct loop *l = &loops[0];
	int cpu = attach_cpus[0];
	struct xc_stats before, after;
	struct where w;

	start_loop(l, cpu, LOOP_EPOLL);
	/*
	 * in_epoll: sleep_begin announced the sleep (SLEEPING_FD), and the loop is
	 * in epoll_wait or on its way there; nothing else sends to it. A call now
	 * must kick the eventfd, which alone ends that epoll_wait.
	 */
	WAIT_UNTIL(atomic_load(&l->in_epoll));
	CHECK_RET(xc_stats_get(cpu, &before), 0);
	memset(&w, 0, sizeof(w));
	CHECK_RET(xc_call_single(cpu, note_where, &w, XC_WAIT), 0);
	check_where(&w, l, 1);
	CHECK_RET(xc_stats_get(cpu, &after), 0);
	xc_stats_delta(&after, &before, &after);
	CHECK(after.kicks_sent >= 1);
	CHECK(after.wakeups >= 1);
	stop_loop(l);
}

/* --- exactly once, under stress --- */

#define STRESS_SENDERS 2
static long stress_ops;
static _Atomic(uint8_t) *ran;		/* per id: runs */
static _Atomic int *ran_cpu;		/* per id: CPU it ran on */
static int *want_cpu;
static _Atomic long next_id, wrong_cpu;

static void hit(void *arg)
{
	long id = (long)arg;

	atomic_fetch_add(&ran[id], 1);
	atomic_store(&ran_cpu[id], xc_this_cpu());
	if (xc_this_cpu() != want_cpu[id])
		atomic_fetch_add(&wrong_cpu, 1);
}

static void send_one(unsigned *seed)
{
	long id = atomic_fetch_add(&next_id, 1);
	int cpu = cpus[rand_r(seed) % ncpu];
	unsigned flags = rand_r(seed) % 2 ? XC_WAIT : 0;
	int r;

	want_cpu[id] = cpu;
	while ((r = xc_call_single(cpu, hit, (void *)id, flags)) == -ENOMEM)
		;
	CHECK_RET(r, 0);
}

static void *stress_sender(void *arg)
{
	unsigned seed = (unsigned)(long)arg;

	for (long i = 0; i < stress_ops; i++)
		send_one(&seed);
	return NULL;
}

/* a work item on a libxcall worker that sends too: workers send while serving their own calls */
static _Atomic long worker_sent;
static void worker_sender(void *arg)
{
	unsigned seed = 99;

	for (long i = 0; i < stress_ops / 4; i++) {
		send_one(&seed);
		atomic_fetch_add(&worker_sent, 1);
	}
}

static void test_stress(void)
{
	pthread_t t[STRESS_SENDERS];
	long total;
	struct xc_work w = { .fn = worker_sender };
	struct xc_stats st;
	long sleeps = 0;

	stress_ops = t_env_long("XCALL_STRESS_OPS", 1000000) / 20;
	if (stress_ops < 2000)
		stress_ops = 2000;
	total = stress_ops * STRESS_SENDERS + stress_ops / 4 + 1;
	ran = calloc((size_t)total, sizeof(*ran));
	ran_cpu = calloc((size_t)total, sizeof(*ran_cpu));
	want_cpu = calloc((size_t)total, sizeof(*want_cpu));
	CHECK(ran && ran_cpu && want_cpu);
	atomic_store(&next_id, 0);
	for (int i = 0; i < nattach; i++)
		start_loop(&loops[i], attach_cpus[i], LOOP_EPOLL);
	if (nown)
		CHECK_RET(xc_queue_work(own_cpus[0], &w), 0);
	for (long i = 0; i < STRESS_SENDERS; i++)
		CHECK(pthread_create(&t[i], NULL, stress_sender, (void *)(i + 1)) == 0);
	for (int i = 0; i < STRESS_SENDERS; i++)
		CHECK(pthread_join(t[i], NULL) == 0);
	if (nown)
		WAIT_UNTIL(!xc_work_pending(&w) && atomic_load(&worker_sent) == stress_ops / 4);
	/* a waiting call to each CPU: everything sent before it has run there (FIFO per sender aside, the drain below settles it) */
	for (int i = 0; i < nattach; i++) {
		CHECK_RET(xc_stats_get(attach_cpus[i], &st), 0);
		sleeps += (long)st.sleeps;
		stop_loop(&loops[i]);	/* detach drains what is queued */
	}
	CHECK_RET(xc_exit(), 0);	/* drains the others */
	total = atomic_load(&next_id);
	for (long id = 0; id < total; id++) {
		if (atomic_load(&ran[id]) != 1) {
			fprintf(stderr, "call %ld to CPU %d ran %d times\n", id, want_cpu[id],
				atomic_load(&ran[id]));
			CHECK(0);
		}
	}
	CHECK_RET(atomic_load(&wrong_cpu), 0);
	printf("stress: %ld calls, each ran once on its CPU; %d attached CPUs slept %ld times in epoll\n",
	       total, nattach, sleeps);
	free(ran);
	free(ran_cpu);
	free(want_cpu);
}

/* --- urgent --- */

static void test_urgent_busy(void)
{
	struct loop *l = &loops[0];
	int cpu = attach_cpus[0];
	struct where w;
	struct xc_stats st;

	start_loop(l, cpu, LOOP_BUSY);
	atomic_store(&l->busy_go, 1);
	WAIT_UNTIL(atomic_load(&l->busy_in));	/* past its last xc_poll(): only the signal gets in */
	memset(&w, 0, sizeof(w));
	CHECK_RET(xc_call_single(cpu, note_where, &w, XC_WAIT | XC_URGENT), 0);
	check_where(&w, l, 1);
	CHECK_RET(xc_stats_get(cpu, &st), 0);
	CHECK(st.signals_sent >= 1);
	CHECK(st.urgent_calls >= 1);
	stop_loop(l);
}

/* --- hotplug, detach --- */

static void test_offline_online(void)
{
	struct loop *l = &loops[0];
	int cpu = attach_cpus[0];
	struct where w;

	start_loop(l, cpu, LOOP_EPOLL);
	WAIT_UNTIL(atomic_load(&l->in_epoll));	/* asleep in epoll: the request must kick it */
	CHECK_RET(xc_cpu_offline(cpu), 0);
	CHECK(!t_online(cpu));
	CHECK_RET(xc_call_single(cpu, noop, NULL, 0), -ENXIO);
	CHECK_RET(xc_cpu_online(cpu), 0);
	CHECK(t_online(cpu));
	memset(&w, 0, sizeof(w));
	CHECK_RET(xc_call_single(cpu, note_where, &w, XC_WAIT), 0);
	check_where(&w, l, 1);
	stop_loop(l);
}

/* A loop that stops polling, gets nowait calls queued, then detaches: they all run, once. */
struct detach_loop {
	int cpu;
	_Atomic int phase;	/* 1 attached and idle, 2 may detach, 3 detached */
	_Atomic int detach_ret;
};

static void *detach_main(void *arg)
{
	struct detach_loop *d = arg;

	pin(d->cpu);
	CHECK_RET(xc_worker_attach(d->cpu), 0);
	atomic_store(&d->phase, 1);
	WAIT_UNTIL(atomic_load(&d->phase) == 2);
	atomic_store(&d->detach_ret, xc_worker_detach());
	atomic_store(&d->phase, 3);
	CHECK_RET(xc_worker_fd(), -EINVAL);
	CHECK_RET(xc_poll(), -ENXIO);
	return NULL;
}

static void *exit_attached_main(void *arg)
{
	int cpu = *(int *)arg;

	pin(cpu);
	CHECK_RET(xc_worker_attach(cpu), 0);
	return NULL;	/* exits attached: the key destructor detaches it */
}

static void test_detach(void)
{
	struct detach_loop d = { .cpu = attach_cpus[0] };
	pthread_t t;
	int n = 200;	/* fewer than a ring holds: a full ring would wait for the poller */

	CHECK(pthread_create(&t, NULL, detach_main, &d) == 0);
	WAIT_UNTIL(atomic_load(&d.phase) == 1);
	CHECK(t_online(d.cpu));
	CHECK_RET(xc_exit(), -EBUSY);		/* attached: nothing stopped */
	atomic_store(&queued_ran, 0);
	for (int i = 0; i < n; i++)
		for (int r; (r = xc_call_single(d.cpu, count_ran, NULL, 0)) == -ENOMEM; )
			;
	CHECK(atomic_load(&queued_ran) == 0);	/* nobody polls that CPU */
	atomic_store(&d.phase, 2);
	CHECK(pthread_join(t, NULL) == 0);
	CHECK_RET(atomic_load(&d.detach_ret), 0);
	CHECK_RET(atomic_load(&queued_ran), n);	/* the detach ran every one */
	CHECK(!t_online(d.cpu));
	CHECK_RET(xc_call_single(d.cpu, count_ran, NULL, 0), -ENXIO);
	CHECK_RET(xc_cpu_online(d.cpu), -EINVAL);	/* no thread: it comes online with one */

	/* a thread that exits attached is detached */
	CHECK(pthread_create(&t, NULL, exit_attached_main, &d.cpu) == 0);
	CHECK(pthread_join(t, NULL) == 0);
	CHECK(!t_online(d.cpu));

	/* user offline before attach: stays offline until xc_cpu_online */
	CHECK_RET(xc_cpu_offline(d.cpu), 0);
	start_loop(&loops[0], d.cpu, LOOP_POLL);
	CHECK(!t_online(d.cpu));
	CHECK_RET(xc_cpu_online(d.cpu), 0);
	CHECK(t_online(d.cpu));
	CHECK_RET(xc_call_single(d.cpu, noop, NULL, XC_WAIT), 0);
	stop_loop(&loops[0]);
}

/* --- bad uses --- */

static _Atomic int from_worker_ret;
static void attach_from_worker(void *arg)
{
	atomic_store(&from_worker_ret, xc_worker_attach(*(int *)arg));
}

static _Atomic int in_call_ret;
static void detach_in_call(void *arg)
{
	atomic_store(&in_call_ret, xc_worker_detach());
}

static void *second_attacher(void *arg)
{
	int cpu = *(int *)arg;

	pin(cpu);
	return (void *)(long)xc_worker_attach(cpu);
}

/*
 * The calling thread on the CPUs that are libxcall's own: off the attached
 * CPUs, where a loop that polls would make it wait for the scheduler's turn
 * (a 4 ms slice per call, far more under emulation).
 */
static void unpin(void)
{
	cpu_set_t own;

	CPU_ZERO(&own);
	for (int i = 0; i < (nown ? nown : ncpu); i++)
		CPU_SET(nown ? own_cpus[i] : cpus[i], &own);
	CHECK(pthread_setaffinity_np(pthread_self(), sizeof(own), &own) == 0);
}

static _Atomic int hook_fail, hook_tid;

static int init_hook(int cpu, void *arg)
{
	if (cpu != attach_cpus[0])
		return 0;
	atomic_store(&hook_tid, gettid_());
	return atomic_load(&hook_fail) ? -EPERM : 0;
}

static bool reported(const char *what);

static void test_hook(void)
{
	int cpu = attach_cpus[0];

	pin(cpu);
	atomic_store(&hook_fail, 1);
	CHECK_RET(xc_worker_attach(cpu), -EPERM);
	CHECK_RET(atomic_load(&hook_tid), gettid_());
	CHECK(reported("cpu_init failed on the attaching thread"));
	CHECK(!t_online(cpu));
	CHECK_RET(xc_worker_fd(), -EINVAL);
	atomic_store(&hook_fail, 0);
	atomic_store(&hook_tid, 0);
	CHECK_RET(xc_worker_attach(cpu), 0);
	CHECK_RET(atomic_load(&hook_tid), gettid_());
	CHECK(t_online(cpu));
	CHECK_RET(xc_worker_detach(), 0);
	unpin();
}

static void test_errors(void)
{
	int cpu = attach_cpus[0];
	pthread_t t;
	void *ret;
	cpu_set_t all;

	/* not attached */
	CHECK_RET(xc_worker_detach(), -EINVAL);
	CHECK_RET(xc_worker_fd(), -EINVAL);
	CHECK_RET(xc_worker_sleep_begin(), -EINVAL);
	CHECK_RET(xc_worker_sleep_end(), -EINVAL);
	/* bad CPUs */
	CHECK_RET(xc_worker_attach(-1), -ENXIO);
	CHECK_RET(xc_worker_attach(CPU_SETSIZE), -ENXIO);
	if (nown) {
		pin(own_cpus[0]);
		CHECK_RET(xc_worker_attach(own_cpus[0]), -EINVAL);	/* not set aside for attaching */
	}
	/* pinned elsewhere, or not pinned at all */
	if (nown) {
		pin(own_cpus[0]);
		CHECK_RET(xc_worker_attach(cpu), -EINVAL);
	}
	CPU_ZERO(&all);
	for (int i = 0; i < ncpu; i++)
		CPU_SET(cpus[i], &all);
	CHECK(pthread_setaffinity_np(pthread_self(), sizeof(all), &all) == 0);
	if (ncpu > 1)
		CHECK_RET(xc_worker_attach(cpu), -EINVAL);
	/* from a libxcall worker */
	if (nown) {
		CHECK_RET(xc_call_single(own_cpus[0], attach_from_worker, &cpu, XC_WAIT), 0);
		CHECK_RET(atomic_load(&from_worker_ret), -EBUSY);
	}
	/* twice, from the same thread; a second thread on a CPU taken; detach inside a call */
	start_loop(&loops[0], cpu, LOOP_POLL);
	CHECK(pthread_create(&t, NULL, second_attacher, &cpu) == 0);
	CHECK(pthread_join(t, &ret) == 0);
	CHECK_RET((long)ret, -EBUSY);
	CHECK_RET(xc_call_single(cpu, detach_in_call, NULL, XC_WAIT), 0);
	CHECK_RET(atomic_load(&in_call_ret), -EDEADLK);
	stop_loop(&loops[0]);
	pin(cpu);
	CHECK_RET(xc_worker_attach(cpu), 0);
	CHECK_RET(xc_worker_attach(cpu), -EBUSY);
	CHECK_RET(xc_exit(), -EDEADLK);		/* from an attached thread */
	CHECK_RET(xc_worker_detach(), 0);
	CHECK_RET(xc_worker_detach(), -EINVAL);
	unpin();
}

/* --- the OS takes the CPU --- */

static char reports[8192];
static pthread_mutex_t reports_lock = PTHREAD_MUTEX_INITIALIZER;

static void capture(void *ctx, const char *line)
{
	pthread_mutex_lock(&reports_lock);
	strncat(reports, line, sizeof(reports) - strlen(reports) - 2);
	strcat(reports, "\n");
	pthread_mutex_unlock(&reports_lock);
}

static bool has_report(const char *what)
{
	bool found;

	pthread_mutex_lock(&reports_lock);
	found = strstr(reports, what) != NULL;
	pthread_mutex_unlock(&reports_lock);
	return found;
}

/* A report comes after the CPU went offline: wait (bounded) for it, then say what came instead. */
static bool reported(const char *what)
{
	for (int i = 0; i < 5000 && !has_report(what); i++)
		t_sleep_ms(1);
	if (has_report(what))
		return true;
	pthread_mutex_lock(&reports_lock);
	fprintf(stderr, "attach: no report says \"%s\"; the reports:\n%s", what, reports);
	pthread_mutex_unlock(&reports_lock);
	return false;
}

static void set_affinity(int tid, int a, int b)
{
	cpu_set_t m;

	CPU_ZERO(&m);
	CPU_SET(a, &m);
	if (b >= 0)
		CPU_SET(b, &m);
	CHECK(sched_setaffinity(tid, sizeof(m), &m) == 0);
}

static void test_os_takes_cpu(void)
{
	struct loop *l = &loops[0];
	int cpu = attach_cpus[0];
	cpu_set_t m;
	struct where w;

	if (!nown)
		return;
	start_loop(l, cpu, LOOP_POLL);
	/* moved elsewhere from outside */
	set_affinity(atomic_load(&l->tid), own_cpus[0], -1);
	WAIT_UNTIL(!t_online(cpu));
	CHECK(reported("the worker's affinity was changed from outside"));
	CHECK(reported("libxcall never moves it"));
	CHECK_RET(xc_call_single(cpu, noop, NULL, XC_WAIT), -ENXIO);
	/* widened back: a lost pin, which libxcall leaves to the application */
	set_affinity(atomic_load(&l->tid), own_cpus[0], cpu);
	t_sleep_ms(150);		/* three watch periods */
	CHECK(!t_online(cpu));
	CHECK(sched_getaffinity(atomic_load(&l->tid), sizeof(m), &m) == 0);
	CHECK(CPU_COUNT(&m) == 2 && CPU_ISSET(cpu, &m));
	/* pinned there again by the application: back */
	set_affinity(atomic_load(&l->tid), cpu, -1);
	WAIT_UNTIL(t_online(cpu));
	CHECK(reported("back ("));
	memset(&w, 0, sizeof(w));
	CHECK_RET(xc_call_single(cpu, note_where, &w, XC_WAIT), 0);
	check_where(&w, l, 1);
	stop_loop(l);
}

static int os_down = -1;	/* the CPU this test took offline through sysfs, not yet put back */

static void os_put_back(void)
{
	if (os_down >= 0 && t_sysfs_cpu_online(os_down, 1) == 0) {
		printf("attach: CPU %d put back online\n", os_down);
		os_down = -1;
	}
}

static void on_signal(int sig)
{
	os_put_back();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void test_os_hotplug(void)
{
	struct loop *l = &loops[0];
	int cpu = attach_cpus[0];
	char path[96];
	cpu_set_t m;
	struct where w;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	if (t_env_long("XCALL_GUEST", 0) != 1 || geteuid() != 0 || access(path, W_OK)) {
		printf("attach: the OS hotplug part runs only in a guest, as root, with CPU %d hot-pluggable\n", cpu);
		return;
	}
	atexit(os_put_back);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	start_loop(l, cpu, LOOP_POLL);
	CHECK(t_sysfs_cpu_online(cpu, 0) == 0);
	os_down = cpu;
	WAIT_UNTIL(!t_online(cpu));
	CHECK(reported("the OS took it offline"));
	CHECK_RET(xc_call_single(cpu, noop, NULL, XC_WAIT), -ENXIO);
	os_put_back();
	CHECK_RET(os_down, -1);
	/* the kernel widened the thread's mask when the CPU went: libxcall leaves it so */
	t_sleep_ms(150);
	CHECK(!t_online(cpu));
	CHECK(sched_getaffinity(atomic_load(&l->tid), sizeof(m), &m) == 0);
	CHECK(CPU_COUNT(&m) > 1);
	set_affinity(atomic_load(&l->tid), cpu, -1);
	WAIT_UNTIL(t_online(cpu));
	memset(&w, 0, sizeof(w));
	CHECK_RET(xc_call_single(cpu, note_where, &w, XC_WAIT), 0);
	check_where(&w, l, 1);
	stop_loop(l);
	printf("attach: the OS took CPU %d offline and back; offline in libxcall, back once pinned there again\n", cpu);
}

static void init_attached(void)
{
	char list[1024];
	cpu_set_t set;
	struct xc_opts o = { .attach = list, .report = capture, .cpu_init = init_hook };

	CPU_ZERO(&set);
	for (int i = 0; i < nattach; i++)
		CPU_SET(attach_cpus[i], &set);
	CHECK(xc_cpulist_format(&set, list, sizeof(list)) > 0);
	CHECK_RET(xc_init(&o), 0);
}

static const char *step = "start";	/* the part running now, for a timeout */

#define STEP(call) do { step = #call; call; } while (0)

static void timed_out(int sig)
{
	/* not async-signal-safe, and need not be: the test ends here */
	struct loop *l = &loops[0];
	struct xc_stats st = { 0 };

	fprintf(stderr, "attach: timed out in %s: a call to an attached loop never completed\n", step);
	fprintf(stderr, "%s", reports);
	xc_stats_get(l->cpu, &st);
	fprintf(stderr, "attach: loop on CPU %d: %ld polls, %ld sleeps, %ld refused, in epoll_wait %d; "
		"CPU %d: %llu calls, %llu kicks sent, %llu elided, %llu sleeps, %llu wakeups, online %d\n",
		l->cpu, atomic_load(&l->polls), atomic_load(&l->sleeps), atomic_load(&l->refusals),
		atomic_load(&l->in_epoll), l->cpu, (unsigned long long)st.calls,
		(unsigned long long)st.kicks_sent, (unsigned long long)st.kicks_elided,
		(unsigned long long)st.sleeps, (unsigned long long)st.wakeups, t_online(l->cpu));
	t_dump(NULL);
	os_put_back();
	_exit(T_FAIL);
}

int main(void)
{
	cpu_set_t start;
	struct xc_opts bad = { 0 };
	char list[32];

	CHECK(sched_getaffinity(0, sizeof(start), &start) == 0);
	for (int c = 0; c < CPU_SETSIZE && ncpu < MAXC; c++)
		if (CPU_ISSET(c, &start))
			cpus[ncpu++] = c;
	if (ncpu < 2)
		t_skip("needs 2 CPUs");
	t_dump_prepare();
	signal(SIGALRM, timed_out);
	alarm((unsigned)t_env_long("XCALL_ATTACH_TIMEOUT", 240));
	/* every other CPU attached, the first libxcall's own */
	for (int i = 0; i < ncpu; i++) {
		if (i % 2)
			attach_cpus[nattach++] = cpus[i];
		else
			own_cpus[nown++] = cpus[i];
	}

	/* an attach set outside the CPUs */
	snprintf(list, sizeof(list), "%d", cpus[ncpu - 1]);
	snprintf(list + 16, 16, "%d", cpus[0]);
	bad.cpus = list + 16;
	bad.attach = list;
	CHECK_RET(xc_init(&bad), -EINVAL);
	bad.attach = "nonsense";
	CHECK_RET(xc_init(&bad), -EINVAL);

	init_attached();
	unpin();
	for (int i = 0; i < nattach; i++)
		CHECK(!t_online(attach_cpus[i]));
	STEP(test_errors());
	STEP(test_hook());
	STEP(test_calls_run_on_thread(LOOP_POLL));
	STEP(test_calls_run_on_thread(LOOP_EPOLL));
	STEP(test_call_all());
	STEP(test_polling_elides());
	STEP(test_epoll_sleeper_woken());
	STEP(test_urgent_busy());
	STEP(test_offline_online());
	STEP(test_os_takes_cpu());
	STEP(test_os_hotplug());
	STEP(test_detach());
	CHECK_RET(xc_exit(), 0);

	init_attached();
	STEP(test_stress());			/* ends with xc_exit */
	printf("attach: all checks passed\n");
	return T_PASS;
}
