/*
 * charconv.cc - the exact number conversions of libstdc++'s <charconv>,
 * behind two C functions for num.c; the only C++ in libattn, which stays
 * a C library to its users (a program linking libattn.a adds -lstdc++, as
 * libattn.pc's Libs says).
 *
 * std::from_chars reads correctly rounded (Eisel-Lemire, with an exact
 * fallback for long inputs) and std::to_chars writes the shortest digits
 * that read back (Ryu); neither looks at the locale.  Measured with
 * bench/numbers.c on attn gen's numbers (4096 x 64 standard normal, 18.6
 * bytes a number) on the 2-core AVX-512 machine of issue 9: num.c read a
 * number in 126 ns with strtod under uselocale and wrote the shortest in
 * 639 ns with its loop of %.15g/%.16g/%.17g and strtod checks; with
 * these two it reads in 32 ns (from_chars itself 22) and writes in 52
 * (to_chars 37).  That is within the 40 and 60 ns asked for, and no own
 * code could do much better than the 22 and 37, so there is none.
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
