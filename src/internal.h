/* SPDX-License-Identifier: MIT */
/*
 * internal.h - libxcall's private types and the functions its files share.
 *
 * Map of src/ (one concern per file):
 *   llist.h     the per-CPU MPSC lock-free list (empty -> non-empty detection, close)
 *   futex.h     futex(2) wrappers
 *   kick.c      THE wakeup protocol: worker idle states, kicks, completions
 *   call.c      call single / many / cond / all / any / async, running a queue
 *   slot.c      the mailbox slot: a waiting single call in the line the worker polls
 *   work.c      deferred per-CPU work items
 *   pool.c      per-thread descriptor pools for nowait and many calls
 *   worker.c    the worker thread: main loop, idle loop, offline drain, park
 *   bringup.c   xc_init / xc_exit: parallel and serial bringup, teardown
 *   hotplug.c   xc_cpu_offline / xc_cpu_online
 *   options.c   the options table: struct xc_opts, XCALL_* environment, defaults
 *   topology.c  cpulists, sysfs LLC and NUMA ids
 *   stats.c     per-CPU counters
 *   stuck.c     stuck-call reports (CSD_LOCK_WAIT_DEBUG)
 *   urgent.c    XC_URGENT: the signal that interrupts a busy worker
 *   trace.c     per-CPU event rings, Chrome trace export (trace.h)
 *   report.c    the one diagnostic choke point; symbol names
 *   fork.c      a child forked after xc_init: no runtime, xc_init afresh
 *   follow.c    the OS takes a worker's CPU away (hotplug, affinity, cpuset) and back
 */
#ifndef XC_INTERNAL_H
#define XC_INTERNAL_H

#include "xcall.h"
#include "llist.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#if defined(__has_include)
#if __has_include(<sys/rseq.h>)
#include <sys/rseq.h>
#define XC_HAVE_RSEQ 1
#endif
#endif

#define XC_MAX_CPUS   CPU_SETSIZE
#define XC_CACHELINE  64
#define __xc_aligned  __attribute__((aligned(XC_CACHELINE)))
/*
 * Thread-local state: initial-exec, so that libxcall.so reaches it with one
 * %fs-relative load, as the static library does, rather than a call to
 * __tls_get_addr on every call path. It is a few words, well inside the
 * static TLS that glibc keeps spare for libraries loaded with dlopen().
 */
#define __xc_tls      _Thread_local __attribute__((tls_model("initial-exec")))
#define xc_likely(x)   __builtin_expect(!!(x), 1)
#define xc_unlikely(x) __builtin_expect(!!(x), 0)

static inline void xc_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

uint64_t xc_now_ns(void);

/* Worker idle states: the futex word of the kick protocol (kick.c). */
enum xc_idle_state {
	XC_IDLE_RUNNING  = 0, /* running calls or work; checks its queue before idling */
	XC_IDLE_POLLING  = 1, /* idle, spinning on its queue: senders need no syscall */
	XC_IDLE_SLEEPING = 2, /* idle, in (or entering) futex_wait on this word */
	XC_IDLE_WAKING   = 3, /* a sender moved it out of SLEEPING and will futex-wake it */
	XC_IDLE_WOKENUP  = 4, /* that sender's futex wake has been issued */
};

/* Requests from xc_cpu_offline() / xc_exit() to a worker (xc_cpu.ctl). */
enum { XC_CTL_NONE = 0, XC_CTL_OFFLINE = 1, XC_CTL_EXIT = 2 };

/* A parked or booting worker waits on xc_cpu.park for one of these. */
enum { XC_PARK_WAIT = 0, XC_PARK_RUN = 1, XC_PARK_EXIT = 2 };

/* Bringup report of a worker (struct xc_boot.state). */
enum { XC_BOOT_NONE = 0, XC_BOOT_STARTING, XC_BOOT_ALIVE, XC_BOOT_FAILED, XC_BOOT_ABANDONED };

/*
 * The bringup handshake of one worker thread (bringup.c, worker.c). It lives
 * on the heap, apart from the CPU, so that a thread whose bringup gave up on
 * it (its init hook outlived the timeout and cancellation) can still report
 * there, find itself abandoned and leave, without touching the CPU that a
 * later xc_init() has reset for a new worker.
 *
 *   state   STARTING, set by the starter; then one CAS decides: the thread's
 *           to ALIVE or FAILED (its report), or the starter's to ABANDONED.
 *   err, tid  written by the thread before its report, read after it.
 *   refs    the starter's and the thread's; the last put frees it.
 */
struct xc_boot {
	struct xc_cpu *c;
	int (*cpu_init)(int cpu, void *arg);	/* copied: a later xc_init rewrites the config */
	void *cpu_init_arg;
	_Atomic int state;
	int err;
	int tid;
	_Atomic int refs;
};
void xc_boot_put(struct xc_boot *b);

/* Why the OS took a CPU from its worker (xc_cpu.taken; follow.c). */
enum { XC_TAKEN_NONE = 0, XC_TAKEN_OFFLINE, XC_TAKEN_AFFINITY, XC_TAKEN_CPUSET };

/* Call descriptor kinds (xc_call._flags). */
#define XC_CALL_SYNC     (1u << 0)  /* someone waits: complete _sync after fn */
#define XC_CALL_POOL     (1u << 1)  /* from a pool: return it before fn runs */
#define XC_CALL_ASYNC    (1u << 2)  /* caller-owned: clear _flags after fn */
#define XC_CALL_INFLIGHT (1u << 3)  /* async descriptor queued, fn not yet returned */

/* xc_work._flags */
#define XC_WORK_PENDING  (1u << 0)

/*
 * The fast slot (slot.c): room in the mailbox line for one waiting single
 * call, so that the call and its completion travel in the line the worker
 * polls anyway. done.word holds the XC_SLOT_* bits; fn, arg, done.waiter (and
 * xc_cpu.slot_flow) are written by the holder of xc_cpu.slot_claim before it
 * publishes the call, and read by the worker after.
 */
struct xc_slot {
	struct xc__sync done;
	xc_func_t fn;
	void *arg;
};

/*
 * One CPU. The first cache line is the mailbox: senders write it (push, the
 * slot) and the idle worker polls it, so a call to an idle worker costs one
 * line transfer there and one back. What follows is kept off that line:
 * counters that senders bump, state of the worker alone, and cold state that
 * the worker polls (ctl) but others write only to take the CPU offline.
 */
struct xc_cpu {
	/* mailbox: written by senders, polled by the worker */
	_Atomic(struct xc__link *) callq __xc_aligned;
	_Atomic(struct xc__link *) workq;
	_Atomic(struct xc__link *) urgentq;	/* XC_URGENT calls */
	_Atomic uint32_t idle;		/* enum xc_idle_state; futex word */
	uint32_t slot_flow;		/* the slot call's trace flow id */
	struct xc_slot slot;

	/* counters bumped by senders and waiters, and the slot claim; the worker's loops never read them */
	_Atomic uint64_t kicks_sent __xc_aligned;
	_Atomic uint64_t kicks_elided;
	_Atomic uint64_t kicks_coalesced;
	_Atomic uint64_t free_rides;
	_Atomic uint64_t signals_sent;
	_Atomic uint64_t stuck_reports;
	_Atomic uint32_t slot_claim;	/* 1: a sender holds the slot (slot.c) */

	/* worker-private: written only by this CPU's worker thread */
	_Atomic uint64_t calls __xc_aligned;
	_Atomic uint64_t sleeps;
	_Atomic uint64_t wakeups;
	_Atomic uint64_t work_run;
	_Atomic long poll_ns;		/* adaptive window; read by xc_stats_get */
	_Atomic uint64_t urgent_calls;	/* written only by the worker's signal handler */
	_Atomic uint64_t displaced;	/* runs that ended on another CPU; the handler bumps it too */
	_Atomic bool os_recheck;	/* a run ended elsewhere: the task loop runs the full check */
	struct xc__link *work_head;	/* taken work items, FIFO, not yet run */
	struct xc__link *work_tail;
	bool slot_running;		/* the slot's call is running: not pending again */
	/* what the worker runs now, for stuck reports: written by it, read by waiters */
	_Atomic int cur_kind;		/* XC_ACT_* */
	_Atomic uint32_t cur_seq;	/* bumped at every start: a waiter tells whether it changed */
	_Atomic(const void *) cur_fn;
	_Atomic uint64_t cur_since_ns;	/* a work item's start (CLOCK_MONOTONIC_COARSE); 0 for calls */

	/* lifecycle: cold */
	_Atomic uint32_t ctl __xc_aligned;	/* XC_CTL_*: written by hotplug/exit, read by the worker */
	int cpu;
	bool present;			/* in the runtime's set */
	_Atomic bool online;
	_Atomic int taken;		/* XC_TAKEN_*: written by the worker (follow.c) */
	bool user_offline;		/* xc_cpu_offline'd: under xc_rt.hotplug_lock */
	bool offline_by_os;		/* worker only: offline because taken, back by itself */
	_Atomic uint32_t park;		/* XC_PARK_*: futex word of a parked worker */
	struct xc_boot *boot;		/* the starter's handle on the handshake, until bringup ends */
	pthread_t thread;
	int tid;			/* Linux thread id: target of urgent signals */
	bool thread_live;		/* thread created and not yet joined */
	struct xc__sync offline_done;	/* completed by the worker once drained */
	int llc_id, node_id;		/* topology: first CPU of the shared LLC; NUMA node */
};

_Static_assert(offsetof(struct xc_cpu, slot) + sizeof(struct xc_slot) <= XC_CACHELINE,
	       "the slot must fit in the mailbox line");

/* Resolved options (options.c). */
struct xc_config {
	cpu_set_t cpus;
	bool serial_bringup;
	long poll_ns;
	int (*cpu_init)(int cpu, void *arg);
	void *cpu_init_arg;
	unsigned bringup_timeout_ms;
	void (*report)(const char *line);
	unsigned ablate;
	bool verbose;
	int stuck_ms;			/* 0: off */
	const char *trace_file;		/* NULL: no tracing */
	unsigned trace_events;
	int urgent_signal;
	bool follow_os;			/* watch for the OS taking CPUs away (follow.c) */
	char trace_file_buf[256];	/* XCALL_TRACE's value, owned here */
};

/* What a worker is running (xc_cpu.cur_kind). */
enum { XC_ACT_NONE = 0, XC_ACT_CALL, XC_ACT_URGENT, XC_ACT_WORK };

enum { XC_RT_DOWN = 0, XC_RT_STARTING, XC_RT_UP, XC_RT_STOPPING };

struct xc_runtime {
	_Atomic int state;		/* XC_RT_*: acquire-loaded by every call */
	struct xc_config cfg;		/* written before state = UP, then read-only */
	int nr_cpus;
	int cpu_list[XC_MAX_CPUS];	/* the set, in CPU order */
	unsigned generation;
	pthread_mutex_t hotplug_lock;	/* serialises offline / online / exit */
	struct xc__sync boot_done;	/* bringup: one count per worker to report */
	_Atomic int urgent_senders;	/* urgent pushes between queueing and signalling */
};

extern struct xc_runtime xc_rt;
extern struct xc_cpu xc_cpus[XC_MAX_CPUS];
extern __xc_tls struct xc_cpu *xc_self;	/* this thread's CPU if it is a worker */
extern __xc_tls int xc_in_urgent;		/* inside the urgent signal handler */
extern __xc_tls volatile int xc_in_call;	/* inside a call's function: not interrupted */

/*
 * Whether calls are accepted: while up, and while xc_exit() drains, from
 * workers (a call or work item being drained may still call CPUs whose
 * queues are not closed yet; closed ones refuse with -ENXIO).
 */
static inline bool xc_rt_accepting(void)
{
	/* acquire: pairs with xc_init's release of UP, so cfg and the set are visible */
	int s = atomic_load_explicit(&xc_rt.state, memory_order_acquire);

	return xc_likely(s == XC_RT_UP) || (s == XC_RT_STOPPING && xc_self);
}

/* The CPU if calls are accepted and @cpu is in the runtime's set, else NULL. */
static inline struct xc_cpu *xc_cpu_get(int cpu)
{
	if (xc_unlikely(!xc_rt_accepting()))
		return NULL;
	if (xc_unlikely(cpu < 0 || cpu >= XC_MAX_CPUS || !xc_cpus[cpu].present))
		return NULL;
	return &xc_cpus[cpu];
}

static inline bool xc_ablated(unsigned bit)
{
	return xc_rt.cfg.ablate & bit;
}

/* Counters with one writer (the worker) need no read-modify-write. */
static inline void xc_stat_inc_own(_Atomic uint64_t *ctr)
{
	atomic_store_explicit(ctr, atomic_load_explicit(ctr, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

/* Counters that many senders bump. */
static inline void xc_stat_inc_shared(_Atomic uint64_t *ctr)
{
	atomic_fetch_add_explicit(ctr, 1, memory_order_relaxed);
}

/* What a waiting caller waits for: named in stuck reports. */
struct xc_waitinfo {
	xc_func_t fn;
	void *arg;
	const int *cpus;
	int ncpus;
};

/*
 * A completion word (struct xc__sync.word): the count of targets still to
 * run the function, and bit 31 once the waiter may sleep (kick.c). The slot's
 * word (slot.c) holds two more bits instead of a count.
 */
#define XC_SYNC_COUNT     0x00ffffffu
#define XC_SLOT_PUBLISHED (1u << 29)
#define XC_SLOT_CLOSED    (1u << 30)
#define XC_SYNC_SLEEPING  (1u << 31)

/* kick.c: the wakeup protocol */
void xc_kick(struct xc_cpu *c);
typedef bool (*xc_ready_fn)(struct xc_cpu *c, void *ctx);
bool xc_idle_wait(struct xc_cpu *c, xc_ready_fn ready, void *ctx, long window_ns,
		  uint64_t deadline_ns, long sleep_limit_ns);
long xc_poll_window(struct xc_cpu *c);
void xc_idle_state_set(struct xc_cpu *c, uint32_t state);
void xc_sync_init(struct xc__sync *s, uint32_t count);
void xc_sync_complete(struct xc__sync *s);
void xc_sync_wait_rest(struct xc__sync *s, uint32_t busy, const struct xc_waitinfo *wi);
void xc_sync_wake(struct xc__sync *s, struct xc_cpu *waiter);
int xc_sync_wait_until(struct xc__sync *s, uint64_t deadline_ns);
bool xc_sync_done(const struct xc__sync *s);

/* Owner only: whether @c's slot holds a call to run (slot.c). Part of the W2 re-check. */
static inline bool xc_slot_pending(struct xc_cpu *c)
{
	/* seq_cst: a W2 re-check load of the wakeup protocol (kick.c) */
	return !c->slot_running &&
	       (atomic_load_explicit(&c->slot.done.word, memory_order_seq_cst) & XC_SLOT_PUBLISHED);
}

/* Owner only: whether calls wait to run on @c. */
static inline bool xc_calls_pending(struct xc_cpu *c)
{
	/* seq_cst: this is the W2 re-check of the wakeup protocol (kick.c) */
	return xc_slot_pending(c) ||
	       xc_llist_nonempty(&c->callq, memory_order_seq_cst) ||
	       xc_llist_nonempty(&c->urgentq, memory_order_seq_cst);
}

/* Whether completion word @w is done: no count left (@busy 0), or the @busy bit clear. */
static inline bool xc_sync_word_done(uint32_t w, uint32_t busy)
{
	return !(w & (busy ? busy : XC_SYNC_COUNT));
}

/* Every waiter first spins this often without reading the clock. */
#define XC_WAITER_FAST_SPINS 256

/*
 * The first phase of every wait: a short spin without the clock, inline
 * because most calls complete in it, and on the path from seeing a
 * completion back to the caller every call and every setup lengthens the
 * round trip. A worker that finds its own calls pending stops, to run them.
 * True if done.
 */
static inline bool xc_sync_spin(struct xc__sync *s, uint32_t busy)
{
	struct xc_cpu *self = xc_self;

	for (int i = 0; i < XC_WAITER_FAST_SPINS; i++) {
		/* seq_cst: acquires the callee's effects; a W2 load when the waiter is a worker */
		if (xc_sync_word_done(atomic_load_explicit(&s->word, memory_order_seq_cst), busy))
			return true;
		if (self && xc_calls_pending(self))
			break;
		xc_cpu_relax();
	}
	return false;
}

/*
 * Wait for a call to complete, reporting it if it gets stuck: until the
 * count is zero (@busy 0), or until the word no longer has the @busy bit
 * (slot.c). After the spin, the rest of the wait is kick.c's.
 */
static inline void xc_sync_wait(struct xc__sync *s, uint32_t busy, const struct xc_waitinfo *wi)
{
	if (!xc_sync_spin(s, busy))
		xc_sync_wait_rest(s, busy, wi);
}

/* call.c */
void xc_call_invoke(struct xc_cpu *c, xc_func_t fn, void *arg, int from, uint32_t flow,
		    bool urgent);
int xc_run_calls(struct xc_cpu *c);
int xc_run_urgent(struct xc_cpu *c);
void xc_call_returned(struct xc_cpu *c);
int xc_drain_calls(struct xc_cpu *c);

/* slot.c: the fast slot for waiting single calls */
int xc_slot_call(struct xc_cpu *c, xc_func_t fn, void *arg, const struct xc_waitinfo *wi);
int xc_slot_run(struct xc_cpu *c);
int xc_slot_close(struct xc_cpu *c);
void xc_slot_open(struct xc_cpu *c);

/* stuck.c: a waiting caller's watch; costs nothing until the wait gets long */
#define XC_STUCK_DESCRIBE 4	/* targets whose activity a report describes */
struct xc_stuck_seen {
	uint32_t seq;		/* a target's xc_cpu.cur_seq ... */
	uint64_t ns;		/* ... seen unchanged since then (xc_now_ns) */
};
struct xc_stuck {
	const struct xc_waitinfo *wi;
	uint64_t start_ns, next_ns, interval_ns;
	unsigned reports;
	struct xc_stuck_seen seen[XC_STUCK_DESCRIBE];	/* per described target */
};
uint64_t xc_stuck_deadline(struct xc_stuck *st);
void xc_stuck_check(struct xc_stuck *st);
void xc_stuck_end(struct xc_stuck *st);
uint64_t xc_coarse_ns(void);

/*
 * What the worker runs, for stuck reports (stuck.c). A call's start reads no
 * clock: on this path every instruction delays the completion its caller
 * spins on, and a clock read there was measured to cost more than the rest
 * of the bookkeeping together. A waiter that reports a stuck call bounds its
 * age from the sequence number instead; a work item, which is not on a
 * waiting caller's path, is stamped with the coarse clock.
 */
struct xc_activity {
	int kind;
	const void *fn;
	uint64_t since_ns;
};

/*
 * Note that @c's worker starts running @fn (an XC_ACT_* @kind) since
 * @since_ns (0: not stamped); *@outer keeps what it ran before, which a call
 * nested in a work item or an urgent call interrupting one interrupts.
 */
static inline void xc_activity_begin(struct xc_cpu *c, int kind, const void *fn, uint64_t since_ns,
				     struct xc_activity *outer)
{
	/* relaxed, all: a snapshot for diagnostics, never for synchronisation; only this thread writes */
	if (xc_rt.cfg.stuck_ms <= 0)
		return;
	outer->kind = atomic_load_explicit(&c->cur_kind, memory_order_relaxed);
	if (outer->kind != XC_ACT_NONE) {
		outer->fn = atomic_load_explicit(&c->cur_fn, memory_order_relaxed);
		outer->since_ns = atomic_load_explicit(&c->cur_since_ns, memory_order_relaxed);
	}
	atomic_store_explicit(&c->cur_fn, fn, memory_order_relaxed);
	atomic_store_explicit(&c->cur_since_ns, since_ns, memory_order_relaxed);
	atomic_store_explicit(&c->cur_seq, atomic_load_explicit(&c->cur_seq, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	atomic_store_explicit(&c->cur_kind, kind, memory_order_relaxed);
}

/*
 * The activity begun with @outer has ended: the worker runs *@outer again.
 * The sequence number stays bumped, so a waiter that saw the outer activity
 * before the nested one cannot take the two for one long activity.
 */
static inline void xc_activity_end(struct xc_cpu *c, const struct xc_activity *outer)
{
	if (xc_rt.cfg.stuck_ms <= 0)
		return;
	if (outer->kind != XC_ACT_NONE) {
		atomic_store_explicit(&c->cur_fn, outer->fn, memory_order_relaxed);
		atomic_store_explicit(&c->cur_since_ns, outer->since_ns, memory_order_relaxed);
	}
	atomic_store_explicit(&c->cur_kind, outer->kind, memory_order_relaxed);
}

/* The CPU the calling thread runs on now: the rseq area's cpu_id, else sched_getcpu(). */
static inline int xc_running_cpu(void)
{
#ifdef XC_HAVE_RSEQ
	if (xc_likely(__rseq_size > 0)) {
		const struct rseq *rs = (const struct rseq *)((const char *)__builtin_thread_pointer() +
							      __rseq_offset);
		/* volatile: the kernel rewrites it whenever it moves the thread */
		int cpu = (int)*(const volatile uint32_t *)&rs->cpu_id;

		if (xc_likely(cpu >= 0))
			return cpu;
	}
#endif
	return sched_getcpu();
}

/* follow.c: the cheap check, whether @c's worker runs on another CPU now. */
static inline bool xc_os_elsewhere(const struct xc_cpu *c)
{
	return xc_rt.cfg.follow_os && xc_unlikely(xc_running_cpu() != c->cpu);
}

/* After a call's function or a work item returned on @c's worker: count a run that ended elsewhere. */
static inline void xc_os_after_run(struct xc_cpu *c)
{
	if (xc_os_elsewhere(c)) {
		xc_stat_inc_shared(&c->displaced);
		/* relaxed: read by this same thread's task loop */
		atomic_store_explicit(&c->os_recheck, true, memory_order_relaxed);
	}
}

/* follow.c */
#define XC_OS_WATCH_NS      100000000L	/* a sleeping worker looks at its CPU this often */
#define XC_OS_PARK_WATCH_NS  50000000L	/* a parked one, for its CPU's return */
int xc_pin_self(int cpu);
bool xc_os_check(struct xc_cpu *c);
bool xc_os_come_back(struct xc_cpu *c);
const char *xc_taken_name(int taken);

/* urgent.c */
int xc_urgent_install(void);
void xc_urgent_restore(void);
void xc_kick_urgent(struct xc_cpu *c);
bool xc_urgent_enter(void);
void xc_urgent_leave(void);

/* work.c */
bool xc_work_queued(struct xc_cpu *c);
bool xc_run_one_work(struct xc_cpu *c);
int xc_drain_work(struct xc_cpu *c);

/* fork.c, and each file's part in it */
void xc_fork_handlers_register(void);
void xc_pool_fork_prepare(void);
void xc_pool_fork_parent(void);
void xc_pool_fork_child(void);
void xc_urgent_fork_child(void);

/* pool.c */
int xc_pool_prepare(void);
struct xc_call *xc_pool_get(void);
void xc_pool_put_local(struct xc_call *call);
struct xc_pool_batch {
	void *owner;
	struct xc__link *first, *last;
};
void xc_pool_batch_add(struct xc_pool_batch *b, struct xc_call *call);
void xc_pool_batch_flush(struct xc_pool_batch *b);

/* worker.c */
void *xc_worker_main(void *arg);

/* hotplug.c */
int xc_hotplug_lock(void);
void xc_hotplug_unlock(void);
void xc_cpu_open(struct xc_cpu *c);
void xc_park_release(struct xc_cpu *c, uint32_t how);

/* options.c */
int xc_config_resolve(const struct xc_opts *opts, struct xc_config *cfg);
void xc_config_print(const struct xc_config *cfg);

/* topology.c */
void xc_topology_read(struct xc_cpu *c);
int xc_sysfs_cpulist(const char *path, cpu_set_t *out);

/* report.c */
void xc_report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *xc_symbol(const void *fn, char *buf, size_t n);

#endif /* XC_INTERNAL_H */
