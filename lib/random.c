/*
 * random.c - seeded random matrices that are the same on every platform,
 * for `attn gen` and demonstrations ("scores grow with d_k unless
 * scaled") that need no other program.
 *
 * The generator is xoshiro256** (Blackman and Vigna, 2018), its state
 * filled from the seed by splitmix64, as its authors recommend; a uniform
 * double in [0, 1) is the top 53 bits of an output times 2^-53.  Normal
 * numbers come from Marsaglia's polar form of the Box-Muller transform:
 * draw u and v uniform in (-1, 1) until s = u^2 + v^2 lies in (0, 1);
 * then u sqrt(-2 ln s / s) and v sqrt(-2 ln s / s) are two independent
 * standard normal numbers (the matrix takes them in that order, row by
 * row; an odd count drops the last v).
 *
 * Identical on every platform: the libm log is not (its last bit differs
 * between C libraries), so ln s is random_log below, made of frexp (exact)
 * and +, -, *, / alone, which IEEE 754 rounds the same everywhere, as it
 * does sqrt.  That holds where doubles are evaluated as doubles
 * (FLT_EVAL_METHOD 0, every SSE2, ARM64 and RISC-V target) and products
 * are not fused into FMAs: GCC does not fuse in ISO C mode (-std=c11,
 * which the Makefile sets), and the pragma below stops clang.
 */
#include <math.h>

#include "internal.h"

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

/* splitmix64: one step, for seeding (Vigna's splitmix64.c). */
static unsigned long long
splitmix64(unsigned long long *x)
{
	unsigned long long z;

	*x = (*x + 0x9e3779b97f4a7c15ULL) & 0xffffffffffffffffULL;
	z = *x;
	z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL) & 0xffffffffffffffffULL;
	z = ((z ^ (z >> 27)) * 0x94d049bb133111ebULL) & 0xffffffffffffffffULL;
	return z ^ (z >> 31);
}

static unsigned long long
rotl(unsigned long long x, int k)
{
	return ((x << k) | (x >> (64 - k))) & 0xffffffffffffffffULL;
}

void
attn_random_seed(struct attn_random *r, unsigned long long seed)
{
	unsigned long long x = seed & 0xffffffffffffffffULL;
	int i;

	for (i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

/* xoshiro256**: the next 64 bits (Blackman and Vigna's
 * xoshiro256starstar.c; unsigned long long may be wider than 64 bits,
 * hence the masks). */
unsigned long long
attn_random_next(struct attn_random *r)
{
	unsigned long long *s = r->s;
	const unsigned long long out = (rotl((s[1] * 5) &
	    0xffffffffffffffffULL, 7) * 9) & 0xffffffffffffffffULL;
	const unsigned long long t = (s[1] << 17) & 0xffffffffffffffffULL;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return out;
}

double
attn_random_uniform(struct attn_random *r)
{
	return (double)(attn_random_next(r) >> 11) * 0x1.0p-53;
}

/*
 * ln x for x > 0 and finite: x = m 2^e with m in [sqrt(1/2), sqrt(2)),
 * then ln m = 2 atanh(z) = 2 (z + z^3/3 + z^5/5 + ...) with
 * z = (m - 1) / (m + 1), |z| <= 0.1716, whose terms past z^23 are below
 * 2^-53 of the sum; and ln x = e ln 2 + ln m, ln 2 in two parts so that
 * e ln 2 stays exact.  Within a few units in the last place of libm's
 * log (tests/unit/check_random.c), and the same bits everywhere.
 */
double
attn_random_log(double x)
{
	/* ln 2 = LN2_HI + LN2_LO, LN2_HI with its low 32 bits zero, so
	 * that e * LN2_HI is exact for |e| < 2^20 (fdlibm's split). */
	static const double LN2_HI = 6.93147180369123816490e-01;
	static const double LN2_LO = 1.90821492927058770002e-10;
	double m, z, z2, term, sum;
	int e, k;

	m = frexp(x, &e);	/* x = m 2^e, m in [0.5, 1) */
	if (m < 0.70710678118654752440) {
		m *= 2.0;
		e -= 1;
	}
	z = (m - 1.0) / (m + 1.0);
	z2 = z * z;
	/* Horner's rule from the smallest term: 1 + z2/3 + z2^2/5 + ... */
	sum = 0.0;
	for (k = 11; k >= 1; k--) {
		term = 1.0 / (double)(2 * k + 1);
		sum = (sum + term) * z2;
	}
	sum = 2.0 * z * (1.0 + sum);
	return (double)e * LN2_HI + ((double)e * LN2_LO + sum);
}

void
attn_random_fill(struct attn_matrix *m, unsigned long long seed,
    enum attn_dist dist)
{
	struct attn_random r;
	size_t i, j, n = 0;
	double spare = 0.0;

	attn_random_seed(&r, seed);
	for (i = 0; i < m->rows; i++)
		for (j = 0; j < m->cols; j++, n++) {
			double *x = attn_at(m, i, j);
			double u, v, s, f;

			if (dist == ATTN_DIST_UNIFORM) {
				*x = attn_random_uniform(&r);
				continue;
			}
			if (n % 2 == 1) {
				*x = spare;
				continue;
			}
			do {
				u = 2.0 * attn_random_uniform(&r) - 1.0;
				v = 2.0 * attn_random_uniform(&r) - 1.0;
				s = u * u + v * v;
			} while (s >= 1.0 || s == 0.0);
			f = sqrt(-2.0 * attn_random_log(s) / s);
			*x = u * f;
			spare = v * f;
		}
}
