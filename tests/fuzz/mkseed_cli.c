/*
 * mkseed_cli.c - write one fuzz_cli input from a readable description:
 *
 *   mkseed_cli OUT WORD... [-- FILE0 [FILE1 .. FILE5]]
 *
 * Each WORD is an entry of fuzz_cli_table.h written as its words joined
 * by one space ("-s weights", "@0j", "!full"); it becomes the byte of its
 * index.  The FILEs after "--" are the six segments: files 0 to 4, then
 * standard input; "=" stands for an empty segment.  An unknown WORD is an
 * error, so a seed cannot silently mean something else.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_cli_table.h"

static int
find_word(const char *w)
{
	char buf[256];
	size_t i;

	for (i = 0; i < FUZZ_CLI_NWORDS; i++) {
		const struct fuzz_word *fw = &fuzz_cli_words[i];

		snprintf(buf, sizeof buf, "%s%s%s", fw->a, fw->b ? " " : "",
		    fw->b ? fw->b : "");
		if (strcmp(buf, w) == 0)
			return (int)i;
	}
	return -1;
}

static int
copy_file(FILE *out, const char *path)
{
	char buf[4096];
	size_t n;
	FILE *in;

	if (strcmp(path, "=") == 0)
		return 0;
	if ((in = fopen(path, "rb")) == NULL) {
		perror(path);
		return -1;
	}
	while ((n = fread(buf, 1, sizeof buf, in)) > 0)
		fwrite(buf, 1, n, out);
	fclose(in);
	return 0;
}

int
main(int argc, char **argv)
{
	FILE *out;
	int i, k, nfiles = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: mkseed_cli OUT WORD... "
		    "[-- FILE0 .. FILE5]\n");
		return 64;
	}
	if (FUZZ_CLI_NWORDS + '\n' > 255) {
		fprintf(stderr, "mkseed_cli: the table needs at most 245 "
		    "entries\n");
		return 70;
	}
	if ((out = fopen(argv[1], "wb")) == NULL) {
		perror(argv[1]);
		return 73;
	}
	for (i = 2; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if ((k = find_word(argv[i])) < 0) {
			fprintf(stderr, "mkseed_cli: no entry '%s' in "
			    "fuzz_cli_table.h\n", argv[i]);
			fclose(out);
			remove(argv[1]);
			return 65;
		}
		/* '\n' ends the option line: reach entry 10 by 10 + N. */
		fputc(k == '\n' ? k + (int)FUZZ_CLI_NWORDS : k, out);
	}
	if (i - 2 > FUZZ_CLI_MAX_WORDS)
		fprintf(stderr, "mkseed_cli: warning: only %d words are read\n",
		    FUZZ_CLI_MAX_WORDS);
	fputc('\n', out);
	for (i++; i < argc; i++) {
		if (nfiles == FUZZ_CLI_NSEG) {
			fprintf(stderr, "mkseed_cli: at most %d files\n",
			    FUZZ_CLI_NSEG);
			return 64;
		}
		if (nfiles > 0)
			fputs(FUZZ_CLI_SEP, out);
		if (copy_file(out, argv[i]) != 0)
			return 66;
		nfiles++;
	}
	if (fclose(out) != 0) {
		perror(argv[1]);
		return 74;
	}
	return 0;
}
