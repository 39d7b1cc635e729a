/*
 * options_set.c - what each option of the table sets (see options_set.h):
 * a function a row, which reads the option's value (numbers through
 * whole.h or attn_parse_number, with an end check and a range check)
 * into struct options, and set_finish, what waits until every option is
 * known (-o FILE's extension, --like, --stage, ATTN_THREADS), then the
 * rules between options (rules.c), checked before any input is read.
 */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "formats.h"
#include "logits.h"
#include "options.h"
#include "options_hint.h"
#include "options_set.h"
#include "query.h"
#include "rules.h"
#include "whole.h"
#include "words.h"

static enum attn_status
usage_error(struct attn_error *err, const char *fmt, const char *arg)
{
	return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0, fmt, arg);
}

/* --stage LIST, read once every option is known, since what `all` means
 * and which stages are offered depend on --grad. */
enum attn_status
set_stage(struct parse *ps, const char *list, struct attn_error *err)
{
	(void)err;
	ps->given.stage = 1;
	ps->o->stage_given = 1;
	ps->stage_list = list;
	return ATTN_OK;
}

/* -f FMT: a name from the table of formats. */
enum attn_status
set_format(struct parse *ps, const char *arg, struct attn_error *err)
{
	const enum out_format f = formats_named(arg);
	const char *words[OUT_COUNT];
	char names[128], hint[96];
	size_t k;

	ps->given.format = 1;
	if (f != OUT_COUNT) {
		ps->o->format = f;
		return ATTN_OK;
	}
	formats_list(names, sizeof names, 0, 0);
	for (k = 0; k < OUT_COUNT; k++)
		words[k] = formats[k].name;
	hint_suggest(hint, sizeof hint, arg, strlen(arg), words, OUT_COUNT,
	    "");
	return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
	    "unknown format '%s' (formats: %s)%s", arg, names, hint);
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
	const enum out_format f = o->output != NULL ?
	    formats_by_extension(o->output) : OUT_COUNT;
	char names[128];

	if (g->format || o->output == NULL)
		return ATTN_OK;
	if (f != OUT_COUNT) {
		o->format = f;
		o->format_by_name = 1;
	}
	if (o->format == OUT_TXT && (o->explain || o->heatmap || o->full ||
	    o->check != NULL))
		o->format = OUT_TABLE;
	formats_list(names, sizeof names, FORMATS_OR | FORMATS_GEN, 0);
	if (formats_has_extension(o->output, "svg") && o->gen)
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "-o %s: attn gen writes numbers (a %s), not an SVG picture: "
		    "give -f FORMAT, or another extension", o->output, names);
	if (formats_has_extension(o->output, "svg") && o->svg == NULL)
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "-o %s: the SVG heatmap of the weights is --svg %s (-o "
		    "writes the stages, as -f says)", o->output, o->output);
	return ATTN_OK;
}

/* --npy-dtype: what -f npy writes. */
enum attn_status
set_npy_dtype(struct parse *ps, const char *arg, struct attn_error *err)
{
	(void)arg;
	(void)err;
	ps->given.npy_dtype = 1;
	ps->o->npy_f4 = ps->choice == 1;
	return ATTN_OK;
}

/* -d N: significant digits. */
enum attn_status
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
enum attn_status
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
enum attn_status
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
enum attn_status
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
enum attn_status
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

/* --dropout-p P: dropout's probability, from 0 up to but not 1 (a
 * weight kept is scaled by 1/(1 - P)). */
enum attn_status
set_dropout_p(struct parse *ps, const char *arg, struct attn_error *err)
{
	double x;

	if (attn_parse_number(arg, strlen(arg), &x) != 0 || !(x >= 0.0 &&
	    x < 1.0))
		return usage_error(err, "--dropout-p wants a probability, at "
		    "least 0 and below 1, not '%s'", arg);
	ps->o->cfg.dropout_p = x;
	ps->o->dropout_p_given = 1;
	return ATTN_OK;
}

/* --align, --masked-rows and --like: the word given; --like's presets
 * apply once every option is known, under what --align and
 * --masked-rows say. */
enum attn_status
set_align(struct parse *ps, const char *arg, struct attn_error *err)
{
	(void)arg;
	(void)err;
	ps->align = ps->choice;
	return ATTN_OK;
}

enum attn_status
set_masked_rows(struct parse *ps, const char *arg, struct attn_error *err)
{
	(void)arg;
	(void)err;
	ps->masked_rows = ps->choice;
	return ATTN_OK;
}

enum attn_status
set_like(struct parse *ps, const char *arg, struct attn_error *err)
{
	(void)arg;
	(void)err;
	ps->like = ps->choice;
	ps->o->like = words_like[ps->choice];
	return ATTN_OK;
}

/* --lse-base B and --lse-masked X (which --like flash sets when not
 * given). */
enum attn_status
set_lse_base(struct parse *ps, const char *arg, struct attn_error *err)
{
	(void)arg;
	(void)err;
	ps->o->cfg.lse_base = (enum attn_lse_base)ps->choice;
	return ATTN_OK;
}

enum attn_status
set_lse_masked(struct parse *ps, const char *arg, struct attn_error *err)
{
	(void)arg;
	(void)err;
	ps->lse_masked = ps->choice;
	return ATTN_OK;
}

/* --color WHEN */
enum attn_status
set_color(struct parse *ps, const char *arg, struct attn_error *err)
{
	(void)arg;
	(void)err;
	ps->o->color = (enum color_mode)ps->choice;
	return ATTN_OK;
}

/* --color-range unit|max|row */
enum attn_status
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

enum attn_status
set_rtol(struct parse *ps, const char *arg, struct attn_error *err)
{
	ps->given.tolerance = 1;
	return parse_tolerance(arg, "--rtol", 0, &ps->o->rtol, err);
}

enum attn_status
set_atol(struct parse *ps, const char *arg, struct attn_error *err)
{
	ps->given.tolerance = 1;
	return parse_tolerance(arg, "--atol", 0, &ps->o->atol, err);
}

enum attn_status
set_factor(struct parse *ps, const char *arg, struct attn_error *err)
{
	ps->given.factor = 1;
	return parse_tolerance(arg, "--factor", 1, &ps->o->factor, err);
}

/* --check-by: head or tensor (enum check_by). */
enum attn_status
set_check_by(struct parse *ps, const char *arg, struct attn_error *err)
{
	(void)arg;
	(void)err;
	ps->given.check_by = 1;
	ps->o->check_by = (enum check_by)ps->choice;
	return ATTN_OK;
}

/* --emulate: a precision below fp64. */
enum attn_status
set_emulate(struct parse *ps, const char *arg, struct attn_error *err)
{
	(void)arg;
	(void)err;
	ps->o->emulate = (enum attn_precision)(ps->choice + 1);
	return ATTN_OK;
}

/* --emulate-order q|k: which operand the emulation scales; --like flash
 * chooses k when it is not given. */
enum attn_status
set_emulate_order(struct parse *ps, const char *arg, struct attn_error *err)
{
	(void)arg;
	(void)err;
	ps->given.emulate_order = 1;
	ps->emulate_order = ps->choice;
	return ATTN_OK;
}

/* --layout: how 4-D arrays are laid out (enum attn_layout after NONE). */
enum attn_status
set_layout(struct parse *ps, const char *arg, struct attn_error *err)
{
	(void)arg;
	(void)err;
	ps->o->cfg.layout = (enum attn_layout)(ps->choice + 1);
	return ATTN_OK;
}

/* --kv-layout nhd|hnd */
enum attn_status
set_kv_layout(struct parse *ps, const char *arg, struct attn_error *err)
{
	(void)arg;
	(void)err;
	ps->o->kv_hnd = ps->choice == 1;
	ps->o->kv_layout_given = 1;
	return ATTN_OK;
}

/* --heads H, --kv-heads G: whole numbers above 0. */
enum attn_status
set_heads(struct parse *ps, const char *arg, struct attn_error *err)
{
	if (parse_count(arg, 1, &ps->o->cfg.heads) != 0)
		return whole_error(err, "--heads", "a whole number", 1,
		    SIZE_MAX, "", arg);
	return ATTN_OK;
}

enum attn_status
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
enum attn_status
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

enum attn_status
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

enum attn_status
set_threads(struct parse *ps, const char *arg, struct attn_error *err)
{
	ps->threads = 1;
	return threads_from("--threads", arg, &ps->o->cfg.threads, err);
}

/* --progress and --no-progress: the last one given counts. */
enum attn_status
set_progress(struct parse *ps, const char *arg, struct attn_error *err)
{
	(void)arg;
	(void)err;
	ps->o->progress = PROGRESS_ON;
	return ATTN_OK;
}

enum attn_status
set_no_progress(struct parse *ps, const char *arg, struct attn_error *err)
{
	(void)arg;
	(void)err;
	ps->o->progress = PROGRESS_OFF;
	return ATTN_OK;
}

/* -o FILE; -o - is standard output, as for most tools.  An empty name
 * (an unset shell variable, -o "$out") is refused before any work. */
enum attn_status
set_output(struct parse *ps, const char *arg, struct attn_error *err)
{
	if (arg[0] == '\0')
		return usage_error(err, "%s", "-o wants a file name, not '' "
		    "(- is standard output)");
	ps->o->output = strcmp(arg, "-") == 0 ? NULL : arg;
	return ATTN_OK;
}

/* --svg FILE, likewise. */
enum attn_status
set_svg(struct parse *ps, const char *arg, struct attn_error *err)
{
	if (arg[0] == '\0')
		return usage_error(err, "%s", "--svg wants a file name, not '' "
		    "(- is standard output)");
	ps->o->svg = arg;
	return ATTN_OK;
}

/* --query I,J..: checked now, kept once the inputs say T (query.c). */
enum attn_status
set_query(struct parse *ps, const char *arg, struct attn_error *err)
{
	ps->o->query = arg;
	return query_parse(arg, &ps->o->nquery, err);
}

/* --seed N: 0 to 2^64 - 1. */
enum attn_status
set_seed(struct parse *ps, const char *arg, struct attn_error *err)
{
	if (whole_parse(arg, 0, 0xffffffffffffffffULL, &ps->o->seed) != 0)
		return whole_error(err, "--seed", "a whole number", 0,
		    0xffffffffffffffffULL, "", arg);
	return ATTN_OK;
}

/* --dist normal|uniform */
enum attn_status
set_dist(struct parse *ps, const char *arg, struct attn_error *err)
{
	(void)arg;
	(void)err;
	ps->o->dist = (enum attn_dist)ps->choice;
	return ATTN_OK;
}

/* -h and -V answer at once, whatever follows. */
enum attn_status
set_help(struct parse *ps, const char *arg, struct attn_error *err)
{
	(void)arg;
	(void)err;
	ps->o->help = ps->stop = 1;
	return ATTN_OK;
}

enum attn_status
set_version(struct parse *ps, const char *arg, struct attn_error *err)
{
	(void)arg;
	(void)err;
	ps->o->version = ps->stop = 1;
	return ATTN_OK;
}

enum attn_status
set_finish(struct parse *ps, struct attn_error *err)
{
	struct options *o = ps->o;
	enum attn_status status;

	if ((status = format_by_extension(o, &ps->given, err)) != ATTN_OK)
		return status;
	if (o->gen) {
		if (o->digits < 0)
			o->digits = formats[o->format].digits;
		return rules_check_gen(o, &ps->given, err);
	}
	/* --like sets what --align and --masked-rows leave unsaid. */
	if (ps->like >= 0) {
		o->cfg.align = words_like_preset[ps->like].align;
		o->cfg.masked_rows = words_like_preset[ps->like].masked_rows;
		o->cfg.lse_masked = words_like_preset[ps->like].lse_masked;
		o->like_align = ps->align < 0;
		o->like_masked_rows = ps->masked_rows < 0;
		o->like_lse_masked = ps->lse_masked < 0;
		/* the order of the scale, where the format has one and
		 * there are Q and K (attn softmax has the logits) */
		if (ps->emulate_order < 0 && !o->softmax &&
		    (o->emulate == ATTN_PREC_FP32 ||
		    o->emulate == ATTN_PREC_FP16 ||
		    o->emulate == ATTN_PREC_BF16)) {
			o->cfg.emulate_order =
			    words_like_preset[ps->like].emulate_order;
			o->like_emulate_order = 1;
		}
	}
	if (ps->emulate_order >= 0)
		o->cfg.emulate_order =
		    (enum attn_emulate_order)ps->emulate_order;
	if (ps->lse_masked >= 0)
		o->cfg.lse_masked = (enum attn_lse_masked)ps->lse_masked;
	if (ps->align >= 0)
		o->cfg.align = (enum attn_align)ps->align;
	if (ps->masked_rows >= 0)
		o->cfg.masked_rows = (enum attn_masked_rows)ps->masked_rows;
	if (ps->stage_list != NULL &&
	    (status = options_stages(o, ps->stage_list, err)) != ATTN_OK)
		return status;
	/* --alibi-slopes FILE is ALiBi with those slopes, as a kernel's
	 * alibi_slopes turns it on. */
	if (o->alibi_slopes != NULL)
		o->cfg.alibi = 1;
	/* An empty ATTN_THREADS is as if unset, as shells make it easy to
	 * leave one so. */
	if (!ps->threads && getenv("ATTN_THREADS") != NULL &&
	    getenv("ATTN_THREADS")[0] != '\0' &&
	    (status = threads_from("ATTN_THREADS", getenv("ATTN_THREADS"),
	    &o->cfg.threads, err)) != ATTN_OK)
		return status;
	if (getenv("ATTN_ISA") != NULL && getenv("ATTN_ISA")[0] != '\0' &&
	    (status = isa_from(getenv("ATTN_ISA"), &o->cfg.isa, err)) !=
	    ATTN_OK)
		return status;
	/* A printer that is not a format takes the place of the default
	 * stage: stages print beside it only when --stage names them.
	 * Before the rules, which count the stages printed. */
	if (!ps->given.stage && (o->stats || o->heatmap || o->svg != NULL))
		o->nstages = 0;
	if (o->softmax)
		logits_defaults(o, ps->given.scale || ps->given.no_scale,
		    ps->given.stage);
	if ((status = rules_check_options(o, &ps->given, err)) != ATTN_OK)
		return status;
	if (o->digits < 0)
		o->digits = formats[o->format].digits;
	return ATTN_OK;
}
