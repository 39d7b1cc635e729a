/*
 * print_svg.c - --svg FILE: the weights as a standalone SVG heatmap.  A
 * title names the stage and its shape, with --explain's lines on the
 * shapes, the scale and the conventions under it; a grid per batch and
 * head (heads side by side, batches one under another) has query labels
 * on the left and key labels on top, each cell's value printed in it
 * when the cells are large enough and as a tooltip (<title>) always;
 * masked cells are hatched, not coloured as a weight of 0; a colour bar
 * runs from 0 to 1, or as --color-range says to the largest weight or
 * to each row's (which the title then says too).  Colours are
 * heatmap_rgb's (viridis) at heatmap_position's place on that scale, as
 * in the terminal and the HTML page.
 *
 * SVG cannot measure text, so label widths are estimated at 0.6 em a
 * character, which errs on the side of room.  The file is plain XML:
 * every label goes through print_xml.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "attn_io.h"
#include "print.h"

#define SVG_MARGIN 16
#define SVG_FONT 12		/* labels, px */
#define SVG_TITLE 16		/* the title line */
#define SVG_LINE 16		/* the lines under it */
#define SVG_GAP 24		/* between grids */
#define SVG_BIG_CELL 44		/* cells that hold their value */
#define SVG_BAR_W 14
#define SVG_BAR_H 160

/* The estimated width of a label of n characters at size px. */
static double
text_width(size_t n, double px)
{
	return 0.6 * px * (double)n;
}

/* How the picture is laid out. */
struct svg {
	double cell;		/* side of a cell */
	int values;		/* whether cells show their value */
	int across;		/* key labels written across, else at 45 deg */
	double label_w;		/* the query label column */
	double head_h;		/* the key label band */
	double block_title;	/* a line naming the batch and head */
	double grid_w, grid_h;	/* one grid with its labels */
	double top;		/* where the first grid starts */
	double width, height;
};

static void
svg_layout(const struct printer *p, const struct heat_scale *hs,
    struct svg *g, size_t head_chars)
{
	const size_t T = p->stages->T, S = p->stages->S;
	struct attn_shape sh;
	size_t i, qmax = 0, kmax = 0, big = T > S ? T : S;
	double grids_w, bar_w;

	attn_stage_shape(p->stages, ATTN_STAGE_WEIGHTS, &sh);
	for (i = 0; i < T; i++)
		if (print_width(p->nm->query[i]) > qmax)
			qmax = print_width(p->nm->query[i]);
	for (i = 0; i < S; i++)
		if (print_width(p->nm->key[i]) > kmax)
			kmax = print_width(p->nm->key[i]);
	g->values = S <= 16 && T <= 40;
	g->cell = g->values ? SVG_BIG_CELL : fmax(4.0, fmin(24.0,
	    floor(480.0 / (double)big)));
	g->across = text_width(kmax, SVG_FONT) <= g->cell - 4.0;
	g->label_w = ceil(text_width(qmax, SVG_FONT)) + 8.0;
	g->head_h = g->across ? SVG_FONT + 8.0 :
	    ceil(text_width(kmax, SVG_FONT) * 0.71) + SVG_FONT + 8.0;
	g->block_title = sh.blocks > 1 ? SVG_LINE + 4.0 : 0.0;
	g->grid_w = g->label_w + (double)S * g->cell;
	g->grid_h = g->block_title + g->head_h + (double)T * g->cell;
	g->top = SVG_MARGIN + SVG_TITLE + 3.0 * SVG_LINE + 16.0;
	grids_w = (double)sh.heads * (g->grid_w + SVG_GAP);
	/* the ticks: "0.25", or with --color-range row "row max" */
	bar_w = SVG_BAR_W + 8.0 + text_width(hs->range == RANGE_ROW ? 7 : 6,
	    SVG_FONT);
	g->width = 2.0 * SVG_MARGIN + fmax(grids_w + bar_w,
	    text_width(head_chars, SVG_FONT) + 8.0);
	g->height = g->top + (double)sh.batches * (g->grid_h + SVG_GAP) +
	    SVG_MARGIN;
	/* room for the colour bar and the masked swatch under it */
	g->height = fmax(g->height, g->top + g->block_title + g->head_h +
	    SVG_BAR_H + SVG_LINE + SVG_BAR_W + SVG_MARGIN);
	/* whole pixels, so that a PNG of it has exactly this size */
	g->width = ceil(g->width);
	g->height = ceil(g->height);
}

/* The colour at position w of the scale as #rrggbb. */
static void
put_rgb(FILE *fp, double w)
{
	unsigned char rgb[3];

	heatmap_rgb(w, rgb);
	fprintf(fp, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
}

/* One grid: block n at (x, y). */
static void
svg_grid(const struct printer *p, const struct svg *g,
    struct heat_scale *hs, size_t n, double x, double y)
{
	const struct attn_matrix w = print_block(p, ATTN_STAGE_WEIGHTS, n);
	const struct attn_matrix mask = print_block(p, ATTN_STAGE_MASK, n);
	const double gx = x + g->label_w, gy = y + g->block_title + g->head_h;
	char buf[ATTN_NUM_MAX], name[64];
	size_t i, j;

	if (g->block_title > 0.0) {
		attn_block_name(name, sizeof name, p->stages->batches,
		    p->stages->heads, n, "", "");
		fprintf(p->fp, "<text x=\"%g\" y=\"%g\" class=\"b\">%s</text>\n",
		    gx, y + SVG_LINE - 2.0, name);
	}
	for (j = 0; j < w.cols; j++) {
		double cx = gx + ((double)j + 0.5) * g->cell;

		if (g->across)
			fprintf(p->fp, "<text x=\"%g\" y=\"%g\" "
			    "text-anchor=\"middle\">", cx, gy - 6.0);
		else
			fprintf(p->fp, "<text transform=\"translate(%g %g) "
			    "rotate(-45)\">", cx - 2.0, gy - 6.0);
		print_xml(p->fp, p->nm->key[j]);
		fputs("</text>\n", p->fp);
	}
	for (i = 0; i < w.rows; i++) {
		double cy = gy + (double)i * g->cell;

		fprintf(p->fp, "<text x=\"%g\" y=\"%g\" text-anchor=\"end\" "
		    "dominant-baseline=\"central\">", gx - 6.0,
		    cy + g->cell / 2.0);
		print_xml(p->fp, p->nm->query[i]);
		fputs("</text>\n", p->fp);
		for (j = 0; j < w.cols; j++) {
			double v = *attn_at(&w, i, j);
			double pos = heatmap_position(hs, p, n, i, v);
			int kept = *attn_at(&mask, i, j) != 0.0;

			fprintf(p->fp, "<rect x=\"%g\" y=\"%g\" width=\"%g\" "
			    "height=\"%g\" fill=\"", gx + (double)j * g->cell,
			    cy, g->cell, g->cell);
			if (!kept)
				fputs("url(#masked)", p->fp);
			else if (isnan(v))
				fputs("#ffffff", p->fp);
			else
				put_rgb(p->fp, pos);
			fputs("\"><title>", p->fp);
			print_xml(p->fp, p->nm->query[i]);
			fputs(", ", p->fp);
			print_xml(p->fp, p->nm->key[j]);
			if (kept)
				print_number(p, buf, v);
			fprintf(p->fp, ": %s</title></rect>\n", kept ? buf :
			    "masked");
			if (!g->values || !kept)
				continue;
			attn_format_number(buf, v, 3, ATTN_NUM_FIXED);
			fprintf(p->fp, "<text x=\"%g\" y=\"%g\" "
			    "class=\"%s\">%s</text>\n",
			    gx + ((double)j + 0.5) * g->cell,
			    cy + g->cell / 2.0, !isnan(v) && !heatmap_dark(pos) ?
			    "v w" : "v", buf);
		}
	}
}

/* The colour bar from 0 (bottom) to the top of the scale, its ticks the
 * weights they stand for (per cent of the row's largest with
 * --color-range row), and the masked swatch. */
static void
svg_bar(const struct printer *p, const struct heat_scale *hs, double x,
    double y)
{
	FILE *fp = p->fp;
	char buf[ATTN_NUM_MAX];
	int k;

	fputs("<defs><linearGradient id=\"scale\" x1=\"0\" y1=\"1\" "
	    "x2=\"0\" y2=\"0\">\n", fp);
	for (k = 0; k <= 8; k++) {
		fprintf(fp, "<stop offset=\"%g\" stop-color=\"", k / 8.0);
		put_rgb(fp, k / 8.0);
		fputs("\"/>\n", fp);
	}
	fputs("</linearGradient></defs>\n", fp);
	fprintf(fp, "<rect x=\"%g\" y=\"%g\" width=\"%d\" height=\"%d\" "
	    "fill=\"url(#scale)\" stroke=\"#888888\"/>\n", x, y, SVG_BAR_W,
	    SVG_BAR_H);
	for (k = 0; k <= 4; k++) {
		if (hs->range == RANGE_ROW)
			snprintf(buf, sizeof buf, k == 4 ? "row max" : "%d%%",
			    25 * k);
		else if (hs->range == RANGE_MAX)
			attn_format_number(buf, hs->top * k / 4.0, 3, 0);
		else
			snprintf(buf, sizeof buf, "%g", k / 4.0);
		fprintf(fp, "<text x=\"%g\" y=\"%g\" "
		    "dominant-baseline=\"central\">%s</text>\n",
		    x + SVG_BAR_W + 6.0, y + SVG_BAR_H * (1.0 - k / 4.0), buf);
	}
	fprintf(fp, "<rect x=\"%g\" y=\"%g\" width=\"%d\" height=\"%d\" "
	    "fill=\"url(#masked)\" stroke=\"#888888\"/>\n", x,
	    y + SVG_BAR_H + SVG_LINE, SVG_BAR_W, SVG_BAR_W);
	fprintf(fp, "<text x=\"%g\" y=\"%g\" dominant-baseline=\"central\">"
	    "masked</text>\n", x + SVG_BAR_W + 6.0,
	    y + SVG_BAR_H + SVG_LINE + SVG_BAR_W / 2.0);
}

enum attn_status
print_svg(const struct printer *p)
{
	struct attn_shape sh;
	struct heat_scale hs;
	struct render head;
	enum attn_status status;
	char *line, *nl, suffix[64] = "", top[ATTN_NUM_MAX + 32];
	char title[400], range[3 * ATTN_NUM_MAX + 128] = "";
	char chosen[2 * ATTN_NUM_MAX + 64];
	size_t n, chars = 0, len;
	struct svg g;

	/* --explain's first lines, rendered into memory first. */
	if ((status = print_explain_head_text(p, &head)) != ATTN_OK) {
		render_free(&head);
		return status;
	}
	for (line = head.text; (nl = strchr(line, '\n')) != NULL; line = nl + 1)
		if ((size_t)(nl - line) > chars)
			chars = (size_t)(nl - line);

	attn_stage_shape(p->stages, ATTN_STAGE_WEIGHTS, &sh);
	heatmap_scale_init(&hs, p);
	if (sh.batches > 1 && sh.heads > 1)
		snprintf(suffix, sizeof suffix, "; %zu batches of %zu heads",
		    sh.batches, sh.heads);
	else if (sh.blocks > 1)
		snprintf(suffix, sizeof suffix, "; %zu %s", sh.blocks,
		    sh.heads > 1 ? "heads" : "batches");
	/* --color-range max and row: the title says what the colours span,
	 * and why, when the range was chosen for a narrow band */
	if (hs.range != RANGE_UNIT)
		snprintf(range, sizeof range, "   colours 0 to %s%s%s%s",
		    heatmap_top_text(&hs, p, top, sizeof top), hs.chosen ?
		    " (" : "", heatmap_chosen_text(&hs, p, chosen,
		    sizeof chosen), hs.chosen ? ")" : "");
	snprintf(title, sizeof title, "weights = %s   [T x S = %zux%zu%s]%s",
	    attn_stage_table[ATTN_STAGE_WEIGHTS].formula, p->stages->T,
	    p->stages->S, suffix, range);
	/* room for the title too, in larger type than the lines under it,
	 * once it says more than the shape */
	len = strlen(title) * SVG_TITLE / SVG_FONT;
	if (range[0] != '\0' && len > chars)
		chars = len;
	svg_layout(p, &hs, &g, chars);
	fprintf(p->fp, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" "
	    "height=\"%g\" viewBox=\"0 0 %g %g\">\n", g.width, g.height,
	    g.width, g.height);
	fprintf(p->fp, "<title>%s</title>\n", title);
	fputs("<style>text { font-family: 'DejaVu Sans', Verdana, Arial, "
	    "sans-serif; font-size: 12px; fill: #222222; } "
	    ".t { font-size: 16px; font-weight: bold; } "
	    ".h { fill: #555555; } .b { font-weight: bold; } "
	    ".v { font-size: 10px; text-anchor: middle; "
	    "dominant-baseline: central; } .w { fill: #ffffff; }</style>\n"
	    "<defs><pattern id=\"masked\" patternUnits=\"userSpaceOnUse\" "
	    "width=\"6\" height=\"6\"><rect width=\"6\" height=\"6\" "
	    "fill=\"#eeeeee\"/><path d=\"M0,6 L6,0\" stroke=\"#999999\" "
	    "stroke-width=\"1\"/></pattern></defs>\n", p->fp);
	fprintf(p->fp, "<rect width=\"100%%\" height=\"100%%\" "
	    "fill=\"#ffffff\"/>\n<text x=\"%d\" y=\"%d\" class=\"t\">%s"
	    "</text>\n", SVG_MARGIN, SVG_MARGIN + SVG_TITLE - 2, title);
	for (n = 0, line = head.text; (nl = strchr(line, '\n')) != NULL;
	    line = nl + 1, n++) {
		*nl = '\0';
		fprintf(p->fp, "<text x=\"%d\" y=\"%g\" class=\"h\">",
		    SVG_MARGIN, SVG_MARGIN + SVG_TITLE + 4.0 +
		    (double)(n + 1) * SVG_LINE - 4.0);
		print_xml(p->fp, line);
		fputs("</text>\n", p->fp);
	}
	render_free(&head);
	for (n = 0; n < sh.blocks; n++)
		svg_grid(p, &g, &hs, n, SVG_MARGIN + (double)(n % sh.heads) *
		    (g.grid_w + SVG_GAP), g.top + (double)(n / sh.heads) *
		    (g.grid_h + SVG_GAP));
	svg_bar(p, &hs, SVG_MARGIN + (double)sh.heads * (g.grid_w + SVG_GAP),
	    g.top + g.block_title + g.head_h);
	fputs("</svg>\n", p->fp);
	return ATTN_OK;
}
