/* SPDX-License-Identifier: MIT */
/*
 * baselines.h - what libxcall is compared against: thread-to-thread
 * ping-pongs and call queues (baselines.c) and the pre-2008
 * smp_call_function model (model2008.c). All run on threads pinned before
 * they start, warm up the same number of operations, and are timed by the
 * same clock into the same histogram as the libxcall cases.
 */
#ifndef BENCH_BASELINES_H
#define BENCH_BASELINES_H

#include "bench.h"

/* PP_CAS: the cache line handed over by compare-and-swap (core-to-core-latency's first bench) */
enum pp_kind { PP_CACHELINE, PP_FUTEX, PP_EVENTFD, PP_PIPE, PP_CONDVAR, PP_CAS, PP_NKINDS };

const char *pp_name(enum pp_kind k);
/* Warm-up round trips before timing: the same rule for every case. */
long warmup_iters(long iters);
/*
 * Round trips between the calling thread, pinned to cpu_a for the duration,
 * and a responder thread pinned to cpu_b. Each round trip goes into h in ns.
 * Returns the number timed, or -errno.
 */
long pp_run(enum pp_kind k, int cpu_a, int cpu_b, const struct budget *b, struct hist *h);

/*
 * The cache-line limit on a line the caller owns, from threads it runs
 * (pingpong's paired measurement runs it on libxcall's workers): one side
 * responds until the line reads PP_LINE_STOP, the other makes round trips,
 * counting in *seq from 0.
 */
#define PP_LINE_STOP UINT64_MAX

/* odd = ping, even = pong; inline, as the timed loops call it */
static inline void pp_line_round_trip(_Atomic uint64_t *line, uint64_t *seq)
{
	atomic_store_explicit(line, *seq + 1, memory_order_release);
	while (atomic_load_explicit(line, memory_order_acquire) != *seq + 2)
		cpu_relax();
	*seq += 2;
}

/*
 * The same handoff by compare-and-swap alone, as core-to-core-latency's first
 * bench does: each side spins on a CAS that succeeds once the other has moved
 * the count on; a round trip is two successful CASes.
 */
static inline void pp_line_cas_round_trip(_Atomic uint64_t *line, uint64_t *seq)
{
	uint64_t want = *seq;
	while (!atomic_compare_exchange_weak_explicit(line, &want, *seq + 1, memory_order_acq_rel,
						      memory_order_relaxed))
		want = *seq;
	*seq += 2;
}

static inline void pp_line_cas_respond(_Atomic uint64_t *line)
{
	for (uint64_t want = 1;; want += 2) {
		uint64_t v = want;
		while (!atomic_compare_exchange_weak_explicit(line, &v, want + 1, memory_order_acq_rel,
							      memory_order_relaxed)) {
			if (v == PP_LINE_STOP)
				return;
			v = want;
		}
	}
}

static inline void pp_line_respond(_Atomic uint64_t *line)
{
	for (uint64_t want = 1;; want += 2) {
		uint64_t v;
		while ((v = atomic_load_explicit(line, memory_order_acquire)) != want && v != PP_LINE_STOP)
			cpu_relax();
		if (v == PP_LINE_STOP)
			return;
		atomic_store_explicit(line, want + 1, memory_order_release);
	}
}

/*
 * The slot's handoff bare: libxcall's waiting call to a polling worker
 * (src/run/slot.c) with none of the library's code, on a line of the same shape.
 * The caller writes the call's fields, publishes it by CAS and spins loading
 * the word; the responder spins loading the word, reads the fields, calls the
 * function and frees the slot by exchange. Left out: the claim (a CAS on a line
 * that stays in the caller's cache), the kick decision (a load of a line the
 * worker does not write while polling), and everything the library does
 * around the call. So call / handoff is what the library's code costs, and
 * handoff / limit what the protocol's line pattern costs.
 */
struct pp_handoff {
	_Atomic uint32_t word;          /* 0 free, PP_HANDOFF_PUBLISHED, PP_HANDOFF_STOP */
	void (*fn)(void *);
	void *arg;
	void *waiter;
};
#define PP_HANDOFF_PUBLISHED 1u
#define PP_HANDOFF_STOP 2u

static inline void pp_handoff_round_trip(struct pp_handoff *h, void (*fn)(void *), void *arg)
{
	uint32_t w = 0;

	h->fn = fn;
	h->arg = arg;
	h->waiter = h;
	/* seq_cst, as the slot's publication: releases the fields to the responder */
	atomic_compare_exchange_strong_explicit(&h->word, &w, PP_HANDOFF_PUBLISHED,
						memory_order_seq_cst, memory_order_relaxed);
	/* acquire: the function's effects, as the slot's completion wait */
	while (atomic_load_explicit(&h->word, memory_order_acquire) == PP_HANDOFF_PUBLISHED)
		cpu_relax();
}

static inline void pp_handoff_respond(struct pp_handoff *h)
{
	for (;;) {
		uint32_t v;

		/* acquire: the caller's fields, as the worker's poll of its slot */
		while ((v = atomic_load_explicit(&h->word, memory_order_acquire)) == 0)
			cpu_relax();
		if (v == PP_HANDOFF_STOP)
			return;
		void (*fn)(void *) = h->fn;
		void *arg = h->arg;
		/* volatile read: kept, as the worker reads the waiter to wake it */
		(void)*(void *volatile *)&h->waiter;
		fn(arg);
		/* seq_cst, as the slot's completing exchange */
		atomic_exchange_explicit(&h->word, 0, memory_order_seq_cst);
	}
}

/*
 * Candidates for a handoff of fewer line transfers, bare as pp_handoff is:
 *
 * Split: the request and the completion on two lines, each written by one
 * side only (fn, arg and a sequence on the caller's line, the sequence
 * done on the responder's); each side spins loading the other's line. No
 * RMW at all; a round trip is, each way, a store to a line the other side
 * holds shared (an upgrade) and the other's load of it (a miss).
 *
 * CAS-spun: the slot's one line, with every spin a CAS for the value it
 * waits for, as the CAS limit spins: the line moves owned, once each way,
 * at the price of each side's failing CASes taking it from the other.
 */
struct pp_split {
	_Atomic uint32_t req;           /* the caller's line: sequence of the call, PP_SPLIT_STOP */
	void (*fn)(void *);
	void *arg;
	_Atomic uint32_t done __attribute__((aligned(CACHELINE)));     /* the responder's line */
};
#define PP_SPLIT_STOP UINT32_MAX

static inline void pp_split_round_trip(struct pp_split *h, void (*fn)(void *), void *arg)
{
	/* relaxed: only the caller writes req */
	uint32_t seq = atomic_load_explicit(&h->req, memory_order_relaxed) + 1;

	h->fn = fn;
	h->arg = arg;
	/* release: fn and arg before the responder's acquire of req */
	atomic_store_explicit(&h->req, seq, memory_order_release);
	/* acquire: the function's effects */
	while (atomic_load_explicit(&h->done, memory_order_acquire) != seq)
		cpu_relax();
}

static inline void pp_split_respond(struct pp_split *h)
{
	for (uint32_t want = 1;; want++) {
		uint32_t v;

		/* acquire: the caller's fn and arg */
		while ((v = atomic_load_explicit(&h->req, memory_order_acquire)) != want && v != PP_SPLIT_STOP)
			cpu_relax();
		if (v == PP_SPLIT_STOP)
			return;
		h->fn(h->arg);
		/* release: the function's effects before the caller's acquire */
		atomic_store_explicit(&h->done, want, memory_order_release);
	}
}

#define PP_CASSPUN_DONE 3u

static inline void pp_casspun_round_trip(struct pp_handoff *h, void (*fn)(void *), void *arg)
{
	uint32_t w = 0;

	h->fn = fn;
	h->arg = arg;
	/* seq_cst, as the slot's publication; the line is ours after the stores above */
	atomic_compare_exchange_strong_explicit(&h->word, &w, PP_HANDOFF_PUBLISHED,
						memory_order_seq_cst, memory_order_relaxed);
	/* acquire: the function's effects; each try takes the line, as the CAS limit's */
	for (w = PP_CASSPUN_DONE; !atomic_compare_exchange_weak_explicit(&h->word, &w, 0, memory_order_acquire,
									 memory_order_relaxed);
	     w = PP_CASSPUN_DONE)
		;
}

static inline void pp_casspun_respond(struct pp_handoff *h)
{
	for (;;) {
		uint32_t w = PP_HANDOFF_PUBLISHED;

		/* acquire: the caller's fields; each try takes the line, as the CAS limit's */
		while (!atomic_compare_exchange_weak_explicit(&h->word, &w, PP_HANDOFF_PUBLISHED,
							      memory_order_acquire, memory_order_relaxed)) {
			if (w == PP_HANDOFF_STOP)
				return;
			w = PP_HANDOFF_PUBLISHED;
		}
		h->fn(h->arg);
		/* release: the function's effects; the line is still ours unless the caller took it */
		atomic_store_explicit(&h->word, PP_CASSPUN_DONE, memory_order_release);
	}
}

/* ---- call queues for throughput (baselines.c) ---- */

/*
 * A bounded single-producer ring of calls, as thread-per-core programs pass
 * work between a pair of CPUs (Seastar's per-pair queues, rigtorp's
 * SPSCQueue): the producer's index and its cached copy of the consumer's on
 * one line, the consumer's index and its cached copy of the producer's on
 * another, the entries on lines of their own. Free-running 32-bit indices;
 * a push is two plain stores and a release store, a pop a release store,
 * and each side reads the other's index only when its cached copy says the
 * ring is full (producer) or empty (consumer). No RMW, no fence. As many
 * entries as libxcall's per-sender rings; the consumer spins.
 */
#define PP_RING_ENTRIES 256u

struct pp_ring_entry {
	void (*fn)(void *);
	void *arg;
};

struct pp_ring {
	/* the producer's line, in a 128-byte pair of its own as each group (as libxcall's rings) */
	_Alignas(2 * CACHELINE) _Atomic uint32_t head;  /* entries published (release) */
	uint32_t tail_seen;                             /* a tail read earlier, never ahead of tail */
	/* the consumer's line */
	_Alignas(2 * CACHELINE) _Atomic uint32_t tail;  /* entries taken (release: their slots are free) */
	uint32_t head_seen;                             /* a head read earlier */
	_Alignas(2 * CACHELINE) struct pp_ring_entry e[PP_RING_ENTRIES];
};

_Static_assert((PP_RING_ENTRIES & (PP_RING_ENTRIES - 1)) == 0, "indices wrap at 2^32");

struct pp_ring *pp_ring_new(void);      /* empty, zeroed; NULL without memory */
void pp_ring_free(struct pp_ring *r);

/* Producer: queue fn(arg), waiting while the ring is full. Inline, as a header-only queue is. */
static inline void pp_ring_push(struct pp_ring *r, void (*fn)(void *), void *arg)
{
	/* relaxed: only the producer writes head */
	uint32_t h = atomic_load_explicit(&r->head, memory_order_relaxed);

	if (h - r->tail_seen == PP_RING_ENTRIES) {
		/* acquire: the consumer read the entries it took before we overwrite them */
		while (h - (r->tail_seen = atomic_load_explicit(&r->tail, memory_order_acquire)) ==
		       PP_RING_ENTRIES)
			cpu_relax();
	}
	r->e[h % PP_RING_ENTRIES] = (struct pp_ring_entry){fn, arg};
	/* release: the entry before the index that publishes it */
	atomic_store_explicit(&r->head, h + 1, memory_order_release);
}

/*
 * Consumer: run what the ring holds now, each entry's slot freed before its
 * function runs, as libxcall's worker frees a ring entry. Returns how many ran.
 */
static inline int pp_ring_run(struct pp_ring *r)
{
	int n = 0;

	for (;;) {
		/* relaxed: only the consumer writes tail */
		uint32_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);

		if (t == r->head_seen) {
			/* acquire: pairs with the producer's release of head: the entries are written */
			r->head_seen = atomic_load_explicit(&r->head, memory_order_acquire);
			if (t == r->head_seen)
				return n;
		}
		struct pp_ring_entry e = r->e[t % PP_RING_ENTRIES];
		/* release: the entry is read out before the producer may write it again */
		atomic_store_explicit(&r->tail, t + 1, memory_order_release);
		e.fn(e.arg);
		n++;
	}
}

/* Consumer: whether the ring holds calls (a look; pp_ring_run's acquire orders the entries). */
static inline bool pp_ring_pending(struct pp_ring *r)
{
	/* relaxed: a look, as above */
	return atomic_load_explicit(&r->tail, memory_order_relaxed) !=
	       atomic_load_explicit(&r->head, memory_order_relaxed);
}

/*
 * Consumer loop: run rings[0..n) in turn, as a thread-per-core program polls
 * the queues from each of its peers, until *stop is set with all of them
 * empty. A look goes round the rings once from where the last run stopped,
 * runs the first with calls and each after it while the next has calls too,
 * and the next look begins at the first ring that run passed by: the rings
 * are taken in turn, as libxcall's worker takes the rings it holds.
 */
void pp_ring_serve(struct pp_ring *const *rings, int n, _Atomic int *stop);

/*
 * What a plain pthreads program writes to hand calls to another thread: a
 * bounded queue of PP_RING_ENTRIES calls under one mutex, a condition
 * variable for "not empty" and one for "not full", signalled on every push
 * and pop. Any number of producers; one consumer, which sleeps when the
 * queue is empty.
 */
struct pp_cvq;
struct pp_cvq *pp_cvq_new(void);
void pp_cvq_free(struct pp_cvq *q);
void pp_cvq_push(struct pp_cvq *q, void (*fn)(void *), void *arg);
/* Consumer: run calls until pp_cvq_stop() with the queue empty. */
void pp_cvq_serve(struct pp_cvq *q);
void pp_cvq_stop(struct pp_cvq *q);
void pp_cvq_restart(struct pp_cvq *q);  /* before the next pp_cvq_serve(), with no consumer running */

/* ---- the pre-2008 design (model2008.c) ---- */

/*
 * Start one model "CPU" (a pinned thread) per CPU in cpus[]. Idle model CPUs
 * poll for poll_ns (XC_POLL_FOREVER: always, XC_POLL_NONE: never), then sleep
 * on a futex, the way libxcall's workers do; an "IPI" is a flag plus a futex
 * wake only when the target sleeps.
 */
int m08_start(const int *cpus, int n, long poll_ns);
void m08_stop(void);
/* Run fn(arg[i]) on model CPU cpus[i] for each i, all at once, and wait. */
int m08_run_on(const int *cpus, int n, void (*fn)(void *), void **args);
/* The old API, callable on a model CPU only. */
int m08_call_function(void (*func)(void *), void *info, int wait);        /* all but self */
int m08_call_function_single(int cpu, void (*func)(void *), void *info, int wait);
void m08_serve(void);   /* take a pending "IPI" now, as interrupts would */
int m08_this_cpu(void);

#endif
