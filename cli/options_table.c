/*
 * options_table.c - argv to struct options with getopt_long, from one
 * table with a row per option: its names, its argument, its --help text,
 * the words its argument may be, and what it sets (options_set.c).  The
 * getopt_long array, the short options, --help, the messages for a
 * mistyped option (options_hint.c) and the shell completions
 * (tools/complete.c, through options_info) all come from that table.
 */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "attn.h"
#include "formats.h"
#include "options.h"
#include "options_hint.h"
#include "options_set.h"
#include "options_table.h"
#include "words.h"

/* --help: this, then a line per option from the table. */
static const char help_head[] =
    "attn - scaled dot-product attention, softmax(Q K^T / sqrt(d_k)) V,\n"
    "computed and explained stage by stage.\n"
    "\n"
    "usage: attn [options] Q K V\n"
    "       attn [options] BUNDLE\n"
    "       attn [options] --self X\n"
    "       attn [options] --proj LAYER X\n"
    "       attn [options] --proj LAYER XQ XKV\n"
    "       attn gen ROWSxCOLS[xN..] [--seed N] [--dist normal|uniform]\n"
    "       attn workbench [options] [Q K V | BUNDLE | --self X]\n"
    "       attn softmax [options] SCORES [V]\n"
    "       attn help [TOPIC]\n"
    "\n"
    "Q, K and V are JSON, CSV, TSV, whitespace-separated text or NumPy\n"
    ".npy files (--check FILE and --proj LAYER may be .npz);\n"
    "BUNDLE is one JSON object {\"Q\":..,\"K\":..,\"V\":..} with optional\n"
    "\"mask\", \"bias\" and \"labels\"; '-' reads standard input.\n"
    "With --proj, X (or XQ and XKV) are embeddings that the LAYER\n"
    "projects to q, k and v.\n"
    "attn softmax starts from the logits, SCORES (scale 1 unless given).\n"
    "attn help opens the manual pages: attn(1), the tutorial, checking\n"
    "kernels, the workbench and gen (attn help lists the topics).\n"
    "\n"
    "options:\n";

/* attn gen --help: this, then a line per option of attn gen. */
static const char gen_help_head[] =
    "attn gen - a matrix (or an array of up to 4 dims) of seeded random\n"
    "numbers, the same on every platform: standard normal (the default)\n"
    "or uniform in [0, 1).  2x4x3x8 holds the numbers of 24x8.\n"
    "\n"
    "usage: attn gen ROWSxCOLS[xN..] [--seed N] [--dist normal|uniform]\n"
    "\n"
    "options:\n";

/* attn workbench --help: this, then attn's options. */
static const char workbench_help_head[] =
    "attn workbench - attention one query at a time, in a terminal: keys\n"
    "change the query (up, down), the scaling (s), d_k (+, -), the causal\n"
    "mask (c) and the head (h); p asks for a guess before the weights\n"
    "show; ? helps; q quits.  Without operands, three tokens whose Q and\n"
    "K are attn gen matrices.\n"
    "\n"
    "usage: attn workbench [options] [Q K V | BUNDLE | --self X]\n"
    "\n"
    "options: attn's, those that say how to compute; it refuses those\n"
    "that choose or write output (-e, -s, -f, -o, --svg, --heatmap,\n"
    "--stats, --check, --grad, --query, --arithmetic, --header, --full,\n"
    "--emulate, --npy-dtype).\n"
    "\n";

/* The column where --help's descriptions start, and the one no line
 * passes. */
#define HELP_COLUMN 25
#define HELP_WIDTH 72

/* One option. */
struct option_row {
	const char *name;	/* long name, without "--" */
	char letter;		/* short name, or 0 */
	const char *arg;	/* its argument in --help; NULL: none; in
				 * brackets, "[BASE]", it may be left out */
	/* --help text: "\n" starts a line of its own, and a line
	 * "{stages}", "{formats}" or "{extensions}" is that list
	 * (help_list) */
	const char *help;
	/* The words the argument may be (NULL-terminated), checked before
	 * set is called with their index in ->choice; NULL: any text. */
	const char *const *choices;
	/* What the option does; NULL: set the int (no argument) or the
	 * const char * (an argument) at offset `field` of struct options
	 * to 1 or to the argument. */
	set_fn *set;
	size_t field;
};

/* The options of attn gen, by name: its own first (GEN_OWN of them, not
 * options of attn), then those it shares with attn.  A list beside the
 * table rather than a column of it, so that rows keep their shape. */
static const char *const gen_options[] = { "seed", "dist", "format",
	"npy-dtype", "digits", "output", "help", "version", NULL };
#define GEN_OWN 2
/* The options of attn that attn workbench refuses, by name: those that
 * choose or write output (rules.c's check_workbench), and those that go
 * with --check alone.  Shell completion leaves them out after the word
 * workbench; tests/completion.sh runs each and wants it refused. */
static const char *const workbench_refused[] = { "explain", "stage",
	"format", "header", "full", "npy-dtype", "grad", "query",
	"arithmetic", "stats", "heatmap", "svg", "check", "rtol", "atol",
	"emulate", "factor", "check-by", "output", "descale-q", "descale-k",
	"descale-v", "emulate-order", "block-table", "kv-indptr", "kv-indices",
	"kv-last-page-len", "kv-layout", "key-leftpad", "dropout-p",
	"dropout-mask", NULL };
/* The options of attn that the library's session (session.c) leaves
 * out of a binding's conventions: those that choose or write output,
 * which a binding chooses itself (what it returns, and in what form),
 * and labels, which no array returned carries. */
static const char *const session_chosen[] = { "explain", "stage",
	"format", "header", "full", "npy-dtype", "digits", "query-labels",
	"key-labels", "query", "arithmetic", "stats", "heatmap", "svg",
	"color", "color-range", "check", "output", "progress", "no-progress",
	"help", "version", NULL };
/* attn's commands, the words that may come first on its command line:
 * each parses the options that follow as the table says. */
const char *const options_commands[] = { "gen", "workbench", "softmax",
    "help", NULL };
#define NCOMMANDS (sizeof options_commands / sizeof options_commands[0] - 1)
/* Whether row r's argument may be left out (set then gets NULL). */
#define OPTIONAL_ARG(r) ((r)->arg != NULL && (r)->arg[0] == '[')

#define FIELD(f) offsetof(struct options, f)

/* Every option, in the order --help lists them. */
static const struct option_row rows[] = {
	{ "explain", 'e', NULL,
	    "every stage with its formula, shape and checks",
	    NULL, NULL, FIELD(explain) },
	{ "stage", 's', "LIST",
	    "stages to print, comma-separated, or all:\n{stages}\n"
	    "(default output)", NULL, set_stage, 0 },
	{ "format", 'f', "FMT", "{formats}", NULL, set_format, 0 },
	{ "header", 0, NULL, "with csv or tsv: label rows and columns",
	    NULL, NULL, FIELD(header) },
	{ "full", 0, NULL, "tables show every row and column (over 1000\n"
	    "numbers, the first and last 3 by default)",
	    NULL, NULL, FIELD(full) },
	{ "npy-dtype", 0, "T", "-f npy and npz write f8 (float64, default)\n"
	    "or f4",
	    words_npy_dtype, set_npy_dtype, 0 },
	{ "digits", 'd', "N",
	    "significant digits, 1 to 17 (default 4 for\n"
	    "table; csv, tsv, txt and json default to\n"
	    "the shortest text that reads back exactly)", NULL, set_digits, 0 },
	{ "scale", 0, "X", "scale the scores by X instead of 1/sqrt(d_k):\n"
	    "a number, A/B or 1/sqrt(N)",
	    NULL, set_scale, 0 },
	{ "no-scale", 0, NULL, "scale by 1", NULL, set_no_scale, 0 },
	{ "self", 0, "X", "self-attention: Q = K = V = X",
	    NULL, NULL, FIELD(self) },
	{ "causal", 0, NULL,
	    "query i attends key j only when j <= i + offset",
	    NULL, NULL, FIELD(cfg.causal) },
	{ "align", 0, "A",
	    "top-left (offset 0, default) or bottom-right\n"
	    "(offset S - T): where positions line up",
	    words_align, set_align, 0 },
	{ "mask", 'm', "FILE", "T x S keep-mask: 1 or true may attend",
	    NULL, NULL, FIELD(mask) },
	{ "mask-invert", 0, NULL, "1 in the mask means masked out",
	    NULL, NULL, FIELD(cfg.mask_invert) },
	{ "bias", 0, "FILE", "T x S bias added to the logits (-inf allowed)",
	    NULL, NULL, FIELD(bias) },
	{ "dropout-p", 0, "P", "dropout's probability, 0 <= P < 1: kept\n"
	    "weights scaled by 1/(1-P) (with --dropout-mask)",
	    NULL, set_dropout_p, 0 },
	{ "dropout-mask", 0, "FILE",
	    "dropout's keep-mask, broadcast as --mask:\n"
	    "booleans, or FlashAttention's S_dmask (< 0 dropped)",
	    NULL, NULL, FIELD(dropout_mask) },
	{ "window", 0, "L,R", "query i sees keys i+offset-L .. i+offset+R",
	    NULL, set_window, 0 },
	{ "alibi", 0, NULL, "add -slope_h * |i + offset - j| (ALiBi)",
	    NULL, NULL, FIELD(cfg.alibi) },
	{ "alibi-slopes", 0, "FILE", "ALiBi with these slopes, H or B x H, as\n"
	    "FlashAttention's alibi_slopes", NULL, NULL, FIELD(alibi_slopes) },
	{ "softcap", 0, "C", "logits become C*tanh(logits/C)",
	    NULL, set_softcap, 0 },
	{ "masked-rows", 0, "P",
	    "a row with no key: zero (default), nan, uniform",
	    words_masked_rows, set_masked_rows, 0 },
	{ "like", 0, "SYS", "torch, flash or jax: their --align,\n"
	    "--masked-rows and --lse-masked", words_like, set_like, 0 },
	{ "lse-base", 0, "B", "lse in natural log (e, default) or log2 (2,\n"
	    "as Triton kernels store it)", words_lse_base, set_lse_base, 0 },
	{ "lse-masked", 0, "X", "the lse of a row with no key: -inf (default)\n"
	    "or inf (as FlashAttention stores it)", words_lse_masked,
	    set_lse_masked, 0 },
	{ "heads", 0, "H", "split the columns into H heads",
	    NULL, set_heads, 0 },
	{ "kv-heads", 0, "G", "K and V hold G heads (grouped-query)",
	    NULL, set_kv_heads, 0 },
	{ "grad", 0, "DO", "dO, the gradient of the output (shaped like\n"
	    "output): add the backward stages grad_weights,\n"
	    "delta, grad_scaled, grad_q, grad_k, grad_v",
	    NULL, NULL, FIELD(grad) },
	{ "proj", 0, "LAYER", "JSON {\"W_Q\":..,\"W_K\":..,\"W_V\":..} (W_O, b_Q,\n"
	    "b_K, b_V, b_O optional), each x @ W: the\n"
	    "operands are embeddings X, or XQ XKV",
	    NULL, NULL, FIELD(proj) },
	{ "rope", 0, "[BASE]", "rotate q and k by position (RoPE) before\n"
	    "the scores, base 10000 unless given",
	    NULL, set_rope, 0 },
	{ "rope-style", 0, "S", "half (default; GPT-NeoX, HF Llama) or\n"
	    "interleaved (RoFormer, GPT-J)",
	    words_rope_style, set_rope_style, 0 },
	{ "sinks", 0, "FILE", "one logit per head, adding exp(sink) to\n"
	    "each softmax denominator", NULL, NULL, FIELD(sinks) },
	{ "cu-seqlens-q", 0, "LIST", "packed sequences (FlashAttention varlen):\n"
	    "query offsets 0,..,total_q, a list or a FILE",
	    NULL, NULL, FIELD(cu_seqlens_q) },
	{ "cu-seqlens-k", 0, "LIST", "key offsets 0,..,total_k, a list or a FILE",
	    NULL, NULL, FIELD(cu_seqlens_k) },
	{ "seqused-k", 0, "LIST", "keys in use per batch (or per sequence),\n"
	    "the rest padding (a KV cache), a list or a FILE",
	    NULL, NULL, FIELD(seqused_k) },
	{ "valid-lens", 0, "LIST", "keys kept per batch (or per batch and\n"
	    "query row: a FILE), as d2l's valid_lens",
	    NULL, NULL, FIELD(valid_lens) },
	{ "block-table", 0, "FILE", "K and V are paged caches, num_blocks x\n"
	    "block_size x G x D; FILE names each batch's\n"
	    "blocks (FlashAttention's block_table)",
	    NULL, NULL, FIELD(block_table) },
	{ "kv-indptr", 0, "FILE", "paged caches as FlashInfer names them: each\n"
	    "batch's offsets into --kv-indices (B + 1)",
	    NULL, NULL, FIELD(kv_indptr) },
	{ "kv-indices", 0, "FILE", "the pages of every batch, in order\n"
	    "(FlashInfer's kv_indices)", NULL, NULL, FIELD(kv_indices) },
	{ "kv-last-page-len", 0, "FILE", "keys in use on each batch's last page\n"
	    "(FlashInfer's kv_last_page_len)",
	    NULL, NULL, FIELD(kv_last_page_len) },
	{ "kv-layout", 0, "L", "paged caches' pages are nhd (default,\n"
	    "page x G x D) or hnd (G x page x D)",
	    words_kv_layout, set_kv_layout, 0 },
	{ "key-leftpad", 0, "LIST", "where each batch's keys start in its cache\n"
	    "(FlashAttention's cache_leftpad), a list or\na FILE",
	    NULL, NULL, FIELD(key_leftpad) },
	{ "layout", 0, "L", "4-D arrays are bhsd (default, as PyTorch) or\n"
	    "bshd (as FlashAttention and JAX)", words_layout, set_layout, 0 },
	{ "query-labels", 0, "L", "names of the query rows, comma-separated",
	    NULL, NULL, FIELD(query_labels) },
	{ "key-labels", 0, "L", "names of the keys, comma-separated",
	    NULL, NULL, FIELD(key_labels) },
	{ "query", 0, "I,J..", "print only these query rows (from 1, in\n"
	    "this order)", NULL, set_query, 0 },
	{ "arithmetic", 0, NULL, "with --explain: every product, exponential\n"
	    "and sum written out", NULL, NULL, FIELD(arithmetic) },
	{ "stats", 0, NULL, "per query row: the largest weight and its key,\n"
	    "entropy, exp(entropy), keys it may attend",
	    NULL, NULL, FIELD(stats) },
	{ "heatmap", 0, NULL, "draw the weights in the terminal",
	    NULL, NULL, FIELD(heatmap) },
	{ "svg", 0, "FILE", "also write the weights as an SVG heatmap to\n"
	    "FILE (atomically; - is standard output)",
	    NULL, set_svg, 0 },
	{ "color", 0, "WHEN", "colour the heatmap: auto (when stdout is a\n"
	    "terminal and NO_COLOR is unset), always, never",
	    words_color, set_color, 0 },
	{ "color-range", 0, "R", "the colours of --heatmap, --svg and -f html\n"
	    "span 0 to 1 (unit, default), 0 to the largest\n"
	    "weight (max), or each row 0 to its largest (row)",
	    words_color_range, set_color_range, 0 },
	{ "seed", 0, "N", "the seed, 0 to 2^64 - 1 (default 0)",
	    NULL, set_seed, 0 },
	{ "dist", 0, "D", "normal (default) or uniform in [0, 1)",
	    words_dist, set_dist, 0 },
	{ "check", 0, "FILE", "compare the stage (-s, default output) with\n"
	    "FILE, a kernel's result; a .npz or JSON object of\n"
	    "arrays named by stage (or out, softmax_lse, dq, dk,\n"
	    "dv) checks each; exit 1 when one fails",
	    NULL, NULL, FIELD(check) },
	{ "rtol", 0, "X", "--check tolerance relative to attn's values\n"
	    "(default 1e-05)", NULL, set_rtol, 0 },
	{ "atol", 0, "X", "--check absolute tolerance (default 1e-08)",
	    NULL, set_atol, 0 },
	{ "emulate", 0, "P", "fp32, fp16, bf16, fp8-e4m3 or fp8-e5m2:\n"
	    "compute a naive kernel in that precision;\nwith --check, the "
	    "baseline",
	    words_emulate, set_emulate, 0 },
	{ "emulate-order", 0, "O", "q (default) or k: the operand --emulate\n"
	    "scales before Q K^T (k: FlashAttention's tests'\n"
	    "baseline, which --like flash chooses)",
	    words_emulate_order, set_emulate_order, 0 },
	{ "factor", 0, "X", "--check --emulate passes within X times the\n"
	    "baseline's error (default 2)", NULL, set_factor, 0 },
	{ "descale-q", 0, "X", "fp8 descale factor of Q (FlashAttention 3):\n"
	    "a number, or a FILE of one a batch and KV head",
	    NULL, NULL, FIELD(descale[0]) },
	{ "descale-k", 0, "X", "fp8 descale factor of K, as --descale-q",
	    NULL, NULL, FIELD(descale[1]) },
	{ "descale-v", 0, "X", "fp8 descale factor of V, as --descale-q",
	    NULL, NULL, FIELD(descale[2]) },
	{ "check-by", 0, "BY", "--check --emulate judges each (batch, head)\n"
	    "against its own baseline (head, the default),\nor the whole "
	    "stage (tensor)", words_check_by, set_check_by, 0 },
	{ "output", 'o', "FILE", "write to FILE atomically instead of stdout;\n"
	    "without -f, its extension picks the format:\n{extensions}",
	    NULL, set_output, 0 },
	{ "threads", 'j', "N", "worker threads (default: one per CPU, or\n"
	    "ATTN_THREADS)", NULL, set_threads, 0 },
	{ "progress", 0, NULL, "a progress line on stderr for a long run\n"
	    "(default: when stderr is a terminal)", NULL, set_progress, 0 },
	{ "no-progress", 0, NULL, "no progress line", NULL,
	    set_no_progress, 0 },
	{ "help", 'h', NULL, "show this help and exit",
	    NULL, set_help, 0 },
	{ "version", 'V', NULL, "show the version and exit",
	    NULL, set_version, 0 },
};

#define NROWS (sizeof rows / sizeof rows[0])
_Static_assert(NROWS <= HINT_MAX_OPTIONS, "options_hint.h's room for names");

/* getopt_long's value for row i: its letter, else 256 + i. */
static int
row_val(size_t i)
{
	return rows[i].letter != 0 ? rows[i].letter : 256 + (int)i;
}

/* Whether row r is an option of attn gen (gen) or of attn (!gen). */
static int
applies(const struct option_row *r, int gen)
{
	size_t i;

	for (i = 0; gen_options[i] != NULL; i++)
		if (strcmp(r->name, gen_options[i]) == 0)
			return gen || i >= GEN_OWN;
	return !gen;
}

/* Whether row r is an option of attn that list (NULL-terminated) does
 * not name. */
static int
outside(const struct option_row *r, const char *const *list)
{
	size_t i;

	for (i = 0; list[i] != NULL; i++)
		if (strcmp(r->name, list[i]) == 0)
			return 0;
	return applies(r, 0);
}

/* Whether attn workbench takes row r: an option of attn it does not
 * refuse. */
static int
workbench_takes(const struct option_row *r)
{
	return outside(r, workbench_refused);
}

/* Options whose argument is a file but not named FILE (--self X,
 * --grad DO and --proj LAYER, as attn(1) writes them). */
static const char *const file_options[] = { "self", "grad", "proj",
	"cu-seqlens-q", "cu-seqlens-k", "seqused-k", "valid-lens",
	"descale-q", "descale-k", "descale-v", "key-leftpad", NULL };

/* Whether row r's argument is a file. */
static int
takes_file(const struct option_row *r)
{
	size_t k;

	if (r->arg != NULL && strcmp(r->arg, "FILE") == 0)
		return 1;
	for (k = 0; file_options[k] != NULL; k++)
		if (strcmp(r->name, file_options[k]) == 0)
			return 1;
	return 0;
}

/* The formats' names, the words of -f, from the table of formats;
 * NULL-terminated. */
static const char *const *
format_words(void)
{
	static const char *names[OUT_COUNT + 1];
	size_t k;

	for (k = 0; k < OUT_COUNT; k++)
		names[k] = formats[k].name;
	return names;
}

size_t
options_count(void)
{
	return NROWS;
}

/*
 * What a line of a help text (len bytes at line) stands for when it is
 * "{stages}", "{formats}" or "{extensions}": the stages --stage offers
 * (from the stage table), the formats or -o's extensions (from the
 * table of formats; attn gen's when gen), in static storage; NULL for a
 * line of text.
 */
static const char *
help_list(const char *line, size_t len, int gen)
{
	const unsigned how = FORMATS_OR | (gen ? FORMATS_GEN : 0);
	static char list[128];

	if (len == 8 && strncmp(line, "{stages}", len) == 0)
		options_stage_names(list, sizeof list, ATTN_STAGES_ALL |
		    ATTN_STAGES_PROJ);
	else if (len == 9 && strncmp(line, "{formats}", len) == 0)
		formats_list(list, sizeof list, how | FORMATS_DEFAULT, 0);
	else if (len == 12 && strncmp(line, "{extensions}", len) == 0)
		formats_list(list, sizeof list, how | FORMATS_EXTENSIONS, 0);
	else
		return NULL;
	return list;
}

/* A list "a, b or c" at HELP_COLUMN (where the caller has put the first
 * line), broken after a comma or before " or " so that no line passes
 * HELP_WIDTH. */
static void
print_wrapped(FILE *fp, const char *list)
{
	size_t w = HELP_COLUMN;

	while (*list != '\0') {
		const char *or = strstr(list + 1, " or ");
		size_t len = strcspn(list, ",");

		len += list[len] == ',';
		if (or != NULL && (size_t)(or - list) < len)
			len = (size_t)(or - list);
		if (w > HELP_COLUMN && w + len > HELP_WIDTH) {
			putc('\n', fp);
			fprintf(fp, "%*s", HELP_COLUMN, "");
			w = HELP_COLUMN;
			while (*list == ' ')
				list++, len--;
		}
		fwrite(list, 1, len, fp);
		w += len;
		list += len;
	}
}

void
options_info(size_t i, struct option_info *out)
{
	const struct option_row *r = &rows[i];
	const char *list;

	memset(out, 0, sizeof *out);
	out->name = r->name;
	out->letter = r->letter;
	out->arg = r->arg;
	out->help = out->text = r->help;
	out->help_len = strcspn(r->help, "\n");
	if ((list = help_list(r->help, out->help_len, 0)) != NULL) {
		out->help = list;
		out->help_len = strlen(list);
	}
	out->attn = applies(r, 0);
	out->gen = applies(r, 1);
	out->workbench = workbench_takes(r);
	/* a convention: what a binding takes from its caller */
	out->convention = outside(r, session_chosen);
	out->value = r->arg == NULL ? OPTION_NONE : OPTION_TEXT;
	if (r->set == set_stage) {
		out->value = OPTION_STAGES;
	} else if (r->set == set_format) {
		out->value = OPTION_WORDS;
		out->words = format_words();
	} else if (r->choices != NULL) {
		out->value = OPTION_WORDS;
		out->words = r->choices;
	} else if (takes_file(r)) {
		out->value = OPTION_FILE;
	}
}

void
options_print_help(const struct options *o, FILE *fp)
{
	size_t i, w;
	const char *h, *nl, *list;
	fputs(o->gen ? gen_help_head : o->workbench ? workbench_help_head :
	    help_head, fp);
	for (i = 0; i < NROWS; i++) {
		const struct option_row *r = &rows[i];

		if (!applies(r, o->gen))
			continue;
		if (r->letter != 0)
			w = (size_t)fprintf(fp, "  -%c, --%s", r->letter,
			    r->name);
		else
			w = (size_t)fprintf(fp, "      --%s", r->name);
		if (r->arg != NULL)
			w += (size_t)fprintf(fp, " %s", r->arg);
		for (h = r->help;; h = nl + 1) {
			size_t len;

			nl = strchr(h, '\n');
			len = nl != NULL ? (size_t)(nl - h) : strlen(h);
			if (w >= HELP_COLUMN - 1) {
				putc('\n', fp);
				w = 0;
			}
			fprintf(fp, "%*s", (int)(HELP_COLUMN - w), "");
			if ((list = help_list(h, len, o->gen)) != NULL)
				print_wrapped(fp, list);
			else
				fwrite(h, 1, len, fp);
			putc('\n', fp);
			w = 0;
			if (nl == NULL)
				break;
		}
	}
}

/* Row r as the hints for a mistyped option see it, for the command o
 * parses (attn, attn gen or attn workbench). */
static void
hint_of(const struct option_row *r, const struct options *o,
    struct hint_option *h)
{
	h->name = r->name;
	h->here = applies(r, o->gen);
	h->offered = o->workbench ? workbench_takes(r) : h->here;
	h->letter = r->letter;
	h->takes_value = r->arg != NULL;
	h->file = takes_file(r);
	h->words = r->set == set_format ? format_words() : r->choices;
}

/* The argument of row r, when it is one of r->choices: its index in
 * ps->choice; else "--NAME wants A, B or C, not 'x'". */
static enum attn_status
check_choice(const struct option_row *r, struct parse *ps, const char *arg,
    struct attn_error *err)
{
	char words[128], hint[96];
	size_t n = 0, i;

	for (i = 0; r->choices[i] != NULL; i++)
		if (strcmp(arg, r->choices[i]) == 0) {
			ps->choice = (int)i;
			return ATTN_OK;
		}
	words[0] = '\0';
	for (i = 0; r->choices[i] != NULL && n < sizeof words; i++)
		n += (size_t)snprintf(words + n, sizeof words - n, "%s%s",
		    i == 0 ? "" : r->choices[i + 1] == NULL ? " or " : ", ",
		    r->choices[i]);
	hint_suggest(hint, sizeof hint, arg, strlen(arg), r->choices, i, "");
	return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
	    "--%s wants %s, not '%s'%s", r->name, words, arg, hint);
}

/* Row r given with argument arg (NULL when it takes none). */
static enum attn_status
apply(const struct option_row *r, struct parse *ps, const char *arg,
    struct attn_error *err)
{
	enum attn_status status;
	char *field = (char *)ps->o + r->field;

	if (r->choices != NULL &&
	    (status = check_choice(r, ps, arg, err)) != ATTN_OK)
		return status;
	if (r->set != NULL)
		return r->set(ps, arg, err);
	if (r->arg == NULL)
		*(int *)(void *)field = 1;
	else
		*(const char **)(void *)field = arg;
	return ATTN_OK;
}

enum attn_status
options_parse(int argc, char **argv, struct options *o,
    struct attn_error *err)
{
	struct option longopts[NROWS + 1];
	struct hint_option hints[NROWS];
	char shortopts[2 * NROWS + 2];
	struct parse ps;
	enum attn_status status;
	size_t i, n = 0, nl = 0;
	int c, li = -1;		/* getopt_long's index of a long option */

	options_init(o);
	/* attn gen: its own options, from the same table; attn
	 * workbench: attn's; a word near either that names no file: a
	 * command mistyped */
	if (argc > 1 && (status = hint_command(argv[1], options_commands,
	    NCOMMANDS, err)) != ATTN_OK)
		return status;
	if (argc > 1 && strcmp(argv[1], "gen") == 0) {
		o->gen = 1;
		argc--;
		argv++;
	} else if (argc > 1 && strcmp(argv[1], "workbench") == 0) {
		o->workbench = 1;
		argc--;
		argv++;
	} else if (argc > 1 && strcmp(argv[1], "softmax") == 0) {
		o->softmax = 1;
		argc--;
		argv++;
	}
	memset(&ps, 0, sizeof ps);
	ps.o = o;
	ps.argc = argc;
	ps.argv = argv;
	ps.align = ps.masked_rows = ps.like = ps.lse_masked = -1;
	ps.emulate_order = -1;
	/* ':' first: a missing argument is ':' rather than '?'. */
	shortopts[n++] = ':';
	memset(longopts, 0, sizeof longopts);
	for (i = 0; i < NROWS; i++) {
		hint_of(&rows[i], o, &hints[i]);
		if (!hints[i].here)
			continue;
		longopts[nl].name = rows[i].name;
		longopts[nl].has_arg = OPTIONAL_ARG(&rows[i]) ?
		    optional_argument :
		    rows[i].arg != NULL ? required_argument : no_argument;
		longopts[nl++].val = row_val(i);
		if (rows[i].letter != 0) {
			shortopts[n++] = rows[i].letter;
			if (rows[i].arg != NULL)
				shortopts[n++] = ':';
		}
	}
	shortopts[n] = '\0';

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, shortopts, longopts, &li)) !=
	    -1) {
		if (c == ':')
			return hint_missing_value(argv, err);
		for (i = 0; i < NROWS && row_val(i) != c; i++)
			;
		if (i == NROWS)
			return hint_unknown(argv, o->gen, hints, NROWS, err);
		/* A long option with one dash that starts with a letter of
		 * a short option: -stage weights is -s tage (the value
		 * attached, the word argv[optind - 1]), -heads is -h -e ..
		 * (the word argv[optind], which the letters left keep) unless
		 * refused here. */
		if (li < 0 && optarg != NULL && optind >= 1 &&
		    optarg != argv[optind - 1] && (status = hint_one_dash(
		    argv[optind - 1], 0, hints, NROWS, err)) != ATTN_OK)
			return status;
		if (li < 0 && optarg == NULL && optind < argc &&
		    argv[optind][0] == '-' && argv[optind][1] == c &&
		    (status = hint_one_dash(argv[optind], 0, hints, NROWS,
		    err)) != ATTN_OK)
			return status;
		if (li >= 0 && (status = hint_full_name(argv, &hints[i], optarg,
		    hints, NROWS, err)) != ATTN_OK)
			return status;
		/* The value given as the next word (not attached). */
		if (optarg != NULL && optind >= 2 &&
		    optarg == argv[optind - 1] &&
		    (status = hint_value(&hints[i], li >= 0, optarg, err)) !=
		    ATTN_OK)
			return status;
		li = -1;
		if ((status = apply(&rows[i], &ps, optarg, err)) != ATTN_OK)
			return status;
		if (ps.stop)
			return ATTN_OK;
	}
	o->operands = argv + optind;
	o->noperands = (size_t)(argc - optind);
	return set_finish(&ps, err);
}
