/*
 * check_fp8.c - the two OCP FP8 formats of attn_round and
 * attn_round_floats against an independent rounding: fp8_numpy.h, which
 * tests/unit/fp8_numpy.py writes with NumPy by decoding all 256 codes
 * of each format and searching for the nearest (ties to even, E4M3's
 * saturation at 448, E5M2's inf and nan); and the descale factors that
 * go with them (attn(1), --descale-q).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "emulate_ref.h"
#include "internal.h"
#include "suites.h"
#include "testutil.h"
#include "vcase.h"

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

/* ---------------------------------------------------------- descales */

/* Descale factors for case c: B x G in [0.25, 4) (1 x 1 when one is
 * set), each a power of two times 1 or 1.5 so that A(factor) is exact. */
static struct attn_matrix
factors(struct ref_rng *rng, const struct vcase *c, int one)
{
	struct attn_matrix m = matrix_random(rng, one ? 1 : c->B, one ? 1 :
	    c->G, 0, 1);
	size_t i;

	for (i = 0; i < m.rows * m.cols; i++)
		m.data[i] = ldexp(ref_rng_range(rng, 0, 2) ? 1.5 : 1.0,
		    (int)ref_rng_range(rng, 0, 4) - 2);
	return m;
}

/* x with batch b's head g (d columns each, per query heads to a KV
 * head) times f's factor (b, g): the operand the factors stand for,
 * worked out here from the layout of the inputs. */
static struct attn_matrix
times(const struct attn_matrix *x, const struct attn_matrix *f, size_t B,
    size_t d, size_t per)
{
	struct attn_matrix m = *x;
	size_t i, c;

	m.data = malloc(x->rows * x->cols * sizeof *m.data);
	ck_assert_ptr_nonnull(m.data);
	m.stride = x->cols;
	for (i = 0; i < x->rows; i++)
		for (c = 0; c < x->cols; c++) {
			const size_t b = i / (x->rows / B), g = c / d / per;
			const double k = f->rows == 1 && f->cols == 1 ?
			    f->data[0] : *attn_at(f, b, g);

			*attn_at(&m, i, c) = *attn_at(x, i, c) * k;
		}
	return m;
}

/* Fail unless stage s is the same bytes in a and b (nan equals nan). */
static void
same_stage(const char *what, const struct attn_stages *a,
    const struct attn_stages *b, enum attn_stage s)
{
	const struct attn_matrix *x = &a->stage[s], *y = &b->stage[s];
	size_t i;

	ck_assert(x->rows == y->rows && x->cols == y->cols);
	for (i = 0; i < x->rows * x->cols; i++)
		ck_assert_msg(same(x->data[i], y->data[i]), "%s: %s[%zu] is "
		    "%a, want %a", what, attn_stage_table[s].name, i,
		    x->data[i], y->data[i]);
}

/* In double, the run with descale factors is the run of descale_q Q,
 * descale_k K and descale_v V (per batch and KV head, or one number),
 * bit for bit; and the emulated FP8 run is its oracle's (emulate_ref.c),
 * bit for bit, in both formats. */
START_TEST(descale_factors_scale_q_k_and_v)
{
	const unsigned want = ATTN_STAGE_BIT(ATTN_STAGE_OUTPUT) |
	    ATTN_STAGE_BIT(ATTN_STAGE_WEIGHTS) |
	    ATTN_STAGE_BIT(ATTN_STAGE_SCALED);
	struct ref_rng rng;
	struct vcase c;
	struct attn_inputs in, pre;
	struct attn_stages a, b;
	struct attn_matrix fq, fk, fv, q, k, v;
	struct attn_error err;
	char what[256];
	int n;

	memset(&err, 0, sizeof err);
	for (n = 0; n < 40; n++) {
		const enum attn_precision prec = n % 2 ? ATTN_PREC_FP8_E5M2 :
		    ATTN_PREC_FP8_E4M3;

		vcase_make(&c, 3000 + (uint64_t)n);
		ref_rng_seed(&rng, 4000 + (uint64_t)n);
		fq = factors(&rng, &c, n % 3 == 0);
		fk = factors(&rng, &c, 0);
		fv = factors(&rng, &c, n % 5 == 0);
		vcase_inputs(&c, &in);
		in.descale_q = fq;
		in.descale_k = fk;
		in.descale_v = fv;
		q = times(&c.q, &fq, c.B, c.d_k, c.H / c.G);
		k = times(&c.k, &fk, c.B, c.d_k, 1);
		v = times(&c.v, &fv, c.B, c.d_v, 1);
		vcase_inputs(&c, &pre);
		pre.q = q;
		pre.k = k;
		pre.v = v;
		snprintf(what, sizeof what, "%s", c.what);
		ck_assert_msg(attn_run(&c.cfg, &in, want, &a, &err) == ATTN_OK,
		    "%s: %s", what, err.msg);
		ck_assert_msg(attn_run(&c.cfg, &pre, want, &b, &err) ==
		    ATTN_OK, "%s: %s", what, err.msg);
		same_stage(what, &a, &b, ATTN_STAGE_OUTPUT);
		same_stage(what, &a, &b, ATTN_STAGE_LSE);
		attn_stages_free(&a);
		attn_stages_free(&b);
		ck_assert_msg(attn_emulate(&c.cfg, &in, want, prec, &a, &err) ==
		    ATTN_OK, "%s: %s", what, err.msg);
		ck_assert_msg(emulate_ref(&c.cfg, &in, want, prec, &b, &err) ==
		    ATTN_OK, "%s: %s", what, err.msg);
		same_stage(what, &a, &b, ATTN_STAGE_SCALED);
		same_stage(what, &a, &b, ATTN_STAGE_WEIGHTS);
		same_stage(what, &a, &b, ATTN_STAGE_OUTPUT);
		attn_stages_free(&a);
		attn_stages_free(&b);
		free(q.data);
		free(k.data);
		free(v.data);
		attn_matrix_free(&fq);
		attn_matrix_free(&fk);
		attn_matrix_free(&fv);
		vcase_free(&c);
	}
}
END_TEST

/* What the factors refuse: a shape other than B x G or 1 x 1 (data),
 * a factor of 0 (data), a backward stage (usage), and an emulation in a
 * format that is not FP8 (usage). */
START_TEST(descale_factors_refused)
{
	struct vcase c;
	struct attn_inputs in;
	struct attn_stages st;
	struct attn_error err;
	struct attn_matrix f, dout;
	struct ref_rng rng;
	double d[3] = { 0.5, 0.5, 0.5 };

	vcase_make(&c, 77);
	vcase_inputs(&c, &in);
	memset(&err, 0, sizeof err);
	f.data = d;
	f.rows = 1;
	f.cols = 3;
	f.stride = 3;
	in.descale_k = f;
	ck_assert_int_eq(attn_run(&c.cfg, &in, ATTN_STAGE_BIT(
	    ATTN_STAGE_OUTPUT), &st, &err), c.B == 1 && c.G == 3 ? ATTN_OK :
	    ATTN_ERR_DATA);
	f.cols = 1;
	d[0] = 0.0;
	in.descale_k = f;
	ck_assert_int_eq(attn_run(&c.cfg, &in, ATTN_STAGE_BIT(
	    ATTN_STAGE_OUTPUT), &st, &err), ATTN_ERR_DATA);
	ck_assert_msg(strstr(err.msg, "descale factor of k") != NULL, "%s",
	    err.msg);
	d[0] = 0.5;
	ck_assert_int_eq(attn_emulate(&c.cfg, &in, ATTN_STAGE_BIT(
	    ATTN_STAGE_OUTPUT), ATTN_PREC_FP16, &st, &err), ATTN_ERR_USAGE);
	ck_assert_msg(strstr(err.msg, "fp8") != NULL, "%s", err.msg);
	ref_rng_seed(&rng, 78);
	dout = matrix_random(&rng, c.B * c.T, c.H * c.d_v, -1, 1);
	in.d_out = dout;
	ck_assert_int_eq(attn_run(&c.cfg, &in, ATTN_STAGE_BIT(
	    ATTN_STAGE_GRAD_Q), &st, &err), ATTN_ERR_USAGE);
	ck_assert_msg(strstr(err.msg, "backward") != NULL, "%s", err.msg);
	attn_matrix_free(&dout);
	vcase_free(&c);
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
	tc = tcase_create("descale");
	tcase_add_test(tc, descale_factors_scale_q_k_and_v);
	tcase_add_test(tc, descale_factors_refused);
	suite_add_tcase(s, tc);
	return s;
}
