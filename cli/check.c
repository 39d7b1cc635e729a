/*
 * check.c - --check FILE: a kernel's results against stages of attn's,
 * lined up so that a failure says where and why.
 *
 * FILE is read like any input (any format; 4-D in the layout of the
 * stage's shape) and must have the stage's shape, dims of 1 aside, or be
 * its blocks one under another as attn's own csv writes them.  A .npz
 * or a JSON object holds several arrays, each named by the stage it
 * stands for (attn's name, or FlashAttention's: out, softmax_lse, dq, dk,
 * dv), all checked against the one computation.  The numbers are
 * libattn's: attn_stage_flatten lines a stage up with its array in C
 * order (attn_stage_c_order, where it lies so already), attn_compare
 * measures, attn_emulate and attn_compare_baseline give the --emulate
 * verdict.
 *
 * A .npz is read as far as its members' headers first: the data of a
 * member is inflated only once its shape fits its stage, after the run,
 * so that a member of the wrong shape, however large, is a failing row
 * at the cost of its header, and one not checked is never inflated.
 *
 * When a comparison fails, or a shape does not line up, check_hint.c
 * says what the array looks like instead.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "attn_io.h"
#include "check.h"
#include "check_hint.h"
#include "print.h"
#include "report.h"
#include "slurp.h"
#include "words.h"

/* FlashAttention's names of the stages its functions return. */
static const struct {
	enum attn_stage stage;
	const char *name;
} aliases[] = {
	{ ATTN_STAGE_OUTPUT, "out" }, { ATTN_STAGE_LSE, "softmax_lse" },
	{ ATTN_STAGE_GRAD_Q, "dq" }, { ATTN_STAGE_GRAD_K, "dk" },
	{ ATTN_STAGE_GRAD_V, "dv" },
};

/* ---------------------------------------------------------------- reading */

enum attn_status
check_load(const struct options *o, struct check *c, struct attn_error *err)
{
	enum attn_status status;
	struct slurp f;

	memset(c, 0, sizeof *c);
	c->name = strcmp(o->check, "-") == 0 ? STDIN_NAME : o->check;
	/* A .npz in memory (the session's), its members read where they
	 * lie, as its archive would be. */
	if ((status = slurp_archive(o->check, &c->parts, &c->nparts, err)) !=
	    ATTN_OK)
		return status;
	if (c->nparts > 0) {
		c->named = 1;
		return attn_parts_declared(c->name, c->parts, c->nparts, 0,
		    &c->arrays, err);
	}
	if ((status = slurp_file(o->check, &f, err)) != ATTN_OK)
		return status;
	c->named = attn_is_zip(f.buf, f.len) || attn_is_bundle(f.buf, f.len);
	if (c->named && attn_is_zip(f.buf, f.len)) {
		/* The members' headers alone: the data of one is inflated
		 * once its shape fits its stage (run_item), never for a
		 * member not checked. */
		status = attn_read_named_declared(c->name, f.buf, f.len, 0,
		    &c->arrays, err);
		c->bytes = f;
		return status;
	} else if (c->named) {
		status = attn_read_named(c->name, f.buf, f.len, 0, &c->arrays,
		    err);
	} else {
		c->n = 1;
		status = attn_read_array(c->name, f.buf, f.len, ATTN_FMT_AUTO,
		    0, &c->item[0].file, err);
	}
	slurp_release(&f);
	return status;
}

/* The stage an array's name stands for, or ATTN_STAGE_COUNT. */
static enum attn_stage
stage_of(const char *name)
{
	enum attn_stage s = attn_stage_lookup(name, strlen(name));
	size_t i;

	if (s != ATTN_STAGE_COUNT && !attn_stage_table[s].internal)
		return s;
	for (i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
		if (strcmp(name, aliases[i].name) == 0)
			return aliases[i].stage;
	return ATTN_STAGE_COUNT;
}

/* FlashAttention's name of stage s, or NULL. */
static const char *
alias_of(enum attn_stage s)
{
	size_t i;

	for (i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
		if (aliases[i].stage == s)
			return aliases[i].name;
	return NULL;
}

/* "out, dq, x": FILE's array names, escaped, for messages. */
static void
array_names(char *buf, size_t size, const struct attn_named *a)
{
	char p[48];
	size_t i, k = 0;

	buf[0] = '\0';
	for (i = 0; i < a->count && k < size; i++) {
		attn_text_preview(p, 40, a->arrays[i].name,
		    strlen(a->arrays[i].name));
		k += (size_t)snprintf(buf + k, size - k, "%s%s", i > 0 ? ", " :
		    "", p);
	}
}

/* Take array i of FILE for stage s. */
static void
take(struct check *c, size_t i, enum attn_stage s)
{
	struct check_item *it = &c->item[c->n++];

	it->stage = s;
	it->array = c->arrays.arrays[i].name;
	it->member = c->arrays.arrays[i].member;
	it->file = c->arrays.arrays[i].array;
	memset(&c->arrays.arrays[i].array, 0, sizeof it->file);
}

/* A gradient FILE holds when the run has no --grad, or (grad_bias,
 * grad_sinks) no bias or sinks. */
static enum attn_status
not_offered(const struct options *o, const struct check *c, const char *arr,
    enum attn_stage s, struct attn_error *err)
{
	char p[48];

	attn_text_preview(p, 40, arr, strlen(arr));
	if (o->grad != NULL)
		return attn_error_set(err, ATTN_ERR_USAGE, c->name, 0, 0,
		    "its array '%s' is attn's %s, the gradient of the %s: "
		    "give %s", p, attn_stage_table[s].name,
		    s == ATTN_STAGE_GRAD_BIAS ? "bias" : "sinks",
		    s == ATTN_STAGE_GRAD_BIAS ? "--bias FILE" :
		    "--sinks FILE");
	return attn_error_set(err, ATTN_ERR_USAGE, c->name, 0, 0, "its array "
	    "'%s' is attn's %s, a stage of the backward pass: give --grad DO "
	    "(the upstream gradient)", p, attn_stage_table[s].name);
}

/* A stage --stage names that no array of FILE holds: the arrays there
 * are, and the one whose name is near the stage's or its alias. */
static enum attn_status
no_array(const struct check *c, enum attn_stage s, const char *names,
    struct attn_error *err)
{
	const char *mine[2] = { attn_stage_table[s].name, alias_of(s) };
	const char *near = NULL;
	char p[48], hint[128] = "";
	size_t i;

	for (i = 0; i < c->arrays.count && near == NULL; i++)
		near = attn_suggest(c->arrays.arrays[i].name, mine,
		    mine[1] != NULL ? 2 : 1);
	if (near != NULL) {
		attn_text_preview(p, 40, c->arrays.arrays[i - 1].name,
		    strlen(c->arrays.arrays[i - 1].name));
		snprintf(hint, sizeof hint, "; is '%s' it? Name it %s", p,
		    near);
	}
	return attn_error_set(err, ATTN_ERR_DATA, c->name, 0, 0, "no array "
	    "for stage %s (named %s%s%s); it has %s%s",
	    attn_stage_table[s].name, attn_stage_table[s].name, mine[1] !=
	    NULL ? " or " : "", mine[1] != NULL ? mine[1] : "", names, hint);
}

enum attn_status
check_stages(struct options *o, struct check *c, struct attn_error *err)
{
	char names[256];
	enum attn_stage s;
	size_t i, k;

	if (!c->named) {
		if (o->nstages != 1)
			return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
			    "--check compares one stage with one array, not "
			    "%zu: choose it with --stage, or give a .npz or a "
			    "JSON object of arrays named by stage",
			    o->nstages);
		c->item[0].stage = o->stages[0];
		return ATTN_OK;
	}
	array_names(names, sizeof names, &c->arrays);
	if (o->stage_given) {
		for (k = 0; k < o->nstages; k++) {
			s = o->stages[k];
			for (i = 0; i < c->arrays.count; i++)
				if (strcmp(c->arrays.arrays[i].name,
				    attn_stage_table[s].name) == 0)
					break;
			for (i = i < c->arrays.count ? i : 0; i <
			    c->arrays.count; i++)
				if (stage_of(c->arrays.arrays[i].name) == s)
					break;
			if (i == c->arrays.count)
				return no_array(c, s, names, err);
			take(c, i, s);
		}
		return ATTN_OK;
	}
	/* Without --stage: every array that names a stage, in FILE's
	 * order. */
	for (i = 0; i < c->arrays.count; i++) {
		if ((s = stage_of(c->arrays.arrays[i].name)) ==
		    ATTN_STAGE_COUNT)
			continue;
		/* q, k, v saved beside the results are inputs here
		 * (stages only with --proj); a gradient without --grad is
		 * a slip worth telling */
		if (!(o->avail & ATTN_STAGE_BIT(s)) &&
		    !(ATTN_STAGE_BIT(s) & (ATTN_STAGES_GRAD |
		    ATTN_STAGES_REDUCE)))
			continue;
		if (!(o->avail & ATTN_STAGE_BIT(s)))
			return not_offered(o, c, c->arrays.arrays[i].name, s,
			    err);
		for (k = 0; k < c->n; k++)
			if (c->item[k].stage == s)
				return attn_error_set(err, ATTN_ERR_DATA,
				    c->name, 0, 0, "two arrays for stage %s: "
				    "'%s' and '%s'", attn_stage_table[s].name,
				    c->item[k].array,
				    c->arrays.arrays[i].name);
		take(c, i, s);
	}
	if (c->n == 0) {
		options_stage_names(names + 128, 128, o->avail);
		array_names(names, 128, &c->arrays);
		return attn_error_set(err, ATTN_ERR_DATA, c->name, 0, 0, "none "
		    "of its arrays (%s) names a stage: name them by stage "
		    "(%s) or as FlashAttention does (out, softmax_lse, dq, "
		    "dk, dv)", names, names + 128);
	}
	o->nstages = c->n;
	for (k = 0; k < c->n; k++)
		o->stages[k] = c->item[k].stage;
	return ATTN_OK;
}

/* Why array i of FILE is not checked, in buf, and the stage or alias
 * its name is near in *near (NULL when none); 0 when it is checked. */
int
check_unchecked(const struct options *o, const struct check *c, size_t i,
    char *buf, size_t size, const char **near)
{
	const char *name = c->arrays.arrays[i].name;
	const char *names[ATTN_STAGE_COUNT + sizeof aliases /
	    sizeof aliases[0]];
	enum attn_stage s;
	size_t k, n = 0;
	char p[48];

	*near = NULL;
	for (k = 0; k < c->n; k++)
		if (c->item[k].array == name)
			return 0;
	if ((s = stage_of(name)) != ATTN_STAGE_COUNT) {
		for (k = 0; k < c->n; k++)
			if (c->item[k].stage == s)
				break;
		if (k < c->n) {
			attn_text_preview(p, 40, c->item[k].array,
			    strlen(c->item[k].array));
			snprintf(buf, size, "attn's %s too, checked from "
			    "'%s'", attn_stage_table[s].name, p);
		}
		else if (!(o->avail & ATTN_STAGE_BIT(s)))
			snprintf(buf, size, "attn's %s, which this run does "
			    "not make (an input here)",
			    attn_stage_table[s].name);
		else
			snprintf(buf, size, "attn's %s, not among --stage's",
			    attn_stage_table[s].name);
		return 1;
	}
	for (s = 0; s < ATTN_STAGE_COUNT; s++)
		if (!attn_stage_table[s].internal)
			names[n++] = attn_stage_table[s].name;
	for (k = 0; k < sizeof aliases / sizeof aliases[0]; k++)
		names[n++] = aliases[k].name;
	if ((*near = attn_suggest(name, names, n)) == NULL)
		snprintf(buf, size, "it names no stage");
	else if ((s = stage_of(*near)) != ATTN_STAGE_COUNT &&
	    strcmp(*near, attn_stage_table[s].name) != 0)
		snprintf(buf, size, "it names no stage; did you mean %s (attn's "
		    "%s)?", *near, attn_stage_table[s].name);
	else
		snprintf(buf, size, "it names no stage; did you mean %s?",
		    *near);
	return 1;
}

/* ---------------------------------------------------------------- run */

/* |a - b|, where both are finite; otherwise 0 when they agree (both
 * nan, or the same infinity) and infinity when not. */
static double
distance(double a, double b)
{
	if (isfinite(a) && isfinite(b))
		return fabs(a - b);
	return (isnan(a) && isnan(b)) || a == b ? 0 : INFINITY;
}

/* Whether stage s's rows lie in the sequences of a packed batch: its
 * rows are queries or keys, not reduced over them. */
static int
packed_rows(const struct check *c, enum attn_stage s)
{
	const struct attn_stage_info *info = &attn_stage_table[s];

	return c->seqs > 0 && !info->reduced && (info->rows ==
	    ATTN_AXIS_QUERY || info->rows == ATTN_AXIS_KEY);
}

void
check_where(const struct attn_stages *stages, const struct check *c,
    enum attn_stage s, size_t flat, struct attn_where *w, size_t *seq)
{
	const struct attn_stage_info *info = &attn_stage_table[s];
	const size_t *cu = info->rows == ATTN_AXIS_KEY ? c->cu_k : c->cu_q;
	size_t lo = 0, hi = c->seqs;

	attn_stage_where(stages, s, flat, w);
	*seq = SIZE_MAX;
	if (!packed_rows(c, s))
		return;
	/* the last sequence that starts at or before the row: the one
	 * that holds it, empty ones before it passed over */
	while (hi - lo > 1) {
		const size_t mid = lo + (hi - lo) / 2;

		if (cu[mid] <= w->row)
			lo = mid;
		else
			hi = mid;
	}
	*seq = lo;
	w->row -= cu[lo];
	if (info->cols == ATTN_AXIS_KEY)
		w->col -= c->cu_k[lo];
}

/* n doubles, a block (attn_block_alloc: in the library's session its
 * pages kept from run to run); NULL when out of memory.  Free with
 * attn_block_free. */
static double *
doubles(size_t n)
{
	size_t bytes;

	return attn_size_mul(n, sizeof(double), &bytes) != 0 ? NULL :
	    attn_block_alloc(bytes);
}

static size_t
gcd(size_t a, size_t b)
{
	while (b != 0) {
		const size_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/* The largest error of cand against the stage in each (batch, head),
 * into *head_max, and in a packed batch of each (sequence, head), into
 * *seq_max: check_where places the first of each run of elements that
 * share them (within a row of one head, in a packed batch, where a
 * block's rows lie in several sequences). */
static enum attn_status
head_errors(const struct attn_stages *stages, const struct check *c,
    struct check_item *it, const double *cand, double **head_max,
    double **seq_max, struct attn_error *err)
{
	const size_t n = attn_shape_count(&it->shape);
	size_t run = attn_stage_where_run(stages, it->stage);
	struct attn_where w;
	double d, most;
	size_t k, i, at, seq;

	it->batches = it->shape.batches;
	it->heads = it->shape.heads * it->shape.col_heads;
	if ((*head_max = calloc(it->batches * it->heads, sizeof **head_max)) ==
	    NULL || (c->seqs > 0 && (*seq_max = calloc(c->seqs * it->heads,
	    sizeof **seq_max)) == NULL))
		return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "out of memory comparing %zu numbers", n);
	if (c->seqs > 0)
		run = gcd(run, it->shape.dim[it->shape.ndim - 1]);
	for (k = 0; k < n; k += run) {
		check_where(stages, c, it->stage, k, &w, &seq);
		most = 0;
		for (i = k; i < k + run && i < n; i++)
			if ((d = distance(cand[i], it->ref[i])) > most)
				most = d;
		at = w.head < it->heads ? w.head : 0;
		if (most > (*head_max)[w.batch * it->heads + at])
			(*head_max)[w.batch * it->heads + at] = most;
		if (seq != SIZE_MAX && most > (*seq_max)[seq * it->heads + at])
			(*seq_max)[seq * it->heads + at] = most;
	}
	return ATTN_OK;
}

static int
by_value(const void *a, const void *b)
{
	const double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* --check-by head: each unit, a (batch, head) or in a packed batch a
 * (sequence, head), passes when its largest error is at most factor
 * times its own baseline's, plus atol, so that one head gone wrong is not
 * hidden by another whose baseline errs more.  A unit's baseline error
 * counts as at least the median of all the units' (the lower one of an
 * even count, so that of two units the quieter is not judged by the
 * louder): a unit whose naive kernel happens to err little (values
 * that round exactly, a head of few keys) would otherwise ask a right
 * kernel, which rounds in another order, for what its baseline got by
 * luck.  The median is the typical unit's, which one unit or a few far
 * out cannot move.  Which unit is named: the one whose error is the
 * largest fraction of its bound. */
static enum attn_status
judge_units(const struct options *o, const struct check *c,
    struct check_item *it, struct attn_error *err)
{
	const double *cand, *base;
	double *sorted, ratio, most = -1;
	size_t u;

	it->by_unit = 1;
	it->by_seq = it->seq_max != NULL && packed_rows(c, it->stage);
	cand = it->by_seq ? it->seq_max : it->head_max;
	base = it->by_seq ? it->base_seq_max : it->base_head_max;
	it->units = (it->by_seq ? c->seqs : it->batches) * it->heads;
	if ((sorted = attn_alloc_array(it->units, sizeof *sorted)) == NULL)
		return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "out of memory comparing %zu heads", it->units);
	memcpy(sorted, base, it->units * sizeof *sorted);
	qsort(sorted, it->units, sizeof *sorted, by_value);
	it->unit_floor = sorted[(it->units - 1) / 2];
	free(sorted);
	it->cmp.fails &= ~(unsigned)ATTN_FAIL_FACTOR;
	it->units_failing = 0;
	for (u = 0; u < it->units; u++) {
		const double bound = o->factor * fmax(base[u], it->unit_floor) +
		    o->atol;

		if (cand[u] > bound)
			it->units_failing++;
		ratio = bound > 0 ? cand[u] / bound : cand[u] > 0 ? INFINITY :
		    0;
		if (ratio > most) {
			most = ratio;
			it->unit_worst = u;
			it->unit_bound = bound;
		}
	}
	if (it->units_failing > 0)
		it->cmp.fails |= ATTN_FAIL_FACTOR;
	return ATTN_OK;
}

static enum attn_status
run_item(const struct options *o, const struct attn_inputs *in,
    const struct attn_stages *stages, const struct attn_stages *emu,
    const struct check *c, struct check_item *it, struct attn_error *err)
{
	enum attn_status status;
	double *alt;
	size_t n;

	attn_stage_shape(stages, it->stage, &it->shape);
	/* One array of the wrong shape is the whole check gone wrong: a
	 * data error.  One of several is a failing row of its own, so that
	 * the other stages still get their verdicts. */
	if (!check_shape_fits(&it->file, &it->shape)) {
		char why[320];

		if (!c->named)
			return check_shape_error(stages, c, it, err);
		it->misfit = 1;
		check_shape_why(why, sizeof why, it->hint, sizeof it->hint,
		    stages, c, it);
		return ATTN_OK;
	}
	/* A .npz member's data, now that its shape fits. */
	if (it->file.data == NULL && (status = c->nparts > 0 ?
	    attn_parts_read_member(c->name, c->parts, c->nparts, it->member,
	    ATTN_READ_IN_PLACE, &it->file, err) :
	    attn_npz_read_member(c->name, c->bytes.buf, c->bytes.len,
	    it->member, 0, &it->file, err)) != ATTN_OK)
		return status;
	n = attn_shape_count(&it->shape);
	if ((it->ref = attn_stage_c_order(stages, it->stage)) == NULL) {
		if ((it->ref_own = doubles(n)) == NULL)
			return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
			    "out of memory comparing %zu numbers", n);
		attn_stage_flatten(stages, it->stage, it->ref_own);
		it->ref = it->ref_own;
	}
	attn_compare(it->file.data, it->ref, n, o->rtol, o->atol, &it->cmp);
	if ((status = head_errors(stages, c, it, it->file.data, &it->head_max,
	    &it->seq_max, err)) != ATTN_OK)
		return status;
	if (emu != NULL) {
		if ((it->emu = doubles(n)) == NULL)
			return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
			    "out of memory comparing %zu numbers", n);
		attn_stage_flatten(emu, it->stage, it->emu);
		attn_compare(it->emu, it->ref, n, o->rtol, o->atol, &it->base);
		attn_compare_baseline(&it->cmp, &it->base, o->factor);
		/* grad_bias and grad_sinks are sums over every batch and
		 * row, a number or a few a head, whose baseline's error in
		 * one head is luck: judged whole (attn(1)). */
		if (o->check_by == CHECK_BY_HEAD &&
		    !attn_stage_table[it->stage].reduced && ((status =
		    head_errors(stages, c, it, it->emu, &it->base_head_max,
		    &it->base_seq_max, err)) != ATTN_OK || (status =
		    judge_units(o, c, it, err)) != ATTN_OK))
			return status;
	}
	if (it->cmp.fails != 0 && (alt = doubles(n)) != NULL) {
		check_find_hint(o, in, stages, c, it, alt);
		attn_block_free(alt);
	}
	return ATTN_OK;
}

/* The check as a phase of the progress line (progress.c), so that the
 * line never stays at 100% of attn's run while the check goes on: begun
 * (done 0), then a step a stage checked; an emulated baseline reports
 * its own phase in between. */
static void
check_progress(const struct options *o, size_t done, size_t total)
{
	if (o->cfg.progress != NULL)
		o->cfg.progress(o->cfg.progress_arg,
		    "the comparison with the --check file", done, total);
}

enum attn_status
check_run(const struct options *o, const struct attn_inputs *in,
    const struct attn_stages *stages, struct check *c, struct attn_error *err)
{
	struct attn_stages emu;
	enum attn_status status = ATTN_OK;
	unsigned want = 0;
	size_t k;

	c->seqs = in->varlen.seqs;
	c->cu_q = in->varlen.cu_q;
	c->cu_k = in->varlen.cu_k;
	for (k = 0; k < c->n; k++)
		want |= ATTN_STAGE_BIT(c->item[k].stage);
	check_progress(o, 0, c->n);
	if (o->emulate != ATTN_PREC_FP64 && (status = attn_emulate(&o->cfg,
	    in, want, o->emulate, &emu, err)) != ATTN_OK)
		return status;
	for (k = 0; k < c->n && status == ATTN_OK; k++) {
		status = run_item(o, in, stages, o->emulate != ATTN_PREC_FP64 ?
		    &emu : NULL, c, &c->item[k], err);
		check_progress(o, k + 1, c->n);
	}
	if (o->emulate != ATTN_PREC_FP64)
		attn_stages_free(&emu);
	return status;
}

int
check_item_passed(const struct check_item *it)
{
	return !it->misfit && it->cmp.fails == 0;
}

int
check_passed(const struct check *c)
{
	size_t k;

	for (k = 0; k < c->n; k++)
		if (!check_item_passed(&c->item[k]))
			return 0;
	return 1;
}

void
check_free(struct check *c)
{
	size_t k;

	for (k = 0; k < c->n; k++) {
		attn_array_free(&c->item[k].file);
		attn_block_free(c->item[k].ref_own);
		attn_block_free(c->item[k].emu);
		free(c->item[k].head_max);
		free(c->item[k].seq_max);
		free(c->item[k].base_head_max);
		free(c->item[k].base_seq_max);
	}
	attn_named_free(&c->arrays);
	slurp_release(&c->bytes);
	free(c->parts);
	memset(c, 0, sizeof *c);
}
