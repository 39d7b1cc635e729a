/*
 * check_num.c - numbers in and out: attn_parse_number and
 * attn_format_number, in the C locale and in one with a decimal comma.
 *
 * Expected values of the parse tests are C literals of the same text:
 * the compiler rounds literals correctly, so it is an independent oracle
 * for correct rounding.  The formatter is checked on known answers and on
 * thousands of seeded random bit patterns (every exponent, subnormals
 * included) for exact read-back and against the slow exact oracle: the
 * first of %.15g, %.16g, %.17g that reads back (of %.1g to %.17g for a
 * subnormal).  check_num_bulk.c takes ten million more against strtod.
 */
#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "ref.h"
#include "suites.h"

/* ---------------------------------------------------------------- parse */

/* A text that parses (status 0) to exactly the expected value. */
struct parse_case {
	const char *text;
	double value;
};

static const struct parse_case valid_cases[] = {
	{ "0", 0.0 },
	{ "1", 1.0 },
	{ "+1", 1.0 },
	{ "-1", -1.0 },
	{ "1.", 1.0 },
	{ ".5", 0.5 },
	{ "-.5", -0.5 },
	{ "1.5e3", 1500.0 },
	{ "1E3", 1000.0 },
	{ "1e+3", 1000.0 },
	{ "1e-3", 1e-3 },
	{ "2.5E-3", 2.5e-3 },
	{ "007", 7.0 },
	{ "0.1", 0.1 },
	{ "-123.456", -123.456 },
	{ "1e0", 1.0 },
	{ "6.02214076e23", 6.02214076e23 },
	/* correct rounding, decided by the compiler's own conversion */
	{ "0.3", 0.3 },
	{ "2.2250738585072011e-308", 2.2250738585072011e-308 },
	{ "2.2250738585072014e-308", DBL_MIN },
	{ "1.7976931348623157e308", DBL_MAX },
	{ "1.7976931348623158e308", DBL_MAX },
	{ "9007199254740993", 9007199254740992.0 },	/* tie: to even */
	{ "9007199254740995", 9007199254740996.0 },	/* tie: to even */
	{ "9007199254740993.0000000000000000000001", 9007199254740994.0 },
	{ "1234567890123456789012345678901234567890",
	    1234567890123456789012345678901234567890.0 },
	{ "0.1000000000000000055511151231257827021181583404541015625", 0.1 },
	{ "0.1000000000000000055511151231257827021181583404541015624", 0.1 },
	{ "0.0000000000000000000000000000000000000001234567890123456789",
	    1.234567890123456789e-40 },
	/* longer than the parser's stack buffer */
	{ "3.14159265358979323846264338327950288419716939937510582097494459"
	    "230781640628620899862803482534211706798214808651",
	    0x1.921fb54442d18p+1 },
	/* the subnormal range and its boundaries */
	{ "4.9406564584124654e-324", 0x1p-1074 },
	{ "2.4703282292062328e-324", 0x1p-1074 },	/* just over half */
	{ "2.4703282292062327e-324", 0.0 },	/* just under half */
	{ "2.225073858507201e-308", 0x0.fffffffffffffp-1022 },
	{ "1e-310", 1e-310 },
	{ "1e-400", 0.0 },	/* underflow is not an error */
	{ "1e-99999999999999999999", 0.0 },
	{ "0.0000000001e-330", 0.0 },
	{ "100000000000000000000e-330", 1e-310 },
	{ "0e999999999999", 0.0 },	/* zero is no overflow */
	{ "0.000e99999", 0.0 },
};

#define NVALID (int)(sizeof valid_cases / sizeof valid_cases[0])

START_TEST(valid_numbers_parse_correctly_rounded)
{
	const struct parse_case *pc = &valid_cases[_i];
	double x = -42.0;
	int rc;

	rc = attn_parse_number(pc->text, strlen(pc->text), &x);
	ck_assert_msg(rc == 0, "\"%s\": status %d", pc->text, rc);
	ck_assert_msg(x == pc->value, "\"%s\" read as %a, want %a", pc->text,
	    x, pc->value);
}
END_TEST

START_TEST(minus_zero_keeps_its_sign)
{
	double x = 1.0;

	ck_assert_int_eq(attn_parse_number("-0", 2, &x), 0);
	ck_assert(x == 0.0);
	ck_assert(signbit(x));
	ck_assert_int_eq(attn_parse_number("0", 1, &x), 0);
	ck_assert(!signbit(x));
	/* and so does a negative number too small for a double */
	ck_assert_int_eq(attn_parse_number("-1e-400", 7, &x), 0);
	ck_assert(x == 0.0);
	ck_assert(signbit(x));
}
END_TEST

/* Bytes that are not one number; len is explicit for embedded NULs. */
struct bad_case {
	const char *text;
	size_t len;
};

#define BAD(s) { s, sizeof s - 1 }

static const struct bad_case invalid_cases[] = {
	BAD("0x10"), BAD("1e"), BAD("."), BAD(""), BAD(" 1"), BAD("1 "),
	BAD("1,5"), BAD("--1"), BAD("nan(1)"), BAD("+"), BAD("-"),
	BAD("e5"), BAD("1e+"), BAD("1e-"), BAD("1.5.2"), BAD("1..5"),
	BAD(".e1"), BAD("+-1"), BAD("\t1"), BAD("1\n"), BAD("1\r"),
	BAD("1d"), BAD("1f"), BAD("1_000"), BAD("0b1"), BAD("infinit"),
	BAD("infinityy"), BAD("inff"), BAD("in"), BAD("na"), BAD("nanq"),
	BAD("--inf"), BAD("+-nan"), BAD("1e5.5"), BAD("1\0" "2"),
	BAD("\xD9\xA3"), BAD("\xEF\xBC\x91"), BAD("true"),
	BAD("0.0000000000000000000000000000000000000000000000000000000000001x"),
	/* a number beyond the doubles, then more: not a number at all */
	BAD("1e999x"), BAD("1e-999x"), BAD("1e999.5"), BAD("1e99999999999999999999x"),
	BAD("1.e"), BAD("1.e+"), BAD(".5e"), BAD("1.5e+-3"), BAD("+.e1"),
};

#define NINVALID (int)(sizeof invalid_cases / sizeof invalid_cases[0])

START_TEST(invalid_numbers_are_refused)
{
	const struct bad_case *bc = &invalid_cases[_i];
	double x = 0.0;
	int rc;

	rc = attn_parse_number(bc->text, bc->len, &x);
	ck_assert_msg(rc == -1, "case %d (\"%s\"): status %d, value %g", _i,
	    bc->text, rc, x);
}
END_TEST

/* A spelling of a non-finite value; sign is +1, -1, or 0 for nan. */
struct nonfinite_case {
	const char *text;
	int sign;
};

static const struct nonfinite_case nonfinite_cases[] = {
	{ "inf", 1 }, { "-inf", -1 }, { "+inf", 1 }, { "Inf", 1 },
	{ "INF", 1 }, { "-Inf", -1 }, { "infinity", 1 },
	{ "-Infinity", -1 }, { "INFINITY", 1 }, { "+infinity", 1 },
	{ "nan", 0 }, { "NaN", 0 }, { "NAN", 0 }, { "-nan", 0 },
	{ "+nan", 0 },
};

#define NNONFINITE (int)(sizeof nonfinite_cases / sizeof nonfinite_cases[0])

START_TEST(inf_and_nan_spellings_parse)
{
	const struct nonfinite_case *nc = &nonfinite_cases[_i];
	double x = 0.0;

	ck_assert_int_eq(attn_parse_number(nc->text, strlen(nc->text), &x), 0);
	if (nc->sign == 0) {
		ck_assert_msg(isnan(x), "\"%s\" read as %g", nc->text, x);
	} else {
		ck_assert_msg(isinf(x), "\"%s\" read as %g", nc->text, x);
		ck_assert_int_eq(signbit(x) != 0, nc->sign < 0);
	}
}
END_TEST

/* Finite text beyond the largest double: status 1 and a signed inf. */
struct range_case {
	const char *text;
	double value;
};

static const struct range_case range_cases[] = {
	{ "1e999", INFINITY },
	{ "-1e999", -INFINITY },
	{ "1e400", INFINITY },
	{ "1.7976931348623159e308", INFINITY },
	{ "-2e308", -INFINITY },
	{ "1e99999999999999999999", INFINITY },
	{ "0.00000000000000000001e330", INFINITY },
	{ "-100000e304", -INFINITY },
};

#define NRANGE (int)(sizeof range_cases / sizeof range_cases[0])

START_TEST(out_of_range_numbers_return_one_and_inf)
{
	const struct range_case *rc = &range_cases[_i];
	double x = 0.0;

	ck_assert_int_eq(attn_parse_number(rc->text, strlen(rc->text), &x), 1);
	ck_assert(x == rc->value);
}
END_TEST

/* Parse the first len bytes of text from a heap copy with no NUL after
 * them, so that AddressSanitizer catches any read past s[len - 1]. */
static int
parse_unterminated(const char *text, size_t len, double *x)
{
	char *copy = malloc(len != 0 ? len : 1);
	int rc;

	ck_assert_ptr_nonnull(copy);
	memcpy(copy, text, len);
	rc = attn_parse_number(copy, len, x);
	free(copy);
	return rc;
}

START_TEST(parse_reads_only_len_bytes)
{
	static const char long_text[] =
	    "1.2345678901234567890123456789012345678901234567890123456789"
	    "0123456789e3xyz";
	double x = 0.0;

	ck_assert_int_eq(parse_unterminated("1234", 2, &x), 0);
	ck_assert_double_eq(x, 12.0);
	ck_assert_int_eq(parse_unterminated("0.5e7", 3, &x), 0);
	ck_assert_double_eq(x, 0.5);
	ck_assert_int_eq(parse_unterminated("1e5x", 3, &x), 0);
	ck_assert_double_eq(x, 1e5);
	ck_assert_int_eq(parse_unterminated("infinity", 3, &x), 0);
	ck_assert(isinf(x) && x > 0);
	ck_assert_int_eq(parse_unterminated("nan(1)", 3, &x), 0);
	ck_assert(isnan(x));
	ck_assert_int_eq(parse_unterminated("1e", 1, &x), 0);
	ck_assert_double_eq(x, 1.0);
	ck_assert_int_eq(parse_unterminated("7", 0, &x), -1);
	/* the heap path for long numbers respects len too */
	ck_assert_int_eq(parse_unterminated(long_text, sizeof long_text - 4,
	    &x), 0);
	ck_assert_double_eq(x, 1.2345678901234567890123456789012345678901e3);
	ck_assert_int_eq(parse_unterminated(long_text, sizeof long_text - 1,
	    &x), -1);
}
END_TEST

/* ---------------------------------------------------------------- format */

/* attn_format_number(x, digits, flags) must write exactly text. */
struct format_case {
	double x;
	int digits;
	unsigned flags;
	const char *text;
};

static const struct format_case format_cases[] = {
	/* shortest round trip (digits 0) */
	{ 0.1, 0, 0, "0.1" },
	{ 1.0 / 3, 0, 0, "0.3333333333333333" },
	{ 2.0 / 3, 0, 0, "0.6666666666666666" },
	{ 0.0, 0, 0, "0" },
	{ 1.0, 0, 0, "1" },
	{ -2.5, 0, 0, "-2.5" },
	{ 100.0, 0, 0, "100" },
	{ 1e21, 0, 0, "1e+21" },
	{ 1e-5, 0, 0, "1e-05" },
	{ 0.7071067811865476, 0, 0, "0.7071067811865476" },
	{ 0.6697615493266569, 0, 0, "0.6697615493266569" },
	{ 9007199254740992.0, 0, 0, "9007199254740992" },
	{ 123456789012345680.0, 0, 0, "1.2345678901234568e+17" },
	{ DBL_MAX, 0, 0, "1.7976931348623157e+308" },
	{ DBL_MIN, 0, 0, "2.2250738585072014e-308" },
	/* a subnormal has fewer digits than 15 of its own */
	{ 0x1p-1074, 0, 0, "5e-324" },
	{ -0x1p-1074, 0, 0, "-5e-324" },
	{ 1e-310, 0, 0, "1e-310" },
	{ 0x0.fffffffffffffp-1022, 0, 0, "2.225073858507201e-308" },
	/* where %g's layout turns: a point below 10^precision, an exponent
	 * from there and below 10^-4 */
	{ -0.0, 0, 0, "-0" },
	{ 1e14, 0, 0, "100000000000000" },
	{ 1e15, 0, 0, "1e+15" },
	{ 1234567890123456.0, 0, 0, "1234567890123456" },
	{ 12345678901234568.0, 0, 0, "12345678901234568" },
	{ 9.5e15, 0, 0, "9.5e+15" },
	{ 0.0001, 0, 0, "0.0001" },
	{ -0.00012345678901234567, 0, 0, "-0.00012345678901234567" },
	{ 0.000012345, 0, 0, "1.2345e-05" },
	{ 123.456, 0, 0, "123.456" },
	{ 1.5e300, 0, 0, "1.5e+300" },
	{ 2.5e-100, 0, 0, "2.5e-100" },
	/* each way the digits are laid out in place: right of "0.0..",
	 * left over the point, fewer than the whole part (zeros), as many */
	{ 0.001, 0, 0, "0.001" },
	{ -0.5, 0, 0, "-0.5" },
	{ 0.05, 0, 0, "0.05" },
	{ 7.0, 0, 0, "7" },
	{ 123.0, 0, 0, "123" },
	{ -1200.0, 0, 0, "-1200" },
	{ 1.2345678901234567, 0, 0, "1.2345678901234567" },
	{ -98765.4321, 0, 0, "-98765.4321" },
	/* that many significant digits (%.*g) */
	{ 3.14159, 3, 0, "3.14" },
	{ 0.5, 3, 0, "0.5" },
	{ 1234567.0, 4, 0, "1.235e+06" },
	{ 0.1, 17, 0, "0.10000000000000001" },
	{ 2.0 / 3, 1, 0, "0.7" },
	{ -0.000123456, 2, 0, "-0.00012" },
	{ 1.0, 4, 0, "1" },
	/* ATTN_NUM_FIXED: trailing zeros kept, small integers plain */
	{ 0.67, 3, ATTN_NUM_FIXED, "0.670" },
	{ 6.7, 3, ATTN_NUM_FIXED, "6.70" },
	{ 1.0, 3, ATTN_NUM_FIXED, "1" },
	{ 0.0, 3, ATTN_NUM_FIXED, "0" },
	{ -4.0, 4, ATTN_NUM_FIXED, "-4" },
	{ 999.0, 3, ATTN_NUM_FIXED, "999" },
	{ 0.7071067811865476, 3, ATTN_NUM_FIXED, "0.707" },
	{ 0.5, 4, ATTN_NUM_FIXED, "0.5000" },
	{ 12345.0, 3, ATTN_NUM_FIXED, "1.23e+04" },
	{ 1000.0, 3, ATTN_NUM_FIXED, "1.00e+03" },
	{ 1e-5, 3, ATTN_NUM_FIXED, "1.00e-05" },
	{ -1e-300, 3, ATTN_NUM_FIXED, "-1.00e-300" },
	{ 0.6697615493266569, 4, ATTN_NUM_FIXED, "0.6698" },
	/* rounding that carries into a new power of ten keeps its zeros */
	{ 999.6, 3, ATTN_NUM_FIXED, "1.00e+03" },
	{ -999.6, 3, ATTN_NUM_FIXED, "-1.00e+03" },
	{ 99999.5, 5, ATTN_NUM_FIXED, "1.0000e+05" },
	{ 9.9996, 3, ATTN_NUM_FIXED, "10.0" },
	{ 0.9996, 3, ATTN_NUM_FIXED, "1.00" },
	{ 0.000099996, 3, ATTN_NUM_FIXED, "0.000100" },
	{ 0.0000099996, 3, ATTN_NUM_FIXED, "1.00e-05" },
	/* one digit leaves no bare point, and -0 is 0 */
	{ 7.2, 1, ATTN_NUM_FIXED, "7" },
	{ -7.2, 1, ATTN_NUM_FIXED, "-7" },
	{ 9.96, 1, ATTN_NUM_FIXED, "1e+01" },
	{ 0.72, 1, ATTN_NUM_FIXED, "0.7" },
	{ 213.5, 1, ATTN_NUM_FIXED, "2e+02" },
	{ -0.00012, 1, ATTN_NUM_FIXED, "-0.0001" },
	{ 999.6, 1, ATTN_NUM_FIXED, "1e+03" },
	{ 7.2, 2, ATTN_NUM_FIXED, "7.2" },
	{ -0.0, 4, ATTN_NUM_FIXED, "0" },
	{ -0.0, 1, ATTN_NUM_FIXED, "0" },
	/* non-finite values in every mode */
	{ INFINITY, 0, 0, "inf" },
	{ -INFINITY, 0, 0, "-inf" },
	{ NAN, 0, 0, "nan" },
	{ INFINITY, 3, ATTN_NUM_FIXED, "inf" },
	{ -INFINITY, 4, 0, "-inf" },
	{ NAN, 3, ATTN_NUM_FIXED, "nan" },
	{ -NAN, 17, 0, "nan" },
};

#define NFORMAT (int)(sizeof format_cases / sizeof format_cases[0])

START_TEST(numbers_format_as_expected)
{
	const struct format_case *fc = &format_cases[_i];
	char buf[ATTN_NUM_MAX];
	size_t n;

	n = attn_format_number(buf, fc->x, fc->digits, fc->flags);
	ck_assert_str_eq(buf, fc->text);
	ck_assert_uint_eq(n, strlen(fc->text));
}
END_TEST

/* A random finite double with a random sign, exponent and significand. */
static double
random_double(struct ref_rng *rng)
{
	for (;;) {
		uint64_t bits = ref_rng_next(rng);
		double x;

		memcpy(&x, &bits, sizeof x);
		if (isfinite(x))
			return x;
	}
}

/* The text the shortest mode must write: the first of %.15g, %.16g,
 * %.17g that reads back to x, or for a subnormal of %.1g to %.17g.
 * Returns that precision.  The slow exact version, a loop of snprintf
 * and strtod, independent of num.c's std::to_chars. */
static int
shortest_oracle(char *buf, size_t size, double x)
{
	int p;

	for (p = fabs(x) < DBL_MIN ? 1 : 15; p < 17; p++) {
		snprintf(buf, size, "%.*g", p, x);
		if (strtod(buf, NULL) == x)
			return p;
	}
	snprintf(buf, size, "%.17g", x);
	return 17;
}

START_TEST(shortest_format_reads_back_exactly)
{
	struct ref_rng rng;
	char buf[ATTN_NUM_MAX], want[64];
	int i, used[18] = { 0 };

	ref_rng_seed(&rng, 20240601u + (uint64_t)_i);
	for (i = 0; i < 5000; i++) {
		double x = i % 2 ? random_double(&rng) :
		    ref_rng_uniform(&rng, -1e3, 1e3);
		size_t n = attn_format_number(buf, x, 0, 0);

		if (strtod(buf, NULL) != x || n != strlen(buf) ||
		    n >= ATTN_NUM_MAX)
			ck_abort_msg("%a written as \"%s\" (length %zu)", x,
			    buf, n);
		used[shortest_oracle(want, sizeof want, x)]++;
		if (strcmp(buf, want) != 0)
			ck_abort_msg("%a written as \"%s\", shortest is "
			    "\"%s\"", x, buf, want);
	}
	/* the sample must need each precision, or it proves little */
	ck_assert_int_gt(used[15], 10);
	ck_assert_int_gt(used[16], 100);
	ck_assert_int_gt(used[17], 100);
}
END_TEST

/* A random subnormal: a random significand below the least normal. */
static double
random_subnormal(struct ref_rng *rng)
{
	uint64_t bits = ref_rng_next(rng) & 0x800fffffffffffffu;
	double x;

	memcpy(&x, &bits, sizeof x);
	return x;
}

START_TEST(subnormals_format_shortest)
{
	struct ref_rng rng;
	char buf[ATTN_NUM_MAX], want[64];
	int i, short_ones = 0;

	ref_rng_seed(&rng, 1074u);
	for (i = 0; i < 3000; i++) {
		/* the smallest ones have the fewest digits */
		double x = random_subnormal(&rng) /
		    (i % 2 ? 1.0 : pow(2.0, (double)(i % 52)));

		attn_format_number(buf, x, 0, 0);
		short_ones += shortest_oracle(want, sizeof want, x) < 15;
		if (strcmp(buf, want) != 0 || strtod(buf, NULL) != x)
			ck_abort_msg("%a written as \"%s\", shortest is \"%s\"",
			    x, buf, want);
	}
	ck_assert_int_gt(short_ones, 100);
}
END_TEST

START_TEST(short_decimals_format_as_written)
{
	struct ref_rng rng;
	char buf[ATTN_NUM_MAX], want[64];
	int i;

	ref_rng_seed(&rng, 99u);
	for (i = 0; i < 5000; i++) {
		/* x is the double nearest n / 10^k, a decimal of at most 9
		 * significant digits: %.15g writes it back and reads back
		 * to x, so it is what must come out */
		long n = (long)ref_rng_range(&rng, 0, 999999999);
		int k = (int)ref_rng_range(&rng, 0, 12);
		double x = (double)n / pow(10.0, k);

		snprintf(want, sizeof want, "%.15g", x);
		attn_format_number(buf, x, 0, 0);
		if (strcmp(buf, want) != 0)
			ck_abort_msg("%.17g written as \"%s\", want \"%s\"", x,
			    buf, want);
	}
}
END_TEST

/* The significant digits in text as attn_format_number writes it: the
 * digits before any exponent, leading zeros not counted. */
static int
significant_digits(const char *text)
{
	int n = 0, leading = 1;

	for (; *text != '\0' && *text != 'e'; text++) {
		if (*text < '0' || *text > '9')
			continue;
		if (*text == '0' && leading)
			continue;
		leading = 0;
		n++;
	}
	return n;
}

START_TEST(fixed_format_shows_every_digit_asked_for)
{
	struct ref_rng rng;
	char buf[ATTN_NUM_MAX];
	int i;

	ref_rng_seed(&rng, 4242);
	for (i = 0; i < 20000; i++) {
		int digits = (int)ref_rng_range(&rng, 1, 17);
		int k = (int)ref_rng_range(&rng, 0, 16) - 8;
		double m = ref_rng_uniform(&rng, 1.0, 10.0), x, back;

		/* every other number sits just below a power of ten, where
		 * rounding to digits carries into the next one */
		if (i % 2)
			m = 10.0 - 4.0 * pow(10.0, 1 - digits) * m / 10.0;
		x = (i % 4 < 2 ? 1.0 : -1.0) * m * pow(10.0, k);
		if (x == floor(x) && fabs(x) < pow(10.0, digits))
			continue;	/* written as a plain integer */
		attn_format_number(buf, x, digits, ATTN_NUM_FIXED);
		back = strtod(buf, NULL);
		if (significant_digits(buf) != digits ||
		    fabs(back - x) > pow(10.0, 1 - digits) * fabs(x) ||
		    buf[strlen(buf) - 1] == '.' || strstr(buf, ".e") != NULL)
			ck_abort_msg("%.17g at %d digits written as \"%s\"", x,
			    digits, buf);
	}
}
END_TEST

/* ---------------------------------------------------------------- locale */

/* Put the whole process in a locale whose decimal point is a comma, or
 * fail saying which locale is missing. */
static void
enter_comma_locale(void)
{
	const char *name = getenv("ATTN_TEST_LOCALE");
	char probe[16];

	if (name == NULL || *name == '\0')
		name = "de_DE.UTF-8";
	if (setlocale(LC_ALL, name) == NULL)
		ck_abort_msg("setlocale(LC_ALL, \"%s\") failed: generate the "
		    "locale (tests/locale.sh does) or set ATTN_TEST_LOCALE "
		    "to one with a decimal comma", name);
	/* the test means something only if printf really writes a comma */
	snprintf(probe, sizeof probe, "%.1f", 0.5);
	ck_assert_msg(strcmp(probe, "0,5") == 0, "locale \"%s\" prints 0.5 "
	    "as \"%s\", not with a decimal comma", name, probe);
}

/* Checked fixture: runs after the test even when it fails, which matters
 * when CK_FORK=no runs every test in one process. */
static void
leave_comma_locale(void)
{
	setlocale(LC_ALL, "C");
}

START_TEST(numbers_ignore_a_decimal_comma_locale)
{
	char buf[ATTN_NUM_MAX];
	double x = 0.0;

	enter_comma_locale();
	ck_assert_int_eq(attn_parse_number("0.5", 3, &x), 0);
	ck_assert_double_eq(x, 0.5);
	ck_assert_int_eq(attn_parse_number("-1.25e-3", 8, &x), 0);
	ck_assert_double_eq(x, -1.25e-3);
	ck_assert_int_eq(attn_parse_number("0,5", 3, &x), -1);
	attn_format_number(buf, 0.5, 0, 0);
	ck_assert_str_eq(buf, "0.5");
	attn_format_number(buf, 1.0 / 3, 0, 0);
	ck_assert_str_eq(buf, "0.3333333333333333");
	attn_format_number(buf, 0.5, 3, 0);
	ck_assert_str_eq(buf, "0.5");
	attn_format_number(buf, 0.5, 3, ATTN_NUM_FIXED);
	ck_assert_str_eq(buf, "0.500");
	attn_format_number(buf, 12345.0, 3, ATTN_NUM_FIXED);
	ck_assert_str_eq(buf, "1.23e+04");
	/* the caller's locale is left as it was */
	snprintf(buf, sizeof buf, "%.1f", 0.5);
	ck_assert_str_eq(buf, "0,5");
}
END_TEST

Suite *
num_suite(void)
{
	Suite *s = suite_create("num");
	TCase *tc = tcase_create("parse");

	tcase_add_loop_test(tc, valid_numbers_parse_correctly_rounded, 0,
	    NVALID);
	tcase_add_test(tc, minus_zero_keeps_its_sign);
	tcase_add_loop_test(tc, invalid_numbers_are_refused, 0, NINVALID);
	tcase_add_loop_test(tc, inf_and_nan_spellings_parse, 0, NNONFINITE);
	tcase_add_loop_test(tc, out_of_range_numbers_return_one_and_inf, 0,
	    NRANGE);
	tcase_add_test(tc, parse_reads_only_len_bytes);
	suite_add_tcase(s, tc);

	tc = tcase_create("format");
	tcase_add_loop_test(tc, numbers_format_as_expected, 0, NFORMAT);
	tcase_add_loop_test(tc, shortest_format_reads_back_exactly, 0, 4);
	tcase_add_test(tc, subnormals_format_shortest);
	tcase_add_test(tc, short_decimals_format_as_written);
	tcase_add_test(tc, fixed_format_shows_every_digit_asked_for);
	suite_add_tcase(s, tc);

	tc = tcase_create("locale");
	tcase_add_checked_fixture(tc, NULL, leave_comma_locale);
	tcase_add_test(tc, numbers_ignore_a_decimal_comma_locale);
	suite_add_tcase(s, tc);
	return s;
}
