/*
 * follow-cpuset: the process runs in a cgroup cpuset of its own (v1, or v2
 * where the cpuset controller is enabled for children), which shrinks to
 * leave out a CPU and later grows back. The CPU goes offline in libxcall with
 * a report naming the cpuset, calls to it get -ENXIO, and when the cpuset
 * holds it again it comes back online by itself, every worker pinned to
 * exactly its CPU. The test creates the cgroup beside its own, and moves the
 * process back and removes the cgroup on every exit (atexit, and the usual
 * signals); one left behind by a killed run is removed by the next. Skips
 * (77) where no cpuset hierarchy is writable. First, everywhere: the parse
 * of a /proc/self/cgroup line finds the cpuset among v1 controllers mounted
 * together ("3:cpu,cpuset,cpuacct:/p"), v2's "0::/p", and nothing else.
 */
#include "follow.h"
#include "cpu/follow.h"	/* xc_cgroup_cpuset_line (this directory has a follow.h too) */
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/stat.h>

static char home[512];		/* the cgroup directory the process came from */
static char mine[600];		/* the one it made */
static int target;

static int write_file(const char *dir, const char *name, const char *val)
{
	char path[700];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return -1;
	ok = fputs(val, f) >= 0;
	return fclose(f) == 0 && ok ? 0 : -1;
}

static int read_file(const char *dir, const char *name, char *buf, size_t n)
{
	char path[700];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, (int)n, f))
		buf[0] = 0;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/* Move the whole process back home and remove the cgroup: every exit path. */
static void restore(void)
{
	char pid[32];

	if (!mine[0])
		return;
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	write_file(home, "cgroup.procs", pid);
	if (rmdir(mine) == 0)
		printf("follow-cpuset: removed %s\n", mine);
	else
		fprintf(stderr, "follow-cpuset: could not remove %s: %s\n", mine, strerror(errno));
	mine[0] = 0;
}

static void on_signal(int sig)
{
	restore();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* The cpuset hierarchy this process is in: v1 "N:...,cpuset,...:/path", or v2 "0::/path". */
static bool find_home(bool *v1)
{
	char line[512];
	FILE *f = fopen("/proc/self/cgroup", "r");
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		const char *ctrls, *cg;
		int kind = xc_cgroup_cpuset_line(line, &ctrls, &cg);
		struct stat st;

		if (kind == XC_CGROUP_V1) {
			/* mounted at cpuset/, or with other controllers at the directory they name */
			snprintf(home, sizeof(home), "/sys/fs/cgroup/cpuset%s", cg);
			if (stat(home, &st))
				snprintf(home, sizeof(home), "/sys/fs/cgroup/%s%s", ctrls, cg);
			*v1 = true;
		} else if (kind == XC_CGROUP_V2) {
			char ctl[256];

			snprintf(home, sizeof(home), "/sys/fs/cgroup%s", cg);
			*v1 = false;
			/* v2: only where children of home may use cpuset already; this test enables nothing */
			if (read_file(home, "cgroup.subtree_control", ctl, sizeof(ctl)) || !strstr(ctl, "cpuset"))
				continue;
		} else {
			continue;
		}
		found = stat(home, &st) == 0 && access(home, W_OK) == 0;
	}
	fclose(f);
	return found;
}

/* Cgroups left by a run that was killed: empty, so rmdir removes them. */
static void remove_stale(void)
{
	DIR *d = opendir(home);
	struct dirent *e;
	char path[1024];

	if (!d)
		return;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "xcall-test-", 11)) {
			snprintf(path, sizeof(path), "%s/%s", home, e->d_name);
			if (rmdir(path) == 0)
				printf("follow-cpuset: removed %s, left by an earlier run\n", path);
		}
	closedir(d);
}

static void nothing(void *arg)
{
}

/* Lines of /proc/self/cgroup of every shape, through the library's parse. */
static void cgroup_lines(void)
{
	static const struct { const char *line; int kind; const char *ctrls, *path; } cases[] = {
		{ "3:cpuset:/a/b\n", XC_CGROUP_V1, "cpuset", "/a/b" },
		{ "3:cpuset,cpu,cpuacct:/a\n", XC_CGROUP_V1, "cpuset,cpu,cpuacct", "/a" },
		{ "3:cpu,cpuset,cpuacct:/\n", XC_CGROUP_V1, "cpu,cpuset,cpuacct", "" },
		{ "3:cpu,cpuacct,cpuset:/x", XC_CGROUP_V1, "cpu,cpuacct,cpuset", "/x" },
		{ "5:cpuset:/a:b\n", XC_CGROUP_V1, "cpuset", "/a:b" },
		{ "0::/user.slice/x\n", XC_CGROUP_V2, "", "/user.slice/x" },
		{ "0::/\n", XC_CGROUP_V2, "", "" },
		{ "2:cpuacct:/\n", XC_CGROUP_NONE, NULL, NULL },
		{ "2:cpu,cpuacct:/cpuset\n", XC_CGROUP_NONE, NULL, NULL },
		{ "1:cpusets,cpu:/\n", XC_CGROUP_NONE, NULL, NULL },
		{ "1:cpu,xcpuset:/\n", XC_CGROUP_NONE, NULL, NULL },
		{ "1:name=cpuset:/\n", XC_CGROUP_NONE, NULL, NULL },
		{ "12::/\n", XC_CGROUP_NONE, NULL, NULL },
		{ "cpuset\n", XC_CGROUP_NONE, NULL, NULL },
		{ "", XC_CGROUP_NONE, NULL, NULL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char line[128];
		const char *ctrls = "untouched", *path = "untouched";
		int kind;

		snprintf(line, sizeof(line), "%s", cases[i].line);
		kind = xc_cgroup_cpuset_line(line, &ctrls, &path);
		if (kind != cases[i].kind ||
		    (kind && (strcmp(ctrls, cases[i].ctrls) || strcmp(path, cases[i].path))) ||
		    (!kind && (strcmp(ctrls, "untouched") || strcmp(path, "untouched")))) {
			fprintf(stderr, "cgroup line \"%.*s\": kind %d, controllers \"%s\", path \"%s\"; "
				"want %d, \"%s\", \"%s\"\n", (int)strcspn(cases[i].line, "\n"), cases[i].line, kind, ctrls, path, cases[i].kind,
				cases[i].kind ? cases[i].ctrls : "untouched",
				cases[i].kind ? cases[i].path : "untouched");
			exit(T_FAIL);
		}
	}
}

int main(void)
{
	struct xc_opts o = { .report = f_capture };
	char all[256], shrunk[256], mems[256], pid[32], want[160];
	int cpus[CPU_SETSIZE], n;
	cpu_set_t set;
	bool v1;

	cgroup_lines();
	if (geteuid() != 0)
		t_skip("needs root to make a cgroup cpuset");
	if (!find_home(&v1))
		t_skip("no writable cgroup cpuset hierarchy (v1 cpuset, or v2 with cpuset in subtree_control)");
	remove_stale();
	snprintf(mine, sizeof(mine), "%s/xcall-test-%d", home, (int)getpid());
	if (mkdir(mine, 0755)) {
		mine[0] = 0;
		t_skip("cannot make a cgroup beside this process's own");
	}
	atexit(restore);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	printf("follow-cpuset: made %s (cgroup %s)\n", mine, v1 ? "v1" : "v2");

	CHECK_RET(xc_init(&o), 0);
	n = t_cpus(cpus);
	if (n < 2)
		t_skip("needs 2 CPUs");
	target = cpus[n - 1];
	CPU_ZERO(&set);
	for (int i = 0; i < n; i++)
		CPU_SET(cpus[i], &set);
	xc_cpulist_format(&set, all, sizeof(all));
	CPU_CLR(target, &set);
	xc_cpulist_format(&set, shrunk, sizeof(shrunk));
	if (v1) {
		CHECK(read_file(home, "cpuset.mems", mems, sizeof(mems)) == 0);
		CHECK(write_file(mine, "cpuset.mems", mems) == 0);
	}
	CHECK(write_file(mine, "cpuset.cpus", all) == 0);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	CHECK(write_file(mine, "cgroup.procs", pid) == 0);	/* every thread moves */
	CHECK_RET(xc_call_single(target, nothing, NULL, XC_WAIT), 0);

	CHECK(write_file(mine, "cpuset.cpus", shrunk) == 0);
	WAIT_UNTIL(!f_cpu_online(target));
	snprintf(want, sizeof(want), "CPU %d: offline: its cpuset no longer holds it", target);
	WAIT_UNTIL(t_reported(want));
	CHECK_RET(xc_call_single(target, nothing, NULL, XC_WAIT), -ENXIO);
	CHECK_RET(xc_cpu_online(target), -ENXIO);

	CHECK(write_file(mine, "cpuset.cpus", all) == 0);
	WAIT_UNTIL(f_cpu_online(target));
	WAIT_UNTIL(f_all_pinned(cpus, n));
	CHECK_RET(xc_call_single(target, nothing, NULL, XC_WAIT), 0);
	CHECK_RET(xc_exit(), 0);
	restore();
	return T_PASS;
}
