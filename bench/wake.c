/* SPDX-License-Identifier: MIT */
/*
 * wake.c - `xcall-bench wake`: every way Linux lets a thread wake a thread on
 * another CPU (wake_mech.c), each with the sleeper in three states:
 *
 *   hot     woken back to back: it goes straight back to sleep and is woken
 *           again as soon as its reply arrives;
 *   parked  the waker sleeps a gap first, long enough for the sleeper's CPU
 *           to reach its deepest idle state (the gap is printed, with the
 *           cpuidle states);
 *   busy    another thread of ours spins on the sleeper's CPU, so the wake
 *           has to preempt it (a short gap first, so that it runs).
 *
 * Each cell times every wake alone: the wake latency (the waker's call until
 * the sleeper's thread runs, read from the TSC on both CPUs) and the round
 * trip (until the sleeper's reply, through the same mechanism, reached the
 * waker). Wakes take microseconds, so the timer's 10-35 ns are noise except
 * in the spin and polling rows, whose records say so. Per wake: CPU time of
 * each side (its thread's CPU clock: the sleeper's over the whole run, in
 * which it does nothing else; the waker's around each wake when it sleeps a
 * gap between them), syscalls made by each side, and CAL, RES and TLB
 * interrupts of each CPU from /proc/interrupts.
 */
#include "wake_mech.h"
#include "kernel.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *const state_name[WS_NSTATES] = {"hot", "parked", "busy"};

enum { O_MECHS = 1, O_STATES, O_GAP, O_BUSY_GAP };

static const struct cmd_opt wake_opts[] = {
	{"mechs", required_argument, O_MECHS, "LIST   only these mechanisms (default: all; see below)"},
	{"states", required_argument, O_STATES, "LIST  only these sleeper states: hot,parked,busy (default: all)"},
	{"gap-us", required_argument, O_GAP, "US    parked: idle gap before each wake (default: 4x the deepest\n"
	 "                  cpuidle state's target residency, at least 1000)"},
	{"busy-gap-us", required_argument, O_BUSY_GAP, "US busy: gap before each wake, the waker sleeping (default 50)"},
	{0},
};

struct wake_args {
	bool mech[32], state[WS_NSTATES];
	bool any_mech, any_state;
	long gap_us, busy_gap_us;
};

static int on_opt(int id, const char *arg, void *ctx);

static const struct cmd_desc desc = {
	.name = "wake",
	.summary = "every way to wake a thread on another CPU: hot, parked, busy; IPIs per wake",
	.opts = wake_opts,
	.on_opt = on_opt,
	.default_iters = 10000,
};

static const char *mech_name(int i)
{
	return wake_mechs[i].name;
}

static const char *state_name_of(int i)
{
	return state_name[i];
}

static int on_opt(int id, const char *arg, void *ctx)
{
	struct wake_args *wa = ctx;

	switch (id) {
	case O_MECHS:
		wa->any_mech = true;
		parse_names(desc.name, "mechs", arg, wake_nmechs, mech_name, wa->mech);
		return 0;
	case O_STATES:
		wa->any_state = true;
		parse_names(desc.name, "states", arg, WS_NSTATES, state_name_of, wa->state);
		return 0;
	case O_GAP:
		return parse_long(arg, 0, 1000000, &wa->gap_us);
	case O_BUSY_GAP:
		return parse_long(arg, 0, 1000000, &wa->busy_gap_us);
	}
	return -1;
}

/* ---- the sleeper's CPU: its idle states, and the gap that reaches the deepest ---- */

static long idle_states_print(int cpu)
{
	long deepest = 0;
	int n = 0;

	for (int i = 0;; i++) {
		char path[128], name[32], lat[32], res[32];

		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cpuidle/state%d/name", cpu, i);
		if (sysfs_read(path, name, sizeof(name)))
			break;
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cpuidle/state%d/latency", cpu, i);
		if (sysfs_read(path, lat, sizeof(lat)))
			lat[0] = 0;
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cpuidle/state%d/residency", cpu, i);
		if (sysfs_read(path, res, sizeof(res)))
			res[0] = 0;
		if (!g_out.quiet)
			fprintf(stderr, "%s cpu %d idle state %d: %s, exit latency %s us, target residency %s us\n",
				n ? "               " : "xcall-bench wake:", cpu, i, name, lat, res);
		if (atol(res) > deepest)
			deepest = atol(res);
		n++;
	}
	if (!n && !g_out.quiet)
		fprintf(stderr, "xcall-bench wake: cpu %d has no cpuidle states (%s): an idle CPU halts\n", cpu,
			machine_get()->idle_driver[0] ? machine_get()->idle_driver : "no cpuidle driver");
	return deepest;
}

/*
 * ---- per-thread CPU time ----
 * Any thread of this process, by its tid: the clock id glibc's
 * pthread_getcpuclockid() makes, ((~tid) << 3) | CPUCLOCK_PERTHREAD | SCHED,
 * which also counts the running slice (schedstat's figure waits for a tick).
 */
static long long thread_cpu_ns(pid_t tid)
{
	struct timespec ts;

	if (tid <= 0 || clock_gettime((clockid_t)((~(unsigned)tid << 3) | 6), &ts))
		return -1;
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long self_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* This thread's voluntary context switches: each a wait that slept. */
static long self_sleeps(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_THREAD, &ru) ? 0 : ru.ru_nvcsw;
}

/* ---- threads: the sleeper, a presence on its CPU, and the busy hog ---- */

struct sleeper_ctl {
	struct wake_run *r;
	_Atomic int ready;              /* 1: set up (or failed, r->err) */
	_Atomic bool hog_stop;
};

static void *sleeper_main(void *arg)
{
	struct sleeper_ctl *c = arg;
	struct wake_run *r = c->r;
	const struct wake_mech *m = r->m;
	int err;

	r->side[1].tid = (pid_t)syscall(SYS_gettid);
	err = m->setup(r, 1);
	if (err)
		r->err = -err;
	/* release: the setup (ring fds, eventfds) before the waker uses it */
	atomic_store_explicit(&c->ready, 1, memory_order_release);
	if (err) {
		m->teardown(r, 1);
		return NULL;
	}
	if (m->loop) {
		m->loop(r);
	} else if (m->presence) {
		/* acquire: pairs with the driver's stop */
		while (!atomic_load_explicit(&r->stop, memory_order_acquire))
			cpu_relax();
	} else {
		for (long k = 0;;) {
			m->wait(r, 1);
			uint64_t t = ticks();
			/* acquire: the stop is stored before the last wake */
			if (atomic_load_explicit(&r->stop, memory_order_acquire) || r->err)
				break;
			/* relaxed: the wake just seen (a release/acquire pair or a syscall) orders it */
			k += atomic_load_explicit(&r->timed, memory_order_relaxed);
			if (r->stall_after && k > r->stall_after) {
				/* the test's stalled sleeper: no answer, until the teardown's stop */
				struct timespec ms = {0, 1000000};
				while (!atomic_load_explicit(&r->stop, memory_order_acquire))
					nanosleep(&ms, NULL);
				break;
			}
			/* relaxed: the reply's own ordering publishes it */
			atomic_store_explicit(&r->woke_at, t, memory_order_relaxed);
			m->wake(r, 0);
		}
		if (r->err)
			m->wake(r, 0);  /* let a waiting waker see the error */
	}
	m->teardown(r, 1);
	return NULL;
}

static void *hog_main(void *arg)
{
	struct sleeper_ctl *c = arg;

	/* relaxed: only a flag to stop on */
	while (!atomic_load_explicit(&c->hog_stop, memory_order_relaxed))
		cpu_relax();
	return NULL;
}

/* ---- one cell ---- */

/*
 * The watchdog's rescue of a wake still unanswered past the case's end and
 * its grace: the answer the sleeper would have sent, from outside (every
 * mechanism's wake(r, 0) but a MSG_RING's may come from a third thread).
 */
static void rescue_waker(void *arg)
{
	struct wake_run *r = arg;

	r->m->wake(r, 0);
}

struct cell_out {
	long n;
	long long cpu_ns[2];            /* per side over the timed part, -1 unknown */
	long syscalls[2];
	long interrupted[2];	/* of them, made again after EINTR */
	struct irq_snap s0, s1;
	bool irq_ok;
	/* libxcall rows: the target CPU's counters, and the waker's waits that slept */
	bool has_target;
	struct xc_stats target;
	long waker_sleeps;
	bool abandoned;         /* a wake given up past the end (budget_rescue_arm) */
};

static long cell_run(struct wake_run *r, int state, long gap_us, long busy_gap_us, struct budget *b,
		     struct hist *h_rt, struct hist *h_wake, struct cell_out *out)
{
	const struct wake_mech *m = r->m;
	struct sleeper_ctl ctl = {.r = r};
	pthread_t sleeper, hog;
	bool have_sleeper = !m->synchronous || m->presence || m->loop, have_hog = state == WS_BUSY;
	bool rescue = !m->synchronous && !m->no_rescue;
	long long cpu0[2] = {-1, -1};
	long sys0[2] = {0, 0}, intr0[2] = {0, 0};
	long long waker_cpu = 0;        /* parked and busy: summed over the wakes alone */
	long waker_sleeps = 0, sleeps0 = 0;     /* counts() rows: the waker's waits that slept, as its CPU time */
	long i = 0, warm;
	int err;

	uint64_t t_setup = now_ns();
	if (pin_self(r->side[0].cpu))
		return -1;
	r->side[0].tid = (pid_t)syscall(SYS_gettid);
	if (have_hog && thread_start_pinned(&hog, r->side[1].cpu, hog_main, &ctl)) {
		unpin_self();
		return -1;
	}
	err = m->setup(r, 0);
	if (err) {
		r->err = -err;
		goto out_teardown;      /* every teardown takes a half-made setup */
	}
	if (have_sleeper) {
		if (thread_start_pinned(&sleeper, r->side[1].cpu, sleeper_main, &ctl)) {
			r->err = EAGAIN;
			have_sleeper = false;
			goto out_teardown;
		}
		/* acquire: the sleeper's setup */
		while (!atomic_load_explicit(&ctl.ready, memory_order_acquire))
			sched_yield();
		if (r->err)
			goto out_teardown;
	}
	plan_uncut((double)(now_ns() - t_setup) / 1e9);        /* threads' start and setup */
	warm = state == WS_HOT ? warmup_iters(b->iters) : 3;
	budget_warm(b);
	if (rescue)
		budget_rescue_arm(b, rescue_waker, r);
	for (i = -warm;; i++) {
		if (i < 0 && !warm_more(b, i + warm, warm))
			i = 0;
		if (i == 0) {
			out->irq_ok = !irq_read(&out->s0);
			for (int s = 0; s < 2; s++) {
				cpu0[s] = thread_cpu_ns(r->side[s].tid);
				sys0[s] = atomic_load_explicit(&r->side[s].syscalls, memory_order_relaxed);
				intr0[s] = atomic_load_explicit(&r->side[s].interrupted, memory_order_relaxed);
			}
			if (m->counts) {
				m->counts(r, true);
				sleeps0 = self_sleeps();
			}
			budget_start(b);
			if (rescue)
				budget_rescue_arm(b, rescue_waker, r);
			/* relaxed: the wake that follows orders it for the sleeper (stall_after) */
			atomic_store_explicit(&r->timed, true, memory_order_relaxed);
		}
		if (i >= 0 && !budget_more(b, i))
			break;
		long long c0 = 0;
		long v0 = 0;
		if (state != WS_HOT) {
			long g = state == WS_PARKED ? gap_us : busy_gap_us;
			/* a gap past the loop's end is not slept (but before the first timed wake) */
			if (i && !budget_gap_fits(b, (uint64_t)g * 1000)) {
				if (i < 0) {
					i = -1;         /* the warm-up had its time: on to the timed loop */
					continue;
				}
				budget_stopped(b);
				break;
			}
			struct timespec ts = {g / 1000000, (g % 1000000) * 1000};
			clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
			if (m->counts && i >= 0)
				v0 = self_sleeps();     /* the waker's waits: in its wakes, not its gaps */
			c0 = self_cpu_ns();     /* the waker's CPU time: its wakes, not its gaps */
		}
		uint64_t t0 = ticks();
		m->wake(r, 1);
		if (!m->synchronous)
			m->wait(r, 0);
		uint64_t t1 = ticks();
		if (r->err)
			break;
		if (rescue && budget_rescued()) {
			/* given up 1 s past the end: no sample, and the case is capped */
			out->abandoned = true;
			plan_capped();
			break;
		}
		if (i < 0)
			continue;
		if (state != WS_HOT) {
			waker_cpu += self_cpu_ns() - c0;
			if (m->counts)
				waker_sleeps += self_sleeps() - v0;
		}
		hist_add(h_rt, ticks_span_ns(t0, t1));
		if (!m->no_wake_time) {
			/* relaxed: ordered by the reply (or the call's completion) we just saw */
			uint64_t w = atomic_load_explicit(&r->woke_at, memory_order_relaxed);
			hist_add(h_wake, ticks_to_ns(w > t0 ? w - t0 : 0));
		}
	}
	if (m->counts && state == WS_HOT)
		waker_sleeps = self_sleeps() - sleeps0; /* no gaps: the whole timed part */
	if (out->irq_ok)
		out->irq_ok = !irq_read(&out->s1);
	if (m->counts) {
		r->waker_sleeps = waker_sleeps;
		m->counts(r, false);
		out->has_target = r->has_target;
		out->target = r->target;
		out->waker_sleeps = waker_sleeps;
	}
	for (int s = 0; s < 2; s++) {
		long long c1 = thread_cpu_ns(r->side[s].tid);
		out->cpu_ns[s] = cpu0[s] >= 0 && c1 >= 0 ? c1 - cpu0[s] : -1;
		if (s == 0 && state != WS_HOT)
			out->cpu_ns[s] = waker_cpu;
		/* relaxed: see wake_side */
		out->syscalls[s] = m->counts ? r->counted[s] :
				   atomic_load_explicit(&r->side[s].syscalls, memory_order_relaxed) - sys0[s];
		out->interrupted[s] = m->counts ? 0 :
				      atomic_load_explicit(&r->side[s].interrupted, memory_order_relaxed) - intr0[s];
	}
out_teardown:
	/* no rescue from here on: the channels go away below */
	if (rescue)
		budget_rescue_disarm();
	t_setup = now_ns();
	/* the hog first: a sleeper that shares its CPU ends sooner without it */
	if (have_hog)
		atomic_store_explicit(&ctl.hog_stop, true, memory_order_relaxed);
	if (have_sleeper) {
		/* release: the sleeper sees it after the last wake below */
		atomic_store_explicit(&r->stop, true, memory_order_release);
		if (!m->presence)
			m->wake(r, 1);  /* after an error too: the sleeper may be waiting */
		pthread_join(sleeper, NULL);
	}
	m->teardown(r, 0);
	if (have_hog)
		pthread_join(hog, NULL);
	unpin_self();
	plan_uncut((double)(now_ns() - t_setup) / 1e9);        /* the threads' stop and teardown */
	out->n = i > 0 ? i : 0;
	return r->err ? -r->err : out->n;
}

/* ---- records ---- */

static void cell_records(const struct wake_mech *m, int state, int rep, const int *cl, long gap,
			 const struct hist *h_rt, const struct hist *h_wake, const struct cell_out *o)
{
	char kase[64];

	snprintf(kase, sizeof(kase), "%s/%s", m->name, state_name[state]);
	struct rec *r = rec_new("wake", kase, "ns", "lower", rep);
	rec_hist(r, h_rt);
	rec_cpu_list(r, cl, 2);
	rec_param_s(r, "mechanism", m->name);
	rec_param_s(r, "state", state_name[state]);
	rec_param_s(r, "sleeper", m->what);
	rec_param_s(r, "measure", "round trip: a wake there and one back, the same way");
	rec_param_i(r, "iterations", o->n);
	if (o->abandoned)       /* its last wake given up: capped, and this says why */
		rec_param_b(r, "abandoned", true);
	rec_param_i(r, "gap_us", gap);
	rec_param_s(r, "timing", "each wake timed alone; the timer's floor removed");
	for (int s = 0; s < 2; s++) {
		char key[32];
		const char *who = s ? "sleeper" : "waker";

		snprintf(key, sizeof(key), "cpu_ns_per_wake_%s", who);
		rec_param_d(r, key, o->cpu_ns[s] >= 0 && o->n ? (double)o->cpu_ns[s] / (double)o->n : -1);
		snprintf(key, sizeof(key), "syscalls_per_wake_%s", who);
		rec_param_d(r, key, o->n ? (double)o->syscalls[s] / (double)o->n : 0);
		/* a signal (another process's, a debugger's) can interrupt a blocking wait: not the mechanism's */
		snprintf(key, sizeof(key), "syscalls_interrupted_%s", who);
		rec_param_i(r, key, o->interrupted[s]);
	}
	if (o->has_target && o->n) {
		/* libxcall rows: what the target CPU's counters say of each call, a round trip */
		const struct { const char *key; uint64_t v; } per[] = {
			{"kicks_sent_per_call", o->target.kicks_sent},
			{"kicks_elided_per_call", o->target.kicks_elided},
			{"sleeps_per_call", o->target.sleeps},
			{"wakeups_per_call", o->target.wakeups},
		};
		for (size_t k = 0; k < sizeof(per) / sizeof(per[0]); k++)
			rec_param_d(r, per[k].key, (double)per[k].v / (double)o->n);
		rec_param_d(r, "waker_sleeps_per_call", (double)o->waker_sleeps / (double)o->n);
		rec_xc_target_counters(r, &o->target);
	}
	if (o->irq_ok) {
		irq_record(r, &o->s0, &o->s1, "waker", cl[0], o->n);
		irq_record(r, &o->s0, &o->s1, "sleeper", cl[1], o->n);
	}
	if (m->no_wake_time)
		return;
	snprintf(kase, sizeof(kase), "%s/%s/wake", m->name, state_name[state]);
	r = rec_new("wake", kase, "ns", "lower", rep);
	rec_hist(r, h_wake);
	rec_cpu_list(r, cl, 2);
	rec_param_s(r, "mechanism", m->name);
	rec_param_s(r, "state", state_name[state]);
	rec_param_s(r, "measure", "wake latency: the waker's call until the sleeper's thread runs");
	rec_param_i(r, "iterations", o->n);
}

/* ---- the table ---- */

static void print_table(struct rec *from)
{
	printf("\nwake: one waker, one sleeper on another CPU; per wake (p50 / p99 in ns; CPU time\n"
	       "and syscalls: waker / sleeper; kicks: libxcall's kicks sent per call; CAL and RES:\n"
	       "interrupts on the sleeper's CPU)\n");
	printf("%-23s %-6s %7s %9s %9s %9s %9s %13s %11s %5s %6s %6s\n", "mechanism", "state", "n",
	       "wake p50", "wake p99", "rt p50", "rt p99", "cpu ns w/s", "sys w/s", "kicks", "CAL", "RES");
	for (struct rec *r = from; r; r = r->next) {
		if (strcmp(r->bench, "wake") || strstr(r->kase, "/wake"))
			continue;
		char mech[32] = "", st[16] = "";
		const char *slash = strchr(r->kase, '/');
		snprintf(mech, sizeof(mech), "%.*s", slash ? (int)(slash - r->kase) : (int)strlen(r->kase),
			 r->kase);
		if (slash)
			snprintf(st, sizeof(st), "%s", slash + 1);
		if (!r->s.n) {
			const char *why = rec_param_str(r, "skipped");
			printf("%-23s %-6s   absent: %s\n", mech, st[0] ? st : "-", why ? why : "?");
			continue;
		}
		char kw[80], b[4][32], cpu[32], sys[32], kicks[16] = "-", cal[16], res[16];
		snprintf(kw, sizeof(kw), "%s/wake", r->kase);
		const struct rec *w = rec_find("wake", kw, r->repeat);
		double cw = rec_param_get(r, "cpu_ns_per_wake_waker", -1),
		       cs = rec_param_get(r, "cpu_ns_per_wake_sleeper", -1);
		snprintf(cpu, sizeof(cpu), "%.0f / %.0f", cw, cs);
		snprintf(sys, sizeof(sys), "%.2f / %.2f", rec_param_get(r, "syscalls_per_wake_waker", 0),
			 rec_param_get(r, "syscalls_per_wake_sleeper", 0));
		if (rec_param_get(r, "kicks_sent_per_call", -1) >= 0)
			snprintf(kicks, sizeof(kicks), "%.2f", rec_param_get(r, "kicks_sent_per_call", -1));
		snprintf(cal, sizeof(cal), "%.2f", rec_param_get(r, "CAL_per_op_sleeper", -1));
		snprintf(res, sizeof(res), "%.2f", rec_param_get(r, "RES_per_op_sleeper", -1));
		printf("%-23s %-6s %7llu %9s %9s %9s %9s %13s %11s %5s %6s %6s\n", mech, st,
		       (unsigned long long)r->s.n, w ? fmt_ns(w->s.p50, b[0], 32) : "-",
		       w ? fmt_ns(w->s.p99, b[1], 32) : "-", fmt_ns(r->s.p50, b[2], 32),
		       fmt_ns(r->s.p99, b[3], 32), cpu, sys, kicks, cal, res);
	}
}

int cmd_wake(int argc, char **argv)
{
	struct bopts o;
	struct wake_args wa = {.gap_us = -1, .busy_gap_us = 50};

	cli_parse(&desc, argc, argv, &o, &wa);
	if (o.ncpus < 2)
		cli_fail(desc.name, "%s", cli_too_few_cpus(&o, 2));
	int cl[2] = {o.cpu[0], o.cpu[1]};
	/* registered before any thread of this run starts */
	wake_membarrier_setup();
	long deepest = idle_states_print(cl[1]);
	long gap = wa.gap_us >= 0 ? wa.gap_us : (4 * deepest > 1000 ? 4 * deepest : 1000);
	if (gap > 1000000)
		gap = 1000000;
	/* a test's: a sleeper that stops answering (wake_run.stall_after) */
	const char *stall = getenv("XCALL_BENCH_WAKE_STALL");
	long stall_after = 0;
	if (stall && parse_long(stall, 0, LONG_MAX, &stall_after))
		cli_fail(desc.name, "bad XCALL_BENCH_WAKE_STALL '%s': expected a count of wakes", stall);

	long cells = 0;
	for (int i = 0; i < wake_nmechs; i++)
		if (!wa.any_mech || wa.mech[i])
			for (int s = 0; s < WS_NSTATES; s++)
				cells += !wa.any_state || wa.state[s];
	/* each cell: its case limit, a libxcall runtime or two threads to start */
	plan_cases(cells * o.repeat, plan_case_s(&o) + plan_start_cost(1));
	plan_start(NULL);
	struct rec *mark = rec_last();
	struct hist h_rt, h_wake;
	if (hist_init(&h_rt) || hist_init(&h_wake))
		return 1;
	int rc = 0;

	for (int rep = 0; rep < o.repeat; rep++) {
		for (int i = 0; i < wake_nmechs; i++) {
			const struct wake_mech *m = &wake_mechs[i];
			const char *why = m->absent ? m->absent() : NULL;
			int nstates = 0;

			if (wa.any_mech && !wa.mech[i])
				continue;
			for (int s = 0; s < WS_NSTATES; s++)
				nstates += !wa.any_state || wa.state[s];
			if (why) {
				rec_skipped("wake", m->name, why, rep);
				for (int s = 0; s < nstates; s++)
					plan_skip();
				continue;
			}
			for (int s = 0; s < WS_NSTATES; s++) {
				char kase[64];
				if (wa.any_state && !wa.state[s])
					continue;
				snprintf(kase, sizeof(kase), "%s/%s", m->name, state_name[s]);
				if (m->no_state[s]) {
					rec_skipped("wake", kase, m->no_state[s], rep);
					plan_skip();
					continue;
				}
				struct wake_run *r = aligned_alloc(CACHELINE, (sizeof(*r) + CACHELINE - 1) /
									  CACHELINE * CACHELINE);
				struct cell_out *out = calloc(1, sizeof(*out));
				struct budget b;
				if (!r || !out)
					return 1;
				memset(r, 0, sizeof(*r));
				r->m = m;
				r->o = &o;
				r->side[0].cpu = cl[0];
				r->side[1].cpu = cl[1];
				r->stall_after = stall_after;
				budget_init(&b, &o, desc.default_iters);
				if (s != WS_HOT)        /* each wake waits a gap: a fiftieth of the count */
					b.iters = b.iters / 50 > 20 ? b.iters / 50 : 20;
				hist_reset(&h_rt);
				hist_reset(&h_wake);
				progress("wake: %s, cpus %d,%d, repeat %d", kase, cl[0], cl[1], rep);
				bool late = plan_late();
				long n = late ? 0 : cell_run(r, s, gap, wa.busy_gap_us, &b, &h_rt, &h_wake, out);
				if (late) {
					rec_skipped("wake", kase, PLAN_LATE_WHY, rep);
				} else if (n < 0) {
					char w[128];
					snprintf(w, sizeof(w), "failed: %s", strerror((int)-n));
					rec_skipped("wake", kase, w, rep);
					rc = 1;
				} else if (out->abandoned && !n) {
					rec_skipped("wake", kase, "abandoned: a wake still unanswered 1 s past "
						    "the case's end, before any was timed", rep);
				} else {
					cell_records(m, s, rep, cl, s == WS_PARKED ? gap : s == WS_BUSY ?
						     wa.busy_gap_us : 0, &h_rt, &h_wake, out);
				}
				free(out);
				free(r);
			}
		}
	}
	hist_free(&h_rt);
	hist_free(&h_wake);
	struct rec *from = mark ? mark->next : rec_first();
	if (g_out.csv)
		out_csv(stdout, from);
	else if (!g_out.quiet)
		print_table(from);
	return rc;
}
