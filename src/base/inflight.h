/* SPDX-License-Identifier: MIT */
/*
 * inflight.h - calls in flight across xc_exit() (inflight.c): every thread
 * that enters libxcall is registered once, and xc_exit() waits, after its
 * workers are joined and before it clears anything a call reads, until no
 * other registered thread is inside a call that began before the runtime
 * stopped.
 */
#ifndef XC_INFLIGHT_H
#define XC_INFLIGHT_H

#include <stdbool.h>

/* This thread's first entry (thread.h): list its inside word. False: no memory, or no exit hook. */
bool xc_inflight_register(void);

/* At thread exit (thread.c): the word is about to go; a later entry registers again. */
void xc_inflight_thread_exit(void);

/* In a fork child (fork.c): the parent's other threads are gone. */
void xc_inflight_fork_child(void);

/*
 * xc_exit(), once the state is STOPPING and the workers are joined: wait
 * until every other registered thread was seen outside any call.
 */
void xc_inflight_wait(void);

#endif /* XC_INFLIGHT_H */
