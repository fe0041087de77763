/*
 * urgentmark.pml - a Promela model of the bracket around the application's
 * code on one thread (src/base/thread.h, xc_user_in / xc_user_out) and of the
 * urgent function's mark (xc_tls.in_urgent_fn), against the urgent signal
 * handler (src/proto/urgent.c), for spin.
 *
 * What it models, one access at a time:
 *   src/base/thread.h   xc_user_in and xc_user_out: for XC_USER_CALL and
 *                  XC_USER_URGENT the count (in_call++, or the flat
 *                  in_call = 1 of the idle poll's slot run, slot.c), for
 *                  XC_USER_URGENT the mark saved and set inside the count,
 *                  put back on the way out, still inside the count;
 *                  XC_USER_WORK neither (work.c);
 *   src/proto/urgent.c   urgent_handler: where in_call is 0 it runs the urgent
 *                  calls that came (xc_in_urgent++, xc_run_urgent, each
 *                  through the same bracket), else it defers;
 *   src/api/call.c     call_inline: a function on the thread that calls its own
 *                  CPU runs the callee inline, through the same bracket
 *                  (XC_URGENT or not); call.h's xc_call_run_fn is the same
 *                  bracket for queued calls.
 *
 * Processes: the thread, which nests brackets to a depth of MAXD (the
 * task loop's calls, urgent calls and work items at the bottom, the idle
 * poll's flat slot run; inside a call's or an urgent function, inline
 * calls of either kind and, for a call's function, the calls a wait
 * serves), each bracket's body one or more steps of the application's
 * code; and the urgent handler, which lands between any two of the
 * thread's steps, NSIG times at most (realtime signals queue). The handler
 * runs on the thread: nothing of the thread's moves while it runs, so it
 * is one atomic block; blocked while it runs, the urgent signal does not
 * nest (sa_mask). Each of its runs takes the urgent queue and runs one
 * urgent function, which may call its own CPU inline (INLINE: an urgent
 * call, or a plain one); an urgent function on the thread may as well.
 *
 * Properties:
 *   - P1, the rules: whenever the body of an urgent function runs, on the
 *     thread or in the handler, the mark is set (asserted at every step of
 *     the application's code: live counts the urgent bodies begun and not
 *     ended, the thread's and the handler's);
 *   - P2: once the thread's outermost bracket is left, the mark and the
 *     count are clear;
 *   - P3 (-DP3=0 leaves it out): nothing interrupts an urgent function:
 *     where the handler runs (in_call 0) the mark is clear, and the handler
 *     leaves it as it found it; so whatever a handler does, it cannot unmark
 *     an urgent function (the kernel's rule for an IPI handler, which runs
 *     with interrupts off, extended to urgent functions);
 *   - no invalid end state.
 *
 * Mutants, built from this file with a -D macro (urgentmark-mutant-*.pml):
 *   -DMUTANT_MARKCLEAR  the code before the bracket (xc_call_run_fn): the
 *                       mark set before the count and cleared on the way
 *                       out, not put back: an urgent function interrupted
 *                       before its count runs unmarked once the handler's
 *                       urgent functions clear it (P1)
 *   -DMUTANT_CLEAREXIT  the count first, but the mark cleared on the way
 *                       out: an urgent function that ran an urgent call
 *                       inline goes on unmarked (P1, with INLINE)
 *   -DMUTANT_MARKFIRST  the mark set before the count, put back on the way
 *                       out (call_inline before the bracket): the handler
 *                       lands inside an urgent function (P3)
 * Coverage witnesses: -DCOVER=n makes the n-th interesting step fail an
 * assertion, so spin proves the step reachable.
 *
 * A line "// @src FILE: TEXT" quotes the code it models; model/check.sh
 * fails if TEXT no longer occurs in FILE.
 */

#ifndef MAXD
#define MAXD 3			/* brackets nested on the thread */
#endif
#ifndef NSIG
#define NSIG 2			/* urgent signals delivered in a run */
#endif
#ifndef INLINE
#define INLINE 1		/* an urgent function may call its own CPU (inline) */
#endif
#ifndef P3
#define P3 1			/* assert P3 (a mutant's run may leave it out, to show P1) */
#endif
#ifndef COVER
#define COVER 0
#endif
#define WITNESS(n)	assert(COVER != n)

/* enum xc_user_kind, as far as the marks go */
#define K_CALL   0		/* XC_USER_CALL: counted */
#define K_URGENT 1		/* XC_USER_URGENT: counted and marked */
#define K_WORK   2		/* XC_USER_WORK: neither */
#define K_FLAT   3		/* XC_USER_CALL with flat: in_call = 1 / = 0 (the idle poll's slot run) */

byte in_call;			/* xc_tls.in_call */
bit mark;			/* xc_tls.in_urgent_fn */
bit in_urgent;			/* xc_tls.in_urgent: inside the handler */
byte sigs = NSIG;		/* urgent signals still to come */
byte live;			/* ghost: urgent function bodies begun and not ended */
bit in_work;			/* ghost: the thread is in a work item */

/* Every step of the application's code: P1 */
#define USER_STEP	assert(live == 0 || mark)

/*
 * xc_user_in(kind, flat): the count first, then the mark saved and set.
 * @saved is where the bracket keeps what it found (struct xc_user_mark).
 */
inline user_in(kind, saved)
{
#if defined(MUTANT_MARKCLEAR) || defined(MUTANT_MARKFIRST)
	/* MUTANT: the mark before the count */
	if
	:: kind == K_URGENT -> saved = mark
	:: else -> skip
	fi;
	if
	:: kind == K_URGENT -> mark = 1
	:: else -> skip
	fi;
#endif
	if
	// @src src/base/thread.h: xc_tls.in_call++;
	:: kind == K_CALL || kind == K_URGENT -> in_call++
	// @src src/base/thread.h: xc_tls.in_call = 1;
	:: kind == K_FLAT -> in_call = 1
	:: else -> skip
	fi;
#if !defined(MUTANT_MARKCLEAR) && !defined(MUTANT_MARKFIRST)
	if
	// @src src/base/thread.h: m.urgent_fn = xc_tls.in_urgent_fn;
	:: kind == K_URGENT -> saved = mark
	:: else -> skip
	fi;
	if
	// @src src/base/thread.h: xc_tls.in_urgent_fn = 1;
	:: kind == K_URGENT -> mark = 1
	:: else -> skip
	fi;
#endif
	if
	:: kind == K_URGENT -> live++
	:: else -> skip
	fi
}

/* xc_user_out(kind, flat, m): the mark put back inside the count, then the count. */
inline user_out(kind, saved)
{
	if
	:: kind == K_URGENT -> live--
	:: else -> skip
	fi;
#if defined(MUTANT_MARKCLEAR) || defined(MUTANT_MARKFIRST)
	if
	// @src src/base/thread.h: xc_tls.in_call--;
	:: kind == K_CALL || kind == K_URGENT -> in_call--
	// @src src/base/thread.h: xc_tls.in_call = 0;
	:: kind == K_FLAT -> in_call = 0
	:: else -> skip
	fi;
	if
#ifdef MUTANT_MARKCLEAR
	:: kind == K_URGENT -> mark = 0		/* MUTANT: cleared, not put back */
#else
	:: kind == K_URGENT -> mark = saved
#endif
	:: else -> skip
	fi
#else
	if
	:: kind == K_URGENT ->
		if
		:: saved -> WITNESS(3)	/* an inner urgent bracket puts back a set mark */
		:: else -> skip
		fi;
		// @src src/base/thread.h: xc_tls.in_urgent_fn = m.urgent_fn;
		mark = saved
	:: else -> skip
	fi;
#ifdef MUTANT_CLEAREXIT
	if
	:: kind == K_URGENT -> mark = 0		/* MUTANT: cleared, not put back */
	:: else -> skip
	fi;
#endif
	if
	:: kind == K_CALL || kind == K_URGENT -> in_call--
	:: kind == K_FLAT -> in_call = 0
	:: else -> skip
	fi
#endif
}

/*
 * urgent_handler(): lands where the thread stands (between two of its
 * steps); runs urgent calls where in_call is 0, else defers (the call
 * loop runs them after the function returns: wakeup.pml). One urgent
 * function a run, through the bracket, which may call its own CPU inline.
 */
active proctype handler()
{
	bit found, s1, s2;
	byte k;

	do
	:: atomic {
		sigs > 0 ->
		sigs--;
		if
		// @src src/run/urgent_signal.c: if (c && !xc_in_call) {
		:: in_call == 0 ->
			assert(!P3 || mark == 0);	/* P3 */
			found = mark;
			if
			:: in_work -> WITNESS(9)	/* in the middle of a work item */
			:: else -> skip
			fi;
			// @src src/run/urgent_signal.c: xc_in_urgent++;
			in_urgent = 1;
			/* xc_run_urgent: each call through xc_call_run_fn's bracket */
			// @src src/run/run.h: xc_user_run(XC_USER_URGENT, fn, arg);
			user_in(K_URGENT, s1);
			USER_STEP;
			if
			:: INLINE ->
				/* call_inline: XC_URGENT or not, to its own CPU */
				if
				:: k = K_URGENT; WITNESS(4)
				:: k = K_CALL; WITNESS(5)
				fi;
				user_in(k, s2);
				USER_STEP;
				user_out(k, s2);
				USER_STEP
			:: else -> skip
			fi;
			user_out(K_URGENT, s1);
			in_urgent = 0;
			assert(!P3 || mark == found);	/* P3: the handler puts back what it found */
			WITNESS(1)
		:: else ->
			WITNESS(2)			/* deferred: in a call's function */
		fi
	   }
	:: sigs == 0 -> break
	od
}

/*
 * The thread: brackets nested to MAXD, each one's body the application's
 * code. At the bottom (d == 0): the task loop's calls, urgent calls and
 * work items, and the idle poll's flat slot run. Inside a call's function
 * (CALL, FLAT): calls a wait serves, inline calls of either kind; inside an
 * urgent function, inline calls (INLINE); inside a work item, inline calls.
 */
active proctype thread()
{
	byte d = 0;
	byte kind[MAXD];
	bit saved[MAXD];
	byte k;

	do
	:: d < MAXD && (d == 0 || kind[d - 1] != K_URGENT || INLINE) ->
		/* which bracket comes next, at this depth */
		if
		:: d == 0 -> k = K_CALL
		:: d == 0 -> k = K_URGENT
		:: d == 0 -> k = K_WORK
		:: d == 0 -> k = K_FLAT
		:: d > 0 && kind[d - 1] != K_URGENT -> k = K_CALL
		:: d > 0 && kind[d - 1] != K_URGENT -> k = K_URGENT
		:: d > 0 && kind[d - 1] == K_URGENT && INLINE -> k = K_URGENT
		:: d > 0 && kind[d - 1] == K_URGENT && INLINE -> k = K_CALL
		fi;
		if
		:: d > 0 && kind[d - 1] == K_URGENT && k == K_URGENT -> WITNESS(6)
		:: d > 0 && kind[d - 1] == K_WORK && k == K_URGENT -> WITNESS(7)
		:: d > 0 && kind[d - 1] == K_FLAT && k == K_URGENT -> WITNESS(8)
		:: else -> skip
		fi;
		kind[d] = k;
		if
		:: k == K_WORK -> in_work = 1
		:: else -> skip
		fi;
		user_in(k, saved[d]);
		d++;
		USER_STEP
	:: d > 0 ->
		USER_STEP
	:: d > 0 ->
		d--;
		user_out(kind[d], saved[d]);
		if
		:: kind[d] == K_WORK -> in_work = 0
		:: else -> skip
		fi;
		if
		:: d == 0 -> assert(mark == 0 && in_call == 0)	/* P2 */
		:: else -> USER_STEP
		fi
	:: d == 0 -> break
	od;
	assert(mark == 0 && in_call == 0)
}
