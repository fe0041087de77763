/*
 * worker-names: libxcall's worker threads are named "xcall/N" for CPU N, as
 * /proc/self/task/TID/comm shows them: exactly one thread per CPU of the
 * runtime, the one that runs that CPU's calls (its gettid() inside a call),
 * and it stays the CPU's worker across xc_cpu_offline() / xc_cpu_online().
 * The application's threads keep their names: the main thread, and an
 * attached thread, which becomes its CPU's worker and is named as the
 * application named it (no "xcall/N" thread exists for that CPU); after
 * xc_exit() no "xcall/" thread is left.
 */
#include "test.h"
#include <errno.h>
#include <stdatomic.h>
#include <sys/syscall.h>

/*
 * The comm of thread @tid, without its newline, into @buf (16 bytes); empty
 * if the thread is gone: one that pthread_join() has seen exit may still
 * be listed in /proc/self/task a moment, and its comm then reads nothing.
 */
static void comm_of(int tid, char *buf)
{
	char path[64];
	FILE *f;

	buf[0] = 0;
	snprintf(path, sizeof(path), "/proc/self/task/%d/comm", tid);
	f = fopen(path, "r");
	if (!f) {
		CHECK(errno == ENOENT || errno == ESRCH);
		return;
	}
	if (!fgets(buf, 16, f))
		buf[0] = 0;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
}

/*
 * How many threads of the process are named @name (whose name starts with
 * it, if @prefix); the last one's id in *tid.
 */
static int named_as(const char *name, bool prefix, int *tid)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	char comm[16];
	int n = 0;

	CHECK(d != NULL);
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		comm_of(atoi(e->d_name), comm);
		if (prefix ? !strncmp(comm, name, strlen(name)) : !strcmp(comm, name)) {
			n++;
			if (tid)
				*tid = atoi(e->d_name);
		}
	}
	closedir(d);
	return n;
}

static int named(const char *name, int *tid)
{
	return named_as(name, false, tid);
}

/* Threads whose name starts with "xcall/". */
static int xcall_named(void)
{
	return named_as("xcall/", true, NULL);
}

static void my_tid(void *arg)
{
	*(int *)arg = (int)syscall(SYS_gettid);
}

static _Atomic int attached, stop;

static void *shard(void *arg)
{
	int cpu = *(int *)arg;

	CHECK(pthread_setname_np(pthread_self(), "my-shard") == 0);
	t_attach_pinned(cpu);
	atomic_store(&attached, 1);
	while (!atomic_load(&stop))
		CHECK(xc_poll() >= 0);
	CHECK_RET(xc_worker_detach(), 0);
	return NULL;
}

int main(void)
{
	int cpus[CPU_SETSIZE], n, tid, tid2;
	char name[16], main_name[16], list[32];

	comm_of((int)syscall(SYS_gettid), main_name);
	CHECK(main_name[0]);
	CHECK_RET(xc_init(NULL), 0);
	n = t_cpus(cpus);
	CHECK(n >= 1);
	CHECK(xcall_named() == n);
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "xcall/%d", cpus[i]);
		CHECK(named(name, &tid) == 1);
		CHECK_RET(xc_call_single(cpus[i], my_tid, &tid2, XC_WAIT), 0);
		CHECK(tid2 == tid);	/* the thread so named runs the CPU's calls */
		if (n >= 2 && i == n - 1) {
			/* one thread for the runtime's life: the same after offline and online */
			CHECK_RET(xc_cpu_offline(cpus[i]), 0);
			CHECK_RET(xc_cpu_online(cpus[i]), 0);
			CHECK_RET(xc_call_single(cpus[i], my_tid, &tid2, XC_WAIT), 0);
			CHECK(tid2 == tid && named(name, NULL) == 1);
		}
	}
	comm_of((int)syscall(SYS_gettid), name);
	CHECK(!strcmp(name, main_name));	/* the caller's own name untouched */
	CHECK_RET(xc_exit(), 0);
	WAIT_UNTIL(xcall_named() == 0);

	/* an attached CPU: the application's thread, under its own name */
	int a = t_attach_first_cpu(list, sizeof(list));
	struct xc_opts o = { .attach = list };
	pthread_t th;

	CHECK_RET(xc_init(&o), 0);
	snprintf(name, sizeof(name), "xcall/%d", a);
	CHECK(named(name, NULL) == 0);
	CHECK(pthread_create(&th, NULL, shard, &a) == 0);
	WAIT_UNTIL(atomic_load(&attached));
	CHECK(named("my-shard", &tid) == 1);
	CHECK_RET(xc_call_single(a, my_tid, &tid2, XC_WAIT), 0);
	CHECK(tid2 == tid);
	CHECK(named(name, NULL) == 0);
	atomic_store(&stop, 1);
	pthread_join(th, NULL);
	CHECK_RET(xc_exit(), 0);
	return T_PASS;
}
