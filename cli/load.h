/*
 * load.h - the operands (Q K V, a BUNDLE, --self X, or with --proj the
 * embeddings X or XQ XKV) and the --mask, --bias, --grad, --proj and
 * --sinks files, read into struct inputs (inputs.h), with the labels
 * that came with them, and checked against each other.
 */
#ifndef ATTN_LOAD_H
#define ATTN_LOAD_H

#include "attn.h"
#include "inputs.h"
#include "options.h"

/* Read the operands and files that o names into in (inputs_free it,
 * failed or not).  4-D operands set o->cfg's heads, KV heads and layout
 * from their shapes (layout.h). */
enum attn_status load_inputs(struct options *o, struct inputs *in,
    struct attn_error *err);

#endif
