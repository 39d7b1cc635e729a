/*
 * render.h - output made in memory, then written in one piece: a failed
 * run writes nothing, and -o FILE (or --svg FILE) is replaced atomically
 * (output.h) or left as it was.
 */
#ifndef ATTN_RENDER_H
#define ATTN_RENDER_H

#include <stdio.h>

#include "attn.h"
#include "output.h"

struct render {
	FILE *fp;	/* write here between open and close */
	char *text;	/* what was written, after close */
	size_t len;
	struct output file;	/* with direct: where fp writes */
	int direct;		/* fp is file's, until written or freed */
};

/* Start an empty text in memory. */
enum attn_status render_open(struct render *r, struct attn_error *err);

/* Start the text that render_write writes to path: straight into the
 * temporary file that is to replace path when there is one
 * (output_open_replacing: -o FILE, most often), so that it is not held
 * in memory nor copied there, else in memory as render_open.  The rules
 * are the same: path is replaced only once all of it was written, and
 * render_free of a text not written removes the temporary file. */
enum attn_status render_open_to(struct render *r, const char *path,
    struct attn_error *err);

/* Finish it: returns status, or ATTN_ERR_NOMEM when status is ATTN_OK
 * and memory ran out. */
enum attn_status render_close(struct render *r, enum attn_status status,
    struct attn_error *err);

/* Write the text to path (NULL: standard output), as output.h writes;
 * render_open_to's text to its path, which it was opened for. */
enum attn_status render_write(struct render *r, const char *path,
    struct attn_error *err);

/* Write a to path_a and, unless b is NULL, b to path_b, together
 * (output_commit_all): both written or neither, and nothing on standard
 * output unless all the rest was written.  Texts of render_open. */
enum attn_status render_write_both(const struct render *a,
    const char *path_a, const struct render *b, const char *path_b,
    struct attn_error *err);

void render_free(struct render *r);

#endif
