/*
 * layout.h - 4-D inputs: Q, K and V as --layout lays them out, and
 * masks and biases broadcast as NumPy does (layout.c).
 */
#ifndef ATTN_LAYOUT_H
#define ATTN_LAYOUT_H

#include "attn.h"
#include "attn_io.h"
#include "inputs.h"
#include "options.h"

/*
 * When Q, K and V (the first n operands: --self reads one) are 4-D,
 * check that their shapes go together in the layout o->cfg.layout says
 * (BHSD when none was given), and with --heads and --kv-heads when
 * given; fold them into stacks with the heads side by side; and set
 * o->cfg's heads, KV heads and layout from them.  A data error names the
 * 4-D shapes (and the other layout, when the shapes fit that one).
 * Nothing happens when none is 4-D; a mix is a data error.  A 4-D dO
 * (--grad) is folded likewise, shaped as output is in the layout.
 */
enum attn_status layout_fold(struct options *o, struct inputs *in, size_t n,
    struct attn_error *err);

/* Broadcast operand i (a mask or bias) to the scores' B x heads x T x S
 * as attn_array_broadcast does (a 3-D one is H x T x S when Q, K and V
 * were 4-D); in->in must hold Q, K and the batches.  A 1-D or 2-D one
 * that does not broadcast is left as it is: it may be blocks of T x S
 * one under another, and inputs.c names every shape it may have when it
 * is not.  A bias that broadcasts leaves its dims as given in
 * in->in.bias_dims, for grad_bias (a 1-D one as a row, 1 x s). */
enum attn_status layout_broadcast(struct inputs *in, size_t i, size_t heads,
    struct attn_error *err);

#endif
