/* SPDX-License-Identifier: MIT */
/*
 * commands.h - every xcall-bench subcommand, in the order --help lists them:
 * BENCH_CMD(name, one-line summary), its entry point being cmd_<name>() in
 * bench/<name>.c. Adding a subcommand is a line here and its file; bench.h
 * declares the entry points and main.c dispatches from this same list.
 * No include guard: it is included once per use, with BENCH_CMD defined.
 */
BENCH_CMD(ipi, "seed 003: dry-run, self, normal, broadcast, broadcast-lock")
BENCH_CMD(matrix, "seed 002: call all/single, wait/nowait, 1..N callers, vs the 2008 design")
BENCH_CMD(storm, "seed 000: ipistorm, with --ablate and --compare")
BENCH_CMD(idle, "seed 001: sender cost to idle targets, CPU burnt by each poll policy")
BENCH_CMD(bringup, "seed 004: serial vs parallel bringup with a per-CPU init cost")
BENCH_CMD(pingpong, "round trips: cache-line limit, futex, eventfd, pipe, condvar, libxcall")
BENCH_CMD(throughput, "calls per second: libxcall nowait/wait, SPSC ring, shared list, mutex+condvar")
BENCH_CMD(heatmap, "CPU x CPU round-trip matrix, libxcall and the cache-line limit")
BENCH_CMD(kernel, "the host kernel's real IPIs, proven by /proc/interrupts")
BENCH_CMD(wake, "every way to wake a thread on another CPU: hot, parked, busy; IPIs per wake")
BENCH_CMD(debug, "cost of stuck reports, tracing and the OS watch; XC_URGENT delivery to a busy worker")
