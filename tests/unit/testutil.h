/*
 * testutil.h - helpers that several unit suites share: matrices made from
 * literals or seeded random numbers, runs of a given kernel expected to
 * work, and KERNEL_TEST, which runs a test once per kernel.
 * They fail the current Check test on any error.
 *
 * Both kernels are tested by the same tests: a test written with
 * KERNEL_TEST(name, set) and registered with tcase_add_kernel_test runs
 * each of its cases on the library's streaming kernel (what attn_run
 * runs) and on the reference kernel (kernel_ref.c, run through
 * attn_run_kernel), each when it can compute the stages in `set`.
 */
#ifndef ATTN_TESTUTIL_H
#define ATTN_TESTUTIL_H

#include <check.h>
#include <stdatomic.h>
#include <stddef.h>

#include "attn.h"
#include "attn_io.h"
#include "ref.h"

/* The kernels under test. */
enum kernel_id {
	KERNEL_REFERENCE,	/* kernel_ref.c, the oracle */
	KERNEL_STREAM,		/* the library's, what attn_run runs */
	NKERNELS
};

/* Kernel n of the kernels under test, 0 <= n < NKERNELS. */
enum kernel_id test_kernel(int n);

/* Its name ("reference", "stream") and the stages it can compute, with
 * those of the passes and reductions that attn_run adds around it. */
const char *kernel_name(enum kernel_id k);
unsigned kernel_stages(enum kernel_id k);

/* Whether kernel k can compute every stage in want. */
int kernel_computes(enum kernel_id k, unsigned want);

/* attn_run and attn_plan with kernel k: attn_run itself for the
 * streaming kernel, attn_run_kernel for the reference one. */
enum attn_status run_kernel(enum kernel_id k, const struct attn_config *cfg,
    const struct attn_inputs *in, unsigned want, struct attn_stages *out,
    struct attn_error *err);
enum attn_status plan_kernel(enum kernel_id k, const struct attn_config *cfg,
    const struct attn_inputs *in, unsigned want, size_t *bytes,
    struct attn_error *err);

/*
 * A Check test run per case and per kernel: the body sees _i (the case),
 * kernel and stages (= set, the stages to keep), and is skipped for a
 * kernel that cannot compute them.  Register it with
 * tcase_add_kernel_test: iteration i is case i / NKERNELS on kernel
 * i % NKERNELS, each in its own process, so a failure names both in its
 * iteration number.
 */
#define KERNEL_TEST(name, set)						\
static void name##_kernel(int _i, enum kernel_id kernel,		\
    unsigned stages);							\
START_TEST(name)							\
{									\
	const enum kernel_id k_ = test_kernel(_i % NKERNELS);		\
									\
	if (kernel_computes(k_, (set)))					\
		name##_kernel(_i / NKERNELS, k_, (set));		\
}									\
END_TEST								\
static void name##_kernel(int _i CK_ATTRIBUTE_UNUSED,			\
    enum kernel_id kernel CK_ATTRIBUTE_UNUSED,			\
    unsigned stages CK_ATTRIBUTE_UNUSED)

/* Register KERNEL_TEST name for cases [start, end) on every kernel. */
#define tcase_add_kernel_test(tc, name, start, end)			\
	tcase_add_loop_test((tc), name, (start) * NKERNELS,		\
	    (end) * NKERNELS)

/* What every reader says of a value v (its text) in a mask that is not
 * 0 or 1 (lib/internal.h's MASK_VALUE_MSG, written out). */
#define MASK_MSG(v) "'" v "' in a mask: a mask holds 0 and 1 (or false " \
	"and true); an additive mask (0 to keep a key, -inf or a large " \
	"negative such as -1e9 to mask it) belongs in --bias"

/* attn_read_array of text (without its NUL) from a copy of exactly its
 * length, so that AddressSanitizer sees a read past the end; *err is
 * cleared first, and *out is the caller's either way. */
enum attn_status read_exact(const char *name, const char *text,
    enum attn_format fmt, unsigned flags, struct attn_array *out,
    struct attn_error *err);

/* Stage sets, shorter. */
#define STAGE(s) ATTN_STAGE_BIT(ATTN_STAGE_ ## s)

/* A rows x cols matrix holding values row by row; free with
 * attn_matrix_free. */
struct attn_matrix matrix_from(size_t rows, size_t cols,
    const double *values);

/* A rows x cols matrix of uniform numbers in [lo, hi). */
struct attn_matrix matrix_random(struct ref_rng *rng, size_t rows,
    size_t cols, double lo, double hi);

/* attn_compute's problem (one batch, no mask or bias) with kernel, the
 * given scale mode and value, keeping want; expects success. */
void compute_ok(enum kernel_id kernel, unsigned want,
    enum attn_scale_mode mode, double scale, const struct attn_matrix *q,
    const struct attn_matrix *k, const struct attn_matrix *v,
    struct attn_stages *st);

/* run_kernel with kernel, keeping want; expects success. */
void run_ok(enum kernel_id kernel, const struct attn_config *cfg,
    const struct attn_inputs *in, unsigned want, struct attn_stages *st);

/* Run cfg's problem on the reference kernel and on the streaming one
 * with 3 threads, keeping want: both must fail with the same data
 * error. */
void expect_same_error(const struct attn_config *cfg,
    const struct attn_inputs *in, unsigned want);

/* Fail unless a and b have one shape and equal elements (nan equals
 * nan), naming what differs. */
void expect_same(const char *what, const struct attn_matrix *a,
    const struct attn_matrix *b);

/* Fail unless every stage of want is held by a and b and is the same
 * bytes in both, nan or not, naming the case and how it ran. */
void expect_stage_bytes(const char *what, const char *how, unsigned want,
    const struct attn_stages *a, const struct attn_stages *b);

/* Element (i, j) of stage s, which must be held. */
double stage_at(const struct attn_stages *st, enum attn_stage s, size_t i,
    size_t j);

/* Element (i, j) of the block of stage s for batch b and query head h
 * (attn_stage_block). */
double block_at(const struct attn_stages *st, enum attn_stage s, size_t b,
    size_t h, size_t i, size_t j);

/* What a run reported to progress_note (attn_config.progress, with the
 * log as its arg): the calls, the phases, the last phase's name and
 * count, and whether calls overlapped or a count went backwards. */
struct progress_log {
	atomic_int inside;	/* calls running now */
	size_t calls, last, total;
	int overlapped, backwards;
	const char *what;	/* the phase of the last call */
	int phases;		/* how many phases were seen */
	char first[64];		/* the first phase's name */
};

/* Zero log before a run. */
void progress_log_init(struct progress_log *log);
void progress_note(void *arg, const char *what, size_t done, size_t total);

#endif
