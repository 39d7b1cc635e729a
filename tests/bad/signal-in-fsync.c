/*
 * signal-in-fsync.c - an LD_PRELOAD shim for tests/bad/run.sh.  Its fsync
 * first sends the calling process the signals named in ATTN_TEST_SIGNALS
 * (INT, HUP, TERM, separated by spaces), then syncs.  attn calls fsync on
 * its temporary file just before the rename, so the signals arrive while
 * the temporary file exists, every time and with no timing involved:
 * kill() to oneself delivers an unblocked signal before it returns.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int
fsync(int fd)
{
	static const struct {
		const char *name;
		int sig;
	} sigs[] = { { "INT", SIGINT }, { "HUP", SIGHUP }, { "TERM", SIGTERM } };
	const char *list = getenv("ATTN_TEST_SIGNALS");
	size_t i;

	for (i = 0; list != NULL && i < sizeof sigs / sizeof sigs[0]; i++)
		if (strstr(list, sigs[i].name) != NULL)
			kill(getpid(), sigs[i].sig);
	return (int)syscall(SYS_fsync, fd);
}
