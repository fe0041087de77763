/*
 * wakeup.pml - a Promela model of libxcall's wakeup protocol, for spin.
 *
 * It models, one atomic access at a time, the code in
 *   src/llist.h    xc_llist_push (reports empty -> non-empty), xc_llist_take,
 *                  xc_llist_close, xc_llist_open
 *   src/call.c     call_push / call_kick (kick only on empty -> non-empty),
 *                  xc_calls_pending (W2 for both call queues and the slot),
 *                  xc_run_calls, xc_run_urgent, xc_drain_calls
 *   src/slot.c     xc_slot_call (claim, publish = S1, kick, wait, release), xc_slot_run,
 *                  xc_slot_close, xc_slot_open; xc_slot_pending (internal.h)
 *   src/kick.c     xc_kick (S2, S3, free ride, elision), xc_idle_wait (W1..W4),
 *                  xc_idle_state_set
 *   src/urgent.c   xc_kick_urgent (RUNNING: signal; else xc_kick), the handler
 *   src/worker.c   worker_loop, cpu_idle, ready_idle, ctl_pending, cpu_offline,
 *                  cpu_drain, cpu_park
 *   src/hotplug.c  xc_cpu_offline (store ctl = OFFLINE, then xc_kick),
 *                  xc_cpu_online (xc_cpu_open, xc_park_release)
 * with the labels S1-S3 and W1-W4 of the argument in src/kick.c's header.
 *
 * Processes: one worker; NSENDERS senders, each queueing NCALLS calls on the
 * worker's CPU (the first NURGENT of them with XC_URGENT, on the urgent
 * queue; the others either through the mailbox slot, when they can claim it,
 * or through the call queue, as spin chooses); with NURGENT > 0 the worker's urgent signal handler; with HOTPLUG a
 * requester that takes the CPU offline and, with ONLINE, back online; and a
 * quiescence checker. Each call has its own bit (sender i's call j is bit
 * i*NCALLS+j), so the model knows which calls are queued, accepted, refused
 * and run.
 *
 * Memory model. Spin executes one statement at a time in a single global
 * order: the model is sequentially consistent. That is what the argument in
 * kick.c relies on: S1 (the push's successful CAS, or hotplug's ctl store), S2
 * (the load of the idle word), S3 (the CAS SLEEPING -> WAKING), W1 (the store
 * of SLEEPING), W2 (the re-check loads of the queues and ctl) and W4 (the
 * exchange to POLLING) are all memory_order_seq_cst in the code, hence totally
 * ordered. The other accesses to the idle word are relaxed (the owner's
 * stores of POLLING, the CAS WAKING -> WOKENUP) and are modelled as SC too.
 * That is sound here because a seq_cst load that reads a value which a later
 * store overwrites is ordered before that store in the seq_cst total order
 * (coherence-ordered-before, C++20 [atomics.order]), and each relaxed write
 * to the idle word is followed, in its writer's program order, by a seq_cst
 * write of the worker (W1, W4, or RUNNING) before the worker can sleep. The
 * model does not check weak-memory reorderings beyond that argument.
 *
 * Each atomic access of the code is one Promela statement, or one atomic{}
 * block for one read-modify-write. The comment beside it names the function
 * and the label; a line "// @src FILE: TEXT" quotes the code it models, and
 * model/check.sh fails if TEXT no longer occurs in FILE.
 *
 * The futex: futex_wait(&idle, SLEEPING) atomically compares the word with
 * SLEEPING and, if equal, queues the worker; it then blocks until a
 * futex_wake dequeues it, or wakes spuriously (at most SPURIOUS times in a
 * run, so that a worker blocked for good is an end state spin can see).
 * futex_wake(&idle, 1) dequeues the waiter if there is one; a wake with no
 * waiter is lost, which is why futex_wait compares first. A signal handler
 * run while blocked is followed by a restart that compares again (SA_RESTART),
 * the same as staying queued.
 *
 * Properties (docs/model.md):
 *   - a call runs at most once, and only if queued (assertions in run_list);
 *   - at quiescence (no process can move: timeout), the worker is not blocked
 *     in futex_wait with a call or a hotplug request pending, nothing is
 *     queued, every accepted call has run, every call was accepted or refused,
 *     and the offline request was served;
 *   - no invalid end state (deadlock): each process stops only where it may;
 *   - with -DLIVENESS: the LTL property no_lost_wakeup (a queued call is
 *     eventually taken, a request eventually served), instead of the checker.
 *
 * Mutants, built from this file with a -D macro so they cannot drift:
 *   -DMUTANT_NORECHECK   W2 removed: the worker sleeps right after W1
 *   -DMUTANT_LOADFIRST   the sender loads the idle word (S2) before its push (S1)
 *   -DMUTANT_NOCTLCHECK  W2 re-checks the queues but not ctl
 * Coverage witnesses: -DCOVER=n makes the n-th interesting step fail an
 * assertion, so spin proves the step reachable (no property holds vacuously).
 * -DCHECK_URGENT_PROMPT adds the promptness claim of XC_URGENT (xcall.h):
 * an urgent sender that finds the worker inside a call's fn signals it.
 * The code does not meet it (docs/model.md), so check.sh does not run it.
 */

#ifndef NSENDERS
#define NSENDERS 2
#endif
#ifndef NCALLS
#define NCALLS 2		/* calls per sender */
#endif
#ifndef NURGENT
#define NURGENT 0		/* senders 0..NURGENT-1 queue XC_URGENT calls */
#endif
#ifndef HOTPLUG
#define HOTPLUG 1		/* a requester takes the CPU offline once */
#endif
#ifndef ONLINE
#define ONLINE 1		/* ... and brings it back online */
#endif
#ifndef SPURIOUS
#define SPURIOUS 1		/* spurious futex wakeups allowed in a run */
#endif
#ifndef COVER
#define COVER 0
#endif
/* COVER=n: reaching witness n violates an assertion (a reachability proof). */
#define WITNESS(n)	assert(COVER != n)

/* struct xc_cpu.idle (src/internal.h: XC_IDLE_*) */
#define RUNNING  0
#define POLLING  1
#define SLEEPING 2
#define WAKING   3
#define WOKENUP  4

/* src/internal.h: XC_CTL_*, XC_PARK_* */
#define CTL_NONE    0
#define CTL_OFFLINE 1
#define PARK_WAIT 0
#define PARK_RUN  1

/* xc_llist_push results (src/llist.h: XC_PUSH_*) */
#define PUSH_NONEMPTY  0
#define PUSH_WAS_EMPTY 1
#define PUSH_CLOSED    2

#define ALLCALLS ((1 << (NSENDERS * NCALLS)) - 1)

/* A list head (src/llist.h): the set of calls in it, and whether it is CLOSED. */
typedef llist {
	int  nodes;		/* bit per call; 0 = NULL */
	bool closed;		/* head == XC_LLIST_CLOSED */
};

byte idle = RUNNING;		/* c->idle: cpu_reset stores RUNNING */
llist callq;			/* c->callq */
llist urgentq;			/* c->urgentq */
byte ctl = CTL_NONE;		/* c->ctl */
byte park = PARK_RUN;		/* c->park: the worker was released to run */
bool offline_done = false;	/* c->offline_done reached zero */

/* c->slot_claim (src/slot.c): the holder (sender id + 1; 0 free) */
byte slot_owner = 0;
/* c->slot.done.word (src/slot.c): PUBLISHED, CLOSED */
bool slot_pub = false;
bool slot_closed = false;	/* the CPU starts online: xc_cpu_open opened it */
int slot_call = 0;		/* the published call's bit */

bool waiter = false;		/* the worker is queued in futex_wait(&c->idle) */
byte spurious = SPURIOUS;	/* spurious wakeups left */
bool sig_pending = false;	/* an urgent signal sent to the worker, not yet handled */

int accepted = 0;		/* calls whose push succeeded */
int refused = 0;		/* calls whose push found the queue closed (-ENXIO) */
int ran = 0;			/* calls that ran */
byte senders_done = 0;
#ifdef CHECK_URGENT_PROMPT
bool in_call = false;		/* the worker is inside a call's fn */
#endif

#define PENDING(q)	(q.nodes != 0)	/* xc_llist_nonempty: not NULL, not CLOSED */
#define SLOT_PENDING	(slot_pub)	/* xc_slot_pending */

/*
 * xc_kick(c), src/kick.c, after its S2 load (the caller did s = idle).
 * s: the state read; ok: scratch for the CAS outcome.
 */
inline xc_kick(s, ok)
{
	do
	:: s == SLEEPING ->
		/* S3: CAS idle SLEEPING -> WAKING, seq_cst; on failure s = the current state */
		// @src src/kick.c: /* S3, seq_cst: on failure s holds the new state and we decide again */
		atomic {
			if
			:: idle == SLEEPING -> idle = WAKING; ok = true
			:: else -> s = idle; ok = false
			fi
		}
		if
		:: ok ->
			/* kick_futex: futex_wake(&c->idle, 1) - dequeues the waiter, if any */
			// @src src/kick.c: xc_futex_wake(&c->idle, 1);
			atomic { if :: waiter -> WITNESS(3) :: else -> skip fi; waiter = false }
			/* CAS idle WAKING -> WOKENUP, relaxed; fails harmlessly if the worker moved on */
			// @src src/kick.c: s = XC_IDLE_WAKING;
			atomic {
				if
				:: idle == WAKING -> idle = WOKENUP
				:: else -> WITNESS(11)
				fi
			}
			break
		:: else -> WITNESS(4)	/* "continue": decide again on the new s */
		fi
	:: s == WAKING || s == WOKENUP ->
		WITNESS(1);	/* free ride: a wakeup is under way (free_rides) */
		break
	:: s == RUNNING || s == POLLING ->
		WITNESS(2);	/* elided: the worker re-checks before it sleeps (kicks_elided) */
		break
	od
}

/* run_list (src/call.c): run every call of a taken list, each exactly once. */
inline run_list(taken)
{
	assert((taken & ~accepted) == 0);	/* only queued calls run */
	assert((ran & taken) == 0);		/* no call runs twice */
	ran = ran | taken;
	taken = 0
}

/* xc_llist_take (src/llist.h): head == CLOSED ? NULL : exchange(head, NULL).
 * Only the owner thread takes or closes, so the two accesses act as one. */
inline take(q, taken)
{
	atomic {
		if
		:: !q.closed -> taken = q.nodes; q.nodes = 0
		:: else -> WITNESS(13)	/* taken from a closed list: NULL */
		fi
	}
}

/*
 * slot_run_published (src/slot.c): run the slot's call, then free the slot
 * with one exchange (0, or CLOSED while draining, which keeps slot_closed).
 */
inline slot_run(taken)
{
	taken = slot_call;
	run_list(taken);
	// @src src/slot.c: old = atomic_exchange_explicit(&s->done.word, after, memory_order_seq_cst);
	atomic { slot_pub = false; slot_call = 0 }
}

/* xc_run_calls (src/call.c): xc_run_urgent (urgent queue), the slot, then the call queue */
inline run_calls(taken)
{
	// @src src/call.c: int n = xc_run_urgent(c);
	take(urgentq, taken);
	run_list(taken);
	/* xc_slot_run: load the word (acquire); run the call if published */
	// @src src/call.c: n += xc_slot_run(c);
	if
	:: SLOT_PENDING -> WITNESS(16); slot_run(taken)
	:: else -> skip
	fi;
	// @src src/call.c: struct xc__link *l = xc_llist_take(&c->callq);
	take(callq, taken);
#ifdef CHECK_URGENT_PROMPT
	if :: taken != 0 -> in_call = true :: else -> skip fi;	/* inside the calls' fns */
#endif
	run_list(taken)
#ifdef CHECK_URGENT_PROMPT
	; in_call = false
#endif
}

#define CTL_READY	(ctl != CTL_NONE)

/*
 * ready_idle (src/worker.c) = xc_calls_pending || xc_work_queued || ctl_pending,
 * each a seq_cst load; jumps to idle_out if ready. Work items are not modelled
 * (xc_work_queued has the same shape as xc_calls_pending).
 */
inline ready_idle()
{
	/* xc_calls_pending: the slot, callq, then urgentq */
	// @src src/internal.h: return xc_slot_pending(c) ||
	if
	:: SLOT_PENDING -> goto idle_out
	:: else -> skip
	fi;
	// @src src/internal.h: xc_llist_nonempty(&c->callq, memory_order_seq_cst) ||
	if
	:: PENDING(callq) -> goto idle_out
	:: else -> skip
	fi;
	// @src src/internal.h: xc_llist_nonempty(&c->urgentq, memory_order_seq_cst);
	if
	:: PENDING(urgentq) -> goto idle_out
	:: else -> skip
	fi;
	/* ctl_pending */
	// @src src/worker.c: return atomic_load_explicit(&c->ctl, memory_order_seq_cst) != XC_CTL_NONE;
	if
	:: CTL_READY -> goto idle_out
	:: else -> skip
	fi
}

active proctype worker()
{
	int taken = 0;
	byte prev;

	/* worker_loop (src/worker.c) */
loop_top:
	/* ctl = atomic_load(&c->ctl, acquire) */
	// @src src/worker.c: uint32_t ctl = atomic_load_explicit(&c->ctl, memory_order_acquire);
	if
	:: ctl == CTL_OFFLINE -> goto offline
	:: else -> skip
	fi;
	/* xc_run_calls(c); xc_run_one_work(c) finds no work item */
	run_calls(taken);

	/* cpu_idle: xc_idle_state_set(c, POLLING), relaxed */
	// @src src/worker.c: xc_idle_state_set(c, XC_IDLE_POLLING);
	idle = POLLING;
idle_loop:
	/* xc_idle_wait(c, ready_idle, NULL, window, 0): prev = load(idle), relaxed */
	// @src src/kick.c: uint32_t prev = atomic_load_explicit(&c->idle, memory_order_relaxed);
	prev = idle;
	assert(prev == POLLING);	/* "only this thread writes RUNNING or POLLING" */
	/* idle = POLLING, relaxed */
	// @src src/kick.c: atomic_store_explicit(&c->idle, XC_IDLE_POLLING, memory_order_relaxed);
	idle = POLLING;
	/*
	 * poll_until: while (!ready()) spin, until the window ends. Polling only
	 * re-reads, so one read at a moment of spin's choosing covers every
	 * window (none, adaptive, forever); or the worker gives up at once.
	 */
	do
	:: SLOT_PENDING -> goto idle_out
	:: PENDING(callq) -> goto idle_out
	:: PENDING(urgentq) -> goto idle_out
	:: CTL_READY -> goto idle_out
	:: break	/* window 0, or it ran out */
	od;
sleep_loop:
	/* W1: idle = SLEEPING, seq_cst */
	// @src src/kick.c: atomic_store_explicit(&c->idle, XC_IDLE_SLEEPING, memory_order_seq_cst);
	idle = SLEEPING;
#ifndef MUTANT_NORECHECK
	/* W2: if (ready(c, ctx)) break; - four seq_cst loads */
	// @src src/kick.c: if (ready(c, ctx))	/* W2 */
	if
	:: SLOT_PENDING -> WITNESS(18); goto idle_out	/* the re-check saw a slot call */
	:: else -> skip
	fi;
	if
	:: PENDING(callq) -> WITNESS(9); goto idle_out	/* the re-check saw a call */
	:: else -> skip
	fi;
	if
	:: PENDING(urgentq) -> WITNESS(14); goto idle_out	/* ... an urgent call */
	:: else -> skip
	fi;
#ifndef MUTANT_NOCTLCHECK
	if
	:: CTL_READY -> WITNESS(8); goto idle_out	/* ... a hotplug request */
	:: else -> skip
	fi;
#endif
#endif
	/* (deadline 0: no timeout) W3: futex_wait(&c->idle, SLEEPING): compare and queue */
	// @src src/kick.c: xc_futex_wait(&c->idle, XC_IDLE_SLEEPING, timeout);	/* W3 */
	atomic {
		if
		:: idle == SLEEPING -> waiter = true
		:: else -> WITNESS(6)	/* the word moved on: return at once (EAGAIN) */
		fi
	}
	/* blocked until futex_wake, or a spurious wakeup; blocking here for good is
	 * a valid end only if nothing is pending (checked by quiescence) */
end_futex:
	if
	:: !waiter -> skip
	:: atomic { waiter && spurious > 0 -> spurious--; waiter = false; WITNESS(5) }
	fi;
	/* W4: exchange(idle, POLLING), seq_cst */
	// @src src/kick.c: atomic_exchange_explicit(&c->idle, XC_IDLE_POLLING, memory_order_seq_cst);
	idle = POLLING;
	/* if (ready(c, ctx)) break; */
	ready_idle();
	goto sleep_loop;
idle_out:
	/* xc_idle_wait's out: xc_idle_state_set(c, prev) - POLLING, relaxed */
	// @src src/kick.c: xc_idle_state_set(c, prev);
	idle = prev;
	prev = 0;
	/* cpu_idle: xc_run_calls(c), still POLLING */
	// @src src/worker.c: xc_run_calls(c);	/* calls go before task work in any case */
	run_calls(taken);
	/* cpu_idle: if (task_work_pending(c)) break; (ctl_pending) */
	if
	:: CTL_READY ->
		/* cpu_idle: xc_idle_state_set(c, RUNNING), seq_cst; sched_yield; worker_loop's top */
		// @src src/worker.c: xc_idle_state_set(c, XC_IDLE_RUNNING);
		idle = RUNNING;
		goto loop_top
	:: else -> skip
	fi;
	/* ... else wait again */
	goto idle_loop;

offline:
	/* cpu_offline -> cpu_drain -> xc_drain_calls: close the urgent queue, then the call queue */
	// @src src/call.c: int n = run_list(c, xc_llist_close(&c->urgentq), true);
	atomic { taken = urgentq.nodes; urgentq.nodes = 0; urgentq.closed = true }
	run_list(taken);
	// @src src/call.c: n += run_list(c, xc_llist_close(&c->callq), false);
	atomic { taken = callq.nodes; callq.nodes = 0; callq.closed = true }
	if :: taken != 0 -> WITNESS(10) :: else -> skip fi;
	run_list(taken);
	/* xc_slot_close: fetch_or CLOSED; run the call published before */
	// @src src/call.c: return n + xc_slot_close(c);
	atomic { slot_closed = true; if :: slot_pub -> WITNESS(19) :: else -> skip fi }
	if
	:: SLOT_PENDING -> slot_run(taken)
	:: else -> skip
	fi;
	/* cpu_offline: park = WAIT; ctl = NONE; xc_sync_complete(&c->offline_done) */
	park = PARK_WAIT;
	ctl = CTL_NONE;
	offline_done = true;
	/* cpu_park: while (park == WAIT) futex_wait(&c->park, WAIT) */
end_parked:
	park != PARK_WAIT;
	goto loop_top
}

/*
 * A sender: NCALLS times call_push (src/call.c) onto the worker's CPU.
 * xc_call_single, xc_call_async and call_many all queue and kick this way.
 */
#define ME	(1 << (id * NCALLS + j))
#define URGENT	(id < NURGENT)
proctype sender(byte id)
{
	byte j = 0;	/* the call being queued: bit ME */
	byte r;
	byte s;
	bool ok;

	do
	:: j < NCALLS && !URGENT && !slot_pub && !slot_closed && slot_owner == 0 ->
		/*
		 * xc_slot_call: after its looks at the word and the claim, claim
		 * (CAS slot_claim 0 -> 1; the worker may close the slot before the
		 * publication), then publish (S1, CAS word 0 -> PUBLISHED, fails
		 * if CLOSED), kick, wait for the word to drop the publication, and
		 * give the claim back. A failed claim is the queue path below.
		 */
		// @src src/slot.c: if (!atomic_compare_exchange_strong_explicit(&c->slot_claim, &w, 1,
		atomic { slot_owner == 0 -> slot_owner = id + 1 }
		// @src src/slot.c: bool published = atomic_compare_exchange_strong_explicit(&s->done.word, &w, XC_SLOT_PUBLISHED,
		atomic {
			assert(!slot_pub);	/* only the holder of the claim publishes */
			if
			:: !slot_closed -> slot_pub = true; slot_call = ME; accepted = accepted | ME; ok = true
			:: else -> ok = false; WITNESS(17)	/* closed: use the queue */
			fi
		}
		if
		:: ok ->
#ifndef MUTANT_LOADFIRST
			s = idle;	/* S2 */
#endif
			xc_kick(s, ok);
			/* xc_sync_wait: until the word no longer reads PUBLISHED */
			!slot_pub;
			// @src src/slot.c: atomic_store_explicit(&c->slot_claim, 0, memory_order_release);
			atomic { slot_owner = 0; j++; r = 0; s = 0; ok = false }
		:: else ->
			// @src src/slot.c: atomic_store_explicit(&c->slot_claim, 0, memory_order_release);
			atomic { slot_owner = 0; ok = false };
			goto queue
		fi
	:: j < NCALLS ->
queue:
#ifdef MUTANT_LOADFIRST
		/* MUTANT: S2 before S1 - the state is read before the push */
		s = idle;
#endif
		/* S1: xc_llist_push onto callq or urgentq - one successful CAS (seq_cst), or CLOSED seen */
		// @src src/llist.h: return old == NULL ? XC_PUSH_WAS_EMPTY : XC_PUSH_NONEMPTY;
		atomic {
			if
			:: URGENT && urgentq.closed || !URGENT && callq.closed ->
				r = PUSH_CLOSED; refused = refused | ME; WITNESS(7)
			:: else ->
				if
				:: URGENT && urgentq.nodes == 0 || !URGENT && callq.nodes == 0 ->
					r = PUSH_WAS_EMPTY
				:: else -> r = PUSH_NONEMPTY
				fi;
				if
				:: URGENT -> urgentq.nodes = urgentq.nodes | ME
				:: else -> callq.nodes = callq.nodes | ME
				fi;
				accepted = accepted | ME
			fi
		}
		/* call_kick: kick only if the queue went from empty to non-empty */
		// @src src/call.c: if (pushed == XC_PUSH_WAS_EMPTY || (pushed == XC_PUSH_NONEMPTY && xc_ablated(XC_ABLATE_COALESCE))) {
		if
		:: r == PUSH_WAS_EMPTY && !URGENT ->
#ifndef MUTANT_LOADFIRST
			/* S2: s = atomic_load(&c->idle, seq_cst) */
			// @src src/kick.c: uint32_t s = atomic_load_explicit(&c->idle, memory_order_seq_cst);
			s = idle;
#endif
			xc_kick(s, ok)
		:: r == PUSH_WAS_EMPTY && URGENT ->
			/* xc_kick_urgent: s = atomic_load(&c->idle, seq_cst) */
			// @src src/urgent.c: uint32_t s = atomic_load_explicit(&c->idle, memory_order_seq_cst);
#if defined(CHECK_URGENT_PROMPT)
			/* XC_URGENT "reach[es] a worker that is busy in a long work item or call"
			 * (include/xcall.h): one inside a call's fn must read as RUNNING */
			atomic { s = idle; assert(!(in_call && s != RUNNING)) }
#elif !defined(MUTANT_LOADFIRST)
			s = idle;
#endif
			if
			:: s != RUNNING ->
				/* xc_kick(c): its own S2, then S3 */
#ifndef MUTANT_LOADFIRST
				s = idle;
#endif
				xc_kick(s, ok)
			:: else ->
				/* tgkill: the handler will run the urgent queue */
				// @src src/urgent.c: syscall(SYS_tgkill, getpid(), c->tid, xc_rt.cfg.urgent_signal);
				sig_pending = true;
				WITNESS(15)
			fi
		:: r == PUSH_NONEMPTY -> WITNESS(12)	/* coalesced: rides on the first pusher's kick */
		:: r == PUSH_CLOSED -> skip		/* -ENXIO */
		fi;
		/* next call; locals dead from here are cleared so that states merge */
		atomic { j++; r = 0; s = 0; ok = false }
	:: else -> break
	od;
	senders_done++
}

#if NURGENT > 0
/*
 * urgent_handler (src/urgent.c): runs on the worker's thread when the signal
 * arrives, between any two of its steps, also while it is blocked in a futex
 * (which then restarts and compares again): xc_run_urgent.
 */
active proctype urgent_handler()
{
	int taken = 0;
end_idle:
	do
	:: atomic {
		sig_pending -> sig_pending = false;
		take(urgentq, taken);
		run_list(taken)
	   }
	od
}
#endif

#if HOTPLUG
/* xc_cpu_offline, then (ONLINE) xc_cpu_online, src/hotplug.c */
active proctype hotplug()
{
	byte s;
	bool ok;

	/* S1 for a ctl request: atomic_store(&c->ctl, OFFLINE, seq_cst) */
	// @src src/hotplug.c: atomic_store_explicit(&c->ctl, XC_CTL_OFFLINE, memory_order_seq_cst);
	ctl = CTL_OFFLINE;
	/* xc_kick(c): S2 then S3 */
	s = idle;
	xc_kick(s, ok);
	/* xc_sync_wait_until(&c->offline_done, 0): not an end state, so a lost kick is a deadlock */
	offline_done;
#if ONLINE
	/* xc_cpu_online -> xc_cpu_open: ctl = NONE, reopen the queues; xc_park_release(RUN) */
	// @src src/hotplug.c: xc_llist_open(&c->urgentq);
	ctl = CTL_NONE;
	callq.closed = false;
	urgentq.closed = false;
	// @src src/hotplug.c: xc_slot_open(c);
	slot_closed = false;
	park = PARK_RUN
#endif
}
#endif

#ifndef LIVENESS
/*
 * Quiescence: when no other process can move, the run is over. Then the
 * worker must not be blocked in futex_wait with something pending (the lost
 * wakeup), nothing may be left queued, every accepted call must have run, and
 * the offline request must have been served.
 */
active proctype quiescence()
{
end_check:
	timeout;
	assert(!(waiter && (PENDING(callq) || PENDING(urgentq) || SLOT_PENDING)));	/* lost wakeup: asleep, calls queued */
	assert(!(waiter && ctl != CTL_NONE));	/* lost wakeup: asleep, request pending */
	assert(!PENDING(callq) && !PENDING(urgentq) && !SLOT_PENDING);
	assert(ran == accepted);
	assert((accepted | refused) == ALLCALLS && (accepted & refused) == 0);
	assert(ctl == CTL_NONE);
	assert(senders_done == NSENDERS)
}
#endif

init
{
	byte i = 0;

	atomic {
		do
		:: i < NSENDERS -> run sender(i); i++
		:: else -> break
		od
	}
}

#ifdef LIVENESS
/* every queued call is eventually taken; every offline request eventually served */
ltl no_lost_wakeup {
	[] ((PENDING(callq) -> <> !PENDING(callq)) &&
	    (SLOT_PENDING -> <> !SLOT_PENDING) &&
	    (PENDING(urgentq) -> <> !PENDING(urgentq)) &&
	    (ctl != CTL_NONE -> <> (ctl == CTL_NONE)))
}
#endif
