/*
 * print_json.c - JSON: one stage is its bare nested array (so that
 * `attn -s weights -f json | jq '.[0]'` works), several are an object
 * keyed by stage name.  A stage nests as its shape says, batch, then
 * head, then rows (attn_stage_shape leaves out the levels of one), or in
 * the order of a 4-D layout, walked by the shape's steps.  JSON
 * cannot spell infinities, so non-finite values are the strings "inf",
 * "-inf" and "nan", which attn reads back.  With --stats, the statistics
 * are one more member, "stats", nested the same way (stats.h's rows).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attn.h"
#include "attn_io.h"
#include "print.h"
#include "rows.h"
#include "stats.h"

/* x as JSON writes it into buf (ATTN_NUM_MAX + 2 bytes): non-finite as
 * a string; returns its length. */
static size_t
json_number(const struct printer *p, char *buf, double x)
{
	size_t n;

	if (isfinite(x))
		return print_number(p, buf, x);
	buf[0] = '"';
	n = print_number(p, buf + 1, x);
	buf[n + 1] = '"';
	return n + 2;
}

void
print_json_number(const struct printer *p, int defined, double x)
{
	char buf[ATTN_NUM_MAX + 2];

	if (!defined)
		fputs("null", p->fp);
	else	/* not fprintf: a tenth of the time */
		fwrite(buf, 1, json_number(p, buf, x), p->fp);
}

/* The rows of a level whose elements are rows of numbers, formatted on
 * -j's threads (rows.h). */
struct json_rows {
	const struct printer *p;
	const struct attn_shape *sh;
	const double *data;
	size_t d, off;		/* the level, and where it starts */
	int ind;
};

/* Row i of the level, on its own line after the previous row's comma. */
static size_t
json_row(const void *ctx, size_t i, char *buf)
{
	const struct json_rows *r = ctx;
	const size_t d = r->d + 1, at = r->off + i * r->sh->step[r->d];
	size_t j, n = 0;

	if (i > 0)
		buf[n++] = ',';
	buf[n++] = '\n';
	memset(buf + n, ' ', (size_t)r->ind + 2);
	n += (size_t)r->ind + 2;
	buf[n++] = '[';
	for (j = 0; j < r->sh->dim[d]; j++) {
		if (j > 0) {
			buf[n++] = ',';
			buf[n++] = ' ';
		}
		n += json_number(r->p, buf + n, r->data[at + j * r->sh->step[d]]);
	}
	buf[n++] = ']';
	return n;
}

/*
 * Level d of stage s's shape from element offset off of its data, as a
 * JSON array indented by ind spaces: the last level is one line of
 * numbers, each other level one element a line.  The dims and their
 * steps come from attn_stage_shape, so every layout nests as its shape
 * says.
 */
static enum attn_status
print_level(const struct printer *p, const struct attn_shape *sh,
    const double *data, size_t d, size_t off, int ind)
{
	struct json_rows r;
	struct rows_job job;
	enum attn_status st;
	size_t i;

	putc('[', p->fp);
	if (d + 2 == sh->ndim) {
		r.p = p;
		r.sh = sh;
		r.data = data;
		r.d = d;
		r.off = off;
		r.ind = ind;
		job.rows = sh->dim[d];
		/* a number, its quotes and ", " a column; the line's start */
		job.row_bytes = sh->dim[d + 1] * (ATTN_NUM_MAX + 3) +
		    (size_t)ind + 8;
		job.row = json_row;
		job.before = NULL;
		job.ctx = &r;
		if ((st = rows_write(p->fp, p->o->cfg.threads, &job,
		    p->err)) != ATTN_OK)
			return st;
	}
	for (i = 0; d + 2 < sh->ndim && i < sh->dim[d]; i++) {
		fprintf(p->fp, "%s%*s", i > 0 ? ",\n" : "\n", ind + 2, "");
		if ((st = print_level(p, sh, data, d + 1, off + i *
		    sh->step[d], ind + 2)) != ATTN_OK)
			return st;
	}
	for (i = 0; d + 1 == sh->ndim && i < sh->dim[d]; i++) {
		if (i > 0)
			fputs(", ", p->fp);
		print_json_number(p, 1, data[off + i * sh->step[d]]);
	}
	if (d + 1 < sh->ndim)
		fprintf(p->fp, "\n%*s", ind, "");
	putc(']', p->fp);
	return ATTN_OK;
}

void
print_json_blocks(const struct printer *p, enum attn_stage s, int ind,
    void (*block)(const struct printer *p, enum attn_stage s, size_t n,
    int ind))
{
	struct attn_shape sh;
	size_t b, h, B, H;
	int in_b, in_h;

	attn_stage_shape(p->stages, s, &sh);
	B = sh.batches;
	H = sh.heads;
	in_b = ind + (B > 1 ? 2 : 0);
	in_h = in_b + (H > 1 ? 2 : 0);
	if (B > 1)
		fputs("[\n", p->fp);
	for (b = 0; b < B; b++) {
		if (B > 1)
			fprintf(p->fp, "%*s", in_b, "");
		if (H > 1)
			fputs("[\n", p->fp);
		for (h = 0; h < H; h++) {
			if (H > 1)
				fprintf(p->fp, "%*s", in_h, "");
			block(p, s, b * H + h, in_h);
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

/* Block n of the --stats rows as an array of objects, one a row, one a
 * line. */
static void
stats_json_block(const struct printer *p, enum attn_stage s, size_t n,
    int ind)
{
	struct stats_row r;
	size_t i;

	(void)s;
	fputs("[\n", p->fp);
	for (i = 0; i < p->stages->T; i++) {
		stats_row(p, n, i, &r);
		fprintf(p->fp, "%*s{\"query\": ", ind + 2, "");
		print_json_string(p->fp, p->nm->query[i]);
		fprintf(p->fp, ", \"%s\": ", stats_names[STAT_MAX]);
		print_json_number(p, r.defined, r.max);
		fprintf(p->fp, ", \"%s\": ", stats_names[STAT_KEY]);
		if (r.defined && r.argmax < p->stages->S)
			print_json_string(p->fp, p->nm->key[r.argmax]);
		else
			fputs("null", p->fp);
		fprintf(p->fp, ", \"%s\": ", stats_names[STAT_ENTROPY]);
		print_json_number(p, r.defined, r.entropy);
		fprintf(p->fp, ", \"%s\": ", stats_names[STAT_EXP]);
		print_json_number(p, r.defined, exp(r.entropy));
		fprintf(p->fp, ", \"%s\": %zu}%s\n", stats_names[STAT_KEYS],
		    r.keys, i + 1 < p->stages->T ? "," : "");
	}
	fprintf(p->fp, "%*s]", ind, "");
}

/* The --stats rows (stats.h) nested as the weights' blocks are, at
 * indent ind. */
static void
print_stats_rows(const struct printer *p, int ind)
{
	print_json_blocks(p, ATTN_STAGE_WEIGHTS, ind, stats_json_block);
}

/* Stage s nested as its shape says: [batch][head][row][column] without
 * the levels of one, or the 4-D order of a layout. */
static enum attn_status
print_stage(const struct printer *p, enum attn_stage s, int ind)
{
	struct attn_shape sh;

	attn_stage_shape(p->stages, s, &sh);
	return print_level(p, &sh, p->stages->stage[s].data, 0, 0, ind);
}

enum attn_status
print_json(const struct printer *p)
{
	const size_t sections = print_sections(p);
	enum attn_status st;
	size_t k;

	if (sections == 1) {
		if (p->o->nstages == 1 &&
		    (st = print_stage(p, p->o->stages[0], 0)) != ATTN_OK)
			return st;
		if (p->o->nstages != 1)
			print_stats_rows(p, 0);
		putc('\n', p->fp);
		return ATTN_OK;
	}
	fputs("{\n", p->fp);
	for (k = 0; k < p->o->nstages; k++) {
		enum attn_stage s = p->o->stages[k];

		fprintf(p->fp, "  \"%s\": ", attn_stage_table[s].name);
		if ((st = print_stage(p, s, 2)) != ATTN_OK)
			return st;
		fputs(k + 1 < sections ? ",\n" : "\n", p->fp);
	}
	if (p->o->stats) {
		fputs("  \"stats\": ", p->fp);
		print_stats_rows(p, 2);
		putc('\n', p->fp);
	}
	fputs("}\n", p->fp);
	return ATTN_OK;
}
