/* SPDX-License-Identifier: MIT */
/*
 * dump.h - what a hung test leaves behind. When its watchdog fires (alarm),
 * the test writes to stderr, before it dies:
 *   - what the test was doing (its own lines, an @extra callback);
 *   - every CPU of the runtime as libxcall holds it: the idle word, whether
 *     callq, urgentq and workq are empty, closed or hold what, the slot's
 *     word, what the worker runs, its held, dropped and look lists;
 *   - every call ring ever made to each of those CPUs (xc_rings_of): owned,
 *     state, head, tail, what the worker saw of them, held, dropped, looked,
 *     unfenced, where it really is (callq, held or dropped list, or none:
 *     a linked ring on none of them is stranded), and its untaken entries;
 *   - every thread's stack: by gdb where there is one; else each task of
 *     /proc/self/task is sent SIGXFSZ, whose handler writes its backtrace(3)
 *     and the rings its thread owns. Those stacks are addresses: on the host,
 *     tests/stacks.sh LOG BINARY names them (a guest's programs are the
 *     static builds in build/guest-static/tests/).
 * then dies of SIGALRM, as the alarm's default action would have it.
 *
 * The dump reads libxcall's words from outside while its threads run on:
 * each word is a snapshot (relaxed loads), and lists are walked with a
 * bound. It runs in the SIGALRM handler, so it formats into buffers on its
 * stack and writes them with write(2); the handler runs once.
 *
 *   t_dump_on_alarm(extra)   SIGALRM dumps, then kills the process; a
 *                            WAIT_UNTIL that gives up (test.h) dumps too
 *   t_dump(extra)            the dump alone, for a test's own handler
 *                            (t_dump_prepare() first)
 */
#ifndef XC_TEST_DUMP_H
#define XC_TEST_DUMP_H

#include "base/internal.h"
#include "proto/ring.h"

#include <elf.h>
#include <execinfo.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * The stack signal: one that libxcall's workers leave unblocked (thread.c,
 * xc_signals_async: they block all but those a thread raises on itself and
 * the urgent one) and that the tests never raise. Its handler is the dump's
 * from the dump on: the process dies next.
 */
#define T_DUMP_STACK_SIG  SIGXFSZ
#define T_DUMP_FRAMES	  64
#define T_DUMP_LIST_MAX	  64		/* links walked per list: a list changing under us must end */
#define T_DUMP_ENTRIES	  8		/* untaken entries shown per ring */

static inline void t_dumpf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void t_dumpf(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 1)
		n = (int)sizeof(buf) - 1;
	if (n > 0)
		(void)!write(2, buf, (size_t)n);
}

/* A fixed buffer filled piece by piece, written in one write(2): one line from one thread. */
struct t_dump_line {
	char buf[3072];
	size_t len;
};

static inline void t_line_add(struct t_dump_line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void t_line_add(struct t_dump_line *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (l->len >= sizeof(l->buf) - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(l->buf + l->len, sizeof(l->buf) - l->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		l->len += (size_t)n < sizeof(l->buf) - l->len ? (size_t)n : sizeof(l->buf) - 1 - l->len;
}

static inline void t_line_end(struct t_dump_line *l)
{
	if (l->len >= sizeof(l->buf) - 1)
		l->len = sizeof(l->buf) - 2;
	l->buf[l->len++] = '\n';
	(void)!write(2, l->buf, l->len);
	l->len = 0;
}

static inline const char *t_dump_idle_name(uint32_t idle)
{
	static const char *const names[] = { "RUNNING", "POLLING", "SLEEPING", "WAKING", "WOKENUP", "SLEEPING_FD" };

	return idle < sizeof(names) / sizeof(names[0]) ? names[idle] : "?";
}

/* A queue head: empty, closed, or its first links. */
static inline void t_dump_llist(struct t_dump_line *l, const char *name, _Atomic(struct xc__link *) *q)
{
	/* relaxed, here and in all the dump: a snapshot of words others go on writing */
	struct xc__link *h = atomic_load_explicit(q, memory_order_relaxed);
	int n = 0;

	if (!h || h == XC_LLIST_CLOSED) {
		t_line_add(l, " %s=%s", name, h ? "closed" : "empty");
		return;
	}
	t_line_add(l, " %s=[", name);
	for (; h && h != XC_LLIST_CLOSED && n < T_DUMP_LIST_MAX; h = h->next, n++)
		t_line_add(l, "%s%p", n ? " " : "", (void *)h);
	t_line_add(l, "%s]", h && h != XC_LLIST_CLOSED ? " ..." : "");
}

/* Whether ring @r's link is on @c's callq now. */
static inline bool t_dump_on_callq(struct xc_cpu *c, struct xc_ring *r)
{
	struct xc__link *h = atomic_load_explicit(&c->mbox.callq, memory_order_relaxed);

	for (int n = 0; h && h != XC_LLIST_CLOSED && n < T_DUMP_LIST_MAX; h = h->next, n++)
		if (h == &r->link)
			return true;
	return false;
}

static inline bool t_dump_on_list(struct xc_ring *list, struct xc_ring *r, bool dropped)
{
	for (int n = 0; list && n < T_DUMP_LIST_MAX; list = dropped ? list->dropped_next : list->held_next, n++)
		if (list == r)
			return true;
	return false;
}

static inline const char *t_dump_fn_name(xc_func_t fn)
{
	if (fn == NULL)
		return "NULL";
	if (fn == XC_RING_WAITED)
		return "WAITED";
	if (fn == XC_RING_ASYNC)
		return "ASYNC";
	if (fn == XC_RING_TAKEN)
		return "TAKEN";
	if (fn == XC_RING_RETRACTED)
		return "RETRACTED";
	if (fn == XC_RING_REFUSED)
		return "REFUSED";
	return NULL;
}

static inline void t_dump_ring(struct xc_cpu *c, struct xc_ring *r, int idx)
{
	struct t_dump_line l = { .len = 0 };
	uint32_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
	uint32_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	uint32_t state = atomic_load_explicit(&r->state, memory_order_relaxed);
	bool on_callq = t_dump_on_callq(c, r);
	bool on_held = t_dump_on_list(c->worker.rings_held, r, false);
	bool on_dropped = t_dump_on_list(c->worker.rings_dropped, r, true);

	t_line_add(&l, "  ring %d %p: owned=%d state=%s head=%u tail=%u untaken=%u head_seen=%u tail_seen=%u "
		   "held=%d dropped=%d looked=%u unfenced=%u rode=%llu link.next=%p; on:%s%s%s%s",
		   idx, (void *)r, atomic_load_explicit(&r->owned, memory_order_relaxed),
		   state == XC_RING_IDLE ? "IDLE" : state == XC_RING_LINKED ? "LINKED" : "?", head, tail,
		   head - tail, r->head_seen, r->tail_seen, r->held, r->dropped, r->looked,
		   atomic_load_explicit(&r->unfenced, memory_order_relaxed),
		   (unsigned long long)atomic_load_explicit(&r->rode, memory_order_relaxed),
		   (void *)r->link.next, on_callq ? " callq" : "", on_held ? " held" : "",
		   on_dropped ? " dropped" : "", !on_callq && !on_held && !on_dropped ? " none" : "");
	if (state == XC_RING_LINKED && !on_callq && !on_held && !on_dropped)
		t_line_add(&l, " <- LINKED ON NO LIST: stranded");
	else if (head != tail && state == XC_RING_IDLE)
		t_line_add(&l, " <- IDLE WITH CALLS (an owner still ringing, or stranded)");
	for (uint32_t t = tail, n = 0; t != head && n < T_DUMP_ENTRIES; t++, n++) {
		struct xc_ring_entry *e = &r->e[t & (r->size - 1)];
		xc_func_t fn = atomic_load_explicit(&e->fn, memory_order_relaxed);
		const char *m = t_dump_fn_name(fn);

		if (m)
			t_line_add(&l, "%s [%u] %s(%p)", n ? "" : ";", t, m, e->arg);
		else
			t_line_add(&l, "%s [%u] fn %p(%p)", n ? "" : ";", t, (void *)fn, e->arg);
		if (fn == XC_RING_WAITED)
			t_line_add(&l, "=fn %p", (void *)((struct xc_ring_waited *)e->arg)->fn);
	}
	if (head - tail > T_DUMP_ENTRIES)
		t_line_add(&l, " ...");
	t_line_end(&l);
}

static inline void t_dump_ring_list(struct t_dump_line *l, const char *name, struct xc_ring *r, bool dropped)
{
	int n = 0;

	t_line_add(l, " %s=[", name);
	for (; r && n < T_DUMP_LIST_MAX; r = dropped ? r->dropped_next : r->held_next, n++)
		t_line_add(l, "%s%p", n ? " " : "", (void *)r);
	t_line_add(l, "%s]", r ? " ..." : "");
}

/* Every CPU of the runtime, and every ring made to it. */
static inline void t_dump_cpus(void)
{
	t_dumpf("dump: runtime state %d, generation %u, %d CPUs, ring_fast_cpus %d, slot_fast_cpus %d\n",
		atomic_load_explicit(&xc_rt.state, memory_order_relaxed), xc_rt.generation, xc_rt.nr_cpus,
		atomic_load_explicit(&xc_rt.ring_fast_cpus, memory_order_relaxed),
		atomic_load_explicit(&xc_rt.slot_fast_cpus, memory_order_relaxed));
	for (int i = 0; i < xc_rt.nr_cpus && i < XC_MAX_CPUS; i++) {
		int cpu = xc_rt.cpu_list[i], idx = 0;
		struct xc_cpu *c = &xc_cpus[cpu];
		struct t_dump_line l = { .len = 0 };
		uint32_t idle = atomic_load_explicit(&c->mbox.idle, memory_order_relaxed);
		uint32_t slot = atomic_load_explicit(&c->mbox.slot.done.word, memory_order_relaxed);

		t_line_add(&l, "cpu %d: tid %d online=%d ctl=%u park=%u taken=%d attached=%d idle=%s "
			   "slot=0x%x%s%s fn %p", cpu, c->life.tid,
			   atomic_load_explicit(&c->life.online, memory_order_relaxed),
			   atomic_load_explicit(&c->life.ctl, memory_order_relaxed),
			   atomic_load_explicit(&c->life.park, memory_order_relaxed),
			   atomic_load_explicit(&c->life.taken, memory_order_relaxed), c->life.attached,
			   t_dump_idle_name(idle), slot, slot & XC_SLOT_PUBLISHED ? " PUBLISHED" : "",
			   slot & XC_SLOT_CLOSED ? " CLOSED" : "",
			   (void *)atomic_load_explicit(&c->mbox.slot.fn, memory_order_relaxed));
		t_dump_llist(&l, "callq", &c->mbox.callq);
		t_dump_llist(&l, "urgentq", &c->mbox.urgentq);
		t_dump_llist(&l, "workq", &c->mbox.workq);
		t_line_add(&l, " work_head=%p cur_kind=%d cur_fn=%p cur_seq=%u calls=%llu sleeps=%llu "
			   "wakeups=%llu barriers=%llu kicks_sent=%llu kicks_elided=%llu coalesced=%llu "
			   "serve_floor=%#lx rings_look=%p",
			   (void *)c->worker.work_head, atomic_load_explicit(&c->worker.cur_kind, memory_order_relaxed),
			   atomic_load_explicit(&c->worker.cur_fn, memory_order_relaxed),
			   atomic_load_explicit(&c->worker.cur_seq, memory_order_relaxed),
			   (unsigned long long)atomic_load_explicit(&c->worker.calls, memory_order_relaxed),
			   (unsigned long long)atomic_load_explicit(&c->worker.sleeps, memory_order_relaxed),
			   (unsigned long long)atomic_load_explicit(&c->worker.wakeups, memory_order_relaxed),
			   (unsigned long long)atomic_load_explicit(&c->worker.barriers, memory_order_relaxed),
			   (unsigned long long)atomic_load_explicit(&c->sent.kicks_sent, memory_order_relaxed),
			   (unsigned long long)atomic_load_explicit(&c->sent.kicks_elided, memory_order_relaxed),
			   (unsigned long long)atomic_load_explicit(&c->sent.kicks_coalesced, memory_order_relaxed),
			   (unsigned long)c->worker.serve_floor, (void *)c->worker.rings_look);
		t_dump_ring_list(&l, "rings_held", c->worker.rings_held, false);
		t_dump_ring_list(&l, "rings_dropped", c->worker.rings_dropped, true);
		t_line_end(&l);
		for (struct xc_ring *r = xc_rings_of(cpu); r; r = r->next)
			t_dump_ring(c, r, idx++);
	}
}

/* ---- stacks ---- */

static _Atomic int t_dump_answered;	/* the tid whose stack handler has written it */

/*
 * The executable's load bias: its addresses as the file names them, for
 * addr2line. A static executable's is 0; a PIE's is where its ELF header
 * lies (its first address is 0 in the file).
 */
static inline uintptr_t t_dump_bias(void)
{
	extern const char __executable_start[];
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)__executable_start;

	return eh->e_type == ET_DYN ? (uintptr_t)__executable_start : 0;
}

/* This thread's stack, and the rings it owns, in one line. */
static inline void t_dump_own_stack(void)
{
	struct t_dump_line l = { .len = 0 };
	void *pc[T_DUMP_FRAMES];
	int n = backtrace(pc, T_DUMP_FRAMES);
	uintptr_t bias = t_dump_bias();

	t_line_add(&l, "stack of thread %ld", (long)syscall(SYS_gettid));
	if (xc_self)
		t_line_add(&l, " (CPU %d's %s)", xc_self->life.cpu, xc_self->life.attached ? "attached thread" : "worker");
	t_line_add(&l, ":");
	for (int i = 0; i < n; i++)
		t_line_add(&l, " %#lx", (unsigned long)((uintptr_t)pc[i] - bias));
	for (int set = 0; set < 2; set++) {
		struct xc_ring_table *t = xc_my_rings[set];

		if (!t)
			continue;
		t_line_add(&l, "; rings%s (generation %u):", set ? " (urgent)" : "", t->generation);
		for (int cpu = 0; cpu < XC_MAX_CPUS; cpu++)
			if (t->ring[cpu])
				t_line_add(&l, " %d:%p", cpu, (void *)t->ring[cpu]);
	}
	t_line_end(&l);
}

static inline void t_dump_stack_handler(int sig)
{
	int saved = errno;

	(void)sig;
	t_dump_own_stack();
	atomic_store(&t_dump_answered, (int)syscall(SYS_gettid));
	errno = saved;
}

/* gdb's stacks of every thread; false if there is no gdb or it failed. */
static inline bool t_dump_gdb(void)
{
	char pid[16];
	pid_t g;
	int status = -1;

	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	/* ptrace_scope 1 lets only ancestors attach: let our own child in */
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	/* vfork: fork() would run the atfork handlers, which take locks a stopped thread may hold */
	g = vfork();
	if (g < 0)
		return false;
	if (g == 0) {
		int null = open("/dev/null", O_RDONLY);

		if (null >= 0)
			dup2(null, 0);
		dup2(2, 1);
		execlp("gdb", "gdb", "-nx", "-batch", "-p", pid, "-ex", "info threads",
		       "-ex", "thread apply all bt", (char *)NULL);
		_exit(127);
	}
	/* 120 s at most: attaching to a few dozen threads on a loaded machine takes seconds */
	for (int i = 0; i < 1200 && waitpid(g, &status, WNOHANG) == 0; i++) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };

		nanosleep(&ts, NULL);
		status = -1;
	}
	if (status == -1) {
		kill(g, SIGKILL);
		waitpid(g, &status, 0);
		t_dumpf("dump: gdb took over 120 s; killed\n");
		return false;
	}
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* Each task's own stack, by a signal to it; this thread's directly. */
static inline void t_dump_stacks_by_signal(void)
{
	struct sigaction sa = { .sa_handler = t_dump_stack_handler, .sa_flags = SA_RESTART };
	long self = syscall(SYS_gettid);
	char dents[4096];
	int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY);
	long n;

	sigemptyset(&sa.sa_mask);
	sigaction(T_DUMP_STACK_SIG, &sa, NULL);
	t_dump_own_stack();
	if (fd < 0)
		return;
	while ((n = syscall(SYS_getdents64, fd, dents, sizeof(dents))) > 0) {
		for (long off = 0; off < n;) {
			struct { uint64_t ino; int64_t off; unsigned short reclen; unsigned char type; char name[]; }
				*d = (void *)(dents + off);
			long tid = atol(d->name);

			off += d->reclen;
			if (tid <= 0 || tid == self)
				continue;
			atomic_store(&t_dump_answered, 0);
			if (syscall(SYS_tgkill, getpid(), tid, T_DUMP_STACK_SIG))
				continue;	/* gone */
			/* 5 s each at most: a thread that blocks the signal never answers */
			for (int i = 0; i < 5000 && atomic_load(&t_dump_answered) != tid; i++) {
				struct timespec ts = { 0, 1000 * 1000 };

				nanosleep(&ts, NULL);
			}
			if (atomic_load(&t_dump_answered) != tid)
				t_dumpf("stack of thread %ld: no answer in 5 s\n", tid);
		}
	}
	close(fd);
}

/* The whole dump: the test's own lines (@extra), the CPUs and rings, the stacks. */
static inline void t_dump(void (*extra)(void))
{
	t_dumpf("dump: ---- the watchdog fired in pid %d: what it was doing ----\n", (int)getpid());
	if (extra)
		extra();
	t_dump_cpus();
	/* the words above first: gdb stops the threads for a while, which changes nothing but time */
	if (!t_dump_gdb()) {
		t_dumpf("dump: no gdb stacks; each thread's own (name them with tests/stacks.sh LOG BINARY):\n");
		t_dump_stacks_by_signal();
	}
	t_dumpf("dump: ---- end ----\n");
}

static void (*t_dump_extra)(void);

static inline void t_dump_alarm_handler(int sig)
{
	t_dump(t_dump_extra);
	/* SA_RESETHAND: the default action now, once this handler returns */
	raise(sig);
}

static inline void t_dump_gave_up(void)
{
	t_dump(t_dump_extra);
}

/*
 * For a test whose own handler calls t_dump(): backtrace() called once
 * beforehand, so that the handler's calls load nothing (a dynamic build's
 * first one loads libgcc_s, through malloc).
 */
static inline void t_dump_prepare(void)
{
	void *pc[2];

	backtrace(pc, 2);
}

/*
 * Make SIGALRM dump before it kills: the test arms alarm() as before, and
 * a parent still sees its child die of SIGALRM.
 */
static inline void t_dump_on_alarm(void (*extra)(void))
{
	struct sigaction sa = { .sa_handler = t_dump_alarm_handler, .sa_flags = SA_RESETHAND };

	t_dump_prepare();
	t_dump_extra = extra;
	t_gave_up = t_dump_gave_up;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
}

#endif /* XC_TEST_DUMP_H */
