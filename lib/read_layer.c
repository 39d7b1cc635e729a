/*
 * read_layer.c - a projection layer as JSON holds it: {"W_Q": .., "W_K":
 * .., "W_V": .., "W_O": .., "b_Q": ..}, read from its own file (--proj)
 * or from a bundle's "proj"; or as numpy.savez writes the same arrays
 * by name in a .npz (--proj).
 *
 * The keys are checked in document order, so that the first thing wrong
 * is what is told: an unknown key with what it may have meant (a key of
 * nn.MultiheadAttention's state dict, a bundle's key, a slip of the
 * keyboard), a repeated one, a W that is no matrix, a b that is no
 * vector; then what is missing.  A file that is no JSON value at all (a
 * .npy, a CSV matrix) is told as what it is.
 */
#include <stdio.h>
#include <string.h>

#include "read_json.h"

/* Layer keys, in the order missing ones are reported; every W before
 * every b. */
enum layer_key { LK_WQ, LK_WK, LK_WV, LK_WO, LK_BQ, LK_BK, LK_BV, LK_BO,
    LK_COUNT };
static const char *const layer_keys[LK_COUNT] = {
	"W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V", "b_O"
};

/* The array of out that layer key k fills. */
static struct attn_array *
layer_array(struct attn_layer *out, size_t k)
{
	struct attn_array *const a[LK_COUNT] = {
		&out->w_q, &out->w_k, &out->w_v, &out->w_o,
		&out->b_q, &out->b_k, &out->b_v, &out->b_o,
	};

	return a[k];
}

/* What an unknown layer key may have meant, in buf or static. */
static const char *
layer_key_hint(char *buf, size_t size, const char *key)
{
	const char *s;

	if (strncmp(key, "in_proj_", 8) == 0)
		return ": nn.MultiheadAttention's in_proj_weight stacks W_Q, "
		    "W_K and W_V transposed; give W_Q = in_proj_weight[:E].T "
		    "and so on";
	if (strcmp(key, "Q") == 0 || strcmp(key, "K") == 0 ||
	    strcmp(key, "V") == 0 || strcmp(key, "X") == 0 ||
	    strcmp(key, "proj") == 0)
		return ": that is a BUNDLE key, and this file a BUNDLE, not a "
		    "layer";
	if ((s = attn_json_key_suggestion(buf, size, key, layer_keys,
	    LK_COUNT)) !=
	    NULL)
		return s;
	return " (expected W_Q, W_K, W_V, W_O, b_Q, b_K, b_V or b_O)";
}

/* Whether array a cannot be layer key k's (a W is a matrix, a b a
 * vector), with the message in msg. */
static int
shape_fault(size_t k, const struct attn_array *a, char *msg, size_t size)
{
	if (k < LK_BQ && a->ndim != 2) {
		snprintf(msg, size, "%s must be a matrix (a 2-D array), not "
		    "%zu-D", layer_keys[k], a->ndim);
		return 1;
	}
	if (k >= LK_BQ && (a->ndim > 2 || (a->ndim == 2 && a->shape[0] != 1 &&
	    a->shape[1] != 1))) {
		if (a->ndim == 2)
			snprintf(msg, size, "%s must be a vector (one value "
			    "per column of its W), not %zux%zu", layer_keys[k],
			    a->shape[0], a->shape[1]);
		else
			snprintf(msg, size, "%s must be a vector (a 1-D "
			    "array), not %zu-D", layer_keys[k], a->ndim);
		return 1;
	}
	return 0;
}

/* Whether a W the layer needs is missing (seen[k] of each key), with the
 * message in msg. */
static int
missing_fault(const int *seen, char *msg, size_t size)
{
	size_t k;

	for (k = LK_WQ; k <= LK_WV; k++)
		if (!seen[k]) {
			snprintf(msg, size, "layer has no \"%s\" (a layer needs "
			    "W_Q, W_K and W_V)", layer_keys[k]);
			return 1;
		}
	return 0;
}

/* Its W and b arrays are read finite, whatever the caller's flags, each
 * checked to be a matrix or a vector at its own position. */
enum attn_status
attn_json_layer(struct attn_json *js, const cJSON *obj, const size_t *base,
    size_t nbase, struct attn_layer *out)
{
	const unsigned flags = ATTN_READ_FINITE | ATTN_READ_LAYER;
	size_t path[ATTN_JSON_PATH_MAX] = { 0 }, m, k, where_bo = 0;
	int seen[LK_COUNT] = { 0 };
	char msg[ATTN_MSG_MAX], p[ATTN_PREVIEW_MAX + 4], hint[64];
	struct attn_array *a;
	enum attn_status st;
	const cJSON *j;

	if (nbase > 0)
		memcpy(path, base, nbase * sizeof *base);
	if (!cJSON_IsObject(obj)) {
		snprintf(msg, sizeof msg, "a layer is a JSON object {\"W_Q\": "
		    ".., \"W_K\": .., \"W_V\": ..}, not %s", attn_json_kind(obj));
		return attn_json_fail(js, path, nbase, 0, msg);
	}
	for (m = 0, j = obj->child; j != NULL; m++, j = j->next) {
		path[nbase] = m;
		for (k = 0; k < LK_COUNT; k++)
			if (strcmp(j->string, layer_keys[k]) == 0)
				break;
		if (k == LK_COUNT) {
			snprintf(msg, sizeof msg, "unknown layer key \"%s\"%s",
			    attn_json_key_preview(p, j->string),
			    layer_key_hint(hint, sizeof hint, j->string));
			return attn_json_fail(js, path, nbase + 1, 1, msg);
		}
		if (seen[k]) {
			snprintf(msg, sizeof msg, "repeated layer key \"%s\"",
			    layer_keys[k]);
			return attn_json_fail(js, path, nbase + 1, 1, msg);
		}
		seen[k] = 1;
		if (k == LK_BO)
			where_bo = m;
		a = layer_array(out, k);
		if ((st = attn_json_array(js, j, path, nbase + 1, flags, a)) !=
		    ATTN_OK)
			return st;
		if (shape_fault(k, a, msg, sizeof msg))
			return attn_json_fail(js, path, nbase + 1, 0, msg);
	}
	if (missing_fault(seen, msg, sizeof msg))
		return attn_json_fail(js, path, nbase, 0, msg);
	if (seen[LK_BO] && !seen[LK_WO]) {
		path[nbase] = where_bo;
		return attn_json_fail(js, path, nbase + 1, 1, "b_O without W_O: "
		    "the output bias goes with the output projection");
	}
	return ATTN_OK;
}

/* Whether buf[0..len) is empty but for a BOM and bytes up to the space
 * (which the JSON scan calls empty). */
static int
blank(const char *buf, size_t len)
{
	size_t i = attn_bom_len(buf, len);

	while (i < len && (unsigned char)buf[i] <= 0x20)
		i++;
	return i == len;
}

/*
 * A layer given as something that is no JSON value at all (a .npy file,
 * a zip archive, a matrix as text or as printed), which the JSON parser
 * would refuse for a NUL byte or a stray word: say what a layer is and
 * what the file looks like.  A JSON value that is no object is told by
 * json_layer, at its place.
 */
static enum attn_status
layer_kind_fault(const char *name, const char *buf, size_t len,
    struct attn_error *err)
{
	struct attn_error scratch;
	const char *what;

	if (len >= 4 && memcmp(buf, "PK", 2) == 0 && (buf[2] == 3 ||
	    buf[2] == 5))
		what = "a zip archive";
	else
		switch (attn_format_guess(NULL, buf, len)) {
		case ATTN_FMT_JSON:
			return ATTN_OK;
		case ATTN_FMT_NPY:
			what = "a .npy file, one unnamed array";
			break;
		case ATTN_FMT_REPR:
			what = "an array as NumPy or PyTorch prints it, one "
			    "unnamed matrix";
			break;
		case ATTN_FMT_CSV:
		case ATTN_FMT_TSV:
		case ATTN_FMT_TEXT:
		case ATTN_FMT_AUTO:
		default:
			/* Not what is empty, or no text (the scan names
			 * the encoding, where it fails). */
			if (blank(buf, len) ||
			    attn_encoding_fault(&scratch, name, buf, len,
			    "JSON") != ATTN_OK)
				return ATTN_OK;
			what = "text (CSV, TSV or white space), one unnamed "
			    "matrix";
			break;
		}
	return attn_error_set(err, ATTN_ERR_DATA, name, 0, 0, "a layer holds "
	    "W_Q, W_K and W_V (and W_O, b_Q, ..) by name, as a JSON object "
	    "{\"W_Q\": .., \"W_K\": .., \"W_V\": ..}; this is %s", what);
}

/*
 * A layer as a .npz (numpy.savez(path, W_Q=.., W_K=.., W_V=..)): the
 * arrays by name, held to the rules of the JSON layer's keys; the
 * errors name the archive and the array.
 */
static enum attn_status
read_npz_layer(const char *name, const char *buf, size_t len,
    struct attn_layer *out, struct attn_error *err)
{
	const unsigned flags = ATTN_READ_FINITE | ATTN_READ_LAYER;
	char msg[ATTN_MSG_MAX], p[ATTN_PREVIEW_MAX + 4], hint[64];
	int seen[LK_COUNT] = { 0 };
	struct attn_named z;
	enum attn_status st;
	size_t i, k;

	if ((st = attn_read_npz(name, buf, len, flags, &z, err)) != ATTN_OK)
		return st;
	for (i = 0; i < z.count && st == ATTN_OK; i++) {
		const char *key = z.arrays[i].name;

		for (k = 0; k < LK_COUNT; k++)
			if (strcmp(key, layer_keys[k]) == 0)
				break;
		if (k == LK_COUNT) {
			attn_text_preview(p, ATTN_PREVIEW_MAX, key, strlen(key));
			st = attn_error_set(err, ATTN_ERR_DATA, name, 0, 0,
			    "unknown layer array '%s'%s", p,
			    layer_key_hint(hint, sizeof hint, key));
			break;
		}
		seen[k] = 1;
		*layer_array(out, k) = z.arrays[i].array;
		memset(&z.arrays[i].array, 0, sizeof z.arrays[i].array);
		if (shape_fault(k, layer_array(out, k), msg, sizeof msg))
			st = attn_error_set(err, ATTN_ERR_DATA, name, 0, 0, "%s",
			    msg);
	}
	if (st == ATTN_OK && missing_fault(seen, msg, sizeof msg))
		st = attn_error_set(err, ATTN_ERR_DATA, name, 0, 0, "%s", msg);
	if (st == ATTN_OK && seen[LK_BO] && !seen[LK_WO])
		st = attn_error_set(err, ATTN_ERR_DATA, name, 0, 0, "b_O "
		    "without W_O: the output bias goes with the output "
		    "projection");
	attn_named_free(&z);
	return st;
}

enum attn_status
attn_read_layer(const char *name, const char *buf, size_t len,
    struct attn_layer *out, struct attn_error *err)
{
	struct attn_json js;
	enum attn_status st;

	memset(out, 0, sizeof *out);
	if (attn_is_zip(buf, len)) {
		if ((st = read_npz_layer(name, buf, len, out, err)) != ATTN_OK)
			attn_layer_free(out);
		return st;
	}
	if ((st = layer_kind_fault(name, buf, len, err)) != ATTN_OK)
		return st;
	if ((st = attn_json_parse(&js, name, buf, len, err)) == ATTN_OK)
		st = attn_json_layer(&js, js.root, NULL, 0, out);
	attn_json_close(&js);
	if (st != ATTN_OK)
		attn_layer_free(out);
	return st;
}

struct attn_proj
attn_layer_proj(const struct attn_layer *l)
{
	struct attn_proj w;

	/* An absent array (ndim 0) is an absent matrix (data NULL). */
	w.w_q = attn_array_matrix(&l->w_q);
	w.w_k = attn_array_matrix(&l->w_k);
	w.w_v = attn_array_matrix(&l->w_v);
	w.w_o = attn_array_matrix(&l->w_o);
	w.b_q = attn_array_matrix(&l->b_q);
	w.b_k = attn_array_matrix(&l->b_k);
	w.b_v = attn_array_matrix(&l->b_v);
	w.b_o = attn_array_matrix(&l->b_o);
	return w;
}

void
attn_layer_free(struct attn_layer *l)
{
	size_t k;

	for (k = 0; k < LK_COUNT; k++)
		attn_array_free(layer_array(l, k));
}
