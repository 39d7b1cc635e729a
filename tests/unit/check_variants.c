/*
 * check_variants.c - the variants, on every kernel (KERNEL_TEST in
 * testutil.h): causal, window and --mask masking in both alignments, the
 * three policies for rows with no key left, bias, ALiBi, softcap, heads,
 * grouped KV heads, batches and sinks.
 * Golden cases worked by hand first, then several hundred seeded random
 * combinations compared stage by stage with the long double reference in
 * tests/ref.
 *
 * Where a variant is exact in floating point (a mask, dyadic ALiBi
 * logits, a head computed alone by the same operations), the test
 * demands equality; elsewhere 1e-12 relative to the magnitude involved.
 *
 * Dims: B batches, H query heads, G KV heads, T query rows, S keys, d_k
 * and d_v columns per head.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn_private.h"
#include "ref.h"
#include "suites.h"
#include "testutil.h"
#include "vcase.h"

/* ---------------------------------------------------------------- helpers */

/* One batch of q, k and v, without mask or bias. */
static void
inputs_init(struct attn_inputs *in, const struct attn_matrix *q,
    const struct attn_matrix *k, const struct attn_matrix *v)
{
	memset(in, 0, sizeof *in);
	in->batches = 1;
	in->q = *q;
	in->k = *k;
	in->v = *v;
}

static void
free3(struct attn_matrix *a, struct attn_matrix *b, struct attn_matrix *c)
{
	attn_matrix_free(a);
	attn_matrix_free(b);
	attn_matrix_free(c);
}

/* Fail unless every per-head stage of batch b, head h of a equals batch
 * ob, head oh of o, and likewise that head's output columns. */
static void
expect_same_head(const struct attn_stages *a, size_t b, size_t h,
    const struct attn_stages *o, size_t ob, size_t oh)
{
	size_t s;

	for (s = 0; s < ATTN_STAGE_COUNT; s++) {
		struct attn_matrix x = attn_stage_block(a, (enum attn_stage)s,
		    b, h);
		struct attn_matrix y = attn_stage_block(o, (enum attn_stage)s,
		    ob, oh);

		expect_same(attn_stage_table[s].name, &x, &y);
	}
}

/* Expect attn_run to fail with status and exactly msg, leaving *st
 * zeroed. */
static void
expect_run_error(const struct attn_config *cfg, const struct attn_inputs *in,
    enum attn_status status, const char *msg)
{
	struct attn_stages st;
	struct attn_error err;
	size_t s;

	memset(&err, 0, sizeof err);
	memset(&st, 0xA5, sizeof st);
	ck_assert_int_eq(attn_run(cfg, in, ATTN_STAGES_ALL, &st, &err), status);
	ck_assert_int_eq(err.status, status);
	ck_assert_ptr_null(err.file);
	ck_assert_uint_eq(err.line, 0);
	ck_assert_uint_eq(err.col, 0);
	ck_assert_str_eq(err.msg, msg);
	for (s = 0; s < ATTN_STAGE_COUNT; s++)
		ck_assert_ptr_null(st.stage[s].data);
	ck_assert_ptr_null(st.masked);
	ck_assert_uint_eq(st.nmasked, 0);
}

/* ------------------------------------------------------- position masking */

/* Causal and window masks in both alignments, worked by hand: query i
 * sits at key position i + offset, offset 0 or S - T. */
static const struct mask_case {
	const char *name;
	size_t T, S;
	enum attn_align align;
	int causal, window;
	size_t left, right;
	double keep[4][4];	/* T x S: the mask stage */
} mask_cases[] = {
	{ "causal bottom-right T=3 S=4", 3, 4, ATTN_ALIGN_BOTTOM_RIGHT, 1, 0,
	    0, 0, { { 1, 1, 0, 0 }, { 1, 1, 1, 0 }, { 1, 1, 1, 1 } } },
	{ "causal top-left T=3 S=4", 3, 4, ATTN_ALIGN_TOP_LEFT, 1, 0, 0, 0,
	    { { 1, 0, 0, 0 }, { 1, 1, 0, 0 }, { 1, 1, 1, 0 } } },
	/* offset -2: the first two queries come before every key */
	{ "causal bottom-right T=4 S=2", 4, 2, ATTN_ALIGN_BOTTOM_RIGHT, 1, 0,
	    0, 0, { { 0, 0 }, { 0, 0 }, { 1, 0 }, { 1, 1 } } },
	{ "causal top-left T=4 S=2", 4, 2, ATTN_ALIGN_TOP_LEFT, 1, 0, 0, 0,
	    { { 1, 0 }, { 1, 1 }, { 1, 1 }, { 1, 1 } } },
	{ "window 1,0 top-left T=S=4", 4, 4, ATTN_ALIGN_TOP_LEFT, 0, 1, 1, 0,
	    { { 1, 0, 0, 0 }, { 1, 1, 0, 0 }, { 0, 1, 1, 0 },
	    { 0, 0, 1, 1 } } },
	{ "window 1,0 bottom-right T=S=4", 4, 4, ATTN_ALIGN_BOTTOM_RIGHT, 0,
	    1, 1, 0, { { 1, 0, 0, 0 }, { 1, 1, 0, 0 }, { 0, 1, 1, 0 },
	    { 0, 0, 1, 1 } } },
	{ "window 0,1 top-left T=S=4", 4, 4, ATTN_ALIGN_TOP_LEFT, 0, 1, 0, 1,
	    { { 1, 1, 0, 0 }, { 0, 1, 1, 0 }, { 0, 0, 1, 1 },
	    { 0, 0, 0, 1 } } },
	{ "window 0,1 bottom-right T=S=4", 4, 4, ATTN_ALIGN_BOTTOM_RIGHT, 0,
	    1, 0, 1, { { 1, 1, 0, 0 }, { 0, 1, 1, 0 }, { 0, 0, 1, 1 },
	    { 0, 0, 0, 1 } } },
	{ "window 1,0 top-left T=2 S=4", 2, 4, ATTN_ALIGN_TOP_LEFT, 0, 1, 1,
	    0, { { 1, 0, 0, 0 }, { 1, 1, 0, 0 } } },
	{ "window 1,0 bottom-right T=2 S=4", 2, 4, ATTN_ALIGN_BOTTOM_RIGHT, 0,
	    1, 1, 0, { { 0, 1, 1, 0 }, { 0, 0, 1, 1 } } },
	/* window 0,0 with causal: each query sees its own position only */
	{ "causal window 0,0 bottom-right T=2 S=3", 2, 3,
	    ATTN_ALIGN_BOTTOM_RIGHT, 1, 1, 0, 0,
	    { { 0, 1, 0 }, { 0, 0, 1 } } },
	/* bottom-right with T > S: the window reaches before key 0 */
	{ "window 0,2 bottom-right T=4 S=2", 4, 2, ATTN_ALIGN_BOTTOM_RIGHT, 0,
	    1, 0, 2, { { 1, 0 }, { 1, 1 }, { 1, 1 }, { 0, 1 } } },
	/* a window without bound on one side (library callers may pass
	 * SIZE_MAX): i+offset+R and j+L must not wrap around */
	{ "window 0,SIZE_MAX top-left T=S=3", 3, 3, ATTN_ALIGN_TOP_LEFT, 0, 1,
	    0, SIZE_MAX, { { 1, 1, 1 }, { 0, 1, 1 }, { 0, 0, 1 } } },
	{ "window SIZE_MAX,0 top-left T=S=3", 3, 3, ATTN_ALIGN_TOP_LEFT, 0, 1,
	    SIZE_MAX, 0, { { 1, 0, 0 }, { 1, 1, 0 }, { 1, 1, 1 } } },
	{ "window SIZE_MAX,SIZE_MAX bottom-right T=2 S=3", 2, 3,
	    ATTN_ALIGN_BOTTOM_RIGHT, 0, 1, SIZE_MAX, SIZE_MAX,
	    { { 1, 1, 1 }, { 1, 1, 1 } } },
};

#define NMASK_CASES (int)(sizeof mask_cases / sizeof mask_cases[0])

KERNEL_TEST(position_rules_keep_the_expected_keys, ATTN_STAGES_ALL)
{
	const struct mask_case *mc = &mask_cases[_i];
	struct ref_rng rng;
	struct attn_matrix q, k, v;
	struct attn_inputs in;
	struct attn_config cfg;
	struct attn_stages st;
	size_t i, j, nmasked = 0;

	ref_rng_seed(&rng, 400 + (uint64_t)_i);
	q = matrix_random(&rng, mc->T, 3, -1, 1);
	k = matrix_random(&rng, mc->S, 3, -1, 1);
	v = matrix_random(&rng, mc->S, 2, -1, 1);
	inputs_init(&in, &q, &k, &v);
	attn_config_init(&cfg);
	cfg.align = mc->align;
	cfg.causal = mc->causal;
	cfg.window = mc->window;
	cfg.window_left = mc->left;
	cfg.window_right = mc->right;
	run_ok(kernel, &cfg, &in, stages, &st);
	for (i = 0; i < mc->T; i++) {
		double sum = 0.0;
		int any = 0;

		for (j = 0; j < mc->S; j++) {
			double keep = stage_at(&st, ATTN_STAGE_MASK, i, j);
			double x = stage_at(&st, ATTN_STAGE_SCALED, i, j);
			double w = stage_at(&st, ATTN_STAGE_WEIGHTS, i, j);

			ck_assert_msg(keep == mc->keep[i][j],
			    "%s: mask[%zu][%zu] is %g", mc->name, i, j, keep);
			if (keep == 0.0) {
				ck_assert_msg(x == -INFINITY && w == 0.0,
				    "%s: masked [%zu][%zu] has scaled %g, "
				    "weight %g", mc->name, i, j, x, w);
			} else {
				ck_assert_msg(isfinite(x) && w > 0.0,
				    "%s: kept [%zu][%zu] has scaled %g, "
				    "weight %g", mc->name, i, j, x, w);
				any = 1;
			}
			sum += w;
		}
		if (any) {
			ck_assert_double_eq_tol(sum, 1.0, 4 * DBL_EPSILON);
			ck_assert(isfinite(stage_at(&st, ATTN_STAGE_LSE, i,
			    0)));
		} else {
			ck_assert_double_eq(stage_at(&st, ATTN_STAGE_LSE, i, 0),
			    -INFINITY);
			ck_assert_uint_lt(nmasked, st.nmasked);
			ck_assert_uint_eq(st.masked[nmasked], i);
			nmasked++;
		}
	}
	ck_assert_uint_eq(st.nmasked, nmasked);
	attn_stages_free(&st);
	free3(&q, &k, &v);
}
END_TEST

KERNEL_TEST(causal_row_zero_output_is_value_row_zero,
    STAGE(WEIGHTS) | STAGE(OUTPUT))
{
	/* _i picks H and G: each head's first query sees only key 0, with
	 * weight exactly 1, so its output is that KV head's V row 0 */
	static const size_t hg[][2] = { { 1, 1 }, { 2, 1 }, { 3, 3 },
	    { 4, 2 } };
	const size_t H = hg[_i][0], G = hg[_i][1], T = 5, d_k = 3, d_v = 2;
	struct ref_rng rng;
	struct attn_matrix q, k, v;
	struct attn_inputs in;
	struct attn_config cfg;
	struct attn_stages st;
	size_t h, c;

	ref_rng_seed(&rng, 500 + (uint64_t)_i);
	q = matrix_random(&rng, T, H * d_k, -2, 2);
	k = matrix_random(&rng, T, G * d_k, -2, 2);
	v = matrix_random(&rng, T, G * d_v, -2, 2);
	inputs_init(&in, &q, &k, &v);
	attn_config_init(&cfg);
	cfg.causal = 1;
	cfg.heads = H;
	cfg.kv_heads = G;
	run_ok(kernel, &cfg, &in, stages, &st);
	for (h = 0; h < H; h++) {
		size_t g = h / (H / G);

		ck_assert_double_eq(block_at(&st, ATTN_STAGE_WEIGHTS, 0, h, 0,
		    0), 1.0);
		for (c = 0; c < d_v; c++)
			ck_assert_double_eq(block_at(&st, ATTN_STAGE_OUTPUT,
			    0, h, 0, c), *attn_at(&v, 0, g * d_v + c));
	}
	attn_stages_free(&st);
	free3(&q, &k, &v);
}
END_TEST

/* ---------------------------------------------------------- masked rows */

KERNEL_TEST(a_fully_masked_row_follows_the_policy, ATTN_STAGES_ALL)
{
	/* _i: zero, nan, uniform; row 1 of the mask keeps no key */
	static const double mv[] = {
		1, 0, 1, 1,
		0, 0, 0, 0,
		1, 1, 1, 1,
	};
	const enum attn_masked_rows policy = (enum attn_masked_rows)_i;
	const size_t T = 3, S = 4, d_v = 3;
	struct ref_rng rng;
	struct attn_matrix q, k, v, mask;
	struct attn_inputs in;
	struct attn_config cfg;
	struct attn_stages st;
	size_t i, j, c;

	ref_rng_seed(&rng, 600);
	q = matrix_random(&rng, T, 2, -1, 1);
	k = matrix_random(&rng, S, 2, -1, 1);
	v = matrix_random(&rng, S, d_v, -3, 3);
	mask = matrix_from(T, S, mv);
	inputs_init(&in, &q, &k, &v);
	in.mask = mask;
	in.mask_blocks = 1;
	attn_config_init(&cfg);
	cfg.masked_rows = policy;
	run_ok(kernel, &cfg, &in, stages, &st);

	ck_assert_uint_eq(st.nmasked, 1);
	ck_assert_uint_eq(st.masked[0], 1);
	ck_assert_double_eq(stage_at(&st, ATTN_STAGE_LSE, 1, 0), -INFINITY);
	for (j = 0; j < S; j++) {
		double w = stage_at(&st, ATTN_STAGE_WEIGHTS, 1, j);

		ck_assert_double_eq(stage_at(&st, ATTN_STAGE_MASK, 1, j), 0.0);
		ck_assert_double_eq(stage_at(&st, ATTN_STAGE_SCALED, 1, j),
		    -INFINITY);
		if (policy == ATTN_MASKED_NAN)
			ck_assert_msg(isnan(w), "weight %zu is %g", j, w);
		else
			ck_assert_double_eq(w, policy == ATTN_MASKED_ZERO ?
			    0.0 : 1.0 / (double)S);
	}
	for (c = 0; c < d_v; c++) {
		double o = stage_at(&st, ATTN_STAGE_OUTPUT, 1, c), mean = 0.0;

		for (j = 0; j < S; j++)
			mean += *attn_at(&v, j, c);
		mean /= (double)S;
		if (policy == ATTN_MASKED_NAN)
			ck_assert_msg(isnan(o), "output %zu is %g", c, o);
		else if (policy == ATTN_MASKED_ZERO)
			ck_assert_double_eq(o, 0.0);
		else
			ck_assert_double_eq_tol(o, mean, 1e-15);
	}
	/* the other rows are ordinary, whatever the policy */
	for (i = 0; i < T; i += 2) {
		double sum = 0.0;

		for (j = 0; j < S; j++)
			sum += stage_at(&st, ATTN_STAGE_WEIGHTS, i, j);
		ck_assert_double_eq_tol(sum, 1.0, 4 * DBL_EPSILON);
		ck_assert(isfinite(stage_at(&st, ATTN_STAGE_LSE, i, 0)));
	}
	ck_assert_double_eq(stage_at(&st, ATTN_STAGE_WEIGHTS, 0, 1), 0.0);
	attn_stages_free(&st);
	free3(&q, &k, &v);
	attn_matrix_free(&mask);
}
END_TEST

KERNEL_TEST(masked_rows_are_rows_of_the_per_head_stacks, STAGE(OUTPUT))
{
	/* B = 2, H = 2, T = 3: block (0, 1) loses query 0 and block (1, 0)
	 * query 2, which are rows (0*2+1)*3+0 = 3 and (1*2+0)*3+2 = 8 */
	const size_t B = 2, H = 2, T = 3, S = 2, d_v = 2;
	struct ref_rng rng;
	struct attn_matrix q, k, v, mask;
	struct attn_inputs in;
	struct attn_config cfg;
	struct attn_stages st;
	size_t c;

	ref_rng_seed(&rng, 610);
	q = matrix_random(&rng, B * T, H * 2, -1, 1);
	k = matrix_random(&rng, B * S, H * 2, -1, 1);
	v = matrix_random(&rng, B * S, H * d_v, 1, 2);
	ck_assert_int_eq(attn_matrix_alloc(&mask, B * H * T, S, NULL),
	    ATTN_OK);
	for (c = 0; c < B * H * T * S; c++)
		mask.data[c] = 1.0;
	*attn_at(&mask, 3, 0) = *attn_at(&mask, 3, 1) = 0.0;
	*attn_at(&mask, 8, 0) = *attn_at(&mask, 8, 1) = 0.0;
	memset(&in, 0, sizeof in);
	in.batches = B;
	in.q = q;
	in.k = k;
	in.v = v;
	in.mask = mask;
	in.mask_blocks = B * H;
	attn_config_init(&cfg);
	cfg.heads = H;
	run_ok(kernel, &cfg, &in, stages, &st);
	ck_assert_uint_eq(st.nmasked, 2);
	ck_assert_uint_eq(st.masked[0], 3);
	ck_assert_uint_eq(st.masked[1], 8);
	ck_assert_double_eq(stage_at(&st, ATTN_STAGE_LSE, 3, 0), -INFINITY);
	ck_assert_double_eq(stage_at(&st, ATTN_STAGE_LSE, 8, 0), -INFINITY);
	/* the masked head's output columns are 0, the other head's are a
	 * mix of values in [1, 2) */
	for (c = 0; c < d_v; c++) {
		ck_assert_double_eq(block_at(&st, ATTN_STAGE_OUTPUT, 0, 1, 0,
		    c), 0.0);
		ck_assert_double_ge(block_at(&st, ATTN_STAGE_OUTPUT, 0, 0, 0,
		    c), 1.0);
		ck_assert_double_eq(block_at(&st, ATTN_STAGE_OUTPUT, 1, 0, 2,
		    c), 0.0);
		ck_assert_double_ge(block_at(&st, ATTN_STAGE_OUTPUT, 1, 1, 2,
		    c), 1.0);
	}
	attn_stages_free(&st);
	free3(&q, &k, &v);
	attn_matrix_free(&mask);
}
END_TEST

KERNEL_TEST(mask_invert_reads_the_mask_the_other_way_round, ATTN_STAGES_ALL)
{
	/* nonzero is any value but 0 and -0 */
	static const double mv[] = {
		0, 1, 2.5, -1, 0,
		1, -0.0, 1, 0, 1e-300,
		1, 1, 1, 1, 1,
	};
	const size_t T = 3, S = 5;
	double flipped[15];
	struct ref_rng rng;
	struct attn_matrix q, k, v, mask, flip;
	struct attn_inputs in;
	struct attn_config cfg;
	struct attn_stages a, b;
	size_t i, j, s;

	for (i = 0; i < T * S; i++)
		flipped[i] = mv[i] != 0.0 ? 0.0 : 1.0;
	ref_rng_seed(&rng, 620);
	q = matrix_random(&rng, T, 3, -1, 1);
	k = matrix_random(&rng, S, 3, -1, 1);
	v = matrix_random(&rng, S, 2, -1, 1);
	mask = matrix_from(T, S, mv);
	flip = matrix_from(T, S, flipped);
	inputs_init(&in, &q, &k, &v);
	in.mask_blocks = 1;
	attn_config_init(&cfg);
	in.mask = mask;
	cfg.mask_invert = 1;
	run_ok(kernel, &cfg, &in, stages, &a);
	in.mask = flip;
	cfg.mask_invert = 0;
	run_ok(kernel, &cfg, &in, stages, &b);
	for (i = 0; i < T; i++)
		for (j = 0; j < S; j++)
			ck_assert_double_eq(stage_at(&a, ATTN_STAGE_MASK, i, j),
			    flipped[i * S + j]);
	/* row 2 of the inverted mask is all nonzero: masked */
	ck_assert_uint_eq(a.nmasked, 1);
	ck_assert_uint_eq(a.masked[0], 2);
	for (s = 0; s < ATTN_STAGE_COUNT; s++)
		expect_same(attn_stage_table[s].name, &a.stage[s],
		    &b.stage[s]);
	attn_stages_free(&a);
	attn_stages_free(&b);
	free3(&q, &k, &v);
	attn_matrix_free(&mask);
	attn_matrix_free(&flip);
}
END_TEST

KERNEL_TEST(a_minus_inf_bias_masks, ATTN_STAGES_ALL)
{
	/* row 1 is all -inf, so masked; one -inf in row 0 masks that key */
	static const double bv[] = {
		0.5, -1, -INFINITY, 2,
		-INFINITY, -INFINITY, -INFINITY, -INFINITY,
		0, 0, 0, 0,
	};
	static const double want[] = {
		1, 1, 0, 1,
		0, 0, 0, 0,
		1, 1, 1, 1,
	};
	const size_t T = 3, S = 4;
	struct ref_rng rng;
	struct attn_matrix q, k, v, bias;
	struct attn_inputs in;
	struct attn_config cfg;
	struct attn_stages st;
	size_t i, j;

	ref_rng_seed(&rng, 630);
	q = matrix_random(&rng, T, 2, -1, 1);
	k = matrix_random(&rng, S, 2, -1, 1);
	v = matrix_random(&rng, S, 3, -1, 1);
	bias = matrix_from(T, S, bv);
	inputs_init(&in, &q, &k, &v);
	in.bias = bias;
	in.bias_blocks = 1;
	attn_config_init(&cfg);
	cfg.softcap = 5.0;	/* a softcapped logit plus -inf is -inf */
	run_ok(kernel, &cfg, &in, stages, &st);
	for (i = 0; i < T; i++)
		for (j = 0; j < S; j++) {
			ck_assert_double_eq(stage_at(&st, ATTN_STAGE_MASK, i,
			    j), want[i * S + j]);
			if (want[i * S + j] == 0.0) {
				ck_assert_double_eq(stage_at(&st,
				    ATTN_STAGE_SCALED, i, j), -INFINITY);
				ck_assert_double_eq(stage_at(&st,
				    ATTN_STAGE_WEIGHTS, i, j), 0.0);
			}
		}
	ck_assert_uint_eq(st.nmasked, 1);
	ck_assert_uint_eq(st.masked[0], 1);
	ck_assert_double_eq(stage_at(&st, ATTN_STAGE_LSE, 1, 0), -INFINITY);
	for (j = 0; j < 3; j++)
		ck_assert_double_eq(stage_at(&st, ATTN_STAGE_OUTPUT, 1, j),
		    0.0);
	attn_stages_free(&st);
	free3(&q, &k, &v);
	attn_matrix_free(&bias);
}
END_TEST

/* ---------------------------------------------------------------- ALiBi */

/* Press et al.'s slopes, worked by hand from 2^(-8(h+1)/n) and, for H
 * not a power of two, every other slope of 2n after the first n. */
#define R2 0.707106781186547524400844362104849039L	/* 2^-0.5 */
static const struct {
	size_t H;
	long double slopes[12];
} alibi_cases[] = {
	{ 1, { 0x1p-8L } },
	{ 2, { 0x1p-4L, 0x1p-8L } },
	{ 3, { 0x1p-4L, 0x1p-8L, 0x1p-2L } },
	{ 4, { 0x1p-2L, 0x1p-4L, 0x1p-6L, 0x1p-8L } },
	{ 6, { 0x1p-2L, 0x1p-4L, 0x1p-6L, 0x1p-8L, 0x1p-1L, 0x1p-3L } },
	{ 8, { 0x1p-1L, 0x1p-2L, 0x1p-3L, 0x1p-4L, 0x1p-5L, 0x1p-6L,
	    0x1p-7L, 0x1p-8L } },
	{ 12, { 0x1p-1L, 0x1p-2L, 0x1p-3L, 0x1p-4L, 0x1p-5L, 0x1p-6L,
	    0x1p-7L, 0x1p-8L, R2, R2 * 0x1p-1L, R2 * 0x1p-2L,
	    R2 * 0x1p-3L } },
};

#define NALIBI_CASES (int)(sizeof alibi_cases / sizeof alibi_cases[0])

START_TEST(alibi_slopes_follow_get_slopes)
{
	const size_t H = alibi_cases[_i].H;
	long double ref[12];
	size_t h;

	ck_assert_int_eq(ref_alibi_slopes(H, ref), 0);
	for (h = 0; h < H; h++) {
		const long double want = alibi_cases[_i].slopes[h];

		/* within a rounding or two of the double nearest */
		ck_assert_ldouble_eq_tol((long double)attn_alibi_slope(h, H),
		    want, want * 2 * DBL_EPSILON);
		/* the tests' own get_slopes agrees with the hand table */
		ck_assert_ldouble_eq_tol(ref[h], want, want * 1e-18L);
	}
}
END_TEST

START_TEST(alibi_slopes_agree_with_the_reference_up_to_64_heads)
{
	long double ref[64];
	size_t H, h;

	for (H = 1; H <= 64; H++) {
		ck_assert_int_eq(ref_alibi_slopes(H, ref), 0);
		for (h = 0; h < H; h++)
			ck_assert_msg(fabsl((long double)attn_alibi_slope(h, H)
			    - ref[h]) <= ref[h] * 1e-15L,
			    "slope %zu of %zu: %.17g, reference %.20Lg", h, H,
			    attn_alibi_slope(h, H), ref[h]);
	}
}
END_TEST

/* The inputs of the two tests below: H = 2 heads of d_k = 1, scale 1,
 * both heads' scores [[1, 0, -1], [2, 0, -2]]. */
static void
alibi_setup(struct attn_matrix *q, struct attn_matrix *k,
    struct attn_matrix *v, struct attn_inputs *in, struct attn_config *cfg)
{
	static const double qv[] = { 1, 1, 2, 2 };
	static const double kv[] = { 1, 1, 0, 0, -1, -1 };
	static const double vv[] = { 1, 2, 3, 4, 5, 6 };

	*q = matrix_from(2, 2, qv);
	*k = matrix_from(3, 2, kv);
	*v = matrix_from(3, 2, vv);
	inputs_init(in, q, k, v);
	attn_config_init(cfg);
	cfg->heads = 2;
	cfg->alibi = 1;
	cfg->scale_mode = ATTN_SCALE_NONE;
}

KERNEL_TEST(alibi_subtracts_slope_times_distance, ATTN_STAGES_ALL)
{
	/*
	 * H = 2 heads of d_k = 1, scale 1: both heads' scores are
	 * [[1, 0, -1], [2, 0, -2]]; slopes 1/16 and 1/256; distances
	 * |i + offset - j| with offset 0 (_i 0) or S - T = 1 (_i 1).  All
	 * dyadic, so exact.
	 */
	static const double want[2][2][2][3] = {
		{	/* top-left */
			{ { 1, -0.0625, -1.125 }, { 1.9375, 0, -2.0625 } },
			{ { 1, -0.00390625, -1.0078125 },
			  { 1.99609375, 0, -2.00390625 } },
		},
		{	/* bottom-right */
			{ { 0.9375, 0, -1.0625 }, { 1.875, -0.0625, -2 } },
			{ { 0.99609375, 0, -1.00390625 },
			  { 1.9921875, -0.00390625, -2 } },
		},
	};
	struct attn_matrix q, k, v;
	struct attn_inputs in;
	struct attn_config cfg;
	struct attn_stages st;
	double sum = 0.0;
	size_t h, i, j;

	alibi_setup(&q, &k, &v, &in, &cfg);
	cfg.align = _i == 0 ? ATTN_ALIGN_TOP_LEFT : ATTN_ALIGN_BOTTOM_RIGHT;
	run_ok(kernel, &cfg, &in, stages, &st);
	for (h = 0; h < 2; h++)
		for (i = 0; i < 2; i++)
			for (j = 0; j < 3; j++) {
				ck_assert_double_eq(block_at(&st,
				    ATTN_STAGE_SCORES, 0, h, i, j),
				    (double)(i + 1) * (1.0 - (double)j));
				ck_assert_double_eq(block_at(&st,
				    ATTN_STAGE_SCALED, 0, h, i, j),
				    want[_i][h][i][j]);
			}
	/* and the weights are the softmax of those logits */
	for (j = 0; j < 3; j++)
		sum += exp(want[_i][0][1][j]);
	for (j = 0; j < 3; j++)
		ck_assert_double_eq_tol(block_at(&st, ATTN_STAGE_WEIGHTS, 0,
		    0, 1, j), exp(want[_i][0][1][j]) / sum, 1e-15);
	ck_assert_double_eq_tol(block_at(&st, ATTN_STAGE_LSE, 0, 0, 1, 0),
	    log(sum), 1e-15);
	attn_stages_free(&st);
	free3(&q, &k, &v);
}
END_TEST

/* A kernel's own slopes (attn_inputs.alibi_slopes) replace Press et
 * al.'s: 1/2 and 1/4 for two heads, in a row (_i 0) or a column (_i 1);
 * alibi_setup's logits, top-left, all dyadic, so exact.  Three
 * slopes for two heads are a data error. */
KERNEL_TEST(alibi_slopes_given_replace_press, ATTN_STAGES_ALL)
{
	static const double sv[] = { 0.5, 0.25 };
	static const double three[] = { 0.5, 0.25, 0.125 };
	struct attn_matrix q, k, v;
	struct attn_inputs in;
	struct attn_config cfg;
	struct attn_stages st;
	struct attn_error err;
	size_t h, i, j;

	alibi_setup(&q, &k, &v, &in, &cfg);
	in.alibi_slopes = _i == 0 ? matrix_from(1, 2, sv) :
	    matrix_from(2, 1, sv);
	run_ok(kernel, &cfg, &in, stages, &st);
	for (h = 0; h < 2; h++)
		for (i = 0; i < 2; i++)
			for (j = 0; j < 3; j++)
				ck_assert_double_eq(block_at(&st,
				    ATTN_STAGE_SCALED, 0, h, i, j),
				    (double)(i + 1) * (1.0 - (double)j) -
				    sv[h] * fabs((double)i - (double)j));
	attn_stages_free(&st);
	attn_matrix_free(&in.alibi_slopes);
	in.alibi_slopes = matrix_from(1, 3, three);
	ck_assert_int_eq(attn_run(&cfg, &in, ATTN_STAGES_ALL, &st, &err),
	    ATTN_ERR_DATA);
	ck_assert_msg(strstr(err.msg, "the ALiBi slopes are 1x3") != NULL,
	    "%s", err.msg);
	attn_matrix_free(&in.alibi_slopes);
	free3(&q, &k, &v);
}
END_TEST

/* ---------------------------------------------------------------- softcap */

KERNEL_TEST(softcap_is_applied_after_scale_and_before_bias, ATTN_STAGES_ALL)
{
	/* scores 3 and -6, scale 1/2, cap 2, bias 0.5 and -1 */
	static const double qv[] = { 3 };
	static const double kv[] = { 1, -2 };
	static const double vv[] = { 1, 0 };
	static const double bv[] = { 0.5, -1 };
	struct attn_matrix q = matrix_from(1, 1, qv);
	struct attn_matrix k = matrix_from(2, 1, kv);
	struct attn_matrix v = matrix_from(2, 1, vv);
	struct attn_matrix bias = matrix_from(1, 2, bv);
	struct attn_inputs in;
	struct attn_config cfg;
	struct attn_stages st;
	const double x0 = 2.0 * tanh(0.75) + 0.5, x1 = 2.0 * tanh(-1.5) - 1.0;
	double w0;

	inputs_init(&in, &q, &k, &v);
	in.bias = bias;
	in.bias_blocks = 1;
	attn_config_init(&cfg);
	cfg.scale_mode = ATTN_SCALE_VALUE;
	cfg.scale = 0.5;
	cfg.softcap = 2.0;
	run_ok(kernel, &cfg, &in, stages, &st);
	ck_assert_double_eq(stage_at(&st, ATTN_STAGE_SCORES, 0, 0), 3.0);
	ck_assert_double_eq(stage_at(&st, ATTN_STAGE_SCORES, 0, 1), -6.0);
	ck_assert_double_eq_tol(stage_at(&st, ATTN_STAGE_SCALED, 0, 0), x0,
	    4 * DBL_EPSILON);
	ck_assert_double_eq_tol(stage_at(&st, ATTN_STAGE_SCALED, 0, 1), x1,
	    4 * DBL_EPSILON);
	/* not the cap of the biased logit, nor the cap of the unscaled one */
	ck_assert_double_gt(fabs(stage_at(&st, ATTN_STAGE_SCALED, 0, 0) -
	    2.0 * tanh(2.0 / 2.0)), 0.1);
	ck_assert_double_gt(fabs(stage_at(&st, ATTN_STAGE_SCALED, 0, 0) -
	    (2.0 * tanh(1.5) + 0.5)), 0.1);
	w0 = 1.0 / (1.0 + exp(x1 - x0));
	ck_assert_double_eq_tol(stage_at(&st, ATTN_STAGE_WEIGHTS, 0, 0), w0,
	    1e-15);
	ck_assert_double_eq_tol(stage_at(&st, ATTN_STAGE_OUTPUT, 0, 0), w0,
	    1e-15);
	attn_stages_free(&st);
	free3(&q, &k, &v);
	attn_matrix_free(&bias);
}
END_TEST

KERNEL_TEST(softcap_bounds_the_logits, ATTN_STAGES_ALL)
{
	const double cap = 5.0;
	struct ref_rng rng;
	struct attn_matrix q, k, v;
	struct attn_inputs in;
	struct attn_config cfg;
	struct attn_stages st;
	size_t i, j, big = 0;

	ref_rng_seed(&rng, 700);
	q = matrix_random(&rng, 6, 4, -10, 10);
	k = matrix_random(&rng, 7, 4, -10, 10);
	v = matrix_random(&rng, 7, 2, -1, 1);
	inputs_init(&in, &q, &k, &v);
	attn_config_init(&cfg);
	cfg.softcap = cap;
	run_ok(kernel, &cfg, &in, stages, &st);
	for (i = 0; i < 6; i++)
		for (j = 0; j < 7; j++) {
			double s = stage_at(&st, ATTN_STAGE_SCORES, i, j) *
			    st.scale;

			ck_assert_double_le(fabs(stage_at(&st,
			    ATTN_STAGE_SCALED, i, j)), cap);
			ck_assert_double_eq_tol(stage_at(&st,
			    ATTN_STAGE_SCALED, i, j), cap * tanh(s / cap),
			    4 * DBL_EPSILON * cap);
			big += fabs(s) > cap;
		}
	/* the inputs do reach past the cap */
	ck_assert_uint_gt(big, 5);
	attn_stages_free(&st);
	free3(&q, &k, &v);
}
END_TEST

/* ------------------------------------------------- heads, KV heads, batches */

START_TEST(kv_head_groups_consecutive_query_heads)
{
	static const size_t six_by_two[] = { 0, 0, 0, 1, 1, 1 };
	size_t h;

	for (h = 0; h < 6; h++) {
		ck_assert_uint_eq(attn_kv_head(h, 6, 2), six_by_two[h]);
		ck_assert_uint_eq(attn_kv_head(h, 6, 1), 0);
		ck_assert_uint_eq(attn_kv_head(h, 6, 3), h / 2);
		ck_assert_uint_eq(attn_kv_head(h, 6, 6), h);
		ck_assert_uint_eq(attn_kv_head(h, 6, 0), h);
	}
}
END_TEST

/*
 * Each head of a multi-head run equals a single-head run on its column
 * slices: Q's head h, K's and V's head h / (H / G).  ALiBi's slope
 * depends on the head among H, so the single-head run gets it as a bias
 * of -slope_h * |i + offset - j|: x - s*d and x + (-(s*d)) round alike.
 */
KERNEL_TEST(each_head_equals_a_single_head_run_on_its_slices, ATTN_STAGES_ALL)
{
	static const size_t hg[][2] = { { 6, 2 }, { 4, 1 }, { 4, 2 },
	    { 3, 3 }, { 2, 0 }, { 3, 1 } };
	const size_t H = hg[_i][0], G = hg[_i][1] ? hg[_i][1] : H;
	const size_t T = 3, S = 5, d_k = 2, d_v = 3;
	const int alibi = _i % 2 == 0;
	struct ref_rng rng;
	struct attn_matrix q, k, v, mask, bias;
	struct attn_inputs in;
	struct attn_config cfg;
	struct attn_stages all;
	size_t h, i, j;

	ref_rng_seed(&rng, 800 + (uint64_t)_i);
	q = matrix_random(&rng, T, H * d_k, -2, 2);
	k = matrix_random(&rng, S, G * d_k, -2, 2);
	v = matrix_random(&rng, S, G * d_v, -2, 2);
	ck_assert_int_eq(attn_matrix_alloc(&mask, T, S, NULL), ATTN_OK);
	for (i = 0; i < T * S; i++)
		mask.data[i] = ref_rng_range(&rng, 0, 4) != 0;
	inputs_init(&in, &q, &k, &v);
	in.mask = mask;
	in.mask_blocks = 1;
	attn_config_init(&cfg);
	cfg.heads = H;
	cfg.kv_heads = hg[_i][1];
	cfg.causal = 1;
	cfg.align = ATTN_ALIGN_BOTTOM_RIGHT;
	cfg.softcap = 1.5;
	cfg.alibi = alibi;
	cfg.masked_rows = ATTN_MASKED_UNIFORM;
	run_ok(kernel, &cfg, &in, stages, &all);
	ck_assert_uint_eq(all.heads, H);
	ck_assert_uint_eq(all.kv_heads, G);
	ck_assert_uint_eq(all.d_k, d_k);
	ck_assert_uint_eq(all.d_v, d_v);
	ck_assert_uint_eq(all.stage[ATTN_STAGE_OUTPUT].cols, H * d_v);
	for (h = 0; h < H; h++) {
		const size_t g = h / (H / G);
		struct attn_matrix qh = attn_matrix_view(&q, 0, T, h * d_k,
		    d_k);
		struct attn_matrix kg = attn_matrix_view(&k, 0, S, g * d_k,
		    d_k);
		struct attn_matrix vg = attn_matrix_view(&v, 0, S, g * d_v,
		    d_v);
		struct attn_config one = cfg;
		struct attn_inputs in1;
		struct attn_stages st;

		ck_assert_uint_eq(attn_kv_head(h, H, cfg.kv_heads), g);
		inputs_init(&in1, &qh, &kg, &vg);
		in1.mask = mask;
		in1.mask_blocks = 1;
		one.heads = 1;
		one.kv_heads = 0;
		one.alibi = 0;
		ck_assert_int_eq(attn_matrix_alloc(&bias, T, S, NULL),
		    ATTN_OK);
		if (alibi)
			for (i = 0; i < T; i++)
				for (j = 0; j < S; j++)
					*attn_at(&bias, i, j) =
					    -(attn_alibi_slope(h, H) *
					    fabs((double)(i + S - T) -
					    (double)j));
		in1.bias = bias;
		in1.bias_blocks = 1;
		run_ok(kernel, &one, &in1, stages, &st);
		expect_same_head(&all, 0, h, &st, 0, 0);
		attn_stages_free(&st);
		attn_matrix_free(&bias);
	}
	attn_stages_free(&all);
	free3(&q, &k, &v);
	attn_matrix_free(&mask);
}
END_TEST

/* Each batch equals a run on its own rows, with its own mask and bias
 * blocks: batches never mix. */
KERNEL_TEST(each_batch_equals_a_separate_run, ATTN_STAGES_ALL)
{
	const size_t B = 3, H = 2, G = 1, T = 2, S = 3, d_k = 2, d_v = 2;
	struct ref_rng rng;
	struct attn_matrix q, k, v, mask, bias;
	struct attn_inputs in;
	struct attn_config cfg;
	struct attn_stages all;
	size_t b, h, i;

	ref_rng_seed(&rng, 900);
	q = matrix_random(&rng, B * T, H * d_k, -2, 2);
	k = matrix_random(&rng, B * S, G * d_k, -2, 2);
	v = matrix_random(&rng, B * S, G * d_v, -2, 2);
	/* a mask per batch and head, a bias per batch */
	ck_assert_int_eq(attn_matrix_alloc(&mask, B * H * T, S, NULL),
	    ATTN_OK);
	for (i = 0; i < B * H * T * S; i++)
		mask.data[i] = ref_rng_range(&rng, 0, 4) != 0;
	bias = matrix_random(&rng, B * T, S, -1, 1);
	memset(&in, 0, sizeof in);
	in.batches = B;
	in.q = q;
	in.k = k;
	in.v = v;
	in.mask = mask;
	in.mask_blocks = B * H;
	in.bias = bias;
	in.bias_blocks = B;
	attn_config_init(&cfg);
	cfg.heads = H;
	cfg.kv_heads = G;
	cfg.alibi = 1;
	cfg.window = 1;
	cfg.window_left = 1;
	cfg.window_right = 1;
	cfg.masked_rows = ATTN_MASKED_NAN;
	run_ok(kernel, &cfg, &in, stages, &all);
	ck_assert_uint_eq(all.batches, B);
	ck_assert_uint_eq(all.stage[ATTN_STAGE_WEIGHTS].rows, B * H * T);
	ck_assert_uint_eq(all.stage[ATTN_STAGE_OUTPUT].rows, B * T);
	for (b = 0; b < B; b++) {
		struct attn_inputs in1;
		struct attn_stages st;

		memset(&in1, 0, sizeof in1);
		in1.batches = 1;
		in1.q = attn_matrix_view(&q, b * T, T, 0, q.cols);
		in1.k = attn_matrix_view(&k, b * S, S, 0, k.cols);
		in1.v = attn_matrix_view(&v, b * S, S, 0, v.cols);
		in1.mask = attn_matrix_view(&mask, b * H * T, H * T, 0, S);
		in1.mask_blocks = H;
		in1.bias = attn_matrix_view(&bias, b * T, T, 0, S);
		in1.bias_blocks = 1;
		run_ok(kernel, &cfg, &in1, stages, &st);
		for (h = 0; h < H; h++)
			expect_same_head(&all, b, h, &st, 0, h);
		attn_stages_free(&st);
	}
	attn_stages_free(&all);
	free3(&q, &k, &v);
	attn_matrix_free(&mask);
	attn_matrix_free(&bias);
}
END_TEST

/*
 * Mask and bias stacks of 1, B or B*H blocks: with scale 0 the logits are
 * the bias itself, so the scaled stage shows which bias block each
 * (batch, head) read, and the mask stage which mask block.  Block n holds
 * bias 10n + 3i + j and masks key (n + i) mod S.
 */
KERNEL_TEST(mask_and_bias_blocks_are_chosen_by_batch_and_head,
    STAGE(SCALED) | STAGE(MASK))
{
	const size_t B = 2, H = 3, T = 2, S = 4;
	const size_t blocks = _i == 0 ? 1 : _i == 1 ? B : B * H;
	struct ref_rng rng;
	struct attn_matrix q, k, v, mask, bias;
	struct attn_inputs in;
	struct attn_config cfg;
	struct attn_stages st;
	size_t n, b, h, i, j;

	ref_rng_seed(&rng, 1000);
	q = matrix_random(&rng, B * T, H, -1, 1);
	k = matrix_random(&rng, B * S, H, -1, 1);
	v = matrix_random(&rng, B * S, H, -1, 1);
	ck_assert_int_eq(attn_matrix_alloc(&mask, blocks * T, S, NULL),
	    ATTN_OK);
	ck_assert_int_eq(attn_matrix_alloc(&bias, blocks * T, S, NULL),
	    ATTN_OK);
	for (n = 0; n < blocks; n++)
		for (i = 0; i < T; i++)
			for (j = 0; j < S; j++) {
				*attn_at(&mask, n * T + i, j) =
				    j != (n + i) % S;
				*attn_at(&bias, n * T + i, j) =
				    (double)(10 * n + 3 * i + j);
			}
	memset(&in, 0, sizeof in);
	in.batches = B;
	in.q = q;
	in.k = k;
	in.v = v;
	in.mask = mask;
	in.mask_blocks = blocks;
	in.bias = bias;
	in.bias_blocks = blocks;
	attn_config_init(&cfg);
	cfg.heads = H;
	cfg.scale_mode = ATTN_SCALE_VALUE;
	cfg.scale = 0.0;
	run_ok(kernel, &cfg, &in, stages, &st);
	for (b = 0; b < B; b++)
		for (h = 0; h < H; h++) {
			n = blocks == 1 ? 0 : blocks == B ? b : b * H + h;
			for (i = 0; i < T; i++)
				for (j = 0; j < S; j++) {
					int keep = j != (n + i) % S;

					ck_assert_double_eq(block_at(&st,
					    ATTN_STAGE_MASK, b, h, i, j),
					    keep);
					ck_assert_double_eq(block_at(&st,
					    ATTN_STAGE_SCALED, b, h, i, j),
					    keep ? (double)(10 * n + 3 * i +
					    j) : -INFINITY);
				}
		}
	attn_stages_free(&st);
	free3(&q, &k, &v);
	attn_matrix_free(&mask);
	attn_matrix_free(&bias);
}
END_TEST

/* ------------------------------------------------------------- shape errors */

/* Shapes attn_run refuses, with its messages word for word. */
static const struct shape_case {
	size_t B, H, G;
	size_t q[2], k[2], v[2];	/* rows, cols */
	size_t mask[3], bias[3];	/* rows, cols, blocks; 0 rows: none */
	enum attn_status status;
	const char *msg;
} shape_cases[] = {
	{ 1, 2, 0, { 2, 5 }, { 4, 5 }, { 4, 4 }, { 0 }, { 0 }, ATTN_ERR_DATA,
	    "Q is 2x5: 2 heads cannot split its columns equally" },
	{ 1, 4, 3, { 2, 8 }, { 4, 6 }, { 4, 6 }, { 0 }, { 0 },
	    ATTN_ERR_USAGE, "4 heads and 3 KV heads: the heads must be a "
	    "multiple of the KV heads, and neither may be 0" },
	{ 2, 2, 4, { 4, 4 }, { 8, 8 }, { 8, 8 }, { 0 }, { 0 },
	    ATTN_ERR_USAGE, "2 heads and 4 KV heads: the heads must be a "
	    "multiple of the KV heads, and neither may be 0" },
	{ 1, 4, 2, { 2, 8 }, { 4, 5 }, { 4, 4 }, { 0 }, { 0 }, ATTN_ERR_DATA,
	    "K is 4x5 and V is 4x4: 2 KV heads cannot split their columns "
	    "equally; K looks transposed: it should be S x G*d_k = 5x4" },
	{ 1, 4, 2, { 2, 8 }, { 6, 5 }, { 6, 4 }, { 0 }, { 0 }, ATTN_ERR_DATA,
	    "K is 6x5 and V is 6x4: 2 KV heads cannot split their columns "
	    "equally" },
	{ 1, 4, 2, { 2, 8 }, { 4, 4 }, { 4, 3 }, { 0 }, { 0 }, ATTN_ERR_DATA,
	    "K is 4x4 and V is 4x3: 2 KV heads cannot split their columns "
	    "equally" },
	{ 1, 2, 1, { 2, 6 }, { 4, 4 }, { 4, 2 }, { 0 }, { 0 }, ATTN_ERR_DATA,
	    "shape mismatch: Q is 2x6 but K is 4x4: with 2 heads and 1 KV "
	    "head, d_k is 6/2 = 3 for Q but 4/1 = 4 for K" },
	{ 1, 1, 0, { 2, 3 }, { 4, 3 }, { 4, 2 }, { 2, 3, 1 }, { 0 },
	    ATTN_ERR_DATA, "shape mismatch: mask is 1 block of 2x3 but scores "
	    "are 2x4 (T x S): a mask needs blocks of T x S (or 1 x S, T x 1, "
	    "1 x 1), one in all, one per batch (1) or one per batch and head "
	    "(1)" },
	{ 1, 1, 0, { 2, 3 }, { 4, 3 }, { 4, 2 }, { 3, 4, 1 }, { 0 },
	    ATTN_ERR_DATA, "shape mismatch: mask is 1 block of 3x4 but scores "
	    "are 2x4 (T x S): a mask needs blocks of T x S (or 1 x S, T x 1, "
	    "1 x 1), one in all, one per batch (1) or one per batch and head "
	    "(1)" },
	{ 2, 2, 0, { 4, 4 }, { 8, 4 }, { 8, 2 }, { 6, 4, 3 }, { 0 },
	    ATTN_ERR_DATA, "shape mismatch: mask is 3 blocks of 2x4 but "
	    "scores are 2x4 (T x S): a mask needs blocks of T x S (or 1 x S, "
	    "T x 1, 1 x 1), one in all, one per batch (2) or one per batch and "
	    "head (4)" },
	{ 2, 2, 0, { 4, 4 }, { 8, 4 }, { 8, 2 }, { 2, 4, 1 }, { 4, 5, 2 },
	    ATTN_ERR_DATA, "shape mismatch: bias is 2 blocks of 2x5 but "
	    "scores are 2x4 (T x S): a bias needs blocks of T x S (or 1 x S, "
	    "T x 1, 1 x 1), one in all, one per batch (2) or one per batch and "
	    "head (4)" },
	/* K given as d_k x S, V as d_v x S: the message says so, but not
	 * for a square K, which its transpose looks like */
	{ 1, 1, 0, { 2, 3 }, { 3, 4 }, { 4, 2 }, { 0 }, { 0 }, ATTN_ERR_DATA,
	    "shape mismatch: Q is 2x3 but K is 3x4: Q and K need the same "
	    "number of columns (d_k); K looks transposed: it should be "
	    "S x d_k = 4x3" },
	{ 1, 1, 0, { 2, 3 }, { 3, 3 }, { 2, 3 }, { 0 }, { 0 }, ATTN_ERR_DATA,
	    "shape mismatch: K is 3x3 but V is 2x3: K and V need the same "
	    "number of rows (S); V looks transposed: it should be "
	    "S x d_v = 3x2" },
	{ 1, 1, 0, { 2, 3 }, { 4, 2 }, { 4, 2 }, { 0 }, { 0 }, ATTN_ERR_DATA,
	    "shape mismatch: Q is 2x3 but K is 4x2: Q and K need the same "
	    "number of columns (d_k)" },
	{ 1, 1, 0, { 2, 3 }, { 3, 3 }, { 4, 2 }, { 0 }, { 0 }, ATTN_ERR_DATA,
	    "shape mismatch: K is 3x3 but V is 4x2: K and V need the same "
	    "number of rows (S)" },
	{ 2, 1, 0, { 4, 3 }, { 6, 5 }, { 10, 2 }, { 0 }, { 0 }, ATTN_ERR_DATA,
	    "shape mismatch: Q is 2x2x3 but K is 2x3x5: Q and K need the "
	    "same number of columns (d_k); K looks transposed: it should be "
	    "B x S x d_k = 2x5x3" },
	{ 1, 2, 0, { 2, 4 }, { 4, 6 }, { 6, 4 }, { 0 }, { 0 }, ATTN_ERR_DATA,
	    "shape mismatch: Q is 2x4 but K is 4x6: with 2 heads and 2 KV "
	    "heads, d_k is 4/2 = 2 for Q but 6/2 = 3 for K; K looks "
	    "transposed: it should be S x H*d_k = 6x4" },
};

#define NSHAPE_CASES (int)(sizeof shape_cases / sizeof shape_cases[0])

START_TEST(bad_shapes_are_refused_with_their_rule)
{
	const struct shape_case *sc = &shape_cases[_i];
	struct attn_matrix q, k, v, mask, bias;
	struct attn_inputs in;
	struct attn_config cfg;

	memset(&mask, 0, sizeof mask);
	memset(&bias, 0, sizeof bias);
	ck_assert_int_eq(attn_matrix_alloc(&q, sc->q[0], sc->q[1], NULL),
	    ATTN_OK);
	ck_assert_int_eq(attn_matrix_alloc(&k, sc->k[0], sc->k[1], NULL),
	    ATTN_OK);
	ck_assert_int_eq(attn_matrix_alloc(&v, sc->v[0], sc->v[1], NULL),
	    ATTN_OK);
	if (sc->mask[0] != 0)
		ck_assert_int_eq(attn_matrix_alloc(&mask, sc->mask[0],
		    sc->mask[1], NULL), ATTN_OK);
	if (sc->bias[0] != 0)
		ck_assert_int_eq(attn_matrix_alloc(&bias, sc->bias[0],
		    sc->bias[1], NULL), ATTN_OK);
	memset(&in, 0, sizeof in);
	in.batches = sc->B;
	in.q = q;
	in.k = k;
	in.v = v;
	in.mask = mask;
	in.mask_blocks = sc->mask[2];
	in.bias = bias;
	in.bias_blocks = sc->bias[2];
	attn_config_init(&cfg);
	cfg.heads = sc->H;
	cfg.kv_heads = sc->G;
	expect_run_error(&cfg, &in, sc->status, sc->msg);
	free3(&q, &k, &v);
	attn_matrix_free(&mask);
	attn_matrix_free(&bias);
}
END_TEST

/* -------------------------------------------------------- random variants */

/*
 * The agreement criterion, as in check_kernel.c, with a the library's
 * double and b the reference's long double.  Non-finite b must be matched
 * exactly: -inf by -inf, nan by nan.  Otherwise, for block (b, h):
 *
 *	scores[i][j]	|a - b| <= 1e-12 * m_ij, m_ij = sum_c |Q[i][c] K[j][c]|
 *	scaled[i][j]	|a - b| <= 1e-12 * l_ij,
 *			l_ij = |scale| m_ij + |bias[i][j]| + slope_h dist_ij
 *	weights[i][j]	|a - b| <= 1e-12 * |b| + DBL_MIN
 *	mask[i][j]	a == b
 *	output[i][c]	|a - b| <= 1e-12 * sum_j |weights[i][j]| |V[j][c]|
 *	lse[i]		|a - b| <= 1e-12 * max(1, |b|, max_j l_ij)
 *
 * softcap's C tanh(x / C) has slope at most 1 and |C tanh(x / C)| <=
 * |x|, so it adds nothing to l_ij.  The inputs keep logits within a few
 * tens, so the weights keep 12 digits of their own.
 */
#define REF_RTOL 1e-12L

/* Fail, naming the case and the element, unless a matches b within tol. */
static void
expect_near(const struct vcase *c, const char *stage, size_t b, size_t h,
    size_t i, size_t j, double a, long double ref, long double tol)
{
	if (isnan(ref)) {
		if (isnan(a))
			return;
	} else if (isinf(ref)) {
		if ((long double)a == ref)
			return;
	} else if (isfinite(a) && fabsl((long double)a - ref) <= tol) {
		return;
	}
	ck_abort_msg("%s: %s[batch %zu, head %zu][%zu][%zu] is %.17g, "
	    "reference %.20Lg, |diff| %.3Lg > %.3Lg", c->what, stage, b, h, i,
	    j, a, ref, fabsl((long double)a - ref), tol);
}

/* Compare every stage of every batch and head, and the masked rows;
 * returns how many elements were compared. */
static size_t
compare_with_reference(const struct vcase *c, const struct attn_stages *st,
    const struct ref_stages *r)
{
	const size_t B = c->B, H = c->H, G = c->G, T = c->T, S = c->S;
	const long long offset = c->cfg.align == ATTN_ALIGN_BOTTOM_RIGHT ?
	    (long long)S - (long long)T : 0;
	const long double scale = c->cfg.scale_mode == ATTN_SCALE_NONE ?
	    1.0L : c->cfg.scale_mode == ATTN_SCALE_VALUE ?
	    fabsl((long double)c->cfg.scale) :
	    1.0L / sqrtl((long double)c->d_k);
	long double slopes[4];
	size_t b, h, i, j, x, n = 0;

	ck_assert_uint_eq(st->batches, B);
	ck_assert_uint_eq(st->heads, H);
	ck_assert_uint_eq(st->kv_heads, G);
	ck_assert_uint_eq(st->T, T);
	ck_assert_uint_eq(st->S, S);
	ck_assert_uint_eq(st->d_k, c->d_k);
	ck_assert_uint_eq(st->d_v, c->d_v);
	ck_assert_ldouble_eq_tol(fabsl((long double)st->scale), scale,
	    scale * DBL_EPSILON);
	ck_assert_int_eq(ref_alibi_slopes(H, slopes), 0);
	for (b = 0; b < B; b++)
		for (h = 0; h < H; h++) {
			const size_t g = h / (H / G);
			const size_t nb = c->bias_blocks == 1 ? 0 :
			    c->bias_blocks == B ? b : b * H + h;

			for (i = 0; i < T; i++) {
				const size_t row = (b * H + h) * T + i;
				long double lse_mag = 1.0L;

				for (j = 0; j < S; j++) {
					const size_t rj = row * S + j;
					long double m = 0.0L, l;

					for (x = 0; x < c->d_k; x++)
						m += fabsl((long double)
						    *attn_at(&c->q, b * T + i,
						    h * c->d_k + x) *
						    (long double)*attn_at(&c->k,
						    b * S + j, g * c->d_k + x));
					l = scale * m;
					if (c->bias.data != NULL &&
					    isfinite(*attn_at(&c->bias,
					    nb * T + i, j)))
						l += fabsl(*attn_at(&c->bias,
						    nb * T + i, j));
					if (c->cfg.alibi)
						l += slopes[h] * (long double)
						    llabs((long long)i + offset
						    - (long long)j);
					if (l > lse_mag)
						lse_mag = l;
					expect_near(c, "scores", b, h, i, j,
					    block_at(st, ATTN_STAGE_SCORES, b,
					    h, i, j), r->scores[rj],
					    REF_RTOL * m);
					expect_near(c, "scaled", b, h, i, j,
					    block_at(st, ATTN_STAGE_SCALED, b,
					    h, i, j), r->scaled[rj],
					    REF_RTOL * l);
					expect_near(c, "weights", b, h, i, j,
					    block_at(st, ATTN_STAGE_WEIGHTS, b,
					    h, i, j), r->weights[rj],
					    REF_RTOL * fabsl(r->weights[rj]) +
					    DBL_MIN);
					expect_near(c, "mask", b, h, i, j,
					    block_at(st, ATTN_STAGE_MASK, b, h,
					    i, j), r->mask[rj], 0.0L);
					n += 4;
				}
				for (x = 0; x < c->d_v; x++) {
					long double m = 0.0L;

					for (j = 0; j < S; j++)
						m += fabsl(r->weights[row * S +
						    j]) * fabsl((long double)
						    *attn_at(&c->v, b * S + j,
						    g * c->d_v + x));
					expect_near(c, "output", b, h, i, x,
					    block_at(st, ATTN_STAGE_OUTPUT, b,
					    h, i, x), r->output[(b * T + i) *
					    H * c->d_v + h * c->d_v + x],
					    REF_RTOL * m);
					n++;
				}
				if (fabsl(r->lse[row]) > lse_mag &&
				    isfinite(r->lse[row]))
					lse_mag = fabsl(r->lse[row]);
				expect_near(c, "lse", b, h, i, 0,
				    block_at(st, ATTN_STAGE_LSE, b, h, i, 0),
				    r->lse[row], REF_RTOL * lse_mag);
				n++;
			}
		}
	ck_assert_msg(st->nmasked == r->nmasked, "%s: %zu masked rows, "
	    "reference %zu", c->what, st->nmasked, r->nmasked);
	for (i = 0; i < r->nmasked; i++)
		ck_assert_msg(st->masked[i] == r->masked[i], "%s: masked row "
		    "%zu is %zu, reference %zu", c->what, i, st->masked[i],
		    r->masked[i]);
	return n;
}

/* Whether some row of the reference's mask stage keeps no key. */
static int
any_row_all_masked(const struct ref_stages *r)
{
	size_t row, j;

	for (row = 0; row < r->B * r->H * r->T; row++) {
		for (j = 0; j < r->S && r->mask[row * r->S + j] == 0.0L; j++)
			;
		if (j == r->S)
			return 1;
	}
	return 0;
}

/* Cases per loop iteration: a fork per case would cost more than the
 * cases themselves under AddressSanitizer. */
#define VARIANT_BATCH 20
#define VARIANT_LOOPS 20	/* 400 cases */
#define VARIANT_SEED 0x7A41A000u

KERNEL_TEST(every_variant_matches_the_long_double_reference, ATTN_STAGES_ALL)
{
	int n;

	for (n = 0; n < VARIANT_BATCH; n++) {
		struct vcase c;
		struct attn_inputs in;
		struct attn_stages st;
		struct ref_stages r;
		size_t count;

		vcase_make(&c, VARIANT_SEED + (uint64_t)(_i * VARIANT_BATCH +
		    n));
		vcase_inputs(&c, &in);
		run_ok(kernel, &c.cfg, &in, stages, &st);
		vcase_reference(&c, &r);
		count = compare_with_reference(&c, &st, &r);
		ck_assert_uint_eq(count, c.B * c.H * c.T *
		    (4 * c.S + c.d_v + 1));
		ref_stages_free(&r);
		attn_stages_free(&st);
		vcase_free(&c);
	}
}
END_TEST

/* The random cases reach every variant and every corner the suite names;
 * a change to vcase_make that loses one fails here. */
START_TEST(random_variants_cover_every_combination)
{
	enum {
		TEQS, TNES, BR, TL, CAUSAL, WINDOW, ALIBI, SOFTCAP, BIAS,
		BIAS_INF, MASK, INVERT, GQA, KV0, H4, B3, BLK1, BLKB, BLKBH,
		MASKED_ZERO, MASKED_NAN, MASKED_UNIFORM, SINKS, SINKS_MASKED,
		NFEATURES
	};
	static const char *const names[NFEATURES] = {
		"T == S", "T != S", "bottom-right", "top-left", "causal",
		"window", "alibi", "softcap", "bias", "-inf bias", "mask",
		"mask_invert", "G < H", "kv_heads 0", "H = 4", "B = 3",
		"1 block", "B blocks (B > 1)", "B*H blocks (H > 1)",
		"masked rows, zero", "masked rows, nan", "masked rows, uniform",
		"sinks", "sinks and a row whose keys are all masked",
	};
	size_t count[NFEATURES] = { 0 };
	size_t n, f;

	for (n = 0; n < VARIANT_LOOPS * VARIANT_BATCH; n++) {
		struct vcase c;
		struct ref_stages r;
		size_t bl[2];

		vcase_make(&c, VARIANT_SEED + n);
		vcase_reference(&c, &r);
		bl[0] = c.mask.data != NULL ? c.mask_blocks : 0;
		bl[1] = c.bias.data != NULL ? c.bias_blocks : 0;
		count[c.T == c.S ? TEQS : TNES]++;
		count[c.cfg.align == ATTN_ALIGN_BOTTOM_RIGHT ? BR : TL]++;
		count[CAUSAL] += c.cfg.causal != 0;
		count[WINDOW] += c.cfg.window != 0;
		count[ALIBI] += c.cfg.alibi != 0;
		count[SOFTCAP] += c.cfg.softcap > 0;
		count[BIAS] += c.bias.data != NULL;
		count[BIAS_INF] += c.bias_inf != 0;
		count[MASK] += c.mask.data != NULL;
		count[INVERT] += c.mask.data != NULL && c.cfg.mask_invert;
		count[GQA] += c.G < c.H;
		count[KV0] += c.cfg.kv_heads == 0;
		count[H4] += c.H == 4;
		count[B3] += c.B == 3;
		for (f = 0; f < 2; f++) {
			count[BLK1] += bl[f] == 1;
			count[BLKB] += c.B > 1 && bl[f] == c.B;
			count[BLKBH] += c.H > 1 && bl[f] == c.B * c.H;
		}
		if (r.nmasked > 0)
			count[MASKED_ZERO + (size_t)c.cfg.masked_rows]++;
		count[SINKS] += c.sinks.data != NULL;
		count[SINKS_MASKED] += c.sinks.data != NULL &&
		    any_row_all_masked(&r);
		ref_stages_free(&r);
		vcase_free(&c);
	}
	for (f = 0; f < NFEATURES; f++)
		ck_assert_msg(count[f] >= 20, "only %zu random cases with %s",
		    count[f], names[f]);
}
END_TEST

Suite *
variants_suite(void)
{
	Suite *s = suite_create("variants");
	TCase *tc = tcase_create("masking");

	tcase_add_kernel_test(tc, position_rules_keep_the_expected_keys, 0,
	    NMASK_CASES);
	tcase_add_kernel_test(tc, causal_row_zero_output_is_value_row_zero, 0,
	    4);
	tcase_add_kernel_test(tc, a_fully_masked_row_follows_the_policy, 0, 3);
	tcase_add_kernel_test(tc, masked_rows_are_rows_of_the_per_head_stacks,
	    0, 1);
	tcase_add_kernel_test(tc,
	    mask_invert_reads_the_mask_the_other_way_round, 0, 1);
	tcase_add_kernel_test(tc, a_minus_inf_bias_masks, 0, 1);
	suite_add_tcase(s, tc);

	tc = tcase_create("alibi and softcap");
	tcase_add_loop_test(tc, alibi_slopes_follow_get_slopes, 0,
	    NALIBI_CASES);
	tcase_add_test(tc,
	    alibi_slopes_agree_with_the_reference_up_to_64_heads);
	tcase_add_kernel_test(tc, alibi_subtracts_slope_times_distance, 0, 2);
	tcase_add_kernel_test(tc, alibi_slopes_given_replace_press, 0, 2);
	tcase_add_kernel_test(tc,
	    softcap_is_applied_after_scale_and_before_bias, 0, 1);
	tcase_add_kernel_test(tc, softcap_bounds_the_logits, 0, 1);
	suite_add_tcase(s, tc);

	tc = tcase_create("heads and batches");
	tcase_add_test(tc, kv_head_groups_consecutive_query_heads);
	tcase_add_kernel_test(tc,
	    each_head_equals_a_single_head_run_on_its_slices, 0, 6);
	tcase_add_kernel_test(tc, each_batch_equals_a_separate_run, 0, 1);
	tcase_add_kernel_test(tc,
	    mask_and_bias_blocks_are_chosen_by_batch_and_head, 0, 3);
	tcase_add_loop_test(tc, bad_shapes_are_refused_with_their_rule, 0,
	    NSHAPE_CASES);
	suite_add_tcase(s, tc);

	tc = tcase_create("reference");
	tcase_add_kernel_test(tc,
	    every_variant_matches_the_long_double_reference,
	    0, VARIANT_LOOPS);
	tcase_add_test(tc, random_variants_cover_every_combination);
	suite_add_tcase(s, tc);
	return s;
}
