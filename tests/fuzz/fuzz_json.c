/*
 * fuzz_json.c - libFuzzer harness for the JSON reader: attn_read_array
 * with ATTN_FMT_JSON and attn_read_bundle on the same bytes.
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

	if (b->q.ndim > 3 || b->k.ndim > 3 || b->v.ndim > 3)
		return;
	if ((b->q.ndim == 3) != (b->k.ndim == 3) ||
	    (b->q.ndim == 3) != (b->v.ndim == 3))
		return;
	batches = b->q.ndim == 3 ? b->q.shape[0] : 1;
	if (b->q.ndim == 3 && (b->k.shape[0] != batches ||
	    b->v.shape[0] != batches))
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

	memset(&in, 0, sizeof in);
	in.batches = batches;
	in.q = attn_array_matrix(&b->q);
	in.k = attn_array_matrix(&b->k);
	in.v = attn_array_matrix(&b->v);
	if (b->mask.ndim != 0) {
		in.mask = attn_array_matrix(&b->mask);
		in.mask_blocks = blocks_of(&b->mask);
	}
	if (b->bias.ndim != 0) {
		in.bias = attn_array_matrix(&b->bias);
		in.bias_blocks = blocks_of(&b->bias);
	}

	memset(&err, 0, sizeof err);
	rc = attn_plan(&cfg, &in, ATTN_STAGES_ALL, &bytes, &err);
	if (rc != ATTN_OK) {
		if (rc == ATTN_ERR_INTERNAL)
			fuzz_fail("attn_plan: internal error", &err);
		return;
	}
	if (bytes > FUZZ_MAX_STAGE_BYTES)
		return;
	memset(&err, 0, sizeof err);
	rc = attn_run(&cfg, &in, ATTN_STAGES_ALL, &st, &err);
	if (rc == ATTN_OK)
		touch_stages(&st);
	else if (rc == ATTN_ERR_INTERNAL)
		fuzz_fail("attn_run: internal error", &err);
	else if (rc == ATTN_ERR_USAGE)
		fuzz_fail("attn_run: usage error after attn_plan passed",
		    &err);
	attn_stages_free(&st);
}

static void
check_bundle(const struct attn_bundle *b, size_t len)
{
	const struct attn_array *arr[2] = { &b->q, &b->k };
	const struct attn_labels *lab[2] = { &b->query_labels,
	    &b->key_labels };
	size_t i;

	fuzz_check_array(&b->q, ATTN_READ_FINITE, len);
	fuzz_check_array(&b->k, ATTN_READ_FINITE, len);
	fuzz_check_array(&b->v, ATTN_READ_FINITE, len);
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

/* UBSan reports with a stack, also when a reproducer is run by hand. */
const char *__ubsan_default_options(void);

const char *
__ubsan_default_options(void)
{
	return "print_stacktrace=1";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct attn_array a;
	struct attn_bundle b;
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
	return 0;
}
