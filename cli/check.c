/*
 * check.c - --check FILE: a kernel's result against a stage of attn's,
 * reported so that a failure says where and why.
 *
 * FILE is read like any input (any format; 4-D in the layout of the
 * stage's shape) and must have the stage's shape, dims of 1 aside, or be
 * its blocks one under another as attn's own csv writes them.  The
 * numbers are libattn's: attn_stage_flatten lines the stage up with
 * FILE in C order, attn_compare measures, attn_emulate and
 * attn_compare_baseline give the --emulate verdict.  This file only
 * reads FILE and writes the report.
 *
 * When the comparison fails, the report tries what a kernel most often
 * gets wrong about its output's shape: FILE is compared with the stage
 * in the other 4-D layout, and with each block transposed, and a match
 * is named.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "attn_io.h"
#include "check.h"
#include "print.h"
#include "report.h"
#include "slurp.h"
#include "words.h"

/* ---------------------------------------------------------------- reading */

enum attn_status
check_load(const struct options *o, struct check *c, struct attn_error *err)
{
	enum attn_status status;
	struct slurp f;

	memset(c, 0, sizeof *c);
	c->name = strcmp(o->check, "-") == 0 ? STDIN_NAME : o->check;
	if ((status = slurp_file(o->check, &f, err)) != ATTN_OK)
		return status;
	if (attn_is_bundle(f.buf, f.len))
		status = attn_error_set(err, ATTN_ERR_DATA, c->name, 0, 0,
		    "a JSON BUNDLE object is no --check FILE: give the stage's "
		    "array alone");
	else
		status = attn_read_array(c->name, f.buf, f.len, ATTN_FMT_AUTO,
		    0, &c->file, err);
	slurp_release(&f);
	return status;
}

/* ---------------------------------------------------------------- shapes */

/* The dims of a shape without those of 1. */
static size_t
squeeze(const size_t *dim, size_t ndim, size_t *out)
{
	size_t d, n = 0;

	for (d = 0; d < ndim; d++)
		if (dim[d] != 1)
			out[n++] = dim[d];
	return n;
}

/* "B x H x T x d_v": the dims of stage s in symbols, each from its axis
 * (the KV heads of grad_k and grad_v are G; several heads' columns side
 * by side are H*d_v or G*d_k). */
static void
dims_legend(char *buf, size_t size, enum attn_stage s,
    const struct attn_shape *sh)
{
	const char *heads = attn_stage_table[s].kv ? "G" : "H";
	size_t d, n = 0;
	const char *sym;
	int wide;

	buf[0] = '\0';
	for (d = 0; d < sh->ndim && n < size; d++) {
		switch (sh->axis[d]) {
		case ATTN_AXIS_BATCH:
			sym = "B";
			break;
		case ATTN_AXIS_HEAD:
			sym = heads;
			break;
		case ATTN_AXIS_QUERY:
			sym = "T";
			break;
		case ATTN_AXIS_KEY:
			sym = "S";
			break;
		case ATTN_AXIS_VALUE:
			sym = "d_v";
			break;
		case ATTN_AXIS_DK:
			sym = "d_k";
			break;
		case ATTN_AXIS_MODEL:
			sym = "d_out";
			break;
		case ATTN_AXIS_ONE:
		default:
			sym = "1";
			break;
		}
		wide = d + 1 == sh->ndim && sh->col_heads > 1;
		n += (size_t)snprintf(buf + n, size - n, "%s%s%s%s",
		    d > 0 ? " x " : "", wide ? heads : "", wide ? "*" : "",
		    sym);
	}
}

/* Whether FILE can stand for the stage: the same numbers in the same
 * order, its dims those of the stage but for dims of 1, or the stage's
 * blocks one under another (rows x the stage's last dim). */
static int
shape_fits(const struct attn_array *f, const struct attn_shape *sh)
{
	size_t a[ATTN_MAX_DIMS], b[ATTN_MAX_DIMS], na, nb, d, n = 1;

	for (d = 0; d < f->ndim; d++)
		n *= f->shape[d];
	if (n != attn_shape_count(sh))
		return 0;
	na = squeeze(f->shape, f->ndim, a);
	nb = squeeze(sh->dim, sh->ndim, b);
	if (na == nb && memcmp(a, b, na * sizeof *a) == 0)
		return 1;
	return f->ndim == 2 && f->shape[1] == sh->dim[sh->ndim - 1];
}

/* The shape error, with what the dims suggest: the last two swapped (a
 * transpose), or the two middle ones of 4-D (the other layout). */
static enum attn_status
shape_error(const struct options *o, const struct attn_stages *stages,
    const struct check *c, struct attn_error *err)
{
	const struct attn_shape *sh = &c->shape;
	const size_t nd = sh->ndim;
	char want[96], got[96], legend[64], hint[200];
	size_t swap[ATTN_MAX_DIMS];

	attn_dims_text(want, sizeof want, sh->dim, nd);
	dims_legend(legend, sizeof legend, c->stage, sh);
	attn_dims_text(got, sizeof got, c->file.shape, c->file.ndim);
	snprintf(hint, sizeof hint, ": it needs the stage's shape (dims of 1 "
	    "aside) or its blocks one under another (%zux%zu)",
	    attn_shape_count(sh) / sh->dim[nd - 1], sh->dim[nd - 1]);
	memcpy(swap, sh->dim, sizeof swap);
	if (c->file.ndim == nd) {
		swap[nd - 2] = sh->dim[nd - 1];
		swap[nd - 1] = sh->dim[nd - 2];
		if (memcmp(swap, c->file.shape, nd * sizeof *swap) == 0)
			snprintf(hint, sizeof hint, ": it looks transposed, "
			    "its last two dims swapped");
		memcpy(swap, sh->dim, sizeof swap);
		swap[1] = sh->dim[2];
		swap[2] = sh->dim[1];
		if (nd == 4 && memcmp(swap, c->file.shape, nd * sizeof *swap)
		    == 0)
			snprintf(hint, sizeof hint, ": its dims 2 and 3 are "
			    "swapped; is it laid out as --layout %s?",
			    words_layout[stages->layout == ATTN_LAYOUT_BSHD ?
			    ATTN_LAYOUT_BHSD - 1 : ATTN_LAYOUT_BSHD - 1]);
	}
	/* 4-D where attn has heads side by side: a layout was meant. */
	if (stages->layout == ATTN_LAYOUT_NONE && c->file.ndim == 4 &&
	    sh->col_heads > 1 && c->file.shape[0] == stages->batches &&
	    c->file.shape[3] == sh->cols / sh->col_heads &&
	    ((c->file.shape[1] == sh->col_heads &&
	    c->file.shape[2] == sh->rows) || (c->file.shape[1] == sh->rows &&
	    c->file.shape[2] == sh->col_heads)))
		snprintf(hint, sizeof hint, ": it is 4-D; give --layout %s "
		    "to have attn's in that shape", words_layout[c->file.shape[1] ==
		    sh->col_heads ? ATTN_LAYOUT_BHSD - 1 : ATTN_LAYOUT_BSHD - 1]);
	(void)o;
	return attn_error_set(err, ATTN_ERR_DATA, c->name, 0, 0, "shape "
	    "mismatch: %s is %s but attn's %s is %s (%s)%s", c->name, got,
	    attn_stage_table[c->stage].name, want, legend, hint);
}

/* ---------------------------------------------------------------- hints */

/* Whether FILE passes against ref, with the tolerances of the check. */
static int
passes(const struct options *o, const struct check *c, const double *ref,
    size_t n)
{
	struct attn_compare alt;

	attn_compare(c->file.data, ref, n, o->rtol, o->atol, &alt);
	return alt.nonfinite == 0 && (o->emulate != ATTN_PREC_FP64 ?
	    alt.max_abs <= c->cmp.factor_bound : alt.fails == 0);
}

/*
 * After a failure: does FILE match the stage in the other layout, or
 * with each block transposed?  Those are mistakes in the kernel's
 * output shape, not in its numbers; say so.
 */
static void
find_hint(const struct options *o, const struct attn_stages *stages,
    struct check *c, double *alt)
{
	const struct attn_shape *sh = &c->shape;
	const size_t n = attn_shape_count(sh), R = sh->dim[sh->ndim - 2],
	    C = sh->dim[sh->ndim - 1];
	struct attn_stages other;
	size_t b, i, j;

	if (stages->layout != ATTN_LAYOUT_NONE &&
	    !attn_stage_table[c->stage].per_head) {
		other = *stages;
		other.layout = stages->layout == ATTN_LAYOUT_BHSD ?
		    ATTN_LAYOUT_BSHD : ATTN_LAYOUT_BHSD;
		attn_stage_flatten(&other, c->stage, alt);
		if (passes(o, c, alt, n)) {
			snprintf(c->hint, sizeof c->hint, "%s matches attn's "
			    "%s laid out as --layout %s: does the kernel "
			    "write that layout?", c->name,
			    attn_stage_table[c->stage].name,
			    words_layout[other.layout - 1]);
			return;
		}
	}
	if (R == C && R > 1) {
		for (b = 0; b < n / (R * C); b++)
			for (i = 0; i < R; i++)
				for (j = 0; j < C; j++)
					alt[(b * R + i) * C + j] =
					    c->ref[(b * R + j) * C + i];
		if (passes(o, c, alt, n))
			snprintf(c->hint, sizeof c->hint, "%s matches attn's "
			    "%s with rows and columns swapped in every "
			    "%zux%zu block: is it transposed?", c->name,
			    attn_stage_table[c->stage].name, R, C);
	}
}

/* ---------------------------------------------------------------- run */

/* The check as a phase of the progress line (progress.c), so that the
 * line never stays at 100% of attn's run while the check goes on: begun
 * (done 0) and ended (done 1); an emulated baseline reports its own
 * phase in between. */
static void
check_progress(const struct options *o, size_t done)
{
	if (o->cfg.progress != NULL)
		o->cfg.progress(o->cfg.progress_arg,
		    "the comparison with the --check file", done, 1);
}

enum attn_status
check_run(const struct options *o, const struct attn_inputs *in,
    const struct attn_stages *stages, struct check *c, struct attn_error *err)
{
	struct attn_stages emu;
	enum attn_status status;
	double *alt;
	size_t n;

	c->stage = o->stages[0];
	attn_stage_shape(stages, c->stage, &c->shape);
	if (!shape_fits(&c->file, &c->shape))
		return shape_error(o, stages, c, err);
	n = attn_shape_count(&c->shape);
	check_progress(o, 0);
	if ((c->ref = attn_alloc_array(n, sizeof *c->ref)) == NULL)
		return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "out of memory comparing %zu numbers", n);
	attn_stage_flatten(stages, c->stage, c->ref);
	attn_compare(c->file.data, c->ref, n, o->rtol, o->atol, &c->cmp);
	if (o->emulate != ATTN_PREC_FP64) {
		if ((status = attn_emulate(&o->cfg, in,
		    ATTN_STAGE_BIT(c->stage), o->emulate, &emu, err)) !=
		    ATTN_OK)
			return status;
		if ((c->emu = attn_alloc_array(n, sizeof *c->emu)) == NULL) {
			attn_stages_free(&emu);
			return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
			    "out of memory comparing %zu numbers", n);
		}
		attn_stage_flatten(&emu, c->stage, c->emu);
		attn_stages_free(&emu);
		attn_compare(c->emu, c->ref, n, o->rtol, o->atol, &c->base);
		attn_compare_baseline(&c->cmp, &c->base, o->factor);
	}
	if (c->cmp.fails != 0 && (alt = attn_alloc_array(n, sizeof *alt)) !=
	    NULL) {
		find_hint(o, stages, c, alt);
		free(alt);
	}
	check_progress(o, 1);
	return ATTN_OK;
}

int
check_passed(const struct check *c)
{
	return c->cmp.fails == 0;
}

void
check_free(struct check *c)
{
	attn_array_free(&c->file);
	free(c->ref);
	free(c->emu);
	memset(c, 0, sizeof *c);
}

/* ---------------------------------------------------------------- report */

/* A number for the report: errors to 3 digits, values in full. */
static const char *
num(char *buf, double x, int digits)
{
	attn_format_number(buf, x, digits, 0);
	return buf;
}

/* "1, 2, 3": element n of FILE by its own NumPy index (from 0), as
 * FILE[1, 2, 3] in the table and [1, 2, 3] in JSON. */
static void
file_index(char *buf, size_t size, const struct attn_array *f, size_t n)
{
	print_index(buf, size, f->shape, f->ndim, n);
}

/* "batch 1, head 2, row 3, column 4" (from 1), for element n. */
static void
place(char *buf, size_t size, const struct attn_stages *stages,
    enum attn_stage s, size_t n)
{
	struct attn_where w;

	attn_stage_where(stages, s, n, &w);
	snprintf(buf, size, "batch %zu, head %zu, row %zu, column %zu",
	    w.batch + 1, w.head + 1, w.row + 1, w.col + 1);
}

/* Why it failed, the reasons joined by "; ". */
static void
reasons(char *buf, size_t size, const struct options *o,
    const struct attn_stages *stages, const struct check *c)
{
	const struct attn_compare *m = &c->cmp;
	char a[ATTN_NUM_MAX], b[ATTN_NUM_MAX], at[96];
	size_t k = 0;

	buf[0] = '\0';
	if (m->fails & ATTN_FAIL_NONFINITE) {
		place(at, sizeof at, stages, c->stage, m->first_nonfinite);
		k += (size_t)snprintf(buf + k, size - k, "%zu element%s nan "
		    "or inf on one side only, the first at %s", m->nonfinite,
		    m->nonfinite == 1 ? " is" : "s are", at);
	}
	if ((m->fails & ATTN_FAIL_ELEMENTS) && k < size)
		k += (size_t)snprintf(buf + k, size - k, "%s%zu of %zu "
		    "elements fail%s |a - b| <= atol + rtol*|attn|",
		    k > 0 ? "; " : "", m->failing - m->nonfinite, m->count,
		    m->failing - m->nonfinite == 1 ? "s" : "");
	if ((m->fails & ATTN_FAIL_SPREAD) && k < size)
		k += (size_t)snprintf(buf + k, size - k, "%sthe tolerances "
		    "would pass a constant here, and the RMS error is %s of a "
		    "standard deviation of attn's values (more than %s): the "
		    "result does not follow how they vary, as a constant, "
		    "shuffled or transposed one would not", k > 0 ? "; " : "",
		    num(a, m->ref_std > 0 ? m->rms_abs / m->ref_std : INFINITY,
		    3), num(b, ATTN_SPREAD_FRACTION, 0));
	if ((m->fails & ATTN_FAIL_FACTOR) && k < size)
		snprintf(buf + k, size - k, "%sthe largest error is %s times the "
		    "emulated %s baseline's, more than --factor %s",
		    k > 0 ? "; " : "", num(a, m->base_max_abs > 0 ?
		    m->max_abs / m->base_max_abs : INFINITY, 3),
		    words_emulate[o->emulate - 1], num(b, m->factor, 0));
}

/* The worst element: where, both values, FILE's own index. */
static void
print_worst_table(FILE *fp, const struct attn_stages *stages,
    const struct check *c)
{
	char at[96], idx[96], a[ATTN_NUM_MAX], b[ATTN_NUM_MAX];
	const size_t n = c->cmp.worst;

	if (n >= c->cmp.count) {
		fputs("  worst element   none: every element is attn's\n", fp);
		return;
	}
	place(at, sizeof at, stages, c->stage, n);
	file_index(idx, sizeof idx, &c->file, n);
	fprintf(fp, "  worst element   %s (file[%s]): attn %s, file %s\n", at,
	    idx, num(a, c->ref[n], 0), num(b, c->file.data[n], 0));
}

static void
report_table(FILE *fp, const struct options *o,
    const struct attn_stages *stages, const struct check *c)
{
	const struct attn_compare *m = &c->cmp;
	char dims[96], a[ATTN_NUM_MAX], b[ATTN_NUM_MAX], e[ATTN_NUM_MAX];
	char at[96], why[1024], legend[64];

	attn_dims_text(dims, sizeof dims, c->shape.dim, c->shape.ndim);
	dims_legend(legend, sizeof legend, c->stage, &c->shape);
	fprintf(fp, "check %s [%s = %s] against ",
	    attn_stage_table[c->stage].name, legend, dims);
	report_text(fp, c->name);
	putc('\n', fp);
	fprintf(fp, "  elements        %zu\n", m->count);
	fprintf(fp, "  max abs error   %s\n", num(a, m->max_abs, 3));
	fprintf(fp, "  max rel error   %s\n", num(a, m->max_rel, 3));
	print_worst_table(fp, stages, c);
	fprintf(fp, "  correlation     %s\n", isnan(m->corr) ?
	    "none (one side is constant)" : num(a, m->corr, 6));
	fprintf(fp, "  failing         %zu of %zu over atol + rtol*|attn| "
	    "(rtol %s, atol %s)%s\n", m->failing, m->count, num(a, m->rtol, 3),
	    num(b, m->atol, 3), m->nonfinite > 0 ? ", nan or inf on one "
	    "side counted" : "");
	if (m->spread_applies)
		fprintf(fp, "  spread          rms error %s %s atol + %g*std = "
		    "%s (attn's values from %s to %s: the tolerances would "
		    "pass their mean)\n", num(a, m->rms_abs, 3),
		    m->rms_abs <= m->spread_bound ? "<=" : ">",
		    ATTN_SPREAD_FRACTION, num(b, m->spread_bound, 3),
		    num(e, m->ref_min, 4), num(at, m->ref_max, 4));
	else
		fprintf(fp, "  spread          not needed: the tolerances tell "
		    "attn's values (from %s to %s) from their mean\n",
		    num(e, m->ref_min, 4), num(at, m->ref_max, 4));
	if (o->emulate != ATTN_PREC_FP64) {
		fprintf(fp, "  baseline        emulated %s: max abs error %s",
		    words_emulate[o->emulate - 1],
		    num(a, c->base.max_abs, 3));
		if (c->base.worst < c->base.count) {
			place(at, sizeof at, stages, c->stage, c->base.worst);
			fprintf(fp, " at %s", at);
		}
		if (c->base.nonfinite > 0)
			fprintf(fp, "; %zu nan or inf where attn has a number "
			    "(the format overflows)", c->base.nonfinite);
		fprintf(fp, "\n  factor          max abs error %s %s %s * %s "
		    "+ atol = %s\n", num(a, m->max_abs, 3),
		    m->max_abs <= m->factor_bound ? "<=" : ">",
		    num(b, m->factor, 0), num(e, c->base.max_abs, 3),
		    num(at, m->factor_bound, 3));
	}
	if (check_passed(c)) {
		fputs("pass\n", fp);
		return;
	}
	reasons(why, sizeof why, o, stages, c);
	fprintf(fp, "FAIL: %s\n", why);
	if (c->hint[0] != '\0') {
		fputs("  hint: ", fp);	/* it may name FILE */
		report_text(fp, c->hint);
		putc('\n', fp);
	}
}

/* "worst": the place of element n, both values and FILE's index. */
static void
json_worst(FILE *fp, const struct attn_stages *stages, const struct check *c,
    const struct attn_compare *m, const double *other, const char *key)
{
	struct attn_where w;
	char idx[96];

	if (m->worst >= m->count) {
		fputs("null", fp);
		return;
	}
	attn_stage_where(stages, c->stage, m->worst, &w);
	file_index(idx, sizeof idx, &c->file, m->worst);
	fprintf(fp, "{\"batch\": %zu, \"head\": %zu, \"row\": %zu, "
	    "\"column\": %zu, \"index\": [%s], \"attn\": ", w.batch + 1,
	    w.head + 1, w.row + 1, w.col + 1, idx);
	print_json_double(fp, c->ref[m->worst]);
	fprintf(fp, ", \"%s\": ", key);
	print_json_double(fp, other[m->worst]);
	putc('}', fp);
}

static void
report_json(FILE *fp, const struct options *o, const struct attn_stages *stages,
    const struct check *c)
{
	static const char *const fail_names[] = { "elements", "nonfinite",
	    "spread", "factor" };
	const struct attn_compare *m = &c->cmp;
	char why[1024];
	size_t d, k, n = 0;

	fputs("{\n  \"stage\": ", fp);
	print_json_string(fp, attn_stage_table[c->stage].name);
	fputs(",\n  \"file\": ", fp);
	print_json_string(fp, c->name);
	fputs(",\n  \"shape\": [", fp);
	for (d = 0; d < c->shape.ndim; d++)
		fprintf(fp, "%s%zu", d > 0 ? ", " : "", c->shape.dim[d]);
	fprintf(fp, "],\n  \"elements\": %zu,\n  \"rtol\": ", m->count);
	print_json_double(fp, m->rtol);
	fputs(",\n  \"atol\": ", fp);
	print_json_double(fp, m->atol);
	fputs(",\n  \"max_abs_error\": ", fp);
	print_json_double(fp, m->max_abs);
	fputs(",\n  \"max_rel_error\": ", fp);
	print_json_double(fp, m->max_rel);
	fputs(",\n  \"rms_error\": ", fp);
	print_json_double(fp, m->rms_abs);
	fputs(",\n  \"worst\": ", fp);
	json_worst(fp, stages, c, m, c->file.data, "file");
	fputs(",\n  \"correlation\": ", fp);
	print_json_double(fp, m->corr);
	fprintf(fp, ",\n  \"failing\": %zu,\n  \"nonfinite\": %zu,\n"
	    "  \"spread_bound\": ", m->failing, m->nonfinite);
	if (m->spread_applies)
		print_json_double(fp, m->spread_bound);
	else
		fputs("null", fp);
	fputs(",\n  \"baseline\": ", fp);
	if (o->emulate == ATTN_PREC_FP64) {
		fputs("null", fp);
	} else {
		fputs("{\"emulate\": ", fp);
		print_json_string(fp, words_emulate[o->emulate - 1]);
		fputs(", \"max_abs_error\": ", fp);
		print_json_double(fp, c->base.max_abs);
		fputs(", \"worst\": ", fp);
		json_worst(fp, stages, c, &c->base, c->emu, "baseline");
		fprintf(fp, ", \"nonfinite\": %zu, \"factor\": ",
		    c->base.nonfinite);
		print_json_double(fp, m->factor);
		fputs(", \"bound\": ", fp);
		print_json_double(fp, m->factor_bound);
		putc('}', fp);
	}
	fputs(",\n  \"fails\": [", fp);
	for (k = 0; k < 4; k++)
		if (m->fails & (1u << k))
			fprintf(fp, "%s\"%s\"", n++ > 0 ? ", " : "",
			    fail_names[k]);
	fputs("],\n  \"why\": ", fp);
	if (check_passed(c)) {
		fputs("null", fp);
	} else {
		reasons(why, sizeof why, o, stages, c);
		print_json_string(fp, why);
	}
	fputs(",\n  \"hint\": ", fp);
	if (c->hint[0] != '\0')
		print_json_string(fp, c->hint);
	else
		fputs("null", fp);
	fprintf(fp, ",\n  \"pass\": %s\n}\n", check_passed(c) ? "true" :
	    "false");
}

void
check_print(FILE *fp, const struct options *o, const struct attn_stages *stages,
    const struct check *c)
{
	if (o->format == OUT_JSON)
		report_json(fp, o, stages, c);
	else
		report_table(fp, o, stages, c);
}
