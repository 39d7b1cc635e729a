/*
 * help.c - attn help [TOPIC].  Without a topic it lists the topics; with
 * one it runs man on that topic's page, so that the page is read as any
 * other.  When man is missing or the page is not installed, one line on
 * stderr says so and names the page in the source tree beside the
 * running binary, when there is one, with the command that reads it
 * (attn(1), EXIT STATUS: 66, as for any input that cannot be opened; an
 * unknown topic is a usage error, 64).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attn_private.h"
#include "help.h"
#include "options_hint.h"

struct topic {
	const char *name;	/* the word after attn help */
	const char *page;	/* the page's name */
	const char *section;	/* and its section */
	const char *what;
};

static const struct topic topics[] = {
	{ "attn", "attn", "1", "the reference: every option, format, stage "
	    "and exit status" },
	{ "tutorial", "attn-tutorial", "7", "the learner's path, from a "
	    "worked example to the textbooks' figures" },
	{ "kernels", "attn-kernels", "7", "checking an attention kernel, "
	    "from the command line and from Python" },
	{ "workbench", "attn-workbench", "1", "attn workbench, the equation "
	    "to play with in a terminal" },
	{ "gen", "attn-gen", "1", "attn gen, seeded random arrays" },
};
#define NTOPICS (sizeof topics / sizeof topics[0])

const char *
help_topic(size_t i)
{
	return i < NTOPICS ? topics[i].name : NULL;
}

/* Runs "man -w SECTION PAGE" quietly: 0 when the page is installed, 1
 * when it is not, -1 when man cannot be run. */
static int
installed(const struct topic *t)
{
	pid_t pid;
	int st;

	fflush(NULL);
	if ((pid = fork()) < 0)
		return -1;
	if (pid == 0) {
		if (freopen("/dev/null", "w", stdout) == NULL ||
		    freopen("/dev/null", "w", stderr) == NULL)
			_exit(127);
		execlp("man", "man", "-w", t->section, t->page, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) ||
	    WEXITSTATUS(st) == 127)
		return -1;
	return WEXITSTATUS(st) == 0 ? 0 : 1;
}

/* The page in the source tree: man/PAGE.SECTION in the directory of the
 * running binary or one of the two above it (build/attn,
 * build/asan/attn); 0 when found, its path in buf. */
static int
source_page(const struct topic *t, char *buf, size_t size)
{
	char dir[4096];
	ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
	int up;

	if (n <= 0)
		return -1;
	dir[n] = '\0';
	for (up = 0; up < 3; up++) {
		char *slash = strrchr(dir, '/');

		if (slash == NULL)
			return -1;
		*slash = '\0';
		if ((size_t)snprintf(buf, size, "%s/man/%s.%s", dir, t->page,
		    t->section) < size && access(buf, R_OK) == 0)
			return 0;
	}
	return -1;
}

/* A usage error of attn help, one line and the pointer to help, as
 * attn's others: word is the topic it does not know (NULL: more than
 * one word), named escaped, with "did you mean" where one is near. */
static void
usage(const char *word)
{
	const char *names[NTOPICS];
	char esc[4 * 64 + 1], hint[96];
	size_t i, len;

	for (i = 0; i < NTOPICS; i++)
		names[i] = topics[i].name;
	if (word == NULL) {
		fputs("attn: help takes one topic", stderr);
	} else {
		len = strlen(word);
		attn_text_escape(esc, sizeof esc, word, len, NULL);
		hint_suggest(hint, sizeof hint, word, len, names, NTOPICS, "");
		fprintf(stderr, "attn: unknown help topic '%s'%s", esc, hint);
	}
	fputs(" (topics:", stderr);
	for (i = 0; i < NTOPICS; i++)
		fprintf(stderr, "%s %s", i > 0 ? "," : "", topics[i].name);
	fputs(")\nTry 'attn --help'.\n", stderr);
}

int
help_main(int argc, char **argv)
{
	const struct topic *t = NULL;
	char path[4200];
	size_t i;
	int have, found;

	if (argc == 0) {
		puts("usage: attn help TOPIC, which opens its manual page:");
		for (i = 0; i < NTOPICS; i++)
			printf("  %-10s %s(%s): %s\n", topics[i].name,
			    topics[i].page, topics[i].section, topics[i].what);
		return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 74;
	}
	for (i = 0; i < NTOPICS && t == NULL; i++)
		if (strcmp(argv[0], topics[i].name) == 0)
			t = &topics[i];
	if (argc > 1 || t == NULL) {
		usage(argc > 1 ? NULL : argv[0]);
		return 64;
	}
	have = installed(t);
	if (have == 0) {
		fflush(NULL);
		execlp("man", "man", t->section, t->page, (char *)NULL);
		have = -1;
	}
	found = source_page(t, path, sizeof path) == 0;
	if (have < 0)
		fprintf(stderr, "attn: cannot run man to show %s(%s)%s%s\n",
		    t->page, t->section, found ? "; its source is " : "",
		    found ? path : "");
	else if (found)
		fprintf(stderr, "attn: no manual page %s(%s) is installed; "
		    "read it with: man -l %s\n", t->page, t->section, path);
	else
		fprintf(stderr, "attn: no manual page %s(%s) is installed "
		    "(make install installs it)\n", t->page, t->section);
	return 66;
}
