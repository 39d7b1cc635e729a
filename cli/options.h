/*
 * options.h - the command line as a struct.  options_parse() fills it from
 * argv through the table of options in options.c, with every default set
 * in one place and every rule that involves only options (rules.c)
 * checked before any input is read.
 */
#ifndef ATTN_OPTIONS_H
#define ATTN_OPTIONS_H

#include <stdio.h>

#include "attn.h"
#include "formats.h"
#include "progress.h"

/* --color (words_color, words.h): colour heatmaps when stdout is a terminal (and NO_COLOR is
 * unset), always, or never. */
enum color_mode { COLOR_AUTO, COLOR_ALWAYS, COLOR_NEVER };

/* --color-range: what the colour scale of the heatmap, the SVG and the
 * page spans: 0 to 1, 0 to the largest weight, or each row 0 to its own
 * largest (heatmap_position, heatmap.c, applies it). */
enum color_range { RANGE_UNIT, RANGE_MAX, RANGE_ROW };

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
	struct attn_config cfg;	/* how to compute */
	const char *scale_text;	/* --scale as given, NULL when not */
	const char *like;	/* --like preset, NULL when none */
	int like_align;		/* whether it set the alignment */
	int like_masked_rows;	/* and the masked-row policy */
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
	unsigned long long seed;	/* attn gen --seed */
	enum attn_dist dist;		/* attn gen --dist */
	enum color_mode color;	/* --color */
	enum color_range color_range;	/* --color-range */
	enum progress_mode progress;	/* --progress, --no-progress */
	const char *proj;	/* --proj LAYER */
	const char *sinks;	/* --sinks FILE */
	char **operands;	/* Q K V, or one BUNDLE; with --proj, X or
				 * XQ XKV (or a BUNDLE of embeddings) */
	size_t noperands;
	int all_stages;		/* --stage all */
	/* The stages this run can compute, for --explain and --stage all:
	 * ATTN_STAGES_ALL until the inputs are read, then what
	 * attn_stages_available says for them (options_offer). */
	unsigned avail;
};

/* Record that the run can compute the stages avail (once the inputs are
 * read: a bundle may bring a layer, a layer W_O), and make --stage all
 * the offered ones among them, in attn_stage_order. */
void options_offer(struct options *o, unsigned avail);

/* Parse argv into *o.  On a usage error returns ATTN_ERR_USAGE with the
 * message in err. */
enum attn_status options_parse(int argc, char **argv, struct options *o,
    struct attn_error *err);

/* The usage synopsis, as in the man page: of attn, of attn gen and of
 * attn workbench. */
extern const char options_usage[];
extern const char options_gen_usage[];
extern const char options_workbench_usage[];

/* What an option's argument is, for shell completion. */
enum option_value {
	OPTION_NONE,		/* the option takes no argument */
	OPTION_TEXT,		/* a number or a name: nothing to offer */
	OPTION_FILE,		/* a file */
	OPTION_WORDS,		/* one of option_info.words */
	OPTION_STAGES		/* stage names, comma-separated, or all */
};

/* One option of the table, as shell completion sees it. */
struct option_info {
	const char *name;	/* long name, without "--" */
	char letter;		/* short name, or 0 */
	const char *arg;	/* the argument's name in --help, or NULL */
	const char *help;	/* the first line of its --help text */
	size_t help_len;	/* its length */
	enum option_value value;
	const char *const *words;	/* OPTION_WORDS: NULL-terminated */
	int attn, gen;		/* whether attn and attn gen take it */
};

/* The number of options, and option i of the table (i < that). */
size_t options_count(void);
void options_info(size_t i, struct option_info *out);

/* Print the --help text (synopsis and every option) of attn, of attn
 * gen when o->gen, of attn workbench (attn's options) when o->workbench. */
void options_print_help(const struct options *o, FILE *fp);

#endif
