/*
 * check_read_json.c - JSON's plain arrays, which json_lex.c reads
 * without cJSON: every number of random arrays of 1 to 4 dimensions,
 * written every way JSON allows, read back exactly, at the top and as the
 * members of bundles and layers; cJSON left with no number of them to
 * parse (counted through libattn's allocation hooks); and the arrays
 * that are not quite plain read, or refused, as cJSON's way reads them.
 *
 * Inputs are copied into buffers of exactly their length, so that
 * AddressSanitizer catches a read one byte too far.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "read_json.h"
#include "ref.h"
#include "suites.h"

/* A growing text. */
struct text {
	char *s;
	size_t n, cap;
};

static void
put(struct text *t, const char *s)
{
	size_t k = strlen(s);

	if (t->n + k + 1 > t->cap) {
		t->cap = 2 * (t->n + k + 1);
		t->s = realloc(t->s, t->cap);
		ck_assert_ptr_nonnull(t->s);
	}
	memcpy(t->s + t->n, s, k + 1);
	t->n += k;
}

/* JSON's white space, now and then none. */
static void
put_ws(struct text *t, struct ref_rng *rng)
{
	static const char *const ws[] = { "", "", " ", "\n", "\t", "\r\n",
	    "  " };

	put(t, ws[ref_rng_range(rng, 0, 6)]);
}

/* x as JSON may write it: shortest, %.17g, an exponent in capitals, or
 * an integer as it is. */
static void
put_number(struct text *t, struct ref_rng *rng, double *x)
{
	char buf[64];
	uint64_t bits;

	switch (ref_rng_range(rng, 0, 4)) {
	case 0:
		*x = ref_rng_uniform(rng, -3.0, 3.0);
		attn_format_number(buf, *x, 0, 0);
		break;
	case 1:
		*x = ref_rng_uniform(rng, -1e6, 1e6) *
		    pow(10.0, (double)ref_rng_range(rng, 0, 40) - 20.0);
		snprintf(buf, sizeof buf, "%.17g", *x);
		break;
	case 2:
		*x = (double)ref_rng_range(rng, 0, 2000) - 1000.0;
		snprintf(buf, sizeof buf, "%.0f", *x);
		break;
	case 3:
		*x = ref_rng_uniform(rng, 1.0, 10.0) * 1e100;
		snprintf(buf, sizeof buf, "%.16E", *x);
		break;
	default:	/* any finite double */
		do {
			bits = ref_rng_next(rng);
			memcpy(x, &bits, sizeof *x);
		} while (!isfinite(*x));
		snprintf(buf, sizeof buf, "%.17g", *x);
		break;
	}
	/* %.17g reads back to x; the others are read as strtod reads them */
	*x = strtod(buf, NULL);
	put(t, buf);
}

/* An array of shape[0..ndim) at depth d, its numbers appended to *v. */
static void
put_array(struct text *t, struct ref_rng *rng, const size_t *shape,
    size_t ndim, double **v)
{
	size_t i;

	put(t, "[");
	for (i = 0; i < shape[0]; i++) {
		put_ws(t, rng);
		if (ndim == 1)
			put_number(t, rng, (*v)++);
		else
			put_array(t, rng, shape + 1, ndim - 1, v);
		put_ws(t, rng);
		if (i + 1 < shape[0])
			put(t, ",");
	}
	put(t, "]");
}

/* A random plain array: its shape, its numbers (want, room for 625) and
 * its text appended to t. */
static size_t
random_array(struct text *t, struct ref_rng *rng, size_t shape[4],
    double *want)
{
	size_t ndim = ref_rng_range(rng, 1, 4), k, n = 1;
	double *v = want;

	for (k = 0; k < ndim; k++) {
		shape[k] = ref_rng_range(rng, 1, 5);
		n *= shape[k];
	}
	put_array(t, rng, shape, ndim, &v);
	ck_assert_uint_eq((size_t)(v - want), n);
	return ndim;
}

/* a has the shape and, to the bit, the numbers. */
static void
check_array(const struct attn_array *a, const size_t *shape, size_t ndim,
    const double *want, const char *text)
{
	size_t k, n = 1;

	ck_assert_msg(a->ndim == ndim, "%s: %zu-D, want %zu-D", text,
	    a->ndim, ndim);
	for (k = 0; k < ndim; k++) {
		ck_assert_uint_eq(a->shape[k], shape[k]);
		n *= shape[k];
	}
	for (k = 0; k < n; k++)
		ck_assert_msg(memcmp(&a->data[k], &want[k], sizeof *want) == 0,
		    "%s: number %zu read as %a, want %a", text, k, a->data[k],
		    want[k]);
}

START_TEST(plain_arrays_read_every_number)
{
	struct ref_rng rng;
	struct text t = { NULL, 0, 0 };
	size_t shape[4], ndim;
	double want[625];
	struct attn_array a;
	struct attn_error err;
	char *buf;
	int i;

	ref_rng_seed(&rng, 70u + (uint64_t)_i);
	for (i = 0; i < 300; i++) {
		t.n = 0;
		if (i % 3 == 0)
			put(&t, "\xEF\xBB\xBF");
		put_ws(&t, &rng);
		ndim = random_array(&t, &rng, shape, want);
		put_ws(&t, &rng);
		buf = malloc(t.n);
		ck_assert_ptr_nonnull(buf);
		memcpy(buf, t.s, t.n);
		ck_assert_msg(attn_read_array("in.json", buf, t.n, ATTN_FMT_JSON,
		    ATTN_READ_FINITE, &a, &err) == ATTN_OK, "%s: %s", t.s,
		    err.msg);
		check_array(&a, shape, ndim, want, t.s);
		attn_array_free(&a);
		free(buf);
	}
	free(t.s);
}
END_TEST

/* A bundle with plain Q, K and V, or X and a layer of plain W_Q, W_K and
 * W_V: each member read to its numbers. */
START_TEST(plain_members_of_bundles_and_layers_read_every_number)
{
	static const char *const keys[2][4] = {
		{ "\"Q\"", "\"K\"", "\"V\"", "\"bias\"" },
		{ "\"W_Q\"", "\"W_K\"", "\"W_V\"", "\"W_O\"" },
	};
	struct ref_rng rng;
	struct text t = { NULL, 0, 0 };
	size_t shape[4][4], ndim[4], k;
	double want[4][625];
	struct attn_array *got[4];
	struct attn_bundle b;
	struct attn_error err;
	int i, layer;
	char *buf;

	ref_rng_seed(&rng, 80u + (uint64_t)_i);
	for (i = 0; i < 100; i++) {
		layer = i % 2;
		t.n = 0;
		put(&t, layer ? "{\"X\": [[1, 2]], \"proj\": {" : "{");
		for (k = 0; k < 4; k++) {
			put(&t, k > 0 ? ", " : "");
			put(&t, keys[layer][k]);
			put(&t, ": ");
			if (layer) {
				/* a layer's W is a matrix */
				shape[k][0] = ref_rng_range(&rng, 1, 6);
				shape[k][1] = ref_rng_range(&rng, 1, 6);
				ndim[k] = 2;
				{
					double *v = want[k];

					put_array(&t, &rng, shape[k], 2, &v);
				}
			} else {
				ndim[k] = random_array(&t, &rng, shape[k],
				    want[k]);
			}
		}
		put(&t, layer ? "}}" : "}");
		buf = malloc(t.n);
		ck_assert_ptr_nonnull(buf);
		memcpy(buf, t.s, t.n);
		ck_assert_msg(attn_read_bundle("in.json", buf, t.n, 0, &b,
		    &err) == ATTN_OK, "%s: %s", t.s, err.msg);
		got[0] = layer ? &b.proj.w_q : &b.q;
		got[1] = layer ? &b.proj.w_k : &b.k;
		got[2] = layer ? &b.proj.w_v : &b.v;
		got[3] = layer ? &b.proj.w_o : &b.bias;
		for (k = 0; k < 4; k++)
			check_array(got[k], shape[k], ndim[k], want[k], t.s);
		attn_bundle_free(&b);
		free(buf);
	}
	free(t.s);
}
END_TEST

/* ---------------------------------------------------------------- cJSON */

/* The cJSON nodes of the tree of text (as many as its bytes charged to
 * the memory account would hold: cJSON allocates through libattn's
 * hooks), read as an array (bundle 0) or as a bundle, which must read. */
static size_t
cjson_nodes_reading(const char *text, unsigned flags, int bundle)
{
	const size_t node = attn_mem_cost(sizeof(cJSON));
	struct attn_json js;
	struct attn_array a;
	struct attn_bundle b;
	struct attn_error err;
	size_t len = strlen(text), bytes;
	char *buf = malloc(len);
	enum attn_status st;

	ck_assert_ptr_nonnull(buf);
	memcpy(buf, text, len);
	ck_assert_int_eq(attn_json_parse(&js, "in.json", buf, len, &err),
	    ATTN_OK);
	bytes = js.tree_bytes;
	attn_json_close(&js);
	/* and it reads */
	if (bundle) {
		st = attn_read_bundle("in.json", buf, len, flags, &b, &err);
		if (st == ATTN_OK)
			attn_bundle_free(&b);
	} else {
		st = attn_read_array("in.json", buf, len, ATTN_FMT_JSON, flags,
		    &a, &err);
		if (st == ATTN_OK)
			attn_array_free(&a);
	}
	free(buf);
	ck_assert_msg(st == ATTN_OK, "%s", err.msg);
	return bytes / node;
}

/* A 40 x 25 matrix of numbers; with a word, its first one is "true". */
static char *
matrix_text(const char *first)
{
	struct text t = { NULL, 0, 0 };
	char buf[32];
	int i, j;

	put(&t, "[");
	for (i = 0; i < 40; i++) {
		put(&t, i > 0 ? ",\n [" : "[");
		for (j = 0; j < 25; j++) {
			if (i == 0 && j == 0 && first != NULL)
				snprintf(buf, sizeof buf, "%s", first);
			else
				snprintf(buf, sizeof buf, "%s%d.%d",
				    j > 0 ? ", " : "", i - 20, j);
			put(&t, buf);
		}
		put(&t, "]");
	}
	put(&t, "]");
	return t.s;
}

START_TEST(cjson_parses_no_number_of_a_plain_array)
{
	char *plain = matrix_text(NULL), *word = matrix_text("\"-inf\"");
	char *bundle = malloc(3 * strlen(plain) + 64);
	size_t as_array, as_bundle, with_word;

	ck_assert_ptr_nonnull(bundle);
	sprintf(bundle, "{\"Q\": %s, \"K\": %s,\n \"V\": %s}", plain, plain,
	    plain);
	as_array = cjson_nodes_reading(plain, ATTN_READ_FINITE, 0);
	as_bundle = cjson_nodes_reading(bundle, ATTN_READ_FINITE, 1);
	/* a bias's "-inf" is no plain number: cJSON reads all 1000, which
	 * shows that the count sees them */
	with_word = cjson_nodes_reading(word, ATTN_READ_BIAS, 0);
	ck_assert_msg(as_array <= 2, "cJSON's tree of a plain array of 1000 "
	    "numbers took %zu nodes' worth", as_array);
	ck_assert_msg(as_bundle <= 10, "cJSON's tree of a bundle of 3000 "
	    "plain numbers took %zu nodes' worth", as_bundle);
	ck_assert_msg(with_word >= 1000, "cJSON's tree of 1000 values took "
	    "only %zu nodes' worth", with_word);
	free(bundle);
	free(word);
	free(plain);
}
END_TEST

/* The numbers of a plain array, and of the same array read through the
 * tree (a bias's "-inf" first makes it no plain array): the same. */
START_TEST(plain_and_tree_read_the_same_numbers)
{
	char *plain = matrix_text(NULL), *word = matrix_text("\"-inf\"");
	struct attn_array a, b;
	struct attn_error err;
	size_t k;

	ck_assert_int_eq(attn_read_array("p.json", plain, strlen(plain),
	    ATTN_FMT_JSON, ATTN_READ_BIAS, &a, &err), ATTN_OK);
	ck_assert_int_eq(attn_read_array("w.json", word, strlen(word),
	    ATTN_FMT_JSON, ATTN_READ_BIAS, &b, &err), ATTN_OK);
	ck_assert_uint_eq(a.shape[0], b.shape[0]);
	ck_assert_uint_eq(a.shape[1], b.shape[1]);
	ck_assert(b.data[0] == -INFINITY);
	for (k = 1; k < a.shape[0] * a.shape[1]; k++)
		ck_assert_msg(memcmp(&a.data[k], &b.data[k], sizeof a.data[k]) ==
		    0, "number %zu: %a plain, %a through the tree", k, a.data[k],
		    b.data[k]);
	attn_array_free(&a);
	attn_array_free(&b);
	free(word);
	free(plain);
}
END_TEST

/* ---------------------------------------------------------------- not plain */

/* A text, the reader (array, bundle or layer), and what comes out: the
 * status and the message with its position, or for an array its first
 * numbers. */
struct near_case {
	const char *text;
	char reader;
	enum attn_status status;
	const char *where;	/* ":LINE:COL message" */
};

static const struct near_case near_cases[] = {
	/* beyond the doubles: too small reads, too large is refused */
	{ "[[1e-400, -1e-400, 2]]", 'a', ATTN_OK, NULL },
	{ "[[1, 1e999]]", 'a', ATTN_ERR_DATA,
	    ":1:6 number out of range: '1e999'" },
	/* as many characters as any cJSON reads (some stop at 63) */
	{ "[[0.12345678901234567890123456789012345678901234567890123456789"
	    "01, -1]]", 'a', ATTN_OK, NULL },
	{ "[[1, 2], [3]]", 'a', ATTN_ERR_DATA,
	    ":1:12 ragged array: row 2 has 1 value but row 1 has 2" },
	{ "[[1], []]", 'a', ATTN_ERR_DATA,
	    ":1:8 ragged array: row 2 has 0 values but row 1 has 1" },
	{ "[[[[[1]]]]]", 'a', ATTN_ERR_DATA,
	    ":1:5 too many dimensions: at most 4 are supported" },
	{ "[[1,\f2]]", 'a', ATTN_ERR_DATA, ":1:5 invalid JSON: control "
	    "character 0x0C outside a string (JSON's white space is space, "
	    "tab, LF and CR)" },
	{ "[[1, 2],\n [3, 01]]", 'a', ATTN_ERR_DATA, ":2:6 invalid JSON: "
	    "malformed number '01': JSON numbers have no leading zeros" },
	{ "[[1, 2], [3, 4]", 'a', ATTN_ERR_DATA,
	    ":1:16 unexpected end of input (truncated JSON?)" },
	/* after plain arrays, positions in the whole text */
	{ "[[1, 2]] [[3]]", 'a', ATTN_ERR_DATA,
	    ":1:10 several arrays one after another, as rows without the "
	    "outer brackets: a matrix is one array of rows, so put '[' before "
	    "the first and ']' after the last, as in [[1, 0], [0, 1]]" },
	{ "[[1, 2]] x", 'a', ATTN_ERR_DATA,
	    ":1:10 trailing garbage after the JSON value" },
	{ "{\"Q\": [[1]], \"K\": [[1]] \"V\": [[1]]}", 'b', ATTN_ERR_DATA,
	    ":1:25 invalid JSON: expected ',' or '}', found '\"V\"'" },
	{ "{\"Q\": [[1]], \"K\": [[1]], \"V\": [[1]], \"labels\": "
	    "{\"query\": [1]}}", 'b', ATTN_ERR_DATA,
	    ":1:59 labels \"query\": expected a string, found a number" },
	{ "{\"X\": [[1, 0]], \"proj\": {\"W_Q\": [[1], [2]], \"W_K\": "
	    "[[1], [2]], \"W_V\": [[1], [2]], \"b_O\": [1, 2]}}", 'b',
	    ATTN_ERR_DATA, ":1:83 b_O without W_O: the output bias goes "
	    "with the output projection" },
	{ "{\"W_Q\": [[1]], \"W_K\": [[1]], \"W_V\": [[1], [2]], \"W_Q\": "
	    "[[1]]}", 'l', ATTN_ERR_DATA, ":1:49 repeated layer key \"W_Q\"" },
};

#define NNEAR (int)(sizeof near_cases / sizeof near_cases[0])

/* a holds the numbers of text, each as strtod reads it, to the sign of
 * a zero. */
static void
check_as_strtod(const struct attn_array *a, const char *text)
{
	const char *p = text;
	char *end;
	size_t k = 0, n = a->shape[0] * a->shape[1];
	double want;

	ck_assert_uint_eq(a->ndim, 2);
	while ((p = strpbrk(p, "-0123456789")) != NULL) {
		want = strtod(p, &end);
		ck_assert_uint_lt(k, n);
		ck_assert_msg(memcmp(&a->data[k], &want, sizeof want) == 0,
		    "%s: number %zu read as %a, strtod reads %a", text, k,
		    a->data[k], want);
		k++;
		p = end;
	}
	ck_assert_uint_eq(k, n);
}

START_TEST(arrays_not_quite_plain_read_as_cjson_reads_them)
{
	const struct near_case *nc = &near_cases[_i];
	size_t len = strlen(nc->text);
	char *buf = malloc(len), msg[ATTN_MSG_MAX + 64];
	struct attn_array a;
	struct attn_bundle b;
	struct attn_layer l;
	struct attn_error err;
	enum attn_status st;

	ck_assert_ptr_nonnull(buf);
	memcpy(buf, nc->text, len);
	memset(&err, 0, sizeof err);
	if (nc->reader == 'a') {
		st = attn_read_array("in.json", buf, len, ATTN_FMT_JSON,
		    ATTN_READ_FINITE, &a, &err);
		if (st == ATTN_OK) {
			check_as_strtod(&a, nc->text);
			attn_array_free(&a);
		}
	} else if (nc->reader == 'b') {
		st = attn_read_bundle("in.json", buf, len, 0, &b, &err);
		if (st == ATTN_OK)
			attn_bundle_free(&b);
	} else {
		st = attn_read_layer("in.json", buf, len, &l, &err);
		if (st == ATTN_OK)
			attn_layer_free(&l);
	}
	free(buf);
	ck_assert_msg(st == nc->status, "%s: status %d (%s)", nc->text,
	    (int)st, err.msg);
	if (nc->where != NULL) {
		attn_error_position(msg, sizeof msg, &err);
		strcat(msg, " ");
		strcat(msg, err.msg);
		ck_assert_str_eq(msg, nc->where);
	}
}
END_TEST

Suite *
read_json_suite(void)
{
	Suite *s = suite_create("read_json");
	TCase *tc = tcase_create("plain");

	tcase_add_loop_test(tc, plain_arrays_read_every_number, 0, 4);
	tcase_add_loop_test(tc,
	    plain_members_of_bundles_and_layers_read_every_number, 0, 4);
	tcase_add_test(tc, cjson_parses_no_number_of_a_plain_array);
	tcase_add_test(tc, plain_and_tree_read_the_same_numbers);
	tcase_add_loop_test(tc, arrays_not_quite_plain_read_as_cjson_reads_them,
	    0, NNEAR);
	suite_add_tcase(s, tc);
	return s;
}
