/*
 * print_run.c - the dispatcher (see print_run.h): which printer prints
 * what a run asks for, with the printer of each format in one table
 * beside formats.c's rows, and the stages the printers read, so that
 * attn_run keeps them.
 */
#include <stdio.h>

#include "attn.h"
#include "formats.h"
#include "print.h"
#include "print_run.h"

/* The printer of each format (formats.c has the rest of its row). */
static enum attn_status (*const printers[OUT_COUNT])(const struct printer *p) =
    {
	[OUT_TABLE] = print_table,
	[OUT_CSV] = print_csv,
	[OUT_TSV] = print_tsv,
	[OUT_JSON] = print_json,
	[OUT_HTML] = print_html,
	[OUT_NPY] = print_npy,
	[OUT_NPZ] = print_npz,
	[OUT_TXT] = print_txt,
};

unsigned
print_wants(const struct options *o)
{
	const struct format *f = &formats[o->format];
	unsigned printed = 0;
	size_t k, s;

	if (o->explain || (f->flags & FORMAT_PAGE)) {
		for (s = 0; s < ATTN_STAGE_COUNT; s++)
			if (print_explains(o, (enum attn_stage)s))
				printed |= ATTN_STAGE_BIT(s);
	} else {
		for (k = 0; k < o->nstages; k++)
			printed |= ATTN_STAGE_BIT(o->stages[k]);
	}
	if (o->stats || o->heatmap || o->svg != NULL)
		printed |= ATTN_STAGE_BIT(ATTN_STAGE_WEIGHTS) |
		    ATTN_STAGE_BIT(ATTN_STAGE_MASK);
	/* the arithmetic reads what the kernel read: the passes' q, k
	 * and v when a layer or RoPE makes them (attn_head_inputs) */
	if (o->arithmetic || (f->flags & FORMAT_PAGE))
		printed |= ATTN_STAGES_ALL | (o->avail & ATTN_STAGES_PROJ &
		    ~ATTN_STAGE_BIT(ATTN_STAGE_PROJECTED));
	return printed | (f->wants != NULL ? f->wants(printed) : 0);
}

enum attn_status
print_run(FILE *fp, const struct options *o, const struct attn_stages *stages,
    const struct names *nm, const struct attn_inputs *in,
    struct attn_error *err)
{
	struct printer p;

	print_init(&p, fp, o, stages, nm, in, err);
	return o->explain && !(formats[o->format].flags & FORMAT_PAGE) ?
	    print_explain(&p) : printers[o->format](&p);
}

enum attn_status
print_svg_run(FILE *fp, const struct options *o,
    const struct attn_stages *stages, const struct names *nm,
    const struct attn_inputs *in, struct attn_error *err)
{
	struct printer p;

	print_init(&p, fp, o, stages, nm, in, err);
	return print_svg(&p);
}
