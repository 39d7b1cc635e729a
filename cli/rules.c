/*
 * rules.c - every rule that involves more than one option, each written
 * once (see rules.h).  Messages name the
 * options as the user wrote them and say what to do.
 */
#include <stdio.h>
#include <string.h>

#include "attn.h"
#include "formats.h"
#include "logits.h"
#include "output.h"
#include "paged.h"
#include "rules.h"
#include "words.h"

static enum attn_status
usage_error(struct attn_error *err, const char *msg)
{
	return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0, "%s", msg);
}

/* A format that -o FILE's extension chose (no -f) and that does not go
 * with what: "-o out.csv writes csv (by its extension), and WHAT: FIX". */
static enum attn_status
by_extension(const struct options *o, const char *what, const char *fix,
    struct attn_error *err)
{
	return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0, "-o %s writes "
	    "%s (by its extension), and %s: %s", o->output,
	    formats[o->format].name, what, fix);
}

enum attn_status
rules_heads(const struct options *o, struct attn_error *err)
{
	const size_t H = o->cfg.heads, G = o->cfg.kv_heads;

	if (G == 0 || H % G == 0)
		return ATTN_OK;
	if (H == 1)
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "--kv-heads %zu needs --heads H, the query heads, a "
		    "multiple of %zu: each of the %zu KV heads serves H/%zu of "
		    "them", G, G, G, G);
	return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
	    "--heads %zu is not a multiple of --kv-heads %zu", H, G);
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

/*
 * What goes with --proj and --rope: the operands of --proj, and the
 * stages only they make, named with what makes them.  A single operand
 * may be a BUNDLE that brings its own layer, so q, k, v and projected
 * wait for the inputs there.
 */
static enum attn_status
check_embeddings(const struct options *o, const struct given *g,
    struct attn_error *err)
{
	size_t i;

	if (o->proj != NULL && o->self != NULL)
		return usage_error(err, "--self X is attention without "
		    "projections; with --proj give X as the operand: attn "
		    "--proj LAYER X");
	if (o->proj != NULL && o->noperands != 1 && o->noperands != 2)
		return usage_error(err, o->noperands == 0 ?
		    "no input: --proj LAYER takes the embeddings X, or XQ "
		    "and XKV" : "--proj LAYER takes the embeddings X "
		    "(self-attention) or XQ XKV (cross-attention), not Q K V");
	if (g->rope_style && !o->cfg.rope)
		return usage_error(err, "--rope-style goes with --rope");
	for (i = 0; i < o->nstages; i++) {
		const enum attn_stage s = o->stages[i];
		const unsigned bit = ATTN_STAGE_BIT(s);

		if ((bit & (ATTN_STAGE_BIT(ATTN_STAGE_Q_ROT) |
		    ATTN_STAGE_BIT(ATTN_STAGE_K_ROT))) && !o->cfg.rope)
			return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
			    "stage '%s' needs --rope", attn_stage_table[s].name);
		/* q, k and v are the operands without a layer */
		if (s == ATTN_STAGE_PROJECTED && o->proj == NULL &&
		    o->noperands != 1)
			return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
			    "stage '%s' needs --proj LAYER (or a BUNDLE with a "
			    "layer)", attn_stage_table[s].name);
	}
	return ATTN_OK;
}

/*
 * What goes with KV caches (attn(1), PAGED KV CACHES): one form of
 * table, whole; K and V as operands; the keys' offsets and counts made
 * from the table, not given beside it.
 */
static enum attn_status
check_caches(const struct options *o, struct attn_error *err)
{
	const enum caches c = paged_caches(o);
	const int infer = o->kv_indptr != NULL || o->kv_indices != NULL ||
	    o->kv_last_page_len != NULL;

	if (o->block_table != NULL && infer)
		return usage_error(err, "--block-table is FlashAttention's "
		    "paged form and --kv-indptr, --kv-indices and "
		    "--kv-last-page-len FlashInfer's: give one of them");
	if (infer && (o->kv_indptr == NULL || o->kv_indices == NULL ||
	    o->kv_last_page_len == NULL))
		return usage_error(err, "--kv-indptr, --kv-indices and "
		    "--kv-last-page-len name the pages together (FlashInfer's "
		    "paged form): give all three");
	if (o->kv_layout_given && c != CACHES_PAGED)
		return usage_error(err, "--kv-layout lays out paged caches: it "
		    "goes with --block-table or --kv-indptr");
	if (c == CACHES_NONE)
		return ATTN_OK;
	if (o->workbench)
		return usage_error(err, "attn workbench shows K and V as "
		    "given, not KV caches: leave out --block-table, "
		    "--kv-indptr and --key-leftpad");
	if (o->self != NULL || o->proj != NULL || o->softmax ||
	    o->noperands != 3)
		return usage_error(err, "KV caches (--block-table, --kv-indptr, "
		    "--key-leftpad) are K and V: give Q K V as three operands");
	if (o->cu_seqlens_k != NULL)
		return usage_error(err, "--cu-seqlens-k packs the keys, and KV "
		    "caches give them a sequence each: leave out "
		    "--cu-seqlens-k");
	if (o->kv_indptr != NULL && o->seqused_k != NULL)
		return usage_error(err, "--kv-last-page-len says which keys "
		    "are in use, and --seqused-k again: leave out --seqused-k");
	if (c == CACHES_LEFTPAD && o->cu_seqlens_q != NULL)
		return usage_error(err, "--key-leftpad with packed queries "
		    "(--cu-seqlens-q) takes paged caches: name the pages with "
		    "--block-table or --kv-indptr");
	return ATTN_OK;
}

/* --check and its options, reported as a table or JSON. */
static enum attn_status
rules_check(const struct options *o, const struct given *g,
    struct attn_error *err)
{
	if (o->check == NULL) {
		if (g->tolerance)
			return usage_error(err,
			    "--rtol and --atol go with --check FILE");
		if (g->factor || g->check_by)
			return usage_error(err, g->factor ? "--factor goes with "
			    "--check FILE and --emulate" : "--check-by goes "
			    "with --check FILE and --emulate");
		return ATTN_OK;
	}
	if (g->factor && o->emulate == ATTN_PREC_FP64)
		return usage_error(err, "--factor goes with --emulate: it "
		    "multiplies the emulated baseline's error");
	if (g->check_by && o->emulate == ATTN_PREC_FP64)
		return usage_error(err, "--check-by goes with --emulate: it "
		    "says over what the emulated baseline's error is taken");
	if (o->explain || o->stats || o->heatmap || o->svg != NULL)
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0, "--check "
		    "reports a comparison; leave out %s", o->explain ?
		    "--explain" : o->stats ? "--stats" : o->heatmap ?
		    "--heatmap" : "--svg");
	if (o->query != NULL)
		return usage_error(err, "--check compares every row of the "
		    "stage: leave out --query");
	if (o->format != OUT_TABLE && o->format != OUT_JSON)
		return o->format_by_name ? by_extension(o, "--check reports "
		    "as a table or as JSON", "give -f table or -f json", err) : usage_error(err,
		    "--check reports as a table or as JSON (-f json)");
	/* How many stages FILE can hold is told once it is read
	 * (check_stages). */
	return ATTN_OK;
}

/*
 * Dropout (attn(1), --dropout-p): a mask given and the probability it
 * was drawn with, both or neither, since attn draws no random mask; the
 * weights it drops are a row's keys'; the page and --arithmetic do not
 * drop them, and FlashAttention 3's fp8 kernels, which --emulate fp8-*
 * follows, have no dropout.
 */
static enum attn_status
check_dropout(const struct options *o, struct attn_error *err)
{
	const char *without = o->format == OUT_HTML ? "-f html" :
	    o->arithmetic ? "--arithmetic" : NULL;

	if (o->dropout_mask == NULL && !o->dropout_p_given)
		return ATTN_OK;
	if (o->dropout_mask == NULL)
		return usage_error(err, "--dropout-p needs --dropout-mask "
		    "FILE: attn draws no random mask, give the kernel's");
	if (!o->dropout_p_given)
		return usage_error(err, "--dropout-mask needs --dropout-p P, "
		    "the probability the mask was drawn with");
	if (o->cfg.masked_rows == ATTN_MASKED_UNIFORM && o->like != NULL &&
	    o->like_masked_rows)
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "--dropout-mask drops the weights of a row's keys, and "
		    "--like %s gives a row with no key weights of its own "
		    "(--masked-rows uniform): add --masked-rows zero", o->like);
	if (o->cfg.masked_rows == ATTN_MASKED_UNIFORM)
		return usage_error(err, "--dropout-mask drops the weights of "
		    "a row's keys, and --masked-rows uniform gives a row with "
		    "no key weights of its own: leave out one of them");
	if (without != NULL)
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0, "%s "
		    "does not drop weights: leave out %s, or the dropout "
		    "options", without, without);
	if (o->emulate == ATTN_PREC_FP8_E4M3 ||
	    o->emulate == ATTN_PREC_FP8_E5M2)
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "--emulate %s follows FlashAttention 3's fp8 forward pass, "
		    "which has no dropout: emulate dropout with --emulate "
		    "bf16, fp16 or fp32", words_emulate[o->emulate - 1]);
	return ATTN_OK;
}

/*
 * attn workbench draws its own screen from attn's stages: the options
 * that choose or write output are not its, standard input is the
 * keyboard, and its toy (no operands) is three tokens in one head, so
 * the options that describe inputs want the user's own.
 */
static enum attn_status
check_workbench(const struct options *o, const struct given *g,
    struct attn_error *err)
{
	const char *out = o->explain ? "--explain" : g->stage ? "--stage" :
	    g->format ? "--format" : o->output != NULL ? "-o" :
	    o->svg != NULL ? "--svg" : o->heatmap ? "--heatmap" :
	    o->stats ? "--stats" : o->check != NULL ? "--check" :
	    o->grad != NULL ? "--grad" : o->query != NULL ? "--query" :
	    o->arithmetic ? "--arithmetic" : o->header ? "--header" :
	    o->full ? "--full" : o->emulate != ATTN_PREC_FP64 ? "--emulate" :
	    g->emulate_order ? "--emulate-order" :
	    g->npy_dtype ? "--npy-dtype" : o->descale[0] != NULL ?
	    "--descale-q" : o->descale[1] != NULL ? "--descale-k" :
	    o->descale[2] != NULL ? "--descale-v" : o->dropout_mask != NULL ?
	    "--dropout-mask" : o->dropout_p_given ? "--dropout-p" : NULL;
	const char *input = o->cfg.heads > 1 ? "--heads" :
	    o->cfg.kv_heads != 0 ? "--kv-heads" : o->proj != NULL ? "--proj" :
	    o->cfg.layout != ATTN_LAYOUT_NONE ? "--layout" :
	    o->mask != NULL ? "--mask" : o->bias != NULL ? "--bias" :
	    o->sinks != NULL ? "--sinks" : o->alibi_slopes != NULL ?
	    "--alibi-slopes" : NULL;
	size_t i;

	if (out != NULL)
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0, "attn "
		    "workbench draws its own screen: leave out %s", out);
	for (i = 0; i < o->noperands; i++)
		if (strcmp(o->operands[i], "-") == 0)
			break;
	if (i < o->noperands || (o->self != NULL &&
	    strcmp(o->self, "-") == 0) || (o->mask != NULL &&
	    strcmp(o->mask, "-") == 0) || (o->bias != NULL &&
	    strcmp(o->bias, "-") == 0) || (o->proj != NULL &&
	    strcmp(o->proj, "-") == 0) || (o->sinks != NULL &&
	    strcmp(o->sinks, "-") == 0) || (o->alibi_slopes != NULL &&
	    strcmp(o->alibi_slopes, "-") == 0))
		return usage_error(err, "attn workbench reads its keys from "
		    "standard input: give the inputs as files, not -");
	if (o->noperands == 0 && o->self == NULL && input != NULL)
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0, "attn "
		    "workbench's toy is three tokens in one head: %s wants "
		    "your own Q K V (or a BUNDLE, or --self X)", input);
	return ATTN_OK;
}

/* What goes with the output format, for attn and attn gen alike:
 * --npy-dtype with npy and npz, which are binary and never go to a
 * terminal. */
static enum attn_status
check_output(const struct options *o, const struct given *g,
    struct attn_error *err)
{
	const struct format *f = &formats[o->format];
	enum attn_status status;
	char names[64];

	if ((status = output_check(o->output, err)) != ATTN_OK)
		return status;
	if (g->npy_dtype && !(f->flags & FORMAT_BINARY)) {
		formats_list(names, sizeof names, FORMATS_OR | (o->gen ?
		    FORMATS_GEN : 0), FORMAT_BINARY);
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "--npy-dtype goes with --format %s", names);
	}
	if ((f->flags & FORMAT_BINARY) && output_is_terminal(o->output))
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0, "-f %s "
		    "is binary, not for a terminal: write it to a file with "
		    "-o FILE, or redirect standard output", f->name);
	return ATTN_OK;
}

enum attn_status
rules_check_gen(const struct options *o, const struct given *g,
    struct attn_error *err)
{
	enum attn_status status;

	/* an archive holds stages by their names; gen's array has none */
	if (formats[o->format].flags & FORMAT_ARCHIVE)
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0, "%s%s: "
		    "attn gen writes one array, and a .npz archive holds "
		    "attn's stages by name: write .npy (-f npy)",
		    o->format_by_name ? "-o " : "-f ", o->format_by_name ?
		    o->output : formats[o->format].name);
	if ((status = check_output(o, g, err)) != ATTN_OK)
		return status;
	if (o->noperands != 1)
		return usage_error(err, o->noperands == 0 ?
		    "attn gen wants the shape of the matrix, ROWSxCOLS, such "
		    "as 4x64 (or up to 4 dims, 2x4x3x8)" : "attn gen takes one "
		    "operand, ROWSxCOLS[xN..]");
	return ATTN_OK;
}

enum attn_status
rules_check_options(const struct options *o, const struct given *g,
    struct attn_error *err)
{
	const struct format *f = &formats[o->format];
	enum attn_status status;
	char names[128], fix[160];
	size_t i, nstdin = 0;

	if (o->workbench && (status = check_workbench(o, g, err)) != ATTN_OK)
		return status;
	if (o->softmax && (status = logits_rules(o, err)) != ATTN_OK)
		return status;
	/* Only a BUNDLE (one operand) may bring a mask besides --mask. */
	if ((status = rules_mask_invert(o, o->mask != NULL || o->noperands == 1,
	    err)) != ATTN_OK)
		return status;
	/* Without --heads (H 1), 4-D inputs may give H: checked once they
	 * are read. */
	if (o->cfg.heads > 1 && (status = rules_heads(o, err)) != ATTN_OK)
		return status;
	if (g->scale && g->no_scale)
		return usage_error(err,
		    "--scale and --no-scale contradict each other");
	/* The backward stages are gradients for a dO that --grad gives;
	 * grad_bias and grad_sinks those of a bias (which a BUNDLE may
	 * bring: the library says when it has none) and of sinks. */
	for (i = 0; o->grad == NULL && i < o->nstages; i++)
		if ((ATTN_STAGES_GRAD | ATTN_STAGES_REDUCE) &
		    ATTN_STAGE_BIT(o->stages[i]))
			return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
			    "stage '%s' needs --grad DO, the gradient of the "
			    "output", attn_stage_table[o->stages[i]].name);
	for (i = 0; i < o->nstages; i++)
		if ((o->stages[i] == ATTN_STAGE_GRAD_BIAS && o->bias == NULL &&
		    o->noperands != 1) || (o->stages[i] ==
		    ATTN_STAGE_GRAD_SINKS && o->sinks == NULL))
			return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
			    "stage '%s' needs %s: it is the gradient of the "
			    "%s", attn_stage_table[o->stages[i]].name,
			    o->stages[i] == ATTN_STAGE_GRAD_BIAS ?
			    "--bias FILE" : "--sinks FILE",
			    o->stages[i] == ATTN_STAGE_GRAD_BIAS ? "bias" :
			    "sinks");
	/* the bias as read: given, or brought by a BUNDLE */
	for (i = 0; i < o->nstages; i++)
		if (o->stages[i] == ATTN_STAGE_BIAS && o->bias == NULL &&
		    o->noperands != 1)
			return usage_error(err, "stage 'bias' needs --bias "
			    "FILE: it is the bias as read");
	if (o->format == OUT_HTML && g->stage)
		return o->format_by_name ? by_extension(o, "a page shows "
		    "every stage, as --explain does", "leave out --stage, or "
		    "give -f", err) : usage_error(err,
		    "-f html shows every stage, as --explain does: leave out "
		    "--stage");
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
	/* The output, when there is one beside the SVG (standard output
	 * without -o), and the SVG are two files (--svg ./w.svg -o w.svg, a
	 * link, --svg - -o /dev/stdout). */
	if (o->svg != NULL && strcmp(o->svg, "-") != 0 &&
	    (status = output_check(o->svg, err)) != ATTN_OK)
		return status;
	if (o->svg != NULL && (o->output != NULL || g->stage || o->explain ||
	    o->stats || o->heatmap) && output_same(o->svg, o->output))
		return usage_error(err, o->output != NULL ? "--svg and -o name "
		    "the same file: give two" : "--svg names the file standard "
		    "output goes to: give the stages their own with -o FILE");
	if (o->svg != NULL && o->output != NULL && !g->stage &&
	    !o->explain && !o->stats && !o->heatmap)
		return usage_error(err, "-o has nothing to write: --svg writes "
		    "its own file (add --stage to print stages as well)");
	if (o->heatmap && o->format != OUT_TABLE)
		return o->format_by_name ? by_extension(o, "--heatmap draws "
		    "as a table does", "give -f table", err) : usage_error(err,
		    "--heatmap draws in the terminal: leave out --format");
	if (o->explain && !(f->flags & FORMAT_EXPLAIN)) {
		formats_list(names, sizeof names, FORMATS_OR | FORMATS_OPTION,
		    FORMAT_EXPLAIN);
		snprintf(fix, sizeof fix, "give %s", names);
		return o->format_by_name ? by_extension(o, "--explain prints "
		    "tables", fix, err) : usage_error(err,
		    "--explain prints tables; leave out --format");
	}
	if (o->header && !(f->flags & FORMAT_HEADER)) {
		formats_list(names, sizeof names, FORMATS_OR, FORMAT_HEADER);
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "--header goes with --format %s", names);
	}
	if (o->full && o->format != OUT_TABLE)
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "--full shows whole tables, and -f %s is always whole: "
		    "leave out --full", f->name);
	/* npy holds one array of numbers, npz arrays: not the
	 * statistics' table of named columns beside stages, nor instead
	 * of them */
	if ((f->flags & FORMAT_BINARY) && o->stats)
		return o->format_by_name ? by_extension(o, "--stats is a "
		    "table of named columns, not an array", "name a .csv, "
		    ".tsv or .json file", err) : attn_error_set(err,
		    ATTN_ERR_USAGE, NULL, 0, 0, "-f %s writes %s, and --stats "
		    "is a table of named columns: write it with -f csv, -f "
		    "tsv or -f json", f->name, f->flags & FORMAT_ONE_STAGE ?
		    "one stage as an array" : "stages as arrays");
	if ((f->flags & FORMAT_ARCHIVE) && o->nstages == 0)
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0, "%s%s%s "
		    "writes stages, and none is printed: choose them with "
		    "--stage", o->format_by_name ? "-o " : "-f ",
		    o->format_by_name ? o->output : f->name,
		    o->format_by_name ? " (npz, by its extension)" : "");
	if ((f->flags & FORMAT_ONE_STAGE) && o->nstages != 1)
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0, "%s%s%s "
		    "writes one stage, not %zu: choose it with --stage",
		    o->format_by_name ? "-o " : "-f ", o->format_by_name ?
		    o->output : f->name, o->format_by_name ? " (npy, by its "
		    "extension)" : "", o->nstages);
	if ((status = check_output(o, g, err)) != ATTN_OK)
		return status;
	if (g->color_range && !o->heatmap && o->svg == NULL &&
	    o->format != OUT_HTML && !o->workbench)
		return usage_error(err, "--color-range sets the colours of "
		    "--heatmap, --svg and -f html: add one of them");
	if ((status = rules_check(o, g, err)) != ATTN_OK)
		return status;
	/* the order of the scale is the emulation's, and FlashAttention 3's
	 * fp8 forward scales the logits (attn(1), --emulate-order) */
	if (g->emulate_order && o->emulate == ATTN_PREC_FP64)
		return usage_error(err, "--emulate-order goes with --emulate "
		    "fp32, fp16 or bf16: it says which operand the emulated "
		    "baseline scales");
	if (g->emulate_order && o->emulate != ATTN_PREC_FP32 &&
	    o->emulate != ATTN_PREC_FP16 && o->emulate != ATTN_PREC_BF16)
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "--emulate %s scales the float32 logits, neither q nor k: "
		    "leave out --emulate-order, or emulate with --emulate bf16",
		    words_emulate[o->emulate - 1]);
	/* FlashAttention 3's fp8 kernels are forward only: an fp8 backward
	 * would be a convention of no kernel (attn(1), --emulate) */
	if (o->grad != NULL && (o->emulate == ATTN_PREC_FP8_E4M3 ||
	    o->emulate == ATTN_PREC_FP8_E5M2))
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "--emulate %s computes the forward pass only, as "
		    "FlashAttention 3's fp8 kernels do: leave out --grad, or "
		    "emulate the backward with --emulate bf16",
		    words_emulate[o->emulate - 1]);
	if (o->grad != NULL && (o->descale[0] != NULL ||
	    o->descale[1] != NULL || o->descale[2] != NULL))
		return usage_error(err, "descale factors are FlashAttention "
		    "3's fp8 forward convention: leave out --grad, or the "
		    "--descale options");
	if ((status = check_dropout(o, err)) != ATTN_OK)
		return status;
	if (o->self != NULL && o->noperands != 0)
		return usage_error(err, "--self X takes no other operands");
	if ((status = check_embeddings(o, g, err)) != ATTN_OK ||
	    (status = check_caches(o, err)) != ATTN_OK)
		return status;
	/* (paged caches make the keys' offsets) */
	if ((o->cu_seqlens_q == NULL) != (o->cu_seqlens_k == NULL) &&
	    paged_caches(o) != CACHES_PAGED)
		return usage_error(err, o->cu_seqlens_q != NULL ?
		    "--cu-seqlens-q needs --cu-seqlens-k, the keys' offsets "
		    "(the same list again for self-attention)" :
		    "--cu-seqlens-k needs --cu-seqlens-q, the queries' "
		    "offsets (the same list again for self-attention)");
	if (o->valid_lens != NULL && o->mask != NULL)
		return usage_error(err, "--valid-lens makes the mask, and "
		    "--mask gives another: leave out one of them");
	if (o->valid_lens != NULL && o->cu_seqlens_q != NULL)
		return usage_error(err, "--valid-lens gives lengths per "
		    "batch, and packed sequences are one batch: give the keys "
		    "in use of each sequence with --seqused-k");
	for (i = 0; i < o->noperands; i++)
		nstdin += strcmp(o->operands[i], "-") == 0;
	nstdin += o->cu_seqlens_q != NULL && strcmp(o->cu_seqlens_q, "-") == 0;
	nstdin += o->cu_seqlens_k != NULL && strcmp(o->cu_seqlens_k, "-") == 0;
	nstdin += o->seqused_k != NULL && strcmp(o->seqused_k, "-") == 0;
	nstdin += o->valid_lens != NULL && strcmp(o->valid_lens, "-") == 0;
	nstdin += o->block_table != NULL && strcmp(o->block_table, "-") == 0;
	nstdin += o->kv_indptr != NULL && strcmp(o->kv_indptr, "-") == 0;
	nstdin += o->kv_indices != NULL && strcmp(o->kv_indices, "-") == 0;
	nstdin += o->kv_last_page_len != NULL &&
	    strcmp(o->kv_last_page_len, "-") == 0;
	nstdin += o->key_leftpad != NULL && strcmp(o->key_leftpad, "-") == 0;
	nstdin += o->self != NULL && strcmp(o->self, "-") == 0;
	nstdin += o->mask != NULL && strcmp(o->mask, "-") == 0;
	nstdin += o->bias != NULL && strcmp(o->bias, "-") == 0;
	nstdin += o->grad != NULL && strcmp(o->grad, "-") == 0;
	nstdin += o->proj != NULL && strcmp(o->proj, "-") == 0;
	nstdin += o->sinks != NULL && strcmp(o->sinks, "-") == 0;
	nstdin += o->alibi_slopes != NULL &&
	    strcmp(o->alibi_slopes, "-") == 0;
	nstdin += o->dropout_mask != NULL &&
	    strcmp(o->dropout_mask, "-") == 0;
	nstdin += o->check != NULL && strcmp(o->check, "-") == 0;
	if (nstdin > 1)
		return usage_error(err,
		    "standard input ('-') can be read only once");
	if (o->proj != NULL || o->softmax)
		return ATTN_OK;
	/* attn workbench without operands shows its toy */
	if (o->self == NULL && o->noperands != 1 && o->noperands != 3 &&
	    !(o->workbench && o->noperands == 0))
		return usage_error(err, o->noperands == 0 ?
		    "no input: give Q K V, a BUNDLE, or --self X" :
		    o->workbench ? "attn workbench takes three operands (Q K "
		    "V), one (a BUNDLE) or none (its toy)" :
		    "give three operands (Q K V) or one (a BUNDLE)");
	return ATTN_OK;
}
