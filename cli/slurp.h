/*
 * slurp.h - an input file read whole into memory: a regular file mapped
 * (read-only, with SIGBUS caught should it shrink meanwhile: one line on
 * stderr, exit 74), anything else read, each charged to the run's memory
 * as it arrives.
 */
#ifndef ATTN_SLURP_H
#define ATTN_SLURP_H

#include <stddef.h>

#include "attn.h"
#include "attn_io.h"
#include "memory.h"

/* The name standard input goes by in messages. */
#define STDIN_NAME "<stdin>"

/* An input file, whole: len bytes at buf, then a NUL. */
struct slurp {
	char *buf;
	size_t len;
	size_t span;	/* the bytes mapped; 0 when buf is malloc'd */
	int fd, slot;	/* a mapped file's, and its SIGBUS slot */
	int lent;	/* buf is a struct slurp_memory's, not ours */
	int keepable;	/* a mapping slurp_keep may keep (slurp_hook's) */
	int lazy;	/* set before slurp_read: a mapping's pages are read
			 * when a reader reads them, not all first (slurp_hook's,
			 * for a .npy of which it may read a part) */
	int alone;	/* slurp_hook's, with slurp_alone: this process read
			 * it alone (1), or another did (-1: nothing here) */
	/* slurp_parts of a .npy in two pieces: buf[0..len) its header,
	 * data[0..dlen) its data (lent too); NULL otherwise */
	const char *data;
	size_t dlen;
	struct memory_read mr;	/* what buf is charged */
};

/*
 * Read all of path ("-" for standard input) into in, to be given back
 * with slurp_release; several at once, on several threads, each using
 * the run's account (memory_ready).  An input that would not fit in the memory limit
 * once parsed (memory.h) is refused with ATTN_ERR_NOMEM as soon as the
 * bytes read show it, rather than read and parsed until the system
 * kills attn.
 */
enum attn_status slurp_file(const char *path, struct slurp *in,
    struct attn_error *err);

/* A file given in memory (the library's session, session.c): len bytes
 * at bytes, then a NUL, read under name instead of a file of that name;
 * or, data not NULL, a .npy in two pieces, its header (len bytes at
 * bytes) and its data (dlen bytes at data); or, member not NULL, that
 * .npy as member MEMBER.npy of the .npz name (slurp_archive). */
struct slurp_memory {
	const char *name;
	const char *bytes;
	size_t len;
	const char *data;
	size_t dlen;
	const char *member;
};

/* The members in memory of the .npz path, in the order given, into
 * *parts (*n of them, malloc'd, the caller's to free; NULL and 0 when
 * path has none, which slurp_file then reads).  ATTN_OK, or out of
 * memory. */
enum attn_status slurp_archive(const char *path, struct attn_npz_part **parts,
    size_t *n, struct attn_error *err);

/* As slurp_file, but a .npy in memory in two pieces stays in them
 * (in->data), for attn_read_npy_parts; slurp_file puts them together in
 * a buffer of its own, for every other reader. */
enum attn_status slurp_parts(const char *path, struct slurp *in,
    struct attn_error *err);

/* The files slurp_file finds in memory from now on (n of them at files,
 * which stay the caller's and unchanged until the next call; n 0: none). */
void slurp_memory(const struct slurp_memory *files, size_t n);

/*
 * attn-mpi's (cli/mpi/main.c): when set, every file slurp_file and
 * slurp_parts read from disk or standard input goes through it, in the
 * same order in every process, so that one process reads what the
 * others cannot read again (standard input, a pipe) and passes it on.
 * It gets in zeroed and reads with slurp_read, or fills in->buf and
 * in->len itself, charging in->mr as a read does (memory.h).  Files are
 * then read one after another, never side by side.
 */
typedef enum attn_status slurp_hook_fn(const char *path, struct slurp *in,
    struct attn_error *err);
extern slurp_hook_fn *slurp_hook;

/* Set around a read that one process may make alone (attn-mpi's Q,
 * load.h): slurp_hook may then read any file but a NumPy one in that
 * process alone, and leave in->alone -1 in the others. */
extern int slurp_alone;

/* A file from disk or standard input ("-") into in, zeroed: what
 * slurp_file does for a file not in memory. */
enum attn_status slurp_read(const char *path, struct slurp *in,
    struct attn_error *err);

/* A mapping that slurp_hook marked keepable stays mapped until the
 * process ends, its SIGBUS still caught, and in becomes lent, so that a
 * reader may read it in place (ATTN_READ_IN_PLACE): 1; else 0. */
int slurp_keep(struct slurp *in);

/* Give back what slurp_file took (a zeroed in is fine). */
void slurp_release(struct slurp *in);

#endif
