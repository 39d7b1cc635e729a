/*
 * print.h - the printers over computed stages: one file per output format
 * (print_table.c, print_delim.c, print_json.c), the --explain walk-through
 * (print_explain.c), and what they share (print.c): the shape and labels
 * of a stage (from attn_stage_shape), numbers, padding, and the table of
 * formats.  Printers read the numbers in struct attn_stages and never
 * compute a stage themselves.
 *
 * A new format is a file print_NAME.c defining its print function, a
 * value in enum out_format (options.h) and a row in print_formats
 * (print.c); a printer that reads stages besides those it prints says so
 * in its row's `wants`, so that attn_run keeps them.
 */
#ifndef ATTN_PRINT_H
#define ATTN_PRINT_H

#include <stdio.h>

#include "attn.h"
#include "options.h"

/* Names for the rows and columns of the stages, and of the mask and
 * bias files (NULL when there is none). */
struct names {
	char **query;	/* T names */
	char **key;	/* S names */
	const char *mask, *bias;
};

/* What every printer reads. */
struct printer {
	FILE *fp;
	const struct options *o;
	const struct attn_stages *st;
	const struct names *nm;
	unsigned numflags;	/* attn_format_number flags of the format */
	struct attn_error *err;
};

/* print_format flags. */
enum {
	PRINT_FIXED = 1,	/* numbers keep their trailing zeros */
	PRINT_HEADER = 2,	/* --header labels rows and columns */
	PRINT_EXPLAIN = 4	/* --explain prints in this format */
};

/* One output format: a row of print_formats. */
struct print_format {
	const char *name;	/* as -f names it */
	/* Print every stage of p->o->stages; fails only when out of
	 * memory (write errors stay in p->fp's error flag). */
	enum attn_status (*print)(const struct printer *p);
	unsigned flags;		/* PRINT_* */
	int digits;		/* default --digits; 0: shortest round trip */
	/* The stages it reads besides those in `printed`; NULL: none. */
	unsigned (*wants)(unsigned printed);
};

extern const struct print_format print_formats[OUT_COUNT];

/* The stages the printers will read for o: attn_run must keep them. */
unsigned print_wants(const struct options *o);

/* Whether --explain prints stage s for o (the mask aside, which it
 * prints when a masking rule is in force): every stage offered by name,
 * the backward ones with --grad. */
int print_explains(const struct options *o, enum attn_stage s);

/* Print what o asks for (--explain, or the --stage list in --format)
 * into fp.  Fails only when out of memory; write errors are left in
 * fp's error flag for the caller to check. */
enum attn_status print_run(FILE *fp, const struct options *o,
    const struct attn_stages *st, const struct names *nm,
    struct attn_error *err);

/* ------------------------------------------------------------- print.c */

/* x as the format writes it (o->digits, p->numflags); returns its
 * length.  buf has ATTN_NUM_MAX bytes. */
size_t print_number(const struct printer *p, char *buf, double x);

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

/* The label of column j of stage s; buf (ATTN_NUM_MAX bytes) holds it
 * when it is made up: value and d_k columns are numbered ("2", or "h1:2"
 * with several heads, "kv1:2" for KV heads that are fewer than the query
 * heads), a T x 1 stage's column is the stage's name. */
const char *print_col_label(const struct printer *p, enum attn_stage s,
    size_t j, char *buf);

/* The label of row i of a block of stage s: the query's, or for
 * grad_k and grad_v the key's. */
const char *print_row_label(const struct printer *p, enum attn_stage s,
    size_t i);

/* Width of a UTF-8 string in characters. */
size_t print_width(const char *s);

/* n spaces. */
void print_pad(FILE *fp, size_t n);

/* ------------------------------------------------------------- formats */

/* print_table.c: every stage in o->stages as an aligned table, and one
 * stage (explain prints them one by one). */
enum attn_status print_table(const struct printer *p);
enum attn_status print_table_stage(const struct printer *p,
    enum attn_stage s);

/* print_delim.c: comma- and tab-separated. */
enum attn_status print_csv(const struct printer *p);
enum attn_status print_tsv(const struct printer *p);

/* print_json.c */
enum attn_status print_json(const struct printer *p);

/* print_explain.c: every stage in order, with shapes, the scale, the
 * conventions in force and the row-sum check. */
enum attn_status print_explain(const struct printer *p);

#endif
