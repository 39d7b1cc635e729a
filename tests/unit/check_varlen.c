/*
 * check_varlen.c - packed batches of variable-length sequences and
 * counts of used keys (attn_inputs.varlen): a packed batch gives, on
 * every kernel and to the bit, what each of its sequences gives run
 * alone on its own used keys (output, lse, weights, the gradients), with
 * causal, windows, ALiBi, RoPE, softcap, sinks, both alignments and every
 * masked-rows policy, empty sequences and sequences with more queries
 * than keys among them; what lies outside a sequence is 0; and offsets
 * and counts that do not fit are data errors that say why.
 *
 * Dims: T = total_q query rows, S = total_k keys, H query heads, G KV
 * heads, d columns per head.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attn.h"
#include "ref.h"
#include "suites.h"
#include "testutil.h"

#define MAX_SEQS 5

/* A random packed batch and how it is computed. */
struct vcase {
	struct attn_config cfg;
	struct attn_inputs in;
	struct attn_matrix q, k, v, d_out, sinks;
	size_t cu_q[MAX_SEQS + 1], cu_k[MAX_SEQS + 1], used[MAX_SEQS];
	size_t H, G, d;
	char what[200];
};

static void
vcase_make(struct vcase *c, uint64_t seed, int grad)
{
	struct ref_rng rng;
	struct attn_varlen *vl = &c->in.varlen;
	size_t n, s, T, S;

	memset(c, 0, sizeof *c);
	ref_rng_seed(&rng, seed);
	attn_config_init(&c->cfg);
	n = ref_rng_range(&rng, 1, MAX_SEQS);
	for (s = 0; s < n; s++) {
		c->cu_q[s + 1] = c->cu_q[s] + (ref_rng_range(&rng, 0, 4) == 0 ?
		    0 : ref_rng_range(&rng, 1, 140));
		c->cu_k[s + 1] = c->cu_k[s] + (ref_rng_range(&rng, 0, 4) == 0 ?
		    0 : ref_rng_range(&rng, 1, 300));
	}
	c->cu_q[n] += c->cu_q[n] == 0;
	c->cu_k[n] += c->cu_k[n] == 0;
	T = c->cu_q[n];
	S = c->cu_k[n];
	vl->seqs = n;
	vl->cu_q = c->cu_q;
	vl->cu_k = c->cu_k;
	if (ref_rng_range(&rng, 0, 1)) {
		for (s = 0; s < n; s++)
			c->used[s] = ref_rng_range(&rng, 0, 3) == 0 ?
			    c->cu_k[s + 1] - c->cu_k[s] : ref_rng_range(&rng,
			    0, c->cu_k[s + 1] - c->cu_k[s]);
		vl->used_k = c->used;
		vl->used_n = n;
	}
	c->G = ref_rng_range(&rng, 1, 2);
	c->H = c->G * ref_rng_range(&rng, 1, 2);
	c->d = 2 * ref_rng_range(&rng, 1, 3);
	c->cfg.heads = c->H;
	c->cfg.kv_heads = c->G;
	c->cfg.align = ref_rng_range(&rng, 0, 1) ? ATTN_ALIGN_BOTTOM_RIGHT :
	    ATTN_ALIGN_TOP_LEFT;
	c->cfg.causal = (int)ref_rng_range(&rng, 0, 1);
	if (ref_rng_range(&rng, 0, 2) == 0) {
		c->cfg.window = 1;
		c->cfg.window_left = ref_rng_range(&rng, 0, 20);
		c->cfg.window_right = ref_rng_range(&rng, 0, 20);
	}
	c->cfg.alibi = ref_rng_range(&rng, 0, 2) == 0;
	c->cfg.rope = ref_rng_range(&rng, 0, 2) == 0;
	c->cfg.rope_base = 10000.0;
	if (ref_rng_range(&rng, 0, 3) == 0)
		c->cfg.softcap = 5.0;
	c->cfg.masked_rows = (enum attn_masked_rows)ref_rng_range(&rng, 0, 2);
	c->in.batches = 1;
	c->q = matrix_random(&rng, T, c->H * c->d, -2.0, 2.0);
	c->k = matrix_random(&rng, S, c->G * c->d, -2.0, 2.0);
	c->v = matrix_random(&rng, S, c->G * c->d, -1.0, 1.0);
	c->in.q = c->q;
	c->in.k = c->k;
	c->in.v = c->v;
	if (ref_rng_range(&rng, 0, 3) == 0) {
		c->sinks = matrix_random(&rng, 1, c->H, -1.0, 1.0);
		c->in.sinks = c->sinks;
	}
	if (grad) {
		c->d_out = matrix_random(&rng, T, c->H * c->d, -1.0, 1.0);
		c->in.d_out = c->d_out;
	}
	snprintf(c->what, sizeof c->what, "seed %llu: %zu sequences, T=%zu "
	    "S=%zu H=%zu G=%zu d=%zu%s%s%s%s%s%s%s, masked rows %d%s",
	    (unsigned long long)seed, n, T, S, c->H, c->G, c->d,
	    c->cfg.align == ATTN_ALIGN_BOTTOM_RIGHT ? " bottom-right" : "",
	    c->cfg.causal ? " causal" : "", c->cfg.window ? " window" : "",
	    c->cfg.alibi ? " alibi" : "", c->cfg.rope ? " rope" : "",
	    c->cfg.softcap > 0.0 ? " softcap" : "",
	    c->sinks.data != NULL ? " sinks" : "", (int)c->cfg.masked_rows,
	    vl->used_k != NULL ? ", used keys" : "");
}

static void
vcase_free(struct vcase *c)
{
	attn_matrix_free(&c->q);
	attn_matrix_free(&c->k);
	attn_matrix_free(&c->v);
	attn_matrix_free(&c->d_out);
	attn_matrix_free(&c->sinks);
}

/* Every element of m is 0 (or, with nan_ok, nan). */
static void
expect_zero(const char *what, const struct attn_matrix *m, int nan_ok)
{
	size_t i, j;

	for (i = 0; i < m->rows; i++)
		for (j = 0; j < m->cols; j++) {
			const double x = *attn_at(m, i, j);

			/* not ck_assert: Check writes down the place of each
			 * assertion it passes, a write(2) an element */
			if (!(x == 0.0 || (nan_ok && isnan(x))))
				ck_abort_msg("%s: (%zu, %zu) is %g, not 0",
				    what, i, j, x);
		}
}

/* Rows [r0, r0 + n) of m, all its columns. */
static struct attn_matrix
rows_of(const struct attn_matrix *m, size_t r0, size_t n)
{
	return attn_matrix_view(m, r0, n, 0, m->cols);
}

/* A run of kernel, or with prec below FP64 the emulation in prec;
 * expects success. */
static void
run_in(enum kernel_id kernel, enum attn_precision prec,
    const struct attn_config *cfg, const struct attn_inputs *in,
    unsigned want, struct attn_stages *st)
{
	struct attn_error err;

	if (prec == ATTN_PREC_FP64) {
		run_ok(kernel, cfg, in, want, st);
		return;
	}
	memset(&err, 0, sizeof err);
	ck_assert_msg(attn_emulate(cfg, in, want, prec, st, &err) == ATTN_OK,
	    "attn_emulate: %s", err.msg);
}

/*
 * The packed run of c (keeping want) against each sequence run alone on
 * its queries and its used keys: the same bytes for every stage of want,
 * and 0 outside the sequence.
 */
static void
packed_is_alone(struct vcase *c, enum kernel_id kernel,
    enum attn_precision prec, unsigned want)
{
	const struct attn_varlen *vl = &c->in.varlen;
	struct attn_stages all, one;
	char what[300];
	size_t s, h;

	run_in(kernel, prec, &c->cfg, &c->in, want, &all);
	for (s = 0; s < vl->seqs; s++) {
		const size_t q0 = c->cu_q[s], T = c->cu_q[s + 1] - q0;
		const size_t k0 = c->cu_k[s];
		const size_t S = vl->used_k != NULL ? c->used[s] :
		    c->cu_k[s + 1] - k0;
		const size_t pad = c->cu_k[s + 1] - k0 - S;
		struct attn_inputs in;
		struct attn_matrix a, b;

		snprintf(what, sizeof what, "%s, sequence %zu (%zu queries, "
		    "%zu keys)", c->what, s + 1, T, S);
		/* the padding keys of a cache get no gradient */
		if ((want & STAGE(GRAD_K)) && pad > 0) {
			a = rows_of(&all.stage[ATTN_STAGE_GRAD_K], k0 + S, pad);
			expect_zero(what, &a, 1);
			a = rows_of(&all.stage[ATTN_STAGE_GRAD_V], k0 + S, pad);
			expect_zero(what, &a, 1);
		}
		if (T == 0)
			continue;
		if (S == 0) {
			/* no key at all: what the policy says, 0 here */
			a = rows_of(&all.stage[ATTN_STAGE_OUTPUT], q0, T);
			if (c->cfg.masked_rows != ATTN_MASKED_NAN &&
			    c->sinks.data == NULL)
				expect_zero(what, &a, 0);
			continue;
		}
		memset(&in, 0, sizeof in);
		in.batches = 1;
		in.q = rows_of(&c->q, q0, T);
		in.k = rows_of(&c->k, k0, S);
		in.v = rows_of(&c->v, k0, S);
		in.sinks = c->sinks;
		if (c->d_out.data != NULL)
			in.d_out = rows_of(&c->d_out, q0, T);
		run_in(kernel, prec, &c->cfg, &in, want, &one);
		a = rows_of(&all.stage[ATTN_STAGE_OUTPUT], q0, T);
		expect_same(what, &a, &one.stage[ATTN_STAGE_OUTPUT]);
		for (h = 0; h < c->H; h++) {
			a = attn_stage_block(&all, ATTN_STAGE_LSE, 0, h);
			a = rows_of(&a, q0, T);
			b = attn_stage_block(&one, ATTN_STAGE_LSE, 0, h);
			expect_same(what, &a, &b);
			if (!(want & STAGE(WEIGHTS)))
				continue;
			a = attn_stage_block(&all, ATTN_STAGE_WEIGHTS, 0, h);
			b = attn_stage_block(&one, ATTN_STAGE_WEIGHTS, 0, h);
			{
				struct attn_matrix in_seq = attn_matrix_view(
				    &a, q0, T, k0, S);
				struct attn_matrix before = attn_matrix_view(
				    &a, q0, T, 0, k0);
				struct attn_matrix after = attn_matrix_view(
				    &a, q0, T, k0 + S, c->k.rows - k0 - S);

				expect_same(what, &in_seq, &b);
				expect_zero(what, &before, 1);
				expect_zero(what, &after, 1);
			}
		}
		if (want & STAGE(GRAD_Q)) {
			a = rows_of(&all.stage[ATTN_STAGE_GRAD_Q], q0, T);
			expect_same(what, &a, &one.stage[ATTN_STAGE_GRAD_Q]);
			a = rows_of(&all.stage[ATTN_STAGE_GRAD_K], k0, S);
			expect_same(what, &a, &one.stage[ATTN_STAGE_GRAD_K]);
			a = rows_of(&all.stage[ATTN_STAGE_GRAD_V], k0, S);
			expect_same(what, &a, &one.stage[ATTN_STAGE_GRAD_V]);
		}
		attn_stages_free(&one);
	}
	attn_stages_free(&all);
}

#ifdef UNDER_ASAN
#define VARLEN_CASES 8	/* suites.h says why */
#else
#define VARLEN_CASES 40
#endif

/* Output and lse alone (the streaming kernel's path that visits only
 * the tiles of each sequence), then with the weights held (every tile
 * visited), then the backward stages where the kernel has them. */
KERNEL_TEST(a_packed_batch_is_its_sequences_run_alone, STAGE(OUTPUT) |
    STAGE(LSE))
{
	const unsigned grads = STAGE(GRAD_Q) | STAGE(GRAD_K) | STAGE(GRAD_V);
	struct vcase c;

	vcase_make(&c, 0xBA7C0000u + (uint64_t)_i, 1);
	packed_is_alone(&c, kernel, ATTN_PREC_FP64, stages);
	if (kernel_computes(kernel, stages | STAGE(WEIGHTS)))
		packed_is_alone(&c, kernel, ATTN_PREC_FP64, stages |
		    STAGE(WEIGHTS));
	if (kernel_computes(kernel, stages | grads))
		packed_is_alone(&c, kernel, ATTN_PREC_FP64, stages |
		    STAGE(WEIGHTS) | grads);
	vcase_free(&c);
}
END_TEST

/* The emulation (--emulate) of a packed batch, forward and backward, is
 * that of its sequences run alone, in each format. */
START_TEST(an_emulated_packed_batch_is_its_sequences_emulated_alone)
{
	const enum attn_precision prec[3] = { ATTN_PREC_FP32, ATTN_PREC_FP16,
	    ATTN_PREC_BF16 };
	struct vcase c;

	vcase_make(&c, 0xE3A70000u + (uint64_t)_i, 1);
	packed_is_alone(&c, KERNEL_REFERENCE, prec[_i % 3],
	    STAGE(OUTPUT) | STAGE(LSE) | STAGE(WEIGHTS) | STAGE(GRAD_Q) |
	    STAGE(GRAD_K) | STAGE(GRAD_V));
	vcase_free(&c);
}
END_TEST

/* Offsets and counts that do not fit, each a data error (one a usage
 * error) whose message says why. */
START_TEST(offsets_that_do_not_fit_are_refused)
{
	static const struct {
		size_t seqs, cu_q[4], cu_k[4], used_n, used[3], batches;
		enum attn_status st;
		const char *msg;
	} cases[] = {
		{ 2, { 1, 2, 4 }, { 0, 2, 4 }, 0, { 0 }, 1, ATTN_ERR_DATA,
		    "cu_seqlens_q starts at 1: cumulative sequence lengths "
		    "start at 0" },
		{ 2, { 0, 3, 2 }, { 0, 2, 4 }, 0, { 0 }, 1, ATTN_ERR_DATA,
		    "cu_seqlens_q goes down from 3 to 2 (offsets 2 and 3)" },
		{ 2, { 0, 2, 3 }, { 0, 2, 4 }, 0, { 0 }, 1, ATTN_ERR_DATA,
		    "cu_seqlens_q ends at 3 but Q has 4 rows" },
		{ 2, { 0, 2, 4 }, { 0, 2, 5 }, 0, { 0 }, 1, ATTN_ERR_DATA,
		    "cu_seqlens_k ends at 5 but K has 4 rows" },
		{ 2, { 0, 2, 4 }, { 0, 2, 4 }, 1, { 2 }, 1, ATTN_ERR_DATA,
		    "seqused_k has 1 count but there are 2 sequences" },
		{ 2, { 0, 2, 4 }, { 0, 1, 4 }, 2, { 2, 1 }, 1, ATTN_ERR_DATA,
		    "seqused_k of sequence 1 is 2 but it has 1 keys" },
		{ 0, { 0 }, { 0 }, 1, { 5 }, 1, ATTN_ERR_DATA,
		    "seqused_k of batch 1 is 5 but it has 4 keys" },
		{ 0, { 0 }, { 0 }, 2, { 1, 1 }, 1, ATTN_ERR_DATA,
		    "seqused_k has 2 counts but there is 1 batch" },
		{ 1, { 0, 2 }, { 0, 2 }, 0, { 0 }, 2, ATTN_ERR_DATA,
		    "packed sequences (cu_seqlens) need one batch, but there "
		    "are 2" },
	};
	const double x[8] = { 0 };
	struct attn_config cfg;
	struct attn_inputs in;
	struct attn_stages st;
	struct attn_error err;
	size_t n;

	attn_config_init(&cfg);
	for (n = 0; n < sizeof cases / sizeof cases[0]; n++) {
		memset(&in, 0, sizeof in);
		memset(&err, 0, sizeof err);
		in.batches = cases[n].batches;
		in.q = in.k = in.v = matrix_from(4, 2, x);
		in.varlen.seqs = cases[n].seqs;
		in.varlen.cu_q = cases[n].seqs > 0 ? cases[n].cu_q : NULL;
		in.varlen.cu_k = cases[n].seqs > 0 ? cases[n].cu_k : NULL;
		in.varlen.used_n = cases[n].used_n;
		in.varlen.used_k = cases[n].used_n > 0 ? cases[n].used : NULL;
		ck_assert_int_eq(attn_run(&cfg, &in, STAGE(OUTPUT), &st, &err),
		    cases[n].st);
		ck_assert_msg(strstr(err.msg, cases[n].msg) != NULL,
		    "case %zu: '%s' lacks '%s'", n, err.msg, cases[n].msg);
		attn_matrix_free(&in.q);
	}
}
END_TEST

Suite *
varlen_suite(void)
{
	Suite *s = suite_create("varlen");
	TCase *tc = tcase_create("packed");

	tcase_add_kernel_test(tc, a_packed_batch_is_its_sequences_run_alone,
	    0, VARLEN_CASES);
	tcase_add_loop_test(tc,
	    an_emulated_packed_batch_is_its_sequences_emulated_alone, 0, 12);
	tcase_add_test(tc, offsets_that_do_not_fit_are_refused);
	suite_add_tcase(s, tc);
	return s;
}
