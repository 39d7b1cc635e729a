/*
 * workbench.h - attn workbench, the teaching workbench in a terminal: its
 * logic, with no terminal in it (workbench.c: what it holds and what a
 * key does; workbench_screen.c: what the screen says, as lines of text
 * and spans, which workbench_text.c writes, the vectors and the spread
 * of the scores from workbench_vectors.c, the words about the keys from
 * workbench_keys.c), and its drawing
 * (workbench_draw.c: the terminal, through ncurses).
 */
#ifndef ATTN_WORKBENCH_H
#define ATTN_WORKBENCH_H

#include <stddef.h>

#include "attn.h"
#include "attn_io.h"
#include "inputs.h"
#include "options.h"
#include "print.h"
#include "stats.h"

/* ---------------------------------------------------- workbench.c */

/* The toy's seeds and widest d_k: its Q and K are the first d_k columns
 * of attn gen 3xWB_TOY_DK_MAX --seed these. */
#define WB_TOY_SEED_Q 1
#define WB_TOY_SEED_K 2
#define WB_TOY_DK_MAX 1024

/* Predict mode judges a change of entropy under this many nats as about
 * the same: the effective number of keys, exp(entropy), moves by less
 * than 1%, which no one reads off the weights (attn(1)). */
#define WB_SAME_NATS 0.01
#define WB_SAME_NATS_TEXT "0.01"	/* WB_SAME_NATS as the screen writes it */

/* Step mode's steps, each showing one part more: the vectors, then the
 * stages in the order they are computed. */
enum wb_step {
	WB_STEP_VECTORS = 1,
	WB_STEP_SCORES,
	WB_STEP_SCALED,
	WB_STEP_WEIGHTS,
	WB_STEP_OUTPUT,
	WB_STEPS = WB_STEP_OUTPUT
};

/* What the workbench holds: the inputs, the options of the moment, the
 * stages computed for them (names included), and where the learner is. */
struct workbench {
	struct options *o;	/* how to compute: keys change o->cfg */
	struct inputs in;	/* the user's, or the toy's views */
	int toy;
	size_t d_k;			/* the toy's */
	struct attn_matrix tq, tk, tv;	/* the toy's Q, K (3 x WB_TOY_DK_MAX,
					 * shown 3 x d_k), V (3 x 2) */
	enum attn_scale_mode scale_on;	/* what s turns back on */
	struct attn_stages stages;	/* the run on screen */
	struct attn_labels qlab, klab;
	struct names nm;
	size_t query, block;	/* the query row and the (batch, head) */
	int help;		/* ? shows the keys */
	int predict;		/* p: guess before the weights show */
	int asking;		/* the weights hidden until m, f or a */
	int guess;		/* 'm', 'f' or 'a' once given, else 0 */
	int step;		/* t: the step shown (enum wb_step), or 0 for
				 * every stage */
	struct stats_row before, after;	/* the row's, around a change */
	char note[ATTN_MSG_MAX + 64];	/* errors and notes */
};

/* Read what o names (or make the toy) into wb and run it once; wb is
 * workbench_free'd afterwards, failed or not. */
enum attn_status workbench_open(struct workbench *wb, struct options *o,
    struct attn_error *err);
void workbench_free(struct workbench *wb);

/* A printer of the stages on screen, for their cells, numbers and
 * statistics (print.h). */
void wb_printer(const struct workbench *wb, struct printer *p,
    struct attn_error *err);

/* Keys besides characters, as the drawing reads them. */
enum {
	WB_KEY_UP = 0x110000,	/* past Unicode: no character */
	WB_KEY_DOWN,
	WB_KEY_RIGHT,
	WB_KEY_LEFT,
	WB_KEY_RESIZE
};

/* Do what key says; returns 1 when it is q (quit), else 0. */
int workbench_key(struct workbench *wb, int key);

/* How a span of a line looks. */
enum wb_look {
	WB_BOLD,		/* a heading */
	WB_MARK,		/* the chosen query (reverse video) */
	WB_HEAT			/* a heatmap cell: colour at pos (0 to 1) */
};

/* A span of line `line`, `width` columns from column `col`. */
struct wb_span {
	size_t line, col, width;
	enum wb_look look;
	double pos;		/* WB_HEAT: heatmap_position's */
};

/* The screen: `rows` lines of UTF-8 text, each at most `cols` columns
 * (the last is the key help), and the spans that colour or stress
 * parts of them. */
struct wb_screen {
	size_t rows, cols;
	char **line;		/* rows lines, each owned */
	struct wb_span *span;
	size_t nspans, cap;
};

/* ------------------------------------------------ workbench_text.c */

/* A screen being written: the line under way, its bytes and its width
 * in columns; lines past limit are dropped, and nomem says that memory
 * ran out (the screen is then given up). */
struct sb {
	struct wb_screen *scr;
	size_t n;		/* lines done */
	size_t limit;		/* lines past it are dropped */
	char *buf;
	size_t len, cap, col;
	int nomem;
};

/* s put on the line under way, as much of it as fits the width. */
void sb_put(struct sb *b, const char *s);
void sb_printf(struct sb *b, const char *fmt, ...);
/* Blanks up to column col. */
void sb_to(struct sb *b, size_t col);
/* A span of the line under way, from column col to the current one. */
void sb_span(struct sb *b, size_t col, enum wb_look look, double pos);
/* The line under way ended (past the limit, dropped). */
void sb_end(struct sb *b);
/* A whole line, bold when it is a heading. */
void sb_line(struct sb *b, int bold, const char *fmt, ...);

/* A label in at most max columns (max >= 1), or in 16 (sb_label): whole
 * when it fits, else its first columns and a "~" that marks it cut; and
 * the columns each gives it. */
void sb_label_in(struct sb *b, const char *s, size_t max);
void sb_label(struct sb *b, const char *s);
size_t sb_label_width_in(const char *s, size_t max);
size_t sb_label_width(const char *s);

/* An item of a line of settings or of keys: its text, a shorter one, and
 * its rank (0 is given way last). */
struct sb_item {
	const char *text, *brief;
	int rank;
};

/* A line of items in order, never one cut: all of them sep blanks apart,
 * else two apart, else brief, else without those of the highest rank
 * down to the one of rank 0 (and if even that does not fit, none). */
void sb_items(struct sb *b, const struct sb_item *it, size_t n,
    size_t sep);
/* The phrases of text (each ended by a '\n'), a line as many as fit the
 * width, a blank between two on a line. */
void sb_phrases(struct sb *b, const char *text);

/* --------------------------------------------- workbench_vectors.c */

/* The vectors the query's scores are made of, a line each: the query's
 * row of Q, and for each of the first nkeys keys its row of K and, where
 * it fits, of V; as many of their first columns as the width holds. */
void wb_vectors(const struct workbench *wb, const struct printer *p,
    struct sb *b, size_t nkeys);
/* A line: the standard deviation of the head's scores (kept and finite)
 * against sqrt(d_k), and that of its scaled logits. */
void wb_spread(const struct workbench *wb, const struct printer *p,
    struct sb *b);

/* ------------------------------------------------ workbench_keys.c */

/* The keys, for ?. */
void wb_help(struct sb *b);
/* The keys of the mode the workbench is in, as many as fit a line. */
void wb_keys(const struct workbench *wb, struct sb *b);
/* Step mode's line: the step, and the stage it adds with its formula. */
void wb_step_line(const struct workbench *wb, const struct printer *p,
    struct sb *b);

/* ---------------------------------------------- workbench_screen.c */

/* What the screen of rows x cols says now; with color, heatmap cells are
 * blanks that WB_HEAT spans colour, else shade characters.  Fails only
 * when out of memory.  wb_screen_free frees it. */
enum attn_status workbench_screen(const struct workbench *wb, size_t rows,
    size_t cols, int color, struct wb_screen *scr, struct attn_error *err);
void wb_screen_free(struct wb_screen *scr);

/* --------------------------------------------- workbench_draw.c */

/* Check that the terminal is one, read what o names (or make the toy),
 * and run the workbench until q.  Returns the status for the exit code,
 * with the message in err: a usage error when standard input or output
 * is not a terminal. */
enum attn_status workbench_main(struct options *o, struct attn_error *err);

/* Take the terminal (standard input and output, which must be one),
 * draw wb's screen, pass each key to workbench_key until it says quit,
 * and give the terminal back as it was, whatever happens (a signal
 * included).  o says whether to colour (--color, NO_COLOR). */
enum attn_status workbench_draw(struct workbench *wb,
    const struct options *o, struct attn_error *err);

#endif
