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
 * attn-mpi's (cli/mpi/main.c): when set, Q is read in two steps where
 * the kernel alone reads its numbers (no layer, RoPE or --descale-q,
 * whose passes read all of it), so that process rank of ranks
 * holds the rows that its share of the kernel's work reads
 * (attn_split_rows) and no others; rank 0 all of them where its output
 * or --check reads Q (--query, --explain, --arithmetic, the page, the q
 * stage).
 * A .npy file: its header with the other inputs, and once they are all
 * read, those rows, by each process.  Any other file (text, standard
 * input): read by rank 0 alone (slurp_alone), which gives its dims to
 * the others (dims: called by rank 0 once it has read it, and by every
 * other process instead of reading it), and once every input is read,
 * sends each process its rows (send, recv; bcast, every row to every
 * process).  least is called once in every process that has read its
 * inputs, whichever the file, with the index of the first element of Q
 * that it found not finite (SIZE_MAX: none), and returns the least of
 * every process's: that element's fault is then every process's, as
 * attn reads it.  When reading another input fails after a .npy Q's
 * header, all of Q is read first, so that a fault of Q's is told first,
 * as attn tells it.
 */
struct load_later {
	size_t rank, ranks;
	size_t (*least)(size_t first);
	enum attn_status (*dims)(struct attn_array *a, struct attn_error *err);
	void (*send)(const double *p, size_t n, size_t to);
	void (*recv)(double *p, size_t n);
	void (*bcast)(double *p, size_t n);
};
extern const struct load_later *load_later;

/* The rows of Q not read yet, read: a process that computes every row
 * after all (attn-mpi's, after a kernel failed). */
void load_rest(void);

/* Before the kernel runs for the stages want (every process, with the
 * same want): the rest of Q's rows read too when want shares the work
 * otherwise than the stages the rows were read for (--check's stages,
 * named by its file, are known only once it is read). */
void load_settle(unsigned want);

#endif
