/* SPDX-License-Identifier: MIT */
/* kernel.c - placeholder until the kernel probes land (issue 4). */
#include "bench.h"

int cmd_kernel(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	cli_fail("kernel", "not implemented yet");
}
