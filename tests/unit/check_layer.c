/*
 * check_layer.c - reading projection layers (attn_read_layer) and
 * bundles that hold embeddings and a layer ("X", or "XQ" and "XKV", and
 * "proj"): the values and shapes read, and every error word for word at
 * its line and column, the hints included (a key in the wrong case,
 * nn.MultiheadAttention's in_proj_weight, a BUNDLE given as a layer).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "suites.h"
#include "testutil.h"

static enum attn_status
layer_s(const char *text, struct attn_layer *l, struct attn_error *err)
{
	memset(err, 0, sizeof *err);
	/* no NUL after the text: the reader must stop at len */
	return attn_read_layer("l.json", text, strlen(text), l, err);
}

static enum attn_status
bundle_s(const char *text, struct attn_bundle *b, struct attn_error *err)
{
	memset(err, 0, sizeof *err);
	return attn_read_bundle("b.json", text, strlen(text), ATTN_READ_FINITE,
	    b, err);
}

/* Fail unless a is ndim-D of shape (rows, cols) holding want. */
static void
expect_array(const char *what, const struct attn_array *a, size_t ndim,
    size_t rows, size_t cols, const double *want)
{
	struct attn_matrix m = attn_array_matrix(a);
	size_t i;

	ck_assert_msg(a->ndim == ndim, "%s is %zu-D", what, a->ndim);
	ck_assert_uint_eq(m.rows, rows);
	ck_assert_uint_eq(m.cols, cols);
	for (i = 0; i < rows * cols; i++)
		ck_assert_msg(m.data[i] == want[i], "%s[%zu] is %g", what, i,
		    m.data[i]);
}

START_TEST(a_layer_reads_every_weight_and_bias)
{
	static const char text[] =
	    "{\"W_Q\": [[1, 2], [3, 4], [5, 6]],\n"
	    " \"W_K\": [[7, 8], [9, 10], [11, 12]],\n"
	    " \"W_V\": [[0.5], [0.25], [0.125]],\n"
	    " \"W_O\": [[2, -2, 1]],\n"
	    " \"b_Q\": [1, -1], \"b_K\": [[0, 2]], \"b_V\": [[3]],\n"
	    " \"b_O\": [4, 5, 6]}";
	static const double wq[] = { 1, 2, 3, 4, 5, 6 };
	static const double wk[] = { 7, 8, 9, 10, 11, 12 };
	static const double wv[] = { 0.5, 0.25, 0.125 };
	static const double wo[] = { 2, -2, 1 };
	static const double bq[] = { 1, -1 }, bk[] = { 0, 2 }, bv[] = { 3 };
	static const double bo[] = { 4, 5, 6 };
	struct attn_layer l;
	struct attn_error err;
	struct attn_proj w;

	ck_assert_msg(layer_s(text, &l, &err) == ATTN_OK, "%s", err.msg);
	expect_array("W_Q", &l.w_q, 2, 3, 2, wq);
	expect_array("W_K", &l.w_k, 2, 3, 2, wk);
	expect_array("W_V", &l.w_v, 2, 3, 1, wv);
	expect_array("W_O", &l.w_o, 2, 1, 3, wo);
	expect_array("b_Q", &l.b_q, 1, 1, 2, bq);
	expect_array("b_K", &l.b_k, 2, 1, 2, bk);
	expect_array("b_V", &l.b_v, 2, 1, 1, bv);
	expect_array("b_O", &l.b_o, 1, 1, 3, bo);
	/* the views for attn_inputs.proj */
	w = attn_layer_proj(&l);
	ck_assert_ptr_eq(w.w_q.data, l.w_q.data);
	ck_assert_uint_eq(w.w_q.rows, 3);
	ck_assert_uint_eq(w.w_q.cols, 2);
	ck_assert_ptr_eq(w.b_o.data, l.b_o.data);
	ck_assert_uint_eq(w.b_o.rows, 1);
	ck_assert_uint_eq(w.b_o.cols, 3);
	attn_layer_free(&l);
	attn_layer_free(&l);	/* a freed layer is a zeroed one */
}
END_TEST

START_TEST(w_o_and_the_biases_are_optional)
{
	struct attn_layer l;
	struct attn_error err;
	struct attn_proj w;

	ck_assert_int_eq(layer_s("{\"W_V\": [[1]], \"W_K\": [[2]], "
	    "\"W_Q\": [[3]]}", &l, &err), ATTN_OK);
	ck_assert_uint_eq(l.w_o.ndim, 0);
	ck_assert_uint_eq(l.b_q.ndim, 0);
	w = attn_layer_proj(&l);
	ck_assert_ptr_nonnull(w.w_q.data);
	ck_assert_ptr_null(w.w_o.data);
	ck_assert_ptr_null(w.b_q.data);
	ck_assert_ptr_null(w.b_o.data);
	attn_layer_free(&l);
}
END_TEST

/* One error: the text, and exactly where and what is reported. */
static const struct layer_error {
	const char *text;
	size_t line, col;
	const char *msg;
} layer_errors[] = {
	{ "[[1]]", 1, 1, "a layer is a JSON object {\"W_Q\": .., \"W_K\": .., "
	    "\"W_V\": ..}, not an array" },
	{ "{\"W_Q\": [[1]], \"w_k\": [[1]]}", 1, 16, "unknown layer key "
	    "\"w_k\": keys are case-sensitive; did you mean \"W_K\"?" },
	{ "{\"in_proj_weight\": [[1]]}", 1, 2, "unknown layer key "
	    "\"in_proj_weight\": nn.MultiheadAttention's in_proj_weight "
	    "stacks W_Q, W_K and W_V transposed; give W_Q = "
	    "in_proj_weight[:E].T and so on" },
	{ "{\n  \"Q\": [[1]]}", 2, 3, "unknown layer key \"Q\": that is a "
	    "BUNDLE key, and this file a BUNDLE, not a layer" },
	{ "{\"W_Q\": [[1]], \"Wq\": 1}", 1, 16, "unknown layer key \"Wq\": "
	    "did you mean \"W_Q\"?" },
	{ "{\"W_Q\": [[1]], \"weight\": 1}", 1, 16, "unknown layer key "
	    "\"weight\" (expected W_Q, W_K, W_V, W_O, b_Q, b_K, b_V or b_O)" },
	{ "{\"W_Q\": [[1]], \"W_Q\": [[1]]}", 1, 16,
	    "repeated layer key \"W_Q\"" },
	{ "{\"W_Q\": [1, 2]}", 1, 9, "W_Q must be a matrix (a 2-D array), "
	    "not 1-D" },
	{ "{\"W_K\": [[[1]]]}", 1, 9, "W_K must be a matrix (a 2-D array), "
	    "not 3-D" },
	{ "{\"b_Q\": [[1, 2], [3, 4]]}", 1, 9, "b_Q must be a vector (one "
	    "value per column of its W), not 2x2" },
	{ "{\"b_V\": [[[1]]]}", 1, 9, "b_V must be a vector (a 1-D array), "
	    "not 3-D" },
	{ "{\"W_Q\": \"x\"}", 1, 9, "expected an array, found a string" },
	{ "{\"W_Q\": [[1, \"nan\"]]}", 1, 14, "non-finite number 'nan' (a "
	    "layer's weights and biases must be finite)" },
	{ "{\"W_Q\": [[1]], \"W_K\": [[1]]}", 1, 1, "layer has no \"W_V\" "
	    "(a layer needs W_Q, W_K and W_V)" },
	{ "{\"W_Q\": [[1]], \"W_K\": [[1]], \"W_V\": [[1]],\n"
	    " \"b_O\": [1]}", 2, 2, "b_O without W_O: the output bias goes "
	    "with the output projection" },
	{ "{\"W_Q\": [[1], [2, 3]]}", 1, 19, "ragged array: row 2 has 2 "
	    "values but row 1 has 1" },
};

START_TEST(layer_errors_name_their_place)
{
	const struct layer_error *e = &layer_errors[_i];
	struct attn_layer l;
	struct attn_error err;

	ck_assert_msg(layer_s(e->text, &l, &err) == ATTN_ERR_DATA,
	    "'%s' was read", e->text);
	ck_assert_str_eq(err.msg, e->msg);
	ck_assert_str_eq(err.file, "l.json");
	ck_assert_uint_eq(err.line, e->line);
	ck_assert_uint_eq(err.col, e->col);
	ck_assert_ptr_null(l.w_q.data);
	ck_assert_ptr_null(l.w_k.data);
	ck_assert_ptr_null(l.b_q.data);
	attn_layer_free(&l);
}
END_TEST

#define LAYER_KIND(what) "a layer holds W_Q, W_K and W_V (and W_O, b_Q, " \
	"..) by name, as a JSON object {\"W_Q\": .., \"W_K\": .., " \
	"\"W_V\": ..}; this is " what

/* A file that is no JSON value at all (--proj w_q.npy, a CSV of one W):
 * what a layer is and what the file looks like, not "NUL byte in JSON
 * input" or a stray word.  What is no text at all, or nothing, stays
 * told as such. */
static const struct {
	const char *text;
	size_t len;
	const char *msg;
	size_t line, col;
} layer_kinds[] = {
	{ "\x93NUMPY\x01\x00v\x00{'descr': '<f8', 'fortran_order': False, "
	    "'shape': (1,), }", 67, LAYER_KIND("a .npy file, one unnamed array"),
	    0, 0 },
	/* a zip is read as a .npz layer (numpy.savez) */
	{ "PK\x03\x04\x14\x00\x00\x00", 8, "not a .npz archive libzip can "
	    "read: Not a zip archive", 0, 0 },
	{ "0.5,1\n2,3\n", 10, LAYER_KIND("text (CSV, TSV or white space), "
	    "one unnamed matrix"), 0, 0 },
	{ "tensor([[1., 2.]])", 18, LAYER_KIND("an array as NumPy or PyTorch "
	    "prints it, one unnamed matrix"), 0, 0 },
	{ "[[1. 2.]\n [3. 4.]]", 18, LAYER_KIND("an array as NumPy or "
	    "PyTorch prints it, one unnamed matrix"), 0, 0 },
	{ " \n", 2, "empty input: no JSON value", 2, 1 },
	{ "x\x00", 2, "NUL byte in JSON input", 1, 2 },
};

START_TEST(a_layer_that_is_no_json_says_what_it_is)
{
	struct attn_layer l;
	struct attn_error err;

	memset(&err, 0, sizeof err);
	ck_assert_int_eq(attn_read_layer("w", layer_kinds[_i].text,
	    layer_kinds[_i].len, &l, &err), ATTN_ERR_DATA);
	ck_assert_str_eq(err.msg, layer_kinds[_i].msg);
	ck_assert_uint_eq(err.line, layer_kinds[_i].line);
	ck_assert_uint_eq(err.col, layer_kinds[_i].col);
	ck_assert_ptr_null(l.w_q.data);
}
END_TEST

/* ---------------------------------------------------------------- bundles */

START_TEST(a_bundle_holds_x_and_its_layer)
{
	static const char text[] = "{\"labels\": {\"query\": [\"a\", \"b\"]},"
	    " \"X\": [[1, 2], [3, 4]], \"proj\": {\"W_Q\": [[1], [0]], "
	    "\"W_K\": [[0], [1]], \"W_V\": [[1], [1]]}}";
	static const double x[] = { 1, 2, 3, 4 };
	static const double wv[] = { 1, 1 };
	struct attn_bundle b;
	struct attn_error err;

	ck_assert_msg(bundle_s(text, &b, &err) == ATTN_OK, "%s", err.msg);
	ck_assert_int_eq(b.embeddings, 1);
	expect_array("X", &b.q, 2, 2, 2, x);
	ck_assert_uint_eq(b.k.ndim, 0);
	ck_assert_uint_eq(b.v.ndim, 0);
	expect_array("W_V", &b.proj.w_v, 2, 2, 1, wv);
	ck_assert_uint_eq(b.query_labels.count, 2);
	attn_bundle_free(&b);
}
END_TEST

START_TEST(a_bundle_holds_xq_and_xkv_with_or_without_a_layer)
{
	static const char text[] = "{\"XKV\": [[1, 2, 3]], \"XQ\": [[4, 5, "
	    "6], [7, 8, 9]], \"labels\": {\"key\": [\"k\"]}}";
	static const double xq[] = { 4, 5, 6, 7, 8, 9 };
	static const double xkv[] = { 1, 2, 3 };
	struct attn_bundle b;
	struct attn_error err;

	ck_assert_msg(bundle_s(text, &b, &err) == ATTN_OK, "%s", err.msg);
	ck_assert_int_eq(b.embeddings, 1);
	expect_array("XQ", &b.q, 2, 2, 3, xq);
	expect_array("XKV", &b.k, 2, 1, 3, xkv);
	ck_assert_uint_eq(b.proj.w_q.ndim, 0);
	ck_assert_str_eq(b.key_labels.names[0], "k");
	attn_bundle_free(&b);
	/* a bundle of Q, K and V is no bundle of embeddings */
	ck_assert_int_eq(bundle_s("{\"Q\": [[1]], \"K\": [[1]], \"V\": [[1]]}",
	    &b, &err), ATTN_OK);
	ck_assert_int_eq(b.embeddings, 0);
	attn_bundle_free(&b);
}
END_TEST

static const struct layer_error bundle_errors[] = {
	{ "{\"Q\": [[1]], \"X\": [[1]]}", 1, 14, "bundle key \"X\" with "
	    "\"Q\": a bundle holds Q, K and V, or embeddings (X, or XQ and "
	    "XKV) for a layer" },
	{ "{\"XQ\": [[1]], \"V\": [[1]]}", 1, 15, "bundle key \"V\" with "
	    "\"XQ\": a bundle holds Q, K and V, or embeddings (X, or XQ and "
	    "XKV) for a layer" },
	{ "{\"X\": [[1]], \"XKV\": [[1]]}", 1, 14, "bundle key \"XKV\" with "
	    "\"X\": X is for self-attention, XQ and XKV for cross-attention; "
	    "give one or the other" },
	{ "{\"XQ\": [[1]]}", 1, 1, "bundle has no \"XKV\" (XQ and XKV go "
	    "together: cross-attention from embeddings)" },
	{ "{\"Q\": [[1]], \"K\": [[1]], \"V\": [[1]],\n"
	    "\"proj\": {\"W_Q\": [[1]], \"W_K\": [[1]], \"W_V\": [[1]]}}", 2, 1,
	    "bundle has a layer (\"proj\") but no embeddings: give \"X\", or "
	    "\"XQ\" and \"XKV\", instead of Q, K and V" },
	{ "{\"X\": [[1]], \"proj\": [[1]]}", 1, 22, "a layer is a JSON object "
	    "{\"W_Q\": .., \"W_K\": .., \"W_V\": ..}, not an array" },
	{ "{\"X\": [[1]], \"proj\": {\"W_Q\": [[1]], \"W_K\": [[1]]}}", 1, 22,
	    "layer has no \"W_V\" (a layer needs W_Q, W_K and W_V)" },
	{ "{\"X\": [[1]], \"proj\": {\"W_Q\": [[1]], \"W_q\": [[1]]}}", 1, 37,
	    "unknown layer key \"W_q\": keys are case-sensitive; did you mean "
	    "\"W_Q\"?" },
	{ "{\"X\": [[1], [2]], \"labels\": {\"key\": [\"a\"]}}", 1, 30,
	    "labels \"key\" has 1 name but X has 2 rows" },
	{ "{\"XQ\": [[1]], \"XKV\": [[1], [2]], \"labels\": {\"key\": "
	    "[\"a\"]}}", 1, 45, "labels \"key\" has 1 name but XKV has 2 "
	    "rows" },
};

START_TEST(bundle_embedding_errors_name_their_place)
{
	const struct layer_error *e = &bundle_errors[_i];
	struct attn_bundle b;
	struct attn_error err;

	ck_assert_msg(bundle_s(e->text, &b, &err) == ATTN_ERR_DATA,
	    "'%s' was read", e->text);
	ck_assert_str_eq(err.msg, e->msg);
	ck_assert_uint_eq(err.line, e->line);
	ck_assert_uint_eq(err.col, e->col);
	ck_assert_ptr_null(b.q.data);
	ck_assert_ptr_null(b.k.data);
	ck_assert_ptr_null(b.proj.w_q.data);
	ck_assert_int_eq(b.embeddings, 0);
	attn_bundle_free(&b);
}
END_TEST

Suite *
layer_suite(void)
{
	Suite *s = suite_create("layer");
	TCase *tc = tcase_create("layer");

	tcase_add_test(tc, a_layer_reads_every_weight_and_bias);
	tcase_add_test(tc, w_o_and_the_biases_are_optional);
	tcase_add_loop_test(tc, layer_errors_name_their_place, 0,
	    (int)(sizeof layer_errors / sizeof layer_errors[0]));
	tcase_add_loop_test(tc, a_layer_that_is_no_json_says_what_it_is, 0,
	    (int)(sizeof layer_kinds / sizeof layer_kinds[0]));
	tcase_add_test(tc, a_bundle_holds_x_and_its_layer);
	tcase_add_test(tc, a_bundle_holds_xq_and_xkv_with_or_without_a_layer);
	tcase_add_loop_test(tc, bundle_embedding_errors_name_their_place, 0,
	    (int)(sizeof bundle_errors / sizeof bundle_errors[0]));
	suite_add_tcase(s, tc);
	return s;
}
