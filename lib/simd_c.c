/*
 * simd_c.c - the streaming kernel's inner loops in plain C, for CPUs
 * without AVX2, and the definition of what the vector versions compute:
 * lane i of lib/simd_avx2.c and lib/simd_avx512.c does what these loops
 * do for row i, operation for operation, so all three give the same bytes
 * (struct attn_simd in internal.h; tests/unit/check_stream.c holds them
 * to it).
 *
 * fma() is the fused multiply-add the vector code uses; max_of(a, b)
 * mirrors the vector max instructions, which return b unless a > b, and
 * a row's maximum is max_of(x, m), which stays with the first of equal
 * values as the reference kernel's x > max does.
 */
#include <math.h>

#include "internal.h"

static double
max_of(double a, double b)
{
	return a > b ? a : b;
}

static void
c_scores(const double *qt, size_t br, size_t d_k, const double *k,
    size_t ldk, size_t nk, double scale, double *tile, double *mb)
{
	size_t i, j, c;

	for (i = 0; i < br; i++)
		mb[i] = -INFINITY;
	for (j = 0; j < nk; j++)
		for (i = 0; i < br; i++) {
			double dot = 0.0;

			for (c = 0; c < d_k; c++)
				dot = fma(qt[c * br + i], k[j * ldk + c], dot);
			tile[j * br + i] = dot * scale;
			mb[i] = max_of(tile[j * br + i], mb[i]);
		}
}

static void
c_softmax(double *tile, size_t br, size_t nk, double *m, double *l,
    const double *mb, double *alpha)
{
	size_t i, j;

	for (i = 0; i < br; i++) {
		double mn = max_of(mb[i], m[i]);
		double mu = mn == -INFINITY ? 0.0 : mn;
		double a = attn_exp(m[i] - mu), s = l[i] * a;

		for (j = 0; j < nk; j++) {
			double e = attn_exp(tile[j * br + i] - mu);

			tile[j * br + i] = e;
			s = s + e;
		}
		m[i] = mn;
		l[i] = s;
		alpha[i] = a;
	}
}

static void
c_accumulate(const double *tile, size_t br, size_t nk, const double *v,
    size_t ldv, size_t d_v, const double *alpha, double *ot)
{
	size_t i, j, c;

	for (c = 0; c < d_v; c++)
		for (i = 0; i < br; i++) {
			double o = ot[c * br + i] * alpha[i];

			for (j = 0; j < nk; j++)
				o = fma(tile[j * br + i], v[j * ldv + c], o);
			ot[c * br + i] = o;
		}
}

static void
c_weights(double *w, size_t n, double m, double l)
{
	size_t j;

	for (j = 0; j < n; j++)
		w[j] = attn_exp(w[j] - m) / l;
}

static void
c_exp(const double *x, double *y, size_t n)
{
	size_t j;

	for (j = 0; j < n; j++)
		y[j] = attn_exp(x[j]);
}

static int
c_grad(double *p, double *dp, size_t n, double delta, double scale)
{
	size_t j;
	int bad = 0;

	for (j = 0; j < n; j++) {
		const double ds = p[j] == 0.0 ? 0.0 : p[j] * (dp[j] - delta);

		bad |= !isfinite(dp[j]) || !isfinite(ds);
		dp[j] = ds;
		p[j] = ds * scale;
	}
	return bad;
}

const struct attn_simd attn_simd_c = {
	"c", c_scores, c_softmax, c_accumulate, c_weights, c_exp, c_grad,
};
