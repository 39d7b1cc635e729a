/*
 * query.c - --query I,J..: the chosen query rows, taken out of a run that
 * computed them all (see query.h).
 *
 * Every held stage is a stack of blocks of T rows (per batch, or per
 * batch and head), and so are Q, dO, the mask and bias as the run read
 * them, and grad_bias of a bias of T rows (the gradients of a bias of
 * one row and of the sinks, sums over every query, stay whole); keeping
 * rows I, J.. of each block, in the order given,
 * makes a run of fewer queries that every printer reads as it reads any
 * other.  What depends on a row's place in Q rather than in what is
 * printed (ALiBi's distance, the bottom-right offset) reads
 * o->query_row and o->query_T.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "attn_io.h"
#include "query.h"
#include "whole.h"

/* The row at *p, from 1 (whole.h's rule), followed by ',' or the end:
 * 0 with *p at that, else -1. */
static int
next_row(const char **p, size_t *row)
{
	unsigned long long v;

	if (whole_scan(p, SIZE_MAX, &v) != 0 || v == 0 ||
	    (**p != ',' && **p != '\0'))
		return -1;
	*row = (size_t)v;
	return 0;
}

enum attn_status
query_parse(const char *list, size_t *count, struct attn_error *err)
{
	const char *p = list;
	size_t n = 0, row;

	for (;;) {
		if (next_row(&p, &row) != 0)
			return whole_error(err, "--query", "query rows, "
			    "comma-separated whole numbers", 1, SIZE_MAX,
			    " (as 3,1)", list);
		n++;
		if (*p++ == '\0')
			break;
	}
	*count = n;
	return ATTN_OK;
}

/* The rows row[0..n) of each block of T rows of m, into out. */
static enum attn_status
gather(const struct attn_matrix *m, size_t T, const size_t *row, size_t n,
    struct attn_matrix *out, struct attn_error *err)
{
	const size_t blocks = m->rows / T;
	enum attn_status status;
	size_t b, k;

	if (blocks > SIZE_MAX / n)
		return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "out of memory keeping the rows of --query");
	if ((status = attn_matrix_alloc(out, blocks * n, m->cols, err)) !=
	    ATTN_OK)
		return status;
	for (b = 0; b < blocks; b++)
		for (k = 0; k < n; k++)
			if (m->cols > 0)
				memcpy(attn_at(out, b * n + k, 0),
				    attn_at(m, b * T + row[k], 0),
				    m->cols * sizeof(double));
	return ATTN_OK;
}

/* The chosen rows of input m when it is blocks of T rows (a mask or bias
 * read as a row for every key is left as it is), as own; *m then views
 * own. */
static enum attn_status
gather_input(struct attn_matrix *m, size_t blocks, size_t T,
    const struct query *q, struct attn_matrix *own, struct attn_error *err)
{
	enum attn_status status;

	if (m->data == NULL || blocks == 0 || m->rows != blocks * T)
		return ATTN_OK;
	if ((status = gather(m, T, q->row, q->n, own, err)) == ATTN_OK)
		*m = *own;
	return status;
}

static int
compare_size(const void *a, const void *b)
{
	const size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

/* The rows that may attend no key, as places in the narrowed stacks:
 * those chosen, in the order they are printed.  pos[r] is 1 + the place
 * of row r among the chosen, 0 when it is not one. */
static void
select_masked(struct attn_stages *stages, const size_t *pos, size_t T,
    size_t n)
{
	size_t i, chosen = 0;

	for (i = 0; i < stages->nmasked; i++) {
		const size_t b = stages->masked[i] / T;
		const size_t r = stages->masked[i] % T;

		if (pos[r] != 0)
			stages->masked[chosen++] = b * n + pos[r] - 1;
	}
	stages->nmasked = chosen;
	if (chosen > 1)
		qsort(stages->masked, chosen, sizeof *stages->masked,
		    compare_size);
}

/* The chosen labels, in their order; the others are freed. */
static enum attn_status
select_labels(struct attn_labels *l, const struct query *q,
    struct attn_error *err)
{
	char **names;
	size_t i;

	if (l->names == NULL)
		return ATTN_OK;
	if ((names = attn_alloc_array(q->n, sizeof *names)) == NULL)
		return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "out of memory keeping the rows of --query");
	for (i = 0; i < q->n; i++) {
		names[i] = l->names[q->row[i]];
		l->names[q->row[i]] = NULL;
	}
	for (i = 0; i < l->count; i++)
		free(l->names[i]);
	free(l->names);
	l->names = names;
	l->count = q->n;
	return ATTN_OK;
}

/* The rows of o->query, from 0, into q->row; pos as select_masked reads
 * it.  A row past T or one listed twice is a usage error. */
static enum attn_status
read_rows(const struct options *o, size_t T, struct query *q, size_t *pos,
    struct attn_error *err)
{
	const char *p = o->query;
	size_t k, row = 0;

	for (k = 0; k < q->n; k++, p++) {
		/* query_parse has read the list: only T can be wrong */
		if (next_row(&p, &row) != 0 || row > T)
			return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
			    "--query names row %zu, but there %s only %zu "
			    "quer%s (T = %zu)", row, T == 1 ? "is" : "are", T,
			    T == 1 ? "y" : "ies", T);
		if (pos[row - 1] != 0)
			return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
			    "--query lists row %zu twice", row);
		pos[row - 1] = k + 1;
		q->row[k] = row - 1;
	}
	return ATTN_OK;
}

enum attn_status
query_select(struct options *o, const struct attn_inputs *in,
    struct attn_stages *stages, struct attn_labels *labels, struct query *q,
    struct attn_error *err)
{
	const size_t T = stages->T, B = in->batches;
	enum attn_status status;
	size_t *pos, s;

	memset(q, 0, sizeof *q);
	q->in = *in;
	if (o->query == NULL)
		return ATTN_OK;
	q->n = o->nquery;
	q->row = attn_alloc_array(q->n, sizeof *q->row);
	pos = calloc(T, sizeof *pos);
	if (q->row == NULL || pos == NULL) {
		free(pos);
		return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "out of memory keeping the rows of --query");
	}
	if ((status = read_rows(o, T, q, pos, err)) != ATTN_OK) {
		free(pos);
		return status;
	}
	for (s = 0; s < ATTN_STAGE_COUNT; s++) {
		struct attn_matrix rows;
		enum attn_axis ra, ca;

		attn_stage_axes(stages, (enum attn_stage)s, &ra, &ca);
		if (stages->stage[s].data == NULL || ra != ATTN_AXIS_QUERY)
			continue;
		if ((status = gather(&stages->stage[s], T, q->row, q->n, &rows,
		    err)) != ATTN_OK) {
			free(pos);
			return status;
		}
		attn_matrix_free(&stages->stage[s]);
		stages->stage[s] = rows;
		/* a bias of T rows, and its gradient: of the rows kept */
		if (s == ATTN_STAGE_GRAD_BIAS || s == ATTN_STAGE_BIAS)
			stages->bias_dim[stages->bias_ndim - 2] = q->n;
	}
	select_masked(stages, pos, T, q->n);
	free(pos);
	if ((status = gather_input(&q->in.q, B, T, q, &q->own[0], err)) !=
	    ATTN_OK ||
	    (status = gather_input(&q->in.mask, in->mask_blocks, T, q,
	    &q->own[1], err)) != ATTN_OK ||
	    (status = gather_input(&q->in.bias, in->bias_blocks, T, q,
	    &q->own[2], err)) != ATTN_OK ||
	    (status = gather_input(&q->in.d_out, B, T, q, &q->own[3],
	    err)) != ATTN_OK ||
	    (status = select_labels(labels, q, err)) != ATTN_OK)
		return status;
	stages->T = q->n;
	o->query_row = q->row;
	o->query_T = T;
	return ATTN_OK;
}

void
query_free(struct query *q)
{
	size_t i;

	for (i = 0; i < sizeof q->own / sizeof q->own[0]; i++)
		attn_matrix_free(&q->own[i]);
	free(q->row);
	memset(q, 0, sizeof *q);
}
