/*
 * check_stream_grad.c - what the streaming kernel's backward pass
 * (lib/kernel_stream_grad.c) promises beyond what every kernel's does
 * (check_grad.c runs the long double reference, the finite differences
 * and autograd's case on it too): it gives the reference kernel's bytes
 * for every backward stage (one arithmetic), with and without the T x S
 * stages held (which take the element path or the vector loops); every
 * instruction set and thread count gives the same bytes; it names an
 * overflow as the reference kernel does; it reports progress as a phase
 * of its own; and it holds no T x S matrix when none is asked for.
 *
 * Dims: B batches, H query heads, G KV heads, T query rows, S keys, d_k
 * and d_v columns per head.
 */
#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "ref.h"
#include "suites.h"
#include "testutil.h"
#include "vcase.h"

/* The backward stages without their T x S ones: what the vector loops
 * compute (with lse, which every run holds). */
#define GRAD_NARROW (STAGE(DELTA) | STAGE(GRAD_Q) | STAGE(GRAD_K) | \
	STAGE(GRAD_V))

/* Fail unless every stage of want is held by both and is the same
 * bytes, nan or not (expect_stage_bytes), naming g's case. */
static void
expect_bytes(const struct gcase *g, const char *what, unsigned want,
    const struct attn_stages *a, const struct attn_stages *b)
{
	expect_stage_bytes(g->c.what, what, want, a, b);
}

/* Run the streaming kernel with the loops of simd and `threads`
 * threads, keeping want; expects success. */
static void
stream_ok(const struct gcase *g, const struct attn_simd *simd,
    size_t threads, unsigned want, struct attn_stages *st)
{
	struct attn_config cfg = g->c.cfg;
	struct attn_problem p;
	struct attn_error err;

	cfg.threads = threads;
	memset(&err, 0, sizeof err);
	ck_assert_int_eq(attn_problem_init(&p, &cfg, &g->in, want, &err),
	    ATTN_OK);
	ck_assert_int_eq(attn_stages_alloc(&p, st, &err), ATTN_OK);
	ck_assert_msg(attn_stream_run(&p, simd, st, &err) == ATTN_OK,
	    "%s: %s", g->c.what, err.msg);
}

/* Q, K, V and dO of one batch, uniform in [-1, 1] from seed: T queries
 * of H heads of d_k and d_v columns, S keys of G heads; in views them. */
struct one_batch {
	struct attn_matrix q, k, v, d_out;
	struct attn_inputs in;
};

static void
one_batch_make(struct one_batch *o, uint64_t seed, size_t T, size_t S,
    size_t H, size_t G, size_t d_k, size_t d_v)
{
	struct ref_rng rng;

	ref_rng_seed(&rng, seed);
	o->q = matrix_random(&rng, T, H * d_k, -1.0, 1.0);
	o->k = matrix_random(&rng, S, G * d_k, -1.0, 1.0);
	o->v = matrix_random(&rng, S, G * d_v, -1.0, 1.0);
	o->d_out = matrix_random(&rng, T, H * d_v, -1.0, 1.0);
	memset(&o->in, 0, sizeof o->in);
	o->in.batches = 1;
	o->in.q = o->q;
	o->in.k = o->k;
	o->in.v = o->v;
	o->in.d_out = o->d_out;
}

static void
one_batch_free(struct one_batch *o)
{
	attn_matrix_free(&o->q);
	attn_matrix_free(&o->k);
	attn_matrix_free(&o->v);
	attn_matrix_free(&o->d_out);
}

#define GRAD_SEED 0x57EA6000u
#ifdef UNDER_ASAN
#define GRAD_CASES 6	/* suites.h says why */
#else
#define GRAD_CASES 24
#endif

/*
 * The reference kernel's bytes for every backward stage, on large cases
 * of every variant: with every stage held (the T x S ones written from
 * the tiles, element by element) and with the narrow set (wholly kept
 * plain tiles through the vector loops), on every instruction set this
 * CPU has, with 3 threads.
 */
START_TEST(the_backward_gives_the_reference_kernels_bytes)
{
	const unsigned sets[] = { ATTN_STAGES_ALL | ATTN_STAGES_GRAD,
	    GRAD_NARROW };
	struct gcase g;
	struct attn_stages ref, st;
	size_t n;
	int isa;

	gcase_make_large(&g, GRAD_SEED + (uint64_t)_i);
	run_ok(KERNEL_REFERENCE, &g.c.cfg, &g.in, sets[0], &ref);
	for (n = 0; n < 2; n++)
		for (isa = ATTN_ISA_C; isa < ATTN_ISA_COUNT; isa++) {
			struct attn_config cfg = g.c.cfg;
			char what[64];

			if (attn_simd_get((enum attn_isa)isa) == NULL)
				continue;
			cfg.isa = (enum attn_isa)isa;
			cfg.threads = 3;
			run_ok(KERNEL_STREAM, &cfg, &g.in, sets[n], &st);
			snprintf(what, sizeof what, "%s, %s",
			    attn_isa_name((enum attn_isa)isa), n == 0 ?
			    "every stage" : "no T x S stage");
			expect_bytes(&g, what, sets[n] & ATTN_STAGES_GRAD, &ref,
			    &st);
			expect_bytes(&g, what, STAGE(LSE), &ref, &st);
			attn_stages_free(&st);
		}
	attn_stages_free(&ref);
	gcase_free(&g);
}
END_TEST

/* 1, 2, 3 and 7 threads give the same bytes on every instruction set,
 * and each backward stage alone is the same bytes as with the others. */
START_TEST(the_thread_count_changes_no_bit_of_the_backward)
{
	static const size_t threads[] = { 2, 3, 7 };
	static const enum attn_stage alone[] = {
		ATTN_STAGE_GRAD_Q, ATTN_STAGE_GRAD_K, ATTN_STAGE_GRAD_V,
		ATTN_STAGE_DELTA,
	};
	struct gcase g;
	struct attn_stages one, got;
	size_t level, t, n;

	gcase_make_large(&g, GRAD_SEED + 100 + (uint64_t)_i);
	for (level = ATTN_ISA_C; level < ATTN_ISA_COUNT; level++) {
		const struct attn_simd *simd = attn_simd_get(
		    (enum attn_isa)level);

		if (simd == NULL)
			continue;
		stream_ok(&g, simd, 1, GRAD_NARROW, &one);
		for (t = 0; t < sizeof threads / sizeof threads[0]; t++) {
			char what[48];

			snprintf(what, sizeof what, "%s, %zu threads",
			    simd->name, threads[t]);
			stream_ok(&g, simd, threads[t], GRAD_NARROW, &got);
			expect_bytes(&g, what, GRAD_NARROW, &one, &got);
			attn_stages_free(&got);
		}
		for (n = 0; n < sizeof alone / sizeof alone[0]; n++) {
			stream_ok(&g, simd, 2, ATTN_STAGE_BIT(alone[n]), &got);
			expect_bytes(&g, attn_stage_table[alone[n]].name,
			    ATTN_STAGE_BIT(alone[n]), &one, &got);
			attn_stages_free(&got);
		}
		attn_stages_free(&one);
	}
	gcase_free(&g);
}
END_TEST

/*
 * Multi-query attention, one batch: one (batch, KV head) pair, fewer
 * than the threads, so the backward's tasks are its key blocks, each a
 * step behind the one before (a wave).  Six query heads, 230 queries,
 * 400 keys (five key blocks): 2, 3 and 7 threads give the bytes of 1
 * thread, which runs the pair whole, and of the reference kernel, plain
 * (case 0), causal with a window (1), and with softcap, ALiBi and the
 * T x S stages held (2), on every instruction set.
 */
START_TEST(multi_query_attention_shares_its_key_blocks_out)
{
	static const size_t threads[] = { 1, 2, 3, 7 };
	const size_t T = 230, S = 400, H = 6, d_k = 40, d_v = 24;
	const unsigned want = _i == 2 ? ATTN_STAGES_GRAD : GRAD_NARROW;
	struct one_batch o;
	struct attn_config cfg;
	struct attn_stages ref, st;
	size_t t;
	int isa;

	one_batch_make(&o, 0x3A7Eu + (uint64_t)_i, T, S, H, 1, d_k, d_v);
	attn_config_init(&cfg);
	cfg.heads = H;
	cfg.kv_heads = 1;
	if (_i == 1) {
		cfg.causal = 1;
		cfg.window = 1;
		cfg.window_left = 150;
		cfg.window_right = 30;
	}
	if (_i == 2) {
		cfg.softcap = 2.5;
		cfg.alibi = 1;
	}
	run_ok(KERNEL_REFERENCE, &cfg, &o.in, want, &ref);
	for (isa = ATTN_ISA_C; isa < ATTN_ISA_COUNT; isa++)
		for (t = 0; t < sizeof threads / sizeof threads[0]; t++) {
			struct attn_config c = cfg;
			struct gcase g;
			char what[48];

			if (attn_simd_get((enum attn_isa)isa) == NULL)
				continue;
			c.isa = (enum attn_isa)isa;
			c.threads = threads[t];
			run_ok(KERNEL_STREAM, &c, &o.in, want, &st);
			snprintf(what, sizeof what, "%s, %zu threads",
			    attn_isa_name((enum attn_isa)isa), threads[t]);
			snprintf(g.c.what, sizeof g.c.what, "multi-query "
			    "attention, case %d", _i);
			expect_bytes(&g, what, want & ATTN_STAGES_GRAD, &ref,
			    &st);
			attn_stages_free(&st);
		}
	attn_stages_free(&ref);
	one_batch_free(&o);
}
END_TEST

/* ---------------------------------------------------------------- errors */

/*
 * A gradient that overflows: the streaming kernel names the same element
 * of the same stage as the reference kernel, whichever task finds it.
 * Two batches of two heads sharing a KV head, T = 130 and S = 200 (two
 * key blocks, three query blocks); dO and V huge at places: dP
 * overflows (case 0) where causal masks it (case 1, found since the
 * bound of d_v max|dO| max|V| says it may), or only dK (case 2, in
 * batch 1 and 2) or dQ (case 3, in batch 2) asked for alone.
 */
START_TEST(an_overflowing_gradient_is_named_as_the_reference_kernel_names_it)
{
	struct ref_rng rng;
	struct attn_matrix q, k, v, d_out;
	struct attn_inputs in;
	struct attn_config cfg;
	const size_t T = 130, S = 200, d = 3;
	unsigned want = ATTN_STAGES_GRAD;
	size_t n, c;

	ref_rng_seed(&rng, 0x0F20u + (uint64_t)_i);
	q = matrix_random(&rng, 2 * T, 2 * d, -1.0, 1.0);
	k = matrix_random(&rng, 2 * S, d, -1.0, 1.0);
	v = matrix_random(&rng, 2 * S, d, -1.0, 1.0);
	d_out = matrix_random(&rng, 2 * T, 2 * d, -1.0, 1.0);
	attn_config_init(&cfg);
	cfg.heads = 2;
	cfg.kv_heads = 1;
	switch (_i) {
	case 0:	/* dP in batch 2, head 2, two places */
		*attn_at(&d_out, T + 100, d) = 1e300;
		*attn_at(&d_out, T + 40, d + 1) = 1e300;
		*attn_at(&v, S + 150, 0) = 1e300;
		*attn_at(&v, S + 170, 1) = 1e300;
		break;
	case 1:	/* dP where causal masks it */
		cfg.causal = 1;
		*attn_at(&d_out, 3, 2) = 1e300;
		*attn_at(&v, 190, 2) = 1e300;
		break;
	case 2:	/* dK alone: Q huge in a column K has 0 in */
		for (n = 0; n < 2 * S; n++)
			*attn_at(&k, n, 0) = 0.0;
		for (n = 0; n < 2 * T; n++)
			for (c = 0; c < 2 * d; c++)
				*attn_at(&d_out, n, c) *= 1e6;
		*attn_at(&q, 7, 0) = 1.5e308;
		*attn_at(&q, T + 7, d) = 1.5e308;
		want = STAGE(GRAD_K);
		break;
	default:	/* dQ alone: K huge in a column Q has 0 in */
		for (n = 0; n < 2 * T; n++) {
			*attn_at(&q, n, 1) = *attn_at(&q, n, d + 1) = 0.0;
			for (c = 0; c < 2 * d; c++)
				*attn_at(&d_out, n, c) *= 1e6;
		}
		*attn_at(&k, S + 120, 1) = 1.7e308;
		*attn_at(&k, S + 121, 1) = 1.7e308;
		want = STAGE(GRAD_Q);
		break;
	}
	memset(&in, 0, sizeof in);
	in.batches = 2;
	in.q = q;
	in.k = k;
	in.v = v;
	in.d_out = d_out;
	expect_same_error(&cfg, &in, want);
	attn_matrix_free(&q);
	attn_matrix_free(&k);
	attn_matrix_free(&v);
	attn_matrix_free(&d_out);
}
END_TEST

/* ---------------------------------------------------------------- progress */

/* The backward pass is a phase of its own after the forward's query
 * blocks: a call a key block of each batch and KV head, counting up to
 * all of them, one call at a time, so the line never stays at 100% of
 * the forward pass while the backward one runs. */
START_TEST(the_backward_pass_reports_its_key_blocks)
{
	struct one_batch o;
	struct attn_config cfg;
	struct attn_stages st;
	struct progress_log log;
	const size_t T = 300, S = 200, d = 4, H = 4, G = 2;

	progress_log_init(&log);
	one_batch_make(&o, 0x9411u, T, S, H, G, d, d);
	attn_config_init(&cfg);
	cfg.heads = H;
	cfg.kv_heads = G;
	cfg.threads = 3;
	cfg.progress = progress_note;
	cfg.progress_arg = &log;
	run_ok(KERNEL_STREAM, &cfg, &o.in, STAGE(GRAD_K), &st);
	/* 2 KV heads of ceil(200 / 96) = 3 key blocks */
	ck_assert_int_eq(log.phases, 2);
	ck_assert_str_eq(log.first, "query blocks");
	ck_assert_str_eq(log.what, "key blocks of the backward pass");
	ck_assert_uint_eq(log.last, 6);
	ck_assert_uint_eq(log.total, 6);
	ck_assert_int_eq(log.overlapped, 0);
	ck_assert_int_eq(log.backwards, 0);
	attn_stages_free(&st);
	one_batch_free(&o);
}
END_TEST

/* ---------------------------------------------------------------- memory */

/*
 * grad_k of T = S = 2048 with one head: a T x S matrix would be 32 MB,
 * and the reference kernel holds several.  The streaming kernel's plan
 * stays under a quarter of one (its buffers of 256 KiB or more are
 * charged as whole 2 MiB pages), and so does the run: it succeeds on a
 * memory account that refuses any more; asked for grad_scaled too, the
 * plan counts its stack.
 */
START_TEST(the_backward_holds_no_t_by_s_matrix)
{
	const size_t T = 2048, S = 2048, d = 16;
	const size_t txs = T * S * sizeof(double);
	struct ref_rng rng;
	struct attn_matrix q, k, v, d_out;
	struct attn_config cfg;
	struct attn_inputs in;
	struct attn_stages st;
	struct attn_error err;
	struct attn_memory *m;
	size_t plan;

	ref_rng_seed(&rng, 0x3E30u);
	q = matrix_random(&rng, T, d, -1.0, 1.0);
	k = matrix_random(&rng, S, d, -1.0, 1.0);
	v = matrix_random(&rng, S, d, -1.0, 1.0);
	d_out = matrix_random(&rng, T, d, -1.0, 1.0);
	memset(&in, 0, sizeof in);
	in.batches = 1;
	in.q = q;
	in.k = k;
	in.v = v;
	in.d_out = d_out;
	attn_config_init(&cfg);
	cfg.threads = 2;
	memset(&err, 0, sizeof err);
	ck_assert_int_eq(attn_plan(&cfg, &in, STAGE(GRAD_K), &plan, &err),
	    ATTN_OK);
	ck_assert_msg(plan < txs / 4, "plan %zu", plan);
	/* what the account refuses past its limit fails the run */
	m = attn_memory_new(txs / 4, "TEST_LIMIT");
	ck_assert_ptr_nonnull(m);
	attn_memory_use(m);
	ck_assert_msg(attn_run(&cfg, &in, STAGE(GRAD_K), &st, &err) ==
	    ATTN_OK, "%s", err.msg);
	attn_stages_free(&st);
	ck_assert_uint_eq(attn_memory_held(m), 0);
	attn_memory_use(NULL);
	attn_memory_free(m);
	ck_assert_int_eq(attn_plan(&cfg, &in, STAGE(GRAD_K) |
	    STAGE(GRAD_SCALED), &plan, &err), ATTN_OK);
	ck_assert_uint_ge(plan, txs);
	attn_matrix_free(&q);
	attn_matrix_free(&k);
	attn_matrix_free(&v);
	attn_matrix_free(&d_out);
}
END_TEST

Suite *
stream_grad_suite(void)
{
	Suite *s = suite_create("stream_grad");
	TCase *tc = tcase_create("bytes");

	tcase_add_loop_test(tc, the_backward_gives_the_reference_kernels_bytes,
	    0, GRAD_CASES);
	tcase_add_loop_test(tc,
	    the_thread_count_changes_no_bit_of_the_backward, 0, 6);
	tcase_add_loop_test(tc,
	    multi_query_attention_shares_its_key_blocks_out, 0, 3);
	suite_add_tcase(s, tc);

	tc = tcase_create("errors");
	tcase_add_loop_test(tc,
	    an_overflowing_gradient_is_named_as_the_reference_kernel_names_it,
	    0, 4);
	suite_add_tcase(s, tc);

	tc = tcase_create("progress and memory");
	tcase_add_test(tc, the_backward_pass_reports_its_key_blocks);
	tcase_add_test(tc, the_backward_holds_no_t_by_s_matrix);
	suite_add_tcase(s, tc);
	return s;
}
