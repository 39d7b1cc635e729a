/*
 * workbench_vectors.c - the parts of the workbench's screen about what
 * the scores are made of: the vectors (the query's row of Q, each key's
 * row of K, whose dot product is its score, and of V where it fits) and
 * the spread of the head's scores against sqrt(d_k), the variance
 * argument for the scaling: the dot product of q and k whose d_k
 * components are independent, of mean 0 and variance 1, has variance
 * d_k, so its standard deviation grows like sqrt(d_k) and the scaled
 * logits' stays near 1.
 *
 * The vectors are those the kernel read (attn_head_inputs: after a
 * projection layer or RoPE, the stages they made); the spread is of the
 * scores and scaled stages.  Numbers are written as the table writes
 * them (print_number).  workbench_screen.c places both parts.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attn.h"
#include "print.h"
#include "workbench.h"

/* The most columns of Q and K a line shows. */
#define VEC_MAX 256

/* The columns of text of x as the table writes it. */
static size_t
text_width(const struct printer *p, double x)
{
	char buf[ATTN_NUM_MAX];

	return print_number(p, buf, x);
}

/* How many of the first columns fit in avail columns, of ncols, when
 * colw[c] is the widest text of column c (of the cand there are): each
 * column as wide as the widest of those shown, after a blank, and " …"
 * after them when some are left out; *w is that width. */
static size_t
fit(const size_t *colw, size_t cand, size_t ncols, size_t avail, size_t *w)
{
	size_t n, wide = 0;

	for (n = 0; n < cand; n++) {
		const size_t w2 = colw[n] > wide ? colw[n] : wide;

		if ((n + 1) * (1 + w2) + (n + 1 < ncols ? 2 : 0) > avail)
			break;
		wide = w2;
	}
	*w = wide;
	return n;
}

/* Row i of m: the first n numbers, each right-aligned in w columns after
 * a blank, and " …" when m has more. */
static void
put_row(struct sb *b, const struct printer *p, const struct attn_matrix *m,
    size_t i, size_t n, size_t w)
{
	char buf[ATTN_NUM_MAX];
	size_t c;

	for (c = 0; c < n; c++) {
		print_number(p, buf, *attn_at(m, i, c));
		sb_to(b, b->col + 1 + w - strlen(buf));
		sb_put(b, buf);
	}
	if (n < m->cols)
		sb_put(b, " \u2026");
}

void
wb_vectors(const struct workbench *wb, const struct printer *p,
    struct sb *b, size_t nkeys)
{
	const size_t H = wb->stages.heads;
	struct attn_head_inputs hi;
	size_t colw[VEC_MAX], lw, w, vw = 0, x0, room, vpart, cand, n, j, c;

	attn_head_inputs(&wb->stages, &wb->in.in, wb->block / H,
	    wb->block % H, &hi);
	lw = sb_label_width(wb->nm.query[wb->query]);
	for (j = 0; j < nkeys; j++)
		if (sb_label_width(wb->nm.key[j]) > lw)
			lw = sb_label_width(wb->nm.key[j]);
	x0 = 2 + lw;		/* "q " or "k ", the label */
	room = b->scr->cols > x0 ? b->scr->cols - x0 : 0;
	/* the widest text of each column that may show (at two columns a
	 * number at least), and of V */
	cand = room / 2 < hi.q.cols ? room / 2 : hi.q.cols;
	cand = cand < VEC_MAX ? cand : VEC_MAX;
	for (c = 0; c < cand; c++) {
		colw[c] = text_width(p, *attn_at(&hi.q, wb->query, c));
		for (j = 0; j < nkeys; j++)
			if (text_width(p, *attn_at(&hi.k, j, c)) > colw[c])
				colw[c] = text_width(p, *attn_at(&hi.k, j, c));
	}
	for (j = 0; j < nkeys; j++)
		for (c = 0; c < hi.v.cols; c++)
			if (text_width(p, *attn_at(&hi.v, j, c)) > vw)
				vw = text_width(p, *attn_at(&hi.v, j, c));
	/* V's row ("   v" and its numbers) where a column of Q fits with
	 * it; then as many of Q's and K's columns as fit */
	vpart = 4 + hi.v.cols * (1 + vw);
	n = room > vpart ? fit(colw, cand, hi.q.cols, room - vpart, &w) : 0;
	if (n == 0) {
		vpart = 0;
		n = fit(colw, cand, hi.q.cols, room, &w);
	}
	sb_put(b, "q ");
	sb_label(b, wb->nm.query[wb->query]);
	sb_to(b, x0);
	put_row(b, p, &hi.q, wb->query, n, w);
	sb_end(b);
	for (j = 0; j < nkeys; j++) {
		sb_put(b, "k ");
		sb_label(b, wb->nm.key[j]);
		sb_to(b, x0);
		put_row(b, p, &hi.k, j, n, w);
		if (vpart > 0) {
			sb_to(b, x0 + room - vpart);
			sb_put(b, "   v");
			put_row(b, p, &hi.v, j, hi.v.cols, vw);
		}
		sb_end(b);
	}
}

/* The standard deviation of the kept, finite entries of block m of
 * stage s (the population's: the mean of the squares about the mean);
 * NaN when there is none. */
static double
block_sd(const struct printer *p, enum attn_stage s, size_t block)
{
	const struct attn_matrix m = print_block(p, s, block);
	const struct attn_matrix mask = print_block(p, ATTN_STAGE_MASK, block);
	double sum = 0.0, sq = 0.0, mean, x;
	size_t i, j, n = 0;

	for (i = 0; i < m.rows; i++)
		for (j = 0; j < m.cols; j++)
			if (*attn_at(&mask, i, j) != 0.0 &&
			    isfinite(x = *attn_at(&m, i, j))) {
				sum += x;
				n++;
			}
	if (n == 0)
		return NAN;
	mean = sum / (double)n;
	for (i = 0; i < m.rows; i++)
		for (j = 0; j < m.cols; j++)
			if (*attn_at(&mask, i, j) != 0.0 &&
			    isfinite(x = *attn_at(&m, i, j)))
				sq += (x - mean) * (x - mean);
	return sqrt(sq / (double)n);
}

void
wb_spread(const struct workbench *wb, const struct printer *p,
    struct sb *b)
{
	const double sd = block_sd(p, ATTN_STAGE_SCORES, wb->block);
	const double sds = block_sd(p, ATTN_STAGE_SCALED, wb->block);
	char a[ATTN_NUM_MAX], r[ATTN_NUM_MAX], c[ATTN_NUM_MAX];

	if (isnan(sd) || isnan(sds)) {
		sb_line(b, 0, "spread of the head's scores: no key kept");
		return;
	}
	print_number(p, a, sd);
	print_number(p, r, sd / sqrt((double)wb->stages.d_k));
	print_number(p, c, sds);
	sb_line(b, 0, "spread of the head's scores: sd %s = %s sqrt(d_k); "
	    "of scaled: sd %s", a, r, c);
}
