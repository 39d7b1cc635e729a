/*
 * print.h - the printers over computed stages: one file per output format
 * (print_table.c, print_delim.c, print_json.c, print_html.c,
 * print_npy.c, print_npz.c), the --explain walk-through (print_explain.c), the
 * printers that are not formats (print_stats.c, print_arith.c,
 * heatmap.c, print_svg.c), and what they share (print.c, a leaf below
 * them all): the shape and labels of a stage (from attn_stage_shape),
 * numbers, padding, escapes.  Printers read the numbers in struct
 * attn_stages and never compute a stage themselves.  print_run.h is the
 * dispatcher above them, which main calls.
 *
 * A new format is a file print_NAME.c defining its print function,
 * declared here; a value in enum out_format and a row in formats
 * (formats.h); its printer in print_run.c's printers; and its case in
 * gen.c, which writes attn gen's array in each format.
 * A printer that reads stages besides those it prints says so in its
 * row's `wants`, so that attn_run keeps them.
 */
#ifndef ATTN_PRINT_H
#define ATTN_PRINT_H

#include <stdio.h>

#include "attn.h"
#include "attn_io.h"
#include "formats.h"
#include "options.h"
#include "render.h"

/* Names for the rows and columns of the stages, and of the mask and
 * bias files (NULL when there is none). */
struct names {
	char **query;	/* T names */
	char **key;	/* S names */
	char **value;	/* G*d_v names of V's columns from its file's
			 * header, or NULL */
	const char *mask, *bias;
	const char *slopes;	/* --alibi-slopes FILE's, or NULL */
};

/* What every printer reads. */
struct printer {
	FILE *fp;
	const struct options *o;
	const struct attn_stages *stages;
	const struct names *nm;
	const struct attn_inputs *in;	/* what stages was computed from */
	unsigned numflags;	/* attn_format_number flags of the format */
	struct attn_error *err;
};

/* ------------------------------------------------------------- print.c */

/* Whether --explain prints stage s for o (the mask aside, which it
 * prints when a masking rule is in force, and the lse, which it prints
 * when the run needs it: print_explain.c): q, k and v first, the
 * projections with a layer or else the operands as read, and the bias
 * as read where there is one (o->inputs), then every stage offered by
 * name that the run makes (o->avail: the backward ones with --grad,
 * ...).  The page shows the lse always. */
int print_explains(const struct options *o, enum attn_stage s);

/* The printer of a run for o's format, writing into fp (NULL for a
 * caller that only asks for text: cells, numbers, labels). */
void print_init(struct printer *p, FILE *fp, const struct options *o,
    const struct attn_stages *stages, const struct names *nm,
    const struct attn_inputs *in, struct attn_error *err);

/* x as the format writes it (o->digits, p->numflags); returns its
 * length.  buf has ATTN_NUM_MAX bytes. */
size_t print_number(const struct printer *p, char *buf, double x);

/* The rows of Q (T of the inputs, which --query makes more than the
 * stages' p->stages->T), and the row of Q that row i of a stage is: what a
 * query's position (i + offset) counts from. */
size_t print_queries(const struct printer *p);
size_t print_query_row(const struct printer *p, size_t i);

/* Block n of stage s (of attn_stage_shape's blocks): T rows, the
 * columns of one block; for output, every head of batch n. */
struct attn_matrix print_block(const struct printer *p, enum attn_stage s,
    size_t n);

/* ", batch 2, head 3" for block n of stage s, or "" with one of each. */
void print_block_name(const struct printer *p, enum attn_stage s, size_t n,
    char *buf, size_t size);

/* The dims of stage s as attn writes them: "2x3x4" ([B x][H x]T x C). */
void print_dims(const struct printer *p, enum attn_stage s, char *buf,
    size_t size);

/* The label of column j of block n of stage s (n PRINT_EVERY_BLOCK: the
 * label that names column j in every block, for a header printed once);
 * buf (PRINT_LABEL_MAX bytes) holds it when it is made up: value and d_k
 * columns are numbered ("2", or "h1:2" with several heads side by side,
 * "kv1:2" for KV heads that are fewer than the query heads), or for
 * output and grad_v named by V's header ("a", "h1:a": the columns of the
 * KV head the column's head reads; numbered for PRINT_EVERY_BLOCK when
 * that differs from block to block); a T x 1 stage's column is the
 * stage's name, a column of grad_sinks its head's ("h2"). */
#define PRINT_LABEL_MAX 256
#define PRINT_EVERY_BLOCK ((size_t)-1)
const char *print_col_label(const struct printer *p, enum attn_stage s,
    size_t n, size_t j, char *buf);

/* The label of row i of a block of stage s: the query's, or for the
 * stages whose rows are keys in the stage table (k, v, k_rot, grad_k,
 * grad_v, laid out as K and V) the key's, in every layout; the stage's
 * name for the one row of grad_sinks and of the gradient of a bias of
 * one row (attn_stage_axes). */
const char *print_row_label(const struct printer *p, enum attn_stage s,
    size_t i);

/* block(p, s, n) for each block n of stage s, with a blank line between
 * blocks; stops at the first failure. */
enum attn_status print_blocks(const struct printer *p, enum attn_stage s,
    enum attn_status (*block)(const struct printer *p, enum attn_stage s,
    size_t n));

/*
 * A table of more than PRINT_MAX_CELLS numbers shows, unless --full, its
 * first and last PRINT_EDGE rows and columns around "...", as NumPy
 * prints arrays (its printoptions threshold 1000 and edgeitems 3).
 */
#define PRINT_MAX_CELLS 1000
#define PRINT_EDGE 3
#define PRINT_ELLIPSIS "..."	/* in place of what is left out */

/* The rows (or columns) of a table that it shows: the first `head` and
 * the last `tail` of n around a "...", or all n (head n, tail 0). */
struct print_span {
	size_t n, head, tail;
};

/* The spans of rows and columns of a rows x cols table as p shows it. */
void print_spans(const struct printer *p, size_t rows, size_t cols,
    struct print_span *r, struct print_span *c);

/* How many lines (or columns) span sp shows, its "..." included. */
size_t print_span_count(const struct print_span *sp);

/* Which of n rows (or columns) the k-th shown is, when the first head
 * and the last tail are shown around a "...": n for the "...". */
size_t print_pick(size_t k, size_t head, size_t tail, size_t n);

/* The line under an elided table: how many rows and columns it shows,
 * and that --full shows them all; nothing when it shows every one. */
void print_elided(const struct printer *p, const struct print_span *r,
    const struct print_span *c);

/* How many sections the output has: the stages printed, and the stats;
 * csv, tsv and json name each section when there are several. */
size_t print_sections(const struct printer *p);

/* The columns a terminal gives a UTF-8 string: two for East Asian wide
 * characters, none for combining marks. */
size_t print_width(const char *s);

/* The character at s (not at its end): its length in bytes (1 for a
 * byte that starts no UTF-8 character), and in *width its columns. */
size_t print_char(const char *s, size_t *width);

/* n spaces. */
void print_pad(FILE *fp, size_t n);

/* "1, 2, 3" into buf: element n (in C order) of an array of dims
 * dim[0..ndim) by its NumPy index, from 0. */
void print_index(char *buf, size_t size, const size_t *dim, size_t ndim,
    size_t n);

/* s as XML (and HTML) text or attribute value: & < > " ' and newlines
 * escaped, and what XML cannot hold (control characters, bytes that are
 * not UTF-8) as U+FFFD. */
void print_xml(FILE *fp, const char *s);

/* s as a JSON string, with its escapes: control characters as \u,
 * what is not UTF-8 as U+FFFD. */
void print_json_string(FILE *fp, const char *s);

/* x as a JSON value, the shortest text that reads back to x whatever
 * --digits says; non-finite as attn's strings ("inf", "nan"). */
void print_json_double(FILE *fp, double x);

/* ------------------------------------------------------------- formats */

/* print_table.c: every stage in o->stages as an aligned table, one
 * stage, and one block of a stage (explain prints them one by one). */
enum attn_status print_table(const struct printer *p);
enum attn_status print_table_stage(const struct printer *p,
    enum attn_stage s);
enum attn_status print_table_block(const struct printer *p,
    enum attn_stage s, size_t n);

/* The text of element (i, j) of block n of stage s as a table shows it
 * (a masked weight is "-"), in buf (ATTN_NUM_MAX bytes); its length. */
size_t print_cell(const struct printer *p, enum attn_stage s, size_t n,
    size_t i, size_t j, char *buf);

/* The formula of stage s as computed in this run (for scaled, with the
 * softcap, bias, ALiBi and masks in force), in buf or static. */
const char *print_formula(const struct printer *p, enum attn_stage s,
    char *buf, size_t size);

/* print_delim.c: comma- and tab-separated, and whitespace text (txt:
 * numbers a space apart, as numpy.savetxt writes them); print_field
 * writes text as a field, quoted when it holds the separator (for txt,
 * any blank), a quote, a line break or surrounding blanks, or is empty
 * in txt; print_label writes a label so that it reads back as a label,
 * quoted also when it looks like a number, true or false, or a
 * comment. */
enum attn_status print_csv(const struct printer *p);
enum attn_status print_tsv(const struct printer *p);
enum attn_status print_txt(const struct printer *p);
void print_field(FILE *fp, const char *s, char sep);
void print_label(FILE *fp, const char *s, char sep);

/* print_html.c: one standalone page, every stage as --explain shows it,
 * each number's arithmetic on hover and focus. */
enum attn_status print_html(const struct printer *p);

/* print_json.c.  print_json_blocks nests the blocks of stage s as
 * [batch][head], leaving out the levels of one, and writes each with
 * block(p, s, n, indent); print_json_number writes x (non-finite as a
 * string, null when not defined). */
enum attn_status print_json(const struct printer *p);
void print_json_blocks(const struct printer *p, enum attn_stage s, int ind,
    void (*block)(const struct printer *p, enum attn_stage s, size_t n,
    int ind));
void print_json_number(const struct printer *p, int defined, double x);

/* print_npy.c: one stage, float64 (float32 with --npy-dtype f4); and an
 * array of dims dim[0..ndim) (attn gen's) whose numbers are the rows of
 * m in order, float32 when f4. */
enum attn_status print_npy(const struct printer *p);
void print_npy_array(FILE *fp, const struct attn_matrix *m,
    const size_t *dim, size_t ndim, int f4);

/*
 * The bytes of the .npy file that -f npy -s NAME writes for stage s, for
 * print_npy and print_npz alike: print_npy_stage makes its header and
 * the pieces of its numbers in C order, as the file holds them (the
 * stage's own memory where it lies so, whole or a row of its last dim a
 * piece, else a buffer charged to the memory limit; a number beyond
 * float32 with --npy-dtype f4 is a data error naming it);
 * print_npy_stage_free gives the buffer back.
 */
#define NPY_HEAD_MAX 384	/* the longest header, 4 dims of 20 digits */
struct npy_stage {
	char head[NPY_HEAD_MAX];
	/* the file's bytes in order: the header, then the numbers where
	 * they lie (the stage's runs) or in held */
	struct attn_npz_piece *pieces, two[2];
	size_t npieces;
	void *held;		/* a buffer of held_bytes of ours, or NULL */
	size_t held_bytes;
	size_t n;
	size_t size;		/* bytes a number in the file: 8, or 4 */
};
enum attn_status print_npy_stage(const struct printer *p, enum attn_stage s,
    struct npy_stage *a);
void print_npy_stage_free(struct npy_stage *a);

/* print_npz.c: every stage of the list as member NAME.npy of one NumPy
 * .npz archive, as numpy.savez writes it: each member's bytes those
 * print_npy writes for the stage alone. */
enum attn_status print_npz(const struct printer *p);

/* print_explain.c: every stage in order, with shapes, the scale, the
 * conventions in force and the row-sum check. */
enum attn_status print_explain(const struct printer *p);

/* The line after the weights or grad_scaled: how far the worst row sum
 * of stage s is from what it should be (1 and 0, or with sinks
 * 1 - exp(sink - lse) and delta * exp(sink - lse)), over the rows that
 * may attend some key. */
void print_row_sum_check(const struct printer *p, enum attn_stage s);

/* Whether any rule can mask an entry: then --explain shows the mask. */
int print_masking(const struct printer *p);

/* The three lines --explain starts with: the shapes, the scale and the
 * conventions in force; and the same as text in memory (r->text, each
 * line ending in a newline; render_free it), for the titles of the SVG
 * and HTML pages. */
void print_explain_head(const struct printer *p);
enum attn_status print_explain_head_text(const struct printer *p,
    struct render *r);

/* print_arith.c: the worked arithmetic.  print_arith_check refuses (a
 * usage error) an input too large to read that way; print_arith_block
 * writes it for block n of stage s, under its table; print_arith_cell
 * writes what leads to cell (i, j) of block n of stage s, the text the
 * HTML page shows for that cell.  Both need every stage held, row_max
 * and row_sum too. */
enum attn_status print_arith_check(const struct printer *p,
    struct attn_error *err);
/* Whether stage s has worked arithmetic: the forward stages but mask. */
int print_arith_has(enum attn_stage s);
void print_arith_block(const struct printer *p, enum attn_stage s,
    size_t n);
void print_arith_cell(const struct printer *p, enum attn_stage s, size_t n,
    size_t i, size_t j);

/* heatmap.c: --heatmap, the weights drawn in the terminal; heatmap_rgb
 * is the colour at position w (0 to 1) of the colour scale there, in SVG
 * and in HTML. */
enum attn_status print_heatmap(const struct printer *p);
void heatmap_rgb(double w, unsigned char rgb[3]);

/* Whether text on the colour at position w reads best dark (viridis is
 * light towards 1). */
int heatmap_dark(double w);

/* The colour at position w in xterm's 256 colours (one of nine steps),
 * and the shade character that stands for it without colour (' ',
 * U+2591 to U+2588, to the nearest 1/4, but ' ' for 0 alone). */
int heatmap_xterm256(double w);
const char *heatmap_shade(double w);

/*
 * The colour scale of a picture of the weights, as --color-range says
 * (the one place its rule lives): heatmap_scale_init once a picture,
 * then heatmap_position(hs, p, n, i, w) is where weight w of row i of
 * block n falls on it, 0 to 1 (w / top; nan stays nan), for heatmap_rgb.
 * top is 1 (unit), the largest weight a key may take in the picture
 * (max), or that of the row asked for (row, found when the row changes,
 * so ask row by row).  Without --color-range the range is chosen: row
 * when the weights a key may take are unequal and lie within a band
 * narrower than a quarter of the scale (chosen, with the band in lo and
 * hi), else unit.
 * heatmap_top_text names the top for a legend: "1", "0.2379, the
 * largest weight", "each row's largest weight" (in buf or static), and
 * heatmap_chosen_text says why a range was chosen ("" when none was).
 */
struct heat_scale {
	enum color_range range;	/* unit, max or row, never RANGE_AUTO */
	double top;		/* the weight drawn as position 1 */
	size_t n, i;		/* the row top is of, with RANGE_ROW */
	int chosen;		/* row, chosen for the band lo to hi */
	double lo, hi;
};
void heatmap_scale_init(struct heat_scale *hs, const struct printer *p);
double heatmap_position(struct heat_scale *hs, const struct printer *p,
    size_t n, size_t i, double w);
const char *heatmap_top_text(const struct heat_scale *hs,
    const struct printer *p, char *buf, size_t size);
const char *heatmap_chosen_text(const struct heat_scale *hs,
    const struct printer *p, char *buf, size_t size);

/* print_svg.c: the weights as an SVG heatmap. */
enum attn_status print_svg(const struct printer *p);

/* print_stats.c: --stats (stats.h's rows) as a table, and as the HTML
 * page's table; csv, tsv, txt and JSON print them themselves. */
enum attn_status print_stats(const struct printer *p);
void print_stats_html(const struct printer *p);

#endif
