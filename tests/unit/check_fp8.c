/*
 * check_fp8.c - the two OCP FP8 formats of attn_round and
 * attn_round_floats against an independent rounding: fp8_numpy.h, which
 * tests/unit/fp8_numpy.py writes with NumPy by decoding all 256 codes
 * of each format and searching for the nearest (ties to even, E4M3's
 * saturation at 448, E5M2's inf and nan).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "internal.h"
#include "suites.h"

struct fp8_case {
	double x, want;
};

#include "fp8_numpy.h"

#define NCASES(t) (sizeof (t) / sizeof (t)[0])

static const struct {
	const char *name;
	enum attn_precision prec;
	const double *codes;
	const struct fp8_case *cases;
	size_t n;
} formats[] = {
	{ "e4m3", ATTN_PREC_FP8_E4M3, e4m3_codes, e4m3_cases,
	    NCASES(e4m3_cases) },
	{ "e5m2", ATTN_PREC_FP8_E5M2, e5m2_codes, e5m2_cases,
	    NCASES(e5m2_cases) },
};

/* Equal as doubles are, but for the sign of 0, which must match, and
 * nan, which matches any nan. */
static int
same(double a, double b)
{
	return isnan(a) ? isnan(b) : memcmp(&a, &b, sizeof a) == 0;
}

/* Each of the 256 codes rounds to itself, through attn_round and
 * through attn_round_floats. */
START_TEST(every_code_round_trips)
{
	size_t c;

	for (c = 0; c < 256; c++) {
		const double v = formats[_i].codes[c];
		float f = (float)v;

		ck_assert_msg(same(attn_round(v, formats[_i].prec), v), "%s "
		    "code 0x%02zx (%a) rounds to %a", formats[_i].name, c, v,
		    attn_round(v, formats[_i].prec));
		attn_round_floats(&f, 1, formats[_i].prec, 1);
		ck_assert_msg(same((double)f, v), "%s code 0x%02zx (%a) rounds "
		    "as a float to %a", formats[_i].name, c, v, (double)f);
	}
}
END_TEST

/* Midpoints (ties to even) and their neighbours, overflow, underflow and
 * random numbers round as NumPy's search does, one at a time and as an
 * array. */
START_TEST(numbers_round_as_numpy_rounds_them)
{
	const size_t n = formats[_i].n;
	float *f = malloc(n * sizeof *f);
	size_t i;

	ck_assert_ptr_nonnull(f);
	for (i = 0; i < n; i++) {
		const struct fp8_case *k = &formats[_i].cases[i];
		const double got = attn_round(k->x, formats[_i].prec);

		ck_assert_msg(same(got, k->want), "%s: %a rounds to %a, NumPy "
		    "to %a", formats[_i].name, k->x, got, k->want);
		f[i] = (float)k->x;
	}
	attn_round_floats(f, n, formats[_i].prec, 1);
	for (i = 0; i < n; i++)
		ck_assert_msg(same((double)f[i], formats[_i].cases[i].want),
		    "%s: the float %a rounds to %a, NumPy to %a",
		    formats[_i].name, formats[_i].cases[i].x, (double)f[i],
		    formats[_i].cases[i].want);
	free(f);
}
END_TEST

/* A double rounded to odd in float32 first rounds to FP8 as the double
 * itself does (the emulation's way in): the cases moved off by a little
 * less than a float32's spacing, where rounding to nearest float32 first
 * would land on an FP8 tie. */
START_TEST(rounding_through_odd_is_attn_round)
{
	size_t i;

	for (i = 0; i < formats[_i].n; i++) {
		const double x = formats[_i].cases[i].x;
		int s;

		for (s = -1; s <= 1; s += 2) {
			const double y = isfinite(x) ? x + s * fabs(x) *
			    0x1p-30 : x;
			const double want = attn_round(y, formats[_i].prec);
			float f = attn_round_odd(y);

			attn_round_floats(&f, 1, formats[_i].prec, 1);
			ck_assert_msg(same((double)f, want), "%s: %a rounds "
			    "through odd to %a, attn_round to %a",
			    formats[_i].name, y, (double)f, want);
		}
	}
}
END_TEST

Suite *
fp8_suite(void)
{
	Suite *s = suite_create("fp8");
	TCase *tc = tcase_create("round");

	tcase_add_loop_test(tc, every_code_round_trips, 0, 2);
	tcase_add_loop_test(tc, numbers_round_as_numpy_rounds_them, 0, 2);
	tcase_add_loop_test(tc, rounding_through_odd_is_attn_round, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}
