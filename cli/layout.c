/*
 * layout.c - 4-D inputs: Q, K and V laid out as --layout says (bhsd, as
 * PyTorch's scaled_dot_product_attention takes them, by default; bshd, as
 * FlashAttention and JAX do), and masks and biases broadcast as NumPy
 * does.
 *
 * The heads come from the shapes: H from Q, G from K and V, checked
 * against --heads and --kv-heads when those are given.  Every rule
 * between the three shapes is checked here, in their 4-D terms, before
 * they fold into the stacks libattn computes on (attn_array_fold_heads),
 * whose own messages would name the folded shapes.  When the shapes are
 * wrong in the layout given but right in the other, the message says so:
 * a BSHD/BHSD mix-up is the likeliest mistake.  dO (--grad) may be 4-D
 * too, shaped as the output is in the layout.  Paged caches (paged.h)
 * meet Q only in their heads and D, and fold as --kv-layout says.
 */
#include <stdio.h>
#include <string.h>

#include "attn.h"
#include "attn_io.h"
#include "inputs.h"
#include "layout.h"
#include "options.h"
#include "words.h"

/* The heads and rows of a 4-D array in layout l. */
static size_t
heads_of(const struct attn_array *a, enum attn_layout l)
{
	return a->shape[l == ATTN_LAYOUT_BHSD ? 1 : 2];
}

static size_t
rows_of(const struct attn_array *a, enum attn_layout l)
{
	return a->shape[l == ATTN_LAYOUT_BHSD ? 2 : 1];
}

/*
 * K given as B x H x D x S (k.transpose(-2, -1) in PyTorch), V likewise:
 * in bhsd, what a shape error adds when a's last dim is not `d` but the
 * one before it is; "" otherwise (and in bshd, where no such slip puts
 * D before S).  lib/problem.c gives the same hint for 2-D and 3-D.
 */
static const char *
transposed_hint(char *buf, size_t size, const char *who,
    const struct attn_array *a, enum attn_layout l, size_t d)
{
	buf[0] = '\0';
	if (l == ATTN_LAYOUT_BHSD && a->shape[2] == d && a->shape[3] != d)
		snprintf(buf, size, "; %s looks transposed: it should be "
		    "B x H x S x D = %zux%zux%zux%zu", who, a->shape[0],
		    a->shape[1], a->shape[3], d);
	return buf;
}

/*
 * Why the 4-D shapes of Q, K and V (n of them: --self has one) do not go
 * together in layout l, K and V laid out as kv, written into msg; 0 when
 * they do.  Paged caches (in->caches) are pages, not batches: only their
 * heads and D meet Q's, and K's pages V's.
 */
static int
shapes_fault(const struct inputs *in, size_t n, enum attn_layout l,
    enum attn_layout kv, char *msg, size_t size)
{
	const struct attn_array *q = &in->arr[IN_Q];
	const struct attn_array *k = &in->arr[n > 1 ? IN_K : IN_Q];
	const struct attn_array *v = &in->arr[n > 1 ? IN_V : IN_Q];
	const int paged = in->caches == CACHES_PAGED;
	const char *const dim = paged ? kv == ATTN_LAYOUT_BHSD ?
	    "num_pages x G x page_size x D" : "num_pages x page_size x G x D" :
	    l == ATTN_LAYOUT_BHSD ? "B x H x S x D" : "B x S x H x D";
	char qs[96], ks[96], vs[96], hint[128];

	attn_dims_text(qs, sizeof qs, q->shape, q->ndim);
	attn_dims_text(ks, sizeof ks, k->shape, k->ndim);
	attn_dims_text(vs, sizeof vs, v->shape, v->ndim);
	if (paged && (k->shape[0] != v->shape[0] ||
	    rows_of(k, kv) != rows_of(v, kv)))
		snprintf(msg, size, "K is %s but V is %s (%s): the K and V "
		    "caches need the same pages, of the same size", ks, vs,
		    dim);
	else if (!paged && (q->shape[0] != k->shape[0] ||
	    k->shape[0] != v->shape[0]))
		snprintf(msg, size, "batch mismatch: Q is %s, K is %s and V is "
		    "%s (%s): they need the same B", qs, ks, vs, dim);
	else if (heads_of(k, kv) != heads_of(v, kv))
		snprintf(msg, size, "K is %s but V is %s (%s): K and V need "
		    "the same number of heads", ks, vs, dim);
	else if (heads_of(q, l) % heads_of(k, kv) != 0)
		snprintf(msg, size, "Q is %s but K is %s (%s): Q's %zu head%s "
		    "must be a multiple of K's %zu", qs, ks, dim,
		    heads_of(q, l), heads_of(q, l) == 1 ? "" : "s",
		    heads_of(k, kv));
	else if (q->shape[3] != k->shape[3])
		snprintf(msg, size, "shape mismatch: Q is %s but K is %s (%s): "
		    "Q and K need the same D (d_k)%s", qs, ks, dim,
		    transposed_hint(hint, sizeof hint, "K", k, kv,
		    q->shape[3]));
	else if (rows_of(k, kv) != rows_of(v, kv))
		snprintf(msg, size, "shape mismatch: K is %s but V is %s (%s): "
		    "K and V need the same S%s", ks, vs, dim,
		    v->shape[3] == rows_of(k, kv) ? transposed_hint(hint,
		    sizeof hint, "V", v, kv, v->shape[2]) : "");
	else
		return 0;
	return -1;
}

/* Heads given by an option must be the heads the shapes have. */
static enum attn_status
check_option(size_t given, size_t have, const char *option,
    const struct attn_array *a, const char *who, struct attn_error *err)
{
	char s[96];

	if (given == 0 || given == have)
		return ATTN_OK;
	attn_dims_text(s, sizeof s, a->shape, a->ndim);
	return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0, "%s is %s: "
	    "%zu head%s, but %s says %zu (leave it out with 4-D inputs)", who,
	    s, have, have == 1 ? "" : "s", option, given);
}

/*
 * dO (--grad), 4-D as the output it is the gradient of: B x H x T x d_v
 * in bhsd, B x T x H x d_v in bshd, folded as Q is.  Q, K and V are
 * folded already, so B, T, H and d_v come from them and o->cfg.
 */
static enum attn_status
fold_grad(const struct options *o, struct inputs *in, size_t n,
    struct attn_error *err)
{
	struct attn_array *d = &in->arr[IN_DO];
	const struct attn_array *q = &in->arr[IN_Q];
	const struct attn_array *v = &in->arr[n > 1 ? IN_V : IN_Q];
	const enum attn_layout l = o->cfg.layout;
	const size_t H = o->cfg.heads;
	const size_t G = o->cfg.kv_heads != 0 ? o->cfg.kv_heads : H;
	size_t want[4], B, T, h;
	char got[96], s[96];

	if (d->ndim != 4)
		return ATTN_OK;
	attn_dims_text(got, sizeof got, d->shape, d->ndim);
	if (n == 0)
		return attn_error_set(err, ATTN_ERR_DATA, in->name[IN_DO], 0, 0,
		    "dO is 4-D (%s) but attention from embeddings is not laid "
		    "out in heads: give dO shaped as output is (B x T x H*d_v)",
		    got);
	if (l == ATTN_LAYOUT_NONE)
		return attn_error_set(err, ATTN_ERR_DATA, in->name[IN_DO], 0, 0,
		    "dO is 4-D (%s) but Q, K and V are not: give dO shaped as "
		    "output is (B x T x H*d_v), or --layout", got);
	B = q->ndim == 3 ? q->shape[0] : 1;
	T = q->ndim >= 2 ? q->shape[q->ndim - 2] : 1;
	want[0] = B;
	want[1] = l == ATTN_LAYOUT_BHSD ? H : T;
	want[2] = l == ATTN_LAYOUT_BHSD ? T : H;
	want[3] = v->shape[v->ndim - 1] / G;
	if (memcmp(want, d->shape, sizeof want) != 0) {
		snprintf(s, sizeof s, "%zux%zux%zux%zu", want[0], want[1],
		    want[2], want[3]);
		return attn_error_set(err, ATTN_ERR_DATA, in->name[IN_DO], 0, 0,
		    "shape mismatch: dO is %s but output is %s (%s): dO, the "
		    "gradient of the output, has its shape", got, s,
		    l == ATTN_LAYOUT_BHSD ? "B x H x T x d_v" :
		    "B x T x H x d_v");
	}
	return attn_array_fold_heads(d, l, &h, err);
}

enum attn_status
layout_fold(struct options *o, struct inputs *in, size_t n,
    struct attn_error *err)
{
	enum attn_layout l = o->cfg.layout != ATTN_LAYOUT_NONE ?
	    o->cfg.layout : ATTN_LAYOUT_BHSD;
	const enum attn_layout other = l == ATTN_LAYOUT_BHSD ?
	    ATTN_LAYOUT_BSHD : ATTN_LAYOUT_BHSD;
	/* the layout of K and V: paged caches' is --kv-layout's */
	const enum attn_layout kv = in->caches != CACHES_PAGED ? l :
	    o->kv_hnd ? ATTN_LAYOUT_BHSD : ATTN_LAYOUT_BSHD;
	char msg[1024], other_msg[1024], s0[96];
	size_t i, four = n, H, G;
	enum attn_status status;

	for (i = n; i-- > 0;)
		if (in->arr[i].ndim == 4)
			four = i;
	/* paged caches are 4-D whatever Q is (attn(1), --block-table) */
	if (in->caches == CACHES_PAGED)
		four = 0;
	if (four == n)
		return fold_grad(o, in, n, err);
	for (i = 0; i < n; i++)
		if (in->arr[i].ndim != 4) {
			attn_dims_text(s0, sizeof s0, in->arr[four].shape,
			    in->arr[four].ndim);
			return in->caches == CACHES_PAGED ?
			    attn_error_set(err, ATTN_ERR_DATA, in->name[i], 0,
			    0, "%s is %zu-D: with paged caches Q is 4-D (or "
			    "total x H x D with --cu-seqlens-q) and the K and V "
			    "caches num_pages x page_size x G x D",
			    inputs_role(in, i), in->arr[i].ndim) :
			    attn_error_set(err, ATTN_ERR_DATA, in->name[i], 0,
			    0, "%s is %zu-D but %s is 4-D (%s): Q, K and V must "
			    "all be 4-D, laid out as --layout says, or none",
			    inputs_role(in, i), in->arr[i].ndim,
			    inputs_role(in, four), s0);
		}
	if (shapes_fault(in, n, l, kv, msg, sizeof msg) != 0) {
		size_t len = strlen(msg);

		/* (paged caches keep their --kv-layout) */
		if (shapes_fault(in, n, other, in->caches == CACHES_PAGED ? kv :
		    other, other_msg, sizeof other_msg) == 0)
			snprintf(msg + len, sizeof msg - len, "; as --layout %s "
			    "they would fit: are they %s?", words_layout[other - 1],
			    words_layout[other - 1]);
		return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0, "%s",
		    msg);
	}
	H = heads_of(&in->arr[IN_Q], l);
	G = heads_of(&in->arr[n > 1 ? IN_K : IN_Q], n > 1 ? kv : l);
	/* --heads 1 is the default, so only a count above 1 can
	 * disagree with the shapes. */
	if ((status = check_option(o->cfg.heads > 1 ? o->cfg.heads : 0, H,
	    "--heads", &in->arr[IN_Q], "Q", err)) != ATTN_OK ||
	    (status = check_option(o->cfg.kv_heads, G, "--kv-heads",
	    &in->arr[n > 1 ? IN_K : IN_Q], n > 1 ? "K" : "Q", err)) !=
	    ATTN_OK)
		return status;
	in->q_heads_first = l == ATTN_LAYOUT_BHSD;
	for (i = 0; i < n; i++)
		if ((status = attn_array_fold_heads(&in->arr[i],
		    i == IN_Q ? l : kv, i == IN_Q ? &H : &G, err)) != ATTN_OK)
			return status;
	o->cfg.heads = H;
	o->cfg.kv_heads = G;
	o->cfg.layout = l;
	in->four_d = 1;
	return fold_grad(o, in, n, err);
}

enum attn_status
layout_broadcast(struct inputs *in, size_t i, size_t heads,
    struct attn_error *err)
{
	const size_t B = in->in.batches;
	struct attn_error why = { 0 };
	enum attn_status status;
	const struct attn_array given = in->arr[i];

	status = attn_array_broadcast(&in->arr[i], B, heads, in->in.q.rows / B,
	    in->in.k.rows / B, in->four_d, &why);
	/* grad_bias has the bias's dims as given (a 1-D one is a row);
	 * one of 2-D blocks one under another, its blocks' */
	if (status == ATTN_OK && i == IN_BIAS) {
		in->in.bias_ndim = given.ndim < 2 ? 2 : given.ndim;
		in->in.bias_dims[0] = 1;
		memcpy(in->in.bias_dims + in->in.bias_ndim - given.ndim,
		    given.shape, given.ndim * sizeof *given.shape);
	}
	if (status == ATTN_OK ||
	    (status == ATTN_ERR_DATA && in->arr[i].ndim < 3))
		return ATTN_OK;
	if (err != NULL) {
		*err = why;
		if (err->file == NULL)
			err->file = in->name[i];
	}
	return status;
}
