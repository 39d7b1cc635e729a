/*
 * memory.h - what a run may hold, and the account of what it holds.
 *
 * The limit is the lowest of ATTN_MAX_MEMORY, the machine's physical
 * memory and the memory limit of attn's cgroup.  It bounds libattn's
 * memory account of the run (attn.h), which the first call below makes
 * and which this thread then uses: libattn charges what it allocates,
 * and this CLI what it holds itself, each input's buffer while it is
 * read and parsed, the names of the rows, the output text.  A charge
 * over the limit is ATTN_ERR_NOMEM with one message naming the limit,
 * before the memory is taken, so that attn stops cleanly rather than
 * being killed or failing halfway.
 */
#ifndef ATTN_MEMORY_H
#define ATTN_MEMORY_H

#include <stdio.h>

#include "attn.h"
#include "attn_io.h"

struct memory_limit {
	unsigned long long bytes;
	const char *what;	/* names the limit in messages */
};

/*
 * The limit in force: ATTN_MAX_MEMORY (bytes, or K, M, G for powers of
 * 1024; empty counts as unset), the machine's physical memory, or its
 * cgroup's limit (v2 memory.max, else v1 memory.limit_in_bytes, of the
 * cgroup and its ancestors), whichever is lowest.  A malformed
 * ATTN_MAX_MEMORY is ATTN_ERR_USAGE.
 */
enum attn_status memory_limit(struct memory_limit *lim,
    struct attn_error *err);

/*
 * One input being read into a buffer: memory_read_begin before the
 * first read, memory_read_grow before the buffer is made or grows,
 * memory_read_end once it is all read; memory_read_release when the
 * buffer is given back, after it is parsed.  Each input keeps its own
 * charge, so that several may be read at once.
 */
struct memory_read {
	const char *name;	/* for messages */
	size_t cap;		/* the buffer's size, as last granted */
	size_t held;		/* what is charged for it */
};

/* Start reading the input name. */
enum attn_status memory_read_begin(struct memory_read *r, const char *name,
    struct attn_error *err);

/* May the buffer of cap bytes become *ncap bytes?  Charges and sets
 * *ncap to what fits, at most what was asked, or refuses when that is
 * less than least. */
enum attn_status memory_read_grow(struct memory_read *r, size_t cap,
    size_t least, size_t *ncap, struct attn_error *err);

/* The input is read: its buffer stays charged, at its last size, while
 * it is parsed. */
void memory_read_end(struct memory_read *r);

/* The input's buffer is given back. */
void memory_read_release(struct memory_read *r);

/* The run's account made, and used by this thread: before inputs are
 * read on other threads, which then use it too (attn_memory_use). */
enum attn_status memory_ready(struct attn_error *err);

/*
 * Before the kernel runs: refuse when the inputs as libattn holds them,
 * the names made for their rows (from the labels query and key, rows in
 * all) and the stages (stage_bytes, from attn_plan) pass the limit.
 * The names and the room rendering needs stay charged for the output.
 */
enum attn_status memory_admit_run(const struct attn_labels *query,
    const struct attn_labels *key, size_t rows, size_t stage_bytes,
    struct attn_error *err);

/*
 * A stream that collects the rendered output in memory, as
 * open_memstream does, but whose buffer may not grow past what the limit
 * leaves beside what the account holds.  NULL when out of memory.
 */
FILE *memory_stream_open(char **buf, size_t *len);

/*
 * Close the stream and set *buf (owned by the caller, NUL-terminated; NULL
 * on failure) and *len.  Returns st, or when st is ATTN_OK the stream's
 * own failure: the output would pass the limit, or memory ran out.
 */
enum attn_status memory_stream_close(FILE *fp, enum attn_status st,
    struct attn_error *err);

/*
 * A buffer of bytes that a printer holds for a while (-f npy's numbers
 * of a stage), charged to the account: NULL with ATTN_ERR_NOMEM, "DOING
 * takes N bytes, more than ..", when it would pass the limit or malloc
 * fails.  Free with memory_buffer_free and the same size.
 */
void *memory_buffer(size_t bytes, const char *doing, struct attn_error *err);
void memory_buffer_free(void *p, size_t bytes);

/* Forget the run's account: for a program that runs main() more than
 * once in one process (the fuzz harness). */
void memory_reset(void);

/* Read text as ATTN_MAX_MEMORY's value, instead of the environment's,
 * until called with NULL (the library's session: max_memory). */
void memory_limit_text(const char *text);

#endif
