// SPDX-License-Identifier: MIT
/*
 * urgent.c - XC_URGENT: reach a worker that is busy and not polling, the way
 * an IPI interrupts a busy CPU. An urgent call goes on the CPU's urgent
 * queue; the sender whose push found that queue empty reads the worker's
 * idle state: RUNNING means busy, so it sends the worker a signal, whose
 * handler runs the urgent queue; any other state is an idle worker, which
 * the ordinary kick protocol reaches (its idle loop runs urgent calls too).
 * Neither interrupts a call's function: urgent calls that arrive while one
 * runs run right after it.
 *
 * Ordering: the push is seq_cst, the state load is seq_cst, and the worker
 * stores RUNNING with seq_cst when it leaves idle and then re-checks its
 * queues before any work item (wake.c, worker.c): a sender that reads an
 * idle state left behind has its call seen by that re-check; one that reads
 * RUNNING signals. A signal that finds the worker idle after all costs one
 * handler run over an empty or small queue.
 *
 * Lifetime: a sender counts itself in xc_rt.urgent_senders from before its
 * push until after its signal, and xc_exit() waits for that count to drop
 * before it puts the previous signal disposition back, so no signal of ours
 * can arrive after our handler is gone. Signals go by Linux thread id
 * (tgkill), which stays valid to name after the thread is joined.
 */
#include "base/internal.h"
#include "proto/wake.h"
#include "proto/urgent.h"
#include "base/trace.h"
#include "base/thread.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>


/* Every urgent sender that counted itself in has sent its signal. */
void xc_urgent_quiesce(void)
{
	/* seq_cst: pairs with the senders' count-then-check in xc_urgent_enter() */
	while (atomic_load_explicit(&xc_rt.urgent_senders, memory_order_seq_cst))
		sched_yield();
}

void xc_kick_urgent(struct xc_cpu *c)
{
	/* seq_cst: after the push (S1), as in xc_kick's S2 */
	uint32_t s = atomic_load_explicit(&c->mbox.idle, memory_order_seq_cst);

	if (s != XC_IDLE_RUNNING) {
		xc_kick(c);
		return;
	}
	syscall(SYS_tgkill, getpid(), c->life.tid, xc_rt.cfg.urgent_signal);
	xc_stat_inc_shared(&c->sent.signals_sent);
	xc_trace(XC_EV_KICK_SIGNAL, c->life.cpu, 0, NULL);
}

/* Before an urgent push: count ourselves, then make sure calls are still accepted. */
bool xc_urgent_enter(void)
{
	/* seq_cst: pairs with xc_exit's STOPPING store and xc_urgent_restore's load */
	atomic_fetch_add_explicit(&xc_rt.urgent_senders, 1, memory_order_seq_cst);
	if (xc_rt_accepting())
		return true;
	xc_urgent_leave();
	return false;
}

/* After the urgent push and its signal. */
void xc_urgent_leave(void)
{
	/* release: our signal was sent before xc_exit can see the count drop */
	atomic_fetch_sub_explicit(&xc_rt.urgent_senders, 1, memory_order_release);
}
