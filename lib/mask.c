/*
 * mask.c - the masking rule for tiles: which of a tile of logits the
 * masks keep, answered from each row's interval of keys left by the
 * position rules (attn_row_keys) and the keys the mask keeps in it,
 * counted from prefix sums of the mask's rows.  The rule for one logit,
 * attn_keeps, is inline in internal.h, where the rules are listed and
 * where a new one goes; this file only counts what that rule keeps, so
 * the two cannot disagree (tests/unit/check_mask.c holds them to it).
 * And attn_masking and attn_row_place, which printers ask.
 *
 * Dims: T query rows, S keys.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

unsigned
attn_masking(const struct attn_config *cfg, const struct attn_inputs *in)
{
	return (cfg->causal || cfg->window || in->mask.data != NULL ||
	    in->varlen.seqs > 0 || in->varlen.used_k != NULL ?
	    ATTN_MASKING_RULE : 0) |
	    (in->bias.data != NULL ? ATTN_MASKING_BIAS : 0);
}

void
attn_row_place(const struct attn_config *cfg, const struct attn_inputs *in,
    size_t T, size_t S, size_t b, size_t i, struct attn_row_place *out)
{
	struct attn_problem p;
	struct attn_seq sq;

	memset(&p, 0, sizeof p);
	p.cfg = cfg;
	p.in = in;
	p.T = T;
	p.S = S;
	attn_row_seq(&p, b, i, &sq);
	out->k0 = sq.k0;
	out->k1 = sq.k1;
	out->qpos = (long long)(i - sq.q0 + sq.q_pos0) - (long long)sq.k_pos0;
}

/* The mask's rows that counts are made for: all of in->mask when it has
 * S > 1 columns, else none. */
static size_t
counted_rows(const struct attn_problem *p)
{
	const struct attn_matrix *m = &p->in->mask;

	return m->data != NULL && m->cols > 1 ? m->rows : 0;
}

enum attn_status
attn_mask_counts_bytes(const struct attn_problem *p, size_t *bytes,
    struct attn_error *err)
{
	size_t n;

	if (attn_size_mul(counted_rows(p), p->S + 1, &n) != 0 ||
	    attn_size_mul(n, sizeof(uint32_t), bytes) != 0)
		return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "the counts of a mask of %zu rows of %zu keys are too "
		    "large to address", p->in->mask.rows, p->S);
	return ATTN_OK;
}

enum attn_status
attn_mask_counts_init(const struct attn_problem *p,
    struct attn_mask_counts *mc, struct attn_error *err)
{
	const struct attn_matrix *m = &p->in->mask;
	const size_t rows = counted_rows(p);
	const int invert = p->cfg->mask_invert != 0;
	enum attn_status st;
	size_t bytes, r, j;

	memset(mc, 0, sizeof *mc);
	if (rows == 0)
		return ATTN_OK;
	if ((st = attn_mask_counts_bytes(p, &bytes, err)) != ATTN_OK)
		return st;
	if ((mc->n = malloc(bytes)) == NULL)
		return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "out of memory");
	mc->width = p->S + 1;
	for (r = 0; r < rows; r++) {
		uint32_t *n = mc->n + r * mc->width;

		n[0] = 0;
		for (j = 0; j < p->S; j++)
			n[j + 1] = n[j] + (uint32_t)((*attn_at(m, r, j) !=
			    0.0) != invert);
	}
	return ATTN_OK;
}

void
attn_mask_counts_free(struct attn_mask_counts *mc)
{
	free(mc->n);
	memset(mc, 0, sizeof *mc);
}

/* The keys among [lo, hi) of row n of counts: differences taken modulo
 * 2^32, so fewer than 2^32 keys at a time. */
static size_t
counted(const uint32_t *n, size_t lo, size_t hi)
{
	const size_t most = UINT32_MAX;
	size_t kept = 0;

	while (hi - lo > most) {
		kept += (uint32_t)(n[lo + most] - n[lo]);
		lo += most;
	}
	return kept + (uint32_t)(n[hi] - n[lo]);
}

/* The keys among [lo, hi) that the pattern rules keep in row i of head
 * hd. */
static size_t
row_kept(const struct attn_problem *p, const struct attn_mask_counts *mc,
    const struct attn_head *hd, size_t i, size_t lo, size_t hi)
{
	size_t j, kept = 0;

	if (hd->mask.data == NULL)
		return hi - lo;
	/* a mask of one column says per row */
	if (hd->mask.cols == 1)
		return attn_pattern_keeps(p, hd, i, 0) ? hi - lo : 0;
	/* a block of one row (stride 0) is that row for every query */
	if (mc != NULL && mc->n != NULL)
		return counted(mc->n + (hd->mask_row0 + (hd->mask.stride == 0 ?
		    0 : i)) * mc->width, lo, hi);
	for (j = lo; j < hi; j++)
		kept += (size_t)attn_pattern_keeps(p, hd, i, j);
	return kept;
}

enum attn_tile
attn_tile_keeps(const struct attn_problem *p,
    const struct attn_mask_counts *mc, const struct attn_head *hd,
    size_t i0, size_t i1, size_t j0, size_t j1)
{
	int some = 0, all = 1;
	size_t i;

	/* until a row with some and a row without, or one mixed row */
	for (i = i0; i < i1 && !(some && !all); i++) {
		size_t lo, hi, kept;

		attn_row_keys(p, hd, i, &lo, &hi);
		lo = lo > j0 ? lo : j0;
		hi = hi < j1 ? hi : j1;
		kept = lo < hi ? row_kept(p, mc, hd, i, lo, hi) : 0;
		some |= kept > 0;
		all &= kept == j1 - j0;
	}
	return !some ? ATTN_TILE_MASKED : all ? ATTN_TILE_KEPT :
	    ATTN_TILE_MIXED;
}
