/*
 * report.h - messages on stderr, with the names in them escaped, and
 * shapes as every message and output writes them.
 */
#ifndef ATTN_REPORT_H
#define ATTN_REPORT_H

#include <stdio.h>

#include "attn.h"

/* s into fp with control characters and what is not UTF-8 escaped as
 * attn_text_escape does: for file names, labels and option values. */
void report_text(FILE *fp, const char *s);

/* One line on stderr (or report_messages's stream), "attn: KIND
 * FILE:LINE:COL: message" with the parts
 * that apply (kind "" or "warning: "), FILE and the message escaped by
 * report_text. */
void report_error(const char *kind, const struct attn_error *err);

/* report_error's lines on fp from now on, NULL: on stderr again (the
 * library's session keeps them in memory while it runs). */
void report_messages(FILE *fp);

/* The same line on fp (the library's session keeps it in memory). */
void report_error_to(FILE *fp, const char *kind,
    const struct attn_error *err);

#endif
