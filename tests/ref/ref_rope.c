/*
 * ref_rope.c - rotary position embedding in long double, from the
 * RoFormer paper's definition (Su et al., 2021, eq. 34): theta_m =
 * base^(-2m/d), each pair rotated by pos * theta_m.  It shares nothing
 * with lib/rope.c, which follows Hugging Face's way of computing the
 * same angles in double (1 / base^(2m/d)).
 */
#include <math.h>
#include <stddef.h>

#include "ref.h"

void
ref_rope(const double *x, size_t rows, size_t block, size_t heads, size_t d,
    long double pos0, long double base, int interleaved, long double sign,
    long double *out)
{
	const size_t width = heads * d;
	size_t r, h, m;

	for (r = 0; r < rows; r++) {
		const long double pos = pos0 + (long double)(r % block);

		for (h = 0; h < heads; h++)
			for (m = 0; m < d / 2; m++) {
				const size_t a = h * d + (interleaved ? 2 * m :
				    m);
				const size_t b = h * d + (interleaved ?
				    2 * m + 1 : m + d / 2);
				const long double theta = powl(base,
				    -2.0L * (long double)m / (long double)d);
				const long double c = cosl(pos * theta);
				const long double s = sign * sinl(pos * theta);
				const long double xa = x[r * width + a];
				const long double xb = x[r * width + b];

				out[r * width + a] = xa * c - xb * s;
				out[r * width + b] = xb * c + xa * s;
			}
	}
}
