/*
 * print_delim.c - csv, tsv and txt (whitespace text, as numpy.savetxt
 * writes it, which -o FILE.txt picks): numbers only, one matrix row a
 * line, the blocks of a stacked stage one under another.  A stacked stage, and
 * each of several stages, gets a comment line "# NAME DIMS" first, which
 * attn and numpy.loadtxt skip;
 * --header adds a row of column labels and a column of row labels, and
 * the output reads back into attn.  --stats adds its rows (stats.h)
 * last, with a header row.
 */
#define _POSIX_C_SOURCE 200809L	/* strcasecmp */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "attn.h"
#include "attn_io.h"
#include "print.h"
#include "rows.h"
#include "stats.h"

/* s as one field: quoted (RFC 4180) when quoted is set or when it holds
 * the separator, a quote or a line break, or has blanks around it (which
 * a reader trims).  In whitespace text (sep ' ') any run of blanks
 * separates, so a blank anywhere, or an empty field, is quoted too. */
static void
put_field(FILE *fp, const char *s, char sep, int quoted)
{
	const size_t len = strlen(s);
	const char seps[] = { sep, sep == ' ' ? '\t' : '\0', '\0' };
	const char *c;

	if (!quoted && strpbrk(s, seps) == NULL && !(sep == ' ' && len == 0) &&
	    strpbrk(s, "\"\r\n") == NULL && (len == 0 ||
	    (s[0] != ' ' && s[0] != '\t' && s[len - 1] != ' ' &&
	    s[len - 1] != '\t'))) {
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

void
print_field(FILE *fp, const char *s, char sep)
{
	put_field(fp, s, sep, 0);
}

/*
 * A label is quoted besides where a reader would take it for something
 * else: a number ("2", "nan"; attn's reader takes a quoted number in the
 * label column for a label), a mask's true or false (in any case), or
 * at the start of a line a comment ("#1").
 */
void
print_label(FILE *fp, const char *s, char sep)
{
	double x;

	put_field(fp, s, sep, s[0] == '#' ||
	    attn_parse_number(s, strlen(s), &x) >= 0 ||
	    strcasecmp(s, "true") == 0 || strcasecmp(s, "false") == 0);
}

/* A block of a stage, its rows formatted on -j's threads (rows.h). */
struct delim_rows {
	const struct printer *p;
	enum attn_stage s;
	struct attn_matrix m;
	char sep;
};

/* The numbers of row i, then '\n': written straight into buf, since a
 * putc and an fputs (a lock and a strlen each) a number cost as much as
 * writing the number itself. */
static size_t
delim_row(const void *ctx, size_t i, char *buf)
{
	const struct delim_rows *d = ctx;
	size_t j, n = 0;

	for (j = 0; j < d->m.cols; j++) {
		if (j > 0)
			buf[n++] = d->sep;
		n += print_number(d->p, buf + n, *attn_at(&d->m, i, j));
	}
	buf[n++] = '\n';
	return n;
}

/* --header's label of row i, before its numbers. */
static void
delim_label(const void *ctx, size_t i, FILE *fp)
{
	const struct delim_rows *d = ctx;

	print_label(fp, print_row_label(d->p, d->s, i), d->sep);
	putc(d->sep, fp);
}

/* Stage s, its blocks one under another (attn_shape_block: for output
 * in the bhsd layout, a block a head). */
static enum attn_status
print_stage(const struct printer *p, enum attn_stage s, char sep)
{
	char buf[PRINT_LABEL_MAX], dims[96];
	struct delim_rows d;
	struct rows_job job;
	struct attn_shape sh;
	enum attn_status st;
	size_t j, n;

	attn_stage_shape(p->stages, s, &sh);
	/* the dims to reshape to when there are several blocks, and what
	 * ends the stage before the next one */
	if (print_sections(p) > 1 || sh.blocks > 1) {
		print_dims(p, s, dims, sizeof dims);
		fprintf(p->fp, "# %s %s\n", attn_stage_table[s].name, dims);
	}
	if (p->o->header) {
		for (j = 0; j < sh.cols; j++) {
			putc(sep, p->fp);
			print_label(p->fp, print_col_label(p, s,
			    PRINT_EVERY_BLOCK, j, buf), sep);
		}
		putc('\n', p->fp);
	}
	d.p = p;
	d.s = s;
	d.sep = sep;
	job.row = delim_row;
	job.before = p->o->header ? delim_label : NULL;
	job.ctx = &d;
	for (n = 0; n < sh.blocks; n++) {
		d.m = print_block(p, s, n);
		job.rows = d.m.rows;
		/* each number and its separator, and the line's end */
		job.row_bytes = d.m.cols * ATTN_NUM_MAX + 1;
		if ((st = rows_write(p->fp, p->o->cfg.threads, &job, p->err)) !=
		    ATTN_OK)
			return st;
	}
	return ATTN_OK;
}

/* The --stats rows (stats.h), after the stages: a header row always,
 * since the columns are not all numbers, then a row per query, with
 * batch and head columns when there are several. */
static void
print_stats_rows(const struct printer *p, char sep)
{
	char buf[ATTN_NUM_MAX], dims[96];
	struct attn_shape sh;
	struct stats_row r;
	size_t n, i;
	int c;

	attn_stage_shape(p->stages, ATTN_STAGE_WEIGHTS, &sh);
	if (print_sections(p) > 1) {
		/* the dims of the weights without their key axis */
		print_dims(p, ATTN_STAGE_WEIGHTS, dims, sizeof dims);
		*strrchr(dims, 'x') = '\0';
		fprintf(p->fp, "# stats %s\n", dims);
	}
	if (sh.batches > 1)
		fprintf(p->fp, "batch%c", sep);
	if (sh.heads > 1)
		fprintf(p->fp, "head%c", sep);
	fputs("query", p->fp);
	for (c = 0; c < STAT_COUNT; c++)
		fprintf(p->fp, "%c%s", sep, stats_names[c]);
	putc('\n', p->fp);
	for (n = 0; n < sh.blocks; n++)
		for (i = 0; i < sh.rows; i++) {
			stats_row(p, n, i, &r);
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

/* Every stage of the list, separated by sep. */
static enum attn_status
print_delimited(const struct printer *p, char sep)
{
	enum attn_status st;
	size_t k;

	for (k = 0; k < p->o->nstages; k++)
		if ((st = print_stage(p, p->o->stages[k], sep)) != ATTN_OK)
			return st;
	if (p->o->stats)
		print_stats_rows(p, sep);
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

enum attn_status
print_txt(const struct printer *p)
{
	return print_delimited(p, ' ');
}
