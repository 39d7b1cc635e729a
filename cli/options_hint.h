/*
 * options_hint.h - what attn says of an option written wrong: unknown,
 * abbreviated (getopt_long takes a prefix; attn does not), an option of
 * the other command (attn or attn gen), given a value it does not take,
 * missing its value, or followed by an option where its value should
 * be.  Each is a usage error whose message names the word and what was
 * meant.  The table of options (options_table.c) calls these as
 * getopt_long returns, with its rows as struct hint_option.
 */
#ifndef ATTN_OPTIONS_HINT_H
#define ATTN_OPTIONS_HINT_H

#include <stddef.h>

#include "attn.h"

/* An option of the table, as the hints see it. */
struct hint_option {
	const char *name;	/* long name, without "--" */
	char letter;		/* short name, or 0 */
	int here;		/* an option of the command given (attn, or
				 * attn gen), not only of the other one */
	int file;		/* its value is a file */
	const char *const *words;	/* the words its value may be
					 * (NULL-terminated), or NULL */
};

/* getopt_long returned '?' while parsing argv for attn (gen 0) or attn
 * gen, whose options are opts[0..nopts): name the option that is wrong. */
enum attn_status hint_unknown(char **argv, int gen,
    const struct hint_option *opts, size_t nopts, struct attn_error *err);

/* getopt_long took a long option for r, with its value arg (NULL:
 * none): ATTN_OK when the word spells r's name in full, else the
 * options (of opts[0..nopts)) that the word begins. */
enum attn_status hint_full_name(char **argv, const struct hint_option *r,
    const char *arg, const struct hint_option *opts, size_t nopts,
    struct attn_error *err);

/* getopt_long returned ':': the option at the end of argv wants a
 * value. */
enum attn_status hint_missing_value(char **argv, struct attn_error *err);

/* word, the next word of argv that getopt_long took as r's value (r
 * given by its long name or not), is rather an option the user meant on
 * its own (-o --causal, --self --no-scale x.csv)?  ATTN_OK when it is a
 * value.  (A value attached to its option, --output=-x or -o-x, is never
 * asked about: the user wrote it so.) */
enum attn_status hint_value(const struct hint_option *r, int long_name,
    const char *word, struct attn_error *err);

#endif
