/*
 * check_suggest.c - "did you mean": attn_suggest, the one judge of what
 * a mistyped word meant, and the CLI's tables walked through it.  Every
 * name of every table (the options of attn, attn gen and attn
 * workbench, the words of each option whose value is one of a list, the
 * formats, the stages, the commands), mistyped by one edit, is parsed by
 * options_parse as a user would type it, and the usage error must name
 * it back; where the mistyped word is as near another name of the same
 * table, attn_suggest may say nothing or name that one, never another
 * (check_read.c holds the rules of ties, case and beginnings).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "attn.h"
#include "attn_io.h"
#include "formats.h"
#include "options.h"
#include "options_table.h"
#include "suites.h"

#define MAX_NAMES 128
#define MAX_WORD 40

/* ASCII lower case. */
static char
lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* The oracle's distance: the optimal string alignment distance (edits
 * of one letter, swaps of neighbours), ignoring case, written here from
 * its definition. */
static size_t
osa(const char *a, const char *b)
{
	size_t d[MAX_WORD + 1][MAX_WORD + 1];
	size_t la = strlen(a), lb = strlen(b), i, j;

	ck_assert(la <= MAX_WORD && lb <= MAX_WORD);
	for (i = 0; i <= la; i++)
		d[i][0] = i;
	for (j = 0; j <= lb; j++)
		d[0][j] = j;
	for (i = 1; i <= la; i++)
		for (j = 1; j <= lb; j++) {
			size_t v = d[i - 1][j - 1] +
			    (lower(a[i - 1]) != lower(b[j - 1]));

			if (d[i - 1][j] + 1 < v)
				v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
			    lower(a[i - 2]) == lower(b[j - 1]) &&
			    d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	return d[la][lb];
}

/* Mistyping number k (0 to 3) of name, into w: two neighbours in the
 * middle swapped, a middle letter left out, doubled, or changed to one
 * the name lacks.  0 when that edit leaves the name as it was. */
static int
mistype(char *w, const char *name, int k)
{
	size_t len = strlen(name), m = len / 2;
	char c;

	ck_assert(len + 2 <= MAX_WORD);
	strcpy(w, name);
	switch (k) {
	case 0:		/* swap */
		if (lower(w[m - 1]) == lower(w[m]))
			return 0;
		c = w[m - 1];
		w[m - 1] = w[m];
		w[m] = c;
		break;
	case 1:		/* left out */
		memmove(w + m, w + m + 1, len - m);
		break;
	case 2:		/* doubled */
		memmove(w + m + 1, w + m, len - m + 1);
		break;
	default:	/* changed */
		for (c = 'z'; strchr(name, c) != NULL; c--)
			;
		w[m] = c;
		break;
	}
	return 1;
}

/* Whether word is one edit from name and no other name of names[0..n)
 * is as near (nor is word a name itself): the case where attn_suggest
 * must answer name. */
static int
unambiguous(const char *word, const char *name, const char *const *names,
    size_t n)
{
	size_t i;

	if (osa(word, name) != 1)
		return 0;
	for (i = 0; i < n; i++)
		if (names[i] != name && strcmp(names[i], name) != 0 &&
		    osa(word, names[i]) <= 1)
			return 0;
	return 1;
}

/* options_parse over the words argv[0..argc) (argv[0] "attn"): it must
 * fail with a usage error whose message holds want (and also, when not
 * NULL, want2). */
static void
parse_says(int argc, const char **argv, const char *want, const char *want2)
{
	static char attn[] = "attn";
	static char *reset[] = { attn, NULL };
	char *args[8];
	struct options o;
	struct attn_error err = { 0 };
	enum attn_status status;
	int i;

	ck_assert(argc < 8);
	for (i = 0; i < argc; i++)
		args[i] = (char *)argv[i];
	args[argc] = NULL;
	/* A fresh getopt, as in a new process: options_parse sets optind
	 * to 1, which glibc does not take for a reset of a cluster half
	 * read by the run before. */
	optind = 0;
	opterr = 0;
	(void)getopt(1, reset, "");
	status = options_parse(argc, args, &o, &err);
	ck_assert_msg(status == ATTN_ERR_USAGE && strstr(err.msg, want) !=
	    NULL && (want2 == NULL || strstr(err.msg, want2) != NULL),
	    "%s %s %s: '%s' lacks '%s' %s", argv[1], argc > 2 ? argv[2] : "",
	    argc > 3 ? argv[3] : "", err.msg, want, want2 != NULL ? want2 : "");
}

/*
 * Each name of names[0..n) of 3 letters or more, mistyped each way:
 * attn_suggest gives it back when no other name is as near (at least
 * one of the four ways must be such), and then the command line that
 * `line` makes of the mistyped word is refused naming it in the
 * message `line` says.  Names of one or two letters (-f's words f4 and
 * f8, --lse-base's e and 2) are suggested only for a change of case.
 */
typedef void line_fn(const char *word, const char *name);

static void
walk(const char *const *names, size_t n, line_fn *line)
{
	char w[MAX_WORD];
	size_t i;
	int k;

	for (i = 0; i < n; i++) {
		int checked = 0;

		if (strlen(names[i]) < 3)
			continue;
		for (k = 0; k < 4; k++) {
			const char *got;

			if (!mistype(w, names[i], k))
				continue;
			got = attn_suggest(w, names, n);
			if (!unambiguous(w, names[i], names, n)) {
				ck_assert_msg(got == NULL || osa(w, got) <= 1,
				    "%s: %s is a guess", w, got);
				continue;
			}
			ck_assert_msg(got != NULL && strcmp(got, names[i]) == 0,
			    "%s: suggested %s, not %s", w,
			    got != NULL ? got : "nothing", names[i]);
			if (line != NULL)
				line(w, names[i]);
			checked++;
		}
		ck_assert_msg(checked > 0, "%s: no mistyping is unambiguous",
		    names[i]);
	}
}

/* The options of a command: 0 attn, 1 attn gen, 2 attn workbench. */
static int command;
static const char *const command_words[] = { NULL, "gen", "workbench" };

/* argv for attn (or its command) with the words a[0..n). */
static void
parse_command(const char **a, int n, const char *want, const char *want2)
{
	const char *argv[8];
	int argc = 0, i;

	argv[argc++] = "attn";
	if (command_words[command] != NULL)
		argv[argc++] = command_words[command];
	for (i = 0; i < n; i++)
		argv[argc++] = a[i];
	parse_says(argc, argv, want, want2);
}

/* Whether c is the letter of a short option of the command. */
static int
short_letter(char c)
{
	size_t i;

	for (i = 0; i < options_count(); i++) {
		struct option_info info;

		options_info(i, &info);
		if (info.letter == c && (command == 1 ? info.gen : info.attn))
			return 1;
	}
	return 0;
}

/* --WORD; -NAME, which says that long options take two dashes, and
 * -WORD, which says so with "did you mean" where it does not start with
 * a short option's letter (-sateg is -s ateg, a stage). */
static void
option_line(const char *word, const char *name)
{
	char arg[MAX_WORD + 4], want[MAX_WORD + 32];
	const char *a[1] = { arg };

	snprintf(arg, sizeof arg, "--%s", word);
	snprintf(want, sizeof want, "--%s", name);
	/* a beginning of names: getopt_long's abbreviation, refused
	 * naming the options it begins (long-options-are-not-abbreviated) */
	if (strncmp(word, name, strlen(word)) == 0)
		parse_command(a, 1, "(options are written in full: ", want);
	else
		parse_command(a, 1, "did you mean ", want);
	if (!short_letter(word[0])) {
		snprintf(arg, sizeof arg, "-%s", word);
		snprintf(want, sizeof want, "did you mean --%s?", name);
		parse_command(a, 1, "long options take two dashes; ", want);
	}
	snprintf(arg, sizeof arg, "-%s", name);
	snprintf(want, sizeof want, "long options take two dashes: --%s",
	    name);
	parse_command(a, 1, want, NULL);
}

/* The option whose words are walked. */
static const char *option_name;

/* --NAME=WORD, attached, since a word may start with '-' (-inf). */
static void
value_line(const char *word, const char *name)
{
	char arg[2 * MAX_WORD], want[MAX_WORD + 32];
	const char *a[1] = { arg };

	snprintf(arg, sizeof arg, "--%s=%s", option_name, word);
	snprintf(want, sizeof want, "did you mean %s?", name);
	parse_command(a, 1, want, NULL);
}

/* Every option of each command, and the words of each of its options
 * that takes one of a list (the formats among them). */
START_TEST(every_option_and_word_mistyped_is_suggested_back)
{
	const char *names[MAX_NAMES];
	size_t i, n = 0;

	command = _i;
	for (i = 0; i < options_count(); i++) {
		struct option_info info;

		options_info(i, &info);
		if (command == 0 ? info.attn : command == 1 ? info.gen :
		    info.workbench)
			names[n++] = info.name;
	}
	ck_assert(n > 5 && n <= MAX_NAMES);
	walk(names, n, option_line);
	for (i = 0; i < options_count(); i++) {
		struct option_info info;
		size_t nw = 0;

		options_info(i, &info);
		if (info.value != OPTION_WORDS || !(command == 0 ? info.attn :
		    command == 1 ? info.gen : info.workbench))
			continue;
		while (info.words[nw] != NULL)
			nw++;
		option_name = info.name;
		walk(info.words, nw, value_line);
	}
}
END_TEST

/* Every stage --stage may name (--stage=WORD), the backward ones too. */
START_TEST(every_stage_mistyped_is_suggested_back)
{
	const char *names[ATTN_STAGE_COUNT];
	size_t s, n = 0;

	command = 0;
	for (s = 0; s < ATTN_STAGE_COUNT; s++)
		if (!attn_stage_table[s].internal)
			names[n++] = attn_stage_table[s].name;
	option_name = "stage";
	walk(names, n, value_line);
}
END_TEST

/* attn WORD 2x2. */
static void
command_line(const char *word, const char *name)
{
	char want[MAX_WORD + 32];
	const char *a[2] = { word, "2x2" };

	snprintf(want, sizeof want, "did you mean attn %s?", name);
	parse_command(a, 2, want, NULL);
}

START_TEST(every_command_mistyped_is_suggested_back)
{
	size_t n = 0;

	command = 0;
	while (options_commands[n] != NULL)
		n++;
	ck_assert(n >= 2);
	walk(options_commands, n, command_line);
}
END_TEST

Suite *
suggest_suite(void)
{
	Suite *s = suite_create("suggest");
	TCase *tc = tcase_create("tables");

	tcase_add_loop_test(tc, every_option_and_word_mistyped_is_suggested_back,
	    0, 3);
	tcase_add_test(tc, every_stage_mistyped_is_suggested_back);
	tcase_add_test(tc, every_command_mistyped_is_suggested_back);
	suite_add_tcase(s, tc);
	return s;
}
