/* SPDX-License-Identifier: MIT */
/*
 * follow.h - the worker follows the OS when it takes its CPU away (follow.c): the
 * full check and the way back; the cheap check after each run is run/os_check.h's
 */
#ifndef XC_FOLLOW_H
#define XC_FOLLOW_H

#include "base/internal.h"
#include "run/os_check.h"

#define XC_OS_WATCH_NS      100000000L	/* a sleeping worker looks at its CPU this often */
#define XC_OS_PARK_WATCH_NS  50000000L	/* a parked one, for its CPU's return */
int xc_pin_self(int cpu);
bool xc_os_check(struct xc_cpu *c);
bool xc_os_come_back(struct xc_cpu *c);
bool xc_os_cpu_offline(int cpu);
const char *xc_taken_name(int taken);

/*
 * One line of /proc/self/cgroup, split in place: the cpuset's cgroup if it is
 * v1 "N:ctrl,...:/path" with cpuset one of the comma-separated controllers
 * (controllers mounted together share a line: "3:cpuset,cpu,cpuacct:/p"), or
 * v2's "0::/path". XC_CGROUP_V1 or XC_CGROUP_V2, with @ctrls the controller
 * list ("" under v2) and @path the cgroup ("" for the root); else
 * XC_CGROUP_NONE, @ctrls and @path untouched.
 */
enum { XC_CGROUP_NONE = 0, XC_CGROUP_V1, XC_CGROUP_V2 };
int xc_cgroup_cpuset_line(char *line, const char **ctrls, const char **path);

#endif /* XC_FOLLOW_H */
