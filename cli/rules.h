/*
 * rules.h - the conventions attn names and the rules between options, or
 * between options and inputs, each in one function: what --align,
 * --masked-rows and --like accept and what they mean, and every check
 * that involves more than one option (or an option and what an input
 * holds).  options.c checks the option-only rules before any input is
 * read; inputs.c checks the rest as soon as the inputs tell.  (The
 * shapes a mask or bias may have are checked where they are read, in
 * inputs.c, which alone knows what the file held.)
 */
#ifndef ATTN_RULES_H
#define ATTN_RULES_H

#include "attn.h"
#include "options.h"

/* Which options were given, besides what struct options records. */
struct given {
	int stage, scale, no_scale, rope_style, npy_dtype, tolerance,
	    factor, check_by, format, color_range, emulate_order;
};

/* Every rule between options alone: contradictions, what goes with
 * what, operand counts, standard input read once.  A usage error. */
enum attn_status rules_check_options(const struct options *o,
    const struct given *g, struct attn_error *err);

/* attn gen: one operand, ROWSxCOLS[xN..], and the rules of the output
 * that attn has too (--npy-dtype with npy, no npy to a terminal).  A
 * usage error. */
enum attn_status rules_check_gen(const struct options *o,
    const struct given *g, struct attn_error *err);

/* --heads H a multiple of --kv-heads G, H as the options or the shapes
 * of 4-D inputs give it; G alone (H 1) names the --heads it needs.  A
 * usage error. */
enum attn_status rules_heads(const struct options *o,
    struct attn_error *err);

/* --mask-invert needs a mask: have_mask says whether there is one (or,
 * before a bundle is read, may be). */
enum attn_status rules_mask_invert(const struct options *o, int have_mask,
    struct attn_error *err);

#endif
