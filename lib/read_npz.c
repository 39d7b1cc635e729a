/*
 * read_npz.c - NumPy's .npz archives (numpy.savez, stored members, and
 * numpy.savez_compressed, deflated ones): a zip of .npy files, one a
 * named array, read with libzip from the bytes in memory (libzip loaded
 * by the first archive, lib/zip_load.h).
 *
 * Each member is unpacked whole into a buffer charged to the memory
 * account, then read by the .npy reader.  Its .npy header is unpacked
 * first and asked what it declares (attn_npy_declared), so that a member
 * whose size, or whose numbers as doubles beside it, pass the limit (a
 * zip bomb), a header at fault, or a shape its size does not keep, is
 * told before its data is inflated.  attn_read_named_declared stops
 * there, at each member's dims, so that a caller (--check) can refuse a
 * member by its shape, or leave it unread, without inflating its data,
 * and attn_npz_read_member reads the one it takes.  A member that is no .npy, a size
 * that its data does not keep, a CRC that does not match, are data
 * errors naming the member.  The error of
 * a member's .npy names the archive as its file and the member and its
 * byte in the message, since an error's file is borrowed and the
 * member's name does not outlive the read.  A JSON object of arrays
 * (attn_read_named) fills the same struct attn_named.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "read_json.h"
#include "zip_load.h"	/* libzip, loaded by the first archive */

int
attn_is_zip(const char *buf, size_t len)
{
	const unsigned char *u = (const unsigned char *)buf;

	return len >= 4 && u[0] == 'P' && u[1] == 'K' && ((u[2] == 3 &&
	    u[3] == 4) || (u[2] == 5 && u[3] == 6));
}

/* The archive opened on buf, or NULL with a data error. */
static zip_t *
npz_open(const char *name, const char *buf, size_t len,
    struct attn_error *err)
{
	zip_error_t ze;
	zip_source_t *src;
	zip_t *z;

	if (attn_zip_load(name, err) != 0)
		return NULL;
	zip_error_init(&ze);
	if ((src = zip_source_buffer_create(buf, len, 0, &ze)) ==
	    NULL) {
		attn_error_set(err, ATTN_ERR_NOMEM, name, 0, 0,
		    "out of memory opening a .npz archive");
		zip_error_fini(&ze);
		return NULL;
	}
	if ((z = zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS,
	    &ze)) == NULL) {
		/* ZIP_CHECKCONS refuses a name twice as ZIP_ER_EXISTS */
		attn_error_set(err, ATTN_ERR_DATA, name, 0, 0, "%s%s",
		    zip_error_code_zip(&ze) == ZIP_ER_EXISTS ?
		    "two members of the archive have the same name: a .npz "
		    "holds each array once, as numpy.savez writes it" :
		    "not a .npz archive libzip can read: ",
		    zip_error_code_zip(&ze) == ZIP_ER_EXISTS ? "" :
		    zip_error_strerror(&ze));
		zip_source_free(src);
	}
	zip_error_fini(&ze);
	return z;
}

/* Whether member name n (of length len) ends in ".npy". */
static int
is_npy_member(const char *n, size_t len)
{
	return len > 4 && attn_word_is(n + len - 4, 4, ".npy");
}

/* "a, b, c": the names of z's arrays (members without ".npy"), escaped,
 * cut with ", .." when out is full. */
static void
member_list(zip_t *z, char *out, size_t size)
{
	zip_int64_t i, n = zip_get_num_entries(z, 0);
	size_t k = 0, len;
	char p[ATTN_PREVIEW_MAX + 4];
	const char *m;

	out[0] = '\0';
	for (i = 0; i < n && k + 8 < size; i++) {
		if ((m = zip_get_name(z, (zip_uint64_t)i, 0)) == NULL)
			continue;
		len = strlen(m);
		if (is_npy_member(m, len))
			len -= 4;
		attn_text_preview(p, ATTN_PREVIEW_MAX, m, len);
		if (k + strlen(p) + 6 >= size) {
			snprintf(out + k, size - k, "%s..", k > 0 ? ", " : "");
			return;
		}
		k += (size_t)snprintf(out + k, size - k, "%s%s", k > 0 ? ", " :
		    "", p);
	}
	if (n == 0)
		snprintf(out, size, "no arrays");
}

enum attn_status
attn_npz_names(const char *name, const char *buf, size_t len, char *out,
    size_t size, struct attn_error *err)
{
	zip_t *z;

	if ((z = npz_open(name, buf, len, err)) == NULL)
		return err != NULL ? err->status : ATTN_ERR_DATA;
	member_list(z, out, size);
	zip_discard(z);
	return ATTN_OK;
}

/* A member's error moved onto the archive: "M.npy, byte N: message". */
static enum attn_status
member_error(struct attn_error *err, const char *name, const char *member,
    enum attn_status st)
{
	char msg[ATTN_MSG_MAX], p[ATTN_PREVIEW_MAX + 4], at[48];

	if (err == NULL)
		return st;
	attn_text_preview(p, ATTN_PREVIEW_MAX, member, strlen(member));
	at[0] = '\0';
	if (err->has_offset)
		snprintf(at, sizeof at, ", byte %zu", err->offset);
	snprintf(msg, sizeof msg, "%s", err->msg);
	return attn_error_set(err, st, name, 0, 0, "%s%s: %s", p, at, msg);
}

/* Why libzip stopped reading f: its words, but for the two that mean
 * the member's bytes are not what the archive says of them. */
static void
read_failure(zip_file_t *f, zip_uint64_t at, zip_uint64_t size, char *why,
    size_t n)
{
	zip_error_t *ze = zip_file_get_error(f);

	switch (zip_error_code_zip(ze)) {
	case ZIP_ER_CRC:
		snprintf(why, n, "its bytes do not match the CRC-32 the "
		    "archive holds for them");
		break;
	case ZIP_ER_INCONS:	/* it ended before its size */
		snprintf(why, n, "%llu bytes where its size says %llu",
		    (unsigned long long)at, (unsigned long long)size);
		break;
	default:
		snprintf(why, n, "%s", zip_error_strerror(ze));
	}
}

/*
 * Member f's bytes from *at up to `to` (of its size) into b, *at moved
 * on; 0, or -1 with why said.  libzip checks a member's CRC-32 and size
 * at its end, on the read that finds the end; when that read returned
 * bytes too, it keeps the error for the next read.  So a member is read
 * to `to` = size, then once more, which must find its end: -1 there is
 * the mismatch, more bytes a member longer than its size.
 */
static int
member_fill(zip_file_t *f, char *b, zip_uint64_t *at, zip_uint64_t to,
    zip_uint64_t size, char *why, size_t n)
{
	zip_int64_t got = 0;
	char past;

	while (*at < to && (got = zip_fread(f, b + *at, to - *at)) >
	    0)
		*at += (zip_uint64_t)got;
	if (*at == size && got >= 0)
		got = zip_fread(f, &past, 1);
	if (got < 0) {
		read_failure(f, *at, size, why, n);
		return -1;
	}
	if (*at < to) {
		snprintf(why, n, "%llu bytes where its size says %llu",
		    (unsigned long long)*at, (unsigned long long)size);
		return -1;
	}
	if (*at == size && got > 0) {
		snprintf(why, n, "more bytes than the %llu its size says",
		    (unsigned long long)size);
		return -1;
	}
	return 0;
}

/* A member being read: its file, its bytes unpacked so far into b (a
 * charged buffer of cap bytes), and what its .npy header declares. */
struct member {
	const char *name, *member;	/* the archive's, the member's */
	char p[ATTN_PREVIEW_MAX + 4];	/* the member's name, escaped */
	zip_file_t *f;
	zip_uint64_t size, at;		/* its size, the bytes in b */
	char *b;
	size_t cap;
	size_t count;			/* the elements its header declares */
	struct attn_array dims;		/* their shape (no data) */
};

static void
member_close(struct member *m)
{
	if (m->f != NULL)
		zip_fclose(m->f);
	attn_mem_free(m->b, m->cap);
	m->f = NULL;
	m->b = NULL;
	m->cap = 0;
}

/* Room in m's buffer for its first `bytes` bytes and a NUL after them
 * (never shrunk). */
static enum attn_status
member_room(struct member *m, zip_uint64_t bytes, struct attn_error *err)
{
	char doing[96];
	void *g;

	if (bytes < m->cap)
		return ATTN_OK;
	if (bytes >= (zip_uint64_t)SIZE_MAX || (g = attn_mem_realloc(m->b,
	    m->cap, (size_t)bytes + 1)) == NULL) {
		snprintf(doing, sizeof doing, "unpacking %s (%llu bytes)", m->p,
		    (unsigned long long)m->size);
		return attn_error_input_nomem(err, m->name, doing);
	}
	m->b = g;
	m->cap = (size_t)bytes + 1;
	return ATTN_OK;
}

/* m's bytes unpacked up to `to`; the member's damage told as a data
 * error. */
static enum attn_status
member_upto(struct member *m, zip_uint64_t to, struct attn_error *err)
{
	char why[128];

	if (member_fill(m->f, m->b, &m->at, to, m->size, why, sizeof why) ==
	    0)
		return ATTN_OK;
	return attn_error_set(err, ATTN_ERR_DATA, m->name, 0, 0, "member %s "
	    "is damaged: %s", m->p, why);
}

/*
 * Member i opened into m and its .npy header unpacked, no further: what
 * it declares in m->count and m->dims, so that a member too large once
 * read, a header at fault, or a shape its size does not keep, is told
 * before its data is inflated, and a reader that wants the header alone
 * never inflates the data.  On failure m holds nothing.
 */
static enum attn_status
member_open(zip_t *z, zip_uint64_t i, const char *name, const char *member,
    unsigned flags, struct member *m, struct attn_error *err)
{
	enum attn_status st = ATTN_OK;
	size_t need = 0;
	zip_stat_t zs;

	memset(m, 0, sizeof *m);
	m->name = name;
	m->member = member;
	attn_text_preview(m->p, ATTN_PREVIEW_MAX, member, strlen(member));
	zip_stat_init(&zs);
	if (zip_stat_index(z, i, 0, &zs) != 0 ||
	    !(zs.valid & ZIP_STAT_SIZE))
		return attn_error_set(err, ATTN_ERR_DATA, name, 0, 0, "member "
		    "%s: its size cannot be read", m->p);
	m->size = zs.size;
	if ((m->f = zip_fopen_index(z, i, 0)) == NULL)
		return attn_error_set(err, ATTN_ERR_DATA, name, 0, 0, "member "
		    "%s cannot be opened: %s", m->p,
		    zip_error_strerror(zip_get_error(z)));
	/* The header: the preamble, then as far as it says (never past
	 * the member's size, which attn_npy_declared holds it to). */
	do {
		if ((st = member_room(m, need, err)) != ATTN_OK ||
		    (st = member_upto(m, need, err)) != ATTN_OK)
			break;
		st = attn_npy_declared(name, m->b, (size_t)m->at,
		    (size_t)m->size, flags, &need, &m->count, &m->dims, err);
		if (st != ATTN_OK)
			st = member_error(err, name, member, st);
	} while (st == ATTN_OK && need != 0);
	if (st != ATTN_OK)
		member_close(m);
	return st;
}

/*
 * Member i, unpacked whole into a charged buffer of *n + 1 bytes, its
 * size and CRC-32 checked.  The doubles its header declares (what
 * attn_read_npy will hold) are charged beside the buffer before the rest
 * is inflated, and given back once the member is read, for the .npy
 * reader to take.
 */
static enum attn_status
member_bytes(zip_t *z, zip_uint64_t i, const char *name, const char *member,
    unsigned flags, char **out, size_t *n, struct attn_error *err)
{
	size_t charge = SIZE_MAX, doubles;
	enum attn_status st;
	struct member m;
	char doing[64];

	if ((st = member_open(z, i, name, member, flags, &m, err)) != ATTN_OK)
		return st;
	if (attn_size_mul(m.count, sizeof(double), &doubles) == 0)
		charge = attn_mem_cost(doubles);
	if (attn_mem_take(charge) != 0) {
		member_close(&m);
		snprintf(doing, sizeof doing, "reading %zu numbers", m.count);
		return member_error(err, name, member,
		    attn_error_input_nomem(err, name, doing));
	}
	if ((st = member_room(&m, m.size, err)) == ATTN_OK)
		st = member_upto(&m, m.size, err);
	attn_mem_give(charge);
	if (st == ATTN_OK) {
		zip_fclose(m.f);
		*out = m.b;
		*n = (size_t)m.size;
		return ATTN_OK;
	}
	member_close(&m);
	return st;
}

void
attn_named_free(struct attn_named *z)
{
	size_t i;

	for (i = 0; i < z->count; i++) {
		attn_mem_free(z->arrays[i].name, strlen(z->arrays[i].name) + 1);
		attn_array_free(&z->arrays[i].array);
	}
	attn_mem_free(z->arrays, z->cap * sizeof *z->arrays);
	memset(z, 0, sizeof *z);
}

/* Room for one more array in out, named key[0..len), zeroed but for its
 * name (not yet counted); NULL when out of memory. */
static struct attn_named_array *
named_push(struct attn_named *out, const char *key, size_t len)
{
	struct attn_named_array *a;

	if (out->count == out->cap) {
		void *g = attn_grow_array(out->arrays, &out->cap,
		    out->count + 1, sizeof *out->arrays);

		if (g == NULL)
			return NULL;
		out->arrays = g;
	}
	a = &out->arrays[out->count];
	memset(a, 0, sizeof *a);
	if ((a->name = attn_str_ndup(key, len)) == NULL)
		return NULL;
	return a;
}

/* Member i of zip (named m) read whole into a, as the .npy reader reads
 * it. */
static enum attn_status
read_data(zip_t *zip, zip_uint64_t i, const char *name, const char *m,
    unsigned flags, struct attn_array *a, struct attn_error *err)
{
	enum attn_status st;
	char *b = NULL;
	size_t n = 0;

	if ((st = member_bytes(zip, i, name, m, flags, &b, &n, err)) !=
	    ATTN_OK)
		return st;
	/* b is freed here: never read in place */
	st = attn_read_npy(name, b, n, flags & ~(unsigned)ATTN_READ_IN_PLACE,
	    a, err);
	attn_mem_free(b, n + 1);
	return st == ATTN_OK ? st : member_error(err, name, m, st);
}

/* Member i of zip into out's next array: read whole, or with `declared`
 * its header alone (its dims, no data). */
static enum attn_status
read_member(zip_t *zip, zip_uint64_t i, const char *name, unsigned flags,
    int declared, struct attn_named *out, struct attn_error *err)
{
	struct attn_named_array *a;
	struct member h;
	const char *m;
	enum attn_status st;
	char p[ATTN_PREVIEW_MAX + 4];
	size_t len;

	if ((m = zip_get_name(zip, i, 0)) == NULL)
		return attn_error_set(err, ATTN_ERR_DATA, name, 0, 0,
		    "member %llu has no name", (unsigned long long)i + 1);
	len = strlen(m);
	if (len > 0 && m[len - 1] == '/')
		return ATTN_OK;		/* a directory */
	attn_text_preview(p, ATTN_PREVIEW_MAX, m, len);
	if (!is_npy_member(m, len))
		return attn_error_set(err, ATTN_ERR_DATA, name, 0, 0, "not a "
		    ".npz archive: member %s is no .npy array (a .npz holds "
		    "NAME.npy members, as numpy.savez writes them; .xlsx, "
		    ".ods and .docx files are zips too)", p);
	if ((a = named_push(out, m, len - 4)) == NULL)
		return attn_error_input_nomem(err, name,
		    "reading a .npz archive");
	a->member = (size_t)i;
	if (!declared)
		st = read_data(zip, i, name, m, flags, &a->array, err);
	else if ((st = member_open(zip, i, name, m, flags, &h, err)) ==
	    ATTN_OK) {
		a->array = h.dims;
		member_close(&h);
	}
	if (st != ATTN_OK) {
		attn_mem_free(a->name, len - 3);
		return st;
	}
	out->count++;
	return ATTN_OK;
}

/* The end of an archive's reading: an archive of no arrays refused, and
 * on failure what was read given back. */
static enum attn_status
named_done(const char *name, enum attn_status st, struct attn_named *out,
    struct attn_error *err)
{
	if (st == ATTN_OK && out->count == 0)
		st = attn_error_set(err, ATTN_ERR_DATA, name, 0, 0, "a .npz "
		    "archive with no arrays");
	if (st != ATTN_OK)
		attn_named_free(out);
	return st;
}

static enum attn_status
read_npz(const char *name, const char *buf, size_t len, unsigned flags,
    int declared, struct attn_named *out, struct attn_error *err)
{
	enum attn_status st = ATTN_OK;
	zip_int64_t i, n;
	zip_t *z;

	memset(out, 0, sizeof *out);
	if (!attn_is_zip(buf, len))
		return attn_error_set(err, ATTN_ERR_DATA, name, 0, 0, "not a "
		    ".npz archive (a zip of .npy files, as numpy.savez "
		    "writes)");
	if ((z = npz_open(name, buf, len, err)) == NULL)
		return err != NULL ? err->status : ATTN_ERR_DATA;
	n = zip_get_num_entries(z, 0);
	for (i = 0; i < n && st == ATTN_OK; i++)
		st = read_member(z, (zip_uint64_t)i, name, flags, declared,
		    out, err);
	zip_discard(z);
	return named_done(name, st, out, err);
}

enum attn_status
attn_read_npz(const char *name, const char *buf, size_t len, unsigned flags,
    struct attn_named *out, struct attn_error *err)
{
	return read_npz(name, buf, len, flags, 0, out, err);
}

enum attn_status
attn_npz_read_member(const char *name, const char *buf, size_t len,
    size_t member, unsigned flags, struct attn_array *out,
    struct attn_error *err)
{
	enum attn_status st;
	const char *m;
	zip_t *z;

	memset(out, 0, sizeof *out);
	if ((z = npz_open(name, buf, len, err)) == NULL)
		return err != NULL ? err->status : ATTN_ERR_DATA;
	if ((m = zip_get_name(z, member, 0)) == NULL)
		st = attn_error_set(err, ATTN_ERR_DATA, name, 0, 0, "member "
		    "%zu has no name", member + 1);
	else
		st = read_data(z, member, name, m, flags, out, err);
	zip_discard(z);
	return st;
}

/* "NAME.npy", the member parts[i] stands for, into buf; 0, or -1 when
 * it does not fit. */
static int
part_member(char *buf, size_t size, const struct attn_npz_part *part)
{
	return snprintf(buf, size, "%s.npy", part->name) < (int)size ? 0 : -1;
}

enum attn_status
attn_parts_declared(const char *name, const struct attn_npz_part *parts,
    size_t n, unsigned flags, struct attn_named *out, struct attn_error *err)
{
	enum attn_status st = ATTN_OK;
	struct attn_named_array *a;
	char m[ATTN_MSG_MAX];
	size_t i, count;

	memset(out, 0, sizeof *out);
	for (i = 0; i < n && st == ATTN_OK; i++) {
		if (part_member(m, sizeof m, &parts[i]) != 0) {
			st = attn_error_set(err, ATTN_ERR_DATA, name, 0, 0,
			    "member %zu: a name longer than a zip holds",
			    i + 1);
			break;
		}
		if ((a = named_push(out, parts[i].name,
		    strlen(parts[i].name))) == NULL) {
			st = attn_error_input_nomem(err, name,
			    "reading a .npz archive");
			break;
		}
		st = attn_npy_parts_declared(name, parts[i].head,
		    parts[i].hlen, parts[i].dlen, flags, &count, &a->array,
		    err);
		if (st != ATTN_OK) {
			st = member_error(err, name, m, st);
			attn_mem_free(a->name, strlen(a->name) + 1);
			break;
		}
		a->member = i;
		out->count++;
	}
	return named_done(name, st, out, err);
}

enum attn_status
attn_parts_read_member(const char *name, const struct attn_npz_part *parts,
    size_t n, size_t member, unsigned flags, struct attn_array *out,
    struct attn_error *err)
{
	enum attn_status st;
	char m[ATTN_MSG_MAX];

	memset(out, 0, sizeof *out);
	if (member >= n || part_member(m, sizeof m, &parts[member]) != 0)
		return attn_error_set(err, ATTN_ERR_DATA, name, 0, 0, "member "
		    "%zu has no name", member + 1);
	st = attn_read_npy_parts(name, parts[member].head, parts[member].hlen,
	    parts[member].data, parts[member].dlen, flags, out, err);
	return st == ATTN_OK ? st : member_error(err, name, m, st);
}

const struct attn_array *
attn_named_find(const struct attn_named *z, const char *array)
{
	size_t i;

	for (i = 0; i < z->count; i++)
		if (strcmp(z->arrays[i].name, array) == 0)
			return &z->arrays[i].array;
	return NULL;
}

/* A JSON object {"NAME": array, ..}: each value an array as the JSON
 * reader reads it, at its own position; a repeated name is an error. */
static enum attn_status
read_object(const char *name, const char *buf, size_t len, unsigned flags,
    struct attn_named *out, struct attn_error *err)
{
	size_t path[ATTN_JSON_PATH_MAX] = { 0 }, m;
	char msg[ATTN_MSG_MAX], p[ATTN_PREVIEW_MAX + 4];
	struct attn_named_array *a;
	struct attn_json js;
	enum attn_status st;
	const cJSON *j;

	if ((st = attn_json_parse(&js, name, buf, len, err)) != ATTN_OK) {
		attn_json_close(&js);
		return st;
	}
	if (!cJSON_IsObject(js.root)) {
		st = attn_json_fail(&js, path, 0, 0, "expected a JSON object "
		    "of arrays named by stage");
		attn_json_close(&js);
		return st;
	}
	for (m = 0, j = js.root->child; j != NULL && st == ATTN_OK; m++,
	    j = j->next) {
		path[0] = m;
		if (attn_named_find(out, j->string) != NULL) {
			snprintf(msg, sizeof msg, "repeated name \"%s\"",
			    attn_json_key_preview(p, j->string));
			st = attn_json_fail(&js, path, 1, 1, msg);
		} else if ((a = named_push(out, j->string,
		    strlen(j->string))) == NULL) {
			st = attn_error_input_nomem(err, name,
			    "reading a JSON object of arrays");
		} else if ((st = attn_json_array(&js, j, path, 1, flags,
		    &a->array)) != ATTN_OK) {
			attn_mem_free(a->name, strlen(a->name) + 1);
			attn_array_free(&a->array);
		} else {
			out->count++;
		}
	}
	attn_json_close(&js);
	if (st == ATTN_OK && out->count == 0)
		st = attn_error_set(err, ATTN_ERR_DATA, name, 0, 0, "an empty "
		    "JSON object: no arrays");
	return st;
}

static enum attn_status
read_named(const char *name, const char *buf, size_t len, unsigned flags,
    int declared, struct attn_named *out, struct attn_error *err)
{
	enum attn_status st;

	if (attn_is_zip(buf, len))
		return read_npz(name, buf, len, flags, declared, out, err);
	memset(out, 0, sizeof *out);
	if ((st = read_object(name, buf, len, flags, out, err)) != ATTN_OK)
		attn_named_free(out);
	return st;
}

enum attn_status
attn_read_named(const char *name, const char *buf, size_t len,
    unsigned flags, struct attn_named *out, struct attn_error *err)
{
	return read_named(name, buf, len, flags, 0, out, err);
}

enum attn_status
attn_read_named_declared(const char *name, const char *buf, size_t len,
    unsigned flags, struct attn_named *out, struct attn_error *err)
{
	return read_named(name, buf, len, flags, 1, out, err);
}
