/*
 * exp.c - exp(x) for x <= 0, the range softmax uses, within 1 ulp, in
 * operations that every instruction set has, so that the plain C version
 * here and the vector versions in lib/simd_*.c give the same bytes.
 *
 * Why not libm or SLEEF: the streaming kernel takes one exp per logit,
 * and this one, a vector at a time, costs about half of what SLEEF's
 * vector exp costs and a small part of glibc's scalar exp, and is more
 * accurate over this range than SLEEF's (bench/README.md has the
 * figures; tests/unit/check_stream.c holds it within 1 ulp of expl).
 * The tests' reference kernel takes its exponentials here too (one
 * arithmetic: tests/unit/kernel_ref.c), so that both kernels give the
 * same bytes; --emulate, which models a plain kernel in another format,
 * takes libm's exp rounded to that format.
 *
 * The method, x = n ln2/16 + r with n = k*16 + i:
 *
 *	exp(x) = 2^k * 2^(i/16) * exp(r),	|r| <= ln2/32
 *
 *   1. n = round(x * 16/ln2), by adding and subtracting 1.5 * 2^52 (an fma
 *      with the multiplication, rounding once);
 *   2. r = x - n*ln2/16, with ln2/16 in two parts, each step an fma, so r
 *      is good to about 2^-58;
 *   3. q = expm1(r) = r + r^2 (1/2 + r (1/6 + ... + r/5040)): Taylor to
 *      degree 7, whose truncation error (r^8/8! < 1.3e-18) is far below
 *      an ulp;
 *   4. y = T_hi[i] + (T_hi[i] q + T_lo[i]), where T_hi + T_lo is 2^(i/16)
 *      to about 2^-106 (computed with bc), so y has one rounding of note:
 *      the last addition, 0.5 ulp;
 *   5. the result is y * 2^k rounded once (exact unless it is
 *      subnormal): scalef on AVX-512, ldexp here.
 *
 * Arguments below -746 (and -inf) are clamped to -746, where exp is below
 * half the least subnormal and rounds to 0.
 */
#include <math.h>

#include "internal.h"

/* 2^(i/16) = attn_exp_hi[i] + attn_exp_lo[i]. */
const double attn_exp_hi[16] = {
	0x1.0000000000000p+0, 0x1.0b5586cf9890fp+0, 0x1.172b83c7d517bp+0,
	0x1.2387a6e756238p+0, 0x1.306fe0a31b715p+0, 0x1.3dea64c123422p+0,
	0x1.4bfdad5362a27p+0, 0x1.5ab07dd485429p+0, 0x1.6a09e667f3bcdp+0,
	0x1.7a11473eb0187p+0, 0x1.8ace5422aa0dbp+0, 0x1.9c49182a3f090p+0,
	0x1.ae89f995ad3adp+0, 0x1.c199bdd85529cp+0, 0x1.d5818dcfba487p+0,
	0x1.ea4afa2a490dap+0,
};
const double attn_exp_lo[16] = {
	0x0.0p+0, 0x1.8a62e4adc610bp-54, -0x1.19041b9d78a76p-55,
	0x1.9b07eb6c70573p-54, 0x1.6f46ad23182e4p-55, 0x1.ada0911f09ebcp-55,
	0x1.d4397afec42e2p-56, 0x1.6324c054647adp-54, -0x1.bdd3413b26456p-54,
	-0x1.41577ee04992fp-55, 0x1.6e9f156864b27p-54, 0x1.c7c46b071f2bep-56,
	0x1.7a1cd345dcc81p-54, 0x1.11065895048ddp-55, 0x1.2ed02d75b3707p-55,
	-0x1.e9c23179c2893p-54,
};

ATTN_FMA_CLONES
double
attn_exp(double x)
{
	double t, n, k, r, r2, h, q, y;
	int i;

	/* As the vector max does, a nan becomes the clamp too. */
	x = x > ATTN_EXP_MIN ? x : ATTN_EXP_MIN;
	t = fma(x, ATTN_EXP_INV_STEP, ATTN_EXP_SHIFT);
	n = t - ATTN_EXP_SHIFT;
	r = fma(-n, ATTN_EXP_STEP_HI, x);
	r = fma(-n, ATTN_EXP_STEP_LO, r);
	k = floor(n * 0.0625);
	i = (int)fma(-k, 16.0, n);
	r2 = r * r;
	h = fma(r, ATTN_EXP_C7, ATTN_EXP_C6);
	h = fma(r, h, ATTN_EXP_C5);
	h = fma(r, h, ATTN_EXP_C4);
	h = fma(r, h, ATTN_EXP_C3);
	h = fma(r, h, ATTN_EXP_C2);
	q = fma(r2, h, r);
	y = attn_exp_hi[i] + fma(attn_exp_hi[i], q, attn_exp_lo[i]);
	return ldexp(y, (int)k);
}
