/*
 * output.c - output written as the shell's > would write it, but
 * atomically wherever it can (see output.h).
 *
 * Output to -o FILE goes where > would put it: through every symbolic
 * link to the file at the end of the chain, and through attn's own
 * descriptor for /dev/stdout and its kin.  A regular file is written to a
 * temporary file in the same directory (so rename() is atomic), which
 * replaces the target only after everything was written; any
 * failure removes it and leaves the target untouched; several outputs
 * (--svg and -o) are all written before any is renamed, so that they
 * are replaced together or not at all.  What cannot be
 * replaced that way is written in place, as > writes it: a device, a
 * FIFO, a descriptor, or a file in a directory attn may not change.  A
 * file the user may not write is refused, as > refuses it.  While an
 * output is open, signals.c removes its temporary file should attn be
 * killed.
 */
#define _XOPEN_SOURCE 700	/* S_ISVTX */
#define _DEFAULT_SOURCE		/* strndup, faccessat */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attn.h"
#include "attn_private.h"
#include "output.h"
#include "signals.h"

/* ---------------------------------------------------------------- names */

/* Output s opens: its temporary file (NULL: none) joins those a signal
 * removes, before it is created. */
static void
watch(struct output *s, char *tmp)
{
	signals_watch(tmp);
	s->watched = 1;
}

/* Output s closes (once, however often this is called for it). */
static void
unwatch(struct output *s)
{
	if (!s->watched)
		return;
	s->watched = 0;
	signals_unpend(s->tmp);
	signals_unwatch();
}

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

int output_stdout_known = 1;

int
output_is_terminal(const char *path)
{
	int fd = path == NULL ? STDOUT_FILENO : own_descriptor(path);

	if (fd == STDOUT_FILENO && !output_stdout_known)
		return 0;
	return fd >= 0 && isatty(fd);
}

/* Descriptor fd, named path, is open for writing; else
 * ATTN_ERR_CANTCREAT. */
static enum attn_status
check_descriptor(const char *path, int fd, struct attn_error *err)
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
output_check(const char *path, struct attn_error *err)
{
	enum attn_status status;
	char *end;
	int fd;

	if (path == NULL)
		return ATTN_OK;
	if ((status = follow_links(path, &end, &fd, err)) != ATTN_OK)
		return status;
	free(end);
	return fd >= 0 ? check_descriptor(path, fd, err) : ATTN_OK;
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
output_same(const char *a, const char *b)
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

/* The output's stream on the open descriptor fd. */
static enum attn_status
output_fdopen(struct output *s, int fd, const char *verb,
    struct attn_error *err)
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
 * (a copy of it, so that closing the output leaves fd open). */
static enum attn_status
open_descriptor(struct output *s, int fd, struct attn_error *err)
{
	enum attn_status status;

	if ((status = check_descriptor(s->path, fd, err)) != ATTN_OK)
		return status;
	s->direct = 1;
	s->fd = fd;
	watch(s, NULL);
	return output_fdopen(s, dup(fd), "open", err);
}

/* Write target itself, truncated first, as > does. */
static enum attn_status
open_in_place(struct output *s, const char *target, struct attn_error *err)
{
	s->direct = 1;
	watch(s, NULL);
	return output_fdopen(s, open(target, O_WRONLY | O_TRUNC | O_NOCTTY),
	    "open", err);
}

/* A temporary file in target's directory, for output_commit to rename. */
static enum attn_status
open_temp(struct output *s, const char *target, struct attn_error *err)
{
	static const char name[] = ".attn-XXXXXX";
	size_t dirlen = dir_len(target);
	int fd;

	if ((s->tmp = malloc(dirlen + sizeof name)) == NULL)
		return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "out of memory");
	memcpy(s->tmp, target, dirlen);
	memcpy(s->tmp + dirlen, name, sizeof name);
	watch(s, s->tmp);
	if ((fd = mkstemp(s->tmp)) < 0) {
		signals_unpend(s->tmp);
		free(s->tmp);	/* no file to remove */
		s->tmp = NULL;
	}
	return output_fdopen(s, fd, "create", err);
}

/* Nothing opened, for output_open_replacing: s as output_open leaves
 * it, with no stream. */
static enum attn_status
open_nothing(struct output *s)
{
	free(s->real);
	memset(s, 0, sizeof *s);
	s->fd = -1;
	return ATTN_OK;
}

/* output_open; with temp_only, only what a temporary file replaces. */
static enum attn_status
open_output(struct output *s, const char *path, int temp_only,
    struct attn_error *err)
{
	enum attn_status status;
	const char *target;
	struct stat sb;
	int fd;

	memset(s, 0, sizeof *s);
	s->fd = -1;
	if (path == NULL && temp_only)
		return ATTN_OK;
	if (path == NULL) {
		s->fp = stdout;
		s->fd = STDOUT_FILENO;
		watch(s, NULL);
		return ATTN_OK;
	}
	s->path = path;
	if ((status = follow_links(path, &s->real, &fd, err)) != ATTN_OK)
		return status;
	target = s->real != NULL ? s->real : path;
	/* Error messages name the path as given, not the link's target. */
	if (fd >= 0)
		status = temp_only ? open_nothing(s) :
		    open_descriptor(s, fd, err);
	else if (stat(target, &sb) != 0)
		status = errno == ENOENT ? open_temp(s, target, err) :
		    attn_error_set(err, ATTN_ERR_CANTCREAT, path, 0, 0,
		    "cannot create: %s", strerror(errno));
	else if (S_ISDIR(sb.st_mode))
		status = attn_error_set(err, ATTN_ERR_CANTCREAT, path, 0, 0,
		    "cannot create: Is a directory");
	else if (!S_ISREG(sb.st_mode))	/* a device or FIFO */
		status = temp_only ? open_nothing(s) :
		    open_in_place(s, target, err);
	else if (faccessat(AT_FDCWD, target, W_OK, AT_EACCESS) != 0)
		status = attn_error_set(err, ATTN_ERR_CANTCREAT, path, 0, 0,
		    "cannot write: %s", strerror(errno));
	else if (!replaceable(target, &sb))
		status = temp_only ? open_nothing(s) :
		    open_in_place(s, target, err);
	else
		status = open_temp(s, target, err);
	if (status != ATTN_OK)
		output_abort(s);
	return status;
}

enum attn_status
output_open(struct output *s, const char *path, struct attn_error *err)
{
	return open_output(s, path, 0, err);
}

enum attn_status
output_open_replacing(struct output *s, const char *path,
    struct attn_error *err)
{
	return open_output(s, path, 1, err);
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
output_is_stdout(const struct output *s)
{
	return s->fd == STDOUT_FILENO;
}

/* The part of output_commit before the rename: write, flush and check
 * (an output written in place is done then).  Nothing is forced to the
 * disk, as the shell's > forces nothing: an fsync would be a large part
 * of a run's time, and the rename is atomic against errors and
 * signals without it (not against a crash of the system; ext4 starts
 * the data's writeback when a rename replaces a file).  On failure the
 * output is given up. */
static enum attn_status
output_finish(struct output *s, struct attn_error *err)
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
		unwatch(s);
		/* A reader that left (head -1, with SIGPIPE ignored) is not
		 * worth a message: the status says it. */
		if (failed && saved == EPIPE)
			return attn_error_set(err, ATTN_ERR_IO, NULL, 0, 0, "%s", "");
		if (failed)
			return write_error(err, NULL, name, saved);
		return ATTN_OK;
	}
	target = s->real != NULL ? s->real : s->path;
	if (!failed && fchmod(fileno(s->fp), target_mode(target)) != 0) {
		failed = 1;
		saved = errno;
	}
	if (fclose(s->fp) != 0 && !failed) {
		failed = 1;
		saved = errno;
	}
	s->fp = NULL;
	if (failed) {
		output_abort(s);
		return write_error(err, s->path, NULL, saved);
	}
	return ATTN_OK;
}

/* Rename s's temporary file (finished) over its target. */
static enum attn_status
output_rename(struct output *s, struct attn_error *err)
{
	const char *target = s->real != NULL ? s->real : s->path;
	int saved;

	if (s->tmp == NULL)
		return ATTN_OK;		/* written in place */
	if (rename(s->tmp, target) != 0) {
		saved = errno;
		output_abort(s);
		return attn_error_set(err, ATTN_ERR_CANTCREAT, s->path, 0, 0,
		    "cannot replace: %s", strerror(saved));
	}
	unwatch(s);
	free(s->tmp);
	s->tmp = NULL;
	return ATTN_OK;
}

enum attn_status
output_commit(struct output *s, struct attn_error *err)
{
	return output_commit_all(&s, 1, err);
}

/* Where output s is finished among several: temporary files first (their
 * writing can still be undone), then files and devices written in
 * place, standard output last (what reached it cannot be taken back). */
static int
finish_rank(const struct output *s)
{
	return s->tmp != NULL ? 0 : output_is_stdout(s) ? 2 : 1;
}

enum attn_status
output_commit_all(struct output *const *s, size_t n, struct attn_error *err)
{
	enum attn_status status = ATTN_OK;
	sigset_t old;
	size_t i;
	int rank;

	/* Everything written and checked before anything is replaced. */
	for (rank = 0; rank <= 2 && status == ATTN_OK; rank++)
		for (i = 0; i < n && status == ATTN_OK; i++)
			if (finish_rank(s[i]) == rank)
				status = output_finish(s[i], err);
	if (status == ATTN_OK) {
		signals_hold(&old);
		for (i = 0; i < n && status == ATTN_OK; i++)
			status = output_rename(s[i], err);
		signals_release(&old);
	}
	for (i = 0; i < n; i++)
		output_abort(s[i]);
	return status;
}

void
output_abort(struct output *s)
{
	if (s->fp != NULL && s->fp != stdout)
		fclose(s->fp);
	s->fp = NULL;
	free(s->real);
	s->real = NULL;
	if (s->tmp != NULL) {
		signals_unpend(s->tmp);
		unlink(s->tmp);
		free(s->tmp);
		s->tmp = NULL;
	}
	unwatch(s);
}
