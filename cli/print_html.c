/*
 * print_html.c - -f html: one standalone page (inline CSS and a little
 * plain JavaScript, nothing fetched) with every stage as --explain shows
 * it, the weights as heatmaps per head with masked cells hatched, and
 * each number's worked arithmetic shown when the pointer is over it or
 * it has keyboard focus (Tab moves from number to number).
 *
 * The page is --explain laid out for a browser: the same title lines
 * (print_explain_head), formulas (print_formula), cells (print_cell),
 * check line (print_row_sum_check) and statistics, and the arithmetic of
 * a cell is print_arith_cell's text, the very functions --arithmetic
 * prints with, carried in the cell's data-a attribute.  Inputs too large
 * for --arithmetic get a page without it, which says so.
 *
 * Readable on a phone: tables scroll sideways inside their section, text
 * wraps, and the arithmetic panel sticks to the bottom of the screen.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attn.h"
#include "print.h"

static const char html_style[] =
    "*{box-sizing:border-box}"
    "body{font:16px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,"
    "'DejaVu Sans',sans-serif;margin:0 auto;max-width:64rem;"
    "padding:0 1rem;color:#222;background:#fff}"
    "h1{font-size:1.5rem;margin:1rem 0 .25rem}"
    "h2{font-size:1.15rem;margin:1.5rem 0 .5rem;overflow-wrap:anywhere}"
    "h3{font-size:1rem;margin:.75rem 0 .25rem}"
    ".shape{color:#666;font-weight:normal;white-space:nowrap}"
    "header p{margin:.25rem 0;color:#444;overflow-wrap:anywhere}"
    ".hint{color:#666;font-style:italic}"
    ".blocks{display:flex;flex-wrap:wrap;gap:0 2rem}"
    ".block{max-width:100%%;min-width:0}"
    ".scroll{overflow-x:auto;max-width:100%%}"
    "caption{text-align:left;font-weight:bold;padding:.25rem 0}"
    "table{border-collapse:collapse;margin:.25rem 0 .5rem;"
    "font-variant-numeric:tabular-nums}"
    "th,td{padding:.3rem .55rem;text-align:right;white-space:nowrap}"
    "thead th{border-bottom:1px solid #999}"
    "tbody th{text-align:left;border-right:1px solid #999}"
    "td[data-a]{cursor:help}"
    "td:focus{outline:3px solid #e8590c;outline-offset:-3px}"
    "td.current{box-shadow:inset 0 0 0 3px #e8590c}"
    "td.masked{background:repeating-linear-gradient(45deg,#eee 0 5px,"
    "#ccc 5px 7px);color:#555}"
    ".check{font-size:.9rem;color:#444}"
    ".legend{display:flex;align-items:center;gap:.5rem;font-size:.9rem;"
    "flex-wrap:wrap}"
    ".bar{display:inline-block;width:10rem;height:.9rem;"
    "border:1px solid #888;background:linear-gradient(to right%s)}"
    ".swatch{display:inline-block;width:.9rem;height:.9rem;"
    "border:1px solid #888;background:repeating-linear-gradient(45deg,"
    "#eee 0 3px,#ccc 3px 5px)}"
    "details pre{white-space:pre-wrap;overflow-wrap:anywhere;"
    "font-size:.85rem}"
    "#work{position:sticky;bottom:0;background:#f7f7f4;"
    "border-top:2px solid #e8590c;padding:.5rem .75rem;margin:1rem -1rem 0;"
    "max-height:40vh;overflow-y:auto}"
    "#work h2{margin:0 0 .25rem;font-size:1rem}"
    "#work-text{margin:0;white-space:pre-wrap;overflow-wrap:anywhere;"
    "font:.9rem/1.4 ui-monospace,'DejaVu Sans Mono',monospace}";

/* Shows a cell's data-a in the panel, on hover and on focus. */
static const char html_script[] =
    "(function () {\n"
    "  var text = document.getElementById('work-text');\n"
    "  var current = null;\n"
    "  function show(event) {\n"
    "    var cell = event.target.closest ? "
    "event.target.closest('[data-a]') : null;\n"
    "    if (!cell) return;\n"
    "    if (current) current.classList.remove('current');\n"
    "    current = cell;\n"
    "    cell.classList.add('current');\n"
    "    text.textContent = cell.getAttribute('data-a');\n"
    "  }\n"
    "  document.addEventListener('mouseover', show);\n"
    "  document.addEventListener('focusin', show);\n"
    "})();\n";

/* A cell's worked arithmetic as the value of its data-a attribute. */
static void
html_arith(const struct printer *p, enum attn_stage s, size_t n, size_t i,
    size_t j)
{
	char where[64], label[PRINT_LABEL_MAX];
	struct printer q = *p;
	struct render r;

	if (render_open(&r, p->err) != ATTN_OK)
		return;		/* the page goes without this one */
	q.fp = r.fp;
	/* which cell, then how it comes about */
	print_block_name(p, s, n, where, sizeof where);
	fprintf(r.fp, "%s%s, %s, %s:\n", attn_stage_table[s].name, where,
	    p->nm->query[i], print_col_label(p, s, n, j, label));
	print_arith_cell(&q, s, n, i, j);
	if (render_close(&r, ATTN_OK, p->err) == ATTN_OK && r.len > 0) {
		if (r.text[r.len - 1] == '\n')
			r.text[r.len - 1] = '\0';
		fputs(" tabindex=\"0\" data-a=\"", p->fp);
		print_xml(p->fp, r.text);
		putc('"', p->fp);
	}
	render_free(&r);
}

/* A line of text that fn writes (ending in a newline), as a paragraph. */
static void
html_para(const struct printer *p, void (*fn)(const struct printer *),
    const char *cls)
{
	struct printer q = *p;
	struct render r;

	if (render_open(&r, p->err) != ATTN_OK)
		return;
	q.fp = r.fp;
	fn(&q);
	if (render_close(&r, ATTN_OK, p->err) == ATTN_OK) {
		char *line = r.text, *nl;

		for (; (nl = strchr(line, '\n')) != NULL; line = nl + 1) {
			*nl = '\0';
			fprintf(p->fp, "<p class=\"%s\">", cls);
			print_xml(p->fp, line);
			fputs("</p>\n", p->fp);
		}
	}
	render_free(&r);
}

/* --explain's check lines under the weights and grad_scaled. */
static void
weights_check(const struct printer *p)
{
	print_row_sum_check(p, ATTN_STAGE_WEIGHTS);
}

static void
grad_check(const struct printer *p)
{
	print_row_sum_check(p, ATTN_STAGE_GRAD_SCALED);
}

/* Block n of stage s as a table; weights as a heatmap.  With arith,
 * every number carries its arithmetic. */
static void
html_block(const struct printer *p, enum attn_stage s, size_t n, int arith)
{
	const struct attn_matrix m = print_block(p, s, n);
	char buf[PRINT_LABEL_MAX], where[64];
	size_t i, j;

	print_block_name(p, s, n, where, sizeof where);
	fputs("<div class=\"scroll\"><table>", p->fp);
	if (where[0] != '\0')
		fprintf(p->fp, "<caption>%s</caption>", where + 2);
	fputs("\n<thead><tr><th></th>", p->fp);
	for (j = 0; j < m.cols; j++) {
		fputs("<th scope=\"col\">", p->fp);
		print_xml(p->fp, print_col_label(p, s, n, j, buf));
		fputs("</th>", p->fp);
	}
	fputs("</tr></thead>\n<tbody>\n", p->fp);
	for (i = 0; i < m.rows; i++) {
		fputs("<tr><th scope=\"row\">", p->fp);
		print_xml(p->fp, print_row_label(p, s, i));
		fputs("</th>", p->fp);
		for (j = 0; j < m.cols; j++) {
			double x = *attn_at(&m, i, j);

			print_cell(p, s, n, i, j, buf);
			fputs("<td", p->fp);
			if (s == ATTN_STAGE_WEIGHTS && strcmp(buf, "-") == 0) {
				fputs(" class=\"masked\"", p->fp);
			} else if (s == ATTN_STAGE_WEIGHTS && !isnan(x)) {
				unsigned char rgb[3];

				heatmap_rgb(x, rgb);
				fprintf(p->fp, " style=\"background:#%02x%02x%02x;"
				    "color:#%s\"", rgb[0], rgb[1], rgb[2],
				    heatmap_dark(x) ? "000" : "fff");
			}
			if (arith && print_arith_has(s))
				html_arith(p, s, n, i, j);
			fprintf(p->fp, ">%s</td>", buf);
		}
		fputs("</tr>\n", p->fp);
	}
	fputs("</tbody></table></div>\n", p->fp);
}

/* The colour scale under the weights. */
static void
html_legend(const struct printer *p)
{
	fputs("<p class=\"legend\">0 <span class=\"bar\"></span> 1 "
	    "<span class=\"swatch\"></span> masked</p>\n", p->fp);
}

/* The worked arithmetic of block n of stage s as --explain --arithmetic
 * writes it, folded away. */
static void
html_worked(const struct printer *p, enum attn_stage s, size_t n)
{
	struct printer q = *p;
	struct render r;

	if (render_open(&r, p->err) != ATTN_OK)
		return;
	q.fp = r.fp;
	print_arith_block(&q, s, n);
	if (render_close(&r, ATTN_OK, p->err) == ATTN_OK && r.len > 0) {
		fputs("<details><summary>worked arithmetic</summary><pre>",
		    p->fp);
		print_xml(p->fp, r.text);
		fputs("</pre></details>\n", p->fp);
	}
	render_free(&r);
}

/* Stage s: its title, its blocks, and what --explain adds under it. */
static enum attn_status
html_stage(const struct printer *p, enum attn_stage s, int arith)
{
	char f[128];
	struct attn_shape sh;
	size_t n;

	attn_stage_shape(p->st, s, &sh);
	fprintf(p->fp, "<section id=\"%s\">\n<h2>%s = ",
	    attn_stage_table[s].name, attn_stage_table[s].name);
	print_xml(p->fp, print_formula(p, s, f, sizeof f));
	fprintf(p->fp, " <span class=\"shape\">[%s = %zux%zu]</span></h2>\n"
	    "<div class=\"blocks\">\n", sh.legend, sh.rows, sh.cols);
	for (n = 0; n < sh.blocks; n++) {
		fputs("<div class=\"block\">\n", p->fp);
		html_block(p, s, n, arith);
		if (p->o->arithmetic && arith && print_arith_has(s))
			html_worked(p, s, n);
		fputs("</div>\n", p->fp);
	}
	fputs("</div>\n", p->fp);
	if (s == ATTN_STAGE_WEIGHTS) {
		html_legend(p);
		html_para(p, weights_check, "check");
		if (p->o->stats)
			print_stats_html(p);
	}
	if (s == ATTN_STAGE_GRAD_SCALED)
		html_para(p, grad_check, "check");
	fputs("</section>\n", p->fp);
	return ATTN_OK;
}

enum attn_status
print_html(const struct printer *p)
{
	const int arith = print_arith_check(p, NULL) == ATTN_OK;
	enum attn_status st = ATTN_OK;
	int k;
	size_t n;

	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
	    "<meta charset=\"utf-8\">\n<meta name=\"viewport\" "
	    "content=\"width=device-width, initial-scale=1\">\n", p->fp);
	fprintf(p->fp, "<title>attn: attention of %zu quer%s over %zu "
	    "key%s</title>\n<style>", p->st->T, p->st->T == 1 ? "y" : "ies",
	    p->st->S, p->st->S == 1 ? "" : "s");
	/* the colour bar's gradient, from heatmap_rgb */
	{
		char stops[9 * 10 + 1];
		size_t len = 0;

		for (k = 0; k <= 8; k++) {
			unsigned char rgb[3];

			heatmap_rgb(k / 8.0, rgb);
			len += (size_t)snprintf(stops + len, sizeof stops - len,
			    ",#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
		}
		fprintf(p->fp, html_style, stops);
	}
	fputs("</style>\n</head>\n<body>\n<header>\n<h1>Attention, stage by "
	    "stage</h1>\n<p>Attention(Q, K, V) = softmax(Q K<sup>T</sup> / "
	    "sqrt(d<sub>k</sub>)) V, as attn computes it</p>\n", p->fp);
	html_para(p, print_explain_head, "head");
	fprintf(p->fp, "<p class=\"hint\">%s</p>\n</header>\n<main>\n", arith ?
	    "Point at a number, or move to it with Tab, to see how it was "
	    "worked out." : "The input is too large to write each number's "
	    "arithmetic out (as --arithmetic refuses to).");
	for (n = 0; n < ATTN_STAGE_COUNT && st == ATTN_OK; n++)
		if (print_explains(p->o, attn_stage_order[n]) &&
		    (attn_stage_order[n] != ATTN_STAGE_MASK ||
		    print_masking(p)))
			st = html_stage(p, attn_stage_order[n], arith);
	fputs("</main>\n<aside id=\"work\" aria-live=\"polite\">"
	    "<h2>Worked arithmetic</h2><pre id=\"work-text\">", p->fp);
	fputs(arith ? "Point at a number to see its arithmetic here." :
	    "Too large to write out.", p->fp);
	fprintf(p->fp, "</pre></aside>\n<script>\n%s</script>\n</body>\n"
	    "</html>\n", html_script);
	return st;
}
