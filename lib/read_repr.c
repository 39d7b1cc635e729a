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
	    c == ')';
}

static size_t
skip_space(const char *buf, size_t len, size_t i)
{
	while (i < len && is_space(buf[i]))
		i++;
	return i;
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
		if (is_space(b[i])) {
			sep = 1;
			i++;
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
 * device='cuda:0'), skipped to the closing parenthesis, brackets and
 * quotes respected.  *pos ends just past it.
 */
static enum attn_status
call_end(struct repr_reader *r, size_t *pos)
{
	const char *b = r->buf;
	size_t i = skip_space(b, r->len, *pos), depth = 0;
	char quote = 0;

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

size_t
attn_repr_call(const char *buf, size_t len, size_t i)
{
	static const char *const calls[] = { "array(", "tensor(" };
	size_t c, n;

	for (c = 0; c < sizeof calls / sizeof calls[0]; c++) {
		n = strlen(calls[c]);
		if (len - i >= n && memcmp(buf + i, calls[c], n) == 0)
			return n;
	}
	return 0;
}

enum attn_status
attn_read_repr(const char *name, const char *buf, size_t len,
    unsigned flags, struct attn_array *out, struct attn_error *err)
{
	struct repr_reader r = {
		.name = name, .buf = buf, .len = len, .flags = flags,
		.err = err
	};
	enum attn_status st;
	size_t i, call, d;

	memset(out, 0, sizeof *out);

	if ((st = attn_encoding_fault(err, name, buf, len, "text")) !=
	    ATTN_OK)
		return st;
	i = skip_space(buf, len, attn_bom_len(buf, len));
	call = attn_repr_call(buf, len, i);
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
	if ((i = skip_space(buf, len, i)) < len) {
		st = fail_at(&r, i, "trailing text after the array");
		goto fail;
	}

	/* Give back the slack of the doubling: exactly its numbers. */
	out->data = attn_mem_realloc(r.vals, r.cap * sizeof *r.vals,
	    r.nvals * sizeof *r.vals);
	out->ndim = r.ndim;
	for (d = 0; d < r.ndim; d++)
		out->shape[d] = r.shape[d];
	return ATTN_OK;
fail:
	attn_mem_free(r.vals, r.cap * sizeof *r.vals);
	return st;
}
