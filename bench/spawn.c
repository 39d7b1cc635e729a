/*
 * spawn.c - bench-spawn OUT CMD [ARG...]: run CMD as a whole process and
 * write to OUT "SECONDS MAXRSS_KIB", the time from before fork to after
 * the child is reaped (monotonic clock) and the child's peak resident
 * set (wait4's rusage); exit with CMD's status (128 + the signal that
 * killed it, 127 when it could not be run).
 *
 * What bench.py times every process with, rather than GNU time, which
 * adds its own start-up and a second fork and exec to every run: a large
 * part of a small run's time (bench/README.md).  The peak RSS is the
 * child's own: this process is small when it forks, and the kernel keeps
 * the larger of a process's peak before and after exec, which is why a
 * child forked from the Python driver cannot be asked for it.
 */
#define _DEFAULT_SOURCE		/* wait4 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"

static double
seconds(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
}

int
main(int argc, char **argv)
{
	struct rusage ru;
	double t0, t1;
	int status;
	pid_t pid;
	FILE *out;

	if (argc < 3) {
		fprintf(stderr, "usage: bench-spawn OUT CMD [ARG...]\n");
		return 2;
	}
	t0 = now();
	if ((pid = fork()) < 0) {
		perror("bench-spawn: fork");
		return 127;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		fprintf(stderr, "bench-spawn: %s: ", argv[2]);
		perror(NULL);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) != pid) {
		perror("bench-spawn: wait4");
		return 127;
	}
	t1 = now();
	if ((out = fopen(argv[1], "w")) == NULL ||
	    fprintf(out, "%.6f %ld %.6f\n", t1 - t0, ru.ru_maxrss,
	    seconds(ru.ru_utime) + seconds(ru.ru_stime)) < 0 ||
	    fclose(out) != 0) {
		fprintf(stderr, "bench-spawn: %s: ", argv[1]);
		perror(NULL);
		return 127;
	}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
