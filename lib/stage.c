/*
 * stage.c - the stage table: the single source of truth for stage names,
 * formulas, shapes and dependencies, read by --stage, --explain, the JSON
 * keys, attn_run's choice of what to compute and the tests; the rows and
 * columns of a stage's blocks, which KV head a query head reads, and the
 * view of one block.  It calls nothing of the library but matrix views:
 * the shape printers show (layout.c) and the problem a kernel solves
 * (problem.c) stand on it.
 *
 * A stage's `needs` are what its definition reads, so that the closure of
 * a set is what the reference kernel computes for it.  lse is defined
 * through row_max and row_sum (lse = row_max + log(row_sum)), which is
 * how every kernel computes it stably.
 *
 * The backward stages are attn(1)'s table of them (Backward pass).
 * grad_bias and grad_sinks, the gradients of the inputs a run
 * broadcasts, are reduced from them after the kernel (lib/grad_reduce.c)
 * and are shaped as those inputs are, not in blocks of the run
 * (`reduced`): grad_bias as the bias was given, grad_sinks 1 x H (struct
 * attn_stages says the run's dims, attn_stage_axes what they run over).
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

#define BIT ATTN_STAGE_BIT

const struct attn_stage_info attn_stage_table[ATTN_STAGE_COUNT] = {
	[ATTN_STAGE_SCORES] = { "scores", "Q K^T", "T x S", ATTN_AXIS_KEY, 1,
	    0, 0, ATTN_AXIS_QUERY, 0, NULL },
	[ATTN_STAGE_SCALED] = { "scaled", "scores * scale", "T x S",
	    ATTN_AXIS_KEY, 1, BIT(ATTN_STAGE_SCORES), 0, ATTN_AXIS_QUERY, 0,
	    NULL },
	[ATTN_STAGE_WEIGHTS] = { "weights", "softmax(scaled), row by row",
	    "T x S", ATTN_AXIS_KEY, 1, BIT(ATTN_STAGE_SCALED) |
	    BIT(ATTN_STAGE_ROW_MAX) | BIT(ATTN_STAGE_ROW_SUM), 0,
	    ATTN_AXIS_QUERY, 0, NULL },
	[ATTN_STAGE_OUTPUT] = { "output", "weights V", "T x d_v",
	    ATTN_AXIS_VALUE, 0, BIT(ATTN_STAGE_WEIGHTS), 0, ATTN_AXIS_QUERY, 0,
	    "T x H*d_v" },
	[ATTN_STAGE_LSE] = { "lse", "log(sum(exp(scaled))), row by row",
	    "T x 1", ATTN_AXIS_ONE, 1, BIT(ATTN_STAGE_ROW_MAX) |
	    BIT(ATTN_STAGE_ROW_SUM), 0, ATTN_AXIS_QUERY, 0, NULL },
	[ATTN_STAGE_MASK] = { "mask",
	    "1 where query i may attend key j, else 0",
	    "T x S", ATTN_AXIS_KEY, 1, BIT(ATTN_STAGE_SCALED), 0,
	    ATTN_AXIS_QUERY, 0, NULL },
	[ATTN_STAGE_ROW_MAX] = { "row_max",
	    "max of each row of scaled and the sink (-inf when no key is "
	    "left and there is no sink)", "T x 1", ATTN_AXIS_ONE, 1,
	    BIT(ATTN_STAGE_SCALED), 1, ATTN_AXIS_QUERY, 0, NULL },
	[ATTN_STAGE_ROW_SUM] = { "row_sum",
	    "sum of exp(scaled - row_max) and exp(sink - row_max), row by "
	    "row (0 when no key is left and there is no sink)", "T x 1",
	    ATTN_AXIS_ONE, 1, BIT(ATTN_STAGE_SCALED) |
	    BIT(ATTN_STAGE_ROW_MAX), 1, ATTN_AXIS_QUERY, 0, NULL },

	/* The backward pass (lib/grad.c).  grad_scaled reads row_max for
	 * the rows with no key; grad_q and grad_k read scores for the
	 * softcap's derivative. */
	[ATTN_STAGE_GRAD_WEIGHTS] = { "grad_weights", "dO V^T", "T x S",
	    ATTN_AXIS_KEY, 1, 0, 0, ATTN_AXIS_QUERY, 0, NULL },
	[ATTN_STAGE_DELTA] = { "delta", "rowsum(dO * output)", "T x 1",
	    ATTN_AXIS_ONE, 1, BIT(ATTN_STAGE_OUTPUT), 0, ATTN_AXIS_QUERY, 0,
	    NULL },
	[ATTN_STAGE_GRAD_SCALED] = { "grad_scaled",
	    "weights * (grad_weights - delta)", "T x S", ATTN_AXIS_KEY, 1,
	    BIT(ATTN_STAGE_WEIGHTS) | BIT(ATTN_STAGE_ROW_MAX) |
	    BIT(ATTN_STAGE_GRAD_WEIGHTS) | BIT(ATTN_STAGE_DELTA), 0,
	    ATTN_AXIS_QUERY, 0, NULL },
	[ATTN_STAGE_GRAD_Q] = { "grad_q", "grad_scaled K * scale", "T x d_k",
	    ATTN_AXIS_DK, 0, BIT(ATTN_STAGE_GRAD_SCALED) |
	    BIT(ATTN_STAGE_SCORES), 0, ATTN_AXIS_QUERY, 0, "T x H*d_k" },
	[ATTN_STAGE_GRAD_K] = { "grad_k", "grad_scaled^T Q * scale",
	    "S x d_k", ATTN_AXIS_DK, 0, BIT(ATTN_STAGE_GRAD_SCALED) |
	    BIT(ATTN_STAGE_SCORES), 0, ATTN_AXIS_KEY, 1, "S x G*d_k" },
	[ATTN_STAGE_GRAD_V] = { "grad_v", "weights^T dO", "S x d_v",
	    ATTN_AXIS_VALUE, 0, BIT(ATTN_STAGE_WEIGHTS), 0, ATTN_AXIS_KEY, 1,
	    "S x G*d_v" },
	/* Reduced (lib/grad_reduce.c): rows and cols are a T x S bias's
	 * and the heads of grad_sinks; attn_stage_axes gives the run's. */
	[ATTN_STAGE_GRAD_BIAS] = { "grad_bias",
	    "grad_scaled summed where the bias broadcasts", "the bias's shape",
	    ATTN_AXIS_KEY, 0, BIT(ATTN_STAGE_GRAD_SCALED), 0, ATTN_AXIS_QUERY,
	    0, NULL, 1 },
	[ATTN_STAGE_GRAD_SINKS] = { "grad_sinks",
	    "-sum of exp(sink - lse) * delta over the rows and batches",
	    "1 x H", ATTN_AXIS_HEAD, 0, BIT(ATTN_STAGE_LSE) |
	    BIT(ATTN_STAGE_DELTA), 0, ATTN_AXIS_ONE, 0, NULL, 1 },

	/* The passes around the kernel (lib/run.c, lib/project.c and
	 * lib/rope.c): their needs are what they read when they exist; what
	 * the kernel reads is whichever of them the run makes, which is
	 * not a need of the scores (attn_stages_available). */
	[ATTN_STAGE_Q] = { "q", "XQ W_Q + b_Q", "T x d_k", ATTN_AXIS_DK, 0, 0,
	    0, ATTN_AXIS_QUERY, 0, "T x H*d_k" },
	[ATTN_STAGE_K] = { "k", "XKV W_K + b_K", "S x d_k", ATTN_AXIS_DK, 0, 0,
	    0, ATTN_AXIS_KEY, 1, "S x G*d_k" },
	[ATTN_STAGE_V] = { "v", "XKV W_V + b_V", "S x d_v", ATTN_AXIS_VALUE, 0,
	    0, 0, ATTN_AXIS_KEY, 1, "S x G*d_v" },
	[ATTN_STAGE_Q_ROT] = { "q_rot",
	    "q rotated by position (RoPE), query i at i + offset", "T x d_k",
	    ATTN_AXIS_DK, 0, 0, 0, ATTN_AXIS_QUERY, 0, "T x H*d_k" },
	[ATTN_STAGE_K_ROT] = { "k_rot", "k rotated by position (RoPE), key j "
	    "at j", "S x d_k", ATTN_AXIS_DK, 0, 0, 0, ATTN_AXIS_KEY, 1,
	    "S x G*d_k" },
	[ATTN_STAGE_PROJECTED] = { "projected", "output W_O + b_O",
	    "T x d_out", ATTN_AXIS_MODEL, 0, BIT(ATTN_STAGE_OUTPUT), 0,
	    ATTN_AXIS_QUERY, 0, NULL },
	/* The bias as read, shaped as grad_bias is (lib/grad_reduce.c
	 * copies it): rows and cols are a T x S bias's. */
	[ATTN_STAGE_BIAS] = { "bias", "the bias as read", "the bias's shape",
	    ATTN_AXIS_KEY, 0, 0, 0, ATTN_AXIS_QUERY, 0, NULL, 1 },
	/* With a dropout mask alone (attn_stages_available): the weights
	 * output and grad_v take. */
	[ATTN_STAGE_DROPPED] = { "dropped",
	    "weights * dropout mask / (1 - p)", "T x S", ATTN_AXIS_KEY, 1,
	    BIT(ATTN_STAGE_WEIGHTS), 0, ATTN_AXIS_QUERY, 0, NULL },
};

/* Adding a stage means adding its row above and its place below (and
 * its test): this fails until all are done, as ggml does for its op
 * tables.  A stage set must fit in an unsigned. */
_Static_assert(ATTN_STAGE_COUNT == 24, "update attn_stage_table");
_Static_assert(ATTN_STAGE_COUNT < sizeof(unsigned) * 8,
    "stage sets are unsigned bit sets");

const enum attn_stage attn_stage_order[ATTN_STAGE_COUNT] = {
	ATTN_STAGE_Q, ATTN_STAGE_K, ATTN_STAGE_V, ATTN_STAGE_BIAS,
	ATTN_STAGE_Q_ROT, ATTN_STAGE_K_ROT, ATTN_STAGE_SCORES, ATTN_STAGE_SCALED,
	ATTN_STAGE_WEIGHTS, ATTN_STAGE_DROPPED, ATTN_STAGE_OUTPUT,
	ATTN_STAGE_PROJECTED, ATTN_STAGE_LSE, ATTN_STAGE_MASK,
	ATTN_STAGE_ROW_MAX, ATTN_STAGE_ROW_SUM,
	ATTN_STAGE_GRAD_WEIGHTS, ATTN_STAGE_DELTA, ATTN_STAGE_GRAD_SCALED,
	ATTN_STAGE_GRAD_Q, ATTN_STAGE_GRAD_K, ATTN_STAGE_GRAD_V,
	ATTN_STAGE_GRAD_BIAS, ATTN_STAGE_GRAD_SINKS,
};

/* Whether name[0..len) is the NUL-terminated n. */
static int
name_is(const char *name, size_t len, const char *n)
{
	return strlen(n) == len && memcmp(n, name, len) == 0;
}

enum attn_stage
attn_stage_lookup(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < ATTN_STAGE_COUNT; i++)
		if (name_is(name, len, attn_stage_table[i].name))
			return (enum attn_stage)i;
	return ATTN_STAGE_COUNT;
}

/* Add the needs of every member until nothing changes: the table is
 * small and acyclic, so this ends within ATTN_STAGE_COUNT rounds. */
unsigned
attn_stage_closure(unsigned want)
{
	unsigned set = want & ATTN_STAGES_EVERY, prev;
	size_t s;

	do {
		prev = set;
		for (s = 0; s < ATTN_STAGE_COUNT; s++)
			if (set & BIT(s))
				set |= attn_stage_table[s].needs;
	} while (set != prev);
	return set;
}

size_t
attn_stage_cols(const struct attn_stages *stages, enum attn_stage s)
{
	if (attn_stage_table[s].cols == ATTN_AXIS_MODEL)
		return stages->d_proj;
	return attn_stage_block_cols(s, stages->S, stages->d_k, stages->d_v);
}

/* The block of stage s, bias or grad_bias, that batch b and head h
 * read or add into: b's if the bias has a batch dim, h's if it has a
 * head dim (bias_axis). */
static struct attn_matrix
bias_block(const struct attn_stages *stages, enum attn_stage s, size_t b,
    size_t h)
{
	const struct attn_matrix *m = &stages->stage[s];
	const size_t nd = stages->bias_ndim;
	size_t d, n = 0, rows;

	for (d = 0; d + 2 < nd; d++)
		if (stages->bias_axis[d] == ATTN_AXIS_BATCH)
			n = n * stages->bias_dim[d] + b;
		else if (stages->bias_axis[d] == ATTN_AXIS_HEAD)
			n = n * stages->bias_dim[d] + h;
	rows = nd >= 2 ? stages->bias_dim[nd - 2] : 0;
	return attn_matrix_view(m, n * rows, rows, 0, m->cols);
}

void
attn_stage_axes(const struct attn_stages *stages, enum attn_stage s,
    enum attn_axis *rows, enum attn_axis *cols)
{
	const size_t nd = stages->bias_ndim;

	*rows = attn_stage_table[s].rows;
	*cols = attn_stage_table[s].cols;
	if ((s == ATTN_STAGE_GRAD_BIAS || s == ATTN_STAGE_BIAS) && nd >= 2) {
		*rows = stages->bias_axis[nd - 2];
		*cols = stages->bias_axis[nd - 1];
	}
}

struct attn_matrix
attn_stage_block(const struct attn_stages *stages, enum attn_stage s, size_t b,
    size_t h)
{
	const struct attn_matrix *m = &stages->stage[s];
	const size_t rows = attn_stage_block_rows(s, stages->T, stages->S);
	const size_t cols = attn_stage_cols(stages, s);
	struct attn_matrix none = { 0, 0, 0, NULL };

	if (m->data == NULL)
		return none;
	if (s == ATTN_STAGE_GRAD_SINKS)
		return attn_matrix_view(m, 0, 1, h, 1);
	if (s == ATTN_STAGE_GRAD_BIAS || s == ATTN_STAGE_BIAS)
		return bias_block(stages, s, b, h);
	if (attn_stage_table[s].per_head)
		return attn_matrix_view(m, (b * stages->heads + h) * rows,
		    rows, 0, cols);
	if (attn_stage_col_heads(s, stages->heads, stages->kv_heads) == 1)
		return attn_matrix_view(m, b * rows, rows, 0, cols);
	if (attn_stage_table[s].kv)
		h = attn_kv_head(h, stages->heads, stages->kv_heads);
	return attn_matrix_view(m, b * rows, rows, h * cols, cols);
}

size_t
attn_stage_block_cols(enum attn_stage s, size_t S, size_t d_k, size_t d_v)
{
	switch (attn_stage_table[s].cols) {
	case ATTN_AXIS_KEY:
		return S;
	case ATTN_AXIS_VALUE:
		return d_v;
	case ATTN_AXIS_DK:
		return d_k;
	case ATTN_AXIS_ONE:
	case ATTN_AXIS_QUERY:
	case ATTN_AXIS_BATCH:
	case ATTN_AXIS_HEAD:
	case ATTN_AXIS_MODEL:
		break;
	}
	return 1;
}

size_t
attn_stage_block_rows(enum attn_stage s, size_t T, size_t S)
{
	if (attn_stage_table[s].rows == ATTN_AXIS_ONE)
		return 1;
	return attn_stage_table[s].rows == ATTN_AXIS_KEY ? S : T;
}

size_t
attn_stage_col_heads(enum attn_stage s, size_t H, size_t G)
{
	if (attn_stage_table[s].per_head || attn_stage_table[s].reduced ||
	    attn_stage_table[s].cols == ATTN_AXIS_MODEL)
		return 1;
	return attn_stage_table[s].kv ? G : H;
}

size_t
attn_kv_head(size_t h, size_t heads, size_t kv_heads)
{
	if (kv_heads == 0 || kv_heads >= heads)
		return h;
	return h / (heads / kv_heads);
}

void
attn_block_name(char *buf, size_t size, size_t B, size_t H, size_t n,
    const char *pre, const char *post)
{
	if (B > 1 && H > 1)
		snprintf(buf, size, "%sbatch %zu, head %zu%s", pre, n / H + 1,
		    n % H + 1, post);
	else if (B > 1)
		snprintf(buf, size, "%sbatch %zu%s", pre, n + 1, post);
	else if (H > 1)
		snprintf(buf, size, "%shead %zu%s", pre, n + 1, post);
	else
		buf[0] = '\0';
}
