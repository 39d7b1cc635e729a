/*
 * attn_session.h - attn's command line as a library call, for bindings
 * that have no compiler (the Python module over libattn.so.0, ctypes):
 * the table of attn's options as its --help has it, and a run given
 * attn's own words (options and operands) and files in memory, that
 * reads, checks and computes as attn(1) does, through the same code, and
 * gives back what attn would write on standard output (-f npz: every
 * stage asked for, byte for byte; --check -f json: the verdict) and the
 * lines it would write on standard error (each error, warning and hint),
 * with attn(1)'s exit code.
 *
 * Ownership: a session owns its words and its output; the bytes of a
 * file given in memory stay the caller's, unchanged, until the run
 * returns.  Runs in several threads at once are taken one at a time
 * (attn's parsing and memory account are the process's); the computing
 * itself uses the threads -j asks for.
 */
#ifndef ATTN_SESSION_H
#define ATTN_SESSION_H

#include <stddef.h>

/* What an option's argument is (struct attn_option_about.value). */
enum attn_option_value {
	ATTN_OPTION_NONE,	/* a flag: no argument */
	ATTN_OPTION_TEXT,	/* a number, a list or a name */
	ATTN_OPTION_FILE,	/* a file (or for some, a list) */
	ATTN_OPTION_WORDS,	/* one of .words */
	ATTN_OPTION_STAGES	/* stage names, comma-separated */
};

/* One option of attn, from the table its command line is parsed by. */
struct attn_option_about {
	const char *name;	/* long name, without "--" */
	const char *arg;	/* its argument in --help; NULL: a flag */
	const char *help;	/* its --help text, lines split by '\n' */
	int value;		/* enum attn_option_value */
	const char *const *words;	/* ATTN_OPTION_WORDS: NULL-ended */
	/* 1: a convention of the computation or of the check, which a
	 * binding takes from its caller; 0: output, which the binding
	 * chooses itself (-s, -f, -o, --check ...), or not attn's own */
	int convention;
};

/* The number of options, and option i (i below that) into *out. */
size_t attn_option_count(void);
void attn_option_about(size_t i, struct attn_option_about *out);

struct attn_session;

/* A session with no words; NULL when out of memory. */
struct attn_session *attn_session_new(void);

/* Add one word of attn's command line (after "attn"); 0, or -1 when out
 * of memory. */
int attn_session_arg(struct attn_session *s, const char *word);

/* A file of the run in memory: the run reads len bytes at bytes where
 * its words name name, in place of a file of that name.  bytes[len]
 * must be 0 (the readers' text ends there).  0, or -1 when out of
 * memory. */
int attn_session_file(struct attn_session *s, const char *name,
    const void *bytes, size_t len);

/* A .npy file of the run in memory in two pieces, read where its words
 * name name: its header, head[0..hlen) (the magic to the header's '\n'),
 * and its data, data[0..dlen), which need not follow the header; read
 * as the file the two make one after the other, and float64 data in the
 * host's byte order and C order (8-byte aligned) read in place, not
 * copied, where an array of numbers is wanted (operands, dO, a bias).
 * Both stay the caller's, unchanged, until the run returns.  0, or -1
 * when out of memory. */
int attn_session_npy(struct attn_session *s, const char *name,
    const void *head, size_t hlen, const void *data, size_t dlen);

/* Member member.npy of a .npz in memory, read where the run's words name
 * name (--check name): the members are those given for name, in order,
 * each a .npy in two pieces as attn_session_npy takes it, read as the
 * archive numpy.savez would write of them is read, without the zip.
 * Both pieces stay the caller's, unchanged, until the run returns.  0,
 * or -1 when out of memory. */
int attn_session_member(struct attn_session *s, const char *name,
    const char *member, const void *head, size_t hlen, const void *data,
    size_t dlen);

/* The run's memory limit as ATTN_MAX_MEMORY's text (attn(1),
 * ENVIRONMENT), read in place of the environment's; NULL: the
 * environment's.  0, or -1 when out of memory. */
int attn_session_max_memory(struct attn_session *s, const char *text);

/* Run attn with the words and files given: attn(1)'s exit code (0; 1 for
 * a check that failed; 64 and up an error, its line in the messages).
 * Writes no file: -o and --svg are refused.  From the first run on, the
 * process keeps the mappings of arrays of 64 KiB and more that a run
 * freed (16 MiB at most, outside the memory limit) for the next run's
 * arrays of the same sizes. */
int attn_session_run(struct attn_session *s);

/* What the last run wrote on standard output (*len bytes), and on
 * standard error (a NUL-terminated text, "" when nothing): the
 * session's, until its next run or attn_session_free. */
const char *attn_session_output(const struct attn_session *s, size_t *len);
const char *attn_session_messages(const struct attn_session *s);

/* Give back the session, its words and its output (NULL is fine). */
void attn_session_free(struct attn_session *s);

#endif
