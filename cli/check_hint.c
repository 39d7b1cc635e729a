/*
 * check_hint.c - what --check makes of an array that does not match its
 * stage: whether its shape lines up with the stage's (the same dims but
 * for dims of 1, or blocks one under another), and when it does not,
 * what its dims suggest (a transpose, the other layout, 4-D where attn's
 * heads are side by side, the heads flattened into the last dim, a KV
 * gradient per query head, a bias's gradient not summed where the bias
 * broadcasts); and, when its numbers fail, what they match
 * instead: the other layout, every block transposed, the stage under the
 * other --align, --lse-base, --lse-masked or --masked-rows, or under a
 * --scale that kernels get wrong.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "attn_io.h"
#include "check_hint.h"
#include "words.h"

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

void
check_dims_legend(char *buf, size_t size, enum attn_stage s,
    const struct attn_shape *sh)
{
	const char *heads = attn_stage_table[s].kv ? "G" : "H";
	size_t d, n = 0;
	const char *sym;
	int wide = sh->col_heads > 1;

	/* The heads are side by side in the last dim (H*d_v) only where no
	 * dim of their own holds them, as bshd's and bhsd's do. */
	for (d = 0; d < sh->ndim; d++)
		if (sh->axis[d] == ATTN_AXIS_HEAD)
			wide = 0;
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
		n += (size_t)snprintf(buf + n, size - n, "%s%s%s%s",
		    d > 0 ? " x " : "", wide && d + 1 == sh->ndim ? heads : "",
		    wide && d + 1 == sh->ndim ? "*" : "", sym);
	}
}

/* Whether the array can stand for the stage: the same numbers in the
 * same order, its dims those of the stage but for dims of 1, or the
 * stage's blocks one under another (rows x the stage's last dim). */
int
check_shape_fits(const struct attn_array *f, const struct attn_shape *sh)
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

/* Whether the array's dims (squeezed) are the stage's with dim d
 * multiplied by m: a KV stage per query head. */
static int
shape_times(const struct attn_array *f, const struct attn_shape *sh,
    size_t d, size_t m)
{
	size_t a[ATTN_MAX_DIMS], b[ATTN_MAX_DIMS], want[ATTN_MAX_DIMS], na, nb;

	memcpy(want, sh->dim, sizeof want);
	want[d] *= m;
	na = squeeze(f->shape, f->ndim, a);
	nb = squeeze(want, sh->ndim, b);
	return na == nb && memcmp(a, b, na * sizeof *a) == 0;
}

/* The hint for a gradient of K or V given per query head (H where attn
 * has G KV heads: the sum over each group of query heads missing). */
static int
gqa_hint(const struct attn_stages *stages, const struct check_item *it,
    char *hint, size_t size)
{
	const struct attn_shape *sh = &it->shape;
	const size_t H = stages->heads, G = stages->kv_heads;
	size_t d, hd = sh->ndim;
	char sum[96];

	if (!attn_stage_table[it->stage].kv || G == 0 || H <= G)
		return 0;
	for (d = 0; d < sh->ndim; d++)
		if (sh->axis[d] == ATTN_AXIS_HEAD)
			hd = d;
	if (hd == sh->ndim && sh->col_heads == G)
		hd = sh->ndim - 1;	/* heads side by side */
	if (hd == sh->ndim || !shape_times(&it->file, sh, hd, H / G))
		return 0;
	/* The sum as NumPy writes it where the heads lie in this layout:
	 * their own dim before the rows (bhsd) or after them (bshd), or
	 * side by side in the last dim. */
	if (hd == sh->ndim - 1)
		snprintf(sum, sizeof sum, "x.reshape(*x.shape[:-1], %zu, %zu, "
		    "%zu).sum(-2).reshape(*x.shape[:-1], %zu)", G, H / G,
		    sh->cols / G, sh->cols);
	else if (stages->layout == ATTN_LAYOUT_BSHD)
		snprintf(sum, sizeof sum, " x.reshape(B, S, %zu, %zu, -1)"
		    ".sum(3)", G, H / G);
	else
		snprintf(sum, sizeof sum, " x.reshape(B, %zu, %zu, S, -1)"
		    ".sum(2)", G, H / G);
	snprintf(hint, size, ": H = %zu heads, not G = %zu: per query head, "
	    "the GQA sum missing? Sum each group of %zu (%s%s%s)", H, G,
	    H / G, stages->layout == ATTN_LAYOUT_NONE ? "" : "in ",
	    stages->layout == ATTN_LAYOUT_NONE ? "" :
	    words_layout[stages->layout - 1], sum);
	return 1;
}

/* The hint for a gradient of a bias not summed where the bias
 * broadcasts: the array has the stage's dims but where grad_bias has 1
 * it has the scores' (B, H, T or S, lined up from the right, a 3-D
 * bias's first dim B or H), as a kernel's dS summed too little is. */
static int
bias_hint(const struct attn_stages *stages, const struct check_item *it,
    char *hint, size_t size)
{
	const struct attn_shape *sh = &it->shape;
	const struct attn_array *f = &it->file;
	const size_t full[4] = { stages->batches, stages->heads, stages->T,
		stages->S };
	char axes[64];
	size_t d, k = 0, n = 0;

	if (it->stage != ATTN_STAGE_GRAD_BIAS || f->ndim != sh->ndim)
		return 0;
	axes[0] = '\0';
	for (d = 0; d < sh->ndim; d++) {
		const size_t at = 4 - sh->ndim + d;

		if (f->shape[d] == sh->dim[d])
			continue;
		if (sh->dim[d] != 1 || (f->shape[d] != full[at] &&
		    !(sh->ndim == 3 && d == 0 && f->shape[d] == full[1])))
			return 0;
		k += (size_t)snprintf(axes + k, sizeof axes - k, "%s%zu",
		    n++ > 0 ? ", " : "", d);
		if (k >= sizeof axes)
			return 0;
	}
	if (n == 0)
		return 0;
	snprintf(hint, size, ": not summed over the axes the bias broadcasts "
	    "along? Sum them as autograd does: x.sum(axis=(%s%s), "
	    "keepdims=True)", axes, n > 1 ? "" : ",");
	return 1;
}

/* The hint for heads flattened into the last dim (B x T x H*d, as a
 * kernel's output often is) where a layout makes attn's 4-D. */
static int
flat_hint(const struct attn_stages *stages, const struct check_item *it,
    char *hint, size_t size)
{
	const struct attn_shape *sh = &it->shape;
	const struct attn_array *f = &it->file;
	size_t heads, w;

	if (stages->layout == ATTN_LAYOUT_NONE || sh->ndim != 4 ||
	    f->ndim != 3 || attn_stage_table[it->stage].per_head)
		return 0;
	heads = stages->layout == ATTN_LAYOUT_BSHD ? sh->dim[2] : sh->dim[1];
	w = sh->dim[3];
	if (f->shape[0] != sh->dim[0] || f->shape[2] != heads * w ||
	    f->shape[1] * f->shape[2] * f->shape[0] != attn_shape_count(sh))
		return 0;
	snprintf(hint, size, ": heads flattened into its last dim (%zu x "
	    "%zu)? %sreshape it to %zux%zux%zux%zu", heads, w,
	    stages->layout == ATTN_LAYOUT_BSHD ? "" : "give --layout bshd "
	    "and ", f->shape[0], f->shape[1], heads, w);
	return 1;
}

/* Who saves stage s with its heads and rows swapped, for the hints. */
static const char *
swapped_by(enum attn_stage s)
{
	return s == ATTN_STAGE_LSE ? ", as FlashInfer saves lse, [qo_len, "
	    "num_heads]" : "";
}

/* The hint for a stage of one number a row (lse) saved with its heads
 * and rows swapped, T x H where attn's is H x T (in a packed batch
 * total_q x H). */
static int
heads_rows_hint(const struct check_item *it, char *hint, size_t size)
{
	const struct attn_shape *sh = &it->shape;
	size_t a[ATTN_MAX_DIMS], b[ATTN_MAX_DIMS], want[ATTN_MAX_DIMS];
	size_t d, h = sh->ndim, t = sh->ndim, na, nb;

	for (d = 0; d < sh->ndim; d++) {
		if (sh->axis[d] == ATTN_AXIS_HEAD)
			h = d;
		if (sh->axis[d] == ATTN_AXIS_QUERY)
			t = d;
	}
	if (h == sh->ndim || t == sh->ndim || sh->dim[sh->ndim - 1] != 1)
		return 0;
	memcpy(want, sh->dim, sizeof want);
	want[h] = sh->dim[t];
	want[t] = sh->dim[h];
	na = squeeze(it->file.shape, it->file.ndim, a);
	nb = squeeze(want, sh->ndim, b);
	if (na != nb || memcmp(a, b, na * sizeof *a) != 0)
		return 0;
	snprintf(hint, size, ": its heads and rows are swapped (T x H = %zux%zu "
	    "where attn's is H x T%s): swap them, x.swapaxes(-1, -2)",
	    sh->dim[t], sh->dim[h], swapped_by(it->stage));
	return 1;
}

/* The shape mismatch, with what the dims suggest: the last two swapped
 * (a transpose), the two middle ones of 4-D (the other layout), the
 * heads flattened, a KV gradient per query head.  The hints are written
 * after ": ", which hint leaves out. */
void
check_shape_why(char *why, size_t wsize, char *hint, size_t hsize,
    const struct attn_stages *stages, const struct check *c,
    const struct check_item *it)
{
	const struct attn_shape *sh = &it->shape;
	const size_t nd = sh->ndim;
	char want[96], got[96], legend[64], h[320], what[96];
	size_t swap[ATTN_MAX_DIMS];

	attn_dims_text(want, sizeof want, sh->dim, nd);
	check_dims_legend(legend, sizeof legend, it->stage, sh);
	attn_dims_text(got, sizeof got, it->file.shape, it->file.ndim);
	snprintf(h, sizeof h, ": it needs the stage's shape (dims of 1 "
	    "aside) or its blocks one under another (%zux%zu)",
	    attn_shape_count(sh) / sh->dim[nd - 1], sh->dim[nd - 1]);
	memcpy(swap, sh->dim, sizeof swap);
	if (it->file.ndim == nd) {
		swap[nd - 2] = sh->dim[nd - 1];
		swap[nd - 1] = sh->dim[nd - 2];
		if (memcmp(swap, it->file.shape, nd * sizeof *swap) == 0)
			snprintf(h, sizeof h, ": it looks transposed, "
			    "its last two dims swapped");
		memcpy(swap, sh->dim, sizeof swap);
		swap[1] = sh->dim[2];
		swap[2] = sh->dim[1];
		if (nd == 4 && memcmp(swap, it->file.shape, nd * sizeof *swap)
		    == 0)
			snprintf(h, sizeof h, ": its dims 2 and 3 are "
			    "swapped; is it laid out as --layout %s?",
			    words_layout[stages->layout == ATTN_LAYOUT_BSHD ?
			    ATTN_LAYOUT_BHSD - 1 : ATTN_LAYOUT_BSHD - 1]);
	}
	/* 4-D where attn has heads side by side: a layout was meant. */
	if (stages->layout == ATTN_LAYOUT_NONE && it->file.ndim == 4 &&
	    sh->col_heads > 1 && it->file.shape[0] == stages->batches &&
	    it->file.shape[3] == sh->cols / sh->col_heads &&
	    ((it->file.shape[1] == sh->col_heads &&
	    it->file.shape[2] == sh->rows) || (it->file.shape[1] == sh->rows &&
	    it->file.shape[2] == sh->col_heads)))
		snprintf(h, sizeof h, ": it is 4-D; give --layout %s "
		    "to have attn's in that shape", words_layout[
		    it->file.shape[1] == sh->col_heads ? ATTN_LAYOUT_BHSD - 1 :
		    ATTN_LAYOUT_BSHD - 1]);
	if (!gqa_hint(stages, it, h, sizeof h) &&
	    !bias_hint(stages, it, h, sizeof h) &&
	    !flat_hint(stages, it, h, sizeof h))
		heads_rows_hint(it, h, sizeof h);
	if (it->array != NULL)
		snprintf(what, sizeof what, "array '%.32s'", it->array);
	else
		snprintf(what, sizeof what, "%s", c->name);
	snprintf(why, wsize, "shape mismatch: %s is %s but attn's %s is %s "
	    "(%s)", what, got, attn_stage_table[it->stage].name, want, legend);
	snprintf(hint, hsize, "%s", h + 2);
}

enum attn_status
check_shape_error(const struct attn_stages *stages, const struct check *c,
    const struct check_item *it, struct attn_error *err)
{
	char why[320], hint[320];

	check_shape_why(why, sizeof why, hint, sizeof hint, stages, c, it);
	return attn_error_set(err, ATTN_ERR_DATA, c->name, 0, 0, "%s: %s", why,
	    hint);
}

/* ---------------------------------------------------------------- hints */

/* Whether the array passes against ref, with the tolerances of the
 * check. */
static int
passes(const struct options *o, const struct check_item *it,
    const double *ref, size_t n)
{
	struct attn_compare alt;

	attn_compare(it->file.data, ref, n, o->rtol, o->atol, &alt);
	return alt.nonfinite == 0 && (o->emulate != ATTN_PREC_FP64 ?
	    alt.max_abs <= it->cmp.factor_bound : alt.fails == 0);
}

/* Whether the array passes against the stage as attn computes it under
 * cfg (the run's conventions, one changed), where that changes the
 * stage: a convention that leaves every number as the run computed it
 * (the other --align without a mask that reads it) explains nothing,
 * even where passes' whole-stage bound passes what the verdict by head
 * failed. */
static int
passes_with(const struct options *o, const struct attn_inputs *in,
    const struct check_item *it, const struct attn_config *cfg, double *alt)
{
	struct attn_stages st;
	struct attn_error e;
	struct attn_shape sh;
	struct attn_config c = *cfg;
	int ok;

	c.progress = NULL;
	if (attn_run(&c, in, ATTN_STAGE_BIT(it->stage), &st, &e) != ATTN_OK)
		return 0;
	attn_stage_shape(&st, it->stage, &sh);
	ok = attn_shape_count(&sh) == attn_shape_count(&it->shape);
	if (ok) {
		attn_stage_flatten(&st, it->stage, alt);
		ok = memcmp(alt, it->ref, attn_shape_count(&sh) *
		    sizeof *alt) != 0 && passes(o, it, alt,
		    attn_shape_count(&sh));
	}
	attn_stages_free(&st);
	return ok;
}

/* FlashAttention-2's lse under causal ALiBi (attn(1)): its alibi.h adds
 * slope * (key index within the sequence) to the logits where the causal
 * mask keeps them, not -slope * |qpos - j|: for every key kept the two
 * differ by slope * qpos, the query's position (i + S - T bottom-right),
 * so the weights are the same and lse is shifted by that much (in log2
 * under --lse-base 2).  Does the array pass so? */
static int
alibi_lse_hint(const struct options *o, const struct attn_inputs *in,
    const struct attn_stages *stages, const struct check *c,
    struct check_item *it, double *alt)
{
	const size_t n = attn_shape_count(&it->shape);
	const double unit = o->cfg.lse_base == ATTN_LSE_2 ? log(2.0) : 1.0;
	struct attn_row_place rp;
	struct attn_where w;
	size_t k;

	if (!o->cfg.alibi || !o->cfg.causal || it->stage != ATTN_STAGE_LSE)
		return 0;
	for (k = 0; k < n; k++) {
		attn_stage_where(stages, it->stage, k, &w);
		attn_row_place(&o->cfg, in, stages->T, stages->S, w.batch,
		    w.row, &rp);
		alt[k] = isfinite(it->ref[k]) ? it->ref[k] +
		    attn_run_slope(&o->cfg, in, w.batch, w.head,
		    stages->heads) *
		    (double)rp.qpos / unit : it->ref[k];
	}
	if (!passes(o, it, alt, n))
		return 0;
	snprintf(it->hint, sizeof it->hint, "%s is attn's lse plus slope_h * "
	    "(i + S - T), the query's position: FlashAttention-2's lse under "
	    "causal ALiBi, whose alibi.h adds slope_h * key index to the "
	    "logits; the weights are the same, the lse is shifted (see attn(1), "
	    "ALiBi slopes)", c->name);
	return 1;
}

/* The scales kernels get wrong, against the run's scale s: none, 1/d_k
 * for 1/sqrt(d_k), s ln 2 (an exp2 of the scaled logits without the
 * factor log2(e), which turns them into base 2), s log2(e) (that factor
 * with exp rather than exp2), 1/sqrt(d_v) for 1/sqrt(d_k).  Does the
 * array pass under one of them?  Each is a run of attn under cfg with
 * that --scale (--no-scale for none), one after another until one
 * passes. */
static void
scale_hint(const struct options *o, const struct attn_inputs *in,
    const struct attn_stages *stages, const struct check *c,
    struct check_item *it, double *alt, struct attn_config *cfg)
{
	const double s = stages->scale;
	const struct {
		double scale;
		const char *why;
	} tries[] = {
		{ 1.0, "does not scale the logits" },
		{ 1.0 / (double)stages->d_k, "scales the logits by 1/d_k, not "
		    "1/sqrt(d_k)" },
		{ s * log(2.0), "takes exp2 of the scaled logits without the "
		    "factor log2(e): the scale times ln 2" },
		{ s / log(2.0), "multiplies the logits by log2(e) and takes exp, "
		    "not exp2: the scale times log2(e)" },
		{ 1.0 / sqrt((double)stages->d_v), "scales the logits by "
		    "1/sqrt(d_v), not 1/sqrt(d_k)" },
	};
	char num[ATTN_NUM_MAX];
	size_t t;

	for (t = 0; t < sizeof tries / sizeof tries[0]; t++) {
		if (tries[t].scale == s ||
		    (t == 4 && stages->d_v == stages->d_k))
			continue;
		cfg->scale_mode = ATTN_SCALE_VALUE;
		cfg->scale = tries[t].scale;
		if (!passes_with(o, in, it, cfg, alt))
			continue;
		attn_format_number(num, tries[t].scale, 0, 0);
		snprintf(it->hint, sizeof it->hint, "%s passes with %s%s: the "
		    "kernel %s", c->name, t == 0 ? "--no-scale" : "--scale ",
		    t == 0 ? "" : num, tries[t].why);
		break;
	}
	cfg->scale_mode = o->cfg.scale_mode;
	cfg->scale = o->cfg.scale;
}

/* The conventions that differ between systems: does the array pass
 * under the other --align, the other --lse-base or --lse-masked (for
 * lse), or another --masked-rows? */
static void
convention_hint(const struct options *o, const struct attn_inputs *in,
    const struct attn_stages *stages, const struct check *c,
    struct check_item *it, double *alt)
{
	struct attn_config cfg = o->cfg;
	size_t m;

	if (stages->T != stages->S) {
		cfg.align = o->cfg.align == ATTN_ALIGN_TOP_LEFT ?
		    ATTN_ALIGN_BOTTOM_RIGHT : ATTN_ALIGN_TOP_LEFT;
		if (passes_with(o, in, it, &cfg, alt)) {
			snprintf(it->hint, sizeof it->hint, "%s passes with "
			    "--align %s (T %zu, S %zu): the kernel lines "
			    "queries up with keys %s; give --align %s",
			    c->name, words_align[cfg.align], stages->T,
			    stages->S, cfg.align == ATTN_ALIGN_BOTTOM_RIGHT ?
			    "at the bottom right, as FlashAttention >= 2.1" :
			    "at the top left, as PyTorch's is_causal",
			    words_align[cfg.align]);
			return;
		}
		cfg.align = o->cfg.align;
	}
	if (alibi_lse_hint(o, in, stages, c, it, alt))
		return;
	/* lse in the other base, with the other value where no key */
	for (m = 1; it->stage == ATTN_STAGE_LSE && m < 4; m++) {
		cfg.lse_base = (m & 1) ? !o->cfg.lse_base : o->cfg.lse_base;
		cfg.lse_masked = (m & 2) ? !o->cfg.lse_masked :
		    o->cfg.lse_masked;
		if ((m & 2) && stages->nmasked == 0)
			continue;
		if (passes_with(o, in, it, &cfg, alt)) {
			snprintf(it->hint, sizeof it->hint, "%s passes with "
			    "%s%s%s%s%s: the kernel stores lse %s%s%s", c->name,
			    (m & 1) ? "--lse-base " : "", (m & 1) ?
			    words_lse_base[cfg.lse_base] : "", m == 3 ? " " : "",
			    (m & 2) ? "--lse-masked " : "", (m & 2) ?
			    words_lse_masked[cfg.lse_masked] : "",
			    (m & 1) ? (cfg.lse_base == ATTN_LSE_2 ? "in log2, "
			    "as Triton's kernels do" : "in natural log") : "",
			    m == 3 ? ", and " : "", (m & 2) ?
			    (cfg.lse_masked == ATTN_LSE_MASKED_POS_INF ? "inf "
			    "where a row has no key, as FlashAttention does" :
			    "-inf where a row has no key") : "");
			return;
		}
	}
	cfg.lse_base = o->cfg.lse_base;
	cfg.lse_masked = o->cfg.lse_masked;
	for (m = 0; stages->nmasked > 0 && m < 3; m++) {
		if (m == (size_t)o->cfg.masked_rows)
			continue;
		cfg.masked_rows = (enum attn_masked_rows)m;
		if (passes_with(o, in, it, &cfg, alt)) {
			snprintf(it->hint, sizeof it->hint, "%s passes with "
			    "--masked-rows %s: the kernel gives the rows that "
			    "may attend no key %s; give --masked-rows %s",
			    c->name, words_masked_rows[m],
			    words_masked_rows_effect[m], words_masked_rows[m]);
			return;
		}
	}
	cfg.masked_rows = o->cfg.masked_rows;
	scale_hint(o, in, stages, c, it, alt, &cfg);
}

/*
 * After a failure: does the array match the stage in the other layout,
 * or with each block (of one batch and head) transposed?  Those are
 * mistakes in the kernel's output shape, not in its numbers; say so.
 * Blocks are found by attn_stage_where, whatever the layout puts
 * between their rows and columns.
 */
void
check_find_hint(const struct options *o, const struct attn_inputs *in,
    const struct attn_stages *stages, const struct check *c,
    struct check_item *it, double *alt)
{
	const struct attn_shape *sh = &it->shape;
	const size_t n = attn_shape_count(sh), R = sh->rows,
	    C = sh->cols / sh->col_heads, NH = sh->heads * sh->col_heads;
	struct attn_stages other;
	struct attn_where w;
	size_t k, *at;

	if (stages->layout != ATTN_LAYOUT_NONE &&
	    !attn_stage_table[it->stage].per_head) {
		other = *stages;
		other.layout = stages->layout == ATTN_LAYOUT_BHSD ?
		    ATTN_LAYOUT_BSHD : ATTN_LAYOUT_BHSD;
		attn_stage_flatten(&other, it->stage, alt);
		if (passes(o, it, alt, n)) {
			snprintf(it->hint, sizeof it->hint, "%s matches attn's "
			    "%s laid out as --layout %s: does the kernel "
			    "write that layout?", c->name,
			    attn_stage_table[it->stage].name,
			    words_layout[other.layout - 1]);
			return;
		}
	}
	if (R == C && R > 1 && (at = malloc(n * sizeof *at)) != NULL) {
		/* at[block's (b, h, i, j)] = the flat place of element
		 * (i, j) of that block */
		for (k = 0; k < n; k++) {
			attn_stage_where(stages, it->stage, k, &w);
			at[((w.batch * NH + w.head) * R + w.row) * C +
			    w.col % C] = k;
		}
		for (k = 0; k < n; k++) {
			attn_stage_where(stages, it->stage, k, &w);
			alt[k] = it->ref[at[((w.batch * NH + w.head) * R +
			    w.col % C) * C + w.row]];
		}
		free(at);
		if (passes(o, it, alt, n)) {
			snprintf(it->hint, sizeof it->hint, "%s matches attn's "
			    "%s with rows and columns swapped in every "
			    "%zux%zu block: is it transposed?", c->name,
			    attn_stage_table[it->stage].name, R, C);
			return;
		}
	}
	if (C == 1 && NH > 1 && R > 1) {
		/* one number a row, its heads and rows swapped: the array
		 * runs over (batch, row, head) where attn's runs over
		 * (batch, head, row); T = H, or the shape would say so */
		for (k = 0; k < n; k++) {
			attn_stage_where(stages, it->stage, k, &w);
			alt[(w.batch * R + w.row) * NH + w.head] = it->ref[k];
		}
		if (passes(o, it, alt, n)) {
			snprintf(it->hint, sizeof it->hint, "%s matches attn's "
			    "%s with its heads and rows swapped (T x H where "
			    "attn's is H x T%s): swap them, x.swapaxes(-1, "
			    "-2)", c->name, attn_stage_table[it->stage].name,
			    swapped_by(it->stage));
			return;
		}
	}
	convention_hint(o, in, stages, c, it, alt);
}

