/*
 * check.h - --check FILE: a stage compared with a kernel's result, the
 * report (a table, or JSON for CI) and the verdict, exit 1 when it
 * fails.  The numbers come from libattn (attn_compare, attn_emulate);
 * check.c reads FILE, lines it up with the stage and says what it found.
 */
#ifndef ATTN_CHECK_H
#define ATTN_CHECK_H

#include <stdio.h>

#include "attn.h"
#include "attn_io.h"
#include "options.h"

struct check {
	const char *name;		/* FILE as messages name it */
	struct attn_array file;		/* FILE as read */
	enum attn_stage stage;		/* the stage compared */
	struct attn_shape shape;	/* its shape */
	double *ref;			/* the stage in C order of its shape */
	double *emu;			/* the emulated baseline's, or NULL */
	struct attn_compare cmp;	/* FILE against ref */
	struct attn_compare base;	/* emu against ref, with --emulate */
	char hint[320];			/* what FILE matches instead, or "" */
};

/* Read FILE (o->check) before anything is computed, so that a bad FILE
 * fails fast. */
enum attn_status check_load(const struct options *o, struct check *c,
    struct attn_error *err);

/* Compare the stage with FILE (a shape that does not line up is a data
 * error naming both), computing the emulated baseline of in with
 * --emulate. */
enum attn_status check_run(const struct options *o,
    const struct attn_inputs *in, const struct attn_stages *stages,
    struct check *c, struct attn_error *err);

/* The report, as a table or as JSON (-f json). */
void check_print(FILE *fp, const struct options *o,
    const struct attn_stages *stages, const struct check *c);

/* Whether the check passed: exit 0, else 1. */
int check_passed(const struct check *c);

void check_free(struct check *c);

#endif
