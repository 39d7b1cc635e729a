/*
 * gen.c - attn gen ROWSxCOLS[xN..] [--seed N] [--dist normal|uniform]: an
 * array of 2 to 4 dims of seeded random numbers (attn_random_fill: the
 * same to the bit on every platform), so that a demonstration such as
 * "scores grow with d_k unless scaled", or the 4-D inputs of a kernel
 * under test, need no other program.
 *
 * An array of N dims is the matrix of its rows (the product of all dims
 * but the last) by its last dim, filled as a matrix is, then read in C
 * order: `attn gen 2x4x3x8` holds the numbers of `attn gen 24x8`, as
 * numpy's reshape(2, 4, 3, 8) of it would.
 *
 * It writes the array alone in the format asked for, numbers as attn
 * writes them everywhere: a table is right-aligned columns (4 significant
 * digits by default) with no labels, so that attn and numpy.loadtxt read
 * it back; csv, tsv and txt are one row a line at full precision
 * (txt a space apart, as numpy.savetxt writes); json is nested arrays;
 * npy has the array's own shape; html a page holding the table.  An
 * array of 3 or 4 dims is written in text as attn writes a stacked
 * stage: a comment line "# gen DIMS" first, then its rows (a table puts
 * a blank line between its matrices).  Rendered in memory, then
 * written atomically (-o).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "attn_io.h"
#include "formats.h"
#include "gen.h"
#include "memory.h"
#include "print.h"
#include "render.h"
#include "whole.h"
#include "words.h"

/* Bytes held per number: the double, and its text unless it goes
 * straight into -o FILE's temporary file (render_open_to). */
#define GEN_TEXT_BYTES ATTN_NUM_MAX

/* The most dims attn gen writes, as many as attn reads. */
#define GEN_MAX_DIMS 4

/* The shape asked for: dim[0..ndim), and the matrix it is made from:
 * rows (every dim but the last, multiplied) x cols (the last). */
struct gen_shape {
	size_t ndim;
	size_t dim[GEN_MAX_DIMS];
	size_t rows, cols;
	size_t block;		/* rows of one matrix: dim[ndim - 2] */
};

/* "2x4x3x8" into *sh: 2 to GEN_MAX_DIMS whole numbers from 1, joined by
 * 'x' (whole.h's rule: a dim past 2^64 - 1 is refused as written, not
 * saturated); gen_main checks that their product fits. */
static enum attn_status
gen_shape(const char *arg, struct gen_shape *sh, struct attn_error *err)
{
	const char *p = arg;
	unsigned long long n;

	memset(sh, 0, sizeof *sh);
	while (sh->ndim < GEN_MAX_DIMS && whole_scan(&p, SIZE_MAX, &n) == 0 &&
	    n >= 1) {
		sh->dim[sh->ndim++] = (size_t)n;
		if (*p == '\0' && sh->ndim >= 2) {
			sh->cols = sh->dim[sh->ndim - 1];
			sh->block = sh->dim[sh->ndim - 2];
			return ATTN_OK;
		}
		if (*p++ != 'x')
			break;
	}
	return whole_error(err, "attn gen", "the shape ROWSxCOLS[xN..], 2 to "
	    "4 whole numbers", 1, SIZE_MAX, " (as 4x64 or 2x4x3x8)", arg);
}

/* The dims as attn writes them: "2x4x3x8". */
static void
gen_dims(FILE *fp, const struct gen_shape *sh)
{
	size_t d;

	for (d = 0; d < sh->ndim; d++)
		fprintf(fp, "%s%zu", d > 0 ? "x" : "", sh->dim[d]);
}

/* Before the rows of an array of more than 2 dims in text: "# gen DIMS",
 * as attn heads a stacked stage. */
static void
gen_comment(FILE *fp, const struct gen_shape *sh)
{
	if (sh->ndim <= 2)
		return;
	fputs("# gen ", fp);
	gen_dims(fp, sh);
	putc('\n', fp);
}

/* The array as a table: right-aligned columns two spaces apart, a blank
 * line between its matrices. */
static enum attn_status
gen_table(FILE *fp, const struct options *o, const struct gen_shape *sh,
    const struct attn_matrix *m, struct attn_error *err)
{
	char buf[ATTN_NUM_MAX];
	size_t i, j, *width;

	if ((width = attn_alloc_array(m->cols, sizeof *width)) == NULL)
		return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "out of memory laying out %zu columns", m->cols);
	for (j = 0; j < m->cols; j++) {
		width[j] = 0;
		for (i = 0; i < m->rows; i++) {
			size_t len = attn_format_number(buf, *attn_at(m, i, j),
			    o->digits, ATTN_NUM_FIXED);

			if (len > width[j])
				width[j] = len;
		}
	}
	gen_comment(fp, sh);
	for (i = 0; i < m->rows; i++) {
		if (i > 0 && i % sh->block == 0 && sh->ndim > 2)
			putc('\n', fp);
		for (j = 0; j < m->cols; j++) {
			size_t len = attn_format_number(buf, *attn_at(m, i, j),
			    o->digits, ATTN_NUM_FIXED);

			print_pad(fp, (j > 0 ? 2 : 0) + width[j] - len);
			fputs(buf, fp);
		}
		putc('\n', fp);
	}
	free(width);
	return ATTN_OK;
}

/* Row i of m, its numbers sep apart, in the format's digits. */
static void
gen_row(FILE *fp, const struct options *o, const struct attn_matrix *m,
    size_t i, const char *sep)
{
	char buf[ATTN_NUM_MAX];
	size_t j;

	for (j = 0; j < m->cols; j++) {
		attn_format_number(buf, *attn_at(m, i, j), o->digits, 0);
		fprintf(fp, "%s%s", j > 0 ? sep : "", buf);
	}
}

/* csv, tsv and txt: one row a line. */
static void
gen_lines(FILE *fp, const struct options *o, const struct gen_shape *sh,
    const struct attn_matrix *m, const char *sep)
{
	size_t i;

	gen_comment(fp, sh);
	for (i = 0; i < m->rows; i++) {
		gen_row(fp, o, m, i, sep);
		putc('\n', fp);
	}
}

/* json: the part of the array at dim d whose first row is row, at
 * indent ind, as nested arrays (a row of numbers on one line). */
static void
gen_json(FILE *fp, const struct options *o, const struct gen_shape *sh,
    const struct attn_matrix *m, size_t d, size_t row, int ind)
{
	size_t k, rows = 1, e;

	if (d == sh->ndim - 1) {
		putc('[', fp);
		gen_row(fp, o, m, row, ", ");
		putc(']', fp);
		return;
	}
	for (e = d + 1; e + 1 < sh->ndim; e++)
		rows *= sh->dim[e];	/* rows of each part one level down */
	fputs("[\n", fp);
	for (k = 0; k < sh->dim[d]; k++) {
		fprintf(fp, "%*s", ind + 2, "");
		gen_json(fp, o, sh, m, d + 1, row + k * rows, ind + 2);
		fputs(k + 1 < sh->dim[d] ? ",\n" : "\n", fp);
	}
	fprintf(fp, "%*s]", ind, "");
}

/* html: a page holding the array, a table per matrix (captioned with
 * its index, [0, 1, :, :], when there are several). */
static void
gen_html(FILE *fp, const struct options *o, const struct gen_shape *sh,
    const struct attn_matrix *m)
{
	const char *dist = words_dist[o->dist];
	char buf[ATTN_NUM_MAX];
	size_t i, j, d;

	fprintf(fp, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
	    "<meta charset=\"utf-8\">\n<meta name=\"viewport\" "
	    "content=\"width=device-width, initial-scale=1\">\n"
	    "<title>attn gen %s --seed %llu --dist %s</title>\n<style>"
	    "body{font-family:sans-serif;margin:1rem}"
	    "div{overflow-x:auto}table{border-collapse:collapse;"
	    "font-variant-numeric:tabular-nums}td{padding:.2rem .5rem;"
	    "text-align:right}caption{text-align:left}</style>\n</head>\n"
	    "<body>\n<h1>attn gen %s --seed %llu --dist %s</h1>\n",
	    o->operands[0], o->seed, dist, o->operands[0], o->seed, dist);
	for (i = 0; i < m->rows; i++) {
		if (i % sh->block == 0) {
			size_t n = i / sh->block, inner = 1;

			if (i > 0)
				fputs("</table></div>\n", fp);
			fputs("<div><table>\n", fp);
			if (sh->ndim > 2) {
				/* the index of matrix n over the outer dims */
				fputs("<caption>[", fp);
				for (d = 0; d + 2 < sh->ndim; d++)
					inner *= sh->dim[d];
				for (d = 0; d + 2 < sh->ndim; d++) {
					inner /= sh->dim[d];
					fprintf(fp, "%zu, ", n / inner %
					    sh->dim[d]);
				}
				fputs(":, :]</caption>\n", fp);
			}
		}
		fputs("<tr>", fp);
		for (j = 0; j < m->cols; j++) {
			attn_format_number(buf, *attn_at(m, i, j), o->digits,
			    ATTN_NUM_FIXED);
			fprintf(fp, "<td>%s</td>", buf);
		}
		fputs("</tr>\n", fp);
	}
	fputs("</table></div>\n</body>\n</html>\n", fp);
}

static enum attn_status
gen_render(FILE *fp, const struct options *o, const struct gen_shape *sh,
    const struct attn_matrix *m, struct attn_error *err)
{
	char names[128];

	switch (o->format) {
	case OUT_TABLE:
		return gen_table(fp, o, sh, m, err);
	case OUT_CSV:
		gen_lines(fp, o, sh, m, ",");
		return ATTN_OK;
	case OUT_TSV:
		gen_lines(fp, o, sh, m, "\t");
		return ATTN_OK;
	case OUT_TXT:
		gen_lines(fp, o, sh, m, " ");
		return ATTN_OK;
	case OUT_JSON:
		gen_json(fp, o, sh, m, 0, 0, 0);
		putc('\n', fp);
		return ATTN_OK;
	case OUT_HTML:
		gen_html(fp, o, sh, m);
		return ATTN_OK;
	case OUT_NPY:
		print_npy_array(fp, m, sh->dim, sh->ndim, o->npy_f4);
		return ATTN_OK;
	case OUT_NPZ:	/* refused by rules_check_gen */
	case OUT_COUNT:
		break;
	}
	formats_list(names, sizeof names, FORMATS_OR | FORMATS_GEN, 0);
	return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
	    "attn gen writes %s", names);
}

enum attn_status
gen_main(const struct options *o, struct attn_error *err)
{
	struct attn_matrix m = { 0 };
	struct render out = { 0 };
	struct memory_limit lim;
	struct gen_shape sh;
	enum attn_status status;
	size_t n = 1, need, d;
	int fits = 1;

	if ((status = gen_shape(o->operands[0], &sh, err)) != ATTN_OK ||
	    (status = memory_limit(&lim, err)) != ATTN_OK ||
	    (status = render_open_to(&out, o->output, err)) != ATTN_OK)
		return status;
	for (d = 0; d < sh.ndim; d++)
		fits &= attn_size_mul(n, sh.dim[d], &n) == 0;
	if (!fits || attn_size_mul(n, sizeof(double) + (out.direct ? 0 :
	    GEN_TEXT_BYTES), &need) != 0 || need > lim.bytes) {
		status = attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "a %s %s%s more than %s (%llu bytes)", o->operands[0],
		    sh.ndim > 2 ? "array" : "matrix", out.direct ? " needs" :
		    " and its text need", lim.what, lim.bytes);
		render_free(&out);
		return status;
	}
	sh.rows = n / sh.cols;
	if ((status = attn_matrix_alloc(&m, sh.rows, sh.cols, err)) !=
	    ATTN_OK) {
		render_free(&out);
		return status;
	}
	attn_random_fill(&m, o->seed, o->dist);
	status = render_close(&out, gen_render(out.fp, o, &sh, &m, err), err);
	attn_matrix_free(&m);
	if (status == ATTN_OK)
		status = render_write(&out, o->output, err);
	render_free(&out);
	return status;
}
