/*
 * error.c - errors as values, and the one place where byte offsets become
 * lines and columns.  Readers only ever know offsets; turning them into
 * positions here keeps every reader's arithmetic the same.
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
