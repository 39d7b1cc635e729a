/*
 * kernel_stream_grad.c - the streaming kernel's backward pass
 * (FlashAttention-2's): from the forward's output, row_max and row_sum,
 * never holding a T x S matrix unless a T x S backward stage is held.
 * For each tile of keys J and queries I it recomputes the weights and
 * goes on as plain passes over whole blocks do (the reference passes,
 * tests/unit/kernel_ref_grad.c, which the tests hold it to byte for
 * byte):
 *
 *	P   = exp(scaled - row_max) / row_sum	(the forward's weights)
 *	dV += P^T dO				dP = dO V^T
 *	dS  = P * (dP - delta), delta = rowsum(dO * output)
 *	g   = dS * c' * scale			(c' the softcap's slope)
 *	dK += g^T Q				dQ += g K
 *
 * With a dropout mask, dV takes the weights after dropout and dP is dO
 * V^T through the same mask and 1/(1 - p) (attn_dropped), element by
 * element.
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
 * task's.  With fewer pairs (b, g) than threads (multi-query attention
 * has one a batch), each pair in turn is a wave instead: a task is a
 * key block J, which walks the same steps (a head and query block
 * each, in the same order), each after key block J - 1 has taken it;
 * so dK and dV are still one task's, and each dQ chain passes from one
 * task to the next in key order, and the bytes are those of one task.
 * Without waves such a pair's backward pass would run on one thread
 * while the others wait (bench/README.md has what the waves buy).
 * Where the reference passes skip an entry whose dS (or weight) is 0, a
 * tile adds fma(0, x, sum), which can only change the sign of a zero
 * sum; their dQ turns a zero into +0 and dK and dV add each head's
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
 * rules every kernel shares (internal.h) and the backward pass's
 * (lib/grad.c, attn_grad_*).
 *
 * Masked tiles.  attn_tile_keeps (lib/mask.c) says what the masks leave
 * of a tile; a tile they mask wholly adds nothing (P = dS = 0) and is
 * skipped, unless a row of it has weights of its own (a row with no key
 * under --masked-rows uniform or nan, or a nan row), a T x S backward
 * stage is held, or dP could overflow there (dO and V too large for
 * the bound d_v max|dO| max|V| < DBL_MAX / 2), as the reference
 * passes' dP would then be an error.
 *
 * Overflow.  A value of a backward stage that is not finite, where the
 * reference passes would refuse it, is recorded as (head, stage, row,
 * column); the least of all, in their order (heads in order, then the
 * stages in their passes' order, then row-major), is the data error,
 * the one they report.
 *
 * Tiling: KB = 96 keys (a multiple of ATTN_SIMD_ROWS, the loops' unit
 * of lanes) by QB = 48 query rows; with d = 128 the worker's arrays are
 * K^T and V^T of the block and the accumulators dK^T and dV^T (96 KB
 * each), four 36 KB tiles and the packed rows (below).  Blocks of 48 to
 * 192 keys by 48 or 96 rows run about alike; 96 x 48 was the fastest or
 * level with the best (bench/README.md).
 *
 * Dims: B batches, H query heads, G KV heads, T query rows, S keys, d_k
 * and d_v columns per head.
 */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
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

/* The first value of a backward stage that overflowed, in the
 * reference passes' order; stage ATTN_STAGE_COUNT when none. */
struct grad_error {
	size_t n;		/* the block b*H + h */
	enum attn_stage s;
	size_t i, j;
};

/* The sizes of one problem: KB keys and QB rows a tile (fewer for a
 * small problem, rounded up to whole vectors), the heads a task; and
 * whether the tasks are the key blocks of one (batch, KV head) at a
 * time, in a wave (see run below). */
struct grad_dims {
	size_t kb, qb, heads, qblocks, kblocks;
	size_t qrows;		/* rows of w->qr and w->dor (below) */
	int wave, task_rows;
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
	double *qr, *dor;	/* qrows x packed_ld(d_k), (d_v): Q, dO of a
				 * tile, or of every tile of the task */
	double *kr;		/* kb x packed_ld(d_k): K of the block */
	double *delta;		/* heads x T (in a wave, the wave's) */
	double *dqt;		/* heads x qblocks x d_k x qb: dQ^T (likewise) */
	struct head_view *hv;	/* heads */
	unsigned char *nan_k, *nan_v;	/* heads: nan in dK, dV is meant */
	size_t nh;		/* the task's heads in hv */
	int checked;		/* task_checked's answer, -1 until asked */
};

enum {
	W_KT, W_VT, W_ST, W_PT, W_DPT, W_GQ, W_DKT, W_DVT, W_ONES, W_MB,
	W_QR, W_DOR, W_KR, W_DELTA, W_DQT, W_HD, W_NAN_K, W_NAN_V, W_COUNT
};

/* A wave's arrays, carved from one allocation (mem, bytes): what its
 * tasks share of the (batch, KV head) it runs, group. */
struct wave {
	void *mem;
	size_t bytes, group;
	double *delta;		/* heads x T */
	double *dqt;		/* heads x qblocks x d_k x qb: dQ^T */
	atomic_size_t *steps;	/* kblocks: the steps each key block did */
	unsigned char *nan_k, *nan_v;	/* heads: key block 0's nan_k, nan_v */
	pthread_mutex_t lock;	/* with cond, guards steps' waits */
	pthread_cond_t cond;
};

enum { V_DELTA, V_DQT, V_STEPS, V_NAN_K, V_NAN_V, V_COUNT };

struct grad {
	const struct attn_problem *p;
	const struct attn_simd *simd;
	const struct attn_stages *out;
	struct attn_mask_counts counts;
	struct grad_dims dm;
	size_t limit;		/* the blocks n < limit are computed */
	int plain;		/* no softcap, bias, ALiBi or dropout */
	int stores;		/* a T x S backward stage is held */
	int need_dp, need_ds, need_delta, need_dq, need_dk, need_dv;
	struct grad_ws *ws;
	struct wave wave;
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

#define PACK_PAD 8
/*
 * The rows of Q, dO and K that the loops broadcast from are copied
 * together first (a task's or a tile's rows of Q and dO, grad_pack
 * below; a key block's of K), a row every packed_ld(d) doubles: where
 * they lie, a row of a head is a row of all heads apart, and the
 * `accumulate` loop, which walks down them, would meet a new cache line
 * and page each row; packed, it runs markedly faster on AVX2 and no
 * slower on AVX-512 (bench/README.md).  PACK_PAD doubles more a row
 * keep the rows of a power-of-two d off the same sets of the L1.
 */
static size_t
packed_ld(size_t d)
{
	return d + PACK_PAD;
}

/* Rows [r0, r0 + n) of m's first cols columns into dst, ld apart. */
static void
pack_rows(const struct attn_matrix *m, size_t r0, size_t n, size_t cols,
    double *dst, size_t ld)
{
	size_t r;

	for (r = 0; r < n; r++)
		memcpy(dst + r * ld, attn_at(m, r0 + r, 0), cols * sizeof *dst);
}

/*
 * Where a tile's rows of Q and dO are packed: once a task, every row of
 * its heads (task_rows), which spares packing the same rows again for
 * every key block, or for each tile again.  Once a task when the task
 * has its own key blocks (not in a wave, whose tasks share one head)
 * and the rows take at most TASK_PACK_MOST bytes, about what the dQ^T
 * of such a task holds.
 */
#define TASK_PACK_MOST ((size_t)16 << 20)

static void
grad_pack(const struct attn_problem *p, struct grad_dims *dm)
{
	const size_t ld = packed_ld(p->d_k) + packed_ld(p->d_v);
	size_t rows, bytes;

	dm->task_rows = !dm->wave &&
	    attn_size_mul(dm->heads, dm->qblocks * dm->qb, &rows) == 0 &&
	    attn_size_mul(rows, ld * sizeof(double), &bytes) == 0 &&
	    bytes <= TASK_PACK_MOST;
	dm->qrows = dm->task_rows ? rows : dm->qb;
}

/* The blocks of keys and rows of p's backward, its tasks and where they
 * pack their rows. */
static void
grad_dims(const struct attn_problem *p, struct grad_dims *dm)
{
	dm->kb = p->S < GRAD_KEYS ? round_up(p->S, ATTN_SIMD_ROWS) : GRAD_KEYS;
	dm->qb = p->T < GRAD_ROWS ? round_up(p->T, ATTN_SIMD_ROWS) : GRAD_ROWS;
	dm->heads = p->H / p->G;
	dm->qblocks = (p->T + dm->qb - 1) / dm->qb;
	dm->kblocks = (p->S + dm->kb - 1) / dm->kb;
	dm->wave = p->B * p->G < p->threads && dm->kblocks > 1;
	grad_pack(p, dm);
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
		{ dm->qrows, packed_ld(p->d_k), sizeof(double) },
		{ dm->qrows, packed_ld(p->d_v), sizeof(double) },
		{ dm->kb, packed_ld(p->d_k), sizeof(double) },
		{ dm->wave ? 0 : dm->heads, p->T, sizeof(double) },
		{ dm->heads, 0, sizeof(double) },	/* below */
		{ dm->heads, 1, sizeof(struct head_view) },
		{ dm->heads, 1, 1 },
		{ dm->heads, 1, 1 },
	};

	off[0] = 0;
	for (i = 0; i < W_COUNT; i++) {
		if (i == W_DQT && dm->wave)
			a = 0;
		else if (i == W_DQT) {
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

/*
 * Where each array of a wave starts in its allocation (off[V_COUNT] its
 * size, 64 bytes more for the alignment), as grad_layout; all 0 without
 * a wave.
 */
static int
wave_layout(const struct attn_problem *p, const struct grad_dims *dm,
    size_t off[V_COUNT + 1])
{
	size_t a, i;

	off[0] = 0;
	for (i = 0; i < V_COUNT; i++) {
		if (!dm->wave)
			a = 0;
		else if (i == V_DELTA)
			a = attn_size_mul(dm->heads, p->T, &a) != 0 ||
			    attn_size_mul(a, sizeof(double), &a) != 0 ?
			    SIZE_MAX : a;
		else if (i == V_DQT)
			a = attn_size_mul(dm->qblocks, p->d_k, &a) != 0 ||
			    attn_size_mul(a, dm->qb, &a) != 0 ||
			    attn_size_mul(a, dm->heads, &a) != 0 ||
			    attn_size_mul(a, sizeof(double), &a) != 0 ?
			    SIZE_MAX : a;
		else if (i == V_STEPS)
			a = attn_size_mul(dm->kblocks, sizeof(atomic_size_t),
			    &a) != 0 ? SIZE_MAX : a;
		else
			a = dm->heads;
		if (a == SIZE_MAX || attn_carve(&off[i], a) != 0)
			return -1;
	}
	return 0;
}

/* The tasks of a pool run: the (batch, KV head) pairs, or in a wave the
 * key blocks (or the heads, for their deltas, when there are more). */
static size_t
grad_tasks(const struct attn_problem *p, const struct grad_dims *dm)
{
	if (dm->wave)
		return dm->kblocks > dm->heads ? dm->kblocks : dm->heads;
	return p->B * p->G;
}

static size_t
grad_workers(const struct attn_problem *p, const struct grad_dims *dm)
{
	return p->threads < grad_tasks(p, dm) ? p->threads :
	    grad_tasks(p, dm);
}

enum attn_status
attn_stream_grad_plan(const struct attn_problem *p, size_t *bytes,
    struct attn_error *err)
{
	struct grad_dims dm;
	size_t off[W_COUNT + 1], voff[V_COUNT + 1], n, v = 0, e, c;
	enum attn_status st;

	grad_dims(p, &dm);
	if (grad_layout(p, &dm, off) != 0 ||
	    wave_layout(p, &dm, voff) != 0 ||
	    attn_size_mul(attn_mem_cost(off[W_COUNT] + 64), grad_workers(p,
	    &dm), &n) != 0 ||
	    attn_size_mul(grad_tasks(p, &dm), sizeof(struct grad_error),
	    &e) != 0)
		return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "the blocks of %zu queries and %zu keys are too large to "
		    "address", p->T, p->S);
	if (dm.wave)
		v = attn_mem_cost(voff[V_COUNT] + 64);
	if ((st = attn_mask_counts_bytes(p, &c, err)) != ATTN_OK)
		return st;
	if (v > SIZE_MAX - n || e > SIZE_MAX - n - v ||
	    c > SIZE_MAX - n - v - e)
		return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "the blocks of %zu queries and %zu keys are too large to "
		    "address", p->T, p->S);
	*bytes = n + v + e + c;
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
	w->qr = AT(W_QR);
	w->dor = AT(W_DOR);
	w->kr = AT(W_KR);
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

/* Whether x, of a row whose row_max is mx, is refused as the reference
 * passes refuse it: an infinity, or a nan but in a nan row. */
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
 * max|V| (times 1/(1 - p) under dropout) reaches DBL_MAX / 2 (or a nan
 * makes the bound nan).  Asked only of a tile the masks leave nothing
 * of, and answered once a task: a run with no such tile never reads dO
 * or V for it. */
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
	bound = (double)g->p->d_v * d_max * abs_max(&w->hv[0].hd.v) *
	    g->p->keep_scale;
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
 * A tile element by element, with the rules of the forward pass
 * (internal.h) and lib/grad.c: from the raw scores in st and dO V^T in
 * dpt, the weights after dropout into pt, dP into dpt and, when dS is
 * needed, dS into dpt and g into st; the held T x S stages written;
 * overflow noted.
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
			/* dV takes the weights after dropout, and dP of the
			 * weights is dO V^T through the same mask and scale
			 * (attn_dropped) */
			pt[j] = attn_dropped(p, hd, qi, kj, wt);
			if (!g->need_dp)
				continue;
			dpt[j] = attn_dropped(p, hd, qi, kj, dpt[j]);
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
			/* grad_bias's sums, in the reference passes' order (a
			 * bias makes every tile take this path) */
			if (p->sums.data != NULL)
				attn_bias_sum_add(p, h->n, qi, kj, ds);
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

/* Where row r of the task's head hh lies packed in w->qr and w->dor:
 * after the rows of the heads before it once a task, at 0 a tile. */
static size_t
packed_row(const struct grad *g, size_t hh, size_t r)
{
	return g->dm.task_rows ? hh * g->dm.qblocks * g->dm.qb + r : 0;
}

/* Rows [r0, r0 + n) of the task's head hh (hd), its Q and its dO when
 * the passes read it, packed into w->qr and w->dor (packed_row). */
static void
tile_pack(const struct grad *g, struct grad_ws *w,
    const struct attn_head *hd, size_t hh, size_t r0, size_t n)
{
	const struct attn_problem *p = g->p;
	const size_t ldq = packed_ld(p->d_k), ldo = packed_ld(p->d_v);
	const size_t at = packed_row(g, hh, r0);

	pack_rows(&hd->q, r0, n, p->d_k, w->qr + at * ldq, ldq);
	if (g->need_dp || g->need_dv)
		pack_rows(&hd->d_out, r0, n, p->d_v, w->dor + at * ldo, ldo);
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
	const size_t ldq = packed_ld(p->d_k), ldo = packed_ld(p->d_v);
	const size_t at = packed_row(g, h->hh, i0);
	const double *q = w->qr + at * ldq, *d_out = w->dor + at * ldo;
	enum attn_tile tile;
	const double *pw;
	int vector;
	size_t i, j;

	tile = attn_tile_keeps(p, &g->counts, hd, i0, i0 + ni, j0, j0 + nk);
	if (tile == ATTN_TILE_MASKED && !g->stores &&
	    !rows_special(g, h, i0, ni) && !task_checked(g, w))
		return;
	vector = tile == ATTN_TILE_KEPT && g->plain && !g->stores;
	if (!g->dm.task_rows)
		tile_pack(g, w, hd, h->hh, i0, ni);
	simd->scores(w->kt, kb, p->d_k, q, ldq, ni, vector ? p->scale : 1.0,
	    w->st, w->mb);
	if (g->need_dp)
		simd->scores(w->vt, kb, p->d_v, d_out, ldo, ni, 1.0, w->dpt,
		    w->mb);
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
		simd->accumulate(pw, kb, ni, d_out, ldo, p->d_v, w->ones,
		    w->dvt);
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
		simd->accumulate(w->st, kb, ni, q, ldq, p->d_k, w->ones,
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
		simd->accumulate(w->gq, qb, nk, w->kr, ldq, p->d_k, w->ones,
		    dqt);
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
 * columns in order from 0, as the reference passes sum it, into
 * d[0..T). */
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
 * kb, lanes the keys), as the reference passes add a head: an
 * infinity, or a nan unless nan_ok, is noted as an overflow of stage s
 * of block n. */
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

/* Head hh of (b, kv) as a view: its inputs and stage blocks, and its
 * delta at delta (computed elsewhere). */
static void
head_view_init(const struct grad *g, size_t b, size_t kv, size_t hh,
    double *delta, struct head_view *v)
{
	const struct attn_problem *p = g->p;
	const size_t h = kv * g->dm.heads + hh;

	memset(v, 0, sizeof *v);
	attn_problem_head(p, b, h, &v->hd);
	v->n = b * p->H + h;
	v->hh = hh;
	v->row_max = attn_stage_block(g->out, ATTN_STAGE_ROW_MAX, b, h);
	v->row_sum = attn_stage_block(g->out, ATTN_STAGE_ROW_SUM, b, h);
	if (p->hold & ATTN_STAGE_BIT(ATTN_STAGE_GRAD_WEIGHTS))
		v->dp = attn_stage_block(g->out, ATTN_STAGE_GRAD_WEIGHTS, b,
		    h);
	if (p->hold & ATTN_STAGE_BIT(ATTN_STAGE_GRAD_SCALED))
		v->ds = attn_stage_block(g->out, ATTN_STAGE_GRAD_SCALED, b, h);
	v->delta = delta;
}

/* How many of the query heads of (b, kv) have blocks below the limit. */
static size_t
heads_below(const struct grad *g, size_t b, size_t kv)
{
	size_t hh;

	for (hh = 0; hh < g->dm.heads && b * g->p->H + kv * g->dm.heads + hh <
	    g->limit; hh++)
		;
	return hh;
}

/* Set up the query heads of task (b, kv) whose blocks are below the
 * limit in w->hv: returns how many; and whether nan is meant in dK and
 * dV from the start (a nan row of theirs).  Their deltas are w->delta's,
 * computed here, or in a wave the wave's, computed before its tasks. */
static size_t
task_heads(const struct grad *g, struct grad_ws *w, size_t b, size_t kv,
    struct grad_error *e)
{
	const struct attn_problem *p = g->p;
	const size_t nh = heads_below(g, b, kv);
	size_t hh, i;

	if (g->dm.wave) {
		w->delta = g->wave.delta;
		w->dqt = g->wave.dqt;
	}
	for (hh = 0; hh < nh; hh++) {
		struct head_view *v = &w->hv[hh];

		head_view_init(g, b, kv, hh, w->delta + hh * p->T, v);
		if (g->dm.task_rows)
			tile_pack(g, w, &v->hd, hh, 0, p->T);
		if (g->need_delta && !g->dm.wave)
			head_delta(g, v, w->delta + hh * p->T, e);
		w->nan_k[hh] = 0;
		for (i = 0; i < p->T && !w->nan_k[hh]; i++)
			w->nan_k[hh] = (unsigned char)attn_grad_nan_row(p,
			    *attn_at(&v->row_max, i, 0));
		w->nan_v[hh] = w->nan_k[hh];
	}
	w->nh = nh;
	w->checked = -1;
	return nh;
}

/* dQ of query block I of head hh from dQ^T, each zero +0 (see the top),
 * into the held grad_q; overflow noted. */
static void
block_dq(const struct grad *g, const struct grad_ws *w, size_t hh, size_t I,
    struct grad_error *e)
{
	const struct attn_problem *p = g->p;
	const struct head_view *v = &w->hv[hh];
	const struct attn_matrix dq = attn_stage_block(g->out,
	    ATTN_STAGE_GRAD_Q, v->hd.b, v->hd.h);
	const size_t qb = g->dm.qb, end = p->T - I * qb < qb ? p->T : I * qb +
	    qb;
	size_t i0, i, u, c;

	for (i0 = I * qb; i0 < end; i0 += TRANSPOSE_ROWS) {
		const double *t = w->dqt + (hh * g->dm.qblocks + I) * p->d_k *
		    qb + i0 % qb;
		const size_t nu = end - i0 < TRANSPOSE_ROWS ? end - i0 :
		    TRANSPOSE_ROWS;
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
					note(e, v->n, ATTN_STAGE_GRAD_Q, i, c);
	}
}

/* ---------------------------------------------------------------- a wave */

/*
 * In a wave, until key block J has done more than `step` of its `total`
 * steps.  A task that has caught up with the one before waits until
 * that one is WAVE_LAG steps ahead (or done), not one: the two go at
 * the same pace, so one step behind it would catch up again at the
 * next step and wait again: a wake-up at every step, whose cost is no
 * small part of a step's work.  Which steps wait changes no bit.
 */
#define WAVE_LAG 4

static void
wave_wait(struct grad *g, size_t J, size_t step, size_t total)
{
	struct wave *wv = &g->wave;
	const size_t want = total - step > WAVE_LAG ? step + 1 + WAVE_LAG :
	    total;

	if (atomic_load_explicit(&wv->steps[J], memory_order_acquire) > step)
		return;
	pthread_mutex_lock(&wv->lock);
	while (atomic_load_explicit(&wv->steps[J], memory_order_acquire) <
	    want)
		pthread_cond_wait(&wv->cond, &wv->lock);
	pthread_mutex_unlock(&wv->lock);
}

/* In a wave, key block J has done `steps` steps. */
static void
wave_post(struct grad *g, size_t J, size_t steps)
{
	struct wave *wv = &g->wave;

	pthread_mutex_lock(&wv->lock);
	atomic_store_explicit(&wv->steps[J], steps, memory_order_release);
	pthread_cond_broadcast(&wv->cond);
	pthread_mutex_unlock(&wv->lock);
}

/* ---------------------------------------------------------------- a task */

/*
 * Key block J of the task's nh heads (of batch b), whose K and V are
 * transposed into w: in each head the query blocks in order, then the
 * head's sums added to dK and dV; a query block's dQ written after the
 * last key block.  A step is one (head, query block), numbered in that
 * order; in a wave, key block J takes step s after key block J - 1 has
 * taken it, so that each dQ^T block gains the key blocks in order.
 */
static void
key_block(struct grad *g, struct grad_ws *w, size_t b, size_t J,
    struct grad_error *e)
{
	const struct attn_problem *p = g->p;
	const size_t kb = g->dm.kb, qb = g->dm.qb, j0 = J * kb;
	const size_t nk = p->S - j0 < kb ? p->S - j0 : kb;
	const int wave = g->dm.wave;
	size_t hh, I;

	if (w->nh > 0) {
		block_transpose(&w->hv[0].hd.k, j0, nk, p->d_k, kb, w->kt);
		if (g->need_dq)
			pack_rows(&w->hv[0].hd.k, j0, nk, p->d_k, w->kr,
			    packed_ld(p->d_k));
		if (g->need_dp)
			block_transpose(&w->hv[0].hd.v, j0, nk, p->d_v, kb,
			    w->vt);
	}
	for (hh = 0; hh < w->nh; hh++) {
		const struct head_view *v = &w->hv[hh];
		const struct attn_matrix dk = g->need_dk ?
		    attn_stage_block(g->out, ATTN_STAGE_GRAD_K, b, v->hd.h) :
		    (struct attn_matrix){ 0 };
		const struct attn_matrix dv = g->need_dv ?
		    attn_stage_block(g->out, ATTN_STAGE_GRAD_V, b, v->hd.h) :
		    (struct attn_matrix){ 0 };

		/* nan from a head before this one is meant, as the
		 * reference passes read it from dK(0, 0), which key block
		 * 0 holds: in a wave, its task passes it on with its first
		 * step */
		if (J == 0 && g->need_dk)
			w->nan_k[hh] |= (unsigned char)isnan(*attn_at(&dk, 0,
			    0));
		if (J == 0 && g->need_dv)
			w->nan_v[hh] |= (unsigned char)isnan(*attn_at(&dv, 0,
			    0));
		if (J == 0 && wave) {
			g->wave.nan_k[hh] = w->nan_k[hh];
			g->wave.nan_v[hh] = w->nan_v[hh];
		}
		if (g->need_dk)
			memset(w->dkt, 0, p->d_k * kb * sizeof *w->dkt);
		if (g->need_dv)
			memset(w->dvt, 0, p->d_v * kb * sizeof *w->dvt);
		for (I = 0; I < g->dm.qblocks; I++) {
			const size_t step = hh * g->dm.qblocks + I;

			if (wave && J > 0)
				wave_wait(g, J - 1, step, w->nh *
				    g->dm.qblocks);
			if (wave && J > 0 && I == 0) {
				w->nan_k[hh] |= g->wave.nan_k[hh];
				w->nan_v[hh] |= g->wave.nan_v[hh];
			}
			if (J == 0 && g->need_dq)
				memset(w->dqt + (hh * g->dm.qblocks + I) *
				    p->d_k * qb, 0, p->d_k * qb *
				    sizeof *w->dqt);
			tile_step(g, w, v, I * qb, j0, nk, e);
			if (J + 1 == g->dm.kblocks && g->need_dq)
				block_dq(g, w, hh, I, e);
			if (wave)
				wave_post(g, J, step + 1);
		}
		if (g->need_dk)
			add_head(g, &dk, w->dkt, p->d_k, j0, nk, w->nan_k[hh],
			    v->n, ATTN_STAGE_GRAD_K, e);
		if (g->need_dv)
			add_head(g, &dv, w->dvt, p->d_v, j0, nk, w->nan_v[hh],
			    v->n, ATTN_STAGE_GRAD_V, e);
	}
	tick(g);
}

/* Task t: batch b = t / G and KV head t % G, every key block in order. */
static void
grad_task(void *ctx, size_t worker, size_t t)
{
	struct grad *g = ctx;
	struct grad_ws *w = &g->ws[worker];
	struct grad_error *e = &g->errors[t];
	size_t J;

	if (!attn_split_pair_mine(g->p, t / g->p->G, t % g->p->G))
		return;		/* another process's (attn_split) */
	task_heads(g, w, t / g->p->G, t % g->p->G, e);
	for (J = 0; J < g->dm.kblocks; J++)
		key_block(g, w, t / g->p->G, J, e);
}

/* In a wave, task t: key block t of the wave's (batch, KV head). */
static void
wave_task(void *ctx, size_t worker, size_t t)
{
	struct grad *g = ctx;
	struct grad_ws *w = &g->ws[worker];
	const size_t b = g->wave.group / g->p->G;

	if (t >= g->dm.kblocks)
		return;
	task_heads(g, w, b, g->wave.group % g->p->G, &g->errors[t]);
	key_block(g, w, b, t, &g->errors[t]);
}

/* In a wave, before its key blocks, task t: the delta of head t. */
static void
wave_delta(void *ctx, size_t worker, size_t t)
{
	struct grad *g = ctx;
	const size_t b = g->wave.group / g->p->G, kv = g->wave.group % g->p->G;
	struct head_view v;

	(void)worker;
	if (t >= heads_below(g, b, kv))
		return;
	head_view_init(g, b, kv, t, g->wave.delta + t * g->p->T, &v);
	head_delta(g, &v, g->wave.delta + t * g->p->T, &g->errors[t]);
}

/* ---------------------------------------------------------------- run */

/* No error yet: every field set, since note() compares them all. */
static void
error_clear(struct grad_error *e)
{
	e->n = SIZE_MAX;
	e->s = ATTN_STAGE_COUNT;
	e->i = SIZE_MAX;
	e->j = SIZE_MAX;
}

/* The first error of the tasks' records into *first, the records
 * cleared for the next run of the pool. */
static void
errors_fold(struct grad *g, size_t tasks, struct grad_error *first)
{
	size_t i;

	for (i = 0; i < tasks; i++) {
		note(first, g->errors[i].n, g->errors[i].s, g->errors[i].i,
		    g->errors[i].j);
		error_clear(&g->errors[i]);
	}
}

/* The tasks of job, then their errors folded into *first. */
static void
pool_run(struct grad *g, struct attn_pool_job *job,
    void (*task)(void *, size_t, size_t), struct grad_error *first)
{
	job->task = task;
	attn_pool_run(job);
	errors_fold(g, job->tasks, first);
}

static int
wave_alloc(struct grad *g, const size_t off[V_COUNT + 1])
{
	struct wave *wv = &g->wave;
	char *m;

	wv->bytes = off[V_COUNT] + 64;
	if ((wv->mem = attn_mem_alloc(wv->bytes)) == NULL)
		return -1;
	m = (char *)wv->mem + (64 - (uintptr_t)wv->mem % 64) % 64;
	wv->delta = (double *)(void *)(m + off[V_DELTA]);
	wv->dqt = (double *)(void *)(m + off[V_DQT]);
	wv->steps = (atomic_size_t *)(void *)(m + off[V_STEPS]);
	wv->nan_k = (unsigned char *)(m + off[V_NAN_K]);
	wv->nan_v = (unsigned char *)(m + off[V_NAN_V]);
	return 0;
}

/*
 * The tasks.  With at least as many (batch, KV head) pairs as threads,
 * a task is one of them, whole.  With fewer (one batch of multi-query
 * attention has one), each pair in turn is a wave: its deltas, a task a
 * head, then a task a key block, key block J following J - 1 a step
 * behind (key_block), so that every thread has a key block while the
 * sums keep the reference passes' order.
 */
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
	size_t off[W_COUNT + 1], voff[V_COUNT + 1], tasks, workers, i, J;

	memset(&g, 0, sizeof g);
	grad_dims(p, &g.dm);
	if (grad_layout(p, &g.dm, off) != 0 ||
	    wave_layout(p, &g.dm, voff) != 0)
		return attn_stream_grad_plan(p, &i, err);
	g.p = p;
	g.simd = simd;
	g.out = out;
	g.limit = limit;
	/* a dropout mask takes every tile element by element */
	g.plain = cfg->softcap <= 0.0 && !cfg->alibi &&
	    p->in->bias.data == NULL && p->in->dropout_mask.data == NULL;
	g.stores = (p->hold & GRAD_TXS) != 0;
	g.need_dp = attn_problem_needs(p, ATTN_STAGE_GRAD_WEIGHTS);
	g.need_ds = attn_problem_needs(p, ATTN_STAGE_GRAD_SCALED);
	g.need_delta = attn_problem_needs(p, ATTN_STAGE_DELTA);
	g.need_dq = attn_problem_needs(p, ATTN_STAGE_GRAD_Q);
	g.need_dk = attn_problem_needs(p, ATTN_STAGE_GRAD_K);
	g.need_dv = attn_problem_needs(p, ATTN_STAGE_GRAD_V);
	tasks = grad_tasks(p, &g.dm);
	workers = grad_workers(p, &g.dm);
	g.total = p->B * p->G * g.dm.kblocks;
	g.errors = attn_mem_array(tasks, sizeof *g.errors);
	g.ws = attn_mem_zalloc(workers * sizeof *g.ws);
	if (g.errors == NULL || g.ws == NULL ||
	    (g.dm.wave && wave_alloc(&g, voff) != 0))
		goto nomem;
	error_clear(&first);
	for (i = 0; i < tasks; i++)
		error_clear(&g.errors[i]);
	for (i = 0; i < workers; i++)
		if (ws_alloc(&g.ws[i], off, g.dm.kb > g.dm.qb ? g.dm.kb :
		    g.dm.qb) != 0)
			goto nomem;
	if ((st = attn_mask_counts_init(p, &g.counts, err)) != ATTN_OK)
		goto done;
	pthread_mutex_init(&g.lock, NULL);
	pthread_mutex_init(&g.wave.lock, NULL);
	pthread_cond_init(&g.wave.cond, NULL);
	memset(&job, 0, sizeof job);
	job.ctx = &g;
	job.threads = workers;
	if (!g.dm.wave) {
		job.tasks = tasks;
		pool_run(&g, &job, grad_task, &first);
	}
	for (g.wave.group = 0; g.dm.wave && g.wave.group < p->B * p->G;
	    g.wave.group++) {
		if (!attn_split_pair_mine(p, g.wave.group / p->G,
		    g.wave.group % p->G))
			continue;	/* another process's (attn_split) */
		for (J = 0; J < g.dm.kblocks; J++)
			atomic_init(&g.wave.steps[J], 0);
		job.tasks = g.dm.heads;
		if (g.need_delta)
			pool_run(&g, &job, wave_delta, &first);
		job.tasks = g.dm.kblocks;
		pool_run(&g, &job, wave_task, &first);
	}
	pthread_cond_destroy(&g.wave.cond);
	pthread_mutex_destroy(&g.wave.lock);
	pthread_mutex_destroy(&g.lock);
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
	attn_mem_free(g.wave.mem, g.wave.bytes);
	attn_mem_free(g.errors, g.errors != NULL ? tasks * sizeof *g.errors :
	    0);
	attn_mask_counts_free(&g.counts);
	return st;
}
