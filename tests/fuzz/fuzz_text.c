/*
 * fuzz_text.c - libFuzzer harness for the text reader (CSV, TSV and
 * white-space text), the reader of printed arrays (reached through AUTO)
 * and the format guess, through attn_read_array.
 *
 * Input: byte 0 chooses the format (bits 0-1: CSV, TSV, TEXT, AUTO), the
 * reader flags (bits 2-3: none, finite, bool, bias) and, for AUTO, the
 * file name whose extension the guess looks at (bits 4-7, modulo the 10
 * names: 8 and 9 name JSON Lines); the rest is the text, handed over
 * without a terminating NUL.
 *
 * Every number read is also written back with attn_format_number and
 * parsed again: the shortest form must read back to the same double;
 * every form (1 to 17 digits, plain and ATTN_NUM_FIXED) must fit in
 * ATTN_NUM_MAX and parse as a number, though rounding may take one near
 * DBL_MAX out of range.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "attn.h"
#include "attn_io.h"
#include "fuzz_check.h"

/* How many numbers of one input go through the round trip. */
#define ROUND_TRIP_MAX 16

static const enum attn_format formats[4] = {
	ATTN_FMT_CSV, ATTN_FMT_TSV, ATTN_FMT_TEXT, ATTN_FMT_AUTO
};

static const unsigned flag_choice[4] = {
	0, ATTN_READ_FINITE, ATTN_READ_BOOL, ATTN_READ_BIAS
};

/* For AUTO: an extension names the format, or the content decides. */
static const char *const names[10] = {
	"fuzz", "fuzz.csv", "fuzz.tsv", "fuzz.txt", "fuzz.json", "fuzz.npy",
	"dir.csv/fuzz", ".csv", "fuzz.jsonl", "fuzz.ndjson"
};

/* x must survive attn_format_number and attn_parse_number unchanged. */
static void
round_trip(double x)
{
	char buf[ATTN_NUM_MAX + 8];
	double y;
	size_t n;
	int digits;
	unsigned flags;

	n = attn_format_number(buf, x, 0, 0);
	if (n >= ATTN_NUM_MAX || strlen(buf) != n)
		fuzz_fail("attn_format_number overflowed its buffer", NULL);
	if (attn_parse_number(buf, n, &y) != 0)
		fuzz_fail("attn_format_number wrote what attn_parse_number "
		    "refuses", NULL);
	if (isnan(x) ? !isnan(y) : memcmp(&x, &y, sizeof x) != 0) {
		fprintf(stderr, "%.17g printed as '%s' reads back as %.17g\n",
		    x, buf, y);
		fuzz_fail("shortest round trip changed the number", NULL);
	}
	for (digits = 1; digits <= 17; digits++)
		for (flags = 0; flags <= ATTN_NUM_FIXED; flags++) {
			n = attn_format_number(buf, x, digits, flags);
			if (n >= ATTN_NUM_MAX || strlen(buf) != n)
				fuzz_fail("attn_format_number with digits "
				    "overflowed its buffer", NULL);
			/* Rounded, a number near DBL_MAX may overflow
			 * (1.8e+308): still a number, only too large. */
			if (attn_parse_number(buf, n, &y) < 0)
				fuzz_fail("attn_format_number with digits "
				    "wrote what attn_parse_number refuses",
				    NULL);
		}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct attn_array a;
	struct attn_error err;
	enum attn_format fmt;
	enum attn_status st;
	const char *buf, *name;
	unsigned flags;
	size_t len, i, n;

	if (size < 1 || size > 4096)
		return 0;
	fmt = formats[data[0] & 3];
	flags = flag_choice[(data[0] >> 2) & 3];
	name = names[(data[0] >> 4) % (sizeof names / sizeof names[0])];
	buf = (const char *)data + 1;
	len = size - 1;

	/* The guess never fails and never reads past the buffer. */
	(void)attn_format_guess(name, buf, len);

	memset(&err, 0, sizeof err);
	st = attn_read_array(name, buf, len, fmt, flags, &a, &err);
	if (st == ATTN_OK) {
		struct attn_matrix m = attn_array_matrix(&a);

		fuzz_check_array(&a, flags, len);
		if (fmt != ATTN_FMT_AUTO && a.ndim != 2)
			fuzz_fail("the text reader made an array that is not "
			    "2-D", NULL);
		n = m.rows * m.cols;
		for (i = 0; i < n && i < ROUND_TRIP_MAX; i++)
			round_trip(a.data[i]);
	} else {
		fuzz_check_error(st, &err, name, buf, len);
	}
	attn_array_free(&a);
	return 0;
}
