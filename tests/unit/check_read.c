/*
 * check_read.c - the readers: text (CSV, TSV, white space), JSON arrays,
 * BUNDLEs and format guessing.
 *
 * Every input is copied into a buffer of exactly its length, with no NUL
 * after it, so that AddressSanitizer catches a reader that looks one byte
 * too far.  Errors are checked down to the message, line and column,
 * since users and the CLI tests see exactly those.
 */
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unictype.h>

#include "internal.h"
#include "suites.h"
#include "testutil.h"

#define NCASES(t) ((int)(sizeof (t) / sizeof (t)[0]))

/* An exact-length copy of text[0..len), not NUL-terminated. */
static char *
exact_copy(const char *text, size_t len)
{
	char *p = malloc(len != 0 ? len : 1);

	ck_assert_ptr_nonnull(p);
	memcpy(p, text, len);
	return p;
}

/* Read text (len bytes, or strlen when len is 0) with attn_read_array. */
static enum attn_status
read_n(const char *name, const char *text, size_t len, enum attn_format fmt,
    unsigned flags, struct attn_array *a, struct attn_error *err)
{
	enum attn_status st;
	char *buf;

	if (len == 0)
		len = strlen(text);
	buf = exact_copy(text, len);
	memset(err, 0, sizeof *err);
	st = attn_read_array(name, buf, len, fmt, flags, a, err);
	free(buf);
	return st;
}

static enum attn_status
read_s(const char *text, enum attn_format fmt, unsigned flags,
    struct attn_array *a, struct attn_error *err)
{
	return read_n("in", text, 0, fmt, flags, a, err);
}

static enum attn_status
bundle_s(const char *text, unsigned flags, struct attn_bundle *b,
    struct attn_error *err)
{
	enum attn_status st;
	size_t len = strlen(text);
	char *buf = exact_copy(text, len);

	memset(err, 0, sizeof *err);
	st = attn_read_bundle("b.json", buf, len, flags, b, err);
	free(buf);
	return st;
}

/* Read text that must parse, as a rows x cols matrix. */
static void
read_ok(const char *text, enum attn_format fmt, unsigned flags,
    struct attn_array *a, size_t rows, size_t cols)
{
	struct attn_error err;
	enum attn_status st = read_s(text, fmt, flags, a, &err);

	ck_assert_msg(st == ATTN_OK, "reading %s: %s", text, err.msg);
	ck_assert_uint_eq(a->ndim, 2);
	ck_assert_uint_eq(a->shape[0], rows);
	ck_assert_uint_eq(a->shape[1], cols);
}

static void
assert_values(const struct attn_array *a, const double *want, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		ck_assert_msg(a->data[i] == want[i], "value %zu is %.17g, not "
		    "%.17g", i, a->data[i], want[i]);
}

/* Read text that must parse as an unlabelled rows x cols matrix holding
 * want, row by row. */
static void
read_values(const char *text, enum attn_format fmt, unsigned flags,
    size_t rows, size_t cols, const double *want)
{
	struct attn_array a;

	read_ok(text, fmt, flags, &a, rows, cols);
	assert_values(&a, want, rows * cols);
	ck_assert_uint_eq(a.row_labels.count, 0);
	attn_array_free(&a);
}

/* Likewise for a matrix whose rows are labelled names[0..rows). */
static void
read_labelled(const char *text, enum attn_format fmt, unsigned flags,
    size_t rows, size_t cols, const double *want, const char *const *names)
{
	struct attn_array a;
	size_t i;

	read_ok(text, fmt, flags, &a, rows, cols);
	assert_values(&a, want, rows * cols);
	ck_assert_uint_eq(a.row_labels.count, rows);
	for (i = 0; i < rows; i++)
		ck_assert_str_eq(a.row_labels.names[i], names[i]);
	attn_array_free(&a);
}

/* One error case: what is read, how, and exactly what is reported. */
struct error_case {
	enum attn_format fmt;
	unsigned flags;
	const char *input;
	size_t len;		/* 0: strlen(input) */
	size_t line, col;
	const char *msg;
};

/* Check one error case; *out must come back empty, ready to free. */
static void
check_error(const struct error_case *c, int bundle)
{
	struct attn_error err;
	struct attn_array a;
	struct attn_bundle b;
	enum attn_status st;

	if (bundle) {
		st = bundle_s(c->input, c->flags, &b, &err);
		ck_assert_msg(st == ATTN_ERR_DATA, "input '%s' gave status "
		    "%d (%s)", c->input, (int)st, err.msg);
		ck_assert_ptr_null(b.q.data);
		ck_assert_ptr_null(b.k.data);
		ck_assert_ptr_null(b.v.data);
		ck_assert_ptr_null(b.mask.data);
		ck_assert_ptr_null(b.bias.data);
		ck_assert_uint_eq(b.query_labels.count, 0);
		attn_bundle_free(&b);
	} else {
		st = read_n("in", c->input, c->len, c->fmt, c->flags, &a, &err);
		ck_assert_msg(st == ATTN_ERR_DATA, "input '%s' gave status "
		    "%d (%s)", c->input, (int)st, err.msg);
		ck_assert_ptr_null(a.data);
		ck_assert_uint_eq(a.row_labels.count, 0);
		attn_array_free(&a);
	}
	ck_assert_str_eq(err.msg, c->msg);
	ck_assert_msg(err.line == c->line && err.col == c->col,
	    "'%s' for input '%s' at %zu:%zu, expected %zu:%zu", err.msg,
	    c->input, err.line, err.col, c->line, c->col);
	ck_assert_ptr_nonnull(err.file);
}

/* ---------------------------------------------------------------- text */

START_TEST(csv_reads_rows_of_numbers)
{
	static const double want[] = { 1, -2.5, 3e2, 4, 5, 0.125 };
	struct attn_array a;

	read_ok("1,-2.5,3e2\n4,5,0.125\n", ATTN_FMT_CSV, 0, &a, 2, 3);
	assert_values(&a, want, 6);
	ck_assert_uint_eq(a.row_labels.count, 0);
	attn_array_free(&a);
}
END_TEST

START_TEST(one_line_is_a_one_by_n_matrix)
{
	static const double want[] = { 1, 2, 3 };
	struct attn_array a;
	struct attn_matrix m;

	/* No newline at the end, either. */
	read_ok("1 2 3", ATTN_FMT_TEXT, 0, &a, 1, 3);
	assert_values(&a, want, 3);
	m = attn_array_matrix(&a);
	ck_assert_uint_eq(m.rows, 1);
	ck_assert_uint_eq(m.cols, 3);
	ck_assert_uint_eq(m.stride, 3);
	ck_assert_ptr_eq(m.data, a.data);
	attn_array_free(&a);
}
END_TEST

START_TEST(csv_with_header_and_labels_reads_labels)
{
	static const double want[] = { 1, 2, 3, 4, 5, 6 };
	struct attn_array a;

	read_ok("token,x,y\nthe,1,2\ncat,3,4\nsat,5,6\n", ATTN_FMT_CSV, 0, &a,
	    3, 2);
	assert_values(&a, want, 6);
	ck_assert_uint_eq(a.row_labels.count, 3);
	ck_assert_str_eq(a.row_labels.names[0], "the");
	ck_assert_str_eq(a.row_labels.names[1], "cat");
	ck_assert_str_eq(a.row_labels.names[2], "sat");
	attn_array_free(&a);
}
END_TEST

static const char *const header_inputs[] = {
	"x,y\nthe,1,2\n",
	",x,y\nthe,1,2\n",	/* pandas: an empty corner */
};

/* The header names the value columns only, or the label column too. */
START_TEST(header_may_or_may_not_name_the_label_column)
{
	struct attn_array a;

	read_ok(header_inputs[_i], ATTN_FMT_CSV, 0, &a, 1, 2);
	ck_assert_uint_eq(a.row_labels.count, 1);
	ck_assert_str_eq(a.row_labels.names[0], "the");
	attn_array_free(&a);
}
END_TEST

/*
 * pandas' to_csv writes its index as a first column of row numbers under
 * an empty header field (R's write.csv quotes it: ""): that column labels
 * the rows, although it holds numbers, and the header may name the
 * columns with numbers too (pandas' default column names are 0, 1, ..).
 */
static const struct {
	const char *input;
	enum attn_format fmt;
} index_headers[] = {
	{ ",a,b\n0,1.0,0.0\n1,0.0,1.0\n", ATTN_FMT_CSV },
	{ ",0,1\n0,1.0,0.0\n1,0.0,1.0\n", ATTN_FMT_CSV },
	{ "\"\",\"a\",\"b\"\r\n\"0\",1,0\r\n\"1\",0,1\r\n", ATTN_FMT_CSV },
	{ "\ta\tb\n0\t1.0\t0.0\n1\t0.0\t1.0\n", ATTN_FMT_TSV },
	{ "# df.to_csv()\n,a,b\n0,1.0,0.0\n1,0.0,1.0\n", ATTN_FMT_AUTO },
};

START_TEST(empty_first_header_field_makes_first_column_labels)
{
	static const double want[] = { 1, 0, 0, 1 };
	static const char *const names[] = { "0", "1" };

	read_labelled(index_headers[_i].input, index_headers[_i].fmt,
	    ATTN_READ_FINITE, 2, 2, want, names);
}
END_TEST

#define NOTICE(h) "'" h "' is not a number, so it was read as a column " \
	"header and skipped; if it is a value, correct it (a header written " \
	"as a '#' comment gives no warning)"

/* A one-column file's header and a mistyped first value look the same:
 * the array comes with a notice at the header, which the CLI prints. */
static const struct {
	const char *input;
	enum attn_format fmt;
	size_t rows, line, col;		/* line 0: no notice */
	const char *msg;
} notices[] = {
	{ "l\n2\n3\n", ATTN_FMT_TEXT, 2, 1, 1, NOTICE("l") },
	{ "# typed by hand\n\n  1O\r\n2\n", ATTN_FMT_CSV, 1, 3, 3,
	    NOTICE("1O") },
	{ "\xEF\xBB\xBF\"x\"\n1\n", ATTN_FMT_TSV, 1, 1, 1, NOTICE("\"x\"") },
	{ "l\n2\n", ATTN_FMT_AUTO, 1, 1, 1, NOTICE("l") },
	{ "x\n\"1\"\n", ATTN_FMT_CSV, 1, 1, 1, NOTICE("x") },
	/* none where a header cannot be a value */
	{ "x\nthe,1\n", ATTN_FMT_CSV, 1, 0, 0, NULL },
	{ "# x\n1\n2\n", ATTN_FMT_TEXT, 2, 0, 0, NULL },
	{ "x\nthe 1\n", ATTN_FMT_TEXT, 1, 0, 0, NULL },
	{ "1\n2\n", ATTN_FMT_TEXT, 2, 0, 0, NULL },
	{ "[[1], [2]]", ATTN_FMT_JSON, 2, 0, 0, NULL },
};

START_TEST(one_column_header_comes_with_a_notice)
{
	struct attn_array a;
	struct attn_error *n = &a.notice;

	read_ok(notices[_i].input, notices[_i].fmt, 0, &a, notices[_i].rows,
	    1);
	if (notices[_i].line == 0) {
		ck_assert_str_eq(n->msg, "");
	} else {
		ck_assert_str_eq(n->msg, notices[_i].msg);
		ck_assert_int_eq(n->status, ATTN_OK);
		ck_assert_str_eq(n->file, "in");
		ck_assert_uint_eq(n->line, notices[_i].line);
		ck_assert_uint_eq(n->col, notices[_i].col);
	}
	attn_array_free(&a);
	ck_assert_str_eq(n->msg, "");
}
END_TEST

#define RANGE_NOTICE(h) "'" h "' (0, 1, .., n-1 over other numbers) was " \
	"read as the header pandas' to_csv(index=False) writes and skipped; " \
	"if it is data, write one of its numbers otherwise (0.0 for 0)"

/*
 * A first row 0, 1, .., n-1 over rows that are not is the header pandas'
 * to_csv(index=False) writes for unnamed columns: skipped, with a notice.
 * The edges: a file of one row, or whose every row reads so, is data; so
 * is one column (a first value of 0 is common), text whose numbers only
 * equal the indices (0.0), white-space text (numpy.savetxt writes no such
 * header) and a mask's 0,1 (a mask row).
 */
static const struct {
	const char *input;
	enum attn_format fmt;
	unsigned flags;
	size_t rows, cols;
	double first;			/* the first value read */
	size_t line, col;		/* line 0: no notice */
	const char *msg;
} index_rows[] = {
	{ "0,1,2\n0.5,1,2\n3,4,5\n", ATTN_FMT_CSV, 0, 2, 3, 0.5, 1, 1,
	    RANGE_NOTICE("0,1,2") },
	{ "# from pandas\n\"0\",\"1\"\r\n7,8\r\n", ATTN_FMT_CSV, 0, 1, 2, 7,
	    2, 1, RANGE_NOTICE("\"0\",\"1\"") },
	{ "  0\t1\n0\t1\n5\t6\n", ATTN_FMT_TSV, 0, 2, 2, 0, 1, 3,
	    RANGE_NOTICE("0\\x091") },
	{ "0,1,2\n1,0,1\n", ATTN_FMT_CSV, ATTN_READ_BOOL, 1, 3, 1, 1, 1,
	    RANGE_NOTICE("0,1,2") },
	{ "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n"
	    "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1\n", ATTN_FMT_AUTO, 0, 1, 16, 1, 1,
	    1, RANGE_NOTICE("0,1,2,3,4,5,6,7,8,9,10,11,12,13,...") },
	/* pandas' frame whose first row is 0, 1, 2 */
	{ "0,1,2\n0,1,2\n5,6,7\n", ATTN_FMT_CSV, 0, 2, 3, 0, 1, 1,
	    RANGE_NOTICE("0,1,2") },
	/* data */
	{ "0,1,2\n", ATTN_FMT_CSV, 0, 1, 3, 0, 0, 0, NULL },
	{ "0,1\n0,1\n0,1\n", ATTN_FMT_CSV, 0, 3, 2, 0, 0, 0, NULL },
	{ "0\n5\n", ATTN_FMT_CSV, 0, 2, 1, 0, 0, 0, NULL },
	{ "0.0,1,2\n3,4,5\n", ATTN_FMT_CSV, 0, 2, 3, 0, 0, 0, NULL },
	{ "0,1e0\n3,4\n", ATTN_FMT_CSV, 0, 2, 2, 0, 0, 0, NULL },
	{ "0,2,1\n3,4,5\n", ATTN_FMT_CSV, 0, 2, 3, 0, 0, 0, NULL },
	/* numpy.arange(6).reshape(2, 3): row 2 continues the count */
	{ "0,1,2\n3,4,5\n", ATTN_FMT_CSV, 0, 2, 3, 0, 0, 0, NULL },
	{ "0,1,2\n3,4,5\n0,1,2\n", ATTN_FMT_CSV, 0, 3, 3, 0, 0, 0, NULL },
	{ "1,2,3\n3,4,5\n", ATTN_FMT_CSV, 0, 2, 3, 1, 0, 0, NULL },
	{ "0 1 2\n3 4 5\n", ATTN_FMT_TEXT, 0, 2, 3, 0, 0, 0, NULL },
	{ "0,1\n1,0\n", ATTN_FMT_CSV, ATTN_READ_BOOL, 2, 2, 0, 0, 0, NULL },
	{ "a,b\n0,1\n3,4\n", ATTN_FMT_CSV, 0, 2, 2, 0, 0, 0, NULL },
	{ "x,0,1\ny,3,4\n", ATTN_FMT_CSV, 0, 2, 2, 0, 0, 0, NULL },
};

START_TEST(pandas_index_names_row_is_a_header_with_a_notice)
{
	struct attn_array a;
	struct attn_error *n = &a.notice;

	read_ok(index_rows[_i].input, index_rows[_i].fmt, index_rows[_i].flags,
	    &a, index_rows[_i].rows, index_rows[_i].cols);
	ck_assert(a.data[0] == index_rows[_i].first);
	if (index_rows[_i].line == 0) {
		ck_assert_str_eq(n->msg, "");
	} else {
		ck_assert_uint_eq(a.col_labels.count, 0);
		ck_assert_str_eq(n->msg, index_rows[_i].msg);
		ck_assert_int_eq(n->status, ATTN_OK);
		ck_assert_uint_eq(n->line, index_rows[_i].line);
		ck_assert_uint_eq(n->col, index_rows[_i].col);
	}
	attn_array_free(&a);
}
END_TEST

/* A mask's row 1 of 0, 1, 2 that stays data (one row, or every row
 * alike) holds a 2, which no mask does. */
static const struct error_case index_row_errors[] = {
	{ ATTN_FMT_CSV, ATTN_READ_BOOL, "0,1,2\n", 0, 1, 5, MASK_MSG("2") },
	{ ATTN_FMT_TSV, ATTN_READ_BOOL, "\"0\"\t\"1\"\t\"2\"\n", 0, 1, 9,
	    MASK_MSG("\"2\"") },
	/* rows under it are checked as they are read */
	{ ATTN_FMT_CSV, ATTN_READ_BOOL, "0,1,2\n0,1,2\n", 0, 2, 5,
	    MASK_MSG("2") },
	{ ATTN_FMT_CSV, ATTN_READ_BOOL, "0,1,2\n1,0,1\n1,2,1\n", 0, 3, 3,
	    MASK_MSG("2") },
};

START_TEST(mask_index_row_kept_as_data_is_checked)
{
	check_error(&index_row_errors[_i], 0);
}
END_TEST

START_TEST(header_without_labels_is_skipped)
{
	static const double want[] = { 1, 2, 3, 4 };
	struct attn_array a;

	read_ok("a\tb\n1\t2\n3\t4\n", ATTN_FMT_TSV, 0, &a, 2, 2);
	assert_values(&a, want, 4);
	ck_assert_uint_eq(a.row_labels.count, 0);
	attn_array_free(&a);
}
END_TEST

/* A header's names of the value columns are kept, without their quotes;
 * none when one of them is empty, or when there is no header. */
static const struct {
	const char *input;
	enum attn_format fmt;
	size_t rows;
	const char *names[2];	/* { NULL }: none */
} col_headers[] = {
	{ "a\tb\n1\t2\n", ATTN_FMT_TSV, 1, { "a", "b" } },
	{ "token,x,y\nthe,1,2\n", ATTN_FMT_CSV, 1, { "x", "y" } },
	{ "x,y\nthe,1,2\ncat,3,4\n", ATTN_FMT_CSV, 2, { "x", "y" } },
	{ ",\"1\",\"h1:a, b\"\nq1,1,2\n", ATTN_FMT_CSV, 1,
	    { "1", "h1:a, b" } },
	{ "# f\n  x  y\n1 2\n", ATTN_FMT_TEXT, 1, { "x", "y" } },
	{ "x,\"\"\n1,2\n", ATTN_FMT_CSV, 1, { NULL } },
	{ "1,2\n3,4\n", ATTN_FMT_CSV, 2, { NULL } },
	{ "[[1, 2]]", ATTN_FMT_JSON, 1, { NULL } },
};

START_TEST(header_names_the_columns)
{
	struct attn_array a;
	size_t j;

	read_ok(col_headers[_i].input, col_headers[_i].fmt, 0, &a,
	    col_headers[_i].rows, 2);
	if (col_headers[_i].names[0] == NULL) {
		ck_assert_uint_eq(a.col_labels.count, 0);
	} else {
		ck_assert_uint_eq(a.col_labels.count, 2);
		for (j = 0; j < 2; j++)
			ck_assert_str_eq(a.col_labels.names[j],
			    col_headers[_i].names[j]);
	}
	attn_array_free(&a);
	ck_assert_uint_eq(a.col_labels.count, 0);
}
END_TEST

START_TEST(quoted_labels_keep_commas_quotes_and_numbers)
{
	struct attn_array a;

	read_ok("\"a, b\",1\n\"say \"\"hi\"\"\",2\n\"2\",3\n  \"\" , 4\n",
	    ATTN_FMT_CSV, 0, &a, 4, 1);
	ck_assert_uint_eq(a.row_labels.count, 4);
	ck_assert_str_eq(a.row_labels.names[0], "a, b");
	ck_assert_str_eq(a.row_labels.names[1], "say \"hi\"");
	ck_assert_str_eq(a.row_labels.names[2], "2");
	ck_assert_str_eq(a.row_labels.names[3], "");
	ck_assert(a.data[3] == 4);
	attn_array_free(&a);
}
END_TEST

/*
 * RFC 4180: a quoted field is its contents.  csv.writer(quoting=
 * QUOTE_ALL) quotes every number; a spreadsheet quotes a header; blanks
 * inside the quotes are trimmed as outside.  The first line of quoted
 * numbers is data, not a header.
 */
static const struct {
	const char *input;
	enum attn_format fmt;
	unsigned flags;
} quoted_numbers[] = {
	{ "\"1\",\"-2.5\"\r\n\"3e2\",\"4\"\r\n", ATTN_FMT_CSV, 0 },
	{ "\"a, b\",\"c \"\"d\"\"\"\n\" 1\", \"-2.5 \"\n3e2,\"4\"\n",
	    ATTN_FMT_CSV, 0 },
	{ "\"1\"\t\"-2.5\"\n\"3e2\"\t4\n", ATTN_FMT_TSV, 0 },
	{ "\"1\" \"-2.5\"\n\"3e2\"   \"4\"\n", ATTN_FMT_TEXT, 0 },
	{ "\"1\",\"-2.5\"\n\"3e2\",\"4\"\n", ATTN_FMT_AUTO, ATTN_READ_FINITE },
};

START_TEST(quoted_numbers_are_numbers)
{
	static const double want[] = { 1, -2.5, 300, 4 };

	read_values(quoted_numbers[_i].input, quoted_numbers[_i].fmt,
	    quoted_numbers[_i].flags, 2, 2, want);
}
END_TEST

/* A quoted boolean in a mask, and quoted labels beside quoted numbers. */
START_TEST(quoted_labels_and_booleans_read_as_their_contents)
{
	static const double want[] = { 1, 0, 0, 1 };
	static const char *const names[] = { "the", "say, \"hi\"" };

	read_labelled("\"the\",\"True\",\"0\"\n\"say, \"\"hi\"\"\",\"0.0\","
	    "true\n", ATTN_FMT_CSV, ATTN_READ_BOOL, 2, 2, want, names);
}
END_TEST

static const struct {
	const char *input;
	enum attn_format fmt;
} labelled[] = {
	{ "the\t1\t2\ncat\t3\t4\n", ATTN_FMT_TSV },
	{ "the 1  2\n\tcat 3 4  \n", ATTN_FMT_TEXT },
	{ "\"the\" 1 2\n\"cat\" 3 4\n", ATTN_FMT_TEXT },
};

START_TEST(tsv_and_text_read_labels)
{
	static const double want[] = { 1, 2, 3, 4 };
	static const char *const names[] = { "the", "cat" };

	read_labelled(labelled[_i].input, labelled[_i].fmt, 0, 2, 2, want,
	    names);
}
END_TEST

static const struct {
	const char *input;
	enum attn_format fmt;
} crlf_bom[] = {
	{ "\xEF\xBB\xBF" "1,2\r\n3,4\r\n", ATTN_FMT_CSV },
	{ "\xEF\xBB\xBF" "a\tb\r\n1\t2\r\n3\t4", ATTN_FMT_TSV },
	{ "1 2\r\n\r\n# c\r\n3 4\r\n", ATTN_FMT_TEXT },
	{ "\xEF\xBB\xBF[[1, 2],\r\n [3, 4]]\r\n", ATTN_FMT_JSON },
	{ "\xEF\xBB\xBF" "1,2\r\n3,4\r\n", ATTN_FMT_AUTO },
};

START_TEST(crlf_and_bom_are_accepted)
{
	static const double want[] = { 1, 2, 3, 4 };
	struct attn_array a;

	read_ok(crlf_bom[_i].input, crlf_bom[_i].fmt, 0, &a, 2, 2);
	assert_values(&a, want, 4);
	attn_array_free(&a);
}
END_TEST

START_TEST(comments_and_blank_lines_are_skipped)
{
	static const double want[] = { 1, 2, 3, 4 };
	struct attn_array a;

	read_ok("# output 2x2\n\n   \n1,2\n  # 9,9,9\n\t\n3,4\n\n",
	    ATTN_FMT_CSV, 0, &a, 2, 2);
	assert_values(&a, want, 4);
	attn_array_free(&a);
}
END_TEST

/* numpy.savetxt's default: %.18e, one space between values. */
START_TEST(numpy_savetxt_default_output_is_read)
{
	static const double want[] = { 0.1, -2, 1e-300, 3.5 };
	struct attn_array a;

	read_ok("1.000000000000000056e-01 -2.000000000000000000e+00\n"
	    "1.000000000000000003e-300 3.500000000000000000e+00\n",
	    ATTN_FMT_TEXT, 0, &a, 2, 2);
	assert_values(&a, want, 4);
	attn_array_free(&a);
}
END_TEST

/* numpy.loadtxt's white space: any run of blanks and tabs separates, in
 * a column-aligned file too, whatever the name or the guess says. */
START_TEST(whitespace_text_splits_on_runs_of_blanks_and_tabs)
{
	static const double want[] = { 1, 0, 1, 0, 0, 1, 0, 1 };
	static const char text[] = "1  0\t1 0\n  0 1   0 1\n";
	static const char *const names[] = { "m.txt", "-", "m" };
	struct attn_array a;
	struct attn_error err;
	size_t i;

	for (i = 0; i < 3; i++) {
		ck_assert_msg(read_n(names[i], text, 0, ATTN_FMT_AUTO, 0, &a,
		    &err) == ATTN_OK, "%s: %s", names[i], err.msg);
		ck_assert_uint_eq(a.shape[0], 2);
		ck_assert_uint_eq(a.shape[1], 4);
		assert_values(&a, want, 8);
		attn_array_free(&a);
	}
	read_values(text, ATTN_FMT_TEXT, 0, 2, 4, want);
}
END_TEST

START_TEST(csv_fields_are_trimmed_of_spaces_and_tabs)
{
	static const double want[] = { 1, 2, 3 };
	struct attn_array a;

	read_ok(" 1 ,\t2\t,  3  \n", ATTN_FMT_CSV, 0, &a, 1, 3);
	assert_values(&a, want, 3);
	attn_array_free(&a);
}
END_TEST

/* A decimal text and the double it must round to; the 30-digit cases sit
 * just below and just above the midpoint 1 + 2^-53, where a parser that
 * is not correctly rounded goes wrong. */
static const struct {
	const char *text;
	double want;
} rounding[] = {
	{ "0.1", 0.1 },
	{ "2.2250738585072011e-308", 0x0.fffffffffffffp-1022 },
	{ "2.2250738585072014e-308", 0x1p-1022 },
	{ "4.9406564584124654e-324", 0x1p-1074 },
	{ "1.00000000000000011102230246251", 1.0 },
	{ "1.00000000000000011102230246252", 0x1.0000000000001p0 },
	{ "9007199254740993", 9007199254740992.0 },
	{ "1.7976931348623157e308", 0x1.fffffffffffffp1023 },
	{ "-0", -0.0 },
	{ "123456789012345678901234567890", 1.2345678901234568e29 },
};

START_TEST(numbers_are_correctly_rounded)
{
	static const enum attn_format fmts[] = {
		ATTN_FMT_CSV, ATTN_FMT_TEXT, ATTN_FMT_JSON
	};
	char text[128];
	struct attn_array a;
	struct attn_error err;
	size_t f;

	for (f = 0; f < sizeof fmts / sizeof fmts[0]; f++) {
		snprintf(text, sizeof text, fmts[f] == ATTN_FMT_JSON ?
		    "[%s]" : "%s\n", rounding[_i].text);
		ck_assert_int_eq(read_s(text, fmts[f], ATTN_READ_FINITE, &a,
		    &err), ATTN_OK);
		ck_assert_msg(a.data[0] == rounding[_i].want &&
		    signbit(a.data[0]) == signbit(rounding[_i].want),
		    "%s read as %a, not %a", text, a.data[0],
		    rounding[_i].want);
		attn_array_free(&a);
	}
}
END_TEST

/* LC_NUMERIC with a decimal comma must change nothing. */
START_TEST(numbers_ignore_a_decimal_comma_locale)
{
	static const double want[] = { 0.5, 1.25 };
	const char *loc = getenv("ATTN_TEST_LOCALE");
	struct attn_array a;

	if (loc == NULL)
		loc = "de_DE.UTF-8";
	ck_assert_msg(setlocale(LC_ALL, loc) != NULL, "locale %s is missing "
	    "(make unit generates it through tests/locale.sh)", loc);
	read_ok("0.5 1.25\n", ATTN_FMT_TEXT, 0, &a, 1, 2);
	assert_values(&a, want, 2);
	attn_array_free(&a);
	read_ok("0.5,1.25\n", ATTN_FMT_CSV, 0, &a, 1, 2);
	assert_values(&a, want, 2);
	attn_array_free(&a);
	read_ok("[[0.5, 1.25]]", ATTN_FMT_JSON, 0, &a, 1, 2);
	assert_values(&a, want, 2);
	attn_array_free(&a);
	setlocale(LC_ALL, "C");
}
END_TEST

START_TEST(nonfinite_spellings_read_without_finite_flag)
{
	struct attn_array a;

	read_ok("inf,-inf,nan,-Infinity,NaN,+INF\n", ATTN_FMT_CSV, 0, &a,
	    1, 6);
	ck_assert(isinf(a.data[0]) && a.data[0] > 0);
	ck_assert(isinf(a.data[1]) && a.data[1] < 0);
	ck_assert(isnan(a.data[2]));
	ck_assert(isinf(a.data[3]) && a.data[3] < 0);
	ck_assert(isnan(a.data[4]));
	ck_assert(isinf(a.data[5]) && a.data[5] > 0);
	attn_array_free(&a);
}
END_TEST

START_TEST(inf_strings_accepted_without_finite_flag)
{
	struct attn_array a;
	struct attn_error err;

	ck_assert_int_eq(read_s("[[\"-inf\", 0], [\"inf\", \"nan\"]]",
	    ATTN_FMT_JSON, 0, &a, &err), ATTN_OK);
	ck_assert_uint_eq(a.ndim, 2);
	ck_assert(isinf(a.data[0]) && a.data[0] < 0);
	ck_assert(a.data[1] == 0);
	ck_assert(isinf(a.data[2]) && a.data[2] > 0);
	ck_assert(isnan(a.data[3]));
	attn_array_free(&a);
}
END_TEST

static const struct error_case finite_cases[] = {
	{ ATTN_FMT_CSV, ATTN_READ_FINITE, "1,2\n3,nan\n", 0, 2, 3,
	    "non-finite number 'nan' (Q, K, V and dO must be finite)" },
	{ ATTN_FMT_TEXT, ATTN_READ_FINITE, "1 -inf\n", 0, 1, 3,
	    "non-finite number '-inf' (Q, K, V and dO must be finite)" },
	{ ATTN_FMT_TSV, ATTN_READ_FINITE, "x\tInfinity\n", 0, 1, 3,
	    "non-finite number 'Infinity' (Q, K, V and dO must be finite)" },
	{ ATTN_FMT_JSON, ATTN_READ_FINITE, "[[1, 2],\n [\"inf\", 3]]", 0,
	    2, 3, "non-finite number 'inf' (Q, K, V and dO must be finite)" },
	{ ATTN_FMT_JSON, ATTN_READ_FINITE, "[1, 1e999]", 0, 1, 5,
	    "number out of range: '1e999'" },
};

START_TEST(nonfinite_rejected_with_finite_flag)
{
	check_error(&finite_cases[_i], 0);
}
END_TEST

static const struct error_case out_of_range[] = {
	{ ATTN_FMT_CSV, 0, "1,-1e999\n", 0, 1, 3,
	    "number out of range: '-1e999'" },
	{ ATTN_FMT_JSON, 0, "[[1],\n [2e400]]", 0, 2, 3,
	    "number out of range: '2e400'" },
};

/* A literal too large for a double is an error with or without the
 * flag: it is not an infinity the file meant to write. */
START_TEST(out_of_range_literal_is_an_error_without_finite_flag)
{
	check_error(&out_of_range[_i], 0);
}
END_TEST

/* Masks: numpy prints True and False; any case is read. */
static const struct {
	const char *input;
	enum attn_format fmt;
} text_booleans[] = {
	{ "True,False\nfalse,TRUE\n", ATTN_FMT_CSV },
	{ "True False\n0 1\n", ATTN_FMT_TEXT },
	{ "true\t0\nfalse\t1e0\n", ATTN_FMT_TSV },
	/* a header of names is still a header */
	{ "# mask\nk1,k2\n1,false\nfalse,1\n", ATTN_FMT_CSV },
	{ "[[true, false], [0, 1]]", ATTN_FMT_JSON },
	{ "[[1, 0.0], [false, true]]", ATTN_FMT_JSON },
};

START_TEST(booleans_read_as_one_and_zero_with_bool_flag)
{
	static const double want[] = { 1, 0, 0, 1 };

	read_values(text_booleans[_i].input, text_booleans[_i].fmt,
	    ATTN_READ_BOOL, 2, 2, want);
}
END_TEST

/* A boolean in the first row or column is a value, not a header or a
 * label; a real label column still works. */
START_TEST(boolean_mask_rows_keep_their_labels)
{
	static const double want[] = { 1, 0, 0, 1 };
	struct attn_array a;

	read_ok("the,True,False\ncat,False,True\n", ATTN_FMT_CSV,
	    ATTN_READ_BOOL, &a, 2, 2);
	assert_values(&a, want, 4);
	ck_assert_uint_eq(a.row_labels.count, 2);
	ck_assert_str_eq(a.row_labels.names[1], "cat");
	attn_array_free(&a);
}
END_TEST

/* A mask holds 0/1: an infinity is an additive mask given as a keep-mask,
 * which would read inverted, so it is refused where it stands. */
START_TEST(inf_in_a_mask_is_refused)
{
	static const struct {
		enum attn_format fmt;
		const char *text;
		size_t line, col;
	} cases[] = {
		{ ATTN_FMT_CSV, "0,-inf,0\n", 1, 3 },
		{ ATTN_FMT_TEXT, "1 1\ninf 0\n", 2, 1 },
		{ ATTN_FMT_JSON, "[[true, \"-inf\"]]", 1, 9 },
	};
	static const char *const msg[] = {
		MASK_MSG("-inf"), MASK_MSG("inf"), MASK_MSG("-inf"),
	};
	struct attn_error err;
	struct attn_array a;
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		memset(&err, 0, sizeof err);
		ck_assert_int_eq(attn_read_array("m", cases[i].text,
		    strlen(cases[i].text), cases[i].fmt, ATTN_READ_BOOL, &a,
		    &err), ATTN_ERR_DATA);
		ck_assert_str_eq(err.msg, msg[i]);
		ck_assert_uint_eq(err.line, cases[i].line);
		ck_assert_uint_eq(err.col, cases[i].col);
	}
}
END_TEST

#define BIAS_MSG(v) "'" v "' in a bias: a bias holds finite numbers, or " \
	"-inf to mask a key"

/* A bias may hold -inf (it masks a key) but not nan or +inf, which would
 * make a whole row of weights nan: each is refused where it stands. */
static const struct error_case bias_errors[] = {
	{ ATTN_FMT_CSV, ATTN_READ_BIAS, "0,-inf\nnan,0\n", 0, 2, 1,
	    BIAS_MSG("nan") },
	{ ATTN_FMT_TEXT, ATTN_READ_BIAS, "0 -inf\n0  inf\n", 0, 2, 4,
	    BIAS_MSG("inf") },
	{ ATTN_FMT_TSV, ATTN_READ_BIAS, "q1\t+Infinity\n", 0, 1, 4,
	    BIAS_MSG("+Infinity") },
	{ ATTN_FMT_CSV, ATTN_READ_BIAS, "1,-NaN\n", 0, 1, 3,
	    BIAS_MSG("-NaN") },
	{ ATTN_FMT_JSON, ATTN_READ_BIAS, "[[0, \"-inf\"],\n [\"nan\", 0]]", 0,
	    2, 3, BIAS_MSG("nan") },
	{ ATTN_FMT_JSON, ATTN_READ_BIAS, "[\"inf\"]", 0, 1, 2,
	    BIAS_MSG("inf") },
	/* and the number rules stay */
	{ ATTN_FMT_JSON, ATTN_READ_BIAS, "[1e999]", 0, 1, 2,
	    "number out of range: '1e999'" },
};

START_TEST(nan_and_plus_inf_in_a_bias_are_refused)
{
	check_error(&bias_errors[_i], 0);
}
END_TEST

START_TEST(bias_may_hold_minus_inf)
{
	static const char *const inputs[] = {
		"0,-inf\n-Infinity,2\n", "[[0, \"-inf\"], [\"-inf\", 2]]",
	};
	static const enum attn_format fmts[] = { ATTN_FMT_CSV, ATTN_FMT_JSON };
	struct attn_array a;
	size_t i;

	for (i = 0; i < 2; i++) {
		read_ok(inputs[i], fmts[i], ATTN_READ_BIAS, &a, 2, 2);
		ck_assert(a.data[0] == 0 && a.data[3] == 2);
		ck_assert(isinf(a.data[1]) && a.data[1] < 0);
		ck_assert(isinf(a.data[2]) && a.data[2] < 0);
		attn_array_free(&a);
	}
}
END_TEST

static const struct error_case bool_errors[] = {
	/* without the flag, booleans are not numbers */
	{ ATTN_FMT_CSV, 0, "1,True\n", 0, 1, 3, "not a number: 'True'" },
	{ ATTN_FMT_TEXT, 0, "0 1\nfalse 1\n", 0, 2, 1,
	    "not a number: 'false'" },
	{ ATTN_FMT_JSON, 0, "[1, false]", 0, 1, 5,
	    "expected a number, found false" },
	{ ATTN_FMT_JSON, ATTN_READ_FINITE, "[[1],\n [true]]", 0, 2, 3,
	    "expected a number, found true" },
	/* with it, nan is neither keep nor drop */
	{ ATTN_FMT_CSV, ATTN_READ_BOOL, "1,0\n0,nan\n", 0, 2, 3,
	    MASK_MSG("nan") },
	{ ATTN_FMT_TEXT, ATTN_READ_BOOL, "True False\n  NaN True\n", 0, 2, 3,
	    MASK_MSG("NaN") },
	{ ATTN_FMT_TSV, ATTN_READ_BOOL, "q1\ttrue\nq2\t-nan\n", 0, 2, 4,
	    MASK_MSG("-nan") },
	{ ATTN_FMT_JSON, ATTN_READ_BOOL, "[[true, false],\n [\"nan\", 1]]", 0,
	    2, 3, MASK_MSG("nan") },
	/* told before the finite rule, which names Q, K and V */
	{ ATTN_FMT_JSON, ATTN_READ_BOOL | ATTN_READ_FINITE, "[1, \"nan\"]", 0,
	    1, 5, MASK_MSG("nan") },
	{ ATTN_FMT_CSV, ATTN_READ_BOOL | ATTN_READ_FINITE, "1,inf\n", 0, 1, 3,
	    MASK_MSG("inf") },
	/* and the other rules stay */
	{ ATTN_FMT_TSV, ATTN_READ_BOOL, "true\tfalse\ntrue\tmaybe\n", 0, 2, 6,
	    "not a number: 'maybe'" },
	{ ATTN_FMT_CSV, ATTN_READ_BOOL, "1,\"true\"\n0,\"yes\"\n", 0, 2, 3,
	    "not a number: '\"yes\"'" },
	{ ATTN_FMT_CSV, ATTN_READ_BOOL, "true,false\n1\n", 0, 2, 2,
	    "row 2 has 1 value but row 1 has 2" },
	{ ATTN_FMT_JSON, ATTN_READ_BOOL, "[true, null]", 0, 1, 8,
	    "expected a number, found null" },
	{ ATTN_FMT_JSON, ATTN_READ_BOOL, "[\"true\"]", 0, 1, 2,
	    "expected a number, found a string" },
	{ ATTN_FMT_JSON, ATTN_READ_BOOL, "[[true, false], [true]]", 0, 1, 22,
	    "ragged array: row 2 has 1 value but row 1 has 2" },
	{ ATTN_FMT_JSON, ATTN_READ_BOOL, "[true, 1e999]", 0, 1, 8,
	    "number out of range: '1e999'" },
};

/*
 * A mask holds 0 and 1: any other number (Hugging Face's additive masks
 * hold 0 and finfo.min or -1e9) is refused where it stands by every
 * reader, JSON's own reading of plain arrays and a bundle's mask
 * included, with the message that sends it to --bias.
 */
static const struct error_case mask_values[] = {
	{ ATTN_FMT_CSV, ATTN_READ_BOOL, "0,1\n0,-1e9\n", 0, 2, 3,
	    MASK_MSG("-1e9") },
	{ ATTN_FMT_CSV, ATTN_READ_BOOL, "0,-3.4028234663852886e+38\n", 0, 1,
	    3, MASK_MSG("-3.4028234663852886e+38") },
	{ ATTN_FMT_TEXT, ATTN_READ_BOOL, "1 0.5\n", 0, 1, 3,
	    MASK_MSG("0.5") },
	{ ATTN_FMT_TSV, ATTN_READ_BOOL, "q1\t1\t2\n", 0, 1, 6,
	    MASK_MSG("2") },
	{ ATTN_FMT_CSV, ATTN_READ_BOOL | ATTN_READ_FINITE, "true,-1\n", 0, 1,
	    6, MASK_MSG("-1") },
	{ ATTN_FMT_JSON, ATTN_READ_BOOL, "[[0, 1], [0, -1e9]]", 0, 1, 14,
	    MASK_MSG("-1e9") },
	{ ATTN_FMT_JSON, ATTN_READ_BOOL, "[[[1]],\n [[0.25]]]", 0, 2, 4,
	    MASK_MSG("0.25") },
	{ ATTN_FMT_JSON, ATTN_READ_BOOL, "[[true, -1e9]]", 0, 1, 9,
	    MASK_MSG("-1e9") },
	{ ATTN_FMT_REPR, ATTN_READ_BOOL, "[[1. 0.]\n [0. 2.]]", 0, 2, 6,
	    MASK_MSG("2.") },
	{ ATTN_FMT_REPR, ATTN_READ_BOOL, "tensor([[1., -inf]])", 0, 1, 14,
	    MASK_MSG("-inf") },
};

START_TEST(mask_numbers_other_than_0_and_1_are_refused)
{
	check_error(&mask_values[_i], 0);
}
END_TEST

START_TEST(bundle_mask_numbers_other_than_0_and_1_are_refused)
{
	static const struct error_case c = {
		ATTN_FMT_JSON, ATTN_READ_FINITE, "{\"Q\": [[1]], \"K\": [[1]],\n"
		    " \"mask\": [[-1e9]], \"V\": [[1]]}", 0, 2, 12,
		MASK_MSG("-1e9")
	};

	check_error(&c, 1);
}
END_TEST

START_TEST(bool_flag_errors_report_message_line_and_column)
{
	check_error(&bool_errors[_i], 0);
}
END_TEST

static const struct error_case text_errors[] = {
	/* ragged rows: at the first extra field or the end of the line */
	{ ATTN_FMT_CSV, 0, "1,2,3\n4,5\n", 0, 2, 4,
	    "row 2 has 2 values but row 1 has 3" },
	{ ATTN_FMT_CSV, 0, "1,2,3\n4,5,6,7\n", 0, 2, 7,
	    "row 2 has 4 values but row 1 has 3" },
	{ ATTN_FMT_TEXT, 0, "1 2\n\n3 4\n5\r\n", 0, 4, 2,
	    "row 3 has 1 value but row 1 has 2" },
	{ ATTN_FMT_TSV, 0, "a\tb\nx\t1\t2\ny\t3\n", 0, 3, 4,
	    "row 2 has 1 value but row 1 has 2" },
	/* not numbers */
	{ ATTN_FMT_CSV, 0, "1,2\n3,x\n", 0, 2, 3, "not a number: 'x'" },
	{ ATTN_FMT_TEXT, 0, "1 2\n3 1.2.3\n", 0, 2, 3,
	    "not a number: '1.2.3'" },
	{ ATTN_FMT_CSV, 0, "1,\"2\"\"\"\n", 0, 1, 3,
	    "not a number: '\"2\"\"\"'" },
	{ ATTN_FMT_CSV, 0, "\"1\",\"\"\n", 0, 1, 5, "not a number: '\"\"'" },
	{ ATTN_FMT_CSV, 0, "1,abcdefghijklmnopqrstuvwxyz0123456789\n", 0, 1, 3,
	    "not a number: 'abcdefghijklmnopqrstuvwxyz012345...'" },
	{ ATTN_FMT_CSV, 0, "\xEF\xBB\xBF" "1,0x10\n", 0, 1, 3,
	    "not a number: '0x10'" },
	{ ATTN_FMT_CSV, 0, "\"h\xC3\xA9llo\",1\n\"w\xC3\xB6rld\",x\n", 0,
	    2, 9, "not a number: 'x'" },
	/* empty fields */
	{ ATTN_FMT_CSV, 0, "1,,3\n", 0, 1, 3, "empty field" },
	{ ATTN_FMT_CSV, 0, "1,2,\n", 0, 1, 5,
	    "empty field at the end of the line (a trailing comma?)" },
	{ ATTN_FMT_TSV, 0, "1\t\t3\n", 0, 1, 3, "empty field" },
	/* no numbers at all: at the end of the input */
	{ ATTN_FMT_CSV, 0, "", 0, 1, 1, "no numbers: empty matrix" },
	{ ATTN_FMT_TEXT, 0, "# only a comment\n\n", 0, 3, 1,
	    "no numbers: empty matrix" },
	{ ATTN_FMT_CSV, 0, "a,b\n", 0, 1, 1, "only a header line, and no "
	    "numbers: no field of 'a,b' is a number" },
	/* NUL */
	{ ATTN_FMT_CSV, 0, "1,2\n3,\0" "4\n", 8, 2, 3,
	    "NUL byte in text input" },
	/* out of range, always */
	{ ATTN_FMT_TEXT, 0, "1 1e999\n", 0, 1, 3,
	    "number out of range: '1e999'" },
	/* labels */
	{ ATTN_FMT_CSV, 0, "the,1\n2,3\n", 0, 2, 1,
	    "row 2 has no label but row 1 has one: '2' is a number" },
	{ ATTN_FMT_CSV, 0, "1,2\ncat,3,4\n", 0, 2, 1,
	    "row 2 has a label but row 1 has none: 'cat' is not a number" },
	{ ATTN_FMT_CSV, 0, "1,2\ncat,3\n", 0, 2, 1, "not a number: 'cat'" },
	{ ATTN_FMT_CSV, 0, "a\nthe\n", 0, 2, 1,
	    "row 1 has a label 'the' but no numbers" },
	{ ATTN_FMT_CSV, 0, "x,,3\n", 0, 1, 3, "empty field" },
	/* quotes */
	{ ATTN_FMT_CSV, 0, "\"abc,1\n2,3\n", 0, 1, 1,
	    "unterminated quoted field" },
	{ ATTN_FMT_CSV, 0, "\"a\"b,1\n", 0, 1, 4,
	    "unexpected text after a quoted field" },
	{ ATTN_FMT_TEXT, 0, "\"a\"b 1\n", 0, 1, 4,
	    "unexpected text after a quoted field" },
	/* headers that do not fit the rows */
	{ ATTN_FMT_CSV, 0, "a,b,c,d\nthe,1,2\n", 0, 1, 7,
	    "header has 4 fields but row 1 has 2 values and a label" },
	{ ATTN_FMT_CSV, 0, "a\n1,2\n", 0, 1, 2,
	    "header has 1 field but row 1 has 2 values" },
	{ ATTN_FMT_TEXT, 0, "# c\na b c\r\n1 2\n", 0, 2, 5,
	    "header has 3 fields but row 1 has 2 values" },
	/* an index column's header: the index must be there */
	{ ATTN_FMT_CSV, 0, ",a,b\n0,1\n", 0, 1, 4,
	    "header has 3 fields but row 1 has 1 value and a label" },
	{ ATTN_FMT_CSV, 0, ",a\n0,1,2\n", 0, 1, 3,
	    "header has 2 fields but row 1 has 2 values and a label" },
	{ ATTN_FMT_CSV, 0, ",a,b\n0,1,2\n,3,4\n", 0, 3, 1, "empty field" },
	{ ATTN_FMT_CSV, 0, "\n,0,1\n", 0, 2, 1, "only a header line (',0,1', "
	    "an index column's header), and no rows under it" },
};

START_TEST(text_errors_report_message_line_and_column)
{
	check_error(&text_errors[_i], 0);
}
END_TEST

/*
 * Hostile text (tests/bad/ runs the same through the CLI).  Each was a
 * reader bug: a UTF-16 file was "NUL byte" at 1:2, Latin-1 labels went
 * to the output as they were, a file of CR-ended lines said "not a
 * number: '2?3'", a lone "-" or "0x10" (taken for a header) said "no
 * numbers: empty matrix" on the line after it, and a trailing comma on
 * a later row was "row 2 has 3 values".
 */
static const struct error_case hostile_text[] = {
	{ ATTN_FMT_CSV, 0, "\xFF\xFE" "1\0,\0" "2\0", 8, 1, 1,
	    "UTF-16 text (it starts with a UTF-16 byte order mark): attn "
	    "reads UTF-8; convert it first, e.g. with iconv -f UTF-16 -t "
	    "UTF-8" },
	{ ATTN_FMT_CSV, 0, "caf\xE9,1\n", 0, 1, 4,
	    "invalid UTF-8: byte 0xE9 (text input must be UTF-8)" },
	{ ATTN_FMT_CSV, 0, "1,2\n3,4\xFF\n", 0, 2, 4,
	    "invalid UTF-8: byte 0xFF (text input must be UTF-8)" },
	{ ATTN_FMT_TEXT, 0, "h\xC0\xAF x\n1 2\n", 0, 1, 2,
	    "invalid UTF-8: byte 0xC0 (text input must be UTF-8)" },
	{ ATTN_FMT_TSV, 0, "\xED\xA0\x80\t1\n", 0, 1, 1,
	    "invalid UTF-8: byte 0xED (text input must be UTF-8)" },
	{ ATTN_FMT_CSV, 0, "a,1\nb\xC3", 0, 2, 2,
	    "invalid UTF-8: byte 0xC3 (text input must be UTF-8)" },
	{ ATTN_FMT_CSV, 0, "1,2\r3,4\r", 0, 1, 4,
	    "carriage return (CR) without a line feed: lines must end in LF "
	    "or CRLF" },
	{ ATTN_FMT_CSV, 0, "# from an old Mac\r1,2\r", 0, 1, 18,
	    "carriage return (CR) without a line feed: lines must end in LF "
	    "or CRLF" },
	{ ATTN_FMT_CSV, 0, "-\n", 0, 1, 1, "only a header line, and no "
	    "numbers: no field of '-' is a number" },
	{ ATTN_FMT_TEXT, 0, "\n  0x10\n", 0, 2, 3, "only a header line, and "
	    "no numbers: no field of '0x10' is a number" },
	{ ATTN_FMT_CSV, 0, "\"a\",\"b\"\n# c\n", 0, 1, 1, "only a header "
	    "line, and no numbers: no field of '\"a\",\"b\"' is a number" },
	{ ATTN_FMT_CSV, 0, "1,2\n3,4,\n", 0, 2, 5,
	    "empty field at the end of the line (a trailing comma?)" },
	{ ATTN_FMT_TSV, 0, "1\t2\t\n", 0, 1, 5,
	    "empty field at the end of the line (a trailing tab?)" },
	/* labels reach the terminal: no control character in one, at the
	 * label; a quoted CSV field may hold a tab, an unquoted one an ESC */
	{ ATTN_FMT_CSV, 0, "a,1\n\x1B[2Jb,2\n", 0, 2, 1,
	    "control character 0x1B in a label" },
	{ ATTN_FMT_CSV, 0, "a,1\n  \"x\ty\",2\n", 0, 2, 3,
	    "control character 0x09 in a label" },
	{ ATTN_FMT_CSV, 0, "a, b\x7F\n1,2\n", 0, 1, 4,
	    "control character 0x7F in a label" },
	{ ATTN_FMT_CSV, 0, "\xC3\xA9,\"\x01\"\n1,2\n", 0, 1, 3,
	    "control character 0x01 in a label" },
	{ ATTN_FMT_TSV, 0, "a\tb\x0B\n1\t2\n", 0, 1, 3,
	    "control character 0x0B in a label" },
	{ ATTN_FMT_TSV, 0, "x\t1\r\n\"y\tz\"\t2\r\n", 0, 2, 1,
	    "control character 0x09 in a label" },
	{ ATTN_FMT_TEXT, 0, "\"a\tb\" 1\n", 0, 1, 1,
	    "control character 0x09 in a label" },
	{ ATTN_FMT_TEXT, 0, "x 1\ny\x1F 2\n", 0, 2, 1,
	    "control character 0x1F in a label" },
	/* C1 controls by their code point; other characters of two bytes
	 * pass */
	{ ATTN_FMT_CSV, 0, "\xC3\xA9,b\xC2\x9B" "2J\n1,2\n", 0, 1, 3,
	    "control character U+009B in a label" },
	{ ATTN_FMT_CSV, 0, "a,1\n\xC2\x80,2\n", 0, 2, 1,
	    "control character U+0080 in a label" },
	{ ATTN_FMT_TSV, 0, "x\t1\n\"y\xC2\x9F\"\t2\n", 0, 2, 1,
	    "control character U+009F in a label" },
	/* a preview is cut between characters, never inside one */
	{ ATTN_FMT_CSV, 0, "1,x\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9"
	    "\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9"
	    "\xC3\xA9\xC3\xA9\xC3\xA9\n", 0, 1, 3, "not a number: 'x\xC3\xA9"
	    "\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9"
	    "\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9...'" },
};

#define NO_COMMAS "no commas found; this looks "
#define NO_TABS "no tabs found; this looks "

/*
 * A .csv without commas or a .tsv without tabs: the separator it has is
 * named where it first stands (these were a header, then "row 1 has a
 * label '3;4' but no numbers" on line 2).  Blanks count where they split
 * a line into words one of which is a number.
 */
static const struct error_case wrong_separator[] = {
	{ ATTN_FMT_CSV, 0, "1;2\n3;4\n", 0, 1, 2, NO_COMMAS
	    "semicolon-separated: convert it, e.g. with tr ';' ','" },
	{ ATTN_FMT_CSV, 0, "# c,d\nq\tk\n1\t2\n", 0, 2, 2, NO_COMMAS
	    "tab-separated: name it .tsv" },
	{ ATTN_FMT_CSV, 0, "a b\n\"x y\"\n1  0\n", 0, 3, 2, NO_COMMAS
	    "space-separated: name it .txt" },
	{ ATTN_FMT_CSV, 0, "\"a;b\" 1\n", 0, 1, 6, NO_COMMAS
	    "space-separated: name it .txt" },
	{ ATTN_FMT_TSV, 0, "1,2\n3,4\n", 0, 1, 2, NO_TABS
	    "comma-separated: name it .csv" },
	{ ATTN_FMT_TSV, 0, "\xEF\xBB\xBF" "1 2\r\n", 0, 1, 2, NO_TABS
	    "space-separated: name it .txt" },
	{ ATTN_FMT_TSV, 0, "x\n1;2\n", 0, 2, 2, NO_TABS
	    "semicolon-separated: convert it, e.g. with tr ';' '\\t'" },
	/* semicolons between decimal commas: the commas are found */
	{ ATTN_FMT_CSV, 0, "1,5;2,0\n", 0, 1, 3, "not a number: '5;2' "
	    "(semicolons between decimal commas? attn reads ',' as the "
	    "separator and '.' as the decimal point)" },
};

START_TEST(wrong_separator_is_named)
{
	check_error(&wrong_separator[_i], 0);
}
END_TEST

/* A file of one column has no separator at all, and a separator found
 * anywhere is the file's: neither is refused for the others it holds. */
START_TEST(one_column_and_other_characters_pass_the_separator_check)
{
	static const double one[] = { 1, 2 }, two[] = { 1, 2, 3, 4 };

	read_values("my value\n1\n2\n", ATTN_FMT_CSV, 0, 2, 1, one);
	read_values("# a;b\n1\n2\n", ATTN_FMT_TSV, 0, 2, 1, one);
	read_values("\"a;b\",\"c d\"\n1,2\n3,4\n", ATTN_FMT_CSV, 0, 2, 2,
	    two);
	read_values("x y\tz\n1\t2\n3 \t4\n", ATTN_FMT_TSV, 0, 2, 2, two);
}
END_TEST

/* Each dash a number may hold by mistake, by its UTF-8 bytes, code point
 * and Unicode name. */
static const struct {
	const char *utf8, *code, *name;
} dash_cases[] = {
	{ "\xE2\x80\x90", "2010", "HYPHEN" },
	{ "\xE2\x80\x91", "2011", "NON-BREAKING HYPHEN" },
	{ "\xE2\x80\x92", "2012", "FIGURE DASH" },
	{ "\xE2\x80\x93", "2013", "EN DASH" },
	{ "\xE2\x80\x94", "2014", "EM DASH" },
	{ "\xE2\x80\x95", "2015", "HORIZONTAL BAR" },
	{ "\xE2\x88\x92", "2212", "MINUS SIGN" },
	{ "\xEF\xB9\xA3", "FE63", "SMALL HYPHEN-MINUS" },
	{ "\xEF\xBC\x8D", "FF0D", "FULLWIDTH HYPHEN-MINUS" },
};

/*
 * A number with a Unicode dash for its minus is named, with the dash's
 * code point and the fix, at the dash, in every format and wherever it
 * stands: in row 1 it was taken for a label or a header before.
 */
START_TEST(unicode_dash_in_a_number_is_named)
{
	const char *d = dash_cases[_i].utf8;
	char text[64], want[ATTN_MSG_MAX];
	static const struct {
		enum attn_format fmt;
		const char *before, *after, *shown;
		size_t line, col;
	} where[] = {
		{ ATTN_FMT_CSV, "", "1,0\n0,1\n", "%s1", 1, 1 },
		{ ATTN_FMT_CSV, "1,0\n0,\"", "5\"\n", "%s5", 2, 4 },
		{ ATTN_FMT_TSV, "x\ty\nthe\t1e", "3\t2\n", "1e%s3", 2, 7 },
		{ ATTN_FMT_TEXT, "1 2\n  3 ", "inf\n", "%sinf", 2, 5 },
		{ ATTN_FMT_JSON, "[[1, 0],\n [0, ", "1]]", "%s1", 2, 6 },
		{ ATTN_FMT_JSON, "[[\"", "inf\"]]", "%sinf", 1, 3 },
	};
	struct attn_array a;
	struct attn_error err;
	char shown[16];
	size_t i;

	for (i = 0; i < sizeof where / sizeof where[0]; i++) {
		snprintf(text, sizeof text, "%s%s%s", where[i].before, d,
		    where[i].after);
		snprintf(shown, sizeof shown, where[i].shown, d);
		snprintf(want, sizeof want, "%s'%s' has U+%s %s where a "
		    "number needs the ASCII '-': replace it, e.g. with sed "
		    "'s/%s/-/g'", where[i].fmt == ATTN_FMT_JSON &&
		    where[i].col == 6 ? "invalid JSON: " : "", shown,
		    dash_cases[_i].code, dash_cases[_i].name, d);
		ck_assert_int_eq(read_s(text, where[i].fmt, 0, &a, &err),
		    ATTN_ERR_DATA);
		ck_assert_str_eq(err.msg, want);
		ck_assert_uint_eq(err.line, where[i].line);
		ck_assert_uint_eq(err.col, where[i].col);
	}
}
END_TEST

/* A dash that leaves no number is text: a label, or not a number. */
START_TEST(dashes_in_labels_are_labels)
{
	static const double want[] = { 1, 2 };
	static const char *const names[] = { "a\xE2\x80\x94" "b", "\xE2\x88\x92" };
	struct attn_error err;
	struct attn_array a;

	read_labelled("a\xE2\x80\x94" "b,1\n\xE2\x88\x92,2\n", ATTN_FMT_CSV, 0,
	    2, 1, want, names);
	ck_assert_int_eq(read_s("1,2\n3,\xE2\x88\x92x\n", ATTN_FMT_CSV, 0, &a,
	    &err), ATTN_ERR_DATA);
	ck_assert_str_eq(err.msg, "not a number: '\xE2\x88\x92x'");
}
END_TEST

#define FORTRAN_MSG(v, d) "'" v "' has Fortran's exponent " d ", where a " \
	"number needs e: replace it, e.g. with sed " \
	"'s/\\([0-9.]\\)[dD]\\([-+0-9]\\)/\\1e\\2/g'"
#define COMMA_MSG(v, fix) "'" v "' has a decimal comma: attn reads '.' as " \
	"the decimal point (and ',' as a separator); write " fix
#define BLANKS_MSG(v) "not a number: '" v "' (decimal commas with blanks " \
	"between the numbers, as in 5,0 1,5? attn reads ',' as the separator " \
	"and '.' as the decimal point)"

/*
 * Numbers spelt as attn does not read them are named for what they are,
 * where they stand: Fortran's exponent D (a first line of them was taken
 * for a header, a first field for a label), and decimal commas, where ','
 * does not separate (TSV, white space) or where it splits "5,0 1,5" into
 * numbers with blanks between them.
 */
static const struct error_case spellings[] = {
	{ ATTN_FMT_TEXT, 0, "1d0 2d0\n3d0 4d0\n", 0, 1, 2,
	    FORTRAN_MSG("1d0", "d") },
	{ ATTN_FMT_CSV, 0, "1.0D+00,2\n3,4\n", 0, 1, 4,
	    FORTRAN_MSG("1.0D+00", "D") },
	{ ATTN_FMT_CSV, 0, "1,2\n3,-2.5d-3\n", 0, 2, 7,
	    FORTRAN_MSG("-2.5d-3", "d") },
	{ ATTN_FMT_CSV, 0, "\"x\",\"y\"\n\"1\",\"2D1\"\n", 0, 2, 7,
	    FORTRAN_MSG("2D1", "D") },
	{ ATTN_FMT_JSON, 0, "[[1, 2d0]]", 0, 1, 7,
	    "invalid JSON: " FORTRAN_MSG("2d0", "d") },
	{ ATTN_FMT_REPR, 0, "[[1. 2d0]]", 0, 1, 7, FORTRAN_MSG("2d0", "d") },
	{ ATTN_FMT_TSV, 0, "5,0\t1,5\n2,0\t3,0\n", 0, 1, 2,
	    COMMA_MSG("5,0", "5.0") },
	{ ATTN_FMT_TSV, 0, "a\tb\n-0,25\t1\n", 0, 2, 3,
	    COMMA_MSG("-0,25", "-0.25") },
	{ ATTN_FMT_TEXT, 0, "1 2\n3 4,5\n", 0, 2, 4, COMMA_MSG("4,5", "4.5") },
	{ ATTN_FMT_CSV, 0, "5,0 1,5\n2,0 3,0\n", 0, 1, 3, BLANKS_MSG("0 1") },
	{ ATTN_FMT_CSV, 0, "5,0\t1,5\n", 0, 1, 3, BLANKS_MSG("0\\x091") },
	/* what names no cause stays "not a number" */
	{ ATTN_FMT_CSV, 0, "1,2\n3,d1\n", 0, 2, 3, "not a number: 'd1'" },
	{ ATTN_FMT_CSV, 0, "1,2\n3,1 x\n", 0, 2, 3, "not a number: '1 x'" },
	{ ATTN_FMT_TSV, 0, "1\t2\n3\t1,5,5\n", 0, 2, 3,
	    "not a number: '1,5,5'" },
};

START_TEST(numbers_spelt_otherwise_are_named)
{
	check_error(&spellings[_i], 0);
}
END_TEST

/* Labels and headers that only look like those spellings stay labels. */
START_TEST(words_with_d_and_commas_are_labels)
{
	static const double want[] = { 1, 2 };
	static const char *const names[] = { "d1", "2d" };
	static const char *const more[] = { "the d", "1,x" };

	read_labelled("d1\t1\n2d\t2\n", ATTN_FMT_TSV, 0, 2, 1, want, names);
	read_labelled("the d\t1\n1,x\t2\n", ATTN_FMT_TSV, 0, 2, 1, want,
	    more);
}
END_TEST

START_TEST(hostile_text_is_reported_clearly)
{
	check_error(&hostile_text[_i], 0);
}
END_TEST

/* What the checks above must not refuse: Latin-1 in a comment (numpy
 * writes its header so), UTF-8 labels, a tiny exponent rounding to 0. */
START_TEST(latin1_comments_and_utf8_labels_are_read)
{
	static const double want[] = { 1, 0 };
	struct attn_array a;

	read_ok("# caf\xE9\r\n\xC3\xA9t\xC3\xA9,1\n\xF0\x9F\x98\x80,1e-999999999\n",
	    ATTN_FMT_CSV, 0, &a, 2, 1);
	assert_values(&a, want, 2);
	ck_assert_str_eq(a.row_labels.names[0], "\xC3\xA9t\xC3\xA9");
	attn_array_free(&a);
}
END_TEST

/* The control-character check is on labels only: TSV tabs separate, a
 * CRLF's CR is no part of the line, and a tab may pad a CSV field. */
START_TEST(separators_and_line_ends_are_not_in_labels)
{
	static const double want[] = { 1, 2, 3, 4 };
	static const struct {
		const char *input;
		enum attn_format fmt;
	} ok[] = {
		{ "\tx\ty\r\nthe\t1\t2\r\ncat\t3\t4\r\n", ATTN_FMT_TSV },
		{ "x,y\r\n\tthe\t,1,2\r\n\"cat\"\t,3,4\r\n", ATTN_FMT_CSV },
		{ "x\ty\nthe\t1\t2\ncat 3\t4\n", ATTN_FMT_TEXT },
	};
	struct attn_array a;
	size_t i;

	for (i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		read_ok(ok[i].input, ok[i].fmt, 0, &a, 2, 2);
		assert_values(&a, want, 4);
		ck_assert_uint_eq(a.row_labels.count, 2);
		ck_assert_str_eq(a.row_labels.names[0], "the");
		ck_assert_str_eq(a.row_labels.names[1], "cat");
		attn_array_free(&a);
	}
}
END_TEST

/* attn_utf8_invalid: well-formed UTF-8 is Unicode's table 3-7, no more. */
static const struct {
	const char *s;
	size_t len, bad;	/* len 0: strlen; bad == len: all good */
} utf8_cases[] = {
	{ "", 0, 0 },
	{ "abc", 0, 3 },
	{ "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80", 0, 9 },
	{ "\xEF\xBB\xBF", 0, 3 },
	{ "\xF4\x8F\xBF\xBF", 0, 4 },		/* U+10FFFF */
	{ "a\x80", 0, 1 },			/* lone continuation */
	{ "\xC0\x80", 0, 0 },			/* overlong NUL */
	{ "\xC1\xBF", 0, 0 },			/* overlong */
	{ "\xE0\x9F\xBF", 0, 0 },		/* overlong */
	{ "\xF0\x8F\xBF\xBF", 0, 0 },		/* overlong */
	{ "ab\xED\xA0\x80", 0, 2 },		/* surrogate */
	{ "\xF4\x90\x80\x80", 0, 0 },		/* past U+10FFFF */
	{ "\xF5\x80\x80\x80", 0, 0 },
	{ "\xFF", 0, 0 },
	{ "x\xE2\x82", 0, 1 },			/* cut by the end */
	{ "\xE2\x28\xA1", 0, 0 },		/* bad second byte */
	{ "\xF0\x9F\x98\x28", 0, 0 },		/* bad last byte */
	{ "\xC3\xA9", 1, 0 },			/* len cuts it */
	/* ASCII is checked eight bytes at a time: bad bytes after it, in
	 * and at the edges of those blocks */
	{ "0123456789abcdef", 0, 16 },
	{ "abcdefgh\xFF", 0, 8 },
	{ "abcdefghijklm\xC3\xA9xyz\xE2\x28\xA1", 0, 18 },
	{ "0123456\xC3\xA9" "0123456789abcdef\xC3", 0, 25 },
	{ "0123456789abcde\x80" "0123456789", 0, 15 },
};

START_TEST(utf8_check_finds_the_first_bad_byte)
{
	const char *s = utf8_cases[_i].s;
	size_t len = utf8_cases[_i].len != 0 ? utf8_cases[_i].len : strlen(s);
	char *buf = exact_copy(s, len);

	ck_assert_uint_eq(attn_utf8_invalid(buf, len), utf8_cases[_i].bad);
	free(buf);
}
END_TEST

/* attn_utf8_char: each character's length and code point, -1 for a
 * byte that starts none. */
START_TEST(utf8_char_decodes_code_points)
{
	static const struct {
		const char *s;
		size_t n;
		long code;
	} c[] = {
		{ "a", 1, 'a' }, { "\x1B", 1, 0x1B }, { "\xC2\x9B", 2, 0x9B },
		{ "\xC3\xA9", 2, 0xE9 }, { "\xE2\x82\xAC", 3, 0x20AC },
		{ "\xF0\x9F\x98\x80", 4, 0x1F600 },
		{ "\xF4\x8F\xBF\xBF", 4, 0x10FFFF }, { "\xC0\x80", 1, -1 },
		{ "\xED\xA0\x80", 1, -1 }, { "\xE2\x82", 1, -1 },
		{ "\xFF", 1, -1 },
	};
	size_t i, n;
	long code;

	for (i = 0; i < sizeof c / sizeof c[0]; i++) {
		n = attn_utf8_char(c[i].s, strlen(c[i].s), &code);
		ck_assert_uint_eq(n, c[i].n);
		ck_assert_int_eq(code, c[i].code);
	}
	ck_assert(attn_char_is_control(0) && attn_char_is_control(0x1F) &&
	    attn_char_is_control(0x7F) && attn_char_is_control(0x9F));
	ck_assert(!attn_char_is_control(' ') && !attn_char_is_control(0xA0) &&
	    !attn_char_is_control(-1) && !attn_char_is_control('~'));
}
END_TEST

/* attn_text_escape: control characters (C0, DEL, C1), Unicode format
 * characters (Cf, U+2028, U+2029) and bytes that are not UTF-8 as \xHH,
 * one per byte; everything else, backslashes too, as it is; cut between
 * characters and escapes, never inside one. */
static const struct {
	const char *s;
	size_t size;		/* of the buffer */
	const char *want;
	size_t used;		/* 0: all of s */
} escapes[] = {
	{ "plain \xC3\xA9\xE2\x82\xAC", 64, "plain \xC3\xA9\xE2\x82\xAC", 0 },
	{ "\x1B[2J", 64, "\\x1B[2J", 0 },
	{ "a\xC2\x9B" "31m", 64, "a\\xC2\\x9B31m", 0 },	/* CSI */
	{ "\x07\x7F\n\t\r", 64, "\\x07\\x7F\\x0A\\x09\\x0D", 0 },
	{ "bad\xFF\xC0\x80", 64, "bad\\xFF\\xC0\\x80", 0 },
	{ "C:\\dir\\x1B", 64, "C:\\dir\\x1B", 0 },	/* twice: no change */
	{ "\xC2\xA0", 64, "\xC2\xA0", 0 },		/* U+00A0 is no C1 */
	{ "ab\x1B", 6, "ab", 2 },			/* \x1B does not fit */
	{ "ab\x1B", 7, "ab\\x1B", 0 },
	{ "a\xE2\x82\xAC", 4, "a", 1 },			/* nor does the euro */
	{ "q\xE2\x80\xAE" "1", 64, "q\\xE2\\x80\\xAE1", 0 },	/* RLO */
	{ "a\xE2\x80\xA8" "b", 64, "a\\xE2\\x80\\xA8b", 0 },	/* U+2028 */
	{ "\xE2\x80\xA9", 64, "\\xE2\\x80\\xA9", 0 },		/* U+2029 */
	{ "\xEF\xBB\xBFk", 64, "\\xEF\\xBB\\xBFk", 0 },		/* BOM */
	{ "k\xE2\x80\x8B" "1", 64, "k\\xE2\\x80\\x8B1", 0 },	/* ZWSP */
	{ "\xF3\xA0\x80\x81", 64, "\\xF3\\xA0\\x80\\x81", 0 },	/* U+E0001 */
	{ "\xE2\x80\x8A\xE2\x80\x90", 64, "\xE2\x80\x8A\xE2\x80\x90", 0 },	/* Zs, Pd */
	{ "a\xE2\x80\xAE", 12, "a", 1 },	/* 12 bytes do not fit */
};

START_TEST(escape_writes_controls_as_hex)
{
	char buf[64];
	size_t used = 99, n, len = strlen(escapes[_i].s);

	n = attn_text_escape(buf, escapes[_i].size, escapes[_i].s, len, &used);
	ck_assert_str_eq(buf, escapes[_i].want);
	ck_assert_uint_eq(n, strlen(escapes[_i].want));
	ck_assert_uint_eq(used, escapes[_i].used != 0 ? escapes[_i].used :
	    len);
}
END_TEST

/* The format characters are Unicode's category Cf as libunistring has it,
 * and the line and paragraph separators: every code point asked. */
START_TEST(format_characters_are_unicodes_cf)
{
	long c;

	for (c = 0; c <= 0x10FFFF; c++) {
		int want = uc_is_general_category((ucs4_t)c, UC_CATEGORY_Cf) ||
		    c == 0x2028 || c == 0x2029;

		if (attn_char_is_format(c) != want)
			ck_abort_msg("U+%04lX: %d, libunistring %d", c,
			    attn_char_is_format(c), want);
	}
	ck_assert(!attn_char_is_format(-1));
}
END_TEST

/* A preview is escaped as attn_text_escape does, within max bytes. */
START_TEST(preview_escapes_and_cuts)
{
	char p[16 + 4];

	attn_text_preview(p, 16, "\x1B[31mred", 8);
	ck_assert_str_eq(p, "\\x1B[31mred");
	attn_text_preview(p, 16, "0123456789\x1B" "abcdef", 17);
	ck_assert_str_eq(p, "0123456789\\x1Bab...");
	attn_text_preview(p, 16, "0123456789abc\x1B", 14);
	ck_assert_str_eq(p, "0123456789abc...");	/* not "\x" */
	attn_text_preview(p, 16, "0123456789abcdefg", 17);
	ck_assert_str_eq(p, "0123456789abcdef...");
}
END_TEST

/* The checks skip ASCII eight bytes at a time: whatever ASCII comes
 * first, of any length, the first byte that is not ASCII is still where
 * they look (each case at the end of its own exact-size copy). */
START_TEST(non_ascii_is_found_after_any_run_of_ascii)
{
	static const char ascii[] = "0.12345678901234567,-0.9876543210123456";
	char buf[64], msg[ATTN_MSG_MAX];
	char *copy;
	size_t k, n;

	for (k = 0; k < sizeof ascii - 1; k++) {
		/* a bad byte, then a good character that follows it */
		memcpy(buf, ascii, k);
		memcpy(buf + k, "\xFF\xC3\xA9", 3);
		copy = exact_copy(buf, k + 3);
		ck_assert_uint_eq(attn_utf8_invalid(copy, k + 3), k);
		ck_assert_uint_eq(attn_utf8_invalid(copy + k + 1, 2), 2);
		free(copy);

		/* digits, then U+2212 where the exponent's '-' belongs */
		n = (size_t)snprintf(buf, sizeof buf, "1.%.*se\xE2\x88\x92"
		    "5", (int)k, "012345678901234567890123456789012345678");
		copy = exact_copy(buf, n);
		ck_assert_uint_eq(attn_dash_fault(copy, n, msg, sizeof msg),
		    k + 3);
		ck_assert_ptr_nonnull(strstr(msg, "U+2212 MINUS SIGN"));
		ck_assert_uint_eq(attn_dash_fault(copy, k + 3, msg,
		    sizeof msg), k + 3);	/* no dash: all of it */
		free(copy);
	}
}
END_TEST

/* Rows of many values, to make the arrays grow many times over. */
START_TEST(large_input_reads_every_value)
{
	const size_t rows = 500, cols = 300;
	size_t i, j, n = 0, cap = rows * cols * 8 + 1;
	char *text = malloc(cap);
	struct attn_array a;

	ck_assert_ptr_nonnull(text);
	for (i = 0; i < rows; i++)
		for (j = 0; j < cols; j++)
			n += (size_t)snprintf(text + n, cap - n, "%zu%c",
			    i * cols + j, j + 1 == cols ? '\n' : ',');
	read_ok(text, ATTN_FMT_CSV, 0, &a, rows, cols);
	for (i = 0; i < rows * cols; i++)
		ck_assert(a.data[i] == (double)i);
	attn_array_free(&a);
	free(text);
}
END_TEST

/* ---------------------------------------------------------------- JSON */

/* "[[[...1...]]]" nested depth deep, in a buffer of its exact length. */
static char *
nested(size_t depth, size_t *len)
{
	char *p;

	*len = 2 * depth + 1;
	p = malloc(*len);
	ck_assert_ptr_nonnull(p);
	memset(p, '[', depth);
	p[depth] = '1';
	memset(p + depth + 1, ']', depth);
	return p;
}

START_TEST(deep_nesting_is_refused_by_depth)
{
	struct attn_array a;
	struct attn_error err;
	size_t len;
	char *buf = nested(100, &len);

	memset(&err, 0, sizeof err);
	ck_assert_int_eq(attn_read_array("d", buf, len, ATTN_FMT_JSON, 0, &a,
	    &err), ATTN_ERR_DATA);
	ck_assert_str_eq(err.msg,
	    "too many dimensions: at most 4 are supported");
	ck_assert_uint_eq(err.col, 5);
	free(buf);

	/* Past cJSON's own limit: an error, not a crash. */
	buf = nested(100000, &len);
	ck_assert_int_eq(attn_read_array("d", buf, len, ATTN_FMT_JSON, 0, &a,
	    &err), ATTN_ERR_DATA);
	ck_assert_str_eq(err.msg, "nested too deeply (more than 1000 levels)");
	ck_assert_uint_eq(err.line, 1);
	ck_assert_uint_eq(err.col, 1001);
	free(buf);
}
END_TEST

/* A first row of n numbers and n rows promise n * n numbers; the file
 * holds 2n, and the reader must say the array is ragged, not run out of
 * memory allocating n * n. */
START_TEST(ragged_json_is_reported_before_its_shape_is_allocated)
{
	const size_t n = 100000;
	size_t i, len = 0, cap = 6 * n + 16;
	char *text = malloc(cap);
	struct attn_array a;
	struct attn_error err;

	ck_assert_ptr_nonnull(text);
	text[len++] = '[';
	text[len++] = '[';
	for (i = 0; i < n; i++) {
		text[len++] = '1';
		text[len++] = i + 1 < n ? ',' : ']';
	}
	for (i = 1; i < n; i++) {
		memcpy(text + len, ",[1]", 4);
		len += 4;
	}
	text[len++] = ']';
	ck_assert_int_eq(read_n("r", text, len, ATTN_FMT_JSON, 0, &a, &err),
	    ATTN_ERR_DATA);
	ck_assert_str_eq(err.msg,
	    "ragged array: row 2 has 1 value but row 1 has 100000");
	ck_assert_uint_eq(err.col, 2 * n + 6);
	free(text);
}
END_TEST

START_TEST(json_matrix_reads_rows_and_columns)
{
	static const double want[] = { 1, 2, 3, 4, 5, 6 };
	struct attn_array a;

	read_ok(" [[1, 2, 3],\n  [4, 5e0, 6.0]]\n", ATTN_FMT_JSON, 0, &a, 2,
	    3);
	assert_values(&a, want, 6);
	attn_array_free(&a);
}
END_TEST

START_TEST(json_vector_is_one_row)
{
	struct attn_array a;
	struct attn_error err;
	struct attn_matrix m;

	ck_assert_int_eq(read_s("[1, 2, 3]", ATTN_FMT_JSON, 0, &a, &err),
	    ATTN_OK);
	ck_assert_uint_eq(a.ndim, 1);
	ck_assert_uint_eq(a.shape[0], 3);
	m = attn_array_matrix(&a);
	ck_assert_uint_eq(m.rows, 1);
	ck_assert_uint_eq(m.cols, 3);
	ck_assert(*attn_at(&m, 0, 2) == 3);
	attn_array_free(&a);
}
END_TEST

START_TEST(json_3d_and_4d_are_stored_in_c_order)
{
	struct attn_array a;
	struct attn_error err;
	struct attn_matrix m;
	size_t i;

	ck_assert_int_eq(read_s("[[[0,1,2],[3,4,5]],[[6,7,8],[9,10,11]]]",
	    ATTN_FMT_JSON, 0, &a, &err), ATTN_OK);
	ck_assert_uint_eq(a.ndim, 3);
	ck_assert_uint_eq(a.shape[0], 2);
	ck_assert_uint_eq(a.shape[1], 2);
	ck_assert_uint_eq(a.shape[2], 3);
	for (i = 0; i < 12; i++)
		ck_assert(a.data[i] == (double)i);
	/* Seen as a matrix, the stack is blocks of rows. */
	m = attn_array_matrix(&a);
	ck_assert_uint_eq(m.rows, 4);
	ck_assert_uint_eq(m.cols, 3);
	attn_array_free(&a);

	ck_assert_int_eq(read_s("[[[[0],[1]]],[[[2],[3]]],[[[4],[5]]]]",
	    ATTN_FMT_JSON, 0, &a, &err), ATTN_OK);
	ck_assert_uint_eq(a.ndim, 4);
	ck_assert_uint_eq(a.shape[0], 3);
	ck_assert_uint_eq(a.shape[1], 1);
	ck_assert_uint_eq(a.shape[2], 2);
	ck_assert_uint_eq(a.shape[3], 1);
	for (i = 0; i < 6; i++)
		ck_assert(a.data[i] == (double)i);
	attn_array_free(&a);
}
END_TEST

START_TEST(ragged_json_row_reports_line_and_column)
{
	static const struct error_case c = {
		ATTN_FMT_JSON, 0, "[[1, 2, 3],\n [4, 5, 6],\n [7, 8, 9, 10]]",
		0, 3, 12, "ragged array: row 3 has 4 values but row 1 has 3"
	};

	check_error(&c, 0);
}
END_TEST

/* Text after the top value: named for what it looks like where it looks
 * like something (rows without the outer brackets, CSV or TSV), else
 * trailing garbage. */
#define ROWS_MSG "several arrays one after another, as rows without the " \
	"outer brackets: a matrix is one array of rows, so put '[' before " \
	"the first and ']' after the last, as in [[1, 0], [0, 1]]"
#define CSV_MSG "numbers separated by commas or spaces, as in CSV or " \
	"TSV: a file named .csv or .tsv is read as such; in JSON a matrix " \
	"is one array of rows, as in [[1, 0], [0, 1]]"
static const struct error_case trailing[] = {
	{ ATTN_FMT_JSON, 0, "[1, 2] x", 0, 1, 8,
	    "trailing garbage after the JSON value" },
	{ ATTN_FMT_JSON, 0, "[[1, 2]]\n\n]\n", 0, 3, 1,
	    "trailing garbage after the JSON value" },
	{ ATTN_FMT_JSON, 0, "[1][2]", 0, 1, 4, ROWS_MSG },
	{ ATTN_FMT_JSON, 0, "[1, 0],\n[0, 1]\n", 0, 1, 7, ROWS_MSG },
	{ ATTN_FMT_JSON, 0, "[1, 0], [0, 1]", 0, 1, 7, ROWS_MSG },
	{ ATTN_FMT_JSON, 0, "[[1, 0]],\n[[0, 1]]", 0, 1, 9, ROWS_MSG },
	{ ATTN_FMT_JSON, 0, "[1, 0],\n", 0, 1, 7,	/* a comma alone */
	    "trailing garbage after the JSON value" },
	{ ATTN_FMT_JSON, 0, "1,0\n0,1\n", 0, 1, 2, CSV_MSG },
	{ ATTN_FMT_JSON, 0, "-1.5\t0\n0\t1\n", 0, 1, 6, CSV_MSG },
	{ ATTN_FMT_JSON, 0, "1 2 3", 0, 1, 3, CSV_MSG },
	{ ATTN_FMT_JSON, 0, "1\n2\n", 0, 2, 1,	/* one column */
	    "trailing garbage after the JSON value" },
	{ ATTN_FMT_JSON, 0, "\"a\",1", 0, 1, 4,
	    "trailing garbage after the JSON value" },
	{ ATTN_FMT_JSON, 0, "1 x", 0, 1, 3,
	    "trailing garbage after the JSON value" },
};

START_TEST(trailing_garbage_is_reported)
{
	check_error(&trailing[_i], 0);
}
END_TEST

static const struct error_case truncated[] = {
	{ ATTN_FMT_JSON, 0, "[1, 2", 0, 1, 6,
	    "unexpected end of input (truncated JSON?)" },
	{ ATTN_FMT_JSON, 0, "[[1, 2],\n [3, ", 0, 2, 6,
	    "unexpected end of input (truncated JSON?)" },
	{ ATTN_FMT_JSON, 0, "[\"in", 0, 1, 5,
	    "unexpected end of input (truncated JSON?)" },
	{ ATTN_FMT_JSON, 0, "{\"Q\": [[1]],\n", 0, 2, 1,
	    "unexpected end of input (truncated JSON?)" },
};

START_TEST(truncated_json_reports_end)
{
	check_error(&truncated[_i], 0);
}
END_TEST

static const struct error_case json_errors[] = {
	{ ATTN_FMT_JSON, 0, "[[1, 2],\n [3]]", 0, 2, 4,
	    "ragged array: row 2 has 1 value but row 1 has 2" },
	{ ATTN_FMT_JSON, 0, "[[1],[]]", 0, 1, 7,
	    "ragged array: row 2 has 0 values but row 1 has 1" },
	{ ATTN_FMT_JSON, 0, "[[[1,2],[3,4]],[[5,6],[7]]]", 0, 1, 25,
	    "ragged array: row 2 of matrix 2 has 1 value but row 1 of "
	    "matrix 1 has 2" },
	{ ATTN_FMT_JSON, 0, "[[[1,2],[3,4]],[[5,6]]]", 0, 1, 22,
	    "ragged array: matrix 2 has 1 row but matrix 1 has 2" },
	{ ATTN_FMT_JSON, 0, "[[[[1]]],[[[2]],[[3]]]]", 0, 1, 17,
	    "ragged array: stack 2 has 2 matrices but stack 1 has 1" },
	{ ATTN_FMT_JSON, 0, "[]", 0, 1, 1, "empty matrix" },
	{ ATTN_FMT_JSON, 0, " [[]]", 0, 1, 3, "empty matrix" },
	{ ATTN_FMT_JSON, 0, "[[[[[1]]]]]", 0, 1, 5,
	    "too many dimensions: at most 4 are supported" },
	{ ATTN_FMT_JSON, 0, "[1, \"abc\"]", 0, 1, 5,
	    "expected a number, found a string" },
	{ ATTN_FMT_JSON, 0, "[\"1.5\"]", 0, 1, 2,
	    "expected a number, found a string" },
	{ ATTN_FMT_JSON, 0, "[1,\n null]", 0, 2, 2,
	    "expected a number, found null" },
	{ ATTN_FMT_JSON, 0, "[true]", 0, 1, 2,
	    "expected a number, found true" },
	{ ATTN_FMT_JSON, 0, "[1, [2]]", 0, 1, 5,
	    "expected a number, found an array" },
	{ ATTN_FMT_JSON, 0, "[1, {\"a\": 1}]", 0, 1, 5,
	    "expected a number, found an object" },
	{ ATTN_FMT_JSON, 0, "[[1], 2]", 0, 1, 7,
	    "expected an array, found a number" },
	{ ATTN_FMT_JSON, 0, "5", 0, 1, 1, "expected an array, found a number" },
	{ ATTN_FMT_JSON, 0, "\n\"x\"", 0, 2, 1,
	    "expected an array, found a string" },
	{ ATTN_FMT_JSON, 0, "{\"Q\": [[1]]}", 0, 1, 1,
	    "a JSON object (a BUNDLE) where a matrix was expected: a BUNDLE "
	    "must be the only operand" },
	{ ATTN_FMT_JSON, 0, "[1,]", 0, 1, 3,
	    "invalid JSON: trailing comma before ']'" },
	{ ATTN_FMT_JSON, 0, "[1 2]", 0, 1, 4,
	    "invalid JSON: expected ',' or ']', found '2'" },
	{ ATTN_FMT_JSON, 0, "\xEF\xBB\xBF[1,\n x]", 0, 2, 2,
	    "invalid JSON: unknown word 'x' (JSON has true, false and null)" },
	{ ATTN_FMT_JSON, 0, "[\"a\\x\"]", 0, 1, 4,
	    "invalid escape in JSON string" },
	/* cJSON stops one byte past a bad key; attn points at the key */
	{ ATTN_FMT_JSON, 0, "{Q: [[1]]}", 0, 1, 2,
	    "invalid JSON: object keys are strings in double quotes, not 'Q'" },
	{ ATTN_FMT_JSON, 0, "{\"Q\": [[1]],\n K: [[1]]}", 0, 2, 2,
	    "invalid JSON: object keys are strings in double quotes, not 'K'" },
	/* cJSON stops where strtod did; attn points at the whole number */
	{ ATTN_FMT_JSON, 0, "[[1, 2x]]", 0, 1, 6,
	    "invalid JSON: malformed number '2x'" },
	{ ATTN_FMT_JSON, 0, "{\"Q\": 2x}", 0, 1, 7,
	    "invalid JSON: malformed number '2x'" },
	{ ATTN_FMT_JSON, 0, "", 0, 1, 1, "empty input: no JSON value" },
	{ ATTN_FMT_JSON, 0, " \n ", 0, 2, 2, "empty input: no JSON value" },
	{ ATTN_FMT_JSON, 0, "[1,\0 2]", 7, 1, 4, "NUL byte in JSON input" },
	{ ATTN_FMT_JSON, 0, "[[\"]\\\"[\", 1]]", 0, 1, 3,
	    "expected a number, found a string" },
	{ ATTN_FMT_JSON, 0, "[[1, 2], [\"inf\", 1, 2]]", 0, 1, 21,
	    "ragged array: row 2 has 3 values but row 1 has 2" },
};

START_TEST(json_errors_report_message_line_and_column)
{
	check_error(&json_errors[_i], 0);
}
END_TEST

/*
 * JSON that cJSON refuses, told by what is wrong rather than as "invalid
 * JSON" (these were all that message, some at the wrong byte): NaN and
 * Infinity as Python writes them, numbers strtod reads only part of,
 * Python's single quotes and None, trailing commas (in an object cJSON
 * stops after the '}', which said "truncated"), missing commas and
 * colons.  Then what cJSON accepts but JSON does not: invalid UTF-8, raw
 * control characters and bad escapes in strings, and \u0000.
 */
static const struct error_case hostile_json[] = {
	{ ATTN_FMT_JSON, 0, "[[1, NaN]]", 0, 1, 6, "invalid JSON: 'NaN' is "
	    "not a JSON value (JSON has no NaN or Infinity; attn writes them "
	    "as the strings \"nan\", \"inf\" and \"-inf\")" },
	{ ATTN_FMT_JSON, 0, "[-Infinity]", 0, 1, 2, "invalid JSON: "
	    "'-Infinity' is not a JSON value (JSON has no NaN or Infinity; "
	    "attn writes them as the strings \"nan\", \"inf\" and \"-inf\")" },
	{ ATTN_FMT_JSON, 0, "inf", 0, 1, 1, "invalid JSON: 'inf' is not a "
	    "JSON value (JSON has no NaN or Infinity; attn writes them as "
	    "the strings \"nan\", \"inf\" and \"-inf\")" },
	{ ATTN_FMT_JSON, 0, "[[1e]]", 0, 1, 3,
	    "invalid JSON: malformed number '1e'" },
	{ ATTN_FMT_JSON, 0, "[.5.]", 0, 1, 2,
	    "invalid JSON: malformed number '.5.': JSON needs a digit before "
	    "the decimal point (0.5)" },
	{ ATTN_FMT_JSON, 0, "[1, 0x10]", 0, 1, 5,
	    "invalid JSON: malformed number '0x10'" },
	{ ATTN_FMT_JSON, 0, "[-]", 0, 1, 2,
	    "invalid JSON: malformed number '-'" },
	{ ATTN_FMT_JSON, 0, "[+1]", 0, 1, 2,
	    "invalid JSON: malformed number '+1': JSON numbers take no '+' "
	    "sign" },
	{ ATTN_FMT_JSON, 0, "[1.2.3]", 0, 1, 2,
	    "invalid JSON: malformed number '1.2.3'" },
	{ ATTN_FMT_JSON, 0, "[['a']]", 0, 1, 3,
	    "invalid JSON: strings take double quotes, not ''a''" },
	{ ATTN_FMT_JSON, 0, "[[1, None]]", 0, 1, 6, "invalid JSON: unknown "
	    "word 'None' (JSON has true, false and null)" },
	{ ATTN_FMT_JSON, 0, "[[1],\n [2],\n]", 0, 2, 5,
	    "invalid JSON: trailing comma before ']'" },
	{ ATTN_FMT_JSON, 0, "{\"Q\": [[1]], }", 0, 1, 12,
	    "invalid JSON: trailing comma before '}'" },
	{ ATTN_FMT_JSON, 0, "{\"Q\": {\"a\": 1,}, \"K\": 2}", 0, 1, 14,
	    "invalid JSON: trailing comma before '}'" },
	{ ATTN_FMT_JSON, 0, "[[1] [2]]", 0, 1, 6,
	    "invalid JSON: expected ',' or ']', found '['" },
	{ ATTN_FMT_JSON, 0, "[1:2]", 0, 1, 3,
	    "invalid JSON: expected ',' or ']', found ':'" },
	{ ATTN_FMT_JSON, 0, "[,1]", 0, 1, 2,
	    "invalid JSON: expected a value or ']', found ','" },
	{ ATTN_FMT_JSON, 0, "[1,,2]", 0, 1, 4,
	    "invalid JSON: expected a value, found ','" },
	{ ATTN_FMT_JSON, 0, "[{}1]", 0, 1, 4,
	    "invalid JSON: expected ',' or ']', found '1'" },
	{ ATTN_FMT_JSON, 0, "{\"Q\" [[1]]}", 0, 1, 6,
	    "invalid JSON: expected ':' after the key, found '['" },
	{ ATTN_FMT_JSON, 0, "{\"Q\": [[1]] \"K\": 1}", 0, 1, 13,
	    "invalid JSON: expected ',' or '}', found '\"K\"'" },
	{ ATTN_FMT_JSON, 0, "{\"Q\": }", 0, 1, 7,
	    "invalid JSON: expected a value, found '}'" },
	{ ATTN_FMT_JSON, 0, "{\"Q\": [1]]", 0, 1, 10,
	    "invalid JSON: expected ',' or '}', found ']'" },
	/* encodings */
	{ ATTN_FMT_JSON, 0, "\xFE\xFF\0[\0]", 6, 1, 1, "UTF-16 text (it "
	    "starts with a UTF-16 byte order mark): JSON must be UTF-8; "
	    "convert it first, e.g. with iconv -f UTF-16 -t UTF-8" },
	{ ATTN_FMT_JSON, 0, "{\"labels\": {\"query\": [\"caf\xE9\"]}}", 0,
	    1, 27, "invalid UTF-8: byte 0xE9 (JSON must be UTF-8)" },
	{ ATTN_FMT_JSON, 0, "[[1\xFF]]", 0, 1, 4,
	    "invalid UTF-8: byte 0xFF (JSON must be UTF-8)" },
	/* strings */
	{ ATTN_FMT_JSON, 0, "[\"a\tb\"]", 0, 1, 4, "invalid JSON: control "
	    "character 0x09 in a string (JSON needs it escaped)" },
	{ ATTN_FMT_JSON, 0, "[\"ab\\u0000\"]", 0, 1, 5,
	    "\\u0000 (a NUL character) in a JSON string" },
	{ ATTN_FMT_JSON, 0, "[\"\\u00zz\"]", 0, 1, 3,
	    "invalid escape in JSON string" },
	{ ATTN_FMT_JSON, 0, "[\"\\ud800\"]", 0, 1, 3,
	    "invalid escape in JSON string" },
	{ ATTN_FMT_JSON, 0, "[\"\\ud800\\u0041\"]", 0, 1, 3,
	    "invalid escape in JSON string" },
	{ ATTN_FMT_JSON, 0, "[\"x\\udc00\"]", 0, 1, 4,
	    "invalid escape in JSON string" },
	/* a string where none may stand is told as that, however it ends */
	{ ATTN_FMT_JSON, 0, "[[1, 2]\"]", 0, 1, 8,
	    "invalid JSON: expected ',' or ']', found '\"]'" },
	/* the first fault in the text, also in a string before a syntax
	 * error */
	{ ATTN_FMT_JSON, 0, "[\"a\tb\" 1]", 0, 1, 4, "invalid JSON: control "
	    "character 0x09 in a string (JSON needs it escaped)" },
	/* a surrogate pair is fine: the string is refused for being one */
	{ ATTN_FMT_JSON, 0, "[\"\\ud83d\\ude00\", \"\\\\u0000\"]", 0, 1, 2,
	    "expected a number, found a string" },
};

START_TEST(hostile_json_is_reported_clearly)
{
	check_error(&hostile_json[_i], 0);
}
END_TEST

#define LEADING_ZERO ": JSON numbers have no leading zeros"
#define DIGIT_AFTER ": JSON needs a digit after the decimal point (1.0)"
#define CONTROL(c) "invalid JSON: control character " c " outside a " \
	"string (JSON's white space is space, tab, LF and CR)"

/*
 * What cJSON accepts but RFC 8259 does not, refused where it stands:
 * numbers strtod reads (01, -01, 1., 1.e5) and control characters taken
 * for white space.  The first fault in the text is the one told, also
 * when cJSON fails further on.
 */
static const struct error_case strict_json[] = {
	{ ATTN_FMT_JSON, 0, "[[01, 1]]", 0, 1, 3,
	    "invalid JSON: malformed number '01'" LEADING_ZERO },
	{ ATTN_FMT_JSON, 0, "[[1, 0],\n [-01, 1]]", 0, 2, 3,
	    "invalid JSON: malformed number '-01'" LEADING_ZERO },
	{ ATTN_FMT_JSON, 0, "[00]", 0, 1, 2,
	    "invalid JSON: malformed number '00'" LEADING_ZERO },
	{ ATTN_FMT_JSON, 0, "[1.]", 0, 1, 2,
	    "invalid JSON: malformed number '1.'" DIGIT_AFTER },
	{ ATTN_FMT_JSON, 0, "[2, 1.e5]", 0, 1, 5,
	    "invalid JSON: malformed number '1.e5'" DIGIT_AFTER },
	{ ATTN_FMT_JSON, 0, "[-.5]", 0, 1, 2, "invalid JSON: malformed "
	    "number '-.5': JSON needs a digit before the decimal point (0.5)" },
	{ ATTN_FMT_JSON, 0, "[1e+]", 0, 1, 2,
	    "invalid JSON: malformed number '1e+'" },
	{ ATTN_FMT_JSON, 0, "[1,\x01 2]", 0, 1, 4, CONTROL("0x01") },
	{ ATTN_FMT_JSON, 0, "[[1]\x0B]", 0, 1, 5, CONTROL("0x0B") },
	{ ATTN_FMT_JSON, 0, "\x0C[1]", 0, 1, 1, CONTROL("0x0C") },
	{ ATTN_FMT_JSON, 0, "[1]\n\x1B", 0, 2, 1, CONTROL("0x1B") },
	{ ATTN_FMT_JSON, 0, "[\x7F" "1]", 0, 1, 2,
	    "invalid JSON: unknown word '\\x7F1' (JSON has true, false and "
	    "null)" },
	/* in document order: before and after where cJSON stops */
	{ ATTN_FMT_JSON, 0, "[01, 1 2]", 0, 1, 2,
	    "invalid JSON: malformed number '01'" LEADING_ZERO },
	{ ATTN_FMT_JSON, 0, "[1 2, 01]", 0, 1, 4,
	    "invalid JSON: expected ',' or ']', found '2'" },
	{ ATTN_FMT_JSON, 0, "[\"01\", 01]", 0, 1, 8,
	    "invalid JSON: malformed number '01'" LEADING_ZERO },
};

START_TEST(json_is_strict_rfc_8259)
{
	check_error(&strict_json[_i], 0);
}
END_TEST

static const struct error_case strict_bundle[] = {
	{ ATTN_FMT_JSON, 0, "{\"Q\": [[1]],\x0B\"K\": [[1]], \"V\": [[1]]}",
	    0, 1, 13, CONTROL("0x0B") },
	{ ATTN_FMT_JSON, 0, "{\"Q\": [[1]], \"K\": [[1]], \"V\": [[1.]]}",
	    0, 1, 33, "invalid JSON: malformed number '1.'" DIGIT_AFTER },
};

START_TEST(bundle_json_is_strict_rfc_8259)
{
	check_error(&strict_bundle[_i], 1);
}
END_TEST

/* What the strict check must still take: every form of JSON's grammar,
 * and white space of all four kinds. */
START_TEST(json_numbers_of_every_form_are_read)
{
	static const double want[] = { 0, -0.0, 5e-8, 100, 1e5, 12.5, -3 };
	struct attn_array a;
	struct attn_error err;

	ck_assert_int_eq(read_s("\t[0, -0,\r\n 0.5e-07, 1E+2, 1e05, 12.5e0, "
	    "-3]", ATTN_FMT_JSON, 0, &a, &err), ATTN_OK);
	ck_assert_uint_eq(a.ndim, 1);
	assert_values(&a, want, 7);
	ck_assert(signbit(a.data[1]));
	attn_array_free(&a);
}
END_TEST

/* Unclosed brackets and objects nest too deeply before they end. */
START_TEST(deep_unclosed_nesting_is_refused_by_depth)
{
	struct attn_array a;
	struct attn_bundle b;
	struct attn_error err;
	size_t i, len = 5 * 3000 + 1;
	char *buf = malloc(len);

	ck_assert_ptr_nonnull(buf);
	memset(buf, '[', 3000);
	ck_assert_int_eq(read_n("d", buf, 3000, ATTN_FMT_JSON, 0, &a, &err),
	    ATTN_ERR_DATA);
	ck_assert_str_eq(err.msg, "nested too deeply (more than 1000 levels)");
	ck_assert_uint_eq(err.col, 1001);
	for (i = 0; i < 3000; i++)
		memcpy(buf + 5 * i, "{\"a\":", 5);
	buf[len - 1] = '1';
	memset(&err, 0, sizeof err);
	ck_assert_int_eq(attn_read_bundle("d", buf, len, 0, &b, &err),
	    ATTN_ERR_DATA);
	ck_assert_str_eq(err.msg, "nested too deeply (more than 1000 levels)");
	ck_assert_uint_eq(err.col, 5001);
	free(buf);
}
END_TEST

/* Thousands of digits: read by attn, correctly rounded, whatever cJSON
 * makes of them (Debian's 1.7.15 takes them; upstream's copies at most
 * 63 characters, and attn then says "number too long"). */
START_TEST(numbers_with_thousands_of_digits)
{
	size_t n = 5000;
	char *text = malloc(n + 8);
	struct attn_array a;
	struct attn_error err;

	ck_assert_ptr_nonnull(text);
	memcpy(text, "[[0.", 4);
	memset(text + 4, '3', n);
	memcpy(text + 4 + n, "]]", 3);
	if (read_s(text, ATTN_FMT_JSON, 0, &a, &err) == ATTN_OK) {
		ck_assert(a.data[0] == 1.0 / 3);
		attn_array_free(&a);
	} else {
		ck_assert_str_eq(err.msg, "number too long: 5002 characters "
		    "(cJSON reads at most 63)");
		ck_assert_uint_eq(err.col, 3);
	}
	text[4 + n] = '\0';	/* "0.333...": CSV */
	ck_assert_int_eq(read_s(text + 2, ATTN_FMT_CSV, 0, &a, &err), ATTN_OK);
	ck_assert(a.data[0] == 1.0 / 3);
	attn_array_free(&a);
	/* 5000 digits before the point: out of range, said so */
	memset(text + 2, '7', n);
	text[2 + n] = '\0';
	ck_assert_int_eq(read_s(text + 2, ATTN_FMT_CSV, 0, &a, &err),
	    ATTN_ERR_DATA);
	ck_assert_str_eq(err.msg, "number out of range: "
	    "'77777777777777777777777777777777...'");
	free(text);
}
END_TEST

/* ---------------------------------------------------------------- bundles */

START_TEST(bundle_reads_q_k_v_and_labels)
{
	struct attn_bundle b;
	struct attn_error err;

	ck_assert_int_eq(bundle_s("{\"labels\": {\"query\": [\"I\", \"am\"], "
	    "\"key\": [\"a\", \"b\", \"c\"]},\n"
	    " \"Q\": [[1, 0], [0, 1]],\n"
	    " \"K\": [[1, 1], [0, 1], [2, 2]],\n"
	    " \"V\": [1, 2, 3]}", ATTN_READ_FINITE, &b, &err), ATTN_OK);
	ck_assert_uint_eq(b.q.shape[0], 2);
	ck_assert_uint_eq(b.q.shape[1], 2);
	ck_assert_uint_eq(b.k.shape[0], 3);
	ck_assert(b.k.data[4] == 2);
	ck_assert_uint_eq(b.v.ndim, 1);
	ck_assert(b.v.data[2] == 3);
	ck_assert_uint_eq(b.query_labels.count, 2);
	ck_assert_str_eq(b.query_labels.names[1], "am");
	ck_assert_uint_eq(b.key_labels.count, 3);
	ck_assert_str_eq(b.key_labels.names[2], "c");
	attn_bundle_free(&b);
	/* Freeing twice is freeing a zeroed bundle. */
	attn_bundle_free(&b);
}
END_TEST

/* A stack of matrices shares one list of labels: T names, not B * T. */
START_TEST(bundle_labels_name_the_rows_of_each_matrix)
{
	struct attn_bundle b;
	struct attn_error err;

	ck_assert_int_eq(bundle_s("{\"Q\": [[[1, 0], [0, 1], [1, 1]],\n"
	    "       [[2, 0], [0, 2], [2, 2]]],\n"
	    " \"K\": [[[1, 0], [0, 1]], [[1, 1], [0, 1]]],\n"
	    " \"V\": [[[1], [2]], [[3], [4]]],\n"
	    " \"labels\": {\"query\": [\"I\", \"am\", \"here\"], "
	    "\"key\": [\"a\", \"b\"]}}", ATTN_READ_FINITE, &b, &err),
	    ATTN_OK);
	ck_assert_uint_eq(b.q.ndim, 3);
	ck_assert_uint_eq(b.query_labels.count, 3);
	ck_assert_str_eq(b.query_labels.names[2], "here");
	ck_assert_uint_eq(b.key_labels.count, 2);
	attn_bundle_free(&b);
	/* A 4-D stack (B x H x T x d) likewise. */
	ck_assert_int_eq(bundle_s("{\"Q\": [[[[1], [2]]], [[[3], [4]]]], "
	    "\"K\": [[1]], \"V\": [[1]], \"labels\": {\"query\": "
	    "[\"x\", \"y\"]}}", 0, &b, &err), ATTN_OK);
	ck_assert_uint_eq(b.q.ndim, 4);
	ck_assert_uint_eq(b.query_labels.count, 2);
	attn_bundle_free(&b);
}
END_TEST

START_TEST(bundle_without_labels_has_none)
{
	struct attn_bundle b;
	struct attn_error err;

	ck_assert_int_eq(bundle_s("{\"Q\":[[1]],\"K\":[[2]],\"V\":[[3]],"
	    "\"labels\":{}}", 0, &b, &err), ATTN_OK);
	ck_assert_uint_eq(b.query_labels.count, 0);
	ck_assert_uint_eq(b.key_labels.count, 0);
	ck_assert(b.v.data[0] == 3);
	/* Nor a mask or a bias. */
	ck_assert_uint_eq(b.mask.ndim, 0);
	ck_assert_ptr_null(b.mask.data);
	ck_assert_uint_eq(b.bias.ndim, 0);
	ck_assert_ptr_null(b.bias.data);
	attn_bundle_free(&b);
}
END_TEST

START_TEST(bundle_reads_mask_and_bias)
{
	static const double mask[] = { 1, 0, 1, 0 };
	struct attn_bundle b;
	struct attn_error err;

	ck_assert_int_eq(bundle_s("{\"Q\": [[1, 0], [0, 1]],\n"
	    " \"mask\": [[true, false], [1e0, -0.0]],\n"
	    " \"K\": [[1, 0], [0, 1]], \"V\": [[1], [2]],\n"
	    " \"bias\": [[0, \"-inf\"], [-1.5, \"-Infinity\"]]}", ATTN_READ_FINITE,
	    &b, &err), ATTN_OK);
	ck_assert_uint_eq(b.mask.ndim, 2);
	ck_assert_uint_eq(b.mask.shape[0], 2);
	ck_assert_uint_eq(b.mask.shape[1], 2);
	assert_values(&b.mask, mask, 4);
	ck_assert_uint_eq(b.bias.ndim, 2);
	ck_assert_uint_eq(b.bias.shape[0], 2);
	ck_assert_uint_eq(b.bias.shape[1], 2);
	ck_assert(b.bias.data[0] == 0);
	ck_assert(isinf(b.bias.data[1]) && b.bias.data[1] < 0);
	ck_assert(b.bias.data[2] == -1.5);
	ck_assert(isinf(b.bias.data[3]) && b.bias.data[3] < 0);
	ck_assert(b.v.data[1] == 2);
	attn_bundle_free(&b);
	ck_assert_ptr_null(b.mask.data);
	ck_assert_ptr_null(b.bias.data);
}
END_TEST

/* A stack of masks or biases, one per batch, as Q, K and V may be. */
START_TEST(bundle_mask_and_bias_may_be_stacks)
{
	struct attn_bundle b;
	struct attn_error err;

	ck_assert_int_eq(bundle_s("{\"Q\": [[[1]], [[2]]], \"K\": [[[1]], "
	    "[[2]]], \"V\": [[[1]], [[2]]], \"mask\": [[[true]], [[false]]], "
	    "\"bias\": [[[\"-inf\"]], [[3]]]}", ATTN_READ_FINITE, &b, &err),
	    ATTN_OK);
	ck_assert_uint_eq(b.q.ndim, 3);
	ck_assert_uint_eq(b.mask.ndim, 3);
	ck_assert_uint_eq(b.mask.shape[0], 2);
	ck_assert(b.mask.data[0] == 1 && b.mask.data[1] == 0);
	ck_assert_uint_eq(b.bias.ndim, 3);
	ck_assert(isinf(b.bias.data[0]) && b.bias.data[1] == 3);
	attn_bundle_free(&b);
}
END_TEST

/* The bias is read with ATTN_READ_BIAS, not ATTN_READ_FINITE, whatever
 * the caller asks for Q, K and V: its "-inf" reads, the same "-inf" in Q
 * is refused, and so is "inf" in the bias. */
START_TEST(bundle_bias_may_hold_inf_but_q_may_not)
{
	static const struct error_case in_q = {
		ATTN_FMT_JSON, ATTN_READ_FINITE,
		"{\"K\": [[1]], \"V\": [[1]],\n \"Q\": [[\"-inf\"]]}",
		0, 2, 9,
		"non-finite number '-inf' (Q, K, V and dO must be finite)"
	};
	static const struct error_case in_bias = {
		ATTN_FMT_JSON, ATTN_READ_FINITE,
		"{\"K\": [[1]], \"V\": [[1]], \"Q\": [[1]],\n \"bias\": [[0, \"inf\"]]}",
		0, 2, 15, BIAS_MSG("inf")
	};
	struct attn_bundle b;
	struct attn_error err;

	ck_assert_int_eq(bundle_s("{\"K\": [[1]], \"V\": [[1]],\n"
	    " \"bias\": [[\"-inf\"]], \"Q\": [[1]]}", ATTN_READ_FINITE, &b,
	    &err), ATTN_OK);
	ck_assert(isinf(b.bias.data[0]) && b.bias.data[0] < 0);
	ck_assert_uint_eq(b.mask.ndim, 0);
	attn_bundle_free(&b);
	check_error(&in_q, 1);
	check_error(&in_bias, 1);
}
END_TEST

START_TEST(bundle_with_unknown_key_is_rejected)
{
	static const struct error_case c = {
		ATTN_FMT_JSON, 0,
		"{\"Q\": [[1]],\n \"K\": [[1]],\n \"V\": [[1]],\n"
		" \"q\": [[1]]}",
		0, 4, 2, "unknown bundle key \"q\": keys are case-sensitive; "
		"did you mean \"Q\"?"
	};

	check_error(&c, 1);
}
END_TEST

/* A word attn_suggest is asked about, and the name it must answer (NULL:
 * none). */
struct suggestion {
	const char *word, *want;
};

/* attn_suggest gives each of cases[0..nc) its answer among
 * names[0..n). */
static void
suggestions_are(const char *const *names, size_t n,
    const struct suggestion *cases, size_t nc)
{
	size_t i;

	for (i = 0; i < nc; i++) {
		const char *got = attn_suggest(cases[i].word, names, n);

		if (cases[i].want == NULL)
			ck_assert_msg(got == NULL, "%s: got %s", cases[i].word,
			    got);
		else
			ck_assert_msg(got != NULL &&
			    strcmp(got, cases[i].want) == 0, "%s: got %s",
			    cases[i].word, got != NULL ? got : "none");
	}
}

/* Which name an unknown key is taken to mean: the same but for case
 * first, then the nearest within 1 edit for 3 to 5 letters and 2 for
 * more; one letter is never near another. */
START_TEST(key_suggestions_are_near_misses_only)
{
	static const char *const keys[] = { "Q", "K", "V", "mask", "bias",
		"labels", "proj", "X", "XQ", "XKV" };
	static const struct suggestion cases[] = {
		{ "q", "Q" }, { "v", "V" }, { "xq", "XQ" }, { "MASK", "mask" },
		{ "bais", "bias" }, { "lables", "labels" }, { "label", "labels" },
		{ "lbls", "labels" }, { "prj", "proj" }, { "XKVV", "XKV" },
		{ "W", NULL }, { "Z", NULL }, { "masks_", NULL },
		{ "bs", NULL }, { "labelssss", NULL }, { "", NULL },
		{ "an_extremely_long_key_of_more_than_32_bytes", NULL },
	};

	suggestions_are(keys, sizeof keys / sizeof keys[0], cases,
	    sizeof cases / sizeof cases[0]);
}
END_TEST

/* The rules beside the distance: case first, a tie is no suggestion,
 * and a beginning of 3 letters or more that is one name's alone is. */
START_TEST(ties_say_nothing_and_a_unique_beginning_is_offered)
{
	static const char *const names[] = { "grad_q", "grad_k", "grad_v",
		"top-left", "bottom-right", "scores", "scaled", "Q" };
	static const struct suggestion cases[] = {
		{ "grad_x", NULL },		/* as near all three */
		{ "grad_Q", "grad_q" },		/* case alone */
		{ "q", "Q" },
		{ "top", "top-left" },		/* a beginning */
		{ "bot", "bottom-right" },
		{ "to", NULL },			/* too short a beginning */
		{ "sc", NULL },
		{ "sca", "scaled" },		/* scaled's beginning alone */
		{ "scor", "scores" },
		{ "grad", NULL },		/* the beginning of three */
	};

	suggestions_are(names, sizeof names / sizeof names[0], cases,
	    sizeof cases / sizeof cases[0]);
}
END_TEST

START_TEST(bundle_repeated_key_reports_second)
{
	static const struct error_case c = {
		ATTN_FMT_JSON, 0,
		"{\"Q\": [[1]],\n \"K\": [[1]],\n \"V\": [[1]], \"Q\": [[2]]}",
		0, 3, 14, "repeated bundle key \"Q\""
	};

	check_error(&c, 1);
}
END_TEST

static const struct error_case bundle_errors[] = {
	{ ATTN_FMT_JSON, 0, "{\"Q\": [[1]], \"K\": [[1]]}", 0, 1, 1,
	    "bundle has no \"V\"" },
	{ ATTN_FMT_JSON, 0, "{}", 0, 1, 1, "bundle has no \"Q\"" },
	/* a mask and a bias do not make up for Q, K or V */
	{ ATTN_FMT_JSON, 0, "{\"Q\": [[1]], \"mask\": [[1]]}", 0, 1, 1,
	    "bundle has no \"K\"" },
	{ ATTN_FMT_JSON, 0, "{\"bias\": [[0]]}", 0, 1, 1,
	    "bundle has no \"Q\"" },
	{ ATTN_FMT_JSON, 0, "[[1]]", 0, 1, 1,
	    "expected a JSON object (a BUNDLE), found an array" },
	{ ATTN_FMT_JSON, 0, "{\"Q\": [[1]], \"K\": [[1]], \"V\": [[1]]", 0,
	    1, 36, "unexpected end of input (truncated JSON?)" },
	{ ATTN_FMT_JSON, 0, "{\"Q\": [[1]]} {}", 0, 1, 14,
	    "trailing garbage after the JSON value" },
	/* arrays inside are read as any array is */
	{ ATTN_FMT_JSON, 0, "{\n \"Q\": [[1, 2],\n       [3]]}", 0, 3, 10,
	    "ragged array: row 2 has 1 value but row 1 has 2" },
	{ ATTN_FMT_JSON, 0, "{\"Q\": {\"a\": 1}}", 0, 1, 7,
	    "expected an array, found an object" },
	{ ATTN_FMT_JSON, ATTN_READ_FINITE,
	    "{\"K\": [[1]], \"V\": [[1]], \"Q\": [[1e999]]}", 0, 1, 33,
	    "number out of range: '1e999'" },
	{ ATTN_FMT_JSON, ATTN_READ_FINITE,
	    "{\"Q\": [[1]], \"K\": [[1]], \"V\": [[\"-inf\"]]}", 0, 1, 33,
	    "non-finite number '-inf' (Q, K, V and dO must be finite)" },
	/* keys with escapes and brackets in strings do not lose the
	 * locator */
	{ ATTN_FMT_JSON, 0, "{\"a\\\"}b\": [\"]\"], \"Q\": [[1]]}", 0, 1, 2,
	    "unknown bundle key \"a\"}b\" (keys: Q, K, V, mask, bias, labels, "
	    "proj, X, XQ, XKV)" },
	{ ATTN_FMT_JSON, 0, "{\"labels\": {\"query\": [\"]\\\"[\", \"}\", 3]}}",
	    0, 1, 36, "labels \"query\": expected a string, found a number" },
	/* labels */
	{ ATTN_FMT_JSON, 0, "{\"labels\": [\"a\"]}", 0, 1, 12,
	    "bundle key \"labels\" must be an object with \"query\" and "
	    "\"key\" lists, not an array" },
	{ ATTN_FMT_JSON, 0, "{\"labels\": {\"keys\": []}}", 0, 1, 13,
	    "unknown labels key \"keys\": did you mean \"key\"?" },
	{ ATTN_FMT_JSON, 0, "{\"labels\": {\"rows\": []}}", 0, 1, 13,
	    "unknown labels key \"rows\" (expected \"query\" or \"key\")" },
	{ ATTN_FMT_JSON, 0, "{\"labels\": {\"key\": [], \"key\": []}}", 0, 1,
	    24, "repeated labels key \"key\"" },
	{ ATTN_FMT_JSON, 0, "{\"labels\": {\"query\": \"a b\"}}", 0, 1, 22,
	    "labels \"query\" must be an array of strings, not a string" },
	/* a label cut short by \u0000 or holding a raw newline */
	{ ATTN_FMT_JSON, 0, "{\"labels\": {\"query\": [\"a\", \"\\u0000b\"]}}",
	    0, 1, 29, "\\u0000 (a NUL character) in a JSON string" },
	{ ATTN_FMT_JSON, 0, "{\"labels\": {\"key\": [\"a\nb\"]}}", 0, 1, 23,
	    "invalid JSON: control character 0x0A in a string (JSON needs it "
	    "escaped)" },
	/* escaped control characters, which cJSON decodes, and a raw DEL:
	 * at the label, after strings that could mislead a cursor */
	{ ATTN_FMT_JSON, 0,
	    "{\"labels\": {\"query\": [\"a\", \"\\u001b[31m\"]}}", 0, 1, 28,
	    "control character 0x1B in a label" },
	{ ATTN_FMT_JSON, 0,
	    "{\"labels\": {\"key\": [\"]\\\",[\" ,\n  \"x\\ty\"]}}", 0, 2, 3,
	    "control character 0x09 in a label" },
	{ ATTN_FMT_JSON, 0,
	    "{\"labels\": {\"query\": [], \"key\": [\"a\\nb\"]}}", 0, 1, 34,
	    "control character 0x0A in a label" },
	{ ATTN_FMT_JSON, 0, "{\"labels\": {\"query\": [\"\x7F\"]}}", 0, 1, 23,
	    "control character 0x7F in a label" },
	{ ATTN_FMT_JSON, 0, "{\"labels\": {\"query\": [\"ok\",\"\\u007f\"]}}",
	    0, 1, 28, "control character 0x7F in a label" },
	/* C1 controls (U+009B is CSI), escaped or as their UTF-8 bytes */
	{ ATTN_FMT_JSON, 0, "{\"labels\": {\"query\": [\"\\u009b2J\"]}}",
	    0, 1, 23, "control character U+009B in a label" },
	{ ATTN_FMT_JSON, 0, "{\"labels\": {\"key\": [\"x\xC2\x85\"]}}",
	    0, 1, 21, "control character U+0085 in a label" },
	/* labels name the rows of one matrix of a stack (B x T x d) */
	{ ATTN_FMT_JSON, 0, "{\"Q\": [[[1], [2]], [[3], [4]]], \"K\": [[1]],\n"
	    " \"V\": [[1]], \"labels\": {\"query\": [\"a\", \"b\", \"c\", "
	    "\"d\"]}}",
	    0, 2, 25, "labels \"query\" has 4 names but each matrix of Q has 2 "
	    "rows" },
	{ ATTN_FMT_JSON, 0, "{\"Q\": [[1]], \"K\": [[[[1]], [[2]]]],\n"
	    " \"V\": [[1]], \"labels\": {\"key\": [\"a\", \"b\"]}}", 0, 2,
	    25, "labels \"key\" has 2 names but each matrix of K has 1 row" },
	{ ATTN_FMT_JSON, 0, "{\"Q\": [1, 2], \"K\": [[1]], \"V\": [[1]],\n"
	    " \"labels\": {\"query\": [\"a\", \"b\"]}}", 0, 2, 13,
	    "labels \"query\" has 2 names but Q has 1 row" },
	/* masks: booleans and numbers, never strings other than inf */
	{ ATTN_FMT_JSON, ATTN_READ_FINITE,
	    "{\"Q\": [[1]], \"K\": [[1]], \"V\": [[1]], \"mask\": [[\"x\"]]}",
	    0, 1, 48, "expected a number, found a string" },
	{ ATTN_FMT_JSON, ATTN_READ_FINITE,
	    "{\"mask\": [[true, false],\n          [\"nan\", 1]]}", 0, 2, 12,
	    MASK_MSG("nan") },
	{ ATTN_FMT_JSON, 0, "{\"mask\": [[true, null]]}", 0, 1, 18,
	    "expected a number, found null" },
	{ ATTN_FMT_JSON, 0, "{\"mask\": {\"a\": 1}}", 0, 1, 10,
	    "expected an array, found an object" },
	{ ATTN_FMT_JSON, 0, "{\"mask\": [[1]],\n \"mask\": [[0]]}", 0, 2, 2,
	    "repeated bundle key \"mask\"" },
	{ ATTN_FMT_JSON, 0, "{\"bias\": [[0]], \"Bias\": [[0]]}", 0, 1, 17,
	    "unknown bundle key \"Bias\": keys are case-sensitive; did you "
	    "mean \"bias\"?" },
	{ ATTN_FMT_JSON, 0, "{\"lables\": {}}", 0, 1, 2,
	    "unknown bundle key \"lables\": did you mean \"labels\"?" },
	{ ATTN_FMT_JSON, 0, "{\"Q\": [[1]], \"xkv\": [[1]]}", 0, 1, 14,
	    "unknown bundle key \"xkv\": keys are case-sensitive; did you "
	    "mean \"XKV\"?" },
	/* booleans are for the mask only */
	{ ATTN_FMT_JSON, 0, "{\"bias\": [[0, true]]}", 0, 1, 15,
	    "expected a number, found true" },
	{ ATTN_FMT_JSON, ATTN_READ_FINITE,
	    "{\"mask\": [[true]], \"Q\": [[false]]}", 0, 1, 27,
	    "expected a number, found false" },
	/* the bias keeps the other rules: finite literals only */
	{ ATTN_FMT_JSON, 0, "{\"bias\": [[1e999]]}", 0, 1, 12,
	    "number out of range: '1e999'" },
	/* what was read before the error is freed (ASan) */
	{ ATTN_FMT_JSON, ATTN_READ_FINITE,
	    "{\"mask\": [[1]], \"bias\": [[0]], \"Q\": [[1]], \"K\": [[1]],"
	    " \"V\": [[1], 2]}", 0, 1, 67, "expected an array, found a number" },
};

START_TEST(bundle_errors_report_message_line_and_column)
{
	check_error(&bundle_errors[_i], 1);
}
END_TEST

static const struct {
	const char *text;
	int bundle;
} is_bundle[] = {
	{ "{\"Q\": []}", 1 },
	{ "\xEF\xBB\xBF \r\n\t{", 1 },
	{ "[{}]", 0 },
	{ "", 0 },
	{ "x {", 0 },
};

START_TEST(json_object_is_recognised_as_a_bundle)
{
	size_t len = strlen(is_bundle[_i].text);
	char *buf = exact_copy(is_bundle[_i].text, len);

	ck_assert_int_eq(attn_is_bundle(buf, len), is_bundle[_i].bundle);
	free(buf);
}
END_TEST

/* A UTF-16 object is a bundle too (its reader then names the encoding);
 * a UTF-16 array, or a BOM alone, is not. */
START_TEST(utf16_object_is_recognised_as_a_bundle)
{
	static const struct {
		const char *text;
		size_t len;
		int bundle;
	} cases[] = {
		{ "\xFF\xFE{\0\"\0Q\0", 8, 1 },
		{ "\xFE\xFF\0{\0\"", 6, 1 },
		{ "\xFF\xFE \0\n\0{\0", 8, 1 },
		{ "\xFE\xFF\0\t\0{", 6, 1 },
		{ "\xFF\xFE[\0{\0", 6, 0 },
		{ "\xFE\xFF\0[", 4, 0 },
		{ "\xFF\xFE", 2, 0 },
		{ "\xFF\xFE{", 3, 0 },
		{ "\xFF\xFE\0{", 4, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *buf = exact_copy(cases[i].text, cases[i].len);

		ck_assert_msg(attn_is_bundle(buf, cases[i].len) ==
		    cases[i].bundle, "case %zu", i);
		free(buf);
	}
}
END_TEST

/* ---------------------------------------------------------------- formats */

static const struct {
	const char *name;
	const char *text;
	enum attn_format want;
} guesses[] = {
	{ "q.json", "1,2\n", ATTN_FMT_JSON },	/* the name wins */
	{ "dir/Q.JSON", "1 2", ATTN_FMT_JSON },
	{ "q.csv", "[1]", ATTN_FMT_CSV },
	{ "q.Tsv", "1 2", ATTN_FMT_TSV },
	{ "q.npy", "[1]", ATTN_FMT_NPY },
	{ "q.txt", "1 2\n", ATTN_FMT_TEXT },
	{ "q.txt", "1,2\n", ATTN_FMT_CSV },	/* savetxt(delimiter=",") */
	/* tabs and spaces read the same unless spaces stand between two
	 * words: white space then, unless a word left is no number */
	{ "q.txt", "1\t2\n", ATTN_FMT_TEXT },
	{ "m.txt", "1  0\t1 0\n  0 1   0 1\n", ATTN_FMT_TEXT },
	{ "q.txt", "x\ty\n1\t2\n3 4\n", ATTN_FMT_TEXT },
	{ "-", "name\tx\ty\nNew York\t1\t2\n", ATTN_FMT_TSV },
	{ "-", "first name\tx\nNew\t1\n", ATTN_FMT_TSV },
	{ "-", "a\t1 \t 2\r\nb\t\"3 4\"\t5\n", ATTN_FMT_TEXT },
	{ "-", "1\t2 true\n", ATTN_FMT_TEXT },
	{ "-", "  \n[[1]]", ATTN_FMT_JSON },
	{ "-", "\xEF\xBB\xBF\r\n{\"Q\": 1}", ATTN_FMT_JSON },
	{ NULL, "\x93NUMPY\x01\x00", ATTN_FMT_NPY },
	{ "-", "# a,b\n\n1\t2\n", ATTN_FMT_TEXT },
	{ "-", "1 2\n3,4\n", ATTN_FMT_TEXT },
	{ "-", "a\tb,c\n", ATTN_FMT_CSV },
	{ "-", "", ATTN_FMT_TEXT },
	{ "q.json.d/data", "1 2", ATTN_FMT_TEXT },
	{ ".json", "1 2", ATTN_FMT_TEXT },	/* a hidden file */
	{ "q.dat", "[1]", ATTN_FMT_JSON },
};

START_TEST(format_guessed_by_extension_then_content)
{
	size_t len = strlen(guesses[_i].text);
	char *buf;

	if (guesses[_i].want == ATTN_FMT_NPY && guesses[_i].name == NULL)
		len = 8;
	buf = exact_copy(guesses[_i].text, len);
	ck_assert_msg(attn_format_guess(guesses[_i].name, buf, len) ==
	    guesses[_i].want, "case %d: %s", _i,
	    guesses[_i].name != NULL ? guesses[_i].name : "(null)");
	free(buf);
}
END_TEST

static const char *const auto_inputs[] = {
	"[[1, 2], [3, 4]]", "1,2\n3,4\n", "1\t2\n3\t4\n", "1 2\n3 4\n",
};

START_TEST(auto_format_reads_by_content)
{
	static const double want[] = { 1, 2, 3, 4 };
	struct attn_array a;

	read_ok(auto_inputs[_i], ATTN_FMT_AUTO, 0, &a, 2, 2);
	assert_values(&a, want, 4);
	attn_array_free(&a);
}
END_TEST

/* A zip's local file header, 30 bytes, then the first entry's name. */
#define ZIP_ENTRY(name, n) "PK\x03\x04" "\x14\0\0\0\0\0\0\0\0\0" \
	"\0\0\0\0\0\0\0\0\0\0\0\0" n "\0\0\0" name

/* A .npz whose arrays libzip cannot list (these are cut short): the
 * first member's name, from its header, in the command. */
#define NPZ_MSG(name, key, to) "a NumPy .npz archive, not one array: " \
	"save the one you want as .npy, e.g. numpy.save('" to "', " \
	"numpy.load(" name ")[" key "])"
#define ZIP_MSG "a zip archive, not a matrix (a spreadsheet's .xlsx or " \
	".ods?): save the sheet as CSV"

/*
 * A zip is no input: a .npz (by its name, or by a first entry that is a
 * .npy, as numpy.savez writes) says how to get a .npy; another zip, most
 * likely a spreadsheet, says to save it as CSV.  No position applies.
 */
static const struct {
	const char *name, *text;
	size_t len;
	const char *msg;
} zips[] = {
	{ "w.npz", ZIP_ENTRY("arr_0.npy", "\x09"), 39,
	    NPZ_MSG("'w.npz'", "'arr_0'", "arr_0.npy") },
	{ "-", ZIP_ENTRY("q.NPY", "\x05"), 35,
	    NPZ_MSG("'-'", "'q.NPY'", "q.NPY.npy") },
	{ "it's.npz", ZIP_ENTRY("a'b.npy", "\x07"), 37,
	    NPZ_MSG("\"it's.npz\"", "\"a'b\"", "array.npy") },
	{ "w.npz", ZIP_ENTRY("x\x1B.npy", "\x06"), 36,
	    NPZ_MSG("'w.npz'", "'x\\x1B'", "array.npy") },
	{ "w.npz", "PK\x05\x06\0\0\0\0", 8, "a .npz archive with no arrays" },
	{ "w.NPZ", "1,2\n", 4, "named .npz but no zip archive: it starts "
	    "with '1,2\\x0A', where a .npz (a zip of .npy files, as "
	    "numpy.savez writes) starts with PK" },
	{ "w.npz", "", 0, "an empty file, not a .npz archive (a zip of .npy "
	    "files, as numpy.savez writes)" },
	{ "w.npz", ZIP_ENTRY("[Content_Types].xml", "\x13"), 49, "a zip "
	    "archive whose first member is no .npy array: not a .npz as "
	    "numpy.savez writes one (a spreadsheet or a document: .xlsx, "
	    ".ods, .docx?)" },
	{ "sheet.xlsx", ZIP_ENTRY("[Content_Types].xml", "\x13"), 49,
	    ZIP_MSG },
	{ "w.json", "PK\x05\x06", 4, ZIP_MSG },
	/* a name too long for its header is no .npy */
	{ "-", ZIP_ENTRY("a.npy", "\x06"), 35, ZIP_MSG },
};

START_TEST(zip_archives_are_named)
{
	struct attn_array a;
	struct attn_error err;

	ck_assert_int_eq(read_n(zips[_i].name, zips[_i].text, zips[_i].len,
	    ATTN_FMT_AUTO, 0, &a, &err), ATTN_ERR_DATA);
	ck_assert_str_eq(err.msg, zips[_i].msg);
	ck_assert_uint_eq(err.line, 0);
	ck_assert_ptr_null(a.data);
}
END_TEST

/* A .npy named .npz (saved under the wrong name) is read as a .npy. */
START_TEST(npy_named_npz_is_read)
{
	static const char npy[] = "\x93NUMPY\x01\x00v\x00{'descr': '<f8', "
	    "'fortran_order': False, 'shape': (1,), }"
	    "                                                            \n"
	    "\0\0\0\0\0\0\0@";
	struct attn_array a;
	struct attn_error err;

	ck_assert_uint_eq(sizeof npy - 1, 136);
	ck_assert_int_eq(read_n("w.npz", npy, sizeof npy - 1, ATTN_FMT_AUTO, 0,
	    &a, &err), ATTN_OK);
	ck_assert(a.ndim == 1 && a.shape[0] == 1 && a.data[0] == 2.0);
	attn_array_free(&a);
}
END_TEST

START_TEST(error_names_the_file_it_was_given)
{
	static const char name[] = "data/q.csv";
	struct attn_array a;
	struct attn_error err;

	ck_assert_int_eq(read_n(name, "1,x\n", 0, ATTN_FMT_AUTO, 0, &a, &err),
	    ATTN_ERR_DATA);
	ck_assert_ptr_eq(err.file, name);
	ck_assert_int_eq(err.status, ATTN_ERR_DATA);
}
END_TEST

START_TEST(free_functions_accept_zeroed_structs)
{
	struct attn_array a;
	struct attn_labels l;
	struct attn_bundle b;
	struct attn_matrix m;

	memset(&a, 0, sizeof a);
	memset(&l, 0, sizeof l);
	memset(&b, 0, sizeof b);
	m = attn_array_matrix(&a);
	ck_assert_uint_eq(m.rows, 0);
	ck_assert_ptr_null(m.data);
	attn_array_free(&a);
	attn_labels_free(&l);
	attn_bundle_free(&b);
	ck_assert_ptr_null(a.data);
	ck_assert_uint_eq(l.count, 0);
}
END_TEST

/* The internal readers are what attn_read_array dispatches to; they also
 * leave *out empty on failure. */
START_TEST(internal_readers_match_the_public_call)
{
	struct attn_array a;
	struct attn_error err;
	char *buf = exact_copy("1 2\n", 4);

	ck_assert_int_eq(attn_read_text("t", buf, 4, ATTN_FMT_TEXT, 0, 1, &a,
	    &err), ATTN_OK);
	ck_assert(a.data[1] == 2);
	attn_array_free(&a);
	/* As JSON the same bytes are a number, then another. */
	ck_assert_int_eq(attn_read_json("t", buf, 4, 0, &a, &err), ATTN_ERR_DATA);
	ck_assert_str_eq(err.msg, CSV_MSG);
	ck_assert_uint_eq(err.col, 3);
	ck_assert_ptr_null(a.data);
	free(buf);
}
END_TEST

Suite *
read_suite(void)
{
	Suite *s = suite_create("read");
	TCase *text = tcase_create("text");
	TCase *json = tcase_create("json");
	TCase *bundle = tcase_create("bundle");
	TCase *format = tcase_create("format");

	tcase_add_test(text, csv_reads_rows_of_numbers);
	tcase_add_test(text, one_line_is_a_one_by_n_matrix);
	tcase_add_test(text, csv_with_header_and_labels_reads_labels);
	tcase_add_loop_test(text, header_may_or_may_not_name_the_label_column,
	    0, NCASES(header_inputs));
	tcase_add_loop_test(text,
	    empty_first_header_field_makes_first_column_labels, 0,
	    NCASES(index_headers));
	tcase_add_loop_test(text, one_column_header_comes_with_a_notice, 0,
	    NCASES(notices));
	tcase_add_loop_test(text,
	    pandas_index_names_row_is_a_header_with_a_notice, 0,
	    NCASES(index_rows));
	tcase_add_loop_test(text, mask_index_row_kept_as_data_is_checked, 0,
	    NCASES(index_row_errors));
	tcase_add_test(text, header_without_labels_is_skipped);
	tcase_add_loop_test(text, header_names_the_columns, 0,
	    (int)(sizeof col_headers / sizeof col_headers[0]));
	tcase_add_test(text, quoted_labels_keep_commas_quotes_and_numbers);
	tcase_add_loop_test(text, quoted_numbers_are_numbers, 0,
	    NCASES(quoted_numbers));
	tcase_add_test(text, quoted_labels_and_booleans_read_as_their_contents);
	tcase_add_loop_test(text, tsv_and_text_read_labels, 0,
	    NCASES(labelled));
	tcase_add_loop_test(text, crlf_and_bom_are_accepted, 0,
	    NCASES(crlf_bom));
	tcase_add_test(text, comments_and_blank_lines_are_skipped);
	tcase_add_test(text, numpy_savetxt_default_output_is_read);
	tcase_add_test(text, whitespace_text_splits_on_runs_of_blanks_and_tabs);
	tcase_add_test(text, csv_fields_are_trimmed_of_spaces_and_tabs);
	tcase_add_loop_test(text, numbers_are_correctly_rounded, 0,
	    NCASES(rounding));
	tcase_add_test(text, numbers_ignore_a_decimal_comma_locale);
	tcase_add_test(text, nonfinite_spellings_read_without_finite_flag);
	tcase_add_loop_test(text, nonfinite_rejected_with_finite_flag, 0,
	    NCASES(finite_cases));
	tcase_add_loop_test(text,
	    out_of_range_literal_is_an_error_without_finite_flag, 0,
	    NCASES(out_of_range));
	tcase_add_loop_test(text, booleans_read_as_one_and_zero_with_bool_flag,
	    0, NCASES(text_booleans));
	tcase_add_test(text, boolean_mask_rows_keep_their_labels);
	tcase_add_test(text, inf_in_a_mask_is_refused);
	tcase_add_loop_test(text, mask_numbers_other_than_0_and_1_are_refused,
	    0, NCASES(mask_values));
	tcase_add_test(text, bundle_mask_numbers_other_than_0_and_1_are_refused);
	tcase_add_loop_test(text, nan_and_plus_inf_in_a_bias_are_refused, 0,
	    NCASES(bias_errors));
	tcase_add_test(text, bias_may_hold_minus_inf);
	tcase_add_loop_test(text,
	    bool_flag_errors_report_message_line_and_column, 0,
	    NCASES(bool_errors));
	tcase_add_loop_test(text, text_errors_report_message_line_and_column,
	    0, NCASES(text_errors));
	tcase_add_loop_test(text, wrong_separator_is_named, 0,
	    NCASES(wrong_separator));
	tcase_add_test(text,
	    one_column_and_other_characters_pass_the_separator_check);
	tcase_add_loop_test(text, unicode_dash_in_a_number_is_named, 0,
	    NCASES(dash_cases));
	tcase_add_test(text, dashes_in_labels_are_labels);
	tcase_add_loop_test(text, numbers_spelt_otherwise_are_named, 0,
	    NCASES(spellings));
	tcase_add_test(text, words_with_d_and_commas_are_labels);
	tcase_add_loop_test(text, hostile_text_is_reported_clearly, 0,
	    NCASES(hostile_text));
	tcase_add_test(text, latin1_comments_and_utf8_labels_are_read);
	tcase_add_test(text, separators_and_line_ends_are_not_in_labels);
	tcase_add_loop_test(text, utf8_check_finds_the_first_bad_byte, 0,
	    NCASES(utf8_cases));
	tcase_add_test(text, utf8_char_decodes_code_points);
	tcase_add_loop_test(text, escape_writes_controls_as_hex, 0,
	    NCASES(escapes));
	tcase_add_test(text, format_characters_are_unicodes_cf);
	tcase_add_test(text, preview_escapes_and_cuts);
	tcase_add_test(text, non_ascii_is_found_after_any_run_of_ascii);
	tcase_add_test(text, large_input_reads_every_value);
	suite_add_tcase(s, text);

	tcase_add_test(json, json_matrix_reads_rows_and_columns);
	tcase_add_test(json, json_vector_is_one_row);
	tcase_add_test(json, json_3d_and_4d_are_stored_in_c_order);
	tcase_add_test(json, inf_strings_accepted_without_finite_flag);
	tcase_add_test(json, ragged_json_row_reports_line_and_column);
	tcase_add_test(json, deep_nesting_is_refused_by_depth);
	tcase_add_test(json,
	    ragged_json_is_reported_before_its_shape_is_allocated);
	tcase_add_loop_test(json, trailing_garbage_is_reported, 0,
	    NCASES(trailing));
	tcase_add_loop_test(json, truncated_json_reports_end, 0,
	    NCASES(truncated));
	tcase_add_loop_test(json, json_errors_report_message_line_and_column,
	    0, NCASES(json_errors));
	tcase_add_loop_test(json, hostile_json_is_reported_clearly, 0,
	    NCASES(hostile_json));
	tcase_add_loop_test(json, json_is_strict_rfc_8259, 0,
	    NCASES(strict_json));
	tcase_add_loop_test(json, bundle_json_is_strict_rfc_8259, 0,
	    NCASES(strict_bundle));
	tcase_add_test(json, json_numbers_of_every_form_are_read);
	tcase_add_test(json, deep_unclosed_nesting_is_refused_by_depth);
	tcase_add_test(json, numbers_with_thousands_of_digits);
	suite_add_tcase(s, json);

	tcase_add_test(bundle, bundle_reads_q_k_v_and_labels);
	tcase_add_test(bundle, bundle_labels_name_the_rows_of_each_matrix);
	tcase_add_test(bundle, bundle_without_labels_has_none);
	tcase_add_test(bundle, bundle_reads_mask_and_bias);
	tcase_add_test(bundle, bundle_mask_and_bias_may_be_stacks);
	tcase_add_test(bundle, bundle_bias_may_hold_inf_but_q_may_not);
	tcase_add_test(bundle, bundle_with_unknown_key_is_rejected);
	tcase_add_test(bundle, key_suggestions_are_near_misses_only);
	tcase_add_test(bundle, ties_say_nothing_and_a_unique_beginning_is_offered);
	tcase_add_test(bundle, bundle_repeated_key_reports_second);
	tcase_add_loop_test(bundle,
	    bundle_errors_report_message_line_and_column, 0,
	    NCASES(bundle_errors));
	tcase_add_test(bundle, utf16_object_is_recognised_as_a_bundle);
	tcase_add_loop_test(bundle, json_object_is_recognised_as_a_bundle, 0,
	    NCASES(is_bundle));
	suite_add_tcase(s, bundle);

	tcase_add_loop_test(format, format_guessed_by_extension_then_content,
	    0, NCASES(guesses));
	tcase_add_loop_test(format, auto_format_reads_by_content, 0,
	    NCASES(auto_inputs));
	tcase_add_loop_test(format, zip_archives_are_named, 0, NCASES(zips));
	tcase_add_test(format, npy_named_npz_is_read);
	tcase_add_test(format, error_names_the_file_it_was_given);
	tcase_add_test(format, free_functions_accept_zeroed_structs);
	tcase_add_test(format, internal_readers_match_the_public_call);
	suite_add_tcase(s, format);
	return s;
}
