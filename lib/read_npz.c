/*
 * read_npz.c - NumPy's .npz archives (numpy.savez, stored members, and
 * numpy.savez_compressed, deflated ones): a zip of .npy files, one a
 * named array, read with libzip from the bytes in memory.
 *
 * Each member is unpacked whole into a buffer charged to the memory
 * account (so that a member whose size is past the limit, a zip bomb,
 * is refused before it is inflated), then read by the .npy reader.  A
 * member that is no .npy, a size that its data does not keep, a CRC
 * that does not match, are data errors naming the member.  The error of
 * a member's .npy names the archive as its file and the member and its
 * byte in the message, since an error's file is borrowed and the
 * member's name does not outlive the read.  A JSON object of arrays
 * (attn_read_named) fills the same struct attn_named.
 *
 * libzip is opened (dlopen) by the first archive read, not linked: a
 * run that reads none never maps it, nor the libcrypto, libbz2 and libz
 * it brings, whose loading and relocation took 12% of the CPU time of a
 * whole run at n = 512 (CSV in and out: 43 ms against 37 of the same
 * attn with libzip left out, 30 pairs under farm-bench; issue 23's
 * start-up).  Its soname is the one the build linked against
 * (ATTN_ZIP_SONAME, from the Makefile); its functions are looked up
 * with the types zip.h gives them.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <zip.h>

#include "internal.h"
#include "read_json.h"

#ifndef ATTN_ZIP_SONAME
#error "ATTN_ZIP_SONAME: the soname of libzip, as the Makefile defines it"
#endif

/* The functions of libzip this file calls, each a field of zf. */
#define ZIP_FUNCTIONS(X) \
	X(zip_discard) X(zip_error_fini) X(zip_error_init) \
	X(zip_error_strerror) X(zip_fclose) X(zip_file_get_error) \
	X(zip_fopen_index) X(zip_fread) X(zip_get_error) X(zip_get_name) \
	X(zip_get_num_entries) X(zip_open_from_source) \
	X(zip_source_buffer_create) X(zip_source_free) X(zip_stat_index) \
	X(zip_stat_init)

static struct {
#define ZIP_FIELD(f) __typeof__(f) *f;
	ZIP_FUNCTIONS(ZIP_FIELD)
#undef ZIP_FIELD
} zf;

static pthread_once_t zip_once = PTHREAD_ONCE_INIT;
static int zip_loaded;
static char zip_why[160];	/* why it could not be, when it was not */

static void
zip_load(void)
{
	void *lib = dlopen(ATTN_ZIP_SONAME, RTLD_NOW | RTLD_LOCAL), *sym;
	const char *e;

	if (lib == NULL) {
		e = dlerror();
		snprintf(zip_why, sizeof zip_why, "%s", e ? e : "dlopen failed");
		return;
	}
#define ZIP_LOOKUP(f) \
	if ((sym = dlsym(lib, #f)) == NULL) { \
		snprintf(zip_why, sizeof zip_why, "%s has no %s", \
		    ATTN_ZIP_SONAME, #f); \
		return; \
	} \
	memcpy(&zf.f, &sym, sizeof sym);
	ZIP_FUNCTIONS(ZIP_LOOKUP)
#undef ZIP_LOOKUP
	zip_loaded = 1;	/* the library stays open for the process's life */
}

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

	if (pthread_once(&zip_once, zip_load) != 0 || !zip_loaded) {
		attn_error_set(err, ATTN_ERR_NOMEM, name, 0, 0, "reading a .npz "
		    "archive needs libzip, which could not be loaded: %s",
		    zip_why);
		return NULL;
	}
	zf.zip_error_init(&ze);
	if ((src = zf.zip_source_buffer_create(buf, len, 0, &ze)) == NULL) {
		attn_error_set(err, ATTN_ERR_NOMEM, name, 0, 0,
		    "out of memory opening a .npz archive");
		zf.zip_error_fini(&ze);
		return NULL;
	}
	if ((z = zf.zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS,
	    &ze)) == NULL) {
		attn_error_set(err, ATTN_ERR_DATA, name, 0, 0, "not a .npz "
		    "archive libzip can read: %s", zf.zip_error_strerror(&ze));
		zf.zip_source_free(src);
	}
	zf.zip_error_fini(&ze);
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
	zip_int64_t i, n = zf.zip_get_num_entries(z, 0);
	size_t k = 0, len;
	char p[ATTN_PREVIEW_MAX + 4];
	const char *m;

	out[0] = '\0';
	for (i = 0; i < n && k + 8 < size; i++) {
		if ((m = zf.zip_get_name(z, (zip_uint64_t)i, 0)) == NULL)
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
	zf.zip_discard(z);
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

/* Member i, unpacked into a charged buffer of *n bytes. */
static enum attn_status
member_bytes(zip_t *z, zip_uint64_t i, const char *name, const char *member,
    char **out, size_t *n, struct attn_error *err)
{
	char p[ATTN_PREVIEW_MAX + 4], doing[96];
	zip_stat_t st;
	zip_file_t *f;
	zip_int64_t got;
	char *b;

	attn_text_preview(p, ATTN_PREVIEW_MAX, member, strlen(member));
	zf.zip_stat_init(&st);
	if (zf.zip_stat_index(z, i, 0, &st) != 0 || !(st.valid & ZIP_STAT_SIZE))
		return attn_error_set(err, ATTN_ERR_DATA, name, 0, 0, "member "
		    "%s: its size cannot be read", p);
	if (st.size > (zip_uint64_t)SIZE_MAX - 1 ||
	    (b = attn_mem_alloc((size_t)st.size + 1)) == NULL) {
		snprintf(doing, sizeof doing, "unpacking %s (%llu bytes)", p,
		    (unsigned long long)st.size);
		return attn_error_input_nomem(err, name, doing);
	}
	if ((f = zf.zip_fopen_index(z, i, 0)) == NULL) {
		attn_mem_free(b, (size_t)st.size + 1);
		return attn_error_set(err, ATTN_ERR_DATA, name, 0, 0, "member "
		    "%s cannot be opened: %s", p,
		    zf.zip_error_strerror(zf.zip_get_error(z)));
	}
	/* One byte more than promised: a member longer than its size. */
	got = zf.zip_fread(f, b, st.size + 1);
	if (got < 0 || (zip_uint64_t)got != st.size) {
		char why[128];

		if (got < 0)
			snprintf(why, sizeof why, "%s",
			    zf.zip_error_strerror(zf.zip_file_get_error(f)));
		else
			snprintf(why, sizeof why, "%lld bytes where its size "
			    "says %llu", (long long)got,
			    (unsigned long long)st.size);
		zf.zip_fclose(f);
		attn_mem_free(b, (size_t)st.size + 1);
		return attn_error_set(err, ATTN_ERR_DATA, name, 0, 0, "member "
		    "%s is damaged: %s", p, why);
	}
	zf.zip_fclose(f);
	*out = b;
	*n = (size_t)st.size;
	return ATTN_OK;
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

	if ((m = zf.zip_get_name(zip, i, 0)) == NULL)
		return attn_error_set(err, ATTN_ERR_DATA, name, 0, 0,
		    "member %llu has no name", (unsigned long long)i + 1);
	len = strlen(m);
	if (len > 0 && m[len - 1] == '/')
		return ATTN_OK;		/* a directory */
	attn_text_preview(p, ATTN_PREVIEW_MAX, m, len);
	if (!is_npy_member(m, len))
		return attn_error_set(err, ATTN_ERR_DATA, name, 0, 0, "member "
		    "%s is no .npy array: a .npz holds NAME.npy members, as "
		    "numpy.savez writes them", p);
	if ((a = named_push(out, m, len - 4)) == NULL)
		return attn_error_input_nomem(err, name,
		    "reading a .npz archive");
	if ((st = member_bytes(zip, i, name, m, &b, &n, err)) != ATTN_OK) {
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
	n = zf.zip_get_num_entries(z, 0);
	for (i = 0; i < n && st == ATTN_OK; i++)
		st = read_member(z, (zip_uint64_t)i, name, flags, out, err);
	zf.zip_discard(z);
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
