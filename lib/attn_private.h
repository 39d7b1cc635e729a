/*
 * attn_private.h - what libattn shares with attn's own program (cli/)
 * and tests (tests/), and with no one else: the memory account and the
 * blocks the CLI charges to it, the thread pool and the CPU count, the
 * places and runs of a stage's elements that printers walk, the inputs
 * of one head, masking as printers ask it, seeded random matrices for
 * `attn gen`, names and shapes written for messages, and text escaped
 * for a terminal.  `make install` does not ship it, and libattn.so
 * exports none of it (lib/libattn.map): attn and the tests link
 * libattn.a.  The ownership and error rules are attn.h's.
 */
#ifndef ATTN_PRIVATE_H
#define ATTN_PRIVATE_H

#include <stddef.h>

#include "attn.h"
#include "attn_io.h"

/* ---------------------------------------------------------------- errors */

#if defined(__GNUC__)
#define ATTN_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define ATTN_PRINTF(f, a)
#endif

/* Fill err (which may be NULL) with status, file, position and a
 * printf-style message, and return status; line and col 0 mean no
 * position.  For callers that report their own errors the library's way. */
enum attn_status attn_error_set(struct attn_error *err,
    enum attn_status status, const char *file, size_t line, size_t col,
    const char *fmt, ...) ATTN_PRINTF(6, 7);

/* ---------------------------------------------------------------- memory */

/*
 * A memory account and its limit.  While a thread uses an account
 * (attn_memory_use), what libattn allocates on it, and on the threads it
 * starts for a run, is charged to the account: the numbers and labels
 * read, what reading takes on the way (the JSON tree too: libattn sets
 * cJSON's allocation hooks once, the first time it reads JSON), the
 * stages and scratch of a run.  Each allocation is charged what malloc
 * takes for it, and what is freed is given back.  An allocation that
 * would take the account past its limit is not made: the call fails
 * with ATTN_ERR_NOMEM and a message that names the limit ("input too
 * large: reading and parsing it takes more than ATTN_MAX_MEMORY (1048576
 * bytes)").  Without an account nothing is counted.
 *
 * An object is given back to the account in use when it is freed, so
 * keep one account for the objects' life.  attn_alloc_array's memory is
 * never charged.  attn_plan counts a run before it starts, so that a
 * caller can refuse it whole rather than halfway.
 */
struct attn_memory;

/* A new account of limit bytes (SIZE_MAX for none), the limit called
 * what in messages ("ATTN_MAX_MEMORY"; a string that outlives the
 * account); NULL when out of memory.  Free it with attn_memory_free once
 * no thread uses it. */
struct attn_memory *attn_memory_new(size_t limit, const char *what);
void attn_memory_free(struct attn_memory *m);

/* Charge what libattn allocates on the calling thread to m from now on
 * (NULL: to none); returns the account used until now. */
struct attn_memory *attn_memory_use(struct attn_memory *m);

/* The bytes charged to m now; its limit and the limit's name. */
size_t attn_memory_held(const struct attn_memory *m);
size_t attn_memory_limit(const struct attn_memory *m);
const char *attn_memory_what(const struct attn_memory *m);

/* Charge m for bytes its user holds itself (its own buffers): 0, or -1,
 * charging nothing, when they would take m past its limit.
 * attn_memory_release gives them back. */
int attn_memory_charge(struct attn_memory *m, size_t bytes);
void attn_memory_release(struct attn_memory *m, size_t bytes);

/*
 * Blocks as libattn allocates its own arrays, for a caller's large
 * buffers: below 256 KiB from malloc, from 256 KiB a mapping of their own
 * in 2 MiB huge pages where the kernel gives them (Linux's transparent
 * huge pages), whose first touch costs one fault, not 512.  Not charged
 * to any account: attn_block_size is what a block of bytes takes (a
 * whole number of 2 MiB when mapped), which is what a caller charges for
 * it.  attn_block_zalloc's block is zeros; attn_block_realloc keeps the
 * first min(old, bytes) bytes (old: the block's size) and returns NULL,
 * the block untouched, when out of memory; free only with
 * attn_block_free, never free().
 */
size_t attn_block_size(size_t bytes);
void *attn_block_alloc(size_t bytes);
void *attn_block_zalloc(size_t bytes);
void *attn_block_realloc(void *p, size_t old, size_t bytes);
void attn_block_free(void *p);

/*
 * Spare mappings: with on 1, blocks from 64 KiB are mappings too, and
 * those freed are kept (16 MiB at most), charged to no account, for the
 * next block of the same length to take again without fresh pages and
 * their faults; with on 0 (the start), none is kept and those kept are
 * given back.  For a process of many small runs (the library's
 * session), not for one run, whose peak they would raise.
 */
void attn_block_spares(int on);

/* ---------------------------------------------------------------- matrices */

/* *out = a * b; returns 0, or -1 when the product overflows size_t. */
int attn_size_mul(size_t a, size_t b, size_t *out);

/* malloc(n * size) with the product checked; NULL on overflow or failure.
 * Free with free(); no memory account is charged for it. */
void *attn_alloc_array(size_t n, size_t size);

/* ---------------------------------------------------------------- stages */

/*
 * The set want together with every stage its members depend on, directly
 * or not (attn_stage_table[].needs): what plain passes, a stage each,
 * compute for want.  attn_run's streaming kernel fuses stages (it forms
 * weights a tile at a time and keeps them only when held) and may
 * compute less.  Bits that name no stage are dropped.
 */
unsigned attn_stage_closure(unsigned want);

/* ---------------------------------------------------------------- threads */

/* The name of an instruction set: "c", "avx2", "avx512"; "auto" for
 * AUTO, "unknown" for a value beyond them. */
const char *attn_isa_name(enum attn_isa isa);

/* The CPUs this process may use: the online ones, narrowed by its CPU
 * affinity mask and its cgroup's CPU quota (rounded up); at least 1.
 * Read once a process (the cgroup's files are slow to read beside a
 * small run). */
size_t attn_cpu_count(void);

/*
 * Run task(ctx, worker, t) for t = 0 .. tasks-1 on `threads` workers
 * (the caller's thread is worker 0), handing out tasks in increasing
 * order, and return when all are done or stop() says so.  Each worker
 * index runs on one thread at a time, so per-worker state needs no lock.
 * When progress is not NULL it is called after each task with the number
 * done, under a lock, from whichever worker finished it.  Threads that
 * cannot be started are done without: the caller's thread alone still
 * runs everything.  A task may run a job of its own.
 *
 * The other workers are threads libattn keeps for the life of the process
 * once started (a small run has a dozen jobs, and starting threads for
 * each would be a noticeable part of it): idle, they wait with every
 * asynchronous signal blocked, so that a signal reaches the program's own
 * threads.  Each works on the caller's memory account (attn_memory_use)
 * while it works for the job.  A child of fork() starts its own.
 */
struct attn_pool_job {
	size_t tasks, threads;
	void (*task)(void *ctx, size_t worker, size_t t);
	int (*stop)(void *ctx, size_t t);	/* skip task t; may be NULL */
	void *ctx;
	void (*progress)(void *arg, const char *what, size_t done,
	    size_t total);
	void *progress_arg;
	const char *what;	/* the tasks, for progress */
	size_t stack;		/* bytes of stack a worker needs; 0: the
				 * default (8 MiB an idle thread holds in
				 * address space, which a limit counts) */
};

void attn_pool_run(const struct attn_pool_job *job);

/* ---------------------------------------------------------------- inputs and masking */

/*
 * Whether m, a mask or bias stack of `blocks` equal blocks, has the shape
 * struct attn_inputs takes for B batches of H heads, T queries and S
 * keys: 1, B or B*H blocks, each T x S, 1 x S, T x 1 or 1 x 1.  The one
 * statement of that rule, for callers that name shapes their own way.
 */
int attn_input_blocks_fit(const struct attn_matrix *m, size_t blocks,
    size_t B, size_t H, size_t T, size_t S);

/*
 * What may mask logits in a run of cfg on in: ATTN_MASKING_RULE when a
 * masking rule is in force (causal, a window, a mask: the rule every
 * kernel asks sets each logit it masks to -inf), ATTN_MASKING_BIAS when
 * a bias is added (a -inf in it masks too); 0 when nothing may.  For
 * printers that say whether anything is masked: they ask here, never
 * the options.
 */
enum {
	ATTN_MASKING_RULE = 1,
	ATTN_MASKING_BIAS = 2
};

unsigned attn_masking(const struct attn_config *cfg,
    const struct attn_inputs *in);

/*
 * Where query i of batch b sits in a run of cfg on in, with T queries
 * and S keys a batch, as causal, windows, ALiBi and RoPE see it: the
 * keys [k0, k1) it may see at all (those in use of the packed sequence
 * that holds it, in->varlen; [0, S) when nothing is packed or padded),
 * and its position qpos against key j's j - k0, aligned as cfg->align
 * says within that sequence.  For printers that show positions or
 * recompute a row; only differences of positions mean anything.
 */
struct attn_row_place {
	size_t k0, k1;
	long long qpos;
};

void attn_row_place(const struct attn_config *cfg,
    const struct attn_inputs *in, size_t T, size_t S, size_t b, size_t i,
    struct attn_row_place *out);

/* ---------------------------------------------------------------- shapes */

/* What the rows and the columns of a block of stage s run over, for
 * labels: the stage table's, but for grad_bias, whose rows are the
 * queries or one (ATTN_AXIS_ONE) and columns the keys or one as the
 * bias's are, and grad_sinks, one row of the heads (ATTN_AXIS_HEAD). */
void attn_stage_axes(const struct attn_stages *stages, enum attn_stage s,
    enum attn_axis *rows, enum attn_axis *cols);

/*
 * The blocks of the inputs that batch b and head h of a run read, as
 * views of in (which stages was computed from): q is T x d_k, k is
 * S x d_k and v is S x d_v (of the KV head that h reads), mask and bias
 * are T x S (data NULL when absent), read with attn_input_at since they
 * may broadcast.  With a projection layer or RoPE the kernel read what
 * the passes made: q, k and v are then views of stages' q_rot, k_rot, q,
 * k and v, the first of them held (so a caller keeps them).  For
 * printers that write the arithmetic out.
 */
struct attn_head_inputs {
	struct attn_matrix q, k, v, mask, bias;
};

/* Element (i, j) of a T x S mask or bias view as attn_head_inputs gives
 * it: a block of one row is viewed with stride 0 (every query reads that
 * row), a block of one column has cols 1 (every key reads it). */
static inline double
attn_input_at(const struct attn_matrix *m, size_t i, size_t j)
{
	return *attn_at(m, i, m->cols == 1 ? 0 : j);
}

void attn_head_inputs(const struct attn_stages *stages,
    const struct attn_inputs *in, size_t b, size_t h,
    struct attn_head_inputs *out);

/* Block n of stage s as attn_stage_shape counts blocks: an R x C view. */
struct attn_matrix attn_shape_block(const struct attn_stages *stages,
    enum attn_stage s, size_t n);

/* Stage s's numbers where they already lie in C order of its shape (the
 * order attn_stage_flatten copies them in), so that they need no copy;
 * NULL when the layout puts them in another. */
const double *attn_stage_c_order(const struct attn_stages *stages,
    enum attn_stage s);

/* Stage s's numbers (held) in C order of its shape as the runs they lie
 * in: run(arg, x, n) for each in turn, n numbers at x, so that a writer
 * can take them where they are; one run when attn_stage_c_order has
 * them, else a row of the last dim a run.  Returns the number of runs
 * (0 for none), and only counts them when run is NULL. */
size_t attn_stage_c_runs(const struct attn_stages *stages, enum attn_stage s,
    void (*run)(void *arg, const double *x, size_t n), void *arg);

/* Where an element of a stage sits, counted from 0: for output the head
 * is that of the column (H*d_v columns are H heads of d_v). */
struct attn_where {
	size_t batch, head, row, col;
};

/* The place of element `flat` (in C order of the shape) of stage s. */
void attn_stage_where(const struct attn_stages *stages, enum attn_stage s,
    size_t flat, struct attn_where *w);

/* How many elements of stage s, in C order of its shape, share the batch
 * and head attn_stage_where gives, from any multiple of that many on: a
 * row of one head's columns, or more (rows of one block). */
size_t attn_stage_where_run(const struct attn_stages *stages,
    enum attn_stage s);

/* The place of element (i, j) of block n of stage s (attn_shape_block's
 * blocks, in any layout): the batch of the block, the head of its column
 * j (a KV head for the stages laid out as K and V; 0 for projected),
 * row i, and j's column within that head. */
void attn_shape_block_where(const struct attn_stages *stages,
    enum attn_stage s, size_t n, size_t i, size_t j, struct attn_where *w);

/* The KV head that query head h of H reads with G KV heads: h / (H / G). */
size_t attn_kv_head(size_t h, size_t heads, size_t kv_heads);

/*
 * The ALiBi slope of head h (0-based) of H: 2^(-8(h+1)/H) when H is a
 * power of two; otherwise the slopes of the largest power of two n < H,
 * followed by every other slope of 2n (Press et al., get_slopes).
 */
double attn_alibi_slope(size_t h, size_t heads);

/* The ALiBi slope of batch b and head h of a run of cfg on in, with
 * heads query heads: in->alibi_slopes' (H, or B x H) where given, else
 * attn_alibi_slope's; 0 without cfg->alibi. */
double attn_run_slope(const struct attn_config *cfg,
    const struct attn_inputs *in, size_t b, size_t h, size_t heads);

/* Write dims[0..n) into buf (size bytes, NUL-terminated) as messages
 * write a shape: "2x3x4". */
void attn_dims_text(char *buf, size_t size, const size_t *dims, size_t n);

/*
 * Name block n of a stack of B batches of H heads (block n is batch
 * n / H, head n % H) for messages: pre + "batch 2, head 3" + post, with
 * only the parts that have more than one; "" when B == H == 1.
 */
void attn_block_name(char *buf, size_t size, size_t B, size_t H, size_t n,
    const char *pre, const char *post);

/* ---------------------------------------------------------------- random */

/* What attn_random_fill draws from. */
enum attn_dist {
	ATTN_DIST_NORMAL,	/* standard normal: mean 0, variance 1 */
	ATTN_DIST_UNIFORM	/* uniform in [0, 1) */
};

/*
 * Fill m, row by row, with numbers drawn from dist by a generator seeded
 * with seed (its low 64 bits): xoshiro256** seeded by splitmix64, and for
 * normal numbers Marsaglia's polar method with a logarithm of its own, so
 * that a seed gives the same numbers, to the bit, on every platform with
 * IEEE 754 doubles (lib/random.c says what that needs).
 */
void attn_random_fill(struct attn_matrix *m, unsigned long long seed,
    enum attn_dist dist);

/* ---------------------------------------------------------------- shares */

/*
 * A run shared among several processes (attn-mpi, attn(1)): each
 * computes a share of the kernel's tasks into stages of the whole size,
 * zero outside its share, and merge makes them whole.  The forward
 * pass's shares are query blocks: the tasks of each head cut into 2R
 * runs, process r taking runs r and 2R-1-r (so that each has as many
 * rows near the diagonal of a causal mask as far from it), the first of
 * head n shifted by n when the head has fewer than 2R tasks; with
 * backward stages, the shares are the (batch, KV head) pairs, pair u to
 * process u mod R, whose gradients and forward rows are each one
 * process's whole, in attn's order.  So every number is computed by one
 * process, as attn computes it.  What the passes make of Q before the
 * kernel (Q with a layer, descaled, rotated) each process makes of the
 * rows its tasks read (attn_split_rows), which are all of Q that it
 * needs; rank 0 makes all of them when the stages asked for hold q_rot
 * (or q with a layer), and then needs all of Q.
 */
struct attn_split {
	size_t rank, ranks;	/* this process's share of ranks (>= 1) */
	/* Called by every process once its kernel has run, with its
	 * status: make out's held stages and sums (the grad_bias sums,
	 * data NULL when not asked) whole from every process's, where
	 * each element is another's zero or the same bits.  ATTN_OK, or
	 * the status that the run returns. */
	enum attn_status (*merge)(void *arg, enum attn_status st,
	    struct attn_stages *out, struct attn_matrix *sums,
	    struct attn_error *err);
	void *arg;
};

/* attn_run (prec ATTN_PREC_FP64) or attn_emulate with split's share of
 * the kernel's tasks; split NULL computes all of them. */
enum attn_status attn_run_split(const struct attn_config *cfg,
    const struct attn_inputs *in, unsigned want, enum attn_precision prec,
    const struct attn_split *split, struct attn_stages *out,
    struct attn_error *err);

/* The process of ranks that computes task k of the tasks of head n
 * (b*H + h) of a forward pass, or (batch, KV head) pair u of a backward
 * one. */
size_t attn_split_task_owner(size_t ranks, size_t n, size_t k, size_t tasks);
size_t attn_split_pair_owner(size_t ranks, size_t u);

/* What a run shared among processes is, for the rows of Q each reads:
 * whether it shares (batch, KV head) pairs (attn_split_pairs of the
 * stages asked for), the kernel's precision (attn_run's ATTN_PREC_FP64,
 * else the emulation's), B batches of H query heads and G KV heads, T
 * query rows each, and the packed sequences (NULL or none: unpacked). */
struct attn_split_shape {
	int pairs;
	enum attn_precision prec;
	size_t B, H, G, T;
	const struct attn_varlen *varlen;
};

/* Whether a run of the stages want shares its (batch, KV head) pairs
 * rather than its query blocks. */
int attn_split_pairs(unsigned want);

/* Calls each(arg, n, i0, rows) for every run of query rows i0 to
 * i0 + rows - 1 of head n (b*H + h) that process rank of ranks reads in
 * the run sh: the rows of its forward tasks, or where the run shares
 * (batch, KV head) pairs, every row of its pairs' heads. */
void attn_split_rows(const struct attn_split_shape *sh, size_t ranks,
    size_t rank, void (*each)(void *arg, size_t n, size_t i0, size_t rows),
    void *arg);

/* ---------------------------------------------------------------- files */

/* Whether buf (len bytes) begins as a .npy does, with NumPy's magic
 * (lib/read_npy.c); attn_is_zip (attn_io.h) is the .npz's. */
int attn_is_npy(const char *buf, size_t len);

/*
 * A .npy whose elements are read later, a run at a time, each process of
 * attn-mpi reading the query rows it computes (lib/read_npy.c).
 * attn_read_npy_later reads the header of the whole file at buf (len
 * bytes, which must stay where they are until the last read), with the
 * reader's messages, into out's dims (its data NULL) and a reader in
 * *later.  attn_npy_later_place gives a its data: with in_place, the
 * elements where they lie when they can be read so (float64 as this
 * host has them, in C order, aligned; a->lent), else zeros of the whole
 * size, on pages untouched until read into (charged to the run's
 * memory).  attn_npy_later_read puts elements i to i + n - 1 (in C
 * order, as attn_read_npy numbers them) into to, or with to NULL reads
 * them where they lie, and returns the first that breaks the rule of
 * flags (ATTN_READ_FINITE ...), SIZE_MAX when none does;
 * attn_npy_later_fault is the data error that attn_read_npy gives for
 * element i.
 */
struct attn_npy_later;
enum attn_status attn_read_npy_later(const char *name, const char *buf,
    size_t len, unsigned flags, struct attn_array *out,
    struct attn_npy_later **later, struct attn_error *err);
enum attn_status attn_npy_later_place(const struct attn_npy_later *l,
    int in_place, struct attn_array *a, struct attn_error *err);
size_t attn_npy_later_read(const struct attn_npy_later *l, size_t i,
    size_t n, double *to);
enum attn_status attn_npy_later_fault(const struct attn_npy_later *l,
    size_t i, struct attn_error *err);
void attn_npy_later_free(struct attn_npy_later *l);

/* ---------------------------------------------------------------- text */

/*
 * Names from the command line and from files (file names, labels,
 * option values, quoted input) reach a terminal in messages and tables.
 * attn_text_escape writes s[0..len) into buf (size bytes, NUL-terminated)
 * with every byte of a control character (C0, DEL, C1: U+0080 to U+009F,
 * which a terminal may read as CSI), of a Unicode format character
 * (category Cf: bidi overrides, zero-width characters, the BOM; and
 * U+2028, U+2029) and of what is not well-formed UTF-8 written as
 * \xHH, so that the text is one line of UTF-8 that moves no cursor.  It writes whole characters and escapes while they fit, sets
 * *used (when not NULL) to the bytes of s written, and returns the
 * length written.  At most 4 * len + 1 bytes are needed.
 */
size_t attn_text_escape(char *buf, size_t size, const char *s, size_t len,
    size_t *used);

/* The name among names[0..n) that word most likely meant: the same but
 * for ASCII case, else the nearest by edit distance (insertions,
 * deletions, substitutions and swaps of neighbours, ignoring case) when
 * that is at most 1 for a name of 3 to 5 letters and 2 for a longer one
 * and no other name is as near, else the one name that word (of 3
 * letters or more) begins; NULL when none is that near, or two are.
 * For "did you mean" hints: the one judge of them in attn. */
const char *attn_suggest(const char *word, const char *const *names,
    size_t n);

/* A short preview of s[0..len) for messages, escaped as
 * attn_text_escape does: at most max bytes, "..." when cut.  buf has room
 * for max + 4 bytes. */
void attn_text_preview(char *buf, size_t max, const char *s, size_t len);

/* The first character of s[0..len), len > 0: returns its length in bytes
 * with its code point in *code, or 1 with *code = -1 when s[0] does not
 * start a well-formed UTF-8 character (overlong, surrogate, past
 * U+10FFFF, cut off by the end). */
size_t attn_utf8_char(const char *s, size_t len, long *code);

/* Whether code is a control character: C0, DEL or C1 (U+0000 to U+001F,
 * U+007F to U+009F). */
int attn_char_is_control(long code);

#endif /* ATTN_PRIVATE_H */
