// SPDX-License-Identifier: MIT
/*
 * roundtrip_driver.c - the workloads bench/tools' counters run under valgrind:
 *
 *   roundtrip_driver N                   N waiting calls of a no-op from the worker of
 *                                        CPU 0 to a worker on CPU 1 that polls forever,
 *                                        nothing else (count_roundtrip.py, callgrind)
 *   roundtrip_driver wait N [general|ring]  the same, marked for count_lines.py (lackey);
 *                                        general: with XC_WAIT | XC_RUN_LOCAL (ignored by a
 *                                        single call), which takes the general path, since
 *                                        the straight one is for XC_WAIT alone; two calls
 *                                        marked apart in the middle: one as the others, one
 *                                        whose function outlasts the caller's spin;
 *                                        ring: with the slot ablated (XC_ABLATE_SLOT), so
 *                                        each call goes through the caller's ring
 *   roundtrip_driver handoff N [plant|near]  the bare handoff (pp_handoff, bench/baselines.h)
 *                                        between the two workers, as pingpong pairs it;
 *                                        plant: one line more each round trip, written by
 *                                        the caller and read by the responder's function;
 *                                        near: the same with the line after the handoff's,
 *                                        in its 128-byte pair (one more only at 64 bytes)
 *   roundtrip_driver burst K S N [list]  nowait calls to CPU 1 from S plain threads, N each
 *                                        (a multiple of K), in bursts of K: the senders take
 *                                        turns (the others asleep), in an order shuffled
 *                                        afresh for each lap of S turns (the same every run),
 *                                        and each waits after its burst until the worker has
 *                                        run it, so the worker drains after every K puts,
 *                                        holding S rings;
 *                                        list: with the rings ablated (XC_ABLATE_RING), each
 *                                        call a descriptor on the CPU's one shared list
 *   roundtrip_driver ring K S N          the same through S single-producer rings (pp_ring),
 *                                        served by pp_ring_serve as a work item on CPU 1
 *
 * Every mode but the first writes marks through VALGRIND_PRINTF, which
 * count_lines.py reads in the trace: "xcl role R" from each side's thread
 * (caller, sender, worker), "xcl begin" and "xcl end" around the calls
 * counted (after a warm-up), "xcl ignore ADDR LEN" for the driver's own
 * schedule (the turns, their order and the count of calls run, which no
 * call path has),
 * and "xcl path begin NAME"/"xcl path end" around the general mode's two
 * calls marked apart.
 * A sender's wait for the worker to run its burst spins on cpu_relax(), which
 * in the counting build (count_hook.h) gives way at every pass as the
 * library's spins do; a sender's wait for its turn sleeps on a futex, so
 * that 15 senders cost no time slices while one sends.
 */
#include "baselines.h"
#include "base/internal.h"       /* linger: the waiter's slot word */
#include "api/options.h"        /* xc_ablate_set: the ring and list cases */

#include <semaphore.h>
#include <stdlib.h>
#include <string.h>

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define HAVE_VALGRIND_H 1
#endif
#endif
#ifndef HAVE_VALGRIND_H
#define VALGRIND_PRINTF(...) 0
#endif

#define mark(...) ((void)VALGRIND_PRINTF("xcl " __VA_ARGS__))

static long calls;
static _Atomic int done;

static void nothing(void *arg)
{
}

static void caller(void *arg)
{
	for (long i = 0; i < calls; i++)
		if (xc_call_single(1, nothing, NULL, XC_WAIT)) {
			fprintf(stderr, "roundtrip_driver: call %ld failed\n", i);
			exit(1);
		}
	/* release: main's acquire sees every call done */
	atomic_store_explicit(&done, 1, memory_order_release);
}

/* ---- the modes count_lines.py counts ---- */

#define LINE 128                /* the larger line the ledger models */
#define WARM_CALLS 320          /* per sender, before the counted calls: more than a ring's */
#define WARM_K 64               /* 256 entries, in bursts of 64 */
#define WARM_WAIT 100

/* The schedule's own words, ignored by the ledger: no call path has them. */
static struct sched {
	_Alignas(LINE) _Atomic long ran;        /* calls run (tick), written by the worker only */
	_Alignas(LINE) _Atomic long sent;       /* calls sent, written by the sender whose turn it is */
	_Atomic uint32_t go[64];                /* each sender's futex: its turn has come */
	_Atomic int stop;                       /* the ring's consumer: return once the rings are empty */
} sc;

static struct {
	_Alignas(LINE) struct pp_handoff h;     /* a line of its own at 64 and at 128 bytes */
	_Alignas(LINE / 2) _Atomic long near;   /* the line after it, in its pair: planted by "near" */
	_Alignas(LINE) _Atomic long plant;      /* the planted line */
	char pad[LINE - sizeof(long)];
} hb;
_Static_assert(sizeof(struct pp_handoff) <= LINE / 2, "near is the next 64-byte line");

static sem_t finished;
static int mode_k, mode_s;
static bool general;
static _Atomic long *plant;             /* the planted line's word; NULL: none */
static struct pp_ring *rings[64];

static __attribute__((noreturn)) void fail(const char *what)
{
	fprintf(stderr, "roundtrip_driver: %s failed\n", what);
	exit(1);
}

static void tick(void *arg)
{
	/* relaxed load: only the worker writes ran; release: a sender that reads it sees its calls run */
	atomic_store_explicit(&sc.ran, atomic_load_explicit(&sc.ran, memory_order_relaxed) + 1,
			      memory_order_release);
}

static void read_plant(void *arg)
{
	/* relaxed: a read of the planted line is all it is for */
	(void)atomic_load_explicit(plant, memory_order_relaxed);
}

/*
 * On CPU 1, until the waiting caller has gone past its spin (XC_WAITER_FAST_SPINS
 * passes, src/run/wait.h) and asked to be woken (its slot's word, src/base/internal.h),
 * so that its wait's slow path runs; a pass count bounds it.
 */
static void linger(void *arg)
{
	for (long i = 0; i < 1000000; i++) {
		/* relaxed: a look at the waiter's progress, nothing more */
		if (atomic_load_explicit(&xc_cpus[1].mbox.slot.done.word, memory_order_relaxed) & XC_DONE_SLEEPING)
			return;
		cpu_relax();
	}
}

static void mark_worker(void *arg)
{
	mark("role worker\n");
}

/* Waiting calls with @flags: the counted loop is the default mode's (caller() above) */
static inline __attribute__((always_inline)) void wait_calls(long n, unsigned flags)
{
	for (long i = 0; i < n; i++)
		if (xc_call_single(1, nothing, NULL, flags))
			fail("a waiting call");
}

static void wait_caller(void *arg)
{
	mark("role caller\n");
	if (!general) {
		wait_calls(WARM_WAIT, XC_WAIT);
		mark("begin\n");
		wait_calls(calls, XC_WAIT);
		mark("end\n");
	} else {
		wait_calls(WARM_WAIT, XC_WAIT | XC_RUN_LOCAL);
		mark("begin\n");
		wait_calls(calls / 2, XC_WAIT | XC_RUN_LOCAL);
		mark("path begin quick\n");
		wait_calls(1, XC_WAIT | XC_RUN_LOCAL);
		mark("path end\n");
		mark("path begin slow\n");
		if (xc_call_single(1, linger, NULL, XC_WAIT | XC_RUN_LOCAL))
			fail("a waiting call");
		mark("path end\n");
		wait_calls(calls - calls / 2 - 1, XC_WAIT | XC_RUN_LOCAL);
		mark("end\n");
	}
	sem_post(&finished);
}

static void handoff_responder(void *arg)
{
	mark("role worker\n");
	pp_handoff_respond(&hb.h);
	sem_post(&finished);
}

/* Round trips through the bare handoff; @planted: the caller writes the planted line first */
static inline __attribute__((always_inline)) void handoff_calls(long n, bool planted)
{
	for (long i = 0; i < n; i++) {
		if (planted)
			/* relaxed: the responder's function reads it after the handoff's acquire */
			atomic_store_explicit(plant, i, memory_order_relaxed);
		pp_handoff_round_trip(&hb.h, planted ? read_plant : nothing, NULL);
	}
}

static void handoff_caller(void *arg)
{
	mark("role caller\n");
	if (!plant) {
		handoff_calls(WARM_WAIT, false);
		mark("begin\n");
		handoff_calls(calls, false);
	} else {
		handoff_calls(WARM_WAIT, true);
		mark("begin\n");
		handoff_calls(calls, true);
	}
	mark("end\n");
	/* release: the responder's acquire load ends its loop */
	atomic_store_explicit(&hb.h.word, PP_HANDOFF_STOP, memory_order_release);
	sem_post(&finished);
}

static void ring_consumer(void *arg)
{
	mark("role worker\n");
	pp_ring_serve(rings, mode_s, &sc.stop);
	sem_post(&finished);
}

/*
 * The senders' turns: lap L is S turns, one each, in turn_order[L * S ..];
 * lap 0 in order (sender 0 starts), each later one shuffled by a fixed
 * generator, so that no poll's order of looks (the rings as their doorbells came,
 * the ring baseline's array) meets the calls in the order it looks.
 */
static int *turn_order, *turn_pos;

/* Each sender's bursts: the warm-up's, then the counted ones. */
static long sender_bursts(void)
{
	return WARM_CALLS / WARM_K + calls / mode_k;
}

/* Lap L for each burst, and one more: after its last burst each sender takes its turn to pass it on. */
static void turns_plan(void)
{
	long laps = sender_bursts() + 1;
	uint64_t x = 0x9e3779b97f4a7c15u;

	turn_order = malloc(sizeof(int) * (size_t)(laps * mode_s));
	turn_pos = malloc(sizeof(int) * (size_t)(laps * mode_s));
	if (!turn_order || !turn_pos)
		fail("malloc");
	/* the schedule's, as sc is */
	mark("ignore %p %zu\n", (void *)turn_order, sizeof(int) * (size_t)(laps * mode_s));
	mark("ignore %p %zu\n", (void *)turn_pos, sizeof(int) * (size_t)(laps * mode_s));
	for (long l = 0; l < laps; l++) {
		int *o = &turn_order[l * mode_s];

		for (int j = 0; j < mode_s; j++)
			o[j] = j;
		for (int j = mode_s - 1; l && j > 0; j--) {
			int k, s;

			x ^= x << 13, x ^= x >> 7, x ^= x << 17;	/* xorshift64 */
			k = (int)(x % (uint64_t)(j + 1));
			s = o[j], o[j] = o[k], o[k] = s;
		}
		for (int j = 0; j < mode_s; j++)
			turn_pos[l * mode_s + o[j]] = j;
	}
}

/* Who takes the turn after sender @i's in lap @l. */
static int turn_next(long l, int i)
{
	int j = turn_pos[l * mode_s + i];

	return j + 1 < mode_s ? turn_order[l * mode_s + j + 1] : turn_order[(l + 1) * mode_s];
}

/* Sender @i: wait for its turn, asleep, so that the others' waits cost no time slices. */
static void take_turn(int i)
{
	/* acquire: the previous sender's burst ran before ours */
	while (!atomic_load_explicit(&sc.go[i], memory_order_acquire))
		xc_futex_wait(&sc.go[i], 0, NULL);
	/* relaxed: only the turn's holder clears it, before it passes the turn on */
	atomic_store_explicit(&sc.go[i], 0, memory_order_relaxed);
}

static void pass_turn(int next)
{
	/* release: our burst ran before the next sender's */
	atomic_store_explicit(&sc.go[next], 1, memory_order_release);
	xc_futex_wake(&sc.go[next], 1);
}

/*
 * Sender @i of mode_s: its bursts in turn with the others, each run by the
 * worker before the next. First WARM_CALLS in bursts of WARM_K, which make
 * the rings and use each of their lines once, then the counted ones. A
 * burst is a spin pass of its own (a cpu_relax() before and after), so that
 * the ledger counts its puts alone as the sender's, not the schedule's turns
 * and waits. At the end each sender waits for the last, so that no thread's
 * exit falls among the counted calls.
 */
static void *sender(void *arg)
{
	int i = (int)(long)arg;
	long warm = WARM_CALLS / WARM_K, bursts = sender_bursts();

	mark("role sender\n");
	for (long b = 0; b < bursts; b++) {
		int k = b < warm ? WARM_K : mode_k, pos = turn_pos[b * mode_s + i];

		take_turn(i);
		if (pos == 0 && b == warm)
			mark("begin\n");
		cpu_relax();
		for (int j = 0; j < k; j++) {
			if (rings[0])
				pp_ring_push(rings[i], tick, NULL);
			else if (xc_call_single(1, tick, NULL, 0))
				fail("a nowait call");
		}
		cpu_relax();
		/* relaxed: only the sender whose turn it is writes sent */
		long want = atomic_load_explicit(&sc.sent, memory_order_relaxed) + k;

		atomic_store_explicit(&sc.sent, want, memory_order_relaxed);
		/* acquire: tick's release */
		while (atomic_load_explicit(&sc.ran, memory_order_acquire) < want)
			cpu_relax();
		if (pos == mode_s - 1 && b == bursts - 1)
			mark("end\n");
		pass_turn(turn_next(b, i));
	}
	take_turn(i);
	if (turn_pos[bursts * mode_s + i] + 1 < mode_s)
		pass_turn(turn_next(bursts, i));
	return NULL;
}

static int usage(void)
{
	fprintf(stderr, "usage: roundtrip_driver N | wait N [general|ring] | handoff N [plant|near] |\n"
		"       burst K S N [list] | ring K S N    (needs CPUs 0 and 1; N a multiple of K, S <= 64)\n");
	return 2;
}

static int run_mode(int argc, char **argv)
{
	const char *mode = argv[1];
	struct xc_opts o = { .cpus = "0-1", .poll_ns = XC_POLL_FOREVER };
	unsigned ablate = 0;
	struct xc_work a = { 0 }, b = { 0 };
	pthread_t t[64];
	bool queue = !strcmp(mode, "burst") || !strcmp(mode, "ring");

	if (queue) {
		if (argc < 5)
			return usage();
		mode_k = atoi(argv[2]);
		mode_s = atoi(argv[3]);
		calls = atol(argv[4]);
		if (mode_k <= 0 || mode_s <= 0 || mode_s > 64 || calls <= 0 || calls % mode_k)
			return usage();
		if (argc > 5 && !strcmp(mode, "burst") && !strcmp(argv[5], "list"))
			ablate = XC_ABLATE_RING;
		else if (argc > 5)
			return usage();
	} else if (!strcmp(mode, "wait") || !strcmp(mode, "handoff")) {
		if (argc < 3 || (calls = atol(argv[2])) <= 0)
			return usage();
		const char *opt = argc > 3 ? argv[3] : "";
		bool waiting = !strcmp(mode, "wait");

		general = waiting && !strcmp(opt, "general");
		if (waiting && !strcmp(opt, "ring"))
			ablate = XC_ABLATE_SLOT;
		else if (!waiting && !strcmp(opt, "plant"))
			plant = &hb.plant;
		else if (!waiting && !strcmp(opt, "near"))
			plant = &hb.near;
		else if (*opt && !general)
			return usage();
	} else {
		return usage();
	}
	mark("ignore %p %zu\n", (void *)&sc, sizeof(sc));
	if (sem_init(&finished, 0, 0) || xc_ablate_set(ablate) || xc_init(&o))
		fail("xc_init");
	if (!strcmp(mode, "wait")) {
		if (xc_call_single(1, mark_worker, NULL, XC_WAIT))
			fail("the first call");
		a.fn = wait_caller;
		if (xc_queue_work(0, &a))
			fail("xc_queue_work");
		sem_wait(&finished);
	} else if (!strcmp(mode, "handoff")) {
		a.fn = handoff_responder;
		b.fn = handoff_caller;
		if (xc_queue_work(1, &a) || xc_queue_work(0, &b))
			fail("xc_queue_work");
		sem_wait(&finished);
		sem_wait(&finished);
	} else {
		if (!strcmp(mode, "ring")) {
			for (int i = 0; i < mode_s; i++)
				if (!(rings[i] = pp_ring_new()))
					fail("pp_ring_new");
			a.fn = ring_consumer;
			if (xc_queue_work(1, &a))
				fail("xc_queue_work");
		} else if (xc_call_single(1, mark_worker, NULL, XC_WAIT)) {
			fail("the first call");
		}
		turns_plan();
		/* relaxed: published by pthread_create */
		atomic_store_explicit(&sc.go[0], 1, memory_order_relaxed);
		for (int i = 0; i < mode_s; i++)
			if (pthread_create(&t[i], NULL, sender, (void *)(long)i))
				fail("pthread_create");
		for (int i = 0; i < mode_s; i++)
			pthread_join(t[i], NULL);
		if (rings[0]) {
			/* release: the consumer returns once it has run every ring empty */
			atomic_store_explicit(&sc.stop, 1, memory_order_release);
			sem_wait(&finished);
		}
	}
	return xc_exit() ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct xc_opts o = { .cpus = "0-1", .poll_ns = XC_POLL_FOREVER };
	struct xc_work w = { .fn = caller };

	if (argc > 1 && (argv[1][0] < '0' || argv[1][0] > '9'))
		return run_mode(argc, argv);
	calls = argc > 1 ? atol(argv[1]) : 3000;
	if (calls <= 0 || xc_init(&o) || xc_queue_work(0, &w)) {
		fprintf(stderr, "usage: roundtrip_driver N (needs CPUs 0 and 1)\n");
		return 2;
	}
	while (!atomic_load_explicit(&done, memory_order_acquire))
		;
	return xc_exit() ? 1 : 0;
}
