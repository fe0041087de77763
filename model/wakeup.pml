/*
 * wakeup.pml - a Promela model of libxcall's wakeup protocol, for spin.
 *
 * It models, one atomic access at a time, the code in
 *   src/base/llist.h    xc_llist_push (reports empty -> non-empty), xc_llist_take,
 *                  xc_llist_close, xc_llist_open
 *   src/api/call.c     call_push / call_kick (kick only on empty -> non-empty),
 *                  xc_calls_pending (W2 for both call queues and the slot)
 *   src/run/run.c      xc_call_invoke (xc_in_call around a call's fn), run_list,
 *                  xc_run_calls, xc_run_urgent (loops until the queue stays
 *                  empty), xc_call_returned (call.h), xc_drain_calls
 *   src/run/slot.c     xc_slot_call and the straight path's xc_call_single
 *                  (call.c) with xc_slot_publish (call.h: claim, publish =
 *                  S1), xc_slot_finish(_straight) (kick, wait, release),
 *                  xc_slot_run, slot_run_published and the idle poll's
 *                  xc_slot_run_idle (then xc_call_returned), xc_slot_close,
 *                  xc_slot_open; xc_slot_pending (wake.h)
 *   src/run/work.c     xc_queue_work (push, kick on empty -> non-empty),
 *                  xc_work_queued, xc_run_one_work, xc_drain_work
 *   src/proto/wake.c     xc_kick (wake.h: S2 and elision; wake.c: S3, free ride),
 *                  xc_idle_wait (wait.c: W1..W4), xc_idle_state_set
 *                  (wake.h); with PAIR the completions (wait.c): xc_sync_spin,
 *                  sync_wait_after_spin (sync_ask_wake, ready_sync, the loop
 *                  that runs the waiter's own calls), xc_sync_complete and
 *                  xc_sync_wake (the completer kicks a waiting worker); with
 *                  ATTACHED xc_kick's SLEEPING_FD case and kick_fd (the
 *                  eventfd write, fd_kicks_done), xc_fd_sleep_begin (W1, W2,
 *                  the exchange of "do not sleep"), xc_fd_sleep_end (W4),
 *                  fd_settle (fd_kicks_seen, the read), xc_fd_quiesce
 *   src/proto/urgent.c   xc_kick_urgent (RUNNING: signal; else xc_kick), the handler
 *                  (defers while xc_in_call is nonzero, else xc_run_urgent)
 *   src/cpu/worker.c   worker_loop (calls, then one work item), cpu_idle,
 *                  ready_idle, task_work_pending, ctl_pending, cpu_offline,
 *                  cpu_drain, cpu_park; with FOLLOW os_suspect, cpu_taken,
 *                  the park watch (park_watch) and taken_cpu_reopen
 *   src/cpu/hotplug.c  xc_cpu_offline (store ctl = OFFLINE, then xc_kick),
 *                  xc_cpu_online (xc_cpu_open, xc_park_release); with FOLLOW
 *                  both under the hotplug lock, with user_offline, online
 *                  and the -ENXIO of a CPU the OS has
 *   src/cpu/follow.c   (FOLLOW) xc_os_elsewhere, the cheap check; xc_os_check
 *                  and xc_os_come_back, the full check, as one read of what
 *                  the OS allows
 *   src/proto/ring.c     (RING) the per-sender call rings: ring_put and
 *                  xc_ring_doorbell (src/proto/ring.h: R1, R2), xc_ring_doorbell_slow
 *                  (R3: the CAS IDLE -> LINKED and the push on callq, S1),
 *                  ring_refused, xc_ring_take_doorbells, ring_run, calls_run
 *                  and entry_run, xc_rings_run, xc_rings_pending (W2),
 *                  xc_rings_release (U1-U3, before W1), xc_rings_close (the
 *                  offline drain);
 *                  the owners without a fence: F1, C, rings_unfenced and
 *                  xc_owners_barrier (U2': membarrier, or keep_all while
 *                  another's is under way, and xc_idle_wait's retry);
 *                  xc_ring_asym (src/proto/barrier.c), which each fenced
 *                  call reads to decide on F1, changing at any moment;
 *                  slot_in_order (src/api/call.c); with NEST (RING and PAIR)
 *                  xc_ring_wait_room, ring_put's second read of head,
 *                  ring_refused's settling of its entry (TAKEN, RETRACTED)
 *                  and the close's closing mode (entry_run, ring_run)
 *   src/cpu/attach.c   (ATTACHED) the attached thread's loop around xc_poll:
 *                  xc_attached_poll (attached_ctl and xc_cpu_offline_served, the
 *                  calls, work items), ready_attached, xc_worker_sleep_begin
 *                  and _end; (DETACH) attached_leave (the trylock loop, the
 *                  drain, xc_fd_quiesce, the close), and xc_cpu_online's
 *                  case of a CPU no thread is attached to (src/cpu/hotplug.c)
 * with the labels S1-S3 and W1-W4 of the argument in src/proto/wake.c's header.
 *
 * Processes: a worker per CPU (one, or two with PAIR; with ATTACHED, CPU 0's
 * is an attached thread); NSENDERS senders,
 * each queueing NCALLS calls on CPU 0 (the first NURGENT of them with
 * XC_URGENT, on the urgent queue; the others either through the mailbox
 * slot, when they can claim it, or through the call queue, as spin
 * chooses); with NURGENT > 0 the worker's urgent signal handler; with
 * NWORK > 0 a work queuer that queues NWORK work items on CPU 0; with
 * HOTPLUG a requester that takes CPU 0 offline and, with ONLINE, back
 * online; with FOLLOW an OS that takes CPU 0 away; with RING the owners'
 * store buffers (store_buffer); and a quiescence checker. Each call has its own bit (sender i's
 * call j is bit i*NCALLS+j; with PAIR, worker w's waiting call is bit
 * NSENDERS*NCALLS+w), and so has each work item, so the model knows which
 * calls and items are queued, accepted, refused and run.
 *
 * PAIR: two workers that wait on each other's calls. Each starts with one
 * work item whose fn is xc_call_single(the other CPU, fn, arg, XC_WAIT),
 * through the other's slot or its call queue (spin chooses: the slot is
 * taken, ablated, or the call is a many call). The waiter spins, asks to be
 * woken, and runs its own incoming calls while it waits, sleeping on its
 * own idle word (xc_idle_wait with ready_sync); the other worker runs the
 * call, and its completion kicks the waiter (wake.c, "Completions").
 *
 * FOLLOW: follow_os on (src/cpu/follow.c). The os process may, between any two
 * steps, take CPU 0 away (os_has = false), up to NTAKE times; the kernel
 * moves the worker's thread off it at a later step (elsewhere: what the
 * cheap check xc_os_elsewhere reads); the OS gives the CPU back, or keeps it
 * for good. The worker looks where the code does: at the task loop's top
 * (os_suspect: os_recheck || elsewhere, then the full check xc_os_check,
 * one snapshot of os_has), in the idle poll and the re-checks (ready_idle's
 * os_suspect), and in cpu_idle before it runs anything. A sleep ends after
 * XC_OS_WATCH_NS (modelled while the CPU is taken only: otherwise the full
 * check it leads to finds nothing), sets os_recheck and leaves for the task
 * loop. The check after each call's fn (xc_os_after_run) sets os_recheck
 * from the same elsewhere that the task loop's top reads: not modelled
 * apart. cpu_taken: park = WAIT, offline_by_os, cpu_drain (the queues and
 * the slot closed, everything queued run, online = false), cpu_park. The
 * park loop: a request (OFFLINE: completed at once), park released, or the
 * park watch: xc_os_come_back (c->taken cleared once the OS gives the CPU
 * back), xc_os_check (taken while offline), then taken_cpu_reopen under a
 * trylock of the hotplug lock: user_offline -> stay parked; park still WAIT
 * -> xc_cpu_open and back to the task loop. A watch that changes nothing,
 * and a failed trylock, are stutter steps and left out, so that a parked
 * worker with nothing to do is blocked and quiescence can be seen.
 * xc_cpu_offline and xc_cpu_online take the lock and race all of it.
 *
 * ATTACHED: CPU 0's worker is an application thread attached to it
 * (src/cpu/attach.c), in its own event loop: xc_poll (xc_attached_poll: an
 * offline request, the calls, then work items, each followed by the calls),
 * then xc_worker_sleep_begin (W1: idle = SLEEPING_FD; W2: ready_attached,
 * the same loads as ready_idle; found something: exchange idle -> RUNNING
 * and return 1), the loop's own wait (W3), xc_worker_sleep_end (W4:
 * exchange idle -> RUNNING), and around again. The thread is RUNNING except
 * between W1 and W4: it never polls. Senders kick it through the same
 * xc_kick: from SLEEPING_FD the S3 CAS to WAKING is followed by a write to
 * its eventfd and fd_kicks_done++ (release). An offline request drains the
 * CPU and completes offline_done as cpu_offline does, but the thread does
 * not park: its loop goes on, sleeping with the queues closed, until
 * xc_cpu_online reopens them. The urgent handler runs on it as on a worker.
 * DETACH: at its loop's top the thread may detach (attached_leave):
 * xc_fd_sleep_end, the hotplug lock by trylock (serving an offline request
 * and the calls while a requester holds it), the drain of an online CPU,
 * xc_fd_quiesce (until fd_kicks_done == fd_kicks_seen), the close of the
 * eventfd, c->attached = false. The requester then takes the hotplug lock
 * for each request, as with FOLLOW, and xc_cpu_online of a CPU with no
 * thread attached only clears user_offline.
 *
 * RING: plain calls go through per-sender rings, as the code does by default
 * (without RING, plain calls are descriptors on callq: XC_ABLATE_RING, the
 * seeds' design; urgent calls are descriptors either way). Each plain
 * sender owns one ring to CPU 0 and makes NCALLS calls through it, the last
 * one XC_WAIT with RWAIT: through the slot when its ring holds nothing
 * untaken (slot_in_order), else through the ring, waiting for its
 * completion. A call is R1 (entry, head), R2 (load state), and if IDLE R3
 * (CAS -> LINKED, push on callq: S1, then xc_kick on an empty callq); a
 * push onto a closed callq is refused: ring_refused never waits; tail past
 * its entry, the call ran; else it exchanges the entry's fn with
 * RETRACTED: it read TAKEN, the close runs it; else -ENXIO, and the entry
 * stays as a tombstone that every run steps over. callq now
 * holds rings. A call whose ring's unfenced is 0 is fenced: F1 unfenced =
 * 1 if it reads xc_ring_asym true (and ends a run of fenced rides, which
 * the model leaves to that read's choice), R1' a seq_cst fence, before R2; a
 * winning CAS stores C, unfenced = 0: so after a doorbell the next calls are
 * fenced, and once one that stored F1 rides on LINKED the calls after it
 * skip R1' while they read the flag true, their head stores possibly
 * still in the owner's store buffer at R2 (below, Memory model); the
 * first to read it false clears the mark itself (C' unfenced = 0) and is
 * fenced. The flag may change between any two reads
 * of it (ASYM_LOAD): a worker's probe, a slow verdict, an xc_init. The
 * worker takes the doorbells (holds those rings), runs each held ring until
 * empty, polls its held rings' heads, and before it sleeps (xc_idle_wait;
 * the attached thread's xc_fd_sleep_begin) lets them go: U1 state = IDLE on
 * each, U2 a seq_cst fence, U2' if a held ring's unfenced is 1 a membarrier
 * (every owner's store buffer drains), or, while another worker's is under
 * way, keep_all: every held ring re-linked and no sleep (xc_idle_wait polls
 * again, the attached thread's loop goes around); U3 a ring with calls left
 * (or every ring, keep_all) is re-linked by CAS and kept, which W2 then
 * sees (xc_rings_pending); one whose CAS its owner won goes on the worker's
 * dropped list until it takes the ring from callq. The offline drain closes
 * callq, holds what was on it, U1, U2, U2' (the membarrier, waiting its
 * turn), runs every held ring, then every dropped ring without U1 (its
 * owner's push is to come), and empties that list (xc_rings_close), each in
 * closing mode: an entry is taken by exchanging its fn with TAKEN, a
 * RETRACTED one is skipped.
 *
 * NEST (RING with PAIR): two CPUs with rings, nested calls, bounded rings;
 * described where its code starts, below.
 *
 * The eventfd: a counter (fd_count). A sender's write adds 1. The loop's
 * wait (epoll_wait, io_uring_enter) blocks until the counter is > 0 (an
 * eventfd stays readable until read, so a write before the wait is not
 * lost, as futex_wait compares first), or returns spuriously (another
 * descriptor, a signal's EINTR; at most SPURIOUS in a run). With
 * io_uring the loop's own read may complete in its wait and take the
 * counter to 0. fd_settle's read takes it to 0 too (EAGAIN if 0). The
 * thread's counts fd_kicks_seen and fd_kicks_drained, and the senders'
 * fd_kicks_done, are kept relative to fd_kicks_drained (the code only
 * compares them), so that the states of successive sleeps merge. Ghosts
 * count the claims (successful S3 from SLEEPING_FD) and the writes.
 *
 * Memory model. Spin executes one statement at a time in a single global
 * order: the model is sequentially consistent. That is what the argument in
 * wake.c relies on: S1 (the push's successful CAS, or hotplug's ctl store, or
 * the completion's fetch_sub or exchange), S2 (the load of the idle word),
 * S3 (the CAS SLEEPING -> WAKING), W1 (the store of SLEEPING), W2 (the
 * re-check loads of the queues, ctl and the completion word), W4 (the
 * exchange to POLLING), the worker's store of RUNNING and its re-check of
 * the urgent queue after it (xc_run_urgent's loop condition) are all
 * memory_order_seq_cst in the code, hence totally ordered. The other
 * accesses to the idle word are relaxed (the owner's stores of POLLING, the
 * CAS WAKING -> WOKENUP) and are modelled as SC too. That is sound here
 * because a seq_cst load that reads a value which a later store overwrites
 * is ordered before that store in the seq_cst total order
 * (coherence-ordered-before, C++20 [atomics.order]), and each relaxed write
 * to the idle word is followed, in its writer's program order, by a seq_cst
 * write of the worker (W1, W4, or RUNNING) before the worker can sleep. The
 * attached thread's W1 (SLEEPING_FD), W2 and both exchanges are seq_cst as
 * well; fd_kicks_done is incremented with release after the write and
 * loaded with acquire before the read and the close, so the write happens
 * before them whenever the load counts it, which SC gives too. The rings
 * (RING) need one store-load order that C11 does not give by itself: the
 * owner's R1 (a release store of head) before its R2 (a relaxed load of
 * state), against the worker's U1 (a store of state) before its U3 (loads
 * of head). A fenced call gets it from a seq_cst fence on both sides (R1'
 * and U2); there the model assumes that order, which SC gives, and
 * src/proto/ring.c argues why the fences provide it. A call that skips R1' does
 * not have it, and the model has its store buffer: its head store goes
 * into rbuf (the worker's loads read rhead, the owner's own head is rhead
 * + rbuf), where it stays past its R2 until something drains it: R1' of a
 * later call, the owner's winning doorbell CAS (a locked RMW on x86;
 * ACQUIRE_CAS drains at C's release instead, as C11 reads the code's
 * acquire CAS), a worker's membarrier (U2', one step that drains every
 * owner: as if each ran a full barrier then), or the hardware, at any
 * step (the store_buffer process, one store at a time, oldest first). A
 * fenced call's load of xc_ring_asym, F1 and R1' are one step with its R1:
 * nothing of the owner's is seen between them, a store that the fence
 * drains is the same as one made at the fence, and the flag orders nothing
 * (its load may find it changed, as any load may). C is visible at once: a
 * C seen late only makes U2' read 1, as it can between the CAS and C. The
 * model does not check weak-memory reorderings beyond these, with one more
 * exception: MUTANT_RELAXEDRECHECK lets the worker's RUNNING store sit in a
 * store buffer past its next loads, the reordering that C11 allows when the
 * re-check after it is relaxed (the code before the fix).
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
 * the same as staying queued. No futex wait times out: no deadline, stuck
 * reports off (until = 0), follow_os off (no sleep limit) except with
 * FOLLOW, where only a sleep on a taken CPU times out; with them a lost
 * wakeup would be a late one, here it is a worker asleep for good.
 *
 * The urgent signal. A sender that reads RUNNING sends the signal (tgkill);
 * realtime signals queue, so sig_pending counts them. The handler runs on
 * the worker's thread between any two of its steps, also while it is
 * blocked in a futex, arbitrarily late: one atomic step per signal. A call's
 * fn is the state between xc_in_call++ and xc_in_call-- (one step that runs
 * it); a handler that comes then does nothing (it defers), and the call loop
 * must run the urgent queue right after the fn returns (xc_call_returned).
 *
 * Properties (docs/model.md):
 *   - a call runs at most once, and only if queued (assertions where calls run);
 *   - urgent promptness: an urgent call that the handler deferred (it came
 *     inside a call's fn) runs before the next plain call's fn and before the
 *     next work item starts (!deferred there); and when a work item starts,
 *     the urgent queue is empty unless a signal is on its way to the worker,
 *     sent or due from a sender between its push and its S2, which will
 *     interrupt the item (no urgent call waits behind a work item);
 *   - at quiescence (no process can move: timeout), no worker is blocked in
 *     futex_wait with a call, a work item, a hotplug request pending, or with
 *     the completion it waits for done; nothing is queued, every accepted call
 *     and work item has run, every call was accepted or refused, and the
 *     offline request was served;
 *   - no invalid end state (deadlock): each process stops only where it may;
 *   - FOLLOW: xc_llist_open finds its list empty (an open never wipes a
 *     call: with the hotplug lock only one side reopens); at quiescence no
 *     lock is held, a CPU the OS kept has its worker parked (it noticed),
 *     a parked worker whose CPU is back came back (c->taken cleared), a CPU
 *     given back is online unless the user took it offline, and the CPU is
 *     online exactly when its worker is not parked and its queues are open;
 *   - with -DLIVENESS: the LTL property no_lost_wakeup (a queued call or work
 *     item is eventually taken, a request eventually served), instead of the
 *     checker;
 *   - ATTACHED: the checks above hold with the attached thread (waiter: it
 *     is blocked in its wait; at quiescence not with anything pending);
 *     fd_settle's read takes only writes of kicks the thread counted
 *     (fd_writes <= fd_kicks_seen); at quiescence every claimed kick was
 *     written, counted done and seen (none in flight, none missed), and a
 *     thread blocked in its wait has a counter of 0; with -DNP no cycle (the
 *     loop never spins on a readable eventfd);
 *   - RING: no call stranded (at quiescence the worker is not asleep with a
 *     published ring call untaken, none is left untaken, and every ring is
 *     IDLE and on no list); FIFO per sender (a slot or ring call's fn starts
 *     only once every earlier call of its sender has run, and a waiting call
 *     returns only then); a ring is on callq at most once (asserted at each
 *     push); with -DLIVENESS, a published ring call is eventually taken;
 *     all of it with the owners' head stores buffered past R2 when a call
 *     skips R1' ("published": visible to the worker, drained), and with
 *     xc_ring_asym read true or false at each call; a ring the
 *     worker let go marked unfenced is not read at U2' again before its
 *     owner's C or C' (a mark never outlives a let-go); with -DVERDICT,
 *     after the slow verdict a ring's mark costs two membarriers at most;
 *   - NEST: every call whose caller got 0 runs exactly once, a refused one
 *     never (assertions where calls run, and at quiescence); no entry is
 *     written over before it ran, and head never runs behind tail; no worker
 *     waits for ever in a wait that serves (stuck) and no invalid end state;
 *     at quiescence every ring IDLE and empty of calls;
 *   - DETACH: no write reaches the eventfd after its close, and at the close
 *     no sender is between its S3 and its write; at quiescence no lock is
 *     held, the CPU is online exactly when its queues are open, and a
 *     detached CPU is offline.
 *
 * Mutants, built from this file with a -D macro so they cannot drift:
 *   -DMUTANT_NORECHECK   W2 removed: the worker sleeps right after W1
 *   -DMUTANT_LOADFIRST   the sender loads the idle word (S2) before its push (S1)
 *   -DMUTANT_NOCTLCHECK  W2 re-checks the queues but not ctl
 *   -DMUTANT_NOCATCHUP   the code before the fix: no xc_call_returned after a
 *                        slot call, and xc_run_urgent takes once, no loop
 *   -DMUTANT_RELAXEDRECHECK  the urgent re-check after the RUNNING store is
 *                        relaxed: the store may become visible after it
 *   -DMUTANT_NOASKWAKE   a waiting worker never sets XC_SYNC_SLEEPING
 *                        (sync_ask_wake), so no completion kicks it
 *   -DMUTANT_NOREOPENLOCK  (FOLLOW) taken_cpu_reopen without the hotplug
 *                        lock: it races xc_cpu_offline + xc_cpu_online, both
 *                        open the queues, and a call pushed in between is wiped
 *   -DMUTANT_FDNORECHECK (ATTACHED) the attached thread's W2 removed: it
 *                        enters its wait right after W1
 *   -DMUTANT_FDNOCOUNT   (ATTACHED) fd_settle does not count a claimed kick:
 *                        detach closes the eventfd with a write to come, and
 *                        the eventfd, never read, keeps the loop spinning
 *   -DMUTANT_UNLINKNORECHECK  (RING) U3 removed: the worker lets every held
 *                        ring go after U1 and sleeps, calls left in them or not
 *   -DMUTANT_NONEMPTYSKIP  (RING) the owner skips R2/R3 when its ring still
 *                        held untaken entries before the put ("the worker is
 *                        on it"), instead of looking at state
 *   -DMUTANT_RELINKSTORE (RING) U3 re-links with a plain store, not the CAS:
 *                        it may overwrite an owner's IDLE -> LINKED, and the
 *                        ring is pushed on callq twice
 *   -DMUTANT_NOSLOTORDER (RING) a waiting call takes the slot without
 *                        slot_in_order: it overtakes its own ring calls
 *   -DMUTANT_CLOSENODROPPED  (RING) xc_rings_close leaves the rings dropped
 *                        at a lost U3 CAS (the code before its fix): a call
 *                        stranded when the owner's push is refused
 *   -DMUTANT_DROPPEDIDLE (RING) xc_rings_close stores IDLE in a dropped ring:
 *                        the owner's push lands after xc_cpu_online, the ring
 *                        IDLE on callq, and it is pushed twice
 *   -DMUTANT_NOMEMBARRIER  (RING) no membarrier at U2' (xc_rings_release and
 *                        xc_rings_close): a call that skipped R1' is still in
 *                        its owner's store buffer at U3, and is stranded
 *   -DMUTANT_NOF1        (RING) the owner skips R1' without storing F1:
 *                        unfenced stays 0, the worker never pays, a call stranded
 *   -DMUTANT_BUSYSLEEP   (RING) when another worker's membarrier is under way
 *                        the worker sleeps without one: a call stranded
 *   -DMUTANT_ASYMFLAG    (RING) U2' reads the process-wide xc_ring_asym, not
 *                        each held ring's unfenced mark: once the flag turns
 *                        false, a call that skipped R1' under an earlier F1
 *                        is stranded
 *   -DMUTANT_UNMARKRELAXED  (RING) an owner that reads the flag false clears
 *                        its mark with a relaxed store (C'), then fences:
 *                        the offline close's U2' reads the mark cleared and
 *                        pays no membarrier, runs the ring without a call
 *                        that skipped R1' (still in the store buffer), and
 *                        the owner's refused doorbell settles only its own
 *                        call: the other is stranded
 *   -DMUTANT_MARKKEPT    (RING, VERDICT) the code before C': a marked ring's
 *                        calls skip R1' whatever the flag, and after the slow
 *                        verdict a ring that U3 keeps costs a membarrier at
 *                        each release (a third one found)
 *   -DMUTANT_REFUSEDWAIT (NEST) ring_refused waits for the target's close to
 *                        end: two drains calling each other wait for ever
 *   -DMUTANT_MAKEROOMHEAD  (NEST) make_room and the put keep the head read
 *                        on entry while make_room serves: a nested call
 *                        through the same ring is overwritten
 *   -DMUTANT_REFUSEDREWIND (NEST) ring_refused keeps the ring LINKED while it
 *                        waits for the close, then rewinds head: a nested
 *                        call that rode the doorbell is lost
 * -DACQUIRE_CAS (RING; not a mutant, not run by check.sh: docs/model.md,
 * Findings) takes the doorbell's CAS as C11 reads its memory_order_acquire:
 * it publishes nothing, and only C's release drains the owner's buffer.
 * Coverage witnesses: -DCOVER=n makes the n-th interesting step fail an
 * assertion, so spin proves the step reachable (no property holds vacuously).
 * -DCHECK_URGENT_PROMPT adds the promptness claim of the first XC_URGENT
 * (xcall.h): an urgent sender that finds the worker inside a call's fn
 * signals it. The code does not meet it by design (docs/model.md), so
 * check.sh does not run it.
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
#ifndef NWORK
#define NWORK 0			/* work items queued on CPU 0 by the work queuer */
#endif
#ifndef PAIR
#define PAIR 0			/* two workers, each waiting on a call to the other */
#endif
#ifndef HOTPLUG
#define HOTPLUG 1		/* a requester takes CPU 0 offline once */
#endif
#ifndef ONLINE
#define ONLINE 1		/* ... and brings it back online */
#endif
#ifndef SPURIOUS
#define SPURIOUS 1		/* spurious futex wakeups allowed in a run */
#endif
#ifndef FOLLOW
#define FOLLOW 0		/* follow_os: the OS may take CPU 0 away (an os process) */
#endif
#ifndef NTAKE
#define NTAKE 1			/* ... at most this many times in a run */
#endif
#ifndef ATTACHED
#define ATTACHED 0		/* CPU 0's worker is an attached thread in its own loop (src/cpu/attach.c) */
#endif
#ifndef DETACH
#define DETACH 0		/* ... which may detach at its loop's top (attached_leave) */
#endif
#ifndef RING
#define RING 0			/* plain calls go through per-sender rings (src/proto/ring.c), not descriptors on callq */
#endif
#ifndef RWAIT
#define RWAIT 1			/* ... and each plain sender's last call is XC_WAIT (slot or ring) */
#endif
#ifndef BUSY
#define BUSY 1			/* ... and a worker may find another's membarrier under way once in a run */
#endif
#ifndef COVER
#define COVER 0
#endif
/* COVER=n: reaching witness n violates an assertion (a reachability proof). */
#define WITNESS(n)	assert(COVER != n)

/*
 * RING with PAIR is NEST: two CPUs with rings, the workers their owners
 * (below, "NEST"). Its workers, rings and closes are its own code: the
 * one-CPU ring code (RING from here on) is left out.
 */
#if RING && PAIR
#define NEST 1
#undef RING
#define RING 0
#else
#define NEST 0
#endif

#if PAIR
#define NCPUS 2
#define NWORKITEMS 2	/* one per worker, queued before it starts */
#define NBITS (NSENDERS * NCALLS + 2)
#if HOTPLUG && !NEST || NURGENT > 0 || NWORK > 0 || ATTACHED
#error "PAIR is a configuration of its own: no hotplug (but NEST's closes), no urgent calls, no work queuer, no attached thread"
#endif
#if NEST && (NSENDERS > 0 || NCALLS > 2 || FOLLOW)
#error "NEST: the two workers alone, at most 2 calls each, no FOLLOW"
#endif
#else
#if FOLLOW && !HOTPLUG
#error "FOLLOW models the hotplug lock against a requester: HOTPLUG=1"
#endif
#if ATTACHED && FOLLOW
#error "ATTACHED: the OS check of an attached thread (attached_follow) is not modelled: FOLLOW=0"
#endif
#if DETACH && !ATTACHED
#error "DETACH is the attached thread's: ATTACHED=1"
#endif
#define NCPUS 1
#define NWORKITEMS NWORK
#define NBITS (NSENDERS * NCALLS)
#endif
#if RING
#if FOLLOW
#error "RING: the rings are modelled with one worker or attached thread, hotplug without FOLLOW"
#endif
#define NRINGS (NSENDERS - NURGENT)	/* one ring per plain sender, to CPU 0 */
#if NRINGS < 1 || NRINGS > 2 || NCALLS > 4
#error "RING: one or two plain senders, at most 4 calls each"
#endif
#endif
#define WORK (NWORKITEMS > 0)	/* work items are modelled */

/* struct xc_cpu.idle (src/base/internal.h: XC_IDLE_*) */
#define RUNNING  0
#define POLLING  1
#define SLEEPING 2
#define WAKING   3
#define WOKENUP  4
#define SLEEPING_FD 5	/* an attached thread sleeps in its own loop: kick its eventfd */

/* src/base/internal.h: XC_CTL_*, XC_PARK_* */
#define CTL_NONE    0
#define CTL_OFFLINE 1
#define PARK_WAIT 0
#define PARK_RUN  1

/* xc_llist_push results (src/base/llist.h: XC_PUSH_*) */
#define PUSH_NONEMPTY  0
#define PUSH_WAS_EMPTY 1
#define PUSH_CLOSED    2

/* which wait xc_idle_wait serves: cpu_idle's (ready_idle) or a completion's (ready_sync) */
#define MODE_IDLE 0
#define MODE_SYNC 1

#define ALLCALLS ((1 << NBITS) - 1)
#define ALLWORK  ((1 << NWORKITEMS) - 1)
#define WCALL(w) (1 << (NSENDERS * NCALLS + (w)))	/* worker w's waiting call (PAIR) */
#define SLOT_WORKER 100				/* slot_owner of a worker w: SLOT_WORKER + w */

/* A list head (src/base/llist.h): the set of calls in it, and whether it is CLOSED. */
typedef llist {
	byte nodes;		/* bit per call or work item; 0 = NULL */
	bool closed;		/* head == XC_LLIST_CLOSED */
};

/* Per CPU (struct xc_cpu); only CPU 0 has senders, urgent calls and hotplug. */
byte idle[NCPUS] = RUNNING;	/* c->idle: cpu_reset stores RUNNING */
llist callq[NCPUS];		/* c->callq */
llist urgentq[NCPUS];		/* c->urgentq */
llist workq[NCPUS];		/* c->workq */
byte ctl[NCPUS] = CTL_NONE;	/* c->ctl */
byte park[NCPUS] = PARK_RUN;	/* c->park: the worker was released to run */
bool offline_done = false;	/* CPU 0's offline_done reached zero */

/* c->slot_claim (src/run/slot.c): the holder (sender id + 1, SLOT_WORKER + w; 0 free) */
byte slot_owner[NCPUS];
/* c->slot.done.word (src/run/slot.c): PUBLISHED, CLOSED */
bool slot_pub[NCPUS];
bool slot_closed[NCPUS];	/* the CPU starts online: xc_cpu_open opened it */
byte slot_call[NCPUS];		/* the published call's bit */

bool waiter[NCPUS];		/* the worker is queued in futex_wait(&c->idle); (ATTACHED) CPU 0's
				 * attached thread is in its loop's own wait (W3) */
byte spurious = SPURIOUS;	/* spurious wakeups left */
byte sig_pending[NCPUS];	/* urgent signals sent to the worker, not yet handled */
byte in_call[NCPUS];		/* xc_in_call: the worker is inside a call's fn */
bool deferred[NCPUS];		/* ghost: a handler deferred with urgent calls queued, not yet taken */
bool in_work[NCPUS];		/* ghost: the worker is inside a work item's fn */
byte s2_due[NCPUS];		/* ghost: urgent pushes that found the queue empty, S2 still to come */

/* PAIR: worker w's completion word (its slot word or its on-stack xc__sync) */
bool sync_done[NCPUS];		/* count 0 (or the slot word no longer PUBLISHED) */
bool sync_sleep[NCPUS];		/* XC_SYNC_SLEEPING: the waiter asked to be woken */
bool waiting[NCPUS];		/* ghost: worker w is inside xc_sync_wait */

byte accepted = 0;		/* calls whose push succeeded */
byte refused = 0;		/* calls whose push found the queue closed (-ENXIO) */
byte ran = 0;			/* calls that ran */
byte work_accepted = 0;		/* work items queued */
byte work_refused = 0;		/* work items refused (-ENXIO) */
byte work_ran = 0;		/* work items that started */
byte senders_done = 0;

#if FOLLOW || DETACH
/* the hotplug lock and what it guards (src/cpu/hotplug.c), CPU 0 only */
bool user_offline = false;	/* c->user_offline (under the hotplug lock) */
bool online = true;		/* c->online */
byte hp_lock = 0;		/* xc_rt.hotplug_lock: 0 free, LOCK_USER, LOCK_WORKER */
#define LOCK_USER   1
#define LOCK_WORKER 2
#endif
#if FOLLOW
/* follow_os (src/cpu/follow.c, src/cpu/worker.c, src/cpu/hotplug.c), CPU 0 only */
bool os_has = true;		/* the OS lets the worker run on CPU 0 (its mask holds it, it is up) */
bool elsewhere = false;		/* the kernel moved the thread off CPU 0: xc_os_elsewhere (the cheap check) */
bool taken_flag = false;	/* c->taken != XC_TAKEN_NONE: set by xc_os_check, cleared by xc_os_come_back */
bool offline_by_os = false;	/* c->offline_by_os (worker only) */
bool parked = false;		/* ghost: the worker is in cpu_park */
#endif

#if ATTACHED
/* CPU 0's attached thread (src/cpu/attach.c) and its eventfd (src/proto/wake.c) */
byte fd_count = 0;		/* the eventfd's counter: a write adds 1, a read takes it to 0 */
byte fd_kicks_done = 0;		/* c->fd_kicks_done: writes counted by their senders (release) */
byte fd_kicks_seen = 0;		/* c->fd_kicks_seen: claimed kicks the thread saw (its own) */
byte fd_kicks_drained = 0;	/* c->fd_kicks_drained: ... and read off the eventfd (its own) */
byte fd_claims = 0;		/* ghost: successful S3 CAS SLEEPING_FD -> WAKING */
byte fd_writes = 0;		/* ghost: eventfd writes done */
#if DETACH
bool fd_closed = false;		/* close(c->kick_fd) by attached_leave */
bool attached_on = true;	/* c->attached (under the hotplug lock) */
#endif
#define FD_CLAIM(s)	if :: s == SLEEPING_FD -> fd_claims++ :: else -> skip fi
#else
#define FD_CLAIM(s)	skip
#endif

#if RING
/*
 * The per-sender call rings to CPU 0 (src/proto/ring.c, src/proto/ring.h): plain sender
 * id owns ring id - NURGENT, whose bit on callq is 1 << (id - NURGENT):
 * with RING, callq holds rings (doorbells), not calls. Indices count from 0
 * and never wrap (a ring has room for every call of a run: XC_RING_ENTRIES
 * is 256). The owner's cache tail_seen and the worker's head_seen are left
 * out: each stands for a value the other side's word had, and reading the
 * word itself decides the same (see ring_run and the sender).
 */
#define RING_IDLE   0		/* XC_RING_IDLE */
#define RING_LINKED 1		/* XC_RING_LINKED */
/* markers in an entry's fn (rmark), besides the call itself */
#define M_NONE      0		/* the entry holds its call (or is dead: rent 0) */
#define M_TAKEN     1		/* XC_RING_TAKEN: a close took it by exchange, and runs it */
#define M_RETRACTED 2		/* XC_RING_RETRACTED: its refused owner took it back (a tombstone) */
byte rhead[NRINGS];		/* r->head as the worker sees it: entries published (the owner, release) */
byte rbuf[NRINGS];		/* the owner's head stores still in its store buffer (calls that skipped
				 * R1'): its own head is rhead + rbuf (store forwarding) */
byte rtail[NRINGS];		/* r->tail: entries taken (the worker, release) */
byte rstate[NRINGS];		/* r->state: RING_IDLE or RING_LINKED */
bool unf[NRINGS];		/* r->unfenced: the owner's calls skip R1' (F1 sets it, C clears it) */
byte busy = BUSY;		/* U2' may find another worker's membarrier under way this many more times */
bool asym = false;		/* xc_ring_asym (barrier.c): owners may store F1; the value a load
				 * returned, in the step that uses it (ASYM_LOAD), else false */
bool letgo[NRINGS];		/* ghost: the worker let the ring go marked (unfenced 1), and its
				 * owner has not written unfenced since (so it is marked still) */
#if COVER == 89
byte paid = 0;			/* ghost: membarriers the worker ran since the owner last wrote unfenced */
#define PAID		paid++; if :: paid > 1 -> WITNESS(89) :: else -> skip fi
#define PAID_RESET	paid = 0
#else
#define PAID		skip
#define PAID_RESET	skip
#endif
/*
 * A load of xc_ring_asym (relaxed). Its writers (src/proto/barrier.c) are
 * xc_barrier_init at each xc_init (true after a cheap verdict), a worker's
 * probe once per runtime (true: a membarrier measured cheap) and a slow
 * verdict (false), on any thread, at any moment, relaxed:
 */
// @src src/proto/barrier.c: atomic_store_explicit(&xc_ring_asym, usable && cost == BARRIER_CHEAP, memory_order_relaxed);
// @src src/proto/barrier.c: atomic_store_explicit(&xc_ring_asym, true, memory_order_relaxed);
// @src src/proto/barrier.c: atomic_store_explicit(&xc_ring_asym, false, memory_order_relaxed);
/*
 * The flag orders nothing, and only its loads see it, so a change is
 * modelled where it is seen: each load finds it true or false, as spin
 * chooses, whatever earlier loads found. That is a flag that changes any
 * number of times between any two loads (a stale value read is a change
 * back): every sequence of values to every reader, with no count of
 * changes in the state and no process that could change it for ever in a
 * cycle. After the step that uses the value, asym is put back to false
 * (ASYM_DEAD), so that states do not split on a value no one reads.
 */
#ifndef VERDICT
#define VERDICT 0		/* the slow verdict as a moment, and what a mark costs after it */
#endif
#if !VERDICT
#define ASYM_LOAD	if :: asym = true :: asym = false fi
#define U2_MARKED(r)	skip
#define LATE_PAY	skip
#define LATE_NOPAY	skip
#else
/*
 * VERDICT: besides, the slow verdict as a moment (barrier_slow_verdict,
 * for good: no probe follows it), after which every load of the flag
 * reads false; before it, loads read either value, as above. It comes at
 * a load of the flag (the first to see it) or at a membarrier
 * (barrier_timed gives it after one): one given between two steps is seen
 * at the next of these, the only steps it changes. latepaid counts the
 * membarriers paid for each ring's mark after it (U2' read the ring
 * marked, then the membarrier ran): two at most (asserted), one at a
 * release that keeps the ring for calls made before the verdict and one
 * at the release that lets it go, and none once its owner's next call
 * cleared the mark (C'). Without C' a ring that U3 keeps stays marked,
 * and each release pays (MUTANT_MARKKEPT).
 */
bool slow = false;		/* ghost: the slow verdict was given */
byte latepaid[NRINGS];		/* ghost: membarriers paid for each ring's mark since the verdict */
byte readmarked = 0;		/* ghost: the rings this U2' read marked (bits) */
#define ASYM_LOAD	if :: !slow -> asym = true :: asym = false :: asym = false; slow = true fi
#define U2_MARKED(r)	readmarked = readmarked | (1 << (r))
#define LATE_PAID(r) \
	if :: slow && (readmarked & (1 << (r))) -> latepaid[r]++; WITNESS(92); \
		if :: latepaid[r] == 2 -> WITNESS(93) :: else -> skip fi; \
		assert(latepaid[r] <= 2) \
	   :: else -> skip fi
#if NRINGS == 1
#define LATE_PAY	if :: slow = true :: skip fi; LATE_PAID(0); readmarked = 0
#else
#define LATE_PAY	if :: slow = true :: skip fi; LATE_PAID(0); LATE_PAID(1); readmarked = 0
#endif
#define LATE_NOPAY	readmarked = 0	/* U2' read a mark, but no membarrier ran */
#endif
#define ASYM_DEAD	asym = false
byte rent[NRINGS * NCALLS + 3];	/* r->e[].fn: the call in each entry (its bit); 0 once taken
				 * (dead) or retracted (+3: LIVE's guarded reads past the end) */
byte rmark[NRINGS * NCALLS];	/* ... or a marker in fn: M_TAKEN (a close took it), M_RETRACTED */
byte completed = 0;		/* ghost: waiting ring calls whose completion was signalled */

#define RUNRUN(r)	(rhead[r] != rtail[r])	/* a published entry not yet taken (a tombstone too) */
/* a published entry not yet taken that holds a call (not a tombstone) */
#define LIVE_AT(r, i)	(rtail[r] <= (i) && (i) < rhead[r] && rent[(r) * NCALLS + (i)] != 0)
#define LIVE(r)		(LIVE_AT(r, 0) || LIVE_AT(r, 1) || LIVE_AT(r, 2) || LIVE_AT(r, 3))
#define OWNHEAD(r)	(rhead[r] + rbuf[r])	/* the owner's own head: its buffered stores forwarded */
/* the owner's store buffer drains: R1' (a fenced call), its doorbell's CAS, or a membarrier */
#define DRAIN(r)	rhead[r] = rhead[r] + rbuf[r]; rbuf[r] = 0
#if NRINGS == 1
#define DRAIN_ALL	DRAIN(0)
#define ANY_BUFFERED	(rbuf[0] > 0)
#else
#define DRAIN_ALL	DRAIN(0); DRAIN(1)
#define ANY_BUFFERED	(rbuf[0] > 0 || rbuf[1] > 0)
#endif
#if NRINGS == 1
#define RINGS_UNRUN	LIVE(0)
#define RINGS_IDLE	(rstate[0] == RING_IDLE)
/* xc_rings_pending: a held ring has calls (the worker's own held set) */
#define RINGS_PENDING	((held & 1) && RUNRUN(0))
#else
#define RINGS_UNRUN	(LIVE(0) || LIVE(1))
#define RINGS_IDLE	(rstate[0] == RING_IDLE && rstate[1] == RING_IDLE)
#define RINGS_PENDING	((held & 1) && RUNRUN(0) || (held & 2) && RUNRUN(1))
#endif
/* FIFO per sender: the calls of b's sender published before b (b: one call's bit) */
#define SENDER_OF(b)	((b) < (1 << NCALLS) -> 0 : ((b) < (1 << (2 * NCALLS)) -> 1 : 2))
#define EARLIER(b)	(((b) - 1) & ~((1 << (SENDER_OF(b) * NCALLS)) - 1))
#define IN_ORDER(b)	((accepted & ~ran & EARLIER(b)) == 0)
#endif

#define PENDING(q)	(q.nodes != 0)	/* xc_llist_nonempty: not NULL, not CLOSED */
#define SLOT_PENDING(c)	(slot_pub[c])	/* xc_slot_pending */
#define CTL_READY(c)	(ctl[c] != CTL_NONE)

#if ATTACHED
/*
 * kick_fd (src/proto/wake.c): after a successful S3 from SLEEPING_FD, write the
 * eventfd (its counter += 1), then count the write done (release). The fd
 * is open: its owner closes it only once fd_kicks_done counts this write.
 */
inline kick_fd(c)
{
	// @src src/proto/wake.c: while (write(c->sent.kick_fd, &one, sizeof(one)) < 0 && errno == EINTR)
	atomic {
#if DETACH
		assert(!fd_closed);	/* no write reaches a closed (or reused) descriptor */
#endif
		fd_count++;
		fd_writes++;
		WITNESS(44);	/* a sender writes the eventfd of the attached thread */
		/* ... after xc_cpu_offline and xc_cpu_online: the thread slept on, its CPU offline, no park */
		if :: offline_done && !callq[c].closed -> WITNESS(49) :: else -> skip fi
	}
	// @src src/proto/wake.c: atomic_fetch_add_explicit(&c->sent.fd_kicks_done, 1, memory_order_release);
	fd_kicks_done++
}
#endif

/*
 * xc_kick(c), src/proto/wake.h and src/proto/wake.c, after its S2 load (the caller did s = idle[c]).
 * s: the state read; ok: scratch for the CAS outcome; why: 1 for the kick
 * of a completion (xc_sync_wake), 0 otherwise (witnesses only).
 */
inline xc_kick(c, s, ok, why)
{
	do
	// @src src/proto/wake.c: case XC_IDLE_SLEEPING_FD:
	:: s == SLEEPING || s == SLEEPING_FD ->
		/* S3: CAS idle s -> WAKING (s: SLEEPING, or SLEEPING_FD: an attached
		 * thread's claimed kick), seq_cst; on failure s = the current state */
		// @src src/proto/wake.c: /* S3, seq_cst: on failure s holds the new state and we decide again */
		atomic {
			if
			:: idle[c] == s -> idle[c] = WAKING; ok = true; FD_CLAIM(s)
			:: else -> s = idle[c]; ok = false
			fi
		}
		if
		:: ok ->
#if ATTACHED
			// @src src/proto/wake.c: if (s == XC_IDLE_SLEEPING_FD)
			if
			:: s == SLEEPING_FD -> kick_fd(c)
			:: else ->
#endif
			/* kick_futex: futex_wake(&c->idle, 1) - dequeues the waiter, if any */
			// @src src/proto/wake.c: xc_futex_wake(&c->mbox.idle, 1);
			atomic {
				if
				:: waiter[c] -> WITNESS(3);
					if :: why && waiting[c] -> WITNESS(28) :: else -> skip fi
				:: else -> skip
				fi;
				waiter[c] = false
			}
#if ATTACHED
			fi;
#endif
			/* CAS idle WAKING -> WOKENUP, relaxed; fails harmlessly if the worker moved on */
			// @src src/proto/wake.c: s = XC_IDLE_WAKING;
			atomic {
				if
				:: idle[c] == WAKING -> idle[c] = WOKENUP
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

/* run_list's bookkeeping for calls run all at once (the handler, the offline drain) */
inline run_list(taken)
{
	assert((taken & ~accepted) == 0);	/* only queued calls run */
	assert((ran & taken) == 0);		/* no call runs twice */
	ran = ran | taken;
	taken = 0
}

#if RING && RWAIT
/* calls_run: a waiting call's completion, after its fn (its owner waits for it) */
#define RING_COMPLETE(b)	completed = completed | (b & WAITCALLS);
/* the waiting calls: each plain sender's last (bit id * NCALLS + NCALLS - 1) */
#define WAITCALLS	(((1 << (NSENDERS * NCALLS)) - 1) & ~((1 << (NURGENT * NCALLS)) - 1) & \
			 (NCALLS == 1 -> 255 : (NCALLS == 2 -> 170 : (NCALLS == 3 -> 36 : 136))))
#else
#define RING_COMPLETE(b)	/* nothing */
#endif
#if PAIR
#define MARK_ANY	any = (any || waiting[c])	/* a call run from a wait loop */
#define FORGET(b)	skip	/* the completion still needs the bit */
#else
#define MARK_ANY	skip
#define FORGET(b)	b = 0	/* dead from here: cleared so that states merge */
#endif

/*
 * The next call of list src runs (xc_call_invoke): b = its bit, taken off
 * src; xc_in_call++; fn(arg), one step; xc_in_call--. Between the two
 * statements the worker is inside the fn, where the handler defers.
 * plain: a plain call (the slot's, the call queue's), before whose fn a
 * deferred urgent call must have run (urgent promptness); not the next
 * urgent call of a list already taken ("an urgent list runs on in order").
 */
inline call_fn_next(c, src, b, plain)
{
	// @src src/base/thread.h: xc_tls.in_call++;
	atomic {
		assert(!(plain && deferred[c]));
		b = src & (-src);
		src = src & ~b;
		in_call[c]++;
		assert((b & ~accepted) == 0);	/* only queued calls run */
		assert((ran & b) == 0);		/* no call runs twice */
#if RING
		assert(b != 0);			/* a taken entry holds a call */
		assert(!plain || IN_ORDER(b));	/* FIFO: every earlier call of its sender ran */
#endif
		ran = ran | b;
		MARK_ANY
	}
	// @src src/base/thread.h: xc_tls.in_call--;
	atomic { in_call[c]--; RING_COMPLETE(b) FORGET(b) }
}

/*
 * PAIR: the completion of a waiting worker's call: k says whether its
 * XC_SYNC_SLEEPING bit was set (read by the completing RMW, set beside it);
 * then xc_sync_wake(s, waiter) = xc_kick(waiter), whose S2 is a step of its own.
 */
#if PAIR
#define COMPLETE_WORD(b) \
	if \
	:: b == WCALL(0) || b == WCALL(1) -> \
		w = (b == WCALL(0) -> 0 : 1); sync_done[w] = true; k = sync_sleep[w] \
	:: else -> skip \
	fi
inline sync_wake()
{
	if
	:: k ->
		WITNESS(27);	/* a completer kicks a waiting worker */
		// @src src/proto/completion.c: xc_kick(waiter);
		s = idle[w];
		xc_kick(w, s, ok, 1);
		atomic { k = false; w = 0; s = 0; ok = false }
	:: else -> w = 0
	fi
}
#else
#define COMPLETE_WORD(b)	skip
#define sync_wake()		skip
#endif

/* xc_llist_take (src/base/llist.h): head == CLOSED ? NULL : exchange(head, NULL).
 * Only the owner thread takes or closes, so the two accesses act as one. */
inline take(q, taken)
{
	atomic {
		if
		:: !q.closed -> taken = q.nodes; q.nodes = 0
		:: else -> skip	/* taken from a closed list: NULL */
		fi
	}
}

/* the same for the urgent queue: a take also ends a deferral (ghost) */
inline take_urgent(c, taken)
{
	atomic {
		if
		:: !urgentq[c].closed -> taken = urgentq[c].nodes; urgentq[c].nodes = 0; deferred[c] = false
		:: else -> skip
		fi
	}
}

/*
 * MUTANT_RELAXEDRECHECK: the worker's RUNNING store (cpu_idle's last step)
 * may still be in its store buffer (running_buffered) when it reads the
 * urgent queue; it drains right after that load, before the next seq_cst
 * access (xc_slot_pending). Without the mutant it is never buffered.
 */
#ifdef MUTANT_RELAXEDRECHECK
#define DRAIN_RUNNING(c) \
	if \
	:: running_buffered -> idle[c] = RUNNING; running_buffered = false \
	:: else -> skip \
	fi;
#else
#define DRAIN_RUNNING(c)	/* nothing: the store was not buffered */
#endif

/* run_list(c, l, true) in task context: each urgent call's fn in turn; no catch-up inside */
inline run_urgent_list(c)
{
	do
	:: utaken != 0 -> call_fn_next(c, utaken, ubit, 0)
	:: else -> break
	od
}

/*
 * xc_run_urgent (src/run/run.c) in task context: while the urgent queue is
 * non-empty (seq_cst), take it and run it. The loop condition is the
 * re-check after the worker's RUNNING store.
 */
inline run_urgent(c)
{
#ifdef MUTANT_NOCATCHUP
	/* MUTANT: the code before the fix - one xc_llist_take, no loop */
	take_urgent(c, utaken);
	DRAIN_RUNNING(c)
	run_urgent_list(c)
#else
	// @src src/run/run.c: while (xc_llist_nonempty(&c->mbox.urgentq, memory_order_seq_cst)) {
	do
	:: PENDING(urgentq[c]) ->
		DRAIN_RUNNING(c)
		atomic {
			/* a second round: urgent calls deferred while the first ones ran */
			if :: again && deferred[c] -> WITNESS(23) :: else -> skip fi;
			take_urgent(c, utaken)
		}
		// @src src/run/run.c: if (!l)
		if :: utaken == 0 -> break :: else -> skip fi;
		run_urgent_list(c);
		again = true
	:: else -> DRAIN_RUNNING(c) break
	od;
	again = false
#endif
}

/*
 * xc_call_returned (src/run/run.h): a call's fn has returned on the worker
 * (not in the handler): if the urgent queue is non-empty (acquire), run it.
 * wn: the witness for a deferred urgent call caught here.
 */
inline call_returned(c, wn)
{
	// @src src/run/run.h: if (!xc_in_urgent && xc_llist_nonempty(&c->mbox.urgentq, memory_order_acquire))
	if
	:: atomic { PENDING(urgentq[c]) -> if :: deferred[c] -> WITNESS(wn) :: else -> skip fi } ->
		run_urgent(c)
	:: else -> skip
	fi
}

/*
 * slot_run_published (src/run/slot.c): run the slot's call, then free the slot
 * with one exchange (0, or CLOSED while draining, which keeps slot_closed),
 * wake a waiter that asked for it, then xc_call_returned.
 */
inline slot_run(c)
{
	call_fn_next(c, slot_call[c], cbit, 1);
	// @src src/run/slot.c: old = atomic_exchange_explicit(&s->done.word, after, memory_order_seq_cst);
	atomic { slot_pub[c] = false; COMPLETE_WORD(cbit); cbit = 0 }
	// @src src/run/slot.c: if (old & XC_DONE_SLEEPING)
	sync_wake();
#ifndef MUTANT_NOCATCHUP
	// @src src/run/slot.c: xc_call_returned(c);
	call_returned(c, 21)
#endif
}

/*
 * run_list(c, l, false) (src/run/run.c): each call in turn: its fn, its
 * completion (call_run: xc_sync_complete, modelled for a waiting worker's
 * call), then xc_call_returned.
 */
inline run_queue_list(c)
{
	do
	:: taken != 0 ->
		call_fn_next(c, taken, cbit, 1);
#if PAIR
		/* xc_sync_complete: fetch_sub (seq_cst) reads XC_SYNC_SLEEPING */
		// @src src/proto/completion.c: uint32_t old = atomic_fetch_sub_explicit(&s->word, 1, memory_order_seq_cst);
		atomic { COMPLETE_WORD(cbit); cbit = 0 }
		// @src src/proto/completion.c: if ((old & XC_DONE_COUNT) != 1 || !(old & XC_DONE_SLEEPING))
		sync_wake();
#endif
		// @src src/run/run.c: xc_call_returned(c);
		call_returned(c, 22)
	:: else -> break
	od
}

#if RING
/*
 * The worker's side of the rings (src/proto/ring.c). Its held set (c->rings_held)
 * is a local of the worker, held, a bit per ring, as is the set of rings it
 * dropped at a U3 whose CAS the owner won (c->rings_dropped), dropped; rr
 * and rcl are scratch.
 * A ring is walked in index order where the code walks its held list.
 */

/*
 * xc_ring_take_doorbells: take callq (xc_llist_take) and hold every ring on
 * it; hold() takes a ring off the dropped list (undrop)
 */
inline take_doorbells(c)
{
	// @src src/proto/ring.h: struct xc__link *l = xc_llist_take(&c->mbox.callq);
	atomic {
		if
		:: !callq[c].closed ->
			/* hold each ring; one the worker dropped is off that list (its push landed) */
			// @src src/proto/ring.c: undrop(c, r);
			if :: (dropped & callq[c].nodes) != 0 -> WITNESS(69) :: else -> skip fi;
			held = held | callq[c].nodes; dropped = dropped & ~callq[c].nodes; callq[c].nodes = 0
		:: else -> skip	/* closed: NULL */
		fi
	}
}

/*
 * ring_run: run what ring r holds, re-reading head each time. The code
 * re-reads head (acquire) only when tail reaches the head it saw last
 * (head_seen); entries below that head are published, so reading head
 * itself at each step decides the same. calls_run (entry_run for a traced
 * call) reads the entry out and stores tail = t + 1 (release) before the fn
 * runs; a waiting call is completed after it (RING_COMPLETE), then
 * xc_call_returned.
 */
inline ring_run(c, r)
{
	do
	// @src src/run/ring_run.c: r->head_seen = atomic_load_explicit(&r->head, memory_order_acquire);
	:: RUNRUN(r) ->
		// @src src/run/ring_run.c: atomic_store_explicit(&r->tail, t + 1, memory_order_release);
		atomic {
			/* an open CPU's ring: no close took its entries, no owner retracts one now */
			assert(rmark[(r) * NCALLS + rtail[r]] != M_TAKEN);
			taken = rent[(r) * NCALLS + rtail[r]];
			rent[(r) * NCALLS + rtail[r]] = 0;	/* dead from here: states merge */
			rtail[r]++
		}
		if
		:: taken == 0 -> WITNESS(74)	/* a tombstone a refused owner left: skipped */
		:: else ->
			call_fn_next(c, taken, cbit, 1);
			// @src src/run/ring_run.c: xc_call_returned(c);
			call_returned(c, 22)
		fi
	:: else -> break
	od
}

/*
 * The close's ring_run (closing mode): each entry is taken by an atomic
 * exchange of its fn with XC_RING_TAKEN, then tail = t + 1; an entry that
 * reads XC_RING_RETRACTED is a tombstone: tail advanced, nothing run. The
 * owner refused by the closed callq decides from the same word.
 */
inline ring_run_closing(c, r)
{
	do
	:: RUNRUN(r) ->
		// @src src/run/ring_run.c: return closing ? atomic_exchange_explicit(&e->fn, XC_RING_TAKEN, memory_order_relaxed)
		atomic {
			if
			:: rmark[(r) * NCALLS + rtail[r]] == M_RETRACTED -> taken = 0; WITNESS(75)
			:: else ->
				taken = rent[(r) * NCALLS + rtail[r]];
				rent[(r) * NCALLS + rtail[r]] = 0;
				rmark[(r) * NCALLS + rtail[r]] = M_TAKEN
			fi
		}
		rtail[r]++;
		if
		:: taken == 0 -> skip
		:: else ->
			call_fn_next(c, taken, cbit, 1);
			call_returned(c, 22)
		fi
	:: else -> break
	od
}

/*
 * xc_rings_run: run each held ring. The idle poll's xc_rings_run_streak
 * runs fewer: the ring its look found with calls, and the rings after it
 * while each has calls too; its next look begins where it stopped, going
 * round once. A ring it passed by stays held (its owner rides free) until
 * the poll's next pass or W2 finds it, as here the next run does.
 */
inline rings_run(c)
{
	// @src src/run/ring_run.c: for (struct xc_ring *r = c->worker.rings_held; r; r = r->held_next)
	// @src src/run/ring_run.c: n += ring_run(c, r, false);
	rr = 0;
	do
	:: rr < NRINGS && (held & (1 << rr)) -> ring_run(c, rr); rr++
	:: rr < NRINGS && !(held & (1 << rr)) -> rr++
	:: else -> rr = 0; break
	od
}

/*
 * rings_unfenced (U2'): whether the owner of a ring in set may have skipped
 * R1': one acquire load of unfenced per ring, into anyunf. Each ring's own
 * mark, not xc_ring_asym: the flag may have turned false since the F1 that
 * marked a ring whose calls skip R1' (MUTANT_ASYMFLAG reads the flag). A
 * mark never outlives the worker's letting the ring go (asserted: a ring
 * let go marked is not read here again before its owner writes unfenced):
 * the owner's next call finds the ring IDLE, and its doorbell stores C
 * (witness 90) before the push by which the worker holds the ring again.
 * A marked ring costs a membarrier at each release that keeps it (witness
 * 89), until its owner's next call that reads the flag false clears the
 * mark (C'), and none after a release lets it go; with VERDICT, two at
 * most after the slow verdict (latepaid).
 */
inline rings_unfenced(set)
{
#ifndef MUTANT_ASYMFLAG
	do
	// @src src/proto/ring.c: any |= atomic_load_explicit(&r->unfenced, memory_order_acquire) != 0;
	:: atomic { rr < NRINGS && (set & (1 << rr)) ->
		assert(!letgo[rr]);	/* held again only after its owner's C */
		if :: unf[rr] -> U2_MARKED(rr) :: else -> skip fi;
		anyunf = anyunf || unf[rr]; rr++ }
	:: atomic { rr < NRINGS && !(set & (1 << rr)) -> rr++ }
	:: else -> rr = 0; break
	od
#else
	/* MUTANT: the process-wide flag (relaxed), as if it told whether owners skipped R1' */
	atomic { ASYM_LOAD; anyunf = asym; ASYM_DEAD }
#endif
}

/*
 * xc_owners_barrier's membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED): every
 * thread of the process runs a full barrier before it returns, so every
 * owner's buffered head stores drain (one step: the owners' barrier points
 * are all before the worker's next load). wn: the witness for a drain that
 * made a head store visible. Witness 89: a second one for the same mark
 * (U3 kept the ring in between). LATE_PAY: VERDICT's count.
 */
#define MEMBARRIER(wn) \
	atomic { anyunf = false; if :: ANY_BUFFERED -> WITNESS(wn) :: else -> skip fi; DRAIN_ALL; \
		PAID; LATE_PAY }

/*
 * xc_rings_release, before the worker may sleep (xc_idle_wait, and the
 * attached thread's xc_fd_sleep_begin), on every held ring:
 *   U1  state = IDLE (release), every held ring first;
 *   U2  a seq_cst fence, against the owner's R1' fence. Nothing to model:
 *       spin's interleaving is sequentially consistent, so each U3 below
 *       comes after U1 in one total order with the owner's steps; what the
 *       fence does not order, an owner's head store that skipped R1', is
 *       in the owner's store buffer (rbuf), which only a drain makes
 *       visible (see the sender).
 *   U2' if a held ring's unfenced reads 1 (its owner's calls may skip R1'):
 *       membarrier, which drains every owner's store buffer; or, when
 *       another worker's membarrier is under way (at most BUSY times in a
 *       run), keep_all: every held ring is re-linked below and the worker
 *       does not sleep (the caller polls on and comes back);
 *   U3  calls left (tail != head, relaxed loads), or keep_all? CAS state
 *       IDLE -> LINKED: won, keep holding it (W2 then finds its calls);
 *       lost, its owner linked it and pushes it on callq: no longer held,
 *       and on the dropped list until the worker takes it from callq, or a
 *       close runs it (the push may be refused). No calls: not held.
 * Mutants: MUTANT_UNLINKNORECHECK drops U3 (every ring is let go after
 * U1); MUTANT_RELINKSTORE re-links with a plain store instead of the CAS;
 * MUTANT_NOMEMBARRIER drops U2's membarrier (U2' reads, then nothing);
 * MUTANT_BUSYSLEEP, when the membarrier is busy, goes on to sleep without it.
 */
inline rings_release(c)
{
	// @src src/proto/ring.h: return c->worker.rings_held && xc_rings_release_held(c);
	if
	:: held != 0 ->
		rr = 0;
		do
		// @src src/proto/ring.c: atomic_store_explicit(&r->state, XC_RING_IDLE, memory_order_release);
		:: atomic { rr < NRINGS && (held & (1 << rr)) -> rstate[rr] = RING_IDLE; rr++ }
		:: atomic { rr < NRINGS && !(held & (1 << rr)) -> rr++ }
		:: else -> rr = 0; break
		od;
		// @src src/proto/ring.c: atomic_thread_fence(memory_order_seq_cst);	/* U2 */
		rings_unfenced(held);
		// @src src/proto/ring.c: if (rings_unfenced(c->worker.rings_held) && !xc_owners_barrier(c, true))
		if
		:: anyunf ->
#ifndef MUTANT_NOMEMBARRIER
			if
			// @src src/proto/barrier.c: while (!(done = expedited(c, &ns) == 0) && !may_skip)
			:: MEMBARRIER(70)
			/* xc_owners_barrier: another worker's is under way (barrier_busy) */
			// @src src/proto/barrier.c: if (busy && may_skip)
			:: atomic { busy > 0 -> busy--; anyunf = false; LATE_NOPAY;
#ifndef MUTANT_BUSYSLEEP
				// @src src/proto/ring.c: keep_all = true;
				keep_all = true; WITNESS(71)
#else
				skip	/* MUTANT: no membarrier, and the worker goes on to sleep */
#endif
			   }
			fi
#else
			atomic { anyunf = false; LATE_NOPAY }	/* MUTANT: no membarrier */
#endif
		:: else -> skip
		fi;
#ifndef MUTANT_UNLINKNORECHECK
		do
		/* U3: keep_all, or ring_has_calls - tail (its own) and head, relaxed */
		// @src src/proto/ring.c: if ((keep_all || xc_ring_has_calls(r)) &&
		:: atomic { rr < NRINGS && (held & (1 << rr)) && !keep_all && !RUNRUN(rr) ->
			held = held & ~(1 << rr); letgo[rr] = unf[rr]; rr++; WITNESS(56) }	/* empty: unlinked */
		:: atomic { rr < NRINGS && !(held & (1 << rr)) -> rr++ }
		:: rr < NRINGS && (held & (1 << rr)) && (keep_all || RUNRUN(rr)) ->
#ifndef MUTANT_RELINKSTORE
			/* the re-link: CAS state IDLE -> LINKED (relaxed) */
			// @src src/proto/ring.c: atomic_compare_exchange_strong_explicit(&r->state, &s, XC_RING_LINKED,
			atomic {
				if
				:: rstate[rr] == RING_IDLE -> rstate[rr] = RING_LINKED; WITNESS(54)	/* kept */
				:: else ->
					/* its owner linked it and pushes it: dropped until then */
					// @src src/proto/ring.c: if (s == XC_RING_LINKED && !r->dropped) {
					held = held & ~(1 << rr); dropped = dropped | (1 << rr); WITNESS(55)
				fi;
				rr++
			}
#else
			/* MUTANT: a plain store: it may overwrite an owner's IDLE -> LINKED */
			atomic { rstate[rr] = RING_LINKED; rr++ }
#endif
		:: else -> rr = 0; break
		od
#else
		/* MUTANT: no U3 - every ring is let go after U1, calls or not */
		held = 0
#endif
	:: else -> skip
	fi
}

/*
 * xc_rings_close (offline): close callq and hold every ring on it (off the
 * dropped list); take the held set as its own; U1 on each, U2, U2' (the
 * membarrier if one is unfenced: waiting its turn, never skipped); run each
 * until empty in closing mode (its U3); then run every ring on the dropped
 * list until empty, without U1: its owner won the re-link and holds it
 * LINKED, and stores IDLE itself in ring_refused, or its push lands on
 * callq once reopened. Closing mode (ring_run_closing): an owner refused
 * by the closed callq never waits for the close; it decides from tail and
 * from the entry's fn, which the close takes by exchange.
 */
inline rings_close(me)
{
	// @src src/proto/ring.c: for (struct xc__link *l = xc_llist_close(&c->mbox.callq); l; l = l->next)
	atomic {
		held = held | callq[me].nodes; dropped = dropped & ~callq[me].nodes;
		callq[me].nodes = 0; callq[me].closed = true;
		rcl = held; held = 0	/* ours alone now (the worker's own words) */
	}
	do
	// @src src/proto/ring.c: atomic_store_explicit(&r->state, XC_RING_IDLE, memory_order_release);	/* U1, as above */
	:: atomic { rr < NRINGS && (rcl & (1 << rr)) -> rstate[rr] = RING_IDLE; rr++ }
	:: atomic { rr < NRINGS && !(rcl & (1 << rr)) -> rr++ }
	:: else -> rr = 0; break
	od;
	/* U2: as in rings_release; U2': the membarrier, never skipped for another's */
	rings_unfenced(rcl);
	if
	:: anyunf ->
#ifndef MUTANT_NOMEMBARRIER
		// @src src/proto/ring.c: xc_owners_barrier(c, false);	/* U2', waiting its turn: the CPU is closing */
		MEMBARRIER(73)
#else
		atomic { anyunf = false; LATE_NOPAY }	/* MUTANT: no membarrier */
#endif
	:: else -> skip
	fi;
	do
	:: rr < NRINGS && (rcl & (1 << rr)) ->
		/* the close runs a ring's calls, and lets it go */
		atomic { letgo[rr] = unf[rr]; if :: RUNRUN(rr) -> WITNESS(59) :: else -> skip fi };
		// @src src/run/ring_run.c: n += ring_run(c, r, true);	/* U3, and what it finds */
		ring_run_closing(me, rr); rr++
	:: rr < NRINGS && !(rcl & (1 << rr)) -> rr++
	:: else -> rr = 0; rcl = 0; break
	od;
#ifndef MUTANT_CLOSENODROPPED
	/* the rings dropped at a lost U3 CAS: their owner's push is still to come */
	// @src src/run/ring_run.c: while ((r = xc_rings_dropped_pop(c)))
	do
	:: rr < NRINGS && (dropped & (1 << rr)) ->
		/* the owner won its CAS: LINKED, or IDLE once its refused push stored it; no U1 here */
		atomic { dropped = dropped & ~(1 << rr); if :: RUNRUN(rr) -> WITNESS(68) :: else -> skip fi }
#ifdef MUTANT_DROPPEDIDLE
		/* MUTANT: U1 on it as on the held rings */
		rstate[rr] = RING_IDLE;
#endif
		ring_run_closing(me, rr); rr++
	:: rr < NRINGS && !(dropped & (1 << rr)) -> rr++
	:: else -> rr = 0; break
	od
#endif
}
#endif

/* xc_run_calls (src/run/run.c): xc_run_urgent (urgent queue), the slot, then the call queue */
inline run_calls(c)
{
	// @src src/run/run.c: n = xc_run_urgent(c);
	run_urgent(c);
	/* xc_slot_run: load the word (seq_cst); run the call if published */
	// @src src/run/run.c: n += xc_slot_run(c);
	if
	:: atomic { SLOT_PENDING(c) -> WITNESS(16) } -> slot_run(c)
	:: else -> skip
	fi;
#if RING
	/* the rings: the doorbells, then every held ring */
	// @src src/run/run.c: xc_ring_take_doorbells(c);
	take_doorbells(c);
	// @src src/run/run.c: return n + (deep ? xc_rings_refuse_waited(c) : xc_rings_run(c));
	rings_run(c)
#else
	// @src src/run/run.c: struct xc__link *l = xc_llist_take(&c->mbox.callq);
	take(callq[c], taken);
	run_queue_list(c)
#endif
}

/*
 * xc_llist_open (src/base/llist.h): store NULL - "owner only, list closed". On a
 * list that is open, the store would wipe the calls pushed onto it: the
 * assertion is the lost call, seen where it happens.
 */
inline llist_open(q)
{
	// @src src/base/llist.h: atomic_store_explicit(head, NULL, memory_order_release);
	atomic { assert(q.nodes == 0); q.nodes = 0; q.closed = false }
}

/* xc_cpu_open (src/cpu/hotplug.c): by xc_cpu_online, or (FOLLOW) by the worker coming back */
inline cpu_open(c)
{
	// @src src/cpu/hotplug.c: atomic_store_explicit(&c->life.ctl, XC_CTL_NONE, memory_order_relaxed);
	ctl[c] = CTL_NONE;
	// @src src/cpu/hotplug.c: xc_llist_open(&c->mbox.callq);
	llist_open(callq[c]);
	// @src src/cpu/hotplug.c: xc_llist_open(&c->mbox.workq);
	llist_open(workq[c]);
	// @src src/cpu/hotplug.c: xc_llist_open(&c->mbox.urgentq);
	llist_open(urgentq[c]);
	// @src src/cpu/hotplug.c: xc_slot_open(c);
	slot_closed[c] = false
#if FOLLOW || DETACH
	;
	// @src src/cpu/hotplug.c: atomic_store_explicit(&c->life.online, true, memory_order_release);
	online = true
#endif
}

#if WORK
/* xc_run_one_work (src/run/work.c): take the queue into work_head if it is empty */
inline work_take(me)
{
	// @src src/run/work.c: work_adopt(c, xc_llist_take(&c->mbox.workq));
	atomic {
		if
		:: work_head == 0 && !workq[me].closed -> work_head = workq[me].nodes; workq[me].nodes = 0
		:: else -> skip
		fi
	}
}

/* ... and the oldest item starts (work_head != 0): fn(arg), RUNNING, xc_in_call 0 */
inline work_start(me)
{
	// @src src/run/work.c: xc_user_run(XC_USER_WORK, fn, arg);
	atomic {
		wbit = work_head & (-work_head);
		work_head = work_head & ~wbit;
		/* urgent promptness: a deferred urgent call ran before this item */
		assert(!deferred[me]);
		/* ... and a queued urgent call has a signal on its way, to interrupt the
		 * item: sent, or due from a sender that has yet to read RUNNING (S2) */
		assert(!PENDING(urgentq[me]) || sig_pending[me] > 0 || s2_due[me] > 0);
		assert((wbit & ~work_accepted) == 0 && (work_ran & wbit) == 0);
		work_ran = work_ran | wbit;
		in_work[me] = true;
		WITNESS(24)
	}
}
#endif

/*
 * xc_cpu_drain (src/cpu/worker.c) for an offline: xc_drain_calls (close the
 * urgent queue and run it, then the call queue, then close the slot and run
 * the call published before), xc_drain_work (close the work queue, run every
 * item taken), then online = false (release). By the worker (cpu_offline,
 * cpu_taken) and the attached thread (xc_cpu_offline_served, attached_leave).
 */
inline cpu_drain(me)
{
	/* xc_drain_calls: close the urgent queue, then the call queue */
	// @src src/run/run.c: int n = run_list(c, xc_llist_close(&c->mbox.urgentq), true);
	atomic { taken = urgentq[me].nodes; urgentq[me].nodes = 0; urgentq[me].closed = true; deferred[me] = false }
	run_list(taken);
#if RING
	/* ... then the rings (xc_rings_close) */
	// @src src/run/run.c: n += xc_rings_close(c);
	rings_close(me);
#else
	// @src src/run/run.c: n += run_list(c, xc_llist_close(&c->mbox.callq), false);
	atomic { taken = callq[me].nodes; callq[me].nodes = 0; callq[me].closed = true }
	if :: taken != 0 -> WITNESS(10) :: else -> skip fi;
#if FOLLOW
	if :: by_os && taken != 0 -> WITNESS(33) :: else -> skip fi;	/* run displaced */
#endif
	run_list(taken);
#endif
	/* xc_slot_close: fetch_or CLOSED; run the call published before */
	// @src src/run/run.c: return n + xc_slot_close(c);
	atomic { slot_closed[me] = true; if :: slot_pub[me] -> WITNESS(19) :: else -> skip fi }
	if
	:: SLOT_PENDING(me) -> slot_run(me)
	:: else -> skip
	fi
#if WORK
	;
	/* xc_drain_work: close the work queue, run every item taken */
	// @src src/run/work.c: work_adopt(c, xc_llist_close(&c->mbox.workq));
	atomic { work_head = work_head | workq[me].nodes; workq[me].nodes = 0; workq[me].closed = true }
	atomic {
		assert((work_head & ~work_accepted) == 0 && (work_ran & work_head) == 0);
		work_ran = work_ran | work_head;
		work_head = 0
	}
#endif
#if FOLLOW || DETACH
	;
	/* cpu_drain: online = false (release), after the drain */
	// @src src/cpu/worker.c: atomic_store_explicit(&c->life.online, false, memory_order_release);
	online = false
#endif
}

proctype worker(byte me)
{
	byte taken = 0;		/* a taken call list */
#if RING
	byte held = 0;		/* c->rings_held: a bit per ring (ring.c) */
	byte rr = 0;		/* a ring index */
	byte rcl = 0;		/* the rings xc_rings_close runs */
	byte dropped = 0;	/* c->rings_dropped: a bit per ring (ring.c) */
	bool anyunf = false;	/* U2': rings_unfenced found one */
	bool keep_all = false;	/* xc_rings_release's keep_all: do not sleep yet */
#endif
	byte cbit = 0;		/* the call running from it */
	byte utaken = 0;	/* a taken urgent list */
	byte ubit = 0;
	byte wbit = 0;		/* the work item running */
	byte work_head = 0;	/* c->work_head: taken items, not yet run (worker-private) */
	byte prev;
	byte mode = MODE_IDLE;
	byte s;
	bool ok;
	bool k;			/* a completion read XC_SYNC_SLEEPING */
	byte w;			/* the waiter of that completion */
	bool again = false;
#if PAIR
	bool any = false;	/* xc_run_calls ran something */
	bool via_slot = false;
	byte o = 1 - me;	/* the other CPU */
#endif
#ifdef MUTANT_RELAXEDRECHECK
	bool running_buffered = false;
#endif
#if FOLLOW
	bool os_recheck = false;	/* c->os_recheck: this thread's own flag */
	bool by_os = false;		/* the drain is cpu_taken's */
	bool slept_out = false;		/* the futex wait timed out (the sleep limit) */
#endif

	/* worker_loop (src/cpu/worker.c) */
loop_top:
	/* ctl = atomic_load(&c->ctl, acquire) */
	// @src src/cpu/worker.c: uint32_t ctl = atomic_load_explicit(&c->life.ctl, memory_order_acquire);
	if
	:: ctl[me] == CTL_OFFLINE -> goto offline
	:: else -> skip
	fi;
#if FOLLOW
	/*
	 * os_suspect: os_recheck (the sleep limit ran out) || xc_os_elsewhere (the
	 * thread runs on another CPU: one load). Then the full check, xc_os_check:
	 * the thread's mask, one snapshot of what the OS allows; taken: c->taken set.
	 */
	// @src src/cpu/worker.c: if (xc_unlikely(xc_os_suspect(c))) {
	if
	:: os_recheck || elsewhere ->
		os_recheck = false;
		// @src src/cpu/worker.c: if (xc_rt.cfg.follow_os && xc_os_check(c)) {
		if
		:: !os_has -> taken_flag = true; goto os_took
		:: else ->	/* pinned (again): nothing to do; c->taken is left as it was */
			if :: taken_flag -> WITNESS(43) :: else -> skip fi
		fi
	:: else -> skip
	fi;
#endif
	/* xc_run_calls(c), RUNNING */
	// @src src/cpu/worker.c: xc_run_calls(c);
	run_calls(me);
#if WORK
	work_take(me);
	// @src src/cpu/worker.c: if (xc_run_one_work(c))
	if
	:: work_head != 0 ->
		work_start(me);
#if PAIR
		/* the item's fn: xc_call_single(o, fn, arg, XC_WAIT) */
		if
		:: !slot_pub[o] && !slot_closed[o] && slot_owner[o] == 0 ->
			/* xc_slot_call: the looks passed; claim (CAS slot_claim 0 -> 1) */
			atomic {
				if
				:: slot_owner[o] == 0 -> slot_owner[o] = SLOT_WORKER + me; via_slot = true
				:: else -> skip	/* -EAGAIN: the queue */
				fi
			}
			/* publish (S1, CAS word 0 -> PUBLISHED; no hotplug here, so never CLOSED) */
			if
			:: via_slot ->
				atomic {
					assert(!slot_pub[o] && !slot_closed[o]);
					slot_pub[o] = true; slot_call[o] = WCALL(me);
					accepted = accepted | WCALL(me)
				}
			:: else -> goto wait_queue
			fi
		:: true ->
			/* the call queue (slot taken or ablated; or a many call): push (S1) */
wait_queue:
			atomic {
				if
				:: callq[o].nodes == 0 -> ok = true	/* XC_PUSH_WAS_EMPTY */
				:: else -> ok = false
				fi;
				callq[o].nodes = callq[o].nodes | WCALL(me);
				accepted = accepted | WCALL(me)
			}
		fi;
		if
		:: via_slot || ok ->
			/* xc_kick(o): S2 */
			s = idle[o];
			xc_kick(o, s, ok, 0)
		:: else -> skip
		fi;
		atomic { s = 0; ok = false; waiting[me] = true }
		/* xc_sync_wait: xc_sync_spin looks at the word (seq_cst) a while, stopping
		 * when own calls are pending: one look at a moment of spin's choosing, or none */
		do
		:: sync_done[me] -> goto wait_over
		:: break
		od;
		/* sync_wait_after_spin: sync_ask_wake: CAS word |= XC_SYNC_SLEEPING unless done */
		// @src src/run/wait.c: if (!ask_wake(r))
#ifndef MUTANT_NOASKWAKE
		// @src src/run/wait.c: if (atomic_compare_exchange_weak_explicit(&r->s->word, &w, w | XC_DONE_SLEEPING,
		atomic {
			if
			:: sync_done[me] -> WITNESS(31); goto wait_over	/* done already: return 0 */
			:: else -> sync_sleep[me] = true
			fi
		}
#else
		/* MUTANT: the waiter never asks to be woken */
		if
		:: sync_done[me] -> goto wait_over
		:: else -> skip
		fi;
#endif
wait_loop:
		/* while (!sync_ref_done(r)) - seq_cst */
		// @src src/run/wait.c: while (!ref_done(r)) {
		if
		:: sync_done[me] -> goto wait_end
		:: else -> skip
		fi;
		// @src src/run/wait.c: if (xc_wait_serve())
		run_calls(me);
		if
		:: any -> any = false; WITNESS(29); goto wait_loop	/* continue */
		:: else -> skip
		fi;
		/* xc_idle_wait(self, ready_sync, r, window, until, 0): until = 0 (stuck reports off) */
		// @src src/run/wait.c: if (!xc_idle_wait(self, ready_done, &ready, deep ? -1 : xc_poll_window(self),
		mode = MODE_SYNC;
		goto idle_wait;
wait_end:
		/* pushed while we looked idle: see xc_idle_state_set */
		// @src src/run/wait.c: xc_run_urgent(self);
		run_urgent(me);
wait_over:
		/* xc_slot_call: give the claim back (release) */
		atomic {
			if
			:: via_slot -> slot_owner[o] = 0
			:: else -> skip
			fi;
			via_slot = false; any = false; waiting[me] = false
		}
#endif
		atomic { in_work[me] = false; wbit = 0 }
		goto loop_top
	:: else -> skip
	fi;
#endif

	/* cpu_idle: xc_idle_state_set(c, POLLING), relaxed */
	// @src src/cpu/worker.c: xc_idle_state_set(c, XC_IDLE_POLLING);
	idle[me] = POLLING;
idle_loop:	/* cpu_idle's loop: xc_idle_wait(c, ready_idle, NULL, window, 0, watch) */
idle_wait:
	/* xc_idle_wait (mode says which): prev = load(idle), relaxed */
	// @src src/proto/wake.c: uint32_t prev = atomic_load_explicit(&c->mbox.idle, memory_order_relaxed);
	prev = idle[me];
	/* "only this thread writes RUNNING or POLLING": cpu_idle waits POLLING;
	 * a wait inside a work item RUNNING */
	assert(mode == MODE_IDLE && prev == POLLING || mode == MODE_SYNC && prev == RUNNING);
	/* idle = POLLING, relaxed */
	// @src src/proto/wake.c: atomic_store_explicit(&c->mbox.idle, XC_IDLE_POLLING, memory_order_relaxed);
	idle[me] = POLLING;
	/*
	 * poll_until: while (!ready()) spin, until the window ends. Polling only
	 * re-reads, so one read at a moment of spin's choosing covers every
	 * window (none, adaptive, forever); or the worker gives up at once.
	 * (RING) The poll of XC_RELEASE_RETRY_NS after a keep_all is the same.
	 */
idle_poll:
	do
	:: mode == MODE_SYNC && sync_done[me] -> goto idle_out
	:: SLOT_PENDING(me) -> goto idle_out
	:: PENDING(callq[me]) -> goto idle_out
	:: PENDING(urgentq[me]) -> goto idle_out
#if RING
	/*
	 * a held ring's new calls, seen with no doorbell: the worker polls its
	 * rings. The code's untraced poll runs them in the pass itself
	 * (ready_idle_straight, while no urgent call, OS check or task work
	 * waits) and polls on; here the worker leaves the poll, runs them and
	 * comes back: the same steps, POLLING throughout, no W step between.
	 */
	:: RINGS_PENDING -> WITNESS(58); goto idle_out
#endif
#if WORK
	:: mode == MODE_IDLE && PENDING(workq[me]) -> goto idle_out
#endif
	:: mode == MODE_IDLE && CTL_READY(me) -> goto idle_out
#if FOLLOW
	:: mode == MODE_IDLE && elsewhere -> goto idle_out	/* ready_idle: os_suspect */
#endif
	:: break	/* window 0, or it ran out */
	od;
#if RING
	/* U1-U3 before the first W1: a ring still held has calls, and W2 finds them */
	// @src src/proto/wake.c: while (xc_rings_release(c)) {
	rings_release(me);
	/* keep_all: another worker's membarrier is under way: poll on, then release again */
	// @src src/proto/wake.c: if (poll_until(c, ready, ctx, XC_RELEASE_RETRY_NS, deadline_ns, &again))
	if
	:: keep_all -> keep_all = false; goto idle_poll
	:: else -> skip
	fi;
#endif
sleep_loop:
	/* W1: idle = SLEEPING, seq_cst */
	// @src src/proto/wake.c: atomic_store_explicit(&c->mbox.idle, XC_IDLE_SLEEPING, memory_order_seq_cst);
	idle[me] = SLEEPING;
#ifndef MUTANT_NORECHECK
	/* W2: if (ready(c, ctx)) break; - seq_cst loads */
	// @src src/proto/wake.c: if (ready(c, ctx, false))	/* W2 */
#if PAIR
	/* ready_done: ref_done || xc_calls_pending(c) (|| an offline request, not modelled: a wake more) */
	// @src src/run/wait.c: (w->deep ? xc_calls_pending_unheld(c) || xc_rings_unlooked(c) : xc_w2_pending(c, false)) ||
	if
	:: mode == MODE_SYNC && sync_done[me] -> WITNESS(30); goto idle_out	/* the re-check saw the completion */
	:: else -> skip
	fi;
#endif
	if
	:: SLOT_PENDING(me) -> WITNESS(18); goto idle_out	/* the re-check saw a slot call */
	:: else -> skip
	fi;
	if
	:: PENDING(callq[me]) -> WITNESS(9); goto idle_out	/* the re-check saw a call */
	:: else -> skip
	fi;
	if
	:: PENDING(urgentq[me]) -> WITNESS(14); goto idle_out	/* ... an urgent call */
	:: else -> skip
	fi;
#if RING
	/* xc_calls_pending: ... || (c->rings_held && xc_rings_pending(c)): a ring U3 kept */
	// @src src/proto/wake.h: (c->worker.rings_held && xc_rings_pending(c));
	if
	:: RINGS_PENDING -> WITNESS(57); goto idle_out
	:: else -> skip
	fi;
#endif
	/* ready_idle: task_work_pending = xc_work_queued || ctl_pending (work_head is empty here) */
#if WORK
	// @src src/proto/wake.h: return c->worker.work_head || xc_llist_nonempty(&c->mbox.workq, memory_order_seq_cst) ||
	if
	:: mode == MODE_IDLE && PENDING(workq[me]) -> WITNESS(32); goto idle_out	/* ... a work item */
	:: else -> skip
	fi;
#endif
#ifndef MUTANT_NOCTLCHECK
	if
	:: mode == MODE_IDLE && CTL_READY(me) -> WITNESS(8); goto idle_out	/* ... a hotplug request */
	:: else -> skip
	fi;
#endif
#if FOLLOW
	/* ready_idle: ... || os_suspect(c) */
	// @src src/cpu/worker.c: return xc_w2_pending(c, true) || xc_os_suspect(c);
	if
	:: mode == MODE_IDLE && elsewhere -> WITNESS(41); goto idle_out	/* ... the thread moved */
	:: else -> skip
	fi;
#endif
#endif
	/*
	 * (deadline 0 and no sleep limit - follow_os off: no timeout)
	 * W3: futex_wait(&c->idle, SLEEPING): compare and queue
	 */
	// @src src/proto/wake.c: bool timed_out = xc_futex_wait(&c->mbox.idle, XC_IDLE_SLEEPING, timeout) == -ETIMEDOUT; /* W3 */
	atomic {
		if
		:: idle[me] == SLEEPING -> waiter[me] = true
		:: else -> WITNESS(6)	/* the word moved on: return at once (EAGAIN) */
		fi
	}
	/* blocked until futex_wake, or a spurious wakeup; blocking here for good is
	 * a valid end only if nothing is pending (checked by quiescence) */
end_futex:
	if
	:: !waiter[me] -> skip
	:: atomic { waiter[me] && spurious > 0 -> spurious--; waiter[me] = false; WITNESS(5) }
#if FOLLOW
	/* the sleep limit (XC_OS_WATCH_NS): modelled only while the CPU is taken;
	 * otherwise the full check it leads to finds nothing */
	:: atomic { waiter[me] && mode == MODE_IDLE && !os_has -> waiter[me] = false; slept_out = true; WITNESS(37) }
#endif
	fi;
	/* W4: exchange(idle, POLLING), seq_cst */
	// @src src/proto/wake.c: atomic_exchange_explicit(&c->mbox.idle, XC_IDLE_POLLING, memory_order_seq_cst);
	idle[me] = POLLING;
	/* if (ready(c, ctx)) break; - the same loads as W2 */
	if
	:: mode == MODE_SYNC && sync_done[me] -> goto idle_out
	:: else -> skip
	fi;
	if
	:: SLOT_PENDING(me) -> goto idle_out
	:: else -> skip
	fi;
	if
	:: PENDING(callq[me]) -> goto idle_out
	:: else -> skip
	fi;
	if
	:: PENDING(urgentq[me]) -> goto idle_out
	:: else -> skip
	fi;
#if RING
	if
	:: RINGS_PENDING -> goto idle_out
	:: else -> skip
	fi;
#endif
#if WORK
	if
	:: mode == MODE_IDLE && PENDING(workq[me]) -> goto idle_out
	:: else -> skip
	fi;
#endif
	/* ctl_pending */
	// @src src/proto/wake.h: atomic_load_explicit(&c->life.ctl, memory_order_seq_cst) != XC_CTL_NONE;
	if
	:: mode == MODE_IDLE && CTL_READY(me) -> goto idle_out
	:: else -> skip
	fi;
#if FOLLOW
	if
	:: mode == MODE_IDLE && elsewhere -> goto idle_out
	:: else -> skip
	fi;
	/* timed out, nothing ready: xc_idle_wait returns false; cpu_idle sets
	 * os_recheck and leaves for the task loop's full check */
	// @src src/cpu/worker.c: atomic_store_explicit(&c->worker.os_recheck, true, memory_order_relaxed);
	if
	:: slept_out -> atomic { slept_out = false; idle[me] = prev; prev = 0; os_recheck = true }; goto leave_idle
	:: else -> skip
	fi;
#endif
	goto sleep_loop;
idle_out:
#if FOLLOW
	slept_out = false;
#endif
	/* xc_idle_wait's out: xc_idle_state_set(c, prev) - POLLING relaxed, RUNNING seq_cst */
	// @src src/proto/wake.c: xc_idle_state_set(c, prev);
	idle[me] = prev;
	prev = 0;
#if PAIR
	if
	:: mode == MODE_SYNC -> mode = MODE_IDLE; goto wait_loop
	:: else -> skip
	fi;
#endif
#if FOLLOW
	/* cpu_idle: if (os_suspect(c)) break; - before it runs anything */
	// @src src/cpu/worker.c: if (xc_ablated(XC_ABLATE_NOTIFY) || xc_os_suspect(c))
	if
	:: elsewhere -> goto leave_idle
	:: else -> skip
	fi;
#endif
	/* cpu_idle: (ablation: not modelled) xc_run_calls(c), still POLLING */
	// @src src/cpu/worker.c: if (xc_run_calls(c))	/* calls go before task work in any case */
	run_calls(me);
	/* cpu_idle: if (task_work_pending(c)) break; - xc_work_queued, then ctl_pending */
	// @src src/cpu/worker.c: if (xc_task_pending(c))
#if WORK
	if
	:: PENDING(workq[me]) -> WITNESS(26); goto leave_idle	/* leaves idle for a work item */
	:: else -> skip
	fi;
#endif
	if
	:: CTL_READY(me) -> goto leave_idle
	:: else -> skip
	fi;
	/* ... else wait again */
	goto idle_loop;
leave_idle:
	/* cpu_idle: xc_idle_state_set(c, RUNNING), seq_cst; sched_yield; worker_loop's top */
	// @src src/cpu/worker.c: xc_idle_state_set(c, XC_IDLE_RUNNING);
#ifdef MUTANT_RELAXEDRECHECK
	/* MUTANT: the store may sit in the store buffer past the next loads */
	if
	:: idle[me] = RUNNING
	:: running_buffered = true
	fi;
#else
	idle[me] = RUNNING;
#endif
	goto loop_top;

#if FOLLOW
os_took:
	/*
	 * cpu_taken: park = WAIT (before the drain, so that xc_cpu_online's
	 * release is not lost), offline_by_os = true; then cpu_drain, as hotplug's.
	 */
	// @src src/cpu/worker.c: atomic_store_explicit(&c->life.park, XC_PARK_WAIT, memory_order_relaxed);
	// @src src/cpu/worker.c: c->life.offline_by_os = true;
	atomic { park[me] = PARK_WAIT; offline_by_os = true; by_os = true }
#endif
offline:
	DRAIN_RUNNING(me)	/* (MUTANT_RELAXEDRECHECK) the drain's RMWs come after the store */
	/* cpu_offline -> cpu_drain */
	cpu_drain(me);
#if FOLLOW
	if
	:: by_os -> by_os = false; goto park_loop	/* cpu_taken: cpu_park_offline */
	:: else -> skip
	fi;
#endif
	/* cpu_offline: park = WAIT; ctl = NONE; xc_sync_complete(&c->offline_done) */
	park[me] = PARK_WAIT;
	ctl[me] = CTL_NONE;
	offline_done = true;
#if !FOLLOW
	/* cpu_park: until park != WAIT, futex_wait(&c->park, WAIT) (a request while
	 * parked, and the park watch, come with follow_os only: FOLLOW) */
end_parked:
	park[me] != PARK_WAIT;
	goto loop_top
#else
park_loop:
	parked = true;
	/*
	 * cpu_park: each round loads park, then ctl; RUN: return; OFFLINE: complete
	 * it (the CPU is offline already); else the park watch, then
	 * futex_wait(&c->park, WAIT, XC_OS_PARK_WATCH_NS). The wait is modelled
	 * as "until something is to be done": park released, a request, or a
	 * watch that changes something (one whose checks find nothing new, and
	 * a failed trylock, change nothing and are left out).
	 */
end_parked:
	do
	// @src src/cpu/worker.c: if (p != XC_PARK_WAIT)
	:: park[me] != PARK_WAIT -> break
	// @src src/cpu/worker.c: if (ctl == XC_CTL_OFFLINE) {
	:: park[me] == PARK_WAIT && ctl[me] == CTL_OFFLINE ->
		ctl[me] = CTL_NONE;
		// @src src/cpu/worker.c: xc_complete(&c->life.offline_done);
		atomic { offline_done = true; if :: offline_by_os -> WITNESS(36) :: else -> skip fi }
	/* park_watch: taken: xc_os_come_back (pinned there again: c->taken cleared) */
	// @src src/cpu/worker.c: if (!xc_os_come_back(c))
	:: atomic { park[me] == PARK_WAIT && taken_flag && os_has -> taken_flag = false } ->
		goto watch_reopen
	/* ... not taken: xc_os_check finds it taken now ("taken away while offline") */
	// @src src/cpu/worker.c: } else if (xc_os_check(c)) {
	:: atomic { park[me] == PARK_WAIT && !taken_flag && !os_has ->
		taken_flag = true; if :: !offline_by_os -> WITNESS(42) :: else -> skip fi }
	/* ... not taken, still pinned: a reopen the last watch could not finish */
	:: park[me] == PARK_WAIT && !taken_flag && os_has && offline_by_os && hp_lock == 0 ->
		goto watch_reopen
	od;
	parked = false;
	goto loop_top;
watch_reopen:
	/* return c->offline_by_os && taken_cpu_reopen(c); */
	// @src src/cpu/worker.c: return c->life.offline_by_os && xc_taken_cpu_reopen(c);
	if
	:: !offline_by_os -> goto end_parked
	:: else -> skip
	fi;
	/* taken_cpu_reopen: trylock; on failure the next watch tries again */
#ifndef MUTANT_NOREOPENLOCK
	// @src src/cpu/worker.c: if (pthread_mutex_trylock(&xc_rt.hotplug_lock))
	atomic {
		if
		:: hp_lock == 0 -> hp_lock = LOCK_WORKER; ok = true
		:: else -> ok = false; WITNESS(40)	/* held: try at the next watch */
		fi
	}
	if
	:: !ok -> goto end_parked
	:: else -> ok = false
	fi;
#else
	/* MUTANT: no lock: the checks and the reopen race xc_cpu_offline and xc_cpu_online */
#endif
	/* under the lock: user_offline and park are written only under it (and park by this thread) */
	// @src src/cpu/worker.c: if (c->life.user_offline) {
	if
	:: user_offline ->
		// @src src/cpu/worker.c: c->life.offline_by_os = false;	/* the user's offline now: xc_cpu_online brings it back */
		offline_by_os = false; WITNESS(39)	/* stays parked */
	// @src src/cpu/worker.c: atomic_load_explicit(&c->life.park, memory_order_acquire) == XC_PARK_WAIT) {
	:: !user_offline && park[me] == PARK_WAIT ->
		/* (xc_rt.state is XC_RT_UP: no exit is modelled) */
		WITNESS(34);
		// @src src/cpu/worker.c: xc_cpu_open(c);
		cpu_open(me);
		offline_by_os = false;
#ifndef MUTANT_NOREOPENLOCK
		hp_lock = 0;
#endif
		parked = false;
		goto loop_top	/* run = true: cpu_park returns XC_PARK_RUN */
	:: else -> skip	/* xc_cpu_online released it already */
	fi;
#ifndef MUTANT_NOREOPENLOCK
	// @src src/cpu/worker.c: pthread_mutex_unlock(&xc_rt.hotplug_lock);
	hp_lock = 0;
#endif
	goto end_parked
#endif
}

#if ATTACHED
/*
 * The attached thread's exchange of its idle word to RUNNING (seq_cst):
 * xc_fd_sleep_begin's "do not sleep" after W2 found something (w2), or W4 in
 * xc_fd_sleep_end. Then fd_settle's count, in the same step (the thread's
 * own word): read WAKING or WOKENUP, one claimed kick, whose write is done
 * or on its way.
 */
inline fd_exchange(me, w2)
{
	atomic {
		old = idle[me];
		idle[me] = RUNNING;
#ifndef MUTANT_FDNOCOUNT
		// @src src/proto/wake.c: if (old == XC_IDLE_WAKING || old == XC_IDLE_WOKENUP)
		// @src src/proto/wake.c: c->worker.fd_kicks_seen++;
		if
		:: old == WAKING || old == WOKENUP ->
			fd_kicks_seen++;
			if :: w2 -> WITNESS(45) :: else -> skip fi	/* W2 found something after a kick was claimed */
		:: else -> skip
		fi;
#else
		/* MUTANT: the claimed kick is not counted */
#endif
		old = 0
	}
}

/*
 * Every count is at least fd_kicks_drained: it is set to fd_kicks_done when
 * that equals fd_kicks_seen, fd_claims >= fd_writes >= fd_kicks_done, and
 * the counts only grow. The code only compares the counts with each other,
 * so the model keeps them relative to fd_kicks_drained: the step that moves
 * it subtracts it from every count, itself included, and the states of
 * successive sleeps merge.
 */
#define FD_REBASE() \
	fd_kicks_seen = fd_kicks_seen - fd_kicks_drained; \
	fd_kicks_done = fd_kicks_done - fd_kicks_drained; \
	fd_claims = fd_claims - fd_kicks_drained; \
	fd_writes = fd_writes - fd_kicks_drained; \
	fd_kicks_drained = 0

/*
 * fd_settle (src/proto/wake.c), after its count: while kicks are owed (drained !=
 * seen, the thread's own words), load fd_kicks_done (acquire), read the
 * eventfd (the counter to 0; EAGAIN if it is 0), and mark the kicks drained
 * only if the load equals fd_kicks_seen (every write counted came before
 * the read). One step: the check and the mark are the thread's own; the
 * load conflicts only with a sender's fd_kicks_done++ and the read only with
 * a sender's write, two steps apart in each sender, so an interleaving with
 * a sender step between the load and the read reaches the same states as
 * one with its write before the load or its count after the read.
 */
inline fd_settle(me)
{
	// @src src/proto/wake.c: if (c->worker.fd_kicks_drained == c->worker.fd_kicks_seen)
	// @src src/proto/wake.c: uint64_t done = atomic_load_explicit(&c->sent.fd_kicks_done, memory_order_acquire);
	// @src src/proto/wake.c: (void)!read(c->sent.kick_fd, &val, sizeof(val));
	// @src src/proto/wake.c: if (done == c->worker.fd_kicks_seen)
	atomic {
		if
		:: fd_kicks_drained != fd_kicks_seen ->
			done = fd_kicks_done;
			/* a read takes only writes of kicks the thread counted */
			assert(fd_writes <= fd_kicks_seen);
			if :: done < fd_kicks_seen -> WITNESS(46) :: else -> skip fi;	/* a write not counted yet */
			fd_count = 0;
			if
			:: done == fd_kicks_seen -> fd_kicks_drained = done; FD_REBASE()
			:: else -> skip	/* still owed: the next settle reads again */
			fi;
			done = 0
		:: else -> skip
		fi
	}
}

/*
 * attached_ctl's xc_cpu_offline_served (src/cpu/worker.c, shared with the
 * worker's cpu_offline): an offline request: xc_cpu_drain, ctl = NONE
 * (relaxed), xc_complete(&c->offline_done). No park: the thread stays
 * attached and its loop goes on (c->park = WAIT is read by no one here);
 * xc_cpu_online reopens the queues (xc_cpu_open).
 */
inline attached_offline(me)
{
	// @src src/cpu/attach.c: xc_cpu_offline_served(c);	/* the thread stays attached, its CPU offline */
	// @src src/cpu/worker.c: xc_cpu_drain(c);
	cpu_drain(me);
	// @src src/cpu/worker.c: atomic_store_explicit(&c->life.ctl, XC_CTL_NONE, memory_order_relaxed);
	ctl[me] = CTL_NONE;
	// @src src/cpu/worker.c: xc_complete(&c->life.offline_done);
	offline_done = true
}

/* the attached thread enters its wait (W3): a ghost flag; a counter > 0 before
 * any kick of this sleep is a leftover write that fd_settle has yet to read */
#define FD_WAIT_ENTER(me) \
	waiter[me] = true; \
	if :: fd_count > 0 && idle[me] == SLEEPING_FD -> WITNESS(47) :: else -> skip fi

/*
 * CPU 0's worker as an attached thread (src/cpu/attach.c): an application
 * thread in its own event loop,
 *   for (;;) {
 *       xc_poll();                            xc_attached_poll
 *       ... the loop's own events ...         (not modelled)
 *       if (xc_worker_sleep_begin() == 0)     xc_fd_sleep_begin: W1, W2
 *           epoll_wait(...);                  W3, the eventfd in it
 *       xc_worker_sleep_end();                xc_fd_sleep_end: W4
 *   }
 * attach_finish left it RUNNING, its counts 0, the CPU open: the initial
 * state. With DETACH it may detach at its loop's top (attached_leave).
 */
proctype attached(byte me)
{
	byte taken = 0;		/* a taken call list */
#if RING
	byte held = 0;		/* c->rings_held: a bit per ring (ring.c) */
	byte rr = 0;		/* a ring index */
	byte rcl = 0;		/* the rings xc_rings_close runs */
	byte dropped = 0;	/* c->rings_dropped: a bit per ring (ring.c) */
	bool anyunf = false;	/* U2': rings_unfenced found one */
	bool keep_all = false;	/* xc_rings_release's keep_all: do not sleep yet */
#endif
	byte cbit = 0;		/* the call running from it */
	byte utaken = 0;	/* a taken urgent list */
	byte ubit = 0;
	byte wbit = 0;		/* the work item running */
	byte work_head = 0;	/* c->work_head (thread-private) */
	byte old = 0;		/* the state an exchange read */
	byte done = 0;		/* fd_settle's load of fd_kicks_done */
	byte s;
	bool ok;
	bool k;
	byte w;
	bool again = false;
#ifdef MUTANT_RELAXEDRECHECK
	bool running_buffered = false;	/* (never buffered here) */
#endif

loop_top:
#if DETACH
	/* xc_worker_detach (attached_self: not inside xc_poll, a call or an item): here, or not yet */
	// @src src/cpu/attach.c: attached_leave(c);
	if
	:: goto leave
	:: skip
	fi;
#endif
	/* xc_poll -> xc_attached_poll: first xc_fd_sleep_end (RUNNING here: fd_settle only) */
	// @src src/cpu/attach.c: xc_fd_sleep_end(c);	/* RUNNING already: it reads the eventfd only while a kick is owed */
	fd_settle(me);
	/* attached_ctl: ctl (acquire) == OFFLINE: attached_offline */
	// @src src/cpu/attach.c: if (atomic_load_explicit(&c->life.ctl, memory_order_acquire) != XC_CTL_OFFLINE)
	if
	:: ctl[me] == CTL_OFFLINE -> attached_offline(me)
	:: else -> skip
	fi;
	/* (attached_follow: follow_os off) the calls */
	// @src src/cpu/attach.c: n += xc_run_calls(c);
	run_calls(me);
#if WORK
	/* work items, each followed by the calls (the batch of XC_ATTACHED_WORK_BATCH is never full here) */
	// @src src/cpu/attach.c: for (int i = 0; i < XC_ATTACHED_WORK_BATCH && xc_run_one_work(c); i++)
work_loop:
	work_take(me);
	if
	:: work_head != 0 ->
		work_start(me);
		atomic { in_work[me] = false; wbit = 0 }
		// @src src/cpu/attach.c: n += 1 + xc_run_calls(c);
		run_calls(me);
		goto work_loop
	:: else -> skip
	fi;
#endif
	/* the loop's own events; xc_worker_sleep_begin -> xc_fd_sleep_begin */
#if RING
	/* U1-U3 first, as in xc_idle_wait */
	// @src src/proto/wake.c: if (xc_rings_release(c))	/* U1-U3 (ring.c), as in xc_idle_wait */
	rings_release(me);
	/* keep_all: xc_fd_sleep_begin returns false (RUNNING, no W1), the loop goes on */
	// @src src/proto/wake.c: return false;		/* not yet: the loop polls on and comes back */
	if
	:: keep_all -> keep_all = false; goto loop_top
	:: else -> skip
	fi;
#endif
	/* W1: idle = SLEEPING_FD, seq_cst */
	// @src src/proto/wake.c: atomic_store_explicit(&c->mbox.idle, XC_IDLE_SLEEPING_FD, memory_order_seq_cst);
	idle[me] = SLEEPING_FD;
#ifndef MUTANT_FDNORECHECK
	/*
	 * W2: ready_attached = xc_w2_pending(c, true): xc_calls_pending (slot,
	 * call queue, urgent queue), then xc_task_pending (work_head, empty
	 * here; the work queue; ctl), each a seq_cst load
	 */
	// @src src/proto/wake.c: if (ready(c, ctx, false)) {	/* W2 */
	// @src src/cpu/attach.c: return xc_w2_pending(c, true) || (!taken && xc_os_suspect(c));
	if
	:: SLOT_PENDING(me) -> goto fd_ready
	:: else -> skip
	fi;
	if
	:: PENDING(callq[me]) -> goto fd_ready
	:: else -> skip
	fi;
	if
	:: PENDING(urgentq[me]) -> goto fd_ready
	:: else -> skip
	fi;
#if RING
	if
	:: RINGS_PENDING -> goto fd_ready
	:: else -> skip
	fi;
#endif
#if WORK
	if
	:: PENDING(workq[me]) -> goto fd_ready
	:: else -> skip
	fi;
#endif
	/*
	 * ... the last load of W2 found nothing: xc_worker_sleep_begin returns 0
	 * and the loop enters its wait, in the same step (the entry is a ghost's).
	 */
	if
	:: CTL_READY(me) -> goto fd_ready
	:: atomic { else -> FD_WAIT_ENTER(me) }
	fi;
#else
	/* MUTANT: no W2 - xc_fd_sleep_begin returns 0 right after W1 */
	atomic { FD_WAIT_ENTER(me) };
#endif
	/*
	 * W3: the loop's own wait, the eventfd in it: it returns once the
	 * counter is > 0 (an eventfd stays readable until read), or spuriously
	 * (another descriptor, a signal's EINTR; at most SPURIOUS in a run). With
	 * io_uring the loop may read the eventfd itself: its read completes and
	 * takes the counter to 0. Blocking here for good is a valid end only if
	 * nothing is pending (quiescence).
	 */
end_fdwait:
	if
	:: atomic { fd_count > 0 -> waiter[me] = false }
	:: atomic { fd_count > 0 -> waiter[me] = false; fd_count = 0; WITNESS(51) }
	:: atomic { spurious > 0 -> spurious--; waiter[me] = false }
	fi;
	/*
	 * xc_worker_sleep_end -> xc_fd_sleep_end: idle (relaxed) is not RUNNING
	 * (only this thread stores RUNNING): W4, exchange idle -> RUNNING, seq_cst
	 */
	// @src src/proto/wake.c: old = atomic_exchange_explicit(&c->mbox.idle, XC_IDLE_RUNNING, memory_order_seq_cst);
	fd_exchange(me, 0);
	// @src src/proto/wake.c: fd_settle(c, old);
	fd_settle(me);
	goto loop_top;

fd_ready:
	/* W2 found something: exchange idle -> RUNNING, seq_cst, and fd_settle; returns 1 */
	// @src src/proto/wake.c: fd_settle(c, atomic_exchange_explicit(&c->mbox.idle, XC_IDLE_RUNNING, memory_order_seq_cst));
	fd_exchange(me, 1);
	fd_settle(me);
	/* xc_worker_sleep_end: RUNNING, so fd_settle only */
	fd_settle(me);
	goto loop_top;

#if DETACH
leave:
	/* attached_leave: xc_fd_sleep_end (RUNNING here: fd_settle only); no sender claims a kick from here */
	// @src src/cpu/attach.c: xc_fd_sleep_end(c);	/* RUNNING: no sender claims a kick from here */
	fd_settle(me);
	/*
	 * The hotplug lock by trylock; while another holds it, serve an offline
	 * request (attached_ctl) and the calls. A round that finds nothing to do
	 * changes nothing and is left out.
	 */
	// @src src/cpu/attach.c: while (pthread_mutex_trylock(&xc_rt.hotplug_lock)) {
	do
	:: atomic { hp_lock == 0 -> hp_lock = LOCK_WORKER } -> break
	:: hp_lock != 0 && ctl[me] == CTL_OFFLINE ->
		WITNESS(50);	/* the requester holds the lock and waits for this thread */
		attached_offline(me)
	:: hp_lock != 0 && (SLOT_PENDING(me) || PENDING(callq[me]) || PENDING(urgentq[me])
#if RING
			    || RINGS_PENDING
#endif
			   ) ->
		run_calls(me)
	od;
	/* under the lock: drain an online CPU as an offline does */
	// @src src/cpu/attach.c: if (atomic_load_explicit(&c->life.online, memory_order_acquire)) {
	if
	:: online -> cpu_drain(me)
	:: else -> skip
	fi;
	/* xc_fd_quiesce: until fd_kicks_done (acquire) == fd_kicks_seen */
	// @src src/proto/wake.c: while (atomic_load_explicit(&c->sent.fd_kicks_done, memory_order_acquire) != c->worker.fd_kicks_seen)
	if
	:: fd_kicks_done != fd_kicks_seen -> WITNESS(48)	/* a write in flight: wait for it */
	:: else -> skip
	fi;
	fd_kicks_done == fd_kicks_seen;
	/* close(c->kick_fd): no sender is between its S3 and its write, nor can one start */
	// @src src/cpu/attach.c: close(c->sent.kick_fd);
	atomic { assert(fd_writes == fd_claims); fd_closed = true }
	/* c->attached = false, then unlock (the wait for urgent senders and the signal mask: not modelled) */
	// @src src/cpu/attach.c: c->life.attached = false;
	atomic { attached_on = false; hp_lock = 0 }
#endif
}
#endif

/*
 * A sender: NCALLS times call_push (src/api/call.c) onto CPU 0.
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
	:: j < NCALLS && !URGENT ->
		/*
		 * xc_slot_call (a waiting call): after its looks at the word and the
		 * claim (the straight path, xc_call_single, has none: so the claim
		 * may come whatever they would have read), claim (CAS slot_claim
		 * 0 -> 1; fails if another sender won: the queue; the worker may
		 * close the slot before the publication),
		 * then publish (S1, CAS word 0 -> PUBLISHED, fails if CLOSED), kick,
		 * wait for the word to drop the publication, and give the claim back.
		 */
		// @src src/proto/mailbox.h: if (!atomic_compare_exchange_strong_explicit(&c->slot_claim, &w, 1, memory_order_acquire,
		atomic {
			if
			:: slot_owner[0] == 0 -> slot_owner[0] = id + 1; ok = true
			:: else -> ok = false
			fi
		}
		if
		:: !ok -> goto queue
		:: else -> skip
		fi;
		// @src src/proto/mailbox.h: if (xc_likely(atomic_compare_exchange_strong_explicit(&s->done.word, &w, XC_SLOT_PUBLISHED,
		atomic {
			assert(!slot_pub[0]);	/* only the holder of the claim publishes */
			if
			:: !slot_closed[0] -> slot_pub[0] = true; slot_call[0] = ME; accepted = accepted | ME; ok = true
			:: else -> ok = false; WITNESS(17)	/* closed: use the queue */
			fi
		}
		if
		:: ok ->
#ifndef MUTANT_LOADFIRST
			s = idle[0];	/* S2 */
#endif
			xc_kick(0, s, ok, 0);
			/* xc_sync_wait: until the word no longer reads PUBLISHED */
			!slot_pub[0];
			// @src src/run/slot.c: atomic_store_explicit(&c->slot_claim, 0, memory_order_release);
			atomic { slot_owner[0] = 0; j++; r = 0; s = 0; ok = false }
		:: else ->
			// @src src/run/slot.c: atomic_store_explicit(&c->slot_claim, 0, memory_order_release);
			atomic { slot_owner[0] = 0; ok = false };
			goto queue
		fi
	:: j < NCALLS ->
queue:
#ifdef MUTANT_LOADFIRST
		/* MUTANT: S2 before S1 - the state is read before the push */
		s = idle[0];
#endif
		/* S1: xc_llist_push onto callq or urgentq - one successful CAS (seq_cst), or CLOSED seen */
		// @src src/base/llist.h: return old == NULL ? XC_PUSH_WAS_EMPTY : XC_PUSH_NONEMPTY;
		atomic {
			if
			:: URGENT && urgentq[0].closed || !URGENT && callq[0].closed ->
				r = PUSH_CLOSED; refused = refused | ME; WITNESS(7)
			:: else ->
				if
				:: URGENT && urgentq[0].nodes == 0 || !URGENT && callq[0].nodes == 0 ->
					r = PUSH_WAS_EMPTY
				:: else -> r = PUSH_NONEMPTY
				fi;
				if
				:: URGENT -> urgentq[0].nodes = urgentq[0].nodes | ME
#ifndef MUTANT_LOADFIRST
					; if :: r == PUSH_WAS_EMPTY -> s2_due[0]++ :: else -> skip fi
#endif
				:: else -> callq[0].nodes = callq[0].nodes | ME
				fi;
				accepted = accepted | ME
			fi
		}
		/* call_kick: kick only if the queue went from empty to non-empty */
		// @src src/proto/wake.c: if (pushed == XC_PUSH_WAS_EMPTY || (pushed == XC_PUSH_NONEMPTY && xc_ablated(XC_ABLATE_COALESCE))) {
		if
		:: r == PUSH_WAS_EMPTY && !URGENT ->
#ifndef MUTANT_LOADFIRST
			/* S2: s = atomic_load(&c->idle, seq_cst) */
			// @src src/proto/wake.h: uint32_t s = atomic_load_explicit(&c->mbox.idle, memory_order_seq_cst);
			s = idle[0];
#endif
			xc_kick(0, s, ok, 0)
		:: r == PUSH_WAS_EMPTY && URGENT ->
			/*
			 * xc_kick_urgent: s = atomic_load(&c->idle, seq_cst); RUNNING: tgkill.
			 * The load and the signal are one step: only the handler reads
			 * sig_pending, and it may run arbitrarily late anyway.
			 */
			// @src src/proto/urgent.c: uint32_t s = atomic_load_explicit(&c->mbox.idle, memory_order_seq_cst);
			// @src src/proto/urgent.c: syscall(SYS_tgkill, getpid(), c->life.tid, xc_rt.cfg.urgent_signal);
			atomic {
#ifndef MUTANT_LOADFIRST
				s = idle[0];
				s2_due[0]--;
#endif
#ifdef CHECK_URGENT_PROMPT
				/* XC_URGENT "reach[es] a worker that is busy in a long work item or call"
				 * (the first include/xcall.h): one inside a call's fn must read as RUNNING */
				assert(!(in_call[0] > 0 && s != RUNNING));
#endif
				if
				:: s == RUNNING -> sig_pending[0]++; WITNESS(15)
				:: else -> skip
				fi
			}
			if
			:: s != RUNNING ->
				/* xc_kick(c): its own S2, then S3 */
#ifndef MUTANT_LOADFIRST
				s = idle[0];
#endif
				xc_kick(0, s, ok, 0)
			:: else -> skip	/* the handler will run the urgent queue */
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

#if RING
/*
 * A plain sender with RING: NCALLS calls to CPU 0 through its own ring
 * (ring_call, ring_put, src/api/call.c; xc_ring_doorbell, src/proto/ring.h;
 * xc_ring_doorbell_slow, ring_refused, src/proto/ring.c). With RWAIT its last call
 * is XC_WAIT: through the slot if the ring holds nothing of its own untaken
 * (slot_in_order) and the slot can be had, else through the ring, and it
 * waits for the completion. Each call is
 *   R1  the entry, then head = h + 1 (release); xc_ring_asym read
 *       (relaxed, at each call);
 *       fenced (unfenced == 0): F1 unfenced = 1 if the flag reads true,
 *       then R1' a seq_cst fence, which drains the store buffer;
 *       unfenced and the flag true: no fence, and the head store may stay
 *       in the store buffer (rbuf) past R2; unfenced and the flag false:
 *       C' unfenced = 0 (release), then R1';
 *   R2  s = state (relaxed); LINKED: done, the worker has the ring (it
 *       rides; a fenced call that stored F1 and rides leaves unfenced =
 *       1, so the next calls skip R1'; one that read the flag false
 *       leaves it 0, and the next call is fenced again);
 *   R3  IDLE: CAS state IDLE -> LINKED; lost: the worker re-linked it, done;
 *       won (a locked RMW: the store buffer drains): C unfenced = 0
 *       (release), push the ring on callq (S1), and kick if callq was
 *       empty (S2, S3: xc_kick); callq closed: ring_refused.
 * The other senders' calls in a burst find the ring LINKED: one doorbell
 * for the burst. The owner reads its own head through its store buffer
 * (idx, slot_in_order's xc_ring_empty). MUTANT_NONEMPTYSKIP skips R2/R3
 * when the ring held untaken entries before the put; MUTANT_NOF1 enters
 * the unfenced mode without F1: the flag the worker reads stays 0;
 * MUTANT_UNMARKRELAXED stores C' relaxed, seen before the head stores;
 * MUTANT_MARKKEPT is the code before C': a marked ring's calls skip R1'
 * whatever the flag.
 */
#define RI	(id - NURGENT)		/* the sender's ring */
#define RB	(1 << RI)		/* ... as a node on callq */
#define WAITCALL	(RWAIT && j == NCALLS - 1)
#ifndef MUTANT_NOF1
#define OWNER_UNFENCED	unf[RI]		/* r->unfenced, its own word */
#define SET_F1		atomic { unf[RI] = 1; letgo[RI] = false; PAID_RESET }	/* F1 */
#define CLEAR_C		atomic { if :: letgo[RI] -> WITNESS(90) :: else -> skip fi;	/* C */ \
			unf[RI] = 0; letgo[RI] = false; PAID_RESET }
#define CLEAR_OWN	unf[RI] = 0; letgo[RI] = false; PAID_RESET	/* C' */
#else
/* MUTANT: the owner keeps its mode to itself: unfenced stays 0, the worker never pays */
#define OWNER_UNFENCED	fmode
#define SET_F1		fmode = 1
#define CLEAR_C		fmode = 0
#define CLEAR_OWN	fmode = 0
#endif
proctype ring_sender(byte id)
{
	byte j = 0;	/* the call being made: bit ME */
	byte r;		/* the push's result */
	byte s;
	byte idx;	/* its entry's index */
	byte t;
	bool ok;
#ifdef MUTANT_UNMARKRELAXED
	bool unmark = false;	/* this call cleared its ring's mark (C'): R1' to come */
#endif
#ifdef MUTANT_NOF1
	bool fmode = false;	/* the owner's calls skip R1' (the mutant's private flag) */
#endif

	do
	:: j < NCALLS ->
		if
		:: WAITCALL ->
			/* slot_in_order: xc_ring_empty: tail (acquire) == head (its own) */
#ifndef MUTANT_NOSLOTORDER
			// @src src/api/call.c: return !r || xc_ring_empty(r);
			if
			:: rtail[RI] == OWNHEAD(RI) -> skip
			:: else -> WITNESS(63); goto ring_put	/* earlier calls untaken: the ring */
			fi;
#else
			/* MUTANT: the slot whenever it can be had, ahead of the ring's untaken calls */
#endif
			/*
			 * xc_slot_call: the looks (relaxed), then the claim; the straight
			 * path (xc_call_single) claims without looking
			 */
			if
			:: skip
			:: !(!slot_pub[0] && !slot_closed[0] && slot_owner[0] == 0) -> goto ring_put	/* -EAGAIN */
			fi;
			// @src src/proto/mailbox.h: if (!atomic_compare_exchange_strong_explicit(&c->slot_claim, &w, 1, memory_order_acquire,
			atomic {
				if
				:: slot_owner[0] == 0 -> slot_owner[0] = id + 1; ok = true
				:: else -> ok = false
				fi
			}
			if
			:: !ok -> goto ring_put
			:: else -> skip
			fi;
			/* publish: S1 (CAS word 0 -> PUBLISHED), fails if CLOSED */
			atomic {
				assert(!slot_pub[0]);
				if
				:: !slot_closed[0] -> slot_pub[0] = true; slot_call[0] = ME; accepted = accepted | ME; ok = true;
					if :: j > 0 -> WITNESS(62) :: else -> skip fi	/* after its ring calls */
				:: else -> ok = false
				fi
			}
			if
			:: ok ->
				s = idle[0];	/* S2 */
				xc_kick(0, s, ok, 0);
				/* xc_completion_wait: until the word drops the publication */
				!slot_pub[0];
				/* the waiting call returned: every earlier call of ours ran */
				atomic { assert(IN_ORDER(ME)); slot_owner[0] = 0; s = 0; ok = false };
				goto call_done
			:: else ->
				atomic { slot_owner[0] = 0; ok = false };
				goto ring_put
			fi
		:: else -> skip
		fi;
ring_put:
#ifdef MUTANT_NONEMPTYSKIP
		/* MUTANT: xc_ring_empty() before the put; untaken entries: "the worker is on it" */
		ok = (rtail[RI] != OWNHEAD(RI));
#endif
		/*
		 * ring_put: the entry, then R1: head = h + 1 (release), h its own
		 * head (its buffered stores forwarded); and xc_ring_doorbell's choice
		 * on unfenced (its own word: it reads its own last store) and on
		 * xc_ring_asym (a relaxed load at each call). Unfenced, the flag
		 * true: R1' is skipped, and the head store goes into the store
		 * buffer, where it may stay past R2 until a drain. Unfenced, the
		 * flag false: C' (unfenced = 0, release) and R1': the release
		 * makes the head stores before it visible no later than C' (a
		 * drain at C'), and R1' finds nothing more. Fenced: F1
		 * (unfenced = 1) if the flag reads true, and R1', which drains the
		 * buffer, so R1 is visible before R2: one step, as nothing of the
		 * owner's is seen between them (a store that a later fence drains
		 * is the same as one made at the fence).
		 */
		// @src src/proto/ring.h: atomic_store_explicit(&r->head, h + 1, memory_order_release);
		// @src src/proto/ring.h: uint32_t unfenced = atomic_load_explicit(&r->unfenced, memory_order_relaxed);
		// @src src/proto/ring.h: bool asym = atomic_load_explicit(&xc_ring_asym, memory_order_relaxed);
		atomic {
			idx = OWNHEAD(RI);
			rent[RI * NCALLS + idx] = ME;
			accepted = accepted | ME;
			if :: idx > rtail[RI] -> WITNESS(64) :: else -> skip fi;	/* behind an untaken entry */
			if
			:: OWNER_UNFENCED ->
				rbuf[RI]++;	/* R1 into the store buffer */
#ifndef MUTANT_MARKKEPT
				// @src src/proto/ring.h: if (xc_likely(unfenced & asym)) {
				ASYM_LOAD;
				if
				:: asym -> skip	/* no fence: the worker pays (U2') */
				:: else ->
					/*
					 * the flag turned false: C' (release: seen only with
					 * the head stores before it), then R1', which finds
					 * nothing more to drain: one step
					 */
					// @src src/proto/ring.h: if (unfenced)
					// @src src/proto/ring.h: atomic_store_explicit(&r->unfenced, 0, memory_order_release);
					CLEAR_OWN; WITNESS(91);
#ifndef MUTANT_UNMARKRELAXED
					DRAIN(RI)
#else
					unmark = true	/* MUTANT: C' relaxed, seen before them; R1' a step later */
#endif
				fi;
				ASYM_DEAD
#else
				skip	/* MUTANT: the code before C': no look at the flag, no fence */
#endif
			:: else ->
				/*
				 * F1 (relaxed) only if this call reads xc_ring_asym true
				 * and ends a run of XC_RING_FENCED_RUN fenced rides since
				 * the link; then R1'. A call short of the run acts as one
				 * that read the flag false, a choice ASYM_LOAD makes here
				 */
				// @src src/proto/ring.h: else if (asym && ++r->fenced_rides >= XC_RING_FENCED_RUN)
				// @src src/proto/ring.h: atomic_store_explicit(&r->unfenced, 1, memory_order_relaxed);
				ASYM_LOAD;
				if
				:: asym -> SET_F1
				:: else -> skip	/* no F1: the next call is fenced too */
				fi;
				ASYM_DEAD;
				// @src src/proto/ring.h: /* R1': the store-load order the wakeup protocol argues (wake.c) */
				DRAIN(RI);
				rhead[RI] = idx + 1
			fi
		}
#ifdef MUTANT_UNMARKRELAXED
		/* MUTANT: R1' of a call that cleared its mark with a relaxed C': the buffer drains */
		if
		:: unmark -> atomic { DRAIN(RI); unmark = false }
		:: else -> skip
		fi;
#endif
#ifdef MUTANT_NONEMPTYSKIP
		if
		:: ok -> ok = false; goto waitcall
		:: else -> skip
		fi;
#endif
		/* xc_ring_doorbell: R2 */
		// @src src/proto/ring.h: if (xc_likely(atomic_load_explicit(&r->state, memory_order_relaxed) == XC_RING_LINKED &&
		if
		:: atomic { rstate[RI] == RING_LINKED ->	/* the worker has it: rides */
			WITNESS(52);
			/* ... fenced, without F1: it read the flag false */
			if :: !unf[RI] -> WITNESS(88) :: else -> skip fi;
			/* ... with its head store in the store buffer: a call that skipped R1' */
			if :: rbuf[RI] > 0 -> WITNESS(72) :: else -> skip fi }
		:: else ->
			/* xc_ring_doorbell_slow: R3, CAS state IDLE -> LINKED (acquire) */
			// @src src/proto/ring.c: if (!atomic_compare_exchange_strong_explicit(&r->state, &s, XC_RING_LINKED,
			atomic {
				if
				:: rstate[RI] == RING_IDLE -> rstate[RI] = RING_LINKED; ok = true
#ifndef ACQUIRE_CAS
					; DRAIN(RI)	/* a locked RMW: the store buffer drains */
#endif
				:: else -> ok = false; WITNESS(53)	/* the worker's U3 re-linked it */
				fi
			}
			if
			:: ok ->
				/* C: unfenced = 0 (release): the next call is fenced */
				// @src src/proto/ring.c: /* C, release: this CAS follows every head store before it (wake.c, "Owners without a fence") */
#ifndef ACQUIRE_CAS
				CLEAR_C;
#else
				/* ACQUIRE_CAS: only C's release publishes the head stores before it */
				atomic { CLEAR_C; DRAIN(RI) };
#endif
				/* S1: push the ring on callq - one CAS, or CLOSED seen */
				// @src src/proto/ring.c: pushed = xc_llist_push(&c->mbox.callq, &r->link);
				atomic {
					if
					:: callq[0].closed -> r = PUSH_CLOSED
					:: else ->
						/* on callq at most once: a second push would rewrite its link */
						assert((callq[0].nodes & RB) == 0);
						if
						:: callq[0].nodes == 0 -> r = PUSH_WAS_EMPTY
						:: else -> r = PUSH_NONEMPTY; WITNESS(67)
						fi;
						callq[0].nodes = callq[0].nodes | RB
					fi
				}
				if
				:: r == PUSH_WAS_EMPTY ->
					/* xc_call_kick -> xc_kick: S2 */
					// @src src/proto/ring.c: xc_call_kick(c, pushed, false);
					s = idle[0];
					if :: s == SLEEPING -> WITNESS(66) :: else -> skip fi;
					xc_kick(0, s, ok, 0)
				:: r == PUSH_NONEMPTY -> skip	/* coalesced */
				:: r == PUSH_CLOSED ->
					/*
					 * ring_refused: never waits. tail (acquire) past idx: the
					 * call ran (0). Else exchange the entry's fn with
					 * RETRACTED: it read TAKEN, the close runs it (0); else
					 * -ENXIO, a tombstone stays. Then state = IDLE.
					 */
					// @src src/proto/ring.c: uint32_t t = atomic_load_explicit(&r->tail, memory_order_acquire);
					t = rtail[RI];
					if
					:: t > idx -> WITNESS(60)	/* the close ran it: 0 */
					:: else ->
						// @src src/proto/ring.c: atomic_exchange_explicit(&r->e[idx & r->mask].fn, XC_RING_RETRACTED,
						atomic {
							if
							:: rmark[RI * NCALLS + idx] == M_TAKEN -> WITNESS(65)	/* the close runs it: 0 */
							:: else ->
								rmark[RI * NCALLS + idx] = M_RETRACTED;
								rent[RI * NCALLS + idx] = 0;
								accepted = accepted & ~ME; refused = refused | ME;	/* -ENXIO */
								WITNESS(61)
							fi
						}
					fi;
					// @src src/proto/ring.c: atomic_store_explicit(&r->state, XC_RING_IDLE, memory_order_relaxed);
					rstate[RI] = RING_IDLE
				fi
			:: else -> skip
			fi
		fi;
waitcall:
		if
		:: WAITCALL && (accepted & ME) ->
			/* xc_completion_wait: until calls_run completes it, after its fn */
			(completed & ME) != 0;
			/* the waiting call returned: every earlier call of ours ran */
			assert(IN_ORDER(ME))
		:: else -> skip
		fi;
call_done:
		/* next call; locals dead from here are cleared so that states merge */
		atomic { j++; r = 0; s = 0; idx = 0; t = 0; ok = false }
	:: else -> break
	od;
	senders_done++
}

/*
 * The owners' store buffers: a head store of a call that skipped R1' (rbuf)
 * becomes visible to the worker at any time, the oldest first, one store a
 * step: the hardware drains its buffer eventually. R1' of a later call, the
 * doorbell's winning CAS and a worker's membarrier drain it at once.
 */
active proctype store_buffer()
{
end_drain:
	do
	:: atomic { rbuf[0] > 0 -> rhead[0]++; rbuf[0]-- }
#if NRINGS > 1
	:: atomic { rbuf[1] > 0 -> rhead[1]++; rbuf[1]-- }
#endif
	od
}
#endif

#if NURGENT > 0
/*
 * urgent_handler (src/proto/urgent.c): runs on CPU 0's worker thread when a
 * signal arrives, between any two of its steps, also while it is blocked in
 * a futex (which then restarts and compares again). Inside a call's fn it
 * does nothing: the call loop runs the urgent queue right after the fn.
 * Otherwise xc_run_urgent: the queue until it stays empty (one atomic step:
 * the signal is blocked while its handler runs, and a sender that pushes
 * meanwhile finds the queue empty and signals again).
 */
proctype urgent_handler(byte c)
{
	byte taken = 0;
end_idle:
	do
	:: atomic {
		sig_pending[c] > 0 -> sig_pending[c]--;
		// @src src/run/urgent_signal.c: if (c && !xc_in_call) {
		if
		:: in_call[c] > 0 ->
			/* deferred: the interrupted call's loop must run the queue */
			if :: PENDING(urgentq[c]) -> deferred[c] = true; WITNESS(20) :: else -> skip fi
		:: else ->
			if :: urgentq[c].closed -> WITNESS(13) :: else -> skip fi;	/* offline */
			if :: in_work[c] && PENDING(urgentq[c]) -> WITNESS(25) :: else -> skip fi;
			do
			:: PENDING(urgentq[c]) -> take_urgent(c, taken); run_list(taken)
			:: else -> break
			od
		fi
	   }
	od
}
#endif

#if NWORK > 0
/* xc_queue_work (src/run/work.c), NWORK times onto CPU 0: push (S1), kick if it was empty */
proctype work_queuer()
{
	byte j = 0;
	byte r;
	byte s;
	bool ok;

	do
	:: j < NWORK ->
		// @src src/run/work.c: r = xc_llist_push(&c->mbox.workq, &work->_link);
		atomic {
			if
			:: workq[0].closed -> r = PUSH_CLOSED; work_refused = work_refused | (1 << j)
			:: else ->
				if
				:: workq[0].nodes == 0 -> r = PUSH_WAS_EMPTY
				:: else -> r = PUSH_NONEMPTY
				fi;
				workq[0].nodes = workq[0].nodes | (1 << j);
				work_accepted = work_accepted | (1 << j)
			fi
		}
		// @src src/run/work.c: if (r == XC_PUSH_WAS_EMPTY || xc_ablated(XC_ABLATE_COALESCE)) {
		if
		:: r == PUSH_WAS_EMPTY -> s = idle[0]; xc_kick(0, s, ok, 0)
		:: else -> skip
		fi;
		atomic { j++; r = 0; s = 0; ok = false }
	:: else -> break
	od
}
#endif

#if HOTPLUG && !NEST
#if !FOLLOW && !DETACH
/* xc_cpu_offline, then (ONLINE) xc_cpu_online, src/cpu/hotplug.c, on CPU 0 */
active proctype hotplug()
{
	byte s;
	bool ok;

	/* S1 for a ctl request: atomic_store(&c->ctl, OFFLINE, seq_cst) */
	// @src src/cpu/hotplug.c: xc_cpu_request(c, XC_CTL_OFFLINE);
	ctl[0] = CTL_OFFLINE;
	/* xc_kick(c): S2 then S3 */
	s = idle[0];
	xc_kick(0, s, ok, 0);
	/* xc_sync_wait_until(&c->offline_done, 0): not an end state, so a lost kick is a deadlock */
	offline_done;
#if ONLINE
	/* xc_cpu_online -> xc_cpu_open: ctl = NONE, reopen the queues; xc_park_release(RUN) */
	cpu_open(0);
	park[0] = PARK_RUN
#endif
}
#else
/*
 * FOLLOW: xc_cpu_offline, then (ONLINE) xc_cpu_online, src/cpu/hotplug.c, on
 * CPU 0, each under the hotplug lock (a plain mutex for a requester that is
 * no worker), racing the OS and the worker that follows it. DETACH: the
 * same, racing the attached thread's detach, which takes the lock too.
 */
active proctype hotplug()
{
	byte s;
	bool ok;

	/* xc_cpu_offline */
	atomic { hp_lock == 0 -> hp_lock = LOCK_USER }
	/* (user_offline is false: this is the first request) */
	// @src src/cpu/hotplug.c: } else if (!atomic_load_explicit(&c->life.online, memory_order_acquire)) {
	if
	:: !online ->
		/* the OS took it (DETACH: the thread detached): it stays offline when it comes back */
		// @src src/cpu/hotplug.c: c->life.user_offline = true;	/* the OS took it: it stays offline when it comes back */
		user_offline = true
#if FOLLOW
		; WITNESS(35)
#endif
	:: else ->
		/* xc_completion_init(&c->offline_done, 1); xc_cpu_request(c, XC_CTL_OFFLINE) */
		// @src src/cpu/hotplug.c: xc_completion_init(&c->life.offline_done, 1);
		offline_done = false;
		// @src src/cpu/hotplug.c: atomic_store_explicit(&c->life.ctl, ctl, memory_order_seq_cst);
		ctl[0] = CTL_OFFLINE;
		/* xc_kick(c): S2 then S3; xc_futex_wake(&c->park): a parked worker looks
		 * at ctl (its park wait is modelled as "until something to do") */
		s = idle[0];
		xc_kick(0, s, ok, 0);
		// @src src/cpu/hotplug.c: xc_completion_wait_until(&c->life.offline_done, 0);
		offline_done;
		atomic { user_offline = true; s = 0; ok = false }
	fi;
	hp_lock = 0;
#if ONLINE
	/* xc_cpu_online */
	atomic { hp_lock == 0 -> hp_lock = LOCK_USER }
#if FOLLOW
	// @src src/cpu/hotplug.c: } else if (atomic_load_explicit(&c->life.taken, memory_order_relaxed) != XC_TAKEN_NONE) {
	if
	:: taken_flag -> WITNESS(38)	/* -ENXIO: the OS has it */
	:: else ->
#endif
		// @src src/cpu/hotplug.c: } else if (atomic_load_explicit(&c->life.online, memory_order_acquire) || !c->life.user_offline) {
		if
		:: online || !user_offline -> skip	/* -EINVAL */
#if DETACH
		/* the thread detached: online once a thread attaches */
		// @src src/cpu/hotplug.c: } else if (c->life.attach_cpu && !c->life.attached) {
		:: !online && user_offline && !attached_on -> user_offline = false
		:: !online && user_offline && attached_on ->
#else
		:: else ->
#endif
			// @src src/cpu/hotplug.c: c->life.user_offline = false;
			user_offline = false;
			cpu_open(0);
			// @src src/cpu/hotplug.c: xc_park_release(c, XC_PARK_RUN);
			park[0] = PARK_RUN
		fi
#if FOLLOW
	fi
#endif
	;
	hp_lock = 0
#endif
}
#endif

#if FOLLOW
/*
 * The OS: at any step it may take CPU 0 away (hotplug, an affinity change,
 * a shrinking cpuset), up to NTAKE times; the kernel moves the worker's
 * thread off it at a later step of its own (the cheap check sees it from
 * then on); the OS gives the CPU back, or keeps it for good (then it stops,
 * so that quiescence can be seen).
 */
active proctype os()
{
	byte n = 0;

	do
	:: n < NTAKE ->
		os_has = false;
		n++;
		elsewhere = true;
		if
		:: atomic { os_has = true; elsewhere = false }	/* given back: the thread may run there again */
		:: break					/* kept for good */
		fi
	:: break
	od
}
#endif
#endif

#if NEST
/*
 * NEST: two CPUs with rings (RING with PAIR). Each worker w owns a ring to
 * the other CPU, o = 1 - w (its set 0: ring w, on callq[o] as node 1), and
 * starts in a work item whose fn makes NCALLS nowait calls to o through it,
 * the last one XC_WAIT with RWAIT (the completion wait of PAIR, serving its
 * own CPU's calls meanwhile). Each of those calls' fn is a worker-run
 * function that makes one nested nowait call to either CPU (spin chooses):
 * to its own CPU it runs inline (call_inline: the CPU is online while its
 * drain runs), to the other through the same ring as the work item. It
 * runs wherever its worker runs calls: the task loop, the idle loop, a
 * wait's serve (make_room, the completion wait) or a close. The nested
 * call's fn makes no call. Rings have 2 entries, so they fill; indices
 * count modulo 4 (twice the size: full and empty differ, and an index
 * that runs behind tail shows as a distance over the size).
 *
 * The worker is one process with an explicit stack: level d > 0 is a ring
 * call in progress (made by the work item at level 1, or by a function run
 * at level d - 1); a serve (xc_wait_serve: xc_run_calls) at level d runs
 * functions whose nested calls are level d + 1. Waits that spin (make_room,
 * the waits of the mutants) serve, then block until something they look
 * at changes: a spin that changes nothing is a stutter, left out, and a
 * wait that never ends is an invalid end state.
 *
 * Closes: HOTPLUG=1 takes CPU 1 offline (and back online with ONLINE),
 * HOTPLUG=2 is xc_exit: both CPUs drain at once. The close (xc_rings_close)
 * runs its rings in closing mode; an owner refused by a closed callq never
 * waits (ring_refused). Owners always fence (R1'), as with xc_ring_asym
 * false for good: the store buffer of an owner that skips it, and the flag,
 * are the one-CPU ring model's (its argument is per ring).
 *
 * Call bits: worker w's call j is OUTER(w, j); the nested call of a call b
 * is b << 4.
 */
#define RING_IDLE   0
#define RING_LINKED 1
#define M_NONE      0
#define M_TAKEN     1
#define M_RETRACTED 2
#define RSIZE	2		/* xc_opts.ring_entries */
#define RMOD	4		/* indices count modulo this */
#define DIST(h, t)	(((h) + RMOD - (t)) % RMOD)	/* h - t, as the code's uint32_t */
#define ENT(k, i)	((k) * RSIZE + (i) % RSIZE)	/* ring k's entry of index i */
#define OUTER(w, j)	(1 << ((w) * 2 + (j)))
#define NESTED(b)	((b) << 4)
#define WAITCALL(b)	(RWAIT && ((b) == OUTER(0, NCALLS - 1) || (b) == OUTER(1, NCALLS - 1)))
#define OWNER(b)	((b) >= 4 -> 1 : 0)	/* of an outer call */
#define DMAX	5		/* levels: 0, the item's call, and nested calls */

byte rhead[2];			/* ring k's head (worker k owns it, to CPU 1 - k) */
byte rtail[2];
byte rstate[2];
byte rent[4];			/* the call in each entry; 0: none (taken, retracted, never written) */
byte rmark[4];			/* a marker in its fn: M_TAKEN, M_RETRACTED */
bool cpu_online[2] = true;	/* c->online (cpu_drain stores false, xc_cpu_open true) */
bool odone[2];			/* c->offline_done reached zero */
byte made = 0;			/* ghost: calls made (accepted or refused) */
bool stuck[2];			/* ghost: the worker waits in a wait that serves, nothing to serve */
#if defined(MUTANT_REFUSEDWAIT) || defined(MUTANT_REFUSEDREWIND)
byte close_seq[2];		/* the code before the fix: c->ring_close_seq */
byte closed_seq[2];		/* ... c->ring_closed_seq */
#endif

/* what xc_run_calls at a level would find: a doorbell, or a held ring with entries */
#define SERVE_PENDING	(PENDING(callq[me]) || held && rhead[o] != rtail[o])

/* where a serve returns (sret), where a ring call returns (from) */
#define SV_LOOP		0
#define SV_IDLE		1
#define SV_CWAIT	2
#define SV_MR		3
#define SV_REFW		4
#define FROM_ITEM	0
#define FROM_FN		1

proctype nworker(byte me)
{
	byte o = 1 - me;	/* the other CPU; ring me is ours to it, ring o comes to us */
	bool held = false;	/* ring o is on our held list */
	bool dropped = false;	/* ... on our dropped list */
	bool cl = false;	/* the close runs ring o */
	bool closing = false;	/* level 0 is the close */
	byte d = 0;		/* ring calls in progress */
	byte cb[DMAX];		/* level d's call being made */
	byte idx[DMAX];		/* ... its entry's index */
	byte hs[DMAX];		/* ... the head read on entry to ring_put */
	byte from[DMAX];	/* ... who made it */
	byte sret[DMAX];	/* level d's serve: where it returns */
	bool sany[DMAX];	/* ... it ran something */
	byte fb[DMAX];		/* level d's function running */
#if defined(MUTANT_REFUSEDWAIT) || defined(MUTANT_REFUSEDREWIND)
	byte sq[DMAX];		/* ring_refused's sequence */
#endif
	byte j = 0;		/* the work item's call */
	byte e, t, h, tb, r, f;
	byte prev;
	byte mode = MODE_IDLE;
	byte s;
	bool ok;
	bool k;
	byte w;

	/* the work item (queued before the worker starts): NCALLS calls to o */
item_call:
	if
	:: j < NCALLS ->
		atomic { d = 1; cb[1] = OUTER(me, j); from[1] = FROM_ITEM; made = made | cb[1] }
		goto rc
	:: else -> goto loop_top
	fi;
item_ret:
	if
	:: WAITCALL(OUTER(me, j)) && (accepted & OUTER(me, j)) -> goto cwait
	:: else -> j++; goto item_call
	fi;

	/* xc_completion_wait (wait_after_spin): serve our CPU, sleep on our idle word */
cwait:
	atomic { waiting[me] = true }
	do
	:: sync_done[me] -> goto cw_over	/* xc_sync_spin saw it */
	:: break
	od;
	// @src src/run/wait.c: if (!ask_wake(r))
	atomic {
		if
		:: sync_done[me] -> goto cw_over
		:: else -> sync_sleep[me] = true
		fi
	}
cw_loop:
	if
	:: sync_done[me] -> goto cw_over
	:: else -> skip
	fi;
	// @src src/run/wait.c: if (xc_wait_serve())
	sret[d] = SV_CWAIT;
	goto serve;
cw_served:
	if
	:: sany[d] -> WITNESS(76); goto cw_loop	/* the wait ran a call of ours */
	:: else -> skip
	fi;
	mode = MODE_SYNC;
	goto idle_wait;
cw_over:
	atomic { waiting[me] = false; j++ }
	goto item_call;

	/* worker_loop */
loop_top:
	if
	:: ctl[me] == CTL_OFFLINE -> goto close
	:: else -> skip
	fi;
	sret[0] = SV_LOOP;
	goto serve;
sv_loop_ret:
	/* cpu_idle */
	idle[me] = POLLING;
idle_loop:
	mode = MODE_IDLE;
	goto idle_wait;
idle_ret:
	sret[0] = SV_IDLE;
	goto serve;
sv_idle_ret:
	if
	:: CTL_READY(me) -> idle[me] = RUNNING; goto loop_top
	:: else -> goto idle_loop
	fi;

	/*
	 * xc_run_calls at level d (xc_wait_serve in a wait): take the doorbells,
	 * then run the held ring, re-reading head at each entry (ring_run).
	 */
serve:
	// @src src/proto/ring.h: struct xc__link *l = xc_llist_take(&c->mbox.callq);
	atomic {
		if
		:: !callq[me].closed && callq[me].nodes != 0 ->
			held = true; dropped = false; callq[me].nodes = 0
		:: else -> skip
		fi;
		sany[d] = false
	}
serve_run:
	if
	:: held && rhead[o] != rtail[o] ->
		/* calls_run: read the entry out, tail = t + 1 (release), then its fn */
		atomic {
			e = ENT(o, rtail[o]);
			/* an open CPU's ring: no close took it, no owner retracts it now */
			assert(rmark[e] != M_TAKEN);
			tb = rent[e];
			rent[e] = 0;
			rtail[o] = (rtail[o] + 1) % RMOD;
			e = 0
		}
		if
		:: tb == 0 -> WITNESS(77); goto serve_run	/* a tombstone: skipped */
		:: else -> atomic { sany[d] = true; fb[d] = tb; tb = 0 }; goto fn_run
		fi
	:: else -> skip
	fi;
	if
	:: sret[d] == SV_LOOP -> goto sv_loop_ret
	:: sret[d] == SV_IDLE -> goto sv_idle_ret
	:: sret[d] == SV_CWAIT -> goto cw_served
	:: sret[d] == SV_MR -> goto mr_served
#if defined(MUTANT_REFUSEDWAIT) || defined(MUTANT_REFUSEDREWIND)
	:: sret[d] == SV_REFW -> goto refw_served
#endif
	fi;

	/* a function runs at level d: it makes one nested call (an outer call's fn) */
fn_run:
	atomic {
		assert((fb[d] & ~accepted) == 0);	/* only accepted calls run: never a refused one */
		assert((ran & fb[d]) == 0);		/* no call runs twice */
		ran = ran | fb[d]
	}
	if
	:: fb[d] < 16 ->
		if
		:: atomic {	/* to its own CPU: call_inline, at once */
			assert(cpu_online[me]);
			made = made | NESTED(fb[d]); accepted = accepted | NESTED(fb[d]); ran = ran | NESTED(fb[d]) }
		:: atomic {	/* to the other CPU, through our ring to it */
			assert(d < DMAX - 1);
			d++; cb[d] = NESTED(fb[d - 1]); from[d] = FROM_FN; made = made | cb[d];
			if :: closing -> WITNESS(78) :: else -> skip fi	/* made inside a close */
		   }
			goto rc
		fi
	:: else -> skip
	fi;
fn_ret:
	/* calls_run: a waiting call's completion (xc_sync_complete reads SLEEPING) */
	if
	:: WAITCALL(fb[d]) ->
		atomic { w = OWNER(fb[d]); sync_done[w] = true; k = sync_sleep[w] }
		if
		:: k -> s = idle[w]; xc_kick(w, s, ok, 1)
		:: else -> skip
		fi;
		atomic { k = false; w = 0; s = 0; ok = false }
	:: else -> skip
	fi;
	fb[d] = 0;
	if
	:: d == 0 && closing -> goto cl_run
	:: else -> goto serve_run
	fi;

	/*
	 * A ring call at level d: cb[d] through ring me to CPU o (ring_call:
	 * ring_put, then xc_ring_doorbell).
	 */
rc:
	// @src src/api/call.c: if (xc_unlikely(h - r->tail_seen == r->size)) {
	hs[d] = rhead[me];
	if
	:: DIST(hs[d], rtail[me]) == RSIZE -> WITNESS(79); goto mr_loop	/* full */
	:: else -> goto put
	fi;
	/*
	 * xc_ring_wait_room: each pass re-reads head and tail. Room: put (which
	 * reads head again). callq closed: -ENXIO. The ring IDLE (no worker
	 * looks at it: tombstones): ring its doorbell. Else serve our CPU.
	 * MUTANT_MAKEROOMHEAD: the head read on entry is kept across the serves.
	 */
mr_loop:
	// @src src/proto/ring.c: if (h - r->tail_seen < r->size)
	atomic {
#ifndef MUTANT_MAKEROOMHEAD
		h = rhead[me];
#else
		h = hs[d];
#endif
		t = rtail[me];
		/* head never runs behind tail (the index does not wrap) */
		assert(DIST(h, t) <= RSIZE)
	}
	if
	:: DIST(h, t) < RSIZE -> goto put
	:: else -> skip
	fi;
	if
	// @src src/proto/ring.c: if (atomic_load_explicit(&c->mbox.callq, memory_order_relaxed) == XC_LLIST_CLOSED)
	:: callq[o].closed -> atomic { refused = refused | cb[d]; WITNESS(80) }; goto rc_done
	// @src src/proto/ring.c: if (atomic_load_explicit(&r->state, memory_order_relaxed) == XC_RING_IDLE &&
	:: !callq[o].closed && rstate[me] == RING_IDLE -> WITNESS(81); goto mr_doorbell
	:: !callq[o].closed && rstate[me] != RING_IDLE ->
		if :: d >= 2 && from[d - 1] == FROM_FN -> WITNESS(82) :: else -> skip fi;
		sret[d] = SV_MR; goto serve
	fi;
mr_served:
	if
	:: sany[d] -> goto mr_loop
	:: else ->	/* sched_yield, and look again once something changed */
		stuck[me] = true;
		atomic { (rtail[me] != t || callq[o].closed || rstate[me] == RING_IDLE || SERVE_PENDING) ->
			stuck[me] = false }
		goto mr_loop
	fi;
mr_doorbell:
	atomic {
		if
		:: rstate[me] == RING_IDLE -> rstate[me] = RING_LINKED; ok = true
		:: else -> ok = false
		fi
	}
	if
	:: ok ->
		atomic {
			if
			:: callq[o].closed -> r = PUSH_CLOSED
			:: else ->
				assert(callq[o].nodes == 0);	/* on callq at most once */
				r = PUSH_WAS_EMPTY; callq[o].nodes = 1
			fi;
			ok = false
		}
		if
		:: r == PUSH_CLOSED ->
			atomic { rstate[me] = RING_IDLE; refused = refused | cb[d]; r = 0 }
			goto rc_done
		:: else -> r = 0; s = idle[o]; xc_kick(o, s, ok, 0); atomic { s = 0; ok = false }
		fi
	:: else -> skip
	fi;
	goto mr_loop;

	/* ring_put: the entry, head = h + 1 (release); R1' (every call fences here) */
put:
	// @src src/api/call.c: /* calls served while it waited may have put entries of their own: read it again */
	// @src src/proto/ring.h: atomic_store_explicit(&r->head, h + 1, memory_order_release);
	atomic {
#ifndef MUTANT_MAKEROOMHEAD
		h = rhead[me];
#else
		h = hs[d];
#endif
		e = ENT(me, h);
		/* no call in the entry: an untaken one would be lost, its caller got 0 */
		assert(rent[e] == 0);
		rent[e] = cb[d]; rmark[e] = M_NONE;
		accepted = accepted | cb[d];
		idx[d] = h;
		rhead[me] = (h + 1) % RMOD;
		h = 0; t = 0; e = 0
	}
	/* xc_ring_doorbell: R2 */
	if
	:: rstate[me] == RING_LINKED -> WITNESS(83); goto rc_done	/* rides */
	:: else -> skip
	fi;
	/* R3: CAS IDLE -> LINKED */
	atomic {
		if
		:: rstate[me] == RING_IDLE -> rstate[me] = RING_LINKED; ok = true
		:: else -> ok = false
		fi
	}
	if
	:: !ok -> goto rc_done	/* the worker re-linked it */
	:: else -> ok = false
	fi;
	// @src src/proto/ring.c: pushed = xc_llist_push(&c->mbox.callq, &r->link);
	atomic {
		if
		:: callq[o].closed -> r = PUSH_CLOSED
		:: else ->
			assert(callq[o].nodes == 0);	/* on callq at most once */
			r = PUSH_WAS_EMPTY; callq[o].nodes = 1
		fi
	}
	if
	:: r == PUSH_WAS_EMPTY -> r = 0; s = idle[o]; xc_kick(o, s, ok, 0); atomic { s = 0; ok = false }; goto rc_done
	:: else -> r = 0
	fi;

	/* ring_refused: the push found callq closed */
#if defined(MUTANT_REFUSEDWAIT) || defined(MUTANT_REFUSEDREWIND)
	/*
	 * MUTANT: wait for the close to finish, serving, as the code before the
	 * fix: REFUSEDREWIND with the ring LINKED; REFUSEDWAIT stores IDLE first
	 * (so that a served call's nested call cannot ride: the wait alone)
	 */
#ifdef MUTANT_REFUSEDWAIT
	rstate[me] = RING_IDLE;
#endif
	sq[d] = close_seq[o];
refw_loop:
	if
	:: closed_seq[o] >= sq[d] -> goto refw_done
	:: else -> sret[d] = SV_REFW; goto serve
	fi;
refw_served:
	if
	:: sany[d] -> goto refw_loop
	:: else ->
		stuck[me] = true;
		atomic { (closed_seq[o] >= sq[d] || SERVE_PENDING) -> stuck[me] = false }
		goto refw_loop
	fi;
refw_done:
	sq[d] = 0;
#endif
#ifndef MUTANT_REFUSEDREWIND
	// @src src/proto/ring.c: uint32_t t = atomic_load_explicit(&r->tail, memory_order_acquire);
	t = rtail[me];
	if
	:: DIST(t, idx[d]) == 1 || DIST(t, idx[d]) == 2 -> WITNESS(84)	/* past it: the call ran */
	:: else ->
		// @src src/proto/ring.c: atomic_exchange_explicit(&r->e[idx & r->mask].fn, XC_RING_RETRACTED,
		atomic {
			e = ENT(me, idx[d]);
			if
			:: rmark[e] == M_TAKEN -> WITNESS(85)	/* the close runs it */
			:: else ->
				rmark[e] = M_RETRACTED; rent[e] = 0;
				accepted = accepted & ~cb[d]; refused = refused | cb[d]	/* -ENXIO */
			fi;
			e = 0
		}
	fi;
	// @src src/proto/ring.c: atomic_store_explicit(&r->state, XC_RING_IDLE, memory_order_relaxed);
	atomic { rstate[me] = RING_IDLE; t = 0 }
#else
	/* MUTANT: then IDLE, and head rewound to the entry if the close did not take it */
	t = rtail[me];
	rstate[me] = RING_IDLE;
	if
	:: DIST(t, idx[d]) == 1 || DIST(t, idx[d]) == 2 -> skip
	:: else ->
		atomic {
			rent[ENT(me, idx[d])] = 0; rhead[me] = idx[d];
			accepted = accepted & ~cb[d]; refused = refused | cb[d]
		}
	fi;
	t = 0;
#endif
rc_done:
	atomic { cb[d] = 0; idx[d] = 0; hs[d] = 0; f = from[d]; from[d] = 0; sret[d] = 0; sany[d] = false; d-- }
	if
	:: f == FROM_ITEM -> f = 0; goto item_ret
	:: f == FROM_FN -> f = 0; goto fn_ret
	fi;

	/*
	 * The offline (or exit) drain: xc_rings_close. Close callq and hold what
	 * was on it; U1; run it in closing mode (each entry's fn exchanged with
	 * TAKEN; a RETRACTED one skipped); then the ring dropped at a lost U3
	 * CAS, without U1. Then cpu_offline: online = false, park, ctl, done.
	 */
close:
#if defined(MUTANT_REFUSEDWAIT) || defined(MUTANT_REFUSEDREWIND)
	close_seq[me]++;
#endif
	// @src src/proto/ring.c: for (struct xc__link *l = xc_llist_close(&c->mbox.callq); l; l = l->next)
	atomic {
		if :: callq[me].nodes != 0 -> held = true; dropped = false :: else -> skip fi;
		callq[me].nodes = 0; callq[me].closed = true;
		cl = held; held = false; closing = true
	}
	if
	:: cl -> rstate[o] = RING_IDLE	/* U1 */
	:: else -> skip
	fi;
cl_next:
	if
	:: cl -> skip
	:: !cl && dropped -> atomic { dropped = false; cl = true; WITNESS(86) }
	:: else -> goto cl_end
	fi;
cl_run:
	if
	:: rhead[o] != rtail[o] ->
		atomic {
			e = ENT(o, rtail[o]);
			if
			:: rmark[e] == M_RETRACTED -> tb = 0; WITNESS(87)
			:: else -> tb = rent[e]; rent[e] = 0; rmark[e] = M_TAKEN
			fi;
			e = 0
		}
		rtail[o] = (rtail[o] + 1) % RMOD;
		if
		:: tb != 0 -> atomic { fb[0] = tb; tb = 0 }; goto fn_run
		:: else -> goto cl_run
		fi
	:: else -> cl = false; goto cl_next
	fi;
cl_end:
#if defined(MUTANT_REFUSEDWAIT) || defined(MUTANT_REFUSEDREWIND)
	closed_seq[me] = close_seq[me];
#endif
	atomic { closing = false; cpu_online[me] = false }
	park[me] = PARK_WAIT;
	ctl[me] = CTL_NONE;
	odone[me] = true;
end_parked:
	park[me] != PARK_WAIT;
	goto loop_top;

	/*
	 * xc_idle_wait (mode: cpu_idle's ready_idle, or the completion wait's
	 * ready_sync): poll, xc_rings_release (U1-U3), W1, W2, W3, W4.
	 */
idle_wait:
	prev = idle[me];
	assert(mode == MODE_IDLE && prev == POLLING || mode == MODE_SYNC && prev == RUNNING);
	idle[me] = POLLING;
	do
	:: mode == MODE_SYNC && sync_done[me] -> goto idle_out
	:: PENDING(callq[me]) -> goto idle_out
	:: held && rhead[o] != rtail[o] -> goto idle_out
	:: mode == MODE_IDLE && CTL_READY(me) -> goto idle_out
	:: break
	od;
	if
	:: held ->
		rstate[o] = RING_IDLE;	/* U1 */
		/* U2: a fence; U3: calls left? CAS IDLE -> LINKED: kept; lost: dropped */
		if
		:: atomic { rhead[o] == rtail[o] -> held = false }
		:: rhead[o] != rtail[o] ->
			atomic {
				if
				:: rstate[o] == RING_IDLE -> rstate[o] = RING_LINKED
				:: else -> held = false; dropped = true
				fi
			}
		fi
	:: else -> skip
	fi;
nsleep:
	idle[me] = SLEEPING;	/* W1 */
	if	/* W2 */
	:: mode == MODE_SYNC && sync_done[me] -> goto idle_out
	:: PENDING(callq[me]) -> goto idle_out
	:: held && rhead[o] != rtail[o] -> goto idle_out
	:: mode == MODE_IDLE && CTL_READY(me) -> goto idle_out
	:: else -> skip
	fi;
	atomic {	/* W3 */
		if
		:: idle[me] == SLEEPING -> waiter[me] = true
		:: else -> skip
		fi
	}
end_futex:
	if
	:: !waiter[me] -> skip
	:: atomic { waiter[me] && spurious > 0 -> spurious--; waiter[me] = false }
	fi;
	idle[me] = POLLING;	/* W4 */
	if
	:: mode == MODE_SYNC && sync_done[me] -> goto idle_out
	:: PENDING(callq[me]) -> goto idle_out
	:: held && rhead[o] != rtail[o] -> goto idle_out
	:: mode == MODE_IDLE && CTL_READY(me) -> goto idle_out
	:: else -> goto nsleep
	fi;
idle_out:
	idle[me] = prev;
	prev = 0;
	if
	:: mode == MODE_SYNC -> mode = MODE_IDLE; goto cw_loop
	:: else -> goto idle_ret
	fi
}

#if HOTPLUG
/* HOTPLUG=1: xc_cpu_offline(1), then (ONLINE) xc_cpu_online(1); HOTPLUG=2: xc_exit, both at once */
active proctype hotplug()
{
	byte s;
	bool ok;

#if HOTPLUG == 1
	ctl[1] = CTL_OFFLINE;
	s = idle[1];
	xc_kick(1, s, ok, 0);
	odone[1];
#if ONLINE
	atomic { s = 0; ok = false };
	/* xc_cpu_open, xc_park_release */
	ctl[1] = CTL_NONE;
	llist_open(callq[1]);
	cpu_online[1] = true;
	park[1] = PARK_RUN
#endif
#else
	ctl[0] = CTL_OFFLINE;
	ctl[1] = CTL_OFFLINE;
	s = idle[0];
	xc_kick(0, s, ok, 0);
	atomic { s = idle[1]; ok = false };
	xc_kick(1, s, ok, 0);
	odone[0];
	odone[1]
#endif
}
#endif

#ifndef LIVENESS
/*
 * Quiescence: no worker asleep with something for it; every call whose
 * caller got 0 ran exactly once (ran == accepted, with the assertions where
 * calls run), a refused one never (they are disjoint); every call of the
 * work items was made; every ring IDLE and holding no call.
 */
active proctype quiescence()
{
end_check:
	timeout;
	/* no worker waits for ever in a wait that serves (make_room, ring_refused's) */
	assert(!stuck[0] && !stuck[1]);
	assert(!(waiter[0] && (PENDING(callq[0]) || ctl[0] != CTL_NONE)));
	assert(!(waiter[1] && (PENDING(callq[1]) || ctl[1] != CTL_NONE)));
	assert(!(waiter[0] && waiting[0] && sync_done[0]) && !(waiter[1] && waiting[1] && sync_done[1]));
	assert(ran == accepted);
	assert((accepted | refused) == made && (accepted & refused) == 0);
	assert((made & 15) == (OUTER(0, 0) | OUTER(0, NCALLS - 1) | OUTER(1, 0) | OUTER(1, NCALLS - 1)));
	assert(rent[0] == 0 && rent[1] == 0 && rent[2] == 0 && rent[3] == 0);
	assert(rstate[0] == RING_IDLE && rstate[1] == RING_IDLE)
}
#endif
#endif	/* NEST */

#if !NEST
#ifndef LIVENESS
/*
 * Quiescence: when no other process can move, the run is over. Then no
 * worker may be blocked in futex_wait with something pending (the lost
 * wakeup), nothing may be left queued, every accepted call and work item
 * must have run, and the offline request must have been served.
 */
inline quiet(c)
{
#if RING
	assert(!(waiter[c] && RINGS_UNRUN));	/* a stranded call: asleep, a published ring call untaken */
#endif
	assert(!(waiter[c] && (PENDING(callq[c]) || PENDING(urgentq[c]) || slot_pub[c] || PENDING(workq[c]))));	/* lost wakeup: asleep, calls queued */
	assert(!(waiter[c] && ctl[c] != CTL_NONE));	/* lost wakeup: asleep, request pending */
	assert(!(waiter[c] && waiting[c] && sync_done[c]));	/* lost completion kick: asleep, its call done */
	assert(!PENDING(callq[c]) && !PENDING(urgentq[c]) && !slot_pub[c] && !PENDING(workq[c]));
	assert(ctl[c] == CTL_NONE)
}

active proctype quiescence()
{
end_check:
	timeout;
	quiet(0);
#if NCPUS > 1
	quiet(1);
#endif
	assert(ran == accepted);
	assert((accepted | refused) == ALLCALLS && (accepted & refused) == 0);
	assert(work_ran == work_accepted && (work_accepted | work_refused) == ALLWORK);
	assert(senders_done == NSENDERS)
#if RING
	;
	/* every published call was taken, and every ring let go: idle, on no list */
	assert(!RINGS_UNRUN && RINGS_IDLE)
#endif
#if ATTACHED
	;
	/* every claimed kick was written, counted done and seen by the thread (none in flight) */
	assert(fd_writes == fd_claims && fd_kicks_done == fd_writes && fd_kicks_seen == fd_claims);
	/* the thread blocked in its wait has nothing to read: no kick is owed to it */
	assert(!waiter[0] || fd_count == 0)
#endif
#if DETACH
	;
	assert(hp_lock == 0);
	/* online exactly when the queues are open; detached, offline */
	assert(online == !callq[0].closed && online == !urgentq[0].closed && online == !slot_closed[0]);
	assert(attached_on || !online)
#endif
#if FOLLOW
	;
	assert(hp_lock == 0);
	/* a CPU the OS keeps is noticed: its worker drained it and parked */
	assert(os_has || parked && taken_flag);
	/* one given back is the worker's again: parked, it came back (c->taken
	 * cleared); not parked, c->taken may be stale (docs/model.md, witness 43) */
	assert(!(os_has && parked && taken_flag));
	/* ... and online again, unless the user took it offline meanwhile */
	assert(!os_has || user_offline || online);
	/* online exactly when the worker is not parked, and its queues are open exactly then */
	assert(online == !parked);
	assert(online == !callq[0].closed && online == !urgentq[0].closed && online == !slot_closed[0])
#endif
}
#endif
#endif	/* !NEST */

init
{
	byte i = 0;

#if NEST
	atomic { run nworker(0); run nworker(1); i = 0 }
#else
	atomic {
#if PAIR
		/* each worker starts with one work item queued (bit = its CPU) */
		workq[0].nodes = 1;
		workq[1].nodes = 2;
		work_accepted = 3;
#endif
#if ATTACHED
		run attached(0);
#else
		run worker(0);
#endif
#if PAIR
		run worker(1);
#endif
#if NURGENT > 0
		run urgent_handler(0);
#endif
#if NWORK > 0
		run work_queuer();
#endif
		do
#if RING
		:: i < NURGENT -> run sender(i); i++
		:: i >= NURGENT && i < NSENDERS -> run ring_sender(i); i++
#else
		:: i < NSENDERS -> run sender(i); i++
#endif
		:: else -> break
		od
	}
#endif
}

#ifdef LIVENESS
/* every queued call or work item is eventually taken; every offline request eventually served */
ltl no_lost_wakeup {
	[] ((PENDING(callq[0]) -> <> !PENDING(callq[0])) &&
	    (SLOT_PENDING(0) -> <> !SLOT_PENDING(0)) &&
	    (PENDING(urgentq[0]) -> <> !PENDING(urgentq[0])) &&
	    (PENDING(workq[0]) -> <> !PENDING(workq[0])) &&
	    (ctl[0] != CTL_NONE -> <> (ctl[0] == CTL_NONE))
#if RING
	    /* a published ring call is eventually taken */
	    && (RINGS_UNRUN -> <> !RINGS_UNRUN)
#endif
	   )
}
#endif
