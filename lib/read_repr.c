/*
 * read_repr.c - arrays as NumPy and PyTorch print them, pasted from a
 * terminal or a notebook: str(a) ("[[1. 0.]\n [0. 1.]]"), repr(a)
 * ("array([[1., 0.],\n       [0., 1.]])") and a tensor
 * ("tensor([[1., 0.],\n        [0., 1.]], dtype=torch.float64)"), 1-D to
 * 4-D, blank lines between the blocks of a 3-D one included.
 *
 * Brackets nest the elements; blanks (str) or a comma and blanks (repr)
 * separate them; line breaks are blanks, so NumPy's wrapped long rows
 * read as they are.  One pass, no recursion: a count of elements for each
 * open bracket, and a shape that the first sub-array at each depth fixes
 * and every other must match, as the JSON reader checks it (and with its
 * words).  Numbers are read as the text reader reads them, plus the forms
 * only a print has: 1. and 1.e+00 (no digit after the point).  A print
 * NumPy or PyTorch summarised ("...": over 1000 elements by default) is
 * refused, since the numbers it leaves out are gone; the message says how
 * to print the array whole.
 *
 * The code that makes an array reads too, pasted as a book prints it:
 * "inputs = torch.tensor(" or "np.array(" around the list, with Python's
 * comments.  A comment after a row, on the line where that row (and no
 * other) closed, names the row by its first word, as a CSV's first
 * column does (Raschka's "[0.55, 0.87, 0.66], # journey  (x^2)"); the
 * names are the row labels when every row of a 1-D or 2-D array has one.
 * Import statements before it are skipped; any other code (another
 * call, a second statement) is an error that quotes it, since attn runs
 * no Python.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"


/* A number as printed: most fit on the stack with their point removed. */
#define NUMBER_MAX 64

struct repr_reader {
	const char *name;
	const char *buf;
	size_t len;
	unsigned flags;
	struct attn_error *err;

	size_t depth;			/* brackets open */
	size_t ndim;			/* 0 until the first number */
	size_t count[ATTN_MAX_DIMS];	/* elements so far in each open list */
	size_t shape[ATTN_MAX_DIMS];	/* 0 until the first list closes */
	double *vals;
	size_t nvals, cap;

	size_t rows;		/* innermost lists closed so far */
	size_t rows_nl;		/* of them, closed before the last line break */
	struct row_name {	/* a comment naming a row: its first word */
		size_t row, off, n;
	} *names;
	size_t nnames, capnames;
};

static enum attn_status
fail_at(struct repr_reader *r, size_t off, const char *msg)
{
	return attn_error_at(r->err, ATTN_ERR_DATA, r->name, r->buf, r->len,
	    off, "%s", msg);
}

static int
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Whether c ends a token: white space, a separator or a bracket. */
static int
token_end(char c)
{
	return is_space(c) || c == ',' || c == '[' || c == ']' || c == '(' ||
	    c == ')' || c == '#';
}

static size_t
skip_space(const char *buf, size_t len, size_t i)
{
	while (i < len && is_space(buf[i]))
		i++;
	return i;
}

/* The end of the line at buf[i]: its '\n' or the end of buf. */
static size_t
line_end(const char *buf, size_t len, size_t i)
{
	const char *nl = memchr(buf + i, '\n', len - i);

	return nl != NULL ? (size_t)(nl - buf) : len;
}

/* Whether buf[i] starts the word w followed by a blank. */
static int
word_at(const char *buf, size_t len, size_t i, const char *w)
{
	size_t n = strlen(w);

	return len - i > n && memcmp(buf + i, w, n) == 0 &&
	    (buf[i + n] == ' ' || buf[i + n] == '\t');
}

size_t
attn_repr_start(const char *buf, size_t len, size_t i)
{
	for (i = skip_space(buf, len, i); i < len && (buf[i] == '#' ||
	    word_at(buf, len, i, "import") || word_at(buf, len, i, "from"));
	    i = skip_space(buf, len, i))
		i = line_end(buf, len, i);
	return i;
}

/*
 * The comment at buf[i] == '#' names the last row closed when that row
 * is the one row closed on its line: its first word is kept as the row's
 * name.  *pos ends at the end of the line.
 */
static enum attn_status
comment(struct repr_reader *r, size_t *pos)
{
	size_t i = *pos + 1, end = line_end(r->buf, r->len, *pos), w;
	struct row_name *nn;

	*pos = end;
	if (r->rows != r->rows_nl + 1)
		return ATTN_OK;
	while (i < end && is_space(r->buf[i]))
		i++;
	for (w = i; w < end && !is_space(r->buf[w]); w++)
		;
	if (w == i)
		return ATTN_OK;
	if (r->nnames == r->capnames) {
		if ((nn = attn_grow_array(r->names, &r->capnames,
		    r->nnames + 1, sizeof *nn)) == NULL)
			return attn_error_input_nomem(r->err, r->name,
			    "reading a printed array");
		r->names = nn;
	}
	r->names[r->nnames].row = r->rows - 1;
	r->names[r->nnames].off = i;
	r->names[r->nnames++].n = w - i;
	return ATTN_OK;
}

/*
 * White space and comments from *pos on, where the rows closed are
 * counted line by line; *pos ends at what follows them.
 */
static enum attn_status
blank(struct repr_reader *r, size_t *pos)
{
	enum attn_status st;

	for (; *pos < r->len; ++*pos) {
		if (r->buf[*pos] == '#' && (st = comment(r, pos)) != ATTN_OK)
			return st;
		if (*pos < r->len && r->buf[*pos] == '\n')
			r->rows_nl = r->rows;
		else if (*pos < r->len && !is_space(r->buf[*pos]))
			break;
	}
	return ATTN_OK;
}

/*
 * The offset of the point in s[0..n) when it is one that only a print
 * writes: after a digit, and before the end or the exponent (1., 1.e+00);
 * n when there is none.
 */
static size_t
bare_point(const char *s, size_t n)
{
	const char *p = memchr(s, '.', n);
	size_t k;

	if (p == NULL)
		return n;
	k = (size_t)(p - s);
	if (k == 0 || s[k - 1] < '0' || s[k - 1] > '9')
		return n;
	if (k + 1 < n && s[k + 1] != 'e' && s[k + 1] != 'E')
		return n;
	return k;
}

/*
 * Parse the token s[0..n) as attn_parse_number does, after taking out a
 * point that only a print writes; with ATTN_READ_BOOL, True and False
 * (any case) are 1 and 0.
 */
static int
repr_number(const struct repr_reader *r, const char *s, size_t n,
    double *x)
{
	char small[NUMBER_MAX], *copy;
	size_t k = bare_point(s, n);
	int rc;

	if (r->flags & ATTN_READ_BOOL) {
		if (attn_word_is(s, n, "true") || attn_word_is(s, n, "false")) {
			*x = attn_word_is(s, n, "true") ? 1 : 0;
			return 0;
		}
	}
	if (k == n)
		return attn_parse_number(s, n, x);
	copy = n <= sizeof small ? small : attn_mem_alloc(n);
	if (copy == NULL)
		return -1;
	memcpy(copy, s, k);
	memcpy(copy + k, s + k + 1, n - k - 1);
	rc = attn_parse_number(copy, n - 1, x);
	if (copy != small)
		attn_mem_free(copy, n);
	return rc;
}

/* Name the sub-array at depth d, whose count went wrong, by the indices
 * of the lists that hold it, and report it at off. */
static enum attn_status
fail_ragged(struct repr_reader *r, size_t off, size_t d, size_t count)
{
	size_t idx[ATTN_MAX_DIMS], e;
	char msg[ATTN_MSG_MAX];

	for (e = 0; e < d; e++)
		idx[e] = r->count[e] - 1;
	attn_ragged_msg(msg, sizeof msg, r->ndim, d, idx, count, r->shape[d]);
	return fail_at(r, off, msg);
}

/*
 * A new element of the list open at the innermost depth starts at off:
 * count it, and check it is not one too many for the shape, nor of the
 * wrong kind (a list where numbers are, or a number where lists are).
 */
static enum attn_status
element(struct repr_reader *r, size_t off, int list)
{
	size_t d = r->depth - 1;

	if (r->ndim != 0 && (list ? r->depth >= r->ndim :
	    r->depth != r->ndim))
		return fail_at(r, off, list ? "expected a number, found an "
		    "array" : "expected an array, found a number");
	if (r->shape[d] != 0 && r->count[d] == r->shape[d])
		return fail_ragged(r, off, d, r->count[d] + 1);
	r->count[d]++;
	return ATTN_OK;
}

/* The number token buf[i, j): read, checked for its role, kept. */
static enum attn_status
number(struct repr_reader *r, size_t i, size_t j)
{
	char msg[ATTN_MSG_MAX], p[ATTN_PREVIEW_MAX + 4];
	const char *s = r->buf + i;
	size_t n = j - i, at;
	double x, *nv;
	enum attn_status st;
	int rc;

	if (n == 3 && memcmp(s, "...", 3) == 0)
		return fail_at(r, i, "summarised print: '...' stands for "
		    "elements left out; print the array whole with numpy."
		    "set_printoptions(threshold=sys.maxsize) (PyTorch: "
		    "torch.set_printoptions(profile='full'))");
	if (r->depth == 0)
		return fail_at(r, i, "a 0-D array (one number): attn reads a "
		    "row, a matrix or a stack of them");
	if (r->ndim == 0)
		r->ndim = r->depth;
	if ((st = element(r, i, 0)) != ATTN_OK)
		return st;
	rc = repr_number(r, s, n, &x);
	if (rc != 0) {
		if (rc < 0 && (at = attn_number_fault(s, n, msg,
		    sizeof msg)) < n)
			return fail_at(r, i + at, msg);
		attn_text_preview(p, ATTN_PREVIEW_MAX, s, n);
		snprintf(msg, sizeof msg, "%s: '%s'", rc > 0 ?
		    "number out of range" : "not a number", p);
		return fail_at(r, i, msg);
	}
	if (attn_value_fault(r->flags, x, s, n, msg, sizeof msg) != 0)
		return fail_at(r, i, msg);
	if (r->nvals == r->cap) {
		if ((nv = attn_grow_array(r->vals, &r->cap, r->nvals + 1,
		    sizeof *nv)) == NULL)
			return attn_error_input_nomem(r->err, r->name,
			    "reading a printed array");
		r->vals = nv;
	}
	r->vals[r->nvals++] = x;
	return ATTN_OK;
}

/* The list open at the innermost depth closes at off. */
static enum attn_status
close_list(struct repr_reader *r, size_t off)
{
	size_t d = r->depth - 1, c = r->count[d];

	if (c == 0)
		return fail_at(r, off, "empty matrix");
	if (r->shape[d] == 0)
		r->shape[d] = c;
	else if (c != r->shape[d])
		return fail_ragged(r, off, d, c);
	if (r->depth == r->ndim)
		r->rows++;
	r->depth--;
	return ATTN_OK;
}

/*
 * The nested list that starts at buf[*pos] == '[', up to its closing
 * bracket; *pos ends just past it.  Between two elements there must be
 * white space or one comma; a comma may not open or close a list.
 */
static enum attn_status
nested_list(struct repr_reader *r, size_t *pos)
{
	const char *b = r->buf;
	size_t i = *pos, j, comma_at = 0;
	int sep = 1, comma = 0;	/* sep: the next element may start */
	enum attn_status st;

	for (;;) {
		if (i >= r->len)
			return fail_at(r, r->len, "unexpected end of input "
			    "(a ']' is missing)");
		if (is_space(b[i]) || b[i] == '#') {
			if ((st = blank(r, &i)) != ATTN_OK)
				return st;
			sep = 1;
			continue;
		}
		if (b[i] == ',') {
			if (comma || r->count[r->depth - 1] == 0)
				return fail_at(r, i, "unexpected ','");
			comma = sep = 1;
			comma_at = i++;
			continue;
		}
		if (b[i] == ']') {
			if (comma)
				return fail_at(r, comma_at, "unexpected ',' "
				    "before ']'");
			if ((st = close_list(r, i)) != ATTN_OK)
				return st;
			i++;
			if (r->depth == 0)
				break;
			sep = comma = 0;
			continue;
		}
		if (!sep)
			return fail_at(r, i, "expected ',' or white space "
			    "between elements");
		if (b[i] == '[') {
			if (r->depth > 0 && (st = element(r, i, 1)) != ATTN_OK)
				return st;
			if (r->depth == ATTN_MAX_DIMS)
				return fail_at(r, i, "too many dimensions: at "
				    "most 4 are supported");
			r->count[r->depth++] = 0;
			i++;
			comma = 0;
			continue;
		}
		for (j = i; j < r->len && !token_end(b[j]); j++)
			;
		if (j == i)
			return fail_at(r, i, b[i] == '(' || b[i] == ')' ?
			    "unexpected parenthesis inside the array" :
			    "unexpected character");
		if ((st = number(r, i, j)) != ATTN_OK)
			return st;
		i = j;
		sep = comma = 0;
	}
	*pos = i;
	return ATTN_OK;
}

/*
 * After the array of array(...) or tensor(...): keyword arguments
 * (dtype=float32, requires_grad=True, grad_fn=<MulBackward0>,
 * device='cuda:0'), skipped to the closing parenthesis, brackets, quotes
 * and comments respected.  *pos ends just past it.
 */
static enum attn_status
call_end(struct repr_reader *r, size_t *pos)
{
	const char *b = r->buf;
	size_t i = *pos, depth = 0;
	char quote = 0;
	enum attn_status st;

	if ((st = blank(r, &i)) != ATTN_OK)
		return st;
	if (i < r->len && b[i] == ')') {
		*pos = i + 1;
		return ATTN_OK;
	}
	if (i >= r->len || b[i] != ',')
		return fail_at(r, i, "expected ',' or ')' after the array");
	for (i++; i < r->len; i++) {
		if (quote != 0) {
			quote = b[i] == quote ? 0 : quote;
		} else if (b[i] == '\'' || b[i] == '"') {
			quote = b[i];
		} else if (b[i] == '#') {
			i = line_end(b, r->len, i) - 1;
		} else if (b[i] == '(' || b[i] == '[') {
			depth++;
		} else if ((b[i] == ')' || b[i] == ']') && depth > 0) {
			depth--;
		} else if (b[i] == ')') {
			*pos = i + 1;
			return ATTN_OK;
		}
	}
	return fail_at(r, r->len, "unexpected end of input (a ')' is "
	    "missing)");
}

/* The length of the Python name at buf[i] (0 when none starts there),
 * dotted (np.array) when dots is set. */
static size_t
py_name(const char *buf, size_t len, size_t i, int dots)
{
	size_t j = i;

	while (j < len && (buf[j] == '_' || (buf[j] >= 'a' && buf[j] <= 'z') ||
	    (buf[j] >= 'A' && buf[j] <= 'Z') || (j > i && ((buf[j] >= '0' &&
	    buf[j] <= '9') || (dots && buf[j] == '.' && buf[j - 1] != '.')))))
		j++;
	return j > i && buf[j - 1] == '.' ? 0 : j - i;
}

static size_t
skip_blanks(const char *buf, size_t len, size_t i)
{
	while (i < len && (buf[i] == ' ' || buf[i] == '\t'))
		i++;
	return i;
}

/*
 * The rows named by comments become out's row labels when every row of a
 * 1-D or 2-D array has a name; when some have one and others not, the
 * rows stay unlabelled and out's notice says so, since a word missing
 * there would shift every name after it.
 */
static enum attn_status
row_labels(struct repr_reader *r, struct attn_array *out)
{
	size_t rows = r->ndim == 1 ? 1 : r->ndim == 2 ? r->shape[0] : 0, k;
	const struct row_name *nm;
	enum attn_status st;

	if (r->nnames == 0 || rows == 0)
		return ATTN_OK;
	if (r->nnames < rows) {
		attn_error_at(&out->notice, ATTN_OK, r->name, r->buf, r->len,
		    r->names[0].off, "comments name %zu of the %zu rows, so "
		    "the rows are not labelled: give each row a comment "
		    "after it, on its line", r->nnames, rows);
		return ATTN_OK;
	}
	if ((out->row_labels.names = attn_mem_zalloc(rows *
	    sizeof *out->row_labels.names)) == NULL)
		return attn_error_input_nomem(r->err, r->name,
		    "reading a printed array");
	out->row_labels.count = rows;
	for (k = 0; k < rows; k++) {
		nm = &r->names[k];
		if ((st = attn_label_control(r->err, r->name, r->buf, r->len,
		    nm->off, r->buf + nm->off, nm->n)) != ATTN_OK)
			return st;
		if ((out->row_labels.names[k] = attn_str_ndup(r->buf + nm->off,
		    nm->n)) == NULL)
			return attn_error_input_nomem(r->err, r->name,
			    "reading a printed array");
	}
	return ATTN_OK;
}

size_t
attn_repr_call(const char *buf, size_t len, size_t i, int *known)
{
	static const char *const calls[] = {
		"array", "tensor", "np.array", "numpy.array", "torch.tensor"
	};
	size_t c, n, j = i, k;
	int assigned = 0;

	/* NAME = */
	if ((n = py_name(buf, len, j, 0)) != 0 &&
	    (k = skip_blanks(buf, len, j + n)) < len && buf[k] == '=' &&
	    (k + 1 == len || buf[k + 1] != '=')) {
		j = skip_blanks(buf, len, k + 1);
		assigned = 1;
	}
	/* the call: CALLEE( */
	n = py_name(buf, len, j, 1);
	k = skip_blanks(buf, len, j + n);
	if (n == 0 || k == len || buf[k] != '(')
		return 0;
	*known = 0;
	for (c = 0; c < sizeof calls / sizeof calls[0]; c++)
		if (strlen(calls[c]) == n && memcmp(buf + j, calls[c], n) == 0)
			*known = 1;
	return *known || assigned ? k + 1 - i : 0;
}

enum attn_status
attn_read_repr(const char *name, const char *buf, size_t len,
    unsigned flags, struct attn_array *out, struct attn_error *err)
{
	struct repr_reader r = {
		.name = name, .buf = buf, .len = len, .flags = flags,
		.err = err
	};
	char p[ATTN_PREVIEW_MAX + 4];
	enum attn_status st;
	size_t i, call, d;
	int known;

	memset(out, 0, sizeof *out);

	if ((st = attn_encoding_fault(err, name, buf, len, "text")) !=
	    ATTN_OK)
		return st;
	i = attn_repr_start(buf, len, attn_bom_len(buf, len));
	if ((call = attn_repr_call(buf, len, i, &known)) != 0 && !known) {
		attn_text_preview(p, ATTN_PREVIEW_MAX, buf + i, call);
		st = attn_error_at(err, ATTN_ERR_DATA, name, buf, len, i,
		    "unknown code '%s': attn reads an array written as "
		    "torch.tensor(...) or np.array(...), or as NumPy and "
		    "PyTorch print it", p);
		goto fail;
	}
	i = skip_space(buf, len, i + call);
	if (i >= len || buf[i] != '[') {
		/* tensor(5.): a scalar; anything else is no printed array. */
		st = call != 0 && i < len && !token_end(buf[i]) ?
		    number(&r, i, i + 1) : fail_at(&r, i, "expected '[' "
		    "(an array as NumPy or PyTorch prints it)");
		goto fail;
	}
	if ((st = nested_list(&r, &i)) != ATTN_OK ||
	    (call != 0 && (st = call_end(&r, &i)) != ATTN_OK))
		goto fail;
	if ((st = blank(&r, &i)) != ATTN_OK)
		goto fail;
	if (i < len) {
		attn_text_preview(p, ATTN_PREVIEW_MAX, buf + i,
		    line_end(buf, len, i) - i);
		st = attn_error_at(err, ATTN_ERR_DATA, name, buf, len, i,
		    "trailing text after the array: '%s'", p);
		goto fail;
	}
	if ((st = row_labels(&r, out)) != ATTN_OK)
		goto fail;

	/* Give back the slack of the doubling: exactly its numbers. */
	out->data = attn_mem_realloc(r.vals, r.cap * sizeof *r.vals,
	    r.nvals * sizeof *r.vals);
	out->ndim = r.ndim;
	for (d = 0; d < r.ndim; d++)
		out->shape[d] = r.shape[d];
	attn_mem_free(r.names, r.capnames * sizeof *r.names);
	return ATTN_OK;
fail:
	attn_labels_free(&out->row_labels);
	attn_mem_free(r.vals, r.cap * sizeof *r.vals);
	attn_mem_free(r.names, r.capnames * sizeof *r.names);
	return st;
}
