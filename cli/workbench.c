/*
 * workbench.c - attn workbench: a few tokens, one query row at a time,
 * for a learner to change the query, the scaling, d_k, the causal mask
 * and the head and see what each does to the weights, or to guess first
 * (predict mode).
 *
 * This file is the workbench's logic, with no terminal in it: what it
 * holds (struct workbench, workbench.h), how it starts (workbench_open)
 * and what each key does (workbench_key): the changes (query, s, +, -,
 * c, h), predict mode (p) and step mode (t), which shows the stages one
 * at a time.  workbench_screen.c says what
 * the screen shows, and workbench_draw.c puts that on a terminal
 * through ncurses.
 *
 * Every number shown is one of attn's stages from attn_run with the
 * options of the moment, written by the printers' own functions
 * (print_cell, stats_row, heatmap_position): a key changes the
 * options and runs again, so that the screen after any key shows what
 * `attn -s scores,scaled,weights --stats` prints for the same options.
 * A key whose run fails (d_k odd with --rope, say) is undone, and the
 * note line says why.
 *
 * The toy, without operands: three tokens whose Q and K are the first
 * D columns of `attn gen 3x1024 --seed 1` and `--seed 2` at the current
 * d_k = D (8 to start, doubled by + and halved by -, 1 to 1024), so that
 * raw dot products grow like sqrt(d_k), and V = [[1, 0], [0, 1], [1, 1]].
 * Both are drawn once at their full width and shown as views: a change
 * of d_k keeps the first columns and adds or drops the others, so the
 * example stays the same and d_k is the only change.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "attn_io.h"
#include "inputs.h"
#include "labels.h"
#include "load.h"
#include "memory.h"
#include "print.h"
#include "workbench.h"

/* The toy's tokens, seeds, and d_k: where it starts and its bounds. */
#define TOY_T 3
#define TOY_LABELS "the,cat,sat"
#define TOY_DK 8
static const double toy_v[TOY_T][2] = { { 1, 0 }, { 0, 1 }, { 1, 1 } };

/* The stages on screen (lse comes with them). */
#define WB_STAGES (ATTN_STAGE_BIT(ATTN_STAGE_SCORES) | \
	ATTN_STAGE_BIT(ATTN_STAGE_SCALED) | \
	ATTN_STAGE_BIT(ATTN_STAGE_WEIGHTS) | \
	ATTN_STAGE_BIT(ATTN_STAGE_OUTPUT) | ATTN_STAGE_BIT(ATTN_STAGE_MASK))

/* -------------------------------------------------------------- running */

/* The stages the workbench holds: those on screen, and the q, k and v
 * that a projection layer or RoPE makes, which its vectors show. */
static unsigned
wb_want(const struct workbench *wb)
{
	return WB_STAGES | (attn_stages_available(&wb->o->cfg, &wb->in.in) &
	    ATTN_STAGES_PROJ & ~ATTN_STAGE_BIT(ATTN_STAGE_PROJECTED));
}

void
wb_printer(const struct workbench *wb, struct printer *p,
    struct attn_error *err)
{
	print_init(p, NULL, wb->o, &wb->stages, &wb->nm, &wb->in.in, err);
}

/* The statistics of the row on screen (entropy, effective keys). */
static void
wb_row_stats(const struct workbench *wb, struct stats_row *r)
{
	struct attn_error err = { 0 };
	struct printer p;

	wb_printer(wb, &p, &err);
	stats_row(&p, wb->block, wb->query, r);
}

/* The toy's Q and K at d_k columns: the first d_k of those drawn. */
static void
toy_fill(struct workbench *wb)
{
	wb->in.in.q = attn_matrix_view(&wb->tq, 0, TOY_T, 0, wb->d_k);
	wb->in.in.k = attn_matrix_view(&wb->tk, 0, TOY_T, 0, wb->d_k);
	wb->in.in.v = wb->tv;
	wb->in.in.batches = 1;
}

/* Compute the stages for the options of the moment, and name their
 * rows; on success they replace those on screen. */
static enum attn_status
wb_run(struct workbench *wb, struct attn_error *err)
{
	struct attn_stages stages = { 0 };
	struct attn_labels q = { 0 }, k = { 0 };
	enum attn_status s;
	struct attn_shape sh;

	if (wb->toy)
		toy_fill(wb);
	if ((s = attn_run(&wb->o->cfg, &wb->in.in, wb_want(wb), &stages,
	    err)) != ATTN_OK)
		return s;
	if ((s = name_rows(wb->o, &wb->in, &stages, &q, &k, err)) != ATTN_OK) {
		attn_stages_free(&stages);
		return s;
	}
	attn_stages_free(&wb->stages);
	attn_labels_free(&wb->qlab);
	attn_labels_free(&wb->klab);
	wb->stages = stages;
	wb->qlab = q;
	wb->klab = k;
	wb->nm.query = q.names;
	wb->nm.key = k.names;
	wb->nm.value = name_values(&wb->in, &wb->stages);
	attn_stage_shape(&wb->stages, ATTN_STAGE_WEIGHTS, &sh);
	if (wb->query >= stages.T)
		wb->query = stages.T - 1;
	if (wb->block >= sh.blocks)
		wb->block = 0;
	return ATTN_OK;
}

/* The note line: printf-like. */
static void
wb_note(struct workbench *wb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(wb->note, sizeof wb->note, fmt, ap);
	va_end(ap);
}

/* The note at a limit of the toy's d_k, d_k: the key that goes on. */
static void
wb_dk_limit(struct workbench *wb, size_t d_k)
{
	if (d_k >= WB_TOY_DK_MAX)
		wb_note(wb, "d_k %zu is the toy's largest: - halves it", d_k);
	else
		wb_note(wb, "d_k %zu is the toy's smallest: + doubles it", d_k);
}

/*
 * A key that changes what is shown: s, +, -, c (which run again), the
 * query and h (which only move).  In predict mode the weights then hide
 * until a guess (asking), the row's statistics before the change kept
 * to answer it.
 */
static void
wb_change(struct workbench *wb, int key)
{
	const struct attn_config cfg = wb->o->cfg;
	const size_t d_k = wb->d_k;
	const size_t blocks = wb->stages.batches * wb->stages.heads;
	struct attn_error err = { 0 };
	struct stats_row before;
	int run = 1;

	wb_row_stats(wb, &before);
	switch (key) {
	case WB_KEY_UP:
	case 'k':
		wb->query = (wb->query + wb->stages.T - 1) % wb->stages.T;
		run = 0;
		break;
	case WB_KEY_DOWN:
	case 'j':
		wb->query = (wb->query + 1) % wb->stages.T;
		run = 0;
		break;
	case 'h':
		if (blocks == 1) {
			wb_note(wb, wb->toy ? "h shows the next head: the toy "
			    "has one (with --heads your Q K V have more)" :
			    "h shows the next head: these inputs have one "
			    "(--heads H splits them into H)");
			return;
		}
		wb->block = (wb->block + 1) % blocks;
		run = 0;
		break;
	case 's':
		wb->o->cfg.scale_mode = cfg.scale_mode == ATTN_SCALE_NONE ?
		    wb->scale_on : ATTN_SCALE_NONE;
		break;
	case 'c':
		wb->o->cfg.causal = !cfg.causal;
		break;
	case '+':
	case '-':
		if (!wb->toy) {
			wb_note(wb, "d_k is %zu, fixed by your inputs: + and - "
			    "change the toy's (attn workbench alone)",
			    wb->stages.d_k);
			return;
		}
		if ((key == '+' && d_k >= WB_TOY_DK_MAX) ||
		    (key == '-' && d_k <= 1)) {
			wb_dk_limit(wb, d_k);
			return;
		}
		wb->d_k = key == '+' ? 2 * d_k : d_k / 2;
		break;
	}
	if (run && wb_run(wb, &err) != ATTN_OK) {
		/* undone: the stages on screen are still those of cfg */
		wb->o->cfg = cfg;
		wb->d_k = d_k;
		if (wb->toy)
			toy_fill(wb);
		wb_note(wb, "attn: %s (the key is undone)", err.msg);
		return;
	}
	if (wb->toy && (wb->d_k == 1 || wb->d_k == WB_TOY_DK_MAX))
		wb_dk_limit(wb, wb->d_k);
	wb->guess = 0;
	if (wb->predict) {
		wb->asking = 1;
		wb->before = before;
	}
}

/* Step mode's n (on, next) or b (back): one part more or less, and at
 * either end a note that says which key goes on. */
static void
wb_step(struct workbench *wb, int on)
{
	if (!wb->step)
		wb_note(wb, "n and b move through the stages in step mode: t "
		    "starts it");
	else if (on && wb->step == WB_STEPS)
		wb_note(wb, "the last step: b goes back, t shows every stage");
	else if (!on && wb->step == WB_STEP_VECTORS)
		wb_note(wb, "the first step: n goes on, t shows every stage");
	else
		wb->step += on ? 1 : -1;
}

int
workbench_key(struct workbench *wb, int key)
{
	/* a resize is no key of the learner's: the note stays */
	if (key == WB_KEY_RESIZE)
		return 0;
	wb->note[0] = '\0';
	if (key == 'q')
		return 1;
	if (wb->asking) {
		/* predict mode: m, f and a answer (s is the scaling's key,
		 * and the scaling stays as it is until the answer); p leaves
		 * it */
		if (key == 'm' || key == 'f' || key == 'a') {
			wb->asking = 0;
			wb->guess = key;
			wb_row_stats(wb, &wb->after);
		} else if (key == 'p') {
			wb->asking = wb->predict = 0;
		} else {
			wb_note(wb, "first your guess: m (more concentrated), "
			    "f (more spread) or a (about the same)");
		}
		return 0;
	}
	switch (key) {
	case WB_KEY_UP:
	case WB_KEY_DOWN:
	case 'k':
	case 'j':
	case 'h':
	case 's':
	case 'c':
	case '+':
	case '-':
		wb_change(wb, key);
		break;
	case 't':
		wb->step = wb->step ? 0 : WB_STEP_VECTORS;
		break;
	case 'n':
	case WB_KEY_RIGHT:
	case 'b':
	case WB_KEY_LEFT:
		wb_step(wb, key == 'n' || key == WB_KEY_RIGHT);
		break;
	case 'p':
		wb->predict = !wb->predict;
		wb->guess = 0;
		break;
	case '?':
		wb->help = !wb->help;
		break;
	default:
		wb_note(wb, "that key does nothing here: ? lists the keys");
		break;
	}
	return 0;
}

/* ------------------------------------------------------------ the start */

/* The user's inputs, checked against the memory limit for every stage
 * the workbench holds, as attn checks a run. */
static enum attn_status
wb_load(struct workbench *wb, struct attn_error *err)
{
	enum attn_status status;
	size_t need;

	if ((status = load_inputs(wb->o, &wb->in, err)) != ATTN_OK ||
	    (status = attn_plan(&wb->o->cfg, &wb->in.in, wb_want(wb), &need,
	    err)) != ATTN_OK)
		return status;
	return memory_admit_run(&wb->in.query, &wb->in.key, wb->in.in.q.rows +
	    wb->in.in.k.rows, need, err);
}

/* The toy: Q and K drawn at their full width (attn gen's numbers), V,
 * and the tokens' names unless the options give others. */
static enum attn_status
wb_toy(struct workbench *wb, struct attn_error *err)
{
	enum attn_status status;
	size_t i;

	wb->toy = 1;
	wb->d_k = TOY_DK;
	if ((status = attn_matrix_alloc(&wb->tq, TOY_T, WB_TOY_DK_MAX, err)) !=
	    ATTN_OK || (status = attn_matrix_alloc(&wb->tk, TOY_T,
	    WB_TOY_DK_MAX, err)) != ATTN_OK ||
	    (status = attn_matrix_alloc(&wb->tv, TOY_T, 2, err)) != ATTN_OK)
		return status;
	attn_random_fill(&wb->tq, WB_TOY_SEED_Q, ATTN_DIST_NORMAL);
	attn_random_fill(&wb->tk, WB_TOY_SEED_K, ATTN_DIST_NORMAL);
	for (i = 0; i < TOY_T; i++) {
		*attn_at(&wb->tv, i, 0) = toy_v[i][0];
		*attn_at(&wb->tv, i, 1) = toy_v[i][1];
	}
	if (wb->o->query_labels == NULL)
		wb->o->query_labels = TOY_LABELS;
	if (wb->o->key_labels == NULL)
		wb->o->key_labels = wb->o->query_labels;
	return ATTN_OK;
}

enum attn_status
workbench_open(struct workbench *wb, struct options *o,
    struct attn_error *err)
{
	enum attn_status status;

	memset(wb, 0, sizeof *wb);
	wb->o = o;
	wb->scale_on = o->cfg.scale_mode == ATTN_SCALE_NONE ?
	    ATTN_SCALE_DEFAULT : o->cfg.scale_mode;
	status = o->noperands == 0 && o->self == NULL ? wb_toy(wb, err) :
	    wb_load(wb, err);
	if (status == ATTN_OK)
		status = wb_run(wb, err);
	return status;
}

void
workbench_free(struct workbench *wb)
{
	attn_stages_free(&wb->stages);
	attn_labels_free(&wb->qlab);
	attn_labels_free(&wb->klab);
	attn_matrix_free(&wb->tq);
	attn_matrix_free(&wb->tk);
	attn_matrix_free(&wb->tv);
	if (!wb->toy)
		inputs_free(&wb->in);
}
