// SPDX-License-Identifier: MIT
/* hello.c - the README example: a waiting call to CPU 1, then a nowait call to every CPU. */
#include <xcall.h>
#include <stdio.h>
static void hello(void *arg) { printf("%s from CPU %d\n", (char *)arg, xc_this_cpu()); }
int main(void)
{
	xc_init(NULL);
	xc_call_single(1, hello, (void *)"wait", XC_WAIT);
	xc_call_all(hello, (void *)"nowait", 0);
	return xc_exit();
}
