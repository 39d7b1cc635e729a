/*
 * read_npy.c - the NumPy .npy reader: float64, float32 and float16 in
 * either byte order (and for masks, ATTN_READ_BOOL, bool and 1- to
 * 8-byte integers, as PyTorch and NumPy masks are saved, each value then
 * held to the mask's 0/1 rule), C or Fortran order (read as NumPy reads
 * it: a C index's element found by Fortran strides), 1 to 4
 * dimensions, header versions 1.0, 2.0 and 3.0 (numpy/lib/format.py,
 * "NEP 1").
 *
 * The file is a 6-byte magic "\x93NUMPY", a major and a minor version
 * byte, the header's length (2 bytes little-endian in 1.0, 4 in 2.0 and
 * 3.0), then the header: a Python dict literal such as
 *
 *	{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }
 *
 * padded with spaces to a multiple of 64 bytes and ended by '\n', then
 * the data.  The header is parsed by a small recursive-descent reader of
 * exactly that grammar (strings in either quote, True and False, tuples of
 * whole numbers): nothing of Python is evaluated.  Padding and alignment
 * are not required, since other writers (cnpy, Julia, Rust crates) do not
 * all pad.
 *
 * Errors carry a byte offset into the file (attn_error_at_byte) and say
 * what was found: a header fault at the byte it starts, truncated data at
 * the end of the file, trailing data where it starts, a value that its
 * role forbids at the element.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
/* The magic, the version and a 4-byte header length (2.0 and 3.0). */
#define NPY_PREAMBLE_MAX 12

/* A header parse in progress: the header is buf[start..end), and pos the
 * byte reached, all as offsets into the whole file. */
struct npy_header {
	const char *name;
	const char *buf;
	size_t pos, end;
	struct attn_error *err;
	/* what it holds */
	int have_descr, have_fortran, have_shape;
	char descr[4 * 8 + 4];	/* the dtype string, as byte_preview quotes it */
	size_t descr_off, fortran_off, shape_off;
	int fortran;
	size_t ndim;		/* may exceed ATTN_MAX_DIMS: refused later */
	size_t shape[ATTN_MAX_DIMS];
};

static enum attn_status
header_fail(struct npy_header *h, size_t off, const char *fmt, ...)
    ATTN_PRINTF(3, 4);

static enum attn_status
header_fail(struct npy_header *h, size_t off, const char *fmt, ...)
{
	char msg[ATTN_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return attn_error_at_byte(h->err, ATTN_ERR_DATA, h->name, off,
	    "bad .npy header: %s", msg);
}

/*
 * Bytes for a message, so that quoting a binary file keeps it one line of
 * ASCII: printable ASCII as it is, a backslash doubled, \n, \r and \t
 * so, anything else \xNN, as Python writes a bytes literal; at most max
 * bytes of s, then "...".  buf has room for 4 * max + 4 bytes.
 */
static void
byte_preview(char *buf, size_t max, const unsigned char *s, size_t len)
{
	size_t i, n = 0;
	char e;

	for (i = 0; i < len && i < max; i++) {
		e = s[i] == '\n' ? 'n' : s[i] == '\r' ? 'r' : s[i] == '\t' ?
		    't' : s[i] == '\\' ? '\\' : 0;
		if (e != 0) {
			buf[n++] = '\\';
			buf[n++] = e;
		} else if (s[i] >= 0x20 && s[i] < 0x7F) {
			buf[n++] = (char)s[i];
		} else {
			snprintf(buf + n, 5, "\\x%02x", (unsigned)s[i]);
			n += 4;
		}
	}
	if (len > max) {
		memcpy(buf + n, "...", 3);
		n += 3;
	}
	buf[n] = '\0';
}

/* What is at the current position, for messages: "xyz..." in double
 * quotes (the header's own quotes are single), or "the end of the
 * header". */
static const char *
found(const struct npy_header *h, char *buf, size_t size)
{
	char p[4 * 12 + 4];

	if (h->pos >= h->end)
		return "the end of the header";
	byte_preview(p, 12, (const unsigned char *)h->buf + h->pos,
	    h->end - h->pos);
	snprintf(buf, size, "\"%s\"", p);
	return buf;
}

static void
skip_space(struct npy_header *h)
{
	while (h->pos < h->end && (h->buf[h->pos] == ' ' ||
	    h->buf[h->pos] == '\t' || h->buf[h->pos] == '\n' ||
	    h->buf[h->pos] == '\r'))
		h->pos++;
}

/* Expect the character c (after white space). */
static enum attn_status
expect(struct npy_header *h, char c, const char *what)
{
	char f[72];

	skip_space(h);
	if (h->pos < h->end && h->buf[h->pos] == c) {
		h->pos++;
		return ATTN_OK;
	}
	return header_fail(h, h->pos, "expected %s, found %s", what,
	    found(h, f, sizeof f));
}

/* A quoted string without escapes (none of numpy's keys or dtypes has
 * one): its contents at *s, *n bytes. */
static enum attn_status
parse_string(struct npy_header *h, const char **s, size_t *n)
{
	const char *close;
	char q, f[72];

	skip_space(h);
	if (h->pos >= h->end || (h->buf[h->pos] != '\'' &&
	    h->buf[h->pos] != '"'))
		return header_fail(h, h->pos, "expected a quoted string, "
		    "found %s", found(h, f, sizeof f));
	q = h->buf[h->pos];
	close = memchr(h->buf + h->pos + 1, q, h->end - h->pos - 1);
	if (close == NULL)
		return header_fail(h, h->pos, "unterminated string");
	*s = h->buf + h->pos + 1;
	*n = (size_t)(close - *s);
	if (memchr(*s, '\\', *n) != NULL)
		return header_fail(h, h->pos, "escapes in a string are not "
		    "part of a .npy header");
	h->pos = (size_t)(close - h->buf) + 1;
	return ATTN_OK;
}

/* True or False. */
static enum attn_status
parse_bool(struct npy_header *h, int *v)
{
	char f[72];

	skip_space(h);
	if (h->end - h->pos >= 4 && memcmp(h->buf + h->pos, "True", 4) == 0) {
		*v = 1;
		h->pos += 4;
	} else if (h->end - h->pos >= 5 &&
	    memcmp(h->buf + h->pos, "False", 5) == 0) {
		*v = 0;
		h->pos += 5;
	} else {
		return header_fail(h, h->pos, "'fortran_order' must be True or "
		    "False, found %s", found(h, f, sizeof f));
	}
	return ATTN_OK;
}

/* A whole number of a shape; one that does not fit in size_t is refused
 * here, so that every later product is of size_t values. */
static enum attn_status
parse_dim(struct npy_header *h, size_t *v)
{
	size_t start = h->pos, x = 0;
	char f[72];

	while (h->pos < h->end && h->buf[h->pos] >= '0' &&
	    h->buf[h->pos] <= '9') {
		size_t d = (size_t)(h->buf[h->pos] - '0');

		if (x > (SIZE_MAX - d) / 10)
			return header_fail(h, start, "a dimension of the shape "
			    "does not fit in %zu bits", sizeof(size_t) * 8);
		x = x * 10 + d;
		h->pos++;
	}
	if (h->pos == start)
		return header_fail(h, start, "expected a whole number in the "
		    "shape, found %s", found(h, f, sizeof f));
	*v = x;
	return ATTN_OK;
}

/* A tuple of whole numbers: (), (n,), (n, m), ... as Python writes it. */
static enum attn_status
parse_shape(struct npy_header *h)
{
	enum attn_status st;
	size_t d = 0;
	char f[72];

	skip_space(h);
	h->shape_off = h->pos;
	if (h->pos < h->end && h->buf[h->pos] >= '0' && h->buf[h->pos] <= '9')
		return header_fail(h, h->pos, "'shape' must be a tuple, such "
		    "as (3,) or (2, 3), found %s", found(h, f, sizeof f));
	if ((st = expect(h, '(', "'(' to open the shape")) != ATTN_OK)
		return st;
	h->ndim = 0;
	for (;;) {
		skip_space(h);
		if (h->pos < h->end && h->buf[h->pos] == ')')
			break;
		if ((st = parse_dim(h, &d)) != ATTN_OK)
			return st;
		if (h->ndim < ATTN_MAX_DIMS)
			h->shape[h->ndim] = d;
		h->ndim++;
		skip_space(h);
		if (h->pos < h->end && h->buf[h->pos] == ',') {
			h->pos++;
			continue;
		}
		if (h->pos < h->end && h->buf[h->pos] == ')') {
			/* (3) is the number 3 in Python, not a tuple. */
			if (h->ndim == 1)
				return header_fail(h, h->shape_off, "'shape' "
				    "(n) is a number, not a tuple: a 1-D "
				    "shape is written (n,)");
			break;
		}
		return header_fail(h, h->pos, "expected ',' or ')' in the "
		    "shape, found %s", found(h, f, sizeof f));
	}
	h->pos++;
	return ATTN_OK;
}

/* One key and its value. */
static enum attn_status
parse_item(struct npy_header *h)
{
	enum attn_status st;
	const char *key, *s;
	size_t klen, n, koff;
	char f[72];

	skip_space(h);
	koff = h->pos;
	if ((st = parse_string(h, &key, &klen)) != ATTN_OK ||
	    (st = expect(h, ':', "':' after the key")) != ATTN_OK)
		return st;
	if (klen == 5 && memcmp(key, "descr", 5) == 0) {
		if (h->have_descr++)
			return header_fail(h, koff, "'descr' given twice");
		skip_space(h);
		h->descr_off = h->pos;
		if (h->pos < h->end && h->buf[h->pos] == '[')
			return header_fail(h, h->pos, "a structured dtype (a "
			    "list of fields): attn reads arrays of float64, "
			    "float32 or float16");
		if ((st = parse_string(h, &s, &n)) != ATTN_OK)
			return st;
		/* Quoted as found; a dtype attn reads is 3 bytes, so a
		 * longer one cut short is refused all the same. */
		byte_preview(h->descr, 8, (const unsigned char *)s, n);
		return ATTN_OK;
	}
	if (klen == 13 && memcmp(key, "fortran_order", 13) == 0) {
		if (h->have_fortran++)
			return header_fail(h, koff,
			    "'fortran_order' given twice");
		skip_space(h);
		h->fortran_off = h->pos;
		return parse_bool(h, &h->fortran);
	}
	if (klen == 5 && memcmp(key, "shape", 5) == 0) {
		if (h->have_shape++)
			return header_fail(h, koff, "'shape' given twice");
		return parse_shape(h);
	}
	h->pos = koff;
	return header_fail(h, koff, "unknown key %s (a .npy header has "
	    "'descr', 'fortran_order' and 'shape')", found(h, f, sizeof f));
}

/* The whole dict, and nothing after it but white space. */
static enum attn_status
parse_header(struct npy_header *h)
{
	enum attn_status st;
	char f[72];

	if ((st = expect(h, '{', "'{' to open the header dict")) != ATTN_OK)
		return st;
	for (;;) {
		skip_space(h);
		if (h->pos < h->end && h->buf[h->pos] == '}')
			break;
		if ((st = parse_item(h)) != ATTN_OK)
			return st;
		skip_space(h);
		if (h->pos < h->end && h->buf[h->pos] == ',') {
			h->pos++;
			continue;
		}
		if (h->pos < h->end && h->buf[h->pos] == '}')
			break;
		return header_fail(h, h->pos, "expected ',' or '}' in the "
		    "header dict, found %s", found(h, f, sizeof f));
	}
	h->pos++;
	skip_space(h);
	if (h->pos < h->end)
		return header_fail(h, h->pos, "%s after the header dict",
		    found(h, f, sizeof f));
	if (!h->have_descr || !h->have_fortran || !h->have_shape)
		return header_fail(h, h->pos, "no '%s' key",
		    !h->have_descr ? "descr" : !h->have_fortran ?
		    "fortran_order" : "shape");
	return ATTN_OK;
}

/* ---------------------------------------------------------------- dtypes */

/* What a dtype string is, for the message that refuses it. */
static const char *
dtype_name(const char *d)
{
	static const struct {
		char kind;
		const char *name;
	} kinds[] = {
		{ 'i', "signed integers" }, { 'u', "unsigned integers" },
		{ 'b', "booleans" }, { 'c', "complex numbers" },
		{ 'f', "floats of another size or byte order" },
		{ 'U', "strings" },
		{ 'S', "bytes" }, { 'O', "Python objects" },
		{ 'V', "raw bytes" }, { 'M', "dates" }, { 'm', "durations" },
	};
	size_t i;
	char k = d[0] == '<' || d[0] == '>' || d[0] == '|' || d[0] == '=' ?
	    d[1] : d[0];

	for (i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		if (kinds[i].kind == k)
			return kinds[i].name;
	return "not a dtype attn knows";
}

/* The kinds of element attn reads. */
enum npy_kind { NPY_FLOAT, NPY_INT, NPY_UINT, NPY_BOOL };

/* The element size of a dtype attn reads (float16/32/64; for masks,
 * ATTN_READ_BOOL, bool and 1- to 8-byte integers, as masks are saved;
 * for offsets, ATTN_READ_INT, the integers), its kind and whether it is
 * big-endian; 0 for any other, its kind still set.  A one-byte dtype has
 * no byte order ('|'). */
static size_t
dtype_size(const char *d, unsigned flags, enum npy_kind *kind, int *big)
{
	const int ints = (flags & (ATTN_READ_BOOL | ATTN_READ_INT)) != 0;
	size_t n;

	*kind = NPY_FLOAT;
	if (strlen(d) != 3 || (d[0] != '<' && d[0] != '>' && d[0] != '|') ||
	    d[2] < '1' || d[2] > '8')
		return 0;
	n = (size_t)(d[2] - '0');
	*big = d[0] == '>';
	switch (d[1]) {
	case 'f':
		*kind = NPY_FLOAT;
		return d[0] != '|' && (n == 2 || n == 4 || n == 8) ? n : 0;
	case 'b':
		*kind = NPY_BOOL;	/* masks' alone */
		return (flags & ATTN_READ_BOOL) && n == 1 ? n : 0;
	case 'i':
	case 'u':
		*kind = d[1] == 'i' ? NPY_INT : NPY_UINT;
		return ints && (n == 1 || ((n == 2 || n == 4 || n == 8) &&
		    d[0] != '|')) ? n : 0;
	default:
		return 0;
	}
}

/* An IEEE binary16 value, exactly (every half is a double). */
static double
half_value(uint16_t b)
{
	const unsigned e = (b >> 10) & 0x1F, m = b & 0x3FF;
	const double sign = (b & 0x8000) ? -1.0 : 1.0;

	if (e == 0x1F)
		return m != 0 ? NAN : sign * INFINITY;
	if (e == 0)
		return sign * ldexp((double)m, -24);
	return sign * ldexp((double)(m | 0x400), (int)e - 25);
}

/* The element of `size` bytes at p as a double.  Its bits are put
 * together as an integer, least significant byte first in a
 * little-endian file, so the host's own byte order does not matter. */
static double
element(const unsigned char *p, size_t size, enum npy_kind kind, int big)
{
	uint64_t u = 0;
	uint32_t u32;
	size_t k;
	float f;
	double x;

	for (k = 0; k < size; k++)
		u |= (uint64_t)p[big ? size - 1 - k : k] << (8 * k);
	if (kind == NPY_UINT || kind == NPY_BOOL)
		return (double)u;
	if (kind == NPY_INT) {
		/* sign-extend from size bytes */
		if (size < 8 && (u >> (8 * size - 1)) & 1)
			u |= ~(uint64_t)0 << (8 * size);
		return (double)(int64_t)u;
	}
	if (size == 2)
		return half_value((uint16_t)u);
	if (size == 4) {
		u32 = (uint32_t)u;
		memcpy(&f, &u32, 4);
		return f;
	}
	memcpy(&x, &u, 8);
	return x;
}

_Static_assert(sizeof(float) == 4 && sizeof(double) == 8,
    "IEEE single and double precision");

/* Whether the elements are floats of 4 or 8 bytes as this host stores
 * them, in C order: then they are read as a whole (float32 widened in
 * one loop, float64 copied whole), the same values element() would put
 * together one byte at a time, and checked by first_unplain. */
static int
host_floats(const struct npy_header *h, size_t size, enum npy_kind kind,
    int big)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return kind == NPY_FLOAT && (size == sizeof(double) ||
	    size == sizeof(float)) && !big && !h->fortran;
#else
	(void)h, (void)size, (void)kind, (void)big;
	return 0;
#endif
}

int
attn_is_npy(const char *buf, size_t len)
{
	return len >= NPY_MAGIC_LEN && memcmp(buf, NPY_MAGIC, NPY_MAGIC_LEN) == 0;
}

/*
 * The loops below take CHUNK elements at a time, a count known when they
 * are compiled and a whole number of vectors of any width, and their
 * pointers are restrict: that is what GCC's -O2 vectorises (its cheapest
 * cost model takes no loop that needs a tail or a check for overlap).
 * ATTN_V3_CLONES adds a copy for AVX2, where the 64-bit integer lanes of
 * chunk_nonfinite vectorise too.  Measured in bench/README.md.
 */
#define CHUNK 512

/* CHUNK float32 at p, widened into out (exactly). */
ATTN_V3_CLONES static void
widen_chunk(double *restrict out, const float *restrict p)
{
	size_t i;

	for (i = 0; i < CHUNK; i++)
		out[i] = p[i];
}

/* n float32 at p, widened into out (exactly). */
static void
widen_floats(double *out, const unsigned char *p, size_t n)
{
	float f[CHUNK];
	size_t i = 0;

	/* the bytes at p need not be aligned for a float: copied first */
	for (; n - i >= CHUNK; i += CHUNK) {
		memcpy(f, p + i * sizeof *f, sizeof f);
		widen_chunk(out + i, f);
	}
	for (; i < n; i++) {
		memcpy(f, p + i * sizeof *f, sizeof *f);
		out[i] = f[0];
	}
}

/* Whether any of CHUNK doubles at x is an infinity or a nan: its
 * exponent bits all 1, where adding one to the exponent carries into
 * the sign bit. */
ATTN_V3_CLONES static int
chunk_nonfinite(const double *restrict x)
{
	const uint64_t exp = 0x7ff0000000000000u, one = 0x0010000000000000u;
	uint64_t odd = 0, b[CHUNK];
	size_t j;

	memcpy(b, x, sizeof b);
	for (j = 0; j < CHUNK; j++)
		odd |= (b[j] & exp) + one;
	return (int)(odd >> 63);
}

/* Whether any of CHUNK doubles at x is neither 0 nor 1. */
ATTN_V3_CLONES static int
chunk_nonbool(const double *restrict x)
{
	int odd = 0;
	size_t j;

	for (j = 0; j < CHUNK; j++)
		odd |= (x[j] != 0.0) & (x[j] != 1.0);
	return odd;
}

/* The index of the first of x[0..n) that attn_value_plain does not
 * pass for flags, n when all do: a chunk at a time, each told by a loop
 * without a branch, and searched only when it holds one. */
static size_t
first_unplain(const double *x, size_t n, unsigned flags)
{
	const int bools = (flags & ATTN_READ_BOOL) &&
	    !(flags & ATTN_READ_DROPOUT);
	size_t i, j, end;

	for (i = 0; i < n; i = end) {
		int odd = 1;

		end = n - i > CHUNK ? i + CHUNK : n;
		if (end - i == CHUNK)
			odd = bools ? chunk_nonbool(x + i) :
			    chunk_nonfinite(x + i);
		if (odd)
			for (j = i; j < end; j++)
				if (!attn_value_plain(flags, x[j]))
					return j;
	}
	return n;
}

/* "(2, 3)" for messages. */
static void
shape_text(char *buf, size_t size, const struct npy_header *h)
{
	size_t d, n;

	n = (size_t)snprintf(buf, size, "(");
	for (d = 0; d < h->ndim && d < ATTN_MAX_DIMS && n < size; d++)
		n += (size_t)snprintf(buf + n, size - n, d > 0 ? ", %zu" :
		    "%zu", h->shape[d]);
	if (n < size)
		snprintf(buf + n, size - n, h->ndim == 1 ? ",)" : ")");
}

/* "a[1, 2]": element i of an array of shape h->shape, as NumPy indexes
 * it (from 0, C order). */
static void
index_text(char *buf, size_t size, const struct npy_header *h, size_t i)
{
	size_t idx[ATTN_MAX_DIMS], d, n;

	for (d = h->ndim; d-- > 0;) {
		idx[d] = i % h->shape[d];
		i /= h->shape[d];
	}
	n = (size_t)snprintf(buf, size, "a[");
	for (d = 0; d < h->ndim && n < size; d++)
		n += (size_t)snprintf(buf + n, size - n, d > 0 ? ", %zu" :
		    "%zu", idx[d]);
	if (n < size)
		snprintf(buf + n, size - n, "]");
}

/*
 * The rule of the role for value x at element i, worded as for every
 * reader (attn_value_fault: a mask holds 0 and 1 alone, a bias no nan or
 * +inf, Q, K and V are finite) and placed by its NumPy index: a data
 * error at the element's byte, or ATTN_OK.
 */
static enum attn_status
check_value(const struct npy_header *h, unsigned flags, double x, size_t i,
    size_t off)
{
	char num[ATTN_NUM_MAX], at[96], msg[ATTN_MSG_MAX];

	/* Only a number that breaks a rule is written out, for the
	 * message (formatting each would cost more than all the rest of
	 * reading). */
	if (attn_value_plain(flags, x))
		return ATTN_OK;
	attn_format_number(num, x, 0, 0);
	if (attn_value_fault(flags, x, num, strlen(num), msg, sizeof msg) == 0)
		return ATTN_OK;
	index_text(at, sizeof at, h, i);
	return attn_error_at_byte(h->err, ATTN_ERR_DATA, h->name, off,
	    "%s: %s", at, msg);
}

/* ---------------------------------------------------------------- reader */

/* The fixed part: magic, version, header length.  Sets *start and *end
 * to the header's bytes. */
static enum attn_status
read_preamble(const char *name, const unsigned char *u, size_t len,
    size_t *start, size_t *end, struct attn_error *err)
{
	char p[4 * 8 + 4];
	size_t hlen, lenbytes;

	if (len < NPY_MAGIC_LEN || memcmp(u, NPY_MAGIC, NPY_MAGIC_LEN) != 0) {
		/* A zip (a .npz) never gets here: read.c names it. */
		byte_preview(p, 8, u, len);
		return attn_error_at_byte(err, ATTN_ERR_DATA, name, 0,
		    "not a .npy file: it starts with b'%s', not the magic "
		    "b'\\x93NUMPY'", p);
	}
	if (len < 8)
		return attn_error_at_byte(err, ATTN_ERR_DATA, name, len,
		    "truncated .npy file: it ends inside the version");
	if ((u[6] != 1 && u[6] != 2 && u[6] != 3) || u[7] != 0)
		return attn_error_at_byte(err, ATTN_ERR_DATA, name, 6,
		    ".npy format version %u.%u: attn reads 1.0, 2.0 and 3.0",
		    (unsigned)u[6], (unsigned)u[7]);
	lenbytes = u[6] == 1 ? 2 : 4;
	if (len < 8 + lenbytes)
		return attn_error_at_byte(err, ATTN_ERR_DATA, name, len,
		    "truncated .npy file: it ends inside the header length");
	hlen = (size_t)u[8] | (size_t)u[9] << 8;
	if (lenbytes == 4)
		hlen |= (size_t)u[10] << 16 | (size_t)u[11] << 24;
	*start = 8 + lenbytes;
	if (hlen > len - *start)
		return attn_error_at_byte(err, ATTN_ERR_DATA, name, len,
		    "truncated .npy file: its header length says %zu bytes, "
		    "but the file ends %zu bytes into the header", hlen,
		    len - *start);
	*end = *start + hlen;
	return ATTN_OK;
}

/* The header's dtype and shape, each checked (Fortran order is read as
 * NumPy reads it). */
static enum attn_status
check_header(struct npy_header *h, unsigned flags, size_t *size,
    enum npy_kind *kind, int *big)
{
	const int ints = (flags & (ATTN_READ_BOOL | ATTN_READ_INT)) != 0;
	char sh[96];
	size_t d;

	if ((*size = dtype_size(h->descr, flags, kind, big)) == 0 &&
	    *kind == NPY_BOOL && (flags & ATTN_READ_INT))
		return attn_error_at_byte(h->err, ATTN_ERR_DATA, h->name,
		    h->descr_off, "dtype '%s' (bool): sequence lengths and "
		    "offsets are whole numbers from 0 (integers i1..i8, "
		    "u1..u8, or floats), not true and false", h->descr);
	if (*size == 0)
		return attn_error_at_byte(h->err, ATTN_ERR_DATA, h->name,
		    h->descr_off, "dtype '%s' (%s): attn reads float64, "
		    "float32 or float16 (<f8, <f4, <f2, or >f8, >f4, >f2)%s; "
		    "convert with a.astype(numpy.float64)", h->descr,
		    dtype_name(h->descr), flags & ATTN_READ_INT ? ", and "
		    "integers (i1..i8, u1..u8)" : ints ? ", and bool or "
		    "integer masks (|b1, i1..i8, u1..u8)" : ", and in masks "
		    "bool and integers");
	if (h->ndim == 0 || h->ndim > ATTN_MAX_DIMS)
		return attn_error_at_byte(h->err, ATTN_ERR_DATA, h->name,
		    h->shape_off, "a %zu-D array: attn reads 1- to 4-D arrays",
		    h->ndim);
	shape_text(sh, sizeof sh, h);
	for (d = 0; d < h->ndim; d++)
		if (h->shape[d] == 0)
			return attn_error_at_byte(h->err, ATTN_ERR_DATA,
			    h->name, h->shape_off, "empty array: shape %s",
			    sh);
	return ATTN_OK;
}

/* The element of C index i in the file's order: i itself in C order;
 * in Fortran order, the first index varies fastest, as NumPy reads it. */
static size_t
file_index(const struct npy_header *h, size_t i)
{
	size_t idx[ATTN_MAX_DIMS], d, stride = 1, at = 0;

	if (!h->fortran)
		return i;
	for (d = h->ndim; d-- > 0;) {
		idx[d] = i % h->shape[d];
		i /= h->shape[d];
	}
	for (d = 0; d < h->ndim; d++) {
		at += idx[d] * stride;
		stride *= h->shape[d];
	}
	return at;
}

/*
 * What the .npy of total bytes, whose first len of them are buf, holds:
 * its header parsed into *h, the size, kind and byte order of an
 * element, and *count elements, which the bytes after the header must
 * be, no more, no fewer.  When buf ends before the header does, *need
 * is the bytes to have before asking again (the preamble's 12, then the
 * header's end), else 0.  Each error is the one a read of the whole file
 * gives, at its byte.
 */
static enum attn_status
npy_layout(const char *name, const char *buf, size_t len, size_t total,
    unsigned flags, struct npy_header *h, size_t *size,
    enum npy_kind *kind, int *big, size_t *count, size_t *need,
    struct attn_error *err)
{
	const unsigned char *u = (const unsigned char *)buf;
	enum attn_status st;
	size_t start = 0, bytes, have, d;
	char sh[96];

	memset(h, 0, sizeof *h);
	/* read_preamble reads at most the first 12 bytes, and takes total
	 * for the file's end. */
	*need = total < NPY_PREAMBLE_MAX ? total : NPY_PREAMBLE_MAX;
	if (len < *need)
		return ATTN_OK;
	if ((st = read_preamble(name, u, total, &start, &h->end, err)) !=
	    ATTN_OK)
		return st;
	if ((*need = len < h->end ? h->end : 0) != 0)
		return ATTN_OK;
	h->name = name;
	h->buf = buf;
	h->pos = start;
	h->err = err;
	if ((st = parse_header(h)) != ATTN_OK ||
	    (st = check_header(h, flags, size, kind, big)) != ATTN_OK)
		return st;

	/* The data: exactly the bytes the shape needs. */
	shape_text(sh, sizeof sh, h);
	*count = 1;
	for (d = 0; d < h->ndim; d++)
		if (attn_size_mul(*count, h->shape[d], count) != 0)
			return attn_error_at_byte(err, ATTN_ERR_DATA, name,
			    h->shape_off, "shape %s has more elements than "
			    "%zu bits can count", sh, sizeof(size_t) * 8);
	if (attn_size_mul(*count, *size, &bytes) != 0)
		return attn_error_at_byte(err, ATTN_ERR_DATA, name,
		    h->shape_off, "shape %s of %s is more bytes than %zu bits "
		    "can count", sh, h->descr, sizeof(size_t) * 8);
	have = total - h->end;
	if (have < bytes)
		return attn_error_at_byte(err, ATTN_ERR_DATA, name, total,
		    "truncated .npy data: shape %s of %s needs %zu bytes but "
		    "the file has %zu after its header", sh, h->descr, bytes,
		    have);
	if (have > bytes)
		return attn_error_at_byte(err, ATTN_ERR_DATA, name,
		    h->end + bytes, "%zu bytes of trailing data after the %zu "
		    "of shape %s of %s", have - bytes, bytes, sh, h->descr);
	return ATTN_OK;
}

enum attn_status
attn_npy_declared(const char *name, const char *buf, size_t len,
    size_t total, unsigned flags, size_t *need, size_t *count,
    struct attn_array *dims, struct attn_error *err)
{
	struct npy_header h;
	enum npy_kind kind = NPY_FLOAT;
	enum attn_status st;
	size_t size = 0;
	int big = 0;

	*count = 0;
	memset(dims, 0, sizeof *dims);
	st = npy_layout(name, buf, len, total, flags, &h, &size, &kind, &big,
	    count, need, err);
	if (st == ATTN_OK && *need == 0) {
		dims->ndim = h.ndim;
		memcpy(dims->shape, h.shape, sizeof dims->shape);
	}
	return st;
}

/*
 * The elements of the .npy whose header h describes, from data (the
 * bytes after the header, wherever they lie) into out: read in place
 * (ATTN_READ_IN_PLACE, float64 as this host has it, aligned), or into a
 * block of their own.  Offsets in messages are the file's (h->end on).
 */
static enum attn_status
npy_elements(const struct npy_header *h, const unsigned char *data,
    size_t size, enum npy_kind kind, int big, size_t count, unsigned flags,
    struct attn_array *out)
{
	const int whole = host_floats(h, size, kind, big);
	enum attn_status st;
	size_t i = 0;

	if (whole && size == sizeof(double) && (flags & ATTN_READ_IN_PLACE) &&
	    (uintptr_t)data % _Alignof(double) == 0) {
		out->data = (double *)(uintptr_t)data;
		out->lent = 1;
	} else if ((out->data = attn_mem_array(count, sizeof(double))) ==
	    NULL) {
		char doing[64];

		snprintf(doing, sizeof doing, "reading %zu numbers", count);
		return attn_error_input_nomem(h->err, h->name, doing);
	}
	out->ndim = h->ndim;
	memcpy(out->shape, h->shape, sizeof out->shape);
	/* Floats as this host has them are read whole, and checked element
	 * by element only from the first that is not plain on. */
	if (whole && !out->lent && size == sizeof(double))
		memcpy(out->data, data, count * sizeof(double));
	else if (whole && !out->lent)
		widen_floats(out->data, data, count);
	if (whole)
		i = first_unplain(out->data, count, flags);
	for (; i < count; i++) {
		const size_t at = file_index(h, i) * size;

		if (!whole)
			out->data[i] = element(data + at, size, kind, big);
		if ((st = check_value(h, flags, out->data[i], i, h->end +
		    at)) != ATTN_OK) {
			attn_array_free(out);
			return st;
		}
	}
	return ATTN_OK;
}

/* The bytes of a .npy in two pieces, hlen and dlen, into *total. */
static enum attn_status
parts_total(const char *name, size_t hlen, size_t dlen, size_t *total,
    struct attn_error *err)
{
	if (dlen > SIZE_MAX - hlen)
		return attn_error_set(err, ATTN_ERR_DATA, name, 0, 0,
		    "a header of %zu bytes and data of %zu are more bytes "
		    "than %zu bits can count", hlen, dlen,
		    sizeof(size_t) * 8);
	*total = hlen + dlen;
	return ATTN_OK;
}

/* A header piece of hlen bytes that is not the header whose npy_layout
 * said need and h (one cut where the data starts) refused. */
static enum attn_status
parts_cut(const char *name, size_t hlen, size_t need,
    const struct npy_header *h, struct attn_error *err)
{
	if (need == 0 && h->end == hlen)
		return ATTN_OK;
	return attn_error_at_byte(err, ATTN_ERR_DATA, name, hlen,
	    "the header's piece is %zu bytes, and the header %zu: a .npy in "
	    "two pieces is cut where its data starts", hlen,
	    need != 0 ? need : h->end);
}

enum attn_status
attn_npy_parts_declared(const char *name, const char *head, size_t hlen,
    size_t dlen, unsigned flags, size_t *count, struct attn_array *dims,
    struct attn_error *err)
{
	struct npy_header h;
	enum npy_kind kind = NPY_FLOAT;
	enum attn_status st;
	size_t size = 0, total = 0, need = 0;
	int big = 0;

	*count = 0;
	memset(dims, 0, sizeof *dims);
	if ((st = parts_total(name, hlen, dlen, &total, err)) != ATTN_OK ||
	    (st = npy_layout(name, head, hlen, total, flags, &h, &size, &kind,
	    &big, count, &need, err)) != ATTN_OK ||
	    (st = parts_cut(name, hlen, need, &h, err)) != ATTN_OK)
		return st;
	dims->ndim = h.ndim;
	memcpy(dims->shape, h.shape, sizeof dims->shape);
	return ATTN_OK;
}

/* A .npy of total bytes whose first hlen are at head: its data at data,
 * or when data is NULL after the header in head (then hlen is total). */
static enum attn_status
npy_read(const char *name, const char *head, size_t hlen, size_t total,
    const void *data, unsigned flags, struct attn_array *out,
    struct attn_error *err)
{
	struct npy_header h;
	enum attn_status st;
	size_t size = 0, count = 0, need;
	enum npy_kind kind = NPY_FLOAT;
	int big = 0;

	memset(out, 0, sizeof *out);
	if ((st = npy_layout(name, head, hlen, total, flags, &h, &size, &kind,
	    &big, &count, &need, err)) != ATTN_OK)
		return st;
	if (data == NULL)
		data = head + h.end;
	else if ((st = parts_cut(name, hlen, need, &h, err)) != ATTN_OK)
		return st;
	return npy_elements(&h, data, size, kind, big, count, flags, out);
}

enum attn_status
attn_read_npy(const char *name, const char *buf, size_t len, unsigned flags,
    struct attn_array *out, struct attn_error *err)
{
	return npy_read(name, buf, len, len, NULL, flags, out, err);
}

enum attn_status
attn_read_npy_parts(const char *name, const char *head, size_t hlen,
    const void *data, size_t dlen, unsigned flags, struct attn_array *out,
    struct attn_error *err)
{
	enum attn_status st;
	size_t total = 0;

	if ((st = parts_total(name, hlen, dlen, &total, err)) != ATTN_OK) {
		memset(out, 0, sizeof *out);
		return st;
	}
	/* an empty array's data may be anywhere, NULL too */
	return npy_read(name, head, hlen, total, data != NULL ? data : "",
	    flags, out, err);
}

/* ---------------------------------------------------------- read later */

/* A .npy's elements, read a run at a time (attn_private.h). */
struct attn_npy_later {
	struct npy_header h;	/* its err is set for each message */
	const unsigned char *data;
	size_t size, count;
	enum npy_kind kind;
	int big, whole;
	unsigned flags;
};

enum attn_status
attn_read_npy_later(const char *name, const char *buf, size_t len,
    unsigned flags, struct attn_array *out, struct attn_npy_later **later,
    struct attn_error *err)
{
	struct attn_npy_later l;
	enum attn_status st;
	size_t need = 0;

	memset(out, 0, sizeof *out);
	*later = NULL;
	memset(&l, 0, sizeof l);
	l.kind = NPY_FLOAT;
	l.flags = flags;
	if ((st = npy_layout(name, buf, len, len, flags, &l.h, &l.size,
	    &l.kind, &l.big, &l.count, &need, err)) != ATTN_OK)
		return st;
	l.data = (const unsigned char *)buf + l.h.end;
	l.whole = host_floats(&l.h, l.size, l.kind, l.big);
	l.h.err = NULL;
	if ((*later = malloc(sizeof **later)) == NULL)
		return attn_error_input_nomem(err, name, "reading a header");
	**later = l;
	out->ndim = l.h.ndim;
	memcpy(out->shape, l.h.shape, sizeof out->shape);
	return ATTN_OK;
}

/* Its elements where they lie, when they are float64 as this host has
 * them, in C order and aligned; else NULL. */
static const double *
later_data(const struct attn_npy_later *l)
{
	return l->whole && l->size == sizeof(double) &&
	    (uintptr_t)l->data % _Alignof(double) == 0 ?
	    (const double *)(const void *)l->data : NULL;
}

enum attn_status
attn_npy_later_place(const struct attn_npy_later *l, int in_place,
    struct attn_array *a, struct attn_error *err)
{
	char doing[64];

	if (in_place && later_data(l) != NULL) {
		a->data = (double *)(uintptr_t)later_data(l);
		a->lent = 1;
		return ATTN_OK;
	}
	/* zeros, on pages untouched until a row is read into them */
	if ((a->data = attn_mem_zalloc(l->count * sizeof(double))) != NULL)
		return ATTN_OK;
	snprintf(doing, sizeof doing, "reading %zu numbers", l->count);
	return attn_error_input_nomem(err, l->h.name, doing);
}

size_t
attn_npy_later_read(const struct attn_npy_later *l, size_t i, size_t n,
    double *to)
{
	const double *x = to != NULL ? to : later_data(l) + i;
	char num[ATTN_NUM_MAX], msg[ATTN_MSG_MAX];
	size_t j;

	if (to != NULL && l->whole && l->size == sizeof(double))
		memcpy(to, l->data + i * l->size, n * sizeof *to);
	else if (to != NULL && l->whole)
		widen_floats(to, l->data + i * l->size, n);
	else if (to != NULL)
		for (j = 0; j < n; j++)
			to[j] = element(l->data + file_index(&l->h, i + j) *
			    l->size, l->size, l->kind, l->big);
	/* the first that breaks the role's rule, as check_value tells it */
	for (j = 0; (j += first_unplain(x + j, n - j, l->flags)) < n; j++) {
		attn_format_number(num, x[j], 0, 0);
		if (attn_value_fault(l->flags, x[j], num, strlen(num), msg,
		    sizeof msg) != 0)
			return i + j;
	}
	return SIZE_MAX;
}

enum attn_status
attn_npy_later_fault(const struct attn_npy_later *l, size_t i,
    struct attn_error *err)
{
	struct npy_header h = l->h;
	const size_t at = file_index(&h, i) * l->size;

	h.err = err;
	return check_value(&h, l->flags, element(l->data + at, l->size,
	    l->kind, l->big), i, h.end + at);
}

void
attn_npy_later_free(struct attn_npy_later *l)
{
	free(l);
}
