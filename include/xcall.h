/* SPDX-License-Identifier: MIT */
/*
 * xcall.h - cross-CPU function calls in user space.
 *
 * libxcall runs one worker thread pinned to each CPU of a set and lets any
 * thread make a function run on one, several, or all of those CPUs, the way
 * the kernel's smp_call_function_*() family does with IPIs.
 *
 * Return convention: every function returns 0 (or a documented non-negative
 * value) on success and a negative errno on failure. The library never prints
 * and never aborts: diagnostics go through the report hook (struct xc_opts).
 *
 * Contexts, as in the kernel:
 *   - worker context: code running on a worker (a call's function, a work
 *     item, a cpu_init hook). xc_this_cpu() >= 0 there.
 *   - call context: inside a call's function. It must not block for long;
 *     it may make further calls (waiting calls keep serving the worker's own
 *     queue while they wait), but must not take its own CPU offline or call
 *     xc_exit() (-EDEADLK).
 *   - task context: inside a work item. It may run long; it should call
 *     xc_poll() now and then so that calls to its CPU are not delayed.
 *   - any other thread: may make every call; waits sleep on a futex after a
 *     short spin.
 */
#ifndef XCALL_H
#define XCALL_H

/*
 * C11 and C++11 and later. cpu_set_t comes from <sched.h> as it is; the
 * CPU_SET() family of macros, like sched_setaffinity(), is a GNU extension of
 * glibc: a C program that uses them defines _GNU_SOURCE before its first
 * include (or with -D_GNU_SOURCE), as for any glibc program. g++ and clang++
 * define it by themselves.
 */
#include <sched.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
/*
 * The private fields that C updates atomically are plain in C++, of the same
 * size and alignment: C++ code never touches them (a test compares the
 * layouts in both languages).
 */
#define XC__ATOMIC(type) type
extern "C" {
#else
#include <stdatomic.h>
#include <stdbool.h>
#define XC__ATOMIC(type) _Atomic type
#endif

/* What libxcall.so exports: exactly the functions declared with it, below. */
#define XC_API __attribute__((visibility("default")))

#define XCALL_VERSION_MAJOR 0
#define XCALL_VERSION_MINOR 3

/*
 * The ABI grows without breaking programs built against an older libxcall.
 * libxcall.so.0 is its soname for every 0.x from 0.3 on, and its symbols
 * carry a version (XCALL_0.3, ...), so a program keeps loading newer
 * libraries. The structs a caller allocates and libxcall reads or fills,
 * struct xc_opts and struct xc_stats, only ever grow at their end, and each
 * function that takes one takes its size too: the macros below pass
 * sizeof() as the program was built, so a newer libxcall reads an older
 * program's xc_opts as far as it reaches (the rest is default) and fills
 * only the counters it knows. A program built against a newer header than
 * the library it runs on gets -EINVAL if it sets an option that library
 * does not know. What still needs a new soname: removing or changing a
 * function, a field, a constant or a meaning; what does not: a function, a
 * counter, an option or a constant added.
 */

typedef void (*xc_func_t)(void *arg);
typedef bool (*xc_cond_t)(int cpu, void *arg);

/* Call flags. */
#define XC_WAIT       (1u << 0)   /* return only after fn ran on every target */
#define XC_RUN_LOCAL  (1u << 1)   /* many/all/cond: also run fn on the calling worker's CPU */
#define XC_URGENT     (1u << 2)   /* interrupt a busy worker: fn runs in a signal handler;
				     valid for every call: single, many, cond, all, any, with or
				     without XC_WAIT (not xc_call_async, which takes no flags) */
#define XC_FLAGS_ALL  (XC_WAIT | XC_RUN_LOCAL | XC_URGENT)

/*
 * Urgent calls (XC_URGENT) reach a worker that is busy in a long work item
 * and is not calling xc_poll(): the kick becomes a signal to that worker
 * (xc_opts.urgent_signal), and urgent calls run in its handler, as IPI
 * handlers run in interrupt context. An idle worker runs them in its idle
 * loop, without a signal. They never interrupt another call's function,
 * which runs to completion as an IPI handler runs with interrupts off:
 * urgent calls that arrive meanwhile run right after it. The rules for an
 * urgent function are those of a signal handler and of an IPI handler, and
 * libxcall holds it to them wherever it runs (the handler, the idle loop,
 * right after a call), so that what it may do never depends on how busy
 * its worker was:
 *   - async-signal-safe work only (no malloc, no stdio, no locks that the
 *     interrupted code may hold: it may be interrupted holding any of them);
 *   - no waiting calls (XC_WAIT gives -EDEADLK), no hotplug, no xc_exit;
 *     nowait calls, xc_call_async and xc_queue_work are fine;
 *   - short: the interrupted work item waits for it.
 * A work item interrupted inside a system call sees that call fail with EINTR
 * unless the system call restarts (the handler is installed with SA_RESTART).
 */

/* xc_opts.stuck_ms: no stuck-call reports. */
#define XC_STUCK_OFF (-1)
/* xc_opts.follow_os: workers never look whether the OS took their CPU. */
#define XC_FOLLOW_OS_OFF (-1)

/*
 * Poll window policies for xc_opts.poll_ns; a positive value is a fixed window in ns.
 *
 * Every spin that may last longer than about 20 us gives way (sched_yield)
 * every 20 us or so: the idle poll, a waiting worker's poll, and a waiting
 * thread's spin under XC_POLL_FOREVER (at every pass while a worker it
 * waits for shares its CPU). So another runnable thread on a worker's CPU
 * (a compute thread, a caller that waits) runs within about 20 us, not
 * after a whole scheduler slice. The price, under XC_POLL_FOREVER: a poller
 * that gave way still reads as polling, so a sender does not wake it, and a
 * call to it waits until the scheduler gives the CPU back (up to that other
 * thread's slice, milliseconds). A window's poll (adaptive or fixed) ends
 * instead at a yield that came back late: the worker sleeps, where a call
 * wakes it, and does not poll again for 1 ms, doubling while its CPU stays
 * shared, up to 256 ms.
 * With nothing else runnable on the CPU the yield returns at once. A
 * thread that is no worker and waits for a call to its own CPU's worker
 * gets the CPU back as soon as the call ran: the worker gives way at once
 * after runs that such a thread waits for.
 */
#define XC_POLL_ADAPTIVE 0L    /* default: grows after short sleeps, shrinks after long ones */
#define XC_POLL_NONE    (-1L)  /* sleep at once */
#define XC_POLL_FOREVER (-2L)  /* never sleep; gives way every ~20 us (above) */

/**
 * struct xc_opts - runtime options; a zero-initialised struct means every default.
 * @cpus:               cpulist such as "0-3,8"; NULL = the CPUs the process may run on
 *                      (those online when it started and still online). A CPU
 *                      the machine has but the OS holds offline may be named:
 *                      it starts offline, as if the OS had taken it while up,
 *                      and comes online by itself once the OS brings it back
 *                      (@follow_os; off, xc_init() refuses it with -EINVAL).
 *                      Its worker's @cpu_init runs at bringup all the same,
 *                      on another CPU. A CPU the machine does not have, or one
 *                      online but outside the process's affinity: -EINVAL.
 * @serial_bringup:     start workers one at a time instead of all at once.
 * @poll_ns:            XC_POLL_* or a fixed idle poll window in ns.
 * @cpu_init:           runs on each worker, pinned, before it goes online;
 *                      a non-zero return fails xc_init(). May be NULL. At
 *                      bringup its calls get -ENXIO: no runtime is up until
 *                      every hook has returned. A hook still running at the
 *                      timeout may run on after xc_init() returned -ETIMEDOUT
 *                      (see xc_init()).
 * @cpu_init_arg:       passed to @cpu_init; when xc_init() returns -ETIMEDOUT it
 *                      must stay valid until the hook has returned.
 * @bringup_timeout_ms: how long a worker may take to report alive; 0 = 10000.
 *                      A worker past it makes xc_init() return -ETIMEDOUT,
 *                      whatever error another CPU's hook returned first, and
 *                      the report says where its thread was: not run yet,
 *                      starting, or in @cpu_init; its CPU time and state.
 * @report:             receives every diagnostic line (no newline), with
 *                      @report_ctx as its first argument; NULL = file
 *                      descriptor 2, each line in one write(2), no stdio. It
 *                      runs on whichever thread reports, a worker or a
 *                      caller, and may run inside a signal handler (a stuck
 *                      report of a handler's waiting call): a hook that may
 *                      meet that keeps to async-signal-safe work.
 * @report_ctx:         passed to @report as it is; libxcall never reads it.
 * @stuck_ms:           report a waiting call not done after this many ms (repeating,
 *                      with growing intervals); 0 = 5000, XC_STUCK_OFF = never
 *                      (XCALL_STUCK_MS: ms, or "off"; "0" is refused there).
 * @trace_file:         record events in per-CPU rings and write them there, as
 *                      Chrome trace JSON, at xc_exit(); NULL = no tracing
 *                      (XCALL_TRACE: a path, or "off").
 * @trace_events:       ring size in events, per CPU and per calling thread; 0 = 65536.
 * @urgent_signal:      the signal that interrupts a busy worker for XC_URGENT
 *                      calls; 0 = SIGRTMIN + 2. A real-time signal only
 *                      (SIGRTMIN..SIGRTMAX): libxcall takes its handler over in
 *                      the whole process from xc_init() to xc_exit().
 * @follow_os:          0 = on: each worker watches whether the OS took its CPU
 *                      away (hotplug, affinity, cpuset) and takes it offline
 *                      until it comes back; XC_FOLLOW_OS_OFF = never look.
 * @attach:             cpulist of CPUs of @cpus that get no libxcall thread:
 *                      the application's own threads run them, each attached
 *                      with xc_worker_attach(); NULL = none.
 * @ring_entries:       calls a thread may have queued to one CPU, not yet
 *                      taken, before it waits for room: the size of its ring
 *                      to that CPU (24 bytes an entry: 16 for the call,
 *                      8 of trace data beside it); a power of two,
 *                      16..65536; 0 = 256.
 * @stack_kb:           each libxcall worker thread's stack, in KiB, 64..1048576;
 *                      0 = the process's default thread stack (RLIMIT_STACK,
 *                      or what pthread_setattr_default_np() set). A waiting
 *                      call to a worker whose waits nest past three quarters
 *                      of it gets -ELOOP ("Nesting has a limit"). Attached
 *                      threads keep their own stacks.
 *
 * A field left zero takes its XCALL_* environment variable, if set, else the
 * default (see the options table in the README, or run with XCALL_VERBOSE=1).
 *
 * Strings: xc_init() copies or parses every string it reads (@cpus and
 * @attach are parsed into sets, @trace_file is copied, and so are the
 * environment's values), so they need live only until it returns. The
 * pointers that stay in use until xc_exit() are @cpu_init with its argument
 * and @report with @report_ctx. xc_opts_set() keeps the string it is given
 * (see there): what it set is read by xc_init() as any field is.
 */
struct xc_opts {
	const char *cpus;
	bool serial_bringup;
	long poll_ns;
	int (*cpu_init)(int cpu, void *arg);
	void *cpu_init_arg;
	unsigned bringup_timeout_ms;
	void (*report)(void *ctx, const char *line);
	void *report_ctx;
	int stuck_ms;
	const char *trace_file;
	unsigned trace_events;
	int urgent_signal;
	int follow_os;
	const char *attach;
	unsigned ring_entries;
	unsigned stack_kb;
};

struct xc__link {
	struct xc__link *next;
};

/* private: a completion (count of calls to finish, and a sleeping-waiter bit). */
struct xc__completion {
	XC__ATOMIC(uint32_t) word;
	void *waiter;
};

/**
 * struct xc_call_on_done - an async call's completion callback (xc_call_async()).
 * @fn:  run after the call, or NULL for none.
 * @arg: its argument.
 */
struct xc_call_on_done {
	xc_func_t fn;
	void *arg;
};

/**
 * struct xc_call - a call descriptor owned by the caller (xc_call_async()).
 * @fn:      the function to run on the target CPU.
 * @arg:     its argument.
 * @on_done: optional: on_done.fn(on_done.arg) runs on the target CPU right
 *           after libxcall's last write to the descriptor (see
 *           xc_call_async()), so it may free or reuse it.
 *
 * Set @fn and @arg (and @on_done), then pass it to xc_call_async(). While
 * the call is in flight the descriptor belongs to libxcall: do not change or
 * free it until xc_call_done() returns true, or until @on_done runs.
 * Zero-initialise it before first use. 64 bytes, one cache line.
 */
struct xc_call {
	xc_func_t fn;
	void *arg;
	/* private: */
	struct xc__link _link;
	XC__ATOMIC(uint16_t) _flags;
	int16_t _src_cpu;
	uint32_t _trace_id;
	struct xc__completion *_completion;
	void *_owner;
	union {
		/* public: async descriptors only */
		struct xc_call_on_done on_done;
		/* private: a waited descriptor's own completion (never an async one's) */
		struct xc__completion _done;
	};
} __attribute__((aligned(64)));

/**
 * struct xc_work - a deferred per-CPU work item, run in the worker's task context.
 * @fn:  the function; it may run long and may call xc_poll().
 * @arg: its argument.
 *
 * Zero-initialise, set @fn and @arg, then xc_queue_work(). The item may be
 * queued again once it has started running (xc_work_pending() is false).
 */
struct xc_work {
	xc_func_t fn;
	void *arg;
	/* private: */
	struct xc__link _link;
	XC__ATOMIC(unsigned) _flags;
	int _src_cpu;
	uint32_t _trace_id;
};

/*
 * XC_STATS_COUNTERS(X) - the counters of struct xc_stats, one line each, in
 * their order: X(name, counted_by, kind, meaning). @counted_by: who counts it
 * on the CPU (SENDER: the threads that call this CPU; WORKER: its worker;
 * READ: read from elsewhere when asked); @kind: COUNT, summed over CPUs and
 * subtracted by xc_stats_delta(), or VALUE, a reading (xc_stats_delta() and
 * xc_stats_add() keep the later one). The list makes the struct, libxcall's
 * per-CPU counters and their sums, the names xcall-bench writes, and the
 * layout the Rust crate checks. A new counter goes at the end: the struct
 * grows, and a program built against an older header reads the counters it
 * knows (xc_stats_get()).
 */
#define XC_STATS_COUNTERS(X)								\
	X(calls,           WORKER, COUNT, "call functions run on this CPU (inline self-calls included)") \
	X(kicks_sent,      SENDER, COUNT, "futex wakes (an attached thread: eventfd writes) issued to this CPU's worker") \
	X(kicks_elided,    SENDER, COUNT, "kicks skipped because the worker was polling or running") \
	X(kicks_coalesced, SENDER, COUNT, "enqueues that needed no kick because the queue was not empty") \
	X(free_rides,      SENDER, COUNT, "kicks skipped because another sender's wakeup was under way") \
	X(sleeps,          WORKER, COUNT, "times the worker went to sleep on its futex (an attached thread: also the sleeps xc_worker_sleep_begin() allowed)") \
	X(wakeups,         WORKER, COUNT, "times it came back from such a sleep") \
	X(work_run,        WORKER, COUNT, "work items run") \
	X(poll_ns_now,     READ,   VALUE, "the current idle poll window (adaptive policy), in ns") \
	X(urgent_calls,    WORKER, COUNT, "XC_URGENT calls run (also counted in calls)") \
	X(signals_sent,    SENDER, COUNT, "signals sent to interrupt this CPU's busy worker") \
	X(stuck_reports,   SENDER, COUNT, "stuck-call reports about calls waiting on this CPU") \
	X(trace_drops,     READ,   COUNT, "trace events overwritten before they were written out") \
	X(displaced,       WORKER, COUNT, "calls and work items that ended with the worker on another CPU: the OS had taken this one away") \
	X(barriers,        WORKER, COUNT, "membarrier(2) calls this CPU's worker made before it slept or closed, for senders whose ring calls skipped their fence")

#define XC__STATS_FIELD(name, counted_by, kind, meaning) uint64_t name;

/**
 * struct xc_stats - counters, per CPU or summed: one uint64_t a line of
 * XC_STATS_COUNTERS, in its order, which says what each counts.
 */
struct xc_stats {
	XC_STATS_COUNTERS(XC__STATS_FIELD)
};

/**
 * DOC: worker threads
 *
 * xc_init() starts one worker thread for each CPU of the set but the
 * attached ones, named "xcall/N" for CPU N (as /proc/PID/task/TID/comm, ps,
 * top and debuggers show it), and that thread stays the CPU's worker for the
 * runtime's whole life, until xc_exit() joins it: xc_cpu_offline() parks it
 * and xc_cpu_online() wakes the same thread, and a CPU the OS takes away
 * keeps it too. So a thread id learnt inside a call (gettid()) names the
 * CPU's worker until xc_exit(). An attached CPU (xc_opts.attach) differs:
 * its worker is the application's thread that attached to it, which keeps
 * its own name; before the first xc_worker_attach() and after each
 * xc_worker_detach() the CPU has no worker at all, and the next thread to
 * attach may be another one.
 */
/**
 * DOC: signals
 *
 * libxcall's own worker threads start with every asynchronous signal
 * blocked, so that a process-directed signal always runs the application's
 * handler on one of the application's threads. Left as the application set
 * them: the faults a thread raises itself (SIGSEGV, SIGBUS, SIGFPE, SIGILL,
 * SIGTRAP, SIGSYS), and SIGPIPE and SIGXFSZ, which the kernel sends to the
 * thread whose write raised them, so that a call's write behaves on a
 * worker as on the application's threads. The urgent signal is unblocked
 * once a worker is ready for it. A program spawned from a call or work item
 * (posix_spawn, system(), fork + exec) inherits that blocked mask, as any
 * child inherits its creator's: reset it (posix_spawnattr_setsigmask) if the
 * program needs signals. An attached thread keeps the application's mask:
 * xc_worker_attach() unblocks only the urgent signal, and detach puts it back.
 *
 * Each function says whether a signal handler may call it. The rule behind
 * it: every function that touches libxcall's state refuses with -EAGAIN a
 * handler that interrupted libxcall in the same thread, and a thread's first
 * call takes no lock of its own and allocates nothing with malloc, so it may
 * come from a handler that interrupted the application anywhere (it may
 * get -ENOMEM if no page could be mapped to list the thread for xc_exit()).
 */
/**
 * xc_init() - start one worker per CPU and bring them online.
 * @opts: options, or NULL for defaults (and the XCALL_* environment).
 *
 * A macro: xc_init_sz() with the size of struct xc_opts as the program was
 * built (see the ABI note at the top).
 *
 * Context: any thread that is not a worker.
 * Signal handler: no (it may allocate, lock or wait long); a handler that calls it anyway while
 *   interrupting libxcall in the same thread gets -EAGAIN.
 * Return: 0; -EBUSY already initialised; -EINVAL a bad option or environment
 * value, or a CPU the process may not run on, or an option set past the end
 * of the struct xc_opts this library knows; -ENOMEM; -ETIMEDOUT a worker did
 * not report alive in time; the negative errno a cpu_init hook returned
 * (-EIO if it returned a positive value). On failure nothing is left behind
 * and the reason, with its CPU, went to the report hook; but a cpu_init hook
 * that outlives the timeout and its cancellation keeps its thread until it
 * returns (reported so), and that thread then leaves without taking part in
 * any runtime (its calls, from the hook, get -ENXIO, even while a later
 * runtime is up). Such a thread is left only when xc_init() returns -ETIMEDOUT:
 * a timeout wins over every other CPU's error, even one that came first
 * (which is still reported), so after any other return no hook runs, and
 * after -ETIMEDOUT the caller keeps @cpu_init and its argument valid until
 * the hook returns (for ever, if it cannot tell when).
 *
 * fork(): a child forked after xc_init() has no runtime, since it has none
 * of the workers: every call, xc_exit() included, gets -ENXIO, and the child
 * may call xc_init() afresh. Calls that the parent had queued run in the
 * parent only. The urgent signal gets back, in the child, the disposition it
 * had before xc_init(). A child forked inside a call or work item goes on in
 * that function as the worker did: as after any fork of a threaded process,
 * it should only exec or _exit.
 */
XC_API int xc_init_sz(const struct xc_opts *opts, size_t opts_size);
#define xc_init(opts) xc_init_sz((opts), sizeof(struct xc_opts))

/**
 * xc_exit() - run everything still queued, then stop and join every worker.
 *
 * Context: a thread that is not a worker, outside a cond hook of its own
 * call. Calls racing with xc_exit() either complete or get -ENXIO; none is
 * lost. xc_exit() returns only once every call that other threads began
 * while the runtime was up has returned, a cond hook's included (a hook
 * that waits for the thread in xc_exit() deadlocks it), so nothing a call
 * reads is cleared under it, nor rewritten by the xc_init() that may follow.
 * Signal handler: no (it may allocate, lock or wait long); a handler that calls it anyway while
 *   interrupting libxcall in the same thread gets -EAGAIN.
 * Return: 0; -ENXIO not initialised; -EDEADLK called from a worker (an
 * attached thread too) or from a cond hook of the caller's own call; -EBUSY a thread is still attached (xc_worker_detach()
 * first; nothing was stopped); the negative errno of writing
 * xc_opts.trace_file (the runtime is down all the same).
 */
XC_API int xc_exit(void);

/**
 * DOC: what a call promises
 *
 * Visibility: what the caller wrote before it made a call is visible to fn.
 * When a waiting call (XC_WAIT) returns, fn has returned on every target and
 * everything fn wrote is visible to the caller: it reads fn's results with
 * plain loads, no fence or atomic. The same holds once xc_call_done() returns
 * true. A nowait call promises the caller nothing about when fn has run.
 *
 * Order across threads: the order under xc_call_single() ("Order:") is that
 * of one thread's calls. A waiting call says nothing of the nowait calls
 * other threads made before it, even to the same CPU: they may still sit in
 * those threads' own rings when it returns (on a quiet machine they seldom
 * do, which proves nothing). To wait for other threads' calls, have each
 * thread wait for its own (a waiting call as its last, or xc_call_async()
 * and xc_call_done()) and then tell the waiter (a counter, a barrier); or
 * have the calls' functions count down a counter that the waiter waits on.
 *
 * Per-CPU data: a CPU's calls and work items all run on one thread, its worker
 * (libxcall's, or the thread attached to it), one at a time, so data that
 * only they touch needs no atomics or locks; size an array indexed by CPU id
 * with xc_cpu_max(). But that thread is re-entered: the CPU's calls also run
 * nested inside any libxcall call its code makes that waits (a waiting call,
 * a nowait call waiting for room in a full ring, xc_cpu_offline() and
 * xc_cpu_online(), xc_poll()), and a call to one's own CPU runs inline, at
 * once. So per-CPU data must be consistent at every libxcall call that a call
 * or work item makes, not only when it returns. Urgent calls (XC_URGENT)
 * aside: they run in a signal handler between any two instructions of a work
 * item or of the worker's own code (never inside another call's function),
 * so what they share with that code is signal-handler data.
 *
 * Nesting has a limit: each call run inside a wait takes a frame of the
 * thread's stack, and calls that wait nest in turn (a burst of nowait calls
 * whose functions each wait; an application's recursion of waiting calls
 * between CPUs). Once a worker's stack is three quarters used (its serve
 * floor), its waits and xc_poll() run only urgent calls and its mailbox
 * slot's waiting call (one level at most), and every other waiting call
 * queued to that CPU, or sent to it meanwhile, returns -ELOOP without having
 * run: its caller learns that the recursion went too deep, where it would
 * otherwise overflow the stack, or hang when it waits for a call queued
 * behind nowait calls that the deep worker cannot run. The refusal is eager:
 * the call need not be part of a cycle. Nowait and async calls to such a
 * CPU stay queued and run, in their order, once its nest unwinds; but one
 * whose ring to that CPU is full returns -ELOOP without having run, as does
 * a waiting one, since the room it would wait for comes only with the
 * unwinding, and the nest may be waiting for its caller. The
 * library reports the first time a worker reaches its floor. A worker's
 * stack is the process's default thread stack (RLIMIT_STACK, 8 MiB on most
 * systems, or what pthread_setattr_default_np() set before xc_init());
 * an attached thread's is its own.
 */

/**
 * xc_call_single() - run fn(arg) on one CPU.
 * @cpu:   target CPU (a Linux CPU number in the runtime's set). Any other
 *         value, negative or past CPU_SETSIZE included, is an absent CPU:
 *         -ENXIO, never -EINVAL, for every function that takes a CPU (as the
 *         kernel's smp_call_function_single() answers a CPU past nr_cpu_ids).
 * @fn:    function; runs in call context on @cpu.
 * @arg:   its argument.
 * @flags: XC_WAIT to return only after fn has run; XC_URGENT to interrupt a
 *         busy worker (see the rules above).
 *
 * On the calling worker's own CPU fn runs at once, inline; not while that
 * CPU is offline (an attached thread's): -ENXIO, as for any other thread.
 *
 * Order: calls from one thread to one CPU start in the order made, waiting
 * or not, through single, any, async and each target of many, cond and all:
 * when a waiting call returns, every earlier call of the thread to that CPU
 * has run (or is running, if it waits or polls: a call that waits runs its
 * CPU's later calls inside it). Not ordered: XC_URGENT calls, calls made
 * inside an urgent function, and calls of different threads (see "Order
 * across threads" above). A thread with xc_opts.ring_entries calls (256 by
 * default) to one CPU not yet taken waits for room (serving its own CPU if it
 * is a worker).
 *
 * Signal handler: yes. Refused with -EAGAIN when the handler interrupted libxcall in the same
 *   thread (the call then never ran); a thread's first call may be its handler's. A waiting call
 *   blocks the handler until the function ran, and a stuck report due meanwhile runs the report
 *   hook inside it.
 * Return: 0; -EINVAL NULL fn or unknown flags; -ENXIO @cpu absent or offline,
 * or the runtime is not up; -ENOMEM no memory for the thread's ring to
 * @cpu, or from inside an urgent function, its ring full or no descriptor
 * for an XC_URGENT call, and likewise (no descriptor) from an attached
 * thread between xc_worker_sleep_begin() and xc_worker_sleep_end(); -EDEADLK
 * XC_WAIT from inside an urgent function, or from an attached thread between
 * xc_worker_sleep_begin() and xc_worker_sleep_end(), and there too a nowait
 * call whose ring to @cpu is full (waiting for room would run the thread's
 * CPU's calls behind its loop: see xc_worker_sleep_begin()); -ELOOP XC_WAIT
 * to a CPU whose worker's waits nest past its serve floor, or a nowait call
 * to one whose ring to @cpu is full (see "Nesting has a limit" above): fn
 * did not run; -EAGAIN from a signal handler that
 * interrupted libxcall in this thread.
 */
XC_API int xc_call_single(int cpu, xc_func_t fn, void *arg, unsigned flags);

/**
 * xc_call_many() - run fn(arg) on every online CPU of a mask.
 * @mask:  target CPUs, each in the runtime's set. The calling worker's own CPU
 *         is skipped unless XC_RUN_LOCAL; offline CPUs are skipped, as
 *         smp_call_function_many() does.
 * @fn:    function; runs in call context on each target, on several at once.
 * @arg:   its argument, the same pointer for every target.
 * @flags: XC_WAIT, XC_RUN_LOCAL, XC_URGENT: each target's call is then urgent,
 *         as xc_call_single()'s (the local one runs inline, as always).
 *
 * Queues on every target first, then kicks them, then runs the local call,
 * then waits.
 * Signal handler: yes. Refused with -EAGAIN when the handler interrupted libxcall in the same
 *   thread (the call then never ran); a thread's first call may be its handler's. A waiting call
 *   blocks the handler until the function ran, and a stuck report due meanwhile runs the report
 *   hook inside it.
 * Return: the number of CPUs fn was sent to or ran on (>= 0); -EINVAL NULL or
 * empty mask, NULL fn, unknown flags; -ENXIO a CPU of the mask is outside the
 * runtime's set, or the runtime is not up; -ENOMEM; -EDEADLK as
 * xc_call_single(), also a nowait call between xc_worker_sleep_begin() and
 * _end() when the ring to a target is full (then it was sent to none);
 * -ELOOP one or more targets refused the call, their waits nested past the
 * serve floor (see "Nesting has a limit": XC_WAIT, or a nowait call whose
 * ring to that target was full): fn was sent to every other target (and
 * with XC_WAIT ran and returned there), but not to those.
 */
XC_API int xc_call_many(const cpu_set_t *mask, xc_func_t fn, void *arg, unsigned flags);

/**
 * xc_call_cond() - xc_call_many() on the CPUs of @mask for which cond(cpu, arg) is true.
 * @mask:  target CPUs, as for xc_call_many().
 * @cond:  evaluated on the calling thread, once per online CPU of @mask, before
 *         anything is queued.
 * @fn:    function; runs in call context on each CPU chosen.
 * @arg:   passed to @cond and to @fn.
 * @flags: XC_WAIT, XC_RUN_LOCAL, XC_URGENT, as for xc_call_many().
 * Signal handler: yes. Refused with -EAGAIN when the handler interrupted libxcall in the same
 *   thread (the call then never ran); a thread's first call may be its handler's. A waiting call
 *   blocks the handler until the function ran, and a stuck report due meanwhile runs the report
 *   hook inside it. @cond then runs in the handler.
 * Return: as xc_call_many(); -EINVAL also for a NULL @cond.
 */
XC_API int xc_call_cond(const cpu_set_t *mask, xc_cond_t cond, xc_func_t fn, void *arg, unsigned flags);

/**
 * xc_call_all() - run fn(arg) on every online CPU but the calling worker's own
 * (that one too with XC_RUN_LOCAL).
 * @fn:    function; runs in call context on each CPU, on several at once.
 * @arg:   its argument, the same pointer for every CPU.
 * @flags: XC_WAIT, XC_RUN_LOCAL, XC_URGENT, as for xc_call_many().
 * Signal handler: yes. Refused with -EAGAIN when the handler interrupted libxcall in the same
 *   thread (the call then never ran); a thread's first call may be its handler's. A waiting call
 *   blocks the handler until the function ran, and a stuck report due meanwhile runs the report
 *   hook inside it.
 * Return: as xc_call_many().
 */
XC_API int xc_call_all(xc_func_t fn, void *arg, unsigned flags);

/**
 * xc_call_any() - run fn(arg) on one online CPU of @mask, the nearest:
 * the calling worker's own, then one sharing its last-level cache, then one on
 * its NUMA node, then any.
 * @flags: as xc_call_single(): XC_WAIT, XC_URGENT (XC_RUN_LOCAL is taken and
 *         changes nothing: the calling worker's own CPU is the nearest anyway).
 * Signal handler: yes. Refused with -EAGAIN when the handler interrupted libxcall in the same
 *   thread (the call then never ran); a thread's first call may be its handler's. A waiting call
 *   blocks the handler until the function ran, and a stuck report due meanwhile runs the report
 *   hook inside it.
 * Return: the CPU chosen (>= 0); -EINVAL as xc_call_single() or NULL/empty
 * mask; -ENXIO no CPU of @mask is online; -ENOMEM, -EDEADLK, -ELOOP as
 * xc_call_single() (a refused call is not sent to another CPU).
 */
XC_API int xc_call_any(const cpu_set_t *mask, xc_func_t fn, void *arg, unsigned flags);

/**
 * xc_call_async() - run call->fn(call->arg) on @cpu without waiting, using the
 * caller's own descriptor; poll xc_call_done() to learn when it has run, or
 * let call->on_done tell.
 *
 * Completion callback: when call->on_done.fn is set, libxcall reads it and
 * on_done.arg before its last write to the descriptor (the one that makes
 * xc_call_done() true), and calls on_done.fn(on_done.arg) after that write,
 * on @cpu's worker, right after call->fn returned: a callback may free the
 * descriptor or queue it again, and libxcall never touches it after. It runs
 * as a call's function does (call context, the same rules); inline, at once,
 * for the calling worker's own CPU, as call->fn does. It never runs for a
 * refused call (any error returned). Another thread may see xc_call_done()
 * true while the callback still runs.
 *
 * Chains: inside a completion callback, an async call to the calling
 * worker's own CPU runs its function at once, as always, but its completion
 * (xc_call_done() true, then its callback) comes right after the callback it
 * was made from returns, before anything else of the thread's. So a callback
 * that queues its descriptor again to its own CPU makes a chain that runs in
 * a loop, link after link in order, in bounded stack, however long.
 * Signal handler: yes. Refused with -EAGAIN when the handler interrupted libxcall in the same
 *   thread (the call then never ran); a thread's first call may be its handler's. A waiting call
 *   blocks the handler until the function ran, and a stuck report due meanwhile runs the report
 *   hook inside it.
 * Return: 0; -EINVAL NULL call or fn; -EBUSY the descriptor is still in
 * flight; -ENXIO, -ENOMEM, -EDEADLK (a full ring inside an attached thread's
 * announced sleep) as xc_call_single(). On the calling worker's own CPU it
 * runs at once.
 */
XC_API int xc_call_async(int cpu, struct xc_call *call);

/**
 * xc_call_done() - true once an async call's function has returned (or the
 * descriptor was never queued). Its effects are visible to the caller then.
 * Signal handler: yes: it only reads.
 */
XC_API bool xc_call_done(const struct xc_call *call);

/**
 * xc_queue_work() - run work->fn(work->arg) later in @cpu's task context.
 * Work items run one at a time in the order queued; calls to the CPU run
 * before the next item and at each xc_poll() inside one.
 * Signal handler: yes; -EAGAIN when the handler interrupted libxcall in the same thread.
 * Return: 0; -EINVAL NULL work or fn; -EBUSY queued and not yet started;
 * -ENXIO @cpu absent or offline, or the runtime is not up.
 */
XC_API int xc_queue_work(int cpu, struct xc_work *work);

/**
 * xc_work_pending() - true while @work is queued and has not started.
 * Signal handler: yes: it only reads.
 */
XC_API bool xc_work_pending(const struct xc_work *work);

/**
 * xc_poll() - run the calls queued to the calling worker's CPU now.
 * Context: worker (typically inside a long work item). Inside an XC_URGENT
 * function it runs nothing and returns 0: the signal may have interrupted
 * the worker while it was running its queue. From an attached thread's own
 * loop (not inside a call or work item) it is that CPU's task loop: it also
 * serves a pending offline request, looks whether the OS took the CPU, and
 * runs the work items queued (at most 64 in one call, calls before each).
 * Between xc_worker_sleep_begin() returning 0 and xc_worker_sleep_end() it
 * runs nothing and gets -EDEADLK, also from a call's function: the sleep
 * stays announced, so a sender kicks the eventfd and the loop's next
 * xc_poll() runs the call.
 * Signal handler: yes, on an attached thread: the handler then runs its CPU's calls; -EAGAIN when
 *   it interrupted libxcall (its own xc_poll() included); -EDEADLK when it
 *   landed after xc_worker_sleep_begin() said sleep and before the loop's
 *   own wait (running there would end the sleep behind the loop's back, and
 *   senders would skip the kick of a loop about to block).
 * Past the worker's serve floor it runs only urgent calls and the slot's,
 * and refuses waiting calls (see "Nesting has a limit"), as a wait does.
 * Return: how many calls and work items ran, or waiting calls were refused
 * (>= 0); -ENXIO not called from a worker; -EDEADLK inside an attached
 * thread's announced sleep.
 */
XC_API int xc_poll(void);

/*
 * Attached threads: an application that runs its own thread per CPU, each
 * with its own event loop (epoll, io_uring), makes that thread the CPU's
 * worker instead of a libxcall thread. The CPU is named in xc_opts.attach;
 * it is offline until its thread attaches, and offline again once it
 * detaches. Calls to it run only inside that thread, from xc_poll(). While
 * the loop sleeps, a sender wakes it by writing the eventfd xc_worker_fd(),
 * which the loop watches beside its own descriptors, and only when it
 * really sleeps: the loop announces each sleep.
 *
 *	for (;;) {
 *		xc_poll();				// calls, work items, requests
 *		... the loop's own ready events ...
 *		if (xc_worker_sleep_begin() == 0)	// 1: something came, do not sleep
 *			epoll_wait(ep, ev, n, -1);	// xc_worker_fd() is in ep
 *		xc_worker_sleep_end();
 *	}
 *
 * A loop that polls and never sleeps needs neither: its calls come with no
 * kick at all. XC_URGENT calls interrupt an attached thread that is running
 * by the urgent signal, as any worker (an epoll_wait entered without
 * xc_worker_sleep_begin() then returns EINTR). The OS taking the CPU away
 * (follow_os) takes it offline in libxcall at the thread's next xc_poll(),
 * with a report, and back online once the thread runs pinned there again:
 * libxcall never moves an application's thread.
 */

/**
 * xc_worker_attach() - make the calling thread @cpu's worker.
 * @cpu: a CPU of xc_opts.attach; the thread must be pinned to it alone.
 *
 * Runs the cpu_init hook on this thread first, then brings @cpu online (unless
 * xc_cpu_offline() took it offline: then at xc_cpu_online()). Until then,
 * calls to @cpu get -ENXIO, as to any offline CPU: threads that call each
 * other's attached CPUs should start calling once every one has attached
 * (examples/shards.h waits at a barrier). Unblocks the urgent signal in
 * this thread until it detaches.
 * Context: a thread that is not a worker.
 * Signal handler: no (it may allocate, lock or wait long); a handler that calls it anyway while
 *   interrupting libxcall in the same thread gets -EAGAIN.
 * Return: 0; -ENXIO runtime not up, or @cpu outside the set; -EINVAL @cpu not
 * in xc_opts.attach, or the thread's affinity is not @cpu alone; -EBUSY the
 * thread is a worker already (attached, or libxcall's), or another thread
 * has @cpu; -EMFILE/-ENFILE/-ENOMEM no eventfd; the cpu_init hook's error.
 */
XC_API int xc_worker_attach(int cpu);

/**
 * xc_worker_detach() - the calling thread is no longer its CPU's worker: new
 * calls and work get -ENXIO, everything queued runs here, then the CPU is
 * offline until a thread attaches again. The eventfd is closed: take it out
 * of the loop's epoll set or ring first. A thread that exits attached is
 * detached by its exit.
 * Context: the attached thread, outside any call's function or work item.
 * Signal handler: no (it may allocate, lock or wait long); a handler that calls it anyway while
 *   interrupting libxcall in the same thread gets -EAGAIN.
 * Return: 0; -EINVAL the thread is not attached; -EDEADLK inside a call, a
 * work item or an urgent function.
 */
XC_API int xc_worker_detach(void);

/**
 * xc_worker_fd() - the calling attached thread's eventfd: it becomes readable
 * when a sender found the thread asleep (between xc_worker_sleep_begin() and
 * xc_worker_sleep_end()) and kicked it. Watch it for reading (EPOLLIN, an
 * io_uring poll). xc_worker_sleep_end() reads it; the loop need not.
 * Signal handler: yes: it only reads.
 * Return: the descriptor (>= 0); -EINVAL the thread is not attached.
 */
XC_API int xc_worker_fd(void);

/**
 * xc_worker_sleep_begin() - the attached thread is about to sleep in its own
 * wait: from now on senders kick its eventfd. It then looks once more for
 * calls, work and requests (what was sent before it announced the sleep).
 * Call xc_worker_sleep_end() after every xc_worker_sleep_begin(). After a
 * return of 0 and until xc_worker_sleep_end(), xc_poll(), waiting calls and
 * hotplug get -EDEADLK, from a signal handler on the thread too: only the
 * loop's own xc_worker_sleep_end() ends the announced sleep. Nothing there
 * waits either: a nowait call whose ring to its target is full gets -EDEADLK
 * and one that finds no free descriptor (XC_URGENT) -ENOMEM, where elsewhere
 * it would wait, running this CPU's calls meanwhile: that would run them
 * and take the CPU's queues inside the announced sleep, behind the loop.
 * Signal handler: no (it may allocate, lock or wait long); a handler that calls it anyway while
 *   interrupting libxcall in the same thread gets -EAGAIN.
 * Return: 0 sleep now; 1 do not sleep, call xc_poll() and come back:
 * something is pending, or another worker is making the process's senders'
 * stores visible (a membarrier, microseconds) before it sleeps;
 * -EINVAL the thread is not attached; -EDEADLK inside a call or work item.
 */
XC_API int xc_worker_sleep_begin(void);

/**
 * xc_worker_sleep_end() - the attached thread is awake: senders stop kicking
 * it; reads the eventfd if a sender kicked it. Harmless without a sleep.
 * Signal handler: no (it may allocate, lock or wait long); a handler that calls it anyway while
 *   interrupting libxcall in the same thread gets -EAGAIN.
 * Return: 0; -EINVAL the thread is not attached.
 */
XC_API int xc_worker_sleep_end(void);

/**
 * xc_cpu_offline() - stop new calls and work to @cpu (they get -ENXIO), run
 * everything already queued there, then park its worker.
 *
 * The OS takes CPUs offline too, in libxcall's eyes: a worker that finds its
 * CPU gone (OS hotplug), or its affinity or cpuset no longer holding it, runs
 * what was queued wherever it now is (counted in xc_stats.displaced, reported
 * in one line) and its CPU goes offline as by this call; when the OS gives
 * the CPU back, the worker pins itself there again and the CPU comes back
 * online by itself, within about 50 ms (xc_opts.follow_os). A CPU taken
 * offline with this call stays offline until xc_cpu_online(), whatever the OS
 * does meanwhile; this call on a CPU the OS has taken marks it so.
 *
 * Context: any thread but @cpu's own worker. Blocks until done.
 * Signal handler: no (it may allocate, lock or wait long); a handler that calls it anyway while
 *   interrupting libxcall in the same thread gets -EAGAIN.
 * Return: 0; -EINVAL @cpu is already offline by this call; -ENXIO @cpu outside
 * the set, or the runtime not up or going down (xc_exit() runs, also while
 * this call waits for another hotplug operation); -EDEADLK where this call
 * could never finish:
 *   - from @cpu's own worker, from an urgent function, or from an attached
 *     thread between xc_worker_sleep_begin() and _end();
 *   - from a call or work item on a CPU that @cpu's worker is waiting on
 *     (its wait could end only after this call returns; @cpu stays online);
 *   - from a call or work item on a CPU that another thread's hotplug
 *     operation waits on while it holds the hotplug lock: an offline whose
 *     CPU's worker waits on it, or a detach's (or an attached thread's
 *     exit's) drain; this call gives way, that one goes on;
 *   - from a call that a hotplug operation of the same thread runs while it
 *     waits (an offline's wait, a detach's drain: it holds the lock).
 *   A cycle through a third CPU's wait is not detected.
 */
XC_API int xc_cpu_offline(int cpu);

/**
 * xc_cpu_online() - bring back a CPU taken offline by xc_cpu_offline(): calls
 * to it are accepted again.
 * An attached CPU (xc_opts.attach) with no thread attached stays offline
 * until one attaches.
 * Signal handler: no (it may allocate, lock or wait long); a handler that calls it anyway while
 *   interrupting libxcall in the same thread gets -EAGAIN.
 * Return: 0; -EINVAL already online, or offline only because the OS took it
 * (it comes back by itself) or because no thread is attached; -ENXIO the OS
 * has taken it, outside the set, or the runtime not up or going down (as
 * xc_cpu_offline()); -EDEADLK from an urgent
 * function, inside an attached thread's announced sleep, from a call that a
 * hotplug operation of the same thread is running, or from a call or work
 * item that a CPU being taken offline or a detach's drain waits on (both as
 * xc_cpu_offline()).
 */
XC_API int xc_cpu_online(int cpu);

/**
 * xc_this_cpu() - the calling worker's CPU, or -1 on any other thread.
 * In a worker's cpu_init hook its CPU; -1 there once a timed-out xc_init()
 * gave up on the hook's thread (xc_init()).
 * Signal handler: yes: it only reads.
 */
XC_API int xc_this_cpu(void);

/**
 * xc_cpu_max() - one past the highest CPU id of the runtime's set: the length
 * of an array indexed by CPU id, for per-CPU data (see "Per-CPU data" above
 * xc_call_single()). Fixed from xc_init() to xc_exit(): CPUs going offline
 * and online do not change it. Ids below it need not all be in the set.
 * Signal handler: yes: it only reads.
 * Return: the length (>= 1); -ENXIO the runtime is not up.
 */
XC_API int xc_cpu_max(void);

/**
 * xc_online_mask() - the CPUs whose workers are online now.
 * Signal handler: yes: it only reads.
 * Return: how many (>= 0); -EINVAL NULL @out; -ENXIO runtime not up.
 */
XC_API int xc_online_mask(cpu_set_t *out);

/**
 * xc_stats_get() - read the counters of one CPU, or (cpu = -1) their sum.
 * Counters survive offline/online and are reset by xc_init().
 * Signal handler: yes: it never waits or allocates; -EAGAIN when the handler
 *   interrupted libxcall in the same thread.
 * Return: 0; -EINVAL NULL @out; -ENXIO @cpu outside the set or runtime not up.
 */
XC_API int xc_stats_get_sz(int cpu, struct xc_stats *out, size_t size);
#define xc_stats_get(cpu, out) xc_stats_get_sz((cpu), (out), sizeof(struct xc_stats))

/**
 * xc_stats_delta() - what happened between two readings: @out = @later - @earlier,
 * counter by counter, with @later's poll_ns_now (a value, not a count).
 * @out may be either input.
 * Signal handler: yes: it only reads.
 */
XC_API void xc_stats_delta_sz(struct xc_stats *out, const struct xc_stats *earlier,
			      const struct xc_stats *later, size_t size);
#define xc_stats_delta(out, earlier, later) \
	xc_stats_delta_sz((out), (earlier), (later), sizeof(struct xc_stats))

/**
 * xc_stats_add() - @sum += @add, counter by counter; poll_ns_now is @add's.
 * Signal handler: yes: it only reads.
 */
XC_API void xc_stats_add_sz(struct xc_stats *sum, const struct xc_stats *add, size_t size);
#define xc_stats_add(sum, add) xc_stats_add_sz((sum), (add), sizeof(struct xc_stats))

/**
 * xc_trace_dump() - write every recorded event, now, as Chrome trace JSON
 * (loads in Perfetto and chrome://tracing: one track per CPU and per calling
 * thread, flows from each queued call to its entry).
 * Signal handler: no (it may allocate, lock or wait long); a handler that calls it anyway while
 *   interrupting libxcall in the same thread gets -EAGAIN.
 * Return: 0; -EINVAL NULL @path; -ENXIO tracing is off or the runtime is not up; -errno of the write.
 */
XC_API int xc_trace_dump(const char *path);

/**
 * xc_cpulist_parse() - parse a cpulist ("0-3,8,10-15:2") into @out.
 * Signal handler: yes: it reads @list and writes @out, nothing else.
 * Return: 0; -EINVAL malformed, empty, or a CPU >= CPU_SETSIZE.
 */
XC_API int xc_cpulist_parse(const char *list, cpu_set_t *out);

/**
 * xc_opts_set() - set the field of @o that the option @var names (its XCALL_*
 * environment variable, e.g. "XCALL_POLL_NS"), from @value spelled as in the
 * environment ("adaptive", "elide,slot", "0-3", "off", "SIGRTMIN+2", ...): the
 * parser xc_init() uses, for programs that take libxcall's options from their
 * own command line or configuration. A string option (cpus, attach,
 * trace_file) keeps @value itself, which must outlive @o's use. What
 * xc_opts_get() writes, set back, gives the same value.
 * Signal handler: no.
 * Return: 0; -EINVAL unknown @var (XCALL_VERBOSE has no field), bad @value
 * (among them a signal that is not a real-time one, and stuck "0"), or NULL
 * argument; @o is unchanged then, and the reason, in the words xc_init()
 * reports for the same XCALL_* value, goes to @o->report when it is set
 * (nothing is reported when it is NULL).
 */
XC_API int xc_opts_set_sz(struct xc_opts *o, size_t opts_size, const char *var, const char *value);
#define xc_opts_set(o, var, value) xc_opts_set_sz((o), sizeof(struct xc_opts), (var), (value))

/**
 * xc_opts_get() - the value that @o gives the option @var, as XCALL_VERBOSE
 * spells it (the default when the field is left zero), into @buf: as much of
 * it as fits in @size bytes, NUL-terminated, as snprintf() writes it. Every
 * value is spelled so that xc_opts_set() takes it back: "off" for no stuck
 * reports or no trace, the urgent signal as "SIGRTMIN+N" or "SIGRTMAX-N".
 * Signal handler: no.
 * Return: the length written, the value's or @size - 1 if it was cut;
 * -EINVAL unknown @var, a field value that xc_init() refuses (judged by
 * itself: whether @attach lies within @cpus is xc_init()'s to tell), NULL
 * argument or @size 0; nothing is reported.
 */
XC_API int xc_opts_get_sz(const struct xc_opts *o, size_t opts_size, const char *var, char *buf,
			 size_t size);
#define xc_opts_get(o, var, buf, size) xc_opts_get_sz((o), sizeof(struct xc_opts), (var), (buf), (size))

/**
 * xc_cpulist_format() - write @set as a cpulist ("0-3,8") into @buf.
 * Signal handler: no.
 * Return: the length written (excluding NUL); -ENOSPC @buf too small.
 */
XC_API int xc_cpulist_format(const cpu_set_t *set, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif /* XCALL_H */
