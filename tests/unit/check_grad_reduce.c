/*
 * check_grad_reduce.c - the stages grad_bias and grad_sinks
 * (lib/grad_reduce.c): grad_sinks, one per head summed over batches and
 * rows, and grad_bias in the shape the bias was given in (a block for
 * all, per batch, per head shared by the batches, per batch and head;
 * T x S, 1 x S, T x 1, 1 x 1), each against central finite differences
 * of the loss sum(dO * output) computed by attn_run, and against
 * PyTorch autograd (grad_reduce_torch.h, made by grad_reduce_torch.py
 * next to this file).  Then the one arithmetic: both kernels, any
 * thread count, grad_bias alone or beside the stages it is made of,
 * give the same bytes, those of the sums of the held grad_scaled added
 * in the order lib/grad_reduce.c gives; and a bias of one row or column
 * is reduced without holding T x S.  The stage bias, shaped as
 * grad_bias is, is the bias as given, bit for bit, with or without dO.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "ref.h"
#include "suites.h"
#include "testutil.h"

#define GR_B 2
#define GR_H 2
#define GR_G 1
#define GR_T 3
#define GR_S 4
#define GR_D 2

/* A bias as given: nb x nh blocks of r x c, in ndim dims (0: the
 * stack's own), whose stack for the run repeats a block shared by the
 * batches (nb 1, nh H) for every batch. */
struct gr_shape {
	size_t ndim, nb, nh, r, c;
};

static const struct gr_shape gr_shapes[] = {
	{ 2, 1, 1, GR_T, GR_S }, { 2, 1, 1, 1, GR_S },
	{ 2, 1, 1, GR_T, 1 }, { 2, 1, 1, 1, 1 },
	{ 3, GR_B, 1, GR_T, GR_S }, { 3, GR_B, 1, 1, GR_S },
	{ 3, GR_B, 1, GR_T, 1 }, { 3, GR_B, 1, 1, 1 },
	{ 4, GR_B, GR_H, GR_T, GR_S }, { 4, GR_B, GR_H, 1, GR_S },
	{ 4, GR_B, GR_H, GR_T, 1 }, { 4, GR_B, GR_H, 1, 1 },
	{ 4, 1, GR_H, GR_T, GR_S }, { 4, 1, GR_H, 1, GR_S },
	{ 4, 1, GR_H, GR_T, 1 }, { 3, 1, GR_H, 1, GR_S },
	{ 0, GR_B, GR_H, 1, GR_S }, { 4, GR_B, 1, 1, GR_S },
};

#define GR_SHAPES ((int)(sizeof gr_shapes / sizeof gr_shapes[0]))

struct gr_case {
	struct gr_shape sh;
	struct attn_config cfg;
	struct attn_inputs in;
	struct attn_matrix q, k, v, d_out, given, stack, sinks;
};

/* A zeroed rows x cols matrix. */
static struct attn_matrix
gr_zeros(size_t rows, size_t cols)
{
	struct attn_matrix m;

	ck_assert_int_eq(attn_matrix_alloc(&m, rows, cols, NULL), ATTN_OK);
	return m;
}

/* The stack of c's bias as the run reads it, from c->given. */
static void
gr_stack(struct gr_case *c)
{
	const struct gr_shape *sh = &c->sh;
	const size_t n = sh->nh > 1 ? GR_B * GR_H : sh->nb;
	size_t blk, g;

	if (c->stack.data == NULL) {
		c->stack = gr_zeros(n * sh->r, sh->c);
		c->in.bias = c->stack;
		c->in.bias_blocks = n;
	}
	for (blk = 0; blk < n; blk++) {
		g = sh->nh > 1 ? (sh->nb > 1 ? blk : blk % GR_H) : blk;
		memcpy(attn_at(&c->stack, blk * sh->r, 0),
		    attn_at(&c->given, g * sh->r, 0),
		    sh->r * sh->c * sizeof(double));
	}
}

/* c's inputs, from its matrices, for B batches of H heads sharing G. */
static void
gr_inputs(struct gr_case *c, size_t B, size_t H, size_t G)
{
	attn_config_init(&c->cfg);
	c->cfg.heads = H;
	c->cfg.kv_heads = G;
	c->in.batches = B;
	c->in.q = c->q;
	c->in.k = c->k;
	c->in.v = c->v;
	c->in.d_out = c->d_out;
	c->in.sinks = c->sinks;
}

static void
gr_make(struct gr_case *c, int i)
{
	static const double sinks[GR_H] = { 0.5, -1.0 };
	struct ref_rng rng;

	memset(c, 0, sizeof *c);
	c->sh = gr_shapes[i];
	ref_rng_seed(&rng, 77 + (unsigned long long)i);
	c->q = matrix_random(&rng, GR_B * GR_T, GR_H * GR_D, -1.5, 1.5);
	c->k = matrix_random(&rng, GR_B * GR_S, GR_G * GR_D, -1.5, 1.5);
	c->v = matrix_random(&rng, GR_B * GR_S, GR_G * GR_D, -1.5, 1.5);
	c->d_out = matrix_random(&rng, GR_B * GR_T, GR_H * GR_D, -1, 1);
	c->given = matrix_random(&rng, c->sh.nb * c->sh.nh * c->sh.r,
	    c->sh.c, -1, 1);
	c->sinks = matrix_from(1, GR_H, sinks);
	gr_inputs(c, GR_B, GR_H, GR_G);
	c->cfg.softcap = 3.0;
	c->in.bias_ndim = c->sh.ndim;
	if (c->sh.ndim == 4) {
		c->in.bias_dims[0] = c->sh.nb;
		c->in.bias_dims[1] = c->sh.nh;
	} else if (c->sh.ndim == 3) {
		c->in.bias_dims[0] = c->sh.nh > 1 ? c->sh.nh : c->sh.nb;
	}
	if (c->sh.ndim != 0) {
		c->in.bias_dims[c->sh.ndim - 2] = c->sh.r;
		c->in.bias_dims[c->sh.ndim - 1] = c->sh.c;
	}
	gr_stack(c);
}

static void
gr_free(struct gr_case *c)
{
	attn_matrix_free(&c->q);
	attn_matrix_free(&c->k);
	attn_matrix_free(&c->v);
	attn_matrix_free(&c->d_out);
	attn_matrix_free(&c->given);
	attn_matrix_free(&c->stack);
	attn_matrix_free(&c->sinks);
}

/* The loss sum(dO * output) of c as it stands. */
static double
gr_loss(struct gr_case *c)
{
	struct attn_stages st;
	struct attn_error err;
	double l = 0;
	size_t i, j;

	gr_stack(c);
	ck_assert_int_eq(attn_run(&c->cfg, &c->in, STAGE(OUTPUT), &st, &err),
	    ATTN_OK);
	for (i = 0; i < st.stage[ATTN_STAGE_OUTPUT].rows; i++)
		for (j = 0; j < st.stage[ATTN_STAGE_OUTPUT].cols; j++)
			l += *attn_at(&st.stage[ATTN_STAGE_OUTPUT], i, j) *
			    *attn_at(&c->d_out, i, j);
	attn_stages_free(&st);
	return l;
}

/* The central difference of the loss in element *x. */
static double
gr_numeric(struct gr_case *c, double *x)
{
	const double h = 1e-5, x0 = *x;
	double up, down;

	*x = x0 + h;
	up = gr_loss(c);
	*x = x0 - h;
	down = gr_loss(c);
	*x = x0;
	return (up - down) / (2 * h);
}

/* Stage s, grad_bias or bias, has the dims the bias was given in: ndim
 * 2 to 4 (the stack's own, B x H x 1 x S, for case 16 which gives
 * none). */
static void
gr_expect_dims(const struct gr_case *c, const struct attn_stages *st,
    enum attn_stage s)
{
	struct attn_shape sh;
	size_t d;

	attn_stage_shape(st, s, &sh);
	if (c->sh.ndim == 0) {
		const size_t want[4] = { GR_B, GR_H, 1, GR_S };

		ck_assert_uint_eq(sh.ndim, 4);
		for (d = 0; d < 4; d++)
			ck_assert_uint_eq(sh.dim[d], want[d]);
		return;
	}
	ck_assert_uint_eq(sh.ndim, c->sh.ndim);
	for (d = 0; d < sh.ndim; d++)
		ck_assert_uint_eq(sh.dim[d], c->in.bias_dims[d]);
	ck_assert_uint_eq(sh.blocks, c->sh.nb * c->sh.nh);
	ck_assert_uint_eq(attn_shape_count(&sh), c->given.rows *
	    c->given.cols);
}

START_TEST(grad_bias_and_sinks_match_finite_differences)
{
	const unsigned want = STAGE(GRAD_BIAS) | STAGE(GRAD_SINKS);
	const struct attn_matrix *gb, *gs;
	struct attn_stages st;
	struct attn_error err;
	struct gr_case c;
	double num, got;
	size_t i, j;

	gr_make(&c, _i);
	ck_assert_int_eq(attn_run(&c.cfg, &c.in, want, &st, &err), ATTN_OK);
	ck_assert_uint_eq(st.have, want | STAGE(LSE));
	gr_expect_dims(&c, &st, ATTN_STAGE_GRAD_BIAS);
	gb = &st.stage[ATTN_STAGE_GRAD_BIAS];
	gs = &st.stage[ATTN_STAGE_GRAD_SINKS];
	ck_assert_uint_eq(gb->rows, c.given.rows);
	ck_assert_uint_eq(gb->cols, c.given.cols);
	for (i = 0; i < c.given.rows; i++)
		for (j = 0; j < c.given.cols; j++) {
			num = gr_numeric(&c, attn_at(&c.given, i, j));
			got = *attn_at(gb, i, j);
			ck_assert_msg(fabs(got - num) <= 1e-8 + 1e-6 *
			    fabs(num), "case %d: grad_bias[%zu][%zu] = %.17g, "
			    "finite differences %.17g", _i, i, j, got, num);
		}
	ck_assert_uint_eq(gs->rows, 1);
	ck_assert_uint_eq(gs->cols, GR_H);
	for (j = 0; j < GR_H; j++) {
		num = gr_numeric(&c, attn_at(&c.sinks, 0, j));
		got = *attn_at(gs, 0, j);
		ck_assert_msg(fabs(got - num) <= 1e-8 + 1e-6 * fabs(num),
		    "grad_sinks[%zu] = %.17g, finite differences %.17g", j,
		    got, num);
	}
	attn_stages_free(&st);
	gr_free(&c);
}
END_TEST

/* lse written in log2 with +inf for no key: the same bytes, since the
 * gradients read the natural lse. */
START_TEST(grad_sinks_read_the_natural_lse)
{
	const unsigned want = STAGE(GRAD_SINKS) | STAGE(GRAD_BIAS);
	struct attn_stages a, b;
	struct attn_error err;
	struct gr_case c;

	gr_make(&c, 1);
	ck_assert_int_eq(attn_run(&c.cfg, &c.in, want, &a, &err), ATTN_OK);
	c.cfg.lse_base = ATTN_LSE_2;
	c.cfg.lse_masked = ATTN_LSE_MASKED_POS_INF;
	ck_assert_int_eq(attn_run(&c.cfg, &c.in, want, &b, &err), ATTN_OK);
	ck_assert_mem_eq(a.stage[ATTN_STAGE_GRAD_SINKS].data,
	    b.stage[ATTN_STAGE_GRAD_SINKS].data, GR_H * sizeof(double));
	ck_assert_mem_eq(a.stage[ATTN_STAGE_GRAD_BIAS].data,
	    b.stage[ATTN_STAGE_GRAD_BIAS].data, GR_S * sizeof(double));
	attn_stages_free(&a);
	attn_stages_free(&b);
	gr_free(&c);
}
END_TEST

/* ---------------------------------------------------------------- torch */

#include "grad_reduce_torch.h"

/* The cases grad_reduce_torch.py ran through PyTorch's autograd: a
 * key-padding bias per batch (B x 1 x 1 x S) and a bias per head shared
 * by the batches (1 x H x T x 1), with a sink per head. */
START_TEST(grad_bias_and_sinks_match_torch_autograd)
{
	const unsigned want = STAGE(GRAD_BIAS) | STAGE(GRAD_SINKS);
	const int shared = _i == 1;
	struct attn_matrix q = matrix_from(GRT_B * GRT_T, GRT_H * GRT_D, grt_q),
	    k = matrix_from(GRT_B * GRT_S, GRT_G * GRT_D, grt_k),
	    v = matrix_from(GRT_B * GRT_S, GRT_G * GRT_D, grt_v),
	    d_out = matrix_from(GRT_B * GRT_T, GRT_H * GRT_D, grt_d_out),
	    sinks = matrix_from(1, GRT_H, grt_sinks), bias;
	const double *want_bias = shared ? grt_grad_bias_h : grt_grad_bias;
	const double *want_sinks = shared ? grt_grad_sinks_h : grt_grad_sinks;
	const size_t nbias = shared ? GRT_H * GRT_T : GRT_B * GRT_S;
	struct attn_inputs in;
	struct attn_config cfg;
	struct attn_stages st;
	struct attn_error err;
	size_t i, b;

	if (shared) {
		/* the stack repeats the heads' blocks for every batch */
		bias = gr_zeros(GRT_B * GRT_H * GRT_T, 1);
		for (b = 0; b < GRT_B; b++)
			memcpy(bias.data + b * GRT_H * GRT_T, grt_bias_h,
			    GRT_H * GRT_T * sizeof(double));
	} else {
		bias = matrix_from(GRT_B, GRT_S, grt_bias);
	}
	attn_config_init(&cfg);
	cfg.heads = GRT_H;
	cfg.kv_heads = GRT_G;
	cfg.softcap = 3.0;
	memset(&in, 0, sizeof in);
	in.batches = GRT_B;
	in.q = q;
	in.k = k;
	in.v = v;
	in.d_out = d_out;
	in.bias = bias;
	in.bias_blocks = shared ? GRT_B * GRT_H : GRT_B;
	in.bias_ndim = 4;
	in.bias_dims[0] = shared ? 1 : GRT_B;
	in.bias_dims[1] = shared ? GRT_H : 1;
	in.bias_dims[2] = shared ? GRT_T : 1;
	in.bias_dims[3] = shared ? 1 : GRT_S;
	in.sinks = sinks;
	ck_assert_int_eq(attn_run(&cfg, &in, want, &st, &err), ATTN_OK);
	for (i = 0; i < nbias; i++)
		ck_assert_double_eq_tol(st.stage[ATTN_STAGE_GRAD_BIAS].data[i],
		    want_bias[i], 1e-12 * fabs(want_bias[i]) + 1e-15);
	for (i = 0; i < GRT_H; i++)
		ck_assert_double_eq_tol(st.stage[ATTN_STAGE_GRAD_SINKS].data[i],
		    want_sinks[i], 1e-12 * fabs(want_sinks[i]) + 1e-15);
	attn_stages_free(&st);
	attn_matrix_free(&q);
	attn_matrix_free(&k);
	attn_matrix_free(&v);
	attn_matrix_free(&d_out);
	attn_matrix_free(&bias);
	attn_matrix_free(&sinks);
}
END_TEST

/* ---------------------------------------------------------------- bytes */

/* A larger case for the tiles: T 70 queries over S 200 keys (the
 * streaming kernel's blocks are 48 queries by 96 keys), causal
 * bottom-right so that whole tiles are masked and skipped, B 2, H 4
 * sharing G 2, a bias of the given shape and sinks. */
#define BY_B 2
#define BY_H 4
#define BY_G 2
#define BY_T 70
#define BY_S 200
#define BY_D 3

/* Case i: the bias 1 x S per batch and head, T x 1 per batch, 1 x 1
 * for all, T x S per head (i = 0..3), as c->stack; c->sh its blocks
 * (nb, the stack's count) and their rows and columns. */
static void
by_make(struct gr_case *c, int i)
{
	static const double sinks[BY_H] = { 0.5, -1.0, 0.0, 2.0 };
	struct ref_rng rng;

	memset(c, 0, sizeof *c);
	ref_rng_seed(&rng, 900 + (unsigned long long)i);
	c->sh.r = i == 0 || i == 2 ? 1 : BY_T;
	c->sh.c = i == 1 || i == 2 ? 1 : BY_S;
	c->sh.nb = i == 0 || i == 3 ? BY_B * BY_H : i == 1 ? BY_B : 1;
	c->q = matrix_random(&rng, BY_B * BY_T, BY_H * BY_D, -1.5, 1.5);
	c->k = matrix_random(&rng, BY_B * BY_S, BY_G * BY_D, -1.5, 1.5);
	c->v = matrix_random(&rng, BY_B * BY_S, BY_G * BY_D, -1.5, 1.5);
	c->d_out = matrix_random(&rng, BY_B * BY_T, BY_H * BY_D, -1, 1);
	c->stack = matrix_random(&rng, c->sh.nb * c->sh.r, c->sh.c, -1, 1);
	c->sinks = matrix_from(1, BY_H, sinks);
	gr_inputs(c, BY_B, BY_H, BY_G);
	c->cfg.causal = 1;
	c->cfg.align = ATTN_ALIGN_BOTTOM_RIGHT;
	c->in.bias = c->stack;
	c->in.bias_blocks = c->sh.nb;
}

/* grad_bias as lib/grad_reduce.c says it adds up, from the held
 * grad_scaled of st: each block's sums from +0 (a query's over the keys
 * in order, a key's over the queries in order; a 1 x 1 bias's the sum
 * of its row sums in order), then the blocks (b, h) in order into the
 * bias's block, each from +0. */
static void
by_expected(const struct gr_case *c, const struct attn_stages *st,
    double *out)
{
	const size_t n = c->sh.nb, r = c->sh.r, cols = c->sh.c;
	size_t b, h, i, j, g;
	double sum, t;

	memset(out, 0, n * r * cols * sizeof *out);
	for (b = 0; b < BY_B; b++)
		for (h = 0; h < BY_H; h++) {
			const struct attn_matrix ds = attn_stage_block(st,
			    ATTN_STAGE_GRAD_SCALED, b, h);
			double *o;

			g = n == 1 ? 0 : n == BY_B ? b : b * BY_H + h;
			o = out + g * r * cols;
			if (r > 1 && cols > 1) {
				for (i = 0; i < BY_T; i++)
					for (j = 0; j < BY_S; j++)
						o[i * BY_S + j] += *attn_at(&ds,
						    i, j);
			} else if (cols == 1) {
				for (t = 0.0, i = 0; i < BY_T; i++) {
					for (sum = 0.0, j = 0; j < BY_S; j++)
						sum += *attn_at(&ds, i, j);
					if (r > 1)
						o[i] += sum;
					else
						t += sum;
				}
				if (r == 1)
					o[0] += t;
			} else {
				for (j = 0; j < BY_S; j++) {
					for (sum = 0.0, i = 0; i < BY_T; i++)
						sum += *attn_at(&ds, i, j);
					o[j] += sum;
				}
			}
		}
}

/* Every kernel, 1 to 3 threads, grad_bias alone and beside grad_scaled
 * and the other gradients: the bytes of by_expected; grad_sinks the
 * same bytes in every run. */
START_TEST(grad_bias_has_one_arithmetic)
{
	const unsigned wants[2] = { STAGE(GRAD_BIAS) | STAGE(GRAD_SINKS),
		STAGE(GRAD_BIAS) | STAGE(GRAD_SINKS) | STAGE(GRAD_SCALED) |
		STAGE(GRAD_Q) | STAGE(GRAD_K) | STAGE(DELTA) };
	struct attn_stages st, held;
	struct attn_error err;
	struct gr_case c;
	double *expect, sinks[BY_H];
	size_t n, threads;
	int kn, w;

	by_make(&c, _i);
	n = c.sh.nb * c.sh.r * c.sh.c;
	expect = attn_alloc_array(n, sizeof *expect);
	ck_assert_ptr_nonnull(expect);
	ck_assert_int_eq(run_kernel(KERNEL_REFERENCE, &c.cfg, &c.in, wants[1],
	    &held, &err), ATTN_OK);
	by_expected(&c, &held, expect);
	memcpy(sinks, held.stage[ATTN_STAGE_GRAD_SINKS].data, sizeof sinks);
	attn_stages_free(&held);
	for (kn = 0; kn < NKERNELS; kn++)
		for (threads = 1; threads <= 3; threads++)
			for (w = 0; w < 2; w++) {
				c.cfg.threads = threads;
				ck_assert_int_eq(run_kernel(test_kernel(kn),
				    &c.cfg, &c.in, wants[w], &st, &err),
				    ATTN_OK);
				ck_assert_uint_eq(st.stage[ATTN_STAGE_GRAD_BIAS].
				    rows * st.stage[ATTN_STAGE_GRAD_BIAS].cols,
				    n);
				ck_assert_msg(memcmp(st.stage[
				    ATTN_STAGE_GRAD_BIAS].data, expect,
				    n * sizeof *expect) == 0, "case %d: grad_bias "
				    "of kernel %s on %zu threads (want %u) differs",
				    _i, kernel_name(test_kernel(kn)), threads,
				    wants[w]);
				ck_assert_mem_eq(st.stage[ATTN_STAGE_GRAD_SINKS].
				    data, sinks, sizeof sinks);
				/* what only the reductions read is not kept */
				ck_assert_uint_eq(st.have, wants[w] |
				    STAGE(LSE));
				attn_stages_free(&st);
			}
	free(expect);
	gr_free(&c);
}
END_TEST

/* A bias of one row or column: the plan holds no T x S stage (holding
 * grad_scaled besides adds all of B H T S doubles), a T x S bias's
 * does. */
START_TEST(grad_bias_of_a_row_holds_no_scores)
{
	const size_t txs = BY_B * BY_H * BY_T * BY_S * sizeof(double);
	struct attn_error err;
	struct gr_case c;
	size_t alone, held;

	by_make(&c, _i);
	c.cfg.threads = 1;
	ck_assert_int_eq(attn_plan(&c.cfg, &c.in, STAGE(GRAD_BIAS), &alone,
	    &err), ATTN_OK);
	ck_assert_int_eq(attn_plan(&c.cfg, &c.in, STAGE(GRAD_BIAS) |
	    STAGE(GRAD_SCALED), &held, &err), ATTN_OK);
	if (_i == 3) {
		ck_assert_uint_ge(alone, txs);
		ck_assert_uint_eq(alone, held);
	} else {
		ck_assert_uint_lt(alone, txs);
		ck_assert_uint_ge(held, alone + txs);
	}
	gr_free(&c);
}
END_TEST

/* The emulation holds grad_scaled and sums it in float32, rounding the
 * result to the format: fp32's grad_bias and grad_sinks are the double
 * ones to float32's precision. */
START_TEST(grad_bias_and_sinks_are_emulated)
{
	const unsigned want = STAGE(GRAD_BIAS) | STAGE(GRAD_SINKS);
	struct attn_stages a, e;
	struct attn_error err;
	struct gr_case c;
	size_t i, n;
	double x, y;

	gr_make(&c, 13);
	c.cfg.softcap = 0.0;
	ck_assert_int_eq(attn_run(&c.cfg, &c.in, want, &a, &err), ATTN_OK);
	ck_assert_int_eq(attn_emulate(&c.cfg, &c.in, want, ATTN_PREC_FP32,
	    &e, &err), ATTN_OK);
	ck_assert_uint_eq(e.have, want | STAGE(LSE));
	n = c.given.rows * c.given.cols;
	for (i = 0; i < n + GR_H; i++) {
		x = i < n ? e.stage[ATTN_STAGE_GRAD_BIAS].data[i] :
		    e.stage[ATTN_STAGE_GRAD_SINKS].data[i - n];
		y = i < n ? a.stage[ATTN_STAGE_GRAD_BIAS].data[i] :
		    a.stage[ATTN_STAGE_GRAD_SINKS].data[i - n];
		ck_assert_double_eq((double)(float)x, x);
		ck_assert_msg(fabs(x - y) <= 1e-5 * (fabs(y) + 1), "element "
		    "%zu: emulated %.9g, double %.17g", i, x, y);
	}
	attn_stages_free(&a);
	attn_stages_free(&e);
	gr_free(&c);
}
END_TEST

/* What grad_bias and grad_sinks need: dO, a bias, sinks; dims that
 * describe the bias. */
START_TEST(grad_bias_and_sinks_need_their_inputs)
{
	struct attn_stages st;
	struct attn_error err;
	struct gr_case c;

	gr_make(&c, 4);
	c.in.d_out.data = NULL;
	ck_assert_int_eq(attn_run(&c.cfg, &c.in, STAGE(GRAD_BIAS), &st, &err),
	    ATTN_ERR_USAGE);
	ck_assert_str_eq(err.msg, "stage grad_bias needs dO, the gradient of "
	    "the output");
	ck_assert_uint_eq(attn_stages_available(&c.cfg, &c.in) &
	    ATTN_STAGES_REDUCE, 0);
	c.in.d_out = c.d_out;
	ck_assert_uint_eq(attn_stages_available(&c.cfg, &c.in) &
	    ATTN_STAGES_REDUCE, ATTN_STAGES_REDUCE);
	c.in.sinks.data = NULL;
	ck_assert_int_eq(attn_run(&c.cfg, &c.in, STAGE(GRAD_SINKS), &st,
	    &err), ATTN_ERR_USAGE);
	ck_assert_str_eq(err.msg, "stage grad_sinks needs sinks: it is their "
	    "gradient");
	c.in.bias.data = NULL;
	ck_assert_int_eq(attn_run(&c.cfg, &c.in, STAGE(GRAD_BIAS), &st, &err),
	    ATTN_ERR_USAGE);
	ck_assert_str_eq(err.msg, "stage grad_bias needs a bias: it is the "
	    "gradient of the bias");
	c.in.bias = c.stack;
	c.in.bias_dims[0] = 3;	/* B x T x S with B = 2 */
	ck_assert_int_eq(attn_run(&c.cfg, &c.in, STAGE(GRAD_BIAS), &st, &err),
	    ATTN_ERR_USAGE);
	ck_assert_str_eq(err.msg, "the bias's dims as given (3x3x4) do not "
	    "describe its 2 blocks of 3x4 for 2 batches of 2 heads");
	gr_free(&c);
}
END_TEST

/* The stage bias is the bias as given, in its dims and bit for bit,
 * whatever the stack the run read (a block shared by the batches is
 * repeated in it), without dO and beside grad_bias; and needs a bias. */
START_TEST(bias_stage_is_the_bias_as_given)
{
	struct attn_stages st;
	struct attn_error err;
	struct gr_case c;
	size_t i, j;
	int with;

	gr_make(&c, _i);
	for (with = 0; with < 2; with++) {
		c.in.d_out.data = with ? c.d_out.data : NULL;
		ck_assert_int_eq(attn_run(&c.cfg, &c.in, STAGE(BIAS) |
		    (with ? STAGE(GRAD_BIAS) : 0), &st, &err), ATTN_OK);
		ck_assert(st.have & STAGE(BIAS));
		gr_expect_dims(&c, &st, ATTN_STAGE_BIAS);
		ck_assert_uint_eq(st.stage[ATTN_STAGE_BIAS].rows, c.given.rows);
		ck_assert_uint_eq(st.stage[ATTN_STAGE_BIAS].cols, c.given.cols);
		for (i = 0; i < c.given.rows; i++)
			for (j = 0; j < c.given.cols; j++)
				ck_assert_mem_eq(attn_at(&st.stage[
				    ATTN_STAGE_BIAS], i, j), attn_at(&c.given,
				    i, j), sizeof(double));
		attn_stages_free(&st);
	}
	c.in.bias.data = NULL;
	ck_assert_uint_eq(attn_stages_available(&c.cfg, &c.in) & STAGE(BIAS),
	    0);
	ck_assert_int_eq(attn_run(&c.cfg, &c.in, STAGE(BIAS), &st, &err),
	    ATTN_ERR_USAGE);
	ck_assert_str_eq(err.msg, "stage bias needs a bias: it is the bias "
	    "as read");
	c.in.bias = c.stack;
	gr_free(&c);
}
END_TEST

Suite *
grad_reduce_suite(void)
{
	Suite *s = suite_create("grad_reduce");
	TCase *tc = tcase_create("reductions");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, grad_bias_and_sinks_match_finite_differences,
	    0, GR_SHAPES);
	tcase_add_test(tc, grad_sinks_read_the_natural_lse);
	tcase_add_loop_test(tc, grad_bias_and_sinks_match_torch_autograd, 0,
	    2);
	tcase_add_loop_test(tc, grad_bias_has_one_arithmetic, 0, 4);
	tcase_add_loop_test(tc, grad_bias_of_a_row_holds_no_scores, 0, 4);
	tcase_add_test(tc, grad_bias_and_sinks_are_emulated);
	tcase_add_test(tc, grad_bias_and_sinks_need_their_inputs);
	tcase_add_loop_test(tc, bias_stage_is_the_bias_as_given, 0,
	    GR_SHAPES);
	suite_add_tcase(s, tc);
	return s;
}
