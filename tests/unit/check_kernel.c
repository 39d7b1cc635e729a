/*
 * check_kernel.c - the kernels and the matrices they work on: the worked
 * example, shape errors word for word, the scale modes, overflow, stable
 * softmax, views, allocation overflow, and a comparison of every stage
 * with the long double reference in tests/ref on hundreds of seeded
 * random problems.  Tests of computed numbers are KERNEL_TESTs, run on
 * every kernel (testutil.h).
 *
 * Dims: T query rows, S keys, d_k columns of Q and K, d_v columns of V.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "ref.h"
#include "suites.h"
#include "testutil.h"

/* ---------------------------------------------------------------- helpers */

/* A packed copy of m's elements (m may be a view); the caller frees it. */
static double *
packed_copy(const struct attn_matrix *m)
{
	double *p = malloc((m->rows * m->cols + 1) * sizeof *p);
	size_t i;

	ck_assert_ptr_nonnull(p);
	for (i = 0; i < m->rows; i++)
		memcpy(p + i * m->cols, attn_at(m, i, 0),
		    m->cols * sizeof *p);
	return p;
}

/* ----------------------------------------------------------- worked example */

KERNEL_TEST(worked_example_gives_the_textbook_numbers, ATTN_STAGES_ALL)
{
	static const double qv[] = { 1, 0 };
	static const double kv[] = { 1, 0, 0, 1 };
	static const double vv[] = { 10, 0, 0, 10 };
	struct attn_matrix q = matrix_from(1, 2, qv);
	struct attn_matrix k = matrix_from(2, 2, kv);
	struct attn_matrix v = matrix_from(2, 2, vv);
	struct attn_stages st;
	/* logits 1/sqrt(2) and 0, so w1 = 1 / (1 + e^(-1/sqrt 2)) */
	const double l = 1.0 / sqrt(2.0);
	const double w1 = 1.0 / (1.0 + exp(-l)), w2 = 1.0 / (1.0 + exp(l));

	compute_ok(kernel, stages, ATTN_SCALE_DEFAULT, 0.0, &q, &k, &v, &st);
	ck_assert_uint_eq(st.T, 1);
	ck_assert_uint_eq(st.S, 2);
	ck_assert_uint_eq(st.d_k, 2);
	ck_assert_uint_eq(st.d_v, 2);
	ck_assert_double_eq_tol(st.scale, l, 1e-16);
	ck_assert_double_eq(stage_at(&st, ATTN_STAGE_SCORES, 0, 0), 1.0);
	ck_assert_double_eq(stage_at(&st, ATTN_STAGE_SCORES, 0, 1), 0.0);
	ck_assert_double_eq_tol(stage_at(&st, ATTN_STAGE_SCALED, 0, 0), l,
	    1e-16);
	ck_assert_double_eq(stage_at(&st, ATTN_STAGE_SCALED, 0, 1), 0.0);
	ck_assert_double_eq_tol(stage_at(&st, ATTN_STAGE_WEIGHTS, 0, 0), w1,
	    1e-15);
	ck_assert_double_eq_tol(stage_at(&st, ATTN_STAGE_WEIGHTS, 0, 1), w2,
	    1e-15);
	/* the numbers the man page and the textbook print */
	ck_assert_double_eq_tol(stage_at(&st, ATTN_STAGE_WEIGHTS, 0, 0),
	    0.6697615493266569, 1e-15);
	ck_assert_double_eq_tol(stage_at(&st, ATTN_STAGE_WEIGHTS, 0, 1),
	    0.3302384506733431, 1e-15);
	ck_assert_double_eq_tol(stage_at(&st, ATTN_STAGE_OUTPUT, 0, 0),
	    10 * w1, 1e-14);
	ck_assert_double_eq_tol(stage_at(&st, ATTN_STAGE_OUTPUT, 0, 1),
	    10 * w2, 1e-14);
	ck_assert_double_eq_tol(stage_at(&st, ATTN_STAGE_LSE, 0, 0),
	    log(exp(l) + 1.0), 1e-15);
	ck_assert_double_eq_tol(stage_at(&st, ATTN_STAGE_LSE, 0, 0),
	    1.1079403076572498, 1e-15);
	attn_stages_free(&st);
	attn_matrix_free(&q);
	attn_matrix_free(&k);
	attn_matrix_free(&v);
}
END_TEST

KERNEL_TEST(stages_have_their_table_shapes, ATTN_STAGES_ALL)
{
	struct ref_rng rng;
	struct attn_matrix q, k, v;
	struct attn_stages st;

	/* cross-attention: T != S and d_v != d_k */
	ref_rng_seed(&rng, 5);
	q = matrix_random(&rng, 3, 2, -1, 1);
	k = matrix_random(&rng, 5, 2, -1, 1);
	v = matrix_random(&rng, 5, 4, -1, 1);
	compute_ok(kernel, stages, ATTN_SCALE_DEFAULT, 0.0, &q, &k, &v, &st);
	ck_assert_uint_eq(st.T, 3);
	ck_assert_uint_eq(st.S, 5);
	ck_assert_uint_eq(st.d_k, 2);
	ck_assert_uint_eq(st.d_v, 4);
	ck_assert_uint_eq(st.stage[ATTN_STAGE_SCORES].rows, 3);
	ck_assert_uint_eq(st.stage[ATTN_STAGE_SCORES].cols, 5);
	ck_assert_uint_eq(st.stage[ATTN_STAGE_SCALED].rows, 3);
	ck_assert_uint_eq(st.stage[ATTN_STAGE_SCALED].cols, 5);
	ck_assert_uint_eq(st.stage[ATTN_STAGE_WEIGHTS].rows, 3);
	ck_assert_uint_eq(st.stage[ATTN_STAGE_WEIGHTS].cols, 5);
	ck_assert_uint_eq(st.stage[ATTN_STAGE_OUTPUT].rows, 3);
	ck_assert_uint_eq(st.stage[ATTN_STAGE_OUTPUT].cols, 4);
	ck_assert_uint_eq(st.stage[ATTN_STAGE_LSE].rows, 3);
	ck_assert_uint_eq(st.stage[ATTN_STAGE_LSE].cols, 1);
	ck_assert_uint_eq(st.stage[ATTN_STAGE_ROW_MAX].rows, 3);
	ck_assert_uint_eq(st.stage[ATTN_STAGE_ROW_MAX].cols, 1);
	ck_assert_uint_eq(st.stage[ATTN_STAGE_ROW_SUM].rows, 3);
	ck_assert_uint_eq(st.stage[ATTN_STAGE_ROW_SUM].cols, 1);
	attn_stages_free(&st);
	attn_matrix_free(&q);
	attn_matrix_free(&k);
	attn_matrix_free(&v);
}
END_TEST

/* ------------------------------------------------------------- shape errors */

/* Expect attn_compute to fail with a data error and exactly msg, leaving
 * *out zeroed. */
static void
expect_data_error(const struct attn_matrix *q, const struct attn_matrix *k,
    const struct attn_matrix *v, const char *msg)
{
	struct attn_config cfg;
	struct attn_stages st;
	struct attn_error err;
	size_t s;

	attn_config_init(&cfg);
	memset(&err, 0, sizeof err);
	memset(&st, 0xA5, sizeof st);
	ck_assert_int_eq(attn_compute(&cfg, q, k, v, &st, &err),
	    ATTN_ERR_DATA);
	ck_assert_int_eq(err.status, ATTN_ERR_DATA);
	ck_assert_ptr_null(err.file);
	ck_assert_uint_eq(err.line, 0);
	ck_assert_uint_eq(err.col, 0);
	if (msg != NULL)
		ck_assert_str_eq(err.msg, msg);
	else
		ck_assert_uint_gt(strlen(err.msg), 0);
	for (s = 0; s < ATTN_STAGE_COUNT; s++)
		ck_assert_ptr_null(st.stage[s].data);
	attn_stages_free(&st);
}

START_TEST(q_and_k_columns_must_agree)
{
	struct attn_matrix q, k, v;

	ck_assert_int_eq(attn_matrix_alloc(&q, 2, 3, NULL), ATTN_OK);
	ck_assert_int_eq(attn_matrix_alloc(&k, 4, 2, NULL), ATTN_OK);
	ck_assert_int_eq(attn_matrix_alloc(&v, 4, 2, NULL), ATTN_OK);
	expect_data_error(&q, &k, &v, "shape mismatch: Q is 2x3 but K is 4x2: "
	    "Q and K need the same number of columns (d_k)");
	attn_matrix_free(&q);
	attn_matrix_free(&k);
	attn_matrix_free(&v);
}
END_TEST

START_TEST(k_and_v_rows_must_agree)
{
	struct attn_matrix q, k, v;

	ck_assert_int_eq(attn_matrix_alloc(&q, 2, 3, NULL), ATTN_OK);
	ck_assert_int_eq(attn_matrix_alloc(&k, 4, 3, NULL), ATTN_OK);
	ck_assert_int_eq(attn_matrix_alloc(&v, 5, 2, NULL), ATTN_OK);
	expect_data_error(&q, &k, &v, "shape mismatch: K is 4x3 but V is 5x2: "
	    "K and V need the same number of rows (S)");
	attn_matrix_free(&q);
	attn_matrix_free(&k);
	attn_matrix_free(&v);
}
END_TEST

START_TEST(empty_matrices_are_data_errors)
{
	struct attn_matrix m, q, k, v, none;

	/* _i picks which of Q (no rows, no columns), K (no rows) and V (no
	 * columns) is empty; the others agree with it */
	ck_assert_int_eq(attn_matrix_alloc(&m, 4, 4, NULL), ATTN_OK);
	q = attn_matrix_view(&m, 0, 2, 0, 3);
	k = attn_matrix_view(&m, 0, 4, 0, 3);
	v = attn_matrix_view(&m, 0, 4, 0, 2);
	switch (_i) {
	case 0:
		none = attn_matrix_view(&m, 0, 0, 0, 3);
		expect_data_error(&none, &k, &v, NULL);
		break;
	case 1:
		none = attn_matrix_view(&m, 0, 2, 0, 0);
		k = attn_matrix_view(&m, 0, 4, 0, 0);
		expect_data_error(&none, &k, &v, NULL);
		break;
	case 2:
		none = attn_matrix_view(&m, 0, 0, 0, 3);
		v = attn_matrix_view(&m, 0, 0, 0, 2);
		expect_data_error(&q, &none, &v, NULL);
		break;
	default:
		none = attn_matrix_view(&m, 0, 4, 0, 0);
		expect_data_error(&q, &k, &none, NULL);
		break;
	}
	attn_matrix_free(&m);
}
END_TEST

/* ---------------------------------------------------------------- scale */

/* d_k values for the default scale, including non-squares. */
static const size_t scale_dims[] = { 1, 2, 3, 4, 5, 7, 8, 16, 40, 64, 100,
    128, 1000 };

#define NSCALE_DIMS (int)(sizeof scale_dims / sizeof scale_dims[0])

KERNEL_TEST(default_scale_is_one_over_sqrt_d_k, STAGE(SCORES) | STAGE(SCALED))
{
	const size_t d_k = scale_dims[_i];
	struct ref_rng rng;
	struct attn_matrix q, k, v;
	struct attn_stages st;
	long double exact = 1.0L / sqrtl((long double)d_k);

	ref_rng_seed(&rng, d_k);
	q = matrix_random(&rng, 2, d_k, -1, 1);
	k = matrix_random(&rng, 3, d_k, -1, 1);
	v = matrix_random(&rng, 3, 2, -1, 1);
	compute_ok(kernel, stages, ATTN_SCALE_DEFAULT, 123.0, &q, &k, &v, &st);
	/* within one rounding of the exact 1 / sqrt(d_k) */
	ck_assert_ldouble_eq_tol((long double)st.scale, exact,
	    exact * DBL_EPSILON);
	ck_assert_double_eq(stage_at(&st, ATTN_STAGE_SCALED, 1, 2),
	    stage_at(&st, ATTN_STAGE_SCORES, 1, 2) * st.scale);
	attn_stages_free(&st);
	attn_matrix_free(&q);
	attn_matrix_free(&k);
	attn_matrix_free(&v);
}
END_TEST

KERNEL_TEST(scale_modes_multiply_the_scores, STAGE(SCORES) | STAGE(SCALED))
{
	/* _i: none (1), then the values below */
	static const double values[] = { 1.0, 0.25, 1.7, -3.0, 1e-3 };
	const enum attn_scale_mode mode = _i == 0 ? ATTN_SCALE_NONE :
	    ATTN_SCALE_VALUE;
	const double scale = values[_i];
	struct ref_rng rng;
	struct attn_matrix q, k, v;
	struct attn_stages st;
	size_t i, j;

	ref_rng_seed(&rng, 77);
	q = matrix_random(&rng, 4, 9, -2, 2);
	k = matrix_random(&rng, 6, 9, -2, 2);
	v = matrix_random(&rng, 6, 3, -2, 2);
	compute_ok(kernel, stages, mode, _i == 0 ? 42.0 : scale, &q, &k, &v,
	    &st);
	ck_assert_double_eq(st.scale, scale);
	/* scaled is defined as scores * scale: one correctly rounded
	 * product, so equality is exact */
	for (i = 0; i < 4; i++)
		for (j = 0; j < 6; j++)
			ck_assert_double_eq(
			    stage_at(&st, ATTN_STAGE_SCALED, i, j),
			    stage_at(&st, ATTN_STAGE_SCORES, i, j) * scale);
	attn_stages_free(&st);
	attn_matrix_free(&q);
	attn_matrix_free(&k);
	attn_matrix_free(&v);
}
END_TEST

KERNEL_TEST(zero_scale_gives_uniform_weights, ATTN_STAGES_ALL)
{
	const size_t S = 7;
	struct ref_rng rng;
	struct attn_matrix q, k, v;
	struct attn_stages st;
	size_t i, j, c;

	ref_rng_seed(&rng, 8);
	q = matrix_random(&rng, 3, 5, -10, 10);
	k = matrix_random(&rng, S, 5, -10, 10);
	v = matrix_random(&rng, S, 4, -10, 10);
	compute_ok(kernel, stages, ATTN_SCALE_VALUE, 0.0, &q, &k, &v, &st);
	ck_assert_double_eq(st.scale, 0.0);
	for (i = 0; i < 3; i++) {
		for (j = 0; j < S; j++) {
			ck_assert_double_eq(
			    stage_at(&st, ATTN_STAGE_SCALED, i, j), 0.0);
			ck_assert_double_eq_tol(
			    stage_at(&st, ATTN_STAGE_WEIGHTS, i, j),
			    1.0 / (double)S, 1e-16);
		}
		/* the output is the mean of the value rows */
		for (c = 0; c < 4; c++) {
			double mean = 0.0;

			for (j = 0; j < S; j++)
				mean += *attn_at(&v, j, c);
			mean /= (double)S;
			ck_assert_double_eq_tol(
			    stage_at(&st, ATTN_STAGE_OUTPUT, i, c), mean,
			    1e-14);
		}
		ck_assert_double_eq_tol(stage_at(&st, ATTN_STAGE_LSE, i, 0),
		    log((double)S), 1e-15);
	}
	attn_stages_free(&st);
	attn_matrix_free(&q);
	attn_matrix_free(&k);
	attn_matrix_free(&v);
}
END_TEST

/* --------------------------------------------------- overflow and stability */

KERNEL_TEST(overflowing_scores_are_a_data_error, STAGE(OUTPUT))
{
	/* _i: a product overflows; a sum of finite products overflows;
	 * a finite score times the scale overflows */
	static const double big[] = { 1e200 }, one[] = { 1e200 };
	static const double q2[] = { 1e308, 1e308 }, k2[] = { 1, 1 };
	static const double q3[] = { 1e300 }, k3[] = { 1e8 };
	static const double vv[] = { 1.0, 2.0 };
	struct attn_matrix q, k, v;
	struct attn_inputs in;
	struct attn_config cfg;
	struct attn_stages st;
	struct attn_error err;

	attn_config_init(&cfg);
	if (_i == 0) {
		q = matrix_from(1, 1, big);
		k = matrix_from(1, 1, one);
	} else if (_i == 1) {
		q = matrix_from(1, 2, q2);
		k = matrix_from(1, 2, k2);
	} else {
		q = matrix_from(1, 1, q3);
		k = matrix_from(1, 1, k3);
		cfg.scale_mode = ATTN_SCALE_VALUE;
		cfg.scale = 1e10;
	}
	v = matrix_from(1, 2, vv);
	memset(&in, 0, sizeof in);
	in.batches = 1;
	in.q = q;
	in.k = k;
	in.v = v;
	memset(&err, 0, sizeof err);
	ck_assert_int_eq(run_kernel(kernel, &cfg, &in, stages, &st, &err),
	    ATTN_ERR_DATA);
	ck_assert_int_eq(err.status, ATTN_ERR_DATA);
	ck_assert_msg(strstr(err.msg, "overflows") != NULL, "message: %s",
	    err.msg);
	ck_assert_msg(strstr(err.msg, "query 1 and key 1") != NULL,
	    "message: %s", err.msg);
	if (_i == 2)
		ck_assert_msg(strstr(err.msg, "scale 10000000000") != NULL,
		    "message: %s", err.msg);
	ck_assert_ptr_null(st.stage[ATTN_STAGE_OUTPUT].data);
	ck_assert_ptr_null(st.stage[ATTN_STAGE_LSE].data);
	attn_matrix_free(&q);
	attn_matrix_free(&k);
	attn_matrix_free(&v);
}
END_TEST

/*
 * A kept logit that the bias takes beyond the doubles, either way, is a
 * data error naming the first in the reference kernel's order, on every
 * kernel: here in head 2 of 2, over several tasks and key blocks of the
 * streaming kernel (T = 200, S = 300).  Queries 151 and 181 of head 2
 * have scores of q (1e308) times k (1) with every key, and the bias is
 * 1e308 at (151, 251) and (181, 11); with the mask removing those two,
 * or with a bias too small to overflow, it computes.
 */
static const struct {
	double q, bias;		/* of the two queries, at the two keys */
	int masked, alibi;
	const char *msg;	/* NULL: computes */
} bias_overflows[] = {
	{ 1e308, 1e308, 0, 0, "logit of query 151 and key 251 (head 2) "
	    "overflows a double when the bias 1e+308 is added to its scaled "
	    "score" },
	{ -1e308, -1e308, 0, 0, "logit of query 151 and key 251 (head 2) "
	    "overflows a double when the bias -1e+308 is added to its scaled "
	    "score" },
	{ 1e308, 1e308, 0, 1, "logit of query 151 and key 251 (head 2) "
	    "overflows a double when the bias 1e+308 and ALiBi are added to "
	    "its scaled score" },
	{ 1e308, 1e308, 1, 0, NULL },
	{ 1e308, 7e307, 0, 0, NULL },
};

KERNEL_TEST(a_logit_the_bias_overflows_is_a_data_error, STAGE(OUTPUT))
{
	const size_t T = 200, S = 300, H = 2;
	struct attn_matrix q, k, v, bias, mask;
	struct attn_inputs in;
	struct attn_config cfg;
	struct attn_stages st;
	struct attn_error err;
	enum attn_status status;
	size_t i, j;

	ck_assert_int_eq(attn_matrix_alloc(&q, T, H, NULL), ATTN_OK);
	ck_assert_int_eq(attn_matrix_alloc(&k, S, H, NULL), ATTN_OK);
	ck_assert_int_eq(attn_matrix_alloc(&v, S, H, NULL), ATTN_OK);
	ck_assert_int_eq(attn_matrix_alloc(&bias, T, S, NULL), ATTN_OK);
	ck_assert_int_eq(attn_matrix_alloc(&mask, T, S, NULL), ATTN_OK);
	for (i = 0; i < T; i++) {
		*attn_at(&q, i, 0) = 0.5;
		*attn_at(&q, i, 1) = i == 150 || i == 180 ?
		    bias_overflows[_i].q : 0.25;
		for (j = 0; j < S; j++) {
			*attn_at(&bias, i, j) = (double)j / 100.0;
			*attn_at(&mask, i, j) = 1.0;
		}
	}
	for (j = 0; j < S; j++) {
		*attn_at(&k, j, 0) = *attn_at(&k, j, 1) = 1.0;
		*attn_at(&v, j, 0) = (double)j;
		*attn_at(&v, j, 1) = -(double)j;
	}
	*attn_at(&bias, 150, 250) = *attn_at(&bias, 180, 10) =
	    bias_overflows[_i].bias;
	*attn_at(&mask, 150, 250) = *attn_at(&mask, 180, 10) =
	    bias_overflows[_i].masked ? 0.0 : 1.0;
	memset(&in, 0, sizeof in);
	in.batches = 1;
	in.q = q;
	in.k = k;
	in.v = v;
	in.bias = bias;
	in.bias_blocks = 1;
	in.mask = mask;
	in.mask_blocks = 1;
	attn_config_init(&cfg);
	cfg.heads = H;
	cfg.scale_mode = ATTN_SCALE_NONE;
	cfg.alibi = bias_overflows[_i].alibi;
	memset(&err, 0, sizeof err);
	status = run_kernel(kernel, &cfg, &in, stages, &st, &err);
	if (bias_overflows[_i].msg == NULL) {
		ck_assert_msg(status == ATTN_OK, "%s", err.msg);
		for (i = 0; i < T; i++)
			for (j = 0; j < H; j++)
				ck_assert(isfinite(stage_at(&st,
				    ATTN_STAGE_OUTPUT, i, j)));
		attn_stages_free(&st);
	} else {
		ck_assert_int_eq(status, ATTN_ERR_DATA);
		ck_assert_str_eq(err.msg, bias_overflows[_i].msg);
		ck_assert_ptr_null(st.stage[ATTN_STAGE_OUTPUT].data);
	}
	attn_matrix_free(&q);
	attn_matrix_free(&k);
	attn_matrix_free(&v);
	attn_matrix_free(&bias);
	attn_matrix_free(&mask);
}
END_TEST

/*
 * Values near the largest double: every output is a weighted mean of
 * them, finite, though the streaming kernel's sum of exp(x - m) v before
 * its division by l is up to S times larger (here S = 300 keys of
 * 1.79e308, and a column of +-1.7e308 whose mean is small).  Each output
 * agrees with the weights times V summed in long double.
 */
KERNEL_TEST(values_near_the_largest_double_give_a_finite_output,
    STAGE(WEIGHTS) | STAGE(OUTPUT))
{
	const size_t T = 130, S = 300;
	struct ref_rng rng;
	struct attn_matrix q, k, v;
	struct attn_stages st;
	size_t i, j, c;

	ref_rng_seed(&rng, 1800 + (uint64_t)_i);
	q = matrix_random(&rng, T, 4, -1, 1);
	k = matrix_random(&rng, S, 4, -1, 1);
	ck_assert_int_eq(attn_matrix_alloc(&v, S, 3, NULL), ATTN_OK);
	for (j = 0; j < S; j++) {
		*attn_at(&v, j, 0) = 1.79e308;
		*attn_at(&v, j, 1) = j % 2 ? 1.7e308 : -1.7e308;
		*attn_at(&v, j, 2) = (double)j;
	}
	compute_ok(kernel, stages, ATTN_SCALE_DEFAULT, 0, &q, &k, &v, &st);
	for (i = 0; i < T; i++)
		for (c = 0; c < 3; c++) {
			long double want = 0;
			double got = stage_at(&st, ATTN_STAGE_OUTPUT, i, c);

			for (j = 0; j < S; j++)
				want += (long double)stage_at(&st,
				    ATTN_STAGE_WEIGHTS, i, j) *
				    *attn_at(&v, j, c);
			ck_assert_msg(isfinite(got), "output %zu,%zu is %g", i,
			    c, got);
			ck_assert_msg(fabsl((long double)got - want) <=
			    1e-13L * 1.79e308L, "output %zu,%zu is %.17g, "
			    "not %.17Lg", i, c, got, want);
		}
	attn_stages_free(&st);
	attn_matrix_free(&q);
	attn_matrix_free(&k);
	attn_matrix_free(&v);
}
END_TEST

/* An output beyond the doubles (only an infinity in V, which the readers
 * refuse, makes one) is a data error naming where, on every kernel. */
KERNEL_TEST(an_output_beyond_the_doubles_is_a_data_error, STAGE(OUTPUT))
{
	static const double qv[] = { 1, 0, 0, 1 }, kv[] = { 1, 0, 0, 1 };
	static const double vv[] = { 1, INFINITY, 2, 3 };
	struct attn_matrix q = matrix_from(2, 2, qv);
	struct attn_matrix k = matrix_from(2, 2, kv);
	struct attn_matrix v = matrix_from(2, 2, vv);
	struct attn_inputs in;
	struct attn_config cfg;
	struct attn_stages st;
	struct attn_error err;

	memset(&in, 0, sizeof in);
	in.batches = 1;
	in.q = q;
	in.k = k;
	in.v = v;
	attn_config_init(&cfg);
	memset(&err, 0, sizeof err);
	ck_assert_int_eq(run_kernel(kernel, &cfg, &in, stages, &st, &err),
	    ATTN_ERR_DATA);
	ck_assert_str_eq(err.msg, "output of query 1, column 2 overflows a "
	    "double (V's values are too large: the weighted mean of them lies "
	    "beyond the doubles)");
	attn_matrix_free(&q);
	attn_matrix_free(&k);
	attn_matrix_free(&v);
}
END_TEST

KERNEL_TEST(huge_logits_give_finite_weights_summing_to_one,
    STAGE(WEIGHTS) | STAGE(LSE) | STAGE(OUTPUT))
{
	struct ref_rng rng;
	struct attn_matrix q, k, v;
	struct attn_stages st;
	size_t i, j;

	/* logits in the thousands: exp() of them overflows unless the row
	 * maximum is subtracted first */
	ref_rng_seed(&rng, 1000 + (uint64_t)_i);
	q = matrix_random(&rng, 6, 8, _i ? -3 : 0.5, 3);
	k = matrix_random(&rng, 9, 8, _i ? -3 : 0.5, 3);
	v = matrix_random(&rng, 9, 5, -1, 1);
	compute_ok(kernel, stages, ATTN_SCALE_VALUE, 1e3, &q, &k, &v, &st);
	for (i = 0; i < 6; i++) {
		double sum = 0.0;

		for (j = 0; j < 9; j++) {
			double w = stage_at(&st, ATTN_STAGE_WEIGHTS, i, j);

			ck_assert_msg(isfinite(w) && w >= 0.0 && w <= 1.0,
			    "weight %zu,%zu is %g", i, j, w);
			sum += w;
		}
		ck_assert_double_eq_tol(sum, 1.0, 9 * DBL_EPSILON);
		ck_assert(isfinite(stage_at(&st, ATTN_STAGE_LSE, i, 0)));
		ck_assert(isfinite(stage_at(&st, ATTN_STAGE_OUTPUT, i, 0)));
	}
	attn_stages_free(&st);
	attn_matrix_free(&q);
	attn_matrix_free(&k);
	attn_matrix_free(&v);
}
END_TEST

KERNEL_TEST(stable_softmax_keeps_tiny_and_negative_logits,
    STAGE(SCALED) | STAGE(WEIGHTS) | STAGE(OUTPUT) | STAGE(LSE))
{
	/* _i 0: logits 1000 and 500; _i 1: logits -1000 and -1001, where
	 * exp() of each underflows to 0 without the shift */
	static const double qv[2][1] = { { 1.0 }, { -1.0 } };
	static const double kv[2][2] = { { 1.0, 0.5 }, { 1.0, 1.001 } };
	static const double vv[] = { 4.0, -2.0 };
	struct attn_matrix q = matrix_from(1, 1, qv[_i]);
	struct attn_matrix k = matrix_from(2, 1, kv[_i]);
	struct attn_matrix v = matrix_from(2, 1, vv);
	struct attn_stages st;
	double gap, w1, w2;

	compute_ok(kernel, stages, ATTN_SCALE_VALUE, 1e3, &q, &k, &v, &st);
	gap = stage_at(&st, ATTN_STAGE_SCALED, 0, 0) -
	    stage_at(&st, ATTN_STAGE_SCALED, 0, 1);
	w1 = 1.0 / (1.0 + exp(-gap));
	w2 = exp(-gap) / (1.0 + exp(-gap));
	ck_assert_double_eq_tol(stage_at(&st, ATTN_STAGE_WEIGHTS, 0, 0), w1,
	    1e-15);
	ck_assert_double_eq_tol(stage_at(&st, ATTN_STAGE_WEIGHTS, 0, 1), w2,
	    1e-12 * w2);
	ck_assert_double_eq_tol(stage_at(&st, ATTN_STAGE_OUTPUT, 0, 0),
	    4.0 * w1 - 2.0 * w2, 1e-14);
	ck_assert_double_eq_tol(stage_at(&st, ATTN_STAGE_LSE, 0, 0),
	    stage_at(&st, ATTN_STAGE_SCALED, 0, 0) + log1p(exp(-gap)),
	    1e-12);
	attn_stages_free(&st);
	attn_matrix_free(&q);
	attn_matrix_free(&k);
	attn_matrix_free(&v);
}
END_TEST

/* ------------------------------------------------------- matrices and views */

KERNEL_TEST(a_view_gives_the_same_stages_as_a_packed_copy, ATTN_STAGES_ALL)
{
	struct ref_rng rng;
	struct attn_matrix parent, qv, kv, vv, qp, kp, vp;
	struct attn_stages a, b;
	double *qd, *kd, *vd;
	size_t s, i, j;

	ref_rng_seed(&rng, 31337);
	parent = matrix_random(&rng, 12, 50, -2, 2);
	/* three views with stride 50 into one parent, overlapping rows */
	qv = attn_matrix_view(&parent, 1, 3, 2, 5);
	kv = attn_matrix_view(&parent, 4, 8, 7, 5);
	vv = attn_matrix_view(&parent, 0, 8, 20, 7);
	ck_assert_uint_eq(qv.stride, 50);
	qd = packed_copy(&qv);
	kd = packed_copy(&kv);
	vd = packed_copy(&vv);
	qp = matrix_from(3, 5, qd);
	kp = matrix_from(8, 5, kd);
	vp = matrix_from(8, 7, vd);
	compute_ok(kernel, stages, ATTN_SCALE_DEFAULT, 0.0, &qv, &kv, &vv, &a);
	compute_ok(kernel, stages, ATTN_SCALE_DEFAULT, 0.0, &qp, &kp, &vp, &b);
	for (s = 0; s < ATTN_STAGE_COUNT; s++) {
		ck_assert_uint_eq(a.stage[s].rows, b.stage[s].rows);
		ck_assert_uint_eq(a.stage[s].cols, b.stage[s].cols);
		for (i = 0; i < a.stage[s].rows; i++)
			for (j = 0; j < a.stage[s].cols; j++)
				ck_assert_double_eq(*attn_at(&a.stage[s], i, j),
				    *attn_at(&b.stage[s], i, j));
	}
	attn_stages_free(&a);
	attn_stages_free(&b);
	free(qd);
	free(kd);
	free(vd);
	attn_matrix_free(&qp);
	attn_matrix_free(&kp);
	attn_matrix_free(&vp);
	attn_matrix_free(&parent);
}
END_TEST

START_TEST(a_view_borrows_its_parent)
{
	struct attn_matrix m, v;

	ck_assert_int_eq(attn_matrix_alloc(&m, 5, 6, NULL), ATTN_OK);
	v = attn_matrix_view(&m, 2, 3, 1, 4);
	ck_assert_uint_eq(v.rows, 3);
	ck_assert_uint_eq(v.cols, 4);
	ck_assert_uint_eq(v.stride, 6);
	ck_assert_ptr_eq(v.data, m.data + 2 * 6 + 1);
	*attn_at(&v, 2, 3) = 7.5;
	ck_assert_double_eq(*attn_at(&m, 4, 4), 7.5);
	attn_matrix_free(&m);
}
END_TEST

START_TEST(a_new_matrix_is_packed_and_zeroed)
{
	struct attn_matrix m;
	size_t i;

	ck_assert_int_eq(attn_matrix_alloc(&m, 7, 3, NULL), ATTN_OK);
	ck_assert_uint_eq(m.rows, 7);
	ck_assert_uint_eq(m.cols, 3);
	ck_assert_uint_eq(m.stride, 3);
	ck_assert_ptr_nonnull(m.data);
	for (i = 0; i < 21; i++)
		ck_assert_double_eq(m.data[i], 0.0);
	attn_matrix_free(&m);
	ck_assert_ptr_null(m.data);
	ck_assert_uint_eq(m.rows, 0);
	/* freeing it again, now zeroed, is harmless */
	attn_matrix_free(&m);
}
END_TEST

/*
 * Zeroed stages can be freed: those never filled, and those of a run once
 * freed, since attn_stages_free leaves every byte zero (the stages, the
 * sinks, the list of rows with no key), so that freeing twice, as an
 * error path may, frees nothing twice (ASan would say).  The runs hold
 * something of each: every stage, and a row that may attend no key
 * (case 0) or sinks (case 1, where the sink keeps that row's softmax).
 */
START_TEST(zeroed_stages_can_be_freed)
{
	static const double qk[] = { 1, 0, 0, 1 }, keep[] = { 0, 0, 1, 1 },
	    sinks[] = { 0.5 };
	static const struct attn_stages zero;
	struct attn_stages st;
	struct attn_inputs in;
	struct attn_config cfg;
	size_t s;

	memset(&st, 0, sizeof st);
	attn_stages_free(&st);
	ck_assert(memcmp(&st, &zero, sizeof st) == 0);

	memset(&in, 0, sizeof in);
	in.batches = 1;
	in.q = in.k = in.v = matrix_from(2, 2, qk);
	in.mask = matrix_from(2, 2, keep);
	in.mask_blocks = 1;
	if (_i == 1)
		in.sinks = matrix_from(1, 1, sinks);
	attn_config_init(&cfg);
	run_ok(KERNEL_REFERENCE, &cfg, &in, ATTN_STAGES_ALL, &st);
	if (_i == 0) {
		ck_assert_uint_eq(st.nmasked, 1);
		ck_assert_ptr_nonnull(st.masked);
	} else {
		ck_assert_ptr_nonnull(st.sinks.data);
	}
	for (s = 0; s < ATTN_STAGE_COUNT; s++)
		if (ATTN_STAGES_ALL & ATTN_STAGE_BIT(s))
			ck_assert_ptr_nonnull(st.stage[s].data);
	attn_stages_free(&st);
	ck_assert(memcmp(&st, &zero, sizeof st) == 0);
	attn_stages_free(&st);
	attn_matrix_free(&in.q);
	attn_matrix_free(&in.mask);
	attn_matrix_free(&in.sinks);
}
END_TEST

START_TEST(matrix_alloc_overflow_returns_nomem)
{
	/* _i 0: rows * cols overflows; 1: rows * cols * 8 bytes does */
	const size_t rows = _i == 0 ? SIZE_MAX : SIZE_MAX / sizeof(double) + 1;
	const size_t cols = _i == 0 ? 2 : 1;
	struct attn_matrix m;
	struct attn_error err;

	memset(&m, 0xA5, sizeof m);
	memset(&err, 0, sizeof err);
	ck_assert_int_eq(attn_matrix_alloc(&m, rows, cols, &err),
	    ATTN_ERR_NOMEM);
	ck_assert_int_eq(err.status, ATTN_ERR_NOMEM);
	ck_assert_uint_gt(strlen(err.msg), 0);
	/* nothing allocated, nothing to free, nothing half set */
	ck_assert_ptr_null(m.data);
	ck_assert_uint_eq(m.rows, 0);
	ck_assert_uint_eq(m.cols, 0);
	attn_matrix_free(&m);
}
END_TEST

START_TEST(size_products_are_checked_for_overflow)
{
	size_t n = 12345;

	ck_assert_int_eq(attn_size_mul(SIZE_MAX, 2, &n), -1);
	ck_assert_int_eq(attn_size_mul(2, SIZE_MAX / 2 + 1, &n), -1);
	ck_assert_int_eq(attn_size_mul((size_t)1 << (sizeof(size_t) * 4),
	    (size_t)1 << (sizeof(size_t) * 4), &n), -1);
	ck_assert_int_eq(attn_size_mul(0, SIZE_MAX, &n), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(attn_size_mul(SIZE_MAX, 1, &n), 0);
	ck_assert_uint_eq(n, SIZE_MAX);
	ck_assert_int_eq(attn_size_mul(3, SIZE_MAX / 3, &n), 0);
	ck_assert_uint_eq(n, SIZE_MAX / 3 * 3);
	ck_assert_ptr_null(attn_alloc_array(SIZE_MAX / 4, 8));
}
END_TEST

/* ---------------------------------------------------------------- reference */

/*
 * The agreement criterion.  For each element, with a the library's
 * double and b the long double reference:
 *
 *	scores[i][j]	|a - b| <= 1e-12 * sum_c |Q[i][c] K[j][c]|
 *	scaled[i][j]	|a - b| <= 1e-12 * |scale| * sum_c |Q[i][c] K[j][c]|
 *	weights[i][j]	|a - b| <= 1e-12 * |b| + DBL_MIN
 *	output[i][c]	|a - b| <= 1e-12 * sum_j weights[i][j] |V[j][c]|
 *	lse[i]		|a - b| <= 1e-12 * max(1, |b|, max_j |scaled bound|)
 *
 * A dot product is only as accurate as the sum of the absolute values of
 * its terms (the |b| of a cancelling sum can be tiny), so scores, scaled
 * and output are measured against that sum, which is >= |b|.  Weights
 * are relative to themselves: a weight of 1e-30 must still have 12 good
 * digits; DBL_MIN only forgives subnormal weights, whose precision the
 * double format itself has lost.  lse is max + log(sum) with sum in
 * [1, S], so its error follows the largest logit, or 1.
 */
#define REF_RTOL 1e-12L

/* One random problem: the shape, value ranges and scale come from the
 * seed, so a failure names a replayable case. */
struct problem {
	uint64_t seed;
	size_t T, S, d_k, d_v;
	enum attn_scale_mode mode;
	double scale;
	struct attn_matrix q, k, v;
};

static void
problem_make(struct problem *p, uint64_t seed)
{
	/* value ranges that keep the logits within a few tens */
	static const double amp[] = { 1e-3, 0.3, 1.0, 3.0 };
	static const double v_amp[] = { 1e-3, 1.0, 100.0 };
	struct ref_rng rng;
	double qa, ka, va, qlo, klo, vlo;

	ref_rng_seed(&rng, seed);
	p->seed = seed;
	p->T = ref_rng_range(&rng, 1, 17);
	p->S = ref_rng_range(&rng, 1, 33);
	p->d_k = ref_rng_range(&rng, 1, 40);
	p->d_v = ref_rng_range(&rng, 1, 40);
	qa = amp[ref_rng_range(&rng, 0, 3)];
	ka = amp[ref_rng_range(&rng, 0, 3)];
	va = v_amp[ref_rng_range(&rng, 0, 2)];
	/* a quarter of the problems are all-positive, so dot products do
	 * not cancel and logits have one sign */
	qlo = ref_rng_range(&rng, 0, 3) == 0 ? 0.0 : -qa;
	klo = ref_rng_range(&rng, 0, 3) == 0 ? 0.0 : -ka;
	vlo = ref_rng_range(&rng, 0, 3) == 0 ? 0.0 : -va;
	switch (ref_rng_range(&rng, 0, 3)) {
	case 0:
		p->mode = ATTN_SCALE_NONE;
		p->scale = 0.0;
		break;
	case 1:
		p->mode = ATTN_SCALE_VALUE;
		p->scale = ref_rng_uniform(&rng, -2.0, 2.0);
		break;
	default:
		p->mode = ATTN_SCALE_DEFAULT;
		p->scale = 0.0;
		break;
	}
	p->q = matrix_random(&rng, p->T, p->d_k, qlo, qa);
	p->k = matrix_random(&rng, p->S, p->d_k, klo, ka);
	p->v = matrix_random(&rng, p->S, p->d_v, vlo, va);
}

static void
problem_free(struct problem *p)
{
	attn_matrix_free(&p->q);
	attn_matrix_free(&p->k);
	attn_matrix_free(&p->v);
}

/* Fail, naming the case, unless |a - b| <= tol. */
static void
expect_near(const struct problem *p, const char *stage, size_t i, size_t j,
    double a, long double b, long double tol)
{
	if (fabsl((long double)a - b) <= tol)
		return;
	ck_abort_msg("seed %llu (T=%zu S=%zu d_k=%zu d_v=%zu): %s[%zu][%zu] "
	    "is %.17g, reference %.20Lg, |diff| %.3Lg > %.3Lg",
	    (unsigned long long)p->seed, p->T, p->S, p->d_k, p->d_v, stage,
	    i, j, a, b, fabsl((long double)a - b), tol);
}

/* Compare every element of every stage with the reference by the
 * criterion above; returns how many elements were compared. */
static size_t
compare_with_reference(const struct problem *p, const struct attn_stages *st,
    const struct ref_stages *r)
{
	const long double scale = fabsl((long double)st->scale);
	size_t i, j, c, n = 0;

	for (i = 0; i < p->T; i++) {
		long double lse_mag = 1.0L;

		for (j = 0; j < p->S; j++) {
			long double mag = 0.0L, b;

			for (c = 0; c < p->d_k; c++)
				mag += fabsl((long double)*attn_at(&p->q, i, c)
				    * (long double)*attn_at(&p->k, j, c));
			expect_near(p, "scores", i, j,
			    stage_at(st, ATTN_STAGE_SCORES, i, j),
			    r->scores[i * p->S + j], REF_RTOL * mag);
			expect_near(p, "scaled", i, j,
			    stage_at(st, ATTN_STAGE_SCALED, i, j),
			    r->scaled[i * p->S + j], REF_RTOL * scale * mag);
			b = r->weights[i * p->S + j];
			expect_near(p, "weights", i, j,
			    stage_at(st, ATTN_STAGE_WEIGHTS, i, j), b,
			    REF_RTOL * b + DBL_MIN);
			if (scale * mag > lse_mag)
				lse_mag = scale * mag;
			n += 3;
		}
		for (c = 0; c < p->d_v; c++) {
			long double mag = 0.0L;

			for (j = 0; j < p->S; j++)
				mag += r->weights[i * p->S + j] *
				    fabsl((long double)*attn_at(&p->v, j, c));
			expect_near(p, "output", i, c,
			    stage_at(st, ATTN_STAGE_OUTPUT, i, c),
			    r->output[i * p->d_v + c], REF_RTOL * mag);
			n++;
		}
		if (fabsl(r->lse[i]) > lse_mag)
			lse_mag = fabsl(r->lse[i]);
		expect_near(p, "lse", i, 0, stage_at(st, ATTN_STAGE_LSE, i, 0),
		    r->lse[i], REF_RTOL * lse_mag);
		n++;
	}
	return n;
}

/* Problems per loop iteration: a fork per problem would cost more than
 * the problems themselves under AddressSanitizer. */
#define REF_BATCH 20

KERNEL_TEST(stages_match_the_long_double_reference, ATTN_STAGES_ALL)
{
	int b;

	for (b = 0; b < REF_BATCH; b++) {
		struct problem p;
		struct attn_stages st;
		struct ref_stages r;
		double *qd, *kd, *vd;
		size_t n;

		problem_make(&p, 0x5EED0000u + (uint64_t)(_i * REF_BATCH + b));
		compute_ok(kernel, stages, p.mode, p.scale, &p.q, &p.k, &p.v,
		    &st);
		qd = packed_copy(&p.q);
		kd = packed_copy(&p.k);
		vd = packed_copy(&p.v);
		/* the reference gets the scale the library says it used;
		 * the default itself is checked against 1/sqrtl(d_k) above */
		ck_assert_int_eq(ref_attention(qd, kd, vd, p.T, p.S, p.d_k,
		    p.d_v, (long double)st.scale, &r), 0);
		n = compare_with_reference(&p, &st, &r);
		ck_assert_uint_eq(n, p.T * (3 * p.S + p.d_v + 1));
		ref_stages_free(&r);
		free(qd);
		free(kd);
		free(vd);
		attn_stages_free(&st);
		problem_free(&p);
	}
}
END_TEST

Suite *
kernel_suite(void)
{
	Suite *s = suite_create("kernel");
	TCase *tc = tcase_create("example");

	tcase_add_kernel_test(tc, worked_example_gives_the_textbook_numbers, 0,
	    1);
	tcase_add_kernel_test(tc, stages_have_their_table_shapes, 0, 1);
	suite_add_tcase(s, tc);

	tc = tcase_create("shapes");
	tcase_add_test(tc, q_and_k_columns_must_agree);
	tcase_add_test(tc, k_and_v_rows_must_agree);
	tcase_add_loop_test(tc, empty_matrices_are_data_errors, 0, 4);
	suite_add_tcase(s, tc);

	tc = tcase_create("scale");
	tcase_add_kernel_test(tc, default_scale_is_one_over_sqrt_d_k, 0,
	    NSCALE_DIMS);
	tcase_add_kernel_test(tc, scale_modes_multiply_the_scores, 0, 5);
	tcase_add_kernel_test(tc, zero_scale_gives_uniform_weights, 0, 1);
	suite_add_tcase(s, tc);

	tc = tcase_create("stability");
	tcase_add_kernel_test(tc, overflowing_scores_are_a_data_error, 0, 3);
	tcase_add_kernel_test(tc, a_logit_the_bias_overflows_is_a_data_error,
	    0, (int)(sizeof bias_overflows / sizeof bias_overflows[0]));
	tcase_add_kernel_test(tc,
	    values_near_the_largest_double_give_a_finite_output, 0, 2);
	tcase_add_kernel_test(tc, an_output_beyond_the_doubles_is_a_data_error,
	    0, 1);
	tcase_add_kernel_test(tc,
	    huge_logits_give_finite_weights_summing_to_one,
	    0, 2);
	tcase_add_kernel_test(tc, stable_softmax_keeps_tiny_and_negative_logits,
	    0, 2);
	suite_add_tcase(s, tc);

	tc = tcase_create("matrices");
	tcase_add_kernel_test(tc, a_view_gives_the_same_stages_as_a_packed_copy,
	    0, 1);
	tcase_add_test(tc, a_view_borrows_its_parent);
	tcase_add_test(tc, a_new_matrix_is_packed_and_zeroed);
	tcase_add_loop_test(tc, zeroed_stages_can_be_freed, 0, 2);
	tcase_add_loop_test(tc, matrix_alloc_overflow_returns_nomem, 0, 2);
	tcase_add_test(tc, size_products_are_checked_for_overflow);
	suite_add_tcase(s, tc);

	tc = tcase_create("reference");
	/* 20 x REF_BATCH = 400 problems */
	tcase_add_kernel_test(tc, stages_match_the_long_double_reference, 0,
	    20);
	suite_add_tcase(s, tc);
	return s;
}
