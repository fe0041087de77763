// SPDX-License-Identifier: MIT
/*
 * inflight.c - calls in flight across xc_exit().
 *
 * A call reads the runtime (the set, the options, the CPUs' queues and
 * rings) after one look at its state. xc_exit() and the xc_init() after it
 * clear and rewrite all of that, so a call that looked while the runtime
 * was up must be out before xc_exit() clears anything. The call path pays
 * nothing for it beyond the inside word it writes anyway (thread.h): a
 * thread's first entry lists the address of that word here, and xc_exit()
 * waits until every listed thread is seen outside.
 *
 * The protocol, caller C and exiter X:
 *   C1  store inside = CODE (relaxed)         X1  state = STOPPING, gate = 0
 *   C2  load state or the gate (acquire)      X2  membarrier: a full barrier on
 *   ... the call ...                               every running thread
 *   C3  store inside = 0 (release)            X3  load inside (acquire) of each
 *                                                  listed thread, until not in flight
 *                                             X4  clear the runtime
 * X2 puts a full barrier into C's program somewhere: before C1, and C2
 * sees X1; after C1, and X3 sees C1 (then waits for C3, whose release
 * carries every read of the call to X's acquire, so X4 comes after them).
 * A thread's first C1 also lists it (a seq_cst CAS); X3 reads the list
 * after X2, so the same two cases hold. C pays one relaxed store and one
 * release store, plain moves on x86, which it made before this existed.
 *
 * X3 does not wait for a moment when all are out together, only for each
 * one seen out once: a thread that enters after X1 finds the runtime
 * stopping and leaves at once. Seeing out a thread that calls in a tight
 * loop needs one look between two of its calls, which a yield between looks
 * makes likely; it is not bounded.
 *
 * What counts as in flight is the inside word's CODE or FLIGHT bit: FLIGHT
 * marks an application hook run from a call (a cond callback), inside the
 * call although outside libxcall's code. Workers are not listed: xc_exit()
 * joins them before X2.
 *
 * The list: chunks of slots, each slot the address of one thread's inside
 * word or NULL. A thread claims a free slot by CAS, lock-free, as its first
 * entry may be in a signal handler. It clears its slot at thread exit under
 * the lock, which X holds for each look, so the word X reads is still the
 * thread's. Chunks are never freed; a slot is reused.
 */
#include "base/internal.h"
#include "base/inflight.h"
#include "base/thread.h"

#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* a page of slots and its link */
#define SLOTS_PER_CHUNK 511

struct inflight_chunk {
	_Atomic(volatile int *) slot[SLOTS_PER_CHUNK];
	_Atomic(struct inflight_chunk *) next;
};

static struct inflight_chunk first;
static pthread_mutex_t looking = PTHREAD_MUTEX_INITIALIZER;
/* this thread's slot while it is listed */
static __xc_tls _Atomic(volatile int *) *my_slot;

/* A free slot, claimed for @word; NULL if no chunk could be mapped. */
static _Atomic(volatile int *) *slot_claim(volatile int *word)
{
	struct inflight_chunk *ch = &first;

	for (;;) {
		for (int i = 0; i < SLOTS_PER_CHUNK; i++) {
			volatile int *none = NULL;

			/* seq_cst: the listing against X's look at the list after its barrier (above) */
			if (!atomic_load_explicit(&ch->slot[i], memory_order_relaxed) &&
			    atomic_compare_exchange_strong_explicit(&ch->slot[i], &none, word,
								    memory_order_seq_cst,
								    memory_order_relaxed))
				return &ch->slot[i];
		}
		/* acquire: a chunk another thread added is zeroed before we look in it */
		struct inflight_chunk *next = atomic_load_explicit(&ch->next, memory_order_acquire);

		if (!next) {
			struct inflight_chunk *fresh = xc_map(sizeof(*fresh));

			if (!fresh)
				return NULL;
			/* release: the chunk's zero pages before anyone finds it; a loser unmaps its own */
			if (atomic_compare_exchange_strong_explicit(&ch->next, &next, fresh,
								    memory_order_release,
								    memory_order_acquire))
				next = fresh;
			else
				munmap(fresh, sizeof(*fresh));
		}
		ch = next;
	}
}

bool xc_inflight_register(void)
{
	/* the slot must be cleared before the word goes with the thread */
	if (!xc_thread_exit_register())
		return false;
	my_slot = slot_claim(&xc_tls.inside);
	return my_slot != NULL;
}

void xc_inflight_thread_exit(void)
{
	if (!my_slot)
		return;
	pthread_mutex_lock(&looking);
	/*
	 * release: an exiter that finds the slot empty takes no lock, and its
	 * acquire must still come after this thread's last call (C3 above); the
	 * slot is free for a new thread from here
	 */
	atomic_store_explicit(my_slot, NULL, memory_order_release);
	pthread_mutex_unlock(&looking);
	my_slot = NULL;
}

__attribute__((constructor)) static void inflight_exit_hook(void)
{
	xc_thread_exit_hook(XC_EXIT_INFLIGHT, xc_inflight_thread_exit);
}

void xc_inflight_fork_child(void)
{
	pthread_mutex_init(&looking, NULL);
	/* relaxed: the child has one thread */
	for (struct inflight_chunk *ch = &first; ch;
	     ch = atomic_load_explicit(&ch->next, memory_order_relaxed))
		for (int i = 0; i < SLOTS_PER_CHUNK; i++)
			if (&ch->slot[i] != my_slot)
				atomic_store_explicit(&ch->slot[i], NULL, memory_order_relaxed);
}

/*
 * X2: a full barrier on every running thread of the process. The expedited
 * command is registered at xc_init (proto/barrier.c); the global one serves where it
 * is not; where membarrier is refused altogether, a permission change of a
 * touched page of ours sends every CPU that runs the process a TLB
 * shootdown, whose interrupt is as full a barrier.
 */
static void barrier_everywhere(void)
{
	static char *page;

	if (syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0 ||
	    syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) == 0)
		return;
	if (!page)
		page = xc_map((size_t)sysconf(_SC_PAGESIZE));
	if (!page) {
		atomic_thread_fence(memory_order_seq_cst);
		return;
	}
	mprotect(page, 1, PROT_READ | PROT_WRITE);
	*(volatile char *)page = 1;	/* a TLB entry to shoot down */
	mprotect(page, 1, PROT_READ);
}

/* Whether the thread whose word is in @slot is out, or gone; under the lock. */
static bool seen_out(_Atomic(volatile int *) *slot)
{
	volatile int *word;
	bool out;

	/* acquire, both: pairs with the listing CAS; a slot empty now needs no lock */
	if (!atomic_load_explicit(slot, memory_order_acquire))
		return true;
	pthread_mutex_lock(&looking);
	/* the lock keeps the thread's word while we read it */
	word = atomic_load_explicit(slot, memory_order_acquire);
	/* acquire: pairs with the leaving release (thread.h), so the call's reads come first */
	out = !word || word == &xc_tls.inside ||
	      !(__atomic_load_n(word, __ATOMIC_ACQUIRE) & (XC_INSIDE_CODE | XC_INSIDE_FLIGHT));
	pthread_mutex_unlock(&looking);
	return out;
}

void xc_inflight_wait(void)
{
	barrier_everywhere();
	/* acquire: a chunk's slots as listed (the CAS above) */
	for (struct inflight_chunk *ch = &first; ch;
	     ch = atomic_load_explicit(&ch->next, memory_order_acquire))
		for (int i = 0; i < SLOTS_PER_CHUNK; i++)
			for (unsigned looks = 0; !seen_out(&ch->slot[i]); looks++)
				if (looks < 64)
					sched_yield();
				else
					usleep(100);
}
