/*
 * options.c - argv to struct options with getopt_long, from one table
 * with a row per option: its names, its argument, its --help text, the
 * words its argument may be, and what it sets.  The getopt_long array,
 * the short options, --help and the completions of a later shell script
 * all come from that table.  Numbers go through strtol/attn_parse_number
 * with an end check and a range check; the rules between options are
 * rules.c's, checked here before any input is read.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "attn_io.h"
#include "formats.h"
#include "options.h"
#include "print.h"
#include "query.h"
#include "rules.h"
#include "whole.h"
#include "words.h"

const char options_usage[] =
    "usage: attn [options] Q K V\n"
    "       attn [options] BUNDLE\n"
    "       attn [options] --self X\n"
    "       attn [options] --proj LAYER X\n"
    "       attn [options] --proj LAYER XQ XKV\n";

const char options_gen_usage[] =
    "usage: attn gen ROWSxCOLS[xN..] [--seed N] [--dist normal|uniform]\n";

const char options_workbench_usage[] =
    "usage: attn workbench [options] [Q K V | BUNDLE | --self X]\n";

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
    "\n"
    "Q, K and V are JSON, CSV, TSV, whitespace-separated text or NumPy\n"
    ".npy files;\n"
    "BUNDLE is one JSON object {\"Q\":..,\"K\":..,\"V\":..} with optional\n"
    "\"mask\", \"bias\" and \"labels\"; '-' reads standard input.\n"
    "With --proj, X (or XQ and XKV) are embeddings that the LAYER\n"
    "projects to q, k and v.\n"
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

/* What parsing knows besides the options themselves. */
struct parse {
	struct options *o;
	struct given given;	/* for the rules */
	int choice;		/* the argument's index among row->choices */
	int align, masked_rows, like;	/* their choice; -1 when not given */
	int stop;		/* --help or --version: read no further */
	const char *stage_list;	/* --stage's, read once --grad is known */
	int threads;		/* -j given: ATTN_THREADS is not read */
	int argc;		/* for an option whose argument is optional */
	char **argv;
};

/* One option. */
struct option_row {
	const char *name;	/* long name, without "--" */
	char letter;		/* short name, or 0 */
	const char *arg;	/* its argument in --help; NULL: none; in
				 * brackets, "[BASE]", it may be left out */
	/* --help text: "\n" starts a line of its own, and a line
	 * "{stages}" is the stage names */
	const char *help;
	/* The words the argument may be (NULL-terminated), checked before
	 * set is called with their index in ->choice; NULL: any text. */
	const char *const *choices;
	/* What the option does; NULL: set the int (no argument) or the
	 * const char * (an argument) at offset `field` of struct options
	 * to 1 or to the argument. */
	enum attn_status (*set)(struct parse *ps, const char *arg,
	    struct attn_error *err);
	size_t field;
};

/* The options of attn gen, by name: its own first (GEN_OWN of them, not
 * options of attn), then those it shares with attn.  A list beside the
 * table rather than a column of it, so that rows keep their shape. */
static const char *const gen_options[] = { "seed", "dist", "format",
	"npy-dtype", "digits", "output", "help", "version", NULL };
#define GEN_OWN 2
/* Whether row r's argument may be left out (set then gets NULL). */
#define OPTIONAL_ARG(r) ((r)->arg != NULL && (r)->arg[0] == '[')

static enum attn_status
usage_error(struct attn_error *err, const char *fmt, const char *arg)
{
	return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0, fmt, arg);
}

/* The stages o offers: the backward ones only with --grad, q, k, v
 * and projected with --proj (a BUNDLE that brings a layer offers them
 * once it is read: options_offer), q_rot and k_rot with --rope. */
static unsigned
offered(const struct options *o)
{
	unsigned set = ATTN_STAGES_ALL;

	if (o->grad != NULL)
		set |= ATTN_STAGES_GRAD;
	if (o->proj != NULL)
		set |= ATTN_STAGE_BIT(ATTN_STAGE_Q) |
		    ATTN_STAGE_BIT(ATTN_STAGE_K) |
		    ATTN_STAGE_BIT(ATTN_STAGE_V) |
		    ATTN_STAGE_BIT(ATTN_STAGE_PROJECTED);
	if (o->cfg.rope)
		set |= ATTN_STAGE_BIT(ATTN_STAGE_Q_ROT) |
		    ATTN_STAGE_BIT(ATTN_STAGE_K_ROT);
	return set;
}

/* The names of the stages of set that users may ask for, "scores,
 * scaled, ...", from the stage table. */
static void
stage_names(char *buf, size_t size, unsigned set)
{
	size_t i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < ATTN_STAGE_COUNT && n < size; i++)
		if (!attn_stage_table[attn_stage_order[i]].internal &&
		    (set & ATTN_STAGE_BIT(attn_stage_order[i])))
			n += (size_t)snprintf(buf + n, size - n, "%s%s",
			    n > 0 ? ", " : "",
			    attn_stage_table[attn_stage_order[i]].name);
}

/* --stage LIST, read once every option is known, since what `all` means
 * and which stages are offered depend on --grad. */
static enum attn_status
set_stage(struct parse *ps, const char *list, struct attn_error *err)
{
	(void)err;
	ps->given.stage = 1;
	ps->stage_list = list;
	return ATTN_OK;
}

/* The --stage LIST: names from the stage table, comma-separated, or all
 * (every stage offered). */
static enum attn_status
parse_stages(struct options *o, const char *list, struct attn_error *err)
{
	const char *p = list;
	size_t i;

	if (strcmp(list, "all") == 0) {
		o->all_stages = 1;
		options_offer(o, offered(o));
		return ATTN_OK;
	}
	o->nstages = 0;
	for (;;) {
		size_t len = strcspn(p, ",");
		enum attn_stage s = attn_stage_lookup(p, len);
		char name[64];

		attn_text_preview(name, 40, p, len);
		if (len == 0)
			return usage_error(err, "%s",
			    "empty stage name in --stage");
		if (len == 3 && strncmp(p, "all", 3) == 0)
			return usage_error(err, "%s",
			    "--stage all stands alone, without other stages");
		if (s == ATTN_STAGE_COUNT || attn_stage_table[s].internal) {
			char names[256];

			stage_names(names, sizeof names, offered(o));
			return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
			    "unknown stage '%s' (stages: %s, or all)", name,
			    names);
		}
		for (i = 0; i < o->nstages; i++)
			if (o->stages[i] == s)
				return usage_error(err,
				    "stage '%s' is listed twice", name);
		o->stages[o->nstages++] = s;
		if (p[len] == '\0')
			return ATTN_OK;
		p += len + 1;
	}
}

void
options_offer(struct options *o, unsigned avail)
{
	size_t i;

	o->avail = avail;
	if (!o->all_stages)
		return;
	o->nstages = 0;
	for (i = 0; i < ATTN_STAGE_COUNT; i++) {
		const enum attn_stage s = attn_stage_order[i];

		if (!attn_stage_table[s].internal &&
		    (avail & ATTN_STAGE_BIT(s)))
			o->stages[o->nstages++] = s;
	}
}

/* -f FMT: a name from the table of formats. */
static enum attn_status
set_format(struct parse *ps, const char *arg, struct attn_error *err)
{
	struct options *o = ps->o;
	char names[128];
	size_t i;

	ps->given.format = 1;
	for (i = 0; i < OUT_COUNT; i++)
		if (strcmp(arg, formats[i].name) == 0) {
			o->format = (enum out_format)i;
			return ATTN_OK;
		}
	formats_list(names, sizeof names, 0);
	return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
	    "unknown format '%s' (formats: %s)", arg, names);
}

/* Whether the extension of the last component of path (after its last
 * dot) is ext, in any case of ASCII letters, as the readers match them. */
static int
has_extension(const char *path, const char *ext)
{
	const char *base = strrchr(path, '/'), *dot;
	size_t i;

	base = base != NULL ? base + 1 : path;
	dot = strrchr(base, '.');
	if (dot == NULL || dot == base || strlen(dot + 1) != strlen(ext))
		return 0;
	for (i = 0; ext[i] != '\0'; i++) {
		char c = dot[1 + i];

		if ((c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c) !=
		    ext[i])
			return 0;
	}
	return 1;
}

/*
 * Without -f, -o FILE's extension picks the format: .json, .csv, .tsv,
 * .npy, .html and .txt (each format's name but table's; .txt is
 * whitespace text, numbers only, as numpy.savetxt writes it, but the
 * table, which is text too, where an option asks for what only a table
 * shows: --explain, --heatmap, --full, a --check report).  Any other
 * extension keeps the default.  .svg is refused: a table in it
 * is not a picture, and --svg FILE draws one (attn gen has none to draw).
 */
static enum attn_status
format_by_extension(struct options *o, const struct given *g,
    struct attn_error *err)
{
	char names[128];
	size_t i;

	if (g->format || o->output == NULL)
		return ATTN_OK;
	for (i = 0; i < OUT_COUNT; i++)
		if (i != OUT_TABLE &&
		    has_extension(o->output, formats[i].name)) {
			o->format = (enum out_format)i;
			o->format_by_name = 1;
		}
	if (o->format == OUT_TXT && (o->explain || o->heatmap || o->full ||
	    o->check != NULL))
		o->format = OUT_TABLE;
	formats_list(names, sizeof names, FORMATS_OR);
	if (has_extension(o->output, "svg") && o->gen)
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "-o %s: attn gen writes numbers (a %s), not an SVG picture: "
		    "give -f FORMAT, or another extension", o->output, names);
	if (has_extension(o->output, "svg") && o->svg == NULL)
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "-o %s: the SVG heatmap of the weights is --svg %s (-o "
		    "writes the stages, as -f says)", o->output, o->output);
	return ATTN_OK;
}

/* --npy-dtype: what -f npy writes. */
static enum attn_status
set_npy_dtype(struct parse *ps, const char *arg, struct attn_error *err)
{
	(void)arg;
	(void)err;
	ps->given.npy_dtype = 1;
	ps->o->npy_f4 = ps->choice == 1;
	return ATTN_OK;
}

/* -d N: significant digits. */
static enum attn_status
set_digits(struct parse *ps, const char *arg, struct attn_error *err)
{
	unsigned long long n;

	if (whole_parse(arg, 1, 17, &n) != 0)
		return whole_error(err, "--digits", "a whole number", 1, 17, "",
		    arg);
	ps->o->digits = (int)n;
	return ATTN_OK;
}

/*
 * The value of --scale: a number, A/B (one division, correctly rounded),
 * or A/sqrt(N), which is A / sqrt(N) in double as the default scale
 * 1/sqrt(d_k) is computed (lib/problem.c), so that --scale '1/sqrt(64)'
 * and the default agree to the bit.  A, B and N are numbers as a file
 * holds them.  Returns 0, or -1 with what is wrong in why.
 */
static int
parse_scale(const char *arg, double *out, const char **why)
{
	const char *slash = strchr(arg, '/'), *den;
	size_t len;
	double a, b;

	*why = NULL;
	if (slash == NULL)
		return attn_parse_number(arg, strlen(arg), out) == 0 &&
		    isfinite(*out) ? 0 : -1;
	den = slash + 1;
	len = strlen(den);
	if (attn_parse_number(arg, (size_t)(slash - arg), &a) != 0 ||
	    !isfinite(a))
		return -1;
	if (len > 6 && strncmp(den, "sqrt(", 5) == 0 && den[len - 1] == ')') {
		if (attn_parse_number(den + 5, len - 6, &b) != 0 ||
		    !isfinite(b))
			return -1;
		if (b <= 0.0) {
			*why = "N in A/sqrt(N) must be above 0";
			return -1;
		}
		*out = a / sqrt(b);
	} else {
		if (attn_parse_number(den, len, &b) != 0 || !isfinite(b))
			return -1;
		if (b == 0.0) {
			*why = "B in A/B must not be 0";
			return -1;
		}
		*out = a / b;
	}
	if (!isfinite(*out)) {
		*why = "the quotient is too large for a double";
		return -1;
	}
	return 0;
}

/* --scale X: a finite number, A/B or A/sqrt(N). */
static enum attn_status
set_scale(struct parse *ps, const char *arg, struct attn_error *err)
{
	struct options *o = ps->o;
	const char *why;
	double x;

	ps->given.scale = 1;
	if (parse_scale(arg, &x, &why) != 0) {
		if (why != NULL)
			return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
			    "--scale '%s': %s", arg, why);
		return usage_error(err, "--scale wants a finite number, A/B "
		    "or 1/sqrt(N), not '%s'", arg);
	}
	o->cfg.scale_mode = ATTN_SCALE_VALUE;
	o->cfg.scale = x;
	o->scale_text = arg;
	return ATTN_OK;
}

/* --no-scale */
static enum attn_status
set_no_scale(struct parse *ps, const char *arg, struct attn_error *err)
{
	(void)arg;
	(void)err;
	ps->given.no_scale = 1;
	ps->o->cfg.scale_mode = ATTN_SCALE_NONE;
	return ATTN_OK;
}

/* A count held in a size_t (the text is all of arg), from lo: 0, else
 * -1. */
static int
parse_count(const char *arg, unsigned long long lo, size_t *out)
{
	unsigned long long n;

	if (whole_parse(arg, lo, SIZE_MAX, &n) != 0)
		return -1;
	*out = (size_t)n;
	return 0;
}

/* --window L,R: how far a query sees to the left and to the right. */
static enum attn_status
set_window(struct parse *ps, const char *arg, struct attn_error *err)
{
	struct attn_config *cfg = &ps->o->cfg;
	const char *p = arg;
	unsigned long long l, r;

	if (whole_scan(&p, SIZE_MAX, &l) != 0 || *p++ != ',' ||
	    whole_scan(&p, SIZE_MAX, &r) != 0 || *p != '\0')
		return whole_error(err, "--window", "L,R, whole numbers", 0,
		    SIZE_MAX, " (keys to the left and right)", arg);
	cfg->window_left = (size_t)l;
	cfg->window_right = (size_t)r;
	cfg->window = 1;
	return ATTN_OK;
}

/* --softcap C: a finite number above 0. */
static enum attn_status
set_softcap(struct parse *ps, const char *arg, struct attn_error *err)
{
	double x;

	if (attn_parse_number(arg, strlen(arg), &x) != 0 || !isfinite(x) ||
	    x <= 0.0)
		return usage_error(err, "--softcap wants a finite number above "
		    "0, not '%s'", arg);
	ps->o->cfg.softcap = x;
	return ATTN_OK;
}

/* --align, --masked-rows and --like: the word given; --like's presets
 * apply once every option is known, under what --align and
 * --masked-rows say. */
static enum attn_status
set_align(struct parse *ps, const char *arg, struct attn_error *err)
{
	(void)arg;
	(void)err;
	ps->align = ps->choice;
	return ATTN_OK;
}

static enum attn_status
set_masked_rows(struct parse *ps, const char *arg, struct attn_error *err)
{
	(void)arg;
	(void)err;
	ps->masked_rows = ps->choice;
	return ATTN_OK;
}

static enum attn_status
set_like(struct parse *ps, const char *arg, struct attn_error *err)
{
	(void)arg;
	(void)err;
	ps->like = ps->choice;
	ps->o->like = words_like[ps->choice];
	return ATTN_OK;
}

/* --color WHEN */
static enum attn_status
set_color(struct parse *ps, const char *arg, struct attn_error *err)
{
	(void)arg;
	(void)err;
	ps->o->color = (enum color_mode)ps->choice;
	return ATTN_OK;
}

/* --color-range unit|max|row */
static enum attn_status
set_color_range(struct parse *ps, const char *arg, struct attn_error *err)
{
	(void)arg;
	(void)err;
	ps->given.color_range = 1;
	ps->o->color_range = (enum color_range)ps->choice;
	return ATTN_OK;
}

/* --rtol, --atol, --factor: finite numbers, at least 0 (above 0 for the
 * factor). */
static enum attn_status
parse_tolerance(const char *arg, const char *option, int positive,
    double *out, struct attn_error *err)
{
	double x;

	if (attn_parse_number(arg, strlen(arg), &x) != 0 || !isfinite(x) ||
	    x < 0.0 || (positive && x == 0.0))
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0, "%s wants "
		    "a finite number %s 0, not '%s'", option, positive ?
		    "above" : "from", arg);
	*out = x;
	return ATTN_OK;
}

static enum attn_status
set_rtol(struct parse *ps, const char *arg, struct attn_error *err)
{
	ps->given.tolerance = 1;
	return parse_tolerance(arg, "--rtol", 0, &ps->o->rtol, err);
}

static enum attn_status
set_atol(struct parse *ps, const char *arg, struct attn_error *err)
{
	ps->given.tolerance = 1;
	return parse_tolerance(arg, "--atol", 0, &ps->o->atol, err);
}

static enum attn_status
set_factor(struct parse *ps, const char *arg, struct attn_error *err)
{
	ps->given.factor = 1;
	return parse_tolerance(arg, "--factor", 1, &ps->o->factor, err);
}

/* --emulate: a precision below fp64. */
static enum attn_status
set_emulate(struct parse *ps, const char *arg, struct attn_error *err)
{
	(void)arg;
	(void)err;
	ps->o->emulate = (enum attn_precision)(ps->choice + 1);
	return ATTN_OK;
}

/* --layout: how 4-D arrays are laid out (enum attn_layout after NONE). */
static enum attn_status
set_layout(struct parse *ps, const char *arg, struct attn_error *err)
{
	(void)arg;
	(void)err;
	ps->o->cfg.layout = (enum attn_layout)(ps->choice + 1);
	return ATTN_OK;
}

/* --heads H, --kv-heads G: whole numbers above 0. */
static enum attn_status
set_heads(struct parse *ps, const char *arg, struct attn_error *err)
{
	if (parse_count(arg, 1, &ps->o->cfg.heads) != 0)
		return whole_error(err, "--heads", "a whole number", 1,
		    SIZE_MAX, "", arg);
	return ATTN_OK;
}

static enum attn_status
set_kv_heads(struct parse *ps, const char *arg, struct attn_error *err)
{
	if (parse_count(arg, 1, &ps->o->cfg.kv_heads) != 0)
		return whole_error(err, "--kv-heads", "a whole number", 1,
		    SIZE_MAX, "", arg);
	return ATTN_OK;
}

/* --rope [BASE]: a finite base above 0, 10000 when left out.  BASE may
 * follow as --rope=BASE or as the next word when that word is a number
 * (getopt_long takes an optional argument only after '='). */
static enum attn_status
set_rope(struct parse *ps, const char *arg, struct attn_error *err)
{
	struct attn_config *cfg = &ps->o->cfg;
	double x;

	if (arg == NULL && optind < ps->argc &&
	    attn_parse_number(ps->argv[optind], strlen(ps->argv[optind]),
	    &x) == 0)
		arg = ps->argv[optind++];
	cfg->rope = 1;
	if (arg == NULL)
		return ATTN_OK;
	if (attn_parse_number(arg, strlen(arg), &x) != 0 || !isfinite(x) ||
	    x <= 0.0)
		return usage_error(err, "--rope wants a base, a finite number "
		    "above 0 (10000 when left out), not '%s'", arg);
	cfg->rope_base = x;
	return ATTN_OK;
}

static enum attn_status
set_rope_style(struct parse *ps, const char *arg, struct attn_error *err)
{
	(void)arg;
	(void)err;
	ps->given.rope_style = 1;
	ps->o->cfg.rope_style = (enum attn_rope_style)ps->choice;
	return ATTN_OK;
}

/* The most threads -j takes: more only take turns. */
#define MAX_THREADS 1024

/* -j N and ATTN_THREADS: 0 (the CPUs this process may use) to
 * MAX_THREADS; what says it is named in the message. */
static enum attn_status
threads_from(const char *what, const char *arg, size_t *threads,
    struct attn_error *err)
{
	unsigned long long n;

	if (whole_parse(arg, 0, MAX_THREADS, &n) != 0)
		return whole_error(err, what, "a whole number", 0, MAX_THREADS,
		    " (0: one thread per CPU)", arg);
	*threads = (size_t)n;
	return ATTN_OK;
}

/* ATTN_ISA: the best instruction set the kernel's loops may use, by the
 * library's name for it; every one gives the same bytes, so it is for
 * tests and timings that compare them, and the man page's ENVIRONMENT
 * says so. */
static enum attn_status
isa_from(const char *arg, enum attn_isa *isa, struct attn_error *err)
{
	char names[64] = "";
	int i;

	for (i = ATTN_ISA_C; i < ATTN_ISA_COUNT; i++) {
		if (strcmp(arg, attn_isa_name((enum attn_isa)i)) == 0) {
			*isa = (enum attn_isa)i;
			return ATTN_OK;
		}
		snprintf(names + strlen(names), sizeof names - strlen(names),
		    "%s%s", i == ATTN_ISA_C ? "" : i + 1 == ATTN_ISA_COUNT ?
		    " or " : ", ", attn_isa_name((enum attn_isa)i));
	}
	return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
	    "ATTN_ISA is '%s': it names an instruction set: %s", arg, names);
}

static enum attn_status
set_threads(struct parse *ps, const char *arg, struct attn_error *err)
{
	ps->threads = 1;
	return threads_from("--threads", arg, &ps->o->cfg.threads, err);
}

/* --progress and --no-progress: the last one given counts. */
static enum attn_status
set_progress(struct parse *ps, const char *arg, struct attn_error *err)
{
	(void)arg;
	(void)err;
	ps->o->progress = PROGRESS_ON;
	return ATTN_OK;
}

static enum attn_status
set_no_progress(struct parse *ps, const char *arg, struct attn_error *err)
{
	(void)arg;
	(void)err;
	ps->o->progress = PROGRESS_OFF;
	return ATTN_OK;
}

/* -o FILE; -o - is standard output, as for most tools.  An empty name
 * (an unset shell variable, -o "$out") is refused before any work. */
static enum attn_status
set_output(struct parse *ps, const char *arg, struct attn_error *err)
{
	if (arg[0] == '\0')
		return usage_error(err, "%s", "-o wants a file name, not '' "
		    "(- is standard output)");
	ps->o->output = strcmp(arg, "-") == 0 ? NULL : arg;
	return ATTN_OK;
}

/* --svg FILE, likewise. */
static enum attn_status
set_svg(struct parse *ps, const char *arg, struct attn_error *err)
{
	if (arg[0] == '\0')
		return usage_error(err, "%s", "--svg wants a file name, not '' "
		    "(- is standard output)");
	ps->o->svg = arg;
	return ATTN_OK;
}

/* --query I,J..: checked now, kept once the inputs say T (query.c). */
static enum attn_status
set_query(struct parse *ps, const char *arg, struct attn_error *err)
{
	ps->o->query = arg;
	return query_parse(arg, &ps->o->nquery, err);
}

/* --seed N: 0 to 2^64 - 1. */
static enum attn_status
set_seed(struct parse *ps, const char *arg, struct attn_error *err)
{
	if (whole_parse(arg, 0, 0xffffffffffffffffULL, &ps->o->seed) != 0)
		return whole_error(err, "--seed", "a whole number", 0,
		    0xffffffffffffffffULL, "", arg);
	return ATTN_OK;
}

/* --dist normal|uniform */
static enum attn_status
set_dist(struct parse *ps, const char *arg, struct attn_error *err)
{
	(void)arg;
	(void)err;
	ps->o->dist = (enum attn_dist)ps->choice;
	return ATTN_OK;
}

/* -h and -V answer at once, whatever follows. */
static enum attn_status
set_help(struct parse *ps, const char *arg, struct attn_error *err)
{
	(void)arg;
	(void)err;
	ps->o->help = ps->stop = 1;
	return ATTN_OK;
}

static enum attn_status
set_version(struct parse *ps, const char *arg, struct attn_error *err)
{
	(void)arg;
	(void)err;
	ps->o->version = ps->stop = 1;
	return ATTN_OK;
}

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
	{ "npy-dtype", 0, "T", "-f npy writes f8 (float64, default) or f4",
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
	{ "window", 0, "L,R", "query i sees keys i+offset-L .. i+offset+R",
	    NULL, set_window, 0 },
	{ "alibi", 0, NULL, "add -slope_h * |i + offset - j| (ALiBi)",
	    NULL, NULL, FIELD(cfg.alibi) },
	{ "softcap", 0, "C", "logits become C*tanh(logits/C)",
	    NULL, set_softcap, 0 },
	{ "masked-rows", 0, "P",
	    "a row with no key: zero (default), nan, uniform",
	    words_masked_rows, set_masked_rows, 0 },
	{ "like", 0, "SYS", "torch, flash or jax: their --align and\n"
	    "--masked-rows", words_like, set_like, 0 },
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
	    "FILE, a kernel's result; exit 1 when it fails",
	    NULL, NULL, FIELD(check) },
	{ "rtol", 0, "X", "--check tolerance relative to attn's values\n"
	    "(default 1e-05)", NULL, set_rtol, 0 },
	{ "atol", 0, "X", "--check absolute tolerance (default 1e-08)",
	    NULL, set_atol, 0 },
	{ "emulate", 0, "P", "fp32, fp16 or bf16: compute a naive kernel in\n"
	    "that precision; with --check, the baseline",
	    words_emulate, set_emulate, 0 },
	{ "factor", 0, "X", "--check --emulate passes within X times the\n"
	    "baseline's error (default 2)", NULL, set_factor, 0 },
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

/* Options whose argument is a file but not named FILE (--self X,
 * --grad DO and --proj LAYER, as SPEC writes them). */
static const char *const file_options[] = { "self", "grad", "proj", NULL };

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

/* The formats' names, for completion, from the table of formats. */
static const char *format_names[OUT_COUNT + 1];

size_t
options_count(void)
{
	return NROWS;
}

/*
 * What a line of a help text (len bytes at line) stands for when it is
 * "{stages}", "{formats}" or "{extensions}": the stages --stage offers
 * (from the stage table), the formats or -o's extensions (from the
 * table of formats), in static storage; NULL for a line of text.
 */
static const char *
help_list(const char *line, size_t len)
{
	static char list[128];

	if (len == 8 && strncmp(line, "{stages}", len) == 0)
		stage_names(list, sizeof list, ATTN_STAGES_ALL |
		    ATTN_STAGES_PROJ);
	else if (len == 9 && strncmp(line, "{formats}", len) == 0)
		formats_list(list, sizeof list, FORMATS_OR | FORMATS_DEFAULT);
	else if (len == 12 && strncmp(line, "{extensions}", len) == 0)
		formats_list(list, sizeof list, FORMATS_OR |
		    FORMATS_EXTENSIONS);
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
			print_pad(fp, HELP_COLUMN);
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
	size_t k;

	memset(out, 0, sizeof *out);
	out->name = r->name;
	out->letter = r->letter;
	out->arg = r->arg;
	out->help = r->help;
	out->help_len = strcspn(r->help, "\n");
	if ((list = help_list(r->help, out->help_len)) != NULL) {
		out->help = list;
		out->help_len = strlen(list);
	}
	out->attn = applies(r, 0);
	out->gen = applies(r, 1);
	out->value = r->arg == NULL ? OPTION_NONE : OPTION_TEXT;
	if (r->set == set_stage) {
		out->value = OPTION_STAGES;
	} else if (r->set == set_format) {
		for (k = 0; k < OUT_COUNT; k++)
			format_names[k] = formats[k].name;
		out->value = OPTION_WORDS;
		out->words = format_names;
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
			print_pad(fp, HELP_COLUMN - w);
			if ((list = help_list(h, len)) != NULL)
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

/* "" or " (options are written in full: --query, --query-labels)": the
 * options of the command (gen or not) whose names start with the len
 * bytes at name, for a word that getopt_long would have taken as an
 * abbreviation of them. */
static void
full_names(char *buf, size_t size, const char *name, size_t len, int gen)
{
	size_t i, n = 0, found = 0;

	buf[0] = '\0';
	for (i = 0; i < NROWS && n < size; i++) {
		if (!applies(&rows[i], gen) || len == 0 ||
		    strncmp(rows[i].name, name, len) != 0)
			continue;
		n += (size_t)snprintf(buf + n, size - n, "%s--%s",
		    found++ == 0 ? " (options are written in full: " : ", ",
		    rows[i].name);
	}
	if (found > 0 && n < size)
		snprintf(buf + n, size - n, ")");
}

/*
 * getopt_long returned '?': name the option that is wrong.  A letter
 * that no option of this command has is a short option, in a cluster
 * such as -ze or not (getopt_long leaves it in optopt, and argv[optind
 * - 1] may then be the word before); otherwise the word it stopped at,
 * argv[optind - 1], is a long option: unknown, of the other command (gen
 * or not), or given a value it does not take.
 */
static enum attn_status
bad_option(char **argv, int gen, struct attn_error *err)
{
	const char *arg = argv[optind - 1];
	char shortopt[3] = { '-', (char)optopt, '\0' }, hint[160];
	size_t len, i;
	int letter = 0;

	for (i = 0; i < NROWS; i++)
		letter |= applies(&rows[i], gen) && optopt != 0 &&
		    rows[i].letter == optopt;
	if (optopt > 0 && optopt < 256 && !letter)
		return usage_error(err, "unknown option '%s'", shortopt);
	len = strcspn(arg + 2, "=");
	for (i = 0; i < NROWS; i++)
		if (!applies(&rows[i], gen) && strlen(rows[i].name) == len &&
		    strncmp(rows[i].name, arg + 2, len) == 0)
			return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
			    "--%s is an option of attn%s, not of attn%s",
			    rows[i].name, gen ? "" : " gen", gen ? " gen" : "");
	if (arg[2 + len] == '=')
		for (i = 0; i < NROWS; i++)
			if (applies(&rows[i], gen) &&
			    strlen(rows[i].name) == len &&
			    strncmp(rows[i].name, arg + 2, len) == 0)
				return usage_error(err,
				    "option '--%s' takes no value",
				    rows[i].name);
	full_names(hint, sizeof hint, arg + 2, len, gen);
	return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
	    "unknown option '%.*s'%s", (int)(len + 2), arg, hint);
}

/*
 * getopt_long took a long option for row r: refuse it unless the word
 * spells r's name in full.  getopt_long also takes any unambiguous
 * prefix (--quer for --query-labels until --query exists), and such a
 * word would change meaning whenever an option is added: a script that
 * works today must not be reinterpreted by a later version.  The word
 * is argv[optind - 1], or argv[optind - 2] when the value was the next
 * word.
 */
static enum attn_status
check_full_name(char **argv, const struct option_row *r, const char *arg,
    int gen, struct attn_error *err)
{
	const char *word = argv[optind - 1];
	size_t len;
	char hint[160];

	if (arg != NULL && optind >= 2 && arg == argv[optind - 1])
		word = argv[optind - 2];
	len = strcspn(word + 2, "=");
	if (strlen(r->name) == len && strncmp(word + 2, r->name, len) == 0)
		return ATTN_OK;
	full_names(hint, sizeof hint, word + 2, len, gen);
	return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
	    "unknown option '%.*s'%s", (int)(len + 2), word, hint);
}

/* getopt_long returned ':': the option at the end of argv wants a value.
 * A short one (in a cluster such as -ej or not) is named by its letter,
 * a long one by its word. */
static enum attn_status
missing_value(char **argv, struct attn_error *err)
{
	const char *arg = argv[optind - 1];
	char shortopt[3] = { '-', (char)optopt, '\0' };

	if (strncmp(arg, "--", 2) != 0 && optopt > 0 && optopt < 256)
		arg = shortopt;
	return usage_error(err, "option '%s' needs a value", arg);
}

/*
 * Whether word, the next word of argv that getopt_long took as row r's
 * value, is rather an option the user meant on its own (-o --causal,
 * --self --no-scale x.csv): it starts with '-' and is not '-' alone
 * (standard input or output), a negative number (--scale -0.5, refused
 * or not by the option itself) or one of r's words.
 * A value attached to its option (--output=-x, -o-x) is never one: the
 * user wrote it so.
 */
static int
is_option_word(const struct option_row *r, const char *word)
{
	size_t i;

	if (word[0] != '-' || word[1] == '\0' ||
	    (word[1] >= '0' && word[1] <= '9') || word[1] == '.')
		return 0;
	for (i = 0; r->choices != NULL && r->choices[i] != NULL; i++)
		if (strcmp(word, r->choices[i]) == 0)
			return 0;
	return 1;
}

/* Row r (named by its long name when given so, else by its letter)
 * took the option word as its value: name the option that lacks one,
 * and how to give a value that starts with '-'. */
static enum attn_status
value_is_an_option(const struct option_row *r, int long_name,
    const char *word, struct attn_error *err)
{
	char name[64];

	if (long_name)
		snprintf(name, sizeof name, "--%s", r->name);
	else
		snprintf(name, sizeof name, "-%c", r->letter);
	if (takes_file(r))
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "option '%s' needs a value, not the option '%s' (a file "
		    "whose name starts with - is given as ./-name)", name, word);
	if (r->choices != NULL || r->set == set_format)
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "option '%s' needs a value, not the option '%s'", name,
		    word);
	return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
	    "option '%s' needs a value, not the option '%s' (a value that "
	    "starts with - is given as --%s=VALUE)", name, word, r->name);
}

/* The argument of row r, when it is one of r->choices: its index in
 * ps->choice; else "--NAME wants A, B or C, not 'x'". */
static enum attn_status
check_choice(const struct option_row *r, struct parse *ps, const char *arg,
    struct attn_error *err)
{
	char words[128];
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
	return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
	    "--%s wants %s, not '%s'", r->name, words, arg);
}

/* Row r given with argument arg (NULL when it takes none). */
static enum attn_status
apply(const struct option_row *r, struct parse *ps, const char *arg,
    struct attn_error *err)
{
	enum attn_status st;
	char *field = (char *)ps->o + r->field;

	if (r->choices != NULL &&
	    (st = check_choice(r, ps, arg, err)) != ATTN_OK)
		return st;
	if (r->set != NULL)
		return r->set(ps, arg, err);
	if (r->arg == NULL)
		*(int *)(void *)field = 1;
	else
		*(const char **)(void *)field = arg;
	return ATTN_OK;
}

/* Every default, in one place. */
static void
options_init(struct options *o)
{
	memset(o, 0, sizeof *o);
	o->stages[0] = ATTN_STAGE_OUTPUT;
	o->nstages = 1;
	o->format = OUT_TABLE;
	o->digits = -1;		/* resolved once the format is known */
	o->avail = ATTN_STAGES_ALL;	/* until the inputs are read */
	o->rtol = 1e-5;		/* numpy.allclose's */
	o->atol = 1e-8;
	o->factor = 2.0;	/* FlashAttention's tests' */
	o->emulate = ATTN_PREC_FP64;
	attn_config_init(&o->cfg);
}

enum attn_status
options_parse(int argc, char **argv, struct options *o,
    struct attn_error *err)
{
	struct option longopts[NROWS + 1];
	char shortopts[2 * NROWS + 2];
	struct parse ps;
	enum attn_status st;
	size_t i, n = 0, nl = 0;
	int c, li = -1;		/* getopt_long's index of a long option */

	options_init(o);
	/* attn gen: its own options, from the same table; attn
	 * workbench: attn's */
	if (argc > 1 && strcmp(argv[1], "gen") == 0) {
		o->gen = 1;
		argc--;
		argv++;
	} else if (argc > 1 && strcmp(argv[1], "workbench") == 0) {
		o->workbench = 1;
		argc--;
		argv++;
	}
	memset(&ps, 0, sizeof ps);
	ps.o = o;
	ps.argc = argc;
	ps.argv = argv;
	ps.align = ps.masked_rows = ps.like = -1;
	/* ':' first: a missing argument is ':' rather than '?'. */
	shortopts[n++] = ':';
	memset(longopts, 0, sizeof longopts);
	for (i = 0; i < NROWS; i++) {
		if (!applies(&rows[i], o->gen))
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
			return missing_value(argv, err);
		for (i = 0; i < NROWS && row_val(i) != c; i++)
			;
		if (i == NROWS)
			return bad_option(argv, o->gen, err);
		if (li >= 0 && (st = check_full_name(argv, &rows[i], optarg,
		    o->gen, err)) != ATTN_OK)
			return st;
		/* The value given as the next word (not attached). */
		if (optarg != NULL && optind >= 2 &&
		    optarg == argv[optind - 1] &&
		    is_option_word(&rows[i], optarg))
			return value_is_an_option(&rows[i], li >= 0, optarg,
			    err);
		li = -1;
		if ((st = apply(&rows[i], &ps, optarg, err)) != ATTN_OK)
			return st;
		if (ps.stop)
			return ATTN_OK;
	}
	o->operands = argv + optind;
	o->noperands = (size_t)(argc - optind);
	if ((st = format_by_extension(o, &ps.given, err)) != ATTN_OK)
		return st;
	if (o->gen) {
		if (o->digits < 0)
			o->digits = formats[o->format].digits;
		return rules_check_gen(o, &ps.given, err);
	}
	/* --like sets what --align and --masked-rows leave unsaid. */
	if (ps.like >= 0) {
		o->cfg.align = words_like_preset[ps.like].align;
		o->cfg.masked_rows = words_like_preset[ps.like].masked_rows;
		o->like_align = ps.align < 0;
		o->like_masked_rows = ps.masked_rows < 0;
	}
	if (ps.align >= 0)
		o->cfg.align = (enum attn_align)ps.align;
	if (ps.masked_rows >= 0)
		o->cfg.masked_rows = (enum attn_masked_rows)ps.masked_rows;
	if (ps.stage_list != NULL &&
	    (st = parse_stages(o, ps.stage_list, err)) != ATTN_OK)
		return st;
	/* An empty ATTN_THREADS is as if unset, as shells make it easy to
	 * leave one so. */
	if (!ps.threads && getenv("ATTN_THREADS") != NULL &&
	    getenv("ATTN_THREADS")[0] != '\0' &&
	    (st = threads_from("ATTN_THREADS", getenv("ATTN_THREADS"),
	    &o->cfg.threads, err)) != ATTN_OK)
		return st;
	if (getenv("ATTN_ISA") != NULL && getenv("ATTN_ISA")[0] != '\0' &&
	    (st = isa_from(getenv("ATTN_ISA"), &o->cfg.isa, err)) != ATTN_OK)
		return st;
	/* A printer that is not a format takes the place of the default
	 * stage: stages print beside it only when --stage names them.
	 * Before the rules, which count the stages printed. */
	if (!ps.given.stage && (o->stats || o->heatmap || o->svg != NULL))
		o->nstages = 0;
	if ((st = rules_check_options(o, &ps.given, err)) != ATTN_OK)
		return st;
	if (o->digits < 0)
		o->digits = formats[o->format].digits;
	return ATTN_OK;
}
