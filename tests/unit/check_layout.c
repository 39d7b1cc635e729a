/*
 * check_layout.c - lib/layout.c: the shape of every stage in each layout
 * (dims, axes and the steps that walk them), attn_stage_flatten in the
 * order those dims say, the place of an element, a shape's blocks; 4-D
 * inputs folded into stacks; masks and biases broadcast as NumPy does.
 *
 * The numbers of a layout are checked against the stacks the kernels
 * wrote, indexed by hand here as PyTorch (bhsd) and FlashAttention (bshd)
 * index their tensors, so that a wrong step cannot agree with itself.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "suites.h"
#include "testutil.h"

#define NCASES(t) ((int)(sizeof (t) / sizeof (t)[0]))

/* A problem with every dim different: B batches, H heads sharing G KV
 * heads, T queries, S keys, d_k and d_v a head. */
enum { B = 2, H = 4, G = 2, T = 3, S = 5, D_K = 2, D_V = 3 };

/* Run the problem in layout l, keeping every forward stage, and with
 * grad the backward ones too. */
static void
run_layout_stages(enum attn_layout l, int grad, struct attn_stages *st)
{
	struct attn_matrix q, k, v, d_out = { 0, 0, 0, NULL };
	struct attn_inputs in;
	struct attn_config cfg;
	struct ref_rng rng;

	ref_rng_seed(&rng, 77);
	q = matrix_random(&rng, B * T, H * D_K, -1, 1);
	k = matrix_random(&rng, B * S, G * D_K, -1, 1);
	v = matrix_random(&rng, B * S, G * D_V, -1, 1);
	attn_config_init(&cfg);
	cfg.heads = H;
	cfg.kv_heads = G;
	cfg.layout = l;
	memset(&in, 0, sizeof in);
	in.batches = B;
	in.q = q;
	in.k = k;
	in.v = v;
	if (grad)
		in.d_out = d_out = matrix_random(&rng, B * T, H * D_V, -1, 1);
	run_ok(KERNEL_REFERENCE, &cfg, &in, ATTN_STAGES_ALL |
	    (grad ? ATTN_STAGES_GRAD : 0), st);
	attn_matrix_free(&q);
	attn_matrix_free(&k);
	attn_matrix_free(&v);
	attn_matrix_free(&d_out);
}

static void
run_layout(enum attn_layout l, struct attn_stages *st)
{
	run_layout_stages(l, 0, st);
}

/* ---------------------------------------------------------------- shapes */

static const struct {
	enum attn_layout layout;
	enum attn_stage s;
	size_t ndim, dim[4];
	enum attn_axis axis[4];
	size_t blocks, rows, cols;
} shapes[] = {
	{ ATTN_LAYOUT_NONE, ATTN_STAGE_WEIGHTS, 4, { B, H, T, S },
	    { ATTN_AXIS_BATCH, ATTN_AXIS_HEAD, ATTN_AXIS_QUERY, ATTN_AXIS_KEY },
	    B * H, T, S },
	{ ATTN_LAYOUT_NONE, ATTN_STAGE_OUTPUT, 3, { B, T, H * D_V },
	    { ATTN_AXIS_BATCH, ATTN_AXIS_QUERY, ATTN_AXIS_VALUE }, B, T,
	    H * D_V },
	{ ATTN_LAYOUT_BHSD, ATTN_STAGE_WEIGHTS, 4, { B, H, T, S },
	    { ATTN_AXIS_BATCH, ATTN_AXIS_HEAD, ATTN_AXIS_QUERY, ATTN_AXIS_KEY },
	    B * H, T, S },
	{ ATTN_LAYOUT_BHSD, ATTN_STAGE_LSE, 4, { B, H, T, 1 },
	    { ATTN_AXIS_BATCH, ATTN_AXIS_HEAD, ATTN_AXIS_QUERY, ATTN_AXIS_ONE },
	    B * H, T, 1 },
	{ ATTN_LAYOUT_BHSD, ATTN_STAGE_OUTPUT, 4, { B, H, T, D_V },
	    { ATTN_AXIS_BATCH, ATTN_AXIS_HEAD, ATTN_AXIS_QUERY,
	    ATTN_AXIS_VALUE }, B * H, T, D_V },
	/* Logits stay B x H x T x S in bshd, as FlashAttention's lse and
	 * JAX's logits are; only what is shaped like Q follows it. */
	{ ATTN_LAYOUT_BSHD, ATTN_STAGE_SCORES, 4, { B, H, T, S },
	    { ATTN_AXIS_BATCH, ATTN_AXIS_HEAD, ATTN_AXIS_QUERY, ATTN_AXIS_KEY },
	    B * H, T, S },
	{ ATTN_LAYOUT_BSHD, ATTN_STAGE_OUTPUT, 4, { B, T, H, D_V },
	    { ATTN_AXIS_BATCH, ATTN_AXIS_QUERY, ATTN_AXIS_HEAD,
	    ATTN_AXIS_VALUE }, B, T, H * D_V },
};

START_TEST(stage_shapes_follow_the_layout)
{
	struct attn_stages st;
	struct attn_shape sh;
	size_t d;

	run_layout(shapes[_i].layout, &st);
	attn_stage_shape(&st, shapes[_i].s, &sh);
	ck_assert_uint_eq(sh.ndim, shapes[_i].ndim);
	for (d = 0; d < sh.ndim; d++) {
		ck_assert_uint_eq(sh.dim[d], shapes[_i].dim[d]);
		ck_assert_int_eq(sh.axis[d], shapes[_i].axis[d]);
	}
	ck_assert_uint_eq(sh.blocks, shapes[_i].blocks);
	ck_assert_uint_eq(sh.rows, shapes[_i].rows);
	ck_assert_uint_eq(sh.cols, shapes[_i].cols);
	ck_assert_uint_eq(attn_shape_count(&sh), B * T * (shapes[_i].s ==
	    ATTN_STAGE_OUTPUT ? H * D_V : H * shapes[_i].dim[3]));
	attn_stages_free(&st);
}
END_TEST

/* A layout with a batch and a head of one still writes every level, as
 * the 4-D inputs had them; without one, levels of one are left out. */
START_TEST(a_layout_keeps_levels_of_one)
{
	static const double one[] = { 1, 0 };
	struct attn_matrix q = matrix_from(1, 2, one);
	struct attn_config cfg;
	struct attn_inputs in;
	struct attn_stages st;
	struct attn_shape sh;

	attn_config_init(&cfg);
	cfg.layout = _i == 0 ? ATTN_LAYOUT_NONE : ATTN_LAYOUT_BSHD;
	memset(&in, 0, sizeof in);
	in.batches = 1;
	in.q = in.k = in.v = q;
	run_ok(KERNEL_REFERENCE, &cfg, &in, ATTN_STAGES_ALL, &st);
	attn_stage_shape(&st, ATTN_STAGE_OUTPUT, &sh);
	ck_assert_uint_eq(sh.ndim, _i == 0 ? 2 : 4);
	ck_assert_uint_eq(attn_shape_count(&sh), 2);
	attn_stages_free(&st);
	attn_matrix_free(&q);
}
END_TEST

/* ---------------------------------------------------------------- order */

/* Element (b, h, i, c) of output in each layout, flattened, is element
 * (b*T + i, h*d_v + c) of the stack: bhsd is [b][h][i][c], bshd
 * [b][i][h][c]. */
START_TEST(flatten_walks_output_in_the_order_of_the_layout)
{
	const enum attn_layout l = _i == 0 ? ATTN_LAYOUT_BHSD : _i == 1 ?
	    ATTN_LAYOUT_BSHD : ATTN_LAYOUT_NONE;
	struct attn_stages st;
	size_t b, h, i, c, n;
	double *flat = malloc(B * H * T * D_V * sizeof *flat);

	ck_assert_ptr_nonnull(flat);
	run_layout(l, &st);
	attn_stage_flatten(&st, ATTN_STAGE_OUTPUT, flat);
	for (b = 0; b < B; b++)
		for (h = 0; h < H; h++)
			for (i = 0; i < T; i++)
				for (c = 0; c < D_V; c++) {
					n = l == ATTN_LAYOUT_BHSD ?
					    ((b * H + h) * T + i) * D_V + c :
					    ((b * T + i) * H + h) * D_V + c;
					ck_assert(flat[n] == stage_at(&st,
					    ATTN_STAGE_OUTPUT, b * T + i,
					    h * D_V + c));
				}
	free(flat);
	attn_stages_free(&st);
}
END_TEST

START_TEST(flatten_walks_per_head_stages_batch_head_row)
{
	struct attn_stages st;
	size_t b, h, i, j;
	double *flat = malloc(B * H * T * S * sizeof *flat);

	ck_assert_ptr_nonnull(flat);
	run_layout(_i == 0 ? ATTN_LAYOUT_BSHD : ATTN_LAYOUT_NONE, &st);
	attn_stage_flatten(&st, ATTN_STAGE_WEIGHTS, flat);
	for (b = 0; b < B; b++)
		for (h = 0; h < H; h++)
			for (i = 0; i < T; i++)
				for (j = 0; j < S; j++)
					ck_assert(flat[((b * H + h) * T + i) *
					    S + j] == stage_at(&st,
					    ATTN_STAGE_WEIGHTS,
					    (b * H + h) * T + i, j));
	free(flat);
	attn_stages_free(&st);
}
END_TEST

/* The place of element n of output: its batch, head, row and column,
 * whichever way the heads are laid out. */
START_TEST(where_names_batch_head_row_and_column)
{
	const enum attn_layout l = _i == 0 ? ATTN_LAYOUT_BHSD : _i == 1 ?
	    ATTN_LAYOUT_BSHD : ATTN_LAYOUT_NONE;
	/* batch 1, head 2, row 1, column 2 */
	const size_t n = l == ATTN_LAYOUT_BHSD ?
	    ((1 * H + 2) * T + 1) * D_V + 2 : ((1 * T + 1) * H + 2) * D_V + 2;
	struct attn_stages st;
	struct attn_where w;

	run_layout(l, &st);
	attn_stage_where(&st, ATTN_STAGE_OUTPUT, n, &w);
	ck_assert_uint_eq(w.batch, 1);
	ck_assert_uint_eq(w.head, 2);
	ck_assert_uint_eq(w.row, 1);
	ck_assert_uint_eq(w.col, 2);
	attn_stage_where(&st, ATTN_STAGE_WEIGHTS, ((1 * H + 3) * T + 2) * S +
	    4, &w);
	ck_assert(w.batch == 1 && w.head == 3 && w.row == 2 && w.col == 4);
	attn_stages_free(&st);
}
END_TEST

START_TEST(a_block_of_bhsd_output_is_one_head)
{
	struct attn_stages st;
	struct attn_matrix m;
	size_t i, c;

	run_layout(ATTN_LAYOUT_BHSD, &st);
	/* block 5: batch 1, head 1 */
	m = attn_shape_block(&st, ATTN_STAGE_OUTPUT, 5);
	ck_assert_uint_eq(m.rows, T);
	ck_assert_uint_eq(m.cols, D_V);
	for (i = 0; i < T; i++)
		for (c = 0; c < D_V; c++)
			ck_assert(*attn_at(&m, i, c) == stage_at(&st,
			    ATTN_STAGE_OUTPUT, T + i, D_V + c));
	attn_stages_free(&st);
}
END_TEST

/* Element (i, j) of every block of a stage, in every layout, is the
 * element (row, col) of the (batch, head) that attn_shape_block_where
 * names, as attn_stage_block finds it: what the worked arithmetic and
 * the column labels read, whose blocks are heads in bhsd and batches
 * (heads side by side) otherwise. */
START_TEST(block_where_names_the_head_of_each_column)
{
	static const enum attn_stage stages[] = { ATTN_STAGE_WEIGHTS,
	    ATTN_STAGE_LSE, ATTN_STAGE_OUTPUT, ATTN_STAGE_GRAD_Q,
	    ATTN_STAGE_GRAD_K, ATTN_STAGE_GRAD_V };
	const enum attn_layout l = _i == 0 ? ATTN_LAYOUT_BHSD : _i == 1 ?
	    ATTN_LAYOUT_BSHD : ATTN_LAYOUT_NONE;
	struct attn_stages st;
	struct attn_shape sh;
	struct attn_matrix m, at;
	struct attn_where w;
	size_t k, n, i, j, h, seen;

	run_layout_stages(l, 1, &st);
	for (k = 0; k < sizeof stages / sizeof stages[0]; k++) {
		const enum attn_stage s = stages[k];

		attn_stage_shape(&st, s, &sh);
		seen = 0;
		for (n = 0; n < sh.blocks; n++) {
			m = attn_shape_block(&st, s, n);
			for (i = 0; i < m.rows; i++)
				for (j = 0; j < m.cols; j++) {
					attn_shape_block_where(&st, s, n, i, j,
					    &w);
					/* a query head that reads KV head
					 * w.head, for the stages of K and V */
					h = attn_stage_table[s].kv ?
					    w.head * (H / G) : w.head;
					ck_assert_uint_lt(w.batch, B);
					ck_assert_uint_lt(h, H);
					at = attn_stage_block(&st, s, w.batch,
					    h);
					ck_assert_uint_lt(w.col, at.cols);
					ck_assert(*attn_at(&m, i, j) ==
					    *attn_at(&at, w.row, w.col));
					seen |= (size_t)1 << w.head;
				}
		}
		/* every head of the stage is some block's */
		ck_assert_uint_eq(seen, ((size_t)1 << (attn_stage_table[s].kv ?
		    G : H)) - 1);
	}
	attn_stages_free(&st);
}
END_TEST

/* attn_stage_where_run: every element of a run of that many, from any
 * multiple of it, has the batch and head of the run's first, for every
 * stage held (the backward's too) in every layout; and the run is more
 * than one where heads are not side by side one column each. */
START_TEST(where_run_keeps_batch_and_head)
{
	const enum attn_layout l = _i == 0 ? ATTN_LAYOUT_BHSD : _i == 1 ?
	    ATTN_LAYOUT_BSHD : ATTN_LAYOUT_NONE;
	struct attn_stages st;
	struct attn_shape sh;
	struct attn_where w0 = { 0, 0, 0, 0 }, w;
	size_t s, n, k, run, held = 0;

	run_layout_stages(l, 1, &st);
	for (s = 0; s < ATTN_STAGE_COUNT; s++) {
		if (st.stage[s].data == NULL)
			continue;
		held++;
		attn_stage_shape(&st, (enum attn_stage)s, &sh);
		n = attn_shape_count(&sh);
		run = attn_stage_where_run(&st, (enum attn_stage)s);
		ck_assert_uint_ge(run, 1);
		ck_assert_uint_eq(n % run, 0);
		if (s == ATTN_STAGE_OUTPUT || s == ATTN_STAGE_WEIGHTS)
			ck_assert_uint_ge(run, l == ATTN_LAYOUT_NONE &&
			    s == ATTN_STAGE_OUTPUT ? D_V : T);
		for (k = 0; k < n; k++) {
			attn_stage_where(&st, (enum attn_stage)s, k, &w);
			if (k % run == 0)
				w0 = w;
			ck_assert_msg(w.batch == w0.batch &&
			    w.head == w0.head, "%s: element %zu of a run of "
			    "%zu", attn_stage_table[s].name, k, run);
		}
	}
	ck_assert_uint_ge(held, 8);
	attn_stages_free(&st);
}
END_TEST

/* attn_stage_c_runs' pieces, gathered. */
struct runs_seen {
	double *at;		/* where the next goes */
	size_t runs;
	const double *lo, *hi;	/* the stage's data */
	int outside;
};

static void
see_run(void *arg, const double *x, size_t n)
{
	struct runs_seen *r = arg;

	r->outside |= x < r->lo || x + n > r->hi;
	memcpy(r->at, x, n * sizeof *x);
	r->at += n;
	r->runs++;
}

/* Every held stage in every layout as runs where it lies: one run when
 * attn_stage_c_order has it, else a row of the last dim a run, inside
 * the stage's data, in the order flatten gives (whose tests above check
 * it against the layout); NULL counts them alone. */
START_TEST(c_runs_are_the_flattened_stage_where_it_lies)
{
	const enum attn_layout l = _i == 0 ? ATTN_LAYOUT_BHSD : _i == 1 ?
	    ATTN_LAYOUT_BSHD : ATTN_LAYOUT_NONE;
	struct attn_stages st;
	struct attn_shape sh;
	size_t s, n, runs, split = 0;

	run_layout_stages(l, 1, &st);
	for (s = 0; s < ATTN_STAGE_COUNT; s++) {
		const enum attn_stage e = (enum attn_stage)s;
		const struct attn_matrix *m = &st.stage[s];
		struct runs_seen r;
		double *flat, *got;

		if (m->data == NULL)
			continue;
		attn_stage_shape(&st, e, &sh);
		n = attn_shape_count(&sh);
		runs = attn_stage_c_runs(&st, e, NULL, NULL);
		ck_assert_uint_eq(runs, attn_stage_c_order(&st, e) != NULL ?
		    1 : n / sh.dim[sh.ndim - 1]);
		split += runs > 1;
		flat = malloc(n * sizeof *flat);
		got = malloc(n * sizeof *got);
		ck_assert(flat != NULL && got != NULL);
		attn_stage_flatten(&st, e, flat);
		memset(&r, 0, sizeof r);
		r.at = got;
		r.lo = m->data;
		r.hi = m->data + (m->rows - 1) * m->stride + m->cols;
		ck_assert_uint_eq(attn_stage_c_runs(&st, e, see_run, &r), runs);
		ck_assert_uint_eq(r.runs, runs);
		ck_assert_uint_eq((size_t)(r.at - got), n);
		ck_assert_msg(!r.outside, "%s: a run outside the stage",
		    attn_stage_table[s].name);
		ck_assert_msg(memcmp(flat, got, n * sizeof *got) == 0,
		    "%s: the runs are not the flattened stage",
		    attn_stage_table[s].name);
		free(flat);
		free(got);
	}
	/* bhsd's output (heads side by side in the stack) lies apart */
	if (l == ATTN_LAYOUT_BHSD)
		ck_assert_uint_ge(split, 1);
	attn_stages_free(&st);
}
END_TEST

/* ---------------------------------------------------------------- inputs */

/* A 2 x 3 x 2 x 2 array, its numbers its own C-order index. */
static void
array_of(struct attn_array *a, size_t d0, size_t d1, size_t d2, size_t d3)
{
	size_t i, n = d0 * d1 * d2 * d3;

	memset(a, 0, sizeof *a);
	a->ndim = 4;
	a->shape[0] = d0;
	a->shape[1] = d1;
	a->shape[2] = d2;
	a->shape[3] = d3;
	a->data = malloc(n * sizeof *a->data);
	ck_assert_ptr_nonnull(a->data);
	for (i = 0; i < n; i++)
		a->data[i] = (double)i;
}

/* bhsd: element (b, h, s, d) lands at row b*S + s, column h*D + d;
 * bshd: the numbers stay where they are. */
START_TEST(fold_heads_puts_each_head_in_its_columns)
{
	const enum attn_layout l = _i == 0 ? ATTN_LAYOUT_BHSD :
	    ATTN_LAYOUT_BSHD;
	const size_t b0 = 2, h0 = 3, s0 = 4, d0 = 2;
	struct attn_array a;
	struct attn_error err;
	size_t heads = 0, b, h, s, d;

	if (l == ATTN_LAYOUT_BHSD)
		array_of(&a, b0, h0, s0, d0);
	else
		array_of(&a, b0, s0, h0, d0);
	ck_assert_int_eq(attn_array_fold_heads(&a, l, &heads, &err), ATTN_OK);
	ck_assert_uint_eq(heads, h0);
	ck_assert_uint_eq(a.ndim, 3);
	ck_assert(a.shape[0] == b0 && a.shape[1] == s0 &&
	    a.shape[2] == h0 * d0);
	for (b = 0; b < b0; b++)
		for (h = 0; h < h0; h++)
			for (s = 0; s < s0; s++)
				for (d = 0; d < d0; d++)
					ck_assert(a.data[(b * s0 + s) * h0 * d0 +
					    h * d0 + d] == (double)(l ==
					    ATTN_LAYOUT_BHSD ? ((b * h0 + h) *
					    s0 + s) * d0 + d : ((b * s0 + s) *
					    h0 + h) * d0 + d));
	attn_array_free(&a);
}
END_TEST

/* Masks and biases as PyTorch and JAX broadcast them to B x H x T x S,
 * here 2 x 3 x 4 x 5: what stack comes out (each block keeps its rows
 * and columns of one, so a key-padding mask stays S numbers), and where
 * element (b, h, i, j) of the broadcast finds its number through the
 * views the kernels read.  A 2-D array is its 4-D dims without the first
 * two (t x s), a 1-D one a row, a 3-D one without the head (b x t x s,
 * per batch as attn(1) has it) or, when Q, K and V were 4-D (four_d),
 * without the batch (h x t x s, as NumPy aligns it). */
static const struct {
	size_t rank;		/* of the array given */
	size_t dims[4];		/* as 4-D */
	size_t ndim, shape[4];	/* the stack */
	int four_d;		/* the inputs were 4-D */
} broadcasts[] = {
	{ 3, { 1, 3, 4, 5 }, 4, { 2, 3, 4, 5 }, 1 },	/* H x T x S */
	{ 3, { 1, 3, 1, 5 }, 4, { 2, 3, 1, 5 }, 1 },	/* H x 1 x S */
	{ 3, { 1, 1, 4, 5 }, 2, { 4, 5 }, 1 },		/* 1 x T x S */
	{ 4, { 2, 1, 4, 5 }, 3, { 2, 4, 5 }, 1 },	/* per batch, 4-D */
	{ 2, { 1, 1, 1, 5 }, 2, { 1, 5 }, 1 },
	{ 4, { 1, 1, 4, 5 }, 2, { 4, 5 }, 0 },		/* one block */
	{ 4, { 2, 1, 1, 5 }, 3, { 2, 1, 5 }, 0 },		/* key padding */
	{ 4, { 1, 1, 4, 1 }, 2, { 4, 1 }, 0 },		/* a column */
	{ 4, { 2, 1, 4, 5 }, 3, { 2, 4, 5 }, 0 },		/* per batch */
	{ 4, { 1, 3, 4, 5 }, 4, { 2, 3, 4, 5 }, 0 },	/* per head */
	{ 4, { 1, 3, 1, 5 }, 4, { 2, 3, 1, 5 }, 0 },
	{ 4, { 2, 3, 4, 5 }, 4, { 2, 3, 4, 5 }, 0 },	/* every block */
	{ 4, { 2, 3, 1, 5 }, 4, { 2, 3, 1, 5 }, 0 },
	{ 4, { 1, 1, 1, 1 }, 2, { 1, 1 }, 0 },		/* a scalar */
	{ 2, { 1, 1, 4, 5 }, 2, { 4, 5 }, 0 },		/* T x S */
	{ 2, { 1, 1, 1, 5 }, 2, { 1, 5 }, 0 },		/* key padding 1 x S */
	{ 2, { 1, 1, 4, 1 }, 2, { 4, 1 }, 0 },		/* T x 1 */
	{ 2, { 1, 1, 1, 1 }, 2, { 1, 1 }, 0 },
	{ 3, { 2, 1, 4, 5 }, 3, { 2, 4, 5 }, 0 },		/* B x T x S */
	{ 3, { 2, 1, 1, 5 }, 3, { 2, 1, 5 }, 0 },		/* B x 1 x S */
	{ 3, { 2, 1, 4, 1 }, 3, { 2, 4, 1 }, 0 },		/* B x T x 1 */
	{ 3, { 1, 1, 4, 5 }, 2, { 4, 5 }, 0 },		/* 1 x T x S */
	{ 3, { 1, 1, 1, 5 }, 2, { 1, 5 }, 0 },
	{ 1, { 1, 1, 1, 5 }, 2, { 1, 5 }, 0 },		/* a row, 1-D */
};

START_TEST(masks_broadcast_as_numpy_does)
{
	const size_t *dm = broadcasts[_i].dims;
	struct attn_array a;
	struct attn_error err;
	struct attn_matrix q, k, v;
	struct attn_inputs in;
	struct attn_stages st;
	struct attn_head_inputs hi;
	size_t b, h, i, j, n, src, count = 1;

	array_of(&a, dm[0], dm[1], dm[2], dm[3]);
	/* the same numbers, fewer dims */
	a.ndim = broadcasts[_i].rank;
	if (a.ndim == 3) {
		a.shape[0] = dm[0] * dm[1];	/* one of them is 1 */
		a.shape[1] = dm[2];
		a.shape[2] = dm[3];
	} else if (a.ndim == 2) {
		a.shape[0] = dm[2];
		a.shape[1] = dm[3];
	} else if (a.ndim == 1) {
		a.shape[0] = dm[3];
	}
	for (n = a.ndim; n < 4; n++)
		a.shape[n] = 0;
	ck_assert_int_eq(attn_array_broadcast(&a, 2, 3, 4, 5,
	    broadcasts[_i].four_d, &err), ATTN_OK);
	ck_assert_uint_eq(a.ndim, broadcasts[_i].ndim);
	for (n = 0; n < a.ndim; n++) {
		ck_assert_uint_eq(a.shape[n], broadcasts[_i].shape[n]);
		count *= a.shape[n];
	}
	/* The views of batch b, head h as the kernels read them: 2 batches
	 * of 4 queries and 5 keys, 3 heads of d_k = d_v = 1. */
	ck_assert_int_eq(attn_matrix_alloc(&q, 8, 3, NULL), ATTN_OK);
	ck_assert_int_eq(attn_matrix_alloc(&k, 10, 3, NULL), ATTN_OK);
	ck_assert_int_eq(attn_matrix_alloc(&v, 10, 3, NULL), ATTN_OK);
	memset(&in, 0, sizeof in);
	memset(&st, 0, sizeof st);
	in.batches = st.batches = 2;
	in.q = q;
	in.k = k;
	in.v = v;
	in.mask = attn_array_matrix(&a);
	ck_assert_uint_eq(in.mask.rows * in.mask.cols, count);
	in.mask_blocks = a.ndim == 2 ? 1 : a.ndim == 3 ? 2 : 6;
	ck_assert(attn_input_blocks_fit(&in.mask, in.mask_blocks, 2, 3, 4, 5));
	st.heads = st.kv_heads = 3;
	st.T = 4;
	st.S = 5;
	st.d_k = st.d_v = 1;
	for (b = 0; b < 2; b++)
		for (h = 0; h < 3; h++) {
			attn_head_inputs(&st, &in, b, h, &hi);
			ck_assert_uint_eq(hi.mask.rows, 4);
			for (i = 0; i < 4; i++)
				for (j = 0; j < 5; j++) {
					src = (((dm[0] > 1 ? b : 0) * dm[1] +
					    (dm[1] > 1 ? h : 0)) * dm[2] +
					    (dm[2] > 1 ? i : 0)) * dm[3] +
					    (dm[3] > 1 ? j : 0);
					ck_assert(attn_input_at(&hi.mask, i,
					    j) == (double)src);
				}
		}
	attn_matrix_free(&q);
	attn_matrix_free(&k);
	attn_matrix_free(&v);
	attn_array_free(&a);
}
END_TEST

/* Shapes that do not broadcast to B x H x T x S, by their rank: the
 * message names them as given.  A 3-D one is per batch, so its first dim
 * is B's, not H's as NumPy would line it up (the message says how to
 * write a block per head), unless Q, K and V were 4-D (four_d): then it
 * is H's, and a first dim that is B (as well as H, or alone) is refused
 * with both readings and the 4-D shapes to write instead. */
static const struct {
	size_t B, H;
	int four_d;
	size_t rank, dims[4];
	const char *msg;
} refused[] = {
	{ 2, 3, 0, 4, { 1, 2, 4, 5 }, "shape mismatch: 1x2x4x5 does not "
	    "broadcast to the scores' B x H x T x S = 2x3x4x5: each dim must "
	    "be 1 or the scores' own, as NumPy broadcasts" },
	{ 2, 3, 0, 3, { 3, 4, 5 }, "shape mismatch: 3x4x5 does not fit the "
	    "scores' B x T x S = 2x4x5: a 3-D mask or bias is a block per "
	    "batch, each dim 1 or the scores' own; for a block per head write "
	    "it 4-D, 1x3x4x5 (1 x H x T x S)" },
	{ 2, 3, 0, 3, { 4, 4, 5 }, "shape mismatch: 4x4x5 does not fit the "
	    "scores' B x T x S = 2x4x5: a 3-D mask or bias is a block per "
	    "batch, each dim 1 or the scores' own" },
	{ 2, 3, 0, 2, { 2, 5 }, "shape mismatch: 2x5 does not broadcast to "
	    "the scores' T x S = 4x5: each dim must be 1 or the scores' own, "
	    "as NumPy broadcasts" },
	{ 2, 2, 1, 3, { 2, 4, 5 }, "2x4x5 is ambiguous with 4-D inputs "
	    "(B x H x T x S = 2x2x4x5): NumPy and PyTorch read it as "
	    "H x T x S, attn's 3-D rule as B x T x S; write 1x2x4x5 "
	    "(1 x H x T x S) or 2x1x4x5 (B x 1 x T x S)" },
	{ 2, 2, 1, 3, { 2, 1, 5 }, "2x1x5 is ambiguous with 4-D inputs "
	    "(B x H x T x S = 2x2x4x5): NumPy and PyTorch read it as "
	    "H x T x S, attn's 3-D rule as B x T x S; write 1x2x1x5 "
	    "(1 x H x T x S) or 2x1x1x5 (B x 1 x T x S)" },
	{ 2, 3, 1, 3, { 2, 4, 5 }, "2x4x5 with 4-D inputs (B x H x T x S = "
	    "2x3x4x5): NumPy and PyTorch read it as H x T x S, which 2 does "
	    "not fit, attn's 3-D rule as B x T x S; for a block per batch "
	    "write 2x1x4x5 (B x 1 x T x S)" },
	{ 2, 3, 1, 3, { 5, 4, 5 }, "shape mismatch: 5x4x5 does not "
	    "broadcast to the scores' H x T x S = 3x4x5 (B is 2): with 4-D "
	    "inputs a 3-D mask or bias is H x T x S, as NumPy aligns it, each "
	    "dim 1 or the scores' own" },
	{ 2, 2, 1, 3, { 2, 3, 5 }, "shape mismatch: 2x3x5 does not "
	    "broadcast to the scores' H x T x S = 2x4x5 (B is 2): with 4-D "
	    "inputs a 3-D mask or bias is H x T x S, as NumPy aligns it, each "
	    "dim 1 or the scores' own" },
};

START_TEST(a_dim_neither_one_nor_the_scores_is_refused)
{
	const size_t *dm = refused[_i].dims;
	struct attn_array a;
	struct attn_error err;

	array_of(&a, dm[0], dm[1], refused[_i].rank > 2 ? dm[2] : 1,
	    refused[_i].rank > 3 ? dm[3] : 1);
	a.ndim = refused[_i].rank;
	memset(&err, 0, sizeof err);
	ck_assert_int_eq(attn_array_broadcast(&a, refused[_i].B, refused[_i].H,
	    4, 5, refused[_i].four_d, &err), ATTN_ERR_DATA);
	ck_assert_str_eq(err.msg, refused[_i].msg);
	attn_array_free(&a);
}
END_TEST

/* Stacks that attn_input_blocks_fit takes, and those it does not, for
 * B = 2 batches of H = 3 heads, T = 4 and S = 5. */
static const struct {
	size_t rows, cols, blocks;
	int fits;
} stacks[] = {
	{ 4, 5, 1, 1 }, { 1, 5, 1, 1 }, { 4, 1, 1, 1 }, { 1, 1, 1, 1 },
	{ 8, 5, 2, 1 }, { 2, 5, 2, 1 }, { 24, 1, 6, 1 }, { 6, 1, 6, 1 },
	{ 4, 4, 1, 0 },			/* S wrong */
	{ 3, 5, 1, 0 },			/* T wrong */
	{ 2, 5, 1, 0 },			/* two rows are not one, nor T */
	{ 12, 5, 3, 0 },		/* 3 blocks: not 1, B nor B*H */
	{ 9, 5, 2, 0 },			/* rows not a multiple of blocks */
	{ 0, 5, 0, 0 },
};

START_TEST(input_blocks_fit_one_b_or_b_h_blocks_of_t_or_1_by_s_or_1)
{
	struct attn_matrix m;

	memset(&m, 0, sizeof m);
	m.rows = stacks[_i].rows;
	m.cols = stacks[_i].cols;
	ck_assert_int_eq(attn_input_blocks_fit(&m, stacks[_i].blocks, 2, 3, 4,
	    5), stacks[_i].fits);
}
END_TEST

Suite *
layout_suite(void)
{
	Suite *s = suite_create("layout");
	TCase *stages = tcase_create("stages");
	TCase *inputs = tcase_create("inputs");

	tcase_add_loop_test(stages, stage_shapes_follow_the_layout, 0,
	    NCASES(shapes));
	tcase_add_loop_test(stages, a_layout_keeps_levels_of_one, 0, 2);
	tcase_add_loop_test(stages,
	    flatten_walks_output_in_the_order_of_the_layout, 0, 3);
	tcase_add_loop_test(stages,
	    flatten_walks_per_head_stages_batch_head_row, 0, 2);
	tcase_add_loop_test(stages, where_names_batch_head_row_and_column, 0,
	    3);
	tcase_add_test(stages, a_block_of_bhsd_output_is_one_head);
	tcase_add_loop_test(stages, block_where_names_the_head_of_each_column,
	    0, 3);
	tcase_add_loop_test(stages, where_run_keeps_batch_and_head, 0, 3);
	tcase_add_loop_test(stages, c_runs_are_the_flattened_stage_where_it_lies,
	    0, 3);
	suite_add_tcase(s, stages);

	tcase_add_loop_test(inputs, fold_heads_puts_each_head_in_its_columns,
	    0, 2);
	tcase_add_loop_test(inputs, masks_broadcast_as_numpy_does, 0,
	    NCASES(broadcasts));
	tcase_add_loop_test(inputs, a_dim_neither_one_nor_the_scores_is_refused,
	    0, NCASES(refused));
	tcase_add_loop_test(inputs,
	    input_blocks_fit_one_b_or_b_h_blocks_of_t_or_1_by_s_or_1, 0,
	    NCASES(stacks));
	suite_add_tcase(s, inputs);
	return s;
}
