/*
 * simd_avx2.c - the streaming kernel's inner loops on AVX2 with FMA: 4
 * queries a vector, register tiles of 12 queries by 4 keys, exp 3 vectors
 * at a time (the loops are lib/simd_loops.h; this file gives them their
 * vectors, tiles and exp).  AVX2 has no permute across 16 doubles and no
 * scalef, so exp loads its table entries one by one and scales by two
 * multiplications (the first exact), which round as scalef and ldexp do.
 *
 * Built with a function attribute, not -mavx2, so that one binary runs
 * everywhere: lib/simd.c calls these only where the CPU has AVX2 and FMA.
 */
#include <math.h>

#include "internal.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define SIMD_TARGET __attribute__((target("avx2,fma")))

/*
 * The tiles (lib/simd_loops.h): RT vectors of queries by KT keys or value
 * columns, and XU vectors through exp at a time.  12 x 4 tiles (RT 3,
 * KT 4: 12 accumulators, 3 loads and a broadcast in the 16 registers)
 * kept both Q K^T and P V nearest the FMA units' peak of the shapes
 * tried (8 x 4, 8 x 6, 12 x 3, 8 x 5, 24 x 2, 4 x 8 beside it).  exp
 * takes its table with the loads below, not a gather, and XU 3 keeps the
 * FMA units busiest without spilling (XU 6 spills).  bench/README.md has
 * the measurements.
 */
#define RT 3
#define KT 4
#define XU 3

/*
 * attn_exp (lib/exp.c) of XU vectors of 4, in place, step by step across
 * the vectors: each step is XU independent operations, which feeds the
 * FMA units busy through exp's long chain of dependent steps.
 *
 * n mod 16 and k = floor(n / 16) are read from the bits of t = n + 1.5 *
 * 2^52, whose low 52 bits are n in two's complement plus 2^51: the low 4
 * bits are n mod 16, and t >> 4 is k plus a multiple of 2^47, which the
 * shift into the exponent field drops.  The table entries of each lane
 * are loaded one by one: 4 loads and 3 inserts cost less than a gather
 * (bench/README.md).
 */
#define STEP(u) _Pragma("GCC unroll 8") for (u = 0; u < XU; u++)

SIMD_TARGET static inline __attribute__((always_inline)) void
exp4(__m256d x[])
{
	const __m256d shift = _mm256_set1_pd(ATTN_EXP_SHIFT);
	__m256d t[XU], n[XU], r[XU], r2[XU], h[XU], thi[XU], tlo[XU];
	size_t u;

	STEP(u) {
		x[u] = _mm256_max_pd(x[u], _mm256_set1_pd(ATTN_EXP_MIN));
		t[u] = _mm256_fmadd_pd(x[u], _mm256_set1_pd(ATTN_EXP_INV_STEP),
		    shift);
	}
	STEP(u)
		n[u] = _mm256_sub_pd(t[u], shift);
	STEP(u) {
		const __m256i i4 = _mm256_and_si256(_mm256_castpd_si256(t[u]),
		    _mm256_set1_epi64x(15));
		const __m128i i01 = _mm256_castsi256_si128(i4);
		const __m128i i23 = _mm256_extracti128_si256(i4, 1);
		const long long a = _mm_cvtsi128_si64(i01);
		const long long b = _mm_extract_epi64(i01, 1);
		const long long c = _mm_cvtsi128_si64(i23);
		const long long d = _mm_extract_epi64(i23, 1);

		thi[u] = _mm256_set_pd(attn_exp_hi[d], attn_exp_hi[c],
		    attn_exp_hi[b], attn_exp_hi[a]);
		tlo[u] = _mm256_set_pd(attn_exp_lo[d], attn_exp_lo[c],
		    attn_exp_lo[b], attn_exp_lo[a]);
	}
	STEP(u)
		r[u] = _mm256_fnmadd_pd(n[u], _mm256_set1_pd(ATTN_EXP_STEP_HI),
		    x[u]);
	STEP(u)
		r[u] = _mm256_fnmadd_pd(n[u], _mm256_set1_pd(ATTN_EXP_STEP_LO),
		    r[u]);
	STEP(u) {
		r2[u] = _mm256_mul_pd(r[u], r[u]);
		h[u] = _mm256_fmadd_pd(r[u], _mm256_set1_pd(ATTN_EXP_C7),
		    _mm256_set1_pd(ATTN_EXP_C6));
	}
	STEP(u)
		h[u] = _mm256_fmadd_pd(r[u], h[u], _mm256_set1_pd(ATTN_EXP_C5));
	STEP(u)
		h[u] = _mm256_fmadd_pd(r[u], h[u], _mm256_set1_pd(ATTN_EXP_C4));
	STEP(u)
		h[u] = _mm256_fmadd_pd(r[u], h[u], _mm256_set1_pd(ATTN_EXP_C3));
	STEP(u)
		h[u] = _mm256_fmadd_pd(r[u], h[u], _mm256_set1_pd(ATTN_EXP_C2));
	/* q = r + r^2 h, then y = T_hi + (T_hi q + T_lo) */
	STEP(u)
		h[u] = _mm256_fmadd_pd(r2[u], h[u], r[u]);
	STEP(u)
		h[u] = _mm256_add_pd(thi[u], _mm256_fmadd_pd(thi[u], h[u],
		    tlo[u]));
	/* y * 2^k: y * 2^(k+64) is normal and exact (k >= -1077), and the
	 * multiplication by 2^-64 rounds once.  The exponent field of
	 * 2^(k+64) is k + 64 + 1023. */
	STEP(u) {
		const __m256i e = _mm256_slli_epi64(_mm256_add_epi64(
		    _mm256_srli_epi64(_mm256_castpd_si256(t[u]), 4),
		    _mm256_set1_epi64x(64 + 1023)), 52);

		x[u] = _mm256_mul_pd(_mm256_mul_pd(h[u],
		    _mm256_castsi256_pd(e)), _mm256_set1_pd(0x1p-64));
	}
}

/* 0 where x is -inf, else x. */
SIMD_TARGET static inline __m256d
zero_ninf4(__m256d x)
{
	return _mm256_blendv_pd(x, _mm256_setzero_pd(), _mm256_cmp_pd(x,
	    _mm256_set1_pd(-INFINITY), _CMP_EQ_OQ));
}

/* +0 where p is 0, else x. */
SIMD_TARGET static inline __m256d
zero_where_zero4(__m256d p, __m256d x)
{
	return _mm256_blendv_pd(x, _mm256_setzero_pd(), _mm256_cmp_pd(p,
	    _mm256_setzero_pd(), _CMP_EQ_OQ));
}

#define SIMD_STRUCT attn_simd_avx2
#define SIMD_LABEL "avx2"
#define VEC __m256d
#define VL 4
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
#define vzero_where_zero(p, x) zero_where_zero4((p), (x))
#define vexp(x) exp4(x)

#include "simd_loops.h"

#else

/* Not an x86-64 build: lib/simd.c never picks these. */
const struct attn_simd attn_simd_avx2 = {
	"avx2", NULL, NULL, NULL, NULL, NULL, NULL,
};

#endif
