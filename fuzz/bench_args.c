// SPDX-License-Identifier: MIT
/*
 * fuzz/bench_args.c - libFuzzer harness for xcall-bench's command line: the
 * real main() of bench/main.c (compiled with -Dmain=xcall_bench_main), the
 * suite's options, every subcommand's cli_parse() (bench/cli.c) with its own
 * options and on_opt(), and the checks each subcommand makes on them.
 *
 * Input: the arguments after "xcall-bench", separated by NUL bytes (at most
 * 64). Nothing of the parsers is copied here; the link wraps a few symbols:
 *   exit          a bad argument ends in cli_fail() -> exit(2), --help in
 *                 exit(0): __wrap_exit longjmps back here with the status.
 *   stop points   the first calls a subcommand makes once its arguments are
 *                 accepted (hist_init, rec_last, progress, xh_up, xh_up_opts,
 *                 m08_start, journal_restore, irq_read, and syscall and
 *                 pthread_create as a safety net): parsing is over, so they
 *                 longjmp back too and no benchmark ever runs.
 *   clock_setup   calibrated once at start-up, not on every input.
 *   malloc, calloc, aligned_alloc, free
 *                 what a run still holds when it ends is freed, as the end of
 *                 the process frees it.
 * stdout goes to a scratch buffer; stderr is captured during the run.
 * FUZZ_VERBOSE=1 prints how each input ended.
 *
 * Properties: no crash or sanitizer report; the run ends in exit(0), exit(2),
 * a return of 0 from main (the suite's --help) or a stop point; exit(2) says
 * why on stderr: a message that starts "xcall-bench" and ends in a newline.
 */
#include "baselines.h"	/* bench.h, m08_start */
#include "kernel.h"	/* irq_read, journal_restore */

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int xcall_bench_main(int argc, char **argv);

#define MAX_ARGS 64

enum end { END_RETURN, END_EXIT, END_STOP };

static jmp_buf back;
static bool in_run;
static int exit_status;
static const char *stop_name;

#define CHECK(cond, ...) do { if (!(cond)) { \
	fprintf(stderr, "fuzz bench_args: property failed: %s: ", #cond); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); abort(); } } while (0)

/* ---- wrapped symbols (-Wl,--wrap=...) ---- */

_Noreturn void __real_exit(int status);
_Noreturn void __wrap_exit(int status)
{
	if (in_run) {
		exit_status = status;
		longjmp(back, END_EXIT);
	}
	__real_exit(status);
}

_Noreturn static void stop(const char *name)
{
	stop_name = name;
	longjmp(back, END_STOP);
}

int __real_hist_init(struct hist *h);
int __wrap_hist_init(struct hist *h)
{
	if (in_run)
		stop("hist_init");
	return __real_hist_init(h);
}

struct rec *__real_rec_last(void);
struct rec *__wrap_rec_last(void)
{
	if (in_run)
		stop("rec_last");
	return __real_rec_last();
}

void __wrap_progress(const char *fmt, ...)
{
	if (in_run)
		stop("progress");
	/* outside a run: nothing of the harness prints progress */
}

int __real_xh_up(const struct bopts *o, const char *cpus, long poll_ns, unsigned ablate);
int __wrap_xh_up(const struct bopts *o, const char *cpus, long poll_ns, unsigned ablate)
{
	if (in_run)
		stop("xh_up");
	return __real_xh_up(o, cpus, poll_ns, ablate);
}

int __real_xh_up_opts(struct xc_opts *xo);
int __wrap_xh_up_opts(struct xc_opts *xo)
{
	if (in_run)
		stop("xh_up_opts");
	return __real_xh_up_opts(xo);
}

int __real_m08_start(const int *cpus, int n, long poll_ns);
int __wrap_m08_start(const int *cpus, int n, long poll_ns)
{
	if (in_run)
		stop("m08_start");
	return __real_m08_start(cpus, n, poll_ns);
}

int __real_journal_restore(bool verbose);
int __wrap_journal_restore(bool verbose)
{
	if (in_run)
		stop("journal_restore");
	return __real_journal_restore(verbose);
}

int __real_irq_read(struct irq_snap *s);
int __wrap_irq_read(struct irq_snap *s)
{
	if (in_run)
		stop("irq_read");
	return __real_irq_read(s);
}

long __real_syscall(long nr, ...);
long __wrap_syscall(long nr, long a, long b, long c, long d, long e, long f)
{
	if (in_run)
		stop("syscall");
	return __real_syscall(nr, a, b, c, d, e, f);
}

int __real_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	if (in_run)
		stop("pthread_create");
	return __real_pthread_create(t, attr, fn, arg);
}

/*
 * Allocations made during a run and still held when it ends (a subcommand's
 * context, left behind by exit(2) or a stop point) are freed here, as the
 * end of the process would free them: neither LeakSanitizer nor libFuzzer's
 * leak check takes them for leaks, and they do not pile up over millions of inputs.
 */
#define MAX_HELD 64
static void *held[MAX_HELD];
static int nheld;

static void *hold(void *p)
{
	if (in_run && p) {
		CHECK(nheld < MAX_HELD, "more than %d allocations during one run", MAX_HELD);
		held[nheld++] = p;
	}
	return p;
}

void *__real_malloc(size_t n);
void *__wrap_malloc(size_t n) { return hold(__real_malloc(n)); }
void *__real_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size) { return hold(__real_calloc(n, size)); }
void *__real_aligned_alloc(size_t align, size_t n);
void *__wrap_aligned_alloc(size_t align, size_t n) { return hold(__real_aligned_alloc(align, n)); }
void __real_free(void *p);
void __wrap_free(void *p)
{
	for (int i = 0; i < nheld; i++)
		if (held[i] == p) {
			held[i] = held[--nheld];
			break;
		}
	__real_free(p);
}

void __real_clock_setup(void);
void __wrap_clock_setup(void)
{
	static bool done;

	if (!done)
		__real_clock_setup();
	done = true;
}

/* ---- the harness ---- */

static char errbuf[65536], outbuf[4096];
static bool verbose;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* FUZZ_VERBOSE=1: say how each input ended (exit status and message, or stop point) */
	verbose = getenv("FUZZ_VERBOSE") && strcmp(getenv("FUZZ_VERBOSE"), "0");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1);
	char *argv[MAX_ARGS + 2];
	int argc = 0;
	size_t pos = 0;

	memcpy(buf, data, size);
	buf[size] = 0;
	argv[argc++] = "xcall-bench";
	while (pos < size && argc <= MAX_ARGS) {
		argv[argc++] = buf + pos;
		pos += strlen(buf + pos) + 1;
	}
	argv[argc] = NULL;

	memset(&g_out, 0, sizeof(g_out));	/* as a new process has them */
	optind = 0;		/* a full getopt reset, as in a new process */
	opterr = 1;
	optopt = '?';
	memset(errbuf, 0, sizeof(errbuf));
	FILE *saved_out = stdout, *saved_err = stderr;
	FILE *out = fmemopen(outbuf, sizeof(outbuf), "w");
	FILE *err = fmemopen(errbuf, sizeof(errbuf) - 1, "w");
	CHECK(out && err, "fmemopen");

	volatile int ret = -1;
	stop_name = NULL;
	exit_status = -1;
	stdout = out;
	stderr = err;
	in_run = true;
	int how = setjmp(back);
	if (how == END_RETURN)
		ret = xcall_bench_main(argc, argv);
	in_run = false;
	while (nheld)
		__real_free(held[--nheld]);
	stdout = saved_out;
	stderr = saved_err;
	fclose(out);
	fclose(err);

	switch (how) {
	case END_RETURN:
		CHECK(ret == 0, "main returned %d without running anything", ret);
		break;
	case END_EXIT:
		CHECK(exit_status == 0 || exit_status == 2, "exit(%d)", exit_status);
		if (exit_status == 2) {
			size_t n = strlen(errbuf);
			CHECK(!strncmp(errbuf, "xcall-bench", 11) && n && errbuf[n - 1] == '\n',
			      "exit(2) with message \"%s\"", errbuf);
		}
		break;
	case END_STOP:
		break;
	}
	if (verbose) {
		fprintf(stderr, "bench_args:");
		for (int i = 1; i < argc; i++)
			fprintf(stderr, " '%s'", argv[i]);
		if (how == END_STOP)
			fprintf(stderr, " -> parsed, stopped at %s\n", stop_name);
		else if (how == END_EXIT)
			fprintf(stderr, " -> exit(%d) %s", exit_status, exit_status ? errbuf : "\n");
		else
			fprintf(stderr, " -> main returned %d\n", ret);
	}
	free(buf);
	return 0;
}
