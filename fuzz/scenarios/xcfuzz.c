// SPDX-License-Identifier: MIT
/*
 * xcfuzz - the scenario fuzzer: random programs over the whole public API,
 * each run in a fresh process and checked for lost, doubled, misplaced and
 * reordered calls, hangs and crashes (docs/fuzz.md, "Scenario fuzzer").
 *
 * A program is data: a few option values, a table of function bodies and one
 * list of steps per thread, each step an op with four integer arguments. A
 * seed fixes the program (not the interleaving); a program prints as text
 * and reads back, so a failure can be replayed and shrunk.
 *
 *   xcfuzz fuzz [-t SECONDS] [-s SEED] [-n COUNT] [-g GEN] [--no-shrink] [--shrink-seconds S]
 *   xcfuzz replay SEED|FILE [-r R]       run that program R times (default 20)
 *   (SEED: N, generator 1's program of seed N, or gG:N, generator G's; fuzz
 *   makes the latest generator's, -g 1 the first's)
 *   xcfuzz shrink SEED|FILE              shrink a failing program
 *   xcfuzz print SEED                    print the program of a seed
 *   xcfuzz corpus DIR [-r R]             every entry of DIR R times (CI)
 *   xcfuzz run SEED|FILE                 one run in this process (the child)
 *
 * Invariants per program, checked by the child after its final xc_exit()
 * (those marked * where they happen):
 *   - a call whose caller got 0 (>= 0 for any/many/cond/all) ran: single,
 *     async, any and work exactly once on their CPU, many/cond/all exactly
 *     the returned number of times, each on a distinct CPU of the mask (of
 *     the CPUs cond said yes to); a refused call never ran (-ELOOP: but on
 *     the targets that refused it);
 *   - * every errno is one xcall.h lists for that call where it was made
 *     (errno_wrong, do_poll, hp_op, the hooks);
 *   - * no other thread's call runs inside an announced sleep (ran());
 *   - -ELOOP only from a CPU whose thread nested deep (check_deep);
 *   - urgent calls deferred behind a call run before the CPU's next work
 *     item (check_urgent_deferred);
 *   - an offline or exit that returned 0 ran what was queued before it
 *     (check_drained); async chains ran whole, in order (check_chains);
 *   - the calls of one frame (a thread's own steps, one run of a function or
 *     work item, one signal handler) to one CPU started in the order made,
 *     urgent calls and calls made inside urgent functions excepted, and runs
 *     inside a signal handler on the CPU's own thread: a handler's wait runs
 *     the CPU's later calls nested wherever it landed, also inside an earlier
 *     call whose function had begun but not yet taken its stamp;
 *   - every API call returns within a bound, counted only while no thread
 *     of the process waits for a CPU the OS does not give it (progress.c;
 *     a watchdog thread prints XCF-STUCK; the parent then takes gdb's
 *     stacks and kills the run);
 *   - no crash, no sanitizer report; a forked child's own program holds the
 *     same, and none of the parent's calls runs in the child.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <xcall.h>

#include "progress.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__SANITIZE_THREAD__)
#define FZ_MODE "tsan"
#define FZ_TSAN 1
#elif defined(__SANITIZE_ADDRESS__)
#define FZ_MODE "asan"
#define FZ_TSAN 0
/*
 * A fork child starts no threads under ASan: its allocator's lock may be held
 * at the fork by another thread (gcc 12's libasan takes no fork handler for
 * it), and a child's worker then hangs in calloc for ever (seen: both
 * workers of a fork child in SizeClassAllocator64::GetFromAllocator).
 */
#define FZ_CHILD_NO_THREADS 1
#else
#define FZ_MODE "plain"
#define FZ_TSAN 0
#endif
#ifndef FZ_CHILD_NO_THREADS
#define FZ_CHILD_NO_THREADS 0
#endif
#ifdef XC_SANITIZED
#define FZ_SLOW 3
#else
#define FZ_SLOW 1
#endif
/*
 * Small worker stacks (struct prog, stack_kb) grow under a sanitizer:
 * ASan's frames carry redzones, and TSan keeps its threads' static TLS
 * at the top of their stacks (most of a 1 MiB one).
 */
#if FZ_TSAN
#define FZ_STACK_SCALE 32
#elif defined(__SANITIZE_ADDRESS__)
#define FZ_STACK_SCALE 4
#else
#define FZ_STACK_SCALE 1
#endif

/* ---- programs ---- */

enum {
	OP_CALL, OP_BURST, OP_WORK, OP_SPIN, OP_POLL, OP_STATS, OP_SLEEP, OP_OFFLINE,
	OP_ONLINE, OP_CYCLE, OP_FORK, OP_TIMER, OP_DUMP, OP_LOOP, OP_SIGWIN, OP_DETACH, OP_EXIT,
	/* generator 3's (below) */
	OP_USTREAM, OP_STREAM, OP_BUSY, OP_EDGE, OP_XHOT, OP_CHAIN, OP_ATTHP, OP_SIGFULL,
	/* generator 4's */
	OP_FRAME, OP_N
};
static const char *const op_names[OP_N] = {
	"call", "burst", "work", "spin", "poll", "stats", "sleep", "offline",
	"online", "cycle", "fork", "timer", "dump", "loop", "sigwin", "detach", "exit",
	"ustream", "stream", "busy", "edge", "xhot", "chain", "atthp", "sigfull",
	"frame",
};
/* call kinds (OP_CALL a); the record kinds add work */
enum { K_SINGLE, K_ANY, K_ASYNC, K_MANY, K_COND, K_ALL, K_WORK, K_N };
static const char *const kind_names[K_N] = { "single", "any", "async", "many", "cond", "all", "work" };

enum { T_MAIN, T_PLAIN, T_ATTACHED };
static const char *const thr_names[] = { "main", "plain", "attached" };

#define NC	  4	/* CPUs of the runtime at most */
#define MAXOPS	  64
#define MAXF	  12	/* bodies; generators 1 and 2 make at most 8 */
#define MAXF_G12  8
#define MAXT	  5
#define MAXDEPTH  5

/*
 * One step. call: a kind, b target (CPU index for single/async, mask of
 * indexes for any/many/cond), c flags, d body; burst: a count, b CPU, d body;
 * work: b CPU, d body; spin/sleep: a us; stats: a CPU or -1; offline/online:
 * b CPU; cycle: a tracing in the new runtime; fork: a calls per CPU in the
 * child, d body its main thread runs; timer: a period us (0 off), d the
 * handler's body; loop: a iterations of the attached loop; sigwin: one
 * iteration whose own signal lands inside the announced sleep, d its body;
 * exit: the attached thread ends there, still attached, and an application
 * key destructor runs body d on its way out.
 * In a function body, offline b takes CPU b offline and, with a = 1, back
 * online if that succeeded (a call or work item that takes a CPU offline).
 *
 * Generator 3's: ustream: a urgent nowait single calls to CPU b, c us
 * apart (0: back to back), each running body d (an urgent function); stream: a nowait single
 * calls to CPU b, each spinning c us, d us apart; busy: a work item on CPU
 * b that spins a us (urgent calls then come by signal); edge: a rounds of
 * 1-3 nowait calls to CPU b (with c = 1 a waiting one after them), each
 * round followed by d us of nothing, so that the worker goes idle at its
 * edge; xhot: a work item on CPU a that takes CPU b offline and back
 * online, at most c times, until refused (the main thread's cycle follows,
 * and the runtime goes down under it); chain: an async call to CPU b whose
 * completion callback queues it again to its own CPU, a links in all;
 * atthp (a plain thread): take the attached CPU offline, wait until the
 * attached thread's cpu_init hook holds an attach open, bring the CPU
 * online meanwhile and make a calls to it; sigfull (the attached thread):
 * a work item spinning d us on CPU b, then a sigwin whose handler makes a
 * nowait calls to CPU b, past its ring's room. burst with c = 1: every
 * call of the burst runs body d, not only the first. In a body a CPU b of
 * -1 is the body's own CPU (call, work, chain).
 *
 * Generator 4's: frame (in a body): the body's later steps run inside a
 * stack frame of a thousandths of its thread's stack (a function with big
 * locals: run_framed), not in an urgent function or a signal handler.
 */
struct op {
	int code, a, b, c, d;
};

struct list {
	int n;
	struct op op[MAXOPS];
};

/*
 * The bringup hook (xc_opts.cpu_init) of generator 3's programs. Every
 * program has one: it notes its worker's stack (the check of -ELOOP) and,
 * on an attaching thread, may hold the attach open (atthp). HOOK_CALL: at
 * every bringup it makes calls, which must get -ENXIO; HOOK_FAIL: on CPU
 * hook_cpu it fails the first xc_init (which must return its errno);
 * HOOK_STALL: on CPU hook_cpu it outlasts the first xc_init's bringup
 * timeout (btimeout ms) and its cancellation, then, beside the runtime the
 * program brought up after it, makes calls that must still get -ENXIO.
 */
enum { HOOK_NONE, HOOK_CALL, HOOK_FAIL, HOOK_STALL, HOOK_N };
static const char *const hook_names[HOOK_N] = { "none", "call", "fail", "stall" };

struct prog {
	uint64_t seed;
	int gen;			/* the generator that made it from its seed (below) */
	int ncpu, ring, trace, poll;
	int stack_kb;			/* workers' stacks (pthread_setattr_default_np); 0: the default */
	int hook, hook_cpu, btimeout;	/* HOOK_*, its CPU index, the first bringup's timeout ms */
	int nfunc, nthr;
	struct list fn[MAXF];
	struct list thr[MAXT];
	int kind[MAXT];
};

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

static int rn(int n)
{
	return n <= 1 ? 0 : (int)(rnd() % (uint64_t)n);
}

static bool chance(int pct)
{
	return rn(100) < pct;
}

static int gen_flags(int kind)
{
	int f = 0;

	if (chance(30))
		f |= XC_WAIT;
	if ((kind == K_SINGLE || kind == K_ANY) && chance(12))
		f |= XC_URGENT;
	if ((kind == K_MANY || kind == K_COND || kind == K_ALL) && chance(30))
		f |= XC_RUN_LOCAL;
	return f;
}

static int gen_body(int from, int nfunc)
{
	/* a function calls only later ones: bodies form a DAG */
	if (from + 1 >= nfunc || chance(35))
		return -1;
	return from + 1 + rn(nfunc - from - 1);
}

static struct op gen_call(int ncpu, int from, int nfunc)
{
	static const int kw[K_WORK] = { 40, 10, 12, 14, 10, 14 };
	int k = 0, x = rn(100);

	while (x >= kw[k])
		x -= kw[k++];
	struct op o = { OP_CALL, k, 0, gen_flags(k), gen_body(from, nfunc) };

	if (k == K_SINGLE || k == K_ASYNC)
		o.b = rn(ncpu);
	else
		o.b = 1 + rn((1 << ncpu) - 1);
	return o;
}

static void add(struct list *l, struct op o)
{
	if (l->n < MAXOPS)
		l->op[l->n++] = o;
}

/* a function body: what a call, work item or handler runs (from: its index, or -1) */
static void gen_fn(struct list *l, int ncpu, int from, int nfunc)
{
	int n = 1 + rn(4);

	for (int i = 0; i < n; i++) {
		int x = rn(100);

		if (x < 40)
			add(l, gen_call(ncpu, from, nfunc));
		else if (x < 58)
			add(l, (struct op){ OP_BURST, 6 + rn(34), rn(ncpu), 0, gen_body(from, nfunc) });
		else if (x < 75)
			add(l, (struct op){ OP_SPIN, 20 + rn(chance(50) ? 200 : 3000), 0, 0, 0 });
		else if (x < 83)
			add(l, (struct op){ OP_POLL, 0, 0, 0, 0 });
		else if (x < 92)
			add(l, (struct op){ OP_WORK, 0, rn(ncpu), 0, gen_body(from, nfunc) });
		else
			add(l, (struct op){ OP_STATS, rn(ncpu + 1) - 1, 0, 0, 0 });
	}
}

static void gen_thread(struct prog *p, int t)
{
	struct list *l = &p->thr[t];
	int kind = p->kind[t], n = 6 + rn(30), ncpu = p->ncpu;
	int offl = -1;

	for (int i = 0; i < n; i++) {
		int x = rn(100);

		if (kind == T_ATTACHED && x < 30) {
			int y = rn(10);

			if (y < 6)
				add(l, (struct op){ OP_LOOP, 1 + rn(4), 0, 0, 0 });
			else if (y < 9)
				add(l, (struct op){ OP_SIGWIN, 0, 0, 0, gen_body(-1, p->nfunc) });
			else
				add(l, (struct op){ OP_DETACH, 0, 0, 0, 0 });
			continue;
		}
		if (kind != T_ATTACHED && x < 14) {
			int y = rn(100), c = rn(ncpu);

			if (y < 40 && offl < 0) {
				add(l, (struct op){ OP_OFFLINE, 0, c, 0, 0 });
				offl = c;
			} else if (y < 70 && offl >= 0) {
				add(l, (struct op){ OP_ONLINE, 0, offl, 0, 0 });
				offl = -1;
			} else if (y < 82 && kind == T_MAIN) {
				add(l, (struct op){ OP_CYCLE, chance(30), 0, 0, 0 });
			} else if (y < 94) {
				add(l, (struct op){ OP_FORK, 4 + rn(40), 0, 0, gen_body(-1, p->nfunc) });
			} else {
				add(l, (struct op){ OP_DUMP, 0, 0, 0, 0 });
			}
			continue;
		}
		if (x < 50)
			add(l, gen_call(ncpu, -1, p->nfunc));
		else if (x < 62)
			add(l, (struct op){ OP_BURST, 8 + rn(60), rn(ncpu), 0, gen_body(-1, p->nfunc) });
		else if (x < 74)
			add(l, (struct op){ OP_WORK, 0, rn(ncpu), 0, gen_body(-1, p->nfunc) });
		else if (x < 84)
			add(l, (struct op){ OP_SLEEP, rn(chance(50) ? 100 : 2000), 0, 0, 0 });
		else if (x < 91)
			add(l, (struct op){ OP_TIMER, chance(25) ? 0 : 200 + rn(800), 0, 0,
					    gen_body(-1, p->nfunc) });
		else
			add(l, (struct op){ OP_STATS, rn(ncpu + 1) - 1, 0, 0, 0 });
	}
	if (offl >= 0 && chance(80))
		add(l, (struct op){ OP_ONLINE, 0, offl, 0, 0 });
}

/* @o at a random place of @l (generator 2's ops, below) */
static void insert(struct list *l, struct op o)
{
	int at;

	if (l->n >= MAXOPS)
		return;
	at = rn(l->n + 1);
	memmove(&l->op[at + 1], &l->op[at], sizeof(l->op[0]) * (l->n - at));
	l->op[at] = o;
	l->n++;
}

/*
 * Generator 2 is generator 1's program with ops added from a second stream
 * of the seed, so that generator 1's programs (the corpus' seeds, the seeds
 * docs/fuzz.md names) stay what they were: "N" is generator 1's program of
 * seed N, "g2:N" generator 2's. Added: an offline (and back online) inside
 * function bodies, when the runtime has 2 CPUs at most (a wait cycle through
 * a third CPU is one libxcall does not detect, README); the attached
 * thread's exit while attached, with a key destructor that runs a body;
 * urgent nowait calls inside function bodies.
 */
#define GEN_LATEST 4

static void gen_extras(struct prog *p)
{
	rng_state = p->seed * 0xD1B54A32D192ED03ULL + 0x2545F4914F6CDD1DULL;
	if (!rng_state)
		rng_state = 1;
	rnd();
	if (p->ncpu <= 2)
		for (int f = 0; f < p->nfunc; f++)
			if (chance(20))
				insert(&p->fn[f], (struct op){ OP_OFFLINE, 1, rn(p->ncpu), 0, 0 });
	for (int t = 0; t < p->nthr; t++)
		if (p->kind[t] == T_ATTACHED && chance(40))
			insert(&p->thr[t], (struct op){ OP_EXIT, 0, 0, 0, rn(p->nfunc + 1) - 1 });
	/* urgent nowait calls made by functions, urgent functions among them (generator 1 makes few) */
	for (int f = 0; f < p->nfunc; f++)
		if (chance(15))
			insert(&p->fn[f], (struct op){ OP_CALL, K_SINGLE, rn(p->ncpu), XC_URGENT, -1 });
}

/* @o at a random place among the first @within steps of @l (ops meant to overlap other threads') */
static void insert_early(struct list *l, struct op o, int within)
{
	int at;

	if (l->n >= MAXOPS)
		return;
	at = rn((l->n < within ? l->n : within) + 1);
	memmove(&l->op[at + 1], &l->op[at], sizeof(l->op[0]) * (l->n - at));
	l->op[at] = o;
	l->n++;
}

/* A body of its own, after the others (so only threads call it); -1 if there is no room. */
static int add_body(struct prog *p)
{
	if (p->nfunc >= MAXF)
		return -1;
	p->fn[p->nfunc].n = 0;
	return p->nfunc++;
}

/* A thread index other than @not (a plain or the main thread); -1 if none. */
static int other_thread(const struct prog *p, int not)
{
	for (int tries = 0; tries < 8; tries++) {
		int t = rn(p->nthr);

		if (t != not && p->kind[t] != T_ATTACHED)
			return t;
	}
	return -1;
}

/*
 * Generator 3 is generator 2's program with what a random program seldom
 * makes, from a third stream of the seed: bringup hooks that call, fail
 * and outlast the bringup timeout; small worker stacks with a burst whose
 * calls each wait on a CPU that sends back a nowait call and then a
 * waiting one (the nest reaches the serve floor); long urgent streams
 * beside a busy work item and a stream of calls, whose urgent functions
 * wait and poll; a waiting call whose function queues a work item on its
 * own CPU while urgent calls arrive; short bursts with idle gaps while
 * another thread takes their CPU offline and back; hotplug from a work
 * item across xc_exit; async completion chains; an attach held open by
 * its cpu_init hook while another thread brings the CPU online; a signal
 * inside the attached thread's announced sleep whose calls overfill a
 * ring.
 *
 * Generator 4 is generator 3's program whose nest function takes a big
 * frame (OP_FRAME) before its waiting call: generator 3's nest costs about
 * 1.2 KiB of stack a level, and reaches the floor of a normal worker stack
 * seldom. It draws nothing from the stream, so generator 3's seeds keep
 * their programs.
 */
static void gen3_extras(struct prog *p)
{
	int nc = p->ncpu, x, t;

	rng_state = p->seed * 0xBF58476D1CE4E5B9ULL + 0x94D049BB133111EBULL;
	if (!rng_state)
		rng_state = 1;
	rnd();
	x = rn(100);
	p->hook = x < 40 ? HOOK_CALL : x < 47 ? HOOK_FAIL : x < 52 ? HOOK_STALL : HOOK_NONE;
	p->hook_cpu = rn(nc);
	p->btimeout = 100 + rn(200);
	if (chance(40))
		p->stack_kb = 64 << rn(2);
	/* the nest: needs small stacks (the floor within reach) and two CPUs */
	if (p->stack_kb && nc >= 2) {
		int a = rn(nc), b = (a + 1 + rn(nc - 1)) % nc;
		int n1 = add_body(p), n2 = add_body(p);

		if (n2 >= 0) {
			/* generator 4: 15% of the stack a level, so the floor is 5-6 levels down */
			if (p->gen >= 4)
				add(&p->fn[n1], (struct op){ OP_FRAME, 150, 0, 0, 0 });
			add(&p->fn[n1], (struct op){ OP_CALL, K_SINGLE, b, XC_WAIT, n2 });
			add(&p->fn[n2], (struct op){ OP_CALL, K_SINGLE, a, 0, -1 });
			add(&p->fn[n2], (struct op){ OP_CALL, K_SINGLE, a, XC_WAIT, -1 });
			t = other_thread(p, -1);
			if (t >= 0)
				/* longer than the levels to the floor: about 1.2 KiB a level, 3/4 of the stack */
				insert(&p->thr[t], (struct op){ OP_BURST, p->stack_kb * 3 / 4 + rn(p->stack_kb / 2 + 30), a, 1, n1 });
		}
	}
	/* urgent streams beside a busy worker and a stream of calls */
	if (chance(45)) {
		int cpu = rn(nc), u = add_body(p), d = add_body(p);

		if (u >= 0) {
			/* an urgent function: its waiting call must get -EDEADLK, its poll run nothing */
			add(&p->fn[u], (struct op){ OP_CALL, K_SINGLE, rn(nc), XC_WAIT, -1 });
			if (chance(50))
				add(&p->fn[u], (struct op){ OP_POLL, 0, 0, 0, 0 });
			if (chance(50))
				add(&p->fn[u], (struct op){ OP_CALL, K_SINGLE, -1, 0, -1 });
			insert_early(&p->thr[0], (struct op){ OP_BUSY, 1000 + rn(4000), cpu, 0, 0 }, 2);
			for (int k = 0; k < 2; k++) {
				t = other_thread(p, -1);
				if (t >= 0)
					insert_early(&p->thr[t], (struct op){ OP_USTREAM, 200 + rn(1800), cpu,
									      k ? 10 + rn(200) : 0, u }, 3);
			}
			t = other_thread(p, -1);
			if (t >= 0)
				insert_early(&p->thr[t], (struct op){ OP_STREAM, 100 + rn(400), cpu, rn(30), rn(3) * 10 }, 3);
		}
		if (d >= 0) {
			/* a waiting call whose function queues work on its own CPU while urgent calls come */
			add(&p->fn[d], (struct op){ OP_WORK, 0, -1, 0, -1 });
			add(&p->fn[d], (struct op){ OP_SPIN, 100 + rn(500), 0, 0, 0 });
			t = other_thread(p, -1);
			for (int k = 2 + rn(5); t >= 0 && k > 0; k--)
				insert_early(&p->thr[t], (struct op){ OP_CALL, K_SINGLE, cpu, XC_WAIT, d }, 6);
		}
	}
	/* bursts at the edge of the worker's sleep while another thread takes the CPU offline */
	if (chance(30)) {
		int cpu = rn(nc), e = other_thread(p, -1), h = other_thread(p, e);

		if (e >= 0)
			insert_early(&p->thr[e], (struct op){ OP_EDGE, 20 + rn(200), cpu, chance(50), 10 + rn(300) }, 4);
		for (int k = 2 + rn(6); h >= 0 && k > 0; k--) {
			insert_early(&p->thr[h], (struct op){ OP_SLEEP, rn(500), 0, 0, 0 }, 8);
			insert_early(&p->thr[h], (struct op){ OP_ONLINE, 0, cpu, 0, 0 }, 8);
			insert_early(&p->thr[h], (struct op){ OP_OFFLINE, 0, cpu, 0, 0 }, 8);
		}
	}
	/* hotplug from a work item while the runtime goes down */
	if (nc >= 2 && chance(30))
		for (int k = 1 + rn(3); k > 0; k--) {
			int a = rn(nc), b = (a + 1 + rn(nc - 1)) % nc;

			insert(&p->thr[0], (struct op){ OP_XHOT, a, b, 50 + rn(2000), 0 });
		}
	/* async completion chains: through the ring and begun on the CPU */
	if (chance(30)) {
		for (int k = 1 + rn(3); k > 0; k--) {
			int links = 1 << (3 + rn(14));

			t = rn(p->nthr);
			if (p->kind[t] == T_ATTACHED || chance(40)) {
				int f = rn(p->nfunc);

				insert(&p->fn[f], (struct op){ OP_CHAIN, links, -1, 0, 0 });
			} else {
				insert(&p->thr[t], (struct op){ OP_CHAIN, links, rn(nc), 0, 0 });
			}
		}
	}
	for (t = 0; t < p->nthr; t++) {
		if (p->kind[t] != T_ATTACHED)
			continue;
		/* an attach held open by its hook while another thread brings the CPU online */
		if (chance(40)) {
			int h = other_thread(p, -1);

			for (int k = 1 + rn(3); h >= 0 && k > 0; k--) {
				insert(&p->thr[h], (struct op){ OP_ATTHP, 1 + rn(6), 0, 0, 0 });
				insert(&p->thr[t], (struct op){ OP_DETACH, 0, 0, 0, 0 });
			}
		}
		/* a signal in the announced sleep whose nowait calls overfill a ring to a busy CPU */
		if (chance(40)) {
			int s = other_thread(p, -1);

			insert(&p->thr[t], (struct op){ OP_SIGFULL, p->ring + 2 + rn(p->ring), rn(nc - 1),
							 0, 1000 + rn(3000) });
			if (s >= 0)
				insert_early(&p->thr[s], (struct op){ OP_STREAM, 50 + rn(300), nc - 1, 0, 20 + rn(50) }, 4);
		}
	}
}

static void gen_prog(struct prog *p, uint64_t seed, int ncpu_avail, int gen)
{
	memset(p, 0, sizeof(*p));
	p->seed = seed;
	p->gen = gen;
	rng_state = seed * 0x9E3779B97F4A7C15ULL + 0x1234567ULL;
	if (!rng_state)
		rng_state = 1;
	rnd();
	p->ncpu = ncpu_avail < NC ? ncpu_avail : NC;
	p->ring = chance(80) ? 16 : 64;
	p->trace = chance(20);
	p->poll = rn(3);
	p->nfunc = 2 + rn(MAXF_G12 - 1);
	for (int f = 0; f < p->nfunc; f++)
		gen_fn(&p->fn[f], p->ncpu, f, p->nfunc);
	p->nthr = 2 + rn(MAXT - 1);
	for (int t = 0; t < p->nthr; t++)
		p->kind[t] = t == 0 ? T_MAIN : T_PLAIN;
	if (p->ncpu >= 2 && chance(35))
		p->kind[p->nthr - 1] = T_ATTACHED;
	for (int t = 0; t < p->nthr; t++)
		gen_thread(p, t);
	if (gen >= 2)
		gen_extras(p);
	if (gen >= 3)
		gen3_extras(p);
}

static int prog_len(const struct prog *p)
{
	int n = 0;

	for (int f = 0; f < p->nfunc; f++)
		n += p->fn[f].n;
	for (int t = 0; t < p->nthr; t++)
		n += p->thr[t].n;
	return n;
}

static void print_list(FILE *f, const struct list *l)
{
	for (int i = 0; i < l->n; i++) {
		const struct op *o = &l->op[i];

		fprintf(f, "  %s %d %d %d %d", op_names[o->code], o->a, o->b, o->c, o->d);
		if (o->code == OP_CALL)
			fprintf(f, "\t# %s%s%s%s", kind_names[o->a], o->c & XC_WAIT ? " wait" : "",
				o->c & XC_URGENT ? " urgent" : "", o->c & XC_RUN_LOCAL ? " local" : "");
		fputc('\n', f);
	}
}

static void print_prog(FILE *f, const struct prog *p)
{
	fprintf(f, "xcfuzz-program 1\nseed %" PRIu64 "\n", p->seed);
	if (p->gen > 1)
		fprintf(f, "gen %d\n", p->gen);
	fprintf(f, "opts %d %d %d %d\n", p->ncpu, p->ring, p->trace, p->poll);
	if (p->stack_kb || p->hook)
		fprintf(f, "opts3 %d %s %d %d\t# worker stack KiB (0: default), cpu_init hook, its CPU, first bringup timeout ms\n",
			p->stack_kb, hook_names[p->hook], p->hook_cpu, p->btimeout);
	for (int i = 0; i < p->nfunc; i++) {
		fprintf(f, "fn %d\n", i);
		print_list(f, &p->fn[i]);
	}
	for (int t = 0; t < p->nthr; t++) {
		fprintf(f, "thread %d %s\n", t, thr_names[p->kind[t]]);
		print_list(f, &p->thr[t]);
	}
	fprintf(f, "end %d ops\n", prog_len(p));
}

static int parse_prog(const char *path, struct prog *p)
{
	FILE *f = fopen(path, "r");
	char line[256], name[32];
	struct list *cur = NULL;
	int v[5];

	if (!f)
		return -1;
	memset(p, 0, sizeof(*p));
	while (fgets(line, sizeof(line), f)) {
		char *h = strchr(line, '#');

		if (h)
			*h = 0;
		if (sscanf(line, "seed %" SCNu64, &p->seed) == 1)
			continue;
		if (sscanf(line, "gen %d", &p->gen) == 1)
			continue;
		/* into v first: sscanf stores what matched before it fails ("opts3 64 ..." as opts 3 64) */
		if (sscanf(line, "opts %d %d %d %d", &v[0], &v[1], &v[2], &v[3]) == 4) {
			p->ncpu = v[0], p->ring = v[1], p->trace = v[2], p->poll = v[3];
			continue;
		}
		if (sscanf(line, "opts3 %d %31s %d %d", &p->stack_kb, name, &p->hook_cpu, &p->btimeout) == 4) {
			for (int k = 0; k < HOOK_N; k++)
				if (!strcmp(name, hook_names[k]))
					p->hook = k;
			continue;
		}
		if (sscanf(line, "fn %d", &v[0]) == 1 && v[0] >= 0 && v[0] < MAXF) {
			cur = &p->fn[v[0]];
			if (p->nfunc < v[0] + 1)
				p->nfunc = v[0] + 1;
			continue;
		}
		if (sscanf(line, "thread %d %31s", &v[0], name) == 2 && v[0] >= 0 && v[0] < MAXT) {
			cur = &p->thr[v[0]];
			p->kind[v[0]] = !strcmp(name, "main") ? T_MAIN : !strcmp(name, "attached") ? T_ATTACHED : T_PLAIN;
			if (p->nthr < v[0] + 1)
				p->nthr = v[0] + 1;
			continue;
		}
		if (cur && sscanf(line, " %31s %d %d %d %d", name, &v[0], &v[1], &v[2], &v[3]) == 5) {
			for (int c = 0; c < OP_N; c++)
				if (!strcmp(name, op_names[c]))
					add(cur, (struct op){ c, v[0], v[1], v[2], v[3] });
		}
	}
	fclose(f);
	return p->nthr > 0 && p->ncpu > 0 ? 0 : -1;
}

/* ---- the run: records ---- */

#define RET_PENDING INT32_MIN
#define MAXREC	 (1 << 18)
#define MAXASYNC (1 << 16)
#define MAXWORK	 (1 << 16)

struct rec {
	_Atomic int32_t ret;
	uint8_t kind, flags, exempt, tcpu;
	int16_t fn;
	uint16_t depth;
	uint32_t mask;
	_Atomic uint32_t chosen;	/* cond: the CPUs it said yes to */
	uint64_t stream;
	uint32_t seq;
	int32_t slot;			/* async descriptor / work item */
	int32_t caller;			/* the thread that made it (its tid) */
	uint32_t spin_us;		/* its function spins this long (stream, busy) */
	uint8_t ctx;			/* CTX_*: where it was made */
	_Atomic uint32_t runs[NC];
	_Atomic uint64_t stamp[NC];	/* when its function began on CPU i (clock_seq) */
	_Atomic uint64_t end[NC];	/* when it returned there, if a call returned right after it runs urgent ones */
	uint64_t ret_stamp;		/* when its caller had its return */
	_Atomic uint32_t wrong;
	_Atomic uint32_t in_sig;	/* bit i: the run on CPU i was inside a signal handler there */
	uint32_t offline;		/* bit i: CPU i was offline (xc_cpu_offline) all through the call */
};

/*
 * Where a call was made, for the errnos xcall.h lets it return there:
 *   CTX_URGENT   inside an urgent function (or what it runs inline): a
 *                waiting call gets -EDEADLK, a full ring or no descriptor
 *                -ENOMEM, xc_poll() runs nothing;
 *   CTX_SLEEP    on the attached thread between xc_worker_sleep_begin()'s
 *                0 and xc_worker_sleep_end(): a waiting call gets -EDEADLK,
 *                a full ring -EDEADLK, no descriptor -ENOMEM, xc_poll()
 *                -EDEADLK, and no other thread's call runs there;
 *   CTX_ZONE     around that announced sleep, both calls included (a
 *                signal handler landing inside either call is in the sleep
 *                or not, which the thread cannot tell: what the sleep's
 *                refusals return is allowed there, and only there);
 *   CTX_HANDLER  in a signal handler of the program's: -EAGAIN if it
 *                interrupted libxcall on its thread;
 *   CTX_EXITING  in the key destructor of a thread that exits attached
 *                (libxcall may have let go of its ring and pool already).
 */
enum { CTX_URGENT = 1, CTX_SLEEP = 2, CTX_ZONE = 4, CTX_HANDLER = 8, CTX_EXITING = 16 };

static struct prog P;
static struct rec *recs;
static struct xc_call *asyncs;
static struct xc_work *works;
static _Atomic uint32_t nrec, nasync, nwork;
static _Atomic uint64_t clock_seq = 1, streams = 1;
static int cpus[NC], ncpu, cpu_idx[CPU_SETSIZE];
static int attach_cpu = -1;
static _Atomic int failed;
static _Atomic int in_child;
static uint32_t child_base;
static _Atomic uint32_t parent_ran_in_child;
static long bound_ms;
static char trace_path[96];
static int sig_fz;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = snprintf(buf, sizeof(buf), "XCF-FAIL: ");
	n += vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	(void)!write(2, buf, n);
	atomic_store(&failed, 1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/*
 * What one program may spend spinning in all, and calls it may make: past
 * them spins are skipped and calls not made, so that a program's work stays
 * bounded whatever its bodies multiply to (a hang is then a hang).
 */
#define SPIN_BUDGET_US 150000
#define CALL_BUDGET    40000
static _Atomic long spin_budget = SPIN_BUDGET_US;

static void spin_us(long us)
{
	if (atomic_fetch_sub_explicit(&spin_budget, us, memory_order_relaxed) < us)
		return;
	uint64_t end = now_ns() + (uint64_t)us * 1000;

	while (now_ns() < end)
		;
}

/* to a deadline: a timer signal faster than the timer slack would restart a relative sleep for ever */
static void sleep_us(long us)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += us / 1000000;
	ts.tv_nsec += (us % 1000000) * 1000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* ---- every API call bounded: a slot per thread and context ---- */

#define MAXSLOTS 512
/*
 * One slot per thread: when its outermost API call began (0: in none). A
 * signal handler or urgent function on the thread finds it set and leaves
 * it, or sets and clears it whole before the code it interrupted goes on.
 */
struct slot {
	_Atomic uint64_t since;
	_Atomic uint64_t starved0;	/* the process's starved time when it began (progress.c) */
	const char *_Atomic what;
	pid_t tid;
	bool told_slow;			/* the watchdog said it waits longer for a slow machine */
};
static struct slot slots[MAXSLOTS];
static _Atomic int nslots;
static _Atomic uint64_t starved_total;	/* ns the process was starved so far (the watchdog's look) */
static _Atomic int os_changed;		/* the OS changed the CPUs during the run (os_watch_tick) */

struct frame {
	uint64_t stream;
	uint32_t seq;
	bool urgent, handler;
	int depth;
};

/* per thread: its slot, its current frame, its role */
static __thread struct slot *my_slot;
static __thread struct frame *my_frame;
static __thread volatile sig_atomic_t in_handler;
static __thread int my_thr = -1;
static __thread int handler_fn = -1;
static __thread volatile int sigwin_fn = -2;
/* the thread's context (CTX_*): volatile, a signal handler reads what it interrupted */
static __thread volatile sig_atomic_t urgent_depth;	/* urgent functions running on this thread */
static __thread volatile sig_atomic_t in_sleep, sleep_zone, in_exiting;
static __thread volatile uint32_t others_ran;	/* other threads' calls run on this thread */
static __thread pid_t my_tid;
/* this thread's stack, noted where it starts (a worker's cpu_init hook, a program thread) */
static __thread uintptr_t stk_lo, stk_size;
static __thread uintptr_t stk_top;	/* where it was noted: what lies below is the thread's to use */

static pid_t tid_get(void)
{
	if (!my_tid)
		my_tid = (pid_t)syscall(SYS_gettid);
	return my_tid;
}

static unsigned ctx_now(void)
{
	return (urgent_depth ? CTX_URGENT : 0) | (in_sleep ? CTX_SLEEP : 0) | (sleep_zone ? CTX_ZONE : 0) |
	       (in_handler ? CTX_HANDLER : 0) | (in_exiting ? CTX_EXITING : 0);
}

static struct slot *slot_get(void)
{
	struct slot *s = my_slot;

	if (!s) {
		int i = atomic_fetch_add(&nslots, 1);

		if (i >= MAXSLOTS)
			return NULL;
		s = &slots[i];
		s->tid = (pid_t)syscall(SYS_gettid);
		my_slot = s;
	}
	return s;
}

/* NULL: not the outermost (or no slot): api_end leaves the slot be */
static struct slot *api_begin(const char *what)
{
	struct slot *s = slot_get();

	if (!s || atomic_load_explicit(&s->since, memory_order_relaxed))
		return NULL;
	atomic_store_explicit(&s->what, what, memory_order_relaxed);
	atomic_store_explicit(&s->starved0, atomic_load_explicit(&starved_total, memory_order_relaxed),
			      memory_order_relaxed);
	/* release: what and starved0 before the watchdog's acquire of since */
	atomic_store_explicit(&s->since, now_ns(), memory_order_release);
	return s;
}

static void api_end(struct slot *s)
{
	if (s)
		atomic_store_explicit(&s->since, 0, memory_order_release);
}

#define API(what, expr) ({ struct slot *__s = api_begin(what); __typeof__(expr) __r = (expr); api_end(__s); __r; })

/* write(2), not stdio: a stuck thread may hold the stderr lock (XCF-CHILD's comment) */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int k;

	va_start(ap, fmt);
	k = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	(void)!write(2, line, k < (int)sizeof(line) ? k : (int)sizeof(line) - 1);
}

static void os_watch_tick(void);

/*
 * Every API call is bounded: bound_ms of time in which the process was not
 * starved (progress.c: some thread of it runnable and not run by the OS),
 * and BOUND_CAP times that in all. A call past the bound in wall time but
 * not yet in counted time gets one XCF-SLOW line: the machine is slow, and
 * the fuzzer waits.
 */
#define BOUND_CAP 6

static void *watchdog(void *arg)
{
	struct progress pr;
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	progress_init(&pr, 0, (pid_t)syscall(SYS_gettid));
	for (;;) {
		uint64_t t = now_ns(), starved;
		int n = atomic_load(&nslots);

		progress_look(&pr);
		starved = pr.starved_ns;
		atomic_store_explicit(&starved_total, starved, memory_order_relaxed);
		os_watch_tick();
		for (int i = 0; i < n && i < MAXSLOTS; i++) {
			struct slot *sl = &slots[i];
			uint64_t since = atomic_load_explicit(&sl->since, memory_order_acquire);
			uint64_t s0 = atomic_load_explicit(&sl->starved0, memory_order_relaxed);
			uint64_t wall_ms, lost_ms;

			if (!since || t <= since)
				continue;
			wall_ms = (t - since) / 1000000;
			lost_ms = starved > s0 ? (starved - s0) / 1000000 : 0;
			if (lost_ms > wall_ms)
				lost_ms = wall_ms;
			if (wall_ms - lost_ms > (uint64_t)bound_ms || wall_ms > (uint64_t)bound_ms * BOUND_CAP) {
				say("XCF-STUCK: %s in thread %d has not returned for %" PRIu64 " ms (%" PRIu64
				    " ms of them with a runnable thread of the process not run by the OS, not counted;"
				    " the last such thread %d, state %c)\n", atomic_load(&sl->what), sl->tid, wall_ms,
				    lost_ms, pr.starved_tid, pr.starved_state ? pr.starved_state : '-');
				for (;;)
					pause();
			}
			if (wall_ms > (uint64_t)bound_ms && !sl->told_slow) {
				sl->told_slow = true;
				say("XCF-SLOW: %s in thread %d has waited %" PRIu64 " ms, %" PRIu64 " of them with a runnable"
				    " thread of the process not run by the OS (thread %d): they do not count, the bound waits\n",
				    atomic_load(&sl->what), sl->tid, wall_ms, lost_ms, pr.starved_tid);
			}
		}
		sleep_us(100000);
	}
	return NULL;
}

/*
 * The OS taking a CPU away, or giving one back, during a run (hotplug, a
 * cpuset, the process's affinity): libxcall follows it (its worker goes
 * offline and online by itself, xcall.h, xc_cpu_offline()), and so does
 * the fuzzer: one XCF-OS line, and from then on no check that needs the
 * CPUs' states to be the program's alone (os_changed); a later xc_init
 * names only the CPUs the process may still use (cpu_usable).
 */
static char os_online_seen[256];
static cpu_set_t os_aff_seen;

static void os_online_read(char *buf, size_t n)
{
	int fd = open("/sys/devices/system/cpu/online", O_RDONLY | O_CLOEXEC);
	ssize_t k = fd >= 0 ? read(fd, buf, n - 1) : -1;

	if (fd >= 0)
		close(fd);
	buf[k > 0 ? k : 0] = 0;
	buf[strcspn(buf, "\n")] = 0;
}

static void os_watch_init(void)
{
	os_online_read(os_online_seen, sizeof(os_online_seen));
	sched_getaffinity(0, sizeof(os_aff_seen), &os_aff_seen);
}

static void os_watch_tick(void)
{
	char now[256];
	cpu_set_t aff;

	os_online_read(now, sizeof(now));
	sched_getaffinity(0, sizeof(aff), &aff);
	if (!strcmp(now, os_online_seen) && CPU_EQUAL(&aff, &os_aff_seen))
		return;
	say("XCF-OS: the OS's online CPUs are %s (were %s), the process may run on %d CPUs (was %d):"
	    " followed, not a failure\n", now, os_online_seen, CPU_COUNT(&aff), CPU_COUNT(&os_aff_seen));
	snprintf(os_online_seen, sizeof(os_online_seen), "%s", now);
	os_aff_seen = aff;
	atomic_store(&os_changed, 1);
}

/* Whether xc_init may name @cpu now: the process may run there, or the OS holds it offline (xcall.h). */
static bool cpu_usable(int cpu)
{
	char path[64];
	cpu_set_t aff;
	int fd;
	char c = '1';

	if (sched_getaffinity(0, sizeof(aff), &aff) == 0 && CPU_ISSET(cpu, &aff))
		return true;
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (read(fd, &c, 1) != 1)
		c = '1';
	close(fd);
	return c == '0';
}

/*
 * The CPUs the program took offline (bit i: CPU i; xc_cpu_offline returned
 * 0 and no xc_cpu_online since), and a count of hotplug operations begun and
 * ended (offline, online, an exit + init cycle). A call made while none was
 * under way, and none began or ended until it returned, met that set all
 * through: a single, async, any or work item to one of its CPUs must be
 * refused, and many / cond / all must skip them (README: offline CPUs refuse
 * single and async calls and are skipped by many / cond / all).
 */
static _Atomic uint32_t hp_offline;
static _Atomic uint64_t hp_gen;
static _Atomic int hp_active;
/*
 * A body's offline (a call or work item that takes a CPU offline) is made
 * whatever other hotplug operation holds libxcall's hotplug lock: a hotplug
 * call that cannot have it gets -EDEADLK (xcall.h, xc_cpu_offline), except
 * in a cycle through a third CPU's wait, which libxcall does not detect.
 * FZS_NESTED_HOTPLUG=0 steers around all of them, for machines where
 * programs get 3 CPUs or more: a body's offline is made only while no other
 * hotplug operation of the program holds the lock. The program's own
 * hotplug calls take hp_mu (a body's only tries it); a detach or an exit
 * while attached, which hold the lock while they drain, count in hp_holders.
 */
static pthread_mutex_t hp_mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int hp_holders;
static bool nested_hotplug;

/*
 * Hotplug operations of the program may overlap (a body's offline is made
 * under another's lock): libxcall runs them one at a time, in an order the
 * bookkeeping after each return does not see (an offline that returned
 * first may be booked after the online that followed it). So when
 * operations overlapped, the CPUs they touched are left out of hp_offline
 * once the last ends: fewer calls are checked, none wrongly. hp_book orders
 * the bookkeeping; it is never held across a libxcall call, never taken in
 * an urgent function, and held with every signal blocked (a timer's handler
 * or the urgent signal would run a body on its holder, whose calls may wait
 * on a function that wants it).
 */
static pthread_mutex_t hp_book = PTHREAD_MUTEX_INITIALIZER;
static uint32_t hp_touched;	/* CPUs of the operations since hp_active was 0 */
static bool hp_overlap;		/* two of them were under way at once */

static void hp_book_lock(sigset_t *old)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, old);
	pthread_mutex_lock(&hp_book);
}

static void hp_book_unlock(const sigset_t *old)
{
	pthread_mutex_unlock(&hp_book);
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

/*
 * The bookings, for the failure that doubts them ("on a CPU the program
 * had taken offline"): op, CPU, result, clock_seq at the booking, the
 * offline set after it. Written under hp_book.
 */
struct hp_log {
	char what;		/* b: begin, o: offline ended, n: online ended, c: cycle's reset */
	int8_t i, changed;
	uint32_t offline_after;
	uint64_t stamp;
};
#define HPLOG 256
static struct hp_log hp_log[HPLOG];
static uint32_t nhp_log;

static void hp_note(char what, int i, bool changed)
{
	hp_log[nhp_log++ % HPLOG] = (struct hp_log){ what, (int8_t)i, changed, atomic_load(&hp_offline),
						     atomic_load(&clock_seq) };
}

static void hp_log_print(void)
{
	uint32_t n = nhp_log < HPLOG ? nhp_log : HPLOG;

	for (uint32_t k = nhp_log - n; k < nhp_log; k++) {
		const struct hp_log *l = &hp_log[k % HPLOG];

		say("XCF-HP: %c CPU index %d changed %d -> offline 0x%x (clock %" PRIu64 ")\n", l->what, l->i,
		    l->changed, l->offline_after, l->stamp);
	}
}

static void hp_begin(uint32_t cpus_mask)
{
	sigset_t old;

	hp_book_lock(&old);
	hp_note('b', cpus_mask == ~0u ? -1 : __builtin_ctz(cpus_mask), false);
	if (atomic_load(&hp_active) > 0)
		hp_overlap = true;
	hp_touched |= cpus_mask;
	atomic_fetch_add(&hp_active, 1);
	atomic_fetch_add(&hp_gen, 1);
	hp_book_unlock(&old);
}

static void hp_end(int cpu_idx_, bool offline_now, bool changed)
{
	sigset_t old;

	hp_book_lock(&old);
	if (changed) {
		if (offline_now)
			atomic_fetch_or(&hp_offline, 1u << cpu_idx_);
		else
			atomic_fetch_and(&hp_offline, ~(1u << cpu_idx_));
	}
	if (atomic_load(&hp_active) == 1) {
		if (hp_overlap)
			atomic_fetch_and(&hp_offline, ~hp_touched);
		hp_overlap = false;
		hp_touched = 0;
	}
	hp_note(offline_now ? 'o' : 'n', cpu_idx_, changed);
	atomic_fetch_add(&hp_gen, 1);
	atomic_fetch_sub(&hp_active, 1);
	hp_book_unlock(&old);
}

/* xc_cpu_online or xc_cpu_offline of CPU index @i, watched by the bound on API calls */
static int hp_call(int i, bool online)
{
	return online ? API("xc_cpu_online", xc_cpu_online(cpus[i]))
		      : API("xc_cpu_offline", xc_cpu_offline(cpus[i]));
}

/*
 * The program's hotplug operations under way, and a count of those begun
 * and ended, without the exit + init cycles: a hotplug call that meets none
 * but an exit cannot be refused with -EDEADLK (xcall.h: xc_exit() running
 * is -ENXIO; every cause of -EDEADLK is another hotplug operation, an
 * urgent function or an announced sleep). os_changed: the OS took or gave
 * back a CPU during the run; its worker then goes offline or online by
 * itself, under the hotplug lock, unseen here.
 */
static _Atomic int hpx_active;
static _Atomic uint64_t hpx_gen;

/*
 * The program's offlines that returned 0, for the check that each ran
 * what was queued to its CPU before it began (xcall.h, xc_cpu_offline():
 * "run everything already queued there").
 */
struct hp_event {
	int i;
	uint64_t begin, end;	/* clock_seq before the call and after its return */
};
#define MAXHPEV 4096
static struct hp_event hpev[MAXHPEV];
static _Atomic uint32_t nhpev;

/* The same, booked in hp_offline, and its errno checked */
static int hp_op(int i, bool online)
{
	int a0 = atomic_fetch_add(&hpx_active, 1), r;
	uint64_t g0 = atomic_fetch_add(&hpx_gen, 1), g1;
	uint64_t begin = atomic_fetch_add(&clock_seq, 1);
	bool worker = xc_this_cpu() >= 0;

	hp_begin(1u << i);
	r = hp_call(i, online);
	hp_end(i, !online, r == 0);
	g1 = atomic_fetch_add(&hpx_gen, 1);
	atomic_fetch_sub(&hpx_active, 1);
	if (!online && r == 0) {
		uint32_t k = atomic_fetch_add(&nhpev, 1);

		if (k < MAXHPEV)
			hpev[k] = (struct hp_event){ i, begin, atomic_fetch_add(&clock_seq, 1) };
	}
	if (r != 0 && r != -EINVAL && r != -ENXIO && r != -EDEADLK)
		fail("xc_cpu_%s(%d) returned %d, an errno xcall.h does not list for it", online ? "online" : "offline",
		     cpus[i], r);
	else if (r == -EDEADLK && !worker)
		fail("xc_cpu_%s(%d) from a thread that is no worker returned -EDEADLK", online ? "online" : "offline",
		     cpus[i]);
	else if (r == -EDEADLK && online && a0 == 0 && g1 == g0 + 1 && !atomic_load(&hp_holders) &&
		 !atomic_load(&os_changed) && !urgent_depth && !in_handler && !sleep_zone)
		fail("xc_cpu_online(%d) from a call or work item returned -EDEADLK with no other hotplug operation"
		     " under way (an exit + init cycle aside: the runtime going down is -ENXIO)", cpus[i]);
	return r;
}

/* From an urgent function: refused, so nothing to book (and hp_book may be held below). */
static void hp_refused_op(int i, bool online)
{
	int r = hp_call(i, online);

	if (r != -EDEADLK && r != -ENXIO)
		fail("xc_cpu_%s from an urgent function returned %d", online ? "online" : "offline", r);
}

/* ---- calls ---- */

static void run_body(int fn, bool urgent, bool handler, int depth);

static uint32_t rec_new(void)
{
	uint32_t id;

	if (atomic_load_explicit(&nrec, memory_order_relaxed) >= child_base + CALL_BUDGET)
		return UINT32_MAX;
	id = atomic_fetch_add(&nrec, 1);
	if (id >= MAXREC) {
		atomic_store(&nrec, MAXREC);
		return UINT32_MAX;
	}
	atomic_store_explicit(&recs[id].ret, RET_PENDING, memory_order_relaxed);
	return id;
}

/*
 * How deep each CPU's thread has nested, in thousandths of its stack
 * (noted at its start): the waits of a worker nested past its serve floor,
 * three quarters of the stack, refuse waiting calls with -ELOOP (xcall.h,
 * "Nesting has a limit"), and a nest is seen at its calls' functions,
 * a level or so above the deepest wait. Half the stack is the bar: -ELOOP
 * from a CPU whose thread never came near it is a refusal made in error.
 */
static _Atomic uint32_t deep_permille[NC];
#define DEEP_PERMILLE 500

/* Notes the depth of a function beginning on CPU index @i. */
static void note_depth(int i)
{
	char here;
	uintptr_t at = (uintptr_t)&here;

	if (!stk_size || at < stk_lo || at >= stk_lo + stk_size)
		return;
	uint32_t pm = (uint32_t)((stk_lo + stk_size - at) * 1000 / stk_size);
	uint32_t old = atomic_load_explicit(&deep_permille[i], memory_order_relaxed);

	while (pm > old && !atomic_compare_exchange_weak_explicit(&deep_permille[i], &old, pm,
								 memory_order_relaxed, memory_order_relaxed))
		;
}

/* The run of call @id begins here: on which CPU index (-1: none of the runtime's). */
static int ran(uint32_t id)
{
	struct rec *r = &recs[id];
	int cpu = xc_this_cpu(), i = cpu >= 0 && cpu < CPU_SETSIZE ? cpu_idx[cpu] : -1;

	if (atomic_load_explicit(&in_child, memory_order_relaxed) && id < child_base)
		atomic_fetch_add(&parent_ran_in_child, 1);
	/* urgent calls come by signal, anywhere, inside an announced sleep too */
	if (r->caller != tid_get() && !(r->flags & XC_URGENT)) {
		others_ran++;
		/* no other thread's call runs inside the attached thread's announced sleep (xcall.h) */
		if (in_sleep)
			fail("call %u of thread %d ran on the attached thread %d inside its announced sleep"
			     " (between xc_worker_sleep_begin() and _end())", id, r->caller, tid_get());
	}
	if (i < 0) {
		atomic_fetch_add(&r->wrong, 1);
		return -1;
	}
	atomic_fetch_add(&r->runs[i], 1);
	atomic_store(&r->stamp[i], atomic_fetch_add(&clock_seq, 1));
	if (in_handler)
		atomic_fetch_or(&r->in_sig, 1u << i);
	return i;
}

static void fz_fn(void *arg)
{
	uint32_t id = (uint32_t)(uintptr_t)arg;
	struct rec *r = &recs[id];
	bool urgent = r->flags & XC_URGENT;
	/* a function that no urgent one runs: the worker runs urgent calls right after it */
	bool plain = !urgent && !urgent_depth;
	int i;

	if (urgent)
		urgent_depth++;
	i = ran(id);
	if (i >= 0)
		note_depth(i);
	if (r->spin_us && r->kind != K_WORK)
		spin_us(r->spin_us);
	if (r->fn >= 0)
		run_body(r->fn, urgent, false, r->depth + 1);
	if (plain && i >= 0 && r->kind != K_WORK)
		atomic_store(&r->end[i], atomic_fetch_add(&clock_seq, 1));
	if (urgent)
		urgent_depth--;
}

/* A busy work item's spins: their own budget, beside the bodies' */
#define BUSY_BUDGET_US 60000
static _Atomic long busy_budget = BUSY_BUDGET_US;

static void fz_work(void *arg)
{
	uint32_t id = (uint32_t)(uintptr_t)arg;
	struct rec *r = &recs[id];
	long us = r->spin_us;

	if (us && atomic_fetch_sub_explicit(&busy_budget, us, memory_order_relaxed) >= us) {
		uint64_t end;

		ran(id);
		end = now_ns() + (uint64_t)us * 1000;
		while (now_ns() < end)
			;	/* busy, outside libxcall: urgent calls come by signal */
		return;
	}
	fz_fn(arg);
}

static bool fz_cond(int cpu, void *arg)
{
	uint32_t id = (uint32_t)(uintptr_t)arg;
	int i = cpu_idx[cpu];
	bool yes = ((id * 2654435761u) >> (i + 3)) & 1;

	if (yes && i >= 0)
		atomic_fetch_or(&recs[id].chosen, 1u << i);
	return yes;
}

static void mask_set(uint32_t bits, cpu_set_t *s)
{
	CPU_ZERO(s);
	for (int i = 0; i < ncpu; i++)
		if (bits & (1u << i))
			CPU_SET(cpus[i], s);
}

/*
 * Whether xcall.h lets a call return @ret where it was made (r->ctx); NULL
 * if it does, else why not. The header's lists: -ENXIO anywhere (an
 * offline CPU, the runtime down); -EAGAIN only in a signal handler that
 * interrupted libxcall; -EDEADLK for a waiting call only inside an urgent
 * function or an announced sleep, and there always, and for a nowait call
 * only in an announced sleep (a full ring); -ENOMEM for a nowait call only
 * where no wait is allowed (an urgent function, an announced sleep) or in
 * a thread's exit; -ELOOP only for a call (a waiting one, or one whose
 * ring to its target was full), and only from a CPU whose thread nested
 * deep: check_deep. Work items: 0, -ENXIO, -EAGAIN.
 */
static const char *errno_wrong(const struct rec *r, int ret)
{
	/* xc_call_async and xc_queue_work take no flags: they never wait */
	bool work = r->kind == K_WORK, wait = (r->flags & XC_WAIT) && !work && r->kind != K_ASYNC;
	unsigned c = r->ctx;

	if (ret >= 0)
		return wait && (c & (CTX_URGENT | CTX_SLEEP)) ?
		       "a waiting call inside an urgent function or an announced sleep was made: -EDEADLK is due" : NULL;
	switch (-ret) {
	case ENXIO:
		return NULL;
	case EAGAIN:
		return c & CTX_HANDLER ? NULL : "-EAGAIN outside a signal handler";
	case EDEADLK:
		if (!work && (c & (wait ? CTX_URGENT | CTX_ZONE : CTX_ZONE)))
			return NULL;
		return wait ? "-EDEADLK for a waiting call outside an urgent function and an announced sleep"
			    : "-EDEADLK for a call that does not wait, outside an announced sleep";
	case ENOMEM:
		if (!wait && !work && (c & (CTX_URGENT | CTX_ZONE | CTX_EXITING)))
			return NULL;
		return "-ENOMEM where the call may wait for room or a descriptor";
	case ELOOP:
		return work ? "-ELOOP for a work item" : NULL;
	default:
		return "an errno xcall.h does not list for this call";
	}
}

static void do_call_spin(int kind, int target, int flags, int fn, int depth, uint32_t spin);
static void rec_describe(uint32_t id, char *buf, size_t n);

static void do_call(int kind, int target, int flags, int fn, int depth)
{
	do_call_spin(kind, target, flags, fn, depth, 0);
}

/* A call of @kind (K_*), recorded; its function spins @spin us (or, a work item, busies its CPU) */
static void do_call_spin(int kind, int target, int flags, int fn, int depth, uint32_t spin)
{
	struct frame *f = my_frame;
	uint32_t id = rec_new();
	struct rec *r;
	cpu_set_t m;
	int ret;

	if (id == UINT32_MAX)
		return;
	r = &recs[id];
	r->kind = kind;
	r->flags = flags;
	r->fn = fn;
	r->depth = depth;
	r->ctx = ctx_now();
	r->exempt = (flags & XC_URGENT) || !f || f->urgent || (r->ctx & CTX_URGENT);
	r->stream = f ? f->stream : 0;
	r->seq = f ? f->seq++ : 0;
	r->slot = -1;
	r->caller = tid_get();
	r->spin_us = spin;
	/* a many call's urgent flag: generator 3's programs keep it (xcall.h: valid for every call) */
	unsigned mflags = P.gen >= 3 ? (unsigned)flags : flags & ~XC_URGENT;
	void *arg = (void *)(uintptr_t)id;
	/* the hotplug state before the call (see hp_offline) */
	uint64_t g0 = atomic_load(&hp_gen);
	int busy = atomic_load(&hp_active);
	uint32_t off = atomic_load(&hp_offline);

	switch (kind) {
	case K_SINGLE:
		r->tcpu = target % ncpu;
		ret = API("xc_call_single", xc_call_single(cpus[r->tcpu], fz_fn, arg, flags));
		break;
	case K_ASYNC: {
		uint32_t s = atomic_fetch_add(&nasync, 1);

		if (s >= MAXASYNC)
			return;
		r->tcpu = target % ncpu;
		r->slot = s;
		asyncs[s].fn = fz_fn;
		asyncs[s].arg = arg;
		ret = API("xc_call_async", xc_call_async(cpus[r->tcpu], &asyncs[s]));
		break;
	}
	case K_WORK: {
		uint32_t s = atomic_fetch_add(&nwork, 1);

		if (s >= MAXWORK)
			return;
		r->tcpu = target % ncpu;
		r->slot = s;
		r->exempt = 1;	/* work items have an order of their own */
		works[s].fn = fz_work;
		works[s].arg = arg;
		ret = API("xc_queue_work", xc_queue_work(cpus[r->tcpu], &works[s]));
		break;
	}
	case K_ANY:
		r->mask = target & ((1u << ncpu) - 1);
		if (!r->mask)
			r->mask = 1;
		mask_set(r->mask, &m);
		ret = API("xc_call_any", xc_call_any(&m, fz_fn, arg, flags & ~XC_RUN_LOCAL));
		if (ret >= 0 && (ret >= CPU_SETSIZE || cpu_idx[ret] < 0)) {
			fail("call %u: xc_call_any returned CPU %d, not in the set", id, ret);
			ret = -1000;
		} else if (ret >= 0) {
			r->tcpu = cpu_idx[ret];
			ret = 0;
		}
		break;
	case K_MANY:
	case K_COND:
		r->mask = target & ((1u << ncpu) - 1);
		if (!r->mask)
			r->mask = 1;
		mask_set(r->mask, &m);
		if (kind == K_MANY)
			ret = API("xc_call_many", xc_call_many(&m, fz_fn, arg, mflags));
		else
			ret = API("xc_call_cond", xc_call_cond(&m, fz_cond, fz_fn, arg, mflags));
		break;
	default:
		r->mask = (1u << ncpu) - 1;
		ret = API("xc_call_all", xc_call_all(fz_fn, arg, mflags));
		break;
	}
	r->ret_stamp = atomic_fetch_add(&clock_seq, 1);
	if (!busy && atomic_load(&hp_gen) == g0)
		r->offline = off & ((1u << ncpu) - 1);
	{
		const char *why = errno_wrong(r, ret);

		if (why) {
			char d[256];

			atomic_store_explicit(&r->ret, ret, memory_order_relaxed);
			rec_describe(id, d, sizeof(d));
			fail("%s: %s (made in:%s%s%s%s%s)", d, why, r->ctx & CTX_URGENT ? " urgent function" : "",
			     r->ctx & CTX_SLEEP ? " announced sleep" : "", r->ctx & CTX_ZONE ? " around a sleep" : "",
			     r->ctx & CTX_HANDLER ? " signal handler" : "", r->ctx & CTX_EXITING ? " thread exit" : "");
		}
	}
	atomic_store_explicit(&r->ret, ret, memory_order_release);
}

/* A body's CPU -1: the CPU it runs on (index 0 where it runs on none) */
static int own_idx(int b)
{
	int cpu;

	if (b >= 0)
		return b;
	cpu = xc_this_cpu();
	return cpu >= 0 && cpu < CPU_SETSIZE && cpu_idx[cpu] >= 0 ? cpu_idx[cpu] : 0;
}

/*
 * xc_poll() where it was made (xcall.h): inside an urgent function it runs
 * nothing and returns 0; inside an announced sleep it runs nothing and
 * gets -EDEADLK; elsewhere the count run, -ENXIO off a worker, -EAGAIN in
 * a handler that interrupted libxcall.
 */
static void do_poll(void)
{
	unsigned c = ctx_now();
	uint32_t before = others_ran;
	int r = API("xc_poll", xc_poll()), ran_n = (int)(others_ran - before);
	const char *why = NULL;

	if (r == -EAGAIN && (c & CTX_HANDLER))
		return;
	if (c & CTX_URGENT)
		why = r != 0 ? "returned other than 0 inside an urgent function" :
		      ran_n ? "ran calls inside an urgent function" : NULL;
	else if (c & CTX_SLEEP)
		why = r != -EDEADLK ? "returned other than -EDEADLK inside an announced sleep" :
		      ran_n ? "ran calls inside an announced sleep" : NULL;
	else if (r < 0 && r != -ENXIO && !(r == -EDEADLK && (c & CTX_ZONE)))
		why = "returned an errno xcall.h does not list for it";
	if (why)
		fail("xc_poll() %s: %d (%d calls of other threads ran in it)", why, r, ran_n);
}

/*
 * Async completion chains (xcall.h, xc_call_async(), "Chains"): the
 * descriptor's completion callback queues it again to the CPU it runs on,
 * links times in all, each link's function then running at once, inline.
 * Checked at the end: every link queued ran, once, in order (a link's
 * function after the callback of the one before), on its CPU, and the
 * descriptor is done; a chain may be cut short by an offline (-ENXIO).
 */
struct chain {
	struct xc_call call;
	int cpu, links, err;
	uint32_t queued;		/* links queued with 0, the first included */
	_Atomic uint32_t ran, dones, wrong_cpu, out_of_order;
};
#define MAXCHAIN     4096
#define CHAIN_BUDGET 400000	/* links a program may queue in all */
static struct chain *chains;
static _Atomic uint32_t nchain;
static _Atomic long chain_budget = CHAIN_BUDGET;

static void chain_fn(void *arg)
{
	struct chain *ch = arg;

	/* the callback of the link before has run (it queued this one), and no later one */
	if (atomic_load_explicit(&ch->ran, memory_order_relaxed) != atomic_load_explicit(&ch->dones, memory_order_relaxed))
		atomic_fetch_add_explicit(&ch->out_of_order, 1, memory_order_relaxed);
	if (xc_this_cpu() != ch->cpu)
		atomic_fetch_add_explicit(&ch->wrong_cpu, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&ch->ran, 1, memory_order_relaxed);
}

static void chain_done(void *arg)
{
	struct chain *ch = arg;
	uint32_t d = atomic_fetch_add_explicit(&ch->dones, 1, memory_order_relaxed) + 1;
	int r;

	if (d >= (uint32_t)ch->links || ch->err)
		return;
	if (atomic_fetch_sub_explicit(&chain_budget, 1, memory_order_relaxed) < 1) {
		ch->err = 1;	/* the program's budget: cut short, nothing wrong */
		return;
	}
	r = xc_call_async(xc_this_cpu(), &ch->call);
	if (r == 0) {
		ch->queued++;
	} else {
		unsigned c = ctx_now();

		ch->err = r;
		if (r != -ENXIO && !(r == -EAGAIN && (c & CTX_HANDLER)) && !(r == -ENOMEM && (c & (CTX_URGENT | CTX_ZONE))) &&
		    !(r == -EDEADLK && (c & CTX_ZONE)))
			fail("chain %ld: a completion callback's xc_call_async() to its own CPU %d returned %d",
			     (long)(ch - chains), xc_this_cpu(), r);
	}
}

static void op_chain(int links, int cpu_i, bool from_thread)
{
	uint32_t k = atomic_fetch_add(&nchain, 1);
	struct chain *ch;
	int r;

	if (k >= MAXCHAIN || links < 1)
		return;
	if (atomic_fetch_sub(&chain_budget, links) < links) {
		links = 1;	/* the budget is spent: one link */
	}
	ch = &chains[k];
	ch->cpu = cpus[cpu_i % ncpu];
	ch->links = links;
	ch->call.fn = chain_fn;
	ch->call.arg = ch;
	ch->call.on_done.fn = chain_done;
	ch->call.on_done.arg = ch;
	ch->queued = 1;		/* before: the chain may run to its end before the call returns */
	r = API("xc_call_async", xc_call_async(ch->cpu, &ch->call));
	(void)from_thread;
	if (r == 0)
		return;
	ch->queued = 0;
	ch->err = r;
	{
		unsigned c = ctx_now();

		/* -ELOOP: its ring to a CPU nested past its floor was full (xcall.h, "Nesting has a limit") */
		if (r != -ENXIO && !(r == -EAGAIN && (c & CTX_HANDLER)) && !(r == -ENOMEM && (c & (CTX_URGENT | CTX_ZONE | CTX_EXITING))) &&
		    !(r == -EDEADLK && (c & CTX_ZONE)) &&
		    !(r == -ELOOP && atomic_load(&deep_permille[cpu_i % ncpu]) >= DEEP_PERMILLE))
			fail("chain %u: xc_call_async() to CPU %d returned %d", k, ch->cpu, r);
	}
}

static int check_chains(void)
{
	int bad = 0;
	uint32_t n = atomic_load(&nchain);

	for (uint32_t k = 0; k < n && k < MAXCHAIN && bad < 10; k++) {
		struct chain *ch = &chains[k];
		uint32_t ran = atomic_load(&ch->ran), dones = atomic_load(&ch->dones);

		if (!ch->links)
			continue;
		if (ran != ch->queued || dones != ch->queued || atomic_load(&ch->wrong_cpu) ||
		    atomic_load(&ch->out_of_order) || (ch->queued && !xc_call_done(&ch->call)) ||
		    (!ch->err && ch->queued != (uint32_t)ch->links)) {
			fail("chain %u to CPU %d, %d links: %u queued, %u ran, %u completed, %u on another CPU,"
			     " %u out of order, done %d, last error %d", k, ch->cpu, ch->links, ch->queued, ran, dones,
			     atomic_load(&ch->wrong_cpu), atomic_load(&ch->out_of_order), xc_call_done(&ch->call), ch->err);
			bad++;
		}
	}
	return bad;
}

static void exec_op(const struct op *o, bool urgent, bool handler, int depth)
{
	struct xc_stats st;

	switch (o->code) {
	case OP_CALL:
		if (depth < MAXDEPTH)
			do_call(o->a, o->a == K_SINGLE || o->a == K_ASYNC ? own_idx(o->b) : o->b,
				o->c & XC_FLAGS_ALL, o->d, depth);
		break;
	case OP_BURST:
		for (int i = 0; i < o->a && i < 200 && depth < MAXDEPTH; i++)
			do_call(K_SINGLE, o->b, 0, i == 0 || o->c == 1 ? o->d : -1, depth);
		break;
	case OP_WORK:
		if (depth < MAXDEPTH)
			do_call(K_WORK, own_idx(o->b), 0, o->d, depth);
		break;
	case OP_SPIN:
		spin_us(urgent || handler ? (o->a < 50 ? o->a : 50) : (o->a < 5000 ? o->a : 5000));
		break;
	case OP_POLL:
		do_poll();
		break;
	case OP_CHAIN:
		if (depth < MAXDEPTH)
			op_chain(o->a, own_idx(o->b), false);
		break;
	case OP_STATS:
		(void)API("xc_stats_get", xc_stats_get(o->a < 0 ? -1 : cpus[o->a % ncpu], &st));
		break;
	case OP_OFFLINE:
		/*
		 * a call or work item takes a CPU offline; not in a signal handler
		 * (xcall.h: hotplug is not for them), nor in a call that a
		 * handler's call ran inline or its wait ran: that is the handler too
		 */
		if (handler || in_handler)
			break;
		if (urgent || urgent_depth) {
			hp_refused_op(o->b % ncpu, false);
			if (o->a)
				hp_refused_op(o->b % ncpu, true);
			break;
		}
		/* steered (FZS_NESTED_HOTPLUG=0): only while no other hotplug call holds the lock */
		if (!nested_hotplug && (atomic_load(&hp_holders) || pthread_mutex_trylock(&hp_mu)))
			break;
		if (hp_op(o->b % ncpu, false) == 0 && o->a)
			hp_op(o->b % ncpu, true);
		if (!nested_hotplug)
			pthread_mutex_unlock(&hp_mu);
		break;
	default:
		break;	/* thread-level ops do nothing inside a function */
	}
}

static void run_framed(int permille, int fn, int from, bool urgent, bool handler, int depth);

/* Body @fn's steps from @from on; a frame step runs the rest inside its frame. */
static void run_steps(int fn, int from, bool urgent, bool handler, int depth)
{
	for (int i = from; i < P.fn[fn].n; i++) {
		const struct op *o = &P.fn[fn].op[i];

		if (o->code == OP_FRAME && !urgent && !handler && !in_handler && !urgent_depth) {
			run_framed(o->a, fn, i + 1, urgent, handler, depth);
			return;
		}
		exec_op(o, urgent, handler, depth);
	}
}

/*
 * The frame step: @permille thousandths of what this thread's stack had
 * left where it was noted (stk_note), touched from the top down, the rest
 * of the body below it; so a worker's nest of such bodies reaches its serve
 * floor in a few levels. A frame ends 4 KiB above the floor at most (3/4
 * of the stack, src/run/wait.c): what lies below it is libxcall's, for the
 * waits it still makes there (a wait's stuck report resolves symbols, which
 * overflowed the last eighth of a 64 KiB stack that a frame had taken).
 * Never in an urgent function or a signal handler (or what they run), which
 * may land on a worker past its floor.
 */
static __attribute__((noinline)) void run_framed(int permille, int fn, int from, bool urgent,
						 bool handler, int depth)
{
	char here;
	uintptr_t at = (uintptr_t)&here, left = stk_top > stk_lo ? stk_top - stk_lo : 0;
	uintptr_t edge = stk_lo + left / 4 + 4096;
	size_t n = permille > 0 && permille <= 250 ? left / 1000 * (size_t)permille : 0;

	if (at < edge || at > stk_top)
		n = 0;
	else if (n > at - edge)
		n = at - edge;
	if (n > (1u << 20))
		n = 1u << 20;
	if (n < 1024) {
		run_steps(fn, from, urgent, handler, depth);
		return;
	}
	volatile char locals[n];

	for (size_t k = n; k > 0; k -= k < 4096 ? k : 4096)
		locals[k - 1] = 0;
	run_steps(fn, from, urgent, handler, depth);
	locals[0] = locals[n - 1];
}

static void run_body(int fn, bool urgent, bool handler, int depth)
{
	struct frame fr = { atomic_fetch_add(&streams, 1), 0, urgent, handler, depth };
	struct frame *saved = my_frame;

	if (fn < 0 || fn >= P.nfunc)
		return;
	my_frame = &fr;
	run_steps(fn, 0, urgent, handler, depth);
	my_frame = saved;
}

/* ---- threads ---- */

/* sigfull: the nowait calls the next sigwin's handler makes, and to which CPU index */
static __thread volatile int sigfull_n, sigfull_cpu;

static void on_sig(int sig)
{
	int saved = errno, fn, was = in_handler;

	(void)sig;
	in_handler = 1;
	if (sigwin_fn != -2) {
		fn = sigwin_fn;
		sigwin_fn = -2;
		do_poll();
		/* past the ring's room: -EDEADLK, since waiting for room would serve inside the sleep */
		for (int n = sigfull_n; n > 0; n--)
			do_call(K_SINGLE, sigfull_cpu, 0, -1, 1);
		sigfull_n = 0;
	} else {
		fn = handler_fn;
	}
	run_body(fn, false, true, 1);
	in_handler = was;
	errno = saved;
}

struct thr {
	int t;
	pthread_t pt;
	timer_t timer;
	bool has_timer;
	int ep, fd, stopfd;
	bool attached;
	int exit_fn;		/* OP_EXIT: -2 none, else the destructor's body */
};
static struct thr thrs[MAXT];
static pthread_attr_t thread_attr;	/* the program's own threads: 8 MiB stacks, whatever the workers get */
static pthread_barrier_t start_bar;
static _Atomic int stop_attached;

/* ---- the cpu_init hook (struct prog, HOOK_*) ---- */

/*
 * This thread's stack, for the depth its calls' functions reach
 * (note_depth): a worker's, from its bringup hook; a program thread's,
 * from its start. pthread_getattr_np may allocate: never in a handler.
 */
static void stk_note(void)
{
	pthread_attr_t a;
	void *addr;
	size_t size;
	char here;

	if (pthread_getattr_np(pthread_self(), &a))
		return;
	if (!pthread_attr_getstack(&a, &addr, &size)) {
		stk_lo = (uintptr_t)addr;
		stk_size = size;
		stk_top = (uintptr_t)&here;
	}
	pthread_attr_destroy(&a);
}

static _Atomic int init_no;		/* this process's xc_init calls so far */
static _Atomic int init0_over;		/* the first xc_init returned, and the runtime after it is up */
static _Atomic int stall_left;		/* HOOK_STALL hooks still running */
static __thread bool attaching;		/* in xc_worker_attach: its cpu_init hook is the attach's */
/* atthp: a thread asks the next attach's hook to hold, and says when the CPU went online */
static _Atomic int atthp_want, hook_holding, atthp_online;
static double slow_factor = 1;		/* the machine's load (FZS_SLOW, from the parent): bounds grow with it */

static long tmo_ms(long ms)
{
	return (long)(ms * FZ_SLOW * slow_factor);
}

static void hook_nothing(void *arg)
{
	(void)arg;
}

/*
 * A bringup hook's calls: each must get -ENXIO (xcall.h, xc_opts.cpu_init:
 * no runtime is up until every hook has returned; one left running by a
 * timed-out xc_init takes no part in any later runtime).
 */
static void hook_calls(int cpu, const char *when)
{
	static struct xc_work hook_works[NC * 4];
	static _Atomic int nhw;
	cpu_set_t all;
	int r;

	for (int i = 0; i < ncpu; i++) {
		int w = atomic_fetch_add(&nhw, 1) % (NC * 4);

		if ((r = xc_call_single(cpus[i], hook_nothing, NULL, 0)) != -ENXIO ||
		    (r = xc_call_single(cpus[i], hook_nothing, NULL, XC_WAIT)) != -ENXIO ||
		    (hook_works[w].fn = hook_nothing, (r = xc_queue_work(cpus[i], &hook_works[w])) != -ENXIO))
			fail("the cpu_init hook of CPU %d %s: a call to CPU %d returned %d, not -ENXIO", cpu, when,
			     cpus[i], r);
	}
	mask_set((1u << ncpu) - 1, &all);
	if ((r = xc_call_many(&all, hook_nothing, NULL, XC_WAIT)) != -ENXIO ||
	    (r = xc_call_all(hook_nothing, NULL, XC_WAIT)) != -ENXIO)
		fail("the cpu_init hook of CPU %d %s: xc_call_many/all returned %d, not -ENXIO", cpu, when, r);
}

static int fz_hook(int cpu, void *arg)
{
	int n = (int)(intptr_t)arg, i = cpu >= 0 && cpu < CPU_SETSIZE ? cpu_idx[cpu] : -1;

	stk_note();
	if (attaching) {
		/* an attach's hook: hold it open while an atthp brings the CPU online (bounded) */
		if (atomic_load(&atthp_want)) {
			uint64_t until = now_ns() + 200000000ull;

			atomic_store(&hook_holding, 1);
			while (!atomic_load(&atthp_online) && now_ns() < until)
				sleep_us(100);
			atomic_store(&hook_holding, 0);
		}
		return 0;
	}
	/* xcall.h, xc_this_cpu(): in a worker's cpu_init hook its CPU */
	if (xc_this_cpu() != cpu)
		fail("the cpu_init hook of CPU %d: xc_this_cpu() returned %d", cpu, xc_this_cpu());
	if (P.hook == HOOK_CALL || (n > 0 && P.hook != HOOK_NONE))
		hook_calls(cpu, "at its bringup");
	if (n != 0 || i != P.hook_cpu)
		return 0;
	if (P.hook == HOOK_FAIL)
		return -EPERM;
	if (P.hook == HOOK_STALL) {
		/* past the timeout and the cancellation: its thread is left to run on */
		uint64_t until = now_ns() + (uint64_t)tmo_ms(60000) * 1000000ull;
		int old;

		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
		atomic_fetch_add(&stall_left, 1);
		while (!atomic_load(&init0_over) && now_ns() < until)
			sleep_us(1000);
		if (xc_this_cpu() != -1)
			fail("the cpu_init hook of CPU %d, left running by a timed-out xc_init: xc_this_cpu() returned %d,"
			     " not -1", cpu, xc_this_cpu());
		hook_calls(cpu, "left running by a timed-out xc_init, beside the next runtime");
		atomic_fetch_sub(&stall_left, 1);
		pthread_setcancelstate(old, NULL);
	}
	return 0;
}

static int make_opts(struct xc_opts *o, bool with_attach, bool trace, char *cpubuf, char *attbuf)
{
	int n = 0, k = atomic_fetch_add(&init_no, 1);

	memset(o, 0, sizeof(*o));
	o->cpu_init = fz_hook;
	o->cpu_init_arg = (void *)(intptr_t)k;
	for (int i = 0; i < ncpu; i++) {
		if (!cpu_usable(cpus[i])) {
			say("XCF-OS: CPU %d is online but the process may no longer run there: left out of xc_init\n",
			    cpus[i]);
			atomic_store(&os_changed, 1);
			continue;
		}
		n += sprintf(cpubuf + n, "%s%d", n ? "," : "", cpus[i]);
	}
	o->cpus = cpubuf;
	o->ring_entries = P.ring;
	o->stuck_ms = 1000 * FZ_SLOW;
	/* a loaded machine under a sanitizer (a fork child's workers beside the parent's) is slow to boot */
	o->bringup_timeout_ms = tmo_ms(20000);
	if (k == 0 && P.hook == HOOK_STALL)
		o->bringup_timeout_ms = P.btimeout;
	o->poll_ns = P.poll == 0 ? XC_POLL_ADAPTIVE : P.poll == 1 ? XC_POLL_NONE : 20000;
	if (trace) {
		o->trace_file = trace_path;
		o->trace_events = 1024;
	}
	if (with_attach && attach_cpu >= 0 && cpu_usable(attach_cpu)) {
		sprintf(attbuf, "%d", attach_cpu);
		o->attach = attbuf;
	}
	return 0;
}

static void timer_set(struct thr *th, long us)
{
	struct itimerspec its = { { us / 1000000, (us % 1000000) * 1000 }, { us / 1000000, (us % 1000000) * 1000 } };

	if (!th->has_timer) {
		struct sigevent ev = { 0 };

		ev.sigev_notify = SIGEV_THREAD_ID;
		ev.sigev_signo = sig_fz;
		ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
		if (timer_create(CLOCK_MONOTONIC, &ev, &th->timer))
			return;
		th->has_timer = true;
	}
	timer_settime(th->timer, 0, &its, NULL);
}

/* ---- fork: the child runs a short program of its own ---- */

static void *child_streamer(void *arg)
{
	int n = (int)(intptr_t)arg;
	struct frame fr = { atomic_fetch_add(&streams, 1), 0, false, false, 0 };

	my_frame = &fr;
	for (int i = 0; i < n; i++)
		do_call(K_SINGLE, i, 0, -1, 0);
	do_call(K_SINGLE, 0, XC_WAIT, -1, 0);
	return NULL;
}

static int check_recs(uint32_t from, uint32_t to, bool order);

static void fz_nothing(void *arg)
{
	(void)arg;
}

static void child_program(const struct op *o)
{
	struct xc_opts opts;
	char cb[64], ab[16];
	pthread_t t;
	int r;

	atomic_store(&in_child, 1);
	child_base = atomic_load(&nrec);
	my_tid = 0;	/* this thread's own, not the parent's forking thread's */
	/* a runtime of its own, every CPU online; the parent's threads are not here */
	atomic_store(&hp_offline, 0);
	atomic_store(&hp_active, 0);
	atomic_store(&hpx_active, 0);
	atomic_store(&nhpev, 0);
	atomic_store(&stall_left, 0);
	pthread_mutex_init(&hp_book, NULL);	/* a thread of the parent may have held it */
	hp_touched = 0;
	hp_overlap = false;
	atomic_store(&spin_budget, SPIN_BUDGET_US / 4);
	atomic_store(&failed, 0);
	if (FZ_CHILD_NO_THREADS) {
		/* the parent's runtime is not the child's: every call is refused */
		if (xc_call_single(0, fz_nothing, NULL, 0) != -ENXIO ||
		    xc_call_single(0, fz_nothing, NULL, XC_WAIT) != -ENXIO)
			_exit(3);
		_exit(0);
	}
	make_opts(&opts, false, false, cb, ab);
	r = xc_init(&opts);
	if (r) {
		fail("fork child: xc_init returned %d", r);
		_exit(3);
	}
	if (pthread_create(&t, &thread_attr, child_streamer, (void *)(intptr_t)o->a) == 0) {
		run_body(o->d, false, false, 1);
		pthread_join(t, NULL);
	}
	hp_begin(~0u);
	r = xc_exit();
	if (r)
		fail("fork child: xc_exit returned %d", r);
	check_recs(child_base, atomic_load(&nrec), true);
	if (atomic_load(&parent_ran_in_child))
		fail("fork child: %u calls of the parent ran in the child", atomic_load(&parent_ran_in_child));
	_exit(atomic_load(&failed) ? 3 : 0);
}

static void do_fork(const struct op *o)
{
	pid_t pid;
	int st = 0;

	if (FZ_TSAN)
		return;
	pid = fork();
	if (pid < 0)
		return;
	if (pid == 0) {
		my_slot = NULL;
		child_program(o);
	}
	{
		/*
		 * write(2), not stdio: this thread's timer handler may make a waiting
		 * call, and a worker that reports a stuck call through stdio would wait
		 * for the stderr lock this thread would hold
		 */
		char line[40];
		int n = snprintf(line, sizeof(line), "XCF-CHILD pid=%d\n", pid);

		(void)!write(2, line, n);
	}
	{
		/* bounded as an API call, counted by the child's own progress (its threads, not ours) */
		struct progress pr;
		uint64_t t0 = now_ns(), looked = 0;
		pid_t w;

		progress_init(&pr, pid, 0);
		while ((w = waitpid(pid, &st, WNOHANG)) == 0 || (w < 0 && errno == EINTR)) {
			uint64_t wall_ms = (now_ns() - t0) / 1000000, lost_ms;

			if (now_ns() - looked > 100000000ull) {
				progress_look(&pr);
				looked = now_ns();
			}
			lost_ms = pr.starved_ns / 1000000 < wall_ms ? pr.starved_ns / 1000000 : wall_ms;
			if (wall_ms - lost_ms > (uint64_t)bound_ms || wall_ms > (uint64_t)bound_ms * BOUND_CAP) {
				say("XCF-STUCK: fork child %d has not ended for %" PRIu64 " ms (%" PRIu64 " ms of them with"
				    " a runnable thread of it not run by the OS, not counted)\n", pid, wall_ms, lost_ms);
				for (;;)
					pause();
			}
			sleep_us(2000);
		}
	}
	if (WIFSIGNALED(st))
		fail("fork child %d died of signal %d (%s)", pid, WTERMSIG(st), strsignal(WTERMSIG(st)));
	else if (WEXITSTATUS(st))
		fail("fork child %d exited %d", pid, WEXITSTATUS(st));
}

static void do_cycle(const struct op *o)
{
	struct xc_opts opts;
	char cb[64], ab[16];
	int r;

	uint64_t begin = atomic_fetch_add(&clock_seq, 1);

	hp_begin(~0u);	/* every CPU comes back online */
	r = API("xc_exit", xc_exit());
	if (r == 0) {
		/* it ran what was queued: checked as an offline of every CPU (check_drained) */
		uint32_t k = atomic_fetch_add(&nhpev, 1);

		if (k < MAXHPEV)
			hpev[k] = (struct hp_event){ -1, begin, atomic_fetch_add(&clock_seq, 1) };
	}
	if (r == -EBUSY) {
		hp_end(0, false, false);
		return;		/* an attached thread is attached */
	}
	if (r && r != -ENXIO)
		fail("xc_exit returned %d", r);
	if (P.trace)
		unlink(trace_path);
	make_opts(&opts, true, o->a, cb, ab);
	r = API("xc_init", xc_init(&opts));
	if (r)
		fail("xc_init returned %d (%s)", r, strerror(-r));
	atomic_store(&hp_offline, 0);
	hp_end(0, false, false);
}

/* the attached thread's loop: one iteration (sigwin: its own signal lands in the announced sleep) */
static void loop_iter(struct thr *th, int sigwin)
{
	struct epoll_event ev[4];
	int r;

	if (!th->attached)
		return;
	do_poll();
	/* the zone covers both calls: a handler inside either may find the sleep announced */
	sleep_zone = 1;
	atomic_signal_fence(memory_order_seq_cst);
	r = API("xc_worker_sleep_begin", xc_worker_sleep_begin());
	if (r == 0) {
		in_sleep = 1;
		atomic_signal_fence(memory_order_seq_cst);
		if (sigwin != -2) {
			sigwin_fn = sigwin;
			syscall(SYS_tgkill, getpid(), tid_get(), sig_fz);
		}
		if (!atomic_load(&stop_attached))
			epoll_wait(th->ep, ev, 4, -1);
		atomic_signal_fence(memory_order_seq_cst);
		in_sleep = 0;
	}
	(void)API("xc_worker_sleep_end", xc_worker_sleep_end());
	atomic_signal_fence(memory_order_seq_cst);
	sleep_zone = 0;
}

static void attach(struct thr *th)
{
	struct epoll_event ev = { .events = EPOLLIN };

	for (int i = 0; i < 200 && !th->attached && !atomic_load(&stop_attached); i++) {
		attaching = true;
		int r = API("xc_worker_attach", xc_worker_attach(attach_cpu));

		attaching = false;
		if (r == 0) {
			th->attached = true;
			th->fd = xc_worker_fd();
			epoll_ctl(th->ep, EPOLL_CTL_ADD, th->fd, &ev);
			break;
		}
		sleep_us(200);
	}
}

static void detach(struct thr *th)
{
	int r;

	if (!th->attached)
		return;
	epoll_ctl(th->ep, EPOLL_CTL_DEL, th->fd, NULL);
	atomic_fetch_add(&hp_holders, 1);
	r = API("xc_worker_detach", xc_worker_detach());
	atomic_fetch_sub(&hp_holders, 1);
	if (r)
		fail("xc_worker_detach returned %d", r);
	th->attached = false;
}

static void stop_fn(void *arg)
{
}

/*
 * xhot: a work item on CPU index a takes CPU index b offline and back
 * online, at most c times, until a call is refused with -ENXIO: the main
 * thread brings the runtime down meanwhile (an exit + init cycle), once
 * the item has begun. Its hotplug calls are checked by hp_op: -EDEADLK,
 * with no other hotplug operation under way, is a refusal made in error.
 */
struct xhot {
	struct xc_work work;
	int b, iters;
	_Atomic int begun;
};
#define MAXXHOT 64
static struct xhot xhots[MAXXHOT];
static _Atomic int nxhot;

static void xhot_fn(void *arg)
{
	struct xhot *x = arg;

	atomic_store(&x->begun, 1);
	/* run by a wait inside the program's signal handler: no hotplug there (xcall.h) */
	for (int k = 0; k < x->iters && !in_handler; k++) {
		int r;

		/* steered (FZS_NESTED_HOTPLUG=0) as a body's offline is */
		if (!nested_hotplug && (atomic_load(&hp_holders) || pthread_mutex_trylock(&hp_mu))) {
			sched_yield();
			continue;
		}
		r = hp_op(x->b, false);
		if (r == 0)
			r = hp_op(x->b, true);
		if (!nested_hotplug)
			pthread_mutex_unlock(&hp_mu);
		if (r == -ENXIO)
			break;
	}
	atomic_store(&x->begun, 2);
}

static void do_cycle(const struct op *o);

static void op_xhot(struct thr *th, const struct op *o)
{
	int k = atomic_fetch_add(&nxhot, 1);
	struct xhot *x;
	uint64_t until;

	if (k >= MAXXHOT || th->t != 0 || ncpu < 2)
		return;
	x = &xhots[k];
	x->b = o->b % ncpu;
	x->iters = o->c;
	x->work.fn = xhot_fn;
	x->work.arg = x;
	if (API("xc_queue_work", xc_queue_work(cpus[o->a % ncpu], &x->work)) != 0)
		return;
	/* once it runs (bounded: a busy CPU may hold it back), the runtime goes down under it */
	until = now_ns() + 50000000ull;
	while (!atomic_load(&x->begun) && now_ns() < until)
		sleep_us(200);
	pthread_mutex_lock(&hp_mu);
	do_cycle(&(struct op){ OP_CYCLE, 0, 0, 0, 0 });
	pthread_mutex_unlock(&hp_mu);
}

/*
 * atthp (a plain thread): the attached CPU offline, then online while the
 * attached thread's next attach is held open in its cpu_init hook, then
 * calls to it. Online must leave the CPU's opening to the attach: a call
 * let in before it would be lost when the attach opens the CPU.
 */
static void op_atthp(const struct op *o)
{
	int i = ncpu - 1, r;
	uint64_t until;

	if (attach_cpu < 0)
		return;
	pthread_mutex_lock(&hp_mu);
	r = hp_op(i, false);
	pthread_mutex_unlock(&hp_mu);
	if (r && r != -EINVAL)
		return;
	atomic_store(&atthp_online, 0);
	atomic_store(&atthp_want, 1);
	until = now_ns() + 100000000ull;
	while (!atomic_load(&hook_holding) && now_ns() < until)
		sleep_us(100);
	pthread_mutex_lock(&hp_mu);
	hp_op(i, true);
	pthread_mutex_unlock(&hp_mu);
	for (int k = 1; k < o->a; k++)
		do_call(K_SINGLE, i, 0, -1, 0);
	atomic_store(&atthp_online, 1);
	atomic_store(&atthp_want, 0);
	do_call(K_SINGLE, i, XC_WAIT, -1, 0);
}

/* the program's streams: shorter under a sanitizer, which runs each call many times slower */
static int stream_len(int n)
{
	n /= FZ_SLOW;
	return n > 0 ? n : 1;
}

static void exec_thread_op(struct thr *th, const struct op *o)
{
	int r;

	switch (o->code) {
	case OP_USTREAM:
		for (int k = stream_len(o->a); k > 0; k--) {
			do_call(K_SINGLE, o->b, XC_URGENT, o->d, 0);
			if (o->c)
				sleep_us(o->c);
		}
		break;
	case OP_STREAM:
		for (int k = stream_len(o->a); k > 0; k--) {
			do_call_spin(K_SINGLE, o->b, 0, -1, 0, o->c);
			if (o->d)
				sleep_us(o->d);
		}
		break;
	case OP_BUSY:
		do_call_spin(K_WORK, o->b, 0, -1, 0, o->a);
		break;
	case OP_EDGE:
		/* a burst, then nothing: the worker unlinks its rings and sleeps at the edge of each */
		for (int k = 0; k < o->a; k++) {
			for (int j = 0; j <= k % 3; j++)
				do_call(K_SINGLE, o->b, 0, -1, 0);
			if (o->c)
				do_call(K_SINGLE, o->b, XC_WAIT, -1, 0);
			sleep_us(o->d);
		}
		break;
	case OP_XHOT:
		op_xhot(th, o);
		break;
	case OP_CHAIN:
		op_chain(o->a, o->b, true);
		break;
	case OP_ATTHP:
		op_atthp(o);
		break;
	case OP_SIGFULL:
		if (!th->attached)
			break;
		/* its CPU busy, so that the handler's calls fill the ring */
		do_call_spin(K_WORK, o->b, 0, -1, 0, o->d);
		sleep_us(200);
		sigfull_cpu = o->b;
		sigfull_n = o->a;
		loop_iter(th, -1);
		sigfull_n = 0;
		break;
	case OP_CALL: case OP_BURST: case OP_WORK: case OP_SPIN: case OP_STATS:
		exec_op(o, false, false, 0);
		break;
	case OP_POLL:
		if (th->attached)
			loop_iter(th, -2);
		break;
	case OP_SLEEP:
		sleep_us(o->a);
		break;
	case OP_OFFLINE:
		pthread_mutex_lock(&hp_mu);
		r = hp_op(o->b % ncpu, false);
		pthread_mutex_unlock(&hp_mu);
		(void)r;
		break;
	case OP_ONLINE:
		pthread_mutex_lock(&hp_mu);
		r = hp_op(o->b % ncpu, true);
		pthread_mutex_unlock(&hp_mu);
		(void)r;
		break;
	case OP_CYCLE:
		if (th->t == 0) {
			pthread_mutex_lock(&hp_mu);
			do_cycle(o);
			pthread_mutex_unlock(&hp_mu);
		}
		break;
	case OP_FORK:
		do_fork(o);
		break;
	case OP_TIMER:
		handler_fn = o->d;
		timer_set(th, o->a);
		break;
	case OP_DUMP:
		(void)API("xc_trace_dump", xc_trace_dump(trace_path));
		break;
	case OP_LOOP:
		for (int i = 0; i < o->a; i++)
			loop_iter(th, -2);
		break;
	case OP_SIGWIN:
		loop_iter(th, o->d < 0 ? -1 : o->d);
		break;
	case OP_DETACH:
		detach(th);
		sleep_us(100);
		attach(th);
		break;
	case OP_EXIT:
		if (P.kind[th->t] == T_ATTACHED)
			th->exit_fn = o->d;	/* thread_main ends the thread here */
		break;
	}
}

/*
 * An application key, made before xc_init: the destructor of a thread that
 * exits attached (OP_EXIT) runs a body, calls that other threads' calls
 * (urgent ones too) may meet on their way to its CPU.
 */
static pthread_key_t exit_key;

static void exit_destructor(void *v)
{
	struct thr *th = v;
	struct frame fr = { atomic_fetch_add(&streams, 1), 0, false, false, 0 };

	my_frame = &fr;
	run_body(th->exit_fn, false, false, 1);
	spin_us(1000);		/* busy a while longer, outside libxcall: calls on their way, urgent ones by signal */
	my_frame = NULL;
}

static void *thread_main(void *arg)
{
	struct thr *th = arg;
	struct frame fr = { atomic_fetch_add(&streams, 1), 0, false, false, 0 };
	const struct list *l = &P.thr[th->t];

	my_thr = th->t;
	my_frame = &fr;
	stk_note();
	if (P.kind[th->t] == T_ATTACHED) {
		cpu_set_t one;

		CPU_ZERO(&one);
		CPU_SET(attach_cpu, &one);
		pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
		struct epoll_event ev = { .events = EPOLLIN };

		th->ep = epoll_create1(0);
		/* the loop's own descriptor: the end wakes a loop whose CPU is offline through it */
		th->stopfd = eventfd(0, EFD_NONBLOCK);
		epoll_ctl(th->ep, EPOLL_CTL_ADD, th->stopfd, &ev);
		attach(th);
	}
	th->exit_fn = -2;
	pthread_barrier_wait(&start_bar);
	for (int i = 0; i < l->n && th->exit_fn == -2; i++)
		exec_thread_op(th, &l->op[i]);
	if (th->has_timer) {
		timer_delete(th->timer);
		th->has_timer = false;
	}
	if (th->exit_fn != -2) {
		/* exits as it is (attached, or not if a detach's attach failed): the key's destructor runs */
		my_frame = NULL;
		/* the exit detaches (see hp_mu), before or after this destructor: until the join */
		atomic_fetch_add(&hp_holders, 1);
		pthread_setspecific(exit_key, th);
		return NULL;
	}
	if (P.kind[th->t] == T_ATTACHED) {
		/* serve until the main thread says stop: calls to this CPU still come */
		while (!atomic_load(&stop_attached)) {
			if (!th->attached)
				sched_yield();
			loop_iter(th, -2);
		}
		while (th->attached && API("xc_poll", xc_poll()) > 0)
			;
		detach(th);
		/* its descriptors are closed by the main thread after the join: it may still write stopfd */
	}
	return NULL;
}

/* ---- the check ---- */

struct ord {
	uint64_t stream, stamp;
	uint32_t seq, id;
	int cpu;
};

static int ord_cmp(const void *a, const void *b)
{
	const struct ord *x = a, *y = b;

	if (x->stream != y->stream)
		return x->stream < y->stream ? -1 : 1;
	if (x->cpu != y->cpu)
		return x->cpu - y->cpu;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void rec_describe(uint32_t id, char *buf, size_t n)
{
	struct rec *r = &recs[id];

	snprintf(buf, n, "call %u (%s%s%s to %s %d, mask 0x%x, offline 0x%x, fn %d, depth %d) returned %d; runs per CPU %u %u %u %u",
		 id, kind_names[r->kind], r->flags & XC_WAIT ? " wait" : "", r->flags & XC_URGENT ? " urgent" : "",
		 r->kind == K_SINGLE || r->kind == K_ASYNC || r->kind == K_WORK ? "CPU" : "index",
		 r->kind == K_SINGLE || r->kind == K_ASYNC || r->kind == K_WORK ? cpus[r->tcpu] : r->tcpu,
		 r->mask, r->offline, r->fn, r->depth, atomic_load(&r->ret), atomic_load(&r->runs[0]),
		 atomic_load(&r->runs[1]), atomic_load(&r->runs[2]), atomic_load(&r->runs[3]));
}

#define CPU_COUNT_BITS(m) __builtin_popcount(m)

static bool rec_ok(const struct rec *r)
{
	int ret = atomic_load(&r->ret);

	return ret != RET_PENDING && ret >= 0;
}

/*
 * What an offline (or an exit) that returned 0 promises: it ran what was
 * queued to its CPU before it began (xcall.h, xc_cpu_offline()). A call
 * whose caller had its return before the offline began ran before the
 * offline returned. (One queued and never run fails the check of runs.)
 */
/* -ELOOP only from a CPU whose thread nested past half its stack (deep_permille) */
static int check_deep(uint32_t from, uint32_t to)
{
	int bad = 0;
	char d[256];

	for (uint32_t id = from; id < to && bad < 10; id++) {
		struct rec *r = &recs[id];
		uint32_t mask = r->kind == K_SINGLE || r->kind == K_ASYNC || r->kind == K_WORK ? 1u << r->tcpu :
				r->mask | atomic_load(&r->chosen);
		uint32_t deepest = 0;

		if (atomic_load(&r->ret) != -ELOOP)
			continue;
		for (int i = 0; i < ncpu; i++)
			if ((mask & (1u << i)) && atomic_load(&deep_permille[i]) > deepest)
				deepest = atomic_load(&deep_permille[i]);
		if (deepest < DEEP_PERMILLE) {
			rec_describe(id, d, sizeof(d));
			fail("%s: -ELOOP, but no thread of its targets nested past half its stack (the deepest %u/1000;"
			     " the serve floor is at three quarters)", d, deepest);
			bad++;
		}
	}
	return bad;
}

struct stamp_id {
	uint64_t stamp;
	uint32_t id;
};

static int stamp_cmp(const void *a, const void *b)
{
	const struct stamp_id *x = a, *y = b;

	return x->stamp < y->stamp ? -1 : x->stamp > y->stamp;
}

/* The first of @n sorted entries with a stamp above @after; NULL if none. */
static const struct stamp_id *first_after(const struct stamp_id *v, size_t n, uint64_t after)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (v[mid].stamp <= after)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n ? &v[lo] : NULL;
}

/*
 * Urgent calls that came while a call's function ran run right after it,
 * before anything else (xcall.h, "Urgent calls"): an urgent call whose
 * caller had its return before a call's function on that CPU returned (a
 * function no urgent one runs) ran before the next work item there began.
 */
static int check_drained(uint32_t from, uint32_t to)
{
	uint32_t nev = atomic_load(&nhpev);
	struct stamp_id *ev[NC];
	size_t n[NC] = { 0 };
	int bad = 0;
	char d[256];

	if (nev > MAXHPEV)
		nev = MAXHPEV;
	for (int i = 0; i < ncpu; i++) {
		ev[i] = malloc(sizeof(**ev) * (nev + 1));
		for (uint32_t k = 0; k < nev; k++)
			if (hpev[k].i == i || hpev[k].i == -1)
				ev[i][n[i]++] = (struct stamp_id){ hpev[k].begin, k };
		qsort(ev[i], n[i], sizeof(**ev), stamp_cmp);
	}
	for (uint32_t id = from; id < to && bad < 10; id++) {
		struct rec *r = &recs[id];

		if (!rec_ok(r))
			continue;
		for (int i = 0; i < ncpu; i++) {
			uint32_t runs = atomic_load(&r->runs[i]);
			const struct stamp_id *first;
			const struct hp_event *e;

			if (r->kind <= K_ASYNC || r->kind == K_WORK ? r->tcpu != i : !runs)
				continue;
			/* the first offline of CPU i that began after the call returned: it ran before its end */
			first = first_after(ev[i], n[i], r->ret_stamp);
			if (!first || !runs)
				continue;
			e = &hpev[first->id];
			if (atomic_load(&r->stamp[i]) > e->end) {
				rec_describe(id, d, sizeof(d));
				fail("%s: it ran on CPU %d after an %s of it, begun once the call had returned, returned 0:"
				     " that runs what was queued first", d, cpus[i], e->i < 0 ? "xc_exit" : "xc_cpu_offline");
				bad++;
			}
		}
	}
	for (int i = 0; i < ncpu; i++)
		free(ev[i]);
	return bad;
}

static int check_urgent_deferred(uint32_t from, uint32_t to)
{
	struct stamp_id *ends[NC], *starts[NC];
	size_t ne[NC] = { 0 }, ns[NC] = { 0 };
	int bad = 0;
	char d[256], d2[256], d3[256];

	for (int i = 0; i < NC; i++) {
		ends[i] = malloc(sizeof(**ends) * (size_t)(to - from + 1));
		starts[i] = malloc(sizeof(**starts) * (size_t)(to - from + 1));
	}
	for (uint32_t id = from; id < to; id++) {
		struct rec *r = &recs[id];

		for (int i = 0; i < ncpu; i++) {
			uint64_t e = atomic_load(&r->end[i]);

			if (atomic_load(&r->runs[i]) != 1)
				continue;
			if (r->kind == K_WORK)
				starts[i][ns[i]++] = (struct stamp_id){ atomic_load(&r->stamp[i]), id };
			else if (e)
				ends[i][ne[i]++] = (struct stamp_id){ e, id };
		}
	}
	for (int i = 0; i < ncpu; i++) {
		qsort(ends[i], ne[i], sizeof(**ends), stamp_cmp);
		qsort(starts[i], ns[i], sizeof(**starts), stamp_cmp);
	}
	for (uint32_t id = from; id < to && bad < 10; id++) {
		struct rec *r = &recs[id];

		if (!(r->flags & XC_URGENT) || (r->flags & XC_WAIT) || !rec_ok(r))
			continue;
		for (int i = 0; i < ncpu; i++) {
			const struct stamp_id *f, *w;

			if (atomic_load(&r->runs[i]) != 1)
				continue;
			f = first_after(ends[i], ne[i], r->ret_stamp);
			w = f ? first_after(starts[i], ns[i], f->stamp) : NULL;
			if (!w || atomic_load(&r->stamp[i]) < w->stamp)
				continue;
			rec_describe(id, d, sizeof(d));
			rec_describe(f->id, d2, sizeof(d2));
			rec_describe(w->id, d3, sizeof(d3));
			fail("urgent %s: sent while %s ran on CPU %d, it ran after the next work item there began: %s",
			     d, d2, cpus[i], d3);
			bad++;
			break;
		}
	}
	for (int i = 0; i < NC; i++) {
		free(ends[i]);
		free(starts[i]);
	}
	return bad;
}

static int check_recs(uint32_t from, uint32_t to, bool order)
{
	struct ord *o = NULL;
	size_t no = 0;
	int bad = 0;
	char d[256];

	if (to > MAXREC)
		to = MAXREC;
	if (order)
		o = malloc(sizeof(*o) * (size_t)(to - from + 1) * NC);
	for (uint32_t id = from; id < to; id++) {
		struct rec *r = &recs[id];
		int ret = atomic_load(&r->ret), total = 0, distinct = 0;
		uint32_t outside = 0, allowed = r->kind == K_COND ? atomic_load(&r->chosen) : r->mask;
		bool ok;

		for (int i = 0; i < NC; i++) {
			uint32_t n = atomic_load(&r->runs[i]);

			total += n;
			distinct += n > 0;
			if (n > 1)
				outside |= 1u << 31;
			if (n && !(allowed & (1u << i)))
				outside |= 1u << i;
		}
		if (ret == RET_PENDING) {
			ok = false;
		} else if (r->kind <= K_ASYNC || r->kind == K_WORK) {
			ok = ret == 0 ? total == 1 && atomic_load(&r->runs[r->tcpu]) == 1 : total == 0;
			if (ret == 0 && r->kind == K_ASYNC && !xc_call_done(&asyncs[r->slot]))
				ok = false;
			if (ret == 0 && r->kind == K_ANY && !(r->mask & (1u << r->tcpu)))
				ok = false;
		} else {
			/* -ELOOP: it ran on the targets that did not refuse it (xcall.h), once each */
			ok = ret >= 0 ? total == ret && distinct == ret && !outside :
			     ret == -ELOOP ? !outside && distinct < CPU_COUNT_BITS(allowed) : total == 0;
		}
		if (atomic_load(&r->wrong))
			ok = false;
		/* a CPU offline all through the call: refused (single, async, any, work), or skipped */
		bool on_offline = false;

		if (ok && ret >= 0 && r->offline) {
			if (r->kind <= K_ASYNC || r->kind == K_WORK)
				on_offline = r->offline & (1u << r->tcpu);
			else
				for (int i = 0; i < NC; i++)
					if ((r->offline & (1u << i)) && atomic_load(&r->runs[i]))
						on_offline = true;
			ok = !on_offline;
		}
		if (!ok) {
			rec_describe(id, d, sizeof(d));
			fail("%s%s", d, ret == RET_PENDING ? " (never returned)" :
			     atomic_load(&r->wrong) ? " (ran on a CPU outside the set)" :
			     on_offline ? " (on a CPU the program had taken offline, all through the call)" :
			     ret < 0 || (ret == 0 && total == 0) ? "" : " (wrong runs)");
			if (on_offline && !bad) {
				say("XCF-HP: the call returned at clock %" PRIu64 "\n", r->ret_stamp);
				hp_log_print();	/* the bookings it trusted */
			}
			if (++bad >= 10)
				break;
		}
		if (!o || r->exempt || ret < 0 || r->kind == K_WORK)
			continue;
		for (int i = 0; i < NC; i++)
			if (atomic_load(&r->runs[i]) == 1 && !(atomic_load(&r->in_sig) & (1u << i)))
				o[no++] = (struct ord){ r->stream, atomic_load(&r->stamp[i]), r->seq, id, i };
	}
	if (o) {
		qsort(o, no, sizeof(*o), ord_cmp);
		for (size_t i = 1; i < no && bad < 10; i++) {
			if (o[i].stream == o[i - 1].stream && o[i].cpu == o[i - 1].cpu && o[i].stamp < o[i - 1].stamp) {
				char d2[256];

				rec_describe(o[i - 1].id, d, sizeof(d));
				rec_describe(o[i].id, d2, sizeof(d2));
				fail("order: on CPU %d, %s started after the later %s", cpus[o[i].cpu], d, d2);
				bad++;
			}
		}
		free(o);
	}
	if (to > from) {
		bad += check_drained(from, to);
		bad += check_deep(from, to);
		bad += check_urgent_deferred(from, to);
	}
	return bad;
}

/* ---- one run of a program, in this process ---- */

static int ncpu_avail(int *out)
{
	cpu_set_t s;
	int n = 0;

	sched_getaffinity(0, sizeof(s), &s);
	for (int c = 0; c < CPU_SETSIZE && n < NC; c++)
		if (CPU_ISSET(c, &s))
			out[n++] = c;
	return n;
}

static void *map(size_t n)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	return p;
}

static int run_program(void)
{
	struct xc_opts opts;
	struct sigaction sa = { 0 };
	char cb[64], ab[16];
	pthread_t wd;
	int r;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
#ifdef PR_SET_PTRACER
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY);
#endif
	if (getenv("FZS_SLOW") && atof(getenv("FZS_SLOW")) >= 1)
		slow_factor = atof(getenv("FZS_SLOW"));
	bound_ms = tmo_ms(10000);
	nested_hotplug = !getenv("FZS_NESTED_HOTPLUG") || atoi(getenv("FZS_NESTED_HOTPLUG"));
	if (getenv("FZS_BOUND_MS"))
		bound_ms = atol(getenv("FZS_BOUND_MS"));
	memset(cpu_idx, -1, sizeof(cpu_idx));
	ncpu = ncpu_avail(cpus);
	if (P.ncpu < ncpu)
		ncpu = P.ncpu;
	for (int i = 0; i < ncpu; i++)
		cpu_idx[cpus[i]] = i;
	for (int t = 0; t < P.nthr; t++)
		if (P.kind[t] == T_ATTACHED && ncpu >= 2)
			attach_cpu = cpus[ncpu - 1];
	snprintf(trace_path, sizeof(trace_path), "/tmp/xcfuzz-trace-%d.json", getpid());
	recs = map(sizeof(*recs) * MAXREC);
	asyncs = map(sizeof(*asyncs) * MAXASYNC);
	works = map(sizeof(*works) * MAXWORK);
	chains = map(sizeof(*chains) * MAXCHAIN);
	sig_fz = SIGRTMIN + 5;
	sa.sa_handler = on_sig;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(sig_fz, &sa, NULL);
	pthread_key_create(&exit_key, exit_destructor);
	/* the program's own threads keep a stack of their own size; the workers take the default */
	pthread_attr_init(&thread_attr);
	pthread_attr_setstacksize(&thread_attr, 8u << 20);
	if (P.stack_kb) {
		pthread_attr_t a;

		pthread_attr_init(&a);
		pthread_attr_setstacksize(&a, (size_t)P.stack_kb * 1024 * FZ_STACK_SCALE);
		pthread_setattr_default_np(&a);
		pthread_attr_destroy(&a);
	}
	os_watch_init();
	pthread_create(&wd, &thread_attr, watchdog, NULL);

	make_opts(&opts, true, P.trace, cb, ab);
	r = xc_init(&opts);
	if (P.hook == HOOK_FAIL || P.hook == HOOK_STALL) {
		/* a hook that failed or outlasted the bringup: its errno (a timeout wins), nothing left behind */
		int due = P.hook == HOOK_FAIL ? -EPERM : -ETIMEDOUT;

		if (cpus[P.hook_cpu % ncpu] == attach_cpu || P.hook_cpu >= ncpu)
			due = 0;	/* that CPU has no worker to boot */
		if (r != due && !(r == -ETIMEDOUT && due))
			fail("the first xc_init returned %d, its cpu_init hook %s on CPU %d: %d is due", r,
			     P.hook == HOOK_FAIL ? "failing with -EPERM" : "outlasting the bringup timeout",
			     cpus[P.hook_cpu % ncpu], due);
		if (r) {
			make_opts(&opts, true, P.trace, cb, ab);
			r = xc_init(&opts);
		}
	}
	atomic_store(&init0_over, 1);
	if (r) {
		fprintf(stderr, "XCF-FAIL: xc_init returned %d (%s)\n", r, strerror(-r));
		return 1;
	}
	pthread_barrier_init(&start_bar, NULL, P.nthr);
	for (int t = 0; t < P.nthr; t++) {
		thrs[t].t = t;
		if (P.kind[t] == T_ATTACHED && attach_cpu < 0)
			P.kind[t] = T_PLAIN;
		if (t)
			pthread_create(&thrs[t].pt, &thread_attr, thread_main, &thrs[t]);
	}
	thread_main(&thrs[0]);
	{
		/* stop the attached loop: a call wakes it if it sleeps (and it must wake) */
		struct slot *s = api_begin("joining the program's threads");

		atomic_store(&stop_attached, 1);
		for (int t = 1; t < P.nthr; t++) {
			if (P.kind[t] == T_ATTACHED) {
				while (pthread_tryjoin_np(thrs[t].pt, NULL) == EBUSY) {
					/* a call must wake it; refused (the CPU offline, detached), its own fd */
					if (xc_call_single(attach_cpu, stop_fn, NULL, 0))
						(void)!write(thrs[t].stopfd, &(uint64_t){ 1 }, 8);
					sleep_us(1000);
				}
				if (thrs[t].exit_fn != -2)
					atomic_fetch_sub(&hp_holders, 1);	/* its exit's detach is over */
			} else
				pthread_join(thrs[t].pt, NULL);
		}
		for (int t = 0; t < P.nthr; t++)
			if (P.kind[t] == T_ATTACHED) {
				close(thrs[t].ep);
				close(thrs[t].stopfd);
			}
		api_end(s);
	}
	{
		/* a hook left running by the first bringup makes its calls beside this runtime */
		uint64_t until = now_ns() + (uint64_t)tmo_ms(30000) * 1000000ull;

		while (atomic_load(&stall_left) && now_ns() < until)
			sleep_us(1000);
	}
	hp_begin(~0u);	/* the exit's drains may still call */
	r = API("xc_exit", xc_exit());
	if (r && r != -ENXIO)
		fail("final xc_exit returned %d", r);
	unlink(trace_path);
	check_recs(0, atomic_load(&nrec), true);
	check_chains();
	fprintf(stderr, "xcfuzz: %u calls, %u async, %u work items%s\n", atomic_load(&nrec),
		atomic_load(&nasync), atomic_load(&nwork), atomic_load(&failed) ? ", FAILED" : "");
	return atomic_load(&failed) ? 1 : 0;
}

/* ---- the parent: run programs in children, shrink, report ---- */

static const char *self_exe;
static const char *out_dir = "build/fuzz-scenarios";
static long prog_timeout_ms;

enum { R_PASS, R_FAIL, R_CRASH, R_HANG };
static const char *const res_names[] = { "pass", "invariant", "crash", "hang" };

struct result {
	int kind;
	char *log;
	size_t len;
};

static void logcat(struct result *res, const char *s, size_t n)
{
	if (res->len > (4u << 20))
		return;
	res->log = realloc(res->log, res->len + n + 1);
	memcpy(res->log + res->len, s, n);
	res->len += n;
	res->log[res->len] = 0;
}

static void gdb_into(struct result *res, pid_t pid)
{
	char cmd[160], buf[4096];
	FILE *f;
	size_t n;

	snprintf(cmd, sizeof(cmd), "timeout 60 gdb -batch -p %d -ex 'thread apply all bt' 2>&1", pid);
	snprintf(buf, sizeof(buf), "\n==== gdb -batch -p %d -ex 'thread apply all bt'\n", pid);
	logcat(res, buf, strlen(buf));
	f = popen(cmd, "r");
	if (!f)
		return;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		logcat(res, buf, n);
	pclose(f);
}

/* src: "seed:N" or a program file */
static struct result run_child(const char *src)
{
	struct result res = { R_PASS, NULL, 0 };
	int pfd[2], st = 0;
	uint64_t t0 = now_ns(), looked = 0;
	bool stuck = false, eof = false;
	char buf[4096];
	struct progress pr;
	pid_t pid;

	if (pipe(pfd))
		exit(2);
	pid = fork();
	if (pid == 0) {
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		close(pfd[0]);
		close(pfd[1]);
		execl(self_exe, self_exe, "run", src, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	progress_init(&pr, pid, 0);
	while (!eof) {
		struct pollfd p = { pfd[0], POLLIN, 0 };
		int n = poll(&p, 1, 100);
		uint64_t wall_ms = (now_ns() - t0) / 1000000, lost_ms;

		if (n > 0) {
			ssize_t k = read(pfd[0], buf, sizeof(buf));

			if (k <= 0)
				eof = true;
			else
				logcat(&res, buf, k);
		}
		/* the whole program's bound, counted as the watchdog counts each call's (progress.c) */
		if (now_ns() - looked > 500000000ull) {
			progress_look(&pr);
			looked = now_ns();
		}
		lost_ms = pr.starved_ns / 1000000 < wall_ms ? pr.starved_ns / 1000000 : wall_ms;
		if (!stuck && ((res.log && strstr(res.log, "XCF-STUCK")) ||
			       wall_ms - lost_ms > (uint64_t)prog_timeout_ms ||
			       wall_ms > (uint64_t)prog_timeout_ms * BOUND_CAP)) {
			stuck = true;
			if (!strstr(res.log ? res.log : "", "XCF-STUCK")) {
				snprintf(buf, sizeof(buf), "XCF-STUCK: the program did not end in %" PRIu64 " ms (%" PRIu64
					 " ms of them with a runnable thread not run by the OS, not counted)\n", wall_ms, lost_ms);
				logcat(&res, buf, strlen(buf));
			}
			sleep_us(300000);	/* the stuck reports due meanwhile */
			while (poll(&p, 1, 0) > 0) {
				ssize_t k = read(pfd[0], buf, sizeof(buf));

				if (k <= 0)
					break;
				logcat(&res, buf, k);
			}
			/* the program's own output, before any gdb text: where its fork children are named */
			size_t out_len = res.len;

			gdb_into(&res, pid);
			/* fork children still there; by offset: gdb_into grows (reallocates) the log */
			for (size_t off = 0; res.log && off < out_len;) {
				char *c = strstr(res.log + off, "XCF-CHILD pid=");
				pid_t cp;

				if (!c || (size_t)(c - res.log) >= out_len)
					break;
				off = (size_t)(c - res.log) + 1;
				cp = atoi(c + 14);
				if (cp > 0 && kill(cp, 0) == 0) {
					gdb_into(&res, cp);
					kill(cp, SIGKILL);
				}
			}
			kill(pid, SIGKILL);
		}
	}
	close(pfd[0]);
	waitpid(pid, &st, 0);
	if (stuck)
		res.kind = R_HANG;
	else if (WIFSIGNALED(st))
		res.kind = R_CRASH;
	else if (WEXITSTATUS(st))
		res.kind = WEXITSTATUS(st) == 1 ? R_FAIL : R_CRASH;
	if (res.kind != R_PASS) {
		snprintf(buf, sizeof(buf), "\n==== %s: %s", src,
			 WIFSIGNALED(st) ? strsignal(WTERMSIG(st)) : "exit");
		logcat(&res, buf, strlen(buf));
		if (WIFEXITED(st)) {
			snprintf(buf, sizeof(buf), " %d", WEXITSTATUS(st));
			logcat(&res, buf, strlen(buf));
		}
		logcat(&res, "\n", 1);
	}
	return res;
}

static void write_prog(const char *path, const struct prog *p)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		perror(path);
		exit(2);
	}
	print_prog(f, p);
	fclose(f);
}

/* Runs @p up to @runs times; the first failure's result (R_PASS if none). */
static struct result try_prog(const struct prog *p, int runs, const char *tag)
{
	char path[256], src[300];
	struct result res = { R_PASS, NULL, 0 };

	snprintf(path, sizeof(path), "%s/%s-%d.prog", out_dir, tag, getpid());
	write_prog(path, p);
	snprintf(src, sizeof(src), "%s", path);
	for (int i = 0; i < runs; i++) {
		free(res.log);
		res = run_child(src);
		if (res.kind != R_PASS)
			break;
	}
	unlink(path);
	return res;
}

static long shrink_seconds = 240;

static struct prog shrink(const struct prog *p0, int kind)
{
	static struct prog cur, cand;
	uint64_t end = now_ns() + (uint64_t)shrink_seconds * 1000000000ull;
	bool changed = true;
	int tries = 0;

	cur = *p0;
	fprintf(stderr, "xcfuzz: shrinking (%d ops; a smaller program is kept if it fails in 1 of 20 runs;"
		" at most %ld s)\n", prog_len(&cur), shrink_seconds);
	while (changed && now_ns() < end) {
		changed = false;
		for (int li = 0; li < MAXT + MAXF && now_ns() < end; li++) {
			bool is_t = li < MAXT;
			int idx = is_t ? li : li - MAXT;

			if (is_t ? idx >= cur.nthr : idx >= cur.nfunc)
				continue;
			for (int chunk = (is_t ? cur.thr[idx].n : cur.fn[idx].n); chunk >= 1 && now_ns() < end; chunk /= 2) {
				for (int at = 0; now_ns() < end; at += chunk) {
					struct list *l;

					cand = cur;
					l = is_t ? &cand.thr[idx] : &cand.fn[idx];
					if (at >= l->n)
						break;
					int k = at + chunk > l->n ? l->n - at : chunk;

					memmove(&l->op[at], &l->op[at + k], sizeof(l->op[0]) * (l->n - at - k));
					l->n -= k;
					tries++;
					struct result r = try_prog(&cand, 20, "shrink");

					if (r.kind == kind) {
						cur = cand;
						changed = true;
						at -= chunk;
						fprintf(stderr, "xcfuzz: shrink: %d ops still fail (%s)\n", prog_len(&cur), res_names[kind]);
					}
					free(r.log);
				}
			}
		}
	}
	/* threads left with no steps: drop them (the main thread stays) */
	for (int t = cur.nthr - 1; t > 0; t--) {
		if (cur.thr[t].n || cur.kind[t] == T_ATTACHED)
			continue;
		cand = cur;
		memmove(&cand.thr[t], &cand.thr[t + 1], sizeof(cand.thr[0]) * (cand.nthr - t - 1));
		memmove(&cand.kind[t], &cand.kind[t + 1], sizeof(cand.kind[0]) * (cand.nthr - t - 1));
		cand.nthr--;
		struct result r = try_prog(&cand, 20, "shrink");

		if (r.kind == kind)
			cur = cand;
		free(r.log);
	}
	fprintf(stderr, "xcfuzz: shrunk to %d ops after %d tries\n", prog_len(&cur), tries);
	return cur;
}

static bool no_shrink;

static int report_failure(const char *src, const struct prog *p, struct result *res)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/fail-%" PRIu64 ".log", out_dir, p->seed);
	f = fopen(path, "w");
	if (f) {
		print_prog(f, p);
		fputs("\n==== the run's output\n", f);
		if (res->log)
			fputs(res->log, f);
		fclose(f);
	}
	printf("xcfuzz: FAILED (%s, mode %s): %s\n", res_names[res->kind], FZ_MODE, src);
	{
		/* the XCF lines, the stuck reports and the first stacks */
		int shown = 0;

		for (char *l = res->log; l && *l && shown < 60;) {
			char *e = strchr(l, '\n');
			size_t n = e ? (size_t)(e - l) : strlen(l);

			if (!strncmp(l, "XCF-", 4) || strstr(l, "xcall:") || strstr(l, "ERROR") ||
			    strstr(l, "SUMMARY") || strstr(l, "runtime error")) {
				printf("  %.*s\n", (int)n, l);
				shown++;
			}
			l = e ? e + 1 : l + n;
		}
	}
	printf("xcfuzz: log (program, output, gdb stacks): %s\n", path);
	printf("xcfuzz: replay: %s replay %s -r 20\n", self_exe, src);
	fflush(stdout);
	if (!no_shrink) {
		struct prog s = shrink(p, res->kind);

		snprintf(path, sizeof(path), "%s/fail-%" PRIu64 ".prog", out_dir, p->seed);
		write_prog(path, &s);
		printf("xcfuzz: shrunk program (%d ops), replay: %s replay %s -r 20\n", prog_len(&s), self_exe, path);
		print_prog(stdout, &s);
	}
	return 1;
}

/* a seed's name: "N" (generator 1) or "gG:N" */
static void seed_name(char *src, size_t n, int gen, uint64_t seed)
{
	if (gen > 1)
		snprintf(src, n, "g%d:%" PRIu64, gen, seed);
	else
		snprintf(src, n, "%" PRIu64, seed);
}

/* src: a seed ("N", "gG:N") or a program file */
static int load_src(const char *arg, struct prog *p, char *src, size_t n)
{
	int c[NC], gen = 1;
	char *end;
	const char *num = arg;
	unsigned long long s;

	if (arg[0] == 'g' && arg[1] >= '1' && arg[1] <= '0' + GEN_LATEST && arg[2] == ':') {
		gen = arg[1] - '0';
		num = arg + 3;
	}
	s = strtoull(num, &end, 0);
	if (*num && !*end) {
		gen_prog(p, s, ncpu_avail(c), gen);
		seed_name(src, n, gen, s);
		return 0;
	}
	if (parse_prog(arg, p))
		return -1;
	snprintf(src, n, "%s", arg);
	return 0;
}

/* The machine's load, as the fuzzer says it: the time a runnable thread waits is not counted */
static void say_load(const char *when)
{
	double l1 = 0, l5 = 0, l15 = 0;
	FILE *f = fopen("/proc/loadavg", "r");

	if (f) {
		if (fscanf(f, "%lf %lf %lf", &l1, &l5, &l15) != 3)
			l1 = l5 = l15 = 0;
		fclose(f);
	}
	printf("xcfuzz: %s: load average %.2f %.2f %.2f on %ld CPUs\n", when, l1, l5, l15, sysconf(_SC_NPROCESSORS_ONLN));
}

static void say_waits(long slow, long os)
{
	if (slow || os)
		printf("xcfuzz: %ld programs waited for a slow machine (XCF-SLOW: a runnable thread not run by the"
		       " OS, not counted in a bound), %ld followed the OS changing their CPUs (XCF-OS)\n", slow, os);
}

static int cmd_fuzz(long seconds, uint64_t seed, long count, int gen)
{
	uint64_t end = now_ns() + (uint64_t)seconds * 1000000000ull, t0 = now_ns();
	long n = 0, slow = 0, os = 0;
	struct prog p;
	char src[64];
	int c[NC], nc = ncpu_avail(c);

	printf("xcfuzz: mode %s, generator %d, fresh seeds from %" PRIu64 " for %ld s%s\n", FZ_MODE,
	       gen, seed, seconds, count ? " (or a count)" : "");
	say_load("at the start");
	fflush(stdout);
	for (; now_ns() < end && (!count || n < count); seed++, n++) {
		gen_prog(&p, seed, nc, gen);
		seed_name(src, sizeof(src), gen, seed);
		struct result r = run_child(src);

		if (r.kind != R_PASS) {
			printf("xcfuzz: found after %.1f s, %ld programs\n", (now_ns() - t0) / 1e9, n + 1);
			say_load("now");
			say_waits(slow, os);
			return report_failure(src, &p, &r);
		}
		slow += r.log && strstr(r.log, "XCF-SLOW");
		os += r.log && strstr(r.log, "XCF-OS");
		free(r.log);
		if (n % 100 == 99) {
			printf("xcfuzz: %ld programs, %.0f s\n", n + 1, (now_ns() - t0) / 1e9);
			fflush(stdout);
		}
	}
	printf("xcfuzz: mode %s: %ld programs passed in %.0f s\n", FZ_MODE, n, (now_ns() - t0) / 1e9);
	say_load("at the end");
	say_waits(slow, os);
	return 0;
}

static int cmd_replay(const char *arg, int runs)
{
	struct prog p;
	char src[300];
	int bad = 0;
	struct result first = { R_PASS, NULL, 0 };

	if (load_src(arg, &p, src, sizeof(src))) {
		fprintf(stderr, "xcfuzz: cannot read %s\n", arg);
		return 2;
	}
	for (int i = 0; i < runs; i++) {
		struct result r = run_child(src);

		if (r.kind != R_PASS) {
			bad++;
			if (first.kind == R_PASS)
				first = r;
			else
				free(r.log);
		} else {
			free(r.log);
		}
	}
	printf("xcfuzz: %s (mode %s): %d of %d runs failed\n", src, FZ_MODE, bad, runs);
	if (bad) {
		no_shrink = true;
		report_failure(src, &p, &first);
	}
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	long seconds = 60, count = 0;
	int runs = 20, gen = GEN_LATEST;
	uint64_t seed = 0;
	bool seed_set = false;
	const char *cmd = argc > 1 ? argv[1] : "fuzz", *arg = NULL;
	static char exe[PATH_MAX];

	ssize_t k = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	self_exe = k > 0 ? (exe[k] = 0, exe) : argv[0];
	if (getenv("FZS_OUT"))
		out_dir = getenv("FZS_OUT");
	prog_timeout_ms = 40000L * FZ_SLOW;
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "-t") && i + 1 < argc)
			seconds = atol(argv[++i]);
		else if (!strcmp(argv[i], "-s") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 0), seed_set = true;
		else if (!strcmp(argv[i], "-g") && i + 1 < argc)
			gen = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-n") && i + 1 < argc)
			count = atol(argv[++i]);
		else if (!strcmp(argv[i], "-r") && i + 1 < argc)
			runs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--no-shrink"))
			no_shrink = true;
		else if (!strcmp(argv[i], "--shrink-seconds") && i + 1 < argc)
			shrink_seconds = atol(argv[++i]);
		else
			arg = argv[i];
	}
	if (!strcmp(cmd, "run")) {
		char src[300];

		if (!arg || load_src(arg, &P, src, sizeof(src))) {
			fprintf(stderr, "xcfuzz run: cannot read %s\n", arg ? arg : "(none)");
			return 2;
		}
		return run_program();
	}
	mkdir(out_dir, 0777);
	signal(SIGPIPE, SIG_IGN);
	if (!strcmp(cmd, "print") && arg) {
		struct prog p;
		char src[300];

		if (load_src(arg, &p, src, sizeof(src)))
			return 2;
		print_prog(stdout, &p);
		return 0;
	}
	if (!strcmp(cmd, "fuzz")) {
		if (!seed_set)
			seed = (now_ns() ^ (uint64_t)getpid() << 32) % 1000000000000ull;
		if (gen < 1 || gen > GEN_LATEST) {
			fprintf(stderr, "xcfuzz: generator %d: 1..%d\n", gen, GEN_LATEST);
			return 2;
		}
		return cmd_fuzz(seconds, seed, count, gen);
	}
	if (!strcmp(cmd, "replay") && arg)
		return cmd_replay(arg, runs);
	if (!strcmp(cmd, "shrink") && arg) {
		struct prog p;
		char src[300];

		if (load_src(arg, &p, src, sizeof(src)))
			return 2;
		struct result r = try_prog(&p, runs, "find");

		if (r.kind == R_PASS) {
			printf("xcfuzz: %s passed %d runs: nothing to shrink\n", src, runs);
			return 0;
		}
		return report_failure(src, &p, &r);
	}
	if (!strcmp(cmd, "corpus") && arg) {
		char path[PATH_MAX], line[PATH_MAX];
		FILE *f;
		int bad = 0, total = 0;

		/* DIR/seeds: one seed a line (# comments); DIR/NAME.prog: programs */
		snprintf(path, sizeof(path), "%s/seeds", arg);
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f)) {
			char *h = strchr(line, '#');

			if (h)
				*h = 0;
			if (strtok(line, " \t\n") == NULL)
				continue;
			total++;
			no_shrink = true;
			bad += cmd_replay(line, runs) != 0;
		}
		if (f)
			fclose(f);
		snprintf(line, sizeof(line), "ls %s/*.prog 2>/dev/null", arg);
		f = popen(line, "r");
		while (f && fgets(path, sizeof(path), f)) {
			path[strcspn(path, "\n")] = 0;
			total++;
			no_shrink = true;
			bad += cmd_replay(path, runs) != 0;
		}
		if (f)
			pclose(f);
		printf("xcfuzz corpus (mode %s): %d entries, %d failed\n", FZ_MODE, total, bad);
		return bad ? 1 : 0;
	}
	fprintf(stderr, "usage: xcfuzz fuzz|replay|shrink|print|corpus|run ... (see fuzz/scenarios/xcfuzz.c)\n");
	return 2;
}
