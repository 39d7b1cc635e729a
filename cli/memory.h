/*
 * memory.h - what a run may hold, and the account of what it holds.
 *
 * The limit is the lowest of ATTN_MAX_MEMORY, the machine's physical
 * memory and the memory limit of attn's cgroup.  Charged against it, as
 * the run goes: each input while it is read and parsed (its buffer, and
 * what the readers will build from it, bounded from the text as it
 * arrives), then the parsed inputs and the stages before the kernel runs,
 * then the output text, which is rendered into memory before a byte is
 * written.  A charge over the limit is ATTN_ERR_NOMEM with one message
 * naming the limit, before the memory is taken, so that attn stops
 * cleanly rather than being killed or failing halfway.
 */
#ifndef ATTN_MEMORY_H
#define ATTN_MEMORY_H

#include <stdio.h>

#include "attn.h"
#include "inputs.h"

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
 * One input being read: the limit, and the counts of its text that bound
 * what parsing it will take.  memory_read_begin before the first read,
 * memory_read_grow before the buffer grows, memory_read_count after each
 * read, memory_read_end once it is all read.
 */
struct memory_read {
	const char *name;	/* for messages */
	struct memory_limit lim;
	int json;		/* -1 until the first byte that is not blank */
	size_t tokens;		/* separators, brackets and quotes */
	size_t lines, first_line_tokens, quotes;
	size_t label_bytes;	/* bytes that may become labels */
	int quoted, field;	/* inside "..."; field index on the line */
	unsigned char last;	/* the byte before */
	int npy;		/* a NumPy .npy file, by its magic */
	size_t bytes;		/* read so far */
};

/* Start reading the input name (its extension tells JSON). */
enum attn_status memory_read_begin(struct memory_read *r, const char *name,
    struct attn_error *err);

/* May the buffer of cap bytes, n of them read, become *ncap bytes?  Sets
 * *ncap to what fits, at most what was asked, or refuses when that is
 * less than least. */
enum attn_status memory_read_grow(const struct memory_read *r, size_t cap,
    size_t least, size_t *ncap, size_t n, struct attn_error *err);

/* Count the len new bytes at p; refuse when the cap-byte buffer holding
 * the n bytes read so far, and what parsing them takes, pass the limit. */
enum attn_status memory_read_count(struct memory_read *r, const char *p,
    size_t len, size_t cap, size_t n, struct attn_error *err);

/* The input is read: what its parsed form will hold stays charged while
 * the next input is read. */
void memory_read_end(const struct memory_read *r);

/*
 * Before the kernel runs: refuse when the parsed inputs, the labels attn
 * makes for their rows and the stages (stage_bytes, from attn_plan) pass
 * the limit.  What they take stays charged for the output.
 */
enum attn_status memory_admit_run(const struct inputs *in, size_t stage_bytes,
    struct attn_error *err);

/*
 * A stream that collects the rendered output in memory, as
 * open_memstream does, but whose buffer may not grow past what the limit
 * leaves beside the inputs and stages.  NULL when out of memory.
 */
FILE *memory_stream_open(char **buf, size_t *len);

/*
 * Close the stream and set *buf (owned by the caller, NUL-terminated; NULL
 * on failure) and *len.  Returns st, or when st is ATTN_OK the stream's
 * own failure: the output would pass the limit, or memory ran out.
 */
enum attn_status memory_stream_close(FILE *fp, enum attn_status st,
    struct attn_error *err);

/* Forget what earlier runs charged: for a program that runs main() more
 * than once in one process (the fuzz harness). */
void memory_reset(void);

#endif
