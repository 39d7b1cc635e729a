/*
 * emulate_tile.h - lib/emulate.c's tile sum for one vector width, written
 * once: out[c LANES + l] = sum_r w[r ldw + l] b[r sr + c sc] for c < nc,
 * each lane's sum an FMA chain over r < n from +0, which is fmaf lane by
 * lane in tile_sum's order, so every width gives tile_sum's bytes.  The
 * LANES lanes of a row are FV_PER vectors of FL floats; TILE_STEP
 * columns are held in registers at a time.
 *
 * What the including file defines (and this file undefines):
 *	TILE_NAME, TILE_TARGET	the function, its target attribute
 *	FV, FL, TILE_STEP	the vector of floats, its lanes, the columns
 *	fzero() fload(p) fstore(p, v) fbcast(p) ffma(a, b, c)
 *				0, unaligned load and store, *p in every
 *				lane, a * b + c rounded once
 */
#define TILE_CAT_(a, b) a##b
#define TILE_CAT(a, b) TILE_CAT_(a, b)
#define TILE_COLS TILE_CAT(TILE_NAME, _cols)
#define FV_PER (LANES / FL)

/* Columns [0, cols) of out from b, cols a constant where inlined. */
TILE_TARGET static inline __attribute__((always_inline)) void
TILE_COLS(const float *w, size_t ldw, size_t n, const float *b, size_t sr,
    size_t sc, size_t cols, float *out)
{
	FV a[TILE_STEP][FV_PER];
	size_t r, j, u;

#pragma GCC unroll 16
	for (j = 0; j < cols; j++)
#pragma GCC unroll 4
		for (u = 0; u < FV_PER; u++)
			a[j][u] = fzero();
	for (r = 0; r < n; r++) {
		const float *wr = w + r * ldw, *br = b + r * sr;
		FV x[FV_PER];

#pragma GCC unroll 4
		for (u = 0; u < FV_PER; u++)
			x[u] = fload(wr + u * FL);
#pragma GCC unroll 16
		for (j = 0; j < cols; j++) {
			const FV v = fbcast(br + j * sc);

#pragma GCC unroll 4
			for (u = 0; u < FV_PER; u++)
				a[j][u] = ffma(x[u], v, a[j][u]);
		}
	}
#pragma GCC unroll 16
	for (j = 0; j < cols; j++)
#pragma GCC unroll 4
		for (u = 0; u < FV_PER; u++)
			fstore(out + j * LANES + u * FL, a[j][u]);
}

TILE_TARGET static void
TILE_NAME(const float *w, size_t ldw, size_t n, const float *b, size_t sr,
    size_t sc, size_t nc, float *out)
{
	size_t c = 0;

	for (; c + TILE_STEP <= nc; c += TILE_STEP)
		TILE_COLS(w, ldw, n, b + c * sc, sr, sc, TILE_STEP,
		    out + c * LANES);
	for (; c < nc; c++)
		TILE_COLS(w, ldw, n, b + c * sc, sr, sc, 1, out + c * LANES);
}

#undef TILE_NAME
#undef TILE_TARGET
#undef FV
#undef FL
#undef TILE_STEP
#undef fzero
#undef fload
#undef fstore
#undef fbcast
#undef ffma
#undef TILE_COLS
#undef FV_PER
