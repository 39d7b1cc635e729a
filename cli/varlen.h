/*
 * varlen.h - --cu-seqlens-q, --cu-seqlens-k and --seqused-k read into
 * struct attn_inputs' varlen (varlen.c).
 */
#ifndef ATTN_VARLEN_H
#define ATTN_VARLEN_H

#include "attn.h"
#include "inputs.h"
#include "options.h"

/* Whether an option's value is meant as a comma list rather than a
 * file's name: empty, or digits, commas, blanks, signs and points with a
 * digit or comma among them, so that a list written wrong (-1,2,6, +0,
 * 1.5) is told as a list, not looked for as a file; - is standard
 * input. */
int varlen_is_list(const char *arg);

/*
 * Read the three options' lists or files into in->varlen (owned there)
 * and in->in.varlen (inputs_free gives them back); with packed
 * sequences, a 3-D Q, K, V or dO (total x H x D) becomes 1 x total x H x
 * D under --layout bshd, for layout_fold.  A list that is not one is a
 * usage error, a file's faults are data errors.
 */
enum attn_status varlen_load(struct options *o, struct inputs *in,
    struct attn_error *err);

/*
 * --valid-lens, once the inputs are read: d2l's valid_lens as the mask,
 * a T x S block per batch in in->arr[IN_MASK] (to be broadcast and
 * counted as a --mask is).  With a mask already given it is a usage
 * error; lengths that do not fit the batches, queries or keys are data
 * errors.
 */
enum attn_status varlen_valid_lens(const struct options *o,
    struct inputs *in, struct attn_error *err);

#endif
