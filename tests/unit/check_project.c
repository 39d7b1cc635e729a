/*
 * check_project.c - projections (lib/project.c): x @ W + b against the
 * sum written out in long double, and every shape error of a layer word
 * for word, each naming both shapes and which W or b, with the hint for
 * a W given as PyTorch stores nn.Linear.weight.
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
	return s;
}
