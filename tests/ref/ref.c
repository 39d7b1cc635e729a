/*
 * ref.c - the long double reference kernel and the tests' seeded random
 * numbers.
 *
 * The kernel is the formula, one element at a time, with nothing clever:
 * long double's 64-bit significand makes its rounding about 2^11 times
 * smaller than the library's, so any difference the tests see is the
 * library's.  Each logit goes through the documented order in one place:
 * scale, softcap, bias, ALiBi, then the masks.  The softmax subtracts the
 * row maximum only so that expl cannot overflow on the huge-logit tests;
 * mathematically it is the same softmax.  Positions are signed (long
 * long), so a negative offset (bottom-right with T > S) needs no care.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref.h"

long double *
ref_ld_alloc(size_t n)
{
	return calloc(n != 0 ? n : 1, sizeof(long double));
}

void
ref_stages_free(struct ref_stages *r)
{
	free(r->scores);
	free(r->scaled);
	free(r->weights);
	free(r->mask);
	free(r->output);
	free(r->lse);
	free(r->masked);
	memset(r, 0, sizeof *r);
}

void
ref_config_init(struct ref_config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->scale = 1.0L;
	cfg->masked_rows = REF_MASKED_ZERO;
}

/* ---------------------------------------------------------------- ALiBi */

static int
is_power_of_two(size_t n)
{
	return n != 0 && (n & (n - 1)) == 0;
}

/*
 * get_slopes from Press et al.'s reference code, recursion and all:
 *
 *	def get_slopes(n):
 *	    def get_slopes_power_of_2(n):
 *	        start = 2 ** (-2 ** -(math.log2(n) - 3))
 *	        ratio = start
 *	        return [start * ratio ** i for i in range(n)]
 *	    if math.log2(n).is_integer():
 *	        return get_slopes_power_of_2(n)
 *	    closest = 2 ** math.floor(math.log2(n))
 *	    return (get_slopes_power_of_2(closest) +
 *	        get_slopes(2 * closest)[0::2][:n - closest])
 */
int
ref_alibi_slopes(size_t n, long double *slopes)
{
	long double *twice;
	size_t closest, i;

	if (n == 0)
		return 0;
	if (is_power_of_two(n)) {
		long double start = powl(2.0L,
		    -powl(2.0L, -(log2l((long double)n) - 3.0L)));

		for (i = 0; i < n; i++)
			slopes[i] = start * powl(start, (long double)i);
		return 0;
	}
	for (closest = 1; closest * 2 < n; closest *= 2)
		;
	if (ref_alibi_slopes(closest, slopes) != 0 ||
	    (twice = ref_ld_alloc(2 * closest)) == NULL)
		return -1;
	if (ref_alibi_slopes(2 * closest, twice) != 0) {
		free(twice);
		return -1;
	}
	for (i = 0; i < n - closest; i++)
		slopes[closest + i] = twice[2 * i];
	free(twice);
	return 0;
}

/* ---------------------------------------------------------------- kernel */

size_t
ref_block_of(size_t blocks, size_t B, size_t H, size_t b, size_t h)
{
	if (blocks == 1)
		return 0;
	if (blocks == B)
		return b;
	return b * H + h;
}

/* Whether causal, window or the mask rule out key j for a query at
 * position pos; m is the mask entry, or NULL.  The window compares the
 * distance itself, so left and right may be as large as SIZE_MAX. */
static int
masked_out(const struct ref_config *cfg, long long pos, long long j,
    const double *m)
{
	if (cfg->causal && j > pos)
		return 1;
	if (cfg->window && j < pos &&
	    (unsigned long long)(pos - j) > cfg->window_left)
		return 1;
	if (cfg->window && j > pos &&
	    (unsigned long long)(j - pos) > cfg->window_right)
		return 1;
	if (m != NULL && (*m != 0.0) == (cfg->mask_invert != 0))
		return 1;
	return 0;
}

int
ref_run(const struct ref_config *cfg, const struct ref_problem *p,
    struct ref_stages *out)
{
	const size_t B = p->B, H = p->H, G = p->G, T = p->T, S = p->S;
	const size_t d_k = p->d_k, d_v = p->d_v;
	const long long offset = cfg->bottom_right ?
	    (long long)S - (long long)T : 0;
	long double *slopes, *qr = NULL, *kr = NULL;
	size_t b, h, i, j, c;

	memset(out, 0, sizeof *out);
	out->B = B;
	out->H = H;
	out->T = T;
	out->S = S;
	out->d_v = d_v;
	out->scores = ref_ld_alloc(B * H * T * S);
	out->scaled = ref_ld_alloc(B * H * T * S);
	out->weights = ref_ld_alloc(B * H * T * S);
	out->mask = ref_ld_alloc(B * H * T * S);
	out->output = ref_ld_alloc(B * T * H * d_v);
	out->lse = ref_ld_alloc(B * H * T);
	out->masked = calloc(B * H * T + 1, sizeof *out->masked);
	slopes = ref_ld_alloc(H);
	/* RoPE: the scores read q and k rotated, in long double */
	if (cfg->rope) {
		qr = ref_ld_alloc(B * T * H * d_k);
		kr = ref_ld_alloc(B * S * G * d_k);
	}
	if (out->scores == NULL || out->scaled == NULL ||
	    out->weights == NULL || out->mask == NULL ||
	    out->output == NULL || out->lse == NULL || out->masked == NULL ||
	    slopes == NULL || ref_alibi_slopes(H, slopes) != 0 ||
	    (cfg->rope && (qr == NULL || kr == NULL))) {
		free(slopes);
		free(qr);
		free(kr);
		ref_stages_free(out);
		return -1;
	}
	if (cfg->rope) {
		ref_rope(p->q, B * T, T, H, d_k, (long double)offset,
		    cfg->rope_base, cfg->rope_interleaved, 1.0L, qr);
		ref_rope(p->k, B * S, S, G, d_k, 0.0L, cfg->rope_base,
		    cfg->rope_interleaved, 1.0L, kr);
	}

	for (b = 0; b < B; b++)
		for (h = 0; h < H; h++) {
			/* H / G query heads share each KV head */
			const size_t g = h / (H / G);
			const double *mask = p->mask == NULL ? NULL : p->mask +
			    ref_block_of(p->mask_blocks, B, H, b, h) * T * S;
			const double *bias = p->bias == NULL ? NULL : p->bias +
			    ref_block_of(p->bias_blocks, B, H, b, h) * T * S;

			for (i = 0; i < T; i++) {
				const size_t row = (b * H + h) * T + i;
				const long long pos = (long long)i + offset;
				const double *qi = p->q +
				    (b * T + i) * H * d_k + h * d_k;
				long double *sc = out->scores + row * S;
				long double *lg = out->scaled + row * S;
				long double *w = out->weights + row * S;
				long double *keep = out->mask + row * S;
				long double *o = out->output +
				    (b * T + i) * H * d_v + h * d_v;
				/* A sink is one more logit in the softmax,
				 * with no value: it starts the maximum and
				 * the sum. */
				const long double sink = p->sinks == NULL ?
				    -INFINITY : (long double)p->sinks[h];
				long double max = sink, sum = 0.0L;

				for (j = 0; j < S; j++) {
					const double *kj = p->k +
					    (b * S + j) * G * d_k + g * d_k;
					long double x;

					/* scores = Q_h K_g^T */
					sc[j] = 0.0L;
					for (c = 0; c < d_k; c++)
						sc[j] += (qr != NULL ? qr[(size_t)(qi -
						    p->q) + c] : (long double)qi[c]) *
						    (kr != NULL ? kr[(size_t)(kj -
						    p->k) + c] : (long double)kj[c]);
					/* scale, then softcap */
					x = sc[j] * cfg->scale;
					if (cfg->softcap > 0.0L)
						x = cfg->softcap *
						    tanhl(x / cfg->softcap);
					/* + bias, then - ALiBi */
					if (bias != NULL)
						x += (long double)
						    bias[i * S + j];
					if (cfg->alibi)
						x -= slopes[h] * fabsl(
						    (long double)(pos -
						    (long long)j));
					/* masks set -inf */
					if (masked_out(cfg, pos, (long long)j,
					    mask == NULL ? NULL :
					    mask + i * S + j))
						x = -INFINITY;
					lg[j] = x;
					keep[j] = isinf(x) && x < 0 ? 0.0L :
					    1.0L;
					if (x > max)
						max = x;
				}
				if (p->sinks != NULL)
					sum = expl(sink - max);

				/* weights = softmax(scaled); lse = log of
				 * the sum of exp(scaled) */
				if (isinf(max) && max < 0) {
					long double fill =
					    cfg->masked_rows == REF_MASKED_NAN ?
					    NAN : cfg->masked_rows ==
					    REF_MASKED_UNIFORM ?
					    1.0L / (long double)S : 0.0L;

					for (j = 0; j < S; j++)
						w[j] = fill;
					out->lse[row] = -INFINITY;
					out->masked[out->nmasked++] = row;
				} else {
					for (j = 0; j < S; j++)
						sum += expl(lg[j] - max);
					for (j = 0; j < S; j++)
						w[j] = expl(lg[j] - max) / sum;
					out->lse[row] = max + logl(sum);
				}

				/* output = weights V_g */
				for (c = 0; c < d_v; c++) {
					long double acc = 0.0L;

					for (j = 0; j < S; j++)
						acc += w[j] * (long double)p->v[
						    (b * S + j) * G * d_v +
						    g * d_v + c];
					o[c] = acc;
				}
			}
		}
	free(slopes);
	free(qr);
	free(kr);
	return 0;
}

int
ref_attention(const double *q, const double *k, const double *v, size_t T,
    size_t S, size_t d_k, size_t d_v, long double scale,
    struct ref_stages *out)
{
	struct ref_config cfg;
	struct ref_problem p;

	ref_config_init(&cfg);
	cfg.scale = scale;
	memset(&p, 0, sizeof p);
	p.B = p.H = p.G = 1;
	p.T = T;
	p.S = S;
	p.d_k = d_k;
	p.d_v = d_v;
	p.q = q;
	p.k = k;
	p.v = v;
	return ref_run(&cfg, &p, out);
}

/* ---------------------------------------------------------------- random */

void
ref_rng_seed(struct ref_rng *r, uint64_t seed)
{
	r->state = seed;
}

uint64_t
ref_rng_next(struct ref_rng *r)
{
	uint64_t z = (r->state += 0x9E3779B97F4A7C15u);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
	return z ^ (z >> 31);
}

double
ref_rng_uniform(struct ref_rng *r, double lo, double hi)
{
	/* The top 53 bits make a double in [0, 1) exactly. */
	double u = (double)(ref_rng_next(r) >> 11) * 0x1p-53;

	return lo + (hi - lo) * u;
}

size_t
ref_rng_range(struct ref_rng *r, size_t lo, size_t hi)
{
	/* The modulo bias is irrelevant for test sizes. */
	return lo + (size_t)(ref_rng_next(r) % (uint64_t)(hi - lo + 1));
}

void
ref_rng_fill(struct ref_rng *r, double *data, size_t n, double lo, double hi)
{
	size_t i;

	for (i = 0; i < n; i++)
		data[i] = ref_rng_uniform(r, lo, hi);
}
