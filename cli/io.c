/*
 * io.c - reading inputs whole and writing output as the shell's > would,
 * but atomically wherever it can.
 *
 * Inputs are held in memory in one piece: every reader then works on a
 * buffer, and positions are byte offsets into it.  A regular file is
 * mapped, so that no second copy of it is made beside the page cache;
 * anything else (standard input, a pipe, a device) is read.  Each read is
 * charged to the run's memory (memory.c) before the parse that would need
 * it, a mapped file as if it were read.
 *
 * Output to -o FILE goes where > would put it: through every symbolic
 * link to the file at the end of the chain, and through attn's own
 * descriptor for /dev/stdout and its kin.  A regular file is written to a
 * temporary file in the same directory (so rename() is atomic), which
 * replaces the target only after everything was written and synced; any
 * failure removes it and leaves the target untouched; several outputs
 * (--svg and -o) are all written before any is renamed, so that they
 * are replaced together or not at all.  What cannot be
 * replaced that way is written in place, as > writes it: a device, a
 * FIFO, a descriptor, or a file in a directory attn may not change.  A
 * file the user may not write is refused, as > refuses it.
 *
 * Messages on stderr go out through io_report, and any name from the
 * command line or a file through io_put_text: escaped, so that a file
 * named with an ESC or a newline cannot drive the terminal or make one
 * message two lines.
 */
#define _XOPEN_SOURCE 700	/* S_ISVTX, SA_SIGINFO */
#define _DEFAULT_SOURCE		/* MAP_ANONYMOUS */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attn.h"
#include "attn_io.h"
#include "io.h"
#include "memory.h"

/* ---------------------------------------------------------------- mapped */

/*
 * A regular file is mapped rather than read, so that attn holds no copy
 * of it beside the kernel's page cache, and reading costs no copy and no
 * fresh pages.  The mapping is followed by a page of zeros, so that the
 * text stays NUL-terminated whatever the file's size, and even when the
 * file grows under it.  A file that shrinks under it is another matter:
 * touching a page past its new end raises SIGBUS, which would kill attn
 * with no word of why.  While a mapping is held, a handler turns a
 * SIGBUS inside it into the error line a failed read() gives, and exit
 * 74; attn has written nothing yet at that point (no output is opened
 * before the inputs are read), so there is nothing to clean up.  One
 * mapping at a time: inputs are read and parsed one after another.
 */
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

/* Give back the mapping at p, span bytes, and SIGBUS's disposition. */
static void
unmap(char *p, size_t span)
{
	munmap(p, span);
	sigaction(SIGBUS, &mapped.saved, NULL);
	mapped.start = NULL;
}

/*
 * Map the regular file fd of size bytes (charged as a read of the whole
 * file would be): 1 when
 * in holds it or *st says why not, 0 when it cannot be mapped (another
 * mapping held, mmap refusing) and must be read instead.
 */
static int
map_input(int fd, const char *name, size_t size, struct memory_read *mr,
    struct io_input *in, enum attn_status *st, struct attn_error *err)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t span, off, least = size + 2, ncap = size + 2;
	struct sigaction sa;
	char *p;

	if (mapped.start != NULL || size > SIZE_MAX - 2 * page)
		return 0;
	if ((*st = memory_read_grow(mr, 0, least, &ncap, err)) != ATTN_OK)
		return 1;
	/* The file's pages, then at least one of zeros. */
	span = (size + page - 1) / page * page + page;
	p = mmap(NULL, span, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 0;
	if (mmap(p, size, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0) ==
	    MAP_FAILED) {
		munmap(p, span);
		return 0;
	}
	snprintf(mapped.shrank, sizeof mapped.shrank, "attn: %s: read error: "
	    "the file was truncated while attn read it\n", name);
	snprintf(mapped.eio, sizeof mapped.eio, "attn: %s: read error: %s\n",
	    name, strerror(EIO));
	mapped.start = p;
	mapped.len = size;
	mapped.fd = fd;
	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	sa.sa_sigaction = bus_error;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGBUS, &sa, &mapped.saved);
	/* Every page touched now, as a read would touch it: a file that
	 * shrinks meanwhile is told by the handler, not by what a parser
	 * meets in the zeros past its new end. */
	for (off = 0; off < size; off += page)
		(void)*(volatile const char *)(p + off);
	memory_read_end(mr);
	in->buf = p;
	in->len = size;
	in->span = span;
	return 1;
}

void
io_release(struct io_input *in)
{
	memory_read_release();
	if (in->span != 0) {
		close(mapped.fd);
		unmap(in->buf, in->span);
	} else {
		free(in->buf);
	}
	memset(in, 0, sizeof *in);
}

/* ---------------------------------------------------------------- read */

/* The first buffer for an input read with read(): the whole of a file
 * whose size fstat tells, with room for its NUL and for a read that sees
 * its end, which must all fit (*least); else 64 KiB that double as
 * needed, or less that fits. */
static size_t
first_cap(int fd, size_t *least)
{
	struct stat sb;

	*least = 2;
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0 &&
	    (unsigned long long)sb.st_size < SIZE_MAX - 2)
		return *least = (size_t)sb.st_size + 2;
	return 65536;
}

/* Read fd to its end into in (see io_slurp). */
static enum attn_status
read_input(int fd, const char *name, struct memory_read *mr,
    struct io_input *in, struct attn_error *err)
{
	size_t cap, n = 0, ncap, least;
	enum attn_status st;
	char *p = NULL, *q;
	ssize_t r;

	/* Every buffer, and every read into it, is charged before parsing
	 * can run out of memory on it. */
	ncap = first_cap(fd, &least);
	if ((st = memory_read_grow(mr, 0, least, &ncap, err)) != ATTN_OK)
		return st;
	cap = ncap;
	if ((p = malloc(cap)) == NULL)
		goto nomem;
	for (;;) {
		if (cap - n < 2) {
			ncap = cap > SIZE_MAX / 2 ? SIZE_MAX : cap * 2;
			if ((st = memory_read_grow(mr, cap, n + 2, &ncap,
			    err)) != ATTN_OK)
				goto fail;
			if ((q = realloc(p, ncap)) == NULL)
				goto nomem;
			p = q;
			cap = ncap;
		}
		r = read(fd, p + n, cap - n - 1);
		if (r == 0)
			break;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			st = attn_error_set(err, ATTN_ERR_IO, name, 0, 0,
			    "read error: %s", strerror(errno));
			goto fail;
		}
		n += (size_t)r;
	}
	p[n] = '\0';
	in->buf = p;
	in->len = n;
	memory_read_end(mr);
	return ATTN_OK;
nomem:
	st = attn_error_set(err, ATTN_ERR_NOMEM, name, 0, 0,
	    "out of memory reading %zu bytes", n);
fail:
	free(p);
	return st;
}

enum attn_status
io_slurp(const char *path, struct io_input *in, struct attn_error *err)
{
	const int is_stdin = strcmp(path, "-") == 0;
	const char *name = is_stdin ? STDIN_NAME : path;
	struct memory_read mr;
	enum attn_status st;
	struct stat sb;
	int fd;

	memset(in, 0, sizeof *in);
	if ((st = memory_read_begin(&mr, name, err)) != ATTN_OK)
		return st;
	fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY);
	if (fd < 0)
		return attn_error_set(err, ATTN_ERR_NOINPUT, name, 0, 0,
		    "cannot open: %s", strerror(errno));
	if (fstat(fd, &sb) != 0)
		sb.st_mode = 0;		/* no stat: read() will tell */
	/* Standard input is read even from a file: the shell may have left
	 * its offset anywhere. */
	if (S_ISDIR(sb.st_mode)) {
		st = attn_error_set(err, ATTN_ERR_NOINPUT, name, 0, 0,
		    "is a directory");
	} else if (!is_stdin && S_ISREG(sb.st_mode) && sb.st_size > 0 &&
	    (unsigned long long)sb.st_size < SIZE_MAX &&
	    map_input(fd, name, (size_t)sb.st_size, &mr, in, &st, err)) {
		if (st == ATTN_OK)
			return ATTN_OK;	/* fd stays open with the mapping */
	} else {
		st = read_input(fd, name, &mr, in, err);
	}
	if (!is_stdin)
		close(fd);
	return st;
}

/* ---------------------------------------------------------------- signals */

/*
 * While a temporary file exists, SIGINT, SIGTERM and SIGHUP remove it and
 * then kill attn as they would have without the handler; a signal that
 * was ignored when attn started (nohup, trap '' INT) is left ignored.
 * SIGXFSZ is ignored while any output is written, so that a file size
 * limit (ulimit -f) makes write() fail with EFBIG, an error attn reports
 * and cleans up after, instead of a death that leaves the temporary file.
 * Several sinks may be open at once (--svg FILE and -o FILE): the
 * dispositions are saved when the first opens and put back when the last
 * closes, and the handler removes every temporary file still pending.
 */
static const int cleanup_sigs[] = { SIGINT, SIGTERM, SIGHUP };
#define NCLEANUP (sizeof cleanup_sigs / sizeof cleanup_sigs[0])
static struct sigaction saved_cleanup[NCLEANUP], saved_xfsz;
static int watching;		/* sinks open */
/* The temporary files to remove: at most one a sink, and attn opens two
 * sinks at most (the output and --svg). */
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

/* Take tmp off the list of files the handler removes. */
static void
unpend(const char *tmp)
{
	size_t i;

	for (i = 0; tmp != NULL && i < PENDING_MAX; i++)
		if (pending[i] == tmp)
			pending[i] = NULL;
}

/* Sink s opens: the handlers go in with the first sink, and s's
 * temporary file (NULL: none) joins the list before it is created. */
static void
watch_signals(struct sink *s, char *tmp)
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
	s->watched = 1;
	for (i = 0; tmp != NULL && i < PENDING_MAX; i++)
		if (pending[i] == NULL) {
			pending[i] = tmp;
			break;
		}
}

/* Sink s closes (once, however often this is called for it): its
 * temporary file leaves the list, and the dispositions are put back
 * with the last sink. */
static void
unwatch_signals(struct sink *s)
{
	size_t i;

	if (!s->watched)
		return;
	s->watched = 0;
	unpend(s->tmp);
	if (--watching > 0)
		return;
	for (i = 0; i < NCLEANUP; i++)
		sigaction(cleanup_sigs[i], &saved_cleanup[i], NULL);
	sigaction(SIGXFSZ, &saved_xfsz, NULL);
}

/* Hold off the cleanup signals while the temporary files are renamed
 * (the mask before in *old), so that one arriving then finds all of
 * them renamed, not some; release_signals puts *old back, when a
 * pending one kills attn. */
static void
hold_signals(sigset_t *old)
{
	sigset_t set;
	size_t i;

	sigemptyset(&set);
	for (i = 0; i < NCLEANUP; i++)
		sigaddset(&set, cleanup_sigs[i]);
	sigprocmask(SIG_BLOCK, &set, old);
}

static void
release_signals(const sigset_t *old)
{
	sigprocmask(SIG_SETMASK, old, NULL);
}

/* ---------------------------------------------------------------- sinks */

/* The kernel's own bound on links followed in one path (MAXSYMLINKS): a
 * longer chain is taken for a loop, as open() takes it. */
#define LINK_HOPS_MAX 40

/* The length of path's directory part, its last slash included (0 when
 * it has none). */
static size_t
dir_len(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash == NULL ? 0 : (size_t)(slash - path) + 1;
}

/* Where the symlink path points, relative links taken from the link's
 * directory (the target need not exist yet); NULL with errno set on
 * failure. */
static char *
link_target(const char *path)
{
	size_t dirlen = dir_len(path);
	char link[PATH_MAX], *out;
	ssize_t n;

	n = readlink(path, link, sizeof link);
	if (n < 0)
		return NULL;
	if ((size_t)n >= sizeof link) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	link[n] = '\0';
	if (link[0] == '/')
		dirlen = 0;
	if ((out = malloc(dirlen + (size_t)n + 1)) == NULL)
		return NULL;
	memcpy(out, path, dirlen);
	memcpy(out + dirlen, link, (size_t)n + 1);
	return out;
}

/*
 * The descriptor that path names when it is one of attn's own: /dev/stdin,
 * /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N, and the same
 * under /proc/thread-self and /proc/PID; -1 otherwise.  Followed as links
 * they lead to a pipe (whose name cannot be created) or to the file the
 * shell opened, which renaming would replace behind the shell's back, at
 * the cost of >> appending: attn writes through the descriptor instead.
 */
static int
own_descriptor(const char *path)
{
	static const char *const std[] = {
		"/dev/stdin", "/dev/stdout", "/dev/stderr"
	};
	char pid_dir[64];
	const char *const dirs[] = {
		"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/", pid_dir
	};
	const char *num;
	char *end;
	long fd;
	size_t i, n;

	for (i = 0; i < sizeof std / sizeof std[0]; i++)
		if (strcmp(path, std[i]) == 0)
			return (int)i;
	snprintf(pid_dir, sizeof pid_dir, "/proc/%ld/fd/", (long)getpid());
	for (i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		n = strlen(dirs[i]);
		if (strncmp(path, dirs[i], n) != 0)
			continue;
		num = path + n;
		if (*num < '0' || *num > '9')
			return -1;
		errno = 0;
		fd = strtol(num, &end, 10);
		return *end == '\0' && errno == 0 && fd <= INT_MAX ?
		    (int)fd : -1;
	}
	return -1;
}

int
io_is_terminal(const char *path)
{
	int fd = path == NULL ? STDOUT_FILENO : own_descriptor(path);

	return fd >= 0 && isatty(fd);
}

enum attn_status
io_check_descriptor(const char *path, int fd, struct attn_error *err)
{
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0 || (flags & O_ACCMODE) == O_RDONLY)
		return attn_error_set(err, ATTN_ERR_CANTCREAT, path, 0, 0,
		    "cannot write: descriptor %d is %s", fd, flags < 0 ?
		    "not open" : "open for reading only");
	return ATTN_OK;
}

/*
 * Follow path through every symbolic link to the file that open() would
 * write, which need not exist yet: *end is that path (owned by the
 * caller), or NULL when path is no link.  Only the last component needs
 * following: rename() resolves the directories on the way itself.  The
 * walk stops at a name of one of attn's own descriptors (*fd).  A loop is
 * an error.
 */
static enum attn_status
follow_links(const char *path, char **end, int *fd, struct attn_error *err)
{
	const char *cur = path;
	struct stat sb;
	size_t hops;
	char *next;

	*end = NULL;
	for (hops = 0; (*fd = own_descriptor(cur)) < 0 &&
	    lstat(cur, &sb) == 0 && S_ISLNK(sb.st_mode); hops++) {
		if (hops == LINK_HOPS_MAX || (next = link_target(cur)) == NULL) {
			int saved = hops == LINK_HOPS_MAX ? ELOOP : errno;

			free(*end);
			*end = NULL;
			if (saved == ENOMEM)
				return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0,
				    0, "out of memory");
			return attn_error_set(err, ATTN_ERR_CANTCREAT, path, 0, 0,
			    "cannot create: %s%s", strerror(saved),
			    saved == ELOOP ? " (the links form a loop, or there "
			    "are more than 40 of them)" : "");
		}
		free(*end);
		*end = next;
		cur = next;
	}
	return ATTN_OK;
}

enum attn_status
io_check_output(const char *path, struct attn_error *err)
{
	enum attn_status st;
	char *end;
	int fd;

	if (path == NULL)
		return ATTN_OK;
	if ((st = follow_links(path, &end, &fd, err)) != ATTN_OK)
		return st;
	free(end);
	return fd >= 0 ? io_check_descriptor(path, fd, err) : ATTN_OK;
}

/* Which file output to path would reach, for telling two names of one
 * file apart: the device and inode of the file, or, when it does not
 * exist yet, those of its directory and its name (the name's last
 * component, in *base, owned by the caller).  0, or -1 when it cannot
 * be told (an error that opening the output will report). */
static int
output_identity(const char *path, struct stat *sb, char **base)
{
	struct attn_error err = { 0 };
	char *end = NULL, *dir;
	const char *target;
	size_t dirlen;
	int fd, r;

	*base = NULL;
	if (path == NULL || strcmp(path, "-") == 0)
		return fstat(STDOUT_FILENO, sb);
	if (follow_links(path, &end, &fd, &err) != ATTN_OK)
		return -1;
	target = end != NULL ? end : path;
	if (fd >= 0)
		r = fstat(fd, sb);
	else if ((r = stat(target, sb)) != 0 && errno == ENOENT) {
		dirlen = dir_len(target);
		dir = dirlen == 0 ? strdup(".") : strndup(target, dirlen);
		*base = strdup(target + dirlen);
		r = dir != NULL && *base != NULL ? stat(dir, sb) : -1;
		free(dir);
	}
	free(end);
	if (r != 0) {
		free(*base);
		*base = NULL;
	}
	return r;
}

int
io_same_output(const char *a, const char *b)
{
	struct stat sa, sb;
	char *base_a, *base_b;
	int same;

	if (output_identity(a, &sa, &base_a) != 0)
		return 0;
	if (output_identity(b, &sb, &base_b) != 0) {
		free(base_a);
		return 0;
	}
	/* A device (a terminal, /dev/null) takes both outputs in turn and
	 * keeps neither: it is no file that one could clobber. */
	same = sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino &&
	    (base_a == NULL) == (base_b == NULL) &&
	    (base_a == NULL ? !S_ISCHR(sa.st_mode) :
	    strcmp(base_a, base_b) == 0);
	free(base_a);
	free(base_b);
	return same;
}

/*
 * Whether attn may make a file beside path and rename it over path: the
 * directory must be writable, and when it is sticky (as /tmp), only the
 * file's owner, the directory's or root may replace the file.  Anyone
 * else may still write the file in place, as > does.
 */
static int
replaceable(const char *path, const struct stat *file)
{
	size_t dirlen = dir_len(path);
	uid_t uid = geteuid();
	struct stat d;
	char *dir;
	int ok;

	if ((dir = dirlen == 0 ? strdup(".") : strndup(path, dirlen)) == NULL)
		return 1;	/* making the temporary file's name will fail */
	ok = stat(dir, &d) == 0 &&
	    faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) == 0 &&
	    (!(d.st_mode & S_ISVTX) || uid == 0 || file->st_uid == uid ||
	    d.st_uid == uid);
	free(dir);
	return ok;
}

/* The sink's stream on the open descriptor fd. */
static enum attn_status
sink_fdopen(struct sink *s, int fd, const char *verb, struct attn_error *err)
{
	if (fd < 0)
		return attn_error_set(err, ATTN_ERR_CANTCREAT, s->path, 0, 0,
		    "cannot %s: %s", verb, strerror(errno));
	if ((s->fp = fdopen(fd, "w")) == NULL) {
		attn_error_set(err, ATTN_ERR_CANTCREAT, s->path, 0, 0,
		    "cannot %s: %s", verb, strerror(errno));
		close(fd);
		return ATTN_ERR_CANTCREAT;
	}
	return ATTN_OK;
}

/* Write through attn's descriptor fd, where the shell's > or >> left it
 * (a copy of it, so that closing the sink leaves fd open). */
static enum attn_status
open_descriptor(struct sink *s, int fd, struct attn_error *err)
{
	enum attn_status st;

	if ((st = io_check_descriptor(s->path, fd, err)) != ATTN_OK)
		return st;
	s->direct = 1;
	s->fd = fd;
	watch_signals(s, NULL);
	return sink_fdopen(s, dup(fd), "open", err);
}

/* Write target itself, truncated first, as > does. */
static enum attn_status
open_in_place(struct sink *s, const char *target, struct attn_error *err)
{
	s->direct = 1;
	watch_signals(s, NULL);
	return sink_fdopen(s, open(target, O_WRONLY | O_TRUNC | O_NOCTTY),
	    "open", err);
}

/* A temporary file in target's directory, for sink_commit to rename. */
static enum attn_status
open_temp(struct sink *s, const char *target, struct attn_error *err)
{
	static const char name[] = ".attn-XXXXXX";
	size_t dirlen = dir_len(target);
	int fd;

	if ((s->tmp = malloc(dirlen + sizeof name)) == NULL)
		return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "out of memory");
	memcpy(s->tmp, target, dirlen);
	memcpy(s->tmp + dirlen, name, sizeof name);
	watch_signals(s, s->tmp);
	if ((fd = mkstemp(s->tmp)) < 0) {
		unpend(s->tmp);
		free(s->tmp);	/* no file to remove */
		s->tmp = NULL;
	}
	return sink_fdopen(s, fd, "create", err);
}

enum attn_status
sink_open(struct sink *s, const char *path, struct attn_error *err)
{
	enum attn_status st;
	const char *target;
	struct stat sb;
	int fd;

	memset(s, 0, sizeof *s);
	s->fd = -1;
	if (path == NULL) {
		s->fp = stdout;
		s->fd = STDOUT_FILENO;
		watch_signals(s, NULL);
		return ATTN_OK;
	}
	s->path = path;
	if ((st = follow_links(path, &s->real, &fd, err)) != ATTN_OK)
		return st;
	target = s->real != NULL ? s->real : path;
	/* Error messages name the path as given, not the link's target. */
	if (fd >= 0)
		st = open_descriptor(s, fd, err);
	else if (stat(target, &sb) != 0)
		st = errno == ENOENT ? open_temp(s, target, err) :
		    attn_error_set(err, ATTN_ERR_CANTCREAT, path, 0, 0,
		    "cannot create: %s", strerror(errno));
	else if (S_ISDIR(sb.st_mode))
		st = attn_error_set(err, ATTN_ERR_CANTCREAT, path, 0, 0,
		    "cannot create: Is a directory");
	else if (!S_ISREG(sb.st_mode))
		st = open_in_place(s, target, err);	/* a device or FIFO */
	else if (faccessat(AT_FDCWD, target, W_OK, AT_EACCESS) != 0)
		st = attn_error_set(err, ATTN_ERR_CANTCREAT, path, 0, 0,
		    "cannot write: %s", strerror(errno));
	else if (!replaceable(target, &sb))
		st = open_in_place(s, target, err);
	else
		st = open_temp(s, target, err);
	if (st != ATTN_OK)
		sink_abort(s);
	return st;
}

/* The mode a new file would get: an existing target's, else 0666 less
 * the umask, so that -o behaves like the shell's > except for atomicity. */
static mode_t
target_mode(const char *path)
{
	struct stat sb;
	mode_t mask;

	if (stat(path, &sb) == 0)
		return sb.st_mode & 07777;
	mask = umask(0);
	umask(mask);
	return 0666 & ~mask;
}

/* A write error: a file size limit is named, since EFBIG alone ("File
 * too large") does not say which limit. */
static enum attn_status
write_error(struct attn_error *err, const char *file, const char *on,
    int saved)
{
	struct rlimit rl;
	char why[128] = "";

	if (saved == EFBIG && getrlimit(RLIMIT_FSIZE, &rl) == 0 &&
	    rl.rlim_cur != RLIM_INFINITY)
		snprintf(why, sizeof why, " (over the file size limit, "
		    "ulimit -f, of %llu bytes)", (unsigned long long)rl.rlim_cur);
	if (on != NULL)
		return attn_error_set(err, ATTN_ERR_IO, file, 0, 0,
		    "write error on %s: %s%s", on, strerror(saved), why);
	return attn_error_set(err, ATTN_ERR_IO, file, 0, 0,
	    "write error: %s%s", strerror(saved), why);
}

int
sink_is_stdout(const struct sink *s)
{
	return s->fd == STDOUT_FILENO;
}

enum attn_status
sink_finish(struct sink *s, struct attn_error *err)
{
	const char *name = s->path != NULL ? s->path : "standard output";
	const char *target;
	int failed, saved;

	if (s->fp == NULL)
		return ATTN_OK;		/* finished already */
	if (s->len > 0)
		fwrite(s->text, 1, s->len, s->fp);
	failed = fflush(s->fp) != 0 || ferror(s->fp);
	saved = errno;
	if (s->path == NULL || s->direct) {
		if (fclose(s->fp) != 0 && !failed) {
			failed = 1;
			saved = errno;
		}
		s->fp = NULL;
		unwatch_signals(s);
		/* A reader that left (head -1, with SIGPIPE ignored) is not
		 * worth a message: the status says it. */
		if (failed && saved == EPIPE)
			return attn_error_set(err, ATTN_ERR_IO, NULL, 0, 0, "%s", "");
		if (failed)
			return write_error(err, NULL, name, saved);
		return ATTN_OK;
	}
	target = s->real != NULL ? s->real : s->path;
	if (!failed && (fchmod(fileno(s->fp), target_mode(target)) != 0 ||
	    fsync(fileno(s->fp)) != 0)) {
		failed = 1;
		saved = errno;
	}
	if (fclose(s->fp) != 0 && !failed) {
		failed = 1;
		saved = errno;
	}
	s->fp = NULL;
	if (failed) {
		sink_abort(s);
		return write_error(err, s->path, NULL, saved);
	}
	return ATTN_OK;
}

/* Rename s's temporary file (finished) over its target. */
static enum attn_status
sink_rename(struct sink *s, struct attn_error *err)
{
	const char *target = s->real != NULL ? s->real : s->path;
	int saved;

	if (s->tmp == NULL)
		return ATTN_OK;		/* written in place */
	if (rename(s->tmp, target) != 0) {
		saved = errno;
		sink_abort(s);
		return attn_error_set(err, ATTN_ERR_CANTCREAT, s->path, 0, 0,
		    "cannot replace: %s", strerror(saved));
	}
	unwatch_signals(s);
	free(s->tmp);
	s->tmp = NULL;
	return ATTN_OK;
}

enum attn_status
sink_commit(struct sink *s, struct attn_error *err)
{
	return sink_commit_all(&s, 1, err);
}

/* Where sink s is finished among several: temporary files first (their
 * writing can still be undone), then files and devices written in
 * place, standard output last (what reached it cannot be taken back). */
static int
finish_rank(const struct sink *s)
{
	return s->tmp != NULL ? 0 : sink_is_stdout(s) ? 2 : 1;
}

enum attn_status
sink_commit_all(struct sink *const *s, size_t n, struct attn_error *err)
{
	enum attn_status st = ATTN_OK;
	sigset_t old;
	size_t i;
	int rank;

	/* Everything written and checked before anything is replaced. */
	for (rank = 0; rank <= 2 && st == ATTN_OK; rank++)
		for (i = 0; i < n && st == ATTN_OK; i++)
			if (finish_rank(s[i]) == rank)
				st = sink_finish(s[i], err);
	if (st == ATTN_OK) {
		hold_signals(&old);
		for (i = 0; i < n && st == ATTN_OK; i++)
			st = sink_rename(s[i], err);
		release_signals(&old);
	}
	for (i = 0; i < n; i++)
		sink_abort(s[i]);
	return st;
}

void
sink_abort(struct sink *s)
{
	if (s->fp != NULL && s->fp != stdout)
		fclose(s->fp);
	s->fp = NULL;
	free(s->real);
	s->real = NULL;
	if (s->tmp != NULL) {
		unpend(s->tmp);
		unlink(s->tmp);
		free(s->tmp);
		s->tmp = NULL;
	}
	unwatch_signals(s);
}

/* ------------------------------------------------------------- messages */

void
io_put_text(FILE *fp, const char *s)
{
	char buf[256];
	size_t len = strlen(s), used;

	while (len > 0) {
		/* a buffer this size takes a character or more each time */
		attn_text_escape(buf, sizeof buf, s, len, &used);
		fputs(buf, fp);
		s += used;
		len -= used;
	}
}

void
io_report(const char *kind, const struct attn_error *err)
{
	char where[64];

	fputs("attn: ", stderr);
	fputs(kind, stderr);
	if (err->file != NULL) {
		attn_error_position(where, sizeof where, err);
		io_put_text(stderr, err->file);
		fprintf(stderr, "%s: ", where);
	}
	io_put_text(stderr, err->msg);
	putc('\n', stderr);
}
