/*
 * print.c - what the printers share: the shape, labels and numbers of a
 * stage, so that every format lays stages out the same way
 * (attn_stage_shape is the one source of their dims), which stages
 * --explain shows, the rows and columns a long table shows, display
 * widths, and text escaped for XML and JSON.  A leaf below every
 * printer: it calls none of them (print_run.c dispatches to them).
 *
 * Every number goes through attn_format_number, which ignores the
 * locale.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistr.h>
#include <uniwidth.h>

#include "attn.h"
#include "attn_io.h"
#include "print.h"
#include "report.h"

int
print_explains(const struct options *o, enum attn_stage s)
{
	/* o->avail leaves the inputs as read out of --stage all, which
	 * lists what the run computes; the walk starts from them (attn(1)) */
	return !attn_stage_table[s].internal &&
	    ((o->avail | o->inputs) & ATTN_STAGE_BIT(s)) != 0;
}

void
print_init(struct printer *p, FILE *fp, const struct options *o,
    const struct attn_stages *stages, const struct names *nm,
    const struct attn_inputs *in, struct attn_error *err)
{
	const struct format *f = &formats[o->format];

	p->fp = fp;
	p->o = o;
	p->stages = stages;
	p->nm = nm;
	p->in = in;
	p->numflags = f->flags & FORMAT_FIXED ? ATTN_NUM_FIXED : 0;
	p->err = err;
}

enum attn_status
print_blocks(const struct printer *p, enum attn_stage s,
    enum attn_status (*block)(const struct printer *p, enum attn_stage s,
    size_t n))
{
	enum attn_status status = ATTN_OK;
	struct attn_shape sh;
	size_t n;

	attn_stage_shape(p->stages, s, &sh);
	for (n = 0; n < sh.blocks && status == ATTN_OK; n++) {
		if (n > 0)
			putc('\n', p->fp);
		status = block(p, s, n);
	}
	return status;
}

size_t
print_sections(const struct printer *p)
{
	return p->o->nstages + (p->o->stats ? 1 : 0);
}

/* ---------------------------------------------------------------- helpers */

/* One axis of n: whole, or its ends when the table is elided. */
static void
span_init(struct print_span *sp, size_t n, int elide)
{
	sp->n = n;
	sp->head = elide && n > 2 * PRINT_EDGE ? PRINT_EDGE : n;
	sp->tail = sp->head < n ? PRINT_EDGE : 0;
}

void
print_spans(const struct printer *p, size_t rows, size_t cols,
    struct print_span *r, struct print_span *c)
{
	/* rows * cols numbers are held, so the product does not wrap */
	const int elide = !p->o->full && rows * cols > PRINT_MAX_CELLS;

	span_init(r, rows, elide);
	span_init(c, cols, elide);
}

size_t
print_span_count(const struct print_span *sp)
{
	return sp->head + sp->tail + (sp->tail > 0);
}

size_t
print_pick(size_t k, size_t head, size_t tail, size_t n)
{
	if (k < head)
		return k;
	if (k == head)
		return n;
	return n - tail + (k - head - 1);
}

void
print_elided(const struct printer *p, const struct print_span *r,
    const struct print_span *c)
{
	if (r->tail == 0 && c->tail == 0)
		return;
	putc('(', p->fp);
	if (r->tail > 0)
		fprintf(p->fp, "%zu of %zu rows", r->head + r->tail, r->n);
	if (c->tail > 0)
		fprintf(p->fp, "%s%zu of %zu columns", r->tail > 0 ? ", " : "",
		    c->head + c->tail, c->n);
	fputs(" shown; --full prints every one)\n", p->fp);
}

size_t
print_number(const struct printer *p, char *buf, double x)
{
	return attn_format_number(buf, x, p->o->digits, p->numflags);
}

size_t
print_queries(const struct printer *p)
{
	return p->o->query_row != NULL ? p->o->query_T : p->stages->T;
}

size_t
print_query_row(const struct printer *p, size_t i)
{
	return p->o->query_row != NULL ? p->o->query_row[i] : i;
}

struct attn_matrix
print_block(const struct printer *p, enum attn_stage s, size_t n)
{
	return attn_shape_block(p->stages, s, n);
}

void
print_block_name(const struct printer *p, enum attn_stage s, size_t n,
    char *buf, size_t size)
{
	struct attn_shape sh;

	attn_stage_shape(p->stages, s, &sh);
	attn_block_name(buf, size, sh.batches, sh.heads, n, ", ", "");
}

void
print_dims(const struct printer *p, enum attn_stage s, char *buf,
    size_t size)
{
	struct attn_shape sh;

	attn_stage_shape(p->stages, s, &sh);
	attn_dims_text(buf, size, sh.dim, sh.ndim);
}

const char *
print_col_label(const struct printer *p, enum attn_stage s, size_t n,
    size_t j, char *buf)
{
	const struct attn_stages *stages = p->stages;
	const char *name = NULL;
	struct attn_shape sh;
	struct attn_where w;
	enum attn_axis rows, cols;
	size_t kv;

	attn_stage_axes(stages, s, &rows, &cols);
	switch (cols) {
	case ATTN_AXIS_KEY:
		return p->nm->key[j];
	case ATTN_AXIS_HEAD:	/* grad_sinks: a column a head */
		snprintf(buf, PRINT_LABEL_MAX, "h%zu", j + 1);
		return buf;
	case ATTN_AXIS_VALUE:
	case ATTN_AXIS_DK:
	case ATTN_AXIS_MODEL:
		attn_stage_shape(stages, s, &sh);
		/* the head of column j: in its block's columns, or (in
		 * bhsd, a block a head) the block's own */
		attn_shape_block_where(stages, s,
		    n == PRINT_EVERY_BLOCK ? 0 : n, 0, j, &w);
		/* V's names where its file has them: the columns of the
		 * KV head that the column's head reads, the same in every
		 * block unless blocks are heads of several KV heads */
		kv = attn_stage_table[s].kv ? w.head :
		    attn_kv_head(w.head, stages->heads, stages->kv_heads);
		if (attn_stage_table[s].cols == ATTN_AXIS_VALUE &&
		    p->nm->value != NULL && (n != PRINT_EVERY_BLOCK ||
		    sh.heads == 1 || stages->kv_heads == 1))
			name = p->nm->value[kv * stages->d_v + w.col];
		if (name != NULL && sh.col_heads == 1)
			return name;
		/* KV heads are "kv" where they are not the query heads;
		 * a name too long for buf is numbered instead */
		if (name == NULL || snprintf(buf, PRINT_LABEL_MAX, "%s%zu:%s",
		    sh.col_heads != stages->heads ? "kv" : "h", w.head + 1,
		    name) >= PRINT_LABEL_MAX) {
			if (sh.col_heads > 1)
				snprintf(buf, PRINT_LABEL_MAX, "%s%zu:%zu",
				    sh.col_heads != stages->heads ? "kv" :
				    "h", w.head + 1, w.col + 1);
			else
				snprintf(buf, PRINT_LABEL_MAX, "%zu", j + 1);
		}
		return buf;
	case ATTN_AXIS_ONE:
	case ATTN_AXIS_QUERY:
	case ATTN_AXIS_BATCH:
		break;
	}
	return attn_stage_table[s].name;
}

const char *
print_row_label(const struct printer *p, enum attn_stage s, size_t i)
{
	enum attn_axis rows, cols;

	/* the stage table says what rows run over, in every layout (a
	 * place in the dims would not: bshd puts heads after the rows);
	 * a single row of a reduced stage is named by the stage */
	attn_stage_axes(p->stages, s, &rows, &cols);
	if (rows == ATTN_AXIS_ONE)
		return attn_stage_table[s].name;
	return rows == ATTN_AXIS_KEY ? p->nm->key[i] : p->nm->query[i];
}

/*
 * Display widths come from libunistring (uniwidth.h), whose tables
 * follow Unicode's East Asian Width and know combining marks; wcwidth
 * would need a UTF-8 locale, and attn's output must not depend on the
 * locale.  The encoding "UTF-8" makes ambiguous-width characters one
 * column, as terminals outside East Asian locales draw them.
 */
size_t
print_width(const char *s)
{
	return (size_t)u8_width((const uint8_t *)s, strlen(s), "UTF-8");
}

size_t
print_char(const char *s, size_t *width)
{
	ucs4_t uc;
	int len = u8_mbtouc(&uc, (const uint8_t *)s, strlen(s)), w;

	w = uc_width(uc, "UTF-8");
	*width = w > 0 ? (size_t)w : 0;
	return len > 0 ? (size_t)len : 1;
}

/* Whether XML (and HTML) text may hold character c, from
 * attn_utf8_char: not a control character but tab and newline (C1 and
 * DEL are allowed by XML 1.0 but are controls in HTML and a terminal),
 * not U+FFFE or U+FFFF, and well-formed. */
static int
xml_allows(long c)
{
	return c >= 0 && (!attn_char_is_control(c) || c == '\t' ||
	    c == '\n') && c != 0xFFFE && c != 0xFFFF;
}

void
print_xml(FILE *fp, const char *s)
{
	size_t len = strlen(s), n;
	long c;

	for (; len > 0; s += n, len -= n) {
		n = attn_utf8_char(s, len, &c);
		switch (c) {
		case '&':
			fputs("&amp;", fp);
			break;
		case '<':
			fputs("&lt;", fp);
			break;
		case '>':
			fputs("&gt;", fp);
			break;
		case '"':
			fputs("&quot;", fp);
			break;
		case '\'':
			fputs("&#39;", fp);
			break;
		case '\n':
			fputs("&#10;", fp);
			break;
		default:
			if (!xml_allows(c))
				fputs("\xef\xbf\xbd", fp);	/* U+FFFD */
			else
				fwrite(s, 1, n, fp);
		}
	}
}

void
print_json_string(FILE *fp, const char *s)
{
	size_t len = strlen(s), n;
	long code;

	putc('"', fp);
	for (; len > 0; s += n, len -= n) {
		n = attn_utf8_char(s, len, &code);
		if (code == '"' || code == '\\')
			fprintf(fp, "\\%c", (int)code);
		else if (attn_char_is_control(code))	/* C1 too */
			fprintf(fp, "\\u%04lx", code);
		else if (code < 0)	/* JSON is UTF-8: a file name may not be */
			fputs("\\ufffd", fp);
		else
			fwrite(s, 1, n, fp);
	}
	putc('"', fp);
}

void
print_json_double(FILE *fp, double x)
{
	char buf[ATTN_NUM_MAX];

	attn_format_number(buf, x, 0, 0);
	fprintf(fp, isfinite(x) ? "%s" : "\"%s\"", buf);
}

void
print_pad(FILE *fp, size_t n)
{
	while (n-- > 0)
		putc(' ', fp);
}

void
print_index(char *buf, size_t size, const size_t *dim, size_t ndim,
    size_t n)
{
	size_t idx[ATTN_MAX_DIMS], d, k = 0;

	buf[0] = '\0';
	for (d = ndim; d-- > 0;) {
		idx[d] = n % dim[d];
		n /= dim[d];
	}
	for (d = 0; d < ndim && k < size; d++)
		k += (size_t)snprintf(buf + k, size - k, d > 0 ? ", %zu" :
		    "%zu", idx[d]);
}
