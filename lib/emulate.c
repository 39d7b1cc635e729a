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
	/* An underflow to zero keeps the sign, as IEEE does. */
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
	struct attn_matrix *keep = &m[ATTN_STAGE_MASK];
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
			const double dist = fabs((double)(i + p->s_off) -
			    (double)(j + p->t_off));

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
			if (keep->data != NULL)
				*attn_at(keep, i, j) = x == -INFINITY ? 0.0 :
				    1.0;
		}
	*done |= ATTN_STAGE_BIT(ATTN_STAGE_SCALED);
	if (keep->data != NULL)
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

/* Every stage of a block is computed, kept or in scratch: the passes
 * read each other, and a baseline is no place to save time. */
static enum attn_status
emulate_plan(const struct attn_problem *p, size_t *bytes,
    struct attn_error *err)
{
	struct attn_problem all = *p;

	all.need = ATTN_STAGES_ALL;
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
	size_t b, h;

	all.need = ATTN_STAGES_ALL;
	if ((st = attn_scratch_alloc(&all, &sc, err)) != ATTN_OK)
		return st;
	for (b = 0; b < p->B; b++)
		for (h = 0; h < p->H; h++) {
			attn_problem_head(&all, b, h, &hd);
			attn_head_stages(&all, out, &sc, &hd, m);
			emulate_head(&all, &hd, prec, m, &out->computed);
			attn_progress_block(p, progress_what[prec],
			    b * p->H + h);
		}
	attn_scratch_free(&sc);
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

static const struct attn_kernel_ops emulate_ops[] = {
	[ATTN_PREC_FP32] = { "emulated fp32", ATTN_STAGES_ALL, emulate_plan,
	    run_fp32 },
	[ATTN_PREC_FP16] = { "emulated fp16", ATTN_STAGES_ALL, emulate_plan,
	    run_fp16 },
	[ATTN_PREC_BF16] = { "emulated bf16", ATTN_STAGES_ALL, emulate_plan,
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
