/*
 * check_grad_reduce.c - the gradients of the broadcast inputs
 * (lib/grad_reduce.c): grad_sinks, one per head summed over batches and
 * rows, and grad_bias reduced to the shape the bias was given in (one
 * block for all, one per batch, one per batch and head; T x S, 1 x S,
 * T x 1, 1 x 1), each against central finite differences of the loss
 * sum(dO * output) computed by attn_run, and against PyTorch autograd
 * (grad_reduce_torch.h, made by grad_reduce_torch.py next to this file).
 */
#include <math.h>
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

struct gr_case {
	struct attn_config cfg;
	struct attn_inputs in;
	struct attn_matrix q, k, v, d_out, bias, sinks;
};

/* Bias shape i: blocks (1, B, B*H) by i / 4, rows T or 1 by i & 2, cols
 * S or 1 by i & 1. */
static void
gr_make(struct gr_case *c, int i)
{
	static const double sinks[GR_H] = { 0.5, -1.0 };
	const size_t blocks = i / 4 == 0 ? 1 : i / 4 == 1 ? GR_B : GR_B * GR_H;
	const size_t rows = (i & 2) ? 1 : GR_T, cols = (i & 1) ? 1 : GR_S;
	struct ref_rng rng;

	memset(c, 0, sizeof *c);
	ref_rng_seed(&rng, 77 + (unsigned long long)i);
	c->q = matrix_random(&rng, GR_B * GR_T, GR_H * GR_D, -1.5, 1.5);
	c->k = matrix_random(&rng, GR_B * GR_S, GR_G * GR_D, -1.5, 1.5);
	c->v = matrix_random(&rng, GR_B * GR_S, GR_G * GR_D, -1.5, 1.5);
	c->d_out = matrix_random(&rng, GR_B * GR_T, GR_H * GR_D, -1, 1);
	c->bias = matrix_random(&rng, blocks * rows, cols, -1, 1);
	c->sinks = matrix_from(1, GR_H, sinks);
	attn_config_init(&c->cfg);
	c->cfg.heads = GR_H;
	c->cfg.kv_heads = GR_G;
	c->cfg.softcap = 3.0;
	c->in.batches = GR_B;
	c->in.q = c->q;
	c->in.k = c->k;
	c->in.v = c->v;
	c->in.d_out = c->d_out;
	c->in.bias = c->bias;
	c->in.bias_blocks = blocks;
	c->in.sinks = c->sinks;
}

static void
gr_free(struct gr_case *c)
{
	attn_matrix_free(&c->q);
	attn_matrix_free(&c->k);
	attn_matrix_free(&c->v);
	attn_matrix_free(&c->d_out);
	attn_matrix_free(&c->bias);
	attn_matrix_free(&c->sinks);
}

/* The loss sum(dO * output) of c as it stands. */
static double
gr_loss(const struct gr_case *c)
{
	struct attn_stages st;
	struct attn_error err;
	double l = 0;
	size_t i, j;

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
gr_numeric(const struct gr_case *c, double *x)
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

START_TEST(grad_bias_and_sinks_match_finite_differences)
{
	const unsigned want = STAGE(LSE) | STAGE(DELTA) | STAGE(GRAD_SCALED);
	struct attn_matrix gb, gs;
	struct attn_stages st;
	struct attn_error err;
	struct gr_case c;
	double num, got;
	size_t i, j;

	gr_make(&c, _i);
	ck_assert_int_eq(attn_run(&c.cfg, &c.in, want, &st, &err), ATTN_OK);
	ck_assert_int_eq(attn_grad_bias(&st, &c.in, &gb, &err), ATTN_OK);
	ck_assert_int_eq(attn_grad_sinks(&st, &gs, &err), ATTN_OK);
	ck_assert_uint_eq(gb.rows, c.bias.rows);
	ck_assert_uint_eq(gb.cols, c.bias.cols);
	for (i = 0; i < c.bias.rows; i++)
		for (j = 0; j < c.bias.cols; j++) {
			num = gr_numeric(&c, attn_at(&c.bias, i, j));
			got = *attn_at(&gb, i, j);
			ck_assert_msg(fabs(got - num) <= 1e-8 + 1e-6 *
			    fabs(num), "grad_bias[%zu][%zu] = %.17g, finite "
			    "differences %.17g", i, j, got, num);
		}
	ck_assert_uint_eq(gs.cols, GR_H);
	for (j = 0; j < GR_H; j++) {
		num = gr_numeric(&c, attn_at(&c.sinks, 0, j));
		got = *attn_at(&gs, 0, j);
		ck_assert_msg(fabs(got - num) <= 1e-8 + 1e-6 * fabs(num),
		    "grad_sinks[%zu] = %.17g, finite differences %.17g", j,
		    got, num);
	}
	attn_matrix_free(&gb);
	attn_matrix_free(&gs);
	attn_stages_free(&st);
	gr_free(&c);
}
END_TEST

/* lse written in log2 with +inf for no key: the same gradients. */
START_TEST(grad_sinks_read_the_natural_lse)
{
	const unsigned want = STAGE(LSE) | STAGE(DELTA);
	struct attn_matrix a, b;
	struct attn_stages st;
	struct attn_error err;
	struct gr_case c;
	size_t h;

	gr_make(&c, 0);
	ck_assert_int_eq(attn_run(&c.cfg, &c.in, want, &st, &err), ATTN_OK);
	ck_assert_int_eq(attn_grad_sinks(&st, &a, &err), ATTN_OK);
	attn_stages_free(&st);
	c.cfg.lse_base = ATTN_LSE_2;
	c.cfg.lse_masked = ATTN_LSE_MASKED_POS_INF;
	ck_assert_int_eq(attn_run(&c.cfg, &c.in, want, &st, &err), ATTN_OK);
	ck_assert_int_eq(attn_grad_sinks(&st, &b, &err), ATTN_OK);
	for (h = 0; h < GR_H; h++)
		ck_assert_double_eq_tol(*attn_at(&b, 0, h), *attn_at(&a, 0, h),
		    1e-14 * fabs(*attn_at(&a, 0, h)) + 1e-300);
	attn_matrix_free(&a);
	attn_matrix_free(&b);
	attn_stages_free(&st);
	gr_free(&c);
}
END_TEST

#include "grad_reduce_torch.h"

/* The case grad_reduce_torch.py ran through PyTorch's autograd: a
 * key-padding bias per batch (B x 1 x 1 x S) and a sink per head. */
START_TEST(grad_bias_and_sinks_match_torch_autograd)
{
	const unsigned want = STAGE(LSE) | STAGE(DELTA) | STAGE(GRAD_SCALED);
	struct attn_matrix q = matrix_from(GRT_B * GRT_T, GRT_H * GRT_D, grt_q),
	    k = matrix_from(GRT_B * GRT_S, GRT_G * GRT_D, grt_k),
	    v = matrix_from(GRT_B * GRT_S, GRT_G * GRT_D, grt_v),
	    d_out = matrix_from(GRT_B * GRT_T, GRT_H * GRT_D, grt_d_out),
	    bias = matrix_from(GRT_B, GRT_S, grt_bias),
	    sinks = matrix_from(1, GRT_H, grt_sinks), gb, gs;
	struct attn_inputs in;
	struct attn_config cfg;
	struct attn_stages st;
	struct attn_error err;
	size_t i;

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
	in.bias_blocks = GRT_B;
	in.sinks = sinks;
	ck_assert_int_eq(attn_run(&cfg, &in, want, &st, &err), ATTN_OK);
	ck_assert_int_eq(attn_grad_bias(&st, &in, &gb, &err), ATTN_OK);
	ck_assert_int_eq(attn_grad_sinks(&st, &gs, &err), ATTN_OK);
	for (i = 0; i < GRT_B * GRT_S; i++)
		ck_assert_double_eq_tol(gb.data[i], grt_grad_bias[i],
		    1e-12 * fabs(grt_grad_bias[i]) + 1e-15);
	for (i = 0; i < GRT_H; i++)
		ck_assert_double_eq_tol(gs.data[i], grt_grad_sinks[i],
		    1e-12 * fabs(grt_grad_sinks[i]) + 1e-15);
	attn_matrix_free(&gb);
	attn_matrix_free(&gs);
	attn_stages_free(&st);
	attn_matrix_free(&q);
	attn_matrix_free(&k);
	attn_matrix_free(&v);
	attn_matrix_free(&d_out);
	attn_matrix_free(&bias);
	attn_matrix_free(&sinks);
}
END_TEST

Suite *
grad_reduce_suite(void)
{
	Suite *s = suite_create("grad_reduce");
	TCase *tc = tcase_create("reductions");

	tcase_add_loop_test(tc, grad_bias_and_sinks_match_finite_differences,
	    0, 12);
	tcase_add_test(tc, grad_sinks_read_the_natural_lse);
	tcase_add_test(tc, grad_bias_and_sinks_match_torch_autograd);
	suite_add_tcase(s, tc);
	return s;
}
