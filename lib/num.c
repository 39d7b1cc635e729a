/*
 * num.c - numbers in and out, whatever the locale.
 *
 * Parsing checks the syntax itself, then lets strtod round (glibc's strtod
 * is correctly rounded); printing uses snprintf.  Both run with the
 * calling thread switched to the C locale by uselocale(), which touches
 * neither the global locale nor LC_NUMERIC of other threads.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
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

/* Length of the decimal number at the start of s[0..len), or 0 when it is
 * not one. */
static size_t
scan_decimal(const char *s, size_t len)
{
	size_t i = 0, digits = 0;

	if (i < len && (s[i] == '+' || s[i] == '-'))
		i++;
	for (; i < len && is_digit(s[i]); i++)
		digits++;
	if (i < len && s[i] == '.')
		for (i++; i < len && is_digit(s[i]); i++)
			digits++;
	if (digits == 0)
		return 0;
	if (i < len && (s[i] == 'e' || s[i] == 'E')) {
		size_t j = i + 1, exp_digits = 0;

		if (j < len && (s[j] == '+' || s[j] == '-'))
			j++;
		for (; j < len && is_digit(s[j]); j++)
			exp_digits++;
		if (exp_digits == 0)
			return 0;
		i = j;
	}
	return i;
}

int
attn_parse_number(const char *s, size_t len, double *out)
{
	const char *w = s;
	size_t wlen = len;
	char small[64], *copy;
	double sign = 1.0, x;
	locale_t old;
	int erange;

	if (len > 0 && (s[0] == '+' || s[0] == '-')) {
		sign = s[0] == '-' ? -1.0 : 1.0;
		w++;
		wlen--;
	}
	if (attn_word_is(w, wlen, "inf") || attn_word_is(w, wlen, "infinity")) {
		*out = sign * INFINITY;
		return 0;
	}
	if (attn_word_is(w, wlen, "nan")) {
		*out = NAN;
		return 0;
	}
	if (len == 0 || scan_decimal(s, len) != len)
		return -1;

	/* strtod needs a terminated string; most numbers fit on the stack. */
	if (len < sizeof small) {
		memcpy(small, s, len);
		small[len] = '\0';
		copy = small;
	} else if ((copy = attn_str_ndup(s, len)) == NULL) {
		return -1;
	}
	old = enter_c_locale();
	errno = 0;
	x = strtod(copy, NULL);
	erange = errno == ERANGE;
	leave_c_locale(old);
	if (copy != small)
		free(copy);
	*out = x;
	return erange && isinf(x) ? 1 : 0;
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
	int n = 0, p;

	if (isnan(x))
		return (size_t)snprintf(buf, ATTN_NUM_MAX, "nan");
	if (isinf(x))
		return (size_t)snprintf(buf, ATTN_NUM_MAX, "%s",
		    x < 0 ? "-inf" : "inf");
	if (digits < 0)
		digits = 0;
	if (digits > 17)
		digits = 17;

	old = enter_c_locale();
	if (digits == 0) {
		/* Shortest of 15, 16, 17 digits that reads back exactly;
		 * 17 always does. */
		for (p = 15; p <= 17; p++) {
			n = snprintf(buf, ATTN_NUM_MAX, "%.*g", p, x);
			if (p == 17 || strtod(buf, NULL) == x)
				break;
		}
	} else if ((flags & ATTN_NUM_FIXED) && x == floor(x) &&
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

