/*
 * check_stage.c - the stage table, the single source of truth for stage
 * names, formulas and shapes, and attn_stage_lookup over it.
 *
 * The names are SPEC's fixed names; lookup takes a length, not a NUL, so
 * that --stage can look up the pieces of "weights,output" in place.
 */
#include <string.h>

#include "internal.h"
#include "suites.h"

/* SPEC's names, shapes and column axes, in --explain order. */
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
	suite_add_tcase(s, tc);

	tc = tcase_create("lookup");
	tcase_add_loop_test(tc, lookup_finds_each_stage_by_name, 0,
	    ATTN_STAGE_COUNT);
	tcase_add_test(tc, lookup_reads_a_name_out_of_a_list);
	tcase_add_loop_test(tc, lookup_refuses_unknown_names_and_prefixes, 0,
	    NUNKNOWN);
	suite_add_tcase(s, tc);
	return s;
}
