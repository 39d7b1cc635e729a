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
 *   runs those heads in order, so each sum has one fixed order.
 *
 * Dims: B batches, H query heads, G KV heads, T query rows, S keys, d_k
 * and d_v columns per head.
 */
#include <math.h>

#include "internal.h"

/* Whether stage s is needed. */
#define NEED(p, s) (((p)->need & ATTN_STAGE_BIT(s)) != 0)

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

/* Element (i, j) of backward stage s of head hd overflowed. */
static enum attn_status
grad_overflow(struct attn_error *err, const struct attn_problem *p,
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

/* Whether query row i of the block is a nan row: its weights and output
 * nan by design (--masked-rows nan for a row with no key, or a nan or
 * +inf bias, which only a caller of the library can pass). */
static int
nan_row(const struct attn_problem *p, const struct attn_matrix *row_max,
    size_t i)
{
	const double mx = row_max->data != NULL ? *attn_at(row_max, i, 0) :
	    0.0;

	return isnan(mx) || (mx == -INFINITY &&
	    p->cfg->masked_rows == ATTN_MASKED_NAN);
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
				return grad_overflow(err, p, hd, s, i, j);
		}
	return ATTN_OK;
}

enum attn_status
attn_grad_head(const struct attn_problem *p, const struct attn_head *hd,
    struct attn_matrix *m, unsigned *done, struct attn_error *err)
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
	const int want_q = NEED(p, ATTN_STAGE_GRAD_Q);
	const int want_k = NEED(p, ATTN_STAGE_GRAD_K);
	const size_t T = p->T, S = p->S;
	enum attn_status st;
	size_t i, j, c;
	int nan_rows = 0, nan_k, nan_v;

	/* dK and dV add up the heads of a KV head: a nan row of an earlier
	 * one has made them all nan already (its dS is nan for every key),
	 * which is meant, as is one of this head. */
	for (i = 0; i < T && !nan_rows; i++)
		nan_rows = nan_row(p, row_max, i);
	nan_k = nan_rows || (want_k && S > 0 && p->d_k > 0 &&
	    isnan(*attn_at(dk, 0, 0)));
	nan_v = nan_rows || (NEED(p, ATTN_STAGE_GRAD_V) && S > 0 &&
	    p->d_v > 0 && isnan(*attn_at(dv, 0, 0)));

	/* 1. grad_weights: dP = dO V^T, what each weight adds to L. */
	if (NEED(p, ATTN_STAGE_GRAD_WEIGHTS)) {
		for (i = 0; i < T; i++)
			for (j = 0; j < S; j++) {
				double dot = 0.0;

				for (c = 0; c < p->d_v; c++)
					dot += *attn_at(d_out, i, c) *
					    *attn_at(&hd->v, j, c);
				*attn_at(dp, i, j) = dot;
			}
		if ((st = check_finite(err, p, hd, ATTN_STAGE_GRAD_WEIGHTS,
		    dp, NULL, 0)) != ATTN_OK)
			return st;
		*done |= ATTN_STAGE_BIT(ATTN_STAGE_GRAD_WEIGHTS);
	}

	/* 2. delta = rowsum(dO * output), the weighted mean of the row of
	 * dP that the softmax's normalisation takes back. */
	if (NEED(p, ATTN_STAGE_DELTA)) {
		for (i = 0; i < T; i++) {
			double sum = 0.0;

			for (c = 0; c < p->d_v; c++)
				sum += *attn_at(d_out, i, c) *
				    *attn_at(output, i, c);
			*attn_at(delta, i, 0) = sum;
		}
		if ((st = check_finite(err, p, hd, ATTN_STAGE_DELTA,
		    delta, row_max, 0)) != ATTN_OK)
			return st;
		*done |= ATTN_STAGE_BIT(ATTN_STAGE_DELTA);
	}

	/* 3. grad_scaled: dS = P * (dP - delta).  A weight of 0 (a masked
	 * key, or one that underflowed) gives +0, not -0; a row with no key
	 * gets 0, or nan with --masked-rows nan (see the top). */
	if (NEED(p, ATTN_STAGE_GRAD_SCALED)) {
		for (i = 0; i < T; i++) {
			const double d = *attn_at(delta, i, 0);

			for (j = 0; j < S; j++) {
				const double w = *attn_at(weights, i, j);
				double *g = attn_at(ds, i, j);

				if (!attn_grad_scaled_fixed(p, hd, i, j,
				    *attn_at(row_max, i, 0), w, g))
					*g = w * (*attn_at(dp, i, j) - d);
			}
		}
		if ((st = check_finite(err, p, hd, ATTN_STAGE_GRAD_SCALED,
		    ds, row_max, 0)) != ATTN_OK)
			return st;
		*done |= ATTN_STAGE_BIT(ATTN_STAGE_GRAD_SCALED);
	}

	/* 4. Back through the softcap and the scale to the dot products:
	 * grad_q = (dS * c') K * scale, and grad_k adds (dS * c')^T Q *
	 * scale.  An entry with dS = 0 (masked) adds nothing, exactly. */
	if (want_q || want_k) {
		for (i = 0; i < T; i++) {
			if (want_q)
				for (c = 0; c < p->d_k; c++)
					*attn_at(dq, i, c) = 0.0;
			for (j = 0; j < S; j++) {
				double g = *attn_at(ds, i, j);

				if (g == 0.0)
					continue;
				g *= softcap_slope(p, *attn_at(scores, i, j)) *
				    p->scale;
				for (c = 0; c < p->d_k; c++) {
					if (want_q)
						*attn_at(dq, i, c) += g *
						    *attn_at(&hd->k, j, c);
					if (want_k)
						*attn_at(dk, j, c) += g *
						    *attn_at(&hd->q, i, c);
				}
			}
		}
		if (want_q) {
			if ((st = check_finite(err, p, hd, ATTN_STAGE_GRAD_Q,
			    dq, row_max, 0)) != ATTN_OK)
				return st;
			*done |= ATTN_STAGE_BIT(ATTN_STAGE_GRAD_Q);
		}
		if (want_k) {
			if ((st = check_finite(err, p, hd, ATTN_STAGE_GRAD_K,
			    dk, NULL, nan_k)) != ATTN_OK)
				return st;
			*done |= ATTN_STAGE_BIT(ATTN_STAGE_GRAD_K);
		}
	}

	/* 5. grad_v adds P^T dO: each key's value moves the outputs of the
	 * queries that weigh it. */
	if (NEED(p, ATTN_STAGE_GRAD_V)) {
		for (i = 0; i < T; i++)
			for (j = 0; j < S; j++) {
				const double w = *attn_at(weights, i, j);

				if (w == 0.0)
					continue;
				for (c = 0; c < p->d_v; c++)
					*attn_at(dv, j, c) += w *
					    *attn_at(d_out, i, c);
			}
		if ((st = check_finite(err, p, hd, ATTN_STAGE_GRAD_V,
		    dv, NULL, nan_v)) != ATTN_OK)
			return st;
		*done |= ATTN_STAGE_BIT(ATTN_STAGE_GRAD_V);
	}
	return ATTN_OK;
}
