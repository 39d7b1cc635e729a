/*
 * stage.c - the stage table: the single source of truth for stage names,
 * formulas, shapes and dependencies, read by --stage, --explain, the JSON
 * keys, attn_run's choice of what to compute and the tests; and the shape
 * of a computed stage, which every printer lays out the same way.
 *
 * A stage's `needs` are what its definition reads, so that the closure of
 * a set is what the reference kernel computes for it.  lse is defined
 * through row_max and row_sum (lse = row_max + log(row_sum)), which is
 * how every kernel computes it stably.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

#define BIT ATTN_STAGE_BIT

const struct attn_stage_info attn_stage_table[ATTN_STAGE_COUNT] = {
	[ATTN_STAGE_SCORES] = { "scores", "Q K^T", "T x S", ATTN_AXIS_KEY, 1,
	    0, 0 },
	[ATTN_STAGE_SCALED] = { "scaled", "scores * scale", "T x S",
	    ATTN_AXIS_KEY, 1, BIT(ATTN_STAGE_SCORES), 0 },
	[ATTN_STAGE_WEIGHTS] = { "weights", "softmax(scaled), row by row",
	    "T x S", ATTN_AXIS_KEY, 1, BIT(ATTN_STAGE_SCALED) |
	    BIT(ATTN_STAGE_ROW_MAX) | BIT(ATTN_STAGE_ROW_SUM), 0 },
	[ATTN_STAGE_OUTPUT] = { "output", "weights V", "T x d_v",
	    ATTN_AXIS_VALUE, 0, BIT(ATTN_STAGE_WEIGHTS), 0 },
	[ATTN_STAGE_LSE] = { "lse", "log(sum(exp(scaled))), row by row",
	    "T x 1", ATTN_AXIS_ONE, 1, BIT(ATTN_STAGE_ROW_MAX) |
	    BIT(ATTN_STAGE_ROW_SUM), 0 },
	[ATTN_STAGE_MASK] = { "mask",
	    "1 where query i may attend key j, else 0",
	    "T x S", ATTN_AXIS_KEY, 1, BIT(ATTN_STAGE_SCALED), 0 },
	[ATTN_STAGE_ROW_MAX] = { "row_max",
	    "max of each row of scaled (-inf when no key is left)",
	    "T x 1", ATTN_AXIS_ONE, 1, BIT(ATTN_STAGE_SCALED), 1 },
	[ATTN_STAGE_ROW_SUM] = { "row_sum",
	    "sum of exp(scaled - row_max), row by row (0 when no key is "
	    "left)", "T x 1", ATTN_AXIS_ONE, 1, BIT(ATTN_STAGE_SCALED) |
	    BIT(ATTN_STAGE_ROW_MAX), 1 },
};

/* Adding a stage means adding its row above (and its test): this fails
 * until both are done, as ggml does for its op tables.  A stage set must
 * fit in an unsigned. */
_Static_assert(ATTN_STAGE_COUNT == 8, "update attn_stage_table");
_Static_assert(ATTN_STAGE_COUNT < sizeof(unsigned) * 8,
    "stage sets are unsigned bit sets");

enum attn_stage
attn_stage_lookup(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < ATTN_STAGE_COUNT; i++) {
		const char *n = attn_stage_table[i].name;

		if (strlen(n) == len && memcmp(n, name, len) == 0)
			return (enum attn_stage)i;
	}
	return ATTN_STAGE_COUNT;
}

/* Add the needs of every member until nothing changes: the table is
 * small and acyclic, so this ends within ATTN_STAGE_COUNT rounds. */
unsigned
attn_stage_closure(unsigned want)
{
	unsigned set = want & ATTN_STAGES_ALL, prev;
	size_t s;

	do {
		prev = set;
		for (s = 0; s < ATTN_STAGE_COUNT; s++)
			if (set & BIT(s))
				set |= attn_stage_table[s].needs;
	} while (set != prev);
	return set;
}

struct attn_matrix
attn_stage_block(const struct attn_stages *st, enum attn_stage s, size_t b,
    size_t h)
{
	const struct attn_matrix *m = &st->stage[s];

	if (!attn_stage_table[s].per_head)
		return attn_matrix_view(m, b * st->T, st->T, h * st->d_v,
		    st->d_v);
	return attn_matrix_view(m, (b * st->heads + h) * st->T, st->T, 0,
	    m->cols);
}

size_t
attn_stage_block_cols(enum attn_stage s, size_t S, size_t d_v)
{
	switch (attn_stage_table[s].cols) {
	case ATTN_AXIS_KEY:
		return S;
	case ATTN_AXIS_VALUE:
		return d_v;
	case ATTN_AXIS_ONE:
	case ATTN_AXIS_QUERY:
	case ATTN_AXIS_BATCH:
	case ATTN_AXIS_HEAD:
		break;
	}
	return 1;
}

void
attn_stage_shape(const struct attn_stages *st, enum attn_stage s,
    struct attn_shape *sh)
{
	const struct attn_stage_info *info = &attn_stage_table[s];

	memset(sh, 0, sizeof *sh);
	sh->batches = st->batches;
	sh->heads = info->per_head ? st->heads : 1;
	sh->blocks = sh->batches * sh->heads;
	sh->rows = st->T;
	sh->cols = attn_stage_block_cols(s, st->S, st->d_v) *
	    (info->per_head ? 1 : st->heads);
	sh->legend = !info->per_head && st->heads > 1 &&
	    info->cols == ATTN_AXIS_VALUE ? "T x H*d_v" : info->shape;
	if (sh->batches > 1) {
		sh->dim[sh->ndim] = sh->batches;
		sh->axis[sh->ndim++] = ATTN_AXIS_BATCH;
	}
	if (sh->heads > 1) {
		sh->dim[sh->ndim] = sh->heads;
		sh->axis[sh->ndim++] = ATTN_AXIS_HEAD;
	}
	sh->dim[sh->ndim] = sh->rows;
	sh->axis[sh->ndim++] = ATTN_AXIS_QUERY;
	sh->dim[sh->ndim] = sh->cols;
	sh->axis[sh->ndim++] = info->cols;
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
