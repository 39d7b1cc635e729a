/*
 * inputs.h - the operands (Q K V, a BUNDLE, or --self X) and the --mask,
 * --bias and --grad files, read into stacks of matrices with the labels
 * that came with them.
 */
#ifndef ATTN_INPUTS_H
#define ATTN_INPUTS_H

#include "attn.h"
#include "options.h"

enum { IN_Q, IN_K, IN_V, IN_MASK, IN_BIAS, IN_DO, IN_COUNT };

struct inputs {
	struct attn_array arr[IN_COUNT];	/* --self fills only Q */
	const char *name[IN_COUNT];	/* where each came from, for messages */
	struct attn_inputs in;		/* views of arr, for attn_run */
	struct attn_labels query, key;	/* from the files; may be empty */
};

/* Read the operands and files that o names. */
enum attn_status inputs_load(const struct options *o, struct inputs *in,
    struct attn_error *err);

void inputs_free(struct inputs *in);

#endif
