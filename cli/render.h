/*
 * render.h - output made in memory, then written in one piece: a failed
 * run writes nothing, and -o FILE (or --svg FILE) is replaced atomically
 * (output.h) or left as it was.
 */
#ifndef ATTN_RENDER_H
#define ATTN_RENDER_H

#include <stdio.h>

#include "attn.h"

struct render {
	FILE *fp;	/* write here between open and close */
	char *text;	/* what was written, after close */
	size_t len;
};

/* Start an empty text in memory. */
enum attn_status render_open(struct render *r, struct attn_error *err);

/* Finish it: returns status, or ATTN_ERR_NOMEM when status is ATTN_OK
 * and memory ran out. */
enum attn_status render_close(struct render *r, enum attn_status status,
    struct attn_error *err);

/* Write the text to path (NULL: standard output), as output.h writes. */
enum attn_status render_write(const struct render *r, const char *path,
    struct attn_error *err);

/* Write a to path_a and, unless b is NULL, b to path_b, together
 * (output_commit_all): both written or neither, and nothing on standard
 * output unless all the rest was written. */
enum attn_status render_write_both(const struct render *a,
    const char *path_a, const struct render *b, const char *path_b,
    struct attn_error *err);

void render_free(struct render *r);

#endif
