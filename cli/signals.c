/*
 * signals.c - the signals attn handles (see signals.h), each for as long
 * as what it protects exists.
 *
 * A mapped input: touching a page past the end of a file that shrank
 * under attn raises SIGBUS, which would kill attn with no word of why.
 * While mappings are held (several, when the operands are read side by
 * side), a handler turns a SIGBUS inside one into the error line a
 * failed read() gives, and exit 74; attn has written
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
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "signals.h"

/* ---------------------------------------------------------------- SIGBUS */

/* The inputs mapped now: up to MAPS_MOST, since the operands are read
 * side by side (load.c).  A slot is taken under the lock, filled, and
 * published by setting start last, which the handler reads alone. */
#define MAPS_MOST 16
static struct {
	_Atomic(const char *) start;	/* NULL: a free slot */
	size_t len;
	int fd;			/* kept open to tell shrinking from EIO */
	char shrank[512], eio[512];	/* the lines the handler writes */
} maps[MAPS_MOST];
static struct sigaction bus_saved;
static int bus_count;		/* slots in use */
static pthread_mutex_t bus_lock = PTHREAD_MUTEX_INITIALIZER;

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
	const char *at = si->si_addr, *start;
	struct stat sb;
	int k;

	(void)ctx;
	for (k = 0; k < MAPS_MOST; k++) {
		start = atomic_load(&maps[k].start);
		if (start != NULL && at >= start &&
		    (size_t)(at - start) < maps[k].len) {
			write_line(fstat(maps[k].fd, &sb) == 0 &&
			    (unsigned long long)sb.st_size < maps[k].len ?
			    maps[k].shrank : maps[k].eio);
			_exit(74);
		}
	}
	/* Not attn's input: die of it, as without the handler. */
	sigaction(sig, &bus_saved, NULL);
	raise(sig);
}

int
signals_bus_catch(const char *start, size_t len, int fd, const char *name)
{
	struct sigaction sa;
	int k;

	pthread_mutex_lock(&bus_lock);
	for (k = 0; k < MAPS_MOST && atomic_load(&maps[k].start) != NULL; k++)
		;
	if (k == MAPS_MOST) {
		pthread_mutex_unlock(&bus_lock);
		return -1;
	}
	snprintf(maps[k].shrank, sizeof maps[k].shrank, "attn: %s: read "
	    "error: the file was truncated while attn read it\n", name);
	snprintf(maps[k].eio, sizeof maps[k].eio, "attn: %s: read error: "
	    "%s\n", name, strerror(EIO));
	maps[k].len = len;
	maps[k].fd = fd;
	atomic_store(&maps[k].start, start);
	if (bus_count++ == 0) {
		memset(&sa, 0, sizeof sa);
		sigemptyset(&sa.sa_mask);
		sa.sa_sigaction = bus_error;
		sa.sa_flags = SA_SIGINFO;
		sigaction(SIGBUS, &sa, &bus_saved);
	}
	pthread_mutex_unlock(&bus_lock);
	return k;
}

void
signals_bus_release(int slot)
{
	if (slot < 0 || slot >= MAPS_MOST)
		return;
	pthread_mutex_lock(&bus_lock);
	atomic_store(&maps[slot].start, NULL);
	if (--bus_count == 0)
		sigaction(SIGBUS, &bus_saved, NULL);
	pthread_mutex_unlock(&bus_lock);
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
