/*
 * workbench_keys.c - what the workbench's screen says of its keys: the
 * help that ? shows, the line of keys at the bottom (those of the mode
 * the workbench is in, as many as fit), and step mode's line, which
 * names the stage the screen has reached and its formula.
 * workbench_screen.c places them; workbench.c does what the keys say.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>

#include "attn.h"
#include "print.h"
#include "workbench.h"

void
wb_help(struct sb *b)
{
	static const char *const lines[] = {
		"Keys",
		"  up, k / down, j  the query: its row of each stage, marked "
		"in the heatmap",
		"  s                scaling on and off: 1/sqrt(d_k) (or "
		"--scale), or 1",
		"  + / -            double or halve d_k (the toy's; your "
		"inputs fix theirs)",
		"  c                the causal mask on and off: query i sees "
		"keys j <= i",
		"  h                the next head (and batch)",
		"  p                predict mode: guess m (more concentrated), "
		"f (more spread)",
		"                   or a (about the same: under "
		WB_SAME_NATS_TEXT " nats) before the",
		"                   weights show; the entropy answers",
		"  t                step mode: one stage more at each n (or "
		"right), b (or left)",
		"                   goes back; t again shows every stage",
		"  ?                this help, and back",
		"  q                quit",
		"",
		"Entropy -sum w log w is in nats: 0 when one key takes all "
		"the weight,",
		"log S when the weights are uniform; exp(entropy) is the "
		"effective number",
		"of keys.",
	};
	size_t k;

	for (k = 0; k < sizeof lines / sizeof lines[0]; k++)
		sb_line(b, k == 0, "%s", lines[k]);
}

void
wb_keys(const struct workbench *wb, struct sb *b)
{
	static const struct sb_item asking[] = {
		{ "m more concentrated", "m concentrated", 1 },
		{ "f more spread", "f spread", 2 },
		{ "a about the same", "a same", 3 },
		{ "p leave predict", "p leave", 4 },
		{ "q quit", "q quit", 0 },
	}, stepping[] = {
		{ "n \u2192 next stage", "n next", 1 },
		{ "b \u2190 back", "b back", 2 },
		{ "t every stage", "t all", 3 },
		{ "\u2191\u2193/k j query", "\u2191\u2193 query", 4 },
		{ "s scaling", "s scale", 5 },
		{ "? help", "? help", 6 },
		{ "q quit", "q quit", 0 },
	}, keys[] = {
		{ "\u2191\u2193/k j query", "\u2191\u2193 query", 2 },
		{ "s scaling", "s scale", 3 },
		{ "+ - d_k", "+ - d_k", 5 },
		{ "c causal", "c causal", 4 },
		{ "h head", "h head", 8 },
		{ "p predict", "p predict", 6 },
		{ "t step", "t step", 7 },
		{ "? help", "? help", 1 },
		{ "q quit", "q quit", 0 },
	};

	if (wb->asking)
		sb_items(b, asking, sizeof asking / sizeof asking[0], 2);
	else if (wb->step)
		sb_items(b, stepping, sizeof stepping / sizeof stepping[0], 2);
	else
		sb_items(b, keys, sizeof keys / sizeof keys[0], 2);
}

void
wb_step_line(const struct workbench *wb, const struct printer *p,
    struct sb *b)
{
	/* the stage each step adds; the first adds the vectors */
	static const enum attn_stage stage[WB_STEPS] = { ATTN_STAGE_COUNT,
		ATTN_STAGE_SCORES, ATTN_STAGE_SCALED, ATTN_STAGE_WEIGHTS,
		ATTN_STAGE_OUTPUT };
	const enum attn_stage s = stage[wb->step - 1];
	char f[128];

	if (s == ATTN_STAGE_COUNT)
		sb_printf(b, "step 1 of %d: the vectors, q of the query, k and "
		    "v of each key", WB_STEPS);
	else
		sb_printf(b, "step %d of %d: %s = %s", wb->step, WB_STEPS,
		    attn_stage_table[s].name, print_formula(p, s, f,
		    sizeof f));
	sb_span(b, 0, WB_BOLD, 0.0);
	sb_end(b);
}
