/*
 * paged.c - paged KV caches (attn(1), --block-table, --kv-indptr,
 * --key-leftpad): the keys in use of each sequence, read from the pages
 * its row of the table names, gathered into the contiguous stacks that
 * struct attn_inputs takes, so that every kernel, the emulation and the
 * backward pass see the same keys.  Nothing else of the caches is read:
 * a page no row names, and the rows of a named page past the keys in use
 * or before the leftpad, may hold anything (a nan there changes nothing).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"

/* Which table names the pages (struct attn_paged). */
enum paged_form { FORM_TABLE, FORM_INDPTR, FORM_WHOLE };

/* The entries of a list given as a row or a column (1 x n or n x 1);
 * SIZE_MAX when m is neither. */
static size_t
list_len(const struct attn_matrix *m)
{
	return m->rows == 1 ? m->cols : m->cols == 1 ? m->rows : SIZE_MAX;
}

static double
list_at(const struct attn_matrix *m, size_t i)
{
	return m->rows == 1 ? *attn_at(m, 0, i) : *attn_at(m, i, 0);
}

/* x as a whole number from 0 below 2^53 (where every one is a double)
 * into *out; -1 when it is not one. */
static int
whole(double x, size_t *out)
{
	if (!(x >= 0.0 && x < 0x1p53 && floor(x) == x))
		return -1;
	*out = (size_t)x;
	return 0;
}

static enum attn_status
not_whole(const char *what, size_t i, double x, struct attn_error *err)
{
	char num[ATTN_NUM_MAX];

	attn_format_number(num, x, 0, 0);
	return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0, "%s: number %zu "
	    "is %s: pages, offsets and lengths are whole numbers from 0",
	    what, i + 1, num);
}

/* A list of want entries for n sequences (FlashInfer's), or a data
 * error naming it. */
static enum attn_status
list_fits(const struct attn_matrix *m, const char *what, size_t want,
    size_t n, const char *per, struct attn_error *err)
{
	if (list_len(m) == want)
		return ATTN_OK;
	return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0, "%s has %zux%zu "
	    "numbers but there %s %zu batch%s: give one list of %zu, %s",
	    what, m->rows, m->cols, n == 1 ? "is" : "are", n, n == 1 ? "" :
	    "es", want, per);
}

/*
 * The table of pg checked against n sequences: which form it is, and
 * *cap, the keys the longest row can hold (the S of the gathered
 * stacks).  FlashInfer's offsets are checked whole here (they say how
 * many pages each row has); each page index is checked where it is read.
 */
static enum attn_status
table_fits(const struct attn_paged *pg, size_t n, size_t pages,
    enum paged_form *form, size_t *cap, struct attn_error *err)
{
	size_t u, most = 0, at, prev = 0, nidx;
	enum attn_status st;

	if (pg->block_table.data != NULL) {
		*form = FORM_TABLE;
		if (pg->block_table.rows != n)
			return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
			    "the block table has %zu row%s but there %s %zu "
			    "batch%s: give a row of pages for each",
			    pg->block_table.rows, pg->block_table.rows == 1 ?
			    "" : "s", n == 1 ? "is" : "are", n, n == 1 ? "" :
			    "es");
		most = pg->block_table.cols;
	} else if (pg->indptr.data != NULL) {
		*form = FORM_INDPTR;
		if ((st = list_fits(&pg->indptr, "kv_indptr", n + 1, n,
		    "offsets into kv_indices", err)) != ATTN_OK ||
		    (st = list_fits(&pg->last_page_len, "kv_last_page_len", n,
		    n, "one a batch", err)) != ATTN_OK)
			return st;
		nidx = list_len(&pg->indices);
		if (nidx == SIZE_MAX)
			return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
			    "kv_indices has %zux%zu numbers: give one list of "
			    "page indices", pg->indices.rows, pg->indices.cols);
		for (u = 0; u <= n; u++) {
			if (whole(list_at(&pg->indptr, u), &at) != 0)
				return not_whole("kv_indptr", u,
				    list_at(&pg->indptr, u), err);
			if ((u > 0 && at < prev) || at > nidx)
				return attn_error_set(err, ATTN_ERR_DATA, NULL,
				    0, 0, "kv_indptr: offset %zu is %zu, after "
				    "%zu: the offsets never decrease and end "
				    "within kv_indices' %zu entries", u + 1, at,
				    prev, nidx);
			if (u > 0 && at - prev > most)
				most = at - prev;
			prev = at;
		}
	} else {
		*form = FORM_WHOLE;
		most = 1;
		if (pages != n)
			return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
			    "the caches hold %zu pages for %zu batches and "
			    "no table names them", pages, n);
	}
	if (attn_size_mul(most, pg->page_size, cap) != 0)
		return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
		    "%zu pages of %zu keys are too many to address", most,
		    pg->page_size);
	return ATTN_OK;
}

/* Sequence u's keys in use, its leftpad's rows included, into *len:
 * --seqused-k's (all it can hold without), or FlashInfer's full pages
 * and its last page's keys. */
static enum attn_status
seq_len(const struct attn_paged *pg, enum paged_form form, size_t u,
    size_t cap, size_t *len, struct attn_error *err)
{
	size_t from = 0, to = 0, last;

	if (form != FORM_INDPTR) {
		*len = pg->used_k != NULL ? pg->used_k[u] : cap;
		if (*len > cap)
			return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
			    "batch %zu uses %zu keys but its row of %zu page%s "
			    "of %zu holds %zu: the block table is too short "
			    "for the keys in use", u + 1, *len,
			    cap / pg->page_size, cap / pg->page_size == 1 ?
			    "" : "s", pg->page_size, cap);
		return ATTN_OK;
	}
	(void)whole(list_at(&pg->indptr, u), &from);
	(void)whole(list_at(&pg->indptr, u + 1), &to);
	if (whole(list_at(&pg->last_page_len, u), &last) != 0)
		return not_whole("kv_last_page_len", u,
		    list_at(&pg->last_page_len, u), err);
	if (to == from ? last != 0 : last < 1 || last > pg->page_size)
		return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
		    "kv_last_page_len: batch %zu's last page holds %zu "
		    "keys, but it has %zu page%s of %zu: give %s", u + 1, last,
		    to - from, to - from == 1 ? "" : "s", pg->page_size,
		    to == from ? "0" : "1 to the page size");
	*len = to == from ? 0 : (to - from - 1) * pg->page_size + last;
	return ATTN_OK;
}

/* The page of sequence u's j-th entry, checked against the caches'. */
static enum attn_status
page_of(const struct attn_paged *pg, enum paged_form form, size_t u,
    size_t j, size_t pages, size_t *page, struct attn_error *err)
{
	const char *what = form == FORM_TABLE ? "the block table" :
	    "kv_indices";
	size_t from = 0;
	double x;

	if (form == FORM_WHOLE) {
		*page = u;
		return ATTN_OK;
	}
	if (form == FORM_TABLE) {
		x = *attn_at(&pg->block_table, u, j);
	} else {
		(void)whole(list_at(&pg->indptr, u), &from);
		x = list_at(&pg->indices, from + j);
	}
	if (whole(x, page) == 0 && *page < pages)
		return ATTN_OK;
	{
		char num[ATTN_NUM_MAX];

		attn_format_number(num, x, 0, 0);
		return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
		    "%s names page %s for batch %zu's keys (its entry "
		    "%zu), but the caches hold %zu page%s, 0 to %zu", what,
		    num, u + 1, j + 1, pages, pages == 1 ? "" : "s",
		    pages - (pages > 0));
	}
}

/* Row r of cache c into row `to` of m, each number finite (a key in
 * use of batch u). */
static enum attn_status
copy_key(const struct attn_matrix *c, const char *name, size_t r,
    size_t page_size, size_t u, struct attn_matrix *m, size_t to,
    struct attn_error *err)
{
	const double *src = attn_at(c, r, 0);
	size_t i;

	for (i = 0; i < c->cols; i++)
		if (!isfinite(src[i])) {
			char num[ATTN_NUM_MAX];

			attn_format_number(num, src[i], 0, 0);
			return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
			    "the %s cache's page %zu, its row %zu (from 0), "
			    "holds %s in a key in use of batch %zu: keys and "
			    "values are finite", name, r / page_size,
			    r % page_size, num, u + 1);
		}
	memcpy(attn_at(m, to, 0), src, c->cols * sizeof *src);
	return ATTN_OK;
}

enum attn_status
attn_paged_gather(const struct attn_paged *pg, size_t n,
    const struct attn_matrix *k_cache, const struct attn_matrix *v_cache,
    struct attn_matrix *k, struct attn_matrix *v, size_t *used,
    struct attn_error *err)
{
	const size_t ps = pg->page_size;
	enum paged_form form;
	enum attn_status st;
	size_t pages, cap, rows, u, len = 0, lp, j, page;

	memset(k, 0, sizeof *k);
	memset(v, 0, sizeof *v);
	if (ps == 0 || k_cache->rows % ps != 0 || v_cache->rows !=
	    k_cache->rows)
		return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
		    "the caches hold %zu and %zu rows, not pages of %zu keys "
		    "each", k_cache->rows, v_cache->rows, ps);
	pages = k_cache->rows / ps;
	if ((st = table_fits(pg, n, pages, &form, &cap, err)) != ATTN_OK)
		return st;
	/* every sequence's length and every page it reads, checked
	 * before anything is allocated */
	for (u = 0; u < n; u++) {
		if ((st = seq_len(pg, form, u, cap, &len, err)) != ATTN_OK)
			return st;
		lp = pg->leftpad != NULL ? pg->leftpad[u] : 0;
		if (lp > len)
			return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
			    "batch %zu's keys start at row %zu (its "
			    "leftpad) but it uses only %zu", u + 1, lp, len);
		for (j = lp / ps; len > lp && j <= (len - 1) / ps; j++)
			if ((st = page_of(pg, form, u, j, pages, &page,
			    err)) != ATTN_OK)
				return st;
		used[u] = len - lp;
	}
	if (attn_size_mul(n, cap, &rows) != 0)
		return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "%zu batches of %zu keys are too many to address", n,
		    cap);
	if ((st = attn_matrix_alloc(k, rows, k_cache->cols, err)) != ATTN_OK ||
	    (st = attn_matrix_alloc(v, rows, v_cache->cols, err)) != ATTN_OK)
		goto fail;
	for (u = 0; u < n; u++) {
		lp = pg->leftpad != NULL ? pg->leftpad[u] : 0;
		for (j = 0; j < used[u]; j++) {
			const size_t r = lp + j;

			(void)page_of(pg, form, u, r / ps, pages, &page, err);
			if ((st = copy_key(k_cache, "K", page * ps + r % ps,
			    ps, u, k, u * cap + j, err)) != ATTN_OK ||
			    (st = copy_key(v_cache, "V", page * ps + r % ps,
			    ps, u, v, u * cap + j, err)) != ATTN_OK)
				goto fail;
		}
	}
	return ATTN_OK;
fail:
	attn_matrix_free(k);
	attn_matrix_free(v);
	return st;
}
