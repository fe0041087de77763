/* SPDX-License-Identifier: MIT */
/*
 * progress.h - whether a process's threads are making progress or waiting
 * for a CPU: the scenario fuzzer's hang verdict (progress.c).
 */
#ifndef XCFUZZ_PROGRESS_H
#define XCFUZZ_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define PROGRESS_MAXTASKS 256

/*
 * The threads of one process as last seen: their CPU time and state. A
 * stretch of time is "starved" when some thread of the process got no CPU
 * time in it (less than PROGRESS_RAN_NS) while it was waiting for a CPU:
 * its state letter 'R' at the stretch's end, or its run-queue wait
 * (schedstat) grew by half the stretch or more. That is the library's own
 * "has not run" (src/stuck.c): its CPU time unchanged, and runnable. A
 * hung thread is told apart so: one that spins runs, and one that sleeps
 * is not runnable; either way the time counts.
 */
struct progress {
	pid_t pid;		/* whose threads: 0, this process */
	pid_t skip;		/* a thread not to judge (the watcher itself), 0 none */
	int n;
	struct {
		pid_t tid;
		uint64_t run_ns, wait_ns;
	} t[PROGRESS_MAXTASKS];
	uint64_t last_ns;	/* the last look (CLOCK_MONOTONIC) */
	uint64_t starved_ns;	/* starved time since the first look */
	pid_t starved_tid;	/* the last thread found waiting for a CPU */
	char starved_state;
};

#define PROGRESS_RAN_NS 1000000ull

void progress_init(struct progress *p, pid_t pid, pid_t skip);
/* One look: adds the stretch since the last to starved_ns if it was starved; true if so. */
bool progress_look(struct progress *p);

#endif
