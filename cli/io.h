/*
 * io.h - files in and out: whole inputs mapped or read into memory,
 * output written to a temporary file that replaces FILE only when
 * complete, and messages on stderr with the names in them escaped.
 */
#ifndef ATTN_IO_H
#define ATTN_IO_H

#include <stdio.h>

#include "attn.h"

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

/* Flush and check everything written; for a temporary file, fsync it
 * and rename it over the target (on failure the target is left as it
 * was).  Puts the signal dispositions back. */
enum attn_status sink_commit(struct sink *s, struct attn_error *err);

/* Give up: remove the temporary file and put the signal dispositions
 * back.  Safe after a failed commit. */
void sink_abort(struct sink *s);

/* Whether output to path (NULL: standard output; /dev/stdout and the
 * like: that descriptor of attn's) would reach a terminal. */
int io_is_terminal(const char *path);

/* s into fp with control characters and what is not UTF-8 escaped as
 * attn_text_escape does: for file names, labels and option values. */
void io_put_text(FILE *fp, const char *s);

/* One line on stderr, "attn: KIND FILE:LINE:COL: message" with the parts
 * that apply (kind "" or "warning: "), FILE and the message escaped by
 * io_put_text. */
void io_report(const char *kind, const struct attn_error *err);

#endif
