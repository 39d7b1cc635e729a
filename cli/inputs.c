/*
 * inputs.c - from operands to matrices.  Three operands are Q, K and V;
 * one is a JSON BUNDLE; --self X is all three.  Files are read whole
 * (io_slurp) and parsed by libattn; labels come from a first column of
 * names (Q's for queries, K's for keys) or from the bundle.
 */
#include <stdlib.h>
#include <string.h>

#include "inputs.h"
#include "internal.h"
#include "io.h"

/* Labels move from one struct to another without copying. */
static void
labels_move(struct attn_labels *to, struct attn_labels *from)
{
	*to = *from;
	memset(from, 0, sizeof *from);
}

/* Batches (3-D and 4-D arrays) are a later feature: say so clearly. */
static enum attn_status
check_2d(const struct attn_array *a, const char *name,
    struct attn_error *err)
{
	if (a->ndim <= 2)
		return ATTN_OK;
	return error_set(err, ATTN_ERR_DATA, name, 0, 0,
	    "%zu-D input (a batch of matrices) is not supported yet; "
	    "give 1-D or 2-D arrays", a->ndim);
}

static const char *
display_name(const char *path)
{
	return strcmp(path, "-") == 0 ? STDIN_NAME : path;
}

/* Read one matrix file. */
static enum attn_status
load_array(const char *path, struct attn_array *a, struct attn_error *err)
{
	const char *name = display_name(path);
	enum attn_status st;
	char *buf;
	size_t len;

	if ((st = io_slurp(path, &buf, &len, err)) != ATTN_OK)
		return st;
	if (attn_is_bundle(buf, len))
		st = error_set(err, ATTN_ERR_DATA, name, 0, 0, "a JSON "
		    "BUNDLE object must be the only operand");
	else
		st = attn_read_array(name, buf, len, ATTN_FMT_AUTO,
		    ATTN_READ_FINITE, a, err);
	free(buf);
	if (st == ATTN_OK && (st = check_2d(a, name, err)) != ATTN_OK)
		attn_array_free(a);
	return st;
}

static enum attn_status
load_bundle(const char *path, struct inputs *in, struct attn_error *err)
{
	const char *name = display_name(path);
	struct attn_bundle b;
	enum attn_status st;
	char *buf;
	size_t len, i;

	if ((st = io_slurp(path, &buf, &len, err)) != ATTN_OK)
		return st;
	if (!attn_is_bundle(buf, len)) {
		free(buf);
		return error_set(err, ATTN_ERR_DATA, name, 0, 0,
		    "one operand must be a JSON BUNDLE object "
		    "{\"Q\": .., \"K\": .., \"V\": ..}; "
		    "give Q K V as three files, or --self X");
	}
	st = attn_read_bundle(name, buf, len, ATTN_READ_FINITE, &b, err);
	free(buf);
	if (st != ATTN_OK)
		return st;
	in->arr[0] = b.q;
	in->arr[1] = b.k;
	in->arr[2] = b.v;
	labels_move(&in->query, &b.query_labels);
	labels_move(&in->key, &b.key_labels);
	for (i = 0; i < 3; i++)
		if ((st = check_2d(&in->arr[i], name, err)) != ATTN_OK)
			return st;
	return ATTN_OK;
}

enum attn_status
inputs_load(const struct options *o, struct inputs *in,
    struct attn_error *err)
{
	enum attn_status st;
	size_t i;

	memset(in, 0, sizeof *in);

	if (o->self != NULL) {
		if ((st = load_array(o->self, &in->arr[0], err)) != ATTN_OK)
			return st;
		in->q = in->k = in->v = attn_array_matrix(&in->arr[0]);
		in->query = in->arr[0].row_labels;
		in->key = in->arr[0].row_labels;
		return ATTN_OK;
	}
	if (o->noperands == 1) {
		if ((st = load_bundle(o->operands[0], in, err)) != ATTN_OK)
			return st;
	} else {
		for (i = 0; i < 3; i++)
			if ((st = load_array(o->operands[i], &in->arr[i],
			    err)) != ATTN_OK)
				return st;
		labels_move(&in->query, &in->arr[0].row_labels);
		labels_move(&in->key, &in->arr[1].row_labels);
	}
	in->q = attn_array_matrix(&in->arr[0]);
	in->k = attn_array_matrix(&in->arr[1]);
	in->v = attn_array_matrix(&in->arr[2]);
	return ATTN_OK;
}

void
inputs_free(struct inputs *in)
{
	size_t i;

	/* With --self, query and key borrow arr[0]'s labels. */
	if (in->query.names != in->arr[0].row_labels.names)
		attn_labels_free(&in->query);
	if (in->key.names != in->arr[0].row_labels.names)
		attn_labels_free(&in->key);
	for (i = 0; i < 3; i++)
		attn_array_free(&in->arr[i]);
	memset(in, 0, sizeof *in);
}
