/*
 * inputs.h - the operands (Q K V, a BUNDLE, or --self X) read into
 * matrices and the labels that came with them.
 */
#ifndef ATTN_INPUTS_H
#define ATTN_INPUTS_H

#include "attn.h"
#include "options.h"

struct inputs {
	struct attn_array arr[3];	/* Q, K, V; --self fills only arr[0] */
	struct attn_matrix q, k, v;	/* views of arr */
	struct attn_labels query, key;	/* from the files; may be empty */
};

/* Read the operands that o names. */
enum attn_status inputs_load(const struct options *o, struct inputs *in,
    struct attn_error *err);

void inputs_free(struct inputs *in);

#endif
