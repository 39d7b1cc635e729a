/*
 * kernel_stream.c - the streaming kernel: output and lse (and row_max,
 * row_sum) in one pass over blocks of keys, never holding a T x S matrix,
 * threaded over (batch, head, block of queries) and vectorised, with
 * results that do not depend on the thread count or the instruction set.
 *
 * Online softmax (Milakov and Gimelshein 2018; arXiv 2112.05682).  Each
 * query row carries the largest logit so far m, the sum l of exp(x - m) and
 * the accumulator o of exp(x - m) v, starting from m = -inf, l = 0, o = 0.
 * A block of keys with logits x_j and value rows v_j updates them as
 *
 *	m' = max(m, max_j x_j)
 *	l' = l exp(m - m') + sum_j exp(x_j - m')
 *	o' = o exp(m - m') + sum_j exp(x_j - m') v_j
 *
 * and at the end output = o / l, lse = m + log(l), row_max = m and
 * row_sum = l.  While every key so far is masked (m' = -inf), 0 stands in
 * for m' on the right, so that exp sees -inf and gives 0 rather than nan.
 * With attention sinks a row starts at m = sink, l = exp(sink - sink) =
 * 1, o = 0 instead (attn_row_max_start, attn_row_sum_start): the sink is
 * one more logit with a value of 0, seen before the first block.
 *
 * One arithmetic.  The tests' reference kernel (tests/unit/kernel_ref.c)
 * takes its row sums and outputs in the same blocks of keys with the
 * same operations (each dot product an fma chain in column order,
 * attn_exp, the same rescaling), so the two give the same bytes for
 * every stage both compute (attn(1), Order of operations: a stage
 * prints the same digits whatever else a run computes or prints);
 * tests/unit/check_stream.c holds them to it.
 *
 * Tiling.  A task is TASK_ROWS = 144 query rows of one batch and head;
 * it walks the keys in blocks of BLOCK_KEYS = 128.  For each block the
 * loops read the block's rows of K and V packed, a row every d doubles
 * (block_copy): where they lie when a head's rows already lie so (a
 * head of its own, or one KV head), else from a copy in the worker's
 * own arrays (64 KB each at d = 64), of the block or of the whole head
 * (CACHE_MOST, below).  Q K^T goes into a 144 x 128 tile (144 KB), the
 * online step turns it into exp(x - m') in place, and P V adds it into o
 * (72 KB): with Q^T, 416 KB, in a 512 KB L2.  The register tiles are in
 * lib/simd_loops.h.  A copy, read once and in order, reaches L2 before
 * the tiles' loops need it, where rows fetched 4 at a time from L3
 * would keep the loops waiting (and rows 512 bytes apart share L1
 * sets); but a block already packed costs more to copy than it saves,
 * so it is read where it lies.  Tasks of 144 rows fetch each block of K
 * and V for more work than smaller ones, while their tiles still fit in
 * L2; 128 keys keep the rescaling of o (d_v x 144 products a block) a
 * small part of the work.  144 rows give 2 threads 29 tasks a head to
 * share at n = 4096.  bench/README.md has the measurements.
 * The rows of a task are independent, but BLOCK_KEYS decides where the
 * rescaling happens, so it is part of the arithmetic (internal.h's
 * ATTN_SOFTMAX_BLOCK, which the reference kernel sums in too): never a
 * function of the thread count or the CPU.
 *
 * Variants.  Each tile asks the masking rule (lib/mask.c) what the masks
 * leave of it: a question of the rule, never answered here.  A tile they
 * leave wholly masked is skipped, which changes no bit (its step would
 * multiply by exp(0) = 1 and add 0, or with no key yet multiply 0 by 0),
 * so causal attention costs about half, and a key-padding mask only the
 * blocks it keeps.
 * A tile wholly kept, with no softcap, bias or ALiBi, takes its logits
 * straight from the vector loop; any other tile is finished element by
 * element with the rules every kernel shares (internal.h), so the logits
 * are the reference kernel's to the bit.
 *
 * Dropout: the tile's exp(x - m') that a dropout mask drops are made 0
 * once the row sums have taken them (tile_drop), and output is o / l *
 * 1/(1 - p); lse, row_max and row_sum are dropout's inputs, untouched.
 *
 * T x S stages, when held (printing weights), are written as the tiles
 * pass, and weights get a second pass over each row once m and l are
 * final: w = exp(x - m) / l.  The same run with or without them gives the
 * same output, to the bit.
 *
 * Overflow: when Q and K are small enough that no dot product can
 * overflow (d_k max|q| max|k| max(|scale|, 1) < DBL_MAX / 2, checked per
 * task), nothing is checked; otherwise every score of the task is, as
 * the reference kernel does, and the error names the first bad score in
 * the reference kernel's order.  A kept logit that the bias takes beyond
 * the doubles is told likewise (tile_logits, which every tile with a
 * bias goes through).  o, summed before its division by l, can overflow
 * where output does not (by up to S times, with values near DBL_MAX):
 * rows_finish checks each row's output, and the rare row that is not
 * finite is summed again from its final weights (task_rescue), so the
 * fast path pays one test an output.
 *
 * Dims: B batches, H query heads, G KV heads, T query rows, S keys, d_k
 * and d_v columns per head.
 */
#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define TASK_ROWS ATTN_TASK_ROWS	/* query rows of a task */
#define BLOCK_KEYS ATTN_SOFTMAX_BLOCK	/* keys of a block */

_Static_assert(TASK_ROWS % ATTN_SIMD_ROWS == 0,
    "a task is a whole number of register tiles");

/* Row flags: a nan logit, a +inf logit (only a bias of nan or +inf
 * brings them, which the readers refuse), an output that overflowed and
 * is summed again (task_rescue). */
enum { ROW_NAN = 1, ROW_INF = 2, ROW_BIG = 4 };

#define TXS_STAGES (ATTN_STAGE_BIT(ATTN_STAGE_SCORES) | \
	ATTN_STAGE_BIT(ATTN_STAGE_SCALED) | \
	ATTN_STAGE_BIT(ATTN_STAGE_WEIGHTS) | ATTN_STAGE_BIT(ATTN_STAGE_MASK) | \
	ATTN_STAGE_BIT(ATTN_STAGE_DROPPED))

/* One worker's tiles, carved from one allocation (mem); every array is
 * 64-byte aligned for the vector loads.  Rows and keys are at most
 * TASK_ROWS and BLOCK_KEYS, fewer for a small problem. */
struct workspace {
	void *mem;
	double *qt;		/* d_k x rows: Q^T of the task */
	double *tile;		/* keys x rows: the tile */
	double *ot;		/* d_v x rows: o^T */
	double *kb, *vb;	/* keys x d_k, keys x d_v: the block's K and V;
				 * or S x d_k, S x d_v: a head's (cached) */
	const double *ck, *cv;	/* whose K and V kb and vb cache */
	double *m, *l, *mb, *alpha;	/* rows each */
	unsigned char *flags;		/* rows */
};

/*
 * The bad values a task found, by kind in the order of the reference
 * kernel's passes (a score, a scaled score, a logit once the bias is
 * added, an output): the first of the first kind found, in row-major
 * order.  The first of a head is then the least of its tasks', as the
 * reference kernel would report it.
 */
enum bad { BAD_NONE, BAD_SCORE, BAD_SCALED, BAD_LOGIT, BAD_OUTPUT };

struct task_error {
	enum bad kind;
	size_t i, j;		/* query, and key (or column of output) */
};

struct stream {
	const struct attn_problem *p;
	const struct attn_simd *simd;
	struct attn_stages *out;
	struct attn_mask_counts counts;	/* for the tiles of the rule */
	size_t tasks_per_head;
	size_t *task_rows;	/* packed: task k of a head is rows [2k]
				 * on, [2k+1] of them (head_tasks) */
	double *k_max;		/* max |K| of each batch and KV head */
	struct workspace *ws;	/* one per worker */
	int cache;		/* stream_caches */
	struct task_error *errors;	/* one per task */
	atomic_size_t stop_head;	/* the first head with an error */
};

/* ---------------------------------------------------------------- a task */

/* The stage blocks of head hd that are held (data NULL for the rest). */
static void
head_blocks(const struct attn_problem *p, const struct attn_stages *out,
    const struct attn_head *hd, struct attn_matrix m[ATTN_STAGE_COUNT])
{
	size_t s;

	for (s = 0; s < ATTN_STAGE_COUNT; s++)
		if (p->hold & ATTN_STAGE_BIT(s))
			m[s] = attn_stage_block(out, (enum attn_stage)s,
			    hd->b, hd->h);
		else
			memset(&m[s], 0, sizeof m[s]);
}

/* Every row starts with no key seen: m = -inf, l = 0, o = 0; or with
 * the head's sink seen, m = sink, l = 1, o = 0 (the rules every kernel
 * shares, internal.h). */
static void
rows_start(const struct attn_head *hd, struct workspace *w, size_t br,
    size_t d_v)
{
	size_t i;

	memset(w->ot, 0, d_v * br * sizeof *w->ot);
	memset(w->flags, 0, br);
	for (i = 0; i < br; i++) {
		w->m[i] = attn_row_max_start(hd);
		w->l[i] = attn_row_sum_start(hd);
	}
}

/* Record the bad value (kind, i, j) in *e when it comes first (see struct
 * task_error). */
static void
note_error(struct task_error *e, enum bad kind, size_t i, size_t j)
{
	if (e->kind == BAD_NONE || kind < e->kind || (kind == e->kind &&
	    (i < e->i || (i == e->i && j < e->j)))) {
		e->kind = kind;
		e->i = i;
		e->j = j;
	}
}

/*
 * Finish the logits of a tile element by element from its raw scores
 * (queries i0.., keys j0..; rows beyond `rows` are padding): scale, check,
 * softcap, bias and ALiBi, masks, as the reference kernel does; write the
 * held T x S stages; and take the row maxima again.  A kept logit that
 * the bias takes beyond the doubles is bad, as a bad score is; a nan or
 * +inf logit of a nan or +inf bias flags its row (it will be nan) and
 * counts as -inf here.  Returns 0, or -1 when a value is bad (recorded
 * in *e).
 */
static int
tile_logits(const struct stream *s, const struct attn_head *hd,
    struct workspace *w, const struct attn_matrix *m, size_t br,
    size_t rows, size_t i0, size_t j0, size_t nk, int checked,
    struct task_error *e)
{
	const struct attn_problem *p = s->p;
	int bad = 0;
	size_t i, j;

	for (i = 0; i < br; i++)
		w->mb[i] = -INFINITY;
	for (j = 0; j < nk; j++)
		for (i = 0; i < br; i++) {
			double *x = &w->tile[j * br + i];
			const size_t qi = i0 + i, kj = j0 + j;
			double raw = *x, y;

			if (i >= rows) {
				*x = -INFINITY;
				continue;
			}
			y = raw * p->scale;
			if (checked && (!isfinite(raw) || !isfinite(y))) {
				if (!isfinite(raw))
					note_error(e, BAD_SCORE, qi, kj);
				else
					note_error(e, BAD_SCALED, qi, kj);
				bad = 1;
				continue;
			}
			y = attn_add_bias(p, hd, qi, kj, attn_softcap(p, y));
			if (!attn_keeps(p, hd, qi, kj)) {
				y = -INFINITY;
			} else if (attn_logit_overflows(hd, qi, kj, y)) {
				note_error(e, BAD_LOGIT, qi, kj);
				bad = 1;
				continue;
			}
			if (m[ATTN_STAGE_SCORES].data != NULL)
				*attn_at(&m[ATTN_STAGE_SCORES], qi, kj) = raw;
			if (m[ATTN_STAGE_SCALED].data != NULL)
				*attn_at(&m[ATTN_STAGE_SCALED], qi, kj) = y;
			if (m[ATTN_STAGE_WEIGHTS].data != NULL)
				*attn_at(&m[ATTN_STAGE_WEIGHTS], qi, kj) = y;
			if (m[ATTN_STAGE_DROPPED].data != NULL)
				*attn_at(&m[ATTN_STAGE_DROPPED], qi, kj) = y;
			if (m[ATTN_STAGE_MASK].data != NULL)
				*attn_at(&m[ATTN_STAGE_MASK], qi, kj) =
				    y == -INFINITY ? 0.0 : 1.0;
			if (isnan(y) || y == INFINITY) {
				w->flags[i] |= isnan(y) ? ROW_NAN : ROW_INF;
				y = -INFINITY;
			}
			*x = y;
			/* As the vector max: the first of equal values. */
			w->mb[i] = y > w->mb[i] ? y : w->mb[i];
		}
	return bad ? -1 : 0;
}

/* Row qi of dropped, which holds its logits (tile_logits), made the
 * weights after dropout: the row's weights as rows_finish writes them
 * (nan in a nan row, what masked_rows says in a row with no key, over
 * the keys of its sequence sq), then attn_dropped. */
static void
row_dropped(const struct stream *s, const struct attn_head *hd,
    const struct attn_matrix *dr, size_t qi, const struct attn_seq *sq,
    double max, double sum)
{
	const struct attn_problem *p = s->p;
	double *row = attn_at(dr, qi, 0);
	size_t j;

	if (isfinite(max))
		s->simd->weights(row, p->S, max, sum);
	else
		for (j = 0; j < p->S; j++)
			row[j] = j < sq->k0 || j >= sq->k1 ? 0.0 :
			    max == -INFINITY ? attn_masked_weight(p, sq) : NAN;
	for (j = 0; j < p->S; j++)
		row[j] = attn_dropped(p, hd, qi, j, row[j]);
}

/* Write output, lse, row_max and row_sum of the task's rows, and its
 * weights and dropped when they are held.  A row whose output
 * overflowed is flagged ROW_BIG, for task_rescue; returns whether there
 * is one. */
static int
rows_finish(const struct stream *s, const struct attn_head *hd,
    struct workspace *w, const struct attn_matrix *m, size_t br,
    size_t rows, size_t i0)
{
	const struct attn_problem *p = s->p;
	const struct attn_matrix *out = &m[ATTN_STAGE_OUTPUT];
	const struct attn_matrix *wt = &m[ATTN_STAGE_WEIGHTS];
	struct attn_seq sq;
	size_t i, j, c;
	int big = 0;

	attn_row_seq(p, hd->b, i0, &sq);	/* the task's sequence */
	for (i = 0; i < rows; i++) {
		const size_t qi = i0 + i;
		double lse, max = w->m[i], sum = w->l[i];

		if (w->flags[i] != 0) {
			/* A nan or +inf logit: nan, as IEEE arithmetic
			 * makes it in the reference kernel. */
			max = w->flags[i] & ROW_NAN ? NAN : INFINITY;
			sum = lse = NAN;
			for (c = 0; out->data != NULL && c < p->d_v; c++)
				*attn_at(out, qi, c) = NAN;
			for (j = 0; wt->data != NULL && j < p->S; j++)
				*attn_at(wt, qi, j) = j >= sq.k0 && j < sq.k1 ?
				    NAN : 0.0;
		} else if (max == -INFINITY) {
			/* No key: what masked_rows says; for uniform the
			 * mean of V over the keys of the sequence, summed as
			 * the reference kernel does. */
			const double v = attn_masked_weight(p, &sq);

			sum = 0.0;
			lse = -INFINITY;
			for (c = 0; out->data != NULL && c < p->d_v; c++) {
				double o = 0.0;

				if (p->cfg->masked_rows != ATTN_MASKED_UNIFORM)
					o = v;
				else
					for (j = sq.k0; j < sq.k1; j++)
						o = fma(v, *attn_at(&hd->v, j,
						    c), o);
				*attn_at(out, qi, c) = o;
			}
			for (j = 0; wt->data != NULL && j < p->S; j++)
				*attn_at(wt, qi, j) = j >= sq.k0 && j < sq.k1 ?
				    v : 0.0;
		} else {
			lse = max + log(sum);
			for (c = 0; out->data != NULL && c < p->d_v; c++) {
				*attn_at(out, qi, c) = w->ot[c * br + i] / sum *
				    p->keep_scale;
				if (!isfinite(*attn_at(out, qi, c)))
					w->flags[i] |= ROW_BIG;
			}
			big |= (w->flags[i] & ROW_BIG) != 0;
			if (wt->data != NULL)
				s->simd->weights(attn_at(wt, qi, 0), p->S, max,
				    sum);
		}
		if (m[ATTN_STAGE_DROPPED].data != NULL)
			row_dropped(s, hd, &m[ATTN_STAGE_DROPPED], qi, &sq,
			    max, sum);
		if (m[ATTN_STAGE_LSE].data != NULL)
			*attn_at(&m[ATTN_STAGE_LSE], qi, 0) = lse;
		if (m[ATTN_STAGE_ROW_MAX].data != NULL)
			*attn_at(&m[ATTN_STAGE_ROW_MAX], qi, 0) = max;
		if (m[ATTN_STAGE_ROW_SUM].data != NULL)
			*attn_at(&m[ATTN_STAGE_ROW_SUM], qi, 0) = sum;
	}
	return big;
}

/*
 * A head's K and V are packed, a row every d doubles, where the loops
 * read them: a head of its own, or one head, lies so already; heads
 * side by side (from bhsd or bshd) are copied, all S rows of a head at
 * once into the worker's cache when they take at most CACHE_MOST bytes,
 * else a block at a time for each task: the cache copies a block once
 * a head, where the tasks of a head would each copy it again.
 */
#define CACHE_MOST ((size_t)16 << 20)

/* Whether the workers cache a head's K and V (stream_layout sizes kb
 * and vb so): with KV heads side by side, and when they fit. */
static int
stream_caches(const struct attn_problem *p)
{
	return p->G > 1 && p->d_k + p->d_v <= CACHE_MOST / sizeof(double) &&
	    p->S <= CACHE_MOST / sizeof(double) / (p->d_k + p->d_v);
}

/* Rows j0 .. j0+nk of m (a head's K or V), cols columns each, packed
 * (above): where they lie, in buf holding all of m's rows once cached
 * (*cached says whose), or copied into buf. */
static const double *
block_copy(const struct stream *s, const struct attn_matrix *m, size_t j0,
    size_t nk, size_t cols, double *buf, const double **cached)
{
	size_t j;

	if (m->stride == cols)
		return attn_at(m, j0, 0);
	if (s->cache) {
		if (*cached != m->data) {
			for (j = 0; j < m->rows; j++)
				memcpy(buf + j * cols, attn_at(m, j, 0),
				    cols * sizeof *buf);
			*cached = m->data;
		}
		return buf + j0 * cols;
	}
	for (j = 0; j < nk; j++)
		memcpy(buf + j * cols, attn_at(m, j0 + j, 0),
		    cols * sizeof *buf);
	return buf;
}

/* Whether some score of the task could overflow, so that each must be
 * checked. */
static int
task_checked(const struct stream *s, const struct attn_head *hd,
    size_t i0, size_t rows)
{
	const struct attn_problem *p = s->p;
	double q_max = 0.0, bound;
	size_t i, c;

	for (i = 0; i < rows; i++)
		for (c = 0; c < p->d_k; c++) {
			const double a = fabs(*attn_at(&hd->q, i0 + i, c));

			/* (a nan makes the bound nan: checked) */
			q_max = a > q_max || isnan(a) ? a : q_max;
		}
	bound = (double)p->d_k * q_max * s->k_max[hd->b * p->G + hd->g] *
	    fmax(fabs(p->scale), 1.0);
	return !(bound < DBL_MAX / 2);
}

/* What a pass over the keys of a task does with each tile's logits: the
 * online softmax step, or task_rescue's weights of final m and l. */
enum pass { PASS_ONLINE, PASS_RESCUE };

/*
 * The rows flagged ROW_BIG of a tile's logits into their weights from the
 * final m and l, halved (exp(x - m) / l / 2, exact to halve), the other
 * rows into 0; alpha 1, so that accumulate adds P V to o unscaled.
 */
static void
rescue_weights(struct workspace *w, size_t br, size_t nk)
{
	size_t i, j;

	for (i = 0; i < br; i++)
		w->alpha[i] = 1.0;
	for (j = 0; j < nk; j++)
		for (i = 0; i < br; i++) {
			double *x = &w->tile[j * br + i];

			*x = w->flags[i] & ROW_BIG ? attn_exp(*x - w->m[i]) /
			    w->l[i] * 0.5 : 0.0;
		}
}

/* The entries of a tile's weights (exp(x - m'), after the row sums took
 * them) that the dropout mask drops made 0, so that P V adds only the
 * kept ones; rows_finish scales the output by 1/(1 - p). */
static void
tile_drop(const struct attn_head *hd, struct workspace *w, size_t br,
    size_t rows, size_t i0, size_t j0, size_t nk)
{
	size_t i, j;

	for (j = 0; j < nk; j++)
		for (i = 0; i < rows; i++)
			if (!attn_dropout_keeps(hd, i0 + i, j0 + j))
				w->tile[j * br + i] = 0.0;
}

/*
 * One pass of task rows [i0, i0 + rows) of head hd over the blocks of
 * keys: the logits of each tile (straight from the vector loop when the
 * tile is wholly kept and plain, else tile_logits), then the online step
 * and P V into o (PASS_ONLINE), or rescue_weights and P V (PASS_RESCUE,
 * where m holds no stage to write).  Returns 0, or -1 when a value is bad
 * (in *e): then only the checks go on, to find the first one.
 */
static int
task_keys(const struct stream *s, const struct attn_head *hd,
    struct workspace *w, const struct attn_matrix *m, size_t br,
    size_t rows, size_t i0, int checked, enum pass pass,
    struct task_error *e)
{
	const struct attn_problem *p = s->p;
	const struct attn_config *cfg = p->cfg;
	const int stores = pass == PASS_ONLINE && (p->hold & TXS_STAGES) != 0;
	const int plain = cfg->softcap <= 0.0 && !cfg->alibi &&
	    p->in->bias.data == NULL;
	const double *kb;
	struct attn_seq sq;
	size_t from[3], to[3], r, j0;
	int bad = 0;

	/* The keys of the task's sequence (attn_row_seq; every key but
	 * padding when nothing is packed), in blocks from its first key, so
	 * that it sums as it would alone; then, only when every tile is
	 * wanted, the keys before and after it, which the rule masks for
	 * these rows.  Skipping those is what makes a packed batch cost the
	 * sum of its sequences' T x S, not total_q x total_k. */
	attn_row_seq(p, hd->b, i0, &sq);
	from[0] = sq.k0;
	to[0] = sq.k1;
	from[1] = 0;
	to[1] = sq.k0;
	from[2] = sq.k1;
	to[2] = p->S;
	for (r = 0; r < (stores || checked ? 3u : 1u); r++)
	for (j0 = from[r]; j0 < to[r]; j0 += BLOCK_KEYS) {
		const size_t nk = to[r] - j0 < BLOCK_KEYS ? to[r] - j0 :
		    BLOCK_KEYS;
		const enum attn_tile tile = attn_tile_keeps(p, &s->counts, hd,
		    i0, i0 + rows, j0, j0 + nk);

		/* Skipped unless its T x S stages are printed or its scores
		 * must be checked. */
		if (tile == ATTN_TILE_MASKED && !stores && !checked)
			continue;
		kb = block_copy(s, &hd->k, j0, nk, p->d_k, w->kb, &w->ck);
		if (tile == ATTN_TILE_KEPT && plain && !stores && !checked) {
			s->simd->scores(w->qt, br, p->d_k, kb, p->d_k, nk,
			    p->scale, w->tile, w->mb);
		} else {
			s->simd->scores(w->qt, br, p->d_k, kb, p->d_k, nk, 1.0,
			    w->tile, w->mb);
			if (tile_logits(s, hd, w, m, br, rows, i0, j0, nk,
			    checked, e) != 0)
				bad = 1;
		}
		if (tile == ATTN_TILE_MASKED || bad)
			continue;
		if (pass == PASS_ONLINE)
			s->simd->softmax(w->tile, br, nk, w->m, w->l, w->mb,
			    w->alpha);
		else
			rescue_weights(w, br, nk);
		if (hd->dropout.data != NULL)
			tile_drop(hd, w, br, rows, i0, j0, nk);
		if (m[ATTN_STAGE_OUTPUT].data != NULL ||
		    pass == PASS_RESCUE)
			s->simd->accumulate(w->tile, br, nk, block_copy(s,
			    &hd->v, j0, nk, p->d_v, w->vb, &w->cv), p->d_v,
			    p->d_v, w->alpha, w->ot);
	}
	return bad ? -1 : 0;
}

/*
 * The rows of a task whose output overflowed (ROW_BIG): o = exp(x - m) v
 * summed before the division by l can exceed the doubles by a factor of
 * up to S where output = o / l does not.  So they are summed again with
 * the weights of the final m and l, each halved, as the reference kernel
 * sums a row that overflows (no partial sum then exceeds max |v|), and
 * doubled; what overflows still is beyond the doubles, a data error in
 * *e.  Returns 0 or -1.
 */
static int
task_rescue(const struct stream *s, const struct attn_head *hd,
    struct workspace *w, const struct attn_matrix *m, size_t br,
    size_t rows, size_t i0, int checked, struct task_error *e)
{
	const struct attn_matrix *out = &m[ATTN_STAGE_OUTPUT];
	struct attn_matrix none[ATTN_STAGE_COUNT];
	size_t i, c;
	int bad = 0;

	memset(none, 0, sizeof none);
	memset(w->ot, 0, s->p->d_v * br * sizeof *w->ot);
	if (task_keys(s, hd, w, none, br, rows, i0, checked, PASS_RESCUE,
	    e) != 0)
		return -1;	/* not after a first pass that passed */
	for (i = 0; i < rows; i++)
		for (c = 0; (w->flags[i] & ROW_BIG) && c < s->p->d_v; c++) {
			double *o = attn_at(out, i0 + i, c);

			*o = w->ot[c * br + i] * 2.0 * s->p->keep_scale;
			if (!isfinite(*o)) {
				note_error(e, BAD_OUTPUT, i0 + i, c);
				bad = 1;
			}
		}
	return bad ? -1 : 0;
}

static void
stream_task(void *ctx, size_t worker, size_t t)
{
	struct stream *s = ctx;
	const struct attn_problem *p = s->p;
	struct workspace *w = &s->ws[worker];
	struct task_error *e = &s->errors[t];
	struct attn_matrix m[ATTN_STAGE_COUNT];
	struct attn_head hd;
	const size_t n = t / s->tasks_per_head, k = t % s->tasks_per_head;
	const size_t i0 = s->task_rows != NULL ? s->task_rows[2 * k] :
	    k * TASK_ROWS;
	const size_t rows = s->task_rows != NULL ? s->task_rows[2 * k + 1] :
	    p->T - i0 < TASK_ROWS ? p->T - i0 : TASK_ROWS;
	const size_t br = (rows + ATTN_SIMD_ROWS - 1) / ATTN_SIMD_ROWS *
	    ATTN_SIMD_ROWS;
	size_t i, c, cur;
	int checked;

	if (!attn_split_task_mine(p, n, k, s->tasks_per_head))
		return;		/* another process's (attn_split) */
	attn_problem_head(p, n / p->H, n % p->H, &hd);
	head_blocks(p, s->out, &hd, m);
	checked = task_checked(s, &hd, i0, rows);
	for (c = 0; c < p->d_k; c++)
		for (i = 0; i < br; i++)
			w->qt[c * br + i] = i < rows ?
			    *attn_at(&hd.q, i0 + i, c) : 0.0;
	rows_start(&hd, w, br, p->d_v);
	if (task_keys(s, &hd, w, m, br, rows, i0, checked, PASS_ONLINE,
	    e) == 0 && (!rows_finish(s, &hd, w, m, br, rows, i0) ||
	    task_rescue(s, &hd, w, m, br, rows, i0, checked, e) == 0))
		return;
	cur = atomic_load(&s->stop_head);
	while (n < cur && !atomic_compare_exchange_weak(&s->stop_head, &cur,
	    n))
		;
}

/* Tasks of heads after one with an error need not run. */
static int
stream_stop(void *ctx, size_t t)
{
	struct stream *s = ctx;

	return t / s->tasks_per_head > atomic_load(&s->stop_head);
}

/* ---------------------------------------------------------------- set-up */

/* The workspace arrays, in struct workspace's order. */
enum {
	WS_QT, WS_TILE, WS_OT, WS_KB, WS_VB, WS_M, WS_L, WS_MB, WS_ALPHA,
	WS_FLAGS, WS_COUNT
};

/* The tasks of a head (attn_stream_tasks, lib/split.c, which the split
 * shares). */
static size_t
head_tasks(const struct attn_problem *p, size_t *rows)
{
	return attn_stream_tasks(&p->in->varlen, p->T, rows);
}

/* The bytes of head_tasks' table: none unpacked. */
static int
task_table_bytes(const struct attn_problem *p, size_t *bytes)
{
	*bytes = 0;
	return p->in->varlen.seqs == 0 ? 0 : attn_size_mul(head_tasks(p,
	    NULL), 2 * sizeof(size_t), bytes);
}

/*
 * Where each workspace array starts in its allocation (off[WS_COUNT] is
 * the size, to which workspace_alloc adds 64 to align it), and the tasks
 * of p; -1 when a size overflows.  Both plan and
 * run take the sizes from here, so that attn_plan counts what is held.
 */
static int
stream_layout(const struct attn_problem *p, size_t *tasks,
    size_t off[WS_COUNT + 1])
{
	const size_t rows = p->T < TASK_ROWS ? (p->T + ATTN_SIMD_ROWS - 1) /
	    ATTN_SIMD_ROWS * ATTN_SIMD_ROWS : TASK_ROWS;
	const size_t keys = p->S < BLOCK_KEYS ? p->S : BLOCK_KEYS;
	const size_t kv = stream_caches(p) ? p->S : keys;
	/* each array's size: doubles (flags: bytes) as a product */
	const size_t dims[WS_COUNT][2] = {
		{ p->d_k, rows }, { keys, rows }, { p->d_v, rows },
		{ kv, p->d_k }, { kv, p->d_v }, { rows, 1 }, { rows, 1 },
		{ rows, 1 }, { rows, 1 }, { rows, 1 },
	};
	size_t heads, a, i;

	if (attn_size_mul(p->B, p->H, &heads) != 0 ||
	    attn_size_mul(heads, head_tasks(p, NULL), tasks) != 0)
		return -1;
	off[0] = 0;
	for (i = 0; i < WS_COUNT; i++) {
		if (attn_size_mul(dims[i][0], dims[i][1], &a) != 0 ||
		    attn_size_mul(a, i == WS_FLAGS ? 1 : sizeof(double),
		    &a) != 0)
			return -1;
		if (attn_carve(&off[i], a) != 0)
			return -1;
	}
	return 0;
}

/* The workers a run of p uses: no more than its tasks. */
static size_t
workers_of(const struct attn_problem *p, size_t tasks)
{
	return p->threads < tasks ? p->threads : tasks;
}

/* To *bytes, what the backward pass holds: its own (lib/
 * kernel_stream_grad.c) and the stacks of the forward stages it reads
 * that p does not hold. */
static enum attn_status grad_plan(const struct attn_problem *p,
    size_t *bytes, struct attn_error *err);

/* The workspace of each worker, the error record of each task, the
 * rows of a head's tasks, the largest |K| of each batch and KV head, and
 * the mask's counts for the masking rule's tiles. */
static enum attn_status
stream_plan(const struct attn_problem *p, size_t *bytes,
    struct attn_error *err)
{
	size_t tasks, off[WS_COUNT + 1], n, e, k, r, c;
	enum attn_status st;

	if (stream_layout(p, &tasks, off) != 0 ||
	    attn_size_mul(attn_mem_cost(off[WS_COUNT] + 64), workers_of(p,
	    tasks), &n) != 0 ||
	    attn_size_mul(tasks, sizeof(struct task_error), &e) != 0 ||
	    attn_size_mul(p->B * p->G, sizeof(double), &k) != 0 ||
	    task_table_bytes(p, &r) != 0 ||
	    k > SIZE_MAX - r || e > SIZE_MAX - k - r ||
	    n > SIZE_MAX - e - k - r)
		return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "the blocks of %zu queries and %zu keys are too large to "
		    "address", p->T, p->S);
	if ((st = attn_mask_counts_bytes(p, &c, err)) != ATTN_OK)
		return st;
	if (c > SIZE_MAX - n - e - k - r)
		return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "the blocks of %zu queries and %zu keys are too large to "
		    "address", p->T, p->S);
	*bytes = n + e + k + r + c;
	return grad_plan(p, bytes, err);
}

/* Carve w's arrays from one block (attn_block_alloc: huge pages from
 * 256 KiB, which a worker's arrays take from d = 32), 64 more bytes than
 * off[WS_COUNT] for the alignment. */
static int
workspace_alloc(struct workspace *w, const size_t off[WS_COUNT + 1])
{
	char *m;

	memset(w, 0, sizeof *w);
	if ((w->mem = attn_block_alloc(off[WS_COUNT] + 64)) == NULL)
		return -1;
	m = (char *)w->mem + (64 - (uintptr_t)w->mem % 64) % 64;
	w->qt = (double *)(void *)(m + off[WS_QT]);
	w->tile = (double *)(void *)(m + off[WS_TILE]);
	w->ot = (double *)(void *)(m + off[WS_OT]);
	w->kb = (double *)(void *)(m + off[WS_KB]);
	w->vb = (double *)(void *)(m + off[WS_VB]);
	w->m = (double *)(void *)(m + off[WS_M]);
	w->l = (double *)(void *)(m + off[WS_L]);
	w->mb = (double *)(void *)(m + off[WS_MB]);
	w->alpha = (double *)(void *)(m + off[WS_ALPHA]);
	w->flags = (unsigned char *)(m + off[WS_FLAGS]);
	return 0;
}

/* max |K| of each batch and KV head, for task_checked. */
static void
find_k_max(const struct attn_problem *p, double *k_max)
{
	size_t b, g, j, c;

	for (b = 0; b < p->B; b++)
		for (g = 0; g < p->G; g++) {
			double mx = 0.0;

			for (j = 0; j < p->S; j++)
				for (c = 0; c < p->d_k; c++) {
					const double a = fabs(*attn_at(
					    &p->in->k, b * p->S + j,
					    g * p->d_k + c));

					mx = a > mx || isnan(a) ? a : mx;
				}
			k_max[b * p->G + g] = mx;
		}
}

/* The error of the first head with a bad value: its first bad score,
 * or failing that its first bad scaled score, bad logit, bad output, as
 * the reference kernel's passes find them. */
static enum attn_status
stream_error(const struct stream *s, size_t tasks, struct attn_error *err)
{
	const struct attn_problem *p = s->p;
	const size_t n = atomic_load(&s->stop_head);
	struct task_error first;
	struct attn_head hd;
	size_t t;

	memset(&first, 0, sizeof first);
	for (t = n * s->tasks_per_head; t < tasks &&
	    t / s->tasks_per_head == n; t++)
		if (s->errors[t].kind != BAD_NONE)
			note_error(&first, s->errors[t].kind, s->errors[t].i,
			    s->errors[t].j);
	attn_problem_head(p, n / p->H, n % p->H, &hd);
	switch (first.kind) {
	case BAD_SCORE:
		return attn_error_score(err, p, &hd, first.i, first.j);
	case BAD_SCALED:
		return attn_error_scaled(err, p, &hd, first.i, first.j);
	case BAD_LOGIT:
		return attn_error_logit(err, p, &hd, first.i, first.j);
	case BAD_OUTPUT:
	case BAD_NONE:
		break;
	}
	return attn_error_output(err, p, &hd, first.i, first.j);
}

/* The forward pass: p->hold's stages into out.  *heads is how many
 * blocks b*H + h were computed whole: all of them, or those before the
 * first with an error. */
static enum attn_status
stream_forward(const struct attn_problem *p, const struct attn_simd *simd,
    struct attn_stages *out, size_t *heads, struct attn_error *err)
{
	struct attn_pool_job job;
	struct stream s;
	enum attn_status st = ATTN_OK;
	size_t tasks, off[WS_COUNT + 1], workers, i;

	memset(&s, 0, sizeof s);
	if (stream_layout(p, &tasks, off) != 0)
		return stream_plan(p, &tasks, err);
	workers = workers_of(p, tasks);
	s.p = p;
	s.simd = simd;
	s.out = out;
	s.tasks_per_head = head_tasks(p, NULL);
	s.cache = stream_caches(p);
	atomic_init(&s.stop_head, SIZE_MAX);
	s.k_max = attn_alloc_array(p->B * p->G, sizeof *s.k_max);
	s.errors = calloc(tasks, sizeof *s.errors);
	s.ws = calloc(workers, sizeof *s.ws);
	if (p->in->varlen.seqs > 0 && (s.task_rows = attn_alloc_array(
	    s.tasks_per_head, 2 * sizeof(size_t))) == NULL)
		goto nomem;
	if (s.k_max == NULL || s.errors == NULL || s.ws == NULL)
		goto nomem;
	head_tasks(p, s.task_rows);
	for (i = 0; i < workers; i++)
		if (workspace_alloc(&s.ws[i], off) != 0)
			goto nomem;
	if ((st = attn_mask_counts_init(p, &s.counts, err)) != ATTN_OK)
		goto done;
	find_k_max(p, s.k_max);

	memset(&job, 0, sizeof job);
	job.tasks = tasks;
	job.threads = workers;
	job.task = stream_task;
	job.stop = stream_stop;
	job.ctx = &s;
	job.progress = p->cfg->progress;
	job.progress_arg = p->cfg->progress_arg;
	job.what = "query blocks";
	attn_pool_run(&job);
	*heads = p->B * p->H;
	if (atomic_load(&s.stop_head) != SIZE_MAX) {
		*heads = atomic_load(&s.stop_head);
		st = stream_error(&s, tasks, err);
	} else {
		out->computed |= p->hold;
	}
	goto done;
nomem:
	st = attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0, "out of memory");
done:
	for (i = 0; s.ws != NULL && i < workers; i++)
		attn_block_free(s.ws[i].mem);
	free(s.ws);
	free(s.errors);
	free(s.k_max);
	free(s.task_rows);
	attn_mask_counts_free(&s.counts);
	return st;
}

/* The forward stages the backward pass reads: row_max and row_sum for
 * the weights, output for delta (not for grad_v alone). */
static unsigned
grad_reads(const struct attn_problem *p)
{
	return ATTN_STAGE_BIT(ATTN_STAGE_ROW_MAX) |
	    ATTN_STAGE_BIT(ATTN_STAGE_ROW_SUM) | (attn_problem_needs(p,
	    ATTN_STAGE_DELTA) ? ATTN_STAGE_BIT(ATTN_STAGE_OUTPUT) : 0);
}

/* Those of them p does not hold. */
static unsigned
grad_extra(const struct attn_problem *p)
{
	return (p->need & ATTN_STAGES_GRAD) ? grad_reads(p) & ~p->hold : 0;
}

/*
 * With backward stages: the forward pass holds row_max, row_sum and
 * output too (in stacks of its own for those p does not hold), then the
 * backward pass (lib/kernel_stream_grad.c) reads them.  When the forward
 * pass fails at a block, the backward one still runs on the blocks
 * before it, since the reference kernel, which runs both a block at a
 * time, would report an overflow of theirs first.
 */
enum attn_status
attn_stream_run(const struct attn_problem *p, const struct attn_simd *simd,
    struct attn_stages *out, struct attn_error *err)
{
	struct attn_problem pf = *p;
	struct attn_stages both;
	struct attn_error eb;
	enum attn_status st = ATTN_OK, sb;
	const unsigned extra = grad_extra(p);
	size_t heads, s;

	if (!(p->need & ATTN_STAGES_GRAD))
		return stream_forward(p, simd, out, &heads, err);
	/* the stacks of the stages not held, shaped as attn_run's: output
	 * B*T x H*d_v, row_max and row_sum B*H*T x 1 */
	both = *out;
	for (s = 0; s < ATTN_STAGE_COUNT && st == ATTN_OK; s++)
		if (extra & ATTN_STAGE_BIT(s))
			st = s == ATTN_STAGE_OUTPUT ? attn_matrix_alloc(
			    &both.stage[s], p->B * p->T, p->H * p->d_v, err) :
			    attn_matrix_alloc(&both.stage[s], p->B * p->H *
			    p->T, 1, err);
	if (st != ATTN_OK)
		goto done;
	pf.hold = (p->hold & ~ATTN_STAGES_GRAD) | grad_reads(p);
	st = stream_forward(&pf, simd, &both, &heads, err);
	memset(&eb, 0, sizeof eb);
	sb = heads > 0 ? attn_stream_grad(p, simd, &both, heads, &eb) :
	    ATTN_OK;
	out->computed |= both.computed;
	if (sb == ATTN_OK && st == ATTN_OK)
		out->computed |= p->need & ATTN_STAGES_GRAD;
	if (sb != ATTN_OK && (st == ATTN_OK || sb == ATTN_ERR_DATA)) {
		*err = eb;
		st = sb;
	}
done:
	for (s = 0; s < ATTN_STAGE_COUNT; s++)
		if (extra & ATTN_STAGE_BIT(s))
			attn_matrix_free(&both.stage[s]);
	return st;
}

static enum attn_status
grad_plan(const struct attn_problem *p, size_t *bytes,
    struct attn_error *err)
{
	const unsigned extra = grad_extra(p);
	enum attn_status st;
	size_t n, s;

	if (!(p->need & ATTN_STAGES_GRAD))
		return ATTN_OK;
	if ((st = attn_stream_grad_plan(p, &n, err)) != ATTN_OK)
		return st;
	for (s = 0; s < ATTN_STAGE_COUNT; s++) {
		size_t rows, cols;

		if (!(extra & ATTN_STAGE_BIT(s)))
			continue;
		/* T x d_v or T x 1 a block */
		rows = p->B * p->H * p->T;
		cols = s == ATTN_STAGE_OUTPUT ? p->d_v : 1;
		if (attn_size_mul(rows, cols, &rows) != 0 ||
		    attn_size_mul(rows, sizeof(double), &rows) != 0 ||
		    rows > SIZE_MAX - n)
			return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
			    "the blocks of %zu queries and %zu keys are too "
			    "large to address", p->T, p->S);
		n += rows;
	}
	if (n > SIZE_MAX - *bytes)
		return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "the blocks of %zu queries and %zu keys are too large to "
		    "address", p->T, p->S);
	*bytes += n;
	return ATTN_OK;
}

static enum attn_status
stream_run(const struct attn_problem *p, struct attn_stages *out,
    struct attn_error *err)
{
	return attn_stream_run(p, attn_simd_best(p->cfg->isa), out, err);
}

const struct attn_kernel_ops attn_kernel_stream = {
	"stream", ATTN_STAGES_ALL | ATTN_STAGES_GRAD | ATTN_STAGES_DROPOUT,
	stream_plan, stream_run,
};
