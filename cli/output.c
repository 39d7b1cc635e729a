/*
 * output.c - the printers.  Every number goes through attn_format_number
 * (locale-independent); tables are right-aligned in columns measured in
 * characters, so UTF-8 labels line up.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "output.h"

struct printer {
	FILE *fp;
	const struct options *o;
	const struct attn_stages *st;
	const struct labels *lab;
	unsigned numflags;	/* ATTN_NUM_FIXED for tables */
	struct attn_error *err;
};

/* Width of a UTF-8 string in characters. */
static size_t
text_width(const char *s)
{
	size_t w = 0;

	for (; *s != '\0'; s++)
		if (((unsigned char)*s & 0xC0) != 0x80)
			w++;
	return w;
}

static void
pad(FILE *fp, size_t n)
{
	while (n-- > 0)
		putc(' ', fp);
}

static size_t
fmt_num(const struct printer *p, char *buf, double x)
{
	return attn_format_number(buf, x, p->o->digits, p->numflags);
}

/* The label of column j of stage s; buf holds it when it is made up. */
static const char *
col_label(const struct printer *p, enum attn_stage s, size_t j,
    char buf[ATTN_NUM_MAX])
{
	switch (attn_stage_table[s].cols) {
	case ATTN_AXIS_KEY:
		return p->lab->key[j];
	case ATTN_AXIS_VALUE:
		snprintf(buf, ATTN_NUM_MAX, "%zu", j + 1);
		return buf;
	case ATTN_AXIS_ONE:
	case ATTN_AXIS_QUERY:
		break;
	}
	return attn_stage_table[s].name;
}

/* "weights = softmax(scaled), row by row   [T x S = 2x3]" */
static void
print_title(const struct printer *p, enum attn_stage s)
{
	const struct attn_stage_info *info = &attn_stage_table[s];
	const struct attn_matrix *m = &p->st->stage[s];

	fprintf(p->fp, "%s = %s   [%s = %zux%zu]\n", info->name,
	    info->formula, info->shape, m->rows, m->cols);
}

/* ---------------------------------------------------------------- table */

static enum attn_status
print_table(const struct printer *p, enum attn_stage s)
{
	const struct attn_matrix *m = &p->st->stage[s];
	char buf[ATTN_NUM_MAX];
	size_t i, j, w0 = 0, *width;

	/* Column widths: the widest of the label and every number. */
	if ((width = alloc_array(m->cols, sizeof *width)) == NULL)
		return error_set(p->err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "out of memory laying out a table of %zu columns",
		    m->cols);
	for (j = 0; j < m->cols; j++) {
		width[j] = text_width(col_label(p, s, j, buf));
		for (i = 0; i < m->rows; i++) {
			size_t n = fmt_num(p, buf, *attn_at(m, i, j));

			if (n > width[j])
				width[j] = n;
		}
	}
	for (i = 0; i < m->rows; i++)
		if (text_width(p->lab->query[i]) > w0)
			w0 = text_width(p->lab->query[i]);

	print_title(p, s);
	pad(p->fp, w0);
	for (j = 0; j < m->cols; j++) {
		const char *label = col_label(p, s, j, buf);

		pad(p->fp, 2 + width[j] - text_width(label));
		fputs(label, p->fp);
	}
	putc('\n', p->fp);
	for (i = 0; i < m->rows; i++) {
		fputs(p->lab->query[i], p->fp);
		pad(p->fp, w0 - text_width(p->lab->query[i]));
		for (j = 0; j < m->cols; j++) {
			size_t n = fmt_num(p, buf, *attn_at(m, i, j));

			pad(p->fp, 2 + width[j] - n);
			fputs(buf, p->fp);
		}
		putc('\n', p->fp);
	}
	free(width);
	return ATTN_OK;
}

/* ---------------------------------------------------------------- csv, tsv */

/* A label as a CSV/TSV field, quoted when it holds the separator, a quote,
 * a line break or surrounding spaces. */
static void
print_field(FILE *fp, const char *s, char sep)
{
	size_t len = strlen(s);
	const char *c;

	if (strchr(s, sep) == NULL && strpbrk(s, "\"\r\n") == NULL &&
	    (len == 0 || (s[0] != ' ' && s[len - 1] != ' '))) {
		fputs(s, fp);
		return;
	}
	putc('"', fp);
	for (c = s; *c != '\0'; c++) {
		if (*c == '"')
			putc('"', fp);
		putc(*c, fp);
	}
	putc('"', fp);
}

static void
print_delimited(const struct printer *p, enum attn_stage s, char sep)
{
	const struct attn_matrix *m = &p->st->stage[s];
	char buf[ATTN_NUM_MAX];
	size_t i, j;

	if (p->o->nstages > 1)
		fprintf(p->fp, "# %s %zux%zu\n", attn_stage_table[s].name,
		    m->rows, m->cols);
	if (p->o->header) {
		for (j = 0; j < m->cols; j++) {
			putc(sep, p->fp);
			print_field(p->fp, col_label(p, s, j, buf), sep);
		}
		putc('\n', p->fp);
	}
	for (i = 0; i < m->rows; i++) {
		if (p->o->header) {
			print_field(p->fp, p->lab->query[i], sep);
			putc(sep, p->fp);
		}
		for (j = 0; j < m->cols; j++) {
			if (j > 0)
				putc(sep, p->fp);
			fmt_num(p, buf, *attn_at(m, i, j));
			fputs(buf, p->fp);
		}
		putc('\n', p->fp);
	}
}

/* ---------------------------------------------------------------- json */

/* A matrix as a JSON array of rows, indented by ind spaces.  JSON cannot
 * spell infinities, so non-finite values are the strings "inf", "-inf"
 * and "nan", which attn reads back. */
static void
print_json_matrix(const struct printer *p, const struct attn_matrix *m,
    int ind)
{
	char buf[ATTN_NUM_MAX];
	size_t i, j;

	fputs("[\n", p->fp);
	for (i = 0; i < m->rows; i++) {
		fprintf(p->fp, "%*s[", ind + 2, "");
		for (j = 0; j < m->cols; j++) {
			double x = *attn_at(m, i, j);

			fmt_num(p, buf, x);
			fprintf(p->fp, isfinite(x) ? "%s%s" : "%s\"%s\"",
			    j > 0 ? ", " : "", buf);
		}
		fputs(i + 1 < m->rows ? "],\n" : "]\n", p->fp);
	}
	fprintf(p->fp, "%*s]", ind, "");
}

static void
print_json(const struct printer *p)
{
	size_t k;

	if (p->o->nstages == 1) {
		print_json_matrix(p, &p->st->stage[p->o->stages[0]], 0);
		putc('\n', p->fp);
		return;
	}
	fputs("{\n", p->fp);
	for (k = 0; k < p->o->nstages; k++) {
		enum attn_stage s = p->o->stages[k];

		fprintf(p->fp, "  \"%s\": ", attn_stage_table[s].name);
		print_json_matrix(p, &p->st->stage[s], 2);
		fputs(k + 1 < p->o->nstages ? ",\n" : "\n", p->fp);
	}
	fputs("}\n", p->fp);
}

/* ---------------------------------------------------------------- explain */

/* The line after the weights: how far the worst row sum is from 1. */
static void
print_row_sum_check(const struct printer *p)
{
	const struct attn_matrix *w = &p->st->stage[ATTN_STAGE_WEIGHTS];
	char buf[ATTN_NUM_MAX];
	double worst = 0.0;
	size_t i, j;

	for (i = 0; i < w->rows; i++) {
		double sum = 0.0;

		for (j = 0; j < w->cols; j++)
			sum += *attn_at(w, i, j);
		if (fabs(sum - 1.0) > worst)
			worst = fabs(sum - 1.0);
	}
	attn_format_number(buf, worst, 2, 0);
	fprintf(p->fp, "check: each row of weights sums to 1 "
	    "(largest |sum - 1| = %s)\n", buf);
}

static void
print_scale_line(const struct printer *p)
{
	char buf[ATTN_NUM_MAX];

	fmt_num(p, buf, p->st->scale);
	switch (p->o->cfg.scale_mode) {
	case ATTN_SCALE_DEFAULT:
		fprintf(p->fp, "scale = 1/sqrt(d_k) = 1/sqrt(%zu) = %s\n",
		    p->st->d_k, buf);
		break;
	case ATTN_SCALE_NONE:
		fprintf(p->fp, "scale = %s (--no-scale)\n", buf);
		break;
	case ATTN_SCALE_VALUE:
		fprintf(p->fp, "scale = %s (--scale)\n", buf);
		break;
	}
}

static enum attn_status
print_explain(const struct printer *p)
{
	const struct attn_stages *st = p->st;
	enum attn_status status;
	size_t s;

	fprintf(p->fp, "Q is %zux%zu, K is %zux%zu, V is %zux%zu: "
	    "T=%zu queries, S=%zu keys, d_k=%zu, d_v=%zu\n",
	    st->T, st->d_k, st->S, st->d_k, st->S, st->d_v,
	    st->T, st->S, st->d_k, st->d_v);
	print_scale_line(p);
	for (s = 0; s < ATTN_STAGE_COUNT; s++) {
		putc('\n', p->fp);
		if ((status = print_table(p, (enum attn_stage)s)) != ATTN_OK)
			return status;
		if (s == ATTN_STAGE_WEIGHTS)
			print_row_sum_check(p);
	}
	return ATTN_OK;
}

enum attn_status
output_print(FILE *fp, const struct options *o, const struct attn_stages *st,
    const struct labels *lab, struct attn_error *err)
{
	struct printer p = { fp, o, st, lab, 0, err };
	enum attn_status status = ATTN_OK;
	size_t k;

	if (o->format == OUT_TABLE)
		p.numflags = ATTN_NUM_FIXED;
	if (o->explain)
		return print_explain(&p);
	if (o->format == OUT_JSON) {
		print_json(&p);
		return ATTN_OK;
	}
	for (k = 0; k < o->nstages && status == ATTN_OK; k++) {
		enum attn_stage s = o->stages[k];

		switch (o->format) {
		case OUT_TABLE:
			if (k > 0)
				putc('\n', fp);
			status = print_table(&p, s);
			break;
		case OUT_CSV:
			print_delimited(&p, s, ',');
			break;
		case OUT_TSV:
			print_delimited(&p, s, '\t');
			break;
		case OUT_JSON:
			break;
		}
	}
	return status;
}
