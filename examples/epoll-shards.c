// SPDX-License-Identifier: MIT
/*
 * epoll-shards.c - a thread-per-core server whose threads are libxcall's
 * workers. One shard thread per CPU, pinned there, runs one epoll loop: its
 * client's socket and, beside it, libxcall's eventfd for its CPU. The thread
 * attaches to its CPU (xc_worker_attach), so the calls other shards send to
 * it run right here, in xc_poll(), between the loop's own events: no locks,
 * no thread of libxcall's in between. The application itself (the keys, the
 * forwarding between shards, the clients and the checks) is in shards.h.
 *
 *   build/examples/epoll-shards [-n requests per shard] [-s shards]
 *
 * It checks its own result: exit status 0 when every request was answered
 * once, by the shard that owns its key, and every count adds up.
 */
#include "shards.h"

#include <sys/epoll.h>

#define BATCH 32	/* requests read at a time: calls and the other events get their turn */

struct loop {
	int ep;
	int kick_fd;	/* xc_worker_fd(): readable when a call came while the loop slept */
	bool attached;
};

static void reply(struct shard *s, struct job *job)
{
	/* the client's WINDOW keeps the socket buffer from filling: no need to wait for EPOLLOUT */
	ssize_t n = send(s->fd, &job->msg, sizeof(job->msg), MSG_DONTWAIT | MSG_NOSIGNAL);

	if (n != sizeof(job->msg)) {
		shard_err(s, "send", n < 0 ? -errno : -EIO);
		s->errors++;
	}
	free(job);
}

static void read_requests(struct shard *s, struct loop *l)
{
	struct msg req;

	for (int i = 0; i < BATCH; i++) {
		ssize_t n = recv(s->fd, &req, sizeof(req), MSG_DONTWAIT);

		if (n == sizeof(req)) {
			handle_request(s, &req);
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n != 0) {
			shard_err(s, "recv", n < 0 ? -errno : -EIO);
			s->errors++;
		}
		/* the client is done (or broken): its socket would read as ready for ever */
		epoll_ctl(l->ep, EPOLL_CTL_DEL, s->fd, NULL);
		return;
	}
}

static int watch(struct shard *s, struct loop *l, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return shard_err(s, "epoll_ctl", epoll_ctl(l->ep, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0);
}

static int loop_open(struct shard *s, struct loop *l)
{
	int err;

	l->ep = epoll_create1(EPOLL_CLOEXEC);
	if (l->ep < 0)
		return shard_err(s, "epoll_create1", -errno);
	err = shard_err(s, "xc_worker_attach", xc_worker_attach(s->cpu));
	if (err)
		return err;
	l->attached = true;
	l->kick_fd = xc_worker_fd();
	err = watch(s, l, l->kick_fd);
	if (!err)
		err = watch(s, l, s->fd);
	return err;
}

static void loop_close(struct shard *s, struct loop *l)
{
	if (l->attached) {
		/* the detach closes the eventfd: out of the epoll set first */
		epoll_ctl(l->ep, EPOLL_CTL_DEL, l->kick_fd, NULL);
		/* calls still queued run here, and may still reply on the socket */
		shard_err(s, "xc_worker_detach", xc_worker_detach());
	}
	if (l->ep >= 0)
		close(l->ep);
}

static void loop_run(struct shard *s, struct loop *l)
{
	struct epoll_event ev[16];
	int n, timeout;

	for (;;) {
		xc_poll();		/* the calls to this CPU: requests and answers from other shards */
		if (s->stop)
			break;
		/*
		 * From here on a call to this CPU writes kick_fd, which ends the
		 * epoll_wait. If one came already, only look at the socket
		 * (timeout 0): a stream of calls must not starve the client.
		 */
		timeout = xc_worker_sleep_begin() == 0 ? -1 : 0;
		n = epoll_wait(l->ep, ev, 16, timeout);
		xc_worker_sleep_end();	/* reads kick_fd too: the loop never has to */
		if (n < 0 && errno != EINTR) {
			shard_err(s, "epoll_wait", -errno);
			s->errors++;
			return;
		}
		for (int i = 0; i < n; i++)
			if (ev[i].data.fd == s->fd)
				read_requests(s, l);
	}
}

static void *shard_main(void *arg)
{
	struct loop l = { .ep = -1, .kick_fd = -1 };

	return shard_thread(arg, &l);
}

int main(int argc, char **argv)
{
	return shards_main(argc, argv, "epoll-shards");
}
