/*
 * print_stats.c - --stats: for each query row of each batch and head, the
 * largest weight and the key it falls on, the entropy of the row in nats,
 * exp(entropy) (the effective number of keys: 1 when one key takes all
 * the weight, S when the weights are uniform), and how many keys the row
 * may attend, in every output format.
 *
 * Everything is read from the weights and mask stages (print_stats_row,
 * which the workbench shows too); the
 * entropy -sum w log w is the one number made here, since no stage holds
 * it.  A row that may attend no key has no softmax, whatever
 * --masked-rows put in its weights: its statistics are undefined ("-" in
 * a table, empty in csv and tsv, null in JSON) but for the count, 0.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "attn_io.h"
#include "print.h"

/* The columns, as csv, tsv and JSON name them, and as a table heads
 * them. */
enum { STAT_MAX, STAT_KEY, STAT_ENTROPY, STAT_EXP, STAT_KEYS, STAT_COUNT };
static const char *const stat_names[STAT_COUNT] = {
	"max_weight", "max_key", "entropy", "exp_entropy", "may_attend"
};
static const char *const stat_heads[STAT_COUNT] = {
	"max weight", "at key", "entropy", "exp(entropy)", "may attend"
};

void
print_stats_row(const struct printer *p, size_t n, size_t i,
    struct stats_row *r)
{
	const struct attn_matrix w = print_block(p, ATTN_STAGE_WEIGHTS, n);
	const struct attn_matrix keep = print_block(p, ATTN_STAGE_MASK, n);
	size_t j;

	memset(r, 0, sizeof *r);
	r->argmax = w.cols;
	for (j = 0; j < keep.cols; j++)
		r->keys += *attn_at(&keep, i, j) != 0.0;
	r->defined = r->keys > 0;
	if (!r->defined)
		return;
	r->max = -INFINITY;
	for (j = 0; j < w.cols; j++) {
		double x = *attn_at(&w, i, j);

		if (x > r->max) {
			r->max = x;
			r->argmax = j;
		}
		if (x > 0.0)
			r->entropy -= x * log(x);
	}
}

/*
 * Cell c of a row as text in buf (ATTN_NUM_MAX bytes): the number as the
 * format writes it, the key's label, or "" when undefined.  Returns buf or
 * the label.
 */
static const char *
stats_cell(const struct printer *p, const struct stats_row *r, int c,
    char *buf)
{
	buf[0] = '\0';
	if (c == STAT_KEYS) {
		snprintf(buf, ATTN_NUM_MAX, "%zu", r->keys);
		return buf;
	}
	if (!r->defined)
		return buf;
	switch (c) {
	case STAT_MAX:
		print_number(p, buf, r->max);
		break;
	case STAT_KEY:
		return r->argmax < p->st->S ? p->nm->key[r->argmax] : buf;
	case STAT_ENTROPY:
		print_number(p, buf, r->entropy);
		break;
	case STAT_EXP:
		print_number(p, buf, exp(r->entropy));
		break;
	}
	return buf;
}

/* ----------------------------------------------------------------- table */

/* One block as an aligned table under a title line. */
static enum attn_status
stats_table_block(const struct printer *p, enum attn_stage s, size_t n)
{
	const size_t T = p->st->T;
	char buf[ATTN_NUM_MAX], where[64];
	size_t width[STAT_COUNT], w0 = 0, i, l, nr;
	struct print_span r, cols;
	struct stats_row *rows;
	int c;

	/* the rows shown: all, or the first and last around "..." */
	print_spans(p, T, STAT_COUNT, &r, &cols);
	nr = print_span_count(&r);
	if ((rows = attn_alloc_array(T, sizeof *rows)) == NULL)
		return attn_error_set(p->err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "out of memory for the statistics of %zu rows", T);
	for (c = 0; c < STAT_COUNT; c++)
		width[c] = print_width(stat_heads[c]);
	if (r.tail > 0)
		w0 = strlen(PRINT_ELLIPSIS);
	for (l = 0; l < nr; l++) {
		if ((i = print_pick(l, r.head, r.tail, T)) == T)
			continue;
		print_stats_row(p, n, i, &rows[i]);
		if (print_width(p->nm->query[i]) > w0)
			w0 = print_width(p->nm->query[i]);
		for (c = 0; c < STAT_COUNT; c++) {
			size_t len = print_width(stats_cell(p, &rows[i], c,
			    buf));

			if (len == 0)
				len = 1;	/* "-" */
			if (len > width[c])
				width[c] = len;
		}
	}
	print_block_name(p, s, n, where, sizeof where);
	fprintf(p->fp, "stats of weights%s: largest weight and its key, "
	    "entropy -sum(w log w) in nats, exp(entropy), keys it may "
	    "attend\n", where);
	print_pad(p->fp, w0);
	for (c = 0; c < STAT_COUNT; c++) {
		print_pad(p->fp, 2 + width[c] - print_width(stat_heads[c]));
		fputs(stat_heads[c], p->fp);
	}
	putc('\n', p->fp);
	for (l = 0; l < nr; l++) {
		if ((i = print_pick(l, r.head, r.tail, T)) == T) {
			fputs(PRINT_ELLIPSIS "\n", p->fp);
			continue;
		}
		fputs(p->nm->query[i], p->fp);
		print_pad(p->fp, w0 - print_width(p->nm->query[i]));
		for (c = 0; c < STAT_COUNT; c++) {
			const char *text = stats_cell(p, &rows[i], c, buf);

			if (*text == '\0')
				text = "-";
			print_pad(p->fp, 2 + width[c] - print_width(text));
			fputs(text, p->fp);
		}
		putc('\n', p->fp);
	}
	print_elided(p, &r, &cols);
	free(rows);
	return ATTN_OK;
}

enum attn_status
print_stats(const struct printer *p)
{
	return print_blocks(p, ATTN_STAGE_WEIGHTS, stats_table_block);
}

/* ----------------------------------------------------------------- html */

void
print_stats_html(const struct printer *p)
{
	char buf[ATTN_NUM_MAX], where[64];
	struct attn_shape sh;
	struct stats_row r;
	size_t n, i;
	int c;

	attn_stage_shape(p->st, ATTN_STAGE_WEIGHTS, &sh);
	fputs("<h3>stats: largest weight and its key, entropy -sum(w log w) "
	    "in nats, exp(entropy), keys it may attend</h3>\n", p->fp);
	for (n = 0; n < sh.blocks; n++) {
		print_block_name(p, ATTN_STAGE_WEIGHTS, n, where, sizeof where);
		fputs("<div class=\"scroll\"><table class=\"stats\">", p->fp);
		if (where[0] != '\0')
			fprintf(p->fp, "<caption>%s</caption>", where + 2);
		fputs("\n<thead><tr><th></th>", p->fp);
		for (c = 0; c < STAT_COUNT; c++)
			fprintf(p->fp, "<th scope=\"col\">%s</th>",
			    stat_heads[c]);
		fputs("</tr></thead>\n<tbody>\n", p->fp);
		for (i = 0; i < sh.rows; i++) {
			print_stats_row(p, n, i, &r);
			fputs("<tr><th scope=\"row\">", p->fp);
			print_xml(p->fp, p->nm->query[i]);
			fputs("</th>", p->fp);
			for (c = 0; c < STAT_COUNT; c++) {
				const char *text = stats_cell(p, &r, c, buf);

				fputs("<td>", p->fp);
				print_xml(p->fp, *text == '\0' ? "-" : text);
				fputs("</td>", p->fp);
			}
			fputs("</tr>\n", p->fp);
		}
		fputs("</tbody></table></div>\n", p->fp);
	}
}

/* ------------------------------------------------------------ csv, tsv */

void
print_stats_delim(const struct printer *p, char sep)
{
	char buf[ATTN_NUM_MAX], dims[96];
	struct attn_shape sh;
	struct stats_row r;
	size_t n, i;
	int c;

	attn_stage_shape(p->st, ATTN_STAGE_WEIGHTS, &sh);
	if (print_sections(p) > 1) {
		/* the dims of the weights without their key axis */
		print_dims(p, ATTN_STAGE_WEIGHTS, dims, sizeof dims);
		*strrchr(dims, 'x') = '\0';
		fprintf(p->fp, "# stats %s\n", dims);
	}
	/* A header always: the columns are not all numbers. */
	if (sh.batches > 1)
		fprintf(p->fp, "batch%c", sep);
	if (sh.heads > 1)
		fprintf(p->fp, "head%c", sep);
	fputs("query", p->fp);
	for (c = 0; c < STAT_COUNT; c++)
		fprintf(p->fp, "%c%s", sep, stat_names[c]);
	putc('\n', p->fp);
	for (n = 0; n < sh.blocks; n++)
		for (i = 0; i < sh.rows; i++) {
			print_stats_row(p, n, i, &r);
			if (sh.batches > 1)
				fprintf(p->fp, "%zu%c", n / sh.heads + 1, sep);
			if (sh.heads > 1)
				fprintf(p->fp, "%zu%c", n % sh.heads + 1, sep);
			print_label(p->fp, p->nm->query[i], sep);
			for (c = 0; c < STAT_COUNT; c++) {
				putc(sep, p->fp);
				if (c == STAT_KEY)	/* a label */
					print_label(p->fp, stats_cell(p, &r, c,
					    buf), sep);
				else
					print_field(p->fp, stats_cell(p, &r, c,
					    buf), sep);
			}
			putc('\n', p->fp);
		}
}

/* ----------------------------------------------------------------- json */

/* Block n as an array of objects, one a row, one a line. */
static void
stats_json_block(const struct printer *p, enum attn_stage s, size_t n,
    int ind)
{
	struct stats_row r;
	size_t i;

	(void)s;
	fputs("[\n", p->fp);
	for (i = 0; i < p->st->T; i++) {
		print_stats_row(p, n, i, &r);
		fprintf(p->fp, "%*s{\"query\": ", ind + 2, "");
		print_json_string(p->fp, p->nm->query[i]);
		fprintf(p->fp, ", \"%s\": ", stat_names[STAT_MAX]);
		print_json_number(p, r.defined, r.max);
		fprintf(p->fp, ", \"%s\": ", stat_names[STAT_KEY]);
		if (r.defined && r.argmax < p->st->S)
			print_json_string(p->fp, p->nm->key[r.argmax]);
		else
			fputs("null", p->fp);
		fprintf(p->fp, ", \"%s\": ", stat_names[STAT_ENTROPY]);
		print_json_number(p, r.defined, r.entropy);
		fprintf(p->fp, ", \"%s\": ", stat_names[STAT_EXP]);
		print_json_number(p, r.defined, exp(r.entropy));
		fprintf(p->fp, ", \"%s\": %zu}%s\n", stat_names[STAT_KEYS],
		    r.keys, i + 1 < p->st->T ? "," : "");
	}
	fprintf(p->fp, "%*s]", ind, "");
}

void
print_stats_json(const struct printer *p, int ind)
{
	print_json_blocks(p, ATTN_STAGE_WEIGHTS, ind, stats_json_block);
}
