// SPDX-License-Identifier: MIT
/*
 * trace.c - per-CPU and per-thread event rings, and their export as Chrome
 * trace JSON (Perfetto, chrome://tracing): one track per CPU and per calling
 * thread, a slice per call and work item, instants for kicks, and a flow
 * arrow from each queued call to its entry on the target CPU.
 *
 * Concurrency: each ring has one writer (its worker, or its thread), which
 * fills an event and then publishes it with a release store of head. A
 * dump may run at any time from any thread: it copies the events below head
 * and then re-reads head, and drops what may have been overwritten meanwhile.
 * CPU rings live from xc_init to xc_exit (written only by workers, freed
 * after they are joined); thread rings live as long as the process and are
 * recycled when their thread exits, like descriptor pools.
 */
#include "base/internal.h"
#include "base/trace.h"
#include "base/thread.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define XC_FLOW_SEQ_BITS 20
/* Ring ids fill the flow id's other bits: CPU rings, urgent rings, then thread rings. */
#define XC_RING_ID_MAX   ((1u << (32 - XC_FLOW_SEQ_BITS)) - 1)
#define XC_THREAD_RING_ID0 (2 * XC_MAX_CPUS)

/* An event as a dump copies it out. */
struct xc_ev {
	uint64_t ts_ns;
	const void *fn;
	uint32_t flow;
	uint16_t type;
	int16_t other;
};

/*
 * An event in its ring: words that a dump may read while the writer
 * rewrites them, so atomic (relaxed: the fences in xc_trace_record and
 * ring_snapshot order them); info packs flow, type and other.
 */
struct xc_ev_slot {
	_Atomic uint64_t ts_ns;
	_Atomic(const void *) fn;
	_Atomic uint64_t info;
};

struct xc_trace_ring {
	_Atomic uint64_t head;		/* events ever written; release-stored by the writer */
	uint64_t mask;
	uint32_t id;			/* names flows: id << XC_FLOW_SEQ_BITS | seq */
	uint32_t seq;			/* writer only */
	int cpu;			/* a worker's CPU, or -1 */
	int tid;			/* a thread ring's Linux thread id */
	unsigned generation;		/* the xc_init it belongs to */
	bool in_use;			/* thread rings: owned by a live thread */
	struct xc_trace_ring *next;		/* thread rings: the registry */
	struct xc_ev_slot ev[];
};

_Atomic bool xc_tracing;
static struct xc_trace_ring *cpu_rings[XC_MAX_CPUS];
/* what a worker records from its urgent signal handler, which may interrupt a record */
static struct xc_trace_ring *urgent_rings[XC_MAX_CPUS];
static struct xc_trace_ring *thread_rings;		/* under rings_lock */
static uint32_t thread_ring_ids;		/* under rings_lock */
static uint64_t untraced_threads;		/* under rings_lock: no ring id left for them */
/* Held by a dump and by xc_trace_stop: a dump never reads CPU rings being freed. */
static pthread_mutex_t dump_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t rings_lock = PTHREAD_MUTEX_INITIALIZER;
static __xc_tls struct xc_trace_ring *my_ring;
static __xc_tls bool my_ring_refused;	/* no ring id was left: untraced for life */

static uint64_t ring_events(void)
{
	uint64_t n = xc_rt.cfg.trace_events;	/* options.c: never 0 */
	uint64_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

static struct xc_trace_ring *ring_new(uint64_t events)
{
	struct xc_trace_ring *r = calloc(1, sizeof(*r) + events * sizeof(struct xc_ev_slot));

	if (r)
		r->mask = events - 1;
	return r;
}

/*
 * A thread ring: mapped, not allocated, since a thread's first call may come
 * from a signal handler that interrupted malloc (thread.h). Thread rings are
 * never freed.
 */
static struct xc_trace_ring *thread_ring_new(uint64_t events)
{
	struct xc_trace_ring *r = xc_map(sizeof(*r) + events * sizeof(struct xc_ev_slot));

	if (!r)
		return NULL;
	r->mask = events - 1;	/* the rest is zero, as mmap gives it */
	return r;
}

/* The thread exits (thread.c): its ring is free for the next thread, and this one forgets it. */
void xc_trace_thread_exit(void)
{
	struct xc_trace_ring *r = my_ring;

	if (!r)
		return;
	my_ring = NULL;
	pthread_mutex_lock(&rings_lock);
	r->in_use = false;
	pthread_mutex_unlock(&rings_lock);
}

__attribute__((constructor)) static void trace_exit_hook(void)
{
	xc_thread_exit_hook(XC_EXIT_TRACE, xc_trace_thread_exit);
}

/*
 * The calling thread's ring for this generation, adopting or making one.
 * A signal handler may get here (thread.h): rings_lock is then held, if at
 * all, by another thread, since this one takes it only inside libxcall.
 */
static struct xc_trace_ring *thread_ring(void)
{
	struct xc_trace_ring *r = my_ring;
	uint64_t events = ring_events();

	if (xc_likely(r && r->generation == xc_rt.generation))
		return r;
	if (my_ring_refused)
		return NULL;
	pthread_mutex_lock(&rings_lock);
	if (!r) {
		for (r = thread_rings; r; r = r->next)
			if (!r->in_use && r->mask + 1 == events)
				break;
		if (!r && XC_THREAD_RING_ID0 + thread_ring_ids >= XC_RING_ID_MAX) {
			/* every flow id is taken by a live thread's ring: this thread goes untraced */
			untraced_threads++;
			my_ring_refused = true;
		} else if (!r) {
			r = thread_ring_new(events);
			if (r) {
				r->id = XC_THREAD_RING_ID0 + ++thread_ring_ids;
				r->next = thread_rings;
				thread_rings = r;
			}
		}
		if (r) {
			r->in_use = true;
			xc_thread_exit_register();
		}
	}
	if (r) {
		r->cpu = -1;
		r->tid = (int)syscall(SYS_gettid);
		r->generation = xc_rt.generation;
		atomic_store_explicit(&r->head, 0, memory_order_release);
	}
	pthread_mutex_unlock(&rings_lock);
	my_ring = r;
	return r;
}

static struct xc_trace_ring *ring_self(void)
{
	if (xc_self)
		return (xc_in_urgent ? urgent_rings : cpu_rings)[xc_self->life.cpu];
	return thread_ring();
}

void xc_trace_record(unsigned type, int other, uint32_t flow, const void *fn)
{
	struct xc_trace_ring *r = ring_self();
	uint64_t h;
	struct xc_ev_slot *e;

	if (!r)
		return;
	/* relaxed: this thread is the only writer */
	h = atomic_load_explicit(&r->head, memory_order_relaxed);
	e = &r->ev[h & r->mask];
	/*
	 * release fence: the store of head == h (the previous event's
	 * publication) comes before any store below, so a dump that reads one
	 * of them, rewriting event h - size's slot, then reads head >= h
	 * (ring_snapshot) and drops that event.
	 */
	atomic_thread_fence(memory_order_release);
	/* relaxed, all three: ordered by the fence above and the release store below */
	atomic_store_explicit(&e->ts_ns, xc_now_ns(), memory_order_relaxed);
	atomic_store_explicit(&e->fn, fn, memory_order_relaxed);
	atomic_store_explicit(&e->info, (uint64_t)flow << 32 | (uint64_t)(uint16_t)type << 16 |
			      (uint16_t)other, memory_order_relaxed);
	/* release: the event's fields before a dump can count it */
	atomic_store_explicit(&r->head, h + 1, memory_order_release);
}

uint32_t xc_trace_flow_new(void)
{
	struct xc_trace_ring *r = ring_self();

	if (!r)
		return 0;
	r->seq = (r->seq + 1) & ((1u << XC_FLOW_SEQ_BITS) - 1);
	if (!r->seq)
		r->seq = 1;
	return r->id << XC_FLOW_SEQ_BITS | r->seq;
}

int xc_trace_start(void)
{
	uint64_t events = ring_events();

	for (int i = 0; i < xc_rt.nr_cpus; i++) {
		int cpu = xc_rt.cpu_list[i];
		struct xc_trace_ring *r = ring_new(events), *u = ring_new(events);

		if (!r || !u) {
			free(r);
			free(u);
			xc_trace_stop();
			return -ENOMEM;
		}
		r->cpu = u->cpu = cpu;
		r->id = (uint32_t)cpu + 1;
		u->id = (uint32_t)cpu + 1 + XC_MAX_CPUS;
		r->generation = u->generation = xc_rt.generation;
		cpu_rings[cpu] = r;
		urgent_rings[cpu] = u;
	}
	atomic_store_explicit(&xc_tracing, true, memory_order_relaxed);	/* published by xc_init's release of UP */
	return 0;
}

/*
 * After every worker is joined and every call of another thread is out
 * (xc_exit's wait, inflight.c; a failed xc_init was never up): nobody
 * writes or reads CPU rings any more.
 */
void xc_trace_stop(void)
{
	pthread_mutex_lock(&dump_lock);
	atomic_store_explicit(&xc_tracing, false, memory_order_relaxed);
	for (int i = 0; i < XC_MAX_CPUS; i++) {
		free(cpu_rings[i]);
		free(urgent_rings[i]);
		cpu_rings[i] = urgent_rings[i] = NULL;
	}
	pthread_mutex_unlock(&dump_lock);
}

static uint64_t ring_drops(const struct xc_trace_ring *r)
{
	uint64_t h = atomic_load_explicit((_Atomic uint64_t *)&r->head, memory_order_acquire);

	return h > r->mask + 1 ? h - (r->mask + 1) : 0;
}

/* Inside a call (xc_stats_get): xc_exit frees the rings only once it is out (inflight.c). */
uint64_t xc_trace_drops(int cpu)
{
	return (cpu_rings[cpu] ? ring_drops(cpu_rings[cpu]) : 0) +
	       (urgent_rings[cpu] ? ring_drops(urgent_rings[cpu]) : 0);
}

/* Chrome trace track of a ring: the CPU, its urgent context, or a thread. */
/*
 * Whose a ring is, as a dump names it: a thread ring's cpu and tid change
 * when a thread adopts it (under rings_lock), so a dump copies them there.
 */
struct ring_who {
	int cpu, tid;
	uint32_t id;
};

static struct ring_who ring_who(const struct xc_trace_ring *r)
{
	return (struct ring_who){ r->cpu, r->tid, r->id };
}

static int ring_track(const struct ring_who *w)
{
	if (w->cpu < 0)
		return 100000 + (int)w->id;
	return w->id > XC_MAX_CPUS ? 50000 + w->cpu : w->cpu;
}

/* --- export --- */

struct dump {
	FILE *f;
	uint64_t t0;
	bool first;
	uint64_t drops;
};

static void emit(struct dump *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void emit(struct dump *d, const char *fmt, ...)
{
	va_list ap;

	fputs(d->first ? "\n" : ",\n", d->f);
	d->first = false;
	va_start(ap, fmt);
	vfprintf(d->f, fmt, ap);
	va_end(ap);
}

static const char *const ev_names[XC_EV_NR] = {
	[XC_EV_QUEUE] = "queue", [XC_EV_KICK_SENT] = "kick sent",
	[XC_EV_KICK_ELIDED] = "kick elided", [XC_EV_KICK_COALESCED] = "kick coalesced",
	[XC_EV_FREE_RIDE] = "free ride", [XC_EV_KICK_SIGNAL] = "kick signal",
	[XC_EV_WORK_QUEUE] = "queue work", [XC_EV_OFFLINE] = "offline", [XC_EV_ONLINE] = "online",
};

static void emit_event(struct dump *d, int tid, const struct xc_ev *e)
{
	char name[128];
	double ts = (double)(e->ts_ns - d->t0) / 1000.0;

	xc_symbol(e->fn, name, sizeof(name));
	switch (e->type) {
	case XC_EV_QUEUE:
		emit(d, "{\"name\":\"queue %s\",\"cat\":\"call\",\"ph\":\"i\",\"s\":\"t\",\"ts\":%.3f,"
		     "\"pid\":1,\"tid\":%d,\"args\":{\"to\":%d}}", name, ts, tid, e->other);
		if (e->flow)
			emit(d, "{\"name\":\"call\",\"cat\":\"call\",\"ph\":\"s\",\"id\":%u,\"ts\":%.3f,"
			     "\"pid\":1,\"tid\":%d}", e->flow, ts, tid);
		break;
	case XC_EV_CALL_ENTRY:
	case XC_EV_URGENT_ENTRY:
	case XC_EV_WORK_ENTRY:
		emit(d, "{\"name\":\"%s%s\",\"cat\":\"%s\",\"ph\":\"B\",\"ts\":%.3f,\"pid\":1,"
		     "\"tid\":%d,\"args\":{\"from\":%d}}",
		     e->type == XC_EV_URGENT_ENTRY ? "urgent " : "", name,
		     e->type == XC_EV_WORK_ENTRY ? "work" : "call", ts, tid, e->other);
		if (e->flow && e->type != XC_EV_WORK_ENTRY)
			emit(d, "{\"name\":\"call\",\"cat\":\"call\",\"ph\":\"f\",\"bp\":\"e\",\"id\":%u,"
			     "\"ts\":%.3f,\"pid\":1,\"tid\":%d}", e->flow, ts, tid);
		break;
	case XC_EV_CALL_EXIT:
	case XC_EV_URGENT_EXIT:
	case XC_EV_WORK_EXIT:
		emit(d, "{\"ph\":\"E\",\"ts\":%.3f,\"pid\":1,\"tid\":%d}", ts, tid);
		break;
	case XC_EV_SLEEP:
		emit(d, "{\"name\":\"sleep\",\"cat\":\"idle\",\"ph\":\"B\",\"ts\":%.3f,\"pid\":1,"
		     "\"tid\":%d}", ts, tid);
		break;
	case XC_EV_WAKE:
		emit(d, "{\"ph\":\"E\",\"ts\":%.3f,\"pid\":1,\"tid\":%d}", ts, tid);
		break;
	default:
		if (e->type >= XC_EV_NR || !ev_names[e->type])
			break;
		emit(d, "{\"name\":\"%s\",\"cat\":\"kick\",\"ph\":\"i\",\"s\":\"t\",\"ts\":%.3f,"
		     "\"pid\":1,\"tid\":%d,\"args\":{\"cpu\":%d}}", ev_names[e->type], ts, tid, e->other);
		break;
	}
}

/* Copy what is stable in @r into a fresh array; returns the count. */
static size_t ring_snapshot(const struct xc_trace_ring *r, struct xc_ev **out, uint64_t *drops)
{
	uint64_t size = r->mask + 1;
	/* acquire: pairs with the writer's release, so events below head are complete */
	uint64_t h1 = atomic_load_explicit((_Atomic uint64_t *)&r->head, memory_order_acquire);
	uint64_t lo = h1 > size ? h1 - size : 0, h2;
	struct xc_ev *copy = malloc((size_t)(h1 - lo) * sizeof(*copy) + 1);
	size_t n = 0;

	*out = copy;
	if (!copy)
		return 0;
	for (uint64_t i = lo; i < h1; i++) {
		const struct xc_ev_slot *e = &r->ev[i & r->mask];
		/* relaxed, all three: a torn event is dropped below */
		uint64_t info = atomic_load_explicit((_Atomic uint64_t *)&e->info, memory_order_relaxed);

		copy[i - lo] = (struct xc_ev){
			.ts_ns = atomic_load_explicit((_Atomic uint64_t *)&e->ts_ns, memory_order_relaxed),
			.fn = atomic_load_explicit((_Atomic(const void *) *)&e->fn, memory_order_relaxed),
			.flow = (uint32_t)(info >> 32),
			.type = (uint16_t)(info >> 16),
			.other = (int16_t)(uint16_t)info,
		};
	}
	/* acquire fence: pairs with the writer's release fence; the copies come before the re-read of head */
	atomic_thread_fence(memory_order_acquire);
	h2 = atomic_load_explicit((_Atomic uint64_t *)&r->head, memory_order_relaxed);
	for (uint64_t i = lo; i < h1; i++)
		if (i + size > h2)	/* its slot was not rewritten while we copied */
			copy[n++] = copy[i - lo];
	*drops += h2 > size ? h2 - size : 0;
	return n;
}

int xc_trace_write(const char *path)
{
	enum { MAX_RINGS = XC_RING_ID_MAX + 1 };	/* every ring id */
	static struct xc_trace_ring *rings[MAX_RINGS];
	static struct ring_who who[MAX_RINGS];
	static struct xc_ev *evs[MAX_RINGS];
	static size_t counts[MAX_RINGS];
	struct dump d = { .first = true, .t0 = UINT64_MAX };
	int nr = 0, ret = 0;
	uint64_t untraced;

	if (!path)
		return -EINVAL;
	pthread_mutex_lock(&dump_lock);	/* the arrays above are shared; the rings stay */
	if (!xc_tracing_on()) {
		pthread_mutex_unlock(&dump_lock);
		return -ENXIO;
	}
	/* a CPU's rings are named once by xc_init, before UP */
	for (int i = 0; i < XC_MAX_CPUS; i++) {
		if (cpu_rings[i]) {
			who[nr] = ring_who(cpu_rings[i]);
			rings[nr++] = cpu_rings[i];
		}
		if (urgent_rings[i]) {
			who[nr] = ring_who(urgent_rings[i]);
			rings[nr++] = urgent_rings[i];
		}
	}
	pthread_mutex_lock(&rings_lock);
	for (struct xc_trace_ring *r = thread_rings; r && nr < MAX_RINGS; r = r->next)
		if (r->generation == xc_rt.generation) {
			who[nr] = ring_who(r);
			rings[nr++] = r;
		}
	untraced = untraced_threads;
	pthread_mutex_unlock(&rings_lock);

	for (int i = 0; i < nr; i++) {
		counts[i] = ring_snapshot(rings[i], &evs[i], &d.drops);
		if (counts[i] && evs[i][0].ts_ns < d.t0)
			d.t0 = evs[i][0].ts_ns;
	}
	d.f = fopen(path, "we");
	if (!d.f) {
		ret = -errno;
		xc_report("trace: cannot write %s: %s", path, strerror(errno));
		goto out;
	}
	fprintf(d.f, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"tool\":\"libxcall\","
		"\"dropped_events\":%llu,\"untraced_threads\":%llu},\"traceEvents\":[",
		(unsigned long long)d.drops, (unsigned long long)untraced);
	emit(&d, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{\"name\":\"xcall\"}}");
	for (int i = 0; i < nr; i++) {
		const struct ring_who *w = &who[i];

		if (w->cpu >= 0)
			emit(&d, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%d,"
			     "\"args\":{\"name\":\"CPU %d%s\"}}", ring_track(w), w->cpu,
			     w->id > XC_MAX_CPUS ? " urgent" : "");
		else
			emit(&d, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%d,"
			     "\"args\":{\"name\":\"thread %d\"}}", ring_track(w), w->tid);
		for (size_t k = 0; k < counts[i]; k++)
			emit_event(&d, ring_track(w), &evs[i][k]);
	}
	fputs("\n]}\n", d.f);
	if (ferror(d.f))
		ret = -EIO;
	if (fclose(d.f) && !ret)
		ret = -errno;
out:
	for (int i = 0; i < nr; i++)
		free(evs[i]);
	pthread_mutex_unlock(&dump_lock);
	return ret;
}

static int trace_dump(const char *path)
{
	if (!path)
		return -EINVAL;
	/*
	 * acquire: pairs with xc_init's release of UP, so the rings it made are
	 * visible (xc_tracing alone, relaxed, orders nothing against an xc_init
	 * still making them); xc_exit frees them only once this call is out
	 * (inflight.c). xc_exit's own write is xc_trace_write, while STOPPING.
	 */
	if (atomic_load_explicit(&xc_rt.state, memory_order_acquire) != XC_RT_UP)
		return -ENXIO;
	return xc_trace_write(path);
}

int xc_trace_dump(const char *path)
{
	return XC_GUARDED(trace_dump(path));
}

/* fork.c: the ring registry (and a dump's arrays) are consistent in the child. */
void xc_trace_fork_prepare(void)
{
	pthread_mutex_lock(&dump_lock);
	pthread_mutex_lock(&rings_lock);
}

void xc_trace_fork_parent(void)
{
	pthread_mutex_unlock(&rings_lock);
	pthread_mutex_unlock(&dump_lock);
}

/* In the child: only the forking thread is left to own a ring; tracing stops with the runtime. */
void xc_trace_fork_child(void)
{
	for (struct xc_trace_ring *r = thread_rings; r; r = r->next)
		if (r != my_ring)
			r->in_use = false;
	pthread_mutex_unlock(&rings_lock);
	pthread_mutex_unlock(&dump_lock);
	xc_trace_stop();
}
