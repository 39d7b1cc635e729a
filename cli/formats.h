/*
 * formats.h - the output formats, a row each: the name that -f (and -o
 * FILE's extension) gives it, what it can show, its default --digits and
 * the stages it reads besides those it prints.  A leaf, so that the
 * options, their rules, the printers' dispatcher (print_run.c, which
 * holds each format's printer) and attn gen all read one table, and
 * every list of formats a message or --help shows is made from it.
 */
#ifndef ATTN_FORMATS_H
#define ATTN_FORMATS_H

#include <stddef.h>

/* The output formats, in the order --help lists them; formats has a row
 * for each. */
enum out_format { OUT_TABLE, OUT_CSV, OUT_TSV, OUT_JSON, OUT_HTML,
	OUT_NPY, OUT_NPZ, OUT_TXT, OUT_COUNT };

/* struct format's flags. */
enum {
	FORMAT_FIXED = 1,	/* numbers keep their trailing zeros */
	FORMAT_HEADER = 2,	/* --header labels rows and columns */
	FORMAT_EXPLAIN = 4,	/* --explain prints in this format */
	FORMAT_PAGE = 8,	/* shows every stage itself, with or without
				 * --explain */
	FORMAT_ONE_STAGE = 16,	/* a file holds one stage (npy) */
	FORMAT_BINARY = 32,	/* never to a terminal; --npy-dtype says
				 * what its numbers are (npy, npz) */
	FORMAT_ARCHIVE = 64	/* stages by name, in one archive (npz):
				 * not attn gen's one array */
};

/* One output format. */
struct format {
	const char *name;	/* as -f names it, and -o's extension */
	unsigned flags;		/* FORMAT_* */
	int digits;		/* default --digits; 0: shortest round trip */
	/* The stages it reads besides those in `printed`; NULL: none. */
	unsigned (*wants)(unsigned printed);
};

extern const struct format formats[OUT_COUNT];

/* The format named name (as -f gives it), or OUT_COUNT. */
enum out_format formats_named(const char *name);

/* Whether the extension of the last component of path (after its last
 * dot) is ext, in any case of ASCII letters, as the readers match them. */
int formats_has_extension(const char *path, const char *ext);

/* The format that path's extension names (.csv, .json, ...: each
 * format's name but table's, which is no extension), or OUT_COUNT. */
enum out_format formats_by_extension(const char *path);

/* formats_list's ways of listing. */
enum {
	FORMATS_OR = 1,		/* "a, b or c" rather than "a, b, c" */
	FORMATS_DEFAULT = 2,	/* the default marked: "table (default)" */
	FORMATS_EXTENSIONS = 4,	/* as -o's extensions: ".csv", table (which
				 * has none) left out */
	FORMATS_OPTION = 8,	/* as options: "-f csv" */
	FORMATS_GEN = 16	/* those attn gen writes: no archive */
};

/* The names of the formats that have the flags `having` (FORMAT_*; 0:
 * every format), in table order, listed as `how` says (FORMATS_*), into
 * buf. */
void formats_list(char *buf, size_t size, unsigned how, unsigned having);

#endif
