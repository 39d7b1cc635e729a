/*
 * stats.c - --stats as rows (see stats.h): each query row's statistics,
 * read from the weights and mask stages, and its cells as text.  The
 * entropy -sum w log w is the one number made here, since no stage
 * holds it.  A row that may attend no key has no softmax, whatever
 * --masked-rows put in its weights: its statistics are undefined ("" as
 * text) but for the count, 0.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attn.h"
#include "print.h"
#include "stats.h"

const char *const stats_names[STAT_COUNT] = {
	"max_weight", "max_key", "entropy", "exp_entropy", "may_attend"
};
const char *const stats_heads[STAT_COUNT] = {
	"max weight", "at key", "entropy", "exp(entropy)", "may attend"
};

void
stats_row(const struct printer *p, size_t n, size_t i, struct stats_row *r)
{
	const struct attn_matrix w = print_block(p, ATTN_STAGE_WEIGHTS, n);
	const struct attn_matrix mask = print_block(p, ATTN_STAGE_MASK, n);
	size_t j;

	memset(r, 0, sizeof *r);
	r->argmax = w.cols;
	for (j = 0; j < mask.cols; j++)
		r->keys += *attn_at(&mask, i, j) != 0.0;
	r->defined = r->keys > 0;
	if (!r->defined)
		return;
	r->max = -INFINITY;
	for (j = 0; j < w.cols; j++) {
		double x = *attn_at(&w, i, j);

		if (x > r->max) {
			r->max = x;
			r->argmax = j;
		}
		if (x > 0.0)
			r->entropy -= x * log(x);
	}
}

const char *
stats_cell(const struct printer *p, const struct stats_row *r, int c,
    char *buf)
{
	buf[0] = '\0';
	if (c == STAT_KEYS) {
		snprintf(buf, ATTN_NUM_MAX, "%zu", r->keys);
		return buf;
	}
	if (!r->defined)
		return buf;
	switch (c) {
	case STAT_MAX:
		print_number(p, buf, r->max);
		break;
	case STAT_KEY:
		return r->argmax < p->stages->S ? p->nm->key[r->argmax] : buf;
	case STAT_ENTROPY:
		print_number(p, buf, r->entropy);
		break;
	case STAT_EXP:
		print_number(p, buf, exp(r->entropy));
		break;
	}
	return buf;
}
