/*
 * check_compare.c - lib/compare.c: the statistics of a comparison and its
 * verdict.  The cases that motivate the spread test are built as they
 * arise in attention: output rows that are weighted means of V cluster
 * around V's mean, far from 0 compared with their spread, so that a
 * constant, a shuffle or a transpose of them passes numpy.allclose with
 * rtol 1e-2 and must still fail here.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "ref.h"
#include "suites.h"
#include "testutil.h"

/* A 16 x 16 "output": 10 plus a spread of about +-0.05. */
enum { N = 16 };

static void
clustered(double *ref)
{
	struct ref_rng rng;
	size_t i;

	ref_rng_seed(&rng, 5);
	for (i = 0; i < N * N; i++)
		ref[i] = 10.0 + ref_rng_uniform(&rng, -0.05, 0.05);
}

/* numpy.allclose, written out as numpy documents it. */
static int
allclose(const double *a, const double *b, size_t n, double rtol,
    double atol)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!(fabs(a[i] - b[i]) <= atol + rtol * fabs(b[i])))
			return 0;
	return 1;
}

START_TEST(identical_arrays_pass_with_nothing_to_report)
{
	double ref[N * N];
	struct attn_compare c;

	clustered(ref);
	attn_compare(ref, ref, N * N, 1e-5, 1e-8, &c);
	ck_assert_uint_eq(c.fails, 0);
	ck_assert_uint_eq(c.failing, 0);
	ck_assert(c.max_abs == 0 && c.max_rel == 0);
	ck_assert_uint_eq(c.worst, N * N);
	ck_assert_double_eq_tol(c.corr, 1.0, 1e-12);
	ck_assert_uint_eq(c.finite, N * N);
}
END_TEST

/* Case 0: the mean everywhere; 1: the reference shuffled; 2: transposed.
 * allclose passes all three at rtol 1e-2; the spread test fails them. */
START_TEST(constant_shuffled_and_transposed_fail_where_allclose_passes)
{
	double ref[N * N], cand[N * N], mean = 0, t;
	struct attn_compare c;
	struct ref_rng rng;
	size_t i, j;

	clustered(ref);
	for (i = 0; i < N * N; i++)
		mean += ref[i] / (N * N);
	memcpy(cand, ref, sizeof cand);
	if (_i == 0) {
		for (i = 0; i < N * N; i++)
			cand[i] = mean;
	} else if (_i == 1) {
		ref_rng_seed(&rng, 6);
		for (i = N * N - 1; i > 0; i--) {
			j = ref_rng_range(&rng, 0, i);
			t = cand[i];
			cand[i] = cand[j];
			cand[j] = t;
		}
	} else {
		for (i = 0; i < N; i++)
			for (j = 0; j < N; j++)
				cand[i * N + j] = ref[j * N + i];
	}
	ck_assert(allclose(cand, ref, N * N, 1e-2, 1e-8));
	attn_compare(cand, ref, N * N, 1e-2, 1e-8, &c);
	ck_assert_uint_eq(c.failing, 0);
	ck_assert_uint_eq(c.fails, ATTN_FAIL_SPREAD);
	ck_assert(c.spread_applies);
	ck_assert(c.rms_abs > c.spread_bound);
	ck_assert(c.max_abs > 0.3 * (c.ref_max - c.ref_min));
	/* A constant has no correlation; the others little. */
	if (_i == 0)
		ck_assert(isnan(c.corr));
	else
		ck_assert_msg(fabs(c.corr) < 0.5, "correlation %g", c.corr);
}
END_TEST

/* Rounding noise far below the spread passes both tests. */
START_TEST(rounding_noise_passes)
{
	double ref[N * N], cand[N * N];
	struct attn_compare c;
	size_t i;

	clustered(ref);
	for (i = 0; i < N * N; i++)
		cand[i] = (double)(float)ref[i];
	attn_compare(cand, ref, N * N, 1e-5, 1e-8, &c);
	ck_assert_uint_eq(c.fails, 0);
	ck_assert(c.max_abs > 0 && c.max_abs < 1e-6);
	ck_assert(c.worst < N * N);
	ck_assert_double_eq(fabs(cand[c.worst] - ref[c.worst]), c.max_abs);
	ck_assert(c.corr > 0.999999);
}
END_TEST

/* One element over: counted and named worst; at rtol 1e-5 the element
 * test tells a constant apart, so the spread test does not apply. */
START_TEST(elements_over_the_tolerance_are_counted)
{
	double ref[N * N], cand[N * N];
	struct attn_compare c;

	clustered(ref);
	memcpy(cand, ref, sizeof cand);
	cand[37] += 0.5;
	cand[40] += 1e-3;
	attn_compare(cand, ref, N * N, 1e-5, 1e-8, &c);
	ck_assert_uint_eq(c.failing, 2);
	ck_assert_uint_eq(c.worst, 37);
	ck_assert_double_eq_tol(c.max_abs, 0.5, 1e-12);
	ck_assert_double_eq_tol(c.max_rel, 0.5 / ref[37], 1e-12);
	ck_assert_uint_eq(c.fails, ATTN_FAIL_ELEMENTS);
	ck_assert(!c.spread_applies);
}
END_TEST

/*
 * A float32 kernel's outputs near 1000, varying by 0.5, with its
 * errors up to 6.75e-4 (float32's spacing there is 6.1e-5, and a sum of
 * S products rounds that much).  numpy.allclose passes it at rtol 1e-4,
 * and so must the check: the element test tells a constant apart there
 * (the mean misses the extremes by 0.25, over 0.1), so the spread test
 * does not apply.  At rtol 1e-3 the element test would pass the mean:
 * the spread test then passes the float32 result, whose RMS error is
 * far below a tenth of a standard deviation, and fails the mean.
 */
START_TEST(float32_result_near_1000_passes_what_allclose_passes)
{
	double ref[N * N], cand[N * N], mean = 0;
	struct attn_compare c;
	struct ref_rng rng;
	size_t i;

	ref_rng_seed(&rng, 7);
	for (i = 0; i < N * N; i++) {
		ref[i] = 1000.0 + ref_rng_uniform(&rng, -0.25, 0.25);
		cand[i] = (double)(float)ref[i] + (i % 7 == 0 ? 6.75e-4 :
		    i % 7 == 3 ? -6.1e-5 : 0.0);
		mean += ref[i] / (N * N);
	}
	ck_assert(allclose(cand, ref, N * N, 1e-4, 1e-8));
	attn_compare(cand, ref, N * N, 1e-4, 1e-8, &c);
	ck_assert_uint_eq(c.fails, 0);
	ck_assert(!c.spread_applies);
	ck_assert_double_eq_tol(c.max_abs, 6.75e-4, 1e-4);
	attn_compare(cand, ref, N * N, 1e-3, 1e-8, &c);
	ck_assert(c.spread_applies);
	ck_assert_uint_eq(c.fails, 0);
	ck_assert(c.rms_abs < 0.1 * c.spread_bound);
	for (i = 0; i < N * N; i++)
		cand[i] = mean;
	ck_assert(allclose(cand, ref, N * N, 1e-3, 1e-8));
	attn_compare(cand, ref, N * N, 1e-3, 1e-8, &c);
	ck_assert_uint_eq(c.fails, ATTN_FAIL_SPREAD);
	ck_assert_double_eq_tol(c.rms_abs, c.ref_std, 1e-9);
}
END_TEST

/* nan or an infinity on one side always fails, and is the worst; the
 * same on both sides is equal. */
START_TEST(nan_and_inf_on_one_side_fail)
{
	const double ref[6] = { 1, NAN, INFINITY, -INFINITY, 2, 3 };
	const double cand[6] = { 1, NAN, INFINITY, INFINITY, NAN, 3.5 };
	struct attn_compare c;

	attn_compare(cand, ref, 6, 1e-5, 1e-8, &c);
	ck_assert_uint_eq(c.nonfinite, 2);
	ck_assert_uint_eq(c.first_nonfinite, 3);
	ck_assert_uint_eq(c.worst, 3);
	ck_assert_uint_eq(c.failing, 3);	/* and 3.5 for 3 */
	ck_assert_uint_eq(c.finite, 2);
	ck_assert_uint_eq(c.fails, ATTN_FAIL_NONFINITE | ATTN_FAIL_ELEMENTS);
	/* Loose enough for 3.5: only the nonfinite pairs fail. */
	attn_compare(cand, ref, 6, 0.5, 0, &c);
	ck_assert_uint_eq(c.fails, ATTN_FAIL_NONFINITE);
}
END_TEST

/* A zero reference: relative error inf where the candidate is not 0,
 * numpy's convention; a constant reference has no correlation. */
START_TEST(relative_error_against_zero_is_inf)
{
	const double ref[3] = { 0, 0, 0 }, cand[3] = { 0, 1e-9, 0 };
	struct attn_compare c;

	attn_compare(cand, ref, 3, 1e-5, 1e-8, &c);
	ck_assert(isinf(c.max_rel));
	ck_assert(isnan(c.corr));
	ck_assert_uint_eq(c.fails, 0);		/* within atol */
}
END_TEST

/* FlashAttention's test: within factor times the baseline's error (plus
 * atol); rtol and the spread no longer decide. */
/* The largest relative error is |a - b| / |b| at its largest, to the
 * bit, though attn_compare divides only where that can raise it: over
 * arrays of every scale (subnormal to huge, growing and shrinking, zeros
 * in the reference and equal pairs), against the division of every
 * pair. */
START_TEST(largest_relative_error_is_every_divisions_largest)
{
	static const double scale[] = { 0x1p-1070, 0x1p-1000, 1e-300, 1e-8,
	    1, 1e8, 1e300, 0x1p1020 };
	enum { NV = 4096 };
	double *a = malloc(NV * sizeof *a), *b = malloc(NV * sizeof *b);
	struct attn_compare c;
	struct ref_rng rng;
	size_t i, k;

	ck_assert(a != NULL && b != NULL);
	ref_rng_seed(&rng, 77 + (uint64_t)_i);
	for (k = 0; k < 20; k++) {
		double want = 0;

		for (i = 0; i < NV; i++) {
			const double s = _i == 2 ? scale[ref_rng_range(&rng, 3,
			    5)] : scale[ref_rng_range(&rng, 0, 7)];
			const double g = _i % 2 == 0 ? (double)(i + 1) / NV :
			    (double)(NV - i) / NV;

			b[i] = ref_rng_uniform(&rng, -1, 1) * s * g;
			a[i] = b[i] * (1 + ref_rng_uniform(&rng, -1e-6, 1e-6)) +
			    ref_rng_uniform(&rng, -1, 1) * scale[k % 8] * 1e-9;
			/* case 2: near ties, each error a hair above the
			 * one before (2^-45 of it, then an ulp) */
			if (_i == 2)
				a[i] = b[i] + b[i] * 0.25 * (1 + (double)i *
				    (k % 2 == 0 ? 0x1p-45 : 0x1p-52));
			if (i % 97 == 0)
				b[i] = 0;
			if (i % 89 == 0 || (_i == 2 && b[i] == 0))
				a[i] = b[i];
		}
		for (i = 0; i < NV; i++) {
			const double d = fabs(a[i] - b[i]);
			const double r = d == 0 ? 0 : b[i] == 0 ? INFINITY :
			    d / fabs(b[i]);

			if (!isfinite(a[i]) || !isfinite(b[i]))
				continue;
			if (r > want)
				want = r;
		}
		attn_compare(a, b, NV, 1e-5, 1e-8, &c);
		ck_assert_msg(memcmp(&c.max_rel, &want, sizeof want) == 0,
		    "round %zu: %a, every division's %a", k, c.max_rel, want);
		/* without zeros in the reference: a finite largest */
		for (i = 0; i < NV; i += 97) {
			b[i] = 1;
			if (_i == 2)	/* no error: the ties decide */
				a[i] = 1;
		}
		want = 0;
		for (i = 0; i < NV; i++) {
			const double d = fabs(a[i] - b[i]);
			const double r = d == 0 ? 0 : d / fabs(b[i]);

			if (isfinite(a[i]) && isfinite(b[i]) && r > want)
				want = r;
		}
		attn_compare(a, b, NV, 1e-5, 1e-8, &c);
		ck_assert_msg(memcmp(&c.max_rel, &want, sizeof want) == 0,
		    "round %zu: %a, every division's %a", k, c.max_rel, want);
	}
	free(a);
	free(b);
}
END_TEST

START_TEST(baseline_verdict_is_the_factor)
{
	double ref[N * N], cand[N * N], base[N * N];
	struct attn_compare c, b;
	size_t i;

	clustered(ref);
	for (i = 0; i < N * N; i++) {
		base[i] = ref[i] + (i == 3 ? 1e-3 : 0);
		cand[i] = ref[i] + (i == 7 ? 1.9e-3 : 0);
	}
	attn_compare(base, ref, N * N, 1e-5, 1e-8, &b);
	attn_compare(cand, ref, N * N, 1e-5, 1e-8, &c);
	ck_assert(c.fails & ATTN_FAIL_ELEMENTS);
	attn_compare_baseline(&c, &b, 2.0);
	ck_assert_uint_eq(c.fails, 0);
	ck_assert_double_eq_tol(c.factor_bound, 2e-3 + 1e-8, 1e-12);
	attn_compare(cand, ref, N * N, 1e-5, 1e-8, &c);
	attn_compare_baseline(&c, &b, 1.5);
	ck_assert_uint_eq(c.fails, ATTN_FAIL_FACTOR);
	cand[9] = NAN;
	attn_compare(cand, ref, N * N, 1e-5, 1e-8, &c);
	attn_compare_baseline(&c, &b, 100);
	ck_assert_uint_eq(c.fails, ATTN_FAIL_NONFINITE);
}
END_TEST

/*
 * The comparison element by element, as a reader would write it: the
 * extremes, counts and the worst pair, which lib/compare.c keeps in
 * lanes and puts together; and the sums in long double, which the lanes'
 * sums must match to rounding.
 */
struct plain {
	size_t finite, failing, nonfinite, worst;
	double max_abs, max_rel, ref_min, ref_max;
	long double sa, sb;
};

static void
plain_compare(const double *a, const double *b, size_t n, double rtol,
    double atol, struct plain *p)
{
	size_t i, first = n;

	memset(p, 0, sizeof *p);
	p->worst = n;
	p->ref_min = INFINITY;
	p->ref_max = -INFINITY;
	for (i = 0; i < n; i++) {
		double d;

		if (!isfinite(a[i]) || !isfinite(b[i])) {
			if (!(isnan(a[i]) && isnan(b[i])) &&
			    !(isinf(a[i]) && a[i] == b[i])) {
				if (p->nonfinite++ == 0)
					first = i;
				p->failing++;
			}
			continue;
		}
		d = fabs(a[i] - b[i]);
		p->failing += !(d <= atol + rtol * fabs(b[i]));
		if (d > p->max_abs) {
			p->max_abs = d;
			p->worst = i;
		}
		if (d > 0 && (b[i] == 0 ? INFINITY : d / fabs(b[i])) >
		    p->max_rel)
			p->max_rel = b[i] == 0 ? INFINITY : d / fabs(b[i]);
		if (b[i] < p->ref_min || (b[i] == p->ref_min &&
		    signbit(b[i])))
			p->ref_min = b[i];
		if (b[i] > p->ref_max || (b[i] == p->ref_max &&
		    !signbit(b[i])))
			p->ref_max = b[i];
		p->sa += a[i];
		p->sb += b[i];
		p->finite++;
	}
	if (p->nonfinite > 0)
		p->worst = first;
}

/*
 * Lengths around the lanes (0 to 40 and 1000), with errors that tie for
 * the largest in several places, zeros of both signs in the reference, and
 * in case i % 3 == 1 a nan or an infinity on one side or both in blocks
 * and in the tail, and in case i % 3 == 2 (i % 6 == 3) a least
 * (greatest) value of 0 with both signs: every figure is the plain
 * loop's.
 */
START_TEST(lanes_give_what_one_element_at_a_time_gives)
{
	const size_t n = _i < 41 * 3 ? (size_t)_i / 3 : 1000;
	double *a = malloc((n + 1) * sizeof *a), *b = malloc((n + 1) *
	    sizeof *b);
	struct attn_compare c;
	struct plain p;
	struct ref_rng rng;
	size_t i, k;

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ref_rng_seed(&rng, (uint64_t)_i + 1);
	for (i = 0; i < n; i++) {
		b[i] = i % 5 == 1 ? (i % 2 ? -0.0 : 0.0) :
		    ref_rng_uniform(&rng, -2, 2);
		a[i] = b[i] + ref_rng_uniform(&rng, -1e-3, 1e-3);
		/* errors of 0.25 tie (exactly) in several places */
		if (i % 7 == 3) {
			b[i] = (double)(i % 11) / 8 - 0.5;
			a[i] = b[i] + 0.25;
		}
	}
	if (_i % 3 == 1)
		for (i = n / 4, k = 0; i < n; i += n / 7 + 1, k++) {
			/* a nan, the same infinity, a finite against a
			 * nan, infinities of both signs, a finite against
			 * an infinity */
			a[i] = k % 5 == 0 ? NAN : k % 5 == 1 || k % 5 == 3 ?
			    INFINITY : 1.0;
			b[i] = k % 5 == 0 ? 1.0 : k % 5 == 1 ? INFINITY :
			    k % 5 == 2 ? NAN : -INFINITY;
		}
	/* a reference whose least value is 0, of both signs, or whose
	 * greatest is */
	if (_i % 3 == 2 || _i % 6 == 3)
		for (i = 0; i < n; i++)
			b[i] = i % 5 == 1 ? b[i] :
			    _i % 3 == 2 ? fabs(b[i]) : -fabs(b[i]);
	attn_compare(a, b, n, 1e-5, 1e-8, &c);
	plain_compare(a, b, n, 1e-5, 1e-8, &p);
	ck_assert_uint_eq(c.count, n);
	ck_assert_uint_eq(c.finite, p.finite);
	ck_assert_uint_eq(c.failing, p.failing);
	ck_assert_uint_eq(c.nonfinite, p.nonfinite);
	ck_assert_uint_eq(c.worst, p.worst);
	ck_assert(c.max_abs == p.max_abs);
	ck_assert(c.max_rel == p.max_rel);
	if (p.finite > 0) {
		ck_assert(memcmp(&c.ref_min, &p.ref_min, sizeof p.ref_min) ==
		    0);
		ck_assert(memcmp(&c.ref_max, &p.ref_max, sizeof p.ref_max) ==
		    0);
		ck_assert_double_eq_tol(c.ref_mean,
		    (double)(p.sb / (long double)p.finite), 1e-15);
	}
	free(a);
	free(b);
}
END_TEST

Suite *
compare_suite(void)
{
	Suite *s = suite_create("compare");
	TCase *tc = tcase_create("compare");

	tcase_add_test(tc, identical_arrays_pass_with_nothing_to_report);
	tcase_add_loop_test(tc,
	    constant_shuffled_and_transposed_fail_where_allclose_passes, 0, 3);
	tcase_add_test(tc, rounding_noise_passes);
	tcase_add_test(tc, elements_over_the_tolerance_are_counted);
	tcase_add_test(tc,
	    float32_result_near_1000_passes_what_allclose_passes);
	tcase_add_test(tc, nan_and_inf_on_one_side_fail);
	tcase_add_test(tc, relative_error_against_zero_is_inf);
	tcase_add_test(tc, baseline_verdict_is_the_factor);
	tcase_add_loop_test(tc, largest_relative_error_is_every_divisions_largest,
	    0, 3);
	tcase_add_loop_test(tc, lanes_give_what_one_element_at_a_time_gives,
	    0, 41 * 3 + 3);
	suite_add_tcase(s, tc);
	return s;
}
