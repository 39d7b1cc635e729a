/*
 * read_npz.c - NumPy's .npz archives (numpy.savez, stored members, and
 * numpy.savez_compressed, deflated ones): a zip of .npy files, one a
 * named array, read with libzip from the bytes in memory.
 *
 * Each member is unpacked whole into a buffer charged to the memory
 * account, then read by the .npy reader.  Its .npy header is unpacked
 * first and asked what it declares (attn_npy_declared), so that a member
 * whose size, or whose numbers as doubles beside it, pass the limit (a
 * zip bomb), a header at fault, or a shape its size does not keep, is
 * told before its data is inflated.  A member that is no .npy, a size
 * that its data does not keep, a CRC that does not match, are data
 * errors naming the member.  The error of
 * a member's .npy names the archive as its file and the member and its
 * byte in the message, since an error's file is borrowed and the
 * member's name does not outlive the read.  A JSON object of arrays
 * (attn_read_named) fills the same struct attn_named.
 *
 * libzip is opened by the first archive read or written (zip_load.c),
 * not linked.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "read_json.h"
#include "zip_load.h"

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

	if (attn_zip_load(name, "reading", err) != ATTN_OK)
		return NULL;
	attn_zf.zip_error_init(&ze);
	if ((src = attn_zf.zip_source_buffer_create(buf, len, 0, &ze)) ==
	    NULL) {
		attn_error_set(err, ATTN_ERR_NOMEM, name, 0, 0,
		    "out of memory opening a .npz archive");
		attn_zf.zip_error_fini(&ze);
		return NULL;
	}
	if ((z = attn_zf.zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS,
	    &ze)) == NULL) {
		/* ZIP_CHECKCONS refuses a name twice as ZIP_ER_EXISTS */
		attn_error_set(err, ATTN_ERR_DATA, name, 0, 0, "%s%s",
		    attn_zf.zip_error_code_zip(&ze) == ZIP_ER_EXISTS ?
		    "two members of the archive have the same name: a .npz "
		    "holds each array once, as numpy.savez writes it" :
		    "not a .npz archive libzip can read: ",
		    attn_zf.zip_error_code_zip(&ze) == ZIP_ER_EXISTS ? "" :
		    attn_zf.zip_error_strerror(&ze));
		attn_zf.zip_source_free(src);
	}
	attn_zf.zip_error_fini(&ze);
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
	zip_int64_t i, n = attn_zf.zip_get_num_entries(z, 0);
	size_t k = 0, len;
	char p[ATTN_PREVIEW_MAX + 4];
	const char *m;

	out[0] = '\0';
	for (i = 0; i < n && k + 8 < size; i++) {
		if ((m = attn_zf.zip_get_name(z, (zip_uint64_t)i, 0)) == NULL)
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
	attn_zf.zip_discard(z);
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
	zip_error_t *ze = attn_zf.zip_file_get_error(f);

	switch (attn_zf.zip_error_code_zip(ze)) {
	case ZIP_ER_CRC:
		snprintf(why, n, "its bytes do not match the CRC-32 the "
		    "archive holds for them");
		break;
	case ZIP_ER_INCONS:	/* it ended before its size */
		snprintf(why, n, "%llu bytes where its size says %llu",
		    (unsigned long long)at, (unsigned long long)size);
		break;
	default:
		snprintf(why, n, "%s", attn_zf.zip_error_strerror(ze));
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

	while (*at < to && (got = attn_zf.zip_fread(f, b + *at, to - *at)) >
	    0)
		*at += (zip_uint64_t)got;
	if (*at == size && got >= 0)
		got = attn_zf.zip_fread(f, &past, 1);
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

/*
 * Member i, unpacked into a charged buffer of *n bytes, its size and
 * CRC-32 checked.  Its .npy header comes first: the doubles its shape
 * declares (what attn_read_npy will hold) are charged beside the buffer
 * before the rest is inflated, so that a member too large once read,
 * a header at fault, or a shape its size does not keep, is told before
 * its data is inflated.  That charge is given back once the member is
 * read, for the .npy reader to take.
 */
static enum attn_status
member_bytes(zip_t *z, zip_uint64_t i, const char *name, const char *member,
    unsigned flags, char **out, size_t *n, struct attn_error *err)
{
	char p[ATTN_PREVIEW_MAX + 4], doing[96], why[128];
	size_t need = 0, count = 0, charge = SIZE_MAX, doubles;
	enum attn_status st = ATTN_OK;
	zip_uint64_t at = 0;
	zip_stat_t zs;
	zip_file_t *f;
	char *b;

	attn_text_preview(p, ATTN_PREVIEW_MAX, member, strlen(member));
	attn_zf.zip_stat_init(&zs);
	if (attn_zf.zip_stat_index(z, i, 0, &zs) != 0 ||
	    !(zs.valid & ZIP_STAT_SIZE))
		return attn_error_set(err, ATTN_ERR_DATA, name, 0, 0, "member "
		    "%s: its size cannot be read", p);
	if (zs.size > (zip_uint64_t)SIZE_MAX - 1 ||
	    (b = attn_mem_alloc((size_t)zs.size + 1)) == NULL) {
		snprintf(doing, sizeof doing, "unpacking %s (%llu bytes)", p,
		    (unsigned long long)zs.size);
		return attn_error_input_nomem(err, name, doing);
	}
	if ((f = attn_zf.zip_fopen_index(z, i, 0)) == NULL) {
		attn_mem_free(b, (size_t)zs.size + 1);
		return attn_error_set(err, ATTN_ERR_DATA, name, 0, 0, "member "
		    "%s cannot be opened: %s", p,
		    attn_zf.zip_error_strerror(attn_zf.zip_get_error(z)));
	}
	/* The header: the preamble, then as far as it says. */
	do {
		if (member_fill(f, b, &at, need, zs.size, why, sizeof why) != 0)
			goto damaged;
		st = attn_npy_declared(name, b, (size_t)at, (size_t)zs.size,
		    flags, &need, &count, err);
	} while (st == ATTN_OK && need != 0);
	if (st != ATTN_OK) {
		attn_zf.zip_fclose(f);
		attn_mem_free(b, (size_t)zs.size + 1);
		return member_error(err, name, member, st);
	}
	if (attn_size_mul(count, sizeof(double), &doubles) == 0)
		charge = attn_mem_cost(doubles);
	if (attn_mem_take(charge) != 0) {
		attn_zf.zip_fclose(f);
		attn_mem_free(b, (size_t)zs.size + 1);
		snprintf(doing, sizeof doing, "reading %zu numbers", count);
		return member_error(err, name, member,
		    attn_error_input_nomem(err, name, doing));
	}
	if (member_fill(f, b, &at, zs.size, zs.size, why, sizeof why) != 0) {
		attn_mem_give(charge);
		goto damaged;
	}
	attn_mem_give(charge);
	attn_zf.zip_fclose(f);
	*out = b;
	*n = (size_t)zs.size;
	return ATTN_OK;
damaged:
	attn_zf.zip_fclose(f);
	attn_mem_free(b, (size_t)zs.size + 1);
	return attn_error_set(err, ATTN_ERR_DATA, name, 0, 0, "member %s is "
	    "damaged: %s", p, why);
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

/* Member i of zip into out's next array. */
static enum attn_status
read_member(zip_t *zip, zip_uint64_t i, const char *name, unsigned flags,
    struct attn_named *out, struct attn_error *err)
{
	struct attn_named_array *a;
	const char *m;
	enum attn_status st;
	char p[ATTN_PREVIEW_MAX + 4], *b = NULL;
	size_t len, n = 0;

	if ((m = attn_zf.zip_get_name(zip, i, 0)) == NULL)
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
	if ((st = member_bytes(zip, i, name, m, flags, &b, &n, err)) !=
	    ATTN_OK) {
		attn_mem_free(a->name, len - 3);
		return st;
	}
	st = attn_read_npy(name, b, n, flags, &a->array, err);
	attn_mem_free(b, n + 1);
	if (st != ATTN_OK) {
		attn_mem_free(a->name, len - 3);
		return member_error(err, name, m, st);
	}
	out->count++;
	return ATTN_OK;
}

enum attn_status
attn_read_npz(const char *name, const char *buf, size_t len, unsigned flags,
    struct attn_named *out, struct attn_error *err)
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
	n = attn_zf.zip_get_num_entries(z, 0);
	for (i = 0; i < n && st == ATTN_OK; i++)
		st = read_member(z, (zip_uint64_t)i, name, flags, out, err);
	attn_zf.zip_discard(z);
	if (st == ATTN_OK && out->count == 0)
		st = attn_error_set(err, ATTN_ERR_DATA, name, 0, 0, "a .npz "
		    "archive with no arrays");
	if (st != ATTN_OK)
		attn_named_free(out);
	return st;
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

enum attn_status
attn_read_named(const char *name, const char *buf, size_t len,
    unsigned flags, struct attn_named *out, struct attn_error *err)
{
	enum attn_status st;

	if (attn_is_zip(buf, len))
		return attn_read_npz(name, buf, len, flags, out, err);
	memset(out, 0, sizeof *out);
	if ((st = read_object(name, buf, len, flags, out, err)) != ATTN_OK)
		attn_named_free(out);
	return st;
}
