/*
 * project.c - projections, the passes around the kernel that take
 * attention from embeddings, as textbooks and nn.MultiheadAttention
 * compute it:
 *
 *	q = XQ W_Q + b_Q,  k = XKV W_K + b_K,  v = XKV W_V + b_V
 *	projected = output W_O + b_O
 *
 * before and after whichever kernel runs (lib/run.c wires them).  W is
 * in x out, applied as x @ W: PyTorch's nn.Linear keeps weight as out x
 * in and computes x @ weight.T + bias, so a W given as PyTorch stores
 * it has the shape of W's transpose, and the shape errors say so when
 * that is what would fit.
 *
 * Every shape error names both shapes and which W (or b) it concerns.
 * Products are summed in column order from 0, the bias added last, and
 * a product that overflows is a data error naming where.
 *
 * Dims: B batches, T query rows, S keys, H query heads, G KV heads, d_q
 * and d_kv columns of XQ and XKV (d_model), d_k and d_v per head, d_out
 * columns of W_O.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* What a shape check needs: the layer, the embeddings' names ("X" when
 * XQ and XKV are one matrix) and shapes as written, and the heads. */
struct layer {
	const struct attn_proj *w;
	const char *xq_name, *xkv_name;
	char xq[64], xkv[64];
	size_t T, d_q, d_kv, H, G;
	struct attn_error *err;
};

/* "3x4" */
static const char *
dims(char *buf, size_t size, const struct attn_matrix *m)
{
	snprintf(buf, size, "%zux%zu", m->rows, m->cols);
	return buf;
}

/*
 * W (named wn) must have one row per column of x (named xn, shaped xs,
 * d columns), since it multiplies x from the right.  When its columns
 * are what fits, it is the transpose, as PyTorch stores a Linear's
 * weight: say so.
 */
static enum attn_status
check_rows(const struct layer *l, const char *wn,
    const struct attn_matrix *w, const char *xn, const char *xs, size_t d,
    const char *of)
{
	char ws[64];

	if (w->rows == d)
		return ATTN_OK;
	dims(ws, sizeof ws, w);
	if (w->cols == d)
		return attn_error_set(l->err, ATTN_ERR_DATA, NULL, 0, 0,
		    "shape mismatch: %s is %s but %s is %s: %s needs a row for "
		    "each of the %zu columns of %s (x @ W); it looks "
		    "transposed, as PyTorch stores nn.Linear.weight (out x "
		    "in): give its transpose, weight.T", xn, xs, wn, ws, wn, d,
		    of);
	return attn_error_set(l->err, ATTN_ERR_DATA, NULL, 0, 0,
	    "shape mismatch: %s is %s but %s is %s: %s needs a row for each "
	    "of the %zu columns of %s (x @ W)", xn, xs, wn, ws, wn, d, of);
}

/* A bias (named bn) must be a row or a column with one value per column
 * of its W (named wn). */
static enum attn_status
check_bias(const struct layer *l, const char *bn,
    const struct attn_matrix *b, const char *wn,
    const struct attn_matrix *w)
{
	char bs[64], ws[64];

	if (b->data == NULL ||
	    ((b->rows == 1 || b->cols == 1) && b->rows * b->cols == w->cols))
		return ATTN_OK;
	return attn_error_set(l->err, ATTN_ERR_DATA, NULL, 0, 0,
	    "shape mismatch: %s is %s but %s is %s: %s needs one value for "
	    "each of the %zu columns of %s", wn, dims(ws, sizeof ws, w), bn,
	    dims(bs, sizeof bs, b), bn, w->cols, wn);
}

/* The columns of W (named wn) must split into n heads ("heads" or "KV
 * heads"). */
static enum attn_status
check_split(const struct layer *l, const char *wn,
    const struct attn_matrix *w, size_t n, const char *heads)
{
	char ws[64];

	if (w->cols % n == 0)
		return ATTN_OK;
	return attn_error_set(l->err, ATTN_ERR_DATA, NULL, 0, 0,
	    "%s is %s: %zu %s cannot split its %zu columns equally", wn,
	    dims(ws, sizeof ws, w), n, heads, w->cols);
}

/* The weights' own shapes and how they fit together and the heads. */
static enum attn_status
check_layer(const struct layer *l, const struct attn_config *cfg)
{
	const struct attn_proj *w = l->w;
	const char *kv = cfg->kv_heads != 0 ? "KV heads" : "heads";
	char a[64], b[64];
	enum attn_status st;
	size_t d_v;

	if ((st = check_rows(l, "W_Q", &w->w_q, l->xq_name, l->xq, l->d_q,
	    l->xq_name)) != ATTN_OK ||
	    (st = check_rows(l, "W_K", &w->w_k, l->xkv_name, l->xkv, l->d_kv,
	    l->xkv_name)) != ATTN_OK ||
	    (st = check_rows(l, "W_V", &w->w_v, l->xkv_name, l->xkv, l->d_kv,
	    l->xkv_name)) != ATTN_OK ||
	    (st = check_split(l, "W_Q", &w->w_q, l->H, "heads")) != ATTN_OK ||
	    (st = check_split(l, "W_K", &w->w_k, l->G, kv)) != ATTN_OK ||
	    (st = check_split(l, "W_V", &w->w_v, l->G, kv)) != ATTN_OK)
		return st;
	if (w->w_q.cols / l->H != w->w_k.cols / l->G)
		return attn_error_set(l->err, ATTN_ERR_DATA, NULL, 0, 0,
		    "shape mismatch: W_Q is %s but W_K is %s: q and k need "
		    "the same number of columns per head (d_k), but with %zu "
		    "head%s and %zu KV head%s it is %zu/%zu = %zu for W_Q and "
		    "%zu/%zu = %zu for W_K", dims(a, sizeof a, &w->w_q),
		    dims(b, sizeof b, &w->w_k), l->H, l->H == 1 ? "" : "s",
		    l->G, l->G == 1 ? "" : "s", w->w_q.cols, l->H,
		    w->w_q.cols / l->H, w->w_k.cols, l->G, w->w_k.cols / l->G);
	if ((st = check_bias(l, "b_Q", &w->b_q, "W_Q", &w->w_q)) != ATTN_OK ||
	    (st = check_bias(l, "b_K", &w->b_k, "W_K", &w->w_k)) != ATTN_OK ||
	    (st = check_bias(l, "b_V", &w->b_v, "W_V", &w->w_v)) != ATTN_OK)
		return st;
	if (w->w_o.data == NULL) {
		if (w->b_o.data != NULL)
			return attn_error_set(l->err, ATTN_ERR_USAGE, NULL, 0,
			    0, "b_O without W_O: the output bias goes with the "
			    "output projection");
		return ATTN_OK;
	}
	/* The heads' output, T x H*d_v, is what W_O multiplies. */
	d_v = w->w_v.cols / l->G;
	snprintf(a, sizeof a, "%zux%zu (T x H*d_v)", l->T, l->H * d_v);
	if ((st = check_rows(l, "W_O", &w->w_o, "the output", a, l->H * d_v,
	    "the output")) != ATTN_OK)
		return st;
	return check_bias(l, "b_O", &w->b_o, "W_O", &w->w_o);
}

int
attn_proj_self(const struct attn_inputs *in)
{
	return in->q.data == in->k.data && in->q.rows == in->k.rows &&
	    in->q.cols == in->k.cols && in->q.stride == in->k.stride;
}

enum attn_status
attn_project_check(const struct attn_config *cfg,
    const struct attn_inputs *in, struct attn_error *err)
{
	const struct attn_proj *w = &in->proj;
	const int self = attn_proj_self(in);
	struct layer l;

	if (w->w_q.data == NULL)
		return ATTN_OK;
	if (w->w_k.data == NULL || w->w_v.data == NULL)
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "a projection layer needs W_Q, W_K and W_V");
	if (cfg->heads == 0)
		return ATTN_OK;	/* attn_problem_init says what is wrong */
	memset(&l, 0, sizeof l);
	l.w = w;
	l.xq_name = self ? "X" : "XQ";
	l.xkv_name = self ? "X" : "XKV";
	l.d_q = in->q.cols;
	l.d_kv = in->k.cols;
	l.H = cfg->heads;
	l.G = cfg->kv_heads != 0 ? cfg->kv_heads : cfg->heads;
	l.err = err;
	if (in->batches == 0 || l.G == 0 || l.G > l.H || l.H % l.G != 0)
		return ATTN_OK;	/* likewise */
	l.T = in->q.rows / in->batches;
	attn_stack_shape(l.xq, sizeof l.xq, &in->q, in->batches);
	attn_stack_shape(l.xkv, sizeof l.xkv, &in->k, in->batches);
	return check_layer(&l, cfg);
}

void
attn_project_shapes(const struct attn_inputs *in, struct attn_inputs *out)
{
	const struct attn_proj *w = &in->proj;

	*out = *in;
	if (w->w_q.data == NULL)
		return;
	memset(&out->q, 0, sizeof out->q);
	memset(&out->k, 0, sizeof out->k);
	memset(&out->v, 0, sizeof out->v);
	out->q.rows = in->q.rows;
	out->q.cols = out->q.stride = w->w_q.cols;
	out->k.rows = out->v.rows = in->k.rows;
	out->k.cols = out->k.stride = w->w_k.cols;
	out->v.cols = out->v.stride = w->w_v.cols;
}

/* Element j of a bias given as a row or a column; 0 without one. */
static double
bias_at(const struct attn_matrix *b, size_t j)
{
	if (b->data == NULL)
		return 0.0;
	return b->rows == 1 ? *attn_at(b, 0, j) : *attn_at(b, j, 0);
}

enum attn_status
attn_project_part(const struct attn_matrix *x, const struct attn_matrix *w,
    const struct attn_matrix *b, const char *what, size_t r0, size_t rows,
    size_t c0, size_t cols, struct attn_matrix *y, struct attn_error *err)
{
	size_t i, j, c;

	/* Row by row, W's rows in order: each element's sum still runs
	 * over c from 0, and W is read along its rows. */
	for (i = r0; i < r0 + rows; i++) {
		double *yi = attn_at(y, i, 0);

		for (c = 0; c < x->cols; c++) {
			const double xc = *attn_at(x, i, c);
			const double *wc = attn_at(w, c, 0);

			for (j = c0; j < c0 + cols; j++)
				yi[j] += xc * wc[j];
		}
		for (j = c0; j < c0 + cols; j++) {
			if (b->data != NULL)
				yi[j] += bias_at(b, j);
			if (!isfinite(yi[j]))
				return attn_error_set(err, ATTN_ERR_DATA, NULL,
				    0, 0, "%s overflows a double in row %zu, "
				    "column %zu (the values are too large)",
				    what, i + 1, j + 1);
		}
	}
	return ATTN_OK;
}

enum attn_status
attn_project(const struct attn_matrix *x, const struct attn_matrix *w,
    const struct attn_matrix *b, const char *what, struct attn_matrix *y,
    struct attn_error *err)
{
	enum attn_status st;

	if ((st = attn_matrix_alloc(y, x->rows, w->cols, err)) != ATTN_OK)
		return st;
	if ((st = attn_project_part(x, w, b, what, 0, x->rows, 0, w->cols, y,
	    err)) != ATTN_OK)
		attn_matrix_free(y);
	return st;
}
