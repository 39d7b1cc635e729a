/*
 * check_rope.c - rotary position embedding (lib/rope.c, and attn_run with
 * cfg.rope through lib/passes.c): the rotation against the long double
 * reference (tests/ref/ref_rope.c) on seeded random rows of both styles,
 * bases and offsets; against numbers that Hugging Face's Llama code
 * (half) and GPT-J's formula (interleaved) produced, recorded by
 * rope_torch.py in rope_torch.h, rotations and scores, cached keys
 * (bottom-right alignment) and GQA included; rotations keep norms and
 * turn back with the opposite sign; on every kernel, scores of a
 * constant row depend only on i - j, whole runs agree with the reference,
 * and --grad's grad_q and grad_k, turned back through the rotation, are
 * the gradients with respect to the unrotated q and k (finite differences
 * of the long double forward pass); and the checks on the base and d_k.
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

/* A random problem with RoPE: heads and GQA, batches, both styles and
 * alignments, causal half the time, T != S half the time, and dO for
 * the backward pass. */
struct rope_case {
	size_t B, H, G, T, S, d_k, d_v;
	struct attn_config cfg;
	struct attn_inputs in;
	struct attn_matrix q, k, v, d_out;
	struct ref_config rc;
	struct ref_problem rp;
};

static void
rope_case_make(struct rope_case *c, uint64_t seed)
{
	static const double bases[] = { 10000.0, 500000.0, 100.0 };
	struct ref_rng rng;

	memset(c, 0, sizeof *c);
	ref_rng_seed(&rng, seed);
	c->B = ref_rng_range(&rng, 1, 2);
	c->H = ref_rng_range(&rng, 1, 2) * 2;
	c->G = ref_rng_range(&rng, 0, 1) ? c->H : c->H / 2;
	c->T = ref_rng_range(&rng, 1, 5);
	c->S = ref_rng_range(&rng, 0, 1) ? c->T : ref_rng_range(&rng, 1, 6);
	c->d_k = 2 * ref_rng_range(&rng, 1, 3);
	c->d_v = ref_rng_range(&rng, 1, 3);
	rope_config(&c->cfg, ref_rng_range(&rng, 0, 1) ?
	    ATTN_ROPE_INTERLEAVED : ATTN_ROPE_HALF,
	    bases[ref_rng_range(&rng, 0, 2)]);
	c->cfg.heads = c->H;
	c->cfg.kv_heads = c->G;
	c->cfg.causal = (int)ref_rng_range(&rng, 0, 1);
	c->cfg.align = ref_rng_range(&rng, 0, 1) ? ATTN_ALIGN_BOTTOM_RIGHT :
	    ATTN_ALIGN_TOP_LEFT;
	c->q = matrix_random(&rng, c->B * c->T, c->H * c->d_k, -1, 1);
	c->k = matrix_random(&rng, c->B * c->S, c->G * c->d_k, -1, 1);
	c->v = matrix_random(&rng, c->B * c->S, c->G * c->d_v, -1, 1);
	c->d_out = matrix_random(&rng, c->B * c->T, c->H * c->d_v, -1, 1);
	c->in.batches = c->B;
	c->in.q = c->q;
	c->in.k = c->k;
	c->in.v = c->v;
	c->in.d_out = c->d_out;

	/* the reference rotates in long double itself */
	ref_config_init(&c->rc);
	c->rc.scale = 1.0L / sqrtl((long double)c->d_k);
	c->rc.causal = c->cfg.causal;
	c->rc.bottom_right = c->cfg.align == ATTN_ALIGN_BOTTOM_RIGHT;
	c->rc.rope = 1;
	c->rc.rope_base = (long double)c->cfg.rope_base;
	c->rc.rope_interleaved = c->cfg.rope_style == ATTN_ROPE_INTERLEAVED;
	c->rp.B = c->B;
	c->rp.H = c->H;
	c->rp.G = c->G;
	c->rp.T = c->T;
	c->rp.S = c->S;
	c->rp.d_k = c->d_k;
	c->rp.d_v = c->d_v;
	c->rp.q = c->q.data;
	c->rp.k = c->k.data;
	c->rp.v = c->v.data;
}

static void
rope_case_free(struct rope_case *c)
{
	attn_matrix_free(&c->q);
	attn_matrix_free(&c->k);
	attn_matrix_free(&c->v);
	attn_matrix_free(&c->d_out);
}

/*
 * Whole runs with RoPE against the long double reference, which rotates
 * by the paper's formula itself: weights, output and lse to 1e-13.
 */
KERNEL_TEST(a_run_with_rope_matches_the_long_double_reference,
    STAGE(WEIGHTS) | STAGE(OUTPUT) | STAGE(LSE))
{
	int n;

	for (n = 0; n < 10; n++) {
		struct rope_case c;
		struct attn_stages st;
		struct ref_stages r;
		size_t row, j, x;

		rope_case_make(&c, 0x20E0u + (uint64_t)(_i * 10 + n));
		c.in.d_out.data = NULL;
		run_ok(kernel, &c.cfg, &c.in, stages, &st);
		ck_assert_int_eq(ref_run(&c.rc, &c.rp, &r), 0);
		for (row = 0; row < c.B * c.H * c.T; row++) {
			for (j = 0; j < c.S; j++)
				ck_assert_ldouble_eq_tol((long double)stage_at(
				    &st, ATTN_STAGE_WEIGHTS, row, j),
				    r.weights[row * c.S + j], 1e-13L);
			/* -inf for a row that causal bottom-right leaves
			 * without a key */
			if (isinf(r.lse[row]))
				ck_assert_ldouble_eq((long double)stage_at(&st,
				    ATTN_STAGE_LSE, row, 0), r.lse[row]);
			else
				ck_assert_ldouble_eq_tol((long double)stage_at(
				    &st, ATTN_STAGE_LSE, row, 0), r.lse[row],
				    1e-13L);
		}
		for (x = 0; x < c.B * c.T * c.H * c.d_v; x++)
			ck_assert_ldouble_eq_tol((long double)
			    st.stage[ATTN_STAGE_OUTPUT].data[x], r.output[x],
			    1e-13L);
		ref_stages_free(&r);
		attn_stages_free(&st);
		rope_case_free(&c);
	}
}
END_TEST

/*
 * --grad through RoPE: grad_q and grad_k are the gradients of
 * L = sum(dO * output) with respect to the q and k before the rotation,
 * as central finite differences of the long double forward pass (which
 * rotates them itself) give them, for every element; grad_v as well.
 * The tolerance is check_grad.c's: |a - fd| <= 1e-7 (|fd| + 1e-5 scale),
 * scale the largest |fd| of the case.
 */
KERNEL_TEST(grad_through_rope_matches_finite_differences,
    STAGE(GRAD_Q) | STAGE(GRAD_K) | STAGE(GRAD_V))
{
	static const enum attn_stage grad[3] = {
		ATTN_STAGE_GRAD_Q, ATTN_STAGE_GRAD_K, ATTN_STAGE_GRAD_V
	};
	int n;

	for (n = 0; n < 5; n++) {
		struct rope_case c;
		struct attn_stages st;
		long double fd, scale = 0.0L, *all[3];
		size_t sizes[3], w, e;

		rope_case_make(&c, 0x6AD0u + (uint64_t)(_i * 5 + n));
		run_ok(kernel, &c.cfg, &c.in, stages, &st);
		sizes[0] = c.q.rows * c.q.cols;
		sizes[1] = c.k.rows * c.k.cols;
		sizes[2] = c.v.rows * c.v.cols;
		for (w = 0; w < 3; w++) {
			all[w] = malloc(sizes[w] * sizeof *all[w]);
			ck_assert_ptr_nonnull(all[w]);
			for (e = 0; e < sizes[w]; e++) {
				ck_assert_int_eq(ref_fd_grad(&c.rc, &c.rp,
				    c.d_out.data, (enum ref_input)w, e, &fd),
				    0);
				all[w][e] = fd;
				scale = fabsl(fd) > scale ? fabsl(fd) : scale;
			}
		}
		for (w = 0; w < 3; w++) {
			for (e = 0; e < sizes[w]; e++) {
				const double a = st.stage[grad[w]].data[e];

				ck_assert_msg(fabsl((long double)a -
				    all[w][e]) <= 1e-7L * (fabsl(all[w][e]) +
				    1e-5L * scale), "case %d.%d (%s, H=%zu "
				    "G=%zu T=%zu S=%zu d_k=%zu): %s[%zu] is "
				    "%.17g, finite difference %.17Lg", _i, n,
				    c.cfg.rope_style == ATTN_ROPE_HALF ? "half" :
				    "interleaved", c.H, c.G, c.T, c.S, c.d_k,
				    attn_stage_table[grad[w]].name, e, a,
				    all[w][e]);
			}
			free(all[w]);
		}
		attn_stages_free(&st);
		rope_case_free(&c);
	}
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
	    a_run_with_rope_matches_the_long_double_reference, 0, 4);
	tcase_add_kernel_test(tc, grad_through_rope_matches_finite_differences,
	    0, 4);
	tcase_add_test(tc, a_run_with_rope_and_an_odd_d_k_is_refused);
	suite_add_tcase(s, tc);
	return s;
}
