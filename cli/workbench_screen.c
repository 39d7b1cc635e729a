/*
 * workbench_screen.c - what the workbench's screen says, as text with no
 * terminal in it: the lines of rows x cols (each cut at the width), and
 * the spans that mark headings, the chosen query and the heatmap's cells
 * (workbench_draw.c gives them their attributes and colours).
 *
 * From the top: the title and the state of each key's setting, the
 * first two lines of --explain (the shapes, the scale); the chosen
 * query's vectors and the keys' (workbench_vectors.c), its row of
 * scores, scaled and weights, a key a line, with its entropy, effective
 * number of keys and output, and the spread of the head's scores
 * against sqrt(d_k); the heatmap of the
 * head's weights, the query marked; predict mode's question or answer;
 * then the note and the keys on the last two lines.  What does not fit
 * the height gives way (screen_layout), the query's key rows last, for
 * they are what the screen is for (the heatmap keeps a window of rows
 * around the query); below the size of one key row the screen says
 * what size it needs.  The settings and the keys drop whole items where
 * the width is short (sb_items).  Every number is written by a
 * printer's function (print_cell, print_number, stats_row,
 * heatmap_position), from the stages on screen; workbench_text.c
 * writes the lines.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "attn_io.h"
#include "print.h"
#include "workbench.h"

/* The lines each part of the screen takes (workbench_screen's layout):
 * 0 where it gives way. */
struct layout {
	size_t title, explain, formulas;
	size_t nkeys, more;	/* key rows, and the line of the rest */
	size_t entropy, output, spread;
	size_t vectors;		/* the query's and the keys': 1 + nkeys */
	size_t heat;		/* heatmap rows; 0: no heatmap */
	size_t step;		/* step mode's line */
	size_t predict;
	size_t blank[3];	/* under the head, the row, the heatmap */
};

/* Whether step mode shows step s (every step when it is off). */
static int
shown(const struct workbench *wb, enum wb_step s)
{
	return wb->step == 0 || wb->step >= (int)s;
}

/* The title, the state of each key's setting, and --explain's lines on
 * the shapes and the scale, as many as the layout gives them. */
static void
screen_head(const struct workbench *wb, const struct printer *p,
    struct sb *b, const struct layout *l)
{
	const struct attn_config *c = &wb->o->cfg;
	char where[128], brief[64], name[256], scaling[32], dk[64], dkb[32],
	    causal[32], predict[32];
	struct sb_item it[5];
	struct render head;
	char *line, *nl;
	size_t i;
	int k;

	if (!l->title) {
		/* given way */
	} else if (wb->toy) {
		sb_line(b, 1, "attn workbench: the toy, Q, K = columns 1-%zu "
		    "of attn gen 3x%d --seed %d, %d", wb->d_k, WB_TOY_DK_MAX,
		    WB_TOY_SEED_Q, WB_TOY_SEED_K);
	} else {
		/* the operands as given, escaped: a file name is any bytes */
		sb_put(b, "attn workbench: ");
		if (wb->o->self != NULL)
			sb_put(b, "--self ");
		for (i = 0; i < (wb->o->self != NULL ? 1 : wb->o->noperands);
		    i++) {
			const char *arg = wb->o->self != NULL ? wb->o->self :
			    wb->o->operands[i];

			attn_text_escape(name, sizeof name, arg, strlen(arg),
			    NULL);
			sb_printf(b, "%s%s", i > 0 ? " " : "", name);
		}
		sb_span(b, 0, WB_BOLD, 0.0);
		sb_end(b);
	}
	if (wb->stages.batches > 1) {
		snprintf(where, sizeof where, "batch %zu of %zu, head %zu of "
		    "%zu", wb->block / wb->stages.heads + 1, wb->stages.batches,
		    wb->block % wb->stages.heads + 1, wb->stages.heads);
		snprintf(brief, sizeof brief, "batch %zu head %zu",
		    wb->block / wb->stages.heads + 1,
		    wb->block % wb->stages.heads + 1);
	} else {
		snprintf(where, sizeof where, "head %zu of %zu",
		    wb->block + 1, wb->stages.heads);
		snprintf(brief, sizeof brief, "head %zu", wb->block + 1);
	}
	/* the settings, shortened by rank where the width is short: what
	 * s, c and + - change first, predict mode (whose lines show it)
	 * last */
	snprintf(scaling, sizeof scaling, "scaling %s",
	    c->scale_mode == ATTN_SCALE_NONE ? "off" : "on");
	snprintf(dk, sizeof dk, "d_k %zu%s", wb->stages.d_k, wb->toy ? "" :
	    " (your inputs')");
	snprintf(dkb, sizeof dkb, "d_k %zu", wb->stages.d_k);
	snprintf(causal, sizeof causal, "causal %s", c->causal ? "on" : "off");
	snprintf(predict, sizeof predict, "predict %s", wb->predict ? "on" :
	    "off");
	it[0] = (struct sb_item){ scaling, scaling, 0 };
	it[1] = (struct sb_item){ dk, dkb, 2 };
	it[2] = (struct sb_item){ causal, causal, 1 };
	it[3] = (struct sb_item){ where, brief, 3 };
	it[4] = (struct sb_item){ predict, predict, 4 };
	sb_items(b, it, 5, 3);
	if (l->explain == 0)
		return;
	/* --explain's first two lines: the shapes, the scale */
	if (print_explain_head_text(p, &head) != ATTN_OK) {
		render_free(&head);
		b->nomem = 1;
		return;
	}
	for (k = 0, line = head.text; (size_t)k < l->explain && (nl =
	    strchr(line, '\n')) != NULL; k++, line = nl + 1) {
		*nl = '\0';
		sb_line(b, 0, "%s", line);
	}
	render_free(&head);
}

/* The widest of the texts of stage s for the rows shown (and of its
 * name), for the columns of the query's row. */
static size_t
cell_width(const struct workbench *wb, const struct printer *p,
    enum attn_stage s, size_t nkeys)
{
	char buf[ATTN_NUM_MAX];
	size_t j, w = strlen(attn_stage_table[s].name);

	for (j = 0; j < nkeys; j++) {
		print_cell(p, s, wb->block, wb->query, j, buf);
		if (strlen(buf) > w)
			w = strlen(buf);
	}
	return w;
}

/* The columns of the query's rows: the stages shown, the labels' width
 * and each stage's, for the first nkeys keys. */
static const enum attn_stage row_stage[3] = { ATTN_STAGE_SCORES,
	ATTN_STAGE_SCALED, ATTN_STAGE_WEIGHTS };

struct row_cols {
	size_t lw, width[3];
};

static void
row_cols(const struct workbench *wb, const struct printer *p, size_t nkeys,
    struct row_cols *rc)
{
	size_t j, c;

	rc->lw = 3;		/* "key" */
	for (j = 0; j < nkeys; j++)
		if (sb_label_width(wb->nm.key[j]) > rc->lw)
			rc->lw = sb_label_width(wb->nm.key[j]);
	for (c = 0; c < 3; c++)
		rc->width[c] = cell_width(wb, p, row_stage[c], nkeys);
}

/* The columns a key row takes up to its weight. */
static size_t
row_width(const struct row_cols *rc)
{
	return rc->lw + 2 + rc->width[0] + 2 + rc->width[1] + 2 +
	    rc->width[2];
}

/* A bar of w * width columns in eighths of a block. */
static void
put_bar(struct sb *b, double w, size_t width)
{
	static const char *const part[] = { "", "\u258f", "\u258e", "\u258d",
		"\u258c", "\u258b", "\u258a", "\u2589" };
	long eighths = lround((w < 0.0 ? 0.0 : w > 1.0 ? 1.0 : w) *
	    (double)width * 8.0);

	for (; eighths >= 8; eighths -= 8)
		sb_put(b, "\u2588");
	sb_put(b, part[eighths]);
}

/* The chosen query's row of scores, scaled and weights, a key a line
 * (the layout's nkeys of the S), its entropy, effective keys and output,
 * as the layout gives them lines. */
static void
screen_row(const struct workbench *wb, const struct printer *p,
    struct sb *b, const struct layout *l)
{
	const enum attn_stage *col = row_stage;
	const size_t nkeys = l->nkeys;
	const struct attn_matrix w = print_block(p, ATTN_STAGE_WEIGHTS,
	    wb->block);
	const struct attn_matrix mask = print_block(p, ATTN_STAGE_MASK,
	    wb->block);
	const size_t S = wb->stages.S;
	const struct attn_matrix out = attn_stage_block(&wb->stages,
	    ATTN_STAGE_OUTPUT, wb->block / wb->stages.heads,
	    wb->block % wb->stages.heads);
	char buf[ATTN_NUM_MAX], f[3][128];
	const char *formula[3];
	size_t j, c, x;
	struct row_cols rc;
	struct stats_row r;

	row_cols(wb, p, nkeys, &rc);
	if (l->step)
		wb_step_line(wb, p, b);
	sb_line(b, 1, "query %s (row %zu of %zu), its row of each stage   "
	    "[T x S = %zux%zu]", wb->nm.query[wb->query], wb->query + 1,
	    wb->stages.T, wb->stages.T, S);
	/* the formulas as in force, or the one keys change when they do
	 * not fit */
	for (c = 0, x = 0; c < 3 && l->formulas; c++) {
		formula[c] = print_formula(p, col[c], f[c], sizeof f[c]);
		x += (c > 0 ? 3 : 0) + strlen(attn_stage_table[col[c]].name) +
		    3 + strlen(formula[c]);
	}
	for (c = 0; c < 3 && l->formulas; c++)
		if (x <= b->scr->cols || col[c] == ATTN_STAGE_SCALED)
			sb_printf(b, "%s%s = %s", b->col > 0 ? "   " : "",
			    attn_stage_table[col[c]].name, formula[c]);
	if (l->formulas)
		sb_end(b);
	if (l->vectors)
		wb_vectors(wb, p, b, l->vectors - 1);
	sb_put(b, "key");
	for (c = 0, x = rc.lw; c < 3; c++) {
		x += 2 + rc.width[c];
		sb_to(b, x - strlen(attn_stage_table[col[c]].name));
		if (shown(wb, (enum wb_step)(WB_STEP_SCORES + c)))
			sb_put(b, attn_stage_table[col[c]].name);
	}
	sb_span(b, 0, WB_BOLD, 0.0);
	sb_end(b);
	for (j = 0; j < nkeys; j++) {
		sb_label(b, wb->nm.key[j]);
		for (c = 0, x = rc.lw; c < 3; c++) {
			x += 2 + rc.width[c];
			if (!shown(wb, (enum wb_step)(WB_STEP_SCORES + c)))
				buf[0] = '\0';	/* a stage step mode has not
						 * reached: a blank */
			else if (c == 2 && wb->asking)
				snprintf(buf, sizeof buf, "?");
			else
				print_cell(p, col[c], wb->block, wb->query, j,
				    buf);
			sb_to(b, x - strlen(buf));
			sb_put(b, buf);
		}
		if (wb->asking || !shown(wb, WB_STEP_WEIGHTS) ||
		    *attn_at(&mask, wb->query, j) == 0.0 ||
		    isnan(*attn_at(&w, wb->query, j))) {
			sb_end(b);
			continue;
		}
		sb_printf(b, "  %5.1f%% ", 100.0 * *attn_at(&w, wb->query, j));
		put_bar(b, *attn_at(&w, wb->query, j),
		    b->scr->cols > b->col + 20 ? 20 : b->scr->cols - b->col);
		sb_end(b);
	}
	if (l->more)
		sb_line(b, 0, "\u2026 and %zu more key%s", S - nkeys,
		    S - nkeys == 1 ? "" : "s");
	stats_row(p, wb->block, wb->query, &r);
	if (!l->entropy) {
		/* given way */
	} else if (!shown(wb, WB_STEP_WEIGHTS)) {
		sb_line(b, 0, "entropy and effective keys: with the weights, "
		    "step %d", WB_STEP_WEIGHTS);
	} else if (wb->asking || !r.defined) {
		sb_line(b, 0, "entropy %s   effective keys exp(entropy) %s   "
		    "keys it may attend %zu", wb->asking ? "?" : "-",
		    wb->asking ? "?" : "-", r.keys);
	} else {
		char e[ATTN_NUM_MAX], n[ATTN_NUM_MAX];

		print_number(p, e, r.entropy);
		print_number(p, n, exp(r.entropy));
		sb_line(b, 0, "entropy %s nats   effective keys exp(entropy) "
		    "%s of %zu", e, n, r.keys);
	}
	if (l->output) {
		sb_printf(b, "output = weights V   [T x d_v = %zux%zu]:",
		    wb->stages.T, wb->stages.d_v);
		if (!shown(wb, WB_STEP_OUTPUT))
			sb_printf(b, "  step %d", WB_STEP_OUTPUT);
		for (c = 0; c < out.cols && shown(wb, WB_STEP_OUTPUT); c++) {
			if (wb->asking)
				snprintf(buf, sizeof buf, "?");
			else
				print_number(p, buf, *attn_at(&out, wb->query,
				    c));
			sb_printf(b, "  %s", buf);
		}
		sb_end(b);
	}
	if (l->spread && shown(wb, WB_STEP_SCALED))
		wb_spread(wb, p, b);
	else if (l->spread)
		sb_end(b);	/* its line, blank until scaled shows */
}

/* The weights of the block as a heatmap, nrows rows around the query
 * (marked), cells coloured by heatmap_position, and its legend. */
static void
screen_heatmap(const struct workbench *wb, const struct printer *p,
    struct sb *b, size_t nrows, int color)
{
	const struct attn_matrix w = print_block(p, ATTN_STAGE_WEIGHTS,
	    wb->block);
	const struct attn_matrix mask = print_block(p, ATTN_STAGE_MASK,
	    wb->block);
	const size_t T = wb->stages.T, S = wb->stages.S;
	/* hidden: until a guess ("?" cells), or until step mode reaches the
	 * weights (blank cells) */
	const int hide = wb->asking || !shown(wb, WB_STEP_WEIGHTS);
	const char *const hidden = wb->asking ? "?" : " ";
	size_t lw = 0, kw = 0, W, i, j, i0, ncols, col, k, x0, room;
	struct heat_scale hs;
	char top[2 * ATTN_NUM_MAX + 64];

	heatmap_scale_init(&hs, p);
	for (i = 0; i < T; i++)
		if (sb_label_width(wb->nm.query[i]) > lw)
			lw = sb_label_width(wb->nm.query[i]);
	for (j = 0; j < S; j++)
		if (sb_label_width(wb->nm.key[j]) > kw)
			kw = sb_label_width(wb->nm.key[j]);
	/* a column a key, as wide as its longest label and a blank where
	 * the S columns fit, else narrower down to 4 (labels cut to 3
	 * columns with their mark), and then only the first keys */
	x0 = lw + 3;		/* the marker, the label and a blank */
	room = b->scr->cols > x0 ? b->scr->cols - x0 : 0;
	W = kw < 1 ? 2 : kw + 1;
	if (S > 0 && S * W > room)
		W = room / S > 4 ? room / S : W < 4 ? W : 4;
	ncols = room / W > 0 ? room / W : 1;
	ncols = ncols > S ? S : ncols;
	/* rows: a window of nrows that holds the query */
	i0 = wb->query >= nrows / 2 ? wb->query - nrows / 2 : 0;
	i0 = i0 + nrows > T ? (T > nrows ? T - nrows : 0) : i0;
	sb_printf(b, "weights   [T x S = %zux%zu]", T, S);
	if (wb->asking)
		sb_put(b, "   (hidden: your guess first)");
	else if (hide)
		sb_printf(b, "   (step %d)", WB_STEP_WEIGHTS);
	sb_line(b, 1, "%s", ncols < S ? "   (the first keys)" : "");
	sb_to(b, x0);
	for (j = 0; j < ncols; j++) {
		/* the key's label in W - 1 columns, right-aligned */
		sb_to(b, x0 + (j + 1) * W - sb_label_width_in(wb->nm.key[j],
		    W - 1));
		sb_label_in(b, wb->nm.key[j], W - 1);
	}
	sb_end(b);
	for (i = i0; i < i0 + nrows && i < T; i++) {
		sb_put(b, i == wb->query ? "\u25b6 " : "  ");
		sb_label(b, wb->nm.query[i]);
		if (i == wb->query)
			sb_span(b, 0, WB_MARK, 0.0);
		sb_to(b, x0);
		for (j = 0; j < ncols; j++) {
			double x = *attn_at(&w, i, j);
			double pos = heatmap_position(&hs, p, wb->block, i, x);
			const char *cell = *attn_at(&mask, i, j) == 0.0 ?
			    "\u00b7" : isnan(x) ? "?" : color ? " " :
			    heatmap_shade(pos);

			col = b->col;
			for (k = 0; k < W; k++)	/* hidden: "   ?" */
				sb_put(b, !hide ? cell : k + 1 < W ? " " :
				    hidden);
			if (color && !hide && *attn_at(&mask, i, j) != 0.0
			    && !isnan(x))
				sb_span(b, col, WB_HEAT, pos);
		}
		sb_end(b);
	}
	/* the legend: the scale from 0 to its top, and a masked cell */
	sb_put(b, color ? "0 " : "0 [");
	for (k = 0; k < (color ? 9u : 5u); k++) {
		double pos = (double)k / (color ? 8.0 : 4.0);

		col = b->col;
		sb_put(b, color ? "  " : heatmap_shade(pos));
		if (!color)
			sb_put(b, heatmap_shade(pos));
		else
			sb_span(b, col, WB_HEAT, pos);
	}
	sb_printf(b, "%s%s   \u00b7\u00b7 masked", color ? " " : "] ",
	    heatmap_top_text(&hs, p, top, sizeof top));
	/* a range chosen for a narrow band says why, as far as it fits */
	if (hs.chosen)
		sb_printf(b, "   (%s)", heatmap_chosen_text(&hs, p, top,
		    sizeof top));
	sb_end(b);
}

/* Predict mode's lines: the question, or the answer to the last guess. */
static void
screen_predict(const struct workbench *wb, const struct printer *p,
    struct sb *b)
{
	char e0[ATTN_NUM_MAX], e1[ATTN_NUM_MAX], n0[ATTN_NUM_MAX],
	    n1[ATTN_NUM_MAX];
	const struct stats_row *x = &wb->before, *y = &wb->after;
	const char *said = wb->guess == 'm' ? "more concentrated" :
	    wb->guess == 'f' ? "more spread" : "about the same", *was;

	if (wb->asking) {
		sb_line(b, 1, "Predict: the weights of %s, more concentrated, "
		    "more spread or about the same?", wb->nm.query[wb->query]);
		sb_line(b, 0, "m more concentrated   f more spread   a about "
		    "the same   p leaves predict mode");
		return;
	}
	if (wb->guess == 0) {
		if (wb->predict)
			sb_line(b, 0, "Predict mode: change something (a query, "
			    "s, + -, c, h) and guess before the weights show.");
		return;
	}
	if (!x->defined || !y->defined) {
		sb_line(b, 0, "A row that may attend no key has no softmax: "
		    "no entropy to compare.");
		return;
	}
	print_number(p, e0, x->entropy);
	print_number(p, e1, y->entropy);
	print_number(p, n0, exp(x->entropy));
	print_number(p, n1, exp(y->entropy));
	was = fabs(y->entropy - x->entropy) < WB_SAME_NATS ? "about the same" :
	    y->entropy < x->entropy ? "more concentrated" : "more spread";
	sb_line(b, 1, "entropy %s \u2192 %s nats, effective keys %s \u2192 %s: "
	    "%s.", e0, e1, n0, n1, was);
	sb_line(b, 0, "You said %s: %s%s.", said, strcmp(said, was) == 0 ?
	    "right" : "not this time", strcmp(was, "about the same") == 0 ?
	    " (it moved under " WB_SAME_NATS_TEXT " nats)" : "");
}

/* Up to want of the *left lines, and at least min, else none. */
static size_t
take(size_t *left, size_t want, size_t min)
{
	size_t n = want < *left ? want : *left;

	if (n < min || n == 0)
		return 0;
	*left -= n;
	return n;
}

/*
 * The layout of a screen of rows lines; returns 0 when it cannot hold
 * one key row, with *need the lines that can.  The query's weights are
 * what the screen is for, and give way last: a key row takes the lines
 * first, then the row's entropy, predict mode's lines (which ask about
 * the weights or answer), the other key rows, the output, the title,
 * the spread of the scores, the heatmap (with a row), --explain's
 * lines, the formulas, the vectors (all of them or none), the heatmap's
 * other rows, and the blanks between parts.
 */
static int
screen_layout(const struct workbench *wb, size_t rows, struct layout *l,
    size_t *need)
{
	const size_t S = wb->stages.S, T = wb->stages.T;
	size_t left, room, k;

	memset(l, 0, sizeof *l);
	/* the settings, the query's line, the column heads, a key row and
	 * the line that counts the rest, the note and the keys */
	*need = 3 + 1 + (S > 1) + 2;
	if (rows < *need)
		return 0;
	left = rows - *need;
	l->entropy = take(&left, 1, 1);
	l->step = take(&left, wb->step ? 1 : 0, 1);
	l->predict = take(&left, wb->asking || wb->guess != 0 ? 2 :
	    wb->predict ? 1 : 0, 1);
	room = left + 1 + (S > 1);	/* for key rows and that line */
	if (room >= S) {
		l->nkeys = S;
		left = room - S;
	} else {
		l->nkeys = room - 1;
		l->more = 1;
		left = 0;
	}
	/* step mode starts at the vectors: they come before the rest */
	if (wb->step)
		l->vectors = take(&left, 1 + l->nkeys, 1 + l->nkeys);
	l->output = take(&left, 1, 1);
	l->title = take(&left, 1, 1);
	l->spread = take(&left, 1, 1);
	l->heat = take(&left, 4, 4) > 0;	/* its head, a row, legend */
	l->explain = take(&left, 2, 1);
	l->formulas = take(&left, 1, 1);
	if (!wb->step)
		l->vectors = take(&left, 1 + l->nkeys, 1 + l->nkeys);
	if (l->heat)
		l->heat += take(&left, T - 1, 0);
	for (k = 0; k < 3; k++)
		l->blank[k] = take(&left, 1, 1);
	return 1;
}

enum attn_status
workbench_screen(const struct workbench *wb, size_t rows, size_t cols,
    int color, struct wb_screen *scr, struct attn_error *err)
{
	struct sb b = { 0 };
	struct attn_error perr = { 0 };
	struct printer p;
	struct layout l;
	struct row_cols rc;
	char small[128];
	size_t need, width, k;

	memset(scr, 0, sizeof *scr);
	scr->rows = rows;
	scr->cols = cols;
	if (rows == 0 || (scr->line = calloc(rows, sizeof *scr->line)) ==
	    NULL)
		return rows == 0 ? ATTN_OK : attn_error_set(err,
		    ATTN_ERR_NOMEM, NULL, 0, 0, "out of memory for the screen");
	b.scr = scr;
	b.limit = rows;
	wb_printer(wb, &p, &perr);
	/* the width of a key row, whichever keys the height shows */
	row_cols(wb, &p, wb->stages.S, &rc);
	width = row_width(&rc);
	if (!screen_layout(wb, rows, &l, &need) || cols < width) {
		snprintf(small, sizeof small, "window too small\n(needs %zu "
		    "x %zu):\nq quits\n", width, need);
		sb_phrases(&b, small);
	} else {
		b.limit = rows - 2;	/* the note and the keys */
		if (wb->help) {
			memset(&l, 0, sizeof l);
			l.title = l.blank[0] = 1;
			l.explain = 2;
		}
		screen_head(wb, &p, &b, &l);
		if (l.blank[0])
			sb_end(&b);
		if (wb->help) {
			wb_help(&b);
		} else {
			screen_row(wb, &p, &b, &l);
			if (l.blank[1])
				sb_end(&b);
			if (l.heat)
				screen_heatmap(wb, &p, &b, l.heat, color);
			if (l.blank[2])
				sb_end(&b);
			/* predict mode's lines, as many as it has */
			k = b.n + l.predict;
			b.limit = k < b.limit ? k : b.limit;
			screen_predict(wb, &p, &b);
			b.limit = rows - 2;
		}
		/* the note and the keys at the bottom */
		while (b.n + 2 < rows && !b.nomem)
			sb_end(&b);
		b.limit = rows;
		sb_line(&b, 0, "%s", wb->note);
		wb_keys(wb, &b);
	}
	free(b.buf);
	if (b.nomem) {
		wb_screen_free(scr);
		return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "out of memory for the screen");
	}
	return ATTN_OK;
}

void
wb_screen_free(struct wb_screen *scr)
{
	size_t i;

	for (i = 0; scr->line != NULL && i < scr->rows; i++)
		free(scr->line[i]);
	free(scr->line);
	free(scr->span);
	memset(scr, 0, sizeof *scr);
}
