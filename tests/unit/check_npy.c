/*
 * check_npy.c - the .npy reader: every dtype attn reads in both byte
 * orders and every header version, read bit-exactly; the headers other
 * writers produce; and every fault, down to its byte offset and message.
 *
 * Files are built here byte by byte (npy_build), each into a buffer of
 * exactly its length, so that AddressSanitizer catches a read past the
 * end.  tests/npy.sh checks the same reader against files numpy.save
 * wrote, and attn's own .npy output against numpy.load.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "suites.h"
#include "testutil.h"

#define NCASES(t) ((int)(sizeof (t) / sizeof (t)[0]))

/* A .npy file under construction. */
struct npy_file {
	unsigned char *buf;
	size_t len;
};

/*
 * Build a .npy file: magic, version major.0, the header length in the
 * version's width, the header text padded with spaces to a multiple of
 * 64 bytes and ended by '\n' as numpy writes it (pad 0: the header as
 * given, unpadded), then the data bytes.
 */
static struct npy_file
npy_build(unsigned major, const char *header, int pad, const void *data,
    size_t dlen)
{
	struct npy_file f;
	size_t pre = major == 1 ? 10 : 12, hlen = strlen(header), total;

	if (pad)
		hlen = ((pre + hlen + 1 + 63) / 64) * 64 - pre;
	total = pre + hlen + dlen;
	f.buf = malloc(total != 0 ? total : 1);
	ck_assert_ptr_nonnull(f.buf);
	memcpy(f.buf, "\x93NUMPY", 6);
	f.buf[6] = (unsigned char)major;
	f.buf[7] = 0;
	f.buf[8] = (unsigned char)(hlen & 0xFF);
	f.buf[9] = (unsigned char)(hlen >> 8 & 0xFF);
	if (major != 1) {
		f.buf[10] = (unsigned char)(hlen >> 16 & 0xFF);
		f.buf[11] = (unsigned char)(hlen >> 24 & 0xFF);
	}
	memset(f.buf + pre, ' ', hlen);
	memcpy(f.buf + pre, header, strlen(header));
	if (pad)
		f.buf[pre + hlen - 1] = '\n';
	if (dlen > 0)
		memcpy(f.buf + pre + hlen, data, dlen);
	f.len = total;
	return f;
}

static enum attn_status
npy_read(const struct npy_file *f, unsigned flags, struct attn_array *a,
    struct attn_error *err)
{
	memset(err, 0, sizeof *err);
	return attn_read_array("q.npy", (const char *)f->buf, f->len,
	    ATTN_FMT_AUTO, flags, a, err);
}

/* Store x in b as `size` bytes (4: a float, 8: a double), big-endian or
 * little-endian. */
static void
put(unsigned char *b, double x, size_t size, int big)
{
	unsigned char t[8];
	float f = (float)x;
	size_t k;

	if (size == 4)
		memcpy(t, &f, 4);
	else
		memcpy(t, &x, 8);
	for (k = 0; k < size; k++)
		b[k] = big ? t[size - 1 - k] : t[k];
}

/* ---------------------------------------------------------------- dtypes */

/* Values with something to lose: subnormals, the extremes, -0, a value
 * with all 53 bits, thirds. */
static const double wide[] = {
	1.0 / 3.0, -0.0, 4.9406564584124654e-324, 2.2250738585072014e-308,
	1.7976931348623157e308, -2.5, 0.1, 1e-300,
};

/* float32 takes what it can hold: the same list rounded to float is what
 * must come back. */
static const double narrow[] = {
	1.0 / 3.0, -0.0, 1.40129846e-45, 1.17549435e-38, 3.40282347e38, -2.5,
	0.1, 1e-30,
};

/* binary16 bit patterns and the numbers they are. */
static const struct {
	uint16_t bits;
	double value;
} halves[] = {
	{ 0x3C00, 1.0 }, { 0xC000, -2.0 }, { 0x7BFF, 65504.0 },
	{ 0x0400, 6.103515625e-05 },		/* smallest normal, 2^-14 */
	{ 0x0001, 5.9604644775390625e-08 },	/* smallest subnormal, 2^-24 */
	{ 0x03FF, 6.097555160522461e-05 },	/* largest subnormal */
	{ 0x8000, -0.0 }, { 0x3555, 0.333251953125 },
	{ 0x3BFF, 0.99951171875 }, { 0x0000, 0.0 },
};

/*
 * Case i: dtype i / 6 (f8, f4, f2), big-endian when i is odd, header
 * version (i / 2) % 3 + 1.  Every value must come back as the double it
 * is: the f8 values bit for bit, the f4 values as the floats they round
 * to, the f2 bit patterns as the numbers they are.
 */
START_TEST(every_dtype_reads_exactly_in_both_orders_and_every_version)
{
	static const char *const dtype[3] = { "f8", "f4", "f2" };
	const size_t size = _i / 6 == 0 ? 8 : _i / 6 == 1 ? 4 : 2;
	const size_t n = size == 2 ? sizeof halves / sizeof halves[0] : 8;
	const int big = _i % 2;
	const unsigned major = (unsigned)(_i / 2) % 3 + 1;
	unsigned char data[8 * 10];
	double want[10];
	char header[96];
	struct attn_array a;
	struct attn_error err;
	struct npy_file f;
	size_t i;

	for (i = 0; i < n; i++) {
		if (size == 2) {
			data[2 * i + (big ? 1 : 0)] =
			    (unsigned char)(halves[i].bits & 0xFF);
			data[2 * i + (big ? 0 : 1)] =
			    (unsigned char)(halves[i].bits >> 8);
			want[i] = halves[i].value;
		} else {
			want[i] = size == 8 ? wide[i] : (float)narrow[i];
			put(data + size * i, want[i], size, big);
		}
	}
	snprintf(header, sizeof header, "{'descr': '%c%s', 'fortran_order': "
	    "False, 'shape': (2, %zu), }", big ? '>' : '<', dtype[_i / 6],
	    n / 2);
	f = npy_build(major, header, 1, data, n * size);
	ck_assert_msg(npy_read(&f, 0, &a, &err) == ATTN_OK, "%s", err.msg);
	ck_assert_uint_eq(a.ndim, 2);
	ck_assert_uint_eq(a.shape[0], 2);
	ck_assert_uint_eq(a.shape[1], n / 2);
	for (i = 0; i < n; i++)
		ck_assert_msg(memcmp(&a.data[i], &want[i], 8) == 0,
		    "%s value %zu is %.17g, not %.17g", header, i, a.data[i],
		    want[i]);
	attn_array_free(&a);
	free(f.buf);
}
END_TEST

START_TEST(float16_infinities_and_nan_read_as_themselves)
{
	static const unsigned char data[] = { 0x00, 0x7C, 0x00, 0xFC, 0x01,
	    0x7E };
	struct attn_array a;
	struct attn_error err;
	struct npy_file f = npy_build(1, "{'descr': '<f2', 'fortran_order': "
	    "False, 'shape': (3,), }", 1, data, sizeof data);

	ck_assert_msg(npy_read(&f, 0, &a, &err) == ATTN_OK, "%s", err.msg);
	ck_assert(a.data[0] == INFINITY);
	ck_assert(a.data[1] == -INFINITY);
	ck_assert(isnan(a.data[2]));
	attn_array_free(&a);
	free(f.buf);
}
END_TEST

/* ---------------------------------------------------------------- shapes */

static const struct {
	const char *shape;
	size_t ndim, dims[4];
} shapes[] = {
	{ "(6,)", 1, { 6 } },
	{ "(2, 3)", 2, { 2, 3 } },
	{ "(1, 2, 3)", 3, { 1, 2, 3 } },
	{ "(1, 2, 1, 3)", 4, { 1, 2, 1, 3 } },
	{ "(6, 1)", 2, { 6, 1 } },
	{ "(2,3)", 2, { 2, 3 } },		/* no spaces */
	{ "( 2 , 3 , )", 2, { 2, 3 } },		/* a trailing comma */
};

START_TEST(one_to_four_dimensions_keep_their_shape)
{
	static const double six[] = { 1, 2, 3, 4, 5, 6 };
	char header[128];
	struct attn_array a;
	struct attn_error err;
	struct npy_file f;
	size_t d;

	snprintf(header, sizeof header, "{'descr': '<f8', 'fortran_order': "
	    "False, 'shape': %s, }", shapes[_i].shape);
	f = npy_build(1, header, 1, six, sizeof six);
	ck_assert_msg(npy_read(&f, 0, &a, &err) == ATTN_OK, "%s: %s",
	    shapes[_i].shape, err.msg);
	ck_assert_uint_eq(a.ndim, shapes[_i].ndim);
	for (d = 0; d < a.ndim; d++)
		ck_assert_uint_eq(a.shape[d], shapes[_i].dims[d]);
	for (d = 0; d < 6; d++)
		ck_assert(a.data[d] == six[d]);
	attn_array_free(&a);
	free(f.buf);
}
END_TEST

/* Headers as other writers and numpy versions spell them. */
static const char *const headers[] = {
	"{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }",
	"{'descr': '<f8', 'fortran_order': False, 'shape': (2,)}",
	"{\"descr\": \"<f8\", \"fortran_order\": False, \"shape\": (2,)}",
	"{'shape': (2,), 'fortran_order': False, 'descr': '<f8'}",
	"{'descr':'<f8','fortran_order':False,'shape':(2,),}",
	" { 'descr' : '<f8' ,\t'fortran_order' : False , 'shape' : ( 2 , ) } \n",
};

START_TEST(headers_in_any_order_spacing_and_quotes_read)
{
	static const double two[] = { 1.5, -3 };
	struct attn_array a;
	struct attn_error err;
	struct npy_file f;

	/* Unpadded (cnpy and others do not pad), then padded. */
	f = npy_build(1, headers[_i], _i % 2, two, sizeof two);
	ck_assert_msg(npy_read(&f, 0, &a, &err) == ATTN_OK, "%s: %s",
	    headers[_i], err.msg);
	ck_assert_uint_eq(a.ndim, 1);
	ck_assert(a.data[0] == 1.5 && a.data[1] == -3);
	attn_array_free(&a);
	free(f.buf);
}
END_TEST

START_TEST(npy_content_is_recognised_whatever_the_name)
{
	static const double two[] = { 1, 2 };
	struct attn_array a;
	struct attn_error err;
	struct npy_file f = npy_build(1, "{'descr': '<f8', 'fortran_order': "
	    "False, 'shape': (1, 2), }", 1, two, sizeof two);

	memset(&err, 0, sizeof err);
	ck_assert_int_eq(attn_format_guess("-", (const char *)f.buf, f.len),
	    ATTN_FMT_NPY);
	ck_assert_int_eq(attn_read_array("<stdin>", (const char *)f.buf,
	    f.len, ATTN_FMT_AUTO, ATTN_READ_FINITE, &a, &err), ATTN_OK);
	ck_assert(a.data[1] == 2);
	attn_array_free(&a);
	free(f.buf);
}
END_TEST

/* ---------------------------------------------------------------- values */

START_TEST(role_rules_apply_at_the_element)
{
	/* Q, K and V: finite; masks: 0 and 1 alone (an additive mask's
	 * large negatives, as float32's finfo.min, are refused); biases: no
	 * nan or +inf; without a role: anything. */
	static const struct {
		double bad;
		unsigned flags;
		const char *msg;	/* NULL: read */
	} c[] = {
		{ NAN, ATTN_READ_FINITE, "a[1, 0]: non-finite number 'nan' "
		    "(Q, K, V and dO must be finite)" },
		{ -INFINITY, ATTN_READ_FINITE, "a[1, 0]: non-finite number "
		    "'-inf' (Q, K, V and dO must be finite)" },
		{ NAN, ATTN_READ_BOOL, "a[1, 0]: " MASK_MSG("nan") },
		{ INFINITY, ATTN_READ_BOOL, "a[1, 0]: " MASK_MSG("inf") },
		{ -0x1.fffffep127, ATTN_READ_BOOL, "a[1, 0]: "
		    MASK_MSG("-3.4028234663852886e+38") },
		{ -1e9, ATTN_READ_BOOL, "a[1, 0]: " MASK_MSG("-1000000000") },
		{ 0.5, ATTN_READ_BOOL, "a[1, 0]: " MASK_MSG("0.5") },
		{ 2, ATTN_READ_BOOL, "a[1, 0]: " MASK_MSG("2") },
		{ -0.0, ATTN_READ_BOOL, NULL },
		{ 0.5, ATTN_READ_BIAS, NULL },
		{ NAN, ATTN_READ_BIAS, "a[1, 0]: 'nan' in a bias: a bias holds "
		    "finite numbers, or -inf to mask a key" },
		{ INFINITY, ATTN_READ_BIAS, "a[1, 0]: 'inf' in a bias: a bias "
		    "holds finite numbers, or -inf to mask a key" },
		{ -INFINITY, ATTN_READ_BIAS, NULL },
		{ NAN, 0, NULL },
	};
	double v[4] = { 1, 0, 0, 1 };
	struct attn_array a;
	struct attn_error err;
	struct npy_file f;

	v[2] = c[_i].bad;
	f = npy_build(1, "{'descr': '<f8', 'fortran_order': False, "
	    "'shape': (2, 2), }", 1, v, sizeof v);
	if (c[_i].msg == NULL) {
		ck_assert_int_eq(npy_read(&f, c[_i].flags, &a, &err), ATTN_OK);
		ck_assert(memcmp(&a.data[2], &c[_i].bad, sizeof(double)) == 0);
	} else {
		ck_assert_int_eq(npy_read(&f, c[_i].flags, &a, &err),
		    ATTN_ERR_DATA);
		ck_assert_str_eq(err.msg, c[_i].msg);
		ck_assert(err.has_offset);
		/* the header pads to 128 bytes; element [1, 0] is the third */
		ck_assert_uint_eq(err.offset, 128 + 2 * 8);
		ck_assert_ptr_null(a.data);
	}
	attn_array_free(&a);
	free(f.buf);
}
END_TEST

/*
 * Floats in the host's order and C order are read whole and scanned a
 * chunk at a time for the first value the role's rule may refuse: the
 * first fault is still the one named, at its element and byte, in any
 * chunk, after values that are not plain but allowed (a bias's -inf),
 * and every value reads as itself.  Case i: float64 (i even) or float32,
 * the flags and where the values go, from ways[i / 2].
 */
static const struct {
	unsigned flags;
	double allowed;		/* put at allowed_at (nan: none) */
	size_t allowed_at;
	double bad;		/* put at bad_at (nan with FINITE ...) */
	size_t bad_at;		/* N: none, the array reads */
	const char *msg;
} ways[] = {
	{ ATTN_READ_FINITE, NAN, 0, NAN, 0, "a[0, 0]: non-finite number "
	    "'nan' (Q, K, V and dO must be finite)" },
	{ ATTN_READ_FINITE, NAN, 0, -INFINITY, 512, "a[0, 512]: non-finite "
	    "number '-inf' (Q, K, V and dO must be finite)" },
	{ ATTN_READ_FINITE, NAN, 0, NAN, 1537, "a[1, 513]: non-finite "
	    "number 'nan' (Q, K, V and dO must be finite)" },
	{ ATTN_READ_FINITE, NAN, 0, INFINITY, 2047, "a[1, 1023]: non-finite "
	    "number 'inf' (Q, K, V and dO must be finite)" },
	{ ATTN_READ_BIAS, -INFINITY, 3, NAN, 700, "a[0, 700]: 'nan' in a "
	    "bias: a bias holds finite numbers, or -inf to mask a key" },
	{ ATTN_READ_BIAS, -INFINITY, 600, 0, 2048, NULL },
	{ ATTN_READ_BOOL, NAN, 0, 0.5, 1500, "a[1, 476]: " MASK_MSG("0.5") },
	{ 0, NAN, 0, INFINITY, 2048, NULL },
};

START_TEST(host_floats_are_checked_a_chunk_at_a_time)
{
	const size_t n = 2048, size = _i % 2 == 0 ? 8 : 4;
	const int bools = (ways[_i / 2].flags & ATTN_READ_BOOL) != 0;
	unsigned char *data = malloc(n * size);
	struct attn_array a;
	struct attn_error err;
	struct npy_file f;
	double *want = malloc(n * sizeof *want);
	size_t i;

	ck_assert_ptr_nonnull(data);
	ck_assert_ptr_nonnull(want);
	for (i = 0; i < n; i++) {
		want[i] = bools ? (double)(i % 3 == 0) :
		    (double)(float)((double)i / 7 - 100);
		if (i == ways[_i / 2].allowed_at &&
		    !isnan(ways[_i / 2].allowed))
			want[i] = ways[_i / 2].allowed;
		if (i == ways[_i / 2].bad_at)
			want[i] = ways[_i / 2].bad;
		put(data + i * size, want[i], size, 0);
	}
	f = npy_build(1, size == 8 ? "{'descr': '<f8', 'fortran_order': "
	    "False, 'shape': (2, 1024), }" : "{'descr': '<f4', "
	    "'fortran_order': False, 'shape': (2, 1024), }", 1, data,
	    n * size);
	if (ways[_i / 2].msg == NULL) {
		ck_assert_int_eq(npy_read(&f, ways[_i / 2].flags, &a, &err),
		    ATTN_OK);
		for (i = 0; i < n; i++)
			ck_assert(memcmp(&a.data[i], &want[i], 8) == 0 ||
			    (isnan(a.data[i]) && isnan(want[i])));
	} else {
		ck_assert_int_eq(npy_read(&f, ways[_i / 2].flags, &a, &err),
		    ATTN_ERR_DATA);
		ck_assert_str_eq(err.msg, ways[_i / 2].msg);
		ck_assert_uint_eq(err.offset, 128 + ways[_i / 2].bad_at * size);
	}
	attn_array_free(&a);
	free(f.buf);
	free(data);
	free(want);
}
END_TEST

/*
 * A .npy in two pieces (attn_read_npy_parts) reads as the whole file:
 * the same numbers, the same fault at the same byte; with
 * ATTN_READ_IN_PLACE, float64 in C order and aligned is the data itself
 * (lent, left alone by attn_array_free), anything else a copy; a header
 * piece cut anywhere but at the data is refused.
 */
START_TEST(npy_in_two_pieces_reads_as_the_file)
{
	static const char hdr8[] = "{'descr': '<f8', 'fortran_order': False, "
	    "'shape': (2, 3), }";
	double v[6] = { 1, -2, 3.5, 0x1p-1070, -0.0, 6 }, *moved;
	unsigned char *raw = malloc(sizeof v + 1);
	struct attn_array a, w;
	struct attn_error err, werr;
	struct npy_file f = npy_build(1, hdr8, 1, v, sizeof v);
	size_t i;

	ck_assert_ptr_nonnull(raw);
	memset(&err, 0, sizeof err);
	/* in place: the caller's doubles themselves */
	ck_assert_int_eq(attn_read_npy_parts("q.npy", (const char *)f.buf, 128,
	    v, sizeof v, ATTN_READ_FINITE | ATTN_READ_IN_PLACE, &a, &err),
	    ATTN_OK);
	ck_assert_ptr_eq(a.data, v);
	ck_assert_int_eq(a.lent, 1);
	ck_assert_uint_eq(a.ndim, 2);
	ck_assert_uint_eq(a.shape[1], 3);
	attn_array_free(&a);
	ck_assert(v[5] == 6);
	/* without the flag, or unaligned: a copy of the same bits */
	moved = (double *)(void *)(raw + 1);
	memcpy(raw + 1, v, sizeof v);
	ck_assert_int_eq(attn_read_npy_parts("q.npy", (const char *)f.buf, 128,
	    v, sizeof v, ATTN_READ_FINITE, &a, &err), ATTN_OK);
	ck_assert(a.data != v && a.lent == 0);
	ck_assert(memcmp(a.data, v, sizeof v) == 0);
	attn_array_free(&a);
	ck_assert_int_eq(attn_read_npy_parts("q.npy", (const char *)f.buf, 128,
	    moved, sizeof v, ATTN_READ_IN_PLACE, &a, &err), ATTN_OK);
	ck_assert(a.data != moved && a.lent == 0);
	ck_assert(memcmp(a.data, v, sizeof v) == 0);
	attn_array_free(&a);
	/* a fault: at the whole file's byte, in its words */
	v[4] = NAN;
	free(f.buf);
	f = npy_build(1, hdr8, 1, v, sizeof v);
	ck_assert_int_eq(npy_read(&f, ATTN_READ_FINITE, &w, &werr),
	    ATTN_ERR_DATA);
	ck_assert_int_eq(attn_read_npy_parts("q.npy", (const char *)f.buf, 128,
	    v, sizeof v, ATTN_READ_FINITE | ATTN_READ_IN_PLACE, &a, &err),
	    ATTN_ERR_DATA);
	ck_assert_str_eq(err.msg, werr.msg);
	ck_assert_uint_eq(err.offset, werr.offset);
	ck_assert_uint_eq(err.offset, 128 + 4 * 8);
	ck_assert_ptr_null(a.data);
	ck_assert(v[5] == 6);
	/* data a byte short: the whole file's truncation, at its end */
	ck_assert_int_eq(attn_read_npy_parts("q.npy", (const char *)f.buf, 128,
	    v, sizeof v - 1, 0, &a, &err), ATTN_ERR_DATA);
	ck_assert_uint_eq(err.offset, 128 + sizeof v - 1);
	/* the header's piece cut short, or past the header */
	for (i = 0; i < 2; i++) {
		memset(&err, 0, sizeof err);
		ck_assert_int_eq(attn_read_npy_parts("q.npy",
		    (const char *)f.buf, i == 0 ? 100 : 129, v, sizeof v, 0,
		    &a, &err), ATTN_ERR_DATA);
		ck_assert_ptr_null(a.data);
		if (i == 0)
			ck_assert_str_eq(err.msg, "the header's piece is 100 "
			    "bytes, and the header 128: a .npy in two pieces "
			    "is cut where its data starts");
	}
	/* float32 in place: widened, so a copy */
	{
		float g[2] = { 1.5f, -3.0f };
		struct npy_file f4 = npy_build(1, "{'descr': '<f4', "
		    "'fortran_order': False, 'shape': (2,), }", 1, g,
		    sizeof g);

		ck_assert_int_eq(attn_read_npy_parts("q.npy",
		    (const char *)f4.buf, 128, g, sizeof g, ATTN_READ_IN_PLACE,
		    &a, &err), ATTN_OK);
		ck_assert(a.lent == 0 && a.data[0] == 1.5 && a.data[1] == -3);
		attn_array_free(&a);
		free(f4.buf);
	}
	free(f.buf);
	free(raw);
}
END_TEST

/* ---------------------------------------------------------------- faults */

/* A fault: the file (built from a header, or given whole as raw bytes),
 * the byte offset and the message. */
static const struct fault {
	const char *header;	/* NULL: raw is the whole file */
	unsigned major;
	size_t dlen;		/* bytes of data after the header */
	const char *raw;
	size_t rawlen;
	size_t offset;
	const char *msg;
} faults[] = {
	{ NULL, 0, 0, "1,2\n3,4\n", 8, 0, "not a .npy file: it starts with "
	    "b'1,2\\n3,4\\n', not the magic b'\\x93NUMPY'" },
	{ NULL, 0, 0, "\x93NUMPY", 6, 6, "truncated .npy file: it ends "
	    "inside the version" },
	{ NULL, 0, 0, "\x93NUMPY\x04\x00", 8, 6, ".npy format version 4.0: "
	    "attn reads 1.0, 2.0 and 3.0" },
	{ NULL, 0, 0, "\x93NUMPY\x01\x01", 8, 6, ".npy format version 1.1: "
	    "attn reads 1.0, 2.0 and 3.0" },
	{ NULL, 0, 0, "\x93NUMPY\x02\x00\x10\x00", 10, 10, "truncated .npy "
	    "file: it ends inside the header length" },
	{ NULL, 0, 0, "\x93NUMPY\x01\x00\x40\x00{'descr'", 18, 18,
	    "truncated .npy file: its header length says 64 bytes, but the "
	    "file ends 8 bytes into the header" },
	{ "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }", 1,
	    16, NULL, 0, 20, "dtype '<i8' (signed integers): attn reads "
	    "float64, float32 or float16 (<f8, <f4, <f2, or >f8, >f4, >f2), "
	    "and in masks bool and integers; convert with "
	    "a.astype(numpy.float64)" },
	{ "{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", 1,
	    2, NULL, 0, 20, "dtype '|b1' (booleans): attn reads float64, "
	    "float32 or float16 (<f8, <f4, <f2, or >f8, >f4, >f2), and in "
	    "masks bool and integers; convert with a.astype(numpy.float64)" },
	{ "{'descr': '<f16', 'fortran_order': False, 'shape': (2,), }", 1,
	    32, NULL, 0, 20, "dtype '<f16' (floats of another size or byte "
	    "order): attn reads float64, float32 or float16 (<f8, <f4, <f2, "
	    "or >f8, >f4, >f2), and in masks bool and integers; convert "
	    "with a.astype(numpy.float64)" },
	{ "{'descr': '=f8', 'fortran_order': False, 'shape': (2,), }", 1,
	    16, NULL, 0, 20, "dtype '=f8' (floats of another size or byte "
	    "order): attn reads float64, float32 or float16 (<f8, <f4, <f2, "
	    "or >f8, >f4, >f2), and in masks bool and integers; convert "
	    "with a.astype(numpy.float64)" },
	{ "{'descr': [('x', '<f8')], 'fortran_order': False, 'shape': (2,), "
	    "}", 1, 16, NULL, 0, 20, "bad .npy header: a structured dtype (a "
	    "list of fields): attn reads arrays of float64, float32 or "
	    "float16" },
	{ "{'descr': '<f8', 'fortran_order': 0, 'shape': (2,), }", 1, 16,
	    NULL, 0, 44, "bad .npy header: 'fortran_order' must be True or "
	    "False, found \"0, 'shape': ...\"" },
	{ "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", 1, 8,
	    NULL, 0, 60, "a 0-D array: attn reads 1- to 4-D arrays" },
	{ "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1, 1, 1, "
	    "2), }", 1, 16, NULL, 0, 60, "a 5-D array: attn reads 1- to 4-D "
	    "arrays" },
	{ "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 3), }", 1,
	    0, NULL, 0, 60, "empty array: shape (0, 3)" },
	{ "{'descr': '<f8', 'fortran_order': False, 'shape': (3), }", 1,
	    24, NULL, 0, 60, "bad .npy header: 'shape' (n) is a number, not a "
	    "tuple: a 1-D shape is written (n,)" },
	{ "{'descr': '<f8', 'fortran_order': False, 'shape': 3, }", 1,
	    24, NULL, 0, 60, "bad .npy header: 'shape' must be a tuple, such "
	    "as (3,) or (2, 3), found \"3, }\"" },
	{ "{'descr': '<f8', 'fortran_order': False, 'shape': (2, -1), }", 1,
	    16, NULL, 0, 64, "bad .npy header: expected a whole number in the "
	    "shape, found \"-1), }\"" },
	{ "{'descr': '<f8', 'fortran_order': False, 'shape': (2; 1), }", 1,
	    16, NULL, 0, 62, "bad .npy header: expected ',' or ')' in the "
	    "shape, found \"; 1), }\"" },
	{ "{'descr': '<f8', 'fortran_order': False, 'shape': "
	    "(99999999999999999999999,), }", 1, 16, NULL, 0, 61, "bad .npy "
	    "header: a dimension of the shape does not fit in 64 bits" },
	{ "{'descr': '<f8', 'fortran_order': False, 'shape': "
	    "(4294967296, 4294967296), }", 1, 16, NULL, 0, 60, "shape "
	    "(4294967296, 4294967296) has more elements than 64 bits can "
	    "count" },
	{ "{'descr': '<f8', 'fortran_order': False, 'shape': "
	    "(4294967296, 536870912), }", 1, 16, NULL, 0, 60, "shape "
	    "(4294967296, 536870912) of <f8 is more bytes than 64 bits can "
	    "count" },
	{ "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", 1,
	    40, NULL, 0, 109, "truncated .npy data: shape (2, 3) of <f8 needs "
	    "48 bytes but the file has 40 after its header" },
	{ "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 3,
	    13, NULL, 0, 81, "1 bytes of trailing data after the 12 of shape "
	    "(3,) of <f4" },
	{ "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), 'x': 1}",
	    1, 16, NULL, 0, 66, "bad .npy header: unknown key \"'x': 1}\" "
	    "(a .npy header has 'descr', 'fortran_order' and 'shape')" },
	{ "{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': "
	    "(2,)}", 1, 16, NULL, 0, 27, "bad .npy header: 'descr' given "
	    "twice" },
	{ "{'descr': '<f8', 'shape': (2,)}", 1, 16, NULL, 0, 41, "bad .npy "
	    "header: no 'fortran_order' key" },
	{ "['descr', '<f8']", 1, 16, NULL, 0, 10, "bad .npy header: expected "
	    "'{' to open the header dict, found \"['descr', '<...\"" },
	{ "{'descr': '<f8', 'fortran_order': False, 'shape': (2,)} x", 1,
	    16, NULL, 0, 66, "bad .npy header: \"x\" after the header dict" },
	{ "{'descr': '<f8' 'fortran_order': False, 'shape': (2,)}", 1,
	    16, NULL, 0, 26, "bad .npy header: expected ',' or '}' in the "
	    "header dict, found \"'fortran_ord...\"" },
	{ "{'descr: '<f8', 'fortran_order': False, 'shape': (2,)}", 1,
	    16, NULL, 0, 20, "bad .npy header: expected ':' after the key, "
	    "found \"<f8', 'fortr...\"" },
	{ "{'descr': '<f8\\x', 'fortran_order': False, 'shape': (2,)}", 1,
	    16, NULL, 0, 20, "bad .npy header: escapes in a string are not "
	    "part of a .npy header" },
	{ "{'descr': '<f8", 1, 16, NULL, 0, 20, "bad .npy header: "
	    "unterminated string" },
	{ "{'descr': \xC3\xA9, 'fortran_order': False, 'shape': (2,)}", 3,
	    16, NULL, 0, 22, "bad .npy header: expected a quoted string, "
	    "found \"\\xc3\\xa9, 'fortran...\"" },
};

START_TEST(faults_name_their_byte_and_what_was_found)
{
	const struct fault *c = &faults[_i];
	unsigned char *data = calloc(c->dlen + 1, 1);
	struct attn_array a;
	struct attn_error err;
	struct npy_file f;

	ck_assert_ptr_nonnull(data);
	if (c->header != NULL) {
		f = npy_build(c->major, c->header, 0, data, c->dlen);
	} else {
		f.buf = malloc(c->rawlen);
		ck_assert_ptr_nonnull(f.buf);
		memcpy(f.buf, c->raw, c->rawlen);
		f.len = c->rawlen;
	}
	ck_assert_int_eq(npy_read(&f, 0, &a, &err), ATTN_ERR_DATA);
	ck_assert_str_eq(err.msg, c->msg);
	ck_assert_str_eq(err.file, "q.npy");
	ck_assert_msg(err.has_offset && err.offset == c->offset,
	    "'%s' at byte %zu, expected %zu", err.msg, err.offset, c->offset);
	ck_assert_uint_eq(err.line, 0);
	ck_assert_ptr_null(a.data);
	attn_array_free(&a);
	free(f.buf);
	free(data);
}
END_TEST

/* ---------------------------------------------------------------- masks */

/*
 * Masks as PyTorch and NumPy save them: bool (|b1) and integers of each
 * size and sign, in both byte orders, read as 0 and 1 with ATTN_READ_BOOL;
 * any other integer is a mask value the rule refuses at its element; and
 * without ATTN_READ_BOOL (Q, K, V, a bias) an integer array is refused.
 */
static const struct {
	const char *descr;
	size_t size;
	int big;
} mask_dtypes[] = {
	{ "|b1", 1, 0 }, { "|i1", 1, 0 }, { "|u1", 1, 0 }, { "<i2", 2, 0 },
	{ ">i2", 2, 1 }, { "<u4", 4, 0 }, { ">i4", 4, 1 }, { "<i8", 8, 0 },
	{ ">u8", 8, 1 },
};

START_TEST(bool_and_integer_masks_read_as_zero_and_one)
{
	const size_t size = mask_dtypes[_i].size;
	const int big = mask_dtypes[_i].big;
	const unsigned vals[4] = { 1, 0, 0, 1 };
	unsigned char data[4 * 8] = { 0 };
	char header[128];
	struct attn_array a;
	struct attn_error err;
	struct npy_file f;
	size_t i;

	for (i = 0; i < 4; i++)
		data[i * size + (big ? size - 1 : 0)] = (unsigned char)vals[i];
	snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': "
	    "False, 'shape': (2, 2), }", mask_dtypes[_i].descr);
	f = npy_build(1, header, 1, data, 4 * size);
	ck_assert_int_eq(npy_read(&f, ATTN_READ_BOOL, &a, &err), ATTN_OK);
	ck_assert_uint_eq(a.ndim, 2);
	for (i = 0; i < 4; i++)
		ck_assert_double_eq(a.data[i], (double)vals[i]);
	attn_array_free(&a);
	/* 2 (or -1 in the top byte of a signed one) breaks the mask rule */
	data[3 * size + (big ? size - 1 : 0)] = 2;
	free(f.buf);
	f = npy_build(1, header, 1, data, 4 * size);
	ck_assert_int_eq(npy_read(&f, ATTN_READ_BOOL, &a, &err),
	    ATTN_ERR_DATA);
	ck_assert_msg(strstr(err.msg, "a[1, 1]") != NULL, "%s", err.msg);
	ck_assert_msg(strstr(err.msg, "--bias") != NULL, "%s", err.msg);
	ck_assert_ptr_null(a.data);
	/* not a mask: refused at the dtype */
	ck_assert_int_eq(npy_read(&f, ATTN_READ_FINITE, &a, &err),
	    ATTN_ERR_DATA);
	ck_assert_msg(strstr(err.msg, "in masks bool and integers") != NULL,
	    "%s", err.msg);
	free(f.buf);
}
END_TEST

START_TEST(negative_integers_are_sign_extended)
{
	/* -1 as <i2 is 0xFFFF: a mask value -1, not 65535 */
	const unsigned char data[4] = { 0xFF, 0xFF, 0x01, 0x00 };
	struct npy_file f = npy_build(1, "{'descr': '<i2', 'fortran_order': "
	    "False, 'shape': (2,), }", 1, data, sizeof data);
	struct attn_array a;
	struct attn_error err;

	ck_assert_int_eq(npy_read(&f, ATTN_READ_BOOL, &a, &err),
	    ATTN_ERR_DATA);
	ck_assert_msg(strstr(err.msg, "a[0]: ") != NULL &&
	    strstr(err.msg, "-1") != NULL, "%s", err.msg);
	free(f.buf);
}
END_TEST

/* ---------------------------------------------------------------- order */

/*
 * Fortran order, read as NumPy reads it: the element at C index (i, j, k)
 * is the file's element i + I*j + I*J*k.  A 2x3x4 array whose Fortran
 * bytes hold 0..23 in file order must come back as numpy.asfortranarray
 * of arange would: a[i, j, k] = i + 2j + 6k.
 */
START_TEST(fortran_order_reads_as_numpy_reads_it)
{
	unsigned char data[24 * 8];
	struct attn_array a;
	struct attn_error err;
	struct npy_file f;
	size_t i, j, k;

	for (i = 0; i < 24; i++)
		put(data + 8 * i, (double)i, 8, 0);
	f = npy_build(1, "{'descr': '<f8', 'fortran_order': True, 'shape': "
	    "(2, 3, 4), }", 1, data, sizeof data);
	ck_assert_int_eq(npy_read(&f, ATTN_READ_FINITE, &a, &err), ATTN_OK);
	ck_assert_uint_eq(a.ndim, 3);
	for (i = 0; i < 2; i++)
		for (j = 0; j < 3; j++)
			for (k = 0; k < 4; k++)
				ck_assert_double_eq(a.data[(i * 3 + j) * 4 +
				    k], (double)(i + 2 * j + 6 * k));
	attn_array_free(&a);
	free(f.buf);
}
END_TEST

/*
 * A .npy read later (attn_read_npy_later), in runs of any length, reads
 * as attn_read_npy reads it whole: every dtype, both byte orders, C and
 * Fortran order, the same numbers, and the same first fault at the same
 * byte.  Case i: dtype i / 4 (f8, f4, f2), big-endian when i % 2,
 * Fortran order when i / 2 % 2; a nan at the file's element 1000 (of
 * 3 x 700) but when i % 3 == 2.
 * attn_npy_later_place lends float64 in C order, as the host has it,
 * and gives anything else zeros of the whole size.
 */
START_TEST(npy_read_later_reads_as_the_whole_file)
{
	static const char *const dtype[3] = { "f8", "f4", "f2" };
	const size_t size = _i / 4 == 0 ? 8 : _i / 4 == 1 ? 4 : 2, n = 2100;
	const int big = _i % 2, fortran = _i / 2 % 2;
	unsigned char *data = malloc(n * size);
	struct attn_array whole, later;
	struct attn_npy_later *l = NULL;
	struct attn_error err, lerr;
	enum attn_status st;
	char header[128];
	struct npy_file f;
	size_t i, k, run, first;
	double *got = malloc(n * sizeof *got);

	ck_assert_ptr_nonnull(data);
	ck_assert_ptr_nonnull(got);
	for (i = 0; i < n; i++) {
		const double x = i == 1000 && _i % 3 != 2 ? NAN :
		    (double)i / 8 - 100;

		if (size == 2) {
			/* i / 8 - 100 is exact in binary16: 11 bits */
			uint16_t h = isnan(x) ? 0x7E00 : 0;

			if (!isnan(x)) {
				/* -100 .. 162.375 by eighths as binary16 */
				double ax = fabs(x), m;
				int e = 0;

				m = frexp(ax, &e);	/* ax = m 2^e, m in [.5, 1) */
				h = ax == 0.0 ? 0 : (uint16_t)((unsigned)(e +
				    14) << 10 | ((unsigned)(m * 2048.0) &
				    0x3FF));
				if (x < 0)
					h |= 0x8000;
			}
			data[2 * i + (big ? 1 : 0)] = (unsigned char)(h & 0xFF);
			data[2 * i + (big ? 0 : 1)] = (unsigned char)(h >> 8);
		} else {
			put(data + size * i, x, size, big);
		}
	}
	snprintf(header, sizeof header, "{'descr': '%c%s', 'fortran_order': "
	    "%s, 'shape': (3, 700), }", big ? '>' : '<', dtype[_i / 4],
	    fortran ? "True" : "False");
	f = npy_build(1, header, 1, data, n * size);
	st = npy_read(&f, ATTN_READ_FINITE, &whole, &err);
	ck_assert_int_eq(attn_read_npy_later("q.npy", (const char *)f.buf,
	    f.len, ATTN_READ_FINITE, &later, &l, &lerr), ATTN_OK);
	ck_assert_ptr_null(later.data);
	ck_assert_uint_eq(later.ndim, 2);
	ck_assert_uint_eq(later.shape[0], 3);
	ck_assert_uint_eq(later.shape[1], 700);
	/* runs of 1 to 600 elements, the first fault the least of theirs */
	for (run = 1; run <= 600; run = run * 3 + 1) {
		first = SIZE_MAX;
		for (i = 0; i < n; i += k) {
			size_t bad;

			k = n - i < run ? n - i : run;
			bad = attn_npy_later_read(l, i, k, got + i);
			first = bad < first ? bad : first;
		}
		if (st != ATTN_OK) {
			/* element 1000 of the file, in C order */
			ck_assert_uint_eq(first, fortran ? 1000 % 3 * 700 +
			    1000 / 3 : 1000);
			memset(&lerr, 0, sizeof lerr);
			ck_assert_int_eq(attn_npy_later_fault(l, first, &lerr),
			    ATTN_ERR_DATA);
			ck_assert_str_eq(lerr.msg, err.msg);
			ck_assert_uint_eq(lerr.offset, err.offset);
			continue;
		}
		ck_assert_uint_eq(first, SIZE_MAX);
		for (i = 0; i < n; i++)
			ck_assert_msg(memcmp(&got[i], &whole.data[i], 8) == 0,
			    "%s element %zu: %.17g, not %.17g", header, i,
			    got[i], whole.data[i]);
	}
	ck_assert_int_eq(st != ATTN_OK, _i % 3 != 2);
	/* the place: lent where it lies, or zeros */
	ck_assert_int_eq(attn_npy_later_place(l, 1, &later, &lerr), ATTN_OK);
	if (size == 8 && !big && !fortran) {
		ck_assert_int_eq(later.lent, 1);
		ck_assert_ptr_eq(later.data, f.buf + f.len - n * size);
		ck_assert_uint_eq(attn_npy_later_read(l, 0, n, NULL),
		    st != ATTN_OK ? 1000 : SIZE_MAX);
	} else {
		ck_assert_int_eq(later.lent, 0);
		for (i = 0; i < n; i++)
			ck_assert(later.data[i] == 0.0);
	}
	attn_array_free(&later);
	attn_array_free(&whole);
	attn_npy_later_free(l);
	free(f.buf);
	free(data);
	free(got);
}
END_TEST

Suite *
npy_suite(void)
{
	Suite *s = suite_create("npy");
	TCase *dtypes = tcase_create("dtypes");
	TCase *shape = tcase_create("shapes");
	TCase *fault = tcase_create("faults");

	tcase_add_loop_test(dtypes,
	    every_dtype_reads_exactly_in_both_orders_and_every_version, 0, 18);
	tcase_add_test(dtypes, float16_infinities_and_nan_read_as_themselves);
	tcase_add_loop_test(dtypes, role_rules_apply_at_the_element, 0, 8);
	suite_add_tcase(s, dtypes);

	tcase_add_loop_test(shape, one_to_four_dimensions_keep_their_shape, 0,
	    NCASES(shapes));
	tcase_add_loop_test(shape, headers_in_any_order_spacing_and_quotes_read,
	    0, NCASES(headers));
	tcase_add_test(shape, npy_content_is_recognised_whatever_the_name);
	suite_add_tcase(s, shape);

	tcase_add_loop_test(dtypes, bool_and_integer_masks_read_as_zero_and_one,
	    0, NCASES(mask_dtypes));
	tcase_add_test(dtypes, negative_integers_are_sign_extended);
	tcase_add_loop_test(dtypes, host_floats_are_checked_a_chunk_at_a_time,
	    0, 2 * NCASES(ways));
	tcase_add_test(shape, fortran_order_reads_as_numpy_reads_it);
	tcase_add_test(shape, npy_in_two_pieces_reads_as_the_file);
	tcase_add_loop_test(shape, npy_read_later_reads_as_the_whole_file, 0,
	    12);
	tcase_add_loop_test(fault, faults_name_their_byte_and_what_was_found,
	    0, NCASES(faults));
	suite_add_tcase(s, fault);
	return s;
}
