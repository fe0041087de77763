/* SPDX-License-Identifier: MIT */
/*
 * urgent_signal.h - the urgent signal's handler (urgent_signal.c)
 */
#ifndef XC_URGENT_SIGNAL_H
#define XC_URGENT_SIGNAL_H

/* At xc_init: take the urgent signal's disposition over; 0 or -errno (reported). */
int xc_urgent_install(void);
/* At xc_exit: once every sender signalled, put the disposition from before back. */
void xc_urgent_restore(void);
/* In a forked child: the disposition from before xc_init, and no sender to wait for. */
void xc_urgent_fork_child(void);

#endif /* XC_URGENT_SIGNAL_H */
