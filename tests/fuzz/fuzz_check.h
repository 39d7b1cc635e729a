/*
 * fuzz_check.h - the invariants every fuzz harness asserts about what
 * libattn hands back, so that a wrong answer is a crash libFuzzer keeps,
 * not only an out-of-bounds access.
 *
 * A harness calls fuzz_check_error() after a failed call and
 * fuzz_check_array() after a successful read.  A broken invariant prints
 * one line naming it and aborts: libFuzzer then saves the input as a crash.
 * Header-only (static functions, and UBSan's options) so that each
 * harness is one source file.
 */
#ifndef ATTN_FUZZ_CHECK_H
#define ATTN_FUZZ_CHECK_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"

#if defined(__GNUC__)
#define FUZZ_UNUSED __attribute__((unused))
#else
#define FUZZ_UNUSED
#endif

/* The entry point each harness defines. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* UBSan reports with a stack, also when a reproducer is run by hand.
 * Each harness is one translation unit, so this is defined once. */
const char *__ubsan_default_options(void);

const char *
__ubsan_default_options(void)
{
	return "print_stacktrace=1";
}

/* Print why, then abort so that libFuzzer records the input. */
static FUZZ_UNUSED void
fuzz_fail(const char *what, const struct attn_error *err)
{
	fprintf(stderr, "fuzz invariant broken: %s\n", what);
	if (err != NULL)
		fprintf(stderr, "  status %d, %s:%zu:%zu: %.*s\n",
		    (int)err->status, err->file != NULL ? err->file : "(null)",
		    err->line, err->col, ATTN_MSG_MAX, err->msg);
	abort();
}

/* Lines in buf[0..len): newlines plus one. */
static FUZZ_UNUSED size_t
fuzz_lines(const char *buf, size_t len)
{
	size_t i, n = 1;

	for (i = 0; i < len; i++)
		n += buf[i] == '\n';
	return n;
}

/*
 * A failed read of buf[0..len) named name: the status is one a reader may
 * give (a data error, or out of memory), it matches err->status, the
 * message is one terminated, non-empty line, and a position, when given,
 * lies inside the input (or just past its end).
 */
static FUZZ_UNUSED void
fuzz_check_error(enum attn_status st, const struct attn_error *err,
    const char *name, const char *buf, size_t len)
{
	const char *nul;
	size_t mlen;

	if (st == ATTN_OK)
		fuzz_fail("fuzz_check_error called on success", err);
	if (st != err->status)
		fuzz_fail("returned status differs from err->status", err);
	if (st != ATTN_ERR_DATA && st != ATTN_ERR_NOMEM)
		fuzz_fail("a reader failed with a status other than a data "
		    "error or out of memory", err);
	if ((nul = memchr(err->msg, '\0', ATTN_MSG_MAX)) == NULL)
		fuzz_fail("error message not NUL-terminated", NULL);
	mlen = (size_t)(nul - err->msg);
	if (mlen == 0)
		fuzz_fail("empty error message", err);
	if (memchr(err->msg, '\n', mlen) != NULL)
		fuzz_fail("error message spans several lines", err);
	if (err->file != NULL && err->file != name)
		fuzz_fail("err->file is not the name passed in", err);
	if (err->line > 0) {
		if (err->col == 0)
			fuzz_fail("a line without a column", err);
		if (err->line > fuzz_lines(buf, len))
			fuzz_fail("error line past the end of the input", err);
		if (err->col > len + 1)
			fuzz_fail("error column past the end of the input",
			    err);
	} else if (err->col != 0) {
		fuzz_fail("a column without a line", err);
	}
}

/*
 * The notice of a successful read (a warning the CLI prints): none, or one
 * terminated line with status ATTN_OK, a file and a position inside the
 * input.
 */
static FUZZ_UNUSED void
fuzz_check_notice(const struct attn_error *n, size_t len)
{
	const char *nul = memchr(n->msg, '\0', ATTN_MSG_MAX);

	if (nul == NULL)
		fuzz_fail("notice not NUL-terminated", NULL);
	if (nul == n->msg)
		return;
	if (n->status != ATTN_OK)
		fuzz_fail("a notice with a status", n);
	if (memchr(n->msg, '\n', (size_t)(nul - n->msg)) != NULL)
		fuzz_fail("a notice spans several lines", n);
	if (n->file == NULL || n->line == 0 || n->col == 0 ||
	    n->col > len + 1)
		fuzz_fail("a notice without a position in the input", n);
}

/*
 * A successful read: 1 to 4 dimensions, none empty, no more numbers than
 * the input has bytes (every number takes at least one), every element
 * readable (ASan checks the buffer is as large as the shape says), finite
 * when ATTN_READ_FINITE asked for it, 0 or 1 in a mask, neither nan nor
 * +inf in a bias, a notice that is one line, and labels, when present,
 * one per row.
 */
static FUZZ_UNUSED void
fuzz_check_array(const struct attn_array *a, unsigned flags, size_t len)
{
	struct attn_matrix m;
	size_t d, n = 1, i, j;
	volatile double sink = 0;

	if (a->ndim < 1 || a->ndim > ATTN_MAX_DIMS)
		fuzz_fail("array with 0 or more than 4 dimensions", NULL);
	for (d = 0; d < a->ndim; d++) {
		if (a->shape[d] == 0)
			fuzz_fail("array with an empty dimension", NULL);
		if (a->shape[d] > len || n > len / a->shape[d])
			fuzz_fail("more numbers than input bytes", NULL);
		n *= a->shape[d];
	}
	if (a->data == NULL)
		fuzz_fail("array without data", NULL);
	m = attn_array_matrix(a);
	if (m.rows * m.cols != n || m.stride != m.cols || m.data != a->data)
		fuzz_fail("attn_array_matrix disagrees with the shape", NULL);
	for (i = 0; i < m.rows; i++)
		for (j = 0; j < m.cols; j++) {
			double x = *attn_at(&m, i, j);

			if ((flags & ATTN_READ_FINITE) && !isfinite(x))
				fuzz_fail("non-finite value read with "
				    "ATTN_READ_FINITE", NULL);
			if ((flags & ATTN_READ_BOOL) && x != 0.0 && x != 1.0)
				fuzz_fail("a mask value other than 0 and 1 read "
				    "with ATTN_READ_BOOL", NULL);
			if ((flags & ATTN_READ_BIAS) && (isnan(x) || x > 0) &&
			    !isfinite(x))
				fuzz_fail("nan or +inf read with ATTN_READ_BIAS",
				    NULL);
			sink += x;
		}
	(void)sink;
	fuzz_check_notice(&a->notice, len);
	if (a->row_labels.count != 0) {
		if (a->row_labels.count != m.rows)
			fuzz_fail("row labels do not match the rows", NULL);
		for (i = 0; i < a->row_labels.count; i++)
			if (a->row_labels.names[i] == NULL)
				fuzz_fail("a NULL row label", NULL);
			else
				sink += (double)strlen(a->row_labels.names[i]);
	}
}

/* Whether a and b hold the same shape and the same numbers, bit for bit
 * (any nan the same as any other). */
static FUZZ_UNUSED int
fuzz_same_array(const struct attn_array *a, const struct attn_array *b)
{
	size_t d, i, n = a->ndim > 0;

	if (a->ndim != b->ndim || memcmp(a->shape, b->shape,
	    sizeof a->shape) != 0)
		return 0;
	for (d = 0; d < a->ndim; d++)
		n *= a->shape[d];
	for (i = 0; i < n; i++)
		if (memcmp(&a->data[i], &b->data[i], sizeof(double)) != 0 &&
		    !(isnan(a->data[i]) && isnan(b->data[i])))
			return 0;
	return 1;
}

#endif /* ATTN_FUZZ_CHECK_H */
