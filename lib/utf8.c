/*
 * utf8.c - bytes and UTF-8, the leaf every reader, message and printer
 * stands on: byte order marks, runs of ASCII, the one UTF-8 decoder
 * (attn_utf8_char) and well-formedness, case-blind ASCII words, and text
 * escaped for messages (attn_text_escape, attn_text_preview).
 *
 * It calls nothing else of libattn, so that errors (error.c), numbers
 * (num.c) and the readers' shared rules (text.c) can all use it without
 * a circle among them.
 */
#include <stdint.h>
#include <string.h>

#include "internal.h"

size_t
attn_bom_len(const char *buf, size_t len)
{
	if (len >= 3 && (unsigned char)buf[0] == 0xEF &&
	    (unsigned char)buf[1] == 0xBB && (unsigned char)buf[2] == 0xBF)
		return 3;
	return 0;
}

int
attn_word_is(const char *s, size_t len, const char *w)
{
	size_t i;

	if (strlen(w) != len)
		return 0;
	for (i = 0; i < len; i++) {
		char c = s[i];

		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (c != w[i])
			return 0;
	}
	return 1;
}

/*
 * One decoder of UTF-8 for every reader and writer (Unicode 15, table
 * 3-7): overlong forms, UTF-16 surrogates and code points past U+10FFFF
 * are ill-formed, as is a character cut off by the end.
 */
size_t
attn_utf8_char(const char *s, size_t len, long *code)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n, k;
	unsigned char lo = 0x80, hi = 0xBF;
	long c;

	*code = -1;
	if (u[0] < 0x80) {
		*code = u[0];
		return 1;
	}
	if (u[0] >= 0xC2 && u[0] <= 0xDF) {
		n = 1;
	} else if (u[0] >= 0xE0 && u[0] <= 0xEF) {
		n = 2;
		if (u[0] == 0xE0)
			lo = 0xA0;	/* overlong */
		else if (u[0] == 0xED)
			hi = 0x9F;	/* surrogates */
	} else if (u[0] >= 0xF0 && u[0] <= 0xF4) {
		n = 3;
		if (u[0] == 0xF0)
			lo = 0x90;	/* overlong */
		else if (u[0] == 0xF4)
			hi = 0x8F;	/* past U+10FFFF */
	} else {
		return 1;	/* 0x80-0xC1 or 0xF5-0xFF */
	}
	if (len <= n || u[1] < lo || u[1] > hi)
		return 1;
	c = u[0] & (0x3F >> n);
	for (k = 1; k <= n; k++) {
		if (u[k] < 0x80 || u[k] > 0xBF)
			return 1;
		c = c << 6 | (u[k] & 0x3F);
	}
	*code = c;
	return n + 1;
}

int
attn_char_is_control(long code)
{
	return (code >= 0 && code < 0x20) || (code >= 0x7F && code <= 0x9F);
}

/*
 * Unicode's general category Cf, as libunistring 1.0 (Unicode 14) has it
 * (tests/unit/check_read.c holds the table to libunistring's, code point
 * by code point), in ascending ranges; libattn does not link libunistring,
 * which only the CLI's printers need.
 */
static const struct {
	long lo, hi;
} format_ranges[] = {
	{ 0x00AD, 0x00AD }, { 0x0600, 0x0605 }, { 0x061C, 0x061C },
	{ 0x06DD, 0x06DD }, { 0x070F, 0x070F }, { 0x0890, 0x0891 },
	{ 0x08E2, 0x08E2 }, { 0x180E, 0x180E }, { 0x200B, 0x200F },
	{ 0x202A, 0x202E }, { 0x2060, 0x2064 }, { 0x2066, 0x206F },
	{ 0xFEFF, 0xFEFF }, { 0xFFF9, 0xFFFB }, { 0x110BD, 0x110BD },
	{ 0x110CD, 0x110CD }, { 0x13430, 0x13438 }, { 0x1BCA0, 0x1BCA3 },
	{ 0x1D173, 0x1D17A }, { 0xE0001, 0xE0001 }, { 0xE0020, 0xE007F },
};

int
attn_char_is_format(long code)
{
	size_t i;

	if (code < 0xAD)	/* ASCII, most of any text */
		return 0;
	if (code == 0x2028 || code == 0x2029)	/* Zl, Zp */
		return 1;
	for (i = 0; i < sizeof format_ranges / sizeof format_ranges[0]; i++)
		if (code <= format_ranges[i].hi)
			return code >= format_ranges[i].lo;
	return 0;
}

/* Eight bytes at a time, since every line a reader reads is checked this
 * way, and nearly every one is all ASCII. */
size_t
attn_ascii_len(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;
	uint64_t w;

	for (; len - i >= sizeof w; i += sizeof w) {
		memcpy(&w, u + i, sizeof w);
		if (w & 0x8080808080808080ULL)
			break;
	}
	while (i < len && u[i] < 0x80)
		i++;
	return i;
}

/*
 * Escapes are \xHH of each byte, the bytes being what a user renames a
 * file by; a backslash stays as it is, so that escaping twice changes
 * nothing and a Windows path reads as itself.  Format characters are
 * escaped with the controls: a right-to-left override would turn the rest
 * of a line around, a BOM or zero-width space hide in a name that looks
 * like another, a line separator break a line on some terminals.
 */
size_t
attn_text_escape(char *buf, size_t size, const char *s, size_t len,
    size_t *used)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t i = 0, n = 0, k, w;
	long code;

	while (i < len) {
		w = attn_utf8_char(s + i, len - i, &code);
		if (code >= 0 && !attn_char_is_control(code) &&
		    !attn_char_is_format(code)) {
			if (n + w >= size)
				break;
			memcpy(buf + n, s + i, w);
			n += w;
		} else {
			if (n + 4 * w >= size)
				break;
			for (k = 0; k < w; k++) {
				unsigned char c = (unsigned char)s[i + k];

				buf[n++] = '\\';
				buf[n++] = 'x';
				buf[n++] = hex[c >> 4];
				buf[n++] = hex[c & 0xF];
			}
		}
		i += w;
	}
	if (size > 0)
		buf[n] = '\0';
	if (used != NULL)
		*used = i;
	return n;
}

void
attn_text_preview(char *buf, size_t max, const char *s, size_t len)
{
	size_t used, n;

	n = attn_text_escape(buf, max + 1, s, len, &used);
	if (used < len)
		memcpy(buf + n, "...", 4);
}

size_t
attn_utf8_invalid(const char *s, size_t len)
{
	size_t i = 0;
	long code;

	while (i < len) {
		/* ASCII, most of any input */
		i += attn_ascii_len(s + i, len - i);
		if (i == len)
			break;
		i += attn_utf8_char(s + i, len - i, &code);
		if (code < 0)
			return i - 1;
	}
	return len;
}

/* Spreadsheets on Windows save "Unicode text" as UTF-16 with a byte order
 * mark; the readers name it rather than trip on its NUL bytes. */
int
attn_utf16_bom(const char *buf, size_t len)
{
	const unsigned char *u = (const unsigned char *)buf;

	return len >= 2 && ((u[0] == 0xFF && u[1] == 0xFE) ||
	    (u[0] == 0xFE && u[1] == 0xFF));
}
