/*
 * check_paged.c - attn_paged_gather (lib/paged.c): each batch's keys in
 * use come from the pages its row names, in order, from its leftpad on,
 * zeros after them, the counts what is left after the leftpad; a page no
 * row names and the rows not in use are never read (they hold nan
 * here); FlashInfer's lists gather what the block table naming the same
 * pages gathers; a table that does not fit, or a key in use that is not
 * finite, is a data error that allocates nothing; what it allocates is
 * charged to the memory account and given back by attn_matrix_free.
 */
#include <math.h>
#include <string.h>

#include "attn.h"
#include "attn_io.h"
#include "attn_private.h"
#include "suites.h"
#include "testutil.h"

/* 6 pages of 3 keys, 2 columns: page p's row r holds 100p + 10r + c
 * where a key is in use, nan elsewhere. */
#define PAGES 6
#define PS 3
#define COLS 2

static double kbuf[PAGES * PS * COLS], vbuf[PAGES * PS * COLS];
static double table2x3[2 * 3];

/* Batch 1: pages 4, 1 (then -1), 5 keys from row 1: rows 1..4 of its
 * logical keys.  Batch 2: pages 2, 0, 3, 7 keys from row 0. */
static const size_t used[2] = { 5, 7 }, leftpad[2] = { 1, 0 };
static const size_t rows_of[2][3] = { { 4, 1, 9 }, { 2, 0, 3 } };

static struct attn_matrix
mat(double *data, size_t rows, size_t cols)
{
	struct attn_matrix m;

	m.data = data;
	m.rows = rows;
	m.cols = cols;
	m.stride = cols;
	return m;
}

/* The caches and the block table of the case: only the rows in use
 * hold numbers. */
static void
fill(void)
{
	size_t b, r, c, i;

	for (i = 0; i < PAGES * PS * COLS; i++)
		kbuf[i] = vbuf[i] = NAN;
	for (b = 0; b < 2; b++) {
		for (i = 0; i < 3; i++)
			table2x3[b * 3 + i] = i < 2 || b == 1 ?
			    (double)rows_of[b][i] : -1.0;
		for (r = leftpad[b]; r < used[b]; r++) {
			const size_t page = rows_of[b][r / PS];

			for (c = 0; c < COLS; c++) {
				const size_t at = (page * PS + r % PS) * COLS + c;

				kbuf[at] = (double)(100 * page + 10 * (r % PS) + c);
				vbuf[at] = -kbuf[at];
			}
		}
	}
}

static void
base(struct attn_paged *pg)
{
	memset(pg, 0, sizeof *pg);
	pg->page_size = PS;
	pg->used_k = used;
	pg->leftpad = leftpad;
}

/* k and v as the case wants them: S = 3 pages of 3 a batch. */
static void
check_gathered(const struct attn_matrix *k, const struct attn_matrix *v,
    const size_t *got)
{
	size_t b, j, c;

	ck_assert_uint_eq(k->rows, 2 * 3 * PS);
	ck_assert_uint_eq(v->rows, 2 * 3 * PS);
	for (b = 0; b < 2; b++) {
		ck_assert_uint_eq(got[b], used[b] - leftpad[b]);
		for (j = 0; j < 3 * PS; j++)
			for (c = 0; c < COLS; c++) {
				const size_t r = leftpad[b] + j;
				const double want = j < got[b] ? (double)(100 *
				    rows_of[b][r / PS] + 10 * (r % PS) + c) : 0.0;

				ck_assert(*attn_at(k, b * 3 * PS + j, c) == want);
				ck_assert(*attn_at(v, b * 3 * PS + j, c) ==
				    (j < got[b] ? -want : 0.0));
			}
	}
}

/* pg gathers what the case wants, charging the memory account and
 * giving it all back when freed. */
static void
gathers_the_case(const struct attn_paged *pg)
{
	const struct attn_matrix kc = mat(kbuf, PAGES * PS, COLS);
	const struct attn_matrix vc = mat(vbuf, PAGES * PS, COLS);
	struct attn_memory *m = attn_memory_new(1u << 20, "TEST");
	struct attn_matrix k, v;
	struct attn_error err;
	size_t got[2];

	attn_memory_use(m);
	ck_assert_int_eq(attn_paged_gather(pg, 2, &kc, &vc, &k, &v, got,
	    &err), ATTN_OK);
	ck_assert_uint_gt(attn_memory_held(m), 0);
	check_gathered(&k, &v, got);
	attn_matrix_free(&k);
	attn_matrix_free(&v);
	ck_assert_uint_eq(attn_memory_held(m), 0);
	attn_memory_use(NULL);
	attn_memory_free(m);
}

START_TEST(a_block_table_gathers_the_keys_in_use_alone)
{
	struct attn_paged pg;

	fill();
	base(&pg);
	pg.block_table = mat(table2x3, 2, 3);
	gathers_the_case(&pg);
}
END_TEST

START_TEST(flashinfer_lists_gather_what_the_block_table_does)
{
	/* batch 1's two pages, batch 2's three, as one list; batch 1's
	 * last page holds 2 keys, batch 2's 1 */
	double indptr[3] = { 0, 2, 5 }, indices[5] = { 4, 1, 2, 0, 3 };
	double last[2] = { 2, 1 };
	struct attn_paged pg;

	fill();
	base(&pg);
	pg.used_k = NULL;
	pg.indptr = mat(indptr, 1, 3);
	pg.indices = mat(indices, 5, 1);
	pg.last_page_len = mat(last, 1, 2);
	gathers_the_case(&pg);
}
END_TEST

/* What a broken table or cache is told, by the words that say why. */
static void
refused(const struct attn_paged *pg, const double *kdata, const char *why)
{
	const struct attn_matrix kc = mat((double *)kdata, PAGES * PS, COLS);
	const struct attn_matrix vc = mat(vbuf, PAGES * PS, COLS);
	struct attn_matrix k, v;
	struct attn_error err;
	size_t got[2];

	memset(&err, 0, sizeof err);
	ck_assert_int_eq(attn_paged_gather(pg, 2, &kc, &vc, &k, &v, got,
	    &err), ATTN_ERR_DATA);
	ck_assert_ptr_null(k.data);
	ck_assert_ptr_null(v.data);
	ck_assert_msg(strstr(err.msg, why) != NULL, "'%s' lacks '%s'",
	    err.msg, why);
}

START_TEST(a_table_that_does_not_fit_is_a_data_error)
{
	static double kcopy[PAGES * PS * COLS];
	double indptr[3] = { 0, 2, 5 }, indices[5] = { 4, 1, 2, 0, 3 };
	double last[2] = { 2, 4 };
	size_t more[2] = { 10, 7 }, pad[2] = { 6, 0 };
	struct attn_paged pg;

	fill();
	base(&pg);
	pg.block_table = mat(table2x3, 2, 3);
	table2x3[1] = PAGES;
	refused(&pg, kbuf, "names page 6 for batch 1's keys (its entry 2)");
	table2x3[1] = 0.5;
	refused(&pg, kbuf, "names page 0.5");
	fill();
	pg.used_k = more;
	refused(&pg, kbuf, "batch 1 uses 10 keys but its row of 3 pages of 3 "
	    "holds 9");
	pg.used_k = used;
	pg.leftpad = pad;
	refused(&pg, kbuf, "batch 1's keys start at row 6 (its leftpad) but "
	    "it uses only 5");
	pg.leftpad = leftpad;
	pg.block_table = mat(table2x3, 1, 6);
	refused(&pg, kbuf, "the block table has 1 row but there are 2 batches");
	/* a nan in a key in use: batch 2's row 0, on page 2 */
	pg.block_table = mat(table2x3, 2, 3);
	memcpy(kcopy, kbuf, sizeof kcopy);
	kcopy[2 * PS * COLS + 1] = NAN;
	refused(&pg, kcopy, "the K cache's page 2, its row 0 (from 0), holds "
	    "nan in a key in use of batch 2");
	/* FlashInfer's: a last page past the page size */
	base(&pg);
	pg.used_k = NULL;
	pg.indptr = mat(indptr, 1, 3);
	pg.indices = mat(indices, 1, 5);
	pg.last_page_len = mat(last, 1, 2);
	refused(&pg, kbuf, "batch 2's last page holds 4 keys, but it has 3 "
	    "pages of 3");
	indptr[1] = 6;
	refused(&pg, kbuf, "kv_indptr: offset 2 is 6, after 0");
}
END_TEST

Suite *
paged_suite(void)
{
	Suite *s = suite_create("paged");
	TCase *tc = tcase_create("gather");

	tcase_add_test(tc, a_block_table_gathers_the_keys_in_use_alone);
	tcase_add_test(tc, flashinfer_lists_gather_what_the_block_table_does);
	tcase_add_test(tc, a_table_that_does_not_fit_is_a_data_error);
	suite_add_tcase(s, tc);
	return s;
}
