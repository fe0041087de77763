/*
 * cxx: libxcall from C++, as a thread-per-core program would use it: a
 * captureless lambda as the function, std::atomic state, a waiting call that
 * runs on the CPU asked for, a nowait call to every CPU, a call to a mask, an
 * async descriptor (with its completion callback, a lambda) and a work item,
 * each run exactly once; a report hook with its context (a C++ object); bad arguments get
 * their errno; a std::thread of the program attached as a CPU's worker runs
 * the calls to that CPU in its own loop. Built with each C++ compiler and
 * standard by tests/api/check.sh.
 */
#include <xcall.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include <pthread.h>

#define CHECK(cond) do {								\
	if (!(cond)) {									\
		std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);	\
		std::exit(1);								\
	}										\
} while (0)

static std::atomic<int> ran{0}, wrong{0};

static void count(void *arg)
{
	int want = static_cast<int>(reinterpret_cast<long>(arg));

	if (want >= 0 && sched_getcpu() != want)
		wrong++;
	ran++;
}

int main()
{
	CHECK(xc_init(nullptr) == 0);
	cpu_set_t online;
	int n = xc_online_mask(&online), last = -1;

	CHECK(n >= 1);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &online))
			last = c;
	auto lambda = [](void *arg) { count(arg); };
	CHECK(xc_call_single(last, lambda, reinterpret_cast<void *>(static_cast<long>(last)), XC_WAIT) == 0);
	CHECK(ran == 1 && wrong == 0);
	CHECK(xc_call_all(count, reinterpret_cast<void *>(-1L), XC_WAIT) == n);
	CHECK(ran == 1 + n);
	CHECK(xc_call_many(&online, count, reinterpret_cast<void *>(-1L), XC_WAIT) == n);
	xc_call async{};
	std::atomic<int> done_ran{0};
	async.fn = count;
	async.arg = reinterpret_cast<void *>(static_cast<long>(last));
	async.on_done.fn = [](void *arg) { ++*static_cast<std::atomic<int> *>(arg); };
	async.on_done.arg = &done_ran;
	CHECK(xc_call_async(last, &async) == 0);
	while (done_ran.load() == 0)
		;
	CHECK(xc_call_done(&async) && done_ran == 1);
	xc_work work{};
	work.fn = count;
	work.arg = reinterpret_cast<void *>(static_cast<long>(last));
	CHECK(xc_queue_work(last, &work) == 0);
	while (xc_work_pending(&work))
		;
	CHECK(xc_call_single(last, count, reinterpret_cast<void *>(-1L), XC_WAIT) == 0);	/* behind the work item */
	CHECK(ran == 4 + 2 * n);
	CHECK(wrong == 0);
	CHECK(xc_call_single(last, nullptr, nullptr, 0) == -EINVAL);
	CHECK(xc_call_single(CPU_SETSIZE, count, nullptr, 0) == -ENXIO);
	CHECK(xc_call_single(last, count, nullptr, 1u << 20) == -EINVAL);
	xc_stats st;
	CHECK(xc_stats_get(-1, &st) == 0 && st.calls + st.work_run == static_cast<uint64_t>(ran.load()));
	CHECK(xc_exit() == 0);
	CHECK(xc_call_single(last, count, nullptr, 0) == -ENXIO);

	/* the program's own thread on the last CPU, polling in its loop */
	std::string attach = std::to_string(last);
	xc_opts o{};
	o.attach = attach.c_str();
	std::string said;
	o.report = [](void *ctx, const char *line) { *static_cast<std::string *>(ctx) += line; };
	o.report_ctx = &said;
	CHECK(xc_opts_set(&o, "XCALL_POLL_NS", "soon") == -EINVAL);
	CHECK(said.find("XCALL_POLL_NS") != std::string::npos);
	CHECK(xc_init(&o) == 0);
	std::atomic<bool> stop{false}, attached{false};
	std::thread shard([&] {
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(last, &one);
		CHECK(pthread_setaffinity_np(pthread_self(), sizeof(one), &one) == 0);
		CHECK(xc_worker_attach(last) == 0);
		attached = true;
		while (!stop)
			CHECK(xc_poll() >= 0);
		CHECK(xc_worker_detach() == 0);
	});
	while (!attached)
		;
	ran = 0;
	CHECK(xc_call_single(last, count, reinterpret_cast<void *>(static_cast<long>(last)), XC_WAIT) == 0);
	CHECK(ran == 1 && wrong == 0);
	stop = true;
	shard.join();
	CHECK(xc_call_single(last, count, nullptr, 0) == -ENXIO);	/* detached: offline */
	CHECK(xc_exit() == 0);
	return 0;
}
