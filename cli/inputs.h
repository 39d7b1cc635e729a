/*
 * inputs.h - what the operands and files became: stacks of matrices with
 * the labels that came with them (load.c reads them; layout.c folds 4-D
 * ones; labels.c and memory.c read them).  A leaf: inputs.c names each
 * operand and frees them.
 */
#ifndef ATTN_INPUTS_H
#define ATTN_INPUTS_H

#include "attn.h"
#include "attn_io.h"

/* With embeddings, IN_Q holds X or XQ and IN_K holds XKV. */
enum { IN_Q, IN_K, IN_V, IN_MASK, IN_BIAS, IN_DO, IN_SINKS, IN_SLOPES,
	IN_DESCALE_Q, IN_DESCALE_K, IN_DESCALE_V, IN_BLOCK_TABLE, IN_KV_INDPTR,
	IN_KV_INDICES, IN_KV_LAST, IN_DROPOUT, IN_COUNT };

/* --cu-seqlens-q, --cu-seqlens-k, --seqused-k, --key-leftpad (varlen.h). */
enum { VL_CU_Q, VL_CU_K, VL_USED_K, VL_LEFTPAD, VL_COUNT };

/* What K and V are: keys, or caches whose keys paged.c gathers, with
 * --key-leftpad alone (a row of keys a batch) or paged. */
enum caches { CACHES_NONE, CACHES_LEFTPAD, CACHES_PAGED };

struct attn_npy_later;		/* attn_private.h */

struct inputs {
	struct attn_array arr[IN_COUNT];	/* --self fills only Q */
	const char *name[IN_COUNT];	/* where each came from, for messages */
	struct attn_inputs in;		/* views of arr, for attn_run */
	struct attn_labels query, key;	/* from the files; may be empty */
	int embeddings;			/* the operands are X, or XQ and XKV */
	int self;			/* one matrix is queries and keys */
	int logits;			/* Q holds the logits, K the identity
					 * (attn softmax, logits.h) */
	int four_d;			/* Q, K and V were 4-D (layout.h) */
	struct attn_layer layer;	/* --proj's, or the bundle's "proj" */
	const char *layer_name;		/* where it came from; NULL: none */
	size_t *varlen[VL_COUNT];	/* their numbers (NULL: not given), */
	size_t nvarlen[VL_COUNT];	/* in.varlen's arrays, and how many */
	double *descale[3];	/* --descale-q, -k, -v given as a number */
	enum caches caches;		/* K and V are caches (paged.h) */
	struct attn_matrix gathered[2];	/* their keys in use (paged.c) */
	/* Q from a .npy read later, attn-mpi's process reading the rows
	 * it computes (load.h); NULL when read whole */
	struct attn_npy_later *q_later;
	int q_heads_first;		/* Q was 4-D in bhsd (layout.c) */
	int q_scattered;		/* Q read by rank 0, its rows sent */
};

/* What operand i is called in messages: Q, K and V (mask, bias, dO,
 * sinks), or the embeddings X, XQ and XKV. */
const char *inputs_role(const struct inputs *in, size_t i);

void inputs_free(struct inputs *in);

#endif
