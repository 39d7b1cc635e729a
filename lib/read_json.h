/*
 * read_json.h - a JSON text as its readers hold it: the text, checked by
 * attn_json_scan, its plain arrays, and cJSON's tree of the rest; and
 * what the readers of JSON's schemas (read_layer.c, read_bundle.c) share
 * with the array reader (read_json.c).  Internal to lib/: cJSON's types
 * appear here and in no public header.
 */
#ifndef ATTN_READ_JSON_H
#define ATTN_READ_JSON_H

#include <cJSON.h>

#include "internal.h"

/* The longest path a locator follows: a bundle member, then a member of
 * "proj", one index a dimension and one more for an element past the end
 * of a row. */
#define ATTN_JSON_PATH_MAX (ATTN_MAX_DIMS + 2)

/* A JSON text being read.  root is cJSON's tree of it, with each plain
 * array cut down to [] (attn_json_array finds its numbers in plain). */
struct attn_json {
	const char *name;
	const char *buf;
	size_t len;
	struct attn_error *err;
	struct attn_json_plains plain;
	cJSON *root;
	size_t tree_bytes;	/* what cJSON's tree was charged */
};

/* Check buf[0..len) (attn_json_scan) and build its tree into *js; free
 * with attn_json_close, whether it failed or not. */
enum attn_status attn_json_parse(struct attn_json *js, const char *name,
    const char *buf, size_t len, struct attn_error *err);

void attn_json_close(struct attn_json *js);

/* Report msg as a data error at the value (or key) that path[0..n)
 * leads to. */
enum attn_status attn_json_fail(const struct attn_json *js,
    const size_t *path, size_t n, int key, const char *msg);

/* What a value is, for "expected X, found Y": "a number", "an array" .. */
const char *attn_json_kind(const cJSON *j);

/*
 * Read the array node, found in the text along base[0..nbase), into out
 * with the reader flags (ATTN_READ_*): its shape is that of its first
 * elements, all the way down, and every value meets attn_value_fault's
 * rules.  A JSON object at the top (nbase 0) is refused as a BUNDLE
 * where a matrix was expected.
 */
enum attn_status attn_json_array(struct attn_json *js, const cJSON *node,
    const size_t *base, size_t nbase, unsigned flags,
    struct attn_array *out);

/* A key of the user's text for a message, previewed into p
 * (ATTN_PREVIEW_MAX + 4 bytes); returns p. */
const char *attn_json_key_preview(char *p, const char *key);

/* ": keys are case-sensitive; did you mean \"Q\"?" or ": did you mean
 * \"labels\"?" for an unknown key near one of names[0..n) (attn_suggest),
 * in buf; NULL when none is near. */
const char *attn_json_key_suggestion(char *buf, size_t size,
    const char *key, const char *const *names, size_t n);

/*
 * In the text: the offset of the value reached from the top by
 * path[0..n), each step an element index in an array or a member index
 * in an object (in document order, repeated keys included, as cJSON
 * keeps them).  With key set, the last step stops at the member's key
 * instead of its value.  A step past the last element stops at the
 * closing bracket, which is where a short row is reported.
 */
size_t attn_json_locate(const struct attn_json *js, const size_t *path,
    size_t n, int key);

/* The start of the element after the value at offset i (past it and its
 * ','), or of the closing bracket. */
size_t attn_json_next_element(const struct attn_json *js, size_t i);

/* read_layer.c: the layer object obj, found along base[0..nbase) (a
 * layer's file, or a bundle's "proj"); on failure the caller frees
 * *out. */
enum attn_status attn_json_layer(struct attn_json *js, const cJSON *obj,
    const size_t *base, size_t nbase, struct attn_layer *out);

#endif /* ATTN_READ_JSON_H */
