/*
 * check_rope.c - rotary position embedding (lib/rope.c, and attn_run with
 * cfg.rope through lib/passes.c): the rotation against the long double
 * reference (tests/ref/ref_rope.c) on seeded random rows of both styles,
 * bases and offsets; against numbers that Hugging Face's Llama code
 * (half) and GPT-J's formula (interleaved) produced, recorded by
 * rope_torch.py in rope_torch.h, rotations and scores, cached keys
 * (bottom-right alignment) and GQA included; rotations keep norms and
 * turn back with the opposite sign; on every kernel, scores of a
 * constant row depend only on i - j, and whole runs agree with the
 * reference; and the checks on the base and d_k.
 *
 * Tolerances: the angle pos * theta is rounded once in double, an error
 * of eps * |pos| radians at most, so an element may differ from the
 * long double rotation by about eps * (1 + |pos|) times its pair's size.
 *
 * Dims: T query rows, S keys, H query heads, G KV heads, d columns per
 * head.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "ref.h"
#include "suites.h"
#include "testutil.h"

#include "rope_torch.h"

/* The tolerance for element (r, c) of a rotation of x (heads of d)
 * whose rows sit at pos0 + r % block. */
static double
rope_tol(const struct attn_matrix *x, size_t r, size_t c, size_t d,
    enum attn_rope_style style, size_t block, double pos0)
{
	const size_t h = c / d, m = c % d;
	size_t a, b;

	if (style == ATTN_ROPE_INTERLEAVED) {
		a = h * d + m / 2 * 2;
		b = a + 1;
	} else {
		a = h * d + (m < d / 2 ? m : m - d / 2);
		b = a + d / 2;
	}
	return 8.0 * DBL_EPSILON * (1.0 + fabs(pos0 + (double)(r % block))) *
	    (fabs(*attn_at(x, r, a)) + fabs(*attn_at(x, r, b)));
}

static void
rope_config(struct attn_config *cfg, enum attn_rope_style style, double base)
{
	attn_config_init(cfg);
	cfg->rope = 1;
	cfg->rope_style = style;
	cfg->rope_base = base;
}

/* ---------------------------------------------------------------- reference */

#define ROPE_CASES 200

START_TEST(rotation_matches_the_long_double_reference)
{
	static const double bases[] = { 10000.0, 500000.0, 100.0, 1.5, 1e6 };
	struct ref_rng rng;
	struct attn_config cfg;
	struct attn_error err;
	int n;

	ref_rng_seed(&rng, 0x0A0BE000u);
	for (n = 0; n < ROPE_CASES; n++) {
		const size_t block = ref_rng_range(&rng, 1, 9);
		const size_t rows = block * ref_rng_range(&rng, 1, 3);
		const size_t heads = ref_rng_range(&rng, 1, 3);
		const size_t d = 2 * ref_rng_range(&rng, 1, 6);
		const enum attn_rope_style style = ref_rng_range(&rng, 0, 1) ?
		    ATTN_ROPE_INTERLEAVED : ATTN_ROPE_HALF;
		const double base = bases[ref_rng_range(&rng, 0, 4)];
		/* offsets as --align makes them, negative ones included */
		const double offset = (double)ref_rng_range(&rng, 0, 40) - 8.0;
		struct attn_matrix x = matrix_random(&rng, rows, heads * d, -2,
		    2);
		struct attn_matrix y = matrix_from(rows, heads * d, x.data);
		long double *want = malloc(rows * heads * d * sizeof *want);
		size_t r, c;

		ck_assert_ptr_nonnull(want);
		rope_config(&cfg, style, base);
		ck_assert_int_eq(attn_rope_rotate(&cfg, &y, block, heads, d,
		    offset, 1.0, &err), ATTN_OK);
		ref_rope(x.data, rows, block, heads, d, (long double)offset,
		    (long double)base, style == ATTN_ROPE_INTERLEAVED, 1.0L,
		    want);
		for (r = 0; r < rows; r++)
			for (c = 0; c < heads * d; c++) {
				const double got = *attn_at(&y, r, c);
				const long double ref = want[r * heads * d + c];
				const double tol = rope_tol(&x, r, c, d, style,
				    block, offset);

				ck_assert_msg(fabsl((long double)got - ref) <=
				    tol, "case %d (%s, base %g, d %zu, offset "
				    "%g): [%zu][%zu] is %.17g, reference %.20Lg",
				    n, style == ATTN_ROPE_HALF ? "half" :
				    "interleaved", base, d, offset, r, c, got,
				    ref);
			}
		free(want);
		attn_matrix_free(&x);
		attn_matrix_free(&y);
	}
}
END_TEST

/* A rotation keeps each pair's length, so each head's norm; the opposite
 * sign turns it back. */
START_TEST(rotation_keeps_norms_and_turns_back)
{
	struct ref_rng rng;
	struct attn_config cfg;
	struct attn_error err;
	const size_t rows = 7, heads = 2, d = 6;
	struct attn_matrix x, y;
	size_t r, h, c;

	ref_rng_seed(&rng, 77 + (uint64_t)_i);
	rope_config(&cfg, _i ? ATTN_ROPE_INTERLEAVED : ATTN_ROPE_HALF,
	    10000.0);
	x = matrix_random(&rng, rows, heads * d, -3, 3);
	y = matrix_from(rows, heads * d, x.data);
	ck_assert_int_eq(attn_rope_rotate(&cfg, &y, rows, heads, d, 5.0, 1.0,
	    &err), ATTN_OK);
	for (r = 0; r < rows; r++)
		for (h = 0; h < heads; h++) {
			double nx = 0.0, ny = 0.0;

			for (c = 0; c < d; c++) {
				nx += *attn_at(&x, r, h * d + c) *
				    *attn_at(&x, r, h * d + c);
				ny += *attn_at(&y, r, h * d + c) *
				    *attn_at(&y, r, h * d + c);
			}
			ck_assert_double_eq_tol(ny, nx, 64 * DBL_EPSILON * nx);
		}
	/* row 0 sits at position 5, so it did move */
	ck_assert_double_ne(*attn_at(&y, 0, 0), *attn_at(&x, 0, 0));
	ck_assert_int_eq(attn_rope_rotate(&cfg, &y, rows, heads, d, 5.0, -1.0,
	    &err), ATTN_OK);
	for (r = 0; r < rows; r++)
		for (c = 0; c < heads * d; c++)
			ck_assert_double_eq_tol(*attn_at(&y, r, c),
			    *attn_at(&x, r, c), 64 * DBL_EPSILON);
	attn_matrix_free(&x);
	attn_matrix_free(&y);
}
END_TEST

/* ---------------------------------------------------------------- torch */

/* Fail unless a (rows x cols, packed) equals want within the rotation's
 * tolerance for rows at pos0 + r. */
static void
expect_rotated(const char *what, const struct attn_matrix *x,
    const struct attn_matrix *a, const double *want, size_t d,
    enum attn_rope_style style, double pos0)
{
	size_t r, c;

	for (r = 0; r < a->rows; r++)
		for (c = 0; c < a->cols; c++) {
			const double got = *attn_at(a, r, c);
			const double w = want[r * a->cols + c];

			ck_assert_msg(fabs(got - w) <= rope_tol(x, r, c, d,
			    style, a->rows, pos0), "%s[%zu][%zu] is %.17g, "
			    "torch %.17g", what, r, c, got, w);
		}
}

START_TEST(rotation_reproduces_hugging_face_llama_and_gptj)
{
	const struct rope_torch_case *t = &rope_torch_cases[_i];
	struct attn_config cfg;
	struct attn_error err;
	struct attn_matrix q = matrix_from(t->T, t->H * t->d, t->q);
	struct attn_matrix k = matrix_from(t->S, t->G * t->d, t->k);
	struct attn_matrix qr = matrix_from(t->T, t->H * t->d, t->q);
	struct attn_matrix kr = matrix_from(t->S, t->G * t->d, t->k);

	rope_config(&cfg, t->style, t->base);
	ck_assert_int_eq(attn_rope_rotate(&cfg, &qr, t->T, t->H, t->d,
	    (double)t->offset, 1.0, &err), ATTN_OK);
	ck_assert_int_eq(attn_rope_rotate(&cfg, &kr, t->S, t->G, t->d, 0.0,
	    1.0, &err), ATTN_OK);
	expect_rotated(t->name, &q, &qr, t->q_rot, t->d, t->style,
	    (double)t->offset);
	expect_rotated(t->name, &k, &kr, t->k_rot, t->d, t->style, 0.0);
	attn_matrix_free(&q);
	attn_matrix_free(&k);
	attn_matrix_free(&qr);
	attn_matrix_free(&kr);
}
END_TEST

/* The two styles pair different columns: on the same input they agree
 * only where the pairs coincide, which for d = 2 they do. */
START_TEST(the_two_styles_differ_but_for_one_pair)
{
	static const double row[] = { 1, 2, 3, 4 };
	struct attn_config half, inter;
	struct attn_error err;
	struct attn_matrix a = matrix_from(1, 4, row);
	struct attn_matrix b = matrix_from(1, 4, row);

	rope_config(&half, ATTN_ROPE_HALF, 10000.0);
	rope_config(&inter, ATTN_ROPE_INTERLEAVED, 10000.0);
	ck_assert_int_eq(attn_rope_rotate(&half, &a, 1, 1, 4, 1.0, 1.0, &err),
	    ATTN_OK);
	ck_assert_int_eq(attn_rope_rotate(&inter, &b, 1, 1, 4, 1.0, 1.0,
	    &err), ATTN_OK);
	/* half: pair 0 is (1, 3) at angle 1; interleaved: (1, 2) */
	ck_assert_double_eq_tol(*attn_at(&a, 0, 0), cos(1.0) - 3 * sin(1.0),
	    4 * DBL_EPSILON);
	ck_assert_double_eq_tol(*attn_at(&b, 0, 0), cos(1.0) - 2 * sin(1.0),
	    4 * DBL_EPSILON);
	attn_matrix_free(&a);
	attn_matrix_free(&b);
	/* with one pair per head the styles are the same rotation */
	a = matrix_from(2, 2, row);
	b = matrix_from(2, 2, row);
	ck_assert_int_eq(attn_rope_rotate(&half, &a, 2, 1, 2, 3.0, 1.0, &err),
	    ATTN_OK);
	ck_assert_int_eq(attn_rope_rotate(&inter, &b, 2, 1, 2, 3.0, 1.0,
	    &err), ATTN_OK);
	expect_same("d = 2", &a, &b);
	attn_matrix_free(&a);
	attn_matrix_free(&b);
}
END_TEST

START_TEST(an_odd_d_k_or_a_bad_base_is_refused)
{
	struct attn_config cfg;
	struct attn_error err;

	rope_config(&cfg, ATTN_ROPE_HALF, 10000.0);
	ck_assert_int_eq(attn_rope_check(&cfg, 4, &err), ATTN_OK);
	ck_assert_int_eq(attn_rope_check(&cfg, 3, &err), ATTN_ERR_DATA);
	ck_assert_str_eq(err.msg, "RoPE rotates pairs of columns, but d_k per "
	    "head is 3, an odd number: give each head an even number of "
	    "columns");
	cfg.rope_base = 0.0;
	ck_assert_int_eq(attn_rope_check(&cfg, 4, &err), ATTN_ERR_USAGE);
	ck_assert_str_eq(err.msg,
	    "the RoPE base must be a finite number above 0");
	cfg.rope_base = INFINITY;
	ck_assert_int_eq(attn_rope_check(&cfg, 4, &err), ATTN_ERR_USAGE);
	/* without RoPE nothing is checked */
	cfg.rope = 0;
	ck_assert_int_eq(attn_rope_check(&cfg, 3, &err), ATTN_OK);
}
END_TEST

/* ---------------------------------------------------------------- runs */

/* attn --rope --no-scale on the recorded q and k: q_rot, k_rot and the
 * scores torch computed (q_rot @ k_rot^T per head; a cached case is
 * bottom-right, query i at S - T + i). */
KERNEL_TEST(a_run_with_rope_reproduces_the_recorded_scores,
    STAGE(SCORES) | STAGE(Q_ROT) | STAGE(K_ROT))
{
	const struct rope_torch_case *t = &rope_torch_cases[_i];
	struct attn_matrix q = matrix_from(t->T, t->H * t->d, t->q);
	struct attn_matrix k = matrix_from(t->S, t->G * t->d, t->k);
	struct attn_matrix v = matrix_from(t->S, t->G, t->k);
	struct attn_config cfg;
	struct attn_inputs in;
	struct attn_stages st;
	size_t h, i, j;

	rope_config(&cfg, t->style, t->base);
	cfg.heads = t->H;
	cfg.kv_heads = t->G;
	cfg.scale_mode = ATTN_SCALE_NONE;
	cfg.align = t->offset != 0 ? ATTN_ALIGN_BOTTOM_RIGHT :
	    ATTN_ALIGN_TOP_LEFT;
	ck_assert_uint_eq(t->offset, t->offset != 0 ? t->S - t->T : 0);
	memset(&in, 0, sizeof in);
	in.batches = 1;
	in.q = q;
	in.k = k;
	in.v = v;
	run_ok(kernel, &cfg, &in, stages, &st);
	expect_rotated(t->name, &q, &st.stage[ATTN_STAGE_Q_ROT], t->q_rot,
	    t->d, t->style, (double)t->offset);
	expect_rotated(t->name, &k, &st.stage[ATTN_STAGE_K_ROT], t->k_rot,
	    t->d, t->style, 0.0);
	for (h = 0; h < t->H; h++)
		for (i = 0; i < t->T; i++)
			for (j = 0; j < t->S; j++) {
				const double want = t->scores[(h * t->T + i) *
				    t->S + j];

				ck_assert_msg(fabs(stage_at(&st,
				    ATTN_STAGE_SCORES, h * t->T + i, j) -
				    want) <= 1e-14 * (1.0 + fabs(want)),
				    "%s: scores[%zu][%zu][%zu] is %.17g, torch "
				    "%.17g", t->name, h, i, j, stage_at(&st,
				    ATTN_STAGE_SCORES, h * t->T + i, j), want);
			}
	attn_stages_free(&st);
	attn_matrix_free(&q);
	attn_matrix_free(&k);
	attn_matrix_free(&v);
}
END_TEST

/*
 * RoPE's point: with q = k = the same row c at every position, score
 * (i, j) = <R(i + offset) c, R(j) c> = <c, R(j - i - offset) c> depends
 * only on the distance, in both styles and both alignments.
 */
KERNEL_TEST(scores_of_a_constant_row_depend_only_on_i_minus_j,
    STAGE(SCORES))
{
	const size_t T = _i / 2 % 2 ? 5 : 9, S = 9, d = 8;
	struct ref_rng rng;
	struct attn_matrix c, q, k, v;
	struct attn_config cfg;
	struct attn_inputs in;
	struct attn_stages st;
	size_t i, j;

	ref_rng_seed(&rng, 123 + (uint64_t)_i);
	c = matrix_random(&rng, 1, d, -1, 1);
	ck_assert_int_eq(attn_matrix_alloc(&q, T, d, NULL), ATTN_OK);
	ck_assert_int_eq(attn_matrix_alloc(&k, S, d, NULL), ATTN_OK);
	ck_assert_int_eq(attn_matrix_alloc(&v, S, 1, NULL), ATTN_OK);
	for (i = 0; i < T; i++)
		memcpy(attn_at(&q, i, 0), c.data, d * sizeof(double));
	for (j = 0; j < S; j++)
		memcpy(attn_at(&k, j, 0), c.data, d * sizeof(double));
	rope_config(&cfg, _i % 2 ? ATTN_ROPE_INTERLEAVED : ATTN_ROPE_HALF,
	    10000.0);
	cfg.align = T != S ? ATTN_ALIGN_BOTTOM_RIGHT : ATTN_ALIGN_TOP_LEFT;
	memset(&in, 0, sizeof in);
	in.batches = 1;
	in.q = q;
	in.k = k;
	in.v = v;
	run_ok(kernel, &cfg, &in, stages, &st);
	/* (i, j) and (i + 1, j + 1) are the same distance apart */
	for (i = 0; i + 1 < T; i++)
		for (j = 0; j + 1 < S; j++)
			ck_assert_double_eq_tol(stage_at(&st, ATTN_STAGE_SCORES,
			    i + 1, j + 1), stage_at(&st, ATTN_STAGE_SCORES, i,
			    j), 64 * DBL_EPSILON);
	/* at distance 0 nothing turns: the score is |c|^2 */
	{
		double norm = 0.0;

		for (j = 0; j < d; j++)
			norm += c.data[j] * c.data[j];
		ck_assert_double_eq_tol(stage_at(&st, ATTN_STAGE_SCORES, 0,
		    S - T), norm, 64 * DBL_EPSILON);
	}
	attn_stages_free(&st);
	attn_matrix_free(&c);
	attn_matrix_free(&q);
	attn_matrix_free(&k);
	attn_matrix_free(&v);
}
END_TEST

/*
 * A whole run with RoPE (heads, GQA, batches, both styles and
 * alignments, a mask) against the long double reference: q and k
 * rotated by ref_rope, rounded to double, then ref_run.  The rounding is
 * the only double step of the reference, and it moves the result by
 * less than the tolerance.
 */
KERNEL_TEST(a_run_with_rope_matches_the_long_double_reference,
    STAGE(WEIGHTS) | STAGE(OUTPUT) | STAGE(LSE))
{
	struct ref_rng rng;
	const size_t B = 2, H = 4, G = _i % 2 ? 2 : 4, d_k = 6, d_v = 3;
	const size_t T = 4, S = _i / 2 % 2 ? 7 : 4;
	const int inter = _i / 4 % 2, br = _i / 2 % 2;
	struct attn_matrix q, k, v;
	struct attn_config cfg;
	struct attn_inputs in;
	struct attn_stages st;
	struct ref_config rc;
	struct ref_problem rp;
	struct ref_stages r;
	long double *qr, *kr;
	double *qd, *kd;
	size_t n, i, row;

	ref_rng_seed(&rng, 0x20E0u + (uint64_t)_i);
	q = matrix_random(&rng, B * T, H * d_k, -1, 1);
	k = matrix_random(&rng, B * S, G * d_k, -1, 1);
	v = matrix_random(&rng, B * S, G * d_v, -1, 1);
	rope_config(&cfg, inter ? ATTN_ROPE_INTERLEAVED : ATTN_ROPE_HALF,
	    500000.0);
	cfg.heads = H;
	cfg.kv_heads = G;
	cfg.causal = 1;
	cfg.align = br ? ATTN_ALIGN_BOTTOM_RIGHT : ATTN_ALIGN_TOP_LEFT;
	memset(&in, 0, sizeof in);
	in.batches = B;
	in.q = q;
	in.k = k;
	in.v = v;
	run_ok(kernel, &cfg, &in, stages, &st);

	qr = malloc(B * T * H * d_k * sizeof *qr);
	kr = malloc(B * S * G * d_k * sizeof *kr);
	qd = malloc(B * T * H * d_k * sizeof *qd);
	kd = malloc(B * S * G * d_k * sizeof *kd);
	ck_assert(qr != NULL && kr != NULL && qd != NULL && kd != NULL);
	ref_rope(q.data, B * T, T, H, d_k, br ? (long double)S -
	    (long double)T : 0.0L, 500000.0L, inter, 1.0L, qr);
	ref_rope(k.data, B * S, S, G, d_k, 0.0L, 500000.0L, inter, 1.0L, kr);
	for (n = 0; n < B * T * H * d_k; n++)
		qd[n] = (double)qr[n];
	for (n = 0; n < B * S * G * d_k; n++)
		kd[n] = (double)kr[n];
	ref_config_init(&rc);
	rc.scale = 1.0L / sqrtl((long double)d_k);
	rc.causal = 1;
	rc.bottom_right = br;
	memset(&rp, 0, sizeof rp);
	rp.B = B;
	rp.H = H;
	rp.G = G;
	rp.T = T;
	rp.S = S;
	rp.d_k = d_k;
	rp.d_v = d_v;
	rp.q = qd;
	rp.k = kd;
	rp.v = v.data;
	ck_assert_int_eq(ref_run(&rc, &rp, &r), 0);
	for (row = 0; row < B * H * T; row++) {
		for (i = 0; i < S; i++)
			ck_assert_ldouble_eq_tol((long double)stage_at(&st,
			    ATTN_STAGE_WEIGHTS, row, i), r.weights[row * S + i],
			    1e-13L);
		ck_assert_ldouble_eq_tol((long double)stage_at(&st,
		    ATTN_STAGE_LSE, row, 0), r.lse[row], 1e-13L);
	}
	for (n = 0; n < B * T * H * d_v; n++)
		ck_assert_ldouble_eq_tol(
		    (long double)st.stage[ATTN_STAGE_OUTPUT].data[n],
		    r.output[n], 1e-13L);
	ref_stages_free(&r);
	free(qr);
	free(kr);
	free(qd);
	free(kd);
	attn_stages_free(&st);
	attn_matrix_free(&q);
	attn_matrix_free(&k);
	attn_matrix_free(&v);
}
END_TEST

START_TEST(a_run_with_rope_and_an_odd_d_k_is_refused)
{
	static const double x[] = { 1, 2, 3, 4, 5, 6 };
	struct attn_matrix q = matrix_from(1, 6, x);
	struct attn_config cfg;
	struct attn_inputs in;
	struct attn_stages st;
	struct attn_error err;
	size_t bytes;

	rope_config(&cfg, ATTN_ROPE_HALF, 10000.0);
	cfg.heads = 2;
	memset(&in, 0, sizeof in);
	in.batches = 1;
	in.q = in.k = in.v = q;
	ck_assert_int_eq(attn_run(&cfg, &in, STAGE(OUTPUT), &st, &err),
	    ATTN_ERR_DATA);
	ck_assert_str_eq(err.msg, "RoPE rotates pairs of columns, but d_k per "
	    "head is 3, an odd number: give each head an even number of "
	    "columns");
	ck_assert_int_eq(attn_plan(&cfg, &in, STAGE(OUTPUT), &bytes, &err),
	    ATTN_ERR_DATA);
	cfg.heads = 3;
	ck_assert_int_eq(attn_run(&cfg, &in, STAGE(OUTPUT), &st, &err),
	    ATTN_OK);
	attn_stages_free(&st);
	attn_matrix_free(&q);
}
END_TEST

Suite *
rope_suite(void)
{
	Suite *s = suite_create("rope");
	TCase *tc = tcase_create("rotation");

	tcase_add_test(tc, rotation_matches_the_long_double_reference);
	tcase_add_loop_test(tc, rotation_keeps_norms_and_turns_back, 0, 2);
	tcase_add_loop_test(tc, rotation_reproduces_hugging_face_llama_and_gptj,
	    0, (int)(sizeof rope_torch_cases / sizeof rope_torch_cases[0]));
	tcase_add_test(tc, the_two_styles_differ_but_for_one_pair);
	tcase_add_test(tc, an_odd_d_k_or_a_bad_base_is_refused);
	suite_add_tcase(s, tc);

	tc = tcase_create("runs");
	tcase_add_kernel_test(tc,
	    a_run_with_rope_reproduces_the_recorded_scores, 0,
	    (int)(sizeof rope_torch_cases / sizeof rope_torch_cases[0]));
	tcase_add_kernel_test(tc,
	    scores_of_a_constant_row_depend_only_on_i_minus_j, 0, 4);
	tcase_add_kernel_test(tc,
	    a_run_with_rope_matches_the_long_double_reference, 0, 8);
	tcase_add_test(tc, a_run_with_rope_and_an_odd_d_k_is_refused);
	suite_add_tcase(s, tc);
	return s;
}
