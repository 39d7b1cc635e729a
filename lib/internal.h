/*
 * internal.h - what the library's modules share with each other and with
 * the unit tests, but not with users of attn.h.  Every name here starts
 * with attn_ all the same, so that libattn.a exports nothing else (tests
 * check it with nm); being declared here and not in attn.h is what makes
 * it internal.
 */
#ifndef ATTN_INTERNAL_H
#define ATTN_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>

#include "attn.h"

/* ---------------------------------------------------------------- error.c */

/* Like attn_error_set, with the position given as a byte offset into the
 * buffer buf[0..len) that the file was read into. */
enum attn_status attn_error_at(struct attn_error *err,
    enum attn_status status, const char *file, const char *buf, size_t len,
    size_t offset, const char *fmt, ...) ATTN_PRINTF(7, 8);

/*
 * Turn a byte offset into a 1-based line and column.  Lines end at "\n"
 * (so CRLF counts once); columns count characters, not bytes (UTF-8
 * continuation bytes do not start a column), and a BOM at the start of
 * the buffer is not counted.  An offset past len is taken as len.
 */
void attn_pos_from_offset(const char *buf, size_t len, size_t offset,
    size_t *line, size_t *col);

/* ---------------------------------------------------------------- matrix.c */

/* A copy of s[0..len) as a NUL-terminated string; NULL when out of memory
 * (C11 has no strndup). */
char *attn_str_ndup(const char *s, size_t len);

/*
 * Grow p, which has room for *cap elements of elsize bytes, to hold at
 * least need, doubling so that n appends cost O(n) in all.  Returns the
 * new pointer, or NULL with p untouched when out of memory or when the
 * size overflows.
 */
void *attn_grow_array(void *p, size_t *cap, size_t need, size_t elsize);

/* ---------------------------------------------------------------- text.c */

/* The length of a UTF-8 byte order mark at the start of buf: 3 or 0. */
size_t attn_bom_len(const char *buf, size_t len);

/* Whether s[0..len) is the lower-case ASCII word w, in any case. */
int attn_word_is(const char *s, size_t len, const char *w);

/* The offset of the first byte of s[0..len) that is not well-formed UTF-8
 * (overlongs, surrogates and truncated characters included), or len when
 * all of it is. */
size_t attn_utf8_invalid(const char *s, size_t len);

/* Whether buf starts with a UTF-16 byte order mark, either byte order
 * (UTF-32's little-endian mark starts the same way). */
int attn_utf16_bom(const char *buf, size_t len);

/* A data error at off when label[0..n) holds a C0 control or DEL. */
enum attn_status attn_label_control(struct attn_error *err, const char *name,
    const char *buf, size_t len, size_t off, const char *label, size_t n);

/* ---------------------------------------------------------------- read_*.c */

/* Why a mask may not hold an infinity (both readers say it). */
#define MASK_INF_MSG "infinity in a mask: a mask holds 0 and 1 (or false " \
	"and true); an additive mask of 0 and -inf belongs in --bias"

/* The readers behind attn_read_array, one per format. */
enum attn_status attn_read_text(const char *name, const char *buf,
    size_t len, enum attn_format fmt, unsigned flags, struct attn_array *out,
    struct attn_error *err);
enum attn_status attn_read_json(const char *name, const char *buf,
    size_t len, unsigned flags, struct attn_array *out,
    struct attn_error *err);

#endif /* ATTN_INTERNAL_H */
