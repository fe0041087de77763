// SPDX-License-Identifier: MIT
/*
 * uring-shards.c - epoll-shards.c on io_uring: one shard thread per CPU,
 * pinned there and attached as its CPU's worker (xc_worker_attach), waits
 * in its own ring. Its client's socket is read and written through the ring,
 * and a multishot poll on libxcall's eventfd for the CPU wakes the ring when
 * a call comes while the shard sleeps. The calls other shards send run right
 * here, in xc_poll(), so they may use the ring as the loop does: only this
 * thread ever touches it. The application (the keys, the forwarding between
 * shards, the clients and the checks) is in shards.h.
 *
 *   build/examples/uring-shards [-n requests per shard] [-s shards]
 *
 * Needs liburing and Linux 5.13 or later (multishot poll). It checks its own
 * result: exit status 0 when every request was answered once, by the shard
 * that owns its key, and every count adds up; 77 where io_uring is off.
 */
#include "shards.h"

#include <liburing.h>
#include <poll.h>

#define RING_ENTRIES 256

/* What a completion is for: one of these, or else the struct job whose answer was sent. */
#define TAG_KICK   1	/* the multishot poll on xc_worker_fd() */
#define TAG_REMOVE 2	/* its removal, at the end */
#define TAG_RECV   3	/* the receive waiting on the client's socket */

struct loop {
	struct io_uring ring;
	bool ring_up, attached, kick_armed, closing;
	unsigned inflight;	/* operations in the ring that still owe their last completion */
	struct msg rx;		/* the receive's buffer */
};

/* An SQE; with the submission queue full, what is in it goes first. */
static struct io_uring_sqe *sqe_get(struct shard *s)
{
	struct io_uring *ring = &s->loop->ring;
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe && io_uring_submit(ring) >= 0)
		sqe = io_uring_get_sqe(ring);
	if (!sqe) {
		shard_err(s, "io_uring_get_sqe", -EBUSY);
		s->errors++;
	}
	return sqe;
}

static void queued(struct loop *l, struct io_uring_sqe *sqe, uint64_t tag)
{
	io_uring_sqe_set_data64(sqe, tag);
	l->inflight++;
}

static void arm_kick(struct shard *s, struct loop *l)
{
	struct io_uring_sqe *sqe = sqe_get(s);

	if (!sqe)
		return;
	io_uring_prep_poll_multishot(sqe, xc_worker_fd(), POLLIN);
	queued(l, sqe, TAG_KICK);
	l->kick_armed = true;
}

static void arm_recv(struct shard *s, struct loop *l)
{
	struct io_uring_sqe *sqe = sqe_get(s);

	if (!sqe)
		return;
	io_uring_prep_recv(sqe, s->fd, &l->rx, sizeof(l->rx), 0);
	queued(l, sqe, TAG_RECV);
}

/* The job stays alive until the send completes: the ring reads the answer from it. */
static void reply(struct shard *s, struct job *job)
{
	struct io_uring_sqe *sqe = sqe_get(s);

	if (!sqe) {
		free(job);
		return;
	}
	io_uring_prep_send(sqe, s->fd, &job->msg, sizeof(job->msg), MSG_NOSIGNAL);
	queued(s->loop, sqe, (uint64_t)(uintptr_t)job);
}

static void completed(struct shard *s, struct loop *l, const struct io_uring_cqe *cqe)
{
	bool last = !(cqe->flags & IORING_CQE_F_MORE);
	struct msg req;

	l->inflight -= last;
	switch (cqe->user_data) {
	case TAG_KICK:
		/* nothing to read: xc_worker_sleep_end() does that */
		if (!last)
			break;
		l->kick_armed = false;
		if (l->closing || cqe->res == -ECANCELED)
			break;
		if (cqe->res < 0) {
			shard_err(s, "poll on xc_worker_fd()", cqe->res);
			s->errors++;
			break;
		}
		arm_kick(s, l);		/* the kernel may end a multishot poll (a full CQ): again */
		break;
	case TAG_REMOVE:
		break;
	case TAG_RECV:
		if (cqe->res == sizeof(l->rx)) {
			req = l->rx;
			arm_recv(s, l);		/* its buffer is free again */
			handle_request(s, &req);
		} else if (cqe->res != 0) {	/* 0: the client is done */
			shard_err(s, "recv", cqe->res < 0 ? cqe->res : -EIO);
			s->errors++;
		}
		break;
	default:
		if (cqe->res != sizeof(struct msg)) {
			shard_err(s, "send", cqe->res < 0 ? cqe->res : -EIO);
			s->errors++;
		}
		free((struct job *)(uintptr_t)cqe->user_data);
		break;
	}
}

static void reap(struct shard *s, struct loop *l)
{
	struct io_uring_cqe *cqe, c;

	while (io_uring_peek_cqe(&l->ring, &cqe) == 0) {
		c = *cqe;
		io_uring_cqe_seen(&l->ring, cqe);	/* first: what the completion runs may use the ring */
		completed(s, l, &c);
	}
}

static int loop_open(struct shard *s, struct loop *l)
{
	int err = shard_err(s, "io_uring_queue_init", io_uring_queue_init(RING_ENTRIES, &l->ring, 0));

	if (err)
		return err;
	l->ring_up = true;
	err = shard_err(s, "xc_worker_attach", xc_worker_attach(s->cpu));
	if (err)
		return err;
	l->attached = true;
	arm_kick(s, l);
	arm_recv(s, l);
	if (s->errors)
		return -EBUSY;
	return shard_err(s, "io_uring_submit", io_uring_submit(&l->ring));
}

/* One wait for a completion, for the end, when nothing sends calls any more. */
static int wait_one(struct shard *s, struct loop *l)
{
	int ret = io_uring_submit_and_wait(&l->ring, 1);

	if (ret < 0 && ret != -EINTR) {
		shard_err(s, "io_uring_submit_and_wait", ret);
		s->errors++;
		return ret;
	}
	reap(s, l);
	return 0;
}

static void loop_close(struct shard *s, struct loop *l)
{
	struct io_uring_sqe *sqe;

	l->closing = true;
	/* the detach closes the eventfd: the poll on it goes first */
	if (l->kick_armed && (sqe = sqe_get(s))) {
		io_uring_prep_poll_remove(sqe, TAG_KICK);
		queued(l, sqe, TAG_REMOVE);
	}
	while (l->kick_armed && !wait_one(s, l))
		;
	/* calls still queued run here, and may still reply through the ring */
	if (l->attached)
		shard_err(s, "xc_worker_detach", xc_worker_detach());
	/* the answers in flight, and the receive, which ends as the client closes its end */
	while (l->inflight && !wait_one(s, l))
		;
	if (l->ring_up)
		io_uring_queue_exit(&l->ring);
}

static void loop_run(struct shard *s, struct loop *l)
{
	int ret;

	for (;;) {
		xc_poll();		/* the calls to this CPU: requests and answers from other shards */
		if (s->stop)
			break;
		/*
		 * From here on a call to this CPU writes the eventfd, which the
		 * poll turns into a completion. If one came already, submit what
		 * is queued and go on without waiting.
		 */
		if (xc_worker_sleep_begin() == 0)
			ret = io_uring_submit_and_wait(&l->ring, 1);
		else
			ret = io_uring_submit(&l->ring);
		xc_worker_sleep_end();
		if (ret < 0 && ret != -EINTR) {
			shard_err(s, "io_uring_submit", ret);
			s->errors++;
			return;
		}
		reap(s, l);
	}
}

static void *shard_main(void *arg)
{
	struct loop l = { 0 };

	return shard_thread(arg, &l);
}

int main(int argc, char **argv)
{
	struct io_uring ring;
	int err = io_uring_queue_init(4, &ring, 0);

	/* io_uring may be off (kernel.io_uring_disabled) or filtered (seccomp) */
	if (err) {
		fprintf(stderr, "uring-shards: io_uring_queue_init: %s: no io_uring here, nothing to run\n",
			strerror(-err));
		return 77;
	}
	io_uring_queue_exit(&ring);
	return shards_main(argc, argv, "uring-shards");
}
