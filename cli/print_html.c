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
 *
 * The workbench.  Above the stages, controls change the computation
 * (the 1/sqrt(d_k) scaling on or off, a slider that multiplies the scale,
 * 1/temperature, the causal mask), choose a query row to follow, hide the
 * weights until the reader predicts which way they move, and step
 * through the stages one at a time for a projector.  The page's script
 * (print_html.js, made into C strings at build time) recomputes every
 * stage in double precision from Q, K, V, the mask and the bias as the
 * run read them, which html_data embeds as the shortest text that reads
 * back to each double, and writes the numbers, colours and arithmetic
 * again as attn writes them.  What the script cannot recompute (a
 * layer's passes, RoPE, --emulate, the backward stages) leaves the
 * controls off, with a note saying why (html_bench_off).  Texts that
 * the causal control changes and C words (the conventions line, the
 * formulas) are written here for both states, as data-c0 and data-c1.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attn.h"
#include "attn_io.h"
#include "print.h"
#include "words.h"

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
    "font:.9rem/1.4 ui-monospace,'DejaVu Sans Mono',monospace}"
    /* the workbench */
    "[hidden]{display:none!important}"
    ".bench{border:1px solid #ccc;border-radius:4px;background:#fafaf7;"
    "padding:.5rem .75rem;margin:.75rem 0}"
    ".bench fieldset{border:0;margin:0;padding:0;min-width:0;display:flex;"
    "flex-wrap:wrap;gap:.4rem 1.25rem;align-items:center}"
    ".bench legend{font-weight:bold;padding:0 0 .25rem}"
    ".bench label{white-space:nowrap}"
    ".bench input[type=range]{width:9rem;max-width:100%%;"
    "vertical-align:middle}"
    ".bench button{font:inherit;padding:.2rem .6rem}"
    ".bench :focus-visible,#stepper :focus-visible{outline:3px solid "
    "#e8590c;outline-offset:2px}"
    ".mono{font-family:ui-monospace,'DejaVu Sans Mono',monospace;"
    "font-size:.9rem;overflow-wrap:anywhere}"
    ".note{color:#8a3b00}"
    "#bench-cmd,#bench-note,#predict-result{margin:.4rem 0 0}"
    "#predict{margin:.5rem 0 0;padding:.5rem;border-left:4px solid #e8590c;"
    "background:#fff}"
    "#predict p{margin:0 0 .4rem}"
    "#focus h2{font-size:1rem;margin:.6rem 0 .25rem}"
    "#focus td.pct{text-align:left;min-width:7rem}"
    ".pbar{display:inline-block;height:.8rem;background:#3b528b;"
    "vertical-align:middle;margin-right:.35rem}"
    "tr.chosen>th{color:#b33d00}"
    "tr.chosen>th::before{content:'\\25b8 '}"
    "tr.chosen>td{box-shadow:inset 0 2px #e8590c,inset 0 -2px #e8590c}"
    ".concealed .blocks,.concealed .check,.concealed .stats,"
    ".concealed .legend,.concealed h3,.concealed .pct,.concealed .w"
    "{visibility:hidden}"
    ".concealed h2::after{content:' (hidden until you predict)';"
    "color:#b33d00;font-weight:normal}"
    "#stepper{position:sticky;top:0;z-index:1;background:#fff;"
    "border-bottom:2px solid #e8590c;padding:.4rem 0;display:flex;"
    "flex-wrap:wrap;gap:.5rem;align-items:center}"
    "#stepper button{font:inherit;padding:.2rem .8rem}"
    "body.steps{max-width:none;font-size:1.6rem}"
    "body.steps h2{font-size:2rem}"
    "body.steps main>section.off{display:none}"
    "body.steps #work{font-size:1.1rem}";

/* The page's script, cli/print_html.js, a line a string (the build
 * makes print_html_js.c from it), ending with NULL. */
extern const char *const print_html_js[];

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
	struct heat_scale hs;
	size_t i, j;

	print_block_name(p, s, n, where, sizeof where);
	heatmap_scale_init(&hs, p);
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
				/* where --color-range puts it */
				double pos = heatmap_position(&hs, p, n, i, x);
				unsigned char rgb[3];

				heatmap_rgb(pos, rgb);
				fprintf(p->fp, " style=\"background:#%02x%02x%02x;"
				    "color:#%s\"", rgb[0], rgb[1], rgb[2],
				    heatmap_dark(pos) ? "000" : "fff");
			}
			if (arith && print_arith_has(s))
				html_arith(p, s, n, i, j);
			fprintf(p->fp, ">%s</td>", buf);
		}
		fputs("</tr>\n", p->fp);
	}
	fputs("</tbody></table></div>\n", p->fp);
}

/* The colour scale under the weights: 0 to 1, or as --color-range says
 * (then its word in data-range, for a script that colours cells again);
 * without the option data-range is "auto", and a range chosen for a
 * narrow band says so. */
static void
html_legend(const struct printer *p)
{
	static const char *const range[] = { "", " data-range=\"max\"",
		" data-range=\"row\"", " data-range=\"auto\"" };
	char top[ATTN_NUM_MAX + 32], chosen[2 * ATTN_NUM_MAX + 64];
	struct heat_scale hs;

	heatmap_scale_init(&hs, p);
	fprintf(p->fp, "<p class=\"legend\"%s>0 <span class=\"bar\"></span> "
	    "%s%s%s%s <span class=\"swatch\"></span> masked</p>\n",
	    range[p->o->color_range], heatmap_top_text(&hs, p, top,
	    sizeof top), hs.chosen ? " (" : "", heatmap_chosen_text(&hs, p,
	    chosen, sizeof chosen), hs.chosen ? ")" : "");
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

/* ------------------------------------------------------------ workbench */

/*
 * Why the page's script cannot recompute this run, for the note that
 * replaces the controls; NULL when it can.  The script knows the kernel
 * (scores, scale, softcap, bias, ALiBi, masks, sinks, the masked-row
 * policy) over the inputs the kernel read, and nothing before or after
 * it.
 */
static const char *
html_bench_off(const struct printer *p)
{
	if (p->stages->proj)
		return "--proj (the layer's projections)";
	if (p->o->cfg.rope)
		return "--rope";
	if (p->stages->precision != ATTN_PREC_FP64)
		return "--emulate";
	/* the kernel read Q, K and V times them, which the page lacks */
	if (p->o->descale[0] != NULL || p->o->descale[1] != NULL ||
	    p->o->descale[2] != NULL)
		return "--descale-q, --descale-k or --descale-v";
	if (p->o->grad != NULL)
		return "--grad (the backward stages)";
	return NULL;
}

/* The text fn writes for the run with causal masking c, in *r. */
static enum attn_status
html_render_causal(const struct printer *p, void (*fn)(const struct printer *),
    int c, struct render *r)
{
	struct options o = *p->o;
	struct printer q = *p;
	enum attn_status status;

	o.cfg.causal = c;
	q.o = &o;
	if ((status = render_open(r, p->err)) != ATTN_OK)
		return status;
	q.fp = r->fp;
	fn(&q);
	return render_close(r, ATTN_OK, p->err);
}

/* The line of text at *s (up to a newline, which becomes a NUL); *s
 * then points past it, or is NULL after the last. */
static char *
html_next_line(char **s)
{
	char *line = *s, *nl;

	if (line == NULL || *line == '\0')
		return *s = NULL;
	if ((nl = strchr(line, '\n')) != NULL) {
		*nl = '\0';
		*s = nl + 1;
	} else {
		*s = NULL;
	}
	return line;
}

/* data-c0 and data-c1: a text as it reads with causal off and on, when
 * the two differ. */
static void
html_causal_attrs(const struct printer *p, const char *c0, const char *c1)
{
	if (c0 == NULL || c1 == NULL || strcmp(c0, c1) == 0)
		return;
	fputs(" data-c0=\"", p->fp);
	print_xml(p->fp, c0);
	fputs("\" data-c1=\"", p->fp);
	print_xml(p->fp, c1);
	putc('"', p->fp);
}

/* The lines --explain starts with, a paragraph each; with the
 * workbench, each line that the causal control changes carries both
 * texts (the script writes the scale line itself). */
static void
html_head(const struct printer *p, int bench)
{
	struct render run, v[2];
	char *s, *s0, *s1, *line;
	int ok = 1, c;

	memset(v, 0, sizeof v);
	if (print_explain_head_text(p, &run) != ATTN_OK) {
		render_free(&run);
		return;
	}
	for (c = 0; c < 2 && bench && ok; c++)
		ok = html_render_causal(p, print_explain_head, c, &v[c]) ==
		    ATTN_OK;
	s = run.text;
	s0 = bench && ok ? v[0].text : NULL;
	s1 = bench && ok ? v[1].text : NULL;
	while ((line = html_next_line(&s)) != NULL) {
		fputs("<p class=\"head\"", p->fp);
		html_causal_attrs(p, html_next_line(&s0), html_next_line(&s1));
		putc('>', p->fp);
		print_xml(p->fp, line);
		fputs("</p>\n", p->fp);
	}
	render_free(&run);
	render_free(&v[0]);
	render_free(&v[1]);
}

/* The formula of stage s in a span, with its texts for causal off and
 * on when the workbench can change it. */
static void
html_formula(const struct printer *p, enum attn_stage s, int bench)
{
	char f[128], f0[128], f1[128];
	struct options o[2];
	struct printer q[2];
	int c;

	fputs("<span class=\"formula\"", p->fp);
	if (bench) {
		for (c = 0; c < 2; c++) {
			o[c] = *p->o;
			o[c].cfg.causal = c;
			q[c] = *p;
			q[c].o = &o[c];
		}
		html_causal_attrs(p, print_formula(&q[0], s, f0, sizeof f0),
		    print_formula(&q[1], s, f1, sizeof f1));
	}
	putc('>', p->fp);
	print_xml(p->fp, print_formula(p, s, f, sizeof f));
	fputs("</span>", p->fp);
}

/* The controls, above the stages: the form the script shows (hidden
 * until it runs, so that a page without scripts shows no dead
 * controls); off, with a note, when why says the script cannot
 * recompute the run. */
static void
html_controls(const struct printer *p, const char *why)
{
	const char *off = why != NULL ? " disabled" : "";
	char where[64];
	struct attn_shape sh;
	size_t i, n;

	fputs("<form id=\"bench\" class=\"bench\" hidden>\n<fieldset>"
	    "<legend>Change the computation: every number below is worked out "
	    "again</legend>\n", p->fp);
	fprintf(p->fp, "<label><input type=\"checkbox\" id=\"ctl-scale\"%s> "
	    "scale by 1/sqrt(d<sub>k</sub>)</label>\n"
	    "<label for=\"ctl-temp\">scale &#215; <output id=\"ctl-temp-out\""
	    " for=\"ctl-temp\">1</output> (1/temperature)</label>"
	    "<input type=\"range\" id=\"ctl-temp\"%s>\n"
	    "<label><input type=\"checkbox\" id=\"ctl-causal\"%s> causal"
	    "</label>\n<label>query <select id=\"ctl-query\"%s>", off, off,
	    off, off);
	for (i = 0; i < p->stages->T; i++) {
		fprintf(p->fp, "<option value=\"%zu\">", i);
		print_xml(p->fp, p->nm->query[i]);
		fputs("</option>", p->fp);
	}
	fputs("</select></label>\n", p->fp);
	attn_stage_shape(p->stages, ATTN_STAGE_WEIGHTS, &sh);
	if (sh.blocks > 1) {
		fprintf(p->fp, "<label>of <select id=\"ctl-block\"%s>", off);
		for (n = 0; n < sh.blocks; n++) {
			print_block_name(p, ATTN_STAGE_WEIGHTS, n, where,
			    sizeof where);
			fprintf(p->fp, "<option value=\"%zu\">%s</option>", n,
			    where + 2);
		}
		fputs("</select></label>\n", p->fp);
	}
	fprintf(p->fp, "<label><input type=\"checkbox\" id=\"ctl-predict\"%s>"
	    " predict first</label>\n"
	    "<button type=\"button\" id=\"ctl-reset\"%s>as attn ran it</button>"
	    "\n<button type=\"button\" id=\"ctl-steps\">step through the "
	    "stages</button>\n</fieldset>\n", off, off);
	if (why != NULL)
		fprintf(p->fp, "<p id=\"bench-note\" class=\"note\">The controls "
		    "are off: this page shows %s, which it cannot work out "
		    "again; run attn with the options you want instead.</p>\n",
		    why);
	else
		fputs("<p id=\"bench-cmd\" class=\"mono\" aria-live=\"polite\">"
		    "</p>\n<div id=\"predict\" hidden>\n<p id=\"predict-q\">"
		    "</p>\n<button type=\"button\" id=\"predict-m\">more "
		    "concentrated (m)</button>\n<button type=\"button\" "
		    "id=\"predict-s\">more spread (s)</button>\n</div>\n"
		    "<p id=\"predict-result\" aria-live=\"polite\"></p>\n"
		    "<div id=\"focus\"></div>\n", p->fp);
	fputs("</form>\n<nav id=\"stepper\" aria-label=\"stages\" hidden>"
	    "<button type=\"button\" id=\"step-prev\">Prev</button>"
	    "<span id=\"step-where\" aria-live=\"polite\"></span>"
	    "<button type=\"button\" id=\"step-next\">Next</button>"
	    "<button type=\"button\" id=\"step-exit\">all stages</button>"
	    "</nav>\n", p->fp);
}

/* The rows x cols matrix m as a JSON array of rows (a mask or bias
 * through attn_input_at, which broadcasts it); null without data. */
static void
html_json_matrix(FILE *fp, const struct attn_matrix *m, size_t rows,
    size_t cols, int input)
{
	size_t i, j;

	if (m->data == NULL) {
		fputs("null", fp);
		return;
	}
	putc('[', fp);
	for (i = 0; i < rows; i++) {
		fputs(i > 0 ? ",[" : "[", fp);
		for (j = 0; j < cols; j++) {
			if (j > 0)
				putc(',', fp);
			print_json_double(fp, input ? attn_input_at(m, i, j) :
			    *attn_at(m, i, j));
		}
		putc(']', fp);
	}
	putc(']', fp);
}

/*
 * What the script recomputes from, as JSON in a script element: the
 * dims, the options of the kernel, each query row's place in Q (with
 * --query), and for each block of the per-head stages (in their order)
 * its batch, head and inputs as the kernel read them (attn_head_inputs:
 * Q, K, V, and the mask and bias broadcast to T x S); for each block of
 * output, the batch, head and column of each of its columns.
 */
static void
html_data(const struct printer *p)
{
	const struct attn_stages *stages = p->stages;
	const struct attn_config *c = &p->o->cfg;
	struct attn_head_inputs hi;
	struct attn_shape sh;
	struct attn_where w;
	FILE *fp = p->fp;
	size_t i, j, n;

	fprintf(fp, "<script type=\"application/json\" id=\"attn-data\">\n"
	    "{\"T\":%zu,\"Tq\":%zu,\"S\":%zu,\"dk\":%zu,\"dv\":%zu,\"H\":%zu,"
	    "\"digits\":%d,\"mode\":\"%s\",\"scale\":", stages->T,
	    print_queries(p), stages->S, stages->d_k, stages->d_v,
	    stages->heads, p->o->digits,
	    c->scale_mode == ATTN_SCALE_DEFAULT ? "default" :
	    c->scale_mode == ATTN_SCALE_NONE ? "none" : "value");
	print_json_double(fp, stages->scale);
	fputs(",\"softcap\":", fp);
	print_json_double(fp, c->softcap);
	fprintf(fp, ",\"causal\":%d,\"window\":", c->causal);
	if (c->window)
		fprintf(fp, "[%zu,%zu]", c->window_left, c->window_right);
	else
		fputs("null", fp);
	fprintf(fp, ",\"bottomRight\":%d,\"invert\":%d,\"maskedRows\":%d,"
	    "\"maskedRowsName\":\"%s\",\"maskFile\":%d,\"biasFile\":%d,"
	    "\"arithmetic\":%d,\"lseBase2\":%d,\"lseMaskedInf\":%d,"
	    "\"rows\":[",
	    c->align == ATTN_ALIGN_BOTTOM_RIGHT, c->mask_invert != 0,
	    (int)c->masked_rows, words_masked_rows[c->masked_rows],
	    p->nm->mask != NULL, p->nm->bias != NULL, p->o->arithmetic,
	    stages->lse_base == ATTN_LSE_2,
	    stages->lse_masked == ATTN_LSE_MASKED_POS_INF);
	for (i = 0; i < stages->T; i++)
		fprintf(fp, "%s%zu", i > 0 ? "," : "", print_query_row(p, i));
	/* each row's keys [k0, k1) and position, per batch (packed
	 * sequences and used keys make them differ from row to row) */
	fprintf(fp, "],\"packed\":%d,\"place\":[",
	    p->in->varlen.seqs > 0 || p->in->varlen.used_k != NULL);
	for (n = 0; n < stages->batches; n++) {
		fputs(n > 0 ? ",[" : "[", fp);
		for (i = 0; i < stages->T; i++) {
			struct attn_row_place at;

			attn_row_place(c, p->in, print_queries(p), stages->S, n,
			    print_query_row(p, i), &at);
			fprintf(fp, "%s[%zu,%zu,%lld]", i > 0 ? "," : "",
			    at.k0, at.k1, at.qpos);
		}
		putc(']', fp);
	}
	/* the slopes of each head (inner) of each batch (outer): a
	 * kernel's alibi_slopes may differ by batch */
	fputs("],\"alibi\":", fp);
	for (n = 0; n < stages->batches && c->alibi; n++) {
		fputs(n > 0 ? ",[" : "[[", fp);
		for (i = 0; i < stages->heads; i++) {
			if (i > 0)
				putc(',', fp);
			print_json_double(fp, attn_run_slope(c, p->in, n, i,
			    stages->heads));
		}
		putc(']', fp);
	}
	fputs(c->alibi ? "]" : "null", fp);
	fputs(",\"sinks\":", fp);
	for (i = 0; i < stages->heads && stages->sinks.data != NULL; i++) {
		fputs(i > 0 ? "," : "[", fp);
		print_json_double(fp, *attn_at(&stages->sinks, 0, i));
	}
	fputs(stages->sinks.data != NULL ? "]" : "null", fp);
	fputs(",\n\"blocks\":[", fp);
	attn_stage_shape(stages, ATTN_STAGE_WEIGHTS, &sh);
	for (n = 0; n < sh.blocks; n++) {
		attn_shape_block_where(stages, ATTN_STAGE_WEIGHTS, n, 0, 0, &w);
		attn_head_inputs(stages, p->in, w.batch, w.head, &hi);
		fprintf(fp, "%s{\"b\":%zu,\"h\":%zu,\"q\":", n > 0 ? ",\n" : "",
		    w.batch, w.head);
		html_json_matrix(fp, &hi.q, stages->T, stages->d_k, 0);
		fputs(",\"k\":", fp);
		html_json_matrix(fp, &hi.k, stages->S, stages->d_k, 0);
		fputs(",\"v\":", fp);
		html_json_matrix(fp, &hi.v, stages->S, stages->d_v, 0);
		fputs(",\"mask\":", fp);
		html_json_matrix(fp, &hi.mask, stages->T, stages->S, 1);
		fputs(",\"bias\":", fp);
		html_json_matrix(fp, &hi.bias, stages->T, stages->S, 1);
		putc('}', fp);
	}
	fputs("],\n\"output\":[", fp);
	attn_stage_shape(stages, ATTN_STAGE_OUTPUT, &sh);
	for (n = 0; n < sh.blocks; n++) {
		fputs(n > 0 ? ",[" : "[", fp);
		for (j = 0; j < sh.cols; j++) {
			attn_shape_block_where(stages, ATTN_STAGE_OUTPUT, n, 0,
			    j, &w);
			fprintf(fp, "%s[%zu,%zu,%zu]", j > 0 ? "," : "",
			    w.batch, w.head, w.col);
		}
		putc(']', fp);
	}
	fputs("],\n\"stops\":[", fp);
	/* the colour map's stops, from heatmap_rgb, as the legend has them */
	for (i = 0; i <= 8; i++) {
		unsigned char rgb[3];

		heatmap_rgb((double)i / 8.0, rgb);
		fprintf(fp, "%s[%d,%d,%d]", i > 0 ? "," : "", rgb[0], rgb[1],
		    rgb[2]);
	}
	fputs("]}\n</script>\n", fp);
}

/* The page's script, line by line. */
static void
html_script(const struct printer *p)
{
	size_t i;

	fputs("<script>\n", p->fp);
	for (i = 0; print_html_js[i] != NULL; i++)
		fputs(print_html_js[i], p->fp);
	fputs("</script>\n", p->fp);
}

/* ---------------------------------------------------------------- page */

/* Stage s: its title, its blocks, and what --explain adds under it;
 * hidden (for the workbench to show) when hidden. */
static enum attn_status
html_stage(const struct printer *p, enum attn_stage s, int arith, int bench,
    int hidden)
{
	struct attn_shape sh;
	size_t n;

	attn_stage_shape(p->stages, s, &sh);
	fprintf(p->fp, "<section id=\"%s\"%s>\n<h2>%s = ",
	    attn_stage_table[s].name, hidden ? " hidden" : "",
	    attn_stage_table[s].name);
	html_formula(p, s, bench);
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
	const char *why = html_bench_off(p);
	const int bench = why == NULL;
	enum attn_status status = ATTN_OK;
	enum attn_stage s;
	int k;
	size_t n;

	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
	    "<meta charset=\"utf-8\">\n<meta name=\"viewport\" "
	    "content=\"width=device-width, initial-scale=1\">\n", p->fp);
	fprintf(p->fp, "<title>attn: attention of %zu quer%s over %zu "
	    "key%s</title>\n<style>", p->stages->T,
	    p->stages->T == 1 ? "y" : "ies", p->stages->S,
	    p->stages->S == 1 ? "" : "s");
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
	html_head(p, bench);
	fprintf(p->fp, "<p class=\"hint\">%s</p>\n</header>\n", arith ?
	    "Point at a number, or move to it with Tab, to see how it was "
	    "worked out." : "The input is too large to write each number's "
	    "arithmetic out (as --arithmetic refuses to).");
	html_controls(p, why);
	fputs("<main>\n", p->fp);
	/* the mask is there, hidden, for the causal control to show */
	for (n = 0; n < ATTN_STAGE_COUNT && status == ATTN_OK; n++) {
		s = attn_stage_order[n];
		if (print_explains(p->o, s) && (s != ATTN_STAGE_MASK ||
		    print_masking(p) || bench))
			status = html_stage(p, s, arith, bench, s ==
			    ATTN_STAGE_MASK && !print_masking(p));
	}
	fputs("</main>\n<aside id=\"work\" aria-live=\"polite\">"
	    "<h2>Worked arithmetic</h2><pre id=\"work-text\">", p->fp);
	fputs(arith ? "Point at a number to see its arithmetic here." :
	    "Too large to write out.", p->fp);
	fputs("</pre></aside>\n", p->fp);
	if (bench)
		html_data(p);
	html_script(p);
	fputs("</body>\n</html>\n", p->fp);
	return status;
}
