/*
 * inputs.h - the operands (Q K V, a BUNDLE, --self X, or with --proj the
 * embeddings X or XQ XKV) and the --mask, --bias, --grad, --proj and
 * --sinks files, read into stacks of matrices with the labels that came
 * with them.
 */
#ifndef ATTN_INPUTS_H
#define ATTN_INPUTS_H

#include "attn.h"
#include "attn_io.h"
#include "options.h"

/* With embeddings, IN_Q holds X or XQ and IN_K holds XKV. */
enum { IN_Q, IN_K, IN_V, IN_MASK, IN_BIAS, IN_DO, IN_SINKS, IN_COUNT };

struct inputs {
	struct attn_array arr[IN_COUNT];	/* --self fills only Q */
	const char *name[IN_COUNT];	/* where each came from, for messages */
	struct attn_inputs in;		/* views of arr, for attn_run */
	struct attn_labels query, key;	/* from the files; may be empty */
	int embeddings;			/* the operands are X, or XQ and XKV */
	int self;			/* one matrix is queries and keys */
	int four_d;			/* Q, K and V were 4-D (layout.h) */
	struct attn_layer layer;	/* --proj's, or the bundle's "proj" */
	const char *layer_name;		/* where it came from; NULL: none */
};

/* Read the operands and files that o names.  4-D operands set o->cfg's
 * heads, KV heads and layout from their shapes (layout.h). */
enum attn_status inputs_load(struct options *o, struct inputs *in,
    struct attn_error *err);

void inputs_free(struct inputs *in);

#endif
