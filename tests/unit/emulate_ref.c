/*
 * emulate_ref.c - the oracle of lib/emulate.c: the same emulation (the
 * steps lib/emulate.c's opening comment lists) written element by
 * element on doubles, each rounding an attn_round, with none of the
 * emulation's loops, lanes, threads, float arithmetic or F16C.  It is
 * what the emulation computed before it was made fast (the reference
 * kernel's passes in software rounding), moved here, and
 * check_emulate.c holds the fast one to it bit for bit.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emulate_ref.h"
#include "internal.h"

struct ref {
	enum attn_precision prec;	/* q, k, v, dO */
	enum attn_precision mid;	/* the steps between: F */
	enum attn_precision pf, of;	/* the weights, the output */
	int fp8;
	int scale_k;			/* the scale on k, not q */
	const struct attn_problem *p;
	struct attn_stages *out;
};

/* F: the format of the steps between; A: the float32 accumulator; an
 * fmaf in A; I: the inputs' format. */
static double
F(const struct ref *r, double x)
{
	return attn_round(x, r->mid);
}

static double
I(const struct ref *r, double x)
{
	return attn_round(x, r->prec);
}

static double
A(double x)
{
	return attn_round(x, ATTN_PREC_FP32);
}

static double
fma_a(double a, double b, double c)
{
	return (double)fmaf((float)a, (float)b, (float)c);
}

/* Element (i, j) of stage s of head hd, when held. */
static void
put(const struct ref *r, enum attn_stage s, const struct attn_head *hd,
    size_t i, size_t j, double x)
{
	struct attn_matrix m;

	if (!(r->p->hold & ATTN_STAGE_BIT(s)))
		return;
	m = attn_stage_block(r->out, s, hd->b, hd->h);
	*attn_at(&m, i, j) = x;
}

/* T x C doubles, zeroed. */
static double *
block(size_t rows, size_t cols)
{
	return calloc(rows * cols + 1, sizeof(double));
}

/* grad_k or grad_v (stage s, d columns): this head's sum over queries of
 * a (T x S) times b (T x d), times *sc where sc is not NULL (grad_k
 * with the scale on k; grad_v with dropout's R, 1 without a mask),
 * added to the KV head's float32 sums acc; the last head of the KV head
 * stores them. */
static void
key_sums(const struct ref *r, const struct attn_head *hd, enum attn_stage s,
    const double *a, const double *b, size_t d, const double *sc,
    double *acc, int last)
{
	const size_t T = r->p->T, S = r->p->S;
	size_t i, j, c;

	for (j = 0; j < S; j++)
		for (c = 0; c < d; c++) {
			double x = 0.0;

			for (i = 0; i < T; i++)
				x = fma_a(a[i * S + j], b[i * d + c], x);
			x = sc != NULL ? F(r, A(F(r, x) * *sc)) : F(r, x);
			acc[j * d + c] = A(acc[j * d + c] + x);
			if (last)
				put(r, s, hd, j, c, F(r, acc[j * d + c]));
		}
}

/* One head; ak and av are its KV head's float32 sums over the query
 * heads so far (S x d_k, S x d_v). */
static void
ref_head(const struct ref *r, const struct attn_head *hd, double *ak,
    double *av, int grad, int last)
{
	const struct attn_problem *p = r->p;
	const size_t T = p->T, S = p->S, dk = p->d_k, dv = p->d_v;
	const double sc = A(p->scale);
	const double cap = p->cfg->softcap > 0.0 ? A(p->cfg->softcap) : 0.0;
	const double sink = hd->sink == -INFINITY ? -INFINITY : F(r, hd->sink);
	/* dropout: R = A(1/(1 - p)), V scaled by it (1 without a mask) */
	const double R = A(p->keep_scale);
	double *q = block(T, dk), *qs = block(T, dk), *k = block(S, dk);
	double *ks = block(S, dk);
	double *v = block(S, dv), *x = block(T, S), *t = block(T, S);
	double *lg = block(T, S), *w = block(T, S), *m = block(T, 1);
	double *dO = block(T, dv), *dx = block(T, S), *out = block(T, dv);
	double *wk = block(T, S);	/* the weights after the mask */
	size_t i, j, c;

#define AT(a, n, i, j) (a)[(i) * (n) + (j)]
	for (i = 0; i < T; i++)
		for (c = 0; c < dk; c++) {
			AT(q, dk, i, c) = I(r, *attn_at(&hd->q, i, c));
			/* FP8: the scale multiplies the logits instead;
			 * with scale_k, k is scaled */
			AT(qs, dk, i, c) = r->fp8 || r->scale_k ?
			    AT(q, dk, i, c) : F(r, A(AT(q, dk, i, c) * sc));
		}
	for (j = 0; j < S; j++) {
		for (c = 0; c < dk; c++) {
			AT(k, dk, j, c) = I(r, *attn_at(&hd->k, j, c));
			AT(ks, dk, j, c) = r->scale_k ? F(r, A(AT(k, dk, j,
			    c) * sc)) : AT(k, dk, j, c);
		}
		for (c = 0; c < dv; c++)
			AT(v, dv, j, c) = I(r, A(I(r, *attn_at(&hd->v, j, c)) *
			    R));
	}

	/* the logits */
	for (i = 0; i < T; i++)
		for (j = 0; j < S; j++) {
			double s = 0.0, y = 0.0;

			for (c = 0; c < dk; c++) {
				s = fma_a(AT(q, dk, i, c), AT(k, dk, j, c), s);
				y = fma_a(AT(qs, dk, i, c), AT(ks, dk, j, c), y);
			}
			put(r, ATTN_STAGE_SCORES, hd, i, j, F(r, s));
			y = F(r, r->fp8 ? A(y * A(A(sc * A(attn_descale(
			    &p->in->descale_q, hd->b, hd->g))) * A(attn_descale(
			    &p->in->descale_k, hd->b, hd->g)))) : y);
			if (cap > 0.0) {
				AT(t, S, i, j) = F(r, A(tanh(F(r, A(y / cap)))));
				y = F(r, A(AT(t, S, i, j) * cap));
			}
			if (hd->bias.data != NULL)
				y = F(r, A(y + F(r, attn_input_at(&hd->bias, i,
				    j))));
			if (p->cfg->alibi)
				y = F(r, A(y - A(A(hd->slope) * fabs(
				    (double)(i + p->q_pos0) -
				    (double)(j + p->k_pos0)))));
			if (!attn_keeps(p, hd, i, j))
				y = -INFINITY;
			AT(x, S, i, j) = AT(lg, S, i, j) = y;
			put(r, ATTN_STAGE_SCALED, hd, i, j, y);
			put(r, ATTN_STAGE_MASK, hd, i, j, y == -INFINITY ? 0.0 :
			    1.0);
		}

	/* the softmax and output */
	for (i = 0; i < T; i++) {
		double mx = sink, sum = 0.0, lse;

		for (j = 0; j < S; j++) {
			if (isnan(AT(x, S, i, j))) {
				mx = NAN;
				break;
			}
			if (AT(x, S, i, j) > mx)
				mx = AT(x, S, i, j);
		}
		m[i] = mx;
		if (isnan(mx) || mx == -INFINITY) {
			const double wv = isnan(mx) ? NAN :
			    attn_round(A(p->cfg->masked_rows == ATTN_MASKED_UNIFORM ?
			    1.0 / (double)S : p->cfg->masked_rows ==
			    ATTN_MASKED_NAN ? NAN : 0.0), r->pf);

			for (j = 0; j < S; j++)
				AT(w, S, i, j) = wv;
			sum = isnan(mx) ? NAN : 0.0;
			lse = mx;
		} else {
			if (sink != -INFINITY)
				sum = A(exp(A(sink - mx)));
			for (j = 0; j < S; j++)
				sum = A(sum + A(exp(A(AT(x, S, i, j) - mx))));
			for (j = 0; j < S; j++)
				AT(w, S, i, j) = attn_round(A(A(exp(A(AT(x, S,
				    i, j) - mx))) / sum), r->pf);
			lse = A(mx + A(log(sum)));	/* float32 in any F */
		}
		put(r, ATTN_STAGE_ROW_MAX, hd, i, 0, mx);
		put(r, ATTN_STAGE_ROW_SUM, hd, i, 0, sum);
		put(r, ATTN_STAGE_LSE, hd, i, 0, lse);
		for (j = 0; j < S; j++) {
			const int kept = attn_dropout_keeps(hd, i, j);

			put(r, ATTN_STAGE_WEIGHTS, hd, i, j, AT(w, S, i, j));
			AT(wk, S, i, j) = kept ? AT(w, S, i, j) : 0.0;
			put(r, ATTN_STAGE_DROPPED, hd, i, j, kept ? attn_round(
			    A(AT(w, S, i, j) * R), r->pf) : 0.0);
		}
		for (c = 0; c < dv; c++) {
			double o = 0.0;

			for (j = 0; j < S; j++)
				o = fma_a(AT(wk, S, i, j), AT(v, dv, j, c), o);
			if (p->in->descale_v.data != NULL)
				o = A(o * A(attn_descale(&p->in->descale_v,
				    hd->b, hd->g)));
			AT(out, dv, i, c) = attn_round(o, r->of);
			put(r, ATTN_STAGE_OUTPUT, hd, i, c, AT(out, dv, i, c));
		}
	}
	if (!grad)
		goto done;

	/* the backward */
	for (i = 0; i < T; i++)
		for (c = 0; c < dv; c++)
			AT(dO, dv, i, c) = I(r, *attn_at(&hd->d_out, i, c));
	for (i = 0; i < T; i++) {
		double d = 0.0;
		double *dp = block(S, 1);

		for (j = 0; j < S; j++) {
			double s = 0.0;

			for (c = 0; c < dv; c++)
				s = fma_a(AT(dO, dv, i, c), AT(v, dv, j, c), s);
			dp[j] = attn_dropout_keeps(hd, i, j) ? F(r, s) : 0.0;
			put(r, ATTN_STAGE_GRAD_WEIGHTS, hd, i, j, dp[j]);
		}
		for (c = 0; c < dv; c++)
			d = fma_a(AT(dO, dv, i, c), AT(out, dv, i, c), d);
		put(r, ATTN_STAGE_DELTA, hd, i, 0, d);
		for (j = 0; j < S; j++) {
			double ds;

			if (m[i] == -INFINITY)
				ds = p->cfg->masked_rows == ATTN_MASKED_NAN ?
				    NAN : 0.0;
			else if (AT(lg, S, i, j) == -INFINITY ||
			    AT(w, S, i, j) == 0.0)
				ds = 0.0;
			else
				ds = F(r, A(AT(w, S, i, j) * A(dp[j] - d)));
			put(r, ATTN_STAGE_GRAD_SCALED, hd, i, j, ds);
			if (cap > 0.0) {
				const double tt = AT(t, S, i, j);

				ds = F(r, A(ds * cap));
				ds = F(r, A(ds * A(1.0 - A(tt * tt))));
				ds = F(r, A(ds / cap));
			}
			AT(dx, S, i, j) = ds;
		}
		free(dp);
		for (c = 0; c < dk; c++) {
			double s = 0.0;

			for (j = 0; j < S; j++)
				s = fma_a(AT(dx, S, i, j), AT(ks, dk, j, c), s);
			put(r, ATTN_STAGE_GRAD_Q, hd, i, c, r->scale_k ? F(r,
			    s) : F(r, A(F(r, s) * sc)));
		}
	}
	key_sums(r, hd, ATTN_STAGE_GRAD_K, dx, qs, dk, r->scale_k ? &sc : NULL,
	    ak, last);
	key_sums(r, hd, ATTN_STAGE_GRAD_V, wk, dO, dv, &R, av, last);
#undef AT
done:
	free(q);
	free(qs);
	free(k);
	free(ks);
	free(v);
	free(x);
	free(t);
	free(lg);
	free(w);
	free(m);
	free(dO);
	free(dx);
	free(out);
	free(wk);
}

enum attn_status
emulate_ref(const struct attn_config *cfg, const struct attn_inputs *in,
    unsigned want, enum attn_precision prec, struct attn_stages *out,
    struct attn_error *err)
{
	struct attn_problem p;
	struct attn_head hd;
	struct ref r;
	enum attn_status st;
	double *ak, *av;
	size_t b, h, per;
	int grad;

	memset(out, 0, sizeof *out);
	if ((st = attn_problem_init(&p, cfg, in, want, err)) != ATTN_OK ||
	    (st = attn_stages_alloc(&p, out, err)) != ATTN_OK)
		return st;
	out->precision = prec;
	r.prec = r.mid = r.pf = r.of = prec;
	r.fp8 = prec == ATTN_PREC_FP8_E4M3 || prec == ATTN_PREC_FP8_E5M2;
	r.scale_k = cfg->emulate_order == ATTN_EMULATE_ORDER_K;
	if (r.fp8) {
		r.mid = ATTN_PREC_FP32;
		r.pf = ATTN_PREC_FP8_E4M3;
		r.of = ATTN_PREC_BF16;
	}
	r.p = &p;
	r.out = out;
	grad = (p.hold & ATTN_STAGES_GRAD) != 0;
	per = p.H / p.G;
	ak = block(p.S, p.d_k);
	av = block(p.S, p.d_v);
	for (b = 0; b < p.B; b++)
		for (h = 0; h < p.H; h++) {
			if (h % per == 0) {
				memset(ak, 0, p.S * p.d_k * sizeof *ak);
				memset(av, 0, p.S * p.d_v * sizeof *av);
			}
			attn_problem_head(&p, b, h, &hd);
			ref_head(&r, &hd, ak, av, grad, h % per == per - 1);
		}
	free(ak);
	free(av);
	out->computed = p.hold;
	return ATTN_OK;
}
