/*
 * read_json.c - JSON arrays (1-D to 4-D), and the tree that the readers
 * of JSON's schemas (read_layer.c, read_bundle.c) read too.
 *
 * A text is checked first, whole, by attn_json_scan (json_lex.c), which
 * tells the first fault of its grammar where it stands and reads the
 * plain arrays itself.  cJSON then builds the tree of what is left, with
 * each plain array cut down to [], and attn checks what the grammar
 * allows but attn does not (ragged rows, strings, depth) while it copies
 * the numbers out in C order.  Two decisions follow from cJSON's limits:
 *
 * - cJSON records no positions, so an error found in the tree is placed
 *   by attn_json_locate, which walks the text's tokens along the same
 *   path (member and element indices) to the offending value.
 * - cJSON converts numbers with strtod in the current locale; attn reads
 *   each number's own text again, in document order, with
 *   attn_parse_number, so that values are correctly rounded whatever the
 *   locale and 1e999 is told apart from a real infinity.
 */
#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read_json.h"

_Static_assert(ATTN_JSON_DEPTH_MAX == CJSON_NESTING_LIMIT,
    "attn_json_scan refuses the nesting cJSON refuses");

/* The number cJSON reads at most of a number, in some builds (upstream
 * 1.7.15 copies 63 characters; Debian's reads them all). */
#define CJSON_NUMBER_MAX 63

/* ---------------------------------------------------------------- positions */

/* The offset just past the value that starts at or after i. */
static size_t
value_end(const char *buf, size_t len, size_t i)
{
	struct attn_json_token t;
	size_t depth = 0;

	do {
		attn_json_token(buf, len, i, &t);
		if (t.kind == '[' || t.kind == '{')
			depth++;
		else if ((t.kind == ']' || t.kind == '}') && depth > 0)
			depth--;
		i = t.end;
	} while (depth > 0 && t.kind != 0);
	return i;
}

size_t
attn_json_next_element(const struct attn_json *js, size_t i)
{
	struct attn_json_token t;

	attn_json_token(js->buf, js->len, value_end(js->buf, js->len, i), &t);
	if (t.kind == ',')
		attn_json_token(js->buf, js->len, t.end, &t);
	return t.start;
}

size_t
attn_json_locate(const struct attn_json *js, const size_t *path, size_t n,
    int key)
{
	const char *b = js->buf;
	struct attn_json_token t;
	size_t k, m;
	int object;

	attn_json_token(b, js->len, attn_bom_len(b, js->len), &t);
	for (k = 0; k < n; k++) {
		if (t.kind != '[' && t.kind != '{')
			return t.start;
		object = t.kind == '{';
		attn_json_token(b, js->len, t.end, &t);
		for (m = 0; m < path[k]; m++) {
			if (t.kind == ']' || t.kind == '}' || t.kind == 0)
				return t.start;
			if (object) {		/* the key, then ':' */
				attn_json_token(b, js->len, t.end, &t);
				attn_json_token(b, js->len, t.end, &t);
			}
			attn_json_token(b, js->len,
			    attn_json_next_element(js, t.start), &t);
		}
		if (t.kind == ']' || t.kind == '}' || t.kind == 0)
			return t.start;
		if (object) {
			if (key && k + 1 == n)
				return t.start;
			attn_json_token(b, js->len, t.end, &t);
			attn_json_token(b, js->len, t.end, &t);
		}
	}
	return t.start;
}

enum attn_status
attn_json_fail(const struct attn_json *js, const size_t *path, size_t n,
    int key, const char *msg)
{
	return attn_error_at(js->err, ATTN_ERR_DATA, js->name, js->buf, js->len,
	    attn_json_locate(js, path, n, key), "%s", msg);
}

const char *
attn_json_kind(const cJSON *j)
{
	if (cJSON_IsNumber(j))
		return "a number";
	if (cJSON_IsString(j))
		return "a string";
	if (cJSON_IsArray(j))
		return "an array";
	if (cJSON_IsObject(j))
		return "an object";
	if (cJSON_IsTrue(j))
		return "true";
	if (cJSON_IsFalse(j))
		return "false";
	return "null";
}

const char *
attn_json_key_preview(char *p, const char *key)
{
	attn_text_preview(p, ATTN_PREVIEW_MAX, key, strlen(key));
	return p;
}

/* Whether a and b are the same ASCII text but for case. */
static int
same_letters(const char *a, const char *b)
{
	for (; *a != '\0' && *b != '\0'; a++, b++)
		if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
			return 0;
	return *a == *b;
}

const char *
attn_json_key_suggestion(char *buf, size_t size, const char *key,
    const char *const *names, size_t n)
{
	const char *s = attn_suggest(key, names, n);

	if (s == NULL)
		return NULL;
	snprintf(buf, size, ": %sdid you mean \"%s\"?", same_letters(key, s) ?
	    "keys are case-sensitive; " : "", s);
	return buf;
}

/* ---------------------------------------------------------------- the tree */

/*
 * cJSON failed on text the scan passed: out of memory, or a number
 * longer than some builds of cJSON read.  off is where it stopped in
 * that text.
 */
static enum attn_status
tree_fault(const struct attn_json *js, size_t off)
{
	struct attn_json_token t;
	size_t i = attn_bom_len(js->buf, js->len);

	do {
		attn_json_token(js->buf, js->len, i, &t);
		i = t.end;
	} while (t.kind != 0 && t.end <= off);
	if (t.kind == 'w' && t.start <= off &&
	    t.end - t.start > CJSON_NUMBER_MAX)
		return attn_error_at(js->err, ATTN_ERR_DATA, js->name, js->buf,
		    js->len, t.start, "number too long: %zu characters (cJSON "
		    "reads at most %d)", t.end - t.start, CJSON_NUMBER_MAX);
	return attn_error_input_nomem(js->err, js->name, "reading JSON input");
}

/*
 * cJSON allocates through these, set once for the process: they charge
 * the thread's memory account (memory.c) and count what this thread's
 * tree was charged, which attn_json_close gives back once cJSON_Delete
 * has freed it, since a free hook is told no size.
 */
static _Thread_local size_t tree_cost;

static void *
tree_alloc(size_t n)
{
	const size_t cost = attn_mem_cost(n);
	void *p;

	if (attn_mem_take(cost) != 0)
		return NULL;
	if ((p = malloc(n)) == NULL) {
		attn_mem_give(cost);
		return NULL;
	}
	tree_cost += cost;
	return p;
}

static void
tree_free(void *p)
{
	free(p);
}

static pthread_once_t hooks_once = PTHREAD_ONCE_INIT;

static void
hooks_init(void)
{
	cJSON_Hooks hooks = { tree_alloc, tree_free };

	cJSON_InitHooks(&hooks);
}

/* cJSON's tree of s[0..n) (NUL-terminated, the NUL counted in the
 * length, so that cJSON never reads past it), charged to js; *end where
 * it stopped. */
static cJSON *
tree(struct attn_json *js, const char *s, size_t n, const char **end)
{
	cJSON *root;

	pthread_once(&hooks_once, hooks_init);
	*end = NULL;
	tree_cost = 0;
	root = cJSON_ParseWithLengthOpts(s, n + 1, end, 0);
	js->tree_bytes += tree_cost;
	return root;
}

enum attn_status
attn_json_parse(struct attn_json *js, const char *name, const char *buf,
    size_t len, struct attn_error *err)
{
	const struct attn_json_plains *ps = &js->plain;
	enum attn_status st;
	size_t cut = 0, from = 0, o = 0, k;
	const char *end;
	char *copy;

	memset(js, 0, sizeof *js);
	js->name = name;
	js->buf = buf;
	js->len = len;
	js->err = err;
	if ((st = attn_json_scan(name, buf, len, &js->plain, err)) != ATTN_OK)
		return st;
	/* The text with each plain array cut down to "[]", and a NUL. */
	for (k = 0; k < ps->n; k++)
		cut += ps->v[k].end - ps->v[k].start - 2;
	if ((copy = attn_mem_alloc(len - cut + 1)) == NULL)
		return attn_error_input_nomem(err, name, "reading JSON input");
	for (k = 0; k < ps->n; k++) {
		memcpy(copy + o, buf + from, ps->v[k].start - from);
		o += ps->v[k].start - from;
		memcpy(copy + o, "[]", 2);
		o += 2;
		from = ps->v[k].end;
	}
	memcpy(copy + o, buf + from, len - from);
	o += len - from;
	copy[o] = '\0';
	if ((js->root = tree(js, copy, o, &end)) == NULL) {
		/* Where it fails, in the whole text, unless out of memory. */
		if (ps->n > 0 && o < len && !attn_mem_refused()) {
			attn_mem_free(copy, o + 1);
			if ((copy = attn_mem_alloc((o = len) + 1)) == NULL)
				return tree_fault(js, len);
			memcpy(copy, buf, len);
			copy[len] = '\0';
			cJSON_Delete(tree(js, copy, len, &end));
		}
		st = tree_fault(js, end != NULL ? (size_t)(end - copy) : len);
	}
	attn_mem_free(copy, o + 1);
	return st;
}

void
attn_json_close(struct attn_json *js)
{
	cJSON_Delete(js->root);
	js->root = NULL;
	attn_mem_give(js->tree_bytes);
	js->tree_bytes = 0;
	attn_json_plains_free(&js->plain);
}

/* ---------------------------------------------------------------- arrays */

/*
 * The rules of attn_value_fault for the array *a that the scan read,
 * whose numbers only it has seen (as finite numbers, so only a mask's
 * can break them): the first that does is told at its place in the
 * text, found along its path, and *a is freed.
 */
static enum attn_status
plain_values(const struct attn_json *js, const size_t *base, size_t nbase,
    unsigned flags, struct attn_array *a)
{
	size_t path[ATTN_JSON_PATH_MAX] = { 0 }, n = attn_array_count(a), f, k;
	size_t d, off;
	struct attn_json_token t;
	char msg[ATTN_MSG_MAX];

	for (f = 0; f < n && attn_value_plain(flags, a->data[f]); f++)
		;
	if (f == n)
		return ATTN_OK;
	if (nbase > 0)
		memcpy(path, base, nbase * sizeof *base);
	for (d = a->ndim, k = f; d-- > 0; k /= a->shape[d])
		path[nbase + d] = k % a->shape[d];
	off = attn_json_locate(js, path, nbase + a->ndim, 0);
	attn_json_token(js->buf, js->len, off, &t);
	attn_value_fault(flags, a->data[f], js->buf + off, t.end - t.start,
	    msg, sizeof msg);
	attn_array_free(a);
	return attn_error_at(js->err, ATTN_ERR_DATA, js->name, js->buf,
	    js->len, off, "%s", msg);
}

/*
 * The next scalar (number, string, literal) of an array at or after
 * *cur, whose elements are its only scalars, in document order: its
 * start, with *cur moved past it.
 */
static size_t
next_scalar(const struct attn_json *js, size_t *cur)
{
	struct attn_json_token t;

	do {
		attn_json_token(js->buf, js->len, *cur, &t);
		*cur = t.end;
	} while (t.kind == '[' || t.kind == ']' || t.kind == ',');
	return t.start;
}

/*
 * One element of the array: a number; with ATTN_READ_BOOL (a mask), true
 * or false as 1 or 0; or a string spelling inf or nan, which is how attn
 * writes them, where the flags allow it.  Every value meets the rules of
 * attn_value_fault: a mask holds 0 and 1 alone, a bias no nan or +inf, Q,
 * K and V only finite numbers.
 */
static enum attn_status
json_element(const struct attn_json *js, const cJSON *j, unsigned flags,
    size_t *cur, double *x, const size_t *path, size_t n)
{
	char p[ATTN_PREVIEW_MAX + 4], msg[ATTN_MSG_MAX];
	int boolean = (flags & ATTN_READ_BOOL) && cJSON_IsBool(j);
	size_t at, tlen;
	int rc;

	if (!cJSON_IsNumber(j) && !cJSON_IsString(j) && !boolean) {
		snprintf(msg, sizeof msg, "expected a number, found %s",
		    attn_json_kind(j));
		return attn_json_fail(js, path, n, 0, msg);
	}
	/* Every accepted scalar moves the cursor, so that it stays on the
	 * token of j. */
	at = next_scalar(js, cur);
	tlen = *cur - at;
	if (boolean) {
		*x = cJSON_IsTrue(j) ? 1 : 0;
		return ATTN_OK;
	}
	if (cJSON_IsNumber(j)) {
		rc = attn_parse_number(js->buf + at, tlen, x);
		attn_text_preview(p, ATTN_PREVIEW_MAX, js->buf + at, tlen);
		if (rc > 0)
			return attn_error_at(js->err, ATTN_ERR_DATA, js->name,
			    js->buf, js->len, at, "number out of range: '%s'",
			    p);
		if (rc < 0)	/* cJSON took what attn does not */
			return attn_error_at(js->err, ATTN_ERR_DATA, js->name,
			    js->buf, js->len, at, "not a number: '%s'", p);
		if (attn_value_fault(flags, *x, js->buf + at, tlen, msg,
		    sizeof msg) != 0)
			return attn_error_at(js->err, ATTN_ERR_DATA, js->name,
			    js->buf, js->len, at, "%s", msg);
		return ATTN_OK;
	}
	if (attn_parse_number(j->valuestring, strlen(j->valuestring), x) != 0 ||
	    isfinite(*x)) {
		/* "\u2212inf" decodes to a dash cJSON's string holds; point
		 * at the string, whose text may spell it either way. */
		if (attn_dash_fault(j->valuestring, strlen(j->valuestring),
		    msg, sizeof msg) < strlen(j->valuestring))
			return attn_error_at(js->err, ATTN_ERR_DATA, js->name,
			    js->buf, js->len, at, "%s", msg);
		return attn_json_fail(js, path, n, 0,
		    "expected a number, found a string");
	}
	if (attn_value_fault(flags, *x, j->valuestring,
	    strlen(j->valuestring), msg, sizeof msg) != 0)
		return attn_error_at(js->err, ATTN_ERR_DATA, js->name, js->buf,
		    js->len, at, "%s", msg);
	return ATTN_OK;
}

/*
 * The walk is iterative, one cursor a depth.  The data grows as numbers
 * are read rather than being allocated from the shape: a ragged array's
 * first rows may promise far more numbers than the file holds.
 */
enum attn_status
attn_json_array(struct attn_json *js, const cJSON *root, const size_t *base,
    size_t nbase, unsigned flags, struct attn_array *out)
{
	size_t path[ATTN_JSON_PATH_MAX] = { 0 }, *idx = path + nbase;
	const cJSON *at[ATTN_MAX_DIMS], *j, *e;
	size_t shape[ATTN_MAX_DIMS] = { 0 }, ndim = 0, d, nv = 0, cap = 0;
	size_t cur, c;
	char msg[ATTN_MSG_MAX];
	enum attn_status st;
	double *data = NULL, *nd, x;	/* shape[0] x .. x shape[ndim - 1] */

	memset(out, 0, sizeof *out);
	if (cJSON_IsArray(root) && root->child == NULL &&
	    attn_json_plain_take(&js->plain, base, nbase, out))
		return plain_values(js, base, nbase, flags, out);
	if (nbase > 0)
		memcpy(path, base, nbase * sizeof *base);
	if (cJSON_IsObject(root) && nbase == 0)
		return attn_json_fail(js, path, 0, 0, "a JSON object (a BUNDLE) "
		    "where a matrix was expected: a BUNDLE must be the only "
		    "operand");
	if (!cJSON_IsArray(root)) {
		snprintf(msg, sizeof msg, "expected an array, found %s",
		    attn_json_kind(root));
		return attn_json_fail(js, path, nbase, 0, msg);
	}

	/* The shape, from the first element at each depth. */
	for (j = root; cJSON_IsArray(j); j = j->child) {
		if (ndim == ATTN_MAX_DIMS)
			return attn_json_fail(js, path, nbase + ndim, 0,
			    "too many dimensions: at most 4 are supported");
		for (c = 0, e = j->child; e != NULL; e = e->next)
			c++;
		if (c == 0)
			return attn_json_fail(js, path, nbase + ndim, 0,
			    "empty matrix");
		shape[ndim] = c;
		idx[ndim++] = 0;
	}

	cur = attn_json_locate(js, path, nbase, 0);
	d = 0;
	at[0] = root->child;
	idx[0] = 0;
	for (;;) {
		j = at[d];
		if (j == NULL || idx[d] == shape[d]) {
			if (j != NULL || idx[d] < shape[d])
				goto ragged;
			if (d == 0)
				break;
			d--;
			at[d] = at[d]->next;
			idx[d]++;
			continue;
		}
		if (d + 1 < ndim) {
			if (!cJSON_IsArray(j)) {
				snprintf(msg, sizeof msg, "expected an array, "
				    "found %s", attn_json_kind(j));
				st = attn_json_fail(js, path, nbase + d + 1, 0,
				    msg);
				goto fail;
			}
			d++;
			at[d] = j->child;
			idx[d] = 0;
			continue;
		}
		st = json_element(js, j, flags, &cur, &x, path, nbase + d + 1);
		if (st != ATTN_OK)
			goto fail;
		if (nv == cap) {
			if ((nd = attn_grow_array(data, &cap, nv + 1,
			    sizeof *data)) == NULL) {
				st = attn_error_input_nomem(js->err, js->name,
				    "reading JSON input");
				goto fail;
			}
			data = nd;
		}
		data[nv++] = x;
		at[d] = j->next;
		idx[d]++;
	}

	/* Give back the slack of the doubling: exactly its numbers. */
	data = attn_mem_realloc(data, cap * sizeof *data, nv * sizeof *data);
	out->ndim = ndim;
	memcpy(out->shape, shape, sizeof shape);
	out->data = data;
	return ATTN_OK;

ragged:
	/* Count the whole sub-array, then point at its first extra element
	 * or, when it is short, at its closing bracket. */
	for (c = idx[d]; j != NULL; j = j->next)
		c++;
	attn_ragged_msg(msg, sizeof msg, ndim, d, idx, c, shape[d]);
	idx[d] = shape[d] < c ? shape[d] : c;
	st = attn_json_fail(js, path, nbase + d + 1, 0, msg);
fail:
	attn_mem_free(data, cap * sizeof *data);
	return st;
}

enum attn_status
attn_read_json(const char *name, const char *buf, size_t len, unsigned flags,
    struct attn_array *out, struct attn_error *err)
{
	struct attn_json js;
	enum attn_status st;

	memset(out, 0, sizeof *out);
	if ((st = attn_json_parse(&js, name, buf, len, err)) == ATTN_OK)
		st = attn_json_array(&js, js.root, NULL, 0, flags, out);
	attn_json_close(&js);
	return st;
}
