/*
 * floor.pml - a Promela model of a worker's waits below its serve floor
 * (src/run/wait.c, "Serving while waiting"; src/proto/ring.c, "Below the floor"),
 * for spin.
 *
 * What it models, one access at a time:
 *   src/run/wait.c     wait_after_spin: a worker's wait serves its own CPU
 *                  (xc_wait_serve) until its call is done; below the floor
 *                  (below_floor: the `deep` flag) it serves through
 *                  serve_deep, and between serves it polls until something
 *                  is new (ready_done: the completion, or a held ring that
 *                  took entries since its last look, xc_rings_unlooked);
 *   src/run/run.c      run_calls(deep): the held rings run in order (an
 *                  entry's tail stored before its function runs, a
 *                  tombstone stepped over), or below the floor their
 *                  waiting calls refused (xc_rings_refuse_waited);
 *   src/proto/ring.c     ring_refuse_waited: every waiting entry between tail
 *                  and head, wherever it stands, behind nowait entries too:
 *                  the exchange of its fn for XC_RING_REFUSED, -ELOOP in
 *                  the waiter's record, then its completion; a nowait entry
 *                  stays queued; `looked` = head; ring_refused's exchange
 *                  of a refused doorbell's owner (RETRACT, below); the
 *                  tombstones that runs step over;
 *   src/api/call.c     a waiting call through a ring returns the record's
 *                  error once its completion is done (-ELOOP: refused);
 *                  ring_put into a full ring waits for room
 *                  (xc_ring_wait_room), serving its own CPU between looks;
 *   src/proto/ring.c     xc_ring_room: room, or -ELOOP while the target's
 *                  worker serves below its floor (worker.deep, stored by
 *                  run_calls at each serve: `deepA`), else another look;
 *                  a refused put makes no call, nowait or waiting.
 *
 * Processes. Worker A (CPU 0), whose waits are all below its floor (A's
 * stack is three quarters used: FLOOR = 1, so the wait of a call A runs
 * from its task loop is below it), and worker B (CPU 1), far from its
 * floor. Each worker is its task loop's process, and each call it runs is
 * a process of its own (Promela's recursion: the caller blocks until the
 * callee's process ends), so the calls and waits nest as on the worker's
 * stack (the call's nesting level: 1 for one its task loop runs). The
 * application's recursion of waiting calls between two CPUs, as in
 * tests/nest-depth.c: B's work item makes a waiting call REC to A; REC's
 * function makes a waiting call X to B; X's function sends A a nowait
 * call N and then a waiting call REC, through the same ring (B's to A),
 * and waits for it; and so on, RMAX X calls at most. T, a thread that is
 * no worker, sends A NBURST nowait calls and then a waiting one through
 * its own ring, and waits for it. Every ring is held by its worker (its
 * doorbell and the wakeup protocol are wakeup.pml's), its entries
 * numbered without wrapping, RSIZE of them untaken at most (a put into a
 * full ring waits for room, above); no slot, no urgent calls (they nest one
 * level at most and never wait: the slot's claim is held while its call
 * runs); a wait that serves nothing and sees nothing new blocks (a poll
 * that changes nothing), so a wait that never ends is an invalid end
 * state.
 *
 * RETRACT: T may also settle its waiting entry as the owner of a refused
 * doorbell does (ring_refused: tail not past it, then the exchange for
 * XC_RING_RETRACTED), at any time while A is below its floor. The code
 * never lets the two meet (a ring A holds is LINKED, so its owner's
 * doorbell pushes nothing and is never refused; a close empties the held
 * list), so this is a check of the exchange alone: exactly one of the two
 * exchanges reads the call, and the loser keeps its hands off the record.
 *
 * Properties:
 *   - every wait ends (no invalid end state): no hang for the nest's depth;
 *   - a worker below its floor nests at most one level more (asserted at
 *     each call's start: its level <= FLOOR + 1);
 *   - a call runs at most once; a refused call never runs; an entry that
 *     ran (its tail stored) is never refused;
 *   - FIFO per ring among the entries that run: each entry runs only once
 *     every earlier entry of its ring ran or is a tombstone (so a waiting
 *     call that returns 0 does so after every earlier nowait call ran);
 *   - RETRACT: exactly one of the refusal and the retraction wins an entry;
 *     the record of a retracted call is never written or completed;
 *   - at quiescence every nowait call ran, every waiting call ran or was
 *     refused (its caller got -ELOOP) or retracted, every ring is empty.
 *
 * Mutants (floor-mutant-*.pml):
 *   -DMUTANT_NOREFUSE   below the floor the rings are left as they are (the
 *                       code before commit 7160e0c, which ran only urgent
 *                       calls and the slot there): A and B wait for each
 *                       other for ever
 *   -DMUTANT_FRONTONLY  only a waiting entry at a ring's front is refused:
 *                       the same hang when a nowait entry is in front
 *   -DMUTANT_RUNFRONT   below the floor the rings run as above it: the nest
 *                       grows by a level per round of the recursion
 *   -DMUTANT_PLAINREFUSE (RETRACT) the refusal stores REFUSED after its
 *                       load instead of exchanging: both sides win
 *   -DMUTANT_ROOMWAITS  (RSIZE 1) a put into a full ring to a worker below
 *                       its floor waits for room, as before the sender
 *                       looked at worker.deep: B's X, whose nowait call
 *                       filled the ring, waits for room that only A's
 *                       unwinding makes, and A waits for X
 * Coverage witnesses: -DCOVER=n makes the n-th interesting step fail an
 * assertion, so spin proves the step reachable.
 *
 * A line "// @src FILE: TEXT" quotes the code it models; model/check.sh
 * fails if TEXT no longer occurs in FILE.
 */

#ifndef RMAX
#define RMAX 2			/* X calls the recursion may make */
#endif
#ifndef NBURST
#define NBURST 1		/* T's nowait calls before its waiting one (0: T sends nothing) */
#endif
#ifndef TWAIT
#define TWAIT 1			/* T's waiting call after them */
#endif
#ifndef RETRACT
#define RETRACT 0
#endif
#ifndef RSIZE
#define RSIZE 6			/* a ring's entries (RE: never full) */
#endif
#ifndef FLOOR
#define FLOOR 1			/* A's waits at this nesting level or deeper are below its floor */
#endif
#ifndef COVER
#define COVER 0
#endif
#define WITNESS(n)	assert(COVER != n)

#define A 0
#define B 1
/* rings: B's thread to A, T to A, A's thread to B */
#define R_BA 0
#define R_TA 1
#define R_AB 2
#define NR 3
#define RE 6			/* entries a ring may take in a run */
/* programs: what a call's function does */
#define P_TRIV 0		/* nothing that waits */
#define P_REC 1			/* on A: a waiting call X to B (while RMAX allows), and its wait */
#define P_X 2			/* on B: a nowait call N to A, a waiting call REC to A, and its wait */
#define P_START 3		/* B's work item: a waiting call REC to A, and its wait */
/* an entry's fn */
#define F_CALL 0		/* a function, or XC_RING_WAITED */
#define F_REFUSED 1		/* XC_RING_REFUSED */
#define F_RETRACTED 2		/* XC_RING_RETRACTED */
#define NC 12			/* calls in a run, at most */
#define NONE 255

byte rcall[NR * RE];		/* the call in each ring's entry */
byte rhead[NR], rtail[NR];
byte rlooked[NR];		/* ring->looked: head at the last refusal's look */

byte ncalls;			/* calls made */
byte nx;			/* X calls made (the recursion's budget) */
byte fnst[NC];			/* each call's entry fn */
bit waited[NC];			/* a waiting call (XC_RING_WAITED) */
byte prog[NC];
byte cring[NC], cidx[NC];	/* where its entry stands */
bit done[NC];			/* the waiter's completion */
bit ran[NC], refused[NC], retracted[NC];	/* ghosts */
bit dead[NC];			/* ghost: its waiter returned (the record is gone) */
byte a_deep;			/* ghost: A's waits below the floor under way */
bit deepA;			/* worker.deep of A: its last serve was below the floor */
byte waits;			/* ghost: waits under way, A's and B's */

/* a held ring of @cpu with entries not taken */
#define PENDING(cpu)	((cpu) == A && (rtail[R_BA] != rhead[R_BA] || rtail[R_TA] != rhead[R_TA]) || \
			 (cpu) == B && rtail[R_AB] != rhead[R_AB])
/* xc_rings_unlooked: a held ring of A took entries since the last look */
#define UNLOOKED	(rhead[R_BA] != rlooked[R_BA] || rhead[R_TA] != rlooked[R_TA])

/* A new call @id of program @p, waiting or not, put in ring @r (ring_put: the entry, then head) */
inline put(id, p, w, r)
{
	atomic {
		id = ncalls;
		ncalls++;
		assert(ncalls <= NC && rhead[r] < RE);
		prog[id] = p;
		waited[id] = w;
		cring[id] = r;
		cidx[id] = rhead[r];
		rcall[r * RE + rhead[r]] = id;
		rhead[r]++
	}
}

/*
 * ring_put of a call @id of program @p to ring @r by @cpu's thread (NONE:
 * T, no worker) at level @lvl: room, the put, ok = 1; the ring full and
 * its target (A; B is never deep) serving below its floor, refused
 * (-ELOOP), ok = 0, no call made; else a serve of the caller's own CPU and
 * a poll until something changed (xc_ring_wait_room, xc_wait_step).
 */
inline put_wait(id, p, w, rg, cpu, lvl, ok, n, r, i, old, ch)
{
	do
	:: atomic { rhead[rg] - rtail[rg] < RSIZE -> put(id, p, w, rg); ok = 1 }; break
#ifndef MUTANT_ROOMWAITS
	// @src src/proto/ring.c: if (atomic_load_explicit(&c->worker.deep, memory_order_relaxed))
	:: atomic { rhead[rg] - rtail[rg] >= RSIZE && rg != R_AB && deepA ->
		ok = 0;
		if :: cpu == B -> WITNESS(10) :: else -> WITNESS(11) fi
	   }; break
#endif
	:: atomic { rhead[rg] - rtail[rg] >= RSIZE && !(rg != R_AB && deepA) };
		n = 0;
		if
		:: cpu != NONE -> serve_run(cpu, lvl, n, r, i, old, ch)
		:: else -> skip
		fi;
		if
		:: n == 0 ->
			(rhead[rg] - rtail[rg] < RSIZE || rg != R_AB && deepA ||
			 cpu != NONE && PENDING(cpu))
		:: else -> skip
		fi
	od;
	n = 0
}

/*
 * run_calls(c, false): the held rings of @cpu in order, each entry's tail
 * stored before its function runs (at level @lvl + 1); @n how many.
 */
inline serve_run(cpu, lvl, n, r, i, old, ch)
{
	// @src src/run/run.c: atomic_store_explicit(&c->worker.deep, deep, memory_order_relaxed);
	if
	:: cpu == A -> deepA = 0
	:: else -> skip
	fi;
	do
	:: atomic {
		/* a ring with entries: their order across rings is any */
		if
		:: cpu == A && rtail[R_BA] != rhead[R_BA] -> r = R_BA
		:: cpu == A && rtail[R_TA] != rhead[R_TA] -> r = R_TA
		:: cpu == B && rtail[R_AB] != rhead[R_AB] -> r = R_AB
		fi;
		i = rcall[r * RE + rtail[r]];
		// @src src/run/ring_run.c: atomic_store_explicit(&r->tail, t + 1, memory_order_release);
		rtail[r]++;
		n++;
		/* its fn, read before the tail's store in calls_run: no exchange meets an ordinary run */
		old = fnst[i]
	   };
		if
		:: old == F_REFUSED -> WITNESS(5)	/* a tombstone */
		:: old == F_RETRACTED -> WITNESS(9)
		:: else ->
			run wcall(cpu, i, lvl + 1, ch);
			ch?_
		fi
	:: else -> break
	od;
	r = 0; i = 0; old = 0		/* dead: not part of the state */
}

/*
 * serve_deep: run_calls(c, true), no urgent call or slot here:
 * xc_rings_refuse_waited over A's held rings; @n how many were refused.
 */
inline serve_deep(n, r, t, h, e, i, old)
{
	deepA = 1;
#ifdef MUTANT_RUNFRONT
	serve_run(A, lvl, n, r, i, old, ch);	/* MUTANT: the rings run below the floor too */
	rlooked[R_BA] = rhead[R_BA];
	rlooked[R_TA] = rhead[R_TA]
#else
	r = R_BA;
	do
	:: r <= R_TA ->
		atomic {
			t = rtail[r];		/* this worker's own */
			// @src src/run/ring_run.c: uint32_t h = atomic_load_explicit(&r->head, memory_order_acquire);
			h = rhead[r];
			e = h;
#ifdef MUTANT_NOREFUSE
			e = t;		/* MUTANT: nothing refused, the entries left queued */
#endif
#ifdef MUTANT_FRONTONLY
			if
			:: t != h -> e = t + 1	/* MUTANT: only the entry at the front */
			:: else -> skip
			fi
#endif
		};
		do
		:: t != e ->
			// @src src/run/ring_run.c: if (atomic_load_explicit(&e->fn, memory_order_relaxed) != XC_RING_WAITED)
			atomic {
				i = rcall[r * RE + t];
				old = (waited[i] && fnst[i] == F_CALL -> 1 : 0);
				t++
			};
			if
			:: old ->
#ifdef MUTANT_PLAINREFUSE
				/* MUTANT: a store after the load, no exchange */
				atomic { old = F_CALL; fnst[i] = F_REFUSED };
#else
				// @src src/run/ring_run.c: if (atomic_exchange_explicit(&e->fn, XC_RING_REFUSED, memory_order_relaxed) != XC_RING_WAITED)
				atomic { old = fnst[i]; fnst[i] = (old == F_CALL -> F_REFUSED : old) };
#endif
				if
				:: old == F_CALL ->
					/* -ELOOP in the record, then its completion */
					// @src src/run/ring_run.c: atomic_store_explicit(&w->err, -ELOOP, memory_order_relaxed);
					// @src src/run/ring_run.c: xc_complete(w->done);	/* the last touch of the waiter's memory */
					atomic {
						assert(!ran[i] && !retracted[i]);	/* ran: never refused; one side wins */
						assert(!dead[i]);
						refused[i] = 1;
						done[i] = 1;
						n++;
						if
						:: rcall[r * RE + rtail[r]] != i -> WITNESS(1)	/* behind another entry */
						:: else -> skip
						fi;
						if
						:: r == R_TA -> WITNESS(2)
						:: else -> skip
						fi
					}
				:: else -> WITNESS(7)		/* its owner took it back first */
				fi
			:: else -> skip
			fi
		:: else ->
			// @src src/run/ring_run.c: r->looked = h;
			atomic { rlooked[r] = h; r++ };
			break
		od
	:: else -> break
	od;
	r = 0; t = 0; h = 0; e = 0; i = 0; old = 0	/* dead: not part of the state */
#endif
}

/*
 * wait_after_spin for call @c by the worker of @cpu, in a call at level
 * @lvl: serve (below the floor: serve_deep), and when that did nothing,
 * poll until ready (ready_done); the caller's result is the record's.
 */
inline wait_for(cpu, c, lvl, n, r, t, h, e, i, old, ch)
{
	// @src src/run/wait.c: bool deep = below_floor(self);
	atomic {
		waits++;
		if
		:: cpu == A && lvl >= FLOOR -> a_deep++
		:: else -> skip
		fi
	};
	do
	:: done[c] -> break
	:: else ->
		n = 0;
		// @src src/run/wait.c: if (below_floor(self))
		if
		:: cpu == A && lvl >= FLOOR -> serve_deep(n, r, t, h, e, i, old)
		:: else -> serve_run(cpu, lvl, n, r, i, old, ch)
		fi;
		if
		:: n == 0 ->
			/* ready_done: the completion, or (deep) a ring with news, else anything pending */
			// @src src/run/wait.c: (w->deep ? xc_calls_pending_unheld(c) || xc_rings_unlooked(c) : xc_w2_pending(c, false)) ||
			if
			:: cpu == A && lvl >= FLOOR -> (done[c] || UNLOOKED)
			:: else -> (done[c] || PENDING(cpu))
			fi
		:: else -> skip
		fi
	od;
	atomic {
		waits--;
		if
		:: cpu == A && lvl >= FLOOR -> a_deep--
		:: else -> skip
		fi
	};
	/* the caller's result: -ELOOP if refused */
	if
	:: refused[c] && cpu == B -> WITNESS(3)
	:: else -> skip
	fi
}

/* A call's function on worker @cpu at nesting level @lvl, then its completion */
proctype wcall(byte cpu; byte id; byte lvl; chan ret)
{
	chan ch = [0] of { bit };
	byte c, n, r, t, h, e, i, old;
	bit ok;

	/* once, never refused, and in its ring's order */
	assert(!ran[id] && fnst[id] == F_CALL && !refused[id] && !retracted[id]);
	assert(cpu != A || lvl <= FLOOR + 1);	/* below the floor, one level more at most */
	ran[id] = 1;
	atomic {
		i = 0;
		do
		:: i < cidx[id] ->
			c = rcall[cring[id] * RE + i];
			assert(ran[c] || fnst[c] != F_CALL);
			i++
		:: else -> break
		od
	};
	if
	:: prog[id] == P_TRIV && cpu == A && cring[id] == R_BA && refused[id + 1] -> WITNESS(4)	/* N after its REC was refused */
	:: prog[id] == P_TRIV && waited[id] && cring[id] == R_TA -> WITNESS(6)
	:: else -> skip
	fi;
	if
	:: prog[id] == P_REC && nx < RMAX ->
		nx++;
		put_wait(c, P_X, 1, R_AB, cpu, lvl, ok, n, r, i, old, ch);
		wait_for(cpu, c, lvl, n, r, t, h, e, i, old, ch)
	:: prog[id] == P_X ->
		put_wait(c, P_TRIV, 0, R_BA, cpu, lvl, ok, n, r, i, old, ch);
		put_wait(c, P_REC, 1, R_BA, cpu, lvl, ok, n, r, i, old, ch);
		if
		:: ok -> wait_for(cpu, c, lvl, n, r, t, h, e, i, old, ch)
		:: else -> ok = 0	/* -ELOOP: no call made, no wait */
		fi
	:: prog[id] == P_START ->
		put_wait(c, P_REC, 1, R_BA, cpu, lvl, ok, n, r, i, old, ch);
		if
		:: ok -> wait_for(cpu, c, lvl, n, r, t, h, e, i, old, ch)
		:: else -> skip
		fi
	:: else -> skip
	fi;
	/* xc_call_complete: a waiting call's completion */
	if
	:: waited[id] -> atomic { assert(!dead[id]); done[id] = 1 }
	:: else -> skip
	fi;
	ret!0
}

/* A's task loop: serves its rings; at rest with nothing queued */
active proctype workerA()
{
	chan ch = [0] of { bit };
	byte n, r, i, old;

end:	do
	:: PENDING(A) -> serve_run(A, 0, n, r, i, old, ch)
	od
}

/* B's task loop: its work item (the recursion's start), and its rings */
active proctype workerB()
{
	chan ch = [0] of { bit };
	byte n, r, i, old, id;

	atomic { id = ncalls; ncalls++; prog[id] = P_START; cring[id] = NONE };
	run wcall(B, id, 0, ch);	/* a work item: not from a ring, its function at level 1 */
	ch?_;
end:	do
	:: PENDING(B) -> serve_run(B, 0, n, r, i, old, ch)
	od
}

/* T: no worker; NBURST nowait calls to A, then a waiting one, and its wait */
active proctype sender()
{
	chan ch = [0] of { bit };
	byte k, id, old, n, r, i;
	bit ok;

	k = 0;
	do
	:: k < NBURST -> put_wait(id, P_TRIV, 0, R_TA, NONE, 0, ok, n, r, i, old, ch); k++
	:: else -> break
	od;
	if
	:: TWAIT ->
		put_wait(id, P_TRIV, 1, R_TA, NONE, 0, ok, n, r, i, old, ch);
		if
		:: !ok -> goto out	/* -ELOOP: no call made */
		:: else -> skip
		fi;
#if RETRACT
		/* as a refused doorbell's owner (ring_refused): tail not past it, then the exchange */
		if
		:: atomic {
			a_deep > 0 && rtail[R_TA] <= cidx[id] ->
			// @src src/proto/ring.c: xc_func_t fn = atomic_exchange_explicit(&r->e[idx & r->mask].fn, XC_RING_RETRACTED,
			old = fnst[id];
			fnst[id] = F_RETRACTED
		   };
			if
			:: old == F_CALL ->
				assert(!refused[id]);	/* one side wins */
				retracted[id] = 1;
				dead[id] = 1;		/* -ENXIO: it returns, the record is gone */
				goto out
			:: old == F_REFUSED -> WITNESS(8)	/* it waits for the completion: -ELOOP */
			fi
		:: skip
		fi;
#endif
		/* plain_wait: no worker, it serves nothing */
		done[id];
		dead[id] = 1
	:: else -> skip
	fi;
out:	skip
}

/* At quiescence (no process can move): every call settled, every ring empty */
active proctype quiescence()
{
	byte i;

	timeout ->
	assert(waits == 0);		/* every wait ended */
	i = 0;
	do
	:: i < ncalls ->
		assert(waited[i] || ran[i] || prog[i] == P_START);
		assert(!waited[i] || ran[i] + refused[i] + retracted[i] == 1);
		assert(!waited[i] || retracted[i] || done[i]);
		i++
	:: else -> break
	od;
	assert(rtail[R_BA] == rhead[R_BA] && rtail[R_TA] == rhead[R_TA] && rtail[R_AB] == rhead[R_AB])
}
