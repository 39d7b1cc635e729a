/*
 * check_read_jsonl.c - JSON Lines (read_jsonl.c): one JSON array a line,
 * as jq -c writes them, read as the rows of a matrix or the matrices of a
 * stack; the content guess that finds them (read.c); and the errors, each
 * at its line and column of the file.  Every input is read from a buffer
 * of exactly its length, so that AddressSanitizer catches a read past the
 * end.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "suites.h"
#include "testutil.h"

#define NCASES(t) ((int)(sizeof (t) / sizeof (t)[0]))

/* What reads: the name, the text, the flags, the shape and the values in
 * C order. */
static const struct {
	const char *name, *text;
	unsigned flags;
	size_t ndim, shape[3];
	double v[8];
} lines[] = {
	/* jq -c '.[]' of a matrix: its rows */
	{ "-", "[1,2]\n[3,4.5]\n[-5,6e-1]\n", ATTN_READ_FINITE, 2, { 3, 2 },
	    { 1, 2, 3, 4.5, -5, 0.6 } },
	{ "rows.jsonl", "[1, 2]\n", 0, 2, { 1, 2 }, { 1, 2 } },
	{ "rows.ndjson", "\xEF\xBB\xBF[1,2]\r\n\r\n  \n[3,4]", 0, 2, { 2, 2 },
	    { 1, 2, 3, 4 } },
	{ "rows.txt", "[1, 2]  \n[3, 4]\n\n", 0, 2, { 2, 2 }, { 1, 2, 3, 4 } },
	/* jq -c '.[]' of a stack: its matrices */
	{ NULL, "[[1,2],[3,4]]\n[[5,6],[7,8]]\n", 0, 3, { 2, 2, 2 },
	    { 1, 2, 3, 4, 5, 6, 7, 8 } },
	/* each line's values meet the role's rules, as JSON's do */
	{ "-", "[true,false]\n[0,1]\n", ATTN_READ_BOOL, 2, { 2, 2 },
	    { 1, 0, 0, 1 } },
	{ "-", "[0,\"-inf\"]\n[\"-inf\",2]\n", ATTN_READ_BIAS, 2, { 2, 2 },
	    { 0, -INFINITY, -INFINITY, 2 } },
	/* one value a line: a column */
	{ "-", "[1]\n[2]\n", 0, 2, { 2, 1 }, { 1, 2 } },
};

START_TEST(json_lines_read_as_rows_or_matrices)
{
	struct attn_array a;
	struct attn_error err;
	size_t i, n = 1;

	ck_assert_msg(read_exact(lines[_i].name, lines[_i].text, ATTN_FMT_AUTO,
	    lines[_i].flags, &a, &err) == ATTN_OK, "%s", err.msg);
	ck_assert_uint_eq(a.ndim, lines[_i].ndim);
	for (i = 0; i < a.ndim; i++) {
		ck_assert_uint_eq(a.shape[i], lines[_i].shape[i]);
		n *= a.shape[i];
	}
	for (i = 0; i < n; i++)
		ck_assert_msg(a.data[i] == lines[_i].v[i], "value %zu is %g",
		    i, a.data[i]);
	ck_assert_str_eq(a.notice.msg, "");
	attn_array_free(&a);
}
END_TEST

/* The content guess: a first line that is one whole array, and another
 * line after it, is JSON Lines; an array over several lines, or alone on
 * one, is JSON; the name wins over the content, and .json holds one
 * JSON value. */
static const struct {
	const char *name, *text;
	enum attn_format want;
} guesses[] = {
	{ "-", "[1,2]\n[3,4]\n", ATTN_FMT_JSONL },
	{ "-", "  [[1,2],[3,4]]  \r\n[[5,6],[7,8]]", ATTN_FMT_JSONL },
	{ "-", "[\"a]\", 1]\n[2]\n", ATTN_FMT_JSONL },
	{ "q.txt", "[1]\n[2]\n", ATTN_FMT_JSONL },
	{ "q.jsonl", "1,2\n", ATTN_FMT_JSONL },
	{ "q.NDJSON", "", ATTN_FMT_JSONL },
	{ "-", "[1,2]\n", ATTN_FMT_JSON },
	{ "-", "[1,2]\n  \n\t\n", ATTN_FMT_JSON },
	{ "-", "[[1,2],\n [3,4]]\n", ATTN_FMT_JSON },
	{ "-", "[\n[1,2],\n[3,4]\n]\n", ATTN_FMT_JSON },
	{ "-", "[[1,2]\n,[3,4]]\n", ATTN_FMT_JSON },
	{ "-", "[[1,2], [3,4]] x\n[1]\n", ATTN_FMT_JSON },
	{ "-", "[\"]\\\"\", 1\n]\n", ATTN_FMT_JSON },
	{ "q.json", "[1,2]\n[3,4]\n", ATTN_FMT_JSON },
	{ "-", "[1. 2.]\n[3. 4.]\n", ATTN_FMT_REPR },
};

START_TEST(json_lines_are_guessed_by_name_or_content)
{
	const char *t = guesses[_i].text;
	size_t len = strlen(t);
	char *buf = malloc(len != 0 ? len : 1);

	ck_assert_ptr_nonnull(buf);
	memcpy(buf, t, len);
	ck_assert_msg(attn_format_guess(guesses[_i].name, buf, len) ==
	    guesses[_i].want, "case %d", _i);
	free(buf);
}
END_TEST

/* Errors, at LINE:COL of the file: inside a line as the JSON reader says
 * them, and of a line's shape against the first. */
static const struct {
	const char *name, *text;
	unsigned flags;
	size_t line, col;
	const char *msg;
} errors[] = {
	{ "-", "[1,2]\n[3]\n", 0, 2, 1,
	    "ragged array: row 2 has 1 value but row 1 has 2" },
	{ "-", "[1,2]\n\n[3,4]\n  [5,6,7]\n", 0, 4, 3,
	    "ragged array: row 3 has 3 values but row 1 has 2" },
	{ "-", "[[1],[2]]\n[[3]]\n", 0, 2, 1,
	    "ragged array: matrix 2 has 1 row but matrix 1 has 2" },
	{ "-", "[[1,2]]\n[[3]]\n", 0, 2, 1,
	    "ragged array: row 1 of matrix 2 has 1 value but row 1 of matrix "
	    "1 has 2" },
	{ "-", "[1,2]\n[[3,4]]\n", 0, 2, 1, "a matrix on this line but a row "
	    "on the first: in JSON Lines every line is a row (1-D), or every "
	    "line a matrix (2-D)" },
	{ "x.jsonl", "[[[1]]]\n", 0, 1, 1, "a 3-D array on a line: in JSON "
	    "Lines each line is a row (1-D) or a matrix (2-D)" },
	{ "-", "[1,2]\n[3,4]\n[5,6x]\n", 0, 3, 4,
	    "invalid JSON: malformed number '6x'" },
	{ "-", "[1,2]\n[3,\"nan\"]\n", ATTN_READ_FINITE, 2, 4,
	    "non-finite number 'nan' (Q, K, V and dO must be finite)" },
	{ "-", "[1,0]\n[0,-1e9]\n", ATTN_READ_BOOL, 2, 4, MASK_MSG("-1e9") },
	{ "-", "[1,2]\n[3,4] [5,6]\n", 0, 2, 7,
	    "several arrays on one line: JSON Lines holds one array a line, "
	    "a row (or every line a matrix)" },
	{ "-", "[1,2]\n[3,4] x\n", 0, 2, 7,
	    "trailing garbage after the JSON value" },
	{ "-", "[1,2]\n[3,4\n", 0, 2, 5,
	    "unexpected end of input (truncated JSON?)" },
	{ "x.jsonl", "[1,2]\n{\"Q\": [[1]]}\n", 0, 2, 1, "a JSON object (a "
	    "BUNDLE) where a matrix was expected: a BUNDLE must be the only "
	    "operand" },
	{ "x.jsonl", "[1,2]\n7\n", 0, 2, 1,
	    "expected an array, found a number" },
	{ "-", "[1,2]\n[3,\x01]\n", 0, 2, 4, "invalid JSON: control "
	    "character 0x01 outside a string (JSON's white space is space, "
	    "tab, LF and CR)" },
	{ "x.jsonl", " \n\n", 0, 3, 1, "no JSON lines: empty matrix" },
	{ "-", "[1,2]\n[3,\xFF]\n", 0, 2, 4,
	    "invalid UTF-8: byte 0xFF (JSON must be UTF-8)" },
	/* a .json file holds one value: the error says what the lines are */
	{ "x.json", "[1,2]\n[3,4]\n", 0, 2, 1, "a second JSON value on its "
	    "own line: one array a line is JSON Lines, read as such from a "
	    ".jsonl or .ndjson file or standard input; a .json file holds one "
	    "value" },
};

START_TEST(json_lines_errors_name_line_and_column)
{
	struct attn_array a;
	struct attn_error err;

	ck_assert_int_eq(read_exact(errors[_i].name, errors[_i].text,
	    ATTN_FMT_AUTO, errors[_i].flags, &a, &err), ATTN_ERR_DATA);
	ck_assert_str_eq(err.msg, errors[_i].msg);
	ck_assert_msg(err.line == errors[_i].line && err.col == errors[_i].col,
	    "at %zu:%zu, not %zu:%zu", err.line, err.col, errors[_i].line,
	    errors[_i].col);
	ck_assert_str_eq(err.file, errors[_i].name);
	ck_assert_ptr_null(a.data);
}
END_TEST

/* A NUL byte: told once, where it is in the file. */
START_TEST(a_nul_byte_in_json_lines_is_told_where_it_is)
{
	static const char text[] = "[1,2]\n[3,\0]\n";
	struct attn_array a;
	struct attn_error err;

	memset(&err, 0, sizeof err);
	ck_assert_int_eq(attn_read_array("x.jsonl", text, sizeof text - 1,
	    ATTN_FMT_AUTO, 0, &a, &err), ATTN_ERR_DATA);
	ck_assert_str_eq(err.msg, "NUL byte in JSON input");
	ck_assert_uint_eq(err.line, 2);
	ck_assert_uint_eq(err.col, 4);
}
END_TEST

Suite *
read_jsonl_suite(void)
{
	Suite *s = suite_create("read_jsonl");
	TCase *tc = tcase_create("lines");

	tcase_add_loop_test(tc, json_lines_read_as_rows_or_matrices, 0,
	    NCASES(lines));
	tcase_add_loop_test(tc, json_lines_are_guessed_by_name_or_content, 0,
	    NCASES(guesses));
	tcase_add_loop_test(tc, json_lines_errors_name_line_and_column, 0,
	    NCASES(errors));
	tcase_add_test(tc, a_nul_byte_in_json_lines_is_told_where_it_is);
	suite_add_tcase(s, tc);
	return s;
}
