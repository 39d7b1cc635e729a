/*
 * grad_reduce.c - the gradients of the inputs a run broadcasts, made
 * from the backward stages after any kernel has computed them, so that
 * the streaming backward pass (kernel_stream_grad.c), the emulation and
 * the tests' reference kernel (tests/unit/kernel_ref_grad.c) share them:
 *
 *	grad_sinks[h] = -sum over b, i of exp(sink_h - lse_bhi) delta_bhi
 *	grad_bias     = dS summed over the axes the bias was broadcast
 *	                along, as autograd reduces a broadcast bias: its
 *	                blocks (one for all, one per batch, per head, per
 *	                batch and head), its rows (1 x S) and its columns
 *	                (T x 1) as it was given (attn_inputs.bias_dims)
 *
 * and, not a gradient but shaped as grad_bias is, the stage bias: the
 * bias as read, in the dims it was given in.
 *
 * grad_sinks reads lse (always held) and delta (held for it): B*H*T
 * numbers.  grad_bias of a T x S bias reads the held grad_scaled, whose
 * blocks it adds up.  Of a bias of one row or column it needs only each
 * block's sums of dS over the queries (1 x S) or the keys (T x 1), so
 * that a backward pass adds every dS it forms into p->sums
 * (attn_bias_sum_add) and never holds a T x S matrix for it; the
 * emulation, which has no such sums, holds grad_scaled and sums it here
 * in the same order.
 *
 * One arithmetic: each sum of a block is a chain from +0 in the order of
 * its index (a query's sum over the keys in order, a key's over the
 * queries in order), whichever pass adds it up and whichever tiles and
 * threads it runs on (a tile the masks leave empty adds only zeros,
 * which change no sum that starts at +0); then the blocks (b, h) are
 * added into the gradient's in order, batch-major.  So the bytes of
 * grad_bias are the same for any backward pass, -j and set of stages
 * printed.  In a lower precision (--emulate) each addition is rounded
 * to float32, the accumulator, and the result to the format, as
 * autograd's sum of a broadcast gradient is.
 *
 * Dims: B batches, H query heads, T query rows, S keys.
 */
#include <math.h>
#include <string.h>

#include "internal.h"

/*
 * The reductions in a run's precision: FP64 for attn's own stages, the
 * format of --emulate for its baseline (emulate.c's grad_sinks and
 * grad_bias, as autograd in that dtype sums them).  store rounds to the
 * format a stage is stored in, acc to the accumulator (float32 below
 * FP64), fma is a multiply-add rounded once in the accumulator, and exp
 * the exponential there; in FP64 the roundings are the identity and the
 * exponential attn_exp, the kernels' own.
 */
static double
prec_store(enum attn_precision prec, double x)
{
	return prec == ATTN_PREC_FP64 ? x : attn_round(x, prec);
}

static double
prec_acc(enum attn_precision prec, double x)
{
	return prec == ATTN_PREC_FP64 ? x : attn_round(x, ATTN_PREC_FP32);
}

static double
prec_fma(enum attn_precision prec, double a, double b, double c)
{
	return prec == ATTN_PREC_FP64 ? fma(a, b, c) :
	    (double)fmaf((float)a, (float)b, (float)c);
}

static double
prec_exp(enum attn_precision prec, double x)
{
	return prec == ATTN_PREC_FP64 ? attn_exp(x) : prec_acc(prec,
	    exp(x));
}

#define BIT ATTN_STAGE_BIT

/* How grad_bias is summed: over the keys of each query (a bias of one
 * column), over the queries of each key (of one row), or block by
 * block (T x S). */
enum mode { MODE_ROWS, MODE_COLS, MODE_FULL };

/* grad_bias's layout in a run: its dims and their axes, which of them
 * are batches (nb: 1 or B) and heads (nh: 1 or H), and a block's rows
 * and columns, those of a block of the bias's stack. */
struct layout {
	size_t ndim, dim[ATTN_MAX_DIMS];
	enum attn_axis axis[ATTN_MAX_DIMS];
	size_t nb, nh, rows, cols;
	enum mode mode;
};

/* The layout of in's bias for B batches of H heads, T queries and S
 * keys; -1 when in->bias_dims does not describe the bias's stack. */
static int
layout_of(const struct attn_inputs *in, size_t B, size_t H, size_t T,
    size_t S, struct layout *l)
{
	const size_t N = in->bias_blocks, nd = in->bias_ndim;
	const size_t *d = in->bias_dims;
	size_t k, n = 0, lead[2] = { 1, 1 };
	int head[2] = { 0, 1 };

	memset(l, 0, sizeof *l);
	if (N == 0 || in->bias.rows % N != 0)
		return -1;
	l->rows = in->bias.rows / N;
	l->cols = in->bias.cols;
	l->mode = l->cols == 1 ? MODE_ROWS : l->rows == 1 ? MODE_COLS :
	    MODE_FULL;
	if (nd == 0) {
		/* the stack's own: B x [H x] rows x cols by its blocks, as
		 * struct attn_inputs reads them (a block per batch first) */
		l->nb = N > 1 ? B : 1;
		l->nh = N > 1 && N != B ? H : 1;
		if (l->nb > 1 || (l->nh > 1 && B > 1))
			lead[n++] = l->nb;
		if (l->nh > 1)
			lead[n++] = l->nh;
		head[0] = l->nb == 1;
	} else {
		if (nd < 2 || nd > ATTN_MAX_DIMS || d[nd - 2] != l->rows ||
		    d[nd - 1] != l->cols)
			return -1;
		n = nd - 2;
		for (k = 0; k < n; k++)
			lead[k] = d[k];
		/* 3-D: heads where the stack has a block per batch and
		 * head, else batches */
		head[0] = n == 1 && N == B * H && H > 1;
		l->nb = n == 2 ? lead[0] : n == 1 && !head[0] ? lead[0] : 1;
		l->nh = n == 2 ? lead[1] : n == 1 && head[0] ? lead[0] : 1;
		if ((l->nb != 1 && l->nb != B) || (l->nh != 1 && l->nh != H) ||
		    N != (l->nh > 1 ? B * H : l->nb > 1 ? B : 1))
			return -1;
	}
	l->ndim = n + 2;
	for (k = 0; k < n; k++) {
		l->dim[k] = lead[k];
		l->axis[k] = lead[k] == 1 ? ATTN_AXIS_ONE : head[k] ?
		    ATTN_AXIS_HEAD : ATTN_AXIS_BATCH;
	}
	l->dim[n] = l->rows;
	l->axis[n] = l->rows == T ? ATTN_AXIS_QUERY : ATTN_AXIS_ONE;
	l->dim[n + 1] = l->cols;
	l->axis[n + 1] = l->cols == S ? ATTN_AXIS_KEY : ATTN_AXIS_ONE;
	return 0;
}

/* The block of the gradient that batch b and head h add into. */
static size_t
layout_block(const struct layout *l, size_t b, size_t h)
{
	return (l->nb > 1 ? b : 0) * l->nh + (l->nh > 1 ? h : 0);
}

/* ---------------------------------------------------------------- before */

enum attn_status
attn_reduce_check(const struct attn_inputs *in, unsigned want,
    struct attn_error *err)
{
	size_t n;

	for (n = 0; n < ATTN_STAGE_COUNT; n++) {
		const enum attn_stage s = attn_stage_order[n];

		if (!(want & ATTN_STAGES_REDUCE & BIT(s)))
			continue;
		if (in->d_out.data == NULL)
			return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
			    "stage %s needs dO, the gradient of the output",
			    attn_stage_table[s].name);
		if (s == ATTN_STAGE_GRAD_BIAS && in->bias.data == NULL)
			return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
			    "stage grad_bias needs a bias: it is the gradient "
			    "of the bias");
		if (s == ATTN_STAGE_GRAD_SINKS && in->sinks.data == NULL)
			return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
			    "stage grad_sinks needs sinks: it is their "
			    "gradient");
	}
	return ATTN_OK;
}

unsigned
attn_reduce_reads(unsigned want)
{
	return ((want & BIT(ATTN_STAGE_GRAD_BIAS)) ?
	    BIT(ATTN_STAGE_GRAD_SCALED) : 0) |
	    ((want & BIT(ATTN_STAGE_GRAD_SINKS)) ? BIT(ATTN_STAGE_DELTA) : 0);
}

/* bytes += a gradient of rows x cols (attn_matrix_bytes_add). */
static enum attn_status
add_doubles(size_t *bytes, size_t rows, size_t cols, struct attn_error *err)
{
	return attn_matrix_bytes_add(bytes, rows, cols, "a gradient", err);
}

enum attn_status
attn_reduce_plan(struct attn_problem *p, enum attn_precision prec,
    unsigned want, size_t *bytes, struct attn_error *err)
{
	enum attn_status st = ATTN_OK;
	struct layout l;
	size_t bh;

	*bytes = 0;
	memset(&p->sums, 0, sizeof p->sums);
	p->sum_rows = 0;
	if (want & BIT(ATTN_STAGE_GRAD_SINKS))
		st = add_doubles(bytes, 1, p->H, err);
	if (st != ATTN_OK || !(want & (BIT(ATTN_STAGE_GRAD_BIAS) |
	    BIT(ATTN_STAGE_BIAS))))
		return st;
	/* the bias's stack is checked (problem.c): its dims as given
	 * must describe it, for its gradient as for the bias stage */
	if (layout_of(p->in, p->B, p->H, p->T, p->S, &l) != 0) {
		char dims[96];
		const size_t N = p->in->bias_blocks;

		attn_dims_text(dims, sizeof dims, p->in->bias_dims,
		    p->in->bias_ndim <= ATTN_MAX_DIMS ? p->in->bias_ndim : 0);
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "the bias's dims as given (%s) do not describe its %zu "
		    "block%s of %zux%zu for %zu batches of %zu heads", dims,
		    N, N == 1 ? "" : "s", p->in->bias.rows / N,
		    p->in->bias.cols, p->B, p->H);
	}
	if ((want & BIT(ATTN_STAGE_BIAS)) && (st = add_doubles(bytes,
	    l.nb * l.nh * l.rows, l.cols, err)) != ATTN_OK)
		return st;
	if (!(want & BIT(ATTN_STAGE_GRAD_BIAS)))
		return ATTN_OK;
	if ((st = add_doubles(bytes, l.nb * l.nh * l.rows, l.cols, err)) !=
	    ATTN_OK)
		return st;
	/* attn_run's kernels add up a bias of one row or column as they
	 * go: dS need not be held for it */
	if (prec != ATTN_PREC_FP64 || l.mode == MODE_FULL)
		return ATTN_OK;
	p->sum_rows = l.mode == MODE_ROWS;
	bh = p->B * p->H;	/* the per-head stacks are allocated */
	p->sums.rows = bh;
	p->sums.cols = p->sum_rows ? p->T : p->S;
	if (!(want & BIT(ATTN_STAGE_GRAD_SCALED)))
		p->hold &= ~BIT(ATTN_STAGE_GRAD_SCALED);
	return add_doubles(bytes, p->sums.rows, p->sums.cols, err);
}

enum attn_status
attn_reduce_alloc(struct attn_problem *p, struct attn_error *err)
{
	if (p->sums.rows == 0)
		return ATTN_OK;
	return attn_matrix_alloc(&p->sums, p->sums.rows, p->sums.cols, err);
}

/* ---------------------------------------------------------------- after */

/* grad_sinks into out: from lse, still the natural one (run.c writes it
 * in its convention after this), and the held delta. */
static enum attn_status
grad_sinks(const struct attn_stages *st, enum attn_precision prec,
    struct attn_matrix *out, struct attn_error *err)
{
	const struct attn_matrix *lse = &st->stage[ATTN_STAGE_LSE];
	const struct attn_matrix *delta = &st->stage[ATTN_STAGE_DELTA];
	const size_t H = st->heads, T = st->T;
	enum attn_status status;
	size_t b, h, i, r;
	double sum, l, sink, e;

	if ((status = attn_matrix_alloc(out, 1, H, err)) != ATTN_OK)
		return status;
	for (h = 0; h < H; h++) {
		sink = prec_store(prec, *attn_at(&st->sinks, 0, h));
		sum = 0.0;
		for (b = 0; b < st->batches; b++)
			for (i = 0; i < T; i++) {
				r = (b * H + h) * T + i;
				l = *attn_at(lse, r, 0);
				if (l == -INFINITY)
					continue;	/* no softmax */
				e = isnan(l) ? l : prec_exp(prec,
				    prec_acc(prec, sink - l));
				sum = prec_fma(prec, e, *attn_at(delta, r,
				    0), sum);
			}
		*attn_at(out, 0, h) = prec_store(prec, -sum);
	}
	return ATTN_OK;
}

/* The sums of block n of the held grad_scaled into row n of sums, in
 * precision prec: as attn_bias_sum_add adds them, each rounded to the
 * accumulator. */
static void
held_sums(const struct attn_stages *st, enum attn_precision prec,
    int rows, size_t b, size_t h, struct attn_matrix *sums)
{
	const struct attn_matrix ds = attn_stage_block(st,
	    ATTN_STAGE_GRAD_SCALED, b, h);
	double *x = attn_at(sums, b * st->heads + h, 0);
	size_t i, j;

	for (i = 0; i < ds.rows; i++)
		for (j = 0; j < ds.cols; j++) {
			double *y = x + (rows ? i : j);

			*y = prec_acc(prec, *y + *attn_at(&ds, i, j));
		}
}

/* The bias stage into out: the bias as read, in its dims as given,
 * block layout_block(b, h) from the block of the stack that batch b and
 * head h read (a bias given once for every batch is stacked per batch
 * to the run, attn_inputs.bias_dims; its first batch's blocks are it). */
static enum attn_status
bias_as_read(const struct attn_problem *p, const struct layout *l,
    struct attn_matrix *out, struct attn_error *err)
{
	const struct attn_inputs *in = p->in;
	const size_t N = in->bias_blocks;
	enum attn_status status;
	size_t b, h, i, n;

	if ((status = attn_matrix_alloc(out, l->nb * l->nh * l->rows,
	    l->cols, err)) != ATTN_OK)
		return status;
	for (b = 0; b < l->nb; b++)
		for (h = 0; h < l->nh; h++) {
			/* the stack's block: one, one a batch or one a
			 * batch and head (struct attn_inputs) */
			n = N == 1 ? 0 : N == p->B ? b : b * p->H + h;
			for (i = 0; i < l->rows; i++)
				memcpy(attn_at(out, layout_block(l, b, h) *
				    l->rows + i, 0), attn_at(&in->bias,
				    n * l->rows + i, 0), l->cols *
				    sizeof(double));
		}
	return ATTN_OK;
}

/* grad_bias into out: block (b, h)'s share added into block
 * layout_block(b, h), the blocks in order. */
static enum attn_status
grad_bias(const struct attn_problem *p, const struct attn_stages *st,
    enum attn_precision prec, const struct layout *l,
    struct attn_matrix *out, struct attn_error *err)
{
	struct attn_matrix own = { 0, 0, 0, NULL };
	const struct attn_matrix *sums = &p->sums;
	enum attn_status status;
	size_t b, h, i, j, g;
	double *o, t;

	if ((status = attn_matrix_alloc(out, l->nb * l->nh * l->rows,
	    l->cols, err)) != ATTN_OK)
		return status;
	if (l->mode != MODE_FULL && sums->data == NULL) {
		/* no backward pass added them up (the emulation): from
		 * the held grad_scaled, in their order */
		if ((status = attn_matrix_alloc(&own, p->B * p->H,
		    l->mode == MODE_ROWS ? p->T : p->S, err)) != ATTN_OK)
			return status;
		for (b = 0; b < p->B; b++)
			for (h = 0; h < p->H; h++)
				held_sums(st, prec, l->mode == MODE_ROWS, b, h,
				    &own);
		sums = &own;
	}
	for (b = 0; b < p->B; b++)
		for (h = 0; h < p->H; h++) {
			const double *x = l->mode == MODE_FULL ? NULL :
			    attn_at(sums, b * p->H + h, 0);
			const struct attn_matrix ds = l->mode == MODE_FULL ?
			    attn_stage_block(st, ATTN_STAGE_GRAD_SCALED, b,
			    h) : (struct attn_matrix){ 0, 0, 0, NULL };

			g = layout_block(l, b, h);
			o = attn_at(out, g * l->rows, 0);
			if (l->mode == MODE_FULL) {
				for (i = 0; i < l->rows; i++)
					for (j = 0; j < l->cols; j++)
						o[i * l->cols + j] =
						    prec_acc(prec,
						    o[i * l->cols + j] +
						    *attn_at(&ds, i, j));
			} else if (l->mode == MODE_ROWS && l->rows == 1) {
				/* 1 x 1: the block's row sums, in order */
				for (t = 0.0, i = 0; i < p->T; i++)
					t = prec_acc(prec, t + x[i]);
				o[0] = prec_acc(prec, o[0] + t);
			} else {
				/* T x 1 or 1 x S: a sum each */
				for (i = 0; i < sums->cols; i++)
					o[i] = prec_acc(prec, o[i] + x[i]);
			}
		}
	for (i = 0; i < out->rows; i++)
		for (j = 0; j < out->cols; j++)
			*attn_at(out, i, j) = prec_store(prec,
			    *attn_at(out, i, j));
	attn_matrix_free(&own);
	return ATTN_OK;
}

/* Drop stage s from out when only the reductions held it. */
static void
drop(struct attn_stages *out, unsigned want, enum attn_stage s)
{
	if (want & BIT(s))
		return;
	attn_matrix_free(&out->stage[s]);
	out->have &= ~BIT(s);
}

enum attn_status
attn_reduce_run(const struct attn_problem *p, unsigned want,
    struct attn_stages *out, struct attn_error *err)
{
	const enum attn_precision prec = out->precision;
	enum attn_status st;
	struct layout l;
	size_t d;

	if (want & BIT(ATTN_STAGE_GRAD_SINKS)) {
		if ((st = grad_sinks(out, prec,
		    &out->stage[ATTN_STAGE_GRAD_SINKS], err)) != ATTN_OK)
			return st;
		out->have |= BIT(ATTN_STAGE_GRAD_SINKS);
		out->computed |= BIT(ATTN_STAGE_GRAD_SINKS);
		drop(out, want, ATTN_STAGE_DELTA);
	}
	if (!(want & (BIT(ATTN_STAGE_GRAD_BIAS) | BIT(ATTN_STAGE_BIAS))))
		return ATTN_OK;
	(void)layout_of(p->in, p->B, p->H, p->T, p->S, &l);
	out->bias_ndim = l.ndim;
	for (d = 0; d < l.ndim; d++) {
		out->bias_dim[d] = l.dim[d];
		out->bias_axis[d] = l.axis[d];
	}
	if (want & BIT(ATTN_STAGE_BIAS)) {
		if ((st = bias_as_read(p, &l, &out->stage[ATTN_STAGE_BIAS],
		    err)) != ATTN_OK)
			return st;
		out->have |= BIT(ATTN_STAGE_BIAS);
	}
	if (want & BIT(ATTN_STAGE_GRAD_BIAS)) {
		if ((st = grad_bias(p, out, prec, &l,
		    &out->stage[ATTN_STAGE_GRAD_BIAS], err)) != ATTN_OK)
			return st;
		out->have |= BIT(ATTN_STAGE_GRAD_BIAS);
		out->computed |= BIT(ATTN_STAGE_GRAD_BIAS);
		drop(out, want, ATTN_STAGE_GRAD_SCALED);
	}
	return ATTN_OK;
}
