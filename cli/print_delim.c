/*
 * print_delim.c - csv and tsv: numbers only, one matrix row a line, the
 * blocks of a stacked stage one under another.  Several stages each get
 * a comment line "# NAME DIMS" first, which attn and numpy.loadtxt skip;
 * --header adds a row of column labels and a column of row labels, and
 * the output reads back into attn.  --stats adds its table last, with a
 * header row (print_stats.c).
 */
#include <stdio.h>
#include <string.h>

#include "attn.h"
#include "print.h"

void
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

/* Stage s, its blocks one under another (attn_shape_block: for output
 * in the bhsd layout, a block a head). */
static void
print_stage(const struct printer *p, enum attn_stage s, char sep)
{
	char buf[ATTN_NUM_MAX], dims[96];
	struct attn_shape sh;
	struct attn_matrix m;
	size_t i, j, n;

	attn_stage_shape(p->st, s, &sh);
	if (print_sections(p) > 1) {
		print_dims(p, s, dims, sizeof dims);
		fprintf(p->fp, "# %s %s\n", attn_stage_table[s].name, dims);
	}
	if (p->o->header) {
		for (j = 0; j < sh.cols; j++) {
			putc(sep, p->fp);
			print_field(p->fp, print_col_label(p, s, j, buf), sep);
		}
		putc('\n', p->fp);
	}
	for (n = 0; n < sh.blocks; n++) {
		m = print_block(p, s, n);
		for (i = 0; i < m.rows; i++) {
			if (p->o->header) {
				print_field(p->fp, print_row_label(p, s, i),
				    sep);
				putc(sep, p->fp);
			}
			for (j = 0; j < m.cols; j++) {
				if (j > 0)
					putc(sep, p->fp);
				print_number(p, buf, *attn_at(&m, i, j));
				fputs(buf, p->fp);
			}
			putc('\n', p->fp);
		}
	}
}

/* Every stage of the list, separated by sep. */
static enum attn_status
print_delimited(const struct printer *p, char sep)
{
	size_t k;

	for (k = 0; k < p->o->nstages; k++)
		print_stage(p, p->o->stages[k], sep);
	if (p->o->stats)
		print_stats_delim(p, sep);
	return ATTN_OK;
}

enum attn_status
print_csv(const struct printer *p)
{
	return print_delimited(p, ',');
}

enum attn_status
print_tsv(const struct printer *p)
{
	return print_delimited(p, '\t');
}
