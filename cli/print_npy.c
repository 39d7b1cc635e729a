/*
 * print_npy.c - NumPy .npy output: one stage, in the shape attn_stage_shape
 * gives it (batch, head and layout levels as every format has them), as
 * float64, or float32 with --npy-dtype f4, little-endian whatever the
 * machine.
 *
 * The header is what numpy.save (1.24 and later) writes for the same
 * array: format version 1.0, the dict, 21 - len(str(shape[0])) spaces of
 * room for the first dim to grow, then spaces up to a multiple of 64
 * bytes (a whole 64 more when it already is one, as numpy's _wrap_header
 * does) and '\n'.  So the file is byte for byte the one numpy would have
 * written, and numpy.load reads it with no warning.  The
 * numbers are the stage's own bits: a float64 file reads back into attn,
 * or into NumPy, exactly.  A float32 file holds each number rounded to
 * float32; a finite number that would round to infinity there is a data
 * error naming it, rather than an inf that attn (and the user's kernel
 * test) would then refuse or misread.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "attn_io.h"
#include "print.h"

/* numpy's ARRAY_ALIGN (the data starts at a multiple of it) and
 * GROWTH_AXIS_MAX_DIGITS. */
#define NPY_ALIGN 64
#define NPY_GROWTH_DIGITS 21

/* Write x as `size` little-endian bytes at b: a double (8) or a float
 * (4). */
static void
put_value(unsigned char *b, double x, size_t size)
{
	float f = (float)x;
	uint64_t u = 0;
	uint32_t u32;
	size_t k;

	if (size == 4) {
		memcpy(&u32, &f, 4);
		u = u32;
	} else {
		memcpy(&u, &x, 8);
	}
	for (k = 0; k < size; k++)
		b[k] = (unsigned char)(u >> (8 * k) & 0xFF);
}

/* The n values at x: a buffer's worth to each fwrite, not one fwrite a
 * value. */
static void
put_values(FILE *fp, const double *x, size_t n, size_t size)
{
	unsigned char b[8192];
	size_t i, k = 0;

	for (i = 0; i < n; i++) {
		if (k == sizeof b) {
			fwrite(b, 1, k, fp);
			k = 0;
		}
		put_value(b + k, x[i], size);
		k += size;
	}
	fwrite(b, 1, k, fp);
}

/* The header of an array of dims dim[0..ndim) of `size`-byte floats:
 * magic, version 1.0, its length, the dict, padding. */
static void
put_header(FILE *fp, const size_t *dim, size_t ndim, size_t size)
{
	const char *descr = size == 4 ? "<f4" : "<f8";
	char dict[256], first[24];
	size_t n, d, grow, len, pad;

	n = (size_t)snprintf(dict, sizeof dict, "{'descr': '%s', "
	    "'fortran_order': False, 'shape': (", descr);
	for (d = 0; d < ndim; d++)
		n += (size_t)snprintf(dict + n, sizeof dict - n, "%s%zu",
		    d > 0 ? ", " : "", dim[d]);
	n += (size_t)snprintf(dict + n, sizeof dict - n, "), }");
	snprintf(first, sizeof first, "%zu", dim[0]);
	grow = strlen(first) < NPY_GROWTH_DIGITS ?
	    NPY_GROWTH_DIGITS - strlen(first) : 0;
	/* After 10 bytes of magic, version and length: the dict, its
	 * growth room, the padding and '\n'. */
	len = n + grow + 1;
	pad = NPY_ALIGN - (10 + len) % NPY_ALIGN;
	fwrite("\x93NUMPY\x01\x00", 1, 8, fp);
	putc((int)((len + pad) & 0xFF), fp);
	putc((int)((len + pad) >> 8), fp);
	fwrite(dict, 1, n, fp);
	for (d = 0; d < grow + pad; d++)
		putc(' ', fp);
	putc('\n', fp);
}

/* The least magnitude that rounds to infinity in float32: FLT_MAX and
 * half its last place (the tie rounds up, to the even 2^128). */
#define F4_OVERFLOW 0x1.ffffffp+127

/* The first of the n values at x that is finite but rounds to infinity
 * in float32, or n. */
static size_t
beyond_float32(const double *x, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (isfinite(x[i]) && fabs(x[i]) >= F4_OVERFLOW)
			return i;
	return n;
}

/* Value `at` of stage s (flattened to shape sh) is beyond float32: a
 * data error naming it by its NumPy index. */
static enum attn_status
f4_overflow(const struct printer *p, enum attn_stage s,
    const struct attn_shape *sh, size_t at, double x)
{
	char idx[128], num[ATTN_NUM_MAX];

	print_index(idx, sizeof idx, sh->dim, sh->ndim, at);
	attn_format_number(num, x, 0, 0);
	return attn_error_set(p->err, ATTN_ERR_DATA, NULL, 0, 0,
	    "--npy-dtype f4: %s[%s] is %s, beyond float32's range (its "
	    "largest is 3.4028235e+38): write float64 (--npy-dtype f8)",
	    attn_stage_table[s].name, idx, num);
}

enum attn_status
print_npy(const struct printer *p)
{
	const enum attn_stage s = p->o->stages[0];
	const size_t size = p->o->npy_f4 ? 4 : 8;
	struct attn_shape sh;
	double *flat;
	size_t n, at;

	attn_stage_shape(p->stages, s, &sh);
	n = attn_shape_count(&sh);
	if ((flat = attn_alloc_array(n, sizeof *flat)) == NULL)
		return attn_error_set(p->err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "out of memory writing %zu numbers", n);
	attn_stage_flatten(p->stages, s, flat);
	if (size == 4 && (at = beyond_float32(flat, n)) < n) {
		enum attn_status status = f4_overflow(p, s, &sh, at, flat[at]);

		free(flat);
		return status;
	}
	put_header(p->fp, sh.dim, sh.ndim, size);
	put_values(p->fp, flat, n, size);
	free(flat);
	return ATTN_OK;
}

void
print_npy_array(FILE *fp, const struct attn_matrix *m, const size_t *dim,
    size_t ndim, int f4)
{
	const size_t size = f4 ? 4 : 8;
	size_t i;

	put_header(fp, dim, ndim, size);
	for (i = 0; i < m->rows; i++)
		put_values(fp, attn_at(m, i, 0), m->cols, size);
}
