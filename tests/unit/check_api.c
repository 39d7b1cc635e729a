/*
 * check_api.c - libattn as a C program sees it, through attn.h and
 * attn_io.h (no internal.h; attn_private.h only for attn_head_inputs,
 * the inputs of one head, which the test reads back beside the stages
 * as printers do): read Q, K and V from text in memory,
 * view them as matrices, compute, read the stages, free everything; and
 * get an error back as a value with its file, line and column.
 *
 * Inputs are handed over in heap buffers with no NUL after them, as a
 * program that read a file would, so AddressSanitizer sees any read past
 * the length given.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "attn_io.h"
#include "attn_private.h"
#include "suites.h"
#include "testutil.h"

/* Read text that must parse; fail the test with the library's message
 * otherwise. */
static void
read_ok(const char *name, const char *text, enum attn_format fmt,
    struct attn_array *out)
{
	struct attn_error err;
	enum attn_status st;

	memset(&err, 0, sizeof err);
	st = read_exact(name, text, fmt, ATTN_READ_FINITE, out, &err);
	ck_assert_msg(st == ATTN_OK, "%s: status %d: %zu:%zu: %s", name, st,
	    err.line, err.col, err.msg);
}

START_TEST(a_program_computes_attention_from_csv_and_json_text)
{
	struct attn_array qa, ka, va;
	struct attn_matrix q, k, v;
	struct attn_config cfg;
	struct attn_stages st;
	struct attn_error err;
	const struct attn_matrix *w, *out;
	char text[ATTN_NUM_MAX];
	/* the worked example: logits 1/sqrt(2) and 0 */
	const double w1 = 1.0 / (1.0 + exp(-1.0 / sqrt(2.0)));

	read_ok("q.csv", "1,0\n", ATTN_FMT_CSV, &qa);
	read_ok("k.json", "[[1, 0], [0, 1]]", ATTN_FMT_JSON, &ka);
	read_ok("v.txt", "# values\n10 0\n0 10\n", ATTN_FMT_AUTO, &va);
	q = attn_array_matrix(&qa);
	k = attn_array_matrix(&ka);
	v = attn_array_matrix(&va);
	ck_assert_uint_eq(q.rows, 1);
	ck_assert_uint_eq(q.cols, 2);
	ck_assert_uint_eq(k.rows, 2);
	ck_assert_uint_eq(k.cols, 2);
	ck_assert_uint_eq(v.rows, 2);
	ck_assert_uint_eq(v.cols, 2);
	ck_assert_double_eq(*attn_at(&v, 0, 0), 10.0);

	attn_config_init(&cfg);
	memset(&err, 0, sizeof err);
	ck_assert_int_eq(attn_compute(&cfg, &q, &k, &v, &st, &err), ATTN_OK);
	w = &st.stage[attn_stage_lookup("weights", 7)];
	out = &st.stage[attn_stage_lookup("output", 6)];
	ck_assert_uint_eq(w->rows, 1);
	ck_assert_uint_eq(w->cols, 2);
	ck_assert_double_eq_tol(*attn_at(w, 0, 0), w1, 1e-15);
	ck_assert_double_eq_tol(*attn_at(w, 0, 1), 1.0 - w1, 1e-15);
	ck_assert_double_eq_tol(*attn_at(out, 0, 0), 10.0 * w1, 1e-14);
	ck_assert_double_eq_tol(*attn_at(out, 0, 1), 10.0 * (1.0 - w1),
	    1e-14);
	/* as a table would print it */
	attn_format_number(text, *attn_at(w, 0, 0), 4, ATTN_NUM_FIXED);
	ck_assert_str_eq(text, "0.6698");

	attn_stages_free(&st);
	attn_array_free(&qa);
	attn_array_free(&ka);
	attn_array_free(&va);
}
END_TEST

/*
 * attn_head_inputs gives the blocks each batch and head read: with two
 * batches, four query heads on two KV heads and a bias per batch and
 * head, the dot products of its q and k rows are the scores, scaled plus
 * its bias is scaled, and its weights times its v are that head's output.
 */
START_TEST(head_inputs_are_the_blocks_each_head_reads)
{
	enum { B = 2, H = 4, G = 2, T = 2, S = 3, DK = 2, DV = 2 };
	struct attn_matrix q, k, v, bias;
	struct attn_inputs in;
	struct attn_config cfg;
	struct attn_stages st;
	struct attn_error err;
	size_t b, h, i, j, c, x;

	ck_assert_int_eq(attn_matrix_alloc(&q, B * T, H * DK, &err), ATTN_OK);
	ck_assert_int_eq(attn_matrix_alloc(&k, B * S, G * DK, &err), ATTN_OK);
	ck_assert_int_eq(attn_matrix_alloc(&v, B * S, G * DV, &err), ATTN_OK);
	ck_assert_int_eq(attn_matrix_alloc(&bias, B * H * T, S, &err),
	    ATTN_OK);
	/* distinct values everywhere, so that a wrong block shows */
	for (x = 0; x < q.rows * q.cols; x++)
		q.data[x] = (double)(x % 7) / 7.0 - 0.3;
	for (x = 0; x < k.rows * k.cols; x++)
		k.data[x] = (double)(x % 5) / 5.0 - 0.4;
	for (x = 0; x < v.rows * v.cols; x++)
		v.data[x] = (double)x;
	for (x = 0; x < bias.rows * bias.cols; x++)
		bias.data[x] = (double)x / 10.0;
	memset(&in, 0, sizeof in);
	in.batches = B;
	in.q = q;
	in.k = k;
	in.v = v;
	in.bias = bias;
	in.bias_blocks = B * H;
	attn_config_init(&cfg);
	cfg.heads = H;
	cfg.kv_heads = G;
	ck_assert_int_eq(attn_run(&cfg, &in, ATTN_STAGES_ALL, &st, &err),
	    ATTN_OK);
	for (b = 0; b < B; b++)
		for (h = 0; h < H; h++) {
			struct attn_matrix sc = attn_stage_block(&st,
			    ATTN_STAGE_SCORES, b, h);
			struct attn_matrix sd = attn_stage_block(&st,
			    ATTN_STAGE_SCALED, b, h);
			struct attn_matrix w = attn_stage_block(&st,
			    ATTN_STAGE_WEIGHTS, b, h);
			struct attn_matrix o = attn_stage_block(&st,
			    ATTN_STAGE_OUTPUT, b, h);
			struct attn_head_inputs hi;

			attn_head_inputs(&st, &in, b, h, &hi);
			ck_assert_ptr_null(hi.mask.data);
			ck_assert_uint_eq(hi.bias.rows, T);
			ck_assert_uint_eq(hi.bias.cols, S);
			for (i = 0; i < T; i++)
				for (j = 0; j < S; j++) {
					double dot = 0.0;

					for (c = 0; c < DK; c++)
						dot += *attn_at(&hi.q, i, c) *
						    *attn_at(&hi.k, j, c);
					/* to rounding: the streaming
					 * kernel fuses multiply-adds */
					ck_assert_double_eq_tol(dot,
					    *attn_at(&sc, i, j), 1e-15);
					ck_assert_double_eq_tol(
					    *attn_at(&sc, i, j) * st.scale +
					    *attn_at(&hi.bias, i, j),
					    *attn_at(&sd, i, j), 1e-15);
				}
			for (i = 0; i < T; i++)
				for (c = 0; c < DV; c++) {
					double sum = 0.0;

					for (j = 0; j < S; j++)
						sum += *attn_at(&w, i, j) *
						    *attn_at(&hi.v, j, c);
					ck_assert_double_eq_tol(sum,
					    *attn_at(&o, i, c), 1e-12);
				}
		}
	attn_stages_free(&st);
	attn_matrix_free(&q);
	attn_matrix_free(&k);
	attn_matrix_free(&v);
	attn_matrix_free(&bias);
}
END_TEST

START_TEST(a_one_dimensional_json_array_is_one_row)
{
	struct attn_array a;
	struct attn_matrix m;

	read_ok("q.json", "[0.5, -2, 3e2]", ATTN_FMT_AUTO, &a);
	ck_assert_uint_eq(a.ndim, 1);
	m = attn_array_matrix(&a);
	ck_assert_uint_eq(m.rows, 1);
	ck_assert_uint_eq(m.cols, 3);
	ck_assert_double_eq(*attn_at(&m, 0, 2), 300.0);
	attn_array_free(&a);
}
END_TEST

START_TEST(a_bundle_holds_q_k_v_and_labels)
{
	static const char text[] =
	    "{\"Q\": [[1, 0]], \"K\": [[1, 0], [0, 1]],\n"
	    " \"V\": [[10, 0], [0, 10]],\n"
	    " \"labels\": {\"query\": [\"apple\"],"
	    " \"key\": [\"apple\", \"cheese\"]}}\n";
	struct attn_bundle b;
	struct attn_matrix q, k, v;
	struct attn_config cfg;
	struct attn_stages st;
	struct attn_error err;
	char *buf = malloc(sizeof text - 1);

	ck_assert_ptr_nonnull(buf);
	memcpy(buf, text, sizeof text - 1);
	ck_assert(attn_is_bundle(buf, sizeof text - 1));
	memset(&err, 0, sizeof err);
	ck_assert_msg(attn_read_bundle("ex.json", buf, sizeof text - 1,
	    ATTN_READ_FINITE, &b, &err) == ATTN_OK, "%zu:%zu: %s", err.line,
	    err.col, err.msg);
	free(buf);
	ck_assert_uint_eq(b.query_labels.count, 1);
	ck_assert_str_eq(b.query_labels.names[0], "apple");
	ck_assert_uint_eq(b.key_labels.count, 2);
	ck_assert_str_eq(b.key_labels.names[1], "cheese");
	q = attn_array_matrix(&b.q);
	k = attn_array_matrix(&b.k);
	v = attn_array_matrix(&b.v);
	attn_config_init(&cfg);
	ck_assert_int_eq(attn_compute(&cfg, &q, &k, &v, &st, &err), ATTN_OK);
	ck_assert_double_eq_tol(*attn_at(&st.stage[ATTN_STAGE_WEIGHTS], 0, 0),
	    0.6697615493266569, 1e-15);
	attn_stages_free(&st);
	attn_bundle_free(&b);
}
END_TEST

START_TEST(a_ragged_csv_is_a_data_error_with_its_position)
{
	static const char name[] = "k.csv";
	struct attn_array a;
	struct attn_error err;

	memset(&err, 0, sizeof err);
	ck_assert_int_eq(read_exact(name, "1,2\n3\n", ATTN_FMT_AUTO,
	    ATTN_READ_FINITE, &a, &err), ATTN_ERR_DATA);
	ck_assert_int_eq(err.status, ATTN_ERR_DATA);
	/* the name the caller passed, borrowed, not a copy */
	ck_assert_ptr_eq(err.file, name);
	ck_assert_uint_eq(err.line, 2);
	ck_assert_uint_gt(err.col, 0);
	ck_assert_uint_gt(strlen(err.msg), 0);
	ck_assert_ptr_null(strchr(err.msg, '\n'));
	/* nothing is handed over on failure, and freeing is harmless */
	ck_assert_ptr_null(a.data);
	attn_array_free(&a);
}
END_TEST

START_TEST(nan_in_q_is_refused_only_when_finite_is_asked)
{
	struct attn_array a;
	struct attn_error err;

	memset(&err, 0, sizeof err);
	ck_assert_int_eq(read_exact("q.csv", "1,2\n3,nan\n",
	    ATTN_FMT_CSV, ATTN_READ_FINITE, &a, &err), ATTN_ERR_DATA);
	ck_assert_str_eq(err.file, "q.csv");
	ck_assert_uint_eq(err.line, 2);
	ck_assert_uint_eq(err.col, 3);
	attn_array_free(&a);

	ck_assert_int_eq(read_exact("bias.csv", "1,2\n3,nan\n",
	    ATTN_FMT_CSV, 0, &a, &err), ATTN_OK);
	ck_assert(isnan(a.data[3]));
	attn_array_free(&a);
}
END_TEST

/* attn_format_guess(name, text) must give fmt. */
static const struct {
	const char *name;
	const char *text;
	enum attn_format fmt;
} guess_cases[] = {
	{ "q.json", "1,2", ATTN_FMT_JSON },
	{ "q.csv", "[[1]]", ATTN_FMT_CSV },
	{ "q.tsv", "1 2", ATTN_FMT_TSV },
	{ "q.npy", "", ATTN_FMT_NPY },
	{ "-", "  [[1, 2]]", ATTN_FMT_JSON },
	{ "-", "1,2\n3,4\n", ATTN_FMT_CSV },
	{ "-", "1\t2\n", ATTN_FMT_TEXT },
	{ "-", "a b\t1\n", ATTN_FMT_TSV },
	{ "-", "1 2\n3 4\n", ATTN_FMT_TEXT },
	{ "q.txt", "# x,y\n1 2\n", ATTN_FMT_TEXT },
	{ "q.txt", "1,2\n", ATTN_FMT_CSV },
};

#define NGUESS (int)(sizeof guess_cases / sizeof guess_cases[0])

START_TEST(formats_are_guessed_by_extension_then_content)
{
	const char *text = guess_cases[_i].text;

	ck_assert_int_eq(attn_format_guess(guess_cases[_i].name, text,
	    strlen(text)), guess_cases[_i].fmt);
}
END_TEST

Suite *
api_suite(void)
{
	Suite *s = suite_create("api");
	TCase *tc = tcase_create("program");

	tcase_add_test(tc, a_program_computes_attention_from_csv_and_json_text);
	tcase_add_test(tc, a_one_dimensional_json_array_is_one_row);
	tcase_add_test(tc, head_inputs_are_the_blocks_each_head_reads);
	tcase_add_test(tc, a_bundle_holds_q_k_v_and_labels);
	tcase_add_loop_test(tc, formats_are_guessed_by_extension_then_content,
	    0, NGUESS);
	suite_add_tcase(s, tc);

	tc = tcase_create("errors");
	tcase_add_test(tc, a_ragged_csv_is_a_data_error_with_its_position);
	tcase_add_test(tc, nan_in_q_is_refused_only_when_finite_is_asked);
	suite_add_tcase(s, tc);
	return s;
}
