/*
 * signals.c - the signals attn handles (see signals.h), each for as long
 * as what it protects exists.
 *
 * A mapped input: touching a page past the end of a file that shrank
 * under attn raises SIGBUS, which would kill attn with no word of why.
 * While a mapping is held, a handler turns a SIGBUS inside it into the
 * error line a failed read() gives, and exit 74; attn has written
 * nothing yet at that point (no output is opened before the inputs are
 * read), so there is nothing to clean up.  The lines are made before
 * the signal can come, since a handler may only write(2) them.
 *
 * Output: while a temporary file exists, SIGINT, SIGTERM and SIGHUP
 * remove it and then kill attn as they would have without the handler;
 * a signal that was ignored when attn started (nohup, trap '' INT) is
 * left ignored.  SIGXFSZ is ignored while any output is written, so that
 * a file size limit (ulimit -f) makes write() fail with EFBIG, an error
 * attn reports and cleans up after, instead of a death that leaves the
 * temporary file.  Several outputs may be open at once (--svg FILE and
 * -o FILE): the dispositions are saved when the first opens and put back
 * when the last closes, and the handler removes every temporary file
 * still pending.
 */
#define _XOPEN_SOURCE 700	/* SA_SIGINFO */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "signals.h"

/* ---------------------------------------------------------------- SIGBUS */

static struct {
	const char *start;	/* the file's bytes, NULL when none mapped */
	size_t len;
	int fd;			/* kept open to tell shrinking from EIO */
	char shrank[512], eio[512];	/* the lines the handler writes */
	struct sigaction saved;
} mapped;

static void
write_line(const char *s)
{
	size_t n = strlen(s);
	ssize_t w;

	while (n > 0 && ((w = write(STDERR_FILENO, s, n)) > 0 ||
	    (w < 0 && errno == EINTR)))
		if (w > 0) {
			s += w;
			n -= (size_t)w;
		}
}

static void
bus_error(int sig, siginfo_t *si, void *ctx)
{
	const char *at = si->si_addr;
	struct stat sb;

	(void)ctx;
	if (mapped.start != NULL && at >= mapped.start &&
	    (size_t)(at - mapped.start) < mapped.len) {
		write_line(fstat(mapped.fd, &sb) == 0 &&
		    (unsigned long long)sb.st_size < mapped.len ?
		    mapped.shrank : mapped.eio);
		_exit(74);
	}
	/* Not attn's input: die of it, as without the handler. */
	sigaction(sig, &mapped.saved, NULL);
	raise(sig);
}

void
signals_bus_catch(const char *start, size_t len, int fd, const char *name)
{
	struct sigaction sa;

	snprintf(mapped.shrank, sizeof mapped.shrank, "attn: %s: read error: "
	    "the file was truncated while attn read it\n", name);
	snprintf(mapped.eio, sizeof mapped.eio, "attn: %s: read error: %s\n",
	    name, strerror(EIO));
	mapped.start = start;
	mapped.len = len;
	mapped.fd = fd;
	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	sa.sa_sigaction = bus_error;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGBUS, &sa, &mapped.saved);
}

void
signals_bus_release(void)
{
	sigaction(SIGBUS, &mapped.saved, NULL);
	mapped.start = NULL;
}

/* ---------------------------------------------------------------- output */

static const int cleanup_sigs[] = { SIGINT, SIGTERM, SIGHUP };
#define NCLEANUP (sizeof cleanup_sigs / sizeof cleanup_sigs[0])
static struct sigaction saved_cleanup[NCLEANUP], saved_xfsz;
static int watching;		/* outputs open */
/* The temporary files to remove: at most one an output, and attn opens
 * two outputs at most (-o's and --svg's). */
#define PENDING_MAX 4
static char *volatile pending[PENDING_MAX];

static void
remove_pending(int sig)
{
	size_t i;

	for (i = 0; i < PENDING_MAX; i++) {
		char *tmp = pending[i];

		if (tmp != NULL)
			unlink(tmp);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static int
is_ignored(const struct sigaction *sa)
{
	return !(sa->sa_flags & SA_SIGINFO) && sa->sa_handler == SIG_IGN;
}

void
signals_unpend(const char *tmp)
{
	size_t i;

	for (i = 0; tmp != NULL && i < PENDING_MAX; i++)
		if (pending[i] == tmp)
			pending[i] = NULL;
}

void
signals_watch(char *tmp)
{
	struct sigaction sa;
	size_t i;

	if (watching++ == 0) {
		memset(&sa, 0, sizeof sa);
		sigemptyset(&sa.sa_mask);
		sa.sa_handler = SIG_IGN;
		sigaction(SIGXFSZ, &sa, &saved_xfsz);
		sa.sa_handler = remove_pending;
		for (i = 0; i < NCLEANUP; i++) {
			sigaction(cleanup_sigs[i], NULL, &saved_cleanup[i]);
			if (!is_ignored(&saved_cleanup[i]))
				sigaction(cleanup_sigs[i], &sa, NULL);
		}
	}
	for (i = 0; tmp != NULL && i < PENDING_MAX; i++)
		if (pending[i] == NULL) {
			pending[i] = tmp;
			break;
		}
}

void
signals_unwatch(void)
{
	size_t i;

	if (--watching > 0)
		return;
	for (i = 0; i < NCLEANUP; i++)
		sigaction(cleanup_sigs[i], &saved_cleanup[i], NULL);
	sigaction(SIGXFSZ, &saved_xfsz, NULL);
}

void
signals_hold(sigset_t *old)
{
	sigset_t set;
	size_t i;

	sigemptyset(&set);
	for (i = 0; i < NCLEANUP; i++)
		sigaddset(&set, cleanup_sigs[i]);
	sigprocmask(SIG_BLOCK, &set, old);
}

void
signals_release(const sigset_t *old)
{
	sigprocmask(SIG_SETMASK, old, NULL);
}
