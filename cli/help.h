/*
 * help.h - attn help [TOPIC]: the manual pages by topic, as git help
 * opens git's.
 */
#ifndef ATTN_HELP_H
#define ATTN_HELP_H

#include <stddef.h>

/* Runs attn help with the words after "help" (argc of them); returns the
 * exit status attn(1) gives, unless man takes the process over. */
int help_main(int argc, char **argv);

/* The name of topic i, in the order attn help lists them; NULL past the
 * last (shell completion offers them). */
const char *help_topic(size_t i);

#endif
