/*
 * print_arith.c - the worked arithmetic of each cell, as a textbook
 * writes it: each dot product as its products and sum (q1.k1 = 1x1 +
 * 0x0 = 1), each scaling, the softmax of each row (its maximum, each
 * exponential, the sum, each weight as a fraction, and the same without
 * subtracting the maximum), each output component as a weighted sum, and
 * lse from the row's maximum and sum.  --explain --arithmetic writes it
 * under each stage's table; the HTML page shows one cell's on hover.
 *
 * Each line comes from one function (arith_dot, arith_scaled, arith_exp,
 * ...), and arith_cell, the hover text of one cell, is made of the same
 * functions, so the page and the terminal cannot disagree.
 *
 * Every result is read from a stage (scores, scaled, row_max, row_sum,
 * weights, output, lse) and every term from the inputs
 * (attn_head_inputs).  What no stage holds is worked out here only to be
 * shown: the exponentials exp(scaled - row_max) and, for the textbook
 * form without the shift, exp(scaled) and exp(lse).  Those get one
 * significant digit more than the stages, so that working the division
 * shown gives the weight shown (2.028 / 3.028 = 0.670 at -d 3).  Masked
 * entries are written "masked", never exp(-inf).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attn.h"
#include "attn_io.h"
#include "print.h"
#include "words.h"

/* What a reader can follow: at most this many terms a line (d_k for a
 * dot product, S for a sum) and this many lines in all. */
#define ARITH_MAX_TERMS 16
#define ARITH_MAX_LINES 1000

/* ------------------------------------------------------------- numbers */

/* x as a stage value: with the format's digits. */
static const char *
num(const struct printer *p, char *buf, double x)
{
	print_number(p, buf, x);
	return buf;
}

/* x as an intermediate no table shows: one digit more. */
static const char *
num_more(const struct printer *p, char *buf, double x)
{
	int d = p->o->digits;

	attn_format_number(buf, x, d == 0 || d >= 17 ? d : d + 1,
	    p->numflags);
	return buf;
}

/* x as a factor of a product: negative numbers in parentheses, as
 * 1x(-2). */
static void
put_factor(const struct printer *p, double x)
{
	char buf[ATTN_NUM_MAX];

	num(p, buf, x);
	fprintf(p->fp, x < 0.0 ? "(%s)" : "%s", buf);
}

/* " + x" or " - |x|": a term added to what is written before it. */
static void
put_term(const struct printer *p, double x, int more)
{
	char buf[ATTN_NUM_MAX];

	if (more)
		num_more(p, buf, fabs(x));
	else
		num(p, buf, fabs(x));
	fprintf(p->fp, " %c %s", signbit(x) ? '-' : '+', buf);
}

/* ---------------------------------------------------------------- blocks */

/* What batch b and query head h read: their stages and inputs, by batch
 * and head whatever the layout (which only changes how the blocks of a
 * stage are numbered: attn_shape_block_where). */
struct arith_block {
	size_t b, h;
	struct attn_head_inputs in;
	struct attn_matrix scores, scaled, weights, mask, row_max, row_sum,
	    lse;
};

static void
arith_block(const struct printer *p, size_t b, size_t h,
    struct arith_block *a)
{
	const struct attn_stages *stages = p->stages;

	a->b = b;
	a->h = h;
	attn_head_inputs(stages, p->in, b, h, &a->in);
	a->scores = attn_stage_block(stages, ATTN_STAGE_SCORES, b, h);
	a->scaled = attn_stage_block(stages, ATTN_STAGE_SCALED, b, h);
	a->weights = attn_stage_block(stages, ATTN_STAGE_WEIGHTS, b, h);
	a->mask = attn_stage_block(stages, ATTN_STAGE_MASK, b, h);
	a->row_max = attn_stage_block(stages, ATTN_STAGE_ROW_MAX, b, h);
	a->row_sum = attn_stage_block(stages, ATTN_STAGE_ROW_SUM, b, h);
	a->lse = attn_stage_block(stages, ATTN_STAGE_LSE, b, h);
}

/* What column j of block n of stage s reads: the batch and head it
 * belongs to, and in *col its column within the head. */
static void
arith_block_of(const struct printer *p, enum attn_stage s, size_t n,
    size_t j, struct arith_block *a, size_t *col)
{
	struct attn_where w;

	attn_shape_block_where(p->stages, s, n, 0, j, &w);
	arith_block(p, w.batch, w.head, a);
	*col = w.col;
}

/* Whether query i may attend key j. */
static int
kept(const struct arith_block *a, size_t i, size_t j)
{
	return *attn_at(&a->mask, i, j) != 0.0;
}

/* Whether row i has a softmax: some key, and no nan. */
static int
has_softmax(const struct arith_block *a, size_t i)
{
	double max = *attn_at(&a->row_max, i, 0);

	return !isnan(max) && max != -INFINITY;
}

/* The exponential of entry (i, j) after the shift, which no stage
 * keeps: the kernel's own expression on the same doubles. */
static double
shifted_exp(const struct arith_block *a, size_t i, size_t j)
{
	return exp(*attn_at(&a->scaled, i, j) - *attn_at(&a->row_max, i, 0));
}

/* ----------------------------------------------------------------- lines */

/* "q1.k1 = 1x1 + 0x0 = 1": the score of query i and key j. */
static void
arith_dot(const struct printer *p, const struct arith_block *a, size_t i,
    size_t j)
{
	char buf[ATTN_NUM_MAX];
	size_t c;

	fprintf(p->fp, "%s.%s =", p->nm->query[i], p->nm->key[j]);
	for (c = 0; c < a->in.q.cols; c++) {
		fputs(c > 0 ? " + " : " ", p->fp);
		put_factor(p, *attn_at(&a->in.q, i, c));
		putc('x', p->fp);
		put_factor(p, *attn_at(&a->in.k, j, c));
	}
	fprintf(p->fp, " = %s\n", num(p, buf, *attn_at(&a->scores, i, j)));
}

/* "q1.k1: 1 x 0.707 = 0.707": scaled from the score, with the softcap,
 * bias and ALiBi in their order. */
static void
arith_scaled(const struct printer *p, const struct arith_block *a,
    size_t i, size_t j)
{
	const struct attn_config *c = &p->o->cfg;
	char buf[ATTN_NUM_MAX], cap[ATTN_NUM_MAX];

	fprintf(p->fp, "%s.%s: ", p->nm->query[i], p->nm->key[j]);
	if (!kept(a, i, j)) {
		fputs("masked\n", p->fp);
		return;
	}
	if (c->softcap > 0.0)
		fprintf(p->fp, "%s tanh(", num(p, cap, c->softcap));
	put_factor(p, *attn_at(&a->scores, i, j));
	fprintf(p->fp, " x %s", num(p, buf, p->stages->scale));
	if (c->softcap > 0.0)
		fprintf(p->fp, " / %s)", cap);
	if (a->in.bias.data != NULL)
		put_term(p, attn_input_at(&a->in.bias, i, j), 0);
	if (c->alibi) {
		/* query i sits at key position i + offset (attn(1),
		 * Positions and alignment), within its sequence when
		 * they are packed */
		struct attn_row_place at;

		attn_row_place(c, p->in, print_queries(p), p->stages->S, a->b,
		    print_query_row(p, i), &at);
		fprintf(p->fp, " - %s x |%lld - %lld|", num(p, buf,
		    attn_run_slope(c, p->in, a->b, a->h, p->stages->heads)),
		    at.qpos,
		    (long long)j - (long long)at.k0);
	}
	fprintf(p->fp, " = %s\n", num(p, buf, *attn_at(&a->scaled, i, j)));
}

/* The head line of the softmax of row i: its maximum, or why it has
 * no softmax. */
static void
arith_row(const struct printer *p, const struct arith_block *a, size_t i)
{
	double max = *attn_at(&a->row_max, i, 0);
	char buf[ATTN_NUM_MAX];

	fprintf(p->fp, "softmax of row %s: ", p->nm->query[i]);
	if (isnan(max))
		fputs("a nan among its logits makes every weight nan\n",
		    p->fp);
	else if (max == -INFINITY)
		fprintf(p->fp, "every key is masked, so there is no softmax: "
		    "--masked-rows %s gives its weights\n",
		    words_masked_rows[p->o->cfg.masked_rows]);
	else
		fprintf(p->fp, "subtract the maximum %s, exponentiate, divide "
		    "by the sum\n", num(p, buf, max));
}

/* "k1: exp(0.707 - 0.707) = exp(0) = 1", or "k3: masked". */
static void
arith_exp(const struct printer *p, const struct arith_block *a, size_t i,
    size_t j)
{
	double x = *attn_at(&a->scaled, i, j), max = *attn_at(&a->row_max, i,
	    0);
	char b1[ATTN_NUM_MAX], b2[ATTN_NUM_MAX], b3[ATTN_NUM_MAX],
	    b4[ATTN_NUM_MAX];

	if (!kept(a, i, j)) {
		fprintf(p->fp, "%s: masked\n", p->nm->key[j]);
		return;
	}
	fprintf(p->fp, "%s: exp(%s - %s) = exp(%s) = %s\n", p->nm->key[j],
	    num(p, b1, x), num(p, b2, max), num(p, b3, x - max),
	    num_more(p, b4, shifted_exp(a, i, j)));
}

/* Whether the run has sinks, and the sink of block a's head. */
static int
has_sink(const struct printer *p)
{
	return p->stages->sinks.data != NULL;
}

static double
sink_of(const struct printer *p, const struct arith_block *a)
{
	return *attn_at(&p->stages->sinks, 0, a->h);
}

/* With sinks, "sink: exp(0 - 0.707) = exp(-0.707) = 0.4931": the sink's
 * term of row i's sum, a logit with no key and no value. */
static void
arith_sink_exp(const struct printer *p, const struct arith_block *a,
    size_t i)
{
	const double s = sink_of(p, a), max = *attn_at(&a->row_max, i, 0);
	char b1[ATTN_NUM_MAX], b2[ATTN_NUM_MAX], b3[ATTN_NUM_MAX],
	    b4[ATTN_NUM_MAX];

	fprintf(p->fp, "sink: exp(%s - %s) = exp(%s) = %s\n", num(p, b1, s),
	    num(p, b2, max), num(p, b3, s - max), num_more(p, b4,
	    exp(s - max)));
}

/* "sum = 1 + 0.4931 = 1.493": row_sum, over the keys not masked (and
 * the sink's term, with sinks). */
static void
arith_sum(const struct printer *p, const struct arith_block *a, size_t i)
{
	char buf[ATTN_NUM_MAX];
	size_t j, terms = 0;

	fputs("sum =", p->fp);
	if (has_sink(p)) {
		fprintf(p->fp, " %s", num_more(p, buf, exp(sink_of(p, a) -
		    *attn_at(&a->row_max, i, 0))));
		terms++;
	}
	for (j = 0; j < a->scaled.cols; j++)
		if (kept(a, i, j)) {
			if (terms++ == 0)
				fprintf(p->fp, " %s", num_more(p, buf,
				    shifted_exp(a, i, j)));
			else
				put_term(p, shifted_exp(a, i, j), 1);
		}
	if (terms > 1)
		fprintf(p->fp, " = %s", num_more(p, buf,
		    *attn_at(&a->row_sum, i, 0)));
	putc('\n', p->fp);
}

/* "k1: 1 / 1.493 = 0.670": weight (i, j) as a fraction. */
static void
arith_weight(const struct printer *p, const struct arith_block *a,
    size_t i, size_t j)
{
	char b1[ATTN_NUM_MAX], b2[ATTN_NUM_MAX], b3[ATTN_NUM_MAX];

	if (!kept(a, i, j)) {
		fprintf(p->fp, "%s: masked, weight 0\n", p->nm->key[j]);
		return;
	}
	fprintf(p->fp, "%s: %s / %s = %s\n", p->nm->key[j],
	    num_more(p, b1, shifted_exp(a, i, j)),
	    num_more(p, b2, *attn_at(&a->row_sum, i, 0)),
	    num(p, b3, *attn_at(&a->weights, i, j)));
}

/*
 * The textbook form of row i, without subtracting the maximum:
 * "without the shift: exp(0.707) = 2.028, exp(0) = 1; sum = 3.028 =
 * exp(lse); 2.028 / 3.028 = 0.670, 1 / 3.028 = 0.330".  Left out when
 * exp would overflow, which is why attn subtracts the maximum.
 */
static void
arith_unshifted(const struct printer *p, const struct arith_block *a,
    size_t i)
{
	const double sum = exp(attn_lse_natural(p->stages,
	    *attn_at(&a->lse, i, 0)));
	char b1[ATTN_NUM_MAX], b2[ATTN_NUM_MAX], b3[ATTN_NUM_MAX];
	const char *sep = "";
	size_t j;

	if (!isfinite(sum)) {
		fputs("(without subtracting the maximum, exp would overflow "
		    "here)\n", p->fp);
		return;
	}
	fputs("the same without subtracting the maximum:", p->fp);
	if (has_sink(p)) {
		fprintf(p->fp, "%s exp(sink %s) = %s", sep, num(p, b1,
		    sink_of(p, a)), num_more(p, b2, exp(sink_of(p, a))));
		sep = ",";
	}
	for (j = 0; j < a->scaled.cols; j++)
		if (kept(a, i, j)) {
			double x = *attn_at(&a->scaled, i, j);

			fprintf(p->fp, "%s exp(%s) = %s", sep, num(p, b1, x),
			    num_more(p, b2, exp(x)));
			sep = ",";
		}
	fprintf(p->fp, "; sum = %s = %s;", p->stages->lse_base == ATTN_LSE_2 ?
	    "2^lse" : "exp(lse)", num_more(p, b1, sum));
	sep = "";
	for (j = 0; j < a->scaled.cols; j++)
		if (kept(a, i, j)) {
			fprintf(p->fp, "%s %s / %s = %s", sep, num_more(p, b1,
			    exp(*attn_at(&a->scaled, i, j))), num_more(p, b2,
			    sum), num(p, b3, *attn_at(&a->weights, i, j)));
			sep = ",";
		}
	putc('\n', p->fp);
}

/* "q1[1] = 0.670 x 10 + 0.330 x 0 = 6.70": component c of head h's
 * output of query i, over the keys it may attend; label names the
 * column as the output's table does. */
static void
arith_output(const struct printer *p, const struct arith_block *a,
    size_t i, size_t c, const char *label)
{
	const struct attn_matrix out = attn_stage_block(p->stages,
	    ATTN_STAGE_OUTPUT, a->b, a->h);
	char buf[ATTN_NUM_MAX];
	size_t j, terms = 0;

	fprintf(p->fp, "%s[%s] =", p->nm->query[i], label);
	if (!has_softmax(a, i)) {
		fprintf(p->fp, " %s (no key may be attended: --masked-rows "
		    "%s)\n", num(p, buf, *attn_at(&out, i, c)),
		    words_masked_rows[p->o->cfg.masked_rows]);
		return;
	}
	for (j = 0; j < a->weights.cols; j++) {
		if (!kept(a, i, j))
			continue;
		fputs(terms++ > 0 ? " + " : " ", p->fp);
		put_factor(p, *attn_at(&a->weights, i, j));
		fputs(" x ", p->fp);
		put_factor(p, *attn_at(&a->in.v, j, c));
	}
	fprintf(p->fp, " = %s", num(p, buf, *attn_at(&out, i, c)));
	if (terms < a->weights.cols)
		fprintf(p->fp, " (%zu masked key%s left out)",
		    a->weights.cols - terms,
		    a->weights.cols - terms == 1 ? "" : "s");
	putc('\n', p->fp);
}

/* "q1: lse = 0.707 + log(1.493) = 1.11": from row_max and row_sum. */
static void
arith_lse(const struct printer *p, const struct arith_block *a, size_t i)
{
	char b1[ATTN_NUM_MAX], b2[ATTN_NUM_MAX], b3[ATTN_NUM_MAX];

	fprintf(p->fp, "%s: ", p->nm->query[i]);
	if (!has_softmax(a, i))
		fprintf(p->fp, "no softmax, lse = %s\n", num(p, b1,
		    *attn_at(&a->lse, i, 0)));
	else
		fprintf(p->fp, "lse = %smax + log(sum)%s = %s%s + log(%s)%s = "
		    "%s\n", p->stages->lse_base == ATTN_LSE_2 ? "(" : "",
		    p->stages->lse_base == ATTN_LSE_2 ? ") / log(2)" : "",
		    p->stages->lse_base == ATTN_LSE_2 ? "(" : "",
		    num(p, b1, *attn_at(&a->row_max, i, 0)), num_more(p, b2,
		    *attn_at(&a->row_sum, i, 0)),
		    p->stages->lse_base == ATTN_LSE_2 ? ") / log(2)" : "",
		    num(p, b3, *attn_at(&a->lse, i, 0)));
}

/* ------------------------------------------------------------- printers */

/* The softmax of row i, line by line. */
static void
arith_softmax(const struct printer *p, const struct arith_block *a,
    size_t i, const char *ind)
{
	size_t j, S = a->scaled.cols;

	fputs(ind, p->fp);
	arith_row(p, a, i);
	if (!has_softmax(a, i))
		return;
	if (has_sink(p)) {
		fprintf(p->fp, "%s  ", ind);
		arith_sink_exp(p, a, i);
	}
	for (j = 0; j < S; j++) {
		fprintf(p->fp, "%s  ", ind);
		arith_exp(p, a, i, j);
	}
	fprintf(p->fp, "%s  ", ind);
	arith_sum(p, a, i);
	for (j = 0; j < S; j++) {
		fprintf(p->fp, "%s  ", ind);
		arith_weight(p, a, i, j);
	}
	fprintf(p->fp, "%s  ", ind);
	arith_unshifted(p, a, i);
}

enum attn_status
print_arith_check(const struct printer *p, struct attn_error *err)
{
	const struct attn_stages *stages = p->stages;
	double lines = (double)stages->batches * (double)stages->heads *
	    (double)stages->T * (4.0 * (double)stages->S +
	    (double)stages->d_v + 4.0);

	if (stages->d_k > ARITH_MAX_TERMS)
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "--arithmetic writes every product out, and a dot product "
		    "here has d_k = %zu terms (at most %d): give Q and K "
		    "fewer columns, or split them with --heads", stages->d_k,
		    ARITH_MAX_TERMS);
	if (stages->S > ARITH_MAX_TERMS)
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "--arithmetic writes every term out, and each softmax "
		    "here sums S = %zu keys (at most %d): give fewer keys",
		    stages->S, ARITH_MAX_TERMS);
	if (lines > ARITH_MAX_LINES)
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "--arithmetic would write %.0f lines here (at most %d): "
		    "give fewer keys, heads or batches, or choose queries "
		    "with --query I,J..", lines,
		    ARITH_MAX_LINES);
	return ATTN_OK;
}

int
print_arith_has(enum attn_stage s)
{
	return s == ATTN_STAGE_SCORES || s == ATTN_STAGE_SCALED ||
	    s == ATTN_STAGE_WEIGHTS || s == ATTN_STAGE_OUTPUT ||
	    s == ATTN_STAGE_LSE;
}

void
print_arith_block(const struct printer *p, enum attn_stage s, size_t n)
{
	const char *ind = "  ";
	char label[PRINT_LABEL_MAX];
	struct attn_shape sh;
	struct arith_block a;
	size_t i, j, j0, c, width;

	if (!print_arith_has(s))
		return;

	/* a block of output holds the heads side by side in its columns
	 * (or, in bhsd, is one head): each head's in turn */
	attn_stage_shape(p->stages, s, &sh);
	width = sh.cols / sh.col_heads;
	for (j0 = 0; j0 < sh.cols; j0 += width) {
		arith_block_of(p, s, n, j0, &a, &c);
		for (i = 0; i < p->stages->T; i++)
			switch (s) {
			case ATTN_STAGE_SCORES:
			case ATTN_STAGE_SCALED:
				for (j = 0; j < p->stages->S; j++) {
					fputs(ind, p->fp);
					if (s == ATTN_STAGE_SCORES)
						arith_dot(p, &a, i, j);
					else
						arith_scaled(p, &a, i, j);
				}
				break;
			case ATTN_STAGE_WEIGHTS:
				arith_softmax(p, &a, i, ind);
				break;
			case ATTN_STAGE_OUTPUT:
				for (c = 0; c < width; c++) {
					fputs(ind, p->fp);
					arith_output(p, &a, i, c,
					    print_col_label(p, s, n, j0 + c,
					    label));
				}
				break;
			case ATTN_STAGE_LSE:
				fputs(ind, p->fp);
				arith_lse(p, &a, i);
				break;
			default:
				break;
			}
	}
}

void
print_arith_cell(const struct printer *p, enum attn_stage s, size_t n,
    size_t i, size_t j)
{
	char label[PRINT_LABEL_MAX];
	struct arith_block a;
	size_t c;

	if (!print_arith_has(s))
		return;

	arith_block_of(p, s, n, j, &a, &c);
	switch (s) {
	case ATTN_STAGE_SCORES:
		arith_dot(p, &a, i, j);
		break;
	case ATTN_STAGE_SCALED:
		arith_dot(p, &a, i, j);
		arith_scaled(p, &a, i, j);
		break;
	case ATTN_STAGE_WEIGHTS:
		arith_dot(p, &a, i, j);
		arith_scaled(p, &a, i, j);
		arith_row(p, &a, i);
		if (!has_softmax(&a, i))
			break;
		if (has_sink(p))
			arith_sink_exp(p, &a, i);
		arith_exp(p, &a, i, j);
		arith_sum(p, &a, i);
		arith_weight(p, &a, i, j);
		break;
	case ATTN_STAGE_OUTPUT:
		/* column c of the head that column j of block n is */
		arith_output(p, &a, i, c, print_col_label(p, s, n, j, label));
		break;
	case ATTN_STAGE_LSE:
		arith_lse(p, &a, i);
		break;
	default:
		break;
	}
}
