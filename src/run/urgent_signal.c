// SPDX-License-Identifier: MIT
/*
 * urgent_signal.c - the urgent signal's handler: on a worker that a sender
 * found RUNNING (proto/urgent.c argues when a sender signals), it runs that
 * CPU's urgent queue, unless a call's function is running, after which the
 * call's return runs them (run.h, xc_call_returned). Installed for the
 * whole process from xc_init to xc_exit, and its disposition from before
 * put back, once every sender that counted itself in has signalled
 * (xc_urgent_quiesce).
 */
#include "base/internal.h"
#include "base/thread.h"
#include "proto/urgent.h"
#include "run/run.h"
#include "run/urgent_signal.h"

#include <errno.h>
#include <signal.h>
#include <string.h>

static struct sigaction old_action;
static int installed_signal;

static void urgent_handler(int sig)
{
	struct xc_cpu *c = xc_self;
	int saved_errno = errno;

	/*
	 * A call's function is never interrupted, as an IPI handler runs with
	 * interrupts off: the call loop runs the urgent queue right after it
	 * (call.c). The sender's push happened before its signal, and so
	 * before that check.
	 */
	if (c && !xc_in_call) {
		/*
		 * The handler runs libxcall's code, whatever it interrupted: inside
		 * (thread.h), but for the urgent functions themselves (run.h), whose
		 * calls take the handler's own pool and ring (xc_in_urgent).
		 */
		int was = xc_inside_swap(XC_INSIDE_CODE);

		/* each urgent call puts back what it interrupted, for stuck reports (xc_activity_end) */
		xc_in_urgent++;
		xc_run_urgent(c);
		xc_in_urgent--;
		xc_inside_restore(was);
	}
	errno = saved_errno;
}

int xc_urgent_install(void)
{
	struct sigaction sa;
	int sig = xc_rt.cfg.urgent_signal;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = urgent_handler;
	sa.sa_flags = SA_RESTART;
	/*
	 * No asynchronous handler nests inside ours: an application's handler on
	 * an attached thread would otherwise run while the urgent pool is half
	 * updated. What an urgent function raises itself stays deliverable.
	 */
	xc_signals_async(&sa.sa_mask);
	if (sigaction(sig, &sa, &old_action)) {
		int err = errno;

		xc_report("cannot install the urgent-call handler for signal %d: %s", sig, strerror(err));
		return -err;
	}
	installed_signal = sig;
	return 0;
}

void xc_urgent_restore(void)
{
	if (!installed_signal)
		return;
	xc_urgent_quiesce();
	sigaction(installed_signal, &old_action, NULL);
	installed_signal = 0;
}

/* In a forked child (fork.c): the signal's disposition from before xc_init, and no sender left to wait for. */
void xc_urgent_fork_child(void)
{
	if (!installed_signal)
		return;
	sigaction(installed_signal, &old_action, NULL);
	installed_signal = 0;
}
