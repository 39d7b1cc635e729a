/*
 * check_stage.c - the stage table, the single source of truth for stage
 * names, formulas, shapes and dependencies; attn_stage_lookup and
 * attn_stage_closure over it; and attn_stage_shape, the dims every
 * printer shows.
 *
 * The names are attn(1)'s fixed names; lookup takes a length, not a NUL, so
 * that --stage can look up the pieces of "weights,output" in place.  The
 * backward stages are laid out as Q, K and V are, grad_k and grad_v
 * with keys as rows; grad_bias and grad_sinks as the bias and the sinks
 * are, and bias, the bias as read, as grad_bias is.
 */
#include <string.h>

#include "internal.h"
#include "suites.h"

/* attn(1)'s names, shapes and column axes, in --explain order. */
static const struct {
	const char *name;
	const char *shape;
	enum attn_axis cols;
} spec_stages[] = {
	{ "scores", "T x S", ATTN_AXIS_KEY },
	{ "scaled", "T x S", ATTN_AXIS_KEY },
	{ "weights", "T x S", ATTN_AXIS_KEY },
	{ "output", "T x d_v", ATTN_AXIS_VALUE },
	{ "lse", "T x 1", ATTN_AXIS_ONE },
	{ "mask", "T x S", ATTN_AXIS_KEY },
	/* internal: kept for printers, not offered by --stage */
	{ "row_max", "T x 1", ATTN_AXIS_ONE },
	{ "row_sum", "T x 1", ATTN_AXIS_ONE },
	/* attn(1)'s backward stages */
	{ "grad_weights", "T x S", ATTN_AXIS_KEY },
	{ "delta", "T x 1", ATTN_AXIS_ONE },
	{ "grad_scaled", "T x S", ATTN_AXIS_KEY },
	{ "grad_q", "T x d_k", ATTN_AXIS_DK },
	{ "grad_k", "S x d_k", ATTN_AXIS_DK },
	{ "grad_v", "S x d_v", ATTN_AXIS_VALUE },
	/* the gradients of the broadcast inputs, shaped as those are */
	{ "grad_bias", "the bias's shape", ATTN_AXIS_KEY },
	{ "grad_sinks", "1 x H", ATTN_AXIS_HEAD },
	/* the passes around the kernel */
	{ "q", "T x d_k", ATTN_AXIS_DK },
	{ "k", "S x d_k", ATTN_AXIS_DK },
	{ "v", "S x d_v", ATTN_AXIS_VALUE },
	{ "q_rot", "T x d_k", ATTN_AXIS_DK },
	{ "k_rot", "S x d_k", ATTN_AXIS_DK },
	{ "projected", "T x d_out", ATTN_AXIS_MODEL },
	/* an input as read, shaped as grad_bias is */
	{ "bias", "the bias's shape", ATTN_AXIS_KEY },
	/* with a dropout mask: the weights after dropout */
	{ "dropped", "T x S", ATTN_AXIS_KEY },
};

_Static_assert(sizeof spec_stages / sizeof spec_stages[0] ==
    ATTN_STAGE_COUNT, "a new stage needs its row in spec_stages");

START_TEST(every_stage_has_a_name_formula_and_shape)
{
	const struct attn_stage_info *info = &attn_stage_table[_i];

	ck_assert_ptr_nonnull(info->name);
	ck_assert_ptr_nonnull(info->formula);
	ck_assert_ptr_nonnull(info->shape);
	ck_assert_uint_gt(strlen(info->name), 0);
	ck_assert_uint_gt(strlen(info->formula), 0);
	ck_assert_uint_gt(strlen(info->shape), 0);
}
END_TEST

START_TEST(stage_names_are_unique)
{
	size_t j;

	for (j = 0; j < ATTN_STAGE_COUNT; j++)
		if (j != (size_t)_i)
			ck_assert_str_ne(attn_stage_table[_i].name,
			    attn_stage_table[j].name);
}
END_TEST

START_TEST(stages_are_the_ones_spec_names)
{
	const struct attn_stage_info *info = &attn_stage_table[_i];

	ck_assert_str_eq(info->name, spec_stages[_i].name);
	ck_assert_str_eq(info->shape, spec_stages[_i].shape);
	ck_assert_int_eq(info->cols, spec_stages[_i].cols);
}
END_TEST

START_TEST(lookup_finds_each_stage_by_name)
{
	const char *name = attn_stage_table[_i].name;
	char unterminated[16];
	size_t len = strlen(name);

	ck_assert_int_eq(attn_stage_lookup(name, len), _i);
	/* a copy followed by more letters, so only len can stop the match */
	memset(unterminated, 'x', sizeof unterminated);
	memcpy(unterminated, name, len);
	ck_assert_int_eq(attn_stage_lookup(unterminated, len), _i);
}
END_TEST

START_TEST(lookup_reads_a_name_out_of_a_list)
{
	static const char list[] = "weights,output,lse";

	ck_assert_int_eq(attn_stage_lookup(list, 7), ATTN_STAGE_WEIGHTS);
	ck_assert_int_eq(attn_stage_lookup(list + 8, 6), ATTN_STAGE_OUTPUT);
	ck_assert_int_eq(attn_stage_lookup(list + 15, 3), ATTN_STAGE_LSE);
	ck_assert_int_eq(attn_stage_lookup(list, 14), ATTN_STAGE_COUNT);
}
END_TEST

START_TEST(only_row_max_and_row_sum_are_internal)
{
	const int internal = _i == ATTN_STAGE_ROW_MAX ||
	    _i == ATTN_STAGE_ROW_SUM;

	ck_assert_int_eq(attn_stage_table[_i].internal != 0, internal);
}
END_TEST

/* ---------------------------------------------------------------- closure */

#define B(s) ATTN_STAGE_BIT(ATTN_STAGE_ ## s)

/* Sets and their closures, worked out from attn(1)'s definitions:
 * lse and weights read row_max and row_sum, which read scaled. */
static const struct {
	unsigned want, closure;
} closures[] = {
	{ 0, 0 },
	{ B(SCORES), B(SCORES) },
	{ B(SCALED), B(SCALED) | B(SCORES) },
	{ B(MASK), B(MASK) | B(SCALED) | B(SCORES) },
	{ B(ROW_MAX), B(ROW_MAX) | B(SCALED) | B(SCORES) },
	{ B(ROW_SUM), B(ROW_SUM) | B(ROW_MAX) | B(SCALED) | B(SCORES) },
	{ B(LSE), B(LSE) | B(ROW_MAX) | B(ROW_SUM) | B(SCALED) | B(SCORES) },
	{ B(WEIGHTS), B(WEIGHTS) | B(ROW_MAX) | B(ROW_SUM) | B(SCALED) |
	    B(SCORES) },
	{ B(OUTPUT), B(OUTPUT) | B(WEIGHTS) | B(ROW_MAX) | B(ROW_SUM) |
	    B(SCALED) | B(SCORES) },
	{ B(OUTPUT) | B(MASK), B(OUTPUT) | B(MASK) | B(WEIGHTS) |
	    B(ROW_MAX) | B(ROW_SUM) | B(SCALED) | B(SCORES) },
	{ ATTN_STAGES_ALL, ATTN_STAGES_ALL },
	/* the backward pass: dP reads only dO and V; delta reads output;
	 * dS reads weights (row_max for the rows with no key), dP and
	 * delta; dQ and dK read dS and, for the softcap, scores; dV reads
	 * weights */
	{ B(GRAD_WEIGHTS), B(GRAD_WEIGHTS) },
	{ B(DELTA), B(DELTA) | B(OUTPUT) | B(WEIGHTS) | B(ROW_MAX) |
	    B(ROW_SUM) | B(SCALED) | B(SCORES) },
	{ B(GRAD_SCALED), B(GRAD_SCALED) | B(GRAD_WEIGHTS) | B(DELTA) |
	    B(OUTPUT) | B(WEIGHTS) | B(ROW_MAX) | B(ROW_SUM) | B(SCALED) |
	    B(SCORES) },
	{ B(GRAD_Q), B(GRAD_Q) | B(GRAD_SCALED) | B(GRAD_WEIGHTS) |
	    B(DELTA) | B(OUTPUT) | B(WEIGHTS) | B(ROW_MAX) | B(ROW_SUM) |
	    B(SCALED) | B(SCORES) },
	{ B(GRAD_K), B(GRAD_K) | B(GRAD_SCALED) | B(GRAD_WEIGHTS) |
	    B(DELTA) | B(OUTPUT) | B(WEIGHTS) | B(ROW_MAX) | B(ROW_SUM) |
	    B(SCALED) | B(SCORES) },
	{ B(GRAD_V), B(GRAD_V) | B(WEIGHTS) | B(ROW_MAX) | B(ROW_SUM) |
	    B(SCALED) | B(SCORES) },
	{ ATTN_STAGES_GRAD, ATTN_STAGES_GRAD | (ATTN_STAGES_ALL & ~B(LSE) &
	    ~B(MASK)) },
	/* grad_bias reads dS; grad_sinks lse and delta */
	{ B(GRAD_BIAS), B(GRAD_BIAS) | B(GRAD_SCALED) | B(GRAD_WEIGHTS) |
	    B(DELTA) | B(OUTPUT) | B(WEIGHTS) | B(ROW_MAX) | B(ROW_SUM) |
	    B(SCALED) | B(SCORES) },
	{ B(GRAD_SINKS), B(GRAD_SINKS) | B(LSE) | B(DELTA) | B(OUTPUT) |
	    B(WEIGHTS) | B(ROW_MAX) | B(ROW_SUM) | B(SCALED) | B(SCORES) },
	/* projected reads output; the passes before the kernel need
	 * nothing the table knows (what the scores read depends on the run:
	 * lib/passes.c) */
	{ B(PROJECTED), B(PROJECTED) | B(OUTPUT) | B(WEIGHTS) | B(ROW_MAX) |
	    B(ROW_SUM) | B(SCALED) | B(SCORES) },
	{ B(Q) | B(K_ROT), B(Q) | B(K_ROT) },
	{ ATTN_STAGES_PROJ, ATTN_STAGES_PROJ | (ATTN_STAGES_ALL &
	    ~(B(LSE) | B(MASK))) },
	/* bits past the last stage are no stage */
	{ ~0u, (1u << ATTN_STAGE_COUNT) - 1u },
};

#define NCLOSURES (int)(sizeof closures / sizeof closures[0])

START_TEST(closure_adds_every_dependency)
{
	ck_assert_uint_eq(attn_stage_closure(closures[_i].want),
	    closures[_i].closure);
}
END_TEST

START_TEST(closure_of_a_stage_holds_its_needs_and_is_closed)
{
	const unsigned c = attn_stage_closure(ATTN_STAGE_BIT(_i));
	size_t s;

	ck_assert(c & ATTN_STAGE_BIT(_i));
	ck_assert_uint_eq(c & attn_stage_table[_i].needs,
	    attn_stage_table[_i].needs);
	ck_assert_uint_eq(attn_stage_closure(c), c);
	/* no stage needs itself, nor a stage that needs it (no cycle) */
	ck_assert(!(attn_stage_table[_i].needs & ATTN_STAGE_BIT(_i)));
	for (s = 0; s < ATTN_STAGE_COUNT; s++)
		if (s != (size_t)_i && (c & ATTN_STAGE_BIT(s)))
			ck_assert(!(attn_stage_closure(ATTN_STAGE_BIT(s)) &
			    ATTN_STAGE_BIT(_i)));
}
END_TEST

/* ---------------------------------------------------------------- shapes */

/* Shapes of stages for B batches and H heads, T = 3, S = 5, d_v = 2. */
static const struct {
	size_t B, H;
	enum attn_stage s;
	size_t ndim, dim[4];
	enum attn_axis axis[4];
	size_t blocks, cols;
	const char *legend;
} shapes[] = {
	{ 1, 1, ATTN_STAGE_WEIGHTS, 2, { 3, 5 },
	    { ATTN_AXIS_QUERY, ATTN_AXIS_KEY }, 1, 5, "T x S" },
	{ 1, 1, ATTN_STAGE_OUTPUT, 2, { 3, 2 },
	    { ATTN_AXIS_QUERY, ATTN_AXIS_VALUE }, 1, 2, "T x d_v" },
	{ 1, 1, ATTN_STAGE_LSE, 2, { 3, 1 },
	    { ATTN_AXIS_QUERY, ATTN_AXIS_ONE }, 1, 1, "T x 1" },
	{ 2, 1, ATTN_STAGE_SCORES, 3, { 2, 3, 5 },
	    { ATTN_AXIS_BATCH, ATTN_AXIS_QUERY, ATTN_AXIS_KEY }, 2, 5,
	    "T x S" },
	{ 1, 4, ATTN_STAGE_MASK, 3, { 4, 3, 5 },
	    { ATTN_AXIS_HEAD, ATTN_AXIS_QUERY, ATTN_AXIS_KEY }, 4, 5,
	    "T x S" },
	{ 2, 4, ATTN_STAGE_ROW_SUM, 4, { 2, 4, 3, 1 },
	    { ATTN_AXIS_BATCH, ATTN_AXIS_HEAD, ATTN_AXIS_QUERY,
	    ATTN_AXIS_ONE }, 8, 1, "T x 1" },
	/* output keeps the heads side by side, per batch */
	{ 1, 4, ATTN_STAGE_OUTPUT, 2, { 3, 8 },
	    { ATTN_AXIS_QUERY, ATTN_AXIS_VALUE }, 1, 8, "T x H*d_v" },
	{ 2, 4, ATTN_STAGE_OUTPUT, 3, { 2, 3, 8 },
	    { ATTN_AXIS_BATCH, ATTN_AXIS_QUERY, ATTN_AXIS_VALUE }, 2, 8,
	    "T x H*d_v" },
};

#define NSHAPES (int)(sizeof shapes / sizeof shapes[0])

/* The shape of stage s for B batches, H heads and G KV heads, T = 3,
 * S = 5, d_k = 7, d_v = 2. */
static void
stages_of(size_t B, size_t H, size_t G, struct attn_stages *st)
{
	memset(st, 0, sizeof *st);
	st->batches = B;
	st->heads = H;
	st->kv_heads = G;
	st->T = 3;
	st->S = 5;
	st->d_k = 7;
	st->d_v = 2;
}

static void
shape_of(size_t B, size_t H, size_t G, enum attn_stage s,
    struct attn_shape *sh)
{
	struct attn_stages st;

	stages_of(B, H, G, &st);
	attn_stage_shape(&st, s, sh);
}

/* Fail unless sh has ndim dims, dim[] running over axis[], in blocks of
 * rows x cols whose dims read legend. */
static void
expect_shape(const struct attn_shape *sh, size_t ndim, const size_t *dim,
    const enum attn_axis *axis, size_t rows, size_t cols, const char *legend)
{
	size_t d;

	ck_assert_uint_eq(sh->ndim, ndim);
	for (d = 0; d < ndim; d++) {
		ck_assert_uint_eq(sh->dim[d], dim[d]);
		ck_assert_int_eq(sh->axis[d], axis[d]);
	}
	ck_assert_uint_eq(sh->batches * sh->heads, sh->blocks);
	ck_assert_uint_eq(sh->rows, rows);
	ck_assert_uint_eq(sh->cols, cols);
	ck_assert_str_eq(sh->legend, legend);
}

START_TEST(stage_shapes_leave_out_levels_of_one)
{
	struct attn_shape sh;

	shape_of(shapes[_i].B, shapes[_i].H, shapes[_i].H, shapes[_i].s, &sh);
	expect_shape(&sh, shapes[_i].ndim, shapes[_i].dim, shapes[_i].axis, 3,
	    shapes[_i].cols, shapes[_i].legend);
	ck_assert_uint_eq(sh.blocks, shapes[_i].blocks);
}
END_TEST

/* The backward stages laid out as Q, K and V: B x T x H*d_k, B x S x
 * G*d_k, B x S x G*d_v, with keys as rows for grad_k and grad_v; for B
 * batches, H heads, G KV heads, T = 3, S = 5, d_k = 7, d_v = 2. */
static const struct {
	size_t B, H, G;
	enum attn_stage s;
	size_t ndim, dim[4];
	enum attn_axis axis[4];
	size_t rows, cols, col_heads;
	const char *legend;
} grad_shapes[] = {
	{ 1, 1, 1, ATTN_STAGE_GRAD_Q, 2, { 3, 7 },
	    { ATTN_AXIS_QUERY, ATTN_AXIS_DK }, 3, 7, 1, "T x d_k" },
	{ 2, 4, 2, ATTN_STAGE_GRAD_Q, 3, { 2, 3, 28 },
	    { ATTN_AXIS_BATCH, ATTN_AXIS_QUERY, ATTN_AXIS_DK }, 3, 28, 4,
	    "T x H*d_k" },
	{ 1, 1, 1, ATTN_STAGE_GRAD_K, 2, { 5, 7 },
	    { ATTN_AXIS_KEY, ATTN_AXIS_DK }, 5, 7, 1, "S x d_k" },
	{ 1, 4, 2, ATTN_STAGE_GRAD_K, 2, { 5, 14 },
	    { ATTN_AXIS_KEY, ATTN_AXIS_DK }, 5, 14, 2, "S x G*d_k" },
	/* one KV head for four query heads: one block, as K has */
	{ 2, 4, 1, ATTN_STAGE_GRAD_K, 3, { 2, 5, 7 },
	    { ATTN_AXIS_BATCH, ATTN_AXIS_KEY, ATTN_AXIS_DK }, 5, 7, 1,
	    "S x d_k" },
	{ 2, 3, 3, ATTN_STAGE_GRAD_V, 3, { 2, 5, 6 },
	    { ATTN_AXIS_BATCH, ATTN_AXIS_KEY, ATTN_AXIS_VALUE }, 5, 6, 3,
	    "S x G*d_v" },
	{ 1, 2, 2, ATTN_STAGE_GRAD_SCALED, 3, { 2, 3, 5 },
	    { ATTN_AXIS_HEAD, ATTN_AXIS_QUERY, ATTN_AXIS_KEY }, 3, 5, 1,
	    "T x S" },
	{ 1, 2, 1, ATTN_STAGE_DELTA, 3, { 2, 3, 1 },
	    { ATTN_AXIS_HEAD, ATTN_AXIS_QUERY, ATTN_AXIS_ONE }, 3, 1, 1,
	    "T x 1" },
};

#define NGRAD_SHAPES (int)(sizeof grad_shapes / sizeof grad_shapes[0])

START_TEST(backward_stages_are_laid_out_as_q_k_and_v)
{
	struct attn_shape sh;

	shape_of(grad_shapes[_i].B, grad_shapes[_i].H, grad_shapes[_i].G,
	    grad_shapes[_i].s, &sh);
	expect_shape(&sh, grad_shapes[_i].ndim, grad_shapes[_i].dim,
	    grad_shapes[_i].axis, grad_shapes[_i].rows, grad_shapes[_i].cols,
	    grad_shapes[_i].legend);
	ck_assert_uint_eq(sh.col_heads, grad_shapes[_i].col_heads);
}
END_TEST

START_TEST(grad_bias_is_a_stage_of_its_own)
{
	ck_assert_int_eq(attn_stage_lookup("grad_bias", 9),
	    ATTN_STAGE_GRAD_BIAS);
	ck_assert_int_eq(attn_stage_lookup("grad_biasx", 9),
	    ATTN_STAGE_GRAD_BIAS);
	ck_assert_int_eq(attn_stage_lookup("grad_sinks", 10),
	    ATTN_STAGE_GRAD_SINKS);
	ck_assert_int_eq(attn_stage_lookup("grad_bia", 8), ATTN_STAGE_COUNT);
	ck_assert_int_eq(attn_stage_lookup("grad_biass", 10),
	    ATTN_STAGE_COUNT);
	ck_assert_uint_eq(ATTN_STAGES_ALL & ATTN_STAGES_REDUCE, 0);
	ck_assert_uint_eq(ATTN_STAGES_GRAD & ATTN_STAGES_REDUCE, 0);
}
END_TEST

/* grad_bias as a run leaves its dims (B = 2, H = 3, T = 3, S = 5): the
 * bias's as given, in every layout, a block per batch and head it has;
 * attn_stage_block of (batch 1, head 2) is the block it adds into, and
 * attn_stage_axes says what the rows and columns run over. */
static const struct {
	size_t ndim, dim[4];
	enum attn_axis axis[4];
	const char *legend;
	size_t blocks, block;	/* of (1, 2) */
} bias_shapes[] = {
	{ 2, { 3, 5 }, { ATTN_AXIS_QUERY, ATTN_AXIS_KEY }, "T x S", 1, 0 },
	{ 2, { 1, 5 }, { ATTN_AXIS_ONE, ATTN_AXIS_KEY }, "1 x S", 1, 0 },
	{ 3, { 2, 3, 1 }, { ATTN_AXIS_BATCH, ATTN_AXIS_QUERY, ATTN_AXIS_ONE },
	    "T x 1", 2, 1 },
	{ 4, { 1, 3, 1, 1 }, { ATTN_AXIS_ONE, ATTN_AXIS_HEAD, ATTN_AXIS_ONE,
	    ATTN_AXIS_ONE }, "1 x 1", 3, 2 },
	{ 4, { 2, 3, 1, 5 }, { ATTN_AXIS_BATCH, ATTN_AXIS_HEAD, ATTN_AXIS_ONE,
	    ATTN_AXIS_KEY }, "1 x S", 6, 5 },
	{ 3, { 3, 3, 5 }, { ATTN_AXIS_HEAD, ATTN_AXIS_QUERY, ATTN_AXIS_KEY },
	    "T x S", 3, 2 },
};

START_TEST(grad_bias_has_the_bias_s_shape)
{
	struct attn_stages st;
	struct attn_shape sh;
	struct attn_matrix m, block;
	enum attn_axis rows, cols;
	size_t d, n = 1;
	int layout;

	stages_of(2, 3, 3, &st);
	st.bias_ndim = bias_shapes[_i].ndim;
	for (d = 0; d < st.bias_ndim; d++) {
		st.bias_dim[d] = bias_shapes[_i].dim[d];
		st.bias_axis[d] = bias_shapes[_i].axis[d];
		n *= st.bias_dim[d];
	}
	for (layout = 0; layout < 3; layout++) {
		st.layout = (enum attn_layout)layout;
		attn_stage_shape(&st, ATTN_STAGE_GRAD_BIAS, &sh);
		expect_shape(&sh, bias_shapes[_i].ndim, bias_shapes[_i].dim,
		    bias_shapes[_i].axis, bias_shapes[_i].dim[st.bias_ndim - 2],
		    bias_shapes[_i].dim[st.bias_ndim - 1],
		    bias_shapes[_i].legend);
		ck_assert_uint_eq(sh.blocks, bias_shapes[_i].blocks);
		ck_assert_uint_eq(sh.col_heads, 1);
		ck_assert_uint_eq(attn_shape_count(&sh), n);
		/* C order: the last dim's step is 1 */
		ck_assert_uint_eq(sh.step[sh.ndim - 1], 1);
		ck_assert_uint_eq(sh.step[0] * sh.dim[0], n);
	}
	ck_assert_int_eq(attn_matrix_alloc(&m, n / sh.cols, sh.cols, NULL),
	    ATTN_OK);
	st.stage[ATTN_STAGE_GRAD_BIAS] = m;
	block = attn_stage_block(&st, ATTN_STAGE_GRAD_BIAS, 1, 2);
	ck_assert_uint_eq(block.rows, sh.rows);
	ck_assert_uint_eq(block.cols, sh.cols);
	ck_assert_ptr_eq(block.data, attn_at(&m, bias_shapes[_i].block *
	    sh.rows, 0));
	block = attn_shape_block(&st, ATTN_STAGE_GRAD_BIAS, sh.blocks - 1);
	ck_assert_ptr_eq(block.data, attn_at(&m, (sh.blocks - 1) * sh.rows,
	    0));
	attn_stage_axes(&st, ATTN_STAGE_GRAD_BIAS, &rows, &cols);
	ck_assert_int_eq(rows, bias_shapes[_i].axis[st.bias_ndim - 2]);
	ck_assert_int_eq(cols, bias_shapes[_i].axis[st.bias_ndim - 1]);
	attn_matrix_free(&m);
}
END_TEST

/* grad_sinks is 1 x H in every layout, a column a head: element h is
 * head h's, and attn_stage_block of head h is its 1 x 1. */
START_TEST(grad_sinks_is_one_row_of_the_heads)
{
	static const size_t dim[2] = { 1, 4 };
	static const enum attn_axis axis[2] = { ATTN_AXIS_ONE,
		ATTN_AXIS_HEAD };
	struct attn_stages st;
	struct attn_shape sh;
	struct attn_where w;
	struct attn_matrix m, block;
	enum attn_axis rows, cols;
	size_t h;

	stages_of(2, 4, 2, &st);
	st.layout = (enum attn_layout)_i;
	attn_stage_shape(&st, ATTN_STAGE_GRAD_SINKS, &sh);
	expect_shape(&sh, 2, dim, axis, 1, 4, "1 x H");
	ck_assert_uint_eq(sh.blocks, 1);
	ck_assert_uint_eq(sh.col_heads, 4);
	ck_assert_int_eq(attn_matrix_alloc(&m, 1, 4, NULL), ATTN_OK);
	st.stage[ATTN_STAGE_GRAD_SINKS] = m;
	for (h = 0; h < 4; h++) {
		attn_stage_where(&st, ATTN_STAGE_GRAD_SINKS, h, &w);
		ck_assert_uint_eq(w.batch, 0);
		ck_assert_uint_eq(w.head, h);
		ck_assert_uint_eq(w.row, 0);
		ck_assert_uint_eq(w.col, 0);
		attn_shape_block_where(&st, ATTN_STAGE_GRAD_SINKS, 0, 0, h, &w);
		ck_assert_uint_eq(w.head, h);
		block = attn_stage_block(&st, ATTN_STAGE_GRAD_SINKS, 1, h);
		ck_assert_ptr_eq(block.data, m.data + h);
		ck_assert_uint_eq(block.rows * block.cols, 1);
	}
	attn_stage_axes(&st, ATTN_STAGE_GRAD_SINKS, &rows, &cols);
	ck_assert_int_eq(rows, ATTN_AXIS_ONE);
	ck_assert_int_eq(cols, ATTN_AXIS_HEAD);
	attn_matrix_free(&m);
}
END_TEST

/* The stages of the passes, laid out as Q, K and V are (B = 2, H = 4
 * query heads, G = 2 KV heads, T = 3, S = 5, d_k = 6, d_v = 2, d_out =
 * 9): rows of keys for k, v and k_rot, the KV heads side by side. */
static const struct {
	enum attn_stage s;
	size_t rows, cols, col_heads;
	enum attn_axis row_axis, col_axis;
	const char *legend;
} pass_shapes[] = {
	{ ATTN_STAGE_Q, 3, 24, 4, ATTN_AXIS_QUERY, ATTN_AXIS_DK,
	    "T x H*d_k" },
	{ ATTN_STAGE_Q_ROT, 3, 24, 4, ATTN_AXIS_QUERY, ATTN_AXIS_DK,
	    "T x H*d_k" },
	{ ATTN_STAGE_K, 5, 12, 2, ATTN_AXIS_KEY, ATTN_AXIS_DK, "S x G*d_k" },
	{ ATTN_STAGE_K_ROT, 5, 12, 2, ATTN_AXIS_KEY, ATTN_AXIS_DK,
	    "S x G*d_k" },
	{ ATTN_STAGE_V, 5, 4, 2, ATTN_AXIS_KEY, ATTN_AXIS_VALUE, "S x G*d_v" },
	{ ATTN_STAGE_PROJECTED, 3, 9, 1, ATTN_AXIS_QUERY, ATTN_AXIS_MODEL,
	    "T x d_out" },
	{ ATTN_STAGE_OUTPUT, 3, 8, 4, ATTN_AXIS_QUERY, ATTN_AXIS_VALUE,
	    "T x H*d_v" },
};

START_TEST(pass_stages_are_laid_out_as_q_k_and_v)
{
	struct attn_stages st;
	struct attn_shape sh;
	struct attn_matrix m, block;

	memset(&st, 0, sizeof st);
	st.batches = 2;
	st.heads = 4;
	st.kv_heads = 2;
	st.T = 3;
	st.S = 5;
	st.d_k = 6;
	st.d_v = 2;
	st.d_proj = 9;
	attn_stage_shape(&st, pass_shapes[_i].s, &sh);
	ck_assert_uint_eq(sh.ndim, 3);
	ck_assert_uint_eq(sh.dim[0], 2);
	ck_assert_int_eq(sh.axis[0], ATTN_AXIS_BATCH);
	ck_assert_uint_eq(sh.rows, pass_shapes[_i].rows);
	ck_assert_uint_eq(sh.cols, pass_shapes[_i].cols);
	ck_assert_uint_eq(sh.col_heads, pass_shapes[_i].col_heads);
	ck_assert_int_eq(sh.axis[1], pass_shapes[_i].row_axis);
	ck_assert_int_eq(sh.axis[2], pass_shapes[_i].col_axis);
	ck_assert_uint_eq(sh.blocks, 2);
	ck_assert_str_eq(sh.legend, pass_shapes[_i].legend);
	/* a block is a query head's columns of one batch: for k, v and
	 * k_rot those of the KV head it reads, for projected all */
	ck_assert_int_eq(attn_matrix_alloc(&m, 2 * sh.rows, sh.cols, NULL),
	    ATTN_OK);
	st.stage[pass_shapes[_i].s] = m;
	block = attn_stage_block(&st, pass_shapes[_i].s, 1, 3);
	ck_assert_uint_eq(block.rows, sh.rows);
	ck_assert_uint_eq(block.cols, sh.cols / sh.col_heads);
	ck_assert_ptr_eq(block.data, attn_at(&m, sh.rows,
	    sh.col_heads == 1 ? 0 : sh.col_heads == 2 ? block.cols :
	    3 * block.cols));
	attn_matrix_free(&m);
	st.stage[pass_shapes[_i].s] = m;
	/* a stage not held has no block */
	block = attn_stage_block(&st, pass_shapes[_i].s, 0, 0);
	ck_assert_ptr_null(block.data);
}
END_TEST

/* attn_stage_order holds every stage once: what the kernel reads first
 * (q .. k_rot), then the forward stages with projected after output. */
START_TEST(the_order_holds_every_stage_once_projections_first)
{
	int seen[ATTN_STAGE_COUNT] = { 0 };
	size_t n, pos[ATTN_STAGE_COUNT];

	for (n = 0; n < ATTN_STAGE_COUNT; n++) {
		ck_assert_int_lt(attn_stage_order[n], ATTN_STAGE_COUNT);
		ck_assert_int_eq(seen[attn_stage_order[n]], 0);
		seen[attn_stage_order[n]] = 1;
		pos[attn_stage_order[n]] = n;
	}
	ck_assert_uint_lt(pos[ATTN_STAGE_Q], pos[ATTN_STAGE_Q_ROT]);
	ck_assert_uint_lt(pos[ATTN_STAGE_K_ROT], pos[ATTN_STAGE_SCORES]);
	/* the bias as read, an input, before what it is added to */
	ck_assert_uint_lt(pos[ATTN_STAGE_BIAS], pos[ATTN_STAGE_SCORES]);
	ck_assert_uint_eq(pos[ATTN_STAGE_PROJECTED],
	    pos[ATTN_STAGE_OUTPUT] + 1);
	ck_assert_uint_lt(pos[ATTN_STAGE_SCORES], pos[ATTN_STAGE_SCALED]);
	ck_assert_uint_lt(pos[ATTN_STAGE_SCALED], pos[ATTN_STAGE_WEIGHTS]);
}
END_TEST

/* Text that names no stage. */
static const char *const unknown_names[] = {
	"", "weight", "weightsx", "w", "out", "score", "scoress", "ls",
	"lse ", " lse", "all", "masks", "softmax", "scores,",
};

#define NUNKNOWN (int)(sizeof unknown_names / sizeof unknown_names[0])

START_TEST(lookup_refuses_unknown_names_and_prefixes)
{
	const char *name = unknown_names[_i];

	ck_assert_msg(attn_stage_lookup(name, strlen(name)) ==
	    ATTN_STAGE_COUNT, "\"%s\" was taken as a stage", name);
}
END_TEST

Suite *
stage_suite(void)
{
	Suite *s = suite_create("stage");
	TCase *tc = tcase_create("table");

	tcase_add_loop_test(tc, every_stage_has_a_name_formula_and_shape, 0,
	    ATTN_STAGE_COUNT);
	tcase_add_loop_test(tc, stage_names_are_unique, 0, ATTN_STAGE_COUNT);
	tcase_add_loop_test(tc, stages_are_the_ones_spec_names, 0,
	    ATTN_STAGE_COUNT);
	tcase_add_loop_test(tc, only_row_max_and_row_sum_are_internal, 0,
	    ATTN_STAGE_COUNT);
	suite_add_tcase(s, tc);

	tc = tcase_create("closure");
	tcase_add_loop_test(tc, closure_adds_every_dependency, 0, NCLOSURES);
	tcase_add_loop_test(tc,
	    closure_of_a_stage_holds_its_needs_and_is_closed, 0,
	    ATTN_STAGE_COUNT);
	suite_add_tcase(s, tc);

	tc = tcase_create("shape");
	tcase_add_loop_test(tc, stage_shapes_leave_out_levels_of_one, 0,
	    NSHAPES);
	tcase_add_loop_test(tc, backward_stages_are_laid_out_as_q_k_and_v, 0,
	    NGRAD_SHAPES);
	tcase_add_loop_test(tc, pass_stages_are_laid_out_as_q_k_and_v, 0,
	    (int)(sizeof pass_shapes / sizeof pass_shapes[0]));
	tcase_add_test(tc, the_order_holds_every_stage_once_projections_first);
	tcase_add_loop_test(tc, grad_bias_has_the_bias_s_shape, 0,
	    (int)(sizeof bias_shapes / sizeof bias_shapes[0]));
	tcase_add_loop_test(tc, grad_sinks_is_one_row_of_the_heads, 0, 3);
	suite_add_tcase(s, tc);

	tc = tcase_create("lookup");
	tcase_add_loop_test(tc, lookup_finds_each_stage_by_name, 0,
	    ATTN_STAGE_COUNT);
	tcase_add_test(tc, lookup_reads_a_name_out_of_a_list);
	tcase_add_test(tc, grad_bias_is_a_stage_of_its_own);
	tcase_add_loop_test(tc, lookup_refuses_unknown_names_and_prefixes, 0,
	    NUNKNOWN);
	suite_add_tcase(s, tc);
	return s;
}
