/*
 * attn.h - the public interface of libattn: read matrices, compute the
 * stages of scaled dot-product attention, and report errors as values.
 *
 * Ownership.  Every struct that this header fills owns the memory it points
 * to, unless its comment says it is a view, and is released with the
 * matching *_free function, which also accepts a zeroed struct.  A view
 * (struct attn_matrix made by attn_matrix_view or attn_array_matrix) borrows
 * the memory of its parent and must not outlive it or be freed.  Strings
 * passed in (file names, buffers) stay the caller's; the library keeps no
 * pointer to them except attn_error.file, which points at the name the
 * caller passed to the call that failed.
 *
 * Errors.  Calls that can fail return enum attn_status and, on failure,
 * fill a caller-provided struct attn_error with the file, line and column
 * (both 1-based, 0 when they do not apply) and a one-line message.  The
 * library never prints, exits, aborts on user data, or reads the
 * environment or the locale.
 *
 * Dims legend: T query rows, S key rows, d_k columns of Q and K, d_v
 * columns of V.
 */
#ifndef ATTN_H
#define ATTN_H

#include <stddef.h>

#define ATTN_VERSION "0.1.0"

/* ---------------------------------------------------------------- errors */

/* One status per exit code of SPEC; the CLI maps them in one switch. */
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
	char msg[ATTN_MSG_MAX];
};

/* ---------------------------------------------------------------- matrices */

/*
 * A row-major matrix: element (i, j) is data[i * stride + j], with
 * stride >= cols.  An owning matrix has stride == cols.
 */
struct attn_matrix {
	size_t rows, cols, stride;
	double *data;
};

/* Allocate a zeroed rows x cols matrix, checking rows * cols for overflow.
 * Fails with ATTN_ERR_NOMEM.  Free with attn_matrix_free. */
enum attn_status attn_matrix_alloc(struct attn_matrix *m, size_t rows,
    size_t cols, struct attn_error *err);

/* Free an owning matrix and zero it. */
void attn_matrix_free(struct attn_matrix *m);

/* A view of rows [r0, r0 + nr) and columns [c0, c0 + nc) of m: no copy.
 * The ranges must lie inside m. */
struct attn_matrix attn_matrix_view(const struct attn_matrix *m, size_t r0,
    size_t nr, size_t c0, size_t nc);

/* Pointer to element (i, j). */
static inline double *
attn_at(const struct attn_matrix *m, size_t i, size_t j)
{
	return m->data + i * m->stride + j;
}

/* ---------------------------------------------------------------- input */

/* Input formats; ATTN_FMT_AUTO means "by extension, else by content". */
enum attn_format {
	ATTN_FMT_AUTO,
	ATTN_FMT_JSON,
	ATTN_FMT_CSV,	/* comma-separated */
	ATTN_FMT_TSV,	/* tab-separated */
	ATTN_FMT_TEXT,	/* whitespace-separated, as numpy.savetxt writes */
	ATTN_FMT_NPY
};

/* A list of names (token labels). */
struct attn_labels {
	size_t count;
	char **names;
};

/*
 * An array as read from a file: 1 to 4 dimensions in C order.  A 1-D
 * array of n numbers is one row.  row_labels are the names from a first
 * column of non-numbers in text input (count 0 when absent).
 */
#define ATTN_MAX_DIMS 4
struct attn_array {
	size_t ndim;
	size_t shape[ATTN_MAX_DIMS];
	double *data;
	struct attn_labels row_labels;
};

/* Reader flags. */
enum {
	ATTN_READ_FINITE = 1	/* nan and inf are data errors (Q, K, V) */
};

/* Choose a format from the name's extension, else from the content.
 * Never fails: content that is not JSON or .npy is taken as text, and the
 * text reader reports what is wrong with it. */
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

/* The 2-D view of a 1-D or 2-D array: n numbers are a 1 x n row. */
struct attn_matrix attn_array_matrix(const struct attn_array *a);

void attn_array_free(struct attn_array *a);
void attn_labels_free(struct attn_labels *l);

/*
 * A JSON BUNDLE: {"Q": .., "K": .., "V": .., "labels": {"query": [..],
 * "key": [..]}}.  Labels absent from the file have count 0.
 */
struct attn_bundle {
	struct attn_array q, k, v;
	struct attn_labels query_labels, key_labels;
};

/* True when buf holds a JSON object (after a BOM and white space). */
int attn_is_bundle(const char *buf, size_t len);

/* Parse a BUNDLE; unknown or repeated keys are data errors. */
enum attn_status attn_read_bundle(const char *name, const char *buf,
    size_t len, unsigned flags, struct attn_bundle *out,
    struct attn_error *err);

void attn_bundle_free(struct attn_bundle *b);

/* ---------------------------------------------------------------- stages */

/* The stages, in the order --explain prints them.  attn_stage_table is the
 * single source of truth for their names, formulas and shapes. */
enum attn_stage {
	ATTN_STAGE_SCORES,
	ATTN_STAGE_SCALED,
	ATTN_STAGE_WEIGHTS,
	ATTN_STAGE_OUTPUT,
	ATTN_STAGE_LSE,
	ATTN_STAGE_COUNT
};

/* What the rows and columns of a stage run over. */
enum attn_axis {
	ATTN_AXIS_QUERY,	/* T query rows */
	ATTN_AXIS_KEY,		/* S keys */
	ATTN_AXIS_VALUE,	/* d_v value columns */
	ATTN_AXIS_ONE		/* a single column */
};

struct attn_stage_info {
	const char *name;	/* "weights" */
	const char *formula;	/* "softmax(scaled), row by row" */
	const char *shape;	/* "T x S" */
	enum attn_axis cols;	/* rows are always queries */
};

extern const struct attn_stage_info attn_stage_table[ATTN_STAGE_COUNT];

/* Find a stage by name (len bytes, not NUL-terminated); returns
 * ATTN_STAGE_COUNT when there is none. */
enum attn_stage attn_stage_lookup(const char *name, size_t len);

/* ---------------------------------------------------------------- compute */

enum attn_scale_mode {
	ATTN_SCALE_DEFAULT,	/* 1 / sqrt(d_k) */
	ATTN_SCALE_NONE,	/* 1 */
	ATTN_SCALE_VALUE	/* attn_config.scale */
};

/* How to compute; attn_config_init sets every default. */
struct attn_config {
	enum attn_scale_mode scale_mode;
	double scale;		/* used with ATTN_SCALE_VALUE; finite */
};

void attn_config_init(struct attn_config *cfg);

/*
 * Every stage of one attention problem, computed once; printers and
 * checks read these numbers and never re-derive them.
 */
struct attn_stages {
	size_t T, S, d_k, d_v;
	double scale;				/* the scale used */
	struct attn_matrix stage[ATTN_STAGE_COUNT];	/* owned */
};

/*
 * Compute every stage of softmax(Q K^T * scale) V with the reference
 * kernel.  q is T x d_k, k is S x d_k, v is S x d_v; views are fine.
 * Shape errors name both shapes and the rule; scores that overflow are a
 * data error.  On success *out owns its matrices (attn_stages_free).
 */
enum attn_status attn_compute(const struct attn_config *cfg,
    const struct attn_matrix *q, const struct attn_matrix *k,
    const struct attn_matrix *v, struct attn_stages *out,
    struct attn_error *err);

void attn_stages_free(struct attn_stages *s);

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
	 * 1.00), since it is exact. */
	ATTN_NUM_FIXED = 1
};

/*
 * Write x into buf (ATTN_NUM_MAX bytes) in the C locale.  digits == 0:
 * the shortest of %.15g, %.16g, %.17g that reads back to x.  digits from
 * 1 to 17: that many significant digits (%.*g).  Non-finite values are
 * written inf, -inf and nan.  Returns the length written.
 */
size_t attn_format_number(char *buf, double x, int digits, unsigned flags);

#endif /* ATTN_H */
