/*
 * call-async-chain: a completion callback that queues its descriptor again
 * to its own CPU, over and over, runs in bounded stack: 300,000 links on a
 * worker with a 1 MiB stack (pthread_setattr_default_np), where a callback
 * nested in each inline call would overflow it within some thousands. Each
 * link's function runs once, on that CPU, at once (inline: before the
 * xc_call_async() that queued it returns), in order; its callback after it.
 * A chain begun by a call from another thread, through the ring, does the
 * same. Two descriptors that queue each other from their callbacks
 * alternate, each function once, in order.
 */
#include "test.h"
#include <stdatomic.h>

#define LINKS 300000

static int cpu_a;
static _Atomic long fn_runs, done_runs, wrong_cpu, out_of_order, not_inline, chain_ended;
static long chain_len;

struct link {
	struct xc_call call;
	struct link *next;	/* the descriptor the callback queues */
};

static void link_fn(void *arg)
{
	long n = atomic_fetch_add(&fn_runs, 1) + 1;

	if (xc_this_cpu() != cpu_a)
		atomic_fetch_add(&wrong_cpu, 1);
	/* each function after the last one's callback, which queued it */
	if (n != atomic_load(&done_runs) + 1)
		atomic_store(&out_of_order, n);
}

static void link_done(void *arg)
{
	struct link *l = arg;
	long d = atomic_fetch_add(&done_runs, 1) + 1;

	if (d >= chain_len) {
		atomic_store(&chain_ended, 1);
		return;
	}
	CHECK_RET(xc_call_async(cpu_a, &l->next->call), 0);
	/* its function ran inline, at once (a chain's later links may have run too) */
	if (atomic_load(&fn_runs) < d + 1)
		atomic_store(&not_inline, d);
}

static void link_init(struct link *l, struct link *next)
{
	memset(l, 0, sizeof(*l));
	l->call.fn = link_fn;
	l->call.arg = l;
	l->call.on_done.fn = link_done;
	l->call.on_done.arg = l;
	l->next = next;
}

static struct link one, two;

/* On CPU A: start a chain there, so that every link is an inline call. */
static void start_on_a(void *arg)
{
	CHECK_RET(xc_call_async(cpu_a, &one.call), 0);
}

static void chain(const char *what, bool two_links, bool from_a)
{
	atomic_store(&fn_runs, 0);
	atomic_store(&done_runs, 0);
	atomic_store(&chain_ended, 0);
	chain_len = LINKS;
	if (two_links) {
		link_init(&one, &two);
		link_init(&two, &one);
	} else {
		link_init(&one, &one);
	}
	if (from_a)
		CHECK_RET(xc_call_single(cpu_a, start_on_a, NULL, XC_WAIT), 0);
	else
		CHECK_RET(xc_call_async(cpu_a, &one.call), 0);
	WAIT_UNTIL(atomic_load(&chain_ended));
	WAIT_UNTIL(xc_call_done(&one.call) && xc_call_done(&two.call));
	CHECK_RET(atomic_load(&fn_runs), LINKS);
	CHECK_RET(atomic_load(&done_runs), LINKS);
	CHECK_RET(atomic_load(&wrong_cpu), 0);
	CHECK_RET(atomic_load(&out_of_order), 0);
	CHECK_RET(atomic_load(&not_inline), 0);
	printf("call-async-chain: %s: %d links\n", what, LINKS);
}

int main(void)
{
	pthread_attr_t small;
	int cpus[CPU_SETSIZE];

	CHECK(pthread_attr_init(&small) == 0);
	CHECK(pthread_attr_setstacksize(&small, 1024 * 1024) == 0);
	CHECK(pthread_setattr_default_np(&small) == 0);
	CHECK_RET(xc_init(NULL), 0);
	t_cpus(cpus);
	cpu_a = cpus[0];
	chain("one descriptor, begun on its CPU", false, true);
	chain("one descriptor, begun through the ring", false, false);
	chain("two descriptors queueing each other", true, true);
	CHECK_RET(xc_exit(), 0);
	return T_PASS;
}
