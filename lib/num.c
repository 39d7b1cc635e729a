/*
 * num.c - numbers in and out, whatever the locale.
 *
 * Parsing checks the syntax itself (what a number may look like is
 * attn's rule, not the C library's), then lets std::from_chars round it
 * (charconv.cc: correctly rounded, and faster than strtod under
 * uselocale).  The shortest text is std::to_chars' digits, laid out as
 * %g lays them out (faster than a loop of snprintf and strtod).  Neither
 * reads the locale.  Printing a given number of
 * digits uses snprintf, with the calling thread switched to the C locale
 * by uselocale(), which touches neither the global locale nor
 * LC_NUMERIC of other threads.
 */
#define _POSIX_C_SOURCE 200809L
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static locale_t c_locale;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;

static void
c_locale_init(void)
{
	c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

/* Switch this thread to the C locale; returns the locale to restore, or
 * (locale_t)0 when the switch failed and the current one is kept. */
static locale_t
enter_c_locale(void)
{
	pthread_once(&c_locale_once, c_locale_init);
	if (c_locale == (locale_t)0)
		return (locale_t)0;
	return uselocale(c_locale);
}

static void
leave_c_locale(locale_t old)
{
	if (old != (locale_t)0)
		uselocale(old);
}

static int
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/*
 * The power of ten p of the unsigned decimal number s[0..len) that
 * from_chars took, written 0.d... x 10^p with d its first digit other
 * than 0; far beyond the doubles' range either way it is only a bound.
 * It tells a number too large for a double from one too small.
 */
static long
decimal_power(const char *s, size_t len)
{
	const long far = 100000;
	size_t i;
	long p = 0, e = 0;
	int seen = 0, point = 0, minus = 0;

	for (i = 0; i < len && s[i] != 'e' && s[i] != 'E'; i++) {
		if (s[i] == '.')
			point = 1;
		else if (!point && (seen || s[i] != '0'))
			p += p < far;
		else if (point && !seen && s[i] == '0')
			p -= p > -far;
		if (s[i] >= '1' && s[i] <= '9')
			seen = 1;
	}
	if (i < len) {
		i++;
		if (s[i] == '+' || s[i] == '-')
			minus = s[i++] == '-';
		for (; i < len && e < far; i++)
			e = e * 10 + (s[i] - '0');
	}
	return p + (minus ? -e : e);
}

int
attn_parse_number(const char *s, size_t len, double *out)
{
	const char *w = s;
	size_t wlen = len;
	double sign = 1.0, x;
	int rc;

	if (len > 0 && (s[0] == '+' || s[0] == '-')) {
		sign = s[0] == '-' ? -1.0 : 1.0;
		w++;
		wlen--;
	}
	if (wlen > 0 && !is_digit(w[0]) && w[0] != '.') {
		if (attn_word_is(w, wlen, "inf") ||
		    attn_word_is(w, wlen, "infinity"))
			*out = sign * INFINITY;
		else if (attn_word_is(w, wlen, "nan"))
			*out = NAN;
		else
			return -1;
		return 0;
	}
	if (wlen == 0 || (rc = attn_chars_to_double(w, wlen, &x)) < 0)
		return -1;
	/* Beyond the doubles: too large is an error, too small is 0, as
	 * strtod rounds it. */
	if (rc > 0)
		x = decimal_power(w, wlen) > 0 ? INFINITY : 0.0;
	*out = sign * x;
	return isinf(x) ? 1 : 0;
}

/*
 * The shortest digits that read back to the finite x (at most 17), laid
 * out as %.*g lays them out with a precision of max(15, their count):
 * the text of the first of %.15g, %.16g, %.17g that reads back, for
 * every normal x (tests/unit/check_num.c holds it to that loop, with a
 * strtod check each).  A subnormal has fewer digits of its own, and gets
 * them: 5e-324, where %.15g gives 4.94065645841247e-324.
 */
static size_t
format_shortest(char *buf, double x)
{
	char sci[ATTN_NUM_MAX], digits[ATTN_NUM_MAX], *p = buf;
	size_t n = attn_double_to_chars(sci, x), k, whole;
	const char *d = sci + (sci[0] == '-'), *e;
	long X = 0, precision;

	/* sci is [-]d[.ddd]e(+|-)dd[d]: k digits d[0], d[2..e).  The 'e'
	 * is found from the end, at most 5 bytes back: memchr from the
	 * start took two fifths of this function's time. */
	for (e = sci + n - 4; *e != 'e'; e--)
		;
	k = e - d > 1 ? (size_t)(e - d) - 1 : 1;
	digits[0] = d[0];
	memcpy(digits + 1, d + 2, k - 1);
	for (d = e + 2; *d != '\0'; d++)
		X = X * 10 + (*d - '0');
	X = e[1] == '-' ? -X : X;
	precision = k > 15 ? (long)k : 15;
	if (X < -4 || X >= precision) {
		memcpy(buf, sci, n + 1);
		return n;
	}
	if (sci[0] == '-')
		*p++ = '-';
	if (X < 0) {
		/* 0.000ddd */
		memcpy(p, "0.000", (size_t)(1 - X));
		p += 1 - X;
		memcpy(p, digits, k);
		p += k;
	} else {
		/* ddd[000][.ddd] */
		whole = (size_t)X + 1;
		memcpy(p, digits, k < whole ? k : whole);
		p += k < whole ? k : whole;
		if (k < whole) {
			memset(p, '0', whole - k);
			p += whole - k;
		} else if (k > whole) {
			*p++ = '.';
			memcpy(p, digits + whole, k - whole);
			p += k - whole;
		}
	}
	*p = '\0';
	return (size_t)(p - buf);
}

/*
 * %#.*g by its definition (C11 7.21.6.1): if the %e form has exponent X,
 * style f with digits - 1 - X decimals when -4 <= X < digits, else style
 * e.  glibc's own %#g drops the zeros when rounding carries into a new
 * power of ten (999.6 at 3 digits gives "1.e+03", not "1.00e+03"); its
 * %#e and %#f are right.  With one digit '#' leaves a point with no
 * digit after it ("7.", "2.e+02"), which is taken out: a number never
 * ends in a bare point.  Call in the C locale.
 */
static int
format_alt_g(char *buf, double x, int digits)
{
	char e[ATTN_NUM_MAX], *dot;
	long X;
	int n;

	snprintf(e, sizeof e, "%#.*e", digits - 1, x);
	X = strtol(strchr(e, 'e') + 1, NULL, 10);
	if (X < -4 || X >= digits)
		n = snprintf(buf, ATTN_NUM_MAX, "%s", e);
	else
		n = snprintf(buf, ATTN_NUM_MAX, "%#.*f",
		    (int)(digits - 1 - X), x);
	dot = strchr(buf, '.');
	if (dot != NULL && (dot[1] == '\0' || dot[1] == 'e')) {
		memmove(dot, dot + 1, strlen(dot + 1) + 1);
		n--;
	}
	return n;
}

size_t
attn_format_number(char *buf, double x, int digits, unsigned flags)
{
	locale_t old;
	int n = 0;

	if (isnan(x))
		return (size_t)snprintf(buf, ATTN_NUM_MAX, "nan");
	if (isinf(x))
		return (size_t)snprintf(buf, ATTN_NUM_MAX, "%s",
		    x < 0 ? "-inf" : "inf");
	if (digits <= 0)
		return format_shortest(buf, x);
	if (digits > 17)
		digits = 17;

	old = enter_c_locale();
	if ((flags & ATTN_NUM_FIXED) && x == floor(x) &&
	    fabs(x) < pow(10.0, digits)) {
		/* x + 0.0 is +0 for -0: a table shows no "-0" */
		n = snprintf(buf, ATTN_NUM_MAX, "%.0f", x + 0.0);
	} else if (flags & ATTN_NUM_FIXED) {
		n = format_alt_g(buf, x, digits);
	} else {
		n = snprintf(buf, ATTN_NUM_MAX, "%.*g", digits, x);
	}
	leave_c_locale(old);
	return (size_t)n;
}

