/*
 * grad_reduce.c - the gradients of the inputs a kernel broadcasts, made
 * from the backward stages after any kernel has computed them, so that
 * the reference backward pass (grad.c) and any other one (a streaming
 * kernel) share them:
 *
 *	grad_sinks[h] = -sum over b, i of exp(sink_h - lse_bhi) delta_bhi
 *	grad_bias     = grad_scaled summed over the axes the bias was
 *	                broadcast along, as autograd reduces a broadcast
 *	                bias: its blocks (one for all, one per batch, one
 *	                per batch and head), its rows (1 x S) and its
 *	                columns (T x 1) as it was given
 *
 * Both read only held stages (lse, delta, grad_scaled) and the inputs,
 * so their cost is one pass over what the kernel already wrote.  lse is
 * read as its natural value (attn_lse_natural), whatever convention it
 * is written in.
 */
#include <math.h>
#include <string.h>

#include "internal.h"

enum attn_status
attn_grad_sinks(const struct attn_stages *st, struct attn_matrix *out,
    struct attn_error *err)
{
	const struct attn_matrix *lse = &st->stage[ATTN_STAGE_LSE];
	const struct attn_matrix *delta = &st->stage[ATTN_STAGE_DELTA];
	const size_t H = st->heads, T = st->T;
	enum attn_status status;
	size_t b, h, i, r;
	double sum, l;

	memset(out, 0, sizeof *out);
	if (st->sinks.data == NULL || lse->data == NULL || delta->data == NULL)
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "grad_sinks needs sinks, lse and delta");
	if ((status = attn_matrix_alloc(out, 1, H, err)) != ATTN_OK)
		return status;
	for (h = 0; h < H; h++) {
		sum = 0;
		for (b = 0; b < st->batches; b++)
			for (i = 0; i < T; i++) {
				r = (b * H + h) * T + i;
				l = attn_lse_natural(st, *attn_at(lse, r, 0));
				if (l == -INFINITY)
					continue;	/* no softmax */
				sum += exp(*attn_at(&st->sinks, 0, h) - l) *
				    *attn_at(delta, r, 0);
			}
		*attn_at(out, 0, h) = -sum;
	}
	return ATTN_OK;
}

enum attn_status
attn_grad_bias(const struct attn_stages *st, const struct attn_inputs *in,
    struct attn_matrix *out, struct attn_error *err)
{
	const struct attn_matrix *ds = &st->stage[ATTN_STAGE_GRAD_SCALED];
	const size_t B = st->batches, H = st->heads, T = st->T, S = st->S;
	const size_t blocks = in->bias_blocks;
	enum attn_status status;
	size_t rows, b, h, i, j, blk;

	memset(out, 0, sizeof *out);
	if (in->bias.data == NULL || ds->data == NULL || blocks == 0)
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "grad_bias needs a bias and grad_scaled");
	rows = in->bias.rows / blocks;
	if ((status = attn_matrix_alloc(out, in->bias.rows, in->bias.cols,
	    err)) != ATTN_OK)
		return status;
	for (b = 0; b < B; b++)
		for (h = 0; h < H; h++) {
			blk = blocks == 1 ? 0 : blocks == B * H ? b * H + h : b;
			for (i = 0; i < T; i++)
				for (j = 0; j < S; j++)
					*attn_at(out, blk * rows + (rows == 1 ?
					    0 : i), in->bias.cols == 1 ? 0 : j) +=
					    *attn_at(ds, (b * H + h) * T + i, j);
		}
	return ATTN_OK;
}
