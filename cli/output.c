/*
 * output.c - the printers.  Every number goes through attn_format_number
 * (locale-independent); tables are right-aligned in columns measured in
 * characters, so UTF-8 labels line up.
 *
 * A stage is a stack of blocks: one per batch and head for the per-head
 * stages, one per batch for output (heads side by side in its columns).
 * Tables print a block under its own title; csv and tsv print the blocks'
 * rows one after another; JSON nests them, batch, then head, then rows.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "output.h"

struct printer {
	FILE *fp;
	const struct options *o;
	const struct attn_stages *st;
	const struct names *nm;
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

/* ---------------------------------------------------------------- blocks */

/* How many blocks stage s has: B*H per head, else B. */
static size_t
nblocks(const struct printer *p, enum attn_stage s)
{
	return p->st->batches *
	    (attn_stage_table[s].per_head ? p->st->heads : 1);
}

/* Block n of stage s (for output: all heads of batch n). */
static struct attn_matrix
block(const struct printer *p, enum attn_stage s, size_t n)
{
	const struct attn_matrix *m = &p->st->stage[s];

	return attn_matrix_view(m, n * p->st->T, p->st->T, 0, m->cols);
}

/* ", batch 2, head 3" for block n of stage s, or "" with one of each. */
static void
stage_block_name(const struct printer *p, enum attn_stage s, size_t n,
    char *buf, size_t size)
{
	attn_block_name(buf, size, p->st->batches,
	    attn_stage_table[s].per_head ? p->st->heads : 1, n, ", ", "");
}

/* The dims of stage s as attn writes them: [B x][H x]T x C. */
static void
stage_dims(const struct printer *p, enum attn_stage s, char *buf,
    size_t size)
{
	const struct attn_matrix *m = &p->st->stage[s];
	size_t n = 0;

	buf[0] = '\0';
	if (p->st->batches > 1)
		n += (size_t)snprintf(buf, size, "%zux", p->st->batches);
	if (attn_stage_table[s].per_head && p->st->heads > 1 && n < size)
		n += (size_t)snprintf(buf + n, size - n, "%zux",
		    p->st->heads);
	if (n < size)
		snprintf(buf + n, size - n, "%zux%zu", p->st->T, m->cols);
}

/* The label of column j of stage s; buf holds it when it is made up:
 * value columns are numbered, per head when there are several. */
static const char *
col_label(const struct printer *p, enum attn_stage s, size_t j,
    char buf[ATTN_NUM_MAX])
{
	switch (attn_stage_table[s].cols) {
	case ATTN_AXIS_KEY:
		return p->nm->key[j];
	case ATTN_AXIS_VALUE:
		if (p->st->heads > 1)
			snprintf(buf, ATTN_NUM_MAX, "h%zu:%zu",
			    j / p->st->d_v + 1, j % p->st->d_v + 1);
		else
			snprintf(buf, ATTN_NUM_MAX, "%zu", j + 1);
		return buf;
	case ATTN_AXIS_ONE:
	case ATTN_AXIS_QUERY:
	case ATTN_AXIS_BATCH:
	case ATTN_AXIS_HEAD:
		break;
	}
	return attn_stage_table[s].name;
}

/* ---------------------------------------------------------------- table */

/*
 * The text of element (i, j) of block n of stage s in a table.  A weight
 * that a mask removed is shown as "-" rather than 0, so that masked
 * entries stand out from weights that merely round to 0.
 */
static size_t
cell(const struct printer *p, enum attn_stage s, size_t n, size_t i,
    size_t j, char *buf)
{
	struct attn_matrix m = block(p, s, n);
	double x = *attn_at(&m, i, j);

	if (s == ATTN_STAGE_WEIGHTS && x == 0.0) {
		struct attn_matrix keep = block(p, ATTN_STAGE_MASK, n);

		if (*attn_at(&keep, i, j) == 0.0) {
			strcpy(buf, "-");
			return 1;
		}
	}
	return fmt_num(p, buf, x);
}

/* The formula of stage s as computed in this run: for scaled, the steps
 * that the options add after the scaling. */
static const char *
formula(const struct printer *p, enum attn_stage s, char *buf, size_t size)
{
	const struct attn_config *c = &p->o->cfg;

	if (s != ATTN_STAGE_SCALED)
		return attn_stage_table[s].formula;
	snprintf(buf, size, "%s%s%s%s%s", attn_stage_table[s].formula,
	    c->softcap > 0.0 ? ", softcapped" : "",
	    p->nm->bias != NULL ? " + bias" : "", c->alibi ? " + ALiBi" : "",
	    c->causal || c->window || p->nm->mask != NULL ?
	    ", masked entries -inf" : "");
	return buf;
}

static enum attn_status
print_table_block(const struct printer *p, enum attn_stage s, size_t n)
{
	const struct attn_stage_info *info = &attn_stage_table[s];
	const struct attn_matrix m = block(p, s, n);
	char buf[ATTN_NUM_MAX], where[64], f[128];
	size_t i, j, w0 = 0, *width;

	/* Column widths: the widest of the label and every number. */
	if ((width = attn_alloc_array(m.cols, sizeof *width)) == NULL)
		return attn_error_set(p->err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "out of memory laying out a table of %zu columns", m.cols);
	for (j = 0; j < m.cols; j++) {
		width[j] = text_width(col_label(p, s, j, buf));
		for (i = 0; i < m.rows; i++) {
			size_t len = cell(p, s, n, i, j, buf);

			if (len > width[j])
				width[j] = len;
		}
	}
	for (i = 0; i < m.rows; i++)
		if (text_width(p->nm->query[i]) > w0)
			w0 = text_width(p->nm->query[i]);

	/* "weights, head 2 = softmax(scaled), row by row   [T x S = 2x3]" */
	stage_block_name(p, s, n, where, sizeof where);
	fprintf(p->fp, "%s%s = %s   [%s = %zux%zu]\n", info->name, where,
	    formula(p, s, f, sizeof f), s == ATTN_STAGE_OUTPUT &&
	    p->st->heads > 1 ? "T x H*d_v" : info->shape, m.rows, m.cols);
	pad(p->fp, w0);
	for (j = 0; j < m.cols; j++) {
		const char *label = col_label(p, s, j, buf);

		pad(p->fp, 2 + width[j] - text_width(label));
		fputs(label, p->fp);
	}
	putc('\n', p->fp);
	for (i = 0; i < m.rows; i++) {
		fputs(p->nm->query[i], p->fp);
		pad(p->fp, w0 - text_width(p->nm->query[i]));
		for (j = 0; j < m.cols; j++) {
			size_t len = cell(p, s, n, i, j, buf);

			pad(p->fp, 2 + width[j] - len);
			fputs(buf, p->fp);
		}
		putc('\n', p->fp);
	}
	free(width);
	return ATTN_OK;
}

static enum attn_status
print_table(const struct printer *p, enum attn_stage s)
{
	enum attn_status st = ATTN_OK;
	size_t n;

	for (n = 0; n < nblocks(p, s) && st == ATTN_OK; n++) {
		if (n > 0)
			putc('\n', p->fp);
		st = print_table_block(p, s, n);
	}
	return st;
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
	char buf[ATTN_NUM_MAX], dims[96];
	size_t i, j;

	if (p->o->nstages > 1) {
		stage_dims(p, s, dims, sizeof dims);
		fprintf(p->fp, "# %s %s\n", attn_stage_table[s].name, dims);
	}
	if (p->o->header) {
		for (j = 0; j < m->cols; j++) {
			putc(sep, p->fp);
			print_field(p->fp, col_label(p, s, j, buf), sep);
		}
		putc('\n', p->fp);
	}
	for (i = 0; i < m->rows; i++) {
		if (p->o->header) {
			print_field(p->fp, p->nm->query[i % p->st->T], sep);
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

/*
 * Stage s nested as [batch][head][row][column], leaving out the batch
 * level with one batch and the head level with one head (or for output,
 * whose heads sit side by side).
 */
static void
print_json_stage(const struct printer *p, enum attn_stage s, int ind)
{
	const size_t B = p->st->batches;
	const size_t H = attn_stage_table[s].per_head ? p->st->heads : 1;
	size_t b, h;
	int in_b = ind + (B > 1 ? 2 : 0), in_h = in_b + (H > 1 ? 2 : 0);

	if (B > 1)
		fputs("[\n", p->fp);
	for (b = 0; b < B; b++) {
		if (B > 1)
			fprintf(p->fp, "%*s", in_b, "");
		if (H > 1)
			fputs("[\n", p->fp);
		for (h = 0; h < H; h++) {
			struct attn_matrix m = block(p, s, b * H + h);

			if (H > 1)
				fprintf(p->fp, "%*s", in_h, "");
			print_json_matrix(p, &m, in_h);
			if (H > 1)
				fputs(h + 1 < H ? ",\n" : "\n", p->fp);
		}
		if (H > 1)
			fprintf(p->fp, "%*s]", in_b, "");
		if (B > 1)
			fputs(b + 1 < B ? ",\n" : "\n", p->fp);
	}
	if (B > 1)
		fprintf(p->fp, "%*s]", ind, "");
}

static void
print_json(const struct printer *p)
{
	size_t k;

	if (p->o->nstages == 1) {
		print_json_stage(p, p->o->stages[0], 0);
		putc('\n', p->fp);
		return;
	}
	fputs("{\n", p->fp);
	for (k = 0; k < p->o->nstages; k++) {
		enum attn_stage s = p->o->stages[k];

		fprintf(p->fp, "  \"%s\": ", attn_stage_table[s].name);
		print_json_stage(p, s, 2);
		fputs(k + 1 < p->o->nstages ? ",\n" : "\n", p->fp);
	}
	fputs("}\n", p->fp);
}

/* ---------------------------------------------------------------- explain */

/* The line after the weights: how far the worst row sum is from 1, over
 * the rows that may attend some key. */
static void
print_row_sum_check(const struct printer *p)
{
	const struct attn_matrix *w = &p->st->stage[ATTN_STAGE_WEIGHTS];
	char buf[ATTN_NUM_MAX];
	double worst = 0.0;
	size_t i, j, k = 0;

	size_t nans = 0;

	for (i = 0; i < w->rows; i++) {
		double sum = 0.0;

		if (k < p->st->nmasked && p->st->masked[k] == i) {
			k++;
			continue;
		}
		for (j = 0; j < w->cols; j++)
			sum += *attn_at(w, i, j);
		if (isnan(sum))
			nans++;
		else if (fabs(sum - 1.0) > worst)
			worst = fabs(sum - 1.0);
	}
	attn_format_number(buf, worst, 2, 0);
	fprintf(p->fp, "check: each row of weights sums to 1 "
	    "(largest |sum - 1| = %s)", buf);
	if (p->st->nmasked > 0)
		fprintf(p->fp, "; %zu row%s that attend%s no key left out",
		    p->st->nmasked, p->st->nmasked == 1 ? "" : "s",
		    p->st->nmasked == 1 ? "s" : "");
	if (nans > 0)
		fprintf(p->fp, "; %zu row%s nan (a nan or inf in the bias)",
		    nans, nans == 1 ? " is" : "s are");
	putc('\n', p->fp);
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

/* Whether any rule can mask an entry: then --explain shows the mask. */
static int
masking(const struct printer *p)
{
	return p->o->cfg.causal || p->o->cfg.window || p->nm->mask != NULL ||
	    p->nm->bias != NULL;
}

/* The conventions in force, every one named, so that a reader can tell
 * which framework's behaviour the numbers follow. */
static void
print_conventions(const struct printer *p)
{
	static const char *const policy[] = {
		[ATTN_MASKED_ZERO] = "zero", [ATTN_MASKED_NAN] = "nan",
		[ATTN_MASKED_UNIFORM] = "uniform",
	};
	const struct attn_config *c = &p->o->cfg;
	const char *sep = "";
	char buf[ATTN_NUM_MAX];
	size_t h;

	fputs("conventions: alignment ", p->fp);
	if (c->align == ATTN_ALIGN_BOTTOM_RIGHT)
		fprintf(p->fp, "bottom-right (offset S - T = %s%zu",
		    p->st->S >= p->st->T ? "" : "-", p->st->S >= p->st->T ?
		    p->st->S - p->st->T : p->st->T - p->st->S);
	else
		fputs("top-left (offset 0", p->fp);
	if (p->o->like != NULL && p->o->like_align)
		fprintf(p->fp, ", --like %s", p->o->like);
	putc(')', p->fp);
	fprintf(p->fp, "; masked rows %s", policy[c->masked_rows]);
	if (p->o->like != NULL && p->o->like_masked_rows)
		fprintf(p->fp, " (--like %s)", p->o->like);
	fputs("; softcap ", p->fp);
	if (c->softcap > 0.0) {
		fmt_num(p, buf, c->softcap);
		fputs(buf, p->fp);
	} else {
		fputs("none", p->fp);
	}
	fputs("; masks ", p->fp);
	if (c->causal) {
		fputs("causal", p->fp);
		sep = ", ";
	}
	if (c->window) {
		fprintf(p->fp, "%swindow %zu,%zu", sep, c->window_left,
		    c->window_right);
		sep = ", ";
	}
	if (p->nm->mask != NULL) {
		fprintf(p->fp, "%s%s (%s keeps)", sep, p->nm->mask,
		    c->mask_invert ? "zero" : "nonzero");
		sep = ", ";
	}
	if (*sep == '\0')
		fputs("none", p->fp);
	if (p->nm->bias != NULL)
		fprintf(p->fp, "; bias %s", p->nm->bias);
	if (c->alibi) {
		fputs("; ALiBi slopes", p->fp);
		for (h = 0; h < p->st->heads; h++) {
			fmt_num(p, buf, attn_alibi_slope(h, p->st->heads));
			fprintf(p->fp, " %s", buf);
		}
	}
	putc('\n', p->fp);
}

/* "Q is 2x3x8, K is ...: B=2 batches of T=3 queries, ..." */
static void
print_shapes(const struct printer *p)
{
	const struct attn_stages *st = p->st;
	const size_t G = st->kv_heads;

	fprintf(p->fp, "Q is ");
	if (st->batches > 1)
		fprintf(p->fp, "%zux", st->batches);
	fprintf(p->fp, "%zux%zu, K is ", st->T, st->heads * st->d_k);
	if (st->batches > 1)
		fprintf(p->fp, "%zux", st->batches);
	fprintf(p->fp, "%zux%zu, V is ", st->S, G * st->d_k);
	if (st->batches > 1)
		fprintf(p->fp, "%zux", st->batches);
	fprintf(p->fp, "%zux%zu: ", st->S, G * st->d_v);
	if (st->batches > 1)
		fprintf(p->fp, "B=%zu batches of ", st->batches);
	fprintf(p->fp, "T=%zu queries, S=%zu keys, ", st->T, st->S);
	if (G != st->heads)
		fprintf(p->fp, "H=%zu heads sharing G=%zu KV heads, per head ",
		    st->heads, G);
	else if (st->heads > 1)
		fprintf(p->fp, "H=%zu heads, per head ", st->heads);
	fprintf(p->fp, "d_k=%zu, d_v=%zu\n", st->d_k, st->d_v);
}

static enum attn_status
print_explain(const struct printer *p)
{
	enum attn_status status;
	size_t s;

	print_shapes(p);
	print_scale_line(p);
	print_conventions(p);
	for (s = 0; s < ATTN_STAGE_COUNT; s++) {
		if (attn_stage_table[s].internal ||
		    (s == ATTN_STAGE_MASK && !masking(p)))
			continue;
		putc('\n', p->fp);
		if ((status = print_table(p, (enum attn_stage)s)) != ATTN_OK)
			return status;
		if (s == ATTN_STAGE_WEIGHTS)
			print_row_sum_check(p);
	}
	return ATTN_OK;
}

unsigned
output_wants(const struct options *o)
{
	unsigned want = 0;
	size_t k, s;

	if (o->explain) {
		for (s = 0; s < ATTN_STAGE_COUNT; s++)
			if (!attn_stage_table[s].internal)
				want |= ATTN_STAGE_BIT(s);
		return want;
	}
	for (k = 0; k < o->nstages; k++)
		want |= ATTN_STAGE_BIT(o->stages[k]);
	/* A table shows a masked weight as "-", read from the mask. */
	if (o->format == OUT_TABLE &&
	    (want & ATTN_STAGE_BIT(ATTN_STAGE_WEIGHTS)))
		want |= ATTN_STAGE_BIT(ATTN_STAGE_MASK);
	return want;
}

enum attn_status
output_print(FILE *fp, const struct options *o, const struct attn_stages *st,
    const struct names *nm, struct attn_error *err)
{
	struct printer p = { fp, o, st, nm, 0, err };
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
