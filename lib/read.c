/*
 * read.c - the front of the readers: guess a format, dispatch to the
 * reader for it, and free what the readers return.
 *
 * Guessing never fails: the extension wins when it names a format, else
 * the first bytes decide (JSON, .npy), and anything else is text whose
 * first data line picks the separator.  A wrong guess is then reported by
 * the reader, with a position, which says more than "unknown format".
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Doubling keeps every reader linear however its input is shaped. */
void *
grow_array(void *p, size_t *cap, size_t need, size_t elsize)
{
	size_t ncap = *cap != 0 ? *cap : 16, bytes;
	void *np;

	while (ncap < need)
		if (size_mul(ncap, 2, &ncap) != 0)
			return NULL;
	if (size_mul(ncap, elsize, &bytes) != 0)
		return NULL;
	if ((np = realloc(p, bytes)) == NULL)
		return NULL;
	*cap = ncap;
	return np;
}

/*
 * The offset of the first byte of s[0..len) that does not belong to a
 * well-formed UTF-8 character, or len when there is none.  Overlong
 * forms, UTF-16 surrogates and code points past U+10FFFF are ill-formed
 * (Unicode 15, table 3-7), as is a character cut off by the end.
 */
size_t
utf8_invalid(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, n, k;
	unsigned char lo, hi;

	while (i < len) {
		if (u[i] < 0x80) {
			i++;
			continue;
		}
		lo = 0x80;
		hi = 0xBF;
		if (u[i] >= 0xC2 && u[i] <= 0xDF) {
			n = 1;
		} else if (u[i] >= 0xE0 && u[i] <= 0xEF) {
			n = 2;
			if (u[i] == 0xE0)
				lo = 0xA0;	/* overlong */
			else if (u[i] == 0xED)
				hi = 0x9F;	/* surrogates */
		} else if (u[i] >= 0xF0 && u[i] <= 0xF4) {
			n = 3;
			if (u[i] == 0xF0)
				lo = 0x90;	/* overlong */
			else if (u[i] == 0xF4)
				hi = 0x8F;	/* past U+10FFFF */
		} else {
			return i;	/* 0x80-0xC1 or 0xF5-0xFF */
		}
		if (len - i <= n)
			return i;
		if (u[i + 1] < lo || u[i + 1] > hi)
			return i;
		for (k = 2; k <= n; k++)
			if (u[i + k] < 0x80 || u[i + k] > 0xBF)
				return i;
		i += n + 1;
	}
	return len;
}

/*
 * Labels reach the terminal as they are, so one holding a control
 * character (an ESC starts an escape sequence, a tab or newline breaks the
 * columns) is refused, by both readers with the same words.  The control
 * characters are C0 and DEL; bytes of multi-byte UTF-8 characters never
 * fall in those ranges, so the check is bytewise.
 */
enum attn_status
label_control(struct attn_error *err, const char *name, const char *buf,
    size_t len, size_t off, const char *label, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if ((unsigned char)label[i] < 0x20 || label[i] == 0x7F)
			return error_at(err, ATTN_ERR_DATA, name, buf, len, off,
			    "control character 0x%02X in a label",
			    (unsigned)(unsigned char)label[i]);
	return ATTN_OK;
}

/* Spreadsheets on Windows save "Unicode text" as UTF-16 with a byte order
 * mark; the readers name it rather than trip on its NUL bytes. */
int
utf16_bom(const char *buf, size_t len)
{
	const unsigned char *u = (const unsigned char *)buf;

	return len >= 2 && ((u[0] == 0xFF && u[1] == 0xFE) ||
	    (u[0] == 0xFE && u[1] == 0xFF));
}

/* The extension of the last path component of name ("" when none). */
static const char *
extension(const char *name, size_t *elen)
{
	const char *base, *dot;

	*elen = 0;
	if (name == NULL)
		return "";
	base = strrchr(name, '/');
	base = base != NULL ? base + 1 : name;
	dot = strrchr(base, '.');
	if (dot == NULL || dot == base)
		return "";
	*elen = strlen(dot + 1);
	return dot + 1;
}

/*
 * Which separator the text in buf uses, judged by its first data line
 * (blank lines and '#' comments are skipped, as the text reader skips
 * them): a comma means CSV, else a tab TSV, else white space.
 */
static enum attn_format
guess_text(const char *buf, size_t len)
{
	size_t i = bom_len(buf, len), end;
	const char *nl;
	int comma, tab;

	while (i < len) {
		nl = memchr(buf + i, '\n', len - i);
		end = nl != NULL ? (size_t)(nl - buf) : len;
		while (i < end && (buf[i] == ' ' || buf[i] == '\t' ||
		    buf[i] == '\r'))
			i++;
		if (i < end && buf[i] != '#') {
			comma = memchr(buf + i, ',', end - i) != NULL;
			tab = memchr(buf + i, '\t', end - i) != NULL;
			if (comma)
				return ATTN_FMT_CSV;
			return tab ? ATTN_FMT_TSV : ATTN_FMT_TEXT;
		}
		i = end + 1;
	}
	return ATTN_FMT_TEXT;
}

/*
 * .txt names text but not its separator (numpy.savetxt writes spaces by
 * default and commas when asked), so for it the content still chooses
 * among CSV, TSV and white space.
 */
enum attn_format
attn_format_guess(const char *name, const char *buf, size_t len)
{
	const char *ext;
	size_t elen, i;

	ext = extension(name, &elen);
	if (word_is(ext, elen, "json"))
		return ATTN_FMT_JSON;
	if (word_is(ext, elen, "csv"))
		return ATTN_FMT_CSV;
	if (word_is(ext, elen, "tsv"))
		return ATTN_FMT_TSV;
	if (word_is(ext, elen, "npy"))
		return ATTN_FMT_NPY;
	if (word_is(ext, elen, "txt"))
		return guess_text(buf, len);

	if (len >= 6 && memcmp(buf, "\x93NUMPY", 6) == 0)
		return ATTN_FMT_NPY;
	i = bom_len(buf, len);
	while (i < len && (buf[i] == ' ' || buf[i] == '\t' ||
	    buf[i] == '\r' || buf[i] == '\n'))
		i++;
	if (i < len && (buf[i] == '[' || buf[i] == '{'))
		return ATTN_FMT_JSON;
	if (len - i >= 6 && memcmp(buf + i, "\x93NUMPY", 6) == 0)
		return ATTN_FMT_NPY;
	return guess_text(buf, len);
}

enum attn_status
attn_read_array(const char *name, const char *buf, size_t len,
    enum attn_format fmt, unsigned flags, struct attn_array *out,
    struct attn_error *err)
{
	memset(out, 0, sizeof *out);
	if (fmt == ATTN_FMT_AUTO)
		fmt = attn_format_guess(name, buf, len);
	switch (fmt) {
	case ATTN_FMT_JSON:
		return read_json(name, buf, len, flags, out, err);
	case ATTN_FMT_CSV:
	case ATTN_FMT_TSV:
	case ATTN_FMT_TEXT:
		return read_text(name, buf, len, fmt, flags, out, err);
	case ATTN_FMT_NPY:
		/* The .npy reader is still to come; say so rather than
		 * misread the binary as text. */
		return error_set(err, ATTN_ERR_DATA, name, 0, 0,
		    ".npy input is not supported yet");
	case ATTN_FMT_AUTO:
		break;
	}
	return error_set(err, ATTN_ERR_INTERNAL, name, 0, 0,
	    "unknown input format %d", (int)fmt);
}

/*
 * A 1-D array of n numbers is a 1 x n row; a 3-D or 4-D array is seen as
 * its matrices stacked on top of each other (blocks of rows, as the csv
 * output writes stacks), since C order lays them out that way.
 */
struct attn_matrix
attn_array_matrix(const struct attn_array *a)
{
	struct attn_matrix m;
	size_t d;

	memset(&m, 0, sizeof m);
	if (a->ndim == 0)
		return m;
	if (a->ndim == 1) {
		m.rows = 1;
		m.cols = a->shape[0];
	} else {
		/* The product counts values the reader stored: no overflow. */
		m.rows = 1;
		for (d = 0; d + 1 < a->ndim; d++)
			m.rows *= a->shape[d];
		m.cols = a->shape[a->ndim - 1];
	}
	m.stride = m.cols;
	m.data = a->data;
	return m;
}

void
attn_labels_free(struct attn_labels *l)
{
	size_t i;

	for (i = 0; i < l->count; i++)
		free(l->names[i]);
	free(l->names);
	memset(l, 0, sizeof *l);
}

void
attn_array_free(struct attn_array *a)
{
	free(a->data);
	attn_labels_free(&a->row_labels);
	memset(a, 0, sizeof *a);
}

int
attn_is_bundle(const char *buf, size_t len)
{
	size_t i = bom_len(buf, len);

	while (i < len && (buf[i] == ' ' || buf[i] == '\t' ||
	    buf[i] == '\r' || buf[i] == '\n'))
		i++;
	return i < len && buf[i] == '{';
}
