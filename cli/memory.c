/*
 * memory.c - the memory limit, and the charges made against it.
 *
 * What a run holds is charged before it is taken, so that a run that
 * would not fit stops with one message and exit 71 instead of being
 * killed (by the OOM killer, or its cgroup) or failing inside a malloc.
 *
 * Inputs are charged while they are read, since parsing takes far more
 * than the file: cJSON builds a node of 64 bytes (80 with malloc's
 * header) for every value, which is 40 bytes a byte for "[1,1,...]" and
 * 4 for numbers of 17 digits.  So the reader counts, as the bytes arrive,
 * the tokens that can begin a value, a JSON node, a field or a string
 * (commas, semicolons, tabs, brackets, quotes, and runs of spaces and
 * newlines) and charges each one what the readers were measured to take
 * for it, beside the buffer itself:
 *
 *   peak while parsing, less the buffer and cJSON's copy of it, per token
 *   (an LD_PRELOAD counter of malloc_usable_size + 8 over each chunk,
 *   realloc counted as a copy; glibc 2.36, cJSON 1.7.15, x86-64):
 *
 *     JSON   [1,1,...] 94, [[1],[1],...] 86, bundle labels 49
 *     text   one wide row 39, a header 31, row labels 26, 1000 x 1000 14
 *
 * A NumPy print ([[1. 0.] ...]) starts like JSON and is charged as JSON,
 * about five times what its reader takes.  A binary .npy (told by its
 * magic) has no tokens: its reader makes a double of every 2 bytes at
 * most (float16), so it is charged 4 bytes a byte, parsed or not.
 *
 * JSON_TOKEN and TEXT_TOKEN below round those up with a margin for
 * allocator slack.  tests/memory/run.sh checks with the same counter that
 * the least ATTN_MAX_MEMORY attn accepts covers the peak, for each of
 * those shapes and more: run it with ATTN_MEMORY_VERBOSE=1 after changing
 * a reader, to see the margins.  Once parsed, an input holds 8 bytes a value and its
 * labels, which stay charged while the next input is read; after the
 * last one, main's check counts the parsed inputs exactly, plus the
 * stages (attn_plan), and what is left is the output text's budget.
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
#include "memory.h"

/* Charges per token of an input while it is parsed (see above). */
#define JSON_TOKEN 112ULL
#define TEXT_TOKEN 64ULL
/* A label once parsed: its pointer, and malloc's header and rounding
 * around its string (a malloc'd chunk is at least 32 bytes). */
#define LABEL_COST 40ULL
/* What rendering takes beside the text: stdio's buffers, the printers'
 * arrays of column widths. */
#define OUTPUT_RESERVE (64ULL << 10)

/*
 * What the run holds beside the buffer being filled: the inputs read so
 * far (their parsed form, bounded), then from memory_admit_run the
 * parsed inputs and the stages.  One run, one process: memory_reset is
 * for a caller that runs main() again.
 */
static unsigned long long held;

void
memory_reset(void)
{
	held = 0;
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

enum attn_status
memory_limit(struct memory_limit *lim, struct attn_error *err)
{
	const char *env = getenv("ATTN_MAX_MEMORY");
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
	unsigned long long v;
	char shown[40];

	lim->bytes = ULLONG_MAX;
	lim->what = "this machine's memory";
	if (pages > 0 && size > 0 &&
	    (unsigned long long)pages <= ULLONG_MAX / (unsigned long long)size)
		lim->bytes = (unsigned long long)pages *
		    (unsigned long long)size;
	if ((v = cgroup_limit()) < lim->bytes) {
		lim->bytes = v;
		lim->what = "the memory limit of attn's cgroup";
	}
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

/* a + b, saturating: charges are compared with the limit, never used as
 * sizes, so too large is simply too large. */
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

/* What is left of the limit beside what is held. */
static unsigned long long
left(const struct memory_limit *lim)
{
	return lim->bytes > held ? lim->bytes - held : 0;
}

/* ---------------------------------------------------------------- inputs */

enum attn_status
memory_read_begin(struct memory_read *r, const char *name,
    struct attn_error *err)
{
	const char *dot = strrchr(name, '.'), *slash = strrchr(name, '/');

	memset(r, 0, sizeof *r);
	r->name = name;
	r->json = -1;
	r->last = '\n';
	/* .json is read as JSON whatever it holds; anything else whose
	 * first byte is [ or { may be (memory_read_count decides). */
	if (dot != NULL && (slash == NULL || dot > slash) &&
	    strcmp(dot, ".json") == 0)
		r->json = 1;
	return memory_limit(&r->lim, err);
}

/*
 * What parsing the n bytes read so far takes beside their buffer: for
 * JSON, cJSON's NUL-terminated copy, its tree and the values; for text,
 * the labels copied out, the fields of the widest line and the values.
 */
static unsigned long long
parse_cost(const struct memory_read *r, size_t n)
{
	unsigned long long tokens = add(r->tokens, 1);

	if (r->npy)
		return mul(n, 4);
	if (r->json == 1)
		return add(add(n, 1), mul(tokens, JSON_TOKEN));
	return add(r->label_bytes, mul(tokens, TEXT_TOKEN));
}

static enum attn_status
refuse_input(const struct memory_read *r, struct attn_error *err)
{
	return attn_error_set(err, ATTN_ERR_NOMEM, r->name, 0, 0,
	    "input too large: reading and parsing it takes more than %s "
	    "(%llu bytes)", r->lim.what, r->lim.bytes);
}

enum attn_status
memory_read_grow(const struct memory_read *r, size_t cap, size_t least,
    size_t *ncap, size_t n, struct attn_error *err)
{
	unsigned long long room = left(&r->lim), need;

	/* While realloc copies, the old buffer and the new one are both
	 * there. */
	need = add(cap, parse_cost(r, n));
	if (need >= room || room - need < least)
		return refuse_input(r, err);
	if (room - need < *ncap)
		*ncap = (size_t)(room - need);
	return ATTN_OK;
}

/*
 * Tokens: bytes that end a field or a value in text, or begin a JSON
 * value or string.  Commas, semicolons, tabs, brackets and quotes count
 * each; a blank counts only where it ends a field of white-space text, so
 * not after another blank or a byte that already counted (a space after
 * a comma is no new field), and a newline not after a blank or an
 * opening bracket.
 */
static void
count_byte(struct memory_read *r, unsigned char c)
{
	int after_blank, after_token;

	after_blank = r->last == ' ' || r->last == '\r' || r->last == '\n' ||
	    r->last == '[' || r->last == '{';
	after_token = after_blank || r->last == ',' || r->last == ';' ||
	    r->last == '\t' || r->last == '"' || r->last == ':';
	r->last = c;
	if (r->json < 0 && c != ' ' && c != '\t' && c != '\r' && c != '\n' &&
	    c != 0xEF && c != 0xBB && c != 0xBF)
		r->json = c == '[' || c == '{';
	switch (c) {
	case '"':
		r->quotes++;
		r->quoted = 1;
		r->tokens++;
		break;
	case ',':
	case ';':
	case '\t':
		r->field++;
		r->tokens++;
		break;
	case '[':
	case '{':
		r->tokens++;
		break;
	case '\n':
		r->lines++;
		r->field = 0;
		r->tokens += !after_blank;
		break;
	case ' ':
	case '\r':
		r->field += !after_token;
		r->tokens += !after_token;
		break;
	default:
		if (r->field == 0 || r->lines == 0)
			r->label_bytes++;
		break;
	}
}

/* The bytes count_byte does more with than count them as label bytes
 * (the cases of its switch): every other byte of a run of them is
 * counted at once, for the time of reading a large file.  Bytes before
 * the first that tells JSON from text go one by one. */
static const unsigned char special[256] = {
	['"'] = 1, [','] = 1, [';'] = 1, ['\t'] = 1, ['['] = 1, ['{'] = 1,
	['\n'] = 1, [' '] = 1, ['\r'] = 1
};

enum attn_status
memory_read_count(struct memory_read *r, const char *p, size_t len,
    size_t cap, size_t n, struct attn_error *err)
{
	const unsigned char *u = (const unsigned char *)p, *q;
	struct memory_read s = *r;	/* kept in registers, not reloaded
					 * after each byte read through u */
	size_t i = 0, j, t0 = s.tokens;

	/* The magic, "\x93NUMPY", in the first bytes read, as read.c
	 * guesses .npy. */
	if (s.bytes == 0 && len >= 6 && memcmp(p, "\x93NUMPY", 6) == 0)
		s.npy = 1;
	s.bytes += len;
	while (i < len && !s.npy) {
		if (s.quoted) {
			/* To the closing quote: label bytes, it included.  Its
			 * token joins first_line_tokens with the next byte's,
			 * if that byte is still on the first line. */
			q = memchr(u + i, '"', len - i);
			j = q != NULL ? (size_t)(q - u) + 1 : len;
			s.label_bytes += j - i;
			s.last = u[j - 1];
			if (q != NULL) {
				s.quoted = 0;
				s.tokens++;
			}
			i = j;
			continue;
		}
		j = i;
		if (s.json >= 0) {
			/* a run of plain bytes, eight at a time first */
			while (len - j >= 8 && !(special[u[j]] |
			    special[u[j + 1]] | special[u[j + 2]] |
			    special[u[j + 3]] | special[u[j + 4]] |
			    special[u[j + 5]] | special[u[j + 6]] |
			    special[u[j + 7]]))
				j += 8;
			while (j < len && !special[u[j]])
				j++;
			if (j > i) {
				if (s.field == 0 || s.lines == 0)
					s.label_bytes += j - i;
				s.last = u[j - 1];
				/* a closing quote's token, still pending */
				if (s.lines == 0)
					s.first_line_tokens += s.tokens - t0;
				t0 = s.tokens;
			}
		}
		if (j < len)
			count_byte(&s, u[j++]);
		i = j;
		if (s.lines == 0)
			s.first_line_tokens += s.tokens - t0;
		t0 = s.tokens;
	}
	*r = s;
	if (add(cap, parse_cost(r, n)) > left(&r->lim))
		return refuse_input(r, err);
	return ATTN_OK;
}

/* What a parsed input holds: 8 bytes a value, and its labels (the first
 * column's, a header's, or JSON strings). */
static unsigned long long
parsed_bytes(const struct memory_read *r)
{
	unsigned long long labels = add(add(r->lines, 1),
	    add(r->first_line_tokens, r->quotes / 2));

	if (r->npy)
		return mul(r->bytes, 4);
	return add(add(mul(add(r->tokens, 1), sizeof(double)),
	    mul(labels, LABEL_COST)), r->label_bytes);
}

void
memory_read_end(const struct memory_read *r)
{
	held = add(held, parsed_bytes(r));
}

/* ---------------------------------------------------------------- run */

static unsigned long long
labels_bytes(const struct attn_labels *l)
{
	unsigned long long n = 0;
	size_t i;

	for (i = 0; i < l->count; i++)
		n = add(n, add(strlen(l->names[i]) + 1, LABEL_COST));
	return n;
}

static unsigned long long
array_bytes(const struct attn_array *a)
{
	unsigned long long n = a->ndim != 0 ? sizeof(double) : 0;
	size_t d;

	for (d = 0; d < a->ndim; d++)
		n = mul(n, a->shape[d]);
	return add(n, add(labels_bytes(&a->row_labels),
	    labels_bytes(&a->col_labels)));
}

enum attn_status
memory_admit_run(const struct inputs *in, size_t stage_bytes,
    struct attn_error *err)
{
	struct memory_limit lim;
	unsigned long long inputs, q, k;
	enum attn_status st;
	size_t i;

	if ((st = memory_limit(&lim, err)) != ATTN_OK)
		return st;
	/* The files' labels, and the names of the rows: copies of those
	 * (of the query labels for the keys too, with --self), or made up
	 * (q1, k1, ..).  Then the room rendering needs beside its text. */
	q = labels_bytes(&in->query);
	k = labels_bytes(&in->key);
	inputs = add(add(mul(q, 3), mul(k, 2)),
	    mul(add(in->in.q.rows, in->in.k.rows), LABEL_COST));
	for (i = 0; i < IN_COUNT; i++)
		inputs = add(inputs, array_bytes(&in->arr[i]));
	/* the layer of --proj, or the bundle's */
	inputs = add(inputs, add(add(array_bytes(&in->layer.w_q),
	    array_bytes(&in->layer.w_k)), add(array_bytes(&in->layer.w_v),
	    array_bytes(&in->layer.w_o))));
	inputs = add(inputs, add(add(array_bytes(&in->layer.b_q),
	    array_bytes(&in->layer.b_k)), add(array_bytes(&in->layer.b_v),
	    array_bytes(&in->layer.b_o))));
	inputs = add(inputs, OUTPUT_RESERVE);
	held = add(inputs, stage_bytes);
	if (held > lim.bytes)
		return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "the inputs (%llu bytes) and the stages (%zu bytes) take "
		    "more than %s (%llu bytes)", inputs, stage_bytes,
		    lim.what, lim.bytes);
	return ATTN_OK;
}

/* ---------------------------------------------------------------- output */

/* Whether the output stream refused to grow past its budget (rather
 * than realloc failing), for memory_stream_close's message. */
static int output_over;

struct stream {
	char *buf;
	size_t len, cap;
	unsigned long long budget;	/* for the buffer, copies included */
	char **out;
	size_t *outlen;
};

/* Append, growing the buffer by doubling within the budget; a write that
 * would pass it fails (fopencookie: return 0), which sets the stream's
 * error flag. */
static ssize_t
stream_write(void *cookie, const char *p, size_t n)
{
	struct stream *s = cookie;
	size_t need, ncap;
	char *nb;

	if (n > SIZE_MAX - s->len - 1)
		return 0;
	need = s->len + n + 1;
	if (need > s->cap) {
		ncap = s->cap > SIZE_MAX / 2 ? SIZE_MAX : s->cap * 2;
		if (ncap < need)
			ncap = need;
		/* realloc may copy: the old buffer counts until it is done. */
		if (s->budget <= s->cap || s->budget - s->cap < need) {
			output_over = 1;
			errno = ENOMEM;
			return 0;
		}
		if (s->budget - s->cap < ncap)
			ncap = (size_t)(s->budget - s->cap);
		if ((nb = realloc(s->buf, ncap)) == NULL)
			return 0;
		s->buf = nb;
		s->cap = ncap;
	}
	memcpy(s->buf + s->len, p, n);
	s->len += n;
	s->buf[s->len] = '\0';
	return (ssize_t)n;
}

static int
stream_close(void *cookie)
{
	struct stream *s = cookie;

	*s->out = s->buf;
	*s->outlen = s->len;
	free(s);
	return 0;
}

FILE *
memory_stream_open(char **buf, size_t *len)
{
	static const cookie_io_functions_t io = {
		NULL, stream_write, NULL, stream_close
	};
	struct memory_limit lim;
	struct attn_error ignored;
	struct stream *s;
	FILE *fp;

	*buf = NULL;
	*len = 0;
	if ((s = calloc(1, sizeof *s)) == NULL)
		return NULL;
	/* A malformed ATTN_MAX_MEMORY was refused before the inputs. */
	s->budget = memory_limit(&lim, &ignored) == ATTN_OK ? left(&lim) : 0;
	s->out = buf;
	s->outlen = len;
	output_over = 0;
	if ((fp = fopencookie(s, "w", io)) == NULL)
		free(s);
	return fp;
}

enum attn_status
memory_stream_close(FILE *fp, enum attn_status st, struct attn_error *err)
{
	struct memory_limit lim;
	int failed = ferror(fp);

	if (fclose(fp) != 0)
		failed = 1;
	if (st != ATTN_OK || !failed)
		return st;
	if (output_over && memory_limit(&lim, err) == ATTN_OK)
		return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
		    "the output takes more than the %llu bytes that %s "
		    "(%llu bytes) leaves beside the inputs and the stages",
		    left(&lim), lim.what, lim.bytes);
	return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0,
	    "out of memory rendering the output");
}
