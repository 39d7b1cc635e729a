/*
 * ref_grad.c - the backward pass of the long double reference, and
 * central finite differences of L = sum(dO * output) through ref_run.
 *
 * ref_backward is the chain rule one element at a time, from the forward
 * stages of ref_run: dP = dO V^T, delta = rowsum(dO * output), dS =
 * weights * (dP - delta), then back through softcap and scale to Q and K
 * (summed over the heads that share a KV head), dV = weights^T dO, and a
 * bias's gradient as the sum of dS over the blocks that read it.  It
 * shares no code with lib/grad.c.  ref_fd_grad needs no derivative at
 * all: it moves one input and runs the forward reference twice, which
 * is what checks the formulas themselves.
 *
 * Dims: B batches, H query heads, G KV heads, T query rows, S keys, d_k
 * columns of Q and K per head, d_v columns of V per head.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref.h"

void
ref_grads_free(struct ref_grads *g)
{
	free(g->d_weights);
	free(g->delta);
	free(g->d_scaled);
	free(g->d_q);
	free(g->d_k);
	free(g->d_v);
	free(g->d_bias);
	memset(g, 0, sizeof *g);
}

/* d/dx C tanh(x / C) = 1 / cosh^2(x / C), or 1 without a softcap. */
static long double
softcap_slope(const struct ref_config *cfg, long double x)
{
	long double c;

	if (!(cfg->softcap > 0.0L))
		return 1.0L;
	c = coshl(x / cfg->softcap);
	return 1.0L / (c * c);
}

int
ref_backward(const struct ref_config *cfg, const struct ref_problem *p,
    const double *d_out, const struct ref_stages *fwd, struct ref_grads *out)
{
	const size_t B = p->B, H = p->H, G = p->G, T = p->T, S = p->S;
	const size_t d_k = p->d_k, d_v = p->d_v;
	size_t b, h, i, j, c;

	memset(out, 0, sizeof *out);
	out->d_weights = ref_ld_alloc(B * H * T * S);
	out->delta = ref_ld_alloc(B * H * T);
	out->d_scaled = ref_ld_alloc(B * H * T * S);
	out->d_q = ref_ld_alloc(B * T * H * d_k);
	out->d_k = ref_ld_alloc(B * S * G * d_k);
	out->d_v = ref_ld_alloc(B * S * G * d_v);
	if (p->bias != NULL)
		out->d_bias = ref_ld_alloc(p->bias_blocks * T * S);
	if (out->d_weights == NULL || out->delta == NULL ||
	    out->d_scaled == NULL || out->d_q == NULL || out->d_k == NULL ||
	    out->d_v == NULL || (p->bias != NULL && out->d_bias == NULL)) {
		ref_grads_free(out);
		return -1;
	}

	for (b = 0; b < B; b++)
		for (h = 0; h < H; h++) {
			const size_t g = h / (H / G);

			for (i = 0; i < T; i++) {
				const size_t row = (b * H + h) * T + i;
				const double *dOi = d_out + (b * T + i) * H *
				    d_v + h * d_v;
				const double *qi = p->q + (b * T + i) * H *
				    d_k + h * d_k;
				const long double *oi = fwd->output +
				    (b * T + i) * H * d_v + h * d_v;
				const long double *w = fwd->weights + row * S;
				long double *dp = out->d_weights + row * S;
				long double *ds = out->d_scaled + row * S;
				long double *dq = out->d_q + (b * T + i) * H *
				    d_k + h * d_k;
				const int no_key = isinf(fwd->lse[row]) &&
				    fwd->lse[row] < 0;
				long double delta = 0.0L;

				/* delta = rowsum(dO * output) */
				for (c = 0; c < d_v; c++)
					delta += (long double)dOi[c] * oi[c];
				out->delta[row] = delta;
				for (j = 0; j < S; j++) {
					const double *vj = p->v + (b * S + j) *
					    G * d_v + g * d_v;
					const double *kj = p->k + (b * S + j) *
					    G * d_k + g * d_k;
					long double *dkj = out->d_k + (b * S +
					    j) * G * d_k + g * d_k;
					long double *dvj = out->d_v + (b * S +
					    j) * G * d_v + g * d_v;
					long double dx;

					/* dP = dO V^T */
					dp[j] = 0.0L;
					for (c = 0; c < d_v; c++)
						dp[j] += (long double)dOi[c] *
						    (long double)vj[c];
					/* dS = P (dP - delta); no dependence
					 * on the logits in a row without a
					 * key */
					if (no_key)
						ds[j] = cfg->masked_rows ==
						    REF_MASKED_NAN ? NAN : 0.0L;
					else
						ds[j] = w[j] * (dp[j] - delta);
					if (p->bias != NULL)
						out->d_bias[ref_block_of(
						    p->bias_blocks, B, H, b, h) *
						    T * S + i * S + j] += ds[j];
					/* back through the softcap and the
					 * scale to scores = q . k */
					dx = ds[j] * softcap_slope(cfg,
					    fwd->scores[row * S + j] *
					    cfg->scale) * cfg->scale;
					for (c = 0; c < d_k; c++) {
						dq[c] += dx * (long double)kj[c];
						dkj[c] += dx * (long double)qi[c];
					}
					/* dV = P^T dO */
					for (c = 0; c < d_v; c++)
						dvj[c] += w[j] *
						    (long double)dOi[c];
				}
			}
		}
	return 0;
}

int
ref_loss(const struct ref_config *cfg, const struct ref_problem *p,
    const double *d_out, long double *loss)
{
	struct ref_stages st;
	size_t n, i;

	if (ref_run(cfg, p, &st) != 0)
		return -1;
	n = p->B * p->T * p->H * p->d_v;
	*loss = 0.0L;
	for (i = 0; i < n; i++)
		*loss += (long double)d_out[i] * st.output[i];
	ref_stages_free(&st);
	return 0;
}

/* The central difference of L at x[n] = x0 with the doubles nearest
 * x0 +- h: its value in *d and its half-step, exactly, in *s. */
static int
central(const struct ref_config *cfg, const struct ref_problem *moved,
    const double *d_out, double *x, size_t n, double h, long double *d,
    long double *s)
{
	const double x0 = x[n], up = x0 + h, down = x0 - h;
	long double l_up, l_down;
	int rc;

	x[n] = up;
	rc = ref_loss(cfg, moved, d_out, &l_up);
	x[n] = down;
	if (rc == 0)
		rc = ref_loss(cfg, moved, d_out, &l_down);
	x[n] = x0;
	if (rc != 0)
		return -1;
	*s = ((long double)up - (long double)down) / 2.0L;
	*d = (l_up - l_down) / (2.0L * *s);
	return 0;
}

int
ref_fd_grad(const struct ref_config *cfg, const struct ref_problem *p,
    const double *d_out, enum ref_input which, size_t n, long double *grad)
{
	const size_t sizes[] = {
		[REF_INPUT_Q] = p->B * p->T * p->H * p->d_k,
		[REF_INPUT_K] = p->B * p->S * p->G * p->d_k,
		[REF_INPUT_V] = p->B * p->S * p->G * p->d_v,
		[REF_INPUT_BIAS] = p->bias_blocks * p->T * p->S,
	};
	const double *from[] = {
		[REF_INPUT_Q] = p->q, [REF_INPUT_K] = p->k,
		[REF_INPUT_V] = p->v, [REF_INPUT_BIAS] = p->bias,
	};
	struct ref_problem moved = *p;
	long double d1, d2, s1, s2;
	double *x, h;
	int rc = -1;

	if ((x = malloc(sizes[which] * sizeof *x + 1)) == NULL)
		return -1;
	memcpy(x, from[which], sizes[which] * sizeof *x);
	switch (which) {
	case REF_INPUT_Q:
		moved.q = x;
		break;
	case REF_INPUT_K:
		moved.k = x;
		break;
	case REF_INPUT_V:
		moved.v = x;
		break;
	case REF_INPUT_BIAS:
		moved.bias = x;
		break;
	}
	h = 1e-4 * (fabs(x[n]) > 1.0 ? fabs(x[n]) : 1.0);
	if (central(cfg, &moved, d_out, x, n, h, &d1, &s1) == 0 &&
	    central(cfg, &moved, d_out, x, n, h / 2.0, &d2, &s2) == 0) {
		/* D(s) = L' + c s^2 + O(s^4): eliminate c */
		*grad = (s1 * s1 * d2 - s2 * s2 * d1) / (s1 * s1 - s2 * s2);
		rc = 0;
	}
	free(x);
	return rc;
}
