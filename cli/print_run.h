/*
 * print_run.h - the printers' dispatcher: what a run prints (--explain,
 * or the printer of its format), the --svg picture, and the stages all
 * of them read.  It sits above every printer, and no printer calls it:
 * what printers share is print.c's.
 */
#ifndef ATTN_PRINT_RUN_H
#define ATTN_PRINT_RUN_H

#include <stdio.h>

#include "attn.h"
#include "options.h"
#include "print.h"

/* The stages the printers will read for o: attn_run must keep them. */
unsigned print_wants(const struct options *o);

/* Print what o asks for (--explain, or the --stage list in --format)
 * into fp.  Fails only when out of memory; write errors are left in
 * fp's error flag for the caller to check. */
enum attn_status print_run(FILE *fp, const struct options *o,
    const struct attn_stages *stages, const struct names *nm,
    const struct attn_inputs *in, struct attn_error *err);

/* The --svg picture of the weights, into fp (print_svg.c). */
enum attn_status print_svg_run(FILE *fp, const struct options *o,
    const struct attn_stages *stages, const struct names *nm,
    const struct attn_inputs *in, struct attn_error *err);

#endif
