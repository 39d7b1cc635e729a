/*
 * attn.h - libattn's computation: the stages of scaled dot-product
 * attention from matrices, their shapes as printed, comparisons of
 * numbers, and errors as values.  Reading inputs and writing numbers and
 * text are attn_io.h's.
 *
 * Ownership.  Every struct that this header fills owns the memory it
 * points to, unless its comment says it is a view, and is released with
 * the matching *_free function (attn_matrix_free, attn_stages_free),
 * which also accepts a zeroed struct; attn_alloc_array's memory is freed
 * with free().  A view (struct attn_matrix made by attn_matrix_view,
 * attn_stage_block, attn_shape_block, attn_head_inputs) borrows the
 * memory of its parent and must not outlive it or be freed.  What the
 * caller passes in (struct attn_inputs, its matrices, names) stays the
 * caller's: the library reads it during the call and keeps no pointer
 * to it, except attn_error.file, which points at the name the caller
 * passed to the call that failed.
 *
 * Errors.  Calls that can fail return enum attn_status and, on failure,
 * fill a caller-provided struct attn_error with the file, line and column
 * (both 1-based, 0 when they do not apply) or, for binary formats, a byte
 * offset, and a one-line message.  The library never prints, exits,
 * aborts on user data, or reads the environment or the locale.
 *
 * Stages.  attn_run computes the stages a caller asks for (a bit set of
 * ATTN_STAGE_BIT values) and holds only those in struct attn_stages; what
 * they depend on is computed into scratch that is freed before it returns.
 * The backward stages (ATTN_STAGES_GRAD) need the upstream gradient dO,
 * attn_inputs.d_out, as well.
 *
 * Dims legend: B batches, H query heads, G KV heads, T query rows, S key
 * rows, d_k columns of Q and K, d_v columns of V (per head).
 */
#ifndef ATTN_H
#define ATTN_H

#include <stddef.h>

/* ---------------------------------------------------------------- errors */

/* One status per exit code of attn(1) (EXIT STATUS); the CLI maps them
 * in one switch. */
enum attn_status {
	ATTN_OK = 0,
	ATTN_ERR_USAGE,    /* a bad argument or option value */
	ATTN_ERR_DATA,     /* parse error, shape mismatch, non-finite value */
	ATTN_ERR_NOINPUT,  /* an input cannot be opened */
	ATTN_ERR_CANTCREAT,/* the output file cannot be created */
	ATTN_ERR_IO,       /* read or write error */
	ATTN_ERR_NOMEM,    /* out of memory or size overflow */
	ATTN_ERR_INTERNAL  /* a bug */
};

#define ATTN_MSG_MAX 256

#if defined(__GNUC__)
#define ATTN_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define ATTN_PRINTF(f, a)
#endif

struct attn_error {
	enum attn_status status;
	const char *file;	/* borrowed; NULL when no file applies */
	size_t line;		/* 1-based, 0 when no position applies */
	size_t col;		/* 1-based, in characters; 0 likewise */
	int has_offset;		/* binary formats: offset applies (line is 0) */
	size_t offset;		/* byte offset into the file, from 0 */
	char msg[ATTN_MSG_MAX];
};

/* Fill err (which may be NULL) with status, file, position and a
 * printf-style message, and return status; line and col 0 mean no
 * position.  For callers that report their own errors the library's way. */
enum attn_status attn_error_set(struct attn_error *err,
    enum attn_status status, const char *file, size_t line, size_t col,
    const char *fmt, ...) ATTN_PRINTF(6, 7);

/*
 * Write into buf (size bytes, always NUL-terminated when size > 0) what
 * follows the file name in a message about err: ":LINE:COL" for a text
 * position, ": byte N" for a byte offset, "" when neither applies.
 * Returns the length of the whole text, as snprintf does.
 */
size_t attn_error_position(char *buf, size_t size,
    const struct attn_error *err);

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

/* ---------------------------------------------------------------- matrices */

/*
 * A row-major matrix: element (i, j) is data[i * stride + j], with
 * stride >= cols.  An owning matrix has stride == cols.
 */
struct attn_matrix {
	size_t rows, cols, stride;
	double *data;
};

/* Allocate a zeroed rows x cols matrix, checking rows * cols for overflow
 * (charged to the thread's memory account).  Fails with ATTN_ERR_NOMEM.
 * Free with attn_matrix_free. */
enum attn_status attn_matrix_alloc(struct attn_matrix *m, size_t rows,
    size_t cols, struct attn_error *err);

/* Free an owning matrix and zero it. */
void attn_matrix_free(struct attn_matrix *m);

/* A view of rows [r0, r0 + nr) and columns [c0, c0 + nc) of m: no copy.
 * The ranges must lie inside m. */
struct attn_matrix attn_matrix_view(const struct attn_matrix *m, size_t r0,
    size_t nr, size_t c0, size_t nc);

/* *out = a * b; returns 0, or -1 when the product overflows size_t. */
int attn_size_mul(size_t a, size_t b, size_t *out);

/* malloc(n * size) with the product checked; NULL on overflow or failure.
 * Free with free(); no memory account is charged for it. */
void *attn_alloc_array(size_t n, size_t size);

/* The most dimensions an array read from a file, or a stage as it is
 * shown, has. */
#define ATTN_MAX_DIMS 4

/* Pointer to element (i, j). */
static inline double *
attn_at(const struct attn_matrix *m, size_t i, size_t j)
{
	return m->data + i * m->stride + j;
}

/* ---------------------------------------------------------------- stages */

/*
 * The stages, in the order --explain prints them.  attn_stage_table is the
 * single source of truth for their names, formulas, shapes and what each
 * depends on.  Stages marked internal (row_max, row_sum) are computed and
 * kept for printers that show the softmax step by step; the CLI does not
 * offer them by name.
 *
 * The backward stages follow the forward ones: the gradients of
 * L = sum(dO * output) for an upstream gradient dO (attn_inputs.d_out),
 * through the same logits, masks and heads.
 */
enum attn_stage {
	ATTN_STAGE_SCORES,
	ATTN_STAGE_SCALED,
	ATTN_STAGE_WEIGHTS,
	ATTN_STAGE_OUTPUT,
	ATTN_STAGE_LSE,
	ATTN_STAGE_MASK,
	ATTN_STAGE_ROW_MAX,
	ATTN_STAGE_ROW_SUM,
	ATTN_STAGE_GRAD_WEIGHTS,	/* dP = dO V^T */
	ATTN_STAGE_DELTA,		/* rowsum(dO * output) */
	ATTN_STAGE_GRAD_SCALED,		/* dS = weights * (dP - delta) */
	ATTN_STAGE_GRAD_Q,		/* dL/dQ */
	ATTN_STAGE_GRAD_K,		/* dL/dK */
	ATTN_STAGE_GRAD_V,		/* dL/dV */
	ATTN_STAGE_GRAD_BIAS,		/* dL/dbias, in the bias's shape */
	ATTN_STAGE_GRAD_SINKS,		/* dL/dsinks, 1 x H */
	/* The passes around the kernel (attn_stage_order puts them where
	 * --explain shows them: q to k_rot first, projected after output) */
	ATTN_STAGE_Q,		/* XQ W_Q + b_Q, without a layer Q */
	ATTN_STAGE_K,		/* XKV W_K + b_K, without a layer K */
	ATTN_STAGE_V,		/* XKV W_V + b_V, without a layer V */
	ATTN_STAGE_Q_ROT,	/* q rotated by position (RoPE) */
	ATTN_STAGE_K_ROT,	/* k rotated likewise */
	ATTN_STAGE_PROJECTED,	/* output W_O + b_O */
	ATTN_STAGE_COUNT
};

/* A set of stages is a bit set: ATTN_STAGE_BIT(ATTN_STAGE_WEIGHTS) |
 * ATTN_STAGE_BIT(ATTN_STAGE_OUTPUT). */
#define ATTN_STAGE_BIT(s) (1u << (s))

/* The backward stages: attn_run computes them only from dO
 * (attn_inputs.d_out). */
#define ATTN_STAGES_GRAD (ATTN_STAGE_BIT(ATTN_STAGE_GRAD_WEIGHTS) | \
	ATTN_STAGE_BIT(ATTN_STAGE_DELTA) | \
	ATTN_STAGE_BIT(ATTN_STAGE_GRAD_SCALED) | \
	ATTN_STAGE_BIT(ATTN_STAGE_GRAD_Q) | ATTN_STAGE_BIT(ATTN_STAGE_GRAD_K) | \
	ATTN_STAGE_BIT(ATTN_STAGE_GRAD_V))

/* The gradients of the inputs a run broadcasts, which exist only when
 * the inputs have them (attn_stages_available): grad_bias with a bias,
 * grad_sinks with sinks, both with dO.  attn_run reduces them from the
 * backward stages after the kernel, in the shape the input was given
 * in (grad_bias as autograd reduces a broadcast bias; grad_sinks 1 x H,
 * summed over the batches). */
#define ATTN_STAGES_REDUCE (ATTN_STAGE_BIT(ATTN_STAGE_GRAD_BIAS) | \
	ATTN_STAGE_BIT(ATTN_STAGE_GRAD_SINKS))

/* The stages of the passes around the kernel: q, k and v, made by a
 * projection layer (attn_inputs.proj) or without one the operands q, k
 * and v as read (copied when asked for), and those that exist only when
 * the inputs make them: projected when the layer has W_O, q_rot and
 * k_rot with RoPE (attn_config.rope); attn_stages_available says which. */
#define ATTN_STAGES_PROJ (ATTN_STAGE_BIT(ATTN_STAGE_Q) | \
	ATTN_STAGE_BIT(ATTN_STAGE_K) | ATTN_STAGE_BIT(ATTN_STAGE_V) | \
	ATTN_STAGE_BIT(ATTN_STAGE_Q_ROT) | ATTN_STAGE_BIT(ATTN_STAGE_K_ROT) | \
	ATTN_STAGE_BIT(ATTN_STAGE_PROJECTED))

/* Every forward stage that Q, K and V give: every stage but
 * ATTN_STAGES_GRAD (which needs dO), ATTN_STAGES_REDUCE and
 * ATTN_STAGES_PROJ. */
#define ATTN_STAGES_ALL (((1u << ATTN_STAGE_COUNT) - 1u) & \
	~ATTN_STAGES_GRAD & ~ATTN_STAGES_REDUCE & ~ATTN_STAGES_PROJ)

/* What the positions along one axis of a stage stand for, and so where
 * their labels come from. */
enum attn_axis {
	ATTN_AXIS_QUERY,	/* T query rows */
	ATTN_AXIS_KEY,		/* S keys */
	ATTN_AXIS_VALUE,	/* value columns: d_v per head, and for output
				 * H*d_v, the heads side by side */
	ATTN_AXIS_ONE,		/* a single column */
	ATTN_AXIS_BATCH,	/* B batches */
	ATTN_AXIS_HEAD,		/* H query heads */
	ATTN_AXIS_DK,		/* columns of Q and K: d_k per head, and for
				 * q, q_rot and grad_q H*d_k, for k, k_rot and
				 * grad_k G*d_k */
	ATTN_AXIS_MODEL		/* the columns of W_O: d_out */
};

struct attn_stage_info {
	const char *name;	/* "weights" */
	const char *formula;	/* "softmax(scaled), row by row" */
	const char *shape;	/* "T x S" */
	enum attn_axis cols;	/* what the columns run over */
	int per_head;		/* a block per batch and head (else per batch,
				 * heads side by side in the columns) */
	unsigned needs;		/* the stages its definition reads */
	int internal;		/* not offered by name to users */
	enum attn_axis rows;	/* ATTN_AXIS_QUERY, or ATTN_AXIS_KEY for k,
				 * v, k_rot and the gradients of K and V */
	int kv;			/* not per head: the heads side by side are
				 * the G KV heads (as in K and V), not the H
				 * query heads */
	const char *wide;	/* not per head: one block's shape with
				 * several heads, "T x H*d_v"; else NULL */
	int reduced;		/* grad_bias, grad_sinks: shaped as an input
				 * (the bias, the sinks), not in blocks of
				 * the run; rows and cols are those of the
				 * widest case (attn_stage_axes says the
				 * run's) */
};

extern const struct attn_stage_info attn_stage_table[ATTN_STAGE_COUNT];

/* Every stage once, in the order --explain and --stage all print them:
 * the inputs' passes (q .. k_rot), the forward stages, projected right
 * after output. */
extern const enum attn_stage attn_stage_order[ATTN_STAGE_COUNT];

/* Find a stage by name (len bytes, not NUL-terminated); returns
 * ATTN_STAGE_COUNT when there is none.  Internal stages are found too. */
enum attn_stage attn_stage_lookup(const char *name, size_t len);

/*
 * The set want together with every stage its members depend on, directly
 * or not (attn_stage_table[].needs): what plain passes, a stage each,
 * compute for want.  attn_run's streaming kernel fuses stages (it forms
 * weights a tile at a time and keeps them only when held) and may
 * compute less.  Bits that name no stage are dropped.
 */
unsigned attn_stage_closure(unsigned want);

/* ---------------------------------------------------------------- compute */

enum attn_scale_mode {
	ATTN_SCALE_DEFAULT,	/* 1 / sqrt(d_k), d_k per head */
	ATTN_SCALE_NONE,	/* 1 */
	ATTN_SCALE_VALUE	/* attn_config.scale */
};

/* Where query and key positions line up when T != S: query i sits at
 * position i + offset among the keys. */
enum attn_align {
	ATTN_ALIGN_TOP_LEFT,	 /* offset 0 (PyTorch is_causal, JAX) */
	ATTN_ALIGN_BOTTOM_RIGHT	 /* offset S - T (FlashAttention >= 2.1) */
};

/*
 * How 4-D arrays are laid out, in and out.  Without a layout (2-D and
 * 3-D inputs) the heads of Q, K and V sit side by side in the columns and
 * stages are shown as attn(1) says (Output of stacks).  With one, 4-D
 * inputs fold into that form (attn_array_fold_heads) and every stage is
 * shown 4-D: per-head stages B x H x T x C in both layouts (PyTorch's
 * and JAX's order for logits and weights), output B x H x T x d_v (BHSD)
 * or B x T x H x d_v (BSHD), as the inputs were.
 */
enum attn_layout {
	ATTN_LAYOUT_NONE,	/* 2-D or 3-D, heads side by side */
	ATTN_LAYOUT_BHSD,	/* B x H x S x D: PyTorch SDPA */
	ATTN_LAYOUT_BSHD	/* B x S x H x D: FlashAttention, JAX */
};

/*
 * How the lse stage is written, as kernels store it: the natural log
 * (PyTorch, FlashAttention) or log2 (Triton's tutorial kernel and the
 * kernels derived from it, which compute exp2); and what a row with no
 * key gets: -inf, the log of an empty sum, or +inf, which FlashAttention
 * stores there.  Only the stage as returned changes: everything attn
 * computes from lse reads the natural value (attn_lse_natural).
 */
enum attn_lse_base {
	ATTN_LSE_E,		/* natural log (default) */
	ATTN_LSE_2		/* log2: lse * log2(e) */
};

enum attn_lse_masked {
	ATTN_LSE_MASKED_NEG_INF,	/* -inf (default) */
	ATTN_LSE_MASKED_POS_INF		/* +inf, as FlashAttention stores it */
};

/* The floating-point formats attn_emulate and attn_round know. */
enum attn_precision {
	ATTN_PREC_FP64,		/* double: what attn_run computes in */
	ATTN_PREC_FP32,		/* IEEE binary32 */
	ATTN_PREC_FP16,		/* IEEE binary16 */
	ATTN_PREC_BF16		/* bfloat16: float32's range, 8 bits */
};

/* What a query row that may attend no key gets. */
enum attn_masked_rows {
	ATTN_MASKED_ZERO,	/* weights 0, output 0 */
	ATTN_MASKED_NAN,	/* weights nan, output nan */
	ATTN_MASKED_UNIFORM	/* weights 1/S, output the mean of V's rows */
};

/*
 * The instruction sets the streaming kernel's inner loops are written
 * for, plainest first.  Every one gives the same bytes.  A run uses the
 * best one this CPU runs, or with attn_config.isa the best one that is
 * no better than the one named (for tests and timings that compare
 * them).
 */
enum attn_isa {
	ATTN_ISA_AUTO,		/* the best this CPU runs */
	ATTN_ISA_C,		/* plain C */
	ATTN_ISA_AVX2,		/* AVX2 and FMA */
	ATTN_ISA_AVX512,	/* AVX-512F */
	ATTN_ISA_COUNT
};

/* The name of an instruction set: "c", "avx2", "avx512"; "auto" for
 * AUTO, "unknown" for a value beyond them. */
const char *attn_isa_name(enum attn_isa isa);

/*
 * Which pairs of columns rotary position embedding rotates in a head of
 * d columns, pair m (0 <= m < d/2) by the angle pos * base^(-2m/d).
 */
enum attn_rope_style {
	ATTN_ROPE_HALF,		/* (x_m, x_{m+d/2}): GPT-NeoX, Llama as
				 * Hugging Face writes it (rotate_half) */
	ATTN_ROPE_INTERLEAVED	/* (x_{2m}, x_{2m+1}): the RoFormer paper,
				 * GPT-J (rotate_every_two), Meta's Llama */
};

/* How to compute; attn_config_init sets every default (plain attention,
 * one head, the thread count left to the library). */
struct attn_config {
	enum attn_scale_mode scale_mode;
	double scale;		/* used with ATTN_SCALE_VALUE; finite */
	double softcap;		/* > 0: logits become softcap*tanh(x/softcap) */
	int causal;		/* key j only when j <= i + offset */
	int window;		/* key j only in [i+offset-left, i+offset+right] */
	size_t window_left, window_right;
	int alibi;		/* add -slope_h * |i + offset - j| */
	enum attn_align align;
	enum attn_masked_rows masked_rows;
	int mask_invert;	/* mask nonzero means masked out */
	size_t heads;		/* H >= 1 */
	size_t kv_heads;	/* G: divides H; 0 means G = H */
	enum attn_isa isa;	/* the best instruction set the kernel's
				 * loops may use: ATTN_ISA_AUTO by default */
	size_t threads;		/* worker threads; 0: attn_cpu_count() */
	/* When not NULL, called as the work of a long phase is done (from
	 * whichever thread finished a part, never two calls at once): done
	 * of total parts so far, `what` naming the parts and the phase
	 * ("query blocks" of the streaming kernel, then "key blocks of the
	 * backward pass" with backward stages, "query blocks of the
	 * emulated fp16 kernel", ...); a new `what` starts a new phase. */
	void (*progress)(void *arg, const char *what, size_t done,
	    size_t total);
	void *progress_arg;
	int rope;		/* rotate each head's q and k rows by position
				 * (query i at i + offset, key j at j) before
				 * the scores; d_k must be even */
	double rope_base;	/* > 0, finite; 10000 by default */
	enum attn_rope_style rope_style;	/* ATTN_ROPE_HALF by default */
	enum attn_layout layout;	/* how stages are shown: NONE by
					 * default; computing ignores it */
	enum attn_lse_base lse_base;		/* ATTN_LSE_E by default */
	enum attn_lse_masked lse_masked;	/* ATTN_LSE_MASKED_NEG_INF */
};

void attn_config_init(struct attn_config *cfg);

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

/*
 * A projection layer: what turns embeddings into q, k and v (and the
 * heads' output into the layer's), each as x @ W + b, which is what
 * nn.Linear computes with its weight transposed (PyTorch stores
 * nn.Linear.weight as out x in; W here is in x out).  XQ has d_q
 * columns and XKV d_kv (both d_model in self-attention).  Every bias is
 * a row (or column) of one value per column of its W; a matrix with
 * data NULL is absent.
 */
struct attn_proj {
	struct attn_matrix w_q;		/* d_q x H*d_k, required */
	struct attn_matrix w_k;		/* d_kv x G*d_k, required */
	struct attn_matrix w_v;		/* d_kv x G*d_v, required */
	struct attn_matrix w_o;		/* H*d_v x d_out, optional */
	struct attn_matrix b_q, b_k, b_v, b_o;	/* optional; b_o needs w_o */
};

/*
 * Packed variable-length sequences and KV-cache lengths, a part of
 * struct attn_inputs (below).
 */
struct attn_varlen {
	/*
	 * seqs > 0: Q and K hold seqs sequences packed one after
	 * the other, as FlashAttention's varlen functions take them
	 * (one batch, T = total_q, S = total_k): sequence s is the
	 * query rows [cu_q[s], cu_q[s+1]) and the keys [cu_k[s],
	 * cu_k[s+1]), and its queries attend only its keys.  Each
	 * array holds seqs + 1 offsets: 0 first, none less than the
	 * one before (an equal one is an empty sequence), T and S
	 * last.  Causal, window, ALiBi, RoPE and the alignment
	 * apply within each sequence.
	 */
	size_t seqs;
	const size_t *cu_q, *cu_k;
	/*
	 * used_k (NULL: every key is in use): how many keys are
	 * real, one count per sequence when packed, else one per
	 * batch (used_n entries); the keys after them are padding,
	 * masked, and bottom-right alignment counts only the used
	 * keys (FlashAttention's seqused_k and cache_seqlens).
	 */
	const size_t *used_k;
	size_t used_n;
};

/*
 * The matrices of a computation.  q, k and v are stacks of `batches`
 * equal blocks of rows, one per independent problem: q is B*T x H*d_k,
 * k is B*S x G*d_k, v is B*S x G*d_v (heads side by side in the columns).
 * mask and bias (data NULL when absent) are stacks of equal blocks: one
 * block for everything, one per batch, or one per batch and head
 * (batch-major); *_blocks says which.  A block is T x S, or broadcasts as
 * NumPy does: 1 x S is one row for every query (a key-padding mask),
 * T x 1 one column for every key, 1 x 1 one number; so a key-padding
 * mask costs S numbers, not T x S.  A mask keeps key j for query i
 * where it is nonzero (zero with mask_invert); a bias is added to the
 * logits and may hold -inf.
 *
 * d_out is dO, the upstream gradient for the backward stages, shaped
 * like output: B*T x H*d_v, finite (data NULL when absent).  The
 * backward stages are the gradients of sum(dO * output).
 */
struct attn_inputs {
	size_t batches;
	struct attn_matrix q, k, v;
	struct attn_matrix mask, bias;
	size_t mask_blocks, bias_blocks;
	/* The dims the bias was given in, outermost first, which
	 * grad_bias has, as autograd gives a bias the gradient of its own
	 * shape: bias_ndim 2 to 4, the last two a block's rows and
	 * columns; 4-D is B x H (each 1 or the run's), 3-D B or, where
	 * the stack has a block per batch and head, H.  So a
	 * 1 x H x T x S bias stacked for every batch (B*H blocks) has a
	 * gradient of H blocks, each summed over the batches.  bias_ndim 0:
	 * the stack's own, rows x cols, B x rows x cols or
	 * B x H x rows x cols by bias_blocks. */
	size_t bias_ndim;
	size_t bias_dims[ATTN_MAX_DIMS];
	struct attn_matrix d_out;
	/* Attention sinks: one finite logit per query head, 1 x H or H x 1
	 * (data NULL when absent).  Head h's softmax denominator gains
	 * exp(sinks[h]), as if every row had one more key, with that logit
	 * and a value of 0: its weights then sum to less than 1. */
	struct attn_matrix sinks;
	/* A projection layer (proj.w_q.data NULL when absent).  With one,
	 * q holds the embeddings XQ (B*T x d_q) and k the embeddings XKV
	 * (B*S x d_kv), the same matrix for self-attention; v is not read.
	 * q, k and v are then XQ W_Q + b_Q, XKV W_K + b_K, XKV W_V + b_V. */
	struct attn_proj proj;
	/* Packed variable-length sequences and KV-cache lengths (all
	 * zero when neither is given). */
	struct attn_varlen varlen;
};

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

/*
 * The stages of a run, computed once; printers and checks read these
 * numbers and never re-derive them.  Only the stages in `have` are held
 * (stage[s].data is NULL for the others).  Per-head stages (scores,
 * scaled, weights, lse, mask, row_max, row_sum, grad_weights, delta,
 * grad_scaled) are stacks of T-row blocks, block (b, h) at b*H + h;
 * output is B*T x H*d_v, the heads of each query side by side; q, q_rot
 * and grad_q are laid out as Q is, B*T x H*d_k, k, k_rot and grad_k as K,
 * B*S x G*d_k, v and grad_v as V, B*S x G*d_v, and projected is
 * B*T x d_out.  grad_bias is the bias's blocks of the gradient, one
 * under another (bias_dim), grad_sinks 1 x H.  attn_stage_block returns
 * the piece for one batch and head, attn_stage_shape the dims printers
 * show.
 */
struct attn_stages {
	size_t batches, heads, kv_heads;
	size_t T, S, d_k, d_v;			/* d_k, d_v per head */
	double scale;				/* the scale used */
	enum attn_precision precision;	/* FP64, or attn_emulate's */
	enum attn_layout layout;		/* cfg->layout */
	unsigned have;		/* stages held: those asked for, and lse */
	unsigned computed;	/* stages the kernel computed, held or not */
	struct attn_matrix stage[ATTN_STAGE_COUNT];	/* owned */
	size_t nmasked;		/* rows that may attend no key */
	size_t *masked;		/* their rows in the per-head stacks */
	struct attn_matrix sinks;	/* 1 x H, the sinks of the run (owned);
					 * data NULL without sinks */
	/* grad_bias's dims (attn_inputs.bias_dims, or its stack's) and
	 * what each runs over: ATTN_AXIS_BATCH, _HEAD, _QUERY, _KEY, or
	 * _ONE where the bias broadcasts; bias_ndim 0 without grad_bias. */
	size_t bias_ndim;
	size_t bias_dim[ATTN_MAX_DIMS];
	enum attn_axis bias_axis[ATTN_MAX_DIMS];
	/* With a projection layer: the columns of XQ and XKV, of W_O's
	 * output (0 without W_O), whether XQ and XKV were one matrix, and
	 * which of q, k, v and projected had a bias added (stage bits). */
	enum attn_lse_base lse_base;	/* how lse is written (cfg's) */
	enum attn_lse_masked lse_masked;
	int proj, proj_self;
	size_t d_xq, d_xkv, d_proj;
	unsigned proj_biased;
};

/*
 * Compute the stages in want (a set of ATTN_STAGE_BIT values) of
 * softmax(softcap(Q K^T * scale) + bias + ALiBi, masked) V for every batch
 * and head, with the streaming kernel (lib/kernel_stream.c: online
 * softmax over blocks of keys, on cfg->threads threads; the backward
 * stages FlashAttention-2's way, lib/kernel_stream_grad.c), the one
 * kernel of the library in double precision.  lse is always held too:
 * the rows that may attend no key (nmasked, masked) are those whose lse
 * is -inf.  With sinks no row is one of them: a row whose keys are all
 * masked puts all its weight on the sink (weights 0, output 0, lse the
 * sink).  Stages that want depends on but does not hold are computed a
 * block at a time and not kept.  With a projection layer (in->proj) q,
 * k and v are projected first, with RoPE (cfg->rope) q and k rotated,
 * before the kernel runs, and projected comes from output after it;
 * grad_bias and grad_sinks are reduced from the backward stages last
 * (lib/grad_reduce.c).  Shape errors name both shapes and the rule
 * (which W, and dO's too, whenever in->d_out is given); scores or
 * gradients that overflow are a data error; a backward stage without
 * dO, or a stage that in and cfg do not make
 * (attn_stages_available), is a usage error.  On success *out owns its
 * memory (attn_stages_free).
 */
enum attn_status attn_run(const struct attn_config *cfg,
    const struct attn_inputs *in, unsigned want, struct attn_stages *out,
    struct attn_error *err);

/*
 * Check the shapes as attn_run does and set *bytes to the memory that
 * attn_run(cfg, in, want) will hold: the stages it keeps and the scratch
 * of its kernel, so that a caller can refuse a run that would not fit
 * before trying it.  A size that overflows is ATTN_ERR_NOMEM.
 */
enum attn_status attn_plan(const struct attn_config *cfg,
    const struct attn_inputs *in, unsigned want, size_t *bytes,
    struct attn_error *err);

/* The stages attn_run can compute for cfg and in: ATTN_STAGES_ALL, the
 * backward ones with dO, and those of ATTN_STAGES_PROJ that a layer
 * (with or without W_O) and RoPE make. */
unsigned attn_stages_available(const struct attn_config *cfg,
    const struct attn_inputs *in);

/*
 * attn_run's stages as a plain kernel in precision prec computes them,
 * in the naive order (FlashAttention's attention_ref with upcast=False,
 * and autograd's backward in that dtype): Q, K, V, dO and the bias
 * rounded to prec first, q * scale rounded to prec before the dot
 * products; every multiply-add, exponential, logarithm, tanh and
 * division rounded to float32 (the accumulator real fp16 and bf16
 * kernels keep), and each stage stored in prec (lib/emulate.c gives
 * every step).  Threaded (cfg->threads), with the same bytes for any
 * thread count.  Overflow is not an error here:
 * it gives what the format gives, inf and nan.  The baseline --emulate
 * compares a kernel with.  attn_emulate_plan counts its bytes as
 * attn_plan does.
 */
enum attn_status attn_emulate(const struct attn_config *cfg,
    const struct attn_inputs *in, unsigned want, enum attn_precision prec,
    struct attn_stages *out, struct attn_error *err);
enum attn_status attn_emulate_plan(const struct attn_config *cfg,
    const struct attn_inputs *in, unsigned want, enum attn_precision prec,
    size_t *bytes, struct attn_error *err);

/*
 * x rounded to the nearest number of format prec, ties to even (IEEE 754
 * roundTiesToEven): subnormals where the format has them, +-inf past its
 * largest number (from half an ulp above it), nan kept.  FP64 is x.
 */
double attn_round(double x, enum attn_precision prec);

/* attn_run of every forward stage for one problem without mask or bias:
 * q is T x H*d_k, k is S x G*d_k, v is S x G*d_v; views are fine. */
enum attn_status attn_compute(const struct attn_config *cfg,
    const struct attn_matrix *q, const struct attn_matrix *k,
    const struct attn_matrix *v, struct attn_stages *out,
    struct attn_error *err);

void attn_stages_free(struct attn_stages *s);

/* The natural log-sum-exp that an element x of stages' lse stands for,
 * whatever --lse-base and --lse-masked wrote it as: x itself by default;
 * x * ln 2 in log2; -inf for the +inf of a row with no key. */
double attn_lse_natural(const struct attn_stages *stages, double x);

/* The block of stage s for batch b and query head h: a view.  For
 * output, q, q_rot and grad_q, the T x d_v or T x d_k columns of head h;
 * for k, v, k_rot, grad_k and grad_v, the S x d_k or S x d_v columns of
 * the KV head that h reads (attn_kv_head); for projected, all of batch
 * b; for grad_bias, the block that batch b and head h add into; for
 * grad_sinks, head h's 1 x 1.  Empty (0 x 0, data NULL) when s is not
 * held. */
struct attn_matrix attn_stage_block(const struct attn_stages *stages,
    enum attn_stage s, size_t b, size_t h);

/* What the rows and the columns of a block of stage s run over, for
 * labels: the stage table's, but for grad_bias, whose rows are the
 * queries or one (ATTN_AXIS_ONE) and columns the keys or one as the
 * bias's are, and grad_sinks, one row of the heads (ATTN_AXIS_HEAD). */
void attn_stage_axes(const struct attn_stages *stages, enum attn_stage s,
    enum attn_axis *rows, enum attn_axis *cols);

/*
 * The shape of a stage as every printer shows it (attn(1), Output of
 * stacks):
 * per-head stages are B x H x T x C, output is B x T x H*d_v (q, q_rot
 * and grad_q likewise B x T x H*d_k, k, k_rot and grad_k B x S x G*d_k,
 * v and grad_v B x S x G*d_v, projected B x T x d_out), and the B and H
 * levels are left out when they are 1.  The stage is a stack of `blocks`
 * blocks of R x C (rows x cols, R = T, or S for the stages laid out as K
 * and V), block n at rows n*R.., which is batch n / heads, head
 * n % heads (attn_shape_block), which tables and csv print one by
 * one.  What the rows run over (queries, or keys) is the stage table's
 * `rows` (attn_stage_axes), never a place in the dims: it is
 * axis[ndim - 2] but in bshd, where the heads of a stage that has them
 * side by side come between rows and columns (B x R x heads x w).  With
 * a layout (enum attn_layout) every stage is 4-D but grad_bias and
 * grad_sinks, which keep the shape of their input in every layout:
 * grad_bias the bias's dims as given (a block per batch, head or both,
 * as the bias has them), grad_sinks 1 x H (one block, a column a head:
 * col_heads H).  Element (i0, i1, ..) of the dims is
 * data[i0*step[0] + i1*step[1] + ..] of the stage's matrix, so that any
 * walk in C order of the dims (attn_stage_flatten, the json and npy
 * printers) reads what the shape says.
 */
struct attn_shape {
	size_t ndim;			/* 2 to 4 */
	size_t dim[ATTN_MAX_DIMS];	/* outermost first */
	enum attn_axis axis[ATTN_MAX_DIMS];	/* what each dim runs over */
	size_t step[ATTN_MAX_DIMS];	/* element stride of each dim */
	size_t batches, heads;		/* B, and H for a per-head stage
					 * (1 for output) */
	size_t blocks;			/* batches * heads */
	size_t rows, cols;		/* of one block: R x C */
	const char *legend;		/* one block's dims in symbols: "T x S",
					 * or "T x H*d_v" for output with
					 * several heads */
	size_t col_heads;		/* heads side by side in the columns:
					 * H for output, q, q_rot and grad_q, G
					 * for k, v, k_rot, grad_k and grad_v,
					 * else 1 */
};

void attn_stage_shape(const struct attn_stages *stages, enum attn_stage s,
    struct attn_shape *sh);

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

/* The number of elements of a shape: the product of its dims. */
size_t attn_shape_count(const struct attn_shape *sh);

/* Block n of stage s as attn_stage_shape counts blocks: an R x C view. */
struct attn_matrix attn_shape_block(const struct attn_stages *stages,
    enum attn_stage s, size_t n);

/* Copy stage s (held) into out, attn_shape_count elements, in C order of
 * its shape: what numpy.save of the stage would hold. */
void attn_stage_flatten(const struct attn_stages *stages, enum attn_stage s,
    double *out);

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

/* ---------------------------------------------------------------- checking */

/* What made a comparison fail (struct attn_compare's fails). */
enum {
	ATTN_FAIL_ELEMENTS = 1,	 /* some |a - b| > atol + rtol * |b| */
	ATTN_FAIL_NONFINITE = 2, /* nan or an infinity on one side only */
	ATTN_FAIL_SPREAD = 4,	 /* where the element test would pass b's
				  * mean: rms |a - b| > atol +
				  * ATTN_SPREAD_FRACTION * std b */
	ATTN_FAIL_FACTOR = 8	 /* max |a - b| > factor * the baseline's
				  * + atol */
};

/* The spread test's bound on the RMS error, in standard deviations of
 * the reference (lib/compare.c says why a tenth). */
#define ATTN_SPREAD_FRACTION 0.1

/*
 * A candidate a against a reference b, element by element in the same
 * order (attn_stage_flatten gives attn's).  Pairs where either side is
 * not finite count in `finite` only when they match (both nan, or the
 * same infinity); otherwise they are `nonfinite` and failing.  Indices
 * are into the arrays; worst is count when no pair differs.
 */
struct attn_compare {
	size_t count;		/* pairs compared */
	size_t finite;		/* pairs with both sides finite */
	size_t failing;		/* pairs that fail, nonfinite included */
	size_t nonfinite;	/* nan or an infinity on one side only */
	size_t first_nonfinite;	/* the first of those */
	double rtol, atol;
	double max_abs;		/* largest |a - b| of finite pairs */
	double max_rel;		/* largest |a - b| / |b| (inf when b = 0) */
	size_t worst;		/* first nonfinite pair, else max_abs's */
	double corr;		/* Pearson's r of finite pairs; nan when
				 * either side is constant */
	double ref_min, ref_max;	/* the reference's spread */
	double ref_mean, ref_std;	/* of its finite values */
	double rms_abs;		/* RMS of |a - b| over finite pairs */
	int spread_applies;	/* the element test would pass ref_mean
				 * everywhere: the spread test decides too */
	double spread_bound;	/* atol + ATTN_SPREAD_FRACTION * ref_std */
	double factor, base_max_abs, factor_bound;	/* with a baseline */
	unsigned fails;		/* ATTN_FAIL_*: 0 is a pass */
};

/*
 * Compare n numbers of cand against ref with numpy.allclose's element
 * test and the spread test (lib/compare.c says why both), filling *c.
 */
void attn_compare(const double *cand, const double *ref, size_t n,
    double rtol, double atol, struct attn_compare *c);

/*
 * Judge c as FlashAttention's tests do, against base, the comparison of
 * a baseline computed in lower precision (attn_emulate) with the same
 * reference: c passes when its max_abs is at most factor * base's +
 * atol and no pair differs in being finite.
 */
void attn_compare_baseline(struct attn_compare *c,
    const struct attn_compare *base, double factor);

#endif /* ATTN_H */
