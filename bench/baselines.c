/* SPDX-License-Identifier: MIT */
/*
 * baselines.c - thread-to-thread round trips between two pinned threads:
 *
 *   cacheline  one shared cache line, both sides spin: the physical limit of
 *              any cross-CPU signal (two line transfers per round trip);
 *   futex      each side sleeps in FUTEX_WAIT and is woken by FUTEX_WAKE;
 *   eventfd    blocking read/write on two eventfds (Seastar, Glommio);
 *   pipe       1-byte blocking read/write on two pipes (perf bench sched pipe);
 *   condvar    a mutex-protected queue with a condition variable each way.
 *
 * The sleeping baselines never spin first: they stand for the cost of waking
 * a thread that sleeps, which is what a libxcall kick to a sleeping worker pays.
 *
 * And the call queues that throughput measures libxcall's calls against: a
 * single-producer ring per sender and target (baselines.h) and a mutex +
 * condvar queue.
 */
#include "baselines.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

static const char *const names[PP_NKINDS] = {"cacheline", "futex", "eventfd", "pipe", "condvar", "cacheline-cas"};

const char *pp_name(enum pp_kind k)
{
	return names[k];
}

long warmup_iters(long iters)
{
	long w = iters / 10;
	return w < 100 ? 100 : w > 10000 ? 10000 : w;
}


struct pp {
	enum pp_kind kind;
	/* each side's word on its own line, so the limit case is the only one sharing */
	_Alignas(CACHELINE) _Atomic uint64_t seq;
	_Alignas(CACHELINE) _Atomic uint32_t to_b;
	_Alignas(CACHELINE) _Atomic uint32_t to_a;
	_Alignas(CACHELINE) int efd_b, efd_a;
	int pipe_b[2], pipe_a[2];
	pthread_mutex_t mu;
	pthread_cond_t cv_b, cv_a;
	long q_b, q_a;
	bool stop;
};

/* One message from a to b (or back): how each kind signals and waits. */
static void pp_send(struct pp *p, bool to_b)
{
	uint64_t one = 1;
	char c = 1;
	switch (p->kind) {
	case PP_FUTEX: {
		_Atomic uint32_t *w = to_b ? &p->to_b : &p->to_a;
		atomic_store_explicit(w, 1, memory_order_release);
		xc_futex_wake(w, 1);
		break;
	}
	case PP_EVENTFD:
		if (write(to_b ? p->efd_b : p->efd_a, &one, sizeof(one)) != sizeof(one))
			abort();
		break;
	case PP_PIPE:
		if (write(to_b ? p->pipe_b[1] : p->pipe_a[1], &c, 1) != 1)
			abort();
		break;
	case PP_CONDVAR:
		pthread_mutex_lock(&p->mu);
		if (to_b)
			p->q_b++;
		else
			p->q_a++;
		pthread_cond_signal(to_b ? &p->cv_b : &p->cv_a);
		pthread_mutex_unlock(&p->mu);
		break;
	default:
		break;
	}
}

static void pp_recv(struct pp *p, bool at_b)
{
	uint64_t v;
	char c;
	switch (p->kind) {
	case PP_FUTEX: {
		_Atomic uint32_t *w = at_b ? &p->to_b : &p->to_a;
		/* acquire: what the sender wrote before its store is visible now */
		while (!atomic_exchange_explicit(w, 0, memory_order_acquire))
			xc_futex_wait(w, 0, NULL);
		break;
	}
	case PP_EVENTFD:
		if (read(at_b ? p->efd_b : p->efd_a, &v, sizeof(v)) != sizeof(v))
			abort();
		break;
	case PP_PIPE:
		if (read(at_b ? p->pipe_b[0] : p->pipe_a[0], &c, 1) != 1)
			abort();
		break;
	case PP_CONDVAR:
		pthread_mutex_lock(&p->mu);
		long *q = at_b ? &p->q_b : &p->q_a;
		while (!*q)
			pthread_cond_wait(at_b ? &p->cv_b : &p->cv_a, &p->mu);
		(*q)--;
		pthread_mutex_unlock(&p->mu);
		break;
	default:
		break;
	}
}

static void *responder(void *arg)
{
	struct pp *p = arg;
	if (p->kind == PP_CACHELINE) {
		pp_line_respond(&p->seq);
		return NULL;
	}
	if (p->kind == PP_CAS) {
		pp_line_cas_respond(&p->seq);
		return NULL;
	}
	for (;;) {
		pp_recv(p, true);
		/* stop is written before the last ping, so it is seen after it */
		if (__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE))
			return NULL;
		pp_send(p, false);
	}
}

static inline void round_trip(struct pp *p, uint64_t *seq)
{
	if (p->kind == PP_CACHELINE) {
		pp_line_round_trip(&p->seq, seq);
		return;
	}
	if (p->kind == PP_CAS) {
		pp_line_cas_round_trip(&p->seq, seq);
		return;
	}
	pp_send(p, true);
	pp_recv(p, false);
}

/* The pinging side, a thread of its own so that the caller can watch its timed loop. */
struct pinger {
	struct pp *p;
	struct budget b;
	struct hist *h;
	long done;
	uint64_t began;                 /* when the thread first ran */
	_Atomic uint32_t left;          /* 1 until the loop is over */
};

static void *pinger_main(void *arg)
{
	struct pinger *g = arg;
	struct pp *p = g->p;
	struct budget *bb = &g->b;
	uint64_t seq = 0;
	g->began = now_ns();
	long warm = warmup_iters(bb->iters), done;
	budget_warm(bb);
	for (long i = 0; warm_more(bb, i, warm); i++)
		round_trip(p, &seq);
	budget_start(bb);
	if (bb->batch > 1) {
		/* spans of back-to-back round trips between two timestamps: one sample a span */
		for (done = 0; budget_more(bb, done); done += bb->batch) {
			uint64_t t0 = ticks();
			int i;
			for (i = 0; i < bb->batch && !budget_cut(bb, i); i++)
				round_trip(p, &seq);
			budget_span_add(bb, g->h, t0, i);
			if (i < bb->batch) {
				done += i;
				budget_stopped(bb);
				break;
			}
		}
	} else {
		for (done = 0; budget_more(bb, done); done++) {
			uint64_t t0 = ticks();
			round_trip(p, &seq);
			hist_add(g->h, ticks_span_ns(t0, ticks()));
		}
	}
	if (p->kind == PP_CACHELINE || p->kind == PP_CAS) {
		atomic_store(&p->seq, PP_LINE_STOP);
	} else {
		__atomic_store_n(&p->stop, true, __ATOMIC_RELEASE);
		pp_send(p, true);
	}
	g->done = done;
	/* release: done and the histogram, to the caller that sees 0 */
	atomic_store_explicit(&g->left, 0, memory_order_release);
	budget_done();
	return NULL;
}

long pp_run(enum pp_kind k, int cpu_a, int cpu_b, const struct budget *b, struct hist *h)
{
	struct pp *p = aligned_alloc(CACHELINE, (sizeof(*p) + CACHELINE - 1) / CACHELINE * CACHELINE);
	if (!p)
		return -ENOMEM;
	memset(p, 0, sizeof(*p));
	p->kind = k;
	p->efd_a = p->efd_b = -1;
	p->pipe_a[0] = p->pipe_a[1] = p->pipe_b[0] = p->pipe_b[1] = -1;
	int err = 0;
	if (k == PP_EVENTFD) {
		p->efd_a = eventfd(0, EFD_CLOEXEC);
		p->efd_b = eventfd(0, EFD_CLOEXEC);
		if (p->efd_a < 0 || p->efd_b < 0)
			err = -errno;
	} else if (k == PP_PIPE) {
		if (pipe(p->pipe_a) || pipe(p->pipe_b))
			err = -errno;
	} else if (k == PP_CONDVAR) {
		pthread_mutex_init(&p->mu, NULL);
		pthread_cond_init(&p->cv_a, NULL);
		pthread_cond_init(&p->cv_b, NULL);
	}
	pthread_t t, tp;
	struct pinger g = {.p = p, .b = *b, .h = h, .left = 1};
	long done = 0;
	uint64_t t0 = now_ns();
	if (!err)
		err = thread_start_pinned(&t, cpu_b, responder, p);
	if (!err) {
		err = thread_start_pinned(&tp, cpu_a, pinger_main, &g);
		if (err) {
			/* the responder waits for a ping or the stop */
			if (k == PP_CACHELINE || k == PP_CAS) {
				atomic_store(&p->seq, PP_LINE_STOP);
			} else {
				__atomic_store_n(&p->stop, true, __ATOMIC_RELEASE);
				pp_send(p, true);
			}
			pthread_join(t, NULL);
		} else {
			/* the timed loop's watch: its end marked when it passes */
			budget_wait(&g.left);
			uint64_t t1 = now_ns();
			pthread_join(tp, NULL);
			done = g.done;
			pthread_join(t, NULL);
			/* what could not be cut: the threads' start, and their stop */
			plan_uncut((double)(g.began > t0 ? g.began - t0 : 0) / 1e9);
			plan_uncut((double)(now_ns() - t1) / 1e9);
		}
	}
	for (int i = 0; i < 2; i++) {
		if (p->pipe_a[i] >= 0)
			close(p->pipe_a[i]);
		if (p->pipe_b[i] >= 0)
			close(p->pipe_b[i]);
	}
	if (p->efd_a >= 0)
		close(p->efd_a);
	if (p->efd_b >= 0)
		close(p->efd_b);
	if (k == PP_CONDVAR) {
		pthread_mutex_destroy(&p->mu);
		pthread_cond_destroy(&p->cv_a);
		pthread_cond_destroy(&p->cv_b);
	}
	free(p);
	return err ? err : done;
}

/* ---- call queues ---- */

/*
 * At a 128-byte boundary, so that its groups keep their pairs apart where a
 * CPU moves 128-byte pairs; at a 64-byte one, malloc's placement decided
 * whether head and tail shared one.
 */
struct pp_ring *pp_ring_new(void)
{
	struct pp_ring *r = aligned_alloc(2 * CACHELINE, sizeof(*r));

	if (r)
		memset(r, 0, sizeof(*r));
	return r;
}

void pp_ring_free(struct pp_ring *r)
{
	free(r);
}

/* The first of rings[0..n) with calls, looking from @at round once; -1: none. */
static int ring_next_pending(struct pp_ring *const *rings, int n, int at)
{
	for (int i = at; i < n; i++)
		if (pp_ring_pending(rings[i]))
			return i;
	for (int i = 0; i < at; i++)
		if (pp_ring_pending(rings[i]))
			return i;
	return -1;
}

void pp_ring_serve(struct pp_ring *const *rings, int n, _Atomic int *stop)
{
	int at = 0;	/* where the next look begins: the first ring the last run passed by */

	for (;;) {
		int i = ring_next_pending(rings, n, at);

		if (i >= 0) {
			/* it, and each ring after it while the next has calls too */
			do
				pp_ring_run(rings[i]);
			while (++i < n && pp_ring_pending(rings[i]));
			at = i < n ? i : 0;
			continue;
		}
		/* acquire: the producers' last entries, published before the stop, are seen above */
		if (atomic_load_explicit(stop, memory_order_acquire)) {
			for (i = 0; i < n; i++)
				pp_ring_run(rings[i]);
			return;
		}
		cpu_relax();
	}
}

struct pp_cvq {
	pthread_mutex_t mu;
	pthread_cond_t nonempty, nonfull;
	unsigned head, tail;            /* pushed, popped: under mu */
	bool stop;
	struct pp_ring_entry e[PP_RING_ENTRIES];
};

struct pp_cvq *pp_cvq_new(void)
{
	struct pp_cvq *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->nonempty, NULL);
	pthread_cond_init(&q->nonfull, NULL);
	return q;
}

void pp_cvq_free(struct pp_cvq *q)
{
	if (!q)
		return;
	pthread_mutex_destroy(&q->mu);
	pthread_cond_destroy(&q->nonempty);
	pthread_cond_destroy(&q->nonfull);
	free(q);
}

/* The textbook producer: wait for room, put, signal, all under the lock. */
void pp_cvq_push(struct pp_cvq *q, void (*fn)(void *), void *arg)
{
	pthread_mutex_lock(&q->mu);
	while (q->head - q->tail == PP_RING_ENTRIES)
		pthread_cond_wait(&q->nonfull, &q->mu);
	q->e[q->head++ % PP_RING_ENTRIES] = (struct pp_ring_entry){fn, arg};
	pthread_cond_signal(&q->nonempty);
	pthread_mutex_unlock(&q->mu);
}

/* The textbook consumer: one call per lock hold, run outside the lock. */
void pp_cvq_serve(struct pp_cvq *q)
{
	pthread_mutex_lock(&q->mu);
	for (;;) {
		while (q->head == q->tail && !q->stop)
			pthread_cond_wait(&q->nonempty, &q->mu);
		if (q->head == q->tail)
			break;
		struct pp_ring_entry e = q->e[q->tail++ % PP_RING_ENTRIES];
		pthread_cond_signal(&q->nonfull);
		pthread_mutex_unlock(&q->mu);
		e.fn(e.arg);
		pthread_mutex_lock(&q->mu);
	}
	pthread_mutex_unlock(&q->mu);
}

void pp_cvq_stop(struct pp_cvq *q)
{
	pthread_mutex_lock(&q->mu);
	q->stop = true;
	pthread_cond_broadcast(&q->nonempty);
	pthread_mutex_unlock(&q->mu);
}

void pp_cvq_restart(struct pp_cvq *q)
{
	pthread_mutex_lock(&q->mu);
	q->stop = false;
	pthread_mutex_unlock(&q->mu);
}
