/*
 * heatmap.c - --heatmap: the weights drawn in the terminal, one grid per
 * head (side by side when they fit the width, a row of grids per batch),
 * rows labelled by query and columns by key, a legend from 0 to 1, and
 * masked cells drawn as dots, unlike a weight that is merely small.
 *
 * A cell is a background colour on a terminal (one of nine steps in 256
 * colours, or 24-bit when COLORTERM says truecolor) and a shade
 * character (' ', U+2591 to U+2588, the weight to the nearest 1/4)
 * otherwise (a blank for 0 alone: any weight above 0 is at least
 * U+2591), or with NO_COLOR set, or --color never; --color
 * always colours whatever stdout is.  The colours are viridis
 * (heatmap_rgb), which the SVG and HTML pages share, so that 0 and 1
 * differ in lightness as well as hue.  Where a weight falls on that
 * scale is --color-range's rule, heatmap_position, which every picture
 * asks: 0 to 1, 0 to the largest weight, or each row 0 to its own
 * largest, so that near-uniform rows (0.10 to 0.24) are not one shade;
 * without the option, row where every weight lies in a narrow band,
 * which the legend then says.
 *
 * The width is COLUMNS, else the terminal's, else 80.  A grid wider than
 * that shows its first and last keys around a column of U+2026, and more
 * than HEAT_MAX_ROWS queries show their first and last rows around
 * U+22EE, so that nothing ever wraps.  Every number comes from the
 * weights and mask stages.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "attn.h"
#include "attn_io.h"
#include "output.h"
#include "print.h"

/* Queries shown before rows are elided. */
#define HEAT_MAX_ROWS 40
/* The widest key label written across; wider ones are written down. */
#define HEAT_ACROSS 3
/* The longest key label written down, and the widest query label. */
#define HEAT_LABEL_MAX 8
#define HEAT_GAP 3		/* spaces between grids side by side */

static const char *const shades[] = { " ", "\u2591", "\u2592", "\u2593",
	"\u2588" };
#define MASKED "\u00b7"		/* middle dot */
#define NAN_CELL "?"

/* viridis at 0, 1/8, ..., 1 (matplotlib's, rounded to bytes). */
static const unsigned char viridis[9][3] = {
	{ 68, 1, 84 }, { 71, 44, 122 }, { 59, 82, 139 }, { 44, 113, 142 },
	{ 33, 145, 140 }, { 39, 173, 129 }, { 92, 200, 99 },
	{ 170, 220, 50 }, { 253, 231, 37 }
};

/*
 * The same nine stops in xterm's 256 colours, each the cube colour
 * nearest to its viridis stop (and 24 and 148 rather than their ties, so
 * that no two stops share one).  The cube is too coarse to interpolate
 * in: weights 0.17 and 0.33 would fall on one colour.
 */
static const unsigned char xterm256[9] = { 53, 54, 60, 24, 30, 36, 77, 148,
	220 };

/* w within 0..1. */
static double
clamp01(double w)
{
	return w < 0.0 ? 0.0 : w > 1.0 ? 1.0 : w;
}

int
heatmap_xterm256(double w)
{
	return xterm256[lround(clamp01(w) * 8.0)];
}

const char *
heatmap_shade(double w)
{
	const long k = lround(clamp01(w) * 4.0);

	/* the blank is 0 alone (a weight whose exp underflowed): any
	 * weight above it is at least the lightest shade, so that 0.099
	 * is not drawn as if it were nothing */
	return shades[k == 0 && w > 0.0 ? 1 : k];
}

void
heatmap_rgb(double w, unsigned char rgb[3])
{
	double x = isnan(w) ? 0.0 : w < 0.0 ? 0.0 : w > 1.0 ? 8.0 : w * 8.0;
	size_t k = x >= 8.0 ? 7 : (size_t)x;
	double f = x - (double)k;
	int c;

	for (c = 0; c < 3; c++)
		rgb[c] = (unsigned char)lround((1.0 - f) * viridis[k][c] +
		    f * viridis[k + 1][c]);
}

/* The largest weight of rows i0..i1-1 of block n of the weights that a
 * key may take (the mask's kept cells, not nan): 0 when there is none. */
static double
heat_max(const struct printer *p, size_t n, size_t i0, size_t i1)
{
	const struct attn_matrix w = print_block(p, ATTN_STAGE_WEIGHTS, n);
	const struct attn_matrix mask = print_block(p, ATTN_STAGE_MASK, n);
	double top = 0.0;
	size_t i, j;

	for (i = i0; i < i1; i++)
		for (j = 0; j < w.cols; j++)
			if (*attn_at(&mask, i, j) != 0.0 &&
			    *attn_at(&w, i, j) > top)
				top = *attn_at(&w, i, j);
	return top;
}

/* A band of unequal weights narrower than this, a quarter of the scale (one
 * step of the shades, two of the nine colours), is drawn by row when no
 * --color-range is given: on the 0 to 1 scale its weights would be one
 * or two colours (Raschka's 0.12 to 0.21 are all one purple). */
#define NARROW_BAND 0.25

/* The smallest and largest weights a key may take in the picture (lo >
 * hi when there is none). */
static void
heat_band(const struct printer *p, double *lo, double *hi)
{
	struct attn_shape sh;
	size_t n, i, j;

	attn_stage_shape(p->stages, ATTN_STAGE_WEIGHTS, &sh);
	*lo = INFINITY;
	*hi = -INFINITY;
	for (n = 0; n < sh.blocks; n++) {
		const struct attn_matrix w = print_block(p, ATTN_STAGE_WEIGHTS,
		    n);
		const struct attn_matrix mask = print_block(p, ATTN_STAGE_MASK,
		    n);

		for (i = 0; i < w.rows; i++)
			for (j = 0; j < w.cols; j++)
				if (*attn_at(&mask, i, j) != 0.0 &&
				    !isnan(*attn_at(&w, i, j))) {
					*lo = fmin(*lo, *attn_at(&w, i, j));
					*hi = fmax(*hi, *attn_at(&w, i, j));
				}
	}
}

void
heatmap_scale_init(struct heat_scale *hs, const struct printer *p)
{
	struct attn_shape sh;
	size_t n;

	hs->range = p->o->color_range;
	hs->top = 1.0;
	hs->n = hs->i = (size_t)-1;
	hs->chosen = 0;
	if (hs->range == RANGE_AUTO) {
		heat_band(p, &hs->lo, &hs->hi);
		/* equal weights (one key, or uniform rows) are one colour
		 * on either scale: nothing to choose */
		hs->chosen = hs->lo < hs->hi && hs->hi - hs->lo < NARROW_BAND;
		hs->range = hs->chosen ? RANGE_ROW : RANGE_UNIT;
	}
	if (hs->range != RANGE_MAX)
		return;
	attn_stage_shape(p->stages, ATTN_STAGE_WEIGHTS, &sh);
	hs->top = 0.0;
	for (n = 0; n < sh.blocks; n++)
		hs->top = fmax(hs->top, heat_max(p, n, 0, p->stages->T));
}

double
heatmap_position(struct heat_scale *hs, const struct printer *p, size_t n,
    size_t i, double w)
{
	if (hs->range == RANGE_ROW && (n != hs->n || i != hs->i)) {
		hs->top = heat_max(p, n, i, i + 1);
		hs->n = n;
		hs->i = i;
	}
	if (isnan(w) || hs->top <= 0.0)
		return isnan(w) ? w : 0.0;
	return w / hs->top;
}

const char *
heatmap_top_text(const struct heat_scale *hs, const struct printer *p,
    char *buf, size_t size)
{
	char num[ATTN_NUM_MAX];

	switch (hs->range) {
	case RANGE_UNIT:
	case RANGE_AUTO:	/* resolved by heatmap_scale_init */
		break;
	case RANGE_MAX:
		print_number(p, num, hs->top);
		snprintf(buf, size, "%s, the largest weight", num);
		return buf;
	case RANGE_ROW:
		return "each row's largest weight";
	}
	return "1";
}

const char *
heatmap_chosen_text(const struct heat_scale *hs, const struct printer *p,
    char *buf, size_t size)
{
	char lo[ATTN_NUM_MAX], hi[ATTN_NUM_MAX];

	if (!hs->chosen)
		return "";
	print_number(p, lo, hs->lo);
	print_number(p, hi, hs->hi);
	snprintf(buf, size, "chosen: every weight lies in %s to %s", lo, hi);
	return buf;
}

int
heatmap_dark(double w)
{
	unsigned char rgb[3];

	heatmap_rgb(w, rgb);
	return 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2] > 140.0;
}

/* How the weights are drawn. */
struct heat {
	int color;		/* 0: shades; 256 or 24 bits */
	size_t width;		/* of the terminal */
	size_t W;		/* columns a cell takes */
	size_t hdr;		/* lines of key labels */
	int down;		/* key labels written down, a letter a line */
	size_t w0;		/* the query label column */
	size_t c_head, c_tail;	/* keys shown before and after the ... */
	size_t r_head, r_tail;	/* queries likewise */
	size_t gridw;		/* one grid's width */
	size_t across;		/* grids side by side */
};

/* Whether and how to colour: --color, then NO_COLOR, a dumb terminal,
 * and whether the output is a terminal at all. */
static int
heat_color(const struct options *o)
{
	const char *no = getenv("NO_COLOR"), *term = getenv("TERM");
	const char *ct = getenv("COLORTERM");

	if (o->color == COLOR_NEVER)
		return 0;
	if (o->color == COLOR_AUTO && (o->output != NULL ||
	    !output_is_terminal(NULL) || (no != NULL && *no != '\0') ||
	    (term != NULL && strcmp(term, "dumb") == 0)))
		return 0;
	return ct != NULL && (strcmp(ct, "truecolor") == 0 ||
	    strcmp(ct, "24bit") == 0) ? 24 : 256;
}

/* COLUMNS, else the terminal's width, else 80. */
static size_t
heat_width(void)
{
	const char *env = getenv("COLUMNS");
	struct winsize ws;

	if (env != NULL && *env >= '1' && *env <= '9') {
		char *end;
		unsigned long n = strtoul(env, &end, 10);

		if (*end == '\0' && n < 100000)
			return n;
	}
	if (output_is_terminal(NULL) && ioctl(STDOUT_FILENO, TIOCGWINSZ,
	    &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 80;
}

/* The columns of s, at most max. */
static size_t
label_width(const char *s)
{
	size_t w = print_width(s);

	return w > HEAT_LABEL_MAX ? HEAT_LABEL_MAX : w;
}

/* The character at s with the combining marks after it (a label written
 * down keeps them on its line): its length in bytes, its columns in *w. */
static size_t
glyph(const char *s, size_t *w)
{
	size_t len = print_char(s, w), mark, n;

	while (s[len] != '\0') {
		n = print_char(s + len, &mark);
		if (mark != 0)
			break;
		len += n;
	}
	return len;
}

/* The characters of s, at most max: the lines of a label written down. */
static size_t
label_chars(const char *s)
{
	size_t n = 0, w;

	for (; *s != '\0' && n < HEAT_LABEL_MAX; n++)
		s += glyph(s, &w);
	return n;
}

/* Lay the grids out for the width. */
static void
heat_layout(const struct printer *p, struct heat *h)
{
	const size_t T = p->stages->T, S = p->stages->S;
	size_t j, i, lw = 0, lc = 0, cells, room;
	struct attn_shape sh;

	attn_stage_shape(p->stages, ATTN_STAGE_WEIGHTS, &sh);
	h->color = heat_color(p->o);
	h->width = heat_width();
	for (j = 0; j < S; j++) {
		if (label_width(p->nm->key[j]) > lw)
			lw = label_width(p->nm->key[j]);
		if (label_chars(p->nm->key[j]) > lc)
			lc = label_chars(p->nm->key[j]);
	}
	h->down = lw > HEAT_ACROSS;
	h->W = h->down || lw + 1 < 2 ? 2 : lw + 1;
	h->hdr = h->down ? lc : 1;
	h->w0 = 0;
	for (i = 0; i < T; i++)
		if (label_width(p->nm->query[i]) > h->w0)
			h->w0 = label_width(p->nm->query[i]);
	/* Keys: all, or as many first and last as fit beside a "..." */
	room = h->width > h->w0 + 1 ? h->width - h->w0 - 1 : 0;
	if (S * h->W <= room) {
		h->c_head = S;
		h->c_tail = 0;
	} else {
		h->c_head = room > h->W ? (room - h->W) / (2 * h->W) : 0;
		if (h->c_head == 0)
			h->c_head = 1;
		h->c_tail = h->c_head;
	}
	if (T <= HEAT_MAX_ROWS) {
		h->r_head = T;
		h->r_tail = 0;
	} else {
		h->r_head = h->r_tail = (HEAT_MAX_ROWS - 1) / 2;
	}
	cells = h->c_head + h->c_tail + (h->c_tail > 0);
	h->gridw = h->w0 + 1 + cells * h->W;
	h->across = (h->width + HEAT_GAP) / (h->gridw + HEAT_GAP);
	if (h->across == 0)
		h->across = 1;
	if (h->across > sh.heads)
		h->across = sh.heads;
}

/* Write s in at most max columns, cut with a "~" when it is wider;
 * returns the columns written. */
static size_t
put_label(FILE *fp, const char *s, size_t max)
{
	size_t w = 0, cw, len;

	if (print_width(s) <= max) {
		fputs(s, fp);
		return print_width(s);
	}
	for (; *s != '\0'; s += len) {
		len = print_char(s, &cw);
		if (w + cw + 1 > max)
			break;
		fwrite(s, 1, len, fp);
		w += cw;
	}
	putc('~', fp);
	return w + 1;
}

/* Character l (from 0) of s right-aligned in `cell` columns, or blanks
 * past its end. */
static void
put_char_at(FILE *fp, const char *s, size_t l, size_t cell)
{
	size_t k = 0, w, len;

	for (; *s != '\0'; k++, s += len) {
		len = glyph(s, &w);
		if (k == l) {
			print_pad(fp, cell > w ? cell - w : 0);
			fwrite(s, 1, len, fp);
			return;
		}
	}
	print_pad(fp, cell);
}

/* n copies of s. */
static void
put_times(FILE *fp, const char *s, size_t n)
{
	while (n-- > 0)
		fputs(s, fp);
}

/* One cell: at position w of the colour scale (heatmap_position), kept
 * or masked. */
static void
put_cell(FILE *fp, const struct heat *h, double w, int kept)
{
	unsigned char rgb[3];

	if (!kept) {
		put_times(fp, MASKED, h->W);
		return;
	}
	if (isnan(w)) {
		put_times(fp, NAN_CELL, h->W);
		return;
	}
	if (h->color == 0) {
		put_times(fp, heatmap_shade(w), h->W);
		return;
	}
	if (h->color == 24) {
		heatmap_rgb(w, rgb);
		fprintf(fp, "\033[48;2;%d;%d;%dm", rgb[0], rgb[1], rgb[2]);
	} else {
		fprintf(fp, "\033[48;5;%dm", heatmap_xterm256(w));
	}
	print_pad(fp, h->W);
	fputs("\033[0m", fp);
}

/*
 * Line l of the grid of block n, h->gridw wide, or less when it is the
 * last on its line (pad 0: no trailing blanks): its title, a line of key
 * labels, or a row of cells.
 */
static void
heat_line(const struct printer *p, const struct heat *h,
    struct heat_scale *hs, size_t n, size_t l, int pad)
{
	const size_t S = p->stages->S, T = p->stages->T;
	const size_t cells = h->c_head + h->c_tail + (h->c_tail > 0);
	const struct attn_matrix w = print_block(p, ATTN_STAGE_WEIGHTS, n);
	const struct attn_matrix mask = print_block(p, ATTN_STAGE_MASK, n);
	char title[64];
	size_t k, i, used;

	if (l == 0) {		/* title */
		attn_block_name(title, sizeof title, p->stages->batches,
		    p->stages->heads, n, "", "");
		used = put_label(p->fp, title, h->gridw);
		if (pad)
			print_pad(p->fp, h->gridw - used);
		return;
	}
	if (l <= h->hdr) {	/* key labels */
		print_pad(p->fp, h->w0 + 1);
		for (k = 0; k < cells; k++) {
			size_t j = print_pick(k, h->c_head, h->c_tail, S);
			const char *key = j < S ? p->nm->key[j] : "";
			size_t kw = label_width(key);

			if (h->down) {
				/* bottom-aligned, a character a line */
				size_t top = h->hdr - label_chars(key);

				if (j == S && l == h->hdr) {
					print_pad(p->fp, h->W - 1);
					fputs("\u2026", p->fp);
				} else if (l - 1 < top || j == S) {
					print_pad(p->fp, h->W);
				} else {
					put_char_at(p->fp, key, l - 1 - top,
					    h->W);
				}
			} else {
				print_pad(p->fp, h->W - (j == S ? 1 : kw));
				if (j == S)
					fputs("\u2026", p->fp);
				else
					put_label(p->fp, key, kw);
			}
		}
		return;
	}
	i = print_pick(l - h->hdr - 1, h->r_head, h->r_tail, T);
	if (i == T) {
		print_pad(p->fp, h->w0 - 1);
		fputs("\u22ee", p->fp);
		if (pad)
			print_pad(p->fp, 1 + cells * h->W);
		return;
	}
	used = put_label(p->fp, p->nm->query[i], h->w0);
	print_pad(p->fp, h->w0 + 1 - used);
	for (k = 0; k < cells; k++) {
		size_t j = print_pick(k, h->c_head, h->c_tail, S);

		if (j == S) {
			print_pad(p->fp, h->W - 1);
			fputs("\u2026", p->fp);
		} else {
			put_cell(p->fp, h, heatmap_position(hs, p, n, i,
			    *attn_at(&w, i, j)), *attn_at(&mask, i, j) != 0.0);
		}
	}
}

/* "(text)" in lines of at most width columns, broken between words. */
static void
heat_words(FILE *fp, const char *text, size_t width)
{
	char line[256];
	const char *w, *e;
	size_t col = 0, len;

	snprintf(line, sizeof line, "(%s)", text);
	for (w = line; *w != '\0'; w = *e == ' ' ? e + 1 : e) {
		e = strchr(w, ' ');
		e = e != NULL ? e : w + strlen(w);
		len = (size_t)(e - w);
		if (col > 0 && col + 1 + len > width) {
			fputc('\n', fp);
			col = 0;
		}
		fprintf(fp, "%s%.*s", col > 0 ? " " : "", (int)len, w);
		col += (col > 0) + len;
	}
	fputc('\n', fp);
}

/* The legend: the scale from 0 to its top (1, the largest weight or each
 * row's) and what a masked cell looks like. */
static void
heat_legend(const struct printer *p, const struct heat *h,
    const struct heat_scale *hs)
{
	struct heat one = *h;
	size_t k, steps = h->color ? 9 : 5;
	char top[2 * ATTN_NUM_MAX + 64];

	/* the columns of "0 [", the scale and "] ", or their colours */
	const size_t bar = h->color ? 2 + 2 * steps + 1 : 3 + 2 * steps + 2;
	const char *text = heatmap_top_text(hs, p, top, sizeof top);
	size_t col;

	/* Shades are bracketed, so that the blank of 0 shows. */
	one.W = 2;
	fputs(h->color ? "0 " : "0 [", p->fp);
	for (k = 0; k < steps; k++)
		put_cell(p->fp, &one, (double)k / (double)(steps - 1), 1);
	/* the top after the scale, and the masked cell after it, where
	 * the width holds them; else each on a line of its own */
	fputs(h->color ? "" : "]", p->fp);
	col = bar + print_width(text);
	if (col > h->width) {
		fputc('\n', p->fp);
		col = print_width(text);
	} else {
		fputc(' ', p->fp);
	}
	fputs(text, p->fp);
	if (col + 3 + 2 + 7 <= h->width)
		fputs("   ", p->fp);
	else
		fputc('\n', p->fp);
	put_cell(p->fp, &one, 0.0, 0);
	fputs(" masked\n", p->fp);
	/* a range chosen for a narrow band says so on lines of its own */
	if (hs->chosen)
		heat_words(p->fp, heatmap_chosen_text(hs, p, top, sizeof top),
		    h->width);
}

enum attn_status
print_heatmap(const struct printer *p)
{
	const size_t T = p->stages->T, S = p->stages->S;
	struct attn_shape sh;
	struct heat_scale hs;
	struct heat h;
	size_t b, g, l, k, lines;

	heat_layout(p, &h);
	heatmap_scale_init(&hs, p);
	attn_stage_shape(p->stages, ATTN_STAGE_WEIGHTS, &sh);
	fprintf(p->fp, "heatmap of weights   [%s = %zux%zu]\n", sh.legend, T,
	    S);
	lines = 1 + h.hdr + h.r_head + h.r_tail + (h.r_tail > 0);
	for (b = 0; b < sh.batches; b++)
		for (g = 0; g < sh.heads; g += h.across) {
			size_t m = sh.heads - g < h.across ? sh.heads - g :
			    h.across;

			for (l = 0; l < lines; l++) {
				/* a lone block needs no title */
				if (l == 0 && sh.blocks == 1)
					continue;
				for (k = 0; k < m; k++) {
					if (k > 0)
						print_pad(p->fp, HEAT_GAP);
					heat_line(p, &h, &hs,
					    b * sh.heads + g + k, l, k + 1 < m);
				}
				putc('\n', p->fp);
			}
		}
	if (h.c_tail > 0 || h.r_tail > 0)
		fprintf(p->fp, "(%zu of %zu key%s, %zu of %zu %s shown)\n",
		    h.c_head + h.c_tail, S, S == 1 ? "" : "s",
		    h.r_head + h.r_tail, T, T == 1 ? "query" : "queries");
	heat_legend(p, &h, &hs);
	return ATTN_OK;
}
