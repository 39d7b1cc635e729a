/*
 * whole.c - whole numbers in option values, one rule for every option
 * (see whole.h).  Digits are scanned here rather than by strtoull, which
 * takes leading spaces and a sign ("-1" wraps to 2^64 - 1) and saturates
 * at ULLONG_MAX, so that "18446744073709551617" would read as
 * 18446744073709551615.
 */
#include "attn.h"
#include "attn_private.h"
#include "whole.h"

int
whole_scan(const char **p, unsigned long long hi, unsigned long long *out)
{
	const char *s = *p;
	unsigned long long v = 0;
	int over = 0;

	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		unsigned d = (unsigned)(*s - '0');

		if (over || d > hi || v > (hi - d) / 10)
			over = 1;
		else
			v = v * 10 + d;
	}
	*p = s;
	*out = v;
	return over;
}

int
whole_parse(const char *text, unsigned long long lo, unsigned long long hi,
    unsigned long long *out)
{
	const char *p = text;
	unsigned long long v;

	if (whole_scan(&p, hi, &v) != 0 || *p != '\0' || v < lo)
		return -1;
	*out = v;
	return 0;
}

enum attn_status
whole_error(struct attn_error *err, const char *who, const char *what,
    unsigned long long lo, unsigned long long hi, const char *note,
    const char *text)
{
	return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0,
	    "%s wants %s from %llu to %llu%s, not '%s'", who, what, lo, hi,
	    note, text);
}
