/*
 * words.c - the words options take (see words.h), each written once and
 * indexed by the value it stands for, so that the option that reads a
 * word and the line that names the convention in force cannot disagree.
 */
#include <stddef.h>

#include "attn.h"
#include "attn_private.h"
#include "words.h"

const char *const words_align[] = {
	[ATTN_ALIGN_TOP_LEFT] = "top-left",
	[ATTN_ALIGN_BOTTOM_RIGHT] = "bottom-right",
	NULL
};

const char *const words_masked_rows[] = {
	[ATTN_MASKED_ZERO] = "zero",
	[ATTN_MASKED_NAN] = "nan",
	[ATTN_MASKED_UNIFORM] = "uniform",
	NULL
};

const char *const words_masked_rows_effect[] = {
	[ATTN_MASKED_ZERO] = "weights 0 and output 0",
	[ATTN_MASKED_NAN] = "weights nan and output nan",
	[ATTN_MASKED_UNIFORM] = "weights 1/S and the mean of V",
};

const char *const words_rope_style[] = {
	[ATTN_ROPE_HALF] = "half",
	[ATTN_ROPE_INTERLEAVED] = "interleaved",
	NULL
};

const char *const words_layout[] = {
	[ATTN_LAYOUT_BHSD - 1] = "bhsd",
	[ATTN_LAYOUT_BSHD - 1] = "bshd",
	NULL
};

/* --kv-layout's: a page's keys before its heads (nhd) or after */
const char *const words_kv_layout[] = { "nhd", "hnd", NULL };

const char *const words_emulate[] = {
	[ATTN_PREC_FP32 - 1] = "fp32",
	[ATTN_PREC_FP16 - 1] = "fp16",
	[ATTN_PREC_BF16 - 1] = "bf16",
	[ATTN_PREC_FP8_E4M3 - 1] = "fp8-e4m3",
	[ATTN_PREC_FP8_E5M2 - 1] = "fp8-e5m2",
	NULL
};

/* By enum color_mode: COLOR_AUTO, COLOR_ALWAYS, COLOR_NEVER. */
const char *const words_color[] = { "auto", "always", "never", NULL };

/* By enum color_range: RANGE_UNIT, RANGE_MAX, RANGE_ROW. */
const char *const words_color_range[] = { "unit", "max", "row", NULL };

/* By enum check_by: CHECK_BY_HEAD, CHECK_BY_TENSOR. */
const char *const words_check_by[] = { "head", "tensor", NULL };

const char *const words_emulate_order[] = {
	[ATTN_EMULATE_ORDER_Q] = "q",
	[ATTN_EMULATE_ORDER_K] = "k",
	NULL
};

const char *const words_dist[] = {
	[ATTN_DIST_NORMAL] = "normal",
	[ATTN_DIST_UNIFORM] = "uniform",
	NULL
};

const char *const words_npy_dtype[] = { "f8", "f4", NULL };

const char *const words_lse_base[] = {
	[ATTN_LSE_E] = "e",
	[ATTN_LSE_2] = "2",
	NULL
};

const char *const words_lse_masked[] = {
	[ATTN_LSE_MASKED_NEG_INF] = "-inf",
	[ATTN_LSE_MASKED_POS_INF] = "inf",
	NULL
};

/* Which alignment a causal mask or window uses when T != S, what a row
 * that may attend no key gets, and the lse such a row gets, in each
 * system: PyTorch (SDPA's math and memory-efficient kernels return
 * -inf there), FlashAttention (+inf), JAX (the log of an empty sum);
 * and which operand an emulated baseline scales: k for FlashAttention,
 * whose tests' baseline is attention_ref(reorder_ops=True). */
const char *const words_like[] = { "torch", "flash", "jax", NULL };
const struct like_preset words_like_preset[] = {
	{ ATTN_ALIGN_TOP_LEFT, ATTN_MASKED_ZERO, ATTN_LSE_MASKED_NEG_INF,
	    ATTN_EMULATE_ORDER_Q },
	{ ATTN_ALIGN_BOTTOM_RIGHT, ATTN_MASKED_ZERO, ATTN_LSE_MASKED_POS_INF,
	    ATTN_EMULATE_ORDER_K },
	{ ATTN_ALIGN_TOP_LEFT, ATTN_MASKED_UNIFORM, ATTN_LSE_MASKED_NEG_INF,
	    ATTN_EMULATE_ORDER_Q },
};

_Static_assert(sizeof words_like_preset / sizeof words_like_preset[0] ==
    sizeof words_like / sizeof words_like[0] - 1,
    "a --like system needs its name and its preset");
