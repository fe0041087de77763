/* SPDX-License-Identifier: MIT */
/*
 * output.h - result records (docs/results-format.md) and their JSON, CSV and
 * table forms. Every family builds records the same way, so every result file
 * has the same shape.
 */
#ifndef BENCH_OUTPUT_H
#define BENCH_OUTPUT_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "hist.h"

#define REC_MAX_KV 64

struct kv {
	char key[32];
	char type;              /* 'i' integer, 'd' double, 's' string, 'b' bool */
	long long i;
	double d;
	char s[64];
};

struct rec {
	char bench[24], kase[64], unit[8], better[8];
	struct hist_stats s;
	bool has_min_stddev;
	int repeat;
	cpu_set_t cpus;
	bool has_cpus;
	struct kv params[REC_MAX_KV], counters[REC_MAX_KV];
	int nparams, ncounters;
	struct rec *next;
};

/* A new record appended to the run's list; better is "lower" or "higher". */
struct rec *rec_new(const char *bench, const char *kase, const char *unit,
		    const char *better, int repeat);
void rec_hist(struct rec *r, const struct hist *h);
void rec_value(struct rec *r, double v);        /* n = 1, every statistic = v */
void rec_cpus(struct rec *r, const cpu_set_t *set);
void rec_cpu_list(struct rec *r, const int *cpus, int n);
void rec_param_i(struct rec *r, const char *key, long long v);
void rec_param_d(struct rec *r, const char *key, double v);
void rec_param_s(struct rec *r, const char *key, const char *v);
void rec_param_b(struct rec *r, const char *key, bool v);
void rec_counter(struct rec *r, const char *key, long long v);
long long rec_counter_get(const struct rec *r, const char *key, long long dflt);
/* A numeric parameter (integer or double) as a double, or dflt if absent. */
double rec_param_get(const struct rec *r, const char *key, double dflt);
/* A string parameter, or NULL if absent or not a string. */
const char *rec_param_str(const struct rec *r, const char *key);
/*
 * A row that could not run: n = 0, every statistic 0, params.skipped = @why
 * (under 63 characters), also said on stderr unless --quiet. The caller tells
 * the plan (plan_skip) when it was a planned case.
 */
struct rec *rec_skipped(const char *bench, const char *kase, const char *why, int repeat);

/*
 * Capped and disturbed records. A record made after a timed loop that
 * --case-limit stopped, in the same progress step, gets params.capped = true
 * (rec_step() marks where a step starts). Records of a subcommand that other
 * work disturbed get params.disturbed, the cause (oversub.c), at its end.
 */
void rec_step(void);                            /* a case starts (progress()) */
bool rec_capped(const struct rec *r);
/*
 * A ratio built from a and b (either may be NULL): x, the record that holds
 * it, is capped exactly when a or b is, and disturbed when either is.
 */
void rec_ratio_of(struct rec *x, const struct rec *a, const struct rec *b);
/*
 * What a ratio of a and b carries when printed: "" when both are sound, else
 * " (capped)", " (disturbed)" or " (capped, disturbed)". Disturbed: either
 * record says so, or the subcommand's run so far was (oversub_now()).
 */
const char *ratio_mark(const struct rec *a, const struct rec *b);
/* printf of fmt with v, then ratio_mark(a, b): "0.36x (disturbed)". */
const char *fmt_ratio(char *buf, size_t size, const char *fmt, double v, const struct rec *a,
		      const struct rec *b);
/* The records since the last rec_run_start() (skipped ones apart) get params.disturbed = cause. */
void rec_run_start(void);
void rec_run_disturbed(const char *cause);

struct rec *rec_first(void);
struct rec *rec_find(const char *bench, const char *kase, int repeat);
/* Records appended since `mark` (NULL = all), for printing one family's table. */
struct rec *rec_last(void);

/* Results file. argv is the command line as given. Atomic (tmp + rename). */
int out_write_json(const char *path, int argc, char **argv);
/*
 * Could out_write_json() write path? 0, or -errno with why in @why: checked
 * before anything runs, without creating anything.
 */
int out_json_writable(const char *path, char *why, size_t size);
void out_csv(FILE *f, struct rec *from);
/* The generic table of every record after `from` (NULL = all). */
void out_table(FILE *f, struct rec *from, const char *title);
/* "123 ns", "4.56 us", "7.89 ms", "1.23 s" */
const char *fmt_ns(double ns, char *buf, size_t size);
/* The machine description as a few lines, for the top of every table. */
void out_machine(FILE *f);
/* Once the command line is known to be good: describe the machine, unless --quiet or --csv. */
void out_header(void);

/* ---- machine.c ---- */
struct machine {
	char hostname[64], cpu_model[128], kernel[72], hypervisor[32];
	char idle_driver[32], idle_governor[32], clocksource[32];
	int cpus_online, cores;
	bool virtualised, tsc_invariant;
	bool emulated;          /* the CPUs are a software emulator's (QEMU TCG): times mean nothing */
};
const struct machine *machine_get(void);

#endif
