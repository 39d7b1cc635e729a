/*
 * json_lex.c - JSON text as RFC 8259 writes it: the one tokenizer that
 * every JSON reader walks, and the one pass that checks a whole text.
 *
 * A token is a byte range of the text, so positions are offsets
 * throughout.  attn_json_scan walks the tokens of a text once, with what
 * the grammar expects next, and tells the first fault in document order,
 * worded for what it is (a trailing comma, NaN, a malformed number, a
 * missing ',', a key without quotes, a control character, a bad escape,
 * nesting past cJSON's limit).  On the way it reads the plain arrays
 * (below) itself.  What is left is valid JSON, which cJSON builds a tree
 * of (read_json.c); the tree's own errors are placed by walking the same
 * tokens along the tree's path (attn_json_locate), and its numbers are
 * read again from their tokens (attn_json_next_scalar), so that no
 * second walker of the grammar exists.
 *
 * Plain arrays.  cJSON makes a node of every number and converts it
 * with strtod, which is most of the time of reading JSON.  So where the
 * scan meets an array that json_array would read (the whole text, the
 * value of a member of the top object, or of a member of the top
 * object's "proj"), it tries to read it here: 1 to 4 dimensions,
 * rectangular, nothing empty, only numbers of at most the 63 characters
 * some builds of cJSON read and within the doubles, and JSON's white
 * space.  Such an array is
 * read to the numbers json_array would give, each number's text once, by
 * attn_chars_to_double; anything else, however small the doubt, is left
 * to the tree and the checks after it, whose messages say what is wrong.
 * Read this way, a large array of numbers takes a tenth of the time it
 * takes through the tree (bench/README.md).
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* ---------------------------------------------------------------- tokens */

/* JSON's white space: space, tab, LF, CR. */
static int
json_space(char c)
{
	return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* The offset past JSON's white space from i. */
static size_t
skip_space(const char *b, size_t len, size_t i)
{
	while (i < len && json_space(b[i]))
		i++;
	return i;
}

static int
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Whether c ends a bare word: a byte up to the space (which cJSON takes
 * for white space), a structural character or a string's quote. */
static int
word_end(char c)
{
	switch (c) {
	case ',': case ':': case '[': case ']': case '{': case '}': case '"':
		return 1;
	default:
		return (unsigned char)c <= 0x20;
	}
}

/* buf[i] is '"': the offset of the closing quote, backslash escapes
 * skipped, or len when the string does not end. */
static size_t
string_close(const char *b, size_t len, size_t i)
{
	for (i++; i < len && b[i] != '"'; i++)
		if (b[i] == '\\')
			i++;
	return i < len ? i : len;
}

void
attn_json_token(const char *b, size_t len, size_t i,
    struct attn_json_token *t)
{
	/* Every byte up to the space is passed over here, as cJSON does;
	 * lex() has refused the ones JSON does not take by then. */
	while (i < len && (unsigned char)b[i] <= 0x20)
		i++;
	t->start = t->end = i;
	t->kind = 0;
	if (i >= len)
		return;
	switch (b[i]) {
	case '[': case ']': case '{': case '}': case ',': case ':':
		t->kind = b[i];
		t->end = i + 1;
		return;
	case '"':
		t->kind = '"';
		t->end = string_close(b, len, i);
		t->end += t->end < len;
		return;
	default:
		t->kind = 'w';
		while (t->end < len && !word_end(b[t->end]))
			t->end++;
	}
}

/*
 * The end of the number at b[i] as RFC 8259 writes it,
 *
 *	-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
 *
 * or i when none starts there; then *why says what breaks the grammar
 * ("" when nothing worth a word of its own).
 */
static size_t
number_end(const char *b, size_t len, size_t i, const char **why)
{
	size_t k = i, d;

	*why = "";
	if (k < len && b[k] == '+') {
		*why = ": JSON numbers take no '+' sign";
		return i;
	}
	if (k < len && b[k] == '-')
		k++;
	if (k < len && b[k] == '.') {
		*why = ": JSON needs a digit before the decimal point (0.5)";
		return i;
	}
	if (k >= len || !is_digit(b[k]))
		return i;
	if (b[k++] == '0') {
		if (k < len && is_digit(b[k])) {
			*why = ": JSON numbers have no leading zeros";
			return i;
		}
	} else {
		while (k < len && is_digit(b[k]))
			k++;
	}
	if (k < len && b[k] == '.') {
		for (d = ++k; k < len && is_digit(b[k]); k++)
			;
		if (k == d) {
			*why = ": JSON needs a digit after the decimal point "
			    "(1.0)";
			return i;
		}
	}
	if (k < len && (b[k] == 'e' || b[k] == 'E')) {
		k++;
		if (k < len && (b[k] == '+' || b[k] == '-'))
			k++;
		for (d = k; k < len && is_digit(b[k]); k++)
			;
		if (k == d)
			return i;
	}
	return k;
}

/* Whether the word b[i, j) is made of the characters of numbers only,
 * which makes it a number that is right or malformed (else it is some
 * other word: true, NaN, 0x10). */
static int
number_word(const char *b, size_t i, size_t j)
{
	for (; i < j; i++)
		if (!is_digit(b[i]) && b[i] != '+' && b[i] != '-' &&
		    b[i] != '.' && b[i] != 'e' && b[i] != 'E')
			return 0;
	return 1;
}

/* ---------------------------------------------------------------- faults */

/* The text being scanned, and where its faults go. */
struct scan {
	const char *name, *b;
	size_t len;
	struct attn_error *err;
	struct attn_json_plains *plain;
};

/* A data error at offset at: fmt with its one %s, arg. */
static enum attn_status
fault(const struct scan *sc, size_t at, const char *fmt, const char *arg)
{
	return attn_error_at(sc->err, ATTN_ERR_DATA, sc->name, sc->b, sc->len,
	    at, fmt, arg);
}

/* A fault that quotes the token t. */
static enum attn_status
fault_token(const struct scan *sc, const struct attn_json_token *t,
    const char *fmt)
{
	char p[ATTN_PREVIEW_MAX + 4];

	attn_text_preview(p, ATTN_PREVIEW_MAX, sc->b + t->start,
	    t->end - t->start);
	return fault(sc, t->start, fmt, p);
}

static enum attn_status
truncated(const struct scan *sc)
{
	return fault(sc, sc->len, "%s",
	    "unexpected end of input (truncated JSON?)");
}

/* A byte below the space that JSON does not take for white space. */
static enum attn_status
control_fault(const struct scan *sc, size_t i)
{
	char c[8];

	snprintf(c, sizeof c, "0x%02X", (unsigned)(unsigned char)sc->b[i]);
	return fault(sc, i, "invalid JSON: control character %s outside a "
	    "string (JSON's white space is space, tab, LF and CR)", c);
}

/* A number word t that breaks the grammar (number_end says why). */
static enum attn_status
number_fault(const struct scan *sc, const struct attn_json_token *t)
{
	char msg[ATTN_MSG_MAX], p[ATTN_PREVIEW_MAX + 4];
	const char *why;
	size_t e = number_end(sc->b, t->end, t->start, &why);

	attn_text_preview(p, ATTN_PREVIEW_MAX, sc->b + t->start,
	    t->end - t->start);
	snprintf(msg, sizeof msg, "invalid JSON: malformed number '%s'%s", p,
	    e == t->start ? why : "");
	return fault(sc, t->start, "%s", msg);
}

/* The value of the four hex digits at b[i..i + 4), all before close,
 * or -1 when they are not four hex digits. */
static long
hex4(const char *b, size_t i, size_t close)
{
	long v = 0;
	size_t k;

	if (close - i < 4)
		return -1;
	for (k = i; k < i + 4; k++) {
		if (b[k] >= '0' && b[k] <= '9')
			v = v * 16 + (b[k] - '0');
		else if (b[k] >= 'a' && b[k] <= 'f')
			v = v * 16 + (b[k] - 'a' + 10);
		else if (b[k] >= 'A' && b[k] <= 'F')
			v = v * 16 + (b[k] - 'A' + 10);
		else
			return -1;
	}
	return v;
}

/*
 * Whether the escape at b[i] == '\\', in a string closing at close, is
 * one JSON has: one of \" \\ \/ \b \f \n \r \t, or \u and four hex digits
 * that are not half of a UTF-16 surrogate pair without its other half
 * (cJSON refuses those).  *next is the offset just past it.
 */
static int
escape_ok(const char *b, size_t i, size_t close, size_t *next)
{
	long c, lo;

	*next = i + 2;
	if (i + 1 >= close || b[i + 1] == '\0' ||
	    strchr("\"\\/bfnrtu", b[i + 1]) == NULL)
		return 0;
	if (b[i + 1] != 'u')
		return 1;
	if ((c = hex4(b, i + 2, close)) < 0 || (c >= 0xDC00 && c <= 0xDFFF))
		return 0;
	*next = i + 6;
	if (c < 0xD800 || c > 0xDBFF)
		return 1;
	if (close - *next < 6 || b[*next] != '\\' || b[*next + 1] != 'u' ||
	    (lo = hex4(b, *next + 2, close)) < 0xDC00 || lo > 0xDFFF)
		return 0;
	*next += 6;
	return 1;
}

/*
 * What a string t may not hold: its end (a string that does not close
 * is a truncated text), raw control characters (a newline in a label
 * would break the output), escapes JSON does not have, and \u0000, which
 * would cut a label short.
 */
static enum attn_status
string_fault(const struct scan *sc, const struct attn_json_token *t)
{
	const char *b = sc->b;
	size_t close = t->end - 1, i, next;

	if (string_close(b, sc->len, t->start) == sc->len)
		return truncated(sc);
	for (i = t->start + 1; i < close; i = next) {
		next = i + 1;
		if ((unsigned char)b[i] < 0x20) {
			char c[8];

			snprintf(c, sizeof c, "0x%02X",
			    (unsigned)(unsigned char)b[i]);
			return fault(sc, i, "invalid JSON: control character %s "
			    "in a string (JSON needs it escaped)", c);
		}
		if (b[i] != '\\')
			continue;
		if (!escape_ok(b, i, close, &next))
			return fault(sc, i, "%s", "invalid escape in JSON string");
		if (b[i + 1] == 'u' && hex4(b, i + 2, close) == 0)
			return fault(sc, i, "%s",
			    "\\u0000 (a NUL character) in a JSON string");
	}
	return ATTN_OK;
}

/* A bad word t where a value belongs: a spelling of NaN or Infinity, a
 * malformed number, a single-quoted string, or another word. */
static enum attn_status
word_fault(const struct scan *sc, const struct attn_json_token *t)
{
	const char *w = sc->b + t->start;
	size_t n = t->end - t->start, k;
	char msg[ATTN_MSG_MAX];

	if ((k = attn_number_fault(w, n, msg, sizeof msg)) < n)
		return fault(sc, t->start + k, "invalid JSON: %s", msg);
	k = n > 0 && (w[0] == '+' || w[0] == '-');
	if (attn_word_is(w + k, n - k, "nan") ||
	    attn_word_is(w + k, n - k, "inf") ||
	    attn_word_is(w + k, n - k, "infinity"))
		return fault_token(sc, t, "invalid JSON: '%s' is not a JSON "
		    "value (JSON has no NaN or Infinity; attn writes them as "
		    "the strings \"nan\", \"inf\" and \"-inf\")");
	if (strchr("0123456789+-.", w[0]) != NULL)
		return fault_token(sc, t,
		    "invalid JSON: malformed number '%s'");
	if (w[0] == '\'')
		return fault_token(sc, t,
		    "invalid JSON: strings take double quotes, not '%s'");
	return fault_token(sc, t, "invalid JSON: unknown word '%s' (JSON "
	    "has true, false and null)");
}

/*
 * The token at or after i, checked: white space of JSON's four kinds
 * before it, a number word in JSON's grammar.  Other words are told
 * where they stand, since what is wrong with them depends on where that
 * is; so are strings (string_fault), since one that stands where none
 * may is told as that, however it ends.
 */
static enum attn_status
lex(const struct scan *sc, size_t i, struct attn_json_token *t)
{
	if ((i = skip_space(sc->b, sc->len, i)) < sc->len &&
	    (unsigned char)sc->b[i] < 0x20)
		return control_fault(sc, i);
	attn_json_token(sc->b, sc->len, i, t);
	if (t->kind == 'w' && number_word(sc->b, t->start, t->end)) {
		const char *why;

		if (number_end(sc->b, t->end, t->start, &why) != t->end)
			return number_fault(sc, t);
		t->kind = '0';
	}
	return ATTN_OK;
}

/* Whether the word t is one of JSON's literals. */
static int
literal(const struct scan *sc, const struct attn_json_token *t)
{
	const char *w = sc->b + t->start;
	const size_t n = t->end - t->start;

	return (n == 4 && (memcmp(w, "true", 4) == 0 ||
	    memcmp(w, "null", 4) == 0)) || (n == 5 && memcmp(w, "false", 5) == 0);
}

/* ---------------------------------------------------------------- plain arrays */

/* The number at b[i], which ends before a separator: its end, with the
 * value in *x; i when it is not a plain number. */
static size_t
plain_number(const char *b, size_t len, size_t i, double *x)
{
	const char *why;
	size_t e = number_end(b, len, i, &why);
	size_t minus = b[i] == '-';

	if (e == i || e - i > 63 || e == len || (b[e] != ',' && b[e] != ']' &&
	    !json_space(b[e])) ||
	    attn_chars_to_double(b + i + minus, e - i - minus, x) != 0)
		return i;
	if (minus)
		*x = -*x;
	return e;
}

/*
 * Read the array at b[i] == '[' into *out when it is plain: returns 1
 * with *end just past it, 0 when it is not, -1 when out of memory (out
 * then holds nothing).  Its shape is that of its first elements at each
 * depth, as json_array's.
 */
static int
plain_read(const char *b, size_t len, size_t i, struct attn_array *out,
    size_t *end)
{
	size_t shape[ATTN_MAX_DIMS] = { 0 }, count[ATTN_MAX_DIMS];
	size_t ndim = 0, k = 0, nv = 0, cap = 0, e;
	double *data = NULL, *nd, x;	/* shape[0] x .. x shape[ndim - 1] */

	memset(out, 0, sizeof *out);
	for (;;) {
		/* A value at depth k: an array or a number. */
		if (b[i] == '[') {
			if (k == ATTN_MAX_DIMS || (ndim > 0 && k == ndim))
				goto not_plain;
			if (k > 0)
				count[k - 1]++;
			count[k++] = 0;
			if ((i = skip_space(b, len, i + 1)) == len ||
			    b[i] == ']')
				goto not_plain;
			continue;
		}
		if (ndim == 0)
			ndim = k;
		if (k != ndim || (e = plain_number(b, len, i, &x)) == i)
			goto not_plain;
		if (nv == cap) {
			if ((nd = attn_grow_array(data, &cap, nv + 1,
			    sizeof *data)) == NULL) {
				attn_mem_free(data, cap * sizeof *data);
				return -1;
			}
			data = nd;
		}
		data[nv++] = x;
		count[k - 1]++;
		/* Then ',' and the next value, or ']' closing arrays. */
		for (i = skip_space(b, len, e); i < len && b[i] == ']';
		    i = skip_space(b, len, i + 1)) {
			k--;
			if (shape[k] == 0)
				shape[k] = count[k];
			else if (count[k] != shape[k])
				goto not_plain;
			if (k == 0) {
				*end = i + 1;
				out->ndim = ndim;
				memcpy(out->shape, shape, sizeof shape);
				/* exactly its numbers, as arrays hold them */
				out->data = attn_mem_realloc(data, cap *
				    sizeof *data, nv * sizeof *data);
				return 1;
			}
		}
		if (i == len || b[i] != ',' ||
		    (i = skip_space(b, len, i + 1)) == len)
			goto not_plain;
	}
not_plain:
	attn_mem_free(data, cap * sizeof *data);
	return 0;
}

/* Keep p: 0, or -1 (its numbers freed) when out of memory. */
static int
plain_push(struct attn_json_plains *ps, struct attn_json_plain *p)
{
	struct attn_json_plain *nv;

	if (ps->n == ps->cap) {
		if ((nv = attn_grow_array(ps->v, &ps->cap, ps->n + 1,
		    sizeof *nv)) == NULL) {
			attn_array_free(&p->a);
			return -1;
		}
		ps->v = nv;
	}
	ps->v[ps->n++] = *p;
	return 0;
}

void
attn_json_plains_free(struct attn_json_plains *ps)
{
	size_t k;

	for (k = 0; k < ps->n; k++)
		attn_array_free(&ps->v[k].a);
	attn_mem_free(ps->v, ps->cap * sizeof *ps->v);
	memset(ps, 0, sizeof *ps);
}

int
attn_json_plain_take(struct attn_json_plains *ps, const size_t *path,
    size_t n, struct attn_array *out)
{
	struct attn_json_plain *p;
	size_t k;

	for (k = 0; k < ps->n; k++) {
		p = &ps->v[k];
		if (p->depth == n && p->a.ndim > 0 &&
		    (n == 0 || memcmp(p->path, path, n * sizeof *path) == 0)) {
			*out = p->a;
			memset(&p->a, 0, sizeof p->a);
			return 1;
		}
	}
	return 0;
}

/* ---------------------------------------------------------------- the scan */

const char attn_json_rows_msg[] = "several arrays one after another, as "
    "rows without the outer brackets: a matrix is one array of rows, so "
    "put '[' before the first and ']' after the last, as in "
    "[[1, 0], [0, 1]]";

/*
 * After the top value, at i: the rest must be white space.  What lies
 * there is told as trailing, but a fault of its white space or numbers
 * first, as anywhere else in the text (strings there are passed over,
 * whole).  Trailing text that looks like something else is named with
 * what to do: an array on a line of its own (JSON Lines), arrays
 * separated by commas or spaces (rows pasted without the outer
 * brackets), a number followed by a comma or another number on its line
 * (CSV, TSV or white space).
 */
static enum attn_status
scan_rest(const struct scan *sc, size_t i, size_t value_end)
{
	const char *b = sc->b;
	struct attn_json_token t;
	size_t first = sc->len, top;
	char kind[2] = { 0, 0 };	/* of the first two trailing tokens */
	int newline;

	for (;;) {
		if ((i = skip_space(b, sc->len, i)) < sc->len &&
		    (unsigned char)b[i] < 0x20)
			return control_fault(sc, i);
		attn_json_token(b, sc->len, i, &t);
		if (t.kind == 0)
			break;
		if (first == sc->len)
			first = t.start;
		if (kind[0] == 0)
			kind[0] = t.kind;
		else if (kind[1] == 0)
			kind[1] = t.kind;
		if (t.kind == 'w' && number_word(b, t.start, t.end)) {
			const char *why;

			if (number_end(b, t.end, t.start, &why) != t.end)
				return number_fault(sc, &t);
		}
		i = t.end;
	}
	if (first == sc->len)
		return ATTN_OK;
	top = skip_space(b, sc->len, attn_bom_len(b, sc->len));
	newline = memchr(b + value_end, '\n', first - value_end) != NULL;
	/* An array on a line of its own after one: JSON Lines, in a file
	 * whose name says JSON. */
	if (kind[0] == '[' && newline)
		return fault(sc, first, "%s", "a second JSON value on its own "
		    "line: one array a line is JSON Lines, read as such from "
		    "a .jsonl or .ndjson file or standard input; a .json "
		    "file holds one value");
	if (b[top] == '[' && (kind[0] == '[' ||
	    (kind[0] == ',' && kind[1] == '[')))
		return fault(sc, first, "%s", attn_json_rows_msg);
	if ((is_digit(b[top]) || b[top] == '-') && !newline &&
	    (kind[0] == ',' || (kind[0] == 'w' && number_word(b, first,
	    first + 1))))
		return fault(sc, first, "%s", "numbers separated by commas or "
		    "spaces, as in CSV or TSV: a file named .csv or .tsv is "
		    "read as such; in JSON a matrix is one array of rows, as "
		    "in [[1, 0], [0, 1]]");
	return fault(sc, first, "%s", "trailing garbage after the JSON value");
}

/* What the grammar expects next. */
enum expect {
	VALUE,		/* at the top, after ':', after ',' in an array */
	FIRST_VALUE,	/* after '[' */
	FIRST_KEY,	/* after '{' */
	KEY,		/* after ',' in an object */
	COLON,		/* after a key */
	NEXT,		/* after a value in an array or object */
	END		/* after the top value */
};

/* The nesting cJSON refuses past (CJSON_NESTING_LIMIT; read_json.c
 * holds the two to the same number). */
#define DEPTH_MAX ATTN_JSON_DEPTH_MAX


enum attn_status
attn_json_scan(const char *name, const char *buf, size_t len,
    struct attn_json_plains *plain, struct attn_error *err)
{
	const struct scan sc = { name, buf, len, err, plain };
	unsigned char object[DEPTH_MAX];	/* of each open container */
	size_t i = attn_bom_len(buf, len), depth = 0, member[2] = { 0, 0 };
	size_t comma = 0, value_end = 0;
	enum expect expect = VALUE;
	struct attn_json_token t;
	struct attn_json_plain p;
	enum attn_status st;
	int proj = 0, got;
	char prev = 0;

	memset(plain, 0, sizeof *plain);
	/* Encodings first: UTF-16 is full of NUL bytes, which no token
	 * holds, as is ill-formed UTF-8, which a string may. */
	if ((st = attn_encoding_fault(err, name, buf, len, "JSON")) !=
	    ATTN_OK)
		return st;
	while (i < len && (unsigned char)buf[i] <= 0x20)
		i++;
	if (i == len)
		return fault(&sc, len, "%s", "empty input: no JSON value");
	i = attn_bom_len(buf, len);
	for (;; prev = t.kind, i = t.end) {
		if (expect == END)
			return scan_rest(&sc, i, value_end);
		if ((st = lex(&sc, i, &t)) != ATTN_OK)
			return st;
		if (t.kind == 0)
			return truncated(&sc);
		switch (expect) {
		case VALUE:
		case FIRST_VALUE:
			if (t.kind == '[' || t.kind == '{') {
				if (depth >= DEPTH_MAX)
					return attn_error_at(err, ATTN_ERR_DATA,
					    name, buf, len, t.start, "nested too "
					    "deeply (more than %d levels)",
					    DEPTH_MAX);
				/* An array json_array reads: plain? */
				if (t.kind == '[' && (depth == 0 ||
				    (prev == ':' && object[0] && (depth == 1 ||
				    (depth == 2 && object[1] && proj)))) &&
				    (got = plain_read(buf, len, t.start, &p.a,
				    &p.end)) != 0) {
					memcpy(p.path, member, sizeof member);
					p.depth = depth;
					p.start = t.start;
					if (got < 0 || plain_push(plain, &p) != 0)
						return attn_error_input_nomem(
						    err, name, "reading JSON "
						    "input");
					t.end = p.end;
					break;
				}
				object[depth++] = t.kind == '{';
				if (depth <= 2)
					member[depth - 1] = 0;
				expect = t.kind == '[' ? FIRST_VALUE :
				    FIRST_KEY;
				continue;
			}
			if (t.kind == ']' && expect == FIRST_VALUE) {
				depth--;
				break;
			}
			if ((t.kind == ']' || t.kind == '}') && prev == ',')
				return fault(&sc, comma, "invalid JSON: "
				    "trailing comma before '%s'",
				    t.kind == ']' ? "]" : "}");
			if (t.kind == '"' &&
			    (st = string_fault(&sc, &t)) != ATTN_OK)
				return st;
			if (t.kind == '"' || t.kind == '0' ||
			    (t.kind == 'w' && literal(&sc, &t)))
				break;
			if (t.kind == 'w')
				return word_fault(&sc, &t);
			return fault_token(&sc, &t, expect == FIRST_VALUE ?
			    "invalid JSON: expected a value or ']', found "
			    "'%s'" : "invalid JSON: expected a value, found "
			    "'%s'");
		case FIRST_KEY:
		case KEY:
			if (t.kind == '"') {
				if ((st = string_fault(&sc, &t)) != ATTN_OK)
					return st;
				if (depth == 1)
					proj = t.end - t.start == 6 &&
					    memcmp(buf + t.start, "\"proj\"",
					    6) == 0;
				expect = COLON;
				continue;
			}
			if (t.kind == '}' && expect == FIRST_KEY) {
				depth--;
				break;
			}
			if (t.kind == '}')
				return fault(&sc, comma, "invalid JSON: "
				    "trailing comma before '%s'", "}");
			return fault_token(&sc, &t, "invalid JSON: object keys "
			    "are strings in double quotes, not '%s'");
		case COLON:
			if (t.kind != ':')
				return fault_token(&sc, &t, "invalid JSON: "
				    "expected ':' after the key, found '%s'");
			expect = VALUE;
			continue;
		case NEXT:
			if (t.kind == ',') {
				comma = t.start;
				if (depth <= 2)
					member[depth - 1]++;
				expect = object[depth - 1] ? KEY : VALUE;
				continue;
			}
			if (t.kind == (object[depth - 1] ? '}' : ']')) {
				depth--;
				break;
			}
			return fault_token(&sc, &t, object[depth - 1] ?
			    "invalid JSON: expected ',' or '}', found '%s'" :
			    "invalid JSON: expected ',' or ']', found '%s'");
		case END:
			break;
		}
		/* A value ended at t.end. */
		expect = depth == 0 ? END : NEXT;
		value_end = t.end;
	}
}
