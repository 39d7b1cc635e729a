/*
 * formats.c - the table of output formats (see formats.h), and the lists
 * of their names that --help and messages show, made from it so that a
 * new format is a row here and shows up in every one of them.
 */
#include <stdio.h>
#include <string.h>

#include "attn.h"
#include "formats.h"

/* A table shows a weight that a mask removed as "-", read from the mask
 * stage. */
static unsigned
table_wants(unsigned printed)
{
	return printed & ATTN_STAGE_BIT(ATTN_STAGE_WEIGHTS) ?
	    ATTN_STAGE_BIT(ATTN_STAGE_MASK) : 0;
}

/* The page shows every stage (print_wants counts them, as for
 * --explain), and each number's arithmetic, which reads row_max and
 * row_sum. */
static unsigned
html_wants(unsigned printed)
{
	(void)printed;
	return ATTN_STAGE_BIT(ATTN_STAGE_ROW_MAX) |
	    ATTN_STAGE_BIT(ATTN_STAGE_ROW_SUM);
}

const struct format formats[OUT_COUNT] = {
	[OUT_TABLE] = { "table", FORMAT_FIXED | FORMAT_EXPLAIN, 4,
	    table_wants },
	[OUT_CSV] = { "csv", FORMAT_HEADER, 0, NULL },
	[OUT_TSV] = { "tsv", FORMAT_HEADER, 0, NULL },
	[OUT_JSON] = { "json", 0, 0, NULL },
	[OUT_HTML] = { "html", FORMAT_FIXED | FORMAT_EXPLAIN | FORMAT_PAGE, 4,
	    html_wants },
	[OUT_NPY] = { "npy", FORMAT_ONE_STAGE | FORMAT_BINARY, 0, NULL },
	[OUT_NPZ] = { "npz", FORMAT_BINARY | FORMAT_ARCHIVE, 0, NULL },
	[OUT_TXT] = { "txt", 0, 0, NULL },
};

enum out_format
formats_named(const char *name)
{
	size_t i;

	for (i = 0; i < OUT_COUNT; i++)
		if (strcmp(name, formats[i].name) == 0)
			return (enum out_format)i;
	return OUT_COUNT;
}

int
formats_has_extension(const char *path, const char *ext)
{
	const char *base = strrchr(path, '/'), *dot;
	size_t i;

	base = base != NULL ? base + 1 : path;
	dot = strrchr(base, '.');
	if (dot == NULL || dot == base || strlen(dot + 1) != strlen(ext))
		return 0;
	for (i = 0; ext[i] != '\0'; i++) {
		char c = dot[1 + i];

		if ((c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c) !=
		    ext[i])
			return 0;
	}
	return 1;
}

enum out_format
formats_by_extension(const char *path)
{
	size_t i;

	for (i = 0; i < OUT_COUNT; i++)
		if (i != OUT_TABLE && formats_has_extension(path,
		    formats[i].name))
			return (enum out_format)i;
	return OUT_COUNT;
}

/* Whether format i is listed: it has the flags `having`, an extension
 * when extensions are listed, and no archive when attn gen's are. */
static int
listed(size_t i, unsigned how, unsigned having)
{
	return (formats[i].flags & having) == having &&
	    !((how & FORMATS_EXTENSIONS) && i == OUT_TABLE) &&
	    !((how & FORMATS_GEN) && (formats[i].flags & FORMAT_ARCHIVE));
}

void
formats_list(char *buf, size_t size, unsigned how, unsigned having)
{
	const char *prefix = how & FORMATS_EXTENSIONS ? "." :
	    how & FORMATS_OPTION ? "-f " : "";
	size_t i, n = 0, k = 0, count = 0;

	for (i = 0; i < OUT_COUNT; i++)
		count += listed(i, how, having) ? 1 : 0;
	buf[0] = '\0';
	for (i = 0; i < OUT_COUNT && n < size; i++) {
		if (!listed(i, how, having))
			continue;
		n += (size_t)snprintf(buf + n, size - n, "%s%s%s%s",
		    k == 0 ? "" : k + 1 == count && (how & FORMATS_OR) ?
		    " or " : ", ", prefix, formats[i].name,
		    i == OUT_TABLE && (how & FORMATS_DEFAULT) ? " (default)" :
		    "");
		k++;
	}
}
