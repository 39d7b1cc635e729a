/*
 * memory.c - the memory limit, and the account it bounds.
 *
 * What a run holds is charged before it is taken, so that a run that
 * would not fit stops with one message and exit 71 instead of being
 * killed (by the OOM killer, or its cgroup) or failing inside a malloc.
 *
 * The CLI finds the limit (ATTN_MAX_MEMORY, the machine's memory, the
 * cgroup's) and makes libattn's memory account of it (attn_memory_new,
 * used by this thread for the whole run): libattn then charges what it
 * allocates where it allocates it, the readers' trees and numbers
 * (cJSON's included) and the run's stages, and refuses what would pass
 * the limit.  What is charged here is what the CLI holds itself: each
 * input's buffer while it is read and parsed (a mapped file as if it
 * were read), the names it makes for rows, a printer's buffers (the
 * numbers of a stage -f npy and npz write), and the output text, which
 * is rendered in memory before a byte is written.  Before the kernel
 * runs, the inputs as they were allocated and the stages as attn_plan
 * counts them are compared with the limit, so that a run is refused
 * whole rather than halfway (memory_admit_run).
 *
 * tests/memory/run.sh checks, with a counter of the real heap, that the
 * least ATTN_MAX_MEMORY attn accepts covers the peak of what it takes,
 * and that under an address-space limit the refusal comes before the
 * kill.
 */
#define _GNU_SOURCE	/* fopencookie */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attn.h"
#include "attn_io.h"
#include "attn_private.h"
#include "memory.h"

/* A name the CLI makes for a row, or copies from a file (q1, k1, a
 * label): its pointer, and malloc's header and rounding around its
 * string (a malloc'd chunk is at least 32 bytes). */
#define LABEL_COST 40ULL
/* What rendering takes beside the text: stdio's buffers, the printers'
 * arrays of column widths. */
#define OUTPUT_RESERVE (64ULL << 10)

/*
 * The run's account, made of the limit the first time it is wanted and
 * used by this thread from then on (memory_read_begin makes it before
 * the inputs are read, on as many threads as -j has, each charging the
 * buffer of its own input to it).  One run, one process: memory_reset
 * is for a caller that runs main() again.
 */
static struct attn_memory *account;
static struct memory_limit account_limit;

void
memory_reset(void)
{
	attn_memory_use(NULL);
	attn_memory_free(account);
	account = NULL;
}

/* ---------------------------------------------------------------- limit */

/* The smallest value in the files named by a cgroup path and each of its
 * ancestors, below root: file holds a number of bytes, or "max". */
static unsigned long long
cgroup_min(const char *root, const char *path, const char *file)
{
	unsigned long long lim = ULLONG_MAX, v;
	char dir[PATH_MAX], name[PATH_MAX + 64], text[64], *end, *slash;
	FILE *fp;

	if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir)
		return lim;
	for (;;) {
		/* "/" is the hierarchy's root: no second slash after root. */
		slash = strrchr(dir, '/');
		if (slash != NULL && slash[1] == '\0')
			*slash = '\0';
		snprintf(name, sizeof name, "%s%s/%s", root, dir, file);
		if ((fp = fopen(name, "r")) != NULL) {
			if (fgets(text, sizeof text, fp) != NULL &&
			    text[0] >= '0' && text[0] <= '9') {
				errno = 0;
				v = strtoull(text, &end, 10);
				if (errno == 0 && (*end == '\n' || *end == '\0') &&
				    v < lim)
					lim = v;
			}
			fclose(fp);
		}
		if ((slash = strrchr(dir, '/')) == NULL)
			break;
		*slash = '\0';
	}
	return lim;
}

/* Whether the comma-separated list has the word w. */
static int
has_word(const char *list, const char *w)
{
	size_t n = strlen(w);

	for (;;) {
		if (strncmp(list, w, n) == 0 &&
		    (list[n] == ',' || list[n] == '\0'))
			return 1;
		if ((list = strchr(list, ',')) == NULL)
			return 0;
		list++;
	}
}

/*
 * The memory limit of attn's cgroup, from /proc/self/cgroup: a line
 * "0::PATH" is cgroup v2 (memory.max), a line "N:...memory...:PATH" is
 * v1 (memory.limit_in_bytes), at the places systemd and container
 * runtimes mount them.  Ancestors count, since their limits hold too; a
 * file that is missing (a hierarchy mounted elsewhere, a namespace that
 * shows only part of the path) is passed over.  ULLONG_MAX when none.
 */
static unsigned long long
cgroup_limit(void)
{
	unsigned long long lim = ULLONG_MAX, v;
	char line[PATH_MAX + 128], *ctl, *path, *nl;
	FILE *fp;

	if ((fp = fopen("/proc/self/cgroup", "r")) == NULL)
		return lim;
	while (fgets(line, sizeof line, fp) != NULL) {
		if ((nl = strchr(line, '\n')) != NULL)
			*nl = '\0';
		if ((ctl = strchr(line, ':')) == NULL ||
		    (path = strchr(ctl + 1, ':')) == NULL)
			continue;
		*ctl++ = '\0';
		*path++ = '\0';
		if (strcmp(line, "0") == 0 && *ctl == '\0')
			v = cgroup_min("/sys/fs/cgroup", path, "memory.max");
		else if (has_word(ctl, "memory"))
			v = cgroup_min("/sys/fs/cgroup/memory", path,
			    "memory.limit_in_bytes");
		else
			continue;
		if (v < lim)
			lim = v;
	}
	fclose(fp);
	return lim;
}

/* ATTN_MAX_MEMORY: digits, then K, M or G (either case) for 2^10, 2^20,
 * 2^30.  Returns 0, or -1 when malformed or too large. */
static int
parse_bytes(const char *s, unsigned long long *out)
{
	static const char suffix[] = "KMG";
	unsigned long long v;
	const char *at;
	char *end;
	int shift = 0;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0)
		return -1;
	if (*end != '\0') {
		if ((at = strchr(suffix, *end & ~0x20)) == NULL ||
		    end[1] != '\0')
			return -1;
		shift = 10 * (int)(at - suffix + 1);
	}
	if (v > ULLONG_MAX >> shift)
		return -1;
	*out = v << shift;
	return 0;
}

/* The library's session's ATTN_MAX_MEMORY (memory_limit_text), read in
 * place of the environment's when not NULL. */
static const char *limit_text;

void
memory_limit_text(const char *text)
{
	limit_text = text;
}

enum attn_status
memory_limit(struct memory_limit *lim, struct attn_error *err)
{
	const char *env = limit_text != NULL ? limit_text :
	    getenv("ATTN_MAX_MEMORY");
	/* The machine's and the cgroup's, read once a process: the
	 * library's session runs many times in one, and the cgroup's
	 * files are a walk of the file system each time. */
	static struct memory_limit system;
	unsigned long long v;
	char shown[40];

	if (system.what == NULL) {
		long pages = sysconf(_SC_PHYS_PAGES);
		long size = sysconf(_SC_PAGESIZE);

		system.bytes = ULLONG_MAX;
		system.what = "this machine's memory";
		if (pages > 0 && size > 0 && (unsigned long long)pages <=
		    ULLONG_MAX / (unsigned long long)size)
			system.bytes = (unsigned long long)pages *
			    (unsigned long long)size;
		if ((v = cgroup_limit()) < system.bytes) {
			system.bytes = v;
			system.what = "the memory limit of attn's cgroup";
		}
	}
	*lim = system;
	if (env == NULL || *env == '\0')
		return ATTN_OK;
	if (parse_bytes(env, &v) != 0) {
		attn_text_preview(shown, sizeof shown - 4, env, strlen(env));
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
		    "ATTN_MAX_MEMORY wants a number of bytes, optionally with "
		    "K, M or G (powers of 1024), not '%s'", shown);
	}
	if (v <= lim->bytes) {
		lim->bytes = v;
		lim->what = "ATTN_MAX_MEMORY";
	}
	return ATTN_OK;
}

/* The run's account, made of the limit in force and used by this thread
 * the first time it is wanted. */
static enum attn_status
memory_account(struct attn_error *err)
{
	enum attn_status st;

	if (account != NULL)
		return ATTN_OK;
	if ((st = memory_limit(&account_limit, err)) != ATTN_OK)
		return st;
	if (account_limit.bytes > SIZE_MAX)
		account_limit.bytes = SIZE_MAX;
	if ((account = attn_memory_new((size_t)account_limit.bytes,
	    account_limit.what)) == NULL)
		return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "out of memory");
	attn_memory_use(account);
	return ATTN_OK;
}

/* What is left of the limit beside what the account holds. */
static size_t
left(void)
{
	size_t held = attn_memory_held(account);

	return account_limit.bytes > held ?
	    (size_t)account_limit.bytes - held : 0;
}

/* ---------------------------------------------------------------- inputs */

enum attn_status
memory_read_begin(struct memory_read *r, const char *name,
    struct attn_error *err)
{
	memset(r, 0, sizeof *r);
	r->name = name;
	return memory_account(err);
}

static enum attn_status
refuse_input(const struct memory_read *r, struct attn_error *err)
{
	return attn_error_set(err, ATTN_ERR_NOMEM, r->name, 0, 0,
	    "input too large: reading and parsing it takes more than %s "
	    "(%llu bytes)", account_limit.what, account_limit.bytes);
}

enum attn_status
memory_read_grow(struct memory_read *r, size_t cap, size_t least,
    size_t *ncap, struct attn_error *err)
{
	size_t room;

	/* The buffer before the last growth is gone by now: only cap is
	 * held.  While realloc copies, cap and the new buffer both are. */
	if (r->held > cap) {
		attn_memory_release(account, r->held - cap);
		r->held = cap;
	}
	room = left();
	if (room < least)
		return refuse_input(r, err);
	if (*ncap > room)
		*ncap = room;
	if (attn_memory_charge(account, *ncap) != 0)
		return refuse_input(r, err);
	r->held += *ncap;
	r->cap = *ncap;
	return ATTN_OK;
}

void
memory_read_end(struct memory_read *r)
{
	/* the buffer holds its last size alone */
	if (r->held > r->cap) {
		attn_memory_release(account, r->held - r->cap);
		r->held = r->cap;
	}
}

void
memory_read_release(struct memory_read *r)
{
	if (account != NULL)
		attn_memory_release(account, r->held);
	r->held = 0;
}

enum attn_status
memory_ready(struct attn_error *err)
{
	return memory_account(err);
}

/* ---------------------------------------------------------------- run */

/* a + b and a * b, saturating: charges are compared with the limit,
 * never used as sizes, so too large is simply too large. */
static unsigned long long
add(unsigned long long a, unsigned long long b)
{
	return a > ULLONG_MAX - b ? ULLONG_MAX : a + b;
}

static unsigned long long
mul(unsigned long long a, unsigned long long b)
{
	return b != 0 && a > ULLONG_MAX / b ? ULLONG_MAX : a * b;
}

static unsigned long long
labels_bytes(const struct attn_labels *l)
{
	unsigned long long n = 0;
	size_t i;

	for (i = 0; i < l->count; i++)
		n = add(n, add(strlen(l->names[i]) + 1, LABEL_COST));
	return n;
}

enum attn_status
memory_admit_run(const struct attn_labels *query, const struct attn_labels *key,
    size_t rows, size_t stage_bytes, struct attn_error *err)
{
	unsigned long long inputs, names;
	enum attn_status st;

	if ((st = memory_account(err)) != ATTN_OK)
		return st;
	/* The names of the rows: copies of the files' labels (of the query
	 * labels for the keys too, with --self), or made up (q1, k1, ..).
	 * Then the room rendering needs beside its text. */
	names = add(add(mul(labels_bytes(query), 3), mul(labels_bytes(key), 2)),
	    mul(rows, LABEL_COST));
	names = add(names, OUTPUT_RESERVE);
	inputs = attn_memory_held(account);
	if (add(add(inputs, names), stage_bytes) > account_limit.bytes ||
	    names > SIZE_MAX ||
	    attn_memory_charge(account, (size_t)names) != 0)
		return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "the inputs (%llu bytes) and the stages (%zu bytes) take "
		    "more than %s (%llu bytes)", add(inputs, names),
		    stage_bytes, account_limit.what, account_limit.bytes);
	return ATTN_OK;
}

/* ---------------------------------------------------------------- output */

/* Whether the output stream refused to grow past the limit (rather than
 * realloc failing), and what the limit left it, for
 * memory_stream_close's message. */
static int output_over;
static size_t output_left;

struct stream {
	char *buf;
	size_t len, cap;
	size_t held;	/* charged for the buffer, copies included */
	char **out;
	size_t *outlen;
};

/* Append, growing the buffer by doubling within the limit; a write that
 * would pass it fails (fopencookie: return 0), which sets the stream's
 * error flag. */
static ssize_t
stream_write(void *cookie, const char *p, size_t n)
{
	struct stream *s = cookie;
	size_t need, ncap, room;
	char *nb;

	if (n > SIZE_MAX - s->len - 1)
		return 0;
	need = s->len + n + 1;
	if (need > s->cap) {
		ncap = s->cap > SIZE_MAX / 2 ? SIZE_MAX : s->cap * 2;
		if (ncap < need)
			ncap = need;
		/* realloc may copy: the old buffer counts until it is done,
		 * and the one before it is gone. */
		if (s->held > s->cap) {
			attn_memory_release(account, s->held - s->cap);
			s->held = s->cap;
		}
		/* A block as large as what it takes (a mapping's whole
		 * length), or what need takes when that would not fit. */
		room = left();
		if (room < attn_block_size(need)) {
			output_over = 1;
			errno = ENOMEM;
			return 0;
		}
		if (attn_block_size(ncap) > room)
			ncap = need;
		ncap = attn_block_size(ncap);
		if (attn_memory_charge(account, ncap) != 0) {
			output_over = 1;
			errno = ENOMEM;
			return 0;
		}
		s->held += ncap;
		if ((nb = attn_block_realloc(s->buf, s->len, ncap)) == NULL)
			return 0;
		s->buf = nb;
		s->cap = ncap;
	}
	memcpy(s->buf + s->len, p, n);
	s->len += n;
	s->buf[s->len] = '\0';
	return (ssize_t)n;
}

/* The text goes to the caller, and its charge with it: what it renders
 * next (an SVG after the output) is measured from what is left. */
static int
stream_close(void *cookie)
{
	struct stream *s = cookie;

	*s->out = s->buf;
	*s->outlen = s->len;
	attn_memory_release(account, s->held);
	free(s);
	return 0;
}

FILE *
memory_stream_open(char **buf, size_t *len)
{
	static const cookie_io_functions_t io = {
		NULL, stream_write, NULL, stream_close
	};
	struct attn_error ignored;
	struct stream *s;
	FILE *fp;

	*buf = NULL;
	*len = 0;
	/* A malformed ATTN_MAX_MEMORY was refused before the inputs. */
	if (memory_account(&ignored) != ATTN_OK ||
	    (s = calloc(1, sizeof *s)) == NULL)
		return NULL;
	s->out = buf;
	s->outlen = len;
	output_over = 0;
	output_left = left();
	if ((fp = fopencookie(s, "w", io)) == NULL)
		free(s);
	return fp;
}

enum attn_status
memory_stream_close(FILE *fp, enum attn_status st, struct attn_error *err)
{
	int failed = ferror(fp);

	if (fclose(fp) != 0)
		failed = 1;
	if (st != ATTN_OK || !failed)
		return st;
	if (output_over)
		return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "the output takes more than the %zu bytes that %s "
		    "(%llu bytes) leaves beside the inputs and the stages",
		    output_left, account_limit.what, account_limit.bytes);
	return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
	    "out of memory rendering the output");
}

/* ---------------------------------------------------------------- buffers */

void *
memory_buffer(size_t bytes, const char *doing, struct attn_error *err)
{
	size_t room;
	void *p;

	if (memory_account(err) != ATTN_OK)
		return NULL;
	room = left();
	bytes = attn_block_size(bytes);
	if (bytes > room || attn_memory_charge(account, bytes) != 0) {
		attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0, "%s takes %zu "
		    "bytes, more than the %zu that %s (%llu bytes) leaves "
		    "beside the inputs and the stages", doing, bytes, room,
		    account_limit.what, account_limit.bytes);
		return NULL;
	}
	if ((p = attn_block_alloc(bytes)) == NULL) {
		attn_memory_release(account, bytes);
		attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "out of memory %s", doing);
	}
	return p;
}

void
memory_buffer_free(void *p, size_t bytes)
{
	if (p == NULL)
		return;
	attn_block_free(p);
	attn_memory_release(account, attn_block_size(bytes));
}
