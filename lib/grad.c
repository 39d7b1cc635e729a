/*
 * grad.c - the rules of the backward pass of attention that a backward
 * kernel (lib/kernel_stream_grad.c, and the tests' plain passes in
 * tests/unit/kernel_ref_grad.c) applies element by element: the
 * gradients of L = sum(dO * output) for an upstream gradient dO, from the
 * forward stages of one batch and head.
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
 * The arithmetic is the forward pass's: every product summed is an fma,
 * in the order of its index, from 0, so that the tiled backward kernel
 * with vector loops (lib/kernel_stream_grad.c) gives the bytes of plain
 * passes over whole blocks (tests/unit/kernel_ref_grad.c), which the
 * tests hold it to.
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
