/*
 * charconv.cc - the exact number conversions of libstdc++'s <charconv>,
 * behind two C functions for num.c; the only C++ in libattn, which stays
 * a C library to its users (a program linking libattn.a adds -lstdc++, as
 * libattn.pc's Libs says).
 *
 * std::from_chars reads correctly rounded (Eisel-Lemire, with an exact
 * fallback for long inputs) and std::to_chars writes the shortest digits
 * that read back (Ryu); neither looks at the locale.  Both are several
 * times faster than strtod under uselocale and a loop of
 * %.15g/%.16g/%.17g with strtod checks, and num.c's own steps around
 * them cost less than they do, so attn has no conversion of its own
 * (bench/README.md has the figures; bench/numbers.c measures them).
 */
#include <charconv>
#include <system_error>

/* internal.h is C, and read here for the declarations of the two
 * functions and ATTN_NUM_MAX: functions named as the structs they fill,
 * and a struct returned before it is defined, are C that C++ warns of. */
extern "C" {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshadow"
#ifdef __clang__
#pragma clang diagnostic ignored "-Wreturn-type-c-linkage"
#endif
#include "internal.h"
#pragma GCC diagnostic pop
}

int
attn_chars_to_double(const char *s, size_t len, double *out)
{
	std::from_chars_result r = std::from_chars(s, s + len, *out,
	    std::chars_format::general);

	/* from_chars takes the longest prefix that is a number: the word
	 * is one only when that prefix is all of it, in range or not. */
	if (r.ptr != s + len)
		return -1;
	if (r.ec == std::errc::result_out_of_range)
		return 1;
	return r.ec == std::errc() ? 0 : -1;
}

size_t
attn_double_to_chars(char *buf, double x)
{
	std::to_chars_result r = std::to_chars(buf, buf + ATTN_NUM_MAX - 1, x,
	    std::chars_format::scientific);

	*r.ptr = '\0';
	return static_cast<size_t>(r.ptr - buf);
}
