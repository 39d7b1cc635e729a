/*
 * ref.c - the long double reference kernel and the tests' seeded random
 * numbers.
 *
 * The kernel is the formula, one stage at a time, with nothing clever:
 * long double's 64-bit significand makes its rounding about 2^11 times
 * smaller than the library's, so any difference the tests see is the
 * library's.  The softmax subtracts the row maximum only so that expl
 * cannot overflow on the huge-logit tests; mathematically it is the same
 * softmax.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref.h"

/* calloc for n long doubles, never asking for 0 bytes. */
static long double *
ld_alloc(size_t n)
{
	return calloc(n != 0 ? n : 1, sizeof(long double));
}

void
ref_stages_free(struct ref_stages *r)
{
	free(r->scores);
	free(r->scaled);
	free(r->weights);
	free(r->output);
	free(r->lse);
	memset(r, 0, sizeof *r);
}

int
ref_attention(const double *q, const double *k, const double *v, size_t T,
    size_t S, size_t d_k, size_t d_v, long double scale,
    struct ref_stages *out)
{
	size_t i, j, c;

	memset(out, 0, sizeof *out);
	out->T = T;
	out->S = S;
	out->d_v = d_v;
	out->scores = ld_alloc(T * S);
	out->scaled = ld_alloc(T * S);
	out->weights = ld_alloc(T * S);
	out->output = ld_alloc(T * d_v);
	out->lse = ld_alloc(T);
	if (out->scores == NULL || out->scaled == NULL ||
	    out->weights == NULL || out->output == NULL || out->lse == NULL) {
		ref_stages_free(out);
		return -1;
	}

	for (i = 0; i < T; i++) {
		long double *sc = out->scores + i * S;
		long double *lg = out->scaled + i * S;
		long double *w = out->weights + i * S;
		long double max, sum;

		/* scores[i][j] = sum over c of Q[i][c] K[j][c] */
		for (j = 0; j < S; j++) {
			sc[j] = 0.0L;
			for (c = 0; c < d_k; c++)
				sc[j] += (long double)q[i * d_k + c] *
				    (long double)k[j * d_k + c];
		}

		/* scaled[i][j] = scores[i][j] * scale */
		for (j = 0; j < S; j++)
			lg[j] = sc[j] * scale;

		/* weights[i][j] = exp(scaled[i][j]) / sum over j of the same;
		 * lse[i] = log of that sum */
		max = lg[0];
		for (j = 1; j < S; j++)
			if (lg[j] > max)
				max = lg[j];
		sum = 0.0L;
		for (j = 0; j < S; j++)
			sum += expl(lg[j] - max);
		for (j = 0; j < S; j++)
			w[j] = expl(lg[j] - max) / sum;
		out->lse[i] = max + logl(sum);

		/* output[i][c] = sum over j of weights[i][j] V[j][c] */
		for (c = 0; c < d_v; c++) {
			long double o = 0.0L;

			for (j = 0; j < S; j++)
				o += w[j] * (long double)v[j * d_v + c];
			out->output[i * d_v + c] = o;
		}
	}
	return 0;
}

void
ref_rng_seed(struct ref_rng *r, uint64_t seed)
{
	r->state = seed;
}

uint64_t
ref_rng_next(struct ref_rng *r)
{
	uint64_t z = (r->state += 0x9E3779B97F4A7C15u);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
	return z ^ (z >> 31);
}

double
ref_rng_uniform(struct ref_rng *r, double lo, double hi)
{
	/* The top 53 bits make a double in [0, 1) exactly. */
	double u = (double)(ref_rng_next(r) >> 11) * 0x1p-53;

	return lo + (hi - lo) * u;
}

size_t
ref_rng_range(struct ref_rng *r, size_t lo, size_t hi)
{
	/* The modulo bias is irrelevant for test sizes. */
	return lo + (size_t)(ref_rng_next(r) % (uint64_t)(hi - lo + 1));
}

void
ref_rng_fill(struct ref_rng *r, double *data, size_t n, double lo, double hi)
{
	size_t i;

	for (i = 0; i < n; i++)
		data[i] = ref_rng_uniform(r, lo, hi);
}
