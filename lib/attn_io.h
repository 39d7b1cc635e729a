/*
 * attn_io.h - libattn's inputs and number text: matrices read from files
 * (JSON, JSON Lines, CSV, TSV, white space, NumPy's .npy and printed
 * arrays), layers and BUNDLEs; NumPy .npz archives written; 4-D inputs
 * and broadcast masks made into what struct attn_inputs takes; numbers
 * read and written without the locale.  The computation is attn.h's,
 * which this header includes.
 *
 * Ownership.  A reader fills a caller-provided struct (attn_array,
 * attn_layer, attn_bundle) that then owns its numbers and labels, also
 * the labels' strings, and is released with the matching *_free function
 * (attn_array_free, attn_labels_free, attn_layer_free, attn_bundle_free),
 * which also accepts a zeroed struct; on failure the struct is left
 * zeroed, holding nothing.  The buffer read stays the caller's: no
 * result points into it, so it may be freed as soon as the reader
 * returns.  attn_array_matrix and attn_layer_proj give views that borrow
 * the array's numbers and must not outlive it or be freed.  The functions
 * that reshape an array (attn_array_fold_heads, attn_array_broadcast)
 * replace its numbers in place; the array still owns them.  A .npz
 * archive being written (struct attn_npz) puts the caller's bytes as
 * they are and owns only the names it keeps, until attn_npz_free.  The
 * number functions write into the caller's buffers and allocate
 * nothing.
 *
 * Errors are values, as attn.h says: a struct attn_error with the file,
 * and the line and column (or the byte offset of a binary file) where
 * the input is wrong.  Readers never print; a warning about a read that
 * succeeded comes back in struct attn_array's notice.
 */
#ifndef LIBATTN_IO_H
#define LIBATTN_IO_H

#include <stddef.h>

#include "attn.h"

/* ---------------------------------------------------------------- input */

/* Input formats; ATTN_FMT_AUTO means "by extension, else by content". */
enum attn_format {
	ATTN_FMT_AUTO,
	ATTN_FMT_JSON,
	ATTN_FMT_CSV,	/* comma-separated */
	ATTN_FMT_TSV,	/* tab-separated */
	ATTN_FMT_TEXT,	/* whitespace-separated, as numpy.savetxt writes */
	ATTN_FMT_NPY,
	ATTN_FMT_REPR,	/* an array as NumPy or PyTorch prints it:
			 * [[1. 0.] ..], array([[1., 0.], ..]), tensor(..) */
	ATTN_FMT_JSONL	/* JSON Lines: one JSON array a line (jq -c), a
			 * row each (a matrix) or a matrix each (a stack) */
};

/* A list of names (token labels). */
struct attn_labels {
	size_t count;
	char **names;
};

/*
 * An array as read from a file: 1 to 4 dimensions in C order.  A 1-D
 * array of n numbers is one row.  row_labels are the names from a first
 * column of non-numbers in text input, col_labels those of the columns
 * from a header row (count 0 when absent, or when a column's is empty).
 *
 * notice is a warning about a read that succeeded, for the caller to
 * show, since the library never prints: notice.msg[0] is '\0' when there
 * is none.  It has a file and position as an error has, and status
 * ATTN_OK.  The text reader gives one when a one-column file's first line
 * was taken as a header (it is not a number), since a mistyped value
 * ("l" for "1") looks the same and would drop a row silently, and when a
 * first CSV or TSV row 0,1,..,n-1 was taken for the header pandas'
 * to_csv(index=False) writes.
 */
struct attn_array {
	size_t ndim;
	size_t shape[ATTN_MAX_DIMS];
	double *data;
	struct attn_labels row_labels;
	struct attn_labels col_labels;
	struct attn_error notice;
	/* 1: data is the reader's input itself, read in place
	 * (ATTN_READ_IN_PLACE), which attn_array_free leaves alone */
	int lent;
};

/* Reader flags. */
enum {
	ATTN_READ_FINITE = 1,	/* nan and inf are data errors (Q, K, V) */
	ATTN_READ_BOOL = 2,	/* true and false read as 1 and 0 (masks) */
	ATTN_READ_BIAS = 4,	/* nan and +inf are data errors, -inf is
				 * allowed (biases: -inf masks a key) */
	ATTN_READ_LAYER = 8,	/* as FINITE, worded for a layer's weights */
	ATTN_READ_SINKS = 16,	/* as FINITE, worded for sinks */
	ATTN_READ_INT = 32,	/* .npy of integer dtypes read too (offsets
				 * and counts, as PyTorch saves them), not
				 * bool; faults worded for offsets */
	ATTN_READ_SLOPES = 64,	/* as FINITE, worded for ALiBi slopes */
	ATTN_READ_DROPOUT = 128,	/* with BOOL: booleans, or any finite
				 * number (FlashAttention's S_dmask);
				 * faults worded for a dropout mask */
	ATTN_READ_IN_PLACE = 256	/* a .npy's float64 data in the host's
				 * byte order and C order, 8-byte aligned,
				 * is the array's data (lent), not copied:
				 * the caller keeps those bytes, unchanged,
				 * until the array is freed */
};

/* Choose a format from the name's extension, else from the content.
 * Never fails: content that is not JSON (or JSON Lines: a first line that
 * is one JSON array, with more lines after it) or .npy is taken as text,
 * and the text reader reports what is wrong with it. */
enum attn_format attn_format_guess(const char *name, const char *buf,
    size_t len);

/*
 * Parse buf[0..len) (which need not be NUL-terminated) as an array in the
 * given format; name is used in error messages only.  A JSON object is
 * refused here: see attn_read_bundle.  On success *out owns its memory.
 */
enum attn_status attn_read_array(const char *name, const char *buf,
    size_t len, enum attn_format fmt, unsigned flags,
    struct attn_array *out, struct attn_error *err);

/*
 * As attn_read_array, on up to threads threads (0: the CPUs it may use):
 * a large CSV, TSV or white-space file is cut at line ends into chunks
 * parsed side by side.  The array, and the error (the first in the
 * file, at the same position and in the same words), are those of one
 * thread, and so is what is allocated.
 */
enum attn_status attn_read_array_threads(const char *name, const char *buf,
    size_t len, enum attn_format fmt, unsigned flags, size_t threads,
    struct attn_array *out, struct attn_error *err);

/*
 * A .npy given as two pieces: its header, head[0..hlen) (the magic to
 * the header's '\n'), and its data, data[0..dlen), which need not follow
 * it.  Read as attn_read_array reads the file the two make one after the
 * other: the same array, the same errors at the same bytes of that file
 * (hlen bytes that are not exactly the header are a data error).  With
 * ATTN_READ_IN_PLACE, float64 data is read where it lies (above).
 */
enum attn_status attn_read_npy_parts(const char *name, const char *head,
    size_t hlen, const void *data, size_t dlen, unsigned flags,
    struct attn_array *out, struct attn_error *err);

/* The 2-D view of a 1-D or 2-D array: n numbers are a 1 x n row. */
struct attn_matrix attn_array_matrix(const struct attn_array *a);

void attn_array_free(struct attn_array *a);
void attn_labels_free(struct attn_labels *l);

/*
 * A projection layer as JSON holds it: {"W_Q": .., "W_K": .., "W_V": ..,
 * "W_O": .., "b_Q": .., "b_K": .., "b_V": .., "b_O": ..}, each W a
 * matrix (2-D) and each b a vector (1-D, or 2-D with one row or column).
 * W_Q, W_K and W_V are required; the others have ndim 0 when absent,
 * and b_O needs W_O.  Every value must be finite.
 */
struct attn_layer {
	struct attn_array w_q, w_k, w_v, w_o;
	struct attn_array b_q, b_k, b_v, b_o;
};

/* Parse a layer object; unknown, repeated or missing keys are data
 * errors at their position.  On success *out owns its memory. */
enum attn_status attn_read_layer(const char *name, const char *buf,
    size_t len, struct attn_layer *out, struct attn_error *err);

/* The matrices of l for attn_inputs.proj: views of l, absent ones with
 * data NULL. */
struct attn_proj attn_layer_proj(const struct attn_layer *l);

void attn_layer_free(struct attn_layer *l);

/*
 * A JSON BUNDLE: {"Q": .., "K": .., "V": .., "mask": .., "bias": ..,
 * "labels": {"query": [..], "key": [..]}}.  A mask or bias absent from
 * the file has ndim 0; labels absent have count 0.  The mask is read with
 * ATTN_READ_BOOL and the bias without ATTN_READ_FINITE, whatever flags
 * say for Q, K and V.
 *
 * A bundle may hold embeddings instead of Q, K and V: "X" for
 * self-attention, or "XQ" and "XKV" for cross-attention, with the layer
 * that projects them under "proj" (or none, for a layer given apart).
 * Then embeddings is 1, q holds X or XQ, k holds XKV (ndim 0 for X) and
 * v is empty; labels "key" name the rows of XKV, or of X.
 */
struct attn_bundle {
	struct attn_array q, k, v, mask, bias;
	struct attn_labels query_labels, key_labels;
	int embeddings;			/* X, or XQ and XKV */
	struct attn_layer proj;		/* w_q.ndim 0 when absent */
};

/*
 * Named arrays, as --check FILE and --proj LAYER may give several: a
 * NumPy .npz archive (numpy.savez, stored, or numpy.savez_compressed,
 * deflated; read with libzip), each member NAME.npy read as
 * attn_read_array reads a .npy with flags (a member that is no .npy, is
 * damaged, or would take more than the memory limit allows, its bytes
 * and the numbers its header declares, is refused naming it, the limit
 * before its data is unpacked), or a JSON object {"NAME": array, ..}.
 * Free with attn_named_free.
 */
struct attn_named_array {
	char *name;			/* the member's name without ".npy" */
	struct attn_array array;
	size_t member;			/* a .npz's: its index in the archive,
					 * for attn_npz_read_member */
};

struct attn_named {
	size_t count, cap;
	struct attn_named_array *arrays;	/* in the file's order */
};

/* Whether buf starts as a zip archive does (a .npz, or any zip). */
int attn_is_zip(const char *buf, size_t len);

/* A .npz (attn_is_zip) or a JSON object of arrays. */
enum attn_status attn_read_named(const char *name, const char *buf,
    size_t len, unsigned flags, struct attn_named *out,
    struct attn_error *err);

/* As attn_read_named, but a .npz's members are read only as far as
 * their .npy headers (their data never inflated): each array's dims as
 * its header declares them, its data NULL, a header's faults told as
 * attn_read_named tells them.  A JSON object is read whole. */
enum attn_status attn_read_named_declared(const char *name,
    const char *buf, size_t len, unsigned flags, struct attn_named *out,
    struct attn_error *err);

/*
 * A .npz given as its members, without the zip: parts[0..n), each a
 * member's name (without ".npy") and its .npy in two pieces, its header
 * and its data (as attn_read_npy_parts takes them), in the archive's
 * order.  attn_parts_declared reads them as attn_read_named_declared
 * reads the archive numpy.savez would write of them (each array's dims,
 * its data NULL; the member's index in parts), attn_parts_read_member
 * as attn_npz_read_member reads a member (with ATTN_READ_IN_PLACE, its
 * float64 in place): the same arrays, errors in the same words.  The
 * pieces stay the caller's, unchanged, while the arrays read are used.
 */
struct attn_npz_part {
	const char *name;
	const char *head;
	size_t hlen;
	const void *data;
	size_t dlen;
};

enum attn_status attn_parts_declared(const char *name,
    const struct attn_npz_part *parts, size_t n, unsigned flags,
    struct attn_named *out, struct attn_error *err);
enum attn_status attn_parts_read_member(const char *name,
    const struct attn_npz_part *parts, size_t n, size_t member,
    unsigned flags, struct attn_array *out, struct attn_error *err);

/* Member `member` of the .npz in buf (attn_named_array.member), read
 * whole into out as attn_read_named reads it (inflated, its CRC-32
 * checked).  Free out with attn_array_free. */
enum attn_status attn_npz_read_member(const char *name, const char *buf,
    size_t len, size_t member, unsigned flags, struct attn_array *out,
    struct attn_error *err);

/* The array named array, or NULL. */
const struct attn_array *attn_named_find(const struct attn_named *z,
    const char *array);

void attn_named_free(struct attn_named *z);

/* "a, b, c": the names of the archive's arrays, for messages (without
 * reading them), into out[0..size). */
enum attn_status attn_npz_names(const char *name, const char *buf,
    size_t len, char *out, size_t size, struct attn_error *err);

/* True when buf holds a JSON object (after a BOM and white space), in
 * UTF-8 or, with its byte order mark, UTF-16, which attn_read_bundle
 * then refuses with a message that says to convert it. */
int attn_is_bundle(const char *buf, size_t len);

/* Parse a BUNDLE; unknown or repeated keys are data errors. */
enum attn_status attn_read_bundle(const char *name, const char *buf,
    size_t len, unsigned flags, struct attn_bundle *out,
    struct attn_error *err);

void attn_bundle_free(struct attn_bundle *b);

/* ---------------------------------------------------------------- .npz out */

/*
 * A NumPy .npz archive written as numpy.savez writes one (and as
 * attn_read_named reads it back): a zip of members NAME.npy, stored, not
 * compressed, in the order they were given, each dated 1980-01-01 as
 * numpy's are, so that the same members make the same bytes.  Start with
 * attn_npz_start, which says where the bytes go: put(arg, bytes, n), in
 * order, a piece at a time.  attn_npz_member puts a member whose bytes
 * (a whole .npy file) are the caller's pieces, one after another, put as
 * they are (not copied); attn_npz_finish puts the archive's central
 * directory, which ends it.  zlib (for the CRC-32) is loaded on first
 * use.  Free with attn_npz_free, after a failure too.
 */
struct attn_npz_piece {
	const void *bytes;
	size_t len;
};

/* What the central directory keeps of a member. */
struct attn_npz_member {
	char *name;		/* "NAME.npy" */
	size_t name_len;
	unsigned long long size, offset;
	unsigned long crc;
};

struct attn_npz {
	void (*put)(void *arg, const void *bytes, size_t n);
	void *arg;
	unsigned long long at;		/* bytes put so far */
	/* The largest size or offset a field of 32 bits holds: beyond it,
	 * ZIP64's (0xFFFFFFFF; a test lowers it). */
	unsigned long long limit32;
	size_t count, cap;
	struct attn_npz_member *members;
};

void attn_npz_start(struct attn_npz *z, void (*put)(void *arg,
    const void *bytes, size_t n), void *arg);

/* Member NAME.npy of the n pieces, put after the others: ATTN_ERR_NOMEM
 * when out of memory (or past the account's limit) for its name, or
 * when zlib cannot be loaded ("writing a .npz archive needs zlib, which
 * could not be loaded: WHY"), ATTN_ERR_DATA for a name longer than a
 * zip holds (65531 bytes); nothing is put then. */
enum attn_status attn_npz_member(struct attn_npz *z, const char *name,
    const struct attn_npz_piece *pieces, size_t n, struct attn_error *err);

/* The central directory, put: the archive is whole. */
void attn_npz_finish(struct attn_npz *z);

void attn_npz_free(struct attn_npz *z);

/* ---------------------------------------------------------------- inputs made to fit */

/*
 * Fold a 4-D array laid out as layout (B x H x S x D, or B x S x H x D)
 * into the 3-D stack B x S x H*D that struct attn_inputs takes, heads
 * side by side in the columns, in place (BHSD moves the numbers, BSHD
 * only merges the last two dims); *heads is H.  An array whose data is
 * NULL (its numbers read later) folds its dims alone.  An array that is
 * not 4-D, or ATTN_LAYOUT_NONE, is an internal error.
 */
enum attn_status attn_array_fold_heads(struct attn_array *a,
    enum attn_layout layout, size_t *heads, struct attn_error *err);

/*
 * A mask or bias a, for scores of B batches, H heads, T queries and S
 * keys, broadcast as NumPy does (each dim must be 1 or the scores' own;
 * any other is a data error naming both shapes), becomes in place the
 * stack that struct attn_inputs takes: one block in all (2-D), one a
 * batch (B x t x s) or one a batch and head (B x H x t x s), where each
 * block keeps the array's own t x s (T or 1 rows, S or 1 columns: a
 * key-padding mask 1 x S stays S numbers).  Only blocks repeated over the
 * batches (1 x H x t x s with B > 1) are written out.  a is 4-D
 * (b x h x t x s), 2-D (t x s), 1-D (a row, 1 x s) or 3-D: b x t x s, a
 * block per batch, unless inputs_4d says Q, K and V were 4-D (laid out
 * in heads), where it is h x t x s, as NumPy lines it up; there a first
 * dim that is B (and also H, or only B) is a data error that names both
 * readings and the 4-D shape to write instead (B x 1 x T x S, or
 * 1 x H x T x S).
 */
enum attn_status attn_array_broadcast(struct attn_array *a, size_t B,
    size_t H, size_t T, size_t S, int inputs_4d, struct attn_error *err);

/*
 * A paged KV cache (attn(1), --block-table, --kv-indptr): k_cache and
 * v_cache hold num_pages pages of page_size keys, pages * page_size rows
 * of G*d (attn_array_fold_heads makes them of a cache num_pages x
 * page_size x G x d, or num_pages x G x page_size x d laid out BHSD).
 * Sequence u's keys are its pages in order, named by FlashAttention's
 * block table (block_table: a row a sequence, max_blocks pages each;
 * used_k: the keys in use, NULL: all max_blocks * page_size) or, when
 * block_table.data is NULL and indptr.data is not, by FlashInfer's
 * kv_indptr (n + 1 offsets into indices), kv_indices and
 * kv_last_page_len (n, the keys in use on each last page); with
 * neither, sequence u is page u, the whole cache (used_k as before).
 * leftpad (NULL: 0) is FlashAttention's cache_leftpad: u's keys start
 * at that row of its pages.  Each of these is a whole number, read as
 * a double; 1 x n or n x 1 for the lists.
 */
struct attn_paged {
	size_t page_size;
	struct attn_matrix block_table;
	struct attn_matrix indptr, indices, last_page_len;
	const size_t *used_k, *leftpad;
};

/*
 * The n sequences' keys gathered into the contiguous stacks struct
 * attn_inputs takes: *k and *v (allocated; attn_matrix_free) of n * S
 * rows, S the most keys a table row names (max_blocks * page_size, or
 * FlashInfer's most pages * page_size), sequence u's keys in use from
 * its leftpad first, zeros after them, and used[u] (the caller's n) how
 * many.  Only the rows in use of the pages named are read: a page no
 * sequence uses may hold anything.  A table that does not fit (a page
 * out of range, fewer keys than used_k asks, a leftpad past them) or a
 * key that is not finite is a data error.
 */
enum attn_status attn_paged_gather(const struct attn_paged *pg, size_t n,
    const struct attn_matrix *k_cache, const struct attn_matrix *v_cache,
    struct attn_matrix *k, struct attn_matrix *v, size_t *used,
    struct attn_error *err);

/* ---------------------------------------------------------------- numbers */

/* Longest text attn_format_number writes, with its NUL. */
#define ATTN_NUM_MAX 40

/*
 * Parse the len bytes at s as one number in the C locale, correctly
 * rounded: [+-]digits[.digits][(e|E)[+-]digits], or inf, infinity, nan
 * (any case, with a sign).  Returns 0 on success; -1 when the text is not
 * a number; 1 when it is a finite number too large for a double (*out is
 * then +-inf).  Never reads past s[len - 1].
 */
int attn_parse_number(const char *s, size_t len, double *out);

/* attn_format_number flags. */
enum {
	/* For tables: keep trailing zeros (%#.*g, so 0.670 shows its three
	 * digits), but write an integer below 10^digits plainly (1, not
	 * 1.00), since it is exact, and -0 as 0; never end in a bare point
	 * (one digit writes 7 and 2e+02, not "7." and "2.e+02"). */
	ATTN_NUM_FIXED = 1
};

/*
 * Write x into buf (ATTN_NUM_MAX bytes) in the C locale.  digits == 0:
 * the shortest of %.15g, %.16g, %.17g that reads back to x.  digits from
 * 1 to 17: that many significant digits (%.*g).  Non-finite values are
 * written inf, -inf and nan.  Returns the length written.
 */
size_t attn_format_number(char *buf, double x, int digits, unsigned flags);

#endif /* LIBATTN_IO_H */
