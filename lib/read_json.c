/*
 * read_json.c - JSON arrays (1-D to 4-D) and BUNDLE objects, parsed with
 * cJSON.
 *
 * cJSON checks the syntax and builds the tree; attn then checks what
 * cJSON accepts but attn does not (ragged rows, strings, depth) while it
 * copies the numbers out in C order.  Three decisions follow from cJSON's
 * limits:
 *
 * - cJSON records no positions, so an error found in the tree is placed
 *   by json_locate, which walks the source text along the same path
 *   (member and element indices) to the offending value; and a syntax
 *   error is named by syntax_fault, which walks the tokens before where
 *   cJSON stopped to tell what was expected there (a trailing comma,
 *   NaN, a malformed number, a missing ',').
 * - cJSON checks no UTF-8 and lets control characters and bad \u
 *   escapes through in strings; attn refuses them, with positions.
 * - cJSON is not strict RFC 8259 outside strings either: it takes every
 *   byte up to 0x20 for white space and hands any run of [0-9+-.eE] to
 *   strtod, which reads 01, -01, 1. and 1.e5.  lex_fault walks the
 *   tokens with JSON's own grammar and refuses them where they stand;
 *   it runs after cJSON, and only up to where cJSON stopped when it
 *   failed, so that the first fault in the text is the one told.
 * - cJSON converts numbers with strtod in the current locale; attn reads
 *   each number's own text again, in document order, with
 *   attn_parse_number, so that values are correctly rounded whatever the
 *   locale and 1e999 is told apart from a real infinity.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "internal.h"

/* How many bytes of a bad token or key a message quotes. */
#define PREVIEW_MAX 32

/* The longest path a locator follows: a bundle member, then one index a
 * dimension and one more for an element past the end of a row. */
#define PATH_MAX_LEN (ATTN_MAX_DIMS + 2)

/* An array read without cJSON (see "plain arrays" below): where it
 * stands, as json_array's path names it (member indices from the top),
 * its bytes buf[start, end), and its numbers. */
struct plain {
	size_t path[2], depth;
	size_t start, end;
	struct attn_array a;
};

struct plains {
	struct plain *v;
	size_t n, cap;
};

/* What a JSON reader needs to report errors and find positions, and the
 * plain arrays json_parse read. */
struct json_src {
	const char *name;
	const char *buf;
	size_t len;
	unsigned flags;
	struct attn_error *err;
	struct plains *plain;
};

/* ---------------------------------------------------------------- text */

/* cJSON takes every byte up to the space as white space; the walkers
 * below must agree with it to land on the same tokens. */
static size_t
skip_ws(const char *buf, size_t len, size_t i)
{
	while (i < len && (unsigned char)buf[i] <= 0x20)
		i++;
	return i;
}

/* buf[i] is '"': the offset of the closing quote, backslash escapes
 * skipped, or len when the string does not end. */
static size_t
string_close(const char *buf, size_t len, size_t i)
{
	i++;
	while (i < len && buf[i] != '"')
		i += buf[i] == '\\' ? 2 : 1;
	return i < len ? i : len;
}

/* buf[i] is '"': the offset just past the string. */
static size_t
skip_string(const char *buf, size_t len, size_t i)
{
	i = string_close(buf, len, i);
	return i < len ? i + 1 : len;
}

/* The offset just past the value that starts at buf[i].  Containers are
 * skipped by counting brackets, not by recursion, so that nesting depth
 * costs no stack. */
static size_t
skip_value(const char *buf, size_t len, size_t i)
{
	size_t depth = 0;

	if (i >= len)
		return len;
	if (buf[i] == '"')
		return skip_string(buf, len, i);
	if (buf[i] != '[' && buf[i] != '{') {
		while (i < len && (unsigned char)buf[i] > 0x20 &&
		    buf[i] != ',' && buf[i] != ']' && buf[i] != '}')
			i++;
		return i;
	}
	while (i < len) {
		switch (buf[i]) {
		case '"':
			i = skip_string(buf, len, i);
			continue;
		case '[':
		case '{':
			depth++;
			break;
		case ']':
		case '}':
			if (--depth == 0)
				return i + 1;
			break;
		default:
			break;
		}
		i++;
	}
	return len;
}

/*
 * The offset of the value reached from the top by path[0..n): each step
 * is an element index in an array or a member index in an object (cJSON
 * keeps members in document order, repeated keys included).  With key
 * set, the last step stops at the member's key instead of its value.  A
 * step past the last element stops at the closing bracket, which is
 * where a short row is reported.  Only called on text cJSON accepted.
 */
static size_t
json_locate(const char *buf, size_t len, const size_t *path, size_t n,
    int key)
{
	size_t i, k, m;
	int object;

	i = skip_ws(buf, len, attn_bom_len(buf, len));
	for (k = 0; k < n; k++) {
		if (i >= len || (buf[i] != '[' && buf[i] != '{'))
			return i;
		object = buf[i] == '{';
		i = skip_ws(buf, len, i + 1);
		for (m = 0; m < path[k]; m++) {
			if (i >= len || buf[i] == ']' || buf[i] == '}')
				return i;
			if (object) {
				i = skip_ws(buf, len, skip_string(buf, len, i));
				i = skip_ws(buf, len, i + 1);	/* ':' */
			}
			i = skip_ws(buf, len, skip_value(buf, len, i));
			if (i < len && buf[i] == ',')
				i = skip_ws(buf, len, i + 1);
		}
		if (i >= len || buf[i] == ']' || buf[i] == '}')
			return i;
		if (object) {
			if (key && k + 1 == n)
				return i;
			i = skip_ws(buf, len, skip_string(buf, len, i));
			i = skip_ws(buf, len, i + 1);		/* ':' */
		}
	}
	return i;
}

/* Report msg at the value (or key) that path leads to. */
static enum attn_status
fail_path(const struct json_src *js, const size_t *path, size_t n, int key,
    const char *msg)
{
	size_t off = json_locate(js->buf, js->len, path, n, key);

	return attn_error_at(js->err, ATTN_ERR_DATA, js->name, js->buf, js->len,
	    off, "%s", msg);
}

/* What a JSON value is, for "expected X, found Y". */
static const char *
json_kind(const cJSON *j)
{
	if (cJSON_IsNumber(j))
		return "a number";
	if (cJSON_IsString(j))
		return "a string";
	if (cJSON_IsArray(j))
		return "an array";
	if (cJSON_IsObject(j))
		return "an object";
	if (cJSON_IsTrue(j))
		return "true";
	if (cJSON_IsFalse(j))
		return "false";
	return "null";
}

/* ---------------------------------------------------------------- parse */

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
	if (i + 1 >= close || strchr("\"\\/bfnrtu", b[i + 1]) == NULL ||
	    b[i + 1] == '\0')
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
 * cJSON stopped at off inside a string when the string is still open
 * there; report that string's fault.  Everything before off parsed, so
 * counting quotes from the start is exact.  Returns ATTN_OK when off is
 * not inside a string.
 */
static enum attn_status
string_fault(const struct json_src *js, size_t off)
{
	const char *b = js->buf;
	size_t i, open = 0, close, next;
	int in = 0;

	for (i = attn_bom_len(b, js->len); i < off; i++) {
		if (in && b[i] == '\\') {
			i++;
		} else if (b[i] == '"') {
			in = !in;
			open = i;
		}
	}
	if (!in)
		return ATTN_OK;
	if ((close = string_close(b, js->len, open)) == js->len)
		return attn_error_at(js->err, ATTN_ERR_DATA, js->name, b, js->len,
		    js->len, "unexpected end of input (truncated JSON?)");
	/* The string ends, so an escape in it is bad: point at it. */
	for (i = open + 1; i < close; i = next) {
		next = i + 1;
		if (b[i] == '\\' && !escape_ok(b, i, close, &next))
			break;
	}
	return attn_error_at(js->err, ATTN_ERR_DATA, js->name, b, js->len,
	    i < close ? i : open, "invalid escape in JSON string");
}

/* A token of JSON text: a string (kind '"'), one of [ ] { } , : (kind is
 * that character), or a bare word (kind 'w': a number, true, false,
 * null, or whatever else stands where a value should); kind 0 is the
 * end of the input. */
struct token {
	size_t start, end;
	char kind;
};

/* The token at or after offset i. */
static void
next_token(const char *b, size_t len, size_t i, struct token *t)
{
	i = skip_ws(b, len, i);
	t->start = t->end = i;
	t->kind = 0;
	if (i >= len)
		return;
	if (b[i] == '"') {
		t->kind = '"';
		t->end = skip_string(b, len, i);
	} else if (strchr("[]{},:", b[i]) != NULL) {
		t->kind = b[i];
		t->end = i + 1;
	} else {
		t->kind = 'w';
		while (t->end < len && (unsigned char)b[t->end] > 0x20 &&
		    strchr("[]{},:\"", b[t->end]) == NULL)
			t->end++;
	}
}

/* Report a bad word t where a value belongs: a spelling of NaN or
 * Infinity, a malformed number, a single-quoted string, or another word. */
static enum attn_status
word_fault(const struct json_src *js, const struct token *t)
{
	const char *w = js->buf + t->start;
	size_t n = t->end - t->start, k;
	char p[PREVIEW_MAX + 4], msg[ATTN_MSG_MAX];
	double x;

	if ((k = attn_number_fault(w, n, msg, sizeof msg)) < n)
		return attn_error_at(js->err, ATTN_ERR_DATA, js->name, js->buf,
		    js->len, t->start + k, "invalid JSON: %s", msg);
	k = 0;
	attn_text_preview(p, PREVIEW_MAX, w, n);
	if (n > 0 && (w[0] == '+' || w[0] == '-'))
		k = 1;
	if (attn_word_is(w + k, n - k, "nan") || attn_word_is(w + k, n - k, "inf") ||
	    attn_word_is(w + k, n - k, "infinity"))
		return attn_error_at(js->err, ATTN_ERR_DATA, js->name, js->buf,
		    js->len, t->start, "invalid JSON: '%s' is not a JSON "
		    "value (JSON has no NaN or Infinity; attn writes them as "
		    "the strings \"nan\", \"inf\" and \"-inf\")", p);
	if (strchr("0123456789+-.", w[0]) != NULL) {
		/* cJSON copies at most 63 characters of a number; a longer
		 * one fails in its middle though attn could read it. */
		if (n > 63 && attn_parse_number(w, n, &x) >= 0)
			return attn_error_at(js->err, ATTN_ERR_DATA, js->name,
			    js->buf, js->len, t->start, "number too long: %zu "
			    "characters (cJSON reads at most 63)", n);
		return attn_error_at(js->err, ATTN_ERR_DATA, js->name, js->buf,
		    js->len, t->start, "invalid JSON: malformed number '%s'",
		    p);
	}
	if (w[0] == '\'')
		return attn_error_at(js->err, ATTN_ERR_DATA, js->name, js->buf,
		    js->len, t->start, "invalid JSON: strings take double "
		    "quotes, not '%s'", p);
	return attn_error_at(js->err, ATTN_ERR_DATA, js->name, js->buf, js->len,
	    t->start, "invalid JSON: unknown word '%s' (JSON has true, false "
	    "and null)", p);
}

/*
 * Report a syntax error cJSON found at off, outside any string.  The text
 * before off parsed, so walking its tokens gives exactly what cJSON does
 * not report: the nesting depth (cJSON refuses more than
 * CJSON_NESTING_LIMIT levels, which also bounds the stack here), whether
 * an object or an array is open, and what the last token was, hence what
 * was expected.  Where cJSON stops is not always the culprit: inside a
 * number it stops where strtod did ("1e]" at 'e'), past a bad key one
 * byte after its start ({Q: 1} at the colon), and after a trailing comma
 * in an object at the '}' or later.
 */
static enum attn_status
syntax_fault(const struct json_src *js, size_t off)
{
	unsigned char object[CJSON_NESTING_LIMIT + 1];
	const char *b = js->buf, *expected;
	struct token t, p1 = { 0, 0, 0 }, p2 = { 0, 0, 0 };
	size_t depth = 0, len = js->len, i;
	int in_object = 0, key1 = 0, key, value = 0;
	char p[PREVIEW_MAX + 4];

	for (i = attn_bom_len(b, len); ; i = t.end) {
		next_token(b, len, i, &t);
		if (t.kind == 0 || t.start >= off)
			break;
		key = in_object && (p1.kind == '{' || p1.kind == ',');
		if (t.kind == '[' || t.kind == '{') {
			if (depth < sizeof object)
				object[depth] = t.kind == '{';
			depth++;
		} else if ((t.kind == ']' || t.kind == '}') && depth > 0) {
			depth--;
		}
		in_object = depth > 0 && depth <= sizeof object &&
		    object[depth - 1];
		p2 = p1;
		p1 = t;
		key1 = key;
	}

	/* A key that is no string: cJSON stops just past its first byte. */
	if (key1 && p1.kind != '"' && p1.end >= off &&
	    !(p1.kind == '}' && p2.kind == '{')) {
		if (p1.kind == '}' && p2.kind == ',')
			return attn_error_at(js->err, ATTN_ERR_DATA, js->name, b,
			    len, p2.start, "invalid JSON: trailing comma "
			    "before '}'");
		attn_text_preview(p, PREVIEW_MAX, b + p1.start, p1.end - p1.start);
		return attn_error_at(js->err, ATTN_ERR_DATA, js->name, b, len,
		    p1.start, "invalid JSON: object keys are strings in "
		    "double quotes, not '%s'", p);
	}
	/* Stopped inside a word: a number strtod read only part of. */
	if (p1.kind == 'w' && p1.start < off && off < p1.end)
		return word_fault(js, &p1);
	if (t.kind == 0)
		return attn_error_at(js->err, ATTN_ERR_DATA, js->name, b, len, len,
		    "unexpected end of input (truncated JSON?)");
	if ((t.kind == '[' || t.kind == '{') && depth >= CJSON_NESTING_LIMIT)
		return attn_error_at(js->err, ATTN_ERR_DATA, js->name, b, len,
		    t.start, "nested too deeply (more than %d levels)",
		    CJSON_NESTING_LIMIT);
	if ((t.kind == ']' || t.kind == '}') && p1.kind == ',')
		return attn_error_at(js->err, ATTN_ERR_DATA, js->name, b, len,
		    p1.start, "invalid JSON: trailing comma before '%c'",
		    t.kind);

	/* What the last token calls for next. */
	if (p1.kind == 0 || p1.kind == ':' ||
	    (p1.kind == ',' && !in_object)) {
		expected = "a value";
		value = 1;
	} else if (p1.kind == '[') {
		expected = "a value or ']'";
		value = 1;
	} else if (p1.kind == '{')
		expected = "a key in double quotes or '}'";
	else if (p1.kind == ',')
		expected = "a key in double quotes";
	else if (key1 && p1.kind == '"')
		expected = "':' after the key";
	else if (depth == 0)
		expected = "the end of the input";
	else
		expected = in_object ? "',' or '}'" : "',' or ']'";
	if (t.kind == 'w' && value)
		return word_fault(js, &t);
	attn_text_preview(p, PREVIEW_MAX, b + t.start, t.end - t.start);
	return attn_error_at(js->err, ATTN_ERR_DATA, js->name, b, len, t.start,
	    "invalid JSON: expected %s, found '%s'", expected, p);
}

/* The bytes that end a bare word of JSON text: white space (as cJSON
 * sees it), the structural characters and a string's quote. */
static int
word_end(char c)
{
	return (unsigned char)c <= 0x20 || strchr(",:[]{}\"", c) != NULL;
}

/*
 * Why the number token b[i..j) breaks RFC 8259's grammar,
 *
 *	-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
 *
 * "" when it breaks it in no way worth a word of its own, NULL when it
 * keeps it.
 */
static const char *
number_grammar(const char *b, size_t i, size_t j)
{
	size_t k = i, d;

	if (b[k] == '+')
		return ": JSON numbers take no '+' sign";
	if (b[k] == '-')
		k++;
	if (k < j && b[k] == '.')
		return ": JSON needs a digit before the decimal point (0.5)";
	for (d = k; k < j && b[k] >= '0' && b[k] <= '9'; k++)
		;
	if (k == d)
		return "";
	if (b[d] == '0' && k - d > 1)
		return ": JSON numbers have no leading zeros";
	if (k < j && b[k] == '.') {
		for (d = ++k; k < j && b[k] >= '0' && b[k] <= '9'; k++)
			;
		if (k == d)
			return ": JSON needs a digit after the decimal point "
			    "(1.0)";
	}
	if (k < j && (b[k] == 'e' || b[k] == 'E')) {
		k++;
		if (k < j && (b[k] == '+' || b[k] == '-'))
			k++;
		for (d = k; k < j && b[k] >= '0' && b[k] <= '9'; k++)
			;
		if (k == d)
			return "";
	}
	return k == j ? NULL : "";
}

/*
 * The first thing outside strings that cJSON accepts but RFC 8259 does
 * not, among the tokens that start at or before limit: a control byte
 * as white space (JSON's white space is space, tab, LF and CR; cJSON
 * takes every byte up to 0x20), or a number outside JSON's grammar.  A
 * number is the run of characters cJSON hands to strtod; when a letter
 * or another word character follows it (-Infinity, 0x10), it is a word
 * that cJSON refuses and syntax_fault names, and is skipped here.
 * The plain arrays json_parse read keep the grammar and are stepped
 * over.  Returns ATTN_OK when there is none.
 */
static enum attn_status
lex_fault(const struct json_src *js, size_t limit)
{
	const char *b = js->buf, *why;
	size_t len = js->len, i = attn_bom_len(b, len), j, k = 0;
	char p[PREVIEW_MAX + 4];
	unsigned char c;

	while (i < len && i <= limit) {
		/* A plain array keeps JSON's grammar: step over it. */
		while (k < js->plain->n && js->plain->v[k].start < i)
			k++;
		if (k < js->plain->n && js->plain->v[k].start == i) {
			i = js->plain->v[k++].end;
			continue;
		}
		c = (unsigned char)b[i];
		if (c == '"') {
			i = skip_string(b, len, i);
			continue;
		}
		if (c < 0x20 && c != ' ' && c != '\t' && c != '\n' &&
		    c != '\r')
			return attn_error_at(js->err, ATTN_ERR_DATA, js->name, b,
			    len, i, "invalid JSON: control character 0x%02X "
			    "outside a string (JSON's white space is space, "
			    "tab, LF and CR)", (unsigned)c);
		if (word_end((char)c)) {
			i++;
			continue;
		}
		for (j = i; j < len && b[j] != '\0' &&
		    strchr("0123456789+-.eE", b[j]) != NULL; j++)
			;
		if (j == i || (j < len && !word_end(b[j]))) {
			/* A word: cJSON names it, or takes it (true). */
			while (j < len && !word_end(b[j]))
				j++;
		} else if ((why = number_grammar(b, i, j)) != NULL) {
			attn_text_preview(p, PREVIEW_MAX, b + i, j - i);
			return attn_error_at(js->err, ATTN_ERR_DATA, js->name, b,
			    len, i, "invalid JSON: malformed number '%s'%s",
			    p, why);
		}
		i = j;
	}
	return ATTN_OK;
}

/*
 * What cJSON accepts in strings but JSON does not, or attn cannot keep:
 * raw control characters (a newline in a label would break the output),
 * \u escapes without four hex digits, and \u0000, which would cut a
 * label short.  Called on text that cJSON parsed, so its strings are
 * found exactly.  Returns ATTN_OK when there is none.
 */
static enum attn_status
string_content_fault(const struct json_src *js)
{
	const char *b = js->buf, *q;
	size_t len = js->len, i = 0, close, next;

	while ((q = memchr(b + i, '"', len - i)) != NULL) {
		close = string_close(b, len, (size_t)(q - b));
		for (i = (size_t)(q - b) + 1; i < close; i = next) {
			next = i + 1;
			if ((unsigned char)b[i] < 0x20)
				return attn_error_at(js->err, ATTN_ERR_DATA,
				    js->name, b, len, i, "invalid JSON: "
				    "control character 0x%02X in a string "
				    "(JSON needs it escaped)",
				    (unsigned)(unsigned char)b[i]);
			if (b[i] != '\\')
				continue;
			if (!escape_ok(b, i, close, &next))
				return attn_error_at(js->err, ATTN_ERR_DATA,
				    js->name, b, len, i,
				    "invalid escape in JSON string");
			if (b[i + 1] == 'u' && hex4(b, i + 2, close) == 0)
				return attn_error_at(js->err, ATTN_ERR_DATA,
				    js->name, b, len, i, "\\u0000 (a NUL "
				    "character) in a JSON string");
		}
		if (close >= len)
			break;
		i = close + 1;
	}
	return ATTN_OK;
}

/* ---------------------------------------------------------------- plain arrays */

/*
 * Plain arrays, read without cJSON.  cJSON makes a node of every number
 * and converts it with strtod, and attn then read each number's text
 * again: 300 ns a number, most of reading JSON.  So json_parse first
 * reads here each array that json_array would read: the whole text, the
 * value of a member of the top object (a bundle's Q, a layer's W_Q), or
 * of a member of the top object's "proj" (its layer's W_Q); and only
 * when it is plain: 1 to 4 dimensions, rectangular, nothing empty, only
 * numbers as RFC 8259 writes them, none longer than the 63 characters
 * some builds of cJSON read nor beyond the doubles, and JSON's own white
 * space.  Such an array is valid JSON that json_array would read to the
 * same numbers; here each number's text is read once, by
 * attn_chars_to_double.  cJSON then gets the text with each plain array
 * cut down to "[]", and json_array takes the numbers read here for that
 * empty array.  Anything else, however small the doubt, is left to cJSON
 * and the checks after it, whose messages say what is wrong; and when
 * cJSON fails on the cut text, the whole text is parsed again, so that
 * where it fails is told as before.  A 4096 x 64 array of attn gen's
 * numbers reads at 36 ns a number this way, 456 ns the other.
 */

static int
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* The offset past JSON's own white space (space, tab, LF, CR) from i. */
static size_t
json_ws(const char *b, size_t len, size_t i)
{
	while (i < len && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' ||
	    b[i] == '\t'))
		i++;
	return i;
}

/* The end of the number at b[i] in RFC 8259's grammar, or i when none
 * starts there. */
static size_t
json_number_end(const char *b, size_t len, size_t i)
{
	size_t k = i, d;

	if (k < len && b[k] == '-')
		k++;
	if (k >= len || !is_digit(b[k]))
		return i;
	if (b[k++] != '0')
		while (k < len && is_digit(b[k]))
			k++;
	if (k < len && b[k] == '.') {
		for (d = ++k; k < len && is_digit(b[k]); k++)
			;
		if (k == d)
			return i;
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

/* The number at b[i], which ends before a separator: its end, with the
 * value in *x; i when it is not a plain number. */
static size_t
plain_number(const char *b, size_t len, size_t i, double *x)
{
	size_t e = json_number_end(b, len, i);
	size_t minus = b[i] == '-';

	if (e == i || e - i > 63 || e == len || (b[e] != ',' && b[e] != ']' &&
	    json_ws(b, len, e) == e) ||
	    attn_chars_to_double(b + i + minus, e - i - minus, x) != 0)
		return i;
	if (minus)
		*x = -*x;
	return e;
}

/*
 * Read the array at b[i] == '[' into *out when it is plain: returns 1
 * with *end just past it, or 0 (out then holds nothing).  Its shape is
 * that of its first elements at each depth, as json_array's.
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
			if ((i = json_ws(b, len, i + 1)) == len || b[i] == ']')
				goto not_plain;
			continue;
		}
		if (ndim == 0)
			ndim = k;
		if (k != ndim || (e = plain_number(b, len, i, &x)) == i)
			goto not_plain;
		if (nv == cap) {
			if ((nd = attn_grow_array(data, &cap, nv + 1,
			    sizeof *data)) == NULL)
				goto not_plain;	/* cJSON will run out too */
			data = nd;
		}
		data[nv++] = x;
		count[k - 1]++;
		/* Then ',' and the next value, or ']' closing arrays. */
		for (i = json_ws(b, len, e); i < len && b[i] == ']';
		    i = json_ws(b, len, i + 1)) {
			k--;
			if (shape[k] == 0)
				shape[k] = count[k];
			else if (count[k] != shape[k])
				goto not_plain;
			if (k == 0) {
				/* Give back the slack of the doubling, as
				 * json_array does; keep it if realloc
				 * fails. */
				if ((nd = realloc(data, nv * sizeof *data)) !=
				    NULL)
					data = nd;
				*end = i + 1;
				out->ndim = ndim;
				memcpy(out->shape, shape, sizeof shape);
				out->data = data;
				return 1;
			}
		}
		if (i == len || b[i] != ',' ||
		    (i = json_ws(b, len, i + 1)) == len)
			goto not_plain;
	}
not_plain:
	free(data);
	return 0;
}

/* Keep p, or free its numbers when there is no room to. */
static void
plain_keep(struct plains *ps, struct plain *p)
{
	struct plain *nv;

	if (ps->n == ps->cap) {
		if ((nv = attn_grow_array(ps->v, &ps->cap, ps->n + 1,
		    sizeof *nv)) == NULL) {
			attn_array_free(&p->a);
			return;
		}
		ps->v = nv;
	}
	ps->v[ps->n++] = *p;
}

static void
plains_free(struct plains *ps)
{
	size_t k;

	for (k = 0; k < ps->n; k++)
		attn_array_free(&ps->v[k].a);
	free(ps->v);
	memset(ps, 0, sizeof *ps);
}

/*
 * Read the plain arrays of js's text into js->plain, and write into copy
 * (len + 1 bytes) the text with each of them cut down to "[]" and a NUL;
 * returns the cut text's length.  The walk goes over the tokens of the
 * text's first value as next_token finds them, and tries an array where
 * that value begins, where the value of a member of the top object does,
 * or that of a member of the object under its key "proj" (spelled so, no
 * escapes: the labels' lists are arrays read otherwise); it stops where
 * the first value ends.
 */
static size_t
plain_cut(const struct json_src *js, char *copy)
{
	const char *b = js->buf;
	size_t len = js->len, i = attn_bom_len(b, len), from = 0, o = 0;
	size_t depth = 0, member[2] = { 0, 0 };
	int object[2] = { 0, 0 }, proj = 0, at_value;
	char prev = 0;
	struct plain p;
	struct token t;

	for (;;) {
		next_token(b, len, i, &t);
		if (t.kind == 0)
			break;
		at_value = depth == 0 ? prev == 0 : prev == ':' && object[0] &&
		    (depth == 1 || (depth == 2 && object[1] && proj));
		if (t.kind == '[' && at_value &&
		    plain_read(b, len, t.start, &p.a, &p.end)) {
			memcpy(p.path, member, sizeof member);
			p.depth = depth;
			p.start = t.start;
			memcpy(copy + o, b + from, t.start - from);
			o += t.start - from;
			copy[o++] = '[';
			copy[o++] = ']';
			from = i = p.end;
			plain_keep(js->plain, &p);
			prev = ']';
			if (depth == 0)
				break;
			continue;
		}
		if (t.kind == '[' || t.kind == '{') {
			if (depth < 2) {
				object[depth] = t.kind == '{';
				member[depth] = 0;
			}
			depth++;
		} else if ((t.kind == ']' || t.kind == '}') && depth > 0) {
			depth--;
		} else if (t.kind == ',' && depth >= 1 && depth <= 2) {
			member[depth - 1]++;
		} else if (t.kind == '"' && depth == 1 && prev != ':') {
			proj = t.end - t.start == 6 &&
			    memcmp(b + t.start, "\"proj\"", 6) == 0;
		}
		prev = t.kind;
		i = t.end;
		if (depth == 0)
			break;
	}
	memcpy(copy + o, b + from, len - from);
	o += len - from;
	copy[o] = '\0';
	return o;
}

/*
 * Move the plain array read at path[0..n) into *out: 1 when there is
 * one, 0 when there is none (the empty array there is one).
 */
static int
plain_take(const struct json_src *js, const size_t *path, size_t n,
    struct attn_array *out)
{
	struct plain *p;
	size_t k;

	for (k = 0; k < js->plain->n; k++) {
		p = &js->plain->v[k];
		if (p->depth == n && p->a.ndim > 0 &&
		    (n == 0 || memcmp(p->path, path, n * sizeof *path) == 0)) {
			*out = p->a;
			memset(&p->a, 0, sizeof p->a);
			return 1;
		}
	}
	return 0;
}

/*
 * The rules of attn_value_fault for the array *a that plain_take gave,
 * whose numbers only plain_read has seen (as finite numbers, so only a
 * mask's can break them): the first that does is told at its place in
 * the text, found along its path, and *a is freed.
 */
static enum attn_status
plain_values(const struct json_src *js, const size_t *base, size_t nbase,
    struct attn_array *a)
{
	size_t path[PATH_MAX_LEN] = { 0 }, n = 1, f, k, d, off;
	char msg[ATTN_MSG_MAX];

	for (d = 0; d < a->ndim; d++)
		n *= a->shape[d];
	for (f = 0; f < n && attn_value_plain(js->flags, a->data[f]); f++)
		;
	if (f == n)
		return ATTN_OK;
	if (nbase > 0)
		memcpy(path, base, nbase * sizeof *base);
	for (d = a->ndim, k = f; d-- > 0; k /= a->shape[d])
		path[nbase + d] = k % a->shape[d];
	off = json_locate(js->buf, js->len, path, nbase + a->ndim, 0);
	attn_value_fault(js->flags, a->data[f], js->buf + off,
	    json_number_end(js->buf, js->len, off) - off, msg, sizeof msg);
	attn_array_free(a);
	return attn_error_at(js->err, ATTN_ERR_DATA, js->name, js->buf,
	    js->len, off, "%s", msg);
}

/*
 * Parse buf[0..len) into *root, reading its plain arrays into js->plain
 * on the way.  cJSON gets a NUL-terminated copy with
 * the NUL counted in the length, so that it stops on the NUL at the end
 * (a truncated input then fails exactly at len) and never reads past the
 * copy.  Trailing text is checked here rather than by cJSON, which would
 * report it as a plain syntax error.
 */
static enum attn_status
json_parse(const struct json_src *js, cJSON **root)
{
	const char *b = js->buf, *end = NULL;
	size_t len = js->len, off, i;
	enum attn_status st;
	size_t clen, cut = 0, k;
	char *copy;

	*root = NULL;
	/* Encodings first: UTF-16 is full of NUL bytes, cJSON takes NUL
	 * for white space (JSON allows it nowhere), and checks no UTF-8. */
	if ((st = attn_encoding_fault(js->err, js->name, b, len, "JSON")) !=
	    ATTN_OK)
		return st;
	if (skip_ws(b, len, attn_bom_len(b, len)) == len)
		return attn_error_at(js->err, ATTN_ERR_DATA, js->name, b, len, len,
		    "empty input: no JSON value");
	if (len == (size_t)-1 || (copy = malloc(len + 1)) == NULL)
		return attn_error_set(js->err, ATTN_ERR_NOMEM, js->name, 0, 0,
		    "out of memory reading JSON input");
	clen = plain_cut(js, copy);
	*root = cJSON_ParseWithLengthOpts(copy, clen + 1, &end, 0);
	if (*root == NULL && js->plain->n > 0) {
		/* Only the whole text says where it fails. */
		plains_free(js->plain);
		memcpy(copy, b, len);
		copy[len] = '\0';
		*root = cJSON_ParseWithLengthOpts(copy, len + 1, &end, 0);
	}
	off = end != NULL ? (size_t)(end - copy) : 0;
	free(copy);
	/* The plain arrays all lie inside the value cJSON read. */
	for (k = 0; *root != NULL && k < js->plain->n; k++)
		cut += js->plain->v[k].end - js->plain->v[k].start - 2;
	off += cut;

	if (*root == NULL) {
		if ((st = lex_fault(js, off)) != ATTN_OK ||
		    (st = string_fault(js, off)) != ATTN_OK)
			return st;
		return syntax_fault(js, off);
	}
	if ((st = lex_fault(js, len)) != ATTN_OK) {
		cJSON_Delete(*root);
		*root = NULL;
		return st;
	}
	if ((i = skip_ws(b, len, off)) < len) {
		cJSON_Delete(*root);
		*root = NULL;
		/* An array on a line of its own after one: JSON Lines, in a
		 * file whose name says JSON. */
		return attn_error_at(js->err, ATTN_ERR_DATA, js->name, b, len, i,
		    "%s", b[i] == '[' && memchr(b + off, '\n', i - off) !=
		    NULL ? "a second JSON value on its own line: one array a "
		    "line is JSON Lines, read as such from a .jsonl or "
		    ".ndjson file or standard input; a .json file holds one "
		    "value" : "trailing garbage after the JSON value");
	}
	if ((st = string_content_fault(js)) != ATTN_OK) {
		cJSON_Delete(*root);
		*root = NULL;
		return st;
	}
	return ATTN_OK;
}

/* ---------------------------------------------------------------- arrays */

/*
 * The next scalar token (number, string, true or false) of the array at
 * or after *cur: the elements of a valid array are its only scalars, in
 * document order, so brackets, commas and white space are all that lie
 * between them.
 */
static size_t
next_scalar(const struct json_src *js, size_t *cur)
{
	size_t i = *cur;

	while (i < js->len && ((unsigned char)js->buf[i] <= 0x20 ||
	    js->buf[i] == '[' || js->buf[i] == ']' || js->buf[i] == ','))
		i++;
	*cur = skip_value(js->buf, js->len, i);
	return i;
}

/*
 * One element of the array: a number; with ATTN_READ_BOOL (a mask), true
 * or false as 1 or 0; or a string spelling inf or nan, which is how attn
 * writes them, where the flags allow it.  Every value meets the rules of
 * attn_value_fault: a mask holds 0 and 1 alone, a bias no nan or +inf, Q,
 * K and V only finite numbers.
 */
static enum attn_status
json_element(const struct json_src *js, const cJSON *j, size_t *cur,
    double *x, const size_t *path, size_t n)
{
	char p[PREVIEW_MAX + 4], msg[ATTN_MSG_MAX];
	int boolean = (js->flags & ATTN_READ_BOOL) && cJSON_IsBool(j);
	size_t at, tlen;
	int rc;

	if (!cJSON_IsNumber(j) && !cJSON_IsString(j) && !boolean) {
		snprintf(msg, sizeof msg, "expected a number, found %s",
		    json_kind(j));
		return fail_path(js, path, n, 0, msg);
	}
	/* Every accepted scalar moves the cursor, so that it stays on the
	 * token of j. */
	at = next_scalar(js, cur);
	tlen = *cur - at;
	if (boolean) {
		*x = cJSON_IsTrue(j) ? 1 : 0;
		return ATTN_OK;
	}
	if (cJSON_IsNumber(j)) {
		rc = attn_parse_number(js->buf + at, tlen, x);
		attn_text_preview(p, PREVIEW_MAX, js->buf + at, tlen);
		if (rc > 0)
			return attn_error_at(js->err, ATTN_ERR_DATA, js->name,
			    js->buf, js->len, at, "number out of range: '%s'",
			    p);
		if (rc < 0)	/* cJSON took what attn does not */
			return attn_error_at(js->err, ATTN_ERR_DATA, js->name,
			    js->buf, js->len, at, "not a number: '%s'", p);
		if (attn_value_fault(js->flags, *x, js->buf + at, tlen, msg,
		    sizeof msg) != 0)
			return attn_error_at(js->err, ATTN_ERR_DATA, js->name,
			    js->buf, js->len, at, "%s", msg);
		return ATTN_OK;
	}
	if (attn_parse_number(j->valuestring, strlen(j->valuestring), x) != 0 ||
	    isfinite(*x)) {
		/* "\u2212inf" decodes to a dash cJSON's string holds; point
		 * at the string, whose text may spell it either way. */
		if (attn_dash_fault(j->valuestring, strlen(j->valuestring),
		    msg, sizeof msg) < strlen(j->valuestring))
			return attn_error_at(js->err, ATTN_ERR_DATA, js->name,
			    js->buf, js->len, at, "%s", msg);
		return fail_path(js, path, n, 0,
		    "expected a number, found a string");
	}
	if (attn_value_fault(js->flags, *x, j->valuestring,
	    strlen(j->valuestring), msg, sizeof msg) != 0)
		return attn_error_at(js->err, ATTN_ERR_DATA, js->name, js->buf,
		    js->len, at, "%s", msg);
	return ATTN_OK;
}

/*
 * Read the array root, found in the text along base[0..nbase), into out.
 * Its shape is that of its first elements, all the way down; every other
 * sub-array must match it.  The walk is iterative, one cursor a depth.
 * The data grows as numbers are read rather than being allocated from
 * the shape: a ragged array's first rows may promise far more numbers
 * than the file holds.
 */
static enum attn_status
json_array(const struct json_src *js, const cJSON *root, const size_t *base,
    size_t nbase, struct attn_array *out)
{
	size_t path[PATH_MAX_LEN] = { 0 }, *idx = path + nbase;
	const cJSON *at[ATTN_MAX_DIMS], *j, *e;
	size_t shape[ATTN_MAX_DIMS] = { 0 }, ndim = 0, d, nv = 0, cap = 0;
	size_t cur, c;
	char msg[ATTN_MSG_MAX];
	enum attn_status st;
	double *data = NULL, *nd, x;	/* shape[0] x .. x shape[ndim - 1] */

	memset(out, 0, sizeof *out);
	if (cJSON_IsArray(root) && root->child == NULL &&
	    plain_take(js, base, nbase, out))
		return plain_values(js, base, nbase, out);
	if (nbase > 0)
		memcpy(path, base, nbase * sizeof *base);
	if (cJSON_IsObject(root) && nbase == 0)
		return fail_path(js, path, 0, 0, "a JSON object (a BUNDLE) "
		    "where a matrix was expected: a BUNDLE must be the only "
		    "operand");
	if (!cJSON_IsArray(root)) {
		snprintf(msg, sizeof msg, "expected an array, found %s",
		    json_kind(root));
		return fail_path(js, path, nbase, 0, msg);
	}

	/* The shape, from the first element at each depth. */
	for (j = root; cJSON_IsArray(j); j = j->child) {
		if (ndim == ATTN_MAX_DIMS)
			return fail_path(js, path, nbase + ndim, 0,
			    "too many dimensions: at most 4 are supported");
		for (c = 0, e = j->child; e != NULL; e = e->next)
			c++;
		if (c == 0)
			return fail_path(js, path, nbase + ndim, 0,
			    "empty matrix");
		shape[ndim] = c;
		idx[ndim++] = 0;
	}

	cur = json_locate(js->buf, js->len, path, nbase, 0);
	d = 0;
	at[0] = root->child;
	idx[0] = 0;
	for (;;) {
		j = at[d];
		if (j == NULL || idx[d] == shape[d]) {
			if (j != NULL || idx[d] < shape[d])
				goto ragged;
			if (d == 0)
				break;
			d--;
			at[d] = at[d]->next;
			idx[d]++;
			continue;
		}
		if (d + 1 < ndim) {
			if (!cJSON_IsArray(j)) {
				snprintf(msg, sizeof msg, "expected an array, "
				    "found %s", json_kind(j));
				st = fail_path(js, path, nbase + d + 1, 0, msg);
				goto fail;
			}
			d++;
			at[d] = j->child;
			idx[d] = 0;
			continue;
		}
		st = json_element(js, j, &cur, &x, path, nbase + d + 1);
		if (st != ATTN_OK)
			goto fail;
		if (nv == cap) {
			if ((nd = attn_grow_array(data, &cap, nv + 1,
			    sizeof *data)) == NULL) {
				st = attn_error_set(js->err, ATTN_ERR_NOMEM,
				    js->name, 0, 0,
				    "out of memory reading JSON input");
				goto fail;
			}
			data = nd;
		}
		data[nv++] = x;
		at[d] = j->next;
		idx[d]++;
	}

	/* Give back the slack of the doubling; keep it if realloc fails. */
	if ((nd = realloc(data, nv * sizeof *data)) != NULL)
		data = nd;
	out->ndim = ndim;
	memcpy(out->shape, shape, sizeof shape);
	out->data = data;
	return ATTN_OK;

ragged:
	/* Count the whole sub-array, then point at its first extra element
	 * or, when it is short, at its closing bracket. */
	for (c = idx[d]; j != NULL; j = j->next)
		c++;
	attn_ragged_msg(msg, sizeof msg, ndim, d, idx, c, shape[d]);
	idx[d] = shape[d] < c ? shape[d] : c;
	st = fail_path(js, path, nbase + d + 1, 0, msg);
fail:
	free(data);
	return st;
}

enum attn_status
attn_read_json(const char *name, const char *buf, size_t len, unsigned flags,
    struct attn_array *out, struct attn_error *err)
{
	struct plains plain = { NULL, 0, 0 };
	struct json_src js = { name, buf, len, flags, err, &plain };
	enum attn_status st;
	cJSON *root;

	memset(out, 0, sizeof *out);
	if ((st = json_parse(&js, &root)) == ATTN_OK) {
		st = json_array(&js, root, NULL, 0, out);
		cJSON_Delete(root);
	}
	plains_free(&plain);
	return st;
}

/* ---------------------------------------------------------------- layers */

/* A key for a message: previewed, since it is the user's text. */
static const char *
key_preview(char *p, const char *key)
{
	attn_text_preview(p, PREVIEW_MAX, key, strlen(key));
	return p;
}


/* Layer keys, in the order missing ones are reported; every W before
 * every b. */
enum layer_key { LK_WQ, LK_WK, LK_WV, LK_WO, LK_BQ, LK_BK, LK_BV, LK_BO,
    LK_COUNT };
static const char *const layer_keys[LK_COUNT] = {
	"W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V", "b_O"
};

/* The array of out that layer key k fills. */
static struct attn_array *
layer_array(struct attn_layer *out, size_t k)
{
	struct attn_array *const a[LK_COUNT] = {
		&out->w_q, &out->w_k, &out->w_v, &out->w_o,
		&out->b_q, &out->b_k, &out->b_v, &out->b_o,
	};

	return a[k];
}

/* Whether a and b are the same ASCII text but for case. */
static int
same_letters(const char *a, const char *b)
{
	for (; *a != '\0' && *b != '\0'; a++, b++)
		if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
			return 0;
	return *a == *b;
}

/* ": keys are case-sensitive; did you mean \"Q\"?" or ": did you mean
 * \"labels\"?" for an unknown key near one of names[0..n) (attn_suggest),
 * in buf; NULL when none is near. */
static const char *
key_suggestion(char *buf, size_t size, const char *key,
    const char *const *names, size_t n)
{
	const char *s = attn_suggest(key, names, n);

	if (s == NULL)
		return NULL;
	snprintf(buf, size, ": %sdid you mean \"%s\"?", same_letters(key, s) ?
	    "keys are case-sensitive; " : "", s);
	return buf;
}

/* What an unknown layer key may have meant, in buf or static. */
static const char *
layer_key_hint(char *buf, size_t size, const char *key)
{
	const char *s;

	if (strncmp(key, "in_proj_", 8) == 0)
		return ": nn.MultiheadAttention's in_proj_weight stacks W_Q, "
		    "W_K and W_V transposed; give W_Q = in_proj_weight[:E].T "
		    "and so on";
	if (strcmp(key, "Q") == 0 || strcmp(key, "K") == 0 ||
	    strcmp(key, "V") == 0 || strcmp(key, "X") == 0 ||
	    strcmp(key, "proj") == 0)
		return ": that is a BUNDLE key, and this file a BUNDLE, not a "
		    "layer";
	if ((s = key_suggestion(buf, size, key, layer_keys, LK_COUNT)) !=
	    NULL)
		return s;
	return " (expected W_Q, W_K, W_V, W_O, b_Q, b_K, b_V or b_O)";
}

/*
 * The layer object obj, found along base[0..nbase): its W and b arrays
 * (read finite, whatever the caller's flags), each checked to be a
 * matrix or a vector at its own position.  On failure the caller frees
 * *out.
 */
static enum attn_status
json_layer(const struct json_src *js, const cJSON *obj, const size_t *base,
    size_t nbase, struct attn_layer *out)
{
	size_t path[PATH_MAX_LEN] = { 0 }, m, k, where_bo = 0;
	int seen[LK_COUNT] = { 0 };
	char msg[ATTN_MSG_MAX], p[PREVIEW_MAX + 4], hint[64];
	struct json_src member = *js;
	struct attn_array *a;
	enum attn_status st;
	const cJSON *j;

	if (nbase > 0)
		memcpy(path, base, nbase * sizeof *base);
	if (!cJSON_IsObject(obj)) {
		snprintf(msg, sizeof msg, "a layer is a JSON object {\"W_Q\": "
		    ".., \"W_K\": .., \"W_V\": ..}, not %s", json_kind(obj));
		return fail_path(js, path, nbase, 0, msg);
	}
	member.flags = ATTN_READ_FINITE | ATTN_READ_LAYER;
	for (m = 0, j = obj->child; j != NULL; m++, j = j->next) {
		path[nbase] = m;
		for (k = 0; k < LK_COUNT; k++)
			if (strcmp(j->string, layer_keys[k]) == 0)
				break;
		if (k == LK_COUNT) {
			snprintf(msg, sizeof msg, "unknown layer key \"%s\"%s",
			    key_preview(p, j->string),
			    layer_key_hint(hint, sizeof hint, j->string));
			return fail_path(js, path, nbase + 1, 1, msg);
		}
		if (seen[k]) {
			snprintf(msg, sizeof msg, "repeated layer key \"%s\"",
			    layer_keys[k]);
			return fail_path(js, path, nbase + 1, 1, msg);
		}
		seen[k] = 1;
		if (k == LK_BO)
			where_bo = m;
		a = layer_array(out, k);
		if ((st = json_array(&member, j, path, nbase + 1, a)) !=
		    ATTN_OK)
			return st;
		if (k < LK_BQ && a->ndim != 2) {
			snprintf(msg, sizeof msg, "%s must be a matrix (a 2-D "
			    "array), not %zu-D", layer_keys[k], a->ndim);
			return fail_path(js, path, nbase + 1, 0, msg);
		}
		if (k >= LK_BQ && (a->ndim > 2 || (a->ndim == 2 &&
		    a->shape[0] != 1 && a->shape[1] != 1))) {
			if (a->ndim == 2)
				snprintf(msg, sizeof msg, "%s must be a vector "
				    "(one value per column of its W), not "
				    "%zux%zu", layer_keys[k], a->shape[0],
				    a->shape[1]);
			else
				snprintf(msg, sizeof msg, "%s must be a vector "
				    "(a 1-D array), not %zu-D", layer_keys[k],
				    a->ndim);
			return fail_path(js, path, nbase + 1, 0, msg);
		}
	}
	for (k = LK_WQ; k <= LK_WV; k++)
		if (!seen[k]) {
			snprintf(msg, sizeof msg, "layer has no \"%s\" (a layer "
			    "needs W_Q, W_K and W_V)", layer_keys[k]);
			return fail_path(js, path, nbase, 0, msg);
		}
	if (seen[LK_BO] && !seen[LK_WO]) {
		path[nbase] = where_bo;
		return fail_path(js, path, nbase + 1, 1, "b_O without W_O: "
		    "the output bias goes with the output projection");
	}
	return ATTN_OK;
}

/*
 * A layer given as something that is no JSON value at all (a .npy file,
 * a zip archive, a matrix as text or as printed), which the JSON parser
 * would refuse for a NUL byte or a stray word: say what a layer is and
 * what the file looks like.  A JSON value that is no object is told by
 * json_layer, at its place.
 */
static enum attn_status
layer_kind_fault(const char *name, const char *buf, size_t len,
    struct attn_error *err)
{
	struct attn_error scratch;
	const char *what;

	if (len >= 4 && memcmp(buf, "PK", 2) == 0 && (buf[2] == 3 ||
	    buf[2] == 5))
		what = "a zip archive";
	else
		switch (attn_format_guess(NULL, buf, len)) {
		case ATTN_FMT_JSON:
			return ATTN_OK;
		case ATTN_FMT_NPY:
			what = "a .npy file, one unnamed array";
			break;
		case ATTN_FMT_REPR:
			what = "an array as NumPy or PyTorch prints it, one "
			    "unnamed matrix";
			break;
		case ATTN_FMT_CSV:
		case ATTN_FMT_TSV:
		case ATTN_FMT_TEXT:
		case ATTN_FMT_AUTO:
		default:
			/* Not what is empty, or no text (json_parse names
			 * the encoding, where it fails). */
			if (skip_ws(buf, len, attn_bom_len(buf, len)) == len ||
			    attn_encoding_fault(&scratch, name, buf, len,
			    "JSON") != ATTN_OK)
				return ATTN_OK;
			what = "text (CSV, TSV or white space), one unnamed "
			    "matrix";
			break;
		}
	return attn_error_set(err, ATTN_ERR_DATA, name, 0, 0, "a layer holds "
	    "W_Q, W_K and W_V (and W_O, b_Q, ..) by name, as a JSON object "
	    "{\"W_Q\": .., \"W_K\": .., \"W_V\": ..}; this is %s", what);
}

enum attn_status
attn_read_layer(const char *name, const char *buf, size_t len,
    struct attn_layer *out, struct attn_error *err)
{
	struct plains plain = { NULL, 0, 0 };
	struct json_src js = { name, buf, len, ATTN_READ_FINITE, err, &plain };
	enum attn_status st;
	cJSON *root;

	memset(out, 0, sizeof *out);
	if ((st = layer_kind_fault(name, buf, len, err)) != ATTN_OK)
		return st;
	if ((st = json_parse(&js, &root)) == ATTN_OK) {
		st = json_layer(&js, root, NULL, 0, out);
		cJSON_Delete(root);
	}
	plains_free(&plain);
	if (st != ATTN_OK)
		attn_layer_free(out);
	return st;
}

struct attn_proj
attn_layer_proj(const struct attn_layer *l)
{
	struct attn_proj w;

	memset(&w, 0, sizeof w);
	if (l->w_q.ndim != 0)
		w.w_q = attn_array_matrix(&l->w_q);
	if (l->w_k.ndim != 0)
		w.w_k = attn_array_matrix(&l->w_k);
	if (l->w_v.ndim != 0)
		w.w_v = attn_array_matrix(&l->w_v);
	if (l->w_o.ndim != 0)
		w.w_o = attn_array_matrix(&l->w_o);
	if (l->b_q.ndim != 0)
		w.b_q = attn_array_matrix(&l->b_q);
	if (l->b_k.ndim != 0)
		w.b_k = attn_array_matrix(&l->b_k);
	if (l->b_v.ndim != 0)
		w.b_v = attn_array_matrix(&l->b_v);
	if (l->b_o.ndim != 0)
		w.b_o = attn_array_matrix(&l->b_o);
	return w;
}

void
attn_layer_free(struct attn_layer *l)
{
	size_t k;

	for (k = 0; k < LK_COUNT; k++)
		attn_array_free(layer_array(l, k));
}

/* ---------------------------------------------------------------- bundles */

/* Labels: an array of strings, member m of the labels object, which is
 * member lm of the bundle. */
static enum attn_status
json_labels(const struct json_src *js, const cJSON *arr, const char *which,
    size_t lm, size_t m, struct attn_labels *out)
{
	size_t path[3] = { lm, m, 0 }, n = 0, cur;
	char msg[ATTN_MSG_MAX];
	enum attn_status st;
	const cJSON *j;

	if (!cJSON_IsArray(arr)) {
		snprintf(msg, sizeof msg, "labels \"%s\" must be an array of "
		    "strings, not %s", which, json_kind(arr));
		return fail_path(js, path, 2, 0, msg);
	}
	/*
	 * Escapes such as \u001b and \t decode to control characters,
	 * which string_content_fault cannot see in the text: look in the
	 * decoded strings, and point at the label.  A cursor walks the
	 * elements alongside, since locating each from the top would make
	 * many labels quadratic.
	 */
	cur = skip_ws(js->buf, js->len,
	    json_locate(js->buf, js->len, path, 2, 0) + 1);
	for (j = arr->child; j != NULL; j = j->next, n++) {
		if (!cJSON_IsString(j)) {
			path[2] = n;
			snprintf(msg, sizeof msg, "labels \"%s\": expected a "
			    "string, found %s", which, json_kind(j));
			return fail_path(js, path, 3, 0, msg);
		}
		st = attn_label_control(js->err, js->name, js->buf, js->len, cur,
		    j->valuestring, strlen(j->valuestring));
		if (st != ATTN_OK)
			return st;
		cur = skip_ws(js->buf, js->len,
		    skip_value(js->buf, js->len, cur));
		if (cur < js->len && js->buf[cur] == ',')
			cur = skip_ws(js->buf, js->len, cur + 1);
	}
	if (n == 0)
		return ATTN_OK;
	if ((out->names = attn_alloc_array(n, sizeof *out->names)) == NULL)
		goto nomem;
	for (j = arr->child; j != NULL; j = j->next) {
		out->names[out->count] = attn_str_ndup(j->valuestring,
		    strlen(j->valuestring));
		if (out->names[out->count] == NULL)
			goto nomem;
		out->count++;
	}
	return ATTN_OK;
nomem:
	attn_labels_free(out);
	return attn_error_set(js->err, ATTN_ERR_NOMEM, js->name, 0, 0,
	    "out of memory reading labels");
}

/* The "labels" member (member lm of the bundle): {"query": [..], "key":
 * [..]}, both optional. */
static enum attn_status
json_bundle_labels(const struct json_src *js, const cJSON *obj, size_t lm,
    struct attn_bundle *b, size_t where[2])
{
	size_t path[2] = { lm, 0 }, m;
	char msg[ATTN_MSG_MAX], p[PREVIEW_MAX + 4], h[64];
	int seen_query = 0, seen_key = 0, *seen;
	struct attn_labels *dst;
	enum attn_status st;
	const cJSON *j;

	if (!cJSON_IsObject(obj)) {
		snprintf(msg, sizeof msg, "bundle key \"labels\" must be an "
		    "object with \"query\" and \"key\" lists, not %s",
		    json_kind(obj));
		return fail_path(js, path, 1, 0, msg);
	}
	for (m = 0, j = obj->child; j != NULL; m++, j = j->next) {
		path[1] = m;
		if (strcmp(j->string, "query") == 0) {
			seen = &seen_query;
			dst = &b->query_labels;
			where[0] = m;
		} else if (strcmp(j->string, "key") == 0) {
			seen = &seen_key;
			dst = &b->key_labels;
			where[1] = m;
		} else {
			static const char *const names[] = { "query", "key" };
			const char *hint = key_suggestion(h, sizeof h,
			    j->string, names, 2);

			snprintf(msg, sizeof msg, "unknown labels key \"%s\"%s",
			    key_preview(p, j->string), hint != NULL ? hint :
			    " (expected \"query\" or \"key\")");
			return fail_path(js, path, 2, 1, msg);
		}
		if (*seen) {
			snprintf(msg, sizeof msg, "repeated labels key \"%s\"",
			    j->string);
			return fail_path(js, path, 2, 1, msg);
		}
		*seen = 1;
		if ((st = json_labels(js, j, j->string, lm, m, dst)) != ATTN_OK)
			return st;
	}
	return ATTN_OK;
}

/* Each list of labels in the bundle must name every row of its matrix:
 * "query" the rows of Q, "key" those of K.  A stack of matrices (B x T x
 * d) shares one list, so it names the T rows of each matrix, not all
 * B * T.  where[] holds their member numbers in the labels object,
 * member lm of the bundle. */
static enum attn_status
check_label_counts(const struct json_src *js, const struct attn_bundle *b,
    size_t lm, const size_t where[2])
{
	const struct attn_labels *lab[2] = { &b->query_labels, &b->key_labels };
	/* With embeddings, X names both, or XQ the queries, XKV the keys. */
	const int self = b->embeddings && b->k.ndim == 0;
	const struct attn_array *arr[2] = { &b->q, self ? &b->q : &b->k };
	static const char *const which[2] = { "query", "key" };
	const char *const matrix[2] = {
		!b->embeddings ? "Q" : self ? "X" : "XQ",
		!b->embeddings ? "K" : self ? "X" : "XKV"
	};
	char msg[ATTN_MSG_MAX];
	size_t i, path[2];

	for (i = 0; i < 2; i++) {
		size_t nd = arr[i]->ndim;
		size_t rows = nd >= 2 ? arr[i]->shape[nd - 2] : 1;

		if (lab[i]->count == 0 || lab[i]->count == rows)
			continue;
		snprintf(msg, sizeof msg, "labels \"%s\" has %zu name%s but "
		    "%s%s has %zu row%s", which[i], lab[i]->count,
		    lab[i]->count == 1 ? "" : "s",
		    nd >= 3 ? "each matrix of " : "", matrix[i], rows,
		    rows == 1 ? "" : "s");
		path[0] = lm;
		path[1] = where[i];
		return fail_path(js, path, 2, 1, msg);
	}
	return ATTN_OK;
}

/* Bundle keys, in the order missing ones are reported; every key but
 * KEY_LABELS and KEY_PROJ names an array.  X, XQ and XKV are embeddings
 * for a layer, in place of Q, K and V. */
enum bundle_key { KEY_Q, KEY_K, KEY_V, KEY_MASK, KEY_BIAS, KEY_LABELS,
    KEY_PROJ, KEY_X, KEY_XQ, KEY_XKV, KEY_COUNT };
static const char *const bundle_keys[KEY_COUNT] = {
	"Q", "K", "V", "mask", "bias", "labels", "proj", "X", "XQ", "XKV"
};

/* Whether key k holds embeddings, or Q, K or V. */
#define IS_EMB(k) ((k) >= KEY_X)
#define IS_QKV(k) ((k) <= KEY_V)

/*
 * Key k may not join the keys already seen when one holds Q, K or V and
 * the other embeddings, or when X meets XQ or XKV: the message, or NULL
 * when it may.
 */
static const char *
key_conflict(size_t k, const int seen[KEY_COUNT], char *msg, size_t size)
{
	size_t o;

	for (o = 0; o < KEY_COUNT; o++) {
		if (!seen[o])
			continue;
		if ((IS_EMB(k) && IS_QKV(o)) || (IS_QKV(k) && IS_EMB(o))) {
			snprintf(msg, size, "bundle key \"%s\" with \"%s\": a "
			    "bundle holds Q, K and V, or embeddings (X, or XQ "
			    "and XKV) for a layer", bundle_keys[k],
			    bundle_keys[o]);
			return msg;
		}
		if ((k == KEY_X && (o == KEY_XQ || o == KEY_XKV)) ||
		    (o == KEY_X && (k == KEY_XQ || k == KEY_XKV))) {
			snprintf(msg, size, "bundle key \"%s\" with \"%s\": X "
			    "is for self-attention, XQ and XKV for "
			    "cross-attention; give one or the other",
			    bundle_keys[k], bundle_keys[o]);
			return msg;
		}
	}
	return NULL;
}

/* What a bundle lacks, once read: NULL when it is whole. */
static const char *
bundle_missing(const int seen[KEY_COUNT], char *msg, size_t size)
{
	size_t k;

	if (seen[KEY_X] || seen[KEY_XQ] || seen[KEY_XKV]) {
		if (seen[KEY_X] || (seen[KEY_XQ] && seen[KEY_XKV]))
			return NULL;
		snprintf(msg, size, "bundle has no \"%s\" (XQ and XKV go "
		    "together: cross-attention from embeddings)",
		    seen[KEY_XQ] ? "XKV" : "XQ");
		return msg;
	}
	if (seen[KEY_PROJ]) {
		snprintf(msg, size, "bundle has a layer (\"proj\") but no "
		    "embeddings: give \"X\", or \"XQ\" and \"XKV\", "
		    "instead of Q, K and V");
		return msg;
	}
	for (k = KEY_Q; k <= KEY_V; k++)
		if (!seen[k]) {
			snprintf(msg, size, "bundle has no \"%s\"",
			    bundle_keys[k]);
			return msg;
		}
	return NULL;
}

/*
 * The reader flags for the array under bundle key k.  Q, K and V are read
 * as the caller asks.  A mask is read as booleans (and may not hold an
 * infinity or nan); a bias may hold -inf, which is how a bias masks, but
 * not nan or +inf, and is no boolean.
 */
static unsigned
member_flags(size_t k, unsigned flags)
{
	switch (k) {
	case KEY_MASK:
		return (flags & ~(unsigned)(ATTN_READ_FINITE |
		    ATTN_READ_BIAS)) | ATTN_READ_BOOL;
	case KEY_BIAS:
		return (flags & ~(unsigned)(ATTN_READ_FINITE |
		    ATTN_READ_BOOL)) | ATTN_READ_BIAS;
	default:
		return flags;
	}
}

/*
 * Read a BUNDLE in document order, so that the first thing wrong in the
 * file is what is reported.
 */
enum attn_status
attn_read_bundle(const char *name, const char *buf, size_t len,
    unsigned flags, struct attn_bundle *out, struct attn_error *err)
{
	struct plains plain = { NULL, 0, 0 };
	struct json_src js = { name, buf, len, flags, err, &plain }, member;
	struct attn_array *arrays[KEY_COUNT];
	int seen[KEY_COUNT] = { 0 };
	char msg[ATTN_MSG_MAX], p[PREVIEW_MAX + 4], h[64];
	enum attn_status st;
	size_t m, k, labels_m = 0, proj_m = 0, where[2] = { 0, 0 };
	const cJSON *j;
	cJSON *root;

	memset(out, 0, sizeof *out);
	arrays[KEY_Q] = &out->q;
	arrays[KEY_K] = &out->k;
	arrays[KEY_V] = &out->v;
	arrays[KEY_MASK] = &out->mask;
	arrays[KEY_BIAS] = &out->bias;
	arrays[KEY_LABELS] = arrays[KEY_PROJ] = NULL;
	arrays[KEY_X] = arrays[KEY_XQ] = &out->q;
	arrays[KEY_XKV] = &out->k;
	if ((st = json_parse(&js, &root)) != ATTN_OK) {
		plains_free(&plain);
		return st;
	}
	if (!cJSON_IsObject(root)) {
		snprintf(msg, sizeof msg, "expected a JSON object (a BUNDLE), "
		    "found %s", json_kind(root));
		st = fail_path(&js, NULL, 0, 0, msg);
		goto done;
	}

	for (m = 0, j = root->child; j != NULL; m++, j = j->next) {
		for (k = 0; k < KEY_COUNT; k++)
			if (strcmp(j->string, bundle_keys[k]) == 0)
				break;
		if (k == KEY_COUNT) {
			const char *hint = key_suggestion(h, sizeof h,
			    j->string, bundle_keys, KEY_COUNT);

			snprintf(msg, sizeof msg, "unknown bundle key \"%s\"%s",
			    key_preview(p, j->string), hint != NULL ? hint :
			    " (keys: Q, K, V, mask, bias, labels, proj, X, XQ, "
			    "XKV)");
			st = fail_path(&js, &m, 1, 1, msg);
			goto done;
		}
		if (seen[k]) {
			snprintf(msg, sizeof msg, "repeated bundle key \"%s\"",
			    bundle_keys[k]);
			st = fail_path(&js, &m, 1, 1, msg);
			goto done;
		}
		if (key_conflict(k, seen, msg, sizeof msg) != NULL) {
			st = fail_path(&js, &m, 1, 1, msg);
			goto done;
		}
		seen[k] = 1;
		if (k == KEY_LABELS) {
			labels_m = m;
			st = json_bundle_labels(&js, j, m, out, where);
		} else if (k == KEY_PROJ) {
			proj_m = m;
			st = json_layer(&js, j, &m, 1, &out->proj);
		} else {
			member = js;
			member.flags = member_flags(k, flags);
			st = json_array(&member, j, &m, 1, arrays[k]);
		}
		if (st != ATTN_OK)
			goto done;
	}
	if (bundle_missing(seen, msg, sizeof msg) != NULL) {
		/* a layer without embeddings: point at the layer */
		st = seen[KEY_PROJ] && !seen[KEY_X] && !seen[KEY_XQ] &&
		    !seen[KEY_XKV] ? fail_path(&js, &proj_m, 1, 1, msg) :
		    fail_path(&js, NULL, 0, 0, msg);
		goto done;
	}
	out->embeddings = seen[KEY_X] || seen[KEY_XQ];
	st = check_label_counts(&js, out, labels_m, where);
done:
	cJSON_Delete(root);
	plains_free(&plain);
	if (st != ATTN_OK)
		attn_bundle_free(out);
	return st;
}

void
attn_bundle_free(struct attn_bundle *b)
{
	attn_array_free(&b->q);
	attn_array_free(&b->k);
	attn_array_free(&b->v);
	attn_array_free(&b->mask);
	attn_array_free(&b->bias);
	attn_labels_free(&b->query_labels);
	attn_labels_free(&b->key_labels);
	attn_layer_free(&b->proj);
	memset(b, 0, sizeof *b);
}
