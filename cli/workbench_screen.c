/*
 * workbench_screen.c - what the workbench's screen says, as text with no
 * terminal in it: the lines of rows x cols (each cut at the width), and
 * the spans that mark headings, the chosen query and the heatmap's cells
 * (workbench_draw.c gives them their attributes and colours).
 *
 * From the top: the title and the state of each key's setting, the
 * first two lines of --explain (the shapes, the scale); the chosen
 * query's row of scores, scaled and weights, a key a line, with its
 * entropy, effective number of keys and output; the heatmap of the
 * head's weights, the query marked; predict mode's question or answer;
 * then the note and the keys on the last two lines.  What does not fit
 * the height gives way: blank lines first, then keys and heatmap rows
 * (the heatmap keeps a window of rows around the query).  Every number
 * is written by a printer's function (print_cell, print_number,
 * stats_row, heatmap_position), from the stages on screen.
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

/* The screen being written: the line under way and its width. */
struct sb {
	struct wb_screen *scr;
	size_t n;		/* lines done */
	size_t limit;		/* lines past it are dropped */
	char *buf;
	size_t len, cap, col;
	int nomem;
};

/* s appended to the line, as much of it as fits the width. */
static void
sb_put(struct sb *b, const char *s)
{
	size_t len, w;

	for (; *s != '\0' && !b->nomem; s += len) {
		len = print_char(s, &w);
		if (b->col + w > b->scr->cols)
			return;
		if (b->len + len + 1 > b->cap) {
			size_t cap = 2 * b->cap + len + 64;
			char *p = realloc(b->buf, cap);

			if (p == NULL) {
				b->nomem = 1;
				return;
			}
			b->buf = p;
			b->cap = cap;
		}
		memcpy(b->buf + b->len, s, len);
		b->len += len;
		b->buf[b->len] = '\0';
		b->col += w;
	}
}

/* printf-like sb_put. */
static void
sb_vprintf(struct sb *b, const char *fmt, va_list ap)
{
	char text[512];

	vsnprintf(text, sizeof text, fmt, ap);
	sb_put(b, text);
}

static void
sb_printf(struct sb *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sb_vprintf(b, fmt, ap);
	va_end(ap);
}

/* Blanks up to column col. */
static void
sb_to(struct sb *b, size_t col)
{
	while (b->col < col && b->col < b->scr->cols && !b->nomem)
		sb_put(b, " ");
}

/* A span of the line under way, from column col to the current one. */
static void
sb_span(struct sb *b, size_t col, enum wb_look look, double pos)
{
	struct wb_screen *s = b->scr;

	if (b->n >= b->limit || col >= b->col || b->nomem)
		return;
	if (s->nspans == s->cap) {
		size_t cap = 2 * s->cap + 32;
		struct wb_span *p = realloc(s->span, cap * sizeof *p);

		if (p == NULL) {
			b->nomem = 1;
			return;
		}
		s->span = p;
		s->cap = cap;
	}
	s->span[s->nspans++] = (struct wb_span){ b->n, col, b->col - col,
		look, pos };
}

/* End the line under way (past the limit it is dropped). */
static void
sb_end(struct sb *b)
{
	if (b->n < b->limit && !b->nomem) {
		char *line = strdup(b->buf != NULL ? b->buf : "");

		if (line == NULL)
			b->nomem = 1;
		else
			b->scr->line[b->n++] = line;
	}
	b->len = b->col = 0;
	if (b->buf != NULL)
		b->buf[0] = '\0';
}

/* The longest labels shown whole; longer ones are cut with a "~". */
#define LABEL_MAX 16

/* A label in at most max columns (max >= 1): whole when it fits, else
 * its first max - 1 columns and a "~" that marks it cut. */
static void
sb_label_in(struct sb *b, const char *s, size_t max)
{
	char c[8];
	size_t len, w, used = 0;

	if (print_width(s) <= max) {
		sb_put(b, s);
		return;
	}
	for (; *s != '\0'; s += len) {
		len = print_char(s, &w);
		if (used + w + 1 > max || len >= sizeof c)
			break;
		memcpy(c, s, len);
		c[len] = '\0';
		sb_put(b, c);
		used += w;
	}
	sb_put(b, "~");
}

/* A label in at most LABEL_MAX columns. */
static void
sb_label(struct sb *b, const char *s)
{
	sb_label_in(b, s, LABEL_MAX);
}

/* The columns sb_label_in gives s: at most max. */
static size_t
label_width_in(const char *s, size_t max)
{
	size_t w = print_width(s), len, cw, used = 0;

	if (w <= max)
		return w;
	for (; *s != '\0'; s += len) {
		len = print_char(s, &cw);
		if (used + cw + 1 > max)
			break;
		used += cw;
	}
	return used + 1;
}

/* The columns sb_label gives s. */
static size_t
label_width(const char *s)
{
	return label_width_in(s, LABEL_MAX);
}

/* A whole line, bold when it is a heading. */
static void
sb_line(struct sb *b, int bold, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sb_vprintf(b, fmt, ap);
	va_end(ap);
	if (bold)
		sb_span(b, 0, WB_BOLD, 0.0);
	sb_end(b);
}

/* The title, the state of each key's setting, and --explain's lines on
 * the shapes and the scale. */
static void
screen_head(const struct workbench *wb, const struct printer *p,
    struct sb *b)
{
	const struct attn_config *c = &wb->o->cfg;
	char where[128], name[256];
	struct render head;
	char *line, *nl;
	size_t i;
	int k;

	if (wb->toy) {
		sb_line(b, 1, "attn workbench: the toy, Q and K are attn gen "
		    "3x%zu --seed %d and --seed %d", wb->d_k, WB_TOY_SEED_Q,
		    WB_TOY_SEED_K);
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
	if (wb->stages.batches > 1)
		snprintf(where, sizeof where, "batch %zu of %zu, head %zu of "
		    "%zu", wb->block / wb->stages.heads + 1, wb->stages.batches,
		    wb->block % wb->stages.heads + 1, wb->stages.heads);
	else
		snprintf(where, sizeof where, "head %zu of %zu",
		    wb->block + 1, wb->stages.heads);
	sb_line(b, 0, "scaling %s   d_k %zu%s   causal %s   %s   predict %s",
	    c->scale_mode == ATTN_SCALE_NONE ? "off" : "on", wb->stages.d_k,
	    wb->toy ? "" : " (your inputs')", c->causal ? "on" : "off",
	    where, wb->predict ? "on" : "off");
	/* --explain's first two lines: the shapes, the scale */
	if (print_explain_head_text(p, &head) != ATTN_OK) {
		render_free(&head);
		b->nomem = 1;
		return;
	}
	for (k = 0, line = head.text; k < 2 && (nl = strchr(line, '\n')) !=
	    NULL; k++, line = nl + 1) {
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
 * (nkeys of the S), its entropy, effective keys and output. */
static void
screen_row(const struct workbench *wb, const struct printer *p,
    struct sb *b, size_t nkeys)
{
	const enum attn_stage col[3] = { ATTN_STAGE_SCORES,
		ATTN_STAGE_SCALED, ATTN_STAGE_WEIGHTS };
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
	size_t width[3], lw = 3, j, c, x;
	struct stats_row r;

	for (j = 0; j < nkeys; j++)
		if (label_width(wb->nm.key[j]) > lw)
			lw = label_width(wb->nm.key[j]);
	for (c = 0; c < 3; c++)
		width[c] = cell_width(wb, p, col[c], nkeys);
	sb_line(b, 1, "query %s (row %zu of %zu), its row of each stage   "
	    "[T x S = %zux%zu]", wb->nm.query[wb->query], wb->query + 1,
	    wb->stages.T, wb->stages.T, S);
	/* the formulas as in force, or the one keys change when they do
	 * not fit */
	for (c = 0, x = 0; c < 3; c++) {
		formula[c] = print_formula(p, col[c], f[c], sizeof f[c]);
		x += (c > 0 ? 3 : 0) + strlen(attn_stage_table[col[c]].name) +
		    3 + strlen(formula[c]);
	}
	for (c = 0; c < 3; c++)
		if (x <= b->scr->cols || col[c] == ATTN_STAGE_SCALED)
			sb_printf(b, "%s%s = %s", b->col > 0 ? "   " : "",
			    attn_stage_table[col[c]].name, formula[c]);
	sb_end(b);
	sb_put(b, "key");
	for (c = 0, x = lw; c < 3; c++) {
		x += 2 + width[c];
		sb_to(b, x - strlen(attn_stage_table[col[c]].name));
		sb_put(b, attn_stage_table[col[c]].name);
	}
	sb_span(b, 0, WB_BOLD, 0.0);
	sb_end(b);
	for (j = 0; j < nkeys; j++) {
		sb_label(b, wb->nm.key[j]);
		for (c = 0, x = lw; c < 3; c++) {
			x += 2 + width[c];
			if (c == 2 && wb->asking)
				snprintf(buf, sizeof buf, "?");
			else
				print_cell(p, col[c], wb->block, wb->query, j,
				    buf);
			sb_to(b, x - strlen(buf));
			sb_put(b, buf);
		}
		if (wb->asking || *attn_at(&mask, wb->query, j) == 0.0 ||
		    isnan(*attn_at(&w, wb->query, j))) {
			sb_end(b);
			continue;
		}
		sb_printf(b, "  %5.1f%% ", 100.0 * *attn_at(&w, wb->query, j));
		put_bar(b, *attn_at(&w, wb->query, j),
		    b->scr->cols > b->col + 20 ? 20 : b->scr->cols - b->col);
		sb_end(b);
	}
	if (nkeys < S)
		sb_line(b, 0, "\u2026 and %zu more key%s", S - nkeys,
		    S - nkeys == 1 ? "" : "s");
	stats_row(p, wb->block, wb->query, &r);
	if (wb->asking || !r.defined) {
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
	sb_printf(b, "output = weights V   [T x d_v = %zux%zu]:",
	    wb->stages.T, wb->stages.d_v);
	for (c = 0; c < out.cols; c++) {
		if (wb->asking)
			snprintf(buf, sizeof buf, "?");
		else
			print_number(p, buf, *attn_at(&out, wb->query, c));
		sb_printf(b, "  %s", buf);
	}
	sb_end(b);
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
	size_t lw = 0, kw = 0, W, i, j, i0, ncols, col, k, x0, room;
	struct heat_scale hs;
	char top[ATTN_NUM_MAX + 32];

	heatmap_scale_init(&hs, p);
	for (i = 0; i < T; i++)
		if (label_width(wb->nm.query[i]) > lw)
			lw = label_width(wb->nm.query[i]);
	for (j = 0; j < S; j++)
		if (label_width(wb->nm.key[j]) > kw)
			kw = label_width(wb->nm.key[j]);
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
	sb_line(b, 1, "weights   [T x S = %zux%zu]%s%s", T, S,
	    wb->asking ? "   (hidden: your guess first)" : "",
	    ncols < S ? "   (the first keys)" : "");
	sb_to(b, x0);
	for (j = 0; j < ncols; j++) {
		/* the key's label in W - 1 columns, right-aligned */
		sb_to(b, x0 + (j + 1) * W - label_width_in(wb->nm.key[j],
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
				sb_put(b, !wb->asking ? cell : k + 1 < W ?
				    " " : "?");
			if (color && !wb->asking && *attn_at(&mask, i, j) != 0.0
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
	sb_end(b);
}

/* Predict mode judges a change of entropy under this many nats as about
 * the same: the effective number of keys, exp(entropy), moves by less
 * than 1%, which no one reads off the weights (attn(1)). */
#define SAME_NATS 0.01
#define SAME_NATS_TEXT "0.01"	/* SAME_NATS as the screen writes it */

/* Predict mode's lines: the question, or the answer to the last guess. */
static void
screen_predict(const struct workbench *wb, const struct printer *p,
    struct sb *b)
{
	char e0[ATTN_NUM_MAX], e1[ATTN_NUM_MAX], n0[ATTN_NUM_MAX],
	    n1[ATTN_NUM_MAX];
	const struct stats_row *x = &wb->before, *y = &wb->after;
	const char *said = wb->guess == 'm' ? "more concentrated" :
	    wb->guess == 's' ? "more spread" : "about the same", *was;

	if (wb->asking) {
		sb_line(b, 1, "Predict: the weights of %s, more concentrated, "
		    "more spread or about the same?", wb->nm.query[wb->query]);
		sb_line(b, 0, "m more concentrated   s more spread   a about "
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
	was = fabs(y->entropy - x->entropy) < SAME_NATS ? "about the same" :
	    y->entropy < x->entropy ? "more concentrated" : "more spread";
	sb_line(b, 1, "entropy %s \u2192 %s nats, effective keys %s \u2192 %s: "
	    "%s.", e0, e1, n0, n1, was);
	sb_line(b, 0, "You said %s: %s%s.", said, strcmp(said, was) == 0 ?
	    "right" : "not this time", strcmp(was, "about the same") == 0 ?
	    " (it moved under " SAME_NATS_TEXT " nats)" : "");
}

/* The keys, for ?. */
static void
screen_help(struct sb *b)
{
	static const char *const lines[] = {
		"Keys",
		"  up, k / down, j  the query: its row of each stage, marked "
		"in the heatmap",
		"  s                scaling on and off: 1/sqrt(d_k) (or "
		"--scale), or 1",
		"  + / -            double or halve d_k (the toy's; your "
		"inputs fix theirs)",
		"  c                the causal mask on and off: query i sees "
		"keys j <= i",
		"  h                the next head (and batch)",
		"  p                predict mode: guess m (more concentrated), "
		"s (more spread)",
		"                   or a (about the same: under "
		SAME_NATS_TEXT " nats) "
		"before the",
		"                   weights show; the entropy answers",
		"  ?                this help, and back",
		"  q                quit",
		"",
		"Entropy -sum w log w is in nats: 0 when one key takes all "
		"the weight,",
		"log S when the weights are uniform; exp(entropy) is the "
		"effective number",
		"of keys.",
	};
	size_t k;

	for (k = 0; k < sizeof lines / sizeof lines[0]; k++)
		sb_line(b, k == 0, "%s", lines[k]);
}

enum attn_status
workbench_screen(const struct workbench *wb, size_t rows, size_t cols,
    int color, struct wb_screen *scr, struct attn_error *err)
{
	struct sb b = { 0 };
	struct attn_error perr = { 0 };
	struct printer p;
	size_t fixed, room, nkeys, nrows, blank;

	memset(scr, 0, sizeof *scr);
	scr->rows = rows;
	scr->cols = cols;
	if (rows == 0 || (scr->line = calloc(rows, sizeof *scr->line)) ==
	    NULL)
		return rows == 0 ? ATTN_OK : attn_error_set(err,
		    ATTN_ERR_NOMEM, NULL, 0, 0, "out of memory for the screen");
	b.scr = scr;
	b.limit = rows > 2 ? rows - 2 : 0;	/* the note and the keys */
	wb_printer(wb, &p, &perr);
	/* lines: the head (4), the query's (5 and a key each, 1 more when
	 * keys are left out), the heatmap's (3 and a row each), predict
	 * mode's (2), the note and the keys (1 each), and 3 blanks if
	 * there is room; the keys and the heatmap's rows share what is
	 * left */
	fixed = 4 + 5 + 3 + (wb->predict ? 2 : 0) + 1 + 1;
	room = rows > fixed ? rows - fixed : 0;
	blank = room > wb->stages.S + wb->stages.T ?
	    room - wb->stages.S - wb->stages.T : 0;
	blank = blank > 3 ? 3 : blank;
	room -= blank;
	nkeys = wb->stages.S <= room / 2 ||
	    wb->stages.S + wb->stages.T <= room ? wb->stages.S :
	    room - (wb->stages.T < room / 2 ? wb->stages.T : room / 2);
	if (nkeys < wb->stages.S && nkeys > 0)
		nkeys--;	/* the line that says how many more */
	nrows = room > nkeys + (nkeys < wb->stages.S) ? room - nkeys -
	    (nkeys < wb->stages.S) : 1;
	screen_head(wb, &p, &b);
	if (blank > 0)
		sb_end(&b);
	if (wb->help) {
		screen_help(&b);
	} else {
		screen_row(wb, &p, &b, nkeys);
		if (blank > 1)
			sb_end(&b);
		screen_heatmap(wb, &p, &b, nrows, color);
		if (blank > 2)
			sb_end(&b);
		screen_predict(wb, &p, &b);
	}
	/* the note and the keys at the bottom */
	while (b.n + 2 < rows && !b.nomem)
		sb_end(&b);
	b.limit = rows;
	sb_line(&b, 0, "%s", wb->note);
	if (wb->asking)
		sb_line(&b, 0, "m more concentrated  s more spread  a about the "
		    "same  p leave predict  q quit");
	else
		sb_line(&b, 0, "\u2191\u2193/k j query  s scaling  + - d_k  "
		    "c causal  h head  p predict  ? help  q quit");
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
