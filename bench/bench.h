/* SPDX-License-Identifier: MIT */
/*
 * bench.h - what every xcall-bench family shares: the common options, the
 * clock, pinned threads, and the libxcall harness.
 */
#ifndef BENCH_H
#define BENCH_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <getopt.h>

#include "xcall.h"
#include "base/futex.h"		/* libxcall's own futex wrappers (src/base/futex.h) */
#include "api/options.h"	/* its ablations (src/base/ablate.h), for benchmarks only */
#include "hist.h"
#include "output.h"

#define BENCH_VERSION "0.1"
#define CACHELINE 64

/* ---- common options (cli.c) ---- */

struct bopts {
	cpu_set_t cpus;         /* --cpus, default: every CPU we may run on */
	int cpu[CPU_SETSIZE];   /* the same, as an ascending list */
	int ncpus;
	char cpulist[256];      /* formatted, for xc_opts.cpus */
	bool cpus_given;        /* --cpus was on the command line */
	long iterations;        /* --iterations, 0 = the family's default */
	double seconds;         /* --seconds, 0 = count iterations instead */
	int repeat;             /* --repeat, >= 1 */
	long poll_ns;           /* --poll, XC_POLL_* or a window in ns */
	bool poll_set;
	double case_limit;      /* --case-limit: the most one case may run, seconds */
};

#define CASE_LIMIT_DEFAULT 5.0

/* Output flags shared by every subcommand and the quick suite. */
struct gopts {
	const char *json;       /* --json FILE */
	bool csv, quiet;
	bool suite;             /* running inside the no-subcommand suite */
	bool header_done;       /* the machine has been described on stdout */
	const char *trace;      /* --trace FILE: xc_opts.trace_file of every libxcall runtime */
};
extern struct gopts g_out;

/* An option of one subcommand beyond the common ones. */
struct cmd_opt {
	const char *name;
	int has_arg;            /* no_argument / required_argument */
	int id;                 /* passed to on_opt, must be < 1000 */
	const char *help;       /* "ARG  what it does" */
};

struct cmd_desc {
	const char *name;       /* subcommand */
	const char *summary;    /* one line */
	const char *args;       /* positional arguments in the usage line, or NULL */
	const struct cmd_opt *opts;  /* terminated by a zero entry, or NULL */
	/* 0 = accepted, -1 = bad value (cli prints the reason and exits 2). */
	int (*on_opt)(int id, const char *arg, void *ctx);
	long default_iters;
};

/*
 * Parse argv (argv[0] is the subcommand name). Exits 0 after --help and 2 with
 * a one-line reason on any bad option. Returns the index of the first
 * positional argument; positional arguments are refused unless d->args.
 */
int cli_parse(const struct cmd_desc *d, int argc, char **argv, struct bopts *o, void *ctx);
/*
 * Why a part that needs @need CPUs cannot run on @o's: from --cpus, or
 * from what the process may run on (taskset, a cpuset). Static storage.
 */
const char *cli_too_few_cpus(const struct bopts *o, int need);
/* Print "xcall-bench CMD: reason" and exit 2. */
_Noreturn void cli_fail(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* --json's file could not be written: cli_fail() now, before anything runs. */
void cli_check_json(const char *cmd);
/*
 * Before anything runs (env.c): --trace's file can be written, else cli_fail();
 * libxcall's XCALL_* variables each take their value, else cli_fail() naming
 * it; one a case's field would override is said in a line (and unset where a
 * case's own value is the field's zero). Once per process.
 */
void cli_check_trace(const char *cmd);
void cli_check_env(const char *cmd);
/* 0 when libxcall can write its trace to @path at xc_exit, else -errno and why. */
int trace_writable(const char *path, char *why, size_t size);
/* "No such file or directory (ENOENT)" into @buf. */
const char *errno_text(int err, char *buf, size_t size);
/*
 * --cpus LIST into *set: a cpulist of CPUs that are online and allowed, else
 * cli_fail() naming the first one that is not. The suite checks its own
 * --cpus with it before anything runs, as each subcommand does.
 */
void cli_check_cpus(const char *cmd, const char *list, cpu_set_t *set);
int parse_long(const char *s, long min, long max, long *out);
int parse_double(const char *s, double min, double max, double *out);
int parse_poll(const char *s, long *out);
/*
 * A comma-separated list of names, each one of name(0 .. n-1): sets want[i]
 * for each. An unknown name, or none, ends in cli_fail() naming --@opt and
 * every known name.
 */
void parse_names(const char *cmd, const char *opt, const char *list, int n, const char *(*name)(int),
		 bool *want);
int parse_ablate(const char *s, unsigned *out);
const char *poll_name(long poll_ns, char *buf, size_t size);
const char *ablate_name(unsigned ablate, char *buf, size_t size);
/* Progress line on stderr unless --quiet. */
void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- clock (clock.c) ---- */

/* CLOCK_MONOTONIC in ns: comparable across CPUs. */
static inline uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

extern bool g_tsc_ok;          /* invariant TSC, calibrated */
extern double g_tsc_ns_per_tick;

static inline uint64_t rdtsc_raw(void)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned lo, hi;
	/* lfence on both sides keeps the read from drifting into the timed code. */
	__asm__ volatile("lfence; rdtsc; lfence" : "=a"(lo), "=d"(hi) :: "memory");
	return ((uint64_t)hi << 32) | lo;
#else
	return now_ns();
#endif
}

/* Cheap timestamps: the TSC where invariant, else the monotonic clock. */
static inline uint64_t ticks(void)
{
	return g_tsc_ok ? rdtsc_raw() : now_ns();
}

static inline uint64_t ticks_to_ns(uint64_t dt)
{
	return g_tsc_ok ? (uint64_t)((double)dt * g_tsc_ns_per_tick + 0.5) : dt;
}

/*
 * One operation timed between two ticks(), in ns, less the timer's floor:
 * the shortest interval two back-to-back readings report, which every sample
 * would otherwise carry, and which would make every ratio to a short
 * operation look smaller than it is. Inside a timed region the timer can
 * cost more than its floor, so what is left is still a slight overestimate.
 */
extern uint64_t g_timer_floor_ticks;

static inline uint64_t ticks_span_ns(uint64_t t0, uint64_t t1)
{
	uint64_t dt = t1 > t0 ? t1 - t0 : 0;

	return ticks_to_ns(dt > g_timer_floor_ticks ? dt - g_timer_floor_ticks : 0);
}

/*
 * A span of @batch back-to-back operations from t0 to now, as one sample of
 * the time per operation (rounded to the ns): how every back-to-back row is
 * timed, the timer's cost spread over the span.
 */
#define hist_add_span(h, t0, batch) \
	hist_add((h), (ticks_span_ns((t0), ticks()) + (uint64_t)(batch) / 2) / (uint64_t)(batch))

/* The floor subtracted by ticks_span_ns(), in ns. */
double timer_floor_ns(void);

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield" ::: "memory");
#endif
}

void clock_setup(void);
void spin_ns(uint64_t ns);     /* busy wait, for delays and init costs */

/* ---- the time plan (plan.c) ---- */

struct plan {
	char cmd[24];
	int ncpus;              /* workers the subcommand may start */
	long cases, stepped;
	double bound_s;         /* the sum of every case's limit and the fixed costs */
	double fixed_s;         /* plan_fixed()'s part of it, half of it kept until the end */
	double min_case_s;      /* the cheapest case's share: what each case still to come keeps */
	double uncut_s;         /* the longest step so far that nothing could cut (plan_uncut) */
	double case_limit;      /* --case-limit, for the messages */
	uint64_t t0;
	uint64_t case_end;      /* now_ns() by which the current case's loops stop (plan_step) */
	uint64_t case_until;    /* ... and by which it is over, its tail included */
	uint64_t step_t;        /* when the current case began */
	bool step_skipped;      /* it was skipped (plan_late) */
	double quickest_s;      /* the quickest case so far that ran, progress line to progress line */
	bool started;
	_Atomic long capped;    /* timed loops stopped at their limit before their count */
};
extern struct plan g_plan;

/* What one subcommand took against its bound, for the results file. */
struct plan_done {
	char cmd[24];
	double wall_s, bound_s;
	long cases, capped;
};

void plan_reset(const char *cmd, double case_limit, int ncpus);   /* by cli_parse() */
void plan_cases(long cases, double each_s);     /* cases that each take at most each_s */
void plan_fixed(double s);                      /* a cost outside the cases */
double plan_start_cost(int ncpus);              /* bound on starting a runtime of ncpus */
double plan_case_s(const struct bopts *o);      /* bound on one budgeted case, warm-up included */
/* Print "xcall-bench CMD: N cases [what], at most T" on stderr; the clock starts. */
void plan_start(const char *what);
/* The "[i/N used, ~left, at most]" prefix of the next progress line. */
void plan_step(char *buf, size_t size);
void plan_capped(void);                         /* a loop stopped at its limit */
/*
 * A step that nothing could cut short (a runtime's start or stop) took s
 * seconds: the case's tail and the end keep at least that much for the next
 * one, so that a machine slow to start threads stops its loops sooner.
 */
void plan_uncut(double s);
/*
 * The latest now_ns() at which the current case may still run a loop or wait
 * for something that can be given up: the bound less what the fixed costs,
 * the cases after it and its own teardown keep. 0 before the first case.
 * budget_warm() and budget_start() never go past it; a loop or a wait that
 * is no budget's checks plan_overdue().
 */
uint64_t plan_case_end(void);
bool plan_overdue(void);
/*
 * Right after a case's progress line: true when the cases before it used its
 * share too, so that what it cannot cut (a runtime's start as slow as the
 * slowest so far, threads, one operation) would outrun the bound. The caller
 * records it skipped with PLAN_LATE_WHY and goes on; the skip counts in
 * capped_loops, and the cases after it get their shares back.
 */
bool plan_late(void);
#define PLAN_LATE_WHY "no time left: the cases before it used the bound"
void plan_skip(void);                           /* a planned case that will not run */
void plan_end(void);                            /* "took T (at most B)", kept for the JSON */
int plan_done_list(const struct plan_done **out);
const char *fmt_secs(double s, char *buf, size_t size);

/*
 * Iteration budget: a count, or a deadline when --seconds is given. A count
 * also stops at --case-limit, and either at the plan's end for the case
 * (plan_case_end()), so that a case never outruns the plan.
 */
struct budget {
	long iters;
	double seconds;         /* --seconds, or 0 */
	double limit;           /* --case-limit, for counted loops */
	uint64_t deadline;      /* set by budget_start() */
	uint64_t warm_until;    /* set by budget_warm(): the warm-up is cut there */
	uint64_t started;
	bool by_plan;           /* the deadline is the plan's end for the case, before the loop's own */
	long next_check;        /* the operation count at which the clock is read next */
	uint64_t last_t;        /* the last look: its time and count, for the rate since */
	long last_done;
	bool careful;           /* a span looks at the clock after each operation (budget_cut) */
	uint64_t watch;         /* budget_watch(): the end its waiter marks once it passed */
	int batch;              /* > 1: time spans of this many back-to-back operations, one sample each */
};
void budget_init(struct budget *b, const struct bopts *o, long default_iters);
/* Call before the warm-up: it may take as long as the timed loop, no longer. */
void budget_warm(struct budget *b);
/* Call after warm-up, right before the timed loop; arms its watch (budget_watch). */
void budget_start(struct budget *b);
/* Seconds one case of this budget may take: the plan's unit. */
double budget_case_s(const struct bopts *o);
/* Warm-up operation i of warm, unless the warm-up has had its time (a clock read each). */
static inline bool warm_more(const struct budget *b, long i, long warm)
{
	return i < warm && (!b->warm_until || now_ns() < b->warm_until);
}
/*
 * Read the clock: false once the deadline passed (after one operation at
 * least), counting a loop stopped before its count in the plan; sets when to
 * look again.
 */
bool budget_check(struct budget *b, long done);
static inline bool budget_watched(const struct budget *b);
void budget_stopped(const struct budget *b);
static inline bool budget_more(struct budget *b, long done)
{
	if (b->seconds <= 0 && done >= b->iters)
		return false;
	if (budget_watched(b) && done) {
		budget_stopped(b);
		return false;
	}
	return done < b->next_check || budget_check(b, done);
}
/*
 * For a wait inside one operation (a reply, a thread to run): true once the
 * loop's end (its deadline, or during the warm-up its warm-up's) has passed.
 * The caller gives the wait up, stops the loop and tells budget_stopped().
 */
bool budget_late(const struct budget *b);
/* A timed loop stopped at its end: counted as capped unless --seconds ended it. */
void budget_stopped(const struct budget *b);
/*
 * Before an untimed gap in front of an operation (a sleep or a spin, so that
 * a CPU goes idle first): whether it ends before the loop's end (its
 * deadline, or during the warm-up its warm-up's). When not, the loop stops
 * there rather than sleep past its end.
 */
bool budget_gap_fits(const struct budget *b, uint64_t gap_ns);
/*
 * A timed loop in a thread that another waits for (budget_wait) is watched:
 * the waiter sleeps until the loop's end and marks it there, so that a loop
 * or a span stops at its end by a load of one word, with no clock in it.
 * budget_start() arms it; the loop's thread tells budget_done() when done.
 */
extern _Atomic uint64_t g_watch_end;    /* the watched loop's end (even); odd once it passed */
void budget_watch(struct budget *b);
/*
 * True once the waiter marked an end at or past this loop's own: several
 * loops at once (matrix's callers) each arm their end, the last one stays.
 */
static inline bool budget_watched(const struct budget *b)
{
	uint64_t end = atomic_load_explicit(&g_watch_end, memory_order_relaxed);
	return b->watch && (end & 1) && (end & ~1ull) >= b->watch;
}
/*
 * An operation still in flight this long past its loop's end (its deadline,
 * or in the warm-up its warm-up's) is given up: a wait for an answer that
 * another thread's CPU or a stalled machine holds back, which no check of the
 * loop's own can cut.
 */
#define BUDGET_GRACE_NS 1000000000ull
/*
 * Arm the rescue of the loop of @b (after budget_warm(), again after
 * budget_start()): once BUDGET_GRACE_NS past its end, the watchdog thread
 * calls fn(arg), which must end the waiting operation's wait from outside, as
 * its answer would (a store, a write, a wake), and budget_rescued() turns
 * true. The operation's caller then gives the case up: plan_capped(), no
 * sample of it. One rescue at a time, process-wide.
 */
void budget_rescue_arm(const struct budget *b, void (*fn)(void *), void *arg);
/* Before the loop's teardown: no rescue runs after it returns. True if one ran. */
bool budget_rescue_disarm(void);
bool budget_rescued(void);
/* Wait until *left is 0, marking the watched loop's end when it passes. */
void budget_wait(_Atomic uint32_t *left);
void budget_done(void);                 /* wakes budget_wait() to look at *left */
/*
 * Inside a span, before operation k: true when the span must stop there (k
 * operations done) because the loop's end passed: its waiter said so
 * (watched), or the clock, read only in the loop's first span and while
 * operations are slow (careful: a span would take over a millisecond, as on
 * a loaded machine, where one of 100 round trips can take a time slice). A
 * quick span is timed with nothing in it but that load. A span cut short is
 * a sample of k operations, and the loop's last.
 */
#define BUDGET_SLOW_OP_NS 10000
static inline bool budget_cut(const struct budget *b, int k)
{
	return k && (budget_watched(b) || (b->careful && budget_late(b)));
}
/*
 * The span of k operations from t0 to now: one sample of the time per
 * operation into h, as hist_add_span(), and whether the next span looks at
 * the clock after each operation: while they are slow.
 */
static inline void budget_span_add(struct budget *b, struct hist *h, uint64_t t0, int k)
{
	uint64_t ns = ticks_span_ns(t0, ticks());
	hist_add(h, (ns + (uint64_t)k / 2) / (uint64_t)k);
	b->careful = ns > (uint64_t)k * BUDGET_SLOW_OP_NS;
}

/* ---- what else runs on the CPUs: fewer real CPUs than workers, other tasks (oversub.c) ---- */

/* What disturbed one subcommand's run, if anything. */
struct disturb {
	char cmd[24];
	double others_pct;      /* other tasks' share of the benchmarked CPUs' time; -1 unknown */
	double steal_pct;       /* the hypervisor's; -1 unknown */
	char cause[64];         /* the worst cause, "" when clean (params.disturbed, plans' disturbed) */
};

struct oversub {
	bool checked;
	int workers;
	double steal_pct;       /* the most of any subcommand's run, in % of CPU time; -1 unknown */
	double others_pct;      /* the largest share other tasks took of any run; -1 unknown */
	double quota_cpus;      /* the cgroup's CPU quota, 0 = none */
	char disturbed[64];     /* the worst cause of any run, "" when none was disturbed */
};
extern struct oversub g_oversub;
/* The CPUs a subcommand benchmarks (cli_parse()): its run measures them. */
void oversub_prepare(const cpu_set_t *cpus);
/*
 * Before a subcommand's first case: start measuring steal and other tasks'
 * time on its CPUs; the first time, read the quota and warn on stderr when
 * the workers outnumber real CPUs or the CPUs are emulated.
 */
void oversub_begin(int workers);
/*
 * The cause, when the run so far was disturbed, else NULL; once disturbed a
 * run stays so. For marks printed before the run ends (ratio_mark()).
 */
const char *oversub_now(void);
/* After its last: warn in one line naming the cause, mark the run's records. */
void oversub_end(const char *cmd);
/* The i-th run that ended, if it was cmd's. */
const struct disturb *oversub_run(int i, const char *cmd);

/* ---- pinned threads (pin.c) ---- */

int pin_self(int cpu);
void unpin_self(void);          /* back to the affinity the process started with */
int thread_start_pinned(pthread_t *t, int cpu, void *(*fn)(void *), void *arg);
int online_cpus_allowed(cpu_set_t *out);
/*
 * Join t, waiting until now_ns() reaches @until (0: for as long as it takes).
 * A thread the OS has not let finish by then (a loaded CPU) is detached
 * instead: false, and it may still use what it was given, which the caller
 * then leaves allocated.
 */
bool thread_join_by(pthread_t t, uint64_t until);

/* A reusable spinning barrier for pinned threads. */
struct spin_barrier {
	_Atomic unsigned count, gen;
	unsigned n;
	char pad[CACHELINE - 3 * sizeof(unsigned)];
} __attribute__((aligned(CACHELINE)));
void spin_barrier_init(struct spin_barrier *b, unsigned n);
void spin_barrier_wait(struct spin_barrier *b, void (*serve)(void));


/* ---- the limit and the polling call, paired (paired.c) ---- */

#define PAIR_BLOCK 1000         /* round trips per block and side */
#define PAIR_SPAN  100          /* round trips between two timestamps: the timer < 1% of a span */
#define PAIR_TAIL  100          /* round trips per block timed one by one, for the tails */
#define PAIR_LINES 8            /* lines each limit rotates over, a page each */
#define PAIR_WARM  32           /* untimed round trips at the start of each block */

/*
 * The line sides of a paired run: the limit's two ways, as a plain ping-pong and
 * as core-to-core-latency measure it, and the slot's handoff bare (the call's
 * line protocol with none of the library's code, baselines.h), which splits the
 * call's distance from the limit into what the protocol costs and what the
 * code costs. Only the first two are limits. Then two candidates for a
 * handoff of fewer line transfers, bare too (baselines.h): request and
 * completion on lines of their own sides (split), and the slot's line with
 * every spin a CAS (CAS-spun).
 */
enum { LIMIT_STORE, LIMIT_CAS, LIMIT_HANDOFF, LIMIT_SPLIT, LIMIT_CASSPUN, NLIMITS };

struct paired_in {
	int a, b;                       /* caller and target CPUs, both in the runtime */
	bool want_limit, want_call;
	struct budget bud;              /* per side */
	/* per round trip, from spans of PAIR_SPAN (ns): each line side, the call */
	struct hist *h_limit[NLIMITS], *h_call;
	/* each of PAIR_TAIL round trips per block timed alone (ns), for tails: store/load limit, call */
	struct hist *h_limit_op, *h_call_op;
};

struct paired_out {
	long n;                         /* round trips per side in spans */
	int blocks;
	double ratio_p10, ratio_p50, ratio_p90; /* call block median / the lower limit block median */
	double handoff_ratio_p50;       /* per block, bare handoff / lower limit: the protocol's pattern */
	double code_ratio_p50;          /* per block, call / bare handoff: the library's code */
	double side_ratio_p50[NLIMITS]; /* per block, each line side / lower limit */
	double limit_p50[NLIMITS];      /* each line side's median over its blocks, ns */
	double line_p50_min, line_p50_max;      /* the cheapest and dearest store/load line's median */
	struct xc_stats call_delta, call_target; /* over the timed calls: all CPUs, the target */
};

/*
 * Alternate blocks of the cache-line limit (store/load, then CAS), of the bare
 * handoff, each over its own lines, and of waiting calls from a to b in the runtime that is up (poll
 * forever). Every block times its round trips in spans of PAIR_SPAN, then
 * PAIR_TAIL of them one by one. Returns n, or -errno.
 */
long xh_paired(const struct paired_in *in, struct paired_out *out);

/* ---- libxcall harness (harness.c) ---- */

/*
 * xc_init with these settings on o's CPUs (or on `cpus` when not NULL).
 * xh_up_opts() fills in the report hook and, when xo->trace_file is NULL,
 * --trace's file; xo->trace_file = xh_no_trace forces tracing off.
 */
extern const char xh_no_trace[];
int xh_up(const struct bopts *o, const char *cpus, long poll_ns, unsigned ablate);
int xh_up_opts(struct xc_opts *xo);
void xh_down(void);
/* Run fn(arg) as a work item on each CPU of cpus[0..n) at once and wait for all. */
int xh_run_on(const int *cpus, int n, xc_func_t fn, void **args);
void xh_serve(void);            /* xc_poll() when on a worker */
/*
 * Time waiting (or not) single calls made from worker `caller` to `target`,
 * after the common warm-up: one sample per call into h, in ns; delta gets the
 * summed counters of the timed part. Returns the number timed or -errno.
 */
long xh_time_calls(int caller, int target, unsigned flags, const struct budget *b,
		   struct hist *h, struct xc_stats *delta);
/* The same with an idle gap before each call, and the target's own counters. */
struct xh_timed {
	bool gap;               /* wait until the target went to sleep since the last call */
	uint64_t gap_ns;        /* ... and this much more (untimed) */
};
struct xh_timed_out {
	struct xc_stats delta;  /* summed over every CPU */
	struct xc_stats target; /* the target's own */
	long gap_timeouts;      /* gaps that gave up waiting for the target to sleep */
};
long xh_time_calls_x(int caller, int target, unsigned flags, const struct budget *b,
		     struct hist *h, const struct xh_timed *x, struct xh_timed_out *out);
void rec_xc_target_counters(struct rec *r, const struct xc_stats *d);
long warmup_iters(long iters);
void xh_noop(void *arg);
/*
 * From a thread that is not a worker: return once every nowait call queued
 * so far has run and its count is in the stats. Makes two calls per CPU.
 */
int xh_drain_all(void);
/* Return once the calls counters summed over every CPU grew by want since s0; -ETIMEDOUT after timeout_s. */
int xh_wait_calls(const struct xc_stats *s0, uint64_t want, double timeout_s);
void xh_stats(int cpu, struct xc_stats *out);
void rec_xc_counters(struct rec *r, const struct xc_stats *d);

/* ---- families ---- */

#define BENCH_CMD(name, summary) int cmd_##name(int argc, char **argv);
#include "commands.h"
#undef BENCH_CMD

#endif
