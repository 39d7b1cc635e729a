/*
 * options_table.h - the table of options: argv parsed through it into
 * struct options (options.h), --help written from it, and each option as
 * shell completion sees it.
 */
#ifndef ATTN_OPTIONS_TABLE_H
#define ATTN_OPTIONS_TABLE_H

#include <stdio.h>

#include "attn.h"
#include "options.h"

/* Parse argv into *o.  On a usage error returns ATTN_ERR_USAGE with the
 * message in err. */
enum attn_status options_parse(int argc, char **argv, struct options *o,
    struct attn_error *err);

/* attn's commands (gen, workbench), NULL-terminated. */
extern const char *const options_commands[];

/* What an option's argument is, for shell completion. */
enum option_value {
	OPTION_NONE,		/* the option takes no argument */
	OPTION_TEXT,		/* a number or a name: nothing to offer */
	OPTION_FILE,		/* a file */
	OPTION_WORDS,		/* one of option_info.words */
	OPTION_STAGES		/* stage names, comma-separated, or all */
};

/* One option of the table, as shell completion sees it. */
struct option_info {
	const char *name;	/* long name, without "--" */
	char letter;		/* short name, or 0 */
	const char *arg;	/* the argument's name in --help, or NULL */
	const char *help;	/* the first line of its --help text */
	size_t help_len;	/* its length */
	enum option_value value;
	const char *const *words;	/* OPTION_WORDS: NULL-terminated */
	int attn, gen;		/* whether attn and attn gen take it */
	int workbench;		/* whether attn workbench takes it */
	const char *text;	/* its whole --help text */
	int convention;		/* a binding's caller gives it (session.c) */
};

/* The number of options, and option i of the table (i < that). */
size_t options_count(void);
void options_info(size_t i, struct option_info *out);

/* Print the --help text (synopsis and every option) of attn, of attn
 * gen when o->gen, of attn workbench (attn's options) when o->workbench. */
void options_print_help(const struct options *o, FILE *fp);

#endif
