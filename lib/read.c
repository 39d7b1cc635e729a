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
	size_t i = attn_bom_len(buf, len), end;
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
	if (attn_word_is(ext, elen, "json"))
		return ATTN_FMT_JSON;
	if (attn_word_is(ext, elen, "csv"))
		return ATTN_FMT_CSV;
	if (attn_word_is(ext, elen, "tsv"))
		return ATTN_FMT_TSV;
	if (attn_word_is(ext, elen, "npy"))
		return ATTN_FMT_NPY;
	if (attn_word_is(ext, elen, "txt"))
		return guess_text(buf, len);

	if (len >= 6 && memcmp(buf, "\x93NUMPY", 6) == 0)
		return ATTN_FMT_NPY;
	i = attn_bom_len(buf, len);
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
		return attn_read_json(name, buf, len, flags, out, err);
	case ATTN_FMT_CSV:
	case ATTN_FMT_TSV:
	case ATTN_FMT_TEXT:
		return attn_read_text(name, buf, len, fmt, flags, out, err);
	case ATTN_FMT_NPY:
		/* The .npy reader is still to come; say so rather than
		 * misread the binary as text. */
		return attn_error_set(err, ATTN_ERR_DATA, name, 0, 0,
		    ".npy input is not supported yet");
	case ATTN_FMT_AUTO:
		break;
	}
	return attn_error_set(err, ATTN_ERR_INTERNAL, name, 0, 0,
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
	size_t i = attn_bom_len(buf, len);

	while (i < len && (buf[i] == ' ' || buf[i] == '\t' ||
	    buf[i] == '\r' || buf[i] == '\n'))
		i++;
	return i < len && buf[i] == '{';
}
