// SPDX-License-Identifier: MIT
/*
 * stuck.c - stuck-call reports, after the kernel's CSD_LOCK_WAIT_DEBUG: a
 * caller that has waited longer than stuck_ms says, in one line, who waits,
 * on which CPU, for which function, and what that CPU is running now. It
 * repeats with doubling intervals while the call stays stuck, and says when
 * it got unstuck and after how long.
 *
 * Cost while nothing is stuck: the waiter takes its start time only once
 * its short clock-free spin is over, and each worker notes what it runs
 * (function, kind, a sequence number) in its own cache line, with no clock
 * read on a call's path (internal.h). How long a call has been running is
 * then bounded by the waiter: the target's sequence number unchanged since
 * the watch started (or since the last report) means the same activity has
 * run at least that long. Work items carry their start time.
 */
#include "internal.h"
#include "kick.h"
#include "wait.h"
#include "stuck.h"

#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

uint64_t xc_coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int described(const struct xc_waitinfo *wi)
{
	return wi->ncpus < XC_STUCK_DESCRIBE ? wi->ncpus : XC_STUCK_DESCRIBE;
}

/* When the next report is due (0: reports are off); starts the watch. */
uint64_t xc_stuck_deadline(struct xc_stuck *st)
{
	if (xc_rt.cfg.stuck_ms <= 0)
		return 0;
	if (!st->start_ns) {
		st->start_ns = xc_now_ns();
		st->interval_ns = (uint64_t)xc_rt.cfg.stuck_ms * 1000000u;
		st->next_ns = st->start_ns + st->interval_ns;
		for (int i = 0; i < described(st->wi); i++) {
			/* relaxed: a diagnostic snapshot */
			st->seen[i].seq = atomic_load_explicit(&xc_cpus[st->wi->cpus[i]].cur_seq,
							       memory_order_relaxed);
			st->seen[i].ns = st->start_ns;
		}
	}
	return st->next_ns;
}

static void describe_caller(char *buf, size_t n)
{
	if (xc_self)
		snprintf(buf, n, "CPU %d", xc_self->cpu);
	else
		snprintf(buf, n, "thread %ld", (long)syscall(SYS_gettid));
}

/* What @cpu runs now; @seen is updated when its activity changed since the last look. */
static void describe_cpu(int cpu, struct xc_stuck_seen *seen, char *buf, size_t n)
{
	struct xc_cpu *c = &xc_cpus[cpu];
	/* relaxed: a diagnostic snapshot */
	int kind = atomic_load_explicit(&c->cur_kind, memory_order_relaxed);
	const void *fn = atomic_load_explicit(&c->cur_fn, memory_order_relaxed);
	uint64_t since = atomic_load_explicit(&c->cur_since_ns, memory_order_relaxed);
	uint32_t seq = atomic_load_explicit(&c->cur_seq, memory_order_relaxed);
	uint64_t now = xc_now_ns();
	bool same = seen->seq == seq;
	char name[96], age[48] = "";

	if (!same) {
		seen->seq = seq;	/* a new activity: from now on it is watched */
		seen->ns = now;
	}
	if (!atomic_load_explicit(&c->online, memory_order_relaxed)) {
		snprintf(buf, n, "CPU %d is offline", cpu);
		return;
	}
	if (kind != XC_ACT_NONE) {
		/* a work item's stamp is the coarse clock's: it may read up to a tick behind */
		uint64_t cnow = xc_coarse_ns();

		if (since)
			snprintf(age, sizeof(age), " for %llu ms",
				 (unsigned long long)(cnow > since ? (cnow - since) / 1000000u : 0));
		else if (same)
			snprintf(age, sizeof(age), " for at least %llu ms",
				 (unsigned long long)((now - seen->ns) / 1000000u));
		snprintf(buf, n, "CPU %d is running %s %s%s", cpu,
			 kind == XC_ACT_WORK ? "work item" : kind == XC_ACT_URGENT ? "urgent call" : "call",
			 xc_symbol(fn, name, sizeof(name)), age);
		return;
	}
	switch (atomic_load_explicit(&c->idle, memory_order_relaxed)) {
	case XC_IDLE_POLLING:
		snprintf(buf, n, "CPU %d is idle, polling", cpu);
		break;
	case XC_IDLE_RUNNING:
		if (c->attached)
			snprintf(buf, n, "CPU %d's attached thread is in its own loop, not calling xc_poll()", cpu);
		else
			snprintf(buf, n, "CPU %d is between tasks", cpu);
		break;
	case XC_IDLE_SLEEPING_FD:
		snprintf(buf, n, "CPU %d's attached thread is asleep in its own loop", cpu);
		break;
	default:
		snprintf(buf, n, "CPU %d is idle, asleep", cpu);
		break;
	}
}

/* The targets, and what the first few are doing. */
static void describe_targets(struct xc_stuck *st, char *buf, size_t n)
{
	const struct xc_waitinfo *wi = st->wi;
	size_t used = 0;

	if (wi->ncpus == 1) {
		char what[192];

		describe_cpu(wi->cpus[0], &st->seen[0], what, sizeof(what));
		snprintf(buf, n, "on CPU %d; %s", wi->cpus[0], what);
		return;
	}
	used = (size_t)snprintf(buf, n, "on %d CPUs", wi->ncpus);
	for (int i = 0; i < described(wi) && used < n; i++) {
		char what[192];

		describe_cpu(wi->cpus[i], &st->seen[i], what, sizeof(what));
		used += (size_t)snprintf(buf + used, n - used, "; %s", what);
	}
}

void xc_stuck_check(struct xc_stuck *st)
{
	char caller[48], fn[96], targets[400];
	uint64_t now = xc_now_ns();

	if (!st->start_ns || now < st->next_ns)
		return;
	st->reports++;
	st->interval_ns *= 2;
	st->next_ns = now + st->interval_ns;
	describe_caller(caller, sizeof(caller));
	describe_targets(st, targets, sizeof(targets));
	xc_report("stuck call: %s has waited %llu ms for %s(%p) %s", caller,
		  (unsigned long long)((now - st->start_ns) / 1000000u),
		  xc_symbol((const void *)st->wi->fn, fn, sizeof(fn)), st->wi->arg, targets);
	if (st->wi->ncpus > 0)
		xc_stat_inc_shared(&xc_cpus[st->wi->cpus[0]].stuck_reports);
}

void xc_stuck_end(struct xc_stuck *st)
{
	char caller[48], fn[96];

	if (!st->reports)
		return;
	char where[32];

	describe_caller(caller, sizeof(caller));
	if (st->wi->ncpus == 1)
		snprintf(where, sizeof(where), "CPU %d", st->wi->cpus[0]);
	else
		snprintf(where, sizeof(where), "%d CPUs", st->wi->ncpus);
	xc_report("unstuck call: %s waited %llu ms for %s(%p) on %s (%u report%s)", caller,
		  (unsigned long long)((xc_now_ns() - st->start_ns) / 1000000u),
		  xc_symbol((const void *)st->wi->fn, fn, sizeof(fn)), st->wi->arg, where,
		  st->reports, st->reports == 1 ? "" : "s");
}
