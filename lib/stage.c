/*
 * stage.c - the stage table: the single source of truth for stage names,
 * formulas and shapes, read by --stage, --explain, the JSON keys and the
 * tests.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

const struct attn_stage_info attn_stage_table[ATTN_STAGE_COUNT] = {
	[ATTN_STAGE_SCORES] = { "scores", "Q K^T", "T x S", ATTN_AXIS_KEY, 1 },
	[ATTN_STAGE_SCALED] = { "scaled", "scores * scale", "T x S",
	    ATTN_AXIS_KEY, 1 },
	[ATTN_STAGE_WEIGHTS] = { "weights", "softmax(scaled), row by row",
	    "T x S", ATTN_AXIS_KEY, 1 },
	[ATTN_STAGE_OUTPUT] = { "output", "weights V", "T x d_v",
	    ATTN_AXIS_VALUE, 0 },
	[ATTN_STAGE_LSE] = { "lse", "log(sum(exp(scaled))), row by row",
	    "T x 1", ATTN_AXIS_ONE, 1 },
	[ATTN_STAGE_MASK] = { "mask",
	    "1 where query i may attend key j, else 0",
	    "T x S", ATTN_AXIS_KEY, 1 },
};

/* Adding a stage means adding its row above (and its test): this fails
 * until both are done, as ggml does for its op tables. */
_Static_assert(ATTN_STAGE_COUNT == 6, "update attn_stage_table");

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
