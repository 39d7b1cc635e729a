/*
 * check_grad.c - the backward stages (lib/grad.c), on every kernel that
 * computes them (KERNEL_TEST in testutil.h): grad_weights, delta,
 * grad_scaled, grad_q, grad_k and grad_v, the gradients of
 * L = sum(dO * output).
 *
 * Four independent checks: a case worked by hand; the long double
 * backward of tests/ref on several hundred random variants (vcase.h), to
 * 1e-12 of the magnitude involved; central finite differences of L in
 * long double through the forward reference, which know no formula for
 * a derivative, to 1e-7; and one case recorded from PyTorch autograd
 * (grad_torch.h, made by grad_torch.py next to this file).  Then the
 * decisions attn(1) makes itself: rows with no key under each policy,
 * masked entries, the bias's gradient, overflow.
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

#include "ref.h"
#include "suites.h"
#include "testutil.h"
#include "vcase.h"

/* The backward stages and the forward ones they are read with. */
#define EVERY (ATTN_STAGES_ALL | ATTN_STAGES_GRAD)

/* B batches of q, k and v without mask or bias, with dO: views. */
static void
grad_inputs(struct attn_inputs *in, size_t B, const struct attn_matrix *q,
    const struct attn_matrix *k, const struct attn_matrix *v,
    const struct attn_matrix *d_out)
{
	memset(in, 0, sizeof *in);
	in->batches = B;
	in->q = *q;
	in->k = *k;
	in->v = *v;
	in->d_out = *d_out;
}

/* ------------------------------------------------------------ by hand */

/*
 * The worked example of the README, one query (1, 0), keys apple (1, 0)
 * and cheese (0, 1), values (10, 0) and (0, 10), with dO = (1, 0).  With
 * s = 1/sqrt(2) and p = 1 / (1 + e^-s) the weight of apple:
 *
 *	dP = dO V^T = (10, 0)		delta = dO . output = 10 p
 *	dS = (10 p (1 - p), -10 p (1 - p))
 *	dQ = s (dS_1 K_1 + dS_2 K_2) = s (10 p (1 - p), -10 p (1 - p))
 *	dK = s dS^T Q = s ((10 p (1 - p), 0), (-10 p (1 - p), 0))
 *	dV = P^T dO = ((p, 0), (1 - p, 0))
 */
KERNEL_TEST(worked_example_gives_the_gradients_by_hand, EVERY)
{
	static const double qv[] = { 1, 0 }, kv[] = { 1, 0, 0, 1 };
	static const double vv[] = { 10, 0, 0, 10 }, dov[] = { 1, 0 };
	struct attn_matrix q = matrix_from(1, 2, qv);
	struct attn_matrix k = matrix_from(2, 2, kv);
	struct attn_matrix v = matrix_from(2, 2, vv);
	struct attn_matrix d_out = matrix_from(1, 2, dov);
	const double s = 1.0 / sqrt(2.0), p = 1.0 / (1.0 + exp(-s));
	const double g = 10.0 * p * (1.0 - p), tol = 1e-15 * 10.0;
	const double dq[2] = { s * g, -s * g };
	const double dk[2][2] = { { s * g, 0 }, { -s * g, 0 } };
	const double dv[2][2] = { { p, 0 }, { 1 - p, 0 } };
	struct attn_inputs in;
	struct attn_config cfg;
	struct attn_stages st;
	size_t j, c;

	grad_inputs(&in, 1, &q, &k, &v, &d_out);
	attn_config_init(&cfg);
	run_ok(kernel, &cfg, &in, stages, &st);
	ck_assert_double_eq(stage_at(&st, ATTN_STAGE_GRAD_WEIGHTS, 0, 0), 10);
	ck_assert_double_eq(stage_at(&st, ATTN_STAGE_GRAD_WEIGHTS, 0, 1), 0);
	ck_assert_double_eq_tol(stage_at(&st, ATTN_STAGE_DELTA, 0, 0),
	    10.0 * p, tol);
	ck_assert_double_eq_tol(stage_at(&st, ATTN_STAGE_GRAD_SCALED, 0, 0),
	    g, tol);
	ck_assert_double_eq_tol(stage_at(&st, ATTN_STAGE_GRAD_SCALED, 0, 1),
	    -g, tol);
	for (j = 0; j < 2; j++) {
		ck_assert_double_eq_tol(stage_at(&st, ATTN_STAGE_GRAD_Q, 0, j),
		    dq[j], tol);
		for (c = 0; c < 2; c++) {
			ck_assert_double_eq_tol(stage_at(&st,
			    ATTN_STAGE_GRAD_K, j, c), dk[j][c], tol);
			ck_assert_double_eq_tol(stage_at(&st,
			    ATTN_STAGE_GRAD_V, j, c), dv[j][c], tol);
		}
	}
	ck_assert_uint_eq(st.stage[ATTN_STAGE_GRAD_K].rows, 2);
	ck_assert_uint_eq(st.stage[ATTN_STAGE_GRAD_V].rows, 2);
	attn_stages_free(&st);
	attn_matrix_free(&q);
	attn_matrix_free(&k);
	attn_matrix_free(&v);
	attn_matrix_free(&d_out);
}
END_TEST

/* ------------------------------------------------------------ random */

/* Fail, naming the case and the element, unless a matches the
 * reference within tol; nan must be matched by nan. */
static void
expect_near(const struct gcase *g, const char *stage, size_t row,
    size_t col, double a, long double ref, long double tol)
{
	if (isnan(ref) ? isnan(a) :
	    isfinite(a) && fabsl((long double)a - ref) <= tol)
		return;
	ck_abort_msg("%s: %s[%zu][%zu] is %.17g, reference %.20Lg, "
	    "|diff| %.3Lg > %.3Lg", g->c.what, stage, row, col, a, ref,
	    fabsl((long double)a - ref), tol);
}

/*
 * The agreement criterion, with a the library's double and b the
 * reference's long double, for block (b, h) and its KV head g:
 *
 *	grad_weights[i][j]  |a - b| <= 1e-12 * mP_ij,  mP_ij = sum_c |dO_ic V_jc|
 *	delta[i]	    |a - b| <= 1e-12 * mD_i,
 *			    mD_i = sum_c |dO_ic| sum_j |P_ij V_jc|
 *	grad_scaled[i][j]   |a - b| <= 1e-12 * mS_ij,  mS_ij = P_ij (mP_ij + mD_i)
 *	grad_q[i][c]	    |a - b| <= 1e-12 * |scale| sum_j mS_ij |K_jc|
 *	grad_k[j][c]	    |a - b| <= 1e-12 * |scale| sum_h,i mS_ij |Q_ic|
 *	grad_v[j][c]	    |a - b| <= 1e-12 * sum_h,i |P_ij dO_ic|
 *
 * mD_i bounds output's error as well as the products; dS subtracts delta
 * from dP, so its error is relative to both; the softcap's slope is at
 * most 1.  The sums over h run over the query heads of KV head g.
 */
#define GRAD_RTOL 1e-12L

/* The magnitudes mP_ij (into mP[0..S)) and mD_i of row i of block
 * (b, h), reading KV head gh. */
static long double
row_magnitudes(const struct gcase *g, const long double *w, size_t b,
    size_t h, size_t gh, size_t i, long double *mP)
{
	const struct vcase *c = &g->c;
	const double *dO = attn_at(&g->d_out, b * c->T + i, h * c->d_v);
	long double mD = 0.0L;
	size_t j, x;

	for (x = 0; x < c->d_v; x++) {
		long double pv = 0.0L;

		for (j = 0; j < c->S; j++)
			pv += fabsl(w[j] * *attn_at(&c->v, b * c->S + j,
			    gh * c->d_v + x));
		mD += fabsl((long double)dO[x]) * pv;
	}
	for (j = 0; j < c->S; j++) {
		mP[j] = 0.0L;
		for (x = 0; x < c->d_v; x++)
			mP[j] += fabsl(dO[x] * *attn_at(&c->v, b * c->S + j,
			    gh * c->d_v + x));
	}
	return mD;
}

/* Compare every backward stage of st with r (the backward of fwd);
 * returns how many elements were compared. */
static size_t
compare_backward(const struct gcase *g, const struct attn_stages *st,
    const struct ref_stages *fwd, const struct ref_grads *r,
    long double scale)
{
	const struct vcase *c = &g->c;
	const size_t B = c->B, H = c->H, G = c->G, T = c->T, S = c->S;
	const size_t d_k = c->d_k, d_v = c->d_v;
	long double *mk, *mv, *mP;
	size_t b, h, i, j, x, n = 0;

	mk = calloc(S * G * d_k, sizeof *mk);
	mv = calloc(S * G * d_v, sizeof *mv);
	mP = calloc(S, sizeof *mP);
	ck_assert(mk != NULL && mv != NULL && mP != NULL);
	for (b = 0; b < B; b++) {
		memset(mk, 0, S * G * d_k * sizeof *mk);
		memset(mv, 0, S * G * d_v * sizeof *mv);
		for (h = 0; h < H; h++) {
			const size_t gh = h / (H / G);

			for (i = 0; i < T; i++) {
				const size_t row = (b * H + h) * T + i;
				const size_t qrow = b * T + i;
				const double *dO = attn_at(&g->d_out, qrow,
				    h * d_v);
				const long double *w = fwd->weights + row * S;
				const long double mD = row_magnitudes(g, w, b,
				    h, gh, i, mP);

				expect_near(g, "delta", row, 0, block_at(st,
				    ATTN_STAGE_DELTA, b, h, i, 0),
				    r->delta[row], GRAD_RTOL * mD);
				for (j = 0; j < S; j++) {
					const long double mS = fabsl(w[j]) *
					    (mP[j] + mD);

					expect_near(g, "grad_weights", row, j,
					    block_at(st,
					    ATTN_STAGE_GRAD_WEIGHTS, b, h, i,
					    j), r->d_weights[row * S + j],
					    GRAD_RTOL * mP[j]);
					expect_near(g, "grad_scaled", row, j,
					    block_at(st,
					    ATTN_STAGE_GRAD_SCALED, b, h, i,
					    j), r->d_scaled[row * S + j],
					    GRAD_RTOL * mS);
					for (x = 0; x < d_k; x++)
						mk[(j * G + gh) * d_k + x] +=
						    mS * fabsl(*attn_at(&c->q,
						    qrow, h * d_k + x));
					for (x = 0; x < d_v; x++)
						mv[(j * G + gh) * d_v + x] +=
						    fabsl(w[j] * dO[x]);
				}
				for (x = 0; x < d_k; x++) {
					long double mQ = 0.0L;

					for (j = 0; j < S; j++)
						mQ += fabsl(w[j]) * (mP[j] +
						    mD) * fabsl(*attn_at(
						    &c->k, b * S + j,
						    gh * d_k + x));
					expect_near(g, "grad_q", qrow,
					    h * d_k + x, block_at(st,
					    ATTN_STAGE_GRAD_Q, b, h, i, x),
					    r->d_q[qrow * H * d_k + h * d_k +
					    x], GRAD_RTOL * fabsl(scale) * mQ);
				}
				n += 1 + 2 * S + d_k;
			}
		}
		for (j = 0; j < S; j++)
			for (h = 0; h < G; h++) {
				const size_t krow = b * S + j;

				for (x = 0; x < d_k; x++)
					expect_near(g, "grad_k", krow,
					    h * d_k + x, *attn_at(
					    &st->stage[ATTN_STAGE_GRAD_K],
					    krow, h * d_k + x),
					    r->d_k[krow * G * d_k + h * d_k +
					    x], GRAD_RTOL * fabsl(scale) *
					    mk[(j * G + h) * d_k + x]);
				for (x = 0; x < d_v; x++)
					expect_near(g, "grad_v", krow,
					    h * d_v + x, *attn_at(
					    &st->stage[ATTN_STAGE_GRAD_V],
					    krow, h * d_v + x),
					    r->d_v[krow * G * d_v + h * d_v +
					    x], GRAD_RTOL *
					    mv[(j * G + h) * d_v + x]);
				n += d_k + d_v;
			}
	}
	free(mk);
	free(mv);
	free(mP);
	return n;
}

/* Cases per loop iteration, as in check_variants.c: the same seeds, so
 * the same 400 variants, now with a dO each. */
#define GRAD_BATCH 20
#define GRAD_LOOPS 20
#define GRAD_SEED 0x7A41A000u

KERNEL_TEST(backward_matches_the_long_double_reference, EVERY)
{
	int n;

	for (n = 0; n < GRAD_BATCH; n++) {
		struct gcase g;
		struct attn_stages st;
		struct ref_config rc;
		struct ref_problem p;
		struct ref_stages fwd;
		struct ref_grads r;

		gcase_make(&g, GRAD_SEED + (uint64_t)(_i * GRAD_BATCH + n));
		run_ok(kernel, &g.c.cfg, &g.in, stages, &st);
		vcase_ref_problem(&g.c, &rc, &p);
		ck_assert_int_eq(ref_run(&rc, &p, &fwd), 0);
		ck_assert_int_eq(ref_backward(&rc, &p, g.d_out.data, &fwd, &r),
		    0);
		ck_assert_uint_eq(compare_backward(&g, &st, &fwd, &r, rc.scale),
		    g.c.B * (g.c.H * g.c.T * (1 + 2 * g.c.S + g.c.d_k) +
		    g.c.S * g.c.G * (g.c.d_k + g.c.d_v)));
		ref_grads_free(&r);
		ref_stages_free(&fwd);
		attn_stages_free(&st);
		gcase_free(&g);
	}
}
END_TEST

/* ------------------------------------------------ finite differences */

/*
 * The library's gradient of L with respect to element n of an input:
 * grad_q, grad_k or grad_v there; for the bias, the sum of grad_scaled
 * over the batches and heads that read that bias block (a bias shared by
 * all of them collects all their dS).
 */
static double
lib_grad(const struct gcase *g, const struct attn_stages *st,
    enum ref_input which, size_t n)
{
	const struct vcase *c = &g->c;
	const size_t T = c->T, S = c->S;
	double sum = 0.0;
	size_t b, h, blk, i, j;

	switch (which) {
	case REF_INPUT_Q:
		return st->stage[ATTN_STAGE_GRAD_Q].data[n];
	case REF_INPUT_K:
		return st->stage[ATTN_STAGE_GRAD_K].data[n];
	case REF_INPUT_V:
		return st->stage[ATTN_STAGE_GRAD_V].data[n];
	case REF_INPUT_BIAS:
		break;
	}
	blk = n / (T * S);
	i = n % (T * S) / S;
	j = n % S;
	for (b = 0; b < c->B; b++)
		for (h = 0; h < c->H; h++)
			if (ref_block_of(c->bias_blocks, c->B, c->H, b, h) ==
			    blk)
				sum += block_at(st, ATTN_STAGE_GRAD_SCALED, b,
				    h, i, j);
	return sum;
}

/* Elements of each input compared per case, at most: all of them in
 * smaller cases, a seeded sample in larger ones. */
#define FD_SAMPLE 24

/* The tolerance, and what it is relative to: |a - fd| <= FD_RTOL *
 * (|fd| + FD_FLOOR * scale), scale the largest |fd| of the case, so
 * that an element that is nearly 0 by cancellation is held to 1e-12 of
 * its neighbours rather than to 1e-7 of itself.  (Measured: the worst
 * |a - fd| / |fd| is about 1e-9, and |a - fd| / scale about 2e-14.) */
#define FD_RTOL 1e-7L
#define FD_FLOOR 1e-5L

/* For ATTN_FD_REPORT=1 CK_FORK=no: the worst |a - fd| / |fd| and
 * |a - fd| / scale seen, and how many elements were compared. */
static long double fd_worst, fd_worst_scaled;
static size_t fd_count;

/* Compare the library's gradients of the case with finite differences;
 * returns how many elements were compared. */
static size_t
compare_finite_differences(const struct gcase *g,
    const struct attn_stages *st)
{
	static const char *const names[] = { "Q", "K", "V", "bias" };
	const struct vcase *c = &g->c;
	const size_t sizes[] = {
		c->q.rows * c->q.cols, c->k.rows * c->k.cols,
		c->v.rows * c->v.cols,
		c->bias.data != NULL ? c->bias.rows * c->bias.cols : 0,
	};
	struct ref_config rc;
	struct ref_problem p;
	struct ref_rng rng;
	long double fd[4][FD_SAMPLE], scale = 0.0L;
	size_t at[4][FD_SAMPLE], count[4], w, k, n = 0;

	vcase_ref_problem(c, &rc, &p);
	ref_rng_seed(&rng, c->seed ^ 0xFDFDu);
	for (w = 0; w < 4; w++) {
		count[w] = sizes[w] < FD_SAMPLE ? sizes[w] : FD_SAMPLE;
		for (k = 0; k < count[w]; k++) {
			at[w][k] = sizes[w] <= FD_SAMPLE ? k :
			    ref_rng_range(&rng, 0, sizes[w] - 1);
			/* a -inf bias entry has no neighbourhood: its dS is
			 * 0, as masked entries' are */
			if (w == REF_INPUT_BIAS &&
			    isinf(c->bias.data[at[w][k]])) {
				fd[w][k] = 0.0L;
				continue;
			}
			ck_assert_int_eq(ref_fd_grad(&rc, &p, g->d_out.data,
			    (enum ref_input)w, at[w][k], &fd[w][k]), 0);
			if (fabsl(fd[w][k]) > scale)
				scale = fabsl(fd[w][k]);
		}
	}
	for (w = 0; w < 4; w++)
		for (k = 0; k < count[w]; k++) {
			const double a = lib_grad(g, st, (enum ref_input)w,
			    at[w][k]);
			const long double diff = fabsl((long double)a -
			    fd[w][k]);

			ck_assert_msg(diff <= FD_RTOL * (fabsl(fd[w][k]) +
			    FD_FLOOR * scale), "%s: dL/d%s[%zu] is %.17g, "
			    "finite difference %.17Lg", c->what, names[w],
			    at[w][k], a, fd[w][k]);
			if (fd[w][k] != 0.0L && diff / fabsl(fd[w][k]) >
			    fd_worst)
				fd_worst = diff / fabsl(fd[w][k]);
			if (scale > 0.0L && diff / scale > fd_worst_scaled)
				fd_worst_scaled = diff / scale;
			fd_count++;
			n++;
		}
	return n;
}

/* Seeds of their own: the finite differences cost two forward runs per
 * element, so there are fewer cases than above. */
#define FD_BATCH 10
#define FD_LOOPS 12
#define FD_SEED 0x7A41F000u

KERNEL_TEST(backward_matches_finite_differences, EVERY)
{
	int n;

	for (n = 0; n < FD_BATCH; n++) {
		struct gcase g;
		struct attn_stages st;

		gcase_make(&g, FD_SEED + (uint64_t)(_i * FD_BATCH + n));
		/* L is nan when a row with no key is nan */
		if (g.c.cfg.masked_rows == ATTN_MASKED_NAN) {
			g.c.cfg.masked_rows = n % 2 ? ATTN_MASKED_ZERO :
			    ATTN_MASKED_UNIFORM;
			strncat(g.c.what, n % 2 ? ", nan read as zero" :
			    ", nan read as uniform", sizeof g.c.what -
			    strlen(g.c.what) - 1);
		}
		run_ok(kernel, &g.c.cfg, &g.in, stages, &st);
		ck_assert_uint_gt(compare_finite_differences(&g, &st), 0);
		attn_stages_free(&st);
		gcase_free(&g);
	}
	if (getenv("ATTN_FD_REPORT") != NULL)
		fprintf(stderr, "finite differences, after loop %d: %zu "
		    "elements, worst |a - fd| / |fd| %.3Lg, worst |a - fd| / "
		    "scale %.3Lg\n", _i, fd_count, fd_worst, fd_worst_scaled);
}
END_TEST

/* The cases above reach every variant, the two policies of rows with
 * no key that L has a derivative under among them. */
START_TEST(finite_difference_cases_cover_every_variant)
{
	enum {
		BR_CAUSAL, WINDOW, ALIBI, SOFTCAP, BIAS, BIAS_INF, MASK, GQA,
		BATCHES, NO_KEY_ZERO, NO_KEY_UNIFORM, NFEATURES
	};
	static const char *const names[NFEATURES] = {
		"causal bottom-right", "window", "alibi", "softcap", "bias",
		"-inf bias", "mask", "G < H", "B > 1", "a row with no key, zero",
		"a row with no key, uniform",
	};
	size_t count[NFEATURES] = { 0 };
	size_t n, f;

	for (n = 0; n < FD_LOOPS * FD_BATCH; n++) {
		struct gcase g;
		struct ref_stages r;
		const struct attn_config *c = &g.c.cfg;

		gcase_make(&g, FD_SEED + n);
		if (g.c.cfg.masked_rows == ATTN_MASKED_NAN)
			g.c.cfg.masked_rows = n % FD_BATCH % 2 ?
			    ATTN_MASKED_ZERO : ATTN_MASKED_UNIFORM;
		vcase_reference(&g.c, &r);
		count[BR_CAUSAL] += c->causal &&
		    c->align == ATTN_ALIGN_BOTTOM_RIGHT;
		count[WINDOW] += c->window != 0;
		count[ALIBI] += c->alibi != 0;
		count[SOFTCAP] += c->softcap > 0.0;
		count[BIAS] += g.c.bias.data != NULL;
		count[BIAS_INF] += g.c.bias_inf != 0;
		count[MASK] += g.c.mask.data != NULL;
		count[GQA] += g.c.G < g.c.H;
		count[BATCHES] += g.c.B > 1;
		if (r.nmasked > 0)
			count[c->masked_rows == ATTN_MASKED_ZERO ?
			    NO_KEY_ZERO : NO_KEY_UNIFORM]++;
		ref_stages_free(&r);
		gcase_free(&g);
	}
	for (f = 0; f < NFEATURES; f++)
		ck_assert_msg(count[f] >= 8, "only %zu cases with %s",
		    count[f], names[f]);
}
END_TEST

/* ------------------------------------------------------ rows with no key */

/* One run of a T = 3, S = 4 problem whose row 1 the mask empties, under
 * policy, with dO's row 1 scaled by k (0 removes it). */
static void
masked_row_run(enum kernel_id kernel, unsigned stages,
    enum attn_masked_rows policy, double k, struct attn_stages *st,
    struct attn_matrix *v_out, struct attn_matrix *do_out)
{
	static const double mv[] = {
		1, 0, 1, 1,
		0, 0, 0, 0,
		1, 1, 1, 1,
	};
	struct ref_rng rng;
	struct attn_matrix q, kk, v, mask, d_out;
	struct attn_inputs in;
	struct attn_config cfg;
	size_t c;

	ref_rng_seed(&rng, 1600);
	q = matrix_random(&rng, 3, 2, -1, 1);
	kk = matrix_random(&rng, 4, 2, -1, 1);
	v = matrix_random(&rng, 4, 3, -3, 3);
	d_out = matrix_random(&rng, 3, 3, -1, 1);
	for (c = 0; c < 3; c++)
		*attn_at(&d_out, 1, c) *= k;
	mask = matrix_from(3, 4, mv);
	grad_inputs(&in, 1, &q, &kk, &v, &d_out);
	in.mask = mask;
	in.mask_blocks = 1;
	attn_config_init(&cfg);
	cfg.masked_rows = policy;
	cfg.softcap = 3.0;
	run_ok(kernel, &cfg, &in, stages, st);
	attn_matrix_free(&q);
	attn_matrix_free(&kk);
	attn_matrix_free(&mask);
	*v_out = v;
	*do_out = d_out;
}

/*
 * A row with no key: its weights do not depend on its logits, so under
 * zero and uniform it gives Q, K and the bias nothing (dS = 0), and the
 * gradients are those of a dO without that row, except that uniform's
 * output, the mean of V, gives each key's dV 1/S of the row's dO.
 */
KERNEL_TEST(a_row_with_no_key_gives_q_and_k_nothing, EVERY)
{
	const enum attn_masked_rows policy = _i == 0 ? ATTN_MASKED_ZERO :
	    ATTN_MASKED_UNIFORM;
	struct attn_stages st, without;
	struct attn_matrix v, d_out, v2, d_out2;
	size_t j, c;

	masked_row_run(kernel, stages, policy, 1.0, &st, &v, &d_out);
	masked_row_run(kernel, stages, policy, 0.0, &without, &v2, &d_out2);
	ck_assert_uint_eq(st.nmasked, 1);
	for (j = 0; j < 4; j++) {
		ck_assert_double_eq(stage_at(&st, ATTN_STAGE_GRAD_SCALED, 1,
		    j), 0.0);
		ck_assert(!signbit(stage_at(&st, ATTN_STAGE_GRAD_SCALED, 1,
		    j)));
	}
	for (c = 0; c < 2; c++)
		ck_assert_double_eq(stage_at(&st, ATTN_STAGE_GRAD_Q, 1, c),
		    0.0);
	expect_same("grad_k", &st.stage[ATTN_STAGE_GRAD_K],
	    &without.stage[ATTN_STAGE_GRAD_K]);
	expect_same("grad_q", &st.stage[ATTN_STAGE_GRAD_Q],
	    &without.stage[ATTN_STAGE_GRAD_Q]);
	if (policy == ATTN_MASKED_ZERO) {
		ck_assert_double_eq(stage_at(&st, ATTN_STAGE_DELTA, 1, 0), 0);
		expect_same("grad_v", &st.stage[ATTN_STAGE_GRAD_V],
		    &without.stage[ATTN_STAGE_GRAD_V]);
	} else {
		for (j = 0; j < 4; j++)
			for (c = 0; c < 3; c++)
				ck_assert_double_eq_tol(stage_at(&st,
				    ATTN_STAGE_GRAD_V, j, c),
				    stage_at(&without, ATTN_STAGE_GRAD_V, j,
				    c) + *attn_at(&d_out, 1, c) / 4.0, 1e-15);
	}
	attn_stages_free(&st);
	attn_stages_free(&without);
	attn_matrix_free(&v);
	attn_matrix_free(&d_out);
	attn_matrix_free(&v2);
	attn_matrix_free(&d_out2);
}
END_TEST

/* Under --masked-rows nan the row's weights and output are nan, and nan
 * spreads as arithmetic spreads it: to the row's delta, dS and dQ, and
 * to every dK and dV of its KV head; dP = dO V^T stays a number, and so
 * do the other rows' dS and dQ. */
KERNEL_TEST(a_nan_row_spreads_nan_as_autograd_does, EVERY)
{
	struct attn_stages st;
	struct attn_matrix v, d_out;
	size_t i, j, c;

	masked_row_run(kernel, stages, ATTN_MASKED_NAN, 1.0, &st, &v, &d_out);
	ck_assert(isnan(stage_at(&st, ATTN_STAGE_DELTA, 1, 0)));
	for (i = 0; i < 3; i++) {
		for (j = 0; j < 4; j++) {
			ck_assert(isfinite(stage_at(&st,
			    ATTN_STAGE_GRAD_WEIGHTS, i, j)));
			ck_assert(isnan(stage_at(&st, ATTN_STAGE_GRAD_SCALED,
			    i, j)) == (i == 1));
		}
		for (c = 0; c < 2; c++)
			ck_assert(isnan(stage_at(&st, ATTN_STAGE_GRAD_Q, i,
			    c)) == (i == 1));
	}
	for (j = 0; j < 4; j++) {
		for (c = 0; c < 2; c++)
			ck_assert(isnan(stage_at(&st, ATTN_STAGE_GRAD_K, j,
			    c)));
		for (c = 0; c < 3; c++)
			ck_assert(isnan(stage_at(&st, ATTN_STAGE_GRAD_V, j,
			    c)));
	}
	attn_stages_free(&st);
	attn_matrix_free(&v);
	attn_matrix_free(&d_out);
}
END_TEST

/* A masked entry's dS is +0, not -0, so that tables print 0; the keys
 * that masks remove get no dV from that query. */
KERNEL_TEST(masked_entries_have_a_plus_zero_gradient, EVERY)
{
	struct attn_stages st;
	struct attn_matrix v, d_out;
	size_t i, j;

	masked_row_run(kernel, stages, ATTN_MASKED_ZERO, 1.0, &st, &v, &d_out);
	for (i = 0; i < 3; i++)
		for (j = 0; j < 4; j++)
			if (stage_at(&st, ATTN_STAGE_MASK, i, j) == 0.0) {
				ck_assert_double_eq(stage_at(&st,
				    ATTN_STAGE_GRAD_SCALED, i, j), 0.0);
				ck_assert(!signbit(stage_at(&st,
				    ATTN_STAGE_GRAD_SCALED, i, j)));
			}
	attn_stages_free(&st);
	attn_matrix_free(&v);
	attn_matrix_free(&d_out);
}
END_TEST

/* ------------------------------------------------------------ overflow */

/* dO V^T past DBL_MAX: a data error that names the element, as a score
 * that overflows is. */
KERNEL_TEST(a_gradient_that_overflows_is_a_data_error, EVERY)
{
	static const double qv[] = { 1, 0, 0, 1 }, kv[] = { 1, 0, 0, 1 };
	static const double vv[] = { 1, 2, 3e200, 4 };
	static const double dov[] = { 1, 1, 2e200, 1 };
	struct attn_matrix q = matrix_from(2, 2, qv);
	struct attn_matrix k = matrix_from(2, 2, kv);
	struct attn_matrix v = matrix_from(2, 2, vv);
	struct attn_matrix d_out = matrix_from(2, 2, dov);
	struct attn_inputs in;
	struct attn_config cfg;
	struct attn_stages st;
	struct attn_error err;

	grad_inputs(&in, 1, &q, &k, &v, &d_out);
	attn_config_init(&cfg);
	memset(&err, 0, sizeof err);
	ck_assert_int_eq(run_kernel(kernel, &cfg, &in, stages, &st, &err),
	    ATTN_ERR_DATA);
	ck_assert_str_eq(err.msg, "grad_weights of query 2 and key 2 "
	    "overflows a double (the values of dO, Q, K or V are too large)");
	ck_assert_ptr_null(st.stage[ATTN_STAGE_GRAD_WEIGHTS].data);
	attn_matrix_free(&q);
	attn_matrix_free(&k);
	attn_matrix_free(&v);
	attn_matrix_free(&d_out);
}
END_TEST

/* grad_q = dS K sums +inf and -inf to nan where its exact value is 0
 * (q = 1e-300, both keys 1e300, values 1e10 and -1e10): refused where it
 * is, as an infinity is, not a silent nan. */
KERNEL_TEST(a_gradient_that_overflows_to_nan_is_a_data_error, EVERY)
{
	static const double qv[] = { 1e-300 }, kv[] = { 1e300, 1e300 };
	static const double vv[] = { 1e10, -1e10 }, dov[] = { 1 };
	struct attn_matrix q = matrix_from(1, 1, qv);
	struct attn_matrix k = matrix_from(2, 1, kv);
	struct attn_matrix v = matrix_from(2, 1, vv);
	struct attn_matrix d_out = matrix_from(1, 1, dov);
	struct attn_inputs in;
	struct attn_config cfg;
	struct attn_stages st;
	struct attn_error err;

	grad_inputs(&in, 1, &q, &k, &v, &d_out);
	attn_config_init(&cfg);
	cfg.scale_mode = ATTN_SCALE_NONE;
	memset(&err, 0, sizeof err);
	ck_assert_int_eq(run_kernel(kernel, &cfg, &in, stages, &st, &err),
	    ATTN_ERR_DATA);
	ck_assert_str_eq(err.msg, "grad_q of query 1, column 1 overflows a "
	    "double (the values of dO, Q, K or V are too large)");
	attn_matrix_free(&q);
	attn_matrix_free(&k);
	attn_matrix_free(&v);
	attn_matrix_free(&d_out);
}
END_TEST

/* ------------------------------------------------------------ PyTorch */

#include "grad_torch.h"

/* Within 1e-12 of torch's number, or of 1e-12 when it is below 1: both
 * are float64, summed in different orders. */
static void
expect_torch(const char *what, size_t n, double a, double b)
{
	ck_assert_msg(fabs(a - b) <= 1e-12 * (fabs(b) > 1.0 ? fabs(b) : 1.0),
	    "%s[%zu]: %.17g, PyTorch %.17g", what, n, a, b);
}

/* Every element of a held stage against torch's array of it, both in
 * attn's layout. */
static void
expect_torch_stage(const struct attn_stages *st, enum attn_stage s,
    const double *want, size_t count)
{
	const struct attn_matrix *m = &st->stage[s];
	size_t n;

	ck_assert_uint_eq(m->rows * m->cols, count);
	for (n = 0; n < count; n++)
		expect_torch(attn_stage_table[s].name, n,
		    *attn_at(m, n / m->cols, n % m->cols), want[n]);
}

#define COUNT(a) (sizeof (a) / sizeof (a)[0])

/* The case grad_torch.py ran through PyTorch 1.13's autograd: GQA,
 * batches, softcap, ALiBi, a bias with -inf, causal bottom-right. */
KERNEL_TEST(backward_matches_pytorch_autograd, EVERY)
{
	const size_t B = TORCH_B, H = TORCH_H, T = TORCH_T, S = TORCH_S;
	struct attn_matrix q = matrix_from(B * T, H * TORCH_DK, torch_q);
	struct attn_matrix k = matrix_from(B * S, TORCH_G * TORCH_DK,
	    torch_k);
	struct attn_matrix v = matrix_from(B * S, TORCH_G * TORCH_DV,
	    torch_v);
	struct attn_matrix bias = matrix_from(T, S, torch_bias);
	struct attn_matrix d_out = matrix_from(B * T, H * TORCH_DV,
	    torch_d_out);
	struct attn_inputs in;
	struct attn_config cfg;
	struct attn_stages st;
	size_t b, h, n;

	grad_inputs(&in, B, &q, &k, &v, &d_out);
	in.bias = bias;
	in.bias_blocks = 1;
	attn_config_init(&cfg);
	cfg.heads = H;
	cfg.kv_heads = TORCH_G;
	cfg.causal = 1;
	cfg.align = ATTN_ALIGN_BOTTOM_RIGHT;
	cfg.alibi = 1;
	cfg.softcap = TORCH_SOFTCAP;
	run_ok(kernel, &cfg, &in, stages, &st);
	expect_torch_stage(&st, ATTN_STAGE_OUTPUT, torch_output,
	    COUNT(torch_output));
	expect_torch_stage(&st, ATTN_STAGE_GRAD_WEIGHTS, torch_grad_weights,
	    COUNT(torch_grad_weights));
	expect_torch_stage(&st, ATTN_STAGE_GRAD_SCALED, torch_grad_scaled,
	    COUNT(torch_grad_scaled));
	expect_torch_stage(&st, ATTN_STAGE_GRAD_Q, torch_grad_q,
	    COUNT(torch_grad_q));
	expect_torch_stage(&st, ATTN_STAGE_GRAD_K, torch_grad_k,
	    COUNT(torch_grad_k));
	expect_torch_stage(&st, ATTN_STAGE_GRAD_V, torch_grad_v,
	    COUNT(torch_grad_v));
	/* the bias that every batch and head shares collects all their dS */
	for (n = 0; n < T * S; n++) {
		double sum = 0.0;

		for (b = 0; b < B; b++)
			for (h = 0; h < H; h++)
				sum += block_at(&st, ATTN_STAGE_GRAD_SCALED, b,
				    h, n / S, n % S);
		expect_torch("grad_bias", n, sum, torch_grad_bias[n]);
	}
	attn_stages_free(&st);
	attn_matrix_free(&q);
	attn_matrix_free(&k);
	attn_matrix_free(&v);
	attn_matrix_free(&bias);
	attn_matrix_free(&d_out);
}
END_TEST

/* ------------------------------------------------------------ blocks */

/* attn_stage_block of grad_k and grad_v for query head h is the block of
 * the KV head h reads: H = 4, G = 2, so heads 2 and 3 share KV head 1. */
KERNEL_TEST(the_block_of_grad_k_is_the_kv_head_of_the_query_head, EVERY)
{
	struct ref_rng rng;
	struct attn_matrix q, k, v, d_out, blk;
	struct attn_inputs in;
	struct attn_config cfg;
	struct attn_stages st;
	size_t h;

	ref_rng_seed(&rng, 1700);
	q = matrix_random(&rng, 3, 4 * 2, -1, 1);
	k = matrix_random(&rng, 5, 2 * 2, -1, 1);
	v = matrix_random(&rng, 5, 2 * 3, -1, 1);
	d_out = matrix_random(&rng, 3, 4 * 3, -1, 1);
	grad_inputs(&in, 1, &q, &k, &v, &d_out);
	attn_config_init(&cfg);
	cfg.heads = 4;
	cfg.kv_heads = 2;
	run_ok(kernel, &cfg, &in, stages, &st);
	for (h = 0; h < 4; h++) {
		blk = attn_stage_block(&st, ATTN_STAGE_GRAD_K, 0, h);
		ck_assert_uint_eq(blk.rows, 5);
		ck_assert_uint_eq(blk.cols, 2);
		ck_assert_ptr_eq(blk.data, st.stage[ATTN_STAGE_GRAD_K].data +
		    h / 2 * 2);
		blk = attn_stage_block(&st, ATTN_STAGE_GRAD_V, 0, h);
		ck_assert_uint_eq(blk.cols, 3);
		ck_assert_ptr_eq(blk.data, st.stage[ATTN_STAGE_GRAD_V].data +
		    h / 2 * 3);
		blk = attn_stage_block(&st, ATTN_STAGE_GRAD_Q, 0, h);
		ck_assert_uint_eq(blk.rows, 3);
		ck_assert_ptr_eq(blk.data, st.stage[ATTN_STAGE_GRAD_Q].data +
		    h * 2);
	}
	attn_stages_free(&st);
	/* a stage not held is an empty block */
	memset(&st, 0, sizeof st);
	st.batches = 1;
	st.heads = 4;
	st.kv_heads = 2;
	blk = attn_stage_block(&st, ATTN_STAGE_GRAD_K, 0, 3);
	ck_assert_uint_eq(blk.rows * blk.cols, 0);
	ck_assert_ptr_null(blk.data);
	attn_matrix_free(&q);
	attn_matrix_free(&k);
	attn_matrix_free(&v);
	attn_matrix_free(&d_out);
}
END_TEST

Suite *
grad_suite(void)
{
	Suite *s = suite_create("grad");
	TCase *tc = tcase_create("by hand");

	tcase_add_kernel_test(tc, worked_example_gives_the_gradients_by_hand,
	    0, 1);
	tcase_add_kernel_test(tc, backward_matches_pytorch_autograd, 0, 1);
	tcase_add_kernel_test(tc,
	    the_block_of_grad_k_is_the_kv_head_of_the_query_head, 0, 1);
	suite_add_tcase(s, tc);

	tc = tcase_create("decisions");
	tcase_add_kernel_test(tc, a_row_with_no_key_gives_q_and_k_nothing, 0,
	    2);
	tcase_add_kernel_test(tc, a_nan_row_spreads_nan_as_autograd_does, 0,
	    1);
	tcase_add_kernel_test(tc, masked_entries_have_a_plus_zero_gradient, 0,
	    1);
	tcase_add_kernel_test(tc, a_gradient_that_overflows_is_a_data_error,
	    0, 1);
	tcase_add_kernel_test(tc,
	    a_gradient_that_overflows_to_nan_is_a_data_error, 0, 1);
	suite_add_tcase(s, tc);

	tc = tcase_create("reference");
	tcase_add_kernel_test(tc, backward_matches_the_long_double_reference,
	    0, GRAD_LOOPS);
	tcase_add_kernel_test(tc, backward_matches_finite_differences, 0,
	    FD_LOOPS);
	tcase_add_test(tc, finite_difference_cases_cover_every_variant);
	suite_add_tcase(s, tc);
	return s;
}
