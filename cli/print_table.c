/*
 * print_table.c - the default format: each block of a stage under a
 * title line with its name, formula and shape, rows labelled by query
 * and columns by key (or value column), right-aligned in columns
 * measured in display columns (print_width) so that CJK labels line up.
 * Numbers keep their trailing zeros (ATTN_NUM_FIXED).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "attn_io.h"
#include "print.h"
#include "words.h"

/*
 * The text of element (i, j) of block n of stage s.  A weight that a mask
 * removed is shown as "-" rather than 0, so that masked entries stand out
 * from weights that merely round to 0.
 */
size_t
print_cell(const struct printer *p, enum attn_stage s, size_t n, size_t i,
    size_t j, char *buf)
{
	struct attn_matrix m = print_block(p, s, n);
	double x = *attn_at(&m, i, j);

	if (s == ATTN_STAGE_WEIGHTS && x == 0.0) {
		struct attn_matrix mask = print_block(p, ATTN_STAGE_MASK, n);

		if (*attn_at(&mask, i, j) == 0.0) {
			strcpy(buf, "-");
			return 1;
		}
	}
	return print_number(p, buf, x);
}

/*
 * The formulas of the stages that a layer, RoPE or sinks change, as
 * this run computes them: the embeddings' names (X, or XQ and XKV) and
 * the biases the layer has, the rotation's style and base, what the
 * scores multiply, and the sink in the softmax; NULL for the others.
 */
static const char *
layer_formula(const struct printer *p, enum attn_stage s, char *buf,
    size_t size)
{
	const struct attn_stages *stages = p->stages;
	const struct attn_config *c = &p->o->cfg;
	const char *x = stages->proj_self ? "X" : "XQ";
	const char *xkv = stages->proj_self ? "X" : "XKV";
	const int biased = (stages->proj_biased & ATTN_STAGE_BIT(s)) != 0;
	char base[ATTN_NUM_MAX];

	attn_format_number(base, c->rope_base, 0, 0);	/* as given */
	/* without a layer, q, k and v are the operands (attn(1)) */
	if (!stages->proj && (s == ATTN_STAGE_Q || s == ATTN_STAGE_K ||
	    s == ATTN_STAGE_V)) {
		snprintf(buf, size, "%s as read", s == ATTN_STAGE_Q ? "Q" :
		    s == ATTN_STAGE_K ? "K" : "V");
		return buf;
	}
	switch (s) {
	case ATTN_STAGE_Q:
		snprintf(buf, size, "%s W_Q%s", x, biased ? " + b_Q" : "");
		return buf;
	case ATTN_STAGE_K:
		snprintf(buf, size, "%s W_K%s", xkv, biased ? " + b_K" : "");
		return buf;
	case ATTN_STAGE_V:
		snprintf(buf, size, "%s W_V%s", xkv, biased ? " + b_V" : "");
		return buf;
	case ATTN_STAGE_PROJECTED:
		snprintf(buf, size, "output W_O%s", biased ? " + b_O" : "");
		return buf;
	case ATTN_STAGE_Q_ROT:
	case ATTN_STAGE_K_ROT:
		snprintf(buf, size, "%s rotated by position %s (RoPE %s, base "
		    "%s)", s == ATTN_STAGE_Q_ROT ? stages->proj ? "q" : "Q" :
		    stages->proj ? "k" : "K", s == ATTN_STAGE_Q_ROT ?
		    "i + offset" : "j", words_rope_style[c->rope_style],
		    base);
		return buf;
	case ATTN_STAGE_SCORES:
		/* attn softmax: the logits, against identity keys */
		if (p->o->softmax)
			return "SCORES as read";
		if (!c->rope && !stages->proj)
			return NULL;
		return c->rope ? "q_rot k_rot^T" : "q k^T";
	case ATTN_STAGE_WEIGHTS:
		return stages->sinks.data == NULL ? NULL : "exp(scaled) / "
		    "(exp(sink) + sum(exp(scaled))), row by row";
	case ATTN_STAGE_LSE:
		return stages->sinks.data == NULL ? NULL :
		    "log(exp(sink) + sum(exp(scaled))), row by row";
	default:
		return NULL;
	}
}

/* grad_bias's formula: what grad_scaled is summed over in this run, the
 * axes of the scores that the bias broadcasts along ("the batches and
 * queries" for a key-padding bias per head); grad_sinks', over the rows
 * and, with several, the batches. */
static const char *
reduced_formula(const struct printer *p, enum attn_stage s, char *buf,
    size_t size)
{
	const struct attn_stages *st = p->stages;
	const char *over[4];
	size_t n = 0, d, k, len;
	int batch = 0, head = 0;

	if (s == ATTN_STAGE_BIAS)
		return attn_stage_table[s].formula;
	if (s == ATTN_STAGE_GRAD_SINKS) {
		snprintf(buf, size, "-sum over the rows%s of exp(sink - lse) * "
		    "delta", st->batches > 1 ? " and batches" : "");
		return buf;
	}
	for (d = 0; d + 2 < st->bias_ndim; d++) {
		batch |= st->bias_axis[d] == ATTN_AXIS_BATCH;
		head |= st->bias_axis[d] == ATTN_AXIS_HEAD;
	}
	if (st->batches > 1 && !batch)
		over[n++] = "batches";
	if (st->heads > 1 && !head)
		over[n++] = "heads";
	if (print_queries(p) > 1 &&
	    st->bias_axis[st->bias_ndim - 2] == ATTN_AXIS_ONE)
		over[n++] = "queries";
	if (st->S > 1 && st->bias_axis[st->bias_ndim - 1] == ATTN_AXIS_ONE)
		over[n++] = "keys";
	if (n == 0) {
		snprintf(buf, size, "grad_scaled, nothing summed (the bias has "
		    "the scores' shape)");
		return buf;
	}
	len = (size_t)snprintf(buf, size, "grad_scaled summed over the");
	for (k = 0; k < n && len < size; k++)
		len += (size_t)snprintf(buf + len, size - len, "%s %s",
		    k == 0 ? "" : k + 1 == n ? " and" : ",", over[k]);
	return buf;
}

/* The formula of stage s as computed in this run: for scaled, the steps
 * that the options add after the scaling; for output, grad_v and
 * grad_weights, dropout's mask and scale; for grad_scaled, that it is
 * the bias's gradient too; for grad_q and grad_k, the softcap they go
 * back through; for grad_k and grad_v, the sum over the query heads that
 * share a KV head; for lse, --lse-base 2's log2 and --lse-masked inf;
 * for grad_bias, the axes it sums over. */
const char *
print_formula(const struct printer *p, enum attn_stage s, char *buf,
    size_t size)
{
	const struct attn_config *c = &p->o->cfg;
	const int biased = s == ATTN_STAGE_GRAD_SCALED && p->nm->bias != NULL;
	const int capped = c->softcap > 0.0 && (s == ATTN_STAGE_GRAD_Q ||
	    s == ATTN_STAGE_GRAD_K);
	const int shared = (ATTN_STAGES_GRAD & ATTN_STAGE_BIT(s)) &&
	    attn_stage_table[s].kv && p->stages->kv_heads < p->stages->heads;
	const char *f = layer_formula(p, s, buf, size);

	if (f != NULL)
		return f;
	if (attn_stage_table[s].reduced)
		return reduced_formula(p, s, buf, size);
	if (p->in->dropout_mask.data != NULL && (s == ATTN_STAGE_OUTPUT ||
	    s == ATTN_STAGE_GRAD_V || s == ATTN_STAGE_GRAD_WEIGHTS)) {
		snprintf(buf, size, "%s%s", s == ATTN_STAGE_OUTPUT ?
		    "dropped V" : s == ATTN_STAGE_GRAD_V ? "dropped^T dO" :
		    "dO V^T * dropout mask / (1 - p)", shared ? ", summed "
		    "over the heads of each KV head" : "");
		return buf;
	}
	if (biased || capped || shared) {
		snprintf(buf, size, "%s%s%s%s", attn_stage_table[s].formula,
		    biased ? ", the gradient of the bias too" : "",
		    capped ? ", through the softcap" : "",
		    shared ? ", summed over the heads of each KV head" : "");
		return buf;
	}
	if (s == ATTN_STAGE_LSE && (c->lse_base == ATTN_LSE_2 ||
	    c->lse_masked == ATTN_LSE_MASKED_POS_INF)) {
		snprintf(buf, size, "%s%s", c->lse_base == ATTN_LSE_2 ?
		    "log2(sum(exp(scaled))), row by row" :
		    attn_stage_table[s].formula, c->lse_masked ==
		    ATTN_LSE_MASKED_POS_INF ? ", inf where no key" : "");
		return buf;
	}
	if (s != ATTN_STAGE_SCALED)
		return attn_stage_table[s].formula;
	snprintf(buf, size, "%s%s%s%s%s", attn_stage_table[s].formula,
	    c->softcap > 0.0 ? ", softcapped" : "",
	    p->nm->bias != NULL ? " + bias" : "", c->alibi ? " + ALiBi" : "",
	    attn_masking(c, p->in) & ATTN_MASKING_RULE ?
	    ", masked entries -inf" : "");
	return buf;
}

enum attn_status
print_table_block(const struct printer *p, enum attn_stage s, size_t n)
{
	const struct attn_matrix m = print_block(p, s, n);
	char buf[PRINT_LABEL_MAX], where[64], f[128];
	size_t i, j, k, l, nr, nc, w0 = 0, *width;
	struct print_span r, c;
	struct attn_shape sh;

	/* The rows and columns shown: all, or the ends around "..." */
	print_spans(p, m.rows, m.cols, &r, &c);
	nr = print_span_count(&r);
	nc = print_span_count(&c);

	/* Column widths: the widest of the label and every number shown. */
	if ((width = attn_alloc_array(nc, sizeof *width)) == NULL)
		return attn_error_set(p->err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "out of memory laying out a table of %zu columns", nc);
	for (k = 0; k < nc; k++) {
		j = print_pick(k, c.head, c.tail, m.cols);
		width[k] = j == m.cols ? strlen(PRINT_ELLIPSIS) :
		    print_width(print_col_label(p, s, n, j, buf));
		for (l = 0; l < nr && j < m.cols; l++) {
			size_t len;

			if ((i = print_pick(l, r.head, r.tail, m.rows)) ==
			    m.rows)
				continue;
			if ((len = print_cell(p, s, n, i, j, buf)) > width[k])
				width[k] = len;
		}
	}
	for (l = 0; l < nr; l++) {
		i = print_pick(l, r.head, r.tail, m.rows);
		if (i < m.rows && print_width(print_row_label(p, s, i)) > w0)
			w0 = print_width(print_row_label(p, s, i));
	}
	if (r.tail > 0 && strlen(PRINT_ELLIPSIS) > w0)
		w0 = strlen(PRINT_ELLIPSIS);

	/* "weights, head 2 = softmax(scaled), row by row   [T x S = 2x3]" */
	attn_stage_shape(p->stages, s, &sh);
	print_block_name(p, s, n, where, sizeof where);
	fprintf(p->fp, "%s%s = %s   [%s = %zux%zu]\n",
	    attn_stage_table[s].name, where, print_formula(p, s, f, sizeof f),
	    sh.legend, sh.rows, sh.cols);
	print_pad(p->fp, w0);
	for (k = 0; k < nc; k++) {
		const char *label;

		j = print_pick(k, c.head, c.tail, m.cols);
		label = j == m.cols ? PRINT_ELLIPSIS :
		    print_col_label(p, s, n, j, buf);
		print_pad(p->fp, 2 + width[k] - print_width(label));
		fputs(label, p->fp);
	}
	putc('\n', p->fp);
	for (l = 0; l < nr; l++) {
		const char *label;

		/* the rows left out: "..." alone, as NumPy writes it */
		if ((i = print_pick(l, r.head, r.tail, m.rows)) == m.rows) {
			fputs(PRINT_ELLIPSIS "\n", p->fp);
			continue;
		}
		label = print_row_label(p, s, i);
		fputs(label, p->fp);
		print_pad(p->fp, w0 - print_width(label));
		for (k = 0; k < nc; k++) {
			size_t len;

			j = print_pick(k, c.head, c.tail, m.cols);
			if (j == m.cols)
				strcpy(buf, PRINT_ELLIPSIS);
			len = j == m.cols ? strlen(buf) :
			    print_cell(p, s, n, i, j, buf);
			print_pad(p->fp, 2 + width[k] - len);
			fputs(buf, p->fp);
		}
		putc('\n', p->fp);
	}
	print_elided(p, &r, &c);
	free(width);
	return ATTN_OK;
}

enum attn_status
print_table_stage(const struct printer *p, enum attn_stage s)
{
	return print_blocks(p, s, print_table_block);
}

enum attn_status
print_table(const struct printer *p)
{
	enum attn_status status = ATTN_OK;
	size_t k;

	for (k = 0; k < p->o->nstages && status == ATTN_OK; k++) {
		if (k > 0)
			putc('\n', p->fp);
		status = print_table_stage(p, p->o->stages[k]);
	}
	if (p->o->stats && status == ATTN_OK) {
		if (p->o->nstages > 0)
			putc('\n', p->fp);
		status = print_stats(p);
	}
	if (p->o->heatmap && status == ATTN_OK) {
		if (p->o->nstages > 0 || p->o->stats)
			putc('\n', p->fp);
		status = print_heatmap(p);
	}
	return status;
}
