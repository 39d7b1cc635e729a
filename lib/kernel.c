/*
 * kernel.c - the reference kernel: every stage of
 *
 *	softmax(mask(softcap(Q K^T * scale) + bias + ALiBi)) V
 *
 * (with sinks, each row's softmax denominator gains exp(sink))
 * in plain numbered passes over whole T x S blocks, simple enough to
 * check by eye, for each batch and head in turn.  It is the oracle that
 * every other kernel is tested against, so its arithmetic does not change
 * for speed.  A pass runs only when its stage is needed (p->need): a
 * stage that is held is written into the caller's stacks, one that is
 * only needed into scratch of one block (lib/problem.c).
 *
 * What every kernel shares (shape checks, scale, positions, the rule
 * that masks a logit, softcap, bias and ALiBi, input blocks) is in
 * lib/problem.c and internal.h.  The backward stages are lib/grad.c's
 * pass over the forward stages of each block, run after them.
 *
 * Dims: B batches, H query heads, G KV heads, T query rows, S keys, d_k
 * and d_v columns per head.
 */
#include <math.h>
#include <string.h>

#include "internal.h"

/* Whether stage s is needed. */
#define NEED(p, s) (((p)->need & ATTN_STAGE_BIT(s)) != 0)

/* Add row i of weights times V, each value times f (1, or 1/2 to stay
 * within the doubles), into row i of output. */
static void
output_sum(const struct attn_problem *p, const struct attn_head *hd,
    const struct attn_matrix *weights, struct attn_matrix *output, size_t i,
    double f)
{
	size_t j, c;

	for (j = 0; j < p->S; j++) {
		double w = *attn_at(weights, i, j);

		for (c = 0; c < p->d_v; c++)
			*attn_at(output, i, c) += w * (*attn_at(&hd->v, j, c) *
			    f);
	}
}

/*
 * Row i of output = weights V.  The weights sum to 1, so no partial sum
 * exceeds max |v| but by rounding: a row overflows only when V's values
 * lie within rounding of the largest double.  Such a row is summed again
 * over v / 2, which is exact, and doubled; what overflows still lies
 * beyond the doubles, a data error (SPEC: an output whose exact value is
 * finite is computed finite, or refused naming where).  A row whose
 * weights are nan (--masked-rows nan) is nan, as it is meant to be.
 */
static enum attn_status
output_row(const struct attn_problem *p, const struct attn_head *hd,
    const struct attn_matrix *weights, struct attn_matrix *output, size_t i,
    struct attn_error *err)
{
	size_t j, c;

	output_sum(p, hd, weights, output, i, 1.0);
	for (c = 0; c < p->d_v && isfinite(*attn_at(output, i, c)); c++)
		;
	if (c == p->d_v)
		return ATTN_OK;
	for (j = 0; j < p->S; j++)
		if (isnan(*attn_at(weights, i, j)))
			return ATTN_OK;
	for (c = 0; c < p->d_v; c++)
		*attn_at(output, i, c) = 0.0;
	output_sum(p, hd, weights, output, i, 0.5);
	for (c = 0; c < p->d_v; c++) {
		*attn_at(output, i, c) *= 2.0;
		if (!isfinite(*attn_at(output, i, c)))
			return attn_error_output(err, p, hd, i, c);
	}
	return ATTN_OK;
}

/* One batch and head: its inputs in hd, its stage blocks in m (T x S,
 * T x d_v or T x 1; data NULL when not needed).  *done collects the
 * stages computed. */
static enum attn_status
reference_head(const struct attn_problem *p, const struct attn_head *hd,
    struct attn_matrix *m, unsigned *done, struct attn_error *err)
{
	struct attn_matrix *scores = &m[ATTN_STAGE_SCORES];
	struct attn_matrix *scaled = &m[ATTN_STAGE_SCALED];
	struct attn_matrix *weights = &m[ATTN_STAGE_WEIGHTS];
	struct attn_matrix *mask = &m[ATTN_STAGE_MASK];
	struct attn_matrix *row_max = &m[ATTN_STAGE_ROW_MAX];
	struct attn_matrix *row_sum = &m[ATTN_STAGE_ROW_SUM];
	struct attn_matrix *lse = &m[ATTN_STAGE_LSE];
	struct attn_matrix *output = &m[ATTN_STAGE_OUTPUT];
	const size_t T = p->T, S = p->S;
	enum attn_status st;
	size_t i, j, c;

	/* 1. scores = Q K^T: the dot product of each query with each key. */
	if (NEED(p, ATTN_STAGE_SCORES)) {
		for (i = 0; i < T; i++)
			for (j = 0; j < S; j++) {
				double dot = 0.0;

				for (c = 0; c < p->d_k; c++)
					dot += *attn_at(&hd->q, i, c) *
					    *attn_at(&hd->k, j, c);
				if (!isfinite(dot))
					return attn_error_score(err, p, hd, i,
					    j);
				*attn_at(scores, i, j) = dot;
			}
		*done |= ATTN_STAGE_BIT(ATTN_STAGE_SCORES);
	}

	if (NEED(p, ATTN_STAGE_SCALED)) {
		/* 2. scaled = scores * scale (a large scale can overflow),
		 * then softcap * tanh(scaled / softcap). */
		for (i = 0; i < T; i++)
			for (j = 0; j < S; j++) {
				double x = *attn_at(scores, i, j) * p->scale;

				if (!isfinite(x))
					return attn_error_scaled(err, p, hd, i,
					    j);
				*attn_at(scaled, i, j) = attn_softcap(p, x);
			}

		/* 3. + bias, + ALiBi's -slope * |pos_q - pos_k|; a kept
		 * logit they take beyond the doubles is a data error. */
		for (i = 0; i < T; i++)
			for (j = 0; j < S; j++) {
				double x = attn_add_bias(p, hd, i, j,
				    *attn_at(scaled, i, j));

				if (attn_logit_overflows(hd, i, j, x) &&
				    attn_keeps(p, hd, i, j))
					return attn_error_logit(err, p, hd, i,
					    j);
				*attn_at(scaled, i, j) = x;
			}

		/* 4. Masks: causal, window and --mask set -inf; the mask
		 * stage records what survives (a -inf bias masks too). */
		for (i = 0; i < T; i++)
			for (j = 0; j < S; j++) {
				double *x = attn_at(scaled, i, j);

				if (!attn_keeps(p, hd, i, j))
					*x = -INFINITY;
				if (mask->data != NULL)
					*attn_at(mask, i, j) =
					    *x == -INFINITY ? 0.0 : 1.0;
			}
		*done |= ATTN_STAGE_BIT(ATTN_STAGE_SCALED);
		if (mask->data != NULL)
			*done |= ATTN_STAGE_BIT(ATTN_STAGE_MASK);
	}

	/* 5. row_max, starting at -inf, or at the head's sink logit when
	 * there are sinks (the sink is one more logit of every row); a nan
	 * logit (only a bias can bring one) makes the maximum nan, as IEEE
	 * arithmetic would, rather than being skipped by the comparison. */
	if (NEED(p, ATTN_STAGE_ROW_MAX)) {
		for (i = 0; i < T; i++) {
			double max = attn_row_max_start(hd);

			for (j = 0; j < S; j++) {
				double x = *attn_at(scaled, i, j);

				if (isnan(x) || x > max)
					max = x;
				if (isnan(x))
					break;
			}
			*attn_at(row_max, i, 0) = max;
		}
		*done |= ATTN_STAGE_BIT(ATTN_STAGE_ROW_MAX);
	}

	/* 6. row_sum = sum of exp(scaled - row_max), plus exp(sink -
	 * row_max) with sinks: subtracting the maximum stops exp
	 * overflowing.  The terms are kept in weights when weights are
	 * needed.  A row with no key left and no sink (its maximum is -inf)
	 * sums to 0; a nan row to nan. */
	if (NEED(p, ATTN_STAGE_ROW_SUM)) {
		for (i = 0; i < T; i++) {
			double max = *attn_at(row_max, i, 0), sum;

			if (isnan(max) || max == -INFINITY) {
				*attn_at(row_sum, i, 0) = isnan(max) ? NAN :
				    0.0;
				continue;
			}
			sum = attn_sink_term(hd, max);
			for (j = 0; j < S; j++) {
				double e = exp(*attn_at(scaled, i, j) - max);

				if (weights->data != NULL)
					*attn_at(weights, i, j) = e;
				sum += e;
			}
			*attn_at(row_sum, i, 0) = sum;
		}
		*done |= ATTN_STAGE_BIT(ATTN_STAGE_ROW_SUM);
	}

	/* 7. weights = exp(scaled - row_max) / row_sum.  A row with no key
	 * left (and no sink) gets what masked_rows says; a nan row is nan.
	 * With a sink, a row whose keys are all masked has weights 0. */
	if (NEED(p, ATTN_STAGE_WEIGHTS)) {
		const enum attn_masked_rows policy = p->cfg->masked_rows;

		for (i = 0; i < T; i++) {
			double max = *attn_at(row_max, i, 0);
			double sum = *attn_at(row_sum, i, 0);
			double w = isnan(max) ? NAN :
			    policy == ATTN_MASKED_NAN ? NAN :
			    policy == ATTN_MASKED_UNIFORM ? 1.0 / (double)S :
			    0.0;

			if (isnan(max) || max == -INFINITY) {
				for (j = 0; j < S; j++)
					*attn_at(weights, i, j) = w;
				continue;
			}
			for (j = 0; j < S; j++)
				*attn_at(weights, i, j) /= sum;
		}
		*done |= ATTN_STAGE_BIT(ATTN_STAGE_WEIGHTS);
	}

	/* 8. lse = row_max + log(row_sum), the sink's term included; -inf
	 * for a row with no key and no sink. */
	if (NEED(p, ATTN_STAGE_LSE)) {
		for (i = 0; i < T; i++) {
			double max = *attn_at(row_max, i, 0);

			*attn_at(lse, i, 0) = isnan(max) ? NAN :
			    max == -INFINITY ? -INFINITY :
			    max + log(*attn_at(row_sum, i, 0));
		}
		*done |= ATTN_STAGE_BIT(ATTN_STAGE_LSE);
	}

	/* 9. output = weights V: each query's weighted mix of value rows. */
	if (NEED(p, ATTN_STAGE_OUTPUT)) {
		for (i = 0; i < T; i++)
			if ((st = output_row(p, hd, weights, output, i, err)) !=
			    ATTN_OK)
				return st;
		*done |= ATTN_STAGE_BIT(ATTN_STAGE_OUTPUT);
	}
	return ATTN_OK;
}

/* One block of each stage that is needed and not kept. */
static enum attn_status
reference_plan(const struct attn_problem *p, size_t *bytes,
    struct attn_error *err)
{
	return attn_scratch_bytes(p, bytes, err);
}

static enum attn_status
reference_run(const struct attn_problem *p, struct attn_stages *out,
    struct attn_error *err)
{
	struct attn_matrix m[ATTN_STAGE_COUNT];
	struct attn_scratch sc;
	struct attn_head hd;
	enum attn_status st;
	size_t b, h;

	if ((st = attn_scratch_alloc(p, &sc, err)) != ATTN_OK)
		return st;
	for (b = 0; b < p->B && st == ATTN_OK; b++)
		for (h = 0; h < p->H && st == ATTN_OK; h++) {
			attn_problem_head(p, b, h, &hd);
			attn_head_stages(p, out, &sc, &hd, m);
			st = reference_head(p, &hd, m, &out->computed, err);
			if (st == ATTN_OK && (p->need & ATTN_STAGES_GRAD))
				st = attn_grad_head(p, &hd, m, &out->computed,
				    err);
			attn_progress_block(p, p->need & ATTN_STAGES_GRAD ?
			    "heads, forward and backward" : "heads",
			    b * p->H + h);
		}
	attn_scratch_free(&sc);
	return st;
}

const struct attn_kernel_ops attn_kernel_reference = {
	"reference", ATTN_STAGES_EVERY, reference_plan, reference_run,
};
