/*
 * check_emulate.c - lib/emulate.c and lib/round.c: rounding to float32,
 * float16 and bfloat16 (ties to even, subnormals, overflow), each
 * checked against an oracle that does not share its algorithm, on the
 * edge values of each format, and for arrays of floats by F16C and by
 * bits; and the emulated kernel: the same computation in software
 * rounding (emulate_ref.c) gives its bytes in every variant and on any
 * thread count, a float32 naive kernel written here agrees with it,
 * every number it stores is one of its format but lse, kept in float32, each format's error
 * against the fp64 reference is what the format's precision says, and
 * its progress is reported.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emulate_ref.h"
#include "internal.h"
#include "suites.h"
#include "testutil.h"

#define NCASES(t) ((int)(sizeof (t) / sizeof (t)[0]))

/* ---------------------------------------------------------------- oracles */

/* bfloat16 by integer arithmetic on the double's bits: keep the sign,
 * exponent and 7 fraction bits, round the 45 bits dropped half to even
 * (a carry into the exponent is right: it is the next binade), and for
 * numbers below bfloat16's normals, the bits below 2^-133.  An
 * algorithm of its own, unlike attn_round's scaling. */
static double
bf16_oracle(double x)
{
	uint64_t u, keep, rest, half;
	int e;
	double a = fabs(x);

	if (!isfinite(x) || x == 0.0)
		return x;
	memcpy(&u, &a, 8);
	e = (int)(u >> 52) - 1023;
	if (e < -126) {
		/* A subnormal of bfloat16: a multiple of 2^-133. */
		double m = a / ldexp(1.0, -133), f = floor(m);

		if (m - f > 0.5 || (m - f == 0.5 && fmod(f, 2) != 0))
			f += 1;
		return copysign(f * ldexp(1.0, -133), x);
	}
	keep = u >> 45;
	rest = u & ((UINT64_C(1) << 45) - 1);
	half = UINT64_C(1) << 44;
	if (rest > half || (rest == half && (keep & 1)))
		keep++;
	u = keep << 45;
	memcpy(&a, &u, 8);
	if (a > 3.3895313892515355e38)
		a = INFINITY;
	return copysign(a, x);
}

/* A random double of any exponent in [2^lo, 2^hi), either sign; every
 * eighth a tie of the format with `bits` bits. */
static double
random_double(struct ref_rng *rng, int lo, int hi, int bits)
{
	double m = ref_rng_uniform(rng, 0.5, 1.0);
	int e = lo + (int)ref_rng_range(rng, 0, (size_t)(hi - lo));
	double x = ldexp(m, e);

	if (ref_rng_range(rng, 0, 8) == 0) {
		/* Cut to bits + 1 bits with the last one set: a tie. */
		double s = ldexp(1.0, bits + 1 - e);

		x = (floor(x * s / 2) * 2 + 1) / s;
	}
	return ref_rng_range(rng, 0, 2) == 0 ? -x : x;
}

START_TEST(float32_rounding_is_the_float_cast)
{
	struct ref_rng rng;
	int i;

	ref_rng_seed(&rng, 101);
	for (i = 0; i < 200000; i++) {
		double x = random_double(&rng, -160, 130, 24);
		double want = (double)(float)x;

		if (memcmp(&want, &(double){ attn_round(x, ATTN_PREC_FP32) },
		    8) != 0)
			ck_abort_msg("%a rounds to %a, the float cast to %a", x,
			    attn_round(x, ATTN_PREC_FP32), want);
	}
}
END_TEST

START_TEST(bfloat16_rounding_agrees_with_bit_arithmetic)
{
	struct ref_rng rng;
	int i;

	ref_rng_seed(&rng, 202);
	for (i = 0; i < 200000; i++) {
		double x = random_double(&rng, -140, 129, 8);
		double want = bf16_oracle(x);

		if (memcmp(&want, &(double){ attn_round(x, ATTN_PREC_BF16) },
		    8) != 0)
			ck_abort_msg("%a rounds to %a, the bits to %a", x,
			    attn_round(x, ATTN_PREC_BF16), want);
	}
}
END_TEST

/* GCC and Clang convert to _Float16 correctly rounded (libgcc's
 * __truncdfhf2) where the target has it: an oracle when there is one. */
START_TEST(float16_rounding_agrees_with_the_compiler)
{
#if defined(__FLT16_MANT_DIG__)
	__extension__ typedef _Float16 half;
	struct ref_rng rng;
	int i;

	ref_rng_seed(&rng, 303);
	for (i = 0; i < 200000; i++) {
		double x = random_double(&rng, -27, 17, 11);
		double want = (double)(half)x;

		if (memcmp(&want, &(double){ attn_round(x, ATTN_PREC_FP16) },
		    8) != 0)
			ck_abort_msg("%a rounds to %a, _Float16 to %a", x,
			    attn_round(x, ATTN_PREC_FP16), want);
	}
#else
	fprintf(stderr, "emulate: no _Float16 here; float16 rounding is "
	    "checked on its edge values only\n");
#endif
}
END_TEST

/* ---------------------------------------------------------------- edges */


static const struct {
	enum attn_precision prec;
	double x, want;
	const char *what;
} edges[] = {
	/* float16: 11 bits, normals from 2^-14, largest 65504 */
	{ ATTN_PREC_FP16, 65504, 65504, "largest" },
	{ ATTN_PREC_FP16, 65519.99, 65504, "just below the overflow tie" },
	{ ATTN_PREC_FP16, 65520, INFINITY, "the tie past the largest: to "
	    "even, which is inf" },
	{ ATTN_PREC_FP16, -1e6, -INFINITY, "far past the largest" },
	{ ATTN_PREC_FP16, 0x1p-24, 0x1p-24, "smallest subnormal" },
	{ ATTN_PREC_FP16, 0x1p-25, 0, "half the smallest: a tie, to even 0" },
	{ ATTN_PREC_FP16, -0x1p-25, -0.0, "underflow keeps the sign" },
	{ ATTN_PREC_FP16, 3 * 0x1p-26, 0x1p-24, "above the tie" },
	{ ATTN_PREC_FP16, 1023 * 0x1p-24, 1023 * 0x1p-24, "largest "
	    "subnormal" },
	{ ATTN_PREC_FP16, 1023.5 * 0x1p-24, 0x1p-14, "a tie into the "
	    "normals, to even" },
	{ ATTN_PREC_FP16, 1 + 0x1p-11, 1, "a tie at 1, to even" },
	{ ATTN_PREC_FP16, 1 + 3 * 0x1p-11, 1 + 0x1p-9, "a tie up to even" },
	{ ATTN_PREC_FP16, 0.1, 0.0999755859375, "0.1" },
	{ ATTN_PREC_FP16, 1.0 / 3, 0.333251953125, "1/3" },
	/* bfloat16: 8 bits, float32's range */
	{ ATTN_PREC_BF16, 3.3895313892515355e38, 3.3895313892515355e38,
	    "largest" },
	{ ATTN_PREC_BF16, 3.3895313892515355e38 + 0x1p119, INFINITY,
	    "the tie past the largest" },
	{ ATTN_PREC_BF16, 3.3895313892515355e38 + 0x1p118, 3.3895313892515355e38,
	    "below that tie" },
	{ ATTN_PREC_BF16, 0x1p-133, 0x1p-133, "smallest subnormal" },
	{ ATTN_PREC_BF16, 0x1p-134, 0, "half the smallest: to even 0" },
	{ ATTN_PREC_BF16, 3 * 0x1p-135, 0x1p-133, "above the tie" },
	{ ATTN_PREC_BF16, 1 + 0x1p-8, 1, "a tie at 1, to even" },
	{ ATTN_PREC_BF16, 1 + 3 * 0x1p-8, 1 + 0x1p-6, "a tie up to even" },
	{ ATTN_PREC_BF16, 0.1, 0.10009765625, "0.1" },
	/* float32 */
	{ ATTN_PREC_FP32, FLT_MAX, FLT_MAX, "largest" },
	{ ATTN_PREC_FP32, FLT_MAX + 0x1p103, INFINITY, "the tie past the "
	    "largest" },
	{ ATTN_PREC_FP32, 0x1p-149, 0x1p-149, "smallest subnormal" },
	{ ATTN_PREC_FP32, 0x1p-150, 0, "half the smallest: to even 0" },
	{ ATTN_PREC_FP32, 1 + 0x1p-24, 1, "a tie at 1, to even" },
	{ ATTN_PREC_FP32, 1 + 3 * 0x1p-24, 1 + 0x1p-22, "a tie up" },
	/* what every format keeps */
	{ ATTN_PREC_FP16, -0.0, -0.0, "-0" },
	{ ATTN_PREC_BF16, -INFINITY, -INFINITY, "-inf" },
	{ ATTN_PREC_FP64, 0.1, 0.1, "fp64 is the identity" },
};

START_TEST(rounding_edge_values)
{
	double got = attn_round(edges[_i].x, edges[_i].prec);

	ck_assert_msg(memcmp(&got, &edges[_i].want, 8) == 0, "%s: %a rounds "
	    "to %a, want %a", edges[_i].what, edges[_i].x, got,
	    edges[_i].want);
}
END_TEST

START_TEST(nan_rounds_to_nan)
{
	ck_assert(isnan(attn_round(NAN, ATTN_PREC_FP16)));
	ck_assert(isnan(attn_round(NAN, ATTN_PREC_BF16)));
	ck_assert(isnan(attn_round(NAN, ATTN_PREC_FP32)));
}
END_TEST

/* ---------------------------------------------------------------- kernel */

/* The variants the emulation must carry like the reference: case 0
 * plain, 1 causal with a mask, 2 bias and ALiBi, 3 softcap, 4 GQA with
 * batches. */
struct problem {
	struct attn_matrix q, k, v, mask, bias, d_out, sinks, dropout;
	struct attn_inputs in;
	struct attn_config cfg;
};

static void
problem_make(struct problem *pb, int variant, double spread)
{
	const size_t B = variant == 4 ? 2 : 1, H = variant == 4 ? 4 : 1;
	const size_t G = variant == 4 ? 2 : 1, T = 5, S = 7, D = 8;
	struct ref_rng rng;
	size_t i;

	memset(pb, 0, sizeof *pb);
	ref_rng_seed(&rng, 900 + (unsigned)variant);
	pb->q = matrix_random(&rng, B * T, H * D, -spread, spread);
	pb->k = matrix_random(&rng, B * S, G * D, -spread, spread);
	pb->v = matrix_random(&rng, B * S, G * D, -1, 1);
	pb->d_out = matrix_random(&rng, B * T, H * D, -1, 1);
	attn_config_init(&pb->cfg);
	pb->cfg.heads = H;
	pb->cfg.kv_heads = G;
	pb->in.batches = B;
	pb->in.q = pb->q;
	pb->in.k = pb->k;
	pb->in.v = pb->v;
	pb->in.d_out = pb->d_out;
	if (variant == 1) {
		pb->cfg.causal = 1;
		pb->mask = matrix_random(&rng, T, S, 0, 1);
		for (i = 0; i < T * S; i++)
			pb->mask.data[i] = pb->mask.data[i] < 0.8;
		pb->in.mask = pb->mask;
		pb->in.mask_blocks = 1;
	} else if (variant == 2) {
		pb->cfg.alibi = 1;
		pb->bias = matrix_random(&rng, T, S, -2, 2);
		pb->in.bias = pb->bias;
		pb->in.bias_blocks = 1;
	} else if (variant == 3) {
		pb->cfg.softcap = 1.5;
	}
}

static void
problem_free(struct problem *pb)
{
	attn_matrix_free(&pb->q);
	attn_matrix_free(&pb->k);
	attn_matrix_free(&pb->v);
	attn_matrix_free(&pb->mask);
	attn_matrix_free(&pb->bias);
	attn_matrix_free(&pb->d_out);
	attn_matrix_free(&pb->sinks);
	attn_matrix_free(&pb->dropout);
}

static void
emulate_set(const struct problem *pb, enum attn_precision prec,
    unsigned want, struct attn_stages *st)
{
	struct attn_error err;

	memset(&err, 0, sizeof err);
	ck_assert_msg(attn_emulate(&pb->cfg, &pb->in, want, prec, st, &err) ==
	    ATTN_OK, "attn_emulate: %s", err.msg);
	ck_assert_int_eq(st->precision, prec);
	ck_assert_uint_eq(st->have & want, want);
}

static void
emulate_ok(const struct problem *pb, enum attn_precision prec,
    struct attn_stages *st)
{
	emulate_set(pb, prec, ATTN_STAGES_ALL, st);
}

/* The float32 naive kernel a user would write, in plain float with fma
 * (q scaled first, as attention_ref does): one query of the plain
 * problem (variant 0), scale 1/sqrt(d). */
static void
float_kernel(const struct problem *pb, size_t i, float *out)
{
	const size_t S = pb->k.rows, D = pb->q.cols, DV = pb->v.cols;
	const float scale = (float)(1.0 / sqrt((double)D));
	float s[64], max = -INFINITY, sum = 0.0f;
	size_t j, c;

	for (j = 0; j < S; j++) {
		float dot = 0.0f;

		for (c = 0; c < D; c++)
			dot = fmaf((float)*attn_at(&pb->q, i, c) * scale,
			    (float)*attn_at(&pb->k, j, c), dot);
		s[j] = dot;
		if (s[j] > max)
			max = s[j];
	}
	for (j = 0; j < S; j++)
		sum += expf(s[j] - max);
	for (c = 0; c < DV; c++) {
		float o = 0.0f;

		for (j = 0; j < S; j++)
			o = fmaf(expf(s[j] - max) / sum,
			    (float)*attn_at(&pb->v, j, c), o);
		out[c] = o;
	}
}

START_TEST(fp32_emulation_is_a_plain_float_kernel)
{
	struct problem pb;
	struct attn_stages st;
	float out[16];
	size_t i, c;

	problem_make(&pb, 0, 2.0);
	emulate_ok(&pb, ATTN_PREC_FP32, &st);
	for (i = 0; i < pb.q.rows; i++) {
		float_kernel(&pb, i, out);
		for (c = 0; c < pb.v.cols; c++)
			/* expf may differ from exp rounded by an ulp */
			ck_assert_msg(fabs(out[c] - stage_at(&st,
			    ATTN_STAGE_OUTPUT, i, c)) <= 4 * FLT_EPSILON,
			    "row %zu col %zu: float %.9g, emulated %.9g", i, c,
			    (double)out[c], stage_at(&st, ATTN_STAGE_OUTPUT, i,
			    c));
	}
	attn_stages_free(&st);
	problem_free(&pb);
}
END_TEST

/* Case i: precision i / 5 + 1, variant i % 5. */
START_TEST(emulated_stages_hold_numbers_of_their_format)
{
	const enum attn_precision prec = (enum attn_precision)(_i / 5 + 1);
	static const enum attn_stage stored[] = { ATTN_STAGE_SCORES,
	    ATTN_STAGE_SCALED, ATTN_STAGE_WEIGHTS, ATTN_STAGE_OUTPUT };
	struct problem pb;
	struct attn_stages st;
	size_t k, i, n;

	problem_make(&pb, _i % 5, 2.0);
	emulate_ok(&pb, prec, &st);
	for (k = 0; k < sizeof stored / sizeof stored[0]; k++) {
		const struct attn_matrix *m = &st.stage[stored[k]];

		n = m->rows * m->cols;
		for (i = 0; i < n; i++)
			ck_assert_msg(isnan(m->data[i]) || attn_round(m->data[i],
			    prec) == m->data[i], "%s[%zu] = %a is no number "
			    "of the format", attn_stage_table[stored[k]].name,
			    i, m->data[i]);
	}
	attn_stages_free(&st);
	problem_free(&pb);
}
END_TEST

/*
 * lse stays in the accumulator's precision, float32, in every format, as
 * FlashAttention's kernels store softmax_lse: each row's is A(max +
 * A(log(sum))) of the row's float32 maximum and sum, and in float16 and
 * bfloat16 not all of them are numbers of the format (rounded to it, a
 * bf16 lse of 4 would be off by up to 2^-6).  Case i: precision i / 5 +
 * 1, variant i % 5.
 */
START_TEST(emulated_lse_stays_in_float32)
{
	const enum attn_precision prec = (enum attn_precision)(_i / 5 + 1);
	struct problem pb;
	struct attn_stages st;
	const struct attn_matrix *lse;
	size_t i, narrow = 0;

	problem_make(&pb, _i % 5, 2.0);
	emulate_ok(&pb, prec, &st);
	lse = &st.stage[ATTN_STAGE_LSE];
	for (i = 0; i < lse->rows; i++) {
		const double l = *attn_at(lse, i, 0);
		const float mx = (float)stage_at(&st, ATTN_STAGE_ROW_MAX, i, 0);
		const float sum = (float)stage_at(&st, ATTN_STAGE_ROW_SUM, i,
		    0);

		if (!isfinite(l))
			continue;
		ck_assert_msg(l == (double)(mx + (float)log((double)sum)),
		    "lse[%zu] = %a, not A(%a + A(log(%a)))", i, l, (double)mx,
		    (double)sum);
		narrow += attn_round(l, prec) != l;
	}
	if (prec != ATTN_PREC_FP32)
		ck_assert_msg(narrow > 0, "every lse of precision %d is a number "
		    "of the format: rounded to it", (int)prec);
	attn_stages_free(&st);
	problem_free(&pb);
}
END_TEST

/*
 * Against fp64, each format errs as its precision says: the output's
 * largest error is below a few hundred units of its last bit (2^-23 for
 * float32, 2^-10 for float16, 2^-7 for bfloat16, with d = 8 and S = 7
 * terms in each sum), and above zero for the narrow formats, and the
 * masks are the reference's exactly.
 */
START_TEST(emulated_error_follows_the_format)
{
	const enum attn_precision prec = (enum attn_precision)(_i / 5 + 1);
	static const double ulp[] = { 0, 0x1p-23, 0x1p-10, 0x1p-7 };
	struct problem pb;
	struct attn_stages ref, emu;
	double worst = 0;
	size_t i, n;

	problem_make(&pb, _i % 5, 2.0);
	run_ok(KERNEL_REFERENCE, &pb.cfg, &pb.in, ATTN_STAGES_ALL, &ref);
	emulate_ok(&pb, prec, &emu);
	n = ref.stage[ATTN_STAGE_OUTPUT].rows *
	    ref.stage[ATTN_STAGE_OUTPUT].cols;
	for (i = 0; i < n; i++)
		worst = fmax(worst, fabs(ref.stage[ATTN_STAGE_OUTPUT].data[i] -
		    emu.stage[ATTN_STAGE_OUTPUT].data[i]));
	ck_assert_msg(worst < 64 * ulp[prec], "precision %d: output off by %g",
	    (int)prec, worst);
	if (prec != ATTN_PREC_FP32)
		ck_assert_msg(worst > 0, "a narrow format made no error");
	expect_same("mask", &ref.stage[ATTN_STAGE_MASK],
	    &emu.stage[ATTN_STAGE_MASK]);
	attn_stages_free(&ref);
	attn_stages_free(&emu);
	problem_free(&pb);
}
END_TEST

/* The backward stages of the emulation, for every format and variant
 * (case i: precision i / 5 + 1, variant i % 5, the last with heads
 * sharing KV heads, whose parts of grad_k and grad_v are added in the
 * format): numbers of the format, within a few hundred of its units of
 * the double backward pass, and not exact in the narrow formats. */
START_TEST(emulated_backward_follows_the_format)
{
	const enum attn_precision prec = (enum attn_precision)(_i / 5 + 1);
	static const double ulp[] = { 0, 0x1p-23, 0x1p-10, 0x1p-7 };
	/* and delta, the float32 sum inside the softmax's backward */
	static const enum attn_stage grads[] = { ATTN_STAGE_GRAD_WEIGHTS,
	    ATTN_STAGE_DELTA, ATTN_STAGE_GRAD_SCALED, ATTN_STAGE_GRAD_Q,
	    ATTN_STAGE_GRAD_K, ATTN_STAGE_GRAD_V };
	struct problem pb;
	struct attn_stages ref, emu;
	double worst = 0, big;
	size_t k, i, n;

	problem_make(&pb, _i % 5, 2.0);
	run_ok(KERNEL_REFERENCE, &pb.cfg, &pb.in, ATTN_STAGES_ALL |
	    ATTN_STAGES_GRAD, &ref);
	emulate_set(&pb, prec, ATTN_STAGES_ALL | ATTN_STAGES_GRAD, &emu);
	for (k = 0; k < sizeof grads / sizeof grads[0]; k++) {
		const struct attn_matrix *e = &emu.stage[grads[k]];
		const struct attn_matrix *r = &ref.stage[grads[k]];

		ck_assert_uint_eq(e->rows, r->rows);
		ck_assert_uint_eq(e->cols, r->cols);
		n = e->rows * e->cols;
		big = 1;
		for (i = 0; i < n; i++)
			big = fmax(big, fabs(r->data[i]));
		for (i = 0; i < n; i++) {
			ck_assert_msg(attn_round(e->data[i], grads[k] ==
			    ATTN_STAGE_DELTA ? ATTN_PREC_FP32 : prec) ==
			    e->data[i], "%s[%zu] = %a is no number of the format",
			    attn_stage_table[grads[k]].name, i, e->data[i]);
			worst = fmax(worst, fabs(e->data[i] - r->data[i]) / big);
		}
	}
	ck_assert_msg(worst < 256 * ulp[prec], "precision %d: backward off by "
	    "%g of its largest value", (int)prec, worst);
	if (prec != ATTN_PREC_FP32)
		ck_assert_msg(worst > 0, "a narrow format made no error");
	attn_stages_free(&ref);
	attn_stages_free(&emu);
	problem_free(&pb);
}
END_TEST

/* The fp32 emulation's grad_v is what plain float code computes: the
 * weights as it stores them times dO, summed query after query with
 * fma (one head, variant 0). */
START_TEST(fp32_emulated_grad_v_is_plain_float)
{
	struct problem pb;
	struct attn_stages st;
	size_t i, j, c;

	problem_make(&pb, 0, 2.0);
	emulate_set(&pb, ATTN_PREC_FP32, STAGE(WEIGHTS) | STAGE(GRAD_V), &st);
	for (j = 0; j < pb.k.rows; j++)
		for (c = 0; c < pb.v.cols; c++) {
			float acc = 0.0f;

			for (i = 0; i < pb.q.rows; i++)
				acc = fmaf((float)stage_at(&st,
				    ATTN_STAGE_WEIGHTS, i, j),
				    (float)*attn_at(&pb.d_out, i, c), acc);
			ck_assert_msg((double)acc == stage_at(&st,
			    ATTN_STAGE_GRAD_V, j, c), "grad_v[%zu][%zu]: float "
			    "%.9g, emulated %.9g", j, c, (double)acc,
			    stage_at(&st, ATTN_STAGE_GRAD_V, j, c));
		}
	attn_stages_free(&st);
	problem_free(&pb);
}
END_TEST

/* Scores past 65504 are inf in float16, and the softmax of an inf is
 * nan: the baseline fails as a naive fp16 kernel would, without an
 * error; float32 and bfloat16 hold them. */
START_TEST(float16_overflow_is_inf_not_an_error)
{
	struct problem pb;
	struct attn_stages st;

	problem_make(&pb, 0, 200.0);
	emulate_ok(&pb, ATTN_PREC_FP16, &st);
	ck_assert(isinf(*attn_at(&st.stage[ATTN_STAGE_SCORES], 0, 0)) ||
	    isinf(*attn_at(&st.stage[ATTN_STAGE_SCORES], 0, 1)));
	attn_stages_free(&st);
	emulate_ok(&pb, ATTN_PREC_BF16, &st);
	ck_assert(isfinite(*attn_at(&st.stage[ATTN_STAGE_OUTPUT], 0, 0)));
	attn_stages_free(&st);
	problem_free(&pb);
}
END_TEST

/* ------------------------------------------------------ arrays of floats */

/* A double rounded to odd in float32, then to float16 or bfloat16 by
 * attn_round_floats, is attn_round of the double: on random doubles of
 * every exponent those formats have (and past them), an eighth of them
 * ties of the format, whose double rounding through a float32 tie would
 * go wrong.  Case 0 float16, 1 bfloat16. */
START_TEST(rounding_to_odd_then_to_the_format_is_attn_round)
{
	const enum attn_precision prec = _i ? ATTN_PREC_BF16 : ATTN_PREC_FP16;
	struct ref_rng rng;
	int i;

	ref_rng_seed(&rng, 505);
	for (i = 0; i < 200000; i++) {
		const double x = _i ? random_double(&rng, -140, 129, 8) :
		    random_double(&rng, -27, 17, 11);
		const double y = x + ldexp(x, -40) * (double)(i % 3 - 1);
		const double want = attn_round(y, prec);
		float f = attn_round_odd(y);

		attn_round_floats(&f, 1, prec, 0);
		if (memcmp(&want, &(double){ (double)f }, 8) != 0)
			ck_abort_msg("%a rounds to %a through odd, attn_round "
			    "to %a", y, (double)f, want);
	}
}
END_TEST


/* attn_round_floats, by F16C and by bits, against attn_round of the same
 * float: every float16 tie (a float whose 13 bits below float16's last
 * are 0x1000, over every sign, exponent and fraction) and bfloat16 tie
 * (16 bits 0x8000), each neighbour of a tie, and random bit patterns
 * (nan, inf and subnormals among them).  Case 0 float16 by hardware,
 * 1 float16 by bits, 2 bfloat16. */
static void
floats_agree(enum attn_precision prec, int hardware, const float *x,
    size_t n)
{
	float *y = malloc(n * sizeof *y);
	size_t i;

	memcpy(y, x, n * sizeof *y);
	attn_round_floats(y, n, prec, hardware);
	for (i = 0; i < n; i++) {
		const double want = attn_round((double)x[i], prec);

		if (isnan(want) ? !isnan(y[i]) : memcmp(&want,
		    &(double){ (double)y[i] }, 8) != 0)
			ck_abort_msg("%a rounds to %a, attn_round to %a",
			    (double)x[i], (double)y[i], want);
	}
	free(y);
}

START_TEST(float_arrays_round_as_attn_round)
{
	const enum attn_precision prec = _i == 2 ? ATTN_PREC_BF16 :
	    ATTN_PREC_FP16;
	const unsigned shift = prec == ATTN_PREC_BF16 ? 16 : 13;
	const size_t n = (size_t)1 << (32 - shift);
	float *x = malloc(3 * n * sizeof *x);
	struct ref_rng rng;
	uint32_t u, k;
	size_t i;

	for (k = 0; k < n; k++) {
		u = (k << shift) | (1u << (shift - 1));
		memcpy(&x[3 * k], &u, 4);
		u -= 1;
		memcpy(&x[3 * k + 1], &u, 4);
		u += 2;
		memcpy(&x[3 * k + 2], &u, 4);
	}
	floats_agree(prec, _i == 0, x, 3 * n);
	ref_rng_seed(&rng, 404);
	for (i = 0; i < 3 * n; i++) {
		u = (uint32_t)ref_rng_range(&rng, 0, 65536) << 16 |
		    (uint32_t)ref_rng_range(&rng, 0, 65536);
		memcpy(&x[i], &u, 4);
	}
	floats_agree(prec, _i == 0, x, 3 * n);
	free(x);
}
END_TEST

/* ------------------------------------------------------------- the oracle */

/*
 * The variants the fast emulation must compute as its oracle
 * (emulate_ref.c) does, bit for bit: T = 21 and S = 19 rows (no whole
 * number of the emulation's 16 lanes or 4-key tiles), d_k 12, d_v 10.
 * V_DROPOUT is V_ALL's GQA and softcap with a dropout mask of a block
 * per batch and head, p = 0.3, and no bias or sinks.
 */
enum {
	V_PLAIN, V_MASK, V_WINDOW, V_BIAS, V_SOFTCAP, V_SINKS, V_GQA,
	V_EMPTY_ZERO, V_EMPTY_NAN, V_EMPTY_UNIFORM, V_OVERFLOW, V_ALL,
	V_ALL_K,	/* V_ALL with the scale on k (--emulate-order k) */
	V_DROPOUT, V_COUNT
};

static void
vproblem_make(struct problem *pb, int variant)
{
	const int all = variant == V_ALL || variant == V_ALL_K ||
	    variant == V_DROPOUT;
	const size_t B = variant == V_GQA || all ? 2 : 1;
	const size_t H = variant == V_GQA || all ? 4 : variant == V_BIAS ||
	    variant == V_SINKS ? 2 : 1;
	const size_t G = variant == V_GQA || all ? 2 : H;
	const size_t T = 21, S = 19, DK = 12, DV = 10;
	const double spread = variant == V_OVERFLOW ? 300.0 :
	    variant == V_SOFTCAP || all ? 3.0 : 1.5;
	struct ref_rng rng;
	size_t i, j;

	memset(pb, 0, sizeof *pb);
	ref_rng_seed(&rng, 1700 + (unsigned)variant);
	pb->q = matrix_random(&rng, B * T, H * DK, -spread, spread);
	pb->k = matrix_random(&rng, B * S, G * DK, -spread, spread);
	pb->v = matrix_random(&rng, B * S, G * DV, -1, 1);
	pb->d_out = matrix_random(&rng, B * T, H * DV, -1, 1);
	attn_config_init(&pb->cfg);
	pb->cfg.heads = H;
	pb->cfg.kv_heads = G;
	pb->in.batches = B;
	if (variant == V_MASK || all || variant >= V_EMPTY_ZERO) {
		pb->mask = matrix_random(&rng, T, S, 0, 1);
		for (i = 0; i < T * S; i++)
			pb->mask.data[i] = pb->mask.data[i] < 0.8;
		if (variant >= V_EMPTY_ZERO && variant <= V_EMPTY_UNIFORM)
			for (i = 0; i < T; i += 4)
				for (j = 0; j < S; j++)
					*attn_at(&pb->mask, i, j) = 0;
		pb->in.mask = pb->mask;
		pb->in.mask_blocks = 1;
	}
	if (variant == V_MASK || all) {
		pb->cfg.causal = 1;
		pb->cfg.align = ATTN_ALIGN_BOTTOM_RIGHT;
	}
	if (variant == V_WINDOW) {
		pb->cfg.window = 1;
		pb->cfg.window_left = 3;
		pb->cfg.window_right = 2;
	}
	if (variant == V_DROPOUT) {
		pb->dropout = matrix_random(&rng, B * H * T, S, 0, 1);
		for (i = 0; i < B * H * T * S; i++)
			pb->dropout.data[i] = pb->dropout.data[i] >= 0.25;
		pb->in.dropout_mask = pb->dropout;
		pb->in.dropout_blocks = B * H;
		pb->cfg.dropout_p = 0.3;
	}
	if (variant == V_BIAS || variant == V_ALL) {
		pb->cfg.alibi = 1;
		pb->bias = matrix_random(&rng, T, S, -2, 2);
		for (i = 0; i < T * S; i += 7)
			pb->bias.data[i] = -INFINITY;
		pb->in.bias = pb->bias;
		pb->in.bias_blocks = 1;
	}
	if (variant == V_SOFTCAP || all)
		pb->cfg.softcap = 2.5;
	if (variant == V_SINKS || variant == V_ALL) {
		pb->sinks = matrix_random(&rng, 1, H, -1, 3);
		pb->in.sinks = pb->sinks;
	}
	if (variant == V_ALL_K)
		pb->cfg.emulate_order = ATTN_EMULATE_ORDER_K;
	pb->cfg.masked_rows = variant == V_EMPTY_NAN ? ATTN_MASKED_NAN :
	    variant == V_EMPTY_UNIFORM ? ATTN_MASKED_UNIFORM :
	    ATTN_MASKED_ZERO;
	pb->in.q = pb->q;
	pb->in.k = pb->k;
	pb->in.v = pb->v;
	pb->in.d_out = pb->d_out;
}

/* Fail unless every held stage of want is the same bytes in a and b (a
 * nan equals any nan). */
static void
expect_bits(const char *what, const struct attn_stages *a,
    const struct attn_stages *b, unsigned want)
{
	size_t s, i, n;

	for (s = 0; s < ATTN_STAGE_COUNT; s++) {
		const struct attn_matrix *x = &a->stage[s], *y = &b->stage[s];

		if (!(want & ATTN_STAGE_BIT(s)))
			continue;
		ck_assert_msg(x->rows == y->rows && x->cols == y->cols,
		    "%s: %s is %zux%zu and %zux%zu", what,
		    attn_stage_table[s].name, x->rows, x->cols, y->rows,
		    y->cols);
		n = x->rows * x->cols;
		for (i = 0; i < n; i++)
			if (isnan(x->data[i]) ? !isnan(y->data[i]) :
			    memcmp(&x->data[i], &y->data[i], 8) != 0)
				ck_abort_msg("%s: %s[%zu][%zu] is %a, the "
				    "oracle's %a", what,
				    attn_stage_table[s].name, i / x->cols,
				    i % x->cols, x->data[i], y->data[i]);
	}
}

/* Case i: variant i / 5, precision i % 5 + 1; every stage, forward and
 * backward (forward alone in the FP8 formats, which have no backward),
 * on 1 and on 3 threads, and the forward stages alone; the
 * second time float16 by bits (the loops capped at plain C), not F16C,
 * and a third capped at AVX2 where the CPU has it (the first takes the
 * widest it has).  The FP8 formats, which scale the logits, refuse the
 * scale on k (a usage error naming the kernel). */
START_TEST(the_emulation_is_its_oracle_bit_for_bit)
{
	const int variant = _i / 5;
	const enum attn_precision prec = (enum attn_precision)(_i % 5 + 1);
	unsigned every = ATTN_STAGES_ALL | (prec >= ATTN_PREC_FP8_E4M3 ?
	    0u : ATTN_STAGES_GRAD);
	static const size_t threads[] = { 1, 3, 2 };
	static const enum attn_isa isa[] = {
		ATTN_ISA_AUTO, ATTN_ISA_C, ATTN_ISA_AVX2
	};
	static const char *const isa_name[] = { "", ", plain C", ", AVX2" };
	struct problem pb;
	struct attn_stages ref, fast;
	struct attn_error err;
	char what[64];
	size_t t;

	vproblem_make(&pb, variant);
	memset(&err, 0, sizeof err);
	if (variant == V_ALL_K && prec >= ATTN_PREC_FP8_E4M3) {
		ck_assert_int_eq(attn_emulate(&pb.cfg, &pb.in, every, prec,
		    &fast, &err), ATTN_ERR_USAGE);
		ck_assert_msg(strstr(err.msg, "neither q nor k") != NULL, "%s",
		    err.msg);
		problem_free(&pb);
		return;
	}
	if (variant == V_DROPOUT && prec >= ATTN_PREC_FP8_E4M3) {
		/* FlashAttention 3's fp8 kernels have no dropout */
		ck_assert_int_eq(attn_emulate(&pb.cfg, &pb.in, ATTN_STAGES_ALL,
		    prec, &fast, &err), ATTN_ERR_USAGE);
		ck_assert_msg(strstr(err.msg, "takes no dropout mask") != NULL,
		    "%s", err.msg);
		problem_free(&pb);
		return;
	}
	if (variant == V_DROPOUT)
		every |= ATTN_STAGES_DROPOUT;
	ck_assert_msg(emulate_ref(&pb.cfg, &pb.in, every, prec, &ref, &err) ==
	    ATTN_OK, "oracle: %s", err.msg);
	for (t = 0; t < 3; t++) {
		if (isa[t] == ATTN_ISA_AVX2 &&
		    attn_simd_get(ATTN_ISA_AVX2) == NULL)
			continue;
		pb.cfg.threads = threads[t];
		pb.cfg.isa = isa[t];
		snprintf(what, sizeof what, "variant %d, precision %d, %zu "
		    "threads%s", variant, (int)prec, threads[t], isa_name[t]);
		ck_assert_msg(attn_emulate(&pb.cfg, &pb.in, every, prec, &fast,
		    &err) == ATTN_OK, "%s: %s", what, err.msg);
		expect_bits(what, &fast, &ref, every);
		attn_stages_free(&fast);
		ck_assert_msg(attn_emulate(&pb.cfg, &pb.in, ATTN_STAGES_ALL,
		    prec, &fast, &err) == ATTN_OK, "%s: %s", what, err.msg);
		expect_bits(what, &fast, &ref, ATTN_STAGES_ALL);
		attn_stages_free(&fast);
	}
	attn_stages_free(&ref);
	problem_free(&pb);
}
END_TEST

/* The FP8 formats compute no backward stage (FlashAttention 3's fp8
 * kernels are forward only): asked for one, a usage error. */
START_TEST(fp8_emulation_refuses_the_backward)
{
	const enum attn_precision prec = _i ? ATTN_PREC_FP8_E5M2 :
	    ATTN_PREC_FP8_E4M3;
	struct problem pb;
	struct attn_stages st;
	struct attn_error err;

	vproblem_make(&pb, 0);
	memset(&err, 0, sizeof err);
	ck_assert_int_eq(attn_emulate(&pb.cfg, &pb.in, STAGE(GRAD_Q), prec,
	    &st, &err), ATTN_ERR_USAGE);
	ck_assert_msg(strstr(err.msg, "grad_q") != NULL, "%s", err.msg);
	problem_free(&pb);
}
END_TEST

/*
 * q is scaled before the dot products, as attention_ref(upcast=False)
 * does: in float16 with d_k = 64 and every q and k 40, q k is 102400,
 * past 65504, but (q / 8) k is 12800, so the weights are uniform and the
 * output finite, where scaling the scores would have made them inf and
 * the output nan.
 */
START_TEST(q_is_scaled_before_the_dot_products)
{
	struct attn_inputs in;
	struct attn_config cfg;
	struct attn_stages st;
	struct attn_error err;
	size_t i;

	memset(&in, 0, sizeof in);
	in.batches = 1;
	attn_matrix_alloc(&in.q, 3, 64, &err);
	attn_matrix_alloc(&in.k, 5, 64, &err);
	attn_matrix_alloc(&in.v, 5, 2, &err);
	for (i = 0; i < 3 * 64; i++)
		in.q.data[i] = 40;
	for (i = 0; i < 5 * 64; i++)
		in.k.data[i] = 40;
	for (i = 0; i < 10; i++)
		in.v.data[i] = (double)i;
	attn_config_init(&cfg);
	ck_assert(attn_emulate(&cfg, &in, STAGE(SCORES) | STAGE(SCALED) |
	    STAGE(OUTPUT), ATTN_PREC_FP16, &st, &err) == ATTN_OK);
	ck_assert(isinf(stage_at(&st, ATTN_STAGE_SCORES, 0, 0)));
	ck_assert(stage_at(&st, ATTN_STAGE_SCALED, 0, 0) == 12800);
	ck_assert_msg(stage_at(&st, ATTN_STAGE_OUTPUT, 0, 0) == 4, "output "
	    "%g, the mean of 0, 2, 4, 6, 8 is 4",
	    stage_at(&st, ATTN_STAGE_OUTPUT, 0, 0));
	attn_stages_free(&st);
	attn_matrix_free(&in.q);
	attn_matrix_free(&in.k);
	attn_matrix_free(&in.v);
}
END_TEST

/*
 * The scale on k is the scale on q with the two swapped: with
 * --emulate-order k, Q against K gives the logits that the default
 * order gives for K against Q, transposed, bit for bit (each logit is
 * the same fmaf chain, its factors swapped), in fp32, fp16 and bf16;
 * and the two orders differ, d_k = 12 making the scale no power of 2.
 * T = 7 queries, S = 5 keys.
 */
START_TEST(k_order_is_q_order_with_q_and_k_swapped)
{
	const enum attn_precision prec = (enum attn_precision)(_i + 1);
	const size_t T = 7, S = 5, D = 12;
	struct ref_rng rng;
	struct attn_matrix q, k, vs, vt;
	struct attn_inputs in;
	struct attn_config cfg;
	struct attn_stages ko, qo, sw;
	struct attn_error err;
	size_t i, j, differ = 0;

	ref_rng_seed(&rng, 2600 + (unsigned)_i);
	q = matrix_random(&rng, T, D, -3, 3);
	k = matrix_random(&rng, S, D, -3, 3);
	vs = matrix_random(&rng, S, 2, -1, 1);
	vt = matrix_random(&rng, T, 2, -1, 1);
	memset(&in, 0, sizeof in);
	memset(&err, 0, sizeof err);
	in.batches = 1;
	in.q = q;
	in.k = k;
	in.v = vs;
	attn_config_init(&cfg);
	cfg.emulate_order = ATTN_EMULATE_ORDER_K;
	ck_assert_msg(attn_emulate(&cfg, &in, STAGE(SCALED), prec, &ko,
	    &err) == ATTN_OK, "%s", err.msg);
	cfg.emulate_order = ATTN_EMULATE_ORDER_Q;
	ck_assert_msg(attn_emulate(&cfg, &in, STAGE(SCALED), prec, &qo,
	    &err) == ATTN_OK, "%s", err.msg);
	in.q = k;
	in.k = q;
	in.v = vt;
	ck_assert_msg(attn_emulate(&cfg, &in, STAGE(SCALED), prec, &sw,
	    &err) == ATTN_OK, "%s", err.msg);
	for (i = 0; i < T; i++)
		for (j = 0; j < S; j++) {
			const double a = stage_at(&ko, ATTN_STAGE_SCALED, i, j);
			const double b = stage_at(&sw, ATTN_STAGE_SCALED, j, i);

			ck_assert_msg(memcmp(&a, &b, sizeof a) == 0, "logit "
			    "(%zu, %zu) is %a with k scaled, %a with K and Q "
			    "swapped", i, j, a, b);
			differ += a != stage_at(&qo, ATTN_STAGE_SCALED, i, j);
		}
	ck_assert_msg(differ > 0, "no logit of precision %d tells the two "
	    "orders apart", (int)prec);
	attn_stages_free(&ko);
	attn_stages_free(&qo);
	attn_stages_free(&sw);
	attn_matrix_free(&q);
	attn_matrix_free(&k);
	attn_matrix_free(&vs);
	attn_matrix_free(&vt);
}
END_TEST

/* The progress of an emulated run: one phase, named, counting every
 * task to the last, in order.  Case 0 the forward pass (a task a block
 * of 16 rows: 2 a head here), 1 with the backward (and a task a block
 * of 16 keys: 2 more a head). */
struct emu_log {
	size_t calls, last, total;
	int backwards;
	const char *what;
};

static void
emu_note(void *arg, const char *what, size_t done, size_t total)
{
	struct emu_log *log = arg;

	log->backwards |= done <= log->last;
	log->calls++;
	log->last = done;
	log->total = total;
	log->what = what;
}

START_TEST(an_emulated_run_reports_its_progress)
{
	struct problem pb;
	struct attn_stages st;
	struct attn_error err;
	struct emu_log log;
	const size_t tasks = 2 * 4 * (_i ? 4 : 2);	/* B H (per head) */

	memset(&log, 0, sizeof log);
	vproblem_make(&pb, V_GQA);
	pb.cfg.progress = emu_note;
	pb.cfg.progress_arg = &log;
	pb.cfg.threads = 2;
	ck_assert(attn_emulate(&pb.cfg, &pb.in, _i ? STAGE(GRAD_K) :
	    STAGE(OUTPUT), ATTN_PREC_BF16, &st, &err) == ATTN_OK);
	ck_assert_uint_eq(log.calls, tasks);
	ck_assert_uint_eq(log.last, tasks);
	ck_assert_uint_eq(log.total, tasks);
	ck_assert_int_eq(log.backwards, 0);
	ck_assert_str_eq(log.what, _i ? "blocks of the emulated bf16 kernel, "
	    "forward and backward" : "query blocks of the emulated bf16 "
	    "kernel");
	attn_stages_free(&st);
	problem_free(&pb);
}
END_TEST

Suite *
emulate_suite(void)
{
	Suite *s = suite_create("emulate");
	TCase *round = tcase_create("round");
	TCase *kernel = tcase_create("kernel");

	tcase_add_test(round, float32_rounding_is_the_float_cast);
	tcase_add_test(round, bfloat16_rounding_agrees_with_bit_arithmetic);
	tcase_add_test(round, float16_rounding_agrees_with_the_compiler);
	tcase_add_loop_test(round, rounding_edge_values, 0, NCASES(edges));
	tcase_add_test(round, nan_rounds_to_nan);
	tcase_add_loop_test(round, float_arrays_round_as_attn_round, 0, 3);
	tcase_add_loop_test(round, rounding_to_odd_then_to_the_format_is_attn_round,
	    0, 2);
	suite_add_tcase(s, round);

	tcase_add_test(kernel, fp32_emulation_is_a_plain_float_kernel);
	tcase_add_loop_test(kernel, emulated_stages_hold_numbers_of_their_format,
	    0, 15);
	tcase_add_loop_test(kernel, emulated_lse_stays_in_float32, 0, 15);
	tcase_add_loop_test(kernel, emulated_error_follows_the_format, 0, 15);
	tcase_add_test(kernel, float16_overflow_is_inf_not_an_error);
	tcase_add_loop_test(kernel, emulated_backward_follows_the_format, 0,
	    15);
	tcase_add_test(kernel, fp32_emulated_grad_v_is_plain_float);
	tcase_add_loop_test(kernel, the_emulation_is_its_oracle_bit_for_bit, 0,
	    V_COUNT * 5);
	tcase_add_loop_test(kernel, fp8_emulation_refuses_the_backward, 0, 2);
	tcase_add_test(kernel, q_is_scaled_before_the_dot_products);
	tcase_add_loop_test(kernel, k_order_is_q_order_with_q_and_k_swapped, 0,
	    3);
	tcase_add_loop_test(kernel, an_emulated_run_reports_its_progress, 0, 2);
	suite_add_tcase(s, kernel);
	return s;
}
