/*
 * check_item.h - what --check holds (no code of its own, so that check.c,
 * check_hint.c and check_report.c share it without a circle): each stage
 * against one array of FILE, and the check as a whole.
 */
#ifndef ATTN_CHECK_ITEM_H
#define ATTN_CHECK_ITEM_H

#include "attn.h"
#include "attn_io.h"
#include "slurp.h"

/* One stage against one array of FILE. */
struct check_item {
	const char *array;		/* its name in FILE; NULL: FILE itself */
	struct attn_array file;		/* the array as read; from a .npz,
					 * its dims alone (data NULL) until
					 * its shape fits the stage's */
	size_t member;			/* a .npz's: the array's member */
	enum attn_stage stage;		/* the stage compared */
	struct attn_shape shape;	/* its shape */
	const double *ref;		/* the stage in C order of its shape:
					 * the stage's own numbers where they
					 * lie so (--check refuses --query,
					 * which would replace them), else
					 * ref_own */
	double *ref_own;		/* the copy, or NULL */
	double *emu;			/* the emulated baseline's, or NULL */
	struct attn_compare cmp;	/* the array against ref */
	struct attn_compare base;	/* emu against ref, with --emulate */
	double *head_max;		/* max abs error per (batch, head),
					 * batches x heads; inf where nan or
					 * inf is on one side only */
	size_t batches, heads;
	double *seq_max;		/* the same per (sequence, head) of a
					 * packed batch, seqs x heads; NULL
					 * when nothing is packed */
	double *base_head_max;		/* head_max and seq_max of the */
	double *base_seq_max;		/* emulated baseline, or NULL */
	/* --check-by head: each (batch, head), or (sequence, head) where
	 * seq_max is, judged against its own baseline's error, floored at
	 * unit_floor, the median of them all (check.c says why). */
	int by_unit;			/* judged so */
	int by_seq;			/* the units are (sequence, head) */
	size_t units, units_failing;	/* how many, how many fail */
	size_t unit_worst;		/* the one furthest over (or nearest
					 * to) its bound */
	double unit_floor, unit_bound;	/* the floor; unit_worst's bound */
	int misfit;			/* its shape does not line up with the
					 * stage's: a failing row, nothing
					 * compared (a named FILE; one array
					 * alone is a data error) */
	char hint[320];			/* what it matches instead, what its
					 * dims suggest when a misfit, or "" */
};

struct check {
	const char *name;		/* FILE as messages name it */
	int named;			/* FILE holds named arrays */
	struct attn_named arrays;	/* those, until check_stages takes
					 * what it checks; the names stay,
					 * those not taken named in the report
					 * as not checked */
	struct attn_npz_part *parts;	/* a .npz in memory, its members */
	size_t nparts;			/* (slurp_archive), else 0 */
	struct slurp bytes;		/* a .npz's bytes, kept to read the
					 * data of the members checked */
	size_t n;			/* stages checked */
	/* A packed batch (attn_inputs.varlen, seqs 0 when none): failures
	 * are placed in their sequence, and errors given per sequence. */
	size_t seqs;
	const size_t *cu_q, *cu_k;
	struct check_item item[ATTN_STAGE_COUNT];
};

#endif
