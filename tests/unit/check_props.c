/*
 * check_props.c - properties of attention that hold for every input,
 * checked on seeded random matrices with every kernel (KERNEL_TEST in
 * testutil.h): rows of weights sum to 1, softmax ignores a constant added
 * to a row of logits, keys and values can be permuted together, the
 * output is linear in V, one key takes all the weight, and query rows do
 * not interact.
 *
 * Where a property is exact in floating point too (the same operations
 * on the same numbers), the test demands equality; elsewhere it allows
 * 1e-12 relative to the magnitude involved.
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

#define PROP_RTOL 1e-12

/* Each loop iteration checks a property on PROP_BATCH seeds (forking
 * once per seed would cost more than the checks under AddressSanitizer);
 * seeds are fixed, so a failure replays. */
#define PROP_BATCH 10

/* A random problem of random shape (T up to 17, S up to 33, d_k and d_v
 * up to 40), values uniform in [-amp, amp). */
struct problem {
	size_t T, S, d_k, d_v;
	struct attn_matrix q, k, v;	/* T x d_k, S x d_k, S x d_v */
};

static void
problem_make(struct problem *p, struct ref_rng *rng, double amp)
{
	p->T = ref_rng_range(rng, 1, 17);
	p->S = ref_rng_range(rng, 1, 33);
	p->d_k = ref_rng_range(rng, 1, 40);
	p->d_v = ref_rng_range(rng, 1, 40);
	p->q = matrix_random(rng, p->T, p->d_k, -amp, amp);
	p->k = matrix_random(rng, p->S, p->d_k, -amp, amp);
	p->v = matrix_random(rng, p->S, p->d_v, -amp, amp);
}

static void
problem_free(struct problem *p)
{
	attn_matrix_free(&p->q);
	attn_matrix_free(&p->k);
	attn_matrix_free(&p->v);
}

/* sum_j weights[i][j] |V[j][c]|: the size an output element is measured
 * against, since its terms may cancel. */
static double
output_magnitude(const struct attn_stages *st, const struct attn_matrix *v,
    size_t i, size_t c)
{
	double mag = 0.0;
	size_t j;

	for (j = 0; j < v->rows; j++)
		mag += stage_at(st, ATTN_STAGE_WEIGHTS, i, j) *
		    fabs(*attn_at(v, j, c));
	return mag;
}

/* --------------------------------------------------------------- properties */

/* One seed of weights_rows_sum_to_one. */
static void
rows_sum_case(enum kernel_id kernel, unsigned stages, uint64_t seed)
{
	struct ref_rng rng;
	struct problem p;
	struct attn_stages st;
	size_t i, j;

	ref_rng_seed(&rng, seed);
	problem_make(&p, &rng, seed % 2 ? 3.0 : 0.5);
	compute_ok(kernel, stages, ATTN_SCALE_DEFAULT, 0.0, &p.q, &p.k, &p.v,
	    &st);
	for (i = 0; i < p.T; i++) {
		double sum = 0.0;

		for (j = 0; j < p.S; j++)
			sum += stage_at(&st, ATTN_STAGE_WEIGHTS, i, j);
		/* one rounding per division and per addition, twice over */
		ck_assert_double_eq_tol(sum, 1.0,
		    2.0 * (double)p.S * DBL_EPSILON);
	}
	attn_stages_free(&st);
	problem_free(&p);
}

KERNEL_TEST(weights_rows_sum_to_one, STAGE(WEIGHTS))
{
	int n;

	for (n = 0; n < PROP_BATCH; n++)
		rows_sum_case(kernel, stages,
		    100 + (uint64_t)(_i * PROP_BATCH + n));
}
END_TEST

/* One seed of adding_a_constant_to_a_row_of_logits_leaves_its_weights:
 * the weights of row i of [Q | c / scale] [K | 1]^T are those of Q K^T. */
static void
shift_case(enum kernel_id kernel, unsigned stages, uint64_t seed)
{
	struct ref_rng rng;
	struct problem p;
	struct attn_matrix q2, k2;
	struct attn_stages a, b;
	double scale, *c;
	size_t i, j, col;

	/*
	 * Q2 = [Q | c / scale] and K2 = [K | 1], so that row i of Q2 K2^T
	 * * scale is row i of Q K^T * scale plus c[i]: the same logits
	 * shifted by a constant per row, without any bias option.
	 */
	ref_rng_seed(&rng, seed);
	problem_make(&p, &rng, 1.0);
	scale = ref_rng_uniform(&rng, 0.1, 2.0);
	c = malloc(p.T * sizeof *c);
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(attn_matrix_alloc(&q2, p.T, p.d_k + 1, NULL),
	    ATTN_OK);
	ck_assert_int_eq(attn_matrix_alloc(&k2, p.S, p.d_k + 1, NULL),
	    ATTN_OK);
	for (i = 0; i < p.T; i++) {
		c[i] = ref_rng_uniform(&rng, -50.0, 50.0);
		for (col = 0; col < p.d_k; col++)
			*attn_at(&q2, i, col) = *attn_at(&p.q, i, col);
		*attn_at(&q2, i, p.d_k) = c[i] / scale;
	}
	for (j = 0; j < p.S; j++) {
		for (col = 0; col < p.d_k; col++)
			*attn_at(&k2, j, col) = *attn_at(&p.k, j, col);
		*attn_at(&k2, j, p.d_k) = 1.0;
	}
	compute_ok(kernel, stages, ATTN_SCALE_VALUE, scale, &p.q, &p.k, &p.v,
	    &a);
	compute_ok(kernel, stages, ATTN_SCALE_VALUE, scale, &q2, &k2, &p.v, &b);
	for (i = 0; i < p.T; i++) {
		double lse_a = stage_at(&a, ATTN_STAGE_LSE, i, 0);

		for (j = 0; j < p.S; j++) {
			double w = stage_at(&a, ATTN_STAGE_WEIGHTS, i, j);

			ck_assert_double_eq_tol(
			    stage_at(&b, ATTN_STAGE_WEIGHTS, i, j), w,
			    PROP_RTOL * w + DBL_MIN);
		}
		/* and the row's log-sum-exp moves by exactly c[i] */
		ck_assert_double_eq_tol(stage_at(&b, ATTN_STAGE_LSE, i, 0),
		    lse_a + c[i], PROP_RTOL * fmax(1.0, fabs(lse_a + c[i])));
	}
	attn_stages_free(&a);
	attn_stages_free(&b);
	attn_matrix_free(&q2);
	attn_matrix_free(&k2);
	free(c);
	problem_free(&p);
}

KERNEL_TEST(adding_a_constant_to_a_row_of_logits_leaves_its_weights,
    STAGE(WEIGHTS) | STAGE(LSE))
{
	int n;

	for (n = 0; n < PROP_BATCH; n++)
		shift_case(kernel, stages,
		    200 + (uint64_t)(_i * PROP_BATCH + n));
}
END_TEST

/* One seed of permuting_keys_with_values_keeps_the_output. */
static void
permute_case(enum kernel_id kernel, unsigned stages, uint64_t seed)
{
	struct ref_rng rng;
	struct problem p;
	struct attn_matrix k2, v2;
	struct attn_stages a, b;
	size_t *perm, i, j, c;

	ref_rng_seed(&rng, seed);
	problem_make(&p, &rng, 2.0);
	/* a random permutation (Fisher-Yates), applied to K and V alike:
	 * row j of K2 and V2 is row perm[j] of K and V */
	perm = malloc(p.S * sizeof *perm);
	ck_assert_ptr_nonnull(perm);
	for (j = 0; j < p.S; j++)
		perm[j] = j;
	for (j = p.S - 1; j > 0; j--) {
		size_t r = ref_rng_range(&rng, 0, j), t = perm[j];

		perm[j] = perm[r];
		perm[r] = t;
	}
	ck_assert_int_eq(attn_matrix_alloc(&k2, p.S, p.d_k, NULL), ATTN_OK);
	ck_assert_int_eq(attn_matrix_alloc(&v2, p.S, p.d_v, NULL), ATTN_OK);
	for (j = 0; j < p.S; j++) {
		memcpy(attn_at(&k2, j, 0), attn_at(&p.k, perm[j], 0),
		    p.d_k * sizeof(double));
		memcpy(attn_at(&v2, j, 0), attn_at(&p.v, perm[j], 0),
		    p.d_v * sizeof(double));
	}
	compute_ok(kernel, stages, ATTN_SCALE_DEFAULT, 0.0, &p.q, &p.k, &p.v,
	    &a);
	compute_ok(kernel, stages, ATTN_SCALE_DEFAULT, 0.0, &p.q, &k2, &v2, &b);
	for (i = 0; i < p.T; i++) {
		double lse = stage_at(&a, ATTN_STAGE_LSE, i, 0);

		for (j = 0; j < p.S; j++) {
			double w = stage_at(&a, ATTN_STAGE_WEIGHTS, i, perm[j]);

			/* each score is the same dot product, so exact */
			ck_assert_double_eq(
			    stage_at(&b, ATTN_STAGE_SCORES, i, j),
			    stage_at(&a, ATTN_STAGE_SCORES, i, perm[j]));
			/* the sums run in another order: a few ulps */
			ck_assert_double_eq_tol(
			    stage_at(&b, ATTN_STAGE_WEIGHTS, i, j), w,
			    PROP_RTOL * w + DBL_MIN);
		}
		for (c = 0; c < p.d_v; c++)
			ck_assert_double_eq_tol(
			    stage_at(&b, ATTN_STAGE_OUTPUT, i, c),
			    stage_at(&a, ATTN_STAGE_OUTPUT, i, c),
			    PROP_RTOL * output_magnitude(&a, &p.v, i, c) +
			    DBL_MIN);
		ck_assert_double_eq_tol(stage_at(&b, ATTN_STAGE_LSE, i, 0), lse,
		    PROP_RTOL * fmax(1.0, fabs(lse)));
	}
	attn_stages_free(&a);
	attn_stages_free(&b);
	attn_matrix_free(&k2);
	attn_matrix_free(&v2);
	free(perm);
	problem_free(&p);
}

KERNEL_TEST(permuting_keys_with_values_keeps_the_output,
    STAGE(SCORES) | STAGE(WEIGHTS) | STAGE(OUTPUT))
{
	int n;

	for (n = 0; n < PROP_BATCH; n++)
		permute_case(kernel, stages,
		    300 + (uint64_t)(_i * PROP_BATCH + n));
}
END_TEST

/* One seed of scaling_v_scales_the_output. */
static void
scale_v_case(enum kernel_id kernel, unsigned stages, uint64_t seed)
{
	/* powers of two scale every product exactly; -3.7 does not */
	static const double factors[] = { 0.25, 1024.0, -3.7 };
	const double f = factors[seed % 3];
	struct ref_rng rng;
	struct problem p;
	struct attn_matrix v2;
	struct attn_stages a, b;
	size_t i, j, c;

	ref_rng_seed(&rng, seed);
	problem_make(&p, &rng, 1.0);
	ck_assert_int_eq(attn_matrix_alloc(&v2, p.S, p.d_v, NULL), ATTN_OK);
	for (j = 0; j < p.S; j++)
		for (c = 0; c < p.d_v; c++)
			*attn_at(&v2, j, c) = f * *attn_at(&p.v, j, c);
	compute_ok(kernel, stages, ATTN_SCALE_DEFAULT, 0.0, &p.q, &p.k, &p.v,
	    &a);
	compute_ok(kernel, stages, ATTN_SCALE_DEFAULT, 0.0, &p.q, &p.k, &v2,
	    &b);
	for (i = 0; i < p.T; i++) {
		/* V takes no part in the weights */
		for (j = 0; j < p.S; j++)
			ck_assert_double_eq(
			    stage_at(&b, ATTN_STAGE_WEIGHTS, i, j),
			    stage_at(&a, ATTN_STAGE_WEIGHTS, i, j));
		for (c = 0; c < p.d_v; c++) {
			double expect = f *
			    stage_at(&a, ATTN_STAGE_OUTPUT, i, c);

			if (seed % 3 < 2)
				ck_assert_double_eq(
				    stage_at(&b, ATTN_STAGE_OUTPUT, i, c),
				    expect);
			else
				ck_assert_double_eq_tol(
				    stage_at(&b, ATTN_STAGE_OUTPUT, i, c),
				    expect, PROP_RTOL * fabs(f) *
				    output_magnitude(&a, &p.v, i, c) +
				    DBL_MIN);
		}
	}
	attn_stages_free(&a);
	attn_stages_free(&b);
	attn_matrix_free(&v2);
	problem_free(&p);
}

KERNEL_TEST(scaling_v_scales_the_output, STAGE(WEIGHTS) | STAGE(OUTPUT))
{
	int n;

	for (n = 0; n < PROP_BATCH; n++)
		scale_v_case(kernel, stages,
		    400 + (uint64_t)(_i * PROP_BATCH + n));
}
END_TEST

/* One seed of one_key_takes_all_the_weight. */
static void
one_key_case(enum kernel_id kernel, unsigned stages, uint64_t seed)
{
	struct ref_rng rng;
	struct attn_matrix q, k, v;
	struct attn_stages st;
	size_t T, d_k, d_v, i, c;

	ref_rng_seed(&rng, seed);
	T = ref_rng_range(&rng, 1, 17);
	d_k = ref_rng_range(&rng, 1, 40);
	d_v = ref_rng_range(&rng, 1, 40);
	q = matrix_random(&rng, T, d_k, -100.0, 100.0);
	k = matrix_random(&rng, 1, d_k, -100.0, 100.0);
	v = matrix_random(&rng, 1, d_v, -100.0, 100.0);
	compute_ok(kernel, stages, ATTN_SCALE_DEFAULT, 0.0, &q, &k, &v, &st);
	for (i = 0; i < T; i++) {
		ck_assert_double_eq(stage_at(&st, ATTN_STAGE_WEIGHTS, i, 0),
		    1.0);
		ck_assert_double_eq(stage_at(&st, ATTN_STAGE_LSE, i, 0),
		    stage_at(&st, ATTN_STAGE_SCALED, i, 0));
		for (c = 0; c < d_v; c++)
			ck_assert_double_eq(
			    stage_at(&st, ATTN_STAGE_OUTPUT, i, c),
			    *attn_at(&v, 0, c));
	}
	attn_stages_free(&st);
	attn_matrix_free(&q);
	attn_matrix_free(&k);
	attn_matrix_free(&v);
}

KERNEL_TEST(one_key_takes_all_the_weight,
    STAGE(SCALED) | STAGE(WEIGHTS) | STAGE(OUTPUT))
{
	int n;

	for (n = 0; n < PROP_BATCH; n++)
		one_key_case(kernel, stages,
		    500 + (uint64_t)(_i * PROP_BATCH + n));
}
END_TEST

/* One seed of query_rows_are_computed_independently. */
static void
rows_alone_case(enum kernel_id kernel, unsigned stages, uint64_t seed)
{
	struct ref_rng rng;
	struct problem p;
	struct attn_stages all, one;
	size_t i, s, j;

	/* every stage row of a one-row view of Q equals that row of the
	 * whole computation, bit for bit: rows never mix, which is what
	 * lets later kernels split work by query row */
	ref_rng_seed(&rng, seed);
	problem_make(&p, &rng, 2.0);
	compute_ok(kernel, stages, ATTN_SCALE_DEFAULT, 0.0, &p.q, &p.k, &p.v,
	    &all);
	for (i = 0; i < p.T; i++) {
		struct attn_matrix row = attn_matrix_view(&p.q, i, 1, 0, p.d_k);

		compute_ok(kernel, stages, ATTN_SCALE_DEFAULT, 0.0, &row, &p.k,
		    &p.v, &one);
		for (s = 0; s < ATTN_STAGE_COUNT; s++)
			for (j = 0; j < one.stage[s].cols; j++)
				ck_assert_double_eq(
				    *attn_at(&one.stage[s], 0, j),
				    *attn_at(&all.stage[s], i, j));
		attn_stages_free(&one);
	}
	attn_stages_free(&all);
	problem_free(&p);
}

KERNEL_TEST(query_rows_are_computed_independently, ATTN_STAGES_ALL)
{
	int n;

	for (n = 0; n < PROP_BATCH; n++)
		rows_alone_case(kernel, stages,
		    600 + (uint64_t)(_i * PROP_BATCH + n));
}
END_TEST

/* One seed of self_attention_scores_are_symmetric. */
static void
symmetric_case(enum kernel_id kernel, unsigned stages, uint64_t seed)
{
	struct ref_rng rng;
	struct attn_matrix x;
	struct attn_stages st;
	size_t n, d, i, j;

	ref_rng_seed(&rng, seed);
	n = ref_rng_range(&rng, 1, 20);
	d = ref_rng_range(&rng, 1, 40);
	x = matrix_random(&rng, n, d, -5.0, 5.0);
	compute_ok(kernel, stages, ATTN_SCALE_DEFAULT, 0.0, &x, &x, &x, &st);
	for (i = 0; i < n; i++)
		for (j = 0; j < i; j++)
			ck_assert_double_eq(
			    stage_at(&st, ATTN_STAGE_SCORES, i, j),
			    stage_at(&st, ATTN_STAGE_SCORES, j, i));
	attn_stages_free(&st);
	attn_matrix_free(&x);
}

KERNEL_TEST(self_attention_scores_are_symmetric, STAGE(SCORES))
{
	int n;

	for (n = 0; n < PROP_BATCH; n++)
		symmetric_case(kernel, stages,
		    700 + (uint64_t)(_i * PROP_BATCH + n));
}
END_TEST

Suite *
props_suite(void)
{
	Suite *s = suite_create("props");
	TCase *tc = tcase_create("softmax");

	tcase_add_kernel_test(tc, weights_rows_sum_to_one, 0, 5);
	tcase_add_kernel_test(tc,
	    adding_a_constant_to_a_row_of_logits_leaves_its_weights, 0, 3);
	suite_add_tcase(s, tc);

	tc = tcase_create("keys");
	tcase_add_kernel_test(tc, permuting_keys_with_values_keeps_the_output,
	    0, 3);
	tcase_add_kernel_test(tc, scaling_v_scales_the_output, 0, 3);
	tcase_add_kernel_test(tc, one_key_takes_all_the_weight, 0, 2);
	suite_add_tcase(s, tc);

	tc = tcase_create("queries");
	tcase_add_kernel_test(tc, query_rows_are_computed_independently, 0, 2);
	tcase_add_kernel_test(tc, self_attention_scores_are_symmetric, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}
