/*
 * options_hint.c - the messages for an option written wrong (see
 * options_hint.h): each names the word that is wrong as the user wrote
 * it and says what would be right.  getopt_long tells what went wrong
 * through optind and optopt; the table of options says what there is,
 * as struct hint_option.
 */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "attn.h"
#include "attn_io.h"
#include "attn_private.h"
#include "options_hint.h"

static enum attn_status
usage_error(struct attn_error *err, const char *fmt, const char *arg)
{
	return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0, fmt, arg);
}

/* "" or " (options are written in full: --query, --query-labels)": the
 * options of the command (those `here`) whose names start with the len
 * bytes at name, for a word that getopt_long would have taken as an
 * abbreviation of them. */
static void
full_names(char *buf, size_t size, const char *name, size_t len,
    const struct hint_option *opts, size_t nopts)
{
	size_t i, n = 0, found = 0;

	buf[0] = '\0';
	for (i = 0; i < nopts && n < size; i++) {
		if (!opts[i].here || len == 0 ||
		    strncmp(opts[i].name, name, len) != 0)
			continue;
		n += (size_t)snprintf(buf + n, size - n, "%s--%s",
		    found++ == 0 ? " (options are written in full: " : ", ",
		    opts[i].name);
	}
	if (found > 0 && n < size)
		snprintf(buf + n, size - n, ")");
}

const char *
hint_suggest(char *buf, size_t size, const char *word, size_t len,
    const char *const *names, size_t n, const char *prefix)
{
	char w[64];
	const char *near;

	buf[0] = '\0';
	if (len >= sizeof w)
		return NULL;
	memcpy(w, word, len);
	w[len] = '\0';
	if ((near = attn_suggest(w, names, n)) != NULL)
		snprintf(buf, size, "; did you mean %s%s?", prefix, near);
	return near;
}

/* The long names of the options this command offers into names (room
 * for HINT_MAX_OPTIONS), and their count. */
static size_t
long_names(const char **names, const struct hint_option *opts, size_t nopts)
{
	size_t i, n = 0;

	for (i = 0; i < nopts && i < HINT_MAX_OPTIONS; i++)
		if (opts[i].offered)
			names[n++] = opts[i].name;
	return n;
}

enum attn_status
hint_one_dash(const char *word, int near, const struct hint_option *opts,
    size_t nopts, struct attn_error *err)
{
	const char *names[HINT_MAX_OPTIONS];
	const size_t len = strcspn(word + 1, "=");
	size_t i, n;
	char hint[96];

	if (word[0] != '-' || word[1] == '-' || len < 2)
		return ATTN_OK;
	for (i = 0; i < nopts; i++)
		if (opts[i].here && strlen(opts[i].name) == len &&
		    strncmp(opts[i].name, word + 1, len) == 0)
			return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
			    "unknown option '%.*s': long options take two "
			    "dashes: --%s", (int)(len + 1), word, opts[i].name);
	n = long_names(names, opts, nopts);
	if (!near || hint_suggest(hint, sizeof hint, word + 1, len, names, n,
	    "--") == NULL)
		return ATTN_OK;
	return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
	    "unknown option '%.*s': long options take two dashes%s",
	    (int)(len + 1), word, hint);
}

/* Where getopt_long, reading the cluster of short options `word`, stops
 * at the letter c: the index of c's first place in it when each letter
 * before it is an option of this command that takes no value, else 0. */
static size_t
cluster_stop(const char *word, int c, const struct hint_option *opts,
    size_t nopts)
{
	size_t k, i;

	if (word == NULL || word[0] != '-' || word[1] == '-')
		return 0;
	for (k = 1; word[k] != '\0' && (unsigned char)word[k] != c; k++) {
		for (i = 0; i < nopts; i++)
			if (opts[i].here && opts[i].letter == word[k])
				break;
		if (i == nopts || opts[i].takes_value)
			return 0;
	}
	return word[k] != '\0' ? k : 0;
}

/*
 * A letter that no option of this command has is a short option, in a
 * cluster such as -ze or not (getopt_long leaves it in optopt, and
 * argv[optind - 1] may then be the word before); otherwise the word it
 * stopped at, argv[optind - 1], is a long option: unknown, of the other
 * command (gen or not), or given a value it does not take.
 */
enum attn_status
hint_unknown(char **argv, int gen, const struct hint_option *opts,
    size_t nopts, struct attn_error *err)
{
	const char *arg = argv[optind - 1];
	char shortopt[3] = { '-', (char)optopt, '\0' }, hint[160];
	size_t len, i;
	int letter = 0;

	for (i = 0; i < nopts; i++)
		letter |= opts[i].here && optopt != 0 &&
		    opts[i].letter == optopt;
	if (optopt > 0 && optopt < 256 && !letter) {
		/* The word getopt_long stopped in: argv[optind] while letters
		 * of it are left, argv[optind - 1] when c was its last; a
		 * long option written with one dash (-causal) is such a
		 * word. */
		const char *word = argv[optind];
		enum attn_status status;
		size_t k = cluster_stop(word, optopt, opts, nopts);

		if (k == 0 || word[k + 1] == '\0') {
			word = argv[optind - 1];
			k = cluster_stop(word, optopt, opts, nopts);
			if (k > 0 && word[k + 1] != '\0')
				k = 0;
		}
		if (k > 0 &&
		    (status = hint_one_dash(word, 1, opts, nopts, err)) != ATTN_OK)
			return status;
		return usage_error(err, "unknown option '%s'", shortopt);
	}
	len = strcspn(arg + 2, "=");
	for (i = 0; i < nopts; i++)
		if (!opts[i].here && strlen(opts[i].name) == len &&
		    strncmp(opts[i].name, arg + 2, len) == 0)
			return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
			    "--%s is an option of attn%s, not of attn%s",
			    opts[i].name, gen ? "" : " gen", gen ? " gen" : "");
	if (arg[2 + len] == '=')
		for (i = 0; i < nopts; i++)
			if (opts[i].here && strlen(opts[i].name) == len &&
			    strncmp(opts[i].name, arg + 2, len) == 0)
				return usage_error(err,
				    "option '--%s' takes no value",
				    opts[i].name);
	full_names(hint, sizeof hint, arg + 2, len, opts, nopts);
	if (hint[0] == '\0') {
		const char *names[HINT_MAX_OPTIONS];

		hint_suggest(hint, sizeof hint, arg + 2, len, names,
		    long_names(names, opts, nopts), "--");
	}
	return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
	    "unknown option '%.*s'%s", (int)(len + 2), arg, hint);
}

enum attn_status
hint_command(const char *word, const char *const *commands, size_t n,
    struct attn_error *err)
{
	struct stat st;
	char hint[96];
	size_t k;

	for (k = 0; k < n; k++)
		if (strcmp(word, commands[k]) == 0)
			return ATTN_OK;
	if (word[0] == '-' || stat(word, &st) == 0 ||
	    hint_suggest(hint, sizeof hint, word, strlen(word), commands, n,
	    "attn ") == NULL)
		return ATTN_OK;
	return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
	    "unknown command '%s' (and no file of that name)%s", word, hint);
}

/*
 * getopt_long also takes any unambiguous prefix (--quer for
 * --query-labels until --query exists), and such a word would change
 * meaning whenever an option is added: a script that works today must
 * not be reinterpreted by a later version.  The word is argv[optind -
 * 1], or argv[optind - 2] when the value was the next word.
 */
enum attn_status
hint_full_name(char **argv, const struct hint_option *r, const char *arg,
    const struct hint_option *opts, size_t nopts, struct attn_error *err)
{
	const char *word = argv[optind - 1];
	size_t len;
	char hint[160];

	if (arg != NULL && optind >= 2 && arg == argv[optind - 1])
		word = argv[optind - 2];
	len = strcspn(word + 2, "=");
	if (strlen(r->name) == len && strncmp(word + 2, r->name, len) == 0)
		return ATTN_OK;
	full_names(hint, sizeof hint, word + 2, len, opts, nopts);
	return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
	    "unknown option '%.*s'%s", (int)(len + 2), word, hint);
}

/* A short option (in a cluster such as -ej or not) is named by its
 * letter, a long one by its word. */
enum attn_status
hint_missing_value(char **argv, struct attn_error *err)
{
	const char *arg = argv[optind - 1];
	char shortopt[3] = { '-', (char)optopt, '\0' };

	if (strncmp(arg, "--", 2) != 0 && optopt > 0 && optopt < 256)
		arg = shortopt;
	return usage_error(err, "option '%s' needs a value", arg);
}

/*
 * Whether word is an option rather than a value: it starts with '-' and
 * is not '-' alone (standard input or output), a negative number
 * (--scale -0.5, refused or not by the option itself) or one of r's
 * words.
 */
static int
is_option_word(const struct hint_option *r, const char *word)
{
	size_t i;

	if (word[0] != '-' || word[1] == '\0' ||
	    (word[1] >= '0' && word[1] <= '9') || word[1] == '.')
		return 0;
	for (i = 0; r->words != NULL && r->words[i] != NULL; i++)
		if (strcmp(word, r->words[i]) == 0)
			return 0;
	return 1;
}

/* When it is an option: name the option that lacks a value (by its long
 * name when given so, else by its letter), and how to give a value that
 * starts with '-'. */
enum attn_status
hint_value(const struct hint_option *r, int long_name, const char *word,
    struct attn_error *err)
{
	char name[64];

	if (!is_option_word(r, word))
		return ATTN_OK;
	if (long_name)
		snprintf(name, sizeof name, "--%s", r->name);
	else
		snprintf(name, sizeof name, "-%c", r->letter);
	if (r->file)
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "option '%s' needs a value, not the option '%s' (a file "
		    "whose name starts with - is given as ./-name)", name, word);
	if (r->words != NULL)
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "option '%s' needs a value, not the option '%s'", name,
		    word);
	return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
	    "option '%s' needs a value, not the option '%s' (a value that "
	    "starts with - is given as --%s=VALUE)", name, word, r->name);
}
