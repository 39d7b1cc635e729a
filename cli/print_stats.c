/*
 * print_stats.c - --stats as a table, for the table format and
 * --explain, and on the HTML page: the rows of stats.c (whose header
 * says what they hold), an undefined statistic shown as "-".  csv, tsv,
 * txt and JSON print the same rows in print_delim.c and print_json.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "attn_io.h"
#include "print.h"
#include "stats.h"

/* ----------------------------------------------------------------- table */

/* One block as an aligned table under a title line. */
static enum attn_status
stats_table_block(const struct printer *p, enum attn_stage s, size_t n)
{
	const size_t T = p->stages->T;
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
		width[c] = print_width(stats_heads[c]);
	if (r.tail > 0)
		w0 = strlen(PRINT_ELLIPSIS);
	for (l = 0; l < nr; l++) {
		if ((i = print_pick(l, r.head, r.tail, T)) == T)
			continue;
		stats_row(p, n, i, &rows[i]);
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
		print_pad(p->fp, 2 + width[c] - print_width(stats_heads[c]));
		fputs(stats_heads[c], p->fp);
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

	attn_stage_shape(p->stages, ATTN_STAGE_WEIGHTS, &sh);
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
			    stats_heads[c]);
		fputs("</tr></thead>\n<tbody>\n", p->fp);
		for (i = 0; i < sh.rows; i++) {
			stats_row(p, n, i, &r);
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

