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
#include <math.h>
#include <string.h>

#include "internal.h"

/* Whether a pair counts as equal although one side is not finite: the
 * same infinity, or nan on both sides (a row attn makes nan). */
static int
same_nonfinite(double a, double b)
{
	return (isnan(a) && isnan(b)) || (isinf(a) && a == b);
}

/* Whether d / ab (d > 0, ab >= 0), rounded, may exceed m (>= 0): false
 * only where d lies below m * ab by more than the rounding of the two
 * products can explain (t = m * ab normal, t * (1 - 2^-50) below the exact
 * m * ab: then d / ab < m, and rounded it is at most m), so that the
 * division is made only where it can raise the largest so far. */
static int
rel_may_pass(double d, double ab, double m)
{
	const double t = m * ab;

	return !(t >= 0x1p-1000) || d >= t * (1 - 0x1p-50);
}

void
attn_compare(const double *cand, const double *ref, size_t n, double rtol,
    double atol, struct attn_compare *c)
{
	double mean_a = 0, mean_b = 0, sab = 0, saa = 0, sbb = 0, see = 0;
	int blind = 1;		/* the element test would pass the mean */
	double cand_min = INFINITY, cand_max = -INFINITY;
	/* c's running fields, in locals that no store through cand or ref
	 * can touch (so that they stay in registers) */
	double max_abs = 0, max_rel = 0, ref_min = INFINITY, ref_max = -INFINITY;
	size_t i, finite = 0, failing = 0, nonfinite = 0, worst = n;

	memset(c, 0, sizeof *c);
	c->count = n;
	c->rtol = rtol;
	c->atol = atol;
	for (i = 0; i < n; i++) {
		const double a = cand[i], b = ref[i];
		double d;

		if (!isfinite(a) || !isfinite(b)) {
			if (!same_nonfinite(a, b)) {
				if (nonfinite++ == 0)
					c->first_nonfinite = i;
				failing++;
			}
			continue;
		}
		d = fabs(a - b);
		failing += !(d <= atol + rtol * fabs(b));
		if (d > max_abs) {
			max_abs = d;
			worst = i;
		}
		/* d / |b| (infinite for b 0), 0 for d 0: never above the
		 * largest so far unless rel_may_pass */
		if (d != 0 && rel_may_pass(d, fabs(b), max_rel)) {
			const double r = b == 0 ? INFINITY : d / fabs(b);

			if (r > max_rel)
				max_rel = r;
		}
		ref_min = b < ref_min ? b : ref_min;
		ref_max = b > ref_max ? b : ref_max;
		/* a is finite here: fmin and fmax without their calls */
		cand_min = a < cand_min ? a : cand_min;
		cand_max = a > cand_max ? a : cand_max;
		mean_a += a;
		mean_b += b;
		finite++;
	}
	c->max_abs = max_abs;
	c->max_rel = max_rel;
	c->ref_min = ref_min;
	c->ref_max = ref_max;
	c->failing = failing;
	c->nonfinite = nonfinite;
	c->worst = worst;
	/* A nan or infinity on one side is the worst there is. */
	if (c->nonfinite > 0)
		c->worst = c->first_nonfinite;
	c->finite = finite;
	if (finite == 0) {
		c->ref_min = c->ref_max = 0;
		c->corr = NAN;
	} else {
		/* Two passes, the means first, so that an offset far from 0
		 * costs no digits. */
		mean_a /= (double)finite;
		mean_b /= (double)finite;
		for (i = 0; i < n; i++) {
			double da, db;

			/* every pair finite: nothing to pass over */
			if (finite < n &&
			    (!isfinite(cand[i]) || !isfinite(ref[i])))
				continue;
			da = cand[i] - mean_a;
			db = ref[i] - mean_b;
			sab += da * db;
			saa += da * da;
			sbb += db * db;
			see += (cand[i] - ref[i]) * (cand[i] - ref[i]);
			blind &= fabs(db) <= atol + rtol * fabs(ref[i]);
		}
		c->rms_abs = sqrt(see / (double)finite);
		c->ref_mean = mean_b;
		c->ref_std = sqrt(sbb / (double)finite);
		/* No correlation with a side that does not vary (told by
		 * its extremes: a mean rounds, so deviations from it may
		 * not be 0). */
		c->corr = cand_min < cand_max && c->ref_min < c->ref_max &&
		    saa > 0 && sbb > 0 ? sab / sqrt(saa * sbb) : NAN;
		/* Rounding may take it a hair past +-1. */
		if (fabs(c->corr) > 1)
			c->corr = copysign(1.0, c->corr);
	}
	c->spread_applies = finite > 0 && blind;
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
