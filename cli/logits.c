/*
 * logits.c - attn softmax SCORES [V]: the pipeline started at the
 * logits (attn(1)).  SCORES is read as Q and K is made the identity, a
 * block of S x S per batch and head, so that scores = SCORES K^T is
 * SCORES to the bit (each dot product is one logit times 1 plus zeros)
 * and every rule that follows the scores (the scale, the softcap, the
 * bias, ALiBi, the masks, the sinks, the softmax and its lse) applies to
 * the logits as to any scores.  Without V, V is a column of zeros per
 * head, and output is no stage of the run.
 */
#include <string.h>

#include "attn.h"
#include "attn_io.h"
#include "formats.h"
#include "inputs.h"
#include "logits.h"
#include "options.h"

#define BIT ATTN_STAGE_BIT

void
logits_defaults(struct options *o, int scale_given, int stage_given)
{
	/* the logits are scaled already, unless --scale says otherwise */
	if (!scale_given)
		o->cfg.scale_mode = ATTN_SCALE_NONE;
	/* without V there is no output: the weights are what is asked */
	if (!stage_given && o->noperands < 2 && o->nstages == 1)
		o->stages[0] = ATTN_STAGE_WEIGHTS;
}

enum attn_status
logits_rules(const struct options *o, struct attn_error *err)
{
	/* what starts from Q and K, not from the logits */
	const char *no = o->self != NULL ? "--self" : o->proj != NULL ?
	    "--proj" : o->cfg.rope ? "--rope" : o->grad != NULL ? "--grad" :
	    o->explain ? "--explain" : o->arithmetic ? "--arithmetic" :
	    o->cfg.kv_heads != 0 ? "--kv-heads" : o->cu_seqlens_q != NULL ?
	    "--cu-seqlens-q" : o->format == OUT_HTML ? "-f html" :
	    o->descale[0] != NULL ? "--descale-q" : o->descale[1] != NULL ?
	    "--descale-k" : o->cfg.emulate_order == ATTN_EMULATE_ORDER_K ?
	    "--emulate-order k" : NULL;
	size_t i;

	if (o->noperands != 1 && o->noperands != 2)
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "attn softmax takes the logits, SCORES, and optionally V: "
		    "attn softmax SCORES [V]");
	if (no != NULL)
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0, "attn "
		    "softmax starts from the logits, and %s starts from Q and "
		    "K: leave it out, or give Q K V to attn", no);
	for (i = 0; i < o->nstages; i++) {
		const unsigned bit = BIT(o->stages[i]);

		if (bit & (BIT(ATTN_STAGE_Q) | BIT(ATTN_STAGE_K) |
		    BIT(ATTN_STAGE_V)))
			return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
			    "attn softmax has no stage %s: it starts from the "
			    "logits, stage scores",
			    attn_stage_table[o->stages[i]].name);
		if (bit == BIT(ATTN_STAGE_OUTPUT) && o->noperands < 2)
			return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
			    "stage output needs V: attn softmax SCORES V");
	}
	return ATTN_OK;
}

/* A new array of the given dims, zeros, as attn_array_free gives it
 * back (attn_matrix_alloc charges rows x cols doubles). */
static enum attn_status
zeros(struct attn_array *a, size_t ndim, const size_t *dims,
    struct attn_error *err)
{
	struct attn_matrix m;
	enum attn_status st;
	size_t d, n = 1;

	for (d = 0; d < ndim; d++)
		if (attn_size_mul(n, dims[d], &n) != 0)
			return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
			    "the logits' identity keys are too large to "
			    "address");
	if ((st = attn_matrix_alloc(&m, n, 1, err)) != ATTN_OK)
		return st;
	memset(a, 0, sizeof *a);
	a->ndim = ndim;
	memcpy(a->shape, dims, ndim * sizeof dims[0]);
	a->data = m.data;
	return ATTN_OK;
}

/* V, when given, has K's dims but the last (d_v per head): a row per
 * key (dim at of K's n dims), in as many batches and heads. */
static enum attn_status
check_values(const struct inputs *in, size_t n, const size_t *dims,
    size_t at, struct attn_error *err)
{
	const struct attn_array *v = &in->arr[IN_V];
	char x[64], got[64];
	size_t d;

	for (d = 0; v->ndim == n && d + 1 < n && v->shape[d] == dims[d]; d++)
		;
	if (v->ndim == n && d + 1 == n)
		return ATTN_OK;
	attn_dims_text(x, sizeof x, in->arr[IN_Q].shape, in->arr[IN_Q].ndim);
	attn_dims_text(got, sizeof got, v->shape, v->ndim);
	return attn_error_set(err, ATTN_ERR_DATA, in->name[IN_V], 0, 0,
	    "shape mismatch: SCORES is %s, so S = %zu keys, but V is %s: V "
	    "has a row per key, its dims those of SCORES with S rows and d_v "
	    "columns", x, dims[at], got);
}

enum attn_status
logits_keys(const struct options *o, struct inputs *in,
    struct attn_error *err)
{
	const struct attn_array *x = &in->arr[IN_Q];
	const int four = x->ndim == 4;
	const int bshd = four && o->cfg.layout == ATTN_LAYOUT_BSHD;
	const size_t heads = four ? x->shape[bshd ? 2 : 1] :
	    o->cfg.heads > 0 ? o->cfg.heads : 1;
	const size_t cols = x->ndim == 0 ? 0 : x->shape[x->ndim - 1];
	const size_t batches = x->ndim >= 3 ? x->shape[0] : 1;
	size_t S, dims[4], b, h, j, n;
	enum attn_status st;

	if (x->ndim < 2 || (!four && cols % heads != 0)) {
		char got[64];

		attn_dims_text(got, sizeof got, x->shape, x->ndim);
		return attn_error_set(err, ATTN_ERR_DATA, in->name[IN_Q], 0, 0,
		    "SCORES is %s: the logits are T x S, B x T x S or "
		    "B x H x T x S (T x H*S with --heads H)", got);
	}
	S = four ? cols : cols / heads;
	/* K: [B x] S x H*S, B x H x S x S or B x S x H x S, each head's
	 * block the identity */
	n = 0;
	if (four && !bshd) {
		dims[n++] = batches;
		dims[n++] = heads;
	} else if (x->ndim >= 3) {
		dims[n++] = batches;
	}
	dims[n++] = S;
	if (bshd)
		dims[n++] = heads;
	dims[n++] = four ? S : heads * S;
	if ((st = zeros(&in->arr[IN_K], n, dims, err)) != ATTN_OK)
		return st;
	/* in C order, batch by batch and head by head (the layouts differ
	 * in whether head or key row varies faster) */
	for (b = 0; b < batches; b++)
		for (h = 0; h < heads; h++)
			for (j = 0; j < S; j++) {
				const size_t row = bshd ? (b * S + j) * heads +
				    h : four ? (b * heads + h) * S + j :
				    b * S + j;
				const size_t col = four ? j : h * S + j;

				in->arr[IN_K].data[row * (four ? S :
				    heads * S) + col] = 1.0;
			}
	in->name[IN_K] = in->name[IN_Q];
	if (o->noperands >= 2)
		return check_values(in, n, dims, bshd ? 1 : n - 2, err);
	/* V: a zero per key and head, as K but one column a head */
	dims[n - 1] = four ? 1 : heads;
	in->name[IN_V] = in->name[IN_Q];
	return zeros(&in->arr[IN_V], n, dims, err);
}
