/*
 * round.c - attn_round: a double rounded to float32, float16 or bfloat16,
 * the one rounding of --emulate.  A leaf below the reference kernel's
 * passes (lib/kernel.c, lib/grad.c, through internal.h's attn_prec_*) and
 * the emulation that runs them (lib/emulate.c).
 *
 * Rounding is written out rather than taken from _Float16 or __bf16,
 * which C11 does not have: the spacing of the format's numbers around x
 * is a power of two, x is scaled so that it is 1, and the integer part is
 * rounded half to even by hand, so that the result does not depend on
 * the rounding mode.  It is tested against float casts for float32 and on
 * the edge values of each format (check_emulate.c).
 */
#include <math.h>

#include "internal.h"

/* Bits of the significand (its leading 1 included), the exponent of the
 * smallest normal number, and the largest finite number. */
static const struct {
	int bits, emin;
	double max;
} formats[] = {
	[ATTN_PREC_FP64] = { 53, -1022, 1.7976931348623157e308 },
	[ATTN_PREC_FP32] = { 24, -126, 3.4028234663852886e38 },
	[ATTN_PREC_FP16] = { 11, -14, 65504.0 },
	[ATTN_PREC_BF16] = { 8, -126, 3.3895313892515355e38 },
};

double
attn_round(double x, enum attn_precision prec)
{
	double y, f, d;
	int e;

	if (prec == ATTN_PREC_FP64 || (unsigned)prec >= sizeof formats /
	    sizeof formats[0] || !isfinite(x) || x == 0.0)
		return x;
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
		return copysign(INFINITY, x);
	/* An underflow to zero has the sign of x, as in IEEE arithmetic. */
	return y == 0.0 ? copysign(0.0, x) : y;
}
