/*
 * io.h - files in and out: whole inputs mapped or read into memory,
 * output written to a temporary file that replaces FILE only when
 * complete, and messages on stderr with the names in them escaped.
 */
#ifndef ATTN_IO_H
#define ATTN_IO_H

#include <stdio.h>

#include "attn.h"
#include "attn_io.h"

/* The name standard input goes by in messages. */
#define STDIN_NAME "<stdin>"

/* An input file, whole: len bytes at buf, then a NUL. */
struct io_input {
	char *buf;
	size_t len;
	size_t span;	/* the bytes mapped; 0 when buf is malloc'd */
};

/*
 * Read all of path ("-" for standard input) into in, to be given back
 * with io_release: a regular file is mapped (read-only, with SIGBUS
 * caught should it shrink meanwhile: one line on stderr, exit 74), any
 * other read into memory.  An input that would not fit in the memory
 * limit once parsed (memory.h) is refused with ATTN_ERR_NOMEM as soon as
 * the bytes read show it, rather than read and parsed until the system
 * kills attn.
 */
enum attn_status io_slurp(const char *path, struct io_input *in,
    struct attn_error *err);

/* Give back what io_slurp took (a zeroed in is fine). */
void io_release(struct io_input *in);

/* An output stream: stdout, a temporary file beside the target, or the
 * target itself written in place. */
struct sink {
	FILE *fp;
	const char *path;	/* the target as named, NULL for stdout */
	char *real;		/* the end of its chain of symbolic links */
	char *tmp;		/* the temporary file's name */
	int direct;		/* written in place, no temporary file */
	int fd;			/* attn's descriptor written through, or -1 */
	int watched;		/* counted among the sinks open */
	/* What committing writes first, when set after sink_open (text
	 * written to fp meanwhile goes before it). */
	const char *text;
	size_t len;
};

/*
 * Open the sink for path (NULL: stdout).  Follows symbolic links to the
 * file that > would write; /dev/stdout, /dev/fd/N and the like write
 * through attn's own descriptor.  A regular file is replaced through a
 * temporary file, unless its directory does not allow that: then it is
 * written in place, as is a device or a FIFO (replacing those would
 * destroy them).  A file the user may not write is ATTN_ERR_CANTCREAT.
 * While the sink is open, SIGXFSZ is ignored, and SIGINT, SIGTERM and
 * SIGHUP (unless ignored) remove the temporary file before attn dies.
 */
enum attn_status sink_open(struct sink *s, const char *path,
    struct attn_error *err);

/* Write s->text, flush and check everything written; for a temporary
 * file, fsync it and rename it over the target (on failure the target
 * is left as it was).  Puts the signal dispositions back. */
enum attn_status sink_commit(struct sink *s, struct attn_error *err);

/*
 * Commit the n sinks s[0..n) together: every one written and checked
 * before any temporary file is renamed, temporary files first, then
 * what is written in place, standard output last, and at the first
 * failure the rest given up (their temporary files removed), so that a
 * failed run leaves every target as it was and prints nothing on
 * standard output (unless two sinks are written in place, when the first
 * cannot be taken back).  The renames run with SIGINT, SIGTERM and SIGHUP
 * held, so that a signal finds all of them done or none.  Every sink is
 * closed afterwards.
 */
enum attn_status sink_commit_all(struct sink *const *s, size_t n,
    struct attn_error *err);

/* The part of sink_commit before the rename: write, flush, check and
 * sync (a sink written in place is done then).  On failure the sink is
 * given up. */
enum attn_status sink_finish(struct sink *s, struct attn_error *err);

/* Whether s writes attn's standard output (no -o, -o -, /dev/stdout). */
int sink_is_stdout(const struct sink *s);

/* Give up: remove the temporary file and put the signal dispositions
 * back.  Safe after a failed commit. */
void sink_abort(struct sink *s);

/* Whether output to path (NULL: standard output; /dev/stdout and the
 * like: that descriptor of attn's) would reach a terminal. */
int io_is_terminal(const char *path);

/* Output to path (NULL: standard output) that names a descriptor of
 * attn's (/dev/stdout, /dev/fd/N, through links too) needs it open for
 * writing: checked before attn opens any file itself, which could take
 * a number the shell left closed.  ATTN_ERR_CANTCREAT when not. */
enum attn_status io_check_output(const char *path, struct attn_error *err);

/* Descriptor fd, named path, is open for writing; else
 * ATTN_ERR_CANTCREAT. */
enum attn_status io_check_descriptor(const char *path, int fd,
    struct attn_error *err);

/* Whether output to a and to b (NULL or "-": standard output) would
 * reach the same file or pipe: the same device and inode where it
 * exists (a link, ./name, /dev/stdout and the like all resolved), the
 * same name in the same directory where it does not yet.  A character
 * device (a terminal, /dev/null) is never the same file. */
int io_same_output(const char *a, const char *b);

/* s into fp with control characters and what is not UTF-8 escaped as
 * attn_text_escape does: for file names, labels and option values. */
void io_put_text(FILE *fp, const char *s);

/* One line on stderr, "attn: KIND FILE:LINE:COL: message" with the parts
 * that apply (kind "" or "warning: "), FILE and the message escaped by
 * io_put_text. */
void io_report(const char *kind, const struct attn_error *err);

#endif
