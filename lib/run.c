/*
 * run.c - attn_run and attn_plan (and attn_emulate and attn_emulate_plan,
 * the same in a lower precision): check the problem once
 * (lib/problem.c), allocate the stages the caller holds, run the passes
 * before the kernel (projections, RoPE: lib/passes.c), let the kernel
 * compute, list the rows that may attend no key, reduce grad_bias and
 * grad_sinks (lib/grad_reduce.c), then run the passes after it (the
 * output projection).  This is the one place where kernels are
 * dispatched: the streaming kernel in double precision, the emulation's
 * below it, and for the tests any kernel's ops (attn_run_kernel); each
 * gets the passes for free.
 */
#include <math.h>
#include <stdint.h>
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
	cfg->isa = ATTN_ISA_AUTO;
	cfg->threads = 0;
	cfg->rope = 0;
	cfg->rope_base = 10000.0;
	cfg->rope_style = ATTN_ROPE_HALF;
	cfg->emulate_order = ATTN_EMULATE_ORDER_Q;
}

void
attn_stages_free(struct attn_stages *s)
{
	size_t i;

	for (i = 0; i < ATTN_STAGE_COUNT; i++)
		attn_matrix_free(&s->stage[i]);
	attn_matrix_free(&s->sinks);
	attn_mem_free(s->masked, s->nmasked * sizeof *s->masked);
	memset(s, 0, sizeof *s);
}

/* The rows and columns of the whole stack of stage s; 0 when a size
 * overflows.  Per-head stages: B*H blocks of T rows; output: B*T rows
 * of H*d_v; grad_q, grad_k, grad_v: as Q, K and V. */
static int
stack_size(const struct attn_problem *p, enum attn_stage s, size_t *rows,
    size_t *cols)
{
	const struct attn_stage_info *info = &attn_stage_table[s];
	size_t bh;

	if (attn_size_mul(p->B, p->H, &bh) != 0 ||
	    attn_size_mul(info->per_head ? bh : p->B,
	    attn_stage_block_rows(s, p->T, p->S), rows) != 0)
		return 0;
	return attn_size_mul(attn_stage_col_heads(s, p->H, p->G),
	    attn_stage_block_cols(s, p->S, p->d_k, p->d_v), cols) == 0;
}

static enum attn_status
too_large(const struct attn_problem *p, struct attn_error *err)
{
	return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
	    "the stages of %zu batches of %zu heads, %zu queries and %zu "
	    "keys are too large to address", p->B, p->H, p->T, p->S);
}

/*
 * The kernel for p: ops when the caller names one (the tests), else the
 * streaming kernel, or in a precision below fp64 its emulation
 * (lib/emulate.c); a usage error when it cannot compute a stage p holds.
 */
static enum attn_status
pick(const struct attn_problem *p, enum attn_precision prec,
    const struct attn_kernel_ops *want_ops,
    const struct attn_kernel_ops **ops, struct attn_error *err)
{
	size_t s;

	if (prec != ATTN_PREC_FP64)
		*ops = attn_emulate_ops(prec);
	else
		*ops = want_ops != NULL ? want_ops : &attn_kernel_stream;
	if (*ops == NULL)
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "no precision number %u", (unsigned)prec);
	if (prec != ATTN_PREC_FP64 && prec != ATTN_PREC_FP8_E4M3 &&
	    prec != ATTN_PREC_FP8_E5M2 && (p->in->descale_q.data != NULL ||
	    p->in->descale_k.data != NULL || p->in->descale_v.data != NULL))
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "descale factors are FlashAttention 3's fp8 convention: "
		    "the %s kernel takes none, the emulated fp8-e4m3 and "
		    "fp8-e5m2 ones do", (*ops)->name);
	/* FlashAttention 3's fp8 forward scales the float32 logits: no
	 * operand of its is scaled first (attn(1), --emulate-order) */
	if ((prec == ATTN_PREC_FP8_E4M3 || prec == ATTN_PREC_FP8_E5M2) &&
	    p->cfg->emulate_order != ATTN_EMULATE_ORDER_Q)
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "the %s kernel scales the float32 logits, neither q nor "
		    "k: the order of the scale is the fp32, fp16 and bf16 "
		    "emulations'", (*ops)->name);
	/* a kernel that cannot compute dropped takes no dropout mask */
	if (p->in->dropout_mask.data != NULL &&
	    !((*ops)->stages & ATTN_STAGES_DROPOUT))
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "the %s kernel takes no dropout mask", (*ops)->name);
	for (s = 0; s < ATTN_STAGE_COUNT; s++)
		if ((p->hold & ATTN_STAGE_BIT(s)) &&
		    !((*ops)->stages & ATTN_STAGE_BIT(s)))
			return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
			    "the %s kernel cannot compute %s", (*ops)->name,
			    attn_stage_table[s].name);
	return ATTN_OK;
}

static enum attn_status
plan_in(const struct attn_kernel_ops *want_ops, const struct attn_config *cfg,
    const struct attn_inputs *in, unsigned want, enum attn_precision prec,
    size_t *bytes, struct attn_error *err)
{
	const struct attn_kernel_ops *ops;
	struct attn_problem p;
	enum attn_status st;
	struct attn_passes ps;
	size_t rows, cols, n, s;

	*bytes = 0;
	if ((st = attn_passes_prepare(cfg, in, want, &ps, &p, err)) !=
	    ATTN_OK ||
	    (st = pick(&p, prec, want_ops, &ops, err)) != ATTN_OK ||
	    (st = attn_reduce_plan(&p, prec, want, bytes, err)) != ATTN_OK)
		return st;
	for (s = 0; s < ATTN_STAGE_COUNT; s++) {
		if (!(p.hold & ATTN_STAGE_BIT(s)))
			continue;
		if (!stack_size(&p, (enum attn_stage)s, &rows, &cols) ||
		    attn_size_mul(rows, cols, &n) != 0 ||
		    attn_size_mul(n, sizeof(double), &n) != 0 ||
		    *bytes > SIZE_MAX - (n = attn_mem_cost(n)))
			return too_large(&p, err);
		*bytes += n;
	}
	if ((st = ops->plan(&p, &n, err)) != ATTN_OK)
		return st;
	if (*bytes > SIZE_MAX - n)
		return too_large(&p, err);
	*bytes += n;
	if ((st = attn_passes_bytes(&p, in, want, &n, err)) != ATTN_OK)
		return st;
	if (*bytes > SIZE_MAX - n)
		return too_large(&p, err);
	*bytes += n;
	return ATTN_OK;
}

/* List the rows of the per-head stacks whose lse is -inf: every logit of
 * the row is -inf, by the masks or by the bias. */
static enum attn_status
find_masked_rows(struct attn_stages *out, struct attn_error *err)
{
	const struct attn_matrix *lse = &out->stage[ATTN_STAGE_LSE];
	size_t i, n = 0;

	for (i = 0; i < lse->rows; i++)
		n += *attn_at(lse, i, 0) == -INFINITY;
	if (n == 0)
		return ATTN_OK;
	if ((out->masked = attn_mem_array(n, sizeof *out->masked)) == NULL)
		return attn_error_nomem(err, NULL, "listing the rows with no "
		    "key");
	for (i = 0; i < lse->rows; i++)
		if (*attn_at(lse, i, 0) == -INFINITY)
			out->masked[out->nmasked++] = i;
	return ATTN_OK;
}

/* A copy of the sinks in force, 1 x H, for printers that name them. */
static enum attn_status
copy_sinks(const struct attn_problem *p, struct attn_stages *out,
    struct attn_error *err)
{
	struct attn_head hd;
	enum attn_status st;
	size_t h;

	if (p->in->sinks.data == NULL)
		return ATTN_OK;
	if ((st = attn_matrix_alloc(&out->sinks, 1, p->H, err)) != ATTN_OK)
		return st;
	for (h = 0; h < p->H; h++) {
		attn_problem_head(p, 0, h, &hd);
		*attn_at(&out->sinks, 0, h) = hd.sink;
	}
	return ATTN_OK;
}

enum attn_status
attn_stages_alloc(const struct attn_problem *p, struct attn_stages *out,
    struct attn_error *err)
{
	enum attn_status st;
	size_t rows, cols, s;

	memset(out, 0, sizeof *out);
	out->batches = p->B;
	out->heads = p->H;
	out->kv_heads = p->G;
	out->T = p->T;
	out->S = p->S;
	out->d_k = p->d_k;
	out->d_v = p->d_v;
	out->scale = p->scale;
	out->layout = p->cfg->layout;
	out->have = p->hold;
	for (s = 0; s < ATTN_STAGE_COUNT; s++) {
		if (!(p->hold & ATTN_STAGE_BIT(s)))
			continue;
		if (!stack_size(p, (enum attn_stage)s, &rows, &cols)) {
			st = too_large(p, err);
			goto fail;
		}
		if ((st = attn_matrix_alloc(&out->stage[s], rows, cols,
		    err)) != ATTN_OK)
			goto fail;
	}
	return ATTN_OK;
fail:
	attn_stages_free(out);
	return st;
}

/* The kernel's status, or with a split every process's stages merged
 * after it (attn_split). */
static enum attn_status
merge(struct attn_problem *p, enum attn_status st,
    struct attn_stages *out, struct attn_error *err)
{
	if (p->split == NULL)
		return st;
	return p->split->merge(p->split->arg, st, out, &p->sums, err);
}

static enum attn_status
run_in(const struct attn_kernel_ops *want_ops, const struct attn_config *cfg,
    const struct attn_inputs *in, unsigned want, enum attn_precision prec,
    const struct attn_split *split, struct attn_stages *out,
    struct attn_error *err)
{
	const struct attn_kernel_ops *ops;
	struct attn_problem p;
	struct attn_passes ps;
	enum attn_status st;

	size_t bytes;

	memset(out, 0, sizeof *out);
	if ((st = attn_passes_prepare(cfg, in, want, &ps, &p, err)) !=
	    ATTN_OK ||
	    (st = pick(&p, prec, want_ops, &ops, err)) != ATTN_OK ||
	    (st = attn_reduce_plan(&p, prec, want, &bytes, err)) != ATTN_OK ||
	    (st = attn_stages_alloc(&p, out, err)) != ATTN_OK)
		return st;
	out->precision = prec;
	p.split = split;
	ps.descale = prec == ATTN_PREC_FP64;
	ps.split = split;
	ps.want = want;
	ps.rows.pairs = attn_split_pairs(want);
	ps.rows.prec = prec;
	ps.rows.B = p.B;
	ps.rows.H = p.H;
	ps.rows.G = p.G;
	ps.rows.T = p.T;
	ps.rows.varlen = &ps.in.varlen;
	/* with a split, the passes make only this process's rows of q, so
	 * a failure there is its alone: it meets the others at the merge */
	if ((st = attn_reduce_alloc(&p, err)) == ATTN_OK &&
	    (st = attn_passes_before(&p, in, &ps, err)) == ATTN_OK)
		st = ops->run(&p, out, err);
	if ((st = merge(&p, st, out, err)) != ATTN_OK ||
	    (st = find_masked_rows(out, err)) != ATTN_OK ||
	    (st = copy_sinks(&p, out, err)) != ATTN_OK ||
	    (st = attn_reduce_run(&p, want, out, err)) != ATTN_OK ||
	    (st = attn_passes_after(&p, in, want, &ps, out, err)) != ATTN_OK)
		goto fail;
	attn_lse_convention(cfg, out);
	attn_matrix_free(&p.sums);
	attn_passes_free(&ps);
	return ATTN_OK;
fail:
	attn_matrix_free(&p.sums);
	attn_passes_free(&ps);
	attn_stages_free(out);
	return st;
}

enum attn_status
attn_plan(const struct attn_config *cfg, const struct attn_inputs *in,
    unsigned want, size_t *bytes, struct attn_error *err)
{
	return plan_in(NULL, cfg, in, want, ATTN_PREC_FP64, bytes, err);
}

enum attn_status
attn_run(const struct attn_config *cfg, const struct attn_inputs *in,
    unsigned want, struct attn_stages *out, struct attn_error *err)
{
	return run_in(NULL, cfg, in, want, ATTN_PREC_FP64, NULL, out, err);
}

enum attn_status
attn_emulate_plan(const struct attn_config *cfg, const struct attn_inputs *in,
    unsigned want, enum attn_precision prec, size_t *bytes,
    struct attn_error *err)
{
	return plan_in(NULL, cfg, in, want, prec, bytes, err);
}

enum attn_status
attn_emulate(const struct attn_config *cfg, const struct attn_inputs *in,
    unsigned want, enum attn_precision prec, struct attn_stages *out,
    struct attn_error *err)
{
	return run_in(NULL, cfg, in, want, prec, NULL, out, err);
}

enum attn_status
attn_run_split(const struct attn_config *cfg, const struct attn_inputs *in,
    unsigned want, enum attn_precision prec, const struct attn_split *split,
    struct attn_stages *out, struct attn_error *err)
{
	return run_in(NULL, cfg, in, want, prec, split, out, err);
}

enum attn_status
attn_run_kernel(const struct attn_kernel_ops *ops,
    const struct attn_config *cfg, const struct attn_inputs *in,
    unsigned want, struct attn_stages *out, struct attn_error *err)
{
	return run_in(ops, cfg, in, want, ATTN_PREC_FP64, NULL, out, err);
}

enum attn_status
attn_plan_kernel(const struct attn_kernel_ops *ops,
    const struct attn_config *cfg, const struct attn_inputs *in,
    unsigned want, size_t *bytes, struct attn_error *err)
{
	return plan_in(ops, cfg, in, want, ATTN_PREC_FP64, bytes, err);
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
	return attn_run(cfg, &in, ATTN_STAGES_ALL, out, err);
}
