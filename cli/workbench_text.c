/*
 * workbench_text.c - the lines of the workbench's screen as they are
 * written (struct sb): text put at a column and cut at the width, spans,
 * labels cut to a width with a "~" that marks them cut, a line of items
 * that drops whole items by rank where the width is short, and phrases
 * that wrap between them.  workbench_screen.c says what the lines are.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "print.h"
#include "workbench.h"

/* s appended to the line, as much of it as fits the width. */
void
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

void
sb_printf(struct sb *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sb_vprintf(b, fmt, ap);
	va_end(ap);
}

/* Blanks up to column col. */
void
sb_to(struct sb *b, size_t col)
{
	while (b->col < col && b->col < b->scr->cols && !b->nomem)
		sb_put(b, " ");
}

/* A span of the line under way, from column col to the current one. */
void
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
void
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
void
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
void
sb_label(struct sb *b, const char *s)
{
	sb_label_in(b, s, LABEL_MAX);
}

/* The columns sb_label_in gives s: at most max. */
size_t
sb_label_width_in(const char *s, size_t max)
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
size_t
sb_label_width(const char *s)
{
	return sb_label_width_in(s, LABEL_MAX);
}

/* A whole line, bold when it is a heading. */
void
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

/* The width of items[0..n) of rank <= top, sep columns apart. */
static size_t
items_width(const struct sb_item *it, size_t n, size_t sep, int brief,
    int top)
{
	size_t k, w = 0, shown = 0;

	for (k = 0; k < n; k++)
		if (it[k].rank <= top) {
			w += print_width(brief ? it[k].brief : it[k].text);
			w += shown++ > 0 ? sep : 0;
		}
	return w;
}

/* A line of items in order, never one cut: all of them sep blanks apart,
 * else two apart, else brief, else without those of the highest rank
 * down to the one of rank 0 (and if even that does not fit, none). */
void
sb_items(struct sb *b, const struct sb_item *it, size_t n, size_t sep)
{
	const size_t cols = b->scr->cols;
	int top = 0, brief = 0;
	size_t k, shown = 0;

	for (k = 0; k < n; k++)
		top = it[k].rank > top ? it[k].rank : top;
	if (items_width(it, n, sep, 0, top) > cols) {
		sep = sep > 2 ? 2 : sep;
		brief = items_width(it, n, sep, 0, top) > cols;
	}
	while (top >= 0 && items_width(it, n, sep, brief, top) > cols)
		top--;
	for (k = 0; k < n; k++)
		if (it[k].rank <= top) {
			if (shown++ > 0)
				sb_to(b, b->col + sep);
			sb_put(b, brief ? it[k].brief : it[k].text);
		}
	sb_end(b);
}

/* The phrases of text (each ended by a '\n'), a line as many as fit the
 * width, a blank between two on a line. */
void
sb_phrases(struct sb *b, const char *text)
{
	const char *w, *e;
	char phrase[128];

	for (w = text; (e = strchr(w, '\n')) != NULL; w = e + 1) {
		snprintf(phrase, sizeof phrase, "%.*s", (int)(e - w), w);
		if (b->col > 0 && b->col + 1 + print_width(phrase) >
		    b->scr->cols)
			sb_end(b);
		if (b->col > 0)
			sb_put(b, " ");
		sb_put(b, phrase);
	}
	sb_end(b);
}
