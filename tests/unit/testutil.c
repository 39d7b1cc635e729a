/*
 * testutil.c - helpers shared by the unit suites (see testutil.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "kernel_ref.h"
#include "testutil.h"

enum kernel_id
test_kernel(int n)
{
	ck_assert_int_ge(n, 0);
	ck_assert_int_lt(n, NKERNELS);
	return (enum kernel_id)n;
}

/* The ops of kernel k. */
static const struct attn_kernel_ops *
kernel_ops(enum kernel_id k)
{
	return k == KERNEL_STREAM ? &attn_kernel_stream : &kernel_ref;
}

const char *
kernel_name(enum kernel_id k)
{
	return kernel_ops(k)->name;
}

unsigned
kernel_stages(enum kernel_id k)
{
	return kernel_ops(k)->stages | ATTN_STAGES_PROJ | ATTN_STAGES_REDUCE;
}

int
kernel_computes(enum kernel_id k, unsigned want)
{
	return (want & ~kernel_stages(k)) == 0;
}

enum attn_status
run_kernel(enum kernel_id k, const struct attn_config *cfg,
    const struct attn_inputs *in, unsigned want, struct attn_stages *out,
    struct attn_error *err)
{
	if (k == KERNEL_STREAM)
		return attn_run(cfg, in, want, out, err);
	return attn_run_kernel(kernel_ops(k), cfg, in, want, out, err);
}

enum attn_status
plan_kernel(enum kernel_id k, const struct attn_config *cfg,
    const struct attn_inputs *in, unsigned want, size_t *bytes,
    struct attn_error *err)
{
	if (k == KERNEL_STREAM)
		return attn_plan(cfg, in, want, bytes, err);
	return attn_plan_kernel(kernel_ops(k), cfg, in, want, bytes, err);
}

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

enum attn_status
read_exact(const char *name, const char *text, enum attn_format fmt,
    unsigned flags, struct attn_array *out, struct attn_error *err)
{
	size_t len = strlen(text);
	char *buf = malloc(len != 0 ? len : 1);
	enum attn_status st;

	ck_assert_ptr_nonnull(buf);
	memcpy(buf, text, len);
	memset(err, 0, sizeof *err);
	st = attn_read_array(name, buf, len, fmt, flags, out, err);
	free(buf);
	return st;
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

void
compute_ok(enum kernel_id kernel, unsigned want, enum attn_scale_mode mode,
    double scale, const struct attn_matrix *q, const struct attn_matrix *k,
    const struct attn_matrix *v, struct attn_stages *st)
{
	struct attn_config cfg;
	struct attn_inputs in;

	attn_config_init(&cfg);
	cfg.scale_mode = mode;
	cfg.scale = scale;
	memset(&in, 0, sizeof in);
	in.batches = 1;
	in.q = *q;
	in.k = *k;
	in.v = *v;
	run_ok(kernel, &cfg, &in, want, st);
}

void
run_ok(enum kernel_id kernel, const struct attn_config *cfg,
    const struct attn_inputs *in, unsigned want, struct attn_stages *st)
{
	struct attn_error err;
	enum attn_status rc;

	memset(&err, 0, sizeof err);
	rc = run_kernel(kernel, cfg, in, want, st, &err);
	ck_assert_msg(rc == ATTN_OK, "attn_run (%s kernel): status %d: %s",
	    kernel_name(kernel), rc, err.msg);
	ck_assert_uint_eq(st->have & want, want);
}

void
expect_same(const char *what, const struct attn_matrix *a,
    const struct attn_matrix *b)
{
	size_t i, j;

	ck_assert_uint_eq(a->rows, b->rows);
	ck_assert_uint_eq(a->cols, b->cols);
	for (i = 0; i < a->rows; i++)
		for (j = 0; j < a->cols; j++) {
			double x = *attn_at(a, i, j), y = *attn_at(b, i, j);

			if (!(x == y || (isnan(x) && isnan(y))))
				ck_abort_msg("%s[%zu][%zu]: %.17g but %.17g",
				    what, i, j, x, y);
		}
}

void
expect_stage_bytes(const char *what, const char *how, unsigned want,
    const struct attn_stages *a, const struct attn_stages *b)
{
	size_t s, i;

	for (s = 0; s < ATTN_STAGE_COUNT; s++) {
		const struct attn_matrix *x = &a->stage[s], *y = &b->stage[s];

		if (!(want & ATTN_STAGE_BIT(s)))
			continue;
		ck_assert_msg(x->data != NULL && y->data != NULL, "%s, %s: %s "
		    "not held", what, how, attn_stage_table[s].name);
		ck_assert_uint_eq(x->rows * x->cols, y->rows * y->cols);
		for (i = 0; i < x->rows * x->cols; i++)
			if (memcmp(&x->data[i], &y->data[i],
			    sizeof x->data[i]) != 0)
				ck_abort_msg("%s, %s: %s[%zu] is %a and %a",
				    what, how, attn_stage_table[s].name, i,
				    x->data[i], y->data[i]);
	}
}

double
stage_at(const struct attn_stages *st, enum attn_stage s, size_t i, size_t j)
{
	/* Not ck_assert: it records a check point on every call. */
	if (!(st->have & ATTN_STAGE_BIT(s)))
		ck_abort_msg("stage %s is not held", attn_stage_table[s].name);
	return *attn_at(&st->stage[s], i, j);
}

double
block_at(const struct attn_stages *st, enum attn_stage s, size_t b,
    size_t h, size_t i, size_t j)
{
	struct attn_matrix m = attn_stage_block(st, s, b, h);

	return *attn_at(&m, i, j);
}

void
progress_log_init(struct progress_log *log)
{
	memset(log, 0, sizeof *log);
	atomic_init(&log->inside, 0);
}

void
progress_note(void *arg, const char *what, size_t done, size_t total)
{
	struct progress_log *log = arg;

	if (atomic_fetch_add(&log->inside, 1) != 0)
		log->overlapped = 1;
	if (log->what == NULL || strcmp(what, log->what) != 0) {
		if (log->phases++ == 0)
			snprintf(log->first, sizeof log->first, "%s", what);
		log->last = 0;
	}
	log->what = what;
	log->backwards |= done <= log->last;
	log->last = done;
	log->total = total;
	log->calls++;
	atomic_fetch_sub(&log->inside, 1);
}

void
expect_same_error(const struct attn_config *cfg, const struct attn_inputs *in,
    unsigned want)
{
	struct attn_config c = *cfg;
	struct attn_stages st;
	struct attn_error e1, e2;
	enum attn_status r1, r2;

	memset(&e1, 0, sizeof e1);
	memset(&e2, 0, sizeof e2);
	r1 = run_kernel(KERNEL_REFERENCE, &c, in, want, &st, &e1);
	c.threads = 3;
	r2 = run_kernel(KERNEL_STREAM, &c, in, want, &st, &e2);
	ck_assert_int_eq(r1, ATTN_ERR_DATA);
	ck_assert_int_eq(r2, ATTN_ERR_DATA);
	ck_assert_str_eq(e2.msg, e1.msg);
}
