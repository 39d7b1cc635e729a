/*
 * testutil.c - helpers shared by the unit suites (see testutil.h).
 */
#include <string.h>

#include "testutil.h"

/* A rows x cols matrix holding values row by row. */
struct attn_matrix
matrix_from(size_t rows, size_t cols, const double *values)
{
	struct attn_matrix m;

	ck_assert_int_eq(attn_matrix_alloc(&m, rows, cols, NULL), ATTN_OK);
	if (rows * cols != 0)
		memcpy(m.data, values, rows * cols * sizeof *values);
	return m;
}

/* A rows x cols matrix of uniform numbers in [lo, hi). */
struct attn_matrix
matrix_random(struct ref_rng *rng, size_t rows, size_t cols, double lo,
    double hi)
{
	struct attn_matrix m;

	ck_assert_int_eq(attn_matrix_alloc(&m, rows, cols, NULL), ATTN_OK);
	ref_rng_fill(rng, m.data, rows * cols, lo, hi);
	return m;
}

/* Compute with the given scale mode and value, expecting success. */
void
compute_ok(enum attn_scale_mode mode, double scale,
    const struct attn_matrix *q, const struct attn_matrix *k,
    const struct attn_matrix *v, struct attn_stages *st)
{
	struct attn_config cfg;
	struct attn_error err;
	enum attn_status rc;

	attn_config_init(&cfg);
	cfg.scale_mode = mode;
	cfg.scale = scale;
	memset(&err, 0, sizeof err);
	rc = attn_compute(&cfg, q, k, v, st, &err);
	ck_assert_msg(rc == ATTN_OK, "attn_compute: status %d: %s", rc,
	    err.msg);
}

/* attn_run expecting success. */
void
run_ok(const struct attn_config *cfg, const struct attn_inputs *in,
    struct attn_stages *st)
{
	struct attn_error err;
	enum attn_status rc;

	memset(&err, 0, sizeof err);
	rc = attn_run(cfg, in, st, &err);
	ck_assert_msg(rc == ATTN_OK, "attn_run: status %d: %s", rc, err.msg);
}

/* Element (i, j) of stage s. */
double
stage_at(const struct attn_stages *st, enum attn_stage s, size_t i, size_t j)
{
	return *attn_at(&st->stage[s], i, j);
}

