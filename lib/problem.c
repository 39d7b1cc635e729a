/*
 * problem.c - what every kernel needs, whichever way it computes: the
 * shape checks (one message per rule, naming both shapes), the scale, the
 * positions of the first query and key, the stages to hold and to
 * compute, the input blocks of each batch and head, ALiBi slopes, the
 * errors a kernel reports, and scratch for stages that are computed but
 * not held.  The per-logit rules (softcap, bias and ALiBi, masks) are
 * inline in internal.h, next to struct attn_problem, so that a fast
 * kernel pays no call for them; lib/mask.c answers the masks for tiles.
 *
 * Dims: B batches, H query heads, G KV heads, T query rows, S keys, d_k
 * and d_v columns per head.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

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

double
attn_run_slope(const struct attn_config *cfg, const struct attn_inputs *in,
    size_t b, size_t h, size_t heads)
{
	const struct attn_matrix *m = &in->alibi_slopes;

	if (!cfg->alibi)
		return 0.0;
	if (m->data == NULL)
		return attn_alibi_slope(h, heads);
	/* one a head, in a row or a column (of more than one head: with
	 * one, a column is B x 1, a slope a batch); else a row a batch */
	if (m->rows == 1)
		return *attn_at(m, 0, h);
	if (m->cols == 1 && m->rows == heads && heads > 1)
		return *attn_at(m, h, 0);
	return *attn_at(m, b, h);
}

/* ---------------------------------------------------------------- shapes */

/* The sink of head h in sinks, a row or a column of H. */
static double
sink_of(const struct attn_matrix *sinks, size_t h)
{
	return sinks->rows == 1 ? *attn_at(sinks, 0, h) :
	    *attn_at(sinks, h, 0);
}

/* The rows of each block of a stack of `blocks` (T, or 1 for a row that
 * every query reads), or 0 when they do not divide equally. */
static size_t
block_rows(const struct attn_matrix *m, size_t blocks)
{
	return blocks == 0 || m->rows % blocks != 0 ? 0 : m->rows / blocks;
}

int
attn_input_blocks_fit(const struct attn_matrix *m, size_t blocks, size_t B,
    size_t H, size_t T, size_t S)
{
	const size_t r = block_rows(m, blocks);
	size_t bh;

	return attn_size_mul(B, H, &bh) == 0 && (r == T || r == 1) &&
	    (m->cols == S || m->cols == 1) &&
	    (blocks == 1 || blocks == B || blocks == bh);
}

/* A mask or bias that does not fit: a data error naming both shapes. */
static enum attn_status
check_blocks(const char *what, const struct attn_matrix *m, size_t blocks,
    const struct attn_problem *p, struct attn_error *err)
{
	if (m->data == NULL ||
	    attn_input_blocks_fit(m, blocks, p->B, p->H, p->T, p->S))
		return ATTN_OK;
	return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
	    "shape mismatch: %s is %zu block%s of %zux%zu but scores are "
	    "%zux%zu (T x S): a %s needs blocks of T x S (or 1 x S, T x 1, "
	    "1 x 1), one in all, one per batch (%zu) or one per batch and "
	    "head (%zu)", what, blocks, blocks == 1 ? "" : "s",
	    blocks == 0 ? 0 : m->rows / blocks, m->cols, p->T, p->S, what,
	    p->B, p->B * p->H);
}

/* ALiBi's slopes (attn_inputs.alibi_slopes): H in a row or a column
 * (1 x H or H x 1 whatever B is), or B x H; finite (attn_run_slope
 * reads them). */
static enum attn_status
check_slopes(const struct attn_matrix *m, const struct attn_problem *p,
    struct attn_error *err)
{
	size_t i, j;

	if (m->data == NULL || !p->cfg->alibi)
		return ATTN_OK;
	if (!(m->rows == 1 && m->cols == p->H) && !(m->cols == 1 &&
	    m->rows == p->H) && !(m->rows == p->B && m->cols == p->H))
		return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
		    "shape mismatch: the ALiBi slopes are %zux%zu but there "
		    "%s %zu head%s and %zu batch%s: give H slopes, or B x H "
		    "as FlashAttention's alibi_slopes", m->rows, m->cols,
		    p->H == 1 ? "is" : "are", p->H, p->H == 1 ? "" : "s", p->B,
		    p->B == 1 ? "" : "es");
	for (i = 0; i < m->rows; i++)
		for (j = 0; j < m->cols; j++)
			if (!isfinite(*attn_at(m, i, j)))
				return attn_error_set(err, ATTN_ERR_DATA, NULL,
				    0, 0, "ALiBi slope %zu is not finite",
				    i * m->cols + j + 1);
	return ATTN_OK;
}

/* Sinks: one finite logit per query head, in a row or a column. */
static enum attn_status
check_sinks(const struct attn_matrix *m, const struct attn_problem *p,
    struct attn_error *err)
{
	size_t h;

	if (m->data == NULL)
		return ATTN_OK;
	if ((m->rows != 1 && m->cols != 1) || m->rows * m->cols != p->H)
		return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
		    "shape mismatch: the sinks are %zux%zu but there %s %zu "
		    "head%s: give one sink logit per query head", m->rows,
		    m->cols, p->H == 1 ? "is" : "are", p->H,
		    p->H == 1 ? "" : "s");
	for (h = 0; h < p->H; h++)
		if (!isfinite(sink_of(m, h)))
			return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
			    "the sink of head %zu is not finite: a sink is a "
			    "logit, a finite number", h + 1);
	return ATTN_OK;
}

const char *
attn_stack_shape(char *buf, size_t size, const struct attn_matrix *m,
    size_t B)
{
	if (B > 1)
		snprintf(buf, size, "%zux%zux%zu", B, m->rows / B, m->cols);
	else
		snprintf(buf, size, "%zux%zu", m->rows, m->cols);
	return buf;
}

/* dO, when given, has output's shape: B*T x H*d_v. */
static enum attn_status
check_d_out(const struct attn_matrix *d, const struct attn_problem *p,
    struct attn_error *err)
{
	char got[64], want[64];
	size_t cols;

	if (d->data == NULL ||
	    (attn_size_mul(p->H, p->d_v, &cols) == 0 && d->cols == cols &&
	    d->rows == p->B * p->T))
		return ATTN_OK;
	attn_stack_shape(got, sizeof got, d, d->rows % p->B == 0 ? p->B : 1);
	if (p->B > 1)
		snprintf(want, sizeof want, "%zux%zux%zu", p->B, p->T, cols);
	else
		snprintf(want, sizeof want, "%zux%zu", p->T, cols);
	return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
	    "shape mismatch: dO is %s but output is %s: dO, the gradient of "
	    "the output, needs its shape (%s%s)", got, want,
	    p->B > 1 ? "B x " : "", p->H > 1 ? "T x H*d_v" : "T x d_v");
}

/*
 * K given as d_k x S, as K^T is written (V likewise as d_v x S): what a
 * shape error adds when m's rows per batch are the columns it should
 * have, `width`, and its columns are not; "" otherwise.  A square K
 * cannot be told from its transpose, and gets no hint.  With S taken
 * from K, a V hint needs K's rows to be right; the caller knows.
 */
static const char *
transposed_hint(char *buf, size_t size, const char *who, const char *d,
    const struct attn_matrix *m, const struct attn_problem *p,
    const struct attn_config *cfg, size_t width)
{
	const size_t rows = m->rows / p->B;
	/* the heads K and V hold side by side in their columns */
	const char *g = p->G == 1 ? "" : cfg->kv_heads != 0 ? "G*" : "H*";

	buf[0] = '\0';
	if (rows == width && m->cols != width) {
		if (p->B > 1)
			snprintf(buf, size, "; %s looks transposed: it should "
			    "be B x S x %s%s = %zux%zux%zu", who, g, d, p->B,
			    m->cols, width);
		else
			snprintf(buf, size, "; %s looks transposed: it should "
			    "be S x %s%s = %zux%zu", who, g, d, m->cols, width);
	}
	return buf;
}

static enum attn_status
check_shapes(const struct attn_config *cfg, const struct attn_inputs *in,
    struct attn_problem *p, struct attn_error *err)
{
	const struct attn_matrix *q = &in->q, *k = &in->k, *v = &in->v;
	char qs[64], ks[64], vs[64], hint[128];
	enum attn_status st;

	p->B = in->batches;
	p->H = cfg->heads;
	p->G = cfg->kv_heads != 0 ? cfg->kv_heads : cfg->heads;
	if (p->B == 0)
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "0 batches: there must be at least one");
	if (p->H == 0 || p->G > p->H || p->H % p->G != 0)
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "%zu head%s and %zu KV head%s: the heads must be a "
		    "multiple of the KV heads, and neither may be 0", p->H,
		    p->H == 1 ? "" : "s", p->G, p->G == 1 ? "" : "s");
	if (q->rows % p->B != 0 || k->rows % p->B != 0 ||
	    v->rows % p->B != 0)
		return attn_error_set(err, ATTN_ERR_INTERNAL, NULL, 0, 0,
		    "stacks of %zu, %zu and %zu rows do not hold %zu batches",
		    q->rows, k->rows, v->rows, p->B);
	if (q->rows == 0 || q->cols == 0 || k->rows == 0 || v->cols == 0)
		return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
		    "empty matrix: Q is %zux%zu, K is %zux%zu, V is %zux%zu",
		    q->rows, q->cols, k->rows, k->cols, v->rows, v->cols);
	p->T = q->rows / p->B;
	p->S = k->rows / p->B;
	attn_stack_shape(qs, sizeof qs, q, p->B);
	attn_stack_shape(ks, sizeof ks, k, p->B);
	attn_stack_shape(vs, sizeof vs, v, p->B);
	if (q->cols % p->H != 0)
		return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
		    "Q is %s: %zu heads cannot split its columns equally",
		    qs, p->H);
	p->d_k = q->cols / p->H;
	/* K's columns must be G*d_k: the hint when they are its rows */
	transposed_hint(hint, sizeof hint, "K", "d_k", k, p, cfg,
	    p->G * p->d_k);
	if (k->cols % p->G != 0 || v->cols % p->G != 0)
		return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
		    "K is %s and V is %s: %zu %s cannot split their columns "
		    "equally%s", ks, vs, p->G,
		    cfg->kv_heads != 0 ? "KV heads" : "heads",
		    k->cols % p->G != 0 ? hint : "");
	p->d_v = v->cols / p->G;
	if (p->H == 1 && p->G == 1 && q->cols != k->cols)
		return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
		    "shape mismatch: Q is %s but K is %s: "
		    "Q and K need the same number of columns (d_k)%s", qs, ks,
		    hint);
	if (k->cols / p->G != p->d_k)
		return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
		    "shape mismatch: Q is %s but K is %s: with %zu "
		    "head%s and %zu KV head%s, d_k is %zu/%zu = %zu for Q but "
		    "%zu/%zu = %zu for K%s", qs, ks,
		    p->H, p->H == 1 ? "" : "s", p->G, p->G == 1 ? "" : "s",
		    q->cols, p->H, p->d_k, k->cols, p->G, k->cols / p->G, hint);
	/* K is right by now, so S is: V's rows must be S */
	if (k->rows != v->rows)
		return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
		    "shape mismatch: K is %s but V is %s: "
		    "K and V need the same number of rows (S)%s", ks, vs,
		    v->cols == p->S ? transposed_hint(hint, sizeof hint, "V",
		    "d_v", v, p, cfg, v->rows / p->B) : "");
	if ((st = check_blocks("mask", &in->mask, in->mask_blocks, p,
	    err)) != ATTN_OK ||
	    (st = check_blocks("bias", &in->bias, in->bias_blocks, p,
	    err)) != ATTN_OK ||
	    (st = check_blocks("dropout mask", &in->dropout_mask,
	    in->dropout_blocks, p, err)) != ATTN_OK)
		return st;
	if ((st = check_d_out(&in->d_out, p, err)) != ATTN_OK)
		return st;
	if ((st = check_sinks(&in->sinks, p, err)) != ATTN_OK)
		return st;
	return check_slopes(&in->alibi_slopes, p, err);
}

/* Offsets c[0..n] of `what` that are cumulative lengths: 0 first, none
 * less than the one before, `total` (the rows of `rows`) last. */
static enum attn_status
check_offsets(const size_t *c, size_t n, const char *what, size_t total,
    const char *rows, struct attn_error *err)
{
	size_t s;

	if (c == NULL)
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "packed sequences need both cu_seqlens_q and "
		    "cu_seqlens_k");
	if (c[0] != 0)
		return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
		    "%s starts at %zu: cumulative sequence lengths start at 0",
		    what, c[0]);
	for (s = 1; s <= n; s++)
		if (c[s] < c[s - 1])
			return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
			    "%s goes down from %zu to %zu (offsets %zu and "
			    "%zu): cumulative sequence lengths never decrease",
			    what, c[s - 1], c[s], s, s + 1);
	if (c[n] != total)
		return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
		    "%s ends at %zu but %s has %zu rows: the last offset is "
		    "the total of the packed rows", what, c[n], rows, total);
	return ATTN_OK;
}

/* Packed sequences (varlen.seqs > 0) and counts of used keys: the
 * offsets fit Q and K, one batch, a count per sequence or batch, none
 * above its keys. */
static enum attn_status
check_varlen(const struct attn_varlen *vl, const struct attn_problem *p,
    struct attn_error *err)
{
	const size_t n = vl->seqs > 0 ? vl->seqs : p->B;
	enum attn_status st;
	size_t s;

	if (vl->seqs > 0) {
		if (p->B != 1)
			return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
			    "packed sequences (cu_seqlens) need one batch, but "
			    "there are %zu: pack every sequence's rows one "
			    "after the other in Q, K and V", p->B);
		if ((st = check_offsets(vl->cu_q, vl->seqs, "cu_seqlens_q",
		    p->T, "Q", err)) != ATTN_OK ||
		    (st = check_offsets(vl->cu_k, vl->seqs, "cu_seqlens_k",
		    p->S, "K", err)) != ATTN_OK)
			return st;
	}
	if (vl->used_k == NULL)
		return ATTN_OK;
	if (vl->used_n != n)
		return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
		    "seqused_k has %zu count%s but there %s %zu %s: give one "
		    "count of used keys per %s", vl->used_n,
		    vl->used_n == 1 ? "" : "s", n == 1 ? "is" : "are", n,
		    vl->seqs > 0 ? n == 1 ? "sequence" : "sequences" :
		    n == 1 ? "batch" : "batches",
		    vl->seqs > 0 ? "sequence" : "batch");
	for (s = 0; s < n; s++) {
		const size_t keys = vl->seqs > 0 ? vl->cu_k[s + 1] -
		    vl->cu_k[s] : p->S;

		if (vl->used_k[s] > keys)
			return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
			    "seqused_k of %s %zu is %zu but it has %zu keys: "
			    "the used keys are at most the keys",
			    vl->seqs > 0 ? "sequence" : "batch", s + 1,
			    vl->used_k[s], keys);
	}
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

double
attn_descale(const struct attn_matrix *m, size_t b, size_t g)
{
	if (m->data == NULL)
		return 1.0;
	return m->rows == 1 && m->cols == 1 ? m->data[0] : *attn_at(m, b, g);
}

/* The descale factors: B x G or 1 x 1, finite and above 0, and only for
 * forward stages (FlashAttention 3's fp8 kernels, whose convention they
 * are, have no backward pass). */
static enum attn_status
check_descales(const struct attn_problem *p, struct attn_error *err)
{
	const struct attn_matrix *m[3] = { &p->in->descale_q,
	    &p->in->descale_k, &p->in->descale_v };
	static const char *const name[3] = { "q", "k", "v" };
	size_t n, b, g;

	for (n = 0; n < 3; n++) {
		if (m[n]->data == NULL)
			continue;
		if (p->hold & ATTN_STAGES_GRAD)
			return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
			    "descale factors are FlashAttention 3's fp8 "
			    "forward convention: no backward stage goes with "
			    "them");
		if ((m[n]->rows != p->B || m[n]->cols != p->G) &&
		    (m[n]->rows != 1 || m[n]->cols != 1))
			return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
			    "shape mismatch: the descale factors of %s are "
			    "%zux%zu but there %s %zu batch%s and %zu KV "
			    "head%s: give one factor per batch and KV head "
			    "(%zux%zu), or one number", name[n], m[n]->rows,
			    m[n]->cols, p->B == 1 ? "is" : "are", p->B,
			    p->B == 1 ? "" : "es", p->G, p->G == 1 ? "" : "s",
			    p->B, p->G);
		for (b = 0; b < p->B; b++)
			for (g = 0; g < p->G; g++) {
				const double x = attn_descale(m[n], b, g);

				if (!isfinite(x) || x <= 0.0)
					return attn_error_set(err,
					    ATTN_ERR_DATA, NULL, 0, 0, "the "
					    "descale factor of %s for batch %zu "
					    "and KV head %zu is not a finite "
					    "number above 0", name[n], b + 1,
					    g + 1);
			}
	}
	return ATTN_OK;
}

/* Dropout (attn(1), --dropout-p): p in [0, 1), read only with a mask;
 * a row with no key has no weights of its own to drop, so --masked-rows
 * uniform, which gives it some, is refused with one. */
static enum attn_status
check_dropout(const struct attn_problem *p, struct attn_error *err)
{
	const double dp = p->cfg->dropout_p;

	if (p->in->dropout_mask.data == NULL)
		return ATTN_OK;
	if (!(dp >= 0.0 && dp < 1.0))
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "the dropout probability must be at least 0 and below 1");
	if (p->cfg->masked_rows == ATTN_MASKED_UNIFORM)
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "a dropout mask drops weights that a row's keys give: "
		    "--masked-rows uniform gives a row with no key weights of "
		    "its own");
	return ATTN_OK;
}

/* The backward stages need dO. */
static enum attn_status
check_grad_wanted(const struct attn_problem *p, struct attn_error *err)
{
	size_t s;

	if (p->in->d_out.data != NULL)
		return ATTN_OK;
	for (s = 0; s < ATTN_STAGE_COUNT; s++)
		if (p->hold & ATTN_STAGES_GRAD & ATTN_STAGE_BIT(s))
			return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
			    "stage %s needs dO, the gradient of the output",
			    attn_stage_table[s].name);
	return ATTN_OK;
}

enum attn_status
attn_problem_init(struct attn_problem *p, const struct attn_config *cfg,
    const struct attn_inputs *in, unsigned want, struct attn_error *err)
{
	enum attn_status st;

	memset(p, 0, sizeof *p);
	p->cfg = cfg;
	p->in = in;
	if ((st = check_shapes(cfg, in, p, err)) != ATTN_OK ||
	    (st = check_varlen(&in->varlen, p, err)) != ATTN_OK)
		return st;
	p->scale = scale_of(cfg, p->d_k);
	p->keep_scale = in->dropout_mask.data != NULL ? 1.0 / (1.0 -
	    cfg->dropout_p) : 1.0;
	p->q_pos0 = cfg->align == ATTN_ALIGN_BOTTOM_RIGHT ? p->S : 0;
	p->k_pos0 = cfg->align == ATTN_ALIGN_BOTTOM_RIGHT ? p->T : 0;
	p->threads = cfg->threads != 0 ? cfg->threads : attn_cpu_count();
	/* lse is always held: the rows with no key are read from it. */
	p->hold = (want & ATTN_STAGES_EVERY) | ATTN_STAGE_BIT(ATTN_STAGE_LSE);
	p->need = attn_stage_closure(p->hold);
	if ((st = check_descales(p, err)) != ATTN_OK ||
	    (st = check_dropout(p, err)) != ATTN_OK)
		return st;
	return check_grad_wanted(p, err);
}

/* The first row of block b, h of a mask or bias stack of `blocks`
 * blocks, in a run of B batches of H heads. */
static size_t
input_block_row0(const struct attn_matrix *m, size_t blocks, size_t B,
    size_t H, size_t b, size_t h)
{
	const size_t i = blocks == 1 ? 0 : blocks == B ? b : b * H + h;

	return i * block_rows(m, blocks);
}

/* Block b, h of a mask or bias stack as a T x S view for attn_input_at:
 * a block of one row is that row T times over (stride 0); one of one
 * column stays so. */
static struct attn_matrix
input_block(const struct attn_matrix *m, size_t blocks, size_t B, size_t H,
    size_t T, size_t b, size_t h)
{
	const size_t r = block_rows(m, blocks);
	struct attn_matrix v = attn_matrix_view(m,
	    input_block_row0(m, blocks, B, H, b, h), r, 0, m->cols);

	if (r == 1) {
		v.rows = T;
		v.stride = 0;
	}
	return v;
}

/* The input blocks of batch b, head h, for the dims of a run: what
 * attn_problem_head and attn_head_inputs both give. */
static void
head_views(const struct attn_inputs *in, size_t H, size_t G, size_t T,
    size_t S, size_t d_k, size_t d_v, size_t b, size_t h,
    struct attn_head_inputs *out)
{
	const size_t g = attn_kv_head(h, H, G);

	memset(out, 0, sizeof *out);
	out->q = attn_matrix_view(&in->q, b * T, T, h * d_k, d_k);
	out->k = attn_matrix_view(&in->k, b * S, S, g * d_k, d_k);
	out->v = attn_matrix_view(&in->v, b * S, S, g * d_v, d_v);
	if (in->mask.data != NULL)
		out->mask = input_block(&in->mask, in->mask_blocks,
		    in->batches, H, T, b, h);
	if (in->bias.data != NULL)
		out->bias = input_block(&in->bias, in->bias_blocks,
		    in->batches, H, T, b, h);
}

void
attn_problem_head(const struct attn_problem *p, size_t b, size_t h,
    struct attn_head *hd)
{
	const struct attn_inputs *in = p->in;
	struct attn_head_inputs v;

	memset(hd, 0, sizeof *hd);
	hd->b = b;
	hd->h = h;
	hd->g = attn_kv_head(h, p->H, p->G);
	hd->n = b * p->H + h;
	hd->slope = attn_run_slope(p->cfg, in, b, h, p->H);
	hd->sink = in->sinks.data != NULL ? sink_of(&in->sinks, h) :
	    -INFINITY;
	head_views(in, p->H, p->G, p->T, p->S, p->d_k, p->d_v, b, h, &v);
	hd->q = v.q;
	hd->k = v.k;
	hd->v = v.v;
	hd->mask = v.mask;
	if (in->mask.data != NULL)
		hd->mask_row0 = input_block_row0(&in->mask, in->mask_blocks,
		    in->batches, p->H, b, h);
	hd->bias = v.bias;
	if (in->dropout_mask.data != NULL)
		hd->dropout = input_block(&in->dropout_mask,
		    in->dropout_blocks, in->batches, p->H, p->T, b, h);
	if (in->d_out.data != NULL)
		hd->d_out = attn_matrix_view(&in->d_out, b * p->T, p->T,
		    h * p->d_v, p->d_v);
}

void
attn_head_inputs(const struct attn_stages *stages, const struct attn_inputs *in,
    size_t b, size_t h, struct attn_head_inputs *out)
{
	/* what the kernel read: with RoPE q_rot and k_rot, with a layer
	 * q, k and v (the passes made them; in holds the embeddings) */
	static const enum attn_stage read[3][2] = {
		{ ATTN_STAGE_Q_ROT, ATTN_STAGE_Q },
		{ ATTN_STAGE_K_ROT, ATTN_STAGE_K },
		{ ATTN_STAGE_V, ATTN_STAGE_V },
	};
	struct attn_matrix *m[3] = { &out->q, &out->k, &out->v };
	size_t i, r;

	head_views(in, stages->heads, stages->kv_heads, stages->T, stages->S,
	    stages->d_k, stages->d_v, b, h, out);
	for (i = 0; i < 3; i++)
		for (r = 0; r < 2; r++)
			if (stages->have & ATTN_STAGE_BIT(read[i][r])) {
				*m[i] = attn_stage_block(stages, read[i][r],
				    b, h);
				break;
			}
}

/* ---------------------------------------------------------------- errors */

enum attn_status
attn_error_score(struct attn_error *err, const struct attn_problem *p,
    const struct attn_head *hd, size_t i, size_t j)
{
	char at[64];

	attn_block_name(at, sizeof at, p->B, p->H, hd->n, " (", ")");
	return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
	    "score of query %zu and key %zu%s overflows a double (Q and K "
	    "values are too large)", i + 1, j + 1, at);
}

enum attn_status
attn_error_scaled(struct attn_error *err, const struct attn_problem *p,
    const struct attn_head *hd, size_t i, size_t j)
{
	char at[64], num[ATTN_NUM_MAX];

	attn_format_number(num, p->scale, 0, 0);
	attn_block_name(at, sizeof at, p->B, p->H, hd->n, " (", ")");
	return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
	    "scaled score of query %zu and key %zu%s overflows a double "
	    "(scale %s)", i + 1, j + 1, at, num);
}

enum attn_status
attn_error_logit(struct attn_error *err, const struct attn_problem *p,
    const struct attn_head *hd, size_t i, size_t j)
{
	char at[64], num[ATTN_NUM_MAX];

	attn_format_number(num, hd->bias.data != NULL ?
	    attn_input_at(&hd->bias, i, j) : 0.0, 0, 0);
	attn_block_name(at, sizeof at, p->B, p->H, hd->n, " (", ")");
	return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
	    "logit of query %zu and key %zu%s overflows a double when the "
	    "bias %s%s added to its scaled score", i + 1, j + 1, at, num,
	    p->cfg->alibi ? " and ALiBi are" : " is");
}

enum attn_status
attn_error_output(struct attn_error *err, const struct attn_problem *p,
    const struct attn_head *hd, size_t i, size_t c)
{
	char at[64];

	attn_block_name(at, sizeof at, p->B, p->H, hd->n, " (", ")");
	return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
	    "output of query %zu, column %zu%s overflows a double (V's values "
	    "are too large: the weighted mean of them lies beyond the "
	    "doubles)", i + 1, c + 1, at);
}
