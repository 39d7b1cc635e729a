/*
 * fuzz_npy.c - libFuzzer harness for the .npy reader, through
 * attn_read_array with ATTN_FMT_NPY (and AUTO, which must find it by its
 * magic).
 *
 * Input: byte 0 chooses the reader flags (bits 0-1: none, finite, bool,
 * both) and whether the format is named or guessed (bit 2: AUTO with the
 * name "-"); the rest is the file, handed over without a terminating NUL.
 *
 * Besides what fuzz_check.h asserts of every reader: a data error of the
 * .npy reader has a byte offset (a zip, which read.c refuses first, has
 * none), inside the file or at its end; an array read has exactly
 * the elements its header promised in the bytes that were there (so
 * 2 bytes or more each), and the same bytes read twice give the same
 * array (no dependence on uninitialised memory).  A zip (a .npz) is also
 * read whole as named arrays (attn_read_named, libzip): a clean error or
 * arrays that keep the reader's rules, all given back.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "attn.h"
#include "attn_io.h"
#include "attn_private.h"
#include "fuzz_check.h"

static const unsigned flag_choice[4] = {
	0, ATTN_READ_FINITE, ATTN_READ_BOOL, ATTN_READ_FINITE | ATTN_READ_BOOL
};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct attn_array a, b;
	struct attn_error err;
	enum attn_format fmt;
	enum attn_status st;
	const char *buf, *name;
	unsigned flags;
	size_t len, n, d;

	if (size < 1 || size > 4096)
		return 0;
	flags = flag_choice[data[0] & 3];
	fmt = (data[0] & 4) ? ATTN_FMT_AUTO : ATTN_FMT_NPY;
	name = (data[0] & 4) ? "-" : "fuzz.npy";
	buf = (const char *)data + 1;
	len = size - 1;

	if (fmt == ATTN_FMT_AUTO && len >= 6 &&
	    memcmp(buf, "\x93NUMPY", 6) == 0 &&
	    attn_format_guess(name, buf, len) != ATTN_FMT_NPY)
		fuzz_fail("the NumPy magic was not guessed as .npy", NULL);

	if (attn_is_zip(buf, len)) {
		/* a member may say any size: 64 MiB at most, as the CLI's
		 * limit would refuse more */
		struct attn_memory *m = attn_memory_new(64u << 20, "fuzz"),
		    *prev = attn_memory_use(m);
		struct attn_named z;
		size_t i;

		memset(&err, 0, sizeof err);
		st = attn_read_named(name, buf, len, flags, &z, &err);
		if (st != ATTN_OK) {
			fuzz_check_error(st, &err, name, buf, len);
			if (z.arrays != NULL || z.count != 0)
				fuzz_fail("a failed .npz read left arrays "
				    "behind", &err);
		} else {
			for (i = 0; i < z.count; i++)
				fuzz_check_array(&z.arrays[i].array, flags,
				    SIZE_MAX);
			attn_named_free(&z);
		}
		if (attn_memory_held(m) != 0)
			fuzz_fail("a .npz read did not give back its memory",
			    NULL);
		attn_memory_use(prev);
		attn_memory_free(m);
	}
	memset(&err, 0, sizeof err);
	st = attn_read_array(name, buf, len, fmt, flags, &a, &err);
	if (st != ATTN_OK) {
		fuzz_check_error(st, &err, name, buf, len);
		/* A zip is named by read.c before any reader, without a
		 * position. */
		if (fmt == ATTN_FMT_NPY && st == ATTN_ERR_DATA &&
		    !err.has_offset && !(len >= 2 && buf[0] == 'P' &&
		    buf[1] == 'K'))
			fuzz_fail("a .npy data error without a byte offset",
			    &err);
		if (err.has_offset && err.offset > len)
			fuzz_fail("byte offset past the end of the file", &err);
		if (a.data != NULL)
			fuzz_fail("a failed read left data behind", &err);
		attn_array_free(&a);
		return 0;
	}
	fuzz_check_array(&a, flags, len);
	if (fmt == ATTN_FMT_AUTO && (len < 6 || memcmp(buf, "\x93NUMPY", 6) !=
	    0)) {
		/* Text that AUTO read: fuzz_text's business. */
		attn_array_free(&a);
		return 0;
	}
	for (n = 1, d = 0; d < a.ndim; d++)
		n *= a.shape[d];
	if (n > len / 2)
		fuzz_fail("more elements than the file has room for", NULL);
	memset(&err, 0, sizeof err);
	if (attn_read_array(name, buf, len, fmt, flags, &b, &err) != ATTN_OK)
		fuzz_fail("a second read of the same bytes failed", &err);
	if (!fuzz_same_array(&a, &b))
		fuzz_fail("a second read gave another shape or other numbers",
		    NULL);
	attn_array_free(&b);
	attn_array_free(&a);
	return 0;
}
