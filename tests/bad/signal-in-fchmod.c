/*
 * signal-in-fchmod.c - an LD_PRELOAD shim for tests/bad/run.sh.  Its
 * fchmod first sends the calling process the signals named in
 * ATTN_TEST_SIGNALS (INT, HUP, TERM, separated by spaces), then changes
 * the mode.  attn calls fchmod on its temporary file once it is written,
 * just before the rename, so the signals arrive while the temporary file
 * exists, every time and with no timing involved: kill() to oneself
 * delivers an unblocked signal before it returns.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

int
fchmod(int fd, mode_t mode)
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
	return (int)syscall(SYS_fchmod, fd, mode);
}
