/*
 * read_text.c - CSV, TSV and white-space text (numpy.savetxt's default)
 * into a rows x cols array, with an optional header row (its names kept
 * as column labels) and an optional first column of row labels.
 *
 * One pass over the buffer, line by line: each line is split into fields
 * (offsets into buf, nothing copied), then classified.  Values and labels
 * go into arrays that grow geometrically, and no step goes back further
 * than the start of its line, so the reader is linear in the input.
 * Every error carries the byte offset of what is wrong; attn_error_at turns it
 * into LINE:COLUMN.  Lines end in LF or CRLF, and every line but a
 * comment must be UTF-8, since labels reach the output: a lone CR or a
 * Latin-1 byte is told where it is rather than found later inside a
 * field; for the same reason no label (row label or header name) may
 * hold a control character.
 *
 * A quoted field is its contents (RFC 4180), so "1","0" is a row of
 * numbers, as csv.writer(quoting=QUOTE_ALL) and spreadsheets write them.
 * Quoting keeps one thing: in the label column of a file whose rows have
 * labels, a quoted number ("2") is a label, as attn's --header output
 * writes such labels, where an unquoted one is told as a missing label.
 * A one-column file whose first line is no number is read with that line
 * as its header, and the array gets a notice saying so: there a header
 * and a mistyped value ("l" for "1") look the same.  So is a first CSV or
 * TSV row written 0,1,..,n-1 over rows that are not, pandas' header of
 * unnamed columns (index_names says which rows; dropped at the end).
 * With ATTN_READ_BOOL (masks) the words true and false, in any case
 * (numpy prints True and False), count as numbers everywhere a number is
 * looked for, so that a mask's first row is not taken for a header nor
 * its first column for labels.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"


/* A field of a line: buf[off, off + len), quotes included when quoted. */
struct field {
	size_t off;
	size_t len;
	int quoted;
};

/* A growable array of fields. */
struct fields {
	struct field *v;
	size_t n, cap;
};

struct text_reader {
	const char *name;
	const char *buf;
	size_t len;
	enum attn_format fmt;
	unsigned flags;
	struct attn_error *err;

	struct fields line;	/* the fields of the current line */
	struct fields header;	/* the header row, when there is one */
	size_t header_start;	/* the header line, from its first */
	size_t header_end;	/* non-blank byte to its end */
	int have_header;
	int index_header;	/* its first field is empty (pandas) */

	size_t rows;		/* data rows read so far */
	size_t cols;		/* values a row, fixed by row 1 */
	int labelled;		/* row 1 starts with a label */

	/* Row 1 written 0,1,..,cols-1 (range_row; its text runs from
	 * range_off to range_end, its fields are kept in header's vector,
	 * unused without a header), and whether a later row holds other
	 * numbers (range_under): then row 1 is pandas' header of unnamed
	 * columns, dropped when the file is read (index_row_end). */
	int range_row, range_under;
	size_t range_off, range_end;

	int ascii;		/* the current line is all ASCII */

	double *vals;		/* rows x cols, row-major */
	size_t nvals, capvals;
	char **labels;		/* one a row when labelled */
	size_t caplabels;
	int fixed;		/* vals and labels are a chunk's share of
				 * one block (read_chunks): never grown */
};

static enum attn_status
nomem(struct text_reader *r)
{
	return attn_error_input_nomem(r->err, r->name, "reading text input");
}

/* A chunk has more rows than its lines (read_chunks): never, since each
 * line is at most one row. */
static enum attn_status
full(struct text_reader *r)
{
	return attn_error_set(r->err, ATTN_ERR_INTERNAL, r->name, 0, 0,
	    "a chunk of text holds more rows than it has lines");
}

/* Report the data error msg at byte offset off. */
static enum attn_status
fail_at(struct text_reader *r, size_t off, const char *msg)
{
	return attn_error_at(r->err, ATTN_ERR_DATA, r->name, r->buf, r->len, off,
	    "%s", msg);
}

/* Report a data error about field f: before, the field quoted, after. */
static enum attn_status
fail_field(struct text_reader *r, const struct field *f, const char *before,
    const char *after)
{
	char p[ATTN_PREVIEW_MAX + 4];

	attn_text_preview(p, ATTN_PREVIEW_MAX, r->buf + f->off, f->len);
	return attn_error_at(r->err, ATTN_ERR_DATA, r->name, r->buf, r->len,
	    f->off, "%s'%s'%s", before, p, after);
}

/* Blanks trimmed around a field: tabs too, except where they separate. */
static int
is_blank(const struct text_reader *r, char c)
{
	return c == ' ' || (c == '\t' && r->fmt != ATTN_FMT_TSV);
}

/* The slow part of push_field: room for one more field. */
static enum attn_status
grow_fields(struct text_reader *r)
{
	struct field *nv;

	nv = attn_grow_array(r->line.v, &r->line.cap, r->line.n + 1,
	    sizeof *nv);
	if (nv == NULL)
		return nomem(r);
	r->line.v = nv;
	return ATTN_OK;
}

static inline enum attn_status
push_field(struct text_reader *r, size_t off, size_t len, int quoted)
{
	if (r->line.n == r->line.cap && grow_fields(r) != ATTN_OK)
		return ATTN_ERR_NOMEM;
	r->line.v[r->line.n].off = off;
	r->line.v[r->line.n].len = len;
	r->line.v[r->line.n].quoted = quoted;
	r->line.n++;
	return ATTN_OK;
}

/*
 * A quoted field starts at buf[i] == '"' on the line ending at le: find
 * its closing quote ("" inside is an escaped quote) and return the offset
 * just past it in *end.
 */
static enum attn_status
scan_quoted(struct text_reader *r, size_t i, size_t le, size_t *end)
{
	size_t j = i + 1;

	while (j < le) {
		if (r->buf[j] == '"') {
			if (j + 1 < le && r->buf[j + 1] == '"') {
				j += 2;
				continue;
			}
			*end = j + 1;
			return ATTN_OK;
		}
		j++;
	}
	return fail_at(r, i, "unterminated quoted field");
}

/* Split buf[ls, le) on runs of spaces and tabs (numpy.savetxt). */
static enum attn_status
split_space(struct text_reader *r, size_t ls, size_t le)
{
	const char *b = r->buf;
	size_t i = ls, j = 0;
	enum attn_status st;

	for (;;) {
		while (i < le && (b[i] == ' ' || b[i] == '\t'))
			i++;
		if (i == le)
			return ATTN_OK;
		if (b[i] == '"') {
			if ((st = scan_quoted(r, i, le, &j)) != ATTN_OK)
				return st;
			if (j < le && b[j] != ' ' && b[j] != '\t')
				return fail_at(r, j,
				    "unexpected text after a quoted field");
			st = push_field(r, i, j - i, 1);
		} else {
			for (j = i; j < le && b[j] != ' ' && b[j] != '\t'; j++)
				;
			st = push_field(r, i, j - i, 0);
		}
		if (st != ATTN_OK)
			return st;
		i = j;
	}
}

/*
 * Split buf[ls, le) on commas (CSV) or tabs (TSV).  Fields keep their
 * emptiness: whether an empty field is an error depends on the row (a
 * pandas header starts with one).
 */
static enum attn_status
split_sep(struct text_reader *r, size_t ls, size_t le)
{
	const char *b = r->buf, *sep_at;
	char sep = r->fmt == ATTN_FMT_CSV ? ',' : '\t';
	size_t i = ls, j = 0, k;
	enum attn_status st;

	for (;;) {
		while (i < le && is_blank(r, b[i]))
			i++;
		if (i < le && b[i] == '"') {
			if ((st = scan_quoted(r, i, le, &j)) != ATTN_OK)
				return st;
			st = push_field(r, i, j - i, 1);
			while (j < le && is_blank(r, b[j]))
				j++;
			if (st == ATTN_OK && j < le && b[j] != sep)
				return fail_at(r, j,
				    "unexpected text after a quoted field");
		} else {
			/* memchr: the C library's, many bytes at a time */
			sep_at = memchr(b + i, sep, le - i);
			j = sep_at != NULL ? (size_t)(sep_at - b) : le;
			for (k = j; k > i && is_blank(r, b[k - 1]); k--)
				;
			st = push_field(r, i, k - i, 0);
		}
		if (st != ATTN_OK)
			return st;
		if (j >= le)
			return ATTN_OK;
		i = j + 1;	/* past the separator */
	}
}

/* Whether field f is empty: nothing, or "" (a quoted nothing). */
static int
is_empty(const struct field *f)
{
	return f->len == 0 || (f->quoted && f->len == 2);
}

/* Parse field f as a number (or, for a mask, true or false as 1 or 0):
 * 0 when it is one (in *x), -1 when it is not, 1 when it is a finite
 * literal too large for a double.  A quoted field is read inside its
 * quotes, blanks trimmed as outside them; one holding an escaped quote
 * ("") is no number. */
static int
field_number(const struct text_reader *r, const struct field *f, double *x)
{
	const char *s = r->buf + f->off;
	size_t n = f->len;

	if (f->quoted) {
		for (s++, n -= 2; n > 0 && is_blank(r, *s); s++, n--)
			;
		while (n > 0 && is_blank(r, s[n - 1]))
			n--;
		if (memchr(s, '"', n) != NULL)
			return -1;
	}
	if (n == 0)
		return -1;
	if (r->flags & ATTN_READ_BOOL) {
		if (attn_word_is(s, n, "true")) {
			*x = 1;
			return 0;
		}
		if (attn_word_is(s, n, "false")) {
			*x = 0;
			return 0;
		}
	}
	return attn_parse_number(s, n, x);
}

/* A data error when field f (inside its quotes) is a number but for the
 * spelling that fault (attn_dash_fault or attn_number_fault) finds: at
 * the fault. */
static enum attn_status
spelling_check(struct text_reader *r, const struct field *f,
    size_t (*fault)(const char *, size_t, char *, size_t))
{
	char msg[ATTN_MSG_MAX];
	size_t off = f->off, n = f->len, at;

	if (f->quoted) {
		off++;
		n -= 2;
	}
	if ((at = fault(r->buf + off, n, msg, sizeof msg)) < n)
		return fail_at(r, off + at, msg);
	return ATTN_OK;
}

/* A Unicode dash where a number's '-' belongs: told wherever it stands,
 * on the lines that are not all ASCII. */
static enum attn_status
dash_check(struct text_reader *r, const struct field *f)
{
	return spelling_check(r, f, attn_dash_fault);
}

/* Any spelling attn_number_fault names: told where a field that is no
 * number would be taken for a header, a label, or refused. */
static enum attn_status
number_check(struct text_reader *r, const struct field *f)
{
	return spelling_check(r, f, attn_number_fault);
}

/*
 * Whether field f of CSV, which is no number, is numbers with blanks
 * between them ("0 1"): what a line of decimal commas between blanks
 * ("5,0 1,5") splits into when ',' separates.
 */
static int
blank_numbers(const struct text_reader *r, const struct field *f)
{
	const char *b = r->buf + f->off;
	size_t i = 0, j, words = 0;
	double x;

	while (i < f->len) {
		for (j = i; j < f->len && b[j] != ' ' && b[j] != '\t'; j++)
			;
		if (attn_parse_number(b + i, j - i, &x) < 0)
			return 0;
		words++;
		for (i = j; i < f->len && (b[i] == ' ' || b[i] == '\t'); i++)
			;
	}
	return words > 1;
}

/* A label from field f, without its quotes and with "" unescaped. */
static char *
field_label(const struct text_reader *r, const struct field *f)
{
	const char *s = r->buf + f->off;
	size_t i, n = 0, len = f->len;
	char *p;

	if (!f->quoted)
		return attn_str_ndup(s, len);
	/* Quoted: s[0] and s[len - 1] are the quotes. */
	if ((p = attn_mem_alloc(len)) == NULL)
		return NULL;
	for (i = 1; i + 1 < len; i++) {
		p[n++] = s[i];
		if (s[i] == '"')
			i++;	/* the second quote of "" */
	}
	p[n] = '\0';
	/* a label holds exactly its string, as attn_labels_free gives back */
	return attn_mem_realloc(p, len, n + 1);
}

/* A label may hold no control character: it is written to the terminal.
 * Quotes and "" hold none, so the field is checked as it stands. */
static enum attn_status
check_label(struct text_reader *r, const struct field *f)
{
	return attn_label_control(r->err, r->name, r->buf, r->len, f->off,
	    r->buf + f->off, f->len);
}

static void
free_label(char *s)
{
	attn_mem_free(s, strlen(s) + 1);
}

static enum attn_status
push_label(struct text_reader *r, const struct field *f)
{
	char **nl, *s;

	if (r->rows == r->caplabels) {
		if (r->fixed)
			return full(r);
		nl = attn_grow_array(r->labels, &r->caplabels, r->rows + 1,
		    sizeof *nl);
		if (nl == NULL)
			return nomem(r);
		r->labels = nl;
	}
	if ((s = field_label(r, f)) == NULL)
		return nomem(r);
	r->labels[r->rows] = s;
	return ATTN_OK;
}

/* Parse field f as a value of the matrix and append it. */
static enum attn_status
push_value(struct text_reader *r, const struct field *f)
{
	char msg[ATTN_MSG_MAX];
	enum attn_status st;
	double x, *nv;
	int rc;

	if (f->len == 0)
		return fail_at(r, f->off, "empty field");
	rc = field_number(r, f, &x);
	if (rc < 0 && (st = number_check(r, f)) != ATTN_OK)
		return st;
	if (rc < 0 && r->fmt == ATTN_FMT_CSV &&
	    memchr(r->buf + f->off, ';', f->len) != NULL)
		return fail_field(r, f, "not a number: ", " (semicolons "
		    "between decimal commas? attn reads ',' as the separator "
		    "and '.' as the decimal point)");
	if (rc < 0 && r->fmt == ATTN_FMT_CSV && !f->quoted &&
	    blank_numbers(r, f))
		return fail_field(r, f, "not a number: ", " (decimal commas "
		    "with blanks between the numbers, as in 5,0 1,5? attn "
		    "reads ',' as the separator and '.' as the decimal point)");
	if (rc < 0)
		return fail_field(r, f, "not a number: ", "");
	if (rc > 0)
		return fail_field(r, f, "number out of range: ", "");
	/* A row 1 that may be pandas' header is checked once that is
	 * decided (check_index_row). */
	if ((r->rows > 0 || !r->range_row) && attn_value_fault(r->flags, x,
	    r->buf + f->off, f->len, msg, sizeof msg) != 0)
		return fail_at(r, f->off, msg);
	if (r->nvals == r->capvals) {
		if (r->fixed)
			return full(r);
		nv = attn_grow_array(r->vals, &r->capvals, r->nvals + 1, sizeof *nv);
		if (nv == NULL)
			return nomem(r);
		r->vals = nv;
	}
	r->vals[r->nvals++] = x;
	return ATTN_OK;
}

/* The first data row fixes the shape; check a header against it. */
static enum attn_status
check_header(struct text_reader *r)
{
	size_t hn = r->header.n, most = r->cols + (r->labelled ? 1 : 0);
	size_t off;

	if (!r->have_header || hn == most || (hn == r->cols &&
	    !r->index_header))
		return ATTN_OK;
	/* Point at the first name too many, or at the end of a short
	 * header, as for a ragged row. */
	off = hn > most ? r->header.v[most].off : r->header_end;
	return attn_error_at(r->err, ATTN_ERR_DATA, r->name, r->buf, r->len, off,
	    "header has %zu field%s but row 1 has %zu value%s%s", hn,
	    hn == 1 ? "" : "s", r->cols, r->cols == 1 ? "" : "s",
	    r->labelled ? " and a label" : "");
}

/*
 * Whether row 1, unlabelled, is written 0, 1, .., cols - 1: each field
 * (inside its quotes) exactly the digits of its index, as pandas'
 * to_csv(index=False) writes the names of unnamed columns, and not a
 * number that only equals it (0.0, 1e0), which is data.  Only in CSV and
 * TSV, which pandas writes (numpy.savetxt writes no header but after a
 * '#'), and for 2 columns or more: a first value of 0 over one column is
 * too likely to be data.  In a mask, whose rows hold 0 and 1 alone, 0,1
 * is a row of data: there it takes 3 columns.
 */
static int
index_names(const struct text_reader *r)
{
	const struct field *f = r->line.v;
	char digits[24];
	size_t k, n;
	const char *s;
	int len;

	if (r->fmt == ATTN_FMT_TEXT || r->labelled || r->have_header ||
	    r->cols < ((r->flags & ATTN_READ_BOOL) ? 3u : 2u))
		return 0;
	for (k = 0; k < r->cols; k++) {
		s = r->buf + f[k].off;
		n = f[k].len;
		if (f[k].quoted) {
			s++;
			n -= 2;
		}
		len = snprintf(digits, sizeof digits, "%zu", k);
		if (len < 0 || n != (size_t)len || memcmp(s, digits, n) != 0)
			return 0;
	}
	return 1;
}

/* Row 1 as data after all (see index_names): its values meet the rules
 * of the role, which only a mask's 2 and above can break. */
static enum attn_status
check_index_row(struct text_reader *r)
{
	const struct field *f = r->header.v;
	char msg[ATTN_MSG_MAX];
	size_t k;

	r->range_row = 0;
	for (k = 0; k < r->cols; k++)
		if (attn_value_fault(r->flags, (double)k, r->buf + f[k].off,
		    f[k].len, msg, sizeof msg) != 0)
			return fail_at(r, f[k].off, msg);
	return ATTN_OK;
}

/*
 * Row rows + 1 (not the first) against a row 1 that may be pandas'
 * header: a row of other numbers makes it one (range_under), unless it is
 * row 2 and continues the count, n, n+1, .., 2n-1, as the rows of
 * numpy.arange(..).reshape(..) do: then row 1 is data.
 */
static enum attn_status
index_row_next(struct text_reader *r)
{
	const double *v = r->vals + r->nvals - r->cols;
	size_t k, same = 0, next = 0;

	for (k = 0; k < r->cols; k++) {
		same += v[k] == (double)k;
		next += v[k] == (double)(r->cols + k);
	}
	if (r->rows == 1 && next == r->cols)
		return check_index_row(r);
	if (same < r->cols)
		r->range_under = 1;
	return ATTN_OK;
}

/* A data row: its fields are in r->line; le is the end of its line. */
static enum attn_status
data_row(struct text_reader *r, size_t le)
{
	const struct field *f = r->line.v;
	size_t nf = r->line.n, row = r->rows + 1, first, k, nv;
	struct fields spare;
	char what[80];
	enum attn_status st;
	double x;

	if (r->rows == 0) {
		r->labelled = r->index_header || field_number(r, &f[0], &x) < 0;
		if (r->labelled && !r->index_header &&
		    (st = number_check(r, &f[0])) != ATTN_OK)
			return st;
		r->cols = nf - (r->labelled ? 1 : 0);
		if (r->cols == 0)
			return fail_field(r, &f[0], "row 1 has a label ",
			    " but no numbers");
		if ((st = check_header(r)) != ATTN_OK)
			return st;
		r->range_row = index_names(r);
	}
	first = r->labelled ? 1 : 0;
	nv = nf - first;

	if (r->labelled) {
		if (f[0].len == 0)
			return fail_at(r, f[0].off, "empty field");
		if (!f[0].quoted && !r->index_header &&
		    field_number(r, &f[0], &x) >= 0) {
			snprintf(what, sizeof what, "row %zu has no label but "
			    "row 1 has one: ", row);
			return fail_field(r, &f[0], what, " is a number");
		}
		if ((st = check_label(r, &f[0])) != ATTN_OK ||
		    (st = push_label(r, &f[0])) != ATTN_OK)
			return st;
	} else if (nf == r->cols + 1 && f[0].len != 0 &&
	    field_number(r, &f[0], &x) < 0) {
		/* One field too many, and the first is text: a label. */
		snprintf(what, sizeof what, "row %zu has a label but row 1 "
		    "has none: ", row);
		return fail_field(r, &f[0], what, " is not a number");
	}

	/* Left to right, so that the first thing wrong is what is told. */
	for (k = first; k < nf; k++) {
		if (k + 1 == nf && nf > 1 && f[k].len == 0) {
			st = fail_at(r, f[k].off, r->fmt == ATTN_FMT_CSV ?
			    "empty field at the end of the line (a trailing "
			    "comma?)" : "empty field at the end of the line "
			    "(a trailing tab?)");
			goto fail;
		}
		if (k - first == r->cols)
			goto ragged;
		if ((st = push_value(r, &f[k])) != ATTN_OK)
			goto fail;
	}
	if (nv != r->cols)
		goto ragged;
	if (r->range_row && r->rows == 0) {
		r->range_off = f[0].off;
		r->range_end = le;
		spare = r->header;
		r->header = r->line;
		r->line = spare;
	} else if (r->range_row && !r->range_under &&
	    (st = index_row_next(r)) != ATTN_OK) {
		return st;
	}
	r->rows++;
	return ATTN_OK;

fail:
	if (r->labelled)
		free_label(r->labels[r->rows]);
	return st;

ragged:
	if (r->labelled)
		free_label(r->labels[r->rows]);
	/* At the first extra field, or at the end of a short line. */
	return attn_error_at(r->err, ATTN_ERR_DATA, r->name, r->buf, r->len,
	    nv > r->cols ? f[first + r->cols].off : le,
	    "row %zu has %zu value%s but row 1 has %zu", row, nv,
	    nv == 1 ? "" : "s", r->cols);
}

/* One line buf[ls, le) that is neither blank nor a comment. */
static enum attn_status
text_line(struct text_reader *r, size_t ls, size_t le)
{
	struct fields spare;
	size_t k;
	double x;
	enum attn_status st;

	r->line.n = 0;
	st = r->fmt == ATTN_FMT_TEXT ? split_space(r, ls, le) :
	    split_sep(r, ls, le);
	if (st != ATTN_OK)
		return st;
	/* A number written with a Unicode minus would be taken for a
	 * label or a header: tell it first, wherever it stands.  (No dash
	 * is ASCII, and nearly every line is.) */
	for (k = 0; k < r->line.n && !r->ascii; k++)
		if ((st = dash_check(r, &r->line.v[k])) != ATTN_OK)
			return st;

	/* The first data line is a header when no field is a number, or
	 * when its first field is empty (quoted or not): pandas' to_csv
	 * and R's write.csv write the header of their index column so, and
	 * that column, numbers or not, then labels the rows.  Swap the
	 * vectors rather than copy: the next line refills r->line. */
	if (r->rows == 0 && !r->have_header) {
		r->index_header = r->line.n > 1 && is_empty(&r->line.v[0]);
		for (k = 0; k < r->line.n && !r->index_header; k++)
			if (field_number(r, &r->line.v[k], &x) >= 0)
				break;
		if (k == r->line.n || r->index_header) {
			/* Its fields name columns: labels too, unless one
			 * is a number spelt another way (1d0, 5,0 in TSV),
			 * which would make every line a header or a label. */
			for (k = 0; k < r->line.n; k++)
				if ((!r->index_header && (st = number_check(r,
				    &r->line.v[k])) != ATTN_OK) ||
				    (st = check_label(r, &r->line.v[k])) !=
				    ATTN_OK)
					return st;
			spare = r->header;
			r->header = r->line;
			r->line = spare;
			for (k = ls; k < le && (r->buf[k] == ' ' ||
			    r->buf[k] == '\t'); k++)
				;
			r->header_start = k;
			r->header_end = le;
			r->have_header = 1;
			return ATTN_OK;
		}
	}
	return data_row(r, le);
}

/*
 * The line that starts at buf[i]: its end (its '\n', or len) in *end,
 * and its text without a CR at its end and blanks at its start in
 * [*ls, *le).  Whether it holds data: blank lines and '#' comments do
 * not.
 */
static int
line_at(const struct text_reader *r, size_t i, size_t *end, size_t *ls,
    size_t *le)
{
	const char *buf = r->buf, *nl = memchr(buf + i, '\n', r->len - i);

	*end = nl != NULL ? (size_t)(nl - buf) : r->len;
	*le = *end;
	if (*le > i && buf[*le - 1] == '\r')
		(*le)--;
	for (*ls = i; *ls < *le && (buf[*ls] == ' ' || buf[*ls] == '\t');
	    (*ls)++)
		;
	return *ls < *le && buf[*ls] != '#';
}

/* Read the line that starts at buf[i], its end in *end (see line_at). */
static enum attn_status
read_line(struct text_reader *r, size_t i, size_t *end)
{
	const char *buf = r->buf, *cr;
	size_t ls, le, bad;
	int data = line_at(r, i, end, &ls, &le);

	/* A CR alone ends no line, and would end up inside a field
	 * ("2\r3"): tell what it is, comments included, since a file of
	 * CR-ended lines is one long line to this reader. */
	if ((cr = memchr(buf + i, '\r', le - i)) != NULL)
		return attn_error_at(r->err, ATTN_ERR_DATA, r->name, buf,
		    r->len, (size_t)(cr - buf), "carriage return (CR) "
		    "without a line feed: lines must end in LF or CRLF");
	if (!data)
		return ATTN_OK;
	/* Labels reach the output, which must stay UTF-8; comments (numpy
	 * writes its header in Latin-1) are not checked. */
	r->ascii = attn_ascii_len(buf + ls, le - ls) == le - ls;
	if (!r->ascii &&
	    (bad = ls + attn_utf8_invalid(buf + ls, le - ls)) < le)
		return attn_error_at(r->err, ATTN_ERR_DATA, r->name, buf,
		    r->len, bad, "invalid UTF-8: byte 0x%02X (text input "
		    "must be UTF-8)", (unsigned)(unsigned char)buf[bad]);
	return text_line(r, i, le);
}

/* ---------------------------------------------------------------- chunks */

/*
 * A large file is read in chunks, on as many threads as the caller
 * gives, once its first rows have settled what every later line is
 * (steady): a data row of cols values, labelled or not.  The chunks end
 * at line ends, and their number depends on the file's size alone, not
 * on the threads, so that what is allocated is the same for any thread
 * count.  A first pass counts each chunk's data lines, so that the
 * numbers (and labels) go straight into one block of exactly the file's
 * rows, each chunk at its rows' place, and no doubling array is copied;
 * a second parses each chunk with a copy of the reader whose row count
 * starts at the chunk's first row.  Each chunk stops at its first
 * error, and the error told is that of the first chunk with one: every
 * chunk before it read cleanly, so it is the error, with the same row
 * number and position, that a read line by line meets first.  A number
 * is parsed alone, so the numbers do not depend on the chunks either.
 * When the block would not fit (a limit, or a count of lines that no
 * file of that many columns can hold, so that some line is short) the
 * rest is read line by line, which meets whichever error comes first.
 */
#define CHUNKED_LEAST (256u << 10)	/* bytes left for chunks to pay */
#define CHUNK_LEAST (64u << 10)	/* a chunk is at least this long */
#define CHUNKS_MOST 16		/* enough to keep 8 threads even, few
				 * enough that the counting costs nothing */
#define CHUNK_STACK (128u << 10)	/* a reader's frames hold a few
				 * messages: a thread's default 8 MiB would
				 * count against an address-space limit */

struct chunk {
	size_t start, end;	/* buf[start, end): whole lines */
	size_t row0;		/* the rows before it */
	size_t rows;		/* its data lines; once read, its rows */
	enum attn_status st;
	struct attn_error err;
};

struct chunks {
	const struct text_reader *r;	/* as the first rows left it */
	struct chunk *c;
	double *vals;			/* rows x cols, the file's */
	char **labels;			/* rows, when labelled */
};

/* Whether every line from here on is a data row like row 1: it is read,
 * and it is no header pandas may have written (range_row), or a later
 * row has settled that. */
static int
steady(const struct text_reader *r)
{
	return r->rows > 0 && (!r->range_row || r->range_under);
}

/* Pass 1: chunk t's data lines. */
static void
chunk_count(void *ctx, size_t worker, size_t t)
{
	struct chunks *cs = ctx;
	struct chunk *c = &cs->c[t];
	size_t i, end, ls, le, n = 0;

	(void)worker;
	for (i = c->start; i < c->end; i = end + 1)
		n += (size_t)line_at(cs->r, i, &end, &ls, &le);
	c->rows = n;
}

/* Pass 2: chunk t read into its rows of the block. */
static void
chunk_read(void *ctx, size_t worker, size_t t)
{
	struct chunks *cs = ctx;
	struct chunk *c = &cs->c[t];
	struct text_reader r = *cs->r;
	size_t i, end;

	(void)worker;
	memset(&r.line, 0, sizeof r.line);
	r.err = &c->err;
	r.fixed = 1;
	r.rows = c->row0;
	r.vals = cs->vals;
	r.nvals = c->row0 * r.cols;
	r.capvals = (c->row0 + c->rows) * r.cols;
	r.labels = cs->labels;
	r.caplabels = c->row0 + c->rows;
	c->st = ATTN_OK;
	for (i = c->start; i < c->end && c->st == ATTN_OK; i = end + 1)
		c->st = read_line(&r, i, &end);
	c->rows = r.rows - c->row0;
	attn_mem_free(r.line.v, r.line.cap * sizeof *r.line.v);
}

/* Cut buf[start, len) into n chunks at line ends. */
static void
chunks_cut(const struct text_reader *r, size_t start, struct chunk *c,
    size_t n)
{
	const size_t left = r->len - start;
	const char *nl;
	size_t k, at = start, cut;

	for (k = 0; k < n; k++) {
		c[k].start = at;
		cut = start + left / n * (k + 1);
		if (k + 1 == n || cut >= r->len) {
			at = r->len;
		} else if (cut > at) {
			nl = memchr(r->buf + cut, '\n', r->len - cut);
			at = nl != NULL ? (size_t)(nl - r->buf) + 1 : r->len;
		}
		c[k].end = at;
	}
}

/* Give back the block of total rows, and the chunks. */
static void
chunks_free(struct chunks *cs, size_t n, size_t total)
{
	attn_mem_free(cs->vals, total * cs->r->cols * sizeof *cs->vals);
	attn_mem_free(cs->labels, total * sizeof *cs->labels);
	attn_mem_free(cs->c, n * sizeof *cs->c);
}

/*
 * Read buf[start, len) in chunks into r (see above), on up to threads
 * threads: 0 when done, with *st ATTN_OK and r holding every row, or
 * the first error; 1 when the block does not fit and the rest is to be
 * read line by line.
 */
static int
read_chunks(struct text_reader *r, size_t start, size_t threads,
    enum attn_status *st)
{
	const size_t left = r->len - start;
	size_t n = left / CHUNK_LEAST, k, j, total = r->rows;
	struct attn_pool_job job;
	struct attn_error spare;
	struct chunks cs;

	if (n > CHUNKS_MOST)
		n = CHUNKS_MOST;
	memset(&cs, 0, sizeof cs);
	cs.r = r;
	if ((cs.c = attn_mem_array(n, sizeof *cs.c)) == NULL)
		goto line_by_line;
	chunks_cut(r, start, cs.c, n);
	memset(&job, 0, sizeof job);
	job.tasks = n;
	job.threads = threads;
	job.ctx = &cs;
	job.stack = CHUNK_STACK;
	job.task = chunk_count;
	attn_pool_run(&job);
	for (k = 0; k < n; k++) {
		cs.c[k].row0 = total;
		total += cs.c[k].rows;
	}
	/* A row of cols values takes 2 * cols - 1 bytes at least, its end
	 * of line aside: more lines than that, and one of them is short. */
	if (total - r->rows > (left + 1) / 2 / r->cols ||
	    (cs.vals = attn_mem_array(total * r->cols, sizeof *cs.vals)) ==
	    NULL || (r->labelled && (cs.labels = attn_mem_array(total,
	    sizeof *cs.labels)) == NULL)) {
		chunks_free(&cs, n, total);
		goto line_by_line;
	}
	memcpy(cs.vals, r->vals, r->nvals * sizeof *cs.vals);
	if (r->labelled)
		memcpy(cs.labels, r->labels, r->rows * sizeof *cs.labels);
	job.task = chunk_read;
	attn_pool_run(&job);

	*st = ATTN_OK;
	for (k = 0; k < n && *st == ATTN_OK; k++)
		if ((*st = cs.c[k].st) != ATTN_OK)
			*r->err = cs.c[k].err;
	if (*st != ATTN_OK) {
		/* r keeps its own rows' labels; the chunks' go. */
		for (k = 0; r->labelled && k < n; k++)
			for (j = 0; j < cs.c[k].rows; j++)
				free_label(cs.labels[cs.c[k].row0 + j]);
		chunks_free(&cs, n, total);
		return 0;
	}
	attn_mem_free(r->vals, r->capvals * sizeof *r->vals);
	attn_mem_free(r->labels, r->caplabels * sizeof *r->labels);
	r->vals = cs.vals;
	r->capvals = r->nvals = total * r->cols;
	r->labels = cs.labels;
	r->caplabels = r->rows = total;
	cs.vals = NULL;
	cs.labels = NULL;
	chunks_free(&cs, n, total);
	return 0;

line_by_line:
	/* A refusal here is no error of this read: forget it. */
	if (attn_mem_refused())
		attn_error_input_nomem(&spare, r->name, "");
	return 1;
}

/*
 * Where the line buf[ls, le) (which starts with no blank) is split into
 * words, one of them a number, by a run of spaces or tabs: the offset of
 * the first such run, or le when there is none.  Blanks inside quotes
 * split nothing.
 */
static size_t
blank_split(const struct text_reader *r, size_t ls, size_t le)
{
	const char *b = r->buf;
	size_t i, j, first = le;
	int number = 0, q;
	double x;

	for (i = ls; i < le; i = j) {
		for (j = i, q = 0; j < le && (q || (b[j] != ' ' &&
		    b[j] != '\t')); j++)
			q ^= b[j] == '"';
		number |= attn_parse_number(b + i, j - i, &x) >= 0;
		if (j < le && first == le)
			first = j;
		while (j < le && (b[j] == ' ' || b[j] == '\t'))
			j++;
	}
	return number ? first : le;
}

/*
 * A .csv without a comma, or a .tsv without a tab (outside quotes and
 * comments), would be read one field a line: a header, then a label error
 * on a line that says nothing of why.  When another separator splits its
 * lines, name it where it first stands: a semicolon, a comma or a tab,
 * else blanks between words one of which is a number (a header "my
 * value" over one column splits nothing).  A file of one column has no
 * separator at all and passes.
 */
static enum attn_status
check_separator(struct text_reader *r)
{
	static const struct {
		char c;
		const char *looks;
	} seps[] = {
		{ ';', "semicolon-separated: convert it, e.g. with tr" },
		{ '\t', "tab-separated: name it .tsv" },
		{ ',', "comma-separated: name it .csv" },
	};
	const char *b = r->buf, *nl;
	char sep = r->fmt == ATTN_FMT_CSV ? ',' : '\t';
	size_t i, k, end, le, off = r->len, blanks = r->len, which = 0;
	int q;

	for (i = attn_bom_len(b, r->len); i < r->len; i = end + 1) {
		nl = memchr(b + i, '\n', r->len - i);
		end = nl != NULL ? (size_t)(nl - b) : r->len;
		le = end > i && b[end - 1] == '\r' ? end - 1 : end;
		while (i < le && (b[i] == ' ' || b[i] == '\t'))
			i++;
		if (i == le || b[i] == '#')
			continue;
		for (k = i, q = 0; k < le; k++) {
			q ^= b[k] == '"';
			if (q || b[k] == '"')
				continue;
			if (b[k] == sep)
				return ATTN_OK;
			for (which = 0; off == r->len && which < 3; which++)
				if (b[k] == seps[which].c && seps[which].c !=
				    sep) {
					off = k;
					break;
				}
		}
		if (blanks == r->len && (k = blank_split(r, i, le)) < le)
			blanks = k;
	}
	for (which = 0; off < r->len && which < 3; which++)
		if (b[off] == seps[which].c)
			break;
	if (off == r->len && blanks == r->len)
		return ATTN_OK;
	return attn_error_at(r->err, ATTN_ERR_DATA, r->name, b, r->len,
	    off < r->len ? off : blanks, "no %s found; this looks %s%s",
	    sep == ',' ? "commas" : "tabs", off < r->len ?
	    seps[which].looks : "space-separated: name it .txt",
	    off < r->len && which == 0 ? (sep == ',' ? " ';' ','" :
	    " ';' '\\t'") : "");
}

/* The names of the columns, from the header: its last r->cols fields
 * (a first one names the label column); none when one of them is empty.
 * Fails only when out of memory. */
static enum attn_status
header_labels(struct text_reader *r, struct attn_labels *out)
{
	const size_t first = r->header.n - r->cols;
	size_t k;

	for (k = first; k < r->header.n; k++)
		if (is_empty(&r->header.v[k]))
			return ATTN_OK;
	/* count names, NULL until each is made: attn_labels_free frees as
	 * many as there are */
	if ((out->names = attn_mem_zalloc(r->cols * sizeof *out->names)) ==
	    NULL)
		return nomem(r);
	out->count = r->cols;
	for (k = first; k < r->header.n; k++)
		if ((out->names[k - first] = field_label(r,
		    &r->header.v[k])) == NULL) {
			attn_labels_free(out);
			return nomem(r);
		}
	return ATTN_OK;
}

/*
 * At the end of the file, a row 1 written 0, 1, .., n-1 (index_names)
 * over rows that are not is the header pandas' to_csv(index=False)
 * writes for unnamed columns: dropped, and out's notice says so, since a
 * row of data could read so.  A file whose every row reads so is data,
 * and so is a file of one row: their row 1 then meets the role's rules.
 * The names are positions, not names, and are not kept as labels.
 */
static enum attn_status
index_row_end(struct text_reader *r, struct attn_error *notice)
{
	char p[ATTN_PREVIEW_MAX + 4];

	if (!r->range_row)
		return ATTN_OK;
	if (!r->range_under)
		return check_index_row(r);
	memmove(r->vals, r->vals + r->cols, (r->nvals - r->cols) *
	    sizeof *r->vals);
	r->nvals -= r->cols;
	r->rows--;
	attn_text_preview(p, ATTN_PREVIEW_MAX, r->buf + r->range_off,
	    r->range_end - r->range_off);
	attn_error_at(notice, ATTN_OK, r->name, r->buf, r->len, r->range_off,
	    "'%s' (0, 1, .., n-1 over other numbers) was read as the "
	    "header pandas' to_csv(index=False) writes and skipped; if it is "
	    "data, write one of its numbers otherwise (0.0 for 0)", p);
	return ATTN_OK;
}

/* Free what the reader holds that has not been handed to out. */
static void
reader_free(struct text_reader *r)
{
	size_t i;

	attn_mem_free(r->line.v, r->line.cap * sizeof *r->line.v);
	attn_mem_free(r->header.v, r->header.cap * sizeof *r->header.v);
	attn_mem_free(r->vals, r->capvals * sizeof *r->vals);
	if (r->labelled)
		for (i = 0; i < r->rows; i++)
			free_label(r->labels[i]);
	attn_mem_free(r->labels, r->caplabels * sizeof *r->labels);
}

enum attn_status
attn_read_text(const char *name, const char *buf, size_t len,
    enum attn_format fmt, unsigned flags, size_t threads,
    struct attn_array *out, struct attn_error *err)
{
	struct text_reader r;
	const char *nul;
	char p[ATTN_PREVIEW_MAX + 4];
	size_t i = 0, end;
	enum attn_status st = ATTN_OK;
	int tried = 0;		/* chunks tried (read_chunks) */

	memset(out, 0, sizeof *out);
	memset(&r, 0, sizeof r);
	r.name = name;
	r.buf = buf;
	r.len = len;
	r.fmt = fmt;
	r.flags = flags;
	r.err = err;

	/* Checked up front, once, so that no later scan has to care.  A
	 * UTF-16 file is all NUL bytes to a UTF-8 reader: name it. */
	if (attn_utf16_bom(buf, len))
		return attn_error_at(err, ATTN_ERR_DATA, name, buf, len, 0,
		    "UTF-16 text (it starts with a UTF-16 byte order mark): "
		    "attn reads UTF-8; convert it first, e.g. with iconv -f "
		    "UTF-16 -t UTF-8");
	if (len > 0 && (nul = memchr(buf, '\0', len)) != NULL)
		return attn_error_at(err, ATTN_ERR_DATA, name, buf, len,
		    (size_t)(nul - buf), "NUL byte in text input");
	if (fmt != ATTN_FMT_TEXT && (st = check_separator(&r)) != ATTN_OK)
		return st;

	for (i = attn_bom_len(buf, len); i < len; i = end + 1) {
		if (!tried && steady(&r) && len - i >= CHUNKED_LEAST) {
			tried = 1;
			if (read_chunks(&r, i, threads, &st) == 0)
				break;
		}
		if ((st = read_line(&r, i, &end)) != ATTN_OK)
			break;
	}
	if (st != ATTN_OK) {
		reader_free(&r);
		return st;
	}

	if (r.rows == 0 && r.have_header) {
		/* A first line without a number is a header, so a lone "-",
		 * "0x10" or "1;2" lands here: quote it. */
		attn_text_preview(p, ATTN_PREVIEW_MAX, buf + r.header_start,
		    r.header_end - r.header_start);
		reader_free(&r);
		return attn_error_at(err, ATTN_ERR_DATA, name, buf, len,
		    r.header_start, r.index_header ? "only a header line "
		    "('%s', an index column's header), and no rows under it" :
		    "only a header line, and no numbers: no field of '%s' is "
		    "a number", p);
	}
	if (r.rows == 0) {
		reader_free(&r);
		return attn_error_at(err, ATTN_ERR_DATA, name, buf, len, len,
		    "no numbers: empty matrix");
	}

	if ((st = index_row_end(&r, &out->notice)) != ATTN_OK) {
		reader_free(&r);
		memset(out, 0, sizeof *out);
		return st;
	}
	/* Give back the slack of the doubling: exactly its numbers. */
	r.vals = attn_mem_realloc(r.vals, r.capvals * sizeof *r.vals,
	    r.nvals * sizeof *r.vals);
	r.capvals = r.nvals;
	out->ndim = 2;
	out->shape[0] = r.rows;
	out->shape[1] = r.cols;
	out->data = r.vals;
	if (r.have_header && r.header.n == 1 && r.cols == 1 && !r.labelled) {
		attn_text_preview(p, ATTN_PREVIEW_MAX, buf + r.header.v[0].off,
		    r.header.v[0].len);
		attn_error_at(&out->notice, ATTN_OK, name, buf, len,
		    r.header.v[0].off, "'%s' is not a number, so it was read "
		    "as a column header and skipped; if it is a value, "
		    "correct it (a header written as a '#' comment gives no "
		    "warning)", p);
	}
	if (r.have_header &&
	    (st = header_labels(&r, &out->col_labels)) != ATTN_OK) {
		reader_free(&r);
		memset(out, 0, sizeof *out);
		return st;
	}
	if (r.labelled) {
		/* exactly its names, as attn_labels_free gives back */
		out->row_labels.count = r.rows;
		out->row_labels.names = attn_mem_realloc(r.labels,
		    r.caplabels * sizeof *r.labels, r.rows * sizeof *r.labels);
	} else {
		attn_mem_free(r.labels, r.caplabels * sizeof *r.labels);
	}
	attn_mem_free(r.line.v, r.line.cap * sizeof *r.line.v);
	attn_mem_free(r.header.v, r.header.cap * sizeof *r.header.v);
	return ATTN_OK;
}
