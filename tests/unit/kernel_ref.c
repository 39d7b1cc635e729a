/*
 * kernel_ref.c - the reference kernel: every stage of
 *
 *	softmax(mask(softcap(Q K^T * scale) + bias + ALiBi)) V
 *
 * (with sinks, each row's softmax denominator gains exp(sink))
 * in plain numbered passes over whole T x S blocks, simple enough to
 * check by eye, for each batch and head in turn.  It is a test oracle,
 * not a kernel of the library: the unit tests run it through
 * attn_run_kernel (lib/internal.h), with the passes and reductions
 * attn_run runs around any kernel, and hold the streaming kernel
 * (lib/kernel_stream.c, lib/kernel_stream_grad.c) to its bytes; the long
 * double reference in tests/ref is the independent check on both.  A
 * pass runs only when its stage is needed (p->need): a stage that is
 * held is written into the caller's stacks, one that is only needed into
 * scratch of one block (struct scratch below).
 *
 * One arithmetic.  Its operations, and their order for each element, are
 * the streaming kernel's, so that a stage is the same bytes whichever
 * kernel computes it (attn(1), Order of operations: a stage prints the
 * same digits whatever else a run computes or prints): every dot product
 * is a chain of fma over its columns in order, from 0; exp is attn_exp;
 * a row's sum of exp(x - m) runs over blocks of ATTN_SOFTMAX_BLOCK
 * keys, rescaled by exp(m - m') where a block raises the row's maximum
 * from m to m', as the online softmax does (lib/kernel_stream.c has the
 * equations); and output is the sum of exp(x - m') v over the same
 * blocks, rescaled likewise, divided by the row's sum at the end.  The
 * passes that need the running maximum (6 and 9) replay it block by
 * block (online_block).
 *
 * What every kernel shares (shape checks, scale, positions, the masking
 * rule, softcap, bias and ALiBi, input blocks) is in lib/problem.c,
 * lib/mask.c and internal.h.  The backward stages are the passes of
 * kernel_ref_grad.c over the forward stages of each block, run after
 * them.
 *
 * Dims: B batches, H query heads, G KV heads, T query rows, S keys, d_k
 * and d_v columns per head.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "kernel_ref.h"

/* The end of a row's block of keys that starts at j0: blocks of `block`
 * keys from k0, the first key of the row's sequence (attn_row_seq), so
 * that a packed sequence sums as it would alone; the keys before k0, all
 * masked, are a block of their own, which changes no bit. */
static size_t
block_end(size_t j0, size_t k0, size_t block, size_t S)
{
	if (j0 < k0)
		return k0;
	return S - j0 < block ? S : j0 + block;
}

/* Whether a row whose maximum is max is nan throughout: it has a nan
 * or a +inf logit (only a bias of nan or +inf brings them, which the
 * readers refuse), as the streaming kernel makes such a row. */
static int
nan_row(double max)
{
	return isnan(max) || max == INFINITY;
}

/*
 * The online softmax over row x of scaled: m is the maximum of the sink
 * and the keys so far.  online_block moves it over the keys [j0, j1) and
 * gives mu, the value the block's terms are taken against (m, or 0 while
 * m is -inf, so that exp sees -inf and gives 0, not nan), and alpha =
 * exp(m_before - mu), by which the sums so far are rescaled.  The block's
 * maximum is the first of equal values, as the vector loops have it.
 */
struct online {
	double m, mu, alpha;
};

static void
online_block(const double *x, size_t j0, size_t j1, struct online *o)
{
	double mb = -INFINITY, mn;
	size_t j;

	for (j = j0; j < j1; j++)
		if (x[j] > mb)
			mb = x[j];
	mn = mb > o->m ? mb : o->m;
	o->mu = mn == -INFINITY ? 0.0 : mn;
	o->alpha = attn_exp(o->m - o->mu);
	o->m = mn;
}

/*
 * Row i of output, FP64, for a row with keys left: the sum of exp(x -
 * mu) v over the blocks, each block's start rescaled by alpha, then
 * divided by row_sum.  o / l can overflow where output does not (o is
 * up to S times larger, with values near DBL_MAX): such a row is summed
 * again from its final weights halved, w / 2 (exact), and doubled, as
 * the streaming kernel rescues it; what still overflows lies beyond the
 * doubles, a data error (attn(1), Order of operations: an output whose
 * exact value is finite is computed finite, or refused naming where).
 */
ATTN_FMA_CLONES
static enum attn_status
output_online(const struct attn_problem *p, const struct attn_head *hd,
    const double *x, double max, double sum, double *out, size_t i,
    struct attn_error *err)
{
	const size_t S = p->S, d_v = p->d_v;
	struct attn_seq sq;
	struct online o;
	size_t j0, j1, j, c;

	attn_row_seq(p, hd->b, i, &sq);
	o.m = attn_row_max_start(hd);
	for (j0 = 0; j0 < S; j0 = j1) {
		j1 = block_end(j0, sq.k0, ATTN_SOFTMAX_BLOCK, S);
		online_block(x, j0, j1, &o);
		for (c = 0; c < d_v; c++)
			out[c] *= o.alpha;
		for (j = j0; j < j1; j++) {
			/* a weight the dropout mask drops adds 0 */
			const double e = attn_dropout_keeps(hd, i, j) ?
			    attn_exp(x[j] - o.mu) : 0.0;

			for (c = 0; c < d_v; c++)
				out[c] = fma(e, *attn_at(&hd->v, j, c), out[c]);
		}
	}
	for (c = 0; c < d_v; c++)
		out[c] = out[c] / sum * p->keep_scale;
	for (c = 0; c < d_v && isfinite(out[c]); c++)
		;
	if (c == d_v)
		return ATTN_OK;
	for (c = 0; c < d_v; c++)
		out[c] = 0.0;
	for (j = 0; j < S; j++) {
		const double w = attn_dropout_keeps(hd, i, j) ?
		    attn_exp(x[j] - max) / sum * 0.5 : 0.0;

		for (c = 0; c < d_v; c++)
			out[c] = fma(w, *attn_at(&hd->v, j, c), out[c]);
	}
	for (c = 0; c < d_v; c++) {
		out[c] = out[c] * 2.0 * p->keep_scale;
		if (!isfinite(out[c]))
			return attn_error_output(err, p, hd, i, c);
	}
	return ATTN_OK;
}

/* One batch and head: its inputs in hd, its stage blocks in m (T x S,
 * T x d_v or T x 1; data NULL when not needed).  *done collects the
 * stages computed. */
ATTN_FMA_CLONES
static enum attn_status
reference_head(const struct attn_problem *p, const struct attn_head *hd,
    struct attn_matrix *m, unsigned *done, struct attn_error *err)
{
	struct attn_matrix *scores = &m[ATTN_STAGE_SCORES];
	struct attn_matrix *scaled = &m[ATTN_STAGE_SCALED];
	struct attn_matrix *weights = &m[ATTN_STAGE_WEIGHTS];
	struct attn_matrix *dropped = &m[ATTN_STAGE_DROPPED];
	struct attn_matrix *mask = &m[ATTN_STAGE_MASK];
	struct attn_matrix *row_max = &m[ATTN_STAGE_ROW_MAX];
	struct attn_matrix *row_sum = &m[ATTN_STAGE_ROW_SUM];
	struct attn_matrix *lse = &m[ATTN_STAGE_LSE];
	struct attn_matrix *output = &m[ATTN_STAGE_OUTPUT];
	const size_t T = p->T, S = p->S;
	enum attn_status st;
	size_t i, j, c;

	/* 1. scores = Q K^T: the dot product of each query with each key,
	 * an fma at a time in the order of the columns. */
	if (attn_problem_needs(p, ATTN_STAGE_SCORES)) {
		for (i = 0; i < T; i++)
			for (j = 0; j < S; j++) {
				double dot = 0.0;

				for (c = 0; c < p->d_k; c++)
					dot = fma(*attn_at(&hd->q, i, c),
					    *attn_at(&hd->k, j, c), dot);
				if (!isfinite(dot))
					return attn_error_score(err, p, hd, i,
					    j);
				*attn_at(scores, i, j) = dot;
			}
		*done |= ATTN_STAGE_BIT(ATTN_STAGE_SCORES);
	}

	if (attn_problem_needs(p, ATTN_STAGE_SCALED)) {
		const double scale = p->scale;

		/* 2. scaled = scores * scale (a large scale can overflow),
		 * then softcap * tanh(scaled / softcap). */
		for (i = 0; i < T; i++)
			for (j = 0; j < S; j++) {
				const double x = *attn_at(scores, i, j) * scale;

				if (!isfinite(x))
					return attn_error_scaled(err, p, hd, i,
					    j);
				*attn_at(scaled, i, j) = attn_softcap(p, x);
			}

		/* 3. + bias, + ALiBi's -slope * |pos_q - pos_k|; a kept
		 * logit they take beyond the doubles is a data error. */
		for (i = 0; i < T; i++)
			for (j = 0; j < S; j++) {
				const double x = attn_add_bias(p, hd, i, j,
				    *attn_at(scaled, i, j));

				if (attn_logit_overflows(hd, i, j, x) &&
				    attn_keeps(p, hd, i, j))
					return attn_error_logit(err, p, hd, i,
					    j);
				*attn_at(scaled, i, j) = x;
			}

		/* 4. Masks: what the masking rule masks is -inf; the mask
		 * stage records what survives (a -inf bias masks too). */
		for (i = 0; i < T; i++)
			for (j = 0; j < S; j++) {
				double *x = attn_at(scaled, i, j);

				if (!attn_keeps(p, hd, i, j))
					*x = -INFINITY;
				if (mask->data != NULL)
					*attn_at(mask, i, j) =
					    *x == -INFINITY ? 0.0 : 1.0;
			}
		*done |= ATTN_STAGE_BIT(ATTN_STAGE_SCALED);
		if (mask->data != NULL)
			*done |= ATTN_STAGE_BIT(ATTN_STAGE_MASK);
	}

	/* 5. row_max, starting at -inf, or at the head's sink logit when
	 * there are sinks (the sink is one more logit of every row); the
	 * first of equal values stays.  A nan logit (only a bias brings
	 * one) makes the maximum nan, as IEEE arithmetic would, rather
	 * than being skipped by the comparison. */
	if (attn_problem_needs(p, ATTN_STAGE_ROW_MAX)) {
		for (i = 0; i < T; i++) {
			double max = attn_row_max_start(hd);

			for (j = 0; j < S; j++) {
				const double x = *attn_at(scaled, i, j);

				if (isnan(x)) {
					max = NAN;
					break;
				}
				if (x > max)
					max = x;
			}
			*attn_at(row_max, i, 0) = max;
		}
		*done |= ATTN_STAGE_BIT(ATTN_STAGE_ROW_MAX);
	}

	/* 6. row_sum = sum of exp(scaled - row_max), plus exp(sink -
	 * row_max) with sinks: subtracting the maximum stops exp
	 * overflowing.  Summed online, in blocks (see the top): the sink
	 * first, as 1 against itself, then each block against the maximum
	 * so far, what came before rescaled to it.  A row with no key left
	 * and no sink (its maximum is -inf) sums to 0; a nan row to nan. */
	if (attn_problem_needs(p, ATTN_STAGE_ROW_SUM)) {
		for (i = 0; i < T; i++) {
			const double *x = attn_at(scaled, i, 0);
			const double max = *attn_at(row_max, i, 0);
			double sum = attn_row_sum_start(hd);
			struct attn_seq sq;
			struct online o;
			size_t j0, j1;

			if (nan_row(max) || max == -INFINITY) {
				*attn_at(row_sum, i, 0) = max == -INFINITY ?
				    0.0 : NAN;
				continue;
			}
			attn_row_seq(p, hd->b, i, &sq);
			o.m = attn_row_max_start(hd);
			for (j0 = 0; j0 < S; j0 = j1) {
				j1 = block_end(j0, sq.k0, ATTN_SOFTMAX_BLOCK,
				    S);
				online_block(x, j0, j1, &o);
				sum = sum * o.alpha;
				for (j = j0; j < j1; j++)
					sum = sum + attn_exp(x[j] - o.mu);
			}
			*attn_at(row_sum, i, 0) = sum;
		}
		*done |= ATTN_STAGE_BIT(ATTN_STAGE_ROW_SUM);
	}

	/* 7. weights = exp(scaled - row_max) / row_sum.  A row with no key
	 * left (and no sink) gets what masked_rows says; a nan row is nan.
	 * With a sink, a row whose keys are all masked has weights 0. */
	if (attn_problem_needs(p, ATTN_STAGE_WEIGHTS)) {
		for (i = 0; i < T; i++) {
			const double max = *attn_at(row_max, i, 0);
			const double sum = *attn_at(row_sum, i, 0);
			struct attn_seq sq;
			double w;

			attn_row_seq(p, hd->b, i, &sq);
			w = nan_row(max) ? NAN : attn_masked_weight(p, &sq);
			if (nan_row(max) || max == -INFINITY) {
				/* over the keys of its sequence; 0 beyond */
				for (j = 0; j < S; j++)
					*attn_at(weights, i, j) = j >= sq.k0 &&
					    j < sq.k1 ? w : 0.0;
				continue;
			}
			for (j = 0; j < S; j++)
				*attn_at(weights, i, j) = attn_exp(*attn_at(
				    scaled, i, j) - max) / sum;
		}
		*done |= ATTN_STAGE_BIT(ATTN_STAGE_WEIGHTS);
	}

	/* 7b. dropped = the weights through the dropout mask, scaled by
	 * 1/(1 - p) (attn_dropped). */
	if (attn_problem_needs(p, ATTN_STAGE_DROPPED)) {
		for (i = 0; i < T; i++)
			for (j = 0; j < S; j++)
				*attn_at(dropped, i, j) = attn_dropped(p, hd, i,
				    j, *attn_at(weights, i, j));
		*done |= ATTN_STAGE_BIT(ATTN_STAGE_DROPPED);
	}

	/* 8. lse = row_max + log(row_sum), the sink's term included; -inf
	 * for a row with no key and no sink. */
	if (attn_problem_needs(p, ATTN_STAGE_LSE)) {
		for (i = 0; i < T; i++) {
			const double max = *attn_at(row_max, i, 0);

			*attn_at(lse, i, 0) = nan_row(max) ? NAN :
			    max == -INFINITY ? -INFINITY : max +
			    log(*attn_at(row_sum, i, 0));
		}
		*done |= ATTN_STAGE_BIT(ATTN_STAGE_LSE);
	}

	/* 9. output = weights V: each query's weighted mix of value rows.
	 * A row with keys left sums online (output_online); the others
	 * are the weights times V, an fma at a time in the order of the
	 * keys. */
	if (attn_problem_needs(p, ATTN_STAGE_OUTPUT)) {
		for (i = 0; i < T; i++) {
			const double max = *attn_at(row_max, i, 0);

			if (!nan_row(max) && max != -INFINITY) {
				if ((st = output_online(p, hd, attn_at(scaled,
				    i, 0), max, *attn_at(row_sum, i, 0),
				    attn_at(output, i, 0), i, err)) != ATTN_OK)
					return st;
				continue;
			}
			for (c = 0; c < p->d_v; c++) {
				double o = 0.0;

				for (j = 0; j < S; j++)
					o = fma(*attn_at(weights, i, j),
					    *attn_at(&hd->v, j, c), o);
				*attn_at(output, i, c) = o;
			}
		}
		*done |= ATTN_STAGE_BIT(ATTN_STAGE_OUTPUT);
	}
	return ATTN_OK;
}

/* ---------------------------------------------------------------- scratch */

/*
 * Scratch for the stages a run needs but does not hold: one T-row block
 * of each, for one batch and head at a time.
 */
struct scratch {
	struct attn_matrix stage[ATTN_STAGE_COUNT];	/* NULL data: unused */
};

/* The stages in scratch: needed, not held. */
static unsigned
scratch_set(const struct attn_problem *p)
{
	return p->need & ~p->hold;
}

/* The rows and columns of a block of stage s in p. */
static size_t
rows_of(const struct attn_problem *p, size_t s)
{
	return attn_stage_block_rows((enum attn_stage)s, p->T, p->S);
}

static size_t
cols_of(const struct attn_problem *p, size_t s)
{
	return attn_stage_block_cols((enum attn_stage)s, p->S, p->d_k,
	    p->d_v);
}

/* The bytes of one struct scratch for p; ATTN_ERR_NOMEM when the size
 * overflows. */
static enum attn_status
scratch_bytes(const struct attn_problem *p, size_t *bytes,
    struct attn_error *err)
{
	size_t s, n;

	*bytes = 0;
	for (s = 0; s < ATTN_STAGE_COUNT; s++) {
		if (!(scratch_set(p) & ATTN_STAGE_BIT(s)))
			continue;
		if (attn_size_mul(rows_of(p, s), cols_of(p, s), &n) != 0 ||
		    attn_size_mul(n, sizeof(double), &n) != 0 ||
		    *bytes > SIZE_MAX - (n = attn_mem_cost(n)))
			return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
			    "a block of %zu queries and %zu keys is too large "
			    "to address", p->T, p->S);
		*bytes += n;
	}
	return ATTN_OK;
}

static void
scratch_free(struct scratch *sc)
{
	size_t s;

	for (s = 0; s < ATTN_STAGE_COUNT; s++)
		attn_matrix_free(&sc->stage[s]);
}

static enum attn_status
scratch_alloc(const struct attn_problem *p, struct scratch *sc,
    struct attn_error *err)
{
	enum attn_status st;
	size_t s;

	memset(sc, 0, sizeof *sc);
	for (s = 0; s < ATTN_STAGE_COUNT; s++) {
		if (!(scratch_set(p) & ATTN_STAGE_BIT(s)))
			continue;
		if ((st = attn_matrix_alloc(&sc->stage[s], rows_of(p, s),
		    cols_of(p, s), err)) != ATTN_OK) {
			scratch_free(sc);
			return st;
		}
	}
	return ATTN_OK;
}

/*
 * The T-row block of every stage p needs, for head hd: a view into out's
 * stack for a held stage, into sc for the others, data NULL for stages
 * not needed.  Scratch output is zeroed, as a held output starts.
 */
static void
head_stages(const struct attn_problem *p, const struct attn_stages *out,
    const struct scratch *sc, const struct attn_head *hd,
    struct attn_matrix m[ATTN_STAGE_COUNT])
{
	size_t s, i;

	for (s = 0; s < ATTN_STAGE_COUNT; s++) {
		const unsigned bit = ATTN_STAGE_BIT(s);

		memset(&m[s], 0, sizeof m[s]);
		if (p->hold & bit) {
			m[s] = attn_stage_block(out, (enum attn_stage)s, hd->b,
			    hd->h);
		} else if (p->need & bit) {
			m[s] = sc->stage[s];
			/* A block is written whole by every pass but the
			 * output's sums, which start from 0. */
			if (s == ATTN_STAGE_OUTPUT)
				for (i = 0; i < m[s].rows; i++)
					memset(attn_at(&m[s], i, 0), 0,
					    m[s].cols * sizeof(double));
		}
	}
}

/* ---------------------------------------------------------------- the run */

static enum attn_status
reference_plan(const struct attn_problem *p, size_t *bytes,
    struct attn_error *err)
{
	enum attn_status st;
	size_t acc;

	if ((st = scratch_bytes(p, bytes, err)) != ATTN_OK)
		return st;
	/* the backward pass's accumulators */
	acc = (p->need & ATTN_STAGES_GRAD) ? (p->d_k > p->d_v ? p->d_k :
	    p->d_v) * sizeof(double) : 0;
	if (*bytes > SIZE_MAX - acc)
		return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "a block of %zu queries and %zu keys is too large to "
		    "address", p->T, p->S);
	*bytes += acc;
	return ATTN_OK;
}

/* Report block n (from 0) of the B x H blocks of p done, as `what`, to
 * p->cfg->progress when it is set. */
static void
progress_block(const struct attn_problem *p, const char *what, size_t n)
{
	if (p->cfg->progress != NULL)
		p->cfg->progress(p->cfg->progress_arg, what, n + 1,
		    p->B * p->H);
}

/* Every batch and head of p in turn: p->need into out, whose p->hold
 * stages are allocated and zeroed, the backward stages of p->need too
 * (kernel_ref_grad_head). */
static enum attn_status
reference_run(const struct attn_problem *p, struct attn_stages *out,
    struct attn_error *err)
{
	struct attn_matrix m[ATTN_STAGE_COUNT];
	struct scratch sc;
	struct attn_head hd;
	enum attn_status st;
	double *acc = NULL;
	size_t b, h;

	if ((p->need & ATTN_STAGES_GRAD) && (acc = attn_alloc_array(
	    p->d_k > p->d_v ? p->d_k : p->d_v, sizeof *acc)) == NULL)
		return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "out of memory");
	if ((st = scratch_alloc(p, &sc, err)) != ATTN_OK) {
		free(acc);
		return st;
	}
	for (b = 0; b < p->B && st == ATTN_OK; b++)
		for (h = 0; h < p->H && st == ATTN_OK; h++) {
			attn_problem_head(p, b, h, &hd);
			head_stages(p, out, &sc, &hd, m);
			st = reference_head(p, &hd, m, &out->computed, err);
			if (st == ATTN_OK && (p->need & ATTN_STAGES_GRAD))
				st = kernel_ref_grad_head(p, &hd, m, acc,
				    &out->computed, err);
			progress_block(p, p->need & ATTN_STAGES_GRAD ?
			    "heads, forward and backward" : "heads",
			    b * p->H + h);
		}
	scratch_free(&sc);
	free(acc);
	return st;
}

const struct attn_kernel_ops kernel_ref = {
	"reference", ATTN_STAGES_EVERY, reference_plan, reference_run,
};
