/*
 * labels.c - names for queries and keys, and for V's columns.  An
 * option's list must name every row; a file's names (a first column of
 * names, a bundle's "labels", a header row) were checked by the reader;
 * what is left gets q1.., k1...
 *
 * Every name is kept escaped (attn_text_escape), since every printer
 * writes them where a terminal may read them: a control character in
 * --query-labels becomes \xHH here, once, and the widths of tables are
 * those of what is shown.  (The readers refuse such labels in files.)
 */
#define _POSIX_C_SOURCE 200809L	/* strndup */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "attn_io.h"
#include "labels.h"

/* s[0..len) escaped, owned by the caller; NULL when out of memory.  It
 * takes the bytes it needs (memory.c charges a copy of each label). */
static char *
escaped_dup(const char *s, size_t len)
{
	char *out, *fit;
	size_t n;

	if (len > (SIZE_MAX - 1) / 4 || (out = malloc(4 * len + 1)) == NULL)
		return NULL;
	n = attn_text_escape(out, 4 * len + 1, s, len, NULL);
	fit = realloc(out, n + 1);
	return fit != NULL ? fit : out;
}

/* Split "a,b,c" into n labels, which must be exactly want. */
static enum attn_status
split_labels(const char *list, const char *option, size_t want,
    const char *rows, struct attn_labels *out, struct attn_error *err)
{
	size_t n = 1, i;
	const char *p;

	for (p = list; *p != '\0'; p++)
		n += *p == ',';
	if (n != want)
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "%s gives %zu label%s for %zu %s", option, n,
		    n == 1 ? "" : "s", want, rows);
	if (list[0] == '\0' || list[0] == ',' || strstr(list, ",,") != NULL ||
	    list[strlen(list) - 1] == ',')
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "%s has an empty label", option);
	if ((out->names = attn_alloc_array(n, sizeof *out->names)) == NULL)
		return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "out of memory");
	out->count = 0;
	for (p = list, i = 0; i < n; i++) {
		size_t len = strcspn(p, ",");

		if ((out->names[i] = escaped_dup(p, len)) == NULL) {
			attn_labels_free(out);
			return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
			    "out of memory");
		}
		out->count++;
		p += len + 1;
	}
	return ATTN_OK;
}

/* Default names: prefix1, prefix2, ... */
static enum attn_status
number_labels(const char *prefix, size_t n, struct attn_labels *out,
    struct attn_error *err)
{
	if ((out->names = attn_alloc_array(n, sizeof *out->names)) == NULL)
		return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "out of memory");
	for (out->count = 0; out->count < n; out->count++) {
		char buf[32];

		snprintf(buf, sizeof buf, "%s%zu", prefix, out->count + 1);
		if ((out->names[out->count] = strndup(buf,
		    strlen(buf))) == NULL) {
			attn_labels_free(out);
			return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
			    "out of memory");
		}
	}
	return ATTN_OK;
}

/*
 * The names of n rows: the option's list, else the file's (which must
 * match n), else prefix1..prefixn.
 */
static enum attn_status
pick_labels(const char *option_value, const char *option,
    const struct attn_labels *from_file, const char *prefix, size_t n,
    const char *rows, struct attn_labels *out, struct attn_error *err)
{
	size_t i;

	memset(out, 0, sizeof *out);
	if (option_value != NULL)
		return split_labels(option_value, option, n, rows, out, err);
	if (from_file->count == 0)
		return number_labels(prefix, n, out, err);
	if (from_file->count != n)
		return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
		    "%zu labels given for %zu %s", from_file->count, n, rows);
	if ((out->names = attn_alloc_array(n, sizeof *out->names)) == NULL)
		return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "out of memory");
	for (i = 0; i < n; i++) {
		if ((out->names[i] = escaped_dup(from_file->names[i],
		    strlen(from_file->names[i]))) == NULL) {
			attn_labels_free(out);
			return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
			    "out of memory");
		}
		out->count++;
	}
	return ATTN_OK;
}

enum attn_status
name_rows(const struct options *o, const struct inputs *in,
    const struct attn_stages *stages, struct attn_labels *query,
    struct attn_labels *key, struct attn_error *err)
{
	const char *qopt = o->query_labels, *kopt = o->key_labels;
	const char *qname = "--query-labels", *kname = "--key-labels";
	enum attn_status status;

	/* In self-attention (--self X, --proj LAYER X) the rows of X are
	 * the queries and the keys: their names, and either option's list
	 * when the other is not given, name both. */
	if (in->self && kopt == NULL) {
		kopt = qopt;
		kname = qname;
	} else if (in->self && qopt == NULL) {
		qopt = kopt;
		qname = kname;
	}
	status = pick_labels(qopt, qname, &in->query, "q", stages->T,
	    stages->T == 1 ? "query" : "queries", query, err);
	if (status != ATTN_OK)
		return status;
	return pick_labels(kopt, kname,
	    in->self && in->key.count == 0 ? &in->query : &in->key, "k",
	    stages->S,
	    stages->S == 1 ? "key" : "keys", key, err);
}

char **
name_values(const struct inputs *in, const struct attn_stages *stages)
{
	/* V is X with --self; with a layer the operands are embeddings,
	 * whose columns are not V's */
	const struct attn_labels *l = in->self ? &in->arr[IN_Q].col_labels :
	    &in->arr[IN_V].col_labels;

	if (in->embeddings || l->count == 0 ||
	    l->count != stages->kv_heads * stages->d_v)
		return NULL;
	return l->names;
}

