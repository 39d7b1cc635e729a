/*
 * options.h - the command line as a struct, which every module reads.
 * options_parse (options_table.h) fills it from argv through the table
 * of options, from the defaults of options_init, and checks every rule
 * that involves only options (rules.c) before any input is read.
 */
#ifndef ATTN_OPTIONS_H
#define ATTN_OPTIONS_H

#include <stdio.h>

#include "attn.h"
#include "attn_private.h"
#include "formats.h"
#include "progress.h"

/* --color (words_color, words.h): colour heatmaps when stdout is a
 * terminal (and NO_COLOR is unset), always, or never. */
enum color_mode { COLOR_AUTO, COLOR_ALWAYS, COLOR_NEVER };

/* --color-range (words_color_range, words.h): what the colour scale of
 * the heatmap, the SVG and the page spans: 0 to 1, 0 to the largest
 * weight, or each row 0 to its own largest (heatmap_position, heatmap.c,
 * applies it).  Without the option it is RANGE_AUTO, which no word
 * names: heatmap_scale_init chooses unit or, when every weight lies in
 * a narrow band, row. */
enum color_range { RANGE_UNIT, RANGE_MAX, RANGE_ROW, RANGE_AUTO };

/* --check-by (words_check_by, words.h): with an emulated baseline, each
 * (batch, head), or each (sequence, head) of a packed batch, judged
 * against its own baseline's error (check.c), or the whole stage against
 * the whole baseline's. */
enum check_by { CHECK_BY_HEAD, CHECK_BY_TENSOR };

struct options {
	int help, version;
	int explain;
	enum attn_stage stages[ATTN_STAGE_COUNT];	/* in print order */
	size_t nstages;
	enum out_format format;
	int format_by_name;	/* -o FILE's extension chose it, not -f */
	int header;		/* --header: labels in csv/tsv */
	int full;		/* --full: tables show every row and column */
	int digits;		/* 0: shortest round trip */
	int npy_f4;		/* --npy-dtype f4: -f npy writes float32 */
	const char *check;	/* --check FILE */
	double rtol, atol;	/* its tolerances */
	enum attn_precision emulate;	/* --emulate, FP64 when not given */
	double factor;		/* --factor */
	enum check_by check_by;	/* --check-by */
	struct attn_config cfg;	/* how to compute */
	const char *scale_text;	/* --scale as given, NULL when not */
	const char *like;	/* --like preset, NULL when none */
	int like_align;		/* whether it set the alignment */
	int like_masked_rows;	/* and the masked-row policy */
	int like_lse_masked;	/* and the lse of a row with no key */
	int like_emulate_order;	/* and --emulate's order of the scale */
	const char *mask;	/* --mask FILE */
	const char *bias;	/* --bias FILE */
	const char *grad;	/* --grad DO: dO, for the backward stages */
	const char *query_labels;	/* --query-labels, comma-separated */
	const char *key_labels;		/* --key-labels */
	const char *query;	/* --query I,J..: rows to print; NULL: all */
	size_t nquery;		/* how many it lists */
	/* Once query_select has kept them (query.h): the place in Q of
	 * each query row printed, and Q's rows; NULL and 0 until then. */
	const size_t *query_row;
	size_t query_T;
	const char *output;	/* -o FILE, NULL for stdout */
	const char *self;	/* --self X */
	int stats;		/* --stats: per query row statistics */
	int arithmetic;		/* --arithmetic: with --explain */
	int heatmap;		/* --heatmap: the weights in the terminal */
	const char *svg;	/* --svg FILE ("-": standard output) */
	int gen;		/* the command is attn gen */
	int workbench;		/* the command is attn workbench */
	int softmax;		/* the command is attn softmax */
	unsigned long long seed;	/* attn gen --seed */
	enum attn_dist dist;		/* attn gen --dist */
	enum color_mode color;	/* --color */
	enum color_range color_range;	/* --color-range */
	enum progress_mode progress;	/* --progress, --no-progress */
	const char *proj;	/* --proj LAYER */
	const char *sinks;	/* --sinks FILE */
	const char *descale[3];	/* --descale-q, -k, -v X|FILE */
	const char *alibi_slopes;	/* --alibi-slopes FILE */
	const char *dropout_mask;	/* --dropout-mask FILE */
	int dropout_p_given;		/* --dropout-p P (cfg.dropout_p) */
	const char *cu_seqlens_q;	/* --cu-seqlens-q LIST|FILE */
	const char *cu_seqlens_k;	/* --cu-seqlens-k LIST|FILE */
	const char *seqused_k;		/* --seqused-k LIST|FILE */
	const char *valid_lens;		/* --valid-lens LIST|FILE */
	/* Paged KV caches (paged.h): FlashAttention's block table, or
	 * FlashInfer's three lists, and the layout of the pages */
	const char *block_table;	/* --block-table FILE */
	const char *kv_indptr;		/* --kv-indptr FILE */
	const char *kv_indices;		/* --kv-indices FILE */
	const char *kv_last_page_len;	/* --kv-last-page-len FILE */
	int kv_hnd;			/* --kv-layout hnd */
	int kv_layout_given;		/* --kv-layout given */
	const char *key_leftpad;	/* --key-leftpad LIST|FILE */
	char **operands;	/* Q K V, or one BUNDLE; with --proj, X or
				 * XQ XKV (or a BUNDLE of embeddings) */
	size_t noperands;
	int all_stages;		/* --stage all */
	int stage_given;	/* --stage given (--check FILE.npz checks
				 * what FILE names without it) */
	/* The stages this run can compute, for --explain and --stage all:
	 * ATTN_STAGES_ALL until the inputs are read, then what
	 * attn_stages_available says for them (options_offer). */
	unsigned avail;
	/* The inputs as read that the run offers as stages (q, k and v
	 * always, bias with a bias), which --explain and the page start
	 * from; without a layer they are not in avail (options_offer). */
	unsigned inputs;
};

/* Record that the run can compute the stages avail (once the inputs are
 * read: a bundle may bring a layer, a layer W_O), and make --stage all
 * the offered ones among them, in attn_stage_order; the inputs as read
 * are not among them (q, k and v without a layer, layer 0, and the
 * bias), but in o->inputs. */
void options_offer(struct options *o, unsigned avail, int layer);

/* The --stage LIST into o->stages: names from the stage table,
 * comma-separated, or all (every stage offered).  A usage error names
 * what is wrong and, for an unknown name, the stages offered. */
enum attn_status options_stages(struct options *o, const char *list,
    struct attn_error *err);

/* Every default, in one place: o as no option sets it. */
void options_init(struct options *o);

/* The stages o offers: the backward ones only with --grad (grad_bias
 * with --bias too, grad_sinks with --sinks), q, k and v (the operands,
 * or with --proj their projections), bias with --bias, projected with
 * --proj (a BUNDLE that brings a layer or a bias offers theirs once it
 * is read: options_offer), q_rot and k_rot with --rope. */
unsigned options_offered(const struct options *o);

/* The names of the stages of set that users may ask for, "scores,
 * scaled, ...", from the stage table, into buf. */
void options_stage_names(char *buf, size_t size, unsigned set);

#endif
