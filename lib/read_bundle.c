/*
 * read_bundle.c - a BUNDLE: one JSON object that holds a whole problem,
 * {"Q": .., "K": .., "V": .., "mask": .., "bias": .., "labels":
 * {"query": [..], "key": [..]}}, or embeddings (X, or XQ and XKV) with
 * the layer that projects them under "proj".
 *
 * It is read in document order, so that the first thing wrong in the
 * file is what is reported: an unknown key (with what it may have
 * meant), a repeated one, keys that do not go together (Q with X), an
 * array or a list of labels that is wrong where it stands; then what is
 * missing, and labels that do not name every row.
 */
#include <stdio.h>
#include <string.h>

#include "read_json.h"

/* Labels: an array of strings, member m of the labels object, which is
 * member lm of the bundle. */
static enum attn_status
json_labels(struct attn_json *js, const cJSON *arr, const char *which,
    size_t lm, size_t m, struct attn_labels *out)
{
	size_t path[3] = { lm, m, 0 }, n = 0, cur;
	struct attn_json_token t;
	char msg[ATTN_MSG_MAX];
	enum attn_status st;
	const cJSON *j;

	if (!cJSON_IsArray(arr)) {
		snprintf(msg, sizeof msg, "labels \"%s\" must be an array of "
		    "strings, not %s", which, attn_json_kind(arr));
		return attn_json_fail(js, path, 2, 0, msg);
	}
	/*
	 * Escapes such as \u001b and \t decode to control characters,
	 * which the scan cannot see in the text: look in the
	 * decoded strings, and point at the label.  A cursor walks the
	 * elements alongside, since locating each from the top would make
	 * many labels quadratic.
	 */
	attn_json_token(js->buf, js->len, attn_json_locate(js, path, 2, 0) +
	    1, &t);
	cur = t.start;
	for (j = arr->child; j != NULL; j = j->next, n++) {
		if (!cJSON_IsString(j)) {
			path[2] = n;
			snprintf(msg, sizeof msg, "labels \"%s\": expected a "
			    "string, found %s", which, attn_json_kind(j));
			return attn_json_fail(js, path, 3, 0, msg);
		}
		st = attn_label_control(js->err, js->name, js->buf, js->len, cur,
		    j->valuestring, strlen(j->valuestring));
		if (st != ATTN_OK)
			return st;
		cur = attn_json_next_element(js, cur);
	}
	if (n == 0)
		return ATTN_OK;
	/* n names, NULL until each is made: attn_labels_free frees as many
	 * as there are */
	if ((out->names = attn_mem_zalloc(n * sizeof *out->names)) == NULL)
		goto nomem;
	out->count = n;
	for (n = 0, j = arr->child; j != NULL; j = j->next, n++)
		if ((out->names[n] = attn_str_ndup(j->valuestring,
		    strlen(j->valuestring))) == NULL)
			goto nomem;
	return ATTN_OK;
nomem:
	attn_labels_free(out);
	return attn_error_input_nomem(js->err, js->name, "reading labels");
}

/* The "labels" member (member lm of the bundle): {"query": [..], "key":
 * [..]}, both optional. */
static enum attn_status
json_bundle_labels(struct attn_json *js, const cJSON *obj, size_t lm,
    struct attn_bundle *b, size_t where[2])
{
	size_t path[2] = { lm, 0 }, m;
	char msg[ATTN_MSG_MAX], p[ATTN_PREVIEW_MAX + 4], h[64];
	int seen_query = 0, seen_key = 0, *seen;
	struct attn_labels *dst;
	enum attn_status st;
	const cJSON *j;

	if (!cJSON_IsObject(obj)) {
		snprintf(msg, sizeof msg, "bundle key \"labels\" must be an "
		    "object with \"query\" and \"key\" lists, not %s",
		    attn_json_kind(obj));
		return attn_json_fail(js, path, 1, 0, msg);
	}
	for (m = 0, j = obj->child; j != NULL; m++, j = j->next) {
		path[1] = m;
		if (strcmp(j->string, "query") == 0) {
			seen = &seen_query;
			dst = &b->query_labels;
			where[0] = m;
		} else if (strcmp(j->string, "key") == 0) {
			seen = &seen_key;
			dst = &b->key_labels;
			where[1] = m;
		} else {
			static const char *const names[] = { "query", "key" };
			const char *hint = attn_json_key_suggestion(h, sizeof h,
			    j->string, names, 2);

			snprintf(msg, sizeof msg, "unknown labels key \"%s\"%s",
			    attn_json_key_preview(p, j->string), hint != NULL ? hint :
			    " (expected \"query\" or \"key\")");
			return attn_json_fail(js, path, 2, 1, msg);
		}
		if (*seen) {
			snprintf(msg, sizeof msg, "repeated labels key \"%s\"",
			    j->string);
			return attn_json_fail(js, path, 2, 1, msg);
		}
		*seen = 1;
		if ((st = json_labels(js, j, j->string, lm, m, dst)) != ATTN_OK)
			return st;
	}
	return ATTN_OK;
}

/* Each list of labels in the bundle must name every row of its matrix:
 * "query" the rows of Q, "key" those of K.  A stack of matrices (B x T x
 * d) shares one list, so it names the T rows of each matrix, not all
 * B * T.  where[] holds their member numbers in the labels object,
 * member lm of the bundle. */
static enum attn_status
check_label_counts(struct attn_json *js, const struct attn_bundle *b,
    size_t lm, const size_t where[2])
{
	const struct attn_labels *lab[2] = { &b->query_labels, &b->key_labels };
	/* With embeddings, X names both, or XQ the queries, XKV the keys. */
	const int self = b->embeddings && b->k.ndim == 0;
	const struct attn_array *arr[2] = { &b->q, self ? &b->q : &b->k };
	static const char *const which[2] = { "query", "key" };
	const char *const matrix[2] = {
		!b->embeddings ? "Q" : self ? "X" : "XQ",
		!b->embeddings ? "K" : self ? "X" : "XKV"
	};
	char msg[ATTN_MSG_MAX];
	size_t i, path[2];

	for (i = 0; i < 2; i++) {
		size_t nd = arr[i]->ndim;
		size_t rows = nd >= 2 ? arr[i]->shape[nd - 2] : 1;

		if (lab[i]->count == 0 || lab[i]->count == rows)
			continue;
		snprintf(msg, sizeof msg, "labels \"%s\" has %zu name%s but "
		    "%s%s has %zu row%s", which[i], lab[i]->count,
		    lab[i]->count == 1 ? "" : "s",
		    nd >= 3 ? "each matrix of " : "", matrix[i], rows,
		    rows == 1 ? "" : "s");
		path[0] = lm;
		path[1] = where[i];
		return attn_json_fail(js, path, 2, 1, msg);
	}
	return ATTN_OK;
}

/* Bundle keys, in the order missing ones are reported; every key but
 * KEY_LABELS and KEY_PROJ names an array.  X, XQ and XKV are embeddings
 * for a layer, in place of Q, K and V. */
enum bundle_key { KEY_Q, KEY_K, KEY_V, KEY_MASK, KEY_BIAS, KEY_LABELS,
    KEY_PROJ, KEY_X, KEY_XQ, KEY_XKV, KEY_COUNT };
static const char *const bundle_keys[KEY_COUNT] = {
	"Q", "K", "V", "mask", "bias", "labels", "proj", "X", "XQ", "XKV"
};

/* Whether key k holds embeddings, or Q, K or V. */
#define IS_EMB(k) ((k) >= KEY_X)
#define IS_QKV(k) ((k) <= KEY_V)

/*
 * Key k may not join the keys already seen when one holds Q, K or V and
 * the other embeddings, or when X meets XQ or XKV: the message, or NULL
 * when it may.
 */
static const char *
key_conflict(size_t k, const int seen[KEY_COUNT], char *msg, size_t size)
{
	size_t o;

	for (o = 0; o < KEY_COUNT; o++) {
		if (!seen[o])
			continue;
		if ((IS_EMB(k) && IS_QKV(o)) || (IS_QKV(k) && IS_EMB(o))) {
			snprintf(msg, size, "bundle key \"%s\" with \"%s\": a "
			    "bundle holds Q, K and V, or embeddings (X, or XQ "
			    "and XKV) for a layer", bundle_keys[k],
			    bundle_keys[o]);
			return msg;
		}
		if ((k == KEY_X && (o == KEY_XQ || o == KEY_XKV)) ||
		    (o == KEY_X && (k == KEY_XQ || k == KEY_XKV))) {
			snprintf(msg, size, "bundle key \"%s\" with \"%s\": X "
			    "is for self-attention, XQ and XKV for "
			    "cross-attention; give one or the other",
			    bundle_keys[k], bundle_keys[o]);
			return msg;
		}
	}
	return NULL;
}

/* What a bundle lacks, once read: NULL when it is whole. */
static const char *
bundle_missing(const int seen[KEY_COUNT], char *msg, size_t size)
{
	size_t k;

	if (seen[KEY_X] || seen[KEY_XQ] || seen[KEY_XKV]) {
		if (seen[KEY_X] || (seen[KEY_XQ] && seen[KEY_XKV]))
			return NULL;
		snprintf(msg, size, "bundle has no \"%s\" (XQ and XKV go "
		    "together: cross-attention from embeddings)",
		    seen[KEY_XQ] ? "XKV" : "XQ");
		return msg;
	}
	if (seen[KEY_PROJ]) {
		snprintf(msg, size, "bundle has a layer (\"proj\") but no "
		    "embeddings: give \"X\", or \"XQ\" and \"XKV\", "
		    "instead of Q, K and V");
		return msg;
	}
	for (k = KEY_Q; k <= KEY_V; k++)
		if (!seen[k]) {
			snprintf(msg, size, "bundle has no \"%s\"",
			    bundle_keys[k]);
			return msg;
		}
	return NULL;
}

/*
 * The reader flags for the array under bundle key k.  Q, K and V are read
 * as the caller asks.  A mask is read as booleans (and may not hold an
 * infinity or nan); a bias may hold -inf, which is how a bias masks, but
 * not nan or +inf, and is no boolean.
 */
static unsigned
member_flags(size_t k, unsigned flags)
{
	switch (k) {
	case KEY_MASK:
		return (flags & ~(unsigned)(ATTN_READ_FINITE |
		    ATTN_READ_BIAS)) | ATTN_READ_BOOL;
	case KEY_BIAS:
		return (flags & ~(unsigned)(ATTN_READ_FINITE |
		    ATTN_READ_BOOL)) | ATTN_READ_BIAS;
	default:
		return flags;
	}
}

/*
 * Read a BUNDLE in document order, so that the first thing wrong in the
 * file is what is reported.
 */
enum attn_status
attn_read_bundle(const char *name, const char *buf, size_t len,
    unsigned flags, struct attn_bundle *out, struct attn_error *err)
{
	struct attn_json js;
	struct attn_array *arrays[KEY_COUNT];
	int seen[KEY_COUNT] = { 0 };
	char msg[ATTN_MSG_MAX], p[ATTN_PREVIEW_MAX + 4], h[64];
	enum attn_status st;
	size_t m, k, labels_m = 0, proj_m = 0, where[2] = { 0, 0 };
	const cJSON *j;

	memset(out, 0, sizeof *out);
	arrays[KEY_Q] = &out->q;
	arrays[KEY_K] = &out->k;
	arrays[KEY_V] = &out->v;
	arrays[KEY_MASK] = &out->mask;
	arrays[KEY_BIAS] = &out->bias;
	arrays[KEY_LABELS] = arrays[KEY_PROJ] = NULL;
	arrays[KEY_X] = arrays[KEY_XQ] = &out->q;
	arrays[KEY_XKV] = &out->k;
	if ((st = attn_json_parse(&js, name, buf, len, err)) != ATTN_OK)
		goto done;
	if (!cJSON_IsObject(js.root)) {
		snprintf(msg, sizeof msg, "expected a JSON object (a BUNDLE), "
		    "found %s", attn_json_kind(js.root));
		st = attn_json_fail(&js, NULL, 0, 0, msg);
		goto done;
	}

	for (m = 0, j = js.root->child; j != NULL; m++, j = j->next) {
		for (k = 0; k < KEY_COUNT; k++)
			if (strcmp(j->string, bundle_keys[k]) == 0)
				break;
		if (k == KEY_COUNT) {
			const char *hint = attn_json_key_suggestion(h, sizeof h,
			    j->string, bundle_keys, KEY_COUNT);

			snprintf(msg, sizeof msg, "unknown bundle key \"%s\"%s",
			    attn_json_key_preview(p, j->string), hint != NULL ? hint :
			    " (keys: Q, K, V, mask, bias, labels, proj, X, XQ, "
			    "XKV)");
			st = attn_json_fail(&js, &m, 1, 1, msg);
			goto done;
		}
		if (seen[k]) {
			snprintf(msg, sizeof msg, "repeated bundle key \"%s\"",
			    bundle_keys[k]);
			st = attn_json_fail(&js, &m, 1, 1, msg);
			goto done;
		}
		if (key_conflict(k, seen, msg, sizeof msg) != NULL) {
			st = attn_json_fail(&js, &m, 1, 1, msg);
			goto done;
		}
		seen[k] = 1;
		if (k == KEY_LABELS) {
			labels_m = m;
			st = json_bundle_labels(&js, j, m, out, where);
		} else if (k == KEY_PROJ) {
			proj_m = m;
			st = attn_json_layer(&js, j, &m, 1, &out->proj);
		} else {
			st = attn_json_array(&js, j, &m, 1,
			    member_flags(k, flags), arrays[k]);
		}
		if (st != ATTN_OK)
			goto done;
	}
	if (bundle_missing(seen, msg, sizeof msg) != NULL) {
		/* a layer without embeddings: point at the layer */
		st = seen[KEY_PROJ] && !seen[KEY_X] && !seen[KEY_XQ] &&
		    !seen[KEY_XKV] ? attn_json_fail(&js, &proj_m, 1, 1, msg) :
		    attn_json_fail(&js, NULL, 0, 0, msg);
		goto done;
	}
	out->embeddings = seen[KEY_X] || seen[KEY_XQ];
	st = check_label_counts(&js, out, labels_m, where);
done:
	attn_json_close(&js);
	if (st != ATTN_OK)
		attn_bundle_free(out);
	return st;
}

void
attn_bundle_free(struct attn_bundle *b)
{
	attn_array_free(&b->q);
	attn_array_free(&b->k);
	attn_array_free(&b->v);
	attn_array_free(&b->mask);
	attn_array_free(&b->bias);
	attn_labels_free(&b->query_labels);
	attn_labels_free(&b->key_labels);
	attn_layer_free(&b->proj);
	memset(b, 0, sizeof *b);
}

/* Whether c is JSON's white space. */
static int
json_space(unsigned c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

int
attn_is_bundle(const char *buf, size_t len)
{
	const unsigned char *u = (const unsigned char *)buf;
	size_t i = attn_bom_len(buf, len);

	/* A UTF-16 object too (a BOM, then code units of two bytes): a
	 * BUNDLE all the same, whose reader says it must be UTF-8. */
	if (attn_utf16_bom(buf, len)) {
		const int le = u[0] == 0xFF;
		unsigned c = ' ';

		for (i = 2; i + 1 < len && json_space(c); i += 2)
			c = le ? u[i] | (unsigned)u[i + 1] << 8 :
			    (unsigned)u[i] << 8 | u[i + 1];
		return c == '{';
	}
	while (i < len && json_space((unsigned char)buf[i]))
		i++;
	return i < len && buf[i] == '{';
}
