/*
 * check_run.c - attn_run and attn_plan (lib/run.c, lib/problem.c): stages
 * on demand, kernel dispatch and the thread count.
 *
 * For every one of the 2^8 sets of forward stages, and the 2^6 sets of
 * backward ones, a run keeps exactly that set
 * (and lse), the reference kernel computes exactly its closure, each kept
 * stage is the same number for number as in a run of every stage, the
 * rows with no key are those whose lse is -inf, and attn_plan counts the
 * kept stacks plus one block of scratch per stage computed but not kept,
 * worked out here from the dims, not from the library's tables.
 *
 * Dims: B batches, H query heads, G KV heads, T query rows, S keys, d_k
 * and d_v columns per head.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "kernel_ref.h"
#include "ref.h"
#include "suites.h"
#include "testutil.h"

/* The problem every test here runs: B = 2 batches of H = 2 heads sharing
 * G = 1 KV head, T = 3, S = 4, d_k = 2, d_v = 3, with a mask per batch
 * and head that leaves two rows without a key, a bias, ALiBi and a
 * softcap, so that every pass of a kernel has work. */
enum { B = 2, H = 2, G = 1, T = 3, S = 4, D_K = 2, D_V = 3 };

struct fixture {
	struct attn_matrix q, k, v, mask, bias, d_out;
	struct attn_inputs in;
	struct attn_config cfg;
};

static void
fixture_make(struct fixture *f)
{
	struct ref_rng rng;
	size_t i;

	ref_rng_seed(&rng, 4242);
	f->q = matrix_random(&rng, B * T, H * D_K, -2, 2);
	f->k = matrix_random(&rng, B * S, G * D_K, -2, 2);
	f->v = matrix_random(&rng, B * S, G * D_V, -2, 2);
	f->bias = matrix_random(&rng, B * T, S, -1, 1);
	ck_assert_int_eq(attn_matrix_alloc(&f->mask, B * H * T, S, NULL),
	    ATTN_OK);
	for (i = 0; i < B * H * T * S; i++)
		f->mask.data[i] = ref_rng_range(&rng, 0, 3) != 0;
	/* rows 1 and 9 of the per-head stacks keep no key */
	memset(attn_at(&f->mask, 1, 0), 0, S * sizeof(double));
	memset(attn_at(&f->mask, 9, 0), 0, S * sizeof(double));
	memset(&f->in, 0, sizeof f->in);
	f->in.batches = B;
	f->in.q = f->q;
	f->in.k = f->k;
	f->in.v = f->v;
	f->in.mask = f->mask;
	f->in.mask_blocks = B * H;
	f->in.bias = f->bias;
	f->in.bias_blocks = B;
	/* dO, for the backward stages; the forward ones ignore it */
	f->d_out = matrix_random(&rng, B * T, H * D_V, -1, 1);
	f->in.d_out = f->d_out;
	attn_config_init(&f->cfg);
	f->cfg.heads = H;
	f->cfg.kv_heads = G;
	f->cfg.alibi = 1;
	f->cfg.softcap = 2.0;
}

static void
fixture_free(struct fixture *f)
{
	attn_matrix_free(&f->q);
	attn_matrix_free(&f->k);
	attn_matrix_free(&f->v);
	attn_matrix_free(&f->mask);
	attn_matrix_free(&f->bias);
	attn_matrix_free(&f->d_out);
}

/* Doubles in the whole stack of each stage, and in one block of it, for
 * the fixture's dims: T x S blocks, T x d_v blocks of output (which is
 * per batch, H*d_v wide), T x 1 blocks. */
static const struct {
	size_t stack, block;
} sizes[ATTN_STAGE_COUNT] = {
	[ATTN_STAGE_SCORES] = { B * H * T * S, T * S },
	[ATTN_STAGE_SCALED] = { B * H * T * S, T * S },
	[ATTN_STAGE_WEIGHTS] = { B * H * T * S, T * S },
	[ATTN_STAGE_OUTPUT] = { B * T * H * D_V, T * D_V },
	[ATTN_STAGE_LSE] = { B * H * T, T },
	[ATTN_STAGE_MASK] = { B * H * T * S, T * S },
	[ATTN_STAGE_ROW_MAX] = { B * H * T, T },
	[ATTN_STAGE_ROW_SUM] = { B * H * T, T },
	[ATTN_STAGE_GRAD_WEIGHTS] = { B * H * T * S, T * S },
	[ATTN_STAGE_DELTA] = { B * H * T, T },
	[ATTN_STAGE_GRAD_SCALED] = { B * H * T * S, T * S },
	/* laid out as Q, K and V */
	[ATTN_STAGE_GRAD_Q] = { B * T * H * D_K, T * D_K },
	[ATTN_STAGE_GRAD_K] = { B * S * G * D_K, S * D_K },
	[ATTN_STAGE_GRAD_V] = { B * S * G * D_V, S * D_V },
	/* reduced after the kernel, never in its stages or scratch
	 * (lib/grad_reduce.c; check_grad_reduce.c counts them) */
	[ATTN_STAGE_GRAD_BIAS] = { 0, 0 },
	[ATTN_STAGE_GRAD_SINKS] = { 0, 0 },
	/* laid out as Q, K and V: never in scratch (lib/passes.c) */
	[ATTN_STAGE_Q] = { B * T * H * D_K, T * D_K },
	[ATTN_STAGE_K] = { B * S * G * D_K, S * D_K },
	[ATTN_STAGE_V] = { B * S * G * D_V, S * D_V },
	[ATTN_STAGE_Q_ROT] = { B * T * H * D_K, T * D_K },
	[ATTN_STAGE_K_ROT] = { B * S * G * D_K, S * D_K },
	[ATTN_STAGE_PROJECTED] = { 0, 0 },	/* d_out is the layer's */
	/* copied after the kernel, never in its stages or scratch
	 * (lib/grad_reduce.c; check_grad_reduce.c counts it) */
	[ATTN_STAGE_BIAS] = { 0, 0 },
	/* with a dropout mask, which the fixture has not (check_dropout.c
	 * holds the kernels to each other and to its definition) */
	[ATTN_STAGE_DROPPED] = { B * H * T * S, T * S },
};

_Static_assert(ATTN_STAGE_COUNT == 24, "a new stage needs its sizes here");

/* "weights with set 0x5": what expect_same names. */
static const char *
what(char *buf, size_t size, size_t s, unsigned set)
{
	snprintf(buf, size, "%s with set %#x", attn_stage_table[s].name, set);
	return buf;
}

/* Run set with kernel into *st and check that it holds exactly set
 * (and lse), number for number as all holds it, and that the reference
 * kernel computed exactly the closure. */
static void
expect_keeps(enum kernel_id kernel, const struct fixture *f, unsigned set,
    const struct attn_stages *all, struct attn_stages *st)
{
	const unsigned have = set | STAGE(LSE);
	char name[64];
	size_t s;

	run_ok(kernel, &f->cfg, &f->in, set, st);
	ck_assert_uint_eq(st->have, have);
	if (kernel == KERNEL_REFERENCE)
		ck_assert_uint_eq(st->computed, attn_stage_closure(have));
	else
		ck_assert_uint_eq(st->computed & have, have);
	for (s = 0; s < ATTN_STAGE_COUNT; s++) {
		if (!(have & ATTN_STAGE_BIT(s))) {
			ck_assert_ptr_null(st->stage[s].data);
			continue;
		}
		expect_same(what(name, sizeof name, s, set), &st->stage[s],
		    &all->stage[s]);
	}
}

/* attn_plan of set: the kept stacks and, for the reference kernel, one
 * block of each stage computed but not kept, each charged what its
 * allocation costs (attn_mem_cost), and with a backward stage the
 * backward pass's max(d_k, d_v) accumulators, worked out from sizes. */
static void
expect_plan(enum kernel_id kernel, const struct fixture *f, unsigned set)
{
	const unsigned have = set | STAGE(LSE);
	const unsigned closure = attn_stage_closure(have);
	struct attn_config cfg = f->cfg;
	struct attn_error err;
	size_t s, bytes, kept = 0, scratch = 0;

	for (s = 0; s < ATTN_STAGE_COUNT; s++) {
		if (have & ATTN_STAGE_BIT(s))
			kept += attn_mem_cost(sizes[s].stack * sizeof(double));
		else if (closure & ATTN_STAGE_BIT(s))
			scratch += attn_mem_cost(sizes[s].block *
			    sizeof(double));
	}
	memset(&err, 0, sizeof err);
	ck_assert_int_eq(plan_kernel(kernel, &cfg, &f->in, set, &bytes, &err),
	    ATTN_OK);
	if (closure & ATTN_STAGES_GRAD)
		scratch += (D_K > D_V ? D_K : D_V) * sizeof(double);
	if (kernel == KERNEL_REFERENCE)
		ck_assert_uint_eq(bytes, kept + scratch);
	else
		ck_assert_uint_ge(bytes, kept);
}

KERNEL_TEST(each_set_of_stages_keeps_exactly_that_set, ATTN_STAGES_ALL)
{
	struct fixture f;
	struct attn_stages all, st;
	unsigned set;
	size_t i, n;

	fixture_make(&f);
	run_ok(kernel, &f.cfg, &f.in, ATTN_STAGES_ALL, &all);
	ck_assert_uint_eq(all.have, ATTN_STAGES_ALL);
	ck_assert_uint_eq(all.nmasked, 2);
	ck_assert_uint_eq(all.masked[0], 1);
	ck_assert_uint_eq(all.masked[1], 9);
	for (set = 0; set <= ATTN_STAGES_ALL; set++) {
		if (!kernel_computes(kernel, set))
			continue;
		expect_keeps(kernel, &f, set, &all, &st);
		/* the rows with no key: those whose lse is -inf */
		ck_assert_uint_eq(st.nmasked, all.nmasked);
		for (i = n = 0; i < B * H * T; i++)
			if (stage_at(&st, ATTN_STAGE_LSE, i, 0) == -INFINITY)
				ck_assert_uint_eq(st.masked[n++], i);
		ck_assert_uint_eq(n, st.nmasked);
		attn_stages_free(&st);
	}
	attn_stages_free(&all);
	fixture_free(&f);
}
END_TEST

KERNEL_TEST(plan_counts_kept_stacks_and_one_block_of_scratch,
    ATTN_STAGES_ALL)
{
	struct fixture f;
	unsigned set;

	fixture_make(&f);
	for (set = 0; set <= ATTN_STAGES_ALL; set++)
		if (kernel_computes(kernel, set))
			expect_plan(kernel, &f, set);
	fixture_free(&f);
}
END_TEST

/* Subset n (0 <= n < 64) of the backward stages: bit i of n picks the
 * i-th stage of ATTN_STAGES_GRAD. */
static unsigned
grad_subset(unsigned n)
{
	unsigned set = 0, i = 0;
	size_t s;

	for (s = 0; s < ATTN_STAGE_COUNT; s++)
		if (ATTN_STAGES_GRAD & ATTN_STAGE_BIT(s))
			if (n & (1u << i++))
				set |= ATTN_STAGE_BIT(s);
	return set;
}

#define NGRAD_SUBSETS 64u

/* As each_set_of_stages_keeps_exactly_that_set, for every set of
 * backward stages, alone and with every forward stage: the stages that
 * grad_k and grad_v add up over heads come out the same whatever else is
 * computed. */
KERNEL_TEST(each_set_of_backward_stages_keeps_exactly_that_set,
    ATTN_STAGES_ALL | ATTN_STAGES_GRAD)
{
	struct fixture f;
	struct attn_stages all, st;
	unsigned n;

	fixture_make(&f);
	run_ok(kernel, &f.cfg, &f.in, stages, &all);
	ck_assert_uint_eq(all.have, stages);
	for (n = 0; n < NGRAD_SUBSETS; n++) {
		expect_keeps(kernel, &f, grad_subset(n), &all, &st);
		attn_stages_free(&st);
		expect_keeps(kernel, &f, grad_subset(n) | ATTN_STAGES_ALL,
		    &all, &st);
		attn_stages_free(&st);
	}
	attn_stages_free(&all);
	fixture_free(&f);
}
END_TEST

KERNEL_TEST(plan_counts_backward_stacks_and_scratch,
    ATTN_STAGES_ALL | ATTN_STAGES_GRAD)
{
	struct fixture f;
	unsigned n;

	fixture_make(&f);
	for (n = 0; n < NGRAD_SUBSETS; n++)
		expect_plan(kernel, &f, grad_subset(n));
	fixture_free(&f);
}
END_TEST

/* Expect attn_run and attn_plan of want to fail with status and exactly
 * msg, holding nothing. */
static void
expect_refused(const struct fixture *f, unsigned want,
    enum attn_status status, const char *msg)
{
	struct attn_stages st;
	struct attn_error err;
	size_t bytes, s;

	memset(&err, 0, sizeof err);
	memset(&st, 0xA5, sizeof st);
	ck_assert_int_eq(attn_run(&f->cfg, &f->in, want, &st, &err), status);
	ck_assert_str_eq(err.msg, msg);
	for (s = 0; s < ATTN_STAGE_COUNT; s++)
		ck_assert_ptr_null(st.stage[s].data);
	memset(&err, 0, sizeof err);
	ck_assert_int_eq(attn_plan(&f->cfg, &f->in, want, &bytes, &err),
	    status);
	ck_assert_str_eq(err.msg, msg);
}

START_TEST(backward_stages_need_d_out_of_output_shape)
{
	struct fixture f;
	struct attn_matrix wide;

	fixture_make(&f);
	f.in.d_out.data = NULL;
	expect_refused(&f, STAGE(OUTPUT) | STAGE(GRAD_V), ATTN_ERR_USAGE,
	    "stage grad_v needs dO, the gradient of the output");
	expect_refused(&f, ATTN_STAGES_GRAD, ATTN_ERR_USAGE,
	    "stage grad_weights needs dO, the gradient of the output");
	/* dO is checked whenever it is given, needed or not */
	f.in.d_out = attn_matrix_view(&f.d_out, 0, B * T, 0, H * D_V - 1);
	expect_refused(&f, STAGE(OUTPUT), ATTN_ERR_DATA,
	    "shape mismatch: dO is 2x3x5 but output is 2x3x6: dO, the "
	    "gradient of the output, needs its shape (B x T x H*d_v)");
	f.in.d_out = attn_matrix_view(&f.d_out, 0, B * T - 1, 0, H * D_V);
	expect_refused(&f, STAGE(GRAD_Q), ATTN_ERR_DATA,
	    "shape mismatch: dO is 5x6 but output is 2x3x6: dO, the "
	    "gradient of the output, needs its shape (B x T x H*d_v)");
	/* with one batch of one head */
	f.in.batches = 1;
	f.cfg.heads = 1;
	f.cfg.kv_heads = 0;
	f.in.mask.data = f.in.bias.data = NULL;
	f.in.q = attn_matrix_view(&f.q, 0, T, 0, D_K);
	f.in.k = attn_matrix_view(&f.k, 0, S, 0, D_K);
	f.in.v = attn_matrix_view(&f.v, 0, S, 0, D_V);
	ck_assert_int_eq(attn_matrix_alloc(&wide, T, D_V + 1, NULL), ATTN_OK);
	f.in.d_out = wide;
	expect_refused(&f, STAGE(GRAD_K), ATTN_ERR_DATA,
	    "shape mismatch: dO is 3x4 but output is 3x3: dO, the gradient "
	    "of the output, needs its shape (T x d_v)");
	attn_matrix_free(&wide);
	fixture_free(&f);
}
END_TEST

/* The case the memory guard is for: printing output from many heads
 * holds T x S for one head at a time, not for all of them. */
START_TEST(plan_of_output_holds_one_head_of_scores)
{
	const size_t n = 512, heads = 16, d = 8;
	struct attn_matrix q = { n, heads * d, heads * d, NULL };
	struct attn_inputs in;
	struct attn_config cfg;
	struct attn_error err;
	size_t out, all;

	/* attn_plan reads shapes only: no data is needed */
	memset(&in, 0, sizeof in);
	in.batches = 1;
	in.q = in.k = in.v = q;
	attn_config_init(&cfg);
	cfg.heads = heads;
	ck_assert_int_eq(plan_kernel(KERNEL_REFERENCE, &cfg, &in,
	    STAGE(OUTPUT), &out, &err), ATTN_OK);
	ck_assert_int_eq(plan_kernel(KERNEL_REFERENCE, &cfg, &in,
	    ATTN_STAGES_ALL, &all, &err), ATTN_OK);
	/* output and lse, then scores, scaled and weights of one head, and
	 * its row_max and row_sum, each allocation charged its cost: a
	 * stack or block of 256 KiB or more whole 2 MiB pages */
	ck_assert_uint_eq(out, attn_mem_cost(8 * n * heads * d) +
	    attn_mem_cost(8 * heads * n) + 3 * attn_mem_cost(8 * n * n) +
	    2 * attn_mem_cost(8 * n));
	ck_assert_uint_eq(attn_mem_cost(8 * n * n), (size_t)2 << 20);
	ck_assert_uint_eq(all, attn_mem_cost(8 * n * heads * d) +
	    3 * attn_mem_cost(8 * heads * n) +
	    4 * attn_mem_cost(8 * heads * n * n));
}
END_TEST

START_TEST(plan_reports_sizes_that_overflow)
{
	struct attn_matrix q = { (size_t)1 << 40, 1, 1, NULL };
	struct attn_inputs in;
	struct attn_config cfg;
	struct attn_error err;
	size_t bytes = 1;

	memset(&in, 0, sizeof in);
	in.batches = 1;
	in.q = in.k = in.v = q;
	attn_config_init(&cfg);
	memset(&err, 0, sizeof err);
	/* (2^40)^2 scores of 8 bytes: far past SIZE_MAX */
	ck_assert_int_eq(attn_plan(&cfg, &in, STAGE(SCORES), &bytes, &err),
	    ATTN_ERR_NOMEM);
	ck_assert_int_eq(err.status, ATTN_ERR_NOMEM);
	ck_assert_uint_gt(strlen(err.msg), 0);
	/* and so does output alone on the reference kernel, through the
	 * scratch it needs */
	ck_assert_int_eq(plan_kernel(KERNEL_REFERENCE, &cfg, &in, STAGE(OUTPUT),
	    &bytes, &err), ATTN_ERR_NOMEM);
	/* but not on the streaming kernel, which holds no T x S block:
	 * output and lse, 2^40 rows of 8 bytes each, and its tiles */
	cfg.threads = 2;
	ck_assert_int_eq(attn_plan(&cfg, &in, STAGE(OUTPUT), &bytes, &err),
	    ATTN_OK);
	ck_assert_uint_ge(bytes, (size_t)16 << 40);
	ck_assert_uint_lt(bytes, ((size_t)16 << 40) + ((size_t)1 << 39));
}
END_TEST

/* ---------------------------------------------------------------- kernels */

/* Both kernels compute every stage: the passes' stages from
 * lib/passes.c, grad_bias and grad_sinks from lib/grad_reduce.c, the
 * rest (dropped among them) their own. */
START_TEST(kernels_have_names_and_stages)
{
	const unsigned every = ATTN_STAGES_ALL | ATTN_STAGES_GRAD |
	    ATTN_STAGES_REDUCE | ATTN_STAGES_PROJ | ATTN_STAGES_DROPOUT;

	ck_assert_str_eq(kernel_name(KERNEL_REFERENCE), "reference");
	ck_assert_str_eq(kernel_name(KERNEL_STREAM), "stream");
	ck_assert_uint_eq(kernel_stages(KERNEL_REFERENCE), every);
	ck_assert_uint_eq(kernel_stages(KERNEL_STREAM), every);
}
END_TEST

/* What the counting kernel below ran: its run and plan calls. */
static int counted_runs, counted_plans;

static enum attn_status
counted_plan(const struct attn_problem *p, size_t *bytes,
    struct attn_error *err)
{
	counted_plans++;
	return kernel_ref.plan(p, bytes, err);
}

static enum attn_status
counted_run(const struct attn_problem *p, struct attn_stages *out,
    struct attn_error *err)
{
	counted_runs++;
	return kernel_ref.run(p, out, err);
}

/*
 * attn_run_kernel runs the kernel it is given, not the library's own:
 * the tests that hold the streaming kernel to the reference kernel's
 * bytes would pass whatever they compared if it ran the streaming one
 * for both.  Here a kernel that counts its calls runs the reference
 * kernel's passes; its output is the reference kernel's, and a stage it
 * cannot compute is a usage error naming it.
 */
START_TEST(a_run_with_kernel_ops_runs_those_ops)
{
	const struct attn_kernel_ops counted = { "counted",
	    kernel_ref.stages, counted_plan, counted_run };
	const struct attn_kernel_ops forward = { "forward-only",
	    ATTN_STAGES_ALL, counted_plan, counted_run };
	struct fixture f;
	struct attn_stages st, ref;
	struct attn_error err;
	size_t bytes;

	fixture_make(&f);
	counted_runs = counted_plans = 0;
	memset(&err, 0, sizeof err);
	ck_assert_int_eq(attn_plan_kernel(&counted, &f.cfg, &f.in,
	    STAGE(OUTPUT), &bytes, &err), ATTN_OK);
	ck_assert_int_eq(counted_plans, 1);
	ck_assert_int_eq(attn_run_kernel(&counted, &f.cfg, &f.in,
	    STAGE(OUTPUT), &st, &err), ATTN_OK);
	ck_assert_int_eq(counted_runs, 1);
	run_ok(KERNEL_REFERENCE, &f.cfg, &f.in, STAGE(OUTPUT), &ref);
	expect_same("output", &st.stage[ATTN_STAGE_OUTPUT],
	    &ref.stage[ATTN_STAGE_OUTPUT]);
	attn_stages_free(&st);
	attn_stages_free(&ref);
	/* attn_run does not: it runs the streaming kernel */
	ck_assert_int_eq(attn_run(&f.cfg, &f.in, STAGE(OUTPUT), &st, &err),
	    ATTN_OK);
	ck_assert_int_eq(counted_runs, 1);
	attn_stages_free(&st);

	ck_assert_int_eq(attn_run_kernel(&forward, &f.cfg, &f.in,
	    STAGE(GRAD_V), &st, &err), ATTN_ERR_USAGE);
	ck_assert_str_eq(err.msg, "the forward-only kernel cannot compute "
	    "grad_v");
	ck_assert_ptr_null(st.stage[ATTN_STAGE_OUTPUT].data);
	ck_assert_int_eq(attn_plan_kernel(&forward, &f.cfg, &f.in,
	    STAGE(GRAD_V), &bytes, &err), ATTN_ERR_USAGE);
	ck_assert_int_eq(counted_runs, 1);
	ck_assert_int_eq(counted_plans, 1);
	fixture_free(&f);
}
END_TEST

/*
 * Threads never change the answer: every thread count gives the same
 * numbers, bit for bit, in every stage that the kernel computes (the
 * backward stages' sums over heads included, for a kernel that has
 * them).  The problem is larger than the fixture, so that a head has
 * several tasks of query rows and each task several blocks of keys for
 * the streaming kernel (96 rows and 128 keys: T = 200 and S = 300 make
 * three of each), and the threads really share the work.  Case 0 keeps
 * every stage (the streaming kernel then stores its T x S stages) under
 * the fixture's bias, ALiBi, softcap and mask; case 1 keeps output and
 * lse alone with none of them, the streaming kernel's fastest path.
 */
enum { TT = 200, TS = 300, TD = 8 };

KERNEL_TEST(the_thread_count_does_not_change_any_number, STAGE(OUTPUT))
{
	static const size_t threads[] = { 0, 2, 3, 8 };
	const unsigned keep = _i == 0 ? kernel_stages(kernel) &
	    (ATTN_STAGES_ALL | ATTN_STAGES_GRAD) : STAGE(OUTPUT) | STAGE(LSE);
	struct attn_matrix q, k, v, bias, mask, d_out;
	struct attn_stages one, st;
	struct attn_inputs in;
	struct attn_config cfg;
	struct ref_rng rng;
	size_t t, s, i;

	ref_rng_seed(&rng, 77);
	q = matrix_random(&rng, B * TT, H * TD, -2, 2);
	k = matrix_random(&rng, B * TS, G * TD, -2, 2);
	v = matrix_random(&rng, B * TS, G * TD, -2, 2);
	bias = matrix_random(&rng, B * TT, TS, -1, 1);
	d_out = matrix_random(&rng, B * TT, H * TD, -1, 1);
	ck_assert_int_eq(attn_matrix_alloc(&mask, B * H * TT, TS, NULL),
	    ATTN_OK);
	for (i = 0; i < B * H * TT * TS; i++)
		mask.data[i] = ref_rng_range(&rng, 0, 3) != 0;
	memset(&in, 0, sizeof in);
	in.batches = B;
	in.q = q;
	in.k = k;
	in.v = v;
	in.d_out = d_out;
	attn_config_init(&cfg);
	cfg.heads = H;
	cfg.kv_heads = G;
	if (_i == 0) {
		in.mask = mask;
		in.mask_blocks = B * H;
		in.bias = bias;
		in.bias_blocks = B;
		cfg.alibi = 1;
		cfg.softcap = 2.0;
	}
	cfg.threads = 1;
	run_ok(kernel, &cfg, &in, keep, &one);
	ck_assert_uint_eq(one.have & keep, keep);
	for (t = 0; t < sizeof threads / sizeof threads[0]; t++) {
		cfg.threads = threads[t];
		run_ok(kernel, &cfg, &in, keep, &st);
		for (s = 0; s < ATTN_STAGE_COUNT; s++)
			expect_same(attn_stage_table[s].name, &st.stage[s],
			    &one.stage[s]);
		attn_stages_free(&st);
	}
	attn_stages_free(&one);
	attn_matrix_free(&q);
	attn_matrix_free(&k);
	attn_matrix_free(&v);
	attn_matrix_free(&bias);
	attn_matrix_free(&mask);
	attn_matrix_free(&d_out);
}
END_TEST

/*
 * --lse-base and --lse-masked change the lse stage as returned and
 * nothing else: log2 is the natural value times log2(e), +inf replaces
 * the -inf of a row with no key (rows 1 and 9 of the fixture), every
 * other stage (weights, output, the backward ones through delta) keeps
 * its bytes, the rows with no key are still listed, and
 * attn_lse_natural gives back the natural value.
 */
KERNEL_TEST(lse_conventions_change_lse_alone, STAGE(LSE) | STAGE(WEIGHTS) |
    STAGE(OUTPUT) | STAGE(GRAD_Q) | STAGE(GRAD_K))
{
	const unsigned want = stages;
	struct attn_stages nat, conv;
	struct fixture f;
	size_t i, s, m;
	double x, y;

	fixture_make(&f);
	run_ok(kernel, &f.cfg, &f.in, want, &nat);
	for (m = 1; m < 4; m++) {
		f.cfg.lse_base = (m & 1) ? ATTN_LSE_2 : ATTN_LSE_E;
		f.cfg.lse_masked = (m & 2) ? ATTN_LSE_MASKED_POS_INF :
		    ATTN_LSE_MASKED_NEG_INF;
		run_ok(kernel, &f.cfg, &f.in, want, &conv);
		ck_assert_uint_eq(conv.nmasked, nat.nmasked);
		ck_assert_uint_ne(conv.nmasked, 0);
		for (i = 0; i < nat.stage[ATTN_STAGE_LSE].rows; i++) {
			x = stage_at(&nat, ATTN_STAGE_LSE, i, 0);
			if (x == -INFINITY)
				ck_assert_double_eq(stage_at(&conv,
				    ATTN_STAGE_LSE, i, 0), (m & 2) ? INFINITY :
				    -INFINITY);
			else
				ck_assert_double_eq(stage_at(&conv,
				    ATTN_STAGE_LSE, i, 0), (m & 1) ?
				    x * 1.4426950408889634 : x);
			y = attn_lse_natural(&conv, stage_at(&conv,
			    ATTN_STAGE_LSE, i, 0));
			if (isfinite(x))
				ck_assert_double_eq_tol(y, x, 1e-15 * fabs(x) +
				    1e-300);
			else
				ck_assert_double_eq(y, x);
		}
		for (s = 0; s < ATTN_STAGE_COUNT; s++)
			if (s != ATTN_STAGE_LSE && (want & ATTN_STAGE_BIT(s)))
				expect_same(attn_stage_table[s].name,
				    &nat.stage[s], &conv.stage[s]);
		attn_stages_free(&conv);
		(void)_i;
	}
	attn_stages_free(&nat);
	fixture_free(&f);
}
END_TEST

Suite *
run_suite(void)
{
	Suite *s = suite_create("run");
	TCase *tc = tcase_create("stages");

	tcase_add_kernel_test(tc, each_set_of_stages_keeps_exactly_that_set,
	    0, 1);
	tcase_add_kernel_test(tc,
	    plan_counts_kept_stacks_and_one_block_of_scratch, 0, 1);
	tcase_add_test(tc, plan_of_output_holds_one_head_of_scores);
	tcase_add_test(tc, plan_reports_sizes_that_overflow);
	tcase_add_kernel_test(tc,
	    each_set_of_backward_stages_keeps_exactly_that_set, 0, 1);
	tcase_add_kernel_test(tc, plan_counts_backward_stacks_and_scratch, 0,
	    1);
	tcase_add_test(tc, backward_stages_need_d_out_of_output_shape);
	tcase_add_kernel_test(tc, lse_conventions_change_lse_alone, 0, 1);
	suite_add_tcase(s, tc);

	tc = tcase_create("kernels");
	tcase_add_test(tc, kernels_have_names_and_stages);
	tcase_add_test(tc, a_run_with_kernel_ops_runs_those_ops);
	tcase_add_kernel_test(tc, the_thread_count_does_not_change_any_number,
	    0, 2);
	suite_add_tcase(s, tc);
	return s;
}
