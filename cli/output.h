/*
 * output.h - printers over computed stages: table, csv, tsv, json and the
 * --explain walk-through.  They read the numbers in struct attn_stages and
 * never compute a stage themselves.
 */
#ifndef ATTN_OUTPUT_H
#define ATTN_OUTPUT_H

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

/* The stages the printers will read for o: those printed, and what a
 * printer reads besides (a table of weights reads the mask). */
unsigned output_wants(const struct options *o);

/* Print what o asks for (--explain, or the --stage list in --format).
 * Fails only when out of memory; write errors are left in fp's error
 * flag for the caller to check. */
enum attn_status output_print(FILE *fp, const struct options *o,
    const struct attn_stages *st, const struct names *nm,
    struct attn_error *err);

#endif
