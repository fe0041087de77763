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
 * Invariants per program, checked by the child after its final xc_exit():
 *   - a call whose caller got 0 (>= 0 for any/many/cond/all) ran: single,
 *     async, any and work exactly once on their CPU, many/cond/all exactly
 *     the returned number of times, each on a distinct CPU of the mask (of
 *     the CPUs cond said yes to); a refused call never ran;
 *   - the calls of one frame (a thread's own steps, one run of a function or
 *     work item, one signal handler) to one CPU started in the order made,
 *     urgent calls and calls made inside urgent functions excepted, and runs
 *     inside a signal handler on the CPU's own thread: a handler's wait runs
 *     the CPU's later calls nested wherever it landed, also inside an earlier
 *     call whose function had begun but not yet taken its stamp;
 *   - every API call returns within a bound (a watchdog thread prints
 *     XCF-STUCK; the parent then takes gdb's stacks and kills the run);
 *   - no crash, no sanitizer report; a forked child's own program holds the
 *     same, and none of the parent's calls runs in the child.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <xcall.h>

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

/* ---- programs ---- */

enum {
	OP_CALL, OP_BURST, OP_WORK, OP_SPIN, OP_POLL, OP_STATS, OP_SLEEP, OP_OFFLINE,
	OP_ONLINE, OP_CYCLE, OP_FORK, OP_TIMER, OP_DUMP, OP_LOOP, OP_SIGWIN, OP_DETACH, OP_EXIT, OP_N
};
static const char *const op_names[OP_N] = {
	"call", "burst", "work", "spin", "poll", "stats", "sleep", "offline",
	"online", "cycle", "fork", "timer", "dump", "loop", "sigwin", "detach", "exit",
};
/* call kinds (OP_CALL a); the record kinds add work */
enum { K_SINGLE, K_ANY, K_ASYNC, K_MANY, K_COND, K_ALL, K_WORK, K_N };
static const char *const kind_names[K_N] = { "single", "any", "async", "many", "cond", "all", "work" };

enum { T_MAIN, T_PLAIN, T_ATTACHED };
static const char *const thr_names[] = { "main", "plain", "attached" };

#define NC	  4	/* CPUs of the runtime at most */
#define MAXOPS	  64
#define MAXF	  8
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
 */
struct op {
	int code, a, b, c, d;
};

struct list {
	int n;
	struct op op[MAXOPS];
};

struct prog {
	uint64_t seed;
	int gen;			/* the generator that made it from its seed (below) */
	int ncpu, ring, trace, poll;
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
#define GEN_LATEST 2

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
	p->nfunc = 2 + rn(MAXF - 1);
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
		if (sscanf(line, "opts %d %d %d %d", &p->ncpu, &p->ring, &p->trace, &p->poll) == 4)
			continue;
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
	_Atomic uint32_t runs[NC];
	_Atomic uint64_t stamp[NC];
	_Atomic uint32_t wrong;
	_Atomic uint32_t in_sig;	/* bit i: the run on CPU i was inside a signal handler there */
	uint32_t offline;		/* bit i: CPU i was offline (xc_cpu_offline) all through the call */
};

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
	const char *_Atomic what;
	pid_t tid;
};
static struct slot slots[MAXSLOTS];
static _Atomic int nslots;

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
	atomic_store_explicit(&s->since, now_ns(), memory_order_release);
	return s;
}

static void api_end(struct slot *s)
{
	if (s)
		atomic_store_explicit(&s->since, 0, memory_order_release);
}

#define API(what, expr) ({ struct slot *__s = api_begin(what); __typeof__(expr) __r = (expr); api_end(__s); __r; })

static void *watchdog(void *arg)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (;;) {
		uint64_t t = now_ns();
		int n = atomic_load(&nslots);

		for (int i = 0; i < n && i < MAXSLOTS; i++) {
			uint64_t since = atomic_load_explicit(&slots[i].since, memory_order_acquire);

			if (since && t > since && (t - since) / 1000000 > (uint64_t)bound_ms) {
				char line[160];
				/* write(2): a stuck thread may hold the stderr lock (XCF-CHILD's comment) */
				int k = snprintf(line, sizeof(line), "XCF-STUCK: %s in thread %d has not returned for %" PRIu64 " ms\n",
						 atomic_load(&slots[i].what), slots[i].tid, (t - since) / 1000000);

				(void)!write(2, line, k < (int)sizeof(line) ? k : (int)sizeof(line) - 1);
				for (;;)
					pause();
			}
		}
		sleep_us(50000);
	}
	return NULL;
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

static void hp_begin(uint32_t cpus_mask)
{
	sigset_t old;

	hp_book_lock(&old);
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

/* The same, booked in hp_offline */
static int hp_op(int i, bool online)
{
	int r;

	hp_begin(1u << i);
	r = hp_call(i, online);
	hp_end(i, !online, r == 0);
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

static void ran(uint32_t id)
{
	struct rec *r = &recs[id];
	int cpu = xc_this_cpu(), i = cpu >= 0 && cpu < CPU_SETSIZE ? cpu_idx[cpu] : -1;

	if (atomic_load_explicit(&in_child, memory_order_relaxed) && id < child_base)
		atomic_fetch_add(&parent_ran_in_child, 1);
	if (i < 0) {
		atomic_fetch_add(&r->wrong, 1);
		return;
	}
	atomic_fetch_add(&r->runs[i], 1);
	atomic_store(&r->stamp[i], atomic_fetch_add(&clock_seq, 1));
	if (in_handler)
		atomic_fetch_or(&r->in_sig, 1u << i);
}

static void fz_fn(void *arg)
{
	uint32_t id = (uint32_t)(uintptr_t)arg;
	struct rec *r = &recs[id];

	ran(id);
	if (r->fn >= 0)
		run_body(r->fn, r->flags & XC_URGENT, false, r->depth + 1);
}

static void fz_work(void *arg)
{
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

static void do_call(int kind, int target, int flags, int fn, int depth)
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
	r->exempt = (flags & XC_URGENT) || !f || f->urgent;
	r->stream = f ? f->stream : 0;
	r->seq = f ? f->seq++ : 0;
	r->slot = -1;
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
			ret = API("xc_call_many", xc_call_many(&m, fz_fn, arg, flags & ~XC_URGENT));
		else
			ret = API("xc_call_cond", xc_call_cond(&m, fz_cond, fz_fn, arg, flags & ~XC_URGENT));
		break;
	default:
		r->mask = (1u << ncpu) - 1;
		ret = API("xc_call_all", xc_call_all(fz_fn, arg, flags & ~XC_URGENT));
		break;
	}
	if (!busy && atomic_load(&hp_gen) == g0)
		r->offline = off & ((1u << ncpu) - 1);
	atomic_store_explicit(&r->ret, ret, memory_order_release);
}

static int ctx_depth;

static void exec_op(const struct op *o, bool urgent, bool handler, int depth)
{
	struct xc_stats st;

	switch (o->code) {
	case OP_CALL:
		if (depth < MAXDEPTH)
			do_call(o->a, o->b, o->c & XC_FLAGS_ALL, o->d, depth);
		break;
	case OP_BURST:
		for (int i = 0; i < o->a && i < 200 && depth < MAXDEPTH; i++)
			do_call(K_SINGLE, o->b, 0, i == 0 ? o->d : -1, depth);
		break;
	case OP_WORK:
		if (depth < MAXDEPTH)
			do_call(K_WORK, o->b, 0, o->d, depth);
		break;
	case OP_SPIN:
		spin_us(urgent || handler ? (o->a < 50 ? o->a : 50) : (o->a < 5000 ? o->a : 5000));
		break;
	case OP_POLL:
		(void)API("xc_poll", xc_poll());
		break;
	case OP_STATS:
		(void)API("xc_stats_get", xc_stats_get(o->a < 0 ? -1 : cpus[o->a % ncpu], &st));
		break;
	case OP_OFFLINE:
		/* a call or work item takes a CPU offline (not a signal handler: hotplug is not for them) */
		if (handler)
			break;
		if (urgent) {
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
	(void)ctx_depth;
}

static void run_body(int fn, bool urgent, bool handler, int depth)
{
	struct frame fr = { atomic_fetch_add(&streams, 1), 0, urgent, handler, depth };
	struct frame *saved = my_frame;

	if (fn < 0 || fn >= P.nfunc)
		return;
	my_frame = &fr;
	for (int i = 0; i < P.fn[fn].n; i++)
		exec_op(&P.fn[fn].op[i], urgent, handler, depth);
	my_frame = saved;
}

/* ---- threads ---- */

static void on_sig(int sig)
{
	int saved = errno, fn;

	(void)sig;
	in_handler = 1;
	if (sigwin_fn != -2) {
		fn = sigwin_fn;
		sigwin_fn = -2;
		(void)API("xc_poll", xc_poll());
	} else {
		fn = handler_fn;
	}
	run_body(fn, false, true, 1);
	in_handler = 0;
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
static pthread_barrier_t start_bar;
static _Atomic int stop_attached;

static int make_opts(struct xc_opts *o, bool with_attach, bool trace, char *cpubuf, char *attbuf)
{
	int n = 0;

	memset(o, 0, sizeof(*o));
	for (int i = 0; i < ncpu; i++)
		n += sprintf(cpubuf + n, "%s%d", i ? "," : "", cpus[i]);
	o->cpus = cpubuf;
	o->ring_entries = P.ring;
	o->stuck_ms = 1000 * FZ_SLOW;
	/* a loaded machine under a sanitizer (a fork child's workers beside the parent's) is slow to boot */
	o->bringup_timeout_ms = 5000 * FZ_SLOW;
	o->poll_ns = P.poll == 0 ? XC_POLL_ADAPTIVE : P.poll == 1 ? XC_POLL_NONE : 20000;
	if (trace) {
		o->trace_file = trace_path;
		o->trace_events = 1024;
	}
	if (with_attach && attach_cpu >= 0) {
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
	/* a runtime of its own, every CPU online; the parent's threads are not here */
	atomic_store(&hp_offline, 0);
	atomic_store(&hp_active, 0);
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
	if (pthread_create(&t, NULL, child_streamer, (void *)(intptr_t)o->a) == 0) {
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
	struct slot *s;
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
	s = api_begin("waiting for a fork child");
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	api_end(s);
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

	hp_begin(~0u);	/* every CPU comes back online */
	r = API("xc_exit", xc_exit());
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
	(void)API("xc_poll", xc_poll());
	r = API("xc_worker_sleep_begin", xc_worker_sleep_begin());
	if (r == 0) {
		if (sigwin != -2) {
			sigwin_fn = sigwin;
			syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), sig_fz);
		}
		if (!atomic_load(&stop_attached))
			epoll_wait(th->ep, ev, 4, -1);
	}
	(void)API("xc_worker_sleep_end", xc_worker_sleep_end());
}

static void attach(struct thr *th)
{
	struct epoll_event ev = { .events = EPOLLIN };

	for (int i = 0; i < 200 && !th->attached && !atomic_load(&stop_attached); i++) {
		if (API("xc_worker_attach", xc_worker_attach(attach_cpu)) == 0) {
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

static void exec_thread_op(struct thr *th, const struct op *o)
{
	int r;

	switch (o->code) {
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
			ok = ret >= 0 ? total == ret && distinct == ret && !outside : total == 0;
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
	bound_ms = 10000L * FZ_SLOW;
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
	sig_fz = SIGRTMIN + 5;
	sa.sa_handler = on_sig;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(sig_fz, &sa, NULL);
	pthread_key_create(&exit_key, exit_destructor);
	pthread_create(&wd, NULL, watchdog, NULL);

	make_opts(&opts, true, P.trace, cb, ab);
	r = xc_init(&opts);
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
			pthread_create(&thrs[t].pt, NULL, thread_main, &thrs[t]);
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
	hp_begin(~0u);	/* the exit's drains may still call */
	r = API("xc_exit", xc_exit());
	if (r && r != -ENXIO)
		fail("final xc_exit returned %d", r);
	unlink(trace_path);
	check_recs(0, atomic_load(&nrec), true);
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
	uint64_t t0 = now_ns();
	bool stuck = false, eof = false;
	char buf[4096];
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
	while (!eof) {
		struct pollfd p = { pfd[0], POLLIN, 0 };
		int n = poll(&p, 1, 100);

		if (n > 0) {
			ssize_t k = read(pfd[0], buf, sizeof(buf));

			if (k <= 0)
				eof = true;
			else
				logcat(&res, buf, k);
		}
		if (!stuck && ((res.log && strstr(res.log, "XCF-STUCK")) ||
			       (now_ns() - t0) / 1000000 > (uint64_t)prog_timeout_ms)) {
			stuck = true;
			if (!strstr(res.log ? res.log : "", "XCF-STUCK")) {
				snprintf(buf, sizeof(buf), "XCF-STUCK: the program did not end in %ld ms\n", prog_timeout_ms);
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

static int cmd_fuzz(long seconds, uint64_t seed, long count, int gen)
{
	uint64_t end = now_ns() + (uint64_t)seconds * 1000000000ull, t0 = now_ns();
	long n = 0;
	struct prog p;
	char src[64];
	int c[NC], nc = ncpu_avail(c);

	printf("xcfuzz: mode %s, generator %d, fresh seeds from %" PRIu64 " for %ld s%s\n", FZ_MODE,
	       gen, seed, seconds, count ? " (or a count)" : "");
	fflush(stdout);
	for (; now_ns() < end && (!count || n < count); seed++, n++) {
		gen_prog(&p, seed, nc, gen);
		seed_name(src, sizeof(src), gen, seed);
		struct result r = run_child(src);

		if (r.kind != R_PASS) {
			printf("xcfuzz: found after %.1f s, %ld programs\n", (now_ns() - t0) / 1e9, n + 1);
			return report_failure(src, &p, &r);
		}
		free(r.log);
		if (n % 100 == 99) {
			printf("xcfuzz: %ld programs, %.0f s\n", n + 1, (now_ns() - t0) / 1e9);
			fflush(stdout);
		}
	}
	printf("xcfuzz: mode %s: %ld programs passed in %.0f s\n", FZ_MODE, n, (now_ns() - t0) / 1e9);
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
