/*
 * check_num_bulk.c - ten million numbers through attn_parse_number and
 * attn_format_number against glibc, which is correctly rounded both
 * ways: each number's shortest text reads back to it by strtod and by
 * attn_parse_number, and a quarter of them also read back from their
 * %.17g by attn_parse_number.  The numbers are random bit
 * patterns, subnormals, the neighbourhoods of the largest and of the
 * least normal double, integers about 2^53, powers of ten, short
 * decimals, and numbers of 17 digits.
 *
 * Then texts that are hard to round, each read as strtod reads it:
 * midpoints between neighbouring doubles written out in full (up to
 * some 770 digits, from long double, which holds them exactly) and a
 * hair above and below them; long random strings of digits; and numbers
 * past either end of the doubles (status 1 and an infinity where strtod
 * overflows, 0 or a subnormal where it underflows).
 *
 * Under the sanitizers (make check's second run) a tenth of the bulk
 * runs: that run looks for memory errors, the plain one at every number.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "ref.h"
#include "suites.h"

#ifdef UNDER_ASAN
#define BULK_CHUNKS 2
#else
#define BULK_CHUNKS 20		/* of BULK_CHUNK numbers: ten million */
#endif
#define BULK_CHUNK 500000
/* glibc's %.17g costs several times the rest of a round trip: one
 * number of each kind in G17_EVERY takes it. */
#define G17_EVERY 4

/* Whether a and b are the same double, to the sign of a zero. */
static int
same(double a, double b)
{
	return memcmp(&a, &b, sizeof a) == 0;
}

static double
from_bits(uint64_t bits)
{
	double x;

	memcpy(&x, &bits, sizeof x);
	return x;
}

static uint64_t
to_bits(double x)
{
	uint64_t bits;

	memcpy(&bits, &x, sizeof bits);
	return bits;
}

/* The powers of ten a double can hold, 1e-323 to 1e308, as strtod rounds
 * them. */
static double pow10_table[308 + 323 + 1];

static void
pow10_fill(void)
{
	char text[16];
	int k;

	for (k = -323; k <= 308; k++) {
		snprintf(text, sizeof text, "1e%d", k);
		pow10_table[k + 323] = strtod(text, NULL);
	}
}

/* Number i of a chunk: each kind in turn, with a random sign. */
static double
bulk_value(struct ref_rng *rng, size_t i)
{
	uint64_t r = ref_rng_next(rng), sign = r & 0x8000000000000000u;
	uint64_t near = r >> 44;	/* 0 to 2^20 - 1 */
	double x;

	switch (i % 8) {
	case 0:		/* any finite bit pattern */
		do
			x = from_bits(ref_rng_next(rng));
		while (!isfinite(x));
		return x;
	case 1:		/* subnormals and zeros */
		return from_bits(sign | (r & 0x000fffffffffffffu) >>
		    (r >> 58));
	case 2:		/* the largest doubles */
		return from_bits(sign | (to_bits(DBL_MAX) - near));
	case 3:		/* either side of the least normal double */
		return from_bits(sign | (to_bits(DBL_MIN) + near -
		    ((uint64_t)1 << 19)));
	case 4:		/* integers about 2^53, and powers of ten */
		if (r & 1)
			return pow10_table[near % (sizeof pow10_table /
			    sizeof pow10_table[0])];
		return 9007199254740992.0 + (double)near - 524288.0;
	case 5:		/* short decimals, as people write them */
		return (double)(int64_t)(near * 1000 + (r & 1023)) /
		    pow10_table[323 + (r >> 10) % 12] *
		    (sign ? -1.0 : 1.0);
	case 6:		/* 17 digits about 1, as data holds them */
		return from_bits(sign | 0x3fe0000000000000u |
		    (r & 0x001fffffffffffffu));
	default:	/* any exponent of data's range */
		return ref_rng_uniform(rng, -10.0, 10.0) *
		    pow10_table[323 + (r >> 8) % 61 - 30];
	}
}

/* x's shortest text reads back to x by strtod and by attn_parse_number;
 * with g17 set, its %.17g by attn_parse_number too. */
static void
check_round_trips(double x, int g17_too)
{
	char text[ATTN_NUM_MAX + 8], g17[40];
	size_t n;
	double y = 0;
	int rc;

	n = attn_format_number(text, x, 0, 0);
	if (n >= ATTN_NUM_MAX || n != strlen(text))
		ck_abort_msg("%a written as \"%s\" (length %zu)", x, text, n);
	if (!same(strtod(text, NULL), x))
		ck_abort_msg("%a written as \"%s\", which strtod reads as %a",
		    x, text, strtod(text, NULL));
	if ((rc = attn_parse_number(text, n, &y)) != 0 || !same(y, x))
		ck_abort_msg("%a written as \"%s\", read back as %a (status "
		    "%d)", x, text, y, rc);
	if (!g17_too)
		return;
	n = (size_t)snprintf(g17, sizeof g17, "%.17g", x);
	if ((rc = attn_parse_number(g17, n, &y)) != 0 || !same(y, x))
		ck_abort_msg("%a's %%.17g \"%s\" read as %a (status %d)", x,
		    g17, y, rc);
}

START_TEST(ten_million_numbers_round_trip)
{
	struct ref_rng rng;
	size_t i;

	pow10_fill();
	ref_rng_seed(&rng, 0x5eed0000u + (uint64_t)_i);
	for (i = 0; i < BULK_CHUNK; i++)
		check_round_trips(bulk_value(&rng, i), (i / 8) % G17_EVERY == 0);
}
END_TEST

/* text reads as strtod reads it: the same double, and status 1 exactly
 * when strtod overflows to an infinity. */
static void
check_as_strtod(const char *text)
{
	double want = strtod(text, NULL), x = 0;
	int rc = attn_parse_number(text, strlen(text), &x);

	if (rc != (isinf(want) ? 1 : 0) || !same(x, want))
		ck_abort_msg("\"%s\" read as %a (status %d), strtod reads %a",
		    text, x, rc, want);
}

/* Its sign, its digits without the point, its exponent: d.ddd x 10^e. */
struct decimal {
	char sign;
	char digits[900];
	int exp;
};

/* The decimal as text: [-]d.ddde<exp>. */
static void
decimal_text(char *buf, size_t size, const struct decimal *d)
{
	snprintf(buf, size, "%s%c.%se%d", d->sign ? "-" : "", d->digits[0],
	    d->digits + 1, d->exp);
}

/* The exact decimal expansion of m, trailing zeros dropped: glibc's
 * printf writes every digit exactly. */
static void
exact_decimal(long double m, struct decimal *d)
{
	char buf[1000], *e, *p;
	size_t k = 0;

	snprintf(buf, sizeof buf, "%.800Le", m);
	e = strchr(buf, 'e');
	d->exp = atoi(e + 1);
	for (p = buf; p < e; p++)
		if (*p >= '0' && *p <= '9')
			d->digits[k++] = *p;
	while (k > 1 && d->digits[k - 1] == '0')
		k--;
	d->digits[k] = '\0';
	ck_assert_msg(k < 790, "%La needs more digits than printed", m);
}

/* The midpoint between x (finite, >= 0) and the next double up (2^1024
 * past the largest), exactly, and a hair above and below it. */
static void
check_midpoint(double x, int sign)
{
	long double lo = x, hi = x == DBL_MAX ? ldexpl(1.0L, 1024) :
	    (long double)nextafter(x, INFINITY);
	struct decimal d;
	char text[1000];
	size_t k;

	exact_decimal((lo + hi) / 2, &d);
	d.sign = (char)sign;
	decimal_text(text, sizeof text, &d);
	check_as_strtod(text);		/* a tie: to even */
	k = strlen(d.digits);
	strcat(d.digits, "0001");
	decimal_text(text, sizeof text, &d);
	check_as_strtod(text);		/* above: up */
	d.digits[k] = '\0';
	d.digits[k - 1]--;		/* the last digit is no 0 */
	strcat(d.digits, "9999");
	decimal_text(text, sizeof text, &d);
	check_as_strtod(text);		/* below: down */
}

START_TEST(midpoints_round_as_strtod)
{
	struct ref_rng rng;
	uint64_t r;
	int i;

	ck_assert_msg(LDBL_MANT_DIG >= 55, "long double must hold a "
	    "midpoint between doubles (54 bits)");
	ref_rng_seed(&rng, 0x4d1d0000u + (uint64_t)_i);
	/* the ends first: 0 and the least subnormal, the largest double
	 * and overflow, the least normal */
	check_midpoint(0.0, 0);
	check_midpoint(DBL_MAX, 1);
	check_midpoint(nextafter(DBL_MAX, 0), 0);
	check_midpoint(nextafter(DBL_MIN, 0), 1);
	check_midpoint(DBL_MIN, 0);
	for (i = 0; i < 5000; i++) {
		r = ref_rng_next(&rng);
		switch (i % 4) {
		case 0:		/* any double */
			check_midpoint(fabs(bulk_value(&rng, 0)), (int)(r & 1));
			break;
		case 1:		/* subnormals: the longest expansions */
			check_midpoint(from_bits(r >> 12 >> (r & 63)),
			    (int)(r & 1));
			break;
		case 2:		/* data's range */
			check_midpoint(fabs(bulk_value(&rng, 7)), (int)(r & 1));
			break;
		default:	/* about 2^53: integers and halves */
			check_midpoint(ldexp(1.0, 52 + (int)(r % 4)) +
			    (double)(r >> 40), (int)(r & 1));
			break;
		}
	}
}
END_TEST

START_TEST(long_inputs_round_as_strtod)
{
	struct ref_rng rng;
	char text[1000];
	size_t i, j, k, n, point;
	int exp;

	ref_rng_seed(&rng, 0x1009u + (uint64_t)_i);
	for (i = 0; i < 25000; i++) {
		n = ref_rng_range(&rng, 18, 800);
		point = ref_rng_range(&rng, 0, n);
		k = 0;
		if (i % 2)
			text[k++] = '-';
		/* leading zeros now and then, which move no digit */
		if (i % 5 == 0)
			k += (size_t)snprintf(text + k, 8, "0000");
		for (j = 0; j < n; j++) {
			if (j == point)
				text[k++] = '.';
			text[k++] = (char)('0' + ref_rng_range(&rng, 0, 9));
		}
		/* exponents that put the value anywhere from below the
		 * least subnormal to beyond the largest double */
		exp = (int)ref_rng_range(&rng, 0, 760) - 380 - (int)point;
		snprintf(text + k, 16, "e%d", exp);
		check_as_strtod(text);
	}
}
END_TEST

Suite *
num_bulk_suite(void)
{
	Suite *s = suite_create("num_bulk");
	TCase *tc = tcase_create("round trips");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, ten_million_numbers_round_trip, 0,
	    BULK_CHUNKS);
	suite_add_tcase(s, tc);

	tc = tcase_create("hard texts");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, midpoints_round_as_strtod, 0, 4);
	tcase_add_loop_test(tc, long_inputs_round_as_strtod, 0, 4);
	suite_add_tcase(s, tc);
	return s;
}
