/*
 * render.c - output rendered into memory (memory_stream_open, which keeps
 * it within the memory limit), then written through output.c, so that
 * nothing reaches a file or the terminal until all of it was made.
 * main.c's output and --svg, and attn gen, go this way.  Output to a
 * file that a temporary file replaces (render_open_to: -o FILE, most
 * often) goes straight into the temporary file instead, under the same
 * rule (FILE is replaced only once all of it was written): not held in
 * memory, nor copied there first, into pages never touched before.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "attn_private.h"
#include "memory.h"
#include "output.h"
#include "render.h"

enum attn_status
render_open(struct render *r, struct attn_error *err)
{
	memset(r, 0, sizeof *r);
	if ((r->fp = memory_stream_open(&r->text, &r->len)) == NULL)
		return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "out of memory");
	return ATTN_OK;
}

enum attn_status
render_open_to(struct render *r, const char *path, struct attn_error *err)
{
	struct output file;
	enum attn_status status;

	if ((status = output_open_replacing(&file, path, err)) != ATTN_OK)
		return status;
	if (file.fp == NULL)
		return render_open(r, err);
	memset(r, 0, sizeof *r);
	r->file = file;
	r->fp = file.fp;
	r->direct = 1;
	return ATTN_OK;
}

enum attn_status
render_close(struct render *r, enum attn_status status, struct attn_error *err)
{
	FILE *fp = r->fp;

	r->fp = NULL;
	if (r->direct)
		return status;	/* the file's, until render_write */
	return fp != NULL ? memory_stream_close(fp, status, err) : status;
}

enum attn_status
render_write(struct render *r, const char *path, struct attn_error *err)
{
	if (r->direct) {
		r->direct = 0;
		return output_commit(&r->file, err);
	}
	return render_write_both(r, path, NULL, NULL, err);
}

enum attn_status
render_write_both(const struct render *a, const char *path_a,
    const struct render *b, const char *path_b, struct attn_error *err)
{
	struct output out_a, out_b;
	struct output *const both[2] = { &out_a, &out_b };
	enum attn_status status;

	if ((status = output_open(&out_a, path_a, err)) != ATTN_OK)
		return status;
	if (b != NULL &&
	    (status = output_open(&out_b, path_b, err)) != ATTN_OK) {
		output_abort(&out_a);
		return status;
	}
	out_a.text = a->text;
	out_a.len = a->len;
	if (b != NULL) {
		out_b.text = b->text;
		out_b.len = b->len;
	}
	return output_commit_all(both, b != NULL ? 2 : 1, err);
}

void
render_free(struct render *r)
{
	if (r->direct)
		output_abort(&r->file);
	else if (r->fp != NULL)
		memory_stream_close(r->fp, ATTN_OK, NULL);
	attn_block_free(r->text);
	memset(r, 0, sizeof *r);
}
