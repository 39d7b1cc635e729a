/*
 * check_memory.c - the memory account (lib/memory.c): what every reader
 * and a run allocate is charged to it and given back whole when freed,
 * on success and on every kind of failure; an allocation that would pass
 * the limit is refused with a message that names it, cJSON's tree
 * included; the threads of a pool charge their caller's account; and
 * the count stays exact when threads allocate at once.  Blocks
 * (attn_block_*): large ones in 2 MiB-aligned mappings that keep their
 * bytes through every resize, moved when they cannot grow in place.
 */
#define _GNU_SOURCE	/* MAP_FIXED_NOREPLACE */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"
#include "ref.h"
#include "suites.h"
#include "testutil.h"

/* An account without a limit, in use on this thread. */
static struct attn_memory *
account(size_t limit)
{
	struct attn_memory *m = attn_memory_new(limit, "TEST_LIMIT");

	ck_assert_ptr_nonnull(m);
	attn_memory_use(m);
	return m;
}

static void
account_done(struct attn_memory *m)
{
	attn_memory_use(NULL);
	attn_memory_free(m);
}

/* ---------------------------------------------------------------- readers */

/* A text, how it is read (a: attn_read_array, b: a bundle, l: a layer),
 * the format and flags, and whether it reads. */
struct read_case {
	const char *text;
	char reader;
	enum attn_format fmt;
	unsigned flags;
	int ok;
};

static const struct read_case read_cases[] = {
	/* JSON: plain, through the tree, refused before and after both */
	{ "[[1, 2], [3, 4]]", 'a', ATTN_FMT_JSON, ATTN_READ_FINITE, 1 },
	{ "[[1, \"-inf\"], [2, 3]]", 'a', ATTN_FMT_JSON, ATTN_READ_BIAS, 1 },
	{ "[[true, false, 1]]", 'a', ATTN_FMT_JSON, ATTN_READ_BOOL, 1 },
	{ "[[1, 2], [3]]", 'a', ATTN_FMT_JSON, ATTN_READ_FINITE, 0 },
	{ "[[1, \"x\"], [3, 4]]", 'a', ATTN_FMT_JSON, ATTN_READ_FINITE, 0 },
	{ "[[1, 2], [3, 4]] x", 'a', ATTN_FMT_JSON, ATTN_READ_FINITE, 0 },
	{ "[[1, 2], [3, 01]]", 'a', ATTN_FMT_JSON, ATTN_READ_FINITE, 0 },
	{ "[[1, 0.5], [2, 3]]", 'a', ATTN_FMT_JSON, ATTN_READ_BOOL, 0 },
	{ "{\"Q\": [[1]], \"K\": [[1]], \"V\": [[1]], \"labels\": {\"query\": "
	    "[\"a\"], \"key\": [\"b\"]}}", 'b', ATTN_FMT_JSON, 0, 1 },
	{ "{\"Q\": [[1]], \"K\": [[1]], \"V\": [[1]], \"labels\": {\"query\": "
	    "[\"a\", \"c\"]}}", 'b', ATTN_FMT_JSON, 0, 0 },
	{ "{\"Q\": [[1]], \"K\": [[1]], \"mask\": [[true]], \"bias\": "
	    "[[\"-inf\"]], \"V\": [[1, 2]]}", 'b', ATTN_FMT_JSON, 0, 1 },
	{ "{\"X\": [[1, 0]], \"proj\": {\"W_Q\": [[1], [2]], \"W_K\": [[1], "
	    "[2]], \"W_V\": [[1], [2]]}}", 'b', ATTN_FMT_JSON, 0, 1 },
	{ "{\"W_Q\": [[1]], \"W_K\": [[1]], \"W_V\": [[1]], \"b_Q\": [2]}", 'l',
	    ATTN_FMT_JSON, 0, 1 },
	{ "{\"W_Q\": [[1]], \"W_K\": [[1]], \"W_V\": [[1]], \"b_O\": [2]}", 'l',
	    ATTN_FMT_JSON, 0, 0 },
	/* JSON Lines */
	{ "[1, 2]\n[3, 4]\n[5, 6]\n", 'a', ATTN_FMT_JSONL, ATTN_READ_FINITE,
	    1 },
	{ "[1, 2]\n[3]\n", 'a', ATTN_FMT_JSONL, ATTN_READ_FINITE, 0 },
	/* text: labels of rows and columns, quoted, and what goes wrong */
	{ "a,b\n1,2\n3,4\n", 'a', ATTN_FMT_CSV, ATTN_READ_FINITE, 1 },
	{ "x,1,2\ny,3,4\nz,5,6\n", 'a', ATTN_FMT_CSV, ATTN_READ_FINITE, 1 },
	{ ",\"c 1\",\"c\"\"2\"\n\"r 1\",1,2\n\"r\"\"2\",3,4\n", 'a',
	    ATTN_FMT_CSV, ATTN_READ_FINITE, 1 },
	{ "x,1,2\ny,3\n", 'a', ATTN_FMT_CSV, ATTN_READ_FINITE, 0 },
	{ "x,1,2\ny,3,nan\n", 'a', ATTN_FMT_CSV, ATTN_READ_FINITE, 0 },
	{ "h\n1\n2\n", 'a', ATTN_FMT_CSV, ATTN_READ_FINITE, 1 },
	{ "0,1\n5,6\n7,8\n", 'a', ATTN_FMT_CSV, ATTN_READ_FINITE, 1 },
	{ "1\t2\n3\t4\n", 'a', ATTN_FMT_TSV, ATTN_READ_FINITE, 1 },
	{ "1 2\n3 4\n", 'a', ATTN_FMT_TEXT, ATTN_READ_FINITE, 1 },
	{ "1 \xE2\x88\x92" "2\n", 'a', ATTN_FMT_TEXT, ATTN_READ_FINITE, 0 },
	/* printed arrays */
	{ "array([[1., 2.],\n       [3., 4.]])", 'a', ATTN_FMT_REPR,
	    ATTN_READ_FINITE, 1 },
	{ "[[1.000000000000000000000000000000000000000000000000000000000000000"
	    "00001 2.]]", 'a', ATTN_FMT_REPR, ATTN_READ_FINITE, 1 },
	{ "tensor([[1., 2.],\n        [3.]])", 'a', ATTN_FMT_REPR,
	    ATTN_READ_FINITE, 0 },
	/* code as a book writes it: comments naming the rows, or one not */
	{ "x = torch.tensor(\n  [[1., 2.], # a\n   [3., 4.]]) # b\n", 'a',
	    ATTN_FMT_REPR, ATTN_READ_FINITE, 1 },
	{ "x = np.array([[1., 2.], # a\n  [3., 4.]])\n", 'a', ATTN_FMT_REPR,
	    ATTN_READ_FINITE, 1 },
	{ "x = np.array([[1., 2.], # a\n  [3., 4.]]) # \x01\n", 'a',
	    ATTN_FMT_REPR, ATTN_READ_FINITE, 0 },
};

#define NREAD (int)(sizeof read_cases / sizeof read_cases[0])

/* Read rc under an account: what it holds is charged, and freeing it,
 * or failing, gives back everything. */
START_TEST(reading_and_freeing_leaves_the_account_empty)
{
	const struct read_case *rc = &read_cases[_i];
	size_t len = strlen(rc->text);
	char *buf = malloc(len);
	struct attn_memory *m;
	struct attn_array a;
	struct attn_bundle b;
	struct attn_layer l;
	struct attn_error err;
	enum attn_status st;
	size_t held;

	ck_assert_ptr_nonnull(buf);
	memcpy(buf, rc->text, len);
	m = account(SIZE_MAX);
	if (rc->reader == 'a')
		st = attn_read_array("in", buf, len, rc->fmt, rc->flags, &a,
		    &err);
	else if (rc->reader == 'b')
		st = attn_read_bundle("in", buf, len, rc->flags, &b, &err);
	else
		st = attn_read_layer("in", buf, len, &l, &err);
	held = attn_memory_held(m);
	ck_assert_msg((st == ATTN_OK) == rc->ok, "%s: status %d (%s)",
	    rc->text, (int)st, err.msg);
	if (st == ATTN_OK) {
		ck_assert_msg(held > 0, "%s: nothing charged", rc->text);
		if (rc->reader == 'a')
			attn_array_free(&a);
		else if (rc->reader == 'b')
			attn_bundle_free(&b);
		else
			attn_layer_free(&l);
	} else {
		ck_assert_msg(held == 0, "%s: failed holding %zu bytes",
		    rc->text, held);
	}
	ck_assert_msg(attn_memory_held(m) == 0, "%s: %zu bytes left charged",
	    rc->text, attn_memory_held(m));
	account_done(m);
	free(buf);
}
END_TEST

/* A .npy of n little-endian doubles, the last one v. */
static char *
npy_of(size_t n, double v, size_t *len)
{
	char header[128], *f;
	size_t hl, k;
	double x;

	hl = (size_t)snprintf(header, sizeof header, "{'descr': '<f8', "
	    "'fortran_order': False, 'shape': (%zu,), }", n);
	header[hl++] = '\n';
	*len = 10 + hl + 8 * n;
	f = malloc(*len);
	ck_assert_ptr_nonnull(f);
	memcpy(f, "\x93NUMPY\x01\x00", 8);
	f[8] = (char)(hl & 0xFF);
	f[9] = (char)(hl >> 8);
	memcpy(f + 10, header, hl);
	for (k = 0; k < n; k++) {
		x = k + 1 == n ? v : (double)k;
		memcpy(f + 10 + hl + 8 * k, &x, 8);
	}
	return f;
}

START_TEST(npy_read_and_freed_leaves_the_account_empty)
{
	struct attn_memory *m = account(SIZE_MAX);
	struct attn_array a;
	struct attn_error err;
	size_t len;
	char *good = npy_of(100, 1.0, &len), *bad;

	ck_assert_int_eq(attn_read_array("a.npy", good, len, ATTN_FMT_NPY,
	    ATTN_READ_FINITE, &a, &err), ATTN_OK);
	ck_assert_uint_ge(attn_memory_held(m), 800);
	attn_array_free(&a);
	ck_assert_uint_eq(attn_memory_held(m), 0);
	bad = npy_of(100, NAN, &len);
	ck_assert_int_eq(attn_read_array("b.npy", bad, len, ATTN_FMT_NPY,
	    ATTN_READ_FINITE, &a, &err), ATTN_ERR_DATA);
	ck_assert_uint_eq(attn_memory_held(m), 0);
	free(good);
	free(bad);
	account_done(m);
}
END_TEST

/* A labelled CSV of rows x 4, large enough to be read in chunks; a row
 * of one value too few at short, and a word at word (0: none). */
static char *
chunked_csv(size_t rows, size_t short_row, size_t word_row, size_t *len)
{
	char *t = malloc(40 * rows + 1), *p = t;
	size_t i;

	ck_assert_ptr_nonnull(t);
	for (i = 1; i <= rows; i++)
		p += sprintf(p, "t%zu,%zu.5,2,%s%s\n", i, i,
		    i == word_row ? "x" : "3", i == short_row ? "" : ",4");
	*len = (size_t)(p - t);
	return t;
}

START_TEST(text_read_in_chunks_takes_the_same_for_any_thread_count)
{
	static const size_t threads[] = { 1, 2, 4 };
	struct attn_memory *m = account(SIZE_MAX);
	struct attn_error err, first;
	struct attn_array a;
	size_t len, blen, k, held = 0;
	char *good = chunked_csv(30000, 0, 0, &len);
	char *bad = chunked_csv(30000, 20000, 9000, &blen);
	enum attn_status st;

	ck_assert_uint_gt(len, 512u << 10);
	for (k = 0; k < sizeof threads / sizeof threads[0]; k++) {
		st = attn_read_array_threads("g.csv", good, len,
		    ATTN_FMT_CSV, ATTN_READ_FINITE, threads[k], &a, &err);
		ck_assert_msg(st == ATTN_OK, "%s", err.msg);
		ck_assert_uint_eq(a.shape[0], 30000);
		ck_assert(a.data[4 * 29999] == 30000.5);
		ck_assert_str_eq(a.row_labels.names[29999], "t30000");
		if (k == 0)
			held = attn_memory_held(m);
		ck_assert_uint_eq(attn_memory_held(m), held);
		attn_array_free(&a);
		ck_assert_uint_eq(attn_memory_held(m), 0);

		/* The word at row 9000 comes first, in a chunk before the
		 * short row's. */
		ck_assert_int_eq(attn_read_array_threads("b.csv", bad, blen,
		    ATTN_FMT_CSV, ATTN_READ_FINITE, threads[k], &a, &err),
		    ATTN_ERR_DATA);
		ck_assert_uint_eq(err.line, 9000);
		ck_assert_ptr_nonnull(strstr(err.msg, "'x'"));
		if (k == 0)
			first = err;
		ck_assert_str_eq(err.msg, first.msg);
		ck_assert_uint_eq(err.col, first.col);
		ck_assert_uint_eq(attn_memory_held(m), 0);
	}
	free(good);
	free(bad);
	account_done(m);
}
END_TEST

/* ---------------------------------------------------------------- limits */

/* "[[1,2,...]]" of n numbers; with a bias's "-inf" first, not plain. */
static char *
row_text(size_t n, int word)
{
	char *t = malloc(16 * n + 16), *p = t;
	size_t k;

	ck_assert_ptr_nonnull(t);
	p += sprintf(p, "[[%s", word ? "\"-inf\"" : "0");
	for (k = 1; k < n; k++)
		p += sprintf(p, ", %zu", k % 1000);
	strcpy(p, "]]");
	return t;
}

/* Past the limit a read is refused, by name, and gives everything back;
 * cJSON's tree is charged too: the same numbers fit as a plain array
 * (8 bytes each) and not through the tree (a node each). */
START_TEST(a_read_past_the_limit_is_refused_naming_it)
{
	const size_t n = 2000, limit = 64 * 1024;
	char *plain = row_text(n, 0), *word = row_text(n, 1);
	struct attn_memory *m = account(limit);
	struct attn_array a;
	struct attn_error err;

	ck_assert_int_eq(attn_read_array("p.json", plain, strlen(plain),
	    ATTN_FMT_JSON, ATTN_READ_BIAS, &a, &err), ATTN_OK);
	ck_assert_uint_le(attn_memory_held(m), limit);
	attn_array_free(&a);
	ck_assert_int_eq(attn_read_array("w.json", word, strlen(word),
	    ATTN_FMT_JSON, ATTN_READ_BIAS, &a, &err), ATTN_ERR_NOMEM);
	ck_assert_str_eq(err.file, "w.json");
	ck_assert_str_eq(err.msg, "input too large: reading and parsing it "
	    "takes more than TEST_LIMIT (65536 bytes)");
	ck_assert_uint_eq(attn_memory_held(m), 0);
	/* text too, and a limit below the numbers themselves */
	account_done(m);
	m = account(4096);
	plain[strlen(plain) - 2] = '\0';
	ck_assert_int_eq(attn_read_array("p.csv", plain + 2,
	    strlen(plain + 2), ATTN_FMT_CSV, 0, &a, &err), ATTN_ERR_NOMEM);
	ck_assert_str_eq(err.msg, "input too large: reading and parsing it "
	    "takes more than TEST_LIMIT (4096 bytes)");
	ck_assert_uint_eq(attn_memory_held(m), 0);
	account_done(m);
	free(plain);
	free(word);
}
END_TEST

/* ---------------------------------------------------------------- runs */

/* A run of every stage, by each kernel, with a mask that leaves a row
 * without keys, sinks, dO, and a layer with RoPE: charged while the
 * stages are held, nothing once freed; and refused, naming the limit,
 * when the stages do not fit. */
KERNEL_TEST(a_run_is_charged_and_given_back, ATTN_STAGES_ALL)
{
	static const double mask_rows[] = { 0, 0, 0, 1, 1, 1, 1, 1, 1 };
	struct ref_rng rng;
	struct attn_config cfg;
	struct attn_inputs in;
	struct attn_stages st;
	struct attn_error err;
	struct attn_matrix x, q, k, v, mask, d_out, w;
	struct attn_memory *m;
	unsigned want = ATTN_STAGES_ALL;
	size_t held, plan;

	ref_rng_seed(&rng, 7);
	q = matrix_random(&rng, 3, 4, -1, 1);
	k = matrix_random(&rng, 3, 4, -1, 1);
	v = matrix_random(&rng, 3, 4, -1, 1);
	x = matrix_random(&rng, 3, 4, -1, 1);
	w = matrix_random(&rng, 4, 4, -1, 1);
	d_out = matrix_random(&rng, 3, 4, -1, 1);
	mask = matrix_from(3, 3, mask_rows);
	attn_config_init(&cfg);
	memset(&in, 0, sizeof in);
	in.batches = 1;
	in.q = q;
	in.k = k;
	in.v = v;
	in.mask = mask;
	in.mask_blocks = 1;
	if (kernel_computes(kernel, ATTN_STAGES_GRAD)) {
		in.d_out = d_out;
		want |= ATTN_STAGES_GRAD;
	}

	m = account(SIZE_MAX);
	ck_assert_int_eq(run_kernel(kernel, &cfg, &in, want, &st, &err),
	    ATTN_OK);
	ck_assert_uint_eq(st.nmasked, 1);
	held = attn_memory_held(m);
	ck_assert_int_eq(plan_kernel(kernel, &cfg, &in, want, &plan, &err),
	    ATTN_OK);
	ck_assert_msg(held > 0 && held <= 2 * plan + 4096, "held %zu, plan "
	    "%zu", held, plan);
	attn_stages_free(&st);
	ck_assert_uint_eq(attn_memory_held(m), 0);

	/* the passes: a layer and RoPE (no bias, so not the bias as
	 * read) */
	in.q = x;
	in.k = x;
	in.proj.w_q = w;
	in.proj.w_k = w;
	in.proj.w_v = w;
	in.proj.w_o = w;
	in.d_out = (struct attn_matrix){ 0, 0, 0, NULL };
	cfg.rope = 1;
	ck_assert_int_eq(run_kernel(kernel, &cfg, &in, ATTN_STAGES_ALL |
	    (ATTN_STAGES_PROJ & ~ATTN_STAGE_BIT(ATTN_STAGE_BIAS)), &st, &err),
	    ATTN_OK);
	ck_assert_uint_gt(attn_memory_held(m), 0);
	attn_stages_free(&st);
	ck_assert_uint_eq(attn_memory_held(m), 0);
	account_done(m);

	/* past a limit */
	m = account(256);
	ck_assert_int_eq(run_kernel(kernel, &cfg, &in, ATTN_STAGES_ALL, &st,
	    &err), ATTN_ERR_NOMEM);
	ck_assert_msg(strstr(err.msg, "would take more memory than TEST_LIMIT "
	    "(256 bytes) allows") != NULL, "%s", err.msg);
	ck_assert_uint_eq(attn_memory_held(m), 0);
	account_done(m);

	attn_matrix_free(&q);
	attn_matrix_free(&k);
	attn_matrix_free(&v);
	attn_matrix_free(&x);
	attn_matrix_free(&w);
	attn_matrix_free(&d_out);
	attn_matrix_free(&mask);
}

/* ---------------------------------------------------------------- threads */

#define TASKS 64
#define BLOCKS 200

struct pool_ctx {
	struct attn_memory *want;
	void *kept[TASKS];
	int wrong_account;
};

/* Each task charges its blocks and gives back all but one. */
static void
pool_task(void *arg, size_t worker, size_t t)
{
	struct pool_ctx *c = arg;
	void *p[BLOCKS];
	size_t i;

	(void)worker;
	if (attn_memory_current() != c->want)
		c->wrong_account = 1;
	for (i = 0; i < BLOCKS; i++)
		p[i] = attn_mem_alloc(24 + i % 100);
	for (i = 1; i < BLOCKS; i++)
		attn_mem_free(p[i], 24 + i % 100);
	c->kept[t] = p[0];
}

/* Workers charge the account of the thread that runs the pool, at the
 * same time, and the count is exact. */
START_TEST(pool_workers_charge_the_callers_account)
{
	struct attn_pool_job job;
	struct pool_ctx c;
	struct attn_memory *m = account(SIZE_MAX);
	size_t t;

	memset(&c, 0, sizeof c);
	c.want = m;
	memset(&job, 0, sizeof job);
	job.tasks = TASKS;
	job.threads = 4;
	job.task = pool_task;
	job.ctx = &c;
	attn_pool_run(&job);
	ck_assert_int_eq(c.wrong_account, 0);
	ck_assert_uint_eq(attn_memory_held(m), TASKS * attn_mem_cost(24));
	for (t = 0; t < TASKS; t++)
		attn_mem_free(c.kept[t], 24);
	ck_assert_uint_eq(attn_memory_held(m), 0);
	account_done(m);
}
END_TEST

/* What a caller charges for its own buffers counts against the limit. */
START_TEST(a_callers_charges_count_against_the_limit)
{
	struct attn_memory *m = account(1000);

	ck_assert_int_eq(attn_memory_charge(m, 600), 0);
	ck_assert_int_eq(attn_memory_charge(m, 600), -1);
	ck_assert_uint_eq(attn_memory_held(m), 600);
	ck_assert_ptr_null(attn_mem_alloc(500));
	ck_assert_int_eq(attn_mem_refused(), 1);
	attn_memory_release(m, 600);
	ck_assert_uint_eq(attn_memory_held(m), 0);
	ck_assert_uint_eq(attn_memory_limit(m), 1000);
	ck_assert_str_eq(attn_memory_what(m), "TEST_LIMIT");
	account_done(m);
}
END_TEST

/* ---------------------------------------------------------------- blocks */

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)

/* Fill n bytes of p with a pattern from seed; whether p holds it. */
static void
fill(unsigned char *p, size_t n, unsigned seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (unsigned char)(i * 131 + seed);
}

static int
holds(const unsigned char *p, size_t n, unsigned seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != (unsigned char)(i * 131 + seed))
			return 0;
	return 1;
}

static int
all_zero(const unsigned char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != 0)
			return 0;
	return 1;
}

/* What a block takes: itself below 256 KiB, whole 2 MiB pages from it. */
START_TEST(a_block_takes_whole_huge_pages_from_256_kib)
{
	ck_assert_uint_eq(attn_block_size(0), 0);
	ck_assert_uint_eq(attn_block_size(256 * KIB - 1), 256 * KIB - 1);
	ck_assert_uint_eq(attn_block_size(256 * KIB), 2 * MIB);
	ck_assert_uint_eq(attn_block_size(2 * MIB), 2 * MIB);
	ck_assert_uint_eq(attn_block_size(2 * MIB + 1), 4 * MIB);
	ck_assert_uint_eq(attn_block_size(SIZE_MAX), SIZE_MAX);
	/* the account charges the same */
	ck_assert_uint_eq(attn_mem_cost(3 * MIB), 4 * MIB);
	ck_assert_uint_eq(attn_mem_cost(100), 112);
}
END_TEST

/* A large block is 2 MiB-aligned (a huge page can back it); zalloc's is
 * zeros; small and large blocks alike keep their bytes through every
 * resize, across 256 KiB both ways; with spares kept (case 1) too, where
 * blocks from 64 KiB are mappings and freed ones are taken again. */
START_TEST(blocks_keep_their_bytes_through_every_resize)
{
	static const size_t sizes[] = {
		100, 200 * KIB, 300 * KIB, 3 * MIB, 5 * MIB, 2 * MIB,
		700 * KIB, 100 * KIB, 6 * MIB, 10,
	};
	unsigned char *p, *q;
	size_t i, n;

	attn_block_spares(_i);
	p = attn_block_zalloc(3 * MIB);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq((uintptr_t)p % (2 * MIB), 0);
	ck_assert(all_zero(p, 3 * MIB));
	attn_block_free(p);
	ck_assert(all_zero(p = attn_block_zalloc(1000), 1000));
	attn_block_free(p);

	n = sizes[0];
	p = attn_block_alloc(n);
	fill(p, n, 7);
	for (i = 1; i < sizeof sizes / sizeof sizes[0]; i++) {
		const size_t keep = n < sizes[i] ? n : sizes[i];

		q = attn_block_realloc(p, n, sizes[i]);
		ck_assert_msg(q != NULL && holds(q, keep, 7),
		    "%zu -> %zu bytes", n, sizes[i]);
		if (sizes[i] >= 256 * KIB)
			ck_assert_uint_eq((uintptr_t)q % (2 * MIB), 0);
		p = q;
		n = sizes[i];
		fill(p, n, 7);
	}
	attn_block_free(p);
	attn_block_free(NULL);
	attn_block_spares(0);
}
END_TEST

/* With spares kept, a large block freed is taken again by the next
 * block of the same length (its pages already there), zeroed as far as
 * zalloc asks; a block of another length maps afresh, zeros too.
 * Without (attn's one run), none is kept. */
START_TEST(a_freed_block_is_taken_again_zeroed)
{
	unsigned char *p, *q;

	p = attn_block_alloc(7 * MIB);
	fill(p, 7 * MIB, 5);
	attn_block_free(p);
	ck_assert_ptr_ne(q = attn_block_alloc(7 * MIB), NULL);
	ck_assert(all_zero(q, 7 * MIB));	/* fresh, not p kept */
	attn_block_free(q);
	attn_block_spares(1);
	/* every spare given back by a length none has, then that one */
	attn_block_free(attn_block_alloc(7 * MIB));
	p = attn_block_zalloc(300 * KIB);
	ck_assert_ptr_nonnull(p);
	fill(p, 2 * MIB, 9);
	attn_block_free(p);
	q = attn_block_zalloc(1 * MIB);
	ck_assert_ptr_eq(q, p);
	ck_assert(all_zero(q, 1 * MIB));
	fill(q, 2 * MIB, 9);
	attn_block_free(q);
	q = attn_block_alloc(300 * KIB);
	ck_assert_ptr_eq(q, p);
	attn_block_free(q);
	q = attn_block_zalloc(3 * MIB);
	ck_assert_ptr_nonnull(q);
	ck_assert(all_zero(q, 3 * MIB));
	attn_block_free(q);
	/* from 64 KiB, a mapping of whole pages, taken again likewise */
	p = attn_block_zalloc(100 * KIB);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq((uintptr_t)p % 4096, 0);
	fill(p, 100 * KIB, 9);
	attn_block_free(p);
	q = attn_block_zalloc(100 * KIB - 5);
	ck_assert_ptr_eq(q, p);
	ck_assert(all_zero(q, 100 * KIB - 5));
	attn_block_free(q);
	attn_block_spares(0);
}
END_TEST

/* A large block that cannot grow where it lies moves its pages to a
 * larger mapping, bytes kept; blocks freed in any order. */
START_TEST(a_block_hemmed_in_moves_to_grow)
{
	unsigned char *p = attn_block_alloc(2 * MIB), *q, *r;
	void *guard;

	ck_assert_ptr_nonnull(p);
	fill(p, 2 * MIB, 3);
	/* a page of our own right after the block, unless a mapping lies
	 * there already (the libraries' place decides): either way the
	 * block cannot grow where it is */
	guard = mmap(p + 2 * MIB, 4096, PROT_READ, MAP_PRIVATE |
	    MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	ck_assert_msg(guard == p + 2 * MIB || (guard == MAP_FAILED &&
	    errno == EEXIST), "cannot map past the block");
	r = attn_block_alloc(400 * KIB);
	q = attn_block_realloc(p, 2 * MIB, 5 * MIB);
	ck_assert_ptr_nonnull(q);
	ck_assert_ptr_ne(q, p);
	ck_assert(holds(q, 2 * MIB, 3));
	ck_assert(all_zero(q + 2 * MIB, 3 * MIB));
	ck_assert_uint_eq((uintptr_t)q % (2 * MIB), 0);
	if (guard != MAP_FAILED)
		munmap(guard, 4096);
	attn_block_free(r);
	attn_block_free(q);
}
END_TEST

/* Threads that map, grow, shrink and free blocks at once: each block
 * keeps its bytes and its own length, though the addresses one thread
 * gives back are another's next mapping.  Only the start and the end of
 * each block are written: the list, not the pages, is what is shared. */
#define BLOCK_TASKS 8
#define BLOCK_ROUNDS 60

static void
block_task(void *ctx, size_t worker, size_t t)
{
	int *wrong = ctx;
	size_t j, n, m;
	unsigned char *p, *q;

	(void)worker;
	for (j = 0; j < BLOCK_ROUNDS; j++) {
		n = 256 * KIB + (t * 7 + j) % 8 * 512 * KIB;
		m = j % 3 == 0 ? 300 * KIB : n + 3 * MIB;
		if ((p = attn_block_alloc(n)) == NULL) {
			wrong[t] = 1;
			return;
		}
		fill(p, 4096, (unsigned)(t + j));
		fill(p + n - 4096, 4096, (unsigned)(t + j + 1));
		if ((q = attn_block_realloc(p, n, m)) == NULL ||
		    !holds(q, 4096, (unsigned)(t + j)) ||
		    (m > n && !holds(q + n - 4096, 4096, (unsigned)(t + j +
		    1)))) {
			wrong[t] = 1;
			return;
		}
		q[m - 1] = 1;	/* the whole new length is mapped */
		attn_block_free(q);
	}
}

START_TEST(blocks_from_many_threads_keep_their_lengths)
{
	struct attn_pool_job job;
	int wrong[BLOCK_TASKS] = { 0 };
	size_t t;

	memset(&job, 0, sizeof job);
	job.tasks = BLOCK_TASKS;
	job.threads = 4;
	job.task = block_task;
	job.ctx = wrong;
	attn_pool_run(&job);
	for (t = 0; t < BLOCK_TASKS; t++)
		ck_assert_msg(wrong[t] == 0, "task %zu", t);
}
END_TEST

Suite *
memory_suite(void)
{
	Suite *s = suite_create("memory");
	TCase *tc = tcase_create("account");

	tcase_add_loop_test(tc, reading_and_freeing_leaves_the_account_empty,
	    0, NREAD);
	tcase_add_test(tc, npy_read_and_freed_leaves_the_account_empty);
	tcase_add_test(tc, text_read_in_chunks_takes_the_same_for_any_thread_count);
	tcase_add_test(tc, a_read_past_the_limit_is_refused_naming_it);
	tcase_add_kernel_test(tc, a_run_is_charged_and_given_back, 0, 1);
	tcase_add_test(tc, pool_workers_charge_the_callers_account);
	tcase_add_test(tc, a_callers_charges_count_against_the_limit);
	suite_add_tcase(s, tc);
	tc = tcase_create("blocks");
	tcase_add_test(tc, a_block_takes_whole_huge_pages_from_256_kib);
	tcase_add_loop_test(tc, blocks_keep_their_bytes_through_every_resize,
	    0, 2);
	tcase_add_test(tc, a_freed_block_is_taken_again_zeroed);
	tcase_add_test(tc, a_block_hemmed_in_moves_to_grow);
	tcase_add_test(tc, blocks_from_many_threads_keep_their_lengths);
	suite_add_tcase(s, tc);
	return s;
}
