/*
 * check_report.c - what --check found, as a table or as JSON (-f json):
 * for one array the whole comparison (errors, the worst element, the
 * correlation, the spread test, the baseline of --emulate, why it failed
 * and what the array matches instead); for several, a verdict row a
 * stage, then what failed and why, and in JSON each stage's whole
 * comparison with its largest error per (batch, head).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "attn.h"
#include "attn_io.h"
#include "check.h"
#include "check_hint.h"
#include "print.h"
#include "report.h"
#include "words.h"


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

/* "batch 1, head 2, row 3, column 4" (from 1), for element n; in a
 * packed batch "sequence 2, head 2, row 3, column 4", the row (and a
 * key's column) counted within the sequence. */
static void
place(char *buf, size_t size, const struct attn_stages *stages,
    const struct check *c, enum attn_stage s, size_t n)
{
	struct attn_where w;
	size_t seq;

	check_where(stages, c, s, n, &w, &seq);
	snprintf(buf, size, "%s %zu, head %zu, row %zu, column %zu",
	    seq != SIZE_MAX ? "sequence" : "batch", seq != SIZE_MAX ?
	    seq + 1 : w.batch + 1, w.head + 1, w.row + 1, w.col + 1);
}

/* The unit --check-by head names, "batch 1, head 2" or "sequence 1,
 * head 2", and its largest error and its baseline's as judged (at least
 * the floor). */
static void
unit_place(char *buf, size_t size, const struct check_item *it, double *err,
    double *base)
{
	const size_t u = it->unit_worst;

	snprintf(buf, size, "%s %zu, head %zu", it->by_seq ? "sequence" :
	    "batch", u / it->heads + 1, u % it->heads + 1);
	*err = (it->by_seq ? it->seq_max : it->head_max)[u];
	*base = fmax((it->by_seq ? it->base_seq_max : it->base_head_max)[u],
	    it->unit_floor);
}

/* Why it failed, the reasons joined by "; ". */
static void
reasons(char *buf, size_t size, const struct options *o,
    const struct attn_stages *stages, const struct check *c,
    const struct check_item *it)
{
	const struct attn_compare *m = &it->cmp;
	char a[ATTN_NUM_MAX], b[ATTN_NUM_MAX], at[96], hint[320];
	size_t k = 0;

	buf[0] = '\0';
	if (it->misfit) {
		check_shape_why(buf, size, hint, sizeof hint, stages, c, it);
		return;
	}
	if (m->fails & ATTN_FAIL_NONFINITE) {
		place(at, sizeof at, stages, c, it->stage, m->first_nonfinite);
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
	if ((m->fails & ATTN_FAIL_FACTOR) && k < size && it->by_unit) {
		double e, base;

		unit_place(at, sizeof at, it, &e, &base);
		snprintf(buf + k, size - k, "%sthe largest error of %s is %s "
		    "times its emulated %s baseline's, more than --factor %s "
		    "(%zu of %zu (%s, head) pairs over)", k > 0 ? "; " : "", at,
		    num(a, base > 0 ? e / base : INFINITY, 3),
		    words_emulate[o->emulate - 1], num(b, m->factor, 0),
		    it->units_failing, it->units, it->by_seq ? "sequence" :
		    "batch");
	} else if ((m->fails & ATTN_FAIL_FACTOR) && k < size)
		snprintf(buf + k, size - k, "%sthe largest error is %s times the "
		    "emulated %s baseline's, more than --factor %s",
		    k > 0 ? "; " : "", num(a, m->base_max_abs > 0 ?
		    m->max_abs / m->base_max_abs : INFINITY, 3),
		    words_emulate[o->emulate - 1], num(b, m->factor, 0));
}

/* The worst element: where, both values, FILE's own index. */
static void
print_worst_table(FILE *fp, const struct attn_stages *stages,
    const struct check *c, const struct check_item *it)
{
	char at[96], idx[96], a[ATTN_NUM_MAX], b[ATTN_NUM_MAX];
	const size_t n = it->cmp.worst;

	if (n >= it->cmp.count) {
		fputs("  worst element   none: every element is attn's\n", fp);
		return;
	}
	place(at, sizeof at, stages, c, it->stage, n);
	file_index(idx, sizeof idx, &it->file, n);
	fprintf(fp, "  worst element   %s (file[%s]): attn %s, file %s\n", at,
	    idx, num(a, it->ref[n], 0), num(b, it->file.data[n], 0));
}

/* Why a stage failed, after lead ("FAIL: ", or "  grad_k: "), and its
 * hint on a line of its own. */
static void
print_failure(FILE *fp, const struct options *o,
    const struct attn_stages *stages, const struct check *c,
    const struct check_item *it, const char *lead)
{
	char why[1024];

	reasons(why, sizeof why, o, stages, c, it);
	fputs(lead, fp);
	report_text(fp, why);	/* it may name an array of FILE */
	putc('\n', fp);
	if (it->hint[0] != '\0') {
		fputs("  hint: ", fp);	/* it may name FILE */
		report_text(fp, it->hint);
		putc('\n', fp);
	}
}

/* The arrays of a named FILE that no stage was checked against, a line
 * each, label padded to width; returns how many. */
static size_t
print_unchecked(FILE *fp, const struct options *o, const struct check *c,
    int width)
{
	char why[160];
	const char *near;
	size_t i, n = 0;

	for (i = 0; c->named && i < c->arrays.count; i++) {
		if (!check_unchecked(o, c, i, why, sizeof why, &near))
			continue;
		fprintf(fp, "  %-*s '", width, "not checked");
		report_text(fp, c->arrays.arrays[i].name);
		fprintf(fp, "': %s\n", why);
		n++;
	}
	return n;
}

/* "pass", saying how many arrays went unchecked when any did. */
static void
print_pass(FILE *fp, size_t unchecked)
{
	if (unchecked == 0)
		fputs("pass\n", fp);
	else
		fprintf(fp, "pass, %zu of the file's arrays not checked\n",
		    unchecked);
}

static void
report_table(FILE *fp, const struct options *o,
    const struct attn_stages *stages, const struct check *c,
    const struct check_item *it)
{
	const struct attn_compare *m = &it->cmp;
	char dims[96], a[ATTN_NUM_MAX], b[ATTN_NUM_MAX], e[ATTN_NUM_MAX];
	char at[96], legend[64];
	size_t unchecked;

	attn_dims_text(dims, sizeof dims, it->shape.dim, it->shape.ndim);
	check_dims_legend(legend, sizeof legend, it->stage, &it->shape);
	fprintf(fp, "check %s [%s = %s] against ",
	    attn_stage_table[it->stage].name, legend, dims);
	report_text(fp, c->name);
	if (it->array != NULL) {
		fputs(" (array ", fp);
		report_text(fp, it->array);
		putc(')', fp);
	}
	putc('\n', fp);
	if (it->misfit) {
		print_unchecked(fp, o, c, 16);
		print_failure(fp, o, stages, c, it, "FAIL: ");
		return;
	}
	fprintf(fp, "  elements        %zu\n", m->count);
	fprintf(fp, "  max abs error   %s\n", num(a, m->max_abs, 3));
	fprintf(fp, "  max rel error   %s\n", num(a, m->max_rel, 3));
	print_worst_table(fp, stages, c, it);
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
		/* the order of the scale where it is not the default */
		fprintf(fp, "  baseline        emulated %s%s: max abs error %s",
		    words_emulate[o->emulate - 1], o->cfg.emulate_order ==
		    ATTN_EMULATE_ORDER_K ? ", k scaled first (attention_ref's "
		    "reorder_ops=True)" : "", num(a, it->base.max_abs, 3));
		if (it->base.worst < it->base.count) {
			place(at, sizeof at, stages, c, it->stage, it->base.worst);
			fprintf(fp, " at %s", at);
		}
		if (it->base.nonfinite > 0)
			fprintf(fp, "; %zu nan or inf where attn has a number "
			    "(the format overflows)", it->base.nonfinite);
		fprintf(fp, "\n  factor          max abs error %s %s %s * %s "
		    "+ atol = %s%s\n", num(a, m->max_abs, 3),
		    m->max_abs <= m->factor_bound ? "<=" : ">",
		    num(b, m->factor, 0), num(e, it->base.max_abs, 3),
		    num(at, m->factor_bound, 3), it->by_unit ?
		    " (the whole stage's; the verdict is by head)" : "");
	}
	if (it->by_unit) {
		char x[ATTN_NUM_MAX], y[ATTN_NUM_MAX];
		double err, base;

		unit_place(at, sizeof at, it, &err, &base);
		fprintf(fp, "  by head         %s: max abs error %s %s %s * %s "
		    "+ atol = %s (its baseline's, at least the median %s); "
		    "%zu of %zu (%s, head) pairs over\n", at, num(a, err, 3),
		    err <= it->unit_bound ? "<=" : ">", num(b, m->factor, 0),
		    num(e, base, 3), num(x, it->unit_bound, 3),
		    num(y, it->unit_floor, 3), it->units_failing, it->units,
		    it->by_seq ? "sequence" : "batch");
	}
	unchecked = print_unchecked(fp, o, c, 16);
	if (check_item_passed(it))
		print_pass(fp, unchecked);
	else
		print_failure(fp, o, stages, c, it, "FAIL: ");
}

/* [[e, ..], ..]: the largest error of each head (inner) of each batch
 * or sequence (outer, n of them) in max; "inf" where nan or inf is on
 * one side only. */
static void
json_head_errors(FILE *fp, const struct check_item *it, const double *max,
    size_t n)
{
	size_t b, h;

	putc('[', fp);
	for (b = 0; b < n; b++) {
		fputs(b > 0 ? ", [" : "[", fp);
		for (h = 0; h < it->heads; h++) {
			if (h > 0)
				fputs(", ", fp);
			print_json_double(fp, max[b * it->heads + h]);
		}
		putc(']', fp);
	}
	putc(']', fp);
}

/* --check-by head's fields of "baseline": the baseline's own errors by
 * head (and sequence), the floor, how many pairs fail, and the pair
 * named (worst_head: its batch or sequence and head from 1, its error,
 * its baseline's as judged, and its bound). */
static void
json_units(FILE *fp, const struct check *c, const struct check_item *it)
{
	double err, base;
	char at[64];

	fputs(", \"max_abs_error_by_head\": ", fp);
	json_head_errors(fp, it, it->base_head_max, it->batches);
	if (it->base_seq_max != NULL) {
		fputs(", \"max_abs_error_by_sequence\": ", fp);
		json_head_errors(fp, it, it->base_seq_max, c->seqs);
	}
	fputs(", \"floor\": ", fp);
	print_json_double(fp, it->unit_floor);
	fprintf(fp, ", \"failing_heads\": %zu, \"worst_head\": {\"%s\": %zu, "
	    "\"head\": %zu, \"max_abs_error\": ", it->units_failing,
	    it->by_seq ? "sequence" : "batch", it->unit_worst / it->heads + 1,
	    it->unit_worst % it->heads + 1);
	unit_place(at, sizeof at, it, &err, &base);
	print_json_double(fp, err);
	fputs(", \"baseline\": ", fp);
	print_json_double(fp, base);
	fputs(", \"bound\": ", fp);
	print_json_double(fp, it->unit_bound);
	putc('}', fp);
}

/* "worst": the place of element n, both values and FILE's index. */
static void
json_worst(FILE *fp, const struct attn_stages *stages, const struct check *c,
    const struct check_item *it, const struct attn_compare *m,
    const double *other, const char *key)
{
	struct attn_where w, in;
	char idx[96];
	size_t seq;

	if (m->worst >= m->count) {
		fputs("null", fp);
		return;
	}
	attn_stage_where(stages, it->stage, m->worst, &w);
	check_where(stages, c, it->stage, m->worst, &in, &seq);
	file_index(idx, sizeof idx, &it->file, m->worst);
	fprintf(fp, "{\"batch\": %zu, \"head\": %zu, \"row\": %zu, "
	    "\"column\": %zu, ", w.batch + 1, w.head + 1, w.row + 1,
	    w.col + 1);
	if (seq != SIZE_MAX)
		fprintf(fp, "\"sequence\": %zu, \"sequence_row\": %zu, "
		    "\"sequence_column\": %zu, ", seq + 1, in.row + 1,
		    in.col + 1);
	fprintf(fp, "\"index\": [%s], \"attn\": ", idx);
	print_json_double(fp, it->ref[m->worst]);
	fprintf(fp, ", \"%s\": ", key);
	print_json_double(fp, other[m->worst]);
	putc('}', fp);
}

/* The end of a stage's object: why, hint and pass. */
static void
json_verdict(FILE *fp, const struct options *o,
    const struct attn_stages *stages, const struct check *c,
    const struct check_item *it)
{
	char why[1024];

	fputs(",\n  \"why\": ", fp);
	if (check_item_passed(it)) {
		fputs("null", fp);
	} else {
		reasons(why, sizeof why, o, stages, c, it);
		print_json_string(fp, why);
	}
	fputs(",\n  \"hint\": ", fp);
	if (it->hint[0] != '\0')
		print_json_string(fp, it->hint);
	else
		fputs("null", fp);
	fprintf(fp, ",\n  \"pass\": %s\n}", check_item_passed(it) ? "true" :
	    "false");
}

/* "not_checked": the arrays of FILE no stage was checked against, each
 * its name, why and the stage or alias its name is near (or null). */
static void
json_unchecked(FILE *fp, const struct options *o, const struct check *c)
{
	char why[160];
	const char *near;
	size_t i, n = 0;

	fputs("\"not_checked\": [", fp);
	for (i = 0; i < c->arrays.count; i++) {
		if (!check_unchecked(o, c, i, why, sizeof why, &near))
			continue;
		fputs(n++ > 0 ? ", {\"array\": " : "{\"array\": ", fp);
		print_json_string(fp, c->arrays.arrays[i].name);
		fputs(", \"why\": ", fp);
		print_json_string(fp, why);
		fputs(", \"near\": ", fp);
		if (near != NULL)
			print_json_string(fp, near);
		else
			fputs("null", fp);
		putc('}', fp);
	}
	putc(']', fp);
}

static void
report_json(FILE *fp, const struct options *o, const struct attn_stages *stages,
    const struct check *c, const struct check_item *it)
{
	static const char *const fail_names[] = { "elements", "nonfinite",
	    "spread", "factor" };
	const struct attn_compare *m = &it->cmp;
	size_t d, k, n = 0;

	fputs("{\n  \"stage\": ", fp);
	print_json_string(fp, attn_stage_table[it->stage].name);
	fputs(",\n  \"file\": ", fp);
	print_json_string(fp, c->name);
	fputs(",\n  \"array\": ", fp);
	if (it->array != NULL)
		print_json_string(fp, it->array);
	else
		fputs("null", fp);
	fputs(",\n  \"shape\": [", fp);
	for (d = 0; d < it->shape.ndim; d++)
		fprintf(fp, "%s%zu", d > 0 ? ", " : "", it->shape.dim[d]);
	fputs("],\n  \"file_shape\": [", fp);
	for (d = 0; d < it->file.ndim; d++)
		fprintf(fp, "%s%zu", d > 0 ? ", " : "", it->file.shape[d]);
	fprintf(fp, "],\n  \"elements\": %zu,\n  \"rtol\": ",
	    attn_shape_count(&it->shape));
	print_json_double(fp, o->rtol);
	fputs(",\n  \"atol\": ", fp);
	print_json_double(fp, o->atol);
	if (it->misfit) {
		/* nothing compared: every measure null */
		fputs(",\n  \"max_abs_error\": null,\n  \"max_rel_error\": "
		    "null,\n  \"rms_error\": null,\n  \"worst\": null,\n  "
		    "\"max_abs_error_by_head\": null,\n  \"correlation\": "
		    "null,\n  \"failing\": null,\n  \"nonfinite\": null,\n  "
		    "\"spread_bound\": null,\n  \"baseline\": null,\n  "
		    "\"fails\": [\"shape\"]", fp);
		json_verdict(fp, o, stages, c, it);
		return;
	}
	fputs(",\n  \"max_abs_error\": ", fp);
	print_json_double(fp, m->max_abs);
	fputs(",\n  \"max_rel_error\": ", fp);
	print_json_double(fp, m->max_rel);
	fputs(",\n  \"rms_error\": ", fp);
	print_json_double(fp, m->rms_abs);
	fputs(",\n  \"worst\": ", fp);
	json_worst(fp, stages, c, it, m, it->file.data, "file");
	fputs(",\n  \"max_abs_error_by_head\": ", fp);
	json_head_errors(fp, it, it->head_max, it->batches);
	if (it->seq_max != NULL) {
		fputs(",\n  \"max_abs_error_by_sequence\": ", fp);
		json_head_errors(fp, it, it->seq_max, c->seqs);
	}
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
		/* the operand scaled first; none in fp8, which scales the
		 * logits */
		fputs(", \"order\": ", fp);
		if (o->emulate == ATTN_PREC_FP8_E4M3 ||
		    o->emulate == ATTN_PREC_FP8_E5M2)
			fputs("null", fp);
		else
			print_json_string(fp,
			    words_emulate_order[o->cfg.emulate_order]);
		fputs(", \"max_abs_error\": ", fp);
		print_json_double(fp, it->base.max_abs);
		fputs(", \"worst\": ", fp);
		json_worst(fp, stages, c, it, &it->base, it->emu, "baseline");
		fprintf(fp, ", \"nonfinite\": %zu, \"factor\": ",
		    it->base.nonfinite);
		print_json_double(fp, m->factor);
		fputs(", \"bound\": ", fp);
		print_json_double(fp, m->factor_bound);
		fputs(", \"by\": ", fp);
		print_json_string(fp, words_check_by[o->check_by]);
		if (it->by_unit)
			json_units(fp, c, it);
		putc('}', fp);
	}
	fputs(",\n  \"fails\": [", fp);
	for (k = 0; k < 4; k++)
		if (m->fails & (1u << k))
			fprintf(fp, "%s\"%s\"", n++ > 0 ? ", " : "",
			    fail_names[k]);
	putc(']', fp);
	json_verdict(fp, o, stages, c, it);
}

/* One verdict row a stage: its array, shape, errors, failing count and
 * worst element, pass or FAIL; then each failure's reasons and hint. */
static void
report_rows(FILE *fp, const struct options *o,
    const struct attn_stages *stages, const struct check *c)
{
	char a[ATTN_NUM_MAX], b[ATTN_NUM_MAX], dims[96], at[96];
	char p[48], count[112];
	size_t k, fails = 0, unchecked;

	fprintf(fp, "check %zu stages against ", c->n);
	report_text(fp, c->name);
	fprintf(fp, " (rtol %s, atol %s%s%s)\n", num(a, o->rtol, 3),
	    num(b, o->atol, 3), o->emulate != ATTN_PREC_FP64 ?
	    ", against the emulated baseline of " : "",
	    o->emulate != ATTN_PREC_FP64 ? words_emulate[o->emulate - 1] :
	    "");
	fprintf(fp, "  %-12s %-12s %-14s %-10s %-10s %-16s %-36s %s\n",
	    "stage", "array", "shape", "max abs", "max rel", "failing",
	    c->seqs > 0 ? "worst (sequence, head, row, column)" :
	    "worst (batch, head, row, column)", "verdict");
	for (k = 0; k < c->n; k++) {
		const struct check_item *it = &c->item[k];
		const struct attn_compare *m = &it->cmp;
		struct attn_where w;
		size_t seq;

		attn_text_preview(p, 12, it->array, strlen(it->array));
		attn_dims_text(dims, sizeof dims, it->shape.dim,
		    it->shape.ndim);
		snprintf(count, sizeof count, "%zu of %zu", m->failing,
		    m->count);
		if (it->misfit) {
			/* nothing compared: the array's shape instead */
			strcpy(a, "-");
			strcpy(b, "-");
			strcpy(count, "shape ");
			attn_dims_text(count + 6, sizeof count - 6,
			    it->file.shape, it->file.ndim);
			strcpy(at, "-");
		} else if (m->worst < m->count) {
			check_where(stages, c, it->stage, m->worst, &w, &seq);
			snprintf(at, sizeof at, "%zu, %zu, %zu, %zu",
			    seq != SIZE_MAX ? seq + 1 : w.batch + 1,
			    w.head + 1, w.row + 1, w.col + 1);
		} else {
			snprintf(at, sizeof at, "none");
		}
		if (!it->misfit) {
			num(a, m->max_abs, 3);
			num(b, m->max_rel, 3);
		}
		fprintf(fp, "  %-12s %-12s %-14s %-10s %-10s %-16s %-36s %s\n",
		    attn_stage_table[it->stage].name, p, dims, a, b, count, at,
		    check_item_passed(it) ? "pass" : "FAIL");
		fails += !check_item_passed(it);
	}
	unchecked = print_unchecked(fp, o, c, 11);
	if (fails == 0) {
		print_pass(fp, unchecked);
		return;
	}
	fprintf(fp, "FAIL: %zu of %zu stages\n", fails, c->n);
	for (k = 0; k < c->n; k++) {
		const struct check_item *it = &c->item[k];

		if (check_item_passed(it))
			continue;
		snprintf(p, sizeof p, "  %s: ",
		    attn_stage_table[it->stage].name);
		print_failure(fp, o, stages, c, it, p);
	}
}

void
check_print(FILE *fp, const struct options *o, const struct attn_stages *stages,
    const struct check *c)
{
	size_t k;

	if (o->format == OUT_JSON && !c->named) {
		report_json(fp, o, stages, c, &c->item[0]);
		putc('\n', fp);
	} else if (o->format == OUT_JSON) {
		fputs("{\"file\": ", fp);
		print_json_string(fp, c->name);
		fputs(", \"stages\": [\n", fp);
		for (k = 0; k < c->n; k++) {
			report_json(fp, o, stages, c, &c->item[k]);
			fputs(k + 1 < c->n ? ",\n" : "\n", fp);
		}
		fputs("], ", fp);
		json_unchecked(fp, o, c);
		fprintf(fp, ", \"pass\": %s}\n", check_passed(c) ? "true" :
		    "false");
	} else if (c->n == 1) {
		report_table(fp, o, stages, c, &c->item[0]);
	} else {
		report_rows(fp, o, stages, c);
	}
}
