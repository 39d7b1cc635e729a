/*
 * gen.c - attn gen ROWSxCOLS [--seed N] [--dist normal|uniform]: a matrix
 * of seeded random numbers (attn_random_fill: the same to the bit on
 * every platform), so that a demonstration such as "scores grow with d_k
 * unless scaled" needs no other program.
 *
 * It writes the matrix alone in the format asked for, numbers as attn
 * writes them everywhere: a table is right-aligned columns (4 significant
 * digits by default) with no labels, so that attn and numpy.loadtxt read
 * it back; csv, tsv and txt are one row a line at full precision
 * (txt a space apart, as numpy.savetxt writes); json is an
 * array of rows; html a page holding the table.  Rendered in memory,
 * then written atomically (-o).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "gen.h"
#include "io.h"
#include "memory.h"
#include "print.h"
#include "render.h"
#include "whole.h"

/* Bytes held per number: the double and its text. */
#define GEN_BYTES_PER_NUMBER (sizeof(double) + ATTN_NUM_MAX)

/* "4x64" into *rows and *cols, each a whole number from 1 (whole.h's
 * rule: a shape past 2^64 - 1 is refused as written, not saturated). */
static enum attn_status
gen_shape(const char *arg, size_t *rows, size_t *cols,
    struct attn_error *err)
{
	const char *p = arg;
	unsigned long long r, c;

	if (whole_scan(&p, SIZE_MAX, &r) == 0 && r >= 1 && *p++ == 'x' &&
	    whole_scan(&p, SIZE_MAX, &c) == 0 && c >= 1 && *p == '\0') {
		*rows = (size_t)r;
		*cols = (size_t)c;
		return ATTN_OK;
	}
	return whole_error(err, "attn gen", "the shape ROWSxCOLS, whole "
	    "numbers", 1, SIZE_MAX, " (as 4x64)", arg);
}

/* The matrix as a table: right-aligned columns two spaces apart. */
static enum attn_status
gen_table(FILE *fp, const struct options *o, const struct attn_matrix *m,
    struct attn_error *err)
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
	for (i = 0; i < m->rows; i++) {
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

/* csv and tsv: one row a line; json: an array of rows. */
static void
gen_rows(FILE *fp, const struct options *o, const struct attn_matrix *m,
    const char *open, const char *sep, const char *close)
{
	char buf[ATTN_NUM_MAX];
	size_t i, j;

	if (o->format == OUT_JSON)
		fputs("[\n", fp);
	for (i = 0; i < m->rows; i++) {
		fputs(open, fp);
		for (j = 0; j < m->cols; j++) {
			attn_format_number(buf, *attn_at(m, i, j), o->digits,
			    0);
			fprintf(fp, "%s%s", j > 0 ? sep : "", buf);
		}
		fputs(i + 1 < m->rows || o->format != OUT_JSON ? close : "]\n",
		    fp);
	}
	if (o->format == OUT_JSON)
		fputs("]\n", fp);
}

/* html: a page holding the matrix as a table. */
static void
gen_html(FILE *fp, const struct options *o, const struct attn_matrix *m)
{
	char buf[ATTN_NUM_MAX];
	size_t i, j;

	fprintf(fp, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
	    "<meta charset=\"utf-8\">\n<meta name=\"viewport\" "
	    "content=\"width=device-width, initial-scale=1\">\n"
	    "<title>attn gen %s --seed %llu --dist %s</title>\n<style>"
	    "body{font-family:sans-serif;margin:1rem}"
	    "div{overflow-x:auto}table{border-collapse:collapse;"
	    "font-variant-numeric:tabular-nums}td{padding:.2rem .5rem;"
	    "text-align:right}</style>\n</head>\n<body>\n"
	    "<h1>attn gen %s --seed %llu --dist %s</h1>\n<div><table>\n",
	    o->operands[0], o->seed, o->dist == ATTN_DIST_UNIFORM ?
	    "uniform" : "normal", o->operands[0], o->seed,
	    o->dist == ATTN_DIST_UNIFORM ? "uniform" : "normal");
	for (i = 0; i < m->rows; i++) {
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
gen_render(FILE *fp, const struct options *o, const struct attn_matrix *m,
    struct attn_error *err)
{
	switch (o->format) {
	case OUT_TABLE:
		return gen_table(fp, o, m, err);
	case OUT_CSV:
		gen_rows(fp, o, m, "", ",", "\n");
		return ATTN_OK;
	case OUT_TSV:
		gen_rows(fp, o, m, "", "\t", "\n");
		return ATTN_OK;
	case OUT_TXT:
		gen_rows(fp, o, m, "", " ", "\n");
		return ATTN_OK;
	case OUT_JSON:
		gen_rows(fp, o, m, "  [", ", ", "],\n");
		return ATTN_OK;
	case OUT_HTML:
		gen_html(fp, o, m);
		return ATTN_OK;
	case OUT_NPY:
		print_npy_matrix(fp, m, o->npy_f4);
		return ATTN_OK;
	case OUT_COUNT:
		break;
	}
	return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
	    "attn gen writes table, csv, tsv, json, html, npy or txt");
}

enum attn_status
gen_main(const struct options *o, struct attn_error *err)
{
	struct attn_matrix m = { 0 };
	struct render out = { 0 };
	struct memory_limit lim;
	enum attn_status st;
	size_t rows = 0, cols = 0, n, need;

	if ((st = gen_shape(o->operands[0], &rows, &cols, err)) != ATTN_OK ||
	    (st = memory_limit(&lim, err)) != ATTN_OK)
		return st;
	if (attn_size_mul(rows, cols, &n) != 0 ||
	    attn_size_mul(n, GEN_BYTES_PER_NUMBER, &need) != 0 ||
	    need > lim.bytes)
		return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "a %zux%zu matrix and its text need more than %s (%llu "
		    "bytes)", rows, cols, lim.what, lim.bytes);
	if ((st = attn_matrix_alloc(&m, rows, cols, err)) != ATTN_OK)
		return st;
	attn_random_fill(&m, o->seed, o->dist);
	if ((st = render_open(&out, err)) == ATTN_OK)
		st = render_close(&out, gen_render(out.fp, o, &m, err), err);
	attn_matrix_free(&m);
	if (st == ATTN_OK)
		st = render_write(&out, o->output, err);
	render_free(&out);
	return st;
}
