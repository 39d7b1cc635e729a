/*
 * emulate.c - the reference kernel's passes (lib/kernel.c, lib/grad.c)
 * in float32, float16 or bfloat16, as a plain kernel in that format
 * computes them: the baseline that --emulate compares a kernel's error
 * with (FlashAttention's tests judge a kernel by the error of such a
 * naive implementation in the same dtype).  This file rounds a double to
 * each format and runs those passes in it; the passes are the reference
 * kernel's own, which round where internal.h's attn_prec_* say, so the
 * two cannot drift apart.
 *
 * With F the format and A = float32 the accumulator (real fp16 and bf16
 * kernels accumulate in float32, as PyTorch's matmul and softmax do):
 *
 *	q, k, v, bias       rounded to F first
 *	scores = F(sum_c A(q k))          each multiply-add an A fma
 *	scaled = F(A(scores * A(scale)))  then softcap F(A(C * A(tanh(A(x/C)))))
 *	         then F(A(x + bias)), F(A(x - A(slope * distance))), masks -inf
 *	row_max = max, exactly;  e = A(exp(A(x - row_max))), libm's exp
 *	row_sum = A(row_sum + e), in key order (from A(exp(A(sink -
 *	          row_max))) with sinks, the sink stored in F): the
 *	          online sum of the reference kernel in one block
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
 *	grad_scaled  dS = F(A(weights * A(dP - D))), +0 where masked
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
 * Rounding to each format is attn_round (lib/round.c), a leaf that the
 * reference kernel's passes call too.
 *
 * Dims: B batches, H query heads, T query rows, S keys, d_k and d_v
 * columns per head.
 */
#include <math.h>

#include "internal.h"

/* p, computing every forward stage, held or in scratch (the passes read
 * each other, and a baseline is no place to save time), and every
 * backward one when one is wanted. */
static struct attn_problem
emulated(const struct attn_problem *p)
{
	struct attn_problem all = *p;

	all.need = ATTN_STAGES_ALL | (p->need & ATTN_STAGES_GRAD ?
	    ATTN_STAGES_GRAD : 0);
	return all;
}

static enum attn_status
emulate_plan(const struct attn_problem *p, size_t *bytes,
    struct attn_error *err)
{
	const struct attn_problem all = emulated(p);

	return attn_reference_plan(&all, bytes, err);
}

static enum attn_status
emulate_run(const struct attn_problem *p, enum attn_precision prec,
    struct attn_stages *out, struct attn_error *err)
{
	const struct attn_problem all = emulated(p);

	return attn_reference_run(&all, prec, out, err);
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
