/*
 * simd_avx2.c - the streaming kernel's inner loops on AVX2 with FMA: 4
 * queries a vector, register tiles of 12 queries by 4 keys (the loops are
 * lib/simd_loops.h; this file gives them their vectors and exp).  AVX2
 * has no permute across 16 doubles and no scalef, so exp gathers its
 * table and scales by two multiplications (the first exact), which round
 * as scalef and ldexp do.
 *
 * Built with a function attribute, not -mavx2, so that one binary runs
 * everywhere: lib/simd.c calls these only where the CPU has AVX2 and FMA.
 */
#include <math.h>

#include "internal.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define SIMD_TARGET __attribute__((target("avx2,fma")))

/* attn_exp (lib/exp.c), 4 at a time. */
SIMD_TARGET static inline __m256d
exp4(__m256d x)
{
	const __m256d shift = _mm256_set1_pd(ATTN_EXP_SHIFT);
	__m256d t, n, r, r2, h, q, k, thi, tlo, y, s;
	__m128i idx;
	__m256i e;

	x = _mm256_max_pd(x, _mm256_set1_pd(ATTN_EXP_MIN));
	t = _mm256_fmadd_pd(x, _mm256_set1_pd(ATTN_EXP_INV_STEP), shift);
	n = _mm256_sub_pd(t, shift);
	r = _mm256_fnmadd_pd(n, _mm256_set1_pd(ATTN_EXP_STEP_HI), x);
	r = _mm256_fnmadd_pd(n, _mm256_set1_pd(ATTN_EXP_STEP_LO), r);
	k = _mm256_floor_pd(_mm256_mul_pd(n, _mm256_set1_pd(0.0625)));
	idx = _mm256_cvtpd_epi32(_mm256_fnmadd_pd(k, _mm256_set1_pd(16.0),
	    n));
	thi = _mm256_i32gather_pd(attn_exp_hi, idx, 8);
	tlo = _mm256_i32gather_pd(attn_exp_lo, idx, 8);
	r2 = _mm256_mul_pd(r, r);
	h = _mm256_fmadd_pd(r, _mm256_set1_pd(ATTN_EXP_C7),
	    _mm256_set1_pd(ATTN_EXP_C6));
	h = _mm256_fmadd_pd(r, h, _mm256_set1_pd(ATTN_EXP_C5));
	h = _mm256_fmadd_pd(r, h, _mm256_set1_pd(ATTN_EXP_C4));
	h = _mm256_fmadd_pd(r, h, _mm256_set1_pd(ATTN_EXP_C3));
	h = _mm256_fmadd_pd(r, h, _mm256_set1_pd(ATTN_EXP_C2));
	q = _mm256_fmadd_pd(r2, h, r);
	y = _mm256_add_pd(thi, _mm256_fmadd_pd(thi, q, tlo));
	/* y * 2^k: y * 2^(k+64) is normal and exact (k >= -1077), and the
	 * multiplication by 2^-64 rounds once. */
	e = _mm256_cvtepi32_epi64(_mm256_cvtpd_epi32(_mm256_add_pd(k,
	    _mm256_set1_pd(64.0 + 1023.0))));
	s = _mm256_castsi256_pd(_mm256_slli_epi64(e, 52));
	return _mm256_mul_pd(_mm256_mul_pd(y, s), _mm256_set1_pd(0x1p-64));
}

/* 0 where x is -inf, else x. */
SIMD_TARGET static inline __m256d
zero_ninf4(__m256d x)
{
	return _mm256_blendv_pd(x, _mm256_setzero_pd(), _mm256_cmp_pd(x,
	    _mm256_set1_pd(-INFINITY), _CMP_EQ_OQ));
}

#define SIMD_STRUCT attn_simd_avx2
#define SIMD_LABEL "avx2"
#define VEC __m256d
#define VL 4
#define KT 4
#define vzero() _mm256_setzero_pd()
#define vset1(x) _mm256_set1_pd(x)
#define vbcast(p) _mm256_broadcast_sd(p)
#define vload(p) _mm256_load_pd(p)
#define vloadu(p) _mm256_loadu_pd(p)
#define vstore(p, v) _mm256_store_pd((p), (v))
#define vstoreu(p, v) _mm256_storeu_pd((p), (v))
#define vadd(a, b) _mm256_add_pd((a), (b))
#define vsub(a, b) _mm256_sub_pd((a), (b))
#define vmul(a, b) _mm256_mul_pd((a), (b))
#define vdiv(a, b) _mm256_div_pd((a), (b))
#define vfma(a, b, c) _mm256_fmadd_pd((a), (b), (c))
#define vmax(a, b) _mm256_max_pd((a), (b))
#define vzero_ninf(x) zero_ninf4(x)
#define vexp(x) exp4(x)

#include "simd_loops.h"

#else

/* Not an x86-64 build: lib/simd.c never picks these. */
const struct attn_simd attn_simd_avx2 = {
	"avx2", NULL, NULL, NULL, NULL, NULL,
};

#endif
