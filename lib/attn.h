/*
 * attn.h - libattn's computation: the stages of scaled dot-product
 * attention from matrices, their shapes as printed, comparisons of
 * numbers, and errors as values.  Reading inputs and writing numbers
 * are attn_io.h's.  Both are what libattn.so.0 exports (lib/libattn.map).
 *
 * Ownership.  Every struct that this header fills owns the memory it
 * points to, unless its comment says it is a view, and is released with
 * the matching *_free function (attn_matrix_free, attn_stages_free),
 * which also accepts a zeroed struct.  A view (struct attn_matrix made
 * by attn_matrix_view or attn_stage_block) borrows the memory of its
 * parent and must not outlive it or be freed.  What the caller passes in
 * (struct attn_inputs, its matrices, names) stays the caller's: the
 * library reads it during the call and keeps no pointer to it, except
 * attn_error.file, which points at the name the caller passed to the
 * call that failed.
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

struct attn_error {
	enum attn_status status;
	const char *file;	/* borrowed; NULL when no file applies */
	size_t line;		/* 1-based, 0 when no position applies */
	size_t col;		/* 1-based, in characters; 0 likewise */
	int has_offset;		/* binary formats: offset applies (line is 0) */
	size_t offset;		/* byte offset into the file, from 0 */
	char msg[ATTN_MSG_MAX];
};

/*
 * Write into buf (size bytes, always NUL-terminated when size > 0) what
 * follows the file name in a message about err: ":LINE:COL" for a text
 * position, ": byte N" for a byte offset, "" when neither applies.
 * Returns the length of the whole text, as snprintf does.
 */
size_t attn_error_position(char *buf, size_t size,
    const struct attn_error *err);

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

/* The stages (attn(1), STAGES); attn_stage_table gives each one's name,
 * formula and shape.  The backward ones are the gradients of
 * sum(dO * output); internal ones are not offered by name. */
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
	ATTN_STAGE_BIAS,	/* the bias as read, in its own shape */
	ATTN_STAGE_DROPPED,	/* the weights after dropout (with a mask) */
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

/* The gradients of the broadcast inputs, in the shape each was given in:
 * grad_bias with a bias, grad_sinks with sinks (and dO). */
#define ATTN_STAGES_REDUCE (ATTN_STAGE_BIT(ATTN_STAGE_GRAD_BIAS) | \
	ATTN_STAGE_BIT(ATTN_STAGE_GRAD_SINKS))

/* The stages of the passes around the kernel: q, k and v, made by a
 * projection layer (attn_inputs.proj) or without one the operands q, k
 * and v as read (copied when asked for), and those that exist only when
 * the inputs make them: projected when the layer has W_O, q_rot and
 * k_rot with RoPE (attn_config.rope), bias with a bias (copied as read,
 * in the dims it was given in, as grad_bias is shaped);
 * attn_stages_available says which. */
#define ATTN_STAGES_PROJ (ATTN_STAGE_BIT(ATTN_STAGE_Q) | \
	ATTN_STAGE_BIT(ATTN_STAGE_K) | ATTN_STAGE_BIT(ATTN_STAGE_V) | \
	ATTN_STAGE_BIT(ATTN_STAGE_Q_ROT) | ATTN_STAGE_BIT(ATTN_STAGE_K_ROT) | \
	ATTN_STAGE_BIT(ATTN_STAGE_PROJECTED) | ATTN_STAGE_BIT(ATTN_STAGE_BIAS))

/* The stages a dropout mask makes (attn_inputs.dropout_mask): dropped,
 * the weights after dropout. */
#define ATTN_STAGES_DROPOUT ATTN_STAGE_BIT(ATTN_STAGE_DROPPED)

/* Every forward stage that Q, K and V alone give. */
#define ATTN_STAGES_ALL (((1u << ATTN_STAGE_COUNT) - 1u) & \
	~ATTN_STAGES_GRAD & ~ATTN_STAGES_REDUCE & ~ATTN_STAGES_PROJ & \
	~ATTN_STAGES_DROPOUT)

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

/* A row of the stage table. */
struct attn_stage_info {
	const char *name;	/* "weights" */
	const char *formula;	/* "softmax(scaled), row by row" */
	const char *shape;	/* "T x S" */
	enum attn_axis cols;	/* what the columns run over */
	int per_head;		/* a block per batch and head */
	unsigned needs;		/* the stages its definition reads */
	int internal;		/* not offered by name to users */
	enum attn_axis rows;	/* queries, or keys (laid out as K, V) */
	int kv;			/* its heads side by side are the KV heads */
	const char *wide;	/* a block's shape with several heads */
	int reduced;		/* shaped as an input: bias, grad_bias,
				 * grad_sinks */
};

/* The stage table, indexed by enum attn_stage. */
extern const struct attn_stage_info attn_stage_table[ATTN_STAGE_COUNT];

/* Every stage once, in the order --explain and --stage all print them. */
extern const enum attn_stage attn_stage_order[ATTN_STAGE_COUNT];

/* Find a stage by name (len bytes, not NUL-terminated); returns
 * ATTN_STAGE_COUNT when there is none.  Internal stages are found too. */
enum attn_stage attn_stage_lookup(const char *name, size_t len);

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

/* How 4-D arrays are laid out, in and out (attn(1), --layout): without
 * one, heads side by side in the columns; with one, every stage shown
 * 4-D, per-head stages B x H x T x C, output as the inputs were. */
enum attn_layout {
	ATTN_LAYOUT_NONE,	/* 2-D or 3-D, heads side by side */
	ATTN_LAYOUT_BHSD,	/* B x H x S x D: PyTorch SDPA */
	ATTN_LAYOUT_BSHD	/* B x S x H x D: FlashAttention, JAX */
};

/* How the lse stage is written (attn(1), --lse-base, --lse-masked): the
 * natural log or log2, and -inf or +inf for a row with no key.  Only the
 * stage as returned changes; attn computes from the natural value. */
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
	ATTN_PREC_BF16,		/* bfloat16: float32's range, 8 bits */
	ATTN_PREC_FP8_E4M3,	/* OCP FP8 E4M3: 4 bits, up to 448, saturating */
	ATTN_PREC_FP8_E5M2	/* OCP FP8 E5M2: 3 bits, up to 57344, inf */
};

/* Which operand the emulated baseline scales before Q K^T (attn(1),
 * --emulate-order): q, as FlashAttention's attention_ref does by default,
 * or k, as its reorder_ops=True does, the baseline its tests compare
 * kernels with.  In exact arithmetic the two are one; rounded to the
 * format they differ.  attn_run, in double, and the FP8 emulation, which
 * scales the float32 logits, read neither. */
enum attn_emulate_order {
	ATTN_EMULATE_ORDER_Q,	/* F(A(q * scale)) . k (default) */
	ATTN_EMULATE_ORDER_K	/* q . F(A(k * scale)) */
};

/* What a query row that may attend no key gets. */
enum attn_masked_rows {
	ATTN_MASKED_ZERO,	/* weights 0, output 0 */
	ATTN_MASKED_NAN,	/* weights nan, output nan */
	ATTN_MASKED_UNIFORM	/* weights 1/S, output the mean of V's rows */
};

/* The instruction sets of the streaming kernel's inner loops, plainest
 * first, each giving the same bytes: a run uses the best this CPU has,
 * no better than attn_config.isa. */
enum attn_isa {
	ATTN_ISA_AUTO,		/* the best this CPU runs */
	ATTN_ISA_C,		/* plain C */
	ATTN_ISA_AVX2,		/* AVX2 and FMA */
	ATTN_ISA_AVX512,	/* AVX-512F */
	ATTN_ISA_COUNT
};

/* Which pairs of a head's d columns RoPE rotates, pair m by the angle
 * pos * base^(-2m/d). */
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
	double dropout_p;	/* 0 <= p < 1: with attn_inputs.dropout_mask,
				 * the weights it keeps scaled by 1/(1-p) */
	size_t heads;		/* H >= 1 */
	size_t kv_heads;	/* G: divides H; 0 means G = H */
	enum attn_isa isa;	/* the best instruction set the kernel's
				 * loops may use: ATTN_ISA_AUTO by default */
	size_t threads;		/* worker threads; 0: the CPUs it may use */
	/* Called, when not NULL, as parts of a long phase are done (never
	 * two calls at once): done of total, `what` naming the phase's
	 * parts ("query blocks"); a new `what` starts a new phase. */
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
	enum attn_emulate_order emulate_order;	/* ATTN_EMULATE_ORDER_Q;
						 * attn_emulate's alone */
};

/* Set every field of cfg to its default. */
void attn_config_init(struct attn_config *cfg);

/* A projection layer: q, k, v (and the output's projection) as x @ W + b,
 * nn.Linear with its weight transposed (W is in x out); a bias is one
 * value per column of its W; a matrix with data NULL is absent. */
struct attn_proj {
	struct attn_matrix w_q;		/* d_q x H*d_k, required */
	struct attn_matrix w_k;		/* d_kv x G*d_k, required */
	struct attn_matrix w_v;		/* d_kv x G*d_v, required */
	struct attn_matrix w_o;		/* H*d_v x d_out, optional */
	struct attn_matrix b_q, b_k, b_v, b_o;	/* optional; b_o needs w_o */
};

/* Packed sequences and KV-cache lengths (attn(1), --cu-seqlens-q,
 * --cu-seqlens-k, --seqused-k), as FlashAttention's varlen functions
 * take them: with seqs > 0, one batch holds seqs sequences, sequence s
 * the query rows [cu_q[s], cu_q[s+1]) and the keys [cu_k[s], cu_k[s+1])
 * (seqs + 1 offsets each, 0 first, T and S last), each attending only
 * its own keys.  used_k (NULL: all) counts the keys in use, one a
 * sequence or else one a batch (used_n); the rest are padding. */
struct attn_varlen {
	size_t seqs;
	const size_t *cu_q, *cu_k;
	const size_t *used_k;
	size_t used_n;
};

/*
 * The matrices of a computation, the caller's.  q, k and v are stacks of
 * `batches` blocks of rows: q is B*T x H*d_k, k is B*S x G*d_k, v is
 * B*S x G*d_v (heads side by side).  mask and bias (data NULL when
 * absent) are 1, B or B*H blocks (*_blocks), each T x S or broadcast as
 * NumPy does (1 x S, T x 1, 1 x 1); a mask keeps logits where nonzero, a
 * bias is added and may hold -inf.  d_out is dO, shaped as output, for
 * the backward stages (the gradients of sum(dO * output)).
 */
struct attn_inputs {
	size_t batches;
	struct attn_matrix q, k, v;
	struct attn_matrix mask, bias;
	size_t mask_blocks, bias_blocks;
	/* Dropout's keep-mask (data NULL: no dropout), stacked and
	 * broadcast as the mask is: weight (i, j) is kept where it is
	 * nonzero, scaled by 1/(1 - cfg.dropout_p), and dropped (0) where
	 * it is 0, in the forward pass and the backward one alike. */
	struct attn_matrix dropout_mask;
	size_t dropout_blocks;
	/* The dims the bias was given in (2 to 4; 0: its stack's), the
	 * shape of grad_bias, as autograd reduces a broadcast bias. */
	size_t bias_ndim;
	size_t bias_dims[ATTN_MAX_DIMS];
	struct attn_matrix d_out;
	/* Attention sinks, 1 x H or H x 1 (data NULL when absent): head
	 * h's softmax gains a key of logit sinks[h] and value 0. */
	struct attn_matrix sinks;
	/* A projection layer (proj.w_q.data NULL when absent): q and k
	 * then hold the embeddings XQ and XKV, and v is not read. */
	struct attn_proj proj;
	struct attn_varlen varlen;
	/* FP8 descale factors (attn(1), --descale-q), data NULL when absent:
	 * B x G, or 1 x 1 for every batch and KV head, as FlashAttention 3
	 * takes them; the attention is that of descale_q Q, descale_k K and
	 * descale_v V, batch b's KV head g (and its query heads) scaled by
	 * element (b, g).  Forward stages only. */
	struct attn_matrix descale_q, descale_k, descale_v;
	/* ALiBi's slopes as kernels take them (FlashAttention's and
	 * FlashInfer's alibi_slopes): H, in a row or a column, or B x H,
	 * one row a batch; data NULL: Press et al.'s (attn_alibi_slope).
	 * Read only with cfg.alibi. */
	struct attn_matrix alibi_slopes;
};

/*
 * The stages of a run.  Only those in `have` are held (stage[s].data is
 * NULL for the others).  Per-head stages are stacks of T-row blocks,
 * block (b, h) at b*H + h; output is B*T x H*d_v and the stages laid out
 * as Q, K or V are shaped as they are; bias and grad_bias are the bias's
 * blocks (as read, of the gradient).  attn_stage_block gives one batch
 * and head, attn_stage_shape the dims as printed.
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
	/* bias's and grad_bias's dims and what each runs over (0 without
	 * either). */
	size_t bias_ndim;
	size_t bias_dim[ATTN_MAX_DIMS];
	enum attn_axis bias_axis[ATTN_MAX_DIMS];
	enum attn_lse_base lse_base;	/* how lse is written (cfg's) */
	enum attn_lse_masked lse_masked;
	/* With a projection layer: whether XQ and XKV were one matrix, the
	 * columns of XQ, XKV and W_O's output, the stages given a bias. */
	int proj, proj_self;
	size_t d_xq, d_xkv, d_proj;
	unsigned proj_biased;
};

/*
 * Compute the stages in want (ATTN_STAGE_BIT values) of
 * softmax(softcap(Q K^T * scale) + bias + ALiBi, masked) V for every
 * batch and head in double precision (attn(1), Order of operations),
 * holding them and lse; the rest is scratch freed before it returns.
 * A row that may attend no key has lse -inf (masked, nmasked).  Shape
 * errors name both shapes; overflow is a data error; a stage that cfg
 * and in do not make is a usage error.  *out is freed by the caller
 * with attn_stages_free.
 */
enum attn_status attn_run(const struct attn_config *cfg,
    const struct attn_inputs *in, unsigned want, struct attn_stages *out,
    struct attn_error *err);

/* Check shapes as attn_run does and set *bytes to what it would hold,
 * so that a run that does not fit is refused before it starts. */
enum attn_status attn_plan(const struct attn_config *cfg,
    const struct attn_inputs *in, unsigned want, size_t *bytes,
    struct attn_error *err);

/* The stages attn_run can compute for cfg and in. */
unsigned attn_stages_available(const struct attn_config *cfg,
    const struct attn_inputs *in);

/* attn_run's stages as a plain kernel in float32, float16 or bfloat16
 * computes them (attn(1), --emulate; lib/emulate.c gives every step):
 * inf and nan where the format overflows; attn_emulate_plan counts its
 * bytes as attn_plan does. */
enum attn_status attn_emulate(const struct attn_config *cfg,
    const struct attn_inputs *in, unsigned want, enum attn_precision prec,
    struct attn_stages *out, struct attn_error *err);
enum attn_status attn_emulate_plan(const struct attn_config *cfg,
    const struct attn_inputs *in, unsigned want, enum attn_precision prec,
    size_t *bytes, struct attn_error *err);

/* x rounded to the nearest number of format prec, ties to even; in FP8
 * E4M3, which has no inf, what lies past 448 (and inf) is +-448. */
double attn_round(double x, enum attn_precision prec);

/* attn_run of every forward stage for one problem without mask or bias:
 * q is T x H*d_k, k is S x G*d_k, v is S x G*d_v; views are fine. */
enum attn_status attn_compute(const struct attn_config *cfg,
    const struct attn_matrix *q, const struct attn_matrix *k,
    const struct attn_matrix *v, struct attn_stages *out,
    struct attn_error *err);

/* Free what s holds and zero it; a zeroed s is fine. */
void attn_stages_free(struct attn_stages *s);

/* The natural log-sum-exp an element x of stages' lse stands for. */
double attn_lse_natural(const struct attn_stages *stages, double x);

/* The block of stage s for batch b and query head h, a view: for the
 * stages laid out as Q, K or V, the columns of that head (or of the KV
 * head it reads); empty (data NULL) when s is not held. */
struct attn_matrix attn_stage_block(const struct attn_stages *stages,
    enum attn_stage s, size_t b, size_t h);

/*
 * The shape of a stage as printers show it (attn(1), Output of stacks):
 * ndim dims, the B and H levels left out when 1 (4-D always with a
 * layout), a stack of `blocks` blocks of rows x cols.  Element (i0, i1,
 * ..) of the dims is data[i0*step[0] + i1*step[1] + ..] of the stage's
 * matrix, so that a walk in C order of the dims reads what the shape says.
 */
struct attn_shape {
	size_t ndim;			/* 2 to 4 */
	size_t dim[ATTN_MAX_DIMS];	/* outermost first */
	enum attn_axis axis[ATTN_MAX_DIMS];	/* what each dim runs over */
	size_t step[ATTN_MAX_DIMS];	/* element stride of each dim */
	size_t batches, heads;		/* B, and H (1 when not per head) */
	size_t blocks;			/* batches * heads */
	size_t rows, cols;		/* of one block */
	const char *legend;		/* a block's dims: "T x S" */
	size_t col_heads;		/* heads side by side in the columns */
};

/* Fill *sh with the shape of stage s of stages. */
void attn_stage_shape(const struct attn_stages *stages, enum attn_stage s,
    struct attn_shape *sh);

/* The number of elements of a shape: the product of its dims. */
size_t attn_shape_count(const struct attn_shape *sh);

/* Copy stage s (held) into out, attn_shape_count elements, in C order of
 * its shape: what numpy.save of the stage would hold. */
void attn_stage_flatten(const struct attn_stages *stages, enum attn_stage s,
    double *out);

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

/* A candidate against a reference, element by element in the same order
 * (attn_stage_flatten's); a pair not finite on one side only fails. */
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

/* Compare n numbers of cand against ref: numpy.allclose's test and the
 * spread test (lib/compare.c says why both). */
void attn_compare(const double *cand, const double *ref, size_t n,
    double rtol, double atol, struct attn_compare *c);

/* Judge c against base, an emulated baseline's comparison with the same
 * reference, as FlashAttention's tests do: max_abs <= factor * base's. */
void attn_compare_baseline(struct attn_compare *c,
    const struct attn_compare *base, double factor);

#endif /* ATTN_H */
