/*
 * simd_avx512.c - the streaming kernel's inner loops on AVX-512F: 8
 * queries a vector, register tiles of 24 queries by 8 keys (the loops are
 * lib/simd_loops.h; this file gives them their vectors and exp).
 *
 * Built with a function attribute, not -mavx512f, so that one binary runs
 * everywhere: lib/simd.c calls these only where the CPU has AVX-512F.
 */
#include <math.h>

#include "internal.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define SIMD_TARGET __attribute__((target("avx512f")))

/* attn_exp (lib/exp.c), 8 at a time: the same steps, with the table
 * indexed by a permute and the scaling by scalef. */
SIMD_TARGET static inline __m512d
exp8(__m512d x)
{
	const __m512d shift = _mm512_set1_pd(ATTN_EXP_SHIFT);
	const __m512d hi0 = _mm512_loadu_pd(attn_exp_hi);
	const __m512d hi1 = _mm512_loadu_pd(attn_exp_hi + 8);
	const __m512d lo0 = _mm512_loadu_pd(attn_exp_lo);
	const __m512d lo1 = _mm512_loadu_pd(attn_exp_lo + 8);
	__m512d t, n, r, r2, h, q, k, thi, tlo;
	__m512i idx;

	x = _mm512_max_pd(x, _mm512_set1_pd(ATTN_EXP_MIN));
	t = _mm512_fmadd_pd(x, _mm512_set1_pd(ATTN_EXP_INV_STEP), shift);
	n = _mm512_sub_pd(t, shift);
	r = _mm512_fnmadd_pd(n, _mm512_set1_pd(ATTN_EXP_STEP_HI), x);
	r = _mm512_fnmadd_pd(n, _mm512_set1_pd(ATTN_EXP_STEP_LO), r);
	k = _mm512_roundscale_pd(_mm512_mul_pd(n, _mm512_set1_pd(0.0625)),
	    _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
	/* The low 4 bits of t's mantissa are n mod 16. */
	idx = _mm512_castpd_si512(t);
	thi = _mm512_permutex2var_pd(hi0, idx, hi1);
	tlo = _mm512_permutex2var_pd(lo0, idx, lo1);
	r2 = _mm512_mul_pd(r, r);
	h = _mm512_fmadd_pd(r, _mm512_set1_pd(ATTN_EXP_C7),
	    _mm512_set1_pd(ATTN_EXP_C6));
	h = _mm512_fmadd_pd(r, h, _mm512_set1_pd(ATTN_EXP_C5));
	h = _mm512_fmadd_pd(r, h, _mm512_set1_pd(ATTN_EXP_C4));
	h = _mm512_fmadd_pd(r, h, _mm512_set1_pd(ATTN_EXP_C3));
	h = _mm512_fmadd_pd(r, h, _mm512_set1_pd(ATTN_EXP_C2));
	q = _mm512_fmadd_pd(r2, h, r);
	return _mm512_scalef_pd(_mm512_add_pd(thi,
	    _mm512_fmadd_pd(thi, q, tlo)), k);
}

/* 0 where x is -inf, else x. */
SIMD_TARGET static inline __m512d
zero_ninf8(__m512d x)
{
	return _mm512_mask_blend_pd(_mm512_cmp_pd_mask(x,
	    _mm512_set1_pd(-INFINITY), _CMP_EQ_OQ), x, _mm512_setzero_pd());
}

/* +0 where p is 0, else x. */
SIMD_TARGET static inline __m512d
zero_where_zero8(__m512d p, __m512d x)
{
	return _mm512_mask_blend_pd(_mm512_cmp_pd_mask(p, _mm512_setzero_pd(),
	    _CMP_EQ_OQ), x, _mm512_setzero_pd());
}

#define SIMD_STRUCT attn_simd_avx512
#define SIMD_LABEL "avx512"
#define VEC __m512d
#define VL 8
/* 3 x 8 accumulators, 3 loads and a broadcast fill 28 of the 32
 * registers without spilling: 24 x 8 tiles run Q K^T and P V near a
 * tuned dgemm on one thread (bench/README.md).  exp takes one vector at
 * a time (XU 1), the setting those tiles were chosen with; three at a
 * time, which the AVX2 loops found better (lib/simd_avx2.c), ran no
 * faster here (bench/README.md). */
#define RT 3
#define KT 8
#define XU 1
#define vzero() _mm512_setzero_pd()
#define vset1(x) _mm512_set1_pd(x)
#define vbcast(p) _mm512_set1_pd(*(p))
#define vload(p) _mm512_load_pd(p)
#define vloadu(p) _mm512_loadu_pd(p)
#define vstore(p, v) _mm512_store_pd((p), (v))
#define vstoreu(p, v) _mm512_storeu_pd((p), (v))
#define vadd(a, b) _mm512_add_pd((a), (b))
#define vsub(a, b) _mm512_sub_pd((a), (b))
#define vmul(a, b) _mm512_mul_pd((a), (b))
#define vdiv(a, b) _mm512_div_pd((a), (b))
#define vfma(a, b, c) _mm512_fmadd_pd((a), (b), (c))
#define vmax(a, b) _mm512_max_pd((a), (b))
#define vzero_ninf(x) zero_ninf8(x)
#define vzero_where_zero(p, x) zero_where_zero8((p), (x))
#define vexp(x) ((x)[0] = exp8((x)[0]))

#include "simd_loops.h"

#else

/* Not an x86-64 build: lib/simd.c never picks these. */
const struct attn_simd attn_simd_avx512 = {
	"avx512", NULL, NULL, NULL, NULL, NULL, NULL,
};

#endif
