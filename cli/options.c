/*
 * options.c - struct options (see options.h): every default in one
 * function, the stages a run offers to --stage and --explain, and the
 * --stage list read against them.  The
 * table of options that fills it from argv is options_table.c's, what
 * each option sets options_set.c's.
 */
#include <stdio.h>
#include <string.h>

#include "attn.h"
#include "attn_io.h"
#include "options.h"
#include "options_hint.h"

/* Every default, in one place. */
void
options_init(struct options *o)
{
	memset(o, 0, sizeof *o);
	o->stages[0] = ATTN_STAGE_OUTPUT;
	o->nstages = 1;
	o->format = OUT_TABLE;
	o->digits = -1;		/* resolved once the format is known */
	o->color_range = RANGE_AUTO;	/* unit, or row for a narrow band */
	o->avail = ATTN_STAGES_ALL;	/* until the inputs are read */
	o->rtol = 1e-5;		/* numpy.allclose's */
	o->atol = 1e-8;
	o->factor = 2.0;	/* FlashAttention's tests' */
	o->emulate = ATTN_PREC_FP64;
	attn_config_init(&o->cfg);
}

unsigned
options_offered(const struct options *o)
{
	/* q, k and v: the operands as read, or with --proj the projections */
	unsigned set = ATTN_STAGES_ALL | ATTN_STAGE_BIT(ATTN_STAGE_Q) |
	    ATTN_STAGE_BIT(ATTN_STAGE_K) | ATTN_STAGE_BIT(ATTN_STAGE_V);

	if (o->grad != NULL)
		set |= ATTN_STAGES_GRAD;
	/* a BUNDLE may bring a bias: attn_stages_available tells then */
	if (o->grad != NULL && o->bias != NULL)
		set |= ATTN_STAGE_BIT(ATTN_STAGE_GRAD_BIAS);
	if (o->grad != NULL && o->sinks != NULL)
		set |= ATTN_STAGE_BIT(ATTN_STAGE_GRAD_SINKS);
	if (o->bias != NULL)
		set |= ATTN_STAGE_BIT(ATTN_STAGE_BIAS);
	if (o->dropout_mask != NULL)
		set |= ATTN_STAGES_DROPOUT;
	if (o->proj != NULL)
		set |= ATTN_STAGE_BIT(ATTN_STAGE_PROJECTED);
	if (o->cfg.rope)
		set |= ATTN_STAGE_BIT(ATTN_STAGE_Q_ROT) |
		    ATTN_STAGE_BIT(ATTN_STAGE_K_ROT);
	return set;
}

void
options_stage_names(char *buf, size_t size, unsigned set)
{
	size_t i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < ATTN_STAGE_COUNT && n < size; i++)
		if (!attn_stage_table[attn_stage_order[i]].internal &&
		    (set & ATTN_STAGE_BIT(attn_stage_order[i])))
			n += (size_t)snprintf(buf + n, size - n, "%s%s",
			    n > 0 ? ", " : "",
			    attn_stage_table[attn_stage_order[i]].name);
}

void
options_offer(struct options *o, unsigned avail, int layer)
{
	const unsigned operands = ATTN_STAGE_BIT(ATTN_STAGE_Q) |
	    ATTN_STAGE_BIT(ATTN_STAGE_K) | ATTN_STAGE_BIT(ATTN_STAGE_V);
	const unsigned bias = ATTN_STAGE_BIT(ATTN_STAGE_BIAS);
	size_t i;

	/* Without a layer q, k and v are the operands as read, and the
	 * bias is always: printed when --stage names them and where
	 * --explain starts, not computed, so not in --stage all (attn(1)) */
	o->inputs = avail & (operands | bias);
	o->avail = avail & ~bias & ~(layer ? 0 : operands);
	/* attn softmax starts from the logits, and has output with V */
	if (o->softmax && o->noperands < 2)
		o->avail &= ~ATTN_STAGE_BIT(ATTN_STAGE_OUTPUT);
	if (!o->all_stages)
		return;
	o->nstages = 0;
	for (i = 0; i < ATTN_STAGE_COUNT; i++) {
		const enum attn_stage s = attn_stage_order[i];

		if (!attn_stage_table[s].internal &&
		    (o->avail & ATTN_STAGE_BIT(s)))
			o->stages[o->nstages++] = s;
	}
}

/* Words that name a stage elsewhere: in the formula (the softmax of
 * the logits), in PyTorch and in FlashAttention's code; "did you mean"
 * offers the stage for them as for its own name. */
static const struct {
	const char *word;
	enum attn_stage stage;
} stage_words[] = {
	{ "softmax", ATTN_STAGE_WEIGHTS },
	{ "probs", ATTN_STAGE_WEIGHTS },
	{ "attn_weights", ATTN_STAGE_WEIGHTS },
	{ "logits", ATTN_STAGE_SCALED },
	{ "out", ATTN_STAGE_OUTPUT },
	{ "softmax_lse", ATTN_STAGE_LSE },
	{ "dq", ATTN_STAGE_GRAD_Q },
	{ "dk", ATTN_STAGE_GRAD_K },
	{ "dv", ATTN_STAGE_GRAD_V },
};

#define NSTAGE_WORDS (sizeof stage_words / sizeof stage_words[0])

/* "; did you mean NAME?" into buf for word, the len bytes at p, when it
 * is near a stage's name or one of stage_words, else "". */
static void
stage_hint(char *buf, size_t size, const char *p, size_t len)
{
	const char *names[ATTN_STAGE_COUNT + NSTAGE_WORDS];
	const char *near;
	size_t i, n = 0;

	for (i = 0; i < ATTN_STAGE_COUNT; i++)
		if (!attn_stage_table[i].internal)
			names[n++] = attn_stage_table[i].name;
	for (i = 0; i < NSTAGE_WORDS; i++)
		names[n++] = stage_words[i].word;
	if ((near = hint_suggest(buf, size, p, len, names, n, "")) == NULL)
		return;
	for (i = 0; i < NSTAGE_WORDS; i++)
		if (near == stage_words[i].word)
			snprintf(buf, size, "; did you mean %s?",
			    attn_stage_table[stage_words[i].stage].name);
}

enum attn_status
options_stages(struct options *o, const char *list, struct attn_error *err)
{
	const char *p = list;
	size_t i;

	if (strcmp(list, "all") == 0) {
		o->all_stages = 1;
		options_offer(o, options_offered(o), o->proj != NULL);
		return ATTN_OK;
	}
	o->nstages = 0;
	for (;;) {
		size_t len = strcspn(p, ",");
		enum attn_stage s = attn_stage_lookup(p, len);
		char name[64];

		attn_text_preview(name, 40, p, len);
		if (len == 0)
			return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
			    "empty stage name in --stage");
		if (len == 3 && strncmp(p, "all", 3) == 0)
			return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
			    "--stage all stands alone, without other stages");
		if (s == ATTN_STAGE_COUNT || attn_stage_table[s].internal) {
			char names[256], hint[64];

			options_stage_names(names, sizeof names,
			    options_offered(o));
			stage_hint(hint, sizeof hint, p, len);
			return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
			    "unknown stage '%s' (stages: %s, or all)%s", name,
			    names, hint);
		}
		for (i = 0; i < o->nstages; i++)
			if (o->stages[i] == s)
				return attn_error_set(err, ATTN_ERR_USAGE, NULL,
				    0, 0, "stage '%s' is listed twice", name);
		o->stages[o->nstages++] = s;
		if (p[len] == '\0')
			return ATTN_OK;
		p += len + 1;
	}
}
