/*
 * options_set.h - what each option sets: the setters the table of options
 * (options_table.c) names in its rows, what parsing knows besides struct
 * options, and set_finish, what waits until every option is known.
 */
#ifndef ATTN_OPTIONS_SET_H
#define ATTN_OPTIONS_SET_H

#include "attn.h"
#include "options.h"
#include "rules.h"

/* What parsing knows besides the options themselves. */
struct parse {
	struct options *o;
	struct given given;	/* for the rules */
	int choice;		/* the argument's index among the row's words */
	int align, masked_rows, like;	/* their choice; -1 when not given */
	int lse_masked;		/* likewise */
	int emulate_order;	/* likewise */
	int stop;		/* --help or --version: read no further */
	const char *stage_list;	/* --stage's, read once --grad is known */
	int threads;		/* -j given: ATTN_THREADS is not read */
	int argc;		/* for an option whose argument is optional */
	char **argv;
};

/*
 * The setters: each reads its option's value arg (NULL for an option
 * without one, or an optional one left out; for a row with words, their
 * index is ps->choice) into ps->o, and returns a usage error naming the
 * option and what it wants when the value will not do.
 */
typedef enum attn_status set_fn(struct parse *ps, const char *arg,
    struct attn_error *err);
set_fn set_stage, set_format, set_npy_dtype, set_digits, set_scale,
    set_no_scale, set_window, set_softcap, set_align, set_masked_rows,
    set_like, set_lse_base, set_lse_masked, set_color, set_color_range, set_rtol, set_atol, set_factor,
    set_check_by, set_emulate_order,
    set_emulate, set_layout, set_kv_layout, set_heads, set_kv_heads, set_rope, set_rope_style,
    set_threads, set_progress, set_no_progress, set_output, set_svg, set_query,
    set_seed, set_dist, set_help, set_version;
set_fn set_dropout_p;

/*
 * Once argv is read (its operands in ps->o): what waits for every option
 * (-o FILE's extension choosing the format, --like under --align and
 * --masked-rows, the --stage list, ATTN_THREADS without -j, the default
 * --digits of the format), then every rule between options (rules.h).
 * A usage error.
 */
enum attn_status set_finish(struct parse *ps, struct attn_error *err);

#endif
