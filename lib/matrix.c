/*
 * matrix.c - matrices as (rows, cols, stride, data), views that borrow,
 * and the overflow-checked size arithmetic every allocation goes through.
 * A matrix's numbers are charged to the memory account (memory.c);
 * attn_alloc_array's are not, since its callers free them with free().
 */
#include <stdint.h>
#include <stdio.h>
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
	void *p;

	if (attn_size_mul(n, size, &bytes) != 0)
		return NULL;
	p = malloc(bytes != 0 ? bytes : 1);
	attn_mem_advise_huge(p, bytes);
	return p;
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
	if ((m->data = attn_mem_zalloc(bytes != 0 ? bytes : 1)) == NULL) {
		char doing[96];

		snprintf(doing, sizeof doing, "allocating a %zux%zu matrix "
		    "(%zu bytes)", rows, cols, bytes);
		return attn_error_nomem(err, NULL, doing);
	}
	m->rows = rows;
	m->cols = cols;
	m->stride = cols;
	return ATTN_OK;
}

enum attn_status
attn_matrix_bytes_add(size_t *bytes, size_t rows, size_t cols,
    const char *what, struct attn_error *err)
{
	size_t n;

	if (attn_size_mul(rows, cols, &n) != 0 ||
	    attn_size_mul(n, sizeof(double), &n) != 0 ||
	    *bytes > SIZE_MAX - n)
		return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "%s of %zu rows and %zu columns is too large to address",
		    what, rows, cols);
	*bytes += n;
	return ATTN_OK;
}

/* Given back as attn_matrix_alloc charged it: rows * cols doubles, at
 * least one byte. */
void
attn_matrix_free(struct attn_matrix *m)
{
	size_t bytes = m->rows * m->cols * sizeof(double);

	attn_mem_free(m->data, bytes != 0 ? bytes : 1);
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
