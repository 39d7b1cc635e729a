/*
 * suites.h - one Check suite per library module; main.c runs them all.
 * Add a suite: write check_<module>.c defining <module>_suite(), declare
 * it here and list it in main.c.
 */
#ifndef ATTN_SUITES_H
#define ATTN_SUITES_H

#include <check.h>

/* Under AddressSanitizer (make check's second run, four to eight times
 * slower) the costliest suites run a fraction of their random cases: the
 * plain run has them all, and the sanitizer's job is memory, which a
 * few cases of each kind exercise as well. */
#if defined(__SANITIZE_ADDRESS__)		/* gcc */
#define UNDER_ASAN 1
#elif defined(__has_feature)			/* clang */
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

Suite *error_suite(void);
Suite *num_suite(void);
Suite *num_bulk_suite(void);
Suite *read_suite(void);
Suite *read_repr_suite(void);
Suite *read_json_suite(void);
Suite *read_jsonl_suite(void);
Suite *stage_suite(void);
Suite *run_suite(void);
Suite *kernel_suite(void);
Suite *props_suite(void);
Suite *variants_suite(void);
Suite *stream_suite(void);
Suite *stream_grad_suite(void);
Suite *api_suite(void);
Suite *grad_suite(void);
Suite *random_suite(void);
Suite *sinks_suite(void);
Suite *layer_suite(void);
Suite *rope_suite(void);
Suite *project_suite(void);
Suite *npy_suite(void);
Suite *read_npz_suite(void);
Suite *write_npz_suite(void);
Suite *grad_reduce_suite(void);
Suite *layout_suite(void);
Suite *emulate_suite(void);
Suite *fp8_suite(void);
Suite *compare_suite(void);
Suite *suggest_suite(void);
Suite *mask_suite(void);
Suite *varlen_suite(void);
Suite *paged_suite(void);
Suite *memory_suite(void);
Suite *threads_suite(void);
Suite *dropout_suite(void);
Suite *split_suite(void);

#endif
