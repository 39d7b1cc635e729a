/*
 * kernel.c - the reference kernel: every stage of
 *
 *	softmax(Q K^T * scale) V
 *
 * in plain numbered passes over whole matrices, kept simple enough to
 * check by eye.  It holds every T x S stage, which is what --explain and
 * --stage need; a streaming kernel for large inputs is a separate kernel
 * tested against this one.
 *
 * Dims: T query rows, S keys, d_k columns of Q and K, d_v columns of V.
 */
#include <math.h>
#include <string.h>

#include "internal.h"

void
attn_config_init(struct attn_config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->scale_mode = ATTN_SCALE_DEFAULT;
	cfg->scale = 1.0;
}

void
attn_stages_free(struct attn_stages *s)
{
	size_t i;

	for (i = 0; i < ATTN_STAGE_COUNT; i++)
		attn_matrix_free(&s->stage[i]);
	memset(s, 0, sizeof *s);
}

static enum attn_status
check_shapes(const struct attn_matrix *q, const struct attn_matrix *k,
    const struct attn_matrix *v, struct attn_error *err)
{
	if (q->rows == 0 || q->cols == 0 || k->rows == 0 || v->cols == 0)
		return error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
		    "empty matrix: Q is %zux%zu, K is %zux%zu, V is %zux%zu",
		    q->rows, q->cols, k->rows, k->cols, v->rows, v->cols);
	if (q->cols != k->cols)
		return error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
		    "shape mismatch: Q is %zux%zu but K is %zux%zu: "
		    "Q and K need the same number of columns (d_k)",
		    q->rows, q->cols, k->rows, k->cols);
	if (k->rows != v->rows)
		return error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
		    "shape mismatch: K is %zux%zu but V is %zux%zu: "
		    "K and V need the same number of rows (S)",
		    k->rows, k->cols, v->rows, v->cols);
	return ATTN_OK;
}

static double
scale_of(const struct attn_config *cfg, size_t d_k)
{
	switch (cfg->scale_mode) {
	case ATTN_SCALE_NONE:
		return 1.0;
	case ATTN_SCALE_VALUE:
		return cfg->scale;
	case ATTN_SCALE_DEFAULT:
		break;
	}
	return 1.0 / sqrt((double)d_k);
}

enum attn_status
attn_compute(const struct attn_config *cfg, const struct attn_matrix *q,
    const struct attn_matrix *k, const struct attn_matrix *v,
    struct attn_stages *out, struct attn_error *err)
{
	const size_t T = q->rows, S = k->rows, d_k = q->cols, d_v = v->cols;
	const double scale = scale_of(cfg, d_k);
	struct attn_matrix *scores, *scaled, *weights, *output, *lse;
	enum attn_status st;
	size_t i, j, c;

	memset(out, 0, sizeof *out);
	if ((st = check_shapes(q, k, v, err)) != ATTN_OK)
		return st;
	out->T = T;
	out->S = S;
	out->d_k = d_k;
	out->d_v = d_v;
	out->scale = scale;

	scores = &out->stage[ATTN_STAGE_SCORES];	/* T x S */
	scaled = &out->stage[ATTN_STAGE_SCALED];	/* T x S */
	weights = &out->stage[ATTN_STAGE_WEIGHTS];	/* T x S */
	output = &out->stage[ATTN_STAGE_OUTPUT];	/* T x d_v */
	lse = &out->stage[ATTN_STAGE_LSE];		/* T x 1 */
	if ((st = attn_matrix_alloc(scores, T, S, err)) != ATTN_OK ||
	    (st = attn_matrix_alloc(scaled, T, S, err)) != ATTN_OK ||
	    (st = attn_matrix_alloc(weights, T, S, err)) != ATTN_OK ||
	    (st = attn_matrix_alloc(output, T, d_v, err)) != ATTN_OK ||
	    (st = attn_matrix_alloc(lse, T, 1, err)) != ATTN_OK) {
		attn_stages_free(out);
		return st;
	}

	/* 1. scores = Q K^T: the dot product of each query with each key. */
	for (i = 0; i < T; i++)
		for (j = 0; j < S; j++) {
			double dot = 0.0;

			for (c = 0; c < d_k; c++)
				dot += *attn_at(q, i, c) * *attn_at(k, j, c);
			if (!isfinite(dot)) {
				attn_stages_free(out);
				return error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
				    "score of query %zu and key %zu overflows "
				    "a double (Q and K values are too large)",
				    i + 1, j + 1);
			}
			*attn_at(scores, i, j) = dot;
		}

	/* 2. scaled = scores * scale (a large --scale can overflow). */
	for (i = 0; i < T; i++)
		for (j = 0; j < S; j++) {
			double x = *attn_at(scores, i, j) * scale;

			if (!isfinite(x)) {
				char num[ATTN_NUM_MAX];

				attn_format_number(num, scale, 0, 0);
				attn_stages_free(out);
				return error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
				    "scaled score of query %zu and key %zu "
				    "overflows a double (scale %s)", i + 1,
				    j + 1, num);
			}
			*attn_at(scaled, i, j) = x;
		}

	/* 3. weights = softmax of each row, stably: subtract the row maximum
	 * so that exp never overflows; lse = max + log(sum).  A row with no
	 * finite logit (every key masked) gets weights 0 and lse -inf. */
	for (i = 0; i < T; i++) {
		double max = -INFINITY, sum = 0.0;

		for (j = 0; j < S; j++)
			if (*attn_at(scaled, i, j) > max)
				max = *attn_at(scaled, i, j);
		if (max == -INFINITY) {
			*attn_at(lse, i, 0) = -INFINITY;
			continue;
		}
		for (j = 0; j < S; j++) {
			double e = exp(*attn_at(scaled, i, j) - max);

			*attn_at(weights, i, j) = e;
			sum += e;
		}
		for (j = 0; j < S; j++)
			*attn_at(weights, i, j) /= sum;
		*attn_at(lse, i, 0) = max + log(sum);
	}

	/* 4. output = weights V: each query's weighted mix of value rows. */
	for (i = 0; i < T; i++)
		for (j = 0; j < S; j++) {
			double w = *attn_at(weights, i, j);

			for (c = 0; c < d_v; c++)
				*attn_at(output, i, c) += w * *attn_at(v, j, c);
		}
	return ATTN_OK;
}
