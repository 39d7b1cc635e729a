/*
 * session.c - attn's command line as a library call (lib/attn_session.h),
 * which libattn.so.0 exports for bindings without a compiler (the Python
 * module, python/attn/): the words are parsed by options_parse, through
 * the one table of options, the inputs read and the run computed,
 * checked and rendered by run_attn, as main() does, with files in memory
 * (slurp_memory) and the output kept in memory instead of written, so
 * that a binding's arrays, messages and verdicts are attn's to the byte.
 * attn's parsing (getopt_long), memory account and files in memory are
 * the process's, so runs are taken one at a time, under a lock.
 */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "attn_private.h"
#include "attn_session.h"
#include "memory.h"
#include "options.h"
#include "options_table.h"
#include "render.h"
#include "report.h"
#include "run.h"
#include "slurp.h"

/* attn --version: the Makefile passes what tools/version.sh says. */
#ifndef ATTN_VERSION
#error "ATTN_VERSION: build with make, which defines it"
#endif

struct attn_session {
	char **words;		/* argv: "attn", then the caller's words */
	size_t nwords, cap;
	struct slurp_memory *files;
	size_t nfiles, fcap;
	char *max_memory;
	struct render out;	/* the last run's output, kept */
	char *msg;		/* and its messages */
	size_t msglen;
};

static pthread_mutex_t session_lock = PTHREAD_MUTEX_INITIALIZER;

size_t
attn_option_count(void)
{
	return options_count();
}

void
attn_option_about(size_t i, struct attn_option_about *out)
{
	static const int value[] = {
		[OPTION_NONE] = ATTN_OPTION_NONE,
		[OPTION_TEXT] = ATTN_OPTION_TEXT,
		[OPTION_FILE] = ATTN_OPTION_FILE,
		[OPTION_WORDS] = ATTN_OPTION_WORDS,
		[OPTION_STAGES] = ATTN_OPTION_STAGES,
	};
	struct option_info info;

	options_info(i, &info);
	memset(out, 0, sizeof *out);
	out->name = info.name;
	out->arg = info.arg;
	out->help = info.text;
	out->value = value[info.value];
	out->words = info.words;
	out->convention = info.convention;
}

struct attn_session *
attn_session_new(void)
{
	struct attn_session *s = calloc(1, sizeof *s);

	if (s != NULL && attn_session_arg(s, "attn") != 0) {
		free(s);
		return NULL;
	}
	return s;
}

/* Room for one more of n items of size bytes at *p, cap of them held. */
static int
grow(void *p, size_t *cap, size_t n, size_t size)
{
	size_t want = *cap == 0 ? 8 : *cap * 2;
	void *q;

	if (n < *cap)
		return 0;
	if (want > SIZE_MAX / size ||
	    (q = realloc(*(void **)p, want * size)) == NULL)
		return -1;
	*(void **)p = q;
	*cap = want;
	return 0;
}

int
attn_session_arg(struct attn_session *s, const char *word)
{
	char *w;

	/* one more for argv's NULL */
	if (grow(&s->words, &s->cap, s->nwords + 1, sizeof *s->words) != 0 ||
	    (w = strdup(word)) == NULL)
		return -1;
	s->words[s->nwords++] = w;
	s->words[s->nwords] = NULL;
	return 0;
}

int
attn_session_file(struct attn_session *s, const char *name,
    const void *bytes, size_t len)
{
	char *n;

	if (grow(&s->files, &s->fcap, s->nfiles, sizeof *s->files) != 0 ||
	    (n = strdup(name)) == NULL)
		return -1;
	s->files[s->nfiles].name = n;
	s->files[s->nfiles].bytes = bytes;
	s->files[s->nfiles].len = len;
	s->files[s->nfiles].data = NULL;
	s->files[s->nfiles].dlen = 0;
	s->files[s->nfiles++].member = NULL;
	return 0;
}

int
attn_session_member(struct attn_session *s, const char *name,
    const char *member, const void *head, size_t hlen, const void *data,
    size_t dlen)
{
	char *m;

	if ((m = strdup(member)) == NULL)
		return -1;
	if (attn_session_npy(s, name, head, hlen, data, dlen) != 0) {
		free(m);
		return -1;
	}
	s->files[s->nfiles - 1].member = m;
	return 0;
}

int
attn_session_npy(struct attn_session *s, const char *name, const void *head,
    size_t hlen, const void *data, size_t dlen)
{
	if (attn_session_file(s, name, head, hlen) != 0)
		return -1;
	/* an empty array's data may be anywhere, NULL too */
	s->files[s->nfiles - 1].data = data != NULL ? data : "";
	s->files[s->nfiles - 1].dlen = dlen;
	return 0;
}

int
attn_session_max_memory(struct attn_session *s, const char *text)
{
	char *t = NULL;

	if (text != NULL && (t = strdup(text)) == NULL)
		return -1;
	free(s->max_memory);
	s->max_memory = t;
	return 0;
}

/* What the library's session does not run: attn's other commands and
 * the files it would write.  ATTN_OK, or a usage error. */
static enum attn_status
session_refuses(const struct options *o, struct attn_error *err)
{
	if (o->gen || o->workbench)
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "the library runs attn's computation; attn %s is the "
		    "program's", o->gen ? "gen" : "workbench");
	if (o->output != NULL || o->svg != NULL)
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "the library writes no file: %s is the program's",
		    o->output != NULL ? "-o" : "--svg");
	return ATTN_OK;
}

/* The run itself, under the lock: its output into out (kept, not
 * written), its messages on msg. */
static int
session_main(struct attn_session *s, struct render *out, FILE *msg)
{
	static char *const reset[] = { "attn", NULL };
	struct attn_error err = { 0 };
	struct options o;
	enum attn_status status;
	const int argc = (int)s->nwords;

	/* getopt_long starts afresh (optind 0), forgetting a word a run
	 * before stopped in. */
	optind = 0;
	(void)getopt(1, reset, "");
	if ((status = options_parse(argc, s->words, &o, &err)) == ATTN_OK)
		status = session_refuses(&o, &err);
	if (status != ATTN_OK) {
		run_report(msg, &err, &o);
		return run_exit_code(status);
	}
	if (o.help || o.version) {
		if ((status = render_open(out, &err)) != ATTN_OK) {
			run_report(msg, &err, &o);
			return run_exit_code(status);
		}
		if (o.help)
			options_print_help(&o, out->fp);
		else
			fputs("attn " ATTN_VERSION "\n", out->fp);
		status = render_close(out, ATTN_OK, &err);
		if (status != ATTN_OK)
			run_report(msg, &err, &o);
		return run_exit_code(status);
	}
	return run_attn(&o, &(struct run_io){ msg, out });
}

/* Forget the last run's output and messages. */
static void
session_clear(struct attn_session *s)
{
	render_free(&s->out);
	free(s->msg);
	s->msg = NULL;
	s->msglen = 0;
}

int
attn_session_run(struct attn_session *s)
{
	FILE *msg;
	int code;

	session_clear(s);
	if ((msg = open_memstream(&s->msg, &s->msglen)) == NULL)
		return run_exit_code(ATTN_ERR_NOMEM);
	pthread_mutex_lock(&session_lock);
	/* many small runs in one process: the mappings of one run's large
	 * blocks kept for the next (lib/memory.c, spare mappings) */
	attn_block_spares(1);
	slurp_memory(s->files, s->nfiles);
	memory_limit_text(s->max_memory);
	memory_reset();
	report_messages(msg);
	/* the output, once closed, is charged to no account: it outlives
	 * the run's */
	code = session_main(s, &s->out, msg);
	report_messages(NULL);
	memory_reset();
	memory_limit_text(NULL);
	slurp_memory(NULL, 0);
	pthread_mutex_unlock(&session_lock);
	if (fclose(msg) != 0) {
		free(s->msg);
		s->msg = NULL;
		s->msglen = 0;
	}
	return code;
}

const char *
attn_session_output(const struct attn_session *s, size_t *len)
{
	*len = s->out.len;
	return s->out.text != NULL ? s->out.text : "";
}

const char *
attn_session_messages(const struct attn_session *s)
{
	return s->msg != NULL ? s->msg : "";
}

void
attn_session_free(struct attn_session *s)
{
	size_t i;

	if (s == NULL)
		return;
	session_clear(s);
	for (i = 0; i < s->nwords; i++)
		free(s->words[i]);
	for (i = 0; i < s->nfiles; i++) {
		free((char *)(uintptr_t)s->files[i].name);
		free((char *)(uintptr_t)s->files[i].member);
	}
	free(s->words);
	free(s->files);
	free(s->max_memory);
	free(s);
}
