/*
 * output.h - where output goes: a file written as the shell's > would
 * write it, but through a temporary file that replaces FILE only when
 * complete, and the checks on an output's name that the rules between
 * options make before any input is read.
 */
#ifndef ATTN_OUTPUT_H
#define ATTN_OUTPUT_H

#include <stdio.h>

#include "attn.h"

/* An output stream: stdout, a temporary file beside the target, or the
 * target itself written in place. */
struct output {
	FILE *fp;
	const char *path;	/* the target as named, NULL for stdout */
	char *real;		/* the end of its chain of symbolic links */
	char *tmp;		/* the temporary file's name */
	int direct;		/* written in place, no temporary file */
	int fd;			/* attn's descriptor written through, or -1 */
	int watched;		/* counted among the outputs open */
	/* What committing writes first, when set after output_open (text
	 * written to fp meanwhile goes before it). */
	const char *text;
	size_t len;
};

/*
 * Open the output for path (NULL: stdout).  Follows symbolic links to
 * the file that > would write; /dev/stdout, /dev/fd/N and the like write
 * through attn's own descriptor.  A regular file is replaced through a
 * temporary file, unless its directory does not allow that: then it is
 * written in place, as is a device or a FIFO (replacing those would
 * destroy them).  A file the user may not write is ATTN_ERR_CANTCREAT.
 * While the output is open, SIGXFSZ is ignored, and SIGINT, SIGTERM and
 * SIGHUP (unless ignored) remove the temporary file before attn dies
 * (signals.h).
 */
enum attn_status output_open(struct output *s, const char *path,
    struct attn_error *err);

/*
 * output_open where a temporary file would replace path, so that what is
 * written to s->fp meanwhile reaches the target only when committed;
 * otherwise (standard output, a descriptor, a device, a FIFO, a file
 * written in place) nothing is opened and s->fp is NULL.  An error is
 * output_open's.
 */
enum attn_status output_open_replacing(struct output *s, const char *path,
    struct attn_error *err);

/* Write s->text, flush and check everything written; for a temporary
 * file, rename it over the target (on failure the target
 * is left as it was).  Puts the signal dispositions back. */
enum attn_status output_commit(struct output *s, struct attn_error *err);

/*
 * Commit the n outputs s[0..n) together: every one written and checked
 * before any temporary file is renamed, temporary files first, then
 * what is written in place, standard output last, and at the first
 * failure the rest given up (their temporary files removed), so that a
 * failed run leaves every target as it was and prints nothing on
 * standard output (unless two outputs are written in place, when the
 * first cannot be taken back).  The renames run with SIGINT, SIGTERM and
 * SIGHUP held, so that a signal finds all of them done or none.  Every
 * output is closed afterwards.
 */
enum attn_status output_commit_all(struct output *const *s, size_t n,
    struct attn_error *err);

/* Whether s writes attn's standard output (no -o, -o -, /dev/stdout). */
int output_is_stdout(const struct output *s);

/* Give up: remove the temporary file and put the signal dispositions
 * back.  Safe after a failed commit. */
void output_abort(struct output *s);

/* Whether output to path (NULL: standard output; /dev/stdout and the
 * like: that descriptor of attn's) would reach a terminal. */
int output_is_terminal(const char *path);

/* 0 in attn-mpi (cli/mpi/main.c): mpirun gives every process a
 * pseudo-terminal for standard output, whatever the job's own is, so
 * no process can tell, and output_is_terminal takes that descriptor
 * for no terminal, as attn takes a file or a pipe. */
extern int output_stdout_known;

/* Output to path (NULL: standard output) that names a descriptor of
 * attn's (/dev/stdout, /dev/fd/N, through links too) needs it open for
 * writing: checked before attn opens any file itself, which could take
 * a number the shell left closed.  ATTN_ERR_CANTCREAT when not. */
enum attn_status output_check(const char *path, struct attn_error *err);

/* Whether output to a and to b (NULL or "-": standard output) would
 * reach the same file or pipe: the same device and inode where it
 * exists (a link, ./name, /dev/stdout and the like all resolved), the
 * same name in the same directory where it does not yet.  A character
 * device (a terminal, /dev/null) is never the same file. */
int output_same(const char *a, const char *b);

#endif
