/*
 * kernel_stream_grad.c - the streaming kernel's backward pass
 * (FlashAttention-2's): from the forward's output, row_max and row_sum,
 * never holding a T x S matrix unless a T x S backward stage is held.
 * For each tile of keys J and queries I it recomputes the weights and
 * goes on as lib/grad.c's passes do:
 *
 *	P   = exp(scaled - row_max) / row_sum	(the forward's weights)
 *	dV += P^T dO				dP = dO V^T
 *	dS  = P * (dP - delta), delta = rowsum(dO * output)
 *	g   = dS * c' * scale			(c' the softcap's slope)
 *	dK += g^T Q				dQ += g K
 *
 * One arithmetic.  Every sum of the backward pass is one chain of fma
 * over its whole index in order, from 0 (lib/grad.c): dQ(i, c) over the
 * keys, dK(j, c) and dV(j, c) over the queries of one query head, then
 * added to what the heads before it gave.  So a task is a batch and KV
 * head (b, g): it walks the key blocks in order, and in each the query
 * heads of g in order and their query blocks in order, carrying each
 * query row's dQ across the key blocks and each key's dK and dV across
 * the query blocks.  Tiles and threads then change no bit: the tiles'
 * sizes only decide where a chain pauses, and each chain is one
 * task's.  Where grad.c skips an entry whose dS (or weight) is 0, a
 * tile adds fma(0, x, sum), which can only change the sign of a zero
 * sum; grad.c's dQ turns a zero into +0 and dK and dV add each head's
 * sum to +0, so the bytes are the same.
 *
 * Layout.  Lanes are keys: the tile of a query block I (QB rows) and a
 * key block J (KB keys) is stored key-minor, st[i * KB + j], so that a
 * vector holds consecutive keys and dV = P^T dO and dK = g^T Q are the
 * streaming kernel's `accumulate` loop (lib/simd_loops.h) with the keys
 * as its rows and the queries as its keys, each lane's sum in query
 * order; S^T = K Q^T and dP^T = V dO^T are its `scores` loop likewise,
 * each dot product in column order.  dQ = g K sums over the keys, so g
 * is turned query-minor (gq) for one more `accumulate` into dQ^T.
 * P comes from the `weights` loop a query row at a time, dS and g from
 * `grad`.  A tile that is wholly kept with no softcap, bias or ALiBi
 * takes that path; any other is finished element by element with the
 * rules every kernel shares (internal.h) and grad.c's (attn_grad_*).
 *
 * Masked tiles.  attn_tile_keeps (lib/mask.c) says what the masks leave
 * of a tile; a tile they mask wholly adds nothing (P = dS = 0) and is
 * skipped, unless a row of it has weights of its own (a row with no key
 * under --masked-rows uniform or nan, or a nan row), a T x S backward
 * stage is held, or dP could overflow there (dO and V too large for
 * the bound d_v max|dO| max|V| < DBL_MAX / 2), as grad.c's dP would
 * then be an error.
 *
 * Overflow.  A value of a backward stage that is not finite, where
 * grad.c's check_finite would refuse it, is recorded as (head, stage,
 * row, column); the least of all, in grad.c's order (heads in order,
 * then the stages in their passes' order, then row-major), is the data
 * error, the one grad.c reports.
 *
 * Tiling: KB = 96 keys (a multiple of ATTN_SIMD_ROWS, the loops' unit
 * of lanes) by QB = 48 query rows; with d = 128 the worker's arrays are
 * K^T and V^T of the block and the accumulators dK^T and dV^T (96 KB
 * each), and four 36 KB tiles.
 *
 * Dims: B batches, H query heads, G KV heads, T query rows, S keys, d_k
 * and d_v columns per head.
 */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define GRAD_KEYS 96	/* keys of a block: lanes, a multiple of ATTN_SIMD_ROWS */
#define GRAD_ROWS 48	/* query rows of a tile: likewise */

/*
 * The transposes between a block's rows and the loops' lanes go
 * TRANSPOSE_ROWS rows at a time, so that each line of the lanes' side is
 * read or written whole while the rows' side is read as that many
 * streams: element by element, every element was a line of its own
 * (about a twentieth of the backward pass went there at d = 128).
 */
#define TRANSPOSE_ROWS 8

_Static_assert(GRAD_KEYS % ATTN_SIMD_ROWS == 0 &&
    GRAD_ROWS % ATTN_SIMD_ROWS == 0, "tiles are whole vectors");
_Static_assert(ATTN_SIMD_ROWS % TRANSPOSE_ROWS == 0,
    "a tile's rows are whole runs of the transposes");

/* The backward stages of T x S. */
#define GRAD_TXS (ATTN_STAGE_BIT(ATTN_STAGE_GRAD_WEIGHTS) | \
	ATTN_STAGE_BIT(ATTN_STAGE_GRAD_SCALED))

/* The first value of a backward stage that overflowed, in grad.c's
 * order; stage ATTN_STAGE_COUNT when none. */
struct grad_error {
	size_t n;		/* the block b*H + h */
	enum attn_stage s;
	size_t i, j;
};

/* The sizes of one problem: KB keys and QB rows a tile (fewer for a
 * small problem, rounded up to whole vectors), the heads a task. */
struct grad_dims {
	size_t kb, qb, heads, qblocks;
};

/* What a task reads and writes of one query head: its inputs, its
 * blocks of the stages (dp and ds data NULL when not held), its delta. */
struct head_view {
	struct attn_head hd;
	size_t n, hh;		/* its block b*H + h, its place in the task */
	struct attn_matrix row_max, row_sum, dp, ds;
	const double *delta;	/* T */
};

/* One worker's arrays, carved from one allocation (mem, bytes). */
struct grad_ws {
	void *mem;
	size_t bytes;
	double *kt, *vt;	/* d_k x kb, d_v x kb: K^T, V^T of the block */
	double *st, *pt, *dpt;	/* qb x kb: scores then g, P, dP then dS */
	double *gq;		/* kb x qb: g query-minor */
	double *dkt, *dvt;	/* d_k x kb, d_v x kb: a head's sums */
	double *ones;		/* max(kb, qb) ones: alpha of accumulate */
	double *mb;		/* kb: the row maxima scores gives */
	double *delta;		/* heads x T */
	double *dqt;		/* heads x qblocks x d_k x qb: dQ^T */
	struct head_view *hv;	/* heads */
	unsigned char *nan_k, *nan_v;	/* heads: nan in dK, dV is meant */
	size_t nh;		/* the task's heads in hv */
	int checked;		/* task_checked's answer, -1 until asked */
};

enum {
	W_KT, W_VT, W_ST, W_PT, W_DPT, W_GQ, W_DKT, W_DVT, W_ONES, W_MB,
	W_DELTA, W_DQT, W_HD, W_NAN_K, W_NAN_V, W_COUNT
};

struct grad {
	const struct attn_problem *p;
	const struct attn_simd *simd;
	const struct attn_stages *out;
	struct attn_mask_counts counts;
	struct grad_dims dm;
	size_t limit;		/* the blocks n < limit are computed */
	int plain;		/* no softcap, bias or ALiBi */
	int stores;		/* a T x S backward stage is held */
	int need_dp, need_ds, need_delta, need_dq, need_dk, need_dv;
	struct grad_ws *ws;
	struct grad_error *errors;	/* one a task */
	/* progress: key blocks done of total, under lock */
	pthread_mutex_t lock;
	size_t done, total;
};

/* ---------------------------------------------------------------- sizes */

static size_t
round_up(size_t n, size_t unit)
{
	return (n + unit - 1) / unit * unit;
}

static void
grad_dims(const struct attn_problem *p, struct grad_dims *dm)
{
	dm->kb = p->S < GRAD_KEYS ? round_up(p->S, ATTN_SIMD_ROWS) : GRAD_KEYS;
	dm->qb = p->T < GRAD_ROWS ? round_up(p->T, ATTN_SIMD_ROWS) : GRAD_ROWS;
	dm->heads = p->H / p->G;
	dm->qblocks = (p->T + dm->qb - 1) / dm->qb;
}

/*
 * Where each array of a worker starts in its allocation (off[W_COUNT]
 * its size, 64 bytes more for the alignment): -1 when a size
 * overflows.  plan and run both take the sizes from here.
 */
static int
grad_layout(const struct attn_problem *p, const struct grad_dims *dm,
    size_t off[W_COUNT + 1])
{
	const size_t kq = dm->kb > dm->qb ? dm->kb : dm->qb;
	size_t dq, a, i;
	const size_t dims[W_COUNT][3] = {
		{ p->d_k, dm->kb, sizeof(double) },
		{ p->d_v, dm->kb, sizeof(double) },
		{ dm->qb, dm->kb, sizeof(double) },
		{ dm->qb, dm->kb, sizeof(double) },
		{ dm->qb, dm->kb, sizeof(double) },
		{ dm->kb, dm->qb, sizeof(double) },
		{ p->d_k, dm->kb, sizeof(double) },
		{ p->d_v, dm->kb, sizeof(double) },
		{ kq, 1, sizeof(double) },
		{ dm->kb, 1, sizeof(double) },
		{ dm->heads, p->T, sizeof(double) },
		{ dm->heads, 0, sizeof(double) },	/* below */
		{ dm->heads, 1, sizeof(struct head_view) },
		{ dm->heads, 1, 1 },
		{ dm->heads, 1, 1 },
	};

	off[0] = 0;
	for (i = 0; i < W_COUNT; i++) {
		if (i == W_DQT) {
			if (attn_size_mul(dm->qblocks, p->d_k, &dq) != 0 ||
			    attn_size_mul(dq, dm->qb, &dq) != 0 ||
			    attn_size_mul(dq, dm->heads, &a) != 0 ||
			    attn_size_mul(a, sizeof(double), &a) != 0)
				return -1;
		} else if (attn_size_mul(dims[i][0], dims[i][1], &a) != 0 ||
		    attn_size_mul(a, dims[i][2], &a) != 0)
			return -1;
		if (attn_carve(&off[i], a) != 0)
			return -1;
	}
	return 0;
}

static size_t
grad_tasks(const struct attn_problem *p)
{
	return p->B * p->G;
}

static size_t
grad_workers(const struct attn_problem *p)
{
	return p->threads < grad_tasks(p) ? p->threads : grad_tasks(p);
}

enum attn_status
attn_stream_grad_plan(const struct attn_problem *p, size_t *bytes,
    struct attn_error *err)
{
	struct grad_dims dm;
	size_t off[W_COUNT + 1], n, e, c;
	enum attn_status st;

	grad_dims(p, &dm);
	if (grad_layout(p, &dm, off) != 0 ||
	    attn_size_mul(attn_mem_cost(off[W_COUNT] + 64), grad_workers(p),
	    &n) != 0 ||
	    attn_size_mul(grad_tasks(p), sizeof(struct grad_error), &e) != 0 ||
	    n > SIZE_MAX - e)
		return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "the blocks of %zu queries and %zu keys are too large to "
		    "address", p->T, p->S);
	if ((st = attn_mask_counts_bytes(p, &c, err)) != ATTN_OK)
		return st;
	if (c > SIZE_MAX - n - e)
		return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "the blocks of %zu queries and %zu keys are too large to "
		    "address", p->T, p->S);
	*bytes = n + e + c;
	return ATTN_OK;
}

static int
ws_alloc(struct grad_ws *w, const size_t off[W_COUNT + 1], size_t kq)
{
	char *m;
	size_t i;

	memset(w, 0, sizeof *w);
	w->bytes = off[W_COUNT] + 64;
	if ((w->mem = attn_mem_alloc(w->bytes)) == NULL)
		return -1;
	m = (char *)w->mem + (64 - (uintptr_t)w->mem % 64) % 64;
#define AT(k) ((double *)(void *)(m + off[k]))
	w->kt = AT(W_KT);
	w->vt = AT(W_VT);
	w->st = AT(W_ST);
	w->pt = AT(W_PT);
	w->dpt = AT(W_DPT);
	w->gq = AT(W_GQ);
	w->dkt = AT(W_DKT);
	w->dvt = AT(W_DVT);
	w->ones = AT(W_ONES);
	w->mb = AT(W_MB);
	w->delta = AT(W_DELTA);
	w->dqt = AT(W_DQT);
#undef AT
	w->hv = (struct head_view *)(void *)(m + off[W_HD]);
	w->nan_k = (unsigned char *)(m + off[W_NAN_K]);
	w->nan_v = (unsigned char *)(m + off[W_NAN_V]);
	for (i = 0; i < kq; i++)
		w->ones[i] = 1.0;
	/* the lanes past the keys or rows of a tile hold 0 */
	memset(w->kt, 0, off[W_ONES] - off[W_KT]);
	return 0;
}

/* ---------------------------------------------------------------- errors */

/* Record (n, s, i, j) in *e when it comes before what *e holds. */
static void
note(struct grad_error *e, size_t n, enum attn_stage s, size_t i, size_t j)
{
	if (n < e->n || (n == e->n && (s < e->s || (s == e->s && (i < e->i ||
	    (i == e->i && j < e->j)))))) {
		e->n = n;
		e->s = s;
		e->i = i;
		e->j = j;
	}
}

/* Whether x, of a row whose row_max is mx, is refused as grad.c's
 * check_finite refuses it: an infinity, or a nan but in a nan row. */
static int
bad_in_row(const struct attn_problem *p, double x, double mx)
{
	return isinf(x) || (isnan(x) && !attn_grad_nan_row(p, mx));
}

/* ---------------------------------------------------------------- tiles */

/* max |x| over m's elements; nan when one is nan. */
static double
abs_max(const struct attn_matrix *m)
{
	double mx = 0.0;
	size_t i, c;

	for (i = 0; i < m->rows; i++)
		for (c = 0; c < m->cols; c++) {
			const double a = fabs(*attn_at(m, i, c));

			mx = a > mx || isnan(a) ? a : mx;
		}
	return mx;
}

/* Whether some dP of the task's heads could overflow: d_v max|dO|
 * max|V| reaches DBL_MAX / 2 (or a nan makes the bound nan).  Asked
 * only of a tile the masks leave nothing of, and answered once a task:
 * a run with no such tile never reads dO or V for it. */
static int
task_checked(const struct grad *g, struct grad_ws *w)
{
	double d_max = 0.0, bound;
	size_t hh;

	if (w->checked >= 0 || !g->need_dp)
		return w->checked > 0;
	for (hh = 0; hh < w->nh; hh++) {
		const double a = abs_max(&w->hv[hh].hd.d_out);

		d_max = a > d_max || isnan(a) ? a : d_max;
	}
	bound = (double)g->p->d_v * d_max * abs_max(&w->hv[0].hd.v);
	w->checked = !(bound < DBL_MAX / 2);
	return w->checked;
}


/* Whether a row of [i0, i0 + ni) has weights that do not come from its
 * logits and are not 0: no key under --masked-rows uniform or nan, or a
 * nan row (nan or +inf row_max). */
static int
rows_special(const struct grad *g, const struct head_view *h, size_t i0,
    size_t ni)
{
	size_t i;

	for (i = i0; i < i0 + ni; i++) {
		const double mx = *attn_at(&h->row_max, i, 0);

		if (isnan(mx) || mx == INFINITY || (mx == -INFINITY &&
		    g->p->cfg->masked_rows != ATTN_MASKED_ZERO))
			return 1;
	}
	return 0;
}

/*
 * A tile element by element, with the rules of lib/kernel.c and
 * lib/grad.c: from the raw scores in st and dP in dpt, the weights into
 * pt and, when dS is needed, dS into dpt and g into st; the held T x S
 * stages written; overflow noted.
 */
static void
tile_elements(const struct grad *g, struct grad_ws *w,
    const struct head_view *h, size_t i0, size_t ni, size_t j0, size_t nk,
    struct grad_error *e)
{
	const struct attn_problem *p = g->p;
	const struct attn_head *hd = &h->hd;
	const size_t kb = g->dm.kb;
	size_t i, j;

	for (i = 0; i < ni; i++) {
		const size_t qi = i0 + i;
		const double mx = *attn_at(&h->row_max, qi, 0);
		const double sm = *attn_at(&h->row_sum, qi, 0);
		double *st = w->st + i * kb, *pt = w->pt + i * kb;
		double *dpt = w->dpt + i * kb;

		for (j = 0; j < nk; j++) {
			const size_t kj = j0 + j;
			const double raw = st[j];
			double y, wt, ds;

			y = attn_add_bias(p, hd, qi, kj, attn_softcap(p,
			    raw * p->scale));
			if (!attn_keeps(p, hd, qi, kj))
				y = -INFINITY;
			if (isnan(mx) || mx == INFINITY)
				wt = NAN;
			else if (mx == -INFINITY) {
				struct attn_seq sq;

				/* over the keys of the row's sequence */
				attn_row_seq(p, hd->b, qi, &sq);
				wt = kj >= sq.k0 && kj < sq.k1 ?
				    attn_masked_weight(p, &sq) :
				    0.0;
			}
			else
				wt = attn_exp(y - mx) / sm;
			pt[j] = wt;
			if (!g->need_dp)
				continue;
			if (!isfinite(dpt[j]))
				note(e, h->n, ATTN_STAGE_GRAD_WEIGHTS, qi, kj);
			if (h->dp.data != NULL)
				*attn_at(&h->dp, qi, kj) = dpt[j];
			if (!g->need_ds)
				continue;
			if (!attn_grad_fixed(p, hd, qi, kj, mx, wt, &ds))
				ds = wt * (dpt[j] - h->delta[qi]);
			if (bad_in_row(p, ds, mx))
				note(e, h->n, ATTN_STAGE_GRAD_SCALED, qi, kj);
			if (h->ds.data != NULL)
				*attn_at(&h->ds, qi, kj) = ds;
			dpt[j] = ds;
			st[j] = attn_grad_dot(p, ds, raw);
		}
		for (; j < kb; j++)
			pt[j] = st[j] = 0.0;
	}
}

/* The first dP (computed again, as the loops did) or dS of row qi of
 * the tile that is not finite, when the grad loop found one. */
static void
row_bad(const struct grad *g, const struct head_view *h, const double *ds,
    size_t qi, size_t j0, size_t nk, struct grad_error *e)
{
	const struct attn_problem *p = g->p;
	size_t j, c;

	for (j = 0; j < nk; j++) {
		double dp = 0.0;

		for (c = 0; c < p->d_v; c++)
			dp = fma(*attn_at(&h->hd.d_out, qi, c),
			    *attn_at(&h->hd.v, j0 + j, c), dp);
		if (!isfinite(dp))
			note(e, h->n, ATTN_STAGE_GRAD_WEIGHTS, qi, j0 + j);
		if (bad_in_row(p, ds[j], *attn_at(&h->row_max, qi, 0)))
			note(e, h->n, ATTN_STAGE_GRAD_SCALED, qi, j0 + j);
	}
}

/*
 * Tile (I, J) of one query head: rows [i0, i0 + ni) and keys [j0, j0 +
 * nk), whose K^T and V^T are in w.  Adds to dV^T, dK^T (w->dvt, w->dkt)
 * and the rows' dQ^T.
 */
static void
tile_step(const struct grad *g, struct grad_ws *w, const struct head_view *h,
    size_t i0, size_t j0, size_t nk, struct grad_error *e)
{
	const struct attn_problem *p = g->p;
	const struct attn_simd *simd = g->simd;
	const struct attn_head *hd = &h->hd;
	const size_t kb = g->dm.kb, qb = g->dm.qb;
	const size_t ni = p->T - i0 < qb ? p->T - i0 : qb;
	const double *q = attn_at(&hd->q, i0, 0);
	const double *d_out = attn_at(&hd->d_out, i0, 0);
	enum attn_tile tile;
	const double *pw;
	int vector;
	size_t i, j;

	tile = attn_tile_keeps(p, &g->counts, hd, i0, i0 + ni, j0, j0 + nk);
	if (tile == ATTN_TILE_MASKED && !g->stores &&
	    !rows_special(g, h, i0, ni) && !task_checked(g, w))
		return;
	vector = tile == ATTN_TILE_KEPT && g->plain && !g->stores;
	simd->scores(w->kt, kb, p->d_k, q, hd->q.stride, ni, vector ? p->scale :
	    1.0, w->st, w->mb);
	if (g->need_dp)
		simd->scores(w->vt, kb, p->d_v, d_out, hd->d_out.stride, ni, 1.0,
		    w->dpt, w->mb);
	if (vector) {
		for (i = 0; i < ni; i++)
			simd->weights(w->st + i * kb, nk,
			    *attn_at(&h->row_max, i0 + i, 0),
			    *attn_at(&h->row_sum, i0 + i, 0));
		pw = w->st;
	} else {
		tile_elements(g, w, h, i0, ni, j0, nk, e);
		pw = w->pt;
	}
	if (g->need_dv)
		simd->accumulate(pw, kb, ni, d_out, hd->d_out.stride, p->d_v,
		    w->ones, w->dvt);
	if (!g->need_ds)
		return;
	if (vector)
		for (i = 0; i < ni; i++) {
			double *dr = w->dpt + i * kb;

			if (simd->grad(w->st + i * kb, dr, nk, h->delta[i0 + i],
			    p->scale))
				row_bad(g, h, dr, i0 + i, j0, nk, e);
		}
	if (g->need_dk)
		simd->accumulate(w->st, kb, ni, q, hd->q.stride, p->d_k, w->ones,
		    w->dkt);
	if (g->need_dq) {
		double *dqt = w->dqt + ((h->hh * g->dm.qblocks + i0 / qb) *
		    p->d_k) * qb;

		for (i = 0; i < ni; i += TRANSPOSE_ROWS) {
			const size_t nu = ni - i < TRANSPOSE_ROWS ? ni - i :
			    TRANSPOSE_ROWS;
			size_t u;

			for (j = 0; j < nk; j++)
				for (u = 0; u < nu; u++)
					w->gq[j * qb + i + u] = w->st[(i + u) *
					    kb + j];
		}
		for (j = 0; ni < qb && j < nk; j++)
			memset(w->gq + j * qb + ni, 0, (qb - ni) *
			    sizeof *w->gq);
		simd->accumulate(w->gq, qb, nk, attn_at(&hd->k, j0, 0),
		    hd->k.stride, p->d_k, w->ones, dqt);
	}
}

/* ---------------------------------------------------------------- a task */

/* What progress calls the backward pass's steps. */
#define GRAD_WHAT "key blocks of the backward pass"

/* One more key block of a task done. */
static void
tick(struct grad *g)
{
	const struct attn_config *cfg = g->p->cfg;

	if (cfg->progress == NULL)
		return;
	pthread_mutex_lock(&g->lock);
	g->done++;
	cfg->progress(cfg->progress_arg, GRAD_WHAT, g->done, g->total);
	pthread_mutex_unlock(&g->lock);
}

/* A head's delta = rowsum(dO * output), each an fma chain over the
 * columns in order from 0, as grad.c sums it, into d[0..T). */
ATTN_FMA_CLONES
static void
head_delta(const struct grad *g, const struct head_view *h, double *d,
    struct grad_error *e)
{
	const struct attn_problem *p = g->p;
	const struct attn_matrix out = attn_stage_block(g->out,
	    ATTN_STAGE_OUTPUT, h->hd.b, h->hd.h);
	const struct attn_matrix held = (p->hold &
	    ATTN_STAGE_BIT(ATTN_STAGE_DELTA)) ? attn_stage_block(g->out,
	    ATTN_STAGE_DELTA, h->hd.b, h->hd.h) : (struct attn_matrix){ 0 };
	size_t i, c;

	for (i = 0; i < p->T; i++) {
		double sum = 0.0;

		for (c = 0; c < p->d_v; c++)
			sum = fma(*attn_at(&h->hd.d_out, i, c), *attn_at(&out, i,
			    c), sum);
		d[i] = sum;
		if (held.data != NULL)
			*attn_at(&held, i, 0) = sum;
		if (bad_in_row(p, sum, *attn_at(&h->row_max, i, 0)))
			note(e, h->n, ATTN_STAGE_DELTA, i, 0);
	}
}

/* Rows [j0, j0 + nk) of block m (S x d) gain a head's sums acc (d x
 * kb, lanes the keys), as grad.c adds a head: an infinity, or a nan
 * unless nan_ok, is noted as an overflow of stage s of block n. */
static void
add_head(const struct grad *g, const struct attn_matrix *m,
    const double *acc, size_t d, size_t j0, size_t nk, int nan_ok,
    size_t n, enum attn_stage s, struct grad_error *e)
{
	const size_t kb = g->dm.kb;
	size_t jb, j, u, c, nu;

	for (jb = 0; jb < nk; jb += TRANSPOSE_ROWS) {
		double *row[TRANSPOSE_ROWS];
		int bad = 0;

		nu = nk - jb < TRANSPOSE_ROWS ? nk - jb : TRANSPOSE_ROWS;
		for (u = 0; u < nu; u++)
			row[u] = attn_at(m, j0 + jb + u, 0);
		for (c = 0; c < d; c++)
			for (u = 0; u < nu; u++) {
				const double x = row[u][c] + acc[c * kb + jb +
				    u];

				/* x - x is nan for an infinity or a nan */
				bad |= x - x != 0.0;
				row[u][c] = x;
			}
		for (j = jb; bad && j < jb + nu; j++)
			for (c = 0; c < d; c++) {
				const double x = *attn_at(m, j0 + j, c);

				if (isinf(x) || (isnan(x) && !nan_ok))
					note(e, n, s, j0 + j, c);
			}
	}
}

/* Rows [j0, j0 + nk) of m's columns, transposed into t (cols x kb),
 * the lanes past nk 0. */
static void
block_transpose(const struct attn_matrix *m, size_t j0, size_t nk,
    size_t cols, size_t kb, double *t)
{
	size_t jb, u, c, nu;

	for (jb = 0; jb < nk; jb += TRANSPOSE_ROWS) {
		const double *row[TRANSPOSE_ROWS];

		nu = nk - jb < TRANSPOSE_ROWS ? nk - jb : TRANSPOSE_ROWS;
		for (u = 0; u < nu; u++)
			row[u] = attn_at(m, j0 + jb + u, 0);
		for (c = 0; c < cols; c++)
			for (u = 0; u < nu; u++)
				t[c * kb + jb + u] = row[u][c];
	}
	for (c = 0; nk < kb && c < cols; c++)
		memset(t + c * kb + nk, 0, (kb - nk) * sizeof *t);
}

/* Set up the query heads of task (b, kv) whose blocks are below the
 * limit in w->hv: returns how many; their deltas computed, and whether
 * nan is meant in dK and dV from the start (a nan row of theirs). */
static size_t
task_heads(const struct grad *g, struct grad_ws *w, size_t b, size_t kv,
    struct grad_error *e)
{
	const struct attn_problem *p = g->p;
	size_t hh, nh, i;

	for (nh = hh = 0; hh < g->dm.heads; hh++) {
		const size_t h = kv * g->dm.heads + hh;
		struct head_view *v = &w->hv[nh];

		if (b * p->H + h >= g->limit)
			break;
		memset(v, 0, sizeof *v);
		attn_problem_head(p, b, h, &v->hd);
		v->n = b * p->H + h;
		v->hh = nh;
		v->row_max = attn_stage_block(g->out, ATTN_STAGE_ROW_MAX, b, h);
		v->row_sum = attn_stage_block(g->out, ATTN_STAGE_ROW_SUM, b, h);
		if (p->hold & ATTN_STAGE_BIT(ATTN_STAGE_GRAD_WEIGHTS))
			v->dp = attn_stage_block(g->out,
			    ATTN_STAGE_GRAD_WEIGHTS, b, h);
		if (p->hold & ATTN_STAGE_BIT(ATTN_STAGE_GRAD_SCALED))
			v->ds = attn_stage_block(g->out,
			    ATTN_STAGE_GRAD_SCALED, b, h);
		v->delta = w->delta + nh * p->T;
		if (g->need_delta)
			head_delta(g, v, w->delta + nh * p->T, e);
		w->nan_k[nh] = 0;
		for (i = 0; i < p->T && !w->nan_k[nh]; i++)
			w->nan_k[nh] = (unsigned char)attn_grad_nan_row(p,
			    *attn_at(&v->row_max, i, 0));
		w->nan_v[nh] = w->nan_k[nh];
		nh++;
	}
	return nh;
}

/* dQ of the task's heads from dQ^T, each zero +0 (see the top), into
 * the held grad_q; overflow noted. */
static void
task_dq(const struct grad *g, const struct grad_ws *w, size_t nh,
    struct grad_error *e)
{
	const struct attn_problem *p = g->p;
	const size_t qb = g->dm.qb;
	size_t hh, i0, i, u, c;

	for (hh = 0; hh < nh; hh++) {
		const struct head_view *v = &w->hv[hh];
		const struct attn_matrix dq = attn_stage_block(g->out,
		    ATTN_STAGE_GRAD_Q, v->hd.b, v->hd.h);

		for (i0 = 0; i0 < p->T; i0 += TRANSPOSE_ROWS) {
			const double *t = w->dqt + (hh * g->dm.qblocks + i0 /
			    qb) * p->d_k * qb + i0 % qb;
			const size_t nu = p->T - i0 < TRANSPOSE_ROWS ? p->T -
			    i0 : TRANSPOSE_ROWS;
			double *row[TRANSPOSE_ROWS];
			int bad = 0;

			for (u = 0; u < nu; u++)
				row[u] = attn_at(&dq, i0 + u, 0);
			for (c = 0; c < p->d_k; c++)
				for (u = 0; u < nu; u++) {
					const double x = t[c * qb + u] + 0.0;

					bad |= x - x != 0.0;
					row[u][c] = x;
				}
			for (i = i0; bad && i < i0 + nu; i++)
				for (c = 0; c < p->d_k; c++)
					if (bad_in_row(p, *attn_at(&dq, i, c),
					    *attn_at(&v->row_max, i, 0)))
						note(e, v->n, ATTN_STAGE_GRAD_Q,
						    i, c);
		}
	}
}

/* Task t: batch b = t / G and KV head t % G, every key block in order,
 * in each the query heads and their query blocks in order. */
static void
grad_task(void *ctx, size_t worker, size_t t)
{
	struct grad *g = ctx;
	const struct attn_problem *p = g->p;
	struct grad_ws *w = &g->ws[worker];
	struct grad_error *e = &g->errors[t];
	const size_t b = t / p->G, kv = t % p->G, kb = g->dm.kb;
	size_t nh, hh, j0, i0;
	nh = task_heads(g, w, b, kv, e);
	w->nh = nh;
	w->checked = -1;
	if (g->need_dq)
		memset(w->dqt, 0, nh * g->dm.qblocks * p->d_k * g->dm.qb *
		    sizeof *w->dqt);
	for (j0 = 0; j0 < p->S; j0 += kb) {
		const size_t nk = p->S - j0 < kb ? p->S - j0 : kb;

		if (nh > 0) {
			block_transpose(&w->hv[0].hd.k, j0, nk, p->d_k, kb,
			    w->kt);
			if (g->need_dp)
				block_transpose(&w->hv[0].hd.v, j0, nk, p->d_v,
				    kb, w->vt);
		}
		for (hh = 0; hh < nh; hh++) {
			const struct head_view *v = &w->hv[hh];
			const struct attn_matrix dk = g->need_dk ?
			    attn_stage_block(g->out, ATTN_STAGE_GRAD_K, b,
			    v->hd.h) : (struct attn_matrix){ 0 };
			const struct attn_matrix dv = g->need_dv ?
			    attn_stage_block(g->out, ATTN_STAGE_GRAD_V, b,
			    v->hd.h) : (struct attn_matrix){ 0 };

			/* nan from a head before this one is meant, as
			 * grad.c reads it from dK(0, 0) */
			if (j0 == 0 && g->need_dk)
				w->nan_k[hh] |= (unsigned char)isnan(*attn_at(
				    &dk, 0, 0));
			if (j0 == 0 && g->need_dv)
				w->nan_v[hh] |= (unsigned char)isnan(*attn_at(
				    &dv, 0, 0));
			if (g->need_dk)
				memset(w->dkt, 0, p->d_k * kb * sizeof *w->dkt);
			if (g->need_dv)
				memset(w->dvt, 0, p->d_v * kb * sizeof *w->dvt);
			for (i0 = 0; i0 < p->T; i0 += g->dm.qb)
				tile_step(g, w, v, i0, j0, nk, e);
			if (g->need_dk)
				add_head(g, &dk, w->dkt, p->d_k, j0, nk,
				    w->nan_k[hh], v->n, ATTN_STAGE_GRAD_K, e);
			if (g->need_dv)
				add_head(g, &dv, w->dvt, p->d_v, j0, nk,
				    w->nan_v[hh], v->n, ATTN_STAGE_GRAD_V, e);
		}
		tick(g);
	}
	if (g->need_dq)
		task_dq(g, w, nh, e);
}

/* ---------------------------------------------------------------- run */

enum attn_status
attn_stream_grad(const struct attn_problem *p, const struct attn_simd *simd,
    const struct attn_stages *out, size_t limit, struct attn_error *err)
{
	const struct attn_config *cfg = p->cfg;
	struct attn_pool_job job;
	struct grad_error first;
	struct attn_head hd;
	struct grad g;
	enum attn_status st = ATTN_OK;
	size_t off[W_COUNT + 1], tasks, workers, i;

	memset(&g, 0, sizeof g);
	grad_dims(p, &g.dm);
	if (grad_layout(p, &g.dm, off) != 0)
		return attn_stream_grad_plan(p, &i, err);
	g.p = p;
	g.simd = simd;
	g.out = out;
	g.limit = limit;
	g.plain = cfg->softcap <= 0.0 && !cfg->alibi &&
	    p->in->bias.data == NULL;
	g.stores = (p->hold & GRAD_TXS) != 0;
	g.need_dp = attn_problem_needs(p, ATTN_STAGE_GRAD_WEIGHTS);
	g.need_ds = attn_problem_needs(p, ATTN_STAGE_GRAD_SCALED);
	g.need_delta = attn_problem_needs(p, ATTN_STAGE_DELTA);
	g.need_dq = attn_problem_needs(p, ATTN_STAGE_GRAD_Q);
	g.need_dk = attn_problem_needs(p, ATTN_STAGE_GRAD_K);
	g.need_dv = attn_problem_needs(p, ATTN_STAGE_GRAD_V);
	tasks = grad_tasks(p);
	workers = grad_workers(p);
	g.total = tasks * ((p->S + g.dm.kb - 1) / g.dm.kb);
	g.errors = attn_mem_array(tasks, sizeof *g.errors);
	g.ws = attn_mem_zalloc(workers * sizeof *g.ws);
	if (g.errors == NULL || g.ws == NULL)
		goto nomem;
	/* No error yet: every field set, since note() compares them all. */
	for (i = 0; i < tasks; i++) {
		g.errors[i].n = SIZE_MAX;
		g.errors[i].s = ATTN_STAGE_COUNT;
		g.errors[i].i = SIZE_MAX;
		g.errors[i].j = SIZE_MAX;
	}
	for (i = 0; i < workers; i++)
		if (ws_alloc(&g.ws[i], off, g.dm.kb > g.dm.qb ? g.dm.kb :
		    g.dm.qb) != 0)
			goto nomem;
	if ((st = attn_mask_counts_init(p, &g.counts, err)) != ATTN_OK)
		goto done;
	pthread_mutex_init(&g.lock, NULL);
	memset(&job, 0, sizeof job);
	job.tasks = tasks;
	job.threads = workers;
	job.task = grad_task;
	job.ctx = &g;
	attn_pool_run(&job);
	pthread_mutex_destroy(&g.lock);
	first = g.errors[0];
	for (i = 1; i < tasks; i++)
		note(&first, g.errors[i].n, g.errors[i].s, g.errors[i].i,
		    g.errors[i].j);
	if (first.s != ATTN_STAGE_COUNT) {
		attn_problem_head(p, first.n / p->H, first.n % p->H, &hd);
		st = attn_error_grad(err, p, &hd, first.s, first.i, first.j);
	}
	goto done;
nomem:
	st = attn_error_nomem(err, NULL, "running the backward pass");
done:
	for (i = 0; g.ws != NULL && i < workers; i++)
		attn_mem_free(g.ws[i].mem, g.ws[i].bytes);
	attn_mem_free(g.ws, g.ws != NULL ? workers * sizeof *g.ws : 0);
	attn_mem_free(g.errors, g.errors != NULL ? tasks * sizeof *g.errors :
	    0);
	attn_mask_counts_free(&g.counts);
	return st;
}
