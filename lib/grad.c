/*
 * grad.c - the backward pass of attention, stage by stage, for one batch
 * and head: the gradients of L = sum(dO * output) for an upstream
 * gradient dO, from the forward stages a kernel computed for that block.
 * With P the weights and c' the softcap's derivative at x = scores *
 * scale (1 without a softcap):
 *
 *	grad_weights	dP = dO V^T				T x S
 *	delta		D = rowsum(dO * output)			T x 1
 *	grad_scaled	dS = P * (dP - D)			T x S
 *	grad_q		dQ = (dS * c') K * scale		T x d_k
 *	grad_k		dK += (dS * c')^T Q * scale		S x d_k
 *	grad_v		dV += P^T dO				S x d_v
 *
 * D is also rowsum(P * dP): the softmax's Jacobian applied to dP is
 * P * (dP - D), which is why each row of dS sums to 0.  dS is the
 * gradient with respect to `scaled`, and so with respect to a bias, which
 * is added after the softcap.  dQ and dK are the gradients with respect
 * to the q and k that the scores read, so that a rotation or projection
 * before them (RoPE, --proj) can apply its own chain rule to them.
 *
 * Decisions:
 * - Entries the masking rule masks have P = 0: their dS is +0 and
 *   nothing flows through them to Q, K or the bias, even in a row whose
 *   weights are nan because one of its kept logits is (a nan bias, or an
 *   overflow of the emulated format), as autograd's masked_fill gives
 *   them no gradient either.
 * - A row with no key (row_max -inf) has weights that do not depend on
 *   its logits (0, or 1/S with --masked-rows uniform), so its dS is 0
 *   and it gives Q, K and the bias no gradient; uniform's output, the
 *   mean of V, still gives each row of dV 1/S of its dO.  With
 *   --masked-rows nan its weights and output are nan, and nan spreads as
 *   IEEE arithmetic (and PyTorch's autograd) spreads it: the row's delta,
 *   dS and dQ, and all of dK and dV of its KV head in that batch.
 * - c' is 1 / cosh^2(x / C), not 1 - tanh^2(x / C), which loses the
 *   derivative's relative precision where tanh is near 1.
 * - dK and dV add up the query heads that share a KV head: the caller
 *   runs those heads in order, and each head adds its own sum over its
 *   queries, as autograd adds the gradients of an expanded K or V, so
 *   each sum has one fixed order.
 *
 * The arithmetic is the forward kernel's (lib/kernel.c): every product
 * summed is an fma, in the order of its index, from 0, so that a tiled
 * backward kernel with vector loops (lib/kernel_stream_grad.c) gives the
 * same bytes.
 *
 * Dims: B batches, H query heads, G KV heads, T query rows, S keys, d_k
 * and d_v columns per head.
 */
#include <math.h>

#include "internal.h"

/* The softcap's derivative at x = score * scale: d/dx C tanh(x / C) =
 * 1 / cosh^2(x / C).  When cosh^2 overflows, 1 / inf = 0 is what the
 * derivative rounds to anyway. */
static double
softcap_slope(const struct attn_problem *p, double score)
{
	const double c = p->cfg->softcap;
	double h;

	if (!(c > 0.0))
		return 1.0;
	h = cosh(score * p->scale / c);
	return 1.0 / (h * h);
}

double
attn_grad_dot(const struct attn_problem *p, double ds, double score)
{
	return ds * softcap_slope(p, score) * p->scale;
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

enum attn_status
attn_error_grad(struct attn_error *err, const struct attn_problem *p,
    const struct attn_head *hd, enum attn_stage s, size_t i, size_t j)
{
	char at[64];

	attn_block_name(at, sizeof at, p->B, p->H, hd->n, " (", ")");
	return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
	    "%s of %s %zu%s %zu%s overflows a double (the values of dO, Q, K "
	    "or V are too large)", attn_stage_table[s].name,
	    attn_stage_table[s].rows == ATTN_AXIS_KEY ? "key" : "query",
	    i + 1, attn_stage_table[s].cols == ATTN_AXIS_KEY ? " and key" :
	    ", column", j + 1, at);
}

int
attn_grad_nan_row(const struct attn_problem *p, double row_max)
{
	return isnan(row_max) || (row_max == -INFINITY &&
	    p->cfg->masked_rows == ATTN_MASKED_NAN);
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

int
attn_grad_fixed(const struct attn_problem *p, const struct attn_head *hd,
    size_t i, size_t j, double row_max, double w, double *ds)
{
	struct attn_seq sq;

	attn_row_seq(p, hd->b, i, &sq);
	if (row_max == -INFINITY)
		*ds = p->cfg->masked_rows == ATTN_MASKED_NAN && j >= sq.k0 &&
		    j < sq.k1 ? NAN : 0.0;
	else if (w == 0.0 || !attn_keeps(p, hd, i, j))
		*ds = 0.0;
	else
		return 0;
	return 1;
}

ATTN_FMA_CLONES
enum attn_status
attn_grad_head(const struct attn_problem *p, const struct attn_head *hd,
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

	/* 1. grad_weights: dP = dO V^T, what each weight adds to L. */
	if (attn_problem_needs(p, ATTN_STAGE_GRAD_WEIGHTS)) {
		for (i = 0; i < T; i++)
			for (j = 0; j < S; j++) {
				double dot = 0.0;

				for (c = 0; c < p->d_v; c++)
					dot = fma(DO(i, c), IN(v, j, c), dot);
				*attn_at(dp, i, j) = dot;
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
			attn_bias_sums_block(p, hd->n, ds);
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

	/* 6. grad_v adds this head's P^T dO likewise: each key's value
	 * moves the outputs of the queries that weigh it. */
	if (attn_problem_needs(p, ATTN_STAGE_GRAD_V)) {
		for (j = 0; j < S; j++) {
			for (c = 0; c < p->d_v; c++)
				acc[c] = 0.0;
			for (i = 0; i < T; i++) {
				const double w = *attn_at(weights, i, j);

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
