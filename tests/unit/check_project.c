/*
 * check_project.c - projections (lib/project.c) and attn_run with a
 * layer (lib/passes.c): x @ W + b against the sum written out in long
 * double; every shape error of a layer word for word, each naming both
 * shapes and which W or b, with the hint for a W given as PyTorch stores
 * nn.Linear.weight; torch.nn.MultiheadAttention's numbers (in_proj and
 * out_proj biases, 2 heads, batch_first, with and without a key padding
 * mask), recorded by mha_torch.py in mha_torch.h; on every kernel, a run
 * from embeddings equals a run on the q, k and v they project to; the
 * stages a layer makes and the errors for those it does not.
 *
 * Dims: B batches, T query rows, S keys, H query heads, G KV heads, d_q
 * and d_kv columns of XQ and XKV.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "ref.h"
#include "suites.h"
#include "testutil.h"

#include "mha_torch.h"

/* ---------------------------------------------------------------- products */

START_TEST(a_projection_is_x_times_w_plus_b)
{
	struct ref_rng rng;
	struct attn_error err;
	int n;

	ref_rng_seed(&rng, 0x9A0E0000u);
	for (n = 0; n < 50; n++) {
		const size_t rows = ref_rng_range(&rng, 1, 9);
		const size_t d_in = ref_rng_range(&rng, 1, 12);
		const size_t d_out = ref_rng_range(&rng, 1, 12);
		/* biases as a row or as a column, or none */
		const size_t kind = ref_rng_range(&rng, 0, 2);
		struct attn_matrix x = matrix_random(&rng, rows, d_in, -2, 2);
		struct attn_matrix w = matrix_random(&rng, d_in, d_out, -1, 1);
		struct attn_matrix b = kind == 0 ?
		    matrix_random(&rng, 1, d_out, -1, 1) : kind == 1 ?
		    matrix_random(&rng, d_out, 1, -1, 1) :
		    (struct attn_matrix){ 0, 0, 0, NULL };
		struct attn_matrix y;
		size_t i, j, c;

		ck_assert_int_eq(attn_project(&x, &w, &b, "y", &y, &err),
		    ATTN_OK);
		ck_assert_uint_eq(y.rows, rows);
		ck_assert_uint_eq(y.cols, d_out);
		for (i = 0; i < rows; i++)
			for (j = 0; j < d_out; j++) {
				long double sum = b.data == NULL ? 0.0L :
				    (long double)b.data[j], mag = fabsl(sum);

				for (c = 0; c < d_in; c++) {
					long double t = (long double)
					    *attn_at(&x, i, c) *
					    (long double)*attn_at(&w, c, j);

					sum += t;
					mag += fabsl(t);
				}
				ck_assert_ldouble_eq_tol(
				    (long double)*attn_at(&y, i, j), sum,
				    (long double)(d_in + 1) * DBL_EPSILON * mag);
			}
		attn_matrix_free(&x);
		attn_matrix_free(&w);
		attn_matrix_free(&b);
		attn_matrix_free(&y);
	}
}
END_TEST

START_TEST(a_projection_that_overflows_is_a_data_error)
{
	static const double xv[] = { 1e200, 1e200 }, wv[] = { 1, 1e200 };
	struct attn_matrix x = matrix_from(1, 2, xv);
	struct attn_matrix w = matrix_from(2, 1, wv);
	struct attn_matrix b = { 0, 0, 0, NULL }, y;
	struct attn_error err;

	ck_assert_int_eq(attn_project(&x, &w, &b, "q = X W_Q + b_Q", &y,
	    &err), ATTN_ERR_DATA);
	ck_assert_str_eq(err.msg, "q = X W_Q + b_Q overflows a double in row "
	    "1, column 1 (the values are too large)");
	ck_assert_ptr_null(y.data);
	attn_matrix_free(&x);
	attn_matrix_free(&w);
}
END_TEST

/* ---------------------------------------------------------------- shapes */

/* A layer's dims, as a case sets them: 0 rows means absent. */
struct dims {
	size_t r, c;
};

static const struct shape_case {
	int cross;		/* XQ and XKV differ; else one X */
	size_t B, T, S, d_q, d_kv, H, G;
	struct dims wq, wk, wv, wo, bq, bk, bv, bo;
	enum attn_status status;
	const char *msg;
} shape_cases[] = {
	/* what fits: self, cross, GQA, everything given */
	{ 0, 1, 3, 3, 4, 4, 1, 1, { 4, 2 }, { 4, 2 }, { 4, 3 }, { 0, 0 },
	    { 0, 0 }, { 0, 0 }, { 0, 0 }, { 0, 0 }, ATTN_OK, NULL },
	{ 1, 2, 3, 5, 4, 6, 2, 2, { 4, 4 }, { 6, 4 }, { 6, 6 }, { 6, 4 },
	    { 1, 4 }, { 4, 1 }, { 1, 6 }, { 1, 4 }, ATTN_OK, NULL },
	{ 1, 1, 2, 3, 4, 4, 4, 2, { 4, 8 }, { 4, 4 }, { 4, 2 }, { 4, 5 },
	    { 0, 0 }, { 0, 0 }, { 0, 0 }, { 5, 1 }, ATTN_OK, NULL },
	/* W_Q given as nn.Linear.weight stores it */
	{ 0, 1, 6, 6, 3, 3, 1, 1, { 2, 3 }, { 3, 2 }, { 3, 2 }, { 0, 0 },
	    { 0, 0 }, { 0, 0 }, { 0, 0 }, { 0, 0 }, ATTN_ERR_DATA,
	    "shape mismatch: X is 6x3 but W_Q is 2x3: W_Q needs a row for "
	    "each of the 3 columns of X (x @ W); it looks transposed, as "
	    "PyTorch stores nn.Linear.weight (out x in): give its transpose, "
	    "weight.T" },
	/* a W that fits neither way */
	{ 1, 2, 2, 3, 4, 5, 1, 1, { 4, 2 }, { 3, 2 }, { 5, 2 }, { 0, 0 },
	    { 0, 0 }, { 0, 0 }, { 0, 0 }, { 0, 0 }, ATTN_ERR_DATA,
	    "shape mismatch: XKV is 2x3x5 but W_K is 3x2: W_K needs a row for "
	    "each of the 5 columns of XKV (x @ W)" },
	{ 1, 1, 2, 3, 4, 5, 1, 1, { 4, 2 }, { 5, 2 }, { 2, 5 }, { 0, 0 },
	    { 0, 0 }, { 0, 0 }, { 0, 0 }, { 0, 0 }, ATTN_ERR_DATA,
	    "shape mismatch: XKV is 3x5 but W_V is 2x5: W_V needs a row for "
	    "each of the 5 columns of XKV (x @ W); it looks transposed, as "
	    "PyTorch stores nn.Linear.weight (out x in): give its transpose, "
	    "weight.T" },
	/* heads */
	{ 0, 1, 2, 2, 3, 3, 2, 2, { 3, 3 }, { 3, 4 }, { 3, 4 }, { 0, 0 },
	    { 0, 0 }, { 0, 0 }, { 0, 0 }, { 0, 0 }, ATTN_ERR_DATA,
	    "W_Q is 3x3: 2 heads cannot split its 3 columns equally" },
	{ 0, 1, 2, 2, 3, 3, 4, 2, { 3, 4 }, { 3, 2 }, { 3, 3 }, { 0, 0 },
	    { 0, 0 }, { 0, 0 }, { 0, 0 }, { 0, 0 }, ATTN_ERR_DATA,
	    "W_V is 3x3: 2 KV heads cannot split its 3 columns equally" },
	{ 0, 1, 2, 2, 3, 3, 2, 1, { 3, 4 }, { 3, 4 }, { 3, 2 }, { 0, 0 },
	    { 0, 0 }, { 0, 0 }, { 0, 0 }, { 0, 0 }, ATTN_ERR_DATA,
	    "shape mismatch: W_Q is 3x4 but W_K is 3x4: q and k need the same "
	    "number of columns per head (d_k), but with 2 heads and 1 KV head "
	    "it is 4/2 = 2 for W_Q and 4/1 = 4 for W_K" },
	/* biases */
	{ 0, 1, 2, 2, 3, 3, 1, 1, { 3, 4 }, { 3, 4 }, { 3, 2 }, { 0, 0 },
	    { 1, 3 }, { 0, 0 }, { 0, 0 }, { 0, 0 }, ATTN_ERR_DATA,
	    "shape mismatch: W_Q is 3x4 but b_Q is 1x3: b_Q needs one value "
	    "for each of the 4 columns of W_Q" },
	{ 0, 1, 2, 2, 3, 3, 1, 1, { 3, 4 }, { 3, 4 }, { 3, 2 }, { 0, 0 },
	    { 0, 0 }, { 2, 2 }, { 0, 0 }, { 0, 0 }, ATTN_ERR_DATA,
	    "shape mismatch: W_K is 3x4 but b_K is 2x2: b_K needs one value "
	    "for each of the 4 columns of W_K" },
	{ 0, 1, 2, 2, 3, 3, 1, 1, { 3, 4 }, { 3, 4 }, { 3, 2 }, { 0, 0 },
	    { 0, 0 }, { 0, 0 }, { 1, 3 }, { 0, 0 }, ATTN_ERR_DATA,
	    "shape mismatch: W_V is 3x2 but b_V is 1x3: b_V needs one value "
	    "for each of the 2 columns of W_V" },
	/* the output projection: H*d_v = 2*3 rows */
	{ 0, 1, 5, 5, 3, 3, 2, 1, { 3, 4 }, { 3, 2 }, { 3, 3 }, { 4, 3 },
	    { 0, 0 }, { 0, 0 }, { 0, 0 }, { 0, 0 }, ATTN_ERR_DATA,
	    "shape mismatch: the output is 5x6 (T x H*d_v) but W_O is 4x3: "
	    "W_O needs a row for each of the 6 columns of the output (x @ "
	    "W)" },
	{ 0, 1, 5, 5, 3, 3, 2, 1, { 3, 4 }, { 3, 2 }, { 3, 3 }, { 3, 6 },
	    { 0, 0 }, { 0, 0 }, { 0, 0 }, { 0, 0 }, ATTN_ERR_DATA,
	    "shape mismatch: the output is 5x6 (T x H*d_v) but W_O is 3x6: "
	    "W_O needs a row for each of the 6 columns of the output (x @ W); "
	    "it looks transposed, as PyTorch stores nn.Linear.weight (out x "
	    "in): give its transpose, weight.T" },
	{ 0, 1, 2, 2, 3, 3, 1, 1, { 3, 4 }, { 3, 4 }, { 3, 2 }, { 2, 3 },
	    { 0, 0 }, { 0, 0 }, { 0, 0 }, { 1, 2 }, ATTN_ERR_DATA,
	    "shape mismatch: W_O is 2x3 but b_O is 1x2: b_O needs one value "
	    "for each of the 3 columns of W_O" },
	{ 0, 1, 2, 2, 3, 3, 1, 1, { 3, 4 }, { 3, 4 }, { 3, 2 }, { 0, 0 },
	    { 0, 0 }, { 0, 0 }, { 0, 0 }, { 1, 2 }, ATTN_ERR_USAGE,
	    "b_O without W_O: the output bias goes with the output "
	    "projection" },
	/* a layer needs its three W */
	{ 0, 1, 2, 2, 3, 3, 1, 1, { 3, 4 }, { 0, 0 }, { 3, 2 }, { 0, 0 },
	    { 0, 0 }, { 0, 0 }, { 0, 0 }, { 0, 0 }, ATTN_ERR_USAGE,
	    "a projection layer needs W_Q, W_K and W_V" },
};

/* A zeroed r x c matrix, or an absent one for r == 0. */
static struct attn_matrix
maybe(struct dims d)
{
	struct attn_matrix m = { 0, 0, 0, NULL };

	if (d.r != 0)
		ck_assert_int_eq(attn_matrix_alloc(&m, d.r, d.c, NULL),
		    ATTN_OK);
	return m;
}

START_TEST(layer_shapes_are_checked_naming_both_shapes_and_which_w)
{
	const struct shape_case *c = &shape_cases[_i];
	struct attn_matrix xq, xkv;
	struct attn_config cfg;
	struct attn_inputs in;
	struct attn_error err;
	struct attn_proj *w = &in.proj;

	memset(&in, 0, sizeof in);
	memset(&err, 0, sizeof err);
	attn_config_init(&cfg);
	cfg.heads = c->H;
	cfg.kv_heads = c->G == c->H ? 0 : c->G;
	ck_assert_int_eq(attn_matrix_alloc(&xq, c->B * c->T, c->d_q, NULL),
	    ATTN_OK);
	if (c->cross)
		ck_assert_int_eq(attn_matrix_alloc(&xkv, c->B * c->S, c->d_kv,
		    NULL), ATTN_OK);
	else
		xkv = xq;
	in.batches = c->B;
	in.q = xq;
	in.k = xkv;
	w->w_q = maybe(c->wq);
	w->w_k = maybe(c->wk);
	w->w_v = maybe(c->wv);
	w->w_o = maybe(c->wo);
	w->b_q = maybe(c->bq);
	w->b_k = maybe(c->bk);
	w->b_v = maybe(c->bv);
	w->b_o = maybe(c->bo);
	ck_assert_int_eq(attn_project_check(&cfg, &in, &err), c->status);
	if (c->msg != NULL)
		ck_assert_str_eq(err.msg, c->msg);
	attn_matrix_free(&w->w_q);
	attn_matrix_free(&w->w_k);
	attn_matrix_free(&w->w_v);
	attn_matrix_free(&w->w_o);
	attn_matrix_free(&w->b_q);
	attn_matrix_free(&w->b_k);
	attn_matrix_free(&w->b_v);
	attn_matrix_free(&w->b_o);
	attn_matrix_free(&xq);
	if (c->cross)
		attn_matrix_free(&xkv);
}
END_TEST

/* ---------------------------------------------------------------- runs */

/* The matrices of a run from embeddings, owned. */
struct layer_case {
	struct attn_config cfg;
	struct attn_inputs in;
	struct attn_matrix xq, xkv, m[8];	/* W_Q .. b_O, as in proj */
};

static void
layer_case_free(struct layer_case *c)
{
	const int self = c->xkv.data == c->xq.data;
	size_t i;

	attn_matrix_free(&c->xq);
	if (!self)
		attn_matrix_free(&c->xkv);
	for (i = 0; i < 8; i++)
		attn_matrix_free(&c->m[i]);
}

/* Point in.proj at c->m: W_Q, W_K, W_V, W_O, b_Q, b_K, b_V, b_O. */
static void
layer_case_inputs(struct layer_case *c)
{
	struct attn_proj *w = &c->in.proj;

	c->in.q = c->xq;
	c->in.k = c->xkv;
	w->w_q = c->m[0];
	w->w_k = c->m[1];
	w->w_v = c->m[2];
	w->w_o = c->m[3];
	w->b_q = c->m[4];
	w->b_k = c->m[5];
	w->b_v = c->m[6];
	w->b_o = c->m[7];
}

/* nn.MultiheadAttention(4, 2, bias=True, batch_first=True) in float64:
 * attn_output is attn's projected, the per-head attn_output_weights its
 * weights.  Case 1 adds the key_padding_mask (True = ignore), which attn
 * reads inverted (mask_invert) as a B x T x S mask. */
static void
mha_case(struct layer_case *c, int padded, struct attn_matrix *mask)
{
	const size_t E = MHA_E;
	size_t b, i, j;

	memset(c, 0, sizeof *c);
	c->xq = matrix_from(MHA_B * MHA_T, E, mha_xq);
	c->xkv = matrix_from(MHA_B * MHA_S, E, mha_xkv);
	c->m[0] = matrix_from(E, E, mha_w_q);
	c->m[1] = matrix_from(E, E, mha_w_k);
	c->m[2] = matrix_from(E, E, mha_w_v);
	c->m[3] = matrix_from(E, E, mha_w_o);
	c->m[4] = matrix_from(1, E, mha_b_q);
	c->m[5] = matrix_from(1, E, mha_b_k);
	c->m[6] = matrix_from(1, E, mha_b_v);
	c->m[7] = matrix_from(1, E, mha_b_o);
	attn_config_init(&c->cfg);
	c->cfg.heads = MHA_H;
	c->in.batches = MHA_B;
	layer_case_inputs(c);
	memset(mask, 0, sizeof *mask);
	if (!padded)
		return;
	ck_assert_int_eq(attn_matrix_alloc(mask, MHA_B * MHA_T, MHA_S, NULL),
	    ATTN_OK);
	for (b = 0; b < MHA_B; b++)
		for (i = 0; i < MHA_T; i++)
			for (j = 0; j < MHA_S; j++)
				*attn_at(mask, b * MHA_T + i, j) =
				    mha_key_padding[b * MHA_S + j];
	c->cfg.mask_invert = 1;
	c->in.mask = *mask;
	c->in.mask_blocks = MHA_B;
}

/* The largest |a - want| over a's elements, want packed row by row. */
static double
max_diff(const struct attn_matrix *a, const double *want)
{
	double worst = 0.0;
	size_t i, j;

	for (i = 0; i < a->rows; i++)
		for (j = 0; j < a->cols; j++) {
			const double d = fabs(*attn_at(a, i, j) -
			    want[i * a->cols + j]);

			worst = d > worst ? d : worst;
		}
	return worst;
}

/* torch computes in float64 with its own order of sums (matrix
 * products, a softmax over exp(x - max)): agreement to a few units of
 * 1e-16 on numbers of size 1 is what double can do. */
#define MHA_TOL 1e-14

KERNEL_TEST(a_layer_reproduces_nn_multihead_attention,
    STAGE(WEIGHTS) | STAGE(OUTPUT))
{
	const double *want_out = _i ? mha_padded_output : mha_plain_output;
	const double *want_w = _i ? mha_padded_weights : mha_plain_weights;
	struct layer_case c;
	struct attn_matrix mask;
	struct attn_stages st;
	double d;
	size_t b, h, i, j;

	mha_case(&c, _i, &mask);
	run_ok(kernel, &c.cfg, &c.in, stages | STAGE(PROJECTED), &st);
	ck_assert_uint_eq(st.d_proj, MHA_E);
	d = max_diff(&st.stage[ATTN_STAGE_PROJECTED], want_out);
	ck_assert_msg(d <= MHA_TOL, "attn_output: max |diff| %.3g", d);
	/* weights: torch's are B x H x T x S, as attn's stack */
	d = max_diff(&st.stage[ATTN_STAGE_WEIGHTS], want_w);
	ck_assert_msg(d <= MHA_TOL, "attn_output_weights: max |diff| %.3g",
	    d);
	/* a padded key has weight 0 exactly, in every head */
	for (b = 0; _i && b < MHA_B; b++)
		for (h = 0; h < MHA_H; h++)
			for (i = 0; i < MHA_T; i++)
				for (j = 0; j < MHA_S; j++)
					if (mha_key_padding[b * MHA_S + j] != 0)
						ck_assert_double_eq(stage_at(&st,
						    ATTN_STAGE_WEIGHTS, (b * MHA_H +
						    h) * MHA_T + i, j), 0.0);
	attn_stages_free(&st);
	attn_matrix_free(&mask);
	layer_case_free(&c);
}
END_TEST

/*
 * A run from embeddings is a run on the q, k and v they project to: the
 * same numbers to the bit, on every kernel, for self- and
 * cross-attention, heads and GQA, with and without biases, the backward
 * stages included (with a layer they are the gradients with respect to
 * q, k and v, not X or W); and q, k and v are x @ W + b.
 */
KERNEL_TEST(a_layer_gives_what_its_q_k_and_v_give,
    ATTN_STAGES_ALL | ATTN_STAGES_GRAD)
{
	struct ref_rng rng;
	struct layer_case c;
	struct attn_inputs plain;
	struct attn_stages st, st2;
	struct attn_matrix q, k, v, d_out;
	struct attn_error err;
	const int cross = _i % 2, biased = _i / 2 % 2;
	const size_t B = 2, T = 3, S = cross ? 5 : 3, H = 4, G = _i >= 4 ?
	    2 : 4, d_k = 2, d_v = 3, d_q = 5, d_kv = cross ? 6 : 5;
	size_t s;

	memset(&c, 0, sizeof c);
	ref_rng_seed(&rng, 900 + (uint64_t)_i);
	c.xq = matrix_random(&rng, B * T, d_q, -1, 1);
	c.xkv = cross ? matrix_random(&rng, B * S, d_kv, -1, 1) : c.xq;
	c.m[0] = matrix_random(&rng, d_q, H * d_k, -1, 1);
	c.m[1] = matrix_random(&rng, d_kv, G * d_k, -1, 1);
	c.m[2] = matrix_random(&rng, d_kv, G * d_v, -1, 1);
	if (biased) {
		c.m[4] = matrix_random(&rng, 1, H * d_k, -1, 1);
		c.m[5] = matrix_random(&rng, G * d_k, 1, -1, 1);
		c.m[6] = matrix_random(&rng, 1, G * d_v, -1, 1);
	}
	d_out = matrix_random(&rng, B * T, H * d_v, -1, 1);
	attn_config_init(&c.cfg);
	c.cfg.heads = H;
	c.cfg.kv_heads = G;
	c.cfg.causal = 1;
	c.in.batches = B;
	c.in.d_out = d_out;
	layer_case_inputs(&c);
	run_ok(kernel, &c.cfg, &c.in, stages | STAGE(Q) | STAGE(K) | STAGE(V),
	    &st);
	ck_assert_int_eq(st.proj, 1);
	ck_assert_int_eq(st.proj_self, !cross);
	ck_assert_uint_eq(st.d_xq, d_q);
	ck_assert_uint_eq(st.d_xkv, d_kv);
	ck_assert_uint_eq(st.proj_biased, biased ? STAGE(Q) | STAGE(K) |
	    STAGE(V) : 0u);
	ck_assert_int_eq(attn_project(&c.xq, &c.m[0], &c.m[4], "q", &q, &err),
	    ATTN_OK);
	ck_assert_int_eq(attn_project(&c.xkv, &c.m[1], &c.m[5], "k", &k,
	    &err), ATTN_OK);
	ck_assert_int_eq(attn_project(&c.xkv, &c.m[2], &c.m[6], "v", &v,
	    &err), ATTN_OK);
	expect_same("q", &st.stage[ATTN_STAGE_Q], &q);
	expect_same("k", &st.stage[ATTN_STAGE_K], &k);
	expect_same("v", &st.stage[ATTN_STAGE_V], &v);
	memset(&plain, 0, sizeof plain);
	plain.batches = B;
	plain.q = q;
	plain.k = k;
	plain.v = v;
	plain.d_out = d_out;
	run_ok(kernel, &c.cfg, &plain, stages, &st2);
	for (s = 0; s < ATTN_STAGE_COUNT; s++)
		if (stages & ATTN_STAGE_BIT(s))
			expect_same(attn_stage_table[s].name, &st.stage[s],
			    &st2.stage[s]);
	attn_stages_free(&st);
	attn_stages_free(&st2);
	attn_matrix_free(&q);
	attn_matrix_free(&k);
	attn_matrix_free(&v);
	attn_matrix_free(&d_out);
	layer_case_free(&c);
}
END_TEST

/* Stages a run does not make are usage errors that say what makes
 * them; what a layer and RoPE make is what attn_stages_available says.
 * Without a layer, q, k and v are the operands as read (attn(1)). */
START_TEST(stages_of_a_layer_or_rope_and_qkv_as_read)
{
	static const double one[] = { 1, 0, 0, 1 };
	struct attn_matrix x = matrix_from(2, 2, one), w = matrix_from(2, 2,
	    one);
	struct attn_config cfg;
	struct attn_inputs in;
	struct attn_stages st;
	struct attn_error err;

	attn_config_init(&cfg);
	memset(&in, 0, sizeof in);
	in.batches = 1;
	in.q = in.k = in.v = x;
	ck_assert_uint_eq(attn_stages_available(&cfg, &in), ATTN_STAGES_ALL |
	    STAGE(Q) | STAGE(K) | STAGE(V));
	ck_assert_int_eq(attn_run(&cfg, &in, STAGE(OUTPUT) | STAGE(V), &st,
	    &err), ATTN_OK);
	ck_assert_uint_eq(st.have & (STAGE(Q) | STAGE(K) | STAGE(V)),
	    STAGE(V));
	expect_same("v", &st.stage[ATTN_STAGE_V], &x);
	attn_stages_free(&st);
	ck_assert_int_eq(attn_run(&cfg, &in, STAGE(PROJECTED), &st, &err),
	    ATTN_ERR_USAGE);
	ck_assert_str_eq(err.msg, "stage projected needs a projection layer "
	    "(W_Q, W_K, W_V, W_O) and embeddings");
	ck_assert_int_eq(attn_run(&cfg, &in, STAGE(K_ROT), &st, &err),
	    ATTN_ERR_USAGE);
	ck_assert_str_eq(err.msg,
	    "stage k_rot needs RoPE (rotary position embedding)");
	in.proj.w_q = in.proj.w_k = in.proj.w_v = w;
	cfg.rope = 1;
	ck_assert_uint_eq(attn_stages_available(&cfg, &in), ATTN_STAGES_ALL |
	    STAGE(Q) | STAGE(K) | STAGE(V) | STAGE(Q_ROT) | STAGE(K_ROT));
	ck_assert_int_eq(attn_run(&cfg, &in, STAGE(PROJECTED), &st, &err),
	    ATTN_ERR_USAGE);
	ck_assert_str_eq(err.msg, "stage projected needs an output "
	    "projection, W_O, in the layer");
	in.proj.w_o = w;
	/* every stage of the passes but the bias as read: no bias here */
	ck_assert_uint_eq(attn_stages_available(&cfg, &in), ATTN_STAGES_ALL |
	    (ATTN_STAGES_PROJ & ~STAGE(BIAS)));
	/* projected alone: output is computed for it, then dropped */
	ck_assert_int_eq(attn_run(&cfg, &in, STAGE(PROJECTED), &st, &err),
	    ATTN_OK);
	ck_assert_uint_eq(st.have, STAGE(PROJECTED) | STAGE(LSE));
	ck_assert_ptr_null(st.stage[ATTN_STAGE_OUTPUT].data);
	ck_assert_ptr_nonnull(st.stage[ATTN_STAGE_PROJECTED].data);
	attn_stages_free(&st);
	attn_matrix_free(&x);
	attn_matrix_free(&w);
}
END_TEST

/* attn_plan counts what the passes hold: q, k and v, q_rot and k_rot,
 * projected and the output it is made from. */
START_TEST(plan_counts_the_passes)
{
	struct attn_matrix x = { 6, 5, 5, NULL }, wq = { 5, 8, 8, NULL };
	struct attn_matrix wv = { 5, 4, 4, NULL }, wo = { 4, 3, 3, NULL };
	struct attn_config cfg;
	struct attn_inputs in;
	struct attn_error err;
	/* shapes are all attn_plan reads: the data point at nothing, but
	 * a layer must look present */
	static double dummy;
	size_t plain, layer, rope, proj;

	attn_config_init(&cfg);
	cfg.heads = 2;
	memset(&in, 0, sizeof in);
	in.batches = 2;
	in.q = in.k = x;
	in.q.data = in.k.data = &dummy;
	in.proj.w_q = in.proj.w_k = wq;
	in.proj.w_v = wv;
	in.proj.w_q.data = in.proj.w_k.data = in.proj.w_v.data = &dummy;
	ck_assert_int_eq(attn_plan(&cfg, &in, STAGE(OUTPUT), &layer, &err),
	    ATTN_OK);
	cfg.rope = 1;
	ck_assert_int_eq(attn_plan(&cfg, &in, STAGE(OUTPUT), &rope, &err),
	    ATTN_OK);
	in.proj.w_o = wo;
	in.proj.w_o.data = &dummy;
	ck_assert_int_eq(attn_plan(&cfg, &in, STAGE(PROJECTED), &proj, &err),
	    ATTN_OK);
	/* the same problem given as q, k and v */
	cfg.rope = 0;
	memset(&in.proj, 0, sizeof in.proj);
	in.q.cols = in.k.cols = 8;
	in.v = in.q;
	in.v.cols = 4;
	ck_assert_int_eq(attn_plan(&cfg, &in, STAGE(OUTPUT), &plain, &err),
	    ATTN_OK);
	/* q and k are 6 x 8, v 6 x 4 */
	ck_assert_uint_eq(layer, plain + (48 + 48 + 24) * sizeof(double));
	ck_assert_uint_eq(rope, layer + (48 + 48) * sizeof(double));
	/* projected: 6 x 3 */
	ck_assert_uint_eq(proj, rope + 18 * sizeof(double));
}
END_TEST

Suite *
project_suite(void)
{
	Suite *s = suite_create("project");
	TCase *tc = tcase_create("project");

	tcase_add_test(tc, a_projection_is_x_times_w_plus_b);
	tcase_add_test(tc, a_projection_that_overflows_is_a_data_error);
	tcase_add_loop_test(tc,
	    layer_shapes_are_checked_naming_both_shapes_and_which_w, 0,
	    (int)(sizeof shape_cases / sizeof shape_cases[0]));
	suite_add_tcase(s, tc);

	tc = tcase_create("runs");
	tcase_add_kernel_test(tc, a_layer_reproduces_nn_multihead_attention, 0,
	    2);
	tcase_add_kernel_test(tc, a_layer_gives_what_its_q_k_and_v_give, 0, 6);
	tcase_add_test(tc, stages_of_a_layer_or_rope_and_qkv_as_read);
	tcase_add_test(tc, plan_counts_the_passes);
	suite_add_tcase(s, tc);
	return s;
}
