/*
 * kernel.c - the reference kernel: every stage of
 *
 *	softmax(mask(softcap(Q K^T * scale) + bias + ALiBi)) V
 *
 * in plain numbered passes over whole matrices, kept simple enough to
 * check by eye, for each batch and head in turn.  It holds every T x S
 * stage, which is what printing any stage needs; a streaming kernel for
 * large inputs is to be a separate kernel, tested against this one.
 *
 * Positions: query i sits at key position i + offset, offset 0 (top-left)
 * or S - T (bottom-right).  Offsets can be negative, so positions are
 * compared as pos_q = i + S_off against pos_k = j + T_off, with
 * (S_off, T_off) = (0, 0) or (S, T): both sides stay unsigned.
 *
 * Dims: B batches, H query heads, G KV heads, T query rows, S keys, d_k
 * and d_v columns per head.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void
attn_config_init(struct attn_config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->scale_mode = ATTN_SCALE_DEFAULT;
	cfg->scale = 1.0;
	cfg->align = ATTN_ALIGN_TOP_LEFT;
	cfg->masked_rows = ATTN_MASKED_ZERO;
	cfg->heads = 1;
	cfg->kv_heads = 0;
}

void
attn_stages_free(struct attn_stages *s)
{
	size_t i;

	for (i = 0; i < ATTN_STAGE_COUNT; i++)
		attn_matrix_free(&s->stage[i]);
	free(s->masked);
	memset(s, 0, sizeof *s);
}

size_t
attn_kv_head(size_t h, size_t heads, size_t kv_heads)
{
	if (kv_heads == 0 || kv_heads >= heads)
		return h;
	return h / (heads / kv_heads);
}

double
attn_alibi_slope(size_t h, size_t heads)
{
	size_t n = 1;

	while (n <= heads / 2)
		n *= 2;
	if (h < n)
		return pow(2.0, -8.0 * (double)(h + 1) / (double)n);
	return pow(2.0, -8.0 * (double)(2 * (h - n) + 1) / (double)(2 * n));
}

struct attn_matrix
attn_stage_block(const struct attn_stages *st, enum attn_stage s, size_t b,
    size_t h)
{
	const struct attn_matrix *m = &st->stage[s];

	if (!attn_stage_table[s].per_head)
		return attn_matrix_view(m, b * st->T, st->T, h * st->d_v,
		    st->d_v);
	return attn_matrix_view(m, (b * st->heads + h) * st->T, st->T, 0,
	    m->cols);
}

/* ---------------------------------------------------------------- shapes */

/* The dims of a computation, derived and checked once. */
struct dims {
	size_t B, H, G, T, S, d_k, d_v;
};

/* A mask or bias must be 1, B or B*H blocks of T x S. */
static enum attn_status
check_blocks(const char *what, const struct attn_matrix *m, size_t blocks,
    const struct dims *d, struct attn_error *err)
{
	size_t bh, rows;

	if (m->data == NULL)
		return ATTN_OK;
	if (attn_size_mul(d->B, d->H, &bh) == 0 &&
	    attn_size_mul(blocks, d->T, &rows) == 0 && m->cols == d->S &&
	    (blocks == 1 || blocks == d->B || blocks == bh) && m->rows == rows)
		return ATTN_OK;
	return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
	    "shape mismatch: %s is %zu block%s of %zux%zu but scores are "
	    "%zux%zu (T x S): a %s needs T x S blocks, one in all, one per "
	    "batch (%zu) or one per batch and head (%zu)", what, blocks,
	    blocks == 1 ? "" : "s", blocks == 0 ? 0 : m->rows / blocks,
	    m->cols, d->T, d->S, what, d->B, d->B * d->H);
}

/* A stack's shape as the user wrote it: "TxC", or "BxTxC" for B > 1. */
static const char *
shape_text(char *buf, size_t size, const struct attn_matrix *m, size_t B)
{
	if (B > 1)
		snprintf(buf, size, "%zux%zux%zu", B, m->rows / B, m->cols);
	else
		snprintf(buf, size, "%zux%zu", m->rows, m->cols);
	return buf;
}

static enum attn_status
check_shapes(const struct attn_config *cfg, const struct attn_inputs *in,
    struct dims *d, struct attn_error *err)
{
	const struct attn_matrix *q = &in->q, *k = &in->k, *v = &in->v;
	char qs[64], ks[64], vs[64];
	enum attn_status st;

	d->B = in->batches;
	d->H = cfg->heads;
	d->G = cfg->kv_heads != 0 ? cfg->kv_heads : cfg->heads;
	if (d->B == 0)
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "0 batches: there must be at least one");
	if (d->H == 0 || d->G > d->H || d->H % d->G != 0)
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "%zu head%s and %zu KV head%s: the heads must be a "
		    "multiple of the KV heads, and neither may be 0", d->H,
		    d->H == 1 ? "" : "s", d->G, d->G == 1 ? "" : "s");
	if (q->rows % d->B != 0 || k->rows % d->B != 0 ||
	    v->rows % d->B != 0)
		return attn_error_set(err, ATTN_ERR_INTERNAL, NULL, 0, 0,
		    "stacks of %zu, %zu and %zu rows do not hold %zu batches",
		    q->rows, k->rows, v->rows, d->B);
	if (q->rows == 0 || q->cols == 0 || k->rows == 0 || v->cols == 0)
		return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
		    "empty matrix: Q is %zux%zu, K is %zux%zu, V is %zux%zu",
		    q->rows, q->cols, k->rows, k->cols, v->rows, v->cols);
	d->T = q->rows / d->B;
	d->S = k->rows / d->B;
	shape_text(qs, sizeof qs, q, d->B);
	shape_text(ks, sizeof ks, k, d->B);
	shape_text(vs, sizeof vs, v, d->B);
	if (q->cols % d->H != 0)
		return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
		    "Q is %s: %zu heads cannot split its columns equally",
		    qs, d->H);
	if (k->cols % d->G != 0 || v->cols % d->G != 0)
		return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
		    "K is %s and V is %s: %zu %s cannot split their columns "
		    "equally", ks, vs, d->G,
		    cfg->kv_heads != 0 ? "KV heads" : "heads");
	d->d_k = q->cols / d->H;
	d->d_v = v->cols / d->G;
	if (d->H == 1 && d->G == 1 && q->cols != k->cols)
		return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
		    "shape mismatch: Q is %s but K is %s: "
		    "Q and K need the same number of columns (d_k)", qs, ks);
	if (k->cols / d->G != d->d_k)
		return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
		    "shape mismatch: Q is %s but K is %s: with %zu "
		    "head%s and %zu KV head%s, d_k is %zu/%zu = %zu for Q but "
		    "%zu/%zu = %zu for K", qs, ks,
		    d->H, d->H == 1 ? "" : "s", d->G, d->G == 1 ? "" : "s",
		    q->cols, d->H, d->d_k, k->cols, d->G, k->cols / d->G);
	if (k->rows != v->rows)
		return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
		    "shape mismatch: K is %s but V is %s: "
		    "K and V need the same number of rows (S)", ks, vs);
	if ((st = check_blocks("mask", &in->mask, in->mask_blocks, d,
	    err)) != ATTN_OK)
		return st;
	return check_blocks("bias", &in->bias, in->bias_blocks, d, err);
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

/* Block b, h of a mask or bias stack of `blocks` T-row blocks. */
static struct attn_matrix
input_block(const struct attn_matrix *m, size_t blocks, const struct dims *d,
    size_t b, size_t h)
{
	size_t i = blocks == 1 ? 0 : blocks == d->B ? b : b * d->H + h;

	return attn_matrix_view(m, i * d->T, d->T, 0, d->S);
}

/* ---------------------------------------------------------------- kernel */

/* One batch and head: the views it reads and writes. */
struct block {
	size_t b, h;
	struct attn_matrix q, k, v;	/* T x d_k, S x d_k, S x d_v */
	struct attn_matrix mask, bias;	/* T x S each; data NULL if absent */
	struct attn_matrix scores, scaled, weights, keep;	/* T x S */
	struct attn_matrix output;	/* T x d_v */
	struct attn_matrix lse;		/* T x 1 */
};

/* Whether the position rules (causal, window) let query i see key j. */
static int
position_keeps(const struct attn_config *cfg, size_t pos_q, size_t pos_k)
{
	if (cfg->causal && pos_k > pos_q)
		return 0;
	/* Distances, not sums, so that a huge L or R cannot wrap. */
	if (cfg->window && ((pos_q > pos_k && pos_q - pos_k >
	    cfg->window_left) || (pos_k > pos_q && pos_k - pos_q >
	    cfg->window_right)))
		return 0;
	return 1;
}

static enum attn_status
kernel_block(const struct attn_config *cfg, const struct dims *d,
    double scale, struct block *k, struct attn_error *err)
{
	const size_t T = d->T, S = d->S;
	const size_t s_off = cfg->align == ATTN_ALIGN_BOTTOM_RIGHT ? S : 0;
	const size_t t_off = cfg->align == ATTN_ALIGN_BOTTOM_RIGHT ? T : 0;
	const double slope = cfg->alibi ? attn_alibi_slope(k->h, d->H) : 0.0;
	char at[64];
	size_t i, j, c;

	/* 1. scores = Q K^T: the dot product of each query with each key. */
	for (i = 0; i < T; i++)
		for (j = 0; j < S; j++) {
			double dot = 0.0;

			for (c = 0; c < d->d_k; c++)
				dot += *attn_at(&k->q, i, c) *
				    *attn_at(&k->k, j, c);
			if (!isfinite(dot)) {
				attn_block_name(at, sizeof at, d->B, d->H,
				    k->b * d->H + k->h, " (", ")");
				return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
				    "score of query %zu and key %zu%s "
				    "overflows a double (Q and K values are "
				    "too large)", i + 1, j + 1, at);
			}
			*attn_at(&k->scores, i, j) = dot;
		}

	/* 2. scaled = scores * scale (a large scale can overflow), then
	 * softcap * tanh(scaled / softcap). */
	for (i = 0; i < T; i++)
		for (j = 0; j < S; j++) {
			double x = *attn_at(&k->scores, i, j) * scale;

			if (!isfinite(x)) {
				char num[ATTN_NUM_MAX];

				attn_format_number(num, scale, 0, 0);
				attn_block_name(at, sizeof at, d->B, d->H,
				    k->b * d->H + k->h, " (", ")");
				return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
				    "scaled score of query %zu and key %zu%s "
				    "overflows a double (scale %s)", i + 1,
				    j + 1, at, num);
			}
			if (cfg->softcap > 0.0)
				x = cfg->softcap * tanh(x / cfg->softcap);
			*attn_at(&k->scaled, i, j) = x;
		}

	/* 3. + bias, + ALiBi's -slope * |pos_q - pos_k|. */
	for (i = 0; i < T; i++)
		for (j = 0; j < S; j++) {
			double *x = attn_at(&k->scaled, i, j);

			if (k->bias.data != NULL)
				*x += *attn_at(&k->bias, i, j);
			if (cfg->alibi)
				*x -= slope * fabs((double)(i + s_off) -
				    (double)(j + t_off));
		}

	/* 4. Masks: causal, window and --mask set -inf; keep records what
	 * survives (a -inf bias masks too). */
	for (i = 0; i < T; i++)
		for (j = 0; j < S; j++) {
			double *x = attn_at(&k->scaled, i, j);
			int keep = position_keeps(cfg, i + s_off, j + t_off);

			if (k->mask.data != NULL)
				keep = keep && ((*attn_at(&k->mask, i, j) !=
				    0.0) != (cfg->mask_invert != 0));
			if (!keep)
				*x = -INFINITY;
			*attn_at(&k->keep, i, j) = *x == -INFINITY ? 0.0 : 1.0;
		}

	/* 5. weights = softmax of each row, stably: subtract the row maximum
	 * so that exp never overflows; lse = max + log(sum).  A row with no
	 * key left (its maximum is -inf) gets what masked_rows says; a nan
	 * logit (only a bias can bring one) makes its whole row nan, as
	 * IEEE arithmetic would, rather than being skipped by the max. */
	for (i = 0; i < T; i++) {
		double max = -INFINITY, sum = 0.0;

		for (j = 0; j < S; j++) {
			double x = *attn_at(&k->scaled, i, j);

			if (isnan(x) || x > max)
				max = x;
			if (isnan(x))
				break;
		}
		if (isnan(max)) {
			for (j = 0; j < S; j++)
				*attn_at(&k->weights, i, j) = NAN;
			*attn_at(&k->lse, i, 0) = NAN;
			continue;
		}
		if (max == -INFINITY) {
			double w = cfg->masked_rows == ATTN_MASKED_NAN ? NAN :
			    cfg->masked_rows == ATTN_MASKED_UNIFORM ?
			    1.0 / (double)S : 0.0;

			for (j = 0; j < S; j++)
				*attn_at(&k->weights, i, j) = w;
			*attn_at(&k->lse, i, 0) = -INFINITY;
			continue;
		}
		for (j = 0; j < S; j++) {
			double e = exp(*attn_at(&k->scaled, i, j) - max);

			*attn_at(&k->weights, i, j) = e;
			sum += e;
		}
		for (j = 0; j < S; j++)
			*attn_at(&k->weights, i, j) /= sum;
		*attn_at(&k->lse, i, 0) = max + log(sum);
	}

	/* 6. output = weights V: each query's weighted mix of value rows. */
	for (i = 0; i < T; i++)
		for (j = 0; j < S; j++) {
			double w = *attn_at(&k->weights, i, j);

			for (c = 0; c < d->d_v; c++)
				*attn_at(&k->output, i, c) += w *
				    *attn_at(&k->v, j, c);
		}
	return ATTN_OK;
}

/* List the rows of the per-head stacks whose mask row is all zero. */
static enum attn_status
find_masked_rows(struct attn_stages *out, struct attn_error *err)
{
	const struct attn_matrix *keep = &out->stage[ATTN_STAGE_MASK];
	size_t i, j, n = 0;

	for (i = 0; i < keep->rows; i++) {
		for (j = 0; j < keep->cols && *attn_at(keep, i, j) == 0.0; j++)
			;
		n += j == keep->cols;
	}
	if (n == 0)
		return ATTN_OK;
	if ((out->masked = attn_alloc_array(n, sizeof *out->masked)) == NULL)
		return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "out of memory");
	for (i = 0; i < keep->rows; i++) {
		for (j = 0; j < keep->cols && *attn_at(keep, i, j) == 0.0; j++)
			;
		if (j == keep->cols)
			out->masked[out->nmasked++] = i;
	}
	return ATTN_OK;
}

/* The rows and columns of each stage for dims d; 0 when a size
 * overflows. */
static int
stage_sizes(const struct dims *d, size_t rows[ATTN_STAGE_COUNT],
    size_t cols[ATTN_STAGE_COUNT])
{
	size_t bh, per_head, out_cols, s;

	/* Per-head stages: B*H blocks of T rows; output: B*T x H*d_v (and
	 * B*T <= B*H*T). */
	if (attn_size_mul(d->B, d->H, &bh) != 0 ||
	    attn_size_mul(bh, d->T, &per_head) != 0 ||
	    attn_size_mul(d->H, d->d_v, &out_cols) != 0)
		return 0;
	for (s = 0; s < ATTN_STAGE_COUNT; s++) {
		const struct attn_stage_info *info = &attn_stage_table[s];

		rows[s] = info->per_head ? per_head : d->B * d->T;
		cols[s] = info->cols == ATTN_AXIS_KEY ? d->S :
		    info->cols == ATTN_AXIS_ONE ? 1 : out_cols;
	}
	return 1;
}

enum attn_status
attn_plan(const struct attn_config *cfg, const struct attn_inputs *in,
    size_t *bytes, struct attn_error *err)
{
	size_t rows[ATTN_STAGE_COUNT], cols[ATTN_STAGE_COUNT], s, n;
	struct dims d;
	enum attn_status st;

	*bytes = 0;
	if ((st = check_shapes(cfg, in, &d, err)) != ATTN_OK)
		return st;
	if (!stage_sizes(&d, rows, cols))
		goto overflow;
	for (s = 0; s < ATTN_STAGE_COUNT; s++) {
		if (attn_size_mul(rows[s], cols[s], &n) != 0 ||
		    attn_size_mul(n, sizeof(double), &n) != 0 ||
		    *bytes > SIZE_MAX - n)
			goto overflow;
		*bytes += n;
	}
	return ATTN_OK;
overflow:
	return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
	    "the stages of %zu batches of %zu heads, %zu queries and %zu "
	    "keys are too large to address", d.B, d.H, d.T, d.S);
}

enum attn_status
attn_run(const struct attn_config *cfg, const struct attn_inputs *in,
    struct attn_stages *out, struct attn_error *err)
{
	size_t rows[ATTN_STAGE_COUNT], cols[ATTN_STAGE_COUNT], b, h, s;
	struct dims d;
	enum attn_status st;
	double scale;

	memset(out, 0, sizeof *out);
	if ((st = check_shapes(cfg, in, &d, err)) != ATTN_OK)
		return st;
	scale = scale_of(cfg, d.d_k);
	out->batches = d.B;
	out->heads = d.H;
	out->kv_heads = d.G;
	out->T = d.T;
	out->S = d.S;
	out->d_k = d.d_k;
	out->d_v = d.d_v;
	out->scale = scale;

	if (!stage_sizes(&d, rows, cols))
		return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "%zu batches of %zu heads of %zu rows are too many",
		    d.B, d.H, d.T);
	for (s = 0; s < ATTN_STAGE_COUNT; s++)
		if ((st = attn_matrix_alloc(&out->stage[s], rows[s], cols[s],
		    err)) != ATTN_OK)
			goto fail;

	for (b = 0; b < d.B; b++)
		for (h = 0; h < d.H; h++) {
			size_t g = attn_kv_head(h, d.H, d.G);
			struct block k;

			memset(&k, 0, sizeof k);
			k.b = b;
			k.h = h;
			k.q = attn_matrix_view(&in->q, b * d.T, d.T,
			    h * d.d_k, d.d_k);
			k.k = attn_matrix_view(&in->k, b * d.S, d.S,
			    g * d.d_k, d.d_k);
			k.v = attn_matrix_view(&in->v, b * d.S, d.S,
			    g * d.d_v, d.d_v);
			if (in->mask.data != NULL)
				k.mask = input_block(&in->mask,
				    in->mask_blocks, &d, b, h);
			if (in->bias.data != NULL)
				k.bias = input_block(&in->bias,
				    in->bias_blocks, &d, b, h);
			k.scores = attn_stage_block(out, ATTN_STAGE_SCORES, b, h);
			k.scaled = attn_stage_block(out, ATTN_STAGE_SCALED, b, h);
			k.weights = attn_stage_block(out, ATTN_STAGE_WEIGHTS, b,
			    h);
			k.keep = attn_stage_block(out, ATTN_STAGE_MASK, b, h);
			k.output = attn_stage_block(out, ATTN_STAGE_OUTPUT, b, h);
			k.lse = attn_stage_block(out, ATTN_STAGE_LSE, b, h);
			if ((st = kernel_block(cfg, &d, scale, &k, err)) !=
			    ATTN_OK)
				goto fail;
		}
	if ((st = find_masked_rows(out, err)) != ATTN_OK)
		goto fail;
	return ATTN_OK;
fail:
	attn_stages_free(out);
	return st;
}

enum attn_status
attn_compute(const struct attn_config *cfg, const struct attn_matrix *q,
    const struct attn_matrix *k, const struct attn_matrix *v,
    struct attn_stages *out, struct attn_error *err)
{
	struct attn_inputs in;

	memset(&in, 0, sizeof in);
	in.batches = 1;
	in.q = *q;
	in.k = *k;
	in.v = *v;
	return attn_run(cfg, &in, out, err);
}
