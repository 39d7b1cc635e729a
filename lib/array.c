/*
 * array.c - arrays as the readers return them: their 2-D view, their
 * count and their release, and the dims of any shape counted and written
 * out ("2x3x4").  Every reader, read.c and the schemas of
 * layers and bundles build and free arrays and labels, so these sit
 * below all of them.  What an array holds was charged to the memory
 * account by size (memory.c): its numbers exactly its shape, each label
 * its own length, and that is what is given back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/*
 * A 1-D array of n numbers is a 1 x n row; a 3-D or 4-D array is seen as
 * its matrices stacked on top of each other (blocks of rows, as the csv
 * output writes stacks), since C order lays them out that way.
 */
struct attn_matrix
attn_array_matrix(const struct attn_array *a)
{
	struct attn_matrix m;
	size_t d;

	memset(&m, 0, sizeof m);
	if (a->ndim == 0)
		return m;
	if (a->ndim == 1) {
		m.rows = 1;
		m.cols = a->shape[0];
	} else {
		/* The product counts values the reader stored: no overflow. */
		m.rows = 1;
		for (d = 0; d + 1 < a->ndim; d++)
			m.rows *= a->shape[d];
		m.cols = a->shape[a->ndim - 1];
	}
	m.stride = m.cols;
	m.data = a->data;
	return m;
}

/* The readers make labels of count names, each a string of its own
 * length: that is what is given back. */
void
attn_labels_free(struct attn_labels *l)
{
	size_t i;

	for (i = 0; i < l->count; i++)
		if (l->names[i] != NULL)
			attn_mem_free(l->names[i], strlen(l->names[i]) + 1);
	attn_mem_free(l->names, l->count * sizeof *l->names);
	memset(l, 0, sizeof *l);
}

size_t
attn_dims_count(const size_t *dims, size_t n)
{
	size_t d, count = 1;

	for (d = 0; d < n; d++)
		count *= dims[d];
	return count;
}

void
attn_dims_text(char *buf, size_t size, const size_t *dims, size_t n)
{
	size_t d, len = 0;

	buf[0] = '\0';
	for (d = 0; d < n && len < size; d++)
		len += (size_t)snprintf(buf + len, size - len, d > 0 ? "x%zu" :
		    "%zu", dims[d]);
}

/* The reader allocated them: the product fits. */
size_t
attn_array_count(const struct attn_array *a)
{
	return attn_dims_count(a->shape, a->ndim);
}

/* The readers hold an array's numbers in a block of exactly its shape,
 * or read them in place (lent), where they stay the caller's. */
void
attn_array_free(struct attn_array *a)
{
	if (a->data != NULL && !a->lent)
		attn_mem_free(a->data, attn_array_count(a) * sizeof *a->data);
	attn_labels_free(&a->row_labels);
	attn_labels_free(&a->col_labels);
	memset(a, 0, sizeof *a);
}
