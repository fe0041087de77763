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
 * read on a call's path (internal.h). The slot's call from the idle poll
 * (slot.c) notes only that the slot's call runs, as nothing may delay its
 * completion: the slot names its function. How long a call has been
 * running is then bounded by the waiter: the target's activity sequence
 * (activity_seq) unchanged since the waiter's first look, a quarter of
 * stuck_ms into the wait (or since the last report), means the same
 * activity has run at least that long. Work items carry their start time.
 *
 * What the library noted is what the worker said when it last ran: a
 * worker that the OS does not run (other load on its CPU, a higher
 * scheduling class, a debugger) still reads "idle, polling", and a sender
 * rightly elides its kick, yet nothing runs its queue. So the waiter also
 * asks the OS: at that first look it reads each described target thread's
 * CPU time (its thread CPU-time clock, exact while it runs), and when it
 * reports, a target whose CPU time has not moved since is named as not
 * running, with its thread's state from /proc (runnable: the OS has not
 * scheduled it; stopped; in uninterruptible sleep). Idle targets also say
 * whether calls wait in their queue, which tells which targets of a call
 * to several CPUs still owe it. None of this costs anything before the
 * wait has lasted a quarter of stuck_ms.
 */
#include "base/internal.h"
#include "proto/ring.h"
#include "proto/wake.h"
#include "run/wait.h"
#include "run/stuck.h"
#include "base/thread.h"

#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * What changes whenever @c's worker starts anything: its noted activities
 * and the calls it finished (the slot's call notes none). Relaxed: a
 * diagnostic snapshot.
 */
static uint32_t activity_seq(struct xc_cpu *c)
{
	return atomic_load_explicit(&c->worker.cur_seq, memory_order_relaxed) +
	       (uint32_t)atomic_load_explicit(&c->worker.calls, memory_order_relaxed);
}

static int described(const struct xc_waitinfo *wi)
{
	return wi->ncpus < XC_STUCK_DESCRIBE ? wi->ncpus : XC_STUCK_DESCRIBE;
}

static void describe_caller(char *buf, size_t n)
{
	if (xc_self)
		snprintf(buf, n, "CPU %d", xc_self->life.cpu);
	else
		snprintf(buf, n, "thread %ld", (long)syscall(SYS_gettid));
}

/*
 * Whether @c's thread has not run since the waiter's last look (its CPU time
 * unchanged), and for at least how long (*for_ns); @seen keeps the look.
 */
static bool thread_not_run(struct xc_cpu *c, struct xc_stuck_seen *seen, uint64_t now, uint64_t *for_ns)
{
	uint64_t run;

	if (!xc_thread_run_ns(c->life.tid, &run)) {
		seen->run_ns = 0;
		return false;
	}
	if (seen->run_ns == run) {
		*for_ns = now - seen->run_seen_ns;
		return true;
	}
	seen->run_ns = run;	/* it ran: from now on it is watched */
	seen->run_seen_ns = now;
	return false;
}

/* What @cpu runs now; @seen is updated when its activity changed since the last look. */
static void describe_cpu(int cpu, struct xc_stuck_seen *seen, char *buf, size_t n)
{
	struct xc_cpu *c = &xc_cpus[cpu];
	/* relaxed: a diagnostic snapshot */
	int kind = atomic_load_explicit(&c->worker.cur_kind, memory_order_relaxed);
	const void *fn = atomic_load_explicit(&c->worker.cur_fn, memory_order_relaxed);
	uint64_t since = atomic_load_explicit(&c->worker.cur_since_ns, memory_order_relaxed);
	uint32_t seq = activity_seq(c);
	uint32_t idle = atomic_load_explicit(&c->mbox.idle, memory_order_relaxed);
	uint64_t now = xc_now_ns(), not_run_ns;
	bool same = seen->seq == seq, polls = false;
	char name[96], age[48] = "", what[160], queued[24] = "", other[24];
	const char *who = NULL;	/* NULL: "CPU N is ..."; else "CPU N's <who> is ..." */

	if (!same) {
		seen->seq = seq;	/* a new activity: from now on it is watched */
		seen->ns = now;
	}
	if (!atomic_load_explicit(&c->life.online, memory_order_relaxed)) {
		snprintf(buf, n, "CPU %d is offline", cpu);
		return;
	}
	if (kind == XC_ACT_NONE && atomic_load_explicit(&c->worker.slot_running, memory_order_relaxed)) {
		/* the slot's call from the idle poll, which notes no activity (see above) */
		kind = XC_ACT_CALL;
		fn = (const void *)atomic_load_explicit(&c->mbox.slot.fn, memory_order_relaxed);
		since = 0;
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
		snprintf(what, sizeof(what), "running %s %s%s",
			 kind == XC_ACT_WORK ? "work item" : kind == XC_ACT_URGENT ? "urgent call" : "call",
			 xc_symbol(fn, name, sizeof(name)), age);
	} else if ((since = atomic_load_explicit(&c->worker.barrier_since_ns, memory_order_relaxed))) {
		/* its idle word still says it polls: the kernel runs a barrier on every CPU first */
		snprintf(what, sizeof(what), "idle, in membarrier(2) for %llu ms, running no call until it returns",
			 (unsigned long long)(now > since ? (now - since) / 1000000u : 0));
	} else {
		switch (idle) {
		case XC_IDLE_POLLING:
			snprintf(what, sizeof(what), "idle, polling");
			polls = true;
			break;
		case XC_IDLE_RUNNING:
			if (c->life.attached) {
				who = "attached thread";
				snprintf(what, sizeof(what), "in its own loop, not calling xc_poll()");
			} else {
				snprintf(what, sizeof(what), "between tasks");
				polls = true;
			}
			break;
		case XC_IDLE_SLEEPING_FD:
			who = "attached thread";
			snprintf(what, sizeof(what), "asleep in its own loop");
			break;
		default:
			snprintf(what, sizeof(what), "idle, asleep");
			break;
		}
		/* a snapshot from outside: the worker's own held list is its alone */
		bool q = (atomic_load_explicit(&c->mbox.slot.done.word, memory_order_relaxed) & XC_SLOT_PUBLISHED) ||
			 xc_llist_nonempty(&c->mbox.callq, memory_order_relaxed) ||
			 xc_llist_nonempty(&c->mbox.urgentq, memory_order_relaxed) || xc_rings_queued(c);

		snprintf(queued, sizeof(queued), q ? ", calls queued" : ", nothing queued");
	}
	if (thread_not_run(c, seen, now, &not_run_ns)) {
		const char *why = xc_thread_not_running_why(xc_thread_state(c->life.tid), other, sizeof(other));

		/* asleep in the kernel while the worker's own word says it polls: blocked there */
		if (!why && polls)
			why = "blocked in the kernel";
		/* a call or work item is still what the worker runs: the OS's view follows it */
		if (why && kind != XC_ACT_NONE) {
			snprintf(buf, n, "CPU %d is %s; its thread has not run in the last %llu ms: %s",
				 cpu, what, (unsigned long long)(not_run_ns / 1000000u), why);
			return;
		}
		/* an idle word is what the worker said when it last ran: the OS's view goes first */
		if (why) {
			snprintf(buf, n, "CPU %d's %s has not run in the last %llu ms: %s (last noted: %s%s)",
				 cpu, c->life.attached ? "attached thread" : "worker",
				 (unsigned long long)(not_run_ns / 1000000u), why, what, queued);
			return;
		}
	}
	if (who)
		snprintf(buf, n, "CPU %d's %s is %s%s", cpu, who, what, queued);
	else
		snprintf(buf, n, "CPU %d is %s%s", cpu, what, queued);
}

/* The targets, and what the first few are doing. */
static void describe_targets(struct xc_stuck *st, char *buf, size_t n)
{
	const struct xc_waitinfo *wi = st->wi;
	size_t used = 0;

	if (wi->ncpus == 1) {
		char what[320];

		describe_cpu(wi->cpus[0], &st->seen[0], what, sizeof(what));
		snprintf(buf, n, "on CPU %d; %s", wi->cpus[0], what);
		return;
	}
	used = (size_t)snprintf(buf, n, "on %d CPUs", wi->ncpus);
	for (int i = 0; i < described(wi) && used < n; i++) {
		char what[320];

		describe_cpu(wi->cpus[i], &st->seen[i], what, sizeof(what));
		used += (size_t)snprintf(buf + used, n - used, "; %s", what);
	}
}

void xc_stuck_check(struct xc_stuck *st)
{
	char caller[48], fn[96], targets[1400];
	uint64_t now = xc_now_ns();

	if (!st->start_ns || now < st->next_ns)
		return;
	if (!st->sampled) {
		/* the look at the targets and their threads that the first report compares with */
		for (int i = 0; i < described(st->wi); i++) {
			uint64_t unused;

			st->seen[i].seq = activity_seq(&xc_cpus[st->wi->cpus[i]]);
			st->seen[i].ns = now;
			thread_not_run(&xc_cpus[st->wi->cpus[i]], &st->seen[i], now, &unused);
		}
		st->sampled = true;
		/* a waiter that woke late still looks a while before it reports */
		st->next_ns = st->start_ns + st->interval_ns;
		if (st->next_ns < now + st->interval_ns / 4)
			st->next_ns = now + st->interval_ns / 4;
		return;
	}
	st->reports++;
	st->interval_ns *= 2;
	st->next_ns = now + st->interval_ns;
	describe_caller(caller, sizeof(caller));
	describe_targets(st, targets, sizeof(targets));
	xc_report("stuck call: %s has waited %llu ms for %s(%p) %s", caller,
		  (unsigned long long)((now - st->start_ns) / 1000000u),
		  xc_symbol((const void *)st->wi->fn, fn, sizeof(fn)), st->wi->arg, targets);
	if (st->wi->ncpus > 0)
		xc_stat_inc_shared(&xc_cpus[st->wi->cpus[0]].sent.stuck_reports);
}

void xc_stuck_unstuck(struct xc_stuck *st)
{
	char caller[48], fn[96], where[32];

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
