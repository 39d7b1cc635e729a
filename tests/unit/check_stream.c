/*
 * check_stream.c - what the streaming kernel promises beyond what every
 * kernel does (check_variants.c and check_props.c run those tests on it
 * too): its exp is within 1 ulp of expl; every instruction set and every
 * thread count gives the same bytes; it gives the reference kernel's
 * bytes for every stage on problems large enough to span several blocks
 * of queries and keys (one arithmetic); it reports an overflowing score as
 * the reference kernel does; it reports progress; and the thread pool's
 * CPU count reads cgroup quotas.
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
#include <unistd.h>

#include "internal.h"
#include "ref.h"
#include "suites.h"
#include "testutil.h"
#include "vcase.h"

/* ---------------------------------------------------------------- exp */

/* |y - exp(x)| in units of the last place of exp(x) as a double (the
 * subnormal spacing below 2^-1022). */
static double
ulp_error(double y, double x)
{
	const long double e = expl((long double)x);
	long double ulp;
	int ex;

	if (e == 0.0L)
		return y == 0.0 ? 0.0 : INFINITY;
	(void)frexpl(e, &ex);	/* e in [2^(ex-1), 2^ex) */
	ulp = ldexpl(1.0L, ex - 1 - 52 < -1074 ? -1074 : ex - 1 - 52);
	return (double)(fabsl((long double)y - e) / ulp);
}

/* The edges: exp(-inf) = 0, the last subnormals and the first zero, 1 at
 * 0 and just below. */
START_TEST(exp_edges_are_exact)
{
	static const struct {
		double x, want;
	} edge[] = {
		{ -INFINITY, 0.0 },
		{ -1e300, 0.0 },
		{ -746.0, 0.0 },
		{ -745.2, 0.0 },			/* below 2^-1075 */
		{ -745.1, 0x1p-1074 },			/* the least subnormal */
		{ -708.4, 0x0.ff15b469edf89p-1022 },	/* subnormal */
		{ 0.0, 1.0 },
		{ -0.0, 1.0 },
		{ -0x1p-1074, 1.0 },
		{ -1e-300, 1.0 },
		{ -0x1p-54, 1.0 },
		{ -1.0, 0x1.78b56362cef38p-2 },
	};
	size_t n, level;

	for (n = 0; n < sizeof edge / sizeof edge[0]; n++) {
		ck_assert_msg(attn_exp(edge[n].x) == edge[n].want,
		    "exp(%a) = %a, want %a", edge[n].x, attn_exp(edge[n].x),
		    edge[n].want);
		for (level = ATTN_ISA_C; level < ATTN_ISA_COUNT; level++) {
			const struct attn_simd *s = attn_simd_get(
			    (enum attn_isa)level);
			double x[9], y[9];
			size_t i;

			if (s == NULL)
				continue;
			/* a full vector and the scalar tail */
			for (i = 0; i < 9; i++)
				x[i] = edge[n].x;
			s->exp(x, y, 9);
			for (i = 0; i < 9; i++)
				ck_assert_msg(memcmp(&y[i], &edge[n].want,
				    sizeof y[i]) == 0, "%s: exp(%a) = %a",
				    s->name, x[i], y[i]);
		}
	}
}
END_TEST

#define EXP_POINTS 10000000u	/* 10^7 */
#define EXP_CHUNK 4096u

/* 10^7 points over the range softmax uses: a quarter on all of
 * [-746, 0], a quarter on [-40, 0] where most logits fall, a quarter
 * where the results are subnormal, a quarter within 2^-60 of 0.  Every
 * instruction set must give the same bytes, within 1 ulp of expl. */
START_TEST(exp_is_within_one_ulp_of_expl)
{
	static double x[EXP_CHUNK], y[EXP_CHUNK], z[EXP_CHUNK];
	struct ref_rng rng;
	double worst = 0.0, at = 0.0;
	size_t done, i, level;

	ref_rng_seed(&rng, 0xE4B0u);
	for (done = 0; done < EXP_POINTS; done += EXP_CHUNK) {
		for (i = 0; i < EXP_CHUNK; i++)
			switch (i % 4) {
			case 0:
				x[i] = ref_rng_uniform(&rng, -746.0, 0.0);
				break;
			case 1:
				x[i] = ref_rng_uniform(&rng, -40.0, 0.0);
				break;
			case 2:
				x[i] = ref_rng_uniform(&rng, -745.2, -708.3);
				break;
			default:
				x[i] = -ldexp(ref_rng_uniform(&rng, 0.0, 1.0),
				    -(int)ref_rng_range(&rng, 0, 60));
				break;
			}
		attn_simd_c.exp(x, y, EXP_CHUNK);
		for (i = 0; i < EXP_CHUNK; i++) {
			const double e = ulp_error(y[i], x[i]);

			if (e > worst) {
				worst = e;
				at = x[i];
			}
		}
		for (level = ATTN_ISA_C; level < ATTN_ISA_COUNT; level++) {
			const struct attn_simd *s = attn_simd_get(
			    (enum attn_isa)level);

			if (s == NULL || s == &attn_simd_c)
				continue;
			s->exp(x, z, EXP_CHUNK);
			/* (ck_assert marks a point per call: too slow
			 * here) */
			for (i = 0; i < EXP_CHUNK; i++)
				if (memcmp(&y[i], &z[i], sizeof y[i]) != 0)
					ck_abort_msg("%s: exp(%a) = %a, plain "
					    "C %a", s->name, x[i], z[i], y[i]);
		}
	}
	ck_assert_msg(worst < 1.0, "exp(%a) is %.3f ulp off", at, worst);
}
END_TEST

/* ---------------------------------------------------------------- kernels */

/* Run the streaming kernel on c's problem with the loops of simd and
 * `threads` threads, keeping want; expects success. */
static void
stream_ok(const struct vcase *c, const struct attn_simd *simd,
    size_t threads, unsigned want, struct attn_stages *st)
{
	struct attn_config cfg = c->cfg;
	struct attn_problem p;
	struct attn_inputs in;
	struct attn_error err;

	cfg.threads = threads;
	vcase_inputs(c, &in);
	memset(&err, 0, sizeof err);
	ck_assert_int_eq(attn_problem_init(&p, &cfg, &in, want, &err),
	    ATTN_OK);
	ck_assert_int_eq(attn_stages_alloc(&p, st, &err), ATTN_OK);
	ck_assert_msg(attn_stream_run(&p, simd, st, &err) == ATTN_OK,
	    "%s: %s", c->what, err.msg);
}

/* Fail unless every stage held by both is the same bytes, nan or not. */
static void
expect_bytes(const struct vcase *c, const char *what,
    const struct attn_stages *a, const struct attn_stages *b)
{
	size_t s, i;

	for (s = 0; s < ATTN_STAGE_COUNT; s++) {
		const struct attn_matrix *x = &a->stage[s], *y = &b->stage[s];

		if (x->data == NULL || y->data == NULL)
			continue;
		ck_assert_uint_eq(x->rows * x->cols, y->rows * y->cols);
		for (i = 0; i < x->rows * x->cols; i++)
			if (memcmp(&x->data[i], &y->data[i],
			    sizeof x->data[i]) != 0)
				ck_abort_msg("%s, %s: %s[%zu] is %a and %a",
				    c->what, what, attn_stage_table[s].name, i,
				    x->data[i], y->data[i]);
	}
}

/* attn_config.isa caps the loops: the plain C ones for ATTN_ISA_C, the
 * best the CPU runs at or below any other, the best of all for AUTO;
 * attn_isa_name names each as ATTN_ISA spells it. */
START_TEST(an_instruction_set_caps_the_loops)
{
	static const char *const names[ATTN_ISA_COUNT] = {
		"auto", "c", "avx2", "avx512",
	};
	const struct attn_simd *best = NULL;
	int isa;

	for (isa = ATTN_ISA_C; isa < ATTN_ISA_COUNT; isa++) {
		const struct attn_simd *s = attn_simd_get((enum attn_isa)isa);

		if (s != NULL)
			best = s;
		ck_assert_ptr_eq(attn_simd_best((enum attn_isa)isa), best);
		ck_assert_str_eq(attn_isa_name((enum attn_isa)isa),
		    names[isa]);
	}
	ck_assert_ptr_eq(attn_simd_best(ATTN_ISA_C), &attn_simd_c);
	ck_assert_ptr_eq(attn_simd_best(ATTN_ISA_AUTO), best);
	ck_assert_str_eq(attn_isa_name(ATTN_ISA_AUTO), "auto");
	ck_assert_str_eq(attn_isa_name(ATTN_ISA_COUNT), "unknown");
}
END_TEST

#define LARGE_SEED 0x57EA0000u
#define LARGE_CASES 24

/* The loops of every instruction set the CPU has give the bytes of the
 * plain C loops, for every stage and every variant. */
START_TEST(every_instruction_set_gives_the_same_bytes)
{
	struct vcase c;
	struct attn_stages want, got;
	size_t level;

	vcase_make_large(&c, LARGE_SEED + (uint64_t)_i);
	stream_ok(&c, &attn_simd_c, 1, ATTN_STAGES_ALL, &want);
	for (level = ATTN_ISA_C; level < ATTN_ISA_COUNT; level++) {
		const struct attn_simd *s = attn_simd_get(
		    (enum attn_isa)level);

		if (s == NULL || s == &attn_simd_c)
			continue;
		stream_ok(&c, s, 2, ATTN_STAGES_ALL, &got);
		expect_bytes(&c, s->name, &want, &got);
		attn_stages_free(&got);
	}
	attn_stages_free(&want);
	vcase_free(&c);
}
END_TEST

/* 1, 2, 3 and 7 threads give the same bytes, with and without the
 * T x S stages, on every instruction set the CPU has; and output alone is
 * the same bytes as output with every other stage. */
START_TEST(the_thread_count_changes_no_bit)
{
	static const size_t threads[] = { 2, 3, 7 };
	const unsigned sets[] = { ATTN_STAGES_ALL, STAGE(OUTPUT) };
	struct vcase c;
	struct attn_stages one, all, got;
	size_t level, t, n;

	vcase_make_large(&c, LARGE_SEED + 100 + (uint64_t)_i);
	for (level = ATTN_ISA_C; level < ATTN_ISA_COUNT; level++) {
		const struct attn_simd *simd = attn_simd_get(
		    (enum attn_isa)level);

		if (simd == NULL)
			continue;
		stream_ok(&c, simd, 1, ATTN_STAGES_ALL, &all);
		for (n = 0; n < 2; n++) {
			stream_ok(&c, simd, 1, sets[n], &one);
			expect_bytes(&c, "output alone", &all, &one);
			for (t = 0; t < sizeof threads / sizeof threads[0];
			    t++) {
				char what[48];

				snprintf(what, sizeof what, "%s, %zu threads",
				    simd->name, threads[t]);
				stream_ok(&c, simd, threads[t], sets[n], &got);
				expect_bytes(&c, what, &one, &got);
				attn_stages_free(&got);
			}
			attn_stages_free(&one);
		}
		attn_stages_free(&all);
	}
	vcase_free(&c);
}
END_TEST

/* The streaming kernel gives the reference kernel's bytes for every
 * stage both compute (attn(1): one arithmetic), on large cases of every
 * variant, on every instruction set this CPU has and with 3 threads;
 * and lists the same rows with no key. */
START_TEST(stream_gives_the_reference_kernels_bytes)
{
	struct vcase c;
	struct attn_inputs in;
	struct attn_stages ref, st;
	int isa;

	vcase_make_large(&c, LARGE_SEED + 200 + (uint64_t)_i);
	vcase_inputs(&c, &in);
	run_ok(KERNEL_REFERENCE, &c.cfg, &in, ATTN_STAGES_ALL, &ref);
	for (isa = ATTN_ISA_C; isa < ATTN_ISA_COUNT; isa++) {
		struct attn_config cfg = c.cfg;

		if (attn_simd_get((enum attn_isa)isa) == NULL)
			continue;
		cfg.isa = (enum attn_isa)isa;
		cfg.threads = 3;
		run_ok(KERNEL_STREAM, &cfg, &in, ATTN_STAGES_ALL, &st);
		expect_bytes(&c, attn_isa_name((enum attn_isa)isa), &ref, &st);
		ck_assert_uint_eq(st.nmasked, ref.nmasked);
		attn_stages_free(&st);
	}
	attn_stages_free(&ref);
	vcase_free(&c);
}
END_TEST

/*
 * KV heads side by side (as bhsd and bshd fold them), over several
 * blocks of keys: a worker caches a head's K and V and reads each block
 * at its place there, and a task of another KV head packs that one's;
 * 1 and 3 threads give the reference kernel's bytes.  Case 1 has the
 * heads' keys in one block (S < 128), case 2 a T of one task a head.
 */
START_TEST(kv_heads_side_by_side_read_from_a_workers_cache)
{
	static const size_t shapes[][4] = {	/* T, S, H, G */
		{ 200, 300, 4, 2 }, { 37, 90, 6, 3 }, { 20, 400, 2, 2 },
	};
	const size_t T = shapes[_i][0], S = shapes[_i][1], H = shapes[_i][2],
	    G = shapes[_i][3], d_k = 5, d_v = 3;
	struct ref_rng rng;
	struct attn_inputs in;
	struct attn_config cfg;
	struct attn_stages ref, st;
	const size_t threads[] = { 1, 3 };
	size_t t;

	ref_rng_seed(&rng, 0xCAC4Eu + (uint64_t)_i);
	memset(&in, 0, sizeof in);
	in.batches = 2;
	in.q = matrix_random(&rng, 2 * T, H * d_k, -2.0, 2.0);
	in.k = matrix_random(&rng, 2 * S, G * d_k, -2.0, 2.0);
	in.v = matrix_random(&rng, 2 * S, G * d_v, -2.0, 2.0);
	attn_config_init(&cfg);
	cfg.heads = H;
	cfg.kv_heads = G;
	run_ok(KERNEL_REFERENCE, &cfg, &in, ATTN_STAGES_ALL, &ref);
	for (t = 0; t < sizeof threads / sizeof threads[0]; t++) {
		struct vcase c;

		memset(&c, 0, sizeof c);
		snprintf(c.what, sizeof c.what, "kv heads side by side");
		cfg.threads = threads[t];
		run_ok(KERNEL_STREAM, &cfg, &in, STAGE(OUTPUT), &st);
		expect_bytes(&c, threads[t] == 1 ? "1 thread" : "3 threads",
		    &ref, &st);
		attn_stages_free(&st);
	}
	attn_stages_free(&ref);
	attn_matrix_free(&in.q);
	attn_matrix_free(&in.k);
	attn_matrix_free(&in.v);
}
END_TEST

/* ---------------------------------------------------------------- errors */

/*
 * Scores that overflow: the streaming kernel names the same score as the
 * reference kernel, whichever tasks and threads find them.  Q rows 150 and
 * 40 hold huge values; keys 7 and 300 too; with a scale of 1e300 every
 * score may overflow once scaled.
 */
START_TEST(an_overflowing_score_is_named_as_the_reference_kernel_names_it)
{
	struct ref_rng rng;
	struct attn_matrix q, k, v;
	struct attn_inputs in;
	struct attn_config cfg;
	const size_t T = 260, S = 330, d = 3;

	ref_rng_seed(&rng, 0x0F10u + (uint64_t)_i);
	q = matrix_random(&rng, 2 * T, 2 * d, -1.0, 1.0);
	k = matrix_random(&rng, 2 * S, 2 * d, -1.0, 1.0);
	v = matrix_random(&rng, 2 * S, 2 * d, -1.0, 1.0);
	attn_config_init(&cfg);
	cfg.heads = 2;
	switch (_i) {
	case 0:	/* a score overflows in batch 2, head 1, two places */
		*attn_at(&q, T + 150, 0) = 1e300;
		*attn_at(&q, T + 40, 1) = 1e300;
		*attn_at(&k, S + 300, 0) = 1e300;
		*attn_at(&k, S + 7, 1) = 1e300;
		break;
	case 1:	/* only once scaled, everywhere */
		cfg.scale_mode = ATTN_SCALE_VALUE;
		cfg.scale = 1e308;
		*attn_at(&q, 5, 0) = 100.0;
		*attn_at(&k, 9, 0) = 100.0;
		break;
	default:	/* where causal masks it: the reference still checks */
		cfg.causal = 1;
		*attn_at(&q, 3, 2) = 1e300;
		*attn_at(&k, 200, 2) = 1e300;
		break;
	}
	memset(&in, 0, sizeof in);
	in.batches = 2;
	in.q = q;
	in.k = k;
	in.v = v;
	expect_same_error(&cfg, &in, STAGE(OUTPUT));
	attn_matrix_free(&q);
	attn_matrix_free(&k);
	attn_matrix_free(&v);
}
END_TEST

/* ---------------------------------------------------------------- threads */

/* Progress comes once a block of queries, counting up to the number of
 * blocks, one call at a time. */
START_TEST(progress_counts_blocks_of_queries)
{
	struct ref_rng rng;
	struct attn_matrix q, k, v;
	struct attn_config cfg;
	struct attn_stages st;
	struct progress_log log;
	const size_t T = 1000, S = 200, d = 4, H = 2;

	progress_log_init(&log);
	ref_rng_seed(&rng, 0x9409u);
	q = matrix_random(&rng, T, H * d, -1.0, 1.0);
	k = matrix_random(&rng, S, H * d, -1.0, 1.0);
	v = matrix_random(&rng, S, H * d, -1.0, 1.0);
	attn_config_init(&cfg);
	cfg.heads = H;
	cfg.threads = 4;
	cfg.progress = progress_note;
	cfg.progress_arg = &log;
	run_ok(KERNEL_STREAM, &cfg, &(struct attn_inputs){ .batches = 1,
	    .q = q, .k = k, .v = v }, STAGE(OUTPUT), &st);
	/* 2 heads of ceil(1000 / 144) = 7 blocks */
	ck_assert_uint_eq(log.calls, 14);
	ck_assert_uint_eq(log.last, 14);
	ck_assert_uint_eq(log.total, 14);
	ck_assert_int_eq(log.overlapped, 0);
	ck_assert_int_eq(log.backwards, 0);
	ck_assert_str_eq(log.what, "query blocks");
	ck_assert_int_eq(log.phases, 1);
	attn_stages_free(&st);
	attn_matrix_free(&q);
	attn_matrix_free(&k);
	attn_matrix_free(&v);
}
END_TEST

/* The phases that do not run on the pool report too, once a (batch,
 * head) block, named: the reference kernel with the backward pass (case
 * 0) and without it (1), and the emulated kernel (2), which --check runs
 * after attn's own run. */
START_TEST(every_long_phase_reports_its_heads)
{
	static const char *const what[] = { "heads, forward and backward",
	    "heads", "query blocks of the emulated fp16 kernel" };
	struct ref_rng rng;
	struct attn_matrix q, k, v, d_out;
	struct attn_config cfg;
	struct attn_stages st;
	struct attn_inputs in;
	struct attn_error err;
	struct progress_log log;
	const size_t B = 2, T = 5, S = 7, d = 3, H = 3;

	progress_log_init(&log);
	ref_rng_seed(&rng, 0x9410u);
	q = matrix_random(&rng, B * T, H * d, -1.0, 1.0);
	k = matrix_random(&rng, B * S, H * d, -1.0, 1.0);
	v = matrix_random(&rng, B * S, H * d, -1.0, 1.0);
	d_out = matrix_random(&rng, B * T, H * d, -1.0, 1.0);
	memset(&in, 0, sizeof in);
	in.batches = B;
	in.q = q;
	in.k = k;
	in.v = v;
	in.d_out = d_out;
	attn_config_init(&cfg);
	cfg.heads = H;
	cfg.progress = progress_note;
	cfg.progress_arg = &log;
	if (_i == 2) {
		memset(&err, 0, sizeof err);
		ck_assert_int_eq(attn_emulate(&cfg, &in, STAGE(OUTPUT),
		    ATTN_PREC_FP16, &st, &err), ATTN_OK);
	} else {
		run_ok(KERNEL_REFERENCE, &cfg, &in, _i == 0 ?
		    STAGE(GRAD_Q) : STAGE(WEIGHTS), &st);
	}
	ck_assert_uint_eq(log.calls, B * H);
	ck_assert_uint_eq(log.last, B * H);
	ck_assert_uint_eq(log.total, B * H);
	ck_assert_int_eq(log.backwards, 0);
	ck_assert_int_eq(log.phases, 1);
	ck_assert_str_eq(log.what, what[_i]);
	attn_stages_free(&st);
	attn_matrix_free(&q);
	attn_matrix_free(&k);
	attn_matrix_free(&v);
	attn_matrix_free(&d_out);
}
END_TEST

static const struct {
	const char *quota, *period;
	size_t cpus;
} quota_cases[] = {
	{ "max", "100000\n", 0 },		/* v2, no quota */
	{ "200000", "100000\n", 2 },
	{ "150000", "100000", 2 },		/* rounded up */
	{ "50000", "100000", 1 },
	{ "-1\n", "100000\n", 0 },		/* v1, no quota */
	{ "400000\n", "100000\n", 4 },
	{ "", "100000", 0 },
	{ "100", "0", 0 },
	{ "junk", "1", 0 },
};

START_TEST(a_cgroup_quota_is_read_as_cpus)
{
	ck_assert_uint_eq(attn_cgroup_cpus(quota_cases[_i].quota,
	    quota_cases[_i].period), quota_cases[_i].cpus);
}
END_TEST

START_TEST(the_cpu_count_is_at_most_the_online_cpus)
{
	const long online = sysconf(_SC_NPROCESSORS_ONLN);
	const size_t n = attn_cpu_count();

	ck_assert_uint_ge(n, 1);
	if (online > 0)
		ck_assert_uint_le(n, (size_t)online);
}
END_TEST

Suite *
stream_suite(void)
{
	Suite *s = suite_create("stream");
	TCase *tc = tcase_create("exp");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, exp_edges_are_exact);
	tcase_add_test(tc, exp_is_within_one_ulp_of_expl);
	suite_add_tcase(s, tc);

	tc = tcase_create("kernel");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, an_instruction_set_caps_the_loops);
	tcase_add_loop_test(tc, every_instruction_set_gives_the_same_bytes, 0,
	    LARGE_CASES);
	tcase_add_loop_test(tc, the_thread_count_changes_no_bit, 0, 8);
	tcase_add_loop_test(tc, stream_gives_the_reference_kernels_bytes, 0,
	    LARGE_CASES);
	tcase_add_loop_test(tc, kv_heads_side_by_side_read_from_a_workers_cache,
	    0, 3);
	tcase_add_loop_test(tc,
	    an_overflowing_score_is_named_as_the_reference_kernel_names_it, 0,
	    3);
	suite_add_tcase(s, tc);

	tc = tcase_create("threads");
	tcase_add_test(tc, progress_counts_blocks_of_queries);
	tcase_add_loop_test(tc, every_long_phase_reports_its_heads, 0, 3);
	tcase_add_loop_test(tc, a_cgroup_quota_is_read_as_cpus, 0,
	    (int)(sizeof quota_cases / sizeof quota_cases[0]));
	tcase_add_test(tc, the_cpu_count_is_at_most_the_online_cpus);
	suite_add_tcase(s, tc);
	return s;
}
