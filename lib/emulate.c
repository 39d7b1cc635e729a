/*
 * emulate.c - the reference kernel's passes in float32, float16 or
 * bfloat16, as a plain kernel in that format computes them: the baseline
 * that --emulate compares a kernel's error with (FlashAttention's tests
 * judge a kernel by the error of such a naive implementation in the same
 * dtype).  And rounding a double to each format.
 *
 * With F the format and A = float32 the accumulator (real fp16 and bf16
 * kernels accumulate in float32, as PyTorch's matmul and softmax do):
 *
 *	q, k, v, bias       rounded to F first
 *	scores = F(sum_c A(q k))          each multiply-add an A fma
 *	scaled = F(A(scores * A(scale)))  then softcap F(A(C * A(tanh(A(x/C)))))
 *	         then F(A(x + bias)), F(A(x - A(slope * distance))), masks -inf
 *	row_max = max, exactly;  e = A(exp(A(x - row_max)))
 *	row_sum = A(row_sum + e), in key order (from A(exp(A(sink -
 *	          row_max))) with sinks, the sink stored in F)
 *	weights = F(A(e / row_sum));  lse = F(A(row_max + A(log(row_sum))))
 *	output  = F(sum_j A(weights v))   each multiply-add an A fma
 *
 * and with dO (--grad) the backward pass of grad.c in the same way, as
 * autograd runs it in that dtype (matrix products accumulated in A, each
 * result stored in F, elementwise steps in A and stored in F):
 *
 *	dO rounded to F first
 *	grad_weights dP = F(sum_c A(dO v))
 *	delta        D  = F(sum_c A(dO output))
 *	grad_scaled  dS = F(A(weights * A(dP - D)))
 *	g = F(A(A(dS * c') * A(scale)))   c' = A(1 / A(cosh^2 A(x / C)))
 *	grad_q       F(sum_j A(g k))
 *	grad_k       F(A(grad_k + F(sum_i A(g q)))), query head after
 *	grad_v       F(A(grad_v + F(sum_i A(weights dO))))  query head
 *
 * so that the heads sharing a KV head add their parts in F, as the sum
 * over an expanded K or V does in autograd.
 *
 * where F(x) and A(x) round to nearest, ties to even.  For F = float32
 * both are float32 and this is a plain float32 kernel with fma.  The
 * order is the naive one, key after key, as written above: a tiled
 * kernel sums in another order, which is what the factor of --factor is
 * for.  Overflow is what the format gives (fp16 scores past 65504 are
 * inf, and their softmax nan): not an error, but part of the baseline.
 *
 * Rounding is written out (attn_round) rather than taken from _Float16 or
 * __bf16, which C11 does not have: the spacing of the format's numbers
 * around x is a power of two, x is scaled so that it is 1, and the
 * integer part is rounded half to even by hand, so that the result does
 * not depend on the rounding mode.  It is tested against float casts for
 * float32 and on the edge values of each format (check_emulate.c).
 *
 * Dims: B batches, H query heads, T query rows, S keys, d_k and d_v
 * columns per head.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ---------------------------------------------------------------- rounding */

/* Bits of the significand (its leading 1 included), the exponent of the
 * smallest normal number, and the largest finite number. */
static const struct {
	int bits, emin;
	double max;
} formats[] = {
	[ATTN_PREC_FP64] = { 53, -1022, 1.7976931348623157e308 },
	[ATTN_PREC_FP32] = { 24, -126, 3.4028234663852886e38 },
	[ATTN_PREC_FP16] = { 11, -14, 65504.0 },
	[ATTN_PREC_BF16] = { 8, -126, 3.3895313892515355e38 },
};

double
attn_round(double x, enum attn_precision prec)
{
	double y, f, d;
	int e;

	if (prec == ATTN_PREC_FP64 || (unsigned)prec >= sizeof formats /
	    sizeof formats[0] || !isfinite(x) || x == 0.0)
		return x;
	/* x = m 2^e with 0.5 <= |m| < 1: its leading bit is 2^(e-1); below
	 * the smallest normal the spacing stays that of emin. */
	(void)frexp(x, &e);
	e -= 1;
	if (e < formats[prec].emin)
		e = formats[prec].emin;
	/* In units of the spacing 2^(e - bits + 1): an exact scaling. */
	y = ldexp(x, formats[prec].bits - 1 - e);
	f = floor(y);
	d = y - f;
	if (d > 0.5 || (d == 0.5 && fmod(f, 2.0) != 0.0))
		f += 1.0;
	y = ldexp(f, e - formats[prec].bits + 1);
	if (fabs(y) > formats[prec].max)
		return copysign(INFINITY, x);
	/* An underflow to zero has the sign of x, as in IEEE arithmetic. */
	return y == 0.0 ? copysign(0.0, x) : y;
}

/* A: the float32 accumulator. */
static double
acc32(double x)
{
	return attn_round(x, ATTN_PREC_FP32);
}

/* One multiply-add of the accumulator, rounded once (C99 fmaf). */
static double
fma32(double a, double b, double acc)
{
	return fmaf((float)a, (float)b, (float)acc);
}

/* ---------------------------------------------------------------- kernel */

#define NEED(p, s) (((p)->need & ATTN_STAGE_BIT(s)) != 0)

/* One batch and head in format prec: the passes of kernel.c with the
 * rounding of the table above.  Inputs are rounded as they are read. */
static void
emulate_head(const struct attn_problem *p, const struct attn_head *hd,
    enum attn_precision prec, struct attn_matrix *m, unsigned *done)
{
	struct attn_matrix *scores = &m[ATTN_STAGE_SCORES];
	struct attn_matrix *scaled = &m[ATTN_STAGE_SCALED];
	struct attn_matrix *weights = &m[ATTN_STAGE_WEIGHTS];
	struct attn_matrix *mask = &m[ATTN_STAGE_MASK];
	struct attn_matrix *row_max = &m[ATTN_STAGE_ROW_MAX];
	struct attn_matrix *row_sum = &m[ATTN_STAGE_ROW_SUM];
	struct attn_matrix *lse = &m[ATTN_STAGE_LSE];
	struct attn_matrix *output = &m[ATTN_STAGE_OUTPUT];
	const double scale = acc32(p->scale), cap = acc32(p->cfg->softcap);
	const double slope = acc32(hd->slope);
	const size_t T = p->T, S = p->S;
	size_t i, j, c;

	/* 1. scores: float32 fma over the rounded inputs, stored in F. */
	for (i = 0; i < T; i++)
		for (j = 0; j < S; j++) {
			double dot = 0.0;

			for (c = 0; c < p->d_k; c++)
				dot = fma32(attn_round(*attn_at(&hd->q, i, c),
				    prec), attn_round(*attn_at(&hd->k, j, c),
				    prec), dot);
			*attn_at(scores, i, j) = attn_round(dot, prec);
		}
	*done |= ATTN_STAGE_BIT(ATTN_STAGE_SCORES);

	/* 2-4. scale, softcap, bias, ALiBi, masks; each step stored in F. */
	for (i = 0; i < T; i++)
		for (j = 0; j < S; j++) {
			double x = attn_round(acc32(*attn_at(scores, i, j) *
			    scale), prec);
			const double dist = fabs((double)(i + p->q_pos0) -
			    (double)(j + p->k_pos0));

			if (cap > 0.0)
				x = attn_round(acc32(cap * acc32(tanh(acc32(x /
				    cap)))), prec);
			if (hd->bias.data != NULL)
				x = attn_round(acc32(x + attn_round(
				    attn_input_at(&hd->bias, i, j), prec)),
				    prec);
			if (p->cfg->alibi)
				x = attn_round(acc32(x - acc32(slope * dist)),
				    prec);
			if (!attn_keeps(p, hd, i, j))
				x = -INFINITY;
			*attn_at(scaled, i, j) = x;
			if (mask->data != NULL)
				*attn_at(mask, i, j) = x == -INFINITY ? 0.0 :
				    1.0;
		}
	*done |= ATTN_STAGE_BIT(ATTN_STAGE_SCALED);
	if (mask->data != NULL)
		*done |= ATTN_STAGE_BIT(ATTN_STAGE_MASK);

	/* 5-8. softmax in the accumulator, key after key. */
	for (i = 0; i < T; i++) {
		const enum attn_masked_rows policy = p->cfg->masked_rows;
		/* A sink is one more logit, stored in F; -inf without. */
		const double sink = attn_round(attn_row_max_start(hd), prec);
		double max = sink, sum = 0.0, w;

		for (j = 0; j < S; j++) {
			double x = *attn_at(scaled, i, j);

			if (isnan(x) || x > max)
				max = x;
			if (isnan(x))
				break;
		}
		if (!isnan(max) && max != -INFINITY) {
			if (sink != -INFINITY)
				sum = acc32(exp(acc32(sink - max)));
			for (j = 0; j < S; j++)
				sum = acc32(sum + acc32(exp(acc32(
				    *attn_at(scaled, i, j) - max))));
		}
		*attn_at(row_max, i, 0) = max;
		*attn_at(row_sum, i, 0) = isnan(max) ? NAN : sum;
		*attn_at(lse, i, 0) = isnan(max) ? NAN : max == -INFINITY ?
		    -INFINITY : attn_round(acc32(max + acc32(log(sum))), prec);
		w = isnan(max) || policy == ATTN_MASKED_NAN ? NAN :
		    policy == ATTN_MASKED_UNIFORM ? attn_round(acc32(1.0 /
		    (double)S), prec) : 0.0;
		for (j = 0; j < S; j++)
			*attn_at(weights, i, j) = isnan(max) ||
			    max == -INFINITY ? w : attn_round(acc32(acc32(exp(
			    acc32(*attn_at(scaled, i, j) - max))) / sum), prec);
	}
	*done |= ATTN_STAGE_BIT(ATTN_STAGE_ROW_MAX) |
	    ATTN_STAGE_BIT(ATTN_STAGE_ROW_SUM) | ATTN_STAGE_BIT(ATTN_STAGE_LSE) |
	    ATTN_STAGE_BIT(ATTN_STAGE_WEIGHTS);

	/* 9. output: float32 fma of the stored weights and rounded V. */
	for (i = 0; i < T; i++)
		for (c = 0; c < p->d_v; c++) {
			double o = 0.0;

			for (j = 0; j < S; j++)
				o = fma32(*attn_at(weights, i, j), attn_round(
				    *attn_at(&hd->v, j, c), prec), o);
			*attn_at(output, i, c) = attn_round(o, prec);
		}
	*done |= ATTN_STAGE_BIT(ATTN_STAGE_OUTPUT);
}

/* The softcap's derivative at x, the stored F(A(score * scale)), in A:
 * 1 / cosh^2(x / C) (grad.c says why not 1 - tanh^2). */
static double
softcap_slope32(const struct attn_problem *p, double x)
{
	const double c = acc32(p->cfg->softcap);
	double h;

	if (!(c > 0.0))
		return 1.0;
	h = acc32(cosh(acc32(x / c)));
	return acc32(1.0 / acc32(h * h));
}

/* The backward pass of one batch and head in format prec, after
 * emulate_head: grad.c's passes with the rounding of the table above.
 * acc holds max(d_k, d_v) accumulators. */
static void
emulate_grad_head(const struct attn_problem *p, const struct attn_head *hd,
    enum attn_precision prec, struct attn_matrix *m, double *acc,
    unsigned *done)
{
	const struct attn_matrix *scores = &m[ATTN_STAGE_SCORES];
	const struct attn_matrix *weights = &m[ATTN_STAGE_WEIGHTS];
	const struct attn_matrix *output = &m[ATTN_STAGE_OUTPUT];
	const struct attn_matrix *row_max = &m[ATTN_STAGE_ROW_MAX];
	struct attn_matrix *dp = &m[ATTN_STAGE_GRAD_WEIGHTS];
	struct attn_matrix *delta = &m[ATTN_STAGE_DELTA];
	struct attn_matrix *ds = &m[ATTN_STAGE_GRAD_SCALED];
	struct attn_matrix *dq = &m[ATTN_STAGE_GRAD_Q];
	struct attn_matrix *dk = &m[ATTN_STAGE_GRAD_K];
	struct attn_matrix *dv = &m[ATTN_STAGE_GRAD_V];
	const double scale = acc32(p->scale);
	const size_t T = p->T, S = p->S;
	size_t i, j, c;

#define DO(i, c) attn_round(*attn_at(&hd->d_out, (i), (c)), prec)
#define G(i, j) attn_round(acc32(acc32(*attn_at(ds, (i), (j)) * \
	softcap_slope32(p, attn_round(acc32(*attn_at(scores, (i), (j)) * \
	scale), prec))) * scale), prec)

	/* 1-2. dP = dO V^T and delta = rowsum(dO * output). */
	for (i = 0; i < T; i++) {
		double sum = 0.0;

		for (j = 0; j < S; j++) {
			double dot = 0.0;

			for (c = 0; c < p->d_v; c++)
				dot = fma32(DO(i, c), attn_round(
				    *attn_at(&hd->v, j, c), prec), dot);
			*attn_at(dp, i, j) = attn_round(dot, prec);
		}
		for (c = 0; c < p->d_v; c++)
			sum = fma32(DO(i, c), *attn_at(output, i, c), sum);
		*attn_at(delta, i, 0) = attn_round(sum, prec);
	}

	/* 3. dS = P * (dP - delta); a masked weight gives +0, a row with no
	 * key 0 (nan with --masked-rows nan), as in grad.c. */
	for (i = 0; i < T; i++) {
		const double d = *attn_at(delta, i, 0);

		for (j = 0; j < S; j++) {
			const double w = *attn_at(weights, i, j);
			double *g = attn_at(ds, i, j);

			if (!attn_grad_scaled_fixed(p, hd, i, j,
			    *attn_at(row_max, i, 0), w, g))
				*g = attn_round(acc32(w * acc32(*attn_at(dp, i,
				    j) - d)), prec);
		}
	}

	/* 4. grad_q = g K, each (i, c) summed over the keys in order: the
	 * row of dq holds the accumulators. */
	for (i = 0; i < T; i++) {
		for (c = 0; c < p->d_k; c++)
			*attn_at(dq, i, c) = 0.0;
		for (j = 0; j < S; j++) {
			double g;

			if (*attn_at(ds, i, j) == 0.0)
				continue;
			g = G(i, j);
			for (c = 0; c < p->d_k; c++)
				*attn_at(dq, i, c) = fma32(g, attn_round(
				    *attn_at(&hd->k, j, c), prec),
				    *attn_at(dq, i, c));
		}
		for (c = 0; c < p->d_k; c++)
			*attn_at(dq, i, c) = attn_round(*attn_at(dq, i, c),
			    prec);
	}

	/* 5. grad_k adds this head's g^T Q and grad_v its P^T dO, each
	 * (j, c) summed over the queries in order (in acc), then added in
	 * F to what the heads before it gave. */
	for (j = 0; j < S; j++) {
		for (c = 0; c < p->d_k; c++)
			acc[c] = 0.0;
		for (i = 0; i < T; i++) {
			double g;

			if (*attn_at(ds, i, j) == 0.0)
				continue;
			g = G(i, j);
			for (c = 0; c < p->d_k; c++)
				acc[c] = fma32(g, attn_round(*attn_at(&hd->q, i,
				    c), prec), acc[c]);
		}
		for (c = 0; c < p->d_k; c++)
			*attn_at(dk, j, c) = attn_round(acc32(*attn_at(dk, j,
			    c) + attn_round(acc[c], prec)), prec);
		for (c = 0; c < p->d_v; c++)
			acc[c] = 0.0;
		for (i = 0; i < T; i++) {
			const double w = *attn_at(weights, i, j);

			if (w == 0.0)
				continue;
			for (c = 0; c < p->d_v; c++)
				acc[c] = fma32(w, DO(i, c), acc[c]);
		}
		for (c = 0; c < p->d_v; c++)
			*attn_at(dv, j, c) = attn_round(acc32(*attn_at(dv, j,
			    c) + attn_round(acc[c], prec)), prec);
	}
#undef DO
#undef G
	*done |= ATTN_STAGES_GRAD;
}

/* The stages a run of p computes: every forward one, kept or in
 * scratch (the passes read each other, and a baseline is no place to
 * save time), and every backward one when one is wanted. */
static unsigned
emulate_need(const struct attn_problem *p)
{
	return ATTN_STAGES_ALL | (p->need & ATTN_STAGES_GRAD ?
	    ATTN_STAGES_GRAD : 0);
}

static enum attn_status
emulate_plan(const struct attn_problem *p, size_t *bytes,
    struct attn_error *err)
{
	struct attn_problem all = *p;

	all.need = emulate_need(p);
	return attn_scratch_bytes(&all, bytes, err);
}

/* What progress calls the blocks of each format. */
static const char *const progress_what[] = {
	[ATTN_PREC_FP32] = "heads of the emulated fp32 kernel",
	[ATTN_PREC_FP16] = "heads of the emulated fp16 kernel",
	[ATTN_PREC_BF16] = "heads of the emulated bf16 kernel",
};

static enum attn_status
emulate_run(const struct attn_problem *p, enum attn_precision prec,
    struct attn_stages *out, struct attn_error *err)
{
	struct attn_matrix m[ATTN_STAGE_COUNT];
	struct attn_problem all = *p;
	struct attn_scratch sc;
	struct attn_head hd;
	enum attn_status st;
	double *acc;
	size_t b, h;

	all.need = emulate_need(p);
	if ((acc = attn_alloc_array(p->d_k > p->d_v ? p->d_k : p->d_v,
	    sizeof *acc)) == NULL)
		return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "out of memory");
	if ((st = attn_scratch_alloc(&all, &sc, err)) != ATTN_OK) {
		free(acc);
		return st;
	}
	for (b = 0; b < p->B; b++)
		for (h = 0; h < p->H; h++) {
			attn_problem_head(&all, b, h, &hd);
			attn_head_stages(&all, out, &sc, &hd, m);
			emulate_head(&all, &hd, prec, m, &out->computed);
			if (all.need & ATTN_STAGES_GRAD)
				emulate_grad_head(&all, &hd, prec, m, acc,
				    &out->computed);
			attn_progress_block(p, progress_what[prec],
			    b * p->H + h);
		}
	attn_scratch_free(&sc);
	free(acc);
	return ATTN_OK;
}

static enum attn_status
run_fp32(const struct attn_problem *p, struct attn_stages *out,
    struct attn_error *err)
{
	return emulate_run(p, ATTN_PREC_FP32, out, err);
}

static enum attn_status
run_fp16(const struct attn_problem *p, struct attn_stages *out,
    struct attn_error *err)
{
	return emulate_run(p, ATTN_PREC_FP16, out, err);
}

static enum attn_status
run_bf16(const struct attn_problem *p, struct attn_stages *out,
    struct attn_error *err)
{
	return emulate_run(p, ATTN_PREC_BF16, out, err);
}

#define EMULATED (ATTN_STAGES_ALL | ATTN_STAGES_GRAD)

static const struct attn_kernel_ops emulate_ops[] = {
	[ATTN_PREC_FP32] = { "emulated fp32", EMULATED, emulate_plan,
	    run_fp32 },
	[ATTN_PREC_FP16] = { "emulated fp16", EMULATED, emulate_plan,
	    run_fp16 },
	[ATTN_PREC_BF16] = { "emulated bf16", EMULATED, emulate_plan,
	    run_bf16 },
};

const struct attn_kernel_ops *
attn_emulate_ops(enum attn_precision prec)
{
	if (prec == ATTN_PREC_FP64 || (unsigned)prec >= sizeof emulate_ops /
	    sizeof emulate_ops[0])
		return NULL;
	return &emulate_ops[prec];
}
