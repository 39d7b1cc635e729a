/*
 * passes.c - the passes that lib/run.c runs around whichever kernel it
 * dispatches to, so that every kernel (the streaming one, the
 * emulation's, the tests' reference one) gets them without a line of its
 * own:
 *
 *	before: q, k, v = the embeddings projected by the layer (project.c)
 *	        (without one, q, k and v are the operands, copied after)
 *	        q, k, v times their fp8 descale factors, for the double
 *	        kernels only (the emulation applies them as FlashAttention
 *	        3 does: lib/emulate.c)
 *	        q_rot, k_rot = q and k rotated by position (rope.c)
 *	kernel: reads the last of these as its Q, K and V
 *	after:  grad_q and grad_k turned back to q and k (rope.c)
 *	        projected = output W_O + b_O (project.c)
 *	        grad_bias, grad_sinks reduced (grad_reduce.c)
 *	last:   lse written as the kernel under test stores it (log2,
 *	        +inf for a row with no key: attn_lse_convention)
 *
 * The kernel sees an attn_problem built on the inputs these passes make
 * (struct attn_passes' in), so its shapes, heads and positions are
 * those of q, k and v.  What the passes make is held for the whole run
 * (it is what the kernel reads), which costs (T + S)(d_k + d_v) per
 * batch, never T x S; stages asked for are then moved, not copied, into
 * struct attn_stages.
 *
 * Dims: B batches, T query rows, S keys, H query heads, G KV heads, d_k
 * and d_v per head, d_out columns of W_O.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"

#define BIT ATTN_STAGE_BIT

/* log2(e) and ln(2), as the nearest doubles (C11 names neither). */
#define LOG2_E 1.4426950408889634
#define LN_2 0.6931471805599453

unsigned
attn_stages_available(const struct attn_config *cfg,
    const struct attn_inputs *in)
{
	unsigned set = ATTN_STAGES_ALL;

	if (in->d_out.data != NULL)
		set |= ATTN_STAGES_GRAD;
	if (in->d_out.data != NULL && in->bias.data != NULL)
		set |= BIT(ATTN_STAGE_GRAD_BIAS);
	if (in->d_out.data != NULL && in->sinks.data != NULL)
		set |= BIT(ATTN_STAGE_GRAD_SINKS);
	/* q, k and v: the projections with a layer, else the operands
	 * as read (attn(1)) */
	set |= BIT(ATTN_STAGE_Q) | BIT(ATTN_STAGE_K) | BIT(ATTN_STAGE_V);
	if (in->proj.w_q.data != NULL && in->proj.w_o.data != NULL)
		set |= BIT(ATTN_STAGE_PROJECTED);
	if (cfg->rope)
		set |= BIT(ATTN_STAGE_Q_ROT) | BIT(ATTN_STAGE_K_ROT);
	if (in->bias.data != NULL)
		set |= BIT(ATTN_STAGE_BIAS);
	if (in->dropout_mask.data != NULL)
		set |= ATTN_STAGES_DROPOUT;
	return set;
}

/* A usage error for the first stage of the passes in want that cfg and
 * in do not make, saying what would make it (attn_problem_init says it
 * for a backward stage without dO). */
static enum attn_status
check_available(const struct attn_config *cfg, const struct attn_inputs *in,
    unsigned want, struct attn_error *err)
{
	const unsigned missing = want & (ATTN_STAGES_PROJ |
	    ATTN_STAGES_DROPOUT) & ~attn_stages_available(cfg, in);
	size_t n;

	for (n = 0; n < ATTN_STAGE_COUNT; n++) {
		const enum attn_stage s = attn_stage_order[n];

		if (!(missing & BIT(s)))
			continue;
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "stage %s needs %s", attn_stage_table[s].name,
		    s == ATTN_STAGE_Q_ROT || s == ATTN_STAGE_K_ROT ?
		    "RoPE (rotary position embedding)" :
		    s == ATTN_STAGE_BIAS ? "a bias: it is the bias as read" :
		    s == ATTN_STAGE_DROPPED ? "a dropout mask: it is the "
		    "weights after dropout" :
		    in->proj.w_q.data != NULL ?
		    "an output projection, W_O, in the layer" :
		    "a projection layer (W_Q, W_K, W_V, W_O) and embeddings");
	}
	return ATTN_OK;
}

unsigned
attn_kernel_want(unsigned want)
{
	/* the kernel computes the forward and backward stages, and what
	 * grad_bias and grad_sinks are reduced from after it */
	unsigned kernel_want = (want & ((1u << ATTN_STAGE_COUNT) - 1u) &
	    ~ATTN_STAGES_PROJ & ~ATTN_STAGES_REDUCE) | attn_reduce_reads(want);

	/* projected is made from output, which the kernel must then hold */
	if (want & BIT(ATTN_STAGE_PROJECTED))
		kernel_want |= BIT(ATTN_STAGE_OUTPUT);
	return kernel_want;
}

/* Whether the stages the kernel needs for want (attn_problem_init's
 * p->need, lse held always) hold a backward one. */
int
attn_split_pairs(unsigned want)
{
	return (attn_stage_closure((attn_kernel_want(want) &
	    ATTN_STAGES_EVERY) | ATTN_STAGE_BIT(ATTN_STAGE_LSE)) &
	    ATTN_STAGES_GRAD) != 0;
}

enum attn_status
attn_passes_prepare(const struct attn_config *cfg,
    const struct attn_inputs *in, unsigned want, struct attn_passes *ps,
    struct attn_problem *p, struct attn_error *err)
{
	const unsigned kernel_want = attn_kernel_want(want);
	enum attn_status st;

	memset(ps, 0, sizeof *ps);
	if ((st = check_available(cfg, in, want, err)) != ATTN_OK ||
	    (st = attn_reduce_check(in, want, err)) != ATTN_OK ||
	    (st = attn_project_check(cfg, in, err)) != ATTN_OK)
		return st;
	attn_project_shapes(in, &ps->in);
	if ((st = attn_problem_init(p, cfg, &ps->in, kernel_want, err)) !=
	    ATTN_OK)
		return st;
	return attn_rope_check(cfg, p->d_k, err);
}

/* bytes += a projection of rows x cols (attn_matrix_bytes_add). */
static enum attn_status
add_matrix(size_t *bytes, size_t rows, size_t cols, struct attn_error *err)
{
	return attn_matrix_bytes_add(bytes, rows, cols, "a projection", err);
}

enum attn_status
attn_passes_bytes(const struct attn_problem *p, const struct attn_inputs *in,
    unsigned want, size_t *bytes, struct attn_error *err)
{
	const struct attn_inputs *k = p->in;
	enum attn_status st = ATTN_OK;

	*bytes = 0;
	if (in->proj.w_q.data != NULL &&
	    ((st = add_matrix(bytes, k->q.rows, k->q.cols, err)) != ATTN_OK ||
	    (st = add_matrix(bytes, k->k.rows, k->k.cols, err)) != ATTN_OK ||
	    (st = add_matrix(bytes, k->v.rows, k->v.cols, err)) != ATTN_OK))
		return st;
	if (p->cfg->rope &&
	    ((st = add_matrix(bytes, k->q.rows, k->q.cols, err)) != ATTN_OK ||
	    (st = add_matrix(bytes, k->k.rows, k->k.cols, err)) != ATTN_OK))
		return st;
	if (in->proj.w_q.data == NULL &&
	    (((want & BIT(ATTN_STAGE_Q)) && (st = add_matrix(bytes, in->q.rows,
	    in->q.cols, err)) != ATTN_OK) ||
	    ((want & BIT(ATTN_STAGE_K)) && (st = add_matrix(bytes, in->k.rows,
	    in->k.cols, err)) != ATTN_OK) ||
	    ((want & BIT(ATTN_STAGE_V)) && (st = add_matrix(bytes, in->v.rows,
	    in->v.cols, err)) != ATTN_OK)))
		return st;
	/* the descaled copies (counted for the emulation too, which makes
	 * none: a bound) */
	if ((in->descale_q.data != NULL && (st = add_matrix(bytes, k->q.rows,
	    k->q.cols, err)) != ATTN_OK) ||
	    (in->descale_k.data != NULL && (st = add_matrix(bytes, k->k.rows,
	    k->k.cols, err)) != ATTN_OK) ||
	    (in->descale_v.data != NULL && (st = add_matrix(bytes, k->v.rows,
	    k->v.cols, err)) != ATTN_OK))
		return st;
	if (want & BIT(ATTN_STAGE_PROJECTED))
		st = add_matrix(bytes, k->q.rows, in->proj.w_o.cols, err);
	return st;
}

/* *to = a packed copy of from (a view may have a wider stride). */
static enum attn_status
copy_matrix(const struct attn_matrix *from, struct attn_matrix *to,
    struct attn_error *err)
{
	enum attn_status st;
	size_t i;

	if ((st = attn_matrix_alloc(to, from->rows, from->cols, err)) !=
	    ATTN_OK)
		return st;
	for (i = 0; i < from->rows; i++)
		memcpy(attn_at(to, i, 0), attn_at(from, i, 0),
		    from->cols * sizeof(double));
	return ATTN_OK;
}

/* RoPE's positions: query row r of the stack of q (batch r / T) at its
 * position less that of its sequence's first key, and key row r at its
 * place in its sequence, so that every sequence is rotated as it would
 * be alone (attn_row_seq; query i + offset and key j when nothing is
 * packed). */
static double
query_pos(const void *ctx, size_t r)
{
	const struct attn_problem *p = ctx;
	struct attn_seq sq;
	const size_t i = r % p->T;

	attn_row_seq(p, r / p->T, i, &sq);
	return (double)(i - sq.q0 + sq.q_pos0) - (double)sq.k_pos0;
}

static double
key_pos(const void *ctx, size_t r)
{
	const struct attn_problem *p = ctx;
	const size_t j = r % p->S;

	return (double)(j - attn_key_seq0(p, j));
}

/* Rotate q-like (keys 0) or k-like (keys 1) rows x by RoPE's positions;
 * sign -1 turns them back. */
static enum attn_status
rope_rows(const struct attn_problem *p, struct attn_matrix *x, int keys,
    double sign, struct attn_error *err)
{
	return attn_rope_rotate_at(p->cfg, x, keys ? p->G : p->H, p->d_k,
	    keys ? key_pos : query_pos, p, sign, err);
}

/* A copy of x with batch b's (rows / B rows each) head (c / d columns
 * each) scaled by f's factor of its KV head (a query head's is that of
 * its group of per heads). */
static enum attn_status
descaled_copy(const struct attn_problem *p, const struct attn_matrix *x,
    const struct attn_matrix *f, size_t d, size_t per,
    struct attn_matrix *to, struct attn_error *err)
{
	const size_t rows = x->rows / p->B;
	enum attn_status st;
	size_t i, c;

	if ((st = copy_matrix(x, to, err)) != ATTN_OK)
		return st;
	for (i = 0; i < to->rows; i++)
		for (c = 0; c < to->cols; c++)
			*attn_at(to, i, c) *= attn_descale(f, i / rows,
			    c / d / per);
	return ATTN_OK;
}

/* Q (unless q_too is 0), K and V descaled where they have factors. */
static enum attn_status
descale(const struct attn_problem *p, struct attn_passes *ps, int q_too,
    struct attn_error *err)
{
	const struct attn_inputs *in = &ps->in;
	struct attn_matrix *m = ps->descaled;
	enum attn_status st;

	if (q_too && in->descale_q.data != NULL) {
		if ((st = descaled_copy(p, &in->q, &in->descale_q, p->d_k,
		    p->H / p->G, &m[0], err)) != ATTN_OK)
			return st;
		ps->in.q = m[0];
	}
	if (in->descale_k.data != NULL) {
		if ((st = descaled_copy(p, &in->k, &in->descale_k, p->d_k, 1,
		    &m[1], err)) != ATTN_OK)
			return st;
		ps->in.k = m[1];
	}
	if (in->descale_v.data != NULL) {
		if ((st = descaled_copy(p, &in->v, &in->descale_v, p->d_v, 1,
		    &m[2], err)) != ATTN_OK)
			return st;
		ps->in.v = m[2];
	}
	return ATTN_OK;
}

/* Whether the passes make only the rows of q that this process's tasks
 * read (struct attn_passes' split). */
static int
q_by_rows(const struct attn_passes *ps, const struct attn_inputs *in)
{
	const unsigned whole = BIT(ATTN_STAGE_Q_ROT) |
	    (in->proj.w_q.data != NULL ? BIT(ATTN_STAGE_Q) : 0);

	return ps->split != NULL && ps->split->ranks > 1 &&
	    !(ps->split->rank == 0 && (ps->want & whole));
}

/* q_rows_each's walk: the problem, the caller's inputs, the passes and
 * the first failure. */
struct q_rows {
	const struct attn_problem *p;
	const struct attn_inputs *in;
	struct attn_passes *ps;
	enum attn_status st;
	struct attn_error *err;
};

/* RoPE's position of row r of a view whose first row is row r0 of q. */
struct view_pos {
	const struct attn_problem *p;
	size_t r0;
};

static double
view_query_pos(const void *ctx, size_t r)
{
	const struct view_pos *v = ctx;

	return query_pos(v->p, v->r0 + r);
}

/* attn_split_rows' each: rows i0 to i0 + rows - 1 of head n (b*H + h),
 * its d_k columns, through the passes that attn_passes_before makes of
 * all of q: projected, descaled, rotated, each into its matrix (made of
 * zeros, the rows of other processes untouched). */
static void
q_rows_each(void *arg, size_t n, size_t i0, size_t rows)
{
	struct q_rows *q = arg;
	const struct attn_problem *p = q->p;
	const struct attn_inputs *in = q->in;
	struct attn_passes *ps = q->ps;
	const struct attn_proj *w = &in->proj;
	const size_t h = n % p->H, r0 = n / p->H * p->T + i0,
	    c0 = h * p->d_k;
	const struct attn_matrix *from = &in->q;
	struct attn_matrix *to;
	struct view_pos at;
	struct attn_matrix view;
	size_t i, c;

	if (q->st != ATTN_OK)
		return;
	if (w->w_q.data != NULL) {
		if ((q->st = attn_project_part(&in->q, &w->w_q, &w->b_q,
		    attn_proj_self(in) ? "q = X W_Q + b_Q" :
		    "q = XQ W_Q + b_Q", r0, rows, c0, p->d_k,
		    &ps->made[ATTN_STAGE_Q], q->err)) != ATTN_OK)
			return;
		from = &ps->made[ATTN_STAGE_Q];
	}
	if (ps->descale && in->descale_q.data != NULL) {
		const double f = attn_descale(&in->descale_q, n / p->H,
		    h / (p->H / p->G));

		to = &ps->descaled[0];
		for (i = r0; i < r0 + rows; i++)
			for (c = c0; c < c0 + p->d_k; c++)
				*attn_at(to, i, c) = *attn_at(from, i, c) * f;
		from = to;
	}
	if (p->cfg->rope) {
		to = &ps->made[ATTN_STAGE_Q_ROT];
		for (i = r0; i < r0 + rows; i++)
			memcpy(attn_at(to, i, c0), attn_at(from, i, c0),
			    p->d_k * sizeof(double));
		view = attn_matrix_view(to, r0, rows, c0, p->d_k);
		at.p = p;
		at.r0 = r0;
		q->st = attn_rope_rotate_at(p->cfg, &view, 1, p->d_k,
		    view_query_pos, &at, 1.0, q->err);
	}
}

/* The rows of q that this process's tasks read, through the passes
 * (q_rows_each); ps->in.q then the last matrix they made. */
static enum attn_status
q_rows(const struct attn_problem *p, const struct attn_inputs *in,
    struct attn_passes *ps, struct attn_error *err)
{
	struct attn_matrix *made[3] = { NULL, NULL, NULL }, *last = NULL;
	struct q_rows q;
	size_t k;

	/* each pass's matrix, q's shape (ps->in.q's), zeros */
	if (in->proj.w_q.data != NULL)
		made[0] = &ps->made[ATTN_STAGE_Q];
	if (ps->descale && in->descale_q.data != NULL)
		made[1] = &ps->descaled[0];
	if (p->cfg->rope)
		made[2] = &ps->made[ATTN_STAGE_Q_ROT];
	for (k = 0; k < 3; k++) {
		if (made[k] == NULL)
			continue;
		last = made[k];
		if ((q.st = attn_matrix_alloc(last, ps->in.q.rows,
		    ps->in.q.cols, err)) != ATTN_OK)
			return q.st;
	}
	if (last == NULL)
		return ATTN_OK;
	q.p = p;
	q.in = in;
	q.ps = ps;
	q.err = err;
	attn_split_rows(&ps->rows, ps->split->ranks, ps->split->rank,
	    q_rows_each, &q);
	ps->in.q = *last;
	return q.st;
}

enum attn_status
attn_passes_before(const struct attn_problem *p,
    const struct attn_inputs *in, struct attn_passes *ps,
    struct attn_error *err)
{
	const struct attn_proj *w = &in->proj;
	const int self = attn_proj_self(in), by_rows = q_by_rows(ps, in);
	struct attn_matrix *m = ps->made;
	enum attn_status st;

	/* 0. With a split, the rows of q this process reads through all
	 * of the passes below */
	if (by_rows && (st = q_rows(p, in, ps, err)) != ATTN_OK)
		return st;

	/* 1. q = XQ W_Q + b_Q, k = XKV W_K + b_K, v = XKV W_V + b_V */
	if (w->w_q.data != NULL) {
		if ((!by_rows && (st = attn_project(&in->q, &w->w_q, &w->b_q,
		    self ? "q = X W_Q + b_Q" : "q = XQ W_Q + b_Q",
		    &m[ATTN_STAGE_Q], err)) != ATTN_OK) ||
		    (st = attn_project(&in->k, &w->w_k, &w->b_k, self ?
		    "k = X W_K + b_K" : "k = XKV W_K + b_K",
		    &m[ATTN_STAGE_K], err)) != ATTN_OK ||
		    (st = attn_project(&in->k, &w->w_v, &w->b_v, self ?
		    "v = X W_V + b_V" : "v = XKV W_V + b_V",
		    &m[ATTN_STAGE_V], err)) != ATTN_OK)
			return st;
		if (!by_rows)
			ps->in.q = m[ATTN_STAGE_Q];
		ps->in.k = m[ATTN_STAGE_K];
		ps->in.v = m[ATTN_STAGE_V];
	}

	/* 1b. The double kernels' Q, K and V times their descale factors
	 * (the emulation applies them itself, as its kernel does) */
	if (ps->descale && (st = descale(p, ps, !by_rows, err)) != ATTN_OK)
		return st;

	/* 2. RoPE: query i at i + offset (offset = q_pos0 - k_pos0, S - T
	 * bottom-right), key j at j, each head of d_k on its own; in a
	 * packed batch, within each sequence (query_pos, key_pos). */
	if (p->cfg->rope) {
		if ((!by_rows && ((st = copy_matrix(&ps->in.q,
		    &m[ATTN_STAGE_Q_ROT], err)) != ATTN_OK ||
		    (st = rope_rows(p, &m[ATTN_STAGE_Q_ROT], 0, 1.0, err)) !=
		    ATTN_OK)) ||
		    (st = copy_matrix(&ps->in.k, &m[ATTN_STAGE_K_ROT], err)) !=
		    ATTN_OK ||
		    (st = rope_rows(p, &m[ATTN_STAGE_K_ROT], 1, 1.0, err)) !=
		    ATTN_OK)
			return st;
		if (!by_rows)
			ps->in.q = m[ATTN_STAGE_Q_ROT];
		ps->in.k = m[ATTN_STAGE_K_ROT];
	}
	return ATTN_OK;
}

enum attn_status
attn_passes_after(const struct attn_problem *p, const struct attn_inputs *in,
    unsigned want, struct attn_passes *ps, struct attn_stages *out,
    struct attn_error *err)
{
	const struct attn_proj *w = &in->proj;
	enum attn_status st;
	size_t s;

	/* 3. The gradients the kernel gave are with respect to the q and k
	 * it read, q_rot and k_rot with RoPE: turning them back by the same
	 * angles (the rotation is orthogonal, its transpose its inverse)
	 * gives them with respect to q and k. */
	if (p->cfg->rope && (out->have & ATTN_STAGE_BIT(ATTN_STAGE_GRAD_Q)) &&
	    (st = rope_rows(p, &out->stage[ATTN_STAGE_GRAD_Q], 0, -1.0,
	    err)) != ATTN_OK)
		return st;
	if (p->cfg->rope && (out->have & ATTN_STAGE_BIT(ATTN_STAGE_GRAD_K)) &&
	    (st = rope_rows(p, &out->stage[ATTN_STAGE_GRAD_K], 1, -1.0,
	    err)) != ATTN_OK)
		return st;

	/* 4. projected = output W_O + b_O, the heads' outputs side by side */
	if (want & BIT(ATTN_STAGE_PROJECTED)) {
		if ((st = attn_project(&out->stage[ATTN_STAGE_OUTPUT], &w->w_o,
		    &w->b_o, "projected = output W_O + b_O",
		    &out->stage[ATTN_STAGE_PROJECTED], err)) != ATTN_OK)
			return st;
		out->have |= BIT(ATTN_STAGE_PROJECTED);
		if (!(want & BIT(ATTN_STAGE_OUTPUT))) {
			attn_matrix_free(&out->stage[ATTN_STAGE_OUTPUT]);
			out->have &= ~BIT(ATTN_STAGE_OUTPUT);
		}
	}
	/* 5. Without a layer, q, k and v are the operands as read: copied
	 * (packed, a view may be wider) when asked for */
	for (s = ATTN_STAGE_Q; w->w_q.data == NULL && s <= ATTN_STAGE_V; s++) {
		const struct attn_matrix *from = s == ATTN_STAGE_Q ? &in->q :
		    s == ATTN_STAGE_K ? &in->k : &in->v;

		if (!(want & BIT(s)))
			continue;
		if ((st = copy_matrix(from, &out->stage[s], err)) != ATTN_OK)
			return st;
		out->have |= BIT(s);
	}
	/* what the passes made and want holds moves into the stages */
	for (s = 0; s < ATTN_STAGE_COUNT; s++)
		if ((want & BIT(s)) && ps->made[s].data != NULL) {
			out->stage[s] = ps->made[s];
			memset(&ps->made[s], 0, sizeof ps->made[s]);
			out->have |= BIT(s);
		}
	if (w->w_q.data != NULL) {
		out->proj = 1;
		out->proj_self = attn_proj_self(in);
		out->d_xq = in->q.cols;
		out->d_xkv = in->k.cols;
		out->d_proj = w->w_o.data != NULL ? w->w_o.cols : 0;
		out->proj_biased = (w->b_q.data != NULL ? BIT(ATTN_STAGE_Q) :
		    0) | (w->b_k.data != NULL ? BIT(ATTN_STAGE_K) : 0) |
		    (w->b_v.data != NULL ? BIT(ATTN_STAGE_V) : 0) |
		    (w->b_o.data != NULL ? BIT(ATTN_STAGE_PROJECTED) : 0);
	}
	return ATTN_OK;
}

void
attn_passes_free(struct attn_passes *ps)
{
	size_t s;

	for (s = 0; s < ATTN_STAGE_COUNT; s++)
		attn_matrix_free(&ps->made[s]);
	for (s = 0; s < 3; s++)
		attn_matrix_free(&ps->descaled[s]);
}

void
attn_lse_convention(const struct attn_config *cfg, struct attn_stages *out)
{
	struct attn_matrix *lse = &out->stage[ATTN_STAGE_LSE];
	size_t i, j;
	double *x;

	out->lse_base = cfg->lse_base;
	out->lse_masked = cfg->lse_masked;
	if (lse->data == NULL || (cfg->lse_base == ATTN_LSE_E &&
	    cfg->lse_masked == ATTN_LSE_MASKED_NEG_INF))
		return;
	for (i = 0; i < lse->rows; i++)
		for (j = 0; j < lse->cols; j++) {
			x = attn_at(lse, i, j);
			if (*x == -INFINITY)
				*x = cfg->lse_masked == ATTN_LSE_MASKED_POS_INF ?
				    INFINITY : -INFINITY;
			else if (cfg->lse_base == ATTN_LSE_2)
				*x *= LOG2_E;
		}
}

double
attn_lse_natural(const struct attn_stages *stages, double x)
{
	if (x == INFINITY && stages->lse_masked == ATTN_LSE_MASKED_POS_INF)
		return -INFINITY;
	return stages->lse_base == ATTN_LSE_2 && isfinite(x) ? x * LN_2 : x;
}
