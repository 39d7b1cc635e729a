/*
 * testutil.h - helpers that several unit suites share: matrices made from
 * literals or seeded random numbers, and attn_compute and attn_run
 * expected to work.
 * They fail the current Check test on any error.
 */
#ifndef ATTN_TESTUTIL_H
#define ATTN_TESTUTIL_H

#include <check.h>

#include "attn.h"
#include "ref.h"

/* A rows x cols matrix holding values row by row; free with
 * attn_matrix_free. */
struct attn_matrix matrix_from(size_t rows, size_t cols,
    const double *values);

/* A rows x cols matrix of uniform numbers in [lo, hi). */
struct attn_matrix matrix_random(struct ref_rng *rng, size_t rows,
    size_t cols, double lo, double hi);

/* Compute with the given scale mode and value, expecting success. */
void compute_ok(enum attn_scale_mode mode, double scale,
    const struct attn_matrix *q, const struct attn_matrix *k,
    const struct attn_matrix *v, struct attn_stages *st);

/* attn_run expecting success. */
void run_ok(const struct attn_config *cfg, const struct attn_inputs *in,
    struct attn_stages *st);

/* Element (i, j) of stage s. */
double stage_at(const struct attn_stages *st, enum attn_stage s, size_t i,
    size_t j);

#endif
