/*
 * words.h - the words options take, each list once: what --align,
 * --masked-rows, --like, --rope-style, --layout, --emulate, --color,
 * --dist and --npy-dtype accept, indexed by the value each word stands
 * for, and what --like's systems mean.  A leaf: the table of options
 * offers them, the rules and the printers name the conventions in force
 * with them.
 */
#ifndef ATTN_WORDS_H
#define ATTN_WORDS_H

#include "attn.h"

/* --align's words, by enum attn_align; NULL-terminated. */
extern const char *const words_align[];

/* --masked-rows's words, by enum attn_masked_rows; NULL-terminated. */
extern const char *const words_masked_rows[];
extern const char *const words_lse_base[];
extern const char *const words_lse_masked[];

/* What a row with no key gets under each policy, for the warning:
 * "weights 0 and output 0". */
extern const char *const words_masked_rows_effect[];

/* --rope-style's words, by enum attn_rope_style; NULL-terminated. */
extern const char *const words_rope_style[];

/* --layout's words, by enum attn_layout - 1 (ATTN_LAYOUT_NONE has
 * none); NULL-terminated. */
extern const char *const words_layout[];

/* --kv-layout's words, nhd then hnd; NULL-terminated. */
extern const char *const words_kv_layout[];

/* --emulate's words, by enum attn_precision - 1 (fp64 is no emulation);
 * NULL-terminated. */
extern const char *const words_emulate[];

/* --color's words, by enum color_mode (options.h); NULL-terminated. */
extern const char *const words_color[];

/* --color-range's words, by enum color_range (options.h);
 * NULL-terminated. */
extern const char *const words_color_range[];
extern const char *const words_check_by[];

/* --emulate-order's words, by enum attn_emulate_order; NULL-terminated. */
extern const char *const words_emulate_order[];

/* attn gen --dist's words, by enum attn_dist; NULL-terminated. */
extern const char *const words_dist[];

/* --npy-dtype's words: f8 (float64), then f4; NULL-terminated. */
extern const char *const words_npy_dtype[];

/* --like's words; NULL-terminated.  words_like_preset[i] is what system
 * i does (the man page says which version of each this follows). */
extern const char *const words_like[];
struct like_preset {
	enum attn_align align;
	enum attn_masked_rows masked_rows;
	enum attn_lse_masked lse_masked;
	enum attn_emulate_order emulate_order;	/* --emulate in fp32, fp16
						 * and bf16 */
};
extern const struct like_preset words_like_preset[];

#endif
