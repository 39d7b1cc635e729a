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
 *
 * print_npy_stage is the one encoding of a stage: -f npz (print_npz.c)
 * puts the same bytes in its archive.  Where the machine is
 * little-endian and the stage's doubles lie in C order (a stage of one
 * head, or heads in the layout the stage is held in), or in C order's
 * runs of RUN_LEAST numbers or more (a row of the last dim each, where
 * bhsd keeps its heads apart), they are those bytes, written from where
 * they lie (attn_stage_c_runs); otherwise the numbers are flattened
 * into a buffer charged to the memory limit and encoded there.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "attn_io.h"
#include "memory.h"
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

/* The n values at x as the file holds them, n * size bytes at b. */
static void
encode_values(unsigned char *b, const double *x, size_t n, size_t size)
{
	size_t i;

	for (i = 0; i < n; i++)
		put_value(b + i * size, x[i], size);
}

/* The n values at x: a buffer's worth to each fwrite, not one fwrite a
 * value. */
static void
put_values(FILE *fp, const double *x, size_t n, size_t size)
{
	unsigned char b[8192];
	size_t i, m;

	for (i = 0; i < n; i += m) {
		m = n - i < sizeof b / size ? n - i : sizeof b / size;
		encode_values(b, x + i, m, size);
		fwrite(b, 1, m * size, fp);
	}
}

/* The header of an array of dims dim[0..ndim) of `size`-byte floats
 * into out (NPY_HEAD_MAX bytes): magic, version 1.0, its length, the
 * dict, padding.  Returns its length. */
static size_t
npy_header(char *out, const size_t *dim, size_t ndim, size_t size)
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
	memcpy(out, "\x93NUMPY\x01\x00", 8);
	out[8] = (char)((len + pad) & 0xFF);
	out[9] = (char)((len + pad) >> 8);
	memcpy(out + 10, dict, n);
	memset(out + 10 + n, ' ', grow + pad);
	out[10 + len + pad - 1] = '\n';
	return 10 + len + pad;
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

/* Whether a double's bytes in memory are those a "<f8" file holds. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define NPY_NATIVE 1
#else
#define NPY_NATIVE 0
#endif

/* Runs of a stage shorter than this many numbers are copied, not
 * written where they lie. */
#define RUN_LEAST 32

/* attn_stage_c_runs' run: the next piece of a's numbers. */
static void
add_run(void *arg, const double *x, size_t n)
{
	struct npy_stage *a = arg;

	a->pieces[a->npieces].bytes = x;
	a->pieces[a->npieces++].len = n * sizeof *x;
}

enum attn_status
print_npy_stage(const struct printer *p, enum attn_stage s,
    struct npy_stage *a)
{
	struct attn_shape sh;
	char doing[96];
	double *flat;
	size_t at, runs;

	memset(a, 0, sizeof *a);
	a->size = p->o->npy_f4 ? 4 : 8;
	attn_stage_shape(p->stages, s, &sh);
	a->n = attn_shape_count(&sh);
	a->pieces = a->two;
	a->npieces = 2;
	a->two[0].bytes = a->head;
	a->two[0].len = npy_header(a->head, sh.dim, sh.ndim, a->size);
	runs = attn_stage_c_runs(p->stages, s, NULL, NULL);
	snprintf(doing, sizeof doing, "writing %s as .npy (%zu numbers)",
	    attn_stage_table[s].name, a->n);
	if (runs == 0) {
		a->npieces = 1;		/* the header alone */
		return ATTN_OK;
	}
	/* The numbers are written where they lie when they are one run
	 * (after the header, in two), or runs of RUN_LEAST numbers or more,
	 * a piece each (a piece takes 16 bytes: runs + 1 pieces take less
	 * than the n doubles held already); shorter ones are copied. */
	if (a->size == 8 && NPY_NATIVE &&
	    (runs == 1 || a->n / runs >= RUN_LEAST)) {
		if (runs > 1) {
			a->held_bytes = (runs + 1) * sizeof *a->pieces;
			if ((a->held = memory_buffer(a->held_bytes, doing,
			    p->err)) == NULL)
				return ATTN_ERR_NOMEM;
			a->pieces = a->held;
			a->pieces[0] = a->two[0];
		}
		a->npieces = 1;
		attn_stage_c_runs(p->stages, s, add_run, a);
		return ATTN_OK;
	}
	/* n doubles are held already, as the stage: n * 8 fits */
	if ((flat = memory_buffer(a->n * sizeof *flat, doing, p->err)) ==
	    NULL)
		return ATTN_ERR_NOMEM;
	a->held = flat;
	a->held_bytes = a->n * sizeof *flat;
	attn_stage_flatten(p->stages, s, flat);
	if (a->size == 4 && (at = beyond_float32(flat, a->n)) < a->n) {
		enum attn_status status = f4_overflow(p, s, &sh, at,
		    flat[at]);

		print_npy_stage_free(a);
		return status;
	}
	/* In place: number i's bytes go where number i or one before it
	 * was, after it was read. */
	if (a->size != 8 || !NPY_NATIVE)
		encode_values((unsigned char *)flat, flat, a->n, a->size);
	a->two[1].bytes = flat;
	a->two[1].len = a->n * a->size;
	return ATTN_OK;
}

void
print_npy_stage_free(struct npy_stage *a)
{
	if (a->held != NULL)
		memory_buffer_free(a->held, a->held_bytes);
	memset(a, 0, sizeof *a);
}

enum attn_status
print_npy(const struct printer *p)
{
	struct npy_stage a;
	enum attn_status status;
	size_t k;

	if ((status = print_npy_stage(p, p->o->stages[0], &a)) != ATTN_OK)
		return status;
	for (k = 0; k < a.npieces; k++)
		fwrite(a.pieces[k].bytes, 1, a.pieces[k].len, p->fp);
	print_npy_stage_free(&a);
	return ATTN_OK;
}

void
print_npy_array(FILE *fp, const struct attn_matrix *m, const size_t *dim,
    size_t ndim, int f4)
{
	const size_t size = f4 ? 4 : 8;
	char head[NPY_HEAD_MAX];
	size_t i;

	fwrite(head, 1, npy_header(head, dim, ndim, size), fp);
	for (i = 0; i < m->rows; i++)
		put_values(fp, attn_at(m, i, 0), m->cols, size);
}
