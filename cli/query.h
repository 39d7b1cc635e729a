/*
 * query.h - --query I,J..: only those query rows (1-based, in the order
 * given) in what is printed.  The run computes every row, since causal
 * masks, windows, ALiBi and RoPE place query i by its row; then
 * query_select keeps the chosen rows of every held stage whose rows are
 * queries, and of what the printers read beside the stages (Q, the mask,
 * the bias, dO and the query labels).  Stages whose rows are keys (k, v,
 * k_rot, grad_k, grad_v) stay whole.
 */
#ifndef ATTN_QUERY_H
#define ATTN_QUERY_H

#include "attn.h"
#include "attn_io.h"
#include "options.h"

/* The rows of the list, checked as --query's value is: whole numbers
 * from 1, comma-separated.  *count is how many; a usage error naming the
 * list otherwise. */
enum attn_status query_parse(const char *list, size_t *count,
    struct attn_error *err);

/* What query_select made: the inputs as the printers read them, with
 * the chosen rows of Q, mask, bias and dO (owned here), and each chosen
 * row's place in Q. */
struct query {
	struct attn_inputs in;
	size_t *row;		/* n rows of Q, from 0 */
	size_t n;
	struct attn_matrix own[4];	/* what in holds that is ours */
};

/*
 * With --query (o->query), keep its rows of stages and of labels and make q
 * the inputs the printers read; o->query_row and o->query_T then say
 * where each row came from.  A row past T, or one listed twice, is a
 * usage error.  Without --query, q->in is a copy of *in and nothing
 * changes.
 */
enum attn_status query_select(struct options *o, const struct attn_inputs *in,
    struct attn_stages *stages, struct attn_labels *labels, struct query *q,
    struct attn_error *err);

void query_free(struct query *q);

#endif
