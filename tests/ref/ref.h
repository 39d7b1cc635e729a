/*
 * ref.h - an independent long double reference for the unit tests, and
 * the seeded random numbers the tests draw from.
 *
 * ref_attention is softmax(Q K^T * scale) V written straight from the
 * formula in long double (expl, logl), sharing no code and no types with
 * lib/: matrices are packed row-major arrays of double in, long double
 * out.  It lives only in tests/; the library itself stays double.
 *
 * Dims: T query rows, S keys, d_k columns of Q and K, d_v columns of V.
 */
#ifndef ATTN_REF_H
#define ATTN_REF_H

#include <stddef.h>
#include <stdint.h>

/* Every stage of one problem, packed row-major, owned (ref_stages_free). */
struct ref_stages {
	size_t T, S, d_v;
	long double *scores;	/* T x S */
	long double *scaled;	/* T x S */
	long double *weights;	/* T x S */
	long double *output;	/* T x d_v */
	long double *lse;	/* T x 1 */
};

/*
 * Compute every stage for q (T x d_k), k (S x d_k) and v (S x d_v), all
 * packed (row stride = columns), with logits = scores * scale.  Returns 0,
 * or -1 when out of memory (then *out is zeroed).
 */
int ref_attention(const double *q, const double *k, const double *v,
    size_t T, size_t S, size_t d_k, size_t d_v, long double scale,
    struct ref_stages *out);

/* Free what ref_attention allocated and zero *r. */
void ref_stages_free(struct ref_stages *r);

/* A splitmix64 generator: the same seed gives the same numbers on every
 * machine, so a failing case can be replayed from its seed. */
struct ref_rng {
	uint64_t state;
};

void ref_rng_seed(struct ref_rng *r, uint64_t seed);
uint64_t ref_rng_next(struct ref_rng *r);

/* Uniform in [lo, hi). */
double ref_rng_uniform(struct ref_rng *r, double lo, double hi);

/* Uniform in [lo, hi], both inclusive (lo <= hi). */
size_t ref_rng_range(struct ref_rng *r, size_t lo, size_t hi);

/* Fill data[0..n) with uniform numbers in [lo, hi). */
void ref_rng_fill(struct ref_rng *r, double *data, size_t n, double lo,
    double hi);

#endif /* ATTN_REF_H */
