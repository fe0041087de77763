/*
 * lockwait.pml - a Promela model of the refusal of a worker's wait for the
 * hotplug lock, or of an offline request, by the worker that waits for a
 * call up the first one's stack (the two-empty-serves proof), for spin.
 *
 * What it models, one access at a time:
 *   src/cpu/hotplug.c  lock_spin: lock_wait exchanged for SPIN (the outer's
 *                  state kept and put back), then passes of: trylock, the
 *                  look at lock_wait (REFUSED: -EDEADLK), a serve of the
 *                  worker's own queue (xc_wait_serve), and served_empty
 *                  counted (release) when the serve found nothing;
 *                  offline_wait: the same serve and count while it waits
 *                  for the request's completion; cpu_offline's request
 *                  (ctl_from, then ctl = OFFLINE);
 *   src/run/wait.c     deadlock_look (the look of the waiter X, each time its
 *                  wait polls): a request for X's CPU pending, from a
 *                  worker X waits on (the offline path), or else the lock
 *                  path: lock_waiter (a worker X waits on with lock_wait ==
 *                  SPIN), served_empty read (acquire), the look begun
 *                  again when its worker or path changes; two empty serves
 *                  since it began and the wait still not done: refuse_lock
 *                  (CAS SPIN -> REFUSED) and `proven`, after which every
 *                  look refuses at once while the wait is not done; or the
 *                  offline request refused (-EDEADLK, ctl NONE, the
 *                  completion); xc_wait_serve below the serve floor
 *                  (serve_deep: the waiting call refused with -ELOOP and
 *                  completed, a nowait one left queued);
 *   src/run/run.c      run_calls: what a serve returns (calls run, tombstones
 *                  stepped over, or, below the floor, calls refused).
 *
 * Processes. X, a worker: pushes its waiting call C to Y's queue and waits
 * for it, looking (deadlock_look) each time something it reads changed;
 * once its wait is done its task loop serves an offline request for its
 * CPU (xc_cpu_offline_served). Y, a worker: its task loop runs NWORK work
 * items (spin chooses when) and serves its queue; a serve runs the queue's
 * calls in order, each in a process of its own (Promela's recursion: the
 * caller blocks until the callee's process ends), so the calls and the
 * waits nest as they do on Y's stack. Calls: C, X's waiting call; N, a
 * nowait call of Z's (NOWAIT) that may come before or after C. With
 * OFFLINE=0: H, a thread that holds the hotplug lock and takes X's CPU
 * offline (a requester X does not wait on), releasing the lock when that
 * is done; Y's work items and C's function (CFN) wait for the lock
 * (xc_cpu_online), C's once or twice, as spin chooses. With OFFLINE=1: no
 * H; C's function (CFN) or Y's work item takes X's CPU offline itself,
 * holding the lock, and waits for it in offline_wait. Y's waits at nesting
 * level FLOOR or deeper serve below the serve floor.
 *
 * Abstractions. Only X reads served_empty, and only its growth since X's
 * look began counts: X's (re)start of a look sets it to 0 in the step
 * that reads it, and it saturates at 2; a pass of Y's that could change
 * nothing (the lock held, no refusal, nothing to serve, served_empty at
 * 2) is a stutter and left out, as is a look of X's while nothing it
 * reads changed since its last look began (x_news): so a wait that never
 * ends is a blocked process, an invalid end state. One hotplug lock, no
 * xc_exit, no request for Y's own CPU.
 *
 * Properties:
 *   - a refusal happens only once C is up Y's stack: taken from Y's queue
 *     by a run, so never while C is still queued, or was pushed after the
 *     first empty serve's take (asserted at every refusal); and at the
 *     refusal that a proof makes (the lock's waiter, or the requester's
 *     offline_wait) C is not completed and the wait refused began while C
 *     was up, so it lies above C and C cannot complete before it ends;
 *   - every wait ends: no invalid end state; at quiescence C is done, N
 *     ran, the lock is free and the offline request was served or refused;
 *   - C ran at most once, and a C refused below the floor never ran.
 *
 * Mutants (lockwait-mutant-*.pml):
 *   -DMUTANT_ONEEMPTY  the proof with one empty serve: the lock's waiter
 *                      (or the requester) refused while C is still queued
 *
 * -DSTRICT=1 (not a mutant, not run by check.sh: docs/model.md, Findings)
 * asserts the second half at the refusals of a proven look too. It fails:
 * once C's own wait for the lock is refused, that wait puts back the state
 * of a wait below C (Y's work item's, SPIN), and a proven look refuses
 * that one while C is still up, or once C is done and another wait began.
 *
 * Coverage witnesses: -DCOVER=n makes the n-th interesting step fail an
 * assertion, so spin proves the step reachable.
 *
 * A line "// @src FILE: TEXT" quotes the code it models; model/check.sh
 * fails if TEXT no longer occurs in FILE.
 */

#ifndef OFFLINE
#define OFFLINE 0		/* 0: H holds the lock, Y waits for it; 1: Y requests X's offline */
#endif
#ifndef NWORK
#define NWORK 1			/* Y's work items: each waits for the lock (or, OFFLINE, requests) */
#endif
#ifndef CFN
#define CFN 1			/* C's function may wait for the lock (or, OFFLINE, request) */
#endif
#ifndef NOWAIT
#define NOWAIT 1		/* Z's nowait call N to Y */
#endif
#ifndef FLOOR
#define FLOOR 9			/* Y's waits at this nesting level or deeper serve below the floor */
#endif
#ifndef STRICT
#define STRICT 0		/* assert at a proven look's refusals too that the wait lies above C */
#endif
#ifdef MUTANT_ONEEMPTY
#define PROOF 1			/* MUTANT: one empty serve proves it */
#else
#define PROOF 2
#endif
#ifndef COVER
#define COVER 0
#endif
#define WITNESS(n)	assert(COVER != n)

#define NONE 255
/* calls, by id */
#define C 0			/* X's waiting call to Y */
#define N 1			/* Z's nowait call to Y */
#define W 2			/* Y's work items (ids W, W+1) */
#define NIDS 4
/* threads, for the lock and ctl_from */
#define TH_H 1
#define TH_Y 2
/* XC_LOCK_* */
#define L_NONE 0
#define L_SPIN 1
#define L_REFUSED 2
/* an entry's fn */
#define F_CALL 0		/* a call to run (C is XC_RING_WAITED) */
#define F_REFUSED 1		/* XC_RING_REFUSED: a tombstone */
#define QMAX 2

/* Y's queue: its rings and doorbells as one FIFO (their order across senders does not matter here) */
byte q[QMAX];
byte qh, qt;			/* entries put, entries taken */
byte fnst[NIDS];		/* each entry's fn */
bit c_queued;			/* ghost: C put, not taken, not refused */

bit done[NIDS];			/* completions */
bit ran[NIDS];			/* ghost: the function ran */
bit c_refused;			/* ghost: C refused below the floor (-ELOOP) */
bit c_up;			/* ghost: C taken by a run, its function begun, not completed */
bit top_above;			/* ghost: Y's innermost wait (for the lock, or an offline) began while C was up */

#if OFFLINE
byte lock;			/* the hotplug lock's holder, 0: free */
#else
byte lock = TH_H;		/* ... H holds it from the start */
#endif
byte lock_wait = L_NONE;	/* Y's lock_wait */
byte served_empty;		/* Y's, since X's look began (saturating at 2) */
byte ctl_x = NONE;		/* X's ctl: NONE or OFFLINE (1) */
byte ctl_from = NONE;
bit offline_done;		/* X's offline_done */
byte offline_result;		/* 0, or 1 for -EDEADLK */
bit x_news;			/* something X's look reads was written since its last look began */
bit requested;			/* ghost: an offline request for X was made */

#define OFFLINE_REQ 1

/* Something Y's serve would act on: at the floor, a waiting call to refuse; else any entry */
#define SERVE_ACTS(lvl)	((lvl) >= FLOOR && c_queued || (lvl) < FLOOR && qt != qh)



/*
 * xc_wait_serve() from a wait at nesting level @lvl: below the floor the
 * waiting calls refused (serve_deep), else the queue run in order, each
 * call in a process of its own; @n what run_calls returns.
 */
inline serve(lvl, n, i, h, ch)
{
	n = 0;
	if
	:: lvl >= FLOOR ->
		/* xc_rings_refuse_waited: every waiting entry, wherever it stands */
		h = qh;
		i = qt;
		do
		:: i != h ->
			if
			:: q[i] == C && fnst[C] == F_CALL ->
				// @src src/run/ring_run.c: if (atomic_exchange_explicit(&e->fn, XC_RING_REFUSED, memory_order_relaxed) != XC_RING_WAITED)
				atomic { fnst[C] = F_REFUSED; c_queued = 0; assert(!ran[C]) };
				/* -ELOOP in the record, then the completion */
				atomic { c_refused = 1; done[C] = 1; x_news = 1 };
				WITNESS(7);
				n++
			:: else -> skip
			fi;
			i++
		:: else -> break
		od;
		if
		:: n == 0 && qt != qh -> WITNESS(8)	/* entries left: counted empty */
		:: else -> skip
		fi
	:: else ->
		/* run_calls: the ring's entries in order, tail stored before each runs */
		do
		:: qt != qh ->
			i = q[qt];
			atomic {
				qt++;
				if
				:: i == C -> c_queued = 0
				:: else -> skip
				fi
			};
			n++;
			if
			:: fnst[i] == F_REFUSED -> skip	/* a tombstone, stepped over */
			:: else ->
				run ycall(i, lvl + 1, ch);
				ch?_
			fi
		:: else -> break
		od
	fi
}

/* The end of a serve that found nothing: served_empty++ (release), if X could tell */
inline count_empty(n)
{
	if
	:: n == 0 ->
		atomic {
			if
			// @src src/cpu/hotplug.c: atomic_fetch_add_explicit(&self->life.served_empty, 1, memory_order_release);
			:: served_empty < 2 -> served_empty++; x_news = 1
			:: else -> skip
			fi
		}
	:: else -> skip
	fi
}

/*
 * lock_spin (xc_hotplug_lock from a worker): @ret 0 with the lock (given
 * back at once: the hotplug operation is not modelled), or 1 for -EDEADLK.
 */
inline lock_spin(lvl, ret, outer, above, n, i, h, ch)
{
	// @src src/cpu/hotplug.c: uint32_t outer = atomic_exchange_explicit(&self->life.lock_wait, XC_LOCK_SPIN, memory_order_relaxed);
	atomic { outer = lock_wait; lock_wait = L_SPIN; x_news = 1; above = top_above; top_above = c_up };
	do
	// @src src/cpu/hotplug.c: while (pthread_mutex_trylock(&xc_rt.hotplug_lock)) {
	:: atomic { lock == 0 -> lock = TH_Y }; ret = 0; WITNESS(9); break
	// @src src/cpu/hotplug.c: atomic_load_explicit(&self->life.lock_wait, memory_order_relaxed) == XC_LOCK_REFUSED) {
	:: lock_wait == L_REFUSED -> ret = 1; break
	// @src src/cpu/hotplug.c: if (!xc_wait_serve())
	:: SERVE_ACTS(lvl) || served_empty < 2 ->
		serve(lvl, n, i, h, ch);
		count_empty(n)
	od;
	// @src src/cpu/hotplug.c: atomic_store_explicit(&self->life.lock_wait, outer, memory_order_relaxed);
	atomic { lock_wait = outer; x_news = 1; top_above = above };
	if
	:: ret == 0 -> lock = 0
	:: else -> skip
	fi
}

/* cpu_offline(X) from Y, then offline_wait: @ret 0 or 1 for -EDEADLK */
inline offline_req(lvl, ret, above, n, i, h, ch)
{
	atomic { lock == 0 -> lock = TH_Y };	/* nobody else takes the lock here */
	// @src src/cpu/hotplug.c: atomic_store_explicit(&c->life.ctl_from, xc_self ? xc_self->life.cpu : -1, memory_order_relaxed);
	ctl_from = TH_Y;
	offline_done = 0;
	// @src src/cpu/hotplug.c: xc_cpu_request(c, XC_CTL_OFFLINE);
	atomic { ctl_x = OFFLINE_REQ; requested = 1; x_news = 1; above = top_above; top_above = c_up };
	do
	// @src src/cpu/hotplug.c: while (xc_completion_wait_until(&c->life.offline_done, xc_now_ns() + XC_DEADLOCK_LOOK_NS))
	:: offline_done -> break
	:: SERVE_ACTS(lvl) || served_empty < 2 ->
		serve(lvl, n, i, h, ch);
		count_empty(n)
	od;
	top_above = above;
	ret = offline_result;
	lock = 0
}

/* A call's function on Y, at nesting level @lvl (its waits serve there), and its completion. */
proctype ycall(byte id; byte lvl; chan ret)
{
	chan ch = [0] of { bit };
	byte res, outer, n, i, h;
	bit above;

	assert(!ran[id] && !(id == C && c_refused));	/* once; a refused call never runs */
	ran[id] = 1;
	if
	:: id == C && lvl >= 2 -> c_up = 1; WITNESS(6)	/* run by a serve inside a wait */
	:: id == C && lvl < 2 -> c_up = 1
	:: else -> skip
	fi;
	if
	:: id == C && CFN && !OFFLINE ->
		/* xc_cpu_online: wait for the lock; refused, maybe once more */
		lock_spin(lvl, res, outer, above, n, i, h, ch);
		if
		:: res == 1 ->
			if
			:: lock_spin(lvl, res, outer, above, n, i, h, ch)
			:: skip
			fi
		:: else -> skip
		fi
	:: id == C && CFN && OFFLINE && !requested ->
		offline_req(lvl, res, above, n, i, h, ch)
	:: id >= W && !OFFLINE ->
		lock_spin(lvl, res, outer, above, n, i, h, ch)
	:: id >= W && OFFLINE && !requested ->
		offline_req(lvl, res, above, n, i, h, ch)
	:: else -> skip		/* a function that waits for nothing */
	fi;
	if
	:: id == C -> atomic { c_up = 0; done[C] = 1; x_news = 1 }
	:: else -> done[id] = 1
	fi;
	ret!0
}

/* Y: its task loop, work items and serves; at rest when nothing is queued (end) */
active proctype Y()
{
	chan ch = [0] of { bit };
	byte w = 0, n, i, h;

end:	do
	:: w < NWORK ->
		run ycall(W + w, 1, ch);	/* a work item: its waits at level 1 */
		ch?_;
		w++
	:: qt != qh -> serve(0, n, i, h, ch)
	od
}

/* Z: a nowait call to Y */
active proctype Z()
{
	if
	:: NOWAIT -> atomic { q[qh] = N; qh++ }
	:: else -> skip
	fi
}

#if !OFFLINE
/* H: holds the hotplug lock, takes X's CPU offline, gives the lock back */
active proctype H()
{
	ctl_from = TH_H;
	atomic { ctl_x = OFFLINE_REQ; requested = 1; x_news = 1 };
	offline_done;
	lock = 0
}
#endif

/* X: its waiting call C to Y, its wait with the look, then its task loop's offline */
active proctype X()
{
	byte cpu, lk, emp;
	byte dl_cpu = NONE, dl_lock;
	bit proven;

	atomic { q[qh] = C; qh++; c_queued = 1; x_news = 1 };
	do
	:: done[C] -> break
	:: atomic { !done[C] && x_news -> x_news = 0 } ->
		/* deadlock_look: begun; a write from here on makes it look again */
		// @src src/run/wait.c: if (atomic_load_explicit(&self->life.ctl, memory_order_acquire) == XC_CTL_OFFLINE) {
		if
		:: ctl_x == OFFLINE_REQ ->
			// @src src/run/wait.c: cpu = from >= 0 && waits_on(wi, from) ? from : -1;
			if
			:: ctl_from == TH_Y -> cpu = TH_Y
			:: else -> cpu = NONE
			fi
		:: else -> dl_cpu = NONE; goto looked	/* no request: no look */
		fi;
		if
		:: cpu == NONE ->
			if
			:: proven ->
				// @src src/run/wait.c: if (!ref_done(r))
				if
				:: !done[C] ->
					/* refuse_lock */
					atomic {
						if
						:: lock_wait == L_SPIN ->
							assert(ran[C] && (!STRICT || c_up && top_above));
							lock_wait = L_REFUSED;
							x_news = 1;
							WITNESS(2)
						:: else -> skip
						fi
					}
				:: else -> skip
				fi;
				goto looked
			:: else -> skip
			fi;
			/* lock_waiter: the hint */
			if
			:: lock_wait == L_SPIN -> cpu = TH_Y; lk = 1
			:: else -> dl_cpu = NONE; WITNESS(10); goto looked
			fi
		:: else -> lk = 0
		fi;
		// @src src/run/wait.c: empty = atomic_load_explicit(&xc_cpus[cpu].life.served_empty, memory_order_acquire);
		atomic {
			emp = served_empty;
			if
			:: dl_cpu != cpu || dl_lock != lk ->
				/* the look begins: empty0 */
				dl_cpu = cpu; dl_lock = lk; proven = 0;
				served_empty = 0; emp = NONE
			:: else -> skip
			fi
		};
		if
		:: emp == NONE -> goto looked
		:: else -> skip
		fi;
		// @src src/run/wait.c: if (empty < dl->empty0 + 2 || ref_done(r))
		if
		:: emp < PROOF -> goto looked
		:: else -> skip
		fi;
		if
		:: done[C] -> goto looked
		:: else -> skip
		fi;
		if
		:: lk ->
			proven = 1;
			atomic {
				if
				// @src src/run/wait.c: atomic_compare_exchange_strong_explicit(&xc_cpus[cpu].life.lock_wait, &spin, XC_LOCK_REFUSED,
				:: lock_wait == L_SPIN ->
					assert(c_up && top_above);
					lock_wait = L_REFUSED;
					x_news = 1;
					WITNESS(1)
				:: else -> skip
				fi
			}
		:: else ->
			dl_cpu = NONE;
			// @src src/run/wait.c: self->life.offline_result = -EDEADLK;
			atomic {
				assert(c_up && top_above);
				offline_result = 1;
				ctl_x = NONE;
				offline_done = 1;
				WITNESS(3)
			}
		fi;
looked:		skip
	od;
	if
	:: c_refused -> WITNESS(4)	/* X's call got -ELOOP */
	:: else -> skip
	fi;
	/* the task loop serves a request for its CPU (xc_cpu_offline_served) */
end:	do
	:: ctl_x == OFFLINE_REQ -> atomic { offline_result = 0; ctl_x = NONE; offline_done = 1 }; WITNESS(5)
	od
}

/* At quiescence (no process can move): everything done, nothing held */
active proctype quiescence()
{
	timeout ->
	assert(done[C] && (!NOWAIT || ran[N]) && lock == 0 && lock_wait == L_NONE);
	assert(!requested || offline_done);
	assert(ran[C] != c_refused)
}
