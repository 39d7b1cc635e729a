/*
 * layout.c - how the stages and the inputs are laid out beyond rows and
 * columns: the shape of a computed stage as every printer shows it
 * (attn_stage_shape), the strides that let any printer walk a stage in C order of
 * its shape, the 4-D layouts (BHSD as PyTorch, BSHD as FlashAttention and
 * JAX) on the way in and out, the place of an element for messages, and
 * NumPy broadcasting of a mask or bias (2-D, 3-D or 4-D).
 *
 * Inside the library nothing changes with the layout: a 4-D input folds
 * into the stack of rows with the heads side by side in the columns that
 * every kernel reads, and a layout only changes the shape in which the
 * stages are shown (attn_stage_shape ends in shape_layout).  So the
 * kernels, and their tests, never see a layout.
 *
 * Dims: B batches, H query heads, T query rows, S keys, d_v value
 * columns per head; R the rows of one block of a stage (T, or S for
 * grad_k and grad_v), C its columns.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ---------------------------------------------------------------- stages */

/* What a dim of a shape runs over, as far as its stride goes. */
enum role { ROLE_BATCH, ROLE_HEAD, ROLE_ROW, ROLE_COL };

/* The role of dim d of sh: the last dim is the columns, a batch or head
 * axis is that, and what is left is the rows (queries, or keys for
 * grad_k and grad_v), wherever a layout put them. */
static enum role
dim_role(const struct attn_shape *sh, size_t d)
{
	if (d + 1 == sh->ndim)
		return ROLE_COL;
	if (sh->axis[d] == ATTN_AXIS_BATCH)
		return ROLE_BATCH;
	return sh->axis[d] == ATTN_AXIS_HEAD ? ROLE_HEAD : ROLE_ROW;
}

/*
 * Finish sh for attn_stage_shape.  With a layout, every level of one is
 * kept, and stages whose heads sit side by side in the columns (output,
 * q and grad_q; k, v, grad_k and grad_v with the KV heads) split them off
 * as a dim of their own: B x heads x R x w in bhsd, B x R x heads x w in
 * bshd, as the inputs were; projected, which has no heads, is
 * B x T x d_out.  Then the stride of each dim in the stage's stack:
 * per-head stages are B*H blocks of R rows of C (batch -> H*R*C, head ->
 * R*C, row -> C); the others B blocks of R rows of heads*w side by side
 * (batch -> R*heads*w, row -> heads*w, head -> w); columns are 1.
 */
static void
shape_layout(const struct attn_stages *stages, enum attn_stage s,
    struct attn_shape *sh)
{
	const struct attn_stage_info *info = &attn_stage_table[s];
	const size_t ch = sh->col_heads, w = sh->cols / ch, R = sh->rows;
	const size_t stack_cols = sh->cols, H = stages->heads;
	size_t d, step[4];

	/* Strides by role, from the stack as it is. */
	step[ROLE_BATCH] = (info->per_head ? H : 1) * R * stack_cols;
	step[ROLE_HEAD] = info->per_head ? R * stack_cols : w;
	step[ROLE_ROW] = stack_cols;
	step[ROLE_COL] = 1;
	if (stages->layout != ATTN_LAYOUT_NONE &&
	    info->cols == ATTN_AXIS_MODEL) {
		/* projected has no heads left to lay out: B x T x d_out. */
		sh->ndim = 3;
		sh->dim[0] = sh->batches;
		sh->axis[0] = ATTN_AXIS_BATCH;
		sh->dim[1] = R;
		sh->axis[1] = info->rows;
		sh->dim[2] = sh->cols;
		sh->axis[2] = info->cols;
	} else if (stages->layout != ATTN_LAYOUT_NONE) {
		const size_t heads = info->per_head ? sh->heads : ch;
		const int split = !info->per_head;

		sh->ndim = 4;
		sh->dim[0] = sh->batches;
		sh->axis[0] = ATTN_AXIS_BATCH;
		if (!split || stages->layout == ATTN_LAYOUT_BHSD) {
			sh->dim[1] = heads;
			sh->axis[1] = ATTN_AXIS_HEAD;
			sh->dim[2] = R;
			sh->axis[2] = info->rows;
		} else {
			sh->dim[1] = R;
			sh->axis[1] = info->rows;
			sh->dim[2] = heads;
			sh->axis[2] = ATTN_AXIS_HEAD;
		}
		sh->dim[3] = split ? w : sh->cols;
		sh->axis[3] = info->cols;
		/* Blocks of one head each, as the dims run, for BHSD. */
		if (split && stages->layout == ATTN_LAYOUT_BHSD) {
			sh->heads = heads;
			sh->blocks = sh->batches * heads;
			sh->cols = w;
			sh->col_heads = 1;
			sh->legend = info->shape;
		}
	}
	for (d = 0; d < sh->ndim; d++)
		sh->step[d] = step[dim_role(sh, d)];
}

/* grad_bias and grad_sinks, shaped as their inputs in every layout:
 * the bias's dims as the run took them (bias_dim: its blocks by batch,
 * head or both, each 1 x S, T x 1, T x S or 1 x 1), and 1 x H, a column
 * a head.  Both are held in C order of those dims. */
static void
reduced_shape(const struct attn_stages *stages, enum attn_stage s,
    struct attn_shape *sh)
{
	static const char *const legends[2][2] = {
		{ "1 x 1", "1 x S" }, { "T x 1", "T x S" } };
	size_t d;

	if (s == ATTN_STAGE_GRAD_SINKS) {
		sh->ndim = 2;
		sh->dim[0] = 1;
		sh->axis[0] = ATTN_AXIS_ONE;
		sh->dim[1] = stages->heads;
		sh->axis[1] = ATTN_AXIS_HEAD;
		sh->legend = attn_stage_table[s].shape;
		sh->col_heads = stages->heads;
	} else {
		sh->ndim = stages->bias_ndim;
		for (d = 0; d < sh->ndim; d++) {
			sh->dim[d] = stages->bias_dim[d];
			sh->axis[d] = stages->bias_axis[d];
		}
		sh->legend = legends[sh->axis[sh->ndim - 2] ==
		    ATTN_AXIS_QUERY][sh->axis[sh->ndim - 1] == ATTN_AXIS_KEY];
		sh->col_heads = 1;
	}
	sh->batches = sh->heads = 1;
	for (d = 0; d + 2 < sh->ndim; d++)
		if (sh->axis[d] == ATTN_AXIS_BATCH)
			sh->batches = sh->dim[d];
		else if (sh->axis[d] == ATTN_AXIS_HEAD)
			sh->heads = sh->dim[d];
	sh->blocks = sh->batches * sh->heads;
	sh->rows = sh->dim[sh->ndim - 2];
	sh->cols = sh->dim[sh->ndim - 1];
	for (d = sh->ndim; d-- > 0;)
		sh->step[d] = d + 1 == sh->ndim ? 1 : sh->step[d + 1] *
		    sh->dim[d + 1];
}

void
attn_stage_shape(const struct attn_stages *stages, enum attn_stage s,
    struct attn_shape *sh)
{
	const struct attn_stage_info *info = &attn_stage_table[s];

	memset(sh, 0, sizeof *sh);
	if (info->reduced) {
		reduced_shape(stages, s, sh);
		return;
	}
	sh->batches = stages->batches;
	sh->heads = info->per_head ? stages->heads : 1;
	sh->blocks = sh->batches * sh->heads;
	sh->col_heads = attn_stage_col_heads(s, stages->heads,
	    stages->kv_heads);
	sh->rows = attn_stage_block_rows(s, stages->T, stages->S);
	sh->cols = attn_stage_cols(stages, s) * sh->col_heads;
	sh->legend = sh->col_heads > 1 ? info->wide : info->shape;
	if (sh->batches > 1) {
		sh->dim[sh->ndim] = sh->batches;
		sh->axis[sh->ndim++] = ATTN_AXIS_BATCH;
	}
	if (sh->heads > 1) {
		sh->dim[sh->ndim] = sh->heads;
		sh->axis[sh->ndim++] = ATTN_AXIS_HEAD;
	}
	sh->dim[sh->ndim] = sh->rows;
	sh->axis[sh->ndim++] = info->rows;
	sh->dim[sh->ndim] = sh->cols;
	sh->axis[sh->ndim++] = info->cols;
	shape_layout(stages, s, sh);
}

/* A held stage was allocated: its count fits. */
size_t
attn_shape_count(const struct attn_shape *sh)
{
	return attn_dims_count(sh->dim, sh->ndim);
}

struct attn_matrix
attn_shape_block(const struct attn_stages *stages, enum attn_stage s, size_t n)
{
	struct attn_shape sh;

	attn_stage_shape(stages, s, &sh);
	if (attn_stage_table[s].per_head || attn_stage_table[s].reduced)
		return attn_matrix_view(&stages->stage[s], n * sh.rows,
		    sh.rows, 0, sh.cols);
	return attn_matrix_view(&stages->stage[s], n / sh.heads * sh.rows,
	    sh.rows, n % sh.heads * sh.cols, sh.cols);
}

/* Block n of a stage with heads per block (per-head stages, and those
 * that a bhsd layout splits) is one head, n % heads; a block of every
 * head (col_heads of them side by side) starts at head 0.  So the head of
 * column j is the block's first head plus the heads before j. */
void
attn_shape_block_where(const struct attn_stages *stages, enum attn_stage s,
    size_t n, size_t i, size_t j, struct attn_where *w)
{
	struct attn_shape sh;
	size_t wd;

	attn_stage_shape(stages, s, &sh);
	wd = sh.cols / sh.col_heads;
	w->batch = n / sh.heads;
	w->head = n % sh.heads * sh.col_heads + j / wd;
	w->row = i;
	w->col = j % wd;
}

/* The offset in the stage's data of element `flat` in C order of sh, and
 * its index along each dim. */
static size_t
shape_offset(const struct attn_shape *sh, size_t flat,
    size_t idx[ATTN_MAX_DIMS])
{
	size_t d, off = 0;

	for (d = sh->ndim; d-- > 0;) {
		idx[d] = flat % sh->dim[d];
		flat /= sh->dim[d];
		off += idx[d] * sh->step[d];
	}
	return off;
}

/* Whether sh's elements lie in C order of its dims. */
static int
shape_c_order(const struct attn_shape *sh)
{
	size_t d, step = 1;

	for (d = sh->ndim; d-- > 0; step *= sh->dim[d])
		if (sh->dim[d] > 1 && sh->step[d] != step)
			return 0;
	return 1;
}

size_t
attn_stage_c_runs(const struct attn_stages *stages, enum attn_stage s,
    void (*run)(void *arg, const double *x, size_t n), void *arg)
{
	const double *data = stages->stage[s].data;
	size_t idx[ATTN_MAX_DIMS], i, n, last;
	struct attn_shape sh;

	attn_stage_shape(stages, s, &sh);
	if ((n = attn_shape_count(&sh)) == 0)
		return 0;
	if (shape_c_order(&sh)) {
		if (run != NULL)
			run(arg, data, n);
		return 1;
	}
	/* A row of the last dim is contiguous (its step is 1). */
	last = sh.dim[sh.ndim - 1];
	for (i = 0; run != NULL && i < n; i += last)
		run(arg, data + shape_offset(&sh, i, idx), last);
	return n / last;
}

/* attn_stage_flatten's run: copied to *arg, which moves on. */
static void
flatten_run(void *arg, const double *x, size_t n)
{
	double **out = arg;

	memcpy(*out, x, n * sizeof *x);
	*out += n;
}

void
attn_stage_flatten(const struct attn_stages *stages, enum attn_stage s,
    double *out)
{
	attn_stage_c_runs(stages, s, flatten_run, &out);
}

const double *
attn_stage_c_order(const struct attn_stages *stages, enum attn_stage s)
{
	struct attn_shape sh;

	attn_stage_shape(stages, s, &sh);
	return shape_c_order(&sh) ? stages->stage[s].data : NULL;
}

void
attn_stage_where(const struct attn_stages *stages, enum attn_stage s,
    size_t flat, struct attn_where *w)
{
	size_t idx[ATTN_MAX_DIMS], d, wd;
	struct attn_shape sh;
	int head_dim = 0;

	attn_stage_shape(stages, s, &sh);
	memset(w, 0, sizeof *w);
	(void)shape_offset(&sh, flat, idx);
	for (d = 0; d < sh.ndim; d++)
		switch (dim_role(&sh, d)) {
		case ROLE_BATCH:
			w->batch = idx[d];
			break;
		case ROLE_HEAD:
			w->head = idx[d];
			head_dim = 1;
			break;
		case ROLE_ROW:
			w->row = idx[d];
			break;
		case ROLE_COL:
			w->col = idx[d];
			break;
		}
	/* Heads side by side in the columns (no dim of their own): split
	 * the column into head and column. */
	if (sh.col_heads > 1 && !head_dim) {
		wd = sh.cols / sh.col_heads;
		w->head = w->col / wd;
		w->col %= wd;
	}
}

size_t
attn_stage_where_run(const struct attn_stages *stages, enum attn_stage s)
{
	struct attn_shape sh;
	size_t d, run = 1;
	int head_dim = 0;

	attn_stage_shape(stages, s, &sh);
	for (d = 0; d + 1 < sh.ndim; d++)
		if (dim_role(&sh, d) == ROLE_HEAD)
			head_dim = 1;
	/* Outward from the columns, while a dim moves neither batch nor
	 * head: the columns (or one head's of them, when attn_stage_where
	 * splits them), then the rows within. */
	if (sh.col_heads > 1 && !head_dim)
		return sh.cols / sh.col_heads;
	for (d = sh.ndim; d-- > 0;) {
		if (dim_role(&sh, d) != ROLE_COL &&
		    dim_role(&sh, d) != ROLE_ROW)
			break;
		run *= sh.dim[d];
	}
	return run;
}

/* ---------------------------------------------------------------- inputs */

enum attn_status
attn_array_fold_heads(struct attn_array *a, enum attn_layout layout,
    size_t *heads, struct attn_error *err)
{
	const size_t B = a->shape[0];
	size_t H, S, D, b, h, s;
	double *to;

	if (a->ndim != 4 || layout == ATTN_LAYOUT_NONE)
		return attn_error_set(err, ATTN_ERR_INTERNAL, NULL, 0, 0,
		    "attn_array_fold_heads: a %zu-D array in layout %d",
		    a->ndim, (int)layout);
	H = a->shape[layout == ATTN_LAYOUT_BHSD ? 1 : 2];
	S = a->shape[layout == ATTN_LAYOUT_BHSD ? 2 : 1];
	D = a->shape[3];
	/* An array whose elements are read later (attn-mpi's Q,
	 * attn_read_npy_later: data NULL) folds its dims alone. */
	if (layout == ATTN_LAYOUT_BHSD && a->data != NULL) {
		/* The reader counted these numbers: no overflow. */
		if ((to = attn_mem_array(B * H * S * D, sizeof *to)) == NULL) {
			char doing[64];

			snprintf(doing, sizeof doing, "arranging %zu heads", H);
			return attn_error_nomem(err, NULL, doing);
		}
		for (b = 0; b < B; b++)
			for (h = 0; h < H; h++)
				for (s = 0; s < S; s++)
					memcpy(to + ((b * S + s) * H + h) * D,
					    a->data + ((b * H + h) * S + s) * D,
					    D * sizeof *to);
		if (!a->lent)	/* else the caller's, read in place */
			attn_mem_free(a->data, B * H * S * D * sizeof *to);
		a->data = to;
		a->lent = 0;
	}
	a->ndim = 3;
	a->shape[0] = B;
	a->shape[1] = S;
	a->shape[2] = H * D;
	a->shape[3] = 0;
	*heads = H;
	return ATTN_OK;
}

/* For a 3-D mask or bias of 3-D inputs (a block per batch) whose first
 * dim is not B but H, and whose others fit: how to write a block per
 * head instead, into buf; "" otherwise.  Returns buf. */
static const char *
head_hint(char *buf, size_t size, const struct attn_array *a,
    const size_t want[4])
{
	char h[96];

	buf[0] = '\0';
	if (want[1] > 1 && a->shape[0] == want[1] &&
	    (a->shape[1] == 1 || a->shape[1] == want[2]) &&
	    (a->shape[2] == 1 || a->shape[2] == want[3])) {
		attn_dims_text(h, sizeof h, (const size_t[]){ 1, want[1],
		    a->shape[1], a->shape[2] }, 4);
		snprintf(buf, size, "; for a block per head write it 4-D, %s "
		    "(1 x H x T x S)", h);
	}
	return buf;
}

/* The dims a 3-D mask or bias d0 x t x s takes in 4-D (b, h, t, s): 0, or
 * with 4-D inputs, where a first dim that could be B is a data error,
 * -1 with the message in msg.  See attn_array_broadcast. */
static int
dims_of_3d(const struct attn_array *a, const size_t want[4], int inputs_4d,
    size_t dims[4], char *msg, size_t size)
{
	const size_t B = want[0], H = want[1], d0 = a->shape[0];
	char got[96], scores[96], as_b[96], as_h[96];

	dims[0] = dims[1] = 1;
	dims[2] = a->shape[1];
	dims[3] = a->shape[2];
	if (!inputs_4d) {
		dims[0] = d0;	/* per batch */
		return 0;
	}
	dims[1] = d0;		/* per head, as NumPy aligns it */
	if (d0 != B || d0 == 1 || (dims[2] != 1 && dims[2] != want[2]) ||
	    (dims[3] != 1 && dims[3] != want[3]))
		return 0;	/* one reading at most: the caller checks it */
	attn_dims_text(got, sizeof got, a->shape, 3);
	attn_dims_text(scores, sizeof scores, want, 4);
	attn_dims_text(as_b, sizeof as_b, (const size_t[]){ B, 1, dims[2],
	    dims[3] }, 4);
	attn_dims_text(as_h, sizeof as_h, (const size_t[]){ 1, H, dims[2],
	    dims[3] }, 4);
	if (d0 == H)
		snprintf(msg, size, "%s is ambiguous with 4-D inputs (B x H x "
		    "T x S = %s): NumPy and PyTorch read it as H x T x S, "
		    "attn's 3-D rule as B x T x S; write %s (1 x H x T x S) or "
		    "%s (B x 1 x T x S)", got, scores, as_h, as_b);
	else
		snprintf(msg, size, "%s with 4-D inputs (B x H x T x S = %s): "
		    "NumPy and PyTorch read it as H x T x S, which %zu does "
		    "not fit, attn's 3-D rule as B x T x S; for a block per "
		    "batch write %s (B x 1 x T x S)", got, scores, d0, as_b);
	return -1;
}

/*
 * A 2-D array is the 4-D one with dims of 1 put before it (T x S is
 * 1 x 1 x T x S), a 1-D one a row (1 x s).  A 3-D mask or bias is per
 * batch (b x t x s as b x 1 x t x s), but with 4-D inputs it is H x T x S,
 * as NumPy aligns it (attn(1), Batches): there a first dim that reads as
 * B is refused by dims_of_3d rather than guessed.
 */
enum attn_status
attn_array_broadcast(struct attn_array *a, size_t B, size_t H, size_t T,
    size_t S, int inputs_4d, struct attn_error *err)
{
	const size_t want[4] = { B, H, T, S };
	size_t dims[4] = { 1, 1, 1, 1 };
	size_t d, n, b, block, count;
	char got[96], to_dims[96], msg[1024];
	double *to;

	if (a->ndim < 1 || a->ndim > 4)
		return attn_error_set(err, ATTN_ERR_INTERNAL, NULL, 0, 0,
		    "attn_array_broadcast: a %zu-D array", a->ndim);
	if (a->ndim == 1) {	/* one row, as everywhere in attn */
		a->ndim = 2;
		a->shape[1] = a->shape[0];
		a->shape[0] = 1;
	}
	if (a->ndim == 3) {
		if (dims_of_3d(a, want, inputs_4d, dims, msg, sizeof msg) != 0)
			return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
			    "%s", msg);
	} else {
		for (d = a->ndim == 4 ? 0 : 2; d < 4; d++)
			dims[d] = a->shape[a->ndim - 4 + d];
	}
	for (d = 0; d < 4; d++)
		if (dims[d] != 1 && dims[d] != want[d]) {
			attn_dims_text(got, sizeof got, a->shape, a->ndim);
			if (a->ndim == 3 && inputs_4d) {
				attn_dims_text(to_dims, sizeof to_dims, want + 1,
				    3);
				return attn_error_set(err, ATTN_ERR_DATA, NULL,
				    0, 0, "shape mismatch: %s does not "
				    "broadcast to the scores' H x T x S = %s "
				    "(B is %zu): with 4-D inputs a 3-D mask or "
				    "bias is H x T x S, as NumPy aligns it, each "
				    "dim 1 or the scores' own", got, to_dims, B);
			}
			if (a->ndim == 3) {
				attn_dims_text(to_dims, sizeof to_dims,
				    (const size_t[]){ B, T, S }, 3);
				return attn_error_set(err, ATTN_ERR_DATA, NULL,
				    0, 0, "shape mismatch: %s does not fit the "
				    "scores' B x T x S = %s: a 3-D mask or bias "
				    "is a block per batch, each dim 1 or the "
				    "scores' own%s", got, to_dims,
				    head_hint(msg, sizeof msg, a, want));
			}
			attn_dims_text(to_dims, sizeof to_dims,
			    want + 4 - a->ndim, a->ndim);
			return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
			    "shape mismatch: %s does not broadcast to the "
			    "scores' %s = %s: each dim must be 1 or the "
			    "scores' own, as NumPy broadcasts", got,
			    a->ndim == 2 ? "T x S" : "B x H x T x S", to_dims);
		}
	/* One block in all, one a batch, or one a batch and head; each
	 * block stays dims[2] x dims[3], which the kernels broadcast. */
	n = dims[1] > 1 ? B * H : dims[0] > 1 ? B : 1;
	block = dims[2] * dims[3];
	if (dims[1] > 1 && dims[0] != B) {
		/* The heads' blocks repeat for every batch: write them out. */
		if (attn_size_mul(n, block, &count) != 0 ||
		    (to = attn_mem_array(count, sizeof *to)) == NULL) {
			snprintf(msg, sizeof msg, "broadcasting to %zu blocks "
			    "of %zux%zu", n, dims[2], dims[3]);
			return attn_error_nomem(err, NULL, msg);
		}
		for (b = 0; b < B; b++)
			memcpy(to + b * H * block, a->data,
			    H * block * sizeof *to);
		if (!a->lent)	/* else the caller's, read in place */
			attn_mem_free(a->data,
			    attn_array_count(a) * sizeof *a->data);
		a->data = to;
		a->lent = 0;
	}
	/* The stack as struct attn_inputs reads it, by its block count. */
	memset(a->shape, 0, sizeof a->shape);
	a->ndim = n == 1 ? 2 : n == B * H && H > 1 ? 4 : 3;
	d = 0;
	if (n != 1)
		a->shape[d++] = B;
	if (a->ndim == 4)
		a->shape[d++] = H;
	a->shape[d++] = dims[2];
	a->shape[d] = dims[3];
	return ATTN_OK;
}
