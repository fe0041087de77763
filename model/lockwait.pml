/*
 * lockwait.pml - a Promela model of the refusal of a worker's wait for the
 * hotplug lock, or of an offline request, by the worker that waits for a
 * call up the first one's stack (the two-empty-serves proof), for spin.
 *
 * What it models, one access at a time:
 *   src/cpu/hotplug.c  lock_spin: a token of its own (wait_token: its
 *                  thread's next), lock_wait exchanged for the token beside
 *                  SPIN (the outer's word kept, and put back exactly), then
 *                  passes of: trylock, the look at lock_wait (its own token
 *                  REFUSED: -EDEADLK), a serve of the worker's own queue
 *                  (xc_wait_serve), and served_empty counted with the
 *                  spin's token (count_empty, release) when the serve found
 *                  nothing; with GIVEUP, a spin that ends by itself (-ENXIO
 *                  as xc_exit begins, -EDEADLK for a request for Y's own
 *                  CPU), once in a run, at any pass; offline_wait: a token
 *                  too, and the same serve and count while it waits for the
 *                  request's completion; cpu_offline's request (ctl_from,
 *                  then ctl = OFFLINE);
 *   src/run/wait.c     deadlock_look (the look of the waiter X, each time its
 *                  wait polls): a request for X's CPU pending, from a
 *                  worker X waits on (the offline path), or else the lock
 *                  path: lock_waiter (a worker X waits on whose lock_wait
 *                  word, read with acquire, is a SPIN), served_empty read
 *                  (acquire: the count and the token of the wait whose serve
 *                  was the last empty one), the look begun again when its
 *                  worker or path changes; two empty serves since it began
 *                  and the wait still not done: `proven`, the proof's token
 *                  the one served_empty carried, and refuse_lock: if the word
 *                  read first is a SPIN whose token is the proof's or later,
 *                  the token moves up to it and a CAS of that exact word to
 *                  REFUSED; once proven, every look reads the word, finds the
 *                  wait not done and refuses the same way; or the offline
 *                  request refused (-EDEADLK, ctl NONE, the completion);
 *                  xc_wait_serve below the serve floor (serve_deep: the
 *                  waiting call refused with -ELOOP and completed, a nowait
 *                  one left queued);
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
 * (xc_cpu_online), C's once or, refused or given up, twice, as spin
 * chooses. With OFFLINE=1: no H; C's function (CFN) or Y's work item takes
 * X's CPU offline itself, holding the lock, and waits for it in
 * offline_wait. Y's waits at nesting level FLOOR or deeper serve below the
 * serve floor.
 *
 * Abstractions. Only X reads served_empty, and only its growth since X's
 * look began counts: X's (re)start of a look sets the count to 0 in the
 * step that reads it, and it saturates at 2 (the token goes on changing);
 * a pass of Y's that could change nothing (the lock held, no refusal,
 * nothing to serve, the count at 2 with its own token) is a stutter and
 * left out, as is a look of X's while nothing it reads changed since its
 * last look began (x_news): so a wait that never ends is a blocked
 * process, an invalid end state. Tokens count from 1 and step by 1 (the
 * code's step of 4 leaves room for the state: here the word is token * 4 +
 * state); they do not wrap. The model is sequentially consistent: the
 * memory orders that make the code behave so are argued in wait.c. One
 * hotplug lock, no request for Y's own CPU (but GIVEUP), no xc_exit.
 *
 * Properties:
 *   - a refusal happens only once C is up Y's stack: taken from Y's queue
 *     by a run, so never while C is still queued, or was pushed after the
 *     first empty serve's take; and the wait a proof's token names began
 *     while C was up (asserted at every proof);
 *   - every refusal of a wait for the lock, by a proof or by a proven
 *     look, lands on a spin that began while C was up, while C is still
 *     not completed: it lies above C, and C cannot complete before it
 *     ends; the offline request is refused only while the requester's wait
 *     lies above C the same way (asserted at every refusal);
 *   - every wait ends: no invalid end state; at quiescence C is done, N
 *     ran, the lock is free, lock_wait back to its first word, and the
 *     offline request was served or refused;
 *   - C ran at most once, and a C refused below the floor never ran.
 *
 * Mutants (lockwait-mutant-*.pml):
 *   -DMUTANT_ONEEMPTY  the proof with one empty serve: the lock's waiter
 *                      (or the requester) refused while C is still queued
 *   -DMUTANT_NOTOKEN   refuse_lock without tokens, a CAS of any SPIN to
 *                      REFUSED: a proven look refuses the spin below C that
 *                      C's refused spin put back
 *   -DMUTANT_LATEWORD  a proven look reads lock_wait after it found C not
 *                      done: it refuses a spin begun after C completed
 *   -DMUTANT_NOCARRY   the proof's token the one of the word it read, not
 *                      the one served_empty carried: the spin below C, put
 *                      back by C's refused spin, is refused
 *   -DMUTANT_NOLOWER   the proof's token kept from the proof on, never
 *                      lowered by a later look: C's own spin, below the
 *                      refused spin of a call it served, is never refused,
 *                      and the waits hang
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
#ifndef NFN
#define NFN 1			/* N's function waits for the lock (OFFLINE=0): below C, or above it */
#endif
#ifndef FLOOR
#define FLOOR 9			/* Y's waits at this nesting level or deeper serve below the floor */
#endif
#ifndef GIVEUP
#define GIVEUP 0		/* how many of Y's spins may end by themselves (-ENXIO, or -EDEADLK) */
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
/* XC_LOCK_*: the state of a lock_wait word, token * 4 + state */
#define L_NONE 0
#define L_SPIN 1
#define L_REFUSED 2
#define TOKEN(w)	((w) / 4)
#define STATE(w)	((w) % 4)
#define NTOK 8			/* tokens 1..7: Y's waits, NWORK + 3 at most (N's, and C's two) */
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
bit above[NTOK];		/* ghost: the wait of Y's with this token began while C was up */
byte req_token;			/* ghost: the token of the wait of the offline request's requester */

#if OFFLINE
byte lock;			/* the hotplug lock's holder, 0: free */
#else
byte lock = TH_H;		/* ... H holds it from the start */
#endif
byte tokens;			/* Y's thread's wait_tokens: the last token taken */
byte lock_wait;			/* Y's lock_wait: token * 4 + state; 0 at first */
byte served_empty;		/* Y's count of empty serves, since X's look began (saturating at 2) */
byte empty_token;		/* ... and the token of the wait whose serve was the last of them */
byte giveups;			/* spins that ended by themselves */
byte ctl_x = NONE;		/* X's ctl: NONE or OFFLINE (1) */
byte ctl_from = NONE;
bit offline_done;		/* X's offline_done */
byte offline_result;		/* 0, or 1 for -EDEADLK */
bit x_news;			/* something X's look reads was written since its last look began */
bit requested;			/* ghost: an offline request for X was made */

#define OFFLINE_REQ 1

/* Something Y's serve would act on: at the floor, a waiting call to refuse; else any entry */
#define SERVE_ACTS(lvl)	((lvl) >= FLOOR && c_queued || (lvl) < FLOOR && qt != qh)
/* A pass of a wait of Y's with token tok that could change something */
#define PASS_ACTS(lvl, tok)	(SERVE_ACTS(lvl) || served_empty < 2 || empty_token != (tok))



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

/* The end of a serve of wait @tok that found nothing: counted with the token (release), if X could tell */
inline count_empty(n, tok)
{
	if
	:: n == 0 ->
		atomic {
			if
			// @src src/cpu/hotplug.c: atomic_exchange_explicit(&self->life.served_empty, count << 32 | tok, memory_order_release);
			:: served_empty < 2 || empty_token != tok ->
				if
				:: served_empty < 2 -> served_empty++
				:: else -> skip
				fi;
				empty_token = tok;
				x_news = 1
			:: else -> skip
			fi
		}
	:: else -> skip
	fi
}

/* wait_token: Y's next token, and the ghost of where its wait lies */
inline take_token(tok)
{
	tokens++;
	tok = tokens;
	above[tok] = c_up
}

/*
 * lock_spin (xc_hotplug_lock from a worker): @ret 0 with the lock (given
 * back at once: the hotplug operation is not modelled), 1 for -EDEADLK
 * (refused), 2 for a spin that ended by itself.
 */
inline lock_spin(lvl, ret, outer, tok, n, i, h, ch)
{
	// @src src/cpu/hotplug.c: uint32_t tok = wait_token();
	// @src src/cpu/hotplug.c: uint32_t outer = atomic_exchange_explicit(&self->life.lock_wait, tok | XC_LOCK_SPIN, memory_order_release);
	atomic { take_token(tok); outer = lock_wait; lock_wait = tok * 4 + L_SPIN; x_news = 1 };
	do
	// @src src/cpu/hotplug.c: while (pthread_mutex_trylock(&xc_rt.hotplug_lock)) {
	:: atomic { lock == 0 -> lock = TH_Y }; ret = 0; WITNESS(9); break
	// @src src/cpu/hotplug.c: atomic_load_explicit(&self->life.lock_wait, memory_order_relaxed) == (tok | XC_LOCK_REFUSED)) {
	:: lock_wait == tok * 4 + L_REFUSED -> ret = 1; break
	// @src src/cpu/hotplug.c: if (ctl == XC_CTL_EXIT || atomic_load_explicit(&xc_rt.state, memory_order_acquire) != XC_RT_UP) {
	:: giveups < GIVEUP -> giveups++; ret = 2; WITNESS(14); break
	// @src src/cpu/hotplug.c: if (!xc_wait_serve())
	:: PASS_ACTS(lvl, tok) ->
		serve(lvl, n, i, h, ch);
		count_empty(n, tok)
	od;
	// @src src/cpu/hotplug.c: atomic_store_explicit(&self->life.lock_wait, outer, memory_order_release);
	atomic { lock_wait = outer; x_news = 1 };
	if
	:: ret == 0 -> lock = 0
	:: else -> skip
	fi
}

/* cpu_offline(X) from Y, then offline_wait: @ret 0 or 1 for -EDEADLK */
inline offline_req(lvl, ret, tok, n, i, h, ch)
{
	atomic { lock == 0 -> lock = TH_Y };	/* nobody else takes the lock here */
	// @src src/cpu/hotplug.c: atomic_store_explicit(&c->life.ctl_from, xc_self ? xc_self->life.cpu : -1, memory_order_relaxed);
	ctl_from = TH_Y;
	offline_done = 0;
	// @src src/cpu/hotplug.c: xc_cpu_request(c, XC_CTL_OFFLINE);
	atomic { ctl_x = OFFLINE_REQ; requested = 1; x_news = 1 };
	// @src src/cpu/hotplug.c: tok = wait_token();
	atomic { take_token(tok); req_token = tok };
	do
	// @src src/cpu/hotplug.c: while (xc_completion_wait_until(&c->life.offline_done, xc_now_ns() + XC_DEADLOCK_LOOK_NS))
	:: offline_done -> break
	:: PASS_ACTS(lvl, tok) ->
		serve(lvl, n, i, h, ch);
		count_empty(n, tok)
	od;
	ret = offline_result;
	lock = 0
}

/* A call's function on Y, at nesting level @lvl (its waits serve there), and its completion. */
proctype ycall(byte id; byte lvl; chan ret)
{
	chan ch = [0] of { bit };
	byte res, outer, tok, n, i, h;

	assert(!ran[id] && !(id == C && c_refused));	/* once; a refused call never runs */
	ran[id] = 1;
	if
	:: id == C && lvl >= 2 -> c_up = 1; WITNESS(6)	/* run by a serve inside a wait */
	:: id == C && lvl < 2 -> c_up = 1
	:: else -> skip
	fi;
	if
	:: id == C && CFN && !OFFLINE ->
		/* xc_cpu_online: wait for the lock; refused or given up, maybe once more */
		lock_spin(lvl, res, outer, tok, n, i, h, ch);
		if
		:: res != 0 ->
			if
			:: lock_spin(lvl, res, outer, tok, n, i, h, ch)
			:: skip
			fi
		:: else -> skip
		fi
	:: id == C && CFN && OFFLINE && !requested ->
		offline_req(lvl, res, tok, n, i, h, ch)
	:: id >= W && !OFFLINE || id == N && NFN && !OFFLINE ->
		lock_spin(lvl, res, outer, tok, n, i, h, ch)
	:: id >= W && OFFLINE && !requested ->
		offline_req(lvl, res, tok, n, i, h, ch)
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

/*
 * refuse_lock(Y, word @w) from X's look: a SPIN from the proof's token
 * @tok on, by a CAS of the exact word. Witness @wref: the refusal landed;
 * @wleft: a spin before the token left alone (literals, for check.sh).
 */
inline refuse_lock(w, tok, wref, wleft)
{
#ifdef MUTANT_NOTOKEN
	/* MUTANT: any SPIN, whichever spin it is */
	atomic {
		if
		:: STATE(lock_wait) == L_SPIN ->
			assert(c_up && above[TOKEN(lock_wait)]);
			lock_wait = lock_wait - L_SPIN + L_REFUSED;
			x_news = 1
		:: else -> skip
		fi
	}
#else
	if
	// @src src/run/wait.c: if ((word & XC_LOCK_STATE) != XC_LOCK_SPIN || !xc_lock_token_since(token, dl->token))
	:: STATE(w) == L_SPIN && TOKEN(w) >= tok ->
		atomic {
			if
			// @src src/run/wait.c: atomic_compare_exchange_strong_explicit(&xc_cpus[cpu].life.lock_wait, &word, token | XC_LOCK_REFUSED,
			:: lock_wait == w ->
				assert(c_up && above[TOKEN(w)]);
				lock_wait = w - L_SPIN + L_REFUSED;
				x_news = 1;
				WITNESS(wref)
			:: else -> WITNESS(12)	/* its spin ended, or one nested in it spins, since the read */
			fi
		}
	:: STATE(w) == L_SPIN && TOKEN(w) < tok -> WITNESS(wleft)
	:: STATE(w) != L_SPIN -> skip
	fi
#endif
}

/* X: its waiting call C to Y, its wait with the look, then its task loop's offline */
active proctype X()
{
	byte cpu, lk, emp, etok, word;
	byte dl_cpu = NONE, dl_lock, dl_token;
	bit proven, was;

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
		:: else -> dl_cpu = NONE; proven = 0; goto looked	/* no request: no look */
		fi;
		if
		:: cpu == NONE ->
			lk = 1;
			if
			:: proven ->
				cpu = dl_cpu;
#ifdef MUTANT_LATEWORD
				skip	/* MUTANT: the word read after the call was found not done (below) */
#else
				// @src src/run/wait.c: word = lock_word(cpu);
				word = lock_wait
#endif
			:: else ->
				// @src src/run/wait.c: cpu = lock_waiter(wi, &word);
				word = lock_wait;
				if
				:: STATE(word) == L_SPIN -> cpu = TH_Y
				:: else -> dl_cpu = NONE; proven = 0; WITNESS(10); goto looked
				fi
			fi
		:: else -> lk = 0
		fi;
		// @src src/run/wait.c: empty = atomic_load_explicit(&xc_cpus[cpu].life.served_empty, memory_order_acquire);
		atomic {
			emp = served_empty;
			etok = empty_token;
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
		// @src src/run/wait.c: if ((!dl->proven && count - dl->empty0 < 2) || ref_done(r))
		if
		:: !proven && emp < PROOF -> goto looked
		:: else -> skip
		fi;
		atomic {
			if
			:: done[C] -> goto looked
			:: else -> assert(c_up && above[etok])	/* the wait that served lies above C */
			fi
		};
#ifdef MUTANT_LATEWORD
		if
		:: lk && proven -> word = lock_wait
		:: else -> skip
		fi;
#endif
		if
		:: lk ->
			was = proven;
#ifdef MUTANT_NOCARRY
			dl_token = TOKEN(word);	/* MUTANT: the token of the word read */
#elif defined(MUTANT_NOLOWER)
			if
			:: !proven -> dl_token = etok	/* MUTANT: the first proof's token, kept */
			:: else -> skip
			fi;
#else
			if
			// @src src/run/wait.c: if (!dl->proven || !xc_lock_token_since(XC_EMPTY_TOKEN(empty), dl->token))
			:: !proven || etok < dl_token ->
				if
				:: proven -> WITNESS(15)	/* a later serve names an earlier spin above C */
				:: else -> skip
				fi;
				dl_token = etok
			:: else -> skip
			fi;
#endif
			proven = 1;
			if
			:: was -> refuse_lock(word, dl_token, 2, 11)
			:: else -> refuse_lock(word, dl_token, 1, 13)
			fi
		:: else ->
			dl_cpu = NONE;
			// @src src/run/wait.c: self->life.offline_result = -EDEADLK;
			atomic {
				assert(c_up && above[req_token]);
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
	assert(done[C] && (!NOWAIT || ran[N]) && lock == 0 && lock_wait == 0);
	assert(!requested || offline_done);
	assert(ran[C] != c_refused)
}
