/*
 * check_random.c - the seeded generator of `attn gen`: splitmix64 and
 * xoshiro256** give their authors' outputs, uniforms lie in [0, 1), the
 * logarithm made of + - * / agrees with libm's, and normal numbers are
 * Marsaglia's polar method on that stream, with mean 0 and variance 1.
 *
 * The reference outputs below come from the published algorithms
 * (splitmix64 of 0 starts 0xe220a8397b1dcdaf, as Vigna's splitmix64.c
 * prints), worked out again in Python's integers.
 */
#include <math.h>
#include <string.h>

#include "internal.h"
#include "suites.h"

START_TEST(xoshiro_gives_the_published_outputs)
{
	static const struct {
		unsigned long long seed, out[4];
	} want[] = {
		{ 0, { 0x99ec5f36cb75f2b4ULL, 0xbf6e1f784956452aULL,
		    0x1a5f849d4933e6e0ULL, 0x6aa594f1262d2d2cULL } },
		{ 7, { 0xb358faf74ef9765aULL, 0x475c3d964f482cd2ULL,
		    0xd6f1d349952c7996ULL, 0xfb2938731e807240ULL } },
	};
	struct attn_random r;
	size_t i, k;

	for (i = 0; i < sizeof want / sizeof want[0]; i++) {
		attn_random_seed(&r, want[i].seed);
		for (k = 0; k < 4; k++)
			ck_assert_msg(attn_random_next(&r) == want[i].out[k],
			    "seed %llu, output %zu", want[i].seed, k);
	}
}
END_TEST

START_TEST(uniforms_lie_in_zero_one_and_average_one_half)
{
	struct attn_random r;
	double sum = 0.0;
	size_t k, n = 100000;

	attn_random_seed(&r, 42);
	for (k = 0; k < n; k++) {
		double u = attn_random_uniform(&r);

		ck_assert(u >= 0.0 && u < 1.0);
		sum += u;
	}
	ck_assert_double_eq_tol(sum / (double)n, 0.5, 0.005);
}
END_TEST

START_TEST(the_log_agrees_with_libm_within_four_ulps)
{
	static const double fixed[] = { 1.0, 0.5, 0.25, 2.0, 0.7071067811865476,
		0.70710678118654746, 1e-300, 4.9e-324, 0.9999999999999999,
		1.0000000000000002, 123456.789, 1e300 };
	struct attn_random r;
	size_t k;

	for (k = 0; k < sizeof fixed / sizeof fixed[0]; k++)
		ck_assert_msg(fabs(attn_random_log(fixed[k]) - log(fixed[k])) <=
		    4.0 * 2.220446049250313e-16 * fmax(fabs(log(fixed[k])),
		    2.2250738585072014e-308), "log(%.17g)", fixed[k]);
	attn_random_seed(&r, 1);
	for (k = 0; k < 200000; k++) {
		double x = attn_random_uniform(&r);

		if (x == 0.0)
			continue;
		ck_assert_msg(fabs(attn_random_log(x) - log(x)) <=
		    4.0 * 2.220446049250313e-16 * fabs(log(x)),
		    "log(%.17g): %.17g, libm %.17g", x, attn_random_log(x),
		    log(x));
	}
}
END_TEST

/* The normal fill is the polar method on the uniform stream, u f and
 * v f in turn, here worked with libm's log. */
START_TEST(normals_are_the_polar_method_on_the_stream)
{
	struct attn_matrix m;
	struct attn_error err;
	struct attn_random r;
	size_t k = 0;

	ck_assert_int_eq(attn_matrix_alloc(&m, 7, 9, &err), ATTN_OK);
	attn_random_fill(&m, 7, ATTN_DIST_NORMAL);
	attn_random_seed(&r, 7);
	while (k < 63) {
		double u, v, s, f;

		do {
			u = 2.0 * attn_random_uniform(&r) - 1.0;
			v = 2.0 * attn_random_uniform(&r) - 1.0;
			s = u * u + v * v;
		} while (s >= 1.0 || s == 0.0);
		f = sqrt(-2.0 * log(s) / s);
		ck_assert_double_eq_tol(m.data[k], u * f, 1e-14);
		if (++k < 63)
			ck_assert_double_eq_tol(m.data[k++], v * f, 1e-14);
	}
	attn_matrix_free(&m);
}
END_TEST

START_TEST(normals_have_mean_zero_and_variance_one)
{
	struct attn_matrix m;
	struct attn_error err;
	double sum = 0.0, sq = 0.0, mean;
	size_t k, n;

	ck_assert_int_eq(attn_matrix_alloc(&m, 400, 500, &err), ATTN_OK);
	attn_random_fill(&m, 3, ATTN_DIST_NORMAL);
	n = m.rows * m.cols;
	for (k = 0; k < n; k++) {
		sum += m.data[k];
		sq += m.data[k] * m.data[k];
	}
	mean = sum / (double)n;
	ck_assert_double_eq_tol(mean, 0.0, 0.01);
	ck_assert_double_eq_tol(sq / (double)n - mean * mean, 1.0, 0.01);
	attn_matrix_free(&m);
}
END_TEST

START_TEST(a_fill_is_its_seed_and_views_fill_row_by_row)
{
	struct attn_matrix a, b, big, view;
	struct attn_error err;
	struct attn_random r;
	size_t i, j;

	ck_assert_int_eq(attn_matrix_alloc(&a, 3, 4, &err), ATTN_OK);
	ck_assert_int_eq(attn_matrix_alloc(&b, 3, 4, &err), ATTN_OK);
	ck_assert_int_eq(attn_matrix_alloc(&big, 5, 6, &err), ATTN_OK);
	attn_random_fill(&a, 11, ATTN_DIST_UNIFORM);
	attn_random_fill(&b, 11, ATTN_DIST_UNIFORM);
	ck_assert_mem_eq(a.data, b.data, 12 * sizeof(double));
	attn_random_fill(&b, 12, ATTN_DIST_UNIFORM);
	ck_assert(memcmp(a.data, b.data, 12 * sizeof(double)) != 0);
	/* a uniform fill is the stream, row by row, whatever the stride */
	view = attn_matrix_view(&big, 1, 3, 2, 4);
	attn_random_fill(&view, 11, ATTN_DIST_UNIFORM);
	attn_random_seed(&r, 11);
	for (i = 0; i < 3; i++)
		for (j = 0; j < 4; j++) {
			double u = attn_random_uniform(&r);

			ck_assert_double_eq(*attn_at(&a, i, j), u);
			ck_assert_double_eq(*attn_at(&big, i + 1, j + 2), u);
		}
	ck_assert_double_eq(*attn_at(&big, 0, 0), 0.0);
	attn_matrix_free(&a);
	attn_matrix_free(&b);
	attn_matrix_free(&big);
}
END_TEST

Suite *
random_suite(void)
{
	Suite *s = suite_create("random");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, xoshiro_gives_the_published_outputs);
	tcase_add_test(tc, uniforms_lie_in_zero_one_and_average_one_half);
	tcase_add_test(tc, the_log_agrees_with_libm_within_four_ulps);
	tcase_add_test(tc, normals_are_the_polar_method_on_the_stream);
	tcase_add_test(tc, normals_have_mean_zero_and_variance_one);
	tcase_add_test(tc, a_fill_is_its_seed_and_views_fill_row_by_row);
	suite_add_tcase(s, tc);
	return s;
}
