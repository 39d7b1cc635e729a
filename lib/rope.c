/*
 * rope.c - rotary position embedding (RoPE; Su et al., RoFormer): a pass
 * before the kernel that rotates each head's query and key rows by their
 * position, so that whichever kernel runs reads rotated q and k and the
 * scores depend on positions only through i - j.
 *
 * In a head of d columns (d even), pair m (0 <= m < d/2) is rotated by
 * the angle pos * theta_m, theta_m = 1 / base^(2m/d):
 *
 *	x'_a = x_a cos - x_b sin,	x'_b = x_b cos + x_a sin
 *
 * where the pair (a, b) is (m, m + d/2) in the half style (GPT-NeoX and
 * Hugging Face's rotate_half) or (2m, 2m + 1) in the interleaved style
 * (the paper, GPT-J's rotate_every_two).  theta_m and the angle are
 * computed as Hugging Face's Llama code computes them (1 / base **
 * (arange(0, d, 2) / d), then position times that), in double rather
 * than its float32, so that its numbers are met to the last bits.
 *
 * Positions follow --align: query i sits at i + offset (offset 0, or
 * S - T bottom-right, which is what decoding with S - T cached keys
 * does), key j at j; in a packed batch each sequence's own, from its
 * first row (lib/passes.c asks attn_row_seq).  A negative sign turns the rotation back, for
 * gradients that flow to the unrotated q and k.
 *
 * Dims: B batches, T query rows, S keys, H query heads, G KV heads, d_k
 * columns per head.
 */
#include <math.h>
#include <stdlib.h>

#include "internal.h"

/* The columns of pair m of a head of d: its first in *a, its second in
 * *b. */
static void
pair_of(enum attn_rope_style style, size_t d, size_t m, size_t *a, size_t *b)
{
	if (style == ATTN_ROPE_INTERLEAVED) {
		*a = 2 * m;
		*b = 2 * m + 1;
	} else {
		*a = m;
		*b = m + d / 2;
	}
}

enum attn_status
attn_rope_check(const struct attn_config *cfg, size_t d_k,
    struct attn_error *err)
{
	if (!cfg->rope)
		return ATTN_OK;
	if (!isfinite(cfg->rope_base) || cfg->rope_base <= 0.0)
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "the RoPE base must be a finite number above 0");
	if (d_k % 2 != 0)
		return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
		    "RoPE rotates pairs of columns, but d_k per head is %zu, "
		    "an odd number: give each head an even number of "
		    "columns", d_k);
	return ATTN_OK;
}

/* Row r of a stack of blocks of `rows` rows at (r % rows) + offset. */
struct block_pos {
	size_t rows;
	double offset;
};

static double
block_pos(const void *ctx, size_t r)
{
	const struct block_pos *bp = ctx;

	return (double)(r % bp->rows) + bp->offset;
}

enum attn_status
attn_rope_rotate(const struct attn_config *cfg, struct attn_matrix *x,
    size_t block_rows, size_t heads, size_t d, double offset, double sign,
    struct attn_error *err)
{
	struct block_pos bp;

	bp.rows = block_rows;
	bp.offset = offset;
	return attn_rope_rotate_at(cfg, x, heads, d, block_pos, &bp, sign,
	    err);
}

enum attn_status
attn_rope_rotate_at(const struct attn_config *cfg, struct attn_matrix *x,
    size_t heads, size_t d, double (*pos_of)(const void *ctx, size_t r),
    const void *ctx, double sign, struct attn_error *err)
{
	const size_t half = d / 2;
	double *theta;
	size_t r, h, m, a, b;

	if ((theta = attn_mem_array(half + 1, sizeof *theta)) == NULL)
		return attn_error_nomem(err, NULL, "for RoPE's frequencies");
	/* inv_freq = 1.0 / (base ** (arange(0, d, 2) / d)) */
	for (m = 0; m < half; m++)
		theta[m] = 1.0 / pow(cfg->rope_base,
		    (double)(2 * m) / (double)d);
	for (r = 0; r < x->rows; r++) {
		const double pos = pos_of(ctx, r);

		for (m = 0; m < half; m++) {
			const double angle = pos * theta[m];
			const double c = cos(angle), s = sign * sin(angle);

			pair_of(cfg->rope_style, d, m, &a, &b);
			for (h = 0; h < heads; h++) {
				double *xa = attn_at(x, r, h * d + a);
				double *xb = attn_at(x, r, h * d + b);
				const double va = *xa, vb = *xb;

				*xa = va * c - vb * s;
				*xb = vb * c + va * s;
			}
		}
	}
	attn_mem_free(theta, (half + 1) * sizeof *theta);
	return ATTN_OK;
}
