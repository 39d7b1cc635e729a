/*
 * check.h - --check FILE: stages compared with a kernel's results, the
 * report (a table, or JSON for CI) and the verdict, exit 1 when one
 * fails.  FILE is one array (the one stage of --stage), or named arrays
 * (a .npz, or a JSON object) that name the stages they hold, by attn's
 * names or FlashAttention's (out, softmax_lse, dq, dk, dv): every stage
 * is checked from the one computation.  The numbers come from libattn
 * (attn_compare, attn_emulate); check.c reads FILE and lines each array
 * up with its stage, check_hint.c looks for what a failure means,
 * check_report.c says what it found.
 */
#ifndef ATTN_CHECK_H
#define ATTN_CHECK_H

#include <stdio.h>

#include "attn.h"
#include "attn_io.h"
#include "attn_private.h"
#include "check_item.h"
#include "options.h"

/* Read FILE (o->check) before anything is computed, so that a bad FILE
 * fails fast. */
enum attn_status check_load(const struct options *o, struct check *c,
    struct attn_error *err);

/* Once the inputs say which stages the run offers: the stage of each
 * array.  Without --stage, FILE's named arrays choose the stages
 * (o->stages is set to them); with it, each stage needs its array. */
enum attn_status check_stages(struct options *o, struct check *c,
    struct attn_error *err);

/* Compare each stage with its array, computing the emulated baseline of
 * in with --emulate.  A shape that does not line up is a data error
 * naming both when FILE is one array; in a named FILE it is that
 * stage's failing row (it->misfit), and the others are still compared. */
enum attn_status check_run(const struct options *o,
    const struct attn_inputs *in, const struct attn_stages *stages,
    struct check *c, struct attn_error *err);

/* Whether array i of a named FILE goes unchecked (1) or not (0); when
 * it does, why in buf (names no stage, with "did you mean" when its
 * name is near a stage's or FlashAttention's; a stage the run does not
 * make; one --stage leaves out), and the name it is near in *near (a
 * static string) or NULL. */
int check_unchecked(const struct options *o, const struct check *c,
    size_t i, char *buf, size_t size, const char **near);

/* The report, as a table or as JSON (-f json). */
void check_print(FILE *fp, const struct options *o,
    const struct attn_stages *stages, const struct check *c);

/* The place of element flat of the stage of it (attn_stage_where's), and
 * in a packed batch its sequence (from 0) in *seq, row and column (when
 * the columns are keys) counted within it; *seq is SIZE_MAX when nothing
 * is packed or the stage is not in rows of queries or keys. */
void check_where(const struct attn_stages *stages, const struct check *c,
    enum attn_stage s, size_t flat, struct attn_where *w, size_t *seq);

/* Whether every stage passed: exit 0, else 1. */
int check_passed(const struct check *c);
int check_item_passed(const struct check_item *it);

void check_free(struct check *c);

#endif
