/*
 * compare.c - a candidate array against attn's reference: the numbers
 * allclose looks at, the ones it does not, and a verdict.
 *
 * Why more than allclose.  numpy.allclose passes an element when
 * |a - b| <= atol + rtol * |b|: the tolerance grows with the size of the
 * values, not with how much they vary.  Attention squeezes variation:
 * output rows are weighted means of V's rows, so they cluster around the
 * mean of V, and weights cluster around 1/S.  When the values sit far
 * from 0 compared to their spread (V with an offset, near-uniform
 * attention), every element of a constant array, of the reference
 * shuffled, or of the reference transposed is within rtol of its
 * neighbour, and allclose passes a kernel that computed nothing.  The
 * verdict adds the spread test where that can happen: when the element
 * test would pass the mean of the reference in every place (its
 * tolerances are too loose to tell a constant from the reference), the
 * result must also follow how the reference varies, its RMS error at
 * most a tenth of the reference's standard deviation (plus atol).  A
 * constant misses by the whole standard deviation, a shuffled result by
 * about 1.4 of it, a transposed one or the rows reversed by a good part
 * of it, while a correct result misses by rounding, far below.  Where
 * the element test does tell a constant apart, the spread test does not
 * apply: it never fails a result that rtol and atol pass and that a
 * constant would not pass (values near 1000 varying by 0.5, a float32
 * result within rtol 1e-4: the element test decides).  Errors are
 * measured as RMS rather than their maximum, so that one element
 * rounded unluckily does not decide.  The Pearson correlation is
 * reported too (a constant candidate has none), as the same fact in the
 * words statisticians use.  atol stays an absolute floor in both tests:
 * a reference that barely varies is checked to atol, and values below
 * atol are not checked at all (weights are about 1/S: atol must be below
 * that to check them).
 *
 * With an emulated baseline (lib/emulate.c) the verdict is
 * FlashAttention's: the candidate's largest error at most factor times
 * the baseline's (plus atol, so that an exact baseline does not ask for
 * an exact candidate).  In every verdict a nan or an infinity on one side
 * only fails.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"

/* Whether a pair counts as equal although one side is not finite: the
 * same infinity, or nan on both sides (a row attn makes nan). */
static int
same_nonfinite(double a, double b)
{
	return (isnan(a) && isnan(b)) || (isinf(a) && a == b);
}

/*
 * The two passes go LANES elements at a time: element i is lane
 * i % LANES's, each lane keeps its own sums, extremes and counts, and the
 * lanes are put together in one fixed order at the end.  So every figure
 * is the same on every machine and thread count, a sum is LANES chains
 * of additions rather than one (whose latency bounded the loop that
 * kept one running total: bench/README.md), and a block of LANES pairs
 * that are all finite is one loop without a branch over arrays of
 * LANES, which the compiler vectorises (ATTN_V3_CLONES).  The extremes
 * are the plain loop's: of equal errors the first in index order is the
 * worst, and a reference whose least (greatest) value is a zero of both
 * signs has -0 (+0) for it.
 */
#define LANES 8

struct lanes {
	double sum_a[LANES], sum_b[LANES];
	double max_abs[LANES], max_rel[LANES];
	double ref_min[LANES], ref_max[LANES], cand_min[LANES], cand_max[LANES];
	size_t worst[LANES], failing[LANES], finite[LANES];
	uint64_t neg_zero[LANES], pos_zero[LANES];
	/* the second pass's */
	double sab[LANES], saa[LANES], sbb[LANES], see[LANES];
	int blind[LANES];
};

/* Pair i, finite on both sides, into lane l of s (the first pass). */
static inline void
first_pair(double a, double b, size_t i, size_t l, double rtol, double atol,
    struct lanes *restrict s)
{
	const double d = fabs(a - b), ab = fabs(b), q = d / ab;
	/* d / |b|: infinite for b 0, 0 for d 0 (made whatever b, so that
	 * the loop has no branch) */
	const double r = d == 0 ? 0 : q;
	uint64_t bits;

	s->failing[l] += d <= atol + rtol * ab ? 0 : 1;
	s->worst[l] = d > s->max_abs[l] ? i : s->worst[l];
	s->max_abs[l] = d > s->max_abs[l] ? d : s->max_abs[l];
	s->max_rel[l] = r > s->max_rel[l] ? r : s->max_rel[l];
	s->ref_min[l] = b < s->ref_min[l] ? b : s->ref_min[l];
	s->ref_max[l] = b > s->ref_max[l] ? b : s->ref_max[l];
	s->cand_min[l] = a < s->cand_min[l] ? a : s->cand_min[l];
	s->cand_max[l] = a > s->cand_max[l] ? a : s->cand_max[l];
	/* a zero's sign, which < and > do not see: the sign bit of
	 * neg_zero set by a -0 in the reference, of pos_zero by a +0 */
	memcpy(&bits, &b, sizeof bits);
	s->neg_zero[l] |= b == 0 ? bits : 0;
	s->pos_zero[l] |= b == 0 ? ~bits : 0;
	s->sum_a[l] += a;
	s->sum_b[l] += b;
	s->finite[l]++;
}

/* LANES pairs from i on, all finite (the first pass). */
ATTN_V3_CLONES static void
first_block(const double *restrict a, const double *restrict b, size_t i,
    double rtol, double atol, struct lanes *restrict s)
{
	size_t l;

	for (l = 0; l < LANES; l++)
		first_pair(a[l], b[l], i + l, l, rtol, atol, s);
}

/* Pair i, finite, into lane l (the second pass, with the means). */
static inline void
second_pair(double a, double b, size_t l, double mean_a, double mean_b,
    double rtol, double atol, struct lanes *restrict s)
{
	const double da = a - mean_a, db = b - mean_b;

	s->sab[l] += da * db;
	s->saa[l] += da * da;
	s->sbb[l] += db * db;
	s->see[l] += (a - b) * (a - b);
	s->blind[l] &= fabs(db) <= atol + rtol * fabs(b);
}

ATTN_V3_CLONES static void
second_block(const double *restrict a, const double *restrict b,
    double mean_a, double mean_b, double rtol, double atol,
    struct lanes *restrict s)
{
	size_t l;

	for (l = 0; l < LANES; l++)
		second_pair(a[l], b[l], l, mean_a, mean_b, rtol, atol, s);
}

/* Whether the LANES pairs at a and b are all finite. */
static int
block_finite(const double *a, const double *b)
{
	int ok = 1;
	size_t l;

	for (l = 0; l < LANES; l++)
		ok &= fabs(a[l]) <= DBL_MAX && fabs(b[l]) <= DBL_MAX;
	return ok;
}

/* The lanes' sums of x, in one order: pairs, then pairs of pairs. */
static double
lane_sum(const double *x)
{
	double t[LANES];
	size_t l, w;

	memcpy(t, x, sizeof t);
	for (w = 1; w < LANES; w *= 2)
		for (l = 0; l + w < LANES; l += 2 * w)
			t[l] += t[l + w];
	return t[0];
}

void
attn_compare(const double *cand, const double *ref, size_t n, double rtol,
    double atol, struct attn_compare *c)
{
	struct lanes s;
	double mean_a = 0, mean_b = 0, cand_min = INFINITY,
	    cand_max = -INFINITY;
	size_t i, l, nonfinite = 0;
	uint64_t zeros_neg = 0, zeros_pos = 0;
	int blind = 1;		/* the element test would pass the mean */

	memset(c, 0, sizeof *c);
	memset(&s, 0, sizeof s);
	c->count = n;
	c->rtol = rtol;
	c->atol = atol;
	c->worst = n;
	c->ref_min = INFINITY;
	c->ref_max = -INFINITY;
	for (l = 0; l < LANES; l++) {
		s.ref_min[l] = s.cand_min[l] = INFINITY;
		s.ref_max[l] = s.cand_max[l] = -INFINITY;
		s.worst[l] = n;
		s.blind[l] = 1;
	}
	for (i = 0; i < n; i += LANES) {
		if (n - i >= LANES && block_finite(cand + i, ref + i)) {
			first_block(cand + i, ref + i, i, rtol, atol, &s);
			continue;
		}
		for (l = 0; l < LANES && i + l < n; l++) {
			const double a = cand[i + l], b = ref[i + l];

			if (isfinite(a) && isfinite(b))
				first_pair(a, b, i + l, l, rtol, atol, &s);
			else if (!same_nonfinite(a, b)) {
				if (nonfinite++ == 0)
					c->first_nonfinite = i + l;
				c->failing++;
			}
		}
	}
	for (l = 0; l < LANES; l++) {
		c->finite += s.finite[l];
		c->failing += s.failing[l];
		if (s.max_abs[l] > c->max_abs || (s.max_abs[l] == c->max_abs &&
		    s.worst[l] < c->worst)) {
			c->max_abs = s.max_abs[l];
			c->worst = s.worst[l];
		}
		c->max_rel = s.max_rel[l] > c->max_rel ? s.max_rel[l] :
		    c->max_rel;
		c->ref_min = s.ref_min[l] < c->ref_min ? s.ref_min[l] :
		    c->ref_min;
		c->ref_max = s.ref_max[l] > c->ref_max ? s.ref_max[l] :
		    c->ref_max;
		cand_min = s.cand_min[l] < cand_min ? s.cand_min[l] : cand_min;
		cand_max = s.cand_max[l] > cand_max ? s.cand_max[l] : cand_max;
		zeros_neg |= s.neg_zero[l];
		zeros_pos |= s.pos_zero[l];
	}
	if (c->ref_min == 0)
		c->ref_min = zeros_neg >> 63 ? -0.0 : 0.0;
	if (c->ref_max == 0)
		c->ref_max = zeros_pos >> 63 ? 0.0 : -0.0;
	c->nonfinite = nonfinite;
	/* A nan or infinity on one side is the worst there is. */
	if (c->nonfinite > 0)
		c->worst = c->first_nonfinite;
	if (c->finite == 0) {
		c->ref_min = c->ref_max = 0;
		c->corr = NAN;
	} else {
		/* Two passes, the means first, so that an offset far from 0
		 * costs no digits. */
		mean_a = lane_sum(s.sum_a) / (double)c->finite;
		mean_b = lane_sum(s.sum_b) / (double)c->finite;
		for (i = 0; i < n; i += LANES) {
			if (n - i >= LANES && (c->finite == n ||
			    block_finite(cand + i, ref + i))) {
				second_block(cand + i, ref + i, mean_a, mean_b,
				    rtol, atol, &s);
				continue;
			}
			for (l = 0; l < LANES && i + l < n; l++)
				if (isfinite(cand[i + l]) &&
				    isfinite(ref[i + l]))
					second_pair(cand[i + l], ref[i + l], l,
					    mean_a, mean_b, rtol, atol, &s);
		}
		for (l = 0; l < LANES; l++)
			blind &= s.blind[l];
		c->rms_abs = sqrt(lane_sum(s.see) / (double)c->finite);
		c->ref_mean = mean_b;
		c->ref_std = sqrt(lane_sum(s.sbb) / (double)c->finite);
		/* No correlation with a side that does not vary (told by
		 * its extremes: a mean rounds, so deviations from it may
		 * not be 0). */
		c->corr = cand_min < cand_max && c->ref_min < c->ref_max &&
		    lane_sum(s.saa) > 0 && c->ref_std > 0 ?
		    lane_sum(s.sab) / sqrt(lane_sum(s.saa) * lane_sum(s.sbb)) :
		    NAN;
		/* Rounding may take it a hair past +-1. */
		if (fabs(c->corr) > 1)
			c->corr = copysign(1.0, c->corr);
	}
	c->spread_applies = c->finite > 0 && blind;
	c->spread_bound = atol + ATTN_SPREAD_FRACTION * c->ref_std;
	if (c->nonfinite > 0)
		c->fails |= ATTN_FAIL_NONFINITE;
	if (c->failing > c->nonfinite)
		c->fails |= ATTN_FAIL_ELEMENTS;
	if (c->spread_applies && c->rms_abs > c->spread_bound)
		c->fails |= ATTN_FAIL_SPREAD;
}

void
attn_compare_baseline(struct attn_compare *c, const struct attn_compare *base,
    double factor)
{
	c->factor = factor;
	c->base_max_abs = base->max_abs;
	c->factor_bound = factor * base->max_abs + c->atol;
	/* The baseline sets the precision: rtol and the spread no longer
	 * decide, what they found stays reported. */
	c->fails &= ATTN_FAIL_NONFINITE;
	if (c->max_abs > c->factor_bound)
		c->fails |= ATTN_FAIL_FACTOR;
}
