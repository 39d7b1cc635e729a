/*
 * write_npz.c - a NumPy .npz archive as numpy.savez writes one: a zip of
 * members NAME.npy, stored (not compressed), in the order they were
 * added, made in memory with libzip (zip_load.c) and handed to the
 * caller's put in pieces.
 *
 * The caller fills the buffers attn_npz_add gives with the members'
 * bytes, whole .npy files; the archive is made of them by attn_npz_write
 * alone, so that a failed run has called libzip for nothing.  Each
 * member's date is 1980-01-01 00:00, the first a zip can hold, which is
 * also the one numpy.savez writes (Python's zipfile.open gives a member
 * written through it no other): the same run writes the same bytes.
 *
 * Memory.  What attn allocates is charged to the account (memory.c): the
 * members' bytes, their names and the list of them.  libzip holds beside
 * them, while attn_npz_write runs, the archive it writes into the
 * in-memory source (the members' bytes again, with a header of a few
 * dozen bytes each and the central directory, in malloc'd fragments of
 * 64 KiB, ZIP_WRITE_FRAGMENT), its entries and sources (small structs,
 * a member's few hundred bytes) and an 8 KiB buffer it copies through.
 * That is charged too, as NPZ_MEMBER_COST a member over the archive's
 * fragments, from before zip_close writes it until the archive is
 * given back, so that an archive the limit cannot hold is refused
 * rather than half made; the members' buffers are given back as soon
 * as the archive holds their bytes.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "zip_load.h"

/* libzip's in-memory source grows by fragments of this many bytes
 * (WRITE_FRAGMENT_SIZE in zip_source_buffer.c), each a malloc, with
 * two words a fragment in its arrays of them. */
#define ZIP_WRITE_FRAGMENT ((size_t)64 << 10)
#define ZIP_FRAGMENT_WORDS 3
/* What a member adds to the archive beside its bytes and its name
 * (twice): its local header (30 bytes) and central directory entry
 * (46), with room for ZIP64's extra fields (20 and 28) when it is past
 * 4 GiB; and the end of the central directory, ZIP64's included. */
#define NPZ_MEMBER_HEADERS 124
#define NPZ_END 98
/* libzip's structs of a member (its entry, its source and the layers
 * zip_close puts on it to count the CRC), and its 8 KiB copy buffer. */
#define NPZ_MEMBER_COST 1024
#define NPZ_COPY_COST ((size_t)8 << 10)

/* zip's DOS date of 1980-01-01: (year - 1980) << 9 | month << 5 | day;
 * the time, 00:00:00, is 0. */
#define NPZ_DOS_DATE ((1 << 5) | 1)

unsigned char *
attn_npz_add(struct attn_npz *z, const char *name, size_t len,
    struct attn_error *err)
{
	struct attn_npz_member *m;
	size_t n = strlen(name);
	char doing[96];

	snprintf(doing, sizeof doing, "making %.40s.npy (%zu bytes) for a "
	    ".npz archive", name, len);
	if (z->count == z->cap) {
		void *g = attn_grow_array(z->members, &z->cap, z->count + 1,
		    sizeof *z->members);

		if (g == NULL) {
			attn_error_nomem(err, NULL, doing);
			return NULL;
		}
		z->members = g;
	}
	m = &z->members[z->count];
	memset(m, 0, sizeof *m);
	if (n > SIZE_MAX - 5 || (m->name = attn_mem_alloc(n + 5)) == NULL) {
		attn_error_nomem(err, NULL, doing);
		return NULL;
	}
	memcpy(m->name, name, n);
	memcpy(m->name + n, ".npy", 5);
	if ((m->bytes = attn_mem_alloc(len)) == NULL) {
		attn_mem_free(m->name, n + 5);
		attn_error_nomem(err, NULL, doing);
		return NULL;
	}
	m->len = len;
	z->count++;
	return m->bytes;
}

/* The member's bytes given back, once the archive holds them. */
static void
member_drop(struct attn_npz_member *m)
{
	attn_mem_free(m->bytes, m->len);
	m->bytes = NULL;
}

void
attn_npz_free(struct attn_npz *z)
{
	size_t i;

	for (i = 0; i < z->count; i++) {
		member_drop(&z->members[i]);
		attn_mem_free(z->members[i].name,
		    strlen(z->members[i].name) + 1);
	}
	attn_mem_free(z->members, z->cap * sizeof *z->members);
	memset(z, 0, sizeof *z);
}

/* What libzip will hold for the archive of z's members (see the top of
 * the file), in *cost; -1 when it overflows. */
static int
archive_cost(const struct attn_npz *z, size_t *cost)
{
	size_t bytes = NPZ_END, frags, i, name, each;

	for (i = 0; i < z->count; i++) {
		name = strlen(z->members[i].name);
		if (z->members[i].len > SIZE_MAX - bytes ||
		    name > (SIZE_MAX - bytes - z->members[i].len -
		    NPZ_MEMBER_HEADERS) / 2)
			return -1;
		bytes += z->members[i].len + 2 * name + NPZ_MEMBER_HEADERS;
	}
	frags = bytes / ZIP_WRITE_FRAGMENT + 1;
	each = attn_mem_cost(ZIP_WRITE_FRAGMENT) + ZIP_FRAGMENT_WORDS *
	    sizeof(size_t);
	if (frags > SIZE_MAX / each || z->count > (SIZE_MAX - NPZ_COPY_COST -
	    frags * each) / NPZ_MEMBER_COST)
		return -1;
	*cost = frags * each + z->count * NPZ_MEMBER_COST + NPZ_COPY_COST;
	return 0;
}

/* libzip failed at `doing`: out of memory, in all likelihood, since it
 * writes to memory alone. */
static enum attn_status
zip_failed(struct attn_error *err, const char *doing, zip_error_t *ze)
{
	return attn_error_set(err, ATTN_ERR_NOMEM, NULL, 0, 0, "libzip "
	    "could not %s a .npz archive: %s", doing,
	    attn_zf.zip_error_strerror(ze));
}

/* Member m added to zip, stored, dated 1980-01-01. */
static enum attn_status
add_member(zip_t *zip, const struct attn_npz_member *m,
    struct attn_error *err)
{
	zip_source_t *src;
	zip_int64_t at;

	if ((src = attn_zf.zip_source_buffer(zip, m->bytes, m->len, 0)) ==
	    NULL)
		return zip_failed(err, "add to", attn_zf.zip_get_error(zip));
	if ((at = attn_zf.zip_file_add(zip, m->name, src, 0)) < 0) {
		attn_zf.zip_source_free(src);
		return zip_failed(err, "add to", attn_zf.zip_get_error(zip));
	}
	if (attn_zf.zip_set_file_compression(zip, (zip_uint64_t)at,
	    ZIP_CM_STORE, 0) != 0 || attn_zf.zip_file_set_dostime(zip,
	    (zip_uint64_t)at, 0, NPZ_DOS_DATE, 0) != 0)
		return zip_failed(err, "add to", attn_zf.zip_get_error(zip));
	return ATTN_OK;
}

/* The archive z's members make, written by libzip into out (which it
 * keeps); the members' buffers are given back once it holds them. */
static enum attn_status
make_archive(struct attn_npz *z, zip_source_t *out, struct attn_error *err)
{
	enum attn_status st = ATTN_OK;
	zip_error_t ze;
	zip_t *zip;
	size_t i;

	attn_zf.zip_error_init(&ze);
	zip = attn_zf.zip_open_from_source(out, ZIP_CREATE | ZIP_TRUNCATE,
	    &ze);
	if (zip == NULL)
		st = zip_failed(err, "start", &ze);
	attn_zf.zip_error_fini(&ze);
	if (zip == NULL)
		return st;
	/* zip_close frees the archive's source: out is the caller's */
	attn_zf.zip_source_keep(out);
	for (i = 0; i < z->count && st == ATTN_OK; i++)
		st = add_member(zip, &z->members[i], err);
	if (st == ATTN_OK && attn_zf.zip_close(zip) != 0)
		st = zip_failed(err, "write", attn_zf.zip_get_error(zip));
	else if (st == ATTN_OK)
		zip = NULL;
	if (zip != NULL)
		attn_zf.zip_discard(zip);
	for (i = 0; i < z->count && st == ATTN_OK; i++)
		member_drop(&z->members[i]);
	return st;
}

/* out's bytes, to put in pieces. */
static enum attn_status
copy_out(zip_source_t *out, void (*put)(void *arg, const void *bytes,
    size_t n), void *arg, struct attn_error *err)
{
	unsigned char buf[16384];
	zip_int64_t got;

	if (attn_zf.zip_source_open(out) != 0)
		return zip_failed(err, "read back",
		    attn_zf.zip_source_error(out));
	while ((got = attn_zf.zip_source_read(out, buf, sizeof buf)) > 0)
		put(arg, buf, (size_t)got);
	attn_zf.zip_source_close(out);
	if (got < 0)
		return zip_failed(err, "read back",
		    attn_zf.zip_source_error(out));
	return ATTN_OK;
}

enum attn_status
attn_npz_write(struct attn_npz *z, void (*put)(void *arg, const void *bytes,
    size_t n), void *arg, struct attn_error *err)
{
	enum attn_status st;
	zip_source_t *out;
	zip_error_t ze;
	size_t held;
	char doing[64];

	if ((st = attn_zip_load(NULL, "writing", err)) != ATTN_OK)
		return st;
	if (archive_cost(z, &held) != 0 || attn_mem_take(held) != 0) {
		snprintf(doing, sizeof doing, "making a .npz archive of %zu "
		    "arrays", z->count);
		return attn_error_nomem(err, NULL, doing);
	}
	attn_zf.zip_error_init(&ze);
	if ((out = attn_zf.zip_source_buffer_create(NULL, 0, 0, &ze)) ==
	    NULL)
		st = zip_failed(err, "start", &ze);
	attn_zf.zip_error_fini(&ze);
	if (st == ATTN_OK)
		st = make_archive(z, out, err);
	if (st == ATTN_OK)
		st = copy_out(out, put, arg, err);
	if (out != NULL)
		attn_zf.zip_source_free(out);
	attn_mem_give(held);
	return st;
}
