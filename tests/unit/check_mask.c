/*
 * check_mask.c - the masking rule (lib/mask.c, internal.h): the rule for
 * one logit is attn(1)'s (checked against positions worked out here in
 * signed arithmetic), and what it says of a tile, wholly kept, wholly
 * masked or mixed, is what it says of each logit in the tile: on random
 * problems of every kind of mask (T x S, 1 x S, T x 1, 1 x 1, one block
 * or one per batch or per batch and head, inverted or not), causal or
 * not, windows narrow, wide and beyond any position, both alignments
 * with T below, equal to and above S, and random tiles, sizes and
 * offsets, with the mask's counts and without; and packed batches of
 * variable-length sequences (empty ones among them) and counts of used
 * keys per batch or per sequence, whose positions are worked out here
 * sequence by sequence.  And attn_masking, which printers ask.
 *
 * Dims: B batches, H query heads, T query rows, S keys.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "ref.h"
#include "suites.h"
#include "testutil.h"

/* A random problem of the masking rule: its config, inputs and the
 * matrices they view (q, k and v matter only for their shapes). */
struct mcase {
	struct attn_config cfg;
	struct attn_inputs in;
	struct attn_matrix q, k, v, mask;
	struct attn_problem p;
	size_t cu_q[7], cu_k[7], used[7];	/* attn_varlen's arrays */
	char what[200];
};

/* Packed sequences (one case in four) or counts of used keys per batch
 * (one in four), drawn from their own stream so that the other draws
 * stay those of their seed: up to 6 sequences of 0 to 9 queries and
 * keys (at least one of each in all), used keys per sequence one time in
 * two.  Sets B, T and S for them. */
static void
varlen_make(struct mcase *c, uint64_t seed, size_t *B, size_t *T, size_t *S)
{
	struct attn_varlen *vl = &c->in.varlen;
	struct ref_rng rng;
	size_t n, s;

	ref_rng_seed(&rng, seed ^ 0x5E9u);
	switch (ref_rng_range(&rng, 0, 3)) {
	case 0:
		n = ref_rng_range(&rng, 1, 6);
		*B = 1;
		c->cu_q[0] = c->cu_k[0] = 0;
		for (s = 0; s < n; s++) {
			c->cu_q[s + 1] = c->cu_q[s] + (ref_rng_range(&rng,
			    0, 3) == 0 ? 0 : ref_rng_range(&rng, 1, 9));
			c->cu_k[s + 1] = c->cu_k[s] + (ref_rng_range(&rng,
			    0, 3) == 0 ? 0 : ref_rng_range(&rng, 1, 9));
		}
		c->cu_q[n] += c->cu_q[n] == 0;
		c->cu_k[n] += c->cu_k[n] == 0;
		*T = c->cu_q[n];
		*S = c->cu_k[n];
		vl->seqs = n;
		vl->cu_q = c->cu_q;
		vl->cu_k = c->cu_k;
		if (ref_rng_range(&rng, 0, 1)) {
			for (s = 0; s < n; s++)
				c->used[s] = ref_rng_range(&rng, 0,
				    c->cu_k[s + 1] - c->cu_k[s]);
			vl->used_k = c->used;
			vl->used_n = n;
		}
		break;
	case 1:
		for (s = 0; s < *B; s++)
			c->used[s] = ref_rng_range(&rng, 0, *S);
		vl->used_k = c->used;
		vl->used_n = *B;
		break;
	default:
		break;
	}
}

/* A window side: narrow, wide, or so large that a sum would wrap. */
static size_t
window_side(struct ref_rng *rng)
{
	switch (ref_rng_range(rng, 0, 3)) {
	case 0:
		return ref_rng_range(rng, 0, 3);
	case 1:
		return ref_rng_range(rng, 0, 40);
	case 2:
		return SIZE_MAX - ref_rng_range(rng, 0, 3);
	default:
		return SIZE_MAX / 2;
	}
}

/* Draw the case of seed: T and S up to 37, B and H up to 2, a mask one
 * case in four of each shape or none, of a random density (0 and 1 now
 * and then, so that whole rows and tiles go one way). */
static void
mcase_make(struct mcase *c, uint64_t seed)
{
	struct ref_rng rng;
	size_t B, H, T, S, r, cols, blocks, n;
	double density;
	const char *shape = "no";
	struct attn_error err;

	ref_rng_seed(&rng, seed);
	memset(c, 0, sizeof *c);
	memset(&err, 0, sizeof err);
	attn_config_init(&c->cfg);
	B = ref_rng_range(&rng, 1, 2);
	H = ref_rng_range(&rng, 1, 2);
	T = ref_rng_range(&rng, 1, 37);
	S = ref_rng_range(&rng, 0, 2) == 0 ? T : ref_rng_range(&rng, 1, 37);
	varlen_make(c, seed, &B, &T, &S);
	c->cfg.heads = H;
	c->cfg.kv_heads = 1;
	c->cfg.align = ref_rng_range(&rng, 0, 1) ? ATTN_ALIGN_BOTTOM_RIGHT :
	    ATTN_ALIGN_TOP_LEFT;
	c->cfg.causal = (int)ref_rng_range(&rng, 0, 1);
	if (ref_rng_range(&rng, 0, 1)) {
		c->cfg.window = 1;
		c->cfg.window_left = window_side(&rng);
		c->cfg.window_right = window_side(&rng);
	}
	c->cfg.mask_invert = (int)ref_rng_range(&rng, 0, 1);
	ck_assert_int_eq(attn_matrix_alloc(&c->q, B * T, H, NULL), ATTN_OK);
	ck_assert_int_eq(attn_matrix_alloc(&c->k, B * S, 1, NULL), ATTN_OK);
	ck_assert_int_eq(attn_matrix_alloc(&c->v, B * S, 1, NULL), ATTN_OK);
	c->in.batches = B;
	c->in.q = c->q;
	c->in.k = c->k;
	c->in.v = c->v;
	switch (ref_rng_range(&rng, 0, 4)) {
	case 0:
		r = T, cols = S, shape = "TxS";
		break;
	case 1:
		r = 1, cols = S, shape = "1xS";
		break;
	case 2:
		r = T, cols = 1, shape = "Tx1";
		break;
	case 3:
		r = 1, cols = 1, shape = "1x1";
		break;
	default:
		r = 0, cols = 0;
		break;
	}
	if (r > 0) {
		const size_t choice[3] = { 1, B, B * H };

		blocks = choice[ref_rng_range(&rng, 0, 2)];
		density = ref_rng_range(&rng, 0, 3) == 0 ?
		    (double)ref_rng_range(&rng, 0, 1) :
		    ref_rng_uniform(&rng, 0.0, 1.0);
		ck_assert_int_eq(attn_matrix_alloc(&c->mask, blocks * r, cols,
		    NULL), ATTN_OK);
		for (n = 0; n < blocks * r * cols; n++)
			c->mask.data[n] = ref_rng_uniform(&rng, 0.0, 1.0) <
			    density ? 1.0 : 0.0;
		c->in.mask = c->mask;
		c->in.mask_blocks = blocks;
	}
	snprintf(c->what, sizeof c->what, "seed %llu: B=%zu H=%zu T=%zu "
	    "S=%zu %s%s window %d (%zu, %zu), %s mask%s, %zu sequences%s",
	    (unsigned long long)seed, B, H, T, S,
	    c->cfg.align == ATTN_ALIGN_BOTTOM_RIGHT ? "bottom-right" :
	    "top-left", c->cfg.causal ? " causal" : "", c->cfg.window,
	    c->cfg.window_left, c->cfg.window_right, shape,
	    c->cfg.mask_invert ? " inverted" : "", c->in.varlen.seqs,
	    c->in.varlen.used_k != NULL ? ", used keys" : "");
	ck_assert_msg(attn_problem_init(&c->p, &c->cfg, &c->in,
	    STAGE(OUTPUT), &err) == ATTN_OK, "%s: %s", c->what, err.msg);
}

static void
mcase_free(struct mcase *c)
{
	attn_matrix_free(&c->q);
	attn_matrix_free(&c->k);
	attn_matrix_free(&c->v);
	attn_matrix_free(&c->mask);
}

/* attn(1)'s rule for logit (i, j) of batch b, head h, worked out in signed
 * positions: query i at i + S - T (bottom-right) or i, key j at j; in a
 * packed batch, within the sequence whose queries hold i (found by
 * walking them), whose keys alone it sees, and S its used keys. */
static int
spec_keeps(const struct mcase *c, size_t b, size_t h, size_t i, size_t j)
{
	const struct attn_config *cfg = &c->cfg;
	const struct attn_varlen *vl = &c->in.varlen;
	long long T = (long long)c->p.T, S = (long long)c->p.S, d;
	long long qi = (long long)i, kj = (long long)j;
	const struct attn_matrix *m = &c->mask;
	size_t s = 0;

	if (vl->seqs > 0) {
		while (!(c->cu_q[s] <= i && i < c->cu_q[s + 1]))
			s++;
		T = (long long)(c->cu_q[s + 1] - c->cu_q[s]);
		S = (long long)(c->cu_k[s + 1] - c->cu_k[s]);
		qi -= (long long)c->cu_q[s];
		kj -= (long long)c->cu_k[s];
	} else {
		s = b;
	}
	if (vl->used_k != NULL)
		S = (long long)c->used[s];
	if (kj < 0 || kj >= S)
		return 0;
	d = kj - (qi + (cfg->align == ATTN_ALIGN_BOTTOM_RIGHT ? S - T : 0));

	if (cfg->causal && d > 0)
		return 0;
	/* window sides beyond any distance (here, 2^40) keep all */
	if (cfg->window && ((d < 0 && cfg->window_left < (1ull << 40) &&
	    -d > (long long)cfg->window_left) || (d > 0 &&
	    cfg->window_right < (1ull << 40) &&
	    d > (long long)cfg->window_right)))
		return 0;
	if (m->data != NULL) {
		const size_t blocks = c->in.mask_blocks;
		const size_t n = blocks == 1 ? 0 : blocks == c->in.batches ?
		    b : b * c->p.H + h;
		const size_t r = m->rows / blocks;
		const double x = *attn_at(m, n * r + (r == 1 ? 0 : i),
		    m->cols == 1 ? 0 : j);

		if ((x != 0.0) == (cfg->mask_invert != 0))
			return 0;
	}
	return 1;
}

#define MASK_CASES 300

/* attn_keeps is attn(1)'s rule for every logit of every head. */
START_TEST(attn_keeps_follows_the_documented_rule)
{
	struct mcase c;
	struct attn_head hd;
	size_t b, h, i, j;

	mcase_make(&c, 0x3A5C0000u + (uint64_t)_i);
	for (b = 0; b < c.p.B; b++)
		for (h = 0; h < c.p.H; h++) {
			attn_problem_head(&c.p, b, h, &hd);
			for (i = 0; i < c.p.T; i++)
				for (j = 0; j < c.p.S; j++)
					ck_assert_msg(attn_keeps(&c.p, &hd, i,
					    j) == spec_keeps(&c, b, h, i, j),
					    "%s: batch %zu head %zu (%zu, %zu)",
					    c.what, b, h, i, j);
		}
	mcase_free(&c);
}
END_TEST

/* What attn_keeps says of each logit of the tile, summed up. */
static enum attn_tile
tile_by_logits(const struct mcase *c, const struct attn_head *hd,
    size_t i0, size_t i1, size_t j0, size_t j1)
{
	size_t i, j, kept = 0;

	for (i = i0; i < i1; i++)
		for (j = j0; j < j1; j++)
			kept += (size_t)attn_keeps(&c->p, hd, i, j);
	return kept == 0 ? ATTN_TILE_MASKED : kept == (i1 - i0) * (j1 - j0) ?
	    ATTN_TILE_KEPT : ATTN_TILE_MIXED;
}

/* A random tile [*i0, *i1) x [*j0, *j1), not empty: single rows and
 * keys, the whole block, and sizes and offsets between. */
static void
random_tile(struct ref_rng *rng, size_t T, size_t S, size_t *i0,
    size_t *i1, size_t *j0, size_t *j1)
{
	*i0 = ref_rng_range(rng, 0, T - 1);
	*i1 = ref_rng_range(rng, 0, 2) == 0 ? *i0 + 1 :
	    ref_rng_range(rng, *i0 + 1, T);
	*j0 = ref_rng_range(rng, 0, S - 1);
	*j1 = ref_rng_range(rng, 0, 2) == 0 ? *j0 + 1 :
	    ref_rng_range(rng, *j0 + 1, S);
	if (ref_rng_range(rng, 0, 9) == 0) {
		*i0 = *j0 = 0;
		*i1 = T;
		*j1 = S;
	}
}

/* attn_tile_keeps, with the mask's counts and without, says of random
 * tiles of every head what attn_keeps says of their logits. */
START_TEST(a_tile_is_what_its_logits_are)
{
	static const char *const names[] = { "masked", "mixed", "kept" };
	struct mcase c;
	struct attn_mask_counts mc;
	struct attn_head hd;
	struct ref_rng rng;
	struct attn_error err;
	size_t b, h, t, i0, i1, j0, j1;

	mcase_make(&c, 0x711E0000u + (uint64_t)_i);
	ref_rng_seed(&rng, 0x711E5EEDu + (uint64_t)_i);
	memset(&err, 0, sizeof err);
	ck_assert_int_eq(attn_mask_counts_init(&c.p, &mc, &err), ATTN_OK);
	for (b = 0; b < c.p.B; b++)
		for (h = 0; h < c.p.H; h++) {
			attn_problem_head(&c.p, b, h, &hd);
			for (t = 0; t < 40; t++) {
				enum attn_tile want, got, slow;

				random_tile(&rng, c.p.T, c.p.S, &i0, &i1, &j0,
				    &j1);
				want = tile_by_logits(&c, &hd, i0, i1, j0, j1);
				got = attn_tile_keeps(&c.p, &mc, &hd, i0, i1,
				    j0, j1);
				slow = attn_tile_keeps(&c.p, NULL, &hd, i0, i1,
				    j0, j1);
				ck_assert_msg(got == want && slow == want,
				    "%s: batch %zu head %zu, rows %zu..%zu "
				    "keys %zu..%zu: %s (without counts %s), "
				    "its logits %s", c.what, b, h, i0, i1, j0, j1,
				    names[got], names[slow], names[want]);
			}
		}
	attn_mask_counts_free(&mc);
	mcase_free(&c);
}
END_TEST

/* The counts are held only for a mask of S columns, one row of S + 1
 * each, and attn_mask_counts_bytes says so. */
START_TEST(counts_are_held_only_for_masks_of_keys)
{
	struct mcase c;
	struct attn_mask_counts mc;
	struct attn_error err;
	size_t bytes;

	mcase_make(&c, 0xC0C0u + (uint64_t)_i);
	memset(&err, 0, sizeof err);
	ck_assert_int_eq(attn_mask_counts_bytes(&c.p, &bytes, &err), ATTN_OK);
	ck_assert_int_eq(attn_mask_counts_init(&c.p, &mc, &err), ATTN_OK);
	if (c.mask.data == NULL || c.mask.cols == 1) {
		ck_assert_uint_eq(bytes, 0);
		ck_assert_ptr_null(mc.n);
	} else {
		ck_assert_uint_eq(bytes, c.mask.rows * (c.p.S + 1) *
		    sizeof(uint32_t));
		ck_assert_ptr_nonnull(mc.n);
		ck_assert_uint_eq(mc.width, c.p.S + 1);
	}
	attn_mask_counts_free(&mc);
	mcase_free(&c);
}
END_TEST

/* attn_masking: a rule when causal, a window, a mask, packed sequences
 * or counts of used keys are in force, the bias on its own; nothing for
 * plain attention. */
START_TEST(masking_names_what_may_mask)
{
	struct attn_config cfg;
	struct attn_inputs in;
	double one = 1.0;
	const struct attn_matrix m = { 1, 1, 1, &one };

	attn_config_init(&cfg);
	memset(&in, 0, sizeof in);
	ck_assert_uint_eq(attn_masking(&cfg, &in), 0);
	cfg.causal = 1;
	ck_assert_uint_eq(attn_masking(&cfg, &in), ATTN_MASKING_RULE);
	cfg.causal = 0;
	cfg.window = 1;
	ck_assert_uint_eq(attn_masking(&cfg, &in), ATTN_MASKING_RULE);
	cfg.window = 0;
	in.bias = m;
	ck_assert_uint_eq(attn_masking(&cfg, &in), ATTN_MASKING_BIAS);
	in.mask = m;
	ck_assert_uint_eq(attn_masking(&cfg, &in),
	    ATTN_MASKING_RULE | ATTN_MASKING_BIAS);
	memset(&in, 0, sizeof in);
	in.varlen.seqs = 1;
	ck_assert_uint_eq(attn_masking(&cfg, &in), ATTN_MASKING_RULE);
	in.varlen.seqs = 0;
	in.varlen.used_k = &in.varlen.used_n;
	ck_assert_uint_eq(attn_masking(&cfg, &in), ATTN_MASKING_RULE);
}
END_TEST

Suite *
mask_suite(void)
{
	Suite *s = suite_create("mask");
	TCase *tc = tcase_create("rule");

	tcase_add_loop_test(tc, attn_keeps_follows_the_documented_rule, 0,
	    MASK_CASES);
	tcase_add_loop_test(tc, a_tile_is_what_its_logits_are, 0,
	    MASK_CASES);
	tcase_add_loop_test(tc, counts_are_held_only_for_masks_of_keys, 0,
	    40);
	tcase_add_test(tc, masking_names_what_may_mask);
	suite_add_tcase(s, tc);
	return s;
}
