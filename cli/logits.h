/*
 * logits.h - attn softmax SCORES [V]: the run from the logits, SCORES
 * read as Q against identity keys (logits.c).
 */
#ifndef ATTN_LOGITS_H
#define ATTN_LOGITS_H

#include "attn.h"
#include "inputs.h"
#include "options.h"

/* What attn softmax changes in the defaults: scale 1 unless --scale or
 * --no-scale is given, and the weights as the stage printed when no
 * --stage is given and there is no V. */
void logits_defaults(struct options *o, int scale_given, int stage_given);

/* attn softmax's rules: one or two operands, no option that starts
 * from Q and K, no stage q, k or v, and output only with V.  A usage
 * error. */
enum attn_status logits_rules(const struct options *o,
    struct attn_error *err);

/* K, the identity for each batch and head, shaped for SCORES (in
 * in->arr[IN_Q], as read: T x H*S, B x T x H*S or 4-D in the layout),
 * and without V (one operand) V, a zero per key and head. */
enum attn_status logits_keys(const struct options *o, struct inputs *in,
    struct attn_error *err);

#endif
