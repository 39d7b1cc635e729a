/*
 * check_read_repr.c - arrays as NumPy and PyTorch print them (read_repr.c)
 * and how the content guess tells them from JSON and text.
 *
 * The prints below are what NumPy 1.24 and PyTorch 1.13 wrote, copied as
 * Python's json.dumps shows them; the comment above each says what was
 * printed (np is numpy, a = np.arange(..) and so on).  Every input is
 * read from a buffer of exactly its length, so that AddressSanitizer
 * catches a read past the end.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "suites.h"
#include "testutil.h"

#define NCASES(t) ((int)(sizeof (t) / sizeof (t)[0]))

/* Read text as standard input is read (AUTO: by content). */
static enum attn_status
read_text_as(const char *text, enum attn_format fmt, unsigned flags,
    struct attn_array *a, struct attn_error *err)
{
	return read_exact("-", text, fmt, flags, a, err);
}

/* A print that reads: its shape (ndim dims) and its first values. */
struct print_case {
	const char *what;	/* the Python that printed it */
	const char *text;
	size_t ndim;
	size_t shape[ATTN_MAX_DIMS];
	double first[4];	/* its first four values, C order */
};

static const struct print_case prints[] = {
	{ "str(np.eye(2))", "[[1. 0.]\n [0. 1.]]", 2, { 2, 2 },
	    { 1, 0, 0, 1 } },
	{ "repr(np.eye(2))", "array([[1., 0.],\n       [0., 1.]])", 2,
	    { 2, 2 }, { 1, 0, 0, 1 } },
	{ "str(torch.eye(2))", "tensor([[1., 0.],\n        [0., 1.]])", 2,
	    { 2, 2 }, { 1, 0, 0, 1 } },
	{ "str(e), e = np.array([[1e-5, -2.5e3], [3., 4.]])",
	    "[[ 1.0e-05 -2.5e+03]\n [ 3.0e+00  4.0e+00]]", 2, { 2, 2 },
	    { 1e-5, -2.5e3, 3, 4 } },
	{ "repr(e)", "array([[ 1.0e-05, -2.5e+03],\n       "
	    "[ 3.0e+00,  4.0e+00]])", 2, { 2, 2 }, { 1e-5, -2.5e3, 3, 4 } },
	{ "str(torch.tensor(e))", "tensor([[ 1.0000e-05, -2.5000e+03],\n"
	    "        [ 3.0000e+00,  4.0000e+00]])", 2, { 2, 2 },
	    { 1e-5, -2.5e3, 3, 4 } },
	{ "str(np.array([1., -0.5]))", "[ 1.  -0.5]", 1, { 2 },
	    { 1, -0.5, 0, 0 } },
	{ "str(torch.tensor([1., -0.5]))", "tensor([ 1.0000, -0.5000])", 1,
	    { 2 }, { 1, -0.5, 0, 0 } },
	{ "str(np.arange(8.).reshape(2, 2, 2))",
	    "[[[0. 1.]\n  [2. 3.]]\n\n [[4. 5.]\n  [6. 7.]]]", 3, { 2, 2, 2 },
	    { 0, 1, 2, 3 } },
	{ "str(torch.arange(8.).reshape(2, 2, 2))",
	    "tensor([[[0., 1.],\n         [2., 3.]],\n\n        [[4., 5.],\n"
	    "         [6., 7.]]])", 3, { 2, 2, 2 }, { 0, 1, 2, 3 } },
	{ "str(np.arange(16.).reshape(1, 2, 2, 4))",
	    "[[[[ 0.  1.  2.  3.]\n   [ 4.  5.  6.  7.]]\n\n  [[ 8.  9. 10. "
	    "11.]\n   [12. 13. 14. 15.]]]]", 4, { 1, 2, 2, 4 },
	    { 0, 1, 2, 3 } },
	/* a row longer than the line: NumPy wraps it */
	{ "str(np.random.RandomState(0).randn(2, 12))",
	    "[[ 1.76405235  0.40015721  0.97873798  2.2408932   1.86755799 "
	    "-0.97727788\n   0.95008842 -0.15135721 -0.10321885  0.4105985   "
	    "0.14404357  1.45427351]\n [ 0.76103773  0.12167502  0.44386323  "
	    "0.33367433  1.49407907 -0.20515826\n   0.3130677  -0.85409574 "
	    "-2.55298982  0.6536186   0.8644362  -0.74216502]]", 2, { 2, 12 },
	    { 1.76405235, 0.40015721, 0.97873798, 2.2408932 } },
	/* keyword arguments after the array */
	{ "str(torch.tensor([[1., 2.]], dtype=torch.float64, "
	    "requires_grad=True) * 2)",
	    "tensor([[2., 4.]], dtype=torch.float64, grad_fn=<MulBackward0>)",
	    2, { 1, 2 }, { 2, 4, 0, 0 } },
	{ "repr(np.array([[1., 2.]], dtype=np.float32))",
	    "array([[1., 2.]], dtype=float32)", 2, { 1, 2 }, { 1, 2, 0, 0 } },
	{ "torch.zeros(1, 2, device='cuda:0') as printed",
	    "tensor([[0., 0.]], device='cuda:0')", 2, { 1, 2 },
	    { 0, 0, 0, 0 } },
	{ "str(np.array([[1, 2], [3, 4]]))", "[[1 2]\n [3 4]]", 2, { 2, 2 },
	    { 1, 2, 3, 4 } },
	/* pasted on Windows, between blank lines */
	{ "str(np.eye(2)) with CRLF", "\r\n[[1. 0.]\r\n [0. 1.]]\r\n\r\n", 2,
	    { 2, 2 }, { 1, 0, 0, 1 } },
};

START_TEST(printed_arrays_read_as_the_matrix_they_show)
{
	const struct print_case *c = &prints[_i];
	struct attn_array a;
	struct attn_error err;
	size_t d, n;

	ck_assert_msg(read_text_as(c->text, ATTN_FMT_AUTO, ATTN_READ_FINITE,
	    &a, &err) == ATTN_OK, "%s: %zu:%zu: %s", c->what, err.line,
	    err.col, err.msg);
	ck_assert_uint_eq(a.ndim, c->ndim);
	for (d = 0, n = 1; d < c->ndim; d++) {
		ck_assert_uint_eq(a.shape[d], c->shape[d]);
		n *= c->shape[d];
	}
	for (d = 0; d < 4 && d < n; d++)
		ck_assert_msg(a.data[d] == c->first[d], "%s: value %zu is %g",
		    c->what, d, a.data[d]);
	ck_assert_uint_eq(a.row_labels.count, 0);
	attn_array_free(&a);
}
END_TEST

/* The last value too, so that nothing is left out or read twice. */
START_TEST(wrapped_rows_keep_every_value)
{
	struct attn_array a;
	struct attn_error err;

	ck_assert_int_eq(read_text_as(prints[11].text, ATTN_FMT_AUTO, 0, &a,
	    &err), ATTN_OK);
	ck_assert(a.data[11] == 1.45427351);
	ck_assert(a.data[12] == 0.76103773);
	ck_assert(a.data[23] == -0.74216502);
	attn_array_free(&a);
}
END_TEST

/* nan and inf as printed, where the flags allow them; True and False in
 * a mask. */
START_TEST(printed_nonfinite_values_and_booleans)
{
	static const char *const nonfinite[] = {
		"[[ nan  inf -inf]]",			/* NumPy */
		"tensor([[nan, inf, -inf]])",		/* PyTorch */
	};
	static const char *const booleans[] = {
		"[[ True False]\n [False  True]]",
		"tensor([[ True, False],\n        [False,  True]])",
	};
	static const double eye[] = { 1, 0, 0, 1 };
	struct attn_array a;
	struct attn_error err;
	size_t i, k;

	for (i = 0; i < 2; i++) {
		ck_assert_int_eq(read_text_as(nonfinite[i], ATTN_FMT_AUTO, 0,
		    &a, &err), ATTN_OK);
		ck_assert(isnan(a.data[0]));
		ck_assert(isinf(a.data[1]) && a.data[1] > 0);
		ck_assert(isinf(a.data[2]) && a.data[2] < 0);
		attn_array_free(&a);
		ck_assert_int_eq(read_text_as(nonfinite[i], ATTN_FMT_AUTO,
		    ATTN_READ_FINITE, &a, &err), ATTN_ERR_DATA);
		ck_assert_str_eq(err.msg, "non-finite number 'nan' (Q, K, V "
		    "and dO must be finite)");
		ck_assert_int_eq(read_text_as(booleans[i], ATTN_FMT_AUTO,
		    ATTN_READ_BOOL, &a, &err), ATTN_OK);
		for (k = 0; k < 4; k++)
			ck_assert(a.data[k] == eye[k]);
		attn_array_free(&a);
		ck_assert_int_eq(read_text_as(booleans[i], ATTN_FMT_AUTO, 0,
		    &a, &err), ATTN_ERR_DATA);
		ck_assert_str_eq(err.msg, "not a number: 'True'");
	}
}
END_TEST

/*
 * The book's code pasted as it is: Raschka, Build a Large Language Model
 * (From Scratch), section 3.3, writes the embeddings of "Your journey
 * starts with one step" as a torch.tensor( block with a comment after
 * each row naming its token (after "import torch"); the same block as
 * np.array(, and with the keywords a call may take.  Each reads as the 6 x 3 matrix with those
 * words as its row labels.
 */
#define RASCHKA_ROWS \
	"  [[0.43, 0.15, 0.89], # Your     (x^1)\n" \
	"   [0.55, 0.87, 0.66], # journey  (x^2)\n" \
	"   [0.57, 0.85, 0.64], # starts   (x^3)\n" \
	"   [0.22, 0.58, 0.33], # with     (x^4)\n" \
	"   [0.77, 0.25, 0.10], # one      (x^5)\n" \
	"   [0.05, 0.80, 0.55]] # step     (x^6)\n"

static const char *const book_code[] = {
	"inputs = torch.tensor(\n" RASCHKA_ROWS ")\n",
	"inputs = np.array(\n" RASCHKA_ROWS ")\n",
	"\xEF\xBB\xBF  inputs=numpy.array(\n" RASCHKA_ROWS
	    "  , dtype=np.float32)  # the six tokens\n\n",
	"torch.tensor(\n" RASCHKA_ROWS ", requires_grad=True)",
	"import torch\n\ninputs = torch.tensor(\n" RASCHKA_ROWS ")\n",
	"import numpy as np\nfrom numpy import array\n"
	    "inputs = np.array(\n" RASCHKA_ROWS ")\n",
};

START_TEST(book_code_reads_with_its_comments_as_row_labels)
{
	static const char *const words[] = {
		"Your", "journey", "starts", "with", "one", "step"
	};
	struct attn_array a;
	struct attn_error err;
	size_t k;

	ck_assert_msg(read_text_as(book_code[_i], ATTN_FMT_AUTO,
	    ATTN_READ_FINITE, &a, &err) == ATTN_OK, "%zu:%zu: %s", err.line,
	    err.col, err.msg);
	ck_assert_uint_eq(a.ndim, 2);
	ck_assert_uint_eq(a.shape[0], 6);
	ck_assert_uint_eq(a.shape[1], 3);
	ck_assert(a.data[0] == 0.43 && a.data[4] == 0.87 &&
	    a.data[17] == 0.55);
	ck_assert_uint_eq(a.row_labels.count, 6);
	for (k = 0; k < 6; k++)
		ck_assert_str_eq(a.row_labels.names[k], words[k]);
	ck_assert_uint_eq(a.col_labels.count, 0);
	ck_assert_str_eq(a.notice.msg, "");
	attn_array_free(&a);
}
END_TEST

/*
 * A comment names a row only when it is the one row that closed on its
 * line; comments that name some rows but not all leave the rows
 * unlabelled, with a notice that says why.  A comment holding a control
 * character in its first word is refused where it stands, as a label is.
 */
START_TEST(comments_that_name_some_rows_leave_them_unlabelled)
{
	struct attn_array a;
	struct attn_error err;

	ck_assert_int_eq(read_text_as("# the queries\nx = torch.tensor("
	    "[[1., 0.], [0., 1.]])  # both rows\n", ATTN_FMT_REPR, 0, &a,
	    &err), ATTN_OK);
	ck_assert_uint_eq(a.row_labels.count, 0);
	ck_assert_str_eq(a.notice.msg, "");
	attn_array_free(&a);

	ck_assert_int_eq(read_text_as("x = np.array([\n  [1., 0.],  # a\n"
	    "  [0., 1.],\n  [1., 1.]])  # c\n", ATTN_FMT_AUTO, 0, &a, &err),
	    ATTN_OK);
	ck_assert_uint_eq(a.row_labels.count, 0);
	ck_assert_str_eq(a.notice.msg, "comments name 2 of the 3 rows, so "
	    "the rows are not labelled: give each row a comment after it, "
	    "on its line");
	ck_assert_uint_eq(a.notice.line, 2);
	attn_array_free(&a);

	ck_assert_int_eq(read_text_as("x = np.array([[1., 0.]])  # \x1B[31m"
	    "\n", ATTN_FMT_AUTO, 0, &a, &err), ATTN_ERR_DATA);
	ck_assert_str_eq(err.msg, "control character 0x1B in a label");
	ck_assert_uint_eq(err.col, 29);
}
END_TEST

#define SUMMARISED "summarised print: '...' stands for elements left " \
	"out; print the array whole with numpy.set_printoptions(threshold=" \
	"sys.maxsize) (PyTorch: torch.set_printoptions(profile='full'))"

/* A print that must be refused: read as REPR, or by content when auto. */
static const struct {
	const char *what, *text;
	int guessed;		/* the content guess finds it a print */
	size_t line, col;
	const char *msg;
} refused[] = {
	/* summarised prints: the numbers left out are gone */
	{ "str(np.zeros((2, 1001)))", "[[0. 0. 0. ... 0. 0. 0.]\n"
	    " [0. 0. 0. ... 0. 0. 0.]]", 1, 1, 12, SUMMARISED },
	{ "str(np.zeros((1001, 2)))", "[[0. 0.]\n [0. 0.]\n [0. 0.]\n ...\n"
	    " [0. 0.]\n [0. 0.]\n [0. 0.]]", 1, 4, 2, SUMMARISED },
	{ "str(torch.zeros((2, 1001)))", "tensor([[0., 0., 0.,  ..., 0., "
	    "0., 0.],\n        [0., 0., 0.,  ..., 0., 0., 0.]])", 1, 1, 23,
	    SUMMARISED },
	{ "str(torch.tensor(5.))", "tensor(5.)", 1, 1, 8, "a 0-D array (one "
	    "number): attn reads a row, a matrix or a stack of them" },
	/* shapes, as the JSON reader words them */
	{ "ragged", "[[1. 0.]\n [0.]]", 1, 2, 5,
	    "ragged array: row 2 has 1 value but row 1 has 2" },
	{ "ragged, too long", "tensor([[1., 0.],\n        [0., 1., 2.]])", 1,
	    2, 18, "ragged array: row 2 has 3 values but row 1 has 2" },
	{ "ragged 3-D", "[[[0. 1.]\n  [2. 3.]]\n\n [[4. 5.]]]", 1, 4, 10,
	    "ragged array: matrix 2 has 1 row but matrix 1 has 2" },
	{ "a list where a number is", "[[1. 2.]\n [[3.] 4.]]", 1, 2, 3,
	    "expected a number, found an array" },
	{ "a number where a list is", "[[1. 2.] 3.]", 1, 1, 10,
	    "expected an array, found a number" },
	{ "five dimensions", "[[[[[1.]]]]]", 1, 1, 5,
	    "too many dimensions: at most 4 are supported" },
	{ "empty", "array([], dtype=float64)", 1, 1, 8, "empty matrix" },
	{ "empty row", "[[1. 2.]\n []]", 1, 2, 3, "empty matrix" },
	/* separators */
	{ "no separator", "[[1. 0.][0. 1.]]", 1, 1, 9,
	    "expected ',' or white space between elements" },
	{ "two commas", "tensor([1., , 2.])", 1, 1, 13, "unexpected ','" },
	{ "leading comma", "array([, 1.])", 1, 1, 8, "unexpected ','" },
	{ "trailing comma", "tensor([1., 2., ])", 1, 1, 15,
	    "unexpected ',' before ']'" },
	/* numbers */
	{ "a word", "[[1. x]]", 1, 1, 6, "not a number: 'x'" },
	{ "out of range", "[1. 1e999]", 1, 1, 5,
	    "number out of range: '1e999'" },
	{ "a Unicode minus", "[1. \xE2\x88\x92" "2.]", 1, 1, 5, "'\xE2\x88\x92"
	    "2.' has U+2212 MINUS SIGN where a number needs the ASCII '-': "
	    "replace it, e.g. with sed 's/\xE2\x88\x92/-/g'" },
	/* what surrounds the array */
	{ "truncated", "tensor([[1., 0.],\n        [0., 1.", 1, 2, 16,
	    "unexpected end of input (a ']' is missing)" },
	{ "unclosed call", "tensor([[1., 0.]], dtype=torch.float64", 1, 1,
	    39, "unexpected end of input (a ')' is missing)" },
	{ "no comma before keywords", "array([[1., 0.]] dtype=float32)", 1,
	    1, 18, "expected ',' or ')' after the array" },
	{ "two prints", "[[1. 0.]]\n[[0. 1.]]", 1, 2, 1,
	    "trailing text after the array: '[[0. 1.]]'" },
	/* the book's code with code around it that attn does not run */
	{ "a second statement", "x = torch.tensor([[1., 0.]]) # a\n"
	    "print(x)\n", 1, 2, 1,
	    "trailing text after the array: 'print(x)'" },
	{ "a call of something else", "x = foo(\n  [[1., 0.]])", 1, 1, 1,
	    "unknown code 'x = foo(': attn reads an array written as "
	    "torch.tensor(...) or np.array(...), or as NumPy and PyTorch "
	    "print it" },
	{ "an assignment of no call", "x = [[1., 0.]]", 0, 1, 1,
	    "expected '[' (an array as NumPy or PyTorch prints it)" },
	{ "a call without an array", "tensor(x)", 1, 1, 8,
	    "a 0-D array (one number): attn reads a row, a matrix or a "
	    "stack of them" },
	{ "a parenthesis inside", "array([(1., 2.)])", 1, 1, 8,
	    "unexpected parenthesis inside the array" },
	{ "not a print at all", "1 2\n", 0, 1, 1,
	    "expected '[' (an array as NumPy or PyTorch prints it)" },
};

START_TEST(bad_prints_are_reported_with_their_position)
{
	struct attn_array a;
	struct attn_error err;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		if (pass == 1 && !refused[_i].guessed)
			break;
		ck_assert_int_eq(read_text_as(refused[_i].text, pass == 0 ?
		    ATTN_FMT_REPR : ATTN_FMT_AUTO, 0, &a, &err),
		    ATTN_ERR_DATA);
		ck_assert_msg(strcmp(err.msg, refused[_i].msg) == 0,
		    "%s: '%s'", refused[_i].what, err.msg);
		ck_assert_msg(err.line == refused[_i].line &&
		    err.col == refused[_i].col, "%s: at %zu:%zu",
		    refused[_i].what, err.line, err.col);
		ck_assert_ptr_null(a.data);
	}
}
END_TEST

/* A NUL byte, invalid UTF-8 or UTF-16 is told before anything is
 * parsed. */
START_TEST(nul_and_invalid_utf8_are_told_first)
{
	struct attn_array a;
	struct attn_error err;

	ck_assert_int_eq(attn_read_array("-", "[1. \0 2.]", 9, ATTN_FMT_REPR, 0,
	    &a, &err), ATTN_ERR_DATA);
	ck_assert_str_eq(err.msg, "NUL byte in text input");
	ck_assert_uint_eq(err.col, 5);
	ck_assert_int_eq(read_text_as("[1. 2.\xFF]", ATTN_FMT_REPR, 0, &a,
	    &err), ATTN_ERR_DATA);
	ck_assert_str_eq(err.msg, "invalid UTF-8: byte 0xFF (text must be "
	    "UTF-8)");
	ck_assert_uint_eq(err.col, 7);
	ck_assert_int_eq(attn_read_array("-", "\xFF\xFE[\0", 4, ATTN_FMT_REPR,
	    0, &a, &err), ATTN_ERR_DATA);
	ck_assert_str_eq(err.msg, "UTF-16 text (it starts with a UTF-16 byte "
	    "order mark): text must be UTF-8; convert it first, e.g. with "
	    "iconv -f UTF-16 -t UTF-8");
}
END_TEST

/*
 * The content guess: a print by array( or tensor(, or by a '[' whose
 * first element or separator only a print writes; JSON otherwise, also
 * where both read the same ([[5]]).  A .txt may hold a print; a .json
 * is JSON whatever it holds.
 */
static const struct {
	const char *name, *text;
	enum attn_format want;
} guesses[] = {
	{ "-", "[[1. 0.]\n [0. 1.]]", ATTN_FMT_REPR },
	{ "-", "[[1 2]\n [3 4]]", ATTN_FMT_REPR },
	{ "-", "  array([[1., 0.]])", ATTN_FMT_REPR },
	{ "-", "\xEF\xBB\xBFtensor([1.])", ATTN_FMT_REPR },
	{ "p.txt", "[[1. 0.]\n [0. 1.]]\n", ATTN_FMT_REPR },
	{ "p", "[[1.e+00 2.]]", ATTN_FMT_REPR },
	{ "-", "[[ nan  inf]]", ATTN_FMT_REPR },
	{ "-", "[[ True False]]", ATTN_FMT_REPR },
	{ "-", "[[0. 0. ... 0.]]", ATTN_FMT_REPR },
	{ "-", "[[1]\n [2]]", ATTN_FMT_REPR },
	{ "-", "[[1, 0], [0, 1]]", ATTN_FMT_JSON },
	{ "-", "[[5]]", ATTN_FMT_JSON },
	{ "-", "[[1.5, 2]]", ATTN_FMT_JSON },
	{ "-", "[[1],\n [2]]", ATTN_FMT_JSON },
	{ "-", "[\"a b\"]", ATTN_FMT_JSON },
	{ "-", "[[true, false]]", ATTN_FMT_JSON },
	{ "-", "[", ATTN_FMT_JSON },
	{ "p.txt", "[[1, 2]]", ATTN_FMT_JSON },
	{ "p.json", "[[1. 0.]]", ATTN_FMT_JSON },
	{ "p.csv", "array([[1.]])", ATTN_FMT_CSV },
	{ "p.txt", "{\"Q\": 1}", ATTN_FMT_TEXT },
	{ "-", "arrays(1)", ATTN_FMT_TEXT },
	{ "-", "inputs = torch.tensor(\n  [[0.43, 0.15]])", ATTN_FMT_REPR },
	{ "p.txt", "x=np.array([[1.]])", ATTN_FMT_REPR },
	{ "-", "x = foo(1)", ATTN_FMT_REPR },
	{ "-", "x = 1 2", ATTN_FMT_TEXT },
	{ "-", "# section 3.3\n\ninputs = torch.tensor([[1.]])",
	    ATTN_FMT_REPR },
	{ "-", "# a comment\n1 2\n", ATTN_FMT_TEXT },
	{ "-", "import torch\nx = torch.tensor([[1.]])", ATTN_FMT_REPR },
	{ "-", "important 1\n", ATTN_FMT_TEXT },
};

START_TEST(content_tells_prints_from_json)
{
	size_t len = strlen(guesses[_i].text);
	char *buf = malloc(len != 0 ? len : 1);

	ck_assert_ptr_nonnull(buf);
	memcpy(buf, guesses[_i].text, len);
	ck_assert_msg(attn_format_guess(guesses[_i].name, buf, len) ==
	    guesses[_i].want, "%s: %s", guesses[_i].name, guesses[_i].text);
	free(buf);
}
END_TEST

Suite *
read_repr_suite(void)
{
	Suite *s = suite_create("read_repr");
	TCase *read = tcase_create("read");
	TCase *guess = tcase_create("guess");

	tcase_add_loop_test(read, printed_arrays_read_as_the_matrix_they_show,
	    0, NCASES(prints));
	tcase_add_test(read, wrapped_rows_keep_every_value);
	tcase_add_test(read, printed_nonfinite_values_and_booleans);
	tcase_add_loop_test(read, bad_prints_are_reported_with_their_position,
	    0, NCASES(refused));
	tcase_add_test(read, nul_and_invalid_utf8_are_told_first);
	tcase_add_loop_test(read, book_code_reads_with_its_comments_as_row_labels,
	    0, NCASES(book_code));
	tcase_add_test(read, comments_that_name_some_rows_leave_them_unlabelled);
	suite_add_tcase(s, read);
	tcase_add_loop_test(guess, content_tells_prints_from_json, 0,
	    NCASES(guesses));
	suite_add_tcase(s, guess);
	return s;
}
