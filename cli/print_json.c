/*
 * print_json.c - JSON: one stage is its bare nested array (so that
 * `attn -s weights -f json | jq '.[0]'` works), several are an object
 * keyed by stage name.  A stage nests as its shape says, batch, then
 * head, then rows (attn_stage_shape leaves out the levels of one).  JSON
 * cannot spell infinities, so non-finite values are the strings "inf",
 * "-inf" and "nan", which attn reads back.
 */
#include <math.h>
#include <stdio.h>

#include "attn.h"
#include "print.h"

/* A matrix as a JSON array of rows, indented by ind spaces. */
static void
print_matrix(const struct printer *p, const struct attn_matrix *m, int ind)
{
	char buf[ATTN_NUM_MAX];
	size_t i, j;

	fputs("[\n", p->fp);
	for (i = 0; i < m->rows; i++) {
		fprintf(p->fp, "%*s[", ind + 2, "");
		for (j = 0; j < m->cols; j++) {
			double x = *attn_at(m, i, j);

			print_number(p, buf, x);
			fprintf(p->fp, isfinite(x) ? "%s%s" : "%s\"%s\"",
			    j > 0 ? ", " : "", buf);
		}
		fputs(i + 1 < m->rows ? "],\n" : "]\n", p->fp);
	}
	fprintf(p->fp, "%*s]", ind, "");
}

/* Stage s nested as [batch][head][row][column], without the levels of
 * one. */
static void
print_stage(const struct printer *p, enum attn_stage s, int ind)
{
	struct attn_shape sh;
	size_t b, h, B, H;
	int in_b, in_h;

	attn_stage_shape(p->st, s, &sh);
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
			struct attn_matrix m = print_block(p, s, b * H + h);

			if (H > 1)
				fprintf(p->fp, "%*s", in_h, "");
			print_matrix(p, &m, in_h);
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

enum attn_status
print_json(const struct printer *p)
{
	size_t k;

	if (p->o->nstages == 1) {
		print_stage(p, p->o->stages[0], 0);
		putc('\n', p->fp);
		return ATTN_OK;
	}
	fputs("{\n", p->fp);
	for (k = 0; k < p->o->nstages; k++) {
		enum attn_stage s = p->o->stages[k];

		fprintf(p->fp, "  \"%s\": ", attn_stage_table[s].name);
		print_stage(p, s, 2);
		fputs(k + 1 < p->o->nstages ? ",\n" : "\n", p->fp);
	}
	fputs("}\n", p->fp);
	return ATTN_OK;
}
