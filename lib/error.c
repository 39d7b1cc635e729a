/*
 * error.c - errors as values, and the one place where byte offsets become
 * lines and columns.  Readers only ever know offsets; turning them into
 * positions here keeps every reader's arithmetic the same.  Binary
 * formats (.npy) keep the offset itself, since lines mean nothing there,
 * and attn_error_position writes either kind the same way for every
 * caller.
 */
#include <stdio.h>

#include "internal.h"

static enum attn_status
error_vset(struct attn_error *err, enum attn_status status, const char *file,
    size_t line, size_t col, const char *fmt, va_list ap)
{
	if (err == NULL)
		return status;
	err->status = status;
	err->file = file;
	err->line = line;
	err->col = col;
	err->has_offset = 0;
	err->offset = 0;
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	return status;
}

enum attn_status
attn_error_set(struct attn_error *err, enum attn_status status, const char *file,
    size_t line, size_t col, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	error_vset(err, status, file, line, col, fmt, ap);
	va_end(ap);
	return status;
}

enum attn_status
attn_error_at(struct attn_error *err, enum attn_status status, const char *file,
    const char *buf, size_t len, size_t offset, const char *fmt, ...)
{
	va_list ap;
	size_t line, col;

	attn_pos_from_offset(buf, len, offset, &line, &col);
	va_start(ap, fmt);
	error_vset(err, status, file, line, col, fmt, ap);
	va_end(ap);
	return status;
}

enum attn_status
attn_error_at_byte(struct attn_error *err, enum attn_status status,
    const char *file, size_t offset, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	error_vset(err, status, file, 0, 0, fmt, ap);
	va_end(ap);
	if (err != NULL) {
		err->has_offset = 1;
		err->offset = offset;
	}
	return status;
}

size_t
attn_error_position(char *buf, size_t size, const struct attn_error *err)
{
	int n;

	/* snprintf takes buf NULL with size 0, and then only counts. */
	if (err->line > 0)
		n = snprintf(buf, size, ":%zu:%zu", err->line, err->col);
	else if (err->has_offset)
		n = snprintf(buf, size, ": byte %zu", err->offset);
	else
		n = snprintf(buf, size, "%s", "");
	return n < 0 ? 0 : (size_t)n;
}

void
attn_pos_from_offset(const char *buf, size_t len, size_t offset, size_t *line,
    size_t *col)
{
	size_t i = 0, l = 1, c = 1;

	if (offset > len)
		offset = len;
	i = attn_bom_len(buf, len);
	if (i > offset)
		i = offset;
	for (; i < offset; i++) {
		unsigned char ch = (unsigned char)buf[i];

		if (ch == '\n') {
			l++;
			c = 1;
		} else if ((ch & 0xC0) != 0x80) {
			c++;
		}
	}
	*line = l;
	*col = c;
}
