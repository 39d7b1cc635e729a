/*
 * slurp.c - input files read whole (see slurp.h).
 *
 * Inputs are held in memory in one piece: every reader then works on a
 * buffer, and positions are byte offsets into it.  A regular file is
 * mapped, so that no second copy of it is made beside the page cache;
 * anything else (standard input, a pipe, a device) is read.  Each read is
 * charged to the run's memory (memory.c) before the parse that would need
 * it, a mapped file as if it were read.
 */
#define _DEFAULT_SOURCE		/* MAP_ANONYMOUS */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attn.h"
#include "attn_private.h"
#include "memory.h"
#include "signals.h"
#include "slurp.h"

/* ---------------------------------------------------------------- mapped */

/*
 * A regular file is mapped rather than read, so that attn holds no copy
 * of it beside the kernel's page cache, and reading costs no copy and no
 * fresh pages.  The mapping is followed by a page of zeros, so that the
 * text stays NUL-terminated whatever the file's size, and even when the
 * file grows under it.  A file that shrinks under it raises SIGBUS,
 * which signals.c turns into a read error while the mapping is held.
 * Several may be held at once, one an input read side by side.
 */

/* Give back the mapping at p, span bytes, and its SIGBUS slot. */
static void
unmap(char *p, size_t span, int slot)
{
	munmap(p, span);
	signals_bus_release(slot);
}

/*
 * Map the regular file fd of size bytes (charged as a read of the whole
 * file would be): 1 when in holds it or *status says why not, 0 when it
 * cannot be mapped (too many mappings held, mmap refusing) and must be
 * read instead.
 */
static int
map_input(int fd, const char *name, size_t size, struct slurp *in,
    enum attn_status *status, struct attn_error *err)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t span, off, least = size + 2, ncap = size + 2;
	char *p;
	int slot;

	if (size > SIZE_MAX - 2 * page)
		return 0;
	if ((*status = memory_read_grow(&in->mr, 0, least, &ncap, err)) !=
	    ATTN_OK)
		return 1;
	/* The file's pages, then at least one of zeros. */
	span = (size + page - 1) / page * page + page;
	p = mmap(NULL, span, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 0;
	if (mmap(p, size, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0) ==
	    MAP_FAILED || (slot = signals_bus_catch(p, size, fd, name)) < 0) {
		munmap(p, span);
		return 0;
	}
	/* Every page touched now, as a read would touch it: a file that
	 * shrinks meanwhile is told by the handler, not by what a parser
	 * meets in the zeros past its new end.  A lazy one is touched as
	 * it is read, the handler catching it all the while. */
	for (off = 0; !in->lazy && off < size; off += page)
		(void)*(volatile const char *)(p + off);
	memory_read_end(&in->mr);
	in->buf = p;
	in->len = size;
	in->span = span;
	in->fd = fd;
	in->slot = slot;
	return 1;
}

int
slurp_keep(struct slurp *in)
{
	if (!in->keepable || in->span == 0)
		return 0;
	in->lent = 1;
	return 1;
}

void
slurp_release(struct slurp *in)
{
	memory_read_release(&in->mr);
	if (in->lent) {
		/* the caller's bytes */
	} else if (in->span != 0) {
		close(in->fd);
		unmap(in->buf, in->span, in->slot);
	} else {
		free(in->buf);
	}
	memset(in, 0, sizeof *in);
}

/* ---------------------------------------------------------------- read */

/* The first buffer for an input read with read(): the whole of a file
 * whose size fstat tells, with room for its NUL and for a read that sees
 * its end, which must all fit (*least); else 64 KiB that double as
 * needed, or less that fits. */
static size_t
first_cap(int fd, size_t *least)
{
	struct stat sb;

	*least = 2;
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0 &&
	    (unsigned long long)sb.st_size < SIZE_MAX - 2)
		return *least = (size_t)sb.st_size + 2;
	return 65536;
}

/* Read fd to its end into in (see slurp_file). */
static enum attn_status
read_input(int fd, const char *name, struct slurp *in,
    struct attn_error *err)
{
	struct memory_read *mr = &in->mr;
	size_t cap, n = 0, ncap, least;
	enum attn_status status;
	char *p = NULL, *q;
	ssize_t r;

	/* Every buffer, and every read into it, is charged before parsing
	 * can run out of memory on it. */
	ncap = first_cap(fd, &least);
	if ((status = memory_read_grow(mr, 0, least, &ncap, err)) != ATTN_OK)
		return status;
	cap = ncap;
	if ((p = malloc(cap)) == NULL)
		goto nomem;
	for (;;) {
		if (cap - n < 2) {
			ncap = cap > SIZE_MAX / 2 ? SIZE_MAX : cap * 2;
			if ((status = memory_read_grow(mr, cap, n + 2, &ncap,
			    err)) != ATTN_OK)
				goto fail;
			if ((q = realloc(p, ncap)) == NULL)
				goto nomem;
			p = q;
			cap = ncap;
		}
		r = read(fd, p + n, cap - n - 1);
		if (r == 0)
			break;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			status = attn_error_set(err, ATTN_ERR_IO, name, 0, 0,
			    "read error: %s", strerror(errno));
			goto fail;
		}
		n += (size_t)r;
	}
	p[n] = '\0';
	in->buf = p;
	in->len = n;
	memory_read_end(mr);
	return ATTN_OK;
nomem:
	status = attn_error_set(err, ATTN_ERR_NOMEM, name, 0, 0,
	    "out of memory reading %zu bytes", n);
fail:
	free(p);
	return status;
}

/* ---------------------------------------------------------------- memory */

static const struct slurp_memory *memory_files;
static size_t memory_nfiles;

void
slurp_memory(const struct slurp_memory *files, size_t n)
{
	memory_files = files;
	memory_nfiles = n;
}

/* The file in memory named path, or NULL. */
static const struct slurp_memory *
memory_file(const char *path)
{
	size_t i;

	for (i = 0; i < memory_nfiles; i++)
		if (memory_files[i].member == NULL &&
		    strcmp(memory_files[i].name, path) == 0)
			return &memory_files[i];
	return NULL;
}

enum attn_status
slurp_archive(const char *path, struct attn_npz_part **parts, size_t *n,
    struct attn_error *err)
{
	size_t i, k = 0;

	*parts = NULL;
	*n = 0;
	for (i = 0; i < memory_nfiles; i++)
		k += memory_files[i].member != NULL &&
		    strcmp(memory_files[i].name, path) == 0;
	if (k == 0)
		return ATTN_OK;
	if ((*parts = calloc(k, sizeof **parts)) == NULL)
		return attn_error_set(err, ATTN_ERR_NOMEM, path, 0, 0,
		    "out of memory");
	for (i = 0; i < memory_nfiles; i++)
		if (memory_files[i].member != NULL &&
		    strcmp(memory_files[i].name, path) == 0)
			(*parts)[(*n)++] = (struct attn_npz_part){
				memory_files[i].member, memory_files[i].bytes,
				memory_files[i].len, memory_files[i].data,
				memory_files[i].dlen };
	return ATTN_OK;
}

/* ---------------------------------------------------------------- file */

/* A file in memory into in: read where it lies, charged as a mapped file
 * is; a .npy in two pieces left in them when parts, else put together in
 * a buffer of its own, charged as a read. */
static enum attn_status
slurp_lent(const struct slurp_memory *mem, const char *name, int parts,
    struct slurp *in, struct attn_error *err)
{
	size_t total, least, ncap;
	enum attn_status status;
	char *p;

	if (mem->data != NULL && mem->dlen > SIZE_MAX - mem->len)
		return attn_error_set(err, ATTN_ERR_NOMEM, name, 0, 0,
		    "out of memory");
	total = mem->len + (mem->data != NULL ? mem->dlen : 0);
	if (total > SIZE_MAX - 2)
		return attn_error_set(err, ATTN_ERR_NOMEM, name, 0, 0,
		    "out of memory");
	least = ncap = total + 2;
	if ((status = memory_read_grow(&in->mr, 0, least, &ncap, err)) !=
	    ATTN_OK)
		return status;
	if (mem->data != NULL && !parts) {
		if ((p = malloc(total + 1)) == NULL) {
			memory_read_release(&in->mr);
			return attn_error_set(err, ATTN_ERR_NOMEM, name, 0, 0,
			    "out of memory reading %zu bytes", total);
		}
		memcpy(p, mem->bytes, mem->len);
		memcpy(p + mem->len, mem->data, mem->dlen);
		p[total] = '\0';
		memory_read_end(&in->mr);
		in->buf = p;
		in->len = total;
		return ATTN_OK;
	}
	memory_read_end(&in->mr);
	in->buf = (char *)(uintptr_t)mem->bytes;
	in->len = mem->len;
	in->data = mem->data;
	in->dlen = mem->data != NULL ? mem->dlen : 0;
	in->lent = 1;
	return ATTN_OK;
}

slurp_hook_fn *slurp_hook;
int slurp_alone;

enum attn_status
slurp_read(const char *path, struct slurp *in, struct attn_error *err)
{
	const int is_stdin = strcmp(path, "-") == 0;
	const char *name = is_stdin ? STDIN_NAME : path;
	enum attn_status status;
	struct stat sb;
	int fd;

	if ((status = memory_read_begin(&in->mr, name, err)) != ATTN_OK)
		return status;
	fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY);
	if (fd < 0)
		return attn_error_set(err, ATTN_ERR_NOINPUT, name, 0, 0,
		    "cannot open: %s", strerror(errno));
	if (fstat(fd, &sb) != 0)
		sb.st_mode = 0;		/* no stat: read() will tell */
	/* Standard input is read even from a file: the shell may have left
	 * its offset anywhere. */
	if (S_ISDIR(sb.st_mode)) {
		status = attn_error_set(err, ATTN_ERR_NOINPUT, name, 0, 0,
		    "is a directory");
	} else if (!is_stdin && S_ISREG(sb.st_mode) && sb.st_size > 0 &&
	    (unsigned long long)sb.st_size < SIZE_MAX &&
	    map_input(fd, name, (size_t)sb.st_size, in, &status, err)) {
		if (status == ATTN_OK)
			return ATTN_OK;	/* fd stays open with the mapping */
	} else {
		status = read_input(fd, name, in, err);
	}
	if (!is_stdin)
		close(fd);
	if (status != ATTN_OK)	/* what a failed read charged */
		memory_read_release(&in->mr);
	return status;
}

/* slurp_file, or with parts slurp_parts. */
static enum attn_status
slurp_open(const char *path, int parts, struct slurp *in,
    struct attn_error *err)
{
	const char *name = strcmp(path, "-") == 0 ? STDIN_NAME : path;
	const struct slurp_memory *mem;
	enum attn_status status;

	memset(in, 0, sizeof *in);
	if ((mem = memory_file(path)) != NULL)
		return (status = memory_read_begin(&in->mr, name, err)) !=
		    ATTN_OK ? status : slurp_lent(mem, name, parts, in, err);
	if (slurp_hook != NULL)
		return slurp_hook(path, in, err);
	return slurp_read(path, in, err);
}

enum attn_status
slurp_file(const char *path, struct slurp *in, struct attn_error *err)
{
	return slurp_open(path, 0, in, err);
}

enum attn_status
slurp_parts(const char *path, struct slurp *in, struct attn_error *err)
{
	return slurp_open(path, 1, in, err);
}
