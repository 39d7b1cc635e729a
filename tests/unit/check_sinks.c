/*
 * check_sinks.c - attention sinks (attn_inputs.sinks), on every kernel
 * (KERNEL_TEST in testutil.h): each head's softmax denominator gains
 * exp(sink), so that
 *
 *	weights[i][j] = exp(scaled[i][j]) / (exp(sink) + sum_j exp(scaled))
 *	lse[i]        = log(exp(sink) + sum_j exp(scaled[i][j]))
 *
 * Checked against that formula written out in long double, against an
 * extra key whose logit is the sink and whose value is 0 (what a sink
 * is), against the rows' sums 1 - exp(sink - lse), and for the corners:
 * a row whose keys are all masked, a sink far below every logit, and
 * shapes that are not one sink per head.  The seeded random variants of
 * check_variants.c carry sinks too, against tests/ref.
 *
 * Dims: B batches, H query heads, T query rows, S keys, d_k and d_v
 * columns per head.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "internal.h"
#include "ref.h"
#include "suites.h"
#include "testutil.h"

/* A two-head problem: T = 3 queries, S = 4 keys, d_k = 2, d_v = 3 per
 * head, values in [-1.5, 1.5), and the sinks 0.75 and -2. */
struct sink_case {
	struct attn_config cfg;
	struct attn_inputs in;
	struct attn_matrix q, k, v, sinks;
};

#define SC_H 2
#define SC_T 3
#define SC_S 4
#define SC_DK 2
#define SC_DV 3

static void
sink_case_make(struct sink_case *c, unsigned long long seed)
{
	static const double sinks[SC_H] = { 0.75, -2.0 };
	struct ref_rng rng;

	memset(c, 0, sizeof *c);
	ref_rng_seed(&rng, seed);
	c->q = matrix_random(&rng, SC_T, SC_H * SC_DK, -1.5, 1.5);
	c->k = matrix_random(&rng, SC_S, SC_H * SC_DK, -1.5, 1.5);
	c->v = matrix_random(&rng, SC_S, SC_H * SC_DV, -1.5, 1.5);
	c->sinks = matrix_from(1, SC_H, sinks);
	attn_config_init(&c->cfg);
	c->cfg.heads = SC_H;
	c->in.batches = 1;
	c->in.q = c->q;
	c->in.k = c->k;
	c->in.v = c->v;
	c->in.sinks = c->sinks;
}

static void
sink_case_free(struct sink_case *c)
{
	attn_matrix_free(&c->q);
	attn_matrix_free(&c->k);
	attn_matrix_free(&c->v);
	attn_matrix_free(&c->sinks);
}

/* Element (i, j) of the block of stage s for head h. */
static double
head_at(const struct attn_stages *st, enum attn_stage s, size_t h, size_t i,
    size_t j)
{
	struct attn_matrix m = attn_stage_block(st, s, 0, h);

	return *attn_at(&m, i, j);
}

/* ---------------------------------------------------------------- formula */

KERNEL_TEST(a_sink_adds_exp_sink_to_the_denominator, ATTN_STAGES_ALL)
{
	struct sink_case c;
	struct attn_stages st;
	size_t h, i, j, x;

	sink_case_make(&c, 41);
	run_ok(kernel, &c.cfg, &c.in, stages, &st);
	ck_assert_ptr_nonnull(st.sinks.data);
	for (h = 0; h < SC_H; h++) {
		const long double sink = (long double)*attn_at(&c.sinks, 0, h);

		ck_assert_double_eq(*attn_at(&st.sinks, 0, h),
		    *attn_at(&c.sinks, 0, h));
		for (i = 0; i < SC_T; i++) {
			long double logit[SC_S], denom = expl(sink), o;

			/* the formula, from the inputs, in long double */
			for (j = 0; j < SC_S; j++) {
				long double dot = 0.0L;

				for (x = 0; x < SC_DK; x++)
					dot += (long double)*attn_at(&c.q, i,
					    h * SC_DK + x) *
					    (long double)*attn_at(&c.k, j,
					    h * SC_DK + x);
				logit[j] = dot / sqrtl((long double)SC_DK);
				denom += expl(logit[j]);
			}
			for (j = 0; j < SC_S; j++)
				ck_assert_ldouble_eq_tol(head_at(&st,
				    ATTN_STAGE_WEIGHTS, h, i, j),
				    expl(logit[j]) / denom, 1e-15L);
			for (x = 0; x < SC_DV; x++) {
				o = 0.0L;
				for (j = 0; j < SC_S; j++)
					o += expl(logit[j]) / denom *
					    (long double)*attn_at(&c.v, j,
					    h * SC_DV + x);
				ck_assert_ldouble_eq_tol(head_at(&st,
				    ATTN_STAGE_OUTPUT, h, i, x), o, 1e-15L);
			}
			ck_assert_ldouble_eq_tol(head_at(&st, ATTN_STAGE_LSE,
			    h, i, 0), logl(denom), 1e-15L);
			/* lse = row_max + log(row_sum) still, the sink in
			 * both */
			ck_assert_ldouble_eq_tol(head_at(&st,
			    ATTN_STAGE_ROW_MAX, h, i, 0) +
			    logl(head_at(&st, ATTN_STAGE_ROW_SUM, h, i, 0)),
			    logl(denom), 1e-15L);
			ck_assert_double_ge(head_at(&st, ATTN_STAGE_ROW_MAX,
			    h, i, 0), *attn_at(&c.sinks, 0, h));
		}
	}
	ck_assert_uint_eq(st.nmasked, 0);
	attn_stages_free(&st);
	sink_case_free(&c);
}
END_TEST

/* The rows sum to 1 - exp(sink - lse): what the sink takes is the rest,
 * which is what --explain's check line states. */
KERNEL_TEST(weights_sum_to_one_minus_the_sinks_share, STAGE(WEIGHTS) |
    STAGE(LSE))
{
	struct sink_case c;
	struct attn_stages st;
	size_t h, i, j;

	sink_case_make(&c, 42 + (unsigned long long)_i);
	run_ok(kernel, &c.cfg, &c.in, stages, &st);
	for (h = 0; h < SC_H; h++)
		for (i = 0; i < SC_T; i++) {
			double sum = 0.0, lse = head_at(&st, ATTN_STAGE_LSE, h,
			    i, 0);

			for (j = 0; j < SC_S; j++)
				sum += head_at(&st, ATTN_STAGE_WEIGHTS, h, i,
				    j);
			ck_assert_double_lt(sum, 1.0);
			ck_assert_double_eq_tol(sum,
			    1.0 - exp(*attn_at(&c.sinks, 0, h) - lse),
			    8 * DBL_EPSILON);
		}
	attn_stages_free(&st);
	sink_case_free(&c);
}
END_TEST

/*
 * A sink is a key that every query sees, with the sink as its logit and
 * a value of 0: append such a key (a zero row of K and V, and a bias
 * column holding each head's sink) and the weights of the real keys, the
 * output and lse are those of the run with sinks.
 */
KERNEL_TEST(a_sink_is_an_extra_key_with_a_zero_value, STAGE(WEIGHTS) |
    STAGE(OUTPUT) | STAGE(LSE))
{
	struct sink_case c;
	struct attn_inputs in2;
	struct attn_matrix k2, v2, bias;
	struct attn_stages st, st2;
	size_t h, i, j, x;

	sink_case_make(&c, 50 + (unsigned long long)_i);
	c.cfg.causal = 1;	/* positions must line up in both runs */
	ck_assert_int_eq(attn_matrix_alloc(&k2, SC_S + 1, SC_H * SC_DK, NULL),
	    ATTN_OK);
	ck_assert_int_eq(attn_matrix_alloc(&v2, SC_S + 1, SC_H * SC_DV, NULL),
	    ATTN_OK);
	ck_assert_int_eq(attn_matrix_alloc(&bias, SC_H * SC_T, SC_S + 1,
	    NULL), ATTN_OK);
	/* the extra key first, so that the causal mask keeps it: position 0
	 * then holds it, and key j moves to j + 1, as query i does below
	 * with bottom-right alignment (offset S + 1 - T) */
	for (j = 0; j < SC_S; j++) {
		memcpy(attn_at(&k2, j + 1, 0), attn_at(&c.k, j, 0),
		    SC_H * SC_DK * sizeof(double));
		memcpy(attn_at(&v2, j + 1, 0), attn_at(&c.v, j, 0),
		    SC_H * SC_DV * sizeof(double));
	}
	for (h = 0; h < SC_H; h++)
		for (i = 0; i < SC_T; i++)
			*attn_at(&bias, h * SC_T + i, 0) =
			    *attn_at(&c.sinks, 0, h);
	in2 = c.in;
	in2.k = k2;
	in2.v = v2;
	in2.bias = bias;
	in2.bias_blocks = SC_H;
	in2.sinks.data = NULL;
	/* T = 3, S = 4: bottom-right puts query i at key i + 1 with sinks,
	 * and at key i + 2 among the S + 1 keys of the second run, which is
	 * key i + 1 of the first: the same keys are kept. */
	c.cfg.align = ATTN_ALIGN_BOTTOM_RIGHT;
	run_ok(kernel, &c.cfg, &c.in, stages, &st);
	run_ok(kernel, &c.cfg, &in2, stages, &st2);
	for (h = 0; h < SC_H; h++)
		for (i = 0; i < SC_T; i++) {
			for (j = 0; j < SC_S; j++)
				ck_assert_double_eq_tol(head_at(&st,
				    ATTN_STAGE_WEIGHTS, h, i, j),
				    head_at(&st2, ATTN_STAGE_WEIGHTS, h, i,
				    j + 1), 4 * DBL_EPSILON);
			for (x = 0; x < SC_DV; x++)
				ck_assert_double_eq_tol(head_at(&st,
				    ATTN_STAGE_OUTPUT, h, i, x),
				    head_at(&st2, ATTN_STAGE_OUTPUT, h, i, x),
				    16 * DBL_EPSILON);
			ck_assert_double_eq_tol(head_at(&st, ATTN_STAGE_LSE,
			    h, i, 0), head_at(&st2, ATTN_STAGE_LSE, h, i, 0),
			    8 * DBL_EPSILON);
		}
	attn_stages_free(&st);
	attn_stages_free(&st2);
	attn_matrix_free(&k2);
	attn_matrix_free(&v2);
	attn_matrix_free(&bias);
	sink_case_free(&c);
}
END_TEST

/* ---------------------------------------------------------------- corners */

/*
 * A row whose every key is masked still has the sink: all its weight
 * goes there, so its weights and output are 0 and its lse is the sink,
 * whatever --masked-rows says, and it is no row "with no key".
 */
KERNEL_TEST(a_row_with_every_key_masked_gives_its_weight_to_the_sink,
    ATTN_STAGES_ALL)
{
	static const enum attn_masked_rows policy[] = {
		ATTN_MASKED_ZERO, ATTN_MASKED_NAN, ATTN_MASKED_UNIFORM
	};
	struct sink_case c;
	struct attn_matrix mask;
	struct attn_stages st;
	size_t h, i, j, x;

	sink_case_make(&c, 60);
	ck_assert_int_eq(attn_matrix_alloc(&mask, SC_T, SC_S, NULL), ATTN_OK);
	for (i = 0; i < SC_T; i++)
		for (j = 0; j < SC_S; j++)
			*attn_at(&mask, i, j) = i != 1;	/* q2 keeps none */
	c.in.mask = mask;
	c.in.mask_blocks = 1;
	c.cfg.masked_rows = policy[_i];
	run_ok(kernel, &c.cfg, &c.in, stages, &st);
	ck_assert_uint_eq(st.nmasked, 0);
	for (h = 0; h < SC_H; h++) {
		for (j = 0; j < SC_S; j++)
			ck_assert_double_eq(head_at(&st, ATTN_STAGE_WEIGHTS,
			    h, 1, j), 0.0);
		for (x = 0; x < SC_DV; x++)
			ck_assert_double_eq(head_at(&st, ATTN_STAGE_OUTPUT, h,
			    1, x), 0.0);
		ck_assert_double_eq(head_at(&st, ATTN_STAGE_LSE, h, 1, 0),
		    *attn_at(&c.sinks, 0, h));
		ck_assert_double_eq(head_at(&st, ATTN_STAGE_ROW_MAX, h, 1, 0),
		    *attn_at(&c.sinks, 0, h));
		ck_assert_double_eq(head_at(&st, ATTN_STAGE_ROW_SUM, h, 1, 0),
		    1.0);
	}
	attn_stages_free(&st);
	attn_matrix_free(&mask);
	sink_case_free(&c);
}
END_TEST

/* exp(-1000 - max) is 0 in double for logits this size, so a sink that
 * low leaves every number as it is without sinks, to the bit. */
KERNEL_TEST(a_sink_far_below_every_logit_changes_nothing, ATTN_STAGES_ALL)
{
	struct sink_case c;
	struct attn_stages st, st2;
	struct attn_inputs plain;
	size_t s;

	sink_case_make(&c, 70);
	*attn_at(&c.sinks, 0, 0) = -1000.0;
	*attn_at(&c.sinks, 0, 1) = -1e300;
	plain = c.in;
	plain.sinks.data = NULL;
	run_ok(kernel, &c.cfg, &c.in, stages, &st);
	run_ok(kernel, &c.cfg, &plain, stages, &st2);
	for (s = 0; s < ATTN_STAGE_COUNT; s++)
		if (stages & ATTN_STAGE_BIT(s))
			expect_same(attn_stage_table[s].name, &st.stage[s],
			    &st2.stage[s]);
	ck_assert_ptr_null(st2.sinks.data);
	attn_stages_free(&st);
	attn_stages_free(&st2);
	sink_case_free(&c);
}
END_TEST

/* A column of H sinks is read as a row of them; batches share them. */
KERNEL_TEST(sinks_may_be_a_column_and_serve_every_batch, ATTN_STAGES_ALL)
{
	struct sink_case c;
	struct attn_matrix q2, k2, v2, col;
	struct attn_inputs in2;
	struct attn_stages st, st2;
	size_t s, b;

	sink_case_make(&c, 80);
	col = matrix_from(SC_H, 1, c.sinks.data);
	/* two batches, each the one-batch problem */
	ck_assert_int_eq(attn_matrix_alloc(&q2, 2 * SC_T, SC_H * SC_DK, NULL),
	    ATTN_OK);
	ck_assert_int_eq(attn_matrix_alloc(&k2, 2 * SC_S, SC_H * SC_DK, NULL),
	    ATTN_OK);
	ck_assert_int_eq(attn_matrix_alloc(&v2, 2 * SC_S, SC_H * SC_DV, NULL),
	    ATTN_OK);
	for (b = 0; b < 2; b++) {
		memcpy(q2.data + b * SC_T * SC_H * SC_DK, c.q.data,
		    SC_T * SC_H * SC_DK * sizeof(double));
		memcpy(k2.data + b * SC_S * SC_H * SC_DK, c.k.data,
		    SC_S * SC_H * SC_DK * sizeof(double));
		memcpy(v2.data + b * SC_S * SC_H * SC_DV, c.v.data,
		    SC_S * SC_H * SC_DV * sizeof(double));
	}
	in2 = c.in;
	in2.batches = 2;
	in2.q = q2;
	in2.k = k2;
	in2.v = v2;
	in2.sinks = col;
	run_ok(kernel, &c.cfg, &c.in, stages, &st);
	run_ok(kernel, &c.cfg, &in2, stages, &st2);
	for (s = 0; s < ATTN_STAGE_COUNT; s++) {
		struct attn_matrix a, z;
		size_t h;

		if (!(stages & ATTN_STAGE_BIT(s)))
			continue;
		for (b = 0; b < 2; b++)
			for (h = 0; h < SC_H; h++) {
				a = attn_stage_block(&st, (enum attn_stage)s,
				    0, h);
				z = attn_stage_block(&st2, (enum attn_stage)s,
				    b, h);
				expect_same(attn_stage_table[s].name, &a, &z);
			}
	}
	expect_same("sinks", &st.sinks, &st2.sinks);
	attn_stages_free(&st);
	attn_stages_free(&st2);
	attn_matrix_free(&q2);
	attn_matrix_free(&k2);
	attn_matrix_free(&v2);
	attn_matrix_free(&col);
	sink_case_free(&c);
}
END_TEST

/* ---------------------------------------------------------------- errors */

static const struct sink_error {
	size_t rows, cols;
	double first;
	const char *msg;
} sink_errors[] = {
	{ 1, 3, 0.5, "shape mismatch: the sinks are 1x3 but there are 2 "
	    "heads: give one sink logit per query head" },
	{ 2, 2, 0.5, "shape mismatch: the sinks are 2x2 but there are 2 "
	    "heads: give one sink logit per query head" },
	{ 1, 1, 0.5, "shape mismatch: the sinks are 1x1 but there are 2 "
	    "heads: give one sink logit per query head" },
	{ 1, 2, INFINITY, "the sink of head 1 is not finite: a sink is a "
	    "logit, a finite number" },
	{ 2, 1, NAN, "the sink of head 1 is not finite: a sink is a logit, a "
	    "finite number" },
};

START_TEST(sinks_that_are_not_one_finite_logit_per_head_are_refused)
{
	const struct sink_error *e = &sink_errors[_i];
	struct sink_case c;
	struct attn_matrix bad;
	struct attn_stages st;
	struct attn_error err;
	size_t bytes;

	sink_case_make(&c, 90);
	ck_assert_int_eq(attn_matrix_alloc(&bad, e->rows, e->cols, NULL),
	    ATTN_OK);
	bad.data[0] = e->first;
	c.in.sinks = bad;
	memset(&err, 0, sizeof err);
	ck_assert_int_eq(attn_run(&c.cfg, &c.in, ATTN_STAGES_ALL, &st, &err),
	    ATTN_ERR_DATA);
	ck_assert_str_eq(err.msg, e->msg);
	ck_assert_ptr_null(st.sinks.data);
	memset(&err, 0, sizeof err);
	ck_assert_int_eq(attn_plan(&c.cfg, &c.in, ATTN_STAGES_ALL, &bytes,
	    &err), ATTN_ERR_DATA);
	ck_assert_str_eq(err.msg, e->msg);
	attn_matrix_free(&bad);
	sink_case_free(&c);
}
END_TEST

Suite *
sinks_suite(void)
{
	Suite *s = suite_create("sinks");
	TCase *tc = tcase_create("sinks");

	tcase_add_kernel_test(tc, a_sink_adds_exp_sink_to_the_denominator, 0,
	    1);
	tcase_add_kernel_test(tc, weights_sum_to_one_minus_the_sinks_share, 0,
	    4);
	tcase_add_kernel_test(tc, a_sink_is_an_extra_key_with_a_zero_value, 0,
	    4);
	tcase_add_kernel_test(tc,
	    a_row_with_every_key_masked_gives_its_weight_to_the_sink, 0, 3);
	tcase_add_kernel_test(tc, a_sink_far_below_every_logit_changes_nothing,
	    0, 1);
	tcase_add_kernel_test(tc, sinks_may_be_a_column_and_serve_every_batch,
	    0, 1);
	tcase_add_loop_test(tc,
	    sinks_that_are_not_one_finite_logit_per_head_are_refused, 0,
	    (int)(sizeof sink_errors / sizeof sink_errors[0]));
	suite_add_tcase(s, tc);
	return s;
}
