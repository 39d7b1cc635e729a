/*
 * fuzz_npz.c - libFuzzer harness for the .npz reader: archives in memory,
 * through libzip, into the .npy reader, as --check FILE reads them
 * (attn_read_named) and as --proj LAYER.npz does (attn_read_layer).
 *
 * Input: byte 0 chooses the reader flags (bits 0-1: none, finite, bool,
 * both) and what the rest is (bit 2):
 *
 *   0  an archive, read as it is: by attn_read_named (twice),
 *      attn_npz_names and attn_read_layer;
 *   1  the members of an archive that attn's own writer (attn_npz_*,
 *      what -f npz writes) then makes: segments separated by "\n%%\n",
 *      each a byte that names the member (member_names) and the bytes of
 *      its .npy file; with bit 3 the writer takes ZIP64's fields from the
 *      first byte on (its limit32 lowered), as it does past 4 GiB.
 *
 * Besides what fuzz_check.h asserts of every reader: a read gives back
 * all the memory it charged, fails leaving no arrays, and the same bytes
 * read twice give the same arrays.  An archive that reads has a list of
 * names too.  A layer that reads holds W_Q, W_K and W_V as matrices.
 *
 * An archive attn wrote is one libzip reads, whatever its members hold:
 * reading it is reading each member's bytes as a .npy (attn_read_array),
 * the same arrays under the members' names, or the error of the first
 * member that fails, named in the message.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "attn_io.h"
#include "attn_private.h"
#include "fuzz_check.h"

#define FUZZ_NAME "fuzz.npz"
#define FUZZ_SEP "\n%%\n"
#define MAX_MEMBERS 8
/* A member may say any size: 64 MiB at most, as the CLI's limit would
 * refuse more. */
#define FUZZ_MEMORY ((size_t)64 << 20)

static const unsigned flag_choice[4] = {
	0, ATTN_READ_FINITE, ATTN_READ_BOOL, ATTN_READ_FINITE | ATTN_READ_BOOL
};

/* What a member of a built archive is called: the stages --check looks
 * for, their aliases, the arrays of a layer, and names it must refuse
 * or report as not checked. */
static const char *const member_names[] = {
	"out", "softmax_lse", "dq", "dk", "dv", "weights", "output", "lse",
	"W_Q", "W_K", "W_V", "W_O", "b_Q", "b_O", "sub/dir", "x.npy",
};
#define NNAMES (sizeof member_names / sizeof member_names[0])

/* The same names and arrays, in the same order. */
static int
same_named(const struct attn_named *a, const struct attn_named *b)
{
	size_t i;

	if (a->count != b->count)
		return 0;
	for (i = 0; i < a->count; i++)
		if (strcmp(a->arrays[i].name, b->arrays[i].name) != 0 ||
		    !fuzz_same_array(&a->arrays[i].array, &b->arrays[i].array))
			return 0;
	return 1;
}

/* An account of its own for each read, which must end empty. */
static struct attn_memory *
account_open(struct attn_memory **prev)
{
	struct attn_memory *m = attn_memory_new(FUZZ_MEMORY, "fuzz");

	if (m == NULL)
		abort();
	*prev = attn_memory_use(m);
	return m;
}

static void
account_close(struct attn_memory *m, struct attn_memory *prev,
    const char *what)
{
	if (attn_memory_held(m) != 0)
		fuzz_fail(what, NULL);
	attn_memory_use(prev);
	attn_memory_free(m);
}

/* attn_read_named on buf[0..len): checked, and left in *z (count 0 on
 * failure). */
static enum attn_status
read_checked(const char *buf, size_t len, unsigned flags,
    struct attn_named *z, struct attn_error *err)
{
	enum attn_status st;
	size_t i;

	memset(err, 0, sizeof *err);
	st = attn_read_named(FUZZ_NAME, buf, len, flags, z, err);
	if (st != ATTN_OK) {
		fuzz_check_error(st, err, FUZZ_NAME, buf, len);
		if (z->arrays != NULL || z->count != 0)
			fuzz_fail("a failed .npz read left arrays behind", err);
		return st;
	}
	if (z->count == 0)
		fuzz_fail("a .npz read without arrays", NULL);
	for (i = 0; i < z->count; i++) {
		if (z->arrays[i].name == NULL)
			fuzz_fail("an array without a name", NULL);
		fuzz_check_array(&z->arrays[i].array, flags, SIZE_MAX);
	}
	return st;
}

/* An archive as it is. */
static void
fuzz_archive(const char *buf, size_t len, unsigned flags)
{
	struct attn_memory *prev, *m = account_open(&prev);
	struct attn_named z, z2;
	struct attn_error err;
	struct attn_layer l;
	enum attn_status st;
	char names[256];

	if (read_checked(buf, len, flags, &z, &err) == ATTN_OK) {
		if (!attn_is_zip(buf, len))
			fuzz_fail("a JSON object read by the .npz harness",
			    NULL);
		memset(&err, 0, sizeof err);
		if (attn_read_named(FUZZ_NAME, buf, len, flags, &z2, &err) !=
		    ATTN_OK)
			fuzz_fail("a second read of the same bytes failed",
			    &err);
		if (!same_named(&z, &z2))
			fuzz_fail("a second read gave other arrays", NULL);
		attn_named_free(&z2);
		memset(&err, 0, sizeof err);
		if (attn_npz_names(FUZZ_NAME, buf, len, names, sizeof names,
		    &err) != ATTN_OK || names[0] == '\0' ||
		    strlen(names) >= sizeof names)
			fuzz_fail("no list of names for an archive that reads",
			    &err);
		attn_named_free(&z);
	}
	account_close(m, prev, "a .npz read did not give back its memory");

	m = account_open(&prev);
	memset(&err, 0, sizeof err);
	st = attn_read_layer(FUZZ_NAME, buf, len, &l, &err);
	if (st != ATTN_OK) {
		fuzz_check_error(st, &err, FUZZ_NAME, buf, len);
	} else {
		if (l.w_q.ndim != 2 || l.w_k.ndim != 2 || l.w_v.ndim != 2)
			fuzz_fail("a layer read without W_Q, W_K and W_V as "
			    "matrices", NULL);
		fuzz_check_array(&l.w_q, ATTN_READ_FINITE, SIZE_MAX);
		fuzz_check_array(&l.w_k, ATTN_READ_FINITE, SIZE_MAX);
		fuzz_check_array(&l.w_v, ATTN_READ_FINITE, SIZE_MAX);
		attn_layer_free(&l);
	}
	account_close(m, prev, "a .npz layer read did not give back its "
	    "memory");
}

/* The bytes attn's writer puts, gathered. */
struct sink {
	char *buf;
	size_t len, cap;
};

static void
sink_put(void *arg, const void *bytes, size_t n)
{
	struct sink *s = arg;

	if (s->len + n > s->cap) {
		size_t cap = 2 * (s->len + n);
		char *b = realloc(s->buf, cap);

		if (b == NULL)
			abort();
		s->buf = b;
		s->cap = cap;
	}
	memcpy(s->buf + s->len, bytes, n);
	s->len += n;
}

/* A member: its name and the bytes of its .npy. */
struct member {
	const char *name;
	const char *npy;
	size_t len;
};

/* Split data[0..size) at FUZZ_SEP into at most MAX_MEMBERS members,
 * each a name byte and its .npy; returns how many. */
static size_t
split_members(const char *data, size_t size, struct member *mb)
{
	const size_t sl = sizeof FUZZ_SEP - 1;
	size_t n = 0, i = 0, end;

	while (i < size && n < MAX_MEMBERS) {
		for (end = i; end + sl <= size; end++)
			if (memcmp(data + end, FUZZ_SEP, sl) == 0)
				break;
		if (end + sl > size)
			end = size;
		/* an empty segment: the first name, no bytes */
		mb[n].name = member_names[end > i ?
		    (unsigned char)data[i] % NNAMES : 0];
		mb[n].npy = data + (end > i ? i + 1 : i);
		mb[n].len = end > i ? end - i - 1 : 0;
		n++;
		i = end + sl;
	}
	return n;
}

/*
 * Members written into an archive by attn_npz_*, then read: the arrays
 * must be what attn_read_array makes of each member's bytes, or the
 * error that of the first member that fails, naming it.
 */
static void
fuzz_written(const char *data, size_t size, unsigned flags, int zip64)
{
	struct member mb[MAX_MEMBERS];
	struct attn_memory *prev, *m = account_open(&prev);
	struct attn_npz_piece pc;
	struct attn_array a;
	struct attn_named z;
	struct attn_error err, e2;
	struct attn_npz w;
	struct sink s = { NULL, 0, 0 };
	enum attn_status st, st2 = ATTN_OK;
	size_t n, i, j, fail = 0;
	int dup = 0;

	n = split_members(data, size, mb);
	attn_npz_start(&w, sink_put, &s);
	if (zip64)
		w.limit32 = 0;
	for (i = 0; i < n; i++) {
		pc.bytes = mb[i].npy;
		pc.len = mb[i].len;
		memset(&err, 0, sizeof err);
		if (attn_npz_member(&w, mb[i].name, &pc, 1, &err) != ATTN_OK)
			fuzz_fail("attn_npz_member failed", &err);
	}
	attn_npz_finish(&w);
	attn_npz_free(&w);

	/* The first member whose .npy fails, and its error. */
	for (i = 0; i < n && st2 == ATTN_OK; i++) {
		memset(&e2, 0, sizeof e2);
		st2 = attn_read_array(mb[i].name, mb[i].npy, mb[i].len,
		    ATTN_FMT_NPY, flags, &a, &e2);
		if (st2 == ATTN_OK)
			attn_array_free(&a);
		else
			fail = i;
	}
	/* Two members of one name: libzip refuses the archive (its names
	 * are looked up by name), so only a clean error or arrays are asked
	 * of it. */
	for (i = 0; i < n; i++)
		for (j = 0; j < i; j++)
			if (mb[i].name == mb[j].name)
				dup = 1;
	st = read_checked(s.buf, s.len, flags, &z, &err);
	if (dup || n == 0) {
		if (st == ATTN_OK)
			attn_named_free(&z);
	} else if (st2 != ATTN_OK) {
		char p[64];

		if (st != st2)
			fuzz_fail("a written archive failed otherwise than its "
			    "member's .npy", &err);
		snprintf(p, sizeof p, "%s.npy", mb[fail].name);
		if (strncmp(err.msg, p, strlen(p)) != 0)
			fuzz_fail("a member's error does not name it", &err);
	} else {
		if (st != ATTN_OK)
			fuzz_fail("an archive attn wrote of good members "
			    "failed", &err);
		if (z.count != n)
			fuzz_fail("not every member was read", NULL);
		for (i = 0; i < n; i++) {
			memset(&e2, 0, sizeof e2);
			if (attn_read_array(mb[i].name, mb[i].npy, mb[i].len,
			    ATTN_FMT_NPY, flags, &a, &e2) != ATTN_OK)
				fuzz_fail("a .npy read twice failed", &e2);
			if (strcmp(z.arrays[i].name, mb[i].name) != 0 ||
			    !fuzz_same_array(&z.arrays[i].array, &a))
				fuzz_fail("a member read from the archive "
				    "differs from its .npy read alone", NULL);
			attn_array_free(&a);
		}
		attn_named_free(&z);
	}
	free(s.buf);
	account_close(m, prev, "a written .npz read did not give back its "
	    "memory");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned flags;

	if (size < 1 || size > 4096)
		return 0;
	flags = flag_choice[data[0] & 3];
	if (data[0] & 4)
		fuzz_written((const char *)data + 1, size - 1, flags,
		    (data[0] & 8) != 0);
	else
		fuzz_archive((const char *)data + 1, size - 1, flags);
	return 0;
}
