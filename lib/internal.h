/*
 * internal.h - what the library's modules share with each other and with
 * the unit tests, but not with users of attn.h.  Every name here starts
 * with attn_ all the same, so that libattn.a exports nothing else (tests
 * check it with nm); being declared here and not in attn.h is what makes
 * it internal.
 */
#ifndef ATTN_INTERNAL_H
#define ATTN_INTERNAL_H

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "attn.h"
#include "attn_io.h"
#include "attn_private.h"

/* ---------------------------------------------------------------- error.c */

/* Like attn_error_set, with the position given as a byte offset into the
 * buffer buf[0..len) that the file was read into. */
enum attn_status attn_error_at(struct attn_error *err,
    enum attn_status status, const char *file, const char *buf, size_t len,
    size_t offset, const char *fmt, ...) ATTN_PRINTF(7, 8);

/* For binary formats: the position is byte `offset` of the file (from 0),
 * which attn_error_position writes as ": byte N". */
enum attn_status attn_error_at_byte(struct attn_error *err,
    enum attn_status status, const char *file, size_t offset,
    const char *fmt, ...) ATTN_PRINTF(5, 6);

/*
 * Turn a byte offset into a 1-based line and column.  Lines end at "\n"
 * (so CRLF counts once); columns count characters, not bytes (UTF-8
 * continuation bytes do not start a column), and a BOM at the start of
 * the buffer is not counted.  An offset past len is taken as len.
 */
void attn_pos_from_offset(const char *buf, size_t len, size_t offset,
    size_t *line, size_t *col);

/* ---------------------------------------------------------------- memory.c */

/* The calling thread's memory account (attn_memory_use), or NULL. */
struct attn_memory *attn_memory_current(void);

/* What malloc takes for a block of bytes, its header and rounding
 * included: what the account is charged for it. */
size_t attn_mem_cost(size_t bytes);

/*
 * The library's allocations, charged to the calling thread's account:
 * NULL when out of memory, or when the charge would pass the account's
 * limit (attn_error_nomem then says which).  Free with attn_mem_free and
 * the size asked for, or resize with attn_mem_realloc and the size the
 * block has, so that the account is given back what it was charged.  A
 * block that cannot shrink is kept, counted as if it had.
 */
void *attn_mem_alloc(size_t bytes);
/* Ask for huge pages behind a large block not yet touched (memory.c). */
void attn_mem_advise_huge(void *p, size_t bytes);
void *attn_mem_zalloc(size_t bytes);
void *attn_mem_array(size_t n, size_t size);	/* n * size, checked */
void *attn_mem_realloc(void *p, size_t old, size_t bytes);
void attn_mem_free(void *p, size_t bytes);

/* A charge of cost (attn_mem_cost) made or given back by hand, for
 * allocations made elsewhere (cJSON's): 0, or -1 when refused. */
int attn_mem_take(size_t cost);
void attn_mem_give(size_t cost);

/* Whether the account refused a charge of the thread's since the last
 * refusal was told (attn_error_nomem, attn_error_input_nomem). */
int attn_mem_refused(void);

/*
 * Grow p, which has room for *cap elements of elsize bytes, to hold at
 * least need, doubling so that n appends cost O(n) in all.  Returns the
 * new pointer, or NULL with p untouched when out of memory or when the
 * size overflows.  Charged: free with attn_mem_free(p, *cap * elsize).
 */
void *attn_grow_array(void *p, size_t *cap, size_t need, size_t elsize);

/* A copy of s[0..len) as a NUL-terminated string; NULL when out of memory
 * (C11 has no strndup).  Charged: free with attn_mem_free(p, len + 1). */
char *attn_str_ndup(const char *s, size_t len);

/* ATTN_ERR_NOMEM for a call that could not allocate while `doing` (for
 * "out of memory doing"), naming the account's limit when it refused;
 * for a reader, "input too large: reading and parsing it takes more
 * than ATTN_MAX_MEMORY (N bytes)". */
enum attn_status attn_error_nomem(struct attn_error *err, const char *file,
    const char *doing);
enum attn_status attn_error_input_nomem(struct attn_error *err,
    const char *file, const char *doing);

/* ---------------------------------------------------------------- matrix.c */

/* *bytes += what a rows x cols matrix of doubles takes, for a plan; a
 * size that overflows is ATTN_ERR_NOMEM: "WHAT of R rows and C columns
 * is too large to address" (what: "a projection"). */
enum attn_status attn_matrix_bytes_add(size_t *bytes, size_t rows,
    size_t cols, const char *what, struct attn_error *err);

/* ---------------------------------------------------------------- array.c */

/* The product of dims[0..n) (1 for n 0): the numbers of a shape whose
 * numbers were allocated, so that it fits; of a's shape. */
size_t attn_dims_count(const size_t *dims, size_t n);
size_t attn_array_count(const struct attn_array *a);

/* ---------------------------------------------------------------- charconv.cc */

/*
 * Read s[0..len), a decimal number without a sign (digits with at most
 * one point, at least one digit, then perhaps e or E, a sign and
 * digits: from_chars' grammar, which is attn's), correctly rounded
 * into *out: 0; 1 when it lies beyond the doubles either way (too
 * large, or nearer 0 than half the least subnormal), *out untouched;
 * -1 when it is not all one such number.
 */
int attn_chars_to_double(const char *s, size_t len, double *out);

/* Write the shortest digits that read back to the finite x into buf
 * (ATTN_NUM_MAX bytes) as %e lays digits out ("-1.5e-07", "1e+22"), with
 * a NUL; returns the length. */
size_t attn_double_to_chars(char *buf, double x);

/* ---------------------------------------------------------------- utf8.c */

/* How many bytes of the user's text (a bad token, a key, a value) a
 * message quotes, through attn_text_preview. */
#define ATTN_PREVIEW_MAX 32

/* The length of a UTF-8 byte order mark at the start of buf: 3 or 0. */
size_t attn_bom_len(const char *buf, size_t len);

/* Whether s[0..len) is the lower-case ASCII word w, in any case. */
int attn_word_is(const char *s, size_t len, const char *w);

/* The offset of the first byte of s[0..len) that is not well-formed UTF-8
 * (overlongs, surrogates and truncated characters included), or len when
 * all of it is. */
size_t attn_utf8_invalid(const char *s, size_t len);

/* Whether code is a Unicode format character: general category Cf (bidi
 * overrides and isolates, zero-width characters, the BOM, U+00AD) or the
 * line and paragraph separators U+2028 and U+2029, which move or hide
 * text on a terminal without being control characters. */
int attn_char_is_format(long code);

/* How many bytes s[0..len) starts with that are ASCII (< 0x80). */
size_t attn_ascii_len(const char *s, size_t len);

/* Whether buf starts with a UTF-16 byte order mark, either byte order
 * (UTF-32's little-endian mark starts the same way). */
int attn_utf16_bom(const char *buf, size_t len);

/* ---------------------------------------------------------------- text.c */

/* A data error at the first byte of buf[0..len) that makes it no UTF-8
 * text: a UTF-16 byte order mark, a NUL, an ill-formed sequence; what
 * names the input in the message ("JSON", "text"). */
enum attn_status attn_encoding_fault(struct attn_error *err, const char *name,
    const char *buf, size_t len, const char *what);

/* A data error at off when label[0..n) holds a control character (C0,
 * DEL or C1). */
enum attn_status attn_label_control(struct attn_error *err, const char *name,
    const char *buf, size_t len, size_t off, const char *label, size_t n);

/*
 * When s[0..n) reads as a number once each Unicode dash in it (U+2010 to
 * U+2015, U+2212 MINUS SIGN, U+FE63, U+FF0D) is replaced by '-', write a
 * message naming the first dash, its code point and the fix into
 * msg[0..size) and return the dash's offset in s; else return n.
 */
size_t attn_dash_fault(const char *s, size_t n, char *msg, size_t size);

/*
 * When s[0..n), which is no number, was meant as one in a spelling attn
 * does not read, write a message naming the cause into msg[0..size) and
 * return the offset in s to point at: a Unicode dash for '-'
 * (attn_dash_fault), Fortran's exponent D (1d0, 1.5D-03), a decimal comma
 * (5,0, where ',' does not separate).  Else return n.
 */
size_t attn_number_fault(const char *s, size_t n, char *msg, size_t size);

/*
 * The message for a ragged n-D array (JSON or printed): the sub-array at
 * depth d (1 <= d < ndim), named by its 0-based indices idx[0..d), holds
 * count elements where the first one at that depth holds want: "ragged
 * array: row 2 of matrix 1 has 3 values but row 1 of matrix 1 has 2".
 */
void attn_ragged_msg(char *msg, size_t size, size_t ndim, size_t d,
    const size_t *idx, size_t count, size_t want);

/* Why a mask may hold no number but 0 and 1 (said for every input
 * format), with the value's text for %s. */
#define MASK_VALUE_MSG "'%s' in a mask: a mask holds 0 and 1 (or false " \
	"and true); an additive mask (0 to keep a key, -inf or a large " \
	"negative such as -1e9 to mask it) belongs in --bias"

/*
 * Whether x passes every rule of attn_value_fault for flags without a look
 * at its text: in a mask 0 or 1 (-0 too), elsewhere (a dropout mask
 * too) any finite number.
 * For readers that check each number and write out the text of the rare
 * one that fails.
 */
static inline int
attn_value_plain(unsigned flags, double x)
{
	return (flags & ATTN_READ_BOOL) && !(flags & ATTN_READ_DROPOUT) ?
	    x == 0.0 || x == 1.0 : isfinite(x);
}

/*
 * Whether the value x, read from the text s[0..n), may stand in an array
 * read with flags (ATTN_READ_BOOL, ATTN_READ_FINITE, ATTN_READ_BIAS):
 * 0 when it may; otherwise -1, with a one-line message quoting the text
 * written into msg[0..size).  Every reader applies these rules.
 */
int attn_value_fault(unsigned flags, double x, const char *s, size_t n,
    char *msg, size_t size);

/* ---------------------------------------------------------------- read_*.c */

/* A .npz alone, as attn_read_named reads one. */
enum attn_status attn_read_npz(const char *name, const char *buf,
    size_t len, unsigned flags, struct attn_named *out,
    struct attn_error *err);

/* The readers behind attn_read_array, one per format; the text reader
 * reads a large file in chunks on up to threads threads (>= 1). */
enum attn_status attn_read_text(const char *name, const char *buf,
    size_t len, enum attn_format fmt, unsigned flags, size_t threads,
    struct attn_array *out, struct attn_error *err);
enum attn_status attn_read_json(const char *name, const char *buf,
    size_t len, unsigned flags, struct attn_array *out,
    struct attn_error *err);
enum attn_status attn_read_repr(const char *name, const char *buf,
    size_t len, unsigned flags, struct attn_array *out,
    struct attn_error *err);
enum attn_status attn_read_jsonl(const char *name, const char *buf,
    size_t len, unsigned flags, struct attn_array *out,
    struct attn_error *err);

/* The length of the Python that opens an array at buf[i]: an optional
 * assignment ("x = ") and a call ("array(" and "tensor(" as NumPy and
 * PyTorch print their repr, "np.array(", "numpy.array(" and
 * "torch.tensor(" as code writes them), with *known set; with an
 * assignment, any other call too, with *known cleared; else 0. */
size_t attn_repr_call(const char *buf, size_t len, size_t i, int *known);

/* The offset past the white space, comments and import statements
 * (import torch, from numpy import array) that may come before an array's
 * code at buf[i]. */
size_t attn_repr_start(const char *buf, size_t len, size_t i);

enum attn_status attn_read_npy(const char *name, const char *buf,
    size_t len, unsigned flags, struct attn_array *out,
    struct attn_error *err);

/*
 * What a .npy of total bytes declares, from its first len bytes (buf),
 * before the rest is read: *count, the elements its header's shape
 * makes (the doubles attn_read_npy will hold), and that shape in dims
 * (ndim and shape, no data), once *need is 0; while buf ends before
 * the header does, *need is the bytes to have before asking again.
 * Errors are those attn_read_npy gives the whole file: its header's
 * faults, and data that the shape and total do not agree on.
 */
enum attn_status attn_npy_declared(const char *name, const char *buf,
    size_t len, size_t total, unsigned flags, size_t *need, size_t *count,
    struct attn_array *dims, struct attn_error *err);

/* What a .npy in two pieces declares (attn_read_npy_parts's: its
 * header, head[0..hlen), and dlen bytes of data): as attn_npy_declared
 * with the whole header at hand, and a header piece that is not exactly
 * the header refused as attn_read_npy_parts refuses it. */
enum attn_status attn_npy_parts_declared(const char *name, const char *head,
    size_t hlen, size_t dlen, unsigned flags, size_t *count,
    struct attn_array *dims, struct attn_error *err);

/* ---------------------------------------------------------------- json_lex.c */

/* The nesting of arrays and objects JSON text may have: cJSON's
 * CJSON_NESTING_LIMIT, past which its tree is refused (read_json.c holds
 * the two to the same number). */
#define ATTN_JSON_DEPTH_MAX 1000

/*
 * A token of JSON text, buf[start, end): kind is the character of
 * [ ] { } , and :, '"' for a string (end past its closing quote), '0'
 * for a number that attn_json_scan checked, 'w' for any other bare word
 * (true, false, null, or one JSON has not), and 0 at the end of the text.
 */
struct attn_json_token {
	size_t start, end;
	char kind;
};

/* The token at or after offset i, as it stands: nothing is checked (a
 * number is a word, 'w'), every byte up to the space is passed over as
 * white space.  For walking text attn_json_scan has checked. */
void attn_json_token(const char *buf, size_t len, size_t i,
    struct attn_json_token *t);

/* attn_json_scan's message for arrays one after another at the top (rows
 * without the outer brackets), which the JSON Lines reader tells its own
 * way, where a line holds one array. */
extern const char attn_json_rows_msg[];

/* An array attn_json_scan read itself: its place (path[0..depth), the
 * member indices from the top object, as json_array's path names it),
 * its bytes buf[start, end) and its numbers. */
struct attn_json_plain {
	size_t path[2], depth;
	size_t start, end;
	struct attn_array a;
};

struct attn_json_plains {
	struct attn_json_plain *v;
	size_t n, cap;
};

/*
 * Check buf[0..len) as JSON text (RFC 8259, UTF-8, nested at most
 * ATTN_JSON_DEPTH_MAX deep, one value and white space after it): the
 * first fault in the text is a data error at its place.  The plain
 * arrays met on the way are read into *plain (json_lex.c says which),
 * also when the scan fails; free them with attn_json_plains_free.
 */
enum attn_status attn_json_scan(const char *name, const char *buf,
    size_t len, struct attn_json_plains *plain, struct attn_error *err);

/* Move the plain array read at path[0..n) into *out: 1 when there is
 * one, else 0. */
int attn_json_plain_take(struct attn_json_plains *ps, const size_t *path,
    size_t n, struct attn_array *out);

void attn_json_plains_free(struct attn_json_plains *ps);

/* ---------------------------------------------------------------- stage.c */

/* Every stage: forward, backward, the reductions and the passes'. */
#define ATTN_STAGES_EVERY (ATTN_STAGES_ALL | ATTN_STAGES_GRAD | \
	ATTN_STAGES_REDUCE | ATTN_STAGES_PROJ | ATTN_STAGES_DROPOUT)

/* The columns of one (batch, head) block of stage s: S for T x S stages,
 * d_v for output, v and grad_v, d_k for q, k, q_rot, k_rot, grad_q and
 * grad_k, 1 for T x 1 stages (and for projected, whose d_out only struct
 * attn_stages knows).  The stacks of stages that are not per head hold H
 * (or G) of these side by side. */
size_t attn_stage_block_cols(enum attn_stage s, size_t S, size_t d_k,
    size_t d_v);

/* The rows of one block of stage s: T, or S for the stages laid out as K
 * and V (k, v, k_rot, grad_k, grad_v). */
size_t attn_stage_block_rows(enum attn_stage s, size_t T, size_t S);

/* The columns of one block of stage s in stages: attn_stage_block_cols,
 * and for projected W_O's, which only stages knows. */
size_t attn_stage_cols(const struct attn_stages *stages, enum attn_stage s);

/* How many blocks stage s has side by side in its columns: 1 for a
 * per-head stage and for projected, G for one laid out as K and V, else
 * H. */
size_t attn_stage_col_heads(enum attn_stage s, size_t H, size_t G);

/* ---------------------------------------------------------------- problem.c */

/*
 * What every kernel needs, derived and checked once by attn_problem_init
 * (in lib/problem.c), so that a second kernel calls it instead of copying
 * it: the dims, the scale, where positions line up, the stages to hold
 * and to compute, and per batch and head the input blocks and the ALiBi
 * slope.  Which logits the masks keep is lib/mask.c's (below).
 *
 * Positions: query i sits at position i + q_pos0 and key j at j + k_pos0.
 * Top-left alignment puts both at 0; bottom-right puts query i at key
 * position i + S - T, written as (q_pos0, k_pos0) = (S, T) so that
 * positions stay unsigned when T > S.  Only differences of positions
 * mean anything.  With packed sequences or counts of used keys
 * (attn_inputs.varlen) they are each sequence's own: attn_row_seq.
 *
 * Dims: B batches, H query heads, G KV heads, T query rows, S keys, d_k
 * and d_v columns per head.
 */
struct attn_problem {
	const struct attn_config *cfg;
	const struct attn_inputs *in;
	size_t B, H, G, T, S, d_k, d_v;
	double scale;		/* the scale in force */
	double keep_scale;	/* 1/(1 - dropout_p) with a dropout mask, else
				 * 1: what the output is multiplied by */
	size_t q_pos0, k_pos0;	/* see above */
	size_t threads;		/* workers the kernel may use, >= 1 */
	unsigned hold;		/* stages held whole in attn_stages */
	unsigned need;		/* hold and what they depend on */
	/* grad_bias of a bias of one column (sum_rows) or of one row,
	 * without holding dS (lib/grad_reduce.c): the backward pass adds
	 * each dS of block n = b*H + h into row n of sums at its query
	 * (B*H x T, each query's sum over the keys in order) or at its key
	 * (B*H x S, each key's over the queries in order), by
	 * attn_bias_sum_add; data NULL when not asked. */
	int sum_rows;
	struct attn_matrix sums;
	/* a share of the tasks (attn_run_split); NULL: all of them */
	const struct attn_split *split;
};

/* lib/split.c: whether this process computes task k of the tasks of
 * head n (b*H + h) of p's forward pass (with backward stages: whether
 * it computes n's (batch, KV head) pair), and (batch, KV head) pair
 * (b, g) of its backward pass; always without a split. */
int attn_split_task_mine(const struct attn_problem *p, size_t n, size_t k,
    size_t tasks);
int attn_split_pair_mine(const struct attn_problem *p, size_t b, size_t g);

/* The query rows of a task of the streaming kernel (a multiple of
 * ATTN_SIMD_ROWS): its tiling, lib/kernel_stream.c, and the rows of Q
 * each process of a split reads, attn_split_rows; and of a forward task
 * of the emulation (lib/emulate.c). */
#define ATTN_TASK_ROWS 144
#define ATTN_EMULATE_LANES 16

/*
 * The forward tasks of a head of the streaming kernel, of T query rows
 * (lib/split.c): up to ATTN_TASK_ROWS query rows each, of one sequence
 * (attn_row_seq), so that a task's rows share their keys and the blocks
 * they are summed in.  Returns their number.  Unpacked, task k is rows
 * k * ATTN_TASK_ROWS on, and no table is made; packed (vl->seqs > 0),
 * with rows not NULL, task k's first row and row count go in rows[2k]
 * and rows[2k+1].
 */
size_t attn_stream_tasks(const struct attn_varlen *vl, size_t T,
    size_t *rows);

/* Add dS(i, j) of block n into p->sums (which must be there), as
 * grad_bias's sums take it: every backward pass calls this for the dS
 * of a block in the order of the sums (each row's keys in order, each
 * key's queries in order), so that they are one arithmetic. */
static inline void
attn_bias_sum_add(const struct attn_problem *p, size_t n, size_t i,
    size_t j, double ds)
{
	double *x = attn_at(&p->sums, n, p->sum_rows ? i : j);

	*x += ds;
}

/* Whether stage s is computed in a run of p (held or in scratch). */
static inline int
attn_problem_needs(const struct attn_problem *p, enum attn_stage s)
{
	return (p->need & ATTN_STAGE_BIT(s)) != 0;
}

/* One batch and head of a problem: the blocks of the inputs it reads. */
struct attn_head {
	size_t b, h, g;		/* batch, query head, the KV head it reads */
	size_t n;		/* its block in the per-head stacks: b*H + h */
	double slope;		/* ALiBi slope of head h; 0 without ALiBi */
	double sink;		/* the sink logit of head h; -inf without
				 * sinks */
	struct attn_matrix q, k, v;	/* T x d_k, S x d_k, S x d_v views */
	struct attn_matrix mask, bias;	/* T x S views; data NULL if absent */
	size_t mask_row0;	/* the row of in->mask where mask starts */
	struct attn_matrix dropout;	/* T x S view of the dropout mask;
					 * data NULL without dropout */
	struct attn_matrix d_out;	/* T x d_v view of dO; likewise */
};

/* Weight w of query i and key j of head hd after dropout (attn(1),
 * --dropout-mask): w times 1/(1 - p) where the mask keeps it, 0 where
 * it drops it, w itself without a mask (attn_dropout_keeps says which).
 * Every kernel takes the dropped weights, the output's and grad_v's,
 * from here. */
static inline int
attn_dropout_keeps(const struct attn_head *hd, size_t i, size_t j)
{
	return hd->dropout.data == NULL ||
	    attn_input_at(&hd->dropout, i, j) != 0.0;
}

static inline double
attn_dropped(const struct attn_problem *p, const struct attn_head *hd,
    size_t i, size_t j, double w)
{
	if (hd->dropout.data == NULL)
		return w;
	return attn_dropout_keeps(hd, i, j) ? w * p->keep_scale : 0.0;
}

/*
 * The sequence a query row belongs to, with its own positions: in a
 * packed batch (attn_inputs.varlen.seqs > 0) the one whose queries hold
 * row i, else the whole block of batch b; its keys end at the count of
 * used keys when there is one.  Query i sits at position i - q0 +
 * q_pos0 and key j at j - k0 + k_pos0, aligned as cfg->align says
 * within the sequence (bottom-right: (q_pos0, k_pos0) = (its used keys,
 * its queries)).  The keys of a row's softmax are summed in blocks that
 * start at k0, so that a packed sequence is computed as it would be
 * alone.
 */
struct attn_seq {
	size_t q0, q1;		/* its query rows [q0, q1) */
	size_t k0, k1;		/* its keys in use [k0, k1) */
	size_t q_pos0, k_pos0;	/* see above */
};

/* The last of the n sequences of offsets cu that starts at or before
 * row x (an empty one starts where the next does, so that is the one
 * that holds x). */
static inline size_t
attn_seq_holding(const size_t *cu, size_t n, size_t x)
{
	size_t lo = 0, hi = n;

	while (hi - lo > 1) {
		const size_t mid = lo + (hi - lo) / 2;

		if (cu[mid] <= x)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static inline void
attn_row_seq(const struct attn_problem *p, size_t b, size_t i,
    struct attn_seq *sq)
{
	const struct attn_varlen *vl = &p->in->varlen;
	size_t lo;

	if (vl->seqs == 0) {
		sq->q0 = sq->k0 = 0;
		sq->q1 = p->T;
		sq->k1 = vl->used_k != NULL ? vl->used_k[b] : p->S;
	} else {
		lo = attn_seq_holding(vl->cu_q, vl->seqs, i);
		sq->q0 = vl->cu_q[lo];
		sq->q1 = vl->cu_q[lo + 1];
		sq->k0 = vl->cu_k[lo];
		sq->k1 = vl->used_k != NULL ? sq->k0 + vl->used_k[lo] :
		    vl->cu_k[lo + 1];
	}
	sq->q_pos0 = p->cfg->align == ATTN_ALIGN_BOTTOM_RIGHT ?
	    sq->k1 - sq->k0 : 0;
	sq->k_pos0 = p->cfg->align == ATTN_ALIGN_BOTTOM_RIGHT ?
	    sq->q1 - sq->q0 : 0;
}

/* Query i's position minus key j's (batch b), as a double: exact, for
 * fewer than 2^53 rows. */
static inline double
attn_pos_distance(const struct attn_problem *p, size_t b, size_t i,
    size_t j)
{
	struct attn_seq sq;

	if (p->in->varlen.seqs == 0 && p->in->varlen.used_k == NULL)
		return (double)(i + p->q_pos0) - (double)(j + p->k_pos0);
	attn_row_seq(p, b, i, &sq);
	return (double)(i - sq.q0 + sq.q_pos0) - ((double)j -
	    (double)sq.k0 + (double)sq.k_pos0);
}

/* The first key of the sequence that holds key j (the last to start at
 * or before it); 0 when nothing is packed.  Key j sits at position j -
 * that + k_pos0 for the queries of that sequence. */
static inline size_t
attn_key_seq0(const struct attn_problem *p, size_t j)
{
	const struct attn_varlen *vl = &p->in->varlen;

	return vl->seqs == 0 ? 0 :
	    vl->cu_k[attn_seq_holding(vl->cu_k, vl->seqs, j)];
}

/*
 * Check cfg and the shapes of in (errors name both shapes and the rule),
 * and fill *p for a run that holds want and lse.
 */
enum attn_status attn_problem_init(struct attn_problem *p,
    const struct attn_config *cfg, const struct attn_inputs *in,
    unsigned want, struct attn_error *err);

/* A stack of B blocks' shape as the user wrote it, into buf: "TxC", or
 * "BxTxC" for B > 1.  Returns buf. */
const char *attn_stack_shape(char *buf, size_t size,
    const struct attn_matrix *m, size_t B);

/* The input blocks of batch b, head h. */
void attn_problem_head(const struct attn_problem *p, size_t b, size_t h,
    struct attn_head *hd);

/* ---------------------------------------------------------------- exp.c */

/*
 * exp(x) for x <= 0, the range softmax uses, within 1 ulp of expl
 * (tests/unit/check_stream.c); 0 for x below -746 and for -inf.  Every
 * instruction set computes it with the same operations (lib/exp.c
 * explains them), so the vector versions in lib/simd_*.c give these
 * bytes too.
 */
double attn_exp(double x);

/* Its table: 2^(i/16) as a double (hi) and the rest of it (lo). */
extern const double attn_exp_hi[16], attn_exp_lo[16];

/* Its constants: 1.5 * 2^52 (adding it rounds to an integer), 16/ln 2,
 * ln 2 / 16 in two parts, the argument below which exp is 0, and the
 * Taylor coefficients 1/k! of expm1 on |r| <= ln 2 / 32. */
#define ATTN_EXP_SHIFT 0x1.8p52
#define ATTN_EXP_INV_STEP 0x1.71547652b82fep+4
#define ATTN_EXP_STEP_HI 0x1.62e42fefa39efp-5
#define ATTN_EXP_STEP_LO 0x1.abc9e3b39803fp-60
#define ATTN_EXP_MIN (-746.0)
#define ATTN_EXP_C2 0x1p-1
#define ATTN_EXP_C3 0x1.5555555555555p-3
#define ATTN_EXP_C4 0x1.5555555555555p-5
#define ATTN_EXP_C5 0x1.1111111111111p-7
#define ATTN_EXP_C6 0x1.6c16c16c16c17p-10
#define ATTN_EXP_C7 0x1.a01a01a01a01ap-13

/* ------------------------------------------------------------ arithmetic */

/*
 * For the scalar loops that call fma() (the tests' reference kernel,
 * attn_exp): on x86-64 with GCC, a second copy of the function compiled
 * for FMA, picked when the program loads where the CPU has it, so that
 * each fma() is one instruction rather than a call into libm.  The
 * numbers are the same, since fma rounds once either way, and GCC does
 * not fuse a * b + c of its own in ISO C (-std=c11 sets
 * -ffp-contract=off), so nothing else changes.  Not under
 * ThreadSanitizer, whose instrumented resolvers would run before it has
 * started (a crash as the program loads).
 */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(__SANITIZE_THREAD__)
#define ATTN_FMA_CLONES __attribute__((target_clones("fma", "default")))
#else
#define ATTN_FMA_CLONES
#endif

/*
 * For the loops written for the compiler to vectorise: the emulation's
 * float32 loops (lib/emulate.c, lib/round.c), lane by lane over
 * ATTN_EMU_LANES rows, and the .npy reader's scans (lib/read_npy.c): a
 * second copy for x86-64-v3 (AVX2, FMA, F16C), picked when the program
 * loads where the CPU has it.  Each lane does the scalar loop's
 * operations in its order (fmaf is one rounding either way, and nothing
 * is contracted: -ffp-contract=off), so both copies give the same bytes.
 * Not under ThreadSanitizer (above).
 */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(__SANITIZE_THREAD__)
#define ATTN_V3_CLONES \
	__attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define ATTN_V3_CLONES
#endif

/* n float32 values rounded in place to prec (lib/round.c), as
 * attn_round rounds them: float16 by the CPU's conversion (F16C) where
 * hardware is set and the CPU has one, else by bit operations; the FP8
 * formats by attn_round, a float at a time; FP32 and FP64 leave them. */
void attn_round_floats(float *x, size_t n, enum attn_precision prec,
    int hardware);

/* x rounded to float32 to odd (toward zero, the last bit set when that
 * was inexact): a float from which attn_round_floats rounds to float16
 * bfloat16 or FP8 as attn_round rounds x itself, with no double rounding
 * (Boldo and Melquiond: float32 has more than 2 bits beyond each). */
float attn_round_odd(double x);

/*
 * The keys between two rescalings of the online softmax: each row's sum
 * of exp(x - m) is summed in blocks of this many keys, from key 0, and
 * rescaled when a block raises the row's maximum (lib/kernel_stream.c
 * gives the equations).  It is part of the arithmetic, not a tuning
 * knob: the tests' reference kernel sums its rows in the same blocks,
 * so that the streaming kernel gives its bytes, and no thread count or
 * CPU changes it.  128 keys: see kernel_stream.c's tiling.
 */
#define ATTN_SOFTMAX_BLOCK 128

/* Softcap after the scaling: C tanh(x / C) with C = cfg->softcap, or x
 * without a softcap. */
static inline double
attn_softcap(const struct attn_problem *p, double x)
{
	const double c = p->cfg->softcap;

	return c > 0.0 ? c * tanh(x / c) : x;
}

/* The additive terms of logit (i, j): + bias, then + ALiBi's -slope *
 * |pos_q - pos_k|, in that order. */
static inline double
attn_add_bias(const struct attn_problem *p, const struct attn_head *hd,
    size_t i, size_t j, double x)
{
	if (hd->bias.data != NULL)
		x = x + attn_input_at(&hd->bias, i, j);
	if (p->cfg->alibi)
		x = x - hd->slope * fabs(attn_pos_distance(p, hd->b, i, j));
	return x;
}

/* ---------------------------------------------------------------- mask.c */

/*
 * The masking rule: which logits survive the masks ("are kept").  Every
 * kernel, the emulation and the backward pass ask it, for one logit
 * (attn_keeps) or for a tile of them (attn_tile_keeps, which answers
 * exactly: wholly kept, wholly masked or mixed); a fast path asks the
 * coarser question and never works the answer out itself.  Printers ask
 * attn_masking (attn.h).
 *
 * The rules come in two kinds.  Position rules (causal, window) each
 * leave a query an interval of key positions, so together they leave
 * query i the keys [lo, hi) of attn_row_keys.  Pattern rules (the mask
 * of attn_inputs, with cfg->mask_invert) say per logit; a tile counts
 * the keys they keep in a row from prefix counts (struct
 * attn_mask_counts), so that a 1 x S key-padding mask classifies a tile
 * from S numbers and a T x S one from two numbers a row, never a read of
 * every logit.
 *
 * The keys of the query's own sequence in a packed batch of
 * variable-length sequences, and the keys below a sequence's or a
 * batch's count of used keys, are a position rule: attn_row_keys starts
 * from the interval attn_row_seq gives, at the sequence's positions.
 *
 * A new rule is added here and nowhere else: a position rule narrows
 * [lo, hi) in attn_row_keys, a pattern rule adds its test to
 * attn_pattern_keeps and
 * its count to mask.c's row_kept; both add their clause to attn_masking
 * and their cases to tests/unit/check_mask.c, which holds the tile
 * answer to the element rule.  Every kernel then follows.
 */

/* The keys [*lo, *hi) that the position rules leave query i of head hd
 * (*lo == *hi when none). */
static inline void
attn_row_keys(const struct attn_problem *p, const struct attn_head *hd,
    size_t i, size_t *lo, size_t *hi)
{
	const struct attn_config *c = p->cfg;
	struct attn_seq sq;
	size_t pos;			/* query i's position */
	size_t first = 0, end = SIZE_MAX;	/* positions [first, end) */

	/* Its sequence's keys, at its positions (attn_row_seq). */
	attn_row_seq(p, hd->b, i, &sq);
	pos = i - sq.q0 + sq.q_pos0;
	/* Distances, not sums, so that a huge L or R cannot wrap. */
	if (c->window) {
		first = pos > c->window_left ? pos - c->window_left : 0;
		end = c->window_right < SIZE_MAX - pos ?
		    pos + c->window_right + 1 : SIZE_MAX;
	}
	if (c->causal && pos + 1 < end)
		end = pos + 1;
	/* key j sits at position j - k0 + k_pos0 */
	*hi = end > sq.k_pos0 ? end - sq.k_pos0 : 0;
	if (*hi > sq.k1 - sq.k0)
		*hi = sq.k1 - sq.k0;
	*lo = first > sq.k_pos0 ? first - sq.k_pos0 : 0;
	if (*lo > *hi)
		*lo = *hi;
	*lo += sq.k0;
	*hi += sq.k0;
}

/* Whether the pattern rules (the mask) keep logit (i, j) of head hd. */
static inline int
attn_pattern_keeps(const struct attn_problem *p, const struct attn_head *hd,
    size_t i, size_t j)
{
	return hd->mask.data == NULL || (attn_input_at(&hd->mask, i, j) !=
	    0.0) != (p->cfg->mask_invert != 0);
}

/* Whether the masks (causal, window, the mask) let query i of head hd
 * see key j: the rule every kernel asks of one logit. */
static inline int
attn_keeps(const struct attn_problem *p, const struct attn_head *hd,
    size_t i, size_t j)
{
	size_t lo, hi;

	attn_row_keys(p, hd, i, &lo, &hi);
	return j >= lo && j < hi && attn_pattern_keeps(p, hd, i, j);
}

/* What the masks leave of a tile of logits. */
enum attn_tile {
	ATTN_TILE_MASKED,	/* no logit kept (and an empty tile) */
	ATTN_TILE_MIXED,	/* some kept, some masked */
	ATTN_TILE_KEPT		/* every logit kept */
};

/*
 * Prefix counts of the keys a mask of S columns keeps, for
 * attn_tile_keeps: row r of in->mask has n[r * (S + 1) + j] = the keys
 * it keeps among its first j, modulo 2^32 (a difference of two is exact
 * for fewer than 2^32 keys, which is what a count needs).  n is NULL
 * without a mask, and for a mask of one column, which says per row.
 */
struct attn_mask_counts {
	uint32_t *n;
	size_t width;		/* S + 1 */
};

/* The bytes attn_mask_counts_init allocates for p; ATTN_ERR_NOMEM when
 * the size overflows. */
enum attn_status attn_mask_counts_bytes(const struct attn_problem *p,
    size_t *bytes, struct attn_error *err);

/* Count the keys p's mask keeps, for a kernel that asks about tiles;
 * free with attn_mask_counts_free. */
enum attn_status attn_mask_counts_init(const struct attn_problem *p,
    struct attn_mask_counts *mc, struct attn_error *err);
void attn_mask_counts_free(struct attn_mask_counts *mc);

/*
 * What the masks leave of the tile of queries [i0, i1) and keys [j0, j1)
 * of head hd: the answer attn_keeps gives for each of its logits, found
 * a row at a time from the position rules' interval and the mask's
 * counts (mc from attn_mask_counts_init; NULL reads the mask logit by
 * logit instead).
 */
enum attn_tile attn_tile_keeps(const struct attn_problem *p,
    const struct attn_mask_counts *mc, const struct attn_head *hd,
    size_t i0, size_t i1, size_t j0, size_t j1);

/* ---------------------------------------------------------------- rows */

/*
 * The sink in a row's softmax: every kernel starts the row maximum from
 * attn_row_max_start (the sink, -inf without one) instead of -inf, and
 * the sum of exp(x - max) from attn_row_sum_start: 1, exp(sink - sink),
 * with a sink, 0 without.  The sink is one more logit, with a value of
 * 0, seen before the first key.  Without sinks both are what they would
 * be anyway (-inf and +0.0), so the arithmetic of such a run does not
 * change by a bit.
 */
static inline double
attn_row_max_start(const struct attn_head *hd)
{
	return hd->sink;
}

static inline double
attn_row_sum_start(const struct attn_head *hd)
{
	return hd->sink == -INFINITY ? 0.0 : 1.0;
}

/* The weight of every key of sequence sq (attn_row_seq: [sq->k0,
 * sq->k1); the other keys get 0) in a row with no key left
 * (its maximum -inf, no sink): what cfg->masked_rows says; uniform
 * over no key at all is 0. */
static inline double
attn_masked_weight(const struct attn_problem *p, const struct attn_seq *sq)
{
	switch (p->cfg->masked_rows) {
	case ATTN_MASKED_NAN:
		return NAN;
	case ATTN_MASKED_UNIFORM:
		return sq->k1 == sq->k0 ? 0.0 : 1.0 / (double)(sq->k1 -
		    sq->k0);
	case ATTN_MASKED_ZERO:
		break;
	}
	return 0.0;
}

/* ------------------------------------------------------ problem.c: errors */

/*
 * Whether logit x of (i, j), made by attn_add_bias from a finite scaled
 * score, overflowed: x is not finite while the bias there is finite (a
 * -inf bias masks the key, as it means to; +inf and nan, which the
 * readers refuse, make the nan row IEEE arithmetic makes).  A kernel asks
 * only where the masks keep the logit, since a masked one is -inf
 * whatever it was, and then reports attn_error_logit (attn(1), Order of
 * operations: a logit that overflows after the bias is a data error
 * naming where).
 */
static inline int
attn_logit_overflows(const struct attn_head *hd, size_t i, size_t j,
    double x)
{
	return !isfinite(x) && (hd->bias.data == NULL ||
	    isfinite(attn_input_at(&hd->bias, i, j)));
}

/* The data errors a kernel reports when score (i, j) of head hd, or that
 * score times the scale, is not finite; when logit (i, j) overflows once
 * the bias (and ALiBi) is added (attn_logit_overflows); and when output
 * (i, c), a weighted mean of V's column c, lies beyond the doubles. */
enum attn_status attn_error_score(struct attn_error *err,
    const struct attn_problem *p, const struct attn_head *hd, size_t i,
    size_t j);
enum attn_status attn_error_scaled(struct attn_error *err,
    const struct attn_problem *p, const struct attn_head *hd, size_t i,
    size_t j);
enum attn_status attn_error_logit(struct attn_error *err,
    const struct attn_problem *p, const struct attn_head *hd, size_t i,
    size_t j);
enum attn_status attn_error_output(struct attn_error *err,
    const struct attn_problem *p, const struct attn_head *hd, size_t i,
    size_t c);

/* The start of the array after one at off[0] of `bytes` bytes, in a
 * workspace carved from one allocation, each array 64-byte aligned:
 * into off[1]; -1 when the size overflows. */
static inline int
attn_carve(size_t *off, size_t bytes)
{
	if (bytes > SIZE_MAX - 128 || off[0] > SIZE_MAX - 128 - bytes)
		return -1;
	off[1] = off[0] + (bytes + 63) / 64 * 64;
	return 0;
}

/* ---------------------------------------------------------------- random.c */

/* The state of xoshiro256**: 256 bits, never all zero. */
struct attn_random {
	unsigned long long s[4];
};

/* Fill the state from a seed with splitmix64. */
void attn_random_seed(struct attn_random *r, unsigned long long seed);

/* The next 64 bits. */
unsigned long long attn_random_next(struct attn_random *r);

/* A double uniform in [0, 1): the top 53 bits of the next output. */
double attn_random_uniform(struct attn_random *r);

/* ln x (x > 0, finite) from +, -, *, / and frexp alone. */
double attn_random_log(double x);

/* ---------------------------------------------------------------- kernels */

/*
 * A kernel, as attn_run (lib/run.c) dispatches to it: attn_run computes
 * with the streaming kernel (attn_kernel_stream), attn_emulate with the
 * emulation's (attn_emulate_ops), and the tests with the reference
 * kernel of tests/unit/kernel_ref.c too, through attn_run_kernel.
 */
struct attn_kernel_ops {
	const char *name;	/* "stream", for messages */
	unsigned stages;	/* the stages it can compute */
	/* The bytes it holds besides the held stages, for p. */
	enum attn_status (*plan)(const struct attn_problem *p, size_t *bytes,
	    struct attn_error *err);
	/* Compute p->need into out, whose p->hold stages are allocated
	 * and zeroed; record in out->computed what it computed. */
	enum attn_status (*run)(const struct attn_problem *p,
	    struct attn_stages *out, struct attn_error *err);
};

/* lib/run.c: fill out's dims for p and allocate (zeroed) the stacks of
 * the stages p holds, as attn_run does before its kernel runs. */
enum attn_status attn_stages_alloc(const struct attn_problem *p,
    struct attn_stages *out, struct attn_error *err);

/*
 * attn_run and attn_plan with the kernel ops instead of the streaming
 * kernel, the passes and reductions around it as attn_run runs them:
 * for the unit tests, which hold the streaming kernel to the reference
 * kernel (tests/unit/kernel_ref.c) byte for byte.  A usage error when
 * ops cannot compute a stage the run holds.
 */
enum attn_status attn_run_kernel(const struct attn_kernel_ops *ops,
    const struct attn_config *cfg, const struct attn_inputs *in,
    unsigned want, struct attn_stages *out, struct attn_error *err);
enum attn_status attn_plan_kernel(const struct attn_kernel_ops *ops,
    const struct attn_config *cfg, const struct attn_inputs *in,
    unsigned want, size_t *bytes, struct attn_error *err);

/* ---------------------------------------------------------------- grad.c */

/* The rules of the backward pass that every backward kernel applies,
 * element by element (lib/grad.c). */

/* g = dS * c' * scale, what entry (i, j) of grad_scaled (ds) sends back
 * to the dot product of query i and key j, whose raw score is score
 * (c' is the softcap's derivative there, 1 without one). */
double attn_grad_dot(const struct attn_problem *p, double ds, double score);

/*
 * grad_scaled of entry (i, j) of head hd where the weight w has no say:
 * a row with no key (row_max -inf) gets 0, or nan with --masked-rows
 * nan on the keys of its sequence (attn_row_seq); an entry the masking
 * rule masks, or whose weight is 0 (it
 * underflowed), gets +0 (not -0, which w * (dP - delta) could give).
 * Returns 1 with *ds set, or 0 when the entry is w * (dP - delta).
 */
int attn_grad_fixed(const struct attn_problem *p, const struct attn_head *hd,
    size_t i, size_t j, double row_max, double w, double *ds);

/* Whether a query row whose row_max is row_max is a nan row: its weights
 * and output nan by design (--masked-rows nan for a row with no key, or
 * a nan bias, which only a caller of the library can pass), so that nan
 * in its backward stages is no overflow. */
int attn_grad_nan_row(const struct attn_problem *p, double row_max);

/* The data error for element (i, j) of backward stage s of head hd that
 * overflowed: "grad_q of query 1, column 1 overflows a double (...)". */
enum attn_status attn_error_grad(struct attn_error *err,
    const struct attn_problem *p, const struct attn_head *hd,
    enum attn_stage s, size_t i, size_t j);

/* lib/kernel_stream.c */
extern const struct attn_kernel_ops attn_kernel_stream;

/* ---------------------------------------------------------------- simd*.c */

/*
 * The inner loops of the streaming kernel for one instruction set: plain C
 * in lib/simd_c.c, the vector ones in lib/simd_loops.h, instantiated by
 * lib/simd_avx2.c and lib/simd_avx512.c.  Tiles
 * are stored query-minor: element (i, j) of a block of br query rows and
 * nk keys is tile[j * br + i], so that a vector holds consecutive
 * queries and every per-row reduction (max, sum, the dot products) runs
 * in plain key or column order in each lane.  That is why every set, the
 * plain C one included, gives the same bytes: lane i does what the C
 * loop does for row i, with the same fused multiply-adds in the same
 * order; and why the tests' reference kernel, which sums each row in
 * that order with the same operations (tests/unit/kernel_ref.c), gives
 * them too.  A maximum keeps the first of equal values, as the
 * reference kernel's x > max does (only the sign of a zero maximum
 * could tell).
 * br is a multiple of ATTN_SIMD_ROWS; qt is d_k x br (Q^T, query-minor),
 * ot is d_v x br.
 */
#define ATTN_SIMD_ROWS 24

struct attn_simd {
	const char *name;	/* "avx512", "avx2", "c" */
	/* tile = (Q K^T) * scale for keys k[0..nk) (row stride ldk), each
	 * dot product summed over c in order by fma from 0; mb[i] = max of
	 * row i of the tile. */
	void (*scores)(const double *qt, size_t br, size_t d_k,
	    const double *k, size_t ldk, size_t nk, double scale, double *tile,
	    double *mb);
	/* The online-softmax step for a tile whose row maxima are mb: m, l
	 * and the tile become m', l' and p (see lib/kernel_stream.c);
	 * alpha[i] = exp(m - m'). */
	void (*softmax)(double *tile, size_t br, size_t nk, double *m,
	    double *l, const double *mb, double *alpha);
	/* ot = ot * alpha + P V for the tile's values v[0..nk) (row stride
	 * ldv), summed over the keys in order by fma. */
	void (*accumulate)(const double *tile, size_t br, size_t nk,
	    const double *v, size_t ldv, size_t d_v, const double *alpha,
	    double *ot);
	/* w[j] = attn_exp(w[j] - m) / l for j < n: a row of weights from
	 * its logits. */
	void (*weights)(double *w, size_t n, double m, double l);
	/* y[j] = attn_exp(x[j]) for j < n (for the tests). */
	void (*exp)(const double *x, double *y, size_t n);
	/* A row of the backward pass's tile (lib/kernel_stream_grad.c),
	 * for j < n: from the weight p[j] and dP dp[j], dS = 0 where p[j]
	 * is 0, else p[j] * (dp[j] - delta), into dp[j], and dS * scale
	 * into p[j].  Returns 1 when a dP or a dS is not finite, else 0. */
	int (*grad)(double *p, double *dp, size_t n, double delta,
	    double scale);
};

/* The loops for exactly isa (not AUTO), or NULL when this CPU cannot
 * run them. */
const struct attn_simd *attn_simd_get(enum attn_isa isa);

/* The loops of the best instruction set this CPU runs that is no better
 * than most (any for ATTN_ISA_AUTO): the plain C ones at worst. */
const struct attn_simd *attn_simd_best(enum attn_isa most);

extern const struct attn_simd attn_simd_c, attn_simd_avx2, attn_simd_avx512;

/*
 * The streaming kernel with the loops of simd, whatever cfg->isa says:
 * what attn_kernel_stream runs with attn_simd_best(cfg->isa), for the
 * tests that hold every instruction set to the same bytes.
 */
enum attn_status attn_stream_run(const struct attn_problem *p,
    const struct attn_simd *simd, struct attn_stages *out,
    struct attn_error *err);

/*
 * The streaming kernel's backward pass (lib/kernel_stream_grad.c): the
 * backward stages p->need into out's held stacks, for the blocks n =
 * b*H + h below limit, from out's output, row_max and row_sum (which
 * the forward pass computed into out, held or not), with the loops of
 * simd; its bytes are those of plain passes over whole blocks (the
 * tests' kernel_ref_grad_head), whatever the thread count and the
 * loops.  attn_stream_grad_plan counts what it allocates.
 */
enum attn_status attn_stream_grad(const struct attn_problem *p,
    const struct attn_simd *simd, const struct attn_stages *out,
    size_t limit, struct attn_error *err);
enum attn_status attn_stream_grad_plan(const struct attn_problem *p,
    size_t *bytes, struct attn_error *err);

/* ---------------------------------------------------------------- threads.c */

/* The CPUs a cgroup quota allows, rounded up, from its quota and period
 * texts (cgroup v2's cpu.max holds both, "max 100000" when there is no
 * quota; v1 has cpu.cfs_quota_us, -1 for none, and cpu.cfs_period_us);
 * 0 when there is no quota or the text is not one. */
size_t attn_cgroup_cpus(const char *quota, const char *period);

/* ---------------------------------------------------------------- project.c */

/* Whether the embeddings XQ (in->q) and XKV (in->k) are one matrix:
 * self-attention, which messages call X. */
int attn_proj_self(const struct attn_inputs *in);

/*
 * Check in->proj (when it has W_Q) against the embeddings XQ (in->q) and
 * XKV (in->k) and cfg's heads: every error names both shapes and which W
 * or b, and says when a W has the shape of its transpose (as PyTorch
 * stores nn.Linear.weight).  ATTN_OK without a layer.
 */
enum attn_status attn_project_check(const struct attn_config *cfg,
    const struct attn_inputs *in, struct attn_error *err);

/* *out = *in, with q, k and v shaped as the layer makes them (data NULL)
 * when in has one: what attn_problem_init checks before they exist. */
void attn_project_shapes(const struct attn_inputs *in,
    struct attn_inputs *out);

/*
 * *y = x @ w + b (b's data may be NULL), allocated x->rows x w->cols,
 * each element summed over x's columns in order, the bias added last.
 * An element that is not finite is a data error naming what ("q = X W_Q
 * + b_Q"), row and column; *y is then freed.
 */
enum attn_status attn_project(const struct attn_matrix *x,
    const struct attn_matrix *w, const struct attn_matrix *b,
    const char *what, struct attn_matrix *y, struct attn_error *err);

/* Rows r0 to r0 + rows - 1 and columns c0 to c0 + cols - 1 of *y (made
 * x->rows x w->cols, zeros there) = x @ w + b, each element as
 * attn_project computes it; *y is left as it is on an error. */
enum attn_status attn_project_part(const struct attn_matrix *x,
    const struct attn_matrix *w, const struct attn_matrix *b,
    const char *what, size_t r0, size_t rows, size_t c0, size_t cols,
    struct attn_matrix *y, struct attn_error *err);

/* ---------------------------------------------------------------- passes.c */

/*
 * The passes around the kernel (lib/passes.c): what they made of the
 * caller's inputs (q, k, v projected, q_rot and k_rot rotated, owned by
 * made[] until they move into the stages) and the inputs the kernel
 * reads, which point at the last of them.
 */
struct attn_passes {
	struct attn_inputs in;
	struct attn_matrix made[ATTN_STAGE_COUNT];
	/* The double kernels read Q, K and V times their descale factors
	 * (set by run.c for them; the emulation applies the factors as its
	 * kernel does): the copies, Q, K, V. */
	int descale;
	struct attn_matrix descaled[3];
	/* With a split of more than one process (set by run.c), the rows
	 * of q that this process's tasks read (attn_split_rows of rows)
	 * are all that the passes make of q, q_rot and the descaled q,
	 * but on rank 0 when a stage made whole of them is in want, the
	 * stages asked for: rank 0 holds the stages whole (attn_split). */
	const struct attn_split *split;
	unsigned want;
	struct attn_split_shape rows;
};

/* The descale factor of batch b and KV head g in m (struct attn_inputs'
 * descale_q, _k, _v): 1 when m is absent, its one element when 1 x 1. */
double attn_descale(const struct attn_matrix *m, size_t b, size_t g);

/* The stages the kernel computes for want: its own, what grad_bias and
 * grad_sinks are reduced from after it, and output when projected is
 * wanted (the passes make the rest). */
unsigned attn_kernel_want(unsigned want);

/*
 * Check what attn_run checks before any number is computed: that cfg and
 * in make every stage of want, the layer's shapes, then the problem the
 * kernel will see (attn_problem_init on ps->in, shaped as the passes will
 * make it, for want's kernel stages, output too when projected is
 * wanted) and RoPE's d_k.  *ps must stay where it is while *p is used.
 */
enum attn_status attn_passes_prepare(const struct attn_config *cfg,
    const struct attn_inputs *in, unsigned want, struct attn_passes *ps,
    struct attn_problem *p, struct attn_error *err);

/* The bytes the passes hold for a run of p (prepared from in) holding
 * want: q, k, v, q_rot, k_rot and projected, as the run makes them. */
enum attn_status attn_passes_bytes(const struct attn_problem *p,
    const struct attn_inputs *in, unsigned want, size_t *bytes,
    struct attn_error *err);

/* Before the kernel: project and rotate, and point ps->in at the
 * result. */
enum attn_status attn_passes_before(const struct attn_problem *p,
    const struct attn_inputs *in, struct attn_passes *ps,
    struct attn_error *err);

/* After it: grad_q and grad_k rotated back to q and k with RoPE,
 * projected from out's output (dropping output unless want holds it),
 * then the stages of want that the passes made move into out, and out
 * learns the layer's dims. */
enum attn_status attn_passes_after(const struct attn_problem *p,
    const struct attn_inputs *in, unsigned want, struct attn_passes *ps,
    struct attn_stages *out, struct attn_error *err);

void attn_passes_free(struct attn_passes *ps);

/* ---------------------------------------------------------------- grad_reduce.c */

/*
 * grad_bias and grad_sinks, reduced from the backward stages after any
 * kernel (lib/grad_reduce.c).  A run asks for them through these steps:
 *
 *	attn_reduce_check   before the problem: the inputs make them
 *	                    (dO, a bias, sinks);
 *	attn_reduce_reads   what the kernel must compute for them, for
 *	                    attn_problem_init;
 *	attn_reduce_plan    once the kernel is picked: whether grad_bias
 *	                    takes the backward pass's sums (attn_run's
 *	                    kernels, a bias of one row or column) or the
 *	                    held grad_scaled (a T x S bias, --emulate),
 *	                    and so whether dS is held; the bytes; the
 *	                    bias's dims as given fit its stack;
 *	attn_reduce_alloc   the sums, zeroed, before the kernel;
 *	attn_reduce_run     after it: the stages made into out, and what
 *	                    they alone held dropped.
 */
enum attn_status attn_reduce_check(const struct attn_inputs *in,
    unsigned want, struct attn_error *err);
unsigned attn_reduce_reads(unsigned want);
enum attn_status attn_reduce_plan(struct attn_problem *p,
    enum attn_precision prec, unsigned want, size_t *bytes,
    struct attn_error *err);
enum attn_status attn_reduce_alloc(struct attn_problem *p,
    struct attn_error *err);
enum attn_status attn_reduce_run(const struct attn_problem *p,
    unsigned want, struct attn_stages *out, struct attn_error *err);

/* Last: the lse stage written as cfg says (log2, +inf for a row with no
 * key), once everything that reads the natural value has run. */
void attn_lse_convention(const struct attn_config *cfg,
    struct attn_stages *out);

/* ---------------------------------------------------------------- rope.c */

/* Whether cfg's RoPE can rotate heads of d_k columns: a usage error for a
 * base that is not a finite number above 0, a data error for an odd
 * d_k; ATTN_OK without RoPE. */
enum attn_status attn_rope_check(const struct attn_config *cfg, size_t d_k,
    struct attn_error *err);

/*
 * Rotate x in place as cfg's RoPE says: x is a stack of blocks of
 * block_rows rows, each row `heads` heads of d columns side by side, and
 * row r sits at position (r % block_rows) + offset.  sign is 1, or -1
 * for the inverse rotation.  Fails only when out of memory.
 */
enum attn_status attn_rope_rotate(const struct attn_config *cfg,
    struct attn_matrix *x, size_t block_rows, size_t heads, size_t d,
    double offset, double sign, struct attn_error *err);

/* The same, with row r at position pos(ctx, r): the positions of each
 * packed sequence (lib/passes.c). */
enum attn_status attn_rope_rotate_at(const struct attn_config *cfg,
    struct attn_matrix *x, size_t heads, size_t d,
    double (*pos)(const void *ctx, size_t r), const void *ctx, double sign,
    struct attn_error *err);

/* lib/emulate.c: the plain kernel of precision prec (below FP64), as
 * --emulate computes it; NULL for another value. */
const struct attn_kernel_ops *attn_emulate_ops(enum attn_precision prec);

#endif /* ATTN_INTERNAL_H */
