/*
 * check_hint.h - what --check makes of an array that does not match its
 * stage (check_hint.c).
 */
#ifndef ATTN_CHECK_HINT_H
#define ATTN_CHECK_HINT_H

#include "attn.h"
#include "attn_io.h"
#include "check_item.h"
#include "options.h"

/* Whether an array can stand for the stage of shape sh; when it cannot,
 * the mismatch naming both shapes (why) and what the array's dims
 * suggest (hint, "" when nothing), or the two as one data error; after a
 * failure, what it matches instead (it->hint), alt room for the stage's
 * numbers. */
int check_shape_fits(const struct attn_array *f, const struct attn_shape *sh);
void check_shape_why(char *why, size_t wsize, char *hint, size_t hsize,
    const struct attn_stages *stages, const struct check *c,
    const struct check_item *it);
enum attn_status check_shape_error(const struct attn_stages *stages,
    const struct check *c, const struct check_item *it,
    struct attn_error *err);
void check_find_hint(const struct options *o, const struct attn_inputs *in,
    const struct attn_stages *stages, const struct check *c,
    struct check_item *it, double *alt);

/* "B x H x T x d_v": the dims of stage s in symbols. */
void check_dims_legend(char *buf, size_t size, enum attn_stage s,
    const struct attn_shape *sh);

#endif
