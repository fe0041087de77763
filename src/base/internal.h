/* SPDX-License-Identifier: MIT */
/*
 * internal.h - the state libxcall's files share: the per-CPU structure and
 * its mailbox, the runtime, the resolved options, thread-local context, the
 * diagnostics choke point. What each file offers the others is declared in
 * a header of its own, included where it is used.
 *
 * The files and their layers: docs/layout.md.
 */
#ifndef XC_INTERNAL_H
#define XC_INTERNAL_H

#include "xcall.h"
#include "base/llist.h"
#include "base/ablate.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
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
 * Where a CPU moves lines in 128-byte pairs (Intel's adjacent-line
 * prefetch), two groups that different threads write must not share one:
 * the hot shared structures align their groups to a pair (make count-lines
 * counts both sizes).
 */
#define XC_PAIR       (2 * XC_CACHELINE)
#define __xc_pair_aligned __attribute__((aligned(XC_PAIR)))
/*
 * Thread-local state: initial-exec, so that libxcall.so reaches it with one
 * %fs-relative load, as the static library does, rather than a call to
 * __tls_get_addr on every call path. It is a few words, well inside the
 * static TLS that glibc keeps spare for libraries loaded with dlopen().
 */
#define __xc_tls      _Thread_local __attribute__((tls_model("initial-exec")))
#define xc_likely(x)   __builtin_expect(!!(x), 1)
#define xc_unlikely(x) __builtin_expect(!!(x), 0)

/* CLOCK_MONOTONIC in ns. Inline: a wait reads it in place, calling no other file. */
static inline uint64_t xc_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

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


struct xc_ring;

/* Worker idle states: the futex word of the kick protocol (wake.c). */
enum xc_idle_state {
	XC_IDLE_RUNNING  = 0, /* running calls or work; checks its queue before idling */
	XC_IDLE_POLLING  = 1, /* idle, spinning on its queue: senders need no syscall */
	XC_IDLE_SLEEPING = 2, /* idle, in (or entering) futex_wait on this word */
	XC_IDLE_WAKING   = 3, /* a sender moved it out of SLEEPING and will futex-wake it */
	XC_IDLE_WOKENUP  = 4, /* that sender's futex wake has been issued */
	XC_IDLE_SLEEPING_FD = 5, /* an attached thread sleeps in its own loop: kick its eventfd */
};

/* Requests from xc_cpu_offline() / xc_exit() to a worker (xc_cpu.ctl). */
enum { XC_CTL_NONE = 0, XC_CTL_OFFLINE = 1, XC_CTL_EXIT = 2 };

/* A parked or booting worker waits on xc_cpu.park for one of these. */
enum { XC_PARK_WAIT = 0, XC_PARK_RUN = 1, XC_PARK_EXIT = 2 };

/* Bringup report of a worker (struct xc_boot.state). */
enum { XC_BOOT_NONE = 0, XC_BOOT_STARTING, XC_BOOT_ALIVE, XC_BOOT_FAILED, XC_BOOT_ABANDONED };

/* Why the OS took a CPU from its worker (xc_cpu.taken; follow.c). */
enum { XC_TAKEN_NONE = 0, XC_TAKEN_OFFLINE, XC_TAKEN_AFFINITY, XC_TAKEN_CPUSET };

/* Call descriptor kinds (xc_call._flags). */
#define XC_CALL_WAITED     (1u << 0)  /* someone waits: complete _completion after fn */
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
	struct xc__completion done;
	_Atomic(xc_func_t) fn;		/* atomic: a stuck report reads it from outside (stuck.c) */
	void *arg;
};

/*
 * A completion word (struct xc__completion.word): the count of targets still to
 * run the function, and bit 31 once the waiter may sleep (wait.c). The slot's
 * word (slot.c) holds two more bits instead of a count.
 */
#define XC_DONE_COUNT     0x00ffffffu
#define XC_SLOT_PUBLISHED (1u << 29)
#define XC_SLOT_CLOSED    (1u << 30)
#define XC_DONE_SLEEPING  (1u << 31)

/*
 * The per-CPU counters of XC_STATS_COUNTERS (xcall.h), each in the group of
 * struct xc_cpu that its writer writes: XC__SENDER_COUNTER makes the
 * senders' fields, XC__WORKER_COUNTER the worker's, and those READ when
 * asked (stats.c) have none. A counter added to the list gets its field
 * here by itself.
 */
#define XC__COUNTER_IN_SENDER_SENDER(name) _Atomic uint64_t name;
#define XC__COUNTER_IN_SENDER_WORKER(name)
#define XC__COUNTER_IN_SENDER_READ(name)
#define XC__COUNTER_IN_WORKER_SENDER(name)
#define XC__COUNTER_IN_WORKER_WORKER(name) _Atomic uint64_t name;
#define XC__COUNTER_IN_WORKER_READ(name)
#define XC__SENDER_COUNTER(name, by, kind, meaning) XC__COUNTER_IN_SENDER_##by(name)
#define XC__WORKER_COUNTER(name, by, kind, meaning) XC__COUNTER_IN_WORKER_##by(name)

/*
 * One CPU, in groups by writer, each a struct of its own that begins a
 * 128-byte pair (XC_PAIR): a write to one group then takes no line of
 * another's readers. The mailbox comes first: senders write it (push, the
 * slot) and the idle worker polls it, so a call to an idle worker costs one
 * line transfer there and one back. The slot claim is a pair of its own
 * (slot.c). What follows is kept off those lines: the counters senders bump,
 * the worker's own state, and the CPU's life, cold but for what every
 * sender reads once (cpu, present, online) and ctl, which the worker polls.
 */
struct xc_cpu {
	/* the mailbox: written by senders, polled by the worker */
	struct xc_cpu_mbox {
		_Atomic(struct xc__link *) callq;
		_Atomic(struct xc__link *) workq;
		_Atomic(struct xc__link *) urgentq;	/* XC_URGENT calls */
		_Atomic uint32_t idle;		/* enum xc_idle_state; futex word */
		uint32_t slot_flow;		/* the slot call's trace flow id */
		struct xc_slot slot;
	} mbox __xc_pair_aligned;

	/* counted by senders and waiters; the worker's loops never read it */
	struct xc_cpu_sent {
		_Atomic uint64_t fd_kicks_done;	/* eventfd kicks whose write is done (attach.c) */
		XC_STATS_COUNTERS(XC__SENDER_COUNTER)
		int kick_fd;			/* an attached thread's eventfd; -1: none (attach.c) */
	} sent __xc_aligned;

	/*
	 * 1: a sender holds the slot (slot.c). Alone in its pair, apart from the
	 * mailbox's: the worker's polls of the mailbox fetch the line beside it too
	 */
	_Atomic uint32_t slot_claim __xc_pair_aligned;

	/*
	 * written only by this CPU's worker thread (its counters urgent_calls and
	 * displaced by its signal handler too); read by others as snapshots
	 */
	struct xc_cpu_worker {
		_Atomic long poll_ns;		/* adaptive window; read by xc_stats_get */
		XC_STATS_COUNTERS(XC__WORKER_COUNTER)
		uint64_t poll_quiet_until;	/* no idle poll before this (xc_now_ns); 0: none: its CPU was shared (wake.c) */
		uint32_t poll_cuts;		/* polls ended by a late yield in a row: the quiet doubles with each */
		_Atomic bool os_recheck;	/* a run ended elsewhere: the task loop runs the full check */
		/*
		 * The slot's call is running (slot.c): a wait inside it must not run
		 * it again, and a stuck report names it (stuck.c; relaxed, a snapshot)
		 */
		_Atomic bool slot_running;
		uint64_t fd_kicks_seen;		/* attached: eventfd kicks it saw claimed (attach.c) */
		uint64_t fd_kicks_drained;	/* ... and read off the eventfd */
		uint64_t os_watch_ns;		/* attached, taken by the OS: its next look (xc_coarse_ns) */
		bool in_task_loop;		/* attached: inside its xc_poll()'s task loop */
		/*
		 * Its thread's stack address below which a wait runs only urgent calls
		 * and the slot's, and refuses waiting calls (wait.c, "Serving while
		 * waiting"); 0: no bound known.
		 */
		uintptr_t serve_floor;
		bool serve_floor_told;		/* reported once that a wait reached it */
		/*
		 * Its last serve was below the floor: its rings' nowait calls wait
		 * for its nest to unwind, so a sender whose ring to it is full gets
		 * -ELOOP (proto/ring.c, xc_ring_room). Written by its thread only.
		 */
		_Atomic bool deep;
		struct xc__link *work_head;	/* taken work items, FIFO, not yet run */
		struct xc__link *work_tail;
		struct xc_ring *rings_held;	/* call rings linked to it and taken from callq (ring.c) */
		struct xc_ring **rings_held_end;	/* the last held ring's held_next, or &rings_held */
		struct xc_ring *rings_look;	/* the held ring the idle poll looks at first; NULL: none held */
		struct xc_ring *rings_dropped;	/* unlinked with calls in them, their owner's push to come (ring.c) */
		/* what the worker runs now, for stuck reports: written by it, read by waiters */
		_Atomic int cur_kind;		/* XC_ACT_* */
		_Atomic uint32_t cur_seq;	/* bumped at every start: a waiter tells whether it changed */
		_Atomic(const void *) cur_fn;
		_Atomic uint64_t cur_since_ns;	/* a work item's start (CLOCK_MONOTONIC_COARSE); 0 for calls */
		_Atomic uint64_t barrier_since_ns;	/* in membarrier since (xc_now_ns; barrier.c); 0: not */
	} worker __xc_pair_aligned;

	/*
	 * the CPU's life: which CPU it is, whether it is up, hotplug and bringup;
	 * written by the starter, hotplug (under xc_rt.hotplug_lock) and the
	 * worker, as each field says
	 */
	struct xc_cpu_life {
		_Atomic uint32_t ctl;		/* XC_CTL_*: written by hotplug/exit, read by the worker */
		int cpu;
		bool present;			/* in the runtime's set */
		bool attach_cpu;		/* in xc_opts.attach: an application thread runs it */
		bool attached;			/* a thread is attached, its attach done: under xc_rt.hotplug_lock */
		bool attaching;			/* a thread runs its attach (the cpu_init hook): under the lock too */
		bool urgent_was_blocked;	/* attached: its thread blocked the urgent signal before */
		_Atomic bool online;
		_Atomic int taken;		/* XC_TAKEN_*: written by the worker (follow.c) */
		bool user_offline;		/* xc_cpu_offline'd: under xc_rt.hotplug_lock */
		bool offline_by_os;		/* worker only: offline because taken, back by itself */
		_Atomic uint32_t park;		/* XC_PARK_*: futex word of a parked worker */
		struct xc_boot *boot;		/* the starter's handle on the handshake, until bringup ends */
		pthread_t thread;
		int tid;			/* Linux thread id: target of urgent signals */
		bool thread_live;		/* thread created and not yet joined */
		struct xc__completion offline_done;	/* completed by the worker once drained */
		/* an offline request from a worker, and the answer (hotplug.c, wait.c) */
		_Atomic int ctl_from;		/* the requesting worker's CPU, -1 a plain thread */
		int offline_result;		/* 0, or -EDEADLK: published by offline_done */
		_Atomic uint64_t served_empty;	/* its hotplug waits' serves that found nothing, the last one's token */
		_Atomic uint32_t lock_wait;	/* XC_LOCK_* and its spin's token: waits for the hotplug lock (wait.h) */
		/*
		 * Threads on this CPU that wait for this worker (wait.c, plain_wait):
		 * written from this CPU, so in the cold lines, read by the worker
		 * after each run (xc_give_way, wake.h)
		 */
		_Atomic uint32_t waiters_here;
		int llc_id, node_id;		/* topology: first CPU of the shared LLC; NUMA node */
	} life __xc_pair_aligned;
};

_Static_assert(offsetof(struct xc_cpu, mbox.slot) + sizeof(struct xc_slot) <= XC_CACHELINE,
	       "the slot must fit in the mailbox line");
#define XC_PAIR_OF(field) (offsetof(struct xc_cpu, field) / XC_PAIR)
_Static_assert(XC_PAIR_OF(slot_claim) != XC_PAIR_OF(mbox.slot) && XC_PAIR_OF(slot_claim) != XC_PAIR_OF(sent.kick_fd) &&
	       XC_PAIR_OF(slot_claim) != XC_PAIR_OF(worker.calls),
	       "the slot claim must be alone in its pair: the mailbox's polls fetch the pair (slot.c)");
_Static_assert(XC_PAIR_OF(mbox) != XC_PAIR_OF(worker) && XC_PAIR_OF(worker) != XC_PAIR_OF(life) &&
	       offsetof(struct xc_cpu, worker) % XC_PAIR == 0 && offsetof(struct xc_cpu, life) % XC_PAIR == 0,
	       "the worker's and the life's groups each begin a pair of their own");
/*
 * xc_cpus is pair-aligned, so each CPU's groups pair alike: the mailbox with
 * the senders' counters, the slot claim alone, the worker's own lines
 * together, the cold ones together. At 64-byte alignment the link decided
 * the pairing, and in one of the two the worker's activity words (written at
 * every call) shared a pair with present, which every sender reads: a line
 * more per nowait call.
 */
_Static_assert(sizeof(struct xc_cpu) % XC_PAIR == 0, "every CPU's pairs begin alike");

/* Resolved options (options.c). */
struct xc_config {
	cpu_set_t cpus;
	cpu_set_t attach;		/* CPUs of cpus that application threads attach to */
	bool serial_bringup;
	long poll_ns;
	int (*cpu_init)(int cpu, void *arg);
	void *cpu_init_arg;
	unsigned bringup_timeout_ms;
	void (*report)(void *ctx, const char *line);
	void *report_ctx;
	unsigned ablate;
	bool verbose;
	int stuck_ms;			/* 0: off */
	const char *trace_file;		/* NULL: no tracing */
	unsigned trace_events;
	int urgent_signal;
	bool follow_os;			/* watch for the OS taking CPUs away (follow.c) */
	unsigned ring_entries;		/* entries of each call ring (ring.c), a power of two */
	unsigned stack_kb;		/* a worker thread's stack in KiB; 0: the process's default */
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
	unsigned spin_yield;		/* xc_cpu_relax() passes in about 20 us (xc_spin_calibrate) */
	/*
	 * Waiting calls to CPUs below it take the straight path into the slot
	 * (call.c, slot.c): set once up, 0 while down or stopping, tracing, or with the
	 * slot ablated. Every CPU below it that is not in the set has its slot
	 * closed, so that path needs no other look at the runtime.
	 */
	_Atomic int slot_fast_cpus;
	/*
	 * Nowait calls to CPUs below it take the straight path into the calling
	 * thread's ring (call.c): set once up, 0 while down or stopping,
	 * tracing, or with the rings or coalescing ablated. A ring exists only to a CPU of the runtime that made it
	 * (xc_ring_table.generation), so that path needs no other look either.
	 */
	_Atomic int ring_fast_cpus;
	pthread_mutex_t hotplug_lock;	/* serialises offline / online / exit */
	struct xc__completion boot_done;	/* bringup: one count per worker to report */
	_Atomic int urgent_senders;	/* urgent pushes between queueing and signalling */
};

extern struct xc_runtime xc_rt;
extern struct xc_cpu xc_cpus[XC_MAX_CPUS] __xc_pair_aligned;

/*
 * Spins that yield. A spin that may last longer than about 20 us (the idle
 * poll past its first window, a waiting worker's poll, a plain thread's
 * forever wait) calls sched_yield() every xc_rt.spin_yield passes, so a
 * thread that shares the CPU and is runnable (a compute thread, or the
 * waiter whose call this CPU's worker must run) gets it within about 20 us
 * instead of a whole scheduler slice; with nothing else runnable the yield
 * returns at once. The count is of passes, not time: no clock read is
 * added to the spin. It starts afresh with every spin and every call run.
 * A poller that yielded stays POLLING: senders skip its wakeup, and a call
 * waits until the scheduler gives the CPU back (xcall.h, XC_POLL_FOREVER);
 * so a window's poll ends at a yield that came back late (wake.c, poll_cut).
 * The scheduler still keeps a share for a spinner that stays runnable
 * (EEVDF only moves a yielder's deadline): a yield shortens the other
 * thread's wait, it does not hand the CPU over (README, "Spins that yield").
 */
static inline unsigned xc_spin_yield_start(void)
{
	return xc_rt.spin_yield;
}

static inline void xc_spin_pass(unsigned *left)
{
	if (xc_unlikely(--*left == 0)) {
		sched_yield();
		*left = xc_rt.spin_yield;
	}
}

/* At xc_init: xc_rt.spin_yield from the time of a few hundred xc_cpu_relax() (runtime.c). */
void xc_spin_calibrate(void);

/* The monotonic clock at the kernel's tick resolution, without a syscall's cost (runtime.c). */
uint64_t xc_coarse_ns(void);
/*
 * This thread's place in libxcall, in one thread-local object: its fields
 * then share one address, which the call paths compute once. Signal
 * handlers on this thread write it and put back what they found, so plain
 * (volatile) accesses suffice.
 *   inside, and marks (in_urgent, in_fd_sleep, in_urgent_fn): the
 *        straight paths (call.c) are taken only when both are 0
 *        (xc_tls_clear). Two 32-bit loads, not one 64-bit: the last call's
 *        xc_leave() stored inside alone, and a load wider than a store
 *        still in the store buffer cannot take its value from it: it waits
 *        until that store, and every store before it, reach the cache. On a
 *        stream of nowait calls those are the ring's lines, each a transfer
 *        (measured: 15 ns a call became 45).
 *   in_call: calls whose function this thread runs, nested: the urgent
 *        handler defers while it is not 0 (urgent.c).
 */
struct xc_tls_state {
	volatile int inside;			/* in libxcall's code (thread.h): a handler is refused */
	union {
		struct {
			volatile uint8_t in_urgent;	/* inside the urgent signal handler (urgent.c) */
			volatile uint8_t in_fd_sleep;	/* attached, between a sleep_begin that said sleep and its end (wake.c) */
			volatile uint8_t in_urgent_fn;	/* in an urgent call's function, wherever it runs (thread.h, the bracket) */
			uint8_t unused[1];
		};
		volatile uint32_t marks;
	};
	volatile int in_call;
	struct xc_cpu *self;		/* this thread's CPU if it is a worker or attached */
	struct xc_boot *boot;		/* in a worker's bringup hook: its handshake (worker.c) */
};
extern __xc_tls struct xc_tls_state xc_tls;
#define xc_self      (xc_tls.self)
#define xc_in_urgent (xc_tls.in_urgent)
#define xc_in_call   (xc_tls.in_call)

/* This thread is in nobody's way: outside libxcall and listed, no mark set (above). */
static inline bool xc_tls_clear(void)
{
	return !(xc_tls.inside | xc_tls.marks);
}

/*
 * The rules of an urgent function hold here (xcall.h, "Urgent calls"): no
 * waiting call, no hotplug, no detach. They hold wherever it runs, in the
 * signal handler, the idle loop or right after a call, so that what it may
 * do does not depend on how busy its worker was.
 */
static inline bool xc_urgent_rules(void)
{
	return xc_tls.in_urgent | xc_tls.in_urgent_fn;
}

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
	if (xc_unlikely(cpu < 0 || cpu >= XC_MAX_CPUS || !xc_cpus[cpu].life.present))
		return NULL;
	return &xc_cpus[cpu];
}

static inline bool xc_ablated(unsigned bit)
{
	return xc_rt.cfg.ablate & bit;
}

/*
 * An attached thread between xc_worker_sleep_begin() and _end(): its idle
 * word announces the eventfd sleep (SLEEPING_FD, or WAKING / WOKENUP once a
 * sender claimed a kick), and a wait's own idle states would overwrite it
 * and lose the claim's count (wake.c), so waits there get -EDEADLK.
 */
static inline bool xc_in_fd_sleep(void)
{
	return xc_tls.in_fd_sleep;
}

/* Counters with one writer (the worker) need no read-modify-write. */
static inline void xc_stat_inc_own(_Atomic uint64_t *ctr)
{
#if defined(__x86_64__) && !defined(XC_SANITIZED)
	/* one instruction where the C11 load and store take three; aligned: readers see it whole */
	__asm__ volatile("addq $1, %0" : "+m"(*(uint64_t *)ctr));
#else
	atomic_store_explicit(ctr, atomic_load_explicit(ctr, memory_order_relaxed) + 1,
			      memory_order_relaxed);
#endif
}

/* Counters that many senders bump. */
static inline void xc_stat_inc_shared(_Atomic uint64_t *ctr)
{
	atomic_fetch_add_explicit(ctr, 1, memory_order_relaxed);
}

/* report.c */
void xc_report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* symbol.c */
const char *xc_symbol(const void *fn, char *buf, size_t n);

#endif /* XC_INTERNAL_H */
