/*
 * vcase.c - the seeded random cases of every variant (see vcase.h).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <check.h>

#include "testutil.h"
#include "vcase.h"

/* 1, B or B*H blocks, at random. */
static size_t
random_blocks(struct ref_rng *rng, size_t B, size_t H)
{
	size_t r = ref_rng_range(rng, 0, 2);

	return r == 0 ? 1 : r == 1 ? B : B * H;
}

/* The case of seed, small or large (vcase.h). */
static void
make(struct vcase *c, uint64_t seed, int large)
{
	/* mask values that count as nonzero, and as zero */
	static const double nonzero[] = { 1.0, 2.5, -1.0, 1e-300 };
	static const double zero[] = { 0.0, -0.0 };
	struct attn_config *cfg = &c->cfg;
	struct ref_rng rng;
	double amp;
	size_t n, i, j;

	memset(c, 0, sizeof *c);
	ref_rng_seed(&rng, seed);
	c->seed = seed;
	c->B = ref_rng_range(&rng, 1, large ? 2 : 3);
	c->H = ref_rng_range(&rng, 1, large ? 2 : 4);
	do
		c->G = ref_rng_range(&rng, 1, c->H);
	while (c->H % c->G != 0);
	c->T = ref_rng_range(&rng, 1, large ? 300 : 8);
	c->S = ref_rng_range(&rng, 0, 1) ? c->T :
	    ref_rng_range(&rng, 1, large ? 420 : 9);
	c->d_k = ref_rng_range(&rng, 1, large ? 70 : 5);
	c->d_v = ref_rng_range(&rng, 1, large ? 70 : 5);

	attn_config_init(cfg);
	cfg->heads = c->H;
	/* kv_heads 0 means G = H */
	cfg->kv_heads = c->G == c->H && ref_rng_range(&rng, 0, 1) ? 0 : c->G;
	cfg->align = ref_rng_range(&rng, 0, 1) ? ATTN_ALIGN_BOTTOM_RIGHT :
	    ATTN_ALIGN_TOP_LEFT;
	cfg->causal = (int)ref_rng_range(&rng, 0, 1);
	if (ref_rng_range(&rng, 0, 2) == 0) {
		cfg->window = 1;
		cfg->window_left = ref_rng_range(&rng, 0, large ? 200 : 4);
		cfg->window_right = ref_rng_range(&rng, 0, large ? 200 : 4);
	}
	cfg->alibi = (int)ref_rng_range(&rng, 0, 1);
	if (ref_rng_range(&rng, 0, 2) == 0)
		cfg->softcap = ref_rng_uniform(&rng, 0.5, 4.0);
	switch (ref_rng_range(&rng, 0, 2)) {
	case 0:
		cfg->scale_mode = ATTN_SCALE_DEFAULT;
		break;
	case 1:
		cfg->scale_mode = ATTN_SCALE_NONE;
		break;
	default:
		cfg->scale_mode = ATTN_SCALE_VALUE;
		cfg->scale = ref_rng_uniform(&rng, -2.0, 2.0);
		break;
	}
	cfg->masked_rows = (enum attn_masked_rows)ref_rng_range(&rng, 0, 2);
	cfg->mask_invert = (int)ref_rng_range(&rng, 0, 1);

	amp = ref_rng_range(&rng, 0, 1) ? 1.5 : 0.5;
	c->q = matrix_random(&rng, c->B * c->T, c->H * c->d_k, -amp, amp);
	c->k = matrix_random(&rng, c->B * c->S, c->G * c->d_k, -amp, amp);
	c->v = matrix_random(&rng, c->B * c->S, c->G * c->d_v, -2.0, 2.0);

	if (ref_rng_range(&rng, 0, 1)) {
		/* -inf in one entry in eight, or none; sometimes a row */
		int infs = ref_rng_range(&rng, 0, 2) == 0;

		c->bias_blocks = random_blocks(&rng, c->B, c->H);
		c->bias = matrix_random(&rng, c->bias_blocks * c->T, c->S,
		    -3.0, 3.0);
		for (n = 0; infs && n < c->bias.rows * c->S; n++)
			if (ref_rng_range(&rng, 0, 7) == 0)
				c->bias.data[n] = -INFINITY;
		if (ref_rng_range(&rng, 0, 3) == 0) {
			i = ref_rng_range(&rng, 0, c->bias.rows - 1);
			for (j = 0; j < c->S; j++)
				*attn_at(&c->bias, i, j) = -INFINITY;
		}
		for (n = 0; n < c->bias.rows * c->S; n++)
			c->bias_inf |= isinf(c->bias.data[n]);
	}
	if (ref_rng_range(&rng, 0, 1)) {
		/* keep three keys in four, each spelt as the (inverted)
		 * mask spells keeping; sometimes a row keeps none */
		const int inv = cfg->mask_invert;

		c->mask_blocks = random_blocks(&rng, c->B, c->H);
		ck_assert_int_eq(attn_matrix_alloc(&c->mask,
		    c->mask_blocks * c->T, c->S, NULL), ATTN_OK);
		for (n = 0; n < c->mask.rows * c->S; n++) {
			int keep = ref_rng_range(&rng, 0, 3) != 0;

			c->mask.data[n] = keep != inv ?
			    nonzero[ref_rng_range(&rng, 0, 3)] :
			    zero[ref_rng_range(&rng, 0, 1)];
		}
		if (ref_rng_range(&rng, 0, 2) == 0) {
			i = ref_rng_range(&rng, 0, c->mask.rows - 1);
			for (j = 0; j < c->S; j++)
				*attn_at(&c->mask, i, j) = inv ? 1.0 : 0.0;
		}
	}
	/* drawn last, so that the cases without sinks stay as they were */
	if (ref_rng_range(&rng, 0, 2) == 0)
		c->sinks = matrix_random(&rng, 1, c->H, -3.0, 3.0);
	snprintf(c->what, sizeof c->what, "seed %llu (B=%zu H=%zu G=%zu T=%zu "
	    "S=%zu d_k=%zu d_v=%zu%s%s%s%s%s%s%s%s mask %zu bias %zu)",
	    (unsigned long long)seed, c->B, c->H, c->G, c->T, c->S, c->d_k,
	    c->d_v, cfg->align == ATTN_ALIGN_BOTTOM_RIGHT ? " br" : " tl",
	    cfg->causal ? " causal" : "", cfg->window ? " window" : "",
	    cfg->alibi ? " alibi" : "", cfg->softcap > 0 ? " softcap" : "",
	    cfg->mask_invert ? " invert" : "",
	    c->sinks.data != NULL ? " sinks" : "",
	    cfg->masked_rows == ATTN_MASKED_NAN ? " nan" :
	    cfg->masked_rows == ATTN_MASKED_UNIFORM ? " uniform" : " zero",
	    c->mask_blocks, c->bias_blocks);
}

void
vcase_make(struct vcase *c, uint64_t seed)
{
	make(c, seed, 0);
}

void
vcase_make_large(struct vcase *c, uint64_t seed)
{
	make(c, seed, 1);
}

void
vcase_free(struct vcase *c)
{
	attn_matrix_free(&c->q);
	attn_matrix_free(&c->k);
	attn_matrix_free(&c->v);
	attn_matrix_free(&c->mask);
	attn_matrix_free(&c->bias);
	attn_matrix_free(&c->sinks);
}

void
vcase_inputs(const struct vcase *c, struct attn_inputs *in)
{
	memset(in, 0, sizeof *in);
	in->batches = c->B;
	in->q = c->q;
	in->k = c->k;
	in->v = c->v;
	in->mask = c->mask;
	in->mask_blocks = c->mask_blocks;
	in->bias = c->bias;
	in->bias_blocks = c->bias_blocks;
	in->sinks = c->sinks;
}

void
vcase_ref_problem(const struct vcase *c, struct ref_config *rc,
    struct ref_problem *p)
{
	ref_config_init(rc);
	rc->scale = c->cfg.scale_mode == ATTN_SCALE_DEFAULT ?
	    1.0L / sqrtl((long double)c->d_k) :
	    c->cfg.scale_mode == ATTN_SCALE_NONE ? 1.0L :
	    (long double)c->cfg.scale;
	rc->softcap = c->cfg.softcap;
	rc->causal = c->cfg.causal;
	rc->window = c->cfg.window;
	rc->window_left = c->cfg.window_left;
	rc->window_right = c->cfg.window_right;
	rc->alibi = c->cfg.alibi;
	rc->bottom_right = c->cfg.align == ATTN_ALIGN_BOTTOM_RIGHT;
	rc->masked_rows = c->cfg.masked_rows == ATTN_MASKED_NAN ?
	    REF_MASKED_NAN : c->cfg.masked_rows == ATTN_MASKED_UNIFORM ?
	    REF_MASKED_UNIFORM : REF_MASKED_ZERO;
	rc->mask_invert = c->cfg.mask_invert;
	memset(p, 0, sizeof *p);
	p->B = c->B;
	p->H = c->H;
	p->G = c->G;
	p->T = c->T;
	p->S = c->S;
	p->d_k = c->d_k;
	p->d_v = c->d_v;
	p->q = c->q.data;
	p->k = c->k.data;
	p->v = c->v.data;
	p->mask = c->mask.data;
	p->mask_blocks = c->mask_blocks;
	p->bias = c->bias.data;
	p->bias_blocks = c->bias_blocks;
	p->sinks = c->sinks.data;
}

void
vcase_reference(const struct vcase *c, struct ref_stages *r)
{
	struct ref_config rc;
	struct ref_problem p;

	vcase_ref_problem(c, &rc, &p);
	ck_assert_int_eq(ref_run(&rc, &p, r), 0);
}

/* The dO of g's case, and its inputs. */
static void
gcase_d_out(struct gcase *g, uint64_t seed)
{
	struct ref_rng rng;

	ref_rng_seed(&rng, seed ^ 0xD0D0D0D0u);
	g->d_out = matrix_random(&rng, g->c.B * g->c.T, g->c.H * g->c.d_v,
	    -1.0, 1.0);
	vcase_inputs(&g->c, &g->in);
	g->in.d_out = g->d_out;
}

void
gcase_make(struct gcase *g, uint64_t seed)
{
	vcase_make(&g->c, seed);
	gcase_d_out(g, seed);
}

void
gcase_make_large(struct gcase *g, uint64_t seed)
{
	vcase_make_large(&g->c, seed);
	gcase_d_out(g, seed);
}

void
gcase_free(struct gcase *g)
{
	vcase_free(&g->c);
	attn_matrix_free(&g->d_out);
}
