/*
 * ref.h - an independent long double reference for the unit tests, and
 * the seeded random numbers the tests draw from.
 *
 * ref_run is every variant attn computes (heads, grouped KV heads,
 * batches, softcap, bias, ALiBi, causal, window and mask, sinks, RoPE,
 * the three policies for rows with no key left) written straight from the formulas
 * in long double (expl, logl, tanhl, powl), sharing no code and no types
 * with lib/: matrices are packed row-major arrays of double in, long
 * double out.  ref_attention is the plain case.  It lives only in tests/;
 * the library itself stays double.
 *
 * ref_backward (ref_grad.c) is the backward pass written the same way,
 * and ref_fd_grad the central finite difference of L = sum(dO * output)
 * through ref_run, which checks both without any formula for a
 * derivative.
 *
 * Dims: B batches, H query heads, G KV heads, T query rows, S keys, d_k
 * columns of Q and K per head, d_v columns of V per head.
 */
#ifndef ATTN_REF_H
#define ATTN_REF_H

#include <stddef.h>
#include <stdint.h>

/*
 * Every stage, packed row-major, owned (ref_stages_free).  Per-head
 * stages are stacks: block (b, h) holds rows (b*H + h)*T .. + T.  output
 * is B*T x H*d_v, head h in columns h*d_v .. + d_v.  With B = H = 1 they
 * are plain T x S, T x d_v and T x 1 matrices.
 */
struct ref_stages {
	size_t B, H, T, S, d_v;
	long double *scores;	/* B*H*T x S */
	long double *scaled;	/* B*H*T x S */
	long double *weights;	/* B*H*T x S */
	long double *mask;	/* B*H*T x S: 1 where scaled > -inf, else 0 */
	long double *output;	/* B*T x H*d_v */
	long double *lse;	/* B*H*T x 1 */
	size_t nmasked;		/* rows whose every scaled entry is -inf */
	size_t *masked;		/* their rows in the stacks, ascending */
};

/* What a row with no key left gets. */
enum ref_masked_rows {
	REF_MASKED_ZERO,	/* weights 0, so output 0 */
	REF_MASKED_NAN,		/* weights nan, so output nan */
	REF_MASKED_UNIFORM	/* weights 1/S, so output the mean of V */
};

/* How to compute.  ref_config_init: scale 1 and nothing else. */
struct ref_config {
	long double scale;	/* x = scores * scale */
	long double softcap;	/* > 0: x = softcap * tanh(x / softcap) */
	int causal;		/* mask key j when j > i + offset */
	int window;		/* mask j out of i+offset-left..i+offset+right */
	size_t window_left, window_right;
	int alibi;		/* x -= slope_h * |i + offset - j| */
	int bottom_right;	/* offset S - T; else offset 0 */
	enum ref_masked_rows masked_rows;
	int mask_invert;	/* mask masks where nonzero; else where zero */
	int rope;		/* q and k rotated by position (ref_rope)
				 * before the scores: query i at i + offset,
				 * key j at j */
	long double rope_base;
	int rope_interleaved;
};

/*
 * One computation: q is B*T x H*d_k, k is B*S x G*d_k, v is B*S x G*d_v,
 * packed.  mask and bias (NULL when absent) are mask_blocks or
 * bias_blocks packed T x S blocks: 1 for everything, B (one per batch) or
 * B*H (block b*H + h).  G divides H; query head h reads KV head
 * h / (H / G).
 */
struct ref_problem {
	size_t B, H, G, T, S, d_k, d_v;
	const double *q, *k, *v;
	const double *mask, *bias;
	size_t mask_blocks, bias_blocks;
	const double *sinks;	/* H logits, or NULL: head h's softmax
				 * denominator gains expl(sinks[h]) */
};

void ref_config_init(struct ref_config *cfg);

/* calloc for n long doubles, never asking for 0 bytes; NULL when out of
 * memory. */
long double *ref_ld_alloc(size_t n);

/* Which of `blocks` T x S mask or bias blocks (1, B or B*H) batch b,
 * head h reads. */
size_t ref_block_of(size_t blocks, size_t B, size_t H, size_t b, size_t h);

/* Compute every stage of p under cfg.  Returns 0, or -1 when out of
 * memory (then *out is zeroed). */
int ref_run(const struct ref_config *cfg, const struct ref_problem *p,
    struct ref_stages *out);

/*
 * Compute every stage for q (T x d_k), k (S x d_k) and v (S x d_v), all
 * packed (row stride = columns), with logits = scores * scale: ref_run
 * with one batch, one head and nothing else.  Returns 0, or -1 when out
 * of memory (then *out is zeroed).
 */
int ref_attention(const double *q, const double *k, const double *v,
    size_t T, size_t S, size_t d_k, size_t d_v, long double scale,
    struct ref_stages *out);

/* Free what ref_run or ref_attention allocated and zero *r. */
void ref_stages_free(struct ref_stages *r);

/*
 * The ALiBi slopes of H heads into slopes[0..H), as Press et al.'s
 * get_slopes computes them: 2^(-8/H) * 2^(-8i/H) when H is a power of
 * two, else the slopes of the largest power of two n below H followed by
 * the first H - n of every other slope of 2n.  Returns 0, or -1 when out
 * of memory.
 */
int ref_alibi_slopes(size_t H, long double *slopes);

/* ------------------------------------------------ backward (ref_grad.c) */

/*
 * The gradients of L = sum(dO * output) for an upstream gradient dO
 * (B*T x H*d_v, packed, like output), in long double, owned
 * (ref_grads_free).  Per-head stacks and the Q, K, V layouts are as in
 * struct ref_stages and struct ref_problem.  d_bias has the bias's
 * blocks (bias_blocks*T x S): the gradient of the bias as given, which a
 * block shared by several batches and heads collects from each.
 */
struct ref_grads {
	long double *d_weights;	/* B*H*T x S: dP = dO V^T */
	long double *delta;	/* B*H*T x 1: rowsum(dO * output) */
	long double *d_scaled;	/* B*H*T x S: dS = weights * (dP - delta) */
	long double *d_q;	/* B*T x H*d_k */
	long double *d_k;	/* B*S x G*d_k */
	long double *d_v;	/* B*S x G*d_v */
	long double *d_bias;	/* bias_blocks*T x S; NULL without a bias */
};

/*
 * The chain rule written out formula by formula, from the forward stages
 * fwd that ref_run(cfg, p) gave.  A row with no key gives dS = 0 (nan
 * with REF_MASKED_NAN, whose nan weights spread as arithmetic spreads
 * them).  Returns 0, or -1 when out of memory (then *out is zeroed).
 */
int ref_backward(const struct ref_config *cfg, const struct ref_problem *p,
    const double *d_out, const struct ref_stages *fwd,
    struct ref_grads *out);

void ref_grads_free(struct ref_grads *g);

/* L = sum(dO * output) for p under cfg.  Returns 0, or -1 when out of
 * memory. */
int ref_loss(const struct ref_config *cfg, const struct ref_problem *p,
    const double *d_out, long double *loss);

/* The inputs a finite difference can move. */
enum ref_input { REF_INPUT_Q, REF_INPUT_K, REF_INPUT_V, REF_INPUT_BIAS };

/*
 * The derivative of L with respect to element n of input `which` (in its
 * packed layout) by finite differences: two central differences
 * (L(x+) - L(x-)) / (x+ - x-), with x+ and x- the doubles nearest
 * x +- h and x +- h/2, h = 1e-4 max(1, |x|), each step taken exactly as
 * the input moved, and their s^2 error term eliminated (Richardson).
 * What is left is O(h^4) and L's long double rounding over h, about
 * 1e-15 of the gradients' scale.  Returns 0, or -1 when out of memory.
 */
int ref_fd_grad(const struct ref_config *cfg, const struct ref_problem *p,
    const double *d_out, enum ref_input which, size_t n, long double *grad);
/*
 * Rotary position embedding, as the RoFormer paper writes it, in long
 * double (tests/ref/ref_rope.c): x is rows x heads*d, packed, row r at
 * position pos0 + (r % block); in each head of d columns (d even), pair
 * m is rotated by the angle pos * base^(-2m/d), the pair being columns
 * (m, m + d/2), or (2m, 2m + 1) when interleaved.  sign -1 rotates back.
 * out is rows x heads*d.
 */
void ref_rope(const double *x, size_t rows, size_t block, size_t heads,
    size_t d, long double pos0, long double base, int interleaved,
    long double sign, long double *out);

/* A splitmix64 generator: the same seed gives the same numbers on every
 * machine, so a failing case can be replayed from its seed. */
struct ref_rng {
	uint64_t state;
};

void ref_rng_seed(struct ref_rng *r, uint64_t seed);
uint64_t ref_rng_next(struct ref_rng *r);

/* Uniform in [lo, hi). */
double ref_rng_uniform(struct ref_rng *r, double lo, double hi);

/* Uniform in [lo, hi], both inclusive (lo <= hi). */
size_t ref_rng_range(struct ref_rng *r, size_t lo, size_t hi);

/* Fill data[0..n) with uniform numbers in [lo, hi). */
void ref_rng_fill(struct ref_rng *r, double *data, size_t n, double lo,
    double hi);

#endif /* ATTN_REF_H */
