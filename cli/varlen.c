/*
 * varlen.c - packed variable-length sequences and KV-cache lengths:
 * --cu-seqlens-q, --cu-seqlens-k and --seqused-k, each a comma list of
 * whole numbers or a file of them (JSON, text, .npy), read into the
 * counts struct attn_inputs takes (attn_varlen), and Q, K, V and dO given
 * as FlashAttention's varlen functions take them, total x H x D, read as
 * one batch laid out B x T x H x D (--layout bshd), so that the heads
 * come from their shapes and every stage is shown in that layout.  Whether the offsets
 * fit (0 first, never decreasing, the packed rows last) is libattn's
 * rule, checked when the run starts.  --valid-lens, d2l's lengths, is
 * read the same way (also as B x T, one per batch and query row) and
 * becomes the mask.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "attn_io.h"
#include "inputs.h"
#include "options.h"
#include "slurp.h"
#include "varlen.h"
#include "whole.h"

/* The three options, in the order of inputs.varlen's arrays. */
static const char *const option_name[VL_COUNT] = {
	"--cu-seqlens-q", "--cu-seqlens-k", "--seqused-k", "--key-leftpad"
};

int
varlen_is_list(const char *arg)
{
	int digit = arg[0] == '\0';

	for (; *arg != '\0'; arg++) {
		if ((*arg >= '0' && *arg <= '9') || *arg == ',')
			digit = 1;
		else if (strchr(" +-.", *arg) == NULL)
			return 0;
	}
	return digit;
}

/* The whole numbers of a comma list (blanks around them allowed) into a
 * new array *out of *n; a usage error names the option when one is not
 * a whole number. */
static enum attn_status
parse_list(const char *option, const char *arg, size_t **out, size_t *n,
    struct attn_error *err)
{
	const char *p = arg;
	size_t cap = 1, k = 0;
	unsigned long long x;

	for (; *p != '\0'; p++)
		cap += *p == ',';
	if ((*out = calloc(cap, sizeof **out)) == NULL)
		return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "out of memory");
	for (p = arg;; p++) {
		while (*p == ' ')
			p++;
		if (whole_scan(&p, SIZE_MAX, &x) != 0)
			break;
		(*out)[k++] = (size_t)x;
		while (*p == ' ')
			p++;
		if (*p == '\0') {
			*n = k;
			return ATTN_OK;
		}
		if (*p != ',')
			break;
	}
	free(*out);
	*out = NULL;
	return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0, "%s wants a "
	    "comma list of whole numbers such as 0,3,5 (or a FILE of them), "
	    "not '%s'", option, arg);
}

/*
 * A file of whole numbers into a new array *out of *n, its shape as read
 * in *rows x *cols.  One row or one column, unless grid: --valid-lens
 * also takes d2l's 2-D form, a length per batch and query row.
 */
static enum attn_status
read_file(const char *option, const char *path, int grid, size_t **out,
    size_t *n, size_t *rows, size_t *cols, struct attn_error *err)
{
	struct attn_array a;
	struct attn_matrix m;
	enum attn_status st;
	struct slurp f;
	char shape[64];
	size_t k;

	memset(&a, 0, sizeof a);
	if ((st = slurp_file(path, &f, err)) != ATTN_OK)
		return st;
	st = attn_read_array(path, f.buf, f.len, ATTN_FMT_AUTO,
	    ATTN_READ_FINITE | ATTN_READ_INT, &a, err);
	slurp_release(&f);
	if (st != ATTN_OK)
		return st;
	m = attn_array_matrix(&a);
	if (a.ndim > 2 || (!grid && m.rows != 1 && m.cols != 1)) {
		attn_dims_text(shape, sizeof shape, a.shape, a.ndim);
		attn_array_free(&a);
		return attn_error_set(err, ATTN_ERR_DATA, path, 0, 0,
		    "%s: the file holds %s numbers: give one list, a row or "
		    "a column%s", option, shape, grid ? " (or d2l's 2-D "
		    "valid_lens, B x T)" : strcmp(option, "--seqused-k") == 0 ?
		    "; a length per query row, as d2l's 2-D valid_lens, is "
		    "--valid-lens FILE" : "");
	}
	*rows = a.ndim == 2 ? m.rows : 1;
	*cols = a.ndim == 2 ? m.cols : m.rows * m.cols;
	*n = m.rows * m.cols;
	if ((*out = calloc(*n != 0 ? *n : 1, sizeof **out)) == NULL) {
		attn_array_free(&a);
		return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "out of memory");
	}
	for (k = 0; k < *n; k++) {
		const double x = m.data[k / m.cols * m.stride + k % m.cols];

		/* below 2^53, where every whole number is a double */
		if (!(x >= 0.0 && x < 0x1p53 && floor(x) == x)) {
			char num[ATTN_NUM_MAX];

			attn_format_number(num, x, 0, 0);
			attn_array_free(&a);
			free(*out);
			*out = NULL;
			return attn_error_set(err, ATTN_ERR_DATA, path, 0, 0,
			    "%s: number %zu is %s: sequence lengths and "
			    "offsets are whole numbers from 0", option, k + 1,
			    num);
		}
		(*out)[k] = (size_t)x;
	}
	attn_array_free(&a);
	return ATTN_OK;
}

/* An option's numbers, from its comma list or its file. */
static enum attn_status
read_counts(const char *option, const char *arg, int grid, size_t **out,
    size_t *n, size_t *rows, size_t *cols, struct attn_error *err)
{
	enum attn_status st;

	if (!varlen_is_list(arg))
		return read_file(option, arg, grid, out, n, rows, cols, err);
	st = parse_list(option, arg, out, n, err);
	*rows = 1;
	*cols = *n;
	return st;
}

enum attn_status
varlen_load(struct options *o, struct inputs *in, struct attn_error *err)
{
	const char *arg[VL_COUNT] = { o->cu_seqlens_q, o->cu_seqlens_k,
	    o->seqused_k, o->key_leftpad };
	struct attn_varlen *vl = &in->in.varlen;
	enum attn_status st;
	size_t i, rows, cols;

	for (i = 0; i < VL_COUNT; i++) {
		if (arg[i] != NULL && (st = read_counts(option_name[i], arg[i],
		    0, &in->varlen[i], &in->nvarlen[i], &rows, &cols, err)) !=
		    ATTN_OK)
			return st;
	}
	if (in->varlen[VL_CU_Q] != NULL) {
		/* with caches, the gathered keys' offsets are made when
		 * they are gathered (paged.c) */
		if (!in->caches && in->nvarlen[VL_CU_Q] !=
		    in->nvarlen[VL_CU_K])
			return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
			    "--cu-seqlens-q has %zu offsets but --cu-seqlens-k "
			    "has %zu: each sequence has an offset in both, "
			    "with 0 first", in->nvarlen[VL_CU_Q],
			    in->nvarlen[VL_CU_K]);
		if (in->nvarlen[VL_CU_Q] < 2)
			return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
			    "--cu-seqlens-q has %zu offset%s: a packed batch "
			    "has 0 first and the total of its rows last",
			    in->nvarlen[VL_CU_Q],
			    in->nvarlen[VL_CU_Q] == 1 ? "" : "s");
		vl->seqs = in->nvarlen[VL_CU_Q] - 1;
		vl->cu_q = in->varlen[VL_CU_Q];
		vl->cu_k = in->varlen[VL_CU_K];
		/* total x H x D, as FlashAttention's varlen functions
		 * take them (embeddings are not in heads): one batch of
		 * B x T x H x D, which layout_fold folds with the heads
		 * from the shapes, and the stages are shown so */
		for (i = IN_Q; !in->embeddings && i <= IN_DO; i++) {
			struct attn_array *a = &in->arr[i];

			if (i == IN_MASK || i == IN_BIAS || a->ndim != 3)
				continue;
			if (o->cfg.layout == ATTN_LAYOUT_BHSD)
				return attn_error_set(err, ATTN_ERR_USAGE,
				    NULL, 0, 0, "packed 3-D inputs are total x "
				    "H x D, as FlashAttention's varlen "
				    "functions take them: leave out --layout "
				    "bhsd");
			memmove(a->shape + 1, a->shape, 3 * sizeof a->shape[0]);
			a->shape[0] = 1;
			a->ndim = 4;
			o->cfg.layout = ATTN_LAYOUT_BSHD;
		}
	}
	if (in->varlen[VL_USED_K] != NULL) {
		vl->used_k = in->varlen[VL_USED_K];
		vl->used_n = in->nvarlen[VL_USED_K];
	}
	return ATTN_OK;
}

/*
 * --valid-lens: d2l's valid_lens made the mask, a T x S block per batch
 * in which query i of batch b keeps key j when j < its length: one
 * length per batch (B numbers, d2l's 1-D form) or per batch and query
 * row (B x T, its 2-D form).  d2l puts -1e6 where this masks, so its
 * row of length 0 is uniform; here it is a row with no key, which
 * --masked-rows decides (attn(1)).
 */
enum attn_status
varlen_valid_lens(const struct options *o, struct inputs *in,
    struct attn_error *err)
{
	const size_t B = in->in.batches;
	const size_t T = B == 0 ? 0 : in->in.q.rows / B;
	const size_t S = B == 0 ? 0 : in->in.k.rows / B;
	struct attn_matrix m;
	enum attn_status st;
	size_t *len = NULL, n, rows, cols, per_row, r, j;

	if (o->valid_lens == NULL)
		return ATTN_OK;
	/* (--mask with it is a usage error before anything is read) */
	if (in->arr[IN_MASK].ndim != 0)
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "the bundle has a mask, and --valid-lens makes another: "
		    "leave out one of them");
	if ((st = read_counts("--valid-lens", o->valid_lens, 1, &len, &n,
	    &rows, &cols, err)) != ATTN_OK)
		return st;
	/* B x T as read is per row; else B numbers, a row or a column */
	per_row = rows == B && cols == T && (B != 1 || n != 1);
	if (!per_row && !(n == B && (rows == 1 || cols == 1))) {
		free(len);
		return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
		    "--valid-lens has %zux%zu lengths but there %s %zu "
		    "batch%s of %zu quer%s: give B = %zu (d2l's 1-D "
		    "valid_lens) or B x T = %zux%zu (its 2-D form)", rows,
		    cols, B == 1 ? "is" : "are", B, B == 1 ? "" : "es", T,
		    T == 1 ? "y" : "ies", B, B, T);
	}
	for (r = 0; r < n; r++)
		if (len[r] > S) {
			char row[64] = "";

			if (per_row)
				snprintf(row, sizeof row, ", query row %zu",
				    r % T + 1);
			st = attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
			    "--valid-lens: the length of batch %zu%s is %zu "
			    "but there %s only %zu key%s", (per_row ? r / T :
			    r) + 1, row, len[r], S == 1 ? "is" : "are", S,
			    S == 1 ? "" : "s");
			free(len);
			return st;
		}
	/* nothing to mask in an empty block (and no empty allocation,
	 * which the memory account would charge a byte) */
	if (T == 0 || S == 0) {
		free(len);
		return ATTN_OK;
	}
	if ((st = attn_matrix_alloc(&m, B * T, S, err)) != ATTN_OK) {
		free(len);
		return st;
	}
	for (r = 0; r < B * T; r++)
		for (j = 0; j < len[per_row ? r : r / T]; j++)
			m.data[r * S + j] = 1.0;
	free(len);
	/* a 2-D stack of B blocks, which attn_array_free gives back as
	 * attn_matrix_alloc charged it */
	in->arr[IN_MASK].ndim = 2;
	in->arr[IN_MASK].shape[0] = B * T;
	in->arr[IN_MASK].shape[1] = S;
	in->arr[IN_MASK].data = m.data;
	in->name[IN_MASK] = "--valid-lens";
	return ATTN_OK;
}
