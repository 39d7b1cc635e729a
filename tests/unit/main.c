/*
 * main.c - runs every unit suite; exits 0 only when all pass.
 *
 * Two settings make the run hold on a loaded machine (make -j8 check on
 * two cores) and under the sanitizers, and the environment overrides
 * both.  A test's timeout is 60 s, not Check's 4: Check times the wall
 * clock, and a test of a second's CPU under AddressSanitizer that waits
 * for a core behind seven other suites took more than 4 s and failed.
 * No test takes more than a few seconds alone, so 60 s still means a
 * hang.  Under AddressSanitizer the tests run in one process
 * (CK_FORK=no): a fork per test, with its copy of the shadow memory's
 * page tables and a leak check at each exit, made that run six times
 * slower than its tests (7 minutes, not 1, for 1757 tests).  One
 * process finds the same memory errors, and LeakSanitizer the same
 * leaks when it exits; the plain run, which make check runs first,
 * still forks, so a test that crashes or hangs is isolated and timed
 * out there.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>

#include "suites.h"

int
main(void)
{
	Suite *(*const suites[])(void) = {
		error_suite, num_suite, num_bulk_suite, read_suite,
		read_repr_suite, read_json_suite, read_jsonl_suite,
		stage_suite, run_suite, kernel_suite, variants_suite,
		stream_suite, stream_grad_suite, props_suite, api_suite, grad_suite, random_suite,
		sinks_suite, layer_suite, rope_suite, project_suite,
		npy_suite, read_npz_suite, write_npz_suite, layout_suite,
		grad_reduce_suite,
		emulate_suite, compare_suite, mask_suite, varlen_suite,
		memory_suite, threads_suite, suggest_suite, fp8_suite,
		paged_suite,
		dropout_suite, split_suite,
	};
	SRunner *sr;
	size_t i;
	int failed;

	/* read by tcase_create, so before the suites are made */
	setenv("CK_DEFAULT_TIMEOUT", "60", 0);
	sr = srunner_create(NULL);
	for (i = 0; i < sizeof suites / sizeof suites[0]; i++)
		srunner_add_suite(sr, suites[i]());
#ifdef UNDER_ASAN
	if (getenv("CK_FORK") == NULL)	/* which set_fork_status overrides */
		srunner_set_fork_status(sr, CK_NOFORK);
#endif
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
