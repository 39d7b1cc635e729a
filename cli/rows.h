/*
 * rows.h - rows of text formatted on worker threads, written in order:
 * what csv, tsv and json spend most of their time on, a number's
 * shortest text, shared among -j's threads.  The text is the same for
 * any thread count.
 */
#ifndef ATTN_ROWS_H
#define ATTN_ROWS_H

#include <stdio.h>

#include "attn.h"

/* Rows 0 .. rows-1: row(ctx, i, buf) writes row i's text into buf (at
 * least row_bytes long, and no row's text is longer) and returns its
 * length; row is called from several threads at once, each row once.
 * before (NULL for none) writes what goes before row i (its label) on
 * the calling thread, in order, just before the row's text. */
struct rows_job {
	size_t rows, row_bytes;
	size_t (*row)(const void *ctx, size_t i, char *buf);
	void (*before)(const void *ctx, size_t i, FILE *fp);
	const void *ctx;
};

/* Write the rows of job to fp in order, formatted on up to threads
 * threads (0: a thread a CPU); their buffers are charged to the memory
 * account of the calling thread.  ATTN_ERR_NOMEM when not even one row's
 * buffer can be had. */
enum attn_status rows_write(FILE *fp, size_t threads,
    const struct rows_job *job, struct attn_error *err);

#endif
