/*
 * options.c - argv to struct options with getopt_long.  Numbers go
 * through strtol/attn_parse_number with an end check and a range check;
 * cross-option rules are checked here, before any input is read.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "options.h"
#include "print.h"

const char options_usage[] =
    "usage: attn [options] Q K V\n"
    "       attn [options] BUNDLE\n"
    "       attn [options] --self X\n";

/* The --help text comes in two pieces around the stage names, which
 * come from the stage table (options_print_help). */
static const char help_head[] =
    "attn - scaled dot-product attention, softmax(Q K^T / sqrt(d_k)) V,\n"
    "computed and explained stage by stage.\n"
    "\n"
    "usage: attn [options] Q K V\n"
    "       attn [options] BUNDLE\n"
    "       attn [options] --self X\n"
    "\n"
    "Q, K and V are JSON, CSV, TSV or whitespace-separated text files;\n"
    "BUNDLE is one JSON object {\"Q\":..,\"K\":..,\"V\":..} with optional\n"
    "\"mask\", \"bias\" and \"labels\"; '-' reads standard input.\n"
    "\n"
    "options:\n"
    "  -e, --explain          every stage with its formula, shape and checks\n"
    "  -s, --stage LIST       stages to print, comma-separated, or all:\n"
    "                        ";

static const char help_tail[] =
    "\n"
    "                         (default output)\n"
    "  -f, --format FMT       table (default), csv, tsv or json\n"
    "      --header           with csv or tsv: label rows and columns\n"
    "  -d, --digits N         significant digits, 1 to 17 (default 4 for\n"
    "                         table; csv, tsv and json default to the\n"
    "                         shortest text that reads back exactly)\n"
    "      --scale X          scale the scores by X instead of 1/sqrt(d_k)\n"
    "      --no-scale         scale by 1\n"
    "      --self X           self-attention: Q = K = V = X\n"
    "      --causal           query i attends key j only when j <= i + offset\n"
    "      --align A          top-left (offset 0, default) or bottom-right\n"
    "                         (offset S - T): where positions line up\n"
    "  -m, --mask FILE        T x S keep-mask: nonzero or true may attend\n"
    "      --mask-invert      nonzero in the mask means masked out\n"
    "      --bias FILE        T x S bias added to the logits (-inf allowed)\n"
    "      --window L,R       query i sees keys i+offset-L .. i+offset+R\n"
    "      --alibi            add -slope_h * |i + offset - j| (ALiBi)\n"
    "      --softcap C        logits become C*tanh(logits/C)\n"
    "      --masked-rows P    a row with no key: zero (default), nan, uniform\n"
    "      --like SYS         torch, flash or jax: their --align and\n"
    "                         --masked-rows\n"
    "      --heads H          split the columns into H heads\n"
    "      --kv-heads G       K and V hold G heads (grouped-query)\n"
    "      --query-labels L   names of the query rows, comma-separated\n"
    "      --key-labels L     names of the keys, comma-separated\n"
    "  -o, --output FILE      write to FILE atomically instead of stdout\n"
    "  -h, --help             show this help and exit\n"
    "  -V, --version          show the version and exit\n";

enum {
	OPT_HEADER = 256,
	OPT_SCALE,
	OPT_NO_SCALE,
	OPT_SELF,
	OPT_QUERY_LABELS,
	OPT_KEY_LABELS,
	OPT_CAUSAL,
	OPT_ALIGN,
	OPT_MASK_INVERT,
	OPT_BIAS,
	OPT_WINDOW,
	OPT_ALIBI,
	OPT_SOFTCAP,
	OPT_MASKED_ROWS,
	OPT_LIKE,
	OPT_HEADS,
	OPT_KV_HEADS
};

static const struct option long_options[] = {
	{ "explain", no_argument, NULL, 'e' },
	{ "stage", required_argument, NULL, 's' },
	{ "format", required_argument, NULL, 'f' },
	{ "header", no_argument, NULL, OPT_HEADER },
	{ "digits", required_argument, NULL, 'd' },
	{ "scale", required_argument, NULL, OPT_SCALE },
	{ "no-scale", no_argument, NULL, OPT_NO_SCALE },
	{ "self", required_argument, NULL, OPT_SELF },
	{ "query-labels", required_argument, NULL, OPT_QUERY_LABELS },
	{ "key-labels", required_argument, NULL, OPT_KEY_LABELS },
	{ "causal", no_argument, NULL, OPT_CAUSAL },
	{ "align", required_argument, NULL, OPT_ALIGN },
	{ "mask", required_argument, NULL, 'm' },
	{ "mask-invert", no_argument, NULL, OPT_MASK_INVERT },
	{ "bias", required_argument, NULL, OPT_BIAS },
	{ "window", required_argument, NULL, OPT_WINDOW },
	{ "alibi", no_argument, NULL, OPT_ALIBI },
	{ "softcap", required_argument, NULL, OPT_SOFTCAP },
	{ "masked-rows", required_argument, NULL, OPT_MASKED_ROWS },
	{ "like", required_argument, NULL, OPT_LIKE },
	{ "heads", required_argument, NULL, OPT_HEADS },
	{ "kv-heads", required_argument, NULL, OPT_KV_HEADS },
	{ "output", required_argument, NULL, 'o' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 }
};

/* Every default, in one place. */
static void
options_init(struct options *o)
{
	memset(o, 0, sizeof *o);
	o->stages[0] = ATTN_STAGE_OUTPUT;
	o->nstages = 1;
	o->format = OUT_TABLE;
	o->digits = -1;		/* resolved once the format is known */
	attn_config_init(&o->cfg);
}

static enum attn_status
usage_error(struct attn_error *err, const char *fmt, const char *arg)
{
	return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0, fmt, arg);
}

/* The stage names, "scores, scaled, ...", from the stage table. */
static void
stage_names(char *buf, size_t size)
{
	size_t i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < ATTN_STAGE_COUNT && n < size; i++)
		if (!attn_stage_table[i].internal)
			n += (size_t)snprintf(buf + n, size - n, "%s%s",
			    n > 0 ? ", " : "", attn_stage_table[i].name);
}

void
options_print_help(FILE *fp)
{
	char names[128];

	stage_names(names, sizeof names);
	fprintf(fp, "%s %s%s", help_head, names, help_tail);
}

/* getopt_long returned '?' for arg, the argument it stopped at: name the
 * option that is wrong, which for a cluster such as -ez is optopt. */
static enum attn_status
bad_option(const char *arg, struct attn_error *err)
{
	const struct option *lo;
	char shortopt[3] = { '-', (char)optopt, '\0' };
	size_t len;

	if (strncmp(arg, "--", 2) != 0)
		return usage_error(err, "unknown option '%s'", shortopt);
	len = strcspn(arg + 2, "=");
	if (arg[2 + len] == '=')
		for (lo = long_options; lo->name != NULL; lo++)
			if (strlen(lo->name) == len &&
			    strncmp(lo->name, arg + 2, len) == 0)
				return usage_error(err,
				    "option '--%s' takes no value", lo->name);
	return usage_error(err, "unknown or ambiguous option '%s'", arg);
}

/* --stage LIST: names from the stage table, comma-separated, or all. */
static enum attn_status
parse_stages(struct options *o, const char *list, struct attn_error *err)
{
	const char *p = list;
	size_t i;

	if (strcmp(list, "all") == 0) {
		o->nstages = 0;
		for (i = 0; i < ATTN_STAGE_COUNT; i++)
			if (!attn_stage_table[i].internal)
				o->stages[o->nstages++] = (enum attn_stage)i;
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
			char names[128];

			stage_names(names, sizeof names);
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

/* -f FMT: a name from the table of formats. */
static enum attn_status
parse_format(struct options *o, const char *arg, struct attn_error *err)
{
	char names[128];
	size_t i, n = 0;

	for (i = 0; i < OUT_COUNT; i++)
		if (strcmp(arg, print_formats[i].name) == 0) {
			o->format = (enum out_format)i;
			return ATTN_OK;
		}
	names[0] = '\0';
	for (i = 0; i < OUT_COUNT && n < sizeof names; i++)
		n += (size_t)snprintf(names + n, sizeof names - n, "%s%s",
		    i > 0 ? ", " : "", print_formats[i].name);
	return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
	    "unknown format '%s' (formats: %s)", arg, names);
}

static enum attn_status
parse_digits(struct options *o, const char *arg, struct attn_error *err)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(arg, &end, 10);
	if (end == arg || *end != '\0' || errno != 0 || n < 1 || n > 17)
		return usage_error(err,
		    "--digits wants a whole number from 1 to 17, not '%s'",
		    arg);
	o->digits = (int)n;
	return ATTN_OK;
}

static enum attn_status
parse_scale(struct options *o, const char *arg, struct attn_error *err)
{
	double x;

	if (attn_parse_number(arg, strlen(arg), &x) != 0 || !isfinite(x))
		return usage_error(err,
		    "--scale wants a finite number, not '%s'", arg);
	o->cfg.scale_mode = ATTN_SCALE_VALUE;
	o->cfg.scale = x;
	return ATTN_OK;
}

/* One of names[] (n of them), as its index; -1 when arg is none. */
static int
pick(const char *arg, const char *const *names, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(arg, names[i]) == 0)
			return (int)i;
	return -1;
}

/* A whole number from lo to hi (the text is all of arg). */
static int
parse_count(const char *arg, long lo, long hi, size_t *out)
{
	char *end;
	long n;

	if (arg[0] < '0' || arg[0] > '9')
		return -1;	/* strtol would take spaces and signs */
	errno = 0;
	n = strtol(arg, &end, 10);
	if (*end != '\0' || errno != 0 || n < lo || n > hi)
		return -1;
	*out = (size_t)n;
	return 0;
}

/* --window L,R: how far a query sees to the left and to the right. */
static enum attn_status
parse_window(struct options *o, const char *arg, struct attn_error *err)
{
	const char *comma = strchr(arg, ',');
	char left[32];
	size_t llen;

	llen = comma == NULL ? 0 : (size_t)(comma - arg);
	if (comma == NULL || llen >= sizeof left)
		return usage_error(err, "--window wants L,R (two whole "
		    "numbers, keys to the left and right), not '%s'", arg);
	memcpy(left, arg, llen);
	left[llen] = '\0';
	if (parse_count(left, 0, LONG_MAX, &o->cfg.window_left) != 0 ||
	    parse_count(comma + 1, 0, LONG_MAX, &o->cfg.window_right) != 0)
		return usage_error(err, "--window wants L,R (two whole "
		    "numbers, keys to the left and right), not '%s'", arg);
	o->cfg.window = 1;
	return ATTN_OK;
}

/* The conventions of other systems: which alignment a causal mask or
 * window uses when T != S, and what a row that may attend no key gets.
 * The man page says which version of each this follows. */
static const struct {
	const char *name;
	enum attn_align align;
	enum attn_masked_rows masked_rows;
} presets[] = {
	{ "torch", ATTN_ALIGN_TOP_LEFT, ATTN_MASKED_ZERO },
	{ "flash", ATTN_ALIGN_BOTTOM_RIGHT, ATTN_MASKED_ZERO },
	{ "jax", ATTN_ALIGN_TOP_LEFT, ATTN_MASKED_UNIFORM },
};

static const char *const align_names[] = { "top-left", "bottom-right" };
static const char *const masked_rows_names[] = { "zero", "nan", "uniform" };

/* Rules between options, checked once every option is known. */
static enum attn_status
check_rules(struct options *o, int stage_given, int scale_given,
    int no_scale_given, struct attn_error *err)
{
	size_t i, nstdin = 0;

	if (o->cfg.mask_invert && o->mask == NULL && o->noperands != 1)
		return usage_error(err, "%s", "--mask-invert needs a mask "
		    "(--mask FILE or a bundle's \"mask\")");
	if (o->cfg.kv_heads != 0 && o->cfg.heads % o->cfg.kv_heads != 0)
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "--heads %zu is not a multiple of --kv-heads %zu",
		    o->cfg.heads, o->cfg.kv_heads);

	if (scale_given && no_scale_given)
		return usage_error(err, "%s",
		    "--scale and --no-scale contradict each other");
	if (o->explain && stage_given)
		return usage_error(err, "%s",
		    "--explain prints every stage; leave out --stage");
	if (o->explain && !(print_formats[o->format].flags & PRINT_EXPLAIN))
		return usage_error(err, "%s",
		    "--explain prints tables; leave out --format");
	if (o->header && !(print_formats[o->format].flags & PRINT_HEADER))
		return usage_error(err, "%s",
		    "--header goes with --format csv or tsv");
	if (o->self != NULL && o->noperands != 0)
		return usage_error(err, "%s",
		    "--self X takes no other operands");
	for (i = 0; i < o->noperands; i++)
		nstdin += strcmp(o->operands[i], "-") == 0;
	nstdin += o->self != NULL && strcmp(o->self, "-") == 0;
	nstdin += o->mask != NULL && strcmp(o->mask, "-") == 0;
	nstdin += o->bias != NULL && strcmp(o->bias, "-") == 0;
	if (nstdin > 1)
		return usage_error(err, "%s",
		    "standard input ('-') can be read only once");
	if (o->self == NULL && o->noperands != 1 && o->noperands != 3)
		return usage_error(err, "%s", o->noperands == 0 ?
		    "no input: give Q K V, a BUNDLE, or --self X" :
		    "give three operands (Q K V) or one (a BUNDLE)");
	if (o->digits < 0)
		o->digits = print_formats[o->format].digits;
	return ATTN_OK;
}

enum attn_status
options_parse(int argc, char **argv, struct options *o,
    struct attn_error *err)
{
	int stage_given = 0, scale_given = 0, no_scale_given = 0;
	int align = -1, masked_rows = -1, like = -1;
	enum attn_status st = ATTN_OK;
	double x;
	char optstring[] = ":es:f:d:o:m:hV";
	int c;

	options_init(o);
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, optstring, long_options,
	    NULL)) != -1) {
		switch (c) {
		case 'e':
			o->explain = 1;
			break;
		case 's':
			stage_given = 1;
			st = parse_stages(o, optarg, err);
			break;
		case 'f':
			st = parse_format(o, optarg, err);
			break;
		case OPT_HEADER:
			o->header = 1;
			break;
		case 'd':
			st = parse_digits(o, optarg, err);
			break;
		case OPT_SCALE:
			scale_given = 1;
			st = parse_scale(o, optarg, err);
			break;
		case OPT_NO_SCALE:
			no_scale_given = 1;
			o->cfg.scale_mode = ATTN_SCALE_NONE;
			break;
		case OPT_SELF:
			o->self = optarg;
			break;
		case OPT_QUERY_LABELS:
			o->query_labels = optarg;
			break;
		case OPT_KEY_LABELS:
			o->key_labels = optarg;
			break;
		case OPT_CAUSAL:
			o->cfg.causal = 1;
			break;
		case OPT_ALIGN:
			if ((align = pick(optarg, align_names, 2)) < 0)
				return usage_error(err, "--align wants "
				    "top-left or bottom-right, not '%s'",
				    optarg);
			break;
		case 'm':
			o->mask = optarg;
			break;
		case OPT_MASK_INVERT:
			o->cfg.mask_invert = 1;
			break;
		case OPT_BIAS:
			o->bias = optarg;
			break;
		case OPT_WINDOW:
			st = parse_window(o, optarg, err);
			break;
		case OPT_ALIBI:
			o->cfg.alibi = 1;
			break;
		case OPT_SOFTCAP:
			if (attn_parse_number(optarg, strlen(optarg), &x) != 0 ||
			    !isfinite(x) || x <= 0.0)
				return usage_error(err, "--softcap wants a "
				    "finite number above 0, not '%s'", optarg);
			o->cfg.softcap = x;
			break;
		case OPT_MASKED_ROWS:
			if ((masked_rows = pick(optarg, masked_rows_names,
			    3)) < 0)
				return usage_error(err, "--masked-rows wants "
				    "zero, nan or uniform, not '%s'", optarg);
			break;
		case OPT_LIKE:
			for (like = 0; like < 3; like++)
				if (strcmp(optarg, presets[like].name) == 0)
					break;
			if (like == 3)
				return usage_error(err, "--like wants torch, "
				    "flash or jax, not '%s'", optarg);
			o->like = presets[like].name;
			break;
		case OPT_HEADS:
			if (parse_count(optarg, 1, LONG_MAX, &o->cfg.heads) != 0)
				return usage_error(err, "--heads wants a whole "
				    "number above 0, not '%s'", optarg);
			break;
		case OPT_KV_HEADS:
			if (parse_count(optarg, 1, LONG_MAX,
			    &o->cfg.kv_heads) != 0)
				return usage_error(err, "--kv-heads wants a "
				    "whole number above 0, not '%s'", optarg);
			break;
		case 'o':
			/* -o - is standard output, as for most tools. */
			o->output = strcmp(optarg, "-") == 0 ? NULL : optarg;
			break;
		case 'h':
			o->help = 1;
			return ATTN_OK;
		case 'V':
			o->version = 1;
			return ATTN_OK;
		case ':':
			return usage_error(err, "option '%s' needs a value",
			    argv[optind - 1]);
		default:
			return bad_option(argv[optind - 1], err);
		}
		if (st != ATTN_OK)
			return st;
	}
	o->operands = argv + optind;
	o->noperands = (size_t)(argc - optind);
	/* --like sets what --align and --masked-rows leave unsaid. */
	if (like >= 0) {
		o->cfg.align = presets[like].align;
		o->cfg.masked_rows = presets[like].masked_rows;
		o->like_align = align < 0;
		o->like_masked_rows = masked_rows < 0;
	}
	if (align >= 0)
		o->cfg.align = (enum attn_align)align;
	if (masked_rows >= 0)
		o->cfg.masked_rows = (enum attn_masked_rows)masked_rows;
	return check_rules(o, stage_given, scale_given, no_scale_given, err);
}
