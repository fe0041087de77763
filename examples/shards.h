// SPDX-License-Identifier: MIT
/*
 * shards.h - the application that epoll-shards.c and uring-shards.c both
 * run; each of those files is one event loop for it.
 *
 * A table of counters split over shards, one shard thread per CPU: key k
 * belongs to shard k % nshards, and only that shard's thread touches its
 * counter, so no counter needs a lock or an atomic. Each shard has a client
 * thread that sends it requests ("count key k") over a socket pair. A shard
 * counts a key of its own at once; a key of another shard's goes there with
 * a nowait xc_call_single(), which runs on the owner's thread inside its
 * loop, and the owner sends the count back the same way, to the shard whose
 * client asked. No loop ever waits for another.
 *
 * The shard threads are libxcall's workers (xc_opts.attach): every CPU of
 * the runtime is a shard's, so libxcall starts no thread of its own.
 *
 * Every request is checked: answered once, by the shard that owns its key.
 * So are the totals: each key's count is the number of requests for it, and
 * libxcall ran on each CPU exactly the calls the shards sent there.
 */
#ifndef SHARDS_H
#define SHARDS_H

#include <xcall.h>

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define NKEYS            1024
#define DEFAULT_REQUESTS 20000
#define MAX_AUTO_SHARDS  8	/* without -s: at most this many CPUs */
/*
 * Requests a client keeps in flight. So few answers are ever queued that
 * they fit in the socket's buffer, and a shard's send never has to wait.
 */
#define WINDOW           16
#define ANSWER_TIMEOUT_S 10	/* a client gives up on a request after this long */
#define ERRORS_SHOWN     5	/* per client: the rest are only counted */

/* A request, and its answer: the same message, completed by the key's owner. */
struct msg {
	uint32_t client;	/* who asked; the answer goes back to that client's shard */
	uint32_t id;		/* the client's request number */
	uint32_t key;
	uint32_t count;		/* answer: the key's count, this request included */
	int32_t shard;		/* answer: the shard that counted it */
};

/* A request on its way; the shard that got it from its client frees it once answered. */
struct job {
	struct shard *origin;
	struct msg msg;
};

struct loop;			/* each example's event loop */

struct shard {
	int index, cpu;
	int fd;			/* this shard's end of its client's socket pair */
	pthread_t thread;
	struct loop *loop;
	int start_err;		/* 0: attached and in its loop */
	/* the shard's own: only its thread writes them; main reads them after the join */
	bool stop;
	uint32_t count[NKEYS];	/* only the keys it owns are ever counted */
	uint64_t received, local, forwarded, served, errors;
	struct xc_stats stats;	/* libxcall's counters for its CPU, at the end */
};

struct client {
	int index, fd;
	pthread_t thread;
	uint32_t n;		/* requests to send */
	uint32_t *keys;		/* by request id */
	unsigned char *answered;	/* by request id */
	uint32_t sent[NKEYS];	/* requests per key */
	uint64_t answers, errors;
};

static const char *prog;
static struct shard *shards;
static struct client *clients;
static int nshards;
static pthread_barrier_t started;

/* The shard whose thread runs this code, or NULL: what a call function runs on. */
static _Thread_local struct shard *self;

/*
 * Each example's own: the shard thread (shard_thread() with its loop), the
 * loop opened on that thread (attached there), run until the shard stops,
 * then closed (detached); and how the loop sends an answer (it frees the job).
 */
static void *shard_main(void *arg);
static int loop_open(struct shard *s, struct loop *l);
static void loop_run(struct shard *s, struct loop *l);
static void loop_close(struct shard *s, struct loop *l);
static void reply(struct shard *s, struct job *job);

static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "%s: ", prog);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* @ret, after saying what failed if it is a negative errno. */
static int shard_err(struct shard *s, const char *what, int ret)
{
	if (ret < 0)
		say("shard %d (CPU %d): %s: %s", s->index, s->cpu, what, strerror(-ret));
	return ret < 0 ? ret : 0;
}

static int owner_of(uint32_t key)
{
	return (int)(key % (uint32_t)nshards);
}

/* On the key's owner: its counters are its own. */
static void count_key(struct shard *s, struct job *job)
{
	job->msg.count = ++s->count[job->msg.key];
	job->msg.shard = s->index;
}

static void forward(struct shard *s, int to, xc_func_t fn, struct job *job)
{
	int cpu = shards[to].cpu;
	int ret = xc_call_single(cpu, fn, job, 0);

	/*
	 * No memory for a nowait call's descriptor: a waiting call needs none.
	 * It runs this shard's own calls while it waits, so two shards waiting
	 * on each other both go on.
	 */
	if (ret == -ENOMEM)
		ret = xc_call_single(cpu, fn, job, XC_WAIT);
	if (ret) {
		say("shard %d: a call to shard %d (CPU %d): %s", s->index, to, cpu, strerror(-ret));
		s->errors++;
		free(job);	/* its client reports the missing answer */
	}
}

/* Runs on the shard whose client asked: only that thread may use its loop. */
static void deliver(void *arg)
{
	reply(self, arg);
}

/* Runs on the key's owner. */
static void serve(void *arg)
{
	struct job *job = arg;

	count_key(self, job);
	self->served++;
	forward(self, job->origin->index, deliver, job);
}

/* A request from this shard's client: counted here, or sent to its key's owner. */
static void handle_request(struct shard *s, const struct msg *req)
{
	struct job *job;
	int owner;

	s->received++;
	if (req->key >= NKEYS) {
		say("shard %d: request %u: key %u out of range", s->index, req->id, req->key);
		s->errors++;
		return;
	}
	job = malloc(sizeof(*job));
	if (!job) {
		shard_err(s, "a request", -ENOMEM);
		s->errors++;
		return;
	}
	job->origin = s;
	job->msg = *req;
	owner = owner_of(req->key);
	if (owner == s->index) {
		s->local++;
		count_key(s, job);
		reply(s, job);
	} else {
		s->forwarded++;
		forward(s, owner, serve, job);
	}
}

/* Runs on the shard's thread, like everything that reads the flag. */
static void stop_shard(void *arg)
{
	self->stop = true;
}

/* A shard's thread, @l its loop. */
static void *shard_thread(struct shard *s, struct loop *l)
{
	cpu_set_t one;
	int err;

	self = s;
	s->loop = l;
	/* xc_worker_attach() wants the thread pinned to its CPU alone */
	CPU_ZERO(&one);
	CPU_SET(s->cpu, &one);
	err = shard_err(s, "pinning the thread", -pthread_setaffinity_np(pthread_self(), sizeof(one), &one));
	if (!err)
		err = loop_open(s, l);
	/* main goes on once every shard is in its loop or gave up */
	s->start_err = err;
	pthread_barrier_wait(&started);
	if (!err)
		loop_run(s, l);
	loop_close(s, l);
	return NULL;
}

static void client_error(struct client *c, const char *fmt, ...)
{
	va_list ap;

	if (c->errors++ >= ERRORS_SHOWN)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "%s: client %d: ", prog, c->index);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static void check_answer(struct client *c, const struct msg *m, uint32_t sent)
{
	if (m->client != (uint32_t)c->index || m->id >= sent || m->key != c->keys[m->id])
		client_error(c, "an answer to no request of mine (client %u, id %u, key %u)",
			     m->client, m->id, m->key);
	else if (c->answered[m->id]++)
		client_error(c, "request %u answered twice", m->id);
	else if (m->shard != owner_of(m->key))
		client_error(c, "request %u: key %u counted by shard %d, owned by shard %d",
			     m->id, m->key, m->shard, owner_of(m->key));
}

static void *client_main(void *arg)
{
	struct client *c = arg;
	unsigned seed = (unsigned)c->index + 1;
	uint32_t sent = 0;
	struct msg m;
	ssize_t n;

	while (c->answers < c->n) {
		while (sent < c->n && sent - c->answers < WINDOW) {
			m = (struct msg){ .client = (uint32_t)c->index, .id = sent,
					  .key = (uint32_t)rand_r(&seed) % NKEYS };
			c->keys[sent] = m.key;
			if (send(c->fd, &m, sizeof(m), MSG_NOSIGNAL) != sizeof(m)) {
				client_error(c, "send: %s", strerror(errno));
				goto out;
			}
			c->sent[m.key]++;
			sent++;
		}
		n = recv(c->fd, &m, sizeof(m), 0);
		if (n != sizeof(m)) {
			if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
				client_error(c, "no answer in %d s; %llu of %u answered", ANSWER_TIMEOUT_S,
					     (unsigned long long)c->answers, c->n);
			else
				client_error(c, "recv: %s", n < 0 ? strerror(errno) : "short or no message");
			goto out;
		}
		check_answer(c, &m, sent);
		c->answers++;
	}
out:
	close(c->fd);		/* the shard sees its client is done */
	return NULL;
}

static int check_results(void)
{
	uint64_t forwarded = 0, served = 0;
	int bad = 0;

	for (int i = 0; i < nshards; i++) {
		struct client *c = &clients[i];
		struct shard *s = &shards[i];
		uint32_t missing = 0;

		for (uint32_t id = 0; id < c->n; id++)
			missing += !c->answered[id];
		if (c->errors || missing) {
			say("client %d: %llu errors, %u requests unanswered", i,
			    (unsigned long long)c->errors, missing);
			bad++;
		}
		if (s->errors || s->received != c->n || s->local + s->forwarded != s->received) {
			say("shard %d: %llu errors; %llu requests received of %u, %llu local + %llu forwarded",
			    i, (unsigned long long)s->errors, (unsigned long long)s->received, c->n,
			    (unsigned long long)s->local, (unsigned long long)s->forwarded);
			bad++;
		}
		/* each request this shard forwarded came back in one call; plus the stop */
		if (s->stats.calls != s->served + s->forwarded + 1) {
			say("shard %d: libxcall ran %llu calls on CPU %d, the shards sent %llu",
			    i, (unsigned long long)s->stats.calls, s->cpu,
			    (unsigned long long)(s->served + s->forwarded + 1));
			bad++;
		}
		forwarded += s->forwarded;
		served += s->served;
	}
	if (forwarded != served) {
		say("%llu requests forwarded, %llu served for other shards",
		    (unsigned long long)forwarded, (unsigned long long)served);
		bad++;
	}
	for (uint32_t key = 0; key < NKEYS; key++) {
		uint64_t sent = 0, counted = 0;

		for (int i = 0; i < nshards; i++) {
			sent += clients[i].sent[key];
			counted += shards[i].count[key];
		}
		if (counted != sent || shards[owner_of(key)].count[key] != counted) {
			say("key %u: %llu requests, counted %llu times (%u by its owner)", key,
			    (unsigned long long)sent, (unsigned long long)counted,
			    shards[owner_of(key)].count[key]);
			bad++;
		}
	}
	return bad;
}

static void print_summary(const char *cpus, uint32_t n)
{
	printf("%s: %d shard%s on CPU%s %s, %u requests from each shard's client, %d keys\n",
	       prog, nshards, nshards > 1 ? "s" : "", nshards > 1 ? "s" : "", cpus, n, NKEYS);
	printf("%5s %4s %9s %9s %9s %9s | %9s %10s %12s %9s %9s\n", "shard", "cpu", "requests",
	       "local", "forwarded", "served", "calls", "kicks_sent", "kicks_elided", "sleeps", "wakeups");
	for (int i = 0; i < nshards; i++) {
		struct shard *s = &shards[i];
		struct xc_stats *st = &s->stats;

		printf("%5d %4d %9llu %9llu %9llu %9llu | %9llu %10llu %12llu %9llu %9llu\n", i, s->cpu,
		       (unsigned long long)s->received, (unsigned long long)s->local,
		       (unsigned long long)s->forwarded, (unsigned long long)s->served,
		       (unsigned long long)st->calls, (unsigned long long)st->kicks_sent,
		       (unsigned long long)st->kicks_elided, (unsigned long long)st->sleeps,
		       (unsigned long long)st->wakeups);
	}
}

static int usage(void)
{
	fprintf(stderr, "usage: %s [-n requests per shard] [-s shards]\n"
		"  default: %d requests; a shard on each CPU this process may run on, at most %d\n",
		prog, DEFAULT_REQUESTS, MAX_AUTO_SHARDS);
	return 2;
}

static long arg_long(const char *s, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	return errno || end == s || *end || v < min || v > max ? -1 : v;
}

/* The CPUs of the first @want shards: the lowest this process may run on. */
static int pick_cpus(int want, char *list, size_t size)
{
	cpu_set_t mine, set;
	int avail;

	if (sched_getaffinity(0, sizeof(mine), &mine)) {
		say("sched_getaffinity: %s", strerror(errno));
		return -1;
	}
	avail = CPU_COUNT(&mine);
	if (!want)
		want = avail < MAX_AUTO_SHARDS ? avail : MAX_AUTO_SHARDS;
	if (want > avail) {
		say("%d shards asked for, but this process may run on %d CPUs", want, avail);
		return -1;
	}
	shards = calloc((size_t)want, sizeof(*shards));
	clients = calloc((size_t)want, sizeof(*clients));
	if (!shards || !clients) {
		say("%s", strerror(ENOMEM));
		return -1;
	}
	CPU_ZERO(&set);
	for (int cpu = 0; nshards < want; cpu++) {
		if (!CPU_ISSET(cpu, &mine))
			continue;
		shards[nshards].index = nshards;
		shards[nshards++].cpu = cpu;
		CPU_SET(cpu, &set);
	}
	return xc_cpulist_format(&set, list, size) < 0 ? -1 : 0;
}

/* A socket pair per shard: one end its loop's, the other its client's. */
static int open_sockets(uint32_t n)
{
	struct timeval tv = { .tv_sec = ANSWER_TIMEOUT_S };
	int sv[2];

	for (int i = 0; i < nshards; i++) {
		struct client *c = &clients[i];

		c->index = i;
		c->n = n;
		c->keys = calloc(n, sizeof(*c->keys));
		c->answered = calloc(n, 1);
		if (!c->keys || !c->answered) {
			say("%s", strerror(ENOMEM));
			return -1;
		}
		/* SEQPACKET: each message is read whole, as it was sent */
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) ||
		    setsockopt(sv[1], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv))) {
			say("socket pair: %s", strerror(errno));
			return -1;
		}
		shards[i].fd = sv[0];
		c->fd = sv[1];
	}
	return 0;
}

static void start(pthread_t *t, void *(*fn)(void *), void *arg)
{
	int err = pthread_create(t, NULL, fn, arg);

	if (err) {
		say("pthread_create: %s", strerror(err));
		exit(1);
	}
}

/* Runs the whole program: returns its exit status. */
static int shards_main(int argc, char **argv, const char *name)
{
	struct xc_opts opts = { 0 };
	char cpus[1024];
	long n = DEFAULT_REQUESTS, want = 0;
	int opt, ret, up = 0, bad;

	prog = name;
	while ((opt = getopt(argc, argv, "n:s:h")) != -1) {
		if (opt == 'n' && (n = arg_long(optarg, 1, 10000000)) > 0)
			continue;
		if (opt == 's' && (want = arg_long(optarg, 1, CPU_SETSIZE)) > 0)
			continue;
		return usage();
	}
	if (optind != argc)
		return usage();
	if (pick_cpus((int)want, cpus, sizeof(cpus)))
		return 1;
	/* every CPU is a shard's: libxcall starts no thread, and calls run in the shards' loops */
	opts.cpus = cpus;
	opts.attach = cpus;
	ret = xc_init(&opts);
	if (ret) {
		say("xc_init: %s", strerror(-ret));
		return 1;
	}
	if (open_sockets((uint32_t)n)) {
		xc_exit();
		return 1;
	}

	pthread_barrier_init(&started, NULL, (unsigned)nshards + 1);
	for (int i = 0; i < nshards; i++)
		start(&shards[i].thread, shard_main, &shards[i]);
	pthread_barrier_wait(&started);
	for (int i = 0; i < nshards; i++)
		up += !shards[i].start_err;
	/* the clients start once every shard takes calls: a call to a CPU not attached yet fails */
	for (int i = 0; i < nshards && up == nshards; i++)
		start(&clients[i].thread, client_main, &clients[i]);
	for (int i = 0; i < nshards; i++) {
		if (up == nshards)
			pthread_join(clients[i].thread, NULL);
		else
			close(clients[i].fd);
	}
	/* a waiting call: once it returns, the shard has seen the flag */
	for (int i = 0; i < nshards; i++) {
		if (shards[i].start_err)
			continue;
		ret = xc_call_single(shards[i].cpu, stop_shard, NULL, XC_WAIT);
		if (ret)
			say("stopping shard %d: %s", i, strerror(-ret));
	}
	for (int i = 0; i < nshards; i++) {
		pthread_join(shards[i].thread, NULL);
		close(shards[i].fd);
		xc_stats_get(shards[i].cpu, &shards[i].stats);	/* a detached CPU keeps its counters */
	}
	ret = xc_exit();
	if (ret)
		say("xc_exit: %s", strerror(-ret));
	pthread_barrier_destroy(&started);

	if (up < nshards) {
		say("%d of %d shards did not start", nshards - up, nshards);
		bad = 1;
	} else {
		print_summary(cpus, (uint32_t)n);
		bad = check_results() + (ret != 0);
		if (bad)
			printf("%s: FAILED: %d checks\n", prog, bad);
		else
			printf("%s: every request answered once, by the shard that owns its key; the "
			       "counts and libxcall's calls add up\n", prog);
	}
	for (int i = 0; i < nshards; i++) {
		free(clients[i].keys);
		free(clients[i].answered);
	}
	free(clients);
	free(shards);
	return bad ? 1 : 0;
}

#endif /* SHARDS_H */
