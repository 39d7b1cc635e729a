/*
 * rules.c - the conventions attn names, and every rule that involves more
 * than one option, each written once (see rules.h).  Messages name the
 * options as the user wrote them and say what to do.
 */
#include <string.h>

#include "attn.h"
#include "print.h"
#include "rules.h"

const char *const rules_align_names[] = {
	[ATTN_ALIGN_TOP_LEFT] = "top-left",
	[ATTN_ALIGN_BOTTOM_RIGHT] = "bottom-right",
	NULL
};

const char *const rules_masked_rows_names[] = {
	[ATTN_MASKED_ZERO] = "zero",
	[ATTN_MASKED_NAN] = "nan",
	[ATTN_MASKED_UNIFORM] = "uniform",
	NULL
};

const char *const rules_masked_rows_effect[] = {
	[ATTN_MASKED_ZERO] = "weights 0 and output 0",
	[ATTN_MASKED_NAN] = "weights nan and output nan",
	[ATTN_MASKED_UNIFORM] = "weights 1/S and the mean of V",
};

/* Which alignment a causal mask or window uses when T != S, and what a
 * row that may attend no key gets, in each system. */
const char *const rules_like_names[] = { "torch", "flash", "jax", NULL };
const struct like_preset rules_like[] = {
	{ ATTN_ALIGN_TOP_LEFT, ATTN_MASKED_ZERO },
	{ ATTN_ALIGN_BOTTOM_RIGHT, ATTN_MASKED_ZERO },
	{ ATTN_ALIGN_TOP_LEFT, ATTN_MASKED_UNIFORM },
};

_Static_assert(sizeof rules_like / sizeof rules_like[0] ==
    sizeof rules_like_names / sizeof rules_like_names[0] - 1,
    "a --like system needs its name and its preset");

static enum attn_status
usage_error(struct attn_error *err, const char *msg)
{
	return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0, "%s", msg);
}

enum attn_status
rules_mask_invert(const struct options *o, int have_mask,
    struct attn_error *err)
{
	if (o->cfg.mask_invert && !have_mask)
		return usage_error(err, "--mask-invert needs a mask (--mask "
		    "FILE or a bundle's \"mask\")");
	return ATTN_OK;
}

enum attn_status
rules_check_gen(const struct options *o, struct attn_error *err)
{
	if (o->noperands != 1)
		return usage_error(err, o->noperands == 0 ?
		    "attn gen wants the shape of the matrix, ROWSxCOLS, such "
		    "as 4x64" : "attn gen takes one operand, ROWSxCOLS");
	return ATTN_OK;
}

enum attn_status
rules_check_options(const struct options *o, const struct given *g,
    struct attn_error *err)
{
	const struct print_format *f = &print_formats[o->format];
	enum attn_status st;
	size_t i, nstdin = 0;

	/* Only a BUNDLE (one operand) may bring a mask besides --mask. */
	if ((st = rules_mask_invert(o, o->mask != NULL || o->noperands == 1,
	    err)) != ATTN_OK)
		return st;
	if (o->cfg.kv_heads != 0 && o->cfg.heads % o->cfg.kv_heads != 0)
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "--heads %zu is not a multiple of --kv-heads %zu",
		    o->cfg.heads, o->cfg.kv_heads);
	if (g->scale && g->no_scale)
		return usage_error(err,
		    "--scale and --no-scale contradict each other");
	/* The backward stages are gradients for a dO that --grad gives. */
	for (i = 0; o->grad == NULL && i < o->nstages; i++)
		if (ATTN_STAGES_GRAD & ATTN_STAGE_BIT(o->stages[i]))
			return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
			    "stage '%s' needs --grad DO, the gradient of the "
			    "output", attn_stage_table[o->stages[i]].name);
	if (o->format == OUT_HTML && g->stage)
		return usage_error(err, "-f html shows every stage, as "
		    "--explain does: leave out --stage");
	if (o->explain && g->stage)
		return usage_error(err,
		    "--explain prints every stage; leave out --stage");
	if (o->arithmetic && !o->explain)
		return usage_error(err,
		    "--arithmetic writes the steps of --explain out: add -e");
	if (o->svg != NULL && strcmp(o->svg, "-") == 0 && o->output == NULL &&
	    (g->stage || o->explain || o->stats || o->heatmap))
		return usage_error(err, "--svg - takes standard output: send "
		    "the rest elsewhere with -o FILE");
	if (o->svg != NULL && o->output != NULL &&
	    strcmp(o->svg, o->output) == 0)
		return usage_error(err,
		    "--svg and -o name the same file: give two");
	if (o->svg != NULL && o->output != NULL && !g->stage &&
	    !o->explain && !o->stats && !o->heatmap)
		return usage_error(err, "-o has nothing to write: --svg writes "
		    "its own file (add --stage to print stages as well)");
	if (o->heatmap && o->format != OUT_TABLE)
		return usage_error(err,
		    "--heatmap draws in the terminal: leave out --format");
	if (o->explain && !(f->flags & PRINT_EXPLAIN))
		return usage_error(err,
		    "--explain prints tables; leave out --format");
	if (o->header && !(f->flags & PRINT_HEADER))
		return usage_error(err,
		    "--header goes with --format csv or tsv");
	if (o->self != NULL && o->noperands != 0)
		return usage_error(err, "--self X takes no other operands");
	for (i = 0; i < o->noperands; i++)
		nstdin += strcmp(o->operands[i], "-") == 0;
	nstdin += o->self != NULL && strcmp(o->self, "-") == 0;
	nstdin += o->mask != NULL && strcmp(o->mask, "-") == 0;
	nstdin += o->bias != NULL && strcmp(o->bias, "-") == 0;
	nstdin += o->grad != NULL && strcmp(o->grad, "-") == 0;
	if (nstdin > 1)
		return usage_error(err,
		    "standard input ('-') can be read only once");
	if (o->self == NULL && o->noperands != 1 && o->noperands != 3)
		return usage_error(err, o->noperands == 0 ?
		    "no input: give Q K V, a BUNDLE, or --self X" :
		    "give three operands (Q K V) or one (a BUNDLE)");
	return ATTN_OK;
}
