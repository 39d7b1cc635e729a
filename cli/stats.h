/*
 * stats.h - --stats as rows: for each query row of each batch and head,
 * the largest weight and the key it falls on, the entropy of the row in
 * nats, exp(entropy) (the effective number of keys: 1 when one key takes
 * all the weight, S when the weights are uniform), and how many keys the
 * row may attend.  A leaf below the formats, each of which prints the
 * rows its own way: print_stats.c as a table (and on the HTML page),
 * print_delim.c as csv, tsv or txt, print_json.c as JSON; the workbench
 * shows a row's beside its weights.
 */
#ifndef ATTN_STATS_H
#define ATTN_STATS_H

#include "attn.h"
#include "print.h"

/* The columns. */
enum { STAT_MAX, STAT_KEY, STAT_ENTROPY, STAT_EXP, STAT_KEYS, STAT_COUNT };

/* Their names as csv, tsv and JSON write them ("max_weight"), and as a
 * table heads them ("max weight"). */
extern const char *const stats_names[STAT_COUNT];
extern const char *const stats_heads[STAT_COUNT];

/* The statistics of one query row. */
struct stats_row {
	size_t keys;		/* keys it may attend */
	int defined;		/* whether it has a softmax (keys > 0) */
	double max;		/* the largest weight */
	size_t argmax;		/* its key (the first, on a tie); S: none */
	double entropy;		/* -sum w log w, in nats */
};

/* Row i of block n of the weights, from the weights and mask stages. */
void stats_row(const struct printer *p, size_t n, size_t i,
    struct stats_row *r);

/* Cell c of a row as text in buf (ATTN_NUM_MAX bytes): the number as
 * the format writes it, the key's label, or "" when undefined.  Returns
 * buf or the label. */
const char *stats_cell(const struct printer *p, const struct stats_row *r,
    int c, char *buf);

#endif
