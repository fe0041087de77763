/* SPDX-License-Identifier: MIT */
/*
 * kernel.c - `xcall-bench kernel [probe...]`: what the host kernel's IPIs
 * cost, measured from user space without a module, each figure with the
 * CAL/RES/TLB interrupts per operation that prove whether an IPI happened.
 *
 *   ipi      seed 003 on the real kernel: membarrier(PRIVATE_EXPEDITED_RSEQ,
 *            FLAG_CPU, cpu) is smp_call_function_single(cpu, .., wait=1) when
 *            a thread of ours runs there (normal), and no IPI when none does
 *            (dry-run); self; broadcast with PRIVATE_EXPEDITED.
 *   wakeup   wake-to-run of a futex sleeper on another CPU after a short and
 *            a long idle gap, and of a thread that polls instead.
 *   tlb      munmap / mprotect of pages our threads on 0, 1, all other CPUs touched.
 *   compare  kernel IPI vs libxcall polling and sleeping calls, same CPUs.
 *   idlestates, hotplug  root only, opt-in (kernel_root.c).
 */
#include "kernel.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { O_ALLOW_SYSFS = 1, O_ALLOW_HOTPLUG, O_RESTORE, O_GAP, O_LONG_GAP };

static const struct cmd_opt kernel_opts[] = {
	{"allow-sysfs", no_argument, O_ALLOW_SYSFS, "  let idlestates write cpuidle sysfs files (root; journalled, restored)"},
	{"allow-hotplug", no_argument, O_ALLOW_HOTPLUG, "let hotplug take a CPU offline and back (root; never CPU 0)"},
	{"restore", no_argument, O_RESTORE, "      put back what a killed run left changed (journal in " JOURNAL_DIR ")"},
	{"gap-us", required_argument, O_GAP, "US      wakeup: short idle gap before each wake (default 20)"},
	{"long-gap-us", required_argument, O_LONG_GAP, "US long idle gap (default 1000)"},
	{0},
};

static int on_opt(int id, const char *arg, void *ctx)
{
	struct kctx *k = ctx;
	switch (id) {
	case O_ALLOW_SYSFS: k->allow_sysfs = true; return 0;
	case O_ALLOW_HOTPLUG: k->allow_hotplug = true; return 0;
	case O_RESTORE: k->restore = true; return 0;
	case O_GAP: return parse_long(arg, 0, 1000000, &k->gap_short_us);
	case O_LONG_GAP: return parse_long(arg, 0, 10000000, &k->gap_long_us);
	}
	return -1;
}

static const struct cmd_desc desc = {
	.name = "kernel",
	.summary = "the host kernel's real IPIs from user space, proven by /proc/interrupts\n"
		   "probes: ipi wakeup tlb compare (default: all four), idlestates, hotplug",
	.args = "[probe...]",
	.opts = kernel_opts,
	.on_opt = on_opt,
	.default_iters = 20000,
};

long membarrier(int cmd, unsigned flags, int cpu)
{
	return syscall(__NR_membarrier, cmd, flags, cpu);
}

void membarrier_register(struct membarrier_reg *m)
{
	long q = membarrier(MEMBARRIER_CMD_QUERY, 0, 0);

	*m = (struct membarrier_reg){0};
	if (q < 0) {
		m->why = "membarrier() is not available";
		return;
	}
	m->expedited = (q & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
		       !membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0);
	if (!(q & MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ))
		m->why = "this kernel's membarrier lacks PRIVATE_EXPEDITED_RSEQ (5.10+)";
	else if (membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ, 0, 0))
		m->why = "registering for membarrier PRIVATE_EXPEDITED_RSEQ failed";
	else
		m->rseq = true;
}

/* Registration first, while we are single-threaded. */
static void membarrier_setup(struct kctx *k)
{
	struct membarrier_reg m;

	membarrier_register(&m);
	k->membarrier_ok = m.expedited;
	k->membarrier_rseq_ok = m.rseq;
	k->membarrier_why = m.why;
}

/* ---- spinners: threads of ours that keep running on their CPUs ---- */

struct spinner {
	struct spinners *s;
	pthread_t t;
};

struct spinners {
	_Alignas(CACHELINE) _Atomic uint64_t gen;
	volatile char *_Atomic page;            /* touched at each new gen, when set */
	_Alignas(CACHELINE) _Atomic int acks;
	_Atomic bool stop;
	int n;
	struct spinner sp[];
};

/*
 * On a shared machine another task on the CPU is often the one running there,
 * and then the kernel rightly skips the IPI. A spinner therefore takes
 * SCHED_FIFO priority 1 where allowed and where RT throttling (the kernel's
 * sched_rt_runtime_us) still leaves the other tasks their share; else nice -20.
 * Spinners live only while a probe runs.
 */
static bool rt_throttled(void)
{
	char v[32];
	return !sysfs_read("/proc/sys/kernel/sched_rt_runtime_us", v, sizeof(v)) && atol(v) >= 0 &&
	       atol(v) < 1000000;
}

static const char *prefer_this_thread(bool rt)
{
	struct sched_param sp = {.sched_priority = 1};
	if (rt && rt_throttled() && !pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp))
		return "SCHED_FIFO 1";
	return setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), -20) ? "nice 0" : "nice -20";
}

const char *g_spinner_policy = "none";

static void *spin_main(void *arg)
{
	struct spinners *s = ((struct spinner *)arg)->s;
	uint64_t seen = 0;
	g_spinner_policy = prefer_this_thread(true);
	while (!atomic_load_explicit(&s->stop, memory_order_relaxed)) {
		uint64_t g = atomic_load_explicit(&s->gen, memory_order_acquire);
		if (g != seen) {
			volatile char *p = atomic_load_explicit(&s->page, memory_order_relaxed);
			if (p)
				(void)*p;       /* a TLB entry for the page on this CPU */
			seen = g;
			atomic_fetch_add_explicit(&s->acks, 1, memory_order_release);
		}
		cpu_relax();
	}
	return NULL;
}

struct spinners *spinners_start(const int *cpus, int n)
{
	struct spinners *s = aligned_alloc(CACHELINE, (sizeof(*s) + (size_t)n * sizeof(struct spinner) +
						      CACHELINE - 1) / CACHELINE * CACHELINE);
	memset(s, 0, sizeof(*s));
	s->n = n;
	uint64_t t0 = now_ns();
	for (int i = 0; i < n; i++) {
		s->sp[i].s = s;
		thread_start_pinned(&s->sp[i].t, cpus[i], spin_main, &s->sp[i]);
	}
	/* every spinner has run once on its CPU before we measure */
	atomic_fetch_add(&s->gen, 1);
	while (atomic_load(&s->acks) < n)
		cpu_relax();
	plan_uncut((double)(now_ns() - t0) / 1e9);     /* threads' start: nothing cuts it */
	return s;
}

static void spinners_touch(struct spinners *s, volatile char *page)
{
	int want = atomic_load(&s->acks) + s->n;
	atomic_store_explicit(&s->page, page, memory_order_relaxed);
	atomic_fetch_add_explicit(&s->gen, 1, memory_order_release);
	while (atomic_load_explicit(&s->acks, memory_order_acquire) < want)
		cpu_relax();
}

void spinners_stop(struct spinners *s)
{
	if (!s)
		return;
	uint64_t t0 = now_ns();
	atomic_store(&s->stop, true);
	for (int i = 0; i < s->n; i++)
		pthread_join(s->sp[i].t, NULL);
	plan_uncut((double)(now_ns() - t0) / 1e9);
	free(s);
}

static int others(const struct kctx *k, int *out)
{
	int n = 0;
	for (int i = 0; i < k->o.ncpus; i++)
		if (k->o.cpu[i] != k->a)
			out[n++] = k->o.cpu[i];
	return n;
}

static struct rec *krec(const struct kctx *k, const char *kase, const struct hist *h, long n, int rep)
{
	struct rec *r = rec_new("kernel", kase, "ns", "lower", rep);
	rec_hist(r, h);
	rec_cpus(r, &k->o.cpus);
	rec_param_i(r, "iterations", n);
	rec_param_i(r, "sender", k->a);
	rec_param_i(r, "target", k->b);
	return r;
}

/* A planned probe that will not run; a record says why, so the results file tells. */
static void skip(const char *what, const char *why)
{
	plan_skip();
	rec_skipped("kernel", what, why, 0);
}

/* ---- ipi ---- */

enum ipi_mode { K_DRY, K_SELF, K_NORMAL, K_BROADCAST, K_NMODES };
static const char *const kmode_names[K_NMODES] = {"dry-run", "self", "normal", "broadcast"};

static long ipi_op(const struct kctx *k, enum ipi_mode m)
{
	switch (m) {
	case K_DRY: return membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ, MEMBARRIER_CMD_FLAG_CPU, k->b);
	case K_SELF: return membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ, MEMBARRIER_CMD_FLAG_CPU, k->a);
	case K_NORMAL: return membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ, MEMBARRIER_CMD_FLAG_CPU, k->b);
	default: return membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
	}
}

/*
 * A normal-mode record's time is one IPI's cost only if about every call sent
 * one: the kernel interrupts a CPU only while it runs a thread of this process,
 * and on a busy machine the spinner on the target is often not running. Else
 * params.no_ipi says what happened, in short (a record's strings are short);
 * the table's note and xcall-report say it whole, from the same counts.
 */
#define IPI_PROVEN_LO 0.9
#define IPI_PROVEN_HI 1.1

/* What a record's function-call interrupts say; NULL when it is an IPI's cost. */
static const char *ipi_doubt(const struct rec *r, bool whole, char *buf, size_t size)
{
	double cal = rec_param_get(r, "CAL_per_op_target", -1);
	int target = (int)rec_param_get(r, "target", -1);

	if (cal < 0)
		snprintf(buf, size, whole ? "/proc/interrupts gave no function-call interrupt counts, "
			 "so nothing shows that these calls sent IPIs" : "no interrupt counts");
	else if (cal < IPI_PROVEN_LO && whole)
		snprintf(buf, size, "%.0f%% of these calls sent no IPI (%.2f function-call interrupts "
			 "a call on CPU %d): the kernel interrupts only a CPU that runs a thread of this "
			 "process, and the probe's spinner there was often not running on a busy machine",
			 (1 - cal) * 100, cal, target);
	else if (cal < IPI_PROVEN_LO)
		snprintf(buf, size, "%.0f%% of the calls sent no IPI (%.2f CAL/op)", (1 - cal) * 100, cal);
	else if (cal > IPI_PROVEN_HI)
		snprintf(buf, size, whole ? "%.2f function-call interrupts a call on CPU %d: other IPIs "
			 "reached that CPU meanwhile, so the time is not one IPI's" :
			 "%.2f CAL/op: other IPIs too", cal, target);
	else
		return NULL;
	return buf;
}

/* Time one membarrier mode from CPU a; the spinners decide whether an IPI is due. */
static struct rec *ipi_measure(struct kctx *k, enum ipi_mode m, const char *kase, int rep)
{
	int oth[CPU_SETSIZE], no = others(k, oth);
	struct spinners *sp = NULL;
	/* a test's: no spinner on the target, as on a machine too busy to run it (ipi_doubt) */
	const char *lone = getenv("XCALL_BENCH_KERNEL_NO_SPINNER");
	if (m == K_NORMAL && !(lone && strcmp(lone, "0")))
		sp = spinners_start(&k->b, 1);
	else if (m == K_BROADCAST)
		sp = spinners_start(oth, no);
	pin_self(k->a);
	struct budget b;
	budget_init(&b, &k->o, desc.default_iters);
	struct hist h;
	hist_init(&h);
	long err = 0, warm = warmup_iters(b.iters), i;
	budget_warm(&b);
	for (i = 0; warm_more(&b, i, warm) && !err; i++)
		err = ipi_op(k, m);
	struct irq_snap *s0 = malloc(sizeof(*s0)), *s1 = malloc(sizeof(*s1));
	irq_read(s0);
	budget_start(&b);
	/* spans of back-to-back operations between two timestamps, one sample a span */
	for (i = 0; budget_more(&b, i) && !err; i += PAIR_SPAN) {
		uint64_t t0 = ticks();
		int j;
		for (j = 0; j < PAIR_SPAN && !err && !budget_cut(&b, j); j++)
			err = ipi_op(k, m);
		budget_span_add(&b, &h, t0, j);
		if (j < PAIR_SPAN && !err) {
			i += j;
			budget_stopped(&b);
			break;
		}
	}
	irq_read(s1);
	unpin_self();
	spinners_stop(sp);
	struct rec *r = NULL;
	if (err) {
		char why[96];
		snprintf(why, sizeof(why), "membarrier: %s", strerror(errno));
		skip(kase, why);
	} else {
		r = krec(k, kase, &h, i, rep);
		rec_param_i(r, "batch", PAIR_SPAN);
		if (sp)
			rec_param_s(r, "spinner", g_spinner_policy);
		rec_param_s(r, "op", m == K_BROADCAST ? "membarrier(PRIVATE_EXPEDITED)"
						      : "membarrier(PRIVATE_EXPEDITED_RSEQ, FLAG_CPU)");
		irq_record(r, s0, s1, "sender", k->a, i);
		irq_record(r, s0, s1, "target", k->b, i);
		char why[64];
		if (m == K_NORMAL && ipi_doubt(r, false, why, sizeof(why)))
			rec_param_s(r, "no_ipi", why);
	}
	free(s0);
	free(s1);
	hist_free(&h);
	return r;
}

int probe_ipi(struct kctx *k)
{
	for (int rep = 0; rep < k->o.repeat; rep++)
		for (int m = 0; m < K_NMODES; m++) {
			char kase[64];
			snprintf(kase, sizeof(kase), "ipi/%s", kmode_names[m]);
			if (m == K_BROADCAST ? !k->membarrier_ok : !k->membarrier_rseq_ok) {
				skip(kase, k->membarrier_why ? k->membarrier_why : "membarrier command missing");
				continue;
			}
			if (m != K_SELF && k->o.ncpus < 2) {
				skip(kase, cli_too_few_cpus(&k->o, 2));
				continue;
			}
			progress("kernel ipi: %s, repeat %d", kmode_names[m], rep);
			if (plan_late())
				rec_skipped("kernel", kase, PLAN_LATE_WHY, rep);
			else
				ipi_measure(k, (enum ipi_mode)m, kase, rep);
		}
	return 0;
}

/* ---- wakeup ---- */

struct sleeper {
	_Alignas(CACHELINE) _Atomic uint32_t word;
	bool polling;
	_Alignas(CACHELINE) _Atomic uint64_t woke_at;
	_Atomic uint32_t ack;
	_Atomic bool stop;
};

static void *sleeper_main(void *arg)
{
	struct sleeper *s = arg;
	uint32_t seen = 0;
	prefer_this_thread(false);
	for (;;) {
		uint32_t w;
		while ((w = atomic_load_explicit(&s->word, memory_order_acquire)) == seen) {
			if (s->polling)
				cpu_relax();
			else
				xc_futex_wait(&s->word, seen, NULL);
		}
		uint64_t t = ticks();
		if (atomic_load(&s->stop))
			return NULL;
		atomic_store_explicit(&s->woke_at, t, memory_order_relaxed);
		seen = w;
		atomic_store_explicit(&s->ack, w, memory_order_release);
	}
}

long wakeup_run(struct kctx *k, long gap_us, bool polling, struct hist *h, struct irq_snap *s0,
		struct irq_snap *s1)
{
	struct sleeper *s = aligned_alloc(CACHELINE, sizeof(*s));
	memset(s, 0, sizeof(*s));
	s->polling = polling;
	pthread_t t;
	pin_self(k->a);
	if (thread_start_pinned(&t, k->b, sleeper_main, s)) {
		free(s);
		return -1;
	}
	struct budget b;
	budget_init(&b, &k->o, polling ? desc.default_iters : desc.default_iters / 10);
	long warm = warmup_iters(b.iters) / 10 + 10, i;
	uint32_t gen = 0;
	budget_warm(&b);
	for (i = -warm;; i++) {
		if (i < 0 && !warm_more(&b, i + warm, warm))
			i = 0;
		if (i == 0) {
			irq_read(s0);
			budget_start(&b);
		}
		if (i >= 0 && !budget_more(&b, i))
			break;
		/* a busy gap on the sender: the target's CPU goes idle, ours does not; none past the end */
		if (i && !budget_gap_fits(&b, (uint64_t)gap_us * 1000)) {
			if (i < 0) {
				i = -1;
				continue;
			}
			budget_stopped(&b);
			break;
		}
		spin_ns((uint64_t)gap_us * 1000);
		gen++;
		uint64_t t0 = ticks();
		atomic_store_explicit(&s->word, gen, memory_order_release);
		if (!polling)
			xc_futex_wake(&s->word, 1);
		/* a sleeper its CPU does not run (others hold it) gives the loop up at its end */
		bool late = false;
		for (long spins = 1; atomic_load_explicit(&s->ack, memory_order_acquire) != gen; spins++) {
			cpu_relax();
			if (!(spins & 255) && (late = budget_late(&b)))
				break;
		}
		if (late && i < 0) {
			i = -1;         /* the warm-up had its time: on to the timed loop */
			continue;
		}
		if (late) {
			budget_stopped(&b);
			break;
		}
		uint64_t t1 = atomic_load_explicit(&s->woke_at, memory_order_relaxed);
		if (i >= 0)
			hist_add(h, ticks_to_ns(t1 > t0 ? t1 - t0 : 0));
	}
	irq_read(s1);
	atomic_store(&s->stop, true);
	atomic_store(&s->word, gen + 1);
	xc_futex_wake(&s->word, 1);
	/* the sleeper's CPU may be held by others: wait for it a tail's time, then leave it */
	if (thread_join_by(t, now_ns() + 100000000u))
		free(s);
	unpin_self();
	return i;
}

static struct rec *wakeup_case(struct kctx *k, const char *kase, long gap_us, bool polling, int rep)
{
	struct hist h;
	hist_init(&h);
	struct irq_snap *s0 = malloc(sizeof(*s0)), *s1 = malloc(sizeof(*s1));
	progress("kernel wakeup: %s, repeat %d", kase, rep);
	long n = plan_late() ? -2 : wakeup_run(k, gap_us, polling, &h, s0, s1);
	if (n == -2)
		rec_skipped("kernel", kase, PLAN_LATE_WHY, rep);
	struct rec *r = NULL;
	if (n == 0)
		rec_skipped("kernel", kase, "no wake ran before the case's end: the target CPU was busy", rep);
	else if (n > 0) {
		r = krec(k, kase, &h, n, rep);
		rec_param_i(r, "gap_us", gap_us);
		rec_param_s(r, "target", polling ? "polls a flag" : "sleeps in FUTEX_WAIT");
		irq_record(r, s0, s1, "sender", k->a, n);
		irq_record(r, s0, s1, "target", k->b, n);
	}
	free(s0);
	free(s1);
	hist_free(&h);
	return r;
}

int probe_wakeup(struct kctx *k)
{
	if (k->o.ncpus < 2) {
		skip("wakeup", cli_too_few_cpus(&k->o, 2));
		return 0;
	}
	for (int rep = 0; rep < k->o.repeat; rep++) {
		wakeup_case(k, "wakeup/futex-short-gap", k->gap_short_us, false, rep);
		wakeup_case(k, "wakeup/futex-long-gap", k->gap_long_us, false, rep);
		wakeup_case(k, "wakeup/polling", k->gap_short_us, true, rep);
	}
	return 0;
}

/* ---- tlb ---- */

static struct rec *tlb_case(struct kctx *k, bool mprot, int nothers, const char *kase, int rep)
{
	int oth[CPU_SETSIZE], no = others(k, oth);
	if (nothers > no)
		nothers = no;
	struct spinners *sp = nothers ? spinners_start(oth, nothers) : NULL;
	pin_self(k->a);
	struct budget b;
	budget_init(&b, &k->o, desc.default_iters / 4);
	struct hist h;
	hist_init(&h);
	struct irq_snap *s0 = malloc(sizeof(*s0)), *s1 = malloc(sizeof(*s1));
	const size_t len = 4096;
	char *keep = mprot ? mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) : NULL;
	long warm = warmup_iters(b.iters), i, err = 0;
	budget_warm(&b);
	for (i = -warm; !err; i++) {
		if (i < 0 && !warm_more(&b, i + warm, warm))
			i = 0;
		if (i == 0) {
			irq_read(s0);
			budget_start(&b);
		}
		if (i >= 0 && !budget_more(&b, i))
			break;
		char *p = keep;
		if (mprot)
			err = mprotect(p, len, PROT_READ | PROT_WRITE);
		else if ((p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)) == MAP_FAILED)
			err = -1;
		if (err)
			break;
		p[0] = 1;
		if (sp)
			spinners_touch(sp, p);
		uint64_t t0 = ticks();
		err = mprot ? mprotect(p, len, PROT_READ) : munmap(p, len);
		uint64_t t1 = ticks();
		if (sp)
			atomic_store(&sp->page, NULL);
		if (i >= 0)
			hist_add(&h, ticks_span_ns(t0, t1));
	}
	irq_read(s1);
	if (keep)
		munmap(keep, len);
	unpin_self();
	spinners_stop(sp);
	struct rec *r = NULL;
	if (!err) {
		r = krec(k, kase, &h, i, rep);
		rec_param_i(r, "other_threads", nothers);
		rec_param_s(r, "op", mprot ? "mprotect(RW -> R), 1 page" : "munmap, 1 page");
		irq_record(r, s0, s1, "sender", k->a, i);
		irq_record(r, s0, s1, "target", k->b, i);
	} else {
		skip(kase, strerror(errno));
	}
	free(s0);
	free(s1);
	hist_free(&h);
	return r;
}

int probe_tlb(struct kctx *k)
{
	int oth[CPU_SETSIZE], no = others(k, oth);
	for (int rep = 0; rep < k->o.repeat; rep++)
		for (int mp = 0; mp < 2; mp++)
			for (int w = 0; w < 3; w++) {
				int n = w == 0 ? 0 : w == 1 ? 1 : no;
				char kase[64];
				snprintf(kase, sizeof(kase), "tlb/%s-%s", mp ? "mprotect" : "munmap",
					 w == 0 ? "0" : w == 1 ? "1" : "all");
				if (n > no) {
					skip(kase, cli_too_few_cpus(&k->o, 2));
					continue;
				}
				progress("kernel tlb: %s, repeat %d", kase, rep);
				if (plan_late())
					rec_skipped("kernel", kase, PLAN_LATE_WHY, rep);
				else
					tlb_case(k, mp, n, kase, rep);
			}
	return 0;
}

/* ---- compare ---- */

/*
 * A libxcall waiting call from k->a to k->b. With @gap the caller first waits
 * (untimed) until the target worker has gone to sleep since its last call,
 * then 20 us more, so that a "sleeping" call really meets a sleeping worker.
 */
static void compare_xcall(struct kctx *k, const char *kase, long poll, bool gap, int rep)
{
	char pair[32];
	snprintf(pair, sizeof(pair), "%d,%d", k->a, k->b);
	progress("kernel %s, repeat %d", kase, rep);
	if (plan_late()) {
		rec_skipped("kernel", kase, PLAN_LATE_WHY, rep);
		return;
	}
	if (xh_up(&k->o, pair, poll, 0))
		return;
	struct budget b;
	budget_init(&b, &k->o, desc.default_iters);
	struct hist h;
	hist_init(&h);
	struct irq_snap *s0 = malloc(sizeof(*s0)), *s1 = malloc(sizeof(*s1));
	struct xh_timed x = {.gap = gap, .gap_ns = 20000};
	struct xh_timed_out d;
	irq_read(s0);
	if (!gap)
		b.batch = PAIR_SPAN;    /* back to back: batch-timed as the kernel IPI row */
	long n = xh_time_calls_x(k->a, k->b, XC_WAIT, &b, &h, &x, &d);
	irq_read(s1);
	xh_down();
	if (n >= 0) {
		struct rec *r = krec(k, kase, &h, n, rep);
		char pb[32];
		rec_param_s(r, "poll", poll_name(poll, pb, sizeof(pb)));
		/* the interrupt counts span warm-up and timed calls alike */
		long ops = n + warmup_iters(b.iters);
		irq_record(r, s0, s1, "sender", k->a, ops);
		irq_record(r, s0, s1, "target", k->b, ops);
		rec_xc_counters(r, &d.delta);
		rec_param_i(r, "idle_gap", gap);
		if (gap)
			rec_counter(r, "gap_timeouts", d.gap_timeouts);
	}
	free(s0);
	free(s1);
	hist_free(&h);
}

int probe_compare(struct kctx *k)
{
	if (k->o.ncpus < 2) {
		skip("compare", cli_too_few_cpus(&k->o, 2));
		return 0;
	}
	for (int rep = 0; rep < k->o.repeat; rep++) {
		progress("kernel compare: kernel-ipi, repeat %d", rep);
		struct rec *ki = NULL;
		if (plan_late())
			rec_skipped("kernel", "compare/kernel-ipi", PLAN_LATE_WHY, rep);
		else if (k->membarrier_rseq_ok)
			ki = ipi_measure(k, K_NORMAL, "compare/kernel-ipi", rep);
		else
			skip("compare/kernel-ipi", k->membarrier_why);
		wakeup_case(k, "compare/kernel-wakeup", k->gap_short_us, false, rep);
		compare_xcall(k, "compare/libxcall-polling", XC_POLL_FOREVER, false, rep);
		compare_xcall(k, "compare/libxcall-sleeping", XC_POLL_NONE, true, rep);
		/* no ratio to an IPI that was not sent (ipi_doubt) */
		if (ki && rec_param_str(ki, "no_ipi"))
			ki = NULL;
		for (struct rec *r = rec_first(); r && ki; r = r->next)
			if (!strncmp(r->kase, "compare/", 8) && r->repeat == rep && r->s.n && ki->s.p50 > 0)
				rec_param_d(r, "ratio_to_kernel_ipi", r->s.p50 / ki->s.p50);
	}
	return 0;
}

/* ---- the subcommand ---- */

static const struct {
	const char *name;
	int (*fn)(struct kctx *k);
	bool by_default;
	int cases;              /* per repeat, for the plan; -1: counted at run time */
} probes[] = {
	{"ipi", probe_ipi, true, K_NMODES},     {"wakeup", probe_wakeup, true, 3},
	{"tlb", probe_tlb, true, 6},            {"compare", probe_compare, true, 4},
	{"idlestates", probe_idlestates, false, -1}, {"hotplug", probe_hotplug, false, -1},
};
#define NPROBES (sizeof(probes) / sizeof(probes[0]))

static void print_table(const struct kctx *k, struct rec *from)
{
	printf("\nkernel: sender CPU %d, target CPU %d; interrupts per operation from /proc/interrupts\n",
	       k->a, k->b);
	printf("%-30s %4s %8s %10s %10s %8s %8s %8s %8s %8s %7s\n", "case", "rep", "n", "p50", "p99",
	       "CAL/op", "CAL/op", "RES/op", "RES/op", "TLB/op", "ratio");
	printf("%-30s %4s %8s %10s %10s %8s %8s %8s %8s %8s %7s\n", "", "", "", "", "", "sender",
	       "target", "sender", "target", "target", "to IPI");
	for (struct rec *r = from; r; r = r->next) {
		if (strcmp(r->bench, "kernel"))
			continue;
		if (!r->s.n) {
			printf("%-30s %4d  skipped\n", r->kase, r->repeat);
			continue;
		}
		char b[2][32], c[6][40];
		const char *keys[] = {"CAL_per_op_sender", "CAL_per_op_target", "RES_per_op_sender",
				      "RES_per_op_target", "TLB_per_op_target", "ratio_to_kernel_ipi"};
		for (int i = 0; i < 6; i++) {
			double v = rec_param_get(r, keys[i], -1);
			if (v < 0)
				snprintf(c[i], sizeof(c[i]), "-");
			else if (i == 5)
				fmt_ratio(c[i], sizeof(c[i]), "%.2fx", v, r,
					  rec_find("kernel", "compare/kernel-ipi", r->repeat));
			else
				snprintf(c[i], sizeof(c[i]), "%.2f", v);
		}
		bool ns = !strcmp(r->unit, "ns");
		if (!ns) {
			snprintf(b[0], 32, "%.3g %s", r->s.p50, r->unit);
			snprintf(b[1], 32, "%.3g %s", r->s.p99, r->unit);
		}
		printf("%-30s %4d %8llu %10s %10s %8s %8s %8s %8s %8s %7s\n", r->kase, r->repeat,
		       (unsigned long long)r->s.n, ns ? fmt_ns(r->s.p50, b[0], 32) : b[0],
		       ns ? fmt_ns(r->s.p99, b[1], 32) : b[1], c[0], c[1], c[2], c[3], c[4], c[5]);
	}
	char why[320];
	for (struct rec *r = from; r; r = r->next)
		if (!strcmp(r->bench, "kernel") && rec_param_str(r, "no_ipi"))
			printf("note: %s, repeat %d, is not an IPI's cost: %s\n", r->kase, r->repeat,
			       ipi_doubt(r, true, why, sizeof(why)));
	struct irq_snap s;
	if (!irq_read(&s))
		for (int row = 0; row < IRQ_NROWS; row++)
			if (!s.has[row])
				printf("note: /proc/interrupts has no %s row on this machine; its columns are blank\n",
				       irq_row_name[row]);
}

int cmd_kernel(int argc, char **argv)
{
	struct kctx *k = calloc(1, sizeof(*k));
	k->gap_short_us = 20;
	k->gap_long_us = 1000;
	int first = cli_parse(&desc, argc, argv, &k->o, k);
	bool want[NPROBES] = {0}, any = false;
	for (int i = first; i < argc; i++) {
		size_t p;
		for (p = 0; p < NPROBES; p++)
			if (!strcmp(argv[i], probes[p].name))
				break;
		if (p == NPROBES)
			cli_fail(desc.name, "unknown probe '%s' (ipi, wakeup, tlb, compare, idlestates, hotplug)",
				 argv[i]);
		want[p] = any = true;
	}
	if (k->restore) {
		if (geteuid() != 0)
			cli_fail(desc.name, "--restore needs root (it writes sysfs)");
		int err = journal_restore(true);
		if (!any)
			return err ? 1 : 0;
	}
	if (!any)
		for (size_t p = 0; p < NPROBES; p++)
			want[p] = probes[p].by_default;
	k->a = k->o.cpu[0];
	k->b = k->o.ncpus > 1 ? k->o.cpu[1] : k->o.cpu[0];
	membarrier_setup(k);
	struct irq_snap probe;
	if (irq_read(&probe))
		fprintf(stderr, "xcall-bench kernel: /proc/interrupts unreadable: no interrupt counts\n");
	for (size_t p = 0; p < NPROBES; p++) {
		if (!want[p])
			continue;
		if (probes[p].fn == probe_hotplug)     /* an offline and an online, seconds at worst */
			plan_cases(k->o.repeat * (k->o.iterations ? k->o.iterations : 5), 10);
		else if (probes[p].fn == probe_idlestates)
			plan_cases(k->o.repeat * (idle_states_writable(k->b) + 1L), plan_case_s(&k->o));
		else
			plan_cases((long)k->o.repeat * probes[p].cases,
				   plan_case_s(&k->o) + plan_start_cost(2));
	}
	plan_start(NULL);
	struct rec *mark = rec_last();
	int rc = 0;
	for (size_t p = 0; p < NPROBES; p++)
		if (want[p] && probes[p].fn(k))
			rc = 1;
	struct rec *from = mark ? mark->next : rec_first();
	if (!g_out.quiet && !g_out.csv)
		print_table(k, from);
	else if (g_out.csv)
		out_csv(stdout, from);
	free(k);
	return rc;
}
