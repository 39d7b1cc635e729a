/*
 * check_write_npz.c - .npz archives written (lib/write_npz.c): members
 * stored in the order given, dated 1980-01-01 as numpy.savez dates them,
 * each member's bytes in the archive exactly as its pieces gave them,
 * the same bytes from the same members, read back by name with libzip
 * (lib/read_npz.c), ZIP64's fields where a size or an offset passes the
 * limit of 32 bits (lowered here); and what is charged to the memory
 * account, the members' names, given back whole, on success and when
 * the limit refuses a member.
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

/* z, putting to s (limit32 lowered to small, unless 0), with members
 * grad_q and lse in that order, each given in three pieces (the header
 * cut in two, then the numbers); their .npy bytes in npy[0] and npy[1]. */
static void
two_members(struct attn_npz *z, struct sink *s, unsigned long long small,
    unsigned char npy[2][192], size_t len[2])
{
	struct attn_npz_piece pc[3];
	struct attn_error err;
	size_t k;

	attn_npz_start(z, sink_put, s);
	if (small != 0)
		z->limit32 = small;
	len[0] = npy_of(npy[0], grad_q, 4);
	len[1] = npy_of(npy[1], lse, 2);
	for (k = 0; k < 2; k++) {
		pc[0].bytes = npy[k];
		pc[0].len = 100;
		pc[1].bytes = npy[k] + 100;
		pc[1].len = 28;
		pc[2].bytes = npy[k] + 128;
		pc[2].len = len[k] - 128;
		ck_assert_int_eq(attn_npz_member(z, k == 0 ? "grad_q" : "lse",
		    pc, 3, &err), ATTN_OK);
	}
	attn_npz_finish(z);
}

/* Little-endian 16, 32 and 64 bits at b. */
static unsigned
le16(const unsigned char *b)
{
	return (unsigned)b[0] | (unsigned)b[1] << 8;
}

static unsigned long long
le_n(const unsigned char *b, size_t n)
{
	unsigned long long v = 0;

	while (n-- > 0)
		v = v << 8 | b[n];
	return v;
}

/* The archive in s read back: grad_q and lse, by name, in order. */
static void
read_back(const struct sink *s)
{
	const struct attn_array *a;
	struct attn_named named;
	struct attn_error err;
	size_t i;

	ck_assert_int_eq(attn_read_named("w.npz", (const char *)s->b, s->len, 0,
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
}

START_TEST(members_stored_in_order_read_back_by_name)
{
	struct attn_memory *m = attn_memory_new(SIZE_MAX, "TEST_LIMIT");
	unsigned char npy[2][192], *at;
	struct sink s = { 0 }, again = { 0 };
	struct attn_npz z;
	size_t len[2], k;

	attn_memory_use(m);
	two_members(&z, &s, 0, npy, len);
	ck_assert_uint_gt(attn_memory_held(m), 0);	/* the names */
	attn_npz_free(&z);
	ck_assert_uint_eq(attn_memory_held(m), 0);
	/* each local header: version 1.0, stored (method 0), 00:00 on
	 * 1980-01-01, the member's bytes as given after its name, with no
	 * extra field */
	for (at = s.b, k = 0; k < 2; k++) {
		ck_assert(memcmp(at, "PK\x03\x04", 4) == 0);
		ck_assert_uint_eq(le16(at + 4), 10);
		ck_assert_uint_eq(le16(at + 8), 0);
		ck_assert_uint_eq(le16(at + 10), 0);
		ck_assert_uint_eq(le16(at + 12), (1 << 5) | 1);
		ck_assert_uint_eq(le_n(at + 18, 4), len[k]);
		ck_assert_uint_eq(le16(at + 28), 0);
		ck_assert(memcmp(at + 30, k == 0 ? "grad_q.npy" : "lse.npy",
		    le16(at + 26)) == 0);
		at += 30 + le16(at + 26);
		ck_assert(memcmp(at, npy[k], len[k]) == 0);
		at += len[k];
	}
	/* then the central directory, and the end record last */
	ck_assert(memcmp(at, "PK\x01\x02", 4) == 0);
	ck_assert(memcmp(s.b + s.len - 22, "PK\x05\x06", 4) == 0);
	ck_assert_uint_eq(le16(s.b + s.len - 12), 2);
	ck_assert_uint_eq(le_n(s.b + s.len - 6, 4), (size_t)(at - s.b));
	/* the same members, the same bytes */
	two_members(&z, &again, 0, npy, len);
	attn_npz_free(&z);
	ck_assert_uint_eq(again.len, s.len);
	ck_assert(memcmp(again.b, s.b, s.len) == 0);
	read_back(&s);
	ck_assert_uint_eq(attn_memory_held(m), 0);
	free(s.b);
	free(again.b);
	attn_memory_use(NULL);
	attn_memory_free(m);
}
END_TEST

/* Sizes and offsets past the limit of 32 bits (lowered to 150 bytes: the
 * first member, 160 bytes, is past it, the second, 144, is not, but its
 * offset is, and so is the central directory's): ZIP64's fields, which
 * libzip reads back. */
START_TEST(past_32_bits_zip64_holds_sizes_and_offsets)
{
	unsigned char npy[2][192], *at;
	struct sink s = { 0 };
	struct attn_npz z;
	size_t len[2];

	two_members(&z, &s, 150, npy, len);
	attn_npz_free(&z);
	ck_assert_uint_eq(len[0], 160);
	ck_assert_uint_eq(len[1], 144);
	/* grad_q: version 4.5, sizes 0xFFFFFFFF, both in the extra field */
	at = s.b;
	ck_assert_uint_eq(le16(at + 4), 45);
	ck_assert_uint_eq(le_n(at + 18, 4), 0xFFFFFFFFu);
	ck_assert_uint_eq(le_n(at + 22, 4), 0xFFFFFFFFu);
	ck_assert_uint_eq(le16(at + 28), 20);
	at += 30 + le16(at + 26);
	ck_assert_uint_eq(le16(at), 1);
	ck_assert_uint_eq(le16(at + 2), 16);
	ck_assert_uint_eq(le_n(at + 4, 8), 160);
	ck_assert_uint_eq(le_n(at + 12, 8), 160);
	/* lse: its size fits, so its local header has no extra field */
	at += 20 + 160;
	ck_assert(memcmp(at, "PK\x03\x04", 4) == 0);
	ck_assert_uint_eq(le16(at + 4), 10);
	ck_assert_uint_eq(le16(at + 28), 0);
	/* ZIP64's end record and locator before the end record, whose
	 * offset of the central directory is 0xFFFFFFFF */
	ck_assert(memcmp(s.b + s.len - 22 - 20, "PK\x06\x07", 4) == 0);
	ck_assert(memcmp(s.b + s.len - 22 - 20 - 56, "PK\x06\x06", 4) == 0);
	ck_assert_uint_eq(le_n(s.b + s.len - 6, 4), 0xFFFFFFFFu);
	read_back(&s);
	free(s.b);
}
END_TEST

/* A member's name past the limit: refused with the limit's name,
 * nothing put, the account left as it was once the archive is freed. */
START_TEST(a_member_over_the_limit_is_refused)
{
	struct attn_memory *m = attn_memory_new(1, "TEST_LIMIT");
	struct attn_npz_piece pc = { "x", 1 };
	struct sink s = { 0 };
	struct attn_error err;
	struct attn_npz z;

	attn_memory_use(m);
	attn_npz_start(&z, sink_put, &s);
	ck_assert_int_eq(attn_npz_member(&z, "weights", &pc, 1, &err),
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
	tcase_add_test(tc, past_32_bits_zip64_holds_sizes_and_offsets);
	tcase_add_test(tc, a_member_over_the_limit_is_refused);
	suite_add_tcase(s, tc);
	return s;
}
