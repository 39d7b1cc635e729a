/*
 * read_jsonl.c - JSON Lines: one JSON array a line, as jq -c writes them
 * (.jsonl, .ndjson, or text whose first line is one array with more
 * lines after it: read.c guesses).  Each line is a row (a 1-D array) and
 * the lines are a matrix, or each line a matrix (2-D) and the lines a
 * stack of them, one per batch.  Blank lines are skipped, as the text
 * reader skips them.
 *
 * Each line is read by the JSON reader (attn_read_json) on its own bytes,
 * so that its grammar, numbers and value rules are JSON's, word for word;
 * the position of an error inside a line is then moved to that line of
 * the file.  What is told here is what no line knows alone: a line of
 * another shape than the first (ragged, as in a JSON array of arrays).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The data of the lines so far and the shape of the first. */
struct lines {
	double *data;
	size_t n, cap;		/* values */
	size_t count;		/* lines read */
	size_t ndim;		/* of each line: 1 or 2 */
	size_t shape[2];
};

/* Whether buf[ls, le) holds only blanks. */
static int
blank_line(const char *buf, size_t ls, size_t le)
{
	while (ls < le && (buf[ls] == ' ' || buf[ls] == '\t'))
		ls++;
	return ls == le;
}

/*
 * Read line buf[ls, le), the lineno-th of the file (from 1), and add its
 * numbers to *l.  An error of the JSON reader is moved to the line; one
 * of the line's shape is told at its first non-blank byte.
 */
static enum attn_status
read_line(const char *name, const char *buf, size_t len, size_t ls,
    size_t le, size_t lineno, unsigned flags, struct lines *l,
    struct attn_error *err)
{
	struct attn_array a;
	enum attn_status st;
	char msg[ATTN_MSG_MAX];
	size_t at = ls, count, d, idx[2] = { 0, 0 };
	double *nd;

	/* The line's JSON reader would skip a BOM as a text's first bytes;
	 * in the file only its first line may start with one, as in JSON
	 * and CSV. */
	if (lineno > 1 && attn_bom_len(buf + ls, le - ls) > 0)
		return attn_error_at(err, ATTN_ERR_DATA, name, buf, len, ls,
		    "a byte order mark (U+FEFF) starts this line: only the "
		    "first line of a file may start with one");
	if ((st = attn_read_json(name, buf + ls, le - ls, flags, &a, err)) !=
	    ATTN_OK) {
		if (err != NULL && err->line > 0)
			err->line += lineno - 1;
		/* a row a line: no brackets around them */
		if (err != NULL && strcmp(err->msg, attn_json_rows_msg) == 0)
			snprintf(err->msg, sizeof err->msg, "several arrays on "
			    "one line: JSON Lines holds one array a line, a "
			    "row (or every line a matrix)");
		return st;
	}
	while (buf[at] == ' ' || buf[at] == '\t')
		at++;
	msg[0] = '\0';
	if (a.ndim > 2)
		snprintf(msg, sizeof msg, "a %zu-D array on a line: in JSON "
		    "Lines each line is a row (1-D) or a matrix (2-D)",
		    a.ndim);
	else if (l->count > 0 && a.ndim != l->ndim)
		snprintf(msg, sizeof msg, "a %s on this line but a %s on the "
		    "first: in JSON Lines every line is a row (1-D), or every "
		    "line a matrix (2-D)", a.ndim == 1 ? "row" : "matrix",
		    l->ndim == 1 ? "row" : "matrix");
	else if (l->count > 0)
		for (d = 0; d < a.ndim && msg[0] == '\0'; d++)
			if (a.shape[d] != l->shape[d]) {
				/* row r, or matrix m (its rows, or the
				 * values of its row 1) */
				idx[0] = l->count;
				attn_ragged_msg(msg, sizeof msg, a.ndim + 1,
				    d + 1, idx, a.shape[d], l->shape[d]);
			}
	if (msg[0] != '\0') {
		attn_array_free(&a);
		return attn_error_at(err, ATTN_ERR_DATA, name, buf, len, at,
		    "%s", msg);
	}
	if (l->count == 0) {
		l->ndim = a.ndim;
		memcpy(l->shape, a.shape, sizeof l->shape);
	}
	count = a.ndim == 1 ? a.shape[0] : a.shape[0] * a.shape[1];
	if (l->n + count > l->cap) {
		if ((nd = attn_grow_array(l->data, &l->cap, l->n + count,
		    sizeof *nd)) == NULL) {
			attn_array_free(&a);
			return attn_error_input_nomem(err, name,
			    "reading JSON Lines");
		}
		l->data = nd;
	}
	memcpy(l->data + l->n, a.data, count * sizeof *nd);
	l->n += count;
	l->count++;
	attn_array_free(&a);
	return ATTN_OK;
}

enum attn_status
attn_read_jsonl(const char *name, const char *buf, size_t len,
    unsigned flags, struct attn_array *out, struct attn_error *err)
{
	struct lines l;
	enum attn_status st;
	const char *nl;
	size_t i, end, le, lineno = 1;

	memset(out, 0, sizeof *out);
	memset(&l, 0, sizeof l);
	/* Once for the whole file, for its own position (a line's reader
	 * would say it again at each line). */
	if ((st = attn_encoding_fault(err, name, buf, len, "JSON")) !=
	    ATTN_OK)
		return st;
	for (i = 0; i < len; i = end + 1, lineno++) {
		nl = memchr(buf + i, '\n', len - i);
		end = nl != NULL ? (size_t)(nl - buf) : len;
		le = end > i && buf[end - 1] == '\r' ? end - 1 : end;
		/* A BOM starts the first line, which its reader skips. */
		if (blank_line(buf, i + (i == 0 ? attn_bom_len(buf, len) : 0),
		    le))
			continue;
		if ((st = read_line(name, buf, len, i, le, lineno, flags, &l,
		    err)) != ATTN_OK) {
			attn_mem_free(l.data, l.cap * sizeof *l.data);
			return st;
		}
	}
	if (l.count == 0)
		return attn_error_at(err, ATTN_ERR_DATA, name, buf, len, len,
		    "no JSON lines: empty matrix");
	out->ndim = l.ndim + 1;
	out->shape[0] = l.count;
	out->shape[1] = l.shape[0];
	out->shape[2] = l.ndim == 2 ? l.shape[1] : 0;
	/* exactly its numbers, as arrays hold them */
	out->data = attn_mem_realloc(l.data, l.cap * sizeof *l.data,
	    l.n * sizeof *l.data);
	return ATTN_OK;
}
