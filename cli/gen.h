/*
 * gen.h - attn gen: seeded random matrices (gen.c).
 */
#ifndef ATTN_GEN_H
#define ATTN_GEN_H

#include "attn.h"
#include "options.h"

/* Write the matrix that o asks for (o->gen: its shape in o->operands[0],
 * --seed, --dist, the format, -o).  Returns the status for the exit
 * code, with the message in err. */
enum attn_status gen_main(const struct options *o, struct attn_error *err);

#endif
