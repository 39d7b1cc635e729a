/*
 * print_explain.c - --explain: the shapes, the scale and the conventions
 * in force, then every stage in attn_stage_order as a table (from q, k
 * and v, the operands as read or a layer's projections, the bias as
 * read where there is one, and the rotations when RoPE makes them; the
 * mask only when a masking rule is in force, the lse only when the run
 * needs it, the backward stages only with --grad), with a check line
 * under the weights (each row sums to 1, or with sinks to 1 - exp(sink
 * - lse), the rest being the sink's) and under grad_scaled (each row
 * sums to 0, since the softmax does not change when a row of logits
 * moves as a whole; with sinks, to delta times the sink's share).  The
 * numbers are the computed stages; nothing is computed here but the
 * check of the row sums.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attn.h"
#include "attn_io.h"
#include "print.h"
#include "render.h"
#include "report.h"
#include "words.h"

/*
 * What row i of stage s (weights, or grad_scaled) should sum to: 1 and
 * 0, or with sinks 1 - exp(sink - lse) and delta * exp(sink - lse), the
 * sink's share exp(sink - lse) being missing from the weights (and so
 * from sum_j weights * (dP - delta)).
 */
static double
row_sum_target(const struct attn_stages *stages, enum attn_stage s, size_t i)
{
	const size_t h = (i / stages->T) % stages->heads;
	double share;

	if (stages->sinks.data == NULL)
		return s == ATTN_STAGE_WEIGHTS ? 1.0 : 0.0;
	share = exp(*attn_at(&stages->sinks, 0, h) - attn_lse_natural(stages,
	    *attn_at(&stages->stage[ATTN_STAGE_LSE], i, 0)));
	return s == ATTN_STAGE_WEIGHTS ? 1.0 - share :
	    *attn_at(&stages->stage[ATTN_STAGE_DELTA], i, 0) * share;
}

/* The line after the weights or grad_scaled: how far the worst row sum
 * of stage s is from what it should be, over the rows that may attend
 * some key, and with sinks what the sums of the weights are. */
void
print_row_sum_check(const struct printer *p, enum attn_stage s)
{
	const struct attn_matrix *w = &p->stages->stage[s];
	const int sinks = p->stages->sinks.data != NULL;
	char buf[ATTN_NUM_MAX], lo_s[ATTN_NUM_MAX], hi_s[ATTN_NUM_MAX];
	double worst = 0.0, lo = INFINITY, hi = -INFINITY;
	size_t i, j, k = 0, nans = 0;

	for (i = 0; i < w->rows; i++) {
		double sum = 0.0;

		if (k < p->stages->nmasked && p->stages->masked[k] == i) {
			k++;
			continue;
		}
		for (j = 0; j < w->cols; j++)
			sum += *attn_at(w, i, j);
		if (isnan(sum)) {
			nans++;
			continue;
		}
		if (fabs(sum - row_sum_target(p->stages, s, i)) > worst)
			worst = fabs(sum - row_sum_target(p->stages, s, i));
		lo = sum < lo ? sum : lo;
		hi = sum > hi ? sum : hi;
	}
	attn_format_number(buf, worst, 2, 0);
	if (sinks && s == ATTN_STAGE_WEIGHTS) {
		print_number(p, lo_s, lo);
		print_number(p, hi_s, hi);
		fprintf(p->fp, "check: with sinks each row of weights sums to "
		    "1 - exp(sink - lse), less than 1, the rest being the "
		    "sink's (sums %s%s%s; largest |sum - (1 - exp(sink - "
		    "lse))| = %s)", lo_s, strcmp(lo_s, hi_s) != 0 ? " to " : "",
		    strcmp(lo_s, hi_s) != 0 ? hi_s : "", buf);
	} else if (sinks) {
		fprintf(p->fp, "check: with sinks each row of grad_scaled sums "
		    "to delta * exp(sink - lse), the sink's share of delta "
		    "(largest |sum - delta * exp(sink - lse)| = %s)", buf);
	} else {
		fprintf(p->fp, "check: each row of %s sums to %d "
		    "(largest |sum%s| = %s)", attn_stage_table[s].name,
		    s == ATTN_STAGE_WEIGHTS, s == ATTN_STAGE_WEIGHTS ? " - 1" :
		    "", buf);
	}
	if (p->stages->nmasked > 0)
		fprintf(p->fp, "; %zu row%s that attend%s no key left out",
		    p->stages->nmasked, p->stages->nmasked == 1 ? "" : "s",
		    p->stages->nmasked == 1 ? "s" : "");
	if (nans > 0)
		fprintf(p->fp, "; %zu row%s nan (a nan or inf in the bias)",
		    nans, nans == 1 ? " is" : "s are");
	putc('\n', p->fp);
}

static void
print_scale_line(const struct printer *p)
{
	char buf[ATTN_NUM_MAX];

	print_number(p, buf, p->stages->scale);
	switch (p->o->cfg.scale_mode) {
	case ATTN_SCALE_DEFAULT:
		fprintf(p->fp, "scale = 1/sqrt(d_k) = 1/sqrt(%zu) = %s\n",
		    p->stages->d_k, buf);
		break;
	case ATTN_SCALE_NONE:
		fprintf(p->fp, "scale = %s (--no-scale)\n", buf);
		break;
	case ATTN_SCALE_VALUE:
		/* a quotient as given, then its value */
		if (p->o->scale_text != NULL &&
		    strchr(p->o->scale_text, '/') != NULL)
			fprintf(p->fp, "scale = %s = %s (--scale)\n",
			    p->o->scale_text, buf);
		else
			fprintf(p->fp, "scale = %s (--scale)\n", buf);
		break;
	}
}

int
print_masking(const struct printer *p)
{
	return attn_masking(&p->o->cfg, p->in) != 0;
}

/* The conventions in force, every one named, so that a reader can tell
 * which framework's behaviour the numbers follow. */
static void
print_conventions(const struct printer *p)
{
	const struct attn_config *c = &p->o->cfg;
	const struct attn_varlen *vl = &p->in->varlen;
	const size_t T = print_queries(p);
	const char *sep = "";
	char buf[ATTN_NUM_MAX];
	size_t h;

	fputs("conventions: alignment ", p->fp);
	if (c->align == ATTN_ALIGN_BOTTOM_RIGHT && (vl->seqs > 0 ||
	    vl->used_k != NULL))
		fprintf(p->fp, "bottom-right (offset S - T of each %s, S its "
		    "keys in use", vl->seqs > 0 ? "sequence" : "batch");
	else if (c->align == ATTN_ALIGN_BOTTOM_RIGHT)
		fprintf(p->fp, "bottom-right (offset S - T = %s%zu",
		    p->stages->S >= T ? "" : "-", p->stages->S >= T ?
		    p->stages->S - T : T - p->stages->S);
	else
		fputs("top-left (offset 0", p->fp);
	if (p->o->like != NULL && p->o->like_align)
		fprintf(p->fp, ", --like %s", p->o->like);
	putc(')', p->fp);
	fprintf(p->fp, "; masked rows %s",
	    words_masked_rows[c->masked_rows]);
	if (p->o->like != NULL && p->o->like_masked_rows)
		fprintf(p->fp, " (--like %s)", p->o->like);
	/* lse as the formula says (natural log, -inf where no key) goes
	 * without saying; a kernel's other convention is named */
	if (c->lse_base != ATTN_LSE_E || c->lse_masked !=
	    ATTN_LSE_MASKED_NEG_INF) {
		fprintf(p->fp, "; lse %s, %s where no key",
		    c->lse_base == ATTN_LSE_2 ? "log2" : "natural log",
		    words_lse_masked[c->lse_masked]);
		if (p->o->like != NULL && p->o->like_lse_masked)
			fprintf(p->fp, " (--like %s)", p->o->like);
	}
	fputs("; softcap ", p->fp);
	if (c->softcap > 0.0) {
		print_number(p, buf, c->softcap);
		fputs(buf, p->fp);
	} else {
		fputs("none", p->fp);
	}
	fputs("; masks ", p->fp);
	if (c->causal) {
		fputs("causal", p->fp);
		sep = ", ";
	}
	if (c->window) {
		fprintf(p->fp, "%swindow %zu,%zu", sep, c->window_left,
		    c->window_right);
		sep = ", ";
	}
	if (vl->seqs > 0) {
		fprintf(p->fp, "%spacked sequences", sep);
		sep = ", ";
	}
	if (vl->used_k != NULL) {
		fprintf(p->fp, "%sused keys", sep);
		sep = ", ";
	}
	/* the file names as given, escaped */
	if (p->nm->mask != NULL) {
		fputs(sep, p->fp);
		report_text(p->fp, p->nm->mask);
		fprintf(p->fp, " (%s keeps)", c->mask_invert ? "0" : "1");
		sep = ", ";
	}
	if (*sep == '\0')
		fputs("none", p->fp);
	if (p->nm->bias != NULL) {
		fputs("; bias ", p->fp);
		report_text(p->fp, p->nm->bias);
	}
	/* dropout's p as given, not rounded to --digits, and its mask */
	if (p->in->dropout_mask.data != NULL) {
		attn_format_number(buf, c->dropout_p, 0, 0);
		fprintf(p->fp, "; dropout p %s, mask ", buf);
		report_text(p->fp, p->o->dropout_mask);
		fputs(" (kept weights / (1 - p))", p->fp);
	}
	if (c->alibi) {
		/* the slopes of --alibi-slopes FILE, named, a row a batch
		 * where they differ by batch; else Press et al.'s */
		const size_t H = p->stages->heads;
		size_t b, rows = 1;

		for (b = 1; b < p->stages->batches && rows == 1; b++)
			for (h = 0; h < H; h++)
				if (attn_run_slope(c, p->in, b, h, H) !=
				    attn_run_slope(c, p->in, 0, h, H))
					rows = p->stages->batches;
		fputs("; ALiBi slopes", p->fp);
		if (p->nm->slopes != NULL) {
			fputs(" of ", p->fp);
			report_text(p->fp, p->nm->slopes);
		}
		for (b = 0; b < rows; b++) {
			if (rows > 1)
				fprintf(p->fp, "%s batch %zu:", b > 0 ? "," :
				    "", b + 1);
			for (h = 0; h < H; h++) {
				print_number(p, buf, attn_run_slope(c, p->in,
				    b, h, H));
				fprintf(p->fp, " %s", buf);
			}
		}
	}
	/* the base and the sinks as given, not rounded to --digits */
	if (c->rope) {
		attn_format_number(buf, c->rope_base, 0, 0);
		fprintf(p->fp, "; RoPE %s, base %s",
		    words_rope_style[c->rope_style], buf);
	}
	if (p->stages->sinks.data != NULL) {
		fputs("; sinks", p->fp);
		for (h = 0; h < p->stages->heads; h++) {
			attn_format_number(buf,
			    *attn_at(&p->stages->sinks, 0, h), 0, 0);
			fprintf(p->fp, " %s", buf);
		}
	}
	/* the operand the emulation scales (fp8 scales the logits) */
	if (p->stages->precision == ATTN_PREC_FP32 ||
	    p->stages->precision == ATTN_PREC_FP16 ||
	    p->stages->precision == ATTN_PREC_BF16) {
		fprintf(p->fp, "; emulated order %s (%s scaled before Q K^T",
		    words_emulate_order[c->emulate_order],
		    words_emulate_order[c->emulate_order]);
		if (p->o->like != NULL && p->o->like_emulate_order)
			fprintf(p->fp, ", --like %s", p->o->like);
		putc(')', p->fp);
	}
	/* the fp8 descale factors as given: a number or a file */
	for (h = 0; h < 3; h++)
		if (p->o->descale[h] != NULL) {
			fprintf(p->fp, "; descale_%c ", "qkv"[h]);
			report_text(p->fp, p->o->descale[h]);
		}
	/* paged caches by the table as given (K and V are their keys
	 * gathered), and the leftpad */
	if (p->o->block_table != NULL) {
		fputs("; paged K and V, block table ", p->fp);
		report_text(p->fp, p->o->block_table);
	} else if (p->o->kv_indptr != NULL) {
		fprintf(p->fp, "; paged K and V (%s), kv_indptr ",
		    words_kv_layout[p->o->kv_hnd]);
		report_text(p->fp, p->o->kv_indptr);
	}
	if (p->o->key_leftpad != NULL) {
		fputs("; key leftpad ", p->fp);
		report_text(p->fp, p->o->key_leftpad);
	}
	putc('\n', p->fp);
}

/* Rows [a, b) as 1-based numbers: "3-5", "3", or "none". */
static void
print_span(FILE *fp, size_t a, size_t b)
{
	if (a == b)
		fputs("none", fp);
	else if (b - a == 1)
		fprintf(fp, "%zu", a + 1);
	else
		fprintf(fp, "%zu-%zu", a + 1, b);
}

/* Packed sequences and used keys: each sequence's query rows and keys
 * (the blocks the mask stage shows on its diagonal), or each batch's
 * keys in use. */
static void
print_sequences(const struct printer *p)
{
	const struct attn_varlen *vl = &p->in->varlen;
	size_t s;

	if (vl->seqs == 0 && vl->used_k == NULL)
		return;
	if (vl->seqs == 0) {
		fputs(p->o->block_table != NULL || p->o->kv_indptr != NULL ||
		    p->o->key_leftpad != NULL ? "used keys (gathered from the "
		    "caches), the rest padding:" : "used keys (--seqused-k), "
		    "the rest padding:", p->fp);
		for (s = 0; s < vl->used_n; s++) {
			fputs(s > 0 ? ", " : " ", p->fp);
			if (vl->used_n > 1)
				fprintf(p->fp, "batch %zu ", s + 1);
			fputs("keys ", p->fp);
			print_span(p->fp, 0, vl->used_k[s]);
			fprintf(p->fp, " of %zu", p->stages->S);
		}
		putc('\n', p->fp);
		return;
	}
	fprintf(p->fp, "sequences: %zu packed (--cu-seqlens-q, "
	    "--cu-seqlens-k); each attends its own keys\n", vl->seqs);
	for (s = 0; s < vl->seqs; s++) {
		fprintf(p->fp, "  sequence %zu: queries ", s + 1);
		print_span(p->fp, vl->cu_q[s], vl->cu_q[s + 1]);
		fputs(", keys ", p->fp);
		print_span(p->fp, vl->cu_k[s], vl->cu_k[s + 1]);
		if (vl->used_k != NULL) {
			fputs(" (in use: ", p->fp);
			print_span(p->fp, vl->cu_k[s], vl->cu_k[s] +
			    vl->used_k[s]);
			putc(')', p->fp);
		}
		putc('\n', p->fp);
	}
}

/* The dims of an operand of `rows` rows and `heads` heads of d columns
 * as given: [B x] rows x heads*d, or 4-D in the order of the layout. */
static void
print_operand(const struct printer *p, const char *name, size_t rows,
    size_t heads, size_t d)
{
	const size_t B = p->stages->batches;

	fprintf(p->fp, "%s is ", name);
	if (p->stages->layout == ATTN_LAYOUT_BHSD)
		fprintf(p->fp, "%zux%zux%zux%zu", B, heads, rows, d);
	else if (p->stages->layout == ATTN_LAYOUT_BSHD)
		fprintf(p->fp, "%zux%zux%zux%zu", B, rows, heads, d);
	else if (B > 1)
		fprintf(p->fp, "%zux%zux%zu", B, rows, heads * d);
	else
		fprintf(p->fp, "%zux%zu", rows, heads * d);
}

/* "X is 6x3, W_Q is 3x2, ...", the embeddings and the layer's W. */
static void
print_layer_shapes(const struct printer *p)
{
	const struct attn_stages *stages = p->stages;
	const size_t G = stages->kv_heads;
	char b[32] = "";

	if (stages->batches > 1)
		snprintf(b, sizeof b, "%zux", stages->batches);
	if (stages->proj_self)
		fprintf(p->fp, "X is %s%zux%zu, ", b, print_queries(p),
		    stages->d_xq);
	else
		fprintf(p->fp, "XQ is %s%zux%zu, XKV is %s%zux%zu, ", b,
		    print_queries(p), stages->d_xq, b, stages->S,
		    stages->d_xkv);
	fprintf(p->fp, "W_Q is %zux%zu, W_K is %zux%zu, W_V is %zux%zu",
	    stages->d_xq, stages->heads * stages->d_k, stages->d_xkv,
	    G * stages->d_k, stages->d_xkv, G * stages->d_v);
	if (stages->d_proj != 0)
		fprintf(p->fp, ", W_O is %zux%zu", stages->heads * stages->d_v,
		    stages->d_proj);
}

/* "Q is 2x3x8, K is ..." */
static void
print_qkv_shapes(const struct printer *p)
{
	const struct attn_stages *stages = p->stages;
	const size_t G = stages->kv_heads;

	print_operand(p, "Q", print_queries(p), stages->heads, stages->d_k);
	print_operand(p, ", K", stages->S, G, stages->d_k);
	print_operand(p, ", V", stages->S, G, stages->d_v);
}

/* With --query, the queries shown: "; shown: q3, q1 (--query)", the
 * first few of them. */
static void
print_chosen(const struct printer *p)
{
	const size_t shown = 8;
	size_t i;

	if (p->o->query_row == NULL)
		return;
	fputs("; shown: ", p->fp);
	for (i = 0; i < p->stages->T && i < shown; i++)
		fprintf(p->fp, "%s%s", i > 0 ? ", " : "", p->nm->query[i]);
	if (p->stages->T > shown)
		fprintf(p->fp, " and %zu more", p->stages->T - shown);
	fputs(" (--query)", p->fp);
}

/* "Q is 2x3x8, K is ...: B=2 batches of T=3 queries, ...", from the
 * embeddings and the layer when there is one, and dO with --grad; with
 * a layout, 4-D in its order. */
static void
print_shapes(const struct printer *p)
{
	const struct attn_stages *stages = p->stages;
	const size_t G = stages->kv_heads;

	if (stages->proj)
		print_layer_shapes(p);
	else
		print_qkv_shapes(p);
	if (p->o->grad != NULL)
		print_operand(p, ", dO", print_queries(p), stages->heads,
		    stages->d_v);
	if (stages->layout != ATTN_LAYOUT_NONE)
		fprintf(p->fp, " (%s)", words_layout[stages->layout - 1]);
	fputs(": ", p->fp);
	if (stages->batches > 1)
		fprintf(p->fp, "B=%zu batches of ", stages->batches);
	size_t T = print_queries(p);
	fprintf(p->fp, "T=%zu %s, S=%zu key%s, ", T, T == 1 ? "query" : "queries",
	    stages->S, stages->S == 1 ? "" : "s");
	if (G != stages->heads)
		fprintf(p->fp, "H=%zu heads sharing G=%zu KV head%s, per head ",
		    stages->heads, G, G == 1 ? "" : "s");
	else if (stages->heads > 1)
		fprintf(p->fp, "H=%zu heads, per head ", stages->heads);
	fprintf(p->fp, "d_k=%zu, d_v=%zu", stages->d_k, stages->d_v);
	print_chosen(p);
	putc('\n', p->fp);
}

/* Block n of stage s as a table, and with --arithmetic how each of its
 * numbers comes about. */
static enum attn_status
explain_block(const struct printer *p, enum attn_stage s, size_t n)
{
	enum attn_status status = print_table_block(p, s, n);

	if (status == ATTN_OK && p->o->arithmetic)
		print_arith_block(p, s, n);
	return status;
}

/*
 * Whether the run needs the lse (attn(1), --explain): the backward pass
 * reads it, and a kernel's convention (--lse-base, --lse-masked, --like),
 * sinks, packed sequences, used keys and an emulated format are about
 * what a kernel stores; a learner's run ends at the output.
 */
static int
explain_lse(const struct printer *p)
{
	const struct attn_config *c = &p->o->cfg;

	return p->o->grad != NULL || c->lse_base != ATTN_LSE_E ||
	    c->lse_masked != ATTN_LSE_MASKED_NEG_INF || p->o->like != NULL ||
	    p->stages->sinks.data != NULL || p->in->varlen.seqs > 0 ||
	    p->in->varlen.used_k != NULL ||
	    p->stages->precision != ATTN_PREC_FP64;
}

void
print_explain_head(const struct printer *p)
{
	print_shapes(p);
	if (p->stages->precision == ATTN_PREC_FP8_E4M3 ||
	    p->stages->precision == ATTN_PREC_FP8_E5M2)
		fprintf(p->fp, "precision: %s, emulated (--emulate) as "
		    "FlashAttention 3's fp8 forward: Q, K, V rounded to it, "
		    "Q K^T summed in float32 and scaled by scale * descale_q * "
		    "descale_k, the weights rounded to fp8-e4m3 before "
		    "weights V, the output times descale_v stored in "
		    "bfloat16, every other stage in float32\n",
		    words_emulate[p->stages->precision - 1]);
	else if (p->stages->precision != ATTN_PREC_FP64)
		fprintf(p->fp, "precision: %s, emulated (--emulate): Q, K, V%s "
		    "and the bias rounded to it, %s * scale too before Q K^T, "
		    "float32 sums, every stage stored in it but lse%s, kept "
		    "in float32\n", words_emulate[p->stages->precision - 1],
		    p->stages->have & ATTN_STAGES_GRAD ? ", dO" : "",
		    words_emulate_order[p->o->cfg.emulate_order],
		    p->stages->have & ATTN_STAGES_GRAD ? " and delta" : "");
	print_scale_line(p);
	print_conventions(p);
	print_sequences(p);
}

enum attn_status
print_explain_head_text(const struct printer *p, struct render *r)
{
	struct printer q = *p;
	enum attn_status status;

	if ((status = render_open(r, p->err)) != ATTN_OK)
		return status;
	q.fp = r->fp;
	print_explain_head(&q);
	return render_close(r, ATTN_OK, p->err);
}

enum attn_status
print_explain(const struct printer *p)
{
	enum attn_status status;
	size_t n;

	if (p->o->arithmetic &&
	    (status = print_arith_check(p, p->err)) != ATTN_OK)
		return status;
	print_explain_head(p);
	for (n = 0; n < ATTN_STAGE_COUNT; n++) {
		const enum attn_stage s = attn_stage_order[n];

		if (!print_explains(p->o, s) ||
		    (s == ATTN_STAGE_MASK && !print_masking(p)) ||
		    (s == ATTN_STAGE_LSE && !explain_lse(p)))
			continue;
		putc('\n', p->fp);
		status = print_blocks(p, s, explain_block);
		if (status != ATTN_OK)
			return status;
		if (s == ATTN_STAGE_WEIGHTS)
			print_row_sum_check(p, ATTN_STAGE_WEIGHTS);
		if (s == ATTN_STAGE_GRAD_SCALED)
			print_row_sum_check(p, ATTN_STAGE_GRAD_SCALED);
		if (s == ATTN_STAGE_WEIGHTS && p->o->stats) {
			putc('\n', p->fp);
			if ((status = print_stats(p)) != ATTN_OK)
				return status;
		}
		if (s == ATTN_STAGE_WEIGHTS && p->o->heatmap) {
			putc('\n', p->fp);
			if ((status = print_heatmap(p)) != ATTN_OK)
				return status;
		}
	}
	return ATTN_OK;
}
