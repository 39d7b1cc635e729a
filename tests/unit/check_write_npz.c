/*
 * check_write_npz.c - .npz archives written (lib/write_npz.c): members
 * stored in the order added, dated 1980-01-01 as numpy.savez dates them,
 * each member's bytes in the archive exactly as given, the same bytes
 * from the same members, read back by name (lib/read_npz.c); and what
 * is charged to the memory account, members and libzip's archive, given
 * back whole, on success and when the limit refuses a member or the
 * archive.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "suites.h"
#include "testutil.h"

/* The bytes attn_npz_write hands over, collected. */
struct sink {
	unsigned char *b;
	size_t len;
};

static void
sink_put(void *arg, const void *bytes, size_t n)
{
	struct sink *s = arg;

	s->b = realloc(s->b, s->len + n);
	ck_assert_ptr_nonnull(s->b);
	memcpy(s->b + s->len, bytes, n);
	s->len += n;
}

/* A 1-D .npy of the n (at most 8) doubles at x, little-endian, its
 * header padded to 128 bytes as numpy.save pads it; its length. */
static size_t
npy_of(unsigned char *b, const double *x, size_t n)
{
	char dict[80];
	size_t i, k, len;
	uint64_t u;

	len = (size_t)snprintf(dict, sizeof dict, "{'descr': '<f8', "
	    "'fortran_order': False, 'shape': (%zu,), }", n);
	memcpy(b, "\x93NUMPY\x01\x00", 8);
	b[8] = 118;
	b[9] = 0;
	memset(b + 10, ' ', 118);
	memcpy(b + 10, dict, len);
	b[127] = '\n';
	for (i = 0; i < n; i++) {
		memcpy(&u, &x[i], 8);
		for (k = 0; k < 8; k++)
			b[128 + 8 * i + k] = (unsigned char)(u >> (8 * k));
	}
	return 128 + 8 * n;
}

static const double grad_q[] = { 1.5, -2, 0.25, 1e-300 };
static const double lse[] = { -0.5, 3 };

/* z with members grad_q and lse, in that order; their .npy bytes in
 * npy[0] and npy[1]. */
static void
two_members(struct attn_npz *z, unsigned char npy[2][192], size_t len[2])
{
	struct attn_error err;
	unsigned char *b;

	memset(z, 0, sizeof *z);
	len[0] = npy_of(npy[0], grad_q, 4);
	len[1] = npy_of(npy[1], lse, 2);
	ck_assert_ptr_nonnull(b = attn_npz_add(z, "grad_q", len[0], &err));
	memcpy(b, npy[0], len[0]);
	ck_assert_ptr_nonnull(b = attn_npz_add(z, "lse", len[1], &err));
	memcpy(b, npy[1], len[1]);
}

/* Little-endian 16 bits at b. */
static unsigned
le16(const unsigned char *b)
{
	return (unsigned)b[0] | (unsigned)b[1] << 8;
}

START_TEST(members_stored_in_order_read_back_by_name)
{
	struct attn_memory *m = attn_memory_new(SIZE_MAX, "TEST_LIMIT");
	unsigned char npy[2][192], *at;
	struct sink s = { 0 }, again = { 0 };
	const struct attn_array *a;
	struct attn_named named;
	struct attn_error err;
	struct attn_npz z;
	size_t len[2], i, k;

	attn_memory_use(m);
	two_members(&z, npy, len);
	ck_assert_int_eq(attn_npz_write(&z, sink_put, &s, &err), ATTN_OK);
	for (i = 0; i < z.count; i++)	/* given back once in the archive */
		ck_assert_ptr_null(z.members[i].bytes);
	attn_npz_free(&z);
	ck_assert_uint_eq(attn_memory_held(m), 0);
	/* each local header: stored (method 0), 00:00 on 1980-01-01, the
	 * member's bytes as given after its name and extra field */
	for (at = s.b, k = 0; k < 2; k++) {
		ck_assert(memcmp(at, "PK\x03\x04", 4) == 0);
		ck_assert_uint_eq(le16(at + 8), 0);
		ck_assert_uint_eq(le16(at + 10), 0);
		ck_assert_uint_eq(le16(at + 12), (1 << 5) | 1);
		ck_assert(memcmp(at + 30, k == 0 ? "grad_q.npy" : "lse.npy",
		    le16(at + 26)) == 0);
		at += 30 + le16(at + 26) + le16(at + 28);
		ck_assert(memcmp(at, npy[k], len[k]) == 0);
		at += len[k];
	}
	/* the same members, the same bytes */
	two_members(&z, npy, len);
	ck_assert_int_eq(attn_npz_write(&z, sink_put, &again, &err), ATTN_OK);
	attn_npz_free(&z);
	ck_assert_uint_eq(again.len, s.len);
	ck_assert(memcmp(again.b, s.b, s.len) == 0);
	ck_assert_int_eq(attn_read_named("w.npz", (const char *)s.b, s.len, 0,
	    &named, &err), ATTN_OK);
	ck_assert_uint_eq(named.count, 2);
	ck_assert_str_eq(named.arrays[0].name, "grad_q");
	ck_assert_str_eq(named.arrays[1].name, "lse");
	ck_assert_ptr_nonnull(a = attn_named_find(&named, "grad_q"));
	for (i = 0; i < 4; i++)
		ck_assert(a->data[i] == grad_q[i]);
	ck_assert_ptr_nonnull(a = attn_named_find(&named, "lse"));
	for (i = 0; i < 2; i++)
		ck_assert(a->data[i] == lse[i]);
	attn_named_free(&named);
	ck_assert_uint_eq(attn_memory_held(m), 0);
	free(s.b);
	free(again.b);
	attn_memory_use(NULL);
	attn_memory_free(m);
}
END_TEST

/* A member, or the archive libzip would hold, past the limit: refused
 * with the limit's name, nothing handed over, the account left as it
 * was once the archive is freed. */
START_TEST(a_member_or_an_archive_over_the_limit_is_refused)
{
	struct attn_memory *m = attn_memory_new(4096, "TEST_LIMIT");
	unsigned char npy[2][192];
	struct sink s = { 0 };
	struct attn_error err;
	struct attn_npz z = { 0 };
	size_t len[2];

	attn_memory_use(m);
	ck_assert_ptr_null(attn_npz_add(&z, "weights", 8192, &err));
	ck_assert_int_eq(err.status, ATTN_ERR_NOMEM);
	ck_assert_msg(strstr(err.msg, "TEST_LIMIT") != NULL, "%s", err.msg);
	attn_npz_free(&z);
	ck_assert_uint_eq(attn_memory_held(m), 0);
	/* the members fit in 4096 bytes; libzip's 64 KiB fragment not */
	two_members(&z, npy, len);
	ck_assert_int_eq(attn_npz_write(&z, sink_put, &s, &err),
	    ATTN_ERR_NOMEM);
	ck_assert_msg(strstr(err.msg, "TEST_LIMIT") != NULL, "%s", err.msg);
	ck_assert_uint_eq(s.len, 0);
	attn_npz_free(&z);
	ck_assert_uint_eq(attn_memory_held(m), 0);
	attn_memory_use(NULL);
	attn_memory_free(m);
}
END_TEST

Suite *
write_npz_suite(void)
{
	Suite *s = suite_create("write_npz");
	TCase *tc = tcase_create("npz");

	tcase_add_test(tc, members_stored_in_order_read_back_by_name);
	tcase_add_test(tc, a_member_or_an_archive_over_the_limit_is_refused);
	suite_add_tcase(s, tc);
	return s;
}
