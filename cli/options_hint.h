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

/* The most options a table may have (options_table.c asserts it). */
#define HINT_MAX_OPTIONS 256

/* An option of the table, as the hints see it. */
struct hint_option {
	const char *name;	/* long name, without "--" */
	char letter;		/* short name, or 0 */
	int takes_value;	/* it takes a value (-s LIST, not -e) */
	int here;		/* an option of the command given (attn, or
				 * attn gen), not only of the other one */
	int offered;		/* one that "did you mean" may name: here,
				 * and not refused by attn workbench */
	int file;		/* its value is a file */
	const char *const *words;	/* the words its value may be
					 * (NULL-terminated), or NULL */
};

/* "; did you mean PREFIXname?" in buf (size bytes), where name is the
 * one among names[0..n) that the len bytes at word most likely meant
 * (attn_suggest, the one judge of "did you mean" in attn's messages),
 * and that name; "" and NULL when none is near. */
const char *hint_suggest(char *buf, size_t size, const char *word,
    size_t len, const char *const *names, size_t n, const char *prefix);

/* word, which getopt_long read as short options (-causal as -c -a ..,
 * -stage as -s tage), is rather a long option of opts[0..nopts) written
 * with one dash, or one near it?  A usage error saying that long options
 * take two dashes; ATTN_OK when it is not.  Only the name itself when
 * !near: a value attached to a short option (-oout.csv) may be
 * anything. */
enum attn_status hint_one_dash(const char *word, int near,
    const struct hint_option *opts, size_t nopts, struct attn_error *err);

/* word, the first word of attn's command line, names no file and is
 * near one of commands[0..n) (gen, workbench): a usage error naming the
 * command meant; else ATTN_OK. */
enum attn_status hint_command(const char *word, const char *const *commands,
    size_t n, struct attn_error *err);

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
