/*
 * emulate.c - the baseline of --emulate: attention computed as a plain
 * kernel in float32, float16 or bfloat16 computes it, the way
 * FlashAttention's tests compute their reference (attention_ref with
 * upcast=False) and autograd its backward in that dtype, but for delta,
 * FlashAttention's rowsum(dO * O) (below).  A kernel in
 * that format is then judged by its error against the double result
 * next to this baseline's (--factor).
 *
 * With F the format and A = float32, the accumulator (real fp16 and bf16
 * kernels accumulate in float32, as PyTorch's matmul and softmax do), and
 * every step rounded to nearest, ties to even:
 *
 *	q, k, v, bias, dO   rounded to F first (from the double, once)
 *	qs      = F(A(q * A(scale)))            q scaled first, in F
 *	scores  = F(sum_c A(q k))               (the stage only: unscaled)
 *	x       = F(sum_c A(qs k))              each term an fmaf, in order
 *	softcap C = A(cap):  t = F(A(tanh(F(A(x / C)))));  x = F(A(t * C))
 *	bias    x = F(A(x + bias));  ALiBi x = F(A(x - A(A(slope) * |i - j|)))
 *	masks   -inf
 *	m       = max(F(sink), max_j x), nan if any x is
 *	e_j     = A(exp(A(x_j - m)))            libm's exp of the float
 *	sum     = A(exp(A(F(sink) - m))) or 0, then A(sum + e_j) in key order
 *	weights = F(A(e_j / sum))
 *	lse     = A(m + A(log(sum)))            kept in float32, as
 *	          FlashAttention's kernels store softmax_lse (float, their
 *	          ElementAccum, whatever the dtype of q)
 *	output  = F(sum_j A(weights v))         fmaf in key order
 *
 * and with dO (--grad) autograd's backward of the same graph, but for
 * delta:
 *
 *	grad_weights dP = F(sum_c A(dO v))
 *	delta        D  = A(sum_c A(dO output))  FlashAttention's delta, over
 *	             the d_v columns of the stored output, kept in float32 as
 *	             its kernels keep it; autograd's softmax backward sums
 *	             weights dP over the keys instead, equal only in exact
 *	             arithmetic, and the kernels checked compute this one
 *	grad_scaled  dS = F(A(weights * A(dP - D))); +0 where the logit is
 *	             -inf or the weight 0; a row with no key 0 (nan with
 *	             --masked-rows nan)
 *	softcap      dt = F(A(dS * C)); ds1 = F(A(dt * A(1 - A(t t))));
 *	             dx = F(A(ds1 / C));  without one dx = dS
 *	grad_q       F(A(F(sum_j A(dx k)) * A(scale)))   through qs = q scale
 *	grad_k       F(sum_h A(F(sum_i A(dx qs))))   over the query heads h
 *	grad_v       F(sum_h A(F(sum_i A(weights dO))))  sharing the KV head
 *
 * where the sums over h are float32 in head order, rounded once, as the
 * sum that autograd's backward of an expanded K or V does.  For F =
 * float32 both roundings are float32: a plain float32 kernel with fma.
 *
 * With the scale on k (cfg->emulate_order K, attn(1) --emulate-order k:
 * attention_ref's reorder_ops=True, which FlashAttention's tests take
 * as their baseline), k is scaled instead, and q enters as it is:
 *
 *	ks      = F(A(k * A(scale)))        each KV head's keys, once
 *	x       = F(sum_c A(q ks))          (scores unchanged)
 *	grad_q  F(sum_j A(dx ks))
 *	grad_k  F(sum_h A(F(A(F(sum_i A(dx q)) * A(scale)))))  the scale
 *	        taken back in each query head, before the sum over h (the
 *	        reference scales K after repeating it for the heads)
 *
 * With a dropout mask (keep 1 or 0), as attention_ref applies it: the
 * weights are masked, not scaled, and V is scaled instead, in F, by R =
 * A(1/(1 - p)) (its "v * dropout_scaling"):
 *
 *	v            = F(A(v * R))              after v is rounded to F
 *	output       = F(sum_j A(weights keep v))
 *	dropped      = F(A(weights * R)) where kept, else 0 (the stage only)
 *	grad_weights = F(sum_c A(dO v)) where kept, else 0
 *	grad_v       = F(sum_h A(F(A(F(sum_i A(weights keep dO)) * R))))
 *
 * (the mul's backward in each query head before the heads' sum); delta
 * and grad_scaled then follow as above.  Without a mask R is 1 and keep
 * 1, which changes no bit.
 *
 * In the FP8 formats (OCP E4M3 and E5M2), FlashAttention 3's fp8 forward
 * pass, which takes Q, K and V in the format and keeps the rest wider:
 * q, k, v are rounded to F, but every step between is rounded to A
 * (e->mid), the scale multiplies the logits, not q (x = A(A(sum_c A(q
 * k)) * s), s = A(A(A(scale) * dq) * dk) with the descale factors of
 * the head's batch and KV head, fp8_scale), the weights are rounded to
 * E4M3 before the P V product (e->pf; FlashAttention 3 converts P to
 * E4M3, its fp8 input format), and the output, times dv in A, to
 * bfloat16, the dtype its fp8 kernels write (e->of).  Those kernels have no backward pass, so no backward stage is
 * emulated in FP8 (attn_emulate_ops: a usage error).
 * Overflow is what the format gives (fp16 logits past 65504 are inf, and
 * their softmax nan): not an error, but part of the baseline.
 *
 * How.  Each step is the hardware's float32 operation, which rounds as
 * the step above says (a float32 operation is the exact result rounded
 * once); fmaf is one rounding, and nothing else is contracted (the
 * Makefile builds this file with -ffp-contract=off).  F is
 * attn_round_floats (lib/round.c: F16C for fp16 where the CPU has it
 * and ATTN_ISA allows more than plain C, bit operations otherwise).
 * The order of every sum is the naive one above, one term after
 * another; the loops are vectorised across LANES query rows (or keys,
 * for grad_k and grad_v), never within a sum, so each lane does the
 * scalar loop's operations in its order, and the x86-64-v3 copy of each
 * loop (ATTN_V3_CLONES) gives the plain copy's bytes, as do the AVX2
 * and AVX-512 copies of the matrix products (tile_sum).
 * tests/unit/emulate_ref.c is the same computation written with
 * attn_round on doubles, one element at a time: the oracle that
 * check_emulate.c holds this file to, bit for bit, in every variant.
 *
 * Threads.  The forward pass is tasks of LANES query rows of one batch
 * and head; each holds its rows' logits (S x LANES floats) and owns its
 * rows of every stage.  With the backward, each head runs its row tasks
 * (which also keep the head's weights, dx, qs and dO, T x S floats
 * twice), then tasks of LANES keys for grad_k and grad_v, which add into
 * the KV head's float32 sums; heads run in order, so those sums have
 * one order whatever the thread count.
 *
 * Dims: B batches, H query heads, G KV heads, T query rows, S keys, d_k
 * and d_v columns per head.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define LANES ATTN_EMULATE_LANES	/* rows (or keys) a task's loops hold
					 * side by side */
#define STEP 4		/* keys or columns of a register tile */
#define MASK_KEYS 64	/* keys of a tile the masking rule is asked about */

/* One worker's arrays: buffers of LANES lanes are lane-minor, element
 * (r, l) at [r * LANES + l]. */
struct work {
	float *qt, *st;		/* d_k x LANES: F(q)^T, qs^T */
	float *dot;		/* d_v x LANES: F(dO)^T */
	float *x;		/* sp x LANES: logits, then the weights */
	float *y;		/* sp x LANES: scores; dP, dS, dx */
	float *t;		/* sp x LANES: the softcap's tanh (backward) */
	float *lg;		/* sp x LANES: the logits (backward) */
	float *acc;		/* max(d_k, d_v) x LANES */
	float m[LANES], sum[LANES], dl[LANES];
};

/* A tile sum (tile_sum below). */
typedef void tile_fn(const float *w, size_t ldw, size_t n, const float *b,
    size_t sr, size_t sc, size_t nc, float *out);

struct emu {
	const struct attn_problem *p;
	tile_fn *tile;		/* tile_sum's copy for this CPU */
	enum attn_precision prec;	/* F of q, k, v */
	enum attn_precision mid;	/* F of the steps between: prec, or
					 * FP32 in FP8 */
	enum attn_precision pf, of;	/* F of the weights and output:
					 * prec, or in FP8 E4M3 and BF16 */
	int fp8;			/* prec is an FP8 format */
	int scale_k;			/* the scale on k, not q */
	struct attn_stages *out;
	struct attn_mask_counts counts;
	size_t sp;		/* S rounded up to LANES */
	size_t row_tasks;	/* tasks a head: blocks of LANES rows */
	size_t key_tasks;	/* backward tasks a head: blocks of keys */
	float scale, cap;	/* A(scale), A(softcap) */
	float keep;		/* R = A(1/(1 - p)) with a dropout mask,
				 * else 1 */
	int grad;		/* a backward stage is held */
	float *kf, *vf;		/* F(K), F(V): B G blocks, S x d_k, S x d_v */
	float *ks;		/* with scale_k, F(A(F(K) scale)), as kf */
	/* the backward's head (b H + h) and its T-row arrays */
	size_t head;
	float *pw, *g;		/* T x sp: the weights, dx */
	float *qs, *dof;	/* T x d_k: qs; T x d_v: F(dO) */
	float *ak, *av;		/* S x d_k, S x d_v: the KV head's sums */
	struct work *w;
	size_t workers;
	size_t done, total;	/* progress */
	const char *what;
};

/* ---------------------------------------------------------------- loops */

/* n floats rounded to prec: F16C for fp16 unless the caller capped the
 * loops at plain C (cfg->isa, ATTN_ISA), which gives the same bytes. */
static void
round_to(const struct emu *e, float *x, size_t n, enum attn_precision prec)
{
	attn_round_floats(x, n, prec, e->p->cfg->isa != ATTN_ISA_C);
}

/* F of the steps between the inputs and the weights. */
static void
round_f(const struct emu *e, float *x, size_t n)
{
	round_to(e, x, n, e->mid);
}

/* A double input on its way to format prec: RNE to float32 is F for
 * fp32; rounding to odd keeps F exact for the narrower formats (round_to
 * then finishes it, a whole array at a time). */
static float
in_f(enum attn_precision prec, double x)
{
	return prec == ATTN_PREC_FP32 ? (float)x : attn_round_odd(x);
}

/*
 * out[c LANES + l] = sum_r w[r ldw + l] b[r sr + c sc] for c < nc: each
 * lane's sum an fmaf chain over r < n from +0, STEP columns at a time in
 * registers.  A product of a lane-minor block and a matrix: Q K^T with w
 * = Q^T (r a column of Q, c a key: sr 1, sc d_k), P V with w = P^T (r a
 * key, c a column of V: sr d_v, sc 1).
 *
 * Three copies, one result: this one in C (its x86-64-v3 clone kept the
 * accumulators on the stack, a load and a store around every FMA), and
 * on x86-64 tile_sum_avx2 and tile_sum_avx512 (one body for both
 * widths, lib/emulate_tile.h), whose FMA instructions are fmaf lane by
 * lane, in the same order from the same +0.  tile_pick chooses by the CPU and cfg->isa, as the streaming
 * kernel's loops are chosen.
 */
ATTN_V3_CLONES
static void
tile_sum(const float *w, size_t ldw, size_t n, const float *b, size_t sr,
    size_t sc, size_t nc, float *out)
{
	size_t c = 0, r, l;

	for (; c + STEP <= nc; c += STEP) {
		float a0[LANES], a1[LANES], a2[LANES], a3[LANES];

		for (l = 0; l < LANES; l++)
			a0[l] = a1[l] = a2[l] = a3[l] = 0.0f;
		for (r = 0; r < n; r++) {
			const float *wr = w + r * ldw, *br = b + r * sr + c * sc;
			const float v0 = br[0], v1 = br[sc], v2 = br[2 * sc],
			    v3 = br[3 * sc];

			for (l = 0; l < LANES; l++) {
				a0[l] = fmaf(wr[l], v0, a0[l]);
				a1[l] = fmaf(wr[l], v1, a1[l]);
				a2[l] = fmaf(wr[l], v2, a2[l]);
				a3[l] = fmaf(wr[l], v3, a3[l]);
			}
		}
		memcpy(out + c * LANES, a0, sizeof a0);
		memcpy(out + (c + 1) * LANES, a1, sizeof a1);
		memcpy(out + (c + 2) * LANES, a2, sizeof a2);
		memcpy(out + (c + 3) * LANES, a3, sizeof a3);
	}
	for (; c < nc; c++) {
		float a0[LANES];

		for (l = 0; l < LANES; l++)
			a0[l] = 0.0f;
		for (r = 0; r < n; r++)
			for (l = 0; l < LANES; l++)
				a0[l] = fmaf(w[r * ldw + l], b[r * sr + c * sc],
				    a0[l]);
		memcpy(out + c * LANES, a0, sizeof a0);
	}
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

_Static_assert(LANES == 16, "the vector tile sums hold 16 lanes");

/*
 * The columns a vector tile sum holds in registers: as many accumulators
 * as two FMA units with a latency of 4 keep busy (8), with the row's
 * lanes and a broadcast beside them.  Built from the plain C loop, even
 * as its x86-64-v3 clone, GCC keeps the accumulators on the stack, so
 * each fma waits for the store of the one before it; these keep them in
 * registers, which about halves a run of --emulate (bench/README.md).
 */
#define TILE_NAME tile_sum_avx2
#define TILE_TARGET __attribute__((target("avx2,fma")))
#define FV __m256
#define FL 8
#define TILE_STEP 4	/* 4 x 2 vectors of 8 */
#define fzero() _mm256_setzero_ps()
#define fload(p) _mm256_loadu_ps(p)
#define fstore(p, v) _mm256_storeu_ps(p, v)
#define fbcast(p) _mm256_broadcast_ss(p)
#define ffma(a, b, c) _mm256_fmadd_ps(a, b, c)
#include "emulate_tile.h"

#define TILE_NAME tile_sum_avx512
#define TILE_TARGET __attribute__((target("avx512f")))
#define FV __m512
#define FL 16
#define TILE_STEP 8	/* 8 vectors of 16 */
#define fzero() _mm512_setzero_ps()
#define fload(p) _mm512_loadu_ps(p)
#define fstore(p, v) _mm512_storeu_ps(p, v)
#define fbcast(p) _mm512_set1_ps(*(p))
#define ffma(a, b, c) _mm512_fmadd_ps(a, b, c)
#include "emulate_tile.h"
#endif

/* The tile sum of the widest instruction set the CPU has and most
 * allows. */
static tile_fn *
tile_pick(enum attn_isa most)
{
#if defined(__x86_64__) && defined(__GNUC__)
	const struct attn_simd *s = attn_simd_best(most);

	if (s == &attn_simd_avx512)
		return tile_sum_avx512;
	if (s == &attn_simd_avx2)
		return tile_sum_avx2;
#else
	(void)most;
#endif
	return tile_sum;
}

/* out[j LANES + l] = sum_c at[c LANES + l] b[j d + c] for keys j < n. */
static void
tile_dot(const struct emu *e, const float *at, size_t d, const float *b,
    size_t n, float *out)
{
	e->tile(at, LANES, d, b, 1, d, n, out);
}

/* out[c LANES + l] = sum_r w[r ldw + l] b[r ldb + c] for c < nc. */
static void
tile_mix(const struct emu *e, const float *w, size_t ldw, size_t n,
    const float *b, size_t ldb, size_t nc, float *out)
{
	e->tile(w, ldw, n, b, ldb, 1, nc, out);
}

/* x[r LANES + l] op= v[l] for n rows: subtract, or multiply by a
 * difference, lane by lane. */
ATTN_V3_CLONES
static void
rows_sub(float *x, const float *v, size_t n)
{
	size_t r, l;

	for (r = 0; r < n; r++)
		for (l = 0; l < LANES; l++)
			x[r * LANES + l] = x[r * LANES + l] - v[l];
}

ATTN_V3_CLONES
static void
rows_div(float *x, const float *v, size_t n)
{
	size_t r, l;

	for (r = 0; r < n; r++)
		for (l = 0; l < LANES; l++)
			x[r * LANES + l] = x[r * LANES + l] / v[l];
}

/* x[i] = x[i] * a (or / a, by a float) for n values. */
ATTN_V3_CLONES
static void
all_mul(float *x, float a, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		x[i] = x[i] * a;
}

ATTN_V3_CLONES
static void
all_div(float *x, float a, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		x[i] = x[i] / a;
}

/* Each lane's maximum over n rows, from start; nan when any is. */
ATTN_V3_CLONES
static void
rows_max(const float *x, size_t n, float start, float *m)
{
	int nan[LANES];
	size_t r, l;

	for (l = 0; l < LANES; l++) {
		m[l] = start;
		nan[l] = 0;
	}
	for (r = 0; r < n; r++)
		for (l = 0; l < LANES; l++) {
			const float v = x[r * LANES + l];

			nan[l] |= v != v;
			m[l] = v > m[l] ? v : m[l];
		}
	for (l = 0; l < LANES; l++)
		if (nan[l])
			m[l] = NAN;
}

/* Each lane's sum over n rows, added to s in row order. */
ATTN_V3_CLONES
static void
rows_sum(const float *x, size_t n, float *s)
{
	size_t r, l;

	for (r = 0; r < n; r++)
		for (l = 0; l < LANES; l++)
			s[l] = s[l] + x[r * LANES + l];
}

/* Each lane's sum of a b over n rows, an fmaf chain from +0. */
ATTN_V3_CLONES
static void
rows_dot(const float *a, const float *b, size_t n, float *s)
{
	size_t r, l;

	for (l = 0; l < LANES; l++)
		s[l] = 0.0f;
	for (r = 0; r < n; r++)
		for (l = 0; l < LANES; l++)
			s[l] = fmaf(a[r * LANES + l], b[r * LANES + l], s[l]);
}

/* y = x * (y - d) lane by lane: the softmax's backward before F. */
ATTN_V3_CLONES
static void
rows_softmax_back(const float *x, float *y, const float *d, size_t n)
{
	size_t r, l;

	for (r = 0; r < n; r++)
		for (l = 0; l < LANES; l++)
			y[r * LANES + l] = x[r * LANES + l] *
			    (y[r * LANES + l] - d[l]);
}

/* u = t * (1 - t * t), tanh's derivative times t's gradient. */
ATTN_V3_CLONES
static void
all_tanh_back(const float *t, float *u, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		u[i] = u[i] * (1.0f - t[i] * t[i]);
}

/* x[i] = A(f(x[i])) for a libm function in double. */
static void
all_libm(float *x, size_t n, double (*f)(double))
{
	size_t i;

	for (i = 0; i < n; i++)
		x[i] = (float)f((double)x[i]);
}

/* x[i] = x[i] + a[i], as F(A(x + a)) before the rounding. */
ATTN_V3_CLONES
static void
all_add(float *x, const float *a, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		x[i] = x[i] + a[i];
}

/* ---------------------------------------------------------------- stages */

/* Whether stage s is held, and its block for head hd in *m. */
static int
held(const struct emu *e, enum attn_stage s, const struct attn_head *hd,
    struct attn_matrix *m)
{
	if (!(e->p->hold & ATTN_STAGE_BIT(s)))
		return 0;
	*m = attn_stage_block(e->out, s, hd->b, hd->h);
	return 1;
}

/* Rows [i0, i0 + rows) of held T-row stage s from lane-minor buf, n
 * columns. */
static void
put_rows(const struct emu *e, enum attn_stage s, const struct attn_head *hd,
    const float *buf, size_t i0, size_t rows, size_t n)
{
	struct attn_matrix m;
	size_t l, j;

	if (!held(e, s, hd, &m))
		return;
	for (l = 0; l < rows; l++)
		for (j = 0; j < n; j++)
			*attn_at(&m, i0 + l, j) = buf[j * LANES + l];
}

/* ------------------------------------------------------------- forward */

/* F(q)^T and qs^T of rows [i0, i0 + rows); 0 in the lanes after.  In
 * FP8 qs is F(q) itself: the scale multiplies the float32 logits; with
 * scale_k too, since the scale is k's. */
static void
load_q(const struct emu *e, const struct attn_head *hd, struct work *w,
    size_t i0, size_t rows)
{
	const size_t d = e->p->d_k;
	size_t c, l;

	for (c = 0; c < d; c++)
		for (l = 0; l < LANES; l++)
			w->qt[c * LANES + l] = l < rows ? in_f(e->prec,
			    *attn_at(&hd->q, i0 + l, c)) : 0.0f;
	round_to(e, w->qt, d * LANES, e->prec);
	memcpy(w->st, w->qt, d * LANES * sizeof *w->st);
	if (e->fp8 || e->scale_k)
		return;
	all_mul(w->st, e->scale, d * LANES);
	round_f(e, w->st, d * LANES);
}

/* The masks on w->x: -inf where the rule masks, a tile at a time. */
static void
apply_masks(const struct emu *e, const struct attn_head *hd, struct work *w,
    size_t i0, size_t rows)
{
	const struct attn_problem *p = e->p;
	size_t j0, j, l;

	for (j0 = 0; j0 < p->S; j0 += MASK_KEYS) {
		const size_t j1 = p->S - j0 < MASK_KEYS ? p->S : j0 + MASK_KEYS;

		switch (attn_tile_keeps(p, &e->counts, hd, i0, i0 + rows, j0,
		    j1)) {
		case ATTN_TILE_KEPT:
			break;
		case ATTN_TILE_MASKED:
			for (j = j0; j < j1; j++)
				for (l = 0; l < rows; l++)
					w->x[j * LANES + l] = -INFINITY;
			break;
		case ATTN_TILE_MIXED:
			for (j = j0; j < j1; j++)
				for (l = 0; l < rows; l++)
					if (!attn_keeps(p, hd, i0 + l, j))
						w->x[j * LANES + l] = -INFINITY;
			break;
		}
	}
}

/* FP8's scale of head hd's float32 logits: A(A(scale * descale_q) *
 * descale_k), the factors in float32, in FlashAttention 3's order. */
static float
fp8_scale(const struct emu *e, const struct attn_head *hd)
{
	const struct attn_inputs *in = e->p->in;

	return e->scale * (float)attn_descale(&in->descale_q, hd->b, hd->g) *
	    (float)attn_descale(&in->descale_k, hd->b, hd->g);
}

/* The logits of the rows in w->x (and scores, the softcap's tanh), from
 * kf, F(K), and kx, the keys the logits take (kf, or ks with
 * scale_k). */
static void
logits(const struct emu *e, const struct attn_head *hd, struct work *w,
    const float *kf, const float *kx, size_t i0, size_t rows)
{
	const struct attn_problem *p = e->p;
	const size_t S = p->S, n = S * LANES;
	struct attn_matrix m;
	size_t j, l;

	if (held(e, ATTN_STAGE_SCORES, hd, &m)) {
		tile_dot(e, w->qt, p->d_k, kf, S, w->y);
		round_f(e, w->y, n);
		put_rows(e, ATTN_STAGE_SCORES, hd, w->y, i0, rows, S);
	}
	tile_dot(e, w->st, p->d_k, kx, S, w->x);
	if (e->fp8)
		all_mul(w->x, fp8_scale(e, hd), n);
	round_f(e, w->x, n);
	if (e->cap > 0.0f) {
		all_div(w->x, e->cap, n);
		round_f(e, w->x, n);
		all_libm(w->x, n, tanh);
		round_f(e, w->x, n);
		if (w->t != NULL)
			memcpy(w->t, w->x, n * sizeof *w->t);
		all_mul(w->x, e->cap, n);
		round_f(e, w->x, n);
	}
	if (hd->bias.data != NULL) {
		/* w->y as the rounded bias, 0 in the lanes after */
		for (j = 0; j < S; j++)
			for (l = 0; l < LANES; l++)
				w->y[j * LANES + l] = l < rows ? in_f(e->mid,
				    attn_input_at(&hd->bias, i0 + l, j)) : 0.0f;
		round_f(e, w->y, n);
		all_add(w->x, w->y, n);
		round_f(e, w->x, n);
	}
	if (p->cfg->alibi) {
		const double slope = (double)(float)hd->slope;

		for (j = 0; j < S; j++)
			for (l = 0; l < rows; l++)
				w->x[j * LANES + l] -= (float)(slope * fabs(
				    attn_pos_distance(p, hd->b, i0 + l, j)));
		round_f(e, w->x, n);
	}
	apply_masks(e, hd, w, i0, rows);
	put_rows(e, ATTN_STAGE_SCALED, hd, w->x, i0, rows, S);
	if (held(e, ATTN_STAGE_MASK, hd, &m))
		for (l = 0; l < rows; l++)
			for (j = 0; j < S; j++)
				*attn_at(&m, i0 + l, j) = w->x[j * LANES + l] ==
				    -INFINITY ? 0.0 : 1.0;
}

/* The softmax of the rows: w->x becomes the weights, w->m and w->sum
 * the rows' maxima and sums; row_max, row_sum, lse and weights held. */
static void
softmax(const struct emu *e, const struct attn_head *hd, struct work *w,
    size_t i0, size_t rows)
{
	const struct attn_problem *p = e->p;
	const size_t S = p->S, n = S * LANES;
	const float sink = hd->sink == -INFINITY ? -INFINITY :
	    (float)attn_round(hd->sink, e->mid);
	struct attn_matrix m;
	size_t j, l;

	rows_max(w->x, S, sink, w->m);
	rows_sub(w->x, w->m, S);
	all_libm(w->x, n, exp);
	for (l = 0; l < LANES; l++)
		w->sum[l] = sink == -INFINITY ? 0.0f :
		    (float)exp((double)(sink - w->m[l]));
	rows_sum(w->x, S, w->sum);
	rows_div(w->x, w->sum, S);
	round_to(e, w->x, n, e->pf);
	/* rows with no key (no sink), and nan rows */
	for (l = 0; l < rows; l++) {
		struct attn_seq sq;
		float v;

		/* over the keys of the row's sequence, 0 beyond */
		attn_row_seq(p, hd->b, i0 + l, &sq);
		if (isnan(w->m[l]))
			v = NAN;
		else if (w->m[l] == -INFINITY)
			v = (float)attn_round(attn_round(attn_masked_weight(p,
			    &sq), ATTN_PREC_FP32), e->pf);
		else
			continue;
		w->sum[l] = isnan(w->m[l]) ? NAN : 0.0f;
		for (j = 0; j < S; j++)
			w->x[j * LANES + l] = j >= sq.k0 && j < sq.k1 ? v :
			    0.0f;
	}
	if (held(e, ATTN_STAGE_LSE, hd, &m))
		for (l = 0; l < rows; l++) {
			const float mx = w->m[l];

			/* in float32, the accumulator, in every format */
			*attn_at(&m, i0 + l, 0) = isnan(mx) ? NAN :
			    mx == -INFINITY ? -INFINITY :
			    (double)(mx + (float)log((double)w->sum[l]));
		}
	if (held(e, ATTN_STAGE_ROW_MAX, hd, &m))
		for (l = 0; l < rows; l++)
			*attn_at(&m, i0 + l, 0) = w->m[l];
	if (held(e, ATTN_STAGE_ROW_SUM, hd, &m))
		for (l = 0; l < rows; l++)
			*attn_at(&m, i0 + l, 0) = w->sum[l];
	put_rows(e, ATTN_STAGE_WEIGHTS, hd, w->x, i0, rows, S);
}

/* The weights in w->x with the dropout mask applied into w->y (what the
 * output sums; w->y is free between the logits and the backward), and
 * the stage dropped, F(A(weights * R)) where kept, when held. */
static void
dropout_rows(const struct emu *e, const struct attn_head *hd,
    struct work *w, size_t i0, size_t rows)
{
	const size_t S = e->p->S;
	struct attn_matrix m;
	size_t j, l;

	for (j = 0; j < S; j++)
		for (l = 0; l < LANES; l++)
			w->y[j * LANES + l] = l < rows && attn_dropout_keeps(hd,
			    i0 + l, j) ? w->x[j * LANES + l] : 0.0f;
	if (!held(e, ATTN_STAGE_DROPPED, hd, &m))
		return;
	for (l = 0; l < rows; l++)
		for (j = 0; j < S; j++)
			*attn_at(&m, i0 + l, j) = attn_dropout_keeps(hd, i0 + l,
			    j) ? attn_round((double)(w->x[j * LANES + l] *
			    e->keep), e->pf) : 0.0;
}

/* ------------------------------------------------------------ backward */

/* Rows [i0, i0 + rows) of head hd's backward, after its forward (the
 * weights in w->x, output in w->acc): dP, delta, dS, dx (into e->g),
 * grad_q through kx (the logits' keys); the weights, qs and dO kept for
 * the key tasks. */
static void
backward_rows(const struct emu *e, const struct attn_head *hd,
    struct work *w, const float *kx, const float *vf, size_t i0,
    size_t rows)
{
	const struct attn_problem *p = e->p;
	const size_t S = p->S, n = S * LANES;
	struct attn_matrix m;
	size_t j, l, c;

	for (c = 0; c < p->d_v; c++)
		for (l = 0; l < LANES; l++)
			w->dot[c * LANES + l] = l < rows ? in_f(e->prec,
			    *attn_at(&hd->d_out, i0 + l, c)) : 0.0f;
	round_f(e, w->dot, p->d_v * LANES);
	for (l = 0; l < rows; l++) {
		/* grad_v's weights: after the dropout mask */
		for (j = 0; j < S; j++)
			e->pw[(i0 + l) * e->sp + j] = attn_dropout_keeps(hd,
			    i0 + l, j) ? w->x[j * LANES + l] : 0.0f;
		for (c = 0; c < p->d_k; c++)
			e->qs[(i0 + l) * p->d_k + c] = w->st[c * LANES + l];
		for (c = 0; c < p->d_v; c++)
			e->dof[(i0 + l) * p->d_v + c] = w->dot[c * LANES + l];
	}
	/* dP, delta, dS */
	tile_dot(e, w->dot, p->d_v, vf, S, w->y);
	round_f(e, w->y, n);
	/* the dropout mask's backward: 0 where it drops */
	for (j = 0; hd->dropout.data != NULL && j < S; j++)
		for (l = 0; l < rows; l++)
			if (!attn_dropout_keeps(hd, i0 + l, j))
				w->y[j * LANES + l] = 0.0f;
	put_rows(e, ATTN_STAGE_GRAD_WEIGHTS, hd, w->y, i0, rows, S);
	rows_dot(w->dot, w->acc, p->d_v, w->dl);
	if (held(e, ATTN_STAGE_DELTA, hd, &m))
		for (l = 0; l < rows; l++)
			*attn_at(&m, i0 + l, 0) = w->dl[l];
	rows_softmax_back(w->x, w->y, w->dl, S);
	round_f(e, w->y, n);
	for (l = 0; l < rows; l++) {
		const int none = w->m[l] == -INFINITY;
		const float v = none && p->cfg->masked_rows ==
		    ATTN_MASKED_NAN ? NAN : 0.0f;

		for (j = 0; j < S; j++)
			if (none || w->lg[j * LANES + l] == -INFINITY ||
			    w->x[j * LANES + l] == 0.0f)
				w->y[j * LANES + l] = v;
	}
	put_rows(e, ATTN_STAGE_GRAD_SCALED, hd, w->y, i0, rows, S);
	/* back through the softcap: dx */
	if (e->cap > 0.0f) {
		all_mul(w->y, e->cap, n);
		round_f(e, w->y, n);
		all_tanh_back(w->t, w->y, n);
		round_f(e, w->y, n);
		all_div(w->y, e->cap, n);
		round_f(e, w->y, n);
	}
	for (l = 0; l < rows; l++)
		for (j = 0; j < S; j++)
			e->g[(i0 + l) * e->sp + j] = w->y[j * LANES + l];
	/* grad_q = F(A(F(dx K) * scale)), or with scale_k F(dx ks) */
	if (held(e, ATTN_STAGE_GRAD_Q, hd, &m)) {
		tile_mix(e, w->y, LANES, S, kx, p->d_k, p->d_k, w->acc);
		round_f(e, w->acc, p->d_k * LANES);
		if (!e->scale_k) {
			all_mul(w->acc, e->scale, p->d_k * LANES);
			round_f(e, w->acc, p->d_k * LANES);
		}
		put_rows(e, ATTN_STAGE_GRAD_Q, hd, w->acc, i0, rows, p->d_k);
	}
}

/* Keys [j0, j0 + LANES) of head hd's grad_k or grad_v: this head's sum
 * over its queries of a (dx or the weights) times b (qs or dO), d
 * columns (with scale_k, grad_k's times the scale, back through ks),
 * added into the KV head's float32 sums s; the last head of the KV head
 * rounds them into the held stage. */
static void
backward_keys(const struct emu *e, const struct attn_head *hd,
    struct work *w, enum attn_stage st, const float *a, const float *b,
    size_t d, float *s, size_t j0)
{
	const struct attn_problem *p = e->p;
	const size_t keys = p->S - j0 < LANES ? p->S - j0 : LANES;
	struct attn_matrix m;
	size_t l, c;

	if (!held(e, st, hd, &m))
		return;
	tile_mix(e, a + j0, e->sp, p->T, b, d, d, w->acc);
	round_f(e, w->acc, d * LANES);
	if (e->scale_k && st == ATTN_STAGE_GRAD_K) {
		all_mul(w->acc, e->scale, d * LANES);
		round_f(e, w->acc, d * LANES);
	}
	/* back through v * R, in each query head */
	if (st == ATTN_STAGE_GRAD_V && p->in->dropout_mask.data != NULL) {
		all_mul(w->acc, e->keep, d * LANES);
		round_f(e, w->acc, d * LANES);
	}
	for (l = 0; l < keys; l++)
		for (c = 0; c < d; c++)
			s[(j0 + l) * d + c] += w->acc[c * LANES + l];
	if (hd->h % (p->H / p->G) != p->H / p->G - 1)
		return;
	round_f(e, s + j0 * d, keys * d);
	for (l = 0; l < keys; l++)
		for (c = 0; c < d; c++)
			*attn_at(&m, j0 + l, c) = s[(j0 + l) * d + c];
}

/* ---------------------------------------------------------------- tasks */

/* Head n's inputs, and its KV head's F(K), the keys its logits take
 * (kx: F(K), or ks with scale_k) and F(V). */
static void
head_of(const struct emu *e, size_t n, struct attn_head *hd,
    const float **kf, const float **kx, const float **vf)
{
	const struct attn_problem *p = e->p;
	const size_t kv = n / p->H * p->G + n % p->H / (p->H / p->G);

	attn_problem_head(p, n / p->H, n % p->H, hd);
	*kf = e->kf + kv * p->S * p->d_k;
	*kx = (e->scale_k ? e->ks : e->kf) + kv * p->S * p->d_k;
	*vf = e->vf + kv * p->S * p->d_v;
}

static void
row_task(void *ctx, size_t worker, size_t t)
{
	struct emu *e = ctx;
	const struct attn_problem *p = e->p;
	struct work *w = &e->w[worker];
	const size_t n = e->grad ? e->head : t / e->row_tasks;
	const size_t i0 = (e->grad ? t : t % e->row_tasks) * LANES;
	const size_t rows = p->T - i0 < LANES ? p->T - i0 : LANES;
	struct attn_head hd;
	const float *kf, *kx, *vf;

	/* another process's (attn_split); with backward stages, a whole
	 * head is, below */
	if (!e->grad && !attn_split_task_mine(p, n, t % e->row_tasks,
	    e->row_tasks))
		return;
	head_of(e, n, &hd, &kf, &kx, &vf);
	load_q(e, &hd, w, i0, rows);
	logits(e, &hd, w, kf, kx, i0, rows);
	if (w->lg != NULL)
		memcpy(w->lg, w->x, p->S * LANES * sizeof *w->lg);
	softmax(e, &hd, w, i0, rows);
	if (hd.dropout.data != NULL)
		dropout_rows(e, &hd, w, i0, rows);
	if (e->grad || (p->hold & ATTN_STAGE_BIT(ATTN_STAGE_OUTPUT))) {
		tile_mix(e, hd.dropout.data != NULL ? w->y : w->x, LANES, p->S,
		    vf, p->d_v, p->d_v, w->acc);
		if (p->in->descale_v.data != NULL)
			all_mul(w->acc, (float)attn_descale(&p->in->descale_v,
			    hd.b, hd.g), p->d_v * LANES);
		round_to(e, w->acc, p->d_v * LANES, e->of);
		put_rows(e, ATTN_STAGE_OUTPUT, &hd, w->acc, i0, rows, p->d_v);
	}
	if (e->grad)
		backward_rows(e, &hd, w, kx, vf, i0, rows);
}

static void
key_task(void *ctx, size_t worker, size_t t)
{
	struct emu *e = ctx;
	struct work *w = &e->w[worker];
	struct attn_head hd;
	const float *kf, *kx, *vf;

	head_of(e, e->head, &hd, &kf, &kx, &vf);
	backward_keys(e, &hd, w, ATTN_STAGE_GRAD_K, e->g, e->qs, e->p->d_k,
	    e->ak, t * LANES);
	backward_keys(e, &hd, w, ATTN_STAGE_GRAD_V, e->pw, e->dof, e->p->d_v,
	    e->av, t * LANES);
}

/* One progress line over every pool of the run. */
static void
emu_progress(void *arg, const char *what, size_t done, size_t total)
{
	struct emu *e = arg;

	(void)done;
	(void)total;
	e->done++;
	e->p->cfg->progress(e->p->cfg->progress_arg, what, e->done, e->total);
}

static void
pool(struct emu *e, size_t tasks, void (*task)(void *, size_t, size_t))
{
	struct attn_pool_job job;

	memset(&job, 0, sizeof job);
	job.tasks = tasks;
	job.threads = e->workers;
	job.task = task;
	job.ctx = e;
	if (e->p->cfg->progress != NULL) {
		job.progress = emu_progress;
		job.progress_arg = e;
	}
	job.what = e->what;
	attn_pool_run(&job);
}

/* ---------------------------------------------------------------- set-up */

/* The arrays of a run, in floats: each worker's, then the run's. */
enum {
	W_QT, W_ST, W_DOT, W_X, W_Y, W_T, W_LG, W_ACC, W_COUNT
};
enum {
	R_KF, R_VF, R_PW, R_G, R_QS, R_DOF, R_AK, R_AV, R_KS, R_COUNT
};

struct sizes {
	size_t workers;
	size_t work[W_COUNT];	/* floats a worker */
	size_t run[R_COUNT];	/* floats a run */
};

static int
grad_of(const struct attn_problem *p)
{
	return (p->hold & ATTN_STAGES_GRAD) != 0;
}

/* The sizes of p's arrays; -1 when one overflows. */
static int
sizes_of(const struct attn_problem *p, struct sizes *z)
{
	const size_t d = p->d_k > p->d_v ? p->d_k : p->d_v;
	const size_t sp = (p->S + LANES - 1) / LANES * LANES;
	const int grad = grad_of(p);
	const int cap = p->cfg->softcap > 0.0;
	const size_t rt = (p->T + LANES - 1) / LANES;
	size_t tasks, kv, i;

	/* the most tasks a pool shares: every row block of every head, or
	 * with the backward a head's row blocks or key blocks */
	if (p->S > SIZE_MAX - LANES ||
	    attn_size_mul(p->B, p->H, &tasks) != 0 ||
	    attn_size_mul(tasks, rt, &tasks) != 0 ||
	    attn_size_mul(p->B, p->G, &kv) != 0 ||
	    attn_size_mul(kv, p->S, &kv) != 0)
		return -1;
	if (grad)
		tasks = rt > sp / LANES ? rt : sp / LANES;
	z->workers = p->threads < tasks ? p->threads : tasks;
	if (z->workers == 0)
		z->workers = 1;
	memset(z->work, 0, sizeof z->work);
	memset(z->run, 0, sizeof z->run);
	if (attn_size_mul(p->d_k, LANES, &z->work[W_QT]) != 0 ||
	    attn_size_mul(p->d_v, LANES, &z->work[W_DOT]) != 0 ||
	    attn_size_mul(sp, LANES, &z->work[W_X]) != 0 ||
	    attn_size_mul(d, LANES, &z->work[W_ACC]) != 0 ||
	    attn_size_mul(kv, p->d_k, &z->run[R_KF]) != 0 ||
	    attn_size_mul(kv, p->d_v, &z->run[R_VF]) != 0)
		return -1;
	z->work[W_ST] = z->work[W_QT];
	z->work[W_Y] = z->work[W_X];
	z->work[W_T] = grad && cap ? z->work[W_X] : 0;
	z->work[W_LG] = grad ? z->work[W_X] : 0;
	if (grad && (attn_size_mul(p->T, sp, &z->run[R_PW]) != 0 ||
	    attn_size_mul(p->T, p->d_k, &z->run[R_QS]) != 0 ||
	    attn_size_mul(p->T, p->d_v, &z->run[R_DOF]) != 0 ||
	    attn_size_mul(p->S, p->d_k, &z->run[R_AK]) != 0 ||
	    attn_size_mul(p->S, p->d_v, &z->run[R_AV]) != 0))
		return -1;
	z->run[R_G] = z->run[R_PW];
	z->run[R_KS] = p->cfg->emulate_order == ATTN_EMULATE_ORDER_K ?
	    z->run[R_KF] : 0;
	for (i = 0; i < W_COUNT; i++)
		if (z->work[i] > SIZE_MAX / sizeof(float) / 2)
			return -1;
	for (i = 0; i < R_COUNT; i++)
		if (z->run[i] > SIZE_MAX / sizeof(float) / 2)
			return -1;
	return 0;
}

static enum attn_status
too_large(const struct attn_problem *p, struct attn_error *err)
{
	return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
	    "the emulation's blocks of %zu queries and %zu keys are too "
	    "large to address", p->T, p->S);
}

static enum attn_status
emulate_plan(const struct attn_problem *p, size_t *bytes,
    struct attn_error *err)
{
	struct sizes z;
	enum attn_status st;
	size_t i, w = 0, r = 0, c;

	if (sizes_of(p, &z) != 0)
		return too_large(p, err);
	for (i = 0; i < W_COUNT; i++)
		w += z.work[i] * sizeof(float);
	for (i = 0; i < R_COUNT; i++)
		r += z.run[i] * sizeof(float);
	if ((st = attn_mask_counts_bytes(p, &c, err)) != ATTN_OK)
		return st;
	if (attn_size_mul(w, z.workers, &w) != 0 || w > SIZE_MAX / 4 ||
	    r > SIZE_MAX / 4 || c > SIZE_MAX / 4)
		return too_large(p, err);
	*bytes = w + r + c + z.workers * sizeof(struct work);
	return ATTN_OK;
}

/* Free what emulate_alloc allocated. */
static void
emulate_free(struct emu *e, const struct sizes *z)
{
	float **run[R_COUNT] = { &e->kf, &e->vf, &e->pw, &e->g, &e->qs,
	    &e->dof, &e->ak, &e->av, &e->ks };
	size_t i, k;

	for (i = 0; e->w != NULL && i < z->workers; i++) {
		float **work[W_COUNT] = { &e->w[i].qt, &e->w[i].st,
		    &e->w[i].dot, &e->w[i].x, &e->w[i].y, &e->w[i].t,
		    &e->w[i].lg, &e->w[i].acc };

		for (k = 0; k < W_COUNT; k++)
			attn_mem_free(*work[k], z->work[k] * sizeof(float));
	}
	attn_mem_free(e->w, z->workers * sizeof *e->w);
	for (k = 0; k < R_COUNT; k++)
		attn_mem_free(*run[k], z->run[k] * sizeof(float));
	attn_mask_counts_free(&e->counts);
}

/* Allocate (zeroed) the arrays of z; -1 when out of memory. */
static int
emulate_alloc(struct emu *e, const struct sizes *z)
{
	float **run[R_COUNT] = { &e->kf, &e->vf, &e->pw, &e->g, &e->qs,
	    &e->dof, &e->ak, &e->av, &e->ks };
	size_t i, k;

	if ((e->w = attn_mem_zalloc(z->workers * sizeof *e->w)) == NULL)
		return -1;
	for (i = 0; i < z->workers; i++) {
		float **work[W_COUNT] = { &e->w[i].qt, &e->w[i].st,
		    &e->w[i].dot, &e->w[i].x, &e->w[i].y, &e->w[i].t,
		    &e->w[i].lg, &e->w[i].acc };

		for (k = 0; k < W_COUNT; k++)
			if (z->work[k] != 0 && (*work[k] = attn_mem_zalloc(
			    z->work[k] * sizeof(float))) == NULL)
				return -1;
	}
	for (k = 0; k < R_COUNT; k++)
		if (z->run[k] != 0 && (*run[k] = attn_mem_zalloc(z->run[k] *
		    sizeof(float))) == NULL)
			return -1;
	return 0;
}

/* F(K) and F(V) of every batch and KV head, and with scale_k ks. */
static void
load_kv(struct emu *e)
{
	const struct attn_problem *p = e->p;
	struct attn_head hd;
	size_t b, g, j, c;

	for (b = 0; b < p->B; b++)
		for (g = 0; g < p->G; g++) {
			float *kf = e->kf + (b * p->G + g) * p->S * p->d_k;
			float *vf = e->vf + (b * p->G + g) * p->S * p->d_v;

			attn_problem_head(p, b, g * (p->H / p->G), &hd);
			for (j = 0; j < p->S; j++) {
				for (c = 0; c < p->d_k; c++)
					kf[j * p->d_k + c] = in_f(e->prec,
					    *attn_at(&hd.k, j, c));
				for (c = 0; c < p->d_v; c++)
					vf[j * p->d_v + c] = in_f(e->prec,
					    *attn_at(&hd.v, j, c));
			}
			round_to(e, kf, p->S * p->d_k, e->prec);
			round_to(e, vf, p->S * p->d_v, e->prec);
			if (e->scale_k) {
				float *ks = e->ks + (b * p->G + g) * p->S *
				    p->d_k;

				memcpy(ks, kf, p->S * p->d_k * sizeof *ks);
				all_mul(ks, e->scale, p->S * p->d_k);
				round_f(e, ks, p->S * p->d_k);
			}
			/* attention_ref's v * dropout_scaling */
			if (p->in->dropout_mask.data != NULL) {
				all_mul(vf, e->keep, p->S * p->d_v);
				round_to(e, vf, p->S * p->d_v, e->prec);
			}
		}
}

/* What progress calls the tasks, by precision and pass. */
static const char *
progress_what(enum attn_precision prec, int grad)
{
	static const char *const what[][2] = {
		[ATTN_PREC_FP32] = { "query blocks of the emulated fp32 kernel",
		    "blocks of the emulated fp32 kernel, forward and "
		    "backward" },
		[ATTN_PREC_FP16] = { "query blocks of the emulated fp16 kernel",
		    "blocks of the emulated fp16 kernel, forward and "
		    "backward" },
		[ATTN_PREC_BF16] = { "query blocks of the emulated bf16 kernel",
		    "blocks of the emulated bf16 kernel, forward and "
		    "backward" },
		[ATTN_PREC_FP8_E4M3] = { "query blocks of the emulated "
		    "fp8-e4m3 kernel", NULL },
		[ATTN_PREC_FP8_E5M2] = { "query blocks of the emulated "
		    "fp8-e5m2 kernel", NULL },
	};

	return what[prec][grad];
}

static enum attn_status
emulate_run(const struct attn_problem *p, enum attn_precision prec,
    struct attn_stages *out, struct attn_error *err)
{
	struct emu e;
	struct sizes z;
	enum attn_status st;
	size_t n, heads = p->B * p->H;

	memset(&e, 0, sizeof e);
	if (sizes_of(p, &z) != 0)
		return too_large(p, err);
	e.p = p;
	e.tile = tile_pick(p->cfg->isa);
	e.prec = e.mid = e.pf = e.of = prec;
	e.fp8 = prec == ATTN_PREC_FP8_E4M3 || prec == ATTN_PREC_FP8_E5M2;
	e.scale_k = p->cfg->emulate_order == ATTN_EMULATE_ORDER_K;
	if (e.fp8) {
		e.mid = ATTN_PREC_FP32;
		e.pf = ATTN_PREC_FP8_E4M3;
		e.of = ATTN_PREC_BF16;
	}
	e.out = out;
	e.sp = (p->S + LANES - 1) / LANES * LANES;
	e.row_tasks = (p->T + LANES - 1) / LANES;
	e.key_tasks = (p->S + LANES - 1) / LANES;
	e.scale = (float)p->scale;
	e.cap = p->cfg->softcap > 0.0 ? (float)p->cfg->softcap : 0.0f;
	e.keep = (float)p->keep_scale;
	e.grad = grad_of(p);
	e.workers = z.workers;
	e.what = progress_what(prec, e.grad);
	e.total = heads * (e.row_tasks + (e.grad ? e.key_tasks : 0));
	if (emulate_alloc(&e, &z) != 0) {
		emulate_free(&e, &z);
		return attn_error_nomem(err, NULL, "the emulation's arrays");
	}
	if ((st = attn_mask_counts_init(p, &e.counts, err)) != ATTN_OK) {
		emulate_free(&e, &z);
		return st;
	}
	load_kv(&e);
	if (!e.grad)
		pool(&e, heads * e.row_tasks, row_task);
	for (n = 0; e.grad && n < heads; n++) {
		if (n % (p->H / p->G) == 0) {
			memset(e.ak, 0, z.run[R_AK] * sizeof(float));
			memset(e.av, 0, z.run[R_AV] * sizeof(float));
		}
		if (!attn_split_task_mine(p, n, 0, 1))
			continue;	/* another process's (attn_split) */
		e.head = n;
		pool(&e, e.row_tasks, row_task);
		pool(&e, e.key_tasks, key_task);
	}
	out->computed |= p->hold & (ATTN_STAGES_ALL | ATTN_STAGES_GRAD |
	    ATTN_STAGES_DROPOUT);
	emulate_free(&e, &z);
	return ATTN_OK;
}

static enum attn_status
run_fp32(const struct attn_problem *p, struct attn_stages *out,
    struct attn_error *err)
{
	return emulate_run(p, ATTN_PREC_FP32, out, err);
}

static enum attn_status
run_fp16(const struct attn_problem *p, struct attn_stages *out,
    struct attn_error *err)
{
	return emulate_run(p, ATTN_PREC_FP16, out, err);
}

static enum attn_status
run_bf16(const struct attn_problem *p, struct attn_stages *out,
    struct attn_error *err)
{
	return emulate_run(p, ATTN_PREC_BF16, out, err);
}

static enum attn_status
run_e4m3(const struct attn_problem *p, struct attn_stages *out,
    struct attn_error *err)
{
	return emulate_run(p, ATTN_PREC_FP8_E4M3, out, err);
}

static enum attn_status
run_e5m2(const struct attn_problem *p, struct attn_stages *out,
    struct attn_error *err)
{
	return emulate_run(p, ATTN_PREC_FP8_E5M2, out, err);
}

#define EMULATED (ATTN_STAGES_ALL | ATTN_STAGES_GRAD | ATTN_STAGES_DROPOUT)

static const struct attn_kernel_ops emulate_ops[] = {
	[ATTN_PREC_FP32] = { "emulated fp32", EMULATED, emulate_plan,
	    run_fp32 },
	[ATTN_PREC_FP16] = { "emulated fp16", EMULATED, emulate_plan,
	    run_fp16 },
	[ATTN_PREC_BF16] = { "emulated bf16", EMULATED, emulate_plan,
	    run_bf16 },
	/* forward only and without dropout, as FlashAttention 3's fp8
	 * kernels are */
	[ATTN_PREC_FP8_E4M3] = { "emulated fp8-e4m3", ATTN_STAGES_ALL,
	    emulate_plan, run_e4m3 },
	[ATTN_PREC_FP8_E5M2] = { "emulated fp8-e5m2", ATTN_STAGES_ALL,
	    emulate_plan, run_e5m2 },
};

const struct attn_kernel_ops *
attn_emulate_ops(enum attn_precision prec)
{
	if (prec == ATTN_PREC_FP64 || (unsigned)prec >= sizeof emulate_ops /
	    sizeof emulate_ops[0])
		return NULL;
	return &emulate_ops[prec];
}
