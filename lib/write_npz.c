/*
 * write_npz.c - a NumPy .npz archive as numpy.savez writes one: a zip of
 * members NAME.npy, stored (not compressed), in the order they were
 * given, put to the caller a piece at a time as they come.
 *
 * The zip is written here, not by libzip (which reads them, read_npz.c):
 * a stored member is a header, its bytes and a line of the central
 * directory (PKWARE's APPNOTE.TXT, 4.3), and libzip can only make it in
 * memory of its own, copying each member's bytes four times on their way
 * out (into a buffer of the member, libzip's 64 KiB fragments, through
 * its 8 KiB buffer, back out to the caller), each copy into pages never
 * touched before: a run writing a large .npz takes less time and memory
 * without them (bench/README.md).  The bytes are those libzip 1.7 writes:
 * version 1.0 (4.5 where ZIP64 is needed), made by UNIX 6.3, mode 0666,
 * no extra fields unless ZIP64's, dated 1980-01-01 00:00, the first date
 * a zip can hold and the one numpy.savez gives (Python's zipfile.open
 * gives a member written through it no other): the same members make
 * the same bytes.
 *
 * The CRC-32 of each member is zlib's (crc32_z), taken before its
 * header is put, so that the bytes are put once and never sought back
 * to.
 *
 * ZIP64.  A size or an offset past 0xFFFFFFFF (z->limit32, which a test
 * lowers) takes ZIP64's extra fields: a member's local header holds both
 * sizes there, its central line those that do not fit; and the central
 * directory past the limit, or more than 0xFFFF members, takes ZIP64's
 * end record and its locator before the end record.
 *
 * Memory.  What is kept of each member, its name and the numbers of its
 * central line, is charged to the account (memory.c); its bytes are the
 * caller's, put as they are.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#include "internal.h"

#define ZIP_LIMIT32 0xFFFFFFFFu
#define ZIP_LIMIT16 0xFFFFu

/* Version 1.0 (stored), 4.5 (ZIP64); made by UNIX (3), version 6.3. */
#define ZIP_NEEDS 10
#define ZIP_NEEDS64 45
#define ZIP_MADE_BY ((3 << 8) | 63)
/* A regular file of mode 0666, in the high half. */
#define ZIP_MODE ((uint32_t)0100666 << 16)
/* zip's DOS date of 1980-01-01: (year - 1980) << 9 | month << 5 | day;
 * the time, 00:00:00, is 0. */
#define ZIP_DATE ((1 << 5) | 1)

#define ZIP_LOCAL 30		/* a local header, its fixed part */
#define ZIP_CENTRAL 46		/* a central line */
#define ZIP_END 22		/* the end record */
#define ZIP_END64 56		/* ZIP64's end record */
#define ZIP_LOCATOR 20		/* and its locator */
#define ZIP_EXTRA64 28		/* ZIP64's extra field, at most */

/* Little-endian n-byte v at b; b past it. */
static unsigned char *
le(unsigned char *b, uint64_t v, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++)
		b[k] = (unsigned char)(v >> (8 * k));
	return b + n;
}

/* v as a 32-bit field: itself, or 0xFFFFFFFF when ZIP64 holds it. */
static uint64_t
field32(const struct attn_npz *z, uint64_t v)
{
	return v > z->limit32 ? ZIP_LIMIT32 : v;
}

static void
put(struct attn_npz *z, const void *bytes, size_t n)
{
	z->put(z->arg, bytes, n);
	z->at += n;
}

void
attn_npz_start(struct attn_npz *z, void (*put_fn)(void *arg,
    const void *bytes, size_t n), void *arg)
{
	memset(z, 0, sizeof *z);
	z->put = put_fn;
	z->arg = arg;
	z->limit32 = ZIP_LIMIT32;
}

/* The CRC-32 of the n pieces. */
static uint32_t
pieces_crc(const struct attn_npz_piece *pc, size_t n)
{
	unsigned long crc = crc32_z(0, NULL, 0);
	size_t k;

	for (k = 0; k < n; k++)
		crc = crc32_z(crc, pc[k].bytes, pc[k].len);
	return (uint32_t)crc;
}

/* ZIP64's extra field of e at b (local: both sizes; central: the
 * fields that do not fit, in APPNOTE's order): its length, 0 when none
 * is needed. */
static size_t
extra64(const struct attn_npz *z, const struct attn_npz_member *e,
    int local, unsigned char *b)
{
	unsigned char *p = b + 4;
	int big = e->size > z->limit32;

	if (local && !big)
		return 0;
	if (big)
		p = le(le(p, e->size, 8), e->size, 8);
	if (!local && e->offset > z->limit32)
		p = le(p, e->offset, 8);
	if (p == b + 4)
		return 0;
	le(le(b, 1, 2), (uint64_t)(p - b - 4), 2);
	return (size_t)(p - b);
}

/* The fields a local header and a central line share, from `version
 * needed` to the name's and the extra field's lengths, at b. */
static unsigned char *
common(const struct attn_npz *z, const struct attn_npz_member *e,
    size_t extra, unsigned char *b)
{
	b = le(b, extra > 0 ? ZIP_NEEDS64 : ZIP_NEEDS, 2);
	b = le(b, 0, 2);		/* flags */
	b = le(b, 0, 2);		/* stored */
	b = le(b, 0, 2);		/* 00:00:00 */
	b = le(b, ZIP_DATE, 2);
	b = le(b, e->crc, 4);
	b = le(b, field32(z, e->size), 4);
	b = le(b, field32(z, e->size), 4);
	b = le(b, e->name_len, 2);
	return le(b, extra, 2);
}

enum attn_status
attn_npz_member(struct attn_npz *z, const char *name,
    const struct attn_npz_piece *pieces, size_t n, struct attn_error *err)
{
	unsigned char head[ZIP_LOCAL], extra[ZIP_EXTRA64];
	struct attn_npz_member *e;
	size_t len = strlen(name), k, x;
	char doing[96];

	snprintf(doing, sizeof doing, "adding %.40s.npy to a .npz archive",
	    name);
	if (len > ZIP_LIMIT16 - 4)
		return attn_error_set(err, ATTN_ERR_DATA, NULL, 0, 0, "%s: "
		    "a name of %zu bytes is more than a zip holds", doing,
		    len);
	if (z->count == z->cap) {
		void *g = attn_grow_array(z->members, &z->cap, z->count + 1,
		    sizeof *z->members);

		if (g == NULL)
			return attn_error_nomem(err, NULL, doing);
		z->members = g;
	}
	e = &z->members[z->count];
	memset(e, 0, sizeof *e);
	if ((e->name = attn_mem_alloc(len + 5)) == NULL)
		return attn_error_nomem(err, NULL, doing);
	memcpy(e->name, name, len);
	memcpy(e->name + len, ".npy", 5);
	e->name_len = len + 4;
	z->count++;
	for (k = 0; k < n; k++)
		e->size += pieces[k].len;
	e->crc = pieces_crc(pieces, n);
	e->offset = z->at;
	x = extra64(z, e, 1, extra);
	le(head, 0x04034b50, 4);
	common(z, e, x, head + 4);
	put(z, head, ZIP_LOCAL);
	put(z, e->name, e->name_len);
	put(z, extra, x);
	for (k = 0; k < n; k++)
		put(z, pieces[k].bytes, pieces[k].len);
	return ATTN_OK;
}

/* ZIP64's end record and its locator, for a central directory of size
 * bytes from `from` on. */
static void
end64(struct attn_npz *z, uint64_t from, uint64_t size)
{
	unsigned char b[ZIP_END64 + ZIP_LOCATOR], *p = b;
	uint64_t at = z->at;

	p = le(p, 0x06064b50, 4);
	p = le(p, ZIP_END64 - 12, 8);	/* the record past this field */
	p = le(p, ZIP_MADE_BY, 2);
	p = le(p, ZIP_NEEDS64, 2);
	p = le(p, 0, 4);		/* this disk */
	p = le(p, 0, 4);		/* the central directory's */
	p = le(p, z->count, 8);		/* members on this disk */
	p = le(p, z->count, 8);		/* in all */
	p = le(p, size, 8);
	p = le(p, from, 8);
	p = le(p, 0x07064b50, 4);
	p = le(p, 0, 4);		/* the disk of the record */
	p = le(p, at, 8);
	le(p, 1, 4);			/* disks */
	put(z, b, sizeof b);
}

void
attn_npz_finish(struct attn_npz *z)
{
	unsigned char b[ZIP_CENTRAL + ZIP_EXTRA64], *p;
	const struct attn_npz_member *e;
	uint64_t from = z->at, size;
	size_t i, x, count;

	for (i = 0; i < z->count; i++) {
		e = &z->members[i];
		x = extra64(z, e, 0, b + ZIP_CENTRAL);
		p = le(b, 0x02014b50, 4);
		p = le(p, ZIP_MADE_BY, 2);
		p = common(z, e, x, p);
		p = le(p, 0, 2);	/* no comment */
		p = le(p, 0, 2);	/* disk 0 */
		p = le(p, 0, 2);	/* binary */
		p = le(p, ZIP_MODE, 4);
		le(p, field32(z, e->offset), 4);
		put(z, b, ZIP_CENTRAL);
		put(z, e->name, e->name_len);
		put(z, b + ZIP_CENTRAL, x);
	}
	size = z->at - from;
	count = z->count;
	if (count > ZIP_LIMIT16 || size > z->limit32 || from > z->limit32) {
		end64(z, from, size);
		if (count > ZIP_LIMIT16)
			count = ZIP_LIMIT16;
	}
	p = le(b, 0x06054b50, 4);
	p = le(p, 0, 2);		/* this disk */
	p = le(p, 0, 2);		/* the central directory's */
	p = le(p, count, 2);
	p = le(p, count, 2);
	p = le(p, field32(z, size), 4);
	p = le(p, field32(z, from), 4);
	le(p, 0, 2);			/* no comment */
	put(z, b, ZIP_END);
}

void
attn_npz_free(struct attn_npz *z)
{
	size_t i;

	for (i = 0; i < z->count; i++)
		attn_mem_free(z->members[i].name, z->members[i].name_len + 1);
	attn_mem_free(z->members, z->cap * sizeof *z->members);
	memset(z, 0, sizeof *z);
}
