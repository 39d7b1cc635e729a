/*
 * paged.c - KV caches (paged.h): the tables read as load.c reads every
 * FILE, handed to attn_paged_gather with the caches, and what it gathers
 * put where the keys and their counts go, so that the run, the masks'
 * shapes, --valid-lens and every printer see the gathered keys alone
 * (attn(1): in paged mode stages k, v, grad_k and grad_v are the keys
 * gathered, B x S).
 */
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "attn_io.h"
#include "inputs.h"
#include "options.h"
#include "paged.h"

enum caches
paged_caches(const struct options *o)
{
	if (o->block_table != NULL || o->kv_indptr != NULL)
		return CACHES_PAGED;
	return o->key_leftpad != NULL ? CACHES_LEFTPAD : CACHES_NONE;
}

/* A table of the run's, as a matrix (data NULL when not given). */
static struct attn_matrix
table(const struct inputs *in, size_t i)
{
	struct attn_matrix m;

	if (in->arr[i].ndim != 0)
		return attn_array_matrix(&in->arr[i]);
	memset(&m, 0, sizeof m);
	return m;
}

/* A count per sequence: --seqused-k's and --key-leftpad's. */
static enum attn_status
counts_fit(const struct inputs *in, size_t i, const char *option, size_t n,
    struct attn_error *err)
{
	if (in->varlen[i] == NULL || in->nvarlen[i] == n)
		return ATTN_OK;
	return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0, "%s has %zu "
	    "number%s but there %s %zu %s: give one each", option,
	    in->nvarlen[i], in->nvarlen[i] == 1 ? "" : "s", n == 1 ? "is" :
	    "are", n, in->in.varlen.seqs > 0 ? n == 1 ? "sequence" :
	    "sequences" : n == 1 ? "batch" : "batches");
}

/* The caches as read, given back once their keys are gathered, so that
 * the run does not hold both; V's column labels (a csv header) name the
 * gathered values' columns too, and stay. */
static void
release_caches(struct inputs *in)
{
	struct attn_labels cols = in->arr[IN_V].col_labels;

	memset(&in->arr[IN_V].col_labels, 0, sizeof cols);
	attn_array_free(&in->arr[IN_K]);
	attn_array_free(&in->arr[IN_V]);
	in->arr[IN_V].col_labels = cols;
}

enum attn_status
paged_gather(struct inputs *in, struct attn_error *err)
{
	struct attn_varlen *vl = &in->in.varlen;
	const struct attn_array *k = &in->arr[IN_K];
	const size_t n = vl->seqs > 0 ? vl->seqs : in->in.batches;
	struct attn_paged pg;
	enum attn_status st;
	size_t *used, *cu, S, s;

	memset(&pg, 0, sizeof pg);
	/* paged: num_pages x page_size x G*D as folded; else a page a
	 * batch, its S keys */
	pg.page_size = in->caches == CACHES_PAGED ? k->shape[1] :
	    in->in.k.rows / in->in.batches;
	pg.block_table = table(in, IN_BLOCK_TABLE);
	pg.indptr = table(in, IN_KV_INDPTR);
	pg.indices = table(in, IN_KV_INDICES);
	pg.last_page_len = table(in, IN_KV_LAST);
	pg.used_k = in->varlen[VL_USED_K];
	pg.leftpad = in->varlen[VL_LEFTPAD];
	if ((st = counts_fit(in, VL_USED_K, "--seqused-k", n, err)) !=
	    ATTN_OK || (st = counts_fit(in, VL_LEFTPAD, "--key-leftpad", n,
	    err)) != ATTN_OK)
		return st;
	if ((used = calloc(n + 1, sizeof *used)) == NULL ||
	    (cu = calloc(n + 1, sizeof *cu)) == NULL) {
		free(used);
		return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "out of memory");
	}
	if ((st = attn_paged_gather(&pg, n, &in->in.k, &in->in.v,
	    &in->gathered[0], &in->gathered[1], used, err)) != ATTN_OK) {
		free(used);
		free(cu);
		return st;
	}
	free(in->varlen[VL_USED_K]);
	in->varlen[VL_USED_K] = used;
	in->nvarlen[VL_USED_K] = n;
	vl->used_k = used;
	vl->used_n = n;
	/* packed queries: sequence s's keys are rows [s*S, (s+1)*S) */
	S = n != 0 ? in->gathered[0].rows / n : 0;
	for (s = 0; s <= n; s++)
		cu[s] = s * S;
	if (vl->seqs > 0) {
		free(in->varlen[VL_CU_K]);
		in->varlen[VL_CU_K] = cu;
		in->nvarlen[VL_CU_K] = n + 1;
		vl->cu_k = cu;
	} else {
		free(cu);
	}
	in->in.k = in->gathered[0];
	in->in.v = in->gathered[1];
	/* the caches' row labels name rows of pages, not keys */
	attn_labels_free(&in->key);
	release_caches(in);
	return ATTN_OK;
}
