/*
 * main.c - runs every unit suite; exits 0 only when all pass.
 */
#include <stdlib.h>

#include "suites.h"

int
main(void)
{
	Suite *(*const suites[])(void) = {
		error_suite, num_suite, num_bulk_suite, read_suite,
		read_repr_suite, read_json_suite, read_jsonl_suite,
		stage_suite, run_suite, kernel_suite, variants_suite,
		stream_suite, props_suite, api_suite, grad_suite, random_suite,
		sinks_suite, layer_suite, rope_suite, project_suite,
		npy_suite, layout_suite,
		emulate_suite, compare_suite, mask_suite, memory_suite,
	};
	SRunner *sr = srunner_create(NULL);
	size_t i;
	int failed;

	for (i = 0; i < sizeof suites / sizeof suites[0]; i++)
		srunner_add_suite(sr, suites[i]());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
