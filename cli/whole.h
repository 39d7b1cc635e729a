/*
 * whole.h - whole numbers in option values and operands (-d, -j and
 * ATTN_THREADS, --heads, --kv-heads, --window, --query, --seed, attn
 * gen's shape): one rule and one message for all of them.
 */
#ifndef ATTN_WHOLE_H
#define ATTN_WHOLE_H

#include "attn.h"

/*
 * The whole number at *p: ASCII digits only (no sign, space, exponent
 * or point), at most hi.  Returns 0 with the number in *out and *p past
 * its digits; -1 when *p is no digit; 1 when the number is over hi
 * (*p is then past its digits too).  The caller checks what follows
 * (the end, a comma, an x) and the lower bound.
 */
int whole_scan(const char **p, unsigned long long hi,
    unsigned long long *out);

/* All of text as a whole number from lo to hi: 0, else -1. */
int whole_parse(const char *text, unsigned long long lo,
    unsigned long long hi, unsigned long long *out);

/*
 * The one message for a value that breaks the rule: "WHO wants WHAT from
 * LO to HI[ NOTE], not 'TEXT'", a usage error; WHAT is "a whole number"
 * or names a list of them ("L,R, whole numbers"), NOTE is "" or starts
 * with a space.
 */
enum attn_status whole_error(struct attn_error *err, const char *who,
    const char *what, unsigned long long lo, unsigned long long hi,
    const char *note, const char *text);

#endif
