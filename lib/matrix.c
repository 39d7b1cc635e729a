/*
 * matrix.c - matrices as (rows, cols, stride, data), views that borrow,
 * and the overflow-checked size arithmetic every allocation goes through.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int
attn_size_mul(size_t a, size_t b, size_t *out)
{
	if (a != 0 && b > SIZE_MAX / a)
		return -1;
	*out = a * b;
	return 0;
}

void *
attn_alloc_array(size_t n, size_t size)
{
	size_t bytes;

	if (attn_size_mul(n, size, &bytes) != 0)
		return NULL;
	return malloc(bytes != 0 ? bytes : 1);
}

char *
attn_str_ndup(const char *s, size_t len)
{
	char *p = malloc(len + 1);

	if (p == NULL)
		return NULL;
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

/* Doubling keeps every reader linear however its input is shaped. */
void *
attn_grow_array(void *p, size_t *cap, size_t need, size_t elsize)
{
	size_t ncap = *cap != 0 ? *cap : 16, bytes;
	void *np;

	while (ncap < need)
		if (attn_size_mul(ncap, 2, &ncap) != 0)
			return NULL;
	if (attn_size_mul(ncap, elsize, &bytes) != 0)
		return NULL;
	if ((np = realloc(p, bytes)) == NULL)
		return NULL;
	*cap = ncap;
	return np;
}

enum attn_status
attn_matrix_alloc(struct attn_matrix *m, size_t rows, size_t cols,
    struct attn_error *err)
{
	size_t n, bytes;

	memset(m, 0, sizeof *m);
	if (attn_size_mul(rows, cols, &n) != 0 ||
	    attn_size_mul(n, sizeof(double), &bytes) != 0)
		return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "a %zux%zu matrix is too large to address", rows, cols);
	m->data = calloc(n != 0 ? n : 1, sizeof(double));
	if (m->data == NULL)
		return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "out of memory allocating a %zux%zu matrix (%zu bytes)",
		    rows, cols, bytes);
	m->rows = rows;
	m->cols = cols;
	m->stride = cols;
	return ATTN_OK;
}

void
attn_matrix_free(struct attn_matrix *m)
{
	free(m->data);
	memset(m, 0, sizeof *m);
}

struct attn_matrix
attn_matrix_view(const struct attn_matrix *m, size_t r0, size_t nr, size_t c0,
    size_t nc)
{
	struct attn_matrix v;

	v.rows = nr;
	v.cols = nc;
	v.stride = m->stride;
	v.data = m->data + r0 * m->stride + c0;
	return v;
}
