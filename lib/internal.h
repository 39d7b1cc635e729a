/*
 * internal.h - what the library's modules share with each other and with
 * the unit tests, but not with users of attn.h.
 */
#ifndef ATTN_INTERNAL_H
#define ATTN_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>

#include "attn.h"

#if defined(__GNUC__)
#define ATTN_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define ATTN_PRINTF(f, a)
#endif

/* ---------------------------------------------------------------- error.c */

/* Fill err (which may be NULL) and return status.  line and col 0 mean no
 * position. */
enum attn_status error_set(struct attn_error *err, enum attn_status status,
    const char *file, size_t line, size_t col, const char *fmt, ...)
    ATTN_PRINTF(6, 7);

/* The length of a UTF-8 byte order mark at the start of buf: 3 or 0. */
size_t bom_len(const char *buf, size_t len);

/* Like error_set, with the position given as a byte offset into the
 * buffer buf[0..len) that the file was read into. */
enum attn_status error_at(struct attn_error *err, enum attn_status status,
    const char *file, const char *buf, size_t len, size_t offset,
    const char *fmt, ...) ATTN_PRINTF(7, 8);

/*
 * Turn a byte offset into a 1-based line and column.  Lines end at "\n"
 * (so CRLF counts once); columns count characters, not bytes (UTF-8
 * continuation bytes do not start a column), and a BOM at the start of
 * the buffer is not counted.  An offset past len is taken as len.
 */
void pos_from_offset(const char *buf, size_t len, size_t offset,
    size_t *line, size_t *col);

/* ---------------------------------------------------------------- matrix.c */

/* *out = a * b; returns 0, or -1 when the product overflows size_t. */
int size_mul(size_t a, size_t b, size_t *out);

/* malloc(n * size) with the product checked; NULL on overflow or failure. */
void *alloc_array(size_t n, size_t size);

/* A copy of s[0..len) as a NUL-terminated string; NULL when out of memory. */
char *str_ndup(const char *s, size_t len);

/* ---------------------------------------------------------------- stage.c */

/*
 * Name block n of a stack of B batches of H heads (block n is batch
 * n / H, head n % H) for messages: pre + "batch 2, head 3" + post, with
 * only the parts that have more than one; "" when B == H == 1.
 */
void block_name(char *buf, size_t size, size_t B, size_t H, size_t n,
    const char *pre, const char *post);

/* ---------------------------------------------------------------- num.c */

/* Whether s[0..len) is the lower-case ASCII word w, in any case. */
int word_is(const char *s, size_t len, const char *w);

/* Write a short preview of s[0..len) for messages: at most max bytes,
 * cut at a UTF-8 character boundary, control bytes shown as '?', "..."
 * when cut.  buf has max + 4. */
void text_preview(char *buf, size_t max, const char *s, size_t len);

/* ---------------------------------------------------------------- read_*.c */

/*
 * Grow p, which has room for *cap elements of elsize bytes, to hold at
 * least need, doubling so that n appends cost O(n) in all (read.c).
 * Returns the new pointer, or NULL with p untouched when out of memory
 * or when the size overflows.
 */
void *grow_array(void *p, size_t *cap, size_t need, size_t elsize);

/* The offset of the first byte of s[0..len) that is not well-formed UTF-8
 * (overlongs, surrogates and truncated characters included), or len when
 * all of it is (read.c). */
size_t utf8_invalid(const char *s, size_t len);

/* Whether buf starts with a UTF-16 byte order mark, either byte order
 * (UTF-32's little-endian mark starts the same way). */
int utf16_bom(const char *buf, size_t len);

/* A data error at off when label[0..n) holds a C0 control or DEL (read.c). */
enum attn_status label_control(struct attn_error *err, const char *name,
    const char *buf, size_t len, size_t off, const char *label, size_t n);

/* Why a mask may not hold an infinity (both readers say it). */
#define MASK_INF_MSG "infinity in a mask: a mask holds 0 and 1 (or false " \
	"and true); an additive mask of 0 and -inf belongs in --bias"

/* The readers behind attn_read_array, one per format. */
enum attn_status read_text(const char *name, const char *buf, size_t len,
    enum attn_format fmt, unsigned flags, struct attn_array *out,
    struct attn_error *err);
enum attn_status read_json(const char *name, const char *buf, size_t len,
    unsigned flags, struct attn_array *out, struct attn_error *err);

#endif /* ATTN_INTERNAL_H */
