/*
 * fuzz_json.c - libFuzzer harness for the JSON reader: attn_read_array
 * with ATTN_FMT_JSON, attn_read_bundle and attn_read_layer on the same
 * bytes.  A bundle of embeddings (X, or XQ and XKV) with its layer is run
 * through the projections too, with RoPE when bit 1 of byte 0 says so.
 *
 * Input: byte 0 chooses the reader flags (its value mod 4: finite, bool,
 * none, bias) and, bit by bit, the configuration a bundle that reads is
 * computed with; the rest is the JSON text,
 * handed over without a terminating NUL, so that a read past its end is
 * an ASan report.  A bundle whose stages are small (at most
 * FUZZ_MAX_STAGE_BYTES) is also run through attn_plan and attn_run, which
 * checks every mask and bias shape the reader lets through.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "attn.h"
#include "attn_io.h"
#include "fuzz_check.h"

#define FUZZ_NAME "fuzz.json"
#define FUZZ_MAX_STAGE_BYTES ((size_t)1 << 20)

/* The flags byte 0 selects: Q, K and V (finite), a mask, none, a bias. */
static const unsigned flag_choice[4] = {
	ATTN_READ_FINITE, ATTN_READ_BOOL, 0, ATTN_READ_BIAS
};

/* A mask or bias array as a stack of T x S blocks, as the CLI sees it. */
static size_t
blocks_of(const struct attn_array *a)
{
	if (a->ndim <= 2)
		return 1;
	return a->ndim == 3 ? a->shape[0] : a->shape[0] * a->shape[1];
}

/* Touch every element of every stage that attn_run filled. */
static void
touch_stages(const struct attn_stages *st)
{
	volatile double sink = 0;
	size_t s, i, j;

	for (s = 0; s < ATTN_STAGE_COUNT; s++) {
		const struct attn_matrix *m = &st->stage[s];

		for (i = 0; i < m->rows; i++)
			for (j = 0; j < m->cols; j++)
				sink += *attn_at(m, i, j);
	}
	for (i = 0; i < st->nmasked; i++)
		sink += (double)st->masked[i];
	(void)sink;
}

/*
 * Compute a bundle that read, with the configuration the bits of sel
 * choose, when Q, K and V are all 2-D or all 3-D with one batch count
 * (the CLI's rule) and the stages are small.
 */
static void
run_bundle(const struct attn_bundle *b, uint8_t sel)
{
	struct attn_config cfg;
	struct attn_inputs in;
	struct attn_stages st;
	struct attn_error err;
	size_t bytes, batches;
	enum attn_status rc;
	unsigned want;

	/* embeddings: XKV is X in self-attention, and nothing is V */
	const struct attn_array *q = &b->q, *k = b->embeddings &&
	    b->k.ndim == 0 ? &b->q : &b->k, *v = b->embeddings ? k : &b->v;

	if (b->embeddings && b->proj.w_q.ndim == 0)
		return;
	if (q->ndim > 3 || k->ndim > 3 || v->ndim > 3)
		return;
	if ((q->ndim == 3) != (k->ndim == 3) ||
	    (q->ndim == 3) != (v->ndim == 3))
		return;
	batches = q->ndim == 3 ? q->shape[0] : 1;
	if (q->ndim == 3 && (k->shape[0] != batches ||
	    v->shape[0] != batches))
		return;

	attn_config_init(&cfg);
	cfg.masked_rows = (enum attn_masked_rows)((sel & 3) % 3);
	cfg.causal = (sel >> 2) & 1;
	cfg.alibi = (sel >> 3) & 1;
	cfg.align = (sel >> 4) & 1 ? ATTN_ALIGN_BOTTOM_RIGHT :
	    ATTN_ALIGN_TOP_LEFT;
	cfg.heads = (sel >> 5) & 1 ? 2 : 1;
	cfg.mask_invert = b->mask.ndim != 0 && ((sel >> 6) & 1);
	if ((sel >> 7) & 1) {
		cfg.window = 1;
		cfg.window_left = 1;
		cfg.window_right = 0;
	}

	cfg.rope = b->embeddings && ((sel >> 1) & 1);

	memset(&in, 0, sizeof in);
	in.batches = batches;
	in.q = attn_array_matrix(q);
	in.k = attn_array_matrix(k);
	in.v = attn_array_matrix(v);
	in.proj = attn_layer_proj(&b->proj);
	if (b->mask.ndim != 0) {
		in.mask = attn_array_matrix(&b->mask);
		in.mask_blocks = blocks_of(&b->mask);
	}
	if (b->bias.ndim != 0) {
		in.bias = attn_array_matrix(&b->bias);
		in.bias_blocks = blocks_of(&b->bias);
	}

	want = attn_stages_available(&cfg, &in);
	memset(&err, 0, sizeof err);
	rc = attn_plan(&cfg, &in, want, &bytes, &err);
	if (rc != ATTN_OK) {
		if (rc == ATTN_ERR_INTERNAL)
			fuzz_fail("attn_plan: internal error", &err);
		return;
	}
	if (bytes > FUZZ_MAX_STAGE_BYTES)
		return;
	memset(&err, 0, sizeof err);
	rc = attn_run(&cfg, &in, want, &st, &err);
	if (rc == ATTN_OK)
		touch_stages(&st);
	else if (rc == ATTN_ERR_INTERNAL)
		fuzz_fail("attn_run: internal error", &err);
	else if (rc == ATTN_ERR_USAGE)
		fuzz_fail("attn_run: usage error after attn_plan passed",
		    &err);
	attn_stages_free(&st);
}

/* A layer that read: its W are matrices, its b vectors, all finite; the
 * three W it needs are there, and b_O only with W_O. */
static void
check_layer(const struct attn_layer *l, size_t len)
{
	const struct attn_array *w[4] = { &l->w_q, &l->w_k, &l->w_v, &l->w_o };
	const struct attn_array *bv[4] = { &l->b_q, &l->b_k, &l->b_v,
	    &l->b_o };
	size_t i;

	for (i = 0; i < 4; i++) {
		if (w[i]->ndim != 0) {
			if (w[i]->ndim != 2)
				fuzz_fail("a layer's W is not a matrix", NULL);
			fuzz_check_array(w[i], ATTN_READ_FINITE, len);
		} else if (i < 3) {
			fuzz_fail("a layer read without W_Q, W_K or W_V", NULL);
		}
		if (bv[i]->ndim != 0) {
			if (bv[i]->ndim > 2 || (bv[i]->ndim == 2 &&
			    bv[i]->shape[0] != 1 && bv[i]->shape[1] != 1))
				fuzz_fail("a layer's b is not a vector", NULL);
			fuzz_check_array(bv[i], ATTN_READ_FINITE, len);
		}
	}
	if (l->b_o.ndim != 0 && l->w_o.ndim == 0)
		fuzz_fail("a layer read b_O without W_O", NULL);
}

static void
check_bundle(const struct attn_bundle *b, size_t len)
{
	/* embeddings: X (q) names the keys too, and there is no V */
	const int self = b->embeddings && b->k.ndim == 0;
	const struct attn_array *arr[2] = { &b->q, self ? &b->q : &b->k };
	const struct attn_labels *lab[2] = { &b->query_labels,
	    &b->key_labels };
	size_t i;

	fuzz_check_array(&b->q, ATTN_READ_FINITE, len);
	if (!self)
		fuzz_check_array(&b->k, ATTN_READ_FINITE, len);
	if (!b->embeddings)
		fuzz_check_array(&b->v, ATTN_READ_FINITE, len);
	else if (b->v.ndim != 0)
		fuzz_fail("a bundle of embeddings with a V", NULL);
	if (b->proj.w_q.ndim != 0)
		check_layer(&b->proj, len);
	if (b->mask.ndim != 0)
		fuzz_check_array(&b->mask, ATTN_READ_BOOL, len);
	if (b->bias.ndim != 0)
		fuzz_check_array(&b->bias, ATTN_READ_BIAS, len);
	for (i = 0; i < 2; i++) {
		size_t j;

		if (lab[i]->count != 0 &&
		    lab[i]->count != attn_array_matrix(arr[i]).rows)
			fuzz_fail("bundle labels do not match the rows", NULL);
		for (j = 0; j < lab[i]->count; j++)
			if (lab[i]->names[j] == NULL)
				fuzz_fail("a NULL bundle label", NULL);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct attn_array a;
	struct attn_bundle b;
	struct attn_layer layer;
	struct attn_error err;
	enum attn_status st;
	unsigned flags;
	const char *buf;
	size_t len;

	if (size < 1 || size > 4096)
		return 0;
	flags = flag_choice[data[0] % 4];
	buf = (const char *)data + 1;
	len = size - 1;

	memset(&err, 0, sizeof err);
	st = attn_read_array(FUZZ_NAME, buf, len, ATTN_FMT_JSON, flags, &a,
	    &err);
	if (st == ATTN_OK)
		fuzz_check_array(&a, flags, len);
	else
		fuzz_check_error(st, &err, FUZZ_NAME, buf, len);
	attn_array_free(&a);

	/* The bundle reader always reads Q, K and V as finite, as the CLI
	 * asks; the flags still reach it, and it must override them for
	 * the mask and the bias. */
	(void)attn_is_bundle(buf, len);
	memset(&err, 0, sizeof err);
	st = attn_read_bundle(FUZZ_NAME, buf, len, flags | ATTN_READ_FINITE,
	    &b, &err);
	if (st == ATTN_OK) {
		check_bundle(&b, len);
		run_bundle(&b, data[0]);
	} else {
		fuzz_check_error(st, &err, FUZZ_NAME, buf, len);
	}
	attn_bundle_free(&b);

	memset(&err, 0, sizeof err);
	st = attn_read_layer(FUZZ_NAME, buf, len, &layer, &err);
	if (st == ATTN_OK)
		check_layer(&layer, len);
	else
		fuzz_check_error(st, &err, FUZZ_NAME, buf, len);
	attn_layer_free(&layer);
	return 0;
}
