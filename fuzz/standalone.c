// SPDX-License-Identifier: MIT
/*
 * fuzz/standalone.c - replays inputs through a harness without libFuzzer, so
 * that `make check` needs no clang: built with $(CC) and ASan + UBSan beside
 * the harness's LLVMFuzzerTestOneInput.
 *
 *   standalone NAME FILE...
 *
 * Each FILE runs in a child process of its own (a crash or a sanitizer report
 * fails that input only), with a 20 s limit. Prints one line per failure,
 * "NAME: I of N inputs" whenever 10 s passed since its last line (so a long
 * replay is seen to move), and "NAME: N passed, N failed"; exits 1 if any
 * failed.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);

static int run_one(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data = NULL;
	size_t size = 0, cap = 0, n;

	if (!f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return 1;
	}
	do {
		if (size == cap) {
			cap = cap ? 2 * cap : 4096;
			data = realloc(data, cap);
			if (!data)
				return 1;
		}
		n = fread(data + size, 1, cap - size, f);
		size += n;
	} while (n);
	fclose(f);
	LLVMFuzzerTestOneInput(data, size);
	free(data);
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	int passed = 0, failed = 0;
	double told = now_s();

	if (argc < 2) {
		fprintf(stderr, "usage: %s NAME FILE...\n", argv[0]);
		return 2;
	}
	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 2; i < argc; i++) {
		int status;

		if (now_s() - told >= 10) {
			printf("%s: %d of %d inputs\n", argv[1], i - 2, argc - 2);
			told = now_s();
		}
		fflush(NULL);
		pid_t pid = fork();

		if (pid < 0) {
			perror("fork");
			return 2;
		}
		if (pid == 0) {
			alarm(20);
			_exit(run_one(argv[i]));
		}
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			passed++;
			continue;
		}
		failed++;
		if (WIFSIGNALED(status))
			fprintf(stderr, "FAIL %s: %s: killed by signal %d (%s)\n", argv[1], argv[i],
				WTERMSIG(status), strsignal(WTERMSIG(status)));
		else
			fprintf(stderr, "FAIL %s: %s: exit status %d\n", argv[1], argv[i],
				WEXITSTATUS(status));
	}
	printf("%s: %d passed, %d failed\n", argv[1], passed, failed);
	return failed ? 1 : 0;
}
