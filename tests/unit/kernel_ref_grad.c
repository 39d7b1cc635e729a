/*
 * kernel_ref_grad.c - the reference kernel's backward pass
 * (kernel_ref_grad_head): lib/grad.c's stages of one batch and head in
 * plain numbered passes over the forward stages of the block, in the
 * streaming kernel's arithmetic (every product summed is an fma, in the
 * order of its index, from 0), with the rules lib/grad.c shares
 * (attn_grad_dot, attn_grad_fixed, attn_grad_nan_row, attn_error_grad).
 * It is the oracle lib/kernel_stream_grad.c is held to, byte for byte,
 * and the error it reports first is the one the streaming kernel must
 * report.
 *
 * Dims: B batches, H query heads, G KV heads, T query rows, S keys, d_k
 * and d_v columns per head.
 */
#include <math.h>

#include "internal.h"
#include "kernel_ref.h"

/* grad_bias's sums (p->sums) gain the block n of dS, in the order
 * attn_bias_sum_add takes them. */
static void
bias_sums_block(const struct attn_problem *p, size_t n,
    const struct attn_matrix *ds)
{
	size_t i, j;

	for (i = 0; i < ds->rows; i++)
		for (j = 0; j < ds->cols; j++)
			attn_bias_sum_add(p, n, i, j, *attn_at(ds, i, j));
}

/* attn_grad_dot of entry (i, j) of the blocks ds and scores. */
static double
grad_dot(const struct attn_problem *p, const struct attn_matrix *ds,
    const struct attn_matrix *scores, size_t i, size_t j)
{
	return attn_grad_dot(p, *attn_at(ds, i, j), *attn_at(scores, i, j));
}

/* Row j of grad_k or grad_v gains a query head's sums acc[0..n), as
 * autograd adds the heads of an expanded K or V. */
static void
add_head(double *row, const double *acc, size_t n)
{
	size_t c;

	for (c = 0; c < n; c++)
		row[c] = row[c] + acc[c];
}

/* attn_grad_nan_row of query row i of the block. */
static int
nan_row(const struct attn_problem *p, const struct attn_matrix *row_max,
    size_t i)
{
	return attn_grad_nan_row(p, row_max->data != NULL ?
	    *attn_at(row_max, i, 0) : 0.0);
}

/*
 * Report the first value of block m of stage s that overflowed: an
 * infinity, or a nan (inf - inf on the way) where no nan is meant.  nan
 * is meant in the rows of nan rows (rows: a T-row stage), or anywhere
 * when any is set (dK and dV, which every query row adds into, once a
 * nan row of this head or an earlier one sharing the KV head has).
 */
static enum attn_status
check_finite(struct attn_error *err, const struct attn_problem *p,
    const struct attn_head *hd, enum attn_stage s,
    const struct attn_matrix *m, const struct attn_matrix *rows, int any)
{
	size_t i, j;

	for (i = 0; i < m->rows; i++)
		for (j = 0; j < m->cols; j++) {
			const double x = *attn_at(m, i, j);

			if (isinf(x) || (isnan(x) && !any && (rows == NULL ||
			    !nan_row(p, rows, i))))
				return attn_error_grad(err, p, hd, s, i, j);
		}
	return ATTN_OK;
}

ATTN_FMA_CLONES
enum attn_status
kernel_ref_grad_head(const struct attn_problem *p, const struct attn_head *hd,
    struct attn_matrix *m, double *acc, unsigned *done,
    struct attn_error *err)
{
	const struct attn_matrix *scores = &m[ATTN_STAGE_SCORES];
	const struct attn_matrix *weights = &m[ATTN_STAGE_WEIGHTS];
	const struct attn_matrix *output = &m[ATTN_STAGE_OUTPUT];
	const struct attn_matrix *row_max = &m[ATTN_STAGE_ROW_MAX];
	const struct attn_matrix *d_out = &hd->d_out;
	struct attn_matrix *dp = &m[ATTN_STAGE_GRAD_WEIGHTS];
	struct attn_matrix *delta = &m[ATTN_STAGE_DELTA];
	struct attn_matrix *ds = &m[ATTN_STAGE_GRAD_SCALED];
	struct attn_matrix *dq = &m[ATTN_STAGE_GRAD_Q];
	struct attn_matrix *dk = &m[ATTN_STAGE_GRAD_K];
	struct attn_matrix *dv = &m[ATTN_STAGE_GRAD_V];
	const size_t T = p->T, S = p->S;
	enum attn_status st;
	size_t i, j, c;
	int nan_rows = 0, nan_k, nan_v;

#define DO(i, c) (*attn_at(d_out, (i), (c)))
#define IN(m, i, c) (*attn_at(&hd->m, (i), (c)))

	/* dK and dV add up the heads of a KV head: a nan row of an earlier
	 * one has made them all nan already (its dS is nan for every key),
	 * which is meant, as is one of this head. */
	for (i = 0; i < T && !nan_rows; i++)
		nan_rows = nan_row(p, row_max, i);
	nan_k = nan_rows || (attn_problem_needs(p, ATTN_STAGE_GRAD_K) &&
	    S > 0 && p->d_k > 0 && isnan(*attn_at(dk, 0, 0)));
	nan_v = nan_rows || (attn_problem_needs(p, ATTN_STAGE_GRAD_V) &&
	    S > 0 && p->d_v > 0 && isnan(*attn_at(dv, 0, 0)));

	/* 1. grad_weights: dP = dO V^T, what each weight adds to L (with
	 * dropout, 0 where it is dropped, else times 1/(1 - p)). */
	if (attn_problem_needs(p, ATTN_STAGE_GRAD_WEIGHTS)) {
		for (i = 0; i < T; i++)
			for (j = 0; j < S; j++) {
				double dot = 0.0;

				for (c = 0; c < p->d_v; c++)
					dot = fma(DO(i, c), IN(v, j, c), dot);
				/* through the dropout mask and its scale */
				*attn_at(dp, i, j) = attn_dropped(p, hd, i, j,
				    dot);
			}
		if ((st = check_finite(err, p, hd, ATTN_STAGE_GRAD_WEIGHTS, dp,
		    NULL, 0)) != ATTN_OK)
			return st;
		*done |= ATTN_STAGE_BIT(ATTN_STAGE_GRAD_WEIGHTS);
	}

	/* 2. delta = rowsum(dO * output), the weighted mean of the row of
	 * dP that the softmax's normalisation takes back. */
	if (attn_problem_needs(p, ATTN_STAGE_DELTA)) {
		for (i = 0; i < T; i++) {
			double sum = 0.0;

			for (c = 0; c < p->d_v; c++)
				sum = fma(DO(i, c), *attn_at(output, i, c),
				    sum);
			*attn_at(delta, i, 0) = sum;
		}
		if ((st = check_finite(err, p, hd, ATTN_STAGE_DELTA, delta,
		    row_max, 0)) != ATTN_OK)
			return st;
		*done |= ATTN_STAGE_BIT(ATTN_STAGE_DELTA);
	}

	/* 3. grad_scaled: dS = P * (dP - delta), but where the weight has
	 * no say (attn_grad_fixed). */
	if (attn_problem_needs(p, ATTN_STAGE_GRAD_SCALED)) {
		for (i = 0; i < T; i++) {
			const double d = *attn_at(delta, i, 0);

			for (j = 0; j < S; j++) {
				const double w = *attn_at(weights, i, j);
				double *g = attn_at(ds, i, j);

				if (!attn_grad_fixed(p, hd, i, j,
				    *attn_at(row_max, i, 0), w, g))
					*g = w * (*attn_at(dp, i, j) - d);
			}
		}
		if ((st = check_finite(err, p, hd, ATTN_STAGE_GRAD_SCALED, ds,
		    row_max, 0)) != ATTN_OK)
			return st;
		*done |= ATTN_STAGE_BIT(ATTN_STAGE_GRAD_SCALED);
		/* grad_bias's sums of this block (lib/grad_reduce.c) */
		if (p->sums.data != NULL)
			bias_sums_block(p, hd->n, ds);
	}

	/* 4. Back through the softcap and the scale to the dot products:
	 * grad_q = (dS * c' * scale) K, each (i, c) summed over the keys in
	 * order.  An entry with dS = 0 (masked) adds nothing, exactly. */
	if (attn_problem_needs(p, ATTN_STAGE_GRAD_Q)) {
		for (i = 0; i < T; i++) {
			double *row = attn_at(dq, i, 0);

			for (c = 0; c < p->d_k; c++)
				row[c] = 0.0;
			for (j = 0; j < S; j++) {
				double g;

				if (*attn_at(ds, i, j) == 0.0)
					continue;
				g = grad_dot(p, ds, scores, i, j);
				for (c = 0; c < p->d_k; c++)
					row[c] = fma(g, IN(k, j, c), row[c]);
			}
			/* A zero is +0: the sum of the entries with dS != 0,
			 * whichever zeros a tiled kernel adds on the way
			 * (which can only change the sign of a zero sum). */
			for (c = 0; c < p->d_k; c++)
				row[c] = row[c] + 0.0;
		}
		if ((st = check_finite(err, p, hd, ATTN_STAGE_GRAD_Q, dq,
		    row_max, 0)) != ATTN_OK)
			return st;
		*done |= ATTN_STAGE_BIT(ATTN_STAGE_GRAD_Q);
	}

	/* 5. grad_k adds this head's (dS * c' * scale)^T Q, each (j, c)
	 * summed over the queries in order (in acc), to what the heads
	 * before it gave. */
	if (attn_problem_needs(p, ATTN_STAGE_GRAD_K)) {
		for (j = 0; j < S; j++) {
			for (c = 0; c < p->d_k; c++)
				acc[c] = 0.0;
			for (i = 0; i < T; i++) {
				double g;

				if (*attn_at(ds, i, j) == 0.0)
					continue;
				g = grad_dot(p, ds, scores, i, j);
				for (c = 0; c < p->d_k; c++)
					acc[c] = fma(g, IN(q, i, c), acc[c]);
			}
			add_head(attn_at(dk, j, 0), acc, p->d_k);
		}
		if ((st = check_finite(err, p, hd, ATTN_STAGE_GRAD_K, dk, NULL,
		    nan_k)) != ATTN_OK)
			return st;
		*done |= ATTN_STAGE_BIT(ATTN_STAGE_GRAD_K);
	}

	/* 6. grad_v adds this head's P^T dO likewise (P after dropout):
	 * each key's value moves the outputs of the queries that weigh
	 * it. */
	if (attn_problem_needs(p, ATTN_STAGE_GRAD_V)) {
		for (j = 0; j < S; j++) {
			for (c = 0; c < p->d_v; c++)
				acc[c] = 0.0;
			for (i = 0; i < T; i++) {
				const double w = attn_dropped(p, hd, i, j,
				    *attn_at(weights, i, j));

				if (w == 0.0)
					continue;
				for (c = 0; c < p->d_v; c++)
					acc[c] = fma(w, DO(i, c), acc[c]);
			}
			add_head(attn_at(dv, j, 0), acc, p->d_v);
		}
		if ((st = check_finite(err, p, hd, ATTN_STAGE_GRAD_V, dv, NULL,
		    nan_v)) != ATTN_OK)
			return st;
		*done |= ATTN_STAGE_BIT(ATTN_STAGE_GRAD_V);
	}
#undef DO
#undef IN
	return ATTN_OK;
}
