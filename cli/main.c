/*
 * main.c - attn: parse options, read inputs, compute, write, exit.
 *
 * Everything is computed and rendered in memory before a byte is written,
 * so a failed run prints nothing on stdout and leaves -o FILE untouched.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inputs.h"
#include "internal.h"
#include "io.h"
#include "options.h"
#include "output.h"

/* The exit code of SPEC for each status: the one place they meet. */
static int
exit_code(enum attn_status st)
{
	switch (st) {
	case ATTN_OK:
		return 0;
	case ATTN_ERR_USAGE:
		return 64;
	case ATTN_ERR_DATA:
		return 65;
	case ATTN_ERR_NOINPUT:
		return 66;
	case ATTN_ERR_CANTCREAT:
		return 73;
	case ATTN_ERR_IO:
		return 74;
	case ATTN_ERR_NOMEM:
		return 71;
	case ATTN_ERR_INTERNAL:
		break;
	}
	return 70;
}

/* One line: "attn: FILE:LINE:COL: message", with the parts that apply. */
static void
report(const struct attn_error *err)
{
	fputs("attn: ", stderr);
	if (err->file != NULL && err->line > 0)
		fprintf(stderr, "%s:%zu:%zu: ", err->file, err->line,
		    err->col);
	else if (err->file != NULL)
		fprintf(stderr, "%s: ", err->file);
	fprintf(stderr, "%s\n", err->msg);
	if (err->status == ATTN_ERR_USAGE)
		fputs(options_usage, stderr);
}

/* Split "a,b,c" into n labels, which must be exactly want. */
static enum attn_status
split_labels(const char *list, const char *option, size_t want,
    const char *rows, struct attn_labels *out, struct attn_error *err)
{
	size_t n = 1, i;
	const char *p;

	for (p = list; *p != '\0'; p++)
		n += *p == ',';
	if (n != want)
		return error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "%s gives %zu label%s for %zu %s", option, n,
		    n == 1 ? "" : "s", want, rows);
	if (list[0] == '\0' || list[0] == ',' || strstr(list, ",,") != NULL ||
	    list[strlen(list) - 1] == ',')
		return error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "%s has an empty label", option);
	if ((out->names = alloc_array(n, sizeof *out->names)) == NULL)
		return error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "out of memory");
	out->count = 0;
	for (p = list, i = 0; i < n; i++) {
		size_t len = strcspn(p, ",");

		if ((out->names[i] = str_ndup(p, len)) == NULL) {
			attn_labels_free(out);
			return error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
			    "out of memory");
		}
		out->count++;
		p += len + 1;
	}
	return ATTN_OK;
}

/* Default names: prefix1, prefix2, ... */
static enum attn_status
number_labels(const char *prefix, size_t n, struct attn_labels *out,
    struct attn_error *err)
{
	if ((out->names = alloc_array(n, sizeof *out->names)) == NULL)
		return error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "out of memory");
	for (out->count = 0; out->count < n; out->count++) {
		char buf[32];

		snprintf(buf, sizeof buf, "%s%zu", prefix, out->count + 1);
		if ((out->names[out->count] = str_ndup(buf,
		    strlen(buf))) == NULL) {
			attn_labels_free(out);
			return error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
			    "out of memory");
		}
	}
	return ATTN_OK;
}

/*
 * The names of n rows: the option's list, else the file's (which must
 * match n), else prefix1..prefixn.
 */
static enum attn_status
pick_labels(const char *option_value, const char *option,
    const struct attn_labels *from_file, const char *prefix, size_t n,
    const char *rows, struct attn_labels *out, struct attn_error *err)
{
	size_t i;

	memset(out, 0, sizeof *out);
	if (option_value != NULL)
		return split_labels(option_value, option, n, rows, out, err);
	if (from_file->count == 0)
		return number_labels(prefix, n, out, err);
	if (from_file->count != n)
		return error_set(err, ATTN_ERR_DATA, NULL, 0, 0,
		    "%zu labels given for %zu %s", from_file->count, n, rows);
	if ((out->names = alloc_array(n, sizeof *out->names)) == NULL)
		return error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "out of memory");
	for (i = 0; i < n; i++) {
		if ((out->names[i] = str_ndup(from_file->names[i],
		    strlen(from_file->names[i]))) == NULL) {
			attn_labels_free(out);
			return error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
			    "out of memory");
		}
		out->count++;
	}
	return ATTN_OK;
}

/* Names for the T queries and the S keys. */
static enum attn_status
name_rows(const struct options *o, const struct inputs *in,
    const struct attn_stages *st, struct attn_labels *query,
    struct attn_labels *key, struct attn_error *err)
{
	enum attn_status status;

	status = pick_labels(o->query_labels, "--query-labels", &in->query,
	    "q", st->T, st->T == 1 ? "query" : "queries", query, err);
	if (status != ATTN_OK)
		return status;
	/* With --self the rows of X name the keys too. */
	return pick_labels(o->key_labels, "--key-labels",
	    o->self != NULL ? &in->query : &in->key, "k", st->S,
	    st->S == 1 ? "key" : "keys", key, err);
}

/*
 * One warning line a run when some query rows may attend no key, naming
 * them (the first few), and what --masked-rows gave them.
 */
static void
warn_masked_rows(const struct options *o, const struct attn_stages *st,
    const struct names *lab)
{
	static const char *const policy[] = {
		[ATTN_MASKED_ZERO] = "weights 0 and output 0 (--masked-rows "
		    "zero)",
		[ATTN_MASKED_NAN] = "weights nan and output nan (--masked-rows "
		    "nan)",
		[ATTN_MASKED_UNIFORM] = "weights 1/S and the mean of V "
		    "(--masked-rows uniform)",
	};
	const size_t shown = 8;
	size_t i;

	if (st->nmasked == 0)
		return;
	fprintf(stderr, "attn: warning: %zu quer%s may attend no key: ",
	    st->nmasked, st->nmasked == 1 ? "y" : "ies");
	for (i = 0; i < st->nmasked && i < shown; i++) {
		size_t row = st->masked[i], block = row / st->T;

		fprintf(stderr, "%s%s", i > 0 ? ", " : "",
		    lab->query[row % st->T]);
		if (st->batches > 1 && st->heads > 1)
			fprintf(stderr, " (batch %zu, head %zu)",
			    block / st->heads + 1, block % st->heads + 1);
		else if (st->batches > 1)
			fprintf(stderr, " (batch %zu)", block + 1);
		else if (st->heads > 1)
			fprintf(stderr, " (head %zu)", block + 1);
	}
	if (st->nmasked > shown)
		fprintf(stderr, " and %zu more", st->nmasked - shown);
	fprintf(stderr, "; %s %s\n", st->nmasked == 1 ? "it gets" : "they get",
	    policy[o->cfg.masked_rows]);
}

/*
 * Refuse a run whose stages would not fit: in ATTN_MAX_MEMORY bytes when
 * that is set (for shared machines), else in the machine's memory, so
 * that it fails with a message instead of being killed.
 */
static enum attn_status
check_memory(const struct options *o, const struct inputs *in,
    struct attn_error *err)
{
	unsigned long long limit;
	const char *what;
	enum attn_status st;
	size_t need;

	if ((st = attn_plan(&o->cfg, &in->in, &need, err)) != ATTN_OK ||
	    (st = memory_limit(&limit, &what, err)) != ATTN_OK)
		return st;
	if (limit > 0 && need > limit)
		return error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "the stages need %zu bytes, more than %s (%llu bytes)",
		    need, what, limit);
	return ATTN_OK;
}

/* Render everything into memory, then write it in one piece. */
static enum attn_status
write_output(const struct options *o, const struct attn_stages *st,
    const struct names *lab, struct attn_error *err)
{
	enum attn_status status;
	struct sink sink;
	char *text = NULL;
	size_t len = 0;
	FILE *mem;

	if ((mem = open_memstream(&text, &len)) == NULL)
		return error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "out of memory");
	status = output_print(mem, o, st, lab, err);
	if (fclose(mem) != 0 && status == ATTN_OK)
		status = error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "out of memory rendering the output");
	if (status == ATTN_OK &&
	    (status = sink_open(&sink, o->output, err)) == ATTN_OK) {
		fwrite(text, 1, len, sink.fp);
		status = sink_commit(&sink, err);
		sink_abort(&sink);
	}
	free(text);
	return status;
}

int
main(int argc, char **argv)
{
	struct attn_error err = { 0 };
	struct attn_labels query = { 0 }, key = { 0 };
	struct attn_stages stages = { 0 };
	struct inputs in = { 0 };
	struct options o;
	struct names lab;
	enum attn_status st;

	if ((st = options_parse(argc, argv, &o, &err)) != ATTN_OK) {
		report(&err);
		return exit_code(st);
	}
	if (o.help || o.version) {
		struct sink out;

		sink_open(&out, NULL, &err);
		if (o.help)
			fputs(options_help, out.fp);
		else
			fputs("attn " ATTN_VERSION "\n", out.fp);
		st = sink_commit(&out, &err);
		if (st != ATTN_OK)
			report(&err);
		return exit_code(st);
	}

	st = inputs_load(&o, &in, &err);
	if (st == ATTN_OK)
		st = check_memory(&o, &in, &err);
	if (st == ATTN_OK)
		st = attn_run(&o.cfg, &in.in, &stages, &err);
	if (st == ATTN_OK)
		st = name_rows(&o, &in, &stages, &query, &key, &err);
	if (st == ATTN_OK) {
		lab.query = query.names;
		lab.key = key.names;
		lab.mask = in.name[IN_MASK];
		lab.bias = in.name[IN_BIAS];
		warn_masked_rows(&o, &stages, &lab);
		st = write_output(&o, &stages, &lab, &err);
	}
	if (st != ATTN_OK)
		report(&err);
	attn_labels_free(&query);
	attn_labels_free(&key);
	attn_stages_free(&stages);
	inputs_free(&in);
	return exit_code(st);
}
