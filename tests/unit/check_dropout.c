/*
 * check_dropout.c - dropout with a given keep-mask (attn_inputs.
 * dropout_mask, attn_config.dropout_p; attn(1), --dropout-mask): the
 * weights the mask keeps are scaled by 1/(1 - p) and the others are 0,
 * in the output and in the backward pass alike, while scaled, weights,
 * lse, row_max and row_sum are dropout's inputs and do not change.
 *
 * The streaming kernel gives the reference kernel's bytes for every
 * stage with a mask of each shape (B x H blocks, B blocks, one row for
 * all), every T x S stage held or none; on every kernel dropped is the
 * weights times the mask and 1/(1 - p) exactly, grad_weights dO V^T
 * likewise, output and grad_v the dropped weights times V and dO
 * (summed here in long double), and a mask that keeps everything at p =
 * 0 changes no byte.  PyTorch's autograd with the same mask is the CLI
 * case dropout-is-torch-autograd-with-the-same-mask; the emulation's
 * dropout is held to its oracle in check_emulate.c.
 *
 * Dims: B batches, H query heads, G KV heads, T query rows, S keys, d_k
 * and d_v columns per head.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "ref.h"
#include "suites.h"
#include "testutil.h"
#include "vcase.h"

/* Every stage a dropout run computes. */
#define EVERY (ATTN_STAGES_ALL | ATTN_STAGES_GRAD | ATTN_STAGES_DROPOUT)
/* No T x S stage: the streaming kernel's tiles alone. */
#define NARROW (STAGE(OUTPUT) | STAGE(DELTA) | STAGE(GRAD_Q) | \
	STAGE(GRAD_K) | STAGE(GRAD_V))

#define DROP_SEED 0xD809C0DEu
#ifdef UNDER_ASAN
#define DROP_CASES 4	/* suites.h says why */
#else
#define DROP_CASES 12
#endif

/*
 * Give g a dropout mask drawn from seed, about a quarter dropped, in
 * the shape form % 3 says: a T x S block per batch and head, one per
 * batch, or one row of S for every query; p = 0.1, 0.25 or 0.5.  With
 * --masked-rows uniform, which dropout refuses, zero.  Returns the mask
 * (the caller frees it).
 */
static struct attn_matrix
add_dropout(struct gcase *g, uint64_t seed, int form)
{
	static const double ps[] = { 0.1, 0.25, 0.5 };
	const size_t blocks = form == 0 ? g->c.B * g->c.H : form == 1 ?
	    g->c.B : 1;
	const size_t rows = form == 2 ? 1 : g->c.T;
	struct attn_matrix m;
	struct ref_rng rng;
	size_t i;

	ref_rng_seed(&rng, seed);
	m = matrix_random(&rng, blocks * rows, g->c.S, 0.0, 1.0);
	for (i = 0; i < m.rows * m.cols; i++)
		m.data[i] = m.data[i] < 0.25 ? 0.0 : 1.0;
	g->in.dropout_mask = m;
	g->in.dropout_blocks = blocks;
	g->c.cfg.dropout_p = ps[seed % 3];
	if (g->c.cfg.masked_rows == ATTN_MASKED_UNIFORM)
		g->c.cfg.masked_rows = ATTN_MASKED_ZERO;
	return m;
}

/* x and y are the same number, or both nan (a nan row's weights). */
static int
same(double x, double y)
{
	return x == y || (isnan(x) && isnan(y));
}

/* x is the sum want of terms whose magnitudes add up to mag, to 1e-12
 * of mag; nan where want is (a nan row's). */
static int
near(double x, long double want, long double mag)
{
	return isnan(want) ? isnan(x) : fabsl((long double)x - want) <=
	    1e-12L * mag + 1e-300L;
}

/*
 * The reference kernel's bytes for every stage, forward and backward,
 * on large cases of every variant with a dropout mask: every stage held
 * (tiles element by element) and no T x S stage, on every instruction
 * set this CPU has, with 3 threads.
 */
START_TEST(dropout_gives_the_reference_kernels_bytes)
{
	const unsigned sets[2] = { EVERY, NARROW };
	struct attn_stages ref, st;
	struct attn_matrix m;
	struct gcase g;
	size_t n;
	int isa;

	gcase_make_large(&g, DROP_SEED + (uint64_t)_i);
	m = add_dropout(&g, DROP_SEED + (uint64_t)_i, _i % 3);
	run_ok(KERNEL_REFERENCE, &g.c.cfg, &g.in, EVERY, &ref);
	for (n = 0; n < 2; n++)
		for (isa = ATTN_ISA_C; isa < ATTN_ISA_COUNT; isa++) {
			struct attn_config cfg = g.c.cfg;
			char how[64];

			if (attn_simd_get((enum attn_isa)isa) == NULL)
				continue;
			cfg.isa = (enum attn_isa)isa;
			cfg.threads = 3;
			run_ok(KERNEL_STREAM, &cfg, &g.in, sets[n], &st);
			snprintf(how, sizeof how, "%s, %s",
			    attn_isa_name((enum attn_isa)isa), n == 0 ?
			    "every stage" : "no T x S stage");
			expect_stage_bytes(g.c.what, how, sets[n] | STAGE(LSE),
			    &ref, &st);
			attn_stages_free(&st);
		}
	attn_stages_free(&ref);
	attn_matrix_free(&m);
	gcase_free(&g);
}
END_TEST

/* Row i of the dropout mask m of g for batch b and head h: S keep
 * values, a block per batch and head, per batch, or one for all, each
 * of T rows or one. */
static const double *
mask_row(const struct gcase *g, const struct attn_matrix *m, size_t b,
    size_t h, size_t i)
{
	const size_t blocks = g->in.dropout_blocks;
	const size_t n = blocks == 1 ? 0 : blocks == g->c.B ? b :
	    b * g->c.H + h;

	return attn_at(m, n * (m->rows / blocks) + (m->rows == blocks ? 0 :
	    i), 0);
}

/* Head (b, h) of drop against plain, the run without the mask m: dropped
 * and grad_weights are plain's weights and grad_weights times keep * r
 * to the bit, output row i the dropped weights times V in long double
 * (near). */
static void
expect_head(const struct gcase *g, const struct attn_matrix *m, double r,
    const struct attn_stages *plain, const struct attn_stages *drop,
    size_t b, size_t h)
{
	const size_t kv = attn_kv_head(h, g->c.H, g->c.G);
	size_t i, j, c;

	for (i = 0; i < g->c.T; i++) {
		const double *keep = mask_row(g, m, b, h, i);

		for (j = 0; j < g->c.S; j++) {
			const double w = block_at(plain, ATTN_STAGE_WEIGHTS, b,
			    h, i, j);
			const double dp = block_at(plain,
			    ATTN_STAGE_GRAD_WEIGHTS, b, h, i, j);

			ck_assert_msg(same(block_at(drop, ATTN_STAGE_DROPPED,
			    b, h, i, j), keep[j] != 0.0 ? w * r : 0.0),
			    "%s: dropped (%zu, %zu)", g->c.what, i, j);
			ck_assert_msg(same(block_at(drop,
			    ATTN_STAGE_GRAD_WEIGHTS, b, h, i, j), keep[j] !=
			    0.0 ? dp * r : 0.0), "%s: grad_weights (%zu, %zu)",
			    g->c.what, i, j);
		}
		for (c = 0; c < g->c.d_v; c++) {
			long double o = 0.0L, mag = 0.0L;

			for (j = 0; j < g->c.S; j++) {
				const long double t = (long double)block_at(
				    drop, ATTN_STAGE_DROPPED, b, h, i, j) *
				    *attn_at(&g->c.v, b * g->c.S + j,
				    kv * g->c.d_v + c);

				o += t;
				mag += fabsl(t);
			}
			ck_assert_msg(near(block_at(drop, ATTN_STAGE_OUTPUT, b,
			    h, i, c), o, mag), "%s: output (%zu, %zu)",
			    g->c.what, i, c);
		}
	}
}

/* grad_v of batch b's KV head kv in drop: the dropped weights^T dO of
 * its query heads, summed in long double (near). */
static void
expect_grad_v(const struct gcase *g, const struct attn_stages *drop,
    size_t b, size_t kv)
{
	size_t h, i, j, c;

	for (j = 0; j < g->c.S; j++)
		for (c = 0; c < g->c.d_v; c++) {
			long double dv = 0.0L, mag = 0.0L;

			for (h = 0; h < g->c.H; h++)
				for (i = 0; attn_kv_head(h, g->c.H, g->c.G) ==
				    kv && i < g->c.T; i++) {
					const long double t = (long double)
					    block_at(drop, ATTN_STAGE_DROPPED,
					    b, h, i, j) * *attn_at(&g->d_out,
					    b * g->c.T + i, h * g->c.d_v + c);

					dv += t;
					mag += fabsl(t);
				}
			ck_assert_msg(near(*attn_at(&drop->stage[
			    ATTN_STAGE_GRAD_V], b * g->c.S + j, kv * g->c.d_v +
			    c), dv, mag), "%s: grad_v (%zu, %zu)", g->c.what, j,
			    c);
		}
}

/*
 * On each kernel: scaled, weights, lse, row_max, row_sum and delta's
 * inputs are dropout's (the bytes of the run without it); dropped is
 * weights * mask * 1/(1 - p) and grad_weights dO V^T * mask * 1/(1 - p),
 * to the bit; output = dropped V and grad_v = dropped^T dO, summed over
 * the query heads of each KV head, to 1e-12 of the sums in long double.
 */
KERNEL_TEST(dropout_scales_what_it_keeps_and_zeroes_the_rest, EVERY)
{
	struct attn_stages plain, drop;
	struct attn_matrix m;
	struct gcase g;
	size_t b, h;
	double r;

	gcase_make(&g, DROP_SEED + 500 + (uint64_t)_i);
	m = add_dropout(&g, DROP_SEED + 500 + (uint64_t)_i, _i % 3);
	r = 1.0 / (1.0 - g.c.cfg.dropout_p);
	run_ok(kernel, &g.c.cfg, &g.in, EVERY, &drop);
	g.in.dropout_mask.data = NULL;
	run_ok(kernel, &g.c.cfg, &g.in, ATTN_STAGES_ALL | ATTN_STAGES_GRAD,
	    &plain);
	g.in.dropout_mask = m;
	expect_stage_bytes(g.c.what, "as without dropout", STAGE(SCORES) |
	    STAGE(SCALED) | STAGE(WEIGHTS) | STAGE(LSE) | STAGE(ROW_MAX) |
	    STAGE(ROW_SUM) | STAGE(MASK), &plain, &drop);
	for (b = 0; b < g.c.B; b++) {
		for (h = 0; h < g.c.H; h++)
			expect_head(&g, &m, r, &plain, &drop, b, h);
		for (h = 0; h < g.c.G; h++)
			expect_grad_v(&g, &drop, b, h);
	}
	attn_stages_free(&plain);
	attn_stages_free(&drop);
	attn_matrix_free(&m);
	gcase_free(&g);
}

/* A mask that keeps every weight, at p = 0, changes no byte of any
 * stage, on each kernel; dropped is then the weights. */
KERNEL_TEST(keeping_everything_at_p_0_changes_nothing, EVERY)
{
	struct attn_stages plain, drop;
	struct attn_matrix m;
	struct gcase g;
	size_t i;

	gcase_make(&g, DROP_SEED + 900 + (uint64_t)_i);
	m = add_dropout(&g, DROP_SEED + 900 + (uint64_t)_i, _i % 3);
	for (i = 0; i < m.rows * m.cols; i++)
		m.data[i] = 1.0;
	g.c.cfg.dropout_p = 0.0;
	run_ok(kernel, &g.c.cfg, &g.in, EVERY, &drop);
	g.in.dropout_mask.data = NULL;
	run_ok(kernel, &g.c.cfg, &g.in, ATTN_STAGES_ALL | ATTN_STAGES_GRAD,
	    &plain);
	expect_stage_bytes(g.c.what, "as without dropout", ATTN_STAGES_ALL |
	    ATTN_STAGES_GRAD, &plain, &drop);
	expect_same("dropped", &drop.stage[ATTN_STAGE_DROPPED],
	    &plain.stage[ATTN_STAGE_WEIGHTS]);
	attn_stages_free(&plain);
	attn_stages_free(&drop);
	attn_matrix_free(&m);
	gcase_free(&g);
}

/* What dropout refuses, as attn_run's errors: p outside [0, 1), a
 * mask whose blocks do not fit the scores, --masked-rows uniform,
 * dropped without a mask, and the FP8 emulation (FlashAttention 3's fp8
 * kernels have no dropout). */
START_TEST(dropout_refuses_what_it_cannot_mean)
{
	struct attn_stages st;
	struct attn_error err;
	struct attn_config cfg;
	struct attn_matrix m;
	struct gcase g;

	gcase_make(&g, DROP_SEED + 1300);
	m = add_dropout(&g, DROP_SEED + 1300, 2);
	cfg = g.c.cfg;
	cfg.dropout_p = 1.0;
	ck_assert_int_eq(attn_run(&cfg, &g.in, EVERY, &st, &err),
	    ATTN_ERR_USAGE);
	ck_assert_str_eq(err.msg, "the dropout probability must be at least "
	    "0 and below 1");
	cfg.dropout_p = -0.25;
	ck_assert_int_eq(attn_run(&cfg, &g.in, EVERY, &st, &err),
	    ATTN_ERR_USAGE);
	cfg = g.c.cfg;
	cfg.masked_rows = ATTN_MASKED_UNIFORM;
	ck_assert_int_eq(attn_run(&cfg, &g.in, EVERY, &st, &err),
	    ATTN_ERR_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "--masked-rows uniform"));
	ck_assert_int_eq(attn_emulate(&g.c.cfg, &g.in,
	    ATTN_STAGES_ALL, ATTN_PREC_FP8_E4M3, &st, &err), ATTN_ERR_USAGE);
	ck_assert_str_eq(err.msg, "the emulated fp8-e4m3 kernel takes no "
	    "dropout mask");
	g.in.dropout_blocks = 2 * g.c.B * g.c.H + 1;
	ck_assert_int_eq(attn_run(&g.c.cfg, &g.in, EVERY, &st, &err),
	    ATTN_ERR_DATA);
	ck_assert_ptr_nonnull(strstr(err.msg, "dropout mask"));
	g.in.dropout_mask.data = NULL;
	ck_assert_int_eq(attn_run(&g.c.cfg, &g.in, EVERY, &st, &err),
	    ATTN_ERR_USAGE);
	ck_assert_str_eq(err.msg, "stage dropped needs a dropout mask: it is "
	    "the weights after dropout");
	attn_matrix_free(&m);
	gcase_free(&g);
}
END_TEST

Suite *
dropout_suite(void)
{
	Suite *s = suite_create("dropout");
	TCase *tc = tcase_create("kernels");

	tcase_add_loop_test(tc, dropout_gives_the_reference_kernels_bytes, 0,
	    DROP_CASES);
	tcase_add_kernel_test(tc,
	    dropout_scales_what_it_keeps_and_zeroes_the_rest, 0, DROP_CASES);
	tcase_add_kernel_test(tc, keeping_everything_at_p_0_changes_nothing,
	    0, 6);
	suite_add_tcase(s, tc);
	tc = tcase_create("refusals");
	tcase_add_test(tc, dropout_refuses_what_it_cannot_mean);
	suite_add_tcase(s, tc);
	return s;
}
