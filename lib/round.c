/*
 * round.c - attn_round: a double rounded to float32, float16, bfloat16 or
 * one of the two OCP FP8 formats, the one rounding of --emulate.  A leaf below the emulation
 * (lib/emulate.c) and its software-rounded oracle in the tests.
 *
 * Rounding is written out rather than taken from _Float16 or __bf16,
 * which C11 does not have: the spacing of the format's numbers around x
 * is a power of two, x is scaled so that it is 1, and the integer part is
 * rounded half to even by hand, so that the result does not depend on
 * the rounding mode.  It is tested against float casts for float32 and on
 * the edge values of each format (check_emulate.c), and for FP8 against
 * NumPy's decoding of every code (check_fp8.c, tests/unit/fp8_numpy.py).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"

/* Bits of the significand (its leading 1 included), the exponent of the
 * smallest normal number, the largest finite number, and whether a
 * number past it (and inf) saturates to it rather than rounding to inf.
 * OCP FP8 E4M3 has no inf (its top codes S.1111.111 are nan) and
 * converts with saturation, as CUDA's conversions to it with satfinite
 * and FlashAttention 3's fp8 inputs do; E5M2 is IEEE-like. */
static const struct {
	int bits, emin;
	double max;
	int saturate;
} formats[] = {
	[ATTN_PREC_FP64] = { 53, -1022, 1.7976931348623157e308, 0 },
	[ATTN_PREC_FP32] = { 24, -126, 3.4028234663852886e38, 0 },
	[ATTN_PREC_FP16] = { 11, -14, 65504.0, 0 },
	[ATTN_PREC_BF16] = { 8, -126, 3.3895313892515355e38, 0 },
	[ATTN_PREC_FP8_E4M3] = { 4, -6, 448.0, 1 },
	[ATTN_PREC_FP8_E5M2] = { 3, -14, 57344.0, 0 },
};

double
attn_round(double x, enum attn_precision prec)
{
	double y, f, d;
	int e;

	if (prec == ATTN_PREC_FP64 || (unsigned)prec >= sizeof formats /
	    sizeof formats[0] || isnan(x) || x == 0.0)
		return x;
	if (isinf(x))
		return formats[prec].saturate ? copysign(formats[prec].max, x) :
		    x;
	/* x = m 2^e with 0.5 <= |m| < 1: its leading bit is 2^(e-1); below
	 * the smallest normal the spacing stays that of emin. */
	(void)frexp(x, &e);
	e -= 1;
	if (e < formats[prec].emin)
		e = formats[prec].emin;
	/* In units of the spacing 2^(e - bits + 1): an exact scaling. */
	y = ldexp(x, formats[prec].bits - 1 - e);
	f = floor(y);
	d = y - f;
	if (d > 0.5 || (d == 0.5 && fmod(f, 2.0) != 0.0))
		f += 1.0;
	y = ldexp(f, e - formats[prec].bits + 1);
	if (fabs(y) > formats[prec].max)
		return copysign(formats[prec].saturate ? formats[prec].max :
		    INFINITY, x);
	/* An underflow to zero has the sign of x, as in IEEE arithmetic. */
	return y == 0.0 ? copysign(0.0, x) : y;
}

/* ------------------------------------------------------- arrays of floats */

/*
 * The same rounding for an array of float32 values in place, as the
 * emulation (lib/emulate.c) stores what it accumulated in float32: with
 * the hardware where it has a conversion (F16C for float16), by bit
 * operations otherwise.  Every way rounds to nearest, ties to even, with
 * subnormals, overflow to inf and nan kept: attn_round's results, which
 * check_emulate.c holds each way to on every float16 and bfloat16 tie.
 * A float32 is exact as a double, so rounding it to the format here or
 * in attn_round is the same.
 */

/* bfloat16: the upper 16 bits of a float32, rounded half to even by
 * adding 0x7fff and the bit that stays last (a carry into the exponent
 * is the next binade, and past the largest number it makes inf); a nan
 * keeps its sign and is quieted, so that rounding cannot make it inf. */
ATTN_V3_CLONES
static void
bf16_floats(float *x, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		uint32_t u;

		memcpy(&u, &x[i], sizeof u);
		if ((u & 0x7fffffffu) > 0x7f800000u)
			u |= 0x00400000u;
		else
			u += 0x7fffu + ((u >> 16) & 1u);
		u &= 0xffff0000u;
		memcpy(&x[i], &u, sizeof u);
	}
}

/* float16 by bit operations: 10 fraction bits of 23 in the normals
 * (2^-14 and up), rounded like bfloat16's 16; below them a multiple of
 * 2^-24, which the float32 sum |f| + 0.5 rounds to (its spacing is
 * 2^-24), half to even, and subtracting 0.5 again is exact. */
static float
fp16_bits(float f)
{
	uint32_t u, a;
	float r;

	memcpy(&u, &f, sizeof u);
	a = u & 0x7fffffffu;
	if (a >= 0x7f800000u)		/* inf and nan stay */
		return f;
	if (a >= 0x477ff000u)		/* 65520, the tie past 65504 */
		a = 0x7f800000u;
	else if (a >= 0x38800000u) {	/* 2^-14 */
		a += 0xfffu + ((a >> 13) & 1u);
		a &= ~0x1fffu;
	} else {
		memcpy(&r, &a, sizeof r);
		r = (r + 0.5f) - 0.5f;
		memcpy(&a, &r, sizeof a);
	}
	u = (u & 0x80000000u) | a;
	memcpy(&r, &u, sizeof r);
	return r;
}

static void
fp16_floats_bits(float *x, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		x[i] = fp16_bits(x[i]);
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>

/* float16 by F16C, 8 at a time (the rest by bits): VCVTPS2PH with
 * round-to-nearest-even in the instruction (not MXCSR's mode), which
 * makes subnormals, inf past 65504 and quiet nans as IEEE says. */
__attribute__((target("avx,f16c")))
static void
fp16_floats_f16c(float *x, size_t n)
{
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(x + i),
		    _MM_FROUND_TO_NEAREST_INT);

		_mm256_storeu_ps(x + i, _mm256_cvtph_ps(h));
	}
	fp16_floats_bits(x + i, n - i);
}

/* AVX (with the OS's support of its registers) and F16C; F16C read from
 * CPUID itself, as clang's __builtin_cpu_supports does not know it. */
static int
has_f16c(void)
{
	unsigned a, b, c, d;

	return __builtin_cpu_supports("avx") &&
	    __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) != 0;
}
#endif

/*
 * The FP8 formats by bit operations, as bfloat16's and float16's: in
 * the normals (2^emin and up) the fraction's 23 bits are rounded to the
 * format's 3 (E4M3) or 2 (E5M2), half to even, by adding one less than
 * half the dropped part and the bit that stays last (a carry into the
 * exponent is the next binade); below 2^emin every result is a multiple
 * of 2^(emin - fraction bits), which the float32 sum |f| + magic rounds
 * to (magic's spacing is that), half to even, and subtracting magic is
 * exact.  Past the largest number, E4M3 saturates to it and E5M2 is inf
 * (attn_round's formats[]); nan keeps its sign and is quieted.
 */
ATTN_V3_CLONES
static void
fp8_floats(float *x, size_t n, enum attn_precision prec)
{
	const int frac = formats[prec].bits - 1;
	const uint32_t drop = (uint32_t)(23 - frac);
	const int saturate = formats[prec].saturate;
	const float tiny = ldexpf(1.0f, formats[prec].emin);
	const float magic = ldexpf(1.0f, formats[prec].emin - frac + 23);
	const float largest = (float)formats[prec].max;
	uint32_t max_bits;
	size_t i;

	memcpy(&max_bits, &largest, sizeof max_bits);
	for (i = 0; i < n; i++) {
		uint32_t u, sign;
		float a;

		memcpy(&u, &x[i], sizeof u);
		sign = u & 0x80000000u;
		u &= 0x7fffffffu;
		if (u > 0x7f800000u) {
			u |= 0x00400000u;
		} else {
			memcpy(&a, &u, sizeof a);
			if (a < tiny) {
				a = (a + magic) - magic;
				memcpy(&u, &a, sizeof u);
			} else if (u < 0x7f800000u) {
				u += ((1u << (drop - 1)) - 1u) + ((u >> drop) & 1u);
				u &= ~((1u << drop) - 1u);
			}
			if (u > max_bits)
				u = saturate ? max_bits : 0x7f800000u;
		}
		u |= sign;
		memcpy(&x[i], &u, sizeof u);
	}
}

float
attn_round_odd(double x)
{
	float f = (float)x;
	uint32_t u;

	if ((double)f == x || x != x)
		return f;
	/* inexact: toward zero (one step down in magnitude, which takes
	 * inf to the largest float), then the last bit set */
	memcpy(&u, &f, sizeof u);
	if (fabs((double)f) > fabs(x))
		u -= 1u;
	u |= 1u;
	memcpy(&f, &u, sizeof u);
	return f;
}

void
attn_round_floats(float *x, size_t n, enum attn_precision prec,
    int hardware)
{
	switch (prec) {
	case ATTN_PREC_BF16:
		bf16_floats(x, n);
		break;
	case ATTN_PREC_FP16:
#if defined(__x86_64__) && defined(__GNUC__)
		if (hardware && has_f16c()) {
			fp16_floats_f16c(x, n);
			break;
		}
#endif
		(void)hardware;
		fp16_floats_bits(x, n);
		break;
	case ATTN_PREC_FP8_E4M3:
	case ATTN_PREC_FP8_E5M2:
		fp8_floats(x, n, prec);
		break;
	case ATTN_PREC_FP64:
	case ATTN_PREC_FP32:
		break;
	}
}
