/*
 * numbers.c - how fast libattn reads and writes numbers: `make
 * bench-numbers` prints
 *
 *	parse ns/number      attn_parse_number on shortest texts
 *	print ns/number      attn_format_number, shortest (digits 0)
 *	read csv ns/number   attn_read_array on a ROWS x COLS CSV text
 *	read json ns/number  the same numbers as a JSON array
 *	read json/csv        the ratio of the two
 *
 * The numbers are attn gen's (standard normal, seed 1), written as attn
 * writes them, so that the texts are those a user's files hold.  Each
 * figure is the fastest of several rounds (the least disturbed by other
 * work on the machine).  Arguments: [ROWS [COLS]], default 4096 64.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "attn_io.h"
#include "attn_private.h"
#include "clock.h"

/* Rounds of each measurement: parsing and printing are fast, reading
 * whole arrays less so. */
#define ROUNDS 20
#define READ_ROUNDS 5

static void *
xmalloc(size_t n)
{
	void *p = malloc(n);

	if (p == NULL) {
		fprintf(stderr, "bench-numbers: out of memory\n");
		exit(1);
	}
	return p;
}

/* The n numbers x as CSV (json 0) or as a JSON array of rows (json 1),
 * cols a row; *len is the text's length. */
static char *
write_text(const double *x, size_t rows, size_t cols, int json, size_t *len)
{
	char *t = xmalloc(rows * cols * (ATTN_NUM_MAX + 2) + 16), *p = t;
	size_t r, c;

	if (json)
		*p++ = '[';
	for (r = 0; r < rows; r++) {
		if (json)
			p += sprintf(p, "%s\n  [", r > 0 ? "," : "");
		for (c = 0; c < cols; c++) {
			if (c > 0)
				p += sprintf(p, json ? ", " : ",");
			p += attn_format_number(p, x[r * cols + c], 0, 0);
		}
		*p++ = json ? ']' : '\n';
	}
	if (json)
		p += sprintf(p, "\n]\n");
	*len = (size_t)(p - t);
	return t;
}

/* Nanoseconds a number that reading text as fmt takes, at best. */
static double
bench_read(const char *name, const char *text, size_t len,
    enum attn_format fmt, const double *want, size_t n)
{
	struct attn_array a;
	struct attn_error err;
	double best = 1e30, t;
	int round;

	for (round = 0; round < READ_ROUNDS; round++) {
		t = now();
		if (attn_read_array(name, text, len, fmt, ATTN_READ_FINITE, &a,
		    &err) != ATTN_OK) {
			fprintf(stderr, "bench-numbers: %s: %s\n", name,
			    err.msg);
			exit(1);
		}
		t = now() - t;
		if (memcmp(a.data, want, n * sizeof *want) != 0) {
			fprintf(stderr, "bench-numbers: %s read back other "
			    "numbers\n", name);
			exit(1);
		}
		attn_array_free(&a);
		best = t < best ? t : best;
	}
	return best * 1e9 / (double)n;
}

int
main(int argc, char **argv)
{
	size_t rows = argc > 1 ? strtoul(argv[1], NULL, 10) : 4096;
	size_t cols = argc > 2 ? strtoul(argv[2], NULL, 10) : 64;
	size_t n = rows * cols, i, len, csv_len, json_len;
	double *x, *y, best_parse = 1e30, best_print = 1e30, t, sum = 0;
	double csv, json;
	struct attn_matrix m;
	char *text, *csv_text, *json_text, buf[ATTN_NUM_MAX];
	size_t *off;
	int round;

	if (n == 0) {
		fprintf(stderr, "usage: bench-numbers [ROWS [COLS]]\n");
		return 64;
	}
	x = xmalloc(n * sizeof *x);
	y = xmalloc(n * sizeof *y);
	off = xmalloc((n + 1) * sizeof *off);
	m.rows = rows;
	m.cols = cols;
	m.stride = cols;
	m.data = x;
	attn_random_fill(&m, 1, ATTN_DIST_NORMAL);

	/* The numbers one after another, each text at off[i]. */
	text = xmalloc(n * ATTN_NUM_MAX);
	for (i = 0, len = 0; i < n; i++) {
		off[i] = len;
		len += attn_format_number(text + len, x[i], 0, 0);
	}
	off[n] = len;

	for (round = 0; round < ROUNDS; round++) {
		t = now();
		for (i = 0; i < n; i++)
			if (attn_parse_number(text + off[i], off[i + 1] - off[i],
			    &y[i]) != 0)
				y[i] = 0;
		t = now() - t;
		best_parse = t < best_parse ? t : best_parse;
		if (memcmp(x, y, n * sizeof *x) != 0) {
			fprintf(stderr, "bench-numbers: a number did not "
			    "read back\n");
			return 1;
		}

		t = now();
		for (i = 0; i < n; i++)
			sum += (double)attn_format_number(buf, x[i], 0, 0);
		t = now() - t;
		best_print = t < best_print ? t : best_print;
	}
	if (sum != (double)ROUNDS * (double)len) {
		fprintf(stderr, "bench-numbers: printing is not steady\n");
		return 1;
	}

	csv_text = write_text(x, rows, cols, 0, &csv_len);
	json_text = write_text(x, rows, cols, 1, &json_len);
	csv = bench_read("bench.csv", csv_text, csv_len, ATTN_FMT_CSV, x, n);
	json = bench_read("bench.json", json_text, json_len, ATTN_FMT_JSON, x,
	    n);

	printf("numbers: %zu (%zu x %zu, standard normal, shortest text, "
	    "%.1f bytes each)\n", n, rows, cols, (double)len / (double)n);
	printf("parse ns/number: %.1f\n", best_parse * 1e9 / (double)n);
	printf("print ns/number: %.1f\n", best_print * 1e9 / (double)n);
	printf("read csv ns/number: %.1f\n", csv);
	printf("read json ns/number: %.1f\n", json);
	printf("read json/csv: %.2f\n", json / csv);

	free(json_text);
	free(csv_text);
	free(text);
	free(off);
	free(y);
	free(x);
	return 0;
}
