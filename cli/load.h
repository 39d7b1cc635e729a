/*
 * load.h - the operands (Q K V, a BUNDLE, --self X, or with --proj the
 * embeddings X or XQ XKV) and the --mask, --bias, --grad, --proj and
 * --sinks files, read into struct inputs (inputs.h), with the labels
 * that came with them, and checked against each other.
 */
#ifndef ATTN_LOAD_H
#define ATTN_LOAD_H

#include "attn.h"
#include "inputs.h"
#include "options.h"

/* Read the operands and files that o names into in (inputs_free it,
 * failed or not).  4-D operands set o->cfg's heads, KV heads and layout
 * from their shapes (layout.h). */
enum attn_status load_inputs(struct options *o, struct inputs *in,
    struct attn_error *err);

/*
 * attn-mpi's (cli/mpi/main.c): when set, Q from a .npy file is read in
 * two steps where nothing but the kernel reads it (no --check, --query,
 * --explain, --arithmetic, page, q stage, --emulate, layer, RoPE,
 * --descale-q or packed queries): its header with the other inputs, and
 * once they are all read, only the rows that this process reads for the
 * stages want, for which rows calls each (attn_split_rows).  least is called once in
 * every process that has read its inputs, whether Q was read so or
 * not, with the index of the first element of Q that it found not
 * finite (SIZE_MAX: none), and returns the least of every process's:
 * that element's fault is then every process's, as attn reads it.  When
 * reading another input fails after Q's header, all of Q is read first,
 * so that a fault of Q's is told first, as attn tells it.
 */
struct load_later {
	void (*rows)(unsigned want, size_t B, size_t H, size_t G, size_t T,
	    void (*each)(void *arg, size_t n, size_t i0, size_t rows),
	    void *arg);
	size_t (*least)(size_t first);
};
extern const struct load_later *load_later;

/* The rows of Q not read yet, read: a process that computes every row
 * after all (attn-mpi's, after a kernel failed). */
void load_rest(void);

#endif
