/*
 * report.c - messages on stderr (see report.h): any name from the
 * command line or a file goes out through report_text, escaped, so that
 * a file named with an ESC or a newline cannot drive the terminal or
 * make one message two lines.
 */
#include <stdio.h>
#include <string.h>

#include "attn.h"
#include "attn_io.h"
#include "attn_private.h"
#include "report.h"

void
report_text(FILE *fp, const char *s)
{
	char buf[256];
	size_t len = strlen(s), used;

	while (len > 0) {
		/* a buffer this size takes a character or more each time */
		attn_text_escape(buf, sizeof buf, s, len, &used);
		fputs(buf, fp);
		s += used;
		len -= used;
	}
}

void
report_error_to(FILE *fp, const char *kind, const struct attn_error *err)
{
	char where[64];

	fputs("attn: ", fp);
	fputs(kind, fp);
	if (err->file != NULL) {
		attn_error_position(where, sizeof where, err);
		report_text(fp, err->file);
		fprintf(fp, "%s: ", where);
	}
	report_text(fp, err->msg);
	putc('\n', fp);
}

/* Where report_error writes: stderr, or the library session's
 * messages while it runs (report_messages). */
static FILE *messages;

void
report_messages(FILE *fp)
{
	messages = fp;
}

void
report_error(const char *kind, const struct attn_error *err)
{
	report_error_to(messages != NULL ? messages : stderr, kind, err);
}
