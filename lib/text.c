/*
 * text.c - the rules every reader shares: the encoding of an input
 * (UTF-16, NUL bytes, ill-formed UTF-8), labels without control
 * characters, the rules a value must meet for its role (mask, bias, Q, K
 * and V), numbers spelt as attn does not read them (a Unicode dash where
 * a number needs '-', Fortran's exponent D, a decimal comma), the names
 * of ragged sub-arrays, and "did you mean" for keys.  Bytes and UTF-8
 * themselves are utf8.c's.
 *
 * They sit apart from read.c, which only dispatches to the readers, so
 * that a reader depends on this file and read.c on the readers, never in
 * a cycle.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"


/*
 * A label holding a control character (an ESC or a CSI starts an escape
 * sequence, a tab or newline breaks the columns) is refused where it
 * stands, by every reader with the same words: C0 and DEL by their byte,
 * C1 (U+0080 to U+009F, two bytes in UTF-8) by its code point.  What is
 * printed is escaped anyway (attn_text_escape); refusing says where the
 * label is, which an escape in a table would not.
 */
enum attn_status
attn_label_control(struct attn_error *err, const char *name, const char *buf,
    size_t len, size_t off, const char *label, size_t n)
{
	size_t i = 0;
	long code;

	while (i < n) {
		i += attn_utf8_char(label + i, n - i, &code);
		if (attn_char_is_control(code))
			return attn_error_at(err, ATTN_ERR_DATA, name, buf, len, off,
			    code < 0x80 ? "control character 0x%02lX in a label" :
			    "control character U+%04lX in a label", code);
	}
	return ATTN_OK;
}

/*
 * The rules are checked mask first: a mask holds 0 and 1 (false and true
 * read as those) and nothing else, whatever else the flags say, since a
 * mask is read with ATTN_READ_BOOL alone or with the finite rule, which
 * names Q, K, V and dO.  Any other number in a mask is most likely an
 * additive mask (Hugging Face's 0 and finfo.min, or -1e9, or -inf) given
 * as a keep-mask, which "nonzero keeps" would read inverted: the message
 * says where it belongs.  A bias may hold -inf (it masks a key, as an
 * additive mask does) but not +inf or nan, which would make its whole row
 * nan.
 */
int
attn_value_fault(unsigned flags, double x, const char *s, size_t n,
    char *msg, size_t size)
{
	char p[ATTN_PREVIEW_MAX + 4];

	if (attn_value_plain(flags, x))
		return 0;
	attn_text_preview(p, ATTN_PREVIEW_MAX, s, n);
	if (flags & ATTN_READ_DROPOUT)
		snprintf(msg, size, "non-finite number '%s' (a dropout mask "
		    "holds booleans, or S_dmask's numbers, negative where "
		    "dropped)", p);
	else if (flags & ATTN_READ_BOOL)
		snprintf(msg, size, MASK_VALUE_MSG, p);
	else if (flags & (ATTN_READ_LAYER | ATTN_READ_SINKS |
	    ATTN_READ_SLOPES))
		snprintf(msg, size, "non-finite number '%s' (%s must be "
		    "finite)", p, flags & ATTN_READ_LAYER ?
		    "a layer's weights and biases" : flags & ATTN_READ_SINKS ?
		    "sinks" : "ALiBi slopes");
	else if (flags & ATTN_READ_INT)
		snprintf(msg, size, "non-finite number '%s' (sequence lengths "
		    "and offsets are whole numbers from 0)", p);
	else if (flags & ATTN_READ_FINITE)
		snprintf(msg, size, "non-finite number '%s' (Q, K, V and dO "
		    "must be finite)", p);
	else if ((flags & ATTN_READ_BIAS) && (isnan(x) || x > 0))
		snprintf(msg, size, "'%s' in a bias: a bias holds finite "
		    "numbers, or -inf to mask a key", p);
	else
		return 0;
	return -1;
}

/*
 * The dashes that word processors, web pages and typeset papers put where
 * a number has its minus sign, by their UTF-8 bytes: U+2010 to U+2015,
 * U+2212 (the mathematical minus), and the small and full-width
 * hyphen-minus.  Each is three bytes, led by 0xE2 or 0xEF.
 */
static const struct {
	char utf8[4];
	unsigned code;
	const char *name;
} dashes[] = {
	{ "\xE2\x80\x90", 0x2010, "HYPHEN" },
	{ "\xE2\x80\x91", 0x2011, "NON-BREAKING HYPHEN" },
	{ "\xE2\x80\x92", 0x2012, "FIGURE DASH" },
	{ "\xE2\x80\x93", 0x2013, "EN DASH" },
	{ "\xE2\x80\x94", 0x2014, "EM DASH" },
	{ "\xE2\x80\x95", 0x2015, "HORIZONTAL BAR" },
	{ "\xE2\x88\x92", 0x2212, "MINUS SIGN" },
	{ "\xEF\xB9\xA3", 0xFE63, "SMALL HYPHEN-MINUS" },
	{ "\xEF\xBC\x8D", 0xFF0D, "FULLWIDTH HYPHEN-MINUS" },
};

#define NDASHES (sizeof dashes / sizeof dashes[0])

/* The dash at s[0..n), as an index of dashes[], or NDASHES. */
static size_t
dash_at(const char *s, size_t n)
{
	size_t d;

	if (n >= 3 && ((unsigned char)s[0] == 0xE2 || (unsigned char)s[0] ==
	    0xEF))
		for (d = 0; d < NDASHES; d++)
			if (memcmp(s, dashes[d].utf8, 3) == 0)
				return d;
	return NDASHES;
}

/*
 * A text that is a number once its dashes are '-' was meant as one: copy
 * it with each dash replaced (the copy is no longer) and parse that.
 */
size_t
attn_dash_fault(const char *s, size_t n, char *msg, size_t size)
{
	char p[ATTN_PREVIEW_MAX + 4], *copy;
	size_t i, k, first = n, d, fd = 0;
	double x;
	int rc;

	/* A dash is never ASCII. */
	for (i = attn_ascii_len(s, n); i < n; i++)
		if (dash_at(s + i, n - i) < NDASHES)
			break;
	if (i == n || (copy = attn_mem_alloc(n)) == NULL)
		return n;
	memcpy(copy, s, i);	/* what comes before the first dash */
	for (k = i; i < n; i++) {
		if ((d = dash_at(s + i, n - i)) < NDASHES) {
			if (first == n) {
				first = i;
				fd = d;
			}
			copy[k++] = '-';
			i += 2;
		} else {
			copy[k++] = s[i];
		}
	}
	rc = attn_parse_number(copy, k, &x);
	attn_mem_free(copy, n);
	if (rc < 0)
		return n;
	attn_text_preview(p, ATTN_PREVIEW_MAX, s, n);
	snprintf(msg, size, "'%s' has U+%04X %s where a number needs the "
	    "ASCII '-': replace it, e.g. with sed 's/%s/-/g'", p,
	    dashes[fd].code, dashes[fd].name, dashes[fd].utf8);
	return first;
}

/* Whether s[0..n) is ASCII digits, at least one. */
static int
all_digits(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n && s[i] >= '0' && s[i] <= '9'; i++)
		;
	return n > 0 && i == n;
}

/*
 * s[0..n), which is no number, with the byte at `at` replaced by c: a
 * number?  For the spellings that name a cause.
 */
static int
number_with(const char *s, size_t n, size_t at, char c)
{
	char buf[64];
	double x;

	if (n > sizeof buf)
		return 0;
	memcpy(buf, s, n);
	buf[at] = c;
	return attn_parse_number(buf, n, &x) >= 0;
}

size_t
attn_number_fault(const char *s, size_t n, char *msg, size_t size)
{
	char p[ATTN_PREVIEW_MAX + 4];
	size_t at, k;
	const char *comma;

	if ((at = attn_dash_fault(s, n, msg, size)) < n)
		return at;
	attn_text_preview(p, ATTN_PREVIEW_MAX, s, n);
	/* Fortran's double-precision exponent, 1d0 or 1.5D-03: after a
	 * digit or a point, before a digit or a sign. */
	for (at = 1; at + 1 < n; at++)
		if ((s[at] == 'd' || s[at] == 'D') && number_with(s, n, at,
		    'e')) {
			snprintf(msg, size, "'%s' has Fortran's exponent %c, "
			    "where a number needs e: replace it, e.g. with "
			    "sed 's/\\([0-9.]\\)[dD]\\([-+0-9]\\)/\\1e\\2/g'",
			    p, s[at]);
			return at;
		}
	/* A decimal comma: digits, one comma, digits (5,0 or -0,25). */
	k = n > 0 && (s[0] == '-' || s[0] == '+');
	if ((comma = memchr(s, ',', n)) != NULL) {
		at = (size_t)(comma - s);
		if (all_digits(s + k, at - k) && all_digits(s + at + 1,
		    n - at - 1)) {
			snprintf(msg, size, "'%s' has a decimal comma: attn "
			    "reads '.' as the decimal point (and ',' as a "
			    "separator); write %.*s.%.*s", p, (int)at, s,
			    (int)(n - at - 1), s + at + 1);
			return at;
		}
	}
	return n;
}

/* Names of the sub-arrays of an n-D array, by how many dimensions they
 * hold, and of what they hold. */
static const char *const level_name[] = { "value", "row", "matrix", "stack" };
static const char *const level_plural[] = {
	"values", "rows", "matrices", "stacks"
};

/*
 * Name the sub-array at depth d (1 <= d < ndim) by its indices idx[0..d),
 * outermost last: "row 2 of matrix 1".
 */
static void
name_subarray(char *buf, size_t size, size_t ndim, size_t d,
    const size_t *idx)
{
	size_t e, used = 0;
	int n;

	buf[0] = '\0';
	for (e = d; e >= 1 && used < size; e--) {
		n = snprintf(buf + used, size - used, "%s%s %zu",
		    e == d ? "" : " of ", level_name[ndim - e], idx[e - 1] + 1);
		if (n < 0)
			break;
		used += (size_t)n;
	}
}

void
attn_ragged_msg(char *msg, size_t size, size_t ndim, size_t d,
    const size_t *idx, size_t count, size_t want)
{
	static const size_t first_idx[ATTN_MAX_DIMS];
	char where[96], first[96];

	name_subarray(where, sizeof where, ndim, d, idx);
	name_subarray(first, sizeof first, ndim, d, first_idx);
	snprintf(msg, size, "ragged array: %s has %zu %s but %s has %zu",
	    where, count, count == 1 ? level_name[ndim - d - 1] :
	    level_plural[ndim - d - 1], first, want);
}

enum attn_status
attn_encoding_fault(struct attn_error *err, const char *name,
    const char *buf, size_t len, const char *what)
{
	const char *nul;
	size_t i;

	if (attn_utf16_bom(buf, len))
		return attn_error_at(err, ATTN_ERR_DATA, name, buf, len, 0,
		    "UTF-16 text (it starts with a UTF-16 byte order mark): %s "
		    "must be UTF-8; convert it first, e.g. with iconv -f UTF-16 "
		    "-t UTF-8", what);
	if (len > 0 && (nul = memchr(buf, '\0', len)) != NULL)
		return attn_error_at(err, ATTN_ERR_DATA, name, buf, len,
		    (size_t)(nul - buf), "NUL byte in %s input", what);
	if ((i = attn_utf8_invalid(buf, len)) < len)
		return attn_error_at(err, ATTN_ERR_DATA, name, buf, len, i,
		    "invalid UTF-8: byte 0x%02X (%s must be UTF-8)",
		    (unsigned)(unsigned char)buf[i], what);
	return ATTN_OK;
}

/* a in lower case, for ASCII letters. */
static char
ascii_lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* The longest word attn_suggest compares: keys and options are short. */
#define SUGGEST_MAX 32

/* The optimal string alignment distance between a and b (each at most
 * SUGGEST_MAX bytes), ignoring ASCII case: the Levenshtein distance with
 * a swap of neighbours counting 1, as typing slips are. */
static size_t
edit_distance(const char *a, size_t la, const char *b, size_t lb)
{
	size_t d[SUGGEST_MAX + 1][SUGGEST_MAX + 1], i, j;

	for (i = 0; i <= la; i++)
		d[i][0] = i;
	for (j = 0; j <= lb; j++)
		d[0][j] = j;
	for (i = 1; i <= la; i++)
		for (j = 1; j <= lb; j++) {
			size_t best = d[i - 1][j - 1] +
			    (ascii_lower(a[i - 1]) != ascii_lower(b[j - 1]));

			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && ascii_lower(a[i - 1]) ==
			    ascii_lower(b[j - 2]) && ascii_lower(a[i - 2]) ==
			    ascii_lower(b[j - 1]) && d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[la][lb];
}

/* The one name among names[0..n) that the lw bytes of word (at least
 * 3) begin, ignoring ASCII case (top for top-left), else NULL. */
static const char *
unique_prefix(const char *word, size_t lw, const char *const *names,
    size_t n)
{
	const char *found = NULL;
	size_t k, i;

	if (lw < 3)
		return NULL;
	for (k = 0; k < n; k++) {
		for (i = 0; i < lw && names[k][i] != '\0' &&
		    ascii_lower(word[i]) == ascii_lower(names[k][i]); i++)
			;
		if (i < lw)
			continue;
		if (found != NULL)
			return NULL;
		found = names[k];
	}
	return found;
}

const char *
attn_suggest(const char *word, const char *const *names, size_t n)
{
	const size_t lw = strlen(word);
	const char *best = NULL;
	size_t k, dbest = SIZE_MAX;
	int tie = 0;

	if (lw > SUGGEST_MAX)
		return NULL;
	for (k = 0; k < n; k++) {
		const size_t ln = strlen(names[k]);
		size_t d, most = ln < 3 ? 0 : ln <= 5 ? 1 : 2;

		if (ln > SUGGEST_MAX)
			continue;
		d = edit_distance(word, lw, names[k], ln);
		if (d == 0)	/* the same but for case */
			return names[k];
		if (d <= most && d < dbest) {
			best = names[k];
			dbest = d;
			tie = 0;
		} else if (d <= most && d == dbest &&
		    strcmp(best, names[k]) != 0)
			tie = 1;
	}
	/* two names as near (grad_x: grad_q, grad_k and grad_v) are a
	 * guess, not a suggestion */
	if (tie)
		return NULL;
	return best != NULL ? best : unique_prefix(word, lw, names, n);
}
