/*
 * varlen.c - packed variable-length sequences and KV-cache lengths:
 * --cu-seqlens-q, --cu-seqlens-k and --seqused-k, each a comma list of
 * whole numbers or a file of them (JSON, text, .npy), read into the
 * counts struct attn_inputs takes (attn_varlen), and Q, K, V and dO given
 * as FlashAttention's varlen functions take them, total x H x D, read as
 * one batch laid out B x T x H x D (--layout bshd), so that the heads
 * come from their shapes and every stage is shown in that layout.  Whether the offsets
 * fit (0 first, never decreasing, the packed rows last) is libattn's
 * rule, checked when the run starts.
 */
#include <math.h>
#include <stdint.h>
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
	"--cu-seqlens-q", "--cu-seqlens-k", "--seqused-k"
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

/* A file of whole numbers, one row or one column, into a new array. */
static enum attn_status
read_file(const char *option, const char *path, size_t **out, size_t *n,
    struct attn_error *err)
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
	if (a.ndim > 2 || (m.rows != 1 && m.cols != 1)) {
		attn_dims_text(shape, sizeof shape, a.shape, a.ndim);
		attn_array_free(&a);
		return attn_error_set(err, ATTN_ERR_DATA, path, 0, 0,
		    "%s: the file holds %s numbers: give one list, a row or "
		    "a column", option, shape);
	}
	*n = m.rows * m.cols;
	if ((*out = calloc(*n, sizeof **out)) == NULL) {
		attn_array_free(&a);
		return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "out of memory");
	}
	for (k = 0; k < *n; k++) {
		const double x = m.rows == 1 ? *attn_at(&m, 0, k) :
		    *attn_at(&m, k, 0);

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

enum attn_status
varlen_load(struct options *o, struct inputs *in, struct attn_error *err)
{
	const char *arg[VL_COUNT] = { o->cu_seqlens_q, o->cu_seqlens_k,
	    o->seqused_k };
	struct attn_varlen *vl = &in->in.varlen;
	enum attn_status st;
	size_t i;

	for (i = 0; i < VL_COUNT; i++) {
		if (arg[i] == NULL)
			continue;
		st = varlen_is_list(arg[i]) ? parse_list(option_name[i],
		    arg[i], &in->varlen[i], &in->nvarlen[i], err) :
		    read_file(option_name[i], arg[i], &in->varlen[i],
		    &in->nvarlen[i], err);
		if (st != ATTN_OK)
			return st;
	}
	if (in->varlen[VL_CU_Q] != NULL) {
		if (in->nvarlen[VL_CU_Q] != in->nvarlen[VL_CU_K])
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
