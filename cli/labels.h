/*
 * labels.h - names for the rows (queries) and key columns of the stages:
 * from --query-labels and --key-labels, else from the files, else q1..,
 * k1..; and V's names for its columns, from its header.
 */
#ifndef ATTN_LABELS_H
#define ATTN_LABELS_H

#include "attn.h"
#include "attn_io.h"
#include "inputs.h"
#include "options.h"

/* Names for the T queries and the S keys of stages, owned by the caller
 * (attn_labels_free). */
enum attn_status name_rows(const struct options *o, const struct inputs *in,
    const struct attn_stages *stages, struct attn_labels *query,
    struct attn_labels *key, struct attn_error *err);

/* The names of V's G*d_v columns from its file's header row (X's with
 * --self), owned by in; NULL when it has none, or with --proj. */
char **name_values(const struct inputs *in, const struct attn_stages *stages);

#endif
